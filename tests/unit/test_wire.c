/*
 * test_wire.c — the checked wire reader (parser/wire.c, declared in parser/internal.h):
 * every wire type, varint edge values, tags, lengths checked before any pointer is formed,
 * the reader left in place on every error; and truncation of a small valid model at every
 * byte (each prefix, in a buffer of exactly its size, must decode or fail cleanly).
 *
 * This test reaches into parser/internal.h on purpose: the wire reader has no public API.
 */
#include "parser/internal.h"
#include "tests/unit/support_pb.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define R(bytes) ((oxp_reader){(const uint8_t *)(bytes), sizeof(bytes) - 1})

/* Reads one varint from s[0..n) and checks the result, the bytes consumed (on success) or
 * that the reader did not move (on error). */
static void expect_varint(const char *s, size_t n, oxp_code want, uint64_t value,
                          size_t used)
{
	oxp_reader r = {(const uint8_t *)s, n};
	uint64_t v = 12345;
	oxp_code rc = oxp__rd_varint(&r, &v);
	assert_int_equal(rc, want);
	if (want == OXP_OK) {
		assert_true(v == value);
		assert_int_equal(n - r.left, used);
		assert_ptr_equal(r.p, (const uint8_t *)s + used);
	} else {
		assert_int_equal(r.left, n);
		assert_ptr_equal(r.p, (const uint8_t *)s);
		assert_true(v == 12345); /* output untouched */
	}
}

