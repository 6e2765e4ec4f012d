/*
 * test_shape.c — shape inference (parser/shape*.c), the known values of its data propagation
 * and the bookkeeping flags (parser/bookkeeping.c) on the small models of tests/data/shape/
 * (written by tests/data/shape/make_models.py; the expected shapes below are worked out
 * by hand from the ONNX operator specification).
 *
 * A type is written "ELEM:DIMS": ELEM the TensorProto data type number, DIMS "*" for an
 * unknown rank, "" for a scalar, else comma-separated dims: a number, a symbol, or "?" for
 * an unknown dim.  "-" means: no inferred type at all.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "parser/oxp.h"

typedef struct fixture {
	oxp_model *model;
	oxp_dag *dag;
} fixture;

/* tests/data/shape/NAME.onnx, found from this file's own path (the tests run from the
 * repository root, as run-all.sh and `make unit` do). */
static void fixture_path(char *out, size_t size, const char *name)
{
	const char *self = __FILE__;
	const char *cut = strstr(self, "tests/unit/");
	int prefix = cut != NULL ? (int)(cut - self) : 0;
	snprintf(out, size, "%.*stests/data/shape/%s.onnx", prefix, self, name);
}

static void unload(fixture *f)
{
	oxp_dag_free(f->dag);
	oxp_model_free(f->model);
	f->dag = NULL;
	f->model = NULL;
}

/* Load tests/data/shape/NAME.onnx into f (freeing what f held). */
static void load_with(fixture *f, const char *name, bool infer)
{
	char path[1024];
	oxp_error err;
	fixture_path(path, sizeof(path), name);
	unload(f);
	oxp_code rc = oxp_model_open(&f->model, path, NULL, &err);
	if (rc != OXP_OK)
		fail_msg("%s: %s", path, err.message);
	oxp_dag_options opt = {.infer_shapes = infer};
	rc = oxp_dag_build(&f->dag, f->model, &opt, &err);
	if (rc != OXP_OK)
		fail_msg("%s: dag: %s", path, err.message);
}

static void load(fixture *f, const char *name)
{
	load_with(f, name, true);
}

/* cmocka setup/teardown: a fixture per test, freed even when the test fails. */
static int setup(void **state)
{
	static fixture f;
	memset(&f, 0, sizeof(f));
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	unload(*state);
	return 0;
}

static uint32_t scope_index(const fixture *f, const char *id)
{
	const oxp_dag_view *v = oxp_dag_get(f->dag);
	for (uint32_t s = 0; s < v->nscopes; s++)
		if (strcmp(v->scopes[s].id, id) == 0)
			return s;
	fail_msg("no scope '%s'", id);
	return 0;
}

/* The value of that name as seen from scope `scope_id` ("" main). */
static const oxp_value *value_in(const fixture *f, const char *scope_id, const char *name)
{
	oxp_str s = {name, strlen(name)};
	uint32_t vi = oxp_dag_find_value(f->dag, scope_index(f, scope_id), s);
	if (vi == OXP_NONE)
		fail_msg("no value '%s' in scope '%s'", name, scope_id);
	return &oxp_dag_get(f->dag)->values[vi];
}

static void format_type(char *out, size_t size, const oxp_value_type *t)
{
	size_t o = 0;
	if (t->source == OXP_SHAPE_NONE) {
		snprintf(out, size, "-");
		return;
	}
	o += (size_t)snprintf(out + o, size - o, "%d:", (int)t->elem_type);
	if (t->rank < 0) {
		snprintf(out + o, size - o, "*");
		return;
	}
	for (int32_t k = 0; k < t->rank && o < size; k++) {
		const oxp_dim *d = &t->dims[k];
		const char *sep = k > 0 ? "," : "";
		if (d->kind == OXP_DIM_VALUE)
			o += (size_t)snprintf(out + o, size - o, "%s%lld", sep, (long long)d->value);
		else if (d->kind == OXP_DIM_PARAM)
			o += (size_t)snprintf(out + o, size - o, "%s%.*s", sep, (int)d->param.len,
			                      d->param.p);
		else
			o += (size_t)snprintf(out + o, size - o, "%s?", sep);
	}
}

static void expect_in(const fixture *f, const char *scope_id, const char *name,
                      const char *want)
{
	char got[512];
	const oxp_value *v = value_in(f, scope_id, name);
	format_type(got, sizeof(got), &v->inferred);
	if (strcmp(got, want) != 0)
		fail_msg("%s (scope '%s'): inferred %s, expected %s", name, scope_id, got, want);
	if (v->inferred.source != OXP_SHAPE_NONE)
		assert_int_equal(v->inferred.source, OXP_SHAPE_INFERRED);
}

