/*
 * wire.c — the checked protobuf wire reader.
 *
 * Every function tests the bytes left before it reads and never moves the reader on error.
 * Varints are at most 10 bytes and must fit 64 bits (the 10th byte may only carry bit 63);
 * tags are at most 5 bytes with field numbers 1..2^29-1.
 */
#include "parser/internal.h"

#include <string.h>

oxp_code oxp__rd_varint_slow(oxp_reader *r, uint64_t *out)
{
	uint64_t v = 0;
	size_t n = r->left < 10 ? r->left : 10;
	for (size_t i = 0; i < n; i++) {
		uint8_t b = r->p[i];
		if (i == 9 && b > 1)
			return OXP_E_VARINT; /* would overflow 64 bits (or an 11th byte follows) */
		v |= (uint64_t)(b & 0x7f) << (7 * i);
		if ((b & 0x80) == 0) {
			r->p += i + 1;
			r->left -= i + 1;
			*out = v;
			return OXP_OK;
		}
	}
	return n == 10 ? OXP_E_VARINT : OXP_E_TRUNCATED;
}

oxp_code oxp__rd_tag_slow(oxp_reader *r, uint32_t *field, unsigned *wiretype)
{
	oxp_reader save = *r;
	uint64_t v;
	oxp_code c = oxp__rd_varint(r, &v);
	if (c != OXP_OK)
		return c == OXP_E_VARINT ? OXP_E_TAG : c;
	if (r->p - save.p > 5 || v > UINT32_MAX || (v >> 3) == 0) {
		*r = save;
		return OXP_E_TAG;
	}
	*field = (uint32_t)(v >> 3);
	*wiretype = (unsigned)(v & 7);
	return OXP_OK;
}

oxp_code oxp__rd_fixed32(oxp_reader *r, uint32_t *out)
{
	if (r->left < 4)
		return OXP_E_TRUNCATED;
	uint32_t v = (uint32_t)r->p[0] | (uint32_t)r->p[1] << 8 | (uint32_t)r->p[2] << 16 |
	             (uint32_t)r->p[3] << 24;
	r->p += 4;
	r->left -= 4;
	*out = v;
	return OXP_OK;
}

oxp_code oxp__rd_fixed64(oxp_reader *r, uint64_t *out)
{
	if (r->left < 8)
		return OXP_E_TRUNCATED;
	uint64_t v = 0;
	for (unsigned i = 0; i < 8; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += 8;
	r->left -= 8;
	*out = v;
	return OXP_OK;
}

oxp_code oxp__rd_bytes_slow(oxp_reader *r, const uint8_t **p, size_t *len)
{
	oxp_reader save = *r;
	uint64_t n;
	oxp_code c = oxp__rd_varint(r, &n);
	if (c != OXP_OK)
		return c;
	if (n > r->left) { /* compared before any pointer is formed */
		*r = save;
		return OXP_E_LENGTH;
	}
	*p = r->p;
	*len = (size_t)n;
	r->p += n;
	r->left -= (size_t)n;
	return OXP_OK;
}

oxp_code oxp__rd_skip(oxp_reader *r, unsigned wiretype)
{
	uint64_t v;
	uint32_t v32;
	const uint8_t *p;
	size_t n;
	switch (wiretype) {
	case OXP_WT_VARINT:
		return oxp__rd_varint(r, &v);
	case OXP_WT_I64:
		return oxp__rd_fixed64(r, &v);
	case OXP_WT_LEN:
		return oxp__rd_bytes(r, &p, &n);
	case OXP_WT_I32:
		return oxp__rd_fixed32(r, &v32);
	case OXP_WT_SGROUP:
	case OXP_WT_EGROUP:
		return OXP_E_GROUP;
	default:
		return OXP_E_WIRETYPE;
	}
}

oxp_code oxp__packed_varint_count(const uint8_t *p, size_t len, size_t *out)
{
	if (len == 0) {
		*out = 0;
		return OXP_OK;
	}
	if (p[len - 1] & 0x80)
		return OXP_E_PACKED; /* the last varint is cut short */
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		n += (p[i] & 0x80) == 0;
	*out = n;
	return OXP_OK;
}
