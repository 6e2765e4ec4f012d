/*
 * heat_trt.c — TensorRT's per-layer files (overlay inputs, docs/overlays.md):
 *
 *  - `trtexec --exportProfile=P.json`: an array, first {"count": N} (the iterations), then
 *    per layer {"name", "timeMs" (over the N), "averageMs", "medianMs" (newer versions),
 *    "percentage"}.  Read with the scanner (heat_scan.c): a profile of 2,000,000 layers is
 *    no tree.  Metrics dur.mean, dur.p50, dur.total (us, as ORT's) and percentage.
 *  - `trtexec --exportLayerInfo=L.json --profilingVerbosity=detailed`: {"Layers": [...],
 *    "Bindings": [...]}, each layer {"Name", "LayerType", "Inputs", "Outputs", ...} (or
 *    only its name without detailed verbosity).  No times: the metric "layers" (1 on the
 *    nodes of every layer, its fused groups drawn), the layer type and precision as text.
 *
 * Layer names are ONNX node names, joined (" + " fused, " || " merged horizontally) or
 * with " input reformatter 0" added, or Myelin's "{ForeignNode[a...b]}": KEY_LAYER,
 * attributed by heat_attr.c; a fused layer's figures spread over its nodes as a fused
 * ORT kernel's time is.
 */
#include "render/heat_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define TRT_MAX_MS 1e12 /* a layer's time, ms (about 31 years) */

/* [ {"count": ...  (white space between) */
static bool sniff_profile(const char *d, size_t len, size_t start, const json_t *root)
{
	(void)root;
	static const char *const want[] = {"[", "{", "\"count\""};
	size_t i = start;
	for (int k = 0; k < 3; k++) {
		while (i < len && (d[i] == ' ' || d[i] == '\t' || d[i] == '\r' || d[i] == '\n'))
			i++;
		size_t n = strlen(want[k]);
		if (len - i < n || memcmp(d + i, want[k], n) != 0)
			return false;
		i += n;
	}
	return true;
}

/* Adds v to metric k of entry ei (a layer named twice: its figures add up) */
static bool add(heat_parse *p, uint32_t ei, int k, double v)
{
	heat_entry *e = &p->e[ei];
	double old = (uint32_t)k < e->nv ? e->v[k] : NAN;
	return oxr__heat_entry_set(p, ei, k, isnan(old) ? v : old + v);
}

static oxr_code parse_profile(heat_parse *p, const char *data, size_t len, size_t start,
                              const json_t *root)
{
	(void)root;
	static const char *const keys[] = {"averageMs", "medianMs", "timeMs", "percentage"};
	static const char *const names[] = {"dur.mean", "dur.p50", "dur.total", "percentage"};
	int mk[4];
	for (int k = 0; k < 4; k++) {
		if ((mk[k] = oxr__heat_metric_of(p, names[k], strlen(names[k]))) < 0)
			return p->err->code;
		p->units[mk[k]] = k < 3 ? "us" : "%";
		p->sum_mask |= 1u << mk[k];
	}
	p->spread = true;
	heat_scan sc = {data, len, start, p};
	char name[MAX_NAME + 1];
	if (!oxr__heat_scan_lit(&sc, '['))
		return oxr__heat_scan_fail(&sc, "'[' expected");
	bool empty = oxr__heat_scan_lit(&sc, ']');
	for (size_t idx = 0; !empty; idx++) {
		double v[4], count = NAN;
		bool have[4] = {false, false, false, false}, named = false;
		size_t nl = 0;
		if (!oxr__heat_scan_lit(&sc, '{'))
			return oxr__heat_bad(p, "$[%zu]: a layer is an object", idx);
		if (!oxr__heat_scan_lit(&sc, '}'))
			while (true) {
				char key[16];
				oxr_code rc = oxr__heat_scan_key(&sc, key, sizeof(key));
				if (rc != OXR_OK)
					return rc;
				int k = 0;
				while (k < 4 && strcmp(key, keys[k]) != 0)
					k++;
				oxr__heat_scan_ws(&sc);
				bool str = sc.i < len && data[sc.i] == '"';
				if (!strcmp(key, "name")) {
					if (!str || named)
						return oxr__heat_bad(p, "$[%zu].name: %s", idx,
						                     named ? "given twice" : "a string");
					rc = oxr__heat_scan_string(&sc, name, sizeof(name), &nl);
					named = true;
				} else if (k < 4 || !strcmp(key, "count")) {
					double x;
					if (str)
						return oxr__heat_bad(p, "$[%zu].%s: a number", idx, key);
					if ((rc = oxr__heat_scan_number(&sc, &x)) != OXR_OK)
						return rc;
					if (!(x >= 0 && x <= (k == 3 ? 100.0 + 1e-6 : TRT_MAX_MS)))
						return oxr__heat_bad(p, "$[%zu].%s: %s", idx, key,
						                     k == 3 ? "a percentage, 0..100"
						                            : "a number, 0..1e12");
					if (k < 4) {
						if (have[k])
							return oxr__heat_bad(p, "$[%zu].%s: given twice", idx, key);
						have[k] = true;
						v[k] = k < 3 ? x * 1000 : x; /* ms -> us */
					} else {
						count = x;
					}
				} else {
					rc = oxr__heat_scan_skip(&sc, 2);
				}
				if (rc != OXR_OK)
					return rc;
				if (oxr__heat_scan_lit(&sc, '}'))
					break;
				if (!oxr__heat_scan_lit(&sc, ','))
					return oxr__heat_scan_fail(&sc, "',' or '}' expected");
			}
		if (!isnan(count)) {
			if (idx != 0 || named || count != floor(count) || count < 1)
				return oxr__heat_bad(p, "$[%zu].count: the first element's, a whole number "
				                        "of iterations", idx);
			if (count > MAX_RUNS * 1e4)
				return oxr__heat_bad(p, "$[0].count: more than %g iterations", MAX_RUNS * 1e4);
			p->runs = (uint32_t)fmin(count, (double)UINT32_MAX);
		} else if (!named || nl == 0 || nl > MAX_NAME) {
			return oxr__heat_bad(p, "$[%zu].name: a layer's name (1 to %d bytes)", idx, MAX_NAME);
		} else if (!have[0] && !have[2]) {
			return oxr__heat_bad(p, "$[%zu]: neither timeMs nor averageMs", idx);
		} else {
			uint32_t ei = oxr__heat_entry_of(p, name, nl, KEY_LAYER, NULL);
			if (ei == OXP_NONE)
				return p->err->code;
			if (!have[0] && p->runs > 0) { /* the mean: the time over the iterations */
				have[0] = true;
				v[0] = v[2] / p->runs;
			}
			for (int k = 0; k < 4; k++)
				if (have[k] && !add(p, ei, mk[k], v[k]))
					return p->err->code;
		}
		if (oxr__heat_scan_lit(&sc, ']'))
			break;
		if (!oxr__heat_scan_lit(&sc, ','))
			return oxr__heat_scan_fail(&sc, "',' or ']' expected");
	}
	oxr__heat_scan_ws(&sc);
	if (sc.i < len)
		return oxr__heat_scan_fail(&sc, "text after the profile");
	return OXR_OK;
}

