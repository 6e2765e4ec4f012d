/*
 * oxd.h — onnxviz diff: the one public header of diff/.
 *
 * What changed between two models A and B (docs/diff.md):
 *   1. matching (match.c): the scopes of A and B are paired (main graphs, model-local
 *      functions by domain/name/overload, training graphs by id, subgraphs through their
 *      paired owners), then the nodes of each scope pair: by node name first, then by the
 *      name of a value they produce, then by structure (op type, attributes, paired
 *      neighbours), last a class that has one unpaired node on each side; a rename is a
 *      pair.  Initializers pair by name, then through paired consumers, then by content;
 *      graph inputs and outputs by name.
 *   2. changes (compare.c): per node pair op type, domain, overload, name, attributes
 *      (old -> new), input wiring, outputs, element types and shapes (declared or
 *      inferred), tensors it consumes; per tensor pair dtype, shape and contents (stored
 *      bytes compared first; where they differ, figures: elements changed, max absolute
 *      and relative difference); model-level IR version, opsets, producer, metadata.
 *   3. the JSON document onnxviz.diff/1 (json.c, jansson).
 * Depends on parser/ only.  Names start with oxd_ / OXD_.  Everything of one diff lives in
 * one arena freed by oxd_free(); the diff borrows both models and dags (free it first).
 * Nothing is recursive on model structure: scopes and nodes are walked with work lists.
 */
#ifndef OXD_H
#define OXD_H

#include "parser/oxp.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum oxd_code {
	OXD_OK = 0,
	OXD_E_NOMEM,  /* out of memory (malloc failed): try again later */
	OXD_E_IO,     /* external data could not be read */
	OXD_E_BUDGET, /* the pair needs more than the diff's arena budget: permanent */
	OXD_E__COUNT
} oxd_code;

typedef struct oxd_error {
	oxd_code code;
	char message[256];
} oxd_error;

const char *oxd_code_name(oxd_code code); /* "out_of_memory", "io" */

typedef enum oxd_status {
	OXD_SAME = 0, /* "unchanged" */
	OXD_CHANGED,
	OXD_ADDED,    /* in B only */
	OXD_REMOVED   /* in A only */
} oxd_status;

const char *oxd_status_name(oxd_status s); /* "unchanged", "changed", "added", "removed" */

/* How a pair was found. */
typedef enum oxd_how {
	OXD_HOW_NONE = 0, /* not paired */
	OXD_HOW_NAME,     /* the same name (nodes, tensors, values, functions, scopes) */
	OXD_HOW_OUTPUT,   /* nodes producing a value of the same name */
	OXD_HOW_STRUCTURE,/* neighbours / consumers / the only one of its kind left */
	OXD_HOW_CONTENT   /* tensors with the same dtype, dims and bytes */
} oxd_how;

const char *oxd_how_name(oxd_how h); /* "", "name", "output", "structure", "content" */

typedef enum oxd_change_kind {
	OXD_CH_OP_TYPE = 0,
	OXD_CH_DOMAIN,
	OXD_CH_OVERLOAD,
	OXD_CH_NAME,      /* renamed */
	OXD_CH_ATTRIBUTE, /* a, b: the attribute on each side (NULL when absent) */
	OXD_CH_INPUT,     /* pos: an input whose source differs, or present on one side only */
	OXD_CH_OUTPUT,    /* pos: an output present on one side only */
	OXD_CH_TYPE,      /* pos: an output whose element type or shape differs (both known) */
	OXD_CH_TENSOR,    /* pos: an input whose initializer differs; tensor: its record */
	OXD_CH_SUBGRAPH,  /* a node of its subgraphs, or of the model-local function it calls,
	                     differs */
	OXD_CH__COUNT
} oxd_change_kind;

const char *oxd_change_name(oxd_change_kind k); /* "op_type", "attribute", ... */

typedef struct oxd_change {
	oxd_change_kind kind;
	uint32_t pos;          /* INPUT, OUTPUT, TYPE, TENSOR: the position; else 0 */
	uint32_t tensor;       /* TENSOR, and ATTRIBUTE of tensor type whose values differ:
	                          index into tensors; else OXP_NONE */
	const oxp_attr *a, *b; /* ATTRIBUTE */
} oxd_change;

typedef struct oxd_node {
	oxd_status status;
	oxd_how how;
	uint32_t a, b;         /* node index in A's / B's dag, OXP_NONE when absent */
	uint32_t first_change, nchanges; /* changes[first_change .. +nchanges) */
	uint32_t mask;         /* bit (1 << kind) for each kind among its changes */
} oxd_node;

typedef enum oxd_tensor_kind {
	OXD_T_INITIALIZER = 0, /* a graph's initializer */
	OXD_T_SPARSE,          /* a sparse initializer (values compared, indices too) */
	OXD_T_ATTRIBUTE        /* a TENSOR attribute, e.g. a Constant's value */
} oxd_tensor_kind;

