/*
 * quant.c — a quantized op as one box of the float op it stands for (quant=fold, the
 * default; quant=nodes draws the file as it is).
 *
 * parser/quant.c says which nodes are quantized ops and which are plumbing; here:
 *  - DequantizeLinear of a constant (a weight) is hidden like a folded constant; the ops
 *    using it show it as a row;
 *  - plumbing (QuantizeLinear, DequantizeLinear of activations, DynamicQuantizeLinear, the
 *    Cast/Mul/Add of a dynamic ConvInteger chain) draws no box of its own: it stands
 *    behind the box of the node it joins (node_box), so the edges around it run between
 *    the neighbouring boxes and keep the element type of the value they carry (u8 between
 *    two QDQ convolutions);
 *  - the quantized op's box shows the float op ("Conv" for QLinearConv, ConvInteger and a
 *    Conv between Q/DQ), a badge with its precision ("int8 w · u8 act · per-channel") and
 *    one row per quantized tensor with its scale and zero point.
 * The hooks in view.c are the functions of render/internal.h's "quant.c" block.
 */
#include "render/internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

oxr_code oxr__quant_mark(view *v, oxr_error *err)
{
	v->quant = NULL;
	if (v->o.quant_nodes)
		return OXR_OK;
	const oxp_quant *q = NULL;
	oxp_error pe;
	if (oxp_quant_analyze(v->d, v->arena, &q, &pe) != OXP_OK)
		return oxr__fail(err, OXR_E_NOMEM, "out of memory");
	if (q->nops == 0 && q->plumbing == 0)
		return OXR_OK; /* nothing quantized: the view is as without */
	v->quant = q;
	if (v->o.initializers == OXR_INIT_NODES)
		return OXR_OK; /* weights drawn as boxes: their DequantizeLinear too */
	for (uint32_t ni = 0; ni < q->nnodes; ni++)
		if (q->nodes[ni].role == OXP_QR_WEIGHT)
			v->node_hidden[ni] = true;
	return OXR_OK;
}

bool oxr__quant_joined(const view *v, uint32_t ni)
{
	if (v->quant == NULL)
		return false;
	const oxp_qnode *qn = &v->quant->nodes[ni];
	return qn->role == OXP_QR_PART && qn->rep != OXP_NONE && !v->node_hidden[qn->rep] &&
	       !v->node_hidden[ni];
}

void oxr__quant_link(view *v)
{
	if (v->quant == NULL)
		return;
	for (uint32_t ni = 0; ni < v->quant->nnodes; ni++)
		if (v->node_box[ni] == OXP_NONE && oxr__quant_joined(v, ni))
			v->node_box[ni] = v->node_box[v->quant->nodes[ni].rep];
}

/* The scale and zero point of a DynamicQuantizeLinear in another box: the quantized value
 * beside them makes the same link, and they are rows of the op. */
bool oxr__quant_skip_edge(const view *v, const oxp_edge *e)
{
	if (v->quant == NULL || e->src == OXP_NONE || e->src_output == 0)
		return false;
	const oxp_node *n = v->dv->nodes[e->src].proto;
	return oxr__quant_joined(v, e->src) && oxp_str_eq(n->op_type, "DynamicQuantizeLinear") &&
	       (oxr__quant_joined(v, e->dst) || v->quant->nodes[e->dst].role == OXP_QR_OP);
}

/* An edge leaving a DequantizeLinear that stands behind its producer (it has several
 * users) shows the quantized value in front of it, as the edges into single users do:
 * what travels between the two ops is the QuantizeLinear's u8. */
uint32_t oxr__quant_edge_value(const view *v, const oxp_edge *e)
{
	if (v->quant == NULL || e->src == OXP_NONE || !oxr__quant_joined(v, e->src))
		return e->value;
	const oxp_dnode *dq = &v->dv->nodes[e->src];
	if (!oxp_str_eq(dq->proto->op_type, "DequantizeLinear") || dq->proto->ninputs < 1 ||
	    dq->inputs[0] == OXP_NONE)
		return e->value;
	uint32_t q = v->dv->values[dq->inputs[0]].producer;
	if (q == OXP_NONE || !oxr__quant_joined(v, q) ||
	    v->quant->nodes[q].rep != v->quant->nodes[e->src].rep)
		return e->value;
	return dq->inputs[0];
}

static const oxp_qop *qop_of(const view *v, uint32_t ni)
{
	if (v->quant == NULL || v->quant->nodes[ni].role != OXP_QR_OP)
		return NULL;
	return &v->quant->ops[v->quant->nodes[ni].op];
}

