/*
 * doc.c — the JSON document describing a model completely (schema: docs/document.schema.json),
 * one node in full, and search.
 *
 * References inside the document: nodes by stable id ("n12", "n12.then_branch.n3"), scopes
 * by id ("" is the main graph), values by their index in "values", tensors by "ref":
 *   "<scope id>@i<k>"  initializer k of that scope ("@i3" in the main graph)
 *   "<scope id>@s<k>"  sparse initializer k
 *   "<node id>@a<k>"   the tensor of attribute k of a node ("<node id>@a<k>.<j>" in lists)
 * which the service accepts in /models/{id}/tensors/{ref} (as well as plain names).
 */
#include "render/internal.h"
#include "render/jsonx.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DOC_FORMAT "onnxviz.document/1"
#define OXR_DOC_MAX_ITEMS 1500000
#define SUMMARY_CHECK_PROBLEMS 100 /* problems the summary lists (GET .../check: all) */

static const char *value_kind_name(oxp_value_kind k)
{
	static const char *const names[] = {"undefined", "input", "initializer",
	                                    "sparse_initializer", "node_output"};
	return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "undefined";
}

static const char *scope_kind_name(oxp_scope_kind k)
{
	static const char *const names[] = {"main", "subgraph", "function", "training"};
	return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "main";
}

/* The tensor ref of an initializer value ("<scope>@i<k>"), written into buf. */
static void init_ref(const oxp_dag_view *v, const oxp_value *val, char *buf, size_t size)
{
	const oxp_scope *s = &v->scopes[val->scope];
	if (val->kind == OXP_VALUE_INITIALIZER && s->graph != NULL)
		snprintf(buf, size, "%s@i%td", s->id, val->initializer - s->graph->initializers);
	else if (val->kind == OXP_VALUE_SPARSE_INITIALIZER && s->graph != NULL)
		snprintf(buf, size, "%s@s%td", s->id,
		         val->sparse_initializer - s->graph->sparse_initializers);
	else
		buf[0] = '\0';
}

static json_t *value_ref(const oxp_dag_view *v, uint32_t vi)
{
	if (vi == OXP_NONE)
		return json_null();
	json_t *o = json_object();
	jx_set_str(o, "name", v->values[vi].name);
	jx_set(o, "value", json_integer(vi));
	return o;
}

static json_t *value_refs(const oxp_dag_view *v, const uint32_t *idx, size_t n,
                          const oxp_str *names)
{
	json_t *a = json_array();
	for (size_t i = 0; a != NULL && i < n; i++) {
		if (idx[i] == OXP_NONE) {
			if (names != NULL && names[i].len > 0) {
				json_t *o = json_object(); /* unresolved name (e.g. unproduced output) */
				jx_set_str(o, "name", names[i]);
				jx_set(o, "value", json_null());
				json_array_append_new(a, o);
			} else {
				json_array_append_new(a, json_null());
			}
		} else {
			json_array_append_new(a, value_ref(v, idx[i]));
		}
	}
	return a;
}

static json_t *node_json(const oxp_dag *d, uint32_t ni)
{
	const oxp_dag_view *v = oxp_dag_get(d);
	const oxp_dnode *dn = &v->nodes[ni];
	const oxp_node *n = dn->proto;
	json_t *o = json_object();
	if (o == NULL)
		return NULL;
	jx_set(o, "id", jx_cstr(dn->id));
	jx_set(o, "scope", jx_cstr(v->scopes[dn->scope].id));
	jx_set(o, "index", json_integer(dn->index));
	jx_set_str(o, "name", n->name);
	jx_set_str(o, "op_type", n->op_type);
	jx_set_str(o, "domain", n->domain);
	jx_set_str_nonempty(o, "overload", n->overload);
	jx_set_str_nonempty(o, "doc_string", n->doc_string);
	json_t *refs = value_refs(v, dn->inputs, n->ninputs, NULL);
	oxr__set_ports(d, ni, false, refs);
	jx_set(o, "inputs", refs);
	refs = value_refs(v, dn->outputs, n->noutputs, NULL);
	oxr__set_ports(d, ni, true, refs);
	jx_set(o, "outputs", refs);
	json_t *attrs = json_array();
	for (size_t a = 0; attrs != NULL && a < n->nattrs; a++)
		json_array_append_new(attrs, jx_attr(d, ni, &n->attrs[a], a));
	oxr__mark_default_attrs(dn, attrs);
	jx_set(o, "attributes", attrs);
	jx_set(o, "defaults", oxr__defaults_json(dn));
	jx_set(o, "schema", oxr__schema_json(dn));
	if (dn->nsubscopes > 0) {
		json_t *subs = json_array();
		for (uint32_t k = 0; k < dn->nsubscopes; k++)
			json_array_append_new(subs, jx_cstr(v->scopes[dn->first_subscope + k].id));
		jx_set(o, "subgraphs", subs);
	}
	if (dn->function != OXP_NONE) {
		char fid[32];
		snprintf(fid, sizeof(fid), "f%u", dn->function);
		jx_set(o, "function", jx_cstr(fid));
	}
	if (dn->bookkeeping)
		jx_set(o, "bookkeeping", json_true());
	if (n->nmetadata_props > 0)
		jx_set(o, "metadata_props", jx_entries(n->metadata_props, n->nmetadata_props));
	if (n->ndevice_configurations > 0) {
		json_t *dc = json_array();
		for (size_t i = 0; i < n->ndevice_configurations; i++) {
			const oxp_node_device_config *c = &n->device_configurations[i];
			json_t *co = json_object();
			jx_set_str(co, "configuration_id", c->configuration_id);
			jx_set(co, "pipeline_stage", json_integer(c->pipeline_stage));
			json_t *specs = json_array();
			for (size_t k = 0; k < c->nsharding_spec; k++) {
				const oxp_sharding_spec *sp = &c->sharding_spec[k];
				json_t *so = json_object();
				jx_set_str(so, "tensor_name", sp->tensor_name);
				jx_set(so, "device", jx_dims(sp->device, sp->ndevice));
				json_t *sd = json_array();
				for (size_t m = 0; m < sp->nsharded_dim; m++) {
					json_t *dd = json_object();
					jx_set(dd, "axis", jx_int(sp->sharded_dim[m].axis));
					json_t *ss = json_array();
					for (size_t q = 0; q < sp->sharded_dim[m].nsimple_sharding; q++) {
						const oxp_simple_sharded_dim *x = &sp->sharded_dim[m].simple_sharding[q];
						json_t *xo = json_object();
						if (x->kind == OXP_DIM_VALUE)
							jx_set(xo, "dim_value", jx_int(x->dim_value));
						else if (x->kind == OXP_DIM_PARAM)
							jx_set_str(xo, "dim_param", x->dim_param);
						jx_set(xo, "num_shards", jx_int(x->num_shards));
						json_array_append_new(ss, xo);
					}
					jx_set(dd, "simple_sharding", ss);
					json_array_append_new(sd, dd);
				}
				jx_set(so, "sharded_dim", sd);
				json_t *im = json_array();
				for (size_t m = 0; m < sp->nindex_to_device_group_map; m++) {
					json_t *e = json_object();
					jx_set(e, "key", jx_int(sp->index_to_device_group_map[m].key));
					jx_set(e, "value", jx_dims(sp->index_to_device_group_map[m].value,
					                           sp->index_to_device_group_map[m].nvalue));
					json_array_append_new(im, e);
				}
				jx_set(so, "index_to_device_group_map", im);
				json_array_append_new(specs, so);
			}
			jx_set(co, "sharding_spec", specs);
			json_array_append_new(dc, co);
		}
		jx_set(o, "device_configurations", dc);
	}
	return o;
}

