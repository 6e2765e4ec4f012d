/*
 * shape_ops.c — inference rules for tensor, elementwise, reduction and shape-arithmetic
 * ops of the default ONNX domain, and the table of all rules (oxp__sh_find_op).
 *
 * Every rule reads its inputs' best known types (oxp__sh_in), never trusts attributes
 * (wrong type, wrong length, out of range -> unknown), and writes what it can decide;
 * the rest stays unknown.  Rules that move small integer tensors (Shape, Gather, Concat,
 * Unsqueeze, arithmetic, ...) also propagate their values (sh_vals), which is how
 * Reshape/Expand/Slice/Tile/... with shapes computed at run time get inferred.
 */
#include "parser/shape.h"

#include <float.h>
#include <math.h>
#include <string.h>

static oxp_code out0(sh_ctx *c, const sh_type *t)
{
	return oxp__sh_out(c, 0, t);
}

/* Elem types whose values are tracked (shape arithmetic). */
static bool int_elem(int32_t e)
{
	return e == OXP_DT_INT64 || e == OXP_DT_INT32 || e == OXP_DT_INT16 || e == OXP_DT_INT8 ||
	       e == OXP_DT_UINT8 || e == OXP_DT_UINT16 || e == OXP_DT_UINT32 ||
	       e == OXP_DT_UINT64 || e == OXP_DT_BOOL;
}

static sh_vals *vals_scalar(sh_vals *v, oxp_dim d)
{
	v->rank = 0;
	v->n = 1;
	v->v[0] = d;
	return v;
}

/* A list argument given either as an INTS attribute (from_attr) or as input `idx` whose
 * values are known.  SH_ABSENT when not given, SH_BAD when given but not usable. */
static int list_arg(sh_ctx *c, bool from_attr, const char *name, size_t idx, int64_t *out,
                    size_t cap, size_t *n)
{
	if (from_attr) {
		const int64_t *v;
		size_t k;
		int st = oxp__sh_attr_ints(c, name, &v, &k);
		if (st != SH_OK)
			return st;
		if (k > cap)
			return SH_BAD;
		if (k > 0)
			memcpy(out, v, k * sizeof(int64_t));
		*n = k;
		return SH_OK;
	}
	if (!oxp__sh_has_in(c, idx))
		return SH_ABSENT;
	return oxp__sh_in_ints(c, idx, out, cap, n) ? SH_OK : SH_BAD;
}

/* ---------------------------------------------------------------------------------------
 * Same type and shape as input 0
 */
static oxp_code r_identity(sh_ctx *c)
{
	SH_TRY(oxp__sh_rule_same(c));
	sh_vals v;
	sh_type s;
	bool empty;
	if (oxp__sh_in_vals(c, 0, &v))
		SH_TRY(oxp__sh_out_vals(c, 0, &v));
	if (oxp__sh_in_seq(c, 0, &s, &empty))
		SH_TRY(oxp__sh_out_seq(c, 0, &s, empty));
	return OXP_OK;
}

static oxp_code r_bool_same(sh_ctx *c) /* IsNaN, IsInf */
{
	sh_type t;
	oxp__sh_in(c, 0, &t);
	t.elem = OXP_DT_BOOL;
	return out0(c, &t);
}

/* Same shape as input 0, elem type from `dtype` when given. */
static oxp_code r_dtype_like(sh_ctx *c)
{
	sh_type t;
	oxp__sh_in(c, 0, &t);
	int64_t dt;
	int st = oxp__sh_attr_int(c, "dtype", &dt);
	if (st == SH_OK)
		t.elem = dt > 0 && dt < OXP_DT__COUNT ? (int32_t)dt : 0;
	else if (st == SH_BAD)
		t.elem = 0;
	return out0(c, &t);
}

static oxp_code r_eyelike(sh_ctx *c)
{
	sh_type t;
	oxp__sh_in(c, 0, &t);
	if (t.rank != 2)
		t.rank = -1;
	int64_t dt;
	int st = oxp__sh_attr_int(c, "dtype", &dt);
	if (st == SH_OK)
		t.elem = dt > 0 && dt < OXP_DT__COUNT ? (int32_t)dt : 0;
	else if (st == SH_BAD)
		t.elem = 0;
	return out0(c, &t);
}

/* ---------------------------------------------------------------------------------------
 * Small-integer arithmetic on values (data propagation)
 */
enum { OPV_ADD, OPV_SUB, OPV_MUL, OPV_DIV, OPV_MOD, OPV_EQ, OPV_MAX, OPV_MIN, OPV_LT,
       OPV_GT, OPV_AND, OPV_OR };

static oxp_dim val_op(int op, oxp_dim a, oxp_dim b)
{
	bool ka = a.kind == OXP_DIM_VALUE, kb = b.kind == OXP_DIM_VALUE;
	int64_t r;
	if (ka && kb) {
		int64_t x = a.value, y = b.value;
		switch (op) {
		case OPV_ADD:
			return oxp__sh_add(x, y, &r) ? sh_dim_val(r) : sh_dim_unk();
		case OPV_SUB:
			return !__builtin_sub_overflow(x, y, &r) ? sh_dim_val(r) : sh_dim_unk();
		case OPV_MUL:
			return oxp__sh_mul(x, y, &r) ? sh_dim_val(r) : sh_dim_unk();
		case OPV_DIV:
			/* exact, or both non-negative: the same under every rounding rule */
			if (y == 0 || (x == INT64_MIN && y == -1))
				return sh_dim_unk();
			if (x % y == 0 || (x >= 0 && y > 0))
				return sh_dim_val(x / y);
			return sh_dim_unk();
		case OPV_MOD:
			if (x >= 0 && y > 0)
				return sh_dim_val(x % y);
			return sh_dim_unk();
		case OPV_EQ:
			return sh_dim_val(x == y);
		case OPV_MAX:
			return sh_dim_val(x > y ? x : y);
		case OPV_MIN:
			return sh_dim_val(x < y ? x : y);
		case OPV_LT:
			return sh_dim_val(x < y);
		case OPV_GT:
			return sh_dim_val(x > y);
		case OPV_AND:
			return sh_dim_val(x != 0 && y != 0);
		case OPV_OR:
			return sh_dim_val(x != 0 || y != 0);
		default:
			return sh_dim_unk();
		}
	}
	bool same_sym = a.kind == OXP_DIM_PARAM && oxp__sh_dim_eq(a, b);
	/* a symbol is a size: never negative */
	bool sym_neg = (a.kind == OXP_DIM_PARAM && kb && b.value < 0) ||
	               (b.kind == OXP_DIM_PARAM && ka && a.value < 0);
	switch (op) {
	case OPV_ADD:
		return sh_is(b, 0) ? a : sh_is(a, 0) ? b : sh_dim_unk();
	case OPV_SUB:
		return sh_is(b, 0) ? a : same_sym ? sh_dim_val(0) : sh_dim_unk();
	case OPV_MUL:
		if (sh_is(a, 0) || sh_is(b, 0))
			return sh_dim_val(0);
		return sh_is(b, 1) ? a : sh_is(a, 1) ? b : sh_dim_unk();
	case OPV_DIV:
		return sh_is(b, 1) ? a : sh_dim_unk();
	case OPV_EQ:
		return same_sym ? sh_dim_val(1) : sym_neg ? sh_dim_val(0) : sh_dim_unk();
	case OPV_MAX:
	case OPV_MIN:
		return same_sym ? a : sh_dim_unk();
	default:
		return sh_dim_unk();
	}
}

/* out = a (op) b for vals of rank <= 1 with numpy broadcasting; false when undecidable. */
static bool vals_binary(int op, const sh_vals *a, const sh_vals *b, sh_vals *out)
{
	uint32_t n;
	if (a->n == b->n)
		n = a->n;
	else if (a->n == 1)
		n = b->n;
	else if (b->n == 1)
		n = a->n;
	else
		return false;
	out->rank = a->rank > b->rank ? a->rank : b->rank;
	if (out->rank == 0 && n != 1)
		return false;
	out->n = n;
	for (uint32_t k = 0; k < n; k++)
		out->v[k] = val_op(op, a->v[a->n == 1 ? 0 : k], b->v[b->n == 1 ? 0 : k]);
	return true;
}

static oxp_code binary_vals(sh_ctx *c, int op)
{
	sh_vals a, b, o;
	if (oxp__sh_in_vals(c, 0, &a) && oxp__sh_in_vals(c, 1, &b) && vals_binary(op, &a, &b, &o))
		SH_TRY(oxp__sh_out_vals(c, 0, &o));
	return OXP_OK;
}

/* ---------------------------------------------------------------------------------------
 * Broadcasting ops
 */

/* Two-input elementwise op.  elem 0: the output has input 0's elem type.  Before opset 7
 * these ops broadcast B onto A only (the `broadcast`/`axis` attributes): the result has
 * A's shape. */
static oxp_code binary(sh_ctx *c, int32_t elem, bool legacy)
{
	sh_type a, b;
	oxp__sh_in(c, 0, &a);
	oxp__sh_in(c, 1, &b);
	int32_t e = elem != 0 ? elem : (a.elem != 0 ? a.elem : b.elem);
	if (c->opset == 0)
		a.rank = -1;
	else if (!legacy || !sh_before(c, 7))
		oxp__sh_broadcast(&a, &a, &b);
	a.elem = e;
	return out0(c, &a);
}

/* Two-input elementwise ops: output elem type (0: input 0's), whether the op had the
 * legacy broadcast before opset 7, and the value arithmetic (-1: none). */
static const struct arith {
	const char *name;
	int32_t elem;
	bool legacy;
	int opv;
} ariths[] = {
    {"Add", 0, true, OPV_ADD},
    {"And", OXP_DT_BOOL, true, OPV_AND},
    {"BitShift", 0, false, -1},
    {"BitwiseAnd", 0, false, -1},
    {"BitwiseOr", 0, false, -1},
    {"BitwiseXor", 0, false, -1},
    {"Div", 0, true, OPV_DIV},
    {"Equal", OXP_DT_BOOL, true, OPV_EQ},
    {"Greater", OXP_DT_BOOL, true, OPV_GT},
    {"GreaterOrEqual", OXP_DT_BOOL, false, -1},
    {"Less", OXP_DT_BOOL, true, OPV_LT},
    {"LessOrEqual", OXP_DT_BOOL, false, -1},
    {"Mod", 0, false, OPV_MOD},
    {"Mul", 0, true, OPV_MUL},
    {"Or", OXP_DT_BOOL, true, OPV_OR},
    {"Pow", 0, true, -1},
    {"Sub", 0, true, OPV_SUB},
    {"Xor", OXP_DT_BOOL, true, -1},
};

static oxp_code r_arith(sh_ctx *c)
{
	for (size_t k = 0; k < sizeof(ariths) / sizeof(ariths[0]); k++) {
		const struct arith *a = &ariths[k];
		if (!oxp_str_eq(c->node->op_type, a->name))
			continue;
		SH_TRY(binary(c, a->elem, a->legacy));
		return a->opv >= 0 ? binary_vals(c, a->opv) : OXP_OK;
	}
	return OXP_OK;
}

static oxp_code r_prelu(sh_ctx *c)
{
	/* opset >= 7: slope broadcasts onto X; the output has X's shape */
	return oxp__sh_rule_same(c);
}

