/*
 * labels.c — where an edge's shape label is drawn, so that it covers neither a box nor
 * another label.
 *
 * A label starts just past the producer's box, where its edge leaves it (layout.c): right
 * of the line below the box (TB), above it to the right (LR).  Edges leaving neighbouring
 * boxes, or one box at nearby points, put their labels side by side on one baseline
 * (`u8 1×64×56×56u8 1×64×56×56`), and a label runs into a taller box of the same rank
 * (`…×3072batch_size×sequence_len…` over the Gather box; issue 39).  Here each label, in
 * reading order (top to bottom, then left to right), takes the first of a few places
 * beside its line that is free: the default, the other side of the line, then one and two
 * lines further along the edge; a label with no free place is not drawn (its text stays in
 * the edge's title, the SVG's <title> and the layout JSON's `label`).
 *
 * Free is asked of a uniform grid of the boxes and of the labels placed so far (cells of
 * CELL units, grown so that a drawing never has more than MAX_CELLS), so a drawing of
 * 10,000 boxes costs a few cell lookups per label.
 */
#include "render/internal.h"

#include <math.h>
#include <stdlib.h>

#define CELL 48.0
#define MAX_CELLS (1u << 20)
/* a label's box around its baseline: the font's ascent above, its descent below */
#define ASCENT 7.0
#define DESCENT 2.0
/* the gap kept between a label and what is beside it */
#define GAP 1.0

typedef struct rect {
	double x0, y0, x1, y1;
} rect;

typedef struct grid {
	double cell;
	uint32_t cols, rows;
	int32_t *head;   /* per cell: first entry, -1 when none */
	struct {
		int32_t rect, next;
	} *entries;
	size_t nentries, cap;
	rect *rects;
	size_t nrects;
} grid;

static uint32_t cell_of(const grid *g, double v, uint32_t n)
{
	if (!(v > 0))
		return 0;
	double c = floor(v / g->cell);
	return c >= (double)(n - 1) ? n - 1 : (uint32_t)c;
}

/* False when out of memory. */
static bool grid_add(grid *g, rect r)
{
	uint32_t c0 = cell_of(g, r.x0, g->cols), c1 = cell_of(g, r.x1, g->cols);
	uint32_t r0 = cell_of(g, r.y0, g->rows), r1 = cell_of(g, r.y1, g->rows);
	size_t need = (size_t)(c1 - c0 + 1) * (r1 - r0 + 1);
	if (g->nentries + need > g->cap) {
		size_t cap = g->cap ? g->cap : 1024;
		while (cap < g->nentries + need)
			cap *= 2;
		void *p = realloc(g->entries, cap * sizeof(*g->entries));
		if (p == NULL)
			return false;
		g->entries = p;
		g->cap = cap;
	}
	int32_t id = (int32_t)g->nrects;
	g->rects[g->nrects++] = r;
	for (uint32_t y = r0; y <= r1; y++)
		for (uint32_t x = c0; x <= c1; x++) {
			size_t cell = (size_t)y * g->cols + x;
			g->entries[g->nentries].rect = id;
			g->entries[g->nentries].next = g->head[cell];
			g->head[cell] = (int32_t)g->nentries++;
		}
	return true;
}

/* Whether r overlaps a rect of the grid. */
static bool grid_hits(const grid *g, rect r)
{
	uint32_t c0 = cell_of(g, r.x0, g->cols), c1 = cell_of(g, r.x1, g->cols);
	uint32_t r0 = cell_of(g, r.y0, g->rows), r1 = cell_of(g, r.y1, g->rows);
	for (uint32_t y = r0; y <= r1; y++)
		for (uint32_t x = c0; x <= c1; x++)
			for (int32_t k = g->head[(size_t)y * g->cols + x]; k >= 0; k = g->entries[k].next) {
				const rect *o = &g->rects[g->entries[k].rect];
				if (r.x0 < o->x1 && o->x0 < r.x1 && r.y0 < o->y1 && o->y0 < r.y1)
					return true;
			}
	return false;
}

/* The order labels are placed in: top to bottom, then left to right. */
typedef struct place {
	double y, x;
	uint32_t edge;
} place;

static int by_place(const void *a, const void *b)
{
	const place *pa = a, *pb = b;
	if (pa->y != pb->y)
		return pa->y < pb->y ? -1 : 1;
	if (pa->x != pb->x)
		return pa->x < pb->x ? -1 : 1;
	return pa->edge < pb->edge ? -1 : 1;
}