/* A node reference for node JSON: id, and the name and op type people read. */
static json_t *node_ref(const oxp_dag_view *v, uint32_t ni, const char *port, uint32_t index,
                        bool named)
{
	json_t *o = json_object();
	jx_set(o, "node", jx_cstr(v->nodes[ni].id));
	jx_set(o, port, json_integer(index));
	if (named) {
		jx_set_str(o, "name", v->nodes[ni].proto->name);
		jx_set_str(o, "op_type", v->nodes[ni].proto->op_type);
	}
	return o;
}

/* Consumers listed in one node's JSON: a value feeding thousands of nodes must not make
 * each of them as big (the document lists every consumer once, per value). */
#define NODE_JSON_CONSUMERS 32
#define NODE_JSON_PORTS 256

/* A value.  in_node: for oxr_node_json (references carry names, consumers are capped). */
static json_t *value_json_ex(const oxp_dag *d, uint32_t vi, bool in_node)
{
	const oxp_dag_view *v = oxp_dag_get(d);
	const oxp_value *val = &v->values[vi];
	json_t *o = json_object();
	if (o == NULL)
		return NULL;
	jx_set_str(o, "name", val->name);
	jx_set(o, "scope", jx_cstr(v->scopes[val->scope].id));
	jx_set(o, "kind", json_string(value_kind_name(val->kind)));
	if (val->graph_input)
		jx_set(o, "graph_input", json_true());
	if (val->graph_output)
		jx_set(o, "graph_output", json_true());
	if (val->producer != OXP_NONE)
		jx_set(o, "producer", node_ref(v, val->producer, "output", val->producer_output, in_node));
	json_t *cons = json_array();
	uint32_t shown = in_node && val->nconsumers > NODE_JSON_CONSUMERS ? NODE_JSON_CONSUMERS
	                                                                   : val->nconsumers;
	for (uint32_t c = 0; cons != NULL && c < shown; c++) {
		const oxp_edge *e = &v->edges[val->consumers[c]];
		json_array_append_new(cons, node_ref(v, e->dst, "input", e->dst_input, in_node));
	}
	jx_set(o, "consumers", cons);
	if (in_node)
		jx_set(o, "consumers_total", json_integer(val->nconsumers));
	jx_set(o, "type", jx_value_type(oxp_value_best_type(val)));
	if (val->declared.source != OXP_SHAPE_NONE && val->inferred.source != OXP_SHAPE_NONE)
		jx_set(o, "inferred", jx_value_type(&val->inferred));
	if (val->info != NULL && val->info->type != NULL &&
	    val->info->type->kind != OXP_TYPE_TENSOR)
		jx_set(o, "declared_type", jx_type(val->info->type)); /* sequence, map, ... */
	if (val->info != NULL) {
		jx_set_str_nonempty(o, "doc_string", val->info->doc_string);
		if (val->info->nmetadata_props > 0)
			jx_set(o, "metadata_props",
			       jx_entries(val->info->metadata_props, val->info->nmetadata_props));
		if (val->info->type != NULL)
			jx_set_str_nonempty(o, "denotation", val->info->type->denotation);
	}
	if (val->kind == OXP_VALUE_INITIALIZER || val->kind == OXP_VALUE_SPARSE_INITIALIZER) {
		char ref[JX_REF_MAX];
		init_ref(v, val, ref, sizeof(ref));
		jx_set(o, "tensor", jx_cstr(ref));
	}
	return o;
}

