/*
 * origins.c — lists of web origins (origins.h): --frame-ancestors, checked and
 * normalised at start, and the look-up of one origin in it.
 */
#include "service/origins.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* One origin [s, s+n): scheme, host ([a-z0-9.-] or a bracketed IPv6 address), optional
 * port 1..65535, nothing after.  Written lower-cased to out. */
static bool origin_valid(const char *s, size_t n, char *out)
{
	size_t scheme = n > 8 && strncasecmp(s, "https://", 8) == 0   ? 8
	                : n > 7 && strncasecmp(s, "http://", 7) == 0 ? 7
	                                                              : 0;
	if (scheme == 0 || n > 200)
		return false;
	size_t i = scheme;
	if (s[i] == '[') {
		while (++i < n && (isxdigit((unsigned char)s[i]) || s[i] == ':' || s[i] == '.'))
			;
		if (i >= n || s[i] != ']' || i == scheme + 1)
			return false;
		i++;
	} else {
		size_t h = i;
		while (i < n && (isalnum((unsigned char)s[i]) || s[i] == '.' || s[i] == '-'))
			i++;
		if (i == h || s[h] == '.' || s[h] == '-' || s[i - 1] == '.' ||
		    memmem(s + h, i - h, "..", 2) != NULL)
			return false;
	}
	if (i < n && s[i] == ':') {
		size_t p = ++i;
		unsigned long port = 0;
		while (i < n && isdigit((unsigned char)s[i]) && i - p < 5)
			port = port * 10 + (unsigned long)(s[i++] - '0');
		if (i == p || port == 0 || port > 65535)
			return false;
	}
	if (i != n)
		return false;
	for (i = 0; i < n; i++)
		out[i] = (char)tolower((unsigned char)s[i]);
	out[n] = '\0';
	return true;
}

bool oxs_frame_ancestors_parse(char *list, size_t size, char *err, size_t errsize)
{
	char norm[1024], one[208];
	size_t len = 0, count = 0;
	norm[0] = '\0';
	for (const char *p = list; *p != '\0';) {
		while (*p == ' ' || *p == ',' || *p == '\t')
			p++;
		if (*p == '\0')
			break;
		size_t n = strcspn(p, " ,\t");
		if (!origin_valid(p, n, one)) {
			snprintf(err, errsize,
			         "--frame-ancestors: '%.*s' is not an origin (http[s]://host[:port], "
			         "no path, no wildcard)",
			         (int)(n < 80 ? n : 80), p);
			return false;
		}
		if (++count > OXS_FRAME_ANCESTORS_MAX) {
			snprintf(err, errsize, "--frame-ancestors: at most %d origins",
			         OXS_FRAME_ANCESTORS_MAX);
			return false;
		}
		int w = snprintf(norm + len, sizeof(norm) - len, "%s%s", len ? " " : "", one);
		if (w < 0 || (size_t)w >= sizeof(norm) - len || len + (size_t)w >= size) {
			snprintf(err, errsize, "--frame-ancestors: too long");
			return false;
		}
		len += (size_t)w;
		p += n;
	}
	memcpy(list, norm, len + 1);
	return true;
}

bool oxs_frame_ancestor_listed(const char *list, const char *origin)
{
	size_t n = origin != NULL ? strlen(origin) : 0;
	if (n == 0)
		return false;
	for (const char *p = list; *p != '\0';) {
		size_t k = strcspn(p, " ");
		if (k == n && strncasecmp(p, origin, n) == 0)
			return true;
		p += k;
		while (*p == ' ')
			p++;
	}
	return false;
}
