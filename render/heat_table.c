/*
 * heat_table.c — an overlay's attributed table as JSON (onnxviz.overlay/1,
 * docs/overlays.md) and its figures as text.
 */
#include "render/heat_int.h"

#include "render/jsonx.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int oxr_heat_metric(const oxr_heat *h, const char *name)
{
	for (uint32_t k = 0; k < h->nmetrics; k++)
		if (!strcmp(h->metrics[k], name))
			return (int)k;
	for (uint32_t k = 0; k < h->nmetrics; k++) { /* "mean" for "dur.mean" */
		const char *dot = strchr(h->metrics[k], '.');
		if (dot != NULL && !strcmp(dot + 1, name))
			return (int)k;
	}
	return -1;
}

bool oxr_heat_scale_parse(const char *text, uint8_t *out)
{
	static const char *const names[] = {"linear", "log", "thresholds"};
	for (uint8_t i = 0; i < 3; i++)
		if (!strcmp(text, names[i])) {
			*out = i;
			return true;
		}
	return false;
}

void oxr_heat_format(const oxr_heat *h, uint32_t metric, double v, char *buf, size_t size)
{
	const char *unit = metric < h->nmetrics ? h->units[metric] : "";
	if (!isfinite(v)) {
		snprintf(buf, size, "-");
	} else if (!strcmp(unit, "us")) {
		if (fabs(v) >= 1e6)
			snprintf(buf, size, "%.3g s", v / 1e6);
		else if (fabs(v) >= 1e3)
			snprintf(buf, size, "%.3g ms", v / 1e3);
		else
			snprintf(buf, size, "%.3g µs", v);
	} else if (!strcmp(unit, "bytes")) {
		static const char *const u[] = {"B", "KB", "MB", "GB", "TB", "PB"};
		int i = 0;
		while (fabs(v) >= 1000 && i < 5) {
			v /= 1000;
			i++;
		}
		snprintf(buf, size, i ? "%.3g %s" : "%.0f %s", v, u[i]);
	} else if (unit[0] != '\0') {
		static const char *const u[] = {"", " k", " M", " G", " T", " P", " E"};
		int i = 0;
		while (fabs(v) >= 1000 && i < 6) {
			v /= 1000;
			i++;
		}
		snprintf(buf, size, "%.3g%s", v, u[i]);
	} else {
		snprintf(buf, size, "%.4g", v);
	}
}

/* ---------------------------------------------------------------------------------------
 * The attributed table (onnxviz.overlay/1)
 */
typedef struct ranked {
	uint32_t node;
	double v;
} ranked;

static int cmp_ranked(const void *a, const void *b)
{
	const ranked *x = a, *y = b;
	return x->v > y->v ? -1 : x->v < y->v ? 1 : (x->node > y->node) - (x->node < y->node);
}

/* a comparison's: the largest changes first, either way */
static int cmp_ranked_abs(const void *a, const void *b)
{
	const ranked *x = a, *y = b;
	double p = fabs(x->v), q = fabs(y->v);
	return p > q ? -1 : p < q ? 1 : (x->node > y->node) - (x->node < y->node);
}

static json_t *num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

const char *oxr_heat_how_name(unsigned bit)
{
	static const char *const names[OXR_HEAT_BY__COUNT] = {
	    "name", "fusion-name", "optimized-model", "value", "op-shapes-order", "neighbour"};
	for (unsigned k = 0; k < OXR_HEAT_BY__COUNT; k++)
		if (bit == 1u << k)
			return names[k];
	return NULL;
}

/* ["name", "op-shapes-order"]: the ways of a node's figures */
static json_t *hows(uint8_t bits)
{
	json_t *a = json_array();
	for (unsigned k = 0; k < OXR_HEAT_BY__COUNT; k++)
		if (bits & (1u << k))
			json_array_append_new(a, json_string(oxr_heat_how_name(1u << k)));
	return a;
}

