/*
 * shape.h — shared by the shape-inference files of parser/ only:
 *   shape.c      the driver (order of nodes per scope, subgraphs, function calls), the
 *                type and small-integer-data stores, attribute access, dim arithmetic;
 *   shape_ops.c  rules for tensor, elementwise, reduction and data-propagating ops;
 *   shape_nn.c   rules for convolution, pooling, normalization, recurrent, resize and
 *                control-flow ops;
 *   shape_ms.c   rules for onnxruntime's contrib ops (com.microsoft) LLM exports use.
 * Never included outside parser/.  docs/shapes.md describes the rules.
 */
#ifndef OXP_SHAPE_H
#define OXP_SHAPE_H

#include "parser/internal.h"

#define SH_MAX_RANK 64 /* a shape of higher rank is treated as unknown */
#define SH_MAX_DATA 64 /* elements of a small integer tensor whose values are tracked */

/* A tensor type while it is worked on: elem 0 = unknown, rank -1 = unknown; d[0..rank)
 * are the dims (kind UNKNOWN for an unknown dim, denotation always empty). */
typedef struct sh_type {
	int32_t elem;
	int32_t rank;
	oxp_dim d[SH_MAX_RANK];
} sh_type;

/* The values of a small integer (or bool, as 0/1) tensor of rank 0 or 1: each element is
 * a known integer (OXP_DIM_VALUE, any sign), a symbol (OXP_DIM_PARAM: the runtime size of
 * a named dim) or unknown.  rank 0 means n == 1. */
typedef struct sh_vals {
	int32_t rank;
	uint32_t n;
	oxp_dim v[SH_MAX_DATA];
} sh_vals;

typedef struct sh_data sh_data; /* stored copy of an sh_vals (shape.c) */
typedef struct sh_seq sh_seq;   /* stored element type of a sequence value (shape.c) */

/* Attribute lookups: absent (the caller applies the default), present and well-typed, or
 * present but unusable (wrong type, or a reference to a function attribute). */
enum { SH_BAD = -1, SH_ABSENT = 0, SH_OK = 1 };

/* The state of one inference run, and the node being inferred. */
typedef struct sh_ctx {
	oxp_dag *dag;
	oxp_error *err;
	sh_data **data;      /* per value: its small-integer values, NULL when not known */
	sh_seq **seq;        /* per value: the element type of a sequence, NULL when unknown */
	uint32_t *indeg;     /* per node: producers not yet inferred */
	uint32_t *qhead, *qtail; /* per scope: its ready queue in queue[first_node ..) */
	uint32_t *queue;
	int64_t *scope_opset;    /* per scope: version of the default ONNX domain, 0 unknown */
	uint8_t *scope_done;     /* per scope: every node it could order was inferred */
	uint32_t *function_scope; /* per model-local function: its scope */
	/* the node being inferred */
	uint32_t ni;
	const oxp_dnode *dn;
	const oxp_node *node;
	int64_t opset; /* opset of the node's domain (0 when not imported) */
} sh_ctx;

typedef oxp_code (*sh_rule)(sh_ctx *c);

typedef struct sh_op {
	const char *name;
	sh_rule infer; /* writes the outputs' types (and data) */
	sh_rule pre;   /* for nodes with subgraphs: types the subgraphs' inputs first; or NULL */
} sh_op;

/* The rule for an op of the default domain, NULL when there is none (shape_ops.c). */
const sh_op *oxp__sh_find_op(oxp_str op_type);
/* The same for the rules of shape_nn.c. */
const sh_op *oxp__sh_find_nn_op(oxp_str op_type);
/* The rules of shape_ms.c: onnxruntime's contrib ops (com.microsoft), and the ones it
 * registers under the ONNX domain (looked up when the default tables have none). */
