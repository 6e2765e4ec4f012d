/*
 * heat_draw.c — an overlay drawn as heat: box fills on a colour-blind-safe sequential
 * scale, a value row, a legend (docs/overlays.md).
 */
#include "render/heat_int.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The sequential scale and the text on its fills are style.c's (oxr__heat_color,
 * oxr__heat_text: magma's light end to 0.2, black or white text, whichever contrasts more,
 * at least 4.58:1), the same in both themes. */
static bool white_text(const unsigned char rgb[3])
{
	return oxr__heat_text(rgb)[1] == 'f';
}

/* A comparison (oxr_heat_compare) is drawn on a diverging scale of 9 classes of B - A:
 * blue where B is faster (smaller), orange where it is slower, a neutral grey within 2% of
 * the largest change; classes at 2, 10, 30 and 60% of it.  Blue and orange stay apart for
 * the common colour-vision deficiencies, and every fill has text of contrast 4.5:1 or
 * more (the light ones: dark text; the two darkest: white; WCAG's relative luminance). */
static const char *const diverging[9] = {"#08519c", "#7fb2de", "#c6dbef", "#deebf7", "#f5f5f5",
                                         "#feedde", "#fdd0a2", "#f9a75a", "#a63603"};
static const double div_steps[4] = {0.02, 0.1, 0.3, 0.6};

static int div_class(double x, double maxabs)
{
	double t = maxabs > 0 ? fabs(x) / maxabs : 0;
	int k = 0;
	while (k < 4 && t > div_steps[k])
		k++;
	return 4 + (x < 0 ? -k : k);
}

/* Where v falls on the scale, 0..1 */
static double scale_pos(const view *v, double x)
{
	double lo = v->heat_lo, hi = v->heat_hi;
	switch (v->ov->heat_scale) {
	case OXR_HEAT_LOG:
		if (!(x > 0) || !(hi > 0))
			return 0;
		if (hi <= lo)
			return 1;
		return (log(x) - log(lo)) / (log(hi) - log(lo));
	case OXR_HEAT_THRESHOLDS: {
		uint32_t bin = 0;
		for (uint32_t i = 0; i < v->heat_nthr; i++)
			if (x >= v->heat_thr[i])
				bin = i + 1;
		return v->heat_nthr ? (double)bin / v->heat_nthr : 0;
	}
	default:
		return hi > 0 ? x / hi : 0;
	}
}

/* The box a node's figure shows on: its own, or for a node folded into its consumers
 * (constants, bookkeeping: Shape, Gather of shapes, ...) the box of the first consumer
 * drawn, a few steps down at most; *at: the node drawn in it. */
static uint32_t box_of(const view *v, uint32_t n, uint32_t *at)
{
	for (int step = 0; step < 16 && n != OXP_NONE; step++) {
		uint32_t bi = v->node_box[n];
		if (bi != OXP_NONE && bi < v->nboxes) {
			*at = n;
			return bi;
		}
		n = oxr__heat_first_consumer(v->dv, n);
	}
	return OXP_NONE;
}

/* A stack's hottest repetition as its members are named: "layers.3", or with a period
 * "features.4–5" */
static void rep_name(const vbox *b, char *buf, size_t size)
{
	uint64_t lo = (uint64_t)b->rep_first + (uint64_t)b->heat_rep * b->rep_period;
	if (b->rep_period > 1)
		snprintf(buf, size, "%s%" PRIu64 "\xe2\x80\x93%" PRIu64, b->rep_key ? b->rep_key : "",
		         lo, lo + b->rep_period - 1);
	else
		snprintf(buf, size, "%s%" PRIu64, b->rep_key ? b->rep_key : "", lo);
}

/* A comparison's boxes: B - A summed per box, its class's fill, a row "+1.2 ms · ×1.45"
 * (or "only in A"/"only in B" when every node of the box with a figure is so). */
