/*
 * check.c — `onnxviz check`: a model's problems, each with a severity, a stable code, the
 * node or value concerned and a message (docs/check.md lists every code).
 *
 * The rules follow onnx.checker's full check (checker.cc, OpSchema::Verify and strict
 * shape inference's type checks) wherever a rule is decidable from the parsed model, so
 * that "has errors" agrees with onnx.checker (tests/diff/check.py holds us to that); what
 * onnx.checker accepts but is still doubtful is a warning or an info.  Schemas come from
 * the table (schema.c) through each node's resolved version; types from the dag (declared,
 * or inferred by shape.c).  One pass over scopes, values and nodes; nothing recursive.
 */
#include "parser/internal.h"
#include "parser/schema.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_MAX_TEXT 420 /* oxp__printable's output for one name */

struct oxp_check {
	oxp_arena *arena;
	oxp_check_view v;
	oxp_problem *problems; /* capacity OXP_CHECK_MAX_LISTED */
	bool nomem;
};

static const struct {
	const char *name;
	oxp_severity sev;
} codes[OXP_C__COUNT] = {
    [OXP_C_IR_VERSION_MISSING] = {"ir_version_missing", OXP_SEV_ERROR},
    [OXP_C_IR_VERSION_NEWER] = {"ir_version_newer", OXP_SEV_WARNING},
    [OXP_C_OPSET_IMPORT_MISSING] = {"opset_import_missing", OXP_SEV_ERROR},
    [OXP_C_OPSET_IMPORT_OLD_IR] = {"opset_import_old_ir", OXP_SEV_ERROR},
    [OXP_C_OPSET_VERSION_UNKNOWN] = {"opset_version_unknown", OXP_SEV_WARNING},
    [OXP_C_IR_OPSET_MISMATCH] = {"ir_opset_mismatch", OXP_SEV_WARNING},
    [OXP_C_GRAPH_IO] = {"graph_io", OXP_SEV_ERROR},
    [OXP_C_DUPLICATE_INPUT] = {"duplicate_input", OXP_SEV_ERROR},
    [OXP_C_TENSOR_STORAGE] = {"tensor_storage", OXP_SEV_ERROR},
    [OXP_C_TENSOR_SIZE] = {"tensor_size", OXP_SEV_WARNING},
    [OXP_C_EXTERNAL_DATA] = {"external_data", OXP_SEV_ERROR},
    [OXP_C_OUTPUT_NOT_PRODUCED] = {"output_not_produced", OXP_SEV_WARNING},
    [OXP_C_UNUSED_INITIALIZER] = {"unused_initializer", OXP_SEV_INFO},
    [OXP_C_UNCHECKED_DOMAIN] = {"unchecked_domain", OXP_SEV_INFO},
    [OXP_C_DOMAIN_NOT_IMPORTED] = {"domain_not_imported", OXP_SEV_ERROR},
    [OXP_C_UNKNOWN_OP] = {"unknown_op", OXP_SEV_ERROR},
    [OXP_C_EXPERIMENTAL_OP] = {"experimental_op", OXP_SEV_WARNING},
    [OXP_C_OP_TOO_NEW] = {"op_too_new", OXP_SEV_ERROR},
    [OXP_C_DEPRECATED_OP] = {"deprecated_op", OXP_SEV_ERROR},
    [OXP_C_NODE_WITHOUT_IO] = {"node_without_io", OXP_SEV_ERROR},
    [OXP_C_TOO_FEW_INPUTS] = {"too_few_inputs", OXP_SEV_ERROR},
    [OXP_C_TOO_MANY_INPUTS] = {"too_many_inputs", OXP_SEV_ERROR},
    [OXP_C_TOO_FEW_OUTPUTS] = {"too_few_outputs", OXP_SEV_ERROR},
    [OXP_C_TOO_MANY_OUTPUTS] = {"too_many_outputs", OXP_SEV_ERROR},
    [OXP_C_REQUIRED_INPUT_EMPTY] = {"required_input_empty", OXP_SEV_ERROR},
    [OXP_C_REQUIRED_OUTPUT_EMPTY] = {"required_output_empty", OXP_SEV_ERROR},
    [OXP_C_MISSING_ATTRIBUTE] = {"missing_attribute", OXP_SEV_ERROR},
    [OXP_C_UNKNOWN_ATTRIBUTE] = {"unknown_attribute", OXP_SEV_ERROR},
    [OXP_C_DUPLICATE_ATTRIBUTE] = {"duplicate_attribute", OXP_SEV_ERROR},
    [OXP_C_ATTRIBUTE_TYPE] = {"attribute_type", OXP_SEV_ERROR},
    [OXP_C_EMPTY_ATTRIBUTE] = {"empty_attribute", OXP_SEV_ERROR},
    [OXP_C_TYPE_CONSTRAINT] = {"type_constraint", OXP_SEV_ERROR},
    [OXP_C_TYPE_BINDING] = {"type_binding", OXP_SEV_ERROR},
    [OXP_C_UNDEFINED_VALUE] = {"undefined_value", OXP_SEV_ERROR},
    [OXP_C_USED_BEFORE_PRODUCED] = {"used_before_produced", OXP_SEV_ERROR},
    [OXP_C_DUPLICATE_OUTPUT] = {"duplicate_output", OXP_SEV_ERROR},
};

const char *oxp_check_code_name(oxp_check_code c)
{
	return (unsigned)c < OXP_C__COUNT ? codes[c].name : "unknown";
}

oxp_severity oxp_check_code_severity(oxp_check_code c)
{
	return (unsigned)c < OXP_C__COUNT ? codes[c].sev : OXP_SEV_ERROR;
}

const char *oxp_severity_name(oxp_severity s)
{
	return s == OXP_SEV_ERROR ? "error" : s == OXP_SEV_WARNING ? "warning" : "info";
}

/* The problems onnx.checker does not know about (old experimental ops it skips with a
 * warning, checker.cc's experimental_ops). */
