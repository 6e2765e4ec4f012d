/*
 * heat_netron.c — Netron attachments (an overlay input, docs/overlays.md).
 */
#include "render/heat_int.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------
 * Netron attachments: {"signature": "netron:attachment", "metrics": [{"kind": "node",
 * "target": NAME, "name": METRIC, "value": N}, ...]}
 */
static oxr_code parse_netron(heat_parse *p, const char *data, size_t len, size_t start,
                             const json_t *root)
{
	(void)data;
	(void)len;
	(void)start;
	const json_t *list = json_object_get(root, "metrics");
	if (list == NULL)
		return OXR_OK;
	if (!json_is_array(list))
		return oxr__heat_bad(p, "$.metrics: an array");
	for (size_t i = 0; i < json_array_size(list); i++) {
		const json_t *it = json_array_get(list, i);
		if (!json_is_object(it))
			return oxr__heat_bad(p, "$.metrics[%zu]: an object", i);
		const json_t *kind = json_object_get(it, "kind"), *target = json_object_get(it, "target");
		const json_t *name = json_object_get(it, "name"), *val = json_object_get(it, "value");
		if (!json_is_string(kind) || !json_is_string(target) || !json_is_string(name))
			return oxr__heat_bad(p, "$.metrics[%zu]: kind, target and name are strings", i);
		const char *ks = json_string_value(kind);
		uint8_t kk = !strcmp(ks, "node") ? KEY_NODE : !strcmp(ks, "value") || !strcmp(ks, "tensor") ? KEY_VALUE : 0xff;
		if (kk == 0xff)
			continue; /* model and graph metrics colour no box */
		double d;
		if (json_is_number(val)) {
			d = json_number_value(val);
		} else if (json_is_string(val)) {
			char *end;
			d = strtod(json_string_value(val), &end);
			if (end == json_string_value(val) || *end != '\0')
				continue; /* text */
		} else {
			return oxr__heat_bad(p, "$.metrics[%zu].value: a number", i);
		}
		if (!oxr__heat_number_ok(d))
			return oxr__heat_bad(p, "$.metrics[%zu].value: not a finite number up to 1e300", i);
		int k = oxr__heat_metric_of(p, json_string_value(name), json_string_length(name));
		if (k < 0)
			return p->err->code;
		uint32_t ei = oxr__heat_entry_of(p, json_string_value(target), json_string_length(target), kk, NULL);
		if (ei == OXP_NONE || !oxr__heat_entry_set(p, ei, k, d))
			return p->err->code;
	}
	return OXR_OK;
}

static bool sniff_netron(const char *d, size_t len, size_t start, const json_t *root)
{
	(void)d;
	(void)len;
	(void)start;
	const json_t *sig = json_object_get(root, "signature");
	return json_is_string(sig) && strcmp(json_string_value(sig), "netron:attachment") == 0;
}

const oxr__heat_reader oxr__heat_netron = {"netron", "a netron input", HEAT_OBJECT, false,
                                           sniff_netron, parse_netron};