bool oxr__quant_covers(const view *v, uint32_t ni, size_t k)
{
	const oxp_qop *op = qop_of(v, ni);
	if (op == NULL)
		return false;
	uint32_t vi = v->dv->nodes[ni].inputs[k];
	if (vi == OXP_NONE)
		return false;
	for (uint32_t i = 0; i < op->nqt; i++)
		if (op->qt[i].data == vi || op->qt[i].scale == vi || op->qt[i].zero_point == vi)
			return true;
	uint32_t p = v->dv->values[vi].producer;
	return p != OXP_NONE && v->quant->nodes[p].role != OXP_QR_NONE &&
	       v->quant->nodes[p].role != OXP_QR_OP;
}

/* "int8", "uint4", "nf4" */
static const char *lower(oxp_arena *a, const char *s)
{
	size_t n = strlen(s);
	char *o = oxp_arena_alloc(a, n + 1);
	if (o == NULL)
		return "";
	for (size_t i = 0; i < n; i++)
		o[i] = s[i] >= 'A' && s[i] <= 'Z' ? (char)(s[i] - 'A' + 'a') : s[i];
	o[n] = '\0';
	return o;
}

#define DOT " \xc2\xb7 " /* " · " */

static const char *badge_text(view *v, const oxp_qop *op)
{
	char b[160];
	size_t n = 0;
	b[0] = '\0';
#define PUT(...)                                                                            \
	do {                                                                                    \
		int w_ = snprintf(b + n, sizeof(b) - n, __VA_ARGS__);                               \
		if (w_ > 0 && (size_t)w_ < sizeof(b) - n)                                           \
			n += (size_t)w_;                                                                \
	} while (0)
	if (op->wtype != 0 || op->wname != NULL)
		PUT("%s w", lower(v->arena, op->wname ? op->wname : oxp_dtype_name(op->wtype)));
	if (op->atype != 0)
		PUT("%s%s%s act", n ? DOT : "", op->dynamic ? "dyn " : "", oxp_dtype_short(op->atype));
	if (op->wtype != 0 || op->wname != NULL) {
		if (op->gran == OXP_QG_AXIS)
			PUT(DOT "per-channel");
		else if (op->gran == OXP_QG_BLOCK && op->block > 0)
			PUT(DOT "block %" PRId64, op->block);
		else if (op->gran == OXP_QG_TENSOR)
			PUT(DOT "per-tensor");
		if (op->atype == 0)
			PUT(DOT "weight-only");
	}
#undef PUT
	return oxp_arena_strndup(v->arena, b, n);
}

/* "⟨64⟩" of a constant, or its value when it has one element: "=0.0235". */
static void put_const(view *v, char *b, size_t size, size_t *n, const char *what, uint32_t vi)
{
	if (vi == OXP_NONE || *n >= size)
		return;
	const oxp_value *val = &v->dv->values[vi];
	const oxp_tensor *t = NULL;
	if (val->kind == OXP_VALUE_INITIALIZER)
		t = val->initializer;
	else if (val->producer != OXP_NONE) {
		const oxp_node *pn = v->dv->nodes[val->producer].proto;
		if (oxp_str_eq(pn->op_type, "Constant"))
			for (size_t a = 0; a < pn->nattrs && t == NULL; a++)
				t = pn->attrs[a].t;
	}
	int w;
	uint64_t count = 0;
	oxp_scalar one;
	if (t != NULL && oxp_dims_count(t->dims, t->ndims, &count) && count == 1 &&
	    t->storage != OXP_STORE_EXTERNAL && t->data_type != OXP_DT_STRING &&
	    oxp_tensor_read(t, NULL, 0, 0, 1, &one, NULL) == OXP_OK) {
		if (one.cls == OXP_VC_FLOAT)
			w = snprintf(b + *n, size - *n, DOT "%s=%.4g", what, one.v.f);
		else if (one.cls == OXP_VC_INT)
			w = snprintf(b + *n, size - *n, DOT "%s=%" PRId64, what, one.v.i);
		else if (one.cls == OXP_VC_UINT)
			w = snprintf(b + *n, size - *n, DOT "%s=%" PRIu64, what, one.v.u);
		else
			w = snprintf(b + *n, size - *n, DOT "%s", what);
	} else if (t != NULL) {
		char dims[64];
		size_t d = 0;
		dims[0] = '\0';
		for (size_t i = 0; i < t->ndims && d < sizeof(dims) - 24; i++) {
			int k = snprintf(dims + d, sizeof(dims) - d, "%s%" PRId64, i ? "\xc3\x97" : "",
			                 t->dims[i]);
			if (k > 0)
				d += (size_t)k;
		}
		w = snprintf(b + *n, size - *n, DOT "%s\xe2\x9f\xa8%s\xe2\x9f\xa9", what, dims);
	} else {
		w = snprintf(b + *n, size - *n, DOT "%s", what); /* computed at run time */
	}
	if (w > 0 && (size_t)w < size - *n)
		*n += (size_t)w;
}

