/*
 * test_cost.c — parser/cost.c: hand-computed MACs, other ops, parameters and bytes for every
 * op family of docs/cost.md, on one-node models written here field by field (onnx.proto
 * numbers); symbolic figures, bindings, the bounds of the polynomials and the markers for
 * overflowing shapes and custom domains.
 *
 * A model is described in a few strings: graph inputs and initializers "NAME:ELEM:DIMS"
 * (DIMS comma-separated numbers or dim_param symbols, "" a scalar), nodes as
 * "OP(in,in)->out,out" with attributes "name=1", "name=1,2" (ints), "name='text'".
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <jansson.h>

#include "render/oxr.h"
#include "tests/unit/support_pbw.h"

bool oxp__cost_table_sorted(void); /* parser/cost.c, for this test */

/* ---------------------------------------------------------------------------------------
 * Writing the models
 */
typedef struct mb {
	pbw g;
} mb;

static void nest(pbw *parent, uint32_t field, pbw *child)
{
	pbw_bytes(parent, field, child->p, child->len);
	pbw_free(child);
}

/* The next comma-separated field of *s into buf (false at the end). */
static bool next_dim(const char **s, char *buf, size_t size)
{
	if (**s == '\0')
		return false;
	size_t n = strcspn(*s, ",");
	snprintf(buf, size, "%.*s", (int)n, *s);
	*s += n + ((*s)[n] == ',');
	return true;
}

/* TypeProto.tensor_type with a shape from "1,N,3" ("" a scalar): numbers are dim_value,
 * other text dim_param. */
static void tensor_type(pbw *tp, int elem, const char *dims)
{
	pbw tt = {0}, sh = {0};
	pbw_int(&tt, 1, (uint64_t)elem);
	char d[64];
	for (const char *s = dims; next_dim(&s, d, sizeof(d));) {
		pbw one = {0};
		if (d[0] >= '0' && d[0] <= '9')
			pbw_int(&one, 1, strtoull(d, NULL, 10));
		else
			pbw_str(&one, 2, d);
		nest(&sh, 1, &one);
	}
	pbw_bytes(&tt, 2, sh.p, sh.len); /* present even when empty: a scalar */
	pbw_free(&sh);
	nest(tp, 1, &tt);
}

/* A graph input (field 11) or output (12): ValueInfoProto. */
static void io(mb *m, uint32_t field, const char *name, int elem, const char *dims)
{
	pbw vi = {0}, tp = {0};
	pbw_str(&vi, 1, name);
	tensor_type(&tp, elem, dims);
	nest(&vi, 2, &tp);
	nest(&m->g, field, &vi);
}

static void in(mb *m, const char *name, int elem, const char *dims)
{
	io(m, 11, name, elem, dims);
}

/* An initializer with dims only (its values do not matter to the cost), or with int64 /
 * float values when given. */
static void init_v(mb *m, const char *name, int elem, const char *dims, const void *raw,
                   size_t rawlen)
{
	int64_t d[16];
	size_t nd = 0;
	char one[64];
	for (const char *s = dims; nd < 16 && next_dim(&s, one, sizeof(one));)
		d[nd++] = strtoll(one, NULL, 10);
	pbw t = {0};
	pbw_tensor_head(&t, d, nd, elem);
	pbw_str(&t, 8, name);
	if (raw != NULL)
		pbw_bytes(&t, 9, raw, rawlen);
	nest(&m->g, 5, &t);
}

static void init(mb *m, const char *name, int elem, const char *dims)
{
	init_v(m, name, elem, dims, NULL, 0);
}

/* "OP(a,,b)->y,z" in domain dom, attributes as NULL-terminated "k=v" strings; a node name
 * before a '|' ("/layers.0/MatMul|MatMul(a,b)->y"). */
static void node(mb *m, const char *dom, const char *spec, ...)
{
	pbw n = {0};
	const char *bar = strchr(spec, '|');
	if (bar != NULL) {
		pbw_bytes(&n, 3, spec, (size_t)(bar - spec));
		spec = bar + 1;
	}
	const char *open = strchr(spec, '('), *close = strchr(spec, ')');
	assert_non_null(open);
	assert_non_null(close);
	for (int side = 0; side < 2; side++) {
		const char *s = side ? close + 3 : open + 1;
		const char *end = side ? s + strlen(s) : close;
		while (s <= end && s < end + (side == 0)) {
			const char *e = memchr(s, ',', (size_t)(end - s));
			if (e == NULL)
				e = end;
			pbw_bytes(&n, side ? 2 : 1, s, (size_t)(e - s));
			s = e + 1;
			if (e == end)
				break;
		}
	}
	pbw_bytes(&n, 4, spec, (size_t)(open - spec));
	if (dom != NULL)
		pbw_str(&n, 7, dom);
	va_list ap;
	va_start(ap, spec);
	for (const char *a = va_arg(ap, const char *); a != NULL; a = va_arg(ap, const char *)) {
		pbw at = {0};
		const char *eq = strchr(a, '=');
		assert_non_null(eq);
		pbw_bytes(&at, 1, a, (size_t)(eq - a));
		const char *v = eq + 1;
		if (v[0] == '\'') {
			pbw_bytes(&at, 4, v + 1, strlen(v) - 2);
			pbw_int(&at, 20, 3);
		} else if (strchr(v, ',') != NULL || v[0] == '[') {
			for (const char *q = v + (v[0] == '['); *q && *q != ']';) {
				char *e;
				pbw_int(&at, 8, (uint64_t)strtoll(q, &e, 10));
				q = *e == ',' ? e + 1 : e;
			}
			pbw_int(&at, 20, 7);
		} else {
			pbw_int(&at, 3, (uint64_t)strtoll(v, NULL, 10));
			pbw_int(&at, 20, 2);
		}
		nest(&n, 5, &at);
	}
	va_end(ap);
	nest(&m->g, 1, &n);
}

#define ONNX NULL
#define MS "com.microsoft"
#define END NULL
enum { F = OXP_DT_FLOAT, U8 = OXP_DT_UINT8, I8 = OXP_DT_INT8, I32 = OXP_DT_INT32,
       I64 = OXP_DT_INT64 };

typedef struct built {
	pbw bytes;
	oxp_model *m;
	oxp_dag *d;
	oxp_arena *a;
	const oxp_cost *c;
} built;

/* Finish the graph into a model (opsets: default 23, com.microsoft 1, my.domain 1), link it
 * with shape inference and cost it (dims: a binding or NULL). */
