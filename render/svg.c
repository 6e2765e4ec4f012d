/*
 * svg.c — SVG and layout JSON from a laid-out view, and oxr_render() itself.
 *
 * The SVG is built by hand from positions Graphviz computed, so every byte is ours:
 *  - each node and edge is a <g> whose id is the stable id of the JSON document (node
 *    "n12", terminals "i<value>"/"o<value>", tensors "t<value>", groups "g<k>", stubs
 *    "s<k>", edges "e<k>", clusters "c<k>") with data-* attributes for scripts;
 *  - every model string is XML-escaped text or a data-* attribute value; none lands in an
 *    attribute that can hold a URL, script, style or external reference; there are no
 *    <script>, <style>, <foreignObject>, <a> or <use> elements and no event handlers;
 *  - presentation attributes instead of CSS, so the file looks the same under a strict
 *    Content-Security-Policy and in an <img>.
 */
#include "render/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Text escaped for XML.  path: a scope path as the value of data-group / data-scope, model
 * text, where the characters that CSS and URL syntax give meaning to (':' of
 * "javascript:", '(' of "url(", '@' of "@import") and '%' itself are also percent-encoded
 * (%3A, %28, %29, %40, %25): no attribute of the SVG ever carries such a word, whatever
 * the names are.  The page decodes them (web/util.js: groupOf). */
static void xml_text(oxr_buf *o, const char *s, bool path)
{
	const char *start = s;
	for (; *s; s++) {
		const char *rep = NULL;
		char pct[4];
		switch (*s) {
		case '&':
			rep = "&amp;";
			break;
		case '<':
			rep = "&lt;";
			break;
		case '>':
			rep = "&gt;";
			break;
		case '"':
			rep = "&quot;";
			break;
		case '\'':
			rep = "&#39;";
			break;
		default:
			if (path && strchr("%:()@", *s) != NULL) {
				snprintf(pct, sizeof(pct), "%%%02X", (unsigned char)*s);
				rep = pct;
			}
			break;
		}
		if (rep == NULL)
			continue;
		oxr_buf_append(o, start, (size_t)(s - start));
		oxr_buf_append(o, rep, strlen(rep));
		start = s + 1;
	}
	oxr_buf_append(o, start, (size_t)(s - start));
}

void oxr_buf_xml(oxr_buf *o, const char *s)
{
	xml_text(o, s, false);
}

static void xml_path(oxr_buf *o, const char *s)
{
	xml_text(o, s, true);
}

static const char *kind_name(bx_kind k)
{
	static const char *const names[] = {"op", "input", "output", "tensor", "group", "stub-out",
	                                    "stub-in"};
	return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "op";
}