const sh_op *oxp__sh_find_ms_op(oxp_str op_type);
const sh_op *oxp__sh_find_ort_onnx_op(oxp_str op_type);
/* MatMul's output shape (numpy matmul: rank-1 operands promoted, batch dims broadcast);
 * t->rank -1 when a rank is unknown.  t->elem is left to the caller. */
void oxp__sh_matmul_shape(sh_type *t, const sh_type *a, const sh_type *b);
/* Binary search of a table sorted by name (strcmp order). */
const sh_op *oxp__sh_table_find(const sh_op *table, size_t n, oxp_str name);

/* Return the code of an expression when it is not OXP_OK. */
#define SH_TRY(x)                                                                              \
	do {                                                                                       \
		oxp_code rc_ = (x);                                                                    \
		if (rc_ != OXP_OK)                                                                     \
			return rc_;                                                                        \
	} while (0)

/* ---- dims (shape.c) -------------------------------------------------------------------*/
static inline oxp_dim sh_dim_val(int64_t v)
{
	oxp_dim d = {0};
	d.kind = OXP_DIM_VALUE;
	d.value = v;
	return d;
}
static inline oxp_dim sh_dim_unk(void)
{
	oxp_dim d = {0};
	return d;
}
/* A known, non-negative dim size. */
static inline bool sh_known(oxp_dim d)
{
	return d.kind == OXP_DIM_VALUE && d.value >= 0;
}
static inline bool sh_is(oxp_dim d, int64_t v)
{
	return d.kind == OXP_DIM_VALUE && d.value == v;
}
/* Same known value, or same symbol. */
bool oxp__sh_dim_eq(oxp_dim a, oxp_dim b);
/* Broadcast two dims (numpy rules, symbols included); unknown when undecidable. */
oxp_dim oxp__sh_dim_broadcast(oxp_dim a, oxp_dim b);
/* a when both agree, else unknown (the type of a value that is either a or b). */
oxp_dim oxp__sh_dim_union(oxp_dim a, oxp_dim b);
/* Refine a with b: a when known, else b (two descriptions of the same dim). */
oxp_dim oxp__sh_dim_merge(oxp_dim a, oxp_dim b);
/* Sums and products of dims: known values with overflow checks, x+0, x*1 and 0*x kept
 * exact; otherwise unknown.  Sizes: negative results are unknown. */
oxp_dim oxp__sh_dim_add(oxp_dim a, oxp_dim b);
oxp_dim oxp__sh_dim_mul(oxp_dim a, oxp_dim b);
/* Checked int64 arithmetic: false on overflow. */
bool oxp__sh_add(int64_t a, int64_t b, int64_t *out);
bool oxp__sh_mul(int64_t a, int64_t b, int64_t *out);

/* ---- types ----------------------------------------------------------------------------*/
void oxp__sh_type_unknown(sh_type *t);
/* Broadcast a and b into out (out may alias a); false (out unknown-ranked) when a rank is
 * unknown. */
void oxp__sh_broadcast(sh_type *out, const sh_type *a, const sh_type *b);
/* Normalize an axis against rank (negative counts from the end): false when out of range. */
bool oxp__sh_axis(int64_t axis, int32_t rank, int32_t *out);

/* The type of a value that is either a or b (out may alias either). */
void oxp__sh_type_union(sh_type *out, const sh_type *a, const sh_type *b);
/* Normalize n axes against rank into out[] (negative ones count from the end, in every
 * opset: runtimes accept them so): false when one is out of range or repeats. */
bool oxp__sh_norm_axes(const int64_t *axes, size_t n, int32_t rank, int32_t *out);
/* Whether axis is among axes[0..n). */
bool oxp__sh_axis_listed(const int32_t *axes, size_t n, int32_t axis);

/* ---- the node being inferred ----------------------------------------------------------*/
size_t oxp__sh_nin(const sh_ctx *c);
size_t oxp__sh_nout(const sh_ctx *c);
/* Whether input i is given (not omitted, not past the end). */
bool oxp__sh_has_in(const sh_ctx *c, size_t i);
/* The best known type of input i (declared dims first, inferred ones filling the gaps);
 * false with an unknown type when the input is not given. */
