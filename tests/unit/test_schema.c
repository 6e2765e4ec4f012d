/*
 * test_schema.c — the operator-schema table (parser/schema.c) and the check (check.c):
 * look-up by opset, port names, defaults, links, the IR table, each node's resolution in
 * the main graph, a subgraph and a local function, and a few checks on models built here
 * byte by byte.  The facts themselves are held to python3-onnx by tests/diff/schemas.py;
 * the check to onnx.checker by tests/diff/check.py.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "parser/oxp.h"
#include "tests/unit/support_pb.h"

static oxp_str S(const char *s)
{
	return (oxp_str){s, strlen(s)};
}

static const oxp_schema *find(const char *dom, const char *op, int64_t opset)
{
	const oxp_schema *s = NULL;
	oxp_schema_status st = oxp_schema_find(S(dom), S(op), opset, &s);
	if (st != OXP_SCHEMA_FOUND)
		fail_msg("%s:%s at %lld: status %d", dom, op, (long long)opset, st);
	return s;
}

static int since(const oxp_schema *s)
{
	oxp_schema_info si;
	oxp_schema_get_info(s, &si);
	return si.since_version;
}

static void test_lookup_by_opset(void **state)
{
	(void)state;
	assert_int_equal(since(find("", "Conv", 1)), 1);
	assert_int_equal(since(find("", "Conv", 10)), 1);
	assert_int_equal(since(find("", "Conv", 11)), 11);
	assert_int_equal(since(find("", "Conv", 21)), 11);
	assert_int_equal(since(find("", "Conv", 22)), 22); /* from the changelog */
	assert_int_equal(since(find("ai.onnx", "Conv", 13)), 11);
	const oxp_schema *s = NULL;
	assert_int_equal(oxp_schema_find(S(""), S("LayerNormalization"), 11, &s),
	                 OXP_SCHEMA_TOO_NEW);
	assert_int_equal(since(s), 17);
	assert_int_equal(oxp_schema_find(S(""), S("Frobnicate"), 13, &s), OXP_SCHEMA_NO_OP);
	assert_int_equal(oxp_schema_find(S("my.domain"), S("Conv"), 13, &s), OXP_SCHEMA_NO_DOMAIN);
	assert_int_equal(oxp_schema_find(S(""), S("conv"), 13, &s), OXP_SCHEMA_NO_OP);
	oxp_schema_info si;
	oxp_schema_get_info(find("", "Upsample", 10), &si);
	assert_true(si.deprecated);
	oxp_schema_get_info(find("", "Upsample", 9), &si);
	assert_false(si.deprecated);
	oxp_schema_get_info(find("ai.onnx.ml", "TreeEnsembleClassifier", 3), &si);
	assert_string_equal(si.domain, "ai.onnx.ml");
	assert_int_equal(si.since_version, 3);
	oxp_schema_get_info(find("com.microsoft", "MatMulNBits", 1), &si);
	assert_true(si.contrib);
	assert_int_equal(si.min_inputs, 3);
	assert_int_equal(si.max_inputs, 6);
	oxp_schema_get_info(find("", "Concat", 13), &si);
	assert_int_equal(si.min_inputs, 1);
	assert_int_equal(si.max_inputs, OXP_SCHEMA_UNBOUNDED);
}

/* Versions python3-onnx 1.12 does not know come from onnx's changelog (opsets 18..27):
 * the diff suite cannot compare them with its API, so a few are pinned here. */