static void box_svg(const view *v, const vbox *b, oxr_buf *o)
{
	double x0 = b->x - (b->w + oxr__stack_pad(b)) / 2, y0 = b->y - (b->h + oxr__stack_pad(b)) / 2;
	oxr_buf_printf(o, "<g id=\"%s\" class=\"node %s fam-%s%s%s\" data-kind=\"%s\"", b->id,
	               kind_name(b->kind), oxr__family_name(b->family), b->mark ? " mark-" : "",
	               oxr__mark_name(b->mark), kind_name(b->kind));
	if (b->mark != OXR_MARK_NONE)
		oxr_buf_printf(o, " data-mark=\"%s\"", oxr__mark_name(b->mark));
	if (b->other != NULL)
		oxr_buf_printf(o, " data-other=\"%s\"", b->other);
	if (b->node != OXP_NONE)
		oxr_buf_printf(o, " data-node=\"%s\"", v->dv->nodes[b->node].id);
	if (b->node != OXP_NONE && b->kind == BX_OP && v->dv->nodes[b->node].schema != NULL) {
		oxp_schema_info si;
		oxp_schema_get_info(v->dv->nodes[b->node].schema, &si);
		oxr_buf_printf(o, " data-op-version=\"%d\"", si.since_version);
	}
	if (b->value != OXP_NONE)
		oxr_buf_printf(o, " data-value=\"%u\"", b->value);
	if (b->peer != OXP_NONE)
		oxr_buf_printf(o, " data-peer=\"%s\"", v->boxes[b->peer].id);
	if (b->kind == BX_GROUP && b->gpath != NULL) {
		oxr_buf_append(o, " data-group=\"", 13);
		xml_path(o, b->gpath);
		oxr_buf_append(o, "\"", 1);
	}
	if (b->members > 0)
		oxr_buf_printf(o, " data-members=\"%u\"", b->members);
	if (b->values != NULL) /* digits and spaces */
		oxr_buf_printf(o, " data-values=\"%s\"", b->values);
	if (b->open_all != NULL) {
		oxr_buf_append(o, " data-open-all=\"", 16);
		xml_path(o, b->open_all);
		oxr_buf_append(o, "\"", 1);
	}
	if (b->heat) /* a heat overlay's figure, for scripts (web/heat.js) */
		oxr_buf_printf(o, " data-heat=\"%.10g\"", b->heat_value);
	if (b->kind == BX_OP && oxr__fusion_op(v, b->node) != NULL)
		oxr_buf_printf(o, " data-pattern=\"%s\"", oxr__fusion_op(v, b->node));
	for (uint32_t i = 0; i < b->nrows; i++)
		if (b->rows[i].style == ROW_BADGE) { /* a quantized op's precision */
			oxr_buf_append(o, " data-quant=\"", 13);
			oxr_buf_xml(o, b->rows[i].text);
			oxr_buf_append(o, "\"", 1);
			break;
		}
	oxr_buf_append(o, ">", 1);
	if (b->title != NULL) {
		oxr_buf_append(o, "<title>", 7);
		oxr_buf_xml(o, b->title);
		oxr_buf_append(o, "</title>", 8);
	}
	const oxr_palette *pal = oxr__palette(v->o.theme_dark);
	const char *fill = pal->op_fill, *stroke = pal->op_stroke, *dash = "";
	double rx = 4;
	switch (b->kind) {
	case BX_INPUT:
	case BX_OUTPUT:
		fill = b->kind == BX_INPUT ? pal->input_fill : pal->output_fill;
		stroke = b->missing ? pal->missing_stroke : pal->io_stroke;
		dash = b->missing ? " stroke-dasharray=\"4 2\"" : "";
		rx = b->h / 2;
		break;
	case BX_TENSOR:
		fill = pal->tensor_fill;
		stroke = pal->tensor_stroke;
		break;
	case BX_STUB_IN:
	case BX_STUB_OUT:
		fill = pal->stub_fill;
		stroke = pal->stub_stroke;
		dash = " stroke-dasharray=\"3 2\"";
		rx = b->h / 2;
		break;
	case BX_GROUP:
		fill = pal->group_fill;
		stroke = pal->group_stroke;
		break;
	default:
		break;
	}
	const char *width = b->kind == BX_GROUP ? " stroke-width=\"1.6\"" : "";
	if (b->mark >= OXR_MARK_ADDED) { /* an overlay's mark: its outline and tint */
		fill = pal->mark_tint[b->mark - OXR_MARK_ADDED];
		stroke = oxr__mark_color(b->mark);
		width = " stroke-width=\"2.4\"";
		if (b->mark == OXR_MARK_REMOVED)
			dash = " stroke-dasharray=\"5 3\"";
	} else if (b->mark == OXR_MARK_SAME) { /* context: muted, its text as readable */
		fill = pal->same_fill;
		stroke = oxr__mark_color(b->mark);
	}
	if (b->heat && b->heat_fill != NULL) /* a heat overlay's figure */
		fill = b->heat_fill;
	/* a run of repeated blocks is drawn as a stack (in a group of its own: the box's own
	 * rect stays its first) */
	if (b->open_all != NULL) {
		oxr_buf_append(o, "<g class=\"stack\">", 17);
		for (int k = 2; k > 0; k--)
			oxr_buf_printf(o,
			               "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
			               "rx=\"%.1f\" fill=\"%s\" stroke=\"%s\"/>",
			               x0 + OXR_STACK * k, y0 + OXR_STACK * k, b->w, b->h, rx, fill, stroke);
		oxr_buf_append(o, "</g>", 4);
	}
	oxr_buf_printf(o,
	               "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" rx=\"%.1f\" "
	               "fill=\"%s\" stroke=\"%s\"%s%s/>",
	               x0, y0, b->w, b->h, rx, fill, stroke, width, dash);
	double y = y0;
	for (uint32_t i = 0; i < b->nrows; i++) {
		const vrow *r = &b->rows[i];
		if (r->style == ROW_HEADER) {
			oxr_buf_printf(o,
			               "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" rx=\"4\" "
			               "fill=\"%s\"/>",
			               x0 + 0.5, y + 0.5, b->w - 1, OXR_HDR_H - 1,
			               b->mark == OXR_MARK_SAME ? pal->same_band
			                                        : pal->family[b->family < FAM__COUNT ? b->family : 0]);
			if (r->mark) /* the op type changed: a ring on the band */
				oxr_buf_printf(o,
				               "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
				               "rx=\"4\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" "
				               "class=\"row-mark\"/>",
				               x0 + 1.5, y + 1.5, b->w - 3, OXR_HDR_H - 3, pal->ring);
			oxr_buf_printf(o,
			               "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.0f\" font-weight=\"bold\" "
			               "fill=\"%s\" text-anchor=\"middle\"",
			               x0 + b->w / 2, y + 12.5, OXR_HDR_SIZE, pal->header);
			/* a named pattern's header opens it (unfold=) */
			if (r->chain && b->node != OXP_NONE)
				oxr_buf_printf(o, " data-unfold=\"%s\"", v->dv->nodes[b->node].id);
			oxr_buf_append(o, ">", 1);
			y += OXR_HDR_H;
		} else {
			if (i == 0)
				y += OXR_PAD_Y;
			if (r->mark)
				oxr_buf_printf(o,
				               "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
				               "fill=\"%s\" class=\"row-mark\"/>",
				               x0 + 2, y, b->w - 4, OXR_ROW_H, pal->row_mark);
			const char *color = pal->row[r->style < ROW__COUNT ? r->style : ROW_PLAIN];
			if (b->heat && !r->mark) /* on a heat fill: black or white, for contrast */
				color = b->heat_dark ? "#ffffff" : "#000000";
			if (r->style == ROW_BADGE) /* a pill behind the precision */
				oxr_buf_printf(o,
				               "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
				               "rx=\"5\" fill=\"%s\" stroke=\"%s\" "
				               "stroke-width=\"0.6\"/>",
				               x0 + OXR_PAD_X - 3, y + 0.5,
				               oxr__text_width(r->text, OXR_ROW_SIZE, false) + 6, OXR_ROW_H - 1,
				               pal->badge_fill, pal->badge_stroke);
			bool center = b->kind != BX_OP && b->kind != BX_GROUP;
			oxr_buf_printf(o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.0f\" fill=\"%s\"%s%s",
			               center ? x0 + b->w / 2 : x0 + OXR_PAD_X, y + 9, OXR_ROW_SIZE, color,
			               center ? " text-anchor=\"middle\"" : "",
			               r->style == ROW_DEFAULT ? " font-style=\"italic\" class=\"default\""
			               : r->heat               ? " class=\"heat-value\""
			                                       : "");
			/* a folded row: the value it shows; a chain also what unfold= opens */
			if (r->value != OXP_NONE)
				oxr_buf_printf(o, " data-value=\"%u\"", r->value);
			if (r->chain && b->node != OXP_NONE)
				oxr_buf_printf(o, " data-unfold=\"%s\"", v->dv->nodes[b->node].id);
			oxr_buf_append(o, ">", 1);
			y += OXR_ROW_H;
		}
		oxr_buf_xml(o, r->text);
		oxr_buf_append(o, "</text>", 7);
	}
	oxr_buf_append(o, "</g>\n", 5);
}

