/*
 * quant.c — quantization in a linked graph (docs/quant.md):
 *
 *  - oxp_quant_analyze(): which nodes are quantized ops and which float op each stands for
 *    (QLinearConv is a Conv, a Conv between DequantizeLinear and QuantizeLinear is a Conv,
 *    MatMulNBits is a MatMul), which nodes are plumbing (Q, DQ, DynamicQuantizeLinear, the
 *    Cast/Mul/Add of a dynamic ConvInteger chain) and which box each joins, which are
 *    DequantizeLinear of constants (weights: rows of their consumers); the precision of
 *    every quantized op; and the model's quantization summary;
 *  - oxp_dequant_*(): the pairing of one quantized tensor with its scale and zero point,
 *    and the arithmetic (q - zero_point) * scale in float32.
 *
 * Facts only: render/quant.c draws from them, render/doc.c summarises them,
 * service/preview.c dequantizes with them.  Everything is linear in the graph (a bounded
 * number of hops per node), allocated in the caller's arena; nothing recurses.
 */
#include "parser/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOPS 64        /* Identity hops, and rep chains, followed at most */
#define MAX_QT 16      /* quantized tensors recorded per op */

/* ---------------------------------------------------------------------------------------
 * What the ops are
 */
enum { D_STD = 1, D_MS = 2 };
enum { K_OTHER = 0, K_Q, K_DQ, K_DQL, K_CONSTANT, K_IDENTITY, K_QOP };
enum { ARG_OUT = -1, ARG_NONE = -2 }; /* qslot.data: the node's output 0; no input */

typedef struct qslot {
	uint8_t slot;           /* oxp_qslot */
	int8_t data, scale, zp; /* input positions */
} qslot;

typedef struct qopdef {
	const char *op;
	uint8_t domains;
	const char *float_op;
	uint8_t format;
	bool chain;        /* ConvInteger / MatMulInteger: may end a dynamic chain */
	uint8_t nslots;
	qslot slots[4];
} qopdef;

#define IN OXP_QS_INPUT
#define WT OXP_QS_WEIGHT
#define BI OXP_QS_BIAS
#define OUT OXP_QS_OUTPUT
#define NA ARG_NONE
#define QOP OXP_QF_QOPERATOR
#define DYN OXP_QF_DYNAMIC
#define WOQ OXP_QF_WEIGHT_ONLY

/* Inputs per onnx/docs/Operators.md and onnxruntime/docs/ContribOperators.md. */
static const qopdef qops[] = {
    {"QLinearConv", D_STD | D_MS, "Conv", QOP, false, 4,
     {{IN, 0, 1, 2}, {WT, 3, 4, 5}, {OUT, ARG_OUT, 6, 7}, {BI, 8, NA, NA}}},
    {"QLinearMatMul", D_STD | D_MS, "MatMul", QOP, false, 3,
     {{IN, 0, 1, 2}, {WT, 3, 4, 5}, {OUT, ARG_OUT, 6, 7}}},
    {"ConvInteger", D_STD, "Conv", QOP, true, 2, {{IN, 0, NA, 2}, {WT, 1, NA, 3}}},
    {"MatMulInteger", D_STD, "MatMul", QOP, true, 2, {{IN, 0, NA, 2}, {WT, 1, NA, 3}}},
    {"QGemm", D_MS, "Gemm", QOP, false, 4,
     {{IN, 0, 1, 2}, {WT, 3, 4, 5}, {BI, 6, NA, NA}, {OUT, ARG_OUT, 7, 8}}},
    {"QAttention", D_MS, "Attention", QOP, false, 2, {{IN, 0, 3, 6}, {WT, 1, 4, 7}}},
    {"QLinearAdd", D_MS, "Add", QOP, false, 3, {{IN, 0, 1, 2}, {IN, 3, 4, 5}, {OUT, ARG_OUT, 6, 7}}},
    {"QLinearMul", D_MS, "Mul", QOP, false, 3, {{IN, 0, 1, 2}, {IN, 3, 4, 5}, {OUT, ARG_OUT, 6, 7}}},
    {"QLinearSigmoid", D_MS, "Sigmoid", QOP, false, 2, {{IN, 0, 1, 2}, {OUT, ARG_OUT, 3, 4}}},
    {"QLinearLeakyRelu", D_MS, "LeakyRelu", QOP, false, 2, {{IN, 0, 1, 2}, {OUT, ARG_OUT, 3, 4}}},
    {"QLinearSoftmax", D_MS, "Softmax", QOP, false, 2, {{IN, 0, 1, 2}, {OUT, ARG_OUT, 3, 4}}},
    {"QLinearAveragePool", D_MS, "AveragePool", QOP, false, 2, {{IN, 0, 1, 2}, {OUT, ARG_OUT, 3, 4}}},
    {"QLinearGlobalAveragePool", D_MS, "GlobalAveragePool", QOP, false, 2,
     {{IN, 0, 1, 2}, {OUT, ARG_OUT, 3, 4}}},
    {"QLinearReduceMean", D_MS, "ReduceMean", QOP, false, 2, {{IN, 0, 1, 2}, {OUT, ARG_OUT, 3, 4}}},
    {"QLinearWhere", D_MS, "Where", QOP, false, 3, {{IN, 1, 2, 3}, {IN, 4, 5, 6}, {OUT, ARG_OUT, 7, 8}}},
    {"QLinearConcat", D_MS, "Concat", QOP, false, 1, {{OUT, ARG_OUT, 0, 1}}}, /* + triples */
    {"MulInteger", D_MS, "Mul", QOP, false, 2, {{IN, 0, NA, 1}, {IN, 2, NA, 3}}},
    {"MatMulInteger16", D_MS, "MatMul", QOP, false, 2, {{IN, 0, NA, NA}, {WT, 1, NA, NA}}},
    {"MatMulIntegerToFloat", D_MS, "MatMul", QOP, false, 2, {{IN, 0, 2, 4}, {WT, 1, 3, 5}}},
    {"DynamicQuantizeMatMul", D_MS, "MatMul", DYN, false, 1, {{WT, 1, 2, 3}}},
    {"DynamicQuantizeLSTM", D_MS, "LSTM", DYN, false, 2, {{WT, 1, 8, 9}, {WT, 2, 10, 11}}},
    {"MatMulNBits", D_MS, "MatMul", WOQ, false, 1, {{WT, 1, 2, 3}}},
    {"GatherBlockQuantized", D_MS, "Gather", WOQ, false, 1, {{WT, 0, 2, 3}}},
    {"MatMulBnb4", D_MS, "MatMul", WOQ, false, 1, {{WT, 1, 2, NA}}},
    {"MatMulFpQ4", D_MS, "MatMul", WOQ, false, 1, {{WT, 1, NA, NA}}},
    {"QMoE", D_MS, "MoE", WOQ, false, 2, {{WT, 2, 3, NA}, {WT, 5, 6, NA}}},
    {"QOrderedMatMul", D_MS, "MatMul", QOP, false, 2, {{IN, 0, 1, NA}, {WT, 2, 3, NA}}},
    {"QOrderedAttention", D_MS, "Attention", QOP, false, 1, {{IN, 0, 1, NA}}},
    {"QOrderedGelu", D_MS, "Gelu", QOP, false, 1, {{IN, 0, 1, NA}}},
    {"QOrderedLayerNormalization", D_MS, "LayerNormalization", QOP, false, 1, {{IN, 0, 1, NA}}},
    {"QOrderedLongformerAttention", D_MS, "LongformerAttention", QOP, false, 1, {{IN, 0, 1, NA}}},
    {"QEmbedLayerNormalization", D_MS, "EmbedLayerNormalization", QOP, false, 0, {{0, 0, 0, 0}}},
};

#undef IN
#undef WT
#undef BI
#undef OUT
#undef NA
#undef QOP
#undef DYN
#undef WOQ

const char *oxp_qformat_name(unsigned f)
{
	switch (f) {
	case OXP_QF_QDQ: return "qdq";
	case OXP_QF_QOPERATOR: return "qoperator";
	case OXP_QF_DYNAMIC: return "dynamic";
	case OXP_QF_WEIGHT_ONLY: return "weight_only";
	default: return "";
	}
}

const char *oxp_qgran_name(unsigned g)
{
	switch (g) {
	case OXP_QG_TENSOR: return "per-tensor";
	case OXP_QG_AXIS: return "per-axis";
	case OXP_QG_BLOCK: return "blocked";
	default: return "";
	}
}

static bool dom_std(oxp_str d)
{
	return d.len == 0 || oxp_str_eq(d, "ai.onnx");
}

static bool dom_ms(oxp_str d)
{
	return oxp_str_eq(d, "com.microsoft");
}

