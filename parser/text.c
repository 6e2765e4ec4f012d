/*
 * text.c — the one UTF-8 module: decoding one character, validity, display text of model
 * bytes (valid, printable, cut with an ellipsis), and a fixed buffer that is cut on
 * character boundaries.  Render, diff and service all print model bytes through these
 * (docs/decisions.md: "One UTF-8 module, one attribute formatter").
 */
#include "parser/internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define ELLIPSIS "\xe2\x80\xa6"    /* … */
#define REPLACEMENT "\xef\xbf\xbd" /* U+FFFD */

size_t oxp_utf8_at(const unsigned char *s, size_t n, size_t i, uint32_t *cp)
{
	unsigned char c = s[i];
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
	if (len == 0 || n - i < len)
		return 0;
	uint32_t v = c & (0x7fu >> len);
	for (size_t k = 1; k < len; k++) {
		if ((s[i + k] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (s[i + k] & 0x3fu);
	}
	bool overlong = (len == 3 && v < 0x800) || (len == 4 && v < 0x10000);
	if (overlong || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return len;
}

bool oxp_utf8_valid(const char *p, size_t n)
{
	const unsigned char *s = (const unsigned char *)p;
	uint32_t cp;
	for (size_t i = 0; i < n;) {
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		size_t k = oxp_utf8_at(s, n, i, &cp);
		if (k == 0)
			return false;
		i += k;
	}
	return true;
}

size_t oxp_utf8_whole(const char *s, size_t n)
{
	size_t back = 0;
	while (back < n && back < 3 && ((unsigned char)s[n - 1 - back] & 0xc0) == 0x80)
		back++;
	if (back == n)
		return n;
	unsigned char lead = (unsigned char)s[n - 1 - back];
	size_t need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
	return lead >= 0xc0 && back + 1 < need ? n - 1 - back : n;
}

/* Characters that may not appear in output text: controls (C0, DEL, C1) and the line and
 * paragraph separators become a space; what XML 1.0 does not allow (U+FFFE, U+FFFF)
 * becomes U+FFFD like an invalid byte. */
static bool control(uint32_t cp)
{
	return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0) || cp == 0x2028 ||
	       cp == 0x2029;
}

size_t oxp_text_size(size_t len, size_t max_chars)
{
	size_t limit = len < max_chars * 4 ? len : max_chars * 4;
	return limit * 3 + 4;
}

size_t oxp_text_into(char *out, oxp_str s, size_t max_chars)
{
	/* at most max_chars characters of at most 4 bytes are read; each input byte makes at
	 * most 3 output bytes (an invalid byte becomes U+FFFD), plus the ellipsis and NUL */
	size_t limit = s.len < max_chars * 4 ? s.len : max_chars * 4;
	const unsigned char *u = (const unsigned char *)s.p;
	size_t o = 0, chars = 0;
	for (size_t i = 0; i < s.len;) {
		if (chars == max_chars || i >= limit) {
			memcpy(out + o, ELLIPSIS, 3);
			o += 3;
			break;
		}
		uint32_t cp = 0;
		size_t k = oxp_utf8_at(u, s.len, i, &cp);
		if (k == 0 || cp == 0xfffe || cp == 0xffff) {
			memcpy(out + o, REPLACEMENT, 3);
			o += 3;
			i += k ? k : 1;
		} else if (control(cp)) {
			out[o++] = ' ';
			i += k;
		} else {
			memcpy(out + o, u + i, k);
			o += k;
			i += k;
		}
		chars++;
	}
	out[o] = '\0';
	return o;
}

const char *oxp_text(oxp_arena *a, oxp_str s, size_t max_chars)
{
	char *out = oxp_arena_alloc(a, oxp_text_size(s.len, max_chars));
	if (out == NULL)
		return "";
	oxp_text_into(out, s, max_chars);
	return out;
}

const char *oxp_text_tail(oxp_arena *a, oxp_str s, size_t max_chars)
{
	/* count characters from the end; cut on a character boundary */
	size_t chars = 0, start = s.len;
	while (start > 0 && chars < max_chars) {
		start--;
		if (((unsigned char)s.p[start] & 0xc0) != 0x80)
			chars++;
	}
	if (start == 0)
		return oxp_text(a, s, max_chars);
	const char *tail = oxp_text(a, (oxp_str){s.p + start, s.len - start}, max_chars);
	const char *out = oxp_arena_printf(a, ELLIPSIS "%s", tail);
	return out != NULL ? out : "";
}

void oxp_textbuf_printf(oxp_textbuf *t, const char *fmt, ...)
{
	if (t->size == 0 || t->n + 1 >= t->size || t->full)
		return;
	va_list ap;
	va_start(ap, fmt);
	int w = vsnprintf(t->b + t->n, t->size - t->n, fmt, ap);
	va_end(ap);
	if (w < 0) {
		t->b[t->n] = '\0';
		return;
	}
	if ((size_t)w < t->size - t->n) {
		t->n += (size_t)w;
		return;
	}
	/* a cut multi-byte character would make the text invalid UTF-8; nothing after a cut
	 * (the text stays a prefix of the whole) */
	t->n = oxp_utf8_whole(t->b, t->size - 1);
	t->b[t->n] = '\0';
	t->full = true;
}

void oxp_textbuf_dims(oxp_textbuf *t, const int64_t *dims, size_t n)
{
	if (n == 0)
		oxp_textbuf_printf(t, "scalar");
	for (size_t i = 0; i < n; i++) {
		if (i == 8 && n > 9) {
			oxp_textbuf_printf(t, "\xc3\x97" ELLIPSIS "(%zu)", n);
			return;
		}
		oxp_textbuf_printf(t, "%s%" PRId64, i ? "\xc3\x97" : "", dims[i]);
	}
}