static bool experimental(oxp_str op)
{
	static const char *const ops[] = {"ATen",   "Affine",          "ConstantFill",
	                                  "Crop",   "DynamicSlice",    "GRUUnit",
	                                  "GivenTensorFill", "ImageScaler", "ParametricSoftplus",
	                                  "Scale",  "ScaledTanh"};
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (oxp_str_eq(op, ops[i]))
			return true;
	return false;
}

typedef struct ck {
	oxp_check *c;
	int dirfd; /* external data directory, -1: files not checked */
	const oxp_model_proto *p;
	const oxp_dag *d;
	const oxp_dag_view *v;
} ck;

static void report(ck *k, oxp_check_code code, oxp_severity sev, uint32_t scope,
                   uint32_t node, uint32_t value, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));

static void vreport(ck *k, oxp_check_code code, oxp_severity sev, uint32_t scope,
                    uint32_t node, uint32_t value, const char *fmt, va_list ap)
    __attribute__((format(printf, 7, 0)));

static void vreport(ck *k, oxp_check_code code, oxp_severity sev, uint32_t scope,
                    uint32_t node, uint32_t value, const char *fmt, va_list ap)
{
	oxp_check *c = k->c;
	c->v.count[sev]++;
	c->v.by_code[code]++;
	if (c->v.nproblems >= OXP_CHECK_MAX_LISTED)
		return;
	char msg[1024];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	char *m = oxp__arena_strndup(c->arena, msg, strlen(msg));
	if (m == NULL) {
		c->nomem = true;
		return;
	}
	oxp_problem *pb = &c->problems[c->v.nproblems++];
	pb->code = code;
	pb->severity = sev;
	pb->scope = scope;
	pb->node = node;
	pb->value = value;
	pb->message = m;
}

static void report(ck *k, oxp_check_code code, oxp_severity sev, uint32_t scope,
                   uint32_t node, uint32_t value, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport(k, code, sev, scope, node, value, fmt, ap);
	va_end(ap);
}

/* A name for messages */
typedef struct nm {
	char s[NAME_MAX_TEXT];
} nm;

static nm name_of(oxp_str s)
{
	nm n;
	oxp__printable(n.s, sizeof(n.s), s);
	return n;
}

/* "node 'conv1' (Conv)" or "node n12 (Conv)" */
typedef struct nodetxt {
	char s[2 * NAME_MAX_TEXT + 64];
} nodetxt;

static nodetxt node_text(const ck *k, uint32_t ni)
{
	nodetxt t;
	const oxp_node *n = k->v->nodes[ni].proto;
	nm op = name_of(n->op_type);
	if (n->name.len > 0) {
		nm name = name_of(n->name);
		snprintf(t.s, sizeof(t.s), "node '%s' (%s)", name.s, op.s);
	} else {
		snprintf(t.s, sizeof(t.s), "node %s (%s)", k->v->nodes[ni].id, op.s);
	}
	return t;
}

/* ---------------------------------------------------------------------------------------
 * The model: IR version and opset imports
 */
static bool is_default(oxp_str d)
{
	return d.len == 0 || oxp_str_eq(d, "ai.onnx");
}

static void check_imports(ck *k, const oxp_opset *ops, size_t n, const char *where)
{
	int64_t ir = k->p->ir_version;
	for (size_t i = 0; i < n; i++) {
		oxp_str dom = ops[i].domain;
		nm dn = name_of(dom);
		const char *dname = is_default(dom) ? "ai.onnx" : dn.s;
		int64_t newest = oxp_schema_newest_opset(dom);
		if (newest > 0 && (ops[i].version > newest || ops[i].version < 1))
			report(k, OXP_C_OPSET_VERSION_UNKNOWN, OXP_SEV_WARNING, OXP_NONE, OXP_NONE,
			       OXP_NONE, "%s imports %s opset %" PRId64 "; the newest onnxviz knows is %" PRId64,
			       where, dname, ops[i].version, newest);
		int64_t need = oxp_schema_min_ir(dom, ops[i].version);
		if (ir >= 3 && need > ir)
			report(k, OXP_C_IR_OPSET_MISMATCH, OXP_SEV_WARNING, OXP_NONE, OXP_NONE, OXP_NONE,
			       "%s opset %" PRId64 " (imported by %s) needs IR version %" PRId64
			       " or newer; the model declares IR version %" PRId64,
			       dname, ops[i].version, where, need, ir);
	}
}

static void check_model(ck *k)
{
	const oxp_model_proto *p = k->p;
	if (p->graph == NULL)
		return; /* a functions-only file: no model to run, nothing onnx.checker checks */
	if (p->ir_version <= 0)
		report(k, OXP_C_IR_VERSION_MISSING, OXP_SEV_ERROR, OXP_NONE, OXP_NONE, OXP_NONE,
		       "the model has no ir_version");
	else if (p->ir_version > oxp_schema_newest_ir())
		report(k, OXP_C_IR_VERSION_NEWER, OXP_SEV_WARNING, OXP_NONE, OXP_NONE, OXP_NONE,
		       "IR version %" PRId64 " is newer than the newest onnxviz knows (%" PRId64 ")",
		       p->ir_version, oxp_schema_newest_ir());
	if (p->ir_version >= 3 && p->nopset_import == 0)
		report(k, OXP_C_OPSET_IMPORT_MISSING, OXP_SEV_ERROR, OXP_NONE, OXP_NONE, OXP_NONE,
		       "IR version %" PRId64 " needs an opset_import (at least the ai.onnx one)",
		       p->ir_version);
	if (p->ir_version > 0 && p->ir_version < 3 && p->nopset_import > 0)
		report(k, OXP_C_OPSET_IMPORT_OLD_IR, OXP_SEV_ERROR, OXP_NONE, OXP_NONE, OXP_NONE,
		       "IR version %" PRId64 " predates opset_import, yet the model has %zu",
		       p->ir_version, p->nopset_import);
	check_imports(k, p->opset_import, p->nopset_import, "the model");
	for (size_t f = 0; f < p->nfunctions; f++) {
		nm fn = name_of(p->functions[f].name);
		char where[NAME_MAX_TEXT + 16];
		snprintf(where, sizeof(where), "function '%s'", fn.s);
		check_imports(k, p->functions[f].opset_import, p->functions[f].nopset_import, where);
	}
}

