/*
 * gunzip.h — a gzip request body decoded as it arrives (Content-Encoding: gzip; gunzip.c).
 */
#ifndef OXS_GUNZIP_H
#define OXS_GUNZIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct oxs_gunzip oxs_gunzip;

/* Where the decoded bytes go, in order; false stops the decoding (the sink's own failure,
 * e.g. a limit: oxs_gunzip_feed then answers false with no message of its own). */
typedef bool (*oxs_gunzip_sink)(void *cls, const char *data, size_t n);

/* A decoder (zlib, loaded on the first call); NULL with the reason in err (zlib missing,
 * no memory). */
oxs_gunzip *oxs_gunzip_new(oxs_gunzip_sink sink, void *cls, char *err, size_t errsize);
/* The next n bytes of the body, decoded until the sink has been given `budget` bytes or
 * more in this call (a slice: one call's work stays small however much the bytes
 * inflate), or the n bytes are taken: *used gets how many were (the caller gives the rest
 * again).  One gzip member or several one after the other (RFC 1952).  False when the
 * stream is not gzip or corrupt (err says so and at which byte of the body), or when the
 * sink refused (err empty). */
bool oxs_gunzip_feed(oxs_gunzip *g, const void *data, size_t n, size_t budget, size_t *used,
                     char *err, size_t errsize);
/* The body has ended: false when it ended inside a member (or held none). */
bool oxs_gunzip_end(oxs_gunzip *g, char *err, size_t errsize);
/* Bytes of body taken and bytes decoded so far. */
uint64_t oxs_gunzip_in(const oxs_gunzip *g);
uint64_t oxs_gunzip_out(const oxs_gunzip *g);
/* NULL is a no-op. */
void oxs_gunzip_free(oxs_gunzip *g);

#endif /* OXS_GUNZIP_H */
