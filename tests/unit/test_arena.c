/*
 * test_arena.c — the arena under oxp_arena_one_shot (parser/arena.c, docs/decisions.md 78):
 * a process-wide region advised for huge pages from which every arena's chunks are carved
 * until it is spent.  A program of its own: the region is the process's, for good.
 *
 * Pinned here: memory comes zeroed and aligned from the region (and from the heap once it
 * is spent), freeing an arena returns nothing and breaks nothing, the budget still holds,
 * a second call does nothing, and where the kernel has transparent huge pages on for
 * advised memory the region is backed by them.
 */
#include "parser/oxp.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define REGION ((size_t)4 << 20)

/* Whether p lies in a mapping of this process that /proc/self/smaps shows with huge pages
 * (AnonHugePages > 0). */
static bool in_huge_mapping(const void *p)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	assert_non_null(f);
	char line[512];
	bool inside = false, huge = false;
	uintptr_t a = (uintptr_t)p;
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, ':') != NULL &&
		    line[strspn(line, "0123456789abcdef")] == '-') {
			inside = a >= lo && a < hi;
			continue;
		}
		unsigned long kb;
		if (inside && sscanf(line, "AnonHugePages: %lu kB", &kb) == 1)
			huge = kb > 0;
	}
	fclose(f);
	return huge;
}

/* THP is "always" or "madvise" here (the region asks with MADV_HUGEPAGE). */
static bool thp_for_advised(void)
{
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	if (f == NULL)
		return false;
	char line[128] = "";
	bool on = fgets(line, sizeof(line), f) != NULL &&
	          (strstr(line, "[always]") != NULL || strstr(line, "[madvise]") != NULL);
	fclose(f);
	return on;
}

static bool all_zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != 0)
			return false;
	return true;
}

static void test_one_shot(void **state)
{
	(void)state;
	assert_true(oxp_arena_one_shot(REGION));
	assert_true(oxp_arena_one_shot(1)); /* a second call: nothing, still true */

	/* allocations are zeroed, 16-byte aligned, writable; freed arenas give nothing back,
	 * so a new arena's memory is fresh (still zero though the last one was written) */
	unsigned char *first = NULL;
	for (int round = 0; round < 3; round++) {
		oxp_arena *a = oxp_arena_new((size_t)1 << 20);
		assert_non_null(a);
		for (size_t size = 1; size <= 200000; size = size * 3 + 7) {
			unsigned char *p = oxp_arena_alloc(a, size);
			assert_non_null(p);
			assert_int_equal((uintptr_t)p % 16, 0);
			assert_true(all_zero(p, size));
			memset(p, 0xa5, size);
			if (first == NULL)
				first = p;
		}
		assert_false(oxp_arena_failed(a));
		oxp_arena_free(a);
	}
	/* the first allocation was the region's: where advised huge pages are on, the region
	 * is backed by them */
	if (thp_for_advised())
		assert_true(in_huge_mapping(first));
	assert_int_equal(first[0], 0xa5); /* never given back: still mapped, still ours */

	/* the budget still holds */
	oxp_arena *small = oxp_arena_new(1000);
	assert_non_null(small);
	assert_non_null(oxp_arena_alloc(small, 900));
	assert_null(oxp_arena_alloc(small, 200));
	assert_int_equal(oxp_arena_code(small), OXP_E_BUDGET);
	oxp_arena_free(small);

	/* past the region's end: chunks come from the heap and mappings as before */
	oxp_arena *big = oxp_arena_new((size_t)64 << 20);
	assert_non_null(big);
	for (int i = 0; i < 12; i++) {
		unsigned char *p = oxp_arena_alloc(big, (size_t)1 << 20);
		assert_non_null(p);
		assert_true(all_zero(p, (size_t)1 << 20));
		memset(p, i, (size_t)1 << 20);
	}
	assert_false(oxp_arena_failed(big));
	oxp_arena_free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_one_shot),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