static void edge_svg(const view *v, uint32_t i, oxr_buf *o)
{
	const vedge *e = &v->edges[i];
	if (e->npts < 4 || e->invisible)
		return;
	static const char *const cls[ED__COUNT] = {"edge", "edge outer", "edge sub", "edge stub",
	                                           "edge reads"};
	oxr_buf_printf(o, "<g id=\"e%u\" class=\"%s%s\" data-from=\"%s\" data-to=\"%s\"", i,
	               cls[e->style % ED__COUNT], e->mark ? " ghost" : "", v->boxes[e->from].id,
	               v->boxes[e->to].id);
	if (e->value != OXP_NONE)
		oxr_buf_printf(o, " data-value=\"%u\"", e->value);
	if (e->count > 1)
		oxr_buf_printf(o, " data-count=\"%u\"", e->count);
	oxr_buf_append(o, ">", 1);
	if (e->value != OXP_NONE) {
		oxr_buf_append(o, "<title>", 7);
		oxr_buf_xml(o, oxr__text(v->arena, v->dv->values[e->value].name, 200));
		if (e->label != NULL) {
			oxr_buf_append(o, " ", 1);
			oxr_buf_xml(o, e->label);
		}
		oxr_buf_append(o, "</title>", 8);
	}
	oxr_buf_printf(o, "<path d=\"M%.1f,%.1f C", e->pts[0], e->pts[1]);
	for (uint32_t k = 1; k < e->npts; k++)
		oxr_buf_printf(o, "%s%.1f,%.1f", k > 1 ? " " : "", e->pts[2 * k], e->pts[2 * k + 1]);
	const oxr_palette *pal = oxr__palette(v->o.theme_dark);
	const char *stroke = e->mark ? oxr__mark_color(e->mark) : pal->edge[e->style % ED__COUNT];
	const char *dash = e->mark                ? " stroke-dasharray=\"5 3\""
	                   : e->style == ED_OUTER ? " stroke-dasharray=\"5 3\""
	                   : e->style == ED_SUB   ? " stroke-dasharray=\"2 3\""
	                   : e->style == ED_STUB  ? " stroke-dasharray=\"4 2\""
	                   : e->style == ED_READS ? " stroke-dasharray=\"1 2\""
	                                          : "";
	double width = e->style == ED_READS ? 0.8 : e->count > 1 ? 1.8 : 1.0;
	oxr_buf_printf(o, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"%.1f\"%s/>", stroke, width,
	               dash);
	if (e->arrow) {
		/* arrow head from the last control point to the tip */
		double lx = e->pts[2 * (e->npts - 1)], ly = e->pts[2 * (e->npts - 1) + 1];
		double dx = e->ax - lx, dy = e->ay - ly;
		double len = dx * dx + dy * dy;
		if (len > 0) {
			double l = 1.0 / __builtin_sqrt(len);
			dx *= l;
			dy *= l;
			double bx = e->ax - dx * 7, by = e->ay - dy * 7;
			oxr_buf_printf(o,
			               "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"%s\"/>",
			               e->ax, e->ay, bx - dy * 3.2, by + dx * 3.2, bx + dy * 3.2,
			               by - dx * 3.2, stroke);
		}
	}
	if (e->label != NULL && !e->label_hidden) {
		/* placed by layout.c and labels.c: (lx, ly) is where the text starts, on its
		 * baseline */
		oxr_buf_printf(o,
		               "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.0f\" fill=\"%s\">",
		               e->lx, e->ly, OXR_LABEL_SIZE, pal->edge_label);
		oxr_buf_xml(o, e->label);
		oxr_buf_append(o, "</text>", 7);
	}
	oxr_buf_append(o, "</g>\n", 5);
}

