/*
 * diff.c — model diffs: diff/ (what changed) glued to render/ (how it is drawn).
 *
 *   oxs_diff_pair   the pair function of the layout worker (render/worker.c): opens both
 *                   models, compares them (oxd_diff_build) and writes the JSON document or
 *                   B's drawing with an overlay of the changes; the service runs it in a
 *                   worker process for GET /models/{a}/diff/{b}.* and POST /diff.*;
 *   oxs_cli_diff    `onnxviz diff A B [-o OUT] [--format=...]`, in process.
 *
 * The drawing is B's graph: every node marked added, changed or unchanged, the rows that
 * changed highlighted with notes saying what they were, the nodes A had and B has not as
 * ghosts next to the B nodes their neighbours became, and name scopes holding none of
 * that collapsed (render/overlay.c keeps the others open).
 */
#include "service/diff.h"
#include "diff/oxd.h"
#include "parser/oxp.h"
#include "render/oxr.h"
#include "service/cli.h"
#include "service/formats.h"
#include "service/md.h"
#include "store/oxst.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct side {
	oxp_model *m;
	oxp_dag *d;
	int dirfd;
} side;

static void close_side(side *s)
{
	oxp_dag_free(s->d);
	oxp_model_free(s->m);
	if (s->dirfd >= 0)
		close(s->dirfd);
	memset(s, 0, sizeof(*s));
	s->dirfd = -1;
}

static oxr_code open_side(side *s, const oxr_model_files *f, oxr_error *err)
{
	memset(s, 0, sizeof(*s));
	s->dirfd = -1;
	oxp_error pe;
	if (oxp_model_open_ex(&s->m, f->path, NULL, OXP_OPEN_LOW_RSS, &pe) != OXP_OK ||
	    oxp_dag_build(&s->d, s->m, &(oxp_dag_options){.infer_shapes = true}, &pe) != OXP_OK) {
		oxp_model_free(s->m);
		s->m = NULL;
		char msg[700];
		oxr_code c = pe.code == OXP_E_NOMEM ? OXR_E_NOMEM : pe.code == OXP_E_IO ? OXR_E_IO
		                                                                         : OXR_E_MODEL;
		if (err != NULL) {
			err->code = c;
			snprintf(err->message, sizeof(err->message), "%s: %s: %s", f->path,
			         oxp_code_name(pe.code), oxp_error_format(&pe, msg, sizeof(msg)));
		}
		return c;
	}
	if (f->data_dir != NULL && f->data_dir[0] != '\0')
		s->dirfd = open(f->data_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return OXR_OK;
}

oxr_code oxs_render_fail(oxr_error *err, oxr_code code, const char *fmt, ...)
{
	if (err != NULL) {
		err->code = code;
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->message, sizeof(err->message), fmt, ap);
		va_end(ap);
	}
	return code;
}

/* ---------------------------------------------------------------------------------------
 * The overlay of a diff on B's drawing
 */
static const char *param_text(oxp_arena *a, oxp_str p)
{
	const char *t = oxp_arena_printf(a, "%.*s", (int)(p.len < 12 ? p.len : 12), p.p);
	return t != NULL ? t : "?";
}

/* "f16 1×64×56×56" of a value's known type. */
static void type_text(const oxp_value *v, oxp_arena *a, char *buf, size_t size)
{
	const oxp_value_type *t = oxp_value_best_type(v);
	size_t n = 0;
	buf[0] = '\0';
	if (t->elem_type != 0)
		n += (size_t)snprintf(buf, size, "%s ", oxp_dtype_short(t->elem_type));
	if (t->rank < 0 && n < size)
		snprintf(buf + n, size - n, "?");
	for (int32_t i = 0; i < t->rank && n < size; i++) {
		const oxp_dim *d = &t->dims[i];
		int w = d->kind == OXP_DIM_VALUE
		            ? snprintf(buf + n, size - n, "%s%" PRId64, i ? "\xc3\x97" : "", d->value)
		        : d->kind == OXP_DIM_PARAM
		            ? snprintf(buf + n, size - n, "%s%s", i ? "\xc3\x97" : "",
		                       param_text(a, d->param))
		            : snprintf(buf + n, size - n, "%s?", i ? "\xc3\x97" : "");
		if (w < 0)
			break;
		n += (size_t)w;
	}
}