static oxr_code compare_apply(view *v, oxr_error *err)
{
	const oxr_heat *h = v->ov->heat;
	size_t nb = v->nboxes ? v->nboxes : 1;
	double *sum = malloc(nb * 3 * sizeof(double)); /* diff, a, b per box */
	uint8_t *sides = calloc(nb, 1);
	if (sum == NULL || sides == NULL) {
		free(sum);
		free(sides);
		return oxr__fail(err, OXR_E_NOMEM, "out of memory");
	}
	for (size_t i = 0; i < nb * 3; i++)
		sum[i] = NAN;
	double total = 0;
	for (uint32_t n = 0; n < h->nnodes; n++) {
		const double *x = h->values + (size_t)n * h->nmetrics;
		if (!isfinite(x[0]))
			continue;
		total += x[0];
		uint32_t rn = OXP_NONE, bi = box_of(v, n, &rn);
		if (bi == OXP_NONE)
			continue;
		double add[3] = {x[0], isfinite(x[2]) ? x[2] : 0, isfinite(x[3]) ? x[3] : 0};
		for (int k = 0; k < 3; k++)
			sum[bi * 3 + (size_t)k] = isnan(sum[bi * 3 + (size_t)k]) ? add[k]
			                                                          : sum[bi * 3 + (size_t)k] + add[k];
		sides[bi] |= h->side[n];
	}
	double maxabs = 0;
	for (uint32_t i = 0; i < v->nboxes; i++)
		if (isfinite(sum[i * 3]) && fabs(sum[i * 3]) > maxabs)
			maxabs = fabs(sum[i * 3]);
	v->heat_lo = -maxabs;
	v->heat_hi = maxabs;
	v->heat_total = total;
	v->heat_nthr = 0;
	for (uint32_t i = 0; i < v->nboxes; i++) {
		double d = sum[i * 3], a = sum[i * 3 + 1], bsum = sum[i * 3 + 2];
		if (!isfinite(d))
			continue;
		vbox *b = &v->boxes[i];
		int cls = div_class(d, maxabs);
		b->heat = true;
		b->heat_value = d;
		b->heat_dark = cls == 0 || cls == 8;
		b->heat_fill = diverging[cls];
		b->heat_fused = OXP_NONE;
		char val[48], row[128];
		oxr_heat_format(h, 0, d, val, sizeof(val));
		const char *sign = d > 0 ? "+" : "";
		if (sides[i] == 1 || sides[i] == 2)
			snprintf(row, sizeof(row), "only in %s · %s%s", sides[i] == 1 ? "A" : "B", sign, val);
		else if (a > 0)
			snprintf(row, sizeof(row), "%s%s · ×%.2f", sign, val, bsum / a);
		else
			snprintf(row, sizeof(row), "%s%s", sign, val);
		const char *text = oxp_arena_printf(v->arena, "%s", row);
		if (text != NULL && oxr__add_row(v, b, ROW_SUB, text))
			b->rows[b->nrows - 1].heat = true;
	}
	free(sum);
	free(sides);
	return OXR_OK;
}

