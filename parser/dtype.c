/*
 * dtype.c — scalar conversions of every ONNX element type, and what each type's values are.
 *
 * The narrow floating formats (FLOAT16, BFLOAT16, the five FLOAT8 variants, FLOAT4E2M1) are
 * widened to float bits with integer arithmetic only: a value is significand M (an integer)
 * times 2^X, normalised by the position of M's top bit.  No table, no FPU, no CPU-specific
 * path: the result is the same bits everywhere.  NaN payloads move to the top of the
 * float's mantissa unchanged (the quiet bit is not forced), signs are kept.
 */
#include "parser/internal.h"

#include <math.h>
#include <string.h>

#define F32_QNAN 0x7fc00000u
#define F32_EXP_ALL 0x7f800000u

/* Position of the highest set bit of m (m != 0). */
static unsigned top_bit(uint32_t m)
{
	return 31u - (unsigned)__builtin_clz(m);
}

/* Float bits of (-1)^sign * m * 2^x, for 0 < m < 2^24 and a value within float's range
 * (every caller's formats are: the smallest is 2^-133 times a small m, the largest below
 * 2^128).  Exact: m has at most 24 significant bits and subnormal results keep all of
 * them (the callers' subnormals are multiples of 2^-149). */
static uint32_t scaled_bits(uint32_t sign, uint32_t m, int x)
{
	if (m == 0)
		return sign << 31;
	unsigned k = top_bit(m);
	int e = (int)k + x + 127; /* biased exponent of the result */
	if (e >= 1)
		return sign << 31 | (uint32_t)e << 23 | ((m << (23 - k)) & 0x7fffffu);
	/* subnormal float: value = m * 2^x = (m << (x + 149)) * 2^-149 */
	return sign << 31 | m << (x + 149);
}

uint32_t oxp_f16_to_f32_bits(uint16_t h)
{
	uint32_t s = (uint32_t)h >> 15, e = ((uint32_t)h >> 10) & 0x1f, m = h & 0x3ffu;
	if (e == 0x1f)
		return s << 31 | F32_EXP_ALL | m << 13; /* Inf (m == 0) or NaN with its payload */
	if (e == 0)
		return scaled_bits(s, m, -24); /* zero or subnormal: m * 2^-24 */
	return scaled_bits(s, m | 0x400u, (int)e - 25);
}

uint32_t oxp_bf16_to_f32_bits(uint16_t h)
{
	return (uint32_t)h << 16; /* bfloat16 is the top half of a float, NaN payloads too */
}

/* A small float format with a sign bit, ebits exponent bits, mbits mantissa bits and the
 * given bias, decoded as IEEE (subnormals when the exponent field is 0).  Special
 * encodings are handled by the caller. */
static uint32_t small_float_bits(uint8_t v, unsigned ebits, unsigned mbits, int bias)
{
	uint32_t s = (uint32_t)v >> (ebits + mbits) & 1u;
	uint32_t e = ((uint32_t)v >> mbits) & ((1u << ebits) - 1);
	uint32_t m = v & ((1u << mbits) - 1);
	if (e == 0)
		return scaled_bits(s, m, 1 - bias - (int)mbits);
	return scaled_bits(s, m | 1u << mbits, (int)e - bias - (int)mbits);
}

uint32_t oxp_f8_to_f32_bits(int32_t dtype, uint8_t v)
{
	switch (dtype) {
	case OXP_DT_FLOAT8E4M3FN:
		if ((v & 0x7f) == 0x7f) /* S.1111.111: NaN, the only special value */
			return (uint32_t)(v >> 7) << 31 | F32_EXP_ALL | 7u << 20;
		return small_float_bits(v, 4, 3, 7);
	case OXP_DT_FLOAT8E4M3FNUZ:
		if (v == 0x80) /* the "negative zero" pattern is the one NaN */
			return F32_QNAN;
		return small_float_bits(v, 4, 3, 8);
	case OXP_DT_FLOAT8E5M2:
		if ((v & 0x7c) == 0x7c) /* exponent all ones: Inf or NaN as in IEEE */
			return (uint32_t)(v >> 7) << 31 | F32_EXP_ALL | (uint32_t)(v & 3) << 21;
		return small_float_bits(v, 5, 2, 15);
	case OXP_DT_FLOAT8E5M2FNUZ:
		if (v == 0x80)
			return F32_QNAN;
		return small_float_bits(v, 5, 2, 16);
	case OXP_DT_FLOAT8E8M0:
		if (v == 0xff)
			return F32_QNAN;
		return scaled_bits(0, 1, (int)v - 127); /* 2^(e-127), no sign, no mantissa */
	case OXP_DT_FLOAT4E2M1:
		return small_float_bits(v & 0x0f, 2, 1, 1);
	default:
		return F32_QNAN;
	}
}

