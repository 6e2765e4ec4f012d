/*
 * test_hostile.c — regressions for what the fuzz targets graph and render found in
 * render/ (tests/fuzz/regressions/graph/, docs/security-tests.md): the cost of a node's
 * JSON must stay linear in the node's size, and a JSON writer must keep its buffer's cap;
 * and (issue 22) sums of counts from the file saturate instead of wrapping.  Models are
 * encoded by hand (tests/unit/support_pbw.h).
 */
#include "render/oxr.h"
#include "tests/unit/support_pbw.h"

#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* ModelProto { ir_version 8, graph { node { input "x" * k, output "y", op_type "Sum" },
 * input { name "x" } }, opset_import { version 17 } } */
static void wide_node_model(pbw *m, size_t k)
{
	pbw node = {0}, graph = {0}, vi = {0}, opset = {0};
	for (size_t i = 0; i < k; i++)
		pbw_str(&node, 1, "x");
	pbw_str(&node, 2, "y");
	pbw_str(&node, 4, "Sum");
	pbw_bytes(&graph, 1, node.p, node.len);
	pbw_str(&vi, 1, "x");
	pbw_bytes(&graph, 11, vi.p, vi.len);
	pbw_int(&opset, 2, 17);
	pbw_int(m, 1, 8);
	pbw_bytes(m, 7, graph.p, graph.len);
	pbw_bytes(m, 8, opset.p, opset.len);
	pbw_free(&node);
	pbw_free(&graph);
	pbw_free(&vi);
	pbw_free(&opset);
}

typedef struct loaded {
	pbw bytes;
	oxp_model *m;
	oxp_dag *d;
} loaded;

static void load_wide(loaded *l, size_t k)
{
	memset(l, 0, sizeof(*l));
	wide_node_model(&l->bytes, k);
	oxp_error e;
	assert_int_equal(oxp_model_parse(&l->m, l->bytes.p, l->bytes.len, NULL, &e), OXP_OK);
	oxp_dag_options opt = {.infer_shapes = true};
	assert_int_equal(oxp_dag_build(&l->d, l->m, &opt, &e), OXP_OK);
}

static void unload(loaded *l)
{
	oxp_dag_free(l->d);
	oxp_model_free(l->m);
	pbw_free(&l->bytes);
}

/* The JSON of the wide-node model (k inputs): node n0's, or the whole document.  Sets
 * the result and the output's size; frees everything (so that a failing assertion after
 * it leaks nothing under LeakSanitizer). */
static void wide_json(size_t k, bool node, oxr_code *rc, size_t *len)
{
	loaded l;
	load_wide(&l, k);
	oxr_buf b;
	oxr_buf_init(&b, (size_t)16 << 20);
	oxr_error e;
	memset(&e, 0, sizeof(e));
	*rc = node ? oxr_node_json(l.m, l.d, "n0", &b, &e)
	           : oxr_doc_json(l.m, l.d, OXR_DOC_FULL, &b, &e);
	*len = b.len;
	print_message("%s JSON of %zu inputs: %s, %zu bytes\n", node ? "node" : "document", k,
	              oxr_code_name(*rc), *len);
	oxr_buf_free(&b);
	unload(&l);
}

/* The JSON of the wide model with 200 and with 400 inputs (node JSON or the whole
 * document): both made, the second at most ~twice the first. */
static void assert_linear(bool node)
{
	oxr_code rc1, rc2;
	size_t len1, len2;
	wide_json(200, node, &rc1, &len1);
	wide_json(400, node, &rc2, &len2);
	assert_int_equal(rc1, OXR_OK);
	assert_int_equal(rc2, OXR_OK);
	assert_true(len2 <= len1 * 2 + 4096);
}

/* A node whose k inputs all name one value (which then has k consumers): its JSON listed
 * each input with all the value's consumers, so it grew as k * k (found by fuzz_graph: 300
 * inputs took 30 s under ASan; over HTTP a 3 KB upload of 1,000 inputs made a 26 MB
 * answer and 662 MiB of server memory; the default limits allow 65,536 inputs).  It must
 * grow linearly: twice the inputs, at most ~twice the bytes. */
