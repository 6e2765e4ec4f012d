/*
 * test_tensor.c — decoding tensor values (parser/tensor.c) from TensorProto bytes built by
 * hand: raw_data and every typed field (packed, unpacked, mixed), every data type, odd
 * sub-byte counts, storage mismatches, offsets and ranges, external bytes, and the
 * statistics / histogram on data whose answers are known.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parser/oxp.h"
#include "tests/unit/support_pbw.h"

enum { F_DIMS = 1, F_DTYPE = 2, F_FLOAT = 4, F_INT32 = 5, F_STRING = 6, F_INT64 = 7,
       F_RAW = 9, F_EXT = 13, F_LOC = 14, F_DOUBLE = 10, F_UINT64 = 11 };

typedef struct fixture { /* one parsed tensor and the bytes it borrows */
	pbw b;
	oxp_model *m;
	const oxp_tensor *t;
} fixture;

static void fx_parse(fixture *f)
{
	oxp_error err;
	f->m = pbw_parse(&f->b, &err);
	if (f->m == NULL)
		fprintf(stderr, "parse failed: %s\n", err.message);
	assert_non_null(f->m);
	f->t = oxp_model_tensor_get(f->m);
}

static void fx_free(fixture *f)
{
	oxp_model_free(f->m);
	pbw_free(&f->b);
	memset(f, 0, sizeof(*f));
}

/* ---------------------------------------------------------------------------------------
 * Every data type, from raw_data and from its typed field in three encodings: the same
 * bit patterns must come back.
 */
typedef struct sample {
	int32_t dt;
	unsigned n;        /* patterns (two per complex element) */
	uint64_t pat[8];
} sample;

static const sample samples[] = {
    {OXP_DT_FLOAT, 5, {0x3f800000, 0x80000000, 0x7fa00001, 0xff800000, 0x00000001}},
    {OXP_DT_DOUBLE, 3, {0x3ff0000000000000, 0x8000000000000000, 0x7ff4000000000001}},
    {OXP_DT_UINT8, 4, {0, 1, 0x80, 0xff}},
    {OXP_DT_INT8, 5, {0x80, 0xff, 0x7f, 0, 1}},
    {OXP_DT_UINT16, 3, {0, 0x8000, 0xffff}},
    {OXP_DT_INT16, 4, {0x8000, 0xffff, 0x7fff, 0}},
    {OXP_DT_INT32, 4, {0x80000000, 0xffffffff, 0x7fffffff, 5}},
    {OXP_DT_INT64, 4, {0x8000000000000000, UINT64_MAX, 0x7fffffffffffffff, 300}},
    {OXP_DT_BOOL, 4, {0, 1, 1, 0}},
    {OXP_DT_FLOAT16, 6, {0x3c00, 0x7c01, 0x8000, 0x0001, 0xfc00, 0x7bff}},
    {OXP_DT_UINT32, 3, {0xffffffff, 0, 1234567}},
    {OXP_DT_UINT64, 3, {UINT64_MAX, 0, 0x8000000000000000}},
    {OXP_DT_COMPLEX64, 4, {0x3f800000, 0x40000000, 0x7fc00000, 0x80000000}},
    {OXP_DT_COMPLEX128, 2, {0x3ff0000000000000, 0xbff0000000000000}},
    {OXP_DT_BFLOAT16, 4, {0x3f80, 0xff81, 0x8000, 0x0001}},
    {OXP_DT_FLOAT8E4M3FN, 4, {0x7e, 0xff, 0x80, 0x01}},
    {OXP_DT_FLOAT8E4M3FNUZ, 3, {0x7f, 0x80, 0x00}},
    {OXP_DT_FLOAT8E5M2, 4, {0x7b, 0x7c, 0xfd, 0x80}},
    {OXP_DT_FLOAT8E5M2FNUZ, 3, {0x7f, 0x80, 0x01}},
    {OXP_DT_FLOAT8E8M0, 3, {0x00, 0x7f, 0xff}},
    {OXP_DT_UINT4, 5, {0, 15, 7, 8, 1}},
    {OXP_DT_INT4, 3, {8, 15, 7}},
    {OXP_DT_FLOAT4E2M1, 5, {0x7, 0xf, 0x8, 0x1, 0x3}},
    {OXP_DT_UINT2, 5, {3, 0, 1, 2, 3}},
    {OXP_DT_INT2, 7, {2, 3, 0, 1, 1, 2, 3}},
};

static unsigned parts_of(int32_t dt)
{
	return oxp_dtype_class(dt) == OXP_VC_COMPLEX ? 2 : 1;
}

/* Raw bytes of the patterns (little-endian; sub-byte types packed low bits first). */
static size_t raw_of(const sample *s, uint8_t *out)
{
	unsigned bits = oxp_dtype_bits(s->dt) / parts_of(s->dt);
	if (bits < 8) {
		size_t n = (s->n * bits + 7) / 8;
		memset(out, 0, n);
		for (unsigned i = 0; i < s->n; i++)
			out[i * bits / 8] |= (uint8_t)(s->pat[i] << (i * bits % 8));
		return n;
	}
	for (unsigned i = 0; i < s->n; i++)
		for (unsigned k = 0; k < bits / 8; k++)
			out[i * bits / 8 + k] = (uint8_t)(s->pat[i] >> (8 * k));
	return s->n * bits / 8;
}

/* The typed field and the wire values that hold the patterns. */
static uint32_t typed_of(const sample *s, uint64_t *vals, size_t *nvals)
{
	switch (s->dt) {
	case OXP_DT_FLOAT:
	case OXP_DT_COMPLEX64:
	case OXP_DT_DOUBLE:
	case OXP_DT_COMPLEX128:
	case OXP_DT_INT64:
	case OXP_DT_UINT32:
	case OXP_DT_UINT64:
		memcpy(vals, s->pat, s->n * sizeof(uint64_t));
		*nvals = s->n;
		return s->dt == OXP_DT_INT64                                 ? F_INT64
		       : s->dt == OXP_DT_UINT32 || s->dt == OXP_DT_UINT64    ? F_UINT64
		       : s->dt == OXP_DT_FLOAT || s->dt == OXP_DT_COMPLEX64 ? F_FLOAT
		                                                             : F_DOUBLE;
	default:
		break;
	}
	unsigned bits = oxp_dtype_bits(s->dt);
	if (bits < 8) { /* int32_data holds the packed bytes */
		uint8_t raw[16];
		*nvals = raw_of(s, raw);
		for (size_t i = 0; i < *nvals; i++)
			vals[i] = raw[i];
		return F_INT32;
	}
	for (unsigned i = 0; i < s->n; i++) {
		uint64_t p = s->pat[i];
		int64_t v = (int64_t)p;
		if (oxp_dtype_class(s->dt) == OXP_VC_INT) /* signed: the int32 value, sign-extended */
			v = bits == 8 ? (int8_t)p : bits == 16 ? (int16_t)p : (int32_t)(uint32_t)p;
		vals[i] = (uint64_t)v; /* negative: a 10-byte varint as protobuf writes it */
	}
	*nvals = s->n;
	return F_INT32;
}