oxr_code oxr__heat_apply(view *v, oxr_error *err)
{
	const oxr_heat *h = v->ov->heat;
	uint32_t m = v->ov->heat_metric;
	if (m >= h->nmetrics || h->nnodes != v->dv->nnodes)
		return oxr__fail(err, OXR_E_OPTION, "the overlay does not fit this model");
	bool sum = h->sums[m];
	double *bv = malloc((size_t)(v->nboxes ? v->nboxes : 1) * sizeof(double));
	uint32_t *bf = malloc((size_t)(v->nboxes ? v->nboxes : 1) * sizeof(uint32_t));
	if (bv == NULL || bf == NULL) {
		free(bv);
		free(bf);
		return oxr__fail(err, OXR_E_NOMEM, "out of memory");
	}
	/* a ×N stack's repetitions: each one's figure (aggregated as the box's), from
	 * rep_at[box] on in rv */
	uint32_t *rep_at = malloc((size_t)(v->nboxes ? v->nboxes : 1) * sizeof(uint32_t));
	size_t nrv = 0;
	for (uint32_t i = 0; rep_at != NULL && i < v->nboxes; i++) {
		v->boxes[i].heat_rep = -1;
		rep_at[i] = (uint32_t)nrv;
		if (v->boxes[i].reps > 0 && v->node_rep != NULL)
			nrv += v->boxes[i].reps; /* at most 4x the dag's nodes in all (hier.c) */
	}
	double *rv = rep_at != NULL ? malloc((nrv ? nrv : 1) * sizeof(double)) : NULL;
	if (rv == NULL) {
		free(bv);
		free(bf);
		free(rep_at);
		return oxr__fail(err, OXR_E_NOMEM, "out of memory");
	}
	for (size_t i = 0; i < nrv; i++)
		rv[i] = NAN;
	for (uint32_t i = 0; i < v->nboxes; i++) {
		bv[i] = NAN;
		bf[i] = OXP_NONE;
	}
	double total = 0;
	for (uint32_t n = 0; n < h->nnodes; n++) {
		double x = h->values[(size_t)n * h->nmetrics + m];
		if (!isfinite(x))
			continue;
		total += x;
		uint32_t rn = OXP_NONE; /* the node drawn in it: a stack's member */
		uint32_t bi = box_of(v, n, &rn);
		if (bi == OXP_NONE)
			continue;
		bv[bi] = isnan(bv[bi]) ? x : sum ? bv[bi] + x : fmax(bv[bi], x);
		if (h->fused[n] != OXP_NONE && v->boxes[bi].kind == BX_OP)
			bf[bi] = n;
		uint32_t r = rn != OXP_NONE && v->node_rep != NULL ? v->node_rep[rn] : OXP_NONE;
		if (r != OXP_NONE && r < v->boxes[bi].reps) {
			double *y = &rv[rep_at[bi] + r];
			*y = isnan(*y) ? x : sum ? *y + x : fmax(*y, x);
		}
	}
	for (uint32_t i = 0; i < v->nboxes; i++) {
		vbox *b = &v->boxes[i];
		for (uint32_t r = 0; r < b->reps && v->node_rep != NULL; r++) {
			double y = rv[rep_at[i] + r];
			if (isfinite(y) && (b->heat_rep < 0 || y > b->heat_rep_value)) {
				b->heat_rep = (int32_t)r;
				b->heat_rep_value = y;
			}
		}
	}
	free(rv);
	free(rep_at);
	double lo = INFINITY, hi = 0;
	for (uint32_t i = 0; i < v->nboxes; i++)
		if (isfinite(bv[i])) {
			if (bv[i] > hi)
				hi = bv[i];
			if (bv[i] > 0 && bv[i] < lo)
				lo = bv[i];
		}
	if (!isfinite(lo))
		lo = hi;
	if (v->ov->heat_scale == OXR_HEAT_LOG && hi > 0 && lo < hi * 1e-4)
		lo = hi * 1e-4; /* four decades: smaller values share the coldest colour */
	v->heat_lo = lo;
	v->heat_hi = hi;
	v->heat_total = sum ? total : NAN;
	/* thresholds: the input's (Model Explorer), else shares of the total (sums) or of the
	 * largest value (max): 0.1%, 1%, 5%, 10% */
	if (h->nthresholds > 0) {
		v->heat_nthr = h->nthresholds < 8 ? h->nthresholds : 8;
		for (uint32_t i = 0; i < v->heat_nthr; i++)
			v->heat_thr[i] = h->thresholds[i];
	} else {
		static const double q[4] = {0.001, 0.01, 0.05, 0.1};
		v->heat_nthr = 4;
		for (int i = 0; i < 4; i++)
			v->heat_thr[i] = q[i] * (sum ? total : hi * 10);
	}
	if (h->side != NULL) {
		free(bv);
		free(bf);
		return compare_apply(v, err);
	}
	for (uint32_t i = 0; i < v->nboxes; i++) {
		if (!isfinite(bv[i]))
			continue;
		vbox *b = &v->boxes[i];
		unsigned char rgb[3];
		oxr__heat_color(scale_pos(v, bv[i]), rgb);
		b->heat = true;
		b->heat_value = bv[i];
		b->heat_dark = white_text(rgb);
		b->heat_fill = oxp_arena_printf(v->arena, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
		b->heat_fused = bf[i];
		char val[48], row[128];
		oxr_heat_format(h, m, bv[i], val, sizeof(val));
		int len;
		const char *tot = sum && b->heat_rep >= 0 ? "total " : ""; /* a stack's */
		if (sum && total > 0)
			len = snprintf(row, sizeof(row), "%s%s · %.1f%%", tot, val, 100 * bv[i] / total);
		else
			len = snprintf(row, sizeof(row), "%s%s", tot, val);
		if (bf[i] != OXP_NONE && len > 0 && (size_t)len < sizeof(row))
			snprintf(row + len, sizeof(row) - (size_t)len, " · fused ×%u",
			         h->fused_size[bf[i]]);
		const char *text = oxp_arena_printf(v->arena, "%s", row);
		if (text != NULL && oxr__add_row(v, b, ROW_SUB, text))
			b->rows[b->nrows - 1].heat = true;
		if (b->heat_rep >= 0) { /* a stack: its total above, its hottest repetition here */
			char key[64];
			rep_name(b, key, sizeof(key));
			oxr_heat_format(h, m, b->heat_rep_value, val, sizeof(val));
			text = oxp_arena_printf(v->arena, "hottest %s: %s", key, val);
			if (text != NULL && oxr__add_row(v, b, ROW_SUB, text))
				b->rows[b->nrows - 1].heat = true;
		}
	}
	free(bv);
	free(bf);
	return OXR_OK;
}

#define LEGEND_SW 18.0 /* a swatch's width */

static const char *legend_caption(const view *v, char *buf, size_t size)
{
	const oxr_heat *h = v->ov->heat;
	uint32_t m = v->ov->heat_metric;
	if (h->side != NULL) {
		snprintf(buf, size, "%s%s%s%s: B − A · blue: B faster, orange: B slower · ×: B / A",
		         h->compare_metric, h->units[0][0] ? " (" : "", h->units[0],
		         h->units[0][0] ? ")" : "");
		return buf;
	}
	static const char *const scales[] = {"linear", "log", "thresholds"};
	snprintf(buf, size, "%s%s%s%s · %s scale · groups show the %s", h->metrics[m],
	         h->units[m][0] ? " (" : "", h->units[m], h->units[m][0] ? ")" : "",
	         scales[v->ov->heat_scale % 3], h->sums[m] ? "sum" : "largest");
	return buf;
}

/* Steps drawn: 9 for a continuous scale, bins for thresholds */
static uint32_t legend_steps(const view *v)
{
	if (v->ov->heat->side != NULL)
		return 9;
	return v->ov->heat_scale == OXR_HEAT_THRESHOLDS ? v->heat_nthr + 1 : 9;
}

static void step_label(const view *v, uint32_t i, char *buf, size_t size)
{
	const oxr_heat *h = v->ov->heat;
	uint32_t m = v->ov->heat_metric, n = legend_steps(v);
	buf[0] = '\0';
	if (h->side != NULL) { /* −max faster ... slower +max */
		char val[48];
		oxr_heat_format(h, 0, v->heat_hi, val, sizeof(val));
		if (i == 0)
			snprintf(buf, size, "faster −%s", val);
		else if (i == 4)
			snprintf(buf, size, "0");
		else if (i + 1 == n)
			snprintf(buf, size, "+%s slower", val);
		return;
	}
	if (v->ov->heat_scale == OXR_HEAT_THRESHOLDS) {
		if (i == 0)
			snprintf(buf, size, "<");
		char val[48];
		oxr_heat_format(h, m, v->heat_thr[i == 0 ? 0 : i - 1], val, sizeof(val));
		size_t l = strlen(buf);
		snprintf(buf + l, size - l, "%s%s", i == 0 ? " " : "≥ ", val);
	} else if (i == 0 || i + 1 == n) {
		oxr_heat_format(h, m, i == 0 ? (v->ov->heat_scale == OXR_HEAT_LOG ? v->heat_lo : 0)
		                             : v->heat_hi, buf, size);
	}
}

double oxr__heat_legend_width(const view *v)
{
	char buf[256];
	double x = 10;
	uint32_t n = legend_steps(v);
	for (uint32_t i = 0; i < n; i++) {
		step_label(v, i, buf, sizeof(buf));
		x += LEGEND_SW + (buf[0] ? oxr__text_width(buf, 10, false) + 8 : 0);
	}
	x += 14 + LEGEND_SW + 5 + oxr__text_width("no data", 10, false) + 14;
	x += oxr__text_width(legend_caption(v, buf, sizeof(buf)), 10, false) + 14;
	if (v->ov->legend != NULL)
		x += oxr__text_width(v->ov->legend, 10, false);
	return x + 10;
}

/* Step i of n of the legend: its colour and label; true when the label follows the swatch
 * (the top of a continuous scale) rather than leading it. */
static bool legend_step(const view *v, uint32_t i, uint32_t n, unsigned char rgb[3], char *buf,
                        size_t size)
{
	double t = v->ov->heat_scale == OXR_HEAT_THRESHOLDS ? (double)i / (n - 1) : (double)i / 8.0;
	oxr__heat_color(t, rgb);
	unsigned int c[3];
	if (v->ov->heat->side != NULL &&
	    sscanf(diverging[i % 9] + 1, "%2x%2x%2x", &c[0], &c[1], &c[2]) == 3)
		for (int k = 0; k < 3; k++)
			rgb[k] = (unsigned char)c[k];
	step_label(v, i, buf, size);
	return buf[0] && i + 1 == n && v->ov->heat_scale != OXR_HEAT_THRESHOLDS;
}

void oxr__heat_legend_svg(const view *v, oxr_buf *o, double y)
{
	const oxr_palette *pal = oxr__palette(v->o.theme_dark);
	char buf[256];
	double x = 10;
	uint32_t n = legend_steps(v);
	oxr_buf_printf(o, "<g id=\"legend\" class=\"legend heat-legend%s\">",
	               v->ov->heat->side != NULL ? " heat-diverging" : "");
	for (uint32_t i = 0; i < n; i++) {
		unsigned char rgb[3];
		if (legend_step(v, i, n, rgb, buf, sizeof(buf))) {
			oxr_buf_printf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"13\" "
			                  "fill=\"#%02x%02x%02x\"/>",
			               x, y, LEGEND_SW, rgb[0], rgb[1], rgb[2]);
			x += LEGEND_SW + 4;
			oxr_buf_printf(o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"%s\">",
			               x, y + 10.5, pal->legend_text);
			oxr_buf_xml(o, buf);
			oxr_buf_append(o, "</text>", 7);
			x += oxr__text_width(buf, 10, false) + 4;
			continue;
		}
		if (buf[0]) {
			oxr_buf_printf(o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"%s\">",
			               x, y + 10.5, pal->legend_text);
			oxr_buf_xml(o, buf);
			oxr_buf_append(o, "</text>", 7);
			x += oxr__text_width(buf, 10, false) + 4;
		}
		oxr_buf_printf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"13\" "
		                  "fill=\"#%02x%02x%02x\"/>",
		               x, y, LEGEND_SW, rgb[0], rgb[1], rgb[2]);
		x += LEGEND_SW + (buf[0] ? 4 : 0);
	}
	x += 14;
	oxr_buf_printf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"13\" fill=\"%s\" "
	                  "stroke=\"%s\"/><text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" "
	                  "fill=\"%s\">no data</text>",
	               x, y, LEGEND_SW, pal->op_fill, pal->op_stroke, x + LEGEND_SW + 5, y + 10.5,
	               pal->legend_text);
	x += LEGEND_SW + 5 + oxr__text_width("no data", 10, false) + 14;
	oxr_buf_printf(o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"%s\">", x,
	               y + 10.5, pal->legend_text);
	oxr_buf_xml(o, legend_caption(v, buf, sizeof(buf)));
	oxr_buf_append(o, "</text>", 7);
	x += oxr__text_width(buf, 10, false) + 14;
	if (v->ov->legend != NULL) {
		oxr_buf_printf(o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"%s\">",
		               x, y + 10.5, pal->legend_note);
		oxr_buf_xml(o, v->ov->legend);
		oxr_buf_append(o, "</text>", 7);
	}
	oxr_buf_append(o, "</g>\n", 5);
}

