/*
 * fusion.c — named patterns: groups of plain ops that compute exactly one ONNX op
 * (oxp_fusion_find, oxp.h "Named patterns"; docs/render.md draws them as one box).
 *
 * Each pattern starts at one characteristic node (LayerNormalization at its first
 * ReduceMean, RMSNormalization at the square, Gelu at Erf or Tanh, Swish at Sigmoid,
 * HardSwish at HardSigmoid or Clip, Attention at Softmax, Gemm at MatMul) and follows
 * single edges from there.  A match is accepted only when:
 *  - every value inside it is used by nodes of the match alone (no graph output, no use
 *    in a subgraph) and every node is in the start's scope and in no other match;
 *  - the constants are what the op's definition says (0.5, 1, sqrt 2, 3, 6, exponent 2,
 *    the tanh form's 0.044715 and sqrt(2/pi)) within float32 rounding (float16 and
 *    bfloat16 constants within their own), and single elements that broadcast nothing;
 *  - a normalisation reduces a suffix of the axes, keeps them, adds its epsilon inside
 *    the square root, subtracts the mean of the same input it divides, and its scale and
 *    bias are constants no larger than the normalised shape;
 *  - Attention's Softmax runs over the last axis; Gemm's A and B have rank 2 and C is a
 *    constant that broadcasts to the product without widening it.
 * Patterns are tried in the order of the kinds, larger first, so that a LayerNorm is not
 * taken for an RMSNorm of its centred input.  Nothing recurses but the constant folding
 * of a scalar (at most CONST_DEPTH levels).
 */
#include "parser/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CONST_DEPTH 6 /* levels of Identity/Cast/arithmetic folded into a scalar */

typedef struct fctx {
	const oxp_dag *d;
	const oxp_dag_view *v;
	const uint32_t *claim; /* node_match so far */
	uint32_t scope;
	oxp_fusion m;          /* the match being built */
} fctx;

static bool dom_std(oxp_str d)
{
	return d.len == 0 || oxp_str_eq(d, "ai.onnx");
}

static bool is_op(const fctx *c, uint32_t ni, const char *op)
{
	if (ni == OXP_NONE)
		return false;
	const oxp_node *n = c->v->nodes[ni].proto;
	return dom_std(n->domain) && oxp_str_eq(n->op_type, op);
}

static uint32_t input(const fctx *c, uint32_t ni, size_t k)
{
	const oxp_dnode *dn = &c->v->nodes[ni];
	return k < dn->proto->ninputs ? dn->inputs[k] : OXP_NONE;
}

static size_t ninputs(const fctx *c, uint32_t ni)
{
	return c->v->nodes[ni].proto->ninputs;
}

/* The one output of ni, OXP_NONE when it has several that are used. */
static uint32_t output(const fctx *c, uint32_t ni)
{
	const oxp_dnode *dn = &c->v->nodes[ni];
	if (dn->proto->noutputs < 1)
		return OXP_NONE;
	for (size_t k = 1; k < dn->proto->noutputs; k++) {
		uint32_t o = dn->outputs[k];
		if (o != OXP_NONE && (c->v->values[o].nconsumers > 0 || c->v->values[o].graph_output))
			return OXP_NONE;
	}
	return dn->outputs[0];
}

/* Whether ni can join the match: same scope, in no match yet, not in this one. */
static bool free_node(const fctx *c, uint32_t ni)
{
	if (ni == OXP_NONE || c->claim[ni] != OXP_NONE || c->v->nodes[ni].scope != c->scope)
		return false;
	for (uint32_t i = 0; i < c->m.nnodes; i++)
		if (c->m.nodes[i] == ni)
			return false;
	return true;
}

static bool add(fctx *c, uint32_t ni)
{
	if (!free_node(c, ni) || c->m.nnodes >= OXP_FUSION_MAX_NODES)
		return false;
	c->m.nodes[c->m.nnodes++] = ni;
	return true;
}

/* The one node using vi (all its uses, none outer), when vi is no graph output. */
static uint32_t sole(const fctx *c, uint32_t vi)
{
	if (vi == OXP_NONE)
		return OXP_NONE;
	const oxp_value *val = &c->v->values[vi];
	if (val->graph_output || val->nconsumers == 0)
		return OXP_NONE;
	uint32_t u = OXP_NONE;
	for (uint32_t k = 0; k < val->nconsumers; k++) {
		const oxp_edge *e = &c->v->edges[val->consumers[k]];
		if (e->outer || (u != OXP_NONE && u != e->dst))
			return OXP_NONE;
		u = e->dst;
	}
	return u;
}

/* The producer of vi when it is `op` and vi is used by `user` alone. */
static uint32_t feeding(const fctx *c, uint32_t vi, const char *op, uint32_t user)
{
	if (vi == OXP_NONE || c->v->values[vi].kind != OXP_VALUE_NODE_OUTPUT)
		return OXP_NONE;
	uint32_t p = c->v->values[vi].producer;
	if (p == OXP_NONE || !is_op(c, p, op) || output(c, p) != vi || sole(c, vi) != user ||
	    !free_node(c, p))
		return OXP_NONE;
	return p;
}