static void build(built *b, mb *m, const char *dims)
{
	memset(b, 0, sizeof(*b));
	pbw_str(&m->g, 2, "g");
	pbw_int(&b->bytes, 1, 9);
	const char *doms[] = {"", "com.microsoft", "my.domain"};
	const uint64_t vers[] = {23, 1, 1};
	for (int i = 0; i < 3; i++) {
		pbw op = {0};
		pbw_str(&op, 1, doms[i]);
		pbw_int(&op, 2, vers[i]);
		nest(&b->bytes, 8, &op);
	}
	nest(&b->bytes, 7, &m->g);
	oxp_error e;
	if (oxp_model_parse(&b->m, b->bytes.p, b->bytes.len, NULL, &e) != OXP_OK)
		fail_msg("parse: %s", e.message);
	oxp_dag_options o = {.infer_shapes = true};
	if (oxp_dag_build(&b->d, b->m, &o, &e) != OXP_OK)
		fail_msg("link: %s", e.message);
	b->a = oxp_arena_new((size_t)64 << 20);
	static oxp_cost_bind bind;
	if (dims != NULL)
		assert_int_equal(oxp_cost_bind_parse(&bind, dims, &e), OXP_OK);
	assert_int_equal(oxp_cost_compute(b->d, b->a, dims ? &bind : NULL, &b->c, &e), OXP_OK);
}

static void unbuild(built *b)
{
	oxp_arena_free(b->a);
	oxp_dag_free(b->d);
	oxp_model_free(b->m);
	pbw_free(&b->bytes);
}

static int64_t num(const oxp_cost_poly *p)
{
	int64_t v = -1;
	if (!oxp_cost_poly_number(p, &v))
		fail_msg("not a number (flags %u, %u terms)", p->flags, p->nterms);
	return v;
}

static const char *fmt(const built *b, const oxp_cost_poly *p)
{
	static char buf[512];
	return oxp_cost_poly_format(b->c, p, OXP_COST_FMT_EXACT, buf, sizeof(buf));
}

/* The one model of a test: its node n (by position). */
static const oxp_cost_node *nd(const built *b, uint32_t n)
{
	assert_true(n < b->c->nnodes);
	return &b->c->nodes[n];
}

/* ---------------------------------------------------------------------------------------
 * Convolution, matrix products
 */

/* Conv, 2 groups, dilation 2, bias: Y [1,16,6,6] (10 - 2 x (3 - 1) = 6); MACs = elements
 * of Y x C/group x kernel = 576 x 4 x 9; one bias add per element of Y. */
static void test_conv_groups_dilation(void **state)
{
	(void)state;
	mb m = {0};
	in(&m, "x", F, "1,8,10,10");
	init(&m, "W", F, "16,4,3,3");
	init(&m, "B", F, "16");
	node(&m, ONNX, "Conv(x,W,B)->y", "group=2", "dilations=2,2", "kernel_shape=3,3", END);
	built b;
	build(&b, &m, NULL);
	const oxp_cost_node *n = nd(&b, 0);
	assert_int_equal(n->kind, OXP_CK_COUNTED);
	assert_string_equal(n->family, "conv");
	assert_int_equal(num(&n->macs), 576 * 4 * 9);
	assert_int_equal(num(&n->ops), 576);
	assert_int_equal(n->params.elements, 576 + 16);
	assert_int_equal(n->params.bytes, (576 + 16) * 4);
	assert_int_equal(num(&n->read), 800 * 4);
	assert_int_equal(num(&n->written), 576 * 4);
	oxp_cost_poly fl;
	oxp_cost_flops(&fl, &b.c->total.macs, &b.c->total.ops);
	assert_int_equal(num(&fl), 2 * 576 * 4 * 9 + 576);
	unbuild(&b);
}

/* ConvTranspose: MACs = elements of X x C_out/group x kernel = 100 x 2 x 9. */
static void test_conv_transpose(void **state)
{
	(void)state;
	mb m = {0};
	in(&m, "x", F, "1,4,5,5");
	init(&m, "W", F, "4,2,3,3");
	node(&m, ONNX, "ConvTranspose(x,W)->y", END);
	built b;
	build(&b, &m, NULL);
	assert_int_equal(num(&nd(&b, 0)->macs), 100 * 2 * 9);
	assert_int_equal(num(&nd(&b, 0)->ops), 0);
	unbuild(&b);
}

/* Gemm with transB and C: M x N x K = 2 x 4 x 8, C adds M x N. */
static void test_gemm(void **state)
{
	(void)state;
	mb m = {0};
	in(&m, "a", F, "2,8");
	init(&m, "B", F, "4,8");
	init(&m, "C", F, "4");
	node(&m, ONNX, "Gemm(a,B,C)->y", "transB=1", END);
	built b;
	build(&b, &m, NULL);
	assert_int_equal(num(&nd(&b, 0)->macs), 64);
	assert_int_equal(num(&nd(&b, 0)->ops), 8);
	unbuild(&b);
}

/* MatMul with broadcast batch dims: [3,1,4,5] x [2,5,6] -> [3,2,4,6]: 144 x K=5. */
static void test_matmul_broadcast(void **state)
{
	(void)state;
	mb m = {0};
	in(&m, "a", F, "3,1,4,5");
	in(&m, "b", F, "2,5,6");
	node(&m, ONNX, "MatMul(a,b)->y", END);
	built b;
	build(&b, &m, NULL);
	assert_int_equal(num(&nd(&b, 0)->macs), 144 * 5);
	/* both inputs are activations: read 60 + 60 floats */
	assert_int_equal(num(&nd(&b, 0)->read), (60 + 60) * 4);
	unbuild(&b);
}

/* Symbolic dims: [batch, seq, 16] x [16, 32]: 512·batch·seq; bound: numbers. */
static void test_matmul_symbolic_and_bound(void **state)
{
	(void)state;
	mb m = {0};
	in(&m, "a", F, "batch,seq,16");
	init(&m, "W", F, "16,32");
	node(&m, ONNX, "MatMul(a,W)->y", END);
	built b;
	build(&b, &m, NULL);
	assert_string_equal(fmt(&b, &nd(&b, 0)->macs), "512·batch·seq");
	assert_int_equal(b.c->nsymbols, 2);
	unbuild(&b);

	mb m2 = {0};
	in(&m2, "a", F, "batch,seq,16");
	init(&m2, "W", F, "16,32");
	node(&m2, ONNX, "MatMul(a,W)->y", END);
	build(&b, &m2, "batch:2");
	assert_string_equal(fmt(&b, &nd(&b, 0)->macs), "1024·seq");
	unbuild(&b);

	mb m3 = {0};
	in(&m3, "a", F, "batch,seq,16");
	init(&m3, "W", F, "16,32");
	node(&m3, ONNX, "MatMul(a,W)->y", END);
	build(&b, &m3, "batch:1,seq:128");
	assert_int_equal(num(&nd(&b, 0)->macs), 512 * 128);
	unbuild(&b);
}