/* The legend of oxr__heat_legend_svg for clients that draw themselves (web/canvas.js):
 * "legend": {"items": [["text","0"], ["swatch","#fcfdbf"], ...], "caption": "...",
 * "source": "..."}, the items in the SVG's order (a label before or after its swatch). */
static void heat_legend_json(const view *v, oxr_buf *o)
{
	char buf[256];
	uint32_t n = legend_steps(v);
	oxr_buf_append(o, ",\"legend\":{\"items\":[", 20);
	bool first = true;
	for (uint32_t i = 0; i < n; i++) {
		unsigned char rgb[3];
		bool after = legend_step(v, i, n, rgb, buf, sizeof(buf));
		if (buf[0] && !after) {
			oxr_buf_append(o, first ? "[\"text\"," : ",[\"text\",", first ? 8 : 9);
			oxr_json_string(o, buf, strlen(buf));
			oxr_buf_append(o, "]", 1);
			first = false;
		}
		oxr_buf_printf(o, "%s[\"swatch\",\"#%02x%02x%02x\"]", first ? "" : ",", rgb[0], rgb[1],
		               rgb[2]);
		first = false;
		if (after) {
			oxr_buf_append(o, ",[\"text\",", 9);
			oxr_json_string(o, buf, strlen(buf));
			oxr_buf_append(o, "]", 1);
		}
	}
	oxr_buf_append(o, "],\"caption\":", 12);
	legend_caption(v, buf, sizeof(buf));
	oxr_json_string(o, buf, strlen(buf));
	if (v->ov->legend != NULL) {
		oxr_buf_append(o, ",\"source\":", 10);
		oxr_json_string(o, v->ov->legend, strlen(v->ov->legend));
	}
	oxr_buf_append(o, "}", 1);
}