oxr_code oxr_heat_table_json(const oxr_heat *h, const oxp_dag *d, uint32_t metric,
                             uint32_t max_nodes, oxr_buf *out, oxr_error *err)
{
	const oxp_dag_view *dv = oxp_dag_get(d);
	if (metric >= h->nmetrics || h->nnodes != dv->nnodes)
		return oxr__fail(err, OXR_E_OPTION, "the overlay does not fit this model");
	oxp_arena *a = oxp_arena_new((size_t)256 << 20);
	ranked *r = malloc((size_t)(h->nnodes ? h->nnodes : 1) * sizeof(ranked));
	jx_oom_reset();
	jx_scratch_begin();
	json_t *root = json_object();
	if (a == NULL || r == NULL || root == NULL) {
		oxp_arena_free(a);
		free(r);
		jx_scratch_end();
		return oxr__fail(err, OXR_E_NOMEM, "out of memory");
	}
	json_object_set_new(root, "format", json_string("onnxviz.overlay/1"));
	json_object_set_new(root, "source", json_string(h->format));
	json_object_set_new(root, "metric", json_string(h->metrics[metric]));
	json_t *ms = json_array();
	for (uint32_t k = 0; k < h->nmetrics; k++)
		json_array_append_new(ms, json_pack("{s:s, s:s, s:s}", "name", h->metrics[k], "unit",
		                                    h->units[k], "aggregate", h->sums[k] ? "sum" : "max"));
	json_object_set_new(root, "metrics", ms);
	json_object_set_new(root, "runs", json_integer(h->runs));
	json_object_set_new(root, "entries", json_integer(h->nentries));
	json_object_set_new(root, "matched", json_integer(h->nmatched));
	json_object_set_new(root, "total", num(h->total));
	json_object_set_new(root, "attributed", num(h->attributed));
	json_object_set_new(root, "coverage", num(h->total != 0 ? h->attributed / h->total : 1));
	if (h->nproviders > 0) {
		json_t *pv = json_array();
		for (uint32_t i = 0; i < h->nproviders; i++)
			json_array_append_new(pv, json_pack("{s:s, s:o, s:o}", "name", h->providers[i].name,
			                                    "total", num(h->providers[i].total), "share",
			                                    num(h->total > 0 ? h->providers[i].total / h->total : 0)));
		json_object_set_new(root, "providers", pv);
	}
	if (h->nthresholds > 0) {
		json_t *th = json_array();
		for (uint32_t i = 0; i < h->nthresholds; i++)
			json_array_append_new(th, num(h->thresholds[i]));
		json_object_set_new(root, "thresholds", th);
	}
	/* nodes with a value of the metric, largest first */
	uint32_t n = 0;
	double msum = 0;
	for (uint32_t i = 0; i < h->nnodes; i++) {
		double v = h->values[(size_t)i * h->nmetrics + metric];
		if (isfinite(v)) {
			r[n].node = i;
			r[n].v = v;
			n++;
			msum += v;
		}
	}
	qsort(r, n, sizeof(ranked), h->side != NULL ? cmp_ranked_abs : cmp_ranked);
	if (h->side != NULL) {
		json_t *cmp = json_pack("{s:s, s:s, s:s, s:o, s:o, s:o, s:i, s:i}", "a",
		                        h->compare_sources[0], "b", h->compare_sources[1], "metric",
		                        h->compare_metric, "sum_a", num(h->compare_sums[0]), "sum_b",
		                        num(h->compare_sums[1]), "sum_diff",
		                        num(h->compare_sums[1] - h->compare_sums[0]), "only_a",
		                        (json_int_t)h->compare_only[0], "only_b",
		                        (json_int_t)h->compare_only[1]);
		uint32_t faster = 0, slower = 0;
		for (uint32_t i = 0; i < n; i++) {
			faster += r[i].v < 0;
			slower += r[i].v > 0;
		}
		json_object_set_new(cmp, "faster", json_integer(faster));
		json_object_set_new(cmp, "slower", json_integer(slower));
		json_object_set_new(root, "compare", cmp);
	}
	json_object_set_new(root, "nodes_with_values", json_integer(n));
	json_object_set_new(root, "metric_total", num(msum));
	json_t *nodes = json_array();
	for (uint32_t i = 0; i < n && (max_nodes == 0 || i < max_nodes); i++) {
		uint32_t ni = r[i].node;
		const oxp_dnode *dn = &dv->nodes[ni];
		json_t *vals = json_object();
		for (uint32_t k = 0; k < h->nmetrics; k++)
			json_object_set_new(vals, h->metrics[k], num(h->values[(size_t)ni * h->nmetrics + k]));
		const char *name = oxr__text(a, dn->proto->name, 200);
		const char *op = oxr__text(a, dn->proto->op_type, 64);
		json_t *o = json_pack("{s:s, s:s, s:s, s:o, s:o}", "id", dn->id, "name", name ? name : "",
		                      "op", op ? op : "", "values", vals, "share",
		                      num(h->sums[metric] && msum > 0 && h->side == NULL ? r[i].v / msum
		                                                                      : NAN));
		if (h->side != NULL) /* "a", "b" (only there) or "both" */
			json_object_set_new(o, "side", json_string(h->side[ni] == 3   ? "both"
			                                           : h->side[ni] == 1 ? "a"
			                                                              : "b"));
		if (h->detail != NULL && h->detail[ni] != NULL) {
			/* OpenVINO's "jit_avx2_FP32": the implementation, its precision last */
			const char *t = h->detail[ni], *u = strrchr(t, '_');
			json_object_set_new(o, "exec_type", json_string(t));
			if (u != NULL && u[1] != '\0' &&
			    strspn(u + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") == strlen(u + 1))
				json_object_set_new(o, "precision", json_string(u + 1));
		}
		if (h->matched_by != NULL && h->matched_by[ni] != 0)
			json_object_set_new(o, "matched_by", hows(h->matched_by[ni]));
		if (h->fused[ni] != OXP_NONE) {
			json_object_set_new(o, "fused", json_string(dv->nodes[h->fused[ni]].id));
			json_object_set_new(o, "fused_size", json_integer(h->fused_size[ni]));
		}
		json_array_append_new(nodes, o);
	}
	json_object_set_new(root, "nodes", nodes);
	json_t *un = json_array();
	for (uint32_t i = 0; i < h->nunmatched_listed; i++) {
		const oxr_heat_unmatched *u = &h->unmatched[i];
		json_t *o = json_pack("{s:s, s:o, s:o}", "name", u->name ? u->name : "", "value",
		                      num(u->value), "share", num(u->share));
		if (u->op != NULL)
			json_object_set_new(o, "op", json_string(u->op));
		json_array_append_new(un, o);
	}
	json_object_set_new(root, "unmatched", un);
	/* all of them; "unmatched" lists the largest OXR_HEAT_UNMATCHED_LISTED */
	json_object_set_new(root, "unmatched_count", json_integer(h->nunmatched));
	if (h->ninferred > 0) { /* names matched without a name: each says how and where */
		json_t *inf = json_array();
		for (uint32_t i = 0; i < h->ninferred_listed; i++) {
			const oxr_heat_inferred *u = &h->inferred[i];
			json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:i, s:o}", "name", u->name, "op",
			                      u->op ? u->op : "", "how", oxr_heat_how_name(u->how), "node",
			                      dv->nodes[u->node].id, "nodes", (json_int_t)u->size,
			                      "value", num(u->value));
			if (u->group != NULL) {
				json_t *ids = json_array();
				for (uint32_t k = 0; k < u->size; k++)
					json_array_append_new(ids, json_string(dv->nodes[u->group[k]].id));
				json_object_set_new(o, "node_ids", ids);
			}
			json_array_append_new(inf, o);
		}
		json_object_set_new(root, "inferred", inf);
		json_object_set_new(root, "inferred_count", json_integer(h->ninferred));
	}
	oxr_code rc = oxp_arena_failed(a) ? oxr__fail(err, OXR_E_NOMEM, "out of memory")
	                                  : jx_dump(root, out, err);
	json_decref(root); /* big arrays live on the heap, not in the scratch arena */
	jx_scratch_end();
	free(r);
	oxp_arena_free(a);
	return rc;
}