static bool float_type(const fctx *c, uint32_t vi)
{
	if (vi == OXP_NONE)
		return false;
	int32_t et = oxp_value_best_type(&c->v->values[vi])->elem_type;
	return et == 0 || oxp_dtype_class(et) == OXP_VC_FLOAT;
}

static int32_t rank_of(const fctx *c, uint32_t vi)
{
	return vi == OXP_NONE ? -1 : oxp_value_best_type(&c->v->values[vi])->rank;
}

/* ---------------------------------------------------------------------------------------
 * Constants
 */
static const oxp_tensor *constant_attr(const oxp_node *n)
{
	for (size_t a = 0; a < n->nattrs; a++)
		if (oxp_str_eq(n->attrs[a].name, "value") && n->attrs[a].t != NULL)
			return n->attrs[a].t;
	return NULL;
}

/* The constant tensor behind vi (an initializer, a Constant's value, through Identity). */
static const oxp_tensor *const_tensor(const fctx *c, uint32_t vi)
{
	for (int hops = 0; hops < CONST_DEPTH && vi != OXP_NONE; hops++) {
		const oxp_value *val = &c->v->values[vi];
		if (val->kind == OXP_VALUE_INITIALIZER)
			return val->graph_input ? NULL : val->initializer; /* an input may replace it */
		if (val->kind != OXP_VALUE_NODE_OUTPUT || val->producer == OXP_NONE)
			return NULL;
		uint32_t p = val->producer;
		if (is_op(c, p, "Constant"))
			return constant_attr(c->v->nodes[p].proto);
		if (!is_op(c, p, "Identity"))
			return NULL;
		vi = input(c, p, 0);
	}
	return NULL;
}

typedef struct scalar {
	double x;
	double tol;    /* relative: the rounding of the narrowest float type involved */
	size_t ndims;  /* the rank it broadcasts to */
} scalar;

static double type_tol(int32_t dt)
{
	switch (dt) {
	case OXP_DT_FLOAT16: return 1e-3;
	case OXP_DT_BFLOAT16: return 8e-3;
	case OXP_DT_DOUBLE: return 1e-12;
	default: return 1e-6;
	}
}

/* The value of vi when it is one element computed from constants (Identity, Cast and
 * arithmetic of scalars folded, depth levels at most). */
static bool const_scalar(const fctx *c, uint32_t vi, scalar *out, int depth)
{
	if (vi == OXP_NONE || depth > CONST_DEPTH)
		return false;
	const oxp_tensor *t = const_tensor(c, vi);
	if (t != NULL) {
		uint64_t n = 0;
		if (!oxp_dims_count(t->dims, t->ndims, &n) || n != 1 ||
		    oxp_dtype_class(t->data_type) == OXP_VC_STRING ||
		    oxp_tensor_read_f64(t, NULL, 0, 0, 1, &out->x, NULL) != OXP_OK || !isfinite(out->x))
			return false;
		out->tol = type_tol(t->data_type);
		out->ndims = t->ndims;
		return true;
	}
	const oxp_value *val = &c->v->values[vi];
	if (val->kind != OXP_VALUE_NODE_OUTPUT || val->producer == OXP_NONE ||
	    c->v->nodes[val->producer].bookkeeping == false)
		return false;
	/* an integer the data propagation knows (a size taken from a shape) */
	oxp_known_data kd;
	if (oxp_dag_value_data(c->d, vi, &kd) && kd.count == 1 && kd.elems[0].kind == OXP_DIM_VALUE) {
		out->x = (double)kd.elems[0].value;
		out->tol = 1e-6;
		out->ndims = (size_t)kd.rank;
		return true;
	}
	uint32_t p = val->producer;
	const char *un[] = {"Identity", "Cast", "Sqrt", "Reciprocal", "Neg"};
	for (size_t i = 0; i < sizeof(un) / sizeof(un[0]); i++) {
		if (!is_op(c, p, un[i]))
			continue;
		if (!const_scalar(c, input(c, p, 0), out, depth + 1))
			return false;
		if (i == 1) { /* Cast: to a float type only (an integer cast truncates) */
			for (size_t a = 0; a < c->v->nodes[p].proto->nattrs; a++) {
				const oxp_attr *at = &c->v->nodes[p].proto->attrs[a];
				if (oxp_str_eq(at->name, "to")) {
					if (at->i > INT32_MAX || at->i < 0 ||
					    oxp_dtype_class((int32_t)at->i) != OXP_VC_FLOAT)
						return false;
					double tt = type_tol((int32_t)at->i);
					out->tol = tt > out->tol ? tt : out->tol;
				}
			}
		}
		out->x = i == 2 ? sqrt(out->x) : i == 3 ? 1.0 / out->x : i == 4 ? -out->x : out->x;
		return isfinite(out->x);
	}
	const char *bin[] = {"Mul", "Div", "Add", "Sub", "Pow"};
	for (size_t i = 0; i < sizeof(bin) / sizeof(bin[0]); i++) {
		if (!is_op(c, p, bin[i]))
			continue;
		scalar a, b;
		if (ninputs(c, p) != 2 || !const_scalar(c, input(c, p, 0), &a, depth + 1) ||
		    !const_scalar(c, input(c, p, 1), &b, depth + 1))
			return false;
		out->x = i == 0 ? a.x * b.x : i == 1 ? a.x / b.x : i == 2 ? a.x + b.x
		       : i == 3 ? a.x - b.x : pow(a.x, b.x);
		out->tol = a.tol > b.tol ? a.tol : b.tol;
		out->ndims = a.ndims > b.ndims ? a.ndims : b.ndims;
		return isfinite(out->x);
	}
	return false;
}