static double f32_bits_to_f64(uint32_t b)
{
	float f;
	memcpy(&f, &b, sizeof(f));
	return (double)f;
}

/* Sign-extend the low `bits` bits of v. */
static int64_t sign_extend(uint64_t v, unsigned bits)
{
	uint64_t m = (uint64_t)1 << (bits - 1);
	v &= bits == 64 ? ~(uint64_t)0 : (m << 1) - 1;
	return (int64_t)((v ^ m) - m);
}

double oxp_bits_to_f64(int32_t dtype, uint64_t bits)
{
	unsigned b = oxp_dtype_bits(dtype);
	switch (oxp_dtype_class(dtype)) {
	case OXP_VC_INT:
		return (double)sign_extend(bits, b);
	case OXP_VC_UINT:
		return (double)(b == 64 ? bits : bits & (((uint64_t)1 << b) - 1));
	case OXP_VC_BOOL:
		return bits != 0 ? 1.0 : 0.0;
	case OXP_VC_FLOAT:
	case OXP_VC_COMPLEX:
		break;
	default:
		return (double)NAN;
	}
	switch (dtype) {
	case OXP_DT_FLOAT:
	case OXP_DT_COMPLEX64:
		return f32_bits_to_f64((uint32_t)bits);
	case OXP_DT_DOUBLE:
	case OXP_DT_COMPLEX128: {
		double d;
		memcpy(&d, &bits, sizeof(d));
		return d;
	}
	case OXP_DT_FLOAT16:
		return f32_bits_to_f64(oxp_f16_to_f32_bits((uint16_t)bits));
	case OXP_DT_BFLOAT16:
		return f32_bits_to_f64(oxp_bf16_to_f32_bits((uint16_t)bits));
	default: /* the FLOAT8 types and FLOAT4E2M1 */
		return f32_bits_to_f64(oxp_f8_to_f32_bits(dtype, (uint8_t)bits));
	}
}

oxp_value_class oxp_dtype_class(int32_t dtype)
{
	switch (dtype) {
	case OXP_DT_FLOAT:
	case OXP_DT_DOUBLE:
	case OXP_DT_FLOAT16:
	case OXP_DT_BFLOAT16:
	case OXP_DT_FLOAT8E4M3FN:
	case OXP_DT_FLOAT8E4M3FNUZ:
	case OXP_DT_FLOAT8E5M2:
	case OXP_DT_FLOAT8E5M2FNUZ:
	case OXP_DT_FLOAT8E8M0:
	case OXP_DT_FLOAT4E2M1:
		return OXP_VC_FLOAT;
	case OXP_DT_INT2:
	case OXP_DT_INT4:
	case OXP_DT_INT8:
	case OXP_DT_INT16:
	case OXP_DT_INT32:
	case OXP_DT_INT64:
		return OXP_VC_INT;
	case OXP_DT_UINT2:
	case OXP_DT_UINT4:
	case OXP_DT_UINT8:
	case OXP_DT_UINT16:
	case OXP_DT_UINT32:
	case OXP_DT_UINT64:
		return OXP_VC_UINT;
	case OXP_DT_BOOL:
		return OXP_VC_BOOL;
	case OXP_DT_COMPLEX64:
	case OXP_DT_COMPLEX128:
		return OXP_VC_COMPLEX;
	case OXP_DT_STRING:
		return OXP_VC_STRING;
	default:
		return OXP_VC_NONE;
	}
}

const char *oxp_value_class_name(oxp_value_class c)
{
	static const char *const names[] = {"none", "float",   "int",   "uint",
	                                    "bool", "complex", "string"};
	return (unsigned)c < sizeof(names) / sizeof(names[0]) ? names[c] : "none";
}

unsigned oxp_dtype_digits(int32_t dtype)
{
	/* ceil(1 + p * log10(2)) for a p-bit significand (C's *_DECIMAL_DIG). */
	switch (dtype) {
	case OXP_DT_FLOAT16:
		return 5; /* p = 11 */
	case OXP_DT_BFLOAT16:
		return 4; /* p = 8 */
	case OXP_DT_FLOAT:
	case OXP_DT_COMPLEX64:
		return 9; /* p = 24 */
	case OXP_DT_DOUBLE:
	case OXP_DT_COMPLEX128:
		return 17; /* p = 53 */
	case OXP_DT_FLOAT8E4M3FN:
	case OXP_DT_FLOAT8E4M3FNUZ:
		return 3; /* p = 4 */
	case OXP_DT_FLOAT8E5M2:
	case OXP_DT_FLOAT8E5M2FNUZ:
	case OXP_DT_FLOAT4E2M1:
		return 2; /* p = 3 and 2 */
	case OXP_DT_FLOAT8E8M0:
		return 2; /* powers of two 2^-127..2^127: two digits tell them apart */
	default:
		return 0;
	}
}