static const qopdef *qop_def(const oxp_node *n)
{
	uint8_t dom = dom_std(n->domain) ? D_STD : dom_ms(n->domain) ? D_MS : 0;
	if (dom == 0)
		return NULL;
	for (size_t i = 0; i < sizeof(qops) / sizeof(qops[0]); i++)
		if ((qops[i].domains & dom) && oxp_str_eq(n->op_type, qops[i].op))
			return &qops[i];
	return NULL;
}

static uint8_t kind_of(const oxp_node *n, const qopdef **def)
{
	*def = NULL;
	bool std = dom_std(n->domain), ms = dom_ms(n->domain);
	if (std || ms) {
		if (oxp_str_eq(n->op_type, "QuantizeLinear"))
			return K_Q;
		if (oxp_str_eq(n->op_type, "DequantizeLinear"))
			return K_DQ;
	}
	if (std) {
		if (oxp_str_eq(n->op_type, "DynamicQuantizeLinear"))
			return K_DQL;
		if (oxp_str_eq(n->op_type, "Constant"))
			return K_CONSTANT;
		if (oxp_str_eq(n->op_type, "Identity"))
			return K_IDENTITY;
	}
	*def = qop_def(n);
	return *def ? K_QOP : K_OTHER;
}

static const oxp_attr *attr_of(const oxp_node *n, const char *name)
{
	for (size_t i = 0; i < n->nattrs; i++)
		if (oxp_str_eq(n->attrs[i].name, name))
			return &n->attrs[i];
	return NULL;
}

static int64_t attr_int(const oxp_node *n, const char *name, int64_t def)
{
	const oxp_attr *a = attr_of(n, name);
	return a != NULL && a->type == OXP_ATTR_INT ? a->i : def;
}

/* ---------------------------------------------------------------------------------------
 * Values
 */
static uint32_t input_of(const oxp_dag_view *v, uint32_t ni, int k)
{
	const oxp_dnode *dn = &v->nodes[ni];
	if (k < 0 || (size_t)k >= dn->proto->ninputs)
		return OXP_NONE;
	return dn->inputs[k];
}

static uint32_t output_of(const oxp_dag_view *v, uint32_t ni, size_t k)
{
	const oxp_dnode *dn = &v->nodes[ni];
	return k < dn->proto->noutputs ? dn->outputs[k] : OXP_NONE;
}

/* The constant tensor behind value vi: an initializer or a Constant's value, through
 * Identity nodes; NULL when the value is computed. */
static const oxp_tensor *const_tensor(const oxp_dag_view *v, uint32_t vi)
{
	for (int hops = 0; hops < HOPS && vi != OXP_NONE; hops++) {
		const oxp_tensor *t = oxp_value_constant(v, vi);
		if (t != NULL)
			return t;
		const oxp_value *val = &v->values[vi];
		if (val->kind != OXP_VALUE_NODE_OUTPUT || val->producer == OXP_NONE)
			return NULL;
		const oxp_node *pn = v->nodes[val->producer].proto;
		if (!dom_std(pn->domain) || !oxp_str_eq(pn->op_type, "Identity") || pn->ninputs < 1)
			return NULL;
		vi = v->nodes[val->producer].inputs[0];
	}
	return NULL;
}

static uint64_t tensor_count(const oxp_tensor *t)
{
	uint64_t c = 0;
	return t != NULL && oxp_dims_count(t->dims, t->ndims, &c) ? c : 0;
}

/* The one node using value vi, in vi's scope (all of its uses), or OXP_NONE: no use,
 * several users, a graph output, or a use inside a subgraph. */
static uint32_t sole_consumer(const oxp_dag_view *v, uint32_t vi)
{
	if (vi == OXP_NONE)
		return OXP_NONE;
	const oxp_value *val = &v->values[vi];
	if (val->graph_output || val->nconsumers == 0)
		return OXP_NONE;
	uint32_t c = OXP_NONE;
	for (uint32_t k = 0; k < val->nconsumers; k++) {
		const oxp_edge *e = &v->edges[val->consumers[k]];
		if (e->outer)
			return OXP_NONE;
		if (c == OXP_NONE)
			c = e->dst;
		else if (c != e->dst)
			return OXP_NONE;
	}
	return c;
}

static uint32_t producer_of(const oxp_dag_view *v, uint32_t vi)
{
	return vi == OXP_NONE ? OXP_NONE : v->values[vi].producer;
}

static int32_t value_elem(const oxp_dag_view *v, uint32_t vi)
{
	if (vi == OXP_NONE)
		return 0;
	const oxp_tensor *t = const_tensor(v, vi);
	if (t != NULL)
		return t->data_type;
	return oxp_value_best_type(&v->values[vi])->elem_type;
}

/* ---------------------------------------------------------------------------------------
 * Analysis
 */
typedef struct actx {
	const oxp_dag_view *v;
	oxp_arena *a;
	oxp_qnode *nodes;
	uint8_t *kind;
	const qopdef **def;
	uint32_t *wscale, *bias; /* per node: what its dynamic chain gave (OXP_NONE) */
} actx;

/* Element type a QuantizeLinear produces: its zero point's, else output_dtype, else the
 * output's type, else uint8 (the default without a zero point). */
static int32_t q_type(const actx *c, uint32_t ni)
{
	int32_t t = value_elem(c->v, input_of(c->v, ni, 2));
	if (t == 0)
		t = (int32_t)attr_int(c->v->nodes[ni].proto, "output_dtype", 0);
	if (t == 0)
		t = value_elem(c->v, output_of(c->v, ni, 0));
	return t ? t : OXP_DT_UINT8;
}

/* Element type a DequantizeLinear reads: the data's, else its zero point's, else what the
 * QuantizeLinear that makes it produces. */
static int32_t dq_type(const actx *c, uint32_t ni)
{
	uint32_t x = input_of(c->v, ni, 0);
	int32_t t = value_elem(c->v, x);
	if (t == 0)
		t = value_elem(c->v, input_of(c->v, ni, 2));
	uint32_t p = producer_of(c->v, x);
	if (t == 0 && p != OXP_NONE && c->kind[p] == K_Q)
		t = q_type(c, p);
	return t;
}

static uint8_t scale_gran(const actx *c, uint32_t scale, int64_t block)
{
	const oxp_tensor *t = const_tensor(c->v, scale);
	uint64_t n = t ? tensor_count(t) : 1;
	if (t == NULL) {
		const oxp_value_type *ty = scale != OXP_NONE ? oxp_value_best_type(&c->v->values[scale])
		                                              : NULL;
		if (ty != NULL && ty->rank == 1 && ty->dims[0].kind == OXP_DIM_VALUE)
			n = (uint64_t)(ty->dims[0].value > 0 ? ty->dims[0].value : 1);
	}
	if (n <= 1)
		return OXP_QG_TENSOR;
	return block > 0 ? OXP_QG_BLOCK : OXP_QG_AXIS;
}

/* ConvInteger / MatMulInteger -> Cast(to float) -> Mul(., S) [-> Add(., bias) for Conv],
 * with S = Mul(x_scale, w_scale) used only there: the float op's dequantization and bias.
 * Marks the chain's nodes as parts of ni; *wscale / *bias get the constant weight scale
 * and the bias value when found. */
static void dynamic_chain(actx *c, uint32_t ni, uint32_t *wscale, uint32_t *bias)
{
	const oxp_dag_view *v = c->v;
	*wscale = *bias = OXP_NONE;
	uint32_t scope = v->nodes[ni].scope;
	uint32_t cast = sole_consumer(v, output_of(v, ni, 0));
	if (cast == OXP_NONE || c->nodes[cast].role != OXP_QR_NONE || v->nodes[cast].scope != scope)
		return;
	const oxp_node *cn = v->nodes[cast].proto;
	if (!dom_std(cn->domain) || !oxp_str_eq(cn->op_type, "Cast"))
		return;
	uint32_t mul = sole_consumer(v, output_of(v, cast, 0));
	if (mul == OXP_NONE || c->nodes[mul].role != OXP_QR_NONE)
		return;
	const oxp_node *mn = v->nodes[mul].proto;
	if (!dom_std(mn->domain) || !oxp_str_eq(mn->op_type, "Mul") || mn->ninputs != 2)
		return;
	c->nodes[cast].role = c->nodes[mul].role = OXP_QR_PART;
	c->nodes[cast].rep = c->nodes[mul].rep = ni;
	uint32_t other = input_of(v, mul, v->nodes[mul].inputs[0] == output_of(v, cast, 0) ? 1 : 0);
	if (const_tensor(v, other) != NULL) {
		*wscale = other; /* one scale: folded already */
	} else {
		uint32_t s = producer_of(v, other);
		if (s != OXP_NONE && c->nodes[s].role == OXP_QR_NONE && sole_consumer(v, other) == mul &&
		    dom_std(v->nodes[s].proto->domain) && oxp_str_eq(v->nodes[s].proto->op_type, "Mul")) {
			c->nodes[s].role = OXP_QR_PART;
			c->nodes[s].rep = ni;
			for (int k = 0; k < 2; k++)
				if (const_tensor(v, input_of(v, s, k)) != NULL)
					*wscale = input_of(v, s, k);
		}
	}
	if (!oxp_str_eq(v->nodes[ni].proto->op_type, "ConvInteger"))
		return; /* MatMul's bias is an Add of its own in the float model too */
	uint32_t add = sole_consumer(v, output_of(v, mul, 0));
	if (add == OXP_NONE || c->nodes[add].role != OXP_QR_NONE)
		return;
	const oxp_node *an = v->nodes[add].proto;
	if (!dom_std(an->domain) || !oxp_str_eq(an->op_type, "Add") || an->ninputs != 2)
		return;
	uint32_t b = input_of(v, add, v->nodes[add].inputs[0] == output_of(v, mul, 0) ? 1 : 0);
	if (const_tensor(v, b) == NULL)
		return;
	c->nodes[add].role = OXP_QR_PART;
	c->nodes[add].rep = ni;
	*bias = b;
}

