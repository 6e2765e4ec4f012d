/*
 * oxr.h — onnxviz render: the one public header of render/.
 *
 * Turns a parsed, linked model (parser/oxp.h) into what people look at:
 *   - the JSON document describing the model completely (doc.c, jansson);
 *   - one node in full, and search results (doc.c);
 *   - the graph laid out by Graphviz's dot: SVG, DOT, or the layout as JSON (layout.c,
 *     svg.c), with the large-graph hierarchy (hier.c);
 *   - the same, run in a worker process with CPU / memory / wall-clock limits (worker.c),
 *     which is how the service calls it: Graphviz may exit() or run for hours on a crafted
 *     graph, and it is not thread-safe.
 * Names start with oxr_ / OXR_.  Functions return 0 on success or an oxr_code and fill an
 * oxr_error when given.  Output goes into an oxr_buf, a growable buffer with a hard cap.
 */
#ifndef OXR_H
#define OXR_H

#include "parser/oxp.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum oxr_code {
	OXR_OK = 0,
	OXR_E_OPTION,     /* a render option is unknown or has a bad value */
	OXR_E_TOO_BIG,    /* the output (or graph) exceeds its cap */
	OXR_E_NOMEM,      /* out of memory */
	OXR_E_LAYOUT,     /* Graphviz failed */
	OXR_E_TIMEOUT,    /* the layout worker ran out of wall-clock or CPU time: killed */
	OXR_E_WORKER,     /* the layout worker crashed or hit its memory limit */
	OXR_E_NOT_FOUND,  /* node / scope / tensor id unknown */
	OXR_E_MODEL,      /* the model could not be parsed or linked (message says why) */
	OXR_E_IO,
	OXR_E_OVERLAY,    /* an overlay file (profile, node data, CSV) is malformed: the message
	                     names the line or JSON path */
	OXR_E__COUNT
} oxr_code;

typedef struct oxr_error {
	oxr_code code;
	char message[512];
} oxr_error;

const char *oxr_code_name(oxr_code code); /* stable: "bad_option", "timeout", ... */

/* ---------------------------------------------------------------------------------------
 * Bounded output buffer (curl's dynbuf habit: every buffer has a maximum; a failed append
 * frees nothing the caller still holds but leaves the buffer marked failed).
 */
typedef struct oxr_buf {
	char *data;   /* NUL-terminated when len > 0 */
	size_t len;
	size_t cap;
	size_t max;   /* hard cap on len; 0 = 1 GiB */
	bool failed;  /* an append hit the cap or malloc failed */
} oxr_buf;

