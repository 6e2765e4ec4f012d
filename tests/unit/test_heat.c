/*
 * test_heat.c — what attributing an overlay costs (render/heat.c, issue 35 item 4,
 * docs/decisions.md 85): memory linear in the names with a small constant (a profile's
 * names once held 64 node slots of 4 bytes each, up front; a CSV's 32 metrics of 8 bytes
 * each), and the unmatched names counted but only the largest listed (a 1.4M-name file
 * nothing matches made a 76 MB table).  Peak memory is the process's peak RSS (VmHWM,
 * reset through /proc/self/clear_refs) around one oxr_heat_build of inputs made here; not
 * checked under AddressSanitizer, whose quarantine keeps what is freed.  Measured with
 * 150,000 names: a profile 348 bytes per name before, 200 after; a CSV 502 before, 224
 * after; the bounds (260, 300) sit between.
 */
#include "parser/oxp.h"
#include "render/oxr.h"
#include "tests/unit/support_pb.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#define HEAT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HEAT_ASAN 1
#endif
#endif
#ifndef HEAT_ASAN
#define HEAT_ASAN 0
#endif

#define NAMES 150000u

typedef struct heat_fx {
	oxp_model *m;
	oxp_dag *d;
} heat_fx;

/* A model of four Relu nodes r0..r3 in a chain. */
static int setup(void **state)
{
	pb model = {0}, g = {0};
	for (int i = 0; i < 4; i++) {
		pb n = {0};
		char in[8], out[8], name[8];
		snprintf(in, sizeof(in), "v%d", i);
		snprintf(out, sizeof(out), "v%d", i + 1);
		snprintf(name, sizeof(name), "r%d", i);
		pb_str(&n, 1, in);
		pb_str(&n, 2, out);
		pb_str(&n, 3, name);
		pb_str(&n, 4, "Relu");
		pb_msg(&g, 1, &n, NULL);
		pb_free(&n);
	}
	pb_str(&g, 2, "g");
	pb opset = {0};
	pb_str(&opset, 1, "");
	pb_uint(&opset, 2, 13);
	pb_uint(&model, 1, 8);
	pb_msg(&model, 8, &opset, NULL);
	pb_msg(&model, 7, &g, NULL);
	heat_fx *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	f->m = pb_parse_ok(&model, NULL);
	assert_int_equal(oxp_dag_build(&f->d, f->m, NULL, NULL), OXP_OK);
	pb_free(&opset);
	pb_free(&g);
	pb_free(&model);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	heat_fx *f = *state;
	oxp_dag_free(f->d);
	oxp_model_free(f->m);
	free(f);
	return 0;
}

/* A growing string (aborts the test when memory runs out). */
typedef struct text {
	char *p;
	size_t len, cap;
} text;

static void add(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(text *t, const char *fmt, ...)
{
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(t->p ? t->p + t->len : NULL, t->p ? t->cap - t->len : 0, fmt, ap);
		va_end(ap);
		assert_true(n >= 0);
		if (t->p != NULL && (size_t)n < t->cap - t->len) {
			t->len += (size_t)n;
			return;
		}
		t->cap = t->cap ? t->cap * 2 : 1 << 20;
		t->p = realloc(t->p, t->cap);
		assert_non_null(t->p);
	}
}

/* An ORT profile: one run, a kernel on r0, then `names` kernels nothing matches (kernel
 * i takes i % 997 us). */
static text profile(uint32_t names)
{
	text t = {0};
	add(&t, "[{\"cat\":\"Session\",\"name\":\"model_run\",\"ts\":0,\"dur\":9000000,\"ph\":\"X\"},"
	        "{\"cat\":\"Node\",\"name\":\"r0_kernel_time\",\"ts\":1,\"dur\":5,\"ph\":\"X\","
	        "\"args\":{\"op_name\":\"Relu\",\"provider\":\"CPUExecutionProvider\"}}");
	for (uint32_t i = 0; i < names; i++)
		add(&t, ",{\"cat\":\"Node\",\"name\":\"u%06u_kernel_time\",\"ts\":%u,\"dur\":%u,"
		        "\"ph\":\"X\",\"args\":{\"op_name\":\"Relu\",\"provider\":\"CPUExecutionProvider\"}}",
		    i, i + 2, i % 997);
	add(&t, "]");
	return t;
}

/* A CSV of one metric: r0, then `names` rows nothing matches (row i: i % 997). */
static text csv(uint32_t names)
{
	text t = {0};
	add(&t, "node,t\nr0,5\n");
	for (uint32_t i = 0; i < names; i++)
		add(&t, "u%06u,%u\n", i, i % 997);
	return t;
}

static long status_kib(const char *field)
{
	FILE *f = fopen("/proc/self/status", "r");
	assert_non_null(f);
	char line[256];
	long v = -1;
	size_t n = strlen(field);
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, field, n) == 0 && line[n] == ':')
			v = strtol(line + n + 1, NULL, 10);
	fclose(f);
	return v;
}

