/*
 * bookkeeping.c — which nodes compute without any input data (oxp_dnode.bookkeeping).
 *
 * Exporters spend most nodes of a model on bookkeeping: Constant nodes, and the
 * Shape -> Gather -> Unsqueeze -> Concat chains (index tables, masks, sizes) that compute
 * the arguments of Reshape, Expand, Slice, ... from the shapes of tensors.  A node is
 * bookkeeping when every input it reads the values of is an initializer or the output of
 * a bookkeeping node; Shape, Size and EyeLike read only their input's shape and CastLike
 * only its second input's type, so those inputs do not count.  Element type and rank do
 * not matter: a float table computed from weights is bookkeeping too.
 *
 * Never bookkeeping: ops outside the default domain (unknown semantics, maybe stateful),
 * calls of model-local functions, nodes holding subgraphs (If, Loop, Scan), random ops
 * (their value is not a function of their inputs), and nodes on or behind a cycle.  Graph
 * inputs, undefined values and a subgraph's own inputs (a Loop's iteration number, ...)
 * are data; a value a subgraph takes from an enclosing scope counts as its producer does.
 *
 * One forward pass in topological order (Kahn's algorithm over every edge of every scope,
 * an outer edge linking the outer producer to the inner consumer directly): linear in
 * nodes + edges, nothing recursive.
 */
#include "parser/internal.h"

#include <stdlib.h>
#include <string.h>

static bool is_default_domain(oxp_str d)
{
	return d.len == 0 || oxp_str_eq(d, "ai.onnx");
}

static bool is_random(oxp_str op)
{
	static const char *const ops[] = {"RandomNormal", "RandomUniform", "RandomNormalLike",
	                                  "RandomUniformLike", "Bernoulli", "Multinomial",
	                                  "Dropout"};
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (oxp_str_eq(op, ops[i]))
			return true;
	return false;
}

/* Whether input k of op reads only its input's shape or type, not its values. */
static bool reads_shape_only(oxp_str op, size_t k)
{
	if (k == 0)
		return oxp_str_eq(op, "Shape") || oxp_str_eq(op, "Size") || oxp_str_eq(op, "EyeLike");
	return k == 1 && oxp_str_eq(op, "CastLike");
}

/* Node ni, whose producers are all decided. */
static bool decide(const oxp_dag *d, uint32_t ni)
{
	const oxp_dnode *dn = &d->nodes[ni];
	const oxp_node *n = dn->proto;
	if (!is_default_domain(n->domain) || dn->function != OXP_NONE || dn->nsubscopes > 0 ||
	    is_random(n->op_type))
		return false;
	for (size_t k = 0; k < n->ninputs; k++) {
		uint32_t vi = dn->inputs[k];
		if (vi == OXP_NONE || reads_shape_only(n->op_type, k))
			continue;
		const oxp_value *v = &d->values[vi];
		switch (v->kind) {
		case OXP_VALUE_INITIALIZER:
		case OXP_VALUE_SPARSE_INITIALIZER:
			break;
		case OXP_VALUE_NODE_OUTPUT:
			if (v->producer == OXP_NONE || !d->nodes[v->producer].bookkeeping)
				return false;
			break;
		default: /* a graph input, a subgraph's input, an undefined value: data */
			return false;
		}
	}
	return true;
}

oxp_code oxp__dag_mark_bookkeeping(oxp_dag *d, oxp_error *err)
{
	uint32_t nn = d->v.nnodes;
	if (nn == 0)
		return OXP_OK;
	uint32_t *indeg = calloc(nn, sizeof(uint32_t));
	uint32_t *queue = malloc((size_t)nn * sizeof(uint32_t));
	if (indeg == NULL || queue == NULL) {
		free(indeg);
		free(queue);
		return oxp__set_error(err, OXP_E_NOMEM, 0, "", "out of memory");
	}
	for (uint32_t e = 0; e < d->v.nedges; e++)
		if (d->edges[e].src != OXP_NONE)
			indeg[d->edges[e].dst]++;
	uint32_t head = 0, tail = 0;
	for (uint32_t ni = 0; ni < nn; ni++) {
		d->nodes[ni].bookkeeping = false;
		if (indeg[ni] == 0)
			queue[tail++] = ni;
	}
	while (head < tail) {
		uint32_t ni = queue[head++];
		oxp_dnode *dn = &d->nodes[ni];
		dn->bookkeeping = decide(d, ni);
		for (size_t o = 0; o < dn->proto->noutputs; o++) {
			uint32_t vi = dn->outputs[o];
			if (vi == OXP_NONE)
				continue;
			const oxp_value *v = &d->values[vi];
			for (uint32_t c = 0; c < v->nconsumers; c++) {
				uint32_t q = d->edges[v->consumers[c]].dst;
				if (indeg[q] > 0 && --indeg[q] == 0)
					queue[tail++] = q;
			}
		}
	}
	free(indeg);
	free(queue);
	return OXP_OK;
}