static json_t *value_json(const oxp_dag *d, uint32_t vi)
{
	return value_json_ex(d, vi, false);
}

static json_t *scope_json(const oxp_dag *d, uint32_t si)
{
	const oxp_dag_view *v = oxp_dag_get(d);
	const oxp_scope *s = &v->scopes[si];
	json_t *o = json_object();
	if (o == NULL)
		return NULL;
	jx_set(o, "id", jx_cstr(s->id));
	jx_set(o, "kind", json_string(scope_kind_name(s->kind)));
	if (s->graph != NULL) {
		jx_set_str(o, "name", s->graph->name);
		jx_set_str_nonempty(o, "doc_string", s->graph->doc_string);
	} else if (s->function != NULL) {
		jx_set_str(o, "name", s->function->name);
	}
	jx_set(o, "parent", s->parent == OXP_NONE ? json_null() : jx_cstr(v->scopes[s->parent].id));
	jx_set(o, "owner", s->owner == OXP_NONE ? json_null() : jx_cstr(v->nodes[s->owner].id));
	if (s->attr != NULL)
		jx_set(o, "attribute", jx_cstr(s->attr));
	jx_set(o, "depth", json_integer(s->depth));
	jx_set(o, "node_count", json_integer(s->nnodes));
	if (s->nnodes > 0) {
		jx_set(o, "first_node", jx_cstr(v->nodes[s->first_node].id));
	}
	const oxp_str *in_names = NULL, *out_names = NULL;
	oxp_str *tmp_in = NULL, *tmp_out = NULL;
	if (s->graph != NULL) {
		tmp_in = calloc(s->ninputs + 1, sizeof(oxp_str));
		tmp_out = calloc(s->noutputs + 1, sizeof(oxp_str));
		if (tmp_in == NULL || tmp_out == NULL)
			jx_oom();
		for (uint32_t i = 0; tmp_in && i < s->ninputs; i++)
			tmp_in[i] = s->graph->inputs[i].name;
		for (uint32_t i = 0; tmp_out && i < s->noutputs; i++)
			tmp_out[i] = s->graph->outputs[i].name;
		in_names = tmp_in;
		out_names = tmp_out;
	} else if (s->function != NULL) {
		in_names = s->function->inputs;
		out_names = s->function->outputs;
	}
	jx_set(o, "inputs", value_refs(v, s->inputs, s->ninputs, in_names));
	jx_set(o, "outputs", value_refs(v, s->outputs, s->noutputs, out_names));
	free(tmp_in);
	free(tmp_out);
	if (s->graph != NULL) {
		const oxp_graph *g = s->graph;
		if (g->nmetadata_props > 0)
			jx_set(o, "metadata_props", jx_entries(g->metadata_props, g->nmetadata_props));
		if (g->nquantization_annotation > 0) {
			json_t *qa = json_array();
			for (size_t i = 0; i < g->nquantization_annotation; i++) {
				json_t *q = json_object();
				jx_set_str(q, "tensor_name", g->quantization_annotation[i].tensor_name);
				jx_set(q, "quant_parameter_tensor_names",
				       jx_entries(g->quantization_annotation[i].quant_parameter_tensor_names,
				                  g->quantization_annotation[i].nquant_parameter_tensor_names));
				json_array_append_new(qa, q);
			}
			jx_set(o, "quantization_annotation", qa);
		}
	}
	return o;
}