static void cluster_svg(const view *v, uint32_t i, oxr_buf *o)
{
	const vcluster *c = &v->clusters[i];
	bool sub = c->kind == CL_SUBGRAPH;
	const oxr_palette *pal = oxr__palette(v->o.theme_dark);
	oxr_buf_printf(o, "<g id=\"%s\" class=\"cluster %s\"", c->id, sub ? "subgraph" : "scope");
	if (c->title != NULL) {
		oxr_buf_append(o, sub ? " data-scope=\"" : " data-group=\"", 13);
		xml_path(o, c->title);
		oxr_buf_append(o, "\"", 1);
	}
	oxr_buf_append(o, ">", 1);
	if (c->title != NULL) {
		oxr_buf_append(o, "<title>", 7);
		oxr_buf_xml(o, c->title);
		oxr_buf_append(o, "</title>", 8);
	}
	oxr_buf_printf(o,
	               "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" rx=\"6\" "
	               "fill=\"%s\" stroke=\"%s\"%s/>",
	               c->x0, c->y0, c->x1 - c->x0, c->y1 - c->y0, sub ? pal->sub_fill : pal->scope_fill,
	               sub ? pal->sub_stroke : pal->scope_stroke, sub ? " stroke-dasharray=\"6 3\"" : "");
	if (c->label != NULL && c->label[0] != '\0') {
		oxr_buf_printf(o,
		               "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.0f\" font-weight=\"bold\" "
		               "fill=\"%s\">",
		               c->x0 + OXR_CLUSTER_PAD, c->y0 + 12, OXR_CLUSTER_SIZE,
		               sub ? pal->sub_text : pal->scope_text);
		oxr_buf_xml(o, c->label);
		oxr_buf_append(o, "</text>", 7);
	}
	oxr_buf_append(o, "</g>\n", 5);
}

/* An overlay's legend under the drawing: what the marks mean, and its caption. */
#define LEGEND_H 26.0
#define NOTE_H 20.0 /* hide='s note */
static const uint8_t legend_marks[] = {OXR_MARK_ADDED, OXR_MARK_CHANGED, OXR_MARK_REMOVED,
                                       OXR_MARK_SAME};

