/*
 * layout.c — Graphviz: the view's boxes and edges go to dot through the cgraph API; the
 * positions and splines come back into the view.
 *
 * Graphviz facts this relies on (shared/notes/graphviz-mhd.md, measured here):
 *  - the library and its two plugins are loaded when first needed (below) and the
 *    plugins registered with gvContextPlugins(), so no plugin
 *    configuration file (config6a) is needed, e.g. in a slim container;
 *  - boxes are fixed-size and label-less for the layout: our own SVG writer draws the
 *    text, so dot never parses labels (no HTML-label leaks, no escape expansion of model
 *    strings, and less work);
 *  - nslimit=0 with newrank=true skips the x-coordinate network simplex and the quadratic
 *    cleanup step: seconds instead of minutes on 5k+ boxes; smaller graphs keep the
 *    optimiser for straighter chains;
 *  - gvLayout() returns 0 even after some errors: agerrors() is checked too;
 *  - Graphviz is not thread-safe and may exit() on out-of-memory: the service only calls
 *    this in a worker process (worker.c).
 */
#include "render/internal.h"

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>
#include <graphviz/gvplugin.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Graphviz is loaded when the first layout needs it (dlopen, render/dlopen.c), not linked:
 * its nine libraries cost every start of the program about 2 ms of mapping and
 * relocation, and most commands (inspect, check, cost, diff as JSON) never lay out. */
#ifndef OXR_GVPLUGDIR /* Graphviz's plugin folder (the Makefile: pkg-config's libdir/graphviz) */
#define OXR_GVPLUGDIR "/usr/lib/x86_64-linux-gnu/graphviz"
#endif
#define GV_SONAME "libgvc.so.6"
#define GV_DOT_SONAME OXR_GVPLUGDIR "/libgvplugin_dot_layout.so.6"
#define GV_CORE_SONAME OXR_GVPLUGDIR "/libgvplugin_core.so.6"
/* The plugins live in Graphviz's own folder (opened by their full path: not in ldconfig's
 * cache) and come in libgvc's package: the note names libgvc alone. */
OXR_DLOPEN_NOTE(gvc, "layout", "Graphviz and its dot and core plugins, for drawings", GV_SONAME);

#define GV_FNS(X)                                                                          \
	X(agopen) X(agclose) X(agnode) X(agedge) X(agsubg) X(agattr) X(agxset) X(agsafeset) \
	X(agset) X(agstrdup) X(agwrite) X(agerrors) X(agseterrf) X(agreseterrors)         \
	X(gvContextPlugins) X(gvLayout) X(gvFreeLayout) X(Agdirected) X(AgIoDisc)

static union {
	struct {
#define X(name) __typeof__(name) *name;
		GV_FNS(X)
#undef X
	};
	void *slot[0 GV_FNS(OXR_DLOPEN_SLOT)];
} gv;
static union {
	gvplugin_library_t *lib;
	void *slot[1];
} gv_dot, gv_core;

static bool gv_loaded;
static char gv_load_err[300];

static void gv_load(void)
{
	static const char *const names[] = {GV_FNS(OXR_DLOPEN_NAME)};
	static const char *const dot[] = {"gvplugin_dot_layout_LTX_library"};
	static const char *const core[] = {"gvplugin_core_LTX_library"};
	gv_loaded = oxr_dlopen(GV_SONAME, "", names, gv.slot, sizeof(names) / sizeof(names[0]),
	                       gv_load_err, sizeof(gv_load_err)) &&
	            oxr_dlopen(GV_DOT_SONAME, "", dot, gv_dot.slot, 1, gv_load_err,
	                       sizeof(gv_load_err)) &&
	            oxr_dlopen(GV_CORE_SONAME, "", core, gv_core.slot, 1, gv_load_err,
	                       sizeof(gv_load_err));
}

static GVC_t *gvc;
static char gv_errors[512];
static size_t gv_errlen;

static int on_gv_error(char *msg)
{
	/* Graphviz hands messages over in pieces ("Error", ": ", text): concatenate */
	size_t n = strlen(msg);
	if (gv_errlen + n >= sizeof(gv_errors))
		n = sizeof(gv_errors) - 1 - gv_errlen;
	memcpy(gv_errors + gv_errlen, msg, n);
	gv_errlen += n;
	gv_errors[gv_errlen] = '\0';
	return 0;
}