void oxr_buf_init(oxr_buf *b, size_t max);
bool oxr_buf_append(oxr_buf *b, const void *data, size_t len);
bool oxr_buf_printf(oxr_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void oxr_buf_free(oxr_buf *b);
/* Append s escaped as XML (and HTML) text or attribute value: & < > " ' as entities. */
void oxr_buf_xml(oxr_buf *b, const char *s);
/* Hand the data over (caller frees with free()); the buffer is reset. */
char *oxr_buf_steal(oxr_buf *b, size_t *len);
/* Append s[0..n) as a quoted JSON string: control characters escaped, invalid UTF-8
 * bytes replaced by U+FFFD.  False when the buffer failed. */
bool oxr_json_string(oxr_buf *b, const char *s, size_t n);

/* ---------------------------------------------------------------------------------------
 * Options, the same for the HTTP service (query parameters) and the CLI (--key=value).
 */
typedef enum { OXR_INIT_FOLD = 0, OXR_INIT_NODES, OXR_INIT_HIDE } oxr_init_mode;
enum { OXR_GROUP_AUTO = -1, OXR_GROUP_NONE = 0 }; /* or N > 0: group by name scope depth N */

#define OXR_EXPAND_MAX 1024
#define OXR_UNFOLD_MAX 512
/* Room for oxr_options_key()'s text with the longest lists. */
#define OXR_DIMS_MAX 512
#define OXR_HIDE_MAX 512  /* hide=: the list's text */
#define OXR_HIDE_OPS 32   /* hide=: most op types in it */
#define OXR_OPTIONS_KEY_MAX (OXR_EXPAND_MAX + OXR_UNFOLD_MAX + OXR_DIMS_MAX + OXR_HIDE_MAX + 256)

typedef struct oxr_options {
	bool rankdir_lr;        /* rankdir: TB (default) or LR */
	oxr_init_mode initializers; /* initializers: fold (default) | nodes | hide */
	bool subgraphs_expand;  /* subgraphs: collapse (default) | expand */
	int group;              /* group: auto (default) | none | 1..16 */
	char expand[OXR_EXPAND_MAX]; /* expand: comma-separated scope paths, or "*" for all */
	int expand_depth;       /* depth: expand all scopes down to this depth (0 = none) */
	bool shapes;            /* shapes: on (default) | off */
	int attrs;              /* attrs: 0 none | 1 key (default) | 2 all */
	bool arith_nodes;       /* arith: fold (default: bookkeeping nodes become rows of
	                           their consumers) | nodes (boxes, as constants allow) */
	char unfold[OXR_UNFOLD_MAX]; /* unfold: comma-separated node ids whose folded chains
	                                are drawn as boxes */
	bool quant_nodes;       /* quant: fold (default: one box per quantized op) | nodes */
	char dims[OXR_DIMS_MAX];/* dims: "batch:1,sequence_length:128" binds named dims in the
	                           MAC rows (oxp_cost_bind_parse); "" leaves them symbols */
	bool io_nodes;          /* io: fold (default: families of numbered graph inputs and
	                           outputs as one terminal, or rows of their only consumer /
	                           producer) | nodes (one terminal each) */
	bool patterns_nodes;    /* patterns: fold (default: a recognised LayerNorm, Gelu, ...
	                           is one box of that op) | nodes; unfold= opens one */
	char hide[OXR_HIDE_MAX];/* hide: op types whose nodes are not drawn, their inputs
	                           bridged to their consumers ("Constant,Identity"; kept sorted
	                           and without repeats: one cache key per set); "" none */
	bool theme_dark;        /* theme: light (default) | dark: the SVG's palette (style.c;
	                           the layout is the same); DOT and JSON do not change */
} oxr_options;

void oxr_options_default(oxr_options *o);
/* Set one option from its text form, e.g. ("rankdir", "LR").  OXR_E_OPTION with a message
 * naming the option and the accepted values when bad. */
oxr_code oxr_options_set(oxr_options *o, const char *key, const char *value, oxr_error *err);
/* Canonical text of the options ("rankdir=TB&initializers=fold&..."), stable across
 * versions of the same build: used as the cache key together with the model id. */
void oxr_options_key(const oxr_options *o, char *buf, size_t size);
/* The option names, NULL-terminated (for --help and OpenAPI). */
extern const char *const oxr_option_names[];

/* ---------------------------------------------------------------------------------------
 * JSON documents (jansson).  All strings from the model are emitted as valid UTF-8 JSON
 * (invalid bytes shown as U+FFFD, with a "<key>_hex" sibling holding the exact bytes).
 */
typedef enum {
	OXR_DOC_FULL = 0,   /* the whole document: model, graphs, nodes, edges, ... */
	OXR_DOC_SUMMARY     /* model metadata + summary + warnings only */
} oxr_doc_kind;

oxr_code oxr_doc_json(const oxp_model *m, const oxp_dag *d, oxr_doc_kind kind, oxr_buf *out,
                      oxr_error *err);
/* The cost document (onnxviz.cost/1, docs/api.md "Cost"): parser/cost.c's figures per
 * node, scope, op type and in total; dims may be NULL. */
oxr_code oxr_cost_json(const oxp_model *m, const oxp_dag *d, const oxp_cost_bind *dims,
                       oxr_buf *out, oxr_error *err);
/* One node in full: attributes, inputs/outputs with types and shapes, folded initializers,
 * subgraph scopes. */
oxr_code oxr_node_json(const oxp_model *m, const oxp_dag *d, const char *node_id,
                       oxr_buf *out, oxr_error *err);
/* Search node names, op types, value names and attribute values (case-insensitive
 * substring); at most limit hits. */
oxr_code oxr_search_json(const oxp_model *m, const oxp_dag *d, const char *query,
                         size_t limit, oxr_buf *out, oxr_error *err);

/* The model check (parser's oxp_check_run) as JSON: {"format","ok","errors","warnings",
 * "infos","by_code","problems":[{"severity","code","node","node_name","op_type","domain",
 * "scope","value","message"}],"truncated"}, at most max_problems listed (docs/check.md).
 * data_dirfd: where external data files are (-1: they are not checked). */
oxr_code oxr_check_json(const oxp_model *m, const oxp_dag *d, int data_dirfd,
                        size_t max_problems, oxr_buf *out, oxr_error *err);

/* ---------------------------------------------------------------------------------------
 * Rendering
 */
typedef enum {
	OXR_FMT_SVG = 0,
	OXR_FMT_DOT,
	OXR_FMT_LAYOUT_JSON /* node boxes and edge splines as JSON */
} oxr_format;

const char *oxr_format_ext(oxr_format f); /* "svg", "dot", "json" */

/* In-process rendering (CLI, tests, and the worker process).  Not thread-safe: Graphviz
 * is not; callers serialise. */
oxr_code oxr_render(const oxp_model *m, const oxp_dag *d, const oxr_options *o,
                    oxr_format fmt, oxr_buf *out, oxr_error *err);

/* ---------------------------------------------------------------------------------------
 * Raster images (raster.c, card.c; docs/render.md "PNG"): our own SVG drawn into pixels
 * by librsvg with cairo, loaded when first needed (oxr_dlopen) as Graphviz is.  The size
 * is settled before anything is allocated: the drawing is fitted inside w x h CSS pixels
 * (a side given as 0 is free; neither given: its own size), times the device pixel ratio
 * `scale`; past max_pixels (or OXR_RASTER_SIDE_MAX on a side) it is scaled down to fit,
 * unless the request's own numbers asked for that much (w x h x scale^2 over the budget,
 * or a scale above 1 taking the drawing over it): then OXR_E_TOO_BIG with the numbers.
 */
typedef enum {
	OXR_THEME_LIGHT = 0, /* the SVG's own colours on white */
	OXR_THEME_DARK,      /* the SVG's dark palette (theme=dark) on its dark page */
	OXR_THEME__COUNT     /* a theme is one row of raster.c's table (and its palette) */
} oxr_theme;

#define OXR_RASTER_SIDE_MAX 32767u          /* cairo's image surfaces: pixels on a side */
#define OXR_RASTER_MAX_PIXELS 64000000u     /* --max-pixels' default */
#define OXR_RASTER_SCALE_MIN 100u           /* scale in hundredths: 1.00 .. 4.00 */
#define OXR_RASTER_SCALE_MAX 400u
#define OXR_CARD_W 1200u                    /* a card: the Open Graph image size */
#define OXR_CARD_H 630u
#define OXR_RASTER_KEY_MAX 96

typedef struct oxr_raster {
	uint32_t w, h;        /* w, h: the box the drawing is fitted in, CSS px; 0: free */
	uint32_t scale;       /* device pixel ratio in hundredths (100..400) */
	uint8_t theme;        /* oxr_theme */
	uint64_t max_pixels;  /* the budget (width x height of the image) */
} oxr_raster;

void oxr_raster_default(oxr_raster *r);
/* One raster option from its text form: "w", "h" (1..OXR_RASTER_SIDE_MAX), "scale" (a
 * decimal 1..4, at most two places), "theme" ("light").  OXR_E_OPTION naming the option
 * and what it accepts (never the value given) when bad; -1 when key is not a raster
 * option (nothing set), else OXR_OK. */
int oxr_raster_set(oxr_raster *r, const char *key, const char *value, oxr_error *err);
/* Canonical text ("w=1200&h=0&scale=100&theme=light&max=64000000"): the cache key's part
 * and what the layout worker is told (oxr_raster_parse reads it back). */
void oxr_raster_key(const oxr_raster *r, char *buf, size_t size);
oxr_code oxr_raster_parse(oxr_raster *r, const char *key, oxr_error *err);
const char *oxr_theme_name(uint8_t theme);
/* The image size in pixels for a drawing of dw x dh CSS px under r: OXR_OK with *pw, *ph
 * (each >= 1), or OXR_E_TOO_BIG naming the numbers asked for.  *clamped: scaled down to
 * the budget. */
oxr_code oxr_raster_size(const oxr_raster *r, double dw, double dh, uint32_t *pw,
                         uint32_t *ph, bool *clamped, oxr_error *err);
/* The SVG text svg[0..len) as PNG into out.  OXR_E_LAYOUT when librsvg cannot be loaded
 * or refuses the SVG, OXR_E_NOMEM when the pixels cannot be allocated. */
oxr_code oxr_raster_png(const char *svg, size_t len, const oxr_raster *r, oxr_buf *out,
                        oxr_error *err);
/* The model's card (OXR_CARD_W x OXR_CARD_H times r->scale; r->w and r->h are not used):
 * its overview fitted in, its name, nodes, parameters and MACs.  title: the name it was
 * uploaded under (untrusted: used when valid UTF-8 of at most OXR_CARD_TITLE_MAX bytes
 * without control characters, else ignored), the main graph's name below it when that
 * differs; NULL or "": the main graph's name.  The title drawn is also the PNG's "Title"
 * (an iTXt chunk). */
#define OXR_CARD_TITLE_MAX 255
oxr_code oxr_card_png(const oxp_model *m, const oxp_dag *d, const char *title,
                      const oxr_raster *r, oxr_buf *out, oxr_error *err);

/* ---------------------------------------------------------------------------------------
 * Overlays (render/overlay.c): marks drawn over a rendering of one model, given by the
 * caller and knowing nothing of where they come from (the service draws what changed
 * between two models with it).  Per node of the drawn model a mark (its box is outlined
 * and tinted: added green, changed amber; unmarked boxes are dimmed), the rows to
 * highlight (op type, name, attributes by name, folded inputs by position) and extra text
 * rows; "ghost" nodes of another model (nodes the drawn one does not have) drawn as
 * dashed red boxes next to the nodes they connect to.  Name scopes holding a node with
 * OXR_OV_KEEP stay open whatever the grouping, so the rest collapses around them; a
 * folded node's mark shows on the boxes it is folded into.
 */
typedef enum {
	OXR_MARK_NONE = 0, /* not marked (terminals, stubs; a node the overlay does not know) */
	OXR_MARK_SAME,     /* drawn dimmed */
	OXR_MARK_ADDED,
	OXR_MARK_CHANGED,
	OXR_MARK_REMOVED   /* ghosts */
} oxr_mark;

enum {
	OXR_OV_KEEP = 1,   /* keep the name scopes holding this node open */
	OXR_OV_OP = 2,     /* highlight the op type row */
	OXR_OV_NAME = 4    /* highlight the name row */
};

typedef struct oxr_overlay_node {
	uint8_t mark;             /* oxr_mark */
	uint8_t flags;            /* OXR_OV_* */
	uint64_t inputs;          /* inputs (positions below 64) whose folded rows to highlight */
	uint32_t nattrs;
	const oxp_str *attrs;     /* attributes whose rows to highlight */
	uint32_t nnotes;
	const char *const *notes; /* extra rows (UTF-8 text), highlighted */
} oxr_overlay_node;

/* An edge touching a ghost: OXR_GHOST(k) is ghost k, any other value a node of the drawn
 * model. */
#define OXR_GHOST(k) (0x80000000u | (uint32_t)(k))
typedef struct oxr_ghost_edge {
	uint32_t from, to;
} oxr_ghost_edge;

typedef struct oxr_overlay {
	const oxr_overlay_node *nodes;  /* one per node of the drawn model's dag */
	const oxp_model *other;         /* the model ghosts come from (its dag below) */
	const oxp_dag *other_dag;
	uint32_t nghosts;
	const uint32_t *ghosts;         /* nodes of other_dag drawn as ghosts */
	uint32_t nghost_edges;
	const oxr_ghost_edge *ghost_edges;
	const char *legend;             /* a caption under the drawing, or NULL */
	const struct oxr_heat *heat;    /* per-node figures drawn as heat (render/heat_draw.c), or
	                                   NULL; nodes may then be NULL */
	uint32_t heat_metric;           /* which of heat's metrics */
	uint8_t heat_scale;             /* oxr_heat_scale */
} oxr_overlay;

/* oxr_render with an overlay (NULL: exactly oxr_render). */
oxr_code oxr_render_overlay(const oxp_model *m, const oxp_dag *d, const oxr_options *o,
                            const oxr_overlay *ov, oxr_format fmt, oxr_buf *out,
                            oxr_error *err);

/* ---------------------------------------------------------------------------------------
 * Heat (render/heat_*.c, docs/overlays.md): per-node figures from a file, attributed to the
 * nodes of one model and drawn as box fills.  Inputs, told apart by content: an ONNX
 * Runtime profile (Chrome trace JSON, one or more runs; several files are several
 * inputs), Model Explorer node data, a Netron attachment ("netron:attachment") and CSV
 * `node,metric[,metric...]` with a header.  Names are matched to the model's nodes by node
 * name, then by the value names optimized and fused nodes carry, then (when given) through
 * ORT's saved optimized model.  What matches nothing is listed with its share.
 */
#define OXR_HEAT_MAX_BYTES ((size_t)64 << 20) /* one input */
#define OXR_HEAT_MAX_INPUTS 64
#define OXR_HEAT_MAX_METRICS 32
#define OXR_HEAT_MAX_ENTRIES 2000000u
/* Unmatched names listed in an overlay's table, the largest (all are counted). */
#define OXR_HEAT_UNMATCHED_LISTED 1000

typedef enum { OXR_HEAT_LINEAR = 0, OXR_HEAT_LOG, OXR_HEAT_THRESHOLDS } oxr_heat_scale;
/* "linear" | "log" | "thresholds"; false when unknown */
bool oxr_heat_scale_parse(const char *text, uint8_t *out);
/* The characters of a metric name onnxviz makes, and of a provider in one ("dur.total@P"):
 * a name of others is input text (a CSV header) and is escaped where it is written. */
#define OXR_HEAT_NAME_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"

typedef struct oxr_heat_unmatched {
	const char *name;   /* as the input gave it (UTF-8 checked, may be cut) */
	const char *op;     /* the kernel's op type, or NULL */
	double value;       /* of the primary metric (time: the total over runs) */
	double share;       /* of the input's total, 0..1 */
} oxr_heat_unmatched;

/* How a node got its figures (oxr_heat.matched_by: a bit per way; docs/overlays.md). */
enum {
	OXR_HEAT_BY_NAME = 1,        /* "name": a node of the entry's name */
	OXR_HEAT_BY_FUSED_NAME = 2,  /* "fusion-name": without ORT's fusion segments, or a
	                                part of a TensorRT layer's name */
	OXR_HEAT_BY_OPTIMIZED = 4,   /* "optimized-model": through ORT's optimized model */
	OXR_HEAT_BY_VALUE = 8,       /* "value": the producer of a value of that name */
	OXR_HEAT_BY_SHAPES = 16,     /* "op-shapes-order": a name nothing matches, given to the
	                                one node or named pattern of its op type and shapes
	                                between its matched neighbours in execution order */
	OXR_HEAT_BY_NEIGHBOUR = 32,  /* "neighbour": a Reshape, Transpose or reorder nothing
	                                matches, given to the adjacent kernel it exchanges a
	                                value of a shape the model does not have with */
	OXR_HEAT_BY__COUNT = 6
};
/* "name", "fusion-name", ... for one bit; NULL otherwise */
const char *oxr_heat_how_name(unsigned bit);

/* A kernel matched by op type, shapes and order or as a neighbour (listed in the table:
 * each such match says how it was made). */
typedef struct oxr_heat_inferred {
	const char *name;   /* the kernel's name */
	const char *op;
	uint8_t how;        /* OXR_HEAT_BY_SHAPES or OXR_HEAT_BY_NEIGHBOUR */
	uint32_t node;      /* the anchor it was given to */
	uint32_t size;      /* nodes covered */
	const uint32_t *group; /* those nodes, the anchor first */
	double value;       /* its time, us over all runs */
} oxr_heat_inferred;

typedef struct oxr_heat_provider {
	const char *name;
	double total;       /* kernel time, us, over all runs */
} oxr_heat_provider;

typedef struct oxr_heat {
	const char *format;          /* "ort-profile", "tensorrt-profile", "tensorrt-layers",
	                                "openvino-counters", "model-explorer", "netron", "csv",
	                                "cost" */
	uint32_t nmetrics;
	const char *const *metrics;  /* "dur.mean", "dur.p50", "dur.p90", "dur.total", "macs" */
	const char *const *units;    /* "us", "MACs", "bytes", "" */
	const bool *sums;            /* groups and stacks add it up (time, MACs, params, bytes);
	                                else they show the largest */
	uint32_t primary;            /* the metric drawn when none is asked for */
	uint32_t nnodes;             /* the dag's nodes */
	const double *values;        /* nnodes x nmetrics, NaN: no value */
	const uint32_t *fused;       /* per node: the anchor node of the fused kernel it was
	                                covered by, else OXP_NONE */
	const uint32_t *fused_size;  /* per node: nodes in that fused group (0 when none) */
	const uint8_t *matched_by;   /* per node: OXR_HEAT_BY_* bits of what gave it figures */
	const char *const *detail;   /* per node: OpenVINO's execution type ("jit_avx2_FP32",
	                                its precision last), NULL when none; or NULL */
	uint32_t ninferred;          /* kernels matched by shapes and order or as neighbours */
	uint32_t ninferred_listed;   /* of those, in `inferred` (at most
	                                OXR_HEAT_UNMATCHED_LISTED), largest first */
	const oxr_heat_inferred *inferred;
	uint32_t runs;               /* profile runs (1 for other inputs) */
	uint32_t nentries;           /* distinct names in the input(s) */
	uint32_t nmatched;
	uint32_t nunmatched;         /* names that matched no node */
	uint32_t nunmatched_listed;  /* of those, the largest in `unmatched` (at most
	                                OXR_HEAT_UNMATCHED_LISTED) */
	const oxr_heat_unmatched *unmatched; /* largest first */
	double total;                /* of the primary sum metric over the input (time: us) */
	double attributed;           /* the part given to nodes: coverage = attributed / total */
	uint32_t nproviders;
	const oxr_heat_provider *providers;
	uint32_t nthresholds;        /* Model Explorer's thresholds (ascending), else 0 */
	const double *thresholds;
	/* two overlays compared (oxr_heat_compare): metrics diff (B - A), ratio (B / A), a, b */
	const uint8_t *side;         /* per node: 1 only in A, 2 only in B, 3 both, 0 neither;
	                                NULL when this is no comparison */
	const char *compare_sources[2]; /* A's and B's formats */
	const char *compare_metric;  /* the metric compared (A's name) */
	double compare_sums[2];      /* its sums over the nodes of A and of B */
	uint32_t compare_only[2];    /* nodes only in A, only in B */
	struct oxp_arena *arena;     /* everything above lives here */
} oxr_heat;

typedef struct oxr_heat_input {
	const char *data;
	size_t len;
	const char *name;            /* for messages ("profile.json"), may be NULL */
} oxr_heat_input;

/* Parse the inputs (all of one format) and attribute them to dag d's nodes.  optimized:
 * ORT's saved optimized model (its dag), or NULL.  OXR_E_OVERLAY with a message naming
 * the input, line or JSON path when an input is malformed or beyond the bounds. */
oxr_code oxr_heat_build(const oxr_heat_input *in, uint32_t nin, const oxp_dag *d,
                        const oxp_dag *optimized, oxr_heat **out, oxr_error *err);
/* The built-in overlay "cost": macs, flops, params, bytes (activations read + written),
 * from parser/cost.c (dims that stay symbols count as 1). */
oxr_code oxr_heat_cost(const oxp_dag *d, oxr_heat **out, oxr_error *err);
void oxr_heat_free(oxr_heat *h);
/* A comparison of metric ma of a with metric mb of b (one unit, one model): its own
 * overlay (metrics "diff", "ratio", "a", "b"; side per node), drawn on a diverging scale.
 * OXR_E_OVERLAY when they do not fit. */
oxr_code oxr_heat_compare(const oxr_heat *a, uint32_t ma, const oxr_heat *b, uint32_t mb,
                          oxr_heat **out, oxr_error *err);
/* Index of a metric by name ("dur.mean"; also "mean" for "dur.mean"), -1 when unknown. */
int oxr_heat_metric(const oxr_heat *h, const char *name);
/* The attributed table as JSON (onnxviz.overlay/1, docs/overlays.md): format, metrics,
 * runs, coverage, providers, nodes (largest first, at most max_nodes; 0: all), unmatched. */
oxr_code oxr_heat_table_json(const oxr_heat *h, const oxp_dag *d, uint32_t metric,
                             uint32_t max_nodes, oxr_buf *out, oxr_error *err);
/* "1.29 ms", "231 M", "4.1 MB", "0.25": a metric's value as text. */
void oxr_heat_format(const oxr_heat *h, uint32_t metric, double value, char *buf, size_t size);

typedef struct oxr_worker_limits {
	unsigned cpu_seconds;  /* RLIMIT_CPU of the worker */
	size_t memory_bytes;   /* RLIMIT_AS of the worker */
	unsigned wall_ms;      /* killed (SIGKILL) after this */
	size_t max_output;     /* bytes of output accepted */
} oxr_worker_limits;

void oxr_worker_limits_default(oxr_worker_limits *l);

/* Render the model stored at model_path in a separate process (exe is the path of the
 * onnxviz binary, which must handle `onnxviz __render`, see oxr_worker_main).  Blocks
 * until the worker is done or killed.  Safe to call from several threads. */
oxr_code oxr_render_isolated(const char *exe, const char *model_path, const oxr_options *o,
                             oxr_format fmt, const oxr_worker_limits *lim, oxr_buf *out,
                             oxr_error *err);

/* Renderings of a model against another one (what the service draws a diff or a heat
 * overlay with) run in the same worker process with the same limits: the worker, started
 * with two models, calls the pair function the program registered (oxr_worker_main_pair),
 * which writes what `fmt` names ("svg", "dot", "json", ... the pair function decides)
 * into out.  A model is its path and the folder of its external data ("" when it has
 * none); args are the pair function's own arguments (NULL or a NULL-terminated list of
 * at most OXR_PAIR_ARGS_MAX strings, e.g. a heat drawing's scale and metric), passed
 * through to it one by one. */
#define OXR_PAIR_ARGS_MAX 6
typedef struct oxr_model_files {
	const char *path;
	const char *data_dir;
} oxr_model_files;

typedef oxr_code (*oxr_pair_fn)(const oxr_model_files *model, const oxr_model_files *other,
                                const char *fmt, const char *const *args,
                                const oxr_options *o, oxr_buf *out, oxr_error *err);

oxr_code oxr_render_isolated_pair(const char *exe, const oxr_model_files *model,
                                  const oxr_model_files *other, const char *fmt,
                                  const char *const *args, const oxr_options *o,
                                  const oxr_worker_limits *lim, oxr_buf *out,
                                  oxr_error *err);

/* A PNG (oxr_raster_png of the drawing) or, with card, the model's card (oxr_card_png,
 * titled title when not NULL) drawn by the worker: the same process, limits and protocol,
 * and while it draws its address space is capped further by what r's pixel budget needs
 * (worker.c). */
oxr_code oxr_render_isolated_raster(const char *exe, const char *model_path,
                                    const oxr_options *o, bool card, const char *title,
                                    const oxr_raster *r,
                                    const oxr_worker_limits *lim, oxr_buf *out,
                                    oxr_error *err);
/* The format a pair rendering is asked for to come back as PNG: base ("svg", "heat-svg")
 * with its "svg" made "png" and r's key after a '?' ("heat-png?w=..."); the worker draws
 * base, then rasterizes it.  False when base does not end in "svg" or buf is short. */
bool oxr_raster_format(const char *base, const oxr_raster *r, char *buf, size_t size);

/* A child process under limits, the one mechanism behind the layout worker and any other
 * computation that must not take its caller down.  With fn == NULL: `exe argv...` after
 * exec (its stdout is collected, the first line of its stderr kept in res->err).  With fn:
 * a forked copy of the caller runs fn(ctx, out_fd) and exits; fn may only use memory, the
 * descriptors in keep[0..nkeep) (at most OXR_CHILD_KEEP_MAX; -1 entries are skipped) and
 * the allocator (other threads' locks do not come along).  Every other descriptor is
 * closed in the child before fn runs: a copy holding another request's pipe, a client's
 * socket or the listening socket would keep them open until it ended.
 * Limits: RLIMIT_CPU, RLIMIT_AS (for fn: memory_bytes beyond the caller's address
 * space), the wall-clock deadline (then SIGKILL) and max_output.  Returns OXR_OK once the
 * child has ended, however it ended (res says how); OXR_E_IO when it could not start. */
typedef struct oxr_child_result {
	bool timed_out;  /* past the wall-clock deadline: killed */
	bool too_big;    /* more output than max_output: killed */
	int signal;      /* the signal that ended it, 0 when it exited (or was killed by us) */
	int exit_code;   /* its exit code when it exited, else -1 */
	char err[1024];  /* exec: the first line of its stderr */
} oxr_child_result;

typedef void (*oxr_child_fn)(void *ctx, int out_fd);

#define OXR_CHILD_KEEP_MAX 4
oxr_code oxr_child_run(const char *exe, char *const argv[], oxr_child_fn fn, void *ctx,
                       const int *keep, size_t nkeep, const oxr_worker_limits *lim,
                       oxr_buf *out, oxr_child_result *res, oxr_error *err);

/* Entry point of the worker process: argv as passed by oxr_render_isolated (or _pair,
 * which needs pair != NULL).  Returns the process exit code. */
int oxr_worker_main(int argc, char **argv);
int oxr_worker_main_pair(int argc, char **argv, oxr_pair_fn pair);

/* ---------------------------------------------------------------------------------------
 * Libraries loaded when first needed (dlopen.c)
 *
 * Graphviz (render/layout.c), libcurl and libcrypto (store/), libmicrohttpd (service/)
 * are loaded by the first call that needs them rather than linked, so that a CLI command
 * that draws nothing and stores nothing does not map their libraries at every start.
 * Each user keeps a union of its functions' struct and an array of slots, filled by
 * oxr_dlopen from an X-macro list of names.
 */
/* Names a library loaded with dlopen in the binary's .note.dlopen section (the ELF dlopen
 * metadata of systemd.io/ELF_DLOPEN_METADATA: owner "FDO", type 0x407c0c0a, a JSON array),
 * so that tools — the image check (tests/docker/run.sh) — see it as a dependency. */
#define OXR_DLOPEN_JSON(feature, description, soname)                                     \
	"[{\"soname\":[\"" soname "\"],\"feature\":\"" feature "\",\"description\":\"" \
	description "\",\"priority\":\"required\"}]"
#define OXR_DLOPEN_NOTE(var, feature, description, soname)                                \
	__attribute__((used, section(".note.dlopen"), aligned(4))) static const struct {      \
		uint32_t namesz, descsz, type;                                               \
		char name[4];                                                                \
		char desc[(sizeof(OXR_DLOPEN_JSON(feature, description, soname)) + 3) & ~3u];  \
	} var##_dlopen_note = {4, sizeof(OXR_DLOPEN_JSON(feature, description, soname)),    \
	                       0x407c0c0a, "FDO", OXR_DLOPEN_JSON(feature, description, soname)}

/* Open soname (dlopen, RTLD_NOW | RTLD_LOCAL) and look up prefix + names[i] into slots[i]
 * for i < n.  False with the reason in err. */
bool oxr_dlopen(const char *soname, const char *prefix, const char *const *names, void **slots,
                size_t n, char *err, size_t errsize);
/* Whether err, from an oxr_dlopen that failed, says the loader ran out of memory (a
 * library that could not be mapped): the caller's out of memory, not its layout error. */
bool oxr_dlopen_nomem(const char *err);
/* For a loader's X-macro list of functions: their names, and their count. */
#define OXR_DLOPEN_NAME(name) #name,
#define OXR_DLOPEN_SLOT(name) +1

#ifdef __cplusplus
}
#endif
#endif /* OXR_H */