static const char *qt_row(view *v, const oxp_qop *op, const oxp_qtensor *t, const char *label)
{
	char b[200];
	size_t n = 0;
	int w = snprintf(b, sizeof(b), "%s", label);
	n = w > 0 ? (size_t)w : 0;
	const oxp_tensor *ct = NULL;
	if (t->data != OXP_NONE) {
		const oxp_value *val = &v->dv->values[t->data];
		ct = val->kind == OXP_VALUE_INITIALIZER ? val->initializer : NULL;
		if (ct == NULL && val->producer != OXP_NONE) {
			const oxp_node *pn = v->dv->nodes[val->producer].proto;
			if (oxp_str_eq(pn->op_type, "Constant"))
				for (size_t a = 0; a < pn->nattrs && ct == NULL; a++)
					ct = pn->attrs[a].t;
		}
	}
	if (ct != NULL) {
		/* MatMulNBits: the logical N x K, not the packed bytes */
		const oxp_node *on = v->dv->nodes[op->node].proto;
		int64_t K = 0, N = 0;
		for (size_t a = 0; a < on->nattrs; a++) {
			if (oxp_str_eq(on->attrs[a].name, "K") && on->attrs[a].type == OXP_ATTR_INT)
				K = on->attrs[a].i;
			if (oxp_str_eq(on->attrs[a].name, "N") && on->attrs[a].type == OXP_ATTR_INT)
				N = on->attrs[a].i;
		}
		if (t->bits && oxp_str_eq(on->op_type, "MatMulNBits") && K > 0 && N > 0) {
			w = snprintf(b + n, sizeof(b) - n, " \xe2\x9f\xa8%" PRId64 "\xc3\x97%" PRId64
			             "\xe2\x9f\xa9", N, K);
		} else {
			w = snprintf(b + n, sizeof(b) - n, " \xe2\x9f\xa8");
			if (w > 0 && (size_t)w < sizeof(b) - n)
				n += (size_t)w;
			for (size_t i = 0; i < ct->ndims && n < sizeof(b) - 40; i++) {
				w = snprintf(b + n, sizeof(b) - n, "%s%" PRId64, i ? "\xc3\x97" : "",
				             ct->dims[i]);
				if (w > 0)
					n += (size_t)w;
			}
			w = snprintf(b + n, sizeof(b) - n, "\xe2\x9f\xa9");
		}
		if (w > 0 && (size_t)w < sizeof(b) - n)
			n += (size_t)w;
	}
	if (t->qtype != 0 && n < sizeof(b))
		w = snprintf(b + n, sizeof(b) - n, " %s%s", t->dynamic ? "dyn " : "",
		             oxp_dtype_short(t->qtype));
	else
		w = 0;
	if (w > 0 && (size_t)w < sizeof(b) - n)
		n += (size_t)w;
	if (t->gran == OXP_QG_BLOCK && t->block > 0 && n < sizeof(b)) {
		w = snprintf(b + n, sizeof(b) - n, DOT "block %" PRId64, t->block);
		if (w > 0 && (size_t)w < sizeof(b) - n)
			n += (size_t)w;
	}
	if (!t->dynamic) {
		put_const(v, b, sizeof(b), &n, "s", t->scale);
		put_const(v, b, sizeof(b), &n, "zp", t->zero_point);
	}
	return oxr__text(v->arena, (oxp_str){b, n}, 60);
}

/* The schema of the float op a quantized op stands for (an ai.onnx op) at the opset its
 * scope imports, or the newest when it imports none (a model of com.microsoft ops only):
 * its port names label the scale rows as the node's own rows are labelled. */
static const oxp_schema *float_schema(const view *v, uint32_t node, const char *float_op)
{
	const oxp_str dom = {"", 0};
	int64_t opset = oxp_dag_scope_opset(v->d, v->dv->nodes[node].scope, dom);
	if (opset <= 0)
		opset = oxp_schema_newest_opset(dom);
	const oxp_schema *s = NULL;
	if (oxp_schema_find(dom, (oxp_str){float_op, strlen(float_op)}, opset, &s) != OXP_SCHEMA_FOUND)
		return NULL;
	return s;
}