/* Layouts run in one thread of a worker process (worker.c) or of the CLI, so the
 * context and the library are made once without a lock. */
static GVC_t *context(void)
{
	if (gvc == NULL) {
		static bool tried;
		if (!tried) {
			tried = true;
			gv_load();
		}
		if (!gv_loaded)
			return NULL;
		/* static: Graphviz keeps the pointer */
		static lt_symlist_t builtins[] = {
		    {"gvplugin_dot_layout_LTX_library", NULL},
		    {"gvplugin_core_LTX_library", NULL},
		    {NULL, NULL},
		};
		builtins[0].address = gv_dot.lib;
		builtins[1].address = gv_core.lib;
		gv.agseterrf(on_gv_error);
		gvc = gv.gvContextPlugins(builtins, 0);
	}
	return gvc;
}

/* Layout settings by the work dot will do: boxes plus the virtual nodes of edges that
 * cross ranks (a view of 100 boxes with long skips can be 2,500 nodes for dot).  Small:
 * the full optimiser; middling: network simplex for x capped at one pass per node;
 * large: no x optimisation (newrank + nslimit=0: seconds, not minutes; chains may lean). */
static void settings(const view *v, const char **nslimit, const char **splines,
                     const char **mclimit)
{
	uint64_t n = v->nboxes + v->virtual_nodes;
	*mclimit = NULL;
	*splines = "spline";
	if (n <= 600) {
		*nslimit = NULL;
	} else if (n <= 3000) {
		*nslimit = "1";
		*mclimit = "0.5";
	} else {
		*nslimit = "0";
		*mclimit = "0.3";
		if (v->nboxes > 12000)
			*splines = "polyline";
	}
}

static char *fmt_num(char *buf, size_t size, double v)
{
	snprintf(buf, size, "%.4f", v);
	return buf;
}

/* Text as a DOT label shows it literally: backslashes doubled (else \N, \G, \l, \" are
 * dot escapes) and '&' written as "&amp;" (else dot decodes HTML entities).  Rows are
 * joined with dot's "\n".  Returns a malloc'd string, NULL when out of memory. */
static char *dot_text(const vrow *rows, uint32_t nrows)
{
	size_t n = 1;
	for (uint32_t i = 0; i < nrows; i++) {
		for (const char *p = rows[i].text; *p; p++)
			n += *p == '\\' ? 2 : *p == '&' ? 5 : 1;
		n += 2;
	}
	char *s = malloc(n);
	if (s == NULL)
		return NULL;
	size_t o = 0;
	for (uint32_t i = 0; i < nrows; i++) {
		if (i) {
			s[o++] = '\\';
			s[o++] = 'n';
		}
		for (const char *p = rows[i].text; *p; p++) {
			if (*p == '&') {
				memcpy(s + o, "&amp;", 5);
				o += 5;
				continue;
			}
			if (*p == '\\')
				s[o++] = '\\';
			s[o++] = *p;
		}
	}
	s[o] = '\0';
	return s;
}

static char *dot_label(const vbox *b)
{
	return dot_text(b->rows, b->nrows);
}

static char *dot_plain(const char *text)
{
	vrow r = {.text = text, .style = ROW_PLAIN, .value = OXP_NONE};
	return dot_text(&r, 1);
}

/* ---------------------------------------------------------------------------------------
 * Object ids.  cgraph's default discipline makes a named object's id the address of its
 * interned name, and orders subgraphs (clusters) by id: the drawing then depended on where
 * malloc put strings, and a rendering was not a function of (model, options).  Ours gives
 * named objects ids in creation order (even numbers) and anonymous ones (edges) odd
 * numbers from a per-graph counter.
 */
typedef struct idstate {
	Agraph_t *g;
	char **names;    /* names[k] has id 2*(k+1); interned in g's string dictionary (cgraph
	                    reads a flag stored before each of its strings) */
	size_t n, cap;
	uint32_t *slots; /* open addressing: name index + 1, 0 = empty */
	size_t nslots;
	IDTYPE anon;     /* next odd id */
	bool oom;
} idstate;

