/*
 * diff.c — oxd_diff_build(): the arrays of a diff, matching (match.c), comparing
 * (compare.c), and the view handed out.
 */
#include "diff/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Structure of a diff is small next to the models (a few words per node and change);
 * this bounds what a hostile pair can make it hold. */
#define DIFF_ARENA_BUDGET ((size_t)1 << 30)

void oxd_options_default(oxd_options *o)
{
	o->dirfd_a = -1;
	o->dirfd_b = -1;
}

static uint32_t *none_array(oxp_arena *a, uint32_t n)
{
	uint32_t *p = oxp_arena_array(a, n ? n : 1, sizeof(uint32_t));
	if (p != NULL)
		memset(p, 0xff, (size_t)(n ? n : 1) * sizeof(uint32_t));
	return p;
}

static oxd_code fail(oxd_error *err, oxd_code code, const char *msg)
{
	if (err != NULL) {
		err->code = code;
		snprintf(err->message, sizeof(err->message), "%s", msg);
	}
	return code;
}

oxd_code oxd_diff_build(oxd_diff **out, const oxp_model *a, const oxp_dag *da,
                        const oxp_model *b, const oxp_dag *db, const oxd_options *opt,
                        oxd_error *err)
{
	oxd_diff *d = calloc(1, sizeof(*d));
	if (d == NULL)
		return fail(err, OXD_E_NOMEM, "out of memory");
	d->arena = oxp_arena_new(DIFF_ARENA_BUDGET);
	d->ma = a;
	d->mb = b;
	d->da = da;
	d->db = db;
	d->va = oxp_dag_get(da);
	d->vb = oxp_dag_get(db);
	if (opt != NULL)
		d->opt = *opt;
	else
		oxd_options_default(&d->opt);
	bool ok = d->arena != NULL;
	if (ok) {
		d->pa = none_array(d->arena, d->va->nnodes);
		d->pb = none_array(d->arena, d->vb->nnodes);
		d->how_b = oxp_arena_array(d->arena, d->vb->nnodes ? d->vb->nnodes : 1, 1);
		d->sa = none_array(d->arena, d->va->nscopes);
		d->sb = none_array(d->arena, d->vb->nscopes);
		d->ta = none_array(d->arena, d->va->nvalues);
		d->tb = none_array(d->arena, d->vb->nvalues);
		ok = d->pa && d->pb && d->how_b && d->sa && d->sb && d->ta && d->tb;
	}
	ok = ok && oxd__match(d) && oxd__compare(d) && !oxp_arena_failed(d->arena);
	if (!ok) {
		bool budget = d->arena != NULL && oxp_arena_code(d->arena) == OXP_E_BUDGET;
		oxd_free(d);
		if (budget)
			return fail(err, OXD_E_BUDGET,
			            "comparing the models needs more than the diff's memory budget");
		return fail(err, OXD_E_NOMEM, "out of memory while comparing the models");
	}
	oxd_view *v = &d->view;
	v->nnodes = d->nodes.n;
	v->nodes = d->nodes.p;
	v->of_a = d->of_a;
	v->of_b = d->of_b;
	v->ntensors = d->tensors.n;
	v->tensors = d->tensors.p;
	v->nvalues = d->values.n;
	v->values = d->values.p;
	v->nfields = d->fields.n;
	v->fields = d->fields.p;
	v->nfunctions = d->functions.n;
	v->functions = d->functions.p;
	*out = d;
	return OXD_OK;
}

const oxd_view *oxd_get(const oxd_diff *d)
{
	return &d->view;
}

void oxd_free(oxd_diff *d)
{
	if (d == NULL)
		return;
	free(d->nodes.p);
	free(d->changes.p);
	free(d->tensors.p);
	free(d->values.p);
	free(d->fields.p);
	free(d->functions.p);
	oxp_arena_free(d->arena);
	free(d);
}

oxp_str oxd_tensor_name(const oxd_diff *d, const oxd_tensor *t)
{
	if (t->kind != OXD_T_ATTRIBUTE)
		return t->b != NULL ? t->b->name : t->a->name;
	const oxd_node *r = &((const oxd_node *)d->nodes.p)[t->node];
	const oxp_node *n = d->vb->nodes[r->b].proto;
	if (oxp_str_eq(n->op_type, "Constant") && n->noutputs > 0)
		return n->outputs[0];
	const char *s = oxp_arena_printf(d->arena, "%.*s.%.*s", (int)n->name.len, n->name.p,
	                                 (int)t->attr_b->name.len, t->attr_b->name.p);
	return (oxp_str){s ? s : "", s ? strlen(s) : 0};
}