static void expect(const fixture *f, const char *name, const char *want)
{
	expect_in(f, "", name, want);
}

/* ---------------------------------------------------------------------------------------
 */
static void test_elementwise_broadcast(void **state)
{
	fixture *f = *state;
	load(f, "elementwise");
	expect(f, "add", "1:N,3,5");
	expect(f, "mul", "1:4,N,3,5");
	expect(f, "relu", "1:4,N,3,5");
	expect(f, "less", "9:N,3,5");
	expect(f, "where", "1:N,3,5");
	expect(f, "sum", "1:4,N,3,5");
	expect(f, "sym_sym", "1:M,M");   /* equal symbols broadcast to themselves */
	expect(f, "sym_known", "1:5");   /* a known size other than 1 wins */
	expect(f, "sym_other", "1:?");   /* two different symbols: unknown */
	expect(f, "unknown_rank", "1:*"); /* an input of unknown rank */
	expect(f, "cast", "7:N,3,1");
	expect(f, "isnan", "9:N,3,1");
	expect(f, "not", "9:N,3,5");
	expect(f, "pow", "1:N,3,5");
	expect(f, "softmax", "1:N,3,1");
}

static void test_declared_wins(void **state)
{
	fixture *f = *state;
	load(f, "elementwise");
	/* a declared output keeps its declared type; the inferred one is recorded apart */
	const oxp_value *v = value_in(f, "", "declared_out");
	assert_int_equal(v->declared.source, OXP_SHAPE_DECLARED);
	assert_int_equal(v->declared.rank, 3);
	expect(f, "declared_out", "1:N,3,1");
	assert_ptr_equal(oxp_value_best_type(v), &v->declared);
	/* relu's declared type has no shape: the best type is the inferred one */
	v = value_in(f, "", "relu");
	assert_int_equal(v->declared.rank, -1);
	assert_ptr_equal(oxp_value_best_type(v), &v->inferred);
	/* relu_u = Relu(input of unknown shape): only the elem type is inferred, but its
	 * declared [9,9] is what its consumer sees */
	expect(f, "relu_u", "1:*");
	expect(f, "after_decl", "1:9,9");
	/* add is declared [N,?,5]: its consumer gets the declared dims with the inferred 3 */
	expect(f, "after_add", "1:N,3,5");
	v = value_in(f, "", "add");
	assert_int_equal(v->declared.dims[1].kind, OXP_DIM_UNKNOWN);
}

static void test_no_inference_option(void **state)
{
	fixture *f = *state;
	load_with(f, "elementwise", false);
	expect(f, "add", "-");
	expect(f, "relu", "-");
}

static void test_legacy_opsets(void **state)
{
	fixture *f = *state;
	load(f, "legacy"); /* opset 4 */
	expect(f, "add_bcast", "1:2,3,4,5"); /* B broadcast onto A: A's shape */
	expect(f, "max6", "1:2,3,4,5");      /* no broadcasting before opset 8 */
	expect(f, "less6", "9:2,3,4,5");
	expect(f, "reshape1", "1:2,60"); /* Reshape-1: shape attribute */
}

static void test_conv_pool(void **state)
{
	fixture *f = *state;
	load(f, "conv");
	expect(f, "c_pad1", "1:1,8,32,32");
	expect(f, "c_s2", "1:1,8,15,15");
	expect(f, "c_same", "1:1,8,16,16");
	expect(f, "c_lower", "1:1,8,11,11");
	expect(f, "c_valid", "1:1,8,28,28");
	expect(f, "c_kattr", "1:1,8,32,34");
	expect(f, "c_sym1x1", "1:N,8,H,W");
	expect(f, "c_sym3x3", "1:N,8,?,?");
	expect(f, "c_symsame", "1:N,8,H,W");
	expect(f, "c_1d", "1:1,4,50");
	expect(f, "ct", "1:1,4,32,32");
	expect(f, "ct_group", "1:1,8,33,33");
	expect(f, "ct_oshape", "1:1,4,40,41");
	expect(f, "ct_same", "1:1,4,32,32");
	expect(f, "mp", "1:1,3,15,15");
	expect(f, "mp_idx", "7:1,3,15,15");
	expect(f, "mp_ceil", "1:1,3,16,16");
	expect(f, "mp_drop", "1:1,1,3,3"); /* the last window would start in the padding */
	expect(f, "ap", "1:1,3,16,16");
	expect(f, "gap", "1:1,3,1,1");
	expect(f, "bn", "1:1,8,32,32");
}

