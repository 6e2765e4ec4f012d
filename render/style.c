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

/* ---------------------------------------------------------------------------------------
 * Palettes: the light theme (the default) and the dark one.  Which text lies on which
 * fill is internal.h's comment on oxr_palette; tests/unit/test_palette.c checks each pair
 * against WCAG 2's 4.5:1.  The light bands and grey rows were darkened where they fell
 * short of it (the green, grey, orange, steel and ochre bands; the name, tensor and
 * default rows).
 */
static const oxr_palette light = {
    .name = "light",
    .canvas = "#ffffff",
    .op_fill = "#ffffff", .op_stroke = "#7b8794",
    .input_fill = "#e8f0f8", .output_fill = "#eef6ea", .io_stroke = "#2b2b2b",
    .missing_stroke = "#c0392b",
    .tensor_fill = "#f7f3e8", .tensor_stroke = "#a08c5a",
    .stub_fill = "#f5f5f5", .stub_stroke = "#9aa3ad",
    .group_fill = "#f2f4f7", .group_stroke = "#34495e",
    .header = "#ffffff",
    .family = {"#5b6470", "#2f6fb5", "#1f4e8c", "#b5432f", "#37834b", "#1d8080", "#7a4fb0",
               "#56606d", "#8a6d1d", "#8c5a8c", "#757575", "#ab6310", "#a05a2c", "#b03a6f",
               "#4c7a99", "#6f6f6f", "#8c7200", "#2b2b2b", "#34495e"},
    .row = {[ROW_HEADER] = "#ffffff", [ROW_NAME] = "#575c68", [ROW_ATTR] = "#1f2933",
            [ROW_TENSOR] = "#755811", [ROW_SUB] = "#1f4e8c", [ROW_PLAIN] = "#1f2933",
            [ROW_BADGE] = "#8a3b12", [ROW_DEFAULT] = "#565c65"},
    .row_mark = "#fcd34d", .ring = "#f59e0b",
    .badge_fill = "#fdebd8", .badge_stroke = "#e8a86f",
    .mark_tint = {"#e6f4ea", "#fff3d6", "#fdecea"},
    .same_fill = "#f4f5f7", .same_band = "#6b7280",
    .edge = {[ED_DATA] = "#6b7280", [ED_OUTER] = "#8e44ad", [ED_SUB] = "#c06f12",
             [ED_STUB] = "#6b7280", [ED_READS] = "#9aa3ad"},
    .edge_label = "#4b5563",
    .scope_fill = "#f7f9fc", .scope_stroke = "#9fb3c8", .scope_text = "#334e68",
    .sub_fill = "#fdf6ec", .sub_stroke = "#c06f12", .sub_text = "#8a4b08",
    .legend_text = "#1f2933", .legend_note = "#4b5563",
};

/* Dark: GitHub-dark-like greys; the bands keep their hues (a family is found by its
 * colour in both themes) under white text, rows are light on dark fills. */
static const oxr_palette dark = {
    .name = "dark",
    .canvas = "#0f1419",
    .op_fill = "#1c232b", .op_stroke = "#6b7685",
    .input_fill = "#172636", .output_fill = "#182a1e", .io_stroke = "#c9d1d9",
    .missing_stroke = "#f87171",
    .tensor_fill = "#29241a", .tensor_stroke = "#a08c5a",
    .stub_fill = "#22272e", .stub_stroke = "#6b7685",
    .group_fill = "#1f2833", .group_stroke = "#8fa3b8",
    .header = "#ffffff",
    .family = {"#5b6470", "#2f6fb5", "#1f4e8c", "#b5432f", "#37834b", "#1d8080", "#7a4fb0",
               "#56606d", "#8a6d1d", "#8c5a8c", "#757575", "#ab6310", "#a05a2c", "#b03a6f",
               "#4c7a99", "#6f6f6f", "#8c7200", "#3d4450", "#34495e"},
    .row = {[ROW_HEADER] = "#ffffff", [ROW_NAME] = "#aab4c0", [ROW_ATTR] = "#e5e7eb",
            [ROW_TENSOR] = "#e3c57d", [ROW_SUB] = "#93bbf0", [ROW_PLAIN] = "#e5e7eb",
            [ROW_BADGE] = "#f4a777", [ROW_DEFAULT] = "#a3acb8"},
    .row_mark = "#4a3a0c", .ring = "#f59e0b",
    .badge_fill = "#3a2616", .badge_stroke = "#a0643a",
    .mark_tint = {"#13301d", "#352b12", "#3b1b1a"},
    .same_fill = "#171c22", .same_band = "#4b5563",
    .edge = {[ED_DATA] = "#8b95a3", [ED_OUTER] = "#b07cc6", [ED_SUB] = "#d08a3a",
             [ED_STUB] = "#8b95a3", [ED_READS] = "#5f6977"},
    .edge_label = "#aab4c0",
    .scope_fill = "#151b22", .scope_stroke = "#3e4c5a", .scope_text = "#b9c7d6",
    .sub_fill = "#211b12", .sub_stroke = "#c06f12", .sub_text = "#e7a95e",
    .legend_text = "#e5e7eb", .legend_note = "#aab4c0",
};

const oxr_palette *oxr__palette(bool is_dark)
{
	return is_dark ? &dark : &light;
}

const char *oxr__family_color(uint8_t fam)
{
	return light.family[fam < FAM__COUNT ? fam : 0];
}

/* The heat scale: magma's colours (matplotlib, perceptually uniform and readable with the
 * common colour-vision deficiencies) from its light end (cold) to 0.2 (hot), leaving out
 * the near-black end. */
static const unsigned char ramp[9][3] = {
    {0xfc, 0xfd, 0xbf}, {0xfe, 0xcf, 0x92}, {0xfe, 0x9f, 0x6d}, {0xf7, 0x70, 0x5c},
    {0xde, 0x49, 0x68}, {0xb7, 0x37, 0x79}, {0x8c, 0x29, 0x81}, {0x64, 0x1a, 0x80},
    {0x3b, 0x0f, 0x70}};

void oxr__heat_color(double t, unsigned char rgb[3])
{
	if (!(t > 0))
		t = 0;
	if (t > 1)
		t = 1;
	double x = t * 8;
	int i = (int)floor(x);
	if (i >= 8)
		i = 7;
	double f = x - i;
	for (int k = 0; k < 3; k++)
		rgb[k] = (unsigned char)lround(ramp[i][k] + (ramp[i + 1][k] - ramp[i][k]) * f);
}

const char *oxr__heat_text(const unsigned char rgb[3])
{
	/* relative luminance L (sRGB, linearised): white contrasts 1.05/(L+0.05), black
	 * (L+0.05)/0.05; they are equal at L = 0.179, where both are 4.58:1 */
	double l = 0, w[3] = {0.2126, 0.7152, 0.0722};
	for (int k = 0; k < 3; k++) {
		double c = rgb[k] / 255.0;
		c = c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4);
		l += w[k] * c;
	}
	return 1.05 / (l + 0.05) > (l + 0.05) / 0.05 ? "#ffffff" : "#000000";
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
