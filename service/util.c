/*
 * util.c — small pure helpers of the service: hex, query strings, ETag matching.  No
 * allocation.  (Ids, bundle ids and model meta are the store's: store/ids.c; JSON strings
 * are written by oxr_json_string, render/buf.c.)
 */
#include "render/oxr.h"
#include "service/oxs.h"

#include <string.h>

void oxs_hex(char *out, const unsigned char *bytes, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[bytes[i] >> 4];
		out[2 * i + 1] = digits[bytes[i] & 15];
	}
	out[2 * n] = '\0';
}

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
