/*
 * json.c — the diff as JSON: onnxviz.diff/1 (docs/diff.md; schema docs/diff.schema.json).
 *
 * Model strings are display text here (valid UTF-8; invalid bytes as U+FFFD, control
 * characters as spaces, at most 4,096 characters): the exact bytes are in each model's
 * own document.json.  Numbers JSON cannot hold (NaN, ±Inf) are the strings "NaN",
 * "Infinity", "-Infinity", as in the document.
 */
#include "diff/internal.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEXT_MAX 4096

typedef struct jw {
	oxd_diff *d;
	bool oom;
} jw;

static json_t *chk(jw *w, json_t *j)
{
	if (j == NULL)
		w->oom = true;
	return j;
}

static void set(jw *w, json_t *o, const char *key, json_t *v)
{
	if (v == NULL || json_object_set_new(o, key, v) != 0)
		w->oom = true;
}

static void push(jw *w, json_t *a, json_t *v)
{
	if (v == NULL || json_array_append_new(a, v) != 0)
		w->oom = true;
}

static json_t *str(jw *w, oxp_str s)
{
	return chk(w, json_string(oxd__text(w->d->arena, s, TEXT_MAX)));
}

static json_t *cstr(jw *w, const char *s)
{
	return s ? chk(w, json_string(s)) : json_null();
}

static json_t *real(jw *w, double v)
{
	if (isnan(v))
		return chk(w, json_string("NaN"));
	if (isinf(v))
		return chk(w, json_string(v > 0 ? "Infinity" : "-Infinity"));
	return chk(w, json_real(v));
}

static json_t *dims(jw *w, const int64_t *d, size_t n)
{
	json_t *a = chk(w, json_array());
	for (size_t i = 0; a && i < n; i++)
		push(w, a, json_integer(d[i]));
	return a;
}

static json_t *value_type(jw *w, const oxp_value *v)
{
	const oxp_value_type *t = oxp_value_best_type(v);
	if (t->source == OXP_SHAPE_NONE)
		return json_null();
	json_t *o = chk(w, json_object());
	if (o == NULL)
		return NULL;
	set(w, o, "elem_type", t->elem_type ? cstr(w, oxp_dtype_name(t->elem_type)) : json_null());
	if (t->rank < 0) {
		set(w, o, "shape", json_null());
		return o;
	}
	json_t *s = chk(w, json_array());
	for (int32_t i = 0; s && i < t->rank; i++) {
		const oxp_dim *dm = &t->dims[i];
		push(w, s, dm->kind == OXP_DIM_VALUE   ? json_integer(dm->value)
		           : dm->kind == OXP_DIM_PARAM ? str(w, dm->param)
		                                       : json_null());
	}
	set(w, o, "shape", s);
	return o;
}

static json_t *attr_value(jw *w, const oxp_attr *a)
{
	if (a == NULL)
		return json_null();
	json_t *arr;
	switch (a->type) {
	case OXP_ATTR_FLOAT:
		return real(w, (double)a->f);
	case OXP_ATTR_INT:
		return chk(w, json_integer(a->i));
	case OXP_ATTR_STRING:
		return str(w, a->s);
	case OXP_ATTR_INTS:
		return dims(w, a->ints, a->nints);
	case OXP_ATTR_FLOATS:
		arr = chk(w, json_array());
		for (size_t i = 0; arr && i < a->nfloats; i++)
			push(w, arr, real(w, (double)a->floats[i]));
		return arr;
	case OXP_ATTR_STRINGS:
		arr = chk(w, json_array());
		for (size_t i = 0; arr && i < a->nstrings; i++)
			push(w, arr, str(w, a->strings[i]));
		return arr;
	case OXP_ATTR_TENSOR:
		if (a->t == NULL)
			return json_null();
		arr = chk(w, json_object());
		if (arr != NULL) {
			set(w, arr, "dtype", cstr(w, oxp_dtype_name(a->t->data_type)));
			set(w, arr, "dims", dims(w, a->t->dims, a->t->ndims));
		}
		return arr;
	case OXP_ATTR_GRAPH:
		arr = chk(w, json_object());
		if (arr != NULL)
			set(w, arr, "graph", json_integer(a->g ? (json_int_t)a->g->nnodes : 0));
		return arr;
	case OXP_ATTR_GRAPHS:
		arr = chk(w, json_object());
		if (arr != NULL)
			set(w, arr, "graphs", json_integer((json_int_t)a->ngraphs));
		return arr;
	default:
		return cstr(w, oxp_attr_type_name(a->type));
	}
}

static json_t *value_name(jw *w, const oxp_dag_view *v, uint32_t vi)
{
	return vi == OXP_NONE ? json_null() : str(w, v->values[vi].name);
}

