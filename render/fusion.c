/*
 * fusion.c — a named pattern (parser/fusion.c: a LayerNorm written as 9 ops, a Gelu, an
 * attention core, ...) as one box of the op it computes (patterns=fold, the default;
 * patterns=nodes draws the file as it is).
 *
 *  - the nodes of a match draw no box of their own: they stand behind the box of the
 *    match's last node (node_box), like quantization plumbing, so edges from outside run
 *    into that box and the values inside the match vanish;
 *  - the box's header is the op and how many nodes it stands for, "LayerNormalization ·
 *    9 ops"; its rows are the op's parameters (epsilon, axis, scale, bias, the attention
 *    scale, a constant mask, Gemm's B and C);
 *  - unfold= with the id of any node of a match draws that match as its nodes again (the
 *    header carries data-unfold, as folded bookkeeping rows do).
 * The JSON document lists the matches with their nodes (oxr__fusion_json).
 */
#include "render/internal.h"
#include "render/jsonx.h"

#include <stdio.h>
#include <string.h>

#define DOT " \xc2\xb7 " /* " · " */

/* Whether node id is listed in the unfold option. */
static bool listed(const char *list, const char *id)
{
	size_t n = strlen(id);
	for (const char *p = list; *p;) {
		size_t k = strcspn(p, ",");
		if (k == n && memcmp(p, id, n) == 0)
			return true;
		p += k + (p[k] == ',');
	}
	return false;
}

oxr_code oxr__fusion_mark(view *v, oxr_error *err)
{
	v->fusions = NULL;
	if (v->o.patterns_nodes)
		return OXR_OK;
	const oxp_fusions *f = NULL;
	if (oxp_fusion_find(v->d, v->arena, &f, NULL) != OXP_OK)
		return oxr__fail(err, OXR_E_NOMEM, "out of memory");
	if (f->nmatches == 0)
		return OXR_OK;
	v->fusion_folded = oxp_arena_array(v->arena, f->nmatches, sizeof(bool));
	if (v->fusion_folded == NULL)
		return oxr__fail(err, OXR_E_NOMEM, "out of memory");
	for (uint32_t i = 0; i < f->nmatches; i++) {
		const oxp_fusion *m = &f->matches[i];
		bool fold = !v->node_hidden[m->anchor];
		for (uint32_t k = 0; k < m->nnodes && fold; k++)
			fold = !v->node_hidden[m->nodes[k]] && !oxr__quant_joined(v, m->nodes[k]) &&
			       (v->o.unfold[0] == '\0' || !listed(v->o.unfold, v->dv->nodes[m->nodes[k]].id));
		v->fusion_folded[i] = fold;
	}
	v->fusions = f;
	return OXR_OK;
}

static const oxp_fusion *folded_match(const view *v, uint32_t ni)
{
	if (v->fusions == NULL || ni == OXP_NONE)
		return NULL;
	uint32_t mi = v->fusions->node_match[ni];
	return mi != OXP_NONE && v->fusion_folded[mi] ? &v->fusions->matches[mi] : NULL;
}

bool oxr__fusion_joined(const view *v, uint32_t ni)
{
	const oxp_fusion *m = folded_match(v, ni);
	return m != NULL && m->anchor != ni;
}

uint32_t oxr__fusion_strays(const view *v, uint32_t anchor)
{
	const oxp_fusion *m = folded_match(v, anchor);
	uint32_t n = 0;
	if (m != NULL && m->anchor == anchor)
		for (uint32_t k = 0; k < m->nnodes; k++)
			n += m->nodes[k] != anchor && v->node_box[m->nodes[k]] == OXP_NONE;
	return n;
}

void oxr__fusion_link(view *v)
{
	if (v->fusions == NULL)
		return;
	for (uint32_t ni = 0; ni < v->dv->nnodes; ni++)
		if (v->node_box[ni] == OXP_NONE && oxr__fusion_joined(v, ni))
			v->node_box[ni] = v->node_box[folded_match(v, ni)->anchor];
}

/* "scale ⟨768⟩ f32" for a constant input, with its value for the page */
static void tensor_row(view *v, vbox *b, const oxp_fusion *m, int k, const char *label)
{
	if (m->tin[k] == NULL)
		return;
	if (oxr__add_row(v, b, ROW_TENSOR, oxr__tensor_row(v->arena, label, m->tin[k])))
		b->rows[b->nrows - 1].value = m->in[k];
}