/* vi is a scalar constant equal to want, that widens nothing next to `other`. */
static bool const_is(const fctx *c, uint32_t vi, double want, uint32_t other)
{
	scalar s;
	if (!const_scalar(c, vi, &s, 0))
		return false;
	int32_t r = rank_of(c, other);
	if (s.ndims > 1 && (r < 0 || s.ndims > (size_t)r))
		return false;
	return fabs(s.x - want) <= s.tol * fabs(want) + 1e-30;
}

/* The other input of a two-input node, given one of them; OXP_NONE when neither is it. */
static uint32_t other_input(const fctx *c, uint32_t ni, uint32_t vi)
{
	if (ninputs(c, ni) != 2)
		return OXP_NONE;
	uint32_t a = input(c, ni, 0), b = input(c, ni, 1);
	return a == vi ? b : b == vi ? a : OXP_NONE;
}

/* ---------------------------------------------------------------------------------------
 * Attributes
 */
static const oxp_attr *attr(const fctx *c, uint32_t ni, const char *name)
{
	const oxp_node *n = c->v->nodes[ni].proto;
	for (size_t a = 0; a < n->nattrs; a++)
		if (oxp_str_eq(n->attrs[a].name, name))
			return &n->attrs[a];
	return NULL;
}

static int64_t attr_int(const fctx *c, uint32_t ni, const char *name, int64_t dflt)
{
	const oxp_attr *a = attr(c, ni, name);
	return a != NULL ? a->i : dflt;
}

/* The axes a ReduceMean reduces as "the last k" (k returned), 0 when they are not a
 * suffix of x's axes, are unknown, or the dims are not kept. */
static int64_t suffix_axes(const fctx *c, uint32_t ni, uint32_t x)
{
	if (attr_int(c, ni, "keepdims", 1) != 1)
		return 0;
	int64_t ax[8];
	size_t n = 0;
	const oxp_attr *a = attr(c, ni, "axes");
	if (a != NULL) {
		if (a->nints == 0 || a->nints > 8)
			return 0;
		memcpy(ax, a->ints, a->nints * sizeof(int64_t));
		n = a->nints;
	} else if (ninputs(c, ni) >= 2) { /* opset 18: the axes are an input */
		const oxp_tensor *t = const_tensor(c, input(c, ni, 1));
		uint64_t cnt = 0;
		if (t == NULL || !oxp_dims_count(t->dims, t->ndims, &cnt) || cnt == 0 || cnt > 8 ||
		    oxp_tensor_read_i64(t, NULL, 0, 0, (size_t)cnt, ax, NULL) != OXP_OK)
			return 0;
		n = (size_t)cnt;
	} else {
		return 0; /* every axis (or none): not a normalisation over the last ones */
	}
	int32_t r = rank_of(c, x);
	for (size_t i = 0; i < n; i++) {
		if (ax[i] >= 0) {
			if (r < 0 || ax[i] >= r)
				return 0;
			ax[i] -= r;
		}
		if (ax[i] < -8 || (r >= 0 && ax[i] < -(int64_t)r))
			return 0;
	}
	/* distinct and exactly -n..-1 */
	uint32_t seen = 0;
	for (size_t i = 0; i < n; i++) {
		int64_t k = -ax[i]; /* 1..8 */
		if (k > (int64_t)n || (seen & (1u << k)))
			return 0;
		seen |= 1u << k;
	}
	return (int64_t)n;
}

/* A norm's scale or bias: a constant whose dims are those of x's last k (or fewer). */
static bool norm_param(const fctx *c, uint32_t vi, uint32_t x, int64_t k)
{
	const oxp_tensor *t = const_tensor(c, vi);
	if (t == NULL || (int64_t)t->ndims > k || !float_type(c, vi))
		return false;
	const oxp_value_type *xt = oxp_value_best_type(&c->v->values[x]);
	for (size_t i = 0; i < t->ndims; i++) {
		int64_t d = t->dims[t->ndims - 1 - i];
		if (xt->rank >= 0 && (size_t)xt->rank > i) {
			const oxp_dim *xd = &xt->dims[(size_t)xt->rank - 1 - i];
			if (xd->kind == OXP_DIM_VALUE && xd->value != d)
				return false;
		}
	}
	return true;
}

/* ---------------------------------------------------------------------------------------
 * The patterns.  Each returns true with c->m filled (nodes, anchor, inputs, parameters).
 */
static void finish(fctx *c, uint32_t anchor)
{
	c->m.anchor = anchor;
	c->m.output = output(c, anchor);
	for (int k = 0; k < 4; k++)
		c->m.tin[k] = c->m.in[k] != OXP_NONE ? const_tensor(c, c->m.in[k]) : NULL;
}

/* x * s * 0.5 in any association, from s's producer `from` (s = 1 + erf(...)), x given:
 * the last node, OXP_NONE when it is something else. */
