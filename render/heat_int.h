/*
 * heat_int.h — what the files of heat overlays share (render/heat_*.c; oxr_heat_*,
 * render/oxr.h; docs/overlays.md).  Each input format is a reader of its own
 * (heat_ort.c, heat_me.c, heat_netron.c, heat_csv.c) behind one interface,
 * oxr__heat_reader: its name, a test of an input's content and a parser into entries
 * (heat_read.c holds the entries and picks the reader).  Attribution (heat_attr.c) maps
 * entries to nodes, heat_build.c makes the table of an input, heat_table.c writes it as
 * JSON and heat_draw.c draws it; none of them knows a format.
 */
#ifndef OXR_HEAT_INT_H
#define OXR_HEAT_INT_H

#include "render/internal.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#define MAX_NAME 4096       /* bytes of a name */
#define MAX_GROUP 64        /* nodes a fused kernel covers */
#define MAX_RUNS 100000u
#define MAX_CELLS ((size_t)64 << 20) /* per-node per-run cells */
#define MAX_ABS 1e300
#define MAX_DUR 1e12        /* us: 11.6 days per kernel call */

/* what a name is: anything (a node, then a value), a node, a value, or a TensorRT layer
 * ("a + b || c input reformatter 0", "{ForeignNode[a...b]}": node names joined) */
enum { KEY_ANY = 0, KEY_NODE, KEY_VALUE, KEY_LAYER };

/* Execution providers of a profile given metrics of their own (docs/overlays.md): the
 * first this many named [A-Za-z0-9._-], two metrics each after the four */
#define HEAT_PROVIDER_METRICS 8
#define SHARED_TEXT 80 /* op types, providers and shapes shorter than this are shared */
#define SHAPE_TEXT 38  /* a kernel's first input's or output's dims as text, at most */

/* ---------------------------------------------------------------------------------------
 * Entries: what the input says, per distinct name
 */
typedef struct heat_entry {
	/* 48 bytes: there may be 2,000,000 of them (docs/decisions.md 85) */
	const char *name; /* arena, NUL-terminated (may hold other bytes: matched as bytes) */
	const char *op, *provider; /* arena; equal strings of consecutive entries shared */
	union {
		double *v;          /* generic inputs: nv metrics, NaN where not given */
		const char *shapes; /* profiles (nv 0): "1x16x64>1x16x64", the kernel's first
		                       input's and output's dims (shared like op), or NULL */
	};
	int64_t total;    /* profiles: us over all runs */
	uint32_t len;     /* of name, at most MAX_NAME */
	uint8_t kind;     /* KEY_* */
	uint8_t nv;       /* v's width: the metrics known when it was made (all of a CSV's
	                     header), else OXR_HEAT_MAX_METRICS once a later metric needs it */
} heat_entry;

typedef struct heat_parse {
	oxp_arena *a;
	oxr_error *err;
	const char *input;  /* its name for messages */
	const char *format;
	heat_entry *e;
	uint32_t n, cap;
	oxp_smap by_name;
	uint32_t nmetrics;
	const char *metrics[OXR_HEAT_MAX_METRICS];
	const char *units[OXR_HEAT_MAX_METRICS]; /* a reader's own metrics' (NULL: "") */
	uint32_t sum_mask;   /* metrics a reader says add up (else by their names) */
	/* the reader's: values spread over a fused group like a profile's time (TensorRT);
	 * a profile's "provider" is an execution type, text per node (OpenVINO) */
	bool spread, exec_detail;
	/* profiles */
	bool profile;
	uint32_t runs;       /* so far (over inputs) */
	int64_t *cells;      /* entry x run, us; cells of an entry are contiguous: runs are
	                        known per input before its kernels are read, so cells are
	                        laid out [entry][run] once all inputs are read (see below) */
	/* kernels are first collected as (entry, run, dur) triples */
	struct {
		uint32_t entry, run;
		int64_t dur;
	} *k;
	size_t nk, capk;
	double thresholds[16];
	uint32_t nthresholds;
	/* profiles: the providers with metrics of their own (dur.mean@P, dur.total@P) */
	const char *pm[HEAT_PROVIDER_METRICS];
	uint32_t npm;
	/* shared_text's: the last op type, provider and shapes, as given and their copies */
	char op_raw[SHARED_TEXT], provider_raw[SHARED_TEXT], shapes_raw[SHARED_TEXT];
	const char *last_op, *last_provider, *last_shapes;
} heat_parse;