bool oxr__fusion_rows(view *v, uint32_t bi)
{
	vbox *b = &v->boxes[bi];
	const oxp_fusion *m = folded_match(v, b->node);
	if (m == NULL || b->nrows == 0)
		return false;
	const char *name = oxp_fusion_name(m->kind);
	const oxp_node *an = v->dv->nodes[m->anchor].proto;
	/* the header, and the name's scope: the anchor's own name is one of the parts */
	b->family = oxr__op_family((oxp_str){"", 0}, (oxp_str){name, strlen(name)});
	const char *scope = NULL;
	for (size_t i = an->name.len; i > 0; i--)
		if (an->name.p[i - 1] == '/') {
			if (i > 1)
				scope = oxr__text_tail(v->arena, (oxp_str){an->name.p, i - 1}, 40);
			break;
		}
	b->nrows = 0;
	if (!oxr__add_row(v, b, ROW_HEADER, oxp_arena_printf(v->arena, "%s" DOT "%u ops", name, m->nnodes)))
		return true;
	b->rows[0].chain = true; /* unfold= opens it */
	if (scope != NULL)
		oxr__add_row(v, b, ROW_NAME, scope);
	char tip[512];
	size_t n = (size_t)snprintf(tip, sizeof(tip), "%s recognised in %u ops:", name, m->nnodes);
	for (uint32_t k = 0; k < m->nnodes && n < sizeof(tip); k++)
		n += (size_t)snprintf(tip + n, sizeof(tip) - n, "%s %s", k ? "," : "",
		                      oxr__text(v->arena, v->dv->nodes[m->nodes[k]].proto->op_type, 24));
	b->title = oxp_arena_strndup(v->arena, tip, n < sizeof(tip) ? n : sizeof(tip) - 1);
	switch (m->kind) {
	case OXP_FU_LAYERNORM:
	case OXP_FU_RMSNORM:
		oxr__add_row(v, b, ROW_ATTR, oxp_arena_printf(v->arena, "epsilon %g", m->epsilon));
		oxr__add_row(v, b, ROW_ATTR, oxp_arena_printf(v->arena, "axis %lld", (long long)m->axis));
		tensor_row(v, b, m, 1, "scale");
		tensor_row(v, b, m, 2, "bias");
		break;
	case OXP_FU_GELU:
		if (m->tanh)
			oxr__add_row(v, b, ROW_ATTR, "approximate tanh");
		break;
	case OXP_FU_ATTENTION:
		oxr__add_row(v, b, ROW_ATTR, oxp_arena_printf(v->arena, "scale %.6g", m->scale));
		if (m->in[3] != OXP_NONE && m->tin[3] == NULL)
			oxr__add_row(v, b, ROW_ATTR, "attn_mask added");
		tensor_row(v, b, m, 3, "attn_mask");
		break;
	case OXP_FU_GEMM:
		tensor_row(v, b, m, 1, "B");
		tensor_row(v, b, m, 2, "C");
		break;
	default:
		break;
	}
	/* what its nodes cost together (the MatMuls of an attention core, a Gemm's) */
	if (v->cost != NULL) {
		oxp_cost_poly macs = v->cost->nodes[m->nodes[0]].macs;
		for (uint32_t k = 1; k < m->nnodes; k++)
			oxp_cost_poly_add(&macs, &v->cost->nodes[m->nodes[k]].macs);
		const char *t = oxr__macs_text(v, &macs, "");
		if (t != NULL)
			oxr__add_row(v, b, ROW_SUB, t);
	}
	return true;
}

const char *oxr__fusion_op(const view *v, uint32_t ni)
{
	const oxp_fusion *m = folded_match(v, ni);
	return m != NULL && m->anchor == ni ? oxp_fusion_name(m->kind) : NULL;
}

/* ---------------------------------------------------------------------------------------
 * The document
 */
static const char *const ports[OXP_FU__COUNT][4] = {
    {"X", "Scale", "B", NULL},     {"X", "scale", NULL, NULL}, {"X", NULL, NULL, NULL},
    {"X", NULL, NULL, NULL},       {"X", NULL, NULL, NULL},    {"Q", "K_transposed", "V", "attn_mask"},
    {"A", "B", "C", NULL}};

json_t *oxr__fusion_json(const oxp_dag *d, bool matches)
{
	oxp_arena *a = oxp_arena_new((size_t)64 << 20);
	const oxp_fusions *f = NULL;
	if (a == NULL || oxp_fusion_find(d, a, &f, NULL) != OXP_OK) {
		oxp_arena_free(a);
		jx_oom();
		return NULL;
	}
	const oxp_dag_view *v = oxp_dag_get(d);
	json_t *o = json_object();
	json_t *counts = json_object();
	for (unsigned k = 0; k < OXP_FU__COUNT; k++)
		if (f->counts[k] > 0)
			jx_set(counts, oxp_fusion_name(k), json_integer(f->counts[k]));
	jx_set(o, "counts", counts);
	if (matches) {
		json_t *arr = json_array();
		for (uint32_t i = 0; arr != NULL && i < f->nmatches; i++) {
			const oxp_fusion *m = &f->matches[i];
			json_t *e = json_object();
			jx_set(e, "op_type", json_string(oxp_fusion_name(m->kind)));
			jx_set(e, "node", jx_cstr(v->nodes[m->anchor].id));
			json_t *nodes = json_array();
			for (uint32_t k = 0; k < m->nnodes; k++)
				json_array_append_new(nodes, jx_cstr(v->nodes[m->nodes[k]].id));
			jx_set(e, "nodes", nodes);
			json_t *in = json_object();
			for (int k = 0; k < 4; k++)
				if (ports[m->kind][k] != NULL && m->in[k] != OXP_NONE)
					jx_set(in, ports[m->kind][k], json_integer(m->in[k]));
			jx_set(e, "inputs", in);
			jx_set(e, "output", json_integer(m->output));
			json_t *at = json_object();
			if (m->kind == OXP_FU_LAYERNORM || m->kind == OXP_FU_RMSNORM) {
				jx_set(at, "axis", json_integer(m->axis));
				jx_set(at, "epsilon", json_real(m->epsilon));
			} else if (m->kind == OXP_FU_GELU) {
				jx_set(at, "approximate", json_string(m->tanh ? "tanh" : "none"));
			} else if (m->kind == OXP_FU_ATTENTION) {
				jx_set(at, "scale", json_real(m->scale));
			}
			jx_set(e, "attributes", at);
			json_array_append_new(arr, e);
		}
		jx_set(o, "matches", arr);
	}
	oxp_arena_free(a);
	return o;
}
