/*
 * test_render.c — render/'s public API (render/oxr.h) on small models built by hand:
 *   options: every accepted and rejected value, the canonical key (stable, and it
 *            round-trips through oxr_options_set), the option name list;
 *   oxr_buf: the hard cap (a failed append marks the buffer failed), printf growth,
 *            steal and free;
 *   JSON:    the document (ids, refs, ggml_ne, NaN/Infinity, _hex forms, summary kind,
 *            output cap), one node in full, search;
 *   folding: bookkeeping as rows (values, types, op counts), dotted edges, arith=nodes,
 *            unfold=, the budget that falls back to folding constants only;
 *   render:  SVG, DOT and layout JSON in-process, errors; oxr_render_isolated against the
 *            onnxviz binary ($ONNXVIZ_BIN, else $(BUILD)/onnxviz next to this program's
 *            folder; skipped with a message when neither exists).
 * Tests named bug_* pin bugs reported to the lead (render-tests report); they fail until
 * the code is fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "render/oxr.h"
#include "tests/unit/support_pbw.h"

/* ---------------------------------------------------------------------------------------
 * Models, written field by field (onnx.proto numbers)
 */
enum { A_FLOAT = 1, A_INT = 2, A_STRING = 3, A_TENSOR = 4, A_GRAPH = 5, A_STRINGS = 8 };

static void put_msg(pbw *parent, uint32_t field, pbw *child)
{
	pbw_bytes(parent, field, child->p, child->len);
	pbw_free(child);
}

/* TensorProto of FLOATs in raw_data. */
static void tensor(pbw *t, const char *name, const int64_t *dims, size_t nd, const float *v,
                   size_t n)
{
	pbw_tensor_head(t, dims, nd, OXP_DT_FLOAT);
	pbw_str(t, 8, name);
	pbw_bytes(t, 9, v, n * sizeof(float));
}

/* ValueInfoProto: dims like "1,N" (digits: dim_value, else dim_param); NULL: no shape. */
static void value_info(pbw *g, uint32_t field, const char *name, int32_t elem, const char *dims)
{
	pbw vi = {0}, tp = {0}, tt = {0}, sh = {0};
	pbw_str(&vi, 1, name);
	pbw_int(&tt, 1, (uint64_t)elem);
	if (dims != NULL) {
		char buf[64];
		snprintf(buf, sizeof(buf), "%s", dims);
		for (char *save = NULL, *d = strtok_r(buf, ",", &save); d; d = strtok_r(NULL, ",", &save)) {
			pbw dim = {0};
			if (d[0] >= '0' && d[0] <= '9')
				pbw_int(&dim, 1, strtoull(d, NULL, 10));
			else
				pbw_str(&dim, 2, d);
			put_msg(&sh, 1, &dim);
		}
		put_msg(&tt, 2, &sh);
	}
	put_msg(&tp, 1, &tt);
	put_msg(&vi, 2, &tp);
	put_msg(g, field, &vi);
}

/* NodeProto: inputs / outputs comma-separated ("" entries allowed as ",x"); attrs: the
 * AttributeProto messages already written (field 5), moved in. */
static void node(pbw *g, const char *op, const char *name, size_t name_len, const char *ins,
                 const char *outs, pbw *attrs)
{
	pbw n = {0};
	const char *lists[2] = {ins, outs};
	for (uint32_t f = 1; f <= 2; f++) {
		const char *s = lists[f - 1];
		while (s != NULL && *s) {
			const char *e = strchr(s, ',');
			size_t len = e ? (size_t)(e - s) : strlen(s);
			pbw_bytes(&n, f, s, len);
			s = e ? e + 1 : NULL;
		}
	}
	pbw_bytes(&n, 3, name, name_len);
	pbw_str(&n, 4, op);
	if (attrs != NULL) {
		pbw_raw(&n, attrs->p, attrs->len);
		pbw_free(attrs);
	}
	put_msg(g, 1, &n);
}

static void attr_head(pbw *a, const char *name, size_t len, int type)
{
	pbw_bytes(a, 1, name, len);
	pbw_int(a, 20, (uint64_t)type);
}

static void attr_float(pbw *attrs, const char *name, uint32_t bits)
{
	pbw a = {0};
	attr_head(&a, name, strlen(name), A_FLOAT);
	pbw_fixed32(&a, 2, bits);
	put_msg(attrs, 5, &a);
}

static void attr_int(pbw *attrs, const char *name, int64_t v)
{
	pbw a = {0};
	attr_head(&a, name, strlen(name), A_INT);
	pbw_int(&a, 3, (uint64_t)v);
	put_msg(attrs, 5, &a);
}

static void attr_msg(pbw *attrs, const char *name, int type, uint32_t field, pbw *msg)
{
	pbw a = {0};
	attr_head(&a, name, strlen(name), type);
	put_msg(&a, field, msg);
	put_msg(attrs, 5, &a);
}

/* An identity subgraph: Identity(in) -> out, named name. */
static void identity_graph(pbw *g, const char *name, const char *in, const char *out)
{
	node(g, "Identity", "id", 2, in, out, NULL);
	pbw_str(g, 2, name);
	value_info(g, 12, out, OXP_DT_FLOAT, NULL);
}

static const char LEAKY_NAME[] = "Leaky\xffName";

/* The test model: see the file comment of each test for what it relies on.
 *   n0 Relu "relu1" x->r            n4 LeakyRelu "Leaky\xffName" y->z with attributes
 *   n1 Constant "const" ->c            alpha=NaN beta=+Inf gamma=-Inf "bad\xffname"="v\xfe"
 *   n2 MatMul "mm" r,W->m              strs=["ok","x\xff"] k=42 f=0.25
 *   n3 Add "add" m,c->y             n5 If "branch" cond->o (then/else: Identity z)
 *                                    n6 Sum "usesB5" B5->s
 * initializers W [2,3] and B5 [2,3,4,5,6]; outputs z, o, s. */
static void small_model(pbw *m)
{
	pbw g = {0}, t = {0}, attrs = {0}, sub = {0}, op = {0};
	static float w[6] = {1, 2, 3, 4, 5, 6};
	static float b5[720];
	static const int64_t wd[] = {2, 3}, b5d[] = {2, 3, 4, 5, 6}, cd[] = {2};
	tensor(&t, "W", wd, 2, w, 6);
	put_msg(&g, 5, &t);
	tensor(&t, "B5", b5d, 5, b5, 720);
	put_msg(&g, 5, &t);
	value_info(&g, 11, "x", OXP_DT_FLOAT, "1,N");
	value_info(&g, 11, "cond", OXP_DT_BOOL, "");
	node(&g, "Relu", "relu1", 5, "x", "r", NULL);
	tensor(&t, "cv", cd, 1, w, 2);
	attr_msg(&attrs, "value", A_TENSOR, 5, &t);
	node(&g, "Constant", "const", 5, "", "c", &attrs);
	node(&g, "MatMul", "mm", 2, "r,W", "m", NULL);
	node(&g, "Add", "add", 3, "m,c", "y", NULL);
	attr_float(&attrs, "alpha", 0x7fc00000u);
	attr_float(&attrs, "beta", 0x7f800000u);
	attr_float(&attrs, "gamma", 0xff800000u);
	pbw a = {0};
	attr_head(&a, "bad\xffname", 8, A_STRING);
	pbw_bytes(&a, 4, "v\xfe", 2);
	put_msg(&attrs, 5, &a);
	attr_head(&a, "strs", 4, A_STRINGS);
	pbw_bytes(&a, 9, "ok", 2);
	pbw_bytes(&a, 9, "x\xff", 2);
	put_msg(&attrs, 5, &a);
	attr_int(&attrs, "k", 42);
	attr_float(&attrs, "f", pbw_bits32(0.25f));
	node(&g, "LeakyRelu", LEAKY_NAME, sizeof(LEAKY_NAME) - 1, "y", "z", &attrs);
	identity_graph(&sub, "then", "z", "t");
	attr_msg(&attrs, "then_branch", A_GRAPH, 6, &sub);
	identity_graph(&sub, "else", "z", "e");
	attr_msg(&attrs, "else_branch", A_GRAPH, 6, &sub);
	node(&g, "If", "branch", 6, "cond", "o", &attrs);
	node(&g, "Sum", "usesB5", 6, "B5", "s", NULL);
	value_info(&g, 12, "z", OXP_DT_FLOAT, NULL);
	value_info(&g, 12, "o", OXP_DT_FLOAT, NULL);
	value_info(&g, 12, "s", OXP_DT_FLOAT, NULL);
	pbw_str(&g, 2, "small");
	pbw_int(m, 1, 8);
	pbw_str(&op, 1, "");
	pbw_int(&op, 2, 17);
	put_msg(m, 8, &op);
	pbw_str(m, 2, "test_render");
	put_msg(m, 7, &g);
}

typedef struct fx {
	pbw bytes;
	oxp_model *m;
	oxp_dag *d;
} fx;

static int fx_setup(void **state)
{
	fx *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	small_model(&f->bytes);
	oxp_error e;
	if (oxp_model_parse(&f->m, f->bytes.p, f->bytes.len, NULL, &e) != OXP_OK) {
		fprintf(stderr, "parse: %s\n", e.message);
		return -1;
	}
	oxp_dag_options o = {.infer_shapes = true};
	if (oxp_dag_build(&f->d, f->m, &o, &e) != OXP_OK) {
		fprintf(stderr, "link: %s\n", e.message);
		return -1;
	}
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	fx *f = *state;
	oxp_dag_free(f->d);
	oxp_model_free(f->m);
	pbw_free(&f->bytes);
	free(f);
	return 0;
}

