/*
 * hide.c — hide=Constant,Identity: nodes of the listed op types are not drawn.
 *
 * Netron #1215 and #1525 ask for it: a graph full of Identity, Cast or Reshape reads
 * better without them.  A hidden node is marked as fold.c marks what folds (node_hidden:
 * no box, no group member), and view.c bridges its edges: each consumer of its outputs
 * gets an edge from whatever drew its inputs (through chains of hidden nodes), so the
 * drawing stays connected.  Unlike folding, no row says what was there; the drawing
 * says how many nodes were hidden (data-hidden and a note in SVG, "hidden" in the
 * layout JSON, a comment in DOT).  Kept as boxes: a node that produces a graph output
 * (its terminal would lose its edge), and one already inside another box (folded, a
 * quantized op's plumbing, a recognised pattern).
 */
#include "render/internal.h"

#include <stdlib.h>
#include <string.h>

/* Whether op_type is one of the comma-separated names of list. */
static bool listed(const char *list, oxp_str op_type)
{
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ",");
		if (n == op_type.len && memcmp(p, op_type.p, n) == 0)
			return true;
		p += n + (p[n] == ',');
	}
	return false;
}

oxr_code oxr__hide_mark(view *v, oxr_error *err)
{
	v->nophidden = 0;
	if (v->o.hide[0] == '\0')
		return OXR_OK;
	const oxp_dag_view *dv = v->dv;
	v->node_ophide = calloc(dv->nnodes ? dv->nnodes : 1, sizeof(bool));
	if (v->node_ophide == NULL)
		return oxr__fail(err, OXR_E_NOMEM, "out of memory");
	for (uint32_t ni = 0; ni < dv->nnodes; ni++) {
		const oxp_dnode *dn = &dv->nodes[ni];
		if (v->node_hidden[ni] || oxr__quant_joined(v, ni) || oxr__fusion_joined(v, ni) ||
		    !listed(v->o.hide, dn->proto->op_type))
			continue;
		bool output = false;
		for (size_t o = 0; o < dn->proto->noutputs; o++)
			output |= dn->outputs[o] != OXP_NONE && dv->values[dn->outputs[o]].graph_output;
		if (output)
			continue;
		v->node_hidden[ni] = true;
		v->node_ophide[ni] = true;
		v->nophidden++;
	}
	return OXR_OK;
}

bool oxr__op_hidden(const view *v, uint32_t ni)
{
	return v->node_ophide != NULL && ni != OXP_NONE && v->node_ophide[ni];
}
