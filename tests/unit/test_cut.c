/*
 * test_cut.c — parser/cut.c (oxp_cut), the page's cut of a model in C: the exact bytes of a
 * structure built by hand, a structure cut again (nothing to cut, its tensor external),
 * the depth budget, truncated input, a sink that stops, and the page's locations.  The
 * comparison with web/structure.js itself on the corpus is tests/e2e/cut.test.mjs.
 */
#include "parser/oxp.h"
#include "tests/unit/support_pbw.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

typedef struct sink {
	pbw out;
	size_t calls, stop_after;
} sink;

static bool to_buf(void *ctx, const void *p, size_t n)
{
	sink *s = ctx;
	if (s->stop_after != 0 && s->calls >= s->stop_after)
		return false;
	s->calls++;
	pbw_raw(&s->out, p, n);
	return true;
}

/* A TensorProto: dims, FLOAT, name, raw_data of n bytes (the payload's offset in the
 * tensor's bytes into *at). */
static void tensor(pbw *t, size_t n, size_t *at)
{
	int64_t dims[1] = {(int64_t)(n / 4)};
	pbw_tensor_head(t, dims, 1, 1);
	pbw_str(t, 8, "w");
	uint8_t *raw = malloc(n);
	assert_non_null(raw);
	for (size_t i = 0; i < n; i++)
		raw[i] = (uint8_t)(i * 7);
	pbw_tag(t, 9, 2);
	pbw_varint(t, n);
	*at = t->len;
	pbw_raw(t, raw, n);
	free(raw);
}

static void test_exact_bytes(void **state)
{
	(void)state;
	const size_t n = 80000; /* over the least saving */
	pbw t = {0}, g = {0}, m = {0};
	size_t at = 0;
	tensor(&t, n, &at);
	pbw_str(&g, 2, "graph");
	pbw_bytes(&g, 5, t.p, t.len); /* initializer */
	pbw_int(&m, 1, 8);            /* ir_version */
	pbw_bytes(&m, 7, g.p, g.len);
	size_t graph_at = m.len - g.len, tensor_at = graph_at + (g.len - t.len);
	/* the structure the page makes: the tensor without raw_data, then its external data */
	pbw te = {0}, ge = {0}, want = {0};
	int64_t dims[1] = {(int64_t)(n / 4)};
	pbw_tensor_head(&te, dims, 1, 1);
	pbw_str(&te, 8, "w");
	char off[32], len[32];
	snprintf(off, sizeof(off), "%zu", tensor_at + at);
	snprintf(len, sizeof(len), "%zu", n);
	pbw_entry(&te, 13, "location", 8, "m.onnx", 6);
	pbw_entry(&te, 13, "offset", 6, off, strlen(off));
	pbw_entry(&te, 13, "length", 6, len, strlen(len));
	pbw_int(&te, 14, 1);
	pbw_str(&ge, 2, "graph");
	pbw_bytes(&ge, 5, te.p, te.len);
	pbw_int(&want, 1, 8);
	pbw_bytes(&want, 7, ge.p, ge.len);

	sink s = {{0}, 0, 0};
	oxp_cut_info info;
	oxp_error err;
	assert_int_equal(oxp_cut(&info, m.p, m.len, "m.onnx", OXP_CUT_MIN_SAVING, to_buf, &s, &err), OXP_OK);
	assert_true(info.cuts);
	assert_int_equal(info.tensors, 1);
	assert_int_equal(info.cut, n);
	assert_int_equal(info.bytes, want.len);
	assert_int_equal(s.out.len, want.len);
	assert_memory_equal(s.out.p, want.p, want.len);
	/* the structure cut again: nothing to cut, its tensor's data external */
	sink s2 = {{0}, 0, 0};
	assert_int_equal(oxp_cut(&info, s.out.p, s.out.len, "m.onnx", 0, to_buf, &s2, &err), OXP_OK);
	assert_false(info.cuts);
	assert_int_equal(info.external, 1);
	assert_int_equal(s2.out.len, 0);
	/* under the least saving: measured, not sent */
	assert_int_equal(oxp_cut(&info, m.p, m.len, "m.onnx", n + 1, to_buf, &s2, &err), OXP_OK);
	assert_false(info.cuts);
	assert_int_equal(info.cut, n);
	assert_int_equal(s2.out.len, 0);
	/* a sink that stops: OXP_E_IO */
	sink s3 = {{0}, 0, 2};
	assert_int_equal(oxp_cut(&info, m.p, m.len, "m.onnx", 0, to_buf, &s3, &err), OXP_E_IO);
	/* cut short anywhere: an error, never a structure */
	for (size_t k = 1; k < 64; k++) {
		sink s4 = {{0}, 0, 0};
		oxp_code c = oxp_cut(&info, m.p, m.len - k, "m.onnx", 0, to_buf, &s4, &err);
		assert_int_not_equal(c, OXP_OK);
		pbw_free(&s4.out);
	}
	/* no graph (ir_version alone): not a model */
	static const uint8_t ir_only[] = {0x08, 0x08};
	assert_int_equal(oxp_cut(&info, ir_only, sizeof(ir_only), "m.onnx", 0, NULL, NULL, &err),
	                 OXP_E_NOT_MODEL);
	pbw_free(&s.out);
	pbw_free(&s2.out);
	pbw_free(&s3.out);
	pbw_free(&t);
	pbw_free(&g);
	pbw_free(&m);
	pbw_free(&te);
	pbw_free(&ge);
	pbw_free(&want);
}