/* Short form: 61440 x 60223 = 3,700,101,120 per S: "3.7 G·S". */
static void test_format_short(void **state)
{
	(void)state;
	mb m = {0};
	in(&m, "a", F, "S,61440");
	init(&m, "W", F, "61440,60223");
	node(&m, ONNX, "MatMul(a,W)->y", END);
	built b;
	build(&b, &m, NULL);
	char buf[64];
	assert_string_equal(oxp_cost_poly_format(b.c, &nd(&b, 0)->macs, 0, buf, sizeof(buf)),
	                    "3.7 G·S");
	/* a short buffer is cut, never overrun */
	char tiny[6];
	oxp_cost_poly_format(b.c, &nd(&b, 0)->macs, OXP_COST_FMT_EXACT, tiny, sizeof(tiny));
	assert_string_equal(tiny, "37...");
	unbuild(&b);
}

/* Einsum: batched product, an ellipsis, and a one-operand sum. */
static void test_einsum(void **state)
{
	(void)state;
	mb m = {0};
	in(&m, "a", F, "2,3,4");
	in(&m, "b", F, "2,4,5");
	in(&m, "c", F, "3,4");
	in(&m, "d", F, "7,2,3,4");
	in(&m, "e", F, "2,4,5");
	node(&m, ONNX, "Einsum(a,b)->y", "equation='bij,bjk->bik'", END);
	node(&m, ONNX, "Einsum(c)->z", "equation='ij->i'", END);
	node(&m, ONNX, "Einsum(d,e)->w", "equation='...ij,...jk->...ik'", END);
	node(&m, ONNX, "Einsum(c)->t", "equation='ij->ji'", END);
	built b;
	build(&b, &m, NULL);
	assert_int_equal(num(&nd(&b, 0)->macs), 2 * 3 * 4 * 5);
	assert_int_equal(num(&nd(&b, 1)->macs), 0);
	assert_int_equal(num(&nd(&b, 1)->ops), 12);
	/* "..." is [7,2] on d (broadcast against [2] of e): 14 x i3 j4 k5 */
	assert_int_equal(num(&nd(&b, 2)->macs), 14 * 3 * 4 * 5);
	assert_int_equal(num(&nd(&b, 3)->ops), 0); /* a transpose sums nothing */
	unbuild(&b);
}

/* ---------------------------------------------------------------------------------------
 * Quantized forms
 */

/* QLinearConv: as Conv; W is a weight, scales and zero points are counted apart. */
static void test_qlinearconv(void **state)
{
	(void)state;
	mb m = {0};
	in(&m, "x", U8, "1,2,5,5");
	init(&m, "xs", F, "");
	init(&m, "xz", U8, "");
	init(&m, "W", I8, "4,2,3,3");
	init(&m, "ws", F, "");
	init(&m, "wz", I8, "");
	init(&m, "ys", F, "");
	init(&m, "yz", U8, "");
	node(&m, ONNX, "QLinearConv(x,xs,xz,W,ws,wz,ys,yz)->y", END);
	io(&m, 12, "y", U8, "1,4,3,3");
	built b;
	build(&b, &m, NULL);
	const oxp_cost_node *n = nd(&b, 0);
	assert_int_equal(num(&n->macs), 36 * 18);
	assert_int_equal(n->params.weights, 72);
	assert_int_equal(n->params.qbytes, 3 * 4 + 3 * 1);
	assert_int_equal(n->params.bytes, 72 + 15);
	unbuild(&b);
}

/* MatMulInteger [4,8] x [8,3], QLinearMatMul, ConvInteger. */
static void test_integer_products(void **state)
{
	(void)state;
	mb m = {0};
	in(&m, "a", U8, "4,8");
	init(&m, "B", U8, "8,3");
	init(&m, "az", U8, "");
	node(&m, ONNX, "MatMulInteger(a,B,az)->y", END);
	in(&m, "qa", U8, "4,8");
	init(&m, "s", F, "");
	init(&m, "z", U8, "");
	node(&m, ONNX, "QLinearMatMul(qa,s,z,B,s,z,s,z)->q", END);
	in(&m, "xi", U8, "1,1,4,4");
	init(&m, "Wi", U8, "2,1,3,3");
	node(&m, ONNX, "ConvInteger(xi,Wi)->ci", END);
	built b;
	build(&b, &m, NULL);
	assert_int_equal(num(&nd(&b, 0)->macs), 4 * 3 * 8);
	assert_int_equal(num(&nd(&b, 1)->macs), 4 * 3 * 8);
	assert_int_equal(num(&nd(&b, 2)->macs), 2 * 2 * 2 * 9);
	/* B shared by both products: its 24 bytes counted once, at the first */
	assert_int_equal(nd(&b, 0)->params.weights, 24);
	assert_int_equal(nd(&b, 1)->params.weights, 0);
	assert_int_equal(b.c->total.params.elements, 24 + 1 + 1 + 1 + 18);
	unbuild(&b);
}

/* QGemm (A, a_scale, a_zero_point, B, b_scale, b_zero_point, C, ...): B is input 3. */
static void test_qgemm(void **state)
{
	(void)state;
	mb m = {0};
	in(&m, "a", U8, "2,8");
	init(&m, "s", F, "");
	init(&m, "z", U8, "");
	init(&m, "B", U8, "8,5");
	node(&m, MS, "QGemm(a,s,z,B,s,z)->y", END);
	built b;
	build(&b, &m, NULL);
	assert_int_equal(num(&nd(&b, 0)->macs), 2 * 5 * 8);
	assert_int_equal(nd(&b, 0)->params.weights, 40);
	assert_int_equal(nd(&b, 0)->params.qbytes, 5);
	unbuild(&b);
}

/* MatMulNBits int4, K 64, N 32, block 32: MACs those of the float MatMul (S x 64 x 32);
 * parameters: 1,024 packed bytes for 2,048 weights, next to 256 + 32 bytes of scales and
 * zero points. */
static void test_matmulnbits(void **state)
{
	(void)state;
	mb m = {0};
	in(&m, "a", F, "1,S,64");
	init(&m, "B", U8, "32,2,16");
	init(&m, "sc", F, "64");
	init(&m, "zp", U8, "32");
	node(&m, MS, "MatMulNBits(a,B,sc,zp)->y", "K=64", "N=32", "bits=4", "block_size=32", END);
	built b;
	build(&b, &m, NULL);
	const oxp_cost_node *n = nd(&b, 0);
	assert_string_equal(fmt(&b, &n->macs), "2048·S");
	assert_int_equal(n->params.weights, 2048);
	assert_int_equal(n->params.bytes, 1024 + 256 + 32);
	assert_int_equal(n->params.qbytes, 256 + 32);
	assert_int_equal(n->params.elements, 1024 + 64 + 32);
	unbuild(&b);
}

/* GatherBlockQuantized as a gather: a dequantizing multiply per gathered element
 * (indices [2,3] x 16 values of a row of 8 packed bytes). */