static uint64_t name_hash(const char *s)
{
	return oxp_hash(s, strlen(s), 0);
}

static void *id_open(Agraph_t *g, Agdisc_t *disc)
{
	(void)disc;
	idstate *st = calloc(1, sizeof(*st));
	if (st != NULL) {
		st->anon = 1;
		st->g = g;
	}
	return st;
}

static bool id_grow(idstate *st)
{
	size_t ns = st->nslots ? st->nslots * 2 : 1024;
	uint32_t *slots = calloc(ns, sizeof(*slots));
	if (slots == NULL)
		return false;
	for (size_t k = 0; k < st->n; k++) {
		size_t i = (size_t)name_hash(st->names[k]) & (ns - 1);
		while (slots[i] != 0)
			i = (i + 1) & (ns - 1);
		slots[i] = (uint32_t)(k + 1);
	}
	free(st->slots);
	st->slots = slots;
	st->nslots = ns;
	return true;
}

static long id_map(void *state, int objtype, char *str, IDTYPE *id, int createflag)
{
	(void)objtype;
	idstate *st = state;
	if (str == NULL) {
		*id = st->anon;
		st->anon += 2;
		return 1;
	}
	if (st->nslots > 0) {
		size_t i = (size_t)name_hash(str) & (st->nslots - 1);
		while (st->slots[i] != 0) {
			if (strcmp(st->names[st->slots[i] - 1], str) == 0) {
				*id = (IDTYPE)st->slots[i] * 2;
				return 1;
			}
			i = (i + 1) & (st->nslots - 1);
		}
	}
	if (!createflag)
		return 0;
	if ((st->n + 1) * 2 > st->nslots && !id_grow(st)) {
		st->oom = true;
		return 0;
	}
	if (st->n == st->cap) {
		size_t cap = st->cap ? st->cap * 2 : 1024;
		char **names = realloc(st->names, cap * sizeof(*names));
		if (names == NULL) {
			st->oom = true;
			return 0;
		}
		st->names = names;
		st->cap = cap;
	}
	char *copy = gv.agstrdup(st->g, str);
	if (copy == NULL) {
		st->oom = true;
		return 0;
	}
	st->names[st->n++] = copy;
	size_t i = (size_t)name_hash(str) & (st->nslots - 1);
	while (st->slots[i] != 0)
		i = (i + 1) & (st->nslots - 1);
	st->slots[i] = (uint32_t)st->n;
	*id = (IDTYPE)st->n * 2;
	return 1;
}

static long id_alloc(void *state, int objtype, IDTYPE request)
{
	(void)state;
	(void)objtype;
	(void)request;
	return 0; /* ids are only ever made by id_map */
}

static void id_free(void *state, int objtype, IDTYPE id)
{
	(void)state;
	(void)objtype;
	(void)id; /* names live until the graph closes */
}

static char *id_print(void *state, int objtype, IDTYPE id)
{
	(void)objtype;
	idstate *st = state;
	if (id % 2 != 0 || id == 0 || id / 2 > st->n)
		return NULL;
	return st->names[id / 2 - 1];
}

static void id_close(void *state)
{
	idstate *st = state;
	if (st == NULL)
		return;
	free(st->names); /* the strings go with the graph's string dictionary */
	free(st->slots);
	free(st);
}

static void id_register(void *state, int objtype, void *obj)
{
	(void)state;
	(void)objtype;
	(void)obj;
}

static Agiddisc_t ordered_ids = {id_open, id_map, id_alloc, id_free, id_print, id_close,
                                 id_register};

typedef struct memchan {
	oxr_buf *out;
} memchan;

static int mem_putstr(void *chan, const char *s)
{
	memchan *c = chan;
	return oxr_buf_append(c->out, s, strlen(s)) ? 0 : EOF;
}

static int mem_flush(void *chan)
{
	(void)chan;
	return 0;
}

#define IN_PART(i) (band == NULL || band[i] == part)
/* The boxes of band `part` (band[i]: box i's; the whole view when band is NULL) and the
 * edges between them laid out by dot in one graph, or written as DOT into dot_out; their
 * coordinates from (0, 0) at the part's top left, its size in *w, *h. */