/* A model whose graph nests `levels` If-like subgraphs (graph → node → attribute g →
 * graph ...), the innermost holding a tensor. */
static void nested(pbw *m, unsigned levels)
{
	pbw g = {0};
	size_t at = 0;
	pbw t = {0};
	tensor(&t, 2048, &at);
	pbw_bytes(&g, 5, t.p, t.len);
	pbw_free(&t);
	for (unsigned i = 0; i < levels; i++) {
		pbw a = {0}, nd = {0}, g2 = {0};
		pbw_str(&a, 1, "then_branch");
		pbw_bytes(&a, 6, g.p, g.len);
		pbw_bytes(&nd, 5, a.p, a.len);
		pbw_bytes(&g2, 1, nd.p, nd.len);
		pbw_free(&g);
		pbw_free(&a);
		pbw_free(&nd);
		g = g2;
	}
	pbw_bytes(m, 7, g.p, g.len);
	pbw_free(&g);
}

static void test_depth(void **state)
{
	(void)state;
	oxp_cut_info info;
	oxp_error err;
	pbw ok = {0}, deep = {0};
	nested(&ok, 20); /* 2 + 3 * 20 + 1 = 63 levels: within the budget of 64 */
	assert_int_equal(oxp_cut(&info, ok.p, ok.len, "m.onnx", 0, NULL, NULL, &err), OXP_OK);
	assert_int_equal(info.tensors, 1);
	nested(&deep, 21);
	assert_int_equal(oxp_cut(&info, deep.p, deep.len, "m.onnx", 0, NULL, NULL, &err), OXP_E_DEPTH);
	pbw_free(&ok);
	pbw_free(&deep);
	/* a thousand levels: refused at the budget, never a deep recursion */
	pbw huge = {0};
	nested(&huge, 1000);
	assert_int_equal(oxp_cut(&info, huge.p, huge.len, "m.onnx", 0, NULL, NULL, &err), OXP_E_DEPTH);
	pbw_free(&huge);
}

static void test_location(void **state)
{
	(void)state;
	char out[OXP_CUT_LOCATION_MAX + 1];
	const struct {
		const char *name, *want;
	} cases[] = {{"model.onnx", "model.onnx"}, {"ünï ✓.onnx", "ünï ✓.onnx"}, {"", "model.onnx"},
	             {".", "model.onnx"},          {"..", "model.onnx"},       {"a/b", "model.onnx"},
	             {"a\\b", "model.onnx"},       {"C:x", "model.onnx"},      {"a\x01", "model.onnx"},
	             {"a\x7f", "model.onnx"},      {"1:x", "1:x"}};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool taken = oxp_cut_location(cases[i].name, out, sizeof(out));
		assert_string_equal(out, cases[i].want);
		assert_int_equal(taken, strcmp(cases[i].name, cases[i].want) == 0);
	}
	char longname[300];
	memset(longname, 'x', 256);
	longname[256] = '\0';
	assert_false(oxp_cut_location(longname, out, sizeof(out)));
	longname[255] = '\0';
	assert_true(oxp_cut_location(longname, out, sizeof(out)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_exact_bytes),
	    cmocka_unit_test(test_depth),
	    cmocka_unit_test(test_location),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
