/*
 * card.c — a model's card: the 1200 x 630 image (the Open Graph size) a chat, a registry
 * page or a link preview shows for a model (render/oxr.h, oxr_card_png).
 *
 * On the left its name (the one it was uploaded under, else the main graph's), producer and opset, and three figures: nodes,
 * parameters, MACs (the summary's and parser/cost.c's, as docs/cost.md gives them); on
 * the right its overview (the default drawing, group=auto) fitted into a panel, top to
 * bottom or left to right, whichever draws it larger; a drawing so long that fitted whole
 * its text would be under 3 px (a chain of a hundred boxes) shows its start instead, at a
 * readable scale, fading out at the panel's foot (raster.c).  The page and its texts are an SVG
 * written here (model text escaped, cut to fit with the drawings' own text metrics), the
 * overview is our SVG as drawn everywhere else; raster.c draws both with librsvg.
 */
#include "render/internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The card's layout, in card units (CSS px of the 1200 x 630 card). */
#define LEFT_X 56.0         /* the text column */
#define LEFT_W 340.0
#define PANEL_X 432.0       /* the drawing's panel */
#define PANEL_Y 32.0
#define PANEL_W 736.0
#define PANEL_H 566.0
#define PAD 18.0            /* inside the panel, around the drawing */
#define FONT "Helvetica, Arial, sans-serif"

/* "1.24 M", "138 k", "7": three significant digits, SI suffix */
static void si(uint64_t n, char *buf, size_t size)
{
	static const char *const suffix[] = {"", " k", " M", " G", " T", " P", " E"};
	double v = (double)n;
	int i = 0;
	while (v >= 999.5 && i < 6) {
		v /= 1000;
		i++;
	}
	if (i == 0)
		snprintf(buf, size, "%llu", (unsigned long long)n);
	else
		snprintf(buf, size, v < 9.995 ? "%.2f%s" : v < 99.95 ? "%.1f%s" : "%.0f%s", v,
		         suffix[i]);
}

/* The width and height of one of our SVGs (its root element's attributes). */
static bool svg_size(const oxr_buf *svg, double *w, double *h)
{
	const char *root = svg->data != NULL ? strstr(svg->data, "<svg ") : NULL;
	const char *ws = root != NULL ? strstr(root, " width=\"") : NULL;
	const char *hs = root != NULL ? strstr(root, " height=\"") : NULL;
	return ws != NULL && hs != NULL && sscanf(ws + 8, "%lf", w) == 1 &&
	       sscanf(hs + 9, "%lf", h) == 1 && *w > 0 && *h > 0;
}

/* The overview into out (TB, or LR when that draws it larger in the panel); *w, *h its
 * size. */
static oxr_code overview(const oxp_model *m, const oxp_dag *d, oxr_buf *out, double *w,
                         double *h, oxr_error *err)
{
	double bw = PANEL_W - 2 * PAD, bh = PANEL_H - 2 * PAD;
	oxr_options o;
	oxr_options_default(&o);
	oxr_code rc = oxr_render(m, d, &o, OXR_FMT_SVG, out, err);
	if (rc != OXR_OK)
		return rc;
	if (!svg_size(out, w, h))
		return oxr__fail(err, OXR_E_LAYOUT, "the overview has no size");
	double k = fmin(bw / *w, bh / *h);
	if (*h / *w < 1.2) /* already wide: left to right would not draw it larger */
		return OXR_OK;
	oxr_buf lr;
	oxr_buf_init(&lr, out->max);
	o.rankdir_lr = true;
	double lw, lh;
	if (oxr_render(m, d, &o, OXR_FMT_SVG, &lr, err) == OXR_OK && svg_size(&lr, &lw, &lh) &&
	    fmin(bw / lw, bh / lh) > k * 1.15) {
		oxr_buf_free(out);
		*out = lr;
		*w = lw;
		*h = lh;
		return OXR_OK;
	}
	oxr_buf_free(&lr);
	return OXR_OK;
}

