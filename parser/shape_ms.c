/*
 * shape_ms.c — shape rules for onnxruntime's contrib ops (domain com.microsoft, and the
 * few it registers under the ONNX domain), the ones LLM and transformer exports are made
 * of: MatMulNBits, GroupQueryAttention, MultiHeadAttention, Attention, the Skip/Simplified
 * layer norms, RotaryEmbedding, the fused GELUs, FusedMatMul, DequantizeLinear.
 *
 * The definitions are onnxruntime's docs/ContribOperators.md (the shapes of each op's
 * inputs and outputs).  As everywhere in shape inference, a rule writes only what it
 * knows: a dim it cannot tell (a present cache's total length, which depends on a runtime
 * input) stays unknown, never guessed.  Without these rules the MatMuls after an attention
 * of an LLM had no input shape, so the cost model could not count them (docs/cost.md).
 */
#include "parser/shape.h"

#include <string.h>

/* Y = A x dequantized B: A [..., K] -> [..., N], N the attribute (B is packed [N, ...]). */
static oxp_code r_matmul_nbits(sh_ctx *c)
{
	sh_type a;
	int64_t n;
	oxp__sh_in(c, 0, &a);
	if (a.rank < 1)
		a.rank = -1;
	else /* no usable N: the last dim is unknown, the others stand */
		a.d[a.rank - 1] = oxp__sh_attr_int(c, "N", &n) == SH_OK && n >= 0 ? sh_dim_val(n)
		                                                                 : sh_dim_unk();
	return oxp__sh_out(c, 0, &a);
}

/* FusedMatMul: MatMul with transA/transB (of the last two dims) and alpha. */
static oxp_code r_fused_matmul(sh_ctx *c)
{
	sh_type a, b, t;
	int64_t ta, tb;
	oxp__sh_in(c, 0, &a);
	oxp__sh_in(c, 1, &b);
	if (!oxp__sh_attr_int_or(c, "transA", 0, &ta) || !oxp__sh_attr_int_or(c, "transB", 0, &tb))
		return OXP_OK;
	if ((ta != 0 && a.rank < 2) || (tb != 0 && b.rank < 2))
		return OXP_OK;
	if (ta != 0) {
		oxp_dim x = a.d[a.rank - 1];
		a.d[a.rank - 1] = a.d[a.rank - 2];
		a.d[a.rank - 2] = x;
	}
	if (tb != 0) {
		oxp_dim x = b.d[b.rank - 1];
		b.d[b.rank - 1] = b.d[b.rank - 2];
		b.d[b.rank - 2] = x;
	}
	oxp__sh_matmul_shape(&t, &a, &b);
	t.elem = a.elem != 0 ? a.elem : b.elem;
	return oxp__sh_out(c, 0, &t);
}

/* head_size * heads as a dim: known when both are. */
static oxp_dim heads_dim(int64_t heads, oxp_dim head_size)
{
	return oxp__sh_dim_mul(sh_dim_val(heads), head_size);
}

/* A dim divided by a known positive count when it divides exactly, else unknown. */
static oxp_dim dim_div(oxp_dim d, int64_t k)
{
	if (!sh_known(d) || k <= 0 || d.value % k != 0)
		return sh_dim_unk();
	return sh_dim_val(d.value / k);
}

/* An attention's outputs: y, then the present key and value caches [B, heads, T,
 * head_size] (outputs 1 and 2 when there).  T depends on a runtime input (the total
 * sequence length, or the past buffer when shared), so it stays unknown. */
static oxp_code attention_out(sh_ctx *c, const sh_type *y, int64_t heads, oxp_dim hs)
{
	SH_TRY(oxp__sh_out(c, 0, y));
	sh_type t;
	oxp__sh_type_unknown(&t);
	t.elem = y->elem;
	t.rank = 4;
	t.d[0] = y->d[0];
	t.d[1] = sh_dim_val(heads);
	t.d[2] = sh_dim_unk();
	t.d[3] = hs;
	for (size_t i = 1; i <= 2 && i < oxp__sh_nout(c); i++)
		SH_TRY(oxp__sh_out(c, i, &t));
	return OXP_OK;
}