/* Max, Min, Sum, Mean: before opset 8 all inputs have one shape; then numpy broadcast. */
static oxp_code r_variadic(sh_ctx *c)
{
	sh_type acc, t;
	size_t n = oxp__sh_nin(c);
	bool first = true, same = sh_before(c, 8);
	oxp__sh_type_unknown(&acc);
	if (c->opset == 0)
		return OXP_OK;
	for (size_t i = 0; i < n; i++) {
		if (!oxp__sh_in(c, i, &t))
			continue;
		if (first) {
			acc = t;
			first = false;
			continue;
		}
		if (acc.elem == 0)
			acc.elem = t.elem;
		if (!same) {
			oxp__sh_broadcast(&acc, &acc, &t);
		} else if (acc.rank < 0) {
			acc.rank = t.rank;
			memcpy(acc.d, t.d, (size_t)(t.rank > 0 ? t.rank : 0) * sizeof(oxp_dim));
		} else if (t.rank >= 0) {
			if (t.rank != acc.rank)
				acc.rank = -1;
			for (int32_t k = 0; k < acc.rank; k++)
				acc.d[k] = oxp__sh_dim_merge(acc.d[k], t.d[k]);
		}
	}
	SH_TRY(out0(c, &acc));
	int op = oxp_str_eq(c->node->op_type, "Max") ? OPV_MAX
	         : oxp_str_eq(c->node->op_type, "Min") ? OPV_MIN
	         : oxp_str_eq(c->node->op_type, "Sum") ? OPV_ADD
	                                               : -1;
	sh_vals va, vb, o;
	if (op < 0 || n == 0 || !oxp__sh_in_vals(c, 0, &va))
		return OXP_OK;
	for (size_t i = 1; i < n; i++) {
		if (!oxp__sh_in_vals(c, i, &vb) || !vals_binary(op, &va, &vb, &o))
			return OXP_OK;
		va = o;
	}
	return oxp__sh_out_vals(c, 0, &va);
}

static oxp_code r_where(sh_ctx *c)
{
	sh_type cond, x, y;
	oxp__sh_in(c, 0, &cond);
	oxp__sh_in(c, 1, &x);
	oxp__sh_in(c, 2, &y);
	int32_t e = x.elem != 0 ? x.elem : y.elem;
	oxp__sh_broadcast(&x, &x, &y);
	oxp__sh_broadcast(&x, &cond, &x);
	x.elem = e;
	SH_TRY(out0(c, &x));
	sh_vals vc, vx, vy, o;
	if (!oxp__sh_in_vals(c, 0, &vc) || !oxp__sh_in_vals(c, 1, &vx) ||
	    !oxp__sh_in_vals(c, 2, &vy))
		return OXP_OK;
	/* broadcast the three to one length */
	uint32_t n = 1;
	const sh_vals *all[3] = {&vc, &vx, &vy};
	o.rank = 0;
	for (int k = 0; k < 3; k++) {
		if (all[k]->n != 1) {
			if (n != 1 && n != all[k]->n)
				return OXP_OK;
			n = all[k]->n;
		}
		if (all[k]->rank > o.rank)
			o.rank = all[k]->rank;
	}
	o.n = n;
	for (uint32_t k = 0; k < n; k++) {
		oxp_dim cd = vc.v[vc.n == 1 ? 0 : k];
		if (cd.kind != OXP_DIM_VALUE)
			return OXP_OK;
		o.v[k] = cd.value != 0 ? vx.v[vx.n == 1 ? 0 : k] : vy.v[vy.n == 1 ? 0 : k];
	}
	return oxp__sh_out_vals(c, 0, &o);
}

/* Dims from a shape tensor's values; a negative size makes every dim unknown (the model
 * is wrong) and returns false. */
static bool dims_from_vals(sh_type *t, const sh_vals *v)
{
	bool neg = false;
	t->rank = (int32_t)v->n;
	for (uint32_t k = 0; k < v->n; k++)
		neg = neg || (v->v[k].kind == OXP_DIM_VALUE && v->v[k].value < 0);
	for (uint32_t k = 0; k < v->n; k++)
		t->d[k] = neg ? sh_dim_unk() : v->v[k];
	return !neg;
}

/* Expand: input 0 broadcast with the shape given by input 1's values. */
static oxp_code r_expand(sh_ctx *c)
{
	sh_type x, s, tgt;
	sh_vals v;
	oxp__sh_in(c, 0, &x);
	oxp__sh_in(c, 1, &s);
	tgt.elem = x.elem;
	if (oxp__sh_in_vals(c, 1, &v) && v.rank == 1 && v.n <= SH_MAX_RANK) {
		if (dims_from_vals(&tgt, &v))
			oxp__sh_broadcast(&tgt, &x, &tgt);
		else
			tgt.rank = -1; /* a negative size: the model is wrong */
	} else if (s.rank == 1 && sh_known(s.d[0]) && s.d[0].value <= SH_MAX_RANK && x.rank >= 0) {
		/* only the length of the shape is known */
		int32_t n = (int32_t)s.d[0].value;
		tgt.rank = n > x.rank ? n : x.rank;
		for (int32_t k = 0; k < tgt.rank; k++) {
			int32_t ix = x.rank - tgt.rank + k;
			/* a dim of x other than 1 survives: the target dim is 1 or the same */
			tgt.d[k] = ix >= 0 && sh_known(x.d[ix]) && x.d[ix].value != 1 ? x.d[ix]
			                                                               : sh_dim_unk();
		}
	} else {
		tgt.rank = -1;
	}
	return out0(c, &tgt);
}

/* ---------------------------------------------------------------------------------------
 * Types and constants
 */
static oxp_code cast_to(sh_ctx *c, int32_t to)
{
	sh_type t;
	oxp__sh_in(c, 0, &t);
	t.elem = to > 0 && to < OXP_DT__COUNT ? to : 0;
	SH_TRY(out0(c, &t));
	sh_vals v;
	if (!int_elem(t.elem) || !oxp__sh_in_vals(c, 0, &v))
		return OXP_OK;
	/* values survive a cast between integer types when they fit the narrower one */
	for (uint32_t k = 0; k < v.n; k++) {
		oxp_dim *d = &v.v[k];
		if (to == OXP_DT_BOOL) {
			if (d->kind == OXP_DIM_VALUE)
				*d = sh_dim_val(d->value != 0);
			else
				*d = sh_dim_unk();
		} else if (to != OXP_DT_INT64 && to != OXP_DT_INT32) {
			if (d->kind != OXP_DIM_VALUE || d->value < 0 || d->value > 127)
				*d = sh_dim_unk();
		} else if (to == OXP_DT_INT32 && d->kind == OXP_DIM_VALUE &&
		           (d->value < INT32_MIN || d->value > INT32_MAX)) {
			*d = sh_dim_unk();
		}
	}
	return oxp__sh_out_vals(c, 0, &v);
}

static oxp_code r_cast(sh_ctx *c)
{
	int64_t to;
	if (oxp__sh_attr_int(c, "to", &to) != SH_OK) {
		/* Cast-1 gave `to` as a string; not decided here */
		sh_type t;
		oxp__sh_in(c, 0, &t);
		t.elem = 0;
		return out0(c, &t);
	}
	return cast_to(c, to > 0 && to < OXP_DT__COUNT ? (int32_t)to : 0);
}

static oxp_code r_castlike(sh_ctx *c)
{
	sh_type like;
	oxp__sh_in(c, 1, &like);
	return cast_to(c, like.elem);
}

static oxp_code r_constant(sh_ctx *c)
{
	sh_type t;
	sh_vals v;
	bool hv = false;
	oxp__sh_type_unknown(&t);
	const oxp_node *n = c->node;
	if (n->nattrs == 0)
		return OXP_OK;
	const oxp_attr *a = &n->attrs[0];
	if (a->ref_attr_name.len > 0)
		return OXP_OK;
	if (oxp_str_eq(a->name, "value") && a->type == OXP_ATTR_TENSOR && a->t != NULL) {
		t.elem = a->t->data_type;
		if (a->t->ndims <= SH_MAX_RANK) {
			t.rank = (int32_t)a->t->ndims;
			for (size_t k = 0; k < a->t->ndims; k++)
				t.d[k] = sh_dim_val(a->t->dims[k]);
		}
		hv = oxp__sh_tensor_vals(a->t, &v);
	} else if (oxp_str_eq(a->name, "sparse_value") && a->type == OXP_ATTR_SPARSE_TENSOR &&
	           a->sparse_tensor != NULL) {
		const oxp_sparse_tensor *sp = a->sparse_tensor;
		t.elem = sp->values ? sp->values->data_type : 0;
		if (sp->ndims <= SH_MAX_RANK) {
			t.rank = (int32_t)sp->ndims;
			for (size_t k = 0; k < sp->ndims; k++)
				t.d[k] = sh_dim_val(sp->dims[k]);
		}
	} else if (oxp_str_eq(a->name, "value_float") && a->type == OXP_ATTR_FLOAT) {
		t.elem = OXP_DT_FLOAT;
		t.rank = 0;
	} else if (oxp_str_eq(a->name, "value_floats") && a->type == OXP_ATTR_FLOATS) {
		t.elem = OXP_DT_FLOAT;
		t.rank = 1;
		t.d[0] = sh_dim_val((int64_t)a->nfloats);
	} else if (oxp_str_eq(a->name, "value_int") && a->type == OXP_ATTR_INT) {
		t.elem = OXP_DT_INT64;
		t.rank = 0;
		vals_scalar(&v, sh_dim_val(a->i));
		hv = true;
	} else if (oxp_str_eq(a->name, "value_ints") && a->type == OXP_ATTR_INTS) {
		t.elem = OXP_DT_INT64;
		t.rank = 1;
		t.d[0] = sh_dim_val((int64_t)a->nints);
		if (a->nints <= SH_MAX_DATA) {
			v.rank = 1;
			v.n = (uint32_t)a->nints;
			for (size_t k = 0; k < a->nints; k++)
				v.v[k] = sh_dim_val(a->ints[k]);
			hv = true;
		}
	} else if (oxp_str_eq(a->name, "value_string") && a->type == OXP_ATTR_STRING) {
		t.elem = OXP_DT_STRING;
		t.rank = 0;
	} else if (oxp_str_eq(a->name, "value_strings") && a->type == OXP_ATTR_STRINGS) {
		t.elem = OXP_DT_STRING;
		t.rank = 1;
		t.d[0] = sh_dim_val((int64_t)a->nstrings);
	}
	SH_TRY(out0(c, &t));
	if (hv)
		SH_TRY(oxp__sh_out_vals(c, 0, &v));
	return OXP_OK;
}

/* The rank a 1-D shape tensor describes, from its type: -1 when unknown. */
static int32_t shape_len(const sh_type *s)
{
	if (s->rank == 1 && sh_known(s->d[0]) && s->d[0].value <= SH_MAX_RANK)
		return (int32_t)s->d[0].value;
	return -1;
}

