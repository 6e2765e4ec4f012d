/*
 * diff_md.c — a model diff as GitHub Flavored Markdown (`onnxviz diff --format md`,
 * GET /diff.md): what a CI job posts as a pull request comment.
 *
 * In this order: a headline with the counts; links to the interactive diff and its PNG
 * when a base URL is given; a table of the two sides (nodes, parameters, MACs, size);
 * the counts of the diff; opsets and other model fields that changed; op types whose
 * counts changed and op type changes of paired nodes; attributes that changed; tensors
 * that changed with their max absolute and relative difference; the nodes that changed,
 * were added or removed, by name.  The whole stays within GitHub's comment limit
 * (OXS_MD_MAX): the lists give way first, each ending with "… and N more".  Every model
 * string goes through md.c's code spans.
 */
#include "service/diff.h"
#include "diff/oxd.h"
#include "service/md.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bytes kept back by every list: a row goes in only while this much stays free, and what
 * is written besides rows — each of the 7 lists' heading (at most 110 bytes), blank line
 * and "… and N more" line (at most 45) — is at most 7 x 160 = 1,120 bytes in all, so the
 * document never passes its limit (the closing line is outside it). */
#define LIST_RESERVE 2048u
/* Rows of the small lists (op types, attributes, tensors) before the nodes' list: each
 * at most this many, so that one long list does not take the nodes' room. */
#define SMALL_ROWS 200u

typedef struct mdctx {
	oxd_diff *df;
	const oxd_view *v;
	const oxp_dag_view *A, *B;
	oxr_buf *out;
	size_t limit;
} mdctx;

static const char *status_sign(oxd_status s)
{
	return s == OXD_ADDED ? "+" : s == OXD_REMOVED ? "\xe2\x88\x92" : s == OXD_CHANGED ? "~" : "";
}

/* ---------------------------------------------------------------------------------------
 * The two sides: nodes, parameters, MACs, size
 */
typedef struct side_fig {
	uint64_t nodes, params, size;
	char macs[128];
	int64_t macs_n;
	bool macs_number;
} side_fig;

static void figures(const oxp_model *m, const oxp_dag *d, side_fig *f)
{
	const oxp_dag_view *v = oxp_dag_get(d);
	f->nodes = v->nnodes;
	f->params = v->summary.parameters;
	f->size = oxp_model_size(m);
	snprintf(f->macs, sizeof(f->macs), "unknown");
	f->macs_number = false;
	oxp_arena *a = oxp_arena_new((size_t)256 << 20);
	const oxp_cost *c = NULL;
	if (a != NULL && oxp_cost_compute(d, a, NULL, &c, NULL) == OXP_OK) {
		oxp_cost_poly_format(c, &c->total.macs, 0, f->macs, sizeof(f->macs));
		f->macs_number = oxp_cost_poly_number(&c->total.macs, &f->macs_n);
	}
	oxp_arena_free(a);
}

/* " (+12, +3.4%)" after B's figure when the two are numbers that differ. */
static void change_of(oxr_buf *o, uint64_t a, uint64_t b)
{
	if (a == b || a > INT64_MAX || b > INT64_MAX)
		return;
	oxr_buf_append(o, " (", 2);
	oxs_md_delta(o, (int64_t)b - (int64_t)a);
	double pct = a > 0 ? ((double)b - (double)a) * 100.0 / (double)a : 0;
	if (pct >= 0.05 || pct <= -0.05) /* "+0.0%" says nothing */
		oxr_buf_printf(o, ", %+.1f%%", pct);
	oxr_buf_append(o, ")", 1);
}

/* "| name | a | b (+d, +p%) |" of two counts. */
static void counts_row(oxr_buf *o, const char *name, uint64_t a, uint64_t b)
{
	oxr_buf_printf(o, "| %s | ", name);
	oxs_md_count(o, a);
	oxr_buf_append(o, " | ", 3);
	oxs_md_count(o, b);
	change_of(o, a, b);
	oxr_buf_append(o, " |\n", 3);
}