/* encoding 0: packed; 1: one field per value; 2: mixed (unpacked, then two packed runs). */
static void put_typed(pbw *b, uint32_t field, const uint64_t *v, size_t n, int encoding)
{
	unsigned width = field == F_FLOAT ? 4 : field == F_DOUBLE ? 8 : 0;
	size_t split = encoding == 0 ? 0 : encoding == 1 ? n : n / 3;
	for (size_t i = 0; i < split; i++) {
		if (width == 4)
			pbw_fixed32(b, field, (uint32_t)v[i]);
		else if (width == 8)
			pbw_fixed64(b, field, v[i]);
		else
			pbw_int(b, field, v[i]);
	}
	size_t mid = split + (n - split) / 2;
	const size_t cuts[3] = {split, encoding == 2 ? mid : n, n};
	for (int k = 0; k < 2; k++) {
		if (cuts[k + 1] == cuts[k] && !(encoding == 0 && k == 0))
			continue;
		if (width)
			pbw_packed_fixed(b, field, v + cuts[k], cuts[k + 1] - cuts[k], width);
		else
			pbw_packed_varints(b, field, v + cuts[k], cuts[k + 1] - cuts[k]);
	}
}

static void check_bits(const oxp_tensor *t, const sample *s)
{
	oxp_error err;
	uint64_t got[8];
	size_t count = s->n / parts_of(s->dt);
	oxp_code rc = oxp_tensor_read_bits(t, NULL, 0, 0, count, got, &err);
	if (rc != OXP_OK)
		fprintf(stderr, "%s: %s\n", oxp_dtype_name(s->dt), err.message);
	assert_int_equal(rc, OXP_OK);
	for (unsigned i = 0; i < s->n; i++) {
		if (got[i] != s->pat[i])
			fprintf(stderr, "%s [%u]: got 0x%llx want 0x%llx\n", oxp_dtype_name(s->dt), i,
			        (unsigned long long)got[i], (unsigned long long)s->pat[i]);
		assert_int_equal(got[i], s->pat[i]);
	}
	/* the generic reader agrees with the bits */
	oxp_scalar sc[8];
	assert_int_equal(oxp_tensor_read(t, NULL, 0, 0, count, sc, &err), OXP_OK);
	for (size_t i = 0; i < count; i++) {
		assert_int_equal(sc[i].cls, oxp_dtype_class(s->dt));
		double want = oxp_bits_to_f64(s->dt, s->pat[i * parts_of(s->dt)]);
		switch (sc[i].cls) {
		case OXP_VC_FLOAT:
			assert_true(sc[i].v.f == want || (isnan(sc[i].v.f) && isnan(want)));
			break;
		case OXP_VC_COMPLEX:
			assert_true(sc[i].v.c[0] == want || (isnan(sc[i].v.c[0]) && isnan(want)));
			assert_true(sc[i].v.c[1] == oxp_bits_to_f64(s->dt, s->pat[i * 2 + 1]) ||
			            isnan(sc[i].v.c[1]));
			break;
		case OXP_VC_INT:
			assert_true((double)sc[i].v.i == want);
			break;
		case OXP_VC_UINT:
			assert_int_equal(sc[i].v.u, s->pat[i]);
			break;
		case OXP_VC_BOOL:
			assert_int_equal(sc[i].v.b, s->pat[i] != 0);
			break;
		default:
			fail();
		}
	}
}

static void test_every_dtype_raw_and_typed(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof(samples) / sizeof(samples[0]); k++) {
		const sample *s = &samples[k];
		int64_t dims[2] = {1, (int64_t)(s->n / parts_of(s->dt))};
		uint8_t raw[64];
		size_t nraw = raw_of(s, raw);
		fixture f = {0};
		pbw_tensor_head(&f.b, dims, 2, s->dt);
		pbw_bytes(&f.b, F_RAW, raw, nraw);
		fx_parse(&f);
		check_bits(f.t, s);
		fx_free(&f);

		uint64_t vals[16];
		size_t nvals;
		uint32_t field = typed_of(s, vals, &nvals);
		for (int enc = 0; enc < 3; enc++) {
			pbw_tensor_head(&f.b, dims, 2, s->dt);
			put_typed(&f.b, field, vals, nvals, enc);
			fx_parse(&f);
			check_bits(f.t, s);
			/* reading from the middle of a packed/unpacked mix */
			size_t count = s->n / parts_of(s->dt);
			uint64_t one[2];
			oxp_error err;
			assert_int_equal(oxp_tensor_read_bits(f.t, NULL, 0, count - 1, 1, one, &err),
			                 OXP_OK);
			assert_int_equal(one[0], s->pat[(count - 1) * parts_of(s->dt)]);
			fx_free(&f);
		}
	}
}

static void test_float_values(void **state)
{
	(void)state;
	float vals[] = {1.5f, -0.0f, 3.25e-3f, -1e30f};
	int64_t dims = 4;
	fixture f = {0};
	pbw_tensor_head(&f.b, &dims, 1, OXP_DT_FLOAT);
	pbw_bytes(&f.b, F_RAW, vals, sizeof(vals));
	fx_parse(&f);
	double d[4];
	oxp_error err;
	assert_int_equal(oxp_tensor_read_f64(f.t, NULL, 0, 0, 4, d, &err), OXP_OK);
	for (int i = 0; i < 4; i++)
		assert_true(d[i] == (double)vals[i]);
	assert_true(signbit(d[1]));
	int64_t i64[1];
	assert_int_equal(oxp_tensor_read_i64(f.t, NULL, 0, 0, 1, i64, &err), OXP_E_DTYPE);
	assert_int_equal(err.code, OXP_E_DTYPE);
	oxp_str s[1];
	assert_int_equal(oxp_tensor_read_str(f.t, 0, 1, s, &err), OXP_E_DTYPE);
	fx_free(&f);
}