/* Is node ni next to quantization: an input made by a DequantizeLinear, or an output
 * read by a QuantizeLinear? */
static bool qdq_neighbour(const actx *c, uint32_t ni)
{
	const oxp_dag_view *v = c->v;
	const oxp_dnode *dn = &v->nodes[ni];
	for (size_t k = 0; k < dn->proto->ninputs; k++) {
		uint32_t p = producer_of(v, dn->inputs[k]);
		if (p != OXP_NONE && c->kind[p] == K_DQ)
			return true;
	}
	for (size_t o = 0; o < dn->proto->noutputs; o++) {
		uint32_t vi = dn->outputs[o];
		if (vi == OXP_NONE)
			continue;
		const oxp_value *val = &v->values[vi];
		for (uint32_t k = 0; k < val->nconsumers; k++)
			if (c->kind[v->edges[val->consumers[k]].dst] == K_Q)
				return true;
	}
	return false;
}

typedef struct qtlist {
	oxp_qtensor t[MAX_QT];
	uint32_t n;
} qtlist;

static oxp_qtensor *qt_add(qtlist *l, uint8_t slot, uint32_t node)
{
	if (l->n == MAX_QT)
		return NULL;
	oxp_qtensor *t = &l->t[l->n++];
	memset(t, 0, sizeof(*t));
	t->slot = slot;
	t->node = node;
	t->data = t->scale = t->zero_point = OXP_NONE;
	return t;
}

/* The quantized tensors of a float op between DequantizeLinear and QuantizeLinear. */
static void qdq_tensors(const actx *c, uint32_t ni, qtlist *l)
{
	const oxp_dag_view *v = c->v;
	const oxp_dnode *dn = &v->nodes[ni];
	for (size_t k = 0; k < dn->proto->ninputs; k++) {
		uint32_t p = producer_of(v, dn->inputs[k]);
		if (p == OXP_NONE || c->kind[p] != K_DQ)
			continue;
		uint32_t x = input_of(v, p, 0);
		bool cst = const_tensor(v, x) != NULL;
		int32_t qt = dq_type(c, p);
		oxp_qtensor *t = qt_add(l, cst ? (qt == OXP_DT_INT32 ? OXP_QS_BIAS : OXP_QS_WEIGHT)
		                                : OXP_QS_INPUT,
		                        p);
		if (t == NULL)
			return;
		t->data = x;
		t->scale = input_of(v, p, 1);
		t->zero_point = input_of(v, p, 2);
		t->qtype = qt;
		t->block = attr_int(v->nodes[p].proto, "block_size", 0);
		t->gran = scale_gran(c, t->scale, t->block);
		if (t->gran != OXP_QG_BLOCK)
			t->block = 0;
	}
	for (size_t o = 0; o < dn->proto->noutputs; o++) {
		uint32_t vi = dn->outputs[o];
		if (vi == OXP_NONE)
			continue;
		const oxp_value *val = &v->values[vi];
		for (uint32_t k = 0; k < val->nconsumers; k++) {
			uint32_t q = v->edges[val->consumers[k]].dst;
			if (c->kind[q] != K_Q)
				continue;
			oxp_qtensor *t = qt_add(l, OXP_QS_OUTPUT, q);
			if (t == NULL)
				return;
			t->data = output_of(v, q, 0);
			t->scale = input_of(v, q, 1);
			t->zero_point = input_of(v, q, 2);
			t->qtype = q_type(c, q);
			t->block = attr_int(v->nodes[q].proto, "block_size", 0);
			t->gran = scale_gran(c, t->scale, t->block);
			if (t->gran != OXP_QG_BLOCK)
				t->block = 0;
			break; /* one per output */
		}
	}
}

static void slot_tensor(const actx *c, uint32_t ni, qtlist *l, uint8_t slot, int data,
                        int scale, int zp)
{
	const oxp_dag_view *v = c->v;
	uint32_t dv = data == ARG_OUT ? output_of(v, ni, 0) : input_of(v, ni, data);
	if (dv == OXP_NONE)
		return;
	bool cst = const_tensor(v, dv) != NULL;
	if (slot == OXP_QS_INPUT && cst)
		slot = OXP_QS_WEIGHT;
	else if (slot == OXP_QS_WEIGHT && !cst)
		slot = OXP_QS_INPUT;
	oxp_qtensor *t = qt_add(l, slot, ni);
	if (t == NULL)
		return;
	t->data = dv;
	t->scale = scale >= 0 ? input_of(v, ni, scale) : OXP_NONE;
	t->zero_point = zp >= 0 ? input_of(v, ni, zp) : OXP_NONE;
	/* an activation's type: its zero point's (always typed), else the value's */
	int32_t zt = value_elem(v, t->zero_point), dt = value_elem(v, dv);
	t->qtype = cst || zt == 0 ? dt : zt;
	t->gran = t->scale != OXP_NONE ? scale_gran(c, t->scale, 0) : OXP_QG_NONE;
}

/* The quantized tensors of a QOperator / dynamic / weight-only op. */
static void qop_tensors(actx *c, uint32_t ni, qtlist *l, uint8_t *format)
{
	const oxp_dag_view *v = c->v;
	const qopdef *def = c->def[ni];
	const oxp_node *n = v->nodes[ni].proto;
	*format = def->format;
	for (uint8_t s = 0; s < def->nslots; s++)
		slot_tensor(c, ni, l, def->slots[s].slot, def->slots[s].data, def->slots[s].scale,
		            def->slots[s].zp);
	if (oxp_str_eq(n->op_type, "QLinearConcat")) /* Y_scale, Y_zp, then (X, scale, zp)... */
		for (size_t k = 2; k + 2 < n->ninputs && k < 64; k += 3)
			slot_tensor(c, ni, l, OXP_QS_INPUT, (int)k, (int)k + 1, (int)k + 2);
	/* activations from DynamicQuantizeLinear: dynamic quantization */
	for (uint32_t i = 0; i < l->n; i++) {
		oxp_qtensor *t = &l->t[i];
		uint32_t p = producer_of(v, t->data);
		if (t->slot != OXP_QS_INPUT || p == OXP_NONE || c->kind[p] != K_DQL ||
		    t->data != output_of(v, p, 0))
			continue;
		t->dynamic = true;
		t->node = p;
		t->scale = output_of(v, p, 1);
		t->zero_point = output_of(v, p, 2);
		t->qtype = OXP_DT_UINT8;
		t->gran = OXP_QG_TENSOR;
		*format = OXP_QF_DYNAMIC;
	}
	if (def->chain) {
		uint32_t wscale = c->wscale[ni], bias = c->bias[ni];
		for (uint32_t i = 0; i < l->n; i++)
			if (l->t[i].slot == OXP_QS_WEIGHT && l->t[i].scale == OXP_NONE && wscale != OXP_NONE) {
				l->t[i].scale = wscale;
				l->t[i].gran = scale_gran(c, wscale, 0);
			}
		if (bias != OXP_NONE) {
			oxp_qtensor *t = qt_add(l, OXP_QS_BIAS, ni);
			if (t != NULL) {
				t->data = bias;
				t->qtype = value_elem(v, bias);
			}
		}
	}
	if (oxp_str_eq(n->op_type, "MatMulNBits") && l->n > 0 && l->t[0].slot == OXP_QS_WEIGHT) {
		int64_t bits = attr_int(n, "bits", 4);
		oxp_qtensor *t = &l->t[0];
		t->bits = (uint8_t)(bits > 0 && bits <= 8 ? bits : 0);
		t->qtype = bits == 2 ? OXP_DT_UINT2 : bits == 4 ? OXP_DT_UINT4 : bits == 8 ? OXP_DT_UINT8 : 0;
		t->gran = OXP_QG_BLOCK;
		t->block = attr_int(n, "block_size", 0);
	} else if (oxp_str_eq(n->op_type, "GatherBlockQuantized") && l->n > 0) {
		oxp_qtensor *t = &l->t[0];
		int64_t bits = attr_int(n, "bits", 4);
		if (t->qtype == OXP_DT_UINT8 && bits == 4)
			t->qtype = OXP_DT_UINT4, t->bits = 4;
		else if (t->qtype == OXP_DT_UINT8 && bits == 2)
			t->qtype = OXP_DT_UINT2, t->bits = 2;
		t->gran = OXP_QG_BLOCK;
		t->block = attr_int(n, "block_size", 128);
	}
}