static const char *legend_label(int i)
{
	return legend_marks[i] == OXR_MARK_SAME ? "unchanged" : oxr__mark_name(legend_marks[i]);
}

/* Where legend_svg puts its items, from the same text widths: at[0..3] the four marks'
 * swatches, at[4] the changed row's, at[5] the caption; answers the legend's width.  The
 * layout JSON carries them, so a canvas draws the legend where the SVG does. */
static double legend_at(const view *v, double at[6])
{
	double x = 10;
	for (int i = 0; i < 4; i++) {
		at[i] = x;
		x += 27 + oxr__text_width(legend_label(i), 10, false) + 14;
	}
	at[4] = x;
	x += 27 + oxr__text_width("changed row", 10, false) + 18;
	at[5] = x;
	if (v->ov->legend != NULL)
		x += oxr__text_width(v->ov->legend, 10, false);
	return x + 10;
}

static double legend_width(const view *v)
{
	double at[6];
	return legend_at(v, at);
}

static void legend_svg(const view *v, oxr_buf *o)
{
	const uint8_t *marks = legend_marks;
	const oxr_palette *pal = oxr__palette(v->o.theme_dark);
	const char *const tint[] = {pal->mark_tint[0], pal->mark_tint[1], pal->mark_tint[2],
	                            pal->same_fill};
	double y = v->height - LEGEND_H + 6, at[6];
	legend_at(v, at);
	oxr_buf_printf(o, "<g id=\"legend\" class=\"legend\">");
	for (int i = 0; i < 4; i++) {
		const char *label = legend_label(i);
		double x = at[i];
		oxr_buf_printf(o,
		               "<rect x=\"%.1f\" y=\"%.1f\" width=\"22\" height=\"13\" rx=\"3\" "
		               "fill=\"%s\" stroke=\"%s\" stroke-width=\"2\"%s/>"
		               "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"%s\">%s</text>",
		               x, y, tint[i], oxr__mark_color(marks[i]),
		               marks[i] == OXR_MARK_REMOVED ? " stroke-dasharray=\"5 3\"" : "", x + 27, y + 10.5,
		               pal->legend_text, label);
	}
	oxr_buf_printf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"22\" height=\"12\" "
	                  "fill=\"%s\"/><text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" "
	                  "fill=\"%s\">changed row</text>",
	               at[4], y + 0.5, pal->row_mark, at[4] + 27, y + 10.5, pal->legend_text);
	if (v->ov->legend != NULL) {
		oxr_buf_printf(o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"%s\">",
		               at[5], y + 10.5, pal->legend_note);
		oxr_buf_xml(o, v->ov->legend);
		oxr_buf_append(o, "</text>", 7);
	}
	oxr_buf_append(o, "</g>\n", 5);
}

/* The note under a drawing made with hide=: "12 nodes hidden (hide=Constant,Identity)". */
static void hidden_note(const view *v, char *buf, size_t size)
{
	snprintf(buf, size, "%u node%s hidden (hide=%s)", v->nophidden,
	         v->nophidden == 1 ? "" : "s", v->o.hide);
}

oxr_code oxr__write_svg(const view *v, oxr_buf *o, oxr_error *err)
{
	/* width and height exactly the viewBox's: one unit of the drawing is one CSS pixel, so
	 * the page knows the size text is drawn at (web/graph.js, READABLE) */
	oxr_buf_printf(o,
	               "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.1f\" height=\"%.1f\" "
	               "viewBox=\"0 0 %.1f %.1f\" class=\"onnxviz\" "
	               "font-family=\"Helvetica, Arial, sans-serif\" data-format=\"onnxviz.svg/1\" "
	               "data-boxes=\"%u\" data-group-depth=\"%d\" data-theme=\"%s\"",
	               v->width, v->height, v->width, v->height, v->nboxes, v->group_depth,
	               oxr__palette(v->o.theme_dark)->name);
	if (v->o.hide[0] != '\0')
		oxr_buf_printf(o, " data-hidden=\"%u\"", v->nophidden);
	oxr_buf_append(o, ">\n", 2);
	oxr_buf_printf(o, "<rect width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>\n", v->width,
	               v->height, oxr__palette(v->o.theme_dark)->canvas);
	oxr_buf_append(o, "<g id=\"clusters\">\n", 18);
	for (uint32_t i = 0; i < v->nclusters; i++)
		cluster_svg(v, i, o);
	oxr_buf_append(o, "</g>\n<g id=\"edges\">\n", 20);
	for (uint32_t i = 0; i < v->nedges; i++)
		edge_svg(v, i, o);
	oxr_buf_append(o, "</g>\n<g id=\"nodes\">\n", 20);
	for (uint32_t i = 0; i < v->nboxes; i++)
		box_svg(v, &v->boxes[i], o);
	oxr_buf_append(o, "</g>\n", 5);
	if (v->o.hide[0] != '\0') {
		char note[OXR_HIDE_MAX + 64];
		hidden_note(v, note, sizeof(note));
		oxr_buf_printf(o, "<text id=\"hidden-note\" class=\"hidden-note\" x=\"10\" "
		                  "y=\"%.1f\" font-size=\"11\" fill=\"#5f6368\">",
		               v->note_y);
		oxr_buf_xml(o, note); /* op names are [A-Za-z0-9_]: nothing to escape, but the rule holds */
		oxr_buf_append(o, "</text>\n", 8);
	}
	if (v->ov != NULL && v->ov->heat != NULL)
		oxr__heat_legend_svg(v, o, v->height - LEGEND_H + 6);
	else if (v->ov != NULL)
		legend_svg(v, o);
	oxr_buf_append(o, "</svg>\n", 7);
	if (o->failed)
		return oxr__fail(err, OXR_E_TOO_BIG, "SVG output exceeds %zu bytes", o->max);
	return OXR_OK;
}