static void test_conv_bad_attributes(void **state)
{
	fixture *f = *state;
	load(f, "conv");
	expect(f, "bad_strides", "1:1,8,?,?");
	expect(f, "bad_kernel", "1:1,8,?,?");
	expect(f, "bad_pads", "1:1,8,?,?");
	expect(f, "bad_autopad", "1:1,8,?,?");
	expect(f, "bad_huge", "1:1,8,?,?");
	expect(f, "bad_nokernel", "1:1,3,?,?");
	expect(f, "mp_ceil_huge", "1:1,1,2,4"); /* the third window starts past INT64_MAX */
}

static void test_tensor_ops(void **state)
{
	fixture *f = *state;
	load(f, "tensor_ops");
	expect(f, "reshape_0m1", "1:2,12");
	expect(f, "reshape_m1", "1:6,4,1");
	expect(f, "transpose_default", "1:4,3,2");
	expect(f, "transpose_perm", "1:3,2,4");
	expect(f, "concat0", "1:4,3,4");
	expect(f, "split_a", "1:2,3,2");
	expect(f, "split_b", "1:2,3,2");
	expect(f, "split_c", "1:2,3,1");
	expect(f, "split_d", "1:2,3,3");
	expect(f, "slice", "1:2,3,2");
	expect(f, "slice_rev", "1:N,S,3");
	expect(f, "slice_sym_all", "1:N,S,3");
	expect(f, "slice_sym_cut", "1:?,S,3");
	expect(f, "slice_sym_rev", "1:N,S,3");
	expect(f, "slice_sym_rev1000", "1:?,S,3"); /* N may be above 1000 */
	expect(f, "gather", "1:2,5,6,4");
	expect(f, "unsqueeze", "1:1,2,3,4");
	expect(f, "squeeze", "1:2,3,4");
	expect(f, "squeeze_all", "1:2,3,4");
	expect(f, "squeeze_sym", "1:*"); /* a symbol might be 1 */
	expect(f, "flatten", "1:2,12");
	expect(f, "flatten_sym", "1:?,3");
	expect(f, "shape_of", "7:3");
	expect(f, "size_of", "7:");
	expect(f, "gemm", "1:5,9");
	expect(f, "matmul", "1:2,3,5,7");
	expect(f, "matmul_vec", "1:3,7");
	expect(f, "reducesum", "1:1,3,4");
	expect(f, "reducemax_all", "1:1,1,1");
	expect(f, "argmax", "7:2,4");
	expect(f, "topk_v", "1:2,3,?"); /* k is a graph input */
	expect(f, "topk_i", "7:2,3,?");
	expect(f, "tile", "1:4,3,12");
	expect(f, "pad", "1:2,6,3");
	expect(f, "expand", "1:5,2,3,4");
	expect(f, "cos", "7:5,1,1,4");
	expect(f, "range", "7:5");
	expect(f, "nonzero", "7:3,?");
}

static void test_einsum_windows_losses(void **state)
{
	fixture *f = *state;
	load(f, "misc17");
	expect(f, "ein_bmm", "1:2,3,5");
	expect(f, "ein_implicit", "1:3,5");
	expect(f, "ein_ellipsis", "1:N,7,4,6");
	expect(f, "ein_diag", "1:4");
	expect(f, "ein_bad", "1:*");
	expect(f, "ein_badcount", "1:*");
	expect(f, "hann", "1:10");
	expect(f, "sce", "1:");
	expect(f, "sce_logp", "1:8,5,3");
	expect(f, "nll", "1:8,3");
}

static void test_negative_axes(void **state)
{
	fixture *f = *state;
	load(f, "tensor_ops");
	expect(f, "concat_neg", "1:2,3,?"); /* 4 + S */
	expect(f, "gather_scalar", "1:2,3");
	expect(f, "unsqueeze_neg", "1:2,1,3,4,1");
	expect(f, "reducemean", "1:2,3");
}

