/*
 * cache.h — the response cache (cache.c): ready libmicrohttpd responses by key, bounded by
 * bytes and count, least recently used out.  Entries are reference counted; a response may
 * be queued on many connections at once (libmicrohttpd counts its own references).
 */
#ifndef OXS_CACHE_H
#define OXS_CACHE_H

#include <microhttpd.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct oxs_centry {
	unsigned status;           /* 200, or the error status of a cached failure */
	struct MHD_Response *resp; /* status response */
	struct MHD_Response *nm;   /* 304 response, NULL for failures */
	char etag[48];             /* with quotes; "" for failures */
	const char *type;          /* Content-Type */
	const char *data;          /* body when held in memory (valid while referenced) */
	size_t len;                /* body bytes */
	int fd;                    /* body file when too large for memory, else -1 */
	/* the gzip'd variant (gzip.c), made with the entry when the body is worth it; NULL
	 * otherwise (then the plain one goes to every client) */
	struct MHD_Response *gz;   /* 200 with Content-Encoding: gzip */
	struct MHD_Response *gz_nm;/* its 304 */
	char gz_etag[48];          /* the plain ETag with "-gz" inside the quotes */
	size_t gz_len;             /* gzip'd body bytes */
	/* private */
	char *key;
	uint64_t hash;
	size_t cost;
	int64_t expires_ms; /* 0 = never */
	atomic_uint refs;
	bool in_table;
	struct oxs_centry *hnext, *lprev, *lnext;
} oxs_centry;

typedef struct oxs_cache oxs_cache;

oxs_cache *oxs_cache_new(uint64_t max_bytes, size_t max_entries);
void oxs_cache_free(oxs_cache *c);
/* A referenced entry, or NULL (absent or expired). */
oxs_centry *oxs_cache_get(oxs_cache *c, const char *key);
/* Add e (which the caller holds one reference to) under key, replacing an older entry;
 * entries costing more than an eighth of the budget are not kept.  The caller keeps its
 * reference either way. */
void oxs_cache_add(oxs_cache *c, const char *key, oxs_centry *e);
void oxs_cache_release(oxs_centry *e);
/* Drop every entry whose key starts with prefix. */
void oxs_cache_purge(oxs_cache *c, const char *prefix);
void oxs_cache_stats(oxs_cache *c, uint64_t *bytes, uint64_t *entries);

#endif /* OXS_CACHE_H */
