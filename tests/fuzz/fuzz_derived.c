/*
 * fuzz_derived.c — libFuzzer target: what the renderer derives from a model before Graphviz
 * sees anything, in process and without Graphviz: folding (render/fold.c), quantized ops
 * as boxes (render/quant.c), the name-scope hierarchy with runs of repeats and ranges
 * (render/hier.c, render/repeat.c), the boxes' rows and sizes (render/style.c,
 * render/textfit.c), and the layout JSON of the view as built (render/svg.c, before any
 * layout).  The input is parsed under limits that keep a view build well under a second
 * (4,000 nodes, 64 inputs per node, 1,024 elements per field, subgraphs 4 deep, 32 MB),
 * linked with shape inference, and the view is built (oxr__view_build, render/internal.h)
 * with options from the input's last two bytes: arith (fold or nodes), initializers,
 * subgraphs, group (auto, none, 1, 2), attrs (key, none, all), quant, unfold lists, and
 * expand entries / depth.  Then the text functions run over the model's node names.
 *
 * Checks (what docs/render.md and render/internal.h promise):
 *  - the view builds, or fails only for size (too_big), memory, or a model without a main
 *    graph, with a message;
 *  - all text of the view (rows, titles, labels, group paths, edge labels) is valid UTF-8
 *    without control characters; box ids are ASCII [A-Za-z0-9._:-] starting with a letter;
 *  - every row fits its box: measured (oxr__text_width) it is at most the widest box's
 *    room (320 pt less 8 pt padding each side), and the box is at least that wide, within
 *    [40, 320] pt;
 *  - every node of the main graph is accounted for exactly once: folded (no box), or
 *    drawn in one box — its own op box (whose node it is), a collapsed scope's, a run's or
 *    a range's — or joined to a quantized op's box; every op box's node maps back to it;
 *    a folded bookkeeping node has a consumer; edges join boxes that exist;
 *  - a folded row of a chain says how many ops it folds: it ends with "· N op(s)", N the
 *    view's count for that value (at least 1, at most the folded nodes, and without quantized
 *    boxes the folded nodes reached from it, counted here), unless it was cut
 *    to fit its box (then it ends with the ellipsis).  Before any fitting (the rows
 *    fold.c writes, rebuilt into a scratch box) it always ends with it;
 *  - a scope box's count of nodes is the number of drawn nodes that map to it; a run's box
 *    ("layers.0–47 ×48") has as many members as its header says, and its nodes are the
 *    first member's times the members (repeats have the same structure); a run of a
 *    period ("features.5.0–5 ×3 (2 blocks)") the first period's times the repetitions;
 *  - the layout JSON of the view parses (jansson) with one node per box, one edge per edge,
 *    one cluster per cluster, each box's rows in order with their text;
 *  - oxr__text / oxr__text_tail give valid printable UTF-8 of at most max characters plus
 *    the ellipsis; oxr__text_fit gives the text itself when it fits, else a prefix (or
 *    with keep_end a suffix) with the ellipsis, at most the width asked, or "".
 */
#include "tests/fuzz/fuzz_common.h"
#include "render/internal.h"

#include <ctype.h>
#include <jansson.h>

#define FUZZ_MAX_OUTPUT ((size_t)8 << 20)
#define MAX_NAMES 64   /* node names through the text functions */
#define MAX_SCRATCH 64 /* op boxes whose folded rows are rebuilt unfitted */
#define ELLIPSIS "\xe2\x80\xa6"

/* ---------------------------------------------------------------------------------------
 * Text
 */
/* Valid UTF-8 without the characters style.c keeps out of output text (C0, DEL, C1,
 * U+2028/2029, U+FFFE/FFFF). */
static bool printable(const char *s)
{
	size_t n = strlen(s);
	if (!fz_utf8_valid((const unsigned char *)s, n))
		return false;
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t k = oxr__utf8_at((const unsigned char *)s, n, i, &cp);
		if (k == 0 || cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0) || cp == 0x2028 ||
		    cp == 0x2029 || cp == 0xfffe || cp == 0xffff)
			return false;
		i += k;
	}
	return true;
}