static void test_data_propagation(void **state)
{
	fixture *f = *state;
	load(f, "dataprop"); /* X: [1, L, 64] */
	expect(f, "shp", "7:3");
	expect(f, "len", "7:");
	expect(f, "tgt", "7:3");
	expect(f, "r_l88", "1:L,8,8");   /* Shape -> Gather -> Unsqueeze -> Concat */
	expect(f, "r_lm1", "1:L,64");    /* the -1 solved with L cancelling */
	expect(f, "r_unknown", "1:?,8"); /* 8L / 8... is L*8: not a single symbol */
	expect(f, "r_flat", "1:?");
	expect(f, "zeros", "1:1,L,64");
	expect(f, "expanded", "1:1,L,64");
	expect(f, "r_m1l", "1:64,L");  /* L + 0 stays L */
	expect(f, "r_tail", "1:L,64"); /* Slice of a shape */
	expect(f, "shp_i32", "6:3");
	expect(f, "r_cast", "1:1,L,64"); /* values survive int64 -> int32 -> int64 */
	expect(f, "numel", "7:");
	expect(f, "range2", "7:2");
	expect(f, "shp_head", "7:2");
	expect(f, "r_head", "1:?,?"); /* [1, L] cannot hold 64 L elements: the model is wrong */
	expect(f, "eq", "9:2");
	expect(f, "expanded2", "1:L,64"); /* Equal(L, -1) is false: a size is never negative */
}

/* Constants held in TensorProtos (initializers, Constant `value`): these need the tensor
 * decoder (oxp_tensor_read_i64 / _f64, parser/tensor.c). */
static void test_data_from_tensors(void **state)
{
	fixture *f = *state;
	load(f, "dataprop_tensors"); /* X: [1, L, 64], IMG: [1, 3, 32, 32] */
	expect(f, "len", "7:");
	expect(f, "len1", "7:1");
	expect(f, "r_l88", "1:L,8,8");
	expect(f, "r_0m1", "1:1,?");
	expect(f, "r_m10", "1:1,L,64");
	expect(f, "squeezed", "1:L,64");
	expect(f, "sliced", "1:1,L,16");
	expect(f, "sp1", "1:1,L,24");
	expect(f, "sp2", "1:1,L,40");
	expect(f, "filled", "7:2,5");
	expect(f, "resized", "1:1,3,64,48");
	expect(f, "resized_sizes", "1:1,3,10,20");
	expect(f, "tiled", "1:2,L,128");
	expect(f, "rsum", "1:1,L");
	expect(f, "frange", "1:4");
	load(f, "tensor_ops");
	expect(f, "onehot", "1:7,5,6"); /* depth: an initializer */
}

static void test_subgraphs(void **state)
{
	fixture *f = *state;
	load(f, "subgraphs"); /* X: [N, 3] */
	/* inside the branches, outer values are visible */
	expect_in(f, "n0.then_branch", "t_out", "1:N,3");
	expect_in(f, "n0.else_branch", "e_other", "1:");
	/* If: both branches agree / have different ranks */
	expect(f, "if_out", "1:N,3");
	expect(f, "if_shape", "7:2");
	expect(f, "if_other", "1:*");
	/* Loop: the carried value changes shape; a scan output gets a leading dim */
	expect_in(f, "n1.body", "i", "7:");
	expect_in(f, "n1.body", "acc_out", "1:*");
	expect(f, "loop_acc", "1:*");
	expect(f, "loop_scan", "1:?,N,3");
	/* Scan: scanned axis 1 of [7, T, 4]; output axis -1 */
	expect_in(f, "n2.body", "x_t", "1:7,4");
	expect_in(f, "n2.body", "y_t", "1:7,4");
	expect(f, "scan_state", "1:*");
	expect(f, "scan_y", "1:7,4,T");
}

static void test_order_and_cycles(void **state)
{
	fixture *f = *state;
	load(f, "order");
	expect(f, "a", "1:2,5");
	expect(f, "b", "1:5,2");
	expect(f, "c", "1:5,2");
	expect(f, "cyc1", "-"); /* on a cycle: never ready, stays unknown */
	expect(f, "cyc2", "-");
}

static void test_functions(void **state)
{
	fixture *f = *state;
	load(f, "function");
	expect_in(f, "f0", "s", "7:?"); /* the body's inputs are unknown */
	expect(f, "call_s", "7:?");       /* the call takes the body's result */
	expect(f, "call_y", "-");
	expect(f, "call_perm", "-"); /* perm refers to the caller's attribute */
}

