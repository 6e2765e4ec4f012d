/*
 * heat_me.c — Model Explorer node data (an overlay input, docs/overlays.md).
 */
#include "render/heat_int.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------
 * Model Explorer node data: {"results": {NAME: {"value": N}}, "thresholds": [...]} or
 * {GRAPH_ID: {"results": ...}, ...}
 */
static oxr_code parse_me_graph(heat_parse *p, const char *path, const json_t *g)
{
	const json_t *res = json_object_get(g, "results");
	if (!json_is_object(res))
		return oxr__heat_bad(p, "%s.results: an object of node id -> {\"value\": ...}", path);
	int k = oxr__heat_metric_of(p, "value", 5);
	if (k < 0)
		return p->err->code;
	const char *key;
	const json_t *val;
	json_object_foreach((json_t *)res, key, val) {
		const json_t *num = json_is_object(val) ? json_object_get(val, "value") : val;
		if (json_is_string(num) || json_is_null(num) || num == NULL)
			continue; /* a text value colours nothing */
		if (!json_is_number(num))
			return oxr__heat_bad(p, "%s.results[\"%.60s\"].value: a number", path, key);
		double d = json_number_value(num);
		if (!oxr__heat_number_ok(d))
			return oxr__heat_bad(p, "%s.results[\"%.60s\"].value: not a finite number up to 1e300",
			           path, key);
		uint32_t ei = oxr__heat_entry_of(p, key, strlen(key), KEY_ANY, NULL);
		if (ei == OXP_NONE || !oxr__heat_entry_set(p, ei, k, d))
			return p->err->code;
	}
	const json_t *th = json_object_get(g, "thresholds");
	if (json_is_array(th)) {
		for (size_t i = 0; i < json_array_size(th) && p->nthresholds < 16; i++) {
			const json_t *v = json_object_get(json_array_get(th, i), "value");
			if (!json_is_number(v) || !oxr__heat_number_ok(json_number_value(v)))
				return oxr__heat_bad(p, "%s.thresholds[%zu].value: a finite number", path, i);
			p->thresholds[p->nthresholds++] = json_number_value(v);
		}
	}
	return OXR_OK;
}

static oxr_code parse_model_explorer(heat_parse *p, const char *d, size_t len, size_t start,
                                     const json_t *root)
{
	(void)d;
	(void)len;
	(void)start;
	/* any other object is tried as node data: say what it is not */
	const char *key;
	const json_t *g;
	bool ok = json_object_get(root, "results") != NULL;
	json_object_foreach((json_t *)root, key, g) if (json_is_object(g) &&
	                                                 json_object_get(g, "results"))
		ok = true;
	if (!ok)
		return oxr__heat_bad(p, "a JSON object that is neither Model Explorer node data "
		                        "(\"results\"), a Netron attachment (\"signature\"), an ONNX "
		                        "Runtime trace (\"traceEvents\") nor TensorRT layer info "
		                        "(\"Layers\")");
	if (json_object_get(root, "results") != NULL)
		return parse_me_graph(p, "$", root);
	json_object_foreach((json_t *)root, key, g) {
		char path[100];
		snprintf(path, sizeof(path), "$[\"%.60s\"]", key);
		oxr_code rc = parse_me_graph(p, path, g);
		if (rc != OXR_OK)
			return rc;
	}
	return OXR_OK;
}

static bool sniff_me(const char *d, size_t len, size_t start, const json_t *root)
{
	(void)d;
	(void)len;
	(void)start;
	return json_is_object(root);
}

const oxr__heat_reader oxr__heat_me = {"model-explorer", "a model-explorer input", HEAT_OBJECT,
                                       false, sniff_me, parse_model_explorer};