static void sides_table(mdctx *x, const side_fig *a, const side_fig *b)
{
	oxr_buf *o = x->out;
	oxr_buf_printf(o, "| | A | B |\n|:--|--:|--:|\n");
	counts_row(o, "nodes", a->nodes, b->nodes);
	counts_row(o, "parameters", a->params, b->params);
	oxr_buf_printf(o, "| MACs | ");
	/* a figure may name the model's dims: model text */
	oxs_md_code_z(o, a->macs, 100, true);
	oxr_buf_append(o, " | ", 3);
	oxs_md_code_z(o, b->macs, 100, true);
	if (a->macs_number && b->macs_number && a->macs_n >= 0 && b->macs_n >= 0)
		change_of(o, (uint64_t)a->macs_n, (uint64_t)b->macs_n);
	oxr_buf_append(o, " |\n", 3);
	counts_row(o, "file bytes", a->size, b->size);
	oxr_buf_append(o, "\n", 1);
}

static void counts_line(mdctx *x)
{
	const oxd_summary *s = &x->v->summary;
	oxr_buf_printf(x->out,
	               "**Nodes:** %" PRIu32 " added, %" PRIu32 " removed, %" PRIu32 " changed, %" PRIu32
	               " unchanged. **Tensors:** %" PRIu32 " added, %" PRIu32 " removed, %" PRIu32
	               " changed, %" PRIu32 " unchanged. **Inputs and outputs:** %" PRIu32
	               " added, %" PRIu32 " removed, %" PRIu32 " changed. **Functions:** %" PRIu32
	               " added, %" PRIu32 " removed, %" PRIu32 " changed. **Model fields:** %" PRIu32
	               " changed.\n\n",
	               s->added, s->removed, s->changed, s->unchanged, s->tensors_added,
	               s->tensors_removed, s->tensors_changed, s->tensors_unchanged, s->values_added,
	               s->values_removed, s->values_changed, s->functions_added, s->functions_removed,
	               s->functions_changed, s->fields);
}

/* ---------------------------------------------------------------------------------------
 * Model fields: opsets apart
 */
static void fields_table(mdctx *x, bool opsets)
{
	oxs_md_list l;
	oxs_md_list_init(&l, x->out, x->limit, LIST_RESERVE, SMALL_ROWS,
	                 opsets ? "#### Opsets\n\n| domain | A | B |\n|:--|:--|:--|\n"
	                        : "#### Model\n\n| field | A | B |\n|:--|:--|:--|\n");
	for (uint32_t i = 0; i < x->v->nfields; i++) {
		const oxd_field *f = &x->v->fields[i];
		if ((strcmp(f->name, "opset_import") == 0) != opsets)
			continue;
		oxr_buf *o = oxs_md_row_begin(&l);
		oxr_buf_append(o, "| ", 2);
		if (opsets) {
			oxs_md_code_z(o, f->key != NULL && f->key[0] ? f->key : "ai.onnx", 80, true);
		} else {
			oxs_md_text(o, f->name);
			if (f->key != NULL) {
				oxr_buf_append(o, " ", 1);
				oxs_md_code_z(o, f->key, 80, true);
			}
		}
		oxr_buf_append(o, " | ", 3);
		if (f->a != NULL)
			oxs_md_code_z(o, f->a, 120, true);
		else
			oxr_buf_append(o, "(none)", 6);
		oxr_buf_append(o, " | ", 3);
		if (f->b != NULL)
			oxs_md_code_z(o, f->b, 120, true);
		else
			oxr_buf_append(o, "(none)", 6);
		oxr_buf_append(o, " |\n", 3);
		oxs_md_row_end(&l);
	}
	oxs_md_list_end(&l, opsets ? "opsets" : "model fields");
}

/* ---------------------------------------------------------------------------------------
 * Op types: counts that changed, and changes of paired nodes
 */
typedef struct op_item {
	oxp_str domain, op;  /* of A (op type changes: A's op) */
	oxp_str op_b;        /* op type changes: B's op */
	uint8_t side;        /* 0 A, 1 B */
} op_item;

