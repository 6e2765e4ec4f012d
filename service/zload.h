/*
 * zload.h — zlib, loaded on first use (zload.c): the decoder of gzip request bodies
 * (gunzip.c) and the encoder of gzip'd answers (gzip.c) share one loader.
 */
#ifndef OXS_ZLOAD_H
#define OXS_ZLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <zlib.h>

#define OXS_ZLIB_FNS(X)                                                                  \
	X(inflateInit2_) X(inflate) X(inflateEnd) X(inflateReset) X(deflateInit2_) X(deflate) \
	X(deflateEnd) X(deflateBound) X(zlibVersion)

typedef struct oxs_zlib {
#define X(name) __typeof__(name) *name;
	OXS_ZLIB_FNS(X)
#undef X
} oxs_zlib;

/* zlib's functions (dlopen'd by the first call, thread-safe), or NULL with the reason in
 * err when the library cannot be loaded. */
const oxs_zlib *oxs_zlib_load(char *err, size_t errsize);

#endif /* OXS_ZLOAD_H */