static uint32_t half_product(fctx *c, uint32_t from, uint32_t x)
{
	uint32_t s = output(c, from);
	uint32_t m1 = sole(c, s);
	if (!is_op(c, m1, "Mul") || !add(c, m1))
		return OXP_NONE;
	uint32_t o = other_input(c, m1, s);
	if (o == x) { /* (x * s) * 0.5 */
		uint32_t m2 = sole(c, output(c, m1));
		if (is_op(c, m2, "Mul") && const_is(c, other_input(c, m2, output(c, m1)), 0.5, x) &&
		    add(c, m2))
			return m2;
		return OXP_NONE;
	}
	if (o != OXP_NONE && const_is(c, o, 0.5, x)) { /* x * (s * 0.5) */
		uint32_t m2 = sole(c, output(c, m1));
		if (is_op(c, m2, "Mul") && other_input(c, m2, output(c, m1)) == x && add(c, m2))
			return m2;
		return OXP_NONE;
	}
	uint32_t h = feeding(c, o, "Mul", m1); /* (x * 0.5) * s */
	if (h != OXP_NONE && ninputs(c, h) == 2) {
		uint32_t k = other_input(c, h, x);
		if (k != OXP_NONE && k != x && const_is(c, k, 0.5, x) && add(c, h))
			return m1;
	}
	return OXP_NONE;
}

/* 0.5 * x * (1 + f) after f = Erf(...) or Tanh(...): the end of both Gelu forms. */
static bool gelu_tail(fctx *c, uint32_t f, uint32_t x, bool tanh)
{
	uint32_t one = sole(c, output(c, f));
	if (!is_op(c, one, "Add") || !const_is(c, other_input(c, one, output(c, f)), 1.0, x) ||
	    !add(c, one))
		return false;
	uint32_t last = half_product(c, one, x);
	if (last == OXP_NONE)
		return false;
	c->m.kind = OXP_FU_GELU;
	c->m.tanh = tanh;
	c->m.in[0] = x;
	finish(c, last);
	return true;
}

static bool gelu_erf(fctx *c, uint32_t e)
{
	if (!add(c, e))
		return false;
	uint32_t a = input(c, e, 0);
	uint32_t pd = feeding(c, a, "Div", e), pm = feeding(c, a, "Mul", e);
	uint32_t x = OXP_NONE;
	if (pd != OXP_NONE && ninputs(c, pd) == 2 &&
	    const_is(c, input(c, pd, 1), sqrt(2.0), input(c, pd, 0))) {
		x = input(c, pd, 0);
		add(c, pd);
	} else if (pm != OXP_NONE) {
		for (size_t k = 0; k < 2 && x == OXP_NONE; k++)
			if (const_is(c, input(c, pm, k), sqrt(0.5), input(c, pm, 1 - k)))
				x = input(c, pm, 1 - k);
		if (x == OXP_NONE || !add(c, pm))
			return false;
	}
	if (x == OXP_NONE || !float_type(c, x))
		return false;
	return gelu_tail(c, e, x, false);
}

static bool gelu_tanh(fctx *c, uint32_t t)
{
	if (!add(c, t))
		return false;
	uint32_t sc = feeding(c, input(c, t, 0), "Mul", t);
	if (sc == OXP_NONE || ninputs(c, sc) != 2 || !add(c, sc))
		return false;
	uint32_t b = OXP_NONE;
	for (size_t k = 0; k < 2 && b == OXP_NONE; k++)
		if (const_is(c, input(c, sc, k), sqrt(2.0 / M_PI), input(c, sc, 1 - k)))
			b = input(c, sc, 1 - k);
	uint32_t ab = feeding(c, b, "Add", sc);
	if (ab == OXP_NONE || ninputs(c, ab) != 2 || !add(c, ab))
		return false;
	/* x + 0.044715 * x^3: which side is x is decided by the cube */
	for (size_t k = 0; k < 2; k++) {
		uint32_t x = input(c, ab, k), cm = feeding(c, input(c, ab, 1 - k), "Mul", ab);
		if (cm == OXP_NONE || ninputs(c, cm) != 2 || !float_type(c, x))
			continue;
		uint32_t save = c->m.nnodes;
		for (size_t j = 0; j < 2; j++) {
			c->m.nnodes = save;
			if (!const_is(c, input(c, cm, j), 0.044715, x) || !add(c, cm))
				continue;
			uint32_t cube = input(c, cm, 1 - j);
			uint32_t pw = feeding(c, cube, "Pow", cm), mu = feeding(c, cube, "Mul", cm);
			bool ok = false;
			if (pw != OXP_NONE && input(c, pw, 0) == x && const_is(c, input(c, pw, 1), 3.0, x))
				ok = add(c, pw);
			else if (mu != OXP_NONE && ninputs(c, mu) == 2) {
				/* x * (x * x) or (x * x) * x */
				for (size_t q = 0; q < 2 && !ok; q++) {
					uint32_t sq = feeding(c, input(c, mu, q), "Mul", mu);
					ok = input(c, mu, 1 - q) == x && sq != OXP_NONE && input(c, sq, 0) == x &&
					     input(c, sq, 1) == x && add(c, mu) && add(c, sq);
				}
			}
			if (!ok)
				continue;
			return gelu_tail(c, t, x, true);
		}
		c->m.nnodes = save;
	}
	return false;
}

