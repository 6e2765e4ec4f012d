/*
 * heat_scan.c — a JSON scanner for overlay inputs too large for a jansson tree (a 10 MB
 * profile is 100,000 events, and the tree of them cost a second): strings, numbers and
 * steps over values, bounded in depth; syntax errors name the line and column.
 */
#include "render/heat_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

oxr_code oxr__heat_scan_fail(heat_scan *sc, const char *what)
{
	size_t line = 1, col = 1;
	for (size_t k = 0; k < sc->i && k < sc->n; k++) {
		if (sc->s[k] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	return oxr__heat_bad(sc->p, "line %zu, column %zu: %s", line, col, what);
}

void oxr__heat_scan_ws(heat_scan *sc)
{
	while (sc->i < sc->n && (sc->s[sc->i] == ' ' || sc->s[sc->i] == '\t' ||
	                         sc->s[sc->i] == '\n' || sc->s[sc->i] == '\r'))
		sc->i++;
}

bool oxr__heat_scan_lit(heat_scan *sc, char c)
{
	oxr__heat_scan_ws(sc);
	if (sc->i < sc->n && sc->s[sc->i] == c) {
		sc->i++;
		return true;
	}
	return false;
}

static int hex4(const char *s)
{
	int v = 0;
	for (int k = 0; k < 4; k++) {
		char c = s[k];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

/* A string at sc->i (after whitespace), decoded into out (cap bytes, NUL-terminated; *len
 * its full decoded length, which may exceed cap - 1: then out holds the start).  out may
 * be NULL to step over it. */
oxr_code oxr__heat_scan_string(heat_scan *sc, char *out, size_t cap, size_t *len)
{
	oxr__heat_scan_ws(sc);
	if (sc->i >= sc->n || sc->s[sc->i] != '"')
		return oxr__heat_scan_fail(sc, "a string expected");
	sc->i++;
	size_t o = 0;
	while (true) {
		if (sc->i >= sc->n)
			return oxr__heat_scan_fail(sc, "an unterminated string");
		unsigned char c = (unsigned char)sc->s[sc->i];
		uint32_t cp;
		if (c == '"') {
			sc->i++;
			break;
		}
		if (c < 0x20)
			return oxr__heat_scan_fail(sc, "a control character in a string");
		if (c != '\\') {
			/* runs of plain bytes; UTF-8 is checked where names are kept (oxr__text) */
			size_t start = sc->i;
			while (sc->i < sc->n && sc->s[sc->i] != '"' && sc->s[sc->i] != '\\' &&
			       (unsigned char)sc->s[sc->i] >= 0x20)
				sc->i++;
			size_t k = sc->i - start;
			if (out != NULL && o < cap - 1)
				memcpy(out + o, sc->s + start, o + k < cap - 1 ? k : cap - 1 - o);
			o += k;
			continue;
		}
		if (sc->i + 1 >= sc->n)
			return oxr__heat_scan_fail(sc, "an unterminated string");
		char e = sc->s[sc->i + 1];
		sc->i += 2;
		char one = e == '"' ? '"' : e == '\\' ? '\\' : e == '/' ? '/' : e == 'b' ? '\b'
		         : e == 'f' ? '\f' : e == 'n' ? '\n' : e == 'r' ? '\r' : e == 't' ? '\t' : 0;
		char u8[4];
		size_t k = 1;
		if (one != 0) {
			u8[0] = one;
		} else if (e == 'u') {
			int v = sc->i + 4 <= sc->n ? hex4(sc->s + sc->i) : -1;
			if (v < 0)
				return oxr__heat_scan_fail(sc, "a bad \\u escape");
			sc->i += 4;
			cp = (uint32_t)v;
			if (cp >= 0xd800 && cp < 0xdc00) {
				int lo = sc->i + 6 <= sc->n && sc->s[sc->i] == '\\' && sc->s[sc->i + 1] == 'u'
				             ? hex4(sc->s + sc->i + 2) : -1;
				if (lo < 0xdc00 || lo > 0xdfff)
					return oxr__heat_scan_fail(sc, "a lone surrogate in a \\u escape");
				sc->i += 6;
				cp = 0x10000 + ((cp - 0xd800) << 10) + ((uint32_t)lo - 0xdc00);
			} else if (cp >= 0xdc00 && cp < 0xe000) {
				return oxr__heat_scan_fail(sc, "a lone surrogate in a \\u escape");
			}
			if (cp < 0x80) {
				u8[0] = (char)cp;
			} else if (cp < 0x800) {
				u8[0] = (char)(0xc0 | cp >> 6);
				u8[1] = (char)(0x80 | (cp & 0x3f));
				k = 2;
			} else if (cp < 0x10000) {
				u8[0] = (char)(0xe0 | cp >> 12);
				u8[1] = (char)(0x80 | (cp >> 6 & 0x3f));
				u8[2] = (char)(0x80 | (cp & 0x3f));
				k = 3;
			} else {
				u8[0] = (char)(0xf0 | cp >> 18);
				u8[1] = (char)(0x80 | (cp >> 12 & 0x3f));
				u8[2] = (char)(0x80 | (cp >> 6 & 0x3f));
				u8[3] = (char)(0x80 | (cp & 0x3f));
				k = 4;
			}
		} else {
			sc->i -= 1;
			return oxr__heat_scan_fail(sc, "a bad escape in a string");
		}
		for (size_t j = 0; j < k; j++, o++)
			if (out != NULL && o < cap - 1)
				out[o] = u8[j];
	}
	if (out != NULL)
		out[o < cap - 1 ? o : cap - 1] = '\0';
	if (len != NULL)
		*len = o;
	return OXR_OK;
}

/* A number: JSON's grammar only (no nan, inf, hex) */
oxr_code oxr__heat_scan_number(heat_scan *sc, double *out)
{
	oxr__heat_scan_ws(sc);
	size_t start = sc->i;
	while (sc->i < sc->n && sc->i - start < 40 &&
	       ((sc->s[sc->i] >= '0' && sc->s[sc->i] <= '9') || sc->s[sc->i] == '-' ||
	        sc->s[sc->i] == '+' || sc->s[sc->i] == '.' || sc->s[sc->i] == 'e' || sc->s[sc->i] == 'E'))
		sc->i++;
	char buf[48];
	size_t k = sc->i - start;
	if (k == 0 || k >= 40)
		return oxr__heat_scan_fail(sc, "a number expected");
	memcpy(buf, sc->s + start, k);
	buf[k] = '\0';
	char *end;
	*out = strtod(buf, &end);
	if (*end != '\0' || !(buf[0] == '-' || (buf[0] >= '0' && buf[0] <= '9')))
		return oxr__heat_scan_fail(sc, "a malformed number");
	return OXR_OK;
}

oxr_code oxr__heat_scan_skip(heat_scan *sc, int depth)
{
	oxr__heat_scan_ws(sc);
	if (sc->i >= sc->n)
		return oxr__heat_scan_fail(sc, "a value expected");
	char c = sc->s[sc->i];
	if (c == '"')
		return oxr__heat_scan_string(sc, NULL, 0, NULL);
	if (c == '{' || c == '[') {
		if (depth >= 64)
			return oxr__heat_scan_fail(sc, "nested deeper than 64 levels");
		char close = c == '{' ? '}' : ']';
		sc->i++;
		if (oxr__heat_scan_lit(sc, close))
			return OXR_OK;
		while (true) {
			oxr_code rc;
			if (c == '{') {
				if ((rc = oxr__heat_scan_string(sc, NULL, 0, NULL)) != OXR_OK)
					return rc;
				if (!oxr__heat_scan_lit(sc, ':'))
					return oxr__heat_scan_fail(sc, "':' expected");
			}
			if ((rc = oxr__heat_scan_skip(sc, depth + 1)) != OXR_OK)
				return rc;
			if (oxr__heat_scan_lit(sc, close))
				return OXR_OK;
			if (!oxr__heat_scan_lit(sc, ','))
				return oxr__heat_scan_fail(sc, "',' or the end of an object or array expected");
		}
	}
	static const char *const words[] = {"true", "false", "null"};
	for (int w = 0; w < 3; w++) {
		size_t k = strlen(words[w]);
		if (sc->n - sc->i >= k && memcmp(sc->s + sc->i, words[w], k) == 0) {
			sc->i += k;
			return OXR_OK;
		}
	}
	double d;
	return oxr__heat_scan_number(sc, &d);
}

oxr_code oxr__heat_scan_key(heat_scan *sc, char *key, size_t cap)
{
	size_t kl;
	oxr_code rc = oxr__heat_scan_string(sc, key, cap, &kl);
	if (rc != OXR_OK)
		return rc;
	if (!oxr__heat_scan_lit(sc, ':'))
		return oxr__heat_scan_fail(sc, "':' expected");
	if (kl >= cap)
		key[0] = '\0';
	return OXR_OK;
}