/* A line of text in the left column: model text cut to fit LEFT_W (start kept). */
static void text(oxr_buf *o, oxp_arena *a, double y, double size, bool bold, const char *fill,
                 const char *s)
{
	const char *fit = oxr__text_fit(a, s, size, bold, LEFT_W, false);
	oxr_buf_printf(o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.0f\"%s fill=\"%s\">", LEFT_X, y,
	               size, bold ? " font-weight=\"bold\"" : "", fill);
	oxr_buf_xml(o, fit);
	oxr_buf_append(o, "</text>\n", 8);
}

/* The model's name (the uploaded one, else the main graph's, else "ONNX model"); one line at 40 px, else two at
 * 34 px broken after a '/', '_', '-', '.' or ' ' (the second cut with an ellipsis when
 * still too long), else one line at 30 px cut.  Returns the y below it. */
static double title_lines(oxr_buf *o, oxp_arena *a, const char *name, double y)
{
	if (oxr__text_width(name, 40, true) <= LEFT_W) {
		text(o, a, y, 40, true, "#1f2328", name);
		return y + 16;
	}
	/* two lines: break at the last '/', '_', '-', '.' or ' ' that leaves a first line
	 * that fits, else cut */
	size_t n = strlen(name), best = 0;
	/* after a '/' or ' ' first (a scope path, words), else '_', '-' or '.' */
	static const char *const breaks[] = {"/ ", "_-."};
	for (int pass = 0; pass < 2 && best == 0; pass++) {
		for (size_t i = 1; i < n; i++) {
			if (strchr(breaks[pass], name[i]) == NULL)
				continue;
			char first[256];
			if (i + 1 >= sizeof(first))
				break;
			memcpy(first, name, i + 1);
			first[i + 1] = '\0';
			if (oxr__text_width(first, 34, true) <= LEFT_W)
				best = i + 1;
		}
	}
	if (best > 0) { /* the rest on the second line, cut with an ellipsis when longer */
		char first[256];
		memcpy(first, name, best);
		first[best] = '\0';
		text(o, a, y - 4, 34, true, "#1f2328", first);
		text(o, a, y + 36, 34, true, "#1f2328", name + best);
		return y + 52;
	}
	text(o, a, y, 30, true, "#1f2328", name);
	return y + 16;
}

/* One figure: the number large (smaller when a figure with symbols is long), what it
 * counts below. */
static void figure(oxr_buf *o, oxp_arena *a, double y, const char *value, const char *what)
{
	double size = oxr__text_width(value, 38, true) <= LEFT_W   ? 38
	              : oxr__text_width(value, 26, true) <= LEFT_W ? 26
	                                                           : 20;
	text(o, a, y, size, true, "#1f2328", value);
	text(o, a, y + 26, 17, false, "#57606a", what);
}

/* The uploaded name, when it is text a card may show: valid UTF-8, 1..OXR_CARD_TITLE_MAX
 * bytes, no control characters (a name is one line). */
static bool title_ok(const char *t)
{
	size_t n = t != NULL ? strlen(t) : 0;
	if (n == 0 || n > OXR_CARD_TITLE_MAX)
		return false;
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t k = oxr__utf8_at((const unsigned char *)t, n, i, &cp);
		if (k == 0 || cp < 0x20 || (cp >= 0x7f && cp < 0xa0) || cp == 0x2028 || cp == 0x2029)
			return false;
		i += k;
	}
	return true;
}

