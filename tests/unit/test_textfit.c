/*
 * test_textfit.c — render/textfit.c: text widths and text cut to a width.
 *   widths:  additive over characters, bold no narrower where both fonts agree, every
 *            kind of character (ASCII, Latin-1, symbols we emit, CJK, emoji, invalid
 *            bytes) counts;
 *   fit:     text that fits comes back as it is; a cut keeps the start or the end, ends
 *            or starts with one ellipsis, is valid UTF-8, is no wider than asked and as
 *            long as it can be (one more character would not fit), for many widths and
 *            strings of every kind of character; "" when not even the ellipsis fits.
 * (tests/render/widths.py holds the table to the font files; the render suite checks
 * every drawing of the corpus in DejaVu Sans.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/internal.h"

#define ELL "\xe2\x80\xa6"

static const char *const samples[] = {
    "/encoder/layers.10/self_attn/Softmax",
    "W \xe2\x9f\xa8" "64\xc3\x97" "3\xc3\x97" "7\xc3\x97" "7\xe2\x9f\xa9 f16 = [1,2,3]",
    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9",
    "\xe4\xb8\x80\xe4\xb8\x80\xe4\xb8\x80\xe4\xb8\x80\xe4\xb8\x80 CJK",
    "\xf0\x9f\x98\x80\xf0\x9f\x98\x80\xf0\x9f\x98\x80\xf0\x9f\x98\x80 emoji",
    "x \xe2\x86\x92 y \xc2\xb7 a\xe2\x80\x93z",
    "bad \xff\xfe bytes \xc0\xaf end",
    "spaces          in      the middle      of it all",
    "WWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWW",
    "iiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiii",
};

static bool valid_utf8(const char *s)
{
	size_t n = strlen(s);
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t k = oxr__utf8_at((const unsigned char *)s, n, i, &cp);
		if (k == 0)
			return false;
		i += k;
	}
	return true;
}

/* Byte length of the first character of s, or of the last one. */
static size_t first_len(const char *s)
{
	uint32_t cp;
	size_t k = oxr__utf8_at((const unsigned char *)s, strlen(s), 0, &cp);
	return k ? k : 1;
}

static size_t last_len(const char *s, size_t n)
{
	for (size_t k = 1; k <= 4 && k <= n; k++) {
		uint32_t cp;
		if (oxr__utf8_at((const unsigned char *)s, n, n - k, &cp) == k)
			return k;
	}
	return 1;
}

static void test_width_additive(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
		const char *s = samples[i];
		size_t n = strlen(s), cut = n / 2;
		while (cut < n && ((unsigned char)s[cut] & 0xc0) == 0x80)
			cut++;
		char *a = strndup(s, cut);
		for (int bold = 0; bold < 2; bold++) {
			double whole = oxr__text_width(s, 9, bold);
			double parts = oxr__text_width(a, 9, bold) + oxr__text_width(s + cut, 9, bold);
			assert_true(whole > 0);
			assert_true(whole - parts < 1e-9 && parts - whole < 1e-9);
			/* proportional to the size */
			double big = oxr__text_width(s, 18, bold);
			assert_true(big - 2 * whole < 1e-9 && 2 * whole - big < 1e-9);
		}
		free(a);
	}
	/* every character counts, also those outside the font tables */
	const char *each[] = {"a", "\xc3\xa9", ELL, "\xe2\x9f\xa8", "\xe4\xb8\x80",
	                      "\xf0\x9f\x98\x80", "\xff", "\xea\xb0\x80"};
	for (size_t i = 0; i < sizeof(each) / sizeof(each[0]); i++)
		assert_true(oxr__text_width(each[i], 9, false) > 2.0);
	/* wide characters of other scripts are not counted narrower than a Latin letter */
	assert_true(oxr__text_width("\xe4\xb8\x80", 9, false) >= oxr__text_width("W", 9, false));
	assert_true(oxr__text_width("\xf0\x9f\x98\x80", 9, false) >= oxr__text_width("W", 9, false));
	assert_true(oxr__text_width("W", 9, false) > oxr__text_width("i", 9, false));
	assert_true(oxr__text_width("", 9, false) == 0);
}