static bool sniff_layers(const char *d, size_t len, size_t start, const json_t *root)
{
	(void)d;
	(void)len;
	(void)start;
	return json_is_array(json_object_get(root, "Layers"));
}

/* "FP16" from TensorRT's "Format/Datatype" text ("Channel major FP16 format ...") */
static const char *precision_of(const char *fmt)
{
	static const char *const types[] = {"FP32", "FP16", "BF16", "FP8", "FP4", "Int8", "INT8",
	                                    "Int32", "INT32", "Int64", "INT64", "Bool", "UInt8"};
	for (size_t k = 0; fmt != NULL && k < sizeof(types) / sizeof(types[0]); k++)
		if (strstr(fmt, types[k]) != NULL)
			return types[k];
	return NULL;
}

static oxr_code parse_layers(heat_parse *p, const char *data, size_t len, size_t start,
                             const json_t *root)
{
	(void)data;
	(void)len;
	(void)start;
	const json_t *layers = json_object_get(root, "Layers");
	int k = oxr__heat_metric_of(p, "layers", 6);
	if (k < 0)
		return p->err->code;
	p->spread = true;
	p->exec_detail = true;
	if (json_array_size(layers) > OXR_HEAT_MAX_ENTRIES)
		return oxr__heat_bad(p, "$.Layers: more than %u layers", OXR_HEAT_MAX_ENTRIES);
	for (size_t i = 0; i < json_array_size(layers); i++) {
		const json_t *l = json_array_get(layers, i);
		const json_t *nm = json_is_object(l) ? json_object_get(l, "Name") : l;
		if (!json_is_string(nm))
			return oxr__heat_bad(p, "$.Layers[%zu]: a name, or an object with \"Name\"", i);
		uint32_t ei = oxr__heat_entry_of(p, json_string_value(nm), json_string_length(nm),
		                                 KEY_LAYER, NULL);
		if (ei == OXP_NONE || !oxr__heat_entry_set(p, ei, k, 1))
			return p->err->code;
		const json_t *ty = json_object_get(l, "LayerType");
		const json_t *outs = json_object_get(l, "Outputs");
		const json_t *o0 = json_is_array(outs) ? json_array_get(outs, 0) : NULL;
		const char *prec = precision_of(json_string_value(json_object_get(o0, "Format/Datatype")));
		if (json_is_string(ty)) {
			char text[SHARED_TEXT];
			snprintf(text, sizeof(text), "%.48s%s%s", json_string_value(ty), prec ? "_" : "",
			         prec ? prec : "");
			p->e[ei].provider = oxr__heat_shared_text(p, p->provider_raw, &p->last_provider, text);
		}
	}
	return OXR_OK;
}

const oxr__heat_reader oxr__heat_trt_profile = {"tensorrt-profile", "a tensorrt-profile input",
                                                HEAT_ARRAY, false, sniff_profile,
                                                parse_profile};
const oxr__heat_reader oxr__heat_trt_layers = {"tensorrt-layers", "a tensorrt-layers input",
                                               HEAT_OBJECT, false, sniff_layers, parse_layers};