static void test_newer_opsets(void **state)
{
	(void)state;
	char b[64];
	oxp_schema_attr a;
	/* DequantizeLinear-21 brought blocked quantization: block_size, default 0 */
	assert_int_equal(since(find("", "DequantizeLinear", 20)), 19);
	assert_int_equal(oxp_schema_find_attribute(find("", "DequantizeLinear", 20), S("block_size")),
	                 -1);
	const oxp_schema *dq = find("", "DequantizeLinear", 21);
	assert_int_equal(since(dq), 21);
	int32_t i = oxp_schema_find_attribute(dq, S("block_size"));
	assert_true(i >= 0);
	assert_true(oxp_schema_attribute(dq, (uint32_t)i, &a));
	assert_int_equal(a.type, OXP_ATTR_INT);
	assert_string_equal(a.default_json, "0");
	assert_string_equal(oxp_schema_port_label(dq, false, 1, b, sizeof(b)), "x_scale");
	/* RMSNormalization and Attention are new in opset 23 */
	const oxp_schema *s = NULL;
	assert_int_equal(oxp_schema_find(S(""), S("RMSNormalization"), 22, &s), OXP_SCHEMA_TOO_NEW);
	const oxp_schema *rms = find("", "RMSNormalization", 23);
	assert_int_equal(since(rms), 23);
	assert_string_equal(oxp_schema_port_label(rms, false, 1, b, sizeof(b)), "scale");
	i = oxp_schema_find_attribute(rms, S("epsilon"));
	assert_true(oxp_schema_attribute(rms, (uint32_t)i, &a));
	assert_string_equal(a.default_json, "1e-05");
	const oxp_schema *att = find("", "Attention", 23);
	assert_int_equal(since(att), 23);
	assert_string_equal(oxp_schema_port_label(att, false, 0, b, sizeof(b)), "Q");
	assert_string_equal(oxp_schema_port_label(att, false, 5, b, sizeof(b)), "past_value");
	assert_null(oxp_schema_port_label(att, false, 6, b, sizeof(b)));
	assert_string_equal(oxp_schema_port_label(att, true, 3, b, sizeof(b)), "qk_matmul_output");
	/* opset 24 added nonpad_kv_seqlen */
	assert_string_equal(oxp_schema_port_label(find("", "Attention", 24), false, 6, b, sizeof(b)),
	                    "nonpad_kv_seqlen");
	assert_int_equal(since(find("", "Attention", 27)), 24);
	/* ai.onnx.ml 4 and 5 (Changelog-ml.md) */
	assert_int_equal(since(find("ai.onnx.ml", "TreeEnsemble", 5)), 5);
	assert_int_equal(oxp_schema_find(S("ai.onnx.ml"), S("TreeEnsemble"), 4, &s),
	                 OXP_SCHEMA_TOO_NEW);
}

static void test_port_labels(void **state)
{
	(void)state;
	char b[64];
	const oxp_schema *conv = find("", "Conv", 13);
	assert_string_equal(oxp_schema_port_label(conv, false, 0, b, sizeof(b)), "X");
	assert_string_equal(oxp_schema_port_label(conv, false, 1, b, sizeof(b)), "W");
	assert_string_equal(oxp_schema_port_label(conv, false, 2, b, sizeof(b)), "B");
	assert_null(oxp_schema_port_label(conv, false, 3, b, sizeof(b)));
	assert_string_equal(oxp_schema_port_label(conv, true, 0, b, sizeof(b)), "Y");
	const oxp_schema *concat = find("", "Concat", 13);
	assert_string_equal(oxp_schema_port_label(concat, false, 0, b, sizeof(b)), "inputs[0]");
	assert_string_equal(oxp_schema_port_label(concat, false, 2, b, sizeof(b)), "inputs[2]");
	const oxp_schema *qc = find("com.microsoft", "QLinearConcat", 1);
	assert_string_equal(oxp_schema_port_label(qc, false, 1, b, sizeof(b)), "Y_zero_point");
	assert_string_equal(oxp_schema_port_label(qc, false, 4, b, sizeof(b)), "inputs[2]");
	uint32_t nth = 99;
	assert_int_equal(oxp_schema_port_of(qc, false, 4, &nth), 2);
	assert_int_equal(nth, 2);
	const oxp_schema *bn = find("", "BatchNormalization", 15);
	assert_string_equal(oxp_schema_port_label(bn, false, 3, b, sizeof(b)), "input_mean");
	oxp_schema_port p;
	assert_true(oxp_schema_input(find("", "Clip", 13), 1, &p));
	assert_string_equal(p.name, "min");
	assert_true(p.flags & OXP_PORT_OPTIONAL);
	assert_string_equal(p.param, "T");
	assert_false(oxp_schema_input(find("", "Clip", 13), 3, &p));
	/* a tiny buffer cuts, never overflows */
	char tiny[3];
	assert_string_equal(oxp_schema_port_label(concat, false, 7, tiny, sizeof(tiny)), "in");
}