static size_t chars_of(const char *s)
{
	size_t c = 0;
	for (; *s; s++)
		c += ((unsigned char)*s & 0xc0) != 0x80;
	return c;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), k = strlen(tail);
	return n >= k && memcmp(s + n - k, tail, k) == 0;
}

static void check_id(const char *id)
{
	FZ_CHECK(id != NULL && isalpha((unsigned char)id[0]));
	for (const char *p = id; *p; p++)
		FZ_CHECK(isalnum((unsigned char)*p) || *p == '.' || *p == '_' || *p == ':' || *p == '-');
}

static void check_opt_text(const char *s)
{
	FZ_CHECK(s == NULL || printable(s));
}

/* oxr__text, oxr__text_tail, oxr__text_fit over one model string. */
static void check_text_fns(oxp_arena *a, oxp_str s, uint8_t knob)
{
	size_t max = (size_t)knob % 60 + 1;
	const char *t = oxr__text(a, s, max);
	FZ_CHECK(printable(t));
	FZ_CHECK(chars_of(t) <= max + 1);
	if (s.len == 0)
		FZ_CHECK(t[0] == '\0');
	const char *tail = oxr__text_tail(a, s, max);
	FZ_CHECK(tail != NULL && printable(tail));
	FZ_CHECK(chars_of(tail) <= max + 2);
	const char *full = oxr__text(a, s, 200);
	static const double sizes[] = {OXR_ROW_SIZE, OXR_HDR_SIZE, OXR_LABEL_SIZE};
	for (int k = 0; k < 4; k++) {
		double size = sizes[(knob + k) % 3];
		bool bold = (knob >> k) & 1, keep_end = k & 1;
		double max_w = (double)((knob * (k + 3)) % 400) - 20; /* negative too */
		const char *f = oxr__text_fit(a, full, size, bold, max_w, keep_end);
		FZ_CHECK(f != NULL && printable(f));
		double w = oxr__text_width(full, size, bold);
		if (max_w > 0 && w <= max_w * (1 - 1e-9))
			FZ_CHECK(f == full);
		if (f == full) { /* it fits (to rounding) */
			FZ_CHECK(max_w > 0 && w <= max_w * (1 + 1e-9));
			continue;
		}
		if (f[0] == '\0')
			continue;
		FZ_CHECK(oxr__text_width(f, size, bold) <= max_w * (1 + 1e-9));
		size_t n = strlen(f), e = strlen(ELLIPSIS);
		FZ_CHECK(n >= e);
		if (keep_end) {
			FZ_CHECK(memcmp(f, ELLIPSIS, e) == 0 && ends_with(full, f + e));
		} else {
			FZ_CHECK(ends_with(f, ELLIPSIS) && memcmp(f, full, n - e) == 0);
		}
	}
}

/* ---------------------------------------------------------------------------------------
 * The view
 */
/* "… · N op(s)" at the end of s: N, or -1 when s does not end that way. */
static long ops_count_at_end(const char *s)
{
	const char *tail = " op";
	size_t n = strlen(s);
	size_t end = n;
	if (ends_with(s, " ops"))
		end = n - 4;
	else if (ends_with(s, tail))
		end = n - 3;
	else
		return -1;
	size_t d = end;
	while (d > 0 && isdigit((unsigned char)s[d - 1]))
		d--;
	static const char dot[] = " \xc2\xb7 ";
	if (d == end || d < sizeof(dot) - 1 || memcmp(s + d - (sizeof(dot) - 1), dot, sizeof(dot) - 1) != 0)
		return -1;
	long v = strtol(s + d, NULL, 10);
	if ((v == 1) != ends_with(s, " op"))
		return -1; /* "1 op", "2 ops" */
	return v;
}

/* The first number of a scope box's count row ("1,234 nodes · ...", "12 scopes · 345
 * nodes"), commas dropped; which: 0 the first number, 1 the one before " nodes". */