static oxr_code layout_part(view *v, GVC_t *ctx, bool want_dot, oxr_buf *dot_out,
                            const uint32_t *band, uint32_t part, double *w, double *h,
                            oxr_error *err)
{
	const char *nslimit, *spline_mode, *mclimit;
	settings(v, &nslimit, &spline_mode, &mclimit);

	/* our own output channel for agwrite (DOT into an oxr_buf) */
	static Agiodisc_t io;
	io = *gv.AgIoDisc;
	io.putstr = mem_putstr;
	io.flush = mem_flush;
	Agdisc_t disc = {NULL, &ordered_ids, &io};
	Agraph_t *g = gv.agopen("onnxviz", *gv.Agdirected, &disc);
	if (g == NULL)
		return oxr__fail(err, OXR_E_NOMEM, "out of memory");
	gv.agattr(g, AGRAPH, "rankdir", v->o.rankdir_lr ? "LR" : "TB");
	gv.agattr(g, AGRAPH, "newrank", "true");
	gv.agattr(g, AGRAPH, "ranksep", "0.32");
	gv.agattr(g, AGRAPH, "nodesep", "0.22");
	gv.agattr(g, AGRAPH, "splines", (char *)spline_mode);
	if (nslimit != NULL)
		gv.agattr(g, AGRAPH, "nslimit", (char *)nslimit);
	if (mclimit != NULL)
		gv.agattr(g, AGRAPH, "mclimit", (char *)mclimit);
	gv.agattr(g, AGRAPH, "fontname", "Helvetica");
	gv.agattr(g, AGRAPH, "fontsize", "10");
	gv.agattr(g, AGRAPH, "label", "");
	Agsym_t *a_w = gv.agattr(g, AGNODE, "width", "0.75");
	Agsym_t *a_h = gv.agattr(g, AGNODE, "height", "0.5");
	gv.agattr(g, AGNODE, "shape", "box");
	gv.agattr(g, AGNODE, "fixedsize", "true");
	gv.agattr(g, AGNODE, "fontname", "Helvetica");
	/* the DOT's labels are all rows at the size of the SVG's rows: boxes are sized for
	 * them, so `dot -Tsvg` of the DOT keeps its text inside too */
	gv.agattr(g, AGNODE, "fontsize", "9");
	Agsym_t *a_label = gv.agattr(g, AGNODE, "label", "");
	Agsym_t *a_style = NULL, *a_fill = NULL, *a_tooltip = NULL, *a_color = NULL;
	if (want_dot) {
		a_style = gv.agattr(g, AGNODE, "style", "rounded,filled");
		a_fill = gv.agattr(g, AGNODE, "fillcolor", "#f4f4f4");
		a_tooltip = gv.agattr(g, AGNODE, "tooltip", "");
		if (v->ov != NULL) /* an overlay's marks: the outline's colour */
			a_color = gv.agattr(g, AGNODE, "color", "black");
	}
	Agsym_t *e_style = gv.agattr(g, AGEDGE, "style", "solid");
	Agsym_t *e_weight = gv.agattr(g, AGEDGE, "weight", "1");
	/* xlabel, not label: a label would make dot lay out a node per edge label */
	Agsym_t *e_label = want_dot ? gv.agattr(g, AGEDGE, "xlabel", "") : NULL;
	Agsym_t *c_label = gv.agattr(g, AGRAPH, "label", "");
	(void)c_label;

	oxr_code rc = OXR_OK;
	char num[32], name[32];
	/* clusters, parents first (they were created in that order) */
	for (uint32_t c = 0; c < v->nclusters; c++) {
		vcluster *cl = &v->clusters[c];
		Agraph_t *parent = cl->parent == OXP_NONE ? g : v->clusters[cl->parent].gv;
		snprintf(name, sizeof(name), "cluster_%u", c);
		Agraph_t *sg = gv.agsubg(parent, name, 1);
		if (sg == NULL) {
			rc = oxr__fail(err, OXR_E_NOMEM, "out of memory");
			goto out;
		}
		char *cl_label = dot_plain(cl->label ? cl->label : "");
		if (cl_label == NULL) {
			rc = oxr__fail(err, OXR_E_NOMEM, "out of memory");
			goto out;
		}
		gv.agset(sg, "label", cl_label);
		free(cl_label);
		if (!want_dot && cl->label != NULL && cl->label[0] != '\0') {
			/* dot makes a cluster as wide as its label, measured with Helvetica metrics
			 * at the graph's fontsize; the SVG draws it bold in a possibly wider font:
			 * a larger fontsize for the layout makes dot reserve that width */
			double want = oxr__text_width(cl->label, OXR_CLUSTER_SIZE, true),
			       est = oxr__helvetica_width(cl->label, OXR_CLUSTER_SIZE);
			if (est > 0 && want > est) {
				gv.agsafeset(sg, "fontsize",
				          fmt_num(num, sizeof(num), OXR_CLUSTER_SIZE * want / est), "10");
			}
		}
		cl->gv = sg;
	}
	for (uint32_t i = 0; i < v->nboxes; i++) {
		vbox *b = &v->boxes[i];
		b->gv = NULL;
		if (!IN_PART(i))
			continue;
		Agraph_t *home = b->cluster == OXP_NONE ? g : v->clusters[b->cluster].gv;
		snprintf(name, sizeof(name), "b%u", i);
		Agnode_t *n = gv.agnode(home, name, 1);
		if (n == NULL) {
			rc = oxr__fail(err, OXR_E_NOMEM, "out of memory");
			goto out;
		}
		gv.agxset(n, a_w, fmt_num(num, sizeof(num), (b->w + oxr__stack_pad(b)) / 72.0));
		gv.agxset(n, a_h, fmt_num(num, sizeof(num), (b->h + oxr__stack_pad(b)) / 72.0));
		if (want_dot) {
			char *label = dot_label(b);
			if (label == NULL) {
				rc = oxr__fail(err, OXR_E_NOMEM, "out of memory");
				goto out;
			}
			gv.agxset(n, a_label, label);
			free(label);
			gv.agxset(n, a_fill, b->heat && b->heat_fill ? (char *)b->heat_fill
			                                          : (char *)oxr__family_color(b->family));
			if (b->heat_dark)
				gv.agsafeset(n, "fontcolor", "#ffffff", "black");
			if (b->title != NULL) {
				char *t = dot_plain(b->title);
				if (t == NULL) {
					rc = oxr__fail(err, OXR_E_NOMEM, "out of memory");
					goto out;
				}
				gv.agxset(n, a_tooltip, t);
				free(t);
			}
			if (b->kind == BX_INPUT || b->kind == BX_OUTPUT)
				gv.agxset(n, a_style, "rounded,filled,bold");
			if (a_color != NULL && b->mark != OXR_MARK_NONE)
				gv.agxset(n, a_color, (char *)oxr__mark_color(b->mark));
			if (b->mark == OXR_MARK_REMOVED)
				gv.agxset(n, a_style, "rounded,filled,dashed");
		}
		b->gv = n;
	}
	for (uint32_t i = 0; i < v->nedges; i++) {
		vedge *e = &v->edges[i];
		e->gv = NULL;
		if (!IN_PART(e->from) || !IN_PART(e->to))
			continue; /* between two parts: layout_bands draws it */
		Agedge_t *ge = gv.agedge(g, v->boxes[e->from].gv, v->boxes[e->to].gv, NULL, 1);
		if (ge == NULL) {
			rc = oxr__fail(err, OXR_E_NOMEM, "out of memory");
			goto out;
		}
		if (e->style == ED_OUTER)
			gv.agxset(ge, e_style, "dashed");
		else if (e->style == ED_SUB)
			gv.agxset(ge, e_style, e->invisible ? "invis" : "dotted");
		else if (e->style == ED_STUB)
			gv.agxset(ge, e_weight, "3");
		else if (e->style == ED_READS)
			gv.agxset(ge, e_style, "dotted");
		if (want_dot && e->label != NULL) {
			char *l = dot_plain(e->label);
			if (l == NULL) {
				rc = oxr__fail(err, OXR_E_NOMEM, "out of memory");
				goto out;
			}
			gv.agxset(ge, e_label, l);
			free(l);
		}
		e->gv = ge;
	}

	if (want_dot) {
		/* the graph as dot would read it: no layout needed */
		memchan mc = {dot_out};
		if (gv.agwrite(g, &mc) != 0 || dot_out->failed)
			rc = oxr__fail(err, dot_out->failed ? OXR_E_TOO_BIG : OXR_E_LAYOUT,
			               "writing DOT failed");
		goto out;
	}

	gv_errlen = 0;
	gv_errors[0] = '\0';
	gv.agreseterrors();
	if (gv.gvLayout(ctx, g, "dot") != 0 || gv.agerrors() >= AGERR) {
		rc = oxr__fail(err, OXR_E_LAYOUT, "Graphviz layout failed: %s",
		               gv_errlen ? gv_errors : "(no message)");
		gv.gvFreeLayout(ctx, g);
		goto out;
	}
	/* read the layout back; SVG orientation: y grows downwards */
	boxf bb = GD_bb(g);
	const double pad = 8;
	*w = bb.UR.x - bb.LL.x + 2 * pad;
	*h = bb.UR.y - bb.LL.y + 2 * pad;
#define X(px) ((px) - bb.LL.x + pad)
#define Y(py) (bb.UR.y - (py) + pad)
	for (uint32_t i = 0; i < v->nboxes; i++) {
		vbox *b = &v->boxes[i];
		if (b->gv == NULL)
			continue;
		pointf c = ND_coord((Agnode_t *)b->gv);
		b->x = X(c.x);
		b->y = Y(c.y);
	}
	for (uint32_t i = 0; i < v->nclusters; i++) {
		vcluster *cl = &v->clusters[i];
		boxf cb = GD_bb((Agraph_t *)cl->gv);
		cl->x0 = X(cb.LL.x);
		cl->x1 = X(cb.UR.x);
		cl->y0 = Y(cb.UR.y);
		cl->y1 = Y(cb.LL.y);
		/* what still does not fit (dot's estimate of a character it does not know) is
		 * cut */
		if (cl->label != NULL)
			cl->label = oxr__text_fit(v->arena, cl->label, OXR_CLUSTER_SIZE, true,
			                          cl->x1 - cl->x0 - 2 * OXR_CLUSTER_PAD, false);
	}
	double label_right = 0;
	for (uint32_t i = 0; i < v->nedges; i++) {
		vedge *e = &v->edges[i];
		if (e->gv == NULL)
			continue;
		splines *sp = ED_spl((Agedge_t *)e->gv);
		if (sp == NULL || sp->size < 1 || sp->list[0].size < 4)
			continue;
		const bezier *bz = &sp->list[0];
		uint32_t np = (uint32_t)bz->size;
		e->pts = oxp_arena_array(v->arena, (size_t)np * 2, sizeof(double));
		if (e->pts == NULL) {
			rc = oxr__fail(err, OXR_E_NOMEM, "out of memory");
			break;
		}
		for (uint32_t k = 0; k < np; k++) {
			e->pts[2 * k] = X(bz->list[k].x);
			e->pts[2 * k + 1] = Y(bz->list[k].y);
		}
		e->npts = np;
		if (bz->eflag) {
			e->arrow = true;
			e->ax = X(bz->ep.x);
			e->ay = Y(bz->ep.y);
		}
		/* the label goes just past the producer's box, where the edge leaves it: between
		 * ranks, where no box is (the middle of a long curve often lies over boxes); right
		 * of the line below the box (TB) or above the line (LR) */
		if (e->label != NULL) {
			double x = X(bz->list[0].x), y = Y(bz->list[0].y);
			double lw = oxr__text_width(e->label, OXR_LABEL_SIZE, false);
			e->lx = v->o.rankdir_lr ? x + 3 : x + 4;
			e->ly = v->o.rankdir_lr ? y - 3 : y + 9;
			if (e->lx + lw > *w && !v->o.rankdir_lr)
				e->lx = x - 4 - lw; /* at the drawing's right edge: left of the line */
			if (e->lx < 0)
				e->lx = 0;
			label_right = fmax(label_right, e->lx + lw);
		}
	}
	/* a band grows to hold a label wider than the room left of its line, or past the end in
	 * LR, before the bands are stacked; labels_finish then places every label over the
	 * composed drawing (the whole view grows there only, to where the labels end up) */
	if (band != NULL && label_right > *w)
		*w = ceil(label_right);
#undef X
#undef Y
	gv.gvFreeLayout(ctx, g);
out:
	gv.agclose(g);
	return rc;
}
#undef IN_PART