static void check_fit(oxp_arena *a, const char *s, double size, bool bold, double max_w,
                      bool keep_end)
{
	const char *f = oxr__text_fit(a, s, size, bold, max_w, keep_end);
	assert_non_null(f);
	double w = oxr__text_width(s, size, bold);
	if (w <= max_w) {
		assert_ptr_equal(f, s);
		return;
	}
	double fw = oxr__text_width(f, size, bold);
	assert_true(fw <= max_w + 1e-9);
	assert_true(valid_utf8(f) || !valid_utf8(s));
	if (f[0] == '\0') { /* nothing fits, not even the ellipsis */
		assert_true(oxr__text_width(ELL, size, bold) > max_w);
		return;
	}
	size_t n = strlen(s), fn = strlen(f);
	if (keep_end) {
		assert_memory_equal(f, ELL, 3);
		const char *tail = f + 3;
		size_t tn = fn - 3;
		assert_true(tn < n);
		assert_memory_equal(s + n - tn, tail, tn);
		/* one more character (and the spaces given up before it) would not fit */
		size_t more = n - tn;
		while (more > 0 && s[more - 1] == ' ')
			more--;
		if (more > 0) {
			more -= last_len(s, more);
			char *longer = malloc(3 + n - more + 1);
			memcpy(longer, ELL, 3);
			memcpy(longer + 3, s + more, n - more + 1);
			assert_true(oxr__text_width(longer, size, bold) > max_w - 1e-9);
			free(longer);
		}
	} else {
		assert_memory_equal(f + fn - 3, ELL, 3);
		size_t hn = fn - 3;
		assert_true(hn < n);
		assert_memory_equal(s, f, hn);
		size_t more = hn;
		while (more < n && s[more] == ' ')
			more++;
		if (more < n) {
			more += first_len(s + more);
			char *longer = malloc(more + 4);
			memcpy(longer, s, more);
			memcpy(longer + more, ELL, 4);
			assert_true(oxr__text_width(longer, size, bold) > max_w - 1e-9);
			free(longer);
		}
	}
}

static void test_fit(void **state)
{
	(void)state;
	oxp_arena *a = oxp_arena_new(64u << 20);
	assert_non_null(a);
	for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++)
		for (double w = 0; w <= 420; w += 3.5)
			for (int bold = 0; bold < 2; bold++)
				for (int end = 0; end < 2; end++)
					check_fit(a, samples[i], bold ? 11 : 9, bold, w, end);
	/* random strings of every kind of character, invalid bytes included */
	static const char *const pieces[] = {"a", "W", " ", "/", ".", "0", "\xc3\xa9", ELL,
	                                     "\xc3\x97", "\xe2\x9f\xa9", "\xe4\xb8\x80",
	                                     "\xf0\x9f\x98\x80", "\xff", "\xcc\x81"};
	uint32_t seed = 12345;
	for (int t = 0; t < 400; t++) {
		char s[256];
		size_t n = 0;
		seed = seed * 1103515245u + 12345u;
		size_t len = (seed >> 16) % 60;
		for (size_t k = 0; k < len; k++) {
			seed = seed * 1103515245u + 12345u;
			const char *p = pieces[(seed >> 16) % (sizeof(pieces) / sizeof(pieces[0]))];
			memcpy(s + n, p, strlen(p));
			n += strlen(p);
		}
		s[n] = '\0';
		seed = seed * 1103515245u + 12345u;
		double w = (double)((seed >> 16) % 320);
		check_fit(a, s, 9, false, w, t % 2 == 0);
	}
	assert_false(oxp_arena_failed(a));
	oxp_arena_free(a);
}

static void test_fit_degenerate(void **state)
{
	(void)state;
	oxp_arena *a = oxp_arena_new(1u << 20);
	assert_non_null(a);
	assert_string_equal(oxr__text_fit(a, "abc", 9, false, 0, false), "");
	assert_string_equal(oxr__text_fit(a, "abc", 9, false, -5, true), "");
	assert_string_equal(oxr__text_fit(a, "", 9, false, 0.5, false), "");
	/* the ellipsis alone when nothing else fits */
	double ell = oxr__text_width(ELL, 9, false);
	assert_string_equal(oxr__text_fit(a, "WWWW", 9, false, ell, false), ELL);
	assert_string_equal(oxr__text_fit(a, "WWWW", 9, false, ell, true), ELL);
	/* spaces at the cut are given up, not drawn before the ellipsis */
	const char *s = "ab      cdefghijklmnopqrstuvwxyz";
	double w = oxr__text_width("ab     " ELL, 9, false);
	assert_string_equal(oxr__text_fit(a, s, 9, false, w, false), "ab" ELL);
	oxp_arena_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_width_additive),
	    cmocka_unit_test(test_fit),
	    cmocka_unit_test(test_fit_degenerate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