oxr_code oxr_card_png(const oxp_model *m, const oxp_dag *d, const char *title,
                      const oxr_raster *r, oxr_buf *out, oxr_error *err)
{
	const oxp_dag_view *v = oxp_dag_get(d);
	const oxp_model_proto *p = oxp_model_proto_get(m);
	oxp_arena *a = oxp_arena_new((size_t)64 << 20);
	if (a == NULL)
		return oxr__fail(err, OXR_E_NOMEM, "out of memory");
	oxr_buf draw, frame;
	oxr_buf_init(&draw, (size_t)256 << 20);
	oxr_buf_init(&frame, (size_t)1 << 20);
	double dw = 0, dh = 0;
	oxr_code rc = overview(m, d, &draw, &dw, &dh, err);
	/* the figures: nodes and parameters as the summary counts them, MACs as cost.json's
	 * total ("3.7 G·batch + 12 M" when dims are left symbols) */
	char nodes[32], params[32], macs[96] = "unknown";
	si(v->nnodes, nodes, sizeof(nodes));
	si(v->summary.parameters, params, sizeof(params));
	const oxp_cost *c = NULL;
	oxp_arena *ca = oxp_arena_new((size_t)512 << 20);
	if (ca != NULL && oxp_cost_compute(d, ca, NULL, &c, NULL) == OXP_OK)
		oxp_cost_poly_format(c, &c->total.macs, 0, macs, sizeof(macs));
	const char *graph = p->graph != NULL && p->graph->name.len > 0
	                        ? oxr__text(a, p->graph->name, 120)
	                        : NULL;
	/* the name it was uploaded under first, the graph's below it when another */
	const char *name = title_ok(title) ? title : graph != NULL ? graph : "ONNX model";
	const char *under = graph != NULL && strcmp(graph, name) != 0 ? graph : NULL;
	char by[300] = "";
	if (p->producer_name.len > 0)
		snprintf(by, sizeof(by), "%s %s", oxr__text(a, p->producer_name, 40),
		         oxr__text(a, p->producer_version, 24));
	int64_t opset = -1;
	for (size_t i = 0; i < p->nopset_import; i++)
		if (p->opset_import[i].domain.len == 0 ||
		    oxp_str_eq(p->opset_import[i].domain, "ai.onnx"))
			opset = p->opset_import[i].version;
	if (opset >= 0) {
		size_t l = strlen(by);
		snprintf(by + l, sizeof(by) - l, "%sopset %lld", l ? " · " : "", (long long)opset);
	}

	oxr_buf_printf(&frame,
	               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" height=\"%u\" "
	               "viewBox=\"0 0 %u %u\" font-family=\"" FONT "\">\n"
	               "<rect width=\"%u\" height=\"%u\" fill=\"#f6f8fa\"/>\n"
	               "<rect width=\"%u\" height=\"6\" fill=\"#2f6feb\"/>\n"
	               "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" rx=\"14\" "
	               "fill=\"#ffffff\" stroke=\"#d0d7de\" stroke-width=\"1.5\"/>\n",
	               OXR_CARD_W, OXR_CARD_H, OXR_CARD_W, OXR_CARD_H, OXR_CARD_W, OXR_CARD_H,
	               OXR_CARD_W, PANEL_X, PANEL_Y, PANEL_W, PANEL_H);
	text(&frame, a, 78, 15, true, "#2f6feb", "ONNX MODEL");
	double y = title_lines(&frame, a, name, 128);
	if (under != NULL) {
		text(&frame, a, y + 22, 18, true, "#57606a", under);
		y += 26;
	}
	if (by[0] != '\0')
		text(&frame, a, y + 22, 18, false, "#57606a", by);
	figure(&frame, a, 318, nodes, v->nnodes == 1 ? "node" : "nodes");
	figure(&frame, a, 418, params, "parameters");
	/* subgraphs (If, Loop bodies) are counted apart in cost.json: say what this is */
	figure(&frame, a, 518, macs,
	       v->summary.nsubgraphs > 0 ? "MACs, main graph" : "MACs per run");
	text(&frame, a, 596, 15, false, "#8c959f", "drawn by onnxviz");
	oxr_buf_append(&frame, "</svg>\n", 7);
	if (rc == OXR_OK && (frame.failed || oxp_arena_failed(a)))
		rc = oxr__fail(err, OXR_E_NOMEM, "out of memory");
	if (rc == OXR_OK) {
		const double box[4] = {PANEL_X + PAD, PANEL_Y + PAD, PANEL_W - 2 * PAD,
		                       PANEL_H - 2 * PAD};
		rc = oxr__raster_card(frame.data, frame.len, draw.data, draw.len, box, name, r, out,
		                      err);
	}
	oxp_arena_free(ca);
	oxp_arena_free(a);
	oxr_buf_free(&draw);
	oxr_buf_free(&frame);
	return rc;
}