static oxp_code r_constant_of_shape(sh_ctx *c)
{
	sh_type t, s;
	sh_vals v;
	int st;
	t.elem = OXP_DT_FLOAT;
	const oxp_attr *a = oxp__sh_attr(c, "value", &st);
	const oxp_tensor *val = NULL;
	if (st == SH_OK && a->type == OXP_ATTR_TENSOR && a->t != NULL) {
		val = a->t;
		t.elem = a->t->data_type;
	} else if (st != SH_ABSENT) {
		t.elem = 0;
	}
	oxp__sh_in(c, 0, &s);
	if (oxp__sh_in_vals(c, 0, &v) && v.rank == 1 && v.n <= SH_MAX_RANK)
		dims_from_vals(&t, &v);
	else if ((t.rank = shape_len(&s)) > 0)
		for (int32_t k = 0; k < t.rank; k++)
			t.d[k] = sh_dim_unk();
	SH_TRY(out0(c, &t));
	/* small integer fills carry their values */
	sh_vals fill, o;
	if (t.rank < 0 || t.rank > 1 || !int_elem(t.elem))
		return OXP_OK;
	if (val == NULL)
		vals_scalar(&fill, sh_dim_val(0));
	else if (!oxp__sh_tensor_vals(val, &fill) || fill.n != 1)
		return OXP_OK;
	uint64_t n = 1;
	if (t.rank == 1) {
		if (!sh_known(t.d[0]) || t.d[0].value > SH_MAX_DATA)
			return OXP_OK;
		n = (uint64_t)t.d[0].value;
	}
	o.rank = t.rank;
	o.n = (uint32_t)n;
	for (uint64_t k = 0; k < n; k++)
		o.v[k] = fill.v[0];
	return oxp__sh_out_vals(c, 0, &o);
}

/* ---------------------------------------------------------------------------------------
 * Shape, Size
 */
static oxp_code r_shape(sh_ctx *c)
{
	sh_type x, t;
	oxp__sh_in(c, 0, &x);
	int64_t start = 0, end = x.rank;
	bool ok = true;
	t.elem = OXP_DT_INT64;
	t.rank = 1;
	t.d[0] = sh_dim_unk();
	if (!sh_before(c, 15)) {
		int st1 = oxp__sh_attr_int(c, "start", &start);
		int st2 = oxp__sh_attr_int(c, "end", &end);
		if (st1 == SH_BAD || st2 == SH_BAD)
			ok = false;
		if (st1 == SH_ABSENT)
			start = 0;
		if (st2 == SH_ABSENT)
			end = x.rank;
		if (x.rank < 0 && (st1 != SH_ABSENT || st2 != SH_ABSENT))
			ok = false;
	}
	if (x.rank < 0 || !ok)
		return out0(c, &t);
	int64_t r = x.rank;
	if (start < 0)
		start = start < -r ? 0 : start + r;
	if (end < 0)
		end = end < -r ? 0 : end + r;
	start = start > r ? r : start;
	end = end > r ? r : end;
	if (end < start)
		end = start;
	t.d[0] = sh_dim_val(end - start);
	SH_TRY(out0(c, &t));
	sh_vals v;
	v.rank = 1;
	v.n = (uint32_t)(end - start);
	for (int64_t k = start; k < end; k++)
		v.v[k - start] = x.d[k];
	return oxp__sh_out_vals(c, 0, &v);
}

static oxp_code r_size(sh_ctx *c)
{
	sh_type x, t;
	oxp__sh_in(c, 0, &x);
	t.elem = OXP_DT_INT64;
	t.rank = 0;
	SH_TRY(out0(c, &t));
	if (x.rank < 0)
		return OXP_OK;
	oxp_dim p = sh_dim_val(1);
	for (int32_t k = 0; k < x.rank; k++)
		p = oxp__sh_dim_mul(p, x.d[k]);
	sh_vals v;
	if (p.kind == OXP_DIM_UNKNOWN)
		return OXP_OK;
	return oxp__sh_out_vals(c, 0, vals_scalar(&v, p));
}

/* ---------------------------------------------------------------------------------------
 * Reshape, Flatten, Squeeze, Unsqueeze, Transpose
 */

/* The element counts of two shapes compared: known sizes multiplied (pin, pout), symbols
 * cancelled by name; what is left of the symbols on each side.  false when a dim is
 * unknown or a product overflows.  Dim `skip` of out is left out. */
typedef struct prods {
	int64_t pin, pout;
	int32_t nleft_in, nleft_out;
	int32_t left_in; /* one leftover symbol of in, when nleft_in > 0 */
} prods;

static bool products(const sh_type *in, const sh_type *out, int32_t skip, prods *p)
{
	bool used[SH_MAX_RANK] = {false};
	p->pin = p->pout = 1;
	p->nleft_in = p->nleft_out = 0;
	p->left_in = -1;
	for (int32_t k = 0; k < in->rank; k++) {
		if (in->d[k].kind == OXP_DIM_UNKNOWN)
			return false;
		if (in->d[k].kind == OXP_DIM_VALUE && !oxp__sh_mul(p->pin, in->d[k].value, &p->pin))
			return false;
	}
	for (int32_t k = 0; k < out->rank; k++) {
		oxp_dim d = out->d[k];
		if (k == skip)
			continue;
		if (d.kind == OXP_DIM_UNKNOWN)
			return false;
		if (d.kind == OXP_DIM_VALUE) {
			if (!oxp__sh_mul(p->pout, d.value, &p->pout))
				return false;
			continue;
		}
		int32_t m = 0;
		while (m < in->rank && (used[m] || !oxp__sh_dim_eq(in->d[m], d)))
			m++;
		if (m == in->rank)
			p->nleft_out++;
		else
			used[m] = true;
	}
	for (int32_t k = 0; k < in->rank; k++)
		if (in->d[k].kind == OXP_DIM_PARAM && !used[k]) {
			p->left_in = k;
			p->nleft_in++;
		}
	return true;
}

/* The size of the one "-1" dim of a Reshape: the product of the input dims divided by the
 * product of the other output dims, symbols cancelling by name; unknown when undecidable. */
static oxp_dim solve_hole(const sh_type *in, const sh_type *out, int32_t hole)
{
	prods p;
	if (!products(in, out, hole, &p) || p.nleft_out > 0 || p.pout <= 0 || p.pin <= 0)
		return sh_dim_unk();
	if (p.nleft_in == 0)
		return p.pin % p.pout == 0 ? sh_dim_val(p.pin / p.pout) : sh_dim_unk();
	if (p.nleft_in == 1 && p.pin == p.pout)
		return in->d[p.left_in];
	return sh_dim_unk();
}

/* Whether two shapes certainly hold different element counts, or b's known sizes alone
 * are more elements than any tensor can hold. */
static bool counts_differ(const sh_type *a, const sh_type *b)
{
	prods p;
	int64_t n = 1;
	for (int32_t k = 0; k < b->rank; k++)
		if (sh_known(b->d[k]) && !oxp__sh_mul(n, b->d[k].value, &n))
			return true;
	return a->rank >= 0 && b->rank >= 0 && products(a, b, -1, &p) && p.nleft_in == 0 &&
	       p.nleft_out == 0 && p.pin != p.pout;
}

static oxp_code r_reshape(sh_ctx *c)
{
	sh_type x, s, t;
	sh_vals v;
	oxp__sh_in(c, 0, &x);
	t.elem = x.elem;
	t.rank = -1;
	bool have = false;
	if (c->opset == 0) {
		return out0(c, &t);
	} else if (sh_before(c, 5)) {
		const int64_t *sv;
		size_t n;
		if (oxp__sh_attr_ints(c, "shape", &sv, &n) == SH_OK && n <= SH_MAX_RANK) {
			v.rank = 1;
			v.n = (uint32_t)n;
			for (size_t k = 0; k < n; k++)
				v.v[k] = sh_dim_val(sv[k]);
			have = true;
		}
	} else {
		have = oxp__sh_in_vals(c, 1, &v) && v.rank == 1 && v.n <= SH_MAX_RANK;
	}
	int64_t allowzero = 0;
	if (!sh_before(c, 14) && !oxp__sh_attr_int_or(c, "allowzero", 0, &allowzero))
		have = false;
	if (!have) {
		oxp__sh_in(c, 1, &s);
		if (!sh_before(c, 5) && (t.rank = shape_len(&s)) > 0)
			for (int32_t k = 0; k < t.rank; k++)
				t.d[k] = sh_dim_unk();
		return out0(c, &t);
	}
	t.rank = (int32_t)v.n;
	int32_t hole = -1;
	bool bad = false;
	for (uint32_t k = 0; k < v.n; k++) {
		oxp_dim e = v.v[k];
		t.d[k] = sh_dim_unk();
		if (e.kind == OXP_DIM_PARAM) {
			t.d[k] = e;
		} else if (e.kind == OXP_DIM_UNKNOWN) {
			bad = true; /* could be -1 or 0: no hole can be solved */
		} else if (e.value == -1) {
			if (hole >= 0)
				return out0(c, &t); /* two -1: invalid */
			hole = (int32_t)k;
		} else if (e.value == 0 && allowzero == 0) {
			if (x.rank >= 0 && (int32_t)k < x.rank)
				t.d[k] = x.d[k];
			else if (x.rank >= 0)
				bad = true; /* copies a dim the input does not have: invalid */
		} else if (e.value >= 0) {
			t.d[k] = e;
		} else {
			bad = true;
		}
	}
	if (hole >= 0 && !bad && x.rank >= 0)
		t.d[hole] = solve_hole(&x, &t, hole);
	if (counts_differ(&x, &t)) /* the model is wrong: no dim can be trusted */
		for (int32_t k = 0; k < t.rank; k++)
			t.d[k] = sh_dim_unk();
	SH_TRY(out0(c, &t));
	/* small data keeps its values: a vector or a matrix reshaped to rank <= 1, or to a
	 * matrix of known dims */
	sh_vals xv;
	uint32_t cols;
	if (!oxp__sh_in_vals(c, 0, &xv) && !oxp__sh_in_matrix(c, 0, &xv, &cols))
		return OXP_OK;
	if (t.rank <= 1 && (t.rank == 0 ? xv.n == 1 : sh_is(t.d[0], (int64_t)xv.n))) {
		xv.rank = t.rank;
		SH_TRY(oxp__sh_out_vals(c, 0, &xv));
	} else if (t.rank == 2 && sh_known(t.d[0]) && sh_known(t.d[1]) && t.d[1].value > 0 &&
	           t.d[1].value <= SH_MAX_DATA && t.d[0].value <= SH_MAX_DATA &&
	           t.d[0].value * t.d[1].value == (int64_t)xv.n) {
		xv.rank = 2;
		SH_TRY(oxp__sh_out_matrix(c, 0, &xv, (uint32_t)t.d[1].value));
	}
	return OXP_OK;
}

static oxp_code r_flatten(sh_ctx *c)
{
	sh_type x, t;
	oxp__sh_in(c, 0, &x);
	t.elem = x.elem;
	t.rank = -1;
	int64_t axis;
	if (x.rank < 0 || !oxp__sh_attr_int_or(c, "axis", 1, &axis) ||
	    axis < -(int64_t)x.rank || axis > x.rank)
		return out0(c, &t);
	if (axis < 0)
		axis += x.rank;
	oxp_dim a = sh_dim_val(1), b = sh_dim_val(1);
	for (int32_t k = 0; k < x.rank; k++) {
		if (k < axis)
			a = oxp__sh_dim_mul(a, x.d[k]);
		else
			b = oxp__sh_dim_mul(b, x.d[k]);
	}
	t.rank = 2;
	t.d[0] = a;
	t.d[1] = b;
	return out0(c, &t);
}

