/*
 * test_http_util.c — the HTTP layer's pure helpers: query strings, render options from a
 * query, If-None-Match matching, JSON strings (checked against jansson), ids, log lines.
 */
#include "service/log.h"
#include "service/oxs.h"

#include <jansson.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static int split(const char *q, char *buf, size_t size, oxs_query_pair *pairs, size_t max)
{
	snprintf(buf, size, "%s", q);
	return oxs_query_split(buf, pairs, max);
}

static void test_query_split(void **state)
{
	(void)state;
	char buf[256];
	oxs_query_pair p[8];
	assert_int_equal(split("", buf, sizeof(buf), p, 8), 0);
	assert_int_equal(split("a=1&b=x%20y&c=d+e", buf, sizeof(buf), p, 8), 3);
	assert_string_equal(p[0].key, "a");
	assert_string_equal(p[0].value, "1");
	assert_string_equal(p[1].value, "x y");
	assert_string_equal(p[2].value, "d e");
	/* a key without '=' has the empty value; empty pieces are skipped */
	assert_int_equal(split("&&flag&k=&%41%2f=%7e", buf, sizeof(buf), p, 8), 3);
	assert_string_equal(p[0].key, "flag");
	assert_string_equal(p[0].value, "");
	assert_string_equal(p[1].key, "k");
	assert_string_equal(p[1].value, "");
	assert_string_equal(p[2].key, "A/");
	assert_string_equal(p[2].value, "~");
	/* '=' inside a value stays */
	assert_int_equal(split("expand=a=b", buf, sizeof(buf), p, 8), 1);
	assert_string_equal(p[0].value, "a=b");
	/* malformed escapes, a decoded NUL, too many pairs */
	assert_int_equal(split("a=%", buf, sizeof(buf), p, 8), -1);
	assert_int_equal(split("a=%4", buf, sizeof(buf), p, 8), -1);
	assert_int_equal(split("a=%zz", buf, sizeof(buf), p, 8), -1);
	assert_int_equal(split("a%00=1", buf, sizeof(buf), p, 8), -1);
	assert_int_equal(split("a=1&b=2&c=3", buf, sizeof(buf), p, 2), -1);
}

static int options(const char *q, oxr_options *o, char *err)
{
	char buf[2048];
	oxs_query_pair p[16];
	int n = split(q, buf, sizeof(buf), p, 16);
	assert_true(n >= 0);
	return oxs_query_options(p, (size_t)n, o, err, 256) ? 0 : -1;
}

static void test_query_options(void **state)
{
	(void)state;
	oxr_options o, def;
	char err[256] = "";
	oxr_options_default(&def);
	assert_int_equal(options("", &o, err), 0);
	char k1[2048], k2[2048];
	oxr_options_key(&o, k1, sizeof(k1));
	oxr_options_key(&def, k2, sizeof(k2));
	assert_string_equal(k1, k2);
	assert_int_equal(options("rankdir=LR&initializers=hide&depth=3&attrs=all", &o, err), 0);
	assert_true(o.rankdir_lr);
	assert_int_equal(o.initializers, OXR_INIT_HIDE);
	assert_int_equal(o.expand_depth, 3);
	assert_int_equal(o.attrs, 2);
	/* the same options in another order give the same cache key */
	oxr_options o2;
	assert_int_equal(options("attrs=all&depth=3&initializers=hide&rankdir=LR", &o2, err), 0);
	oxr_options_key(&o, k1, sizeof(k1));
	oxr_options_key(&o2, k2, sizeof(k2));
	assert_string_equal(k1, k2);
	assert_int_equal(options("rankdir=XY", &o, err), -1);
	assert_non_null(strstr(err, "rankdir"));
	assert_int_equal(options("colour=red", &o, err), -1);
	assert_non_null(strstr(err, "unknown option 'colour'"));
	assert_int_equal(options("depth=1&depth=2", &o, err), -1);
	assert_non_null(strstr(err, "twice"));
}

static void test_etag_match(void **state)
{
	(void)state;
	const char *tag = "\"abc\"";
	assert_true(oxs_etag_match("\"abc\"", tag));
	assert_true(oxs_etag_match("W/\"abc\"", tag));
	assert_true(oxs_etag_match("\"x\", \"abc\"", tag));
	assert_true(oxs_etag_match("\"x\",W/\"abc\"", tag));
	assert_true(oxs_etag_match("*", tag));
	assert_true(oxs_etag_match("\"abc\"", "W/\"abc\""));
	assert_false(oxs_etag_match("\"abcd\"", tag));
	assert_false(oxs_etag_match("\"ab\"", tag));
	assert_false(oxs_etag_match("abc", tag));
	assert_false(oxs_etag_match("\"abc", tag));
	assert_false(oxs_etag_match("", tag));
	assert_false(oxs_etag_match(NULL, tag));
}