static void test_gather_block_quantized(void **state)
{
	(void)state;
	mb m = {0};
	init(&m, "data", U8, "100,8");
	in(&m, "idx", I64, "2,3");
	init(&m, "sc", F, "100,1");
	node(&m, MS, "GatherBlockQuantized(data,idx,sc)->y", "bits=4", "block_size=16", END);
	built b;
	build(&b, &m, NULL);
	const oxp_cost_node *n = nd(&b, 0);
	assert_string_equal(n->family, "gather");
	assert_int_equal(num(&n->macs), 0);
	assert_int_equal(num(&n->ops), 2 * 3 * 16);
	assert_int_equal(n->params.weights, 1600);
	unbuild(&b);
}

/* ---------------------------------------------------------------------------------------
 * Attention
 */

/* GQA, 4 query heads over 2 key/value heads of 8, one new token after 16 past ones:
 * T = 17; MACs = B S T (Dq + Dv) = 17 x 64; ops per score (H x T): scale + softmax 5. */
static void test_gqa_past(void **state)
{
	(void)state;
	mb m = {0};
	in(&m, "q", F, "1,1,32");
	in(&m, "k", F, "1,1,16");
	in(&m, "v", F, "1,1,16");
	in(&m, "pk", F, "1,2,16,8");
	in(&m, "pv", F, "1,2,16,8");
	in(&m, "sl", I32, "1");
	in(&m, "tl", I32, "");
	node(&m, MS, "GroupQueryAttention(q,k,v,pk,pv,sl,tl)->o,prk,prv", "num_heads=4",
	     "kv_num_heads=2", END);
	built b;
	build(&b, &m, NULL);
	assert_int_equal(num(&nd(&b, 0)->macs), 17 * 64);
	assert_int_equal(num(&nd(&b, 0)->ops), 17 * 4 * 6);
	unbuild(&b);
}

/* Past and present sharing one buffer of 64: past_key's length is the buffer's; the known
 * total_sequence_length (20) decides T. */
static void test_gqa_shared_buffer(void **state)
{
	(void)state;
	mb m = {0};
	in(&m, "q", F, "1,1,32");
	in(&m, "k", F, "1,1,16");
	in(&m, "v", F, "1,1,16");
	in(&m, "pk", F, "1,2,64,8");
	in(&m, "pv", F, "1,2,64,8");
	in(&m, "sl", I32, "1");
	static const int32_t total = 20;
	init_v(&m, "tl", I32, "", &total, sizeof(total));
	node(&m, MS, "GroupQueryAttention(q,k,v,pk,pv,sl,tl)->o,prk,prv", "num_heads=4",
	     "kv_num_heads=2", END);
	built b;
	build(&b, &m, NULL);
	assert_int_equal(num(&nd(&b, 0)->macs), 20 * 64);
	unbuild(&b);
}

/* The same symbolic: 64·B·S·(S + P) = 64·B·S^2 + 64·B·P·S; bound, the number above. */
static void gqa_symbolic(mb *m)
{
	in(m, "q", F, "B,S,32");
	in(m, "k", F, "B,S,16");
	in(m, "v", F, "B,S,16");
	in(m, "pk", F, "B,2,P,8");
	in(m, "pv", F, "B,2,P,8");
	in(m, "sl", I32, "B");
	in(m, "tl", I32, "");
	node(m, MS, "GroupQueryAttention(q,k,v,pk,pv,sl,tl)->o,prk,prv", "num_heads=4",
	     "kv_num_heads=2", END);
}

static void test_gqa_symbolic(void **state)
{
	(void)state;
	mb m = {0};
	gqa_symbolic(&m);
	built b;
	build(&b, &m, NULL);
	assert_string_equal(fmt(&b, &nd(&b, 0)->macs), "64·B·S·P + 64·B·S^2");
	unbuild(&b);
	mb m2 = {0};
	gqa_symbolic(&m2);
	build(&b, &m2, "B:1,S:1,P:16");
	assert_int_equal(num(&nd(&b, 0)->macs), 17 * 64);
	unbuild(&b);
}

/* MultiHeadAttention [2,5,16] against keys [2,7,16]: 2 x 5 x 7 x (16 + 16). */
static void test_mha(void **state)
{
	(void)state;
	mb m = {0};
	in(&m, "q", F, "2,5,16");
	in(&m, "k", F, "2,7,16");
	in(&m, "v", F, "2,7,16");
	node(&m, MS, "MultiHeadAttention(q,k,v)->o", "num_heads=2", END);
	built b;
	build(&b, &m, NULL);
	assert_int_equal(num(&nd(&b, 0)->macs), 2 * 5 * 7 * 32);
	assert_int_equal(num(&nd(&b, 0)->ops), 2 * 5 * 7 * 2 * 6);
	unbuild(&b);
}

/* com.microsoft Attention: projection 1 x 4 x 8 x 24, core 4 x 4 x (8 + 8); ops: the
 * projection's bias (4 x 24) and 6 per score (2 heads x 4 x 4). */
static void test_ms_attention(void **state)
{
	(void)state;
	mb m = {0};
	in(&m, "x", F, "1,4,8");
	init(&m, "W", F, "8,24");
	init(&m, "Bi", F, "24");
	node(&m, MS, "Attention(x,W,Bi)->o", "num_heads=2", END);
	built b;
	build(&b, &m, NULL);
	assert_int_equal(num(&nd(&b, 0)->macs), 768 + 256);
	assert_int_equal(num(&nd(&b, 0)->ops), 96 + 2 * 16 * 6);
	unbuild(&b);
}

/* ONNX Attention (opset 23), 4-D: Q [1,4,3,8], K/V [1,2,5,8]: 3 x 5 x (32 + 32);
 * with past_key [1,2,2,8]: T = 7. */
static void test_onnx_attention(void **state)
{
	(void)state;
	mb m = {0};
	in(&m, "q", F, "1,4,3,8");
	in(&m, "k", F, "1,2,5,8");
	in(&m, "v", F, "1,2,5,8");
	in(&m, "pk", F, "1,2,2,8");
	in(&m, "pv", F, "1,2,2,8");
	node(&m, ONNX, "Attention(q,k,v)->o", END);
	node(&m, ONNX, "Attention(q,k,v,,pk,pv)->o2,prk,prv", END);
	built b;
	build(&b, &m, NULL);
	assert_string_equal(nd(&b, 0)->family, "attention");
	assert_int_equal(num(&nd(&b, 0)->macs), 3 * 5 * 64);
	assert_int_equal(num(&nd(&b, 1)->macs), 3 * 7 * 64);
	unbuild(&b);
}

