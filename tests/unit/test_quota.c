/*
 * test_quota.c — per-client holdings (service/quota.c): each client within its own limit
 * whatever another holds, nothing taken past a limit, a client forgotten once it holds
 * nothing, 0 meaning no limit, the owner key's hex round trip, and many clients at once
 * (the table grows); who a client is (service/client.c): addresses, CIDR lists, and the
 * X-Forwarded-For of trusted proxies read from the right.
 */
#include "service/client.h"
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

static oxs_ip ip(const char *s)
{
	oxs_ip a;
	assert_true(oxs_ip_parse(s, strlen(s), &a));
	return a;
}

static void test_cidrs(void **state)
{
	(void)state;
	char err[128];
	oxs_cidrs *l = NULL;
	assert_true(oxs_cidrs_parse("", &l, err, sizeof(err)));
	assert_null(l);
	oxs_ip a = ip("10.1.2.3");
	assert_false(oxs_cidrs_match(NULL, &a));
	assert_true(oxs_cidrs_parse("10.0.0.0/8, 192.168.1.7,fd00::/8,172.16.0.0/12", &l, err,
	                            sizeof(err)));
	oxs_ip yes[] = {ip("10.255.0.1"), ip("192.168.1.7"), ip("fd12::1"), ip("::ffff:10.0.0.1"),
	                ip("172.31.255.255")};
	oxs_ip no[] = {ip("11.0.0.1"), ip("192.168.1.8"), ip("fe80::1"), ip("172.32.0.0")};
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		assert_true(oxs_cidrs_match(l, &yes[i]));
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		assert_false(oxs_cidrs_match(l, &no[i]));
	oxs_cidrs_free(l);
	const char *bad[] = {"10.0.0.0/33", "10.0.0.0/", "nonsense", "10.0.0.0/8x", "::1/129", ",", " "};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_false(oxs_cidrs_parse(bad[i], &l, err, sizeof(err)));
		assert_non_null(strstr(err, "--trusted-proxies"));
	}
	oxs_ip z;
	assert_false(oxs_ip_parse("1.2.3.4:80", 10, &z));
	assert_false(oxs_ip_parse("", 0, &z));
}

static void test_forwarded(void **state)
{
	(void)state;
	char err[128];
	oxs_cidrs *l = NULL;
	assert_true(oxs_cidrs_parse("10.0.0.0/8", &l, err, sizeof(err)));
	oxs_ip proxy = ip("10.0.0.2"), other = ip("203.0.113.9"), got;
	/* from a trusted proxy: the rightmost entry that is not a proxy; what the client
	 * wrote itself to the left is not believed */
	got = oxs_client_addr(l, &proxy, "1.1.1.1, 198.51.100.4, 10.0.0.7");
	oxs_ip want = ip("198.51.100.4");
	assert_memory_equal(&got, &want, sizeof(got));
	/* no header, or one it cannot read: the proxy itself */
	got = oxs_client_addr(l, &proxy, NULL);
	assert_memory_equal(&got, &proxy, sizeof(got));
	got = oxs_client_addr(l, &proxy, "junk, 10.0.0.9");
	assert_memory_equal(&got, &proxy, sizeof(got));
	got = oxs_client_addr(l, &proxy, "10.0.0.8");
	assert_memory_equal(&got, &proxy, sizeof(got));
	/* from anyone else the header is ignored */
	got = oxs_client_addr(l, &other, "198.51.100.4");
	assert_memory_equal(&got, &other, sizeof(got));
	got = oxs_client_addr(NULL, &proxy, "198.51.100.4");
	assert_memory_equal(&got, &proxy, sizeof(got));
	oxs_cidrs_free(l);
	/* keys: IPv6 by its /64, a mapped IPv4 address as IPv4 */
	oxs_client a, b;
	oxs_ip v6a = ip("2001:db8:1:2::1"), v6b = ip("2001:db8:1:2:ffff::9"), v4 = ip("192.0.2.1"),
	       m = ip("::ffff:192.0.2.1");
	oxs_client_of_ip(&v6a, &a);
	oxs_client_of_ip(&v6b, &b);
	assert_memory_equal(a.k, b.k, OXS_CLIENT_KEY);
	oxs_client_of_ip(&v4, &a);
	oxs_client_of_ip(&m, &b);
	assert_memory_equal(a.k, b.k, OXS_CLIENT_KEY);
	assert_int_equal(a.k[0], '4');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_limits_per_client),
	    cmocka_unit_test(test_many_clients),
	    cmocka_unit_test(test_hex),
	    cmocka_unit_test(test_cidrs),
	    cmocka_unit_test(test_forwarded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