static long row_number(const char *s, const char *before)
{
	const char *p = strstr(s, before);
	if (p == NULL)
		return -1;
	const char *q = p;
	while (q > s && (isdigit((unsigned char)q[-1]) || q[-1] == ','))
		q--;
	if (q == p)
		return -1;
	long v = 0;
	for (; q < p; q++)
		if (*q != ',')
			v = v * 10 + (*q - '0');
	return v;
}

/* The folded nodes behind value vi, counted here: its producer and every folded node
 * reached from it through the inputs of folded nodes. */
static uint32_t chain_ops(const view *v, uint32_t vi)
{
	const oxp_dag_view *dv = v->dv;
	uint32_t nn = dv->nnodes, first = dv->values[vi].producer, n = 0, sp = 0;
	uint32_t *stack = malloc((size_t)nn * sizeof(uint32_t));
	bool *seen = calloc(nn, sizeof(bool));
	if (stack == NULL || seen == NULL || first == OXP_NONE) {
		free(stack);
		free(seen);
		return UINT32_MAX;
	}
	seen[first] = true;
	stack[sp++] = first;
	while (sp > 0) {
		const oxp_dnode *dn = &dv->nodes[stack[--sp]];
		n++;
		for (size_t k = 0; k < dn->proto->ninputs; k++) {
			uint32_t in = dn->inputs[k];
			if (in == OXP_NONE || dv->values[in].kind != OXP_VALUE_NODE_OUTPUT)
				continue;
			uint32_t p = dv->values[in].producer;
			if (p != OXP_NONE && v->node_hidden[p] && !seen[p]) {
				seen[p] = true;
				stack[sp++] = p;
			}
		}
	}
	free(stack);
	free(seen);
	return n;
}

static void check_rows(const view *v, const vbox *b, uint32_t hidden)
{
	double room = OXR_MAX_W - 2 * OXR_PAD_X;
	double widest = 0;
	for (uint32_t r = 0; r < b->nrows; r++) {
		const vrow *row = &b->rows[r];
		FZ_CHECK(row->text != NULL && printable(row->text));
		FZ_CHECK(row->style < ROW__COUNT);
		bool hdr = row->style == ROW_HEADER;
		double w = oxr__text_width(row->text, hdr ? OXR_HDR_SIZE : OXR_ROW_SIZE, hdr);
		FZ_CHECK(w <= room * (1 + 1e-9));
		if (w > widest)
			widest = w;
		if (row->chain && hdr) {
			/* a named pattern's header (render/fusion.c): unfold= opens the pattern */
			FZ_CHECK(b->kind == BX_OP && oxr__fusion_op(v, b->node) != NULL);
			FZ_CHECK(ops_count_at_end(row->text) >= 2 || ends_with(row->text, ELLIPSIS));
		} else if (row->chain) {
			FZ_CHECK(b->kind == BX_OP && v->fold != NULL && row->value < v->dv->nvalues);
			uint32_t ops = v->fold[row->value].ops;
			FZ_CHECK(ops >= 1 && ops <= hidden);
			/* counted again here; with quant=fold the weights' DequantizeLinear are
			 * hidden after the counts (render/quant.c), so only without it */
			if (v->quant == NULL)
				FZ_CHECK(chain_ops(v, row->value) == ops);
			long said = ops_count_at_end(row->text);
			if (said < 0) /* cut to fit: the end is gone (docs/render.md) */
				FZ_CHECK(ends_with(row->text, ELLIPSIS));
			else
				FZ_CHECK((uint32_t)said == ops);
		}
	}
	FZ_CHECK(b->w >= OXR_MIN_W && b->w <= OXR_MAX_W);
	FZ_CHECK(b->w + 1e-9 >= widest + 2 * OXR_PAD_X || b->w == OXR_MAX_W);
	FZ_CHECK(b->h > 0);
}

/* The main graph's nodes that hier.c files (drawn: not folded, not joined to a quantized
 * op) mapped to box bi. */
static uint32_t mapped_to(const view *v, uint32_t bi)
{
	const oxp_scope *main = &v->dv->scopes[0];
	uint32_t n = 0;
	for (uint32_t k = 0; k < main->nnodes; k++) {
		uint32_t ni = main->first_node + k;
		n += v->node_box[ni] == bi && !v->node_hidden[ni] && !oxr__quant_joined(v, ni);
	}
	return n;
}