/* ---------------------------------------------------------------------------------------
 * Graphs: declarations of inputs, outputs, initializers
 */
static const char *type_gap(const oxp_type *t)
{
	if (t == NULL)
		return "has no type";
	switch (t->kind) {
	case OXP_TYPE_TENSOR:
	case OXP_TYPE_SPARSE_TENSOR:
		return t->shape == NULL ? "has a tensor type without a shape" : NULL;
	case OXP_TYPE_SEQUENCE:
	case OXP_TYPE_OPTIONAL:
		return t->elem == NULL ? "has a type without its element type" : NULL;
	case OXP_TYPE_MAP:
		return t->key_type == 0 || t->elem == NULL ? "has a map type without key or value type"
		                                           : NULL;
	case OXP_TYPE_OPAQUE:
		return NULL;
	default:
		return "has no type";
	}
}

static void check_declarations(ck *k, uint32_t si)
{
	const oxp_scope *s = &k->v->scopes[si];
	const oxp_graph *g = s->graph;
	const char *sid = s->id[0] ? s->id : "main";
	if (g == NULL)
		return;
	for (int out = 0; out < 2; out++) {
		const oxp_value_info *vi = out ? g->outputs : g->inputs;
		size_t n = out ? g->noutputs : g->ninputs;
		for (size_t i = 0; i < n; i++) {
			const char *what = out ? "output" : "input";
			if (vi[i].name.len == 0) {
				report(k, OXP_C_GRAPH_IO, OXP_SEV_ERROR, si, OXP_NONE, OXP_NONE,
				       "graph %s #%zu of scope '%s' has no name", what, i, sid);
				continue;
			}
			/* onnx.checker asks for complete types on the main graph only */
			const char *gap = s->kind == OXP_SCOPE_MAIN ? type_gap(vi[i].type) : NULL;
			if (gap != NULL) {
				nm n1 = name_of(vi[i].name);
				report(k, OXP_C_GRAPH_IO, OXP_SEV_ERROR, si, OXP_NONE,
				       out ? s->outputs[i] : s->inputs[i], "graph %s '%s' %s", what, n1.s,
				       gap);
			}
		}
	}
	for (size_t i = 0; i < g->ninitializers; i++) {
		const oxp_tensor *t = &g->initializers[i];
		if (t->name.len == 0) {
			report(k, OXP_C_GRAPH_IO, OXP_SEV_ERROR, si, OXP_NONE, OXP_NONE,
			       "initializer #%zu of scope '%s' has no name", i, sid);
			continue;
		}
		if (k->p->ir_version > 0 && k->p->ir_version <= 3) {
			bool listed = false;
			for (size_t j = 0; j < g->ninputs && !listed; j++)
				listed = g->inputs[j].name.len == t->name.len &&
				         memcmp(g->inputs[j].name.p, t->name.p, t->name.len) == 0;
			if (!listed) {
				nm n1 = name_of(t->name);
				report(k, OXP_C_GRAPH_IO, OXP_SEV_ERROR, si, OXP_NONE, OXP_NONE,
				       "initializer '%s' is not a graph input, as IR version %" PRId64
				       " requires",
				       n1.s, k->p->ir_version);
			}
		}
	}
}

/* onnx.checker's rules for where a tensor keeps its values (check_tensor): NULL when they
 * hold, else what is wrong. */
static const char *storage_rule(const oxp_tensor *t)
{
	if (t->data_type == OXP_DT_UNDEFINED)
		return "has data type UNDEFINED";
	static const uint8_t fields[] = {4, 5, 6, 7, 10, 11}; /* float, int32, string, int64,
	                                                        double, uint64 _data */
	int nfields = t->has_raw_data && t->raw_data.len > 0;
	int only = 0;
	for (size_t i = 0; i < sizeof(fields); i++)
		if (t->typed_fields & (1u << fields[i])) {
			nfields++;
			only = fields[i];
		}
	if (t->data_location == 1) {
		if (nfields != 0)
			return "is stored externally and also holds values";
		for (size_t i = 0; i < t->nexternal_data; i++)
			if (oxp_str_eq(t->external_data[i].key, "location"))
				return NULL;
		return "is stored externally without a location";
	}
	uint64_t count;
	if (!oxp_dims_count(t->dims, t->ndims, &count))
		return NULL; /* bad dims fail the parse already */
	if (count == 0)
		return nfields != 0 ? "has no elements but holds values" : NULL;
	if (nfields != 1)
		return nfields == 0 ? "holds no values" : "holds values in more than one field";
	if (t->has_raw_data && t->raw_data.len > 0)
		return t->data_type == OXP_DT_STRING ? "holds STRING values in raw_data" : NULL;
	int want;
	switch (t->data_type) {
	case OXP_DT_FLOAT:
	case OXP_DT_COMPLEX64:
		want = 4;
		break;
	case OXP_DT_DOUBLE:
	case OXP_DT_COMPLEX128:
		want = 10;
		break;
	case OXP_DT_INT64:
		want = 7;
		break;
	case OXP_DT_UINT32:
	case OXP_DT_UINT64:
		want = 11;
		break;
	case OXP_DT_STRING:
		want = 6;
		break;
	default:
		/* the small integer and float types, the newer 8/4/2-bit ones too */
		want = t->data_type > 0 && t->data_type < OXP_DT__COUNT ? 5 : -1;
		break;
	}
	if (want < 0)
		return "has an unknown data type";
	return only == want ? NULL : "keeps its values in a field its data type may not use";
}