static void test_attributes_and_defaults(void **state)
{
	(void)state;
	const oxp_schema *conv = find("", "Conv", 13);
	oxp_schema_attr a;
	int32_t i = oxp_schema_find_attribute(conv, S("auto_pad"));
	assert_true(i >= 0);
	assert_true(oxp_schema_attribute(conv, (uint32_t)i, &a));
	assert_int_equal(a.type, OXP_ATTR_STRING);
	assert_false(a.required);
	assert_string_equal(a.default_json, "\"NOTSET\"");
	char t[64];
	assert_string_equal(oxp_schema_default_text(&a, t, sizeof(t)), "NOTSET");
	assert_int_equal(oxp_schema_find_attribute(conv, S("nope")), -1);
	i = oxp_schema_find_attribute(conv, S("kernel_shape"));
	assert_true(oxp_schema_attribute(conv, (uint32_t)i, &a));
	assert_null(a.default_json);
	i = oxp_schema_find_attribute(find("", "Cast", 13), S("to"));
	assert_true(oxp_schema_attribute(find("", "Cast", 13), (uint32_t)i, &a));
	assert_true(a.required);

	/* is_default compares as the model stores values: floats as float32 */
	const oxp_schema *lr = find("", "LeakyRelu", 16);
	i = oxp_schema_find_attribute(lr, S("alpha"));
	assert_true(oxp_schema_attribute(lr, (uint32_t)i, &a));
	oxp_attr v = {.name = S("alpha"), .type = OXP_ATTR_FLOAT, .f = 0.01f};
	assert_true(oxp_schema_attr_is_default(&a, &v));
	v.f = 0.02f;
	assert_false(oxp_schema_attr_is_default(&a, &v));
	v.type = OXP_ATTR_INT; /* another type is never the default */
	v.i = 0;
	assert_false(oxp_schema_attr_is_default(&a, &v));

	const oxp_schema *rnn = find("", "RNN", 14);
	i = oxp_schema_find_attribute(rnn, S("activations"));
	assert_true(oxp_schema_attribute(rnn, (uint32_t)i, &a));
	assert_string_equal(a.default_json, "[\"Tanh\",\"Tanh\"]");
	assert_string_equal(oxp_schema_default_text(&a, t, sizeof(t)), "Tanh,Tanh");
	oxp_str acts[2] = {S("Tanh"), S("Tanh")};
	oxp_attr sv = {.name = S("activations"), .type = OXP_ATTR_STRINGS, .nstrings = 2,
	               .strings = acts};
	assert_true(oxp_schema_attr_is_default(&a, &sv));
	sv.nstrings = 1;
	assert_false(oxp_schema_attr_is_default(&a, &sv));

	/* what a node leaves to the defaults: Conv-11 defaults auto_pad and group */
	oxp_attr given[2] = {{.name = S("group"), .type = OXP_ATTR_INT, .i = 2},
	                     {.name = S("kernel_shape"), .type = OXP_ATTR_INTS}};
	oxp_node cn = {.op_type = S("Conv"), .attrs = given, .nattrs = 2};
	uint32_t at = 0;
	assert_true(oxp_schema_next_left_default(conv, &cn, &at, &a));
	assert_string_equal(a.name, "auto_pad");
	assert_false(oxp_schema_next_left_default(conv, &cn, &at, &a)); /* group is given */
	cn.nattrs = 0;
	at = 0;
	assert_true(oxp_schema_next_left_default(conv, &cn, &at, &a));
	assert_true(oxp_schema_next_left_default(conv, &cn, &at, &a));
	assert_string_equal(a.name, "group");
	assert_false(oxp_schema_next_left_default(conv, &cn, &at, &a));

	const oxp_schema *gemm = find("", "Gemm", 13);
	i = oxp_schema_find_attribute(gemm, S("transA"));
	assert_true(oxp_schema_attribute(gemm, (uint32_t)i, &a));
	oxp_attr iv = {.name = S("transA"), .type = OXP_ATTR_INT, .i = 0};
	assert_true(oxp_schema_attr_is_default(&a, &iv));
	iv.i = 1;
	assert_false(oxp_schema_attr_is_default(&a, &iv));
}