static int cmp_op_item(const void *p, const void *q)
{
	const op_item *a = p, *b = q;
	int c = oxs_md_str_cmp(a->domain, b->domain);
	if (c == 0)
		c = oxs_md_str_cmp(a->op, b->op);
	if (c == 0)
		c = oxs_md_str_cmp(a->op_b, b->op_b);
	return c;
}

static void op_name(oxr_buf *o, oxp_str domain, oxp_str op)
{
	if (domain.len > 0 && !(domain.len == 7 && memcmp(domain.p, "ai.onnx", 7) == 0)) {
		oxs_md_code(o, domain, 60, true);
		oxr_buf_append(o, " ", 1);
	}
	oxs_md_code(o, op, 60, true);
}

static bool op_counts(mdctx *x)
{
	size_t n = (size_t)x->A->nnodes + x->B->nnodes;
	op_item *it = calloc(n ? n : 1, sizeof(*it));
	if (it == NULL)
		return false;
	size_t k = 0;
	for (uint32_t i = 0; i < x->A->nnodes; i++)
		it[k++] = (op_item){x->A->nodes[i].proto->domain, x->A->nodes[i].proto->op_type, {NULL, 0}, 0};
	for (uint32_t i = 0; i < x->B->nnodes; i++)
		it[k++] = (op_item){x->B->nodes[i].proto->domain, x->B->nodes[i].proto->op_type, {NULL, 0}, 1};
	qsort(it, k, sizeof(*it), cmp_op_item);
	oxs_md_list l;
	oxs_md_list_init(&l, x->out, x->limit, LIST_RESERVE, SMALL_ROWS,
	                 "#### Op types\n\n| op type | A | B | change |\n|:--|--:|--:|--:|\n");
	for (size_t i = 0; i < k;) {
		size_t j = i;
		uint64_t c[2] = {0, 0};
		while (j < k && oxs_md_str_cmp(it[j].domain, it[i].domain) == 0 && oxs_md_str_cmp(it[j].op, it[i].op) == 0)
			c[it[j++].side]++;
		if (c[0] != c[1]) {
			oxr_buf *r = oxs_md_row_begin(&l);
			oxr_buf_append(r, "| ", 2);
			op_name(r, it[i].domain, it[i].op);
			oxr_buf_append(r, " | ", 3);
			oxs_md_count(r, c[0]);
			oxr_buf_append(r, " | ", 3);
			oxs_md_count(r, c[1]);
			oxr_buf_append(r, " | ", 3);
			oxs_md_delta(r, (int64_t)c[1] - (int64_t)c[0]);
			oxr_buf_append(r, " |\n", 3);
			oxs_md_row_end(&l);
		}
		i = j;
	}
	oxs_md_list_end(&l, "op types");
	/* op types of paired nodes that changed: A's → B's, with their count */
	k = 0;
	for (uint32_t i = 0; i < x->v->nnodes; i++) {
		const oxd_node *r = &x->v->nodes[i];
		if (r->status != OXD_CHANGED || !(r->mask & (1u << OXD_CH_OP_TYPE)))
			continue;
		const oxp_node *na = x->A->nodes[r->a].proto, *nb = x->B->nodes[r->b].proto;
		it[k++] = (op_item){{NULL, 0}, na->op_type, nb->op_type, 0};
	}
	qsort(it, k, sizeof(*it), cmp_op_item);
	oxs_md_list_init(&l, x->out, x->limit, LIST_RESERVE, SMALL_ROWS,
	                 "#### Op type changes\n\n| A | B | nodes |\n|:--|:--|--:|\n");
	for (size_t i = 0; i < k;) {
		size_t j = i;
		while (j < k && cmp_op_item(&it[j], &it[i]) == 0)
			j++;
		oxr_buf *r = oxs_md_row_begin(&l);
		oxr_buf_append(r, "| ", 2);
		oxs_md_code(r, it[i].op, 60, true);
		oxr_buf_append(r, " | ", 3);
		oxs_md_code(r, it[i].op_b, 60, true);
		oxr_buf_append(r, " | ", 3);
		oxs_md_count(r, (uint64_t)(j - i));
		oxr_buf_append(r, " |\n", 3);
		oxs_md_row_end(&l);
		i = j;
	}
	oxs_md_list_end(&l, "op type changes");
	free(it);
	return true;
}

