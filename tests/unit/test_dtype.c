/*
 * test_dtype.c — the scalar conversions of parser/dtype.c against references computed
 * here from the format definitions.
 *
 * The decoder works on bits (integer significand, exponent by counting leading zeros); the
 * references below are written from each format's definition with ldexp() on doubles:
 * value = (-1)^s * 2^(e - bias) * (1 + m / 2^mbits) for normal numbers,
 *         (-1)^s * 2^(1 - bias) * (m / 2^mbits)     for subnormals.
 * Every pattern is checked: 65,536 for FLOAT16 and BFLOAT16, 256 for each FLOAT8, 16 for
 * FLOAT4E2M1.  Sub-byte packing (INT4/UINT4/INT2/UINT2, FLOAT4E2M1) is checked through
 * tensors with odd counts.
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

/* The reference: one small-float format from its definition.  special() decides NaN/Inf
 * first; everything else is finite. */
typedef struct fmt {
	int32_t dtype;
	unsigned ebits, mbits;
	int bias;
	unsigned total; /* bits of a pattern */
} fmt;

/* Kinds a pattern can have. */
enum { FINITE, POS_INF, NEG_INF, IS_NAN };

/* What the ONNX/OCP definition says about special patterns of each 8/4-bit format. */
static int ref_special(int32_t dt, unsigned v)
{
	switch (dt) {
	case OXP_DT_FLOAT8E4M3FN:
		return (v & 0x7f) == 0x7f ? IS_NAN : FINITE; /* no Inf */
	case OXP_DT_FLOAT8E4M3FNUZ:
	case OXP_DT_FLOAT8E5M2FNUZ:
		return v == 0x80 ? IS_NAN : FINITE; /* one NaN, no Inf, no -0 */
	case OXP_DT_FLOAT8E5M2:
		if ((v & 0x7f) == 0x7c)
			return v & 0x80 ? NEG_INF : POS_INF;
		return (v & 0x7c) == 0x7c ? IS_NAN : FINITE;
	case OXP_DT_FLOAT8E8M0:
		return v == 0xff ? IS_NAN : FINITE;
	default:
		return FINITE; /* FLOAT4E2M1: all finite */
	}
}

static double ref_value(const fmt *f, unsigned v)
{
	if (f->dtype == OXP_DT_FLOAT8E8M0)
		return ldexp(1.0, (int)v - 127);
	unsigned s = v >> (f->ebits + f->mbits) & 1;
	unsigned e = (v >> f->mbits) & ((1u << f->ebits) - 1);
	unsigned m = v & ((1u << f->mbits) - 1);
	double frac = (double)m / (double)(1u << f->mbits);
	double x = e == 0 ? ldexp(frac, 1 - f->bias) : ldexp(1.0 + frac, (int)e - f->bias);
	return s ? -x : x;
}

static const fmt formats[] = {
    {OXP_DT_FLOAT8E4M3FN, 4, 3, 7, 8},   {OXP_DT_FLOAT8E4M3FNUZ, 4, 3, 8, 8},
    {OXP_DT_FLOAT8E5M2, 5, 2, 15, 8},    {OXP_DT_FLOAT8E5M2FNUZ, 5, 2, 16, 8},
    {OXP_DT_FLOAT8E8M0, 8, 0, 127, 8},   {OXP_DT_FLOAT4E2M1, 2, 1, 1, 4},
};