static void check_group_box(const view *v, uint32_t bi)
{
	const vbox *b = &v->boxes[bi];
	FZ_CHECK(b->nrows >= 3 && b->rows[0].style == ROW_HEADER && b->rows[2].style == ROW_SUB);
	check_opt_text(b->gpath);
	check_opt_text(b->open_all);
	const char *count = b->rows[2].text;
	uint32_t mapped = mapped_to(v, bi);
	if (b->open_all != NULL) { /* a run: "layers.0–47 ×48", "N nodes · … each", or of a
	                             * period: "features.5.0–5 ×3 (2 blocks)", "… per period" */
		FZ_CHECK(b->members >= 2);
		const char *x = strstr(b->rows[0].text, " \xc3\x97");
		long said = x ? strtol(x + 3, NULL, 10) : -1;
		const char *p = x ? strstr(x, " (") : NULL;
		long period = p ? strtol(p + 2, NULL, 10) : 1;
		if (!ends_with(b->rows[0].text, ELLIPSIS))
			FZ_CHECK(said >= 2 && said * period == (long)b->members);
		long each = row_number(count, " node");
		FZ_CHECK(each >= 1 && period >= 1 && period <= 3 && b->members % (uint32_t)period == 0 &&
		         (uint64_t)each * (b->members / (uint32_t)period) == mapped);
	} else if (strstr(count, " scopes \xc2\xb7 ") != NULL) { /* a range */
		FZ_CHECK(row_number(count, " scopes") == (long)b->members);
		FZ_CHECK(row_number(count, " node") == (long)mapped);
	} else {
		FZ_CHECK(row_number(count, " node") == (long)mapped);
	}
}

static void check_view(const view *v)
{
	const oxp_dag_view *dv = v->dv;
	uint32_t hidden = 0;
	for (uint32_t ni = 0; ni < dv->nnodes; ni++)
		hidden += v->node_hidden[ni];
	for (uint32_t bi = 0; bi < v->nboxes; bi++) {
		const vbox *b = &v->boxes[bi];
		FZ_CHECK(b->kind <= BX_STUB_IN);
		check_id(b->id);
		check_opt_text(b->title);
		FZ_CHECK(b->cluster == OXP_NONE || b->cluster < v->nclusters);
		if (b->kind == BX_OP) {
			FZ_CHECK(b->node < dv->nnodes && v->node_box[b->node] == bi);
			FZ_CHECK(!v->node_hidden[b->node]);
		}
		if (b->kind == BX_STUB_IN || b->kind == BX_STUB_OUT)
			FZ_CHECK(b->peer < v->nboxes);
		check_rows(v, b, hidden);
		if (b->kind == BX_GROUP)
			check_group_box(v, bi);
	}
	for (uint32_t e = 0; e < v->nedges; e++) {
		const vedge *ed = &v->edges[e];
		FZ_CHECK(ed->from < v->nboxes && ed->to < v->nboxes);
		FZ_CHECK(ed->style < ED__COUNT && ed->count >= 1);
		FZ_CHECK(ed->value == OXP_NONE || ed->value < dv->nvalues);
		check_opt_text(ed->label);
	}
	for (uint32_t c = 0; c < v->nclusters; c++) {
		const vcluster *cl = &v->clusters[c];
		FZ_CHECK(cl->parent == OXP_NONE || cl->parent < c); /* parents first: no cycle */
		check_id(cl->id);
		check_opt_text(cl->label);
		check_opt_text(cl->title);
	}
	/* every node of the main graph: folded, or in exactly one box (node_box is one index),
	 * or joined to a quantized op's box */
	const oxp_scope *main = &dv->scopes[0];
	for (uint32_t k = 0; k < main->nnodes; k++) {
		uint32_t ni = main->first_node + k;
		uint32_t bi = v->node_box[ni];
		if (v->node_hidden[ni]) {
			FZ_CHECK(bi == OXP_NONE);
			if (!v->node_const[ni]) { /* a folded bookkeeping node has a consumer */
				bool used = false;
				const oxp_dnode *dn = &dv->nodes[ni];
				for (size_t o = 0; o < dn->proto->noutputs; o++)
					used |= dn->outputs[o] != OXP_NONE && dv->values[dn->outputs[o]].nconsumers > 0;
				FZ_CHECK(used);
			}
			continue;
		}
		FZ_CHECK(bi < v->nboxes || (bi == OXP_NONE && oxr__quant_joined(v, ni)));
		/* a node of a named pattern is drawn in its match's box (render/fusion.c) */
		if (bi != OXP_NONE && !oxr__quant_joined(v, ni))
			FZ_CHECK(v->boxes[bi].kind == BX_GROUP ||
			         (v->boxes[bi].kind == BX_OP && v->boxes[bi].node == ni) ||
			         (v->boxes[bi].kind == BX_OP && oxr__fusion_joined(v, ni) &&
			          oxr__fusion_op(v, v->boxes[bi].node) != NULL));
	}
	for (uint32_t ni = 0; ni < dv->nnodes; ni++)
		FZ_CHECK(v->node_box[ni] == OXP_NONE || v->node_box[ni] < v->nboxes);
}

