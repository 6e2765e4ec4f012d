/*
 * style.c — how boxes look: op families and colours, display text from model bytes, text
 * widths, the rows of an op box (header, name, key attributes), folded tensor rows and
 * edge shape labels.
 */
#include "render/internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------
 * Families
 */
typedef struct famop {
	const char *op;
	uint8_t fam;
} famop;

static const famop famops[] = {
    {"Conv", FAM_CONV}, {"ConvTranspose", FAM_CONV}, {"ConvInteger", FAM_CONV},
    {"QLinearConv", FAM_CONV}, {"DeformConv", FAM_CONV}, {"FusedConv", FAM_CONV},
    {"MatMul", FAM_LINEAR}, {"Gemm", FAM_LINEAR}, {"MatMulInteger", FAM_LINEAR},
    {"QLinearMatMul", FAM_LINEAR}, {"Einsum", FAM_LINEAR}, {"MatMulNBits", FAM_LINEAR},
    {"FusedMatMul", FAM_LINEAR}, {"FusedGemm", FAM_LINEAR},
    {"Relu", FAM_ACT}, {"LeakyRelu", FAM_ACT}, {"PRelu", FAM_ACT}, {"Sigmoid", FAM_ACT},
    {"Tanh", FAM_ACT}, {"Elu", FAM_ACT}, {"Selu", FAM_ACT}, {"Celu", FAM_ACT},
    {"Gelu", FAM_ACT}, {"FastGelu", FAM_ACT}, {"BiasGelu", FAM_ACT}, {"HardSigmoid", FAM_ACT},
    {"HardSwish", FAM_ACT}, {"Softplus", FAM_ACT}, {"Softsign", FAM_ACT},
    {"ThresholdedRelu", FAM_ACT}, {"Mish", FAM_ACT}, {"Swish", FAM_ACT}, {"Clip", FAM_ACT},
    {"Shrink", FAM_ACT}, {"QuickGelu", FAM_ACT},
    {"BatchNormalization", FAM_NORM}, {"LayerNormalization", FAM_NORM},
    {"InstanceNormalization", FAM_NORM}, {"GroupNormalization", FAM_NORM},
    {"LpNormalization", FAM_NORM}, {"MeanVarianceNormalization", FAM_NORM}, {"LRN", FAM_NORM},
    {"RMSNormalization", FAM_NORM}, {"SimplifiedLayerNormalization", FAM_NORM},
    {"SkipLayerNormalization", FAM_NORM}, {"SkipSimplifiedLayerNormalization", FAM_NORM},
    {"MaxPool", FAM_POOL}, {"AveragePool", FAM_POOL}, {"GlobalAveragePool", FAM_POOL},
    {"GlobalMaxPool", FAM_POOL}, {"LpPool", FAM_POOL}, {"GlobalLpPool", FAM_POOL},
    {"MaxRoiPool", FAM_POOL}, {"RoiAlign", FAM_POOL}, {"MaxUnpool", FAM_POOL},
    {"Softmax", FAM_ATTN}, {"LogSoftmax", FAM_ATTN}, {"Hardmax", FAM_ATTN},
    {"Attention", FAM_ATTN}, {"MultiHeadAttention", FAM_ATTN}, {"GroupQueryAttention", FAM_ATTN},
    {"Add", FAM_MATH}, {"Sub", FAM_MATH}, {"Mul", FAM_MATH}, {"Div", FAM_MATH},
    {"Pow", FAM_MATH}, {"Sqrt", FAM_MATH}, {"Exp", FAM_MATH}, {"Log", FAM_MATH},
    {"Neg", FAM_MATH}, {"Abs", FAM_MATH}, {"Reciprocal", FAM_MATH}, {"Floor", FAM_MATH},
    {"Ceil", FAM_MATH}, {"Round", FAM_MATH}, {"Sign", FAM_MATH}, {"Mod", FAM_MATH},
    {"Max", FAM_MATH}, {"Min", FAM_MATH}, {"Mean", FAM_MATH}, {"Sum", FAM_MATH},
    {"Sin", FAM_MATH}, {"Cos", FAM_MATH}, {"Tan", FAM_MATH}, {"Asin", FAM_MATH},
    {"Acos", FAM_MATH}, {"Atan", FAM_MATH}, {"Sinh", FAM_MATH}, {"Cosh", FAM_MATH},
    {"Erf", FAM_MATH}, {"BitShift", FAM_MATH}, {"And", FAM_MATH}, {"Or", FAM_MATH},
    {"Xor", FAM_MATH}, {"Not", FAM_MATH}, {"Equal", FAM_MATH}, {"Less", FAM_MATH},
    {"Greater", FAM_MATH}, {"LessOrEqual", FAM_MATH}, {"GreaterOrEqual", FAM_MATH},
    {"Where", FAM_MATH}, {"IsNaN", FAM_MATH}, {"IsInf", FAM_MATH}, {"CumSum", FAM_MATH},
    {"Det", FAM_MATH}, {"BitwiseAnd", FAM_MATH}, {"BitwiseOr", FAM_MATH},
    {"BitwiseXor", FAM_MATH}, {"BitwiseNot", FAM_MATH},
    {"ReduceSum", FAM_REDUCE}, {"ReduceMean", FAM_REDUCE}, {"ReduceMax", FAM_REDUCE},
    {"ReduceMin", FAM_REDUCE}, {"ReduceProd", FAM_REDUCE}, {"ReduceL1", FAM_REDUCE},
    {"ReduceL2", FAM_REDUCE}, {"ReduceLogSum", FAM_REDUCE}, {"ReduceLogSumExp", FAM_REDUCE},
    {"ReduceSumSquare", FAM_REDUCE}, {"ArgMax", FAM_REDUCE}, {"ArgMin", FAM_REDUCE},
    {"TopK", FAM_REDUCE},
    {"Reshape", FAM_SHAPE}, {"Transpose", FAM_SHAPE}, {"Flatten", FAM_SHAPE},
    {"Squeeze", FAM_SHAPE}, {"Unsqueeze", FAM_SHAPE}, {"Concat", FAM_SHAPE},
    {"Split", FAM_SHAPE}, {"Slice", FAM_SHAPE}, {"Gather", FAM_SHAPE},
    {"GatherElements", FAM_SHAPE}, {"GatherND", FAM_SHAPE}, {"Scatter", FAM_SHAPE},
    {"ScatterElements", FAM_SHAPE}, {"ScatterND", FAM_SHAPE}, {"Expand", FAM_SHAPE},
    {"Tile", FAM_SHAPE}, {"Pad", FAM_SHAPE}, {"Shape", FAM_SHAPE}, {"Size", FAM_SHAPE},
    {"Identity", FAM_SHAPE}, {"Cast", FAM_SHAPE}, {"CastLike", FAM_SHAPE},
    {"DepthToSpace", FAM_SHAPE}, {"SpaceToDepth", FAM_SHAPE}, {"Resize", FAM_SHAPE},
    {"Upsample", FAM_SHAPE}, {"Compress", FAM_SHAPE}, {"NonZero", FAM_SHAPE},
    {"Range", FAM_SHAPE}, {"OneHot", FAM_SHAPE}, {"Trilu", FAM_SHAPE}, {"Unique", FAM_SHAPE},
    {"EyeLike", FAM_SHAPE}, {"ReverseSequence", FAM_SHAPE}, {"GridSample", FAM_SHAPE},
    {"Constant", FAM_CONST}, {"ConstantOfShape", FAM_CONST},
    {"If", FAM_CONTROL}, {"Loop", FAM_CONTROL}, {"Scan", FAM_CONTROL},
    {"QuantizeLinear", FAM_QUANT}, {"DequantizeLinear", FAM_QUANT},
    {"DynamicQuantizeLinear", FAM_QUANT}, {"QLinearAdd", FAM_QUANT}, {"QLinearMul", FAM_QUANT},
    {"QLinearSigmoid", FAM_QUANT}, {"QLinearLeakyRelu", FAM_QUANT},
    {"QLinearAveragePool", FAM_QUANT}, {"QLinearGlobalAveragePool", FAM_QUANT},
    {"QLinearConcat", FAM_QUANT}, {"DynamicQuantizeMatMul", FAM_QUANT},
    {"LSTM", FAM_RNN}, {"GRU", FAM_RNN}, {"RNN", FAM_RNN},
    {"SequenceConstruct", FAM_SEQ}, {"SequenceAt", FAM_SEQ}, {"SequenceEmpty", FAM_SEQ},
    {"SequenceInsert", FAM_SEQ}, {"SequenceErase", FAM_SEQ}, {"SequenceLength", FAM_SEQ},
    {"SplitToSequence", FAM_SEQ}, {"ConcatFromSequence", FAM_SEQ}, {"Optional", FAM_SEQ},
    {"OptionalGetElement", FAM_SEQ}, {"OptionalHasElement", FAM_SEQ}, {"SequenceMap", FAM_SEQ},
    {"Dropout", FAM_RANDOM}, {"RandomNormal", FAM_RANDOM}, {"RandomUniform", FAM_RANDOM},
    {"RandomNormalLike", FAM_RANDOM}, {"RandomUniformLike", FAM_RANDOM},
    {"Bernoulli", FAM_RANDOM}, {"Multinomial", FAM_RANDOM},
};

