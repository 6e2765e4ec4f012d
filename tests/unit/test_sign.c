/*
 * test_sign.c — signed links (service/sign.c) and Markdown code spans (service/md.c), the
 * pure parts: the signature of a known request (computed with Python's hmac from the rule
 * in sign.h), the check at its clock boundaries (now is a parameter: no clock to fake),
 * what it takes out of the query, malformed links; code spans around backticks, pipes,
 * spaces, control and bidi characters; counts and base URLs.
 */
#include "service/md.h"
#include "service/sign.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static oxs_sign_key key32(void)
{
	oxs_sign_key k;
	memset(k.k, 'k', 32);
	k.len = 32;
	return k;
}

/* python3: hmac.new(b'k'*32, b'GET\n/models/x/graph.svg\na=1&b=2%2F3&expires=1000',
 * hashlib.sha256).hexdigest() */
#define KNOWN "1eb66b3a871320994720667109ea1ccbee6a8597e6b79336d6a7ec2883377cae"

static void test_known_signature(void **state)
{
	(void)state;
	oxs_sign_key k = key32();
	oxr_buf out;
	oxr_buf_init(&out, 0);
	char err[200];
	/* parameters out of order, '/' in a value, %-escapes in the path */
	assert_true(oxs_sign_target(&k, "/models/%78/graph.svg?b=2/3&a=1", 1000, &out, err, sizeof(err)));
	assert_string_equal(out.data, "/models/x/graph.svg?a=1&b=2%2F3&expires=1000&signature=" KNOWN);
	oxr_buf_free(&out);
	/* refused: not a read, already signed, a fragment, a NUL, relative */
	const char *bad[] = {"/uploads", "/models/x/graph.svg?expires=5", "/models/x/graph.svg?signature=a",
	                     "/models/x#y", "/models/%00", "models/x", "/healthz"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		oxr_buf_init(&out, 0);
		assert_false(oxs_sign_target(&k, bad[i], 1000, &out, err, sizeof(err)));
		oxr_buf_free(&out);
	}
}

static oxs_sign_result check_at(const char *path, const char *query, int64_t now, unsigned max,
                                char *after)
{
	oxs_sign_key k = key32();
	char q[OXS_QUERY_MAX];
	snprintf(q, sizeof(q), "%s", query);
	oxs_sign_result r = oxs_sign_check(&k, path, q, now, max);
	if (after != NULL)
		strcpy(after, q);
	return r;
}

static void test_check(void **state)
{
	(void)state;
	char after[OXS_QUERY_MAX];
	const char *q = "b=2%2f3&expires=1000&a=1&signature=" KNOWN;
	/* valid up to and including its second; the query keeps its other parameters as sent */
	assert_int_equal(check_at("/models/x/graph.svg", q, 1000, 3600, after), OXS_SIGN_OK);
	assert_string_equal(after, "b=2%2f3&a=1");
	assert_int_equal(check_at("/models/x/graph.svg", q, 1001, 3600, NULL), OXS_SIGN_EXPIRED);
	/* --sign-max-ttl applies when the link is used */
	assert_int_equal(check_at("/models/x/graph.svg", q, 1000 - 3600, 3600, NULL), OXS_SIGN_OK);
	assert_int_equal(check_at("/models/x/graph.svg", q, 1000 - 3601, 3600, NULL), OXS_SIGN_TTL);
	/* another path, a changed byte, expires moved: mismatch (before the clock) */
	assert_int_equal(check_at("/models/x/graph.dot", q, 5000, 3600, NULL), OXS_SIGN_MISMATCH);
	assert_int_equal(check_at("/models/x/graph.svg", "b=2%2f4&expires=1000&a=1&signature=" KNOWN, 0, 3600,
	                          NULL), OXS_SIGN_MISMATCH);
	assert_int_equal(check_at("/models/x/graph.svg", "b=2%2f3&expires=1001&a=1&signature=" KNOWN, 0, 3600,
	                          NULL), OXS_SIGN_MISMATCH);
	assert_int_equal(check_at("/models/x/graph.svg", "b=2%2f3&expires=1000&a=1&c=&signature=" KNOWN, 0,
	                          3600, NULL), OXS_SIGN_MISMATCH);
	/* malformed: no expires, two signatures, upper-case hex, short, not digits */
	assert_int_equal(check_at("/models/x/graph.svg", "a=1&signature=" KNOWN, 0, 3600, NULL),
	                 OXS_SIGN_MALFORMED);
	assert_int_equal(check_at("/models/x/graph.svg", "expires=1000&signature=" KNOWN "&signature=" KNOWN,
	                          0, 3600, NULL), OXS_SIGN_MALFORMED);
	assert_int_equal(check_at("/models/x/graph.svg", "expires=1000&signature=1EB66B3A871320994720667109EA1CCB"
	                          "EE6A8597E6B79336D6A7EC2883377CAE", 0, 3600, NULL), OXS_SIGN_MALFORMED);
	assert_int_equal(check_at("/models/x/graph.svg", "expires=1000&signature=1eb6", 0, 3600, NULL),
	                 OXS_SIGN_MALFORMED);
	assert_int_equal(check_at("/models/x/graph.svg", "expires=-1&signature=" KNOWN, 0, 3600, NULL),
	                 OXS_SIGN_MALFORMED);
	assert_true(oxs_sign_present("a=1&signature=x"));
	assert_true(oxs_sign_present("sig%6eature=x"));
	assert_false(oxs_sign_present("a=1&signatures=x"));
	assert_true(oxs_sign_present("a=%zz&signature=x")); /* a query the split refuses */
}