/* An LLM-shaped model: 32 layers of int4 MatMulNBits projections (q 64, k 32, v 32, o 64,
 * MLP up 128 and down 64 over hidden 64, block 32, no zero points) around a
 * GroupQueryAttention (4 heads over 2 key/value heads of 16) with a past of length P:
 * once with the intermediate shapes declared (value_info), once with only the graph
 * inputs' (parser/shape_ms.c infers MatMulNBits's and GroupQueryAttention's outputs, as
 * for a real export that declares none).
 * Closed forms, per layer: projections B·S·(64·64 + 2·64·32 + 64·64 + 64·128 + 128·64)
 * = 28,672·B·S MACs; attention B·S·(S + P)·2·4·16 = 128·B·S^2 + 128·B·S·P.  Parameters
 * per layer: 28,672 int4 weights in 14,336 packed bytes, 896 float scales. */
static bool declare_values = true;

static void value_decl(mb *m, const char *name, const char *dims)
{
	if (declare_values)
		io(m, 13, name, F, dims);
}

static void nbits(mb *m, const char *a, const char *y, int l, const char *w, int n, int k,
                  const char *ydims)
{
	char wn[32], sn[32], dims[64], spec[128], na[16], ka[16];
	snprintf(wn, sizeof(wn), "%s%d", w, l);
	snprintf(sn, sizeof(sn), "%s%d.s", w, l);
	snprintf(dims, sizeof(dims), "%d,%d,16", n, k / 32);
	init(m, wn, U8, dims);
	snprintf(dims, sizeof(dims), "%d", n * k / 32);
	init(m, sn, F, dims);
	snprintf(spec, sizeof(spec), "MatMulNBits(%s,%s,%s)->%s", a, wn, sn, y);
	snprintf(na, sizeof(na), "N=%d", n);
	snprintf(ka, sizeof(ka), "K=%d", k);
	node(m, MS, spec, na, ka, "bits=4", "block_size=32", END);
	value_decl(m, y, ydims);
}

static void test_llm_closed_form(void **state)
{
	(void)state;
	enum { L = 32 };
	for (int variant = 0; variant < 4; variant++) {
		int bound = variant & 1;
		declare_values = variant < 2;
		mb m = {0};
		in(&m, "x0", F, "B,S,64");
		in(&m, "sl", I32, "B");
		in(&m, "tl", I32, "");
		for (int l = 0; l < L; l++) {
			char x[16], q[16], k[16], v[16], a[16], o[16], u[16], nx[16], pk[16], pv[16];
			snprintf(x, sizeof(x), "x%d", l);
			snprintf(q, sizeof(q), "q%d", l);
			snprintf(k, sizeof(k), "k%d", l);
			snprintf(v, sizeof(v), "v%d", l);
			snprintf(a, sizeof(a), "a%d", l);
			snprintf(o, sizeof(o), "o%d", l);
			snprintf(u, sizeof(u), "u%d", l);
			snprintf(nx, sizeof(nx), "x%d", l + 1);
			snprintf(pk, sizeof(pk), "pk%d", l);
			snprintf(pv, sizeof(pv), "pv%d", l);
			in(&m, pk, F, "B,2,P,16");
			in(&m, pv, F, "B,2,P,16");
			nbits(&m, x, q, l, "Wq", 64, 64, "B,S,64");
			nbits(&m, x, k, l, "Wk", 32, 64, "B,S,32");
			nbits(&m, x, v, l, "Wv", 32, 64, "B,S,32");
			char spec[160];
			snprintf(spec, sizeof(spec), "GroupQueryAttention(%s,%s,%s,%s,%s,sl,tl)->%s", q, k, v,
			         pk, pv, a);
			node(&m, MS, spec, "num_heads=4", "kv_num_heads=2", END);
			value_decl(&m, a, "B,S,64");
			nbits(&m, a, o, l, "Wo", 64, 64, "B,S,64");
			nbits(&m, o, u, l, "Wu", 128, 64, "B,S,128");
			nbits(&m, u, nx, l, "Wd", 64, 128, "B,S,64");
		}
		built b;
		build(&b, &m, bound ? "B:1,S:1,P:99" : NULL);
		const oxp_cost_sum *t = &b.c->total;
		assert_int_equal(t->unknown, 0);
		assert_int_equal(t->counted, L * 7);
		if (bound) /* one new token at T = 100: 32 x (28,672 + 128 x 100) */
			assert_int_equal(num(&t->macs), L * (28672 + 128 * 100));
		else
			assert_string_equal(fmt(&b, &t->macs),
			                    "4096·B·S·P + 4096·B·S^2 + 917504·B·S");
		assert_int_equal(t->params.weights, L * 28672);
		assert_int_equal(t->params.bytes, L * (14336 + 896 * 4));
		assert_int_equal(t->params.qbytes, L * 896 * 4);
		assert_int_equal(t->params.elements, L * (14336 + 896));
		unbuild(&b);
	}
}

/* ---------------------------------------------------------------------------------------
 * Recurrent
 */

/* Bidirectional LSTM, seq 7, batch 2, input 10, hidden 5, with B:
 * MACs = 2 dirs x 7 x 2 x 4 gates x 5 x (10 + 5); ops = 28 steps x 5 x (13 + 8). */
static void test_lstm_bidirectional(void **state)
{
	(void)state;
	mb m = {0};
	in(&m, "x", F, "7,2,10");
	init(&m, "W", F, "2,20,10");
	init(&m, "R", F, "2,20,5");
	init(&m, "B", F, "2,40");
	node(&m, ONNX, "LSTM(x,W,R,B)->y", "hidden_size=5", "direction='bidirectional'", END);
	in(&m, "g", F, "3,1,4");
	init(&m, "Wg", F, "1,6,4");
	init(&m, "Rg", F, "1,6,2");
	node(&m, ONNX, "GRU(g,Wg,Rg)->gy", "hidden_size=2", END);
	init(&m, "Wr", F, "1,2,4");
	init(&m, "Rr", F, "1,2,2");
	node(&m, ONNX, "RNN(g,Wr,Rr)->ry", "hidden_size=2", END);
	built b;
	build(&b, &m, NULL);
	assert_int_equal(num(&nd(&b, 0)->macs), 2 * 7 * 2 * 20 * 15);
	assert_int_equal(num(&nd(&b, 0)->ops), 28 * 5 * 21);
	assert_int_equal(num(&nd(&b, 1)->macs), 3 * 1 * 6 * 6);
	assert_int_equal(num(&nd(&b, 1)->ops), 3 * 2 * 11);
	assert_int_equal(num(&nd(&b, 2)->macs), 3 * 2 * 6);
	assert_int_equal(num(&nd(&b, 2)->ops), 3 * 2 * 2);
	unbuild(&b);
}

/* ---------------------------------------------------------------------------------------
 * Norms, softmax, pooling, resize, elementwise, reductions
 */
