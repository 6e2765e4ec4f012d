/*
 * hash.c — hex and SHA-256 as hex (hash.h), through OpenSSL's EVP interface.
 */
#include "service/hash.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>

void oxs_hex(char *out, const unsigned char *bytes, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[bytes[i] >> 4];
		out[2 * i + 1] = digits[bytes[i] & 15];
	}
	out[2 * n] = '\0';
}

void oxs_sha256_hex(const void *data, size_t len, char *out, size_t hexlen)
{
	unsigned char md[32];
	unsigned int n = 0;
	if (EVP_Digest(data, len, md, &n, EVP_sha256(), NULL) != 1 || n != 32)
		memset(md, 0, sizeof(md));
	oxs_hex(out, md, 32);
	if (hexlen < 64)
		out[hexlen] = '\0';
}

void oxs_etag_of(const void *data, size_t len, char out[48])
{
	char h[65];
	oxs_sha256_hex(data, len, h, 32);
	snprintf(out, 48, "\"%.32s\"", h);
}
