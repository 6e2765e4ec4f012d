/*
 * hash.h — lowercase hex and SHA-256 digests as hex (hash.c): model ids, ETags, store
 * checksums.  A leaf every part of the service may use.
 */
#ifndef OXS_HASH_H
#define OXS_HASH_H

#include <stddef.h>

/* Lowercase hex of n bytes into out (2n+1 bytes). */
void oxs_hex(char *out, const unsigned char *bytes, size_t n);
/* SHA-256 of data as lowercase hex into out (65 bytes); the first `hexlen` characters
 * when hexlen < 64. */
void oxs_sha256_hex(const void *data, size_t len, char *out, size_t hexlen);
/* A strong ETag for bytes: "\"" + 32 hex digits of their SHA-256 + "\"" (48 bytes). */
void oxs_etag_of(const void *data, size_t len, char out[48]);

#endif /* OXS_HASH_H */