/* Add(var, eps) -> Sqrt from the ReduceMean `mean2`: the Sqrt, OXP_NONE when not so. */
static uint32_t eps_sqrt(fctx *c, uint32_t mean2, uint32_t x)
{
	uint32_t var = output(c, mean2);
	uint32_t ad = sole(c, var);
	if (!is_op(c, ad, "Add") || !add(c, ad))
		return OXP_NONE;
	scalar eps;
	uint32_t e = other_input(c, ad, var);
	if (e == OXP_NONE || e == var || !const_scalar(c, e, &eps, 0) || eps.x < 0 ||
	    (eps.ndims > 1 && eps.ndims > (size_t)(rank_of(c, x) < 0 ? 1 : rank_of(c, x))))
		return OXP_NONE;
	c->m.epsilon = eps.x;
	uint32_t sq = sole(c, output(c, ad));
	if (!is_op(c, sq, "Sqrt") || !add(c, sq))
		return OXP_NONE;
	return sq;
}

/* The optional "* scale" then "+ bias" after a norm's last node: returns the new last. */
static uint32_t affine(fctx *c, uint32_t last, uint32_t x, int64_t k, bool bias)
{
	uint32_t y = output(c, last), mu = sole(c, y);
	if (!is_op(c, mu, "Mul"))
		return last;
	uint32_t w = other_input(c, mu, y);
	if (w == OXP_NONE || w == y || !norm_param(c, w, x, k) || !add(c, mu))
		return last;
	c->m.in[1] = w;
	last = mu;
	y = output(c, mu);
	uint32_t ab = sole(c, y);
	if (!bias || !is_op(c, ab, "Add"))
		return last;
	uint32_t b = other_input(c, ab, y);
	if (b == OXP_NONE || b == y || !norm_param(c, b, x, k) || !add(c, ab))
		return last;
	c->m.in[2] = b;
	return ab;
}

static bool layernorm(fctx *c, uint32_t m1)
{
	uint32_t x = input(c, m1, 0);
	int64_t k = suffix_axes(c, m1, x);
	if (k == 0 || !float_type(c, x) || !add(c, m1))
		return false;
	uint32_t mean = output(c, m1), sub = sole(c, mean);
	if (!is_op(c, sub, "Sub") || input(c, sub, 0) != x || input(c, sub, 1) != mean ||
	    !add(c, sub))
		return false;
	/* the centred value: squared and divided, nothing else */
	uint32_t d = output(c, sub);
	if (d == OXP_NONE || c->v->values[d].graph_output)
		return false;
	const oxp_value *dv = &c->v->values[d];
	uint32_t sqn = OXP_NONE, div = OXP_NONE;
	for (uint32_t i = 0; i < dv->nconsumers; i++) {
		const oxp_edge *e = &c->v->edges[dv->consumers[i]];
		if (e->outer)
			return false;
		if (is_op(c, e->dst, "Div") && e->dst_input == 0 && (div == OXP_NONE || div == e->dst))
			div = e->dst;
		else if ((is_op(c, e->dst, "Pow") || is_op(c, e->dst, "Mul")) &&
		         (sqn == OXP_NONE || sqn == e->dst))
			sqn = e->dst;
		else
			return false;
	}
	if (sqn == OXP_NONE || div == OXP_NONE)
		return false;
	if (is_op(c, sqn, "Pow") ? input(c, sqn, 0) != d || !const_is(c, input(c, sqn, 1), 2.0, d)
	                         : input(c, sqn, 0) != d || input(c, sqn, 1) != d)
		return false;
	if (!add(c, sqn))
		return false;
	uint32_t m2 = sole(c, output(c, sqn));
	if (!is_op(c, m2, "ReduceMean") || suffix_axes(c, m2, d) != k || !add(c, m2))
		return false;
	uint32_t sq = eps_sqrt(c, m2, x);
	if (sq == OXP_NONE || sole(c, output(c, sq)) != div || input(c, div, 1) != output(c, sq) ||
	    !add(c, div))
		return false;
	c->m.kind = OXP_FU_LAYERNORM;
	c->m.in[0] = x;
	c->m.axis = -k;
	finish(c, affine(c, div, x, k, true));
	return true;
}

static bool rmsnorm(fctx *c, uint32_t s)
{
	uint32_t x = input(c, s, 0);
	if (!float_type(c, x))
		return false;
	if (is_op(c, s, "Pow") ? !const_is(c, input(c, s, 1), 2.0, x) : input(c, s, 1) != x)
		return false;
	if (!add(c, s))
		return false;
	uint32_t m = sole(c, output(c, s));
	int64_t k = is_op(c, m, "ReduceMean") ? suffix_axes(c, m, x) : 0;
	if (k == 0 || !add(c, m))
		return false;
	uint32_t sq = eps_sqrt(c, m, x);
	if (sq == OXP_NONE)
		return false;
	uint32_t r = sole(c, output(c, sq)), last = OXP_NONE;
	if (is_op(c, r, "Div") && input(c, r, 0) == x && input(c, r, 1) == output(c, sq)) {
		last = r; /* x / sqrt(...) */
		if (!add(c, r))
			return false;
	} else {
		/* x * (1 / sqrt(...)) */
		bool inv = is_op(c, r, "Reciprocal") ||
		           (is_op(c, r, "Div") && input(c, r, 1) == output(c, sq) &&
		            const_is(c, input(c, r, 0), 1.0, x));
		if (!inv || !add(c, r))
			return false;
		uint32_t mu = sole(c, output(c, r));
		if (!is_op(c, mu, "Mul") || other_input(c, mu, output(c, r)) != x || !add(c, mu))
			return false;
		last = mu;
	}
	c->m.kind = OXP_FU_RMSNORM;
	c->m.in[0] = x;
	c->m.axis = -k;
	finish(c, affine(c, last, x, k, false));
	return true;
}