static json_t *parse(const oxr_buf *b)
{
	json_error_t je;
	json_t *j = json_loadb(b->data, b->len, 0, &je);
	if (j == NULL)
		fprintf(stderr, "JSON: %s at %d\n", je.text, je.position);
	assert_non_null(j);
	return j;
}

/* The object of array arr whose member key is the string want. */
static json_t *find(json_t *arr, const char *key, const char *want)
{
	size_t i;
	json_t *o;
	json_array_foreach(arr, i, o) {
		const char *s = json_string_value(json_object_get(o, key));
		if (s != NULL && strcmp(s, want) == 0)
			return o;
	}
	return NULL;
}

static const char *str_of(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	assert_non_null(s);
	return s;
}

static void assert_ints(json_t *arr, const int64_t *want, size_t n)
{
	assert_non_null(arr);
	assert_int_equal(json_array_size(arr), n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(json_integer_value(json_array_get(arr, i)), want[i]);
}

/* ---------------------------------------------------------------------------------------
 * Options
 */
static const char DEFAULT_KEY[] = "rankdir=TB&initializers=fold&subgraphs=collapse&group=auto&"
                                  "expand=&depth=0&shapes=on&attrs=key&arith=fold&unfold=&quant=fold&dims="
                                  "&io=fold&patterns=fold";

static void key_of(const oxr_options *o, char *buf, size_t size)
{
	oxr_options_key(o, buf, size);
}

static void test_options_default_key(void **state)
{
	(void)state;
	oxr_options o;
	oxr_options_default(&o);
	char key[2048];
	key_of(&o, key, sizeof(key));
	assert_string_equal(key, DEFAULT_KEY); /* the cache key must not drift */
	assert_false(o.rankdir_lr);
	assert_int_equal(o.initializers, OXR_INIT_FOLD);
	assert_int_equal(o.group, OXR_GROUP_AUTO);
	assert_true(o.shapes);
	assert_int_equal(o.attrs, 1);
}

typedef struct accepted {
	const char *key, *value, *fragment; /* the key text the value must produce */
} accepted;

static const accepted accepts[] = {
    {"rankdir", "TB", "rankdir=TB&"}, {"rankdir", "tb", "rankdir=TB&"},
    {"rankdir", "LR", "rankdir=LR&"}, {"rankdir", "lr", "rankdir=LR&"},
    {"initializers", "fold", "initializers=fold&"}, {"initializers", "nodes", "initializers=nodes&"},
    {"initializers", "hide", "initializers=hide&"},
    {"subgraphs", "expand", "subgraphs=expand&"}, {"subgraphs", "collapse", "subgraphs=collapse&"},
    {"group", "auto", "group=auto&"}, {"group", "none", "group=none&"}, {"group", "1", "group=1&"},
    {"group", "7", "group=7&"}, {"group", "16", "group=16&"},
    {"expand", "", "expand=&"}, {"expand", "*", "expand=*&"},
    {"expand", "/encoder/layers.3,decoder", "expand=/encoder/layers.3,decoder&"},
    {"expand", "a b~!#$%'()+/:;<>?@[]^_`{|}", "expand=a b~!#$%'()+/:;<>?@[]^_`{|}&"},
    /* scope paths from the model are UTF-8 text (the SVG's data-group) */
    {"expand", "/\xe7\xbc\x96\xe7\xa0\x81\xe5\x99\xa8/caf\xc3\xa9", "expand=/\xe7\xbc\x96\xe7\xa0\x81\xe5\x99\xa8/caf\xc3\xa9&"},
    {"depth", "0", "depth=0&"}, {"depth", "3", "depth=3&"}, {"depth", "64", "depth=64&"},
    {"shapes", "on", "shapes=on&"}, {"shapes", "true", "shapes=on&"}, {"shapes", "1", "shapes=on&"},
    {"shapes", "yes", "shapes=on&"}, {"shapes", "off", "shapes=off&"},
    {"shapes", "false", "shapes=off&"}, {"shapes", "0", "shapes=off&"}, {"shapes", "no", "shapes=off&"},
    {"attrs", "none", "attrs=none"}, {"attrs", "key", "attrs=key"}, {"attrs", "all", "attrs=all"},
    {"attrs", "0", "attrs=none"}, {"attrs", "1", "attrs=key"}, {"attrs", "2", "attrs=all"},
    {"arith", "fold", "arith=fold&"}, {"arith", "nodes", "arith=nodes&"},
    {"unfold", "", "unfold="}, {"unfold", "n12", "unfold=n12"},
    {"unfold", "n12,n3.then_branch.n0,f2.n5,n7.a1.0.n2", "unfold=n12,n3.then_branch.n0,f2.n5,n7.a1.0.n2"},
    {"quant", "nodes", "&quant=nodes"},
    {"io", "fold", "&io=fold"}, {"io", "nodes", "&io=nodes"},
    {"patterns", "nodes", "&patterns=nodes"}, {"patterns", "fold", "&patterns=fold"},
    /* hide=: sorted, without repeats (one key per set); empty is none */
    {"hide", "Identity", "&hide=Identity"}, {"hide", "Identity,Constant,Identity", "&hide=Constant,Identity"},
    {"hide", "Cast,Add_1,Q", "&hide=Add_1,Cast,Q"},
    {"theme", "dark", "&patterns=fold&theme=dark"},
};

static void test_options_accepted(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(accepts) / sizeof(accepts[0]); i++) {
		oxr_options o;
		oxr_options_default(&o);
		if (!strcmp(accepts[i].key, "shapes") && strstr(accepts[i].fragment, "on"))
			o.shapes = false; /* start from the other value so the change shows */
		if (!strcmp(accepts[i].key, "rankdir") && strstr(accepts[i].fragment, "TB"))
			o.rankdir_lr = true;
		oxr_error err = {0};
		if (oxr_options_set(&o, accepts[i].key, accepts[i].value, &err) != OXR_OK)
			fail_msg("%s=%s rejected: %s", accepts[i].key, accepts[i].value, err.message);
		char key[2048];
		key_of(&o, key, sizeof(key));
		if (strstr(key, accepts[i].fragment) == NULL)
			fail_msg("%s=%s gives key %s", accepts[i].key, accepts[i].value, key);
	}
	/* every group 1..16 and depth 0..64 */
	for (int n = 1; n <= 16; n++) {
		oxr_options o;
		oxr_options_default(&o);
		char v[8];
		snprintf(v, sizeof(v), "%d", n);
		assert_int_equal(oxr_options_set(&o, "group", v, NULL), OXR_OK);
		assert_int_equal(o.group, n);
	}
	for (int n = 0; n <= 64; n++) {
		oxr_options o;
		oxr_options_default(&o);
		char v[8];
		snprintf(v, sizeof(v), "%d", n);
		assert_int_equal(oxr_options_set(&o, "depth", v, NULL), OXR_OK);
		assert_int_equal(o.expand_depth, n);
	}
	/* the longest expand list that fits */
	char long_list[OXR_EXPAND_MAX];
	memset(long_list, 'a', sizeof(long_list) - 1);
	long_list[sizeof(long_list) - 1] = '\0';
	oxr_options o;
	oxr_options_default(&o);
	assert_int_equal(oxr_options_set(&o, "expand", long_list, NULL), OXR_OK);
	assert_string_equal(o.expand, long_list);
}

typedef struct rejected {
	const char *key, *value;
} rejected;

static const rejected rejects[] = {
    {"rankdir", ""}, {"rankdir", "BT"}, {"rankdir", "RL"}, {"rankdir", "LR "}, {"rankdir", "lR"},
    {"rankdir", "tB"}, {"initializers", ""}, {"initializers", "Fold"}, {"initializers", "fold "},
    {"initializers", "show"}, {"subgraphs", ""}, {"subgraphs", "Expand"}, {"subgraphs", "yes"},
    {"group", ""}, {"group", "0"}, {"group", "17"}, {"group", "-1"}, {"group", "abc"},
    {"group", "1x"}, {"group", "9999"}, {"group", "auto "}, {"group", "Auto"}, {"group", "1.5"},
    {"expand", "a&b"}, {"expand", "a=b"}, {"expand", "tab\there"}, {"expand", "\x7f"},
    {"expand", "\xc3"}, {"expand", "\xff"}, {"expand", "\xed\xa0\x80"}, {"expand", "\xc2\x85"},
    {"expand", "nl\n"}, {"depth", ""}, {"depth", "-1"}, {"depth", "65"},
    {"quant", ""}, {"quant", "Fold"}, {"quant", "on"}, {"quant", "fold "},
    {"io", ""}, {"io", "Fold"}, {"io", "terminals"}, {"io", "nodes "},
    {"patterns", ""}, {"patterns", "Nodes"}, {"patterns", "off"},
    {"hide", ","}, {"hide", "Identity,"}, {"hide", ",Cast"}, {"hide", "a,,b"}, {"hide", "Iden-tity"},
    {"hide", "Identity Cast"}, {"hide", "a&b"}, {"hide", "a=b"}, {"hide", "\xc3\xa9"},
    {"theme", ""}, {"theme", "Dark"}, {"theme", "<script>"}, {"theme", "dark "},
    {"depth", "1.5"}, {"depth", "x"}, {"depth", "1000"}, {"shapes", ""}, {"shapes", "ON"},
    {"shapes", "maybe"}, {"shapes", "2"}, {"attrs", ""}, {"attrs", "3"}, {"attrs", "some"},
    {"attrs", "-1"}, {"attrs", "ALL"}, {"arith", ""}, {"arith", "Fold"}, {"arith", "boxes"},
    {"arith", "nodes "}, {"unfold", "n1&x"}, {"unfold", "n1=2"}, {"unfold", "n1 n2"},
    {"unfold", "/scope/n1"}, {"unfold", "n%31"}, {"unfold", "caf\xc3\xa9"}, {"unfold", "n1\n"},
};