static json_t *change(jw *w, const oxd_node *r, const oxd_change *c)
{
	oxd_diff *d = w->d;
	json_t *o = chk(w, json_object());
	if (o == NULL)
		return NULL;
	set(w, o, "kind", cstr(w, oxd_change_name(c->kind)));
	const oxp_dnode *x = r->a != OXP_NONE ? &d->va->nodes[r->a] : NULL;
	const oxp_dnode *y = r->b != OXP_NONE ? &d->vb->nodes[r->b] : NULL;
	switch (c->kind) {
	case OXD_CH_OP_TYPE:
		set(w, o, "a", str(w, x->proto->op_type));
		set(w, o, "b", str(w, y->proto->op_type));
		break;
	case OXD_CH_DOMAIN:
		set(w, o, "a", str(w, x->proto->domain));
		set(w, o, "b", str(w, y->proto->domain));
		break;
	case OXD_CH_OVERLOAD:
		set(w, o, "a", str(w, x->proto->overload));
		set(w, o, "b", str(w, y->proto->overload));
		break;
	case OXD_CH_NAME:
		set(w, o, "a", str(w, x->proto->name));
		set(w, o, "b", str(w, y->proto->name));
		break;
	case OXD_CH_ATTRIBUTE:
		set(w, o, "name", str(w, (c->b ? c->b : c->a)->name));
		set(w, o, "a", attr_value(w, c->a));
		set(w, o, "b", attr_value(w, c->b));
		/* the values as the drawing prints them (parser/attrtext.c) */
		char text[256];
		if (c->a != NULL)
			set(w, o, "a_text", cstr(w, oxp_attr_text(c->a, text, sizeof(text))));
		if (c->b != NULL)
			set(w, o, "b_text", cstr(w, oxp_attr_text(c->b, text, sizeof(text))));
		if (c->tensor != OXP_NONE)
			set(w, o, "tensor", str(w, oxd_tensor_name(d, &d->view.tensors[c->tensor])));
		break;
	case OXD_CH_INPUT:
		set(w, o, "index", json_integer(c->pos));
		set(w, o, "a", x && c->pos < x->proto->ninputs ? value_name(w, d->va, x->inputs[c->pos])
		                                                : json_null());
		set(w, o, "b", y && c->pos < y->proto->ninputs ? value_name(w, d->vb, y->inputs[c->pos])
		                                                : json_null());
		break;
	case OXD_CH_OUTPUT:
		set(w, o, "index", json_integer(c->pos));
		set(w, o, "a", x && c->pos < x->proto->noutputs ? str(w, x->proto->outputs[c->pos])
		                                                 : json_null());
		set(w, o, "b", y && c->pos < y->proto->noutputs ? str(w, y->proto->outputs[c->pos])
		                                                 : json_null());
		break;
	case OXD_CH_TYPE:
		set(w, o, "index", json_integer(c->pos));
		set(w, o, "value", str(w, y->proto->outputs[c->pos]));
		set(w, o, "a", value_type(w, &d->va->values[x->outputs[c->pos]]));
		set(w, o, "b", value_type(w, &d->vb->values[y->outputs[c->pos]]));
		break;
	case OXD_CH_TENSOR:
		set(w, o, "index", json_integer(c->pos));
		set(w, o, "tensor", str(w, oxd_tensor_name(d, &d->view.tensors[c->tensor])));
		break;
	default:
		break;
	}
	return o;
}

static json_t *node(jw *w, const oxd_node *r)
{
	oxd_diff *d = w->d;
	json_t *o = chk(w, json_object());
	if (o == NULL)
		return NULL;
	const oxp_dnode *n = r->b != OXP_NONE ? &d->vb->nodes[r->b] : &d->va->nodes[r->a];
	set(w, o, "status", cstr(w, oxd_status_name(r->status)));
	set(w, o, "a", r->a != OXP_NONE ? cstr(w, d->va->nodes[r->a].id) : json_null());
	set(w, o, "b", r->b != OXP_NONE ? cstr(w, d->vb->nodes[r->b].id) : json_null());
	set(w, o, "op_type", str(w, n->proto->op_type));
	set(w, o, "domain", str(w, n->proto->domain));
	set(w, o, "name", str(w, n->proto->name));
	if (r->how != OXD_HOW_NONE)
		set(w, o, "matched_by", cstr(w, oxd_how_name(r->how)));
	json_t *ch = chk(w, json_array());
	for (uint32_t i = 0; ch && i < r->nchanges; i++)
		push(w, ch, change(w, r, &d->view.changes[r->first_change + i]));
	set(w, o, "changes", ch);
	return o;
}