/* ---------------------------------------------------------------------------------------
 * Layout JSON: written directly (every text in a view is valid UTF-8 already)
 */
static void jstr(oxr_buf *o, const char *s)
{
	oxr_buf_append(o, "\"", 1);
	const char *start = s;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c != '"' && c != '\\' && c >= 0x20)
			continue;
		oxr_buf_append(o, start, (size_t)(s - start));
		if (c == '"')
			oxr_buf_append(o, "\\\"", 2);
		else if (c == '\\')
			oxr_buf_append(o, "\\\\", 2);
		else
			oxr_buf_printf(o, "\\u%04x", c);
		start = s + 1;
	}
	oxr_buf_append(o, start, (size_t)(s - start));
	oxr_buf_append(o, "\"", 1);
}

oxr_code oxr__write_layout_json(const view *v, oxr_buf *o, oxr_error *err)
{
	static const char *const rowstyle[ROW__COUNT] = {"header", "name",  "attr",  "tensor",
	                                                 "sub",    "plain", "badge", "default"};
	static const char *const edgestyle[ED__COUNT] = {"data", "outer", "sub", "stub", "reads"};
	oxr_buf_printf(o,
	               "{\"format\":\"onnxviz.layout/1\",\"width\":%.1f,\"height\":%.1f,"
	               "\"rankdir\":\"%s\",\"group_depth\":%d,\"settings\":",
	               v->width, v->height, v->o.rankdir_lr ? "LR" : "TB", v->group_depth);
	jstr(o, v->settings);
	if (v->o.hide[0] != '\0') /* hide=: what it named, and how many nodes it took away */
		oxr_buf_printf(o, ",\"hidden\":{\"ops\":\"%s\",\"nodes\":%u,\"note_at\":[10.0,%.1f]}",
		               v->o.hide, v->nophidden, v->note_y); /* the SVG's note's baseline */
	if (v->ov != NULL && v->ov->heat != NULL)
		oxr__heat_layout_json(v, o);
	else if (v->ov != NULL) { /* the marks' legend (legend_svg): its top, x of its items */
		double at[6];
		legend_at(v, at);
		oxr_buf_printf(o, ",\"mark_legend\":{\"y\":%.1f,\"at\":[%.1f,%.1f,%.1f,%.1f,%.1f,%.1f]",
		               v->height - LEGEND_H + 6, at[0], at[1], at[2], at[3], at[4], at[5]);
		if (v->ov->legend != NULL) {
			oxr_buf_append(o, ",\"caption\":", 11);
			jstr(o, v->ov->legend);
		}
		oxr_buf_append(o, "}", 1);
	}
	oxr_buf_append(o, ",\"nodes\":[", 10);
	for (uint32_t i = 0; i < v->nboxes; i++) {
		const vbox *b = &v->boxes[i];
		oxr_buf_printf(o, "%s{\"id\":\"%s\",\"kind\":\"%s\",\"family\":\"%s\"", i ? "," : "",
		               b->id, kind_name(b->kind), oxr__family_name(b->family));
		if (b->node != OXP_NONE)
			oxr_buf_printf(o, ",\"node\":\"%s\"", v->dv->nodes[b->node].id);
		if (b->value != OXP_NONE)
			oxr_buf_printf(o, ",\"value\":%u", b->value);
		if (b->peer != OXP_NONE)
			oxr_buf_printf(o, ",\"peer\":\"%s\"", v->boxes[b->peer].id);
		if (b->cluster != OXP_NONE)
			oxr_buf_printf(o, ",\"cluster\":\"%s\"", v->clusters[b->cluster].id);
		if (b->mark != OXR_MARK_NONE)
			oxr_buf_printf(o, ",\"mark\":\"%s\"", oxr__mark_name(b->mark));
		if (b->other != NULL)
			oxr_buf_printf(o, ",\"other\":\"%s\"", b->other);
		if (b->missing) /* a graph input nothing feeds: drawn dashed red */
			oxr_buf_append(o, ",\"missing\":true", 15);
		if (b->kind == BX_OP && oxr__fusion_op(v, b->node) != NULL) { /* SVG data-pattern */
			oxr_buf_append(o, ",\"pattern\":", 11);
			jstr(o, oxr__fusion_op(v, b->node));
		}
		if (v->ov != NULL && v->ov->heat != NULL)
			oxr__heat_box_json(v, b, o);
		if (b->title != NULL) {
			oxr_buf_append(o, ",\"title\":", 9);
			jstr(o, b->title);
		}
		if (b->gpath != NULL) {
			oxr_buf_append(o, ",\"group\":", 9);
			jstr(o, b->gpath);
		}
		if (b->members > 0)
			oxr_buf_printf(o, ",\"members\":%u", b->members);
		if (b->values != NULL) { /* "12 13 14" as [12,13,14] */
			oxr_buf_append(o, ",\"values\":[", 11);
			for (const char *c = b->values; *c; c++)
				oxr_buf_append(o, *c == ' ' ? "," : c, 1);
			oxr_buf_append(o, "]", 1);
		}
		if (b->open_all != NULL) {
			oxr_buf_append(o, ",\"open_all\":", 12);
			jstr(o, b->open_all);
		}
		/* the front box (a run's stack lies below and to the right of it) */
		oxr_buf_printf(o, ",\"x\":%.1f,\"y\":%.1f,\"w\":%.1f,\"h\":%.1f,\"rows\":[",
		               b->x - oxr__stack_pad(b) / 2, b->y - oxr__stack_pad(b) / 2, b->w, b->h);
		for (uint32_t r = 0; r < b->nrows; r++) {
			oxr_buf_printf(o, "%s{\"style\":\"%s\",%s%s\"text\":", r ? "," : "",
			               rowstyle[b->rows[r].style % ROW__COUNT], b->rows[r].mark ? "\"mark\":true," : "",
			               b->rows[r].heat ? "\"heat\":true," : "");
			jstr(o, b->rows[r].text);
			if (b->rows[r].value != OXP_NONE)
				oxr_buf_printf(o, ",\"value\":%u", b->rows[r].value);
			if (b->rows[r].chain && b->node != OXP_NONE)
				oxr_buf_printf(o, ",\"unfold\":\"%s\"", v->dv->nodes[b->node].id);
			oxr_buf_append(o, "}", 1);
		}
		oxr_buf_append(o, "]}", 2);
	}
	oxr_buf_append(o, "],\"edges\":[", 11);
	for (uint32_t i = 0; i < v->nedges; i++) {
		const vedge *e = &v->edges[i];
		oxr_buf_printf(o, "%s{\"id\":\"e%u\",\"from\":\"%s\",\"to\":\"%s\",\"style\":\"%s\","
		                  "\"count\":%u",
		               i ? "," : "", i, v->boxes[e->from].id, v->boxes[e->to].id,
		               edgestyle[e->style % ED__COUNT], e->count);
		if (e->value != OXP_NONE)
			oxr_buf_printf(o, ",\"value\":%u", e->value);
		if (e->label != NULL) {
			oxr_buf_append(o, ",\"label\":", 9);
			jstr(o, e->label);
			if (e->npts >= 4 && !e->label_hidden) /* where the SVG starts it, on its baseline */
				oxr_buf_printf(o, ",\"label_at\":[%.1f,%.1f]", e->lx, e->ly);
		}
		oxr_buf_append(o, ",\"points\":[", 11);
		for (uint32_t k = 0; k < e->npts; k++)
			oxr_buf_printf(o, "%s[%.1f,%.1f]", k ? "," : "", e->pts[2 * k], e->pts[2 * k + 1]);
		oxr_buf_append(o, "]", 1);
		if (e->arrow)
			oxr_buf_printf(o, ",\"arrow\":[%.1f,%.1f]", e->ax, e->ay);
		if (e->mark) /* a ghost (A's edge to a removed node): the SVG's dashed mark colour */
			oxr_buf_printf(o, ",\"mark\":\"%s\"", oxr__mark_name(e->mark));
		oxr_buf_append(o, "}", 1);
	}
	oxr_buf_append(o, "],\"clusters\":[", 14);
	for (uint32_t i = 0; i < v->nclusters; i++) {
		const vcluster *c = &v->clusters[i];
		oxr_buf_printf(o, "%s{\"id\":\"%s\",\"kind\":\"%s\"", i ? "," : "", c->id,
		               c->kind == CL_SUBGRAPH ? "subgraph" : "scope");
		if (c->parent != OXP_NONE)
			oxr_buf_printf(o, ",\"parent\":\"%s\"", v->clusters[c->parent].id);
		if (c->label != NULL) {
			oxr_buf_append(o, ",\"label\":", 9);
			jstr(o, c->label);
		}
		if (c->title != NULL) {
			oxr_buf_append(o, c->kind == CL_SUBGRAPH ? ",\"scope\":" : ",\"group\":", 9);
			jstr(o, c->title);
		}
		oxr_buf_printf(o, ",\"x\":%.1f,\"y\":%.1f,\"w\":%.1f,\"h\":%.1f}", c->x0, c->y0,
		               c->x1 - c->x0, c->y1 - c->y0);
	}
	oxr_buf_append(o, "]}", 2);
	if (o->failed)
		return oxr__fail(err, OXR_E_TOO_BIG, "layout JSON exceeds %zu bytes", o->max);
	return OXR_OK;
}

