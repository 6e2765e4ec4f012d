/*
 * test_external.c — external data kept confined (parser/external.c).
 *
 * A temporary tree:
 *   outside/secret.bin        holds SECRET (must never come back)
 *   model/                    the directory the model's data may come from (dirfd)
 *   model/w.bin               16 good bytes
 *   model/sub/w2.bin          16 good bytes
 *   model/link_last       ->  ../outside/secret.bin      (symlink, last component)
 *   model/link_dir        ->  ../outside                 (symlink, parent component)
 *   model/sub/link_up     ->  ../../outside              (symlink, deeper parent)
 *   model/link_inside     ->  w.bin                      (symlinks are refused at all)
 *   model/hard.bin            hard link to outside/secret.bin
 *   model/h1.bin, h2.bin      two links to one file inside
 *   model/fifo, model/dir.bin a FIFO and a directory
 * Every location is tried with openat2 and with the portable component walk; each refusal
 * must name its rule, return no fd, and leak none.  Accepted regions are read back and
 * compared; nothing read ever contains the secret.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parser/oxp.h"
#include "tests/unit/support_fs.h"
#include "tests/unit/support_pbw.h"

#define SECRET "TOPSECRET-TOPSECRET-TOPSECRET-42"

static char root[256];
static int dirfd_model = -1;
static const char good[] = "GOODDATA-0123456"; /* 16 bytes */
static const char good2[] = "SUBDATA-abcdefgh";

static void put_file(const char *rel, const void *p, size_t n)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

static void at(char *buf, size_t size, const char *rel)
{
	snprintf(buf, size, "%s/%s", root, rel);
}

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/oxp_ext_XXXXXX");
	if (mkdtemp(root) == NULL)
		return -1;
	char a[512], b[512];
	at(a, sizeof(a), "outside");
	mkdir(a, 0755);
	at(a, sizeof(a), "model");
	mkdir(a, 0755);
	at(a, sizeof(a), "model/sub");
	mkdir(a, 0755);
	at(a, sizeof(a), "model/dir.bin");
	mkdir(a, 0755);
	put_file("outside/secret.bin", SECRET, strlen(SECRET));
	put_file("model/w.bin", good, 16);
	put_file("model/sub/w2.bin", good2, 16);
	put_file("model/h1.bin", good, 16);
	at(a, sizeof(a), "model/link_last");
	if (symlink("../outside/secret.bin", a) != 0)
		return -1;
	at(a, sizeof(a), "model/link_dir");
	if (symlink("../outside", a) != 0)
		return -1;
	at(a, sizeof(a), "model/sub/link_up");
	if (symlink("../../outside", a) != 0)
		return -1;
	at(a, sizeof(a), "model/link_inside");
	if (symlink("w.bin", a) != 0)
		return -1;
	at(a, sizeof(a), "outside/secret.bin");
	at(b, sizeof(b), "model/hard.bin");
	if (link(a, b) != 0)
		return -1;
	at(a, sizeof(a), "model/h1.bin");
	at(b, sizeof(b), "model/h2.bin");
	if (link(a, b) != 0)
		return -1;
	at(a, sizeof(a), "model/fifo");
	if (mkfifo(a, 0644) != 0)
		return -1;
	at(a, sizeof(a), "model");
	dirfd_model = open(a, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return dirfd_model < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	if (dirfd_model >= 0)
		close(dirfd_model);
	return sfs_remove_tree(root);
}

/* A UINT8 tensor of `count` elements with the given external_data entries (pairs of key,
 * value; lengths given so NUL bytes can be embedded). */
typedef struct kv {
	const char *k;
	size_t klen;
	const char *v;
	size_t vlen;
} kv;

static oxp_model *ext_tensor(pbw *b, int32_t dt, int64_t count, const kv *kvs, size_t n,
                             bool external)
{
	pbw_free(b);
	pbw_tensor_head(b, &count, 1, dt);
	for (size_t i = 0; i < n; i++)
		pbw_entry(b, 13, kvs[i].k, kvs[i].klen, kvs[i].v, kvs[i].vlen);
	if (external)
		pbw_int(b, 14, 1);
	oxp_error err;
	oxp_model *m = pbw_parse(b, &err);
	assert_non_null(m);
	return m;
}

#define KV(k, v) {k, sizeof(k) - 1, v, sizeof(v) - 1}

/* Open `location` (and optional offset/length) both ways; expect rule `want`.  On success
 * returns the bytes read through the map in buf (16 max). */
