/*
 * test_quant.c — parser/quant.c: the roles of the nodes of quantized models (the small
 * models of tests/data/quant, made by tests/data/quant_models.py), the dequantization
 * index arithmetic on hand-made layouts (per-axis, blocked with a partial block,
 * MatMulNBits rows with padding, packed zero points), float32 results with signed zeros,
 * and, for every initializer of every model, that the stored elements a dequantization
 * reads stay inside the tensor.  The hostile pairings of tests/data/quant/hostile (issue
 * 22: block_size 0 divided by zero) fail with their code and a message naming the fault.
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

typedef struct loaded {
	oxp_model *m;
	oxp_dag *d;
	oxp_arena *a;
	const oxp_quant *q;
} loaded;

static void load(loaded *l, const char *name)
{
	char path[256];
	snprintf(path, sizeof(path), "tests/data/quant/%s.onnx", name);
	oxp_error err;
	memset(l, 0, sizeof(*l));
	if (oxp_model_open(&l->m, path, NULL, &err) != OXP_OK)
		fail_msg("%s: %s", path, err.message);
	assert_int_equal(oxp_dag_build(&l->d, l->m, NULL, &err), OXP_OK);
	l->a = oxp_arena_new((size_t)64 << 20);
	assert_int_equal(oxp_quant_analyze(l->d, l->a, &l->q, &err), OXP_OK);
}

static void unload(loaded *l)
{
	oxp_arena_free(l->a);
	oxp_dag_free(l->d);
	oxp_model_free(l->m);
}

static bool op_is(const oxp_dag_view *v, uint32_t ni, const char *op)
{
	return oxp_str_eq(v->nodes[ni].proto->op_type, op);
}

/* Every QuantizeLinear / DequantizeLinear of a QDQ model is plumbing that joins a quantized
 * op of its own scope, or a weight; every other node but Constant is a quantized op. */
static void test_qdq_roles(void **state)
{
	(void)state;
	loaded l;
	load(&l, "small_qdq");
	const oxp_dag_view *v = oxp_dag_get(l.d);
	uint32_t ops = 0, weights = 0, parts = 0;
	for (uint32_t ni = 0; ni < v->nnodes; ni++) {
		const oxp_qnode *qn = &l.q->nodes[ni];
		if (op_is(v, ni, "QuantizeLinear") || op_is(v, ni, "DequantizeLinear")) {
			assert_true(qn->role == OXP_QR_PART || qn->role == OXP_QR_WEIGHT);
			if (qn->role == OXP_QR_PART) {
				assert_int_not_equal(qn->rep, OXP_NONE);
				assert_int_equal(l.q->nodes[qn->rep].role, OXP_QR_OP);
				assert_int_equal(v->nodes[qn->rep].scope, v->nodes[ni].scope);
				parts++;
			} else {
				weights++;
			}
		} else {
			assert_int_equal(qn->role, OXP_QR_OP);
			const oxp_qop *op = &l.q->ops[qn->op];
			assert_int_equal(op->node, ni);
			assert_true(oxp_str_eq(v->nodes[ni].proto->op_type, op->float_op));
			assert_int_equal(op->format, OXP_QF_QDQ);
			assert_int_equal(op->atype, OXP_DT_UINT8);
			if (op_is(v, ni, "Conv") || op_is(v, ni, "Gemm")) {
				assert_int_equal(op->wtype, OXP_DT_INT8);
				assert_int_equal(op->gran, OXP_QG_AXIS);
			} else {
				assert_int_equal(op->wtype, 0);
			}
			ops++;
		}
	}
	assert_int_equal(ops, l.q->nops);
	assert_int_equal(weights, 12); /* 6 weights, 6 int32 biases */
	assert_int_equal(parts + weights, l.q->plumbing);
	assert_int_equal(l.q->float_ops, 0);
	assert_int_equal(l.q->formats, OXP_QF_QDQ);
	unload(&l);
}