/* ---------------------------------------------------------------------------------------
 * Attributes, tensors, nodes
 */
/* A node's name as a code span, or its id when it has none. */
static void node_label(oxr_buf *o, const oxp_dnode *n)
{
	if (n->proto->name.len > 0) {
		oxs_md_code(o, n->proto->name, 120, true);
	} else {
		oxr_buf_append(o, "(unnamed) ", 10);
		oxs_md_code_z(o, n->id, 60, true);
	}
}

static const oxp_dnode *node_of(const mdctx *x, const oxd_node *r)
{
	return r->b != OXP_NONE ? &x->B->nodes[r->b] : &x->A->nodes[r->a];
}

static void attributes(mdctx *x)
{
	oxs_md_list l;
	char t[200];
	oxs_md_list_init(&l, x->out, x->limit, LIST_RESERVE, SMALL_ROWS,
	                 "#### Attributes\n\n| node | attribute | A | B |\n|:--|:--|:--|:--|\n");
	for (uint32_t i = 0; i < x->v->nnodes; i++) {
		const oxd_node *r = &x->v->nodes[i];
		for (uint32_t k = 0; k < r->nchanges; k++) {
			const oxd_change *c = &x->v->changes[r->first_change + k];
			if (c->kind != OXD_CH_ATTRIBUTE)
				continue;
			oxr_buf *o = oxs_md_row_begin(&l);
			oxr_buf_append(o, "| ", 2);
			node_label(o, node_of(x, r));
			oxr_buf_append(o, " | ", 3);
			oxs_md_code(o, (c->b ? c->b : c->a)->name, 60, true);
			oxr_buf_append(o, " | ", 3);
			if (c->a != NULL)
				oxs_md_code_z(o, oxp_attr_text(c->a, t, sizeof(t)), 100, true);
			else
				oxr_buf_append(o, "(none)", 6);
			oxr_buf_append(o, " | ", 3);
			if (c->b != NULL)
				oxs_md_code_z(o, oxp_attr_text(c->b, t, sizeof(t)), 100, true);
			else
				oxr_buf_append(o, "(none)", 6);
			if (c->tensor != OXP_NONE)
				oxr_buf_append(o, " (values differ)", 16);
			oxr_buf_append(o, " |\n", 3);
			oxs_md_row_end(&l);
		}
	}
	oxs_md_list_end(&l, "attribute changes");
}

static void dims_text(oxr_buf *o, const oxp_tensor *t)
{
	char buf[160];
	oxp_textbuf tb = {.b = buf, .size = sizeof(buf)};
	oxp_textbuf_dims(&tb, t->dims, t->ndims);
	oxr_buf_append(o, buf, strlen(buf)); /* digits, × and …: nothing Markdown reads */
}

static void figure(oxr_buf *o, double v)
{
	if (isnan(v) || isinf(v))
		oxr_buf_append(o, "\xe2\x80\x94", 3);
	else
		oxr_buf_printf(o, "%.4g", v);
}