static void check_small_format(const fmt *f)
{
	unsigned n = 1u << f->total;
	unsigned nan = 0, inf = 0, negzero = 0;
	for (unsigned v = 0; v < n; v++) {
		uint32_t bits = oxp_f8_to_f32_bits(f->dtype, (uint8_t)v);
		float got = pbw_f32(bits);
		int kind = ref_special(f->dtype, v);
		if (kind == IS_NAN) {
			nan++;
			assert_true(isnan(got));
			/* payloads: E5M2 keeps its 2 mantissa bits and sign, E4M3FN its 111 and sign,
			 * the FNUZ types and E8M0 give the float quiet NaN */
			uint32_t want = 0x7fc00000u;
			if (f->dtype == OXP_DT_FLOAT8E5M2)
				want = (uint32_t)(v >> 7) << 31 | 0x7f800000u | (uint32_t)(v & 3) << 21;
			else if (f->dtype == OXP_DT_FLOAT8E4M3FN)
				want = (uint32_t)(v >> 7) << 31 | 0x7ff00000u;
			assert_int_equal(bits, want);
			continue;
		}
		if (kind == POS_INF || kind == NEG_INF) {
			inf++;
			assert_true(isinf(got));
			assert_int_equal(signbit(got) != 0, kind == NEG_INF);
			continue;
		}
		double want = ref_value(f, v);
		if ((double)got != want) {
			fprintf(stderr, "%s pattern 0x%02x: got %.17g want %.17g\n",
			        oxp_dtype_name(f->dtype), v, (double)got, want);
			fail();
		}
		if (want == 0) {
			bool neg = f->dtype != OXP_DT_FLOAT8E8M0 && (v >> (f->total - 1)) != 0;
			assert_int_equal(signbit(got) != 0, neg);
			negzero += neg;
		}
	}
	switch (f->dtype) {
	case OXP_DT_FLOAT8E4M3FN:
		assert_int_equal(nan, 2); /* 0x7f, 0xff */
		assert_int_equal(inf, 0);
		assert_int_equal(negzero, 1);
		assert_true((double)pbw_f32(oxp_f8_to_f32_bits(f->dtype, 0x7e)) == 448.0);
		assert_true((double)pbw_f32(oxp_f8_to_f32_bits(f->dtype, 0x01)) == ldexp(1, -9));
		break;
	case OXP_DT_FLOAT8E4M3FNUZ:
		assert_int_equal(nan, 1);
		assert_int_equal(negzero, 0);
		assert_true((double)pbw_f32(oxp_f8_to_f32_bits(f->dtype, 0x7f)) == 240.0);
		assert_true((double)pbw_f32(oxp_f8_to_f32_bits(f->dtype, 0x01)) == ldexp(1, -10));
		break;
	case OXP_DT_FLOAT8E5M2:
		assert_int_equal(nan, 6);
		assert_int_equal(inf, 2);
		assert_int_equal(negzero, 1);
		assert_true((double)pbw_f32(oxp_f8_to_f32_bits(f->dtype, 0x7b)) == 57344.0);
		assert_true((double)pbw_f32(oxp_f8_to_f32_bits(f->dtype, 0x01)) == ldexp(1, -16));
		break;
	case OXP_DT_FLOAT8E5M2FNUZ:
		assert_int_equal(nan, 1);
		assert_int_equal(negzero, 0);
		assert_true((double)pbw_f32(oxp_f8_to_f32_bits(f->dtype, 0x7f)) == 57344.0);
		assert_true((double)pbw_f32(oxp_f8_to_f32_bits(f->dtype, 0x01)) == ldexp(1, -17));
		break;
	case OXP_DT_FLOAT8E8M0:
		assert_int_equal(nan, 1);
		assert_true((double)pbw_f32(oxp_f8_to_f32_bits(f->dtype, 0)) == ldexp(1, -127));
		assert_true((double)pbw_f32(oxp_f8_to_f32_bits(f->dtype, 127)) == 1.0);
		assert_true((double)pbw_f32(oxp_f8_to_f32_bits(f->dtype, 254)) == ldexp(1, 127));
		break;
	default: {
		static const double e2m1[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
		for (unsigned v = 0; v < 16; v++)
			assert_true((double)pbw_f32(oxp_f8_to_f32_bits(f->dtype, (uint8_t)v)) ==
			            (v & 8 ? -e2m1[v & 7] : e2m1[v & 7]));
		assert_int_equal(nan + inf, 0);
		/* only the low 4 bits count */
		assert_int_equal(oxp_f8_to_f32_bits(f->dtype, 0xf3), oxp_f8_to_f32_bits(f->dtype, 3));
	}
	}
}

static void test_float8_and_float4(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		check_small_format(&formats[i]);
	assert_int_equal(oxp_f8_to_f32_bits(OXP_DT_FLOAT, 1), 0x7fc00000u);
}

static void test_float16_all(void **state)
{
	(void)state;
	unsigned nan = 0, sub = 0;
	for (unsigned h = 0; h < 65536; h++) {
		uint32_t bits = oxp_f16_to_f32_bits((uint16_t)h);
		float got = pbw_f32(bits);
		unsigned s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
		if (e == 31) {
			/* Inf, or NaN with the 10 payload bits at the top of the float mantissa */
			assert_int_equal(bits, (uint32_t)s << 31 | 0x7f800000u | (uint32_t)m << 13);
			assert_true(m ? isnan(got) : isinf(got));
			nan += m != 0;
			continue;
		}
		double want = e == 0 ? ldexp(m / 1024.0, -14) : ldexp(1.0 + m / 1024.0, (int)e - 15);
		want = s ? -want : want;
		sub += e == 0 && m != 0;
		if ((double)got != want || (signbit(got) != 0) != (s != 0)) {
			fprintf(stderr, "f16 0x%04x: got %.17g want %.17g\n", h, (double)got, want);
			fail();
		}
	}
	assert_int_equal(nan, 2 * 1023);
	assert_int_equal(sub, 2 * 1023);
	/* a few anchors */
	assert_int_equal(oxp_f16_to_f32_bits(0x3c00), 0x3f800000u);    /* 1.0 */
	assert_int_equal(oxp_f16_to_f32_bits(0x8000), 0x80000000u);    /* -0 */
	assert_int_equal(oxp_f16_to_f32_bits(0x0001), 0x33800000u);    /* 2^-24 */
	assert_int_equal(oxp_f16_to_f32_bits(0x7bff), 0x477fe000u);    /* 65504 */
	assert_int_equal(oxp_f16_to_f32_bits(0xfc00), 0xff800000u);    /* -Inf */
	assert_int_equal(oxp_f16_to_f32_bits(0x7c01), 0x7f802000u);    /* signalling NaN */
	assert_int_equal(oxp_f16_to_f32_bits(0xfe00), 0xffc00000u);    /* -qNaN */
}

static void test_bfloat16_all(void **state)
{
	(void)state;
	for (unsigned h = 0; h < 65536; h++) {
		uint32_t bits = oxp_bf16_to_f32_bits((uint16_t)h);
		float got = pbw_f32(bits);
		unsigned s = h >> 15, e = (h >> 7) & 255, m = h & 127;
		if (e == 255) {
			assert_true(m ? isnan(got) : isinf(got));
			assert_int_equal(bits, (uint32_t)h << 16); /* payload and sign kept */
			continue;
		}
		double want = e == 0 ? ldexp(m / 128.0, -126) : ldexp(1.0 + m / 128.0, (int)e - 127);
		want = s ? -want : want;
		if ((double)got != want || (signbit(got) != 0) != (s != 0)) {
			fprintf(stderr, "bf16 0x%04x: got %.17g want %.17g\n", h, (double)got, want);
			fail();
		}
	}
}

/* oxp_bits_to_f64 agrees with the float conversions and sign-extends integers. */
static void test_bits_to_f64(void **state)
{
	(void)state;
	for (unsigned h = 0; h < 65536; h += 7) {
		double d = oxp_bits_to_f64(OXP_DT_FLOAT16, h);
		double want = (double)pbw_f32(oxp_f16_to_f32_bits((uint16_t)h));
		assert_true(d == want || (isnan(d) && isnan(want)));
	}
	assert_true(oxp_bits_to_f64(OXP_DT_INT4, 0xf) == -1.0);
	assert_true(oxp_bits_to_f64(OXP_DT_INT4, 0x8) == -8.0);
	assert_true(oxp_bits_to_f64(OXP_DT_INT4, 0x7) == 7.0);
	assert_true(oxp_bits_to_f64(OXP_DT_UINT4, 0xf) == 15.0);
	assert_true(oxp_bits_to_f64(OXP_DT_INT2, 0x2) == -2.0);
	assert_true(oxp_bits_to_f64(OXP_DT_UINT2, 0x3) == 3.0);
	assert_true(oxp_bits_to_f64(OXP_DT_INT8, 0x80) == -128.0);
	assert_true(oxp_bits_to_f64(OXP_DT_INT16, 0xffff) == -1.0);
	assert_true(oxp_bits_to_f64(OXP_DT_INT32, 0x80000000u) == -2147483648.0);
	assert_true(oxp_bits_to_f64(OXP_DT_INT64, UINT64_MAX) == -1.0);
	assert_true(oxp_bits_to_f64(OXP_DT_UINT64, UINT64_MAX) == 18446744073709551615.0);
	assert_true(oxp_bits_to_f64(OXP_DT_BOOL, 2) == 1.0);
	assert_true(oxp_bits_to_f64(OXP_DT_DOUBLE, 0x3ff0000000000000u) == 1.0);
	assert_true(isnan(oxp_bits_to_f64(OXP_DT_STRING, 0)));
	assert_true(isnan(oxp_bits_to_f64(99, 0)));
}

/* oxp_dtype_digits: "%.*g" of every finite value reads back nearer to that value than to
 * any other value of the type. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void check_digits(int32_t dt, unsigned npatterns)
{
	double *v = malloc(npatterns * sizeof(double));
	assert_non_null(v);
	size_t n = 0;
	for (unsigned p = 0; p < npatterns; p++) {
		double d = oxp_bits_to_f64(dt, p);
		if (isfinite(d) && !(d == 0 && signbit(d)))
			v[n++] = d;
	}
	qsort(v, n, sizeof(double), cmp_double);
	int digits = (int)oxp_dtype_digits(dt);
	assert_true(digits > 0);
	for (size_t i = 0; i < n; i++) {
		char buf[64];
		snprintf(buf, sizeof(buf), "%.*g", digits, v[i]);
		double back = strtod(buf, NULL);
		double err = fabs(back - v[i]);
		if ((i > 0 && !(err < fabs(back - v[i - 1]))) ||
		    (i + 1 < n && !(err < fabs(back - v[i + 1])))) {
			fprintf(stderr, "%s: %.17g printed %s is not nearest\n", oxp_dtype_name(dt),
			        v[i], buf);
			fail();
		}
	}
	free(v);
}

static void test_digits(void **state)
{
	(void)state;
	check_digits(OXP_DT_FLOAT16, 65536);
	check_digits(OXP_DT_BFLOAT16, 65536);
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		check_digits(formats[i].dtype, 1u << formats[i].total);
	assert_int_equal(oxp_dtype_digits(OXP_DT_FLOAT), 9);
	assert_int_equal(oxp_dtype_digits(OXP_DT_DOUBLE), 17);
	assert_int_equal(oxp_dtype_digits(OXP_DT_INT32), 0);
}

static void test_classes(void **state)
{
	(void)state;
	static const struct {
		int32_t dt;
		oxp_value_class c;
	} want[] = {
	    {OXP_DT_FLOAT, OXP_VC_FLOAT},         {OXP_DT_FLOAT16, OXP_VC_FLOAT},
	    {OXP_DT_FLOAT8E8M0, OXP_VC_FLOAT},    {OXP_DT_FLOAT4E2M1, OXP_VC_FLOAT},
	    {OXP_DT_INT4, OXP_VC_INT},            {OXP_DT_INT64, OXP_VC_INT},
	    {OXP_DT_UINT2, OXP_VC_UINT},          {OXP_DT_UINT64, OXP_VC_UINT},
	    {OXP_DT_BOOL, OXP_VC_BOOL},           {OXP_DT_COMPLEX128, OXP_VC_COMPLEX},
	    {OXP_DT_STRING, OXP_VC_STRING},       {OXP_DT_UNDEFINED, OXP_VC_NONE},
	    {OXP_DT__COUNT, OXP_VC_NONE},         {-1, OXP_VC_NONE},
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_int_equal(oxp_dtype_class(want[i].dt), want[i].c);
	assert_string_equal(oxp_value_class_name(OXP_VC_COMPLEX), "complex");
	assert_string_equal(oxp_value_class_name((oxp_value_class)42), "none");
	/* every known type has a class */
	for (int32_t dt = 1; dt < OXP_DT__COUNT; dt++)
		assert_int_not_equal(oxp_dtype_class(dt), OXP_VC_NONE);
}

