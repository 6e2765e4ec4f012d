/*
 * internal.h — private to diff/: the diff object and the helpers its files share.
 */
#ifndef OXD_INTERNAL_H
#define OXD_INTERNAL_H

#include "diff/oxd.h"

#include <stdbool.h>
#include <stdint.h>

/* A growable array of fixed-size items (malloc'd; freed by oxd_free). */
typedef struct vec {
	void *p;
	uint32_t n, cap;
} vec;

/* Room for one more item of `size` bytes: its address (zeroed), NULL when out of memory
 * or beyond 2^31 items. */
void *oxd__push(vec *v, size_t size);

/* Strings to small integers: open addressing over byte strings (no copies: keys are views
 * that outlive the map). */
typedef struct smap_entry {
	oxp_str key;
	uint64_t hash;
	uint32_t val;
} smap_entry;

typedef struct smap {
	smap_entry *e;
	uint32_t n, cap;
	uint32_t *slot;
	uint32_t mask;
} smap;

/* Room for up to `max` keys; false when out of memory. */
bool oxd__smap_init(smap *m, uint32_t max);
void oxd__smap_free(smap *m);
/* The entry of key, or NULL. */
smap_entry *oxd__smap_find(const smap *m, oxp_str key);
/* The entry of key, made (val = OXP_NONE, *fresh = true) when new; NULL when full. */
smap_entry *oxd__smap_put(smap *m, oxp_str key, bool *fresh);
uint64_t oxd__hash(const void *p, size_t n, uint64_t seed);

struct oxd_diff {
	oxp_arena *arena;
	const oxp_model *ma, *mb;
	const oxp_dag *da, *db;
	const oxp_dag_view *va, *vb;
	oxd_options opt;
	/* matching (match.c) */
	uint32_t *pa;      /* per A node: its partner in B, else OXP_NONE */
	uint32_t *pb;      /* per B node: its partner in A */
	uint8_t *how_b;    /* per B node: oxd_how of its pair */
	uint32_t *sa, *sb; /* per scope: its partner scope */
	uint32_t *ta, *tb; /* per value: its tensor record (initializers), else OXP_NONE */
	/* results */
	vec nodes;         /* oxd_node */
	vec changes;       /* oxd_change */
	vec tensors;       /* oxd_tensor */
	vec values;        /* oxd_value */
	vec fields;        /* oxd_field */
	vec functions;     /* oxd_function */
	uint32_t *of_a, *of_b;
	oxd_view view;
	bool oom;          /* an allocation failed on the way */
	oxd_error ioerr;   /* first external-data failure, when any (reported, not fatal) */
};

/* match.c: scopes, nodes and tensors paired; false when out of memory. */
bool oxd__match(oxd_diff *d);
/* The hash of a node's op type, domain and attributes (order-independent). */
uint64_t oxd__node_class(const oxp_node *n, bool with_attrs);
bool oxd__same_str(oxp_str a, oxp_str b);
/* op type and domain equal ("" and "ai.onnx" are one domain) */
bool oxd__same_op(const oxp_node *x, const oxp_node *y);

/* tensor.c: compare the values of tensor record t (a and b set); fills its status and
 * figures.  false when out of memory. */
bool oxd__compare_tensor(oxd_diff *d, oxd_tensor *t);

/* compare.c: node records, changes, values, fields, functions, summary. */
bool oxd__compare(oxd_diff *d);

/* Display text of model bytes (see oxd_text), in the diff's arena. */
const char *oxd__text(oxp_arena *a, oxp_str s, size_t max_chars);

#endif /* OXD_INTERNAL_H */