static void test_int_exact(void **state)
{
	(void)state;
	oxp_error err;
	fixture f = {0};
	int64_t dims = 3;
	uint64_t u[] = {UINT64_MAX, 9007199254740993u, 0};
	pbw_tensor_head(&f.b, &dims, 1, OXP_DT_UINT64);
	pbw_packed_varints(&f.b, F_UINT64, u, 3);
	fx_parse(&f);
	uint64_t gu[3];
	assert_int_equal(oxp_tensor_read_u64(f.t, NULL, 0, 0, 3, gu, &err), OXP_OK);
	assert_memory_equal(gu, u, sizeof(u));
	int64_t gi[3];
	assert_int_equal(oxp_tensor_read_i64(f.t, NULL, 0, 0, 3, gi, &err), OXP_E_RANGE);
	assert_int_equal(oxp_tensor_read_i64(f.t, NULL, 0, 1, 2, gi, &err), OXP_OK);
	assert_int_equal(gi[0], 9007199254740993);
	fx_free(&f);

	int64_t s64[] = {INT64_MIN, -1, INT64_MAX};
	pbw_tensor_head(&f.b, &dims, 1, OXP_DT_INT64);
	for (int i = 0; i < 3; i++)
		pbw_int(&f.b, F_INT64, (uint64_t)s64[i]); /* unpacked */
	fx_parse(&f);
	assert_int_equal(oxp_tensor_read_i64(f.t, NULL, 0, 0, 3, gi, &err), OXP_OK);
	assert_memory_equal(gi, s64, sizeof(s64));
	assert_int_equal(oxp_tensor_read_u64(f.t, NULL, 0, 2, 1, gu, &err), OXP_OK);
	assert_int_equal(gu[0], (uint64_t)INT64_MAX);
	assert_int_equal(oxp_tensor_read_u64(f.t, NULL, 0, 0, 1, gu, &err), OXP_E_RANGE);
	fx_free(&f);

	/* int32_data: protobuf keeps the low 32 bits of a longer varint */
	dims = 2;
	uint64_t w[] = {((uint64_t)1 << 32) | 5, (uint64_t)-7};
	pbw_tensor_head(&f.b, &dims, 1, OXP_DT_INT32);
	pbw_packed_varints(&f.b, F_INT32, w, 2);
	fx_parse(&f);
	assert_int_equal(oxp_tensor_read_i64(f.t, NULL, 0, 0, 2, gi, &err), OXP_OK);
	assert_int_equal(gi[0], 5);
	assert_int_equal(gi[1], -7);
	fx_free(&f);
}

static void test_bool_and_strings(void **state)
{
	(void)state;
	oxp_error err;
	fixture f = {0};
	int64_t dims = 4;
	uint8_t raw[] = {0, 1, 2, 255}; /* any non-zero byte is true */
	pbw_tensor_head(&f.b, &dims, 1, OXP_DT_BOOL);
	pbw_bytes(&f.b, F_RAW, raw, 4);
	fx_parse(&f);
	int64_t gi[4];
	assert_int_equal(oxp_tensor_read_i64(f.t, NULL, 0, 0, 4, gi, &err), OXP_OK);
	assert_int_equal(gi[0], 0);
	assert_int_equal(gi[2], 1);
	assert_int_equal(gi[3], 1);
	fx_free(&f);

	dims = 3;
	pbw_tensor_head(&f.b, &dims, 1, OXP_DT_STRING);
	pbw_str(&f.b, F_STRING, "a");
	pbw_bytes(&f.b, F_STRING, "\0x\xff", 3);
	pbw_str(&f.b, F_STRING, "");
	fx_parse(&f);
	oxp_str s[3];
	assert_int_equal(oxp_tensor_read_str(f.t, 0, 3, s, &err), OXP_OK);
	assert_int_equal(s[1].len, 3);
	assert_memory_equal(s[1].p, "\0x\xff", 3);
	assert_int_equal(s[2].len, 0);
	oxp_scalar sc[3];
	assert_int_equal(oxp_tensor_read(f.t, NULL, 0, 1, 2, sc, &err), OXP_OK);
	assert_int_equal(sc[0].cls, OXP_VC_STRING);
	assert_int_equal(sc[0].v.s.len, 3);
	double d[1];
	assert_int_equal(oxp_tensor_read_f64(f.t, NULL, 0, 0, 1, d, &err), OXP_E_DTYPE);
	assert_int_equal(oxp_tensor_read_str(f.t, 2, 2, s, &err), OXP_E_RANGE);
	oxp_tensor_size sz;
	assert_int_equal(oxp_tensor_size_get(f.t, &sz, &err), OXP_OK);
	assert_int_equal(sz.stored_count, 3);
	assert_int_equal(sz.stored_bytes, 4);
	fx_free(&f);

	/* too few strings */
	dims = 4;
	pbw_tensor_head(&f.b, &dims, 1, OXP_DT_STRING);
	pbw_str(&f.b, F_STRING, "a");
	fx_parse(&f);
	assert_int_equal(oxp_tensor_read_str(f.t, 0, 1, s, &err), OXP_E_STORAGE);
	assert_non_null(strstr(err.message, "1 strings"));
	assert_non_null(strstr(err.message, "need 4"));
	fx_free(&f);
}

/* ---------------------------------------------------------------------------------------
 * Mismatches: storage vs dims x dtype, fields a type may not use, ranges.
 */
static oxp_code read_first(const oxp_tensor *t, oxp_error *err)
{
	uint64_t b[2];
	return oxp_tensor_read_bits(t, NULL, 0, 0, 1, b, err);
}

static void test_raw_size_mismatch(void **state)
{
	(void)state;
	oxp_error err;
	fixture f = {0};
	uint8_t raw[32] = {0};
	int64_t dims[2] = {2, 3};
	for (int delta = -1; delta <= 1; delta++) {
		pbw_tensor_head(&f.b, dims, 2, OXP_DT_FLOAT16);
		pbw_bytes(&f.b, F_RAW, raw, (size_t)(12 + delta));
		fx_parse(&f);
		oxp_code want = delta == 0 ? OXP_OK : OXP_E_STORAGE;
		assert_int_equal(read_first(f.t, &err), want);
		oxp_tensor_size sz;
		assert_int_equal(oxp_tensor_size_get(f.t, &sz, &err), want);
		if (delta != 0) {
			char want_msg[80];
			snprintf(want_msg, sizeof(want_msg), "raw_data holds %d bytes; dims x FLOAT16 need 12",
			         12 + delta);
			assert_non_null(strstr(err.message, want_msg));
			assert_string_equal(oxp_code_name(err.code), "bad_storage");
		} else {
			assert_int_equal(sz.count, 6);
			assert_int_equal(sz.stored_count, 6);
			assert_int_equal(sz.stored_bytes, 12);
		}
		fx_free(&f);
	}
	/* odd INT4 count: 5 elements need 3 bytes; stored_count counts the unused slot */
	int64_t five = 5;
	pbw_tensor_head(&f.b, &five, 1, OXP_DT_INT4);
	pbw_bytes(&f.b, F_RAW, raw, 3);
	fx_parse(&f);
	oxp_tensor_size sz;
	assert_int_equal(oxp_tensor_size_get(f.t, &sz, &err), OXP_OK);
	assert_int_equal(sz.count, 5);
	assert_int_equal(sz.stored_count, 6);
	assert_int_equal(sz.stored_bytes, 3);
	fx_free(&f);
}

