/*
 * costdoc.c — the cost document (onnxviz.cost/1): parser/cost.c's figures per node, per
 * scope, per op type and in total, as JSON (schema: docs/api.md, "Cost").  Served as
 * GET /models/{id}/cost.json and carried by `onnxviz inspect --json`.
 *
 * A figure is a number when it is one; a polynomial in named dims is
 * {"expr": "3.7 G·batch", "terms": [{"coef": 3700000000, "dims": ["batch"]}]}; a figure
 * without a value is {"marker": "unknown" | "too_large" | "too_complex"}.
 */
#include "render/internal.h"
#include "render/jsonx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COST_FORMAT "onnxviz.cost/1"

static json_t *figure(const oxp_cost *c, const oxp_cost_poly *p)
{
	int64_t v;
	if (oxp_cost_poly_number(p, &v))
		return json_integer(v);
	json_t *o = json_object();
	if (p->flags) {
		jx_set(o, "marker", json_string(p->flags & OXP_COST_TOO_LARGE     ? "too_large"
		                                : p->flags & OXP_COST_TOO_COMPLEX ? "too_complex"
		                                                                  : "unknown"));
		return o;
	}
	/* the names of dims are the model's bytes: kept raw with a _hex form when they are not
	 * UTF-8, as everywhere in the document */
	char buf[1024];
	const char *text = oxp_cost_poly_format(c, p, 0, buf, sizeof(buf));
	jx_set_str(o, "expr", (oxp_str){text, strlen(text)});
	json_t *terms = json_array();
	for (uint8_t i = 0; terms != NULL && i < p->nterms; i++) {
		json_t *t = json_object();
		oxp_str names[OXP_COST_MAX_DEGREE];
		uint8_t n = 0;
		for (uint8_t k = 0; k < p->t[i].degree && k < OXP_COST_MAX_DEGREE; k++)
			names[n++] = c->symbols[p->t[i].sym[k]];
		jx_set(t, "coef", json_integer(p->t[i].coef));
		jx_set_str_array(t, "dims", names, n);
		json_array_append_new(terms, t);
	}
	jx_set(o, "terms", terms);
	return o;
}

static json_t *params_json(const oxp_cost_params *p)
{
	json_t *o = json_object();
	if (p->too_large) {
		jx_set(o, "marker", json_string("too_large"));
		return o;
	}
	jx_set(o, "elements", json_integer((json_int_t)p->elements));
	jx_set(o, "bytes", json_integer((json_int_t)p->bytes));
	jx_set(o, "weights", json_integer((json_int_t)p->weights));
	jx_set(o, "scale_bytes", json_integer((json_int_t)p->qbytes));
	return o;
}

static void figures(json_t *o, const oxp_cost *c, const oxp_cost_poly *macs,
                    const oxp_cost_poly *ops, const oxp_cost_poly *rd, const oxp_cost_poly *wr)
{
	oxp_cost_poly flops;
	oxp_cost_flops(&flops, macs, ops);
	jx_set(o, "macs", figure(c, macs));
	jx_set(o, "ops", figure(c, ops));
	jx_set(o, "flops", figure(c, &flops));
	if (rd != NULL) {
		jx_set(o, "read_bytes", figure(c, rd));
		jx_set(o, "written_bytes", figure(c, wr));
	}
}

static json_t *sum_json(const oxp_cost *c, const oxp_cost_sum *s)
{
	json_t *o = json_object();
	figures(o, c, &s->macs, &s->ops, &s->read, &s->written);
	jx_set(o, "params", params_json(&s->params));
	json_t *n = json_object();
	jx_set(n, "all", json_integer(s->nodes));
	jx_set(n, "counted", json_integer(s->counted));
	jx_set(n, "move", json_integer(s->moves));
	jx_set(n, "bookkeeping", json_integer(s->bookkeeping));
	jx_set(n, "uncounted", json_integer(s->uncounted));
	jx_set(n, "unknown", json_integer(s->unknown));
	jx_set(n, "control", json_integer(s->control));
	jx_set(n, "call", json_integer(s->calls));
	jx_set(o, "nodes", n);
	return o;
}

/* Blocks: the main graph's name scopes down to BLOCK_DEPTH ("/encoder",
 * "/encoder/layers.3", ...), each with the sums of the nodes filed under it (hier.c's
 * oxr__name_scope: a node is under its name without the last component).  The page lists
 * the blocks with the most MACs ("top blocks"), numbered siblings merged as one family. */
