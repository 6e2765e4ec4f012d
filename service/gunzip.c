/*
 * gunzip.c — a gzip request body decoded as it arrives (Content-Encoding: gzip).
 *
 * The page sends a model's structure gzip'd (4.6-11x smaller on the corpus: docs/api.md),
 * so a slow link carries less before the graph.  zlib is loaded by the first decoder
 * (zload.c): the CLI does not map it.  The decoded bytes go to the caller's sink in 64 KiB pieces; the
 * caller bounds them (the upload's --max-upload and --inflate-ratio-limit), so a small
 * body that inflates to gigabytes stops at the limit, after at most one piece more.  Each
 * call decodes a slice only (its budget): the HTTP thread that feeds it serves its other
 * connections between slices.  Several members one after
 * the other are one body (RFC 1952: "a gzip file consists of a series of members"); bytes
 * after a member that do not start another are an error, at their offset in the body.
 */
#include "service/gunzip.h"
#include "service/zload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OUT_SIZE ((size_t)64 << 10)

struct oxs_gunzip {
	const oxs_zlib *zl; /* zload.c */
	z_stream z;
	bool open;      /* inflateInit2_ succeeded: inflateEnd is owed */
	bool in_member; /* bytes of a member were taken and its end not reached */
	uint64_t in, out;
	oxs_gunzip_sink sink;
	void *cls;
	unsigned char buf[OUT_SIZE];
};

oxs_gunzip *oxs_gunzip_new(oxs_gunzip_sink sink, void *cls, char *err, size_t errsize)
{
	char why[300];
	const oxs_zlib *zl = oxs_zlib_load(why, sizeof(why));
	if (zl == NULL) {
		snprintf(err, errsize, "gzip bodies cannot be decoded here: %s", why);
		return NULL;
	}
	oxs_gunzip *g = calloc(1, sizeof(*g));
	if (g == NULL) {
		snprintf(err, errsize, "out of memory");
		return NULL;
	}
	g->zl = zl;
	g->sink = sink;
	g->cls = cls;
	/* 16 + 15: a gzip wrapper (not zlib's, not raw deflate), a window of up to 32 KiB */
	if (zl->inflateInit2_(&g->z, 16 + 15, zl->zlibVersion(), (int)sizeof(z_stream)) != Z_OK) {
		snprintf(err, errsize, "cannot start a gzip decoder (%s)", g->z.msg ? g->z.msg : "no memory");
		free(g);
		return NULL;
	}
	g->open = true;
	return g;
}

bool oxs_gunzip_feed(oxs_gunzip *g, const void *data, size_t n, size_t budget, size_t *used,
                     char *err, size_t errsize)
{
	err[0] = '\0';
	*used = 0;
	const unsigned char *p = data;
	size_t given = 0; /* to the sink in this call */
	while (n > 0) {
		/* zlib counts in uInt: feed at most 1 GiB at a time */
		uInt take = n > (1u << 30) ? (1u << 30) : (uInt)n;
		g->z.next_in = (unsigned char *)(uintptr_t)p;
		g->z.avail_in = take;
		while (g->z.avail_in > 0) {
			if (!g->in_member) { /* a member begins here: the first, or one after another */
				if (g->zl->inflateReset(&g->z) != Z_OK) {
					snprintf(err, errsize, "the gzip decoder failed at byte %llu of the body",
					         (unsigned long long)g->in);
					return false;
				}
				g->in_member = true;
			}
			uInt before = g->z.avail_in;
			g->z.next_out = g->buf;
			g->z.avail_out = (uInt)OUT_SIZE;
			int rc = g->zl->inflate(&g->z, Z_NO_FLUSH);
			g->in += before - g->z.avail_in;
			size_t made = OUT_SIZE - g->z.avail_out;
			if (made > 0) {
				g->out += made;
				given += made;
				if (!g->sink(g->cls, (const char *)g->buf, made))
					return false;
			}
			if (rc == Z_STREAM_END) {
				g->in_member = false;
			} else if (rc != Z_OK && rc != Z_BUF_ERROR) {
				snprintf(err, errsize, "the body is not valid gzip at byte %llu (%s)",
				         (unsigned long long)g->in,
				         g->z.msg ? g->z.msg : rc == Z_NEED_DICT ? "a preset dictionary" : "corrupt");
				return false;
			} else if (made == 0 && before == g->z.avail_in) {
				break; /* no progress: zlib wants more input (it took all it could) */
			}
			if (given >= budget) { /* this call's slice is done: the rest comes again */
				*used += take - g->z.avail_in;
				return true;
			}
		}
		*used += take;
		p += take;
		n -= take;
	}
	return true;
}

bool oxs_gunzip_end(oxs_gunzip *g, char *err, size_t errsize)
{
	if (g->in == 0) {
		snprintf(err, errsize, "the body is empty: no gzip member");
		return false;
	}
	if (g->in_member) {
		snprintf(err, errsize, "the body ends inside a gzip member, after %llu bytes",
		         (unsigned long long)g->in);
		return false;
	}
	return true;
}

uint64_t oxs_gunzip_in(const oxs_gunzip *g)
{
	return g->in;
}

uint64_t oxs_gunzip_out(const oxs_gunzip *g)
{
	return g->out;
}

void oxs_gunzip_free(oxs_gunzip *g)
{
	if (g == NULL)
		return;
	if (g->open)
		g->zl->inflateEnd(&g->z);
	free(g);
}