/* DynamicQuantizeLinear -> ConvInteger -> Cast -> Mul(Mul(scales)) -> Add: one Conv. */
static void test_dynamic_roles(void **state)
{
	(void)state;
	loaded l;
	load(&l, "small_dynamic");
	const oxp_dag_view *v = oxp_dag_get(l.d);
	uint32_t convs = 0;
	for (uint32_t ni = 0; ni < v->nnodes; ni++) {
		const oxp_qnode *qn = &l.q->nodes[ni];
		if (op_is(v, ni, "ConvInteger")) {
			assert_int_equal(qn->role, OXP_QR_OP);
			const oxp_qop *op = &l.q->ops[qn->op];
			assert_string_equal(op->float_op, "Conv");
			assert_int_equal(op->format, OXP_QF_DYNAMIC);
			assert_true(op->dynamic);
			/* x (dynamic), W with the scale of the Mul chain, B from the Add */
			bool wscale = false, bias = false;
			for (uint32_t i = 0; i < op->nqt; i++) {
				wscale |= op->qt[i].slot == OXP_QS_WEIGHT && op->qt[i].scale != OXP_NONE;
				bias |= op->qt[i].slot == OXP_QS_BIAS;
			}
			assert_true(wscale && bias);
			convs++;
		} else if (op_is(v, ni, "Cast") || op_is(v, ni, "Mul") ||
		           op_is(v, ni, "DynamicQuantizeLinear") ||
		           (op_is(v, ni, "Add") && qn->role != OXP_QR_NONE)) {
			assert_int_equal(qn->role, OXP_QR_PART);
			assert_int_not_equal(qn->rep, OXP_NONE);
		}
	}
	assert_int_equal(convs, 5);
	unload(&l);
}

/* Q -> QLinearConv -> QLinearAdd -> ... -> DQ: the boundary Q and DQ join their ops. */
static void test_qoperator_roles(void **state)
{
	(void)state;
	loaded l;
	load(&l, "qoperator");
	const oxp_dag_view *v = oxp_dag_get(l.d);
	for (uint32_t ni = 0; ni < v->nnodes; ni++) {
		const oxp_qnode *qn = &l.q->nodes[ni];
		if (op_is(v, ni, "QuantizeLinear"))
			assert_true(qn->role == OXP_QR_PART && op_is(v, qn->rep, "QLinearConv"));
		if (op_is(v, ni, "DequantizeLinear"))
			assert_true(qn->role == OXP_QR_PART && op_is(v, qn->rep, "QLinearMatMul"));
		if (op_is(v, ni, "Reshape"))
			assert_int_equal(qn->role, OXP_QR_NONE);
	}
	assert_int_equal(l.q->nops, 4);
	assert_int_equal(l.q->formats, OXP_QF_QOPERATOR);
	unload(&l);
}

/* Index arithmetic on layouts made by hand. */
static void test_scale_index(void **state)
{
	(void)state;
	oxp_dequant dq;
	memset(&dq, 0, sizeof(dq));
	/* [3, 5, 4], per axis 1: element (i, j, k) uses scale j */
	dq.gran = OXP_QG_AXIS;
	dq.dim = 5;
	dq.inner = 4;
	for (uint64_t e = 0; e < 60; e++)
		assert_int_equal(oxp_dequant_scale_index(&dq, e), (e / 4) % 5);
	/* [3, 10, 2] blocked along axis 1 by 4: blocks 0-3, 4-7, 8-9 (partial); scales
	 * [3, 3, 2] */
	dq.gran = OXP_QG_BLOCK;
	dq.dim = 10;
	dq.inner = 2;
	dq.block = 4;
	dq.nblocks = 3;
	for (uint64_t i = 0; i < 3; i++)
		for (uint64_t j = 0; j < 10; j++)
			for (uint64_t k = 0; k < 2; k++)
				assert_int_equal(oxp_dequant_scale_index(&dq, (i * 10 + j) * 2 + k),
				                 (i * 3 + j / 4) * 2 + k);
	/* apply walks the same scales element by element, from any start: scale s = s + 1 */
	float scale[18], y[60];
	int64_t one[60];
	for (int s = 0; s < 18; s++)
		scale[s] = (float)(s + 1);
	for (int e = 0; e < 60; e++)
		one[e] = 1;
	for (uint64_t i = 0; i < 60; i++) {
		oxp_dequant_apply(&dq, i, (size_t)(60 - i), one, scale, NULL, NULL, y);
		for (uint64_t e = i; e < 60; e++)
			assert_true(y[e - i] == (float)(oxp_dequant_scale_index(&dq, e) + 1));
	}
	dq.gran = OXP_QG_AXIS;
	for (uint64_t i = 0; i < 60; i++) {
		oxp_dequant_apply(&dq, i, (size_t)(60 - i), one, scale, NULL, NULL, y);
		for (uint64_t e = i; e < 60; e++)
			assert_true(y[e - i] == (float)((e / 2) % 10 + 1));
	}
}