uint8_t oxr__op_family(oxp_str domain, oxp_str op)
{
	for (size_t i = 0; i < sizeof(famops) / sizeof(famops[0]); i++)
		if (oxp_str_eq(op, famops[i].op))
			return famops[i].fam;
	bool std = domain.len == 0 || oxp_str_eq(domain, "ai.onnx");
	return std ? FAM_OTHER : FAM_CUSTOM;
}

const char *oxr__family_name(uint8_t fam)
{
	static const char *const names[FAM__COUNT] = {
	    "other", "conv",   "linear",  "activation", "normalization", "pool",  "attention",
	    "math",  "reduce", "shape",   "constant",   "control",       "quant", "recurrent",
	    "sequence", "random", "custom", "io", "group"};
	return fam < FAM__COUNT ? names[fam] : "other";
}

const char *oxr__family_color(uint8_t fam)
{
	static const char *const colors[FAM__COUNT] = {
	    "#5b6470", "#2f6fb5", "#1f4e8c", "#b5432f", "#3a8a4f", "#1d8080", "#7a4fb0",
	    "#56606d", "#8a6d1d", "#8c5a8c", "#8d8d8d", "#c06f12", "#a05a2c", "#b03a6f",
	    "#4f7f9f", "#6f6f6f", "#9a7d00", "#2b2b2b", "#34495e"};
	return fam < FAM__COUNT ? colors[fam] : colors[0];
}