static void expect_loc(const char *loc, size_t loclen, const char *offset,
                       const char *length, int64_t count, oxp_ext_rule want)
{
	for (unsigned flags = 0; flags <= OXP_EXT_NO_OPENAT2; flags += OXP_EXT_NO_OPENAT2) {
		kv kvs[3] = {{"location", 8, loc, loclen}};
		size_t n = 1;
		if (offset)
			kvs[n++] = (kv){"offset", 6, offset, strlen(offset)};
		if (length)
			kvs[n++] = (kv){"length", 6, length, strlen(length)};
		pbw b = {0};
		oxp_model *m = ext_tensor(&b, OXP_DT_UINT8, count, kvs, n, true);
		const oxp_tensor *t = oxp_model_tensor_get(m);
		int fds = sfs_count_fds();
		oxp_external_file f = {-1, 0, 0, 0};
		oxp_ext_rule rule = OXP_EXT__COUNT;
		oxp_error err;
		oxp_code rc = oxp_external_open(&f, dirfd_model, t, flags, &rule, &err);
		if (rule != want)
			fprintf(stderr, "location '%.*s' (%s): rule %s, want %s: %s\n", (int)loclen, loc,
			        flags ? "walk" : "openat2", oxp_ext_rule_name(rule),
			        oxp_ext_rule_name(want), err.message);
		assert_int_equal(rule, want);
		if (want != OXP_EXT_OK) {
			assert_int_not_equal(rc, OXP_OK);
			assert_int_equal(f.fd, -1); /* nothing handed out */
			assert_int_equal(sfs_count_fds(), fds); /* nothing leaked */
			assert_non_null(strstr(err.message, oxp_ext_rule_name(want)));
		} else {
			assert_int_equal(rc, OXP_OK);
			assert_true(f.fd >= 0);
			oxp_external_region r;
			assert_int_equal(oxp_external_map(&r, &f, &err), OXP_OK);
			assert_int_equal(r.nbytes, (size_t)count);
			assert_null(memmem(r.bytes, r.nbytes, "TOPSECRET", 9));
			uint64_t v[16];
			assert_int_equal(oxp_tensor_read_u64(t, r.bytes, r.nbytes, 0, (size_t)count, v,
			                                     &err), OXP_OK);
			const char *src = strncmp(loc, "./sub", 5) == 0 ? good2 : good;
			size_t off = offset ? (size_t)atoi(offset) : 0;
			for (int64_t i = 0; i < count; i++)
				assert_int_equal(v[i], (uint8_t)src[off + (size_t)i]);
			oxp_external_unmap(&r);
			oxp_external_close(&f);
			assert_int_equal(f.fd, -1);
			assert_int_equal(sfs_count_fds(), fds);
		}
		oxp_model_free(m);
		pbw_free(&b);
	}
}

#define LOC(s) s, sizeof(s) - 1

static void test_good_locations(void **state)
{
	(void)state;
	expect_loc(LOC("w.bin"), NULL, NULL, 16, OXP_EXT_OK);
	expect_loc(LOC("w.bin"), "4", "8", 8, OXP_EXT_OK);   /* unaligned offset */
	expect_loc(LOC("w.bin"), "16", NULL, 0, OXP_EXT_OK);  /* empty region at the end */
	expect_loc(LOC("./sub//w2.bin"), "0", "16", 16, OXP_EXT_OK);
}

static void test_traversal_refused(void **state)
{
	(void)state;
	expect_loc(LOC("../outside/secret.bin"), NULL, NULL, 4, OXP_EXT_DOTDOT);
	expect_loc(LOC("a/../../outside/secret.bin"), NULL, NULL, 4, OXP_EXT_DOTDOT);
	expect_loc(LOC("sub/../../outside/secret.bin"), NULL, NULL, 4, OXP_EXT_DOTDOT);
	expect_loc(LOC("a/.."), NULL, NULL, 4, OXP_EXT_DOTDOT);
	expect_loc(LOC(".."), NULL, NULL, 4, OXP_EXT_DOTDOT);
	expect_loc(LOC("sub/../w.bin"), NULL, NULL, 16, OXP_EXT_DOTDOT); /* even when harmless */
	char abs[600];
	snprintf(abs, sizeof(abs), "%s/outside/secret.bin", root);
	expect_loc(abs, strlen(abs), NULL, NULL, 4, OXP_EXT_ABSOLUTE);
	expect_loc(LOC("/etc/passwd"), NULL, NULL, 4, OXP_EXT_ABSOLUTE);
	expect_loc(LOC("C:\\x"), NULL, NULL, 4, OXP_EXT_DRIVE);
	expect_loc(LOC("c:/x"), NULL, NULL, 4, OXP_EXT_DRIVE);
	expect_loc(LOC("\\\\server\\share\\x"), NULL, NULL, 4, OXP_EXT_BACKSLASH);
	expect_loc(LOC("..\\outside\\secret.bin"), NULL, NULL, 4, OXP_EXT_BACKSLASH);
	expect_loc(LOC("w.bin\0../../outside/secret.bin"), NULL, NULL, 4, OXP_EXT_NUL);
	expect_loc(LOC(""), NULL, NULL, 4, OXP_EXT_EMPTY_LOCATION);
	expect_loc(LOC("."), NULL, NULL, 4, OXP_EXT_EMPTY_LOCATION);
	expect_loc(LOC("./"), NULL, NULL, 4, OXP_EXT_EMPTY_LOCATION);
	expect_loc(LOC("sub/"), NULL, NULL, 4, OXP_EXT_EMPTY_LOCATION);
	expect_loc(LOC("w.bin/."), NULL, NULL, 4, OXP_EXT_EMPTY_LOCATION);
	static char longloc[5000];
	memset(longloc, 'a', sizeof(longloc));
	expect_loc(longloc, sizeof(longloc), NULL, NULL, 4, OXP_EXT_TOO_LONG);
}