static void test_typed_count_mismatch(void **state)
{
	(void)state;
	oxp_error err;
	fixture f = {0};
	uint64_t v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	int64_t dims = 3;
	/* complex64 needs 6 floats for 3 elements */
	for (size_t n = 5; n <= 7; n++) {
		pbw_tensor_head(&f.b, &dims, 1, OXP_DT_COMPLEX64);
		pbw_packed_fixed(&f.b, F_FLOAT, v, n, 4);
		fx_parse(&f);
		assert_int_equal(read_first(f.t, &err), n == 6 ? OXP_OK : OXP_E_STORAGE);
		if (n != 6) {
			char want[80];
			snprintf(want, sizeof(want), "float_data holds %zu values; dims x COMPLEX64 need 6", n);
			assert_non_null(strstr(err.message, want));
		}
		fx_free(&f);
	}
	/* int64_data: packed varints counted, and too many */
	pbw_tensor_head(&f.b, &dims, 1, OXP_DT_INT64);
	pbw_packed_varints(&f.b, F_INT64, v, 2);
	pbw_int(&f.b, F_INT64, 300);
	pbw_int(&f.b, F_INT64, 301);
	fx_parse(&f);
	assert_int_equal(read_first(f.t, &err), OXP_E_STORAGE);
	assert_non_null(strstr(err.message, "int64_data holds 4 values"));
	fx_free(&f);
	/* INT4 in int32_data: 3 elements need 2 values (bytes) */
	pbw_tensor_head(&f.b, &dims, 1, OXP_DT_INT4);
	pbw_packed_varints(&f.b, F_INT32, v, 3);
	fx_parse(&f);
	assert_int_equal(read_first(f.t, &err), OXP_E_STORAGE);
	assert_non_null(strstr(err.message, "need 2"));
	fx_free(&f);
	/* size_get measures the typed field's bytes */
	pbw_tensor_head(&f.b, &dims, 1, OXP_DT_INT64);
	uint64_t big[3] = {1, 300, UINT64_MAX};
	pbw_packed_varints(&f.b, F_INT64, big, 3);
	fx_parse(&f);
	oxp_tensor_size sz;
	assert_int_equal(oxp_tensor_size_get(f.t, &sz, &err), OXP_OK);
	assert_int_equal(sz.stored_count, 3);
	assert_int_equal(sz.stored_bytes, 1 + 2 + 10);
	fx_free(&f);
}

static void test_wrong_places(void **state)
{
	(void)state;
	oxp_error err;
	fixture f = {0};
	int64_t dims = 2;
	uint64_t v[2] = {1, 2};
	uint8_t raw[8] = {0};

	/* FLOAT values in int64_data */
	pbw_tensor_head(&f.b, &dims, 1, OXP_DT_FLOAT);
	pbw_packed_varints(&f.b, F_INT64, v, 2);
	fx_parse(&f);
	assert_int_equal(read_first(f.t, &err), OXP_E_STORAGE);
	assert_non_null(strstr(err.message, "int64_data"));
	fx_free(&f);
	/* raw_data and float_data at once */
	pbw_tensor_head(&f.b, &dims, 1, OXP_DT_FLOAT);
	pbw_bytes(&f.b, F_RAW, raw, 8);
	pbw_packed_fixed(&f.b, F_FLOAT, v, 2, 4);
	fx_parse(&f);
	assert_int_equal(read_first(f.t, &err), OXP_E_STORAGE);
	assert_non_null(strstr(err.message, "both raw_data and float_data"));
	fx_free(&f);
	/* STRING in raw_data */
	pbw_tensor_head(&f.b, &dims, 1, OXP_DT_STRING);
	pbw_bytes(&f.b, F_RAW, raw, 2);
	fx_parse(&f);
	oxp_str s[1];
	assert_int_equal(oxp_tensor_read_str(f.t, 0, 1, s, &err), OXP_E_STORAGE);
	fx_free(&f);
	/* strings in an INT8 tensor */
	pbw_tensor_head(&f.b, &dims, 1, OXP_DT_INT8);
	pbw_str(&f.b, F_STRING, "x");
	pbw_str(&f.b, F_STRING, "y");
	fx_parse(&f);
	assert_int_equal(read_first(f.t, &err), OXP_E_STORAGE);
	fx_free(&f);
	/* nothing stored but 2 elements; nothing stored and 0 elements is fine */
	pbw_tensor_head(&f.b, &dims, 1, OXP_DT_FLOAT);
	fx_parse(&f);
	assert_int_equal(read_first(f.t, &err), OXP_E_STORAGE);
	assert_non_null(strstr(err.message, "2 elements but stores no values"));
	fx_free(&f);
	int64_t zero[2] = {3, 0};
	pbw_tensor_head(&f.b, zero, 2, OXP_DT_FLOAT);
	fx_parse(&f);
	double d[1];
	assert_int_equal(oxp_tensor_read_f64(f.t, NULL, 0, 0, 0, d, &err), OXP_OK);
	assert_int_equal(oxp_tensor_read_f64(f.t, NULL, 0, 0, 1, d, &err), OXP_E_RANGE);
	fx_free(&f);
	/* values out of range for the type in int32_data / uint64_data */
	uint64_t bad8[2] = {127, 128};
	pbw_tensor_head(&f.b, &dims, 1, OXP_DT_INT8);
	pbw_packed_varints(&f.b, F_INT32, bad8, 2);
	fx_parse(&f);
	int64_t gi[2];
	assert_int_equal(oxp_tensor_read_i64(f.t, NULL, 0, 0, 1, gi, &err), OXP_OK);
	assert_int_equal(oxp_tensor_read_i64(f.t, NULL, 0, 0, 2, gi, &err), OXP_E_STORAGE);
	assert_non_null(strstr(err.message, "int32_data[1] = 128 is outside -128..127"));
	fx_free(&f);
	uint64_t badf16[2] = {0x3c00, (uint64_t)-1};
	pbw_tensor_head(&f.b, &dims, 1, OXP_DT_FLOAT16);
	pbw_packed_varints(&f.b, F_INT32, badf16, 2);
	fx_parse(&f);
	assert_int_equal(oxp_tensor_read_f64(f.t, NULL, 0, 0, 2, d, &err), OXP_E_STORAGE);
	fx_free(&f);
	uint64_t bad32[2] = {1, (uint64_t)UINT32_MAX + 1};
	pbw_tensor_head(&f.b, &dims, 1, OXP_DT_UINT32);
	pbw_packed_varints(&f.b, F_UINT64, bad32, 2);
	fx_parse(&f);
	uint64_t gu[2];
	assert_int_equal(oxp_tensor_read_u64(f.t, NULL, 0, 0, 2, gu, &err), OXP_E_STORAGE);
	fx_free(&f);
	/* unknown / undefined data types */
	for (int32_t dt = 0; dt <= 99; dt += 99) {
		pbw_tensor_head(&f.b, &dims, 1, dt);
		pbw_bytes(&f.b, F_RAW, raw, 2);
		fx_parse(&f);
		assert_int_equal(read_first(f.t, &err), OXP_E_DTYPE);
		oxp_tensor_size sz;
		assert_int_equal(oxp_tensor_size_get(f.t, &sz, &err), OXP_E_DTYPE);
		fx_free(&f);
	}
}

