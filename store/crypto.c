/*
 * crypto.c — libcrypto (OpenSSL), loaded on the first hash rather than linked.
 *
 * The store and the service hash with SHA-256 (ids, ETags, tokens), but the CLI's
 * commands mostly do not: a linked libcrypto (21,000 relocations) was the largest part
 * of the program's start-up once libcurl and libmicrohttpd were loaded on use
 * (docs/decisions.md, docs/bench.md).  This file defines the nine OpenSSL functions the
 * program calls, each forwarding to the library's own, which the first call loads
 * (dlopen) and looks up (dlsym) once.  Callers keep calling EVP_* as before.  Should the
 * library be missing (the package is a dependency of the image and of the build), the
 * first call stops the program with the reason: there is no id without a hash.  The
 * server loads it at start (oxst_crypto_load) so that it fails there instead.
 */
/* SHA256_Init/Update/Final and SHA256_CTX (public, deprecated in OpenSSL 3) for
 * oxst_sha256: the only interface whose midstate can be read and set, which resumable
 * transfers need (docs/decisions.md); used in this file only. */
#define OPENSSL_SUPPRESS_DEPRECATED 1

#include "store/internal.h"

#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <string.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define CRYPTO_SONAME "libcrypto.so.3"

OXR_DLOPEN_NOTE(crypto, "hash", "SHA-256 of models, ETags and tokens", CRYPTO_SONAME);

#define CRYPTO_FNS(X)                                                                    \
	X(EVP_sha256) X(EVP_MD_CTX_new) X(EVP_MD_CTX_free) X(EVP_DigestInit_ex)           \
	X(EVP_DigestUpdate) X(EVP_DigestFinal_ex) X(EVP_Digest) X(OPENSSL_cleanse)         \
	X(CRYPTO_memcmp) X(SHA256_Init) X(SHA256_Update) X(SHA256_Final)

static union {
	struct {
#define X(name) __typeof__(name) *name;
		CRYPTO_FNS(X)
#undef X
	};
	void *slot[0 CRYPTO_FNS(OXR_DLOPEN_SLOT)];
} lib;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool loaded;
static char load_err[300];

static void load(void)
{
	static const char *const names[] = {CRYPTO_FNS(OXR_DLOPEN_NAME)};
	loaded = oxr_dlopen(CRYPTO_SONAME, "", names, lib.slot, sizeof(names) / sizeof(names[0]),
	                      load_err, sizeof(load_err));
}

bool oxst_crypto_load(char *err, size_t errsize)
{
	pthread_once(&once, load);
	if (!loaded && err != NULL)
		snprintf(err, errsize, "%s", load_err);
	return loaded;
}

static void need(void)
{
	if (!oxst_crypto_load(NULL, 0)) {
		fprintf(stderr, "onnxviz: %s\n", load_err);
		abort();
	}
}

const EVP_MD *EVP_sha256(void)
{
	need();
	return lib.EVP_sha256();
}

EVP_MD_CTX *EVP_MD_CTX_new(void)
{
	need();
	return lib.EVP_MD_CTX_new();
}

void EVP_MD_CTX_free(EVP_MD_CTX *ctx)
{
	need();
	lib.EVP_MD_CTX_free(ctx);
}

int EVP_DigestInit_ex(EVP_MD_CTX *ctx, const EVP_MD *type, ENGINE *impl)
{
	need();
	return lib.EVP_DigestInit_ex(ctx, type, impl);
}

int EVP_DigestUpdate(EVP_MD_CTX *ctx, const void *d, size_t cnt)
{
	need();
	return lib.EVP_DigestUpdate(ctx, d, cnt);
}

int EVP_DigestFinal_ex(EVP_MD_CTX *ctx, unsigned char *md, unsigned int *s)
{
	need();
	return lib.EVP_DigestFinal_ex(ctx, md, s);
}

int EVP_Digest(const void *data, size_t count, unsigned char *md, unsigned int *size,
               const EVP_MD *type, ENGINE *impl)
{
	need();
	return lib.EVP_Digest(data, count, md, size, type, impl);
}

void OPENSSL_cleanse(void *ptr, size_t len)
{
	need();
	lib.OPENSSL_cleanse(ptr, len);
}

int CRYPTO_memcmp(const void *in_a, const void *in_b, size_t len)
{
	need();
	return lib.CRYPTO_memcmp(in_a, in_b, len);
}

/* ---------------------------------------------------------------------------------------
 * SHA-256 with its midstate (resumable transfers)
 */
