/*
 * gzip.c — gzip'd answers, compressed once.
 *
 * Renderings and documents are text that compresses 5-20x (docs/bench.md "Compressed
 * answers"); a cached answer is compressed once, when its entry is made (artifacts.c,
 * the page's files in routes.c), and both variants are then sent from memory as nginx's
 * gzip_static sends a .gz file beside the plain one: no compression per request.  zlib
 * is loaded on first use, as gunzip.c loads it for request bodies (render/oxr.h,
 * oxr_dlopen): the CLI does not map it.
 */
#include "service/gzip.h"
#include "service/zload.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* zlib's default level: on transformer_12x12's answers level 9 saves 4-8% more bytes for
 * 2-3x the time, level 1 sends 30-45% more (docs/decisions.md 93) */
#define LEVEL 6

/* ---------------------------------------------------------------------------------------
 * Accept-Encoding
 */

/* The q-value of one element's parameters (p after the coding's name, up to end): 1000
 * for "q=1" or none, 0 for "q=0" or malformed, else the thousandths. */
static unsigned qvalue(const char *p, const char *end)
{
	unsigned q = 1000;
	while (p < end) {
		while (p < end && (*p == ' ' || *p == '\t' || *p == ';'))
			p++;
		if (end - p >= 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=') {
			p += 2;
			/* qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ) */
			if (p >= end || (*p != '0' && *p != '1'))
				return 0;
			q = *p == '1' ? 1000 : 0;
			p++;
			if (p < end && *p == '.') {
				p++;
				unsigned scale = 100, digits = 0;
				while (p < end && isdigit((unsigned char)*p) && digits < 3) {
					q += (unsigned)(*p - '0') * scale;
					scale /= 10;
					digits++;
					p++;
				}
			}
			while (p < end && (*p == ' ' || *p == '\t'))
				p++;
			if (p < end && *p != ';')
				return 0;
			if (q > 1000)
				return 0;
		} else {
			while (p < end && *p != ';') /* another parameter: ignored */
				p++;
		}
	}
	return q;
}

bool oxs_gzip_accepted(const char *ae)
{
	if (ae == NULL)
		return false;
	int gzip = -1, star = -1; /* their q-values when named */
	const char *p = ae;
	while (*p != '\0') {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		const char *end = strchr(p, ',');
		if (end == NULL)
			end = p + strlen(p);
		const char *name = p;
		while (p < end && *p != ';' && *p != ' ' && *p != '\t')
			p++;
		size_t n = (size_t)(p - name);
		int q = (int)qvalue(p, end);
		if ((n == 4 && strncasecmp(name, "gzip", 4) == 0) ||
		    (n == 6 && strncasecmp(name, "x-gzip", 6) == 0))
			gzip = gzip < 0 || q > gzip ? q : gzip;
		else if (n == 1 && name[0] == '*')
			star = q;
		p = end;
	}
	return gzip >= 0 ? gzip > 0 : star > 0;
}

bool oxs_gzip_worth(const char *type, size_t len)
{
	if (type == NULL || len < OXS_GZIP_MIN)
		return false;
	return strncmp(type, "text/", 5) == 0 || strncmp(type, "application/json", 16) == 0 ||
	       strncmp(type, "image/svg+xml", 13) == 0 ||
	       strncmp(type, "application/javascript", 22) == 0;
}

/* ---------------------------------------------------------------------------------------
 * Compression
 */
bool oxs_gzip(const void *data, size_t len, char **out, size_t *outlen)
{
	*out = NULL;
	*outlen = 0;
	char why[300];
	const oxs_zlib *zl = oxs_zlib_load(why, sizeof(why));
	if (zl == NULL || len > (size_t)UINT32_MAX)
		return false; /* zlib counts in uLong; bigger answers are sent plain */
	z_stream z;
	memset(&z, 0, sizeof(z));
	/* 16 + 15: a gzip wrapper, a 32 KiB window; memLevel 8 (zlib's default) */
	if (zl->deflateInit2_(&z, LEVEL, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY,
	                      zl->zlibVersion(), (int)sizeof(z_stream)) != Z_OK)
		return false;
	uLong bound = zl->deflateBound(&z, (uLong)len);
	char *buf = bound < len ? malloc(bound) : malloc(len); /* no bigger than the input */
	size_t cap = bound < len ? bound : len;
	bool ok = false;
	if (buf != NULL) {
		z.next_in = (Bytef *)(uintptr_t)data;
		z.avail_in = (uInt)len;
		z.next_out = (Bytef *)buf;
		z.avail_out = (uInt)cap;
		/* Z_FINISH into a buffer capped at the input's size: Z_OK or Z_BUF_ERROR means
		 * the output would be as big as the input, not worth sending */
		ok = zl->deflate(&z, Z_FINISH) == Z_STREAM_END;
	}
	size_t n = cap - z.avail_out;
	zl->deflateEnd(&z);
	if (!ok || n >= len) {
		free(buf);
		return false;
	}
	*out = buf;
	*outlen = n;
	return true;
}