static void tensors(mdctx *x)
{
	oxs_md_list l;
	oxs_md_list_init(&l, x->out, x->limit, LIST_RESERVE, SMALL_ROWS,
	                 "#### Tensors\n\n| | tensor | change | elements changed | max abs diff | "
	                 "max rel diff |\n|:-:|:--|:--|--:|--:|--:|\n");
	for (uint32_t i = 0; i < x->v->ntensors; i++) {
		const oxd_tensor *t = &x->v->tensors[i];
		if (t->status == OXD_SAME)
			continue;
		oxr_buf *o = oxs_md_row_begin(&l);
		oxr_buf_printf(o, "| %s | ", status_sign(t->status));
		oxs_md_code(o, oxd_tensor_name(x->df, t), 120, true);
		oxr_buf_append(o, " | ", 3);
		if (t->status != OXD_CHANGED) {
			const oxp_tensor *s = t->a ? t->a : t->b;
			oxr_buf_printf(o, "%s ", oxd_status_name(t->status));
			dims_text(o, s);
			oxr_buf_printf(o, " %s | | | |\n", oxp_dtype_short(s->data_type));
		} else {
			const char *sep = "";
			if (t->dtype_changed) {
				oxr_buf_printf(o, "%s \xe2\x86\x92 %s", oxp_dtype_short(t->a->data_type),
				               oxp_dtype_short(t->b->data_type));
				sep = ", ";
			}
			if (t->shape_changed) {
				oxr_buf_append(o, sep, strlen(sep));
				dims_text(o, t->a);
				oxr_buf_append(o, " \xe2\x86\x92 ", 5);
				dims_text(o, t->b);
				sep = ", ";
			}
			if (t->compared) {
				oxr_buf_printf(o, "%svalues | ", sep);
				oxs_md_count(o, t->changed);
				oxr_buf_append(o, " of ", 4);
				oxs_md_count(o, t->elements);
				oxr_buf_append(o, " | ", 3);
				figure(o, t->changed > t->nonfinite ? t->max_abs : NAN);
				oxr_buf_append(o, " | ", 3);
				figure(o, t->changed > t->nonfinite ? t->max_rel : NAN);
				oxr_buf_append(o, " |\n", 3);
			} else {
				oxr_buf_append(o, sep, strlen(sep));
				oxs_md_text(o, t->not_compared != NULL ? t->not_compared : "not compared");
				oxr_buf_append(o, " | | | |\n", 9);
			}
		}
		oxs_md_row_end(&l);
	}
	oxs_md_list_end(&l, "tensors");
}

typedef struct node_item {
	uint8_t rank;   /* changed, added, removed */
	oxp_str name;
	uint32_t rec;
} node_item;

static int cmp_node_item(const void *p, const void *q)
{
	const node_item *a = p, *b = q;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	int c = oxs_md_str_cmp(a->name, b->name);
	return c ? c : (a->rec > b->rec) - (a->rec < b->rec);
}

/* "op type `Relu` → `Gelu`, attribute `alpha`, input 1, ..." of a changed node. */
static void what_changed(mdctx *x, oxr_buf *o, const oxd_node *r)
{
	for (uint32_t k = 0; k < r->nchanges && k < 8; k++) {
		const oxd_change *c = &x->v->changes[r->first_change + k];
		if (k > 0)
			oxr_buf_append(o, ", ", 2);
		const oxp_node *na = x->A->nodes[r->a].proto, *nb = x->B->nodes[r->b].proto;
		switch (c->kind) {
		case OXD_CH_OP_TYPE:
			oxr_buf_append(o, "op type ", 8);
			oxs_md_code(o, na->op_type, 60, true);
			oxr_buf_append(o, " \xe2\x86\x92 ", 5);
			oxs_md_code(o, nb->op_type, 60, true);
			break;
		case OXD_CH_NAME:
			oxr_buf_append(o, "renamed from ", 13);
			oxs_md_code(o, na->name, 80, true);
			break;
		case OXD_CH_ATTRIBUTE:
			oxr_buf_append(o, "attribute ", 10);
			oxs_md_code(o, (c->b ? c->b : c->a)->name, 60, true);
			break;
		case OXD_CH_TENSOR:
			oxr_buf_printf(o, "weights of input %" PRIu32, c->pos);
			break;
		case OXD_CH_INPUT:
		case OXD_CH_OUTPUT:
		case OXD_CH_TYPE:
			oxr_buf_printf(o, "%s %" PRIu32, c->kind == OXD_CH_INPUT ? "input" : c->kind == OXD_CH_OUTPUT ? "output" : "type of output", c->pos);
			break;
		default:
			oxs_md_text(o, oxd_change_name(c->kind));
			break;
		}
	}
	if (r->nchanges > 8)
		oxr_buf_printf(o, ", and %" PRIu32 " more", r->nchanges - 8);
}