/* Squeeze, Unsqueeze: x, t = x's elem type with an unknown shape, and the axes (an
 * attribute before opset 13, then input 1).  Returns the axes' status. */
static int squeeze_args(sh_ctx *c, sh_type *x, sh_type *t, int64_t *axes, size_t *n)
{
	oxp__sh_in(c, 0, x);
	t->elem = x->elem;
	t->rank = -1;
	*n = 0;
	if (c->opset == 0)
		return SH_BAD;
	return list_arg(c, sh_before(c, 13), "axes", 1, axes, SH_MAX_RANK, n);
}

static oxp_code r_squeeze(sh_ctx *c)
{
	sh_type x, t;
	int64_t axes[SH_MAX_RANK];
	int32_t ax[SH_MAX_RANK];
	size_t n;
	int st = squeeze_args(c, &x, &t, axes, &n);
	if (st == SH_BAD || x.rank < 0)
		return out0(c, &t);
	bool drop[SH_MAX_RANK] = {false};
	if (st == SH_ABSENT || n == 0) { /* runtimes read empty axes as none given */
		/* every dim of size 1; any dim not known could be 1 */
		for (int32_t k = 0; k < x.rank; k++) {
			if (!sh_known(x.d[k]))
				return out0(c, &t);
			drop[k] = x.d[k].value == 1;
		}
	} else {
		if (!oxp__sh_norm_axes(axes, n, x.rank, ax))
			return out0(c, &t);
		for (size_t k = 0; k < n; k++) {
			if (sh_known(x.d[ax[k]]) && x.d[ax[k]].value != 1)
				return out0(c, &t); /* squeezing a dim that is not 1: invalid */
			drop[ax[k]] = true;
		}
	}
	t.rank = 0;
	for (int32_t k = 0; k < x.rank; k++)
		if (!drop[k])
			t.d[t.rank++] = x.d[k];
	SH_TRY(out0(c, &t));
	sh_vals v;
	if (t.rank == 0 && oxp__sh_in_vals(c, 0, &v) && v.n == 1) {
		v.rank = 0;
		SH_TRY(oxp__sh_out_vals(c, 0, &v));
	}
	return OXP_OK;
}

static oxp_code r_unsqueeze(sh_ctx *c)
{
	sh_type x, t;
	int64_t axes[SH_MAX_RANK];
	int32_t ax[SH_MAX_RANK];
	size_t n;
	int st = squeeze_args(c, &x, &t, axes, &n);
	if (st != SH_OK || x.rank < 0 || (size_t)x.rank + n > SH_MAX_RANK)
		return out0(c, &t);
	int32_t r = x.rank + (int32_t)n;
	if (!oxp__sh_norm_axes(axes, n, r, ax))
		return out0(c, &t);
	bool ins[SH_MAX_RANK] = {false};
	for (size_t k = 0; k < n; k++)
		ins[ax[k]] = true;
	int32_t j = 0;
	for (int32_t k = 0; k < r; k++)
		t.d[k] = ins[k] ? sh_dim_val(1) : x.d[j++];
	t.rank = r;
	SH_TRY(out0(c, &t));
	sh_vals v;
	if (r == 1 && oxp__sh_in_vals(c, 0, &v) && v.rank == 0) {
		v.rank = 1;
		SH_TRY(oxp__sh_out_vals(c, 0, &v));
	}
	return OXP_OK;
}

static oxp_code r_transpose(sh_ctx *c)
{
	sh_type x, t;
	oxp__sh_in(c, 0, &x);
	t.elem = x.elem;
	t.rank = -1;
	const int64_t *perm;
	size_t n;
	int st = oxp__sh_attr_ints(c, "perm", &perm, &n);
	if (x.rank < 0 || st == SH_BAD || (st == SH_OK && n != (size_t)x.rank))
		return out0(c, &t);
	bool seen[SH_MAX_RANK] = {false};
	for (int32_t k = 0; k < x.rank; k++) {
		int64_t p = st == SH_OK ? perm[k] : x.rank - 1 - k;
		if (p < 0 || p >= x.rank || seen[p])
			return out0(c, &t);
		seen[p] = true;
		t.d[k] = x.d[p];
	}
	t.rank = x.rank;
	SH_TRY(out0(c, &t));
	/* a small matrix, transposed */
	sh_vals m, o;
	uint32_t cols;
	if (x.rank != 2 || !oxp__sh_in_matrix(c, 0, &m, &cols) || (st == SH_OK && perm[0] != 1))
		return OXP_OK;
	uint32_t rows = m.n / cols;
	o.rank = 2;
	o.n = m.n;
	for (uint32_t i = 0; i < rows; i++)
		for (uint32_t j = 0; j < cols; j++)
			o.v[j * rows + i] = m.v[i * cols + j];
	return oxp__sh_out_matrix(c, 0, &o, rows);
}

/* ---------------------------------------------------------------------------------------
 * Concat, Split, Slice, Gather, Tile, Pad
 */

/* Two descriptions of a dim that must be equal: a known size wins over a symbol. */
static oxp_dim dim_same(oxp_dim a, oxp_dim b)
{
	if (a.kind == OXP_DIM_VALUE && b.kind == OXP_DIM_VALUE)
		return a.value == b.value ? a : sh_dim_unk();
	if (b.kind == OXP_DIM_VALUE)
		return b;
	return oxp__sh_dim_merge(a, b);
}

static oxp_code r_concat(sh_ctx *c)
{
	sh_type t, x;
	int64_t axis;
	int st = oxp__sh_attr_int(c, "axis", &axis);
	size_t n = oxp__sh_nin(c);
	oxp__sh_type_unknown(&t);
	bool ok = c->opset > 0 && st != SH_BAD && (st == SH_OK || sh_before(c, 4));
	if (st == SH_ABSENT)
		axis = 1;
	bool all = true;
	int32_t ax = -1;
	for (size_t i = 0; i < n; i++) {
		if (!oxp__sh_in(c, i, &x)) {
			all = false;
			continue;
		}
		if (t.elem == 0)
			t.elem = x.elem;
		if (x.rank < 0) {
			all = false;
			continue;
		}
		if (t.rank < 0) {
			if (!ok || !oxp__sh_axis(axis, x.rank, &ax)) {
				ok = false;
				continue;
			}
			t.rank = x.rank;
			memcpy(t.d, x.d, (size_t)x.rank * sizeof(oxp_dim));
			continue;
		}
		if (x.rank != t.rank) {
			ok = false;
			continue;
		}
		for (int32_t k = 0; k < t.rank; k++)
			t.d[k] = k == ax ? oxp__sh_dim_add(t.d[k], x.d[k]) : dim_same(t.d[k], x.d[k]);
	}
	if (!ok)
		t.rank = -1;
	else if (t.rank >= 0 && !all)
		t.d[ax] = sh_dim_unk();
	SH_TRY(out0(c, &t));
	/* values: rank-1 pieces joined */
	sh_vals v, o;
	o.rank = 1;
	o.n = 0;
	for (size_t i = 0; i < n; i++) {
		if (!oxp__sh_in_vals(c, i, &v) || v.rank != 1 || o.n + v.n > SH_MAX_DATA)
			return OXP_OK;
		memcpy(&o.v[o.n], v.v, (size_t)v.n * sizeof(oxp_dim));
		o.n += v.n;
	}
	return n > 0 ? oxp__sh_out_vals(c, 0, &o) : OXP_OK;
}