/* Moves the boxes and edges of band `part` by (dx, dy). */
static void part_move(view *v, const uint32_t *band, uint32_t part, double dx, double dy)
{
	for (uint32_t i = 0; i < v->nboxes; i++) {
		vbox *b = &v->boxes[i];
		if (band[i] == part) {
			b->x += dx;
			b->y += dy;
		}
	}
	for (uint32_t i = 0; i < v->nedges; i++) {
		vedge *e = &v->edges[i];
		if (band[e->from] != part || band[e->to] != part)
			continue;
		for (uint32_t k = 0; k < e->npts; k++) {
			e->pts[2 * k] += dx;
			e->pts[2 * k + 1] += dy;
		}
		e->ax += dx;
		e->ay += dy;
		e->lx += dx;
		e->ly += dy;
	}
}

/* An edge between two bands: a curve from the producer's bottom (TB; right side, LR) to
 * the consumer's top (left side), bending along the flow, with an arrow.  Answers false
 * when the arena is full. */
static bool band_edge(view *v, vedge *e)
{
	const vbox *f = &v->boxes[e->from], *t = &v->boxes[e->to];
	double *p = oxp_arena_array(v->arena, 8, sizeof(double));
	if (p == NULL)
		return false;
	bool lr = v->o.rankdir_lr;
	double x0 = lr ? f->x + f->w / 2 : f->x, y0 = lr ? f->y : f->y + f->h / 2;
	double x1 = lr ? t->x - t->w / 2 : t->x, y1 = lr ? t->y : t->y - t->h / 2;
	double ax = x1, ay = y1; /* the arrow's tip; the curve ends 7 units before it */
	if (lr)
		x1 -= 7;
	else
		y1 -= 7;
	double bend = lr ? (x1 - x0) / 3 : (y1 - y0) / 3;
	p[0] = x0, p[1] = y0;
	p[2] = lr ? x0 + bend : x0, p[3] = lr ? y0 : y0 + bend;
	p[4] = lr ? x1 - bend : x1, p[5] = lr ? y1 : y1 - bend;
	p[6] = x1, p[7] = y1;
	e->pts = p;
	e->npts = 4;
	e->arrow = true;
	e->ax = ax;
	e->ay = ay;
	if (e->label != NULL) { /* as layout_part places it: just past the producer */
		e->lx = lr ? x0 + 3 : x0 + 4;
		e->ly = lr ? y0 - 3 : y0 + 9;
	}
	return true;
}