/* GroupQueryAttention(query, key?, value?, past_key, past_value, seqlens_k,
 * total_sequence_length, cos_cache?, sin_cache?): query [B, S, N·H] with key and value
 * [B, S, K·H], or packed [B, S, (N + 2K)·H] without them; output [B, S, N·H], present
 * key and value [B, K, T, H]. */
static oxp_code r_gqa(sh_ctx *c)
{
	sh_type q, k, t;
	int64_t n, kv;
	oxp__sh_in(c, 0, &q);
	if (q.rank != 3 || oxp__sh_attr_int(c, "num_heads", &n) != SH_OK ||
	    oxp__sh_attr_int(c, "kv_num_heads", &kv) != SH_OK || n <= 0 || kv <= 0 || n > (1 << 20) ||
	    kv > (1 << 20))
		return OXP_OK;
	oxp_dim hs;
	if (oxp__sh_has_in(c, 1)) {
		oxp__sh_in(c, 1, &k);
		hs = k.rank == 3 ? dim_div(k.d[2], kv) : sh_dim_unk();
		if (!sh_known(hs))
			hs = dim_div(q.d[2], n);
	} else {
		hs = dim_div(q.d[2], n + 2 * kv);
	}
	t = q;
	t.d[2] = oxp__sh_has_in(c, 1) ? q.d[2] : heads_dim(n, hs);
	return attention_out(c, &t, kv, hs);
}

/* MultiHeadAttention(query, key?, value?, bias?, key_padding_mask?, attention_bias?,
 * past_key?, past_value?): output [B, S, Dv] with Dv value's last dim ([B, L, Dv]), or
 * N·Hv for a value laid out [B, N, L, Hv]; without value (packed key/value or packed
 * QKV) Dv is query's hidden size.  present key/value [B, N, T, H]. */
static oxp_code r_mha(sh_ctx *c)
{
	sh_type q, v, t;
	int64_t n;
	oxp__sh_in(c, 0, &q);
	if ((q.rank != 3 && q.rank != 5) || oxp__sh_attr_int(c, "num_heads", &n) != SH_OK || n <= 0 ||
	    n > (1 << 20))
		return OXP_OK;
	oxp_dim dv, hs;
	if (q.rank == 5) { /* packed QKV [B, S, N, 3, H] */
		hs = q.d[4];
		dv = heads_dim(n, hs);
	} else if (oxp__sh_has_in(c, 2) && oxp__sh_in(c, 2, &v) && v.rank == 3) {
		dv = v.d[2];
		hs = dim_div(q.d[2], n);
	} else if (oxp__sh_has_in(c, 2) && oxp__sh_in(c, 2, &v) && v.rank == 4) {
		dv = heads_dim(n, v.d[3]);
		hs = v.d[3];
	} else {
		dv = q.d[2];
		hs = dim_div(q.d[2], n);
	}
	oxp__sh_type_unknown(&t);
	t.elem = q.elem;
	t.rank = 3;
	t.d[0] = q.d[0];
	t.d[1] = q.d[1];
	t.d[2] = dv;
	return attention_out(c, &t, n, hs);
}

/* Attention(input, weights, bias?, mask_index?, past?, ...): input [B, S, hidden], weights
 * [hidden, Dq + Dk + Dv] (qkv_hidden_sizes, else three equal parts); output [B, S, Dv],
 * present [2, B, N, T, H]. */