static oxp_code r_split(sh_ctx *c)
{
	sh_type x, t;
	int64_t sizes[SH_MAX_DATA];
	size_t nsz = 0, nout = oxp__sh_nout(c);
	int64_t axis;
	int32_t ax = -1;
	oxp__sh_in(c, 0, &x);
	bool ok = c->opset > 0 && oxp__sh_attr_int_or(c, "axis", 0, &axis) && x.rank >= 0 &&
	          oxp__sh_axis(axis, x.rank, &ax);
	int st;
	if (sh_before(c, 2) && oxp__sh_has_in(c, 1))
		st = list_arg(c, false, NULL, 1, sizes, SH_MAX_DATA, &nsz);
	else
		st = list_arg(c, sh_before(c, 13), "split", 1, sizes, SH_MAX_DATA, &nsz);
	int64_t num_outputs = 0;
	if (!sh_before(c, 18) && oxp__sh_attr_int(c, "num_outputs", &num_outputs) == SH_BAD)
		ok = false;
	for (size_t o = 0; o < nout; o++) {
		t = x;
		if (!ok) {
			t.rank = -1;
		} else {
			oxp_dim d = x.d[ax], r = sh_dim_unk();
			if (st == SH_OK) {
				if (nsz == nout && sizes[o] >= 0)
					r = sh_dim_val(sizes[o]);
			} else if (st == SH_ABSENT && sh_known(d) && nout > 0) {
				int64_t n = (int64_t)nout, chunk = d.value / n;
				if (d.value % n == 0)
					r = sh_dim_val(chunk);
				else if (num_outputs == n) {
					chunk += 1; /* opset 18: the last piece is smaller */
					int64_t last = d.value - chunk * (n - 1);
					if (last > 0)
						r = sh_dim_val(o + 1 == nout ? last : chunk);
				}
			}
			t.d[ax] = r;
		}
		SH_TRY(oxp__sh_out(c, o, &t));
	}
	return OXP_OK;
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* Length of x[start:end:step] along a dim (ONNX Slice clamping rules). */
static oxp_dim slice_dim(oxp_dim d, int64_t start, int64_t end, int64_t step)
{
	const int64_t big = INT32_MAX; /* "to the end", as exporters write it */
	if (step == 0)
		return sh_dim_unk();
	if (!sh_known(d)) {
		if (step == 1 && start == 0 && end >= big)
			return d;
		if (step == -1 && (start == -1 || start >= big) && end <= -big)
			return d;
		return sh_dim_unk();
	}
	int64_t n = d.value;
	if (start < 0)
		start += n;
	if (end < 0)
		end += n;
	if (step > 0) {
		start = clamp64(start, 0, n);
		end = clamp64(end, 0, n);
		if (end <= start)
			return sh_dim_val(0);
		return sh_dim_val((end - start - 1) / step + 1);
	}
	if (n == 0)
		return sh_dim_val(0);
	start = clamp64(start, 0, n - 1);
	end = clamp64(end, -1, n - 1);
	if (start <= end)
		return sh_dim_val(0);
	uint64_t s = (uint64_t)(-(step + 1)) + 1u;
	return sh_dim_val((int64_t)((uint64_t)(start - end - 1) / s + 1u));
}

static oxp_code r_slice(sh_ctx *c)
{
	sh_type x, t;
	int64_t starts[SH_MAX_RANK], ends[SH_MAX_RANK], axes[SH_MAX_RANK], steps[SH_MAX_RANK];
	int32_t ax[SH_MAX_RANK];
	size_t ns = 0, ne = 0, na = 0, nst = 0;
	oxp__sh_in(c, 0, &x);
	t = x;
	if (x.rank < 0 || c->opset == 0) {
		t.rank = -1;
		return out0(c, &t);
	}
	bool old = sh_before(c, 10);
	int s1 = list_arg(c, old, "starts", 1, starts, SH_MAX_RANK, &ns);
	int s2 = list_arg(c, old, "ends", 2, ends, SH_MAX_RANK, &ne);
	int s3 = list_arg(c, old, "axes", 3, axes, SH_MAX_RANK, &na);
	int s4 = old ? SH_ABSENT : list_arg(c, false, NULL, 4, steps, SH_MAX_RANK, &nst);
	bool args = s1 == SH_OK && s2 == SH_OK && s3 != SH_BAD && s4 != SH_BAD && ns == ne &&
	            (s3 == SH_ABSENT || na == ns) && (s4 == SH_ABSENT || nst == ns);
	if (s3 == SH_ABSENT) {
		na = ns;
		for (size_t k = 0; k < na; k++)
			axes[k] = (int64_t)k;
	}
	if (s4 == SH_ABSENT)
		for (size_t k = 0; k < ns; k++)
			steps[k] = 1;
	if (s3 == SH_BAD || (s3 == SH_ABSENT && s1 != SH_OK) ||
	    !oxp__sh_norm_axes(axes, na, x.rank, ax)) {
		/* which axes are cut is not known */
		for (int32_t k = 0; k < x.rank; k++)
			t.d[k] = sh_dim_unk();
		return out0(c, &t);
	}
	for (size_t k = 0; k < na; k++)
		t.d[ax[k]] = args ? slice_dim(x.d[ax[k]], starts[k], ends[k], steps[k]) : sh_dim_unk();
	SH_TRY(out0(c, &t));
	/* values of a small vector, or of a small matrix */
	sh_vals v, o;
	uint32_t cols = 0;
	if (!args)
		return OXP_OK;
	if (oxp__sh_in_vals(c, 0, &v)) {
		if (v.rank != 1 || x.rank != 1)
			return OXP_OK;
		cols = v.n; /* one row */
	} else if (!oxp__sh_in_matrix(c, 0, &v, &cols) || x.rank != 2) {
		return OXP_OK;
	}
	int32_t vrank = v.rank == 2 ? 2 : 1;
	int64_t size[2] = {vrank == 2 ? (int64_t)(v.n / cols) : (int64_t)v.n, (int64_t)cols};
	int64_t first[2] = {0, 0}, len[2] = {size[0], size[1]}, step[2] = {1, 1};
	for (size_t k = 0; k < na; k++) {
		int32_t a = ax[k];
		oxp_dim l = slice_dim(sh_dim_val(size[a]), starts[k], ends[k], steps[k]);
		if (!sh_known(l))
			return OXP_OK;
		int64_t n = size[a], st = starts[k] < 0 ? starts[k] + n : starts[k];
		first[a] = steps[k] > 0 ? clamp64(st, 0, n) : clamp64(st, 0, n - 1);
		len[a] = l.value;
		step[a] = steps[k];
	}
	if (vrank == 1) { /* the axis is 0 */
		o.rank = 1;
		o.n = (uint32_t)len[0];
		for (int64_t k = 0; k < len[0]; k++)
			o.v[k] = v.v[first[0] + k * step[0]];
		return oxp__sh_out_vals(c, 0, &o);
	}
	o.rank = 2;
	o.n = (uint32_t)(len[0] * len[1]);
	for (int64_t i = 0; i < len[0]; i++)
		for (int64_t j = 0; j < len[1]; j++)
			o.v[i * len[1] + j] =
			    v.v[(first[0] + i * step[0]) * (int64_t)cols + first[1] + j * step[1]];
	return o.n > 0 ? oxp__sh_out_matrix(c, 0, &o, (uint32_t)len[1]) : OXP_OK;
}

static oxp_code r_gather(sh_ctx *c)
{
	sh_type d, idx, t;
	oxp__sh_in(c, 0, &d);
	oxp__sh_in(c, 1, &idx);
	t.elem = d.elem;
	t.rank = -1;
	int64_t axis;
	int32_t ax;
	if (!oxp__sh_attr_int_or(c, "axis", 0, &axis) || d.rank < 0 ||
	    !oxp__sh_axis(axis, d.rank, &ax))
		return out0(c, &t);
	if (idx.rank >= 0 && d.rank - 1 + idx.rank <= SH_MAX_RANK) {
		t.rank = 0;
		for (int32_t k = 0; k < ax; k++)
			t.d[t.rank++] = d.d[k];
		for (int32_t k = 0; k < idx.rank; k++)
			t.d[t.rank++] = idx.d[k];
		for (int32_t k = ax + 1; k < d.rank; k++)
			t.d[t.rank++] = d.d[k];
	}
	SH_TRY(out0(c, &t));
	sh_vals dv, iv, o;
	if (ax != 0 || !oxp__sh_in_vals(c, 0, &dv) || dv.rank != 1 || !oxp__sh_in_vals(c, 1, &iv))
		return OXP_OK;
	o.rank = iv.rank;
	o.n = iv.n;
	for (uint32_t k = 0; k < iv.n; k++) {
		if (iv.v[k].kind != OXP_DIM_VALUE)
			return OXP_OK;
		int64_t i = iv.v[k].value;
		if (i < -(int64_t)dv.n || i >= (int64_t)dv.n)
			return OXP_OK;
		o.v[k] = dv.v[i < 0 ? i + (int64_t)dv.n : i];
	}
	return oxp__sh_out_vals(c, 0, &o);
}

static oxp_code r_gather_elements(sh_ctx *c)
{
	sh_type d, idx;
	oxp__sh_in(c, 0, &d);
	oxp__sh_in(c, 1, &idx);
	idx.elem = d.elem;
	return out0(c, &idx);
}

static oxp_code r_gather_nd(sh_ctx *c)
{
	sh_type d, idx, t;
	oxp__sh_in(c, 0, &d);
	oxp__sh_in(c, 1, &idx);
	t.elem = d.elem;
	t.rank = -1;
	int64_t b = 0;
	if (!oxp__sh_attr_int_or(c, "batch_dims", 0, &b) || d.rank < 0 || idx.rank < 1 ||
	    !sh_known(idx.d[idx.rank - 1]) || b < 0 || b >= idx.rank || b >= d.rank)
		return out0(c, &t);
	int64_t k = idx.d[idx.rank - 1].value;
	if (k < 1 || b + k > d.rank)
		return out0(c, &t);
	t.rank = 0;
	for (int32_t i = 0; i < idx.rank - 1; i++)
		t.d[t.rank++] = idx.d[i];
	for (int64_t i = b + k; i < d.rank && t.rank < SH_MAX_RANK; i++)
		t.d[t.rank++] = d.d[i];
	if (idx.rank - 1 + d.rank - (b + k) > SH_MAX_RANK)
		t.rank = -1;
	return out0(c, &t);
}

static oxp_code r_tile(sh_ctx *c)
{
	sh_type x, t;
	int64_t rep[SH_MAX_RANK];
	size_t n;
	oxp__sh_in(c, 0, &x);
	t = x;
	if (x.rank < 0 || sh_before(c, 6)) {
		t.rank = -1;
		return out0(c, &t);
	}
	bool known = oxp__sh_in_ints(c, 1, rep, SH_MAX_RANK, &n) && n == (size_t)x.rank;
	for (int32_t k = 0; k < x.rank; k++)
		t.d[k] = known && rep[k] >= 0 ? oxp__sh_dim_mul(x.d[k], sh_dim_val(rep[k]))
		                              : sh_dim_unk();
	return out0(c, &t);
}

static oxp_code r_pad(sh_ctx *c)
{
	sh_type x, t;
	int64_t pads[2 * SH_MAX_RANK], axes[SH_MAX_RANK];
	int32_t ax[SH_MAX_RANK];
	size_t np = 0, na = 0;
	oxp__sh_in(c, 0, &x);
	t = x;
	if (x.rank < 0 || c->opset == 0) {
		t.rank = -1;
		return out0(c, &t);
	}
	int st = sh_before(c, 11) ? list_arg(c, true, sh_before(c, 2) ? "paddings" : "pads", 0, pads,
	                                  2 * SH_MAX_RANK, &np)
	                       : list_arg(c, false, NULL, 1, pads, 2 * SH_MAX_RANK, &np);
	int sa = sh_before(c, 18) ? SH_ABSENT : list_arg(c, false, NULL, 3, axes, SH_MAX_RANK, &na);
	if (sa == SH_ABSENT) {
		na = (size_t)x.rank;
		for (size_t k = 0; k < na; k++)
			axes[k] = (int64_t)k;
	}
	if (sa == SH_BAD || !oxp__sh_norm_axes(axes, na, x.rank, ax)) {
		for (int32_t k = 0; k < x.rank; k++)
			t.d[k] = sh_dim_unk();
		return out0(c, &t);
	}
	bool known = st == SH_OK && np == 2 * na;
	for (size_t k = 0; k < na; k++) {
		oxp_dim d = x.d[ax[k]];
		if (!known) {
			t.d[ax[k]] = sh_dim_unk();
			continue;
		}
		int64_t b = pads[k], e = pads[k + na], s;
		if (b == 0 && e == 0)
			continue;
		if (sh_known(d) && oxp__sh_add(d.value, b, &s) && oxp__sh_add(s, e, &s) && s >= 0)
			t.d[ax[k]] = sh_dim_val(s);
		else
			t.d[ax[k]] = sh_dim_unk();
	}
	return out0(c, &t);
}

/* ---------------------------------------------------------------------------------------
 * Range, NonZero, Compress, Unique, TopK, OneHot, ...
 */

/* A scalar input as a double: a known integer value, or a constant tensor's element. */
static bool scalar_f64(sh_ctx *c, size_t i, double *out)
{
	sh_vals v;
	if (oxp__sh_in_vals(c, i, &v) && v.n == 1 && v.v[0].kind == OXP_DIM_VALUE) {
		*out = (double)v.v[0].value;
		return true;
	}
	const oxp_tensor *t = oxp__sh_in_const(c, i);
	uint64_t count;
	if (t == NULL || t->storage == OXP_STORE_EXTERNAL ||
	    !oxp_dims_count(t->dims, t->ndims, &count) || count != 1)
		return false;
	return oxp_tensor_read_f64(t, NULL, 0, 0, 1, out, NULL) == OXP_OK && isfinite(*out);
}

/* Whether x converts to a float without leaving its range (undefined behaviour) and a
 * non-zero stays non-zero; a mixed-type Range can carry a DOUBLE delta such as 1e-300. */
static bool fits_float(double x)
{
	return isfinite(x) && fabs(x) <= FLT_MAX && (x == 0 || fabs(x) >= FLT_MIN);
}

static oxp_code r_range(sh_ctx *c)
{
	sh_type t, s;
	oxp__sh_in(c, 0, &s);
	t.elem = s.elem;
	if (t.elem == 0) {
		oxp__sh_in(c, 1, &s);
		t.elem = s.elem;
	}
	t.rank = 1;
	t.d[0] = sh_dim_unk();
	sh_vals a, b, d;
	if (oxp__sh_in_vals(c, 0, &a) && oxp__sh_in_vals(c, 1, &b) && oxp__sh_in_vals(c, 2, &d) &&
	    a.n == 1 && b.n == 1 && d.n == 1 && a.v[0].kind == OXP_DIM_VALUE &&
	    b.v[0].kind == OXP_DIM_VALUE && d.v[0].kind == OXP_DIM_VALUE && d.v[0].value != 0) {
		int64_t st = a.v[0].value, lim = b.v[0].value, dl = d.v[0].value, diff;
		if (!__builtin_sub_overflow(lim, st, &diff)) {
			int64_t n = 0;
			if (diff > 0 && dl > 0)
				n = (diff - 1) / dl + 1;
			else if (diff < 0 && dl < 0)
				n = (int64_t)(((uint64_t)0 - (uint64_t)diff - 1u) /
				                  ((uint64_t)0 - (uint64_t)dl) +
				              1u);
			t.d[0] = sh_dim_val(n);
			SH_TRY(out0(c, &t));
			if (n > SH_MAX_DATA)
				return OXP_OK;
			sh_vals o;
			o.rank = 1;
			o.n = (uint32_t)n;
			for (int64_t k = 0; k < n; k++)
				o.v[k] = sh_dim_val(st + k * dl); /* stays between start and limit */
			return oxp__sh_out_vals(c, 0, &o);
		}
	}
	/* floating ranges: ceil((limit - start) / delta) in the element type, as runtimes do */
	double fs, fl, fd, n = -1;
	if ((t.elem == OXP_DT_FLOAT || t.elem == OXP_DT_DOUBLE) && scalar_f64(c, 0, &fs) &&
	    scalar_f64(c, 1, &fl) && scalar_f64(c, 2, &fd) && fd != 0 &&
	    (t.elem == OXP_DT_DOUBLE || (fits_float(fs) && fits_float(fl) && fits_float(fd)))) {
		if (t.elem == OXP_DT_FLOAT)
			n = (double)ceilf(((float)fl - (float)fs) / (float)fd);
		else
			n = ceil((fl - fs) / fd);
		if (n < 0)
			n = 0;
		if (isfinite(n) && n < 4.0e18)
			t.d[0] = sh_dim_val((int64_t)n);
	}
	return out0(c, &t);
}

static oxp_code r_nonzero(sh_ctx *c)
{
	sh_type x, t;
	oxp__sh_in(c, 0, &x);
	t.elem = OXP_DT_INT64;
	t.rank = 2;
	t.d[0] = x.rank >= 0 ? sh_dim_val(x.rank) : sh_dim_unk();
	t.d[1] = sh_dim_unk();
	return out0(c, &t);
}

static oxp_code r_nms(sh_ctx *c)
{
	sh_type t;
	t.elem = OXP_DT_INT64;
	t.rank = 2;
	t.d[0] = sh_dim_unk();
	t.d[1] = sh_dim_val(3);
	return out0(c, &t);
}

/* Compress, Unique: x with the `axis` dim of a size known at run time only; without axis
 * a flat vector. */
static void data_sized(const sh_ctx *c, sh_type *t)
{
	sh_type x;
	int64_t axis;
	int32_t ax;
	oxp__sh_in(c, 0, &x);
	*t = x;
	int st = oxp__sh_attr_int(c, "axis", &axis);
	if (st == SH_ABSENT) {
		t->rank = 1;
		t->d[0] = sh_dim_unk();
	} else if (st == SH_BAD || !oxp__sh_axis(axis, x.rank, &ax)) {
		t->rank = -1;
	} else {
		t->d[ax] = sh_dim_unk();
	}
}

static oxp_code r_compress(sh_ctx *c)
{
	sh_type t;
	data_sized(c, &t);
	return out0(c, &t);
}

static oxp_code r_unique(sh_ctx *c)
{
	sh_type t;
	data_sized(c, &t);
	SH_TRY(out0(c, &t));
	t.elem = OXP_DT_INT64;
	t.rank = 1;
	t.d[0] = sh_dim_unk();
	for (size_t o = 1; o < 4; o++)
		SH_TRY(oxp__sh_out(c, o, &t));
	return OXP_OK;
}

/* One axis replaced (TopK) or reduced; keepdims etc. */
static oxp_code r_topk(sh_ctx *c)
{
	sh_type x, t;
	oxp__sh_in(c, 0, &x);
	t = x;
	int64_t axis, k = -1;
	int32_t ax;
	if (c->opset == 0 || !oxp__sh_attr_int_or(c, "axis", -1, &axis) ||
	    !oxp__sh_axis(axis, x.rank, &ax)) {
		t.rank = -1;
	} else {
		sh_vals v;
		if (sh_before(c, 10)) {
			if (oxp__sh_attr_int(c, "k", &k) != SH_OK)
				k = -1;
		} else if (oxp__sh_in_vals(c, 1, &v) && v.n == 1 && v.v[0].kind == OXP_DIM_VALUE) {
			k = v.v[0].value;
		}
		t.d[ax] = k >= 0 ? sh_dim_val(k) : sh_dim_unk();
	}
	SH_TRY(out0(c, &t));
	t.elem = OXP_DT_INT64;
	return oxp__sh_out(c, 1, &t);
}

static oxp_code r_onehot(sh_ctx *c)
{
	sh_type idx, val, t;
	oxp__sh_in(c, 0, &idx);
	oxp__sh_in(c, 2, &val);
	t.elem = val.elem;
	t.rank = -1;
	int64_t axis;
	int32_t ax;
	if (idx.rank >= 0 && idx.rank < SH_MAX_RANK &&
	    oxp__sh_attr_int_or(c, "axis", -1, &axis) && oxp__sh_axis(axis, idx.rank + 1, &ax)) {
		double depth;
		t.rank = idx.rank + 1;
		for (int32_t k = 0, j = 0; k < t.rank; k++)
			t.d[k] = k == ax ? sh_dim_unk() : idx.d[j++];
		if (scalar_f64(c, 1, &depth) && depth >= 1 && depth < 4.0e18)
			t.d[ax] = sh_dim_val((int64_t)depth);
	}
	return out0(c, &t);
}

/* ReduceX: axes from the attribute, or (ReduceSum >= 13, the others >= 18) input 1. */
static oxp_code r_reduce(sh_ctx *c)
{
	sh_type x, t;
	int64_t axes[SH_MAX_RANK];
	int32_t ax[SH_MAX_RANK];
	size_t n = 0;
	oxp__sh_in(c, 0, &x);
	t = x;
	int64_t keep, noop = 0;
	bool sum = oxp_str_eq(c->node->op_type, "ReduceSum");
	bool from_input = !sh_before(c, sum ? 13 : 18);
	if (c->opset == 0 || x.rank < 0 || !oxp__sh_attr_int_or(c, "keepdims", 1, &keep) ||
	    (from_input && !oxp__sh_attr_int_or(c, "noop_with_empty_axes", 0, &noop))) {
		t.rank = -1;
		return out0(c, &t);
	}
	int st = list_arg(c, !from_input, "axes", 1, axes, SH_MAX_RANK, &n);
	if (st == SH_BAD || !oxp__sh_norm_axes(axes, n, x.rank, ax)) {
		/* which dims go is unknown */
		if (keep == 0)
			t.rank = -1;
		for (int32_t k = 0; k < t.rank; k++)
			t.d[k] = sh_is(x.d[k], 1) ? x.d[k] : sh_dim_unk();
		return out0(c, &t);
	}
	bool red[SH_MAX_RANK] = {false};
	if (n == 0) {
		if (noop != 0)
			return out0(c, &t);
		for (int32_t k = 0; k < x.rank; k++)
			red[k] = true;
	}
	for (size_t k = 0; k < n; k++)
		red[ax[k]] = true;
	t.rank = 0;
	for (int32_t k = 0; k < x.rank; k++) {
		if (!red[k])
			t.d[t.rank++] = x.d[k];
		else if (keep != 0)
			t.d[t.rank++] = sh_dim_val(1);
	}
	return out0(c, &t);
}

static oxp_code r_argmax(sh_ctx *c) /* ArgMax, ArgMin */
{
	sh_type x, t;
	oxp__sh_in(c, 0, &x);
	t = x;
	t.elem = OXP_DT_INT64;
	int64_t axis, keep;
	int32_t ax;
	if (!oxp__sh_attr_int_or(c, "axis", 0, &axis) ||
	    !oxp__sh_attr_int_or(c, "keepdims", 1, &keep) || !oxp__sh_axis(axis, x.rank, &ax)) {
		t.rank = -1;
		return out0(c, &t);
	}
	if (keep != 0) {
		t.d[ax] = sh_dim_val(1);
	} else {
		memmove(&t.d[ax], &t.d[ax + 1], (size_t)(t.rank - ax - 1) * sizeof(oxp_dim));
		t.rank--;
	}
	return out0(c, &t);
}

/* ---------------------------------------------------------------------------------------
 * MatMul, Gemm, Det, Einsum-free linear algebra
 */
void oxp__sh_matmul_shape(sh_type *t, const sh_type *a0, const sh_type *b0)
{
	sh_type a = *a0, b = *b0;
	t->rank = -1;
	if (a.rank < 1 || b.rank < 1)
		return;
	bool a1 = a.rank == 1, b1 = b.rank == 1;
	if (a1) { /* [K] -> [1, K] */
		a.d[1] = a.d[0];
		a.d[0] = sh_dim_val(1);
		a.rank = 2;
	}
	if (b1) { /* [K] -> [K, 1] */
		b.d[1] = sh_dim_val(1);
		b.rank = 2;
	}
	sh_type ba, bb, bo;
	ba.rank = a.rank - 2;
	memcpy(ba.d, a.d, (size_t)ba.rank * sizeof(oxp_dim));
	bb.rank = b.rank - 2;
	memcpy(bb.d, b.d, (size_t)bb.rank * sizeof(oxp_dim));
	oxp__sh_broadcast(&bo, &ba, &bb);
	if (bo.rank + 2 > SH_MAX_RANK)
		return;
	t->rank = bo.rank;
	memcpy(t->d, bo.d, (size_t)bo.rank * sizeof(oxp_dim));
	if (!a1)
		t->d[t->rank++] = a.d[a.rank - 2];
	if (!b1)
		t->d[t->rank++] = b.d[b.rank - 1];
}

static oxp_code r_matmul(sh_ctx *c)
{
	sh_type a, b, t;
	oxp__sh_in(c, 0, &a);
	oxp__sh_in(c, 1, &b);
	oxp__sh_matmul_shape(&t, &a, &b);
	t.elem = a.elem != 0 ? a.elem : b.elem;
	return out0(c, &t);
}

static oxp_code r_matmul_integer(sh_ctx *c)
{
	sh_type a, b, t;
	oxp__sh_in(c, 0, &a);
	oxp__sh_in(c, 1, &b);
	oxp__sh_matmul_shape(&t, &a, &b);
	t.elem = OXP_DT_INT32;
	return out0(c, &t);
}

static oxp_code r_qlinear_matmul(sh_ctx *c)
{
	sh_type a, b, z, t;
	oxp__sh_in(c, 0, &a);
	oxp__sh_in(c, 3, &b);
	oxp__sh_in(c, 7, &z);
	oxp__sh_matmul_shape(&t, &a, &b);
	t.elem = z.elem;
	return out0(c, &t);
}

static oxp_code r_gemm(sh_ctx *c)
{
	sh_type a, b, t;
	oxp__sh_in(c, 0, &a);
	oxp__sh_in(c, 1, &b);
	t.elem = a.elem != 0 ? a.elem : b.elem;
	t.rank = 2;
	int64_t ta, tb;
	if (!oxp__sh_attr_int_or(c, "transA", 0, &ta) || !oxp__sh_attr_int_or(c, "transB", 0, &tb)) {
		t.d[0] = t.d[1] = sh_dim_unk();
		return out0(c, &t);
	}
	t.d[0] = a.rank == 2 ? a.d[ta != 0 ? 1 : 0] : sh_dim_unk();
	t.d[1] = b.rank == 2 ? b.d[tb != 0 ? 0 : 1] : sh_dim_unk();
	return out0(c, &t);
}

static oxp_code r_det(sh_ctx *c)
{
	sh_type x;
	oxp__sh_in(c, 0, &x);
	x.rank = x.rank >= 2 ? x.rank - 2 : -1;
	return out0(c, &x);
}

/* ---------------------------------------------------------------------------------------
 * Random, strings, sequences
 */
static oxp_code r_random(sh_ctx *c) /* RandomNormal, RandomUniform */
{
	sh_type t;
	const int64_t *s;
	size_t n;
	int64_t dt;
	t.elem = oxp__sh_attr_int_or(c, "dtype", OXP_DT_FLOAT, &dt) && dt > 0 && dt < OXP_DT__COUNT
	             ? (int32_t)dt
	             : 0;
	t.rank = -1;
	if (oxp__sh_attr_ints(c, "shape", &s, &n) == SH_OK && n <= SH_MAX_RANK) {
		t.rank = (int32_t)n;
		for (size_t k = 0; k < n; k++)
			t.d[k] = s[k] >= 0 ? sh_dim_val(s[k]) : sh_dim_unk();
	}
	return out0(c, &t);
}

static oxp_code r_multinomial(sh_ctx *c)
{
	sh_type x, t;
	int64_t dt, ss;
	oxp__sh_in(c, 0, &x);
	t.elem = oxp__sh_attr_int_or(c, "dtype", OXP_DT_INT32, &dt) && dt > 0 && dt < OXP_DT__COUNT
	             ? (int32_t)dt
	             : 0;
	t.rank = 2;
	t.d[0] = x.rank == 2 ? x.d[0] : sh_dim_unk();
	t.d[1] = oxp__sh_attr_int_or(c, "sample_size", 1, &ss) && ss >= 0 ? sh_dim_val(ss)
	                                                                  : sh_dim_unk();
	return out0(c, &t);
}

static oxp_code r_string_normalizer(sh_ctx *c)
{
	sh_type x;
	oxp__sh_in(c, 0, &x);
	x.elem = OXP_DT_STRING;
	if (x.rank == 1)
		x.d[0] = sh_dim_unk();
	else if (x.rank == 2)
		x.d[1] = sh_dim_unk();
	else
		x.rank = -1;
	return out0(c, &x);
}

static oxp_code r_sequence_empty(sh_ctx *c)
{
	sh_type t;
	int64_t dt;
	t.elem = oxp__sh_attr_int_or(c, "dtype", OXP_DT_FLOAT, &dt) && dt > 0 && dt < OXP_DT__COUNT
	             ? (int32_t)dt
	             : 0;
	t.rank = -1;
	return oxp__sh_out_seq(c, 0, &t, true);
}

static oxp_code r_sequence_construct(sh_ctx *c)
{
	sh_type acc, t;
	size_t n = oxp__sh_nin(c);
	if (n == 0)
		return OXP_OK;
	oxp__sh_in(c, 0, &acc);
	for (size_t i = 1; i < n; i++) {
		oxp__sh_in(c, i, &t);
		oxp__sh_type_union(&acc, &acc, &t);
	}
	return oxp__sh_out_seq(c, 0, &acc, false);
}

static oxp_code r_sequence_insert(sh_ctx *c)
{
	sh_type s, t;
	bool empty;
	if (!oxp__sh_in_seq(c, 0, &s, &empty))
		return OXP_OK;
	oxp__sh_in(c, 1, &t);
	if (!empty)
		oxp__sh_type_union(&t, &s, &t);
	else if (t.elem == 0)
		t.elem = s.elem;
	return oxp__sh_out_seq(c, 0, &t, false);
}

static oxp_code r_sequence_erase(sh_ctx *c)
{
	sh_type s;
	bool empty;
	if (!oxp__sh_in_seq(c, 0, &s, &empty))
		return OXP_OK;
	return oxp__sh_out_seq(c, 0, &s, empty);
}

static oxp_code r_sequence_at(sh_ctx *c)
{
	sh_type s;
	bool empty;
	if (!oxp__sh_in_seq(c, 0, &s, &empty) || empty)
		return OXP_OK;
	return out0(c, &s);
}

static oxp_code r_split_to_sequence(sh_ctx *c)
{
	sh_type x, t;
	int64_t axis, keep;
	int32_t ax;
	oxp__sh_in(c, 0, &x);
	t = x;
	if (!oxp__sh_attr_int_or(c, "axis", 0, &axis) ||
	    !oxp__sh_attr_int_or(c, "keepdims", 1, &keep) || !oxp__sh_axis(axis, x.rank, &ax)) {
		t.rank = -1;
	} else if (oxp__sh_has_in(c, 1)) {
		t.d[ax] = sh_dim_unk(); /* pieces of given lengths */
	} else if (keep != 0) {
		t.d[ax] = sh_dim_val(1);
	} else {
		memmove(&t.d[ax], &t.d[ax + 1], (size_t)(t.rank - ax - 1) * sizeof(oxp_dim));
		t.rank--;
	}
	return oxp__sh_out_seq(c, 0, &t, false);
}

static oxp_code r_concat_from_sequence(sh_ctx *c)
{
	sh_type s, t;
	bool empty;
	int64_t axis, new_axis;
	int32_t ax;
	if (!oxp__sh_in_seq(c, 0, &s, &empty))
		return OXP_OK;
	t.elem = s.elem;
	t.rank = -1;
	if (s.rank >= 0 && s.rank < SH_MAX_RANK && oxp__sh_attr_int(c, "axis", &axis) == SH_OK &&
	    oxp__sh_attr_int_or(c, "new_axis", 0, &new_axis) &&
	    oxp__sh_axis(axis, s.rank + (new_axis != 0), &ax)) {
		t.rank = s.rank + (new_axis != 0);
		for (int32_t k = 0, j = 0; k < t.rank; k++) {
			if (k != ax || new_axis == 0)
				t.d[k] = s.d[j++];
			if (k == ax)
				t.d[k] = sh_dim_unk(); /* the sum (or count) over the elements */
		}
	}
	return out0(c, &t);
}

static oxp_code r_regex_full_match(sh_ctx *c)
{
	sh_type t;
	oxp__sh_in(c, 0, &t);
	t.elem = OXP_DT_BOOL;
	return out0(c, &t);
}

static oxp_code r_string_concat(sh_ctx *c)
{
	sh_type a, b;
	oxp__sh_in(c, 0, &a);
	oxp__sh_in(c, 1, &b);
	oxp__sh_broadcast(&a, &a, &b);
	a.elem = OXP_DT_STRING;
	return out0(c, &a);
}

/* BlackmanWindow, HammingWindow, HannWindow: a vector of `size` (input 0) elements. */
static oxp_code r_window(sh_ctx *c)
{
	sh_type t;
	sh_vals v;
	int64_t dt;
	t.elem = oxp__sh_attr_int_or(c, "output_datatype", OXP_DT_FLOAT, &dt) && dt > 0 &&
	                 dt < OXP_DT__COUNT
	             ? (int32_t)dt
	             : 0;
	t.rank = 1;
	t.d[0] = oxp__sh_in_vals(c, 0, &v) && v.n == 1 && sh_known(v.v[0]) ? v.v[0] : sh_dim_unk();
	return out0(c, &t);
}

/* SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss: a scalar unless reduction is
 * "none" (then the labels' shape); SoftmaxCrossEntropyLoss's log_prob has the scores'
 * shape. */
static oxp_code r_loss(sh_ctx *c)
{
	sh_type x, labels, t;
	oxp_str red;
	oxp__sh_in(c, 0, &x);
	oxp__sh_in(c, 1, &labels);
	int st = oxp__sh_attr_str(c, "reduction", &red);
	if (st == SH_BAD) {
		t.rank = -1;
	} else if (st == SH_OK && oxp_str_eq(red, "none")) {
		t = labels;
	} else {
		t.rank = st == SH_ABSENT || oxp_str_eq(red, "mean") || oxp_str_eq(red, "sum") ? 0 : -1;
	}
	t.elem = x.elem;
	SH_TRY(out0(c, &t));
	return oxp__sh_out(c, 1, &x);
}

/* ---- Einsum ----------------------------------------------------------------------------*/
#define EINSUM_MAX_TERMS 16

typedef struct einsum_term {
	char letters[SH_MAX_RANK]; /* in order; '.' stands for the ellipsis */
	int32_t n;
	bool ellipsis;
} einsum_term;

/* Parse one term of an einsum equation from s[*i..) up to ',' or '-' or the end. */
static bool einsum_term_parse(oxp_str s, size_t *i, einsum_term *t)
{
	t->n = 0;
	t->ellipsis = false;
	while (*i < s.len && s.p[*i] != ',' && s.p[*i] != '-') {
		char ch = s.p[*i];
		if (ch == ' ') {
			(*i)++;
		} else if (ch == '.') {
			if (t->ellipsis || *i + 2 >= s.len || s.p[*i + 1] != '.' ||
			    s.p[*i + 2] != '.' || t->n >= SH_MAX_RANK)
				return false;
			t->ellipsis = true;
			t->letters[t->n++] = '.';
			*i += 3;
		} else if (((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')) && t->n < SH_MAX_RANK) {
			t->letters[t->n++] = ch;
			(*i)++;
		} else {
			return false;
		}
	}
	return true;
}

/* The einsum terms: in[0..*nin) and, when the equation has "->", *out. */
static bool einsum_parse(oxp_str eq, einsum_term *in, size_t *nin, einsum_term *out,
                         bool *explicit_out)
{
	size_t i = 0;
	*nin = 0;
	*explicit_out = false;
	for (;;) {
		if (*nin >= EINSUM_MAX_TERMS || !einsum_term_parse(eq, &i, &in[(*nin)++]))
			return false;
		if (i >= eq.len)
			return true;
		if (eq.p[i] == ',') {
			i++;
			continue;
		}
		if (i + 1 >= eq.len || eq.p[i + 1] != '>')
			return false;
		i += 2;
		*explicit_out = true;
		return einsum_term_parse(eq, &i, out) && i == eq.len;
	}
}

static int letter_index(char ch)
{
	return ch >= 'A' && ch <= 'Z' ? ch - 'A' : ch - 'a' + 26;
}

static oxp_code r_einsum(sh_ctx *c)
{
	einsum_term in[EINSUM_MAX_TERMS], out;
	size_t nin;
	bool explicit_out;
	oxp_str eq;
	sh_type x, t, ell, tmp;
	oxp_dim dim[52];
	int count[52] = {0};
	bool seen[52] = {false};
	oxp__sh_in(c, 0, &x);
	t.elem = x.elem;
	t.rank = -1;
	if (oxp__sh_attr_str(c, "equation", &eq) != SH_OK || eq.len > 4096 ||
	    !einsum_parse(eq, in, &nin, &out, &explicit_out) || nin != oxp__sh_nin(c))
		return out0(c, &t);
	ell.rank = 0;
	for (size_t k = 0; k < nin; k++) {
		const einsum_term *tm = &in[k];
		oxp__sh_in(c, k, &x);
		int32_t nlet = tm->n - (tm->ellipsis ? 1 : 0);
		if (x.rank < 0 || x.rank < nlet || (!tm->ellipsis && x.rank != nlet))
			return out0(c, &t);
		int32_t nell = x.rank - nlet, pos = 0;
		for (int32_t j = 0; j < tm->n; j++) {
			if (tm->letters[j] == '.') {
				tmp.rank = nell;
				memcpy(tmp.d, &x.d[pos], (size_t)nell * sizeof(oxp_dim));
				oxp__sh_broadcast(&ell, &ell, &tmp);
				pos += nell;
				continue;
			}
			int li = letter_index(tm->letters[j]);
			oxp_dim d = x.d[pos++];
			if (!seen[li])
				dim[li] = d;
			else if (!oxp__sh_dim_eq(dim[li], d))
				dim[li] = sh_is(dim[li], 1) ? d : sh_is(d, 1) ? dim[li] : sh_dim_unk();
			seen[li] = true;
			count[li]++;
		}
	}
	t.rank = 0;
	if (!explicit_out) {
		/* implicit: the ellipsis dims, then the letters seen once, alphabetically */
		for (int32_t k = 0; k < ell.rank; k++)
			t.d[t.rank++] = ell.d[k];
		for (int li = 0; li < 52; li++)
			if (count[li] == 1 && t.rank < SH_MAX_RANK)
				t.d[t.rank++] = dim[li];
		return out0(c, &t);
	}
	for (int32_t j = 0; j < out.n; j++) {
		if (out.letters[j] == '.') {
			if (t.rank + ell.rank > SH_MAX_RANK) {
				t.rank = -1;
				return out0(c, &t);
			}
			for (int32_t k = 0; k < ell.rank; k++)
				t.d[t.rank++] = ell.d[k];
			continue;
		}
		int li = letter_index(out.letters[j]);
		if (!seen[li]) { /* an output letter no input has: invalid */
			t.rank = -1;
			return out0(c, &t);
		}
		t.d[t.rank++] = dim[li];
	}
	return out0(c, &t);
}

static oxp_code r_scalar_i64(sh_ctx *c) /* SequenceLength */
{
	sh_type t;
	t.elem = OXP_DT_INT64;
	t.rank = 0;
	return out0(c, &t);
}

/* ---------------------------------------------------------------------------------------
 * The table: sorted by name (strcmp order) for the binary search below.
 */
static const sh_op ops[] = {
    {"Abs", oxp__sh_rule_same, NULL},
    {"Acos", oxp__sh_rule_same, NULL},
    {"Acosh", oxp__sh_rule_same, NULL},
    {"Add", r_arith, NULL},
    {"And", r_arith, NULL},
    {"ArgMax", r_argmax, NULL},
    {"ArgMin", r_argmax, NULL},
    {"Asin", oxp__sh_rule_same, NULL},
    {"Asinh", oxp__sh_rule_same, NULL},
    {"Atan", oxp__sh_rule_same, NULL},
    {"Atanh", oxp__sh_rule_same, NULL},
    {"Bernoulli", r_dtype_like, NULL},
    {"BitShift", r_arith, NULL},
    {"BitwiseAnd", r_arith, NULL},
    {"BitwiseNot", oxp__sh_rule_same, NULL},
    {"BitwiseOr", r_arith, NULL},
    {"BitwiseXor", r_arith, NULL},
    {"BlackmanWindow", r_window, NULL},
    {"Cast", r_cast, NULL},
    {"CastLike", r_castlike, NULL},
    {"Ceil", oxp__sh_rule_same, NULL},
    {"Celu", oxp__sh_rule_same, NULL},
    {"Clip", oxp__sh_rule_same, NULL},
    {"Compress", r_compress, NULL},
    {"Concat", r_concat, NULL},
    {"ConcatFromSequence", r_concat_from_sequence, NULL},
    {"Constant", r_constant, NULL},
    {"ConstantOfShape", r_constant_of_shape, NULL},
    {"Cos", oxp__sh_rule_same, NULL},
    {"Cosh", oxp__sh_rule_same, NULL},
    {"CumSum", oxp__sh_rule_same, NULL},
    {"Det", r_det, NULL},
    {"Div", r_arith, NULL},
    {"Einsum", r_einsum, NULL},
    {"Elu", oxp__sh_rule_same, NULL},
    {"Equal", r_arith, NULL},
    {"Erf", oxp__sh_rule_same, NULL},
    {"Exp", oxp__sh_rule_same, NULL},
    {"Expand", r_expand, NULL},
    {"EyeLike", r_eyelike, NULL},
    {"Flatten", r_flatten, NULL},
    {"Floor", oxp__sh_rule_same, NULL},
    {"Gather", r_gather, NULL},
    {"GatherElements", r_gather_elements, NULL},
    {"GatherND", r_gather_nd, NULL},
    {"Gelu", oxp__sh_rule_same, NULL},
    {"Gemm", r_gemm, NULL},
    {"Greater", r_arith, NULL},
    {"GreaterOrEqual", r_arith, NULL},
    {"HammingWindow", r_window, NULL},
    {"HannWindow", r_window, NULL},
    {"HardSigmoid", oxp__sh_rule_same, NULL},
    {"HardSwish", oxp__sh_rule_same, NULL},
    {"Hardmax", oxp__sh_rule_same, NULL},
    {"Identity", r_identity, NULL},
    {"IsInf", r_bool_same, NULL},
    {"IsNaN", r_bool_same, NULL},
    {"LeakyRelu", oxp__sh_rule_same, NULL},
    {"Less", r_arith, NULL},
    {"LessOrEqual", r_arith, NULL},
    {"Log", oxp__sh_rule_same, NULL},
    {"LogSoftmax", oxp__sh_rule_same, NULL},
    {"MatMul", r_matmul, NULL},
    {"MatMulInteger", r_matmul_integer, NULL},
    {"Max", r_variadic, NULL},
    {"Mean", r_variadic, NULL},
    {"Min", r_variadic, NULL},
    {"Mish", oxp__sh_rule_same, NULL},
    {"Mod", r_arith, NULL},
    {"Mul", r_arith, NULL},
    {"Multinomial", r_multinomial, NULL},
    {"Neg", oxp__sh_rule_same, NULL},
    {"NegativeLogLikelihoodLoss", r_loss, NULL},
    {"NonMaxSuppression", r_nms, NULL},
    {"NonZero", r_nonzero, NULL},
    {"Not", oxp__sh_rule_same, NULL},
    {"OneHot", r_onehot, NULL},
    {"Or", r_arith, NULL},
    {"PRelu", r_prelu, NULL},
    {"Pad", r_pad, NULL},
    {"Pow", r_arith, NULL},
    {"QLinearMatMul", r_qlinear_matmul, NULL},
    {"RandomNormal", r_random, NULL},
    {"RandomNormalLike", r_dtype_like, NULL},
    {"RandomUniform", r_random, NULL},
    {"RandomUniformLike", r_dtype_like, NULL},
    {"Range", r_range, NULL},
    {"Reciprocal", oxp__sh_rule_same, NULL},
    {"ReduceL1", r_reduce, NULL},
    {"ReduceL2", r_reduce, NULL},
    {"ReduceLogSum", r_reduce, NULL},
    {"ReduceLogSumExp", r_reduce, NULL},
    {"ReduceMax", r_reduce, NULL},
    {"ReduceMean", r_reduce, NULL},
    {"ReduceMin", r_reduce, NULL},
    {"ReduceProd", r_reduce, NULL},
    {"ReduceSum", r_reduce, NULL},
    {"ReduceSumSquare", r_reduce, NULL},
    {"RegexFullMatch", r_regex_full_match, NULL},
    {"Relu", oxp__sh_rule_same, NULL},
    {"Reshape", r_reshape, NULL},
    {"ReverseSequence", oxp__sh_rule_same, NULL},
    {"Round", oxp__sh_rule_same, NULL},
    {"Scatter", oxp__sh_rule_same, NULL},
    {"ScatterElements", oxp__sh_rule_same, NULL},
    {"ScatterND", oxp__sh_rule_same, NULL},
    {"Selu", oxp__sh_rule_same, NULL},
    {"SequenceAt", r_sequence_at, NULL},
    {"SequenceConstruct", r_sequence_construct, NULL},
    {"SequenceEmpty", r_sequence_empty, NULL},
    {"SequenceErase", r_sequence_erase, NULL},
    {"SequenceInsert", r_sequence_insert, NULL},
    {"SequenceLength", r_scalar_i64, NULL},
    {"Shape", r_shape, NULL},
    {"Shrink", oxp__sh_rule_same, NULL},
    {"Sigmoid", oxp__sh_rule_same, NULL},
    {"Sign", oxp__sh_rule_same, NULL},
    {"Sin", oxp__sh_rule_same, NULL},
    {"Sinh", oxp__sh_rule_same, NULL},
    {"Size", r_size, NULL},
    {"Slice", r_slice, NULL},
    {"Softmax", oxp__sh_rule_same, NULL},
    {"SoftmaxCrossEntropyLoss", r_loss, NULL},
    {"Softplus", oxp__sh_rule_same, NULL},
    {"Softsign", oxp__sh_rule_same, NULL},
    {"Split", r_split, NULL},
    {"SplitToSequence", r_split_to_sequence, NULL},
    {"Sqrt", oxp__sh_rule_same, NULL},
    {"Squeeze", r_squeeze, NULL},
    {"StringConcat", r_string_concat, NULL},
    {"StringNormalizer", r_string_normalizer, NULL},
    {"Sub", r_arith, NULL},
    {"Sum", r_variadic, NULL},
    {"Tan", oxp__sh_rule_same, NULL},
    {"Tanh", oxp__sh_rule_same, NULL},
    {"ThresholdedRelu", oxp__sh_rule_same, NULL},
    {"Tile", r_tile, NULL},
    {"TopK", r_topk, NULL},
    {"Transpose", r_transpose, NULL},
    {"Trilu", oxp__sh_rule_same, NULL},
    {"Unique", r_unique, NULL},
    {"Unsqueeze", r_unsqueeze, NULL},
    {"Where", r_where, NULL},
    {"Xor", r_arith, NULL},
};

const sh_op *oxp__sh_table_find(const sh_op *table, size_t n, oxp_str name)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *s = table[mid].name;
		size_t sl = strlen(s);
		size_t m = sl < name.len ? sl : name.len;
		int cmp = m > 0 ? memcmp(s, name.p, m) : 0;
		if (cmp == 0)
			cmp = sl < name.len ? -1 : sl > name.len ? 1 : 0;
		if (cmp == 0)
			return &table[mid];
		if (cmp < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const sh_op *oxp__sh_find_op(oxp_str op_type)
{
	const sh_op *op = oxp__sh_table_find(ops, sizeof(ops) / sizeof(ops[0]), op_type);
	return op != NULL ? op : oxp__sh_find_nn_op(op_type);
}