static void test_options_rejected(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rejects) / sizeof(rejects[0]); i++) {
		oxr_options o, before;
		oxr_options_default(&o);
		before = o;
		oxr_error err = {0};
		oxr_code rc = oxr_options_set(&o, rejects[i].key, rejects[i].value, &err);
		if (rc != OXR_E_OPTION)
			fail_msg("%s=\"%s\" accepted", rejects[i].key, rejects[i].value);
		assert_int_equal(err.code, OXR_E_OPTION);
		if (strstr(err.message, rejects[i].key) == NULL)
			fail_msg("message for %s does not name it: %s", rejects[i].key, err.message);
		assert_memory_equal(&o, &before, sizeof(o)); /* a rejected value changes nothing */
		assert_int_equal(oxr_options_set(&o, rejects[i].key, rejects[i].value, NULL),
		                 OXR_E_OPTION); /* err may be NULL */
	}
	char too_long[OXR_EXPAND_MAX + 1];
	memset(too_long, 'a', sizeof(too_long) - 1);
	too_long[sizeof(too_long) - 1] = '\0';
	oxr_options o;
	oxr_options_default(&o);
	assert_int_equal(oxr_options_set(&o, "expand", too_long, NULL), OXR_E_OPTION);
	char too_many[OXR_UNFOLD_MAX + 1];
	memset(too_many, 'n', sizeof(too_many) - 1);
	too_many[sizeof(too_many) - 1] = '\0';
	assert_int_equal(oxr_options_set(&o, "unfold", too_many, NULL), OXR_E_OPTION);
	too_many[sizeof(too_many) - 2] = '\0'; /* the longest that fits */
	assert_int_equal(oxr_options_set(&o, "unfold", too_many, NULL), OXR_OK);
	static const char *const unknown[] = {"color", "", "RANKDIR", "rankdir ", "depth=", "format"};
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		oxr_error err = {0};
		assert_int_equal(oxr_options_set(&o, unknown[i], "x", &err), OXR_E_OPTION);
		assert_non_null(strstr(err.message, "unknown option"));
	}
}

/* Apply the canonical key's key=value pairs to fresh defaults. */
static void options_from_key(oxr_options *o, const char *key)
{
	char buf[2048];
	snprintf(buf, sizeof(buf), "%s", key);
	oxr_options_default(o);
	for (char *save = NULL, *kv = strtok_r(buf, "&", &save); kv; kv = strtok_r(NULL, "&", &save)) {
		char *eq = strchr(kv, '=');
		assert_non_null(eq);
		*eq = '\0';
		oxr_error err;
		if (oxr_options_set(o, kv, eq + 1, &err) != OXR_OK)
			fail_msg("key part %s=%s rejected: %s", kv, eq + 1, err.message);
	}
}

static void test_options_key_roundtrip(void **state)
{
	(void)state;
	/* every combination of a few values per option (deterministic walk) */
	static const char *const vals[][5] = {
	    {"rankdir", "TB", "LR", NULL}, {"initializers", "fold", "nodes", "hide", NULL},
	    {"subgraphs", "collapse", "expand", NULL}, {"group", "auto", "none", "3", "16"},
	    {"expand", "", "*", "/a/b,c d", NULL}, {"depth", "0", "1", "64", NULL},
	    {"shapes", "on", "off", NULL}, {"attrs", "none", "key", "all", NULL},
	    {"arith", "fold", "nodes", NULL}, {"unfold", "", "n1", "n2,n3.body.n0", NULL},
	    {"quant", "fold", "nodes", NULL}, {"dims", "", "batch:1", "a:2,b:30", NULL},
	    {"patterns", "fold", "nodes", NULL}, {"theme", "light", "dark", NULL}};
	unsigned combos = 0;
	for (unsigned seed = 0; seed < 2000; seed++) {
		oxr_options o;
		oxr_options_default(&o);
		unsigned x = seed;
		for (size_t k = 0; k < sizeof(vals) / sizeof(vals[0]); k++) {
			size_t n = 1;
			while (n < 5 && vals[k][n] != NULL)
				n++;
			const char *v = vals[k][1 + x % (unsigned)(n - 1)];
			x /= (unsigned)(n - 1);
			assert_int_equal(oxr_options_set(&o, vals[k][0], v, NULL), OXR_OK);
		}
		char key[2048], again[2048];
		key_of(&o, key, sizeof(key));
		oxr_options back;
		options_from_key(&back, key);
		key_of(&back, again, sizeof(again));
		assert_string_equal(key, again);
		assert_int_equal(back.rankdir_lr, o.rankdir_lr);
		assert_int_equal(back.initializers, o.initializers);
		assert_int_equal(back.subgraphs_expand, o.subgraphs_expand);
		assert_int_equal(back.group, o.group);
		assert_string_equal(back.expand, o.expand);
		assert_int_equal(back.expand_depth, o.expand_depth);
		assert_int_equal(back.shapes, o.shapes);
		assert_int_equal(back.attrs, o.attrs);
		assert_int_equal(back.arith_nodes, o.arith_nodes);
		assert_string_equal(back.unfold, o.unfold);
		assert_int_equal(back.quant_nodes, o.quant_nodes);
		assert_string_equal(back.dims, o.dims);
		assert_int_equal(back.theme_dark, o.theme_dark);
		combos++;
	}
	assert_int_equal(combos, 2000);
}

static void test_option_names(void **state)
{
	(void)state;
	static const char *const want[] = {"rankdir", "initializers", "subgraphs", "group",
	                                   "expand",  "depth",        "shapes",    "attrs",
	                                   "arith",   "unfold",       "quant",     "dims",
	                                   "io", "patterns", "hide", "theme"};
	size_t n = 0;
	while (oxr_option_names[n] != NULL)
		n++;
	assert_int_equal(n, 16);
	char key[2048];
	oxr_options o;
	oxr_options_default(&o);
	/* hide= is in the key only when given, theme= only when dark: the keys of every other
	 * set (all drawings made before them) stay what they were */
	key_of(&o, key, sizeof(key));
	assert_null(strstr(key, "hide="));
	assert_null(strstr(key, "theme="));
	assert_string_equal(oxr_option_names[14], "hide");
	assert_string_equal(oxr_option_names[15], "theme");
	assert_int_equal(oxr_options_set(&o, "theme", "light", NULL), OXR_OK);
	key_of(&o, key, sizeof(key));
	assert_null(strstr(key, "theme="));
	assert_int_equal(oxr_options_set(&o, "theme", "dark", NULL), OXR_OK);
	key_of(&o, key, sizeof(key));
	assert_non_null(strstr(key, "&theme=dark"));
	assert_int_equal(oxr_options_set(&o, "hide", "Identity", NULL), OXR_OK);
	key_of(&o, key, sizeof(key));
	assert_non_null(strstr(key, "&hide=Identity&theme=dark"));
	n = 14;
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(oxr_option_names[i], want[i]);
		/* each name is in the key, and its default value is accepted back */
		char pat[32];
		snprintf(pat, sizeof(pat), "%s=", want[i]);
		const char *p = strstr(key, pat);
		assert_non_null(p);
		char val[64];
		size_t len = strcspn(p + strlen(pat), "&");
		snprintf(val, sizeof(val), "%.*s", (int)len, p + strlen(pat));
		assert_int_equal(oxr_options_set(&o, want[i], val, NULL), OXR_OK);
	}
}

/* ---------------------------------------------------------------------------------------
 * oxr_buf
 */