static void test_node_json_linear_in_inputs(void **state)
{
	(void)state;
	assert_linear(true);
}

/* The whole document stays linear too (each value listed once with its consumers). */
static void test_document_linear_in_inputs(void **state)
{
	(void)state;
	assert_linear(false);
}

/* An oxr_buf never holds more than its max, whatever writes to it: render/jsonx.c's
 * one-byte fast path appended into spare capacity beyond max (found by fuzz_graph: a
 * 32 MiB cap ended with len > max).  A small cap over a document shows it. */
static void test_json_writer_keeps_the_cap(void **state)
{
	(void)state;
	loaded l;
	load_wide(&l, 40);
	for (size_t max = 16; max <= 8192; max *= 2) {
		oxr_buf b;
		oxr_buf_init(&b, max);
		oxr_error e;
		oxr_code rc = oxr_doc_json(l.m, l.d, OXR_DOC_FULL, &b, &e);
		size_t len = b.len;
		oxr_buf_free(&b);
		if (len > max || (rc != OXR_OK && rc != OXR_E_TOO_BIG)) {
			print_message("cap %zu: %s with %zu bytes\n", max, oxr_code_name(rc), len);
			unload(&l);
			fail();
		}
	}
	unload(&l);
}

/* Four initializers of 2^62 FLOAT elements (no values: allowed until read), then one of
 * 2 elements: the bytes of the first saturate at UINT64_MAX, and adding the next ones
 * wrapped the total; the parameters of the four are 2^64, past UINT64_MAX.  The document
 * says INT64_MAX for both, never a negative or small number. */
static void test_summary_sums_saturate(void **state)
{
	(void)state;
	pbw m = {0}, graph = {0}, t = {0}, opset = {0};
	const int64_t huge[] = {INT64_C(1) << 62}, two[] = {2};
	const float v[2] = {1, 2};
	for (int k = 0; k < 5; k++) {
		char name[8];
		snprintf(name, sizeof(name), "t%d", k);
		pbw_tensor_head(&t, k < 4 ? huge : two, 1, OXP_DT_FLOAT);
		pbw_str(&t, 8, name);
		if (k == 4)
			pbw_bytes(&t, 9, v, sizeof(v));
		pbw_bytes(&graph, 5, t.p, t.len);
		pbw_free(&t);
	}
	pbw_int(&opset, 2, 17);
	pbw_int(&m, 1, 8);
	pbw_bytes(&m, 7, graph.p, graph.len);
	pbw_bytes(&m, 8, opset.p, opset.len);
	oxp_model *model;
	oxp_dag *dag;
	oxp_error e;
	assert_int_equal(oxp_model_parse(&model, m.p, m.len, NULL, &e), OXP_OK);
	assert_int_equal(oxp_dag_build(&dag, model, NULL, &e), OXP_OK);
	const oxp_dag_summary *s = &oxp_dag_get(dag)->summary;
	assert_true(s->parameter_bytes == UINT64_MAX);
	assert_true(s->parameters == UINT64_MAX);
	assert_true(s->bytes_by_dtype[OXP_DT_FLOAT] == UINT64_MAX);
	assert_true(s->params_by_dtype[OXP_DT_FLOAT] == UINT64_MAX);
	oxr_buf b;
	oxr_buf_init(&b, 0);
	assert_int_equal(oxr_doc_json(model, dag, OXR_DOC_SUMMARY, &b, NULL), OXR_OK);
	if (strstr(b.data, "\"count\":9223372036854775807,\"bytes\":9223372036854775807") == NULL)
		fail_msg("%.600s", b.data);
	oxr_buf_free(&b);
	oxp_dag_free(dag);
	oxp_model_free(model);
	pbw_free(&m);
	pbw_free(&graph);
	pbw_free(&opset);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_node_json_linear_in_inputs),
	    cmocka_unit_test(test_document_linear_in_inputs),
	    cmocka_unit_test(test_json_writer_keeps_the_cap),
	    cmocka_unit_test(test_summary_sums_saturate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