static void test_ttl(void **state)
{
	(void)state;
	unsigned s = 0;
	assert_true(oxs_sign_parse_ttl("3600", 604800, &s) && s == 3600);
	assert_true(oxs_sign_parse_ttl("90s", 604800, &s) && s == 90);
	assert_true(oxs_sign_parse_ttl("15m", 604800, &s) && s == 900);
	assert_true(oxs_sign_parse_ttl("1h", 604800, &s) && s == 3600);
	assert_true(oxs_sign_parse_ttl("7d", 604800, &s) && s == 604800);
	const char *bad[] = {"", "0", "8d", "1w", "h", "-1", "1.5h", "1hh", "9999999999"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_false(oxs_sign_parse_ttl(bad[i], 604800, &s));
}

static const char *code(oxr_buf *b, const char *s, bool cell)
{
	b->len = 0;
	oxs_md_code_z(b, s, 100, cell);
	oxr_buf_append(b, "", 1);
	return b->data;
}

static void test_code_spans(void **state)
{
	(void)state;
	oxr_buf b;
	oxr_buf_init(&b, 0);
	assert_string_equal(code(&b, "Conv", true), "`Conv`");
	assert_string_equal(code(&b, "a|b", true), "`a\\|b`");
	assert_string_equal(code(&b, "a|b", false), "`a|b`");
	assert_string_equal(code(&b, "x`y``z", false), "```x`y``z```");
	assert_string_equal(code(&b, "`", false), "`` ` ``");
	assert_string_equal(code(&b, " a ", false), "`  a  `");
	assert_string_equal(code(&b, " a", false), "` a`");
	assert_string_equal(code(&b, "  ", false), "`  `");
	assert_string_equal(code(&b, "", false), "(empty)");
	assert_string_equal(code(&b, "a\nb\tc", false), "`a b c`");
	assert_string_equal(code(&b, "\xe2\x80\xae" "evil", false), "`\xef\xbf\xbd" "evil`");
	assert_string_equal(code(&b, "\xff", false), "`\xef\xbf\xbd`");
	oxr_buf_free(&b);
	oxr_buf_init(&b, 0);
	oxs_md_text(&b, "a*b_[c](d)<e>|f\\");
	oxs_md_count(&b, 1234567);
	oxs_md_delta(&b, -1000);
	oxr_buf_append(&b, "", 1);
	assert_string_equal(b.data, "a\\*b\\_\\[c\\]\\(d\\)\\<e\\>\\|f\\\\1,234,567\xe2\x88\x92" "1,000");
	oxr_buf_free(&b);
	assert_true(oxs_md_base_url_valid("https://viz.example:8443/a/b"));
	assert_false(oxs_md_base_url_valid("javascript:alert(1)"));
	assert_false(oxs_md_base_url_valid("https://x/a)b"));
	assert_false(oxs_md_base_url_valid("https://x/?q=1"));
	assert_false(oxs_md_base_url_valid("https://"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_known_signature),
	    cmocka_unit_test(test_check),
	    cmocka_unit_test(test_ttl),
	    cmocka_unit_test(test_code_spans),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