/* MatMulNBits, 4 bits, N=2, K=5, block 4: rows of 2 blocks of 2 bytes; the second block
 * holds one value and padding.  Zero points packed two per byte per row. */
static void test_nbits_unpack(void **state)
{
	(void)state;
	oxp_dequant dq;
	memset(&dq, 0, sizeof(dq));
	dq.layout = OXP_DQL_NBITS;
	dq.bits = 4;
	dq.ndims = 2;
	dq.dims[0] = 2;
	dq.dims[1] = 5;
	dq.count = 10;
	dq.block = 4;
	dq.gran = OXP_QG_BLOCK;
	dq.dim = 5;
	dq.inner = 1;
	dq.nblocks = 2;
	dq.nscales = 4;
	dq.row_bytes = 4;
	/* row 0: 1 2 3 4 | 5 pad ; row 1: 6 7 8 9 | 10 pad */
	const int64_t bytes[8] = {0x21, 0x43, 0x05, 0x00, 0x76, 0x98, 0x0a, 0x00};
	for (uint64_t i = 0; i < 10; i++) {
		for (uint64_t n = 1; i + n <= 10; n++) {
			uint64_t first, count;
			oxp_dequant_span(&dq, i, n, &first, &count);
			assert_true(first + count <= 8);
			int64_t q[10];
			oxp_dequant_unpack(&dq, i, (size_t)n, bytes + first, first, q);
			for (uint64_t k = 0; k < n; k++)
				assert_int_equal(q[k], (int64_t)(i + k + 1));
		}
	}
	/* packed zero points: rows of ceil(2 * 4 / 8) = 1 byte */
	dq.zp_packed = true;
	dq.zp_row_len = 2;
	dq.zp_row_bytes = 1;
	dq.zp_stored = 2;
	oxp_tensor fake;
	memset(&fake, 0, sizeof(fake));
	dq.zero_point = &fake;
	const int64_t zraw[2] = {0xba, 0x3c};
	int32_t zp[4];
	oxp_dequant_zero_points(&dq, zraw, zp);
	assert_int_equal(zp[0], 0xa);
	assert_int_equal(zp[1], 0xb);
	assert_int_equal(zp[2], 0xc);
	assert_int_equal(zp[3], 0x3);
	dq.zero_point = NULL;
	dq.zp_default = 8;
	oxp_dequant_zero_points(&dq, NULL, zp);
	assert_int_equal(zp[3], 8);
}

/* float32 arithmetic: (q - zp) * scale, the sign of zero from the scale. */
static void test_apply(void **state)
{
	(void)state;
	oxp_dequant dq;
	memset(&dq, 0, sizeof(dq));
	dq.gran = OXP_QG_AXIS;
	dq.dim = 2;
	dq.inner = 1;
	const int64_t q[4] = {3, 3, -128, 127};
	const float scale[2] = {0.1f, -0.25f};
	const int32_t zp[2] = {3, 3};
	float y[4];
	oxp_dequant_apply(&dq, 0, 4, q, scale, zp, NULL, y);
	uint32_t bits;
	memcpy(&bits, &y[0], 4);
	assert_int_equal(bits, 0x00000000u); /* +0 */
	memcpy(&bits, &y[1], 4);
	assert_int_equal(bits, 0x80000000u); /* -0 */
	float want = (float)(-128 - 3) * 0.1f;
	assert_memory_equal(&y[2], &want, 4);
	want = (float)(127 - 3) * -0.25f;
	assert_memory_equal(&y[3], &want, 4);
}

/* Every initializer of every small model: when something pairs it, the spans of every
 * slice stay inside the stored tensor and the zero points fit the scales. */
