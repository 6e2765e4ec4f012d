/*
 * test_config.c — `onnxviz serve` options: defaults, environment, flags (which win),
 * both flag spellings, switches, sizes, and the errors for bad input; --frame-ancestors'
 * origins (service/origins.c) normalised, refused and looked up.
 */
#include "service/oxs.h"
#include "service/origins.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

static int parse(oxs_config *c, char *const *envp, int argc, char **argv, char *err)
{
	oxs_config_default(c);
	return oxs_config_parse(c, argc, argv, envp, err, 256);
}

static void test_defaults(void **state)
{
	(void)state;
	oxs_config c;
	char err[256] = "";
	char *argv[] = {"serve", NULL};
	assert_int_equal(parse(&c, NULL, 1, argv, err), 0);
	assert_string_equal(c.bind, "127.0.0.1");
	assert_int_equal(c.port, 8080);
	assert_string_equal(c.store, "./data");
	assert_int_equal(c.max_upload, (uint64_t)2 << 30);
	assert_string_equal(c.token, "");
	assert_false(c.auth_reads);
	assert_int_equal(c.store_budget, 0);
	assert_false(c.evict_models);
	assert_true(c.verify_store);
	assert_true(c.log_requests);
	assert_false(c.help);
	assert_string_equal(c.cache_dir, "./cache");
	assert_int_equal(c.s3_timeout, 10);
	assert_int_equal(c.s3_part_size, (uint64_t)16 << 20);
	assert_int_equal(c.upload_streams, 4);
	assert_string_equal(c.source_buckets, "");
}

static void test_env_then_flags(void **state)
{
	(void)state;
	oxs_config c;
	char err[256] = "";
	char *envp[] = {"PATH=/bin",
	                "ONNXVIZ_PORT=9000",
	                "ONNXVIZ_BIND=0.0.0.0",
	                "ONNXVIZ_STORE=/srv/models",
	                "ONNXVIZ_MAX_UPLOAD=512M",
	                "ONNXVIZ_TOKEN=s3cret",
	                "ONNXVIZ_THREADS=8",
	                "ONNXVIZ_LAYOUT_WORKERS=3",
	                "ONNXVIZ_LAYOUT_TIMEOUT=12",
	                "ONNXVIZ_STORE_BUDGET=10G",
	                "ONNXVIZ_EVICT_MODELS=yes",
	                "ONNXVIZ_UNKNOWN_THING=1", /* ignored: not ours to judge */
	                NULL};
	char *argv[] = {"serve", "--port", "7000", "--threads=2", "--no-evict-models", NULL};
	assert_int_equal(parse(&c, envp, 5, argv, err), 0);
	assert_int_equal(c.port, 7000); /* the flag wins */
	assert_string_equal(c.bind, "0.0.0.0");
	assert_string_equal(c.store, "/srv/models");
	assert_int_equal(c.max_upload, (uint64_t)512 << 20);
	assert_string_equal(c.token, "s3cret");
	assert_int_equal(c.threads, 2);
	assert_int_equal(c.layout_workers, 3);
	assert_int_equal(c.layout_timeout, 12);
	assert_int_equal(c.store_budget, (uint64_t)10 << 30);
	assert_false(c.evict_models);
}

static void test_switches_and_help(void **state)
{
	(void)state;
	oxs_config c;
	char err[256] = "";
	char *argv[] = {"serve", "--auth-reads", "--token", "t", "--log-requests=off", "--help",
	                "--port-file", "/tmp/p", NULL};
	assert_int_equal(parse(&c, NULL, 8, argv, err), 0);
	assert_true(c.auth_reads);
	assert_false(c.log_requests);
	assert_true(c.help);
	assert_string_equal(c.port_file, "/tmp/p");
}

static void test_sizes(void **state)
{
	(void)state;
	uint64_t v = 0;
	assert_true(oxs_parse_size("0", &v) && v == 0);
	assert_true(oxs_parse_size("1048576", &v) && v == 1048576);
	assert_true(oxs_parse_size("64k", &v) && v == 65536);
	assert_true(oxs_parse_size("2G", &v) && v == (uint64_t)2 << 30);
	assert_true(oxs_parse_size("2GiB", &v) && v == (uint64_t)2 << 30);
	assert_true(oxs_parse_size("3MB", &v) && v == (uint64_t)3 << 20);
	assert_true(oxs_parse_size("1T", &v) && v == (uint64_t)1 << 40);
	assert_false(oxs_parse_size("", &v));
	assert_false(oxs_parse_size("-1", &v));
	assert_false(oxs_parse_size("12Q", &v));
	assert_false(oxs_parse_size("1.5G", &v));
	assert_false(oxs_parse_size("G", &v));
	assert_false(oxs_parse_size("99999999999999999999", &v));
	assert_false(oxs_parse_size("99999999T", &v)); /* above 2^62 */
}

