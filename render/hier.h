/*
 * hier.h — private to hier.c and repeat.c: the name-scope tree of the main graph.
 *
 * hier.c files every drawn node under the group of its scope path and decides what is
 * drawn (collapsed boxes, clusters, runs of repeats, ranges); repeat.c orders the children
 * of every group ("layers.0", "layers.1", ... by number) and finds which neighbours are
 * repeats of each other (same structure, weights and names aside).
 */
#ifndef OXR_HIER_H
#define OXR_HIER_H

#include "render/internal.h"

#define HIER_NONUM UINT32_MAX /* a key without a numeric suffix */

typedef struct hgroup {
	oxp_str key;        /* path component (bytes of the model) */
	uint32_t parent;
	uint32_t depth;     /* root 0 */
	uint32_t nops;      /* drawn nodes in this group and below */
	uint32_t own;       /* ... filed in this group itself */
	/* sibling order (repeat.c): families of numbered keys ("layers.N") by number, where
	 * the family first appears; other keys in the order they first appear */
	uint32_t first_child, next_sibling;
	uint32_t num;       /* numeric suffix of the key ("layers.12": 12), else HIER_NONUM */
	uint32_t prefix_len;/* key bytes before the number */
	uint32_t fam;       /* first group of its family (same parent and prefix) */
	bool same_next;     /* the next sibling repeats this one (verified, repeat.c) */
	uint8_t same_at;    /* bit p (2, 3): the sibling p places on repeats this one, and the
	                       siblings from here to it follow each other in the graph's order
	                       (A B A B: a run of period 2) */
	/* what the view makes of it (hier.c) */
	bool auto_open;     /* the automatic overview opens it one level (first of a run) */
	bool shut;          /* the automatic overview keeps it collapsed above its depth: a small
	                       step beside numbered blocks (hier.c, mark_shut) */
	bool open;          /* drawn open: a cluster (or nothing, for one node) */
	bool full;          /* the expand list opens it and everything below */
	bool below;         /* the expand list names something below it */
	bool split;         /* the expand list shows it apart from its run (a period's block:
	                       "/p/features.5.0..1") */
	bool keep;          /* holds a node an overlay keeps open (a diff's change) */
	uint32_t range;     /* the range it belongs to, else OXP_NONE */
	uint32_t run;       /* the run it belongs to, else OXP_NONE */
	uint32_t box;       /* box standing for it (its own, a run's, a range's, an
	                       ancestor's), else OXP_NONE */
	uint32_t member;    /* with box: the group directly in the box's item */
	uint32_t content;   /* cluster its own nodes are drawn in (open groups) */
	uint32_t first_node;/* nodes mapped to its box through it (via next[]) */
	const char *path;   /* "/encoder/layers.3" (display text), built when needed */
} hgroup;

typedef struct hier {
	hgroup *g;
	uint32_t n, cap;
	uint32_t *table;    /* open addressing over (parent, key) -> group */
	uint32_t tcap;
} hier;

/* repeat.c */
/* Numbers, families and the sibling order of every group.  false when out of memory. */
bool oxr__hier_order(hier *h);
#define HIER_PERIOD_MAX 3 /* runs of blocks repeating with period 2 or 3 */

/* Marks same_next (and same_at) on every group whose next sibling (same family, next number) has the
 * same structure: op types, domains, attributes (tensors by type and shape), the wiring
 * inside, which values come from outside (numbered by first use) and which leave, the
 * shape of its scope tree; initializers by type and shape.  Hash first, then verified node
 * by node.  node_group: group of every drawn node of the main graph (nodes[0..nn)). */
oxr_code oxr__hier_repeats(const view *v, hier *h, const uint32_t *node_group,
                           const uint32_t *nodes, uint32_t nn, oxr_error *err);

#endif /* OXR_HIER_H */