static void test_varint_values(void **state)
{
	(void)state;
	expect_varint("\x00", 1, OXP_OK, 0, 1);
	expect_varint("\x01", 1, OXP_OK, 1, 1);
	expect_varint("\x7f", 1, OXP_OK, 127, 1);
	expect_varint("\x80\x01", 2, OXP_OK, 128, 2);
	expect_varint("\xac\x02", 2, OXP_OK, 300, 2);
	expect_varint("\xff\xff\xff\xff\x0f", 5, OXP_OK, UINT32_MAX, 5);
	/* 2^63: ten bytes, the tenth carrying bit 63 */
	expect_varint("\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", 10, OXP_OK, (uint64_t)1 << 63,
	              10);
	/* 2^64-1, the largest 10-byte varint */
	expect_varint("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10, OXP_OK, UINT64_MAX, 10);
	/* -1 as int64, as protobuf writes it */
	expect_varint("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\x08", 11, OXP_OK, UINT64_MAX, 10);
	/* a non-minimal encoding of 0 is still 0 */
	expect_varint("\x80\x80\x00", 3, OXP_OK, 0, 3);
	/* the reader stops after the varint: trailing bytes stay */
	expect_varint("\x05\x06", 2, OXP_OK, 5, 1);
}

static void test_varint_errors(void **state)
{
	(void)state;
	/* 10th byte above 1: above 2^64-1 */
	expect_varint("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 10, OXP_E_VARINT, 0, 0);
	expect_varint("\x80\x80\x80\x80\x80\x80\x80\x80\x80\x7f", 10, OXP_E_VARINT, 0, 0);
	/* 11 bytes: the 10th still has its continuation bit */
	expect_varint("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x81\x00", 11, OXP_E_VARINT, 0, 0);
	expect_varint("\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", 11, OXP_E_VARINT, 0, 0);
	/* ten continuation bytes and nothing after them */
	expect_varint("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 10, OXP_E_VARINT, 0, 0);
	/* truncated: input ends inside the varint */
	expect_varint("", 0, OXP_E_TRUNCATED, 0, 0);
	expect_varint("\x80", 1, OXP_E_TRUNCATED, 0, 0);
	expect_varint("\xff\xff\xff\xff\xff\xff\xff\xff\xff", 9, OXP_E_TRUNCATED, 0, 0);
	/* the reader's limit is honoured even when more bytes follow in memory */
	expect_varint("\x80\x01", 1, OXP_E_TRUNCATED, 0, 0);
}

static void expect_tag(const char *s, size_t n, oxp_code want, uint32_t field, unsigned wt)
{
	oxp_reader r = {(const uint8_t *)s, n};
	uint32_t f = 77;
	unsigned w = 77;
	oxp_code rc = oxp__rd_tag(&r, &f, &w);
	assert_int_equal(rc, want);
	if (want == OXP_OK) {
		assert_int_equal(f, field);
		assert_int_equal(w, wt);
	} else {
		assert_int_equal(r.left, n);
		assert_ptr_equal(r.p, (const uint8_t *)s);
	}
}

static void test_tags(void **state)
{
	(void)state;
	expect_tag("\x08", 1, OXP_OK, 1, OXP_WT_VARINT);
	expect_tag("\x3a", 1, OXP_OK, 7, OXP_WT_LEN);
	expect_tag("\x0d", 1, OXP_OK, 1, OXP_WT_I32);
	expect_tag("\x09", 1, OXP_OK, 1, OXP_WT_I64);
	expect_tag("\x0b", 1, OXP_OK, 1, OXP_WT_SGROUP);
	expect_tag("\x0c", 1, OXP_OK, 1, OXP_WT_EGROUP);
	expect_tag("\x0e", 1, OXP_OK, 1, 6);
	expect_tag("\xa0\x01", 2, OXP_OK, 20, OXP_WT_VARINT);
	expect_tag("\xca\x01", 2, OXP_OK, 25, OXP_WT_LEN);
	/* the largest field number, 2^29-1, in 5 bytes */
	expect_tag("\xf8\xff\xff\xff\x0f", 5, OXP_OK, (1u << 29) - 1, OXP_WT_VARINT);
	/* field number 0, in one byte and in a padded form */
	expect_tag("\x00", 1, OXP_E_TAG, 0, 0);
	expect_tag("\x02", 1, OXP_E_TAG, 0, 0);
	expect_tag("\x80\x00", 2, OXP_E_TAG, 0, 0);
	/* field number above 2^29-1 (tag above 2^32-1) */
	expect_tag("\x80\x80\x80\x80\x10", 5, OXP_E_TAG, 0, 0);
	/* longer than 5 bytes, even when the value is small */
	expect_tag("\x88\x80\x80\x80\x80\x00", 6, OXP_E_TAG, 0, 0);
	/* an 11-byte varint as tag is a tag error */
	expect_tag("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11, OXP_E_TAG, 0, 0);
	/* truncated */
	expect_tag("", 0, OXP_E_TRUNCATED, 0, 0);
	expect_tag("\xa0", 1, OXP_E_TRUNCATED, 0, 0);
}

static void test_fixed(void **state)
{
	(void)state;
	const char *b = "\x01\x02\x03\x04\x05\x06\x07\x08";
	uint32_t v32 = 0;
	uint64_t v64 = 0;
	oxp_reader r = {(const uint8_t *)b, 8};
	assert_int_equal(oxp__rd_fixed32(&r, &v32), OXP_OK);
	assert_int_equal(v32, 0x04030201u);
	assert_int_equal(r.left, 4);
	r = (oxp_reader){(const uint8_t *)b, 8};
	assert_int_equal(oxp__rd_fixed64(&r, &v64), OXP_OK);
	assert_true(v64 == 0x0807060504030201ull);
	assert_int_equal(r.left, 0);
	/* every short length is truncated and leaves the reader alone */
	for (size_t n = 0; n < 8; n++) {
		r = (oxp_reader){(const uint8_t *)b, n};
		if (n < 4)
			assert_int_equal(oxp__rd_fixed32(&r, &v32), OXP_E_TRUNCATED);
		assert_int_equal(oxp__rd_fixed64(&r, &v64), OXP_E_TRUNCATED);
		assert_int_equal(r.left, n);
	}
}

static void test_bytes(void **state)
{
	(void)state;
	const uint8_t *p = NULL;
	size_t len = 99;
	oxp_reader r = R("\x00");
	assert_int_equal(oxp__rd_bytes(&r, &p, &len), OXP_OK);
	assert_int_equal(len, 0);
	assert_int_equal(r.left, 0);

	r = R("\x03"
	      "abc"
	      "d");
	assert_int_equal(oxp__rd_bytes(&r, &p, &len), OXP_OK);
	assert_int_equal(len, 3);
	assert_memory_equal(p, "abc", 3);
	assert_int_equal(r.left, 1);

	/* exactly the remaining bytes, then one more than remain */
	r = R("\x02"
	      "ab");
	assert_int_equal(oxp__rd_bytes(&r, &p, &len), OXP_OK);
	const char *over = "\x03"
	                   "ab";
	r = (oxp_reader){(const uint8_t *)over, 3};
	assert_int_equal(oxp__rd_bytes(&r, &p, &len), OXP_E_LENGTH);
	assert_ptr_equal(r.p, (const uint8_t *)over);
	assert_int_equal(r.left, 3);

	/* lengths of 2^32, 2^63 and 2^64-1 are compared, never added to a pointer */
	static const char *const huge[] = {"\x80\x80\x80\x80\x10", /* 2^32 */
	                                   "\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01",
	                                   "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"};
	for (size_t i = 0; i < 3; i++) {
		r = (oxp_reader){(const uint8_t *)huge[i], strlen(huge[i])};
		size_t left = r.left;
		assert_int_equal(oxp__rd_bytes(&r, &p, &len), OXP_E_LENGTH);
		assert_int_equal(r.left, left);
	}
	/* a bad length varint is reported as such */
	r = R("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02");
	assert_int_equal(oxp__rd_bytes(&r, &p, &len), OXP_E_VARINT);
	r = R("\x80");
	assert_int_equal(oxp__rd_bytes(&r, &p, &len), OXP_E_TRUNCATED);
}

static void test_skip(void **state)
{
	(void)state;
	oxp_reader r = R("\xac\x02X");
	assert_int_equal(oxp__rd_skip(&r, OXP_WT_VARINT), OXP_OK);
	assert_int_equal(r.left, 1);
	r = R("12345678X");
	assert_int_equal(oxp__rd_skip(&r, OXP_WT_I64), OXP_OK);
	assert_int_equal(r.left, 1);
	r = R("1234X");
	assert_int_equal(oxp__rd_skip(&r, OXP_WT_I32), OXP_OK);
	assert_int_equal(r.left, 1);
	r = R("\x02"
	      "abX");
	assert_int_equal(oxp__rd_skip(&r, OXP_WT_LEN), OXP_OK);
	assert_int_equal(r.left, 1);
	/* groups are rejected, wire types 6 and 7 are invalid */
	r = R("\x00");
	assert_int_equal(oxp__rd_skip(&r, OXP_WT_SGROUP), OXP_E_GROUP);
	assert_int_equal(oxp__rd_skip(&r, OXP_WT_EGROUP), OXP_E_GROUP);
	assert_int_equal(oxp__rd_skip(&r, 6), OXP_E_WIRETYPE);
	assert_int_equal(oxp__rd_skip(&r, 7), OXP_E_WIRETYPE);
	assert_int_equal(r.left, 1);
	/* truncated payloads of every wire type */
	r = R("\x80");
	assert_int_equal(oxp__rd_skip(&r, OXP_WT_VARINT), OXP_E_TRUNCATED);
	r = R("1234567");
	assert_int_equal(oxp__rd_skip(&r, OXP_WT_I64), OXP_E_TRUNCATED);
	r = R("123");
	assert_int_equal(oxp__rd_skip(&r, OXP_WT_I32), OXP_E_TRUNCATED);
	r = R("\x05"
	      "abcd");
	assert_int_equal(oxp__rd_skip(&r, OXP_WT_LEN), OXP_E_LENGTH);
	assert_int_equal(r.left, 5);
}

static void test_packed_count(void **state)
{
	(void)state;
	size_t n = 99;
	assert_int_equal(oxp__packed_varint_count((const uint8_t *)"", 0, &n), OXP_OK);
	assert_int_equal(n, 0);
	/* 1, 300, 2^63, 0 */
	const char *p = "\x01\xac\x02\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01\x00";
	assert_int_equal(oxp__packed_varint_count((const uint8_t *)p, 14, &n), OXP_OK);
	assert_int_equal(n, 4);
	/* the last varint cut short */
	assert_int_equal(oxp__packed_varint_count((const uint8_t *)"\x01\xac", 2, &n),
	                 OXP_E_PACKED);
	assert_int_equal(oxp__packed_varint_count((const uint8_t *)"\x80", 1, &n), OXP_E_PACKED);
}

/* ---------------------------------------------------------------------------------------
 * Truncation of a valid model at every byte.
 */
/* Offsets where a top-level field of buf ends (a prefix ending there is a valid, shorter
 * model as far as the wire format goes). */
static size_t top_boundaries(const uint8_t *buf, size_t len, size_t *ends, size_t max)
{
	oxp_reader r = {buf, len};
	size_t n = 0;
	while (r.left > 0 && n < max) {
		uint32_t field;
		unsigned wt;
		assert_int_equal(oxp__rd_tag(&r, &field, &wt), OXP_OK);
		assert_int_equal(oxp__rd_skip(&r, wt), OXP_OK);
		ends[n++] = len - r.left;
	}
	return n;
}

static void check_prefixes(const char *name)
{
	pb file = fixture_bytes(name);
	const uint8_t *full = file.p;
	size_t len = file.n;
	size_t ends[4096];
	size_t nends = top_boundaries(full, len, ends, 4096);
	size_t ok = 0;
	for (size_t n = 0; n <= len; n++) {
		/* a buffer of exactly n bytes, so ASan sees any read past its end */
		uint8_t *buf = malloc(n ? n : 1);
		assert_non_null(buf);
		memcpy(buf, full, n);
		oxp_model *m = NULL;
		oxp_error e;
		oxp_code rc = oxp_model_parse(&m, buf, n, NULL, &e);
		bool boundary = n == 0;
		for (size_t i = 0; i < nends; i++)
			boundary |= ends[i] == n;
		if (rc == OXP_OK) {
			ok++;
			assert_true(boundary);
			oxp_model_free(m);
		} else {
			assert_null(m);
			assert_int_equal(e.code, rc);
			assert_true(e.offset <= n);
			assert_true(e.message[0] != '\0');
			if (boundary)
				assert_int_equal(rc, OXP_E_NOT_MODEL); /* a prefix of fields, but no
				                                          graph or ir_version yet */
			else
				assert_true(rc == OXP_E_TRUNCATED || rc == OXP_E_LENGTH);
		}
		free(buf);
	}
	assert_true(ok >= 1); /* at least the whole file */
	pb_free(&file);
}

static void test_truncation_every_byte(void **state)
{
	(void)state;
	check_prefixes("metadata.onnx");
	check_prefixes("packed.onnx");
	check_prefixes("unknown_fields.onnx");
	check_prefixes("merge.onnx");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_varint_values),
	    cmocka_unit_test(test_varint_errors),
	    cmocka_unit_test(test_tags),
	    cmocka_unit_test(test_fixed),
	    cmocka_unit_test(test_bytes),
	    cmocka_unit_test(test_skip),
	    cmocka_unit_test(test_packed_count),
	    cmocka_unit_test(test_truncation_every_byte),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
