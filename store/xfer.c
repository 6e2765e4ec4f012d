/*
 * xfer.c — a resumable transfer's state record (oxst_xfer), as both backends keep it:
 * "key value" lines, the local store in <root>/uploads/<uid>/state, the S3 store in the
 * object uploads/<uid>/state.  A few hundred bytes; the hash midstate is "hash" with
 * eight 8-digit hex words.
 */
#include "store/internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The initial hash values of SHA-256 (FIPS 180-4, 5.3.3). */
static const uint32_t sha256_iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                      0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

void oxst_xfer_init(oxst_xfer *x, uint64_t length, uint64_t part, int64_t now, int64_t expiry)
{
	memset(x, 0, sizeof(*x));
	x->length = length;
	x->part = part;
	x->created = now;
	x->expires = now + expiry;
	memcpy(x->h, sha256_iv, sizeof(x->h));
	snprintf(x->kind, sizeof(x->kind), "model");
}

/* A transfer begun without its id (sha256 ""; decision 97) is written with 64 zeros:
 * the same line a server from before reads as a claim (its last part then answers 422
 * checksum_mismatch: no file hashes to it), never as a corrupt state it would remove. */
static const char unnamed_id[OXST_ID_LEN + 1] =
	"0000000000000000000000000000000000000000000000000000000000000000";

bool oxst_xfer_uid_valid(const char *s)
{
	size_t n = 0;
	for (; s[n] != '\0'; n++)
		if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
			return false;
	return n == OXST_XFER_UID_LEN;
}

bool oxst_xfer_unhashed(const oxst_xfer *x)
{
	uint32_t any = 0;
	for (int i = 0; i < 8; i++)
		any |= x->h[i];
	return any == 0;
}

bool oxst_xfer_text(const oxst_xfer *x, char *out, size_t size, size_t *len)
{
	int n = snprintf(out, size,
	                 "length %" PRIu64 "\npart %" PRIu64 "\noffset %" PRIu64
	                 "\ncreated %" PRId64 "\nexpires %" PRId64 "\nsha256 %s\nkind %s\n"
	                 "hash %08" PRIx32 "%08" PRIx32 "%08" PRIx32 "%08" PRIx32 "%08" PRIx32
	                 "%08" PRIx32 "%08" PRIx32 "%08" PRIx32 "\n%s%s%s%s%s%s%s%s%s%s%s%s%sname %s\n",
	                 x->length, x->part, x->offset, x->created, x->expires,
	                 x->sha256[0] != '\0' ? x->sha256 : unnamed_id, x->kind,
	                 x->h[0], x->h[1], x->h[2], x->h[3], x->h[4], x->h[5], x->h[6], x->h[7],
	                 x->structure[0] ? "structure " : "", x->structure,
	                 x->structure[0] ? "\n" : "", x->backend[0] ? "backend " : "", x->backend,
	                 x->backend[0] ? "\n" : "", x->owner[0] ? "owner " : "", x->owner,
	                 x->owner[0] ? "\n" : "", x->lease[0] ? "lease " : "", x->lease,
	                 x->lease[0] ? "\n" : "", x->staged ? "staged 1\n" : "", x->name);
	if (n < 0 || (size_t)n >= size || strchr(x->name, '\n') != NULL ||
	    strchr(x->backend, '\n') != NULL || strchr(x->owner, '\n') != NULL ||
	    strchr(x->lease, '\n') != NULL)
		return false;
	*len = (size_t)n;
	return true;
}

static bool parse_hash(const char *v, uint32_t h[8])
{
	if (strlen(v) != 64)
		return false;
	for (int i = 0; i < 8; i++) {
		char word[9];
		memcpy(word, v + 8 * i, 8);
		word[8] = '\0';
		char *end = NULL;
		for (int k = 0; k < 8; k++)
			if (!((word[k] >= '0' && word[k] <= '9') || (word[k] >= 'a' && word[k] <= 'f')))
				return false;
		h[i] = (uint32_t)strtoul(word, &end, 16);
	}
	return true;
}

bool oxst_xfer_parse(const char *text, size_t len, oxst_xfer *x)
{
	char buf[4096];
	if (len >= sizeof(buf) || memchr(text, '\0', len) != NULL)
		return false;
	memcpy(buf, text, len);
	buf[len] = '\0';
	memset(x, 0, sizeof(*x));
	unsigned seen = 0;
	for (char *line = buf, *next; line != NULL && *line != '\0'; line = next) {
		next = strchr(line, '\n');
		if (next != NULL)
			*next++ = '\0';
		char *v = strchr(line, ' ');
		if (v == NULL)
			continue;
		*v++ = '\0';
		char *end = NULL;
		if (strcmp(line, "length") == 0)
			x->length = strtoull(v, &end, 10), seen |= 1;
		else if (strcmp(line, "part") == 0)
			x->part = strtoull(v, &end, 10), seen |= 2;
		else if (strcmp(line, "offset") == 0)
			x->offset = strtoull(v, &end, 10), seen |= 4;
		else if (strcmp(line, "created") == 0)
			x->created = strtoll(v, &end, 10), seen |= 8;
		else if (strcmp(line, "expires") == 0)
			x->expires = strtoll(v, &end, 10), seen |= 16;
		else if (strcmp(line, "sha256") == 0 && oxst_id_valid(v))
			snprintf(x->sha256, sizeof(x->sha256), "%s", strcmp(v, unnamed_id) == 0 ? "" : v),
				seen |= 32;
		else if (strcmp(line, "hash") == 0 && parse_hash(v, x->h))
			seen |= 64;
		else if (strcmp(line, "structure") == 0 && oxst_id_valid(v))
			memcpy(x->structure, v, OXST_ID_LEN + 1);
		else if (strcmp(line, "name") == 0)
			snprintf(x->name, sizeof(x->name), "%s", v);
		else if (strcmp(line, "kind") == 0)
			snprintf(x->kind, sizeof(x->kind), "%s", v);
		else if (strcmp(line, "backend") == 0)
			snprintf(x->backend, sizeof(x->backend), "%s", v);
		else if (strcmp(line, "owner") == 0)
			snprintf(x->owner, sizeof(x->owner), "%s", v);
		else if (strcmp(line, "lease") == 0)
			snprintf(x->lease, sizeof(x->lease), "%s", v);
		else if (strcmp(line, "staged") == 0 && strcmp(v, "1") == 0)
			x->staged = true;
		if (end != NULL && *end != '\0')
			return false;
	}
	/* a state written before the midstate was kept (no "hash" line): h[] is all zeros
	 * (no midstate is), for the backend to rebuild from the bytes it holds, or the
	 * initial values at offset 0 */
	if (!(seen & 64)) {
		if (x->offset == 0)
			memcpy(x->h, sha256_iv, sizeof(x->h));
		seen |= 64;
	}
	/* a part is a multiple of 64 bytes (the hash's blocks); the offset whole parts or
	 * the end */
	if (seen != 127 || x->part == 0 || x->part % 64 != 0 || x->offset > x->length ||
	    (x->offset != x->length && x->offset % x->part != 0))
		return false;
	if (x->kind[0] == '\0')
		snprintf(x->kind, sizeof(x->kind), "model");
	return true;
}