static const char *storage_name(const oxp_tensor *t)
{
	return oxp_storage_name(t->storage);
}

static json_t *tensor_side(jw *w, const oxp_tensor *t)
{
	if (t == NULL)
		return json_null();
	json_t *o = chk(w, json_object());
	if (o == NULL)
		return NULL;
	set(w, o, "name", str(w, t->name));
	set(w, o, "dtype", cstr(w, oxp_dtype_name(t->data_type)));
	set(w, o, "dims", dims(w, t->dims, t->ndims));
	set(w, o, "storage", cstr(w, storage_name(t)));
	return o;
}

static json_t *tensor(jw *w, const oxd_tensor *t)
{
	oxd_diff *d = w->d;
	json_t *o = chk(w, json_object());
	if (o == NULL)
		return NULL;
	static const char *const kinds[] = {"initializer", "sparse_initializer", "attribute"};
	set(w, o, "status", cstr(w, oxd_status_name(t->status)));
	set(w, o, "name", str(w, oxd_tensor_name(d, t)));
	set(w, o, "kind", cstr(w, kinds[t->kind % 3]));
	if (t->how != OXD_HOW_NONE)
		set(w, o, "matched_by", cstr(w, oxd_how_name(t->how)));
	if (t->kind == OXD_T_ATTRIBUTE) {
		const oxd_node *r = &d->view.nodes[t->node];
		set(w, o, "node", cstr(w, d->vb->nodes[r->b].id));
		set(w, o, "attribute", str(w, t->attr_b->name));
	} else {
		uint32_t s = t->scope_b != OXP_NONE ? t->scope_b : t->scope_a;
		const oxp_dag_view *v = t->scope_b != OXP_NONE ? d->vb : d->va;
		set(w, o, "scope", cstr(w, v->scopes[s].id));
	}
	set(w, o, "a", tensor_side(w, t->a));
	set(w, o, "b", tensor_side(w, t->b));
	if (t->a != NULL && t->b != NULL) {
		set(w, o, "dtype_changed", json_boolean(t->dtype_changed));
		set(w, o, "shape_changed", json_boolean(t->shape_changed));
		set(w, o, "compared", json_boolean(t->compared));
		if (t->compared) {
			set(w, o, "elements", json_integer((json_int_t)t->elements));
			set(w, o, "elements_changed", json_integer((json_int_t)t->changed));
			set(w, o, "max_abs_diff", real(w, t->max_abs));
			set(w, o, "max_rel_diff", real(w, t->max_rel));
			set(w, o, "nonfinite_changed", json_integer((json_int_t)t->nonfinite));
		} else {
			set(w, o, "not_compared", cstr(w, t->not_compared ? t->not_compared : "not compared"));
		}
	}
	return o;
}

static json_t *value(jw *w, const oxd_value *v)
{
	oxd_diff *d = w->d;
	json_t *o = chk(w, json_object());
	if (o == NULL)
		return NULL;
	set(w, o, "status", cstr(w, oxd_status_name(v->status)));
	set(w, o, "role", cstr(w, v->output ? "output" : "input"));
	set(w, o, "name", str(w, v->b != OXP_NONE ? d->vb->values[v->b].name : d->va->values[v->a].name));
	set(w, o, "a", v->a != OXP_NONE ? value_type(w, &d->va->values[v->a]) : json_null());
	set(w, o, "b", v->b != OXP_NONE ? value_type(w, &d->vb->values[v->b]) : json_null());
	return o;
}

static json_t *function(jw *w, const oxd_function *f)
{
	oxd_diff *d = w->d;
	const oxp_model_proto *p = f->b != OXP_NONE ? oxp_model_proto_get(d->mb) : oxp_model_proto_get(d->ma);
	const oxp_function *fn = &p->functions[f->b != OXP_NONE ? f->b : f->a];
	json_t *o = chk(w, json_object());
	if (o == NULL)
		return NULL;
	set(w, o, "status", cstr(w, oxd_status_name(f->status)));
	set(w, o, "domain", str(w, fn->domain));
	set(w, o, "name", str(w, fn->name));
	set(w, o, "overload", str(w, fn->overload));
	set(w, o, "a", f->a != OXP_NONE ? json_integer(f->a) : json_null());
	set(w, o, "b", f->b != OXP_NONE ? json_integer(f->b) : json_null());
	return o;
}