/* The folded rows of op box bi as fold.c writes them, before box_size fits them: rebuilt
 * into a scratch box of the same node.  A chain's row always ends with its count. */
static void check_unfitted_rows(view *v, uint32_t bi)
{
	oxr_error e;
	uint32_t s = oxr__view_add_box(v, BX_OP, &e);
	if (s == OXP_NONE)
		return;
	v->boxes[s].node = v->boxes[bi].node;
	oxr__fold_rows(v, s);
	const vbox *b = &v->boxes[s];
	for (uint32_t r = 0; r < b->nrows; r++) {
		const vrow *row = &b->rows[r];
		FZ_CHECK(row->text != NULL && printable(row->text));
		FZ_CHECK(strlen(row->text) < 320);
		if (row->chain)
			FZ_CHECK(ops_count_at_end(row->text) == (long)v->fold[row->value].ops);
	}
}

/* The layout JSON of the view as built: parses, with what the view holds. */
static void check_layout_json(const view *v)
{
	oxr_buf b;
	oxr_error e;
	oxr_buf_init(&b, FUZZ_MAX_OUTPUT);
	oxr_code rc = oxr__write_layout_json(v, &b, &e);
	fz_buf(&b);
	if (rc != OXR_OK) {
		fz_render_error(&e, rc);
		FZ_CHECK(rc == OXR_E_TOO_BIG);
		oxr_buf_free(&b);
		return;
	}
	json_t *j = fz_json_doc(&b, 0, "fuzz_derived: layout JSON");
	json_t *nodes = json_object_get(j, "nodes"), *edges = json_object_get(j, "edges");
	json_t *clusters = json_object_get(j, "clusters");
	FZ_CHECK(json_array_size(nodes) == v->nboxes && json_array_size(edges) == v->nedges &&
	         json_array_size(clusters) == v->nclusters);
	for (uint32_t i = 0; i < v->nboxes; i++) {
		json_t *rows = json_object_get(json_array_get(nodes, i), "rows");
		FZ_CHECK(json_array_size(rows) == v->boxes[i].nrows);
		for (uint32_t r = 0; r < v->boxes[i].nrows; r++) {
			const char *t = json_string_value(json_object_get(json_array_get(rows, r), "text"));
			FZ_CHECK(t != NULL && strcmp(t, v->boxes[i].rows[r].text) == 0);
		}
	}
	json_decref(j);
	oxr_buf_free(&b);
}

/* Options from the last two bytes: k arith (bit 0), initializers (1-2), subgraphs (3),
 * group (4-5), attrs (6-7); k2 quant (bit 0), unfold (1-2), expand (3-5, when bit 7 is
 * set) or depth (bit 6). */