static void test_types(void **state)
{
	(void)state;
	oxp_schema_port p;
	assert_true(oxp_schema_input(find("", "Relu", 14), 0, &p));
	assert_true(oxp_schema_types_allow(&p.types, OXP_TYPE_TENSOR, OXP_DT_FLOAT));
	assert_true(oxp_schema_types_allow(&p.types, OXP_TYPE_TENSOR, OXP_DT_INT32));
	/* an element type beyond what the table models is never held against a node */
	assert_true(oxp_schema_types_allow(&p.types, OXP_TYPE_TENSOR, 40));
	assert_true(oxp_schema_input(find("", "Relu", 13), 0, &p));
	assert_false(oxp_schema_types_allow(&p.types, OXP_TYPE_TENSOR, OXP_DT_INT64));
	assert_false(oxp_schema_types_allow(&p.types, OXP_TYPE_SEQUENCE, OXP_DT_FLOAT));
	assert_true(oxp_schema_types_allow(&p.types, OXP_TYPE_NONE, OXP_DT_INT64));
	char b[256];
	assert_true(oxp_schema_input(find("", "Shape", 13), 0, &p));
	assert_true(oxp_schema_output(find("", "Shape", 13), 0, &p));
	assert_string_equal(oxp_schema_types_text(&p.types, b, sizeof(b)), "tensor(int64)");
	assert_string_equal(p.param, "T1");
	assert_true(oxp_schema_input(find("", "SequenceAt", 11), 0, &p));
	assert_true(oxp_schema_types_allow(&p.types, OXP_TYPE_SEQUENCE, OXP_DT_FLOAT));
	assert_false(oxp_schema_types_allow(&p.types, OXP_TYPE_TENSOR, OXP_DT_FLOAT));
}

static void test_links_and_versions(void **state)
{
	(void)state;
	char b[256];
	assert_string_equal(oxp_schema_link(find("", "Conv", 13), true, b, sizeof(b)),
	                    "https://onnx.ai/onnx/operators/onnx__Conv.html#l-onnx-op-conv-11");
	assert_string_equal(oxp_schema_link(find("", "Conv", 13), false, b, sizeof(b)),
	                    "https://onnx.ai/onnx/operators/onnx__Conv.html");
	assert_string_equal(oxp_schema_link(find("ai.onnx.ml", "LinearRegressor", 1), true, b,
	                                    sizeof(b)),
	                    "https://onnx.ai/onnx/operators/onnx_aionnxml_LinearRegressor.html"
	                    "#l-onnx-opai-onnx-ml-linearregressor-1");
	assert_string_equal(oxp_schema_link(find("com.microsoft", "FusedConv", 1), true, b,
	                                    sizeof(b)),
	                    "https://github.com/microsoft/onnxruntime/blob/main/docs/"
	                    "ContribOperators.md#com.microsoft.FusedConv");
	assert_int_equal(oxp_schema_newest_opset(S("")), 27);
	assert_int_equal(oxp_schema_newest_opset(S("ai.onnx.ml")), 5);
	assert_int_equal(oxp_schema_newest_opset(S("x.y")), 0);
	assert_int_equal(oxp_schema_newest_ir(), 13);
	assert_int_equal(oxp_schema_min_ir(S(""), 9), 4);
	assert_int_equal(oxp_schema_min_ir(S(""), 15), 8);
	assert_int_equal(oxp_schema_min_ir(S(""), 27), 13);
	assert_int_equal(oxp_schema_min_ir(S(""), 99), 0);
	assert_int_equal(oxp_schema_min_ir(S("com.microsoft"), 1), 0);
}

/* The whole table: sane counts, ascending versions per op, every port and attribute
 * named, every link well-formed. */
