/*
 * internal.h — private to render/: the "view", what gets drawn.
 *
 * Rendering is three steps:
 *   view.c + hier.c   build the view from the linked graph and the options: boxes (ops,
 *                     graph inputs/outputs, tensors, collapsed name scopes, stubs of long
 *                     edges), aggregated edges, clusters (subgraphs, expanded scopes);
 *                     each box's text rows and size (style.c);
 *   layout.c          hand boxes of fixed size and edges to Graphviz's dot (through the
 *                     cgraph API) and read positions and splines back;
 *   svg.c             write SVG / layout JSON from the laid-out view; DOT comes from the
 *                     cgraph graph itself (agwrite).
 * All text in a view is valid UTF-8 without control characters (style.c sanitises model
 * strings); writers still escape for their format.
 */
#ifndef OXR_INTERNAL_H
#define OXR_INTERNAL_H

#include "render/oxr.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum {
	BX_OP = 0,   /* one node (or a Constant when shown) */
	BX_INPUT,    /* graph input (or an undefined value: style "missing") */
	BX_OUTPUT,   /* graph output */
	BX_TENSOR,   /* initializer drawn as a node (initializers=nodes) */
	BX_GROUP,    /* a collapsed name scope */
	BX_STUB_OUT, /* start of long edges of one value: "x →" */
	BX_STUB_IN   /* end of one long edge: "→ x" */
} bx_kind;

typedef enum {
	ROW_HEADER = 0, /* op type, bold, on the family colour */
	ROW_NAME,       /* node name, grey */
	ROW_ATTR,       /* key = value */
	ROW_TENSOR,     /* folded initializer / constant: "W ⟨64×3×7×7⟩ f16" */
	ROW_SUB,        /* subgraph summary / group contents */
	ROW_PLAIN,      /* terminal and stub text */
	ROW_BADGE,      /* a quantized op's precision: "int8 w · u8 act · per-channel" */
	ROW_DEFAULT,    /* an attribute left to its schema default (attrs=all), grey italics */
	ROW__COUNT
} row_style;

/* Drawing sizes (points), shared by the box sizes (style.c), the layout (layout.c) and
 * the SVG (svg.c): text sizes, row heights, padding inside a box, box widths. */
#define OXR_HDR_SIZE 11.0   /* header rows, bold */
#define OXR_ROW_SIZE 9.0    /* other rows */
#define OXR_LABEL_SIZE 8.0  /* edge labels */
#define OXR_CLUSTER_SIZE 10.0 /* cluster labels, bold */
#define OXR_HDR_H 17.0
#define OXR_ROW_H 12.0
#define OXR_PAD_X 8.0
#define OXR_PAD_Y 4.0
#define OXR_CLUSTER_PAD 6.0 /* a cluster label from the cluster's left edge */
#define OXR_MIN_W 40.0
#define OXR_MAX_W 320.0

typedef struct vrow {
	const char *text;
	row_style style;
	uint32_t value;     /* a folded row: the dag value it shows, else OXP_NONE */
	bool chain;         /* ... computed by folded bookkeeping nodes (unfold= opens them) */
	bool mark;          /* highlighted by an overlay */
	bool heat;          /* the heat overlay's value row (heat_draw.c) */
} vrow;

