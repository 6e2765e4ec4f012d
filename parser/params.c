/*
 * params.c — the one definition of a model's parameters (docs/cost.md "Parameters",
 * issue 39 item 3).
 *
 * The summary, the cost, the quantization summary and the drawing's boxes each counted
 * their own way: stored elements (a 4-bit weight's packed bytes as elements, scales in),
 * float-equivalent elements, logical quantized values.  One 4-bit LLM read as three
 * different counts.  Now each constant tensor (an initializer, a sparse initializer's
 * values, a Constant node's tensor) says once, in its dag value, what it holds:
 *
 *  - quantized values (the weights and integer biases quantization finds, parser/quant.c):
 *    their logical elements — a MatMulNBits B of uint8 [N, blocks, blob] at 4 bits holds
 *    K x N, a GatherBlockQuantized uint8 row 2 values a byte — with their element type
 *    (UINT4);
 *  - a scale or zero point of a quantized op: no parameters.  They are quantization's
 *    bookkeeping (their number follows the block size, a storage choice): a 4-bit model
 *    has the parameters of the float model it was made from, and its scales' elements and
 *    bytes are said apart;
 *  - any other constant: its elements, as stored (int64 shapes and indices too).
 *
 * Everyone sums these: the summary here (oxp_dag_summary), the cost per node
 * (parser/cost.c, each constant at its first user), the quantization summary's quantized
 * + float + other (parser/quant.c), the boxes (render/hier.c).  Bytes stay what is stored.
 */
#include "parser/internal.h"

const oxp_tensor *oxp_value_constant(const oxp_dag_view *v, uint32_t vi)
{
	if (vi == OXP_NONE || vi >= v->nvalues)
		return NULL;
	const oxp_value *val = &v->values[vi];
	if (val->kind == OXP_VALUE_INITIALIZER)
		return val->initializer;
	if (val->kind == OXP_VALUE_SPARSE_INITIALIZER)
		return val->sparse_initializer != NULL ? val->sparse_initializer->values : NULL;
	if (val->kind != OXP_VALUE_NODE_OUTPUT || val->producer == OXP_NONE ||
	    val->producer_output != 0)
		return NULL;
	const oxp_node *n = v->nodes[val->producer].proto;
	if (!(n->domain.len == 0 || oxp_str_eq(n->domain, "ai.onnx")) ||
	    !oxp_str_eq(n->op_type, "Constant"))
		return NULL;
	/* value or sparse_value (value_float and the others are not tensors) */
	for (size_t a = 0; a < n->nattrs; a++) {
		if (n->attrs[a].t != NULL)
			return n->attrs[a].t;
		if (n->attrs[a].sparse_tensor != NULL && n->attrs[a].sparse_tensor->values != NULL)
			return n->attrs[a].sparse_tensor->values;
	}
	return NULL;
}

/* Stored bytes of t (sub-byte types packed, rounded up; strings their lengths),
 * saturating: many tensors of 2^63-1 elements are a few bytes each (issue 22). */
static uint64_t stored_bytes(const oxp_tensor *t, uint64_t count)
{
	if (t->data_type == OXP_DT_STRING) {
		uint64_t bytes = 0;
		for (size_t i = 0; i < t->nstring_data; i++)
			bytes = oxp_sat_add_u64(bytes, t->string_data[i].len);
		return bytes;
	}
	unsigned bits = oxp_dtype_bits(t->data_type);
	return count > UINT64_MAX / 128 ? UINT64_MAX : (count * bits + 7) / 8;
}

oxp_code oxp__dag_params(oxp_dag *d, oxp_error *err)
{
	const oxp_dag_view *v = &d->v;
	/* the marks need the quantization analysis: a scratch arena of the dag's budget */
	oxp_arena *a = oxp_arena_new(oxp_limits_default().max_alloc);
	if (a == NULL)
		return oxp__set_error(err, OXP_E_NOMEM, 0, "", "out of memory counting the parameters");
	const oxp_quant *q = NULL;
	oxp_code rc = oxp_quant_analyze(d, a, &q, err);
	if (rc != OXP_OK) {
		oxp_arena_free(a);
		return rc;
	}
	oxp_dag_summary *s = &d->v.summary;
	for (uint32_t vi = 0; vi < v->nvalues; vi++) {
		oxp_value *val = &d->values[vi];
		const oxp_tensor *t = oxp_value_constant(v, vi);
		if (t == NULL)
			continue;
		uint64_t count; /* dims the parser checked: a product that fits int64 */
		if (!oxp_dims_count(t->dims, t->ndims, &count))
			count = 0;
		uint64_t bytes = stored_bytes(t, count);
		const oxp_qvalue *qv = &q->values[vi];
		val->param_role = OXP_PARAM_PLAIN;
		val->params = count;
		int32_t dt = t->data_type; /* the parameters' element type (UINT4 for that weight) */
		if (qv->mark & OXP_QV_DATA) { /* a tensor both data and scale counts as data */
			val->param_role = OXP_PARAM_QUANTIZED;
			val->params = qv->count;
			if (qv->dtype > 0 && qv->dtype < OXP_DT__COUNT)
				dt = qv->dtype;
		} else if (qv->mark & OXP_QV_SCALE) {
			val->param_role = OXP_PARAM_SCALE;
			val->params = 0;
			dt = 0;
			s->scale_elements = oxp_sat_add_u64(s->scale_elements, count);
			s->scale_bytes = oxp_sat_add_u64(s->scale_bytes, bytes);
		}
		s->parameters = oxp_sat_add_u64(s->parameters, val->params);
		s->parameter_bytes = oxp_sat_add_u64(s->parameter_bytes, bytes);
		if (dt > 0 && dt < OXP_DT__COUNT) {
			s->params_by_dtype[dt] = oxp_sat_add_u64(s->params_by_dtype[dt], val->params);
			s->bytes_by_dtype[dt] = oxp_sat_add_u64(s->bytes_by_dtype[dt], bytes);
		}
	}
	oxp_arena_free(a);
	return OXP_OK;
}