/* Each box's band: its rank's, but a box with one edge (a stub, a terminal, a leaf) goes
 * with the box at its other end, so that it is laid out beside it, not in a row of leaves
 * of its rank's band (a stub's rank is as late as possible: past its producer's band). */
static uint32_t *bands_of(const view *v)
{
	uint32_t *band = malloc((size_t)v->nboxes * sizeof(uint32_t) + 1);
	uint32_t *deg = calloc((size_t)v->nboxes + 1, sizeof(uint32_t));
	if (band == NULL || deg == NULL) {
		free(band);
		free(deg);
		return NULL;
	}
	for (uint32_t i = 0; i < v->nboxes; i++)
		band[i] = v->boxes[i].rank / OXR_BAND_RANKS;
	for (uint32_t i = 0; i < v->nedges; i++) {
		deg[v->edges[i].from]++;
		deg[v->edges[i].to]++;
	}
	for (uint32_t i = 0; i < v->nedges; i++) {
		uint32_t f = v->edges[i].from, t = v->edges[i].to;
		if (deg[t] == 1 && deg[f] > 1)
			band[t] = v->boxes[f].rank / OXR_BAND_RANKS;
		else if (deg[f] == 1 && deg[t] > 1)
			band[f] = v->boxes[t].rank / OXR_BAND_RANKS;
	}
	free(deg);
	return band;
}

