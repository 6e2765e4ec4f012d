/*
 * query.h — what a request's URL and headers ask for (query.c): query strings split into
 * pairs, render options and tensor preview options from them, If-None-Match.  Pure
 * helpers, no allocation; exposed for the unit tests through oxs.h.  A leaf.
 */
#ifndef OXS_QUERY_H
#define OXS_QUERY_H

#include "render/oxr.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct oxs_query_pair {
	const char *key, *value; /* NUL-terminated, inside the caller's buffer */
} oxs_query_pair;

/* Split a raw query string ("a=1&b=x%20y") in place into decoded pairs (%XX and '+').
 * A key without '=' gets the value "".  Returns the pair count, or -1 on a malformed
 * escape, a decoded NUL byte, or more than max pairs. */
int oxs_query_split(char *query, oxs_query_pair *out, size_t max);

/* If-None-Match semantics (weak comparison, lists, "*"): true when the header matches
 * etag (given with its quotes, e.g. "\"abc\""). */
bool oxs_etag_match(const char *if_none_match, const char *etag);

/* Render options from query pairs (oxr_options_set for each, defaults first).  False with
 * a message when a key is unknown, a value bad, or a key repeated. */
bool oxs_query_options(const oxs_query_pair *pairs, size_t n, oxr_options *opt, char *err,
                       size_t errsize);

/* Tensor previews (GET /models/{id}/tensors/{name}): the query, checked.
 *   values=N   elements to decode (JSON: default 100, at most OXS_PREVIEW_JSON_MAX;
 *              .npy: default the rest of the tensor, at most OXS_PREVIEW_NPY_MAX)
 *   offset=K   first element (default 0)
 *   stats=0|1  statistics over the whole tensor (default 1; JSON only)
 *   bins=B     histogram bins, 0..OXS_PREVIEW_BINS_MAX (default 32; 0 = none)
 *   format=json|npy */
#define OXS_PREVIEW_JSON_MAX 100000u
#define OXS_PREVIEW_NPY_MAX (16u << 20)
#define OXS_PREVIEW_BINS_MAX 4096u

typedef struct oxs_preview_opt {
	uint64_t offset;
	uint32_t values;
	bool values_given;
	bool stats;
	uint32_t bins;
	bool npy;
	bool dequantize;  /* the float32 values (q - zero_point) * scale (docs/quant.md) */
} oxs_preview_opt;

/* Fill *o from query pairs (defaults first).  False with a message when a key is
 * unknown or repeated or a value is malformed or out of range. */
bool oxs_preview_query(const oxs_query_pair *pairs, size_t n, oxs_preview_opt *o, char *err,
                       size_t errsize);
/* The canonical text of *o ("v=100&o=0&s=1&b=32&f=json&q=0"), for cache keys. */
void oxs_preview_key(const oxs_preview_opt *o, char *out, size_t size);

#endif /* OXS_QUERY_H */