static void check_tensor(ck *k, const oxp_tensor *t, uint32_t si, uint32_t node,
                         uint32_t value, const char *what)
{
	nm n1 = name_of(t->name);
	const char *rule = storage_rule(t);
	if (rule != NULL) {
		report(k, OXP_C_TENSOR_STORAGE, OXP_SEV_ERROR, si, node, value, "%s '%s' %s", what,
		       n1.s, rule);
		return;
	}
	oxp_tensor_size sz;
	oxp_error e;
	if (oxp_tensor_size_get(t, &sz, &e) != OXP_OK) {
		report(k, OXP_C_TENSOR_SIZE, OXP_SEV_WARNING, si, node, value, "%s '%s': %s", what,
		       n1.s, e.message);
		return;
	}
	if (t->storage != OXP_STORE_EXTERNAL || k->dirfd < 0)
		return;
	oxp_external_file f;
	oxp_ext_rule why;
	if (oxp_external_open(&f, k->dirfd, t, 0, &why, &e) == OXP_OK)
		oxp_external_close(&f);
	else
		report(k, OXP_C_EXTERNAL_DATA, OXP_SEV_ERROR, si, node, value,
		       "%s '%s': external data unusable (%s): %s", what, n1.s, oxp_ext_rule_name(why),
		       e.message);
}

/* ---------------------------------------------------------------------------------------
 * Values: defined twice, never defined, used before produced, outputs, initializers
 */

/* The first value of each (scope, name), in an open-addressing table: the dag's own name
 * tables are gone once it is built, and its look-up is linear. */
typedef struct names {
	uint32_t *slot; /* value index, OXP_NONE = empty */
	uint32_t mask;
} names;

static bool names_init(names *t, uint32_t nvalues)
{
	uint32_t cap = 16;
	while (cap < 2u * nvalues + 2u && cap < (1u << 31))
		cap <<= 1;
	t->slot = malloc((size_t)cap * sizeof(uint32_t));
	if (t->slot == NULL)
		return false;
	memset(t->slot, 0xff, (size_t)cap * sizeof(uint32_t));
	t->mask = cap - 1;
	return true;
}

/* The first value named so in that scope; with add, vi becomes it when there is none. */
static uint32_t names_find(names *t, const oxp_dag_view *v, uint32_t scope, oxp_str name,
                           uint32_t add)
{
	uint32_t h = (uint32_t)oxp_hash(name.p, name.len, scope) & t->mask;
	while (t->slot[h] != OXP_NONE) {
		const oxp_value *o = &v->values[t->slot[h]];
		if (o->scope == scope && o->name.len == name.len &&
		    (name.len == 0 || memcmp(o->name.p, name.p, name.len) == 0))
			return t->slot[h];
		h = (h + 1) & t->mask;
	}
	if (add != OXP_NONE)
		t->slot[h] = add;
	return OXP_NONE;
}

static bool check_values(ck *k)
{
	const oxp_dag_view *v = k->v;
	names tab;
	if (!names_init(&tab, v->nvalues))
		return false;
	for (uint32_t vi = 0; vi < v->nvalues; vi++) {
		const oxp_value *val = &v->values[vi];
		if (val->kind != OXP_VALUE_UNDEFINED && val->name.len > 0)
			names_find(&tab, v, val->scope, val->name, vi);
	}
	for (uint32_t vi = 0; vi < v->nvalues; vi++) {
		const oxp_value *val = &v->values[vi];
		const oxp_scope *s = &v->scopes[val->scope];
		nm n1 = name_of(val->name);
		if (val->kind == OXP_VALUE_UNDEFINED) {
			uint32_t node = val->nconsumers ? v->edges[val->consumers[0]].dst : OXP_NONE;
			if (node == OXP_NONE)
				continue; /* only named by a graph output: reported below */
			nodetxt nt = node_text(k, node);
			report(k, OXP_C_UNDEFINED_VALUE, OXP_SEV_ERROR, val->scope, node, vi,
			       "%s uses '%s', which no node, graph input or initializer defines%s", nt.s,
			       n1.s, val->nconsumers > 1 ? " (nor for its other users)" : "");
			continue;
		}
		if (val->name.len == 0)
			continue;
		uint32_t first = names_find(&tab, v, val->scope, val->name, OXP_NONE);
		bool dup = first != vi && first != OXP_NONE;
		bool shadow = false;
		/* a subgraph's node may not reuse a name of an enclosing graph (SSA) */
		for (uint32_t ps = s->parent; !dup && !shadow && val->kind == OXP_VALUE_NODE_OUTPUT &&
		                              s->kind == OXP_SCOPE_SUBGRAPH && ps != OXP_NONE;
		     ps = v->scopes[ps].parent)
			shadow = names_find(&tab, v, ps, val->name, OXP_NONE) != OXP_NONE;
		if (dup && val->kind != OXP_VALUE_NODE_OUTPUT) {
			report(k, OXP_C_DUPLICATE_INPUT, OXP_SEV_ERROR, val->scope, OXP_NONE, vi,
			       "'%s' is declared more than once as a graph input or initializer", n1.s);
		} else if (dup || shadow) {
			nodetxt nt = node_text(k, val->producer);
			report(k, OXP_C_DUPLICATE_OUTPUT, OXP_SEV_ERROR, val->scope, val->producer, vi,
			       "%s outputs '%s', a name %s already defines", nt.s, n1.s,
			       shadow ? "an enclosing graph" : "its graph");
		}
		if ((val->kind == OXP_VALUE_INITIALIZER || val->kind == OXP_VALUE_SPARSE_INITIALIZER) &&
		    val->nconsumers == 0 && !val->graph_output && !dup)
			report(k, OXP_C_UNUSED_INITIALIZER, OXP_SEV_INFO, val->scope, OXP_NONE, vi,
			       "initializer '%s' is never used", n1.s);
		if (val->kind == OXP_VALUE_INITIALIZER)
			check_tensor(k, val->initializer, val->scope, OXP_NONE, vi, "initializer");
		else if (val->kind == OXP_VALUE_SPARSE_INITIALIZER && val->sparse_initializer->values)
			check_tensor(k, val->sparse_initializer->values, val->scope, OXP_NONE, vi,
			             "sparse initializer");
	}
	for (uint32_t si = 0; si < v->nscopes; si++) {
		const oxp_scope *s = &v->scopes[si];
		check_declarations(k, si);
		for (uint32_t i = 0; i < s->noutputs; i++) {
			uint32_t vi = s->outputs[i];
			if (vi != OXP_NONE && v->values[vi].kind != OXP_VALUE_UNDEFINED)
				continue;
			oxp_str name = s->graph ? s->graph->outputs[i].name
			               : s->function ? s->function->outputs[i]
			                             : (oxp_str){"", 0};
			nm n1 = name_of(name);
			report(k, OXP_C_OUTPUT_NOT_PRODUCED, OXP_SEV_WARNING, si, OXP_NONE, vi,
			       "output '%s' of scope '%s' is produced by nothing", n1.s,
			       s->id[0] ? s->id : "main");
		}
	}
	free(tab.slot);
	return true;
}

