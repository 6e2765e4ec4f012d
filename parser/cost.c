/*
 * cost.c — what a model costs: MACs, other arithmetic ops, parameters and activation bytes
 * per node, per scope and in total, as polynomials in the model's named dims (oxp.h,
 * "Cost"; the definition of each op family and its source: docs/cost.md).
 *
 * One pass over the dag's nodes: each node's op is looked up in a table sorted by name
 * (binary search), whose entry computes its figures from the best known types of its
 * inputs and outputs (declared, else inferred) and its attributes.  A dim is a number, a
 * symbol (dim_param; a number when bound), or unknown: a figure that needs an unknown dim
 * is OXP_COST_UNKNOWN, never a guess.  Polynomials are bounded (terms, degree, symbols)
 * and their arithmetic checked, so hostile shapes give a marker, not a wrapped number.
 */
#include "parser/internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------
 * Polynomials
 */
static void p_zero(oxp_cost_poly *p)
{
	p->flags = 0;
	p->nterms = 0;
}

static void p_flag(oxp_cost_poly *p, unsigned f)
{
	p->flags = (uint8_t)(p->flags | f);
	p->nterms = 0;
}

static void p_const(oxp_cost_poly *p, int64_t v)
{
	p_zero(p);
	if (v < 0) {
		p_flag(p, OXP_COST_UNKNOWN);
	} else if (v > 0) {
		p->nterms = 1;
		p->t[0].coef = v;
		p->t[0].degree = 0;
	}
}

static int term_cmp(const oxp_cost_term *a, const oxp_cost_term *b)
{
	if (a->degree != b->degree)
		return a->degree < b->degree ? -1 : 1;
	for (uint8_t i = 0; i < a->degree; i++)
		if (a->sym[i] != b->sym[i])
			return a->sym[i] < b->sym[i] ? -1 : 1;
	return 0;
}

/* Add term t into p (kept sorted by term_cmp). */
static void p_put(oxp_cost_poly *p, const oxp_cost_term *t)
{
	if (p->flags)
		return;
	uint8_t i = 0;
	while (i < p->nterms && term_cmp(&p->t[i], t) < 0)
		i++;
	if (i < p->nterms && term_cmp(&p->t[i], t) == 0) {
		if (__builtin_add_overflow(p->t[i].coef, t->coef, &p->t[i].coef))
			p_flag(p, OXP_COST_TOO_LARGE);
		return;
	}
	if (p->nterms == OXP_COST_MAX_TERMS) {
		p_flag(p, OXP_COST_TOO_COMPLEX);
		return;
	}
	memmove(&p->t[i + 1], &p->t[i], (size_t)(p->nterms - i) * sizeof(p->t[0]));
	p->t[i] = *t;
	p->nterms++;
}

/* *a += *b */
static void p_add(oxp_cost_poly *a, const oxp_cost_poly *b)
{
	if (a->flags || b->flags) {
		p_flag(a, b->flags);
		return;
	}
	for (uint8_t i = 0; i < b->nterms && !a->flags; i++)
		p_put(a, &b->t[i]);
}

/* *out = *a * *b (out may alias either) */
static void p_mul(oxp_cost_poly *out, const oxp_cost_poly *a, const oxp_cost_poly *b)
{
	/* the common case, two numbers (0 or one constant term each): the same answer
	 * without the merge below or copying a whole polynomial */
	if (!a->flags && !b->flags && a->nterms <= 1 && b->nterms <= 1 &&
	    (a->nterms == 0 || a->t[0].degree == 0) && (b->nterms == 0 || b->t[0].degree == 0)) {
		int64_t v = 0;
		if (a->nterms == 0 || b->nterms == 0) {
			p_zero(out);
		} else if (__builtin_mul_overflow(a->t[0].coef, b->t[0].coef, &v)) {
			p_zero(out);
			p_flag(out, OXP_COST_TOO_LARGE);
		} else {
			p_const(out, v);
		}
		return;
	}
	oxp_cost_poly r;
	p_zero(&r);
	if (a->flags || b->flags) {
		p_flag(&r, (unsigned)(a->flags | b->flags));
		*out = r;
		return;
	}
	for (uint8_t i = 0; i < a->nterms && !r.flags; i++)
		for (uint8_t j = 0; j < b->nterms && !r.flags; j++) {
			const oxp_cost_term *x = &a->t[i], *y = &b->t[j];
			oxp_cost_term t;
			if (x->degree + y->degree > OXP_COST_MAX_DEGREE) {
				p_flag(&r, OXP_COST_TOO_COMPLEX);
				break;
			}
			if (__builtin_mul_overflow(x->coef, y->coef, &t.coef)) {
				p_flag(&r, OXP_COST_TOO_LARGE);
				break;
			}
			/* merge the two sorted symbol lists */
			uint8_t xi = 0, yi = 0, n = 0;
			while (xi < x->degree || yi < y->degree) {
				if (yi == y->degree || (xi < x->degree && x->sym[xi] <= y->sym[yi]))
					t.sym[n++] = x->sym[xi++];
				else
					t.sym[n++] = y->sym[yi++];
			}
			t.degree = n;
			p_put(&r, &t);
		}
	*out = r;
}

static void p_scale(oxp_cost_poly *p, int64_t k)
{
	oxp_cost_poly c;
	p_const(&c, k);
	p_mul(p, p, &c);
}

/* Bytes of bits-wide elements: each term's coefficient times bits / 8, rounded up. */
static void p_bytes(oxp_cost_poly *p, unsigned bits)
{
	if (p->flags)
		return;
	for (uint8_t i = 0; i < p->nterms; i++) {
		int64_t v;
		if (__builtin_mul_overflow(p->t[i].coef, (int64_t)bits, &v)) {
			p_flag(p, OXP_COST_TOO_LARGE);
			return;
		}
		p->t[i].coef = v / 8 + (v % 8 != 0);
	}
}

void oxp_cost_poly_add(oxp_cost_poly *a, const oxp_cost_poly *b)
{
	p_add(a, b);
}

void oxp_cost_poly_scale(oxp_cost_poly *p, int64_t k)
{
	p_scale(p, k);
}

void oxp_cost_flops(oxp_cost_poly *out, const oxp_cost_poly *macs, const oxp_cost_poly *ops)
{
	oxp_cost_poly r = *macs;
	p_scale(&r, 2);
	p_add(&r, ops);
	*out = r;
}

double oxp_cost_poly_eval(const oxp_cost_poly *p, double at)
{
	if (p->flags)
		return NAN;
	double s = 0;
	for (uint8_t i = 0; i < p->nterms; i++) {
		double v = (double)p->t[i].coef;
		for (uint8_t k = 0; k < p->t[i].degree; k++)
			v *= at;
		s += v;
	}
	return s;
}

bool oxp_cost_poly_number(const oxp_cost_poly *p, int64_t *out)
{
	if (p->flags || p->nterms > 1 || (p->nterms == 1 && p->t[0].degree > 0))
		return false;
	*out = p->nterms ? p->t[0].coef : 0;
	return true;
}

typedef struct fmt_buf {
	char *p;
	size_t size, len;
	bool cut;
} fmt_buf;