static void test_spans_inside(void **state)
{
	(void)state;
	static const char *const names[] = {"qoperator", "small_qdq", "small_dynamic", "dq_block_int4",
	                                    "nbits4_zp", "nbits4_nozp", "gbq_uint8_packed",
	                                    "dq_axis0_int8"};
	unsigned paired = 0;
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		loaded l;
		load(&l, names[k]);
		const oxp_dag_view *v = oxp_dag_get(l.d);
		for (uint32_t vi = 0; vi < v->nvalues; vi++) {
			const oxp_tensor *t = v->values[vi].initializer;
			if (v->values[vi].kind != OXP_VALUE_INITIALIZER || t == NULL)
				continue;
			oxp_dequant dq;
			oxp_error err;
			if (oxp_dequant_find(l.d, t, &dq, &err) != OXP_OK || dq.node == OXP_NONE)
				continue;
			paired++;
			uint64_t stored = 0;
			assert_true(oxp_dims_count(t->dims, t->ndims, &stored));
			for (uint64_t i = 0; i < dq.count; i += 7) {
				uint64_t n = dq.count - i < 13 ? dq.count - i : 13, first, count;
				oxp_dequant_span(&dq, i, n, &first, &count);
				assert_true(first + count <= stored);
				for (uint64_t e = i; e < i + n; e++)
					assert_true(oxp_dequant_scale_index(&dq, e) < dq.nscales);
			}
		}
		unload(&l);
	}
	assert_true(paired >= 20);
}

/* tests/data/quant/hostile/index.txt: "model tensor error says" per line (error the
 * oxp_code_name, says a word of the message, '+' for a space; "-" when valid).  Each
 * model is analysed, then its tensor's pairing fails as the index says, or (valid) pairs
 * with every index inside the scales and the stored bytes. */
static void test_hostile_pairings(void **state)
{
	(void)state;
	FILE *f = fopen("tests/data/quant/hostile/index.txt", "r");
	assert_non_null(f);
	char line[256];
	unsigned failed = 0, valid = 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		char name[64], tensor[64], code[64], says[64];
		if (line[0] == '#')
			continue;
		assert_int_equal(sscanf(line, "%63s %63s %63s %63s", name, tensor, code, says), 4);
		for (char *p = says; *p; p++)
			if (*p == '+')
				*p = ' ';
		char path[128];
		snprintf(path, sizeof(path), "hostile/%s", name);
		loaded l;
		load(&l, path);
		const oxp_tensor *t = oxp_dag_find_tensor(l.d, tensor);
		assert_non_null(t);
		oxp_dequant dq;
		oxp_error err;
		oxp_code rc = oxp_dequant_find(l.d, t, &dq, &err);
		if (strcmp(code, "-") != 0) {
			if (rc == OXP_OK || strcmp(oxp_code_name(rc), code) != 0 ||
			    strstr(err.message, says) == NULL)
				fail_msg("%s: %s \"%s\"; want %s naming \"%s\"", name, oxp_code_name(rc),
				         err.message, code, says);
			assert_int_equal(err.code, rc);
			assert_int_equal(dq.node, OXP_NONE);
			failed++;
		} else {
			if (rc != OXP_OK)
				fail_msg("%s: %s", name, err.message);
			assert_int_not_equal(dq.node, OXP_NONE);
			uint64_t stored = 0, first, count;
			assert_true(oxp_dims_count(t->dims, t->ndims, &stored));
			assert_true(dq.count > 0 && dq.block > 0 && dq.nblocks > 0);
			for (uint64_t e = 0; e < dq.count; e++) {
				oxp_dequant_span(&dq, e, 1, &first, &count);
				assert_true(first + count <= stored);
				assert_true(oxp_dequant_scale_index(&dq, e) < dq.nscales);
			}
			valid++;
		}
		unload(&l);
	}
	fclose(f);
	assert_true(failed >= 20 && valid >= 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_qdq_roles),     cmocka_unit_test(test_dynamic_roles),
	    cmocka_unit_test(test_qoperator_roles), cmocka_unit_test(test_scale_index),
	    cmocka_unit_test(test_nbits_unpack),  cmocka_unit_test(test_apply),
	    cmocka_unit_test(test_spans_inside), cmocka_unit_test(test_hostile_pairings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