static void expect_error(char *const *envp, int argc, char **argv, const char *needle)
{
	oxs_config c;
	char err[256] = "";
	assert_int_equal(parse(&c, envp, argc, argv, err), -1);
	if (strstr(err, needle) == NULL)
		fail_msg("error '%s' does not mention '%s'", err, needle);
}

static void test_errors(void **state)
{
	(void)state;
	char *a1[] = {"serve", "--frobnicate", NULL};
	expect_error(NULL, 2, a1, "unknown option '--frobnicate'");
	char *a2[] = {"serve", "--port", "70000", NULL};
	expect_error(NULL, 3, a2, "--port");
	char *a3[] = {"serve", "--port", NULL};
	expect_error(NULL, 2, a3, "needs a value");
	char *a4[] = {"serve", "--max-upload=lots", NULL};
	expect_error(NULL, 2, a4, "--max-upload");
	char *a5[] = {"serve", "stray", NULL};
	expect_error(NULL, 2, a5, "unexpected argument");
	char *a6[] = {"serve", "--threads=0", NULL};
	expect_error(NULL, 2, a6, "--threads");
	char *a7[] = {"serve", "--read-token=r", NULL};
	expect_error(NULL, 2, a7, "--read-token needs --token");
	char *a8[] = {"serve", "--auth-reads", NULL};
	expect_error(NULL, 2, a8, "--auth-reads needs");
	char *a9[] = {"serve", "--max-upload=0", NULL};
	expect_error(NULL, 2, a9, "--max-upload");
	char *e1[] = {"ONNXVIZ_PORT=abc", NULL};
	char *a0[] = {"serve", NULL};
	expect_error(e1, 1, a0, "ONNXVIZ_PORT");
	char *e2[] = {"ONNXVIZ_EVICT_MODELS=maybe", NULL};
	expect_error(e2, 1, a0, "ONNXVIZ_EVICT_MODELS");
	char *a10[] = {"serve", "--no-port", NULL};
	expect_error(NULL, 2, a10, "unknown option");
	char *a11[] = {"serve", "--s3-part-size=4M", NULL};
	expect_error(NULL, 2, a11, "--s3-part-size");
	char *a12[] = {"serve", "--store=s3://b/p", "--cache-dir=", NULL};
	expect_error(NULL, 3, a12, "--cache-dir");
	char *a13[] = {"serve", "--s3-timeout=0", NULL};
	expect_error(NULL, 2, a13, "--s3-timeout");
	/* resumable parts end at a hash block (the midstate a replica hands on) */
	char *a14[] = {"serve", "--upload-part-size=100000", NULL};
	expect_error(NULL, 2, a14, "multiple of 64");
	/* pieces of one part at once: 1..8 */
	char *a15[] = {"serve", "--upload-streams=0", NULL};
	expect_error(NULL, 2, a15, "--upload-streams");
	char *a16[] = {"serve", "--upload-streams=9", NULL};
	expect_error(NULL, 2, a16, "--upload-streams");
}

/* --frame-ancestors: origins kept lower-cased and joined by one space; a path, a
 * wildcard, a bad port or scheme, a 17th origin refused with the bad one named; a
 * look-up matches an origin exactly (port included). */
static void test_frame_ancestors(void **state)
{
	(void)state;
	oxs_config c;
	oxs_config_default(&c);
	assert_string_equal(c.frame_ancestors, "");
	char *a1[] = {"serve", "--frame-ancestors", " https://Registry.Example.com,http://127.0.0.2:8080  https://[::1]:9 ", NULL};
	char err[256];
	assert_int_equal(oxs_config_parse(&c, 3, a1, NULL, err, sizeof(err)), 0);
	assert_string_equal(c.frame_ancestors, "https://registry.example.com http://127.0.0.2:8080 https://[::1]:9");
	assert_true(oxs_frame_ancestor_listed(c.frame_ancestors, "http://127.0.0.2:8080"));
	assert_true(oxs_frame_ancestor_listed(c.frame_ancestors, "https://registry.example.com"));
	assert_false(oxs_frame_ancestor_listed(c.frame_ancestors, "http://127.0.0.2"));
	assert_false(oxs_frame_ancestor_listed(c.frame_ancestors, "http://127.0.0.2:80"));
	assert_false(oxs_frame_ancestor_listed(c.frame_ancestors, "https://registry.example.co"));
	assert_false(oxs_frame_ancestor_listed(c.frame_ancestors, ""));
	assert_false(oxs_frame_ancestor_listed(c.frame_ancestors, NULL));
	static const char *const bad[] = {
	    "https://a.example/path", "https://*.example.com", "ftp://a.example", "a.example",
	    "https://a.example:0", "https://a.example:65536", "https://", "https://a.example:",
	    "https://.a.example", "https://a..example", "'self'", "https://a.example\"><x",
	    "https://[zz]", "*"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *a[] = {"serve", "--frame-ancestors", (char *)bad[i], NULL};
		expect_error(NULL, 3, a, "--frame-ancestors");
	}
	char many[2048] = "";
	for (int i = 0; i < OXS_FRAME_ANCESTORS_MAX + 1; i++)
		snprintf(many + strlen(many), sizeof(many) - strlen(many), "https://h%d.example ", i);
	char *a2[] = {"serve", "--frame-ancestors", many, NULL};
	expect_error(NULL, 3, a2, "at most 16");
	char *e1[] = {"ONNXVIZ_FRAME_ANCESTORS=https://wiki.example.org:8443", NULL};
	char *a3[] = {"serve", NULL};
	oxs_config_default(&c);
	assert_int_equal(oxs_config_parse(&c, 1, a3, e1, err, sizeof(err)), 0);
	assert_string_equal(c.frame_ancestors, "https://wiki.example.org:8443");
}