oxr_code oxr__labels_place(view *v, double *right, oxr_error *err)
{
	*right = 0;
	uint32_t nl = 0;
	for (uint32_t i = 0; i < v->nedges; i++)
		if (v->edges[i].label != NULL && v->edges[i].npts >= 4)
			nl++;
	if (nl == 0)
		return OXR_OK;
	grid g = {0};
	g.cell = CELL;
	double w = v->width > 1 ? v->width : 1, h = v->height > 1 ? v->height : 1;
	for (;;) {
		double cells = (floor(w / g.cell) + 1) * (floor(h / g.cell) + 1);
		if (cells <= MAX_CELLS)
			break;
		g.cell *= 2;
	}
	g.cols = (uint32_t)(floor(w / g.cell) + 1);
	g.rows = (uint32_t)(floor(h / g.cell) + 1);
	oxr_code rc = OXR_OK;
	place *order = malloc((size_t)nl * sizeof(*order));
	g.head = malloc((size_t)g.cols * g.rows * sizeof(*g.head));
	g.rects = malloc(((size_t)v->nboxes + nl) * sizeof(*g.rects));
	if (order == NULL || g.head == NULL || g.rects == NULL) {
		rc = oxr__fail(err, OXR_E_NOMEM, "out of memory");
		goto out;
	}
	for (size_t c = 0; c < (size_t)g.cols * g.rows; c++)
		g.head[c] = -1;
	for (uint32_t i = 0; i < v->nboxes; i++) {
		const vbox *b = &v->boxes[i];
		double pad = oxr__stack_pad(b); /* a run's stack, drawn down and to the right */
		rect r = {b->x - b->w / 2 - GAP, b->y - b->h / 2 - GAP, b->x + b->w / 2 + pad + GAP,
		          b->y + b->h / 2 + pad + GAP};
		if (!grid_add(&g, r)) {
			rc = oxr__fail(err, OXR_E_NOMEM, "out of memory");
			goto out;
		}
	}
	nl = 0;
	for (uint32_t i = 0; i < v->nedges; i++)
		if (v->edges[i].label != NULL && v->edges[i].npts >= 4)
			order[nl++] = (place){v->edges[i].ly, v->edges[i].lx, i};
	qsort(order, nl, sizeof(*order), by_place);
	bool lr = v->o.rankdir_lr;
	for (uint32_t k = 0; k < nl; k++) {
		vedge *e = &v->edges[order[k].edge];
		double lw = oxr__text_width(e->label, OXR_LABEL_SIZE, false);
		double sx = e->pts[0], sy = e->pts[1];
		/* beside the line where it leaves the box, then further along it */
		double at[][2] = {
		    {e->lx, e->ly},
		    {lr ? sx + 3 : sx - 4 - lw, lr ? sy + 10 : sy + 9},
		    {lr ? sx + 3 : sx + 4, lr ? sy - 13 : sy + 19},
		    {lr ? sx + 3 : sx - 4 - lw, lr ? sy + 20 : sy + 19},
		    {lr ? sx + 3 : sx + 4, lr ? sy - 23 : sy + 29},
		    {lr ? sx + 3 : sx - 4 - lw, lr ? sy + 30 : sy + 29},
		};
		bool placed = false;
		for (size_t c = 0; c < sizeof(at) / sizeof(at[0]) && !placed; c++) {
			rect r = {at[c][0], at[c][1] - ASCENT, at[c][0] + lw, at[c][1] + DESCENT};
			/* inside the drawing across (TB): past its right edge a label is cut off by
			 * nothing but would widen it; the default place may (layout.c widens it) */
			if (r.x0 < 0 || r.y0 < 0 || (c > 0 && !lr && r.x1 > v->width) || grid_hits(&g, r))
				continue;
			e->lx = at[c][0];
			e->ly = at[c][1];
			*right = fmax(*right, r.x1);
			if (!grid_add(&g, r)) {
				rc = oxr__fail(err, OXR_E_NOMEM, "out of memory");
				goto out;
			}
			placed = true;
		}
		e->label_hidden = !placed;
	}
out:
	free(order);
	free(g.head);
	free(g.entries);
	free(g.rects);
	return rc;
}