/* ---------------------------------------------------------------------------------------
 * Shapes and tensors as text
 */
#define TIMES "\xc3\x97" /* × */

const char *oxr__shape_text(oxp_arena *a, const oxp_value *val)
{
	const oxp_value_type *ty = oxp_value_best_type(val);
	if (ty->source == OXP_SHAPE_NONE || ty->rank < 0)
		return NULL;
	char tb[256];
	oxp_textbuf t = {.b = tb, .size = sizeof(tb)};
	tb[0] = '\0';
	if (ty->elem_type != 0 && ty->elem_type != OXP_DT_FLOAT)
		oxp_textbuf_printf(&t, "%s ", oxp_dtype_short(ty->elem_type));
	if (ty->rank == 0)
		oxp_textbuf_printf(&t, "scalar");
	for (int32_t i = 0; i < ty->rank; i++) {
		if (i == 8 && ty->rank > 9) {
			oxp_textbuf_printf(&t, TIMES "\xe2\x80\xa6(%" PRId32 ")", ty->rank);
			break;
		}
		const oxp_dim *d = &ty->dims[i];
		if (i)
			oxp_textbuf_printf(&t, TIMES);
		if (d->kind == OXP_DIM_VALUE && d->value >= 0)
			oxp_textbuf_printf(&t, "%" PRId64, d->value);
		else if (d->kind == OXP_DIM_PARAM) {
			const char *p = oxr__text(a, d->param, 12);
			oxp_textbuf_printf(&t, "%s", p);
		} else
			oxp_textbuf_printf(&t, "?");
	}
	return oxp_arena_strndup(a, tb, t.n);
}

/* The value of element i as text into t. */
static void put_scalar(oxp_textbuf *t, const oxp_scalar *x)
{
	switch (x->cls) {
	case OXP_VC_FLOAT:
		oxp_textbuf_printf(t, "%.4g", x->v.f);
		break;
	case OXP_VC_INT:
		oxp_textbuf_printf(t, "%" PRId64, x->v.i);
		break;
	case OXP_VC_UINT:
		oxp_textbuf_printf(t, "%" PRIu64, x->v.u);
		break;
	case OXP_VC_BOOL:
		oxp_textbuf_printf(t, "%s", x->v.b ? "true" : "false");
		break;
	default:
		oxp_textbuf_printf(t, "?");
		break;
	}
}

