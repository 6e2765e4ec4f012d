/*
 * overlay.c — marks over a view (oxr_overlay, render/oxr.h): box marks, highlighted rows,
 * extra rows, ghost boxes of another model and their edges.
 *
 * It works on a view whose boxes have their rows (view.c calls oxr__overlay_apply just
 * before long edges are cut), so it finds the rows to highlight by what they say: an
 * attribute row starts with the attribute's name and a space (style.c's attribute rows),
 * a folded input's row with the input's label and a space (view.c's folded rows: the
 * op's input label, else the short name of the value).  Ghosts get the rows an op box of
 * their own model would get, and sit in the cluster of the first box they connect to;
 * their edges are drawn dashed red and never cut into stubs.
 */
#include "render/internal.h"

#include <stdlib.h>
#include <string.h>

const char *oxr__mark_name(uint8_t mark)
{
	static const char *const names[] = {"", "same", "added", "changed", "removed"};
	return mark < 5 ? names[mark] : "";
}

const char *oxr__mark_color(uint8_t mark)
{
	static const char *const colors[] = {"#7b8794", "#9aa5b1", "#1e8e3e", "#d97706", "#c0392b"};
	return mark < 5 ? colors[mark] : colors[0];
}

static bool strong(uint8_t mark)
{
	return mark == OXR_MARK_ADDED || mark == OXR_MARK_CHANGED;
}

/* The strongest mark among the folded (hidden) nodes value vi comes from, following
 * folded chains (Constant -> Identity -> here) a bounded number of steps. */
static uint8_t folded_mark(const view *v, uint32_t vi)
{
	uint32_t stack[16];
	uint32_t n = 0, seen = 0;
	uint8_t best = OXR_MARK_NONE;
	if (vi != OXP_NONE)
		stack[n++] = vi;
	while (n > 0 && seen < 64) {
		uint32_t val = stack[--n];
		seen++;
		uint32_t p = v->dv->values[val].producer;
		if (p == OXP_NONE || !v->node_hidden[p])
			continue;
		uint8_t m = v->ov->nodes[p].mark;
		if (strong(m) && (best != OXR_MARK_CHANGED))
			best = OXR_MARK_CHANGED; /* on the consumer, a changed input */
		const oxp_dnode *dn = &v->dv->nodes[p];
		for (size_t k = 0; k < dn->proto->ninputs && n < 16; k++)
			if (dn->inputs[k] != OXP_NONE)
				stack[n++] = dn->inputs[k];
	}
	return best;
}

bool oxr__overlay_keeps(const view *v, uint32_t n)
{
	if (v->ov->nodes == NULL)
		return false;
	const oxr_overlay_node *x = &v->ov->nodes[n];
	if (x->flags & OXR_OV_KEEP)
		return true;
	const oxp_dnode *dn = &v->dv->nodes[n];
	for (size_t k = 0; k < dn->proto->ninputs; k++)
		if (strong(folded_mark(v, dn->inputs[k])))
			return true;
	return false;
}

/* ---------------------------------------------------------------------------------------
 * Rows
 */
static bool starts_with_word(const char *text, const char *word)
{
	size_t n = strlen(word);
	return n > 0 && strncmp(text, word, n) == 0 && text[n] == ' ';
}

static void mark_rows(vbox *b, row_style style, const char *word)
{
	for (uint32_t r = 0; r < b->nrows; r++)
		if (b->rows[r].style == style && (word == NULL || starts_with_word(b->rows[r].text, word)))
			b->rows[r].mark = true;
}

/* The label view.c gives input k's folded row. */
static const char *input_label(view *v, uint32_t node, uint32_t vi, size_t k)
{
	const char *label = oxr__input_label(v, node, k);
	if (label != NULL || vi == OXP_NONE)
		return label;
	oxp_str name = v->dv->values[vi].name;
	size_t start = 0;
	for (size_t i = 0; i + 1 < name.len; i++)
		if (name.p[i] == '/' || name.p[i] == '.' || name.p[i] == ':')
			start = i + 1;
	return oxr__text(v->arena, (oxp_str){name.p + start, name.len - start}, 18);
}

static void op_marks(view *v, vbox *b)
{
	const oxr_overlay_node *x = &v->ov->nodes[b->node];
	const oxp_dnode *dn = &v->dv->nodes[b->node];
	const oxp_node *n = dn->proto;
	b->mark = x->mark;
	if (x->flags & OXR_OV_OP)
		mark_rows(b, ROW_HEADER, NULL);
	if (x->flags & OXR_OV_NAME)
		mark_rows(b, ROW_NAME, NULL);
	for (uint32_t i = 0; i < x->nattrs; i++)
		mark_rows(b, ROW_ATTR, oxr__text(v->arena, x->attrs[i], 28));
	for (size_t k = 0; k < n->ninputs; k++) {
		bool folded = strong(folded_mark(v, dn->inputs[k]));
		if (!folded && !(k < 64 && (x->inputs >> k & 1)))
			continue;
		if (folded && !strong(b->mark))
			b->mark = OXR_MARK_CHANGED;
		const char *label = input_label(v, b->node, dn->inputs[k], k);
		if (label != NULL)
			mark_rows(b, ROW_TENSOR, label);
	}
	for (uint32_t i = 0; i < x->nnotes; i++)
		if (x->notes[i] != NULL && oxr__add_row(v, b, ROW_ATTR, x->notes[i]))
			b->rows[b->nrows - 1].mark = true;
}

/* ---------------------------------------------------------------------------------------
 * Ghosts
 */