typedef struct vbox {
	bx_kind kind;
	uint8_t family;     /* colour family (style.c) */
	bool missing;       /* BX_INPUT for an undefined value */
	uint32_t node;      /* dag node (BX_OP), else OXP_NONE */
	uint32_t value;     /* dag value (terminals, tensors, stubs), else OXP_NONE */
	uint32_t group;     /* hierarchy item (BX_GROUP, hier.c), else OXP_NONE */
	uint32_t cluster;   /* innermost enclosing cluster, else OXP_NONE */
	uint32_t peer;      /* stubs: the box at the other end of the cut edge */
	const char *id;     /* element id: ASCII [A-Za-z0-9._:-], starts with a letter */
	const char *title;  /* tooltip */
	const char *gpath;  /* BX_GROUP: the expand entry that opens it (data-group) */
	const char *open_all; /* BX_GROUP of a run: the expand entry opening every member */
	uint32_t members;   /* BX_GROUP of a run or range: scopes it stands for */
	const char *values; /* a family of inputs/outputs (family.c): its members' value
	                       indices, space-separated (data-values), else NULL */
	uint32_t nrows;
	vrow *rows;
	double w, h;        /* points */
	double x, y;        /* centre, points, SVG orientation (y down), after layout */
	uint32_t rank;      /* longest-path rank, for cutting long edges */
	void *gv;           /* Agnode_t * while laying out */
	uint8_t mark;       /* oxr_mark of an overlay (0: none) */
	const char *other;  /* ghosts: the node's id in the overlay's other model */
	bool heat;          /* a heat overlay's value (heat_draw.c): its fill and figure */
	bool heat_dark;     /* ... a dark fill: white text */
	const char *heat_fill;
	double heat_value;
	uint32_t heat_fused; /* a node of the fused group it shows, else OXP_NONE */
	/* BX_GROUP of a run (a ×N stack, hier.c): its repetitions, for the heat overlay's
	 * hottest one; of a range ("layers.0–9"): its members by number; 0 for other boxes */
	uint32_t reps;
	uint32_t rep_first;  /* ... the number of its first member's key ("layers.0": 0) */
	uint32_t rep_period; /* ... member scopes per repetition (1, 2, 3) */
	const char *rep_key; /* ... the members' key before the number ("layers.") */
	int32_t heat_rep;    /* the hottest repetition (heat_draw.c), -1 when none */
	double heat_rep_value;
} vbox;

/* A run's box is drawn as a stack: two copies behind it, OXR_STACK points down and to the
 * right each.  The layout gives the box that much more room, so that no edge label or
 * neighbour lands on the copies; w and h stay the front box's. */
#define OXR_STACK 3.0
static inline double oxr__stack_pad(const vbox *b)
{
	return b->open_all != NULL ? 2 * OXR_STACK : 0.0;
}

/* ED_READS: a folded chain reads a drawn value that does not otherwise reach the box the
 * chain folds into (fold.c): thin, dotted, constrains ranks like data */
enum { ED_DATA = 0, ED_OUTER, ED_SUB, ED_STUB, ED_READS, ED__COUNT };

typedef struct vedge {
	uint32_t from, to;  /* box indices */
	uint32_t value;     /* first value carried (dag), else OXP_NONE */
	uint32_t count;     /* values aggregated into this edge */
	uint8_t style;
	bool invisible;     /* a layout constraint only (not drawn) */
	const char *label;  /* shape text, or NULL */
	uint32_t npts;      /* spline control points after layout: x,y pairs */
	double *pts;
	bool arrow;         /* arrow head from the last point to (ax, ay) */
	double ax, ay;
	double lx, ly;      /* label text start, on its baseline (layout.c, labels.c) */
	bool label_hidden;  /* no free place for the label: not drawn (labels.c) */
	void *gv;           /* Agedge_t * while laying out */
	uint8_t mark;       /* oxr_mark of an overlay (edges of ghosts) */
} vedge;

enum { CL_SUBGRAPH = 0, CL_SCOPE };

typedef struct vcluster {
	uint32_t parent;    /* enclosing cluster, else OXP_NONE */
	uint8_t kind;
	const char *id;
	const char *label;
	const char *title;
	uint32_t scope;     /* dag scope (CL_SUBGRAPH) */
	uint32_t owner;     /* box of the node holding the subgraph (CL_SUBGRAPH) */
	uint32_t group;     /* hierarchy group (CL_SCOPE) */
	double x0, y0, x1, y1; /* after layout, SVG orientation */
	void *gv;           /* Agraph_t * while laying out */
} vcluster;

typedef struct vfold {  /* a value computed by folded bookkeeping nodes (fold.c) */
	uint32_t ops;           /* folded nodes behind it; 0: not such a value */
	uint32_t nreads;
	uint32_t *reads;        /* drawn values its chain reads (Shape's input, ...) */
} vfold;