/* Port k's name ("X", "inputs[2]"), written into buf; NULL without a schema or port. */
static const char *port(const oxp_schema *s, bool output, uint32_t k, char *buf, size_t size)
{
	return s != NULL ? oxp_schema_port_label(s, output, k, buf, size) : NULL;
}

static bool has_weight(const oxp_qop *op)
{
	for (uint32_t i = 0; i < op->nqt; i++)
		if (op->qt[i].slot == OXP_QS_WEIGHT)
			return true;
	return false;
}

void oxr__quant_rows(view *v, uint32_t bi)
{
	vbox *b = &v->boxes[bi];
	const oxp_qop *op = qop_of(v, b->node);
	if (op == NULL || b->nrows == 0)
		return;
	const oxp_node *n = v->dv->nodes[b->node].proto;
	/* the float op on the header (a name of parser/quant.c's table: plain ASCII); a float
	 * op between Q and DQ keeps its own; what the file holds stays in the tooltip.  As
	 * display text: a float op between Q and DQ is the model's op type cut at its first
	 * NUL byte, which differs from the op type and may hold control characters */
	if (!oxp_str_eq(n->op_type, op->float_op)) {
		b->rows[0].text = oxr__text(v->arena, (oxp_str){op->float_op, strlen(op->float_op)}, 40);
		b->family = oxr__op_family((oxp_str){"", 0}, (oxp_str){op->float_op, strlen(op->float_op)});
	}
	const char *badge = badge_text(v, op);
	b->title = oxp_arena_printf(v->arena, "%s%s%s (%s)", oxr__text(v->arena, n->op_type, 40),
	                            n->name.len ? ": " : "", b->title ? b->title : "", badge);
	/* badge right under the header and name */
	uint32_t at = b->nrows > 1 && b->rows[1].style == ROW_NAME ? 2 : 1;
	if (badge[0] != '\0' && oxr__add_row(v, b, ROW_BADGE, badge)) {
		vrow r = b->rows[b->nrows - 1];
		memmove(&b->rows[at + 1], &b->rows[at], (b->nrows - 1 - at) * sizeof(vrow));
		b->rows[at] = r;
	}
	if (v->o.initializers != OXR_INIT_FOLD)
		return;
	uint32_t nin = 0, nout = 0;
	for (uint32_t i = 0; i < op->nqt; i++)
		nin += op->qt[i].slot == OXP_QS_INPUT, nout += op->qt[i].slot == OXP_QS_OUTPUT;
	const oxp_schema *fs = float_schema(v, b->node, op->float_op);
	/* the weight's place in the float op: Gather's data comes first; elsewhere after the
	 * activation, which a weight-only op keeps in float (no row) */
	uint32_t wpos = !strcmp(op->float_op, "Gather") ? 0u : (nin > 1 ? nin : 1u);
	uint32_t kin = wpos == 0 ? 1u : 0u, kout = 0;
	for (uint32_t i = 0; i < op->nqt && i < 8; i++) {
		const oxp_qtensor *t = &op->qt[i];
		char label[64];
		const char *named = NULL;
		/* the float op's port: the activations first, then the weight, then the bias
		 * (Conv X W B, MatMul A B, Gemm A B C, Add A B) */
		switch (t->slot) {
		case OXP_QS_INPUT:
			named = port(fs, false, kin, label, sizeof(label));
			if (named == NULL)
				snprintf(label, sizeof(label), nin > 1 ? "x%u" : "x", kin + (wpos == 0 ? 0u : 1u));
			kin++;
			break;
		case OXP_QS_WEIGHT:
			named = port(fs, false, wpos, label, sizeof(label));
			if (named == NULL)
				snprintf(label, sizeof(label), "W");
			break;
		case OXP_QS_BIAS:
			named = port(fs, false, has_weight(op) ? wpos + 1 : nin, label, sizeof(label));
			if (named == NULL)
				snprintf(label, sizeof(label), "B");
			break;
		default:
			named = port(fs, true, kout, label, sizeof(label));
			if (named == NULL)
				snprintf(label, sizeof(label), nout > 1 ? "y%u" : "y", kout + 1);
			kout++;
			break;
		}
		oxr__add_row(v, b, ROW_TENSOR, qt_row(v, op, t, label));
	}
}
