/*
 * test_host.c — the Host check against DNS rebinding (service/host.c): what a server bound
 * to loopback, to all addresses and to one LAN address answers to, with and without
 * --allowed-hosts; malformed Host values.
 */
#include "service/host.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

typedef struct hcase {
	const char *host, *bind, *allowed;
	bool ok;
} hcase;

static void run(const hcase *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		bool got = oxs_host_allowed(c[i].host, c[i].bind, c[i].allowed);
		if (got != c[i].ok)
			fail_msg("Host %s, bind %s, allowed '%s': %s, expected %s", c[i].host ? c[i].host : "(none)",
			         c[i].bind, c[i].allowed, got ? "allowed" : "refused", c[i].ok ? "allowed" : "refused");
	}
}

static void test_loopback(void **state)
{
	(void)state;
	static const hcase c[] = {
	    {NULL, "127.0.0.1", "", true},
	    {"localhost", "127.0.0.1", "", true},
	    {"localhost:8080", "127.0.0.1", "", true},
	    {"LocalHost.", "127.0.0.1", "", true},
	    {"app.localhost:3000", "127.0.0.1", "", true},
	    {"127.0.0.1:8080", "127.0.0.1", "", true},
	    {"127.9.9.9", "127.0.0.1", "", true},
	    {"[::1]:8080", "127.0.0.1", "", true},
	    {"[::ffff:127.0.0.1]", "127.0.0.1", "", true},
	    {"evil.example", "127.0.0.1", "", false},
	    {"evil.example:8080", "127.0.0.1", "", false},
	    {"localhost.evil.example", "127.0.0.1", "", false},
	    {"127.0.0.1.nip.io", "127.0.0.1", "", false},
	    {"10.0.0.5", "127.0.0.1", "", false},
	    {"[::1]:8080", "::1", "", true},
	    {"evil.example", "::1", "", false},
	};
	run(c, sizeof(c) / sizeof(c[0]));
}

static void test_listed(void **state)
{
	(void)state;
	static const hcase c[] = {
	    {"models.example", "127.0.0.1", "models.example", true},
	    {"Models.Example:443", "127.0.0.1", " other.example , models.example", true},
	    {"a.corp.example", "127.0.0.1", ".corp.example", true},
	    {"corp.example", "127.0.0.1", ".corp.example", false},
	    {"xcorp.example", "127.0.0.1", ".corp.example", false},
	    {"models.example.evil", "127.0.0.1", "models.example", false},
	    {"evil.example", "127.0.0.1", "*", true},
	    {"evil.example", "127.0.0.1", "models.example,*", true},
	    {"10.0.0.5", "127.0.0.1", "10.0.0.5", true},
	};
	run(c, sizeof(c) / sizeof(c[0]));
}

static void test_other_binds(void **state)
{
	(void)state;
	static const hcase c[] = {
	    {"evil.example", "0.0.0.0", "", true},
	    {"onnxviz:8080", "0.0.0.0", "", true},
	    {"evil.example", "::", "", true},
	    {"evil.example", "0.0.0.0", "models.example", false},
	    {"models.example", "0.0.0.0", "models.example", true},
	    {"192.168.1.20:8080", "0.0.0.0", "models.example", true},
	    {"[2001:db8::1]", "::", "models.example", true},
	    {"localhost", "0.0.0.0", "models.example", true},
	    {"10.0.0.5", "10.0.0.5", "models.example", true},
	    {"evil.example", "10.0.0.5", "", true},
	    {"evil.example", "10.0.0.5", "models.example", false},
	};
	run(c, sizeof(c) / sizeof(c[0]));
}

static void test_malformed(void **state)
{
	(void)state;
	static const hcase c[] = {
	    {"", "0.0.0.0", "", false},
	    {":8080", "0.0.0.0", "", false},
	    {"::1", "0.0.0.0", "", false},          /* IPv6 outside brackets */
	    {"[::1", "0.0.0.0", "", false},
	    {"[::1]x", "0.0.0.0", "", false},
	    {"localhost:", "127.0.0.1", "", false},
	    {"localhost:80a", "127.0.0.1", "", false},
	    {"localhost:123456", "127.0.0.1", "", false},
	    {"user@localhost", "127.0.0.1", "", false},
	    {"local host", "0.0.0.0", "", false},
	    {"localhost/x", "127.0.0.1", "", false},
	    {"a\x01" "b", "0.0.0.0", "", false},
	};
	run(c, sizeof(c) / sizeof(c[0]));
	char big[400];
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_false(oxs_host_allowed(big, "0.0.0.0", ""));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_loopback),
	    cmocka_unit_test(test_listed),
	    cmocka_unit_test(test_other_binds),
	    cmocka_unit_test(test_malformed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