static void test_norms_softmax(void **state)
{
	(void)state;
	mb m = {0};
	in(&m, "x", F, "2,3,4");
	in(&m, "s", F, "2,3,4");
	init(&m, "g", F, "4");
	init(&m, "be", F, "4");
	node(&m, ONNX, "LayerNormalization(x,g,be)->a", END);
	node(&m, MS, "SkipLayerNormalization(x,s,g,be)->b", END);
	node(&m, ONNX, "SimplifiedLayerNormalization(x,g)->c", END);
	node(&m, MS, "SkipSimplifiedLayerNormalization(x,s,g)->d", END);
	node(&m, ONNX, "RMSNormalization(x,g)->e", END);
	node(&m, ONNX, "Softmax(x)->f", END);
	in(&m, "im", F, "1,2,3,3");
	init(&m, "c2", F, "2");
	node(&m, ONNX, "BatchNormalization(im,c2,c2,c2,c2)->h", END);
	node(&m, ONNX, "InstanceNormalization(im,c2,c2)->i", END);
	node(&m, ONNX, "GroupNormalization(im,c2,c2)->j", "num_groups=1", END);
	built b;
	build(&b, &m, NULL);
	assert_int_equal(num(&nd(&b, 0)->ops), 24 * 7);
	assert_int_equal(num(&nd(&b, 1)->ops), 24 * 8);
	assert_int_equal(num(&nd(&b, 2)->ops), 24 * 4);
	assert_int_equal(num(&nd(&b, 3)->ops), 24 * 5);
	assert_int_equal(num(&nd(&b, 4)->ops), 24 * 4);
	assert_int_equal(num(&nd(&b, 5)->ops), 24 * 5);
	assert_int_equal(num(&nd(&b, 6)->ops), 18 * 2);
	assert_int_equal(num(&nd(&b, 7)->ops), 18 * 7);
	assert_int_equal(num(&nd(&b, 8)->ops), 18 * 7);
	for (uint32_t i = 0; i < 9; i++)
		assert_int_equal(num(&nd(&b, i)->macs), 0);
	unbuild(&b);
}

/* LRN over 1x8x5x5: each of the 200 elements sums `size` squares (size MACs) and takes 4
 * other ops (scale, bias, pow, divide); without size its MACs are unknown, never 0. */
static void test_lrn(void **state)
{
	(void)state;
	mb m = {0};
	in(&m, "x", F, "1,8,5,5");
	node(&m, ONNX, "LRN(x)->a", "size=5", END);
	node(&m, ONNX, "LRN(x)->b", END);
	built b;
	build(&b, &m, NULL);
	assert_int_equal(num(&nd(&b, 0)->macs), 200 * 5);
	assert_int_equal(num(&nd(&b, 0)->ops), 200 * 4);
	assert_true(nd(&b, 1)->macs.flags & OXP_COST_UNKNOWN);
	unbuild(&b);
}

static void test_pool_resize(void **state)
{
	(void)state;
	mb m = {0};
	in(&m, "x", F, "1,1,4,4");
	node(&m, ONNX, "MaxPool(x)->a", "kernel_shape=2,2", "strides=2,2", END);
	node(&m, ONNX, "AveragePool(x)->b", "kernel_shape=2,2", "strides=2,2", END);
	in(&m, "g", F, "1,2,3,3");
	node(&m, ONNX, "GlobalAveragePool(g)->c", END);
	in(&m, "r", F, "1,1,2,2");
	static const float scales[4] = {1, 1, 2, 2};
	init_v(&m, "sc", F, "4", scales, sizeof(scales));
	node(&m, ONNX, "Resize(r,,sc)->d", "mode='linear'", END);
	node(&m, ONNX, "Resize(r,,sc)->e", END);
	built b;
	build(&b, &m, NULL);
	assert_int_equal(num(&nd(&b, 0)->ops), 4 * 4);
	assert_int_equal(num(&nd(&b, 1)->ops), 4 * 5);
	assert_int_equal(num(&nd(&b, 2)->ops), 18 + 2);
	assert_int_equal(num(&nd(&b, 3)->ops), 16 * 3 * 2);
	assert_int_equal(num(&nd(&b, 4)->ops), 0); /* nearest */
	unbuild(&b);
}

static void test_elementwise_reduce(void **state)
{
	(void)state;
	mb m = {0};
	in(&m, "a", F, "3,1,5");
	in(&m, "b", F, "4,1");
	node(&m, ONNX, "Add(a,b)->y", END);           /* broadcast: [3,4,5] */
	in(&m, "c", F, "2,2");
	node(&m, ONNX, "Sum(c,c,c)->s", END);         /* 2 adds per element */
	node(&m, ONNX, "Mean(c,c)->mn", END);         /* 1 add + 1 divide */
	in(&m, "r", F, "2,3,4");
	node(&m, ONNX, "ReduceMean(r)->rm", END);     /* 24 adds + 1 divide */
	node(&m, ONNX, "ReduceSumSquare(r)->rs", END); /* 24 squares + 24 adds */
	node(&m, ONNX, "Relu(r)->re", END);
	node(&m, ONNX, "Reshape(r,shp)->rr", END);
	built b;
	build(&b, &m, NULL);
	assert_int_equal(num(&nd(&b, 0)->ops), 60);
	assert_int_equal(num(&nd(&b, 1)->ops), 8);
	assert_int_equal(num(&nd(&b, 2)->ops), 8);
	assert_int_equal(num(&nd(&b, 3)->ops), 25);
	assert_int_equal(num(&nd(&b, 4)->ops), 48);
	assert_int_equal(num(&nd(&b, 5)->ops), 24);
	assert_int_equal(nd(&b, 6)->kind, OXP_CK_MOVE);
	assert_int_equal(num(&nd(&b, 6)->ops), 0);
	unbuild(&b);
}

/* ---------------------------------------------------------------------------------------
 * Bookkeeping, uncounted ops, bad input, bounds
 */

/* Shape -> Gather -> Unsqueeze -> Reshape: the chain is bookkeeping (cost 0, listed apart);
 * a custom domain's op is uncounted, with its count, never a silent 0. */
