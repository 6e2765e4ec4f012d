/* support_pbw.c — see support_pbw.h. */
#include "tests/unit/support_pbw.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pbw_free(pbw *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

void pbw_raw(pbw *b, const void *p, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 64;
		while (cap < b->len + n)
			cap *= 2;
		uint8_t *q = realloc(b->p, cap);
		if (q == NULL) {
			fprintf(stderr, "pbw: out of memory\n");
			abort();
		}
		b->p = q;
		b->cap = cap;
	}
	if (n > 0)
		memcpy(b->p + b->len, p, n);
	b->len += n;
}

void pbw_varint(pbw *b, uint64_t v)
{
	uint8_t buf[10];
	size_t n = 0;
	do {
		buf[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v != 0)
			buf[n] |= 0x80;
		n++;
	} while (v != 0);
	pbw_raw(b, buf, n);
}

void pbw_tag(pbw *b, uint32_t field, unsigned wiretype)
{
	pbw_varint(b, (uint64_t)field << 3 | wiretype);
}

void pbw_int(pbw *b, uint32_t field, uint64_t v)
{
	pbw_tag(b, field, 0);
	pbw_varint(b, v);
}

static void put_le(pbw *b, uint64_t v, unsigned width)
{
	uint8_t buf[8];
	for (unsigned i = 0; i < width; i++)
		buf[i] = (uint8_t)(v >> (8 * i));
	pbw_raw(b, buf, width);
}

void pbw_fixed32(pbw *b, uint32_t field, uint32_t v)
{
	pbw_tag(b, field, 5);
	put_le(b, v, 4);
}

void pbw_fixed64(pbw *b, uint32_t field, uint64_t v)
{
	pbw_tag(b, field, 1);
	put_le(b, v, 8);
}

void pbw_bytes(pbw *b, uint32_t field, const void *p, size_t n)
{
	pbw_tag(b, field, 2);
	pbw_varint(b, n);
	pbw_raw(b, p, n);
}

void pbw_str(pbw *b, uint32_t field, const char *s)
{
	pbw_bytes(b, field, s, strlen(s));
}

void pbw_packed_varints(pbw *b, uint32_t field, const uint64_t *v, size_t n)
{
	pbw tmp = {0};
	for (size_t i = 0; i < n; i++)
		pbw_varint(&tmp, v[i]);
	pbw_bytes(b, field, tmp.p, tmp.len);
	pbw_free(&tmp);
}

void pbw_packed_fixed(pbw *b, uint32_t field, const uint64_t *v, size_t n, unsigned width)
{
	pbw tmp = {0};
	for (size_t i = 0; i < n; i++)
		put_le(&tmp, v[i], width);
	pbw_bytes(b, field, tmp.p, tmp.len);
	pbw_free(&tmp);
}

void pbw_tensor_head(pbw *b, const int64_t *dims, size_t ndims, int32_t dtype)
{
	uint64_t d[16];
	for (size_t i = 0; i < ndims && i < 16; i++)
		d[i] = (uint64_t)dims[i];
	if (ndims > 0)
		pbw_packed_varints(b, 1, d, ndims);
	pbw_int(b, 2, (uint64_t)(int64_t)dtype);
}

void pbw_entry(pbw *b, uint32_t field, const char *key, size_t keylen, const char *value,
               size_t valuelen)
{
	pbw e = {0};
	pbw_bytes(&e, 1, key, keylen);
	pbw_bytes(&e, 2, value, valuelen);
	pbw_bytes(b, field, e.p, e.len);
	pbw_free(&e);
}

oxp_model *pbw_parse(const pbw *b, oxp_error *err)
{
	oxp_model *m = NULL;
	static const uint8_t empty[1];
	if (oxp_tensor_file_parse(&m, b->len ? b->p : empty, b->len, NULL, err) != OXP_OK)
		return NULL;
	return m;
}

float pbw_f32(uint32_t bits)
{
	float f;
	memcpy(&f, &bits, sizeof(f));
	return f;
}

uint32_t pbw_bits32(float f)
{
	uint32_t b;
	memcpy(&b, &f, sizeof(b));
	return b;
}