static void test_ranges(void **state)
{
	(void)state;
	oxp_error err;
	fixture f = {0};
	int64_t dims = 4;
	int32_t raw[4] = {10, 20, 30, 40};
	pbw_tensor_head(&f.b, &dims, 1, OXP_DT_INT32);
	pbw_bytes(&f.b, F_RAW, raw, sizeof(raw));
	fx_parse(&f);
	int64_t gi[4] = {0};
	assert_int_equal(oxp_tensor_read_i64(f.t, NULL, 0, 2, 2, gi, &err), OXP_OK);
	assert_int_equal(gi[0], 30);
	assert_int_equal(gi[1], 40);
	assert_int_equal(oxp_tensor_read_i64(f.t, NULL, 0, 4, 0, gi, &err), OXP_OK);
	assert_int_equal(oxp_tensor_read_i64(f.t, NULL, 0, 3, 2, gi, &err), OXP_E_RANGE);
	assert_int_equal(oxp_tensor_read_i64(f.t, NULL, 0, 5, 0, gi, &err), OXP_E_RANGE);
	assert_int_equal(oxp_tensor_read_i64(f.t, NULL, 0, UINT64_MAX, 2, gi, &err), OXP_E_RANGE);
	assert_int_equal(oxp_tensor_read_i64(f.t, NULL, 0, 1, SIZE_MAX, gi, &err), OXP_E_RANGE);
	assert_string_equal(oxp_code_name(err.code), "out_of_range");
	/* bytes given for an inline tensor */
	uint8_t x[16];
	assert_int_equal(oxp_tensor_read_i64(f.t, x, 16, 0, 1, gi, &err), OXP_E_EXTERNAL);
	fx_free(&f);
}

/* dims whose product overflows: the parser refuses them, so the tensor is built by hand. */
static void test_count_overflow(void **state)
{
	(void)state;
	int64_t dims[2] = {(int64_t)1 << 62, 4};
	oxp_tensor t;
	memset(&t, 0, sizeof(t));
	t.data_type = OXP_DT_FLOAT;
	t.ndims = 2;
	t.dims = dims;
	t.has_raw_data = true;
	t.raw_data.p = "abcd";
	t.raw_data.len = 4;
	oxp_error err;
	double d[1];
	assert_int_equal(oxp_tensor_read_f64(&t, NULL, 0, 0, 1, d, &err), OXP_E_DIMS);
	/* a product that fits int64 but whose byte size does not fit 64 bits */
	dims[0] = (int64_t)1 << 61;
	dims[1] = 2;
	t.data_type = OXP_DT_COMPLEX128;
	assert_int_equal(oxp_tensor_read_f64(&t, NULL, 0, 0, 1, d, &err), OXP_E_STORAGE);
	assert_non_null(strstr(err.message, "need more than 2^64-1"));
	oxp_tensor_size sz;
	assert_int_equal(oxp_tensor_size_get(&t, &sz, &err), OXP_E_STORAGE);
	/* and negative dims */
	dims[0] = -1;
	assert_int_equal(oxp_tensor_read_f64(&t, NULL, 0, 0, 1, d, &err), OXP_E_DIMS);
}

/* A tensor whose message lies in two segments (protobuf merges repeated occurrences of a
 * singular message field): typed values come from both, in order. */
static void test_two_segments(void **state)
{
	(void)state;
	pbw a = {0}, b = {0};
	uint64_t v1[2] = {pbw_bits32(1.0f), pbw_bits32(2.0f)}, v2[1] = {pbw_bits32(3.0f)};
	pbw_packed_fixed(&a, F_FLOAT, v1, 2, 4);
	pbw_int(&b, F_DTYPE, OXP_DT_FLOAT); /* other fields in between are skipped */
	pbw_fixed32(&b, F_FLOAT, (uint32_t)v2[0]);
	int64_t dims = 3;
	oxp_segment segs[2] = {{a.p, a.len}, {b.p, b.len}};
	oxp_tensor t;
	memset(&t, 0, sizeof(t));
	t.data_type = OXP_DT_FLOAT;
	t.ndims = 1;
	t.dims = &dims;
	t.typed_fields = 1u << F_FLOAT;
	t.nsegments = 2;
	t.segments = segs;
	oxp_error err;
	double d[3];
	assert_int_equal(oxp_tensor_read_f64(&t, NULL, 0, 0, 3, d, &err), OXP_OK);
	assert_true(d[0] == 1.0 && d[1] == 2.0 && d[2] == 3.0);
	assert_int_equal(oxp_tensor_read_f64(&t, NULL, 0, 2, 1, d, &err), OXP_OK);
	assert_true(d[0] == 3.0);
	/* a truncated segment is a wire error, not a read past the end */
	segs[1].len -= 1;
	assert_int_not_equal(oxp_tensor_read_f64(&t, NULL, 0, 0, 3, d, &err), OXP_OK);
	pbw_free(&a);
	pbw_free(&b);
}

/* External tensors: values only with the caller's bytes, whose size is checked. */
static void test_external_bytes(void **state)
{
	(void)state;
	oxp_error err;
	fixture f = {0};
	int64_t dims = 3;
	pbw_tensor_head(&f.b, &dims, 1, OXP_DT_UINT16);
	pbw_entry(&f.b, F_EXT, "location", 8, "w.bin", 5);
	pbw_entry(&f.b, F_EXT, "length", 6, "6", 1);
	pbw_int(&f.b, F_LOC, 1);
	fx_parse(&f);
	uint64_t u[3];
	assert_int_equal(oxp_tensor_read_u64(f.t, NULL, 0, 0, 3, u, &err), OXP_E_EXTERNAL);
	const uint8_t bytes[7] = {1, 0, 2, 0, 0xff, 0xff, 9};
	assert_int_equal(oxp_tensor_read_u64(f.t, bytes, 6, 0, 3, u, &err), OXP_OK);
	assert_int_equal(u[2], 0xffff);
	assert_int_equal(oxp_tensor_read_u64(f.t, bytes, 7, 0, 3, u, &err), OXP_E_STORAGE);
	assert_non_null(strstr(err.message, "external data holds 7 bytes"));
	oxp_tensor_size sz;
	assert_int_equal(oxp_tensor_size_get(f.t, &sz, &err), OXP_OK);
	assert_int_equal(sz.stored_bytes, 6);
	assert_int_equal(sz.stored_count, 3);
	oxp_tensor_stats st;
	assert_int_equal(oxp_tensor_stats_get(f.t, bytes, 6, NULL, &st, &err), OXP_OK);
	assert_int_equal(st.umax, 0xffff);
	fx_free(&f);
}

/* ---------------------------------------------------------------------------------------
 * Statistics
 */
static void build_raw(fixture *f, int32_t dt, int64_t n, const void *raw, size_t nbytes)
{
	pbw_tensor_head(&f->b, &n, 1, dt);
	pbw_bytes(&f->b, F_RAW, raw, nbytes);
	fx_parse(f);
}