/* The node whose name is `name` in scope `scope_id`. */
static const oxp_dnode *node_named(const fixture *f, const char *scope_id, const char *name)
{
	const oxp_dag_view *v = oxp_dag_get(f->dag);
	uint32_t si = scope_index(f, scope_id);
	for (uint32_t k = 0; k < v->scopes[si].nnodes; k++) {
		const oxp_dnode *dn = &v->nodes[v->scopes[si].first_node + k];
		if (oxp_str_eq(dn->proto->name, name))
			return dn;
	}
	fail_msg("no node '%s' in scope '%s'", name, scope_id);
	return NULL;
}

static void test_bookkeeping(void **state)
{
	fixture *f = *state;
	load(f, "bookkeeping");
	/* computable without input data: constants, shapes, what is computed from them
	 * (a float from weights too), the type- or shape-only inputs of CastLike/EyeLike */
	static const char *const yes[] = {
	    "shp", "c0", "len", "axes0", "len1", "m1", "tgt", "wt", "c_n38", "two", "four", "half",
	    "cl", "sz", "eye", "dead", "shp_out", "rng", "c1", "rng2", "mask", "sy", "ny", "ny1",
	    "tgt_y", "pflat", "pmat", "prev", "ptr", "pads", "pcol", "pcol_flat"};
	/* reads data; random; holds subgraphs; another domain; a local function; on a cycle */
	static const char *const no[] = {"r", "mm", "r3", "xs", "rnd", "eye_e", "if_bk", "custom",
	                                 "fcall", "cyc1", "cyc2", "drop", "masked", "ry", "padded"};
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		if (!node_named(f, "", yes[i])->bookkeeping)
			fail_msg("%s: not bookkeeping", yes[i]);
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (node_named(f, "", no[i])->bookkeeping)
			fail_msg("%s: bookkeeping", no[i]);
	/* in a subgraph: outer values count as their producers do */
	assert_true(node_named(f, "n21.then_branch", "in_c")->bookkeeping);
	assert_true(node_named(f, "n21.then_branch", "in_bk")->bookkeeping);
	assert_false(node_named(f, "n21.then_branch", "in_data")->bookkeeping);
	assert_true(node_named(f, "n21.else_branch", "e_bk")->bookkeeping);
	assert_false(node_named(f, "n21.else_branch", "e_data")->bookkeeping);
	/* a function body's inputs are data */
	assert_false(node_named(f, "f0", "y")->bookkeeping);
	/* the flag does not depend on shape inference */
	load_with(f, "bookkeeping", false);
	assert_true(node_named(f, "", "tgt")->bookkeeping);
	assert_false(node_named(f, "", "r")->bookkeeping);
}

/* "N,-1" for the known values of a value ("" main scope), "-" when none are known. */
static void expect_data(const fixture *f, const char *name, int32_t rank, const char *want)
{
	char got[256];
	size_t o = 0;
	oxp_str s = {name, strlen(name)};
	uint32_t vi = oxp_dag_find_value(f->dag, 0, s);
	oxp_known_data kd;
	if (vi == OXP_NONE || !oxp_dag_value_data(f->dag, vi, &kd)) {
		snprintf(got, sizeof(got), "-");
	} else {
		got[0] = '\0';
		assert_int_equal(kd.rank, rank);
		for (uint32_t k = 0; k < kd.count && o < sizeof(got); k++) {
			const oxp_dim *d = &kd.elems[k];
			const char *sep = k > 0 ? "," : "";
			if (d->kind == OXP_DIM_VALUE)
				o += (size_t)snprintf(got + o, sizeof(got) - o, "%s%lld", sep,
				                      (long long)d->value);
			else if (d->kind == OXP_DIM_PARAM)
				o += (size_t)snprintf(got + o, sizeof(got) - o, "%s%.*s", sep,
				                      (int)d->param.len, d->param.p);
			else
				o += (size_t)snprintf(got + o, sizeof(got) - o, "%s?", sep);
		}
	}
	if (strcmp(got, want) != 0)
		fail_msg("%s: known values %s, expected %s", name, got, want);
}