/* A file of the given mode holding text; its path in path[64]. */
static void secret_file(char *path, const char *text, mode_t mode)
{
	snprintf(path, 64, "/tmp/oxs-test-token-XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

/* --token-file: its one line is the token (LF or CRLF dropped); refused with --token too,
 * writable by others, empty, two lines. */
static void test_token_files(void **state)
{
	(void)state;
	oxs_config c;
	char err[256] = "", tf[64], rf[64], bad[64];
	secret_file(tf, "s3cret\r\n", 0600);
	secret_file(rf, "reader", 0644);
	char *a1[] = {"serve", "--token-file", tf, NULL};
	char *env[] = {NULL, NULL};
	char envbuf[128];
	snprintf(envbuf, sizeof(envbuf), "ONNXVIZ_READ_TOKEN_FILE=%s", rf);
	env[0] = envbuf;
	assert_int_equal(parse(&c, env, 3, a1, err), 0);
	assert_string_equal(c.token, "s3cret");
	assert_string_equal(c.read_token, "reader");
	char *a2[] = {"serve", "--token-file", tf, "--token", "x", NULL};
	expect_error(NULL, 5, a2, "give one of them");
	secret_file(bad, "writable\n", 0666);
	char *a3[] = {"serve", "--token-file", bad, NULL};
	expect_error(NULL, 3, a3, "others may write it");
	unlink(bad);
	secret_file(bad, "\n", 0600);
	expect_error(NULL, 3, a3, "empty");
	unlink(bad);
	secret_file(bad, "one\ntwo\n", 0600);
	expect_error(NULL, 3, a3, "more than one line");
	unlink(bad);
	expect_error(NULL, 3, a3, "No such file");
	unlink(tf);
	unlink(rf);
}

/* The values of --token and --read-token are overwritten in argv, in both spellings;
 * other arguments (--token-file's path included) are left alone. */
static void test_hide_secrets(void **state)
{
	(void)state;
	char a[6][32] = {"serve", "--token", "abc", "--read-token=de", "--token-file", "/p"};
	char *argv[] = {a[0], a[1], a[2], a[3], a[4], a[5], NULL};
	oxs_config_hide_secrets(6, argv);
	assert_string_equal(argv[2], "xxx");
	assert_string_equal(argv[3], "--read-token=xx");
	assert_string_equal(argv[4], "--token-file");
	assert_string_equal(argv[5], "/p");
}

/* --help names every environment variable the issue lists. */
static void test_usage(void **state)
{
	(void)state;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	oxs_config_usage(f);
	fclose(f);
	static const char *const vars[] = {
	    "ONNXVIZ_PORT",          "ONNXVIZ_BIND",          "ONNXVIZ_STORE",
	    "ONNXVIZ_MAX_UPLOAD",    "ONNXVIZ_TOKEN",         "ONNXVIZ_READ_TOKEN",
	    "ONNXVIZ_AUTH_READS",    "ONNXVIZ_THREADS",       "ONNXVIZ_LAYOUT_WORKERS",
	    "ONNXVIZ_LAYOUT_TIMEOUT", "ONNXVIZ_STORE_BUDGET", "ONNXVIZ_PORT_FILE",
	    "--port-file",           "--bind",                "--help",
	    "ONNXVIZ_CACHE_DIR",     "ONNXVIZ_S3_TIMEOUT",    "ONNXVIZ_S3_PART_SIZE",
	    "ONNXVIZ_SOURCE_BUCKETS", "AWS_",                "ONNXVIZ_TOKEN_FILE",
	    "ONNXVIZ_ALLOWED_HOSTS", "ONNXVIZ_MIN_BODY_RATE", "ONNXVIZ_INFLATE_RATIO_LIMIT"};
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (strstr(buf, vars[i]) == NULL)
			fail_msg("--help does not mention %s", vars[i]);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_defaults),  cmocka_unit_test(test_env_then_flags),
	    cmocka_unit_test(test_switches_and_help), cmocka_unit_test(test_sizes),
	    cmocka_unit_test(test_errors),    cmocka_unit_test(test_usage),
	    cmocka_unit_test(test_token_files), cmocka_unit_test(test_hide_secrets),
	    cmocka_unit_test(test_frame_ancestors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