/* At most this many ghosts in a drawing (the rest are counted in the legend): the
 * removed part of two unrelated models is not worth drawing node by node, and
 * thousands of ghosts joined by uncut long edges make Graphviz slow (and 2.43 crash). */
#define MAX_GHOSTS 1000u

typedef struct ovbuild {
	oxd_diff *df;
	const oxd_view *dv;
	const oxp_dag_view *A, *B;
	oxp_arena *ar;
	oxr_overlay_node *nodes;
	uint32_t ghosts_left;  /* removed nodes not drawn (beyond MAX_GHOSTS) */
	bool oom;
} ovbuild;

static const char *line(ovbuild *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static const char *line(ovbuild *o, const char *fmt, ...)
{
	char buf[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* a model string cut by vsnprintf: sanitise again (valid UTF-8, bounded) */
	const char *s = oxd_text(o->df, (oxp_str){buf, strlen(buf)}, 60);
	return s;
}

/* Marks, highlighted rows and notes of one B node. */
static void node_marks(ovbuild *o, uint32_t n)
{
	const oxd_node *r = &o->dv->nodes[o->dv->of_b[n]];
	oxr_overlay_node *x = &o->nodes[n];
	x->mark = r->status == OXD_ADDED ? OXR_MARK_ADDED : r->status == OXD_CHANGED ? OXR_MARK_CHANGED
	                                                                             : OXR_MARK_SAME;
	if (r->status == OXD_SAME)
		return;
	x->flags |= OXR_OV_KEEP;
	if (r->nchanges == 0)
		return;
	const char **notes = oxp_arena_array(o->ar, (size_t)r->nchanges + 1, sizeof(char *));
	oxp_str *attrs = oxp_arena_array(o->ar, r->nchanges, sizeof(oxp_str));
	if (notes == NULL || attrs == NULL) {
		o->oom = true;
		return;
	}
	const oxp_dnode *xa = &o->A->nodes[r->a], *xb = &o->B->nodes[r->b];
	char inputs[64] = "";
	size_t ni = 0;
	uint32_t nn = 0;
	char v1[160], v2[160];
	for (uint32_t i = 0; i < r->nchanges; i++) {
		const oxd_change *c = &o->dv->changes[r->first_change + i];
		switch (c->kind) {
		case OXD_CH_OP_TYPE:
		case OXD_CH_DOMAIN:
		case OXD_CH_OVERLOAD:
			if (!(x->flags & OXR_OV_OP))
				notes[nn++] = line(o, "was %s", oxd_text(o->df, xa->proto->op_type, 40));
			x->flags |= OXR_OV_OP;
			break;
		case OXD_CH_NAME:
			x->flags |= OXR_OV_NAME;
			notes[nn++] = line(o, "was %s", oxd_text(o->df, xa->proto->name, 40));
			break;
		case OXD_CH_ATTRIBUTE:
			if (c->b != NULL)
				attrs[x->nattrs++] = c->b->name;
			if (c->b == NULL)
				notes[nn++] = line(o, "\xe2\x88\x92 %s", oxd_text(o->df, c->a->name, 28));
			else if (c->a == NULL)
				notes[nn++] = line(o, "+ %s %s", oxd_text(o->df, c->b->name, 28),
				                   oxp_attr_text(c->b, v2, sizeof(v2)));
			else if (c->tensor != OXP_NONE)
				notes[nn++] = line(o, "%s: %s", oxd_text(o->df, c->b->name, 28),
				                   oxd_tensor_line(&o->dv->tensors[c->tensor], v1, sizeof(v1)));
			else
				notes[nn++] = line(o, "%s was %s", oxd_text(o->df, c->b->name, 28),
				                   oxp_attr_text(c->a, v1, sizeof(v1)));
			break;
		case OXD_CH_TENSOR:
			if (c->pos < 64)
				x->inputs |= 1ull << c->pos;
			notes[nn++] = line(o, "%s: %s",
			                   oxd_text(o->df, oxd_tensor_name(o->df, &o->dv->tensors[c->tensor]), 24),
			                   oxd_tensor_line(&o->dv->tensors[c->tensor], v1, sizeof(v1)));
			break;
		case OXD_CH_INPUT:
			if (c->pos < 64)
				x->inputs |= 1ull << c->pos;
			if (ni < sizeof(inputs) - 12)
				ni += (size_t)snprintf(inputs + ni, sizeof(inputs) - ni, "%s%u", ni ? "," : "",
				                       c->pos);
			break;
		case OXD_CH_OUTPUT:
			notes[nn++] = line(o, "output %u %s", c->pos,
			                   c->pos < xb->proto->noutputs && xb->proto->outputs[c->pos].len
			                       ? "added" : "removed");
			break;
		case OXD_CH_TYPE:
			type_text(&o->A->values[xa->outputs[c->pos]], o->ar, v1, sizeof(v1));
			type_text(&o->B->values[xb->outputs[c->pos]], o->ar, v2, sizeof(v2));
			notes[nn++] = line(o, "out %u: %s \xe2\x86\x92 %s", c->pos, v1, v2);
			break;
		case OXD_CH_SUBGRAPH:
			notes[nn++] = xb->function != OXP_NONE ? "its function changed" : "a subgraph changed";
			break;
		default:
			break;
		}
	}
	if (ni > 0)
		notes[nn++] = line(o, "input%s %s rewired", strchr(inputs, ',') ? "s" : "", inputs);
	x->notes = notes;
	x->nnotes = nn;
	x->attrs = attrs;
}

/* Ghosts: A's removed nodes of the main graph, with edges to what their neighbours
 * became in B (or to other ghosts). */
static bool ghosts(ovbuild *o, oxr_overlay *ov, oxp_dag *da)
{
	const oxd_view *v = o->dv;
	uint32_t *ghost_of = oxp_arena_array(o->ar, o->A->nnodes ? o->A->nnodes : 1, sizeof(uint32_t));
	uint32_t *list = oxp_arena_array(o->ar, v->summary.removed + 1, sizeof(uint32_t));
	if (ghost_of == NULL || list == NULL)
		return false;
	memset(ghost_of, 0xff, (size_t)(o->A->nnodes ? o->A->nnodes : 1) * sizeof(uint32_t));
	uint32_t ng = 0;
	uint64_t nedges = 0;
	for (uint32_t i = 0; i < v->nnodes; i++) {
		const oxd_node *r = &v->nodes[i];
		if (r->status != OXD_REMOVED || o->A->nodes[r->a].scope != 0)
			continue;
		if (ng == MAX_GHOSTS) {
			o->ghosts_left++;
			continue;
		}
		ghost_of[r->a] = ng;
		list[ng++] = r->a;
		const oxp_dnode *n = &o->A->nodes[r->a];
		nedges += n->proto->ninputs;
		for (size_t k = 0; k < n->proto->noutputs; k++)
			if (n->outputs[k] != OXP_NONE)
				nedges += o->A->values[n->outputs[k]].nconsumers;
	}
	oxr_ghost_edge *edges = oxp_arena_array(o->ar, (size_t)(nedges ? nedges : 1), sizeof(oxr_ghost_edge));
	if (edges == NULL)
		return false;
	uint32_t ne = 0;
	for (uint32_t g = 0; g < ng; g++) {
		const oxp_dnode *n = &o->A->nodes[list[g]];
		for (size_t k = 0; k < n->proto->ninputs; k++) {
			uint32_t vi = n->inputs[k];
			uint32_t p = vi != OXP_NONE ? o->A->values[vi].producer : OXP_NONE;
			if (p == OXP_NONE)
				continue;
			uint32_t from = ghost_of[p] != OXP_NONE ? OXR_GHOST(ghost_of[p])
			                : v->nodes[v->of_a[p]].b;
			if (from == OXP_NONE)
				continue;
			if (!(from & 0x80000000u))
				o->nodes[from].flags |= OXR_OV_KEEP;
			edges[ne++] = (oxr_ghost_edge){from, OXR_GHOST(g)};
		}
		for (size_t k = 0; k < n->proto->noutputs; k++) {
			uint32_t vi = n->outputs[k];
			if (vi == OXP_NONE)
				continue;
			const oxp_value *val = &o->A->values[vi];
			for (uint32_t c = 0; c < val->nconsumers; c++) {
				uint32_t dst = o->A->edges[val->consumers[c]].dst;
				if (ghost_of[dst] != OXP_NONE)
					continue; /* that ghost adds it, from its inputs */
				uint32_t to = v->nodes[v->of_a[dst]].b;
				if (to == OXP_NONE)
					continue;
				o->nodes[to].flags |= OXR_OV_KEEP;
				edges[ne++] = (oxr_ghost_edge){OXR_GHOST(g), to};
			}
		}
	}
	ov->other_dag = da;
	ov->ghosts = list;
	ov->nghosts = ng;
	ov->ghost_edges = edges;
	ov->nghost_edges = ne;
	return true;
}

static bool build_overlay(oxd_diff *df, side *a, side *b, oxp_arena *ar, oxr_overlay *ov)
{
	ovbuild o = {df, oxd_get(df), oxp_dag_get(a->d), oxp_dag_get(b->d), ar, NULL, 0, false};
	memset(ov, 0, sizeof(*ov));
	o.nodes = oxp_arena_array(ar, o.B->nnodes ? o.B->nnodes : 1, sizeof(oxr_overlay_node));
	if (o.nodes == NULL)
		return false;
	for (uint32_t n = 0; n < o.B->nnodes && !o.oom; n++)
		node_marks(&o, n);
	ov->nodes = o.nodes;
	ov->other = a->m;
	bool ok = !o.oom && ghosts(&o, ov, a->d);
	const oxd_summary *s = &o.dv->summary;
	ov->legend = oxp_arena_printf(ar, "nodes: %u added, %u removed, %u changed, %u unchanged; "
	                                  "tensors: %u changed, %u added, %u removed%s",
	                              s->added, s->removed, s->changed, s->unchanged,
	                              s->tensors_changed, s->tensors_added, s->tensors_removed,
	                              o.ghosts_left ? oxp_arena_printf(ar, " (%u removed nodes not "
	                                                                   "drawn)", o.ghosts_left)
	                                            : "");
	return ok && !oxp_arena_failed(ar);
}

/* ---------------------------------------------------------------------------------------
 * Text for people (the CLI without -o)
 */
static void print_text(FILE *f, oxd_diff *df, const side *a, const side *b)
{
	const oxd_view *v = oxd_get(df);
	const oxp_dag_view *A = oxp_dag_get(a->d), *B = oxp_dag_get(b->d);
	char t1[200], t2[200];
	for (uint32_t i = 0; i < v->nfields; i++) {
		const oxd_field *x = &v->fields[i];
		fprintf(f, "model %s%s%s%s: %s \xe2\x86\x92 %s\n", x->name, x->key ? "[" : "",
		        x->key ? x->key : "", x->key ? "]" : "", x->a ? x->a : "(none)", x->b ? x->b : "(none)");
	}
	for (uint32_t i = 0; i < v->nvalues; i++) {
		const oxd_value *x = &v->values[i];
		if (x->status == OXD_SAME)
			continue;
		const oxp_value *val = x->b != OXP_NONE ? &B->values[x->b] : &A->values[x->a];
		fprintf(f, "%s %s %s\n", x->status == OXD_ADDED ? "+" : x->status == OXD_REMOVED ? "-" : "~",
		        x->output ? "output" : "input", oxd_text(df, val->name, 80));
	}
	for (uint32_t i = 0; i < v->nfunctions; i++) {
		const oxd_function *x = &v->functions[i];
		if (x->status == OXD_SAME)
			continue;
		const oxp_model_proto *p = oxp_model_proto_get(x->b != OXP_NONE ? b->m : a->m);
		const oxp_function *fn = &p->functions[x->b != OXP_NONE ? x->b : x->a];
		fprintf(f, "%s function %s\n", x->status == OXD_ADDED ? "+" : x->status == OXD_REMOVED ? "-" : "~",
		        oxd_text(df, fn->name, 80));
	}
	for (uint32_t i = 0; i < v->nnodes; i++) {
		const oxd_node *r = &v->nodes[i];
		if (r->status == OXD_SAME)
			continue;
		const oxp_dnode *n = r->b != OXP_NONE ? &B->nodes[r->b] : &A->nodes[r->a];
		fprintf(f, "%s %s %s %s",
		        r->status == OXD_ADDED ? "+" : r->status == OXD_REMOVED ? "-" : "~", n->id,
		        oxd_text(df, n->proto->op_type, 40), oxd_text(df, n->proto->name, 120));
		for (uint32_t k = 0; k < r->nchanges; k++) {
			const oxd_change *c = &v->changes[r->first_change + k];
			fprintf(f, "%s%s", k ? ", " : ": ", oxd_change_name(c->kind));
			if (c->kind == OXD_CH_ATTRIBUTE) {
				const oxp_attr *at = c->b ? c->b : c->a;
				fprintf(f, " %s %s \xe2\x86\x92 %s", oxd_text(df, at->name, 40),
				        c->a ? oxp_attr_text(c->a, t1, sizeof(t1)) : "(none)",
				        c->b ? oxp_attr_text(c->b, t2, sizeof(t2)) : "(none)");
			} else if (c->kind == OXD_CH_INPUT || c->kind == OXD_CH_OUTPUT || c->kind == OXD_CH_TYPE ||
			           c->kind == OXD_CH_TENSOR) {
				fprintf(f, " %u", c->pos);
			}
		}
		fputc('\n', f);
	}
	for (uint32_t i = 0; i < v->ntensors; i++) {
		const oxd_tensor *t = &v->tensors[i];
		if (t->status == OXD_SAME)
			continue;
		fprintf(f, "%s tensor %s: %s\n",
		        t->status == OXD_ADDED ? "+" : t->status == OXD_REMOVED ? "-" : "~",
		        oxd_text(df, oxd_tensor_name(df, t), 120), oxd_tensor_line(t, t1, sizeof(t1)));
	}
	const oxd_summary *s = &v->summary;
	fprintf(f, "nodes: %u added, %u removed, %u changed, %u unchanged; tensors: %u added, "
	           "%u removed, %u changed, %u unchanged%s\n",
	        s->added, s->removed, s->changed, s->unchanged, s->tensors_added, s->tensors_removed,
	        s->tensors_changed, s->tensors_unchanged, s->same ? "; the models are the same" : "");
}

/* ---------------------------------------------------------------------------------------
 */
/* Compare the two sides and write fmt ("json", "svg", "dot", "layout", "text", "md": with
 * links, which may be NULL) into out. */
static oxr_code diff_sides(side *b, side *a, const char *fmt, const oxr_options *o,
                           const oxs_md_links *links, oxr_buf *out, bool *same, oxr_error *err)
{
	oxd_options dopt;
	oxd_options_default(&dopt);
	dopt.dirfd_a = a->dirfd;
	dopt.dirfd_b = b->dirfd;
	oxd_diff *df = NULL;
	oxd_error de;
	oxd_code dc = oxd_diff_build(&df, a->m, a->d, b->m, b->d, &dopt, &de);
	if (dc != OXD_OK) /* over the budget: the pair's own (422); out of memory: ours (503) */
		return oxs_render_fail(err, dc == OXD_E_BUDGET ? OXR_E_TOO_BIG : OXR_E_NOMEM, "%s", de.message);
	if (same != NULL)
		*same = oxd_get(df)->summary.same;
	oxr_code rc = OXR_OK;
	if (strcmp(fmt, "json") == 0) {
		char *text = NULL;
		size_t len = 0;
		if (oxd_json(df, &text, &len, &de) != OXD_OK)
			rc = oxs_render_fail(err, OXR_E_NOMEM, "%s", de.message);
		else if (!oxr_buf_append(out, text, len) || !oxr_buf_append(out, "\n", 1))
			rc = oxs_render_fail(err, OXR_E_TOO_BIG, "the diff exceeds %zu bytes", out->max);
		free(text);
	} else if (strcmp(fmt, "text") == 0) {
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		if (f == NULL)
			rc = oxs_render_fail(err, OXR_E_NOMEM, "out of memory");
		else {
			print_text(f, df, a, b);
			if (fclose(f) != 0 || !oxr_buf_append(out, text, len))
				rc = oxs_render_fail(err, OXR_E_NOMEM, "out of memory");
		}
		free(text);
	} else if (strcmp(fmt, "md") == 0) {
		rc = oxs_diff_md(df, a->m, a->d, b->m, b->d, links, out, err);
	} else {
		/* "layout" names the drawing's JSON ("json" is the diff document) */
		const oxs_ext_format *e = oxs_format_of_ext(fmt);
		oxr_format f = !strcmp(fmt, "layout") ? OXR_FMT_LAYOUT_JSON
		               : e != NULL            ? (oxr_format)e->render
		                                      : (oxr_format)-1;
		oxp_arena *ar = oxp_arena_new((size_t)512 << 20);
		oxr_overlay ov;
		if ((int)f < 0)
			rc = oxs_render_fail(err, OXR_E_OPTION, "unknown diff format '%s' (json, svg, dot, layout, text, md)",
			          fmt);
		else if (ar == NULL || !build_overlay(df, a, b, ar, &ov))
			rc = oxs_render_fail(err, OXR_E_NOMEM, "out of memory");
		else
			rc = oxr_render_overlay(b->m, b->d, o, &ov, f, out, err);
		oxp_arena_free(ar);
	}
	oxd_free(df);
	return rc;
}

oxr_code oxs_diff_pair(const oxr_model_files *model, const oxr_model_files *other,
                       const char *fmt, const char *const *args, const oxr_options *o,
                       oxr_buf *out, oxr_error *err)
{
	/* Markdown: A's id, B's id, then the base URL when the server has one */
	oxs_md_links links = {NULL, "", ""};
	if (args != NULL && args[0] != NULL && args[1] != NULL) {
		links = (oxs_md_links){args[2], args[0], args[1]};
		if (links.base != NULL && !oxs_md_base_url_valid(links.base))
			return oxs_render_fail(err, OXR_E_OPTION, "bad base URL");
	}
	side a, b;
	oxr_code rc = open_side(&a, other, err);
	if (rc != OXR_OK)
		return rc;
	rc = open_side(&b, model, err);
	if (rc == OXR_OK)
		rc = diff_sides(&b, &a, fmt, o, &links, out, NULL, err);
	close_side(&a);
	close_side(&b);
	return rc;
}

/* ---------------------------------------------------------------------------------------
 * onnxviz diff
 */
static const char USAGE[] =
    "usage: onnxviz diff A.onnx B.onnx [-o OUT.svg|.dot|.json|.md] [--format=text|json|svg|dot|md]\n"
    "                    [--base-url=URL] [--OPTION=VALUE ...]\n"
    "What changed from A to B.  Without -o a summary for people on standard output; -o writes\n"
    "the JSON document (onnxviz.diff/1), or B's graph with the changes marked (.svg, .dot).\n"
    "Render options as for `onnxviz render` (--group, --expand, --rankdir, ...).\n"
    "--format=md: GitHub Flavored Markdown for a pull request comment (at most 65,536\n"
    "bytes); --base-url=URL adds links to the server's diff view and PNG of the two models\n"
    "(their ids: each file's SHA-256, as `POST /models` gives them).\n"
    "Exit status: 0 the models are the same, 1 they differ, 2 trouble (usage, a model that\n"
    "cannot be read, an output that cannot be written).\n";

/* The folder of a path ("." for a bare name) into buf. */
static const char *folder_of(const char *path, char *buf, size_t size)
{
	const char *slash = strrchr(path, '/');
	if (slash == NULL)
		return ".";
	size_t n = (size_t)(slash - path);
	if (n == 0)
		return "/";
	if (n >= size)
		return "";
	memcpy(buf, path, n);
	buf[n] = '\0';
	return buf;
}

/* The id a server gives the model file at path (its SHA-256); false after a message. */
static bool file_id(const char *path, char id[OXST_ID_LEN + 1])
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool ok = fd >= 0 && oxst_sha256_fd(fd, id);
	if (fd >= 0)
		close(fd);
	if (!ok)
		fprintf(stderr, "onnxviz diff: %s: cannot read it: %s\n", path, strerror(errno));
	return ok;
}

int oxs_cli_diff(int argc, char **argv)
{
	const char *paths[2] = {NULL, NULL}, *out_path = NULL, *fmt = NULL, *base = NULL;
	int npaths = 0, orc;
	oxr_options opt;
	oxr_raster ras; /* -o d.png: the SVG drawn as PNG (render/raster.c) */
	oxr_error err;
	oxr_options_default(&opt);
	oxr_raster_default(&ras);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if ((orc = oxs_cli_raster_option(&ras, "diff", a)) != 1) {
			if (orc != 0)
				return 2;
		} else if (!strcmp(a, "-o") && i + 1 < argc) {
			out_path = argv[++i];
		} else if (!strncmp(a, "--format=", 9)) {
			fmt = a + 9;
			if (strcmp(fmt, "text") && strcmp(fmt, "json") && strcmp(fmt, "svg") && strcmp(fmt, "dot") &&
			    strcmp(fmt, "md") && strcmp(fmt, "png")) {
				fprintf(stderr, "onnxviz diff: --format: text, json, svg, dot, md or png\n");
				return 2;
			}
		} else if (!strcmp(a, "--format") && i + 1 < argc) {
			if (strcmp(argv[i + 1], "md") != 0 && strcmp(argv[i + 1], "text") != 0 &&
			    strcmp(argv[i + 1], "json") != 0 && strcmp(argv[i + 1], "svg") != 0 &&
			    strcmp(argv[i + 1], "dot") != 0 && strcmp(argv[i + 1], "png") != 0) {
				fprintf(stderr, "onnxviz diff: --format: text, json, svg, dot, md or png\n");
				return 2;
			}
			fmt = argv[++i];
		} else if (!strncmp(a, "--base-url=", 11) || (!strcmp(a, "--base-url") && i + 1 < argc)) {
			base = a[10] == '=' ? a + 11 : argv[++i];
			if (!oxs_md_base_url_valid(base)) {
				fprintf(stderr, "onnxviz diff: --base-url: http:// or https:// and a path of "
				                "[A-Za-z0-9._~:/%%-] (at most 200 bytes)\n");
				return 2;
			}
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(USAGE, stdout);
			return 0;
		} else if ((orc = oxs_cli_render_option(&opt, "diff", a)) != 1) {
			if (orc != 0)
				return 2;
		} else if (a[0] == '-' && a[1] != '\0') {
			fprintf(stderr, "onnxviz diff: unknown option %s\n", a);
			return 2;
		} else if (npaths < 2) {
			paths[npaths++] = a;
		} else {
			fprintf(stderr, "onnxviz diff: two models, A and B\n");
			return 2;
		}
	}
	if (npaths != 2) {
		fputs(USAGE, stderr);
		return 2;
	}
	if (base != NULL && (fmt == NULL || strcmp(fmt, "md") != 0) &&
	    !(fmt == NULL && out_path != NULL && oxs_format_of_path(out_path) != NULL &&
	      strcmp(oxs_format_of_path(out_path)->diff, "md") == 0)) {
		fprintf(stderr, "onnxviz diff: --base-url goes with --format md (or -o FILE.md)\n");
		return 2;
	}
	if (fmt == NULL) {
		/* -o's extension (formats.c); a diff is the JSON document by default */
		const oxs_ext_format *e = oxs_format_of_path(out_path);
		fmt = out_path == NULL ? "text" : e != NULL ? e->diff : "json";
	}
	char da[4096], db[4096];
	oxr_model_files fa = {paths[0], folder_of(paths[0], da, sizeof(da))};
	oxr_model_files fb = {paths[1], folder_of(paths[1], db, sizeof(db))};
	side a, b;
	if (open_side(&a, &fa, &err) != OXR_OK) {
		fprintf(stderr, "onnxviz: %s\n", err.message);
		return 2;
	}
	if (open_side(&b, &fb, &err) != OXR_OK) {
		fprintf(stderr, "onnxviz: %s\n", err.message);
		close_side(&a);
		return 2;
	}
	if (ras.theme == OXR_THEME_DARK) /* --theme is read once: the drawing's and a PNG's */
		opt.theme_dark = true;
	oxr_buf out;
	oxr_buf_init(&out, 0);
	bool same = false;
	int rc;
	/* the links name the models by their ids on a server: each file's SHA-256 */
	char ida[OXST_ID_LEN + 1] = "", idb[OXST_ID_LEN + 1] = "", basebuf[256];
	oxs_md_links links = {NULL, ida, idb};
	if (base != NULL && strcmp(fmt, "md") == 0) {
		snprintf(basebuf, sizeof(basebuf), "%s", base);
		size_t bl = strlen(basebuf);
		while (bl > 0 && basebuf[bl - 1] == '/')
			basebuf[--bl] = '\0';
		links.base = basebuf;
		if (!file_id(paths[0], ida) || !file_id(paths[1], idb)) {
			oxr_buf_free(&out);
			close_side(&a);
			close_side(&b);
			return 2;
		}
	}
	bool png = !strcmp(fmt, "png");
	if (diff_sides(&b, &a, png ? "svg" : fmt, &opt, &links, &out, &same, &err) != OXR_OK) {
		fprintf(stderr, "onnxviz: diff: %s: %s\n", oxr_code_name(err.code), err.message);
		rc = 2;
	} else if (png && oxs_cli_rasterize(paths[1], &ras, &out) != 0) {
		rc = 2;
	} else {
		rc = oxs_write_output(out_path, &out) != 0 ? 2 : same ? 0 : 1;
	}
	oxr_buf_free(&out);
	close_side(&a);
	close_side(&b);
	return rc;
}
