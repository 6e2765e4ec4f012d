/*
 * schema.h — private to parser/: the layout of the generated operator-schema table
 * (parser/schema_table.c, written by tests/tools/gen_schemas.py; docs/schemas.md).
 *
 * Everything is const data without pointers: strings are offsets into one pool, lists are
 * runs of rows in shared arrays (identical runs are stored once), so the table lives in
 * .rodata, needs no relocation at load and costs nothing at start-up.  The public view
 * of it is oxp.h's oxp_schema_* functions (schema.c).
 */
#ifndef OXP_SCHEMA_H
#define OXP_SCHEMA_H

#include "parser/oxp.h"

#include <stdint.h>

#define OXP__SCH_NDOMAINS 5 /* "", ai.onnx.ml, ai.onnx.preview.training, ai.onnx.preview,
                               com.microsoft (the generator's DOMAINS, in that order) */
#define OXP__SCH_CONTRIB 4  /* index of com.microsoft */
#define OXP__SCH_NO_TC 255  /* a port whose type is written out, not a type parameter */
#define OXP__SCH_INF 0xFFFF /* max inputs/outputs of a variadic op */

typedef struct oxp__sch_domain {
	uint32_t name;   /* string offset ("" for the default domain) */
	uint32_t newest; /* newest opset version the sources describe */
} oxp__sch_domain;

/* Allowed types: bit (1 << dtype) per kind; `other` when maps, sequences of maps or
 * opaque types are allowed too (never checked). */
typedef struct oxp__sch_typeset {
	uint32_t tensor, sequence, optional_tensor, optional_sequence, sparse;
	uint8_t other;
} oxp__sch_typeset;

typedef struct oxp__sch_port {
	uint32_t name;    /* string offset */
	uint16_t typeset; /* allowed types */
	uint8_t tc;       /* index of its type parameter in the version's constraints, or
	                     OXP__SCH_NO_TC */
	uint8_t flags;    /* OXP_PORT_* */
} oxp__sch_port;

typedef struct oxp__sch_attr {
	uint32_t name;
	uint8_t type;     /* oxp_attr_type */
	uint8_t required;
	uint32_t dflt;    /* string offset of the default as a JSON literal, 0 = none */
} oxp__sch_attr;

typedef struct oxp__sch_tc {
	uint32_t name;    /* "T" */
	uint16_t typeset;
} oxp__sch_tc;

/* One version of one operator: what oxp.h's opaque oxp_schema points at. */
struct oxp_schema {
	uint16_t op;      /* index into oxp__sch_ops */
	uint16_t since;
	uint8_t deprecated;
	uint8_t ninputs, noutputs, nattrs, ntcs;
	uint16_t first_input, first_output, first_attr, first_tc;
	uint16_t min_inputs, max_inputs, min_outputs, max_outputs; /* OXP__SCH_INF: unbounded */
};
typedef struct oxp_schema oxp__sch_version;

typedef struct oxp__sch_op {
	uint32_t name;
	uint16_t domain;        /* index into oxp__sch_domains */
	uint16_t first_version; /* versions [first, first + n), oldest first */
	uint16_t nversions;
} oxp__sch_op;

typedef struct oxp__sch_irrow {
	uint16_t ir, onnx, ml, training; /* an IR version and the newest opsets it carries */
} oxp__sch_irrow;

extern const char oxp__sch_strings[];
extern const oxp__sch_domain oxp__sch_domains[OXP__SCH_NDOMAINS];
extern const oxp__sch_typeset oxp__sch_typesets[];
extern const oxp__sch_port oxp__sch_ports[];
extern const oxp__sch_attr oxp__sch_attrs[];
extern const oxp__sch_tc oxp__sch_tcs[];
extern const oxp__sch_version oxp__sch_versions[];
extern const oxp__sch_op oxp__sch_ops[];  /* sorted by (domain, name bytes) */
extern const uint32_t oxp__sch_nops;
extern const oxp__sch_irrow oxp__sch_irtable[];
extern const uint32_t oxp__sch_nirtable;
extern const uint32_t oxp__sch_ir_newest;
extern const uint32_t oxp__sch_nversions;

/* Set every node's opset and schema (graph.c calls it once the scopes are linked). */
void oxp__dag_resolve_schemas(oxp_dag *d);

#endif /* OXP_SCHEMA_H */
