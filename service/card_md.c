/*
 * card_md.c — a model card in GitHub Flavored Markdown (`onnxviz inspect --format md`):
 * for a model registry's page, a README or a pull request.  Name, producer, IR version,
 * opsets, nodes, parameters, MACs, the graph's inputs and outputs with their types and
 * shapes, and the op histogram; within OXS_MD_MAX bytes, every model string as md.c's code
 * spans.
 */
#include "service/md.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Opsets and rows of each list before "… and N more" (the byte budget comes first). */
#define MAX_OPSETS 16u
#define LIST_RESERVE 512u /* > 3 lists x (heading 80 + more line 45), as diff_md.c's */

/* "1×3×224×224", "batch×3" (dims named by the model: written as a code span by the
 * caller), "?" when the rank is unknown. */
static void shape_text(oxr_buf *o, const oxp_value_type *t)
{
	if (t->rank < 0) {
		oxr_buf_append(o, "?", 1);
		return;
	}
	if (t->rank == 0)
		oxr_buf_append(o, "scalar", 6);
	for (int32_t i = 0; i < t->rank; i++) {
		const oxp_dim *d = &t->dims[i];
		if (i > 0)
			oxr_buf_append(o, "\xc3\x97", 2);
		if (d->kind == OXP_DIM_VALUE)
			oxr_buf_printf(o, "%" PRId64, d->value);
		else if (d->kind == OXP_DIM_PARAM && d->param.len > 0)
			oxr_buf_append(o, d->param.p, d->param.len < 64 ? d->param.len : 64);
		else
			oxr_buf_append(o, "?", 1);
	}
}

static void values_table(oxr_buf *out, const oxp_dag *d, const oxp_value_info *vi, size_t n,
                         const char *title)
{
	char head[80];
	snprintf(head, sizeof(head), "#### %s\n\n| name | type | shape |\n|:--|:--|:--|\n", title);
	oxs_md_list l;
	oxs_md_list_init(&l, out, OXS_MD_MAX, LIST_RESERVE, 0, head);
	oxr_buf shape;
	oxr_buf_init(&shape, 8192);
	const oxp_dag_view *v = oxp_dag_get(d);
	for (size_t i = 0; i < n; i++) {
		uint32_t x = oxp_dag_find_value(d, 0, vi[i].name);
		const oxp_value *val = x != OXP_NONE ? &v->values[x] : NULL;
		if (val != NULL && val->initializer != NULL)
			continue; /* an initializer listed as an input (IR < 4): a weight, not an input */
		const oxp_value_type *t = val != NULL ? oxp_value_best_type(val) : NULL;
		oxr_buf *o = oxs_md_row_begin(&l);
		oxr_buf_append(o, "| ", 2);
		oxs_md_code(o, vi[i].name, 120, true);
		oxr_buf_printf(o, " | %s | ", t != NULL && t->elem_type != 0 ? oxp_dtype_short(t->elem_type) : "?");
		shape.len = 0;
		if (t != NULL)
			shape_text(&shape, t);
		else
			oxr_buf_append(&shape, "?", 1);
		oxs_md_code(o, (oxp_str){shape.data, shape.len}, 200, true);
		oxr_buf_append(o, " |\n", 3);
		oxs_md_row_end(&l);
	}
	oxr_buf_free(&shape);
	oxs_md_list_end(&l, title[0] == 'I' ? "inputs" : "outputs");
}

typedef struct op_count {
	oxp_str domain, op;
	uint32_t n;
} op_count;

static int cmp_name(const void *p, const void *q)
{
	const op_count *a = p, *b = q;
	int c = oxs_md_str_cmp(a->domain, b->domain);
	return c ? c : oxs_md_str_cmp(a->op, b->op);
}

static int cmp_count(const void *p, const void *q)
{
	const op_count *a = p, *b = q;
	if (a->n != b->n)
		return a->n < b->n ? 1 : -1;
	return cmp_name(p, q);
}