/* ---------------------------------------------------------------------------------------
 * Sub-byte packing through tensors: element i of a packed type sits in byte i / per at bit
 * (i % per) * bits, low bits first; odd counts leave the high bits of the last byte unused.
 */
static void check_packed(int32_t dt, unsigned bits, bool int32_field, int64_t count)
{
	unsigned per = 8 / bits;
	size_t nbytes = (size_t)(count / per + (count % per != 0));
	uint8_t raw[65];
	uint64_t words[65];
	assert_true(nbytes < sizeof(raw)); /* one more for the "too many" case below */
	for (size_t i = 0; i <= nbytes; i++) {
		raw[i] = (uint8_t)(0x5a ^ (i * 37)); /* every nibble value appears */
		words[i] = raw[i];
	}
	pbw b = {0};
	pbw_tensor_head(&b, &count, 1, dt);
	if (int32_field)
		pbw_packed_varints(&b, 5, words, nbytes);
	else
		pbw_bytes(&b, 9, raw, nbytes);
	oxp_error err;
	oxp_model *m = pbw_parse(&b, &err);
	assert_non_null(m);
	const oxp_tensor *t = oxp_model_tensor_get(m);
	uint64_t got[256];
	double f[256];
	assert_int_equal(oxp_tensor_read_bits(t, NULL, 0, 0, (size_t)count, got, &err), OXP_OK);
	assert_int_equal(oxp_tensor_read_f64(t, NULL, 0, 0, (size_t)count, f, &err), OXP_OK);
	for (int64_t i = 0; i < count; i++) {
		unsigned byte = raw[i / per];
		uint64_t want = (byte >> ((unsigned)(i % per) * bits)) & ((1u << bits) - 1);
		assert_int_equal(got[i], want);
		double wv;
		if (dt == OXP_DT_FLOAT4E2M1)
			wv = (double)pbw_f32(oxp_f8_to_f32_bits(dt, (uint8_t)want));
		else if (dt == OXP_DT_INT4 || dt == OXP_DT_INT2)
			wv = want >= (1u << (bits - 1)) ? (double)want - (double)(1u << bits) : (double)want;
		else
			wv = (double)want;
		assert_true(f[i] == wv);
	}
	/* an element read alone, from the middle, gives the same */
	if (count > 2) {
		uint64_t one;
		assert_int_equal(oxp_tensor_read_bits(t, NULL, 0, (uint64_t)count - 2, 1, &one, &err),
		                 OXP_OK);
		assert_int_equal(one, got[count - 2]);
	}
	/* the count is checked in bytes: one byte too many or too few is refused */
	oxp_model_free(m);
	pbw_free(&b);
	for (int delta = -1; delta <= 1; delta += 2) {
		if (nbytes == 0 && delta < 0)
			continue;
		pbw c = {0};
		pbw_tensor_head(&c, &count, 1, dt);
		if (int32_field)
			pbw_packed_varints(&c, 5, words, (size_t)((int)nbytes + delta));
		else
			pbw_bytes(&c, 9, raw, (size_t)((int)nbytes + delta));
		m = pbw_parse(&c, &err);
		assert_non_null(m);
		assert_int_equal(oxp_tensor_read_bits(oxp_model_tensor_get(m), NULL, 0, 0, 1, got, &err),
		                 OXP_E_STORAGE);
		oxp_model_free(m);
		pbw_free(&c);
	}
}