static oxp_code r_attention(sh_ctx *c)
{
	sh_type x, w, t;
	int64_t n;
	oxp__sh_in(c, 0, &x);
	oxp__sh_in(c, 1, &w);
	if (x.rank != 3 || oxp__sh_attr_int(c, "num_heads", &n) != SH_OK || n <= 0 || n > (1 << 20))
		return OXP_OK;
	const int64_t *qkv;
	size_t nq;
	int st = oxp__sh_attr_ints(c, "qkv_hidden_sizes", &qkv, &nq);
	oxp_dim dv = sh_dim_unk();
	if (st == SH_OK && nq == 3 && qkv[2] >= 0)
		dv = sh_dim_val(qkv[2]);
	else if (st == SH_ABSENT && w.rank == 2)
		dv = dim_div(w.d[1], 3);
	t = x;
	t.d[2] = dv;
	SH_TRY(oxp__sh_out(c, 0, &t));
	if (oxp__sh_nout(c) < 2)
		return OXP_OK;
	oxp__sh_type_unknown(&t);
	t.elem = x.elem;
	t.rank = 5;
	t.d[0] = sh_dim_val(2);
	t.d[1] = x.d[0];
	t.d[2] = sh_dim_val(n);
	t.d[3] = sh_dim_unk();
	t.d[4] = dim_div(dv, n);
	return oxp__sh_out(c, 1, &t);
}

/* SkipLayerNormalization, SkipSimplifiedLayerNormalization(input, skip, gamma, beta?,
 * bias?): output and input_skip_bias_sum (output 3) like input; mean and inv_std_var
 * (outputs 1, 2) like input with the last dim 1. */
static oxp_code r_skip_norm(sh_ctx *c)
{
	sh_type x, s;
	oxp__sh_in(c, 0, &x);
	SH_TRY(oxp__sh_out(c, 0, &x));
	if (x.rank >= 1) {
		s = x;
		s.elem = OXP_DT_FLOAT;
		s.d[s.rank - 1] = sh_dim_val(1);
		for (size_t i = 1; i <= 2 && i < oxp__sh_nout(c); i++)
			SH_TRY(oxp__sh_out(c, i, &s));
	}
	return oxp__sh_nout(c) > 3 ? oxp__sh_out(c, 3, &x) : OXP_OK;
}

/* DequantizeLinear (com.microsoft): x's shape, the scale's element type. */
static oxp_code r_dequantize(sh_ctx *c)
{
	sh_type x, s;
	oxp__sh_in(c, 0, &x);
	oxp__sh_in(c, 1, &s);
	x.elem = s.elem;
	return oxp__sh_out(c, 0, &x);
}

/* Sorted by name (oxp__sh_table_find). */
static const sh_op ms_ops[] = {
    {"Attention", r_attention, NULL},
    {"BiasGelu", oxp__sh_rule_same, NULL},
    {"DequantizeLinear", r_dequantize, NULL},
    {"FastGelu", oxp__sh_rule_same, NULL},
    {"FusedMatMul", r_fused_matmul, NULL},
    {"Gelu", oxp__sh_rule_same, NULL},
    {"GroupQueryAttention", r_gqa, NULL},
    {"MatMulNBits", r_matmul_nbits, NULL},
    {"MultiHeadAttention", r_mha, NULL},
    {"QuickGelu", oxp__sh_rule_same, NULL},
    {"RotaryEmbedding", oxp__sh_rule_same, NULL},
    {"SimplifiedLayerNormalization", oxp__sh_rule_same, NULL},
    {"SkipLayerNormalization", r_skip_norm, NULL},
    {"SkipSimplifiedLayerNormalization", r_skip_norm, NULL},
};

const sh_op *oxp__sh_find_ms_op(oxp_str op_type)
{
	return oxp__sh_table_find(ms_ops, sizeof(ms_ops) / sizeof(ms_ops[0]), op_type);
}

/* onnxruntime registers SimplifiedLayerNormalization under the ONNX domain: exporters
 * write it there (onnxruntime-genai's builder does). */
const sh_op *oxp__sh_find_ort_onnx_op(oxp_str op_type)
{
	return oxp_str_eq(op_type, "SimplifiedLayerNormalization") ? oxp__sh_find_ms_op(op_type)
	                                                           : NULL;
}
