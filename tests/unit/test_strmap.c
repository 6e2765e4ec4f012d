/* test_strmap.c — the project's hash (oxp_hash) and string map (oxp_smap), parser/strmap.c.
 * The hash serves power-of-two tables, so its low bits must spread keys that differ in one
 * byte, in length only, or in their seed; the map must find every key it was given. */
#include "parser/oxp.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* Keys like the names of a model's values ("/model/layers.17/attn/MatMul_output_0"):
 * the occupied share of 2^16 buckets for n keys hashed to their low 16 bits is close to
 * what a random function gives, 1 - e^(-n/2^16). */
static void test_hash_low_bits(void **state)
{
	(void)state;
	enum { BITS = 16, N = 40000 };
	static uint8_t used[1u << BITS];
	memset(used, 0, sizeof(used));
	char key[64];
	for (int i = 0; i < N; i++) {
		int n = snprintf(key, sizeof(key), "/model/layers.%d/attn/MatMul_output_%d", i / 7,
		                 i % 7);
		used[oxp_hash(key, (size_t)n, 0) & ((1u << BITS) - 1)] = 1;
	}
	size_t occupied = 0;
	for (size_t i = 0; i < sizeof(used); i++)
		occupied += used[i];
	/* random: 65536 * (1 - e^(-40000/65536)) = 29,993; 2% off that is far outside chance */
	assert_true(occupied > 29393 && occupied < 30593);
}

static void test_hash_distinguishes(void **state)
{
	(void)state;
	const char a[] = "Conv_output_0";
	char b[sizeof(a)];
	memcpy(b, a, sizeof(a));
	uint64_t h = oxp_hash(a, sizeof(a) - 1, 0);
	assert_int_equal(h, oxp_hash(b, sizeof(a) - 1, 0)); /* the bytes, not the pointer */
	/* each byte, each bit of it, whole words and the tail alike */
	for (size_t i = 0; i < sizeof(a) - 1; i++)
		for (int bit = 0; bit < 8; bit++) {
			b[i] = (char)(a[i] ^ (1 << bit));
			assert_true(oxp_hash(b, sizeof(a) - 1, 0) != h);
			b[i] = a[i];
		}
	/* trailing NULs and the empty key: the length counts */
	static const char zeros[16];
	for (size_t n = 0; n < sizeof(zeros); n++)
		assert_true(oxp_hash(zeros, n, 0) != oxp_hash(zeros, n + 1, 0));
	/* the seed (a parent's index) */
	assert_true(oxp_hash(a, 4, 1) != oxp_hash(a, 4, 2));
	assert_true(oxp_hash(a, 4, 0) != oxp_hash(a, 4, 1));
}

static void test_smap(void **state)
{
	(void)state;
	oxp_smap m;
	assert_true(oxp_smap_init(&m, 4)); /* grows several times below */
	enum { N = 5000 };
	static char keys[N][24];
	for (uint32_t i = 0; i < N; i++) {
		snprintf(keys[i], sizeof(keys[i]), "v%u", i);
		assert_true(oxp_smap_put(&m, keys[i], strlen(keys[i]), i));
	}
	/* the first wins */
	assert_true(oxp_smap_put(&m, "v7", 2, 99));
	for (uint32_t i = 0; i < N; i++)
		assert_int_equal(oxp_smap_get(&m, keys[i], strlen(keys[i])), i);
	assert_int_equal(oxp_smap_get(&m, "v7", 2), 7);
	assert_int_equal(oxp_smap_get(&m, "v5000", 5), OXP_NONE);
	assert_int_equal(oxp_smap_get(&m, "v1", 1), OXP_NONE); /* a prefix is another key */
	/* keys are bytes: a NUL inside is part of the key */
	static const char nul[] = {'a', 0, 'b'};
	assert_true(oxp_smap_put(&m, nul, 3, 12345));
	assert_int_equal(oxp_smap_get(&m, nul, 3), 12345);
	assert_int_equal(oxp_smap_get(&m, "a", 1), OXP_NONE);
	assert_true(oxp_smap_put(&m, "", 0, 777));
	assert_int_equal(oxp_smap_get(&m, "", 0), 777);
	oxp_smap_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hash_low_bits),
	    cmocka_unit_test(test_hash_distinguishes),
	    cmocka_unit_test(test_smap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