#define BLOCK_DEPTH 3

typedef struct block {
	oxp_str path;       /* "/encoder/layers.3": the model's bytes (exact, not display text) */
	uint32_t depth, nodes;
	oxp_cost_poly macs;
	uint64_t weights, bytes;
	bool params_too_large;
} block;

typedef struct blocks {
	block *b;
	uint32_t n, cap;
	oxp_smap index; /* path -> its block */
} blocks;

/* The block of path (added when new, its path copied into arena a): NULL when out of
 * memory. */
static block *block_of(blocks *bs, oxp_arena *a, oxp_str path, uint32_t depth)
{
	uint32_t i = oxp_smap_get(&bs->index, path.p, path.len);
	if (i != OXP_NONE)
		return &bs->b[i];
	if (bs->n == bs->cap) {
		uint32_t cap = bs->cap ? bs->cap * 2 : 64;
		block *nb = realloc(bs->b, cap * sizeof(*nb));
		if (nb == NULL)
			return NULL;
		bs->b = nb;
		bs->cap = cap;
	}
	char *kept = oxp_arena_alloc(a, path.len + 1);
	if (kept == NULL)
		return NULL;
	memcpy(kept, path.p, path.len);
	kept[path.len] = '\0';
	if (!oxp_smap_put(&bs->index, kept, path.len, bs->n))
		return NULL;
	block *b = &bs->b[bs->n++];
	memset(b, 0, sizeof(*b));
	b->path = (oxp_str){kept, path.len};
	b->depth = depth;
	return b;
}

static json_t *blocks_json(const oxp_cost *c, const oxp_dag_view *v, oxp_arena *a)
{
	json_t *arr = json_array();
	blocks bs = {0};
	char *path = NULL; /* the path being looked up */
	size_t pathcap = 0;
	bool oom = arr == NULL || !oxp_smap_init(&bs.index, 256);
	const oxp_scope *main = v->nscopes > 0 && v->scopes[0].kind == OXP_SCOPE_MAIN ? &v->scopes[0] : NULL;
	for (uint32_t k = 0; main != NULL && !oom && k < main->nnodes; k++) {
		uint32_t ni = main->first_node + k;
		const oxp_cost_node *n = &c->nodes[ni];
		oxp_str comp[BLOCK_DEPTH];
		size_t nc = oxr__name_scope(v->nodes[ni].proto->name, comp, BLOCK_DEPTH);
		/* "/" + comp[0] + "/" + comp[1] ...: one more component a level; it fits the name's
		 * length plus a slash per level */
		size_t need = v->nodes[ni].proto->name.len + BLOCK_DEPTH + 1;
		if (need > pathcap) {
			char *np = realloc(path, need);
			if (np == NULL) {
				oom = true;
				break;
			}
			path = np;
			pathcap = need;
		}
		size_t len = 0;
		for (size_t dpt = 1; dpt <= nc && !oom; dpt++) {
			path[len++] = '/';
			memcpy(path + len, comp[dpt - 1].p, comp[dpt - 1].len);
			len += comp[dpt - 1].len;
			block *b = block_of(&bs, a, (oxp_str){path, len}, (uint32_t)dpt);
			if (b == NULL) {
				oom = true;
				break;
			}
			b->nodes++;
			if (n->kind != OXP_CK_UNCOUNTED && n->kind != OXP_CK_CONTROL)
				oxp_cost_poly_add(&b->macs, &n->macs);
			b->weights = oxp_sat_add_u64(b->weights, n->params.weights);
			b->bytes = oxp_sat_add_u64(b->bytes, n->params.bytes);
			b->params_too_large |= n->params.too_large || b->bytes == UINT64_MAX;
		}
	}
	for (uint32_t i = 0; !oom && i < bs.n; i++) {
		const block *b = &bs.b[i];
		json_t *o = json_object();
		jx_set_str(o, "path", b->path);
		jx_set(o, "depth", json_integer(b->depth));
		jx_set(o, "nodes", json_integer(b->nodes));
		jx_set(o, "macs", figure(c, &b->macs));
		oxp_cost_params p = {.weights = b->weights, .bytes = b->bytes, .too_large = b->params_too_large};
		json_t *po = params_json(&p);
		json_object_del(po, "elements");
		json_object_del(po, "scale_bytes");
		jx_set(o, "params", po);
		json_array_append_new(arr, o);
	}
	free(path);
	free(bs.b);
	oxp_smap_free(&bs.index);
	if (oom) { /* jx_dump() then refuses the document instead of leaving "blocks" out */
		jx_oom();
		json_decref(arr);
		return NULL;
	}
	return arr;
}