/* ---------------------------------------------------------------------------------------
 */
oxr_code oxr_render(const oxp_model *m, const oxp_dag *d, const oxr_options *o,
                    oxr_format fmt, oxr_buf *out, oxr_error *err)
{
	return oxr_render_overlay(m, d, o, NULL, fmt, out, err);
}

oxr_code oxr_render_overlay(const oxp_model *m, const oxp_dag *d, const oxr_options *o,
                            const oxr_overlay *ov, oxr_format fmt, oxr_buf *out,
                            oxr_error *err)
{
	view v;
	size_t start = out->len;
	oxr_code rc = oxr__view_build(&v, m, d, o, ov, err);
	if (rc == OXR_OK)
		rc = oxr__layout(&v, fmt, out, err);
	/* room for the note, in the SVG and in the layout JSON alike (a canvas draws it there) */
	if (rc == OXR_OK && (fmt == OXR_FMT_SVG || fmt == OXR_FMT_LAYOUT_JSON) && v.o.hide[0] != '\0') {
		char note[OXR_HIDE_MAX + 64];
		hidden_note(&v, note, sizeof(note));
		v.note_y = v.height + 14;
		v.height += NOTE_H;
		double nw = 20 + oxr__text_width(note, 11, false);
		if (v.width < nw)
			v.width = nw;
	}
	if (rc == OXR_OK && fmt == OXR_FMT_DOT && v.o.hide[0] != '\0')
		oxr_buf_printf(out, "// %u node%s hidden (hide=%s)\n", v.nophidden,
		               v.nophidden == 1 ? "" : "s", v.o.hide);
	if (rc == OXR_OK && ov != NULL) { /* room for the legend below */
		v.height += LEGEND_H;
		double lw = ov->heat != NULL ? oxr__heat_legend_width(&v) : legend_width(&v);
		if (v.width < lw)
			v.width = lw;
	}
	if (rc == OXR_OK && fmt == OXR_FMT_SVG)
		rc = oxr__write_svg(&v, out, err);
	else if (rc == OXR_OK && fmt == OXR_FMT_LAYOUT_JSON)
		rc = oxr__write_layout_json(&v, out, err);
	/* a label or id the view's arena could not hold was left out on the way: the
	 * rendering is incomplete, so it is not given out */
	if (rc == OXR_OK && v.arena != NULL && oxp_arena_failed(v.arena))
		rc = oxr__fail(err, OXR_E_NOMEM, "out of memory");
	if (rc != OXR_OK && out->len > start) {
		out->len = start;
		out->data[start] = '\0';
	}
	oxr__view_free(&v);
	return rc;
}