typedef struct view {
	oxp_arena *arena;
	const oxp_model *m;
	const oxp_dag *d;
	const oxp_dag_view *dv;
	oxr_options o;
	vbox *boxes;
	uint32_t nboxes, capboxes;
	vedge *edges;
	uint32_t nedges, capedges;
	vcluster *clusters;
	uint32_t nclusters, capclusters;
	uint32_t *node_box;  /* per dag node: its box, or the collapsed group box; OXP_NONE */
	uint32_t *node_cluster; /* per dag node: cluster its box goes in (set by hier.c) */
	uint32_t *node_rep;  /* per dag node: its repetition in the ×N stack box it is drawn in
	                        (hier.c), else OXP_NONE; only with a heat overlay, else NULL */
	bool *node_hidden;   /* per dag node: folded into its consumers (fold.c) */
	bool *node_ophide;   /* per dag node: hidden by hide= (hide.c); NULL without it */
	uint32_t nophidden;  /* how many */
	double note_y;       /* SVG: the baseline of the note saying so */
	bool *node_const;    /* per dag node: a constant (Constant, ConstantOfShape/Identity
	                        of constants) */
	vfold *fold;         /* per dag value (fold.c), NULL when no chain folds (arith=nodes,
	                        or chains too big to follow: only constants fold) */
	const oxp_quant *quant; /* quantization facts (quant=fold), else NULL (quant.c) */
	const oxp_fusions *fusions; /* named patterns (patterns=fold), else NULL (fusion.c) */
	bool *fusion_folded;    /* per match: drawn as one box (not opened by unfold=) */
	oxp_arena *cost_arena;  /* the cost (parser/cost.c) for the MAC rows, NULL when it */
	const oxp_cost *cost;   /* could not be computed (then boxes have no such row) */
	double width, height;
	int group_depth;     /* the grouping depth used (0 = none) */
	uint32_t max_boxes;  /* cap */
	uint64_t virtual_nodes; /* ranks crossed by edges (as-late-as-possible ranks) */
	uint32_t nranks;        /* ranks of those boxes (the deepest one's + 1) */
	char settings[160];  /* dot attributes chosen, for the record */
	const oxr_overlay *ov; /* marks to draw, or NULL (overlay.c) */
	struct oxr_io *io;   /* graph inputs/outputs in families and as rows (family.c), NULL
	                        with io=nodes */
	double heat_lo, heat_hi, heat_total; /* the heat scale's ends, the metric's total */
	double heat_thr[8];  /* the thresholds scale's bins */
	uint32_t heat_nthr;
} view;

/* Graphviz 2.42's dot crashes in mincross past about 32,767 ranks (decision 93): a deeper
 * view without clusters is laid out in bands of OXR_BAND_RANKS ranks, one dot layout each
 * (layout.c, decision 98); a deeper one with clusters (a cluster may span bands) is
 * refused (view.c). */
#define OXR_VIEW_MAX_RANKS 32000u
#define OXR_BAND_RANKS 16000u
static inline bool oxr__layout_banded(const view *v)
{
	return v->nranks > OXR_VIEW_MAX_RANKS && v->nclusters == 0;
}

/* view.c */
oxr_code oxr__view_build(view *v, const oxp_model *m, const oxp_dag *d, const oxr_options *o,
                         const oxr_overlay *ov, oxr_error *err);
void oxr__view_free(view *v);
uint32_t oxr__view_add_box(view *v, bx_kind kind, oxr_error *err);
uint32_t oxr__view_add_cluster(view *v, uint32_t parent, oxr_error *err);

/* hide.c: hide=<op types>: those nodes marked hidden (node_hidden and node_ophide), their
 * edges bridged by view.c; after fold, quant and fusion marking. */
oxr_code oxr__hide_mark(view *v, oxr_error *err);
bool oxr__op_hidden(const view *v, uint32_t ni);

/* fold.c: which nodes fold into their consumers (constants; bookkeeping unless
 * arith=nodes; unfold= reopens chains), their rows, and the dotted "reads" edges */
oxr_code oxr__fold_mark(view *v, oxr_error *err);
/* The folded rows of op box bi (after its header, name and attribute rows). */
void oxr__fold_rows(view *v, uint32_t bi);
typedef struct fold_read {
	uint32_t from, to, value; /* boxes, and the value read */
} fold_read;
/* For each read: whether `from` already reaches `to` through the view's edges (a search
 * with a budget: when it runs out the answer is false, and the edge is drawn).  false
 * when out of memory. */