static void test_stats_float_known(void **state)
{
	(void)state;
	/* 0, -0, 1, 2, 3, 4 finite; NaN, +Inf, -Inf counted */
	float v[] = {1, 2, 3, 4, NAN, INFINITY, -INFINITY, 0.0f, -0.0f};
	uint16_t h[] = {0x3c00, 0x4000, 0x4200, 0x4400, 0x7e00, 0x7c00, 0xfc00, 0x0000, 0x8000};
	fixture f32t = {0}, f16t = {0};
	build_raw(&f32t, OXP_DT_FLOAT, 9, v, sizeof(v));
	build_raw(&f16t, OXP_DT_FLOAT16, 9, h, sizeof(h));
	const oxp_tensor *ts[2] = {f32t.t, f16t.t}; /* streamed, and counted by pattern */
	for (int k = 0; k < 2; k++) {
		uint64_t bins[4];
		oxp_stats_options opt = {4, bins, false, 0, 0};
		oxp_tensor_stats st;
		oxp_error err;
		assert_int_equal(oxp_tensor_stats_get(ts[k], NULL, 0, &opt, &st, &err), OXP_OK);
		assert_int_equal(st.count, 9);
		assert_int_equal(st.finite, 6);
		assert_int_equal(st.nan, 1);
		assert_int_equal(st.pos_inf, 1);
		assert_int_equal(st.neg_inf, 1);
		assert_int_equal(st.zeros, 2);
		assert_true(st.min == 0 && st.max == 4);
		assert_true(st.mean == 10.0 / 6);
		double m = 10.0 / 6, ss = 2 * m * m;
		for (int i = 1; i <= 4; i++)
			ss += (i - m) * (i - m);
		assert_true(fabs(st.std - sqrt(ss / 6)) < 1e-15);
		assert_false(st.is_int);
		assert_true(st.lo == 0 && st.hi == 4);
		/* bins of width 1 over [0, 4]: {0, -0}, {1}, {2}, {3, 4} */
		assert_int_equal(bins[0], 2);
		assert_int_equal(bins[1], 1);
		assert_int_equal(bins[2], 1);
		assert_int_equal(bins[3], 2);
		/* a given range: values outside go below/above */
		opt.has_range = true;
		opt.lo = 1.5;
		opt.hi = 3.5;
		opt.nbins = 2;
		assert_int_equal(oxp_tensor_stats_get(ts[k], NULL, 0, &opt, &st, &err), OXP_OK);
		assert_int_equal(st.below, 3);
		assert_int_equal(st.above, 1);
		assert_int_equal(bins[0], 1);
		assert_int_equal(bins[1], 1);
	}
	fx_free(&f32t);
	fx_free(&f16t);
}

/* Pattern counting (FLOAT16) and streaming (the same values as FLOAT) agree on random data;
 * raw_data and int32_data agree bit for bit. */
static void test_stats_pattern_vs_stream(void **state)
{
	(void)state;
	enum { N = 50001 };
	uint16_t *h = malloc(N * sizeof(*h));
	float *fv = malloc(N * sizeof(*fv));
	uint64_t *w = malloc(N * sizeof(*w));
	assert_non_null(h);
	assert_non_null(fv);
	assert_non_null(w);
	uint64_t s = 12345;
	for (int i = 0; i < N; i++) {
		s = s * 6364136223846793005u + 1442695040888963407u;
		h[i] = (uint16_t)(s >> 48);
		if (i % 5 == 0)
			h[i] = (uint16_t)(0x2000 + (s >> 56)); /* repeats */
		fv[i] = pbw_f32(oxp_f16_to_f32_bits(h[i]));
		w[i] = h[i];
	}
	fixture a = {0}, b = {0}, c = {0};
	build_raw(&a, OXP_DT_FLOAT16, N, h, N * 2);
	build_raw(&b, OXP_DT_FLOAT, N, fv, N * 4);
	int64_t n = N;
	pbw_tensor_head(&c.b, &n, 1, OXP_DT_FLOAT16);
	pbw_packed_varints(&c.b, F_INT32, w, N);
	fx_parse(&c);
	uint64_t ba[64], bb[64], bc[64];
	oxp_stats_options oa = {64, ba, false, 0, 0}, ob = {64, bb, false, 0, 0},
	                  oc = {64, bc, false, 0, 0};
	oxp_tensor_stats sa, sb, sc;
	oxp_error err;
	assert_int_equal(oxp_tensor_stats_get(a.t, NULL, 0, &oa, &sa, &err), OXP_OK);
	assert_int_equal(oxp_tensor_stats_get(b.t, NULL, 0, &ob, &sb, &err), OXP_OK);
	assert_int_equal(oxp_tensor_stats_get(c.t, NULL, 0, &oc, &sc, &err), OXP_OK);
	assert_memory_equal(&sa, &sc, sizeof(sa));
	assert_memory_equal(ba, bc, sizeof(ba));
	assert_int_equal(sa.finite, sb.finite);
	assert_int_equal(sa.nan, sb.nan);
	assert_int_equal(sa.pos_inf, sb.pos_inf);
	assert_int_equal(sa.neg_inf, sb.neg_inf);
	assert_int_equal(sa.zeros, sb.zeros);
	assert_true(sa.min == sb.min && sa.max == sb.max);
	assert_true(fabs(sa.mean - sb.mean) <= 1e-12 * fabs(sb.std));
	assert_true(fabs(sa.std - sb.std) <= 1e-12 * sb.std);
	assert_memory_equal(ba, bb, sizeof(ba));
	/* a naive count of the same */
	uint64_t nan = 0, zeros = 0;
	for (int i = 0; i < N; i++) {
		nan += isnan(fv[i]) != 0;
		zeros += fv[i] == 0;
	}
	assert_int_equal(sa.nan, nan);
	assert_int_equal(sa.zeros, zeros);
	fx_free(&a);
	fx_free(&b);
	fx_free(&c);
	free(h);
	free(fv);
	free(w);
}

/* The counting loops: with a histogram of one bin per value over [0, 2^bits), every
 * pattern's count comes back; data with runs, constants, odd tails. */
static void check_counts(int32_t dt, unsigned bits, const uint8_t *raw, size_t n)
{
	size_t npat = (size_t)1 << bits;
	uint64_t *bins = calloc(npat, sizeof(*bins)), *want = calloc(npat, sizeof(*want));
	assert_non_null(bins);
	assert_non_null(want);
	for (size_t i = 0; i < n; i++)
		want[bits == 8 ? raw[i] : (size_t)(raw[2 * i] | raw[2 * i + 1] << 8)]++;
	fixture f = {0};
	build_raw(&f, dt, (int64_t)n, raw, n * bits / 8);
	oxp_stats_options opt = {npat, bins, true, 0, (double)npat};
	oxp_tensor_stats st;
	oxp_error err;
	assert_int_equal(oxp_tensor_stats_get(f.t, NULL, 0, &opt, &st, &err), OXP_OK);
	assert_memory_equal(bins, want, npat * sizeof(*bins));
	assert_int_equal(st.finite, n);
	fx_free(&f);
	free(bins);
	free(want);
}