static void test_bookkeeping_and_uncounted(void **state)
{
	(void)state;
	mb m = {0};
	in(&m, "x", F, "2,3");
	static const int64_t zero = 0;
	init_v(&m, "i0", I64, "", &zero, sizeof(zero));
	init_v(&m, "ax", I64, "1", &zero, sizeof(zero));
	node(&m, ONNX, "Shape(x)->s", END);
	node(&m, ONNX, "Gather(s,i0)->n", END);
	node(&m, ONNX, "Unsqueeze(n,ax)->u", END);
	node(&m, "my.domain", "Foo(x)->f1", END);
	node(&m, "my.domain", "Foo(f1)->f2", END);
	node(&m, ONNX, "Relu(x)->r", END);
	built b;
	build(&b, &m, NULL);
	for (uint32_t i = 0; i < 3; i++) {
		assert_int_equal(nd(&b, i)->kind, OXP_CK_BOOKKEEPING);
		assert_int_equal(num(&nd(&b, i)->macs), 0);
		assert_int_equal(num(&nd(&b, i)->ops), 0);
	}
	assert_int_equal(b.c->total.bookkeeping, 3);
	assert_int_equal(nd(&b, 3)->kind, OXP_CK_UNCOUNTED);
	assert_true(nd(&b, 3)->macs.flags & OXP_COST_UNKNOWN);
	assert_int_equal(b.c->total.uncounted, 2);
	bool listed = false;
	for (uint32_t i = 0; i < b.c->ntypes; i++)
		if (oxp_str_eq(b.c->types[i].op, "Foo")) {
			assert_int_equal(b.c->types[i].kind, OXP_CK_UNCOUNTED);
			assert_int_equal(b.c->types[i].count, 2);
			assert_true(oxp_str_eq(b.c->types[i].domain, "my.domain"));
			listed = true;
		}
	assert_true(listed);
	/* the total holds what is known: Relu's 6 ops */
	assert_int_equal(num(&b.c->total.ops), 6);
	unbuild(&b);
}

/* [2^40, 2^20] x [2^20, 2^10]: 2^70 MACs do not fit: "too large", and the total too. */
static void test_too_large(void **state)
{
	(void)state;
	mb m = {0};
	in(&m, "a", F, "1099511627776,1048576");
	in(&m, "b", F, "1048576,1024");
	node(&m, ONNX, "MatMul(a,b)->y", END);
	built b;
	build(&b, &m, NULL);
	assert_true(nd(&b, 0)->macs.flags & OXP_COST_TOO_LARGE);
	assert_string_equal(fmt(&b, &nd(&b, 0)->macs), "too large");
	assert_true(b.c->total.macs.flags & OXP_COST_TOO_LARGE);
	assert_true(isnan(oxp_cost_poly_eval(&b.c->total.macs, 1)));
	unbuild(&b);
}

/* Degree above OXP_COST_MAX_DEGREE, and more distinct terms than OXP_COST_MAX_TERMS:
 * "too complex", never an unbounded expression. */
static void test_bounded(void **state)
{
	(void)state;
	mb m = {0};
	in(&m, "a", F, "s1,s2,s3,s4,s5,8");
	init(&m, "W", F, "8,8");
	node(&m, ONNX, "MatMul(a,W)->y", END);
	char name[8], spec[32];
	for (int i = 0; i < OXP_COST_MAX_TERMS + 1; i++) {
		snprintf(name, sizeof(name), "x%d", i);
		char dims[8];
		snprintf(dims, sizeof(dims), "d%d", i);
		in(&m, name, F, dims);
		snprintf(spec, sizeof(spec), "Relu(x%d)->r%d", i, i);
		node(&m, ONNX, spec, END);
	}
	built b;
	build(&b, &m, NULL);
	assert_true(nd(&b, 0)->macs.flags & OXP_COST_TOO_COMPLEX);
	assert_string_equal(fmt(&b, &nd(&b, 0)->macs), "too complex");
	for (uint32_t i = 1; i <= OXP_COST_MAX_TERMS + 1; i++)
		assert_int_equal(nd(&b, i)->ops.nterms, 1);
	assert_true(b.c->total.ops.flags & OXP_COST_TOO_COMPLEX);
	unbuild(&b);
}