static const char *weight_name(const oxp_node *n)
{
	if (oxp_str_eq(n->op_type, "MatMulBnb4"))
		return attr_int(n, "quant_type", 0) == 1 ? "NF4" : "FP4";
	if (oxp_str_eq(n->op_type, "MatMulFpQ4"))
		return "INT4";
	if (oxp_str_eq(n->op_type, "QMoE")) {
		int64_t b = attr_int(n, "expert_weight_bits", 4);
		return b == 8 ? "UINT8" : b == 2 ? "UINT2" : "UINT4";
	}
	return NULL;
}

/* ---------------------------------------------------------------------------------------
 * Summary
 */
typedef struct counter {
	oxp_qcount *e;
	uint32_t n, cap;
} counter;

static oxp_qcount *count_of(oxp_arena *a, counter *k, int32_t dtype, const char *name)
{
	const char *nm = name ? name : oxp_dtype_name(dtype);
	for (uint32_t i = 0; i < k->n; i++)
		if (strcmp(k->e[i].name, nm) == 0)
			return &k->e[i];
	if (k->n == k->cap) {
		uint32_t cap = k->cap ? k->cap * 2 : 8;
		oxp_qcount *ne = oxp_arena_array(a, cap, sizeof(oxp_qcount));
		if (ne == NULL)
			return NULL;
		if (k->n)
			memcpy(ne, k->e, k->n * sizeof(oxp_qcount));
		k->e = ne;
		k->cap = cap;
	}
	oxp_qcount *e = &k->e[k->n++];
	memset(e, 0, sizeof(*e));
	e->dtype = name ? 0 : dtype;
	e->name = nm;
	return e;
}

static int by_params(const void *x, const void *y)
{
	const oxp_qcount *a = x, *b = y;
	if (a->parameters != b->parameters)
		return a->parameters > b->parameters ? -1 : 1;
	if (a->ops != b->ops)
		return a->ops > b->ops ? -1 : 1;
	return strcmp(a->name, b->name);
}