static json_t *opsets_json(const oxp_opset *ops, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; a != NULL && i < n; i++) {
		json_t *o = json_object();
		jx_set_str(o, "domain", ops[i].domain);
		jx_set(o, "version", jx_int(ops[i].version));
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *function_json(const oxp_dag *d, const oxp_function *fn, size_t index)
{
	const oxp_dag_view *v = oxp_dag_get(d);
	json_t *o = json_object();
	char id[32];
	snprintf(id, sizeof(id), "f%zu", index);
	jx_set(o, "id", jx_cstr(id));
	jx_set(o, "scope", jx_cstr(id));
	jx_set_str(o, "name", fn->name);
	jx_set_str(o, "domain", fn->domain);
	jx_set_str_nonempty(o, "overload", fn->overload);
	jx_set_str_nonempty(o, "doc_string", fn->doc_string);
	jx_set_str_array(o, "inputs", fn->inputs, fn->ninputs);
	jx_set_str_array(o, "outputs", fn->outputs, fn->noutputs);
	jx_set_str_array(o, "attributes", fn->attribute, fn->nattribute);
	/* attribute_proto defaults: no owning dag node, so render them without scope refs */
	json_t *a = json_array();
	for (size_t i = 0; i < fn->nattribute_proto; i++) {
		const oxp_attr *at = &fn->attribute_proto[i];
		json_t *ao = json_object();
		jx_set_str(ao, "name", at->name);
		jx_set(ao, "type", json_string(oxp_attr_type_name(at->type)));
		if (at->type == OXP_ATTR_INT)
			jx_set(ao, "value", jx_int(at->i));
		else if (at->type == OXP_ATTR_FLOAT)
			jx_set(ao, "value", jx_real(at->f));
		else if (at->type == OXP_ATTR_STRING)
			jx_set_str(ao, "value", at->s);
		else if (at->type == OXP_ATTR_INTS)
			jx_set(ao, "value", jx_dims(at->ints, at->nints));
		json_array_append_new(a, ao);
	}
	jx_set(o, "attribute_protos", a);
	jx_set(o, "opset_import", opsets_json(fn->opset_import, fn->nopset_import));
	if (fn->nmetadata_props > 0)
		jx_set(o, "metadata_props", jx_entries(fn->metadata_props, fn->nmetadata_props));
	uint32_t callers = 0;
	for (uint32_t ni = 0; ni < v->nnodes; ni++)
		callers += v->nodes[ni].function == index;
	jx_set(o, "callers", json_integer(callers));
	return o;
}

static json_t *warnings_json(const oxp_dag *d)
{
	const oxp_dag_view *v = oxp_dag_get(d);
	json_t *a = json_array();
	for (uint32_t i = 0; a != NULL && i < v->nwarnings; i++) {
		const oxp_warning *w = &v->warnings[i];
		json_t *o = json_object();
		jx_set(o, "kind", json_string(oxp_warning_kind_name(w->kind)));
		jx_set(o, "message", jx_cstr(w->message));
		jx_set(o, "scope", w->scope < v->nscopes ? jx_cstr(v->scopes[w->scope].id) : json_null());
		if (w->value != OXP_NONE)
			jx_set(o, "value", value_ref(v, w->value));
		json_t *nodes = json_array();
		for (uint32_t k = 0; k < w->nnodes; k++)
			json_array_append_new(nodes, jx_cstr(v->nodes[w->nodes[k]].id));
		jx_set(o, "nodes", nodes);
		json_array_append_new(a, o);
	}
	return a;
}

typedef struct opc {
	oxp_str domain, op;
	uint32_t n;
} opc;

static int opc_cmp(const void *a, const void *b)
{
	const opc *x = a, *y = b;
	if (x->n != y->n)
		return x->n < y->n ? 1 : -1;
	size_t n = x->op.len < y->op.len ? x->op.len : y->op.len;
	int c = n ? memcmp(x->op.p, y->op.p, n) : 0;
	if (c)
		return c;
	return (x->op.len > y->op.len) - (x->op.len < y->op.len);
}

static bool str_same(oxp_str a, oxp_str b)
{
	return a.len == b.len && (a.len == 0 || memcmp(a.p, b.p, a.len) == 0);
}

/* node count per (domain, op_type), most frequent first; a small hash table */
static json_t *op_histogram(const oxp_dag_view *v)
{
	uint32_t cap = 64;
	while (cap < v->nnodes * 2u + 2u && cap < (1u << 30))
		cap <<= 1;
	opc *t = calloc(cap, sizeof(opc));
	if (t == NULL) {
		jx_oom();
		return NULL;
	}
	size_t used = 0;
	for (uint32_t i = 0; i < v->nnodes; i++) {
		const oxp_node *n = v->nodes[i].proto;
		uint32_t h = (uint32_t)oxp_hash(n->domain.p, n->domain.len, oxp_hash(n->op_type.p, n->op_type.len, 0)) & (cap - 1);
		while (t[h].n != 0 && !(str_same(t[h].op, n->op_type) && str_same(t[h].domain, n->domain)))
			h = (h + 1) & (cap - 1);
		if (t[h].n == 0) {
			t[h].op = n->op_type;
			t[h].domain = n->domain;
			used++;
		}
		t[h].n++;
	}
	size_t k = 0;
	for (uint32_t i = 0; i < cap; i++)
		if (t[i].n)
			t[k++] = t[i];
	qsort(t, k, sizeof(opc), opc_cmp);
	json_t *a = json_array();
	for (size_t i = 0; a != NULL && i < k; i++) {
		json_t *o = json_object();
		jx_set_str(o, "op_type", t[i].op);
		jx_set_str(o, "domain", t[i].domain);
		jx_set(o, "count", json_integer(t[i].n));
		json_array_append_new(a, o);
	}
	free(t);
	(void)used;
	return a;
}

static json_t *qcounts_json(const oxp_qcount *e, uint32_t n, bool params)
{
	json_t *a = json_array();
	for (uint32_t i = 0; a != NULL && i < n; i++) {
		json_t *o = json_object();
		jx_set(o, "dtype", json_string(e[i].name));
		jx_set(o, "ops", json_integer((json_int_t)e[i].ops));
		if (params) {
			jx_set(o, "tensors", json_integer((json_int_t)e[i].tensors));
			jx_set(o, "parameters", jx_count(e[i].parameters));
		}
		json_array_append_new(a, o);
	}
	return a;
}

/* The quantization summary (parser/quant.c, docs/quant.md): formats, quantized ops and
 * parameters per precision, what stays float. */
static json_t *quant_json(const oxp_dag *d)
{
	oxp_arena *a = oxp_arena_new((size_t)256 << 20);
	const oxp_quant *q = NULL;
	if (a == NULL || oxp_quant_analyze(d, a, &q, NULL) != OXP_OK) {
		oxp_arena_free(a);
		jx_oom();
		return NULL;
	}
	json_t *o = json_object();
	json_t *f = json_array();
	for (unsigned b = 1; b <= OXP_QF_WEIGHT_ONLY; b <<= 1)
		if (q->formats & b)
			json_array_append_new(f, json_string(oxp_qformat_name(b)));
	jx_set(o, "formats", f);
	json_t *ops = json_object();
	jx_set(ops, "quantized", json_integer(q->nops));
	jx_set(ops, "dynamic", json_integer((json_int_t)q->dynamic_ops));
	jx_set(ops, "float", json_integer((json_int_t)q->float_ops));
	jx_set(ops, "plumbing", json_integer((json_int_t)q->plumbing));
	jx_set(o, "ops", ops);
	jx_set(o, "weights", qcounts_json(q->weights, q->nweights, true));
	jx_set(o, "activations", qcounts_json(q->acts, q->nacts, false));
	uint64_t qp = 0;
	for (uint32_t i = 0; i < q->nweights; i++)
		qp = oxp_sat_add_u64(qp, q->weights[i].parameters);
	json_t *par = json_object();
	jx_set(par, "quantized", jx_count(qp));
	jx_set(par, "scales", jx_count(q->quant_params));
	jx_set(par, "float", jx_count(q->float_params));
	jx_set(par, "other", jx_count(q->other_params));
	jx_set(o, "parameters", par);
	oxp_arena_free(a);
	return o;
}

static json_t *summary_json(const oxp_model *m, const oxp_dag *d)
{
	const oxp_dag_view *v = oxp_dag_get(d);
	const oxp_model_proto *p = oxp_model_proto_get(m);
	const oxp_dag_summary *s = &v->summary;
	json_t *o = json_object();
	jx_set(o, "nodes", json_integer(v->nnodes));
	uint32_t main_nodes = v->nscopes > 0 && v->scopes[0].kind == OXP_SCOPE_MAIN ? v->scopes[0].nnodes : 0;
	jx_set(o, "main_graph_nodes", json_integer(main_nodes));
	jx_set(o, "edges", json_integer(v->nedges));
	jx_set(o, "values", json_integer(v->nvalues));
	jx_set(o, "scopes", json_integer(s->nscopes));
	jx_set(o, "subgraphs", json_integer(s->nsubgraphs));
	jx_set(o, "max_depth", json_integer(s->max_depth));
	jx_set(o, "functions", json_integer((json_int_t)p->nfunctions));
	uint32_t ninit = 0;
	for (uint32_t i = 0; i < v->nvalues; i++)
		ninit += v->values[i].kind == OXP_VALUE_INITIALIZER ||
		         v->values[i].kind == OXP_VALUE_SPARSE_INITIALIZER;
	jx_set(o, "initializers", json_integer(ninit));
	jx_set(o, "warnings", json_integer(v->nwarnings));
	jx_set(o, "op_types", op_histogram(v));
	/* the summary leaves external files alone: it is cached with the model's structure */
	jx_set(o, "check", oxr__check_json(m, d, -1, SUMMARY_CHECK_PROBLEMS));
	json_t *par = json_object();
	jx_set(par, "count", jx_count(s->parameters));
	jx_set(par, "bytes", jx_count(s->parameter_bytes));
	json_t *by = json_array();
	for (int dt = 1; dt < OXP_DT__COUNT; dt++) {
		if (s->params_by_dtype[dt] == 0)
			continue;
		json_t *e = json_object();
		jx_set(e, "dtype", json_string(oxp_dtype_name(dt)));
		jx_set(e, "short", json_string(oxp_dtype_short(dt)));
		jx_set(e, "count", jx_count(s->params_by_dtype[dt]));
		jx_set(e, "bytes", jx_count(s->bytes_by_dtype[dt]));
		json_array_append_new(by, e);
	}
	jx_set(par, "by_dtype", by);
	/* not parameters (parser/params.c), their bytes inside `bytes` */
	json_t *sc = json_object();
	jx_set(sc, "count", jx_count(s->scale_elements));
	jx_set(sc, "bytes", jx_count(s->scale_bytes));
	jx_set(par, "scales", sc);
	jx_set(o, "parameters", par);
	jx_set(o, "quantization", quant_json(d));
	jx_set(o, "patterns", oxr__fusion_json(d, false));
	return o;
}

static json_t *model_json(const oxp_model *m, const oxp_dag *d)
{
	const oxp_model_proto *p = oxp_model_proto_get(m);
	const oxp_dag_view *v = oxp_dag_get(d);
	json_t *o = json_object();
	jx_set(o, "ir_version", jx_int(p->ir_version));
	jx_set(o, "opset_import", opsets_json(p->opset_import, p->nopset_import));
	jx_set_str(o, "producer_name", p->producer_name);
	jx_set_str(o, "producer_version", p->producer_version);
	jx_set_str(o, "domain", p->domain);
	jx_set(o, "model_version", jx_int(p->model_version));
	jx_set_str(o, "doc_string", p->doc_string);
	jx_set(o, "metadata_props", jx_entries(p->metadata_props, p->nmetadata_props));
	jx_set(o, "size", json_integer((json_int_t)oxp_model_size(m)));
	if (p->graph != NULL)
		jx_set_str(o, "graph_name", p->graph->name);
	else
		jx_set(o, "graph_name", json_null());
	json_t *ti = json_array();
	for (size_t i = 0; i < p->ntraining_info; i++) {
		const oxp_training_info *t = &p->training_info[i];
		json_t *to = json_object();
		char id[48];
		for (uint32_t si = 0; si < v->nscopes; si++) {
			if (v->scopes[si].kind != OXP_SCOPE_TRAINING)
				continue;
			if (v->scopes[si].graph == t->initialization && t->initialization)
				jx_set(to, "initialization", jx_cstr(v->scopes[si].id));
			if (v->scopes[si].graph == t->algorithm && t->algorithm)
				jx_set(to, "algorithm", jx_cstr(v->scopes[si].id));
		}
		snprintf(id, sizeof(id), "t%zu", i);
		jx_set(to, "id", jx_cstr(id));
		jx_set(to, "initialization_binding",
		       jx_entries(t->initialization_binding, t->ninitialization_binding));
		jx_set(to, "update_binding", jx_entries(t->update_binding, t->nupdate_binding));
		json_array_append_new(ti, to);
	}
	jx_set(o, "training_info", ti);
	json_t *cfg = json_array();
	for (size_t i = 0; i < p->nconfiguration; i++) {
		json_t *c = json_object();
		jx_set_str(c, "name", p->configuration[i].name);
		jx_set(c, "num_devices", json_integer(p->configuration[i].num_devices));
		jx_set_str_array(c, "device", p->configuration[i].device, p->configuration[i].ndevice);
		json_array_append_new(cfg, c);
	}
	jx_set(o, "configuration", cfg);
	return o;
}

/* t (a constant's tensor summary) with the parameters value val holds (parser/params.c):
 * its logical values, none for a scale or zero point; t returned. */
static json_t *with_params(json_t *t, const oxp_value *val)
{
	if (val->param_role != OXP_PARAM_NONE)
		jx_set(t, "parameters", jx_count(val->params));
	return t;
}

static json_t *initializers_json(const oxp_dag *d)
{
	const oxp_dag_view *v = oxp_dag_get(d);
	json_t *a = json_array();
	char ref[JX_REF_MAX];
	for (uint32_t vi = 0; a != NULL && vi < v->nvalues; vi++) {
		const oxp_value *val = &v->values[vi];
		if (val->kind != OXP_VALUE_INITIALIZER && val->kind != OXP_VALUE_SPARSE_INITIALIZER)
			continue;
		init_ref(v, val, ref, sizeof(ref));
		json_t *t;
		if (val->kind == OXP_VALUE_INITIALIZER) {
			t = jx_tensor(val->initializer, ref);
		} else {
			t = val->sparse_initializer->values
			        ? jx_tensor(val->sparse_initializer->values, ref)
			        : json_object();
			jx_set(t, "sparse", json_true());
			jx_set(t, "dims", jx_dims(val->sparse_initializer->dims,
			                          val->sparse_initializer->ndims));
			jx_set(t, "ggml_ne", jx_ggml_ne(val->sparse_initializer->dims,
			                                val->sparse_initializer->ndims));
			if (val->sparse_initializer->indices)
				jx_set(t, "indices", jx_tensor(val->sparse_initializer->indices, NULL));
		}
		jx_set(t, "value", json_integer(vi));
		jx_set(t, "scope", jx_cstr(v->scopes[val->scope].id));
		with_params(t, val);
		json_array_append_new(a, t);
	}
	return a;
}

static json_t *edges_json(const oxp_dag_view *v)
{
	json_t *a = json_array();
	for (uint32_t e = 0; a != NULL && e < v->nedges; e++) {
		const oxp_edge *ed = &v->edges[e];
		json_t *o = json_object();
		jx_set(o, "value", json_integer(ed->value));
		jx_set(o, "from", ed->src == OXP_NONE ? json_null() : jx_cstr(v->nodes[ed->src].id));
		if (ed->src != OXP_NONE)
			jx_set(o, "from_output", json_integer(ed->src_output));
		jx_set(o, "to", jx_cstr(v->nodes[ed->dst].id));
		jx_set(o, "to_input", json_integer(ed->dst_input));
		if (ed->outer)
			jx_set(o, "outer", json_true());
		json_array_append_new(a, o);
	}
	return a;
}

oxr_code oxr_doc_json(const oxp_model *m, const oxp_dag *d, oxr_doc_kind kind, oxr_buf *out,
                      oxr_error *err)
{
	jx_oom_reset();
	const oxp_dag_view *v = oxp_dag_get(d);
	const oxp_model_proto *p = oxp_model_proto_get(m);
	/* the document is built as a tree before it is written: bound it (about 2 KB of
	 * memory per node, value and edge) */
	uint64_t items = (uint64_t)v->nnodes + v->nvalues + v->nedges;
	if (kind == OXR_DOC_FULL && items > OXR_DOC_MAX_ITEMS) {
		if (err != NULL) {
			err->code = OXR_E_TOO_BIG;
			snprintf(err->message, sizeof(err->message),
			         "the model has %llu nodes, values and edges; the full document is "
			         "limited to %d (the summary, node and search answers work)",
			         (unsigned long long)items, OXR_DOC_MAX_ITEMS);
		}
		return OXR_E_TOO_BIG;
	}
	jx_scratch_begin();
	json_t *doc = json_object();
	if (doc == NULL) {
		jx_scratch_end();
		return jx_nomem(err);
	}
	jx_set(doc, "format", json_string(DOC_FORMAT));
	jx_set(doc, "model", model_json(m, d));
	jx_set(doc, "summary", summary_json(m, d));
	jx_set(doc, "warnings", warnings_json(d));
	if (kind == OXR_DOC_FULL) {
		json_t *a = json_array();
		for (uint32_t si = 0; a != NULL && si < v->nscopes; si++)
			json_array_append_new(a, scope_json(d, si));
		jx_set(doc, "scopes", a);
		a = json_array();
		for (uint32_t ni = 0; a != NULL && ni < v->nnodes; ni++)
			json_array_append_new(a, node_json(d, ni));
		jx_set(doc, "nodes", a);
		jx_set(doc, "patterns", oxr__fusion_json(d, true));
		a = json_array();
		for (uint32_t vi = 0; a != NULL && vi < v->nvalues; vi++)
			json_array_append_new(a, value_json(d, vi));
		jx_set(doc, "values", a);
		jx_set(doc, "edges", edges_json(v));
		jx_set(doc, "initializers", initializers_json(d));
		a = json_array();
		for (size_t f = 0; a != NULL && f < p->nfunctions; f++)
			json_array_append_new(a, function_json(d, &p->functions[f], f));
		jx_set(doc, "functions", a);
	}
	oxr_code rc = jx_dump(doc, out, err);
	json_decref(doc);
	jx_scratch_end();
	return rc;
}

/* ---------------------------------------------------------------------------------------
 * One node in full
 */
static json_t *port_json(const oxp_dag *d, uint32_t vi, oxp_str name)
{
	const oxp_dag_view *v = oxp_dag_get(d);
	if (vi == OXP_NONE) {
		json_t *o = json_object();
		jx_set_str(o, "name", name);
		jx_set(o, "value", json_null());
		return o;
	}
	json_t *o = value_json_ex(d, vi, true);
	jx_set(o, "value", json_integer(vi));
	const oxp_value *val = &v->values[vi];
	if (val->kind == OXP_VALUE_INITIALIZER) {
		char ref[JX_REF_MAX];
		init_ref(v, val, ref, sizeof(ref));
		jx_set(o, "initializer", with_params(jx_tensor(val->initializer, ref), val));
	} else if (val->kind == OXP_VALUE_SPARSE_INITIALIZER && val->sparse_initializer->values) {
		char ref[JX_REF_MAX];
		init_ref(v, val, ref, sizeof(ref));
		jx_set(o, "initializer",
		       with_params(jx_tensor(val->sparse_initializer->values, ref), val));
	} else if (val->producer != OXP_NONE) {
		/* a Constant producer is "folded" too: show its tensor */
		const oxp_node *pn = v->nodes[val->producer].proto;
		if (oxp_str_eq(pn->op_type, "Constant"))
			for (size_t a = 0; a < pn->nattrs; a++)
				if (pn->attrs[a].t != NULL) {
					char ref[JX_REF_MAX];
					snprintf(ref, sizeof(ref), "%s@a%zu", v->nodes[val->producer].id, a);
					jx_set(o, "constant", with_params(jx_tensor(pn->attrs[a].t, ref), val));
					break;
				}
		/* a weight behind a DequantizeLinear (folded into this node when drawn): its
		 * stored integers, which a dequantized preview turns into these values */
		const oxp_dnode *pd = &v->nodes[val->producer];
		uint32_t x = pn->ninputs > 0 ? pd->inputs[0] : OXP_NONE;
		if (oxp_str_eq(pn->op_type, "DequantizeLinear") && x != OXP_NONE &&
		    v->values[x].kind == OXP_VALUE_INITIALIZER) {
			char ref[JX_REF_MAX];
			init_ref(v, &v->values[x], ref, sizeof(ref));
			json_t *t = jx_tensor(v->values[x].initializer, ref);
			jx_set(t, "node", jx_cstr(pd->id));
			jx_set(o, "dequantized_from", t);
		}
	}
	return o;
}

oxr_code oxr_node_json(const oxp_model *m, const oxp_dag *d, const char *node_id,
                       oxr_buf *out, oxr_error *err)
{
	jx_oom_reset();
	(void)m;
	const oxp_dag_view *v = oxp_dag_get(d);
	uint32_t ni = oxp_dag_find_node(d, node_id);
	if (ni == OXP_NONE) {
		if (err != NULL) {
			err->code = OXR_E_NOT_FOUND;
			snprintf(err->message, sizeof(err->message), "no node with id '%.200s'", node_id);
		}
		return OXR_E_NOT_FOUND;
	}
	const oxp_dnode *dn = &v->nodes[ni];
	json_t *o = node_json(d, ni);
	if (o == NULL)
		return jx_nomem(err);
	/* ports in full up to NODE_JSON_PORTS; beyond, the plain reference the document gives
	 * (a Concat of thousands of inputs must not cost thousands of full value objects) */
	json_t *ins = json_array(), *outs = json_array();
	for (size_t i = 0; i < dn->proto->ninputs; i++)
		json_array_append_new(ins, i < NODE_JSON_PORTS
		                               ? port_json(d, dn->inputs[i], dn->proto->inputs[i])
		                               : value_ref(v, dn->inputs[i]));
	for (size_t i = 0; i < dn->proto->noutputs; i++)
		json_array_append_new(outs, i < NODE_JSON_PORTS
		                                ? port_json(d, dn->outputs[i], dn->proto->outputs[i])
		                                : value_ref(v, dn->outputs[i]));
	oxr__set_ports(d, ni, false, ins);
	oxr__set_ports(d, ni, true, outs);
	if (dn->proto->ninputs > NODE_JSON_PORTS || dn->proto->noutputs > NODE_JSON_PORTS)
		jx_set(o, "ports_in_full", json_integer(NODE_JSON_PORTS));
	jx_set(o, "inputs", ins);
	jx_set(o, "outputs", outs);
	if (dn->nsubscopes > 0) {
		json_t *subs = json_array();
		for (uint32_t k = 0; k < dn->nsubscopes; k++)
			json_array_append_new(subs, scope_json(d, dn->first_subscope + k));
		jx_set(o, "subgraphs", subs);
	}
	if (dn->function != OXP_NONE) {
		const oxp_model_proto *p = oxp_model_proto_get(m);
		jx_set(o, "function", function_json(d, &p->functions[dn->function], dn->function));
	}
	oxr_code rc = jx_dump(o, out, err);
	json_decref(o);
	return rc;
}

/* ---------------------------------------------------------------------------------------
 * Search: case-insensitive substring over node names, op types, value names and attribute
 * values (strings, ints and floats as text ("%lld", "%g"), lists of them).
 */
static bool contains_ci(oxp_str hay, const char *needle, size_t nlen)
{
	if (nlen == 0 || hay.len < nlen)
		return nlen == 0;
	for (size_t i = 0; i + nlen <= hay.len; i++) {
		size_t k = 0;
		while (k < nlen && tolower((unsigned char)hay.p[i + k]) == tolower((unsigned char)needle[k]))
			k++;
		if (k == nlen)
			return true;
	}
	return false;
}

static bool attr_matches(const oxp_attr *a, const char *q, size_t ql, char *what, size_t wsize)
{
	char num[64];
	switch (a->type) {
	case OXP_ATTR_STRING:
		if (contains_ci(a->s, q, ql)) {
			snprintf(what, wsize, "attribute");
			return true;
		}
		break;
	case OXP_ATTR_STRINGS:
		for (size_t i = 0; i < a->nstrings; i++)
			if (contains_ci(a->strings[i], q, ql)) {
				snprintf(what, wsize, "attribute");
				return true;
			}
		break;
	case OXP_ATTR_INT:
		snprintf(num, sizeof(num), "%lld", (long long)a->i);
		if (contains_ci((oxp_str){num, strlen(num)}, q, ql)) {
			snprintf(what, wsize, "attribute");
			return true;
		}
		break;
	case OXP_ATTR_FLOAT:
		snprintf(num, sizeof(num), "%g", (double)a->f);
		if (contains_ci((oxp_str){num, strlen(num)}, q, ql)) {
			snprintf(what, wsize, "attribute");
			return true;
		}
		break;
	case OXP_ATTR_INTS:
		for (size_t i = 0; i < a->nints && i < 4096; i++) {
			snprintf(num, sizeof(num), "%lld", (long long)a->ints[i]);
			if (contains_ci((oxp_str){num, strlen(num)}, q, ql)) {
				snprintf(what, wsize, "attribute");
				return true;
			}
		}
		break;
	case OXP_ATTR_FLOATS:
		for (size_t i = 0; i < a->nfloats && i < 4096; i++) {
			snprintf(num, sizeof(num), "%g", (double)a->floats[i]);
			if (contains_ci((oxp_str){num, strlen(num)}, q, ql)) {
				snprintf(what, wsize, "attribute");
				return true;
			}
		}
		break;
	default:
		break;
	}
	return false;
}

oxr_code oxr_search_json(const oxp_model *m, const oxp_dag *d, const char *query,
                         size_t limit, oxr_buf *out, oxr_error *err)
{
	jx_oom_reset();
	(void)m;
	const oxp_dag_view *v = oxp_dag_get(d);
	size_t ql = strlen(query);
	json_t *res = json_object();
	json_t *hits = json_array();
	if (res == NULL || hits == NULL) {
		json_decref(res);
		json_decref(hits);
		return jx_nomem(err);
	}
	size_t total = 0;
	char what[32];
	oxp_arena *scratch = oxp_arena_new((size_t)64 << 20);
	for (uint32_t ni = 0; ql > 0 && ni < v->nnodes; ni++) {
		const oxp_node *n = v->nodes[ni].proto;
		const char *field = NULL;
		oxp_str text = {"", 0};
		if (contains_ci(n->name, query, ql)) {
			field = "name";
			text = n->name;
		} else if (contains_ci(n->op_type, query, ql)) {
			field = "op_type";
			text = n->op_type;
		} else {
			for (size_t i = 0; !field && i < n->ninputs; i++)
				if (contains_ci(n->inputs[i], query, ql)) {
					field = "input";
					text = n->inputs[i];
				}
			for (size_t i = 0; !field && i < n->noutputs; i++)
				if (contains_ci(n->outputs[i], query, ql)) {
					field = "output";
					text = n->outputs[i];
				}
			for (size_t i = 0; !field && i < n->nattrs; i++)
				if (attr_matches(&n->attrs[i], query, ql, what, sizeof(what))) {
					field = "attribute";
					text = n->attrs[i].name;
				}
		}
		if (field == NULL)
			continue;
		total++;
		if (json_array_size(hits) >= limit)
			continue;
		json_t *h = json_object();
		jx_set(h, "node", jx_cstr(v->nodes[ni].id));
		jx_set(h, "scope", jx_cstr(v->scopes[v->nodes[ni].scope].id));
		jx_set_str(h, "name", n->name);
		jx_set_str(h, "op_type", n->op_type);
		jx_set(h, "match", json_string(field));
		jx_set_str(h, "text", text);
		/* the name scope it is filed under in grouped views (expand= takes it) */
		oxp_str comps[OXR_MAX_GROUP_DEPTH];
		size_t nc = oxr__name_scope(n->name, comps, OXR_MAX_GROUP_DEPTH);
		if (nc > 0 && scratch != NULL)
			jx_set(h, "group", jx_cstr(oxr__scope_path(scratch, comps, nc)));
		json_array_append_new(hits, h);
	}
	oxp_arena_free(scratch);
	jx_set(res, "query", jx_cstr(query));
	jx_set(res, "total", json_integer((json_int_t)total));
	jx_set(res, "hits", hits);
	oxr_code rc = jx_dump(res, out, err);
	json_decref(res);
	return rc;
}