static void test_bind_parse(void **state)
{
	(void)state;
	oxp_cost_bind bd;
	oxp_error e;
	assert_int_equal(oxp_cost_bind_parse(&bd, "batch:1,sequence_length:128", &e), OXP_OK);
	assert_int_equal(bd.n, 2);
	assert_true(oxp_str_eq(bd.dims[1].name, "sequence_length"));
	assert_int_equal(bd.dims[1].value, 128);
	assert_int_equal(oxp_cost_bind_parse(&bd, "", &e), OXP_OK);
	assert_int_equal(bd.n, 0);
	const char *bad[] = {"batch", "batch:", ":1", "batch:x", "a:1,a:2", "a:99999999999999999999"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(oxp_cost_bind_parse(&bd, bad[i], &e), OXP_E_RANGE);
}

/* ---------------------------------------------------------------------------------------
 * One parameter count (parser/params.c, issue 39 item 3): the summary, the cost, the
 * quantization summary and the boxes of the drawing agree on a 4-bit model, figures by hand.
 */

/* A Constant node called name whose value is a float tensor of n zeros. */
static void constant_f32(mb *m, const char *name, const char *out, int64_t n)
{
	pbw nd = {0}, at = {0}, t = {0};
	pbw_tensor_head(&t, &n, 1, F);
	uint8_t zeros[128] = {0};
	assert_true(n * 4 <= (int64_t)sizeof(zeros));
	pbw_bytes(&t, 9, zeros, (size_t)n * 4);
	pbw_str(&at, 1, "value");
	nest(&at, 5, &t);
	pbw_int(&at, 20, 4); /* TENSOR */
	pbw_str(&nd, 2, out);
	pbw_str(&nd, 3, name);
	pbw_str(&nd, 4, "Constant");
	nest(&nd, 5, &at);
	nest(&m->g, 1, &nd);
}

/* The text of the third row of the box titled title ("2 nodes · 528 params"). */
static void box_row(const built *b, const char *title, char *out, size_t size)
{
	oxr_options o;
	oxr_options_default(&o);
	assert_int_equal(oxr_options_set(&o, "group", "1", NULL), OXR_OK);
	oxr_buf buf;
	oxr_buf_init(&buf, 0);
	oxr_error err = {0};
	assert_int_equal(oxr_render(b->m, b->d, &o, OXR_FMT_LAYOUT_JSON, &buf, &err), OXR_OK);
	json_error_t je;
	json_t *lay = json_loadb(buf.data, buf.len, 0, &je);
	assert_non_null(lay);
	size_t i;
	json_t *n, *box = NULL;
	json_array_foreach(json_object_get(lay, "nodes"), i, n) {
		const char *t = json_string_value(json_object_get(n, "title"));
		if (t != NULL && strcmp(t, title) == 0)
			box = n;
	}
	if (box == NULL)
		fail_msg("no box %s", title);
	const char *row = json_string_value(json_object_get(json_array_get(json_object_get(box, "rows"), 2), "text"));
	assert_non_null(row);
	snprintf(out, size, "%s", row);
	json_decref(lay);
	oxr_buf_free(&buf);
}

/* Two layers and an embedding:
 *   /layers.0: MatMulNBits K 32, N 16, 4 bits, blocks of 16: B uint8 [16, 2, 8] (256 bytes)
 *              holds 512 values; scales [32] f32, zero points [16] u8 (2 blocks x 4 bits
 *              = 1 byte a row); a Mul by g0 [16] f32: 528 parameters;
 *   /layers.1: MatMulNBits K 16, N 24, blocks of 16, no zero points: B [24, 1, 8] (192
 *              bytes) holds 384; scales [24]; a Reshape by an int64 [3] shape; an Add of
 *              a Constant node's [24] f32: 384 + 3 + 24 = 411;
 *   /embed:    GatherBlockQuantized, 4 bits: data uint8 [100, 8] holds 1,600; scales
 *              [100, 1].
 * Parameters 528 + 411 + 1,600 = 2,539: u4 512 + 384 + 1,600 = 2,496 in 256 + 192 + 800
 * bytes, f32 16 + 24 = 40, i64 3.  Scales and zero points 32 + 16 + 24 + 100 = 172
 * elements in 128 + 16 + 96 + 400 = 640 bytes, no parameters.  Stored: 2,072 bytes in
 * 1,463 elements (the packed bytes were counted as 1,248 elements and the scales as
 * parameters: 1,463 then). */
static void test_one_parameter_count(void **state)
{
	(void)state;
	mb m = {0};
	in(&m, "a", F, "1,S,32");
	in(&m, "idx", I64, "2,3");
	init(&m, "B0", U8, "16,2,8");
	init(&m, "sc0", F, "32");
	init(&m, "zp0", U8, "16");
	init(&m, "g0", F, "16");
	init(&m, "B1", U8, "24,1,8");
	init(&m, "sc1", F, "24");
	static const int64_t shape[3] = {1, -1, 24};
	init_v(&m, "shape", I64, "3", shape, sizeof(shape));
	init(&m, "data", U8, "100,8");
	init(&m, "gsc", F, "100,1");
	node(&m, MS, "/layers.0/q/MatMulNBits|MatMulNBits(a,B0,sc0,zp0)->h0", "K=32", "N=16",
	     "bits=4", "block_size=16", END);
	node(&m, ONNX, "/layers.0/norm/Mul|Mul(h0,g0)->h1", END);
	node(&m, MS, "/layers.1/q/MatMulNBits|MatMulNBits(h1,B1,sc1)->h2", "K=16", "N=24",
	     "bits=4", "block_size=16", END);
	node(&m, ONNX, "/layers.1/Reshape|Reshape(h2,shape)->h3", END);
	constant_f32(&m, "/layers.1/Constant", "c", 24);
	node(&m, ONNX, "/layers.1/Add|Add(h3,c)->y", END);
	node(&m, MS, "/embed/GatherBlockQuantized|GatherBlockQuantized(data,idx,gsc)->e", "bits=4",
	     "block_size=16", END);
	io(&m, 12, "y", F, "");
	io(&m, 12, "e", F, "");
	built b;
	build(&b, &m, NULL);
	const oxp_dag_summary *s = &oxp_dag_get(b.d)->summary;
	assert_int_equal(s->parameters, 2539);
	assert_int_equal(s->params_by_dtype[OXP_DT_UINT4], 2496);
	assert_int_equal(s->bytes_by_dtype[OXP_DT_UINT4], 256 + 192 + 800);
	assert_int_equal(s->params_by_dtype[OXP_DT_FLOAT], 40);
	assert_int_equal(s->params_by_dtype[OXP_DT_INT64], 3);
	assert_int_equal(s->params_by_dtype[OXP_DT_UINT8], 0);
	assert_int_equal(s->scale_elements, 172);
	assert_int_equal(s->scale_bytes, 640);
	assert_int_equal(s->parameter_bytes, 2072);
	/* the cost: the same parameters, the stored figures beside them */
	const oxp_cost_params *p = &b.c->total.params;
	assert_int_equal(p->weights, 2539);
	assert_int_equal(p->bytes, 2072);
	assert_int_equal(p->qbytes, 640);
	assert_int_equal(p->elements, 1463);
	/* the quantization summary: quantized + float + other, scales apart */
	oxp_arena *qa = oxp_arena_new((size_t)16 << 20);
	const oxp_quant *q = NULL;
	assert_int_equal(oxp_quant_analyze(b.d, qa, &q, NULL), OXP_OK);
	assert_int_equal(q->nweights, 1);
	assert_string_equal(q->weights[0].name, "UINT4");
	assert_int_equal(q->weights[0].tensors, 3);
	assert_int_equal(q->weights[0].parameters, 2496);
	assert_int_equal(q->float_params, 40);
	assert_int_equal(q->other_params, 3);
	assert_int_equal(q->quant_params, 172);
	assert_int_equal(q->weights[0].parameters + q->float_params + q->other_params, s->parameters);
	oxp_arena_free(qa);
	/* the boxes: each layer's parameters (the Constant's through the Add reading it) */
	char row[128];
	box_row(&b, "/layers.0", row, sizeof(row));
	assert_string_equal(row, "2 nodes \xc2\xb7 528 params");
	box_row(&b, "/layers.1", row, sizeof(row));
	if (strstr(row, " \xc2\xb7 411 params") == NULL)
		fail_msg("layers.1: %s", row);
	unbuild(&b);
}

static void test_table_sorted(void **state)
{
	(void)state;
	assert_true(oxp__cost_table_sorted());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conv_groups_dilation),
		cmocka_unit_test(test_conv_transpose),
		cmocka_unit_test(test_gemm),
		cmocka_unit_test(test_matmul_broadcast),
		cmocka_unit_test(test_matmul_symbolic_and_bound),
		cmocka_unit_test(test_format_short),
		cmocka_unit_test(test_einsum),
		cmocka_unit_test(test_qlinearconv),
		cmocka_unit_test(test_integer_products),
		cmocka_unit_test(test_matmulnbits),
		cmocka_unit_test(test_gather_block_quantized),
		cmocka_unit_test(test_gqa_past),
		cmocka_unit_test(test_gqa_symbolic),
		cmocka_unit_test(test_gqa_shared_buffer),
		cmocka_unit_test(test_qgemm),
		cmocka_unit_test(test_llm_closed_form),
		cmocka_unit_test(test_mha),
		cmocka_unit_test(test_ms_attention),
		cmocka_unit_test(test_onnx_attention),
		cmocka_unit_test(test_lstm_bidirectional),
		cmocka_unit_test(test_norms_softmax),
		cmocka_unit_test(test_lrn),
		cmocka_unit_test(test_pool_resize),
		cmocka_unit_test(test_elementwise_reduce),
		cmocka_unit_test(test_bookkeeping_and_uncounted),
		cmocka_unit_test(test_too_large),
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_bind_parse),
		cmocka_unit_test(test_one_parameter_count),
		cmocka_unit_test(test_table_sorted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
