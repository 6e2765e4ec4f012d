/*
 * query.c — what a request's URL and headers ask for, read without allocation: query
 * strings split into pairs, render options and tensor preview options from them, and
 * If-None-Match.  Pure helpers, exposed for the unit tests (oxs.h).  (Hex: hash.c; ids, bundle ids and model meta are the store's: store/ids.c;
 * JSON strings are written by oxr_json_string, render/buf.c.)
 */
#include "service/query.h"
#include "parser/oxp.h"
#include "render/oxr.h"
#include "store/oxst.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decode s[0..n) in place (%XX, '+' = space) and NUL-terminate it; false on a bad
 * escape or a decoded NUL. */
static bool decode_in_place(char *s, size_t n)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '+') {
			c = ' ';
		} else if (c == '%') {
			if (n - i < 3)
				return false;
			int hi = hexval(s[i + 1]), lo = hexval(s[i + 2]);
			if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
				return false;
			c = (char)(hi * 16 + lo);
			i += 2;
		}
		s[o++] = c;
	}
	s[o] = '\0';
	return true;
}

int oxs_query_split(char *query, oxs_query_pair *out, size_t max)
{
	size_t n = 0;
	char *p = query;
	while (*p != '\0') {
		char *amp = strchr(p, '&');
		size_t len = amp ? (size_t)(amp - p) : strlen(p);
		char *next = amp ? amp + 1 : p + len;
		if (len > 0) {
			if (n == max)
				return -1;
			char *eq = memchr(p, '=', len);
			size_t klen = eq ? (size_t)(eq - p) : len;
			if (eq != NULL && !decode_in_place(eq + 1, len - klen - 1))
				return -1;
			if (!decode_in_place(p, klen))
				return -1;
			/* without '=', the key's own terminator serves as the empty value */
			char *val = eq != NULL ? eq + 1 : p + strlen(p);
			out[n].key = p;
			out[n].value = val;
			n++;
		}
		p = next;
	}
	return (int)n;
}

/* Skip optional whitespace and commas. */
static const char *skip_sep(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == ',')
		p++;
	return p;
}

bool oxs_etag_match(const char *inm, const char *etag)
{
	if (inm == NULL || etag == NULL)
		return false;
	size_t elen = strlen(etag);
	/* weak comparison: compare the opaque tags, ignoring a W/ prefix on either side */
	if (elen >= 2 && etag[0] == 'W' && etag[1] == '/') {
		etag += 2;
		elen -= 2;
	}
	const char *p = skip_sep(inm);
	while (*p != '\0') {
		if (*p == '*')
			return true;
		if (p[0] == 'W' && p[1] == '/')
			p += 2;
		if (*p != '"')
			return false; /* malformed list: no match */
		const char *end = strchr(p + 1, '"');
		if (end == NULL)
			return false;
		size_t len = (size_t)(end - p) + 1;
		if (len == elen && memcmp(p, etag, len) == 0)
			return true;
		p = skip_sep(end + 1);
	}
	return false;
}

bool oxs_query_options(const oxs_query_pair *pairs, size_t n, oxr_options *opt, char *err,
                       size_t errsize)
{
	oxr_options_default(opt);
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < i; j++) {
			if (strcmp(pairs[i].key, pairs[j].key) == 0) {
				snprintf(err, errsize, "option '%.64s' given twice", pairs[i].key);
				return false;
			}
		}
		oxr_error e;
		memset(&e, 0, sizeof(e));
		if (oxr_options_set(opt, pairs[i].key, pairs[i].value, &e) != OXR_OK) {
			snprintf(err, errsize, "%s", e.message);
			return false;
		}
	}
	return true;
}

/* ---------------------------------------------------------------------------------------
 * Tensor previews: the query
 */

/* Strict decimal in [0, max]. */
static bool parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	if (s[0] < '0' || s[0] > '9' || strlen(s) > 19)
		return false;
	uint64_t v = 0;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return false;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (v > max)
		return false;
	*out = v;
	return true;
}

bool oxs_preview_query(const oxs_query_pair *pairs, size_t n, oxs_preview_opt *o, char *err,
                       size_t errsize)
{
	memset(o, 0, sizeof(*o));
	o->values = 100;
	o->stats = true;
	o->bins = 32;
	bool bins_given = false, stats_given = false;
	for (size_t i = 0; i < n; i++) {
		const char *k = pairs[i].key, *v = pairs[i].value;
		for (size_t j = 0; j < i; j++) {
			if (strcmp(k, pairs[j].key) == 0) {
				snprintf(err, errsize, "parameter '%.32s' given twice", k);
				return false;
			}
		}
		uint64_t x = 0;
		if (strcmp(k, "values") == 0) {
			if (!parse_u64(v, OXS_PREVIEW_NPY_MAX, &x)) {
				snprintf(err, errsize, "values: a whole number in 0..%u", OXS_PREVIEW_NPY_MAX);
				return false;
			}
			o->values = (uint32_t)x;
			o->values_given = true;
		} else if (strcmp(k, "offset") == 0) {
			if (!parse_u64(v, (uint64_t)INT64_MAX, &o->offset)) {
				snprintf(err, errsize, "offset: a whole number in 0..2^63-1");
				return false;
			}
		} else if (strcmp(k, "bins") == 0) {
			if (!parse_u64(v, OXS_PREVIEW_BINS_MAX, &x)) {
				snprintf(err, errsize, "bins: a whole number in 0..%u", OXS_PREVIEW_BINS_MAX);
				return false;
			}
			o->bins = (uint32_t)x;
			bins_given = true;
		} else if (strcmp(k, "stats") == 0 || strcmp(k, "dequantize") == 0) {
			if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0) {
				snprintf(err, errsize, "%s: 0 or 1", k);
				return false;
			}
			if (k[0] == 's') {
				o->stats = v[0] == '1';
				stats_given = true;
			} else {
				o->dequantize = v[0] == '1';
			}
		} else if (strcmp(k, "format") == 0) {
			if (strcmp(v, "json") != 0 && strcmp(v, "npy") != 0) {
				snprintf(err, errsize, "format: json or npy");
				return false;
			}
			o->npy = v[0] == 'n';
		} else {
			snprintf(err, errsize,
			         "unknown parameter '%.32s' (values, offset, stats, bins, format, dequantize)",
			         k);
			return false;
		}
	}
	if (!o->npy && o->values > OXS_PREVIEW_JSON_MAX) {
		snprintf(err, errsize, "values: at most %u in JSON (format=npy allows %u)",
		         OXS_PREVIEW_JSON_MAX, OXS_PREVIEW_NPY_MAX);
		return false;
	}
	if (o->npy && (bins_given || stats_given)) {
		snprintf(err, errsize, "stats and bins are for JSON answers, not format=npy");
		return false;
	}
	if (o->npy) {
		o->stats = false;
		o->bins = 0;
	}
	return true;
}

void oxs_preview_key(const oxs_preview_opt *o, char *out, size_t size)
{
	snprintf(out, size, "v=%s%" PRIu32 "&o=%" PRIu64 "&s=%d&b=%" PRIu32 "&f=%s&q=%d",
	         o->values_given ? "" : "d", o->values, o->offset, o->stats ? 1 : 0, o->bins,
	         o->npy ? "npy" : "json", o->dequantize ? 1 : 0);
}