static void options_from(uint8_t k, uint8_t k2, oxr_options *o)
{
	oxr_error e;
	static const char *const inits[] = {"fold", "nodes", "hide", "fold"};
	static const char *const groups[] = {"auto", "none", "1", "2"};
	static const char *const attrs[] = {"key", "none", "all", "key"};
	static const char *const unfolds[] = {"", "n0,n1,n2,n3", "n5,n7,n9", "n1.body.n0,zz,n999999"};
	static const char *const expands[] = {
	    "/a/b", "/model/*", "/model/layers.0..3/*", "model/layers.0..9", "l.1..0/*,/..,/a.b..c",
	    "*", "/model/layers.3,/x/0..0", "/model/layers.0..9"};
	oxr_options_default(o);
	FZ_CHECK(oxr_options_set(o, "arith", k & 1 ? "nodes" : "fold", &e) == OXR_OK);
	FZ_CHECK(oxr_options_set(o, "initializers", inits[(k >> 1) & 3], &e) == OXR_OK);
	FZ_CHECK(oxr_options_set(o, "subgraphs", k & 8 ? "expand" : "collapse", &e) == OXR_OK);
	FZ_CHECK(oxr_options_set(o, "group", groups[(k >> 4) & 3], &e) == OXR_OK);
	FZ_CHECK(oxr_options_set(o, "attrs", attrs[(k >> 6) & 3], &e) == OXR_OK);
	FZ_CHECK(oxr_options_set(o, "quant", k2 & 1 ? "nodes" : "fold", &e) == OXR_OK);
	FZ_CHECK(oxr_options_set(o, "unfold", unfolds[(k2 >> 1) & 3], &e) == OXR_OK);
	if (k2 & 0x80)
		FZ_CHECK(oxr_options_set(o, "expand", expands[(k2 >> 3) & 7], &e) == OXR_OK);
	else if (k2 & 0x40)
		FZ_CHECK(oxr_options_set(o, "depth", k2 & 8 ? "2" : "1", &e) == OXR_OK);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	oxp_limits lim = {.max_depth = 100, .max_graph_depth = 4, .max_alloc = (size_t)32 << 20,
	                  .max_nodes = 4000, .max_node_io = 64, .max_repeated = 1024};
	oxp_model *m;
	oxp_dag *d;
	if (!fz_parse_link(data, size, &lim, true, &m, &d))
		return 0;
	uint8_t k = size > 0 ? data[size - 1] : 0, k2 = size > 1 ? data[size - 2] : 0;
	oxr_options o;
	options_from(k, k2, &o);
	view v;
	oxr_error e;
	memset(&e, 0, sizeof(e));
	oxr_code rc = oxr__view_build(&v, m, d, &o, NULL, &e);
	if (rc != OXR_OK) {
		fz_render_error(&e, rc);
		bool no_graph = rc == OXR_E_MODEL && oxp_model_proto_get(m)->graph == NULL;
		if (rc != OXR_E_TOO_BIG && rc != OXR_E_NOMEM && !no_graph)
			fprintf(stderr, "fuzz_derived: %s: %s\n", oxr_code_name(rc), e.message);
		FZ_CHECK(rc == OXR_E_TOO_BIG || rc == OXR_E_NOMEM || no_graph);
	} else {
		check_view(&v);
		check_layout_json(&v);
		uint32_t nb = v.nboxes, scratch = 0;
		for (uint32_t bi = 0; bi < nb && scratch < MAX_SCRATCH; bi++)
			if (v.boxes[bi].kind == BX_OP) {
				check_unfitted_rows(&v, bi);
				scratch++;
			}
	}
	oxr__view_free(&v);
	/* the text functions over the node names */
	oxp_arena *a = oxp_arena_new((size_t)4 << 20);
	const oxp_dag_view *dv = oxp_dag_get(d);
	for (uint32_t ni = 0; a != NULL && ni < dv->nnodes && ni < MAX_NAMES; ni++)
		check_text_fns(a, dv->nodes[ni].proto->name, (uint8_t)(k + ni));
	oxp_arena_free(a);
	oxp_dag_free(d);
	oxp_model_free(m);
	return 0;
}