/* The node of scope `scope` holding node ni (itself, or the owner of its subgraph). */
static uint32_t ancestor_in(const oxp_dag_view *v, uint32_t ni, uint32_t scope)
{
	while (ni != OXP_NONE && v->nodes[ni].scope != scope)
		ni = v->scopes[v->nodes[ni].scope].owner;
	return ni;
}

/* One problem per node that uses a value produced at or after it in its scope's order. */
static void check_order(ck *k, uint8_t *late)
{
	const oxp_dag_view *v = k->v;
	for (uint32_t e = 0; e < v->nedges; e++) {
		const oxp_edge *ed = &v->edges[e];
		if (ed->src == OXP_NONE)
			continue;
		uint32_t si = v->nodes[ed->src].scope;
		uint32_t q = ancestor_in(v, ed->dst, si);
		if (q == OXP_NONE || v->nodes[ed->src].index < v->nodes[q].index || late[ed->dst])
			continue;
		late[ed->dst] = 1;
		nodetxt nt = node_text(k, ed->dst);
		nodetxt pt = node_text(k, ed->src);
		nm n1 = name_of(v->values[ed->value].name);
		report(k, OXP_C_USED_BEFORE_PRODUCED, OXP_SEV_ERROR, v->nodes[ed->dst].scope, ed->dst,
		       ed->value, "%s uses '%s' before %s, which comes %s, produces it", nt.s, n1.s,
		       pt.s, ed->src == q ? "at the same place (a cycle)" : "later in node order");
	}
}

/* ---------------------------------------------------------------------------------------
 * Nodes against their schema
 */
/* One node being checked against its schema. */
typedef struct nctx {
	uint32_t ni;
	const oxp_dnode *dn;
	const oxp_node *n;
	const oxp_schema *s;
	oxp_schema_info info;
	oxp_severity sev; /* of every schema problem: warnings for com.microsoft */
	nodetxt nt;
} nctx;

