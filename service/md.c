/*
 * md.c — GitHub Flavored Markdown output (md.h): code spans for model text, figures,
 * lists within a byte budget.  Checked against a real GFM renderer (cmark-gfm) by
 * tests/modeldiff/markdown.py.
 */
#include "service/md.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bidirectional formatting characters (LRM, RLM, ALM, the embeddings, overrides and
 * isolates): in a name they reorder the characters a reader sees ("Trojan Source"). */
static bool is_bidi(uint32_t cp)
{
	return cp == 0x200e || cp == 0x200f || cp == 0x061c || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069);
}

bool oxs_md_code(oxr_buf *b, oxp_str s, size_t max_chars, bool cell)
{
	if (s.len == 0 || s.p == NULL)
		return oxr_buf_append(b, "(empty)", 7);
	/* display text first: valid UTF-8, control characters (line breaks) as spaces */
	size_t cap = oxp_text_size(s.len, max_chars);
	char stackbuf[512];
	char *t = cap <= sizeof(stackbuf) ? stackbuf : malloc(cap);
	if (t == NULL) {
		b->failed = true;
		return false;
	}
	size_t n = oxp_text_into(t, s, max_chars);
	/* the longest backtick run sets the delimiter; all spaces: nothing is stripped */
	size_t run = 0, longest = 0;
	bool all_spaces = true;
	for (size_t i = 0; i < n; i++) {
		run = t[i] == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
		if (t[i] != ' ')
			all_spaces = false;
	}
	/* CommonMark strips one space from each end when both ends are spaces, and a
	 * backtick next to the delimiter would lengthen it: pad with a space on both sides */
	bool pad = !all_spaces && (t[0] == '`' || t[n - 1] == '`' || (t[0] == ' ' && t[n - 1] == ' '));
	char ticks[64];
	size_t nt = longest + 1 < sizeof(ticks) ? longest + 1 : sizeof(ticks) - 1;
	memset(ticks, '`', nt);
	bool ok = oxr_buf_append(b, ticks, nt) && (!pad || oxr_buf_append(b, " ", 1));
	for (size_t i = 0; ok && i < n;) {
		uint32_t cp = 0;
		size_t k = oxp_utf8_at((const unsigned char *)t, n, i, &cp);
		if (k == 0)
			k = 1; /* cannot happen after oxp_text_into; one byte on */
		if (is_bidi(cp))
			ok = oxr_buf_append(b, "\xef\xbf\xbd", 3);
		else if (cell && t[i] == '|')
			ok = oxr_buf_append(b, "\\|", 2);
		else
			ok = oxr_buf_append(b, t + i, k);
		i += k;
	}
	ok = ok && (!pad || oxr_buf_append(b, " ", 1)) && oxr_buf_append(b, ticks, nt);
	if (t != stackbuf)
		free(t);
	return ok;
}

bool oxs_md_code_z(oxr_buf *b, const char *s, size_t max_chars, bool cell)
{
	return oxs_md_code(b, (oxp_str){s, s != NULL ? strlen(s) : 0}, max_chars, cell);
}

bool oxs_md_text(oxr_buf *b, const char *s)
{
	bool ok = true;
	for (; ok && *s; s++) {
		unsigned char c = (unsigned char)*s;
		bool punct = (c >= 0x21 && c <= 0x2f) || (c >= 0x3a && c <= 0x40) ||
		             (c >= 0x5b && c <= 0x60) || (c >= 0x7b && c <= 0x7e);
		ok = (!punct || oxr_buf_append(b, "\\", 1)) && oxr_buf_append(b, s, 1);
	}
	return ok;
}

bool oxs_md_count(oxr_buf *b, uint64_t v)
{
	char digits[24], out[32];
	int n = snprintf(digits, sizeof(digits), "%" PRIu64, v);
	size_t o = 0;
	for (int i = 0; i < n; i++) {
		if (i > 0 && (n - i) % 3 == 0)
			out[o++] = ',';
		out[o++] = digits[i];
	}
	return oxr_buf_append(b, out, o);
}

bool oxs_md_delta(oxr_buf *b, int64_t d)
{
	if (d == 0)
		return oxr_buf_append(b, "0", 1);
	bool ok = d > 0 ? oxr_buf_append(b, "+", 1) : oxr_buf_append(b, "\xe2\x88\x92", 3);
	uint64_t m = d > 0 ? (uint64_t)d : (uint64_t)0 - (uint64_t)d;
	return ok && oxs_md_count(b, m);
}

int oxs_md_str_cmp(oxp_str a, oxp_str b)
{
	size_t n = a.len < b.len ? a.len : b.len;
	int c = n ? memcmp(a.p, b.p, n) : 0;
	return c ? c : (a.len > b.len) - (a.len < b.len);
}

void oxs_md_list_init(oxs_md_list *l, oxr_buf *out, size_t limit, size_t reserve,
                      uint32_t max_rows, const char *head)
{
	memset(l, 0, sizeof(*l));
	l->out = out;
	l->limit = limit;
	l->reserve = reserve;
	l->max_rows = max_rows;
	l->head = head;
	oxr_buf_init(&l->row, OXS_MD_MAX);
}

oxr_buf *oxs_md_row_begin(oxs_md_list *l)
{
	if (!l->begun)
		oxr_buf_append(l->out, l->head, strlen(l->head));
	l->begun = true;
	l->row.len = 0;
	l->row.failed = false;
	if (l->row.data != NULL)
		l->row.data[0] = '\0';
	return &l->row;
}

void oxs_md_row_end(oxs_md_list *l)
{
	/* once one row was left out the others are too: the list stays a prefix */
	if (l->more == 0 && !l->row.failed && (l->max_rows == 0 || l->shown < l->max_rows) &&
	    l->out->len + l->row.len + l->reserve <= l->limit &&
	    oxr_buf_append(l->out, l->row.data, l->row.len))
		l->shown++;
	else
		l->more++;
}

void oxs_md_list_end(oxs_md_list *l, const char *what)
{
	if (l->begun)
		oxr_buf_append(l->out, "\n", 1);
	if (l->more > 0) {
		oxr_buf_printf(l->out, "\n\xe2\x80\xa6 and ");
		oxs_md_count(l->out, l->more);
		oxr_buf_printf(l->out, " more %s\n", what);
	}
	oxr_buf_free(&l->row);
}

bool oxs_md_base_url_valid(const char *url)
{
	size_t n = strlen(url);
	size_t scheme = strncmp(url, "https://", 8) == 0 ? 8 : strncmp(url, "http://", 7) == 0 ? 7 : 0;
	if (scheme == 0 || n <= scheme || n > 200)
		return false;
	for (size_t i = scheme; i < n; i++) {
		char c = url[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      strchr("._~:/%-", c) != NULL))
			return false;
	}
	return true;
}