oxr_code oxr_cost_json(const oxp_model *m, const oxp_dag *d, const oxp_cost_bind *dims,
                       oxr_buf *out, oxr_error *err)
{
	(void)m;
	oxp_arena *a = oxp_arena_new((size_t)512 << 20);
	const oxp_cost *c = NULL;
	oxp_error pe;
	oxp_code pc = a == NULL ? OXP_E_NOMEM : oxp_cost_compute(d, a, dims, &c, &pe);
	oxp_arena_free(pc != OXP_OK ? a : NULL);
	if (pc == OXP_E_BUDGET) { /* the model's own: too big, not the server out of memory */
		if (err != NULL) {
			err->code = OXR_E_TOO_BIG;
			snprintf(err->message, sizeof(err->message), "%s", pe.message);
		}
		return OXR_E_TOO_BIG;
	}
	if (pc != OXP_OK)
		return jx_nomem(err);
	const oxp_dag_view *v = oxp_dag_get(d);
	jx_oom_reset();
	jx_scratch_begin();
	json_t *doc = json_object();
	jx_set(doc, "format", json_string(COST_FORMAT));
	jx_set(doc, "flops", json_string("FLOPs = 2 x MACs + other ops"));
	json_t *b = json_object();
	for (uint32_t i = 0; dims != NULL && i < dims->n; i++) {
		char name[256];
		snprintf(name, sizeof(name), "%.*s", (int)dims->dims[i].name.len, dims->dims[i].name.p);
		jx_set(b, name, json_integer(dims->dims[i].value));
	}
	jx_set(doc, "dims", b);
	jx_set_str_array(doc, "symbols", c->symbols, c->nsymbols);
	jx_set(doc, "total", sum_json(c, &c->total));
	json_t *arr = json_array();
	for (uint32_t s = 0; arr != NULL && s < v->nscopes; s++) {
		json_t *o = sum_json(c, &c->scopes[s]);
		jx_set(o, "id", jx_cstr(v->scopes[s].id));
		json_array_append_new(arr, o);
	}
	jx_set(doc, "scopes", arr);
	arr = json_array();
	json_t *unc = json_array();
	for (uint32_t i = 0; arr != NULL && unc != NULL && i < c->ntypes; i++) {
		const oxp_cost_optype *t = &c->types[i];
		json_t *o = json_object();
		jx_set_str(o, "op", t->op);
		jx_set_str(o, "domain", t->domain);
		jx_set(o, "count", json_integer(t->count));
		if (t->kind == OXP_CK_UNCOUNTED) {
			json_array_append_new(unc, o);
			continue;
		}
		jx_set(o, "kind", json_string(oxp_cost_kind_name(t->kind)));
		jx_set(o, "unknown", json_integer(t->unknown));
		figures(o, c, &t->macs, &t->ops, NULL, NULL);
		json_array_append_new(arr, o);
	}
	jx_set(doc, "types", arr);
	jx_set(doc, "uncounted", unc);
	arr = json_array();
	for (uint32_t ni = 0; arr != NULL && ni < v->nnodes; ni++) {
		const oxp_cost_node *n = &c->nodes[ni];
		json_t *o = json_object();
		jx_set(o, "id", jx_cstr(v->nodes[ni].id));
		jx_set_str(o, "op", v->nodes[ni].proto->op_type);
		jx_set_str_nonempty(o, "domain", v->nodes[ni].proto->domain);
		jx_set(o, "kind", json_string(oxp_cost_kind_name(n->kind)));
		if (n->family != NULL)
			jx_set(o, "family", json_string(n->family));
		if (n->kind != OXP_CK_UNCOUNTED && n->kind != OXP_CK_CONTROL)
			figures(o, c, &n->macs, &n->ops, &n->read, &n->written);
		if (n->params.elements > 0 || n->params.too_large)
			jx_set(o, "params", params_json(&n->params));
		json_array_append_new(arr, o);
	}
	jx_set(doc, "nodes", arr);
	jx_set(doc, "blocks", blocks_json(c, v, a));
	oxr_code rc = doc != NULL ? jx_dump(doc, out, err) : jx_nomem(err);
	json_decref(doc);
	jx_scratch_end();
	oxp_arena_free(a);
	return rc;
}
