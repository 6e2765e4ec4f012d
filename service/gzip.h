/*
 * gzip.h — gzip'd answers (gzip.c): whether a request accepts them, whether an answer is
 * worth compressing, and the compression itself (zlib, loaded on first use).
 */
#ifndef OXS_GZIP_H
#define OXS_GZIP_H

#include <stdbool.h>
#include <stddef.h>

/* Answers smaller than this go plain: the gzip header and a round trip cost more than
 * they save. */
#define OXS_GZIP_MIN 1024

/* True when an Accept-Encoding value (NULL: the header is absent) accepts gzip: "gzip"
 * or "x-gzip" with a q-value above 0, or "*" above 0 when gzip is not named
 * (RFC 9110 12.5.3).  "gzip;q=0" refuses it; a malformed q-value counts as 0. */
bool oxs_gzip_accepted(const char *accept_encoding);
/* True when an answer of this Content-Type and size is worth compressing: text, SVG and
 * JSON of OXS_GZIP_MIN bytes or more (never images or octet streams, already dense). */
bool oxs_gzip_worth(const char *type, size_t len);
/* data[0..len) as one gzip member (RFC 1952, no name or time: the same bytes give the
 * same output), into *out (malloc'd, the caller frees) of *outlen bytes.  False when zlib
 * cannot be loaded or memory runs out, or when the result is not smaller than the input
 * (nothing to gain): *out is then NULL. */
bool oxs_gzip(const void *data, size_t len, char **out, size_t *outlen);

#endif /* OXS_GZIP_H */
