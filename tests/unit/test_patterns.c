/*
 * test_patterns.c — statistics by bit pattern, counted piece by piece.
 *
 * oxp_tensor_count_patterns over windows of a tensor, then oxp_stats_from_patterns, must
 * give exactly what oxp_tensor_stats_get gives over the whole tensor (the service counts
 * big external tensors this way, window by window).
 */
#include "parser/oxp.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* A raw-data tensor of n elements over bytes. */
static oxp_tensor raw_tensor(int32_t dt, int64_t *dim, const uint8_t *bytes, size_t nbytes)
{
	oxp_tensor t;
	memset(&t, 0, sizeof(t));
	t.data_type = dt;
	t.ndims = 1;
	t.dims = dim;
	t.storage = OXP_STORE_RAW;
	t.has_raw_data = true;
	t.raw_data.p = (const char *)bytes;
	t.raw_data.len = nbytes;
	return t;
}

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void same_stats(const oxp_tensor_stats *a, const oxp_tensor_stats *b, size_t nbins,
                       const uint64_t *ba, const uint64_t *bb)
{
	assert_int_equal(a->count, b->count);
	assert_int_equal(a->finite, b->finite);
	assert_int_equal(a->nan, b->nan);
	assert_int_equal(a->pos_inf, b->pos_inf);
	assert_int_equal(a->neg_inf, b->neg_inf);
	assert_int_equal(a->zeros, b->zeros);
	assert_true(a->min == b->min || (isnan(a->min) && isnan(b->min)));
	assert_true(a->max == b->max || (isnan(a->max) && isnan(b->max)));
	assert_true(a->mean == b->mean || (isnan(a->mean) && isnan(b->mean)));
	assert_true(a->std == b->std || (isnan(a->std) && isnan(b->std)));
	assert_int_equal(a->imin, b->imin);
	assert_int_equal(a->imax, b->imax);
	assert_int_equal(a->umin, b->umin);
	assert_int_equal(a->umax, b->umax);
	for (size_t i = 0; i < nbins; i++)
		assert_int_equal(ba[i], bb[i]);
}

static void check_type(int32_t dt, size_t n, size_t pieces)
{
	unsigned bits = oxp_dtype_pattern_bits(dt);
	assert_true(bits > 0 && bits <= 16);
	size_t nbytes = (n * bits + 7) / 8;
	uint8_t *bytes = malloc(nbytes);
	assert_non_null(bytes);
	uint64_t seed = UINT64_C(0x9e3779b97f4a7c15) ^ (uint64_t)(uint32_t)dt;
	for (size_t i = 0; i < nbytes; i++)
		bytes[i] = (uint8_t)rng(&seed);
	int64_t dim = (int64_t)n;
	oxp_tensor whole = raw_tensor(dt, &dim, bytes, nbytes);
	enum { NB = 17 };
	uint64_t b1[NB], b2[NB];
	oxp_stats_options so = {NB, b1, false, 0, 0};
	oxp_tensor_stats want, got;
	oxp_error e;
	assert_int_equal(oxp_tensor_stats_get(&whole, NULL, 0, &so, &want, &e), OXP_OK);

	/* count in pieces of whole bytes (sub-byte types: pieces on element boundaries that
	 * fall on byte boundaries) */
	uint64_t *cnt = calloc((size_t)1 << bits, sizeof(uint64_t));
	assert_non_null(cnt);
	size_t per_byte = bits < 8 ? 8 / bits : 1;
	size_t step = (n / pieces) / per_byte * per_byte;
	if (step == 0)
		step = n;
	for (size_t off = 0; off < n; off += step) {
		size_t k = n - off < step ? n - off : step;
		int64_t d = (int64_t)k;
		size_t b0 = off * bits / 8, bl = (k * bits + 7) / 8;
		oxp_tensor w = raw_tensor(dt, &d, bytes + b0, bl);
		assert_int_equal(oxp_tensor_count_patterns(&w, NULL, 0, cnt, &e), OXP_OK);
	}
	so.bins = b2;
	assert_int_equal(oxp_stats_from_patterns(dt, cnt, &so, &got, &e), OXP_OK);
	same_stats(&want, &got, NB, b1, b2);
	free(cnt);
	free(bytes);
}

static void test_pieces_equal_whole(void **state)
{
	(void)state;
	const int32_t types[] = {OXP_DT_FLOAT16,     OXP_DT_BFLOAT16,       OXP_DT_FLOAT8E4M3FN,
	                         OXP_DT_FLOAT8E5M2,  OXP_DT_FLOAT8E4M3FNUZ, OXP_DT_FLOAT8E5M2FNUZ,
	                         OXP_DT_FLOAT8E8M0,  OXP_DT_FLOAT4E2M1,     OXP_DT_INT8,
	                         OXP_DT_UINT8,       OXP_DT_INT16,          OXP_DT_UINT16,
	                         OXP_DT_INT4,        OXP_DT_UINT4,          OXP_DT_INT2,
	                         OXP_DT_UINT2,       OXP_DT_BOOL};
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		if (types[i] == OXP_DT_BOOL)
			continue; /* random bytes are not valid BOOL values */
		check_type(types[i], 100003, 7);
		check_type(types[i], 64, 3);
	}
}

static void test_not_by_pattern(void **state)
{
	(void)state;
	assert_int_equal(oxp_dtype_pattern_bits(OXP_DT_FLOAT), 0);
	assert_int_equal(oxp_dtype_pattern_bits(OXP_DT_INT64), 0);
	assert_int_equal(oxp_dtype_pattern_bits(OXP_DT_STRING), 0);
	assert_int_equal(oxp_dtype_pattern_bits(OXP_DT_COMPLEX64), 0);
	assert_int_equal(oxp_dtype_pattern_bits(OXP_DT_UNDEFINED), 0);
	assert_int_equal(oxp_dtype_pattern_bits(999), 0);
	assert_int_equal(oxp_dtype_pattern_bits(OXP_DT_FLOAT16), 16);
	assert_int_equal(oxp_dtype_pattern_bits(OXP_DT_INT4), 4);
	uint64_t cnt[4] = {0};
	oxp_tensor_stats st;
	oxp_error e;
	assert_int_equal(oxp_stats_from_patterns(OXP_DT_FLOAT, cnt, NULL, &st, &e), OXP_E_DTYPE);
	/* no elements at all: NaN figures, zero counts */
	assert_int_equal(oxp_stats_from_patterns(OXP_DT_UINT2, cnt, NULL, &st, &e), OXP_OK);
	assert_int_equal(st.count, 0);
	assert_true(isnan(st.mean));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pieces_equal_whole),
	    cmocka_unit_test(test_not_by_pattern),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