/* ---------------------------------------------------------------------------------------
 * Readers (the way curl keeps each TLS backend behind one table): oxr__heat_readers
 * lists them in the order their tests are tried.  An input is text, a JSON array or a
 * JSON object by its first character (after a BOM and white space); a reader of that
 * shape whose sniff says yes parses it.  JSON objects come parsed (jansson, its depth
 * limit) for sniff and parse; arrays and text come as bytes only (a 64 MB profile is no
 * tree).
 */
enum { HEAT_TEXT = 0, HEAT_ARRAY, HEAT_OBJECT };

typedef struct oxr__heat_reader {
	const char *name;    /* the format as the table names it: "ort-profile" */
	const char *noun;    /* for "one format at a time": "an ort-profile input" */
	uint8_t shape;       /* HEAT_TEXT, HEAT_ARRAY or HEAT_OBJECT */
	bool profile;        /* kernel times (entries' totals per run), not named metrics */
	/* true when the input is this format: d[start] is its first character, root its
	 * tree (HEAT_OBJECT), else NULL.  NULL: every input of the shape. */
	bool (*sniff)(const char *d, size_t len, size_t start, const json_t *root);
	/* parses it into p's entries: OXR_OK, or an error set with oxr__heat_bad */
	oxr_code (*parse)(heat_parse *p, const char *d, size_t len, size_t start,
	                  const json_t *root);
} oxr__heat_reader;

extern const oxr__heat_reader oxr__heat_ort_profile, oxr__heat_ort_trace, oxr__heat_me,
    oxr__heat_netron, oxr__heat_csv, oxr__heat_trt_profile, oxr__heat_trt_layers,
    oxr__heat_ov;

/* heat_read.c: entries and errors.  oxr__heat_bad sets p->err to OXR_E_OVERLAY with a
 * message naming the input, made display text; returns that code. */