static void test_buf_cap(void **state)
{
	(void)state;
	oxr_buf b;
	oxr_buf_init(&b, 10);
	assert_int_equal(b.max, 10);
	assert_true(oxr_buf_append(&b, "0123456789", 10));
	assert_int_equal(b.len, 10);
	assert_string_equal(b.data, "0123456789"); /* NUL-terminated */
	assert_false(b.failed);
	assert_false(oxr_buf_append(&b, "x", 1)); /* past the cap */
	assert_true(b.failed);
	assert_int_equal(b.len, 10);
	assert_string_equal(b.data, "0123456789"); /* what was there stays */
	assert_false(oxr_buf_append(&b, "", 0)); /* failed stays failed */
	assert_false(oxr_buf_printf(&b, "%d", 1));
	oxr_buf_free(&b);
	assert_null(b.data);
	assert_int_equal(b.len, 0);
	assert_int_equal(b.max, 10); /* free keeps the cap, clears the failure */
	assert_false(b.failed);
	assert_true(oxr_buf_append(&b, "abc", 3));
	oxr_buf_free(&b);

	oxr_buf_init(&b, 0); /* 0: the default cap, 1 GiB */
	assert_int_equal(b.max, (size_t)1 << 30);
	assert_true(oxr_buf_append(&b, "", 0));
	assert_int_equal(b.len, 0);
	oxr_buf_free(&b);

	oxr_buf_init(&b, 300); /* the cap through printf, both paths (short and >= 256) */
	char big[400];
	memset(big, 'y', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_true(oxr_buf_printf(&b, "%.299s", big));
	assert_int_equal(b.len, 299);
	assert_false(oxr_buf_printf(&b, "%s", "zz"));
	assert_true(b.failed);
	assert_int_equal(b.len, 299);
	oxr_buf_free(&b);
	oxr_buf_init(&b, 300);
	assert_false(oxr_buf_printf(&b, "%s", big));
	assert_true(b.failed);
	assert_true(b.len <= 300);
	oxr_buf_free(&b);
}

static void test_buf_printf_growth(void **state)
{
	(void)state;
	oxr_buf b;
	oxr_buf_init(&b, 0);
	char chunk[1001];
	for (int i = 0; i < 1000; i++)
		chunk[i] = (char)('a' + i % 26);
	chunk[1000] = '\0';
	for (int i = 0; i < 100; i++)
		assert_true(oxr_buf_printf(&b, "%s|%04d", chunk, i));
	assert_int_equal(b.len, 100 * 1005);
	for (int i = 0; i < 100; i++) {
		assert_memory_equal(b.data + (size_t)i * 1005, chunk, 1000);
		char tail[6];
		snprintf(tail, sizeof(tail), "|%04d", i);
		assert_memory_equal(b.data + (size_t)i * 1005 + 1000, tail, 5);
	}
	assert_int_equal(b.data[b.len], '\0');
	assert_true(b.cap > b.len);
	size_t len = 0;
	char *stolen = oxr_buf_steal(&b, &len);
	assert_int_equal(len, 100 * 1005);
	assert_memory_equal(stolen, chunk, 1000);
	assert_null(b.data);
	assert_int_equal(b.len, 0);
	assert_int_equal(b.cap, 0);
	assert_int_equal(b.max, (size_t)1 << 30);
	free(stolen);
	assert_true(oxr_buf_printf(&b, "%s", "after steal"));
	assert_string_equal(b.data, "after steal");
	oxr_buf_free(&b);
}

static void test_code_and_format_names(void **state)
{
	(void)state;
	static const char *const want[OXR_E__COUNT] = {
	    "ok", "bad_option", "too_big", "out_of_memory", "layout_failed", "layout_timeout",
	    "layout_worker_failed", "not_found", "bad_model", "io_error", "bad_overlay"};
	for (int c = 0; c < OXR_E__COUNT; c++)
		assert_string_equal(oxr_code_name((oxr_code)c), want[c]);
	assert_string_equal(oxr_code_name(OXR_E__COUNT), "unknown");
	assert_string_equal(oxr_code_name((oxr_code)-1), "unknown");
	assert_string_equal(oxr_format_ext(OXR_FMT_SVG), "svg");
	assert_string_equal(oxr_format_ext(OXR_FMT_DOT), "dot");
	assert_string_equal(oxr_format_ext(OXR_FMT_LAYOUT_JSON), "json");
}

/* ---------------------------------------------------------------------------------------
 * The JSON document, one node, search
 */
static json_t *document(fx *f, oxr_doc_kind kind)
{
	oxr_buf b;
	oxr_buf_init(&b, 0);
	oxr_error err = {0};
	assert_int_equal(oxr_doc_json(f->m, f->d, kind, &b, &err), OXR_OK);
	json_t *j = parse(&b);
	oxr_buf_free(&b);
	return j;
}

static void test_doc_structure(void **state)
{
	fx *f = *state;
	json_t *doc = document(f, OXR_DOC_FULL);
	assert_string_equal(str_of(doc, "format"), "onnxviz.document/1");
	json_t *nodes = json_object_get(doc, "nodes");
	static const char *const ids[] = {"n0", "n1", "n2", "n3", "n4", "n5", "n6",
	                                  "n5.then_branch.n0", "n5.else_branch.n0"};
	assert_int_equal(json_array_size(nodes), 9);
	for (size_t i = 0; i < 9; i++)
		assert_non_null(find(nodes, "id", ids[i]));
	json_t *n5 = find(nodes, "id", "n5");
	json_t *subs = json_object_get(n5, "subgraphs");
	assert_int_equal(json_array_size(subs), 2);
	assert_string_equal(json_string_value(json_array_get(subs, 0)), "n5.then_branch");
	json_t *scopes = json_object_get(doc, "scopes");
	json_t *then = find(scopes, "id", "n5.then_branch");
	assert_non_null(then);
	assert_string_equal(str_of(then, "owner"), "n5");
	assert_string_equal(str_of(then, "parent"), "");
	assert_string_equal(str_of(then, "first_node"), "n5.then_branch.n0");
	assert_string_equal(str_of(then, "name"), "then");
	/* edges: one per non-empty node input; the two subgraphs use z from outside */
	json_t *edges = json_object_get(doc, "edges");
	assert_int_equal(json_array_size(edges), 10);
	size_t i, outer = 0;
	json_t *e;
	json_array_foreach(edges, i, e) outer += json_is_true(json_object_get(e, "outer"));
	assert_int_equal(outer, 2);
	/* initializers, refs, ggml order */
	json_t *inits = json_object_get(doc, "initializers");
	json_t *w = find(inits, "name", "W");
	assert_string_equal(str_of(w, "ref"), "@i0");
	assert_ints(json_object_get(w, "dims"), (const int64_t[]){2, 3}, 2);
	assert_ints(json_object_get(w, "ggml_ne"), (const int64_t[]){3, 2, 1, 1}, 4);
	assert_int_equal(json_integer_value(json_object_get(w, "count")), 6);
	assert_int_equal(json_integer_value(json_object_get(w, "bytes")), 24);
	assert_string_equal(str_of(w, "storage"), "raw");
	assert_string_equal(str_of(w, "dtype"), "FLOAT");
	json_t *b5 = find(inits, "name", "B5");
	assert_string_equal(str_of(b5, "ref"), "@i1");
	assert_ints(json_object_get(b5, "ggml_ne"), (const int64_t[]){6, 5, 4, 6}, 4);
	assert_int_equal(json_integer_value(json_object_get(b5, "bytes")), 2880);
	json_t *wv = json_array_get(json_object_get(doc, "values"),
	                            (size_t)json_integer_value(json_object_get(w, "value")));
	assert_string_equal(str_of(wv, "kind"), "initializer");
	assert_string_equal(str_of(wv, "tensor"), "@i0");
	/* the Constant's tensor: a ref to the attribute */
	json_t *n1 = find(nodes, "id", "n1");
	json_t *cv = json_object_get(json_array_get(json_object_get(n1, "attributes"), 0), "value");
	assert_string_equal(str_of(cv, "ref"), "n1@a0");
	assert_ints(json_object_get(cv, "ggml_ne"), (const int64_t[]){2, 1, 1, 1}, 4);
	/* a graph input's declared shape */
	json_t *x = find(json_object_get(doc, "values"), "name", "x");
	json_t *xt = json_object_get(x, "type");
	assert_string_equal(str_of(xt, "source"), "declared");
	assert_int_equal(json_integer_value(json_array_get(json_object_get(xt, "shape"), 0)), 1);
	assert_string_equal(json_string_value(json_array_get(json_object_get(xt, "shape"), 1)), "N");
	json_t *sum = json_object_get(doc, "summary");
	assert_int_equal(json_integer_value(json_object_get(sum, "nodes")), 9);
	assert_int_equal(json_integer_value(json_object_get(sum, "main_graph_nodes")), 7);
	assert_int_equal(json_integer_value(json_object_get(sum, "subgraphs")), 2);
	assert_int_equal(json_integer_value(json_object_get(sum, "initializers")), 2);
	json_decref(doc);
}

static void test_doc_strings_and_numbers(void **state)
{
	fx *f = *state;
	json_t *doc = document(f, OXR_DOC_FULL);
	json_t *n4 = find(json_object_get(doc, "nodes"), "id", "n4");
	assert_string_equal(str_of(n4, "name"), "Leaky\xef\xbf\xbdName"); /* U+FFFD */
	assert_string_equal(str_of(n4, "name_hex"), "4c65616b79ff4e616d65");
	assert_null(json_object_get(n4, "op_type_hex")); /* valid UTF-8: no _hex */
	json_t *attrs = json_object_get(n4, "attributes");
	json_t *alpha = find(attrs, "name", "alpha");
	assert_string_equal(str_of(alpha, "value"), "NaN");
	assert_string_equal(str_of(find(attrs, "name", "beta"), "value"), "Infinity");
	assert_string_equal(str_of(find(attrs, "name", "gamma"), "value"), "-Infinity");
	assert_true(json_real_value(json_object_get(find(attrs, "name", "f"), "value")) == 0.25);
	assert_int_equal(json_integer_value(json_object_get(find(attrs, "name", "k"), "value")), 42);
	json_t *bad = json_array_get(attrs, 3);
	assert_string_equal(str_of(bad, "name"), "bad\xef\xbf\xbdname");
	assert_string_equal(str_of(bad, "name_hex"), "626164ff6e616d65");
	assert_string_equal(str_of(bad, "type"), "STRING");
	assert_string_equal(str_of(bad, "value"), "v\xef\xbf\xbd");
	assert_string_equal(str_of(bad, "value_hex"), "76fe");
	json_t *strs = find(attrs, "name", "strs");
	assert_string_equal(json_string_value(json_array_get(json_object_get(strs, "value"), 1)),
	                    "x\xef\xbf\xbd");
	json_t *hex = json_object_get(strs, "value_hex");
	assert_int_equal(json_array_size(hex), 2);
	assert_string_equal(json_string_value(json_array_get(hex, 0)), "6f6b");
	assert_string_equal(json_string_value(json_array_get(hex, 1)), "78ff");
	json_decref(doc);
}

static void test_doc_summary_kind(void **state)
{
	fx *f = *state;
	json_t *doc = document(f, OXR_DOC_SUMMARY);
	assert_int_equal(json_object_size(doc), 4);
	assert_non_null(json_object_get(doc, "format"));
	assert_non_null(json_object_get(doc, "model"));
	assert_non_null(json_object_get(doc, "summary"));
	assert_non_null(json_object_get(doc, "warnings"));
	assert_string_equal(str_of(json_object_get(doc, "model"), "graph_name"), "small");
	json_decref(doc);
}

static void test_doc_too_big(void **state)
{
	fx *f = *state;
	oxr_buf b;
	oxr_buf_init(&b, 100);
	oxr_error err = {0};
	assert_int_equal(oxr_doc_json(f->m, f->d, OXR_DOC_FULL, &b, &err), OXR_E_TOO_BIG);
	assert_int_equal(err.code, OXR_E_TOO_BIG);
	assert_true(b.failed);
	oxr_buf_free(&b); /* that len stays <= max: test_doc_json_respects_the_cap */
}

/* Regression (B3): jsonx.c's dump callback appends one-byte tokens without checking the
 * buffer's max (it only checks cap, which grows past max), so a document a few bytes
 * longer than max is accepted: oxr_doc_json returns OK with len > max; and a failed dump
 * leaves len > max. */
static void test_doc_json_respects_the_cap(void **state)
{
	fx *f = *state;
	for (size_t max = 10; max <= 1000; max *= 10) {
		oxr_buf b;
		oxr_buf_init(&b, max);
		oxr_code rc = oxr_doc_json(f->m, f->d, OXR_DOC_FULL, &b, NULL);
		size_t len = b.len;
		oxr_buf_free(&b);
		if (rc != OXR_E_TOO_BIG || len > max)
			fail_msg("max %zu: rc %s, len %zu", max, oxr_code_name(rc), len);
	}
	oxr_buf full;
	oxr_buf_init(&full, 0);
	assert_int_equal(oxr_doc_json(f->m, f->d, OXR_DOC_FULL, &full, NULL), OXR_OK);
	for (size_t cut = 1; cut <= 4; cut++) {
		oxr_buf b;
		oxr_buf_init(&b, full.len - cut);
		oxr_error err = {0};
		oxr_code rc = oxr_doc_json(f->m, f->d, OXR_DOC_FULL, &b, &err);
		size_t len = b.len, max = b.max, want = full.len;
		oxr_buf_free(&b);
		if (rc == OXR_OK || len > max) {
			oxr_buf_free(&full);
			fail_msg("max %zu (document %zu bytes): rc %s, len %zu", max, want,
			         oxr_code_name(rc), len);
		}
	}
	oxr_buf exact;
	oxr_buf_init(&exact, full.len);
	assert_int_equal(oxr_doc_json(f->m, f->d, OXR_DOC_FULL, &exact, NULL), OXR_OK);
	assert_int_equal(exact.len, full.len);
	assert_memory_equal(exact.data, full.data, full.len);
	oxr_buf_free(&exact);
	oxr_buf_free(&full);
}

static json_t *node_doc(fx *f, const char *id)
{
	oxr_buf b;
	oxr_buf_init(&b, 0);
	oxr_error err = {0};
	oxr_code rc = oxr_node_json(f->m, f->d, id, &b, &err);
	if (rc != OXR_OK)
		fail_msg("node %s: %s", id, err.message);
	json_t *j = parse(&b);
	oxr_buf_free(&b);
	return j;
}

static void test_node_json(void **state)
{
	fx *f = *state;
	json_t *n2 = node_doc(f, "n2");
	assert_string_equal(str_of(n2, "id"), "n2");
	json_t *w = json_array_get(json_object_get(n2, "inputs"), 1);
	assert_string_equal(str_of(w, "name"), "W");
	json_t *init = json_object_get(w, "initializer");
	assert_string_equal(str_of(init, "ref"), "@i0");
	assert_ints(json_object_get(init, "dims"), (const int64_t[]){2, 3}, 2);
	json_decref(n2);
	json_t *n3 = node_doc(f, "n3"); /* c comes from a Constant: shown as its tensor */
	json_t *c = json_array_get(json_object_get(n3, "inputs"), 1);
	assert_string_equal(str_of(json_object_get(c, "constant"), "ref"), "n1@a0");
	json_decref(n3);
	json_t *n5 = node_doc(f, "n5");
	json_t *subs = json_object_get(n5, "subgraphs");
	assert_int_equal(json_array_size(subs), 2);
	assert_string_equal(str_of(json_array_get(subs, 1), "id"), "n5.else_branch");
	json_decref(n5);
	json_t *inner = node_doc(f, "n5.then_branch.n0");
	assert_string_equal(str_of(inner, "scope"), "n5.then_branch");
	json_decref(inner);

	static const char *const unknown[] = {"n99", "", "n5.then_branch", "x", "n-1"};
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		oxr_buf b;
		oxr_buf_init(&b, 0);
		oxr_error err = {0};
		assert_int_equal(oxr_node_json(f->m, f->d, unknown[i], &b, &err), OXR_E_NOT_FOUND);
		assert_int_equal(err.code, OXR_E_NOT_FOUND);
		assert_non_null(strstr(err.message, "no node"));
		assert_int_equal(b.len, 0);
		oxr_buf_free(&b);
	}
}

