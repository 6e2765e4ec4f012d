/*
 * test_attrtext.c — the one attribute formatter (parser/attrtext.c, oxp_attr_text) and the
 * UTF-8 module under it (parser/text.c), on their own: what each attribute type reads as,
 * where lists and strings are cut, model bytes as display text, and that a short buffer
 * cuts on a character boundary (a prefix of the full text, still valid UTF-8).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "parser/oxp.h"

static oxp_str S(const char *s)
{
	return (oxp_str){s, strlen(s)};
}

static const char *fmt(const oxp_attr *a)
{
	static char buf[512];
	return oxp_attr_text(a, buf, sizeof(buf));
}

static void test_scalars(void **state)
{
	(void)state;
	oxp_attr a = {.name = S("alpha"), .type = OXP_ATTR_FLOAT, .f = 0.2f};
	assert_string_equal(fmt(&a), "0.2"); /* 4 significant digits: not 0.200000003 */
	a.f = 1.0f / 3.0f;
	assert_string_equal(fmt(&a), "0.3333");
	a.f = 1e-9f;
	assert_string_equal(fmt(&a), "1e-09");
	oxp_attr i = {.name = S("axis"), .type = OXP_ATTR_INT, .i = -2};
	assert_string_equal(fmt(&i), "-2");
	i.i = INT64_MIN;
	assert_string_equal(fmt(&i), "-9223372036854775808");
	/* "to" names an element type, as Cast's does */
	oxp_attr to = {.name = S("to"), .type = OXP_ATTR_INT, .i = OXP_DT_FLOAT16};
	assert_string_equal(fmt(&to), "FLOAT16");
	oxp_attr s = {.name = S("mode"), .type = OXP_ATTR_STRING, .s = S("linear")};
	assert_string_equal(fmt(&s), "linear");
}

