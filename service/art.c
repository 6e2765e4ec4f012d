/*
 * art.c — what names an artifact (art.h): its kind, format and options, the model it is
 * of, its cache key and its name in the store, and the links of a summary.  Getting one
 * (memory, store, computing) is artifacts.c's.
 */
#include "service/art.h"
#include "service/hash.h"
#include "service/query.h"
#include "service/version.h"

#include <stdio.h>
#include <string.h>

/* Bumped when the renderer's output changes for the same input: names in the store. */
#define ART_VERSION OXS_VERSION "-r8" /* r2: summaries say their "kind"; r3: documents mark bookkeeping nodes; r4: operator schemas, the check, the quantization summary; r5: cost.json blocks, contrib op shapes; r6: overlay tables say how nodes were matched; r7: the contrast-checked palette, theme=; r8: one parameter count (parser/params.c) */


static const char *kind_name(oxs_art_kind k)
{
	return k == OXS_ART_SUMMARY ? "summary" : k == OXS_ART_DOCUMENT ? "document"
	       : k == OXS_ART_TENSOR ? "tensor" : k == OXS_ART_DIFF ? "diff"
	       : k == OXS_ART_COST ? "cost" : k == OXS_ART_HEAT ? "heat" : "graph";
}

const char *oxs_art_ext(const oxs_art *a)
{
	if (a->kind == OXS_ART_TENSOR)
		return a->u.tensor.opt.npy ? "npy" : "json";
	if (a->kind == OXS_ART_DIFF && a->u.diff.md)
		return "md";
	if (a->kind == OXS_ART_DIFF && a->u.diff.layout)
		return "layout.json";
	if (a->raster)
		return "png";
	return a->kind == OXS_ART_GRAPH || a->kind == OXS_ART_DIFF || a->kind == OXS_ART_HEAT
	           ? oxr_format_ext(a->fmt) : "json";
}

void oxs_art_init(oxs_art *a, oxs_art_kind kind, const char *id, oxr_format fmt,
                  const oxr_options *opt)
{
	memset(a, 0, sizeof(*a));
	a->kind = kind;
	a->fmt = fmt;
	if (opt != NULL)
		a->opt = *opt;
	else
		oxr_options_default(&a->opt);
	snprintf(a->id, sizeof(a->id), "%s", id);
	char optkey[OXS_KEY_MAX - 128];
	optkey[0] = '\0';
	if (kind == OXS_ART_GRAPH)
		oxr_options_key(&a->opt, optkey, sizeof(optkey));
	snprintf(a->key, sizeof(a->key), "%s|%s|%s|%s", id, kind_name(kind), oxs_art_ext(a), optkey);
	/* the store name: stable for the same options and renderer version */
	char salted[OXS_KEY_MAX + 32], h[65];
	snprintf(salted, sizeof(salted), "%s|%s|%s|%s", ART_VERSION, kind_name(kind), oxs_art_ext(a),
	         optkey);
	oxs_sha256_hex(salted, strlen(salted), h, 32);
	snprintf(a->name, sizeof(a->name), "%s-%s.%s", kind_name(kind), h, oxs_art_ext(a));
	a->dirfd = -1;
}

void oxs_art_tensor(oxs_art *a, const char *tensor, const oxs_preview_opt *o)
{
	snprintf(a->u.tensor.name, sizeof(a->u.tensor.name), "%s", tensor);
	a->u.tensor.opt = *o;
	char h[65], q[128];
	oxs_sha256_hex(tensor, strlen(tensor), h, 64);
	oxs_preview_key(o, q, sizeof(q));
	snprintf(a->key, sizeof(a->key), "%s|tensor|%s|%s|%s", a->id, oxs_art_ext(a), h, q);
	a->name[0] = '\0'; /* previews are not kept in the store (their statistics are) */
}

void oxs_art_cost(oxs_art *a, const char *dims)
{
	snprintf(a->u.cost.dims, sizeof(a->u.cost.dims), "%s", dims);
	char salted[OXS_KEY_MAX + 32], h[65];
	snprintf(a->key, sizeof(a->key), "%s|cost|json|%s", a->id, dims);
	snprintf(salted, sizeof(salted), "%s|cost|json|%s", ART_VERSION, dims);
	oxs_sha256_hex(salted, strlen(salted), h, 32);
	snprintf(a->name, sizeof(a->name), "cost-%s.json", h);
}