const char *oxr__tensor_row(oxp_arena *a, const char *label, const oxp_tensor *t)
{
	char bb[256];
	oxp_textbuf b = {.b = bb, .size = sizeof(bb)};
	bb[0] = '\0';
	oxp_scalar one;
	if (t->ndims == 0 && t->storage != OXP_STORE_EXTERNAL && t->data_type != OXP_DT_STRING &&
	    oxp_tensor_read(t, NULL, 0, 0, 1, &one, NULL) == OXP_OK) {
		oxp_textbuf_printf(&b, "%s = ", label);
		put_scalar(&b, &one);
		oxp_textbuf_printf(&b, " %s", oxp_dtype_short(t->data_type));
		return oxp_arena_strndup(a, bb, b.n);
	}
	oxp_textbuf_printf(&b, "%s \xe2\x9f\xa8", label); /* ⟨ */
	oxp_textbuf_dims(&b, t->dims, t->ndims);
	oxp_textbuf_printf(&b, "\xe2\x9f\xa9 %s", oxp_dtype_short(t->data_type)); /* ⟩ */
	if (t->storage == OXP_STORE_EXTERNAL)
		oxp_textbuf_printf(&b, " ext");
	/* small tensors (shapes, axes, scalars) show their values */
	uint64_t count;
	oxp_scalar vals[8];
	if (oxp_dims_count(t->dims, t->ndims, &count) && count > 0 && count <= 8 &&
	    t->storage != OXP_STORE_EXTERNAL && t->data_type != OXP_DT_STRING &&
	    oxp_tensor_read(t, NULL, 0, 0, (size_t)count, vals, NULL) == OXP_OK) {
		oxp_textbuf_printf(&b, " = [");
		for (uint64_t i = 0; i < count; i++) {
			if (i)
				oxp_textbuf_printf(&b, ",");
			put_scalar(&b, &vals[i]);
		}
		oxp_textbuf_printf(&b, "]");
	}
	return oxp_arena_strndup(a, bb, b.n);
}

/* ---------------------------------------------------------------------------------------
 * Input labels (for folded rows): the schema's names (parser/schema.c)
 */
const char *oxr__input_label(view *v, uint32_t node, size_t k)
{
	char buf[96];
	const char *l = oxp_dag_port_label(v->d, node, false, k, buf, sizeof(buf));
	return l != NULL ? oxr__text(v->arena, (oxp_str){l, strlen(l)}, 40) : NULL;
}

/* ---------------------------------------------------------------------------------------
 * Op rows
 */
bool oxr__add_row(view *v, vbox *b, row_style style, const char *text)
{
	if (text == NULL)
		return false;
	if (b->nrows % 8 == 0) {
		vrow *nr = oxp_arena_array(v->arena, b->nrows + 8, sizeof(vrow));
		if (nr == NULL)
			return false;
		if (b->nrows)
			memcpy(nr, b->rows, b->nrows * sizeof(vrow));
		b->rows = nr;
	}
	b->rows[b->nrows].text = text;
	b->rows[b->nrows].style = style;
	b->rows[b->nrows].value = OXP_NONE;
	b->nrows++;
	return true;
}

static const char *const key_attrs[] = {
    "kernel_shape", "strides", "pads", "dilations", "group", "auto_pad", "output_padding",
    "ceil_mode", "transA", "transB", "alpha", "beta", "perm", "axis", "axes", "keepdims",
    "allowzero", "to", "mode", "coordinate_transformation_mode", "epsilon", "hidden_size",
    "direction", "blocksize", "equation", "approximate", "min", "max", "split",
    "num_outputs", "starts", "ends", "largest", "sorted", "detect_negative", "k",
    "noop_with_empty_axes", "storage_order", "count_include_pad", "upper", "select_last_index",
};

static bool is_key_attr(oxp_str name)
{
	for (size_t i = 0; i < sizeof(key_attrs) / sizeof(key_attrs[0]); i++)
		if (oxp_str_eq(name, key_attrs[i]))
			return true;
	return false;
}

/* The attribute holds its default (then the key-attribute rows leave it out): the schema's,
 * or for dilations all ones, the default the spec states in prose only. */
static bool default_valued(const oxp_dnode *dn, const oxp_attr *a)
{
	if (a->type == OXP_ATTR_INTS && oxp_str_eq(a->name, "dilations")) {
		for (size_t i = 0; i < a->nints; i++)
			if (a->ints[i] != 1)
				return false;
		return true;
	}
	if (dn->schema == NULL)
		return false;
	int32_t i = oxp_schema_find_attribute(dn->schema, a->name);
	oxp_schema_attr sa;
	return i >= 0 && oxp_schema_attribute(dn->schema, (uint32_t)i, &sa) &&
	       oxp_schema_attr_is_default(&sa, a);
}

static const char *attr_text(view *v, const oxp_attr *a)
{
	char val[256];
	return oxp_arena_printf(v->arena, "%s %s", oxr__text(v->arena, a->name, 28),
	                        oxp_attr_text(a, val, sizeof(val)));
}