static void test_links_refused(void **state)
{
	(void)state;
	expect_loc(LOC("link_last"), NULL, NULL, 4, OXP_EXT_SYMLINK);
	expect_loc(LOC("link_dir/secret.bin"), NULL, NULL, 4, OXP_EXT_SYMLINK);
	expect_loc(LOC("sub/link_up/secret.bin"), NULL, NULL, 4, OXP_EXT_SYMLINK);
	expect_loc(LOC("./link_inside"), NULL, NULL, 16, OXP_EXT_SYMLINK);
	expect_loc(LOC("hard.bin"), NULL, NULL, 4, OXP_EXT_HARDLINK);
	expect_loc(LOC("h1.bin"), NULL, NULL, 16, OXP_EXT_HARDLINK);
	expect_loc(LOC("fifo"), NULL, NULL, 4, OXP_EXT_NOT_REGULAR); /* and does not block */
	expect_loc(LOC("dir.bin"), NULL, NULL, 4, OXP_EXT_NOT_REGULAR);
	expect_loc(LOC("w.bin/x"), NULL, NULL, 4, OXP_EXT_NOT_REGULAR);
	expect_loc(LOC("missing.bin"), NULL, NULL, 4, OXP_EXT_NOT_FOUND);
}

static void test_numbers_refused(void **state)
{
	(void)state;
	static const char *const bad[] = {"-1", "+1", " 1", "1 ", "0x10", "", "1e3", "1.0",
	                                  "１"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		expect_loc(LOC("w.bin"), bad[i], NULL, 4, OXP_EXT_BAD_NUMBER);
		expect_loc(LOC("w.bin"), NULL, bad[i], 4, OXP_EXT_BAD_NUMBER);
	}
	expect_loc(LOC("w.bin"), "9223372036854775808", NULL, 4, OXP_EXT_NUMBER_RANGE);
	expect_loc(LOC("w.bin"), "99999999999999999999999", NULL, 4, OXP_EXT_NUMBER_RANGE);
	expect_loc(LOC("w.bin"), NULL, "18446744073709551615", 4, OXP_EXT_NUMBER_RANGE);
	expect_loc(LOC("w.bin"), "9223372036854775807", "4", 4, OXP_EXT_NUMBER_RANGE);
	/* length must be what dims x dtype need; a petabyte length is just a mismatch */
	expect_loc(LOC("w.bin"), NULL, "15", 16, OXP_EXT_LENGTH);
	expect_loc(LOC("w.bin"), NULL, "1125899906842624", 16, OXP_EXT_LENGTH);
	/* within the file, checked with the offset */
	expect_loc(LOC("w.bin"), "8", NULL, 16, OXP_EXT_PAST_EOF);
	expect_loc(LOC("w.bin"), "17", "0", 0, OXP_EXT_PAST_EOF);
	expect_loc(LOC("w.bin"), "1000000000", "4", 4, OXP_EXT_PAST_EOF);
	expect_loc(LOC("w.bin"), "0001", "0015", 15, OXP_EXT_OK); /* leading zeros are digits */
}

static oxp_ext_rule parse_rule(const kv *kvs, size_t n, int32_t dt, bool external,
                               oxp_code *code)
{
	pbw b = {0};
	oxp_model *m = ext_tensor(&b, dt, 4, kvs, n, external);
	oxp_external x;
	oxp_ext_rule rule = OXP_EXT__COUNT;
	oxp_error err;
	*code = oxp_external_parse(oxp_model_tensor_get(m), &x, &rule, &err);
	assert_int_equal(*code, err.code);
	oxp_model_free(m);
	pbw_free(&b);
	return rule;
}