void oxr__heat_layout_json(const view *v, oxr_buf *o)
{
	const oxr_heat *h = v->ov->heat;
	uint32_t m = v->ov->heat_metric;
	static const char *const scales[] = {"linear", "log", "thresholds"};
	/* the metric's name is the input's (a CSV header): escaped */
	oxr_buf_append(o, ",\"heat\":{\"metric\":", 18);
	oxr_json_string(o, h->metrics[m], strlen(h->metrics[m]));
	oxr_buf_append(o, ",\"unit\":", 8);
	oxr_json_string(o, h->units[m], strlen(h->units[m]));
	oxr_buf_printf(o, ",\"scale\":\"%s\",\"aggregate\":\"%s\",\"low\":%.6g,\"high\":%.6g",
	               h->side != NULL ? "diverging" : scales[v->ov->heat_scale % 3],
	               h->sums[m] ? "sum" : "max",
	               isfinite(v->heat_lo) ? v->heat_lo : 0, v->heat_hi);
	if (isfinite(v->heat_total))
		oxr_buf_printf(o, ",\"total\":%.6g", v->heat_total);
	heat_legend_json(v, o);
	oxr_buf_append(o, "}", 1);
}

void oxr__heat_box_json(const view *v, const vbox *b, oxr_buf *o)
{
	if (!b->heat)
		return;
	oxr_buf_printf(o, ",\"heat\":{\"value\":%.10g,\"color\":\"%s\"", b->heat_value,
	               b->heat_fill ? b->heat_fill : "#ffffff");
	if (isfinite(v->heat_total) && v->heat_total > 0)
		oxr_buf_printf(o, ",\"share\":%.6g", b->heat_value / v->heat_total);
	if (b->heat_rep >= 0) {
		char key[64];
		rep_name(b, key, sizeof(key));
		oxr_buf_printf(o, ",\"repetitions\":%u,\"hottest\":{\"repetition\":%d,\"name\":",
		               b->reps, b->heat_rep);
		oxr_json_string(o, key, strlen(key));
		oxr_buf_printf(o, ",\"value\":%.10g}", b->heat_rep_value);
	}
	if (b->heat_fused != OXP_NONE) {
		const oxr_heat *h = v->ov->heat;
		oxr_buf_printf(o, ",\"fused\":\"%s\",\"fused_size\":%u",
		               v->dv->nodes[h->fused[b->heat_fused]].id, h->fused_size[b->heat_fused]);
	}
	oxr_buf_append(o, "}", 1);
}