static json_t *search(fx *f, const char *q, size_t limit)
{
	oxr_buf b;
	oxr_buf_init(&b, 0);
	oxr_error err = {0};
	assert_int_equal(oxr_search_json(f->m, f->d, q, limit, &b, &err), OXR_OK);
	json_t *j = parse(&b);
	oxr_buf_free(&b);
	return j;
}

static void test_search(void **state)
{
	fx *f = *state;
	json_t *r = search(f, "RELU", 10); /* case-insensitive: relu1 by name, LeakyRelu by op */
	assert_int_equal(json_integer_value(json_object_get(r, "total")), 2);
	json_t *hits = json_object_get(r, "hits");
	json_t *h0 = find(hits, "node", "n0");
	assert_string_equal(str_of(h0, "match"), "name");
	assert_string_equal(str_of(h0, "text"), "relu1");
	assert_string_equal(str_of(find(hits, "node", "n4"), "match"), "op_type");
	assert_string_equal(str_of(r, "query"), "RELU");
	json_decref(r);
	r = search(f, "relu", 1); /* limit: all counted, one returned */
	assert_int_equal(json_integer_value(json_object_get(r, "total")), 2);
	assert_int_equal(json_array_size(json_object_get(r, "hits")), 1);
	json_decref(r);
	r = search(f, "", 10);
	assert_int_equal(json_integer_value(json_object_get(r, "total")), 0);
	json_decref(r);
	r = search(f, "42", 10); /* an INT attribute's value */
	h0 = json_array_get(json_object_get(r, "hits"), 0);
	assert_string_equal(str_of(h0, "node"), "n4");
	assert_string_equal(str_of(h0, "match"), "attribute");
	assert_string_equal(str_of(h0, "text"), "k");
	json_decref(r);
	r = search(f, "Identity", 10); /* nodes inside subgraphs, with their scope */
	assert_int_equal(json_integer_value(json_object_get(r, "total")), 2);
	assert_string_equal(str_of(json_array_get(json_object_get(r, "hits"), 0), "scope"),
	                    "n5.then_branch");
	json_decref(r);
	r = search(f, "\xff", 10); /* invalid UTF-8 in the query and in the hit: valid JSON */
	assert_int_equal(json_integer_value(json_object_get(r, "total")), 1); /* one per node */
	assert_string_equal(str_of(r, "query"), "\xef\xbf\xbd");
	json_t *n4 = find(json_object_get(r, "hits"), "node", "n4");
	assert_string_equal(str_of(n4, "name_hex"), "4c65616b79ff4e616d65");
	json_decref(r);
}

/* Regression (B12): doc.c says search covers attribute values "strings, ints, floats as
 * text", but FLOAT attributes are never matched: f=0.25 is not found by "0.25". */
static void test_search_finds_float_attributes(void **state)
{
	fx *f = *state;
	json_t *r = search(f, "0.25", 10);
	json_int_t total = json_integer_value(json_object_get(r, "total"));
	json_decref(r);
	if (total != 1)
		fail_msg("search \"0.25\": %lld hits, expected n4's attribute f", (long long)total);
}

/* ---------------------------------------------------------------------------------------
 * Rendering
 */
static char *render(fx *f, oxr_format fmt, const char *opt_key, const char *opt_val,
                    size_t *len)
{
	oxr_options o;
	oxr_options_default(&o);
	if (opt_key != NULL)
		assert_int_equal(oxr_options_set(&o, opt_key, opt_val, NULL), OXR_OK);
	oxr_buf b;
	oxr_buf_init(&b, 0);
	oxr_error err = {0};
	oxr_code rc = oxr_render(f->m, f->d, &o, fmt, &b, &err);
	if (rc != OXR_OK)
		fail_msg("render %s: %s", oxr_format_ext(fmt), err.message);
	return oxr_buf_steal(&b, len);
}