static bool swish(fctx *c, uint32_t s)
{
	uint32_t x = input(c, s, 0), y = output(c, s), mu = sole(c, y);
	if (!float_type(c, x) || !is_op(c, mu, "Mul") || other_input(c, mu, y) != x ||
	    !add(c, s) || !add(c, mu))
		return false;
	c->m.kind = OXP_FU_SWISH;
	c->m.in[0] = x;
	finish(c, mu);
	return true;
}

/* Clip's bounds: inputs 1 and 2 (opset 11 on) or the min/max attributes. */
static bool clip_0_6(fctx *c, uint32_t cl, uint32_t x)
{
	if (c->v->nodes[cl].opset >= 11 || ninputs(c, cl) > 1)
		return ninputs(c, cl) == 3 && const_is(c, input(c, cl, 1), 0.0, x) &&
		       const_is(c, input(c, cl, 2), 6.0, x);
	const oxp_attr *lo = attr(c, cl, "min"), *hi = attr(c, cl, "max");
	return lo != NULL && hi != NULL && lo->f == 0.0f && hi->f == 6.0f;
}

static bool hardswish(fctx *c, uint32_t h)
{
	if (is_op(c, h, "HardSigmoid")) {
		const oxp_attr *al = attr(c, h, "alpha"), *be = attr(c, h, "beta");
		double alpha = al ? al->f : 0.2, beta = be ? be->f : 0.5;
		if (fabs(alpha - 1.0 / 6.0) > 1e-6 || beta != 0.5)
			return false;
		return swish(c, h) && (c->m.kind = OXP_FU_HARDSWISH, true);
	}
	/* x * Clip(x + 3, 0, 6) / 6, the division anywhere */
	uint32_t p = feeding(c, input(c, h, 0), "Add", h);
	if (p == OXP_NONE || ninputs(c, p) != 2)
		return false;
	uint32_t x = OXP_NONE;
	for (size_t k = 0; k < 2 && x == OXP_NONE; k++)
		if (const_is(c, input(c, p, k), 3.0, input(c, p, 1 - k)))
			x = input(c, p, 1 - k);
	if (x == OXP_NONE || !float_type(c, x) || !clip_0_6(c, h, x) || !add(c, p) || !add(c, h))
		return false;
	uint32_t y = output(c, h), n1 = sole(c, y);
	/* a sixth: Div by 6 or Mul by 1/6 */
	#define SIXTH(n, v) ((is_op(c, n, "Div") && input(c, n, 0) == (v) && \
	                      const_is(c, input(c, n, 1), 6.0, x)) || \
	                     (is_op(c, n, "Mul") && const_is(c, other_input(c, n, v), 1.0 / 6.0, x)))
	uint32_t last = OXP_NONE;
	if (is_op(c, n1, "Mul") && other_input(c, n1, y) == x) {
		uint32_t n2 = sole(c, output(c, n1));
		if (add(c, n1) && SIXTH(n2, output(c, n1)) && add(c, n2))
			last = n2;
	} else if (SIXTH(n1, y) && add(c, n1)) {
		uint32_t n2 = sole(c, output(c, n1));
		if (is_op(c, n2, "Mul") && other_input(c, n2, output(c, n1)) == x && add(c, n2))
			last = n2;
	}
	#undef SIXTH
	if (last == OXP_NONE)
		return false;
	c->m.kind = OXP_FU_HARDSWISH;
	c->m.in[0] = x;
	finish(c, last);
	return true;
}

/* A Dropout that passes its input on unchanged: no training mode (absent, or a constant
 * false) or a constant ratio of 0, its mask unused. */
static bool identity_dropout(const fctx *c, uint32_t ni)
{
	if (!is_op(c, ni, "Dropout") || output(c, ni) == OXP_NONE)
		return false;
	if (c->v->nodes[ni].opset < 12) /* no training mode: inference passes x on */
		return true;
	if (ninputs(c, ni) < 3 || input(c, ni, 2) == OXP_NONE)
		return true;
	scalar s;
	if (const_scalar(c, input(c, ni, 2), &s, 0) && s.x == 0.0)
		return true;
	/* training mode with a ratio of 0 keeps every element, scaled by 1 */
	return ninputs(c, ni) >= 2 && const_scalar(c, input(c, ni, 1), &s, 0) && s.x == 0.0;
}

/* A scale on one operand of the first MatMul: Mul by c or Div by c.  *v is the operand,
 * replaced by the scaled value's source. */