static void test_lists(void **state)
{
	(void)state;
	int64_t ints[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
	oxp_attr a = {.name = S("pads"), .type = OXP_ATTR_INTS, .ints = ints, .nints = 2};
	assert_string_equal(fmt(&a), "1,2");
	a.nints = 9; /* nine fit */
	assert_string_equal(fmt(&a), "1,2,3,4,5,6,7,8,9");
	a.nints = 12; /* more: the first 8 and the count */
	assert_string_equal(fmt(&a), "1,2,3,4,5,6,7,8,\xe2\x80\xa6(12)");
	a.nints = 0;
	assert_string_equal(fmt(&a), "[]");

	float fl[8] = {0.5f, 1.25f, 2, 3, 4, 5, 6, 7};
	oxp_attr f = {.name = S("scales"), .type = OXP_ATTR_FLOATS, .floats = fl, .nfloats = 7};
	assert_string_equal(fmt(&f), "0.5,1.25,2,3,4,5,6");
	f.nfloats = 8;
	assert_string_equal(fmt(&f), "0.5,1.25,2,3,4,5,\xe2\x80\xa6(8)");
	f.nfloats = 0;
	assert_string_equal(fmt(&f), "[]");

	oxp_str strs[5] = {S("a"), S("bb"), S("this-is-longer-than-twelve"), S("d"), S("e")};
	oxp_attr s = {.name = S("activations"), .type = OXP_ATTR_STRINGS, .strings = strs, .nstrings = 3};
	assert_string_equal(fmt(&s), "a,bb,this-is-long\xe2\x80\xa6");
	s.nstrings = 5;
	assert_string_equal(fmt(&s), "a,bb,this-is-long\xe2\x80\xa6,d,\xe2\x80\xa6(5)");
	s.nstrings = 0;
	assert_string_equal(fmt(&s), "[]");
}

static void test_tensor_graph_other(void **state)
{
	(void)state;
	int64_t dims[2] = {64, 3};
	oxp_tensor t = {.data_type = OXP_DT_FLOAT, .dims = dims, .ndims = 2};
	oxp_attr a = {.name = S("value"), .type = OXP_ATTR_TENSOR, .t = &t};
	assert_string_equal(fmt(&a), "\xe2\x9f\xa8" "64\xc3\x97" "3\xe2\x9f\xa9 f32");
	t.ndims = 0;
	t.data_type = OXP_DT_INT64;
	assert_string_equal(fmt(&a), "\xe2\x9f\xa8scalar\xe2\x9f\xa9 i64");
	a.t = NULL;
	assert_string_equal(fmt(&a), "");
	oxp_attr g = {.name = S("then_branch"), .type = OXP_ATTR_GRAPH};
	assert_string_equal(fmt(&g), "graph");
	oxp_attr gs = {.name = S("branches"), .type = OXP_ATTR_GRAPHS, .ngraphs = 2};
	assert_string_equal(fmt(&gs), "2 graphs");
	oxp_attr tp = {.name = S("type"), .type = OXP_ATTR_TYPE_PROTO};
	assert_string_equal(fmt(&tp), "TYPE_PROTO");
}

/* Model bytes are display text: invalid bytes U+FFFD, controls a space, 32 characters. */
static void test_strings_are_display_text(void **state)
{
	(void)state;
	oxp_attr a = {.name = S("mode"), .type = OXP_ATTR_STRING, .s = S("a\xff" "b\n\xe2\x80\xa8" "c")};
	assert_string_equal(fmt(&a), "a\xef\xbf\xbd" "b  c");
	char long_s[100];
	memset(long_s, 'x', sizeof(long_s));
	a.s = (oxp_str){long_s, sizeof(long_s)};
	const char *t = fmt(&a);
	assert_int_equal(strlen(t), 32 + 3); /* 32 characters and the ellipsis */
	assert_memory_equal(t + 32, "\xe2\x80\xa6", 3);
	/* a surrogate, an overlong form and a cut sequence are invalid */
	a.s = S("\xed\xa0\x80|\xc0\xaf|\xe2\x82");
	assert_string_equal(fmt(&a), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd|"
	                             "\xef\xbf\xbd\xef\xbf\xbd");
}

/* Every buffer size: a prefix of the full text, valid UTF-8, NUL-terminated. */
static void test_short_buffers_cut_on_characters(void **state)
{
	(void)state;
	oxp_str strs[3] = {S("\xc3\xa9t\xc3\xa9"), S("\xf0\x9f\x98\x80\xf0\x9f\x98\x80"), S("\xe2\x82\xac")};
	oxp_attr a = {.name = S("s"), .type = OXP_ATTR_STRINGS, .strings = strs, .nstrings = 3};
	char full[256];
	oxp_attr_text(&a, full, sizeof(full));
	size_t n = strlen(full);
	assert_true(n > 12);
	for (size_t size = 1; size <= n + 1; size++) {
		char buf[256];
		memset(buf, 'Z', sizeof(buf));
		assert_ptr_equal(oxp_attr_text(&a, buf, size), buf);
		size_t k = strlen(buf);
		assert_true(k < size);
		assert_memory_equal(buf, full, k);
		assert_true(oxp_utf8_valid(buf, k));
		/* nothing whole was left out that would have fitted */
		if (k < n) {
			uint32_t cp;
			size_t next = oxp_utf8_at((const unsigned char *)full, n, k, &cp);
			assert_true(next > 0 && k + next >= size);
		}
	}
	char none[1] = {'Z'};
	oxp_attr_text(&a, none, 0); /* size 0: nothing written */
	assert_int_equal(none[0], 'Z');
}

static void test_utf8(void **state)
{
	(void)state;
	uint32_t cp = 0;
	assert_int_equal(oxp_utf8_at((const unsigned char *)"\xc3\xa9", 2, 0, &cp), 2);
	assert_int_equal(cp, 0xe9);
	assert_int_equal(oxp_utf8_at((const unsigned char *)"\xf4\x8f\xbf\xbf", 4, 0, &cp), 4);
	assert_int_equal(cp, 0x10ffff);
	assert_int_equal(oxp_utf8_at((const unsigned char *)"\xf4\x90\x80\x80", 4, 0, &cp), 0);
	assert_int_equal(oxp_utf8_at((const unsigned char *)"\xe0\x80\xaf", 3, 0, &cp), 0);
	assert_int_equal(oxp_utf8_at((const unsigned char *)"\xc3\xa9", 1, 0, &cp), 0);
	assert_true(oxp_utf8_valid("", 0));
	assert_true(oxp_utf8_valid("a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 10));
	assert_false(oxp_utf8_valid("a\xc3", 2));
	assert_false(oxp_utf8_valid("\xed\xbf\xbf", 3));
	/* whole: a sequence cut at the end goes, a whole one stays */
	assert_int_equal(oxp_utf8_whole("ab\xe2\x82", 4), 2);
	assert_int_equal(oxp_utf8_whole("ab\xe2\x82\xac", 5), 5);
	assert_int_equal(oxp_utf8_whole("ab\xf0", 3), 2);
	assert_int_equal(oxp_utf8_whole("abc", 3), 3);
	assert_int_equal(oxp_utf8_whole("", 0), 0);
	/* display text keeps the end of a long name when asked */
	oxp_arena *ar = oxp_arena_new(4096);
	assert_non_null(ar);
	assert_string_equal(oxp_text_tail(ar, S("/model/layers.10/attn/Softmax"), 12),
	                    "\xe2\x80\xa6" "attn/Softmax");
	assert_string_equal(oxp_text(ar, S("short"), 12), "short");
	oxp_arena_free(ar);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_scalars),
	    cmocka_unit_test(test_lists),
	    cmocka_unit_test(test_tensor_graph_other),
	    cmocka_unit_test(test_strings_are_display_text),
	    cmocka_unit_test(test_short_buffers_cut_on_characters),
	    cmocka_unit_test(test_utf8),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