static oxr_code add_edge(view *v, uint32_t from, uint32_t to, oxr_error *err)
{
	if (from == to)
		return OXR_OK;
	if (v->nedges == v->capedges) {
		uint32_t cap = v->capedges ? v->capedges * 2 : 512;
		vedge *ne = realloc(v->edges, (size_t)cap * sizeof(vedge));
		if (ne == NULL)
			return oxr__fail(err, OXR_E_NOMEM, "out of memory");
		v->edges = ne;
		v->capedges = cap;
	}
	vedge *e = &v->edges[v->nedges++];
	memset(e, 0, sizeof(*e));
	e->from = from;
	e->to = to;
	e->value = OXP_NONE;
	e->count = 1;
	e->style = ED_SUB; /* never cut into stubs */
	e->mark = OXR_MARK_REMOVED;
	return OXR_OK;
}

/* The box an endpoint of a ghost edge is drawn as, OXP_NONE when not drawn. */
static uint32_t end_box(const view *v, const uint32_t *ghost_box, uint32_t end)
{
	if (end & 0x80000000u) {
		uint32_t k = end & 0x7fffffffu;
		return k < v->ov->nghosts ? ghost_box[k] : OXP_NONE;
	}
	if (end >= v->dv->nnodes || v->node_hidden[end])
		return OXP_NONE;
	return v->node_box[end];
}

static oxr_code ghosts(view *v, oxr_error *err)
{
	const oxr_overlay *ov = v->ov;
	if (ov->nghosts == 0 || ov->other_dag == NULL)
		return OXR_OK;
	const oxp_dag_view *odv = oxp_dag_get(ov->other_dag);
	uint32_t *ghost_box = malloc((size_t)ov->nghosts * sizeof(uint32_t));
	if (ghost_box == NULL)
		return oxr__fail(err, OXR_E_NOMEM, "out of memory");
	oxr_code rc = OXR_OK;
	view other = *v; /* the same view, reading nodes of the other model */
	other.m = ov->other;
	other.d = ov->other_dag;
	other.dv = odv;
	for (uint32_t k = 0; k < ov->nghosts && rc == OXR_OK; k++) {
		ghost_box[k] = OXP_NONE;
		uint32_t on = ov->ghosts[k];
		if (on >= odv->nnodes)
			continue;
		uint32_t bi = oxr__view_add_box(v, BX_OP, err);
		if (bi == OXP_NONE) {
			rc = err ? err->code : OXR_E_NOMEM;
			break;
		}
		other.boxes = v->boxes;
		other.nboxes = v->nboxes;
		vbox *b = &v->boxes[bi];
		const oxp_node *n = odv->nodes[on].proto;
		b->family = oxr__op_family(n->domain, n->op_type);
		b->mark = OXR_MARK_REMOVED;
		b->other = odv->nodes[on].id;
		b->id = oxp_arena_printf(v->arena, "x%u", k);
		b->node = on;
		rc = oxr__op_rows(&other, bi, err);
		v->boxes[bi].node = OXP_NONE;
		ghost_box[k] = bi;
	}
	/* edges; a ghost takes the cluster of the first drawn box it meets */
	bool *placed = calloc(ov->nghosts, sizeof(bool));
	if (placed == NULL && rc == OXR_OK)
		rc = oxr__fail(err, OXR_E_NOMEM, "out of memory");
	for (uint32_t i = 0; i < ov->nghost_edges && rc == OXR_OK; i++) {
		uint32_t ef = ov->ghost_edges[i].from, et = ov->ghost_edges[i].to;
		uint32_t f = end_box(v, ghost_box, ef), t = end_box(v, ghost_box, et);
		if (f == OXP_NONE || t == OXP_NONE)
			continue;
		bool gf = (ef & 0x80000000u) != 0, gt = (et & 0x80000000u) != 0;
		if (gf && !gt && !placed[ef & 0x7fffffffu]) {
			v->boxes[f].cluster = v->boxes[t].cluster;
			placed[ef & 0x7fffffffu] = true;
		}
		if (gt && !gf && !placed[et & 0x7fffffffu]) {
			v->boxes[t].cluster = v->boxes[f].cluster;
			placed[et & 0x7fffffffu] = true;
		}
		rc = add_edge(v, f, t, err);
	}
	free(placed);
	free(ghost_box);
	return rc;
}

oxr_code oxr__overlay_apply(view *v, oxr_error *err)
{
	const oxr_overlay *ov = v->ov;
	if (ov->nodes != NULL) {
		for (uint32_t bi = 0; bi < v->nboxes; bi++) {
			vbox *b = &v->boxes[bi];
			if (b->kind == BX_OP && b->node != OXP_NONE)
				op_marks(v, b);
			else if (b->kind == BX_GROUP)
				b->mark = OXR_MARK_SAME;
		}
		/* a collapsed scope holding a change is changed, and so is an op's box holding a
		 * changed node it stands for (quantization plumbing joined to it, quant.c) */
		for (uint32_t n = 0; n < v->dv->nnodes; n++) {
			uint32_t bi = v->node_box[n];
			if (bi == OXP_NONE || !strong(ov->nodes[n].mark))
				continue;
			vbox *b = &v->boxes[bi];
			if (b->kind == BX_GROUP || (b->kind == BX_OP && b->node != n && !strong(b->mark)))
				b->mark = OXR_MARK_CHANGED;
		}
	}
	oxr_code rc = ghosts(v, err);
	if (rc == OXR_OK && ov->heat != NULL)
		rc = oxr__heat_apply(v, err);
	return rc;
}