typedef struct oxd_tensor {
	oxd_status status;
	oxd_how how;
	oxd_tensor_kind kind;
	const oxp_tensor *a, *b;  /* NULL when absent */
	uint32_t scope_a, scope_b;/* initializers: their scopes; OXP_NONE when absent */
	uint32_t node;            /* ATTRIBUTE: the node record (index into nodes) */
	const oxp_attr *attr_b;   /* ATTRIBUTE: the attribute (B's) */
	bool dtype_changed, shape_changed;
	bool compared;            /* values were compared: the figures below hold */
	const char *not_compared; /* why they were not (pair with different counts, external
	                             data without its folder, ...), else NULL */
	uint64_t elements;        /* elements compared */
	uint64_t changed;         /* elements whose stored bits (same dtype) or values
	                             (different dtypes) differ */
	double max_abs;           /* max |b - a| over elements where both are finite */
	double max_rel;           /* max |b - a| / |a| over those with a != 0 */
	uint64_t nonfinite;       /* elements where a and b differ and one is NaN or ±Inf */
} oxd_tensor;

/* A graph input or output of the main graphs. */
typedef struct oxd_value {
	oxd_status status;
	bool output;              /* graph output, else graph input */
	uint32_t a, b;            /* value index in A's / B's dag, OXP_NONE when absent */
} oxd_value;

/* A model-level field that differs: "ir_version", "producer_name", "opset_import"
 * (key: the domain), "metadata_props" (key: the key), ...  Texts are display text (valid
 * UTF-8), NULL when the side does not have it. */
typedef struct oxd_field {
	const char *name;
	const char *key;          /* NULL for plain fields */
	const char *a, *b;
} oxd_field;

typedef struct oxd_function {
	oxd_status status;        /* SAME / CHANGED (a node of it differs) / ADDED / REMOVED */
	uint32_t a, b;            /* index in the model's functions, OXP_NONE when absent */
} oxd_function;

typedef struct oxd_summary {
	uint32_t added, removed, changed, unchanged;       /* nodes, every scope */
	uint32_t tensors_added, tensors_removed, tensors_changed, tensors_unchanged;
	uint32_t values_added, values_removed, values_changed;
	uint32_t functions_added, functions_removed, functions_changed;
	uint32_t fields;                                    /* model-level fields differing */
	bool same;                                          /* nothing differs */
} oxd_summary;

typedef struct oxd_view {
	uint32_t nnodes;
	const oxd_node *nodes;    /* B's nodes in B's dag order, then A's removed ones */
	const uint32_t *of_a;     /* per node of A's dag: its record in nodes */
	const uint32_t *of_b;     /* per node of B's dag: its record in nodes */
	uint32_t nchanges;
	const oxd_change *changes;
	uint32_t ntensors;
	const oxd_tensor *tensors;/* every tensor, same ones included */
	uint32_t nvalues;
	const oxd_value *values;
	uint32_t nfields;
	const oxd_field *fields;
	uint32_t nfunctions;
	const oxd_function *functions;
	oxd_summary summary;
} oxd_view;

typedef struct oxd_options {
	/* Folders holding A's / B's external data (opened O_PATH|O_DIRECTORY by the caller,
	 * not closed here); -1: external tensors are compared by their location, offset and
	 * length only, and say so. */
	int dirfd_a, dirfd_b;
} oxd_options;

void oxd_options_default(oxd_options *o);

typedef struct oxd_diff oxd_diff; /* opaque owner */

/* Compare A (the old model) with B (the new one).  Fails only on resources; every
 * difference of the models, however odd, is a result.  opt may be NULL (defaults). */
oxd_code oxd_diff_build(oxd_diff **out, const oxp_model *a, const oxp_dag *da,
                        const oxp_model *b, const oxp_dag *db, const oxd_options *opt,
                        oxd_error *err);
void oxd_free(oxd_diff *d);
const oxd_view *oxd_get(const oxd_diff *d);

/* The JSON document onnxviz.diff/1 (docs/diff.md, docs/diff.schema.json), compact, into
 * *out (malloc'd, NUL-terminated; the caller frees it). */
oxd_code oxd_json(const oxd_diff *d, char **out, size_t *len, oxd_error *err);

/* Display text (valid UTF-8, no control characters, at most max_chars characters, an
 * ellipsis marking a cut) of model bytes, in the diff's arena ("" when out of memory). */
const char *oxd_text(oxd_diff *d, oxp_str s, size_t max_chars);
/* One line about a tensor pair for people: "1 of 9,408 elements changed, max |Δ| 0.5",
 * "f32 → f16, max |Δ| 0.00049", "64×3×7×7 → 64×3×5×5", "added", ... into buf. */
char *oxd_tensor_line(const oxd_tensor *t, char *buf, size_t size);
/* The name of a tensor record: the initializer's (B's, else A's), or for attribute
 * tensors the node's first output name (a Constant's value) / "<node>.<attribute>". */
oxp_str oxd_tensor_name(const oxd_diff *d, const oxd_tensor *t);

#ifdef __cplusplus
}
#endif
#endif /* OXD_H */
