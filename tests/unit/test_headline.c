/*
 * test_headline.c — parse failures in a person's words (parser/headline.c,
 * oxp_error_headline): what each kind of file is said to be, the figures of a cut file,
 * damage inside a message never taken for a cut, nothing said for codes whose message is
 * already plain; and every prefix of a small model, in a buffer of exactly its size, gives
 * a headline without a word of the encoding (ASan sees any read past the bytes given).
 */
#include "parser/oxp.h"
#include "tests/unit/support_pb.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* The headline of parsing bytes s[0..n) (copied into a buffer of exactly n bytes). */
static const char *headline_of(const void *s, size_t n, char *out, size_t size)
{
	uint8_t *buf = malloc(n ? n : 1);
	assert_non_null(buf);
	memcpy(buf, s, n);
	oxp_model *m = NULL;
	oxp_error e;
	memset(&e, 0, sizeof(e));
	oxp_code rc = oxp_model_parse(&m, buf, n, NULL, &e);
	assert_int_not_equal(rc, OXP_OK);
	oxp_error_headline(&e, buf, n, n, out, size);
	free(buf);
	return out;
}

/* No word of the encoding in a headline. */
static void assert_plain(const char *h)
{
	static const char *const words[] = {"protobuf", "wire", "varint", "tag", "field",
	                                    "ModelProto", "length prefix", "group", "byte "};
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strstr(h, words[i]) != NULL)
			fail_msg("'%s' in the headline \"%s\"", words[i], h);
}

#define HEAD(lit, buf) headline_of(lit, sizeof(lit) - 1, buf, sizeof(buf))

static void test_kinds_of_file(void **state)
{
	(void)state;
	char b[512];
	assert_string_equal(headline_of("", 0, b, sizeof(b)),
	                    "the file is empty (0 bytes): was it saved or copied completely?");
	assert_string_equal(HEAD("These are my notes.\nNot a model.\n", b),
	                    "this is not an ONNX model: it looks like text");
	assert_string_equal(HEAD("Les r\xc3\xa9sultats \xe2\x80\x94 notes\n", b),
	                    "this is not an ONNX model: it looks like text");
	assert_string_equal(HEAD("  <!DOCTYPE html><html>", b),
	                    "this is not an ONNX model: it looks like text (HTML or XML: a web "
	                    "page saved instead of the file?)");
	assert_string_equal(HEAD("{\"traceEvents\": []}", b),
	                    "this is not an ONNX model: it looks like JSON text");
	assert_string_equal(HEAD("version https://git-lfs.github.com/spec/v1\n", b),
	                    "this is not an ONNX model: it looks like text (a Git LFS pointer or "
	                    "a link, not the file itself?)");
	assert_string_equal(HEAD("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", b),
	                    "this is not an ONNX model: it is a PNG image");
	assert_string_equal(HEAD("\x1f\x8b\x08\0\0\0\0\0", b),
	                    "this is not an ONNX model: it is gzip-compressed: decompress it "
	                    "first (gunzip)");
	assert_non_null(strstr(HEAD("PK\x03\x04\x14\0\0\0", b), "zip archive"));
	assert_non_null(strstr(HEAD("\x80\x02}q\0", b), "Python pickle"));
	assert_non_null(strstr(HEAD("GGUF\x03\0\0\0", b), "GGUF"));
	/* an invalid UTF-8 byte is not text; these bytes happen to read as fields, of
	 * something else */
	assert_string_equal(HEAD("abc\xff\xfe def", b),
	                    "this is not an ONNX model: it has neither a graph nor an ONNX "
	                    "version (another format saved as .onnx?)");
	/* nor are they when they do not read at all: an 11-byte varint */
	assert_string_equal(HEAD("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", b),
	                    "this is not an ONNX model, or it is damaged: its bytes do not read "
	                    "as one");
}

static void test_cut_and_damaged(void **state)
{
	(void)state;
	char b[512];
	/* ir_version 7, then a graph of 300 bytes of which 3 are there: cut */
	assert_string_equal(HEAD("\x08\x07\x3a\xac\x02\x0a\x01\x00", b),
	                    "the file ends early: 8 of at least 305 bytes — was the download or "
	                    "copy cut short?");
	/* a graph of 3 bytes holding a node of 127: damage inside it, though past the end */
	assert_string_equal(HEAD("\x08\x07\x3a\x03\x0a\x7f\x00\x12\x05" "abcde", b),
	                    "the model is damaged: a part of it claims more bytes than it holds "
	                    "(or this is not an ONNX model)");
	/* cut inside a length prefix: no figures to give */
	assert_string_equal(HEAD("\x08\x07\x3a\xac", b),
	                    "the file ends early: was the download or copy cut short?");
	/* the bytes at the offset unknown (head shorter than the offset): no figures */
	oxp_error e = {.code = OXP_E_LENGTH, .offset = 100, .path = "graph"};
	oxp_error_headline(&e, (const uint8_t *)"\x08\x07", 2, 5000, b, sizeof(b));
	assert_string_equal(b, "the model is damaged: a part of it claims more bytes than it holds "
	                       "(or this is not an ONNX model)");
	/* nothing known of the file at all */
	oxp_error_headline(&e, NULL, 0, UINT64_MAX, b, sizeof(b));
	assert_plain(b);
	/* codes whose message is already plain: nothing added; and a buffer of 1 */
	oxp_error x = {.code = OXP_E_STORAGE};
	assert_string_equal(oxp_error_headline(&x, NULL, 0, 10, b, sizeof(b)), "");
	oxp_error_headline(&e, NULL, 0, 10, b, 1);
	assert_string_equal(b, "");
}

/* Every prefix of a model, each in a buffer of exactly its size: a headline in plain words
 * (a prefix that parses has none to give). */
static void test_every_prefix(void **state)
{
	(void)state;
	static const char *const names[] = {"metadata.onnx", "packed.onnx", "unknown_fields.onnx"};
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		pb file = fixture_bytes(names[k]);
		for (size_t n = 0; n <= file.n; n++) {
			uint8_t *buf = malloc(n ? n : 1);
			assert_non_null(buf);
			memcpy(buf, file.p, n);
			oxp_model *m = NULL;
			oxp_error e;
			memset(&e, 0, sizeof(e));
			char h[512];
			if (oxp_model_parse(&m, buf, n, NULL, &e) == OXP_OK) {
				oxp_model_free(m);
			} else {
				oxp_error_headline(&e, buf, n, n, h, sizeof(h));
				assert_true(h[0] != '\0');
				assert_plain(h);
			}
			free(buf);
		}
		pb_free(&file);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_kinds_of_file),
	    cmocka_unit_test(test_cut_and_damaged),
	    cmocka_unit_test(test_every_prefix),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