bool oxr__fold_reached(const view *v, const fold_read *reads, uint32_t n, bool *reached);

/* family.c: graph inputs and outputs whose names differ only in their numbers as one
 * terminal per family ("past_key_values.0–31.{key,value} ×64"), and those whose only
 * consumer (whose producer) is drawn as its own box as rows of it (io=fold).  io_mark runs
 * once the op boxes exist; io_box gives the family terminal a member is drawn with
 * (OXP_NONE: not in a family, or a row); terminal_rows writes a family terminal's rows
 * (false: not one). */
oxr_code oxr__io_mark(view *v, oxr_error *err);
void oxr__io_free(view *v);
bool oxr__io_row(const view *v, uint32_t vi);
oxr_code oxr__io_box(view *v, uint32_t vi, uint32_t *box, oxr_error *err);
bool oxr__io_terminal_rows(view *v, uint32_t bi);
bool oxr__io_family_box(const view *v, uint32_t bi); /* a family's terminal */
void oxr__io_rows(view *v, uint32_t bi);

/* hier.c: name-scope grouping of the main graph; fills node_box for grouped nodes */
#define OXR_MAX_GROUP_DEPTH 16
/* The name-scope components of a node name: every '/'-separated part but the last, empty
 * ones skipped, at most max; returns how many. */
size_t oxr__name_scope(oxp_str name, oxp_str *c, size_t max);
/* "/c0/c1/..." with each component as display text: what the SVG's data-group holds and
 * the expand option takes. */
const char *oxr__scope_path(oxp_arena *a, const oxp_str *c, size_t n);
oxr_code oxr__hier_apply(view *v, uint32_t scope, oxr_error *err);

/* style.c */
enum {
	FAM_OTHER = 0, FAM_CONV, FAM_LINEAR, FAM_ACT, FAM_NORM, FAM_POOL, FAM_ATTN, FAM_MATH,
	FAM_REDUCE, FAM_SHAPE, FAM_CONST, FAM_CONTROL, FAM_QUANT, FAM_RNN, FAM_SEQ, FAM_RANDOM,
	FAM_CUSTOM, FAM_IO, FAM_GROUP, FAM__COUNT
};
uint8_t oxr__op_family(oxp_str domain, oxp_str op);
const char *oxr__family_name(uint8_t fam);
const char *oxr__family_color(uint8_t fam); /* the light theme's (DOT output) */

/* The colours of a drawing in one theme (theme=light|dark).  Every text colour is paired
 * with the fills it is drawn on, each pair at least WCAG's 4.5:1
 * (tests/unit/test_palette.c computes every pair):
 *   header on family[*] and on same_band;
 *   row[*] (not ROW_HEADER) on every box fill: op, input, output, tensor, stub, group,
 *     mark_tint[*], same_fill, row_mark (a changed row) and badge (ROW_BADGE's pill);
 *   edge_label on canvas, scope_fill and sub_fill; scope_text on scope_fill, sub_text on
 *     sub_fill; legend_text and legend_note on canvas;
 *   heat fills (oxr__heat_color) take oxr__heat_text's colour, in both themes. */
typedef struct oxr_palette {
	const char *name;
	const char *canvas;
	const char *op_fill, *op_stroke;
	const char *input_fill, *output_fill, *io_stroke, *missing_stroke;
	const char *tensor_fill, *tensor_stroke;
	const char *stub_fill, *stub_stroke;
	const char *group_fill, *group_stroke;
	const char *header;              /* op type, on the family band */
	const char *family[FAM__COUNT];  /* the bands */
	const char *row[ROW__COUNT];     /* row text by style ([ROW_HEADER] unused) */
	const char *row_mark, *ring;     /* a changed row's fill; a changed op type's ring */
	const char *badge_fill, *badge_stroke;
	const char *mark_tint[3];        /* added, changed, removed */
	const char *same_fill, *same_band; /* an unchanged box of a diff: muted, not faded (a
	                                      faded box's text would fall under 4.5:1) */
	const char *edge[ED__COUNT];     /* strokes by style */
	const char *edge_label;
	const char *scope_fill, *scope_stroke, *scope_text;
	const char *sub_fill, *sub_stroke, *sub_text;
	const char *legend_text, *legend_note;
} oxr_palette;
const oxr_palette *oxr__palette(bool dark);
/* The heat scale (magma's light part) at t in [0, 1], and the text that reads on it:
 * black or white, whichever contrasts more (at least 4.58:1 on any colour). */