static json_t *side(jw *w, const oxp_model *m, const oxp_dag_view *v)
{
	const oxp_model_proto *p = oxp_model_proto_get(m);
	json_t *o = chk(w, json_object());
	if (o == NULL)
		return NULL;
	set(w, o, "size", json_integer((json_int_t)oxp_model_size(m)));
	set(w, o, "ir_version", json_integer(p->ir_version));
	set(w, o, "producer_name", str(w, p->producer_name));
	set(w, o, "producer_version", str(w, p->producer_version));
	set(w, o, "nodes", json_integer(v->nnodes));
	return o;
}

static json_t *counts(jw *w, uint32_t added, uint32_t removed, uint32_t changed, int64_t same)
{
	json_t *o = chk(w, json_object());
	if (o == NULL)
		return NULL;
	set(w, o, "added", json_integer(added));
	set(w, o, "removed", json_integer(removed));
	set(w, o, "changed", json_integer(changed));
	if (same >= 0)
		set(w, o, "unchanged", json_integer(same));
	return o;
}

oxd_code oxd_json(const oxd_diff *cd, char **out, size_t *len, oxd_error *err)
{
	oxd_diff *d = (oxd_diff *)cd; /* display texts go into its arena */
	const oxd_view *v = &d->view;
	const oxd_summary *s = &v->summary;
	jw w = {d, false};
	json_t *root = chk(&w, json_object());
	if (root != NULL) {
		set(&w, root, "format", cstr(&w, "onnxviz.diff/1"));
		set(&w, root, "same", json_boolean(s->same));
		json_t *sum = counts(&w, s->added, s->removed, s->changed, s->unchanged);
		if (sum != NULL) {
			set(&w, sum, "tensors", counts(&w, s->tensors_added, s->tensors_removed,
			                               s->tensors_changed, s->tensors_unchanged));
			set(&w, sum, "values", counts(&w, s->values_added, s->values_removed,
			                              s->values_changed, -1));
			set(&w, sum, "functions", counts(&w, s->functions_added, s->functions_removed,
			                                 s->functions_changed, -1));
			set(&w, sum, "model", json_integer(s->fields));
		}
		set(&w, root, "summary", sum);
		set(&w, root, "a", side(&w, d->ma, d->va));
		set(&w, root, "b", side(&w, d->mb, d->vb));
		json_t *model = chk(&w, json_array());
		for (uint32_t i = 0; model && i < v->nfields; i++) {
			const oxd_field *f = &v->fields[i];
			json_t *o = chk(&w, json_object());
			if (o == NULL)
				break;
			set(&w, o, "field", cstr(&w, f->name));
			if (f->key != NULL)
				set(&w, o, "key", cstr(&w, f->key));
			set(&w, o, "a", cstr(&w, f->a));
			set(&w, o, "b", cstr(&w, f->b));
			push(&w, model, o);
		}
		set(&w, root, "model", model);
		json_t *vals = chk(&w, json_array());
		for (uint32_t i = 0; vals && i < v->nvalues; i++)
			if (v->values[i].status != OXD_SAME)
				push(&w, vals, value(&w, &v->values[i]));
		set(&w, root, "values", vals);
		json_t *fns = chk(&w, json_array());
		for (uint32_t i = 0; fns && i < v->nfunctions; i++)
			if (v->functions[i].status != OXD_SAME)
				push(&w, fns, function(&w, &v->functions[i]));
		set(&w, root, "functions", fns);
		json_t *nodes = chk(&w, json_array());
		for (uint32_t i = 0; nodes && i < v->nnodes && !w.oom; i++)
			push(&w, nodes, node(&w, &v->nodes[i]));
		set(&w, root, "nodes", nodes);
		json_t *ts = chk(&w, json_array());
		for (uint32_t i = 0; ts && i < v->ntensors && !w.oom; i++)
			if (v->tensors[i].status != OXD_SAME)
				push(&w, ts, tensor(&w, &v->tensors[i]));
		set(&w, root, "tensors", ts);
	}
	char *dumped = NULL, *text = NULL;
	if (!w.oom && !oxp_arena_failed(d->arena))
		dumped = json_dumps(root, JSON_COMPACT | JSON_REAL_PRECISION(17));
	json_decref(root);
	/* the program may give jansson allocators of its own: hand out plain malloc memory */
	if (dumped != NULL) {
		size_t n = strlen(dumped);
		text = malloc(n + 1);
		if (text != NULL)
			memcpy(text, dumped, n + 1);
		json_malloc_t jm;
		json_free_t jf;
		json_get_alloc_funcs(&jm, &jf);
		jf(dumped);
	}
	if (text == NULL) {
		if (err != NULL) {
			err->code = OXD_E_NOMEM;
			snprintf(err->message, sizeof(err->message), "out of memory writing the diff");
		}
		return OXD_E_NOMEM;
	}
	*out = text;
	*len = strlen(text);
	return OXD_OK;
}
