/*
 * support_pbw.h — a tiny protobuf writer for unit tests: builds TensorProto bytes by hand
 * (raw_data, typed fields packed or not, external_data) and parses them with
 * oxp_tensor_file_parse().  Test code only: aborts when memory runs out.
 */
#ifndef SUPPORT_PBW_H
#define SUPPORT_PBW_H

#include "parser/oxp.h"

typedef struct pbw {
	uint8_t *p;
	size_t len, cap;
} pbw;

void pbw_free(pbw *b);
void pbw_raw(pbw *b, const void *p, size_t n);            /* bytes as they are */
void pbw_varint(pbw *b, uint64_t v);
void pbw_tag(pbw *b, uint32_t field, unsigned wiretype);
void pbw_int(pbw *b, uint32_t field, uint64_t v);          /* one varint field */
void pbw_fixed32(pbw *b, uint32_t field, uint32_t v);      /* one unpacked fixed32 */
void pbw_fixed64(pbw *b, uint32_t field, uint64_t v);      /* one unpacked fixed64 */
void pbw_bytes(pbw *b, uint32_t field, const void *p, size_t n);
void pbw_str(pbw *b, uint32_t field, const char *s);
/* Packed payloads: varints, or fixed32/fixed64 values (width 4 or 8). */
void pbw_packed_varints(pbw *b, uint32_t field, const uint64_t *v, size_t n);
void pbw_packed_fixed(pbw *b, uint32_t field, const uint64_t *v, size_t n, unsigned width);
/* TensorProto header: dims (field 1, packed) and data_type (field 2). */
void pbw_tensor_head(pbw *b, const int64_t *dims, size_t ndims, int32_t dtype);
/* One external_data entry (field 13). */
void pbw_entry(pbw *b, uint32_t field, const char *key, size_t keylen, const char *value,
               size_t valuelen);

/* A float from its bits and back (memcpy, no conversion). */
float pbw_f32(uint32_t bits);
uint32_t pbw_bits32(float f);

/* Parse b as a lone TensorProto; returns the model (NULL on failure, err filled). */
oxp_model *pbw_parse(const pbw *b, oxp_error *err);

#endif