static bool op_histogram(oxr_buf *out, const oxp_dag_view *v)
{
	op_count *ops = calloc(v->nnodes ? v->nnodes : 1, sizeof(*ops));
	if (ops == NULL)
		return false;
	for (uint32_t i = 0; i < v->nnodes; i++)
		ops[i] = (op_count){v->nodes[i].proto->domain, v->nodes[i].proto->op_type, 1};
	qsort(ops, v->nnodes, sizeof(*ops), cmp_name);
	size_t k = 0;
	for (uint32_t i = 0; i < v->nnodes; i++) {
		if (k > 0 && cmp_name(&ops[k - 1], &ops[i]) == 0)
			ops[k - 1].n++;
		else
			ops[k++] = ops[i];
	}
	qsort(ops, k, sizeof(*ops), cmp_count);
	oxs_md_list l;
	oxs_md_list_init(&l, out, OXS_MD_MAX, LIST_RESERVE, 0,
	                 "#### Op types\n\n| op type | nodes |\n|:--|--:|\n");
	for (size_t i = 0; i < k; i++) {
		oxr_buf *o = oxs_md_row_begin(&l);
		oxr_buf_append(o, "| ", 2);
		if (ops[i].domain.len > 0) {
			oxs_md_code(o, ops[i].domain, 60, true);
			oxr_buf_append(o, " ", 1);
		}
		oxs_md_code(o, ops[i].op, 60, true);
		oxr_buf_append(o, " | ", 3);
		oxs_md_count(o, ops[i].n);
		oxr_buf_append(o, " |\n", 3);
		oxs_md_row_end(&l);
	}
	oxs_md_list_end(&l, "op types");
	free(ops);
	return true;
}

bool oxs_card_md(const char *name, const oxp_model *m, const oxp_dag *d, oxr_buf *out)
{
	const oxp_model_proto *p = oxp_model_proto_get(m);
	const oxp_dag_view *v = oxp_dag_get(d);
	oxr_buf_append(out, "### ", 4);
	oxs_md_code_z(out, name, 120, false);
	oxr_buf_printf(out, "\n\n| | |\n|:--|:--|\n| producer | ");
	oxs_md_code(out, p->producer_name, 80, true);
	if (p->producer_version.len > 0) {
		oxr_buf_append(out, " ", 1);
		oxs_md_code(out, p->producer_version, 40, true);
	}
	if (p->graph != NULL && p->graph->name.len > 0) {
		oxr_buf_printf(out, " |\n| graph | ");
		oxs_md_code(out, p->graph->name, 120, true);
	}
	oxr_buf_printf(out, " |\n| IR version | %" PRId64 " |\n| opsets | ", p->ir_version);
	for (size_t i = 0; i < p->nopset_import && i < MAX_OPSETS; i++) {
		if (i > 0)
			oxr_buf_append(out, ", ", 2);
		oxs_md_code(out, p->opset_import[i].domain.len ? p->opset_import[i].domain
		                                                : (oxp_str){"ai.onnx", 7},
		            60, true);
		oxr_buf_printf(out, " %" PRId64, p->opset_import[i].version);
	}
	if (p->nopset_import > MAX_OPSETS)
		oxr_buf_printf(out, ", and %zu more", p->nopset_import - MAX_OPSETS);
	oxr_buf_printf(out, " |\n| nodes | ");
	oxs_md_count(out, v->nnodes);
	if (v->summary.nsubgraphs > 0)
		oxr_buf_printf(out, " (%" PRIu32 " subgraphs)", v->summary.nsubgraphs);
	oxr_buf_printf(out, " |\n| parameters | ");
	oxs_md_count(out, v->summary.parameters);
	oxr_buf_printf(out, " (");
	oxs_md_count(out, v->summary.parameter_bytes);
	oxr_buf_printf(out, " bytes) |\n| MACs | ");
	oxp_arena *a = oxp_arena_new((size_t)256 << 20);
	const oxp_cost *c = NULL;
	char macs[128];
	if (a != NULL && oxp_cost_compute(d, a, NULL, &c, NULL) == OXP_OK)
		oxs_md_code_z(out, oxp_cost_poly_format(c, &c->total.macs, 0, macs, sizeof(macs)), 100, true);
	else
		oxr_buf_append(out, "unknown", 7);
	oxp_arena_free(a);
	oxr_buf_printf(out, " |\n| file bytes | ");
	oxs_md_count(out, oxp_model_size(m));
	oxr_buf_printf(out, " |\n\n");
	if (p->graph != NULL) {
		values_table(out, d, p->graph->inputs, p->graph->ninputs, "Inputs");
		values_table(out, d, p->graph->outputs, p->graph->noutputs, "Outputs");
	}
	return op_histogram(out, v) && !out->failed;
}