static bool nodes(mdctx *x)
{
	const oxd_summary *s = &x->v->summary;
	size_t n = (size_t)s->added + s->removed + s->changed;
	node_item *it = calloc(n ? n : 1, sizeof(*it));
	if (it == NULL)
		return false;
	size_t k = 0;
	for (uint32_t i = 0; i < x->v->nnodes && k < n; i++) {
		const oxd_node *r = &x->v->nodes[i];
		if (r->status == OXD_SAME)
			continue;
		it[k++] = (node_item){r->status == OXD_CHANGED ? 0 : r->status == OXD_ADDED ? 1 : 2,
		                      node_of(x, r)->proto->name, i};
	}
	qsort(it, k, sizeof(*it), cmp_node_item);
	oxs_md_list l;
	oxs_md_list_init(&l, x->out, x->limit, LIST_RESERVE, 0,
	                 "#### Nodes\n\n| | node | op type | what changed |\n|:-:|:--|:--|:--|\n");
	for (size_t i = 0; i < k; i++) {
		const oxd_node *r = &x->v->nodes[it[i].rec];
		const oxp_dnode *d = node_of(x, r);
		oxr_buf *o = oxs_md_row_begin(&l);
		oxr_buf_printf(o, "| %s | ", status_sign(r->status));
		node_label(o, d);
		oxr_buf_append(o, " | ", 3);
		op_name(o, d->proto->domain, d->proto->op_type);
		oxr_buf_append(o, " | ", 3);
		if (r->status == OXD_CHANGED)
			what_changed(x, o, r);
		else
			oxr_buf_printf(o, "%s", oxd_status_name(r->status));
		oxr_buf_append(o, " |\n", 3);
		oxs_md_row_end(&l);
	}
	oxs_md_list_end(&l, "nodes");
	free(it);
	return true;
}

/* ---------------------------------------------------------------------------------------
 */
oxr_code oxs_diff_md(oxd_diff *df, const oxp_model *ma, const oxp_dag *da, const oxp_model *mb,
                     const oxp_dag *db, const oxs_md_links *links, oxr_buf *out, oxr_error *err)
{
	mdctx x = {df, oxd_get(df), oxp_dag_get(da), oxp_dag_get(db), out, OXS_MD_MAX};
	const oxd_summary *s = &x.v->summary;
	/* the closing line first: the lists stop short of it */
	oxr_buf foot;
	oxr_buf_init(&foot, 4096);
	oxr_buf_printf(&foot, "*onnxviz diff: A is the old model, B the new one.*");
	if (links != NULL && links->base != NULL)
		oxr_buf_printf(&foot, " [JSON](%s/models/%s/diff/%s.json)", links->base, links->a,
		               links->b);
	oxr_buf_printf(&foot, "\n");
	x.limit = OXS_MD_MAX - foot.len;

	if (s->same)
		oxr_buf_printf(out, "### onnxviz diff: the models are the same\n\n");
	else
		oxr_buf_printf(out, "### onnxviz diff: %" PRIu32 " nodes added, %" PRIu32 " removed, %" PRIu32
		                    " changed; %" PRIu32 " tensors changed\n\n",
		               s->added, s->removed, s->changed,
		               s->tensors_changed + s->tensors_added + s->tensors_removed);
	if (links != NULL && links->base != NULL)
		oxr_buf_printf(out, "[![B drawn with the changes marked](%s/diff.png?a=%s&b=%s)](%s/#/diff/%s/%s)\n\n"
		                    "[Open the interactive diff](%s/#/diff/%s/%s)\n\n",
		               links->base, links->a, links->b, links->base, links->a, links->b,
		               links->base, links->a, links->b);
	side_fig fa, fb;
	figures(ma, da, &fa);
	figures(mb, db, &fb);
	sides_table(&x, &fa, &fb);
	counts_line(&x);
	fields_table(&x, true);
	fields_table(&x, false);
	bool ok = op_counts(&x);
	attributes(&x);
	tensors(&x);
	ok = ok && nodes(&x);
	oxr_buf_append(out, foot.data, foot.len);
	oxr_buf_free(&foot);
	if (!ok || out->failed)
		return oxs_render_fail(err, OXR_E_NOMEM, "out of memory");
	return OXR_OK;
}