/* A view deeper than Graphviz's dot can rank (it crashes in mincross past about 32,767
 * ranks: decision 93) is laid out in bands of OXR_BAND_RANKS ranks, one dot layout each,
 * stacked along the flow and centred across it; the few edges between bands (long ones
 * are stubs already: view.c's cut_long_edges) are drawn by band_edge.  Only views without
 * clusters come here (a cluster may span bands). */
static oxr_code layout_bands(view *v, GVC_t *ctx, uint32_t nbands, oxr_error *err)
{
	const double gap = 24; /* between bands: about a rank's spacing */
	double along = 0, across = 0;
	double *size = calloc((size_t)nbands * 2, sizeof(double));
	uint32_t *band = bands_of(v);
	if (size == NULL || band == NULL) {
		free(size);
		free(band);
		return oxr__fail(err, OXR_E_NOMEM, "out of memory");
	}
	oxr_code rc = OXR_OK;
	for (uint32_t k = 0; k < nbands && rc == OXR_OK; k++) {
		double w = 0, h = 0;
		rc = layout_part(v, ctx, false, NULL, band, k, &w, &h, err);
		/* TB: bands go down, LR: right */
		size[2 * k] = v->o.rankdir_lr ? h : w;
		size[2 * k + 1] = v->o.rankdir_lr ? w : h;
		across = fmax(across, size[2 * k]);
	}
	for (uint32_t k = 0; k < nbands && rc == OXR_OK; k++) {
		double centre = (across - size[2 * k]) / 2;
		part_move(v, band, k, v->o.rankdir_lr ? along : centre, v->o.rankdir_lr ? centre : along);
		along += size[2 * k + 1] + (k + 1 < nbands ? gap : 0);
	}
	for (uint32_t i = 0; i < v->nedges && rc == OXR_OK; i++) {
		vedge *e = &v->edges[i];
		if (band[e->from] != band[e->to] && !band_edge(v, e))
			rc = oxr__fail(err, OXR_E_NOMEM, "out of memory");
	}
	v->width = v->o.rankdir_lr ? along : across;
	v->height = v->o.rankdir_lr ? across : along;
	free(size);
	free(band);
	return rc;
}