static void test_known_data(void **state)
{
	fixture *f = *state;
	load(f, "bookkeeping");
	expect_data(f, "shp", 1, "N,3,8");
	expect_data(f, "len", 0, "N");
	expect_data(f, "tgt", 1, "N,-1");
	expect_data(f, "tgt_y", 1, "4,-1");
	expect_data(f, "r", 0, "-"); /* a float tensor */
	/* PyTorch's pads: a 2x2 matrix reversed by rows and transposed, then flattened */
	/* pflat is declared [unk__9] (as onnx.shape_inference writes it), inferred [4]: its
	 * consumer reads 4, else the matrix [-1, 2] and all below would be unknown */
	assert_int_equal(value_in(f, "", "pflat")->declared.dims[0].kind, OXP_DIM_PARAM);
	expect(f, "pflat", "7:4");
	expect_data(f, "pads", 1, "2,0,3,1");
	expect(f, "padded", "1:10,7");
	expect_data(f, "pcol_flat", 1, "1,3"); /* a column sliced out of the matrix */
	expect_data(f, "pmat", 2, "-");        /* matrices are for inference only */
	expect(f, "pmat", "7:2,2");
	/* nothing is known without inference */
	load_with(f, "bookkeeping", false);
	expect_data(f, "shp", 1, "-");
	expect_data(f, "tgt", 1, "-");
}

/* onnxruntime's contrib ops (parser/shape_ms.c, from ContribOperators.md): a present
 * cache's total length depends on a runtime input, so it stays unknown. */
static void test_contrib_ops(void **state)
{
	fixture *f = *state;
	load(f, "contrib");
	expect(f, "nb", "1:B,S,96");
	expect(f, "nb_noN", "1:B,S,?");
	expect(f, "gqa", "1:B,S,64");    /* packed 96 = (4 + 2) x 16 */
	expect(f, "gqa_pk", "1:B,1,?,16");
	expect(f, "gqa_pv", "1:B,1,?,16");
	expect(f, "gqa2", "1:B,S,64");
	expect(f, "gqa2_pk", "1:B,2,?,16"); /* key 32 over 2 kv heads */
	expect(f, "mha4", "1:B,S,32");   /* value [B, 4, L, 8] */
	expect(f, "mha3", "1:B,S,48");   /* value [B, L, 48] */
	expect(f, "mha3_pk", "1:B,4,?,16");
	expect(f, "att", "1:B,S,64");    /* weights 192 = 3 x 64 */
	expect(f, "att_present", "1:2,B,4,?,16");
	expect(f, "att2", "1:B,S,32");   /* qkv_hidden_sizes [64, 64, 32] */
	expect(f, "ssln", "1:B,S,64");
	expect(f, "ssln_m", "1:B,S,1");
	expect(f, "ssln_i", "1:B,S,1");
	expect(f, "ssln_sum", "1:B,S,64");
	expect(f, "fmm", "1:B,S,10");    /* transB: [10, 64] read as [64, 10] */
	expect(f, "rot", "1:B,S,64");
	expect(f, "sln", "1:B,S,64");    /* ONNX domain, as onnxruntime registers it */
}

static void test_bad_attributes(void **state)
{
	fixture *f = *state;
	load(f, "bad"); /* X: [2, 3, 4] */
	expect(f, "bad_perm_dup", "1:*");
	expect(f, "bad_perm_len", "1:*");
	expect(f, "bad_perm_big", "1:*");
	expect(f, "bad_concat_axis", "1:*");
	expect(f, "bad_concat_noaxis", "1:*");
	expect(f, "bad_gather_axis", "1:*");
	expect(f, "bad_flatten", "1:*");
	expect(f, "bad_squeeze", "1:*");
	expect(f, "bad_squeeze_notone", "1:*");
	expect(f, "bad_reshape", "1:?,?");
	expect(f, "bad_reshape_huge", "1:?,?");
	expect(f, "bad_split_a", "1:?,3,4");
	expect(f, "bad_split_c", "1:?,3,4");
	expect(f, "bad_slice_step0", "1:?,3,4");
	expect(f, "bad_axis_type", "1:*");
	expect(f, "softmax_typed_attr", "1:2,3,4");
	expect(f, "bad_broadcast", "1:2,3,?");
	expect(f, "big_rank", "1:*");
	expect(f, "bad_tile", "1:?,?,?");
	expect(f, "bad_expand", "1:*");
	expect(f, "bad_upsample", "1:?,?,?");
	expect(f, "bad_unsqueeze", "1:*");
	expect(f, "custom", "-"); /* another domain */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_elementwise_broadcast, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_declared_wins, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_no_inference_option, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_legacy_opsets, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_conv_pool, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_conv_bad_attributes, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_tensor_ops, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_einsum_windows_losses, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_negative_axes, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_data_propagation, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_data_from_tensors, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_subgraphs, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_order_and_cycles, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_functions, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_contrib_ops, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bad_attributes, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bookkeeping, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_known_data, setup, teardown),
	};
	return cmocka_run_group_tests_name("shape", tests, NULL, NULL);
}