static int by_ops(const void *x, const void *y)
{
	const oxp_qcount *a = x, *b = y;
	if (a->ops != b->ops)
		return a->ops > b->ops ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* Names of the MatMulNBits precisions no data type has. */
static const char *const uint_bits[9] = {"", "UINT1", "UINT2", "UINT3", "UINT4",
                                         "UINT5", "UINT6", "UINT7", "UINT8"};

/* The value behind vi through Identity nodes (the initializer's or Constant's own). */
static uint32_t const_root(const oxp_dag_view *v, uint32_t vi)
{
	for (int hops = 0; hops < HOPS && vi != OXP_NONE; hops++) {
		uint32_t p = v->values[vi].producer;
		if (p == OXP_NONE || v->values[vi].kind != OXP_VALUE_NODE_OUTPUT)
			return vi;
		const oxp_node *pn = v->nodes[p].proto;
		if (!dom_std(pn->domain) || !oxp_str_eq(pn->op_type, "Identity") || pn->ninputs < 1)
			return vi;
		vi = v->nodes[p].inputs[0];
	}
	return vi;
}

static bool is_float(int32_t dt)
{
	return oxp_dtype_class(dt) == OXP_VC_FLOAT;
}

oxp_code oxp_quant_analyze(const oxp_dag *d, oxp_arena *a, const oxp_quant **out,
                           oxp_error *err)
{
	if (err != NULL)
		memset(err, 0, sizeof(*err));
	*out = NULL;
	const oxp_dag_view *v = oxp_dag_get(d);
	uint32_t nn = v->nnodes, nv = v->nvalues;
	oxp_quant *q = oxp_arena_alloc(a, sizeof(*q));
	actx c = {v, a, NULL, NULL, NULL, NULL, NULL};
	c.nodes = oxp_arena_array(a, nn ? nn : 1, sizeof(oxp_qnode));
	c.kind = oxp_arena_array(a, nn ? nn : 1, 1);
	c.def = oxp_arena_array(a, nn ? nn : 1, sizeof(*c.def));
	c.wscale = oxp_arena_array(a, nn ? nn : 1, sizeof(uint32_t));
	c.bias = oxp_arena_array(a, nn ? nn : 1, sizeof(uint32_t));
	oxp_qvalue *vmark = oxp_arena_array(a, nv ? nv : 1, sizeof(oxp_qvalue));
	oxp_qop *ops = oxp_arena_array(a, nn ? nn : 1, sizeof(oxp_qop));
	if (q == NULL || c.nodes == NULL || c.kind == NULL || c.def == NULL || vmark == NULL ||
	    ops == NULL || c.wscale == NULL || c.bias == NULL)
		goto nomem;
	for (uint32_t ni = 0; ni < nn; ni++) {
		c.nodes[ni].role = OXP_QR_NONE;
		c.nodes[ni].rep = c.nodes[ni].op = OXP_NONE;
		c.wscale[ni] = c.bias[ni] = OXP_NONE;
		c.kind[ni] = kind_of(v->nodes[ni].proto, &c.def[ni]);
	}
	/* roles: plumbing and quantized ops first, then dynamic chains (which claim Cast/Mul/
	 * Add nodes still free), then the float ops next to a Q or DQ */
	for (uint32_t ni = 0; ni < nn; ni++) {
		switch (c.kind[ni]) {
		case K_Q:
		case K_DQL:
			c.nodes[ni].role = OXP_QR_PART;
			break;
		case K_DQ: {
			uint32_t y = output_of(v, ni, 0);
			bool used = y != OXP_NONE && v->values[y].nconsumers > 0 && !v->values[y].graph_output;
			c.nodes[ni].role = const_tensor(v, input_of(v, ni, 0)) != NULL && used ? OXP_QR_WEIGHT
			                                                                       : OXP_QR_PART;
			break;
		}
		case K_QOP:
			c.nodes[ni].role = OXP_QR_OP;
			break;
		default:
			break;
		}
	}
	for (uint32_t ni = 0; ni < nn; ni++)
		if (c.kind[ni] == K_QOP && c.def[ni]->chain)
			dynamic_chain(&c, ni, &c.wscale[ni], &c.bias[ni]);
	for (uint32_t ni = 0; ni < nn; ni++)
		if (c.kind[ni] == K_OTHER || c.kind[ni] == K_IDENTITY)
			if (c.nodes[ni].role == OXP_QR_NONE && qdq_neighbour(&c, ni))
				c.nodes[ni].role = OXP_QR_OP;
	/* the quantized ops and their tensors */
	uint32_t nops = 0;
	for (uint32_t ni = 0; ni < nn; ni++) {
		if (c.nodes[ni].role != OXP_QR_OP)
			continue;
		qtlist l;
		l.n = 0;
		oxp_qop *op = &ops[nops];
		memset(op, 0, sizeof(*op));
		op->node = ni;
		const oxp_node *n = v->nodes[ni].proto;
		if (c.kind[ni] == K_QOP) {
			qop_tensors(&c, ni, &l, &op->format);
			op->float_op = c.def[ni]->float_op;
			op->wname = weight_name(n);
		} else {
			qdq_tensors(&c, ni, &l);
			op->float_op = oxp_arena_strndup(a, n->op_type.p ? n->op_type.p : "", n->op_type.len);
			op->format = OXP_QF_WEIGHT_ONLY;
			for (uint32_t i = 0; i < l.n; i++)
				if (l.t[i].slot == OXP_QS_INPUT || l.t[i].slot == OXP_QS_OUTPUT)
					op->format = OXP_QF_QDQ;
		}
		for (uint32_t i = 0; i < l.n; i++) {
			oxp_qtensor *t = &l.t[i];
			const oxp_tensor *ct = const_tensor(v, t->data);
			t->count = ct ? tensor_count(ct) : 0;
			if (ct != NULL && t->bits > 0 && t->bits < 8 && ct->data_type == OXP_DT_UINT8 &&
			    t->count <= UINT64_MAX / 8)
				t->count = t->count * 8 / t->bits;
			if (ct != NULL && oxp_str_eq(n->op_type, "MatMulNBits") && t->slot == OXP_QS_WEIGHT) {
				int64_t K = attr_int(n, "K", 0), N = attr_int(n, "N", 0);
				if (K > 0 && N > 0 && K <= (INT64_C(1) << 31) && N <= (INT64_C(1) << 31))
					t->count = (uint64_t)K * (uint64_t)N;
			}
		}
		/* precision: the largest quantized weight; the first quantized input (else
		 * output) */
		uint64_t best = 0;
		for (uint32_t i = 0; i < l.n; i++) {
			const oxp_qtensor *t = &l.t[i];
			if (t->slot == OXP_QS_WEIGHT) {
				uint64_t cnt = t->count + 1;
				if (cnt > best) {
					best = cnt;
					op->wtype = t->qtype;
					op->gran = t->gran;
					op->block = t->block;
				}
			}
		}
		if (op->wname != NULL && op->wtype != 0)
			op->wname = NULL;
		if (op->wname == NULL && op->wtype == 0 && best > 0) {
			for (uint32_t i = 0; i < l.n; i++)
				if (l.t[i].slot == OXP_QS_WEIGHT && l.t[i].bits > 0 && l.t[i].bits <= 8)
					op->wname = uint_bits[l.t[i].bits];
		}
		if (op->wname == NULL && best == 0)
			op->wtype = 0;
		for (int pass = 0; pass < 2 && op->atype == 0; pass++)
			for (uint32_t i = 0; i < l.n && op->atype == 0; i++)
				if (l.t[i].slot == (pass ? OXP_QS_OUTPUT : OXP_QS_INPUT)) {
					op->atype = l.t[i].qtype;
					op->dynamic = l.t[i].dynamic;
				}
		if (op->format == OXP_QF_DYNAMIC && op->atype == 0) {
			op->atype = OXP_DT_UINT8; /* DynamicQuantizeMatMul / LSTM quantize A to uint8 */
			op->dynamic = true;
		}
		if (l.n > 0) {
			oxp_qtensor *qt = oxp_arena_array(a, l.n, sizeof(oxp_qtensor));
			if (qt == NULL)
				goto nomem;
			memcpy(qt, l.t, l.n * sizeof(oxp_qtensor));
			op->qt = qt;
			op->nqt = l.n;
		}
		c.nodes[ni].op = nops++;
	}
	/* which box plumbing joins */
	for (uint32_t ni = 0; ni < nn; ni++) {
		if (c.nodes[ni].role != OXP_QR_PART || c.nodes[ni].rep != OXP_NONE)
			continue; /* chain parts have theirs */
		uint32_t x = input_of(v, ni, 0), y = output_of(v, ni, 0), rep = OXP_NONE;
		uint32_t p = producer_of(v, x);
		bool px = p != OXP_NONE && c.kind[p] != K_CONSTANT && const_tensor(v, x) == NULL;
		if (c.kind[ni] == K_Q)
			rep = px ? p : sole_consumer(v, y);          /* output quantization of p */
		else /* DQ of an activation, DynamicQuantizeLinear: input of their user */
			rep = sole_consumer(v, y) != OXP_NONE ? sole_consumer(v, y) : px ? p : OXP_NONE;
		c.nodes[ni].rep = rep;
	}
	for (uint32_t ni = 0; ni < nn; ni++) {
		oxp_qnode *qn = &c.nodes[ni];
		if (qn->role != OXP_QR_PART || qn->rep == OXP_NONE)
			continue;
		uint32_t r = qn->rep;
		int hops = 0;
		while (r != OXP_NONE && r != ni && c.nodes[r].role == OXP_QR_PART && hops++ < HOPS)
			r = c.nodes[r].rep;
		if (r == OXP_NONE || r == ni || c.nodes[r].role == OXP_QR_PART ||
		    c.nodes[r].role == OXP_QR_WEIGHT || v->nodes[r].scope != v->nodes[ni].scope ||
		    v->nodes[r].nsubscopes > 0)
			r = OXP_NONE;
		qn->rep = r;
	}
	/* summary */
	memset(q, 0, sizeof(*q));
	counter wk = {0}, ak = {0};
	for (uint32_t i = 0; i < nops; i++) {
		const oxp_qop *op = &ops[i];
		q->formats |= op->format;
		if (op->wtype != 0 || op->wname != NULL) {
			oxp_qcount *e = count_of(a, &wk, op->wtype, op->wname);
			if (e == NULL)
				goto nomem;
			e->ops++;
		}
		if (op->atype != 0) {
			oxp_qcount *e = count_of(a, &ak, op->atype, NULL);
			if (e == NULL)
				goto nomem;
			e->ops++;
		}
		q->dynamic_ops += op->dynamic;
		for (uint32_t k = 0; k < op->nqt; k++) {
			const oxp_qtensor *t = &op->qt[k];
			/* quantized constants: weights, and integer biases (QLinearConv's int32 B) */
			bool quantized = t->slot == OXP_QS_WEIGHT ||
			                 (t->slot == OXP_QS_BIAS && !is_float(t->qtype));
			uint32_t root = const_root(v, t->data);
			if (t->count > 0 && quantized && root != OXP_NONE &&
			    !(vmark[root].mark & OXP_QV_DATA)) {
				vmark[root].mark |= OXP_QV_DATA;
				vmark[root].dtype = t->qtype;
				vmark[root].count = t->count;
				const char *nm = t->qtype       ? NULL
				                 : op->wname    ? op->wname
				                 : t->bits <= 8 && t->bits > 0 ? uint_bits[t->bits]
				                                : "UNKNOWN";
				oxp_qcount *e = count_of(a, &wk, t->qtype, nm);
				if (e == NULL)
					goto nomem;
				e->tensors++;
				e->parameters = oxp_sat_add_u64(e->parameters, t->count);
			}
			uint32_t sz[2] = {const_root(v, t->scale), const_root(v, t->zero_point)};
			for (int j = 0; j < 2; j++) {
				if (sz[j] == OXP_NONE || (vmark[sz[j]].mark & OXP_QV_SCALE))
					continue;
				const oxp_tensor *st = const_tensor(v, sz[j]);
				if (st == NULL)
					continue;
				vmark[sz[j]].mark |= OXP_QV_SCALE;
				q->quant_params = oxp_sat_add_u64(q->quant_params, tensor_count(st));
			}
		}
	}
	for (uint32_t ni = 0; ni < nn; ni++) {
		uint8_t r = c.nodes[ni].role;
		if (r == OXP_QR_PART || r == OXP_QR_WEIGHT)
			q->plumbing++;
		else if (r == OXP_QR_NONE && c.kind[ni] != K_CONSTANT)
			q->float_ops++;
	}
	/* the other constants: what params.c counts as stored (Constant nodes too) */
	for (uint32_t vi = 0; vi < nv; vi++) {
		const oxp_tensor *t = oxp_value_constant(v, vi);
		if (t == NULL || vmark[vi].mark != 0)
			continue;
		uint64_t *to = is_float(t->data_type) ? &q->float_params : &q->other_params;
		*to = oxp_sat_add_u64(*to, tensor_count(t));
	}
	/* ops of a weight precision without a constant of it (a computed weight) still count */
	if (wk.n > 1)
		qsort(wk.e, wk.n, sizeof(oxp_qcount), by_params);
	if (ak.n > 1)
		qsort(ak.e, ak.n, sizeof(oxp_qcount), by_ops);
	q->nnodes = nn;
	q->nodes = c.nodes;
	q->nops = nops;
	q->ops = ops;
	q->nweights = wk.n;
	q->weights = wk.e;
	q->nacts = ak.n;
	q->acts = ak.e;
	q->nvalues = nv;
	q->values = vmark;
	*out = q;
	return OXP_OK;
nomem:;
	oxp_code code = oxp_arena_code(a) == OXP_E_BUDGET ? OXP_E_BUDGET : OXP_E_NOMEM;
	if (err != NULL) {
		err->code = code;
		snprintf(err->message, sizeof(err->message), code == OXP_E_BUDGET
		         ? "analysing quantization needs more than its memory budget"
		         : "out of memory analysing quantization");
	}
	return code;
}

/* ---------------------------------------------------------------------------------------
 * Dequantization
 */
/* Errors name no byte offset or field path: they are about the graph, not its bytes. */
#define dq_fail(err, code, ...) oxp__set_error((err), (code), 0, "", __VA_ARGS__)

static bool int_range(int32_t dt, int64_t *lo, int64_t *hi)
{
	switch (dt) {
	case OXP_DT_INT2: *lo = -2, *hi = 1; return true;
	case OXP_DT_UINT2: *lo = 0, *hi = 3; return true;
	case OXP_DT_INT4: *lo = -8, *hi = 7; return true;
	case OXP_DT_UINT4: *lo = 0, *hi = 15; return true;
	case OXP_DT_INT8: *lo = -128, *hi = 127; return true;
	case OXP_DT_UINT8: *lo = 0, *hi = 255; return true;
	case OXP_DT_INT16: *lo = -32768, *hi = 32767; return true;
	case OXP_DT_UINT16: *lo = 0, *hi = 65535; return true;
	case OXP_DT_INT32: *lo = INT32_MIN, *hi = INT32_MAX; return true;
	default: return false;
	}
}

static bool dq_float_type(int32_t dt)
{
	return dt == OXP_DT_FLOAT8E4M3FN || dt == OXP_DT_FLOAT8E4M3FNUZ || dt == OXP_DT_FLOAT8E5M2 ||
	       dt == OXP_DT_FLOAT8E5M2FNUZ || dt == OXP_DT_FLOAT4E2M1;
}

static bool scale_type_ok(int32_t dt)
{
	return dt == OXP_DT_FLOAT || dt == OXP_DT_FLOAT16 || dt == OXP_DT_BFLOAT16 ||
	       dt == OXP_DT_FLOAT8E8M0;
}

/* The value holding tensor t (an initializer, or a Constant's output), OXP_NONE. */
static uint32_t value_of_tensor(const oxp_dag_view *v, const oxp_tensor *t)
{
	for (uint32_t vi = 0; vi < v->nvalues; vi++)
		if (oxp_value_constant(v, vi) == t)
			return vi;
	return OXP_NONE;
}

/* Set the layout's axis arithmetic over the logical dims. */
static oxp_code dq_axis(oxp_dequant *dq, int64_t axis, oxp_error *err)
{
	int64_t r = (int64_t)dq->ndims;
	if (axis < -r || axis >= r || r == 0)
		return dq_fail(err, OXP_E_RANGE, "axis %lld is outside a tensor of rank %lld",
		               (long long)axis, (long long)r);
	if (axis < 0)
		axis += r;
	/* a dim of length 0 would divide by zero below and in the index arithmetic (issue
	 * 22), and leaves the later dims' product unchecked (oxp_dims_count stops at 0) */
	for (int64_t k = 0; k < r; k++)
		if (dq->dims[k] <= 0)
			return dq_fail(err, OXP_E_RANGE, "dim %lld has length %lld: nothing to dequantize "
			               "along axis %lld", (long long)k, (long long)dq->dims[k],
			               (long long)axis);
	dq->axis = axis;
	dq->dim = (uint64_t)dq->dims[axis];
	dq->inner = 1;
	for (int64_t k = axis + 1; k < r; k++)
		dq->inner *= (uint64_t)dq->dims[k]; /* all dims >= 1, count fits: so does this */
	return OXP_OK;
}

static oxp_code dq_counts(oxp_dequant *dq, oxp_error *err)
{
	uint64_t ns = dq->scale ? tensor_count(dq->scale) : 0;
	switch (dq->gran) {
	case OXP_QG_TENSOR:
		dq->nscales = 1;
		break;
	case OXP_QG_AXIS:
		dq->nscales = dq->dim;
		break;
	case OXP_QG_BLOCK:
		if (dq->block <= 0)
			return dq_fail(err, OXP_E_RANGE, "block size %lld is not positive",
			               (long long)dq->block);
		if (dq->dim == 0) /* dq_axis refuses it: kept for callers that fill dq by hand */
			return dq_fail(err, OXP_E_RANGE, "the quantization axis has length 0");
		dq->nblocks = (dq->dim - 1) / (uint64_t)dq->block + 1;
		dq->nscales = dq->count / dq->dim * dq->nblocks;
		break;
	default:
		break;
	}
	if (ns != dq->nscales)
		return dq_fail(err, OXP_E_STORAGE,
		               "the scale has %llu elements; %s dequantization of these dims needs %llu",
		               (unsigned long long)ns, oxp_qgran_name(dq->gran),
		               (unsigned long long)dq->nscales);
	if (!scale_type_ok(dq->scale->data_type))
		return dq_fail(err, OXP_E_DTYPE, "a scale of type %s is not supported",
		               oxp_dtype_name(dq->scale->data_type));
	if (dq->zero_point != NULL && !dq->zp_packed) {
		uint64_t nz = tensor_count(dq->zero_point);
		if (nz != dq->nscales)
			return dq_fail(err, OXP_E_STORAGE,
			               "the zero point has %llu elements; the scale has %llu",
			               (unsigned long long)nz, (unsigned long long)dq->nscales);
		dq->zp_stored = nz;
		dq->zp_float = oxp_dtype_class(dq->zero_point->data_type) == OXP_VC_FLOAT;
		if (dq->zp_float && !dq->qfloat && dq->layout != OXP_DQL_NBITS)
			return dq_fail(err, OXP_E_DTYPE, "a zero point of type %s is not supported here",
			               oxp_dtype_name(dq->zero_point->data_type));
	}
	return OXP_OK;
}

static oxp_code dq_plain(oxp_dequant *dq, const oxp_tensor *t, oxp_error *err)
{
	dq->layout = OXP_DQL_PLAIN;
	if (t->ndims > OXP_DQ_MAX_DIMS)
		return dq_fail(err, OXP_E_RANGE, "rank %zu is above %d", t->ndims, OXP_DQ_MAX_DIMS);
	dq->ndims = t->ndims;
	if (t->ndims > 0) /* a scalar may have no dims array at all */
		memcpy(dq->dims, t->dims, t->ndims * sizeof(int64_t));
	dq->count = tensor_count(t);
	dq->qtype = t->data_type;
	dq->qfloat = dq_float_type(t->data_type);
	if (!dq->qfloat && !int_range(t->data_type, &dq->qmin, &dq->qmax))
		return dq_fail(err, OXP_E_DTYPE, "%s values are not quantized integers",
		               oxp_dtype_name(t->data_type));
	dq->bits = oxp_dtype_bits(t->data_type);
	return OXP_OK;
}

/* The weight scale of a dynamic ConvInteger / MatMulInteger (the Mul after its Cast). */
static uint32_t chain_scale(const oxp_dag_view *v, uint32_t ni)
{
	uint32_t cast = sole_consumer(v, output_of(v, ni, 0));
	if (cast == OXP_NONE || !oxp_str_eq(v->nodes[cast].proto->op_type, "Cast"))
		return OXP_NONE;
	uint32_t mul = sole_consumer(v, output_of(v, cast, 0));
	if (mul == OXP_NONE || !oxp_str_eq(v->nodes[mul].proto->op_type, "Mul") ||
	    v->nodes[mul].proto->ninputs != 2)
		return OXP_NONE;
	uint32_t other = input_of(v, mul, v->nodes[mul].inputs[0] == output_of(v, cast, 0) ? 1 : 0);
	if (const_tensor(v, other) != NULL)
		return other;
	uint32_t s = producer_of(v, other);
	if (s == OXP_NONE || !oxp_str_eq(v->nodes[s].proto->op_type, "Mul"))
		return OXP_NONE;
	for (int k = 0; k < 2; k++)
		if (const_tensor(v, input_of(v, s, k)) != NULL)
			return input_of(v, s, k);
	return OXP_NONE;
}

/* Fill dq for the use of t as input k of node ni; false when that use gives no scale. */
static bool dq_use(const oxp_dag_view *v, uint32_t ni, uint32_t k, const oxp_tensor *t,
                   oxp_dequant *dq, oxp_code *rc, oxp_error *err)
{
	const oxp_node *n = v->nodes[ni].proto;
	const qopdef *def = NULL;
	uint8_t kind = kind_of(n, &def);
	int scale = -1, zp = -1;
	int64_t axis = 0;
	bool axis_known = false;
	*rc = OXP_OK;
	if (kind == K_DQ && k == 0) {
		scale = 1, zp = 2;
	} else if (kind == K_QOP) {
		for (uint8_t s = 0; s < def->nslots; s++)
			if (def->slots[s].data == (int)k && def->slots[s].scale != ARG_NONE)
				scale = def->slots[s].scale, zp = def->slots[s].zp;
		if (def->chain && k == 1)
			zp = 3; /* the scale comes from the chain below */
		if (scale < 0 && !(def->chain && k == 1))
			return false;
	} else {
		return false;
	}
	memset(dq, 0, sizeof(*dq));
	dq->node = ni;
	dq->input = k;
	dq->data = t;
	dq->zp_value = OXP_NONE;
	dq->scale_value = scale >= 0 ? input_of(v, ni, scale) : chain_scale(v, ni);
	if (dq->scale_value == OXP_NONE)
		return false;
	dq->scale = const_tensor(v, dq->scale_value);
	if (dq->scale == NULL) {
		*rc = dq_fail(err, OXP_E_DTYPE, "its scale (an input of node %s) is computed, not a "
		              "constant", v->nodes[ni].id);
		return true;
	}
	if (zp >= 0 && input_of(v, ni, zp) != OXP_NONE) {
		dq->zp_value = input_of(v, ni, zp);
		dq->zero_point = const_tensor(v, dq->zp_value);
		if (dq->zero_point == NULL) {
			*rc = dq_fail(err, OXP_E_DTYPE, "its zero point is computed, not a constant");
			return true;
		}
	}
	uint64_t ns = tensor_count(dq->scale);
	if (oxp_str_eq(n->op_type, "MatMulNBits")) {
		int64_t K = attr_int(n, "K", 0), N = attr_int(n, "N", 0), bits = attr_int(n, "bits", 4);
		int64_t bs = attr_int(n, "block_size", 0);
		if (K <= 0 || N <= 0 || bs <= 0 || K > (INT64_C(1) << 40) || N > (INT64_C(1) << 40) ||
		    bs > (INT64_C(1) << 30) || (bits != 2 && bits != 4 && bits != 8) ||
		    (bs * bits) % 8 != 0) {
			*rc = dq_fail(err, OXP_E_RANGE, "MatMulNBits with K=%lld N=%lld bits=%lld "
			              "block_size=%lld is not supported",
			              (long long)K, (long long)N, (long long)bits, (long long)bs);
			return true;
		}
		if (t->data_type != OXP_DT_UINT8) {
			*rc = dq_fail(err, OXP_E_DTYPE, "MatMulNBits B must be UINT8, not %s",
			              oxp_dtype_name(t->data_type));
			return true;
		}
		dq->layout = OXP_DQL_NBITS;
		dq->bits = (unsigned)bits;
		dq->qtype = bits == 2 ? OXP_DT_UINT2 : bits == 4 ? OXP_DT_UINT4 : OXP_DT_UINT8;
		dq->qmin = 0;
		dq->qmax = (INT64_C(1) << bits) - 1;
		dq->ndims = 2;
		dq->dims[0] = N;
		dq->dims[1] = K;
		dq->count = (uint64_t)N * (uint64_t)K;
		dq->gran = OXP_QG_BLOCK;
		dq->block = bs;
		dq->zp_default = INT64_C(1) << (bits - 1);
		uint64_t kb = ((uint64_t)K + (uint64_t)bs - 1) / (uint64_t)bs;
		dq->row_bytes = kb * (uint64_t)(bs * bits / 8); /* K, bs bounded above: no overflow */
		if ((uint64_t)N > (uint64_t)INT64_MAX / dq->row_bytes ||
		    (uint64_t)N > (uint64_t)INT64_MAX / (uint64_t)K) {
			*rc = dq_fail(err, OXP_E_RANGE, "MatMulNBits with K=%lld N=%lld is too large",
			              (long long)K, (long long)N);
			return true;
		}
		if (tensor_count(t) != (uint64_t)N * dq->row_bytes) {
			*rc = dq_fail(err, OXP_E_STORAGE,
			              "MatMulNBits B holds %llu bytes; N x k_blocks x blob_size is %llu",
			              (unsigned long long)tensor_count(t),
			              (unsigned long long)((uint64_t)N * dq->row_bytes));
			return true;
		}
		if (dq->zero_point != NULL && dq->zero_point->data_type == OXP_DT_UINT8) {
			dq->zp_packed = true;
			dq->zp_row_len = kb;
			dq->zp_row_bytes = (kb * (uint64_t)bits + 7) / 8;
			dq->zp_stored = (uint64_t)N * dq->zp_row_bytes;
			if (tensor_count(dq->zero_point) != dq->zp_stored) {
				*rc = dq_fail(err, OXP_E_STORAGE,
				              "MatMulNBits zero_points hold %llu bytes; N x ceil(k_blocks x "
				              "bits / 8) is %llu",
				              (unsigned long long)tensor_count(dq->zero_point),
				              (unsigned long long)dq->zp_stored);
				return true;
			}
		}
		*rc = dq_axis(dq, 1, err);
		if (*rc == OXP_OK)
			*rc = dq_counts(dq, err);
		return true;
	}
	if (oxp_str_eq(n->op_type, "GatherBlockQuantized")) {
		/* every attribute checked before any arithmetic uses it (issue 22: block_size=0
		 * divided by zero below) */
		int64_t bits = attr_int(n, "bits", 4), bs = attr_int(n, "block_size", 128);
		unsigned tbits = oxp_dtype_bits(t->data_type);
		if (bits != 2 && bits != 4 && bits != 8) {
			*rc = dq_fail(err, OXP_E_RANGE, "GatherBlockQuantized bits=%lld is not 2, 4 or 8",
			              (long long)bits);
			return true;
		}
		if (tbits > 0 && tbits < 8 && bits != (int64_t)tbits) {
			*rc = dq_fail(err, OXP_E_RANGE, "GatherBlockQuantized bits=%lld does not match its "
			              "%s data", (long long)bits, oxp_dtype_name(t->data_type));
			return true;
		}
		if (bs <= 0) {
			*rc = dq_fail(err, OXP_E_RANGE, "GatherBlockQuantized block_size=%lld is not "
			              "positive", (long long)bs);
			return true;
		}
		dq->gran = OXP_QG_BLOCK;
		dq->block = bs;
		if (t->data_type == OXP_DT_UINT8 && (bits == 2 || bits == 4)) {
			*rc = dq_plain(dq, t, err);
			if (*rc != OXP_OK || dq->ndims == 0)
				return *rc == OXP_OK ? (*rc = dq_fail(err, OXP_E_RANGE, "a scalar is not a "
				                                      "packed tensor"), true) : true;
			if (dq->count > (uint64_t)INT64_MAX / 4) {
				*rc = dq_fail(err, OXP_E_RANGE, "the packed tensor is too large");
				return true;
			}
			dq->layout = OXP_DQL_PACKED;
			dq->bits = (unsigned)bits;
			dq->dims[dq->ndims - 1] *= 8 / bits;
			dq->count *= (uint64_t)(8 / bits);
			dq->qtype = bits == 2 ? OXP_DT_UINT2 : OXP_DT_UINT4;
			dq->qmax = (INT64_C(1) << bits) - 1;
			dq->zp_default = INT64_C(1) << (bits - 1);
			if (dq->zero_point != NULL) {
				dq->zp_packed = true;
				dq->zp_stored = tensor_count(dq->zero_point);
			}
		} else {
			*rc = dq_plain(dq, t, err);
			if (*rc != OXP_OK)
				return true;
			dq->zp_default = t->data_type == OXP_DT_UINT8 ? 128 : 0;
		}
		*rc = dq_axis(dq, attr_int(n, "quantize_axis", 1), err);
		if (*rc == OXP_OK && dq->zp_packed) {
			/* zero points packed like the data, along the last axis of the scales' shape
			 * (rows of whole bytes); block > 0 and every dim >= 1 (dq_axis): no divisor
			 * below is 0, and rows x row bytes <= the scales' count */
			uint64_t nb = (dq->dim - 1) / (uint64_t)dq->block + 1;
			uint64_t last = dq->axis == (int64_t)dq->ndims - 1 ? nb : (uint64_t)dq->dims[dq->ndims - 1];
			uint64_t rows = dq->count / dq->dim * nb / last;
			dq->zp_row_len = last;
			dq->zp_row_bytes = (last * dq->bits + 7) / 8;
			if (dq->zp_stored != rows * dq->zp_row_bytes) {
				*rc = dq_fail(err, OXP_E_STORAGE, "packed zero points hold %llu bytes; %llu "
				              "needed", (unsigned long long)dq->zp_stored,
				              (unsigned long long)(rows * dq->zp_row_bytes));
				return true;
			}
		}
		if (*rc == OXP_OK)
			*rc = dq_counts(dq, err);
		return true;
	}
	if (kind == K_QOP && def->format == OXP_QF_WEIGHT_ONLY) {
		*rc = dq_fail(err, OXP_E_DTYPE, "dequantizing the weights of %.*s is not supported",
		              (int)(n->op_type.len < 64 ? n->op_type.len : 64), n->op_type.p);
		return true;
	}
	*rc = dq_plain(dq, t, err);
	if (*rc != OXP_OK)
		return true;
	if (dq->qfloat && dq->zero_point != NULL) {
		/* FLOAT8 zero points must be 0: ignore it (the scale alone applies) */
		dq->zero_point = NULL;
		dq->zp_value = OXP_NONE;
	}
	if (kind == K_DQ) {
		int64_t bs = attr_int(n, "block_size", 0);
		if (bs < 0) {
			*rc = dq_fail(err, OXP_E_RANGE, "DequantizeLinear block_size=%lld is negative",
			              (long long)bs);
			return true;
		}
		axis = attr_int(n, "axis", 1);
		axis_known = true;
		if (bs > 0 && ns > 1) {
			dq->gran = OXP_QG_BLOCK;
			dq->block = bs;
		} else {
			dq->gran = ns > 1 ? OXP_QG_AXIS : OXP_QG_TENSOR;
		}
	} else {
		dq->gran = ns > 1 ? OXP_QG_AXIS : OXP_QG_TENSOR;
		/* per-channel weights: QLinearConv's output channels (axis 0); the columns of B
		 * for the matrix products (its last axis; QGemm with transB its first) */
		int64_t r = (int64_t)dq->ndims;
		if (oxp_str_eq(n->op_type, "QLinearConv") || oxp_str_eq(n->op_type, "ConvInteger"))
			axis = 0;
		else if (oxp_str_eq(n->op_type, "QGemm") && attr_int(n, "transB", 0) != 0)
			axis = 0;
		else
			axis = r - 1;
		axis_known = r > 0;
	}
	if (dq->gran == OXP_QG_TENSOR) {
		dq->dim = dq->count;
		dq->inner = 1;
	} else if (!axis_known) {
		*rc = dq_fail(err, OXP_E_RANGE, "a scale of %llu elements on a scalar",
		              (unsigned long long)ns);
		return true;
	} else {
		*rc = dq_axis(dq, axis, err);
		if (*rc != OXP_OK)
			return true;
	}
	*rc = dq_counts(dq, err);
	return true;
}

oxp_code oxp_dequant_find(const oxp_dag *d, const oxp_tensor *t, oxp_dequant *out,
                          oxp_error *err)
{
	if (err != NULL)
		memset(err, 0, sizeof(*err));
	memset(out, 0, sizeof(*out));
	out->node = OXP_NONE;
	const oxp_dag_view *v = oxp_dag_get(d);
	uint32_t vi = value_of_tensor(v, t);
	/* follow Identity nodes: weights shared by PyTorch exports */
	for (int hops = 0; vi != OXP_NONE && hops < HOPS; hops++) {
		const oxp_value *val = &v->values[vi];
		uint32_t next = OXP_NONE;
		for (uint32_t k = 0; k < val->nconsumers; k++) {
			const oxp_edge *e = &v->edges[val->consumers[k]];
			const oxp_node *n = v->nodes[e->dst].proto;
			if (dom_std(n->domain) && oxp_str_eq(n->op_type, "Identity")) {
				if (next == OXP_NONE)
					next = output_of(v, e->dst, 0);
				continue;
			}
			oxp_dequant dq;
			oxp_code rc;
			if (!dq_use(v, e->dst, e->dst_input, t, &dq, &rc, err))
				continue;
			if (rc != OXP_OK) {
				out->node = OXP_NONE;
				return rc;
			}
			dq.data_value = vi;
			*out = dq;
			return OXP_OK;
		}
		vi = next;
	}
	return OXP_OK;
}

void oxp_dequant_span(const oxp_dequant *dq, uint64_t i, uint64_t n, uint64_t *first,
                      uint64_t *count)
{
	switch (dq->layout) {
	case OXP_DQL_NBITS: {
		uint64_t K = (uint64_t)dq->dims[1], bs = (uint64_t)dq->block;
		uint64_t a = i, b = i + n - 1;
		uint64_t fa = (a / K) * dq->row_bytes + (a % K) / bs * (bs * dq->bits / 8) +
		              (a % K % bs) * dq->bits / 8;
		uint64_t fb = (b / K) * dq->row_bytes + (b % K) / bs * (bs * dq->bits / 8) +
		              (b % K % bs) * dq->bits / 8;
		*first = fa;
		*count = fb - fa + 1;
		return;
	}
	case OXP_DQL_PACKED: {
		uint64_t per = 8 / dq->bits;
		*first = i / per;
		*count = (i + n - 1) / per - *first + 1;
		return;
	}
	default:
		*first = i;
		*count = n;
		return;
	}
}

/* Where a logical element sits, moved one element at a time without dividing: the index
 * before the axis, along it (and its block and place in the block), and after it. */
typedef struct dqpos {
	uint64_t outer, a, ab, ar, in;
} dqpos;

static void pos_at(const oxp_dequant *dq, uint64_t i, dqpos *p)
{
	memset(p, 0, sizeof(*p));
	if (dq->gran == OXP_QG_TENSOR || dq->dim == 0 || dq->inner == 0)
		return;
	p->in = i % dq->inner;
	p->a = (i / dq->inner) % dq->dim;
	p->outer = i / dq->inner / dq->dim;
	if (dq->gran == OXP_QG_BLOCK) {
		p->ab = p->a / (uint64_t)dq->block;
		p->ar = p->a % (uint64_t)dq->block;
	}
}

static inline void pos_next(const oxp_dequant *dq, dqpos *p)
{
	if (dq->gran == OXP_QG_TENSOR || ++p->in < dq->inner)
		return;
	p->in = 0;
	if (++p->ar == (uint64_t)dq->block) {
		p->ar = 0;
		p->ab++;
	}
	if (++p->a == dq->dim) {
		p->a = p->ab = p->ar = 0;
		p->outer++;
	}
}

static inline uint64_t pos_scale(const oxp_dequant *dq, const dqpos *p)
{
	switch (dq->gran) {
	case OXP_QG_AXIS:
		return p->a;
	case OXP_QG_BLOCK:
		return (p->outer * dq->nblocks + p->ab) * dq->inner + p->in;
	default:
		return 0;
	}
}

void oxp_dequant_unpack(const oxp_dequant *dq, uint64_t i, size_t n, const int64_t *raw,
                        uint64_t first, int64_t *q)
{
	uint64_t mask = (UINT64_C(1) << dq->bits) - 1;
	switch (dq->layout) {
	case OXP_DQL_NBITS: {
		/* [N, K] blocked along K: outer is the row, ab the block, ar the place in it */
		uint64_t blob = (uint64_t)dq->block * dq->bits / 8;
		dqpos p;
		pos_at(dq, i, &p);
		for (size_t k = 0; k < n; k++, pos_next(dq, &p)) {
			uint64_t bit = p.ar * dq->bits;
			uint64_t byte = p.outer * dq->row_bytes + p.ab * blob + bit / 8;
			q[k] = (int64_t)(((uint64_t)raw[byte - first] >> (bit % 8)) & mask);
		}
		return;
	}
	case OXP_DQL_PACKED: {
		unsigned lg = dq->bits == 4 ? 1 : 2; /* 2 or 4 values a byte */
		uint64_t per = 8 / dq->bits;
		for (size_t k = 0; k < n; k++) {
			uint64_t e = i + k;
			q[k] = (int64_t)(((uint64_t)raw[(e >> lg) - first] >> ((e & (per - 1)) * dq->bits)) & mask);
		}
		return;
	}
	default:
		memcpy(q, raw, n * sizeof(int64_t));
		return;
	}
}

void oxp_dequant_zero_points(const oxp_dequant *dq, const int64_t *raw, int32_t *zp)
{
	if (raw == NULL || dq->zero_point == NULL) {
		for (uint64_t s = 0; s < dq->nscales; s++)
			zp[s] = (int32_t)dq->zp_default;
		return;
	}
	if (!dq->zp_packed) {
		for (uint64_t s = 0; s < dq->nscales; s++)
			zp[s] = (int32_t)raw[s]; /* zero points have the data's type: 32 bits at most */
		return;
	}
	/* packed (MatMulNBits, GatherBlockQuantized uint8): rows of zp_row_len values in
	 * zp_row_bytes bytes, low bits first */
	uint64_t mask = (UINT64_C(1) << dq->bits) - 1;
	for (uint64_t s = 0; s < dq->nscales; s++) {
		uint64_t row = s / dq->zp_row_len, bit = s % dq->zp_row_len * dq->bits;
		uint64_t byte = row * dq->zp_row_bytes + bit / 8;
		zp[s] = byte < dq->zp_stored ? (int32_t)(((uint64_t)raw[byte] >> (bit % 8)) & mask)
		                             : (int32_t)dq->zp_default;
	}
}

uint64_t oxp_dequant_scale_index(const oxp_dequant *dq, uint64_t i)
{
	if (dq->dim == 0 || dq->inner == 0) /* refused by oxp_dequant_find; a layout by hand */
		return 0;
	switch (dq->gran) {
	case OXP_QG_AXIS:
		return (i / dq->inner) % dq->dim;
	case OXP_QG_BLOCK: {
		uint64_t outer = i / (dq->dim * dq->inner), a = (i / dq->inner) % dq->dim;
		uint64_t in = i % dq->inner;
		return (outer * dq->nblocks + a / (uint64_t)dq->block) * dq->inner + in;
	}
	default:
		return 0;
	}
}

void oxp_dequant_apply(const oxp_dequant *dq, uint64_t i, size_t n, const int64_t *q,
                       const float *scale, const int32_t *zp, const float *zpf, float *y)
{
	dqpos p;
	pos_at(dq, i, &p);
	for (size_t k = 0; k < n; k++, pos_next(dq, &p)) {
		uint64_t s = pos_scale(dq, &p);
		float d;
		if (zpf != NULL)
			d = (float)q[k] - zpf[s];
		else
			d = (float)(q[k] - (zp != NULL ? (int64_t)zp[s] : 0));
		y[k] = d * scale[s];
	}
}

void oxp_dequant_apply_float(const oxp_dequant *dq, uint64_t i, size_t n, const double *x,
                             const float *scale, float *y)
{
	dqpos p;
	pos_at(dq, i, &p);
	for (size_t k = 0; k < n; k++, pos_next(dq, &p))
		y[k] = (float)x[k] * scale[pos_scale(dq, &p)];
}