static void test_stats_counting_loops(void **state)
{
	(void)state;
	enum { N = 70003 }; /* beyond count16's 64Ki sample: both table layouts run */
	uint8_t *raw = malloc(2 * N);
	assert_non_null(raw);
	for (int shape = 0; shape < 5; shape++) {
		uint64_t s = 99;
		for (size_t i = 0; i < 2 * N; i++) {
			s = s * 6364136223846793005u + 1442695040888963407u;
			uint8_t r = (uint8_t)(s >> 56);
			switch (shape) {
			case 0: raw[i] = r; break;                          /* random */
			case 1: raw[i] = 7; break;                          /* constant */
			case 2: raw[i] = (uint8_t)(i / 1000); break;        /* long runs */
			case 3: raw[i] = (uint8_t)((i / 8) % 3); break;     /* short runs */
			default: raw[i] = i % 97 < 90 ? 0 : r; break;      /* mostly zero */
			}
		}
		for (size_t n = N - 3; n <= N; n++) {
			check_counts(OXP_DT_UINT8, 8, raw, n);
			check_counts(OXP_DT_UINT16, 16, raw, n);
		}
	}
	free(raw);
}

static void test_stats_integers_exact(void **state)
{
	(void)state;
	oxp_error err;
	oxp_tensor_stats st;
	fixture f = {0};
	int64_t v[] = {INT64_MIN, INT64_MAX, 0, -1};
	build_raw(&f, OXP_DT_INT64, 4, v, sizeof(v));
	assert_int_equal(oxp_tensor_stats_get(f.t, NULL, 0, NULL, &st, &err), OXP_OK);
	assert_true(st.is_int);
	assert_int_equal(st.imin, INT64_MIN);
	assert_int_equal(st.imax, INT64_MAX);
	assert_true(st.mean == -0.5); /* exact sum -2, not a float rounding */
	assert_int_equal(st.zeros, 1);
	fx_free(&f);

	uint64_t u[] = {UINT64_MAX, UINT64_MAX - 1};
	build_raw(&f, OXP_DT_UINT64, 2, u, sizeof(u));
	assert_int_equal(oxp_tensor_stats_get(f.t, NULL, 0, NULL, &st, &err), OXP_OK);
	assert_int_equal(st.umin, UINT64_MAX - 1);
	assert_int_equal(st.umax, UINT64_MAX);
	assert_true(st.mean == 18446744073709551614.5);
	fx_free(&f);

	uint8_t b[] = {1, 0, 1, 1};
	build_raw(&f, OXP_DT_BOOL, 4, b, 4);
	assert_int_equal(oxp_tensor_stats_get(f.t, NULL, 0, NULL, &st, &err), OXP_OK);
	assert_true(st.mean == 0.75);
	assert_int_equal(st.zeros, 1);
	assert_int_equal(st.imax, 1);
	assert_int_equal(st.umin, 0);
	fx_free(&f);

	/* INT4, odd count: -8, 7, -1, 3, 0 (the last byte's high nibble, 0xf, is not one) */
	uint8_t p[] = {0x78, 0x3f, 0xf0};
	build_raw(&f, OXP_DT_INT4, 5, p, 3);
	uint64_t bins[3];
	oxp_stats_options opt = {3, bins, false, 0, 0};
	assert_int_equal(oxp_tensor_stats_get(f.t, NULL, 0, &opt, &st, &err), OXP_OK);
	assert_int_equal(st.finite, 5);
	assert_int_equal(st.imin, -8);
	assert_int_equal(st.imax, 7);
	assert_true(st.mean == 0.2);
	assert_int_equal(st.zeros, 1);
	/* bins over [-8, 7], width 5: [-8,-3) {-8}, [-3,2) {-1,0}, [2,7] {3,7} */
	assert_int_equal(bins[0], 1);
	assert_int_equal(bins[1], 2);
	assert_int_equal(bins[2], 2);
	fx_free(&f);

	/* int32 streamed: -3, 5, 5 with typed int32_data */
	int64_t n = 3;
	uint64_t w[] = {(uint64_t)-3, 5, 5};
	pbw_tensor_head(&f.b, &n, 1, OXP_DT_INT32);
	pbw_packed_varints(&f.b, F_INT32, w, 3);
	fx_parse(&f);
	assert_int_equal(oxp_tensor_stats_get(f.t, NULL, 0, NULL, &st, &err), OXP_OK);
	assert_int_equal(st.imin, -3);
	assert_true(st.mean == 7.0 / 3);
	fx_free(&f);
}

static void test_stats_complex_and_edges(void **state)
{
	(void)state;
	oxp_error err;
	oxp_tensor_stats st;
	fixture f = {0};
	float c[] = {3, 4, NAN, 0, INFINITY, 1, 0, -0.0f};
	build_raw(&f, OXP_DT_COMPLEX64, 4, c, sizeof(c));
	assert_int_equal(oxp_tensor_stats_get(f.t, NULL, 0, NULL, &st, &err), OXP_OK);
	assert_int_equal(st.finite, 2);
	assert_int_equal(st.nan, 1);
	assert_int_equal(st.pos_inf, 1);
	assert_int_equal(st.zeros, 1);
	assert_true(st.max == 5 && st.mean == 2.5 && st.std == 2.5);
	fx_free(&f);

	/* all equal: range [v - 0.5, v + 0.5], all in the middle bin */
	double d[] = {2, 2, 2};
	build_raw(&f, OXP_DT_DOUBLE, 3, d, sizeof(d));
	uint64_t bins[5];
	oxp_stats_options opt = {5, bins, false, 0, 0};
	assert_int_equal(oxp_tensor_stats_get(f.t, NULL, 0, &opt, &st, &err), OXP_OK);
	assert_true(st.lo == 1.5 && st.hi == 2.5 && st.std == 0);
	assert_int_equal(bins[2], 3);
	fx_free(&f);
	/* all equal and so large that v +- 0.5 == v: still the middle bin */
	double big[] = {1e300, 1e300};
	build_raw(&f, OXP_DT_DOUBLE, 2, big, sizeof(big));
	assert_int_equal(oxp_tensor_stats_get(f.t, NULL, 0, &opt, &st, &err), OXP_OK);
	assert_true(st.lo == 1e300 && st.hi == 1e300);
	assert_int_equal(bins[2], 2);
	assert_int_equal(bins[0] + bins[1] + bins[3] + bins[4], 0);
	fx_free(&f);
	/* sums and squares that overflow or underflow plain doubles */
	double huge[] = {1e308, 1.7e308, -1e308};
	build_raw(&f, OXP_DT_DOUBLE, 3, huge, sizeof(huge));
	assert_int_equal(oxp_tensor_stats_get(f.t, NULL, 0, NULL, &st, &err), OXP_OK);
	double hm = 1e308 / 3 + 1.7e308 / 3 - 1e308 / 3;
	assert_true(fabs(st.mean - hm) < 1e-15 * 1e308);
	double hs = sqrt((pow(1 - hm / 1e308, 2) + pow(1.7 - hm / 1e308, 2) +
	                  pow(-1 - hm / 1e308, 2)) / 3) * 1e308;
	assert_true(isfinite(st.std) && fabs(st.std - hs) < 1e-12 * hs);
	fx_free(&f);
	double tiny[] = {1e-310, 3e-310, 2e-310};
	build_raw(&f, OXP_DT_DOUBLE, 3, tiny, sizeof(tiny));
	assert_int_equal(oxp_tensor_stats_get(f.t, NULL, 0, NULL, &st, &err), OXP_OK);
	assert_true(fabs(st.mean - 2e-310) < 1e-323);
	assert_true(fabs(st.std - sqrt(2.0 / 3) * 1e-310) < 1e-323); /* squares would be 0 */
	/* extreme range: hi - lo overflows, the bins are still right */
	double e[] = {-1.7e308, 1.7e308, 0};
	fx_free(&f);
	build_raw(&f, OXP_DT_DOUBLE, 3, e, sizeof(e));
	opt.nbins = 2;
	assert_int_equal(oxp_tensor_stats_get(f.t, NULL, 0, &opt, &st, &err), OXP_OK);
	assert_int_equal(bins[0], 1);
	assert_int_equal(bins[1], 2);
	/* bad options */
	opt.nbins = OXP_STATS_MAX_BINS + 1;
	assert_int_equal(oxp_tensor_stats_get(f.t, NULL, 0, &opt, &st, &err), OXP_E_RANGE);
	opt.nbins = 2;
	opt.bins = NULL;
	assert_int_equal(oxp_tensor_stats_get(f.t, NULL, 0, &opt, &st, &err), OXP_E_RANGE);
	opt.bins = bins;
	opt.has_range = true;
	opt.lo = 1;
	opt.hi = 1;
	assert_int_equal(oxp_tensor_stats_get(f.t, NULL, 0, &opt, &st, &err), OXP_E_RANGE);
	opt.hi = NAN;
	assert_int_equal(oxp_tensor_stats_get(f.t, NULL, 0, &opt, &st, &err), OXP_E_RANGE);
	fx_free(&f);

	/* empty tensor; only NaN */
	int64_t zero = 0;
	pbw_tensor_head(&f.b, &zero, 1, OXP_DT_FLOAT16);
	fx_parse(&f);
	assert_int_equal(oxp_tensor_stats_get(f.t, NULL, 0, NULL, &st, &err), OXP_OK);
	assert_int_equal(st.count, 0);
	assert_true(isnan(st.min) && isnan(st.mean) && isnan(st.std));
	fx_free(&f);
	uint16_t nan16[] = {0x7fc0, 0xff81}; /* bfloat16 NaNs */
	build_raw(&f, OXP_DT_BFLOAT16, 2, nan16, sizeof(nan16));
	opt.has_range = false;
	assert_int_equal(oxp_tensor_stats_get(f.t, NULL, 0, &opt, &st, &err), OXP_OK);
	assert_int_equal(st.nan, 2);
	assert_true(isnan(st.lo) && isnan(st.max));
	assert_int_equal(bins[0] + bins[1], 0);
	fx_free(&f);

	/* strings have no statistics */
	int64_t one = 1;
	pbw_tensor_head(&f.b, &one, 1, OXP_DT_STRING);
	pbw_str(&f.b, F_STRING, "s");
	fx_parse(&f);
	assert_int_equal(oxp_tensor_stats_get(f.t, NULL, 0, NULL, &st, &err), OXP_E_DTYPE);
	fx_free(&f);
}