oxr_code oxr__heat_bad(heat_parse *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
oxr_code oxr__heat_nomem(heat_parse *p);
/* The entry for a name (created when new).  OXP_NONE after setting the error. */
uint32_t oxr__heat_entry_of(heat_parse *p, const char *name, size_t len, uint8_t kind,
                            bool *is_new);
/* The index of a metric by name (added when new), -1 after setting the error. */
int oxr__heat_metric_of(heat_parse *p, const char *name, size_t len);
bool oxr__heat_entry_set(heat_parse *p, uint32_t i, int k, double v);
/* finite and at most MAX_ABS in magnitude */
bool oxr__heat_number_ok(double v);
const char *oxr__heat_shared_text(heat_parse *p, char raw[SHARED_TEXT], const char **last,
                                  const char *s);
/* A profile's kernel: dur us of entry ei in run (of this input, counted by the reader
 * into p->runs), its total kept.  False after setting the error. */
bool oxr__heat_kernel(heat_parse *p, uint32_t ei, uint32_t run, int64_t dur);
/* One input: its reader picked by content, then parsed into p (all inputs one format). */
oxr_code oxr__heat_parse_one(heat_parse *p, const oxr_heat_input *in);

/* heat_scan.c: a JSON scanner for inputs too large for a tree (profiles). */
/* Profiles are read by a scanner of their own, not into a jansson tree: a 10 MB profile is
 * 100,000 events, and the tree of them cost a second.  It reads what it needs (cat, name,
 * dur, ts, args.op_name, args.provider) and steps over the rest, at most 64 levels deep;
 * syntax errors name the line and column, field errors the path ($[12].dur). */
typedef struct heat_scan {
	const char *s;
	size_t n, i;
	heat_parse *p;
} heat_scan;


oxr_code oxr__heat_scan_fail(heat_scan *sc, const char *what);
void oxr__heat_scan_ws(heat_scan *sc);
bool oxr__heat_scan_lit(heat_scan *sc, char c);
/* A string at sc->i (after whitespace), decoded into out (cap bytes, NUL-terminated; *len
 * its full decoded length, which may exceed cap - 1: then out holds the start).  out may
 * be NULL to step over it. */
oxr_code oxr__heat_scan_string(heat_scan *sc, char *out, size_t cap, size_t *len);
/* A number: JSON's grammar only (no nan, inf, hex) */
oxr_code oxr__heat_scan_number(heat_scan *sc, double *out);
/* An object's key and its ':' into key (cap bytes; "" when longer). */
oxr_code oxr__heat_scan_key(heat_scan *sc, char *key, size_t cap);
/* Steps over a value, at most 64 levels deep from depth. */
oxr_code oxr__heat_scan_skip(heat_scan *sc, int depth);

/* ---------------------------------------------------------------------------------------
 * heat_attr.c: entries to nodes
 */
typedef struct heat_attr {
	const oxp_dag_view *dv;
	oxp_smap nodes, values;        /* names in the model: node / value -> index */
	const oxp_dag_view *ov;    /* the optimized model, or NULL */
	oxp_smap onodes, ovalues;
	const oxp_dag *d;
	const oxp_cost *cost;      /* for the spreading weights (computed when first needed), */
	oxp_arena *cost_arena;     /* or NULL */
	bool cost_tried;
	uint32_t *mark;            /* per node: generation last put in a group */
	uint32_t gen;
	bool *owned;               /* per node: an output of it is an output of an optimized
	                              node (by name, or with "_nchwc"); NULL without one */
} heat_attr;

bool oxr__heat_index_dag(const oxp_dag_view *dv, oxp_arena *a, oxp_smap *nodes,
                         oxp_smap *values);
/* The node the first output consumed feeds (a dag's first edge of it), else OXP_NONE */
uint32_t oxr__heat_first_consumer(const oxp_dag_view *dv, uint32_t n);
/* Which nodes of the original graph some optimized node stands for (c->owned). */
bool oxr__heat_mark_owned(heat_attr *c);
/* The nodes entry e covers into g (MAX_GROUP), the anchor first; 0 when none. */
uint32_t oxr__heat_map_entry(heat_attr *c, const heat_entry *e, uint32_t *g, uint8_t *how);
/* dur spread over the group: out[i] for g[i], whole microseconds summing to dur exactly */
void oxr__heat_spread(heat_attr *c, const uint32_t *g, uint32_t n, int64_t dur, int64_t *out);
/* x spread over the group in the same proportions (out[0] the rest) */
void oxr__heat_spread_real(heat_attr *c, const uint32_t *g, uint32_t n, double x, double *out);

/* The nodes each entry covers, all entries' in one array: entry i's are
 * nodes[off[i] .. off[i + 1]).  Most names cover one node or none, so this is about
 * 8 bytes per entry (a fixed MAX_GROUP slots per entry was 256). */
typedef struct heat_groups {
	uint32_t *off;   /* n + 1 */
	uint32_t *nodes;
	size_t len, cap;
	uint8_t *how;    /* per entry: OXR_HEAT_BY_* (0: none) */
} heat_groups;

/* Gives entry `entry` the nodes g[0..n) (the anchor first), matched as `how`. */
typedef oxr_code (*heat_give)(void *ctx, uint32_t entry, const uint32_t *g, uint32_t n,
                              uint8_t how);
/* Matching by op type, shapes and order, then as a neighbour, of the entries of profile
 * p that gs gives no nodes (heat_attr.c says how): seq lists p's entries in execution
 * order.  Calls give for each entry it matches; gs is not changed.  OXR_E_NOMEM (err not
 * set) when memory runs out. */
oxr_code oxr__heat_infer(heat_attr *c, const heat_parse *p, const uint32_t *seq, uint32_t nseq,
                         heat_groups *gs, heat_give give, void *ctx);

#endif