static void test_table_integrity(void **state)
{
	(void)state;
	size_t n = oxp_schema_count();
	assert_true(n > 700);
	assert_null(oxp_schema_at(n));
	const char *prev_name = "", *prev_dom = "";
	int prev_since = 0;
	for (size_t i = 0; i < n; i++) {
		const oxp_schema *s = oxp_schema_at(i);
		oxp_schema_info si;
		oxp_schema_get_info(s, &si);
		assert_true(si.since_version >= 1);
		if (!strcmp(si.name, prev_name) && !strcmp(si.domain, prev_dom))
			assert_true(si.since_version > prev_since);
		prev_name = si.name;
		prev_dom = si.domain;
		prev_since = si.since_version;
		assert_true(si.min_inputs <= si.max_inputs);
		assert_true(si.min_outputs <= si.max_outputs);
		oxp_schema_port p;
		for (uint32_t k = 0; k < si.ninputs; k++) {
			assert_true(oxp_schema_input(s, k, &p));
			assert_true(p.name[0] != '\0');
			assert_true(p.constraint < (int32_t)si.nconstraints);
		}
		oxp_schema_attr a;
		for (uint32_t k = 0; k < si.nattrs; k++) {
			assert_true(oxp_schema_attribute(s, k, &a));
			assert_true(a.name[0] != '\0');
			assert_true(!(a.required && a.default_json != NULL));
		}
		char b[256];
		assert_memory_equal(oxp_schema_link(s, true, b, sizeof(b)), "https://", 8);
		/* the look-up finds each version at its own opset */
		const oxp_schema *again = NULL;
		assert_int_equal(oxp_schema_find(S(si.domain), S(si.name), si.since_version, &again),
		                 OXP_SCHEMA_FOUND);
		assert_ptr_equal(again, s);
	}
}

/* ---------------------------------------------------------------------------------------
 * Models built byte by byte: ModelProto ir_version 1, opset_import 8 {domain 1, version 2},
 * graph 7, functions 25; GraphProto node 1, name 2, input 11, output 12; NodeProto input 1,
 * output 2, name 3, op_type 4, domain 7, attribute 5 {name 1, f 2, i 3, g 6, type 20};
 * FunctionProto name 1, input 4, output 5, node 7, opset_import 9, domain 10;
 * ValueInfoProto name 1, type 2 {tensor_type 1 {elem_type 1, shape 2}}.
 */
static void opset(pb *b, uint32_t field, const char *domain, uint64_t v)
{
	pb o = {0};
	pb_str(&o, 1, domain);
	pb_uint(&o, 2, v);
	pb_msg(b, field, &o, NULL);
	pb_free(&o);
}

static void tensor_vi(pb *g, uint32_t field, const char *name, uint64_t elem)
{
	pb vi = {0}, tp = {0}, tt = {0}, shape = {0};
	pb_uint(&tt, 1, elem);
	pb_msg(&tt, 2, &shape, NULL);
	pb_msg(&tp, 1, &tt, NULL);
	pb_str(&vi, 1, name);
	pb_msg(&vi, 2, &tp, NULL);
	pb_msg(g, field, &vi, NULL);
	pb_free(&vi);
	pb_free(&tp);
	pb_free(&tt);
	pb_free(&shape);
}

/* A node: inputs and outputs separated by "|", e.g. "x|y". */
static void node(pb *g, uint32_t field, const char *op, const char *domain, const char *ins,
                 const char *outs, const pb *attrs)
{
	pb n = {0};
	char buf[128];
	for (int side = 0; side < 2; side++) {
		snprintf(buf, sizeof(buf), "%s", side ? outs : ins);
		for (char *t = strtok(buf, ","); t != NULL; t = strtok(NULL, ","))
			pb_str(&n, side ? 2 : 1, strcmp(t, "_") ? t : "");
	}
	pb_str(&n, 4, op);
	if (domain != NULL)
		pb_str(&n, 7, domain);
	if (attrs != NULL)
		pb_raw(&n, attrs->p, attrs->n);
	pb_msg(g, field, &n, NULL);
	pb_free(&n);
}

typedef struct built {
	oxp_model *m;
	oxp_dag *d;
	oxp_check *c;
} built;