void oxs_art_diff(oxs_art *a, const char *other)
{
	snprintf(a->u.diff.other, sizeof(a->u.diff.other), "%s", other);
	/* the JSON document does not depend on render options; drawings do; Markdown on
	 * the base URL of its links only */
	char optkey[OXS_KEY_MAX - 256];
	optkey[0] = '\0';
	if (a->u.diff.md)
		snprintf(optkey, sizeof(optkey), "%s", a->u.diff.base);
	else if (a->fmt != OXR_FMT_LAYOUT_JSON || a->u.diff.layout)
		oxr_options_key(&a->opt, optkey, sizeof(optkey));
	snprintf(a->key, sizeof(a->key), "%s|diff|%s|%s|%s", a->id, oxs_art_ext(a), other, optkey);
	char salted[OXS_KEY_MAX + 32], h[65];
	snprintf(salted, sizeof(salted), "%s|diff|%s|%s|%s", ART_VERSION, oxs_art_ext(a), other, optkey);
	oxs_sha256_hex(salted, strlen(salted), h, 32);
	snprintf(a->name, sizeof(a->name), "diff-%s.%s", h, oxs_art_ext(a));
}

void oxs_art_diff_md(oxs_art *a, const char *other, const char *base)
{
	a->u.diff.md = true;
	snprintf(a->u.diff.base, sizeof(a->u.diff.base), "%s", base);
	oxs_art_diff(a, other);
}

void oxs_art_diff_layout(oxs_art *a, const char *other)
{
	a->u.diff.layout = true;
	oxs_art_diff(a, other);
}

void oxs_art_heat(oxs_art *a, const oxs_heat_req *hr)
{
	a->u.heat = *hr;
	static const char *const scales[] = {"linear", "log", "thresholds"};
	char optkey[OXS_KEY_MAX - 256], h[65];
	oxr_options_key(&a->opt, optkey, sizeof(optkey));
	/* a table: one per model, overlay (its content names the optimized model) and metric */
	const char *kind = hr->table ? "heat-table" : "heat";
	const char *scale = hr->table ? "" : scales[hr->scale % 3];
	if (hr->table)
		optkey[0] = '\0';
	/* a comparison: A's id, then "~" and B's */
	char ov[150];
	snprintf(ov, sizeof(ov), "%s%s%s", hr->overlay, hr->compare[0] ? "~" : "", hr->compare);
	snprintf(a->key, sizeof(a->key), "%s|%s|%s|%s|%s|%s|%s", a->id, kind, oxs_art_ext(a), ov,
	         hr->metric, scale, optkey);
	char salted[OXS_KEY_MAX + 32];
	snprintf(salted, sizeof(salted), "%s|%s|%s|%s|%s|%s|%s", ART_VERSION, kind,
	         oxs_art_ext(a), ov, hr->metric, scale, optkey);
	oxs_sha256_hex(salted, strlen(salted), h, 32);
	snprintf(a->name, sizeof(a->name), "%s-%s.%s", kind, h, oxs_art_ext(a));
}

void oxs_art_file(oxs_art *a, int fd, int dirfd, const char *fpath)
{
	snprintf(a->src, sizeof(a->src), "/proc/self/fd/%d", fd);
	a->dirfd = dirfd;
	snprintf(a->fpath, sizeof(a->fpath), "%s", fpath);
}

void oxs_url_path(oxr_buf *b, const char *p)
{
	for (; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '.' || c == '_' || c == '~' || c == '/' || c == '-')
			oxr_buf_append(b, p, 1);
		else
			oxr_buf_printf(b, "%%%02X", c);
	}
}

void oxs_links_json(oxr_buf *b, const oxs_art *a, bool tensor)
{
	oxr_buf base;
	oxr_buf_init(&base, 8192);
	if (a->src[0] != '\0') {
		oxr_buf_printf(&base, "/files/");
		oxs_url_path(&base, a->fpath);
	} else {
		oxr_buf_printf(&base, "/models/%s", a->id);
	}
	const char *p = base.failed || base.data == NULL ? "" : base.data;
	if (tensor)
		oxr_buf_printf(b, "\"links\":{\"self\":\"%s\",\"tensor\":\"%s/tensors/_\"", p, p);
	else
		oxr_buf_printf(b,
		               "\"links\":{\"self\":\"%s\",\"graph.svg\":\"%s/graph.svg\","
		               "\"graph.json\":\"%s/graph.json\",\"graph.dot\":\"%s/graph.dot\","
		               "\"document\":\"%s/document.json\",\"search\":\"%s/search?q=\","
		               "\"node\":\"%s/nodes/{node_id}\",\"tensor\":\"%s/tensors/{name}\","
		               "\"check\":\"%s/check\"",
		               p, p, p, p, p, p, p, p, p);
	if (a->src[0] == '\0')
		oxr_buf_printf(b, ",\"model\":\"%s/model.onnx\"", p);
	oxr_buf_printf(b, "}");
	oxr_buf_free(&base);
}