const char *oxr__macs_text(view *v, const oxp_cost_poly *macs, const char *suffix)
{
	if (macs->flags || macs->nterms == 0)
		return NULL;
	char buf[160];
	oxp_cost_poly_format(v->cost, macs, 0, buf, sizeof(buf));
	return oxp_arena_printf(v->arena, "\xe2\x89\x88 %s MACs%s", buf, suffix);
}

oxr_code oxr__op_rows(view *v, uint32_t bi, oxr_error *err)
{
	vbox *b = &v->boxes[bi];
	const oxp_dnode *dn = &v->dv->nodes[b->node];
	const oxp_node *n = dn->proto;
	const char *op;
	bool std = n->domain.len == 0 || oxp_str_eq(n->domain, "ai.onnx");
	if (std) {
		op = oxr__text(v->arena, n->op_type, 40);
	} else {
		op = oxp_arena_printf(v->arena, "%s:%s", oxr__text(v->arena, n->domain, 24),
		                      oxr__text(v->arena, n->op_type, 40));
	}
	if (!oxr__add_row(v, b, ROW_HEADER, op))
		return oxr__fail(err, OXR_E_NOMEM, "out of memory");
	if (n->name.len > 0)
		oxr__add_row(v, b, ROW_NAME, oxr__text_tail(v->arena, n->name, 40));
	b->title = n->name.len ? oxr__text(v->arena, n->name, 200) : op;

	if (v->o.attrs == 0)
		return OXR_OK;
	size_t shown = 0;
	for (size_t i = 0; i < n->nattrs; i++) {
		const oxp_attr *a = &n->attrs[i];
		if (a->type == OXP_ATTR_GRAPH || a->type == OXP_ATTR_GRAPHS)
			continue; /* subgraphs get their own rows */
		if (v->o.attrs == 1) {
			bool key = is_key_attr(a->name) || oxp_str_eq(n->op_type, "Constant") ||
			           oxp_str_eq(n->op_type, "ConstantOfShape");
			if (!key || default_valued(dn, a) || shown >= 6)
				continue;
		} else if (shown >= 24) {
			oxr__add_row(v, b, ROW_ATTR, "\xe2\x80\xa6");
			break;
		}
		oxr__add_row(v, b, ROW_ATTR, attr_text(v, a));
		shown++;
	}
	/* attrs=all: the attributes the node leaves to their schema defaults, marked so */
	oxp_schema_attr sa;
	uint32_t i = 0;
	while (v->o.attrs == 2 && dn->schema != NULL &&
	       oxp_schema_next_left_default(dn->schema, n, &i, &sa)) {
		if (shown >= 24) {
			oxr__add_row(v, b, ROW_DEFAULT, "\xe2\x80\xa6");
			break;
		}
		char dv[64];
		oxp_schema_default_text(&sa, dv, sizeof(dv));
		oxr__add_row(v, b, ROW_DEFAULT,
		             oxp_arena_printf(v->arena, "%s %s", sa.name,
		                              oxr__text(v->arena, (oxp_str){dv, strlen(dv)}, 32)));
		shown++;
	}
	return OXR_OK;
}

/* ---------------------------------------------------------------------------------------
 * Sizes (points)
 */

void oxr__box_size(view *v, vbox *b)
{
	double w = 0, h = 0;
	for (uint32_t i = 0; i < b->nrows; i++) {
		vrow *r = &b->rows[i];
		bool hdr = r->style == ROW_HEADER;
		double size = hdr ? OXR_HDR_SIZE : OXR_ROW_SIZE;
		double tw = oxr__text_width(r->text, size, hdr);
		if (tw > OXR_MAX_W - 2 * OXR_PAD_X) {
			/* too long for the widest box: names keep their end ("…/layers.10/Softmax"),
			 * everything else its start */
			r->text = oxr__text_fit(v->arena, r->text, size, hdr, OXR_MAX_W - 2 * OXR_PAD_X,
			                        r->style == ROW_NAME);
			tw = oxr__text_width(r->text, size, hdr);
		}
		if (tw > w)
			w = tw;
		h += hdr ? OXR_HDR_H : OXR_ROW_H;
	}
	w += 2 * OXR_PAD_X;
	if (b->nrows > 0 && b->rows[0].style != ROW_HEADER)
		h += OXR_PAD_Y;
	h += OXR_PAD_Y;
	if (b->kind == BX_STUB_IN || b->kind == BX_STUB_OUT) {
		h = OXR_ROW_H + 4;
	}
	if (w < OXR_MIN_W)
		w = OXR_MIN_W;
	if (w > OXR_MAX_W)
		w = OXR_MAX_W;
	if (h < 18)
		h = 18;
	b->w = ceil(w);
	b->h = ceil(h);
}