static void test_subbyte_packing(void **state)
{
	(void)state;
	static const struct {
		int32_t dt;
		unsigned bits;
	} types[] = {{OXP_DT_INT4, 4},  {OXP_DT_UINT4, 4}, {OXP_DT_FLOAT4E2M1, 4},
	             {OXP_DT_INT2, 2},  {OXP_DT_UINT2, 2}};
	static const int64_t counts[] = {1, 2, 3, 5, 7, 8, 13, 64, 127};
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		for (size_t j = 0; j < sizeof(counts) / sizeof(counts[0]); j++)
			for (int field = 0; field < 2; field++)
				check_packed(types[i].dt, types[i].bits, field, counts[j]);
}

/* INT4 -8..7 and INT2 -2..1 read exactly as int64; UINT4 as uint64. */
static void test_subbyte_ints(void **state)
{
	(void)state;
	uint8_t raw[] = {0x98, 0xba, 0xdc, 0xfe, 0x10, 0x32, 0x54, 0x76}; /* -8..7 */
	int64_t dims = 16;
	pbw b = {0};
	pbw_tensor_head(&b, &dims, 1, OXP_DT_INT4);
	pbw_bytes(&b, 9, raw, sizeof(raw));
	oxp_error err;
	oxp_model *m = pbw_parse(&b, &err);
	assert_non_null(m);
	int64_t v[16];
	assert_int_equal(oxp_tensor_read_i64(oxp_model_tensor_get(m), NULL, 0, 0, 16, v, &err),
	                 OXP_OK);
	for (int i = 0; i < 16; i++)
		assert_int_equal(v[i], i - 8);
	uint64_t u[16];
	assert_int_equal(oxp_tensor_read_u64(oxp_model_tensor_get(m), NULL, 0, 0, 16, u, &err),
	                 OXP_E_RANGE);
	assert_int_equal(oxp_tensor_read_u64(oxp_model_tensor_get(m), NULL, 0, 8, 8, u, &err),
	                 OXP_OK);
	for (int i = 0; i < 8; i++)
		assert_int_equal(u[i], (uint64_t)i);
	oxp_model_free(m);
	pbw_free(&b);

	uint8_t raw2[] = {0xe4}; /* 0, 1, 2, 3 -> INT2 0, 1, -2, -1 */
	dims = 3; /* odd: the fourth slot is unused */
	pbw_tensor_head(&b, &dims, 1, OXP_DT_INT2);
	pbw_bytes(&b, 9, raw2, 1);
	m = pbw_parse(&b, &err);
	assert_non_null(m);
	assert_int_equal(oxp_tensor_read_i64(oxp_model_tensor_get(m), NULL, 0, 0, 3, v, &err),
	                 OXP_OK);
	assert_int_equal(v[0], 0);
	assert_int_equal(v[1], 1);
	assert_int_equal(v[2], -2);
	assert_int_equal(oxp_tensor_read_i64(oxp_model_tensor_get(m), NULL, 0, 0, 4, v, &err),
	                 OXP_E_RANGE);
	oxp_model_free(m);
	pbw_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_float16_all),
	    cmocka_unit_test(test_bfloat16_all),
	    cmocka_unit_test(test_float8_and_float4),
	    cmocka_unit_test(test_bits_to_f64),
	    cmocka_unit_test(test_digits),
	    cmocka_unit_test(test_classes),
	    cmocka_unit_test(test_subbyte_packing),
	    cmocka_unit_test(test_subbyte_ints),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