static void test_render_svg(void **state)
{
	fx *f = *state;
	size_t len;
	char *svg = render(f, OXR_FMT_SVG, NULL, NULL, &len);
	assert_true(len > 100 && strlen(svg) == len);
	assert_memory_equal(svg, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg ", 44);
	assert_non_null(strstr(svg, "data-node=\"n4\""));
	assert_non_null(strstr(svg, "<title>Leaky\xef\xbf\xbdName</title>")); /* escaped name */
	assert_null(strstr(svg, "data-node=\"n1\"")); /* the Constant is folded */
	assert_null(strstr(svg, "<script"));
	assert_null(strstr(svg, "href"));
	assert_non_null(strstr(svg, "</svg>\n"));
	free(svg);
	svg = render(f, OXR_FMT_SVG, "initializers", "nodes", &len);
	assert_non_null(strstr(svg, "data-node=\"n1\"")); /* constants stay boxes */
	free(svg);
	svg = render(f, OXR_FMT_SVG, "subgraphs", "expand", &len);
	assert_non_null(strstr(svg, "data-node=\"n5.then_branch.n0\""));
	assert_non_null(strstr(svg, "data-scope=\"n5.else_branch\""));
	free(svg);
}

static void test_render_dot(void **state)
{
	fx *f = *state;
	size_t len;
	char *dot = render(f, OXR_FMT_DOT, "rankdir", "LR", &len);
	assert_memory_equal(dot, "digraph onnxviz {", 17);
	assert_non_null(strstr(dot, "rankdir=LR"));
	assert_non_null(strstr(dot, "Leaky\xef\xbf\xbdName")); /* label text, never raw bytes */
	assert_null(strstr(dot, "\xff"));
	assert_null(strstr(dot, "URL"));
	assert_null(strstr(dot, "image"));
	free(dot);
}

static void test_render_layout_json(void **state)
{
	fx *f = *state;
	size_t len;
	char *s = render(f, OXR_FMT_LAYOUT_JSON, "rankdir", "LR", &len);
	json_error_t je;
	json_t *j = json_loadb(s, len, 0, &je);
	assert_non_null(j);
	assert_string_equal(str_of(j, "format"), "onnxviz.layout/1");
	assert_string_equal(str_of(j, "rankdir"), "LR");
	json_t *n4 = find(json_object_get(j, "nodes"), "node", "n4");
	assert_non_null(n4);
	assert_true(json_real_value(json_object_get(n4, "w")) > 0);
	assert_true(json_array_size(json_object_get(j, "edges")) > 0);
	json_decref(j);
	free(s);
}

static void test_render_errors(void **state)
{
	fx *f = *state;
	oxr_options o;
	oxr_options_default(&o);
	oxr_buf b;
	oxr_buf_init(&b, 200);
	oxr_error err = {0};
	assert_int_equal(oxr_render(f->m, f->d, &o, OXR_FMT_SVG, &b, &err), OXR_E_TOO_BIG);
	assert_int_equal(err.code, OXR_E_TOO_BIG);
	assert_true(b.len <= 200);
	oxr_buf_free(&b);
	oxr_buf_init(&b, 200);
	assert_int_equal(oxr_render(f->m, f->d, &o, OXR_FMT_DOT, &b, &err), OXR_E_TOO_BIG);
	assert_true(b.len <= 200);
	oxr_buf_free(&b);

	/* a model without a graph: a document, but nothing to draw */
	pbw m = {0};
	pbw_int(&m, 1, 8);
	oxp_model *model;
	oxp_dag *dag;
	assert_int_equal(oxp_model_parse(&model, m.p, m.len, NULL, NULL), OXP_OK);
	assert_int_equal(oxp_dag_build(&dag, model, NULL, NULL), OXP_OK);
	oxr_buf_init(&b, 0);
	assert_int_equal(oxr_render(model, dag, &o, OXR_FMT_SVG, &b, &err), OXR_E_MODEL);
	assert_int_equal(err.code, OXR_E_MODEL);
	oxr_buf_free(&b);
	oxr_buf_init(&b, 0);
	assert_int_equal(oxr_doc_json(model, dag, OXR_DOC_FULL, &b, NULL), OXR_OK);
	json_t *doc = parse(&b);
	assert_true(json_is_null(json_object_get(json_object_get(doc, "model"), "graph_name")));
	assert_int_equal(json_array_size(json_object_get(doc, "nodes")), 0);
	json_decref(doc);
	oxr_buf_free(&b);
	oxp_dag_free(dag);
	oxp_model_free(model);
	pbw_free(&m);
}

/* Regression (B14): the same model and options rendered differently within one process.
 * cgraph orders subgraphs by ID, and a named subgraph's ID is the address of its interned
 * name ("cluster_3"), so the order of clusters in the DOT and in the layout follows the
 * heap: another render or any allocation in between changes the output. */
static void test_render_is_deterministic(void **state)
{
	fx *f = *state;
	oxr_options o;
	oxr_options_default(&o);
	assert_int_equal(oxr_options_set(&o, "subgraphs", "expand", NULL), OXR_OK);
	oxr_buf first;
	oxr_buf_init(&first, 0);
	assert_int_equal(oxr_render(f->m, f->d, &o, OXR_FMT_DOT, &first, NULL), OXR_OK);
	int differ = 0;
	for (int i = 0; i < 20; i++) {
		void *junk[16]; /* what a service does between two requests */
		for (int k = 0; k < 16; k++)
			junk[k] = malloc((size_t)(16 + (i * 7 + k * 13) % 200));
		oxr_buf b;
		oxr_buf_init(&b, 0);
		assert_int_equal(oxr_render(f->m, f->d, &o, OXR_FMT_DOT, &b, NULL), OXR_OK);
		differ += b.len != first.len || memcmp(b.data, first.data, b.len) != 0;
		if (getenv("DUMP_B14") && differ == 1) {
			FILE *fa = fopen("/tmp/b14a.dot", "w"), *fb = fopen("/tmp/b14b.dot", "w");
			fwrite(first.data, 1, first.len, fa);
			fwrite(b.data, 1, b.len, fb);
			fclose(fa);
			fclose(fb);
		}
		oxr_buf_free(&b);
		for (int k = 0; k < 16; k += 2)
			free(junk[k]);
		for (int k = 1; k < 16; k += 2)
			free(junk[k]);
	}
	oxr_buf_free(&first);
	if (differ > 0)
		fail_msg("%d of 20 renders of the same model and options differ from the first",
		         differ);
}

/* The onnxviz binary: $ONNXVIZ_BIN, else <this program's folder>/../onnxviz. */
static bool onnxviz_bin(char *out, size_t size)
{
	const char *env = getenv("ONNXVIZ_BIN");
	if (env != NULL && env[0] != '\0') {
		snprintf(out, size, "%s", env);
	} else {
		char self[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n <= 0)
			return false;
		self[n] = '\0';
		for (int up = 0; up < 2; up++) {
			char *slash = strrchr(self, '/');
			if (slash == NULL)
				return false;
			*slash = '\0';
		}
		snprintf(out, size, "%s/onnxviz", self);
	}
	return access(out, X_OK) == 0;
}

static void test_render_isolated_matches_in_process(void **state)
{
	fx *f = *state;
	char exe[PATH_MAX + 16];
	if (!onnxviz_bin(exe, sizeof(exe))) {
		fprintf(stderr, "[ SKIPPED ] no onnxviz binary (set ONNXVIZ_BIN): %s\n", exe);
		skip();
	}
	char path[] = "/tmp/onnxviz-test-render-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, f->bytes.p, f->bytes.len), (ssize_t)f->bytes.len);
	close(fd);
	oxr_worker_limits lim;
	oxr_worker_limits_default(&lim);
	if (getenv("ONNXVIZ_SANITIZED") != NULL)
		lim.memory_bytes = 0; /* ASan cannot start under RLIMIT_AS */
	/* (clusters: see test_render_is_deterministic; the worker must match in-process output exactly) */
	const oxr_format fmts[] = {OXR_FMT_SVG, OXR_FMT_DOT, OXR_FMT_LAYOUT_JSON};
	for (size_t i = 0; i < 3; i++) {
		oxr_options o;
		oxr_options_default(&o);
		assert_int_equal(oxr_options_set(&o, "rankdir", "LR", NULL), OXR_OK);
		oxr_buf iso, here;
		oxr_buf_init(&iso, 0);
		oxr_buf_init(&here, 0);
		oxr_error err = {0};
		oxr_code rc = oxr_render_isolated(exe, path, &o, fmts[i], &lim, &iso, &err);
		if (rc != OXR_OK)
			fail_msg("isolated %s: %s: %s", oxr_format_ext(fmts[i]), oxr_code_name(rc),
			         err.message);
		assert_int_equal(oxr_render(f->m, f->d, &o, fmts[i], &here, NULL), OXR_OK);
		assert_int_equal(iso.len, here.len);
		assert_memory_equal(iso.data, here.data, here.len);
		oxr_buf_free(&iso);
		oxr_buf_free(&here);
	}
	oxr_buf b;
	oxr_buf_init(&b, 0);
	oxr_error err = {0};
	oxr_options o;
	oxr_options_default(&o);
	char missing[sizeof(path) + 8];
	snprintf(missing, sizeof(missing), "%s.none", path);
	/* a model file that cannot be opened is an I/O error, not a bad model (B11) */
	assert_int_equal(oxr_render_isolated(exe, missing, &o, OXR_FMT_SVG, &lim, &b, &err),
	                 OXR_E_IO);
	assert_int_equal(err.code, OXR_E_IO);
	oxr_buf_free(&b);
	unlink(path);
}

/* ---------------------------------------------------------------------------------------
 * Folding bookkeeping: tests/data/shape/bookkeeping.onnx (tests/data/shape/make_models.py
 * says what each node is)
 */
typedef struct bkfx {
	oxp_model *m;
	oxp_dag *d;
} bkfx;

static int bk_setup(void **state)
{
	bkfx *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	const char *self = __FILE__;
	const char *cut = strstr(self, "tests/unit/");
	char path[1024];
	snprintf(path, sizeof(path), "%.*stests/data/shape/bookkeeping.onnx",
	         cut != NULL ? (int)(cut - self) : 0, self);
	oxp_error e;
	if (oxp_model_open(&f->m, path, NULL, &e) != OXP_OK ||
	    oxp_dag_build(&f->d, f->m, NULL, &e) != OXP_OK) {
		fprintf(stderr, "%s: %s\n", path, e.message);
		return -1;
	}
	*state = f;
	return 0;
}

static int bk_teardown(void **state)
{
	bkfx *f = *state;
	oxp_dag_free(f->d);
	oxp_model_free(f->m);
	free(f);
	return 0;
}

/* Render with "key=value&..." options (full detail unless group is given). */
static char *bk_render(bkfx *f, oxr_format fmt, const char *opts)
{
	oxr_options o;
	oxr_options_default(&o);
	assert_int_equal(oxr_options_set(&o, "group", "none", NULL), OXR_OK);
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", opts);
	for (char *save = NULL, *kv = strtok_r(buf, "&", &save); kv; kv = strtok_r(NULL, "&", &save)) {
		char *eq = strchr(kv, '=');
		assert_non_null(eq);
		*eq = '\0';
		assert_int_equal(oxr_options_set(&o, kv, eq + 1, NULL), OXR_OK);
	}
	oxr_buf b;
	oxr_buf_init(&b, 0);
	oxr_error err = {0};
	if (oxr_render(f->m, f->d, &o, fmt, &b, &err) != OXR_OK)
		fail_msg("render %s: %s", opts, err.message);
	return oxr_buf_steal(&b, NULL);
}

static json_t *bk_layout(bkfx *f, const char *opts)
{
	char *s = bk_render(f, OXR_FMT_LAYOUT_JSON, opts);
	json_error_t je;
	json_t *j = json_loads(s, 0, &je);
	free(s);
	assert_non_null(j);
	return j;
}

/* The names of the op boxes, sorted and joined by spaces. */
static void op_boxes(json_t *lay, char *out, size_t size)
{
	const char *names[128];
	size_t n = 0, i;
	json_t *b;
	json_array_foreach(json_object_get(lay, "nodes"), i, b) {
		if (strcmp(str_of(b, "kind"), "op") == 0 && n < 128)
			names[n++] = str_of(b, "title");
	}
	for (size_t a = 0; a < n; a++)
		for (size_t c = a + 1; c < n; c++)
			if (strcmp(names[c], names[a]) < 0) {
				const char *t = names[a];
				names[a] = names[c];
				names[c] = t;
			}
	size_t o = 0;
	out[0] = '\0';
	for (size_t k = 0; k < n && o < size; k++)
		o += (size_t)snprintf(out + o, size - o, "%s%s", k ? " " : "", names[k]);
}

/* The folded rows of the op box titled `name`, joined by " | ". */
static void rows_of(json_t *lay, const char *name, char *out, size_t size, bool chains_only)
{
	json_t *box = find(json_object_get(lay, "nodes"), "title", name);
	if (box == NULL)
		fail_msg("no box %s", name);
	size_t o = 0, i;
	json_t *r;
	out[0] = '\0';
	json_array_foreach(json_object_get(box, "rows"), i, r) {
		if (json_object_get(r, "value") == NULL)
			continue;
		json_t *u = json_object_get(r, "unfold");
		if (chains_only && u == NULL)
			continue;
		if (u != NULL)
			assert_string_equal(json_string_value(u), str_of(box, "node"));
		o += (size_t)snprintf(out + o, size - o, "%s%s", o ? " | " : "", str_of(r, "text"));
		if (o >= size)
			break;
	}
}

/* The edges of a style as "from>to" titles, sorted, joined by spaces. */
static void edges_of(json_t *lay, const char *style, char *out, size_t size)
{
	json_t *nodes = json_object_get(lay, "nodes");
	char items[16][96];
	size_t n = 0, i;
	json_t *e;
	json_array_foreach(json_object_get(lay, "edges"), i, e) {
		if (strcmp(str_of(e, "style"), style) != 0 || n == 16)
			continue;
		json_t *a = find(nodes, "id", str_of(e, "from")), *b = find(nodes, "id", str_of(e, "to"));
		snprintf(items[n++], sizeof(items[0]), "%s>%s", str_of(a, "title"), str_of(b, "title"));
	}
	for (size_t a = 0; a < n; a++)
		for (size_t c = a + 1; c < n; c++)
			if (strcmp(items[c], items[a]) < 0) {
				char t[96];
				memcpy(t, items[a], sizeof(t));
				memcpy(items[a], items[c], sizeof(t));
				memcpy(items[c], t, sizeof(t));
			}
	size_t o = 0;
	out[0] = '\0';
	for (size_t k = 0; k < n && o < size; k++)
		o += (size_t)snprintf(out + o, size - o, "%s%s", k ? " " : "", items[k]);
}

static void test_fold_default(void **state)
{
	bkfx *f = *state;
	json_t *lay = bk_layout(f, "");
	char got[2048];
	/* every node that reads data is a box; bookkeeping only when it is a graph output
	 * (cl sz shp_out pcol_flat) or nothing consumes it (dead) */
	op_boxes(lay, got, sizeof(got));
	assert_string_equal(got, "cl custom cyc1 cyc2 dead drop eye_e fcall if_bk masked mm "
	                         "padded pcol_flat r r3 rnd ry shp_out sz xs");
	/* rows: the values the data propagation knows, else the type; the folded ops */
	rows_of(lay, "r", got, sizeof(got), true);
	assert_string_equal(got, "shape = [N, -1] \xc2\xb7 7 ops");
	rows_of(lay, "padded", got, sizeof(got), true);
	assert_string_equal(got, "pads = [2, 0, 3, 1] \xc2\xb7 12 ops");
	rows_of(lay, "masked", got, sizeof(got), true);
	assert_string_equal(got, "mask \xe2\x9f\xa8" "1\xc3\x97?\xe2\x9f\xa9 f32 \xc2\xb7 8 ops");
	rows_of(lay, "xs", got, sizeof(got), true);
	assert_string_equal(got, "half \xe2\x9f\xa8\xe2\x9f\xa9 f32 \xc2\xb7 3 ops");
	rows_of(lay, "mm", got, sizeof(got), true);
	/* the schema's input name, except on elementwise math (above: the value's name) */
	assert_string_equal(got, "B \xe2\x9f\xa8" "8\xc3\x97" "3\xe2\x9f\xa9 f32 \xc2\xb7 1 op");
	/* constants: rows with their values, nothing to unfold */
	rows_of(lay, "custom", got, sizeof(got), false);
	assert_string_equal(got, "c0 = 0");
	rows_of(lay, "custom", got, sizeof(got), true);
	assert_string_equal(got, "");
	rows_of(lay, "r3", got, sizeof(got), false);
	assert_string_equal(got, "shape = [-1, 3, 8]");
	/* dotted edges: a chain reads Y, which nothing else brings to ry; shp_out's chain reads
	 * X, which reaches it no other way.  X reaches masked (through r) and the If (through
	 * xs) anyway: no dotted edge there. */
	edges_of(lay, "reads", got, sizeof(got));
	assert_string_equal(got, "X>shp_out Y>ry");
	json_decref(lay);
	/* the SVG's rows carry what opens them; literal rows only their value */
	char *svg = bk_render(f, OXR_FMT_SVG, "");
	assert_non_null(strstr(svg, " data-unfold=\"n7\">shape = [N, -1]"));
	assert_non_null(strstr(svg, "class=\"edge reads\""));
	const char *c = strstr(svg, ">c0 = 0<");
	assert_non_null(c);
	const char *tag = c;
	while (tag > svg && *tag != '<')
		tag--;
	assert_true(memmem(tag, (size_t)(c - tag), "data-value=", 11) != NULL);
	assert_null(memmem(tag, (size_t)(c - tag), "data-unfold", 11));
	free(svg);
	char *dot = bk_render(f, OXR_FMT_DOT, "");
	assert_non_null(strstr(dot, "style=dotted"));
	free(dot);
}

static void test_fold_nodes_and_unfold(void **state)
{
	bkfx *f = *state;
	char got[2048];
	/* arith=nodes: bookkeeping is drawn, constants still fold */
	json_t *lay = bk_layout(f, "arith=nodes");
	op_boxes(lay, got, sizeof(got));
	assert_string_equal(got, "cl custom cyc1 cyc2 dead drop eye eye_e fcall half if_bk len "
	                         "len1 mask masked mm ny ny1 padded pads pcol pcol_flat pflat pmat "
	                         "prev ptr r r3 rnd rng rng2 ry shp shp_out sy sz tgt tgt_y wt xs");
	edges_of(lay, "reads", got, sizeof(got));
	assert_string_equal(got, "");
	rows_of(lay, "r", got, sizeof(got), false);
	assert_string_equal(got, ""); /* tgt is a box */
	json_decref(lay);
	/* unfold=n7 (r): the chain feeding r is drawn, its constants stay rows */
	lay = bk_layout(f, "unfold=n7");
	op_boxes(lay, got, sizeof(got));
	assert_string_equal(got, "cl custom cyc1 cyc2 dead drop eye_e fcall if_bk len len1 masked "
	                         "mm padded pcol_flat r r3 rnd ry shp shp_out sz tgt xs");
	rows_of(lay, "r", got, sizeof(got), false);
	assert_string_equal(got, "");
	rows_of(lay, "tgt", got, sizeof(got), false);
	assert_string_equal(got, "inputs[1] = [-1]"); /* Concat: its schema names it */
	rows_of(lay, "len", got, sizeof(got), false);
	assert_string_equal(got, "indices = 0");
	/* shp_out's chain now reads len1, a box that X reaches: no dotted edge */
	edges_of(lay, "reads", got, sizeof(got));
	assert_string_equal(got, "Y>ry");
	json_decref(lay);
	/* a folded node named itself opens with its chain; unknown ids change nothing */
	lay = bk_layout(f, "unfold=n4,zz,n999");
	op_boxes(lay, got, sizeof(got));
	assert_string_equal(got, "cl custom cyc1 cyc2 dead drop eye_e fcall if_bk len len1 masked "
	                         "mm padded pcol_flat r r3 rnd ry shp shp_out sz xs");
	rows_of(lay, "r", got, sizeof(got), true);
	assert_string_equal(got, "shape = [N, -1] \xc2\xb7 2 ops"); /* tgt, m1 */
	json_decref(lay);
}

/* Chains that share much (values each computed from one long chain): following them costs
 * their lengths summed, so past a budget folding falls back to constants only. */
static void chain_model(pbw *m, unsigned len, unsigned fan)
{
	pbw g = {0}, t = {0}, op = {0};
	static const int64_t one_dims[] = {1};
	int64_t one = 1;
	pbw_tensor_head(&t, one_dims, 1, OXP_DT_INT64);
	pbw_str(&t, 8, "k");
	pbw_bytes(&t, 9, &one, sizeof(one));
	put_msg(&g, 5, &t);
	value_info(&g, 11, "X", OXP_DT_FLOAT, "N,4");
	char in[64], out[32], name[32];
	node(&g, "Shape", "s", 1, "X", "c0", NULL);
	for (unsigned i = 1; i <= len; i++) {
		snprintf(in, sizeof(in), "c%u,k", i - 1);
		snprintf(out, sizeof(out), "c%u", i);
		node(&g, "Add", out, strlen(out), in, out, NULL);
	}
	for (unsigned j = 0; j < fan; j++) {
		snprintf(in, sizeof(in), "c%u,k", len);
		snprintf(out, sizeof(out), "v%u", j);
		node(&g, "Sub", out, strlen(out), in, out, NULL);
		snprintf(in, sizeof(in), "X,v%u", j);
		snprintf(name, sizeof(name), "d%u", j);
		node(&g, "Reshape", name, strlen(name), in, name, NULL);
		value_info(&g, 12, name, OXP_DT_FLOAT, NULL);
	}
	pbw_str(&g, 2, "chains");
	pbw_int(m, 1, 8);
	pbw_str(&op, 1, "");
	pbw_int(&op, 2, 14);
	put_msg(m, 8, &op);
	put_msg(m, 7, &g);
}

/* The model in m parsed, linked and rendered in full detail (group=none) into b. */
static void render_full(const pbw *m, oxr_format fmt, oxr_buf *b)
{
	oxp_model *model;
	oxp_dag *dag;
	oxp_limits lim = oxp_limits_default();
	assert_int_equal(oxp_model_parse(&model, m->p, m->len, &lim, NULL), OXP_OK);
	assert_int_equal(oxp_dag_build(&dag, model, NULL, NULL), OXP_OK);
	oxr_options o;
	oxr_options_default(&o);
	assert_int_equal(oxr_options_set(&o, "group", "none", NULL), OXR_OK);
	oxr_buf_init(b, 0);
	assert_int_equal(oxr_render(model, dag, &o, fmt, b, NULL), OXR_OK);
	oxp_dag_free(dag);
	oxp_model_free(model);
}

/* Regression (issue 22): a folded chain's row whose type text overflows the row at once
 * (a long value name, then dims of 4-byte characters: the dims piece does not fit).  The
 * row was cut at a fixed length past what had been written, so it held unwritten bytes
 * and lost its "· N ops"; it must end with an ellipsis and its count. */
static void test_fold_row_overflow(void **state)
{
	(void)state;
	static const char EMOJI[] = "\xf0\x9f\x98\x80"; /* 4 bytes */
	char longname[128] = "", param[8][64];
	for (int k = 0; k < 24; k++)
		strcat(longname, EMOJI);
	pbw m = {0}, g = {0}, op = {0}, vi = {0}, tp = {0}, tt = {0}, sh = {0};
	for (int d = 0; d < 8; d++) {
		snprintf(param[d], sizeof(param[d]), "%c", 'A' + d);
		for (int k = 0; k < 13; k++)
			strcat(param[d], EMOJI);
		pbw dim = {0};
		pbw_str(&dim, 2, param[d]);
		put_msg(&sh, 1, &dim);
	}
	pbw_str(&vi, 1, "x");
	pbw_int(&tt, 1, OXP_DT_FLOAT);
	put_msg(&tt, 2, &sh);
	put_msg(&tp, 1, &tt);
	put_msg(&vi, 2, &tp);
	put_msg(&g, 11, &vi);
	char ins[160];
	node(&g, "Shape", "shp", 3, "x", "s", NULL);
	node(&g, "ConstantOfShape", "cos", 3, "s", longname, NULL);
	snprintf(ins, sizeof(ins), "x,%s", longname);
	node(&g, "Add", "add", 3, ins, "y", NULL);
	value_info(&g, 12, "y", OXP_DT_FLOAT, NULL);
	pbw_str(&g, 2, "overflow");
	pbw_int(&m, 1, 8);
	pbw_str(&op, 1, "");
	pbw_int(&op, 2, 17);
	put_msg(&m, 8, &op);
	put_msg(&m, 7, &g);
	oxr_buf b;
	render_full(&m, OXR_FMT_LAYOUT_JSON, &b);
	json_t *lay = parse(&b);
	char got[1024];
	rows_of(lay, "add", got, sizeof(got), true);
	static const char tail[] = "\xe2\x80\xa6 \xc2\xb7 2 ops"; /* "… · 2 ops" */
	size_t n = strlen(got);
	if (n < sizeof(tail) - 1 || strcmp(got + n - (sizeof(tail) - 1), tail) != 0)
		fail_msg("the row lost its count: \"%s\"", got);
	assert_true(n < 320);
	assert_true(strncmp(got, EMOJI, 4) == 0); /* the name, as far as it goes */
	json_decref(lay);
	oxr_buf_free(&b);
	pbw_free(&m);
}

static void test_fold_budget(void **state)
{
	(void)state;
	static const unsigned cases[][3] = {{100, 100, 0}, {2200, 2200, 1}}; /* len, fan, gives up */
	for (size_t c = 0; c < 2; c++) {
		pbw m = {0};
		chain_model(&m, cases[c][0], cases[c][1]);
		oxr_buf b;
		render_full(&m, OXR_FMT_DOT, &b);
		/* folded: the fan's Reshapes (and X, the outputs); given up: every Add too */
		bool chain_drawn = strstr(b.data, "label=\"Add\\n") != NULL;
		if (chain_drawn != (cases[c][2] == 1))
			fail_msg("chain %u x %u: chain drawn %d", cases[c][0], cases[c][1], chain_drawn);
		oxr_buf_free(&b);
		pbw_free(&m);
	}
}

/* A named pattern reaching out of its scope: fuzz_derived's input
 * (tests/fuzz/regressions/derived/pattern-node-outside-its-scope-box) has a decomposed
 * LayerNormalization under /block_0/layer_3/norm whose Mul is named "norm-Mul_63", so it
 * lies in /block_0/layer_3.  Drawn at depth 2 the norm scope is one box, and the pattern's
 * box (with that Mul) is inside it: the box's count says the 7 nodes it holds. */
static void test_scope_box_counts_its_pattern(void **state)
{
	(void)state;
	oxp_model *m = NULL;
	oxp_dag *d = NULL;
	oxp_error e;
	assert_int_equal(oxp_model_open(&m, "tests/fuzz/regressions/derived/pattern-node-outside-its-scope-box",
	                                NULL, &e), OXP_OK);
	oxp_dag_options dopt = {.infer_shapes = true};
	assert_int_equal(oxp_dag_build(&d, m, &dopt, &e), OXP_OK);
	oxr_options o;
	oxr_options_default(&o);
	assert_int_equal(oxr_options_set(&o, "depth", "2", NULL), OXR_OK);
	oxr_buf b;
	oxr_buf_init(&b, 0);
	oxr_error err = {0};
	assert_int_equal(oxr_render(m, d, &o, OXR_FMT_LAYOUT_JSON, &b, &err), OXR_OK);
	json_t *lay = parse(&b);
	json_t *box = find(json_object_get(lay, "nodes"), "title", "/block_0/layer_3/norm");
	assert_non_null(box);
	json_t *rows = json_object_get(box, "rows");
	assert_true(json_array_size(rows) >= 3);
	assert_string_equal(str_of(json_array_get(rows, 2), "text"), "7 nodes \xc2\xb7 1 params");
	json_decref(lay);
	oxr_buf_free(&b);
	oxp_dag_free(d);
	oxp_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_fold_default, bk_setup, bk_teardown),
	    cmocka_unit_test_setup_teardown(test_fold_nodes_and_unfold, bk_setup, bk_teardown),
	    cmocka_unit_test(test_fold_budget),
	    cmocka_unit_test(test_fold_row_overflow),
	    cmocka_unit_test(test_options_default_key),
	    cmocka_unit_test(test_options_accepted),
	    cmocka_unit_test(test_options_rejected),
	    cmocka_unit_test(test_options_key_roundtrip),
	    cmocka_unit_test(test_option_names),
	    cmocka_unit_test(test_buf_cap),
	    cmocka_unit_test(test_buf_printf_growth),
	    cmocka_unit_test(test_code_and_format_names),
	    cmocka_unit_test_setup_teardown(test_doc_structure, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_doc_strings_and_numbers, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_doc_summary_kind, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_doc_too_big, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_doc_json_respects_the_cap, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_node_json, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_search, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_search_finds_float_attributes, fx_setup,
	                                    fx_teardown),
	    cmocka_unit_test_setup_teardown(test_render_svg, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_render_dot, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_render_layout_json, fx_setup, fx_teardown),
	    cmocka_unit_test(test_scope_box_counts_its_pattern),
	    cmocka_unit_test_setup_teardown(test_render_errors, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_render_is_deterministic, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_render_isolated_matches_in_process, fx_setup,
	                                    fx_teardown),
	};
	return cmocka_run_group_tests_name("render", tests, NULL, NULL);
}