static built build(const pb *model)
{
	built r = {0};
	oxp_error e;
	r.m = pb_parse_ok(model, NULL);
	if (oxp_dag_build(&r.d, r.m, NULL, &e) != OXP_OK)
		fail_msg("dag: %s", e.message);
	if (oxp_check_run(&r.c, r.m, r.d, -1, &e) != OXP_OK)
		fail_msg("check: %s", e.message);
	return r;
}

/* (the model belongs to the support code: support_free_all() frees it) */
static void unbuild(built *r)
{
	oxp_check_free(r->c);
	oxp_dag_free(r->d);
}

/* The problem of that code on that node id ("" for none), or NULL. */
static const oxp_problem *problem(const built *r, oxp_check_code code, const char *node_id)
{
	const oxp_check_view *cv = oxp_check_get(r->c);
	const oxp_dag_view *v = oxp_dag_get(r->d);
	for (uint32_t i = 0; i < cv->nproblems; i++) {
		const oxp_problem *p = &cv->problems[i];
		const char *id = p->node == OXP_NONE ? "" : v->nodes[p->node].id;
		if (p->code == code && !strcmp(id, node_id))
			return p;
	}
	return NULL;
}

static void test_resolution_and_check(void **state)
{
	(void)state;
	/* main graph at opset 11: Clip-11, a Cast without `to` in an If's then branch, a call
	 * of local function "local.Act" whose body imports opset 13 (Clip-13) */
	pb g = {0}, model = {0}, thenb = {0}, attr = {0}, fn = {0}, fnode = {0};
	node(&thenb, 1, "Cast", NULL, "x", "t", NULL);
	pb_str(&thenb, 2, "then");
	tensor_vi(&thenb, 12, "t", 1);
	pb_str(&attr, 1, "then_branch");
	pb_msg(&attr, 6, &thenb, NULL);
	pb_uint(&attr, 20, OXP_ATTR_GRAPH);
	pb wrap = {0};
	pb_msg(&wrap, 5, &attr, NULL);
	node(&g, 1, "Clip", NULL, "x", "c", NULL);
	node(&g, 1, "If", NULL, "b", "y", &wrap);
	node(&g, 1, "Act", "local", "c", "z", NULL);
	node(&g, 1, "Attention", "com.microsoft", "x,x", "w", NULL);
	pb_str(&g, 2, "g");
	tensor_vi(&g, 11, "x", 1);
	tensor_vi(&g, 11, "b", 9);
	tensor_vi(&g, 12, "y", 1);
	tensor_vi(&g, 12, "z", 1);
	tensor_vi(&g, 12, "w", 1);
	node(&fnode, 7, "Clip", NULL, "a", "o", NULL);
	pb_str(&fn, 1, "Act");
	pb_str(&fn, 4, "a");
	pb_str(&fn, 5, "o");
	pb_raw(&fn, fnode.p, fnode.n);
	opset(&fn, 9, "", 13);
	pb_str(&fn, 10, "local");
	pb_uint(&model, 1, 8);
	opset(&model, 8, "", 11);
	opset(&model, 8, "local", 1);
	opset(&model, 8, "com.microsoft", 1);
	pb_msg(&model, 7, &g, NULL);
	pb_msg(&model, 25, &fn, NULL);
	built r = build(&model);
	const oxp_dag_view *v = oxp_dag_get(r.d);
	uint32_t clip = oxp_dag_find_node(r.d, "n0");
	uint32_t cast = oxp_dag_find_node(r.d, "n1.then_branch.n0");
	uint32_t call = oxp_dag_find_node(r.d, "n2");
	uint32_t fclip = oxp_dag_find_node(r.d, "f0.n0");
	assert_int_equal(v->nodes[clip].opset, 11);
	assert_int_equal(since(v->nodes[clip].schema), 11);
	assert_int_equal(v->nodes[cast].opset, 11);
	assert_int_equal(since(v->nodes[cast].schema), 9);
	assert_int_equal(v->nodes[fclip].opset, 13);
	assert_int_equal(since(v->nodes[fclip].schema), 13);
	assert_null(v->nodes[call].schema);
	char b[96];
	assert_string_equal(oxp_dag_port_label(r.d, call, false, 0, b, sizeof(b)), "a");
	assert_string_equal(oxp_dag_port_label(r.d, call, true, 0, b, sizeof(b)), "o");
	assert_null(oxp_dag_port_label(r.d, call, false, 1, b, sizeof(b)));
	assert_string_equal(oxp_dag_port_label(r.d, clip, false, 0, b, sizeof(b)), "input");

	const oxp_problem *p = problem(&r, OXP_C_MISSING_ATTRIBUTE, "n1.then_branch.n0");
	assert_non_null(p);
	assert_int_equal(p->severity, OXP_SEV_ERROR);
	assert_non_null(strstr(p->message, "'to'"));
	p = problem(&r, OXP_C_MISSING_ATTRIBUTE, "n3"); /* Attention without num_heads */
	assert_non_null(p);
	assert_int_equal(p->severity, OXP_SEV_WARNING); /* com.microsoft */
	/* the If has no else_branch (If requires both) */
	assert_non_null(problem(&r, OXP_C_MISSING_ATTRIBUTE, "n1"));
	const oxp_check_view *cv = oxp_check_get(r.c);
	assert_int_equal(cv->count[OXP_SEV_ERROR], 2);
	assert_int_equal(cv->by_code[OXP_C_MISSING_ATTRIBUTE], 3);
	unbuild(&r);
	pb_free(&g);
	pb_free(&model);
	pb_free(&thenb);
	pb_free(&attr);
	pb_free(&wrap);
	pb_free(&fn);
	pb_free(&fnode);
}