/* Each label moved to a free place beside its line (labels.c), over the whole drawing once
 * its parts are composed; the drawing grows to hold a label moved past its right edge. */
static oxr_code labels_finish(view *v, oxr_error *err)
{
	double label_right;
	oxr_code rc = oxr__labels_place(v, &label_right, err);
	if (rc == OXR_OK && label_right > v->width)
		v->width = ceil(label_right);
	return rc;
}

oxr_code oxr__layout(view *v, oxr_format fmt, oxr_buf *dot_out, oxr_error *err)
{
	GVC_t *ctx = context();
	/* a library that could not be mapped is out of memory, not a layout's failure */
	if (ctx == NULL)
		return oxr__fail(err, !gv_loaded && oxr_dlopen_nomem(gv_load_err) ? OXR_E_NOMEM : OXR_E_LAYOUT,
		                 "Graphviz: %s", gv_loaded ? "no context could be made" : gv_load_err);
	const char *nslimit, *spline_mode, *mclimit;
	settings(v, &nslimit, &spline_mode, &mclimit);
	/* the record says how many bands a view deeper than dot can rank was laid out in */
	bool banded = fmt != OXR_FMT_DOT && oxr__layout_banded(v);
	uint32_t nbands = banded ? (v->nranks + OXR_BAND_RANKS - 1) / OXR_BAND_RANKS : 1;
	char bands[24] = "";
	if (banded)
		snprintf(bands, sizeof(bands), " bands=%u", nbands);
	snprintf(v->settings, sizeof(v->settings), "newrank=true nslimit=%s mclimit=%s splines=%s%s",
	         nslimit ? nslimit : "default", mclimit ? mclimit : "default", spline_mode, bands);
	oxr_code rc = banded ? layout_bands(v, ctx, nbands, err)
	                     : layout_part(v, ctx, fmt == OXR_FMT_DOT, dot_out, NULL, 0, &v->width,
	                                   &v->height, err);
	return rc == OXR_OK && fmt != OXR_FMT_DOT ? labels_finish(v, err) : rc;
}