static bool scaled_operand(fctx *c, uint32_t *v, uint32_t mm, double *factor)
{
	uint32_t pm = feeding(c, *v, "Mul", mm), pd = feeding(c, *v, "Div", mm);
	scalar s;
	if (pd != OXP_NONE && ninputs(c, pd) == 2 && const_scalar(c, input(c, pd, 1), &s, 0) &&
	    s.x != 0 && s.ndims <= 1 && add(c, pd)) {
		*factor = 1.0 / s.x;
		*v = input(c, pd, 0);
		return true;
	}
	if (pm != OXP_NONE && ninputs(c, pm) == 2) {
		for (size_t k = 0; k < 2; k++)
			if (const_scalar(c, input(c, pm, k), &s, 0) && s.ndims <= 1 && add(c, pm)) {
				*factor = s.x;
				*v = input(c, pm, 1 - k);
				return true;
			}
	}
	return false;
}

static bool attention(fctx *c, uint32_t sm)
{
	uint32_t s = input(c, sm, 0);
	int32_t r = rank_of(c, s);
	int64_t axis = attr_int(c, sm, "axis", c->v->nodes[sm].opset >= 13 ? -1 : 1);
	if (axis != -1 && !(r >= 0 && axis == r - 1))
		return false;
	if (!float_type(c, s) || !add(c, sm))
		return false;
	/* forward: [Dropout] -> MatMul(p, V) */
	uint32_t p = output(c, sm), nx = sole(c, p);
	if (identity_dropout(c, nx)) {
		if (!add(c, nx))
			return false;
		p = output(c, nx);
		nx = sole(c, p);
	}
	if (!is_op(c, nx, "MatMul") || input(c, nx, 0) != p || !add(c, nx))
		return false;
	uint32_t vv = input(c, nx, 1);
	/* backward: [Add mask] <- [Mul/Div scale] <- MatMul(Q, Kt) */
	uint32_t mask = OXP_NONE, cur = s;
	double factor = 0;
	bool scaled = false;
	uint32_t pa = feeding(c, cur, "Add", sm);
	if (pa != OXP_NONE && ninputs(c, pa) == 2) {
		for (size_t k = 0; k < 2; k++) {
			uint32_t a = input(c, pa, k);
			if (a == input(c, pa, 1 - k) || (feeding(c, a, "MatMul", pa) == OXP_NONE &&
			    feeding(c, a, "Mul", pa) == OXP_NONE && feeding(c, a, "Div", pa) == OXP_NONE))
				continue;
			mask = input(c, pa, 1 - k);
			cur = a;
			break;
		}
		if (mask == OXP_NONE || !add(c, pa))
			return false;
	}
	uint32_t user = mask != OXP_NONE ? pa : sm;
	uint32_t mm = feeding(c, cur, "MatMul", user);
	if (mm == OXP_NONE) {
		/* the scale after the product */
		uint32_t pm = feeding(c, cur, "Mul", user), pd = feeding(c, cur, "Div", user);
		scalar sc;
		uint32_t node = pm != OXP_NONE ? pm : pd;
		if (node == OXP_NONE || ninputs(c, node) != 2)
			return false;
		for (size_t k = 0; k < 2 && !scaled; k++) {
			if (node == pd && k == 0)
				continue;
			if (const_scalar(c, input(c, node, k), &sc, 0) && sc.ndims <= 1 && sc.x != 0) {
				factor = node == pd ? 1.0 / sc.x : sc.x;
				cur = input(c, node, 1 - k);
				scaled = true;
			}
		}
		if (!scaled || !add(c, node))
			return false;
		mm = feeding(c, cur, "MatMul", node);
	}
	if (mm == OXP_NONE || !add(c, mm))
		return false;
	uint32_t q = input(c, mm, 0), kt = input(c, mm, 1);
	if (!scaled && !scaled_operand(c, &q, mm, &factor) && !scaled_operand(c, &kt, mm, &factor))
		return false;
	if (!isfinite(factor))
		return false;
	c->m.kind = OXP_FU_ATTENTION;
	c->m.in[0] = q;
	c->m.in[1] = kt;
	c->m.in[2] = vv;
	c->m.in[3] = mask;
	c->m.scale = factor;
	finish(c, nx);
	return true;
}

static bool gemm(fctx *c, uint32_t mm)
{
	uint32_t a = input(c, mm, 0), b = input(c, mm, 1);
	if (rank_of(c, a) != 2 || rank_of(c, b) != 2 || !float_type(c, a))
		return false;
	uint32_t y = output(c, mm), ad = sole(c, y);
	if (!is_op(c, ad, "Add"))
		return false;
	uint32_t cc = other_input(c, ad, y);
	const oxp_tensor *t = cc != OXP_NONE && cc != y ? const_tensor(c, cc) : NULL;
	if (t == NULL || t->ndims > 2)
		return false;
	/* C widens nothing: each dim 1 or the product's */
	const oxp_value_type *yt = oxp_value_best_type(&c->v->values[y]);
	for (size_t i = 0; i < t->ndims; i++) {
		int64_t d = t->dims[t->ndims - 1 - i];
		if (d == 1)
			continue;
		if (yt->rank != 2)
			return false;
		const oxp_dim *yd = &yt->dims[1 - i];
		if (yd->kind != OXP_DIM_VALUE || yd->value != d)
			return false;
	}
	if (!add(c, mm) || !add(c, ad))
		return false;
	c->m.kind = OXP_FU_GEMM;
	c->m.in[0] = a;
	c->m.in[1] = b;
	c->m.in[2] = cc;
	finish(c, ad);
	return true;
}