static void fb_put(fmt_buf *b, const char *s, size_t n)
{
	if (b->cut)
		return;
	if (b->len + n + 1 > b->size) {
		/* what fits of it, then "..." */
		b->cut = true;
		size_t keep = b->size >= 4 ? b->size - 4 : 0;
		if (b->len < keep) {
			memcpy(b->p + b->len, s, keep - b->len);
			b->len = keep;
		}
		if (b->size >= 4) {
			b->len = keep;
			memcpy(b->p + b->len, "...", 3);
			b->len += 3;
		}
		return;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

static void fb_str(fmt_buf *b, const char *s)
{
	fb_put(b, s, strlen(s));
}

/* A coefficient: exact, or 3 significant digits with an SI prefix (231 M, 4.09 G). */
static void fmt_coef(fmt_buf *b, int64_t v, bool exact)
{
	static const char *const si[] = {"", " k", " M", " G", " T", " P", " E"};
	char tmp[48];
	if (exact || v < 1000) {
		snprintf(tmp, sizeof(tmp), "%lld", (long long)v);
	} else {
		double x = (double)v;
		unsigned e = 0;
		while (x >= 999.5 && e < 6) {
			x /= 1000;
			e++;
		}
		snprintf(tmp, sizeof(tmp), "%.3g%s", x, si[e]);
	}
	fb_str(b, tmp);
}

char *oxp_cost_poly_format(const oxp_cost *c, const oxp_cost_poly *p, unsigned flags,
                           char *buf, size_t size)
{
	if (size == 0)
		return buf;
	fmt_buf b = {buf, size, 0, false};
	if (p->flags & OXP_COST_TOO_LARGE)
		fb_str(&b, "too large");
	else if (p->flags & OXP_COST_TOO_COMPLEX)
		fb_str(&b, "too complex");
	else if (p->flags)
		fb_str(&b, "unknown");
	else if (p->nterms == 0)
		fb_str(&b, "0");
	/* highest degree first: the term that grows fastest leads */
	for (int i = p->flags ? -1 : (int)p->nterms - 1; i >= 0; i--) {
		const oxp_cost_term *t = &p->t[i];
		if (i != (int)p->nterms - 1)
			fb_str(&b, " + ");
		bool one = t->coef == 1 && t->degree > 0;
		if (!one)
			fmt_coef(&b, t->coef, (flags & OXP_COST_FMT_EXACT) != 0);
		for (uint8_t k = 0; k < t->degree;) {
			uint8_t s = t->sym[k], pow = 0;
			while (k < t->degree && t->sym[k] == s) {
				k++;
				pow++;
			}
			if (!one || k > pow)
				fb_str(&b, "·");
			if (c != NULL && s < c->nsymbols) {
				char name[100];
				oxp__printable(name, sizeof(name), c->symbols[s]);
				fb_str(&b, name);
			} else {
				fb_str(&b, "?");
			}
			if (pow > 1) {
				char e[8];
				snprintf(e, sizeof(e), "^%u", pow);
				fb_str(&b, e);
			}
		}
	}
	buf[b.len] = '\0';
	return buf;
}

/* ---------------------------------------------------------------------------------------
 * Bindings
 */
oxp_code oxp_cost_bind_parse(oxp_cost_bind *out, const char *text, oxp_error *err)
{
	if (err != NULL) /* oxp__set_error keeps the first error: start from none */
		memset(err, 0, sizeof(*err));
	oxp_cost_bind r;
	r.n = 0;
	const char *s = text;
	while (*s) {
		const char *colon = strchr(s, ':');
		const char *comma = strchr(s, ',');
		if (comma == NULL)
			comma = s + strlen(s);
		if (colon == NULL || colon > comma || colon == s)
			return oxp__set_error(err, OXP_E_RANGE, 0, "dims",
			                      "dims: expected NAME:VALUE[,NAME:VALUE...]");
		if (r.n == OXP_COST_MAX_BIND)
			return oxp__set_error(err, OXP_E_RANGE, 0, "dims", "dims: more than %d bindings",
			                      OXP_COST_MAX_BIND);
		int64_t v = 0;
		const char *q = colon + 1;
		if (q == comma)
			return oxp__set_error(err, OXP_E_RANGE, 0, "dims", "dims: a value is missing");
		for (; q < comma; q++) {
			if (*q < '0' || *q > '9' || v > ((int64_t)1 << 62) / 10)
				return oxp__set_error(err, OXP_E_RANGE, 0, "dims",
				                      "dims: a value is not a number in 0..2^62");
			v = v * 10 + (*q - '0');
		}
		oxp_str name = {s, (size_t)(colon - s)};
		for (uint32_t i = 0; i < r.n; i++)
			if (r.dims[i].name.len == name.len && memcmp(r.dims[i].name.p, s, name.len) == 0)
				return oxp__set_error(err, OXP_E_RANGE, 0, "dims", "dims: a name is bound twice");
		r.dims[r.n].name = name;
		r.dims[r.n].value = v;
		r.n++;
		s = *comma ? comma + 1 : comma;
	}
	*out = r;
	return OXP_OK;
}

const char *oxp_cost_kind_name(unsigned k)
{
	static const char *const names[] = {"counted",   "move",    "bookkeeping",
	                                    "uncounted", "control", "call"};
	return k < sizeof(names) / sizeof(names[0]) ? names[k] : "unknown";
}

/* ---------------------------------------------------------------------------------------
 * The node being costed
 */
typedef struct cc {
	const oxp_dag *d;
	const oxp_dag_view *v;
	oxp_cost *c;
	const oxp_cost_bind *bind;
	oxp_str *syms;
	uint32_t nsyms;
	bool syms_full;
	oxp_smap symmap; /* name -> index in syms (an exporter's "unk__N" dims run to
	                  * hundreds: a linear search per dim was a third of the pass) */
	const oxp_dnode *dn;
	const oxp_node *n;
} cc;

static bool str_same(oxp_str a, oxp_str b)
{
	return a.len == b.len && (a.len == 0 || memcmp(a.p, b.p, a.len) == 0);
}

/* The index of symbol `name`, added when new; OXP_NONE when the symbols are full.  The map
 * is made for OXP_COST_MAX_SYMBOLS keys, so it never grows and a put cannot fail. */
static uint32_t sym_find(cc *c, oxp_str name)
{
	uint32_t s = oxp_smap_get(&c->symmap, name.p, name.len);
	if (s != OXP_NONE)
		return s;
	if (c->nsyms == OXP_COST_MAX_SYMBOLS ||
	    !oxp_smap_put(&c->symmap, name.p, name.len, c->nsyms))
		return OXP_NONE;
	c->syms[c->nsyms] = name;
	return c->nsyms++;
}

static void p_dim(cc *c, oxp_cost_poly *p, const oxp_dim *d)
{
	p_zero(p);
	if (d->kind == OXP_DIM_VALUE) {
		p_const(p, d->value);
		return;
	}
	if (d->kind != OXP_DIM_PARAM || d->param.len == 0) {
		p_flag(p, OXP_COST_UNKNOWN);
		return;
	}
	if (c->bind != NULL)
		for (uint32_t i = 0; i < c->bind->n; i++)
			if (str_same(c->bind->dims[i].name, d->param)) {
				p_const(p, c->bind->dims[i].value);
				return;
			}
	uint32_t s = sym_find(c, d->param);
	if (s == OXP_NONE) {
		c->syms_full = true;
		p_flag(p, OXP_COST_TOO_COMPLEX);
		return;
	}
	p->nterms = 1;
	p->t[0].coef = 1;
	p->t[0].degree = 1;
	p->t[0].sym[0] = (uint8_t)s;
}

static const oxp_value_type *vtype(const cc *c, uint32_t vi)
{
	if (vi == OXP_NONE)
		return NULL;
	const oxp_value_type *t = oxp_value_best_type(&c->v->values[vi]);
	/* a declared type without a shape: the inferred one may have it */
	if (t != NULL && t->rank < 0 && c->v->values[vi].inferred.rank >= 0)
		t = &c->v->values[vi].inferred;
	return t != NULL && t->rank >= 0 ? t : NULL;
}

static uint32_t in_value(const cc *c, size_t k)
{
	return k < c->n->ninputs ? c->dn->inputs[k] : OXP_NONE;
}

static uint32_t out_value(const cc *c, size_t k)
{
	return k < c->n->noutputs ? c->dn->outputs[k] : OXP_NONE;
}

static bool has_in(const cc *c, size_t k)
{
	return in_value(c, k) != OXP_NONE;
}

static const oxp_value_type *in_t(const cc *c, size_t k)
{
	return vtype(c, in_value(c, k));
}

static const oxp_value_type *out_t(const cc *c, size_t k)
{
	return vtype(c, out_value(c, k));
}

static int32_t rank_of(const oxp_value_type *t)
{
	return t ? t->rank : -1;
}

/* Dim `axis` of t (negative: from the end). */
static void t_dim(cc *c, oxp_cost_poly *p, const oxp_value_type *t, int64_t axis)
{
	if (t == NULL || axis < -(int64_t)t->rank || axis >= t->rank) {
		p_zero(p);
		p_flag(p, OXP_COST_UNKNOWN);
		return;
	}
	p_dim(c, p, &t->dims[axis < 0 ? axis + t->rank : axis]);
}

/* Product of dims [from, to) of t. */
static void t_prod(cc *c, oxp_cost_poly *p, const oxp_value_type *t, int32_t from, int32_t to)
{
	p_const(p, 1);
	if (t == NULL) {
		p_flag(p, OXP_COST_UNKNOWN);
		return;
	}
	for (int32_t i = from; i < to && !p->flags; i++) {
		oxp_cost_poly d;
		p_dim(c, &d, &t->dims[i]);
		p_mul(p, p, &d);
	}
}

static void t_numel(cc *c, oxp_cost_poly *p, const oxp_value_type *t)
{
	t_prod(c, p, t, 0, t ? t->rank : 0);
}

/* Elements of output k; when unknown, the numpy broadcast of the inputs' shapes (dims
 * equal, or 1 against anything). */
static void out_numel(cc *c, oxp_cost_poly *p, size_t k)
{
	const oxp_value_type *o = out_t(c, k);
	if (o != NULL) {
		t_numel(c, p, o);
		if (!(p->flags & OXP_COST_UNKNOWN))
			return;
	}
	int32_t rank = 0;
	for (size_t i = 0; i < c->n->ninputs; i++) {
		if (!has_in(c, i))
			continue;
		const oxp_value_type *t = in_t(c, i);
		if (t == NULL) {
			p_zero(p);
			p_flag(p, OXP_COST_UNKNOWN);
			return;
		}
		if (t->rank > rank)
			rank = t->rank;
	}
	p_const(p, 1);
	for (int32_t a = 0; a < rank; a++) {
		const oxp_dim *pick = NULL;
		for (size_t i = 0; i < c->n->ninputs; i++) {
			const oxp_value_type *t = in_t(c, i);
			if (t == NULL || a < rank - t->rank)
				continue;
			const oxp_dim *dd = &t->dims[a - (rank - t->rank)];
			if (pick == NULL || (pick->kind == OXP_DIM_VALUE && pick->value == 1))
				pick = dd;
		}
		oxp_cost_poly d;
		if (pick == NULL)
			p_const(&d, 1);
		else
			p_dim(c, &d, pick);
		p_mul(p, p, &d);
	}
}

static const oxp_attr *attr(const cc *c, const char *name)
{
	for (size_t i = 0; i < c->n->nattrs; i++)
		if (oxp_str_eq(c->n->attrs[i].name, name))
			return &c->n->attrs[i];
	return NULL;
}

static int64_t attr_int(const cc *c, const char *name, int64_t def)
{
	const oxp_attr *a = attr(c, name);
	return a != NULL && a->type == OXP_ATTR_INT ? a->i : def;
}

static oxp_str attr_str(const cc *c, const char *name)
{
	const oxp_attr *a = attr(c, name);
	oxp_str none = {"", 0};
	return a != NULL && a->type == OXP_ATTR_STRING ? a->s : none;
}

/* ---------------------------------------------------------------------------------------
 * Op families.  Each sets o->family and the MAC and op figures; `arg` is the entry's.
 */
typedef void (*cost_fn)(cc *c, oxp_cost_node *o, int arg);

/* Elementwise: arg ops per output element; variadic ops (arg 0): inputs - 1, Mean + 1. */
static void f_elementwise(cc *c, oxp_cost_node *o, int arg)
{
	o->family = "elementwise";
	out_numel(c, &o->ops, 0);
	int64_t per = arg;
	if (arg == 0) {
		per = 0;
		for (size_t i = 0; i < c->n->ninputs; i++)
			per += has_in(c, i);
		per = per > 0 ? per - 1 : 0;
		if (oxp_str_eq(c->n->op_type, "Mean"))
			per++;
	}
	p_scale(&o->ops, per);
}

/* Elementwise over input 0's elements (ops whose output types are not inferred, such as
 * most com.microsoft ones, have the shape of their first input). */
static void f_unary_in(cc *c, oxp_cost_node *o, int arg)
{
	o->family = "elementwise";
	t_numel(c, &o->ops, in_t(c, 0));
	p_scale(&o->ops, arg);
}

static void f_quant(cc *c, oxp_cost_node *o, int arg)
{
	f_unary_in(c, o, arg);
	o->family = "quantize";
}

static void f_move(cc *c, oxp_cost_node *o, int arg)
{
	(void)c;
	(void)arg;
	o->kind = OXP_CK_MOVE;
	o->family = "move";
}

static void f_softmax(cc *c, oxp_cost_node *o, int arg)
{
	o->family = "softmax";
	t_numel(c, &o->ops, in_t(c, 0));
	p_scale(&o->ops, arg);
}

/* LRN: each output element sums the squares of `size` channels around it (size MACs),
 * then scales, adds the bias, raises to beta and divides (arg other ops). */
static void f_lrn(cc *c, oxp_cost_node *o, int arg)
{
	o->family = "norm";
	int64_t size = attr_int(c, "size", 0);
	t_numel(c, &o->macs, in_t(c, 0));
	if (size > 0)
		p_scale(&o->macs, size);
	else
		p_flag(&o->macs, OXP_COST_UNKNOWN);
	t_numel(c, &o->ops, in_t(c, 0));
	p_scale(&o->ops, arg);
}

/* Norms: arg ops per element of input 0, plus 1 for a scale and 1 for a bias given
 * (from input 1 on; Skip* variants: input 1 is the skip: +1 add, scale at 2, bias at 3,
 * arg's hundreds say where the scale input is). */
static void f_norm(cc *c, oxp_cost_node *o, int arg)
{
	o->family = "norm";
	int64_t per = arg % 100;
	size_t first = (size_t)(arg / 100);
	if (first == 0)
		first = 1;
	if (oxp_str_eq(c->n->op_type, "BatchNormalization")) {
		per = 2; /* inference: scale and shift folded: x * a + b */
	} else {
		for (size_t i = first; i < c->n->ninputs && i < first + 2; i++)
			per += has_in(c, i);
		if (first == 2)
			per += 1 + has_in(c, 4); /* the skip, and SkipLayerNorm's bias (input 4) */
	}
	t_numel(c, &o->ops, in_t(c, 0));
	p_scale(&o->ops, per);
}

/* Reductions: arg ops per input element, + 1 per output element for ReduceMean's divide
 * and the root of ReduceL2 / log of ReduceLogSum(Exp). */
static void f_reduce(cc *c, oxp_cost_node *o, int arg)
{
	o->family = "reduce";
	t_numel(c, &o->ops, in_t(c, 0));
	p_scale(&o->ops, arg % 10);
	if (arg >= 10) {
		oxp_cost_poly y;
		out_numel(c, &y, 0);
		p_add(&o->ops, &y);
	}
}

/* Kernel product of a pooling node (kernel_shape), 0 when absent. */
static int64_t kernel_prod(const cc *c)
{
	const oxp_attr *a = attr(c, "kernel_shape");
	if (a == NULL || a->type != OXP_ATTR_INTS || a->nints == 0)
		return -1;
	int64_t k = 1;
	for (size_t i = 0; i < a->nints; i++)
		if (a->ints[i] < 0 || __builtin_mul_overflow(k, a->ints[i], &k))
			return -1;
	return k;
}

/* Pooling: kernel ops (compare or add) per output element, + 1 (divide) for average;
 * global pooling: one per input element (+ 1 per output for average).  arg: 1 average,
 * 2 Lp (a power and an add per kernel element). */
static void f_pool(cc *c, oxp_cost_node *o, int arg)
{
	o->family = "pool";
	oxp_str op = c->n->op_type;
	if (op.len > 6 && memcmp(op.p, "Global", 6) == 0) {
		t_numel(c, &o->ops, in_t(c, 0));
		if (arg == 2)
			p_scale(&o->ops, 2);
		if (arg >= 1) {
			oxp_cost_poly y;
			out_numel(c, &y, 0);
			p_add(&o->ops, &y);
		}
		return;
	}
	out_numel(c, &o->ops, 0);
	int64_t k = kernel_prod(c);
	if (k < 0) {
		p_flag(&o->ops, OXP_COST_UNKNOWN);
		return;
	}
	if (arg == 2)
		k *= 2;
	p_scale(&o->ops, k + (arg >= 1));
}

/* Resize: nearest 0 per output element; linear 3 per resized axis (two products and a
 * sum of the neighbours' weights: 2^n neighbours folded axis by axis); cubic 8 per axis. */
static void f_resize(cc *c, oxp_cost_node *o, int arg)
{
	(void)arg;
	o->family = "resize";
	oxp_str mode = attr_str(c, "mode");
	int64_t per = 0;
	if (oxp_str_eq(mode, "linear") || oxp_str_eq(mode, "bilinear"))
		per = 3;
	else if (oxp_str_eq(mode, "cubic") || oxp_str_eq(mode, "bicubic"))
		per = 8;
	const oxp_value_type *x = in_t(c, 0), *y = out_t(c, 0);
	out_numel(c, &o->ops, 0);
	if (per == 0) {
		p_zero(&o->ops);
		return;
	}
	if (x == NULL || y == NULL || x->rank != y->rank) {
		p_flag(&o->ops, OXP_COST_UNKNOWN);
		return;
	}
	int64_t axes = 0;
	for (int32_t i = 0; i < x->rank; i++)
		axes += !(x->dims[i].kind == OXP_DIM_VALUE && y->dims[i].kind == OXP_DIM_VALUE &&
		          x->dims[i].value == y->dims[i].value);
	p_scale(&o->ops, per * axes);
}

/* Conv (arg: position of W): MACs = elements of Y x W's dims after the first (C/group x
 * kernel); the bias: one add per element of Y. */
static void f_conv(cc *c, oxp_cost_node *o, int arg)
{
	o->family = "conv";
	const oxp_value_type *w = in_t(c, (size_t)arg);
	oxp_cost_poly k;
	out_numel(c, &o->macs, 0);
	t_prod(c, &k, w, 1, rank_of(w));
	if (rank_of(w) < 2)
		p_flag(&k, OXP_COST_UNKNOWN);
	p_mul(&o->macs, &o->macs, &k);
	size_t bias = arg == 1 ? 2 : 8; /* Conv's B; QLinearConv's B (ConvInteger has none) */
	if (oxp_str_eq(c->n->op_type, "ConvInteger") || !has_in(c, bias))
		return;
	out_numel(c, &o->ops, 0);
}

/* ConvTranspose: MACs = elements of X x W's dims after the first (C_out/group x kernel). */
static void f_convtranspose(cc *c, oxp_cost_node *o, int arg)
{
	(void)arg;
	o->family = "conv";
	const oxp_value_type *w = in_t(c, 1);
	oxp_cost_poly k;
	t_numel(c, &o->macs, in_t(c, 0));
	t_prod(c, &k, w, 1, rank_of(w));
	if (rank_of(w) < 2)
		p_flag(&k, OXP_COST_UNKNOWN);
	p_mul(&o->macs, &o->macs, &k);
	if (has_in(c, 2))
		out_numel(c, &o->ops, 0);
}

/* MatMul-like (arg: position of B): MACs = elements of Y x K (A's last dim).  Y's shape
 * carries the broadcast batch dims; when it is unknown, A's leading dims x B's last. */
static void f_matmul(cc *c, oxp_cost_node *o, int arg)
{
	o->family = "matmul";
	const oxp_value_type *a = in_t(c, 0), *b = in_t(c, (size_t)arg);
	oxp_cost_poly kk, y;
	t_dim(c, &kk, a, -1);
	const oxp_value_type *yt = out_t(c, 0);
	if (yt != NULL) {
		t_numel(c, &y, yt);
	} else {
		p_zero(&y);
		p_flag(&y, OXP_COST_UNKNOWN);
	}
	if (y.flags & OXP_COST_UNKNOWN) {
		/* A [..., M, K] x B [K, N] (no batch dims on B): the common case of weights */
		if (rank_of(b) == 2) {
			oxp_cost_poly n;
			t_prod(c, &y, a, 0, rank_of(a) - 1);
			t_dim(c, &n, b, -1);
			p_mul(&y, &y, &n);
		} else if (rank_of(b) == 1) {
			t_prod(c, &y, a, 0, rank_of(a) - 1);
		}
	}
	p_mul(&o->macs, &y, &kk);
	/* FusedMatMul's alpha, QGemm's / MatMulIntegerToFloat's bias: not counted apart */
}

/* Gemm: MACs = M x N x K; C: one add per element of Y. */
static void f_gemm(cc *c, oxp_cost_node *o, int arg)
{
	(void)arg;
	o->family = "matmul";
	bool qgemm = oxp_str_eq(c->n->op_type, "QGemm"); /* A, a_scale, a_zero_point, B, ... */
	const oxp_value_type *a = in_t(c, 0), *b = in_t(c, qgemm ? 3 : 1);
	bool ta = attr_int(c, "transA", 0) != 0, tb = attr_int(c, "transB", 0) != 0;
	oxp_cost_poly m, k, n;
	t_dim(c, &m, a, ta ? 1 : 0);
	t_dim(c, &k, a, ta ? 0 : 1);
	t_dim(c, &n, b, tb ? 0 : 1);
	if (rank_of(a) != 2 || rank_of(b) != 2)
		p_flag(&m, OXP_COST_UNKNOWN);
	p_mul(&o->macs, &m, &k);
	p_mul(&o->macs, &o->macs, &n);
	size_t cpos = qgemm ? 6 : 2;
	if (has_in(c, cpos)) {
		p_mul(&o->ops, &m, &n);
	}
}

/* MatMulNBits: A [..., K] x B (N x K, packed): MACs = elements of A x N, as its float
 * MatMul; bias: one add per element of Y. */
static void f_matmulnbits(cc *c, oxp_cost_node *o, int arg)
{
	(void)arg;
	o->family = "matmul";
	int64_t n = attr_int(c, "N", -1);
	t_numel(c, &o->macs, in_t(c, 0));
	if (n < 0) {
		p_flag(&o->macs, OXP_COST_UNKNOWN);
		return;
	}
	p_scale(&o->macs, n);
	if (has_in(c, 5)) {
		t_prod(c, &o->ops, in_t(c, 0), 0, rank_of(in_t(c, 0)) - 1);
		p_scale(&o->ops, n);
	}
}

/* GatherBlockQuantized: a gather whose gathered values are dequantized: a multiply per
 * output element, and a subtract with zero points. */
static void f_gbq(cc *c, oxp_cost_node *o, int arg)
{
	(void)arg;
	o->family = "gather";
	out_numel(c, &o->ops, 0);
	const oxp_value_type *y = out_t(c, 0);
	if (y == NULL) {
		/* Y = indices' shape with data's gathered axis replaced: data [V, K] along 0 */
		const oxp_value_type *data = in_t(c, 0), *idx = in_t(c, 1);
		oxp_cost_poly k;
		t_numel(c, &o->ops, idx);
		t_prod(c, &k, data, 1, rank_of(data));
		int64_t bits = attr_int(c, "bits", 4);
		if (data != NULL && data->elem_type == OXP_DT_UINT8 && bits > 0 && bits < 8)
			p_scale(&k, 8 / bits);
		if (attr_int(c, "gather_axis", 0) != 0 || rank_of(data) < 1)
			p_flag(&k, OXP_COST_UNKNOWN);
		p_mul(&o->ops, &o->ops, &k);
	}
	p_scale(&o->ops, 1 + has_in(c, 3));
}

/* Einsum: with two or more operands, MACs = (operands - 1) x the product of the sizes of
 * every letter of the equation and of the dims "..." stands for (each output element sums
 * the products over the letters it lacks); one operand: no MACs, one add per input element
 * when a letter is summed away. */
static int letter_index(char ch)
{
	if (ch >= 'a' && ch <= 'z')
		return ch - 'a';
	if (ch >= 'A' && ch <= 'Z')
		return 26 + (ch - 'A');
	return -1;
}

static void f_einsum(cc *c, oxp_cost_node *o, int arg)
{
	(void)arg;
	o->family = "einsum";
	oxp_str eq = attr_str(c, "equation");
	const char *p = eq.p, *end = eq.p + eq.len, *arrow = NULL;
	for (const char *q = p; q + 1 < end; q++)
		if (q[0] == '-' && q[1] == '>') {
			arrow = q;
			break;
		}
	const char *lend = arrow ? arrow : end;
	oxp_cost_poly size[52], ell;
	bool seen[52] = {false}, in_out[52] = {false};
	int count[52] = {0};
	int32_t ell_rank = -1;
	p_const(&ell, 1);
	size_t noperands = 0;
	for (const char *s = p; s <= lend; noperands++) {
		const char *e = s;
		while (e < lend && *e != ',')
			e++;
		const oxp_value_type *t = in_t(c, noperands);
		int32_t letters = 0;
		bool has_ell = false;
		for (const char *q = s; q < e; q++) {
			letters += letter_index(*q) >= 0;
			if (*q == '.' && e - q >= 3 && q[1] == '.' && q[2] == '.') {
				has_ell = true;
				q += 2;
			}
		}
		if (t == NULL || (!has_ell && t->rank != letters) || t->rank < letters) {
			p_flag(&o->macs, OXP_COST_UNKNOWN);
			return;
		}
		int32_t ne = t->rank - letters, axis = 0;
		for (const char *q = s; q < e; q++) {
			int li = letter_index(*q);
			if (li >= 0) {
				oxp_cost_poly d;
				t_dim(c, &d, t, axis++);
				int64_t one;
				if (!seen[li] || (oxp_cost_poly_number(&size[li], &one) && one == 1))
					size[li] = d;
				seen[li] = true;
				count[li]++;
			} else if (*q == '.' && e - q >= 3 && q[1] == '.' && q[2] == '.') {
				if (ne > ell_rank) {
					t_prod(c, &ell, t, axis, axis + ne);
					ell_rank = ne;
				}
				axis += ne;
				q += 2;
			} else if (*q != ' ') {
				p_flag(&o->macs, OXP_COST_UNKNOWN);
				return;
			}
		}
		s = e + 1;
	}
	bool reduced = false;
	if (arrow != NULL) {
		for (const char *q = arrow + 2; q < end; q++)
			if (letter_index(*q) >= 0)
				in_out[letter_index(*q)] = true;
		for (int li = 0; li < 52; li++)
			reduced |= seen[li] && !in_out[li];
	} else {
		for (int li = 0; li < 52; li++)
			reduced |= count[li] > 1; /* implicit output: repeated letters are summed */
	}
	oxp_cost_poly all = ell;
	for (int li = 0; li < 52; li++)
		if (seen[li])
			p_mul(&all, &all, &size[li]);
	if (noperands >= 2) {
		o->macs = all;
		p_scale(&o->macs, (int64_t)noperands - 1);
	} else if (reduced) {
		t_numel(c, &o->ops, in_t(c, 0));
	}
}

/* LSTM / GRU / RNN (arg: gates 4 / 3 / 1): MACs = directions x seq x batch x
 * gates x hidden x (input + hidden); ops per hidden unit and step: arg's tens digit, + 2 per
 * gate with a bias B. */
static void f_rnn(cc *c, oxp_cost_node *o, int arg)
{
	o->family = "recurrent";
	int64_t gates = arg % 10, per = arg / 10;
	const oxp_value_type *x = in_t(c, 0), *w = in_t(c, 1);
	bool batch_first = attr_int(c, "layout", 0) != 0;
	oxp_cost_poly seq, batch, dirs, gh, in, h, t;
	t_dim(c, &seq, x, batch_first ? 1 : 0);
	t_dim(c, &batch, x, batch_first ? 0 : 1);
	t_dim(c, &in, x, 2);
	t_dim(c, &dirs, w, 0);
	t_dim(c, &gh, w, 1); /* gates x hidden */
	int64_t hs = attr_int(c, "hidden_size", -1);
	if (hs >= 0) {
		p_const(&h, hs);
	} else {
		const oxp_value_type *r = in_t(c, 2);
		t_dim(c, &h, r, 2);
	}
	if (rank_of(x) != 3 || rank_of(w) != 3)
		p_flag(&seq, OXP_COST_UNKNOWN);
	/* steps = dirs x seq x batch */
	oxp_cost_poly steps;
	p_mul(&steps, &dirs, &seq);
	p_mul(&steps, &steps, &batch);
	p_add(&in, &h);
	p_mul(&t, &gh, &in);
	p_mul(&o->macs, &steps, &t);
	per += has_in(c, 3) ? 2 * gates : 0;
	p_mul(&o->ops, &steps, &h);
	p_scale(&o->ops, per);
}

/* The attention core: MACs = B x S x T x (Dqk + Dv) (Q K^T over the query heads' width
 * Dqk, and the weighted sum of values over Dv = query heads x value head size); ops: per
 * score (B x Hq x S x T) a scale, the softmax's 5, and a mask add when there is one. */
static void attention_core(oxp_cost_node *o, const oxp_cost_poly *bs, const oxp_cost_poly *t,
                           const oxp_cost_poly *dqk, const oxp_cost_poly *dv,
                           const oxp_cost_poly *hq, bool mask)
{
	oxp_cost_poly w = *dqk, core;
	p_add(&w, dv);
	p_mul(&core, bs, t);
	p_mul(&core, &core, &w);
	p_add(&o->macs, &core);
	oxp_cost_poly sc;
	p_mul(&sc, bs, t);
	p_mul(&sc, &sc, hq);
	p_scale(&sc, 6 + mask);
	p_add(&o->ops, &sc);
}

/* com.microsoft Attention: input [B, S, hidden] x weights [hidden, Dq + Dk + Dv] (the
 * projection), then the core with T = past length + S (past: [2, B, H, P, head]). */
static void f_ms_attention(cc *c, oxp_cost_node *o, int arg)
{
	(void)arg;
	o->family = "attention";
	const oxp_value_type *x = in_t(c, 0), *w = in_t(c, 1);
	oxp_cost_poly bs, hidden, wout, t, dq, dv, hq;
	t_prod(c, &bs, x, 0, 2);
	t_dim(c, &hidden, x, 2);
	t_dim(c, &wout, w, 1);
	if (rank_of(x) != 3 || rank_of(w) != 2)
		p_flag(&bs, OXP_COST_UNKNOWN);
	p_mul(&o->macs, &bs, &hidden);
	p_mul(&o->macs, &o->macs, &wout);
	if (has_in(c, 2)) {
		p_mul(&o->ops, &bs, &wout);
	}
	int64_t heads = attr_int(c, "num_heads", -1);
	const oxp_attr *qkv = attr(c, "qkv_hidden_sizes");
	if (qkv != NULL && qkv->type == OXP_ATTR_INTS && qkv->nints == 3) {
		p_const(&dq, qkv->ints[0]);
		p_const(&dv, qkv->ints[2]);
	} else {
		const oxp_value_type *wt = w;
		if (wt != NULL && wt->rank == 2 && wt->dims[1].kind == OXP_DIM_VALUE &&
		    wt->dims[1].value % 3 == 0) {
			p_const(&dq, wt->dims[1].value / 3);
			dv = dq;
		} else {
			p_zero(&dq);
			p_flag(&dq, OXP_COST_UNKNOWN);
			dv = dq;
		}
	}
	p_const(&hq, heads);
	t_dim(c, &t, x, 1);
	if (has_in(c, 4)) {
		oxp_cost_poly past;
		t_dim(c, &past, in_t(c, 4), 3);
		p_add(&t, &past);
	}
	attention_core(o, &bs, &t, &dq, &dv, &hq, has_in(c, 3));
}

/* MultiHeadAttention: query [B, S, D] (packed [B, S, H, 3, head]), key [B, L, D] or
 * [B, H, L, head] (then the whole key, past included), value alike; past_key
 * [B, H, P, head] adds P.  No projections. */
static void f_mha(cc *c, oxp_cost_node *o, int arg)
{
	(void)arg;
	o->family = "attention";
	const oxp_value_type *q = in_t(c, 0), *k = in_t(c, 1), *v = in_t(c, 2);
	int64_t heads = attr_int(c, "num_heads", -1);
	oxp_cost_poly bs, t, dq, dv, hq;
	t_prod(c, &bs, q, 0, 2);
	p_const(&hq, heads);
	if (rank_of(q) == 5) { /* packed QKV */
		t_prod(c, &dq, q, 2, 3);
		oxp_cost_poly hd;
		t_dim(c, &hd, q, 4);
		p_mul(&dq, &dq, &hd);
		dv = dq;
		t_dim(c, &t, q, 1);
	} else {
		t_dim(c, &dq, q, 2);
		if (rank_of(k) == 4) {
			t_dim(c, &t, k, 2);
		} else {
			t_dim(c, &t, k, 1);
			if (has_in(c, 6)) {
				oxp_cost_poly past;
				t_dim(c, &past, in_t(c, 6), 2);
				p_add(&t, &past);
			}
		}
		if (rank_of(v) == 4) {
			t_dim(c, &dv, v, 3);
			p_mul(&dv, &dv, &hq);
		} else {
			t_dim(c, &dv, v, 2);
		}
		if (rank_of(q) != 3)
			p_flag(&bs, OXP_COST_UNKNOWN);
	}
	attention_core(o, &bs, &t, &dq, &dv, &hq, has_in(c, 4) || has_in(c, 5));
}

/* GroupQueryAttention: query [B, S, H x head] (or packed [B, S, (H + 2 kvH) x head] when
 * key is absent); T is total_sequence_length when its value is known (data propagation),
 * else P + S with past_key [B, kvH, P, head] (P is the past length unless past and present
 * share one buffer, when it is the buffer's length: then only a known total is right),
 * else present_key's declared length.  Each query head reads its group's key and value heads: MACs of
 * the core = B x S x T x 2 x H x head. */
static void f_gqa(cc *c, oxp_cost_node *o, int arg)
{
	(void)arg;
	o->family = "attention";
	const oxp_value_type *q = in_t(c, 0);
	int64_t h = attr_int(c, "num_heads", -1), kvh = attr_int(c, "kv_num_heads", -1);
	oxp_cost_poly bs, t, dq, hq;
	t_prod(c, &bs, q, 0, 2);
	if (rank_of(q) != 3 || h <= 0 || kvh <= 0)
		p_flag(&bs, OXP_COST_UNKNOWN);
	p_const(&hq, h);
	t_dim(c, &dq, q, 2);
	if (!has_in(c, 1) && q != NULL && rank_of(q) == 3) {
		/* packed: head = D / (H + 2 kvH) */
		const oxp_dim *d = &q->dims[2];
		if (d->kind == OXP_DIM_VALUE && h > 0 && kvh > 0 && d->value % (h + 2 * kvh) == 0)
			p_const(&dq, d->value / (h + 2 * kvh) * h);
		else
			p_flag(&dq, OXP_COST_UNKNOWN);
	}
	oxp_known_data total;
	p_zero(&t);
	p_flag(&t, OXP_COST_UNKNOWN);
	if (has_in(c, 6) && oxp_dag_value_data(c->d, in_value(c, 6), &total) && total.count == 1)
		p_dim(c, &t, &total.elems[0]);
	if (t.flags) {
		t_dim(c, &t, q, 1);
		if (has_in(c, 3)) {
			oxp_cost_poly past;
			t_dim(c, &past, in_t(c, 3), 2);
			p_add(&t, &past);
		}
	}
	if (t.flags)
		t_dim(c, &t, out_t(c, 1), 2);
	attention_core(o, &bs, &t, &dq, &dq, &hq, false);
}

/* ONNX Attention (opset 23): Q [B, Hq, S, head] or [B, S, Hq x head] (q_num_heads),
 * K [B, Hkv, L, head] or [B, L, Hkv x head], V alike with its own head size;
 * past_key [B, Hkv, P, head] adds P to T = L. */
static void f_onnx_attention(cc *c, oxp_cost_node *o, int arg)
{
	(void)arg;
	o->family = "attention";
	const oxp_value_type *q = in_t(c, 0), *k = in_t(c, 1), *v = in_t(c, 2);
	oxp_cost_poly bs, t, dq, dv, hq;
	if (rank_of(q) == 4) {
		oxp_cost_poly b, s, hd;
		t_dim(c, &b, q, 0);
		t_dim(c, &hq, q, 1);
		t_dim(c, &s, q, 2);
		t_dim(c, &hd, q, 3);
		p_mul(&bs, &b, &s);
		p_mul(&dq, &hq, &hd);
		t_dim(c, &t, k, 2);
		t_dim(c, &dv, v, 3);
		p_mul(&dv, &dv, &hq);
	} else {
		int64_t qh = attr_int(c, "q_num_heads", -1), kvh = attr_int(c, "kv_num_heads", -1);
		t_prod(c, &bs, q, 0, 2);
		t_dim(c, &dq, q, 2);
		p_const(&hq, qh);
		t_dim(c, &t, k, 1);
		t_dim(c, &dv, v, 2);
		if (qh > 0 && kvh > 0 && qh % kvh == 0)
			p_scale(&dv, qh / kvh);
		else
			p_flag(&dv, OXP_COST_UNKNOWN);
		if (rank_of(q) != 3)
			p_flag(&bs, OXP_COST_UNKNOWN);
	}
	if (has_in(c, 4)) {
		oxp_cost_poly past;
		t_dim(c, &past, in_t(c, 4), 2);
		p_add(&t, &past);
	}
	attention_core(o, &bs, &t, &dq, &dv, &hq, has_in(c, 3));
}

/* RotaryEmbedding: per element of the input, two products and a sum. */
static void f_rotary(cc *c, oxp_cost_node *o, int arg)
{
	f_unary_in(c, o, arg);
	o->family = "rotary";
}

/* ---------------------------------------------------------------------------------------
 * The table, sorted by name (strcmp order; the unit test checks it).  dom: 1 the default
 * domain, 2 com.microsoft, 3 both.
 */
typedef struct cost_op {
	const char *name;
	uint8_t dom;
	cost_fn fn;
	int arg;
} cost_op;

enum { D_ONNX = 1, D_MS = 2, D_BOTH = 3 };

static const cost_op OPS[] = {
	{"Abs", D_ONNX, f_elementwise, 1},
	{"Acos", D_ONNX, f_elementwise, 1},
	{"Acosh", D_ONNX, f_elementwise, 1},
	{"Add", D_ONNX, f_elementwise, 1},
	{"And", D_ONNX, f_elementwise, 1},
	{"ArgMax", D_ONNX, f_reduce, 1},
	{"ArgMin", D_ONNX, f_reduce, 1},
	{"Asin", D_ONNX, f_elementwise, 1},
	{"Asinh", D_ONNX, f_elementwise, 1},
	{"Atan", D_ONNX, f_elementwise, 1},
	{"Atanh", D_ONNX, f_elementwise, 1},
	{"Attention", D_MS, f_ms_attention, 0},
	{"Attention", D_ONNX, f_onnx_attention, 0},
	{"AveragePool", D_ONNX, f_pool, 1},
	{"BatchNormalization", D_ONNX, f_norm, 0},
	{"BiasAdd", D_MS, f_unary_in, 2},
	{"BiasGelu", D_MS, f_unary_in, 2},
	{"BitShift", D_ONNX, f_elementwise, 1},
	{"BitwiseAnd", D_ONNX, f_elementwise, 1},
	{"BitwiseNot", D_ONNX, f_elementwise, 1},
	{"BitwiseOr", D_ONNX, f_elementwise, 1},
	{"BitwiseXor", D_ONNX, f_elementwise, 1},
	{"Cast", D_ONNX, f_move, 0},
	{"CastLike", D_ONNX, f_move, 0},
	{"Ceil", D_ONNX, f_elementwise, 1},
	{"Celu", D_ONNX, f_elementwise, 1},
	{"Clip", D_ONNX, f_elementwise, 2},
	{"Compress", D_ONNX, f_move, 0},
	{"Concat", D_ONNX, f_move, 0},
	{"ConcatFromSequence", D_ONNX, f_move, 0},
	{"Constant", D_ONNX, f_move, 0},
	{"ConstantOfShape", D_ONNX, f_move, 0},
	{"Conv", D_ONNX, f_conv, 1},
	{"ConvInteger", D_ONNX, f_conv, 1},
	{"ConvTranspose", D_ONNX, f_convtranspose, 0},
	{"Cos", D_ONNX, f_elementwise, 1},
	{"Cosh", D_ONNX, f_elementwise, 1},
	{"CumSum", D_ONNX, f_unary_in, 1},
	{"DepthToSpace", D_ONNX, f_move, 0},
	{"DequantizeLinear", D_BOTH, f_quant, 2},
	{"Div", D_ONNX, f_elementwise, 1},
	{"Dropout", D_ONNX, f_move, 0},
	{"DynamicQuantizeLinear", D_ONNX, f_quant, 4},
	{"DynamicQuantizeMatMul", D_MS, f_matmul, 1},
	{"Einsum", D_ONNX, f_einsum, 0},
	{"Elu", D_ONNX, f_elementwise, 1},
	{"Equal", D_ONNX, f_elementwise, 1},
	{"Erf", D_ONNX, f_elementwise, 1},
	{"Exp", D_ONNX, f_elementwise, 1},
	{"Expand", D_ONNX, f_move, 0},
	{"EyeLike", D_ONNX, f_move, 0},
	{"FastGelu", D_MS, f_unary_in, 1},
	{"Flatten", D_ONNX, f_move, 0},
	{"Floor", D_ONNX, f_elementwise, 1},
	{"FusedMatMul", D_MS, f_matmul, 1},
	{"GRU", D_ONNX, f_rnn, 113},
	{"Gather", D_ONNX, f_move, 0},
	{"GatherBlockQuantized", D_MS, f_gbq, 0},
	{"GatherElements", D_ONNX, f_move, 0},
	{"GatherND", D_ONNX, f_move, 0},
	{"Gelu", D_BOTH, f_unary_in, 1},
	{"Gemm", D_ONNX, f_gemm, 0},
	{"GlobalAveragePool", D_ONNX, f_pool, 1},
	{"GlobalLpPool", D_ONNX, f_pool, 2},
	{"GlobalMaxPool", D_ONNX, f_pool, 0},
	{"Greater", D_ONNX, f_elementwise, 1},
	{"GreaterOrEqual", D_ONNX, f_elementwise, 1},
	{"GroupNormalization", D_ONNX, f_norm, 5},
	{"GroupQueryAttention", D_MS, f_gqa, 0},
	{"HardSigmoid", D_ONNX, f_elementwise, 1},
	{"HardSwish", D_ONNX, f_elementwise, 1},
	{"Hardmax", D_ONNX, f_softmax, 1},
	{"Identity", D_ONNX, f_move, 0},
	{"InstanceNormalization", D_ONNX, f_norm, 5},
	{"IsInf", D_ONNX, f_elementwise, 1},
	{"IsNaN", D_ONNX, f_elementwise, 1},
	{"LRN", D_ONNX, f_lrn, 4},
	{"LSTM", D_ONNX, f_rnn, 134},
	{"LayerNormalization", D_BOTH, f_norm, 5},
	{"LeakyRelu", D_ONNX, f_elementwise, 1},
	{"Less", D_ONNX, f_elementwise, 1},
	{"LessOrEqual", D_ONNX, f_elementwise, 1},
	{"Log", D_ONNX, f_elementwise, 1},
	{"LogSoftmax", D_ONNX, f_softmax, 6},
	{"LpNormalization", D_ONNX, f_norm, 3},
	{"LpPool", D_ONNX, f_pool, 2},
	{"MatMul", D_ONNX, f_matmul, 1},
	{"MatMulInteger", D_ONNX, f_matmul, 1},
	{"MatMulIntegerToFloat", D_MS, f_matmul, 1},
	{"MatMulNBits", D_MS, f_matmulnbits, 0},
	{"Max", D_ONNX, f_elementwise, 0},
	{"MaxPool", D_ONNX, f_pool, 0},
	{"Mean", D_ONNX, f_elementwise, 0},
	{"MeanVarianceNormalization", D_ONNX, f_norm, 4},
	{"Min", D_ONNX, f_elementwise, 0},
	{"Mish", D_ONNX, f_elementwise, 1},
	{"Mod", D_ONNX, f_elementwise, 1},
	{"Mul", D_ONNX, f_elementwise, 1},
	{"MultiHeadAttention", D_MS, f_mha, 0},
	{"Neg", D_ONNX, f_elementwise, 1},
	{"Not", D_ONNX, f_elementwise, 1},
	{"OneHot", D_ONNX, f_move, 0},
	{"Or", D_ONNX, f_elementwise, 1},
	{"PRelu", D_ONNX, f_elementwise, 1},
	{"Pad", D_ONNX, f_move, 0},
	{"Pow", D_ONNX, f_elementwise, 1},
	{"QGemm", D_MS, f_gemm, 0},
	{"QLinearConv", D_ONNX, f_conv, 3},
	{"QLinearMatMul", D_ONNX, f_matmul, 3},
	{"QuantizeLinear", D_BOTH, f_quant, 2},
	{"QuickGelu", D_MS, f_unary_in, 1},
	{"RMSNormalization", D_ONNX, f_norm, 3},
	{"RNN", D_ONNX, f_rnn, 21},
	{"Range", D_ONNX, f_move, 0},
	{"Reciprocal", D_ONNX, f_elementwise, 1},
	{"ReduceL1", D_ONNX, f_reduce, 2},
	{"ReduceL2", D_ONNX, f_reduce, 12},
	{"ReduceLogSum", D_ONNX, f_reduce, 11},
	{"ReduceLogSumExp", D_ONNX, f_reduce, 12},
	{"ReduceMax", D_ONNX, f_reduce, 1},
	{"ReduceMean", D_ONNX, f_reduce, 11},
	{"ReduceMin", D_ONNX, f_reduce, 1},
	{"ReduceProd", D_ONNX, f_reduce, 1},
	{"ReduceSum", D_ONNX, f_reduce, 1},
	{"ReduceSumSquare", D_ONNX, f_reduce, 2},
	{"Relu", D_ONNX, f_elementwise, 1},
	{"Reshape", D_ONNX, f_move, 0},
	{"Resize", D_ONNX, f_resize, 0},
	{"ReverseSequence", D_ONNX, f_move, 0},
	{"RotaryEmbedding", D_BOTH, f_rotary, 3},
	{"Round", D_ONNX, f_elementwise, 1},
	{"Scatter", D_ONNX, f_move, 0},
	{"ScatterElements", D_ONNX, f_move, 0},
	{"ScatterND", D_ONNX, f_move, 0},
	{"Selu", D_ONNX, f_elementwise, 1},
	{"SequenceAt", D_ONNX, f_move, 0},
	{"SequenceConstruct", D_ONNX, f_move, 0},
	{"SequenceEmpty", D_ONNX, f_move, 0},
	{"SequenceErase", D_ONNX, f_move, 0},
	{"SequenceInsert", D_ONNX, f_move, 0},
	{"SequenceLength", D_ONNX, f_move, 0},
	{"Shape", D_ONNX, f_move, 0},
	{"Shrink", D_ONNX, f_elementwise, 1},
	{"Sigmoid", D_ONNX, f_elementwise, 1},
	{"Sign", D_ONNX, f_elementwise, 1},
	{"SimplifiedLayerNormalization", D_BOTH, f_norm, 3},
	{"Sin", D_ONNX, f_elementwise, 1},
	{"Sinh", D_ONNX, f_elementwise, 1},
	{"Size", D_ONNX, f_move, 0},
	{"SkipLayerNormalization", D_MS, f_norm, 205},
	{"SkipSimplifiedLayerNormalization", D_MS, f_norm, 203},
	{"Slice", D_ONNX, f_move, 0},
	{"Softmax", D_ONNX, f_softmax, 5},
	{"Softplus", D_ONNX, f_elementwise, 1},
	{"Softsign", D_ONNX, f_elementwise, 1},
	{"SpaceToDepth", D_ONNX, f_move, 0},
	{"Split", D_ONNX, f_move, 0},
	{"SplitToSequence", D_ONNX, f_move, 0},
	{"Sqrt", D_ONNX, f_elementwise, 1},
	{"Squeeze", D_ONNX, f_move, 0},
	{"StringNormalizer", D_ONNX, f_move, 0},
	{"Sub", D_ONNX, f_elementwise, 1},
	{"Sum", D_ONNX, f_elementwise, 0},
	{"Tan", D_ONNX, f_elementwise, 1},
	{"Tanh", D_ONNX, f_elementwise, 1},
	{"ThresholdedRelu", D_ONNX, f_elementwise, 1},
	{"Tile", D_ONNX, f_move, 0},
	{"Transpose", D_ONNX, f_move, 0},
	{"Trilu", D_ONNX, f_move, 0},
	{"Unsqueeze", D_ONNX, f_move, 0},
	{"Upsample", D_ONNX, f_resize, 0},
	{"Where", D_ONNX, f_elementwise, 1},
	{"Xor", D_ONNX, f_elementwise, 1},
};

/* For the unit test: the table is sorted and its names unique per domain. */
bool oxp__cost_table_sorted(void);
bool oxp__cost_table_sorted(void)
{
	for (size_t i = 1; i < sizeof(OPS) / sizeof(OPS[0]); i++) {
		int r = strcmp(OPS[i - 1].name, OPS[i].name);
		if (r > 0 || (r == 0 && (OPS[i - 1].dom & OPS[i].dom)))
			return false;
	}
	return true;
}

static int name_cmp(oxp_str a, const char *b)
{
	size_t n = strlen(b);
	int r = memcmp(a.p, b, a.len < n ? a.len : n);
	if (r != 0)
		return r;
	return a.len < n ? -1 : a.len > n;
}

static const cost_op *find_op(oxp_str domain, oxp_str op)
{
	unsigned dom;
	if (domain.len == 0 || oxp_str_eq(domain, "ai.onnx"))
		dom = D_ONNX;
	else if (oxp_str_eq(domain, "com.microsoft"))
		dom = D_MS;
	else
		return NULL;
	if (op.len == 0)
		return NULL;
	size_t lo = 0, hi = sizeof(OPS) / sizeof(OPS[0]);
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (name_cmp(op, OPS[mid].name) > 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < sizeof(OPS) / sizeof(OPS[0]) && name_cmp(op, OPS[lo].name) == 0; lo++)
		if (OPS[lo].dom & dom)
			return &OPS[lo];
	return NULL;
}

/* ---------------------------------------------------------------------------------------
 * Parameters and bytes
 */
static bool sat_add(uint64_t *a, uint64_t b)
{
	return !__builtin_add_overflow(*a, b, a);
}

static void params_add(oxp_cost_params *a, const oxp_cost_params *b)
{
	if (b->too_large || !sat_add(&a->elements, b->elements) || !sat_add(&a->bytes, b->bytes) ||
	    !sat_add(&a->weights, b->weights) || !sat_add(&a->qbytes, b->qbytes))
		a->too_large = true;
}

/* One constant of node c->n, at its first use (seen): stored elements and bytes; its
 * parameters (params.c, the summary's definition) or, for a scale or zero point, its
 * bytes as qbytes. */
static void constant_params(cc *c, uint32_t vi, uint8_t *seen, oxp_cost_params *out)
{
	if (vi == OXP_NONE || seen[vi])
		return;
	const oxp_value *v = &c->v->values[vi];
	const oxp_tensor *t = oxp_value_constant(c->v, vi);
	if (t == NULL)
		return;
	seen[vi] = 1;
	uint64_t n;
	if (!oxp_dims_count(t->dims, t->ndims, &n)) {
		out->too_large = true;
		return;
	}
	unsigned bits = oxp_dtype_bits(t->data_type);
	uint64_t bytes;
	if (__builtin_mul_overflow(n, (uint64_t)bits, &bytes)) {
		out->too_large = true;
		return;
	}
	bytes = bytes / 8 + (bytes % 8 != 0);
	oxp_cost_params one = {.elements = n, .bytes = bytes};
	if (v->param_role == OXP_PARAM_SCALE)
		one.qbytes = bytes;
	else
		one.weights = v->params;
	params_add(out, &one);
}

/* The constants node ni holds (a Constant's output) or uses first (initializers):
 * counted once, here. */
static void node_params(cc *c, uint8_t *seen, oxp_cost_params *out)
{
	for (size_t k = 0; k < c->n->noutputs; k++)
		constant_params(c, c->dn->outputs[k], seen, out);
	for (size_t k = 0; k < c->n->ninputs; k++) {
		uint32_t vi = c->dn->inputs[k];
		if (vi != OXP_NONE && c->v->values[vi].kind != OXP_VALUE_NODE_OUTPUT)
			constant_params(c, vi, seen, out);
	}
}

/* Bytes of the activations a node reads (inputs that are not initializers) and writes. */
static void node_bytes(cc *c, oxp_cost_node *o)
{
	p_zero(&o->read);
	p_zero(&o->written);
	for (int side = 0; side < 2; side++) {
		size_t n = side ? c->n->noutputs : c->n->ninputs;
		oxp_cost_poly *acc = side ? &o->written : &o->read;
		for (size_t k = 0; k < n; k++) {
			uint32_t vi = side ? out_value(c, k) : in_value(c, k);
			if (vi == OXP_NONE)
				continue;
			const oxp_value *v = &c->v->values[vi];
			if (!side && (v->kind == OXP_VALUE_INITIALIZER ||
			              v->kind == OXP_VALUE_SPARSE_INITIALIZER))
				continue;
			/* a Shape reads no data */
			if (!side && k == 0 && (oxp_str_eq(c->n->op_type, "Shape") ||
			                        oxp_str_eq(c->n->op_type, "Size")))
				continue;
			const oxp_value_type *t = vtype(c, vi);
			oxp_cost_poly e;
			t_numel(c, &e, t);
			unsigned bits = t != NULL ? oxp_dtype_bits(t->elem_type) : 0;
			if (bits == 0)
				p_flag(&e, OXP_COST_UNKNOWN);
			p_bytes(&e, bits);
			p_add(acc, &e);
		}
	}
}

/* ---------------------------------------------------------------------------------------
 * Sums
 */
static void sum_node(oxp_cost_sum *s, const oxp_cost_node *o)
{
	s->nodes++;
	switch (o->kind) {
	case OXP_CK_COUNTED: s->counted++; break;
	case OXP_CK_MOVE: s->moves++; break;
	case OXP_CK_BOOKKEEPING: s->bookkeeping++; break;
	case OXP_CK_UNCOUNTED: s->uncounted++; break;
	case OXP_CK_CONTROL: s->control++; break;
	default: s->calls++; break;
	}
	params_add(&s->params, &o->params);
	if ((o->macs.flags | o->ops.flags) & OXP_COST_UNKNOWN) {
		if (o->kind == OXP_CK_COUNTED || o->kind == OXP_CK_CALL)
			s->unknown++;
	} else {
		p_add(&s->macs, &o->macs);
		p_add(&s->ops, &o->ops);
	}
	/* bytes: a figure nobody knows is left out of the sums too */
	if (!(o->read.flags & OXP_COST_UNKNOWN))
		p_add(&s->read, &o->read);
	if (!(o->written.flags & OXP_COST_UNKNOWN))
		p_add(&s->written, &o->written);
}

static int type_rank_cmp(const void *pa, const void *pb)
{
	const oxp_cost_optype *a = pa, *b = pb;
	double x = oxp_cost_poly_eval(&a->macs, 1), y = oxp_cost_poly_eval(&b->macs, 1);
	x = isnan(x) ? -1 : x;
	y = isnan(y) ? -1 : y;
	if (x != y)
		return x < y ? 1 : -1;
	if (a->count != b->count)
		return a->count < b->count ? 1 : -1;
	return 0;
}

/* ---------------------------------------------------------------------------------------
 * The pass
 */
static oxp_code arena_failed(const oxp_arena *a, oxp_error *err)
{
	if (oxp_arena_code(a) == OXP_E_BUDGET)
		return oxp__set_error(err, OXP_E_BUDGET, 0, "",
		                      "the cost needs more than its memory budget");
	return oxp__set_error(err, OXP_E_NOMEM, 0, "", "out of memory for the cost");
}
oxp_code oxp_cost_compute(const oxp_dag *d, oxp_arena *a, const oxp_cost_bind *dims,
                          const oxp_cost **out, oxp_error *err)
{
	const oxp_dag_view *v = oxp_dag_get(d);
	oxp_cost *c = oxp_arena_alloc(a, sizeof(*c));
	oxp_cost_node *nodes = oxp_arena_array(a, v->nnodes ? v->nnodes : 1, sizeof(*nodes));
	oxp_cost_sum *scopes = oxp_arena_array(a, v->nscopes ? v->nscopes : 1, sizeof(*scopes));
	oxp_str *syms = oxp_arena_array(a, OXP_COST_MAX_SYMBOLS, sizeof(*syms));
	uint8_t *seen = oxp_arena_array(a, v->nvalues ? v->nvalues : 1, 1);
	/* op types: a hash of (domain, op) to the type of each node, then the sums */
	uint32_t cap = 16;
	while (cap < 2 * (uint64_t)v->nnodes && cap < (1u << 31))
		cap <<= 1;
	uint32_t *slot = oxp_arena_array(a, cap, sizeof(*slot));      /* type + 1, 0 empty */
	uint32_t *first = oxp_arena_array(a, v->nnodes ? v->nnodes : 1, sizeof(*first));
	uint32_t *tyof = oxp_arena_array(a, v->nnodes ? v->nnodes : 1, sizeof(*tyof));
	if (c == NULL || nodes == NULL || scopes == NULL || syms == NULL || seen == NULL ||
	    slot == NULL || first == NULL || tyof == NULL)
		return arena_failed(a, err);
	uint32_t ntypes = 0;
	for (uint32_t ni = 0; ni < v->nnodes; ni++) {
		const oxp_node *n = v->nodes[ni].proto;
		uint32_t h = 2166136261u;
		for (size_t k = 0; k < n->op_type.len; k++)
			h = (h ^ (uint8_t)n->op_type.p[k]) * 16777619u;
		h = (h ^ 0xffu) * 16777619u;
		for (size_t k = 0; k < n->domain.len; k++)
			h = (h ^ (uint8_t)n->domain.p[k]) * 16777619u;
		uint32_t i = h & (cap - 1);
		while (slot[i] != 0) {
			const oxp_node *o = v->nodes[first[slot[i] - 1]].proto;
			if (str_same(o->op_type, n->op_type) && str_same(o->domain, n->domain))
				break;
			i = (i + 1) & (cap - 1);
		}
		if (slot[i] == 0) {
			first[ntypes] = ni;
			slot[i] = ++ntypes;
		}
		tyof[ni] = slot[i] - 1;
	}
	oxp_cost_optype *types = oxp_arena_array(a, ntypes ? ntypes : 1, sizeof(*types));
	if (types == NULL)
		return arena_failed(a, err);
	for (uint32_t t = 0; t < ntypes; t++) {
		types[t].op = v->nodes[first[t]].proto->op_type;
		types[t].domain = v->nodes[first[t]].proto->domain;
	}
	cc x = {.d = d, .v = v, .c = c, .bind = dims, .syms = syms};
	if (!oxp_smap_init(&x.symmap, OXP_COST_MAX_SYMBOLS))
		return oxp__set_error(err, OXP_E_NOMEM, 0, "", "out of memory for the cost");
	for (uint32_t ni = 0; ni < v->nnodes; ni++) {
		const oxp_dnode *dn = &v->nodes[ni];
		oxp_cost_node *o = &nodes[ni];
		x.dn = dn;
		x.n = dn->proto;
		const cost_op *op = find_op(x.n->domain, x.n->op_type);
		node_params(&x, seen, &o->params);
		if (dn->bookkeeping) {
			o->kind = OXP_CK_BOOKKEEPING;
			o->family = "bookkeeping";
		} else if (dn->function != OXP_NONE) {
			o->kind = OXP_CK_CALL;
			o->family = "call";
		} else if (dn->nsubscopes > 0) {
			o->kind = OXP_CK_CONTROL;
			o->family = "control";
		} else if (op == NULL) {
			o->kind = OXP_CK_UNCOUNTED;
		} else {
			o->kind = OXP_CK_COUNTED;
			op->fn(&x, o, op->arg);
		}
		if (o->kind == OXP_CK_COUNTED || o->kind == OXP_CK_MOVE)
			node_bytes(&x, o);
		else if (o->kind == OXP_CK_UNCOUNTED) {
			p_flag(&o->macs, OXP_COST_UNKNOWN);
			p_flag(&o->ops, OXP_COST_UNKNOWN);
			node_bytes(&x, o);
		}
		uint32_t ti = tyof[ni];
		if (types[ti].count++ == 0)
			types[ti].kind = o->kind;
		if ((o->macs.flags | o->ops.flags) & OXP_COST_UNKNOWN) {
			types[ti].unknown++;
		} else {
			p_add(&types[ti].macs, &o->macs);
			p_add(&types[ti].ops, &o->ops);
		}
	}
	/* scopes: their own nodes */
	for (uint32_t ni = 0; ni < v->nnodes; ni++)
		if (v->nodes[ni].scope < v->nscopes)
			sum_node(&scopes[v->nodes[ni].scope], &nodes[ni]);
	/* a call costs its function's body (one level: calls inside bodies count as calls) */
	for (uint32_t ni = 0; ni < v->nnodes; ni++) {
		oxp_cost_node *o = &nodes[ni];
		if (o->kind != OXP_CK_CALL)
			continue;
		uint32_t f = v->nodes[ni].function;
		char id[24];
		snprintf(id, sizeof(id), "f%" PRIu32, f);
		for (uint32_t s = 0; s < v->nscopes; s++)
			if (v->scopes[s].kind == OXP_SCOPE_FUNCTION && strcmp(v->scopes[s].id, id) == 0) {
				oxp_cost_sum *b = &scopes[s];
				o->macs = b->macs;
				o->ops = b->ops;
				if (b->unknown)
					p_flag(&o->macs, OXP_COST_UNKNOWN);
				break;
			}
	}
	/* the total: the main graph, calls included */
	oxp_cost_sum total;
	memset(&total, 0, sizeof(total));
	for (uint32_t ni = 0; ni < v->nnodes; ni++)
		if (v->nodes[ni].scope == 0 && v->nscopes > 0 && v->scopes[0].kind == OXP_SCOPE_MAIN)
			sum_node(&total, &nodes[ni]);
	qsort(types, ntypes, sizeof(*types), type_rank_cmp);
	c->nnodes = v->nnodes;
	c->nodes = nodes;
	c->nscopes = v->nscopes;
	c->scopes = scopes;
	c->total = total;
	c->nsymbols = x.nsyms;
	c->symbols = syms;
	c->ntypes = ntypes;
	c->types = types;
	c->symbols_full = x.syms_full;
	oxp_smap_free(&x.symmap);
	*out = c;
	return OXP_OK;
}