/* Encode s with oxr_json_string; jansson must parse it back as `want`. */
static void json_roundtrip(const char *s, size_t n, const char *want, size_t wantlen)
{
	oxr_buf b;
	oxr_buf_init(&b, 0);
	assert_true(oxr_json_string(&b, s, n));
	json_error_t e;
	json_t *j = json_loadb(b.data, b.len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);
	if (j == NULL)
		fail_msg("not JSON: %s (%s)", b.data, e.text);
	assert_true(json_is_string(j));
	assert_int_equal(json_string_length(j), wantlen);
	assert_memory_equal(json_string_value(j), want, wantlen);
	json_decref(j);
	oxr_buf_free(&b);
}

static void test_json_string(void **state)
{
	(void)state;
	json_roundtrip("plain", 5, "plain", 5);
	json_roundtrip("q\"b\\s/", 6, "q\"b\\s/", 6);
	json_roundtrip("a\nb\tc\r\x01\x7f", 9, "a\nb\tc\r\x01\x7f", 9);
	json_roundtrip("nul\0in", 6, "nul\0in", 6);
	json_roundtrip("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14,
	               "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14);
	/* invalid UTF-8: lone continuation, overlong, surrogate, truncated, above U+10FFFF */
	json_roundtrip("\x80", 1, "\xef\xbf\xbd", 3);
	json_roundtrip("\xc0\xaf", 2, "\xef\xbf\xbd\xef\xbf\xbd", 6);
	json_roundtrip("\xed\xa0\x80", 3, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", 9);
	json_roundtrip("ab\xe2\x82", 4, "ab\xef\xbf\xbd\xef\xbf\xbd", 8);
	json_roundtrip("\xf4\x90\x80\x80", 4,
	               "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", 12);
	json_roundtrip("</script>", 9, "</script>", 9);
}

static void test_ids(void **state)
{
	(void)state;
	char id[65];
	memset(id, 'a', 64);
	id[64] = '\0';
	assert_true(oxst_id_valid(id));
	id[10] = 'A';
	assert_false(oxst_id_valid(id));
	id[10] = 'g';
	assert_false(oxst_id_valid(id));
	id[10] = '0';
	id[63] = '\0';
	assert_false(oxst_id_valid(id));
	assert_false(oxst_id_valid(""));
	assert_false(oxst_id_valid(NULL));
	unsigned char bytes[3] = {0x00, 0xab, 0xff};
	char hex[7];
	oxs_hex(hex, bytes, 3);
	assert_string_equal(hex, "00abff");
}

/* The line oxs_log writes for msg (stderr caught in a file), parsed by jansson. */
static json_t *log_line(const char *msg)
{
	FILE *f = tmpfile();
	assert_non_null(f);
	fflush(stderr);
	int saved = dup(STDERR_FILENO);
	assert_true(saved >= 0 && dup2(fileno(f), STDERR_FILENO) >= 0);
	oxs_log("info", msg, ",\"k\":1");
	assert_true(dup2(saved, STDERR_FILENO) >= 0);
	close(saved);
	char line[4096];
	rewind(f);
	size_t n = fread(line, 1, sizeof(line) - 1, f);
	fclose(f);
	line[n] = '\0';
	assert_true(n > 0 && line[n - 1] == '\n' && memchr(line, '\n', n) == line + n - 1);
	json_error_t e;
	json_t *j = json_loads(line, 0, &e);
	if (j == NULL)
		fail_msg("not one JSON object: %s (%s)", line, e.text);
	return j;
}

/* Every log line is one JSON object: a message longer than the line once escaped keeps
 * its first bytes (it was written `"msg":,`), with the extra members after it. */
static void test_log_lines(void **state)
{
	(void)state;
	json_t *j = log_line("plain \"quoted\"\n");
	assert_string_equal(json_string_value(json_object_get(j, "msg")), "plain \"quoted\"\n");
	assert_int_equal(json_integer_value(json_object_get(j, "k")), 1);
	json_decref(j);
	static char big[3000];
	memset(big, '\x01', sizeof(big) - 1); /* each byte escapes to 6 */
	j = log_line(big);
	const char *m = json_string_value(json_object_get(j, "msg"));
	assert_non_null(m);
	assert_true(strlen(m) >= 200 && strncmp(m, big, strlen(m)) == 0);
	assert_int_equal(json_integer_value(json_object_get(j, "k")), 1);
	json_decref(j);
	memset(big, 'a', sizeof(big) - 1); /* one line's room: cut, still valid */
	j = log_line(big);
	m = json_string_value(json_object_get(j, "msg"));
	assert_true(m != NULL && strlen(m) >= 300 && strncmp(m, big, strlen(m)) == 0);
	json_decref(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_query_split), cmocka_unit_test(test_query_options),
	    cmocka_unit_test(test_etag_match),  cmocka_unit_test(test_json_string),
	    cmocka_unit_test(test_ids),         cmocka_unit_test(test_log_lines),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