bool oxp__sh_in(const sh_ctx *c, size_t i, sh_type *out);
/* Write output i's inferred type (nothing when it is wholly unknown). */
OXP_CHECK oxp_code oxp__sh_out(sh_ctx *c, size_t i, const sh_type *t);
/* The values of input i when known (rank <= 1, at most SH_MAX_DATA elements). */
bool oxp__sh_in_vals(sh_ctx *c, size_t i, sh_vals *out);
/* Input i as a list of known integers (at most cap); false when any is unknown. */
bool oxp__sh_in_ints(sh_ctx *c, size_t i, int64_t *out, size_t cap, size_t *n);
/* Record output i's values. */
OXP_CHECK oxp_code oxp__sh_out_vals(sh_ctx *c, size_t i, const sh_vals *v);
/* Small integer matrices (rank 2, rows * cols <= SH_MAX_DATA, row-major in v->v; v->rank is
 * 2): only Reshape, Slice and Transpose carry them, for PyTorch's pads (Concat -> Reshape
 * [-1, 2] -> Slice reversed -> Transpose -> Reshape [-1] -> Pad).  oxp__sh_in_vals never
 * returns one. */
bool oxp__sh_in_matrix(sh_ctx *c, size_t i, sh_vals *out, uint32_t *cols);
OXP_CHECK oxp_code oxp__sh_out_matrix(sh_ctx *c, size_t i, const sh_vals *v, uint32_t cols);
/* Sequences (kept here only: oxp_value_type describes tensors).  The element type of
 * sequence input i (declared first); *empty tells a sequence known to hold nothing. */
bool oxp__sh_in_seq(const sh_ctx *c, size_t i, sh_type *elem, bool *empty);
/* Record output i as a sequence of elements of type elem. */
OXP_CHECK oxp_code oxp__sh_out_seq(sh_ctx *c, size_t i, const sh_type *elem, bool empty);
/* The constant tensor feeding input i (initializer, or a Constant node's `value`), else
 * NULL. */
const oxp_tensor *oxp__sh_in_const(const sh_ctx *c, size_t i);
/* Read a tensor's values as sh_vals (integer or bool dtypes, rank <= 1, small). */
bool oxp__sh_tensor_vals(const oxp_tensor *t, sh_vals *out);

/* Whether the node's opset is below version (0, "not imported", is below all). */
static inline bool sh_before(const sh_ctx *c, int64_t version)
{
	return c->opset < version;
}
/* Output 0 gets input 0's type (the rule of most elementwise ops). */
oxp_code oxp__sh_rule_same(sh_ctx *c);

/* Attributes of the node (first occurrence of a name wins). */
const oxp_attr *oxp__sh_attr(const sh_ctx *c, const char *name, int *status);
int oxp__sh_attr_int(const sh_ctx *c, const char *name, int64_t *out);
int oxp__sh_attr_float(const sh_ctx *c, const char *name, double *out);
int oxp__sh_attr_ints(const sh_ctx *c, const char *name, const int64_t **v, size_t *n);
int oxp__sh_attr_floats(const sh_ctx *c, const char *name, const float **v, size_t *n);
int oxp__sh_attr_str(const sh_ctx *c, const char *name, oxp_str *out);
/* An INT attribute with a default: false when present but unusable. */
bool oxp__sh_attr_int_or(const sh_ctx *c, const char *name, int64_t def, int64_t *out);

/* The best known type of any value (as oxp__sh_in). */
void oxp__sh_value_type(const oxp_dag *dag, uint32_t vi, sh_type *out);
/* Write value vi's inferred type. */
OXP_CHECK oxp_code oxp__sh_set_value(sh_ctx *c, uint32_t vi, const sh_type *t);

#endif /* OXP_SHAPE_H */