/* A schema problem of the node in x: its severity, scope and id */
static void nreport(ck *k, const nctx *x, oxp_check_code code, uint32_t value,
                    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void nreport(ck *k, const nctx *x, oxp_check_code code, uint32_t value,
                    const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport(k, code, x->sev, x->dn->scope, x->ni, value, fmt, ap);
	va_end(ap);
}

static const char *attr_type_text(int32_t t)
{
	return oxp_attr_type_name(t);
}

static bool attr_list_empty(const oxp_attr *a)
{
	switch (a->type) {
	case OXP_ATTR_FLOATS:
		return a->nfloats == 0;
	case OXP_ATTR_INTS:
		return a->nints == 0;
	case OXP_ATTR_STRINGS:
		return a->nstrings == 0;
	case OXP_ATTR_TENSORS:
		return a->ntensors == 0;
	case OXP_ATTR_GRAPHS:
		return a->ngraphs == 0;
	case OXP_ATTR_TYPE_PROTOS:
		return a->ntype_protos == 0;
	default:
		return false;
	}
}

static void check_attributes(ck *k, const nctx *x)
{
	const oxp_node *n = x->n;
	const oxp_schema *s = x->s;
	const oxp_schema_info info = x->info;
	const nodetxt *nt = &x->nt;
	for (size_t i = 0; i < n->nattrs; i++) {
		const oxp_attr *a = &n->attrs[i];
		nm an = name_of(a->name);
		bool again = false;
		for (size_t j = 0; j < i && !again; j++)
			again = a->name.len == n->attrs[j].name.len &&
			        memcmp(a->name.p, n->attrs[j].name.p, a->name.len) == 0;
		if (again) {
			nreport(k, x, OXP_C_DUPLICATE_ATTRIBUTE, OXP_NONE,
			        "%s has attribute '%s' more than once", nt->s, an.s);
			continue;
		}
		int32_t ai = oxp_schema_find_attribute(s, a->name);
		if (ai < 0) {
			/* "__name": implementation details onnx leaves unchecked */
			if (a->name.len >= 2 && a->name.p[0] == '_' && a->name.p[1] == '_')
				continue;
			nreport(k, x, OXP_C_UNKNOWN_ATTRIBUTE, OXP_NONE,
			        "%s has attribute '%s', which %s-%d does not define", nt->s, an.s,
			        info.name, info.since_version);
			continue;
		}
		oxp_schema_attr sa;
		oxp_schema_attribute(s, (uint32_t)ai, &sa);
		if (a->type != sa.type) {
			nreport(k, x, OXP_C_ATTRIBUTE_TYPE, OXP_NONE,
			        "%s: attribute '%s' is %s, %s-%d wants %s", nt->s, an.s,
			        attr_type_text(a->type), info.name, info.since_version,
			        attr_type_text(sa.type));
			continue;
		}
		if (a->ref_attr_name.len == 0 && attr_list_empty(a))
			nreport(k, x, OXP_C_EMPTY_ATTRIBUTE, OXP_NONE,
			        "%s: attribute '%s' is an empty %s", nt->s, an.s, attr_type_text(a->type));
	}
	for (uint32_t i = 0; i < info.nattrs; i++) {
		oxp_schema_attr sa;
		oxp_schema_attribute(s, i, &sa);
		if (!sa.required)
			continue;
		bool present = false;
		for (size_t j = 0; j < n->nattrs && !present; j++)
			present = oxp_str_eq(n->attrs[j].name, sa.name);
		if (!present)
			nreport(k, x, OXP_C_MISSING_ATTRIBUTE, OXP_NONE,
			        "%s lacks attribute '%s', which %s-%d requires", nt->s, sa.name, info.name,
			        info.since_version);
	}
}

static void check_arity(ck *k, const nctx *x)
{
	const oxp_node *n = x->n;
	const oxp_schema *s = x->s;
	const oxp_schema_info info = x->info;
	const nodetxt *nt = &x->nt;
	for (int out = 0; out < 2; out++) {
		size_t have = out ? n->noutputs : n->ninputs;
		uint32_t lo = out ? info.min_outputs : info.min_inputs;
		uint32_t hi = out ? info.max_outputs : info.max_inputs;
		const char *what = out ? "outputs" : "inputs";
		char range[48];
		if (hi == OXP_SCHEMA_UNBOUNDED)
			snprintf(range, sizeof(range), "at least %u", lo);
		else if (lo == hi)
			snprintf(range, sizeof(range), "%u", lo);
		else
			snprintf(range, sizeof(range), "%u to %u", lo, hi);
		if (have < lo)
			nreport(k, x, out ? OXP_C_TOO_FEW_OUTPUTS : OXP_C_TOO_FEW_INPUTS, OXP_NONE,
			        "%s has %zu %s; %s-%d takes %s", nt->s, have, what, info.name,
			        info.since_version, range);
		else if (hi != OXP_SCHEMA_UNBOUNDED && have > hi)
			nreport(k, x, out ? OXP_C_TOO_MANY_OUTPUTS : OXP_C_TOO_MANY_INPUTS, OXP_NONE,
			        "%s has %zu %s; %s-%d takes %s", nt->s, have, what, info.name,
			        info.since_version, range);
		/* "" for a parameter that is neither optional nor variadic */
		for (size_t i = 0; i < have; i++) {
			oxp_str nmv = out ? n->outputs[i] : n->inputs[i];
			if (nmv.len != 0)
				continue;
			int32_t pi = oxp_schema_port_of(s, out != 0, i, NULL);
			oxp_schema_port port;
			if (pi < 0 || !(out ? oxp_schema_output(s, (uint32_t)pi, &port)
			                    : oxp_schema_input(s, (uint32_t)pi, &port)))
				continue;
			if (port.flags & (OXP_PORT_OPTIONAL | OXP_PORT_VARIADIC))
				continue;
			nreport(k, x, out ? OXP_C_REQUIRED_OUTPUT_EMPTY : OXP_C_REQUIRED_INPUT_EMPTY, OXP_NONE,
			        "%s leaves %s %zu ('%s') empty, which %s-%d requires",
			        nt->s, out ? "output" : "input", i, port.name, info.name,
			        info.since_version);
		}
	}
}

/* What is known of a value's type: kind and element type, or kind NONE. */
typedef struct vtype {
	oxp_type_kind kind;
	int32_t elem;
} vtype;

static vtype value_type(const oxp_value *val, bool declared_only)
{
	vtype t = {OXP_TYPE_NONE, 0};
	const oxp_type *info = val->info ? val->info->type : NULL;
	if (info != NULL && info->kind != OXP_TYPE_TENSOR) {
		t.kind = info->kind;
		const oxp_type *e = info->elem;
		if (info->kind == OXP_TYPE_SPARSE_TENSOR)
			t.elem = info->elem_type;
		else if (info->kind == OXP_TYPE_SEQUENCE && e != NULL && e->kind == OXP_TYPE_TENSOR)
			t.elem = e->elem_type;
		else if (info->kind == OXP_TYPE_OPTIONAL && e != NULL &&
		         (e->kind == OXP_TYPE_TENSOR ||
		          (e->kind == OXP_TYPE_SEQUENCE && e->elem && e->elem->kind == OXP_TYPE_TENSOR)))
			t.elem = e->kind == OXP_TYPE_TENSOR ? e->elem_type : e->elem->elem_type;
		else
			t.kind = OXP_TYPE_NONE; /* maps, opaque, nested: not checked */
		return t;
	}
	if (val->kind == OXP_VALUE_SPARSE_INITIALIZER) {
		t.kind = OXP_TYPE_SPARSE_TENSOR;
		t.elem = val->declared.elem_type;
		return t;
	}
	if (val->declared.source != OXP_SHAPE_NONE && val->declared.elem_type > 0) {
		t.kind = OXP_TYPE_TENSOR;
		t.elem = val->declared.elem_type;
	} else if (!declared_only && val->inferred.source != OXP_SHAPE_NONE &&
	           val->inferred.elem_type > 0) {
		t.kind = OXP_TYPE_TENSOR;
		t.elem = val->inferred.elem_type;
	}
	return t;
}

/* "tensor(float)", "seq(tensor(int64))", ...: the schema's spelling */
static const char *vtype_text(vtype t, char *buf, size_t size)
{
	oxp_schema_types one = {0, 0, 0, 0, 0, false};
	uint32_t bit = t.elem > 0 && t.elem < 32 ? 1u << t.elem : 0;
	if (t.kind == OXP_TYPE_SEQUENCE)
		one.sequence = bit;
	else if (t.kind == OXP_TYPE_OPTIONAL)
		one.optional_tensor = bit;
	else if (t.kind == OXP_TYPE_SPARSE_TENSOR)
		one.sparse = bit;
	else
		one.tensor = bit;
	return oxp_schema_types_text(&one, buf, size);
}

#define MAX_BIND 32

static void check_types(ck *k, const nctx *x)
{
	const oxp_dag_view *v = k->v;
	const oxp_dnode *dn = x->dn;
	const oxp_node *n = x->n;
	const oxp_schema *s = x->s;
	const oxp_schema_info info = x->info;
	const nodetxt *nt = &x->nt;
	struct {
		vtype t;
		size_t pos;
		bool out;
	} bound[MAX_BIND];
	bool have[MAX_BIND] = {false};
	bool reported_binding = false;
	for (int out = 0; out < 2; out++) {
		size_t cnt = out ? n->noutputs : n->ninputs;
		for (size_t i = 0; i < cnt; i++) {
			uint32_t vi = out ? dn->outputs[i] : dn->inputs[i];
			if (vi == OXP_NONE)
				continue;
			/* outputs: only declared types (inferred ones derive from the inputs) */
			vtype t = value_type(&v->values[vi], out != 0);
			if (t.kind == OXP_TYPE_NONE || t.elem <= 0)
				continue;
			int32_t pi = oxp_schema_port_of(s, out != 0, i, NULL);
			oxp_schema_port port;
			if (pi < 0 || !(out ? oxp_schema_output(s, (uint32_t)pi, &port)
			                    : oxp_schema_input(s, (uint32_t)pi, &port)))
				continue;
			char tb[64], lb[64];
			const char *label = oxp_schema_port_label(s, out != 0, i, lb, sizeof(lb));
			if (!oxp_schema_types_allow(&port.types, t.kind, t.elem)) {
				char allowed[512];
				nm vn = name_of(v->values[vi].name);
				nreport(k, x, OXP_C_TYPE_CONSTRAINT, vi,
				        "%s: %s '%s' (value '%s') is %s; %s-%d accepts %s", nt->s,
				        out ? "output" : "input", label ? label : "?", vn.s,
				        vtype_text(t, tb, sizeof(tb)), info.name, info.since_version,
				        oxp_schema_types_text(&port.types, allowed, sizeof(allowed)));
				continue;
			}
			if (port.constraint < 0 || port.constraint >= MAX_BIND ||
			    (port.flags & OXP_PORT_HETEROGENEOUS) || reported_binding)
				continue;
			int32_t c = port.constraint;
			if (!have[c]) {
				have[c] = true;
				bound[c].t = t;
				bound[c].pos = i;
				bound[c].out = out != 0;
			} else if (bound[c].t.kind != t.kind || bound[c].t.elem != t.elem) {
				char tb2[64], lb2[64];
				const char *l2 = oxp_schema_port_label(s, bound[c].out, bound[c].pos, lb2,
				                                       sizeof(lb2));
				nreport(k, x, OXP_C_TYPE_BINDING, vi,
				        "%s: type parameter %s is %s for %s but %s for %s", nt->s,
				        port.param ? port.param : "?", vtype_text(bound[c].t, tb2, sizeof(tb2)),
				        l2 ? l2 : "?", vtype_text(t, tb, sizeof(tb)), label ? label : "?");
				reported_binding = true; /* one per node: the rest follow from it */
			}
		}
	}
}

/* Domains without schemas: one info each, with how many nodes were left unchecked. */
typedef struct dom_count {
	oxp_str domain;
	uint64_t nodes;
	uint32_t first;
} dom_count;

static void check_nodes(ck *k)
{
	const oxp_dag_view *v = k->v;
	dom_count doms[16];
	size_t ndoms = 0;
	uint64_t other_nodes = 0;
	for (uint32_t ni = 0; ni < v->nnodes; ni++) {
		const oxp_dnode *dn = &v->nodes[ni];
		const oxp_node *n = dn->proto;
		nodetxt nt = node_text(k, ni);
		nm dname = name_of(n->domain);
		const char *dtext = is_default(n->domain) ? "ai.onnx" : dname.s;
		/* the attributes' own tensors */
		for (size_t a = 0; a < n->nattrs; a++) {
			char what[sizeof(nt.s) + NAME_MAX_TEXT + 32];
			nm an = name_of(n->attrs[a].name);
			snprintf(what, sizeof(what), "%s: attribute %s tensor", nt.s, an.s);
			if (n->attrs[a].t != NULL)
				check_tensor(k, n->attrs[a].t, dn->scope, ni, OXP_NONE, what);
			for (size_t j = 0; j < n->attrs[a].ntensors; j++)
				check_tensor(k, &n->attrs[a].tensors[j], dn->scope, ni, OXP_NONE, what);
		}
		if (n->ninputs == 0 && n->noutputs == 0)
			report(k, OXP_C_NODE_WITHOUT_IO, OXP_SEV_ERROR, dn->scope, ni, OXP_NONE,
			       "%s has neither inputs nor outputs", nt.s);
		if (is_default(n->domain) && experimental(n->op_type)) {
			report(k, OXP_C_EXPERIMENTAL_OP, OXP_SEV_WARNING, dn->scope, ni, OXP_NONE,
			       "%s is an experimental operator removed from ONNX; not checked", nt.s);
			continue;
		}
		if (dn->opset <= 0) {
			uint32_t top = dn->scope;
			while (v->scopes[top].kind == OXP_SCOPE_SUBGRAPH && v->scopes[top].parent != OXP_NONE)
				top = v->scopes[top].parent;
			report(k, OXP_C_DOMAIN_NOT_IMPORTED, OXP_SEV_ERROR, dn->scope, ni, OXP_NONE,
			       "%s is of domain '%s', which %s does not import", nt.s, dtext,
			       v->scopes[top].kind == OXP_SCOPE_FUNCTION ? "its function" : "the model");
			continue;
		}
		if (dn->function != OXP_NONE)
			continue; /* a call of a model-local function: its body is checked itself */
		const oxp_schema *s = NULL;
		oxp_schema_status st = oxp_schema_find(n->domain, n->op_type, dn->opset, &s);
		if (st == OXP_SCHEMA_NO_DOMAIN) {
			size_t d;
			for (d = 0; d < ndoms; d++)
				if (doms[d].domain.len == n->domain.len &&
				    memcmp(doms[d].domain.p, n->domain.p, n->domain.len) == 0)
					break;
			if (d < ndoms)
				doms[d].nodes++;
			else if (ndoms < sizeof(doms) / sizeof(doms[0]))
				doms[ndoms++] = (dom_count){n->domain, 1, ni};
			else
				other_nodes++;
			continue;
		}
		bool contrib = oxp_str_eq(n->domain, "com.microsoft");
		oxp_severity sev = contrib ? OXP_SEV_WARNING : OXP_SEV_ERROR;
		nm op = name_of(n->op_type);
		if (st == OXP_SCHEMA_NO_OP) {
			report(k, OXP_C_UNKNOWN_OP, sev, dn->scope, ni, OXP_NONE,
			       "%s: domain %s has no operator '%s'", nt.s, dtext, op.s);
			continue;
		}
		oxp_schema_info info;
		oxp_schema_get_info(s, &info);
		if (st == OXP_SCHEMA_TOO_NEW) {
			report(k, OXP_C_OP_TOO_NEW, sev, dn->scope, ni, OXP_NONE,
			       "%s: %s comes in %s opset %d; the node's scope imports opset %" PRId64, nt.s,
			       op.s, dtext, info.since_version, dn->opset);
			continue;
		}
		if (info.deprecated)
			report(k, OXP_C_DEPRECATED_OP, sev, dn->scope, ni, OXP_NONE,
			       "%s: %s is deprecated since %s opset %d (the node's scope imports %" PRId64
			       ")",
			       nt.s, op.s, dtext, info.since_version, dn->opset);
		nctx x = {.ni = ni, .dn = dn, .n = n, .s = s, .info = info, .sev = sev, .nt = nt};
		check_arity(k, &x);
		check_attributes(k, &x);
		check_types(k, &x);
	}
	for (size_t d = 0; d < ndoms; d++) {
		nm dn = name_of(doms[d].domain);
		report(k, OXP_C_UNCHECKED_DOMAIN, OXP_SEV_INFO, OXP_NONE, doms[d].first, OXP_NONE,
		       "%" PRIu64 " node(s) of domain '%s': onnxviz has no schemas for it", doms[d].nodes,
		       dn.s);
	}
	if (other_nodes > 0)
		report(k, OXP_C_UNCHECKED_DOMAIN, OXP_SEV_INFO, OXP_NONE, OXP_NONE, OXP_NONE,
		       "%" PRIu64 " node(s) of further domains onnxviz has no schemas for", other_nodes);
}

/* ---------------------------------------------------------------------------------------
 * Entry points
 */
static int problem_cmp(const void *a, const void *b)
{
	const oxp_problem *x = a, *y = b;
	/* the model first, then node order; stable within a node by code, then message */
	uint64_t kx = x->node == OXP_NONE ? 0 : (uint64_t)x->node + 1;
	uint64_t ky = y->node == OXP_NONE ? 0 : (uint64_t)y->node + 1;
	if (kx != ky)
		return kx < ky ? -1 : 1;
	if (x->code != y->code)
		return x->code < y->code ? -1 : 1;
	return strcmp(x->message, y->message);
}

oxp_code oxp_check_run(oxp_check **out, const oxp_model *m, const oxp_dag *d, int data_dirfd,
                       oxp_error *err)
{
	if (err != NULL)
		memset(err, 0, sizeof(*err));
	const oxp_model_proto *p = oxp_model_proto_get(m);
	if (p == NULL)
		return oxp__set_error(err, OXP_E_NOT_MODEL, 0, "", "not a model");
	oxp_check *c = calloc(1, sizeof(*c));
	if (c == NULL)
		return oxp__set_error(err, OXP_E_NOMEM, 0, "", "out of memory");
	c->arena = oxp__arena_new((size_t)64 << 20);
	c->problems = c->arena ? oxp__arena_array(c->arena, OXP_CHECK_MAX_LISTED,
	                                          sizeof(oxp_problem))
	                       : NULL;
	const oxp_dag_view *v = oxp_dag_get(d);
	uint8_t *late = calloc(v->nnodes ? v->nnodes : 1, 1);
	if (c->problems == NULL || late == NULL) {
		free(late);
		oxp_check_free(c);
		return oxp__set_error(err, OXP_E_NOMEM, 0, "", "out of memory");
	}
	ck k = {.c = c, .dirfd = data_dirfd, .p = p, .d = d, .v = v};
	check_model(&k);
	if (!check_values(&k))
		c->nomem = true;
	check_order(&k, late);
	check_nodes(&k);
	free(late);
	if (c->nomem) {
		bool budget = oxp_arena_code(c->arena) == OXP_E_BUDGET;
		oxp_check_free(c);
		if (budget)
			return oxp__set_error(err, OXP_E_BUDGET, 0, "",
			                      "the check needs more than its memory budget");
		return oxp__set_error(err, OXP_E_NOMEM, 0, "", "out of memory");
	}
	qsort(c->problems, c->v.nproblems, sizeof(oxp_problem), problem_cmp);
	c->v.problems = c->problems;
	*out = c;
	return OXP_OK;
}

const oxp_check_view *oxp_check_get(const oxp_check *c)
{
	return &c->v;
}

void oxp_check_free(oxp_check *c)
{
	if (c == NULL)
		return;
	oxp__arena_free(c->arena);
	free(c);
}