static void test_check_counts_and_order(void **state)
{
	(void)state;
	/* opset 11 without the ai.onnx.ml import; an undefined input; an out-of-order use */
	pb g = {0}, model = {0};
	node(&g, 1, "Relu", NULL, "t", "y", NULL);
	node(&g, 1, "Relu", NULL, "x", "t", NULL);
	node(&g, 1, "Relu", NULL, "nope", "u", NULL);
	node(&g, 1, "Binarizer", "ai.onnx.ml", "x", "v", NULL);
	pb_str(&g, 2, "g");
	tensor_vi(&g, 11, "x", 1);
	tensor_vi(&g, 12, "y", 1);
	pb_uint(&model, 1, 8);
	opset(&model, 8, "", 11);
	pb_msg(&model, 7, &g, NULL);
	built r = build(&model);
	assert_non_null(problem(&r, OXP_C_USED_BEFORE_PRODUCED, "n0"));
	assert_non_null(problem(&r, OXP_C_UNDEFINED_VALUE, "n2"));
	assert_non_null(problem(&r, OXP_C_DOMAIN_NOT_IMPORTED, "n3"));
	const oxp_check_view *cv = oxp_check_get(r.c);
	assert_int_equal(cv->count[OXP_SEV_ERROR], 3);
	/* listed in node order */
	uint32_t last = 0;
	for (uint32_t i = 0; i < cv->nproblems; i++) {
		uint32_t k = cv->problems[i].node == OXP_NONE ? 0 : cv->problems[i].node + 1;
		assert_true(k >= last);
		last = k;
	}
	assert_string_equal(oxp_check_code_name(OXP_C_USED_BEFORE_PRODUCED), "used_before_produced");
	assert_int_equal(oxp_check_code_severity(OXP_C_UNUSED_INITIALIZER), OXP_SEV_INFO);
	assert_string_equal(oxp_check_code_name(OXP_C__COUNT), "unknown");
	assert_string_equal(oxp_severity_name(OXP_SEV_WARNING), "warning");
	unbuild(&r);
	pb_free(&g);
	pb_free(&model);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lookup_by_opset),
	    cmocka_unit_test(test_newer_opsets),
	    cmocka_unit_test(test_port_labels),
	    cmocka_unit_test(test_attributes_and_defaults),
	    cmocka_unit_test(test_types),
	    cmocka_unit_test(test_links_and_versions),
	    cmocka_unit_test(test_table_integrity),
	    cmocka_unit_test(test_resolution_and_check),
	    cmocka_unit_test(test_check_counts_and_order),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	support_free_all();
	return rc;
}