_Static_assert(sizeof(SHA256_CTX) <= sizeof(((oxst_sha256 *)0)->ctx), "SHA256_CTX fits");

void oxst_sha256_resume(oxst_sha256 *c, const uint32_t h[8], uint64_t bytes)
{
	need();
	SHA256_CTX *x = (SHA256_CTX *)(void *)c->ctx;
	lib.SHA256_Init(x);
	if (bytes == 0)
		return;
	for (int i = 0; i < 8; i++)
		x->h[i] = h[i];
	uint64_t bits = bytes * 8; /* bytes < 2^61: a transfer is at most 2^50 bytes */
	x->Nl = (SHA_LONG)(bits & 0xffffffffu);
	x->Nh = (SHA_LONG)(bits >> 32);
	x->num = 0;
}

void oxst_sha256_update(oxst_sha256 *c, const void *data, size_t n)
{
	need();
	lib.SHA256_Update((SHA256_CTX *)(void *)c->ctx, data, n);
}

bool oxst_sha256_midstate(const oxst_sha256 *c, uint32_t h[8], uint64_t *bytes)
{
	const SHA256_CTX *x = (const SHA256_CTX *)(const void *)c->ctx;
	uint64_t bits = ((uint64_t)x->Nh << 32) | x->Nl;
	if (x->num != 0 || bits % 512 != 0)
		return false;
	for (int i = 0; i < 8; i++)
		h[i] = x->h[i];
	*bytes = bits / 8;
	return true;
}

bool oxst_sha256_read(oxst_sha256 *c, int fd, uint64_t from, uint64_t upto)
{
	enum { CHUNK = 1 << 20 };
	char *buf = malloc(CHUNK);
	uint64_t at = from;
	bool ok = buf != NULL;
	while (ok && at < upto) {
		size_t want = upto - at < CHUNK ? (size_t)(upto - at) : CHUNK;
		ssize_t n = pread(fd, buf, want, (off_t)at);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			ok = false;
		if (n <= 0)
			break;
		oxst_sha256_update(c, buf, (size_t)n);
		at += (uint64_t)n;
	}
	free(buf);
	return ok && (at == upto || upto == UINT64_MAX);
}

bool oxst_sha256_fd(int fd, char hex[OXST_ID_LEN + 1])
{
	oxst_sha256 c;
	oxst_sha256_resume(&c, NULL, 0);
	if (!oxst_sha256_read(&c, fd, 0, UINT64_MAX))
		return false;
	oxst_sha256_final(&c, hex);
	return true;
}

void oxst_sha256_final(oxst_sha256 *c, char hex[OXST_ID_LEN + 1])
{
	need();
	unsigned char md[32];
	lib.SHA256_Final(md, (SHA256_CTX *)(void *)c->ctx);
	oxst_hex(hex, md, sizeof(md));
}

/* ---------------------------------------------------------------------------------------
 * HMAC-SHA256 (RFC 2104) on the digest above: S3 request signing's only keyed hash, so no
 * further libcrypto symbol is looked up for it.
 */
void oxst_hmac_sha256(const void *key, size_t klen, const void *msg, size_t mlen,
                      unsigned char out[32])
{
	enum { BLOCK = 64 };
	unsigned char k[BLOCK] = {0}, pad[BLOCK], inner[32];
	unsigned int n = 0;
	if (klen > BLOCK)
		(void)EVP_Digest(key, klen, k, &n, EVP_sha256(), NULL);
	else if (klen > 0)
		memcpy(k, key, klen);
	oxst_sha256 c;
	for (int i = 0; i < BLOCK; i++)
		pad[i] = (unsigned char)(k[i] ^ 0x36);
	oxst_sha256_resume(&c, NULL, 0);
	oxst_sha256_update(&c, pad, BLOCK);
	oxst_sha256_update(&c, msg, mlen);
	lib.SHA256_Final(inner, (SHA256_CTX *)(void *)c.ctx);
	for (int i = 0; i < BLOCK; i++)
		pad[i] = (unsigned char)(k[i] ^ 0x5c);
	oxst_sha256_resume(&c, NULL, 0);
	oxst_sha256_update(&c, pad, BLOCK);
	oxst_sha256_update(&c, inner, sizeof(inner));
	lib.SHA256_Final(out, (SHA256_CTX *)(void *)c.ctx);
	OPENSSL_cleanse(k, sizeof(k));
	OPENSSL_cleanse(pad, sizeof(pad));
	OPENSSL_cleanse(inner, sizeof(inner));
	OPENSSL_cleanse(&c, sizeof(c));
}