void oxr__heat_color(double t, unsigned char rgb[3]);
const char *oxr__heat_text(const unsigned char rgb[3]);
/* Model bytes as text: the parser's one UTF-8 module (parser/text.c, oxp.h "Text") under
 * render's names.  oxr__utf8_at: the sequence at s[i], 0 when invalid; oxr__text: display
 * text of at most max_chars characters; oxr__text_tail: the same keeping the end of a long
 * string ("…/attn/Softmax"), the part of a node name that tells nodes apart. */
static inline size_t oxr__utf8_at(const unsigned char *s, size_t n, size_t i, uint32_t *cp)
{
	return oxp_utf8_at(s, n, i, cp);
}
static inline const char *oxr__text(oxp_arena *a, oxp_str s, size_t max_chars)
{
	return oxp_text(a, s, max_chars);
}
static inline const char *oxr__text_tail(oxp_arena *a, oxp_str s, size_t max_chars)
{
	return oxp_text_tail(a, s, max_chars);
}
/* Shape text of a value for an edge label ("1×64×56×56", "i64 4", "scalar"), or NULL. */
const char *oxr__shape_text(oxp_arena *a, const oxp_value *val);
/* "W ⟨64×3×7×7⟩ f16" */
const char *oxr__tensor_row(oxp_arena *a, const char *label, const oxp_tensor *t);
/* Rows for an op box: header, name, attributes (per attrs level). */
oxr_code oxr__op_rows(view *v, uint32_t box, oxr_error *err);
/* "≈ 231 M MACs" (with suffix, e.g. " each"), NULL when the figure is 0 or has no value. */
const char *oxr__macs_text(view *v, const oxp_cost_poly *macs, const char *suffix);
bool oxr__add_row(view *v, vbox *b, row_style style, const char *text);
/* Label for input k of a node: its schema's name ("W", "B", "inputs[2]") or the formal
 * name of the local function it calls; NULL when neither names it. */
const char *oxr__input_label(view *v, uint32_t node, size_t k);
/* Box size from its rows; a row too long for the widest box is shortened to fit. */
void oxr__box_size(view *v, vbox *b);

/* textfit.c */
/* Width in points of text at a font size: per character the wider of DejaVu Sans and
 * Liberation Sans (Helvetica/Arial metrics), regular or bold. */
double oxr__text_width(const char *s, double size, bool bold);
/* Edge labels moved off boxes and other labels, or hidden when no place beside their line
 * is free (labels.c); after layout, with each label at its default place.  *right: where
 * the rightmost placed label ends (0 when none), for the drawing to grow to. */
oxr_code oxr__labels_place(view *v, double *right, oxr_error *err);
/* s when it is at most max_w points wide, else s cut with an ellipsis to fit: its start
 * kept ("Add ×10, Mul…"), or with keep_end its end ("…/layers.10/Softmax"); "" when not
 * even the ellipsis fits. */
const char *oxr__text_fit(oxp_arena *a, const char *s, double size, bool bold, double max_w,
                          bool keep_end);
/* Width Graphviz assumes for a label (Helvetica metrics): it measures cluster labels
 * itself, without fonts. */
double oxr__helvetica_width(const char *s, double size);