/* ---------------------------------------------------------------------------------------
 */
const char *oxp_fusion_name(unsigned kind)
{
	static const char *const names[OXP_FU__COUNT] = {
	    "LayerNormalization", "RMSNormalization", "Gelu", "Swish", "HardSwish", "Attention",
	    "Gemm"};
	return kind < OXP_FU__COUNT ? names[kind] : "?";
}

/* No input of the op comes out of the match itself (a cycle through it). */
static bool acyclic(const fctx *c)
{
	for (int k = 0; k < 4; k++) {
		uint32_t vi = c->m.in[k];
		if (vi == OXP_NONE || c->v->values[vi].producer == OXP_NONE)
			continue;
		for (uint32_t i = 0; i < c->m.nnodes; i++)
			if (c->m.nodes[i] == c->v->values[vi].producer)
				return false;
	}
	return true;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

oxp_code oxp_fusion_find(const oxp_dag *d, oxp_arena *a, const oxp_fusions **out,
                         oxp_error *err)
{
	if (err != NULL)
		memset(err, 0, sizeof(*err));
	const oxp_dag_view *v = oxp_dag_get(d);
	uint32_t nn = v->nnodes;
	oxp_fusions *f = oxp_arena_alloc(a, sizeof(*f));
	uint32_t *claim = oxp_arena_array(a, nn ? nn : 1, sizeof(uint32_t));
	if (f == NULL || claim == NULL)
		return oxp__set_error(err, OXP_E_NOMEM, 0, "", "out of memory");
	memset(claim, 0xff, (size_t)(nn ? nn : 1) * sizeof(uint32_t));
	uint32_t cap = 0, n = 0;
	oxp_fusion *ms = NULL;
	static const char *const starts[][2] = {
	    {"ReduceMean", NULL}, {"Pow", "Mul"}, {"Softmax", NULL}, {"Erf", "Tanh"},
	    {"HardSigmoid", "Clip"}, {"Sigmoid", NULL}, {"MatMul", NULL}};
	for (size_t pass = 0; pass < sizeof(starts) / sizeof(starts[0]); pass++) {
		for (uint32_t ni = 0; ni < nn; ni++) {
			if (claim[ni] != OXP_NONE)
				continue;
			fctx c = {d, v, claim, v->nodes[ni].scope, {0}};
			bool first = is_op(&c, ni, starts[pass][0]);
			if (!first && (starts[pass][1] == NULL || !is_op(&c, ni, starts[pass][1])))
				continue;
			for (int k = 0; k < 4; k++)
				c.m.in[k] = OXP_NONE;
			bool ok = false;
			switch (pass) {
			case 0: ok = layernorm(&c, ni); break;
			case 1: ok = rmsnorm(&c, ni); break;
			case 2: ok = attention(&c, ni); break;
			case 3: ok = first ? gelu_erf(&c, ni) : gelu_tanh(&c, ni); break;
			case 4: ok = hardswish(&c, ni); break;
			case 5: ok = swish(&c, ni); break;
			default: ok = gemm(&c, ni); break;
			}
			if (!ok || c.m.output == OXP_NONE || !acyclic(&c))
				continue;
			if (n == cap) {
				uint32_t ncap = cap ? cap * 2 : 64;
				oxp_fusion *nm = oxp_arena_array(a, ncap, sizeof(oxp_fusion));
				if (nm == NULL)
					return oxp__set_error(err, OXP_E_NOMEM, 0, "", "out of memory");
				if (n > 0)
					memcpy(nm, ms, (size_t)n * sizeof(oxp_fusion));
				ms = nm;
				cap = ncap;
			}
			qsort(c.m.nodes, c.m.nnodes, sizeof(uint32_t), cmp_u32);
			for (uint32_t i = 0; i < c.m.nnodes; i++)
				claim[c.m.nodes[i]] = n;
			ms[n++] = c.m;
		}
	}
	/* in the order of their anchors: renumber */
	oxp_fusion *sorted = oxp_arena_array(a, n ? n : 1, sizeof(oxp_fusion));
	uint32_t *renum = oxp_arena_array(a, n ? n : 1, sizeof(uint32_t));
	if (sorted == NULL || renum == NULL)
		return oxp__set_error(err, OXP_E_NOMEM, 0, "", "out of memory");
	uint32_t k = 0;
	memset(f->counts, 0, sizeof(f->counts));
	for (uint32_t ni = 0; ni < nn; ni++) {
		uint32_t mi = claim[ni];
		if (mi == OXP_NONE || ms[mi].anchor != ni)
			continue;
		renum[mi] = k;
		sorted[k++] = ms[mi];
		f->counts[ms[mi].kind]++;
	}
	for (uint32_t ni = 0; ni < nn; ni++)
		if (claim[ni] != OXP_NONE)
			claim[ni] = renum[claim[ni]];
	f->nmatches = k;
	f->matches = sorted;
	f->node_match = claim;
	*out = f;
	return OXP_OK;
}