static void test_keys(void **state)
{
	(void)state;
	oxp_code code;
	const kv unknown[] = {KV("location", "w.bin"), KV("__class__", "x")};
	assert_int_equal(parse_rule(unknown, 2, OXP_DT_UINT8, true, &code), OXP_EXT_UNKNOWN_KEY);
	assert_int_equal(code, OXP_E_EXTERNAL);
	const kv basepath[] = {KV("location", "w.bin"), KV("basepath", "/")};
	assert_int_equal(parse_rule(basepath, 2, OXP_DT_UINT8, true, &code), OXP_EXT_UNKNOWN_KEY);
	const kv dup[] = {KV("location", "w.bin"), KV("location", "../x")};
	assert_int_equal(parse_rule(dup, 2, OXP_DT_UINT8, true, &code), OXP_EXT_DUPLICATE_KEY);
	const kv dupoff[] = {KV("offset", "0"), KV("location", "w.bin"), KV("offset", "0")};
	assert_int_equal(parse_rule(dupoff, 3, OXP_DT_UINT8, true, &code), OXP_EXT_DUPLICATE_KEY);
	const kv noloc[] = {KV("offset", "0")};
	assert_int_equal(parse_rule(noloc, 1, OXP_DT_UINT8, true, &code), OXP_EXT_NO_LOCATION);
	const kv ok[] = {KV("location", "w.bin"), KV("checksum", "abc"), KV("length", "8")};
	assert_int_equal(parse_rule(ok, 3, OXP_DT_UINT16, true, &code), OXP_EXT_OK);
	assert_int_equal(code, OXP_OK);
	assert_int_equal(parse_rule(ok, 3, OXP_DT_UINT16, false, &code), OXP_EXT_NOT_EXTERNAL);
	assert_int_equal(parse_rule(ok, 3, OXP_DT_STRING, true, &code), OXP_EXT_DTYPE);
	assert_int_equal(code, OXP_E_DTYPE);
	assert_int_equal(parse_rule(ok, 3, 0, true, &code), OXP_EXT_DTYPE);
	assert_int_equal(parse_rule(ok, 3, OXP_DT_UINT8, true, &code), OXP_EXT_LENGTH);
	assert_int_equal(code, OXP_E_STORAGE);

	/* the values: offset, length (given or needed), checksum */
	pbw b = {0};
	oxp_model *m = ext_tensor(&b, OXP_DT_FLOAT, 4, ok + 0, 2, true);
	oxp_external x;
	oxp_error err;
	assert_int_equal(oxp_external_parse(oxp_model_tensor_get(m), &x, NULL, &err), OXP_OK);
	assert_int_equal(x.length, 16);
	assert_false(x.has_length);
	assert_int_equal(x.checksum.len, 3);
	assert_true(oxp_str_eq(x.location, "w.bin"));
	oxp_model_free(m);

	/* values stored inline as well */
	pbw_free(&b);
	int64_t four = 4;
	pbw_tensor_head(&b, &four, 1, OXP_DT_UINT8);
	pbw_entry(&b, 13, "location", 8, "w.bin", 5);
	pbw_bytes(&b, 9, "abcd", 4);
	pbw_int(&b, 14, 1);
	m = pbw_parse(&b, &err);
	assert_non_null(m);
	oxp_ext_rule rule;
	assert_int_equal(oxp_external_parse(oxp_model_tensor_get(m), &x, &rule, &err),
	                 OXP_E_STORAGE);
	assert_int_equal(rule, OXP_EXT_INLINE_DATA);
	oxp_model_free(m);
	pbw_free(&b);

	/* every rule has a distinct stable name */
	for (int i = 0; i < OXP_EXT__COUNT; i++) {
		assert_string_not_equal(oxp_ext_rule_name((oxp_ext_rule)i), "unknown");
		for (int j = 0; j < i; j++)
			assert_string_not_equal(oxp_ext_rule_name((oxp_ext_rule)i),
			                        oxp_ext_rule_name((oxp_ext_rule)j));
	}
	assert_string_equal(oxp_ext_rule_name(OXP_EXT__COUNT), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_good_locations),
	    cmocka_unit_test(test_traversal_refused),
	    cmocka_unit_test(test_links_refused),
	    cmocka_unit_test(test_numbers_refused),
	    cmocka_unit_test(test_keys),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