/* quant.c: quantized ops as one box of the float op they stand for (quant=fold) */
oxr_code oxr__quant_mark(view *v, oxr_error *err);     /* after the constants are marked */
bool oxr__quant_joined(const view *v, uint32_t node);  /* plumbing drawn in another's box */
void oxr__quant_link(view *v);                         /* after the op boxes exist */
bool oxr__quant_skip_edge(const view *v, const oxp_edge *e);
uint32_t oxr__quant_edge_value(const view *v, const oxp_edge *e); /* the value to show */
bool oxr__quant_covers(const view *v, uint32_t node, size_t input); /* a row says it */
void oxr__quant_rows(view *v, uint32_t box);           /* header, badge, scale rows */
/* fusion.c: named patterns as one box of the op they compute (patterns=fold) */
oxr_code oxr__fusion_mark(view *v, oxr_error *err);    /* after quant.c's mark */
bool oxr__fusion_joined(const view *v, uint32_t node); /* drawn in its match's box */
void oxr__fusion_link(view *v);                        /* after the op boxes exist */
/* Nodes of the match anchored at `anchor` that no box holds yet: oxr__fusion_link will
 * draw them in the anchor's box (a scope box counts them as its own). */
uint32_t oxr__fusion_strays(const view *v, uint32_t anchor);
bool oxr__fusion_rows(view *v, uint32_t box);          /* true: a match's box, rows done */
const char *oxr__fusion_op(const view *v, uint32_t node); /* a match's box: its op, else NULL */
struct json_t;
/* {"counts": {"LayerNormalization": 25, ...}[, "matches": [...]]} (docs/document.md) */
struct json_t *oxr__fusion_json(const oxp_dag *d, bool matches);
/* schemadoc.c: what the operator schemas add to JSON answers (jansson objects) */
struct json_t;
/* {"domain","op_type","since_version","opset","link","version_link"[,"deprecated"]}, or
 * NULL when the node has no schema. */
struct json_t *oxr__schema_json(const oxp_dnode *dn);
/* Sets "port" (the input's or output's name) on each object of a node's refs array. */
void oxr__set_ports(const oxp_dag *d, uint32_t node, bool output, struct json_t *refs);
/* The attributes a node leaves to their schema defaults, [{"name","type","value",
 * "default":true}]; NULL without a schema. */
struct json_t *oxr__defaults_json(const oxp_dnode *dn);
/* Sets "default": true on the attribute objects whose value is the schema default. */
void oxr__mark_default_attrs(const oxp_dnode *dn, struct json_t *attrs);
/* The check as JSON (docs/check.md), at most max_problems listed; NULL when out of memory
 * (jx_oom() is then set).  data_dirfd as oxp_check_run's. */
struct json_t *oxr__check_json(const oxp_model *m, const oxp_dag *d, int data_dirfd,
                               size_t max_problems);

/* layout.c + graphviz.c */
oxr_code oxr__layout(view *v, oxr_format fmt, oxr_buf *dot_out, oxr_error *err);

/* overlay.c: name scopes holding node n stay open (hier.c asks); ghosts, marks and
 * highlighted rows once the boxes have their rows (view.c calls it). */
bool oxr__overlay_keeps(const view *v, uint32_t n);
oxr_code oxr__overlay_apply(view *v, oxr_error *err);
const char *oxr__mark_name(uint8_t mark);  /* "same", "added", ... */
const char *oxr__mark_color(uint8_t mark); /* its outline colour */

/* heat_draw.c: fills, value rows, legend of a heat overlay (ov->heat) */
oxr_code oxr__heat_apply(view *v, oxr_error *err);
double oxr__heat_legend_width(const view *v);
void oxr__heat_legend_svg(const view *v, oxr_buf *o, double y);
void oxr__heat_layout_json(const view *v, oxr_buf *o);
void oxr__heat_box_json(const view *v, const vbox *b, oxr_buf *o);

/* svg.c */
oxr_code oxr__write_svg(const view *v, oxr_buf *out, oxr_error *err);
oxr_code oxr__write_layout_json(const view *v, oxr_buf *out, oxr_error *err);

/* raster.c, for card.c: a card from its frame SVG (page and texts, OXR_CARD_W x
 * OXR_CARD_H) and a drawing fitted into box {x, y, w, h} of it (drawing may be NULL). */
oxr_code oxr__raster_card(const char *frame, size_t frame_len, const char *drawing,
                          size_t drawing_len, const double box[4], const char *title,
                          const oxr_raster *r, oxr_buf *out, oxr_error *err);

oxr_code oxr__fail(oxr_error *err, oxr_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif /* OXR_INTERNAL_H */