/* Hostile bytes: mutations of valid tensors of every type and storage.  Whatever the
 * parser accepts, every reader and the statistics must handle without reading out of
 * bounds (ASan/UBSan builds check that) and must either succeed or fail with a code. */
static void exercise(const oxp_tensor *t)
{
	oxp_error err;
	oxp_tensor_size sz;
	uint64_t bits[64];
	oxp_scalar sc[32];
	double d[32];
	oxp_str str[32];
	uint64_t bins[8];
	oxp_stats_options opt = {8, bins, false, 0, 0};
	oxp_tensor_stats st;
	oxp_code rc = oxp_tensor_size_get(t, &sz, &err);
	assert_int_equal(rc, err.code);
	size_t n = rc == OXP_OK && sz.count < 32 ? (size_t)sz.count : 32;
	rc = oxp_tensor_read_bits(t, NULL, 0, 0, n, bits, &err);
	assert_int_equal(rc, err.code);
	rc = oxp_tensor_read(t, NULL, 0, 0, n, sc, &err);
	assert_int_equal(rc, err.code);
	(void)oxp_tensor_read_f64(t, NULL, 0, n / 2, n - n / 2, d, &err);
	(void)oxp_tensor_read_str(t, 0, n, str, &err);
	rc = oxp_tensor_stats_get(t, NULL, 0, &opt, &st, &err);
	assert_int_equal(rc, err.code);
	if (rc == OXP_OK)
		assert_int_equal(st.finite + st.nan + st.pos_inf + st.neg_inf, st.count);
}

static void test_mutations(void **state)
{
	(void)state;
	uint64_t s = 4242;
	for (size_t k = 0; k < sizeof(samples) / sizeof(samples[0]); k++) {
		const sample *sm = &samples[k];
		int64_t dims[2] = {1, (int64_t)(sm->n / parts_of(sm->dt))};
		uint64_t vals[16];
		size_t nvals;
		uint32_t field = typed_of(sm, vals, &nvals);
		for (int form = 0; form < 2; form++) {
			pbw base = {0};
			pbw_tensor_head(&base, dims, 2, sm->dt);
			if (form == 0) {
				uint8_t raw[64];
				pbw_bytes(&base, F_RAW, raw, raw_of(sm, raw));
			} else {
				put_typed(&base, field, vals, nvals, 2);
			}
			for (int trial = 0; trial < 300; trial++) {
				pbw b = {0};
				pbw_raw(&b, base.p, base.len);
				s = s * 6364136223846793005u + 1442695040888963407u;
				size_t at = (size_t)(s >> 33) % b.len;
				switch ((s >> 20) & 3) {
				case 0: b.p[at] ^= (uint8_t)(1u << ((s >> 8) & 7)); break;
				case 1: b.p[at] = (uint8_t)(s >> 40); break;
				case 2: b.len = at; break;                       /* truncate */
				default: b.p[at] = 0xff; break;
				}
				oxp_error err;
				oxp_model *m = pbw_parse(&b, &err);
				if (m != NULL) {
					exercise(oxp_model_tensor_get(m));
					oxp_model_free(m);
				}
				pbw_free(&b);
			}
			pbw_free(&base);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_dtype_raw_and_typed),
	    cmocka_unit_test(test_float_values),
	    cmocka_unit_test(test_int_exact),
	    cmocka_unit_test(test_bool_and_strings),
	    cmocka_unit_test(test_raw_size_mismatch),
	    cmocka_unit_test(test_typed_count_mismatch),
	    cmocka_unit_test(test_wrong_places),
	    cmocka_unit_test(test_ranges),
	    cmocka_unit_test(test_count_overflow),
	    cmocka_unit_test(test_two_segments),
	    cmocka_unit_test(test_external_bytes),
	    cmocka_unit_test(test_stats_float_known),
	    cmocka_unit_test(test_stats_pattern_vs_stream),
	    cmocka_unit_test(test_stats_counting_loops),
	    cmocka_unit_test(test_stats_integers_exact),
	    cmocka_unit_test(test_stats_complex_and_edges),
	    cmocka_unit_test(test_mutations),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
