/*
 * test_quota.c — per-client holdings (service/quota.c): each client within its own limit
 * whatever another holds, nothing taken past a limit, a client forgotten once it holds
 * nothing, 0 meaning no limit, the owner key's hex round trip, and many clients at once
 * (the table grows).
 */
#include "service/quota.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

static oxs_client client(unsigned char kind, unsigned n)
{
	oxs_client c;
	memset(&c, 0, sizeof(c));
	c.k[0] = kind;
	memcpy(c.k + 1, &n, sizeof(n));
	return c;
}

static void test_limits_per_client(void **state)
{
	(void)state;
	const uint64_t lim[OXS_Q_COUNT] = {[OXS_Q_UPLOADS] = 3, [OXS_Q_BODY_BYTES] = 100,
	                                   [OXS_Q_OVERLAYS] = 0};
	oxs_quota *q = oxs_quota_new(lim);
	assert_non_null(q);
	oxs_client a = client('4', 1), b = client('4', 2), t = client('t', 1);
	uint64_t held = 99;
	for (int i = 0; i < 3; i++)
		assert_true(oxs_quota_take(q, &a, OXS_Q_UPLOADS, 1, NULL));
	assert_false(oxs_quota_take(q, &a, OXS_Q_UPLOADS, 1, &held));
	assert_int_equal(held, 3);
	/* another client, or the same bytes as a token, is not held back by a */
	assert_true(oxs_quota_take(q, &b, OXS_Q_UPLOADS, 3, NULL));
	assert_true(oxs_quota_take(q, &t, OXS_Q_UPLOADS, 1, NULL));
	/* another resource of a is its own */
	assert_true(oxs_quota_take(q, &a, OXS_Q_BODY_BYTES, 100, NULL));
	assert_false(oxs_quota_take(q, &a, OXS_Q_BODY_BYTES, 1, NULL));
	assert_int_equal(oxs_quota_held(q, &a, OXS_Q_BODY_BYTES), 100);
	/* a refused take takes nothing */
	assert_false(oxs_quota_take(q, &b, OXS_Q_BODY_BYTES, 101, NULL));
	assert_int_equal(oxs_quota_held(q, &b, OXS_Q_BODY_BYTES), 0);
	/* 0: no limit; an overflowing take is refused */
	assert_true(oxs_quota_take(q, &a, OXS_Q_OVERLAYS, UINT64_MAX - 1, NULL));
	assert_false(oxs_quota_take(q, &a, OXS_Q_OVERLAYS, 2, NULL));
	assert_int_equal(oxs_quota_limit(q, OXS_Q_UPLOADS), 3);
	assert_int_equal(oxs_quota_clients(q), 3);
	/* given back: room again; never below zero */
	oxs_quota_give(q, &a, OXS_Q_UPLOADS, 1);
	assert_true(oxs_quota_take(q, &a, OXS_Q_UPLOADS, 1, NULL));
	oxs_quota_give(q, &b, OXS_Q_UPLOADS, 10);
	assert_int_equal(oxs_quota_held(q, &b, OXS_Q_UPLOADS), 0);
	/* a client holding nothing is forgotten */
	assert_int_equal(oxs_quota_clients(q), 2);
	oxs_quota_give(q, &t, OXS_Q_UPLOADS, 1);
	oxs_quota_give(q, &a, OXS_Q_UPLOADS, 3);
	oxs_quota_give(q, &a, OXS_Q_BODY_BYTES, 100);
	assert_int_equal(oxs_quota_clients(q), 1);
	oxs_quota_give(q, &a, OXS_Q_OVERLAYS, UINT64_MAX);
	assert_int_equal(oxs_quota_clients(q), 0);
	oxs_quota_free(q);
	oxs_quota_free(NULL);
}

static void test_many_clients(void **state)
{
	(void)state;
	const uint64_t lim[OXS_Q_COUNT] = {[OXS_Q_UPLOADS] = 2};
	oxs_quota *q = oxs_quota_new(lim);
	assert_non_null(q);
	enum { N = 5000 };
	for (unsigned i = 0; i < N; i++) {
		oxs_client c = client('6', i);
		assert_true(oxs_quota_take(q, &c, OXS_Q_UPLOADS, 2, NULL));
	}
	assert_int_equal(oxs_quota_clients(q), N);
	for (unsigned i = 0; i < N; i++) {
		oxs_client c = client('6', i);
		assert_false(oxs_quota_take(q, &c, OXS_Q_UPLOADS, 1, NULL));
		assert_int_equal(oxs_quota_held(q, &c, OXS_Q_UPLOADS), 2);
		oxs_quota_give(q, &c, OXS_Q_UPLOADS, 2);
	}
	assert_int_equal(oxs_quota_clients(q), 0);
	oxs_quota_free(q);
}

static void test_hex(void **state)
{
	(void)state;
	oxs_client c = client('t', 0xdeadbeefu), d;
	c.k[OXS_CLIENT_KEY - 1] = 0xa5;
	char hex[OXS_CLIENT_HEX];
	oxs_client_hex(&c, hex);
	assert_int_equal(strlen(hex), 2 * OXS_CLIENT_KEY);
	assert_true(oxs_client_from_hex(hex, &d));
	assert_memory_equal(c.k, d.k, OXS_CLIENT_KEY);
	hex[5] = 'G';
	assert_false(oxs_client_from_hex(hex, &d));
	assert_false(oxs_client_from_hex("74", &d));
	assert_false(oxs_client_from_hex(NULL, &d));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_limits_per_client),
	    cmocka_unit_test(test_many_clients),
	    cmocka_unit_test(test_hex),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