/* Build the overlay of in; *peak gets the growth of the peak RSS during the build (KiB),
 * or -1 when it cannot be measured. */
static oxr_heat *build(const heat_fx *f, const text *in, long *peak)
{
	oxr_heat_input hi = {in->p, in->len, "test"};
	oxr_heat *h = NULL;
	oxr_error err;
	memset(&err, 0, sizeof(err));
	FILE *cr = fopen("/proc/self/clear_refs", "w");
	bool reset = cr != NULL && fputs("5", cr) >= 0;
	if (cr != NULL)
		reset = fclose(cr) == 0 && reset;
	long before = status_kib("VmRSS");
	oxr_code rc = oxr_heat_build(&hi, 1, f->d, NULL, &h, &err);
	if (rc != OXR_OK)
		fail_msg("oxr_heat_build: %s", err.message);
	*peak = reset ? status_kib("VmHWM") - before : -1;
	return h;
}

/* Unmatched names: all counted, the largest OXR_HEAT_UNMATCHED_LISTED listed in order,
 * their sum within the unattributed rest; the table says both. */
static void check_unmatched(const heat_fx *f, const oxr_heat *h)
{
	assert_int_equal(h->nentries, NAMES + 1);
	assert_int_equal(h->nmatched, 1);
	assert_int_equal(h->nunmatched, NAMES);
	assert_int_equal(h->nunmatched_listed, OXR_HEAT_UNMATCHED_LISTED);
	double sum = 0;
	for (uint32_t i = 0; i < h->nunmatched_listed; i++) {
		const oxr_heat_unmatched *u = &h->unmatched[i], *prev = u - 1;
		/* the largest: 996 (150 names), 995, ... down to 990 at least; ties by name */
		assert_true(u->value >= 990 && u->value <= 996);
		assert_true(i == 0 || prev->value > u->value ||
		            (prev->value == u->value && strcmp(prev->name, u->name) < 0));
		sum += u->value;
	}
	assert_string_equal(h->unmatched[0].name, "u000996");
	assert_true(h->attributed == 5 && sum <= h->total - h->attributed);
	oxr_buf b;
	oxr_error err;
	oxr_buf_init(&b, 0);
	assert_int_equal(oxr_heat_table_json(h, f->d, h->primary, 0, &b, &err), OXR_OK);
	json_t *j = json_loadb(b.data, b.len, 0, NULL);
	assert_non_null(j);
	assert_int_equal(json_integer_value(json_object_get(j, "unmatched_count")), NAMES);
	assert_int_equal(json_array_size(json_object_get(j, "unmatched")), OXR_HEAT_UNMATCHED_LISTED);
	assert_true(b.len < 256 * 1024);
	json_decref(j);
	oxr_buf_free(&b);
}

/* At most `per` bytes of peak memory per name, beyond the input. */
static void check_peak(long peak_kib, size_t input, unsigned per, const char *what)
{
	if (HEAT_ASAN || peak_kib < 0) {
		print_message("  %s: peak not measured (AddressSanitizer or no clear_refs)\n", what);
		return;
	}
	double bytes = (double)peak_kib * 1024 / NAMES;
	print_message("  %s of %u names (%.1f MB): peak +%ld KiB, %.0f bytes per name\n", what,
	              NAMES, (double)input / 1e6, peak_kib, bytes);
	if (bytes > per)
		fail_msg("%s: %.0f bytes per name at the peak, more than %u", what, bytes, per);
}

static void test_profile_memory(void **state)
{
	const heat_fx *f = *state;
	text in = profile(NAMES);
	long peak = 0;
	oxr_heat *h = build(f, &in, &peak);
	check_peak(peak, in.len, 260, "profile");
	check_unmatched(f, h);
	oxr_heat_free(h);
	free(in.p);
}

static void test_csv_memory(void **state)
{
	const heat_fx *f = *state;
	text in = csv(NAMES);
	long peak = 0;
	oxr_heat *h = build(f, &in, &peak);
	check_peak(peak, in.len, 300, "csv");
	check_unmatched(f, h);
	oxr_heat_free(h);
	free(in.p);
}

/* Fewer unmatched names than the cap: every one listed, adding up to the rest exactly. */
static void test_few_unmatched_all_listed(void **state)
{
	const heat_fx *f = *state;
	text in = csv(10);
	oxr_heat_input hi = {in.p, in.len, "test"};
	oxr_heat *h = NULL;
	oxr_error err;
	assert_int_equal(oxr_heat_build(&hi, 1, f->d, NULL, &h, &err), OXR_OK);
	assert_int_equal(h->nunmatched, 10);
	assert_int_equal(h->nunmatched_listed, 10);
	double sum = 0;
	for (uint32_t i = 0; i < 10; i++)
		sum += h->unmatched[i].value;
	assert_true(sum == h->total - h->attributed && sum == 45);
	assert_string_equal(h->unmatched[0].name, "u000009");
	oxr_heat_free(h);
	free(in.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_profile_memory, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_csv_memory, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_few_unmatched_all_listed, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
