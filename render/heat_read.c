/*
 * heat_read.c — the entries an overlay input gives (per distinct name: its figures or a
 * profile's kernel time), their bounds and errors, and the choice of a reader by the
 * input's content (oxr__heat_readers, render/heat_int.h).
 *
 * Inputs are parsed with the bounds of OXR_HEAT_MAX_*: every error names the input, and
 * the line (CSV, JSON syntax) or the JSON path ($[12].dur) of what is wrong.  Numbers must
 * be finite and at most 1e300 in magnitude (so sums of up to OXR_HEAT_MAX_ENTRIES of them
 * stay finite); profile durations are whole microseconds, 0..1e12, kept as integers so
 * that the per-node sums equal the profile's exactly.
 */
#include "render/heat_int.h"

#include "render/jsonx.h"

#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

oxr_code oxr__heat_bad(heat_parse *p, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* the message quotes the input (a cell, a name, jansson's token, the file's name):
	 * made display text, valid UTF-8, as it goes into JSON error answers */
	char all[440], clean[sizeof(all) * 3 + 4];
	snprintf(all, sizeof(all), "%s: %s", p->input, msg);
	size_t n = oxp_text_into(clean, (oxp_str){all, strlen(all)}, sizeof(all));
	if (n >= sizeof(p->err->message)) /* cut where a character ends */
		clean[oxp_utf8_whole(clean, sizeof(p->err->message) - 1)] = '\0';
	return oxr__fail(p->err, OXR_E_OVERLAY, "%s", clean);
}

oxr_code oxr__heat_nomem(heat_parse *p)
{
	return oxr__fail(p->err, OXR_E_NOMEM, "out of memory");
}

/* The entry for a name (created when new).  OXP_NONE after setting the error. */
uint32_t oxr__heat_entry_of(heat_parse *p, const char *name, size_t len, uint8_t kind, bool *is_new)
{
	if (len == 0 || len > MAX_NAME) {
		if (len == 0)
			oxr__heat_bad(p, "an empty name");
		else
			oxr__heat_bad(p, "a name of %zu bytes (at most %d)", len, MAX_NAME);
		return OXP_NONE;
	}
	/* the kind is part of the key (its first byte): a node and a value may share a name */
	char key[MAX_NAME + 1];
	key[0] = (char)('0' + kind);
	memcpy(key + 1, name, len);
	uint32_t i = oxp_smap_get(&p->by_name, key, len + 1);
	if (i != OXP_NONE) {
		if (is_new)
			*is_new = false;
		return i;
	}
	if (p->n >= OXR_HEAT_MAX_ENTRIES) {
		oxr__heat_bad(p, "more than %u names", OXR_HEAT_MAX_ENTRIES);
		return OXP_NONE;
	}
	if (p->n == p->cap) {
		uint32_t cap = p->cap ? p->cap * 2 : 256;
		heat_entry *ne = realloc(p->e, (size_t)cap * sizeof(heat_entry));
		if (ne == NULL) {
			oxr__heat_nomem(p);
			return OXP_NONE;
		}
		p->e = ne;
		p->cap = cap;
	}
	char *stored = oxp_arena_strndup(p->a, key, len + 1);
	if (stored == NULL || !oxp_smap_put(&p->by_name, stored, len + 1, p->n)) {
		oxr__heat_nomem(p);
		return OXP_NONE;
	}
	heat_entry *e = &p->e[p->n];
	memset(e, 0, sizeof(*e));
	e->name = stored + 1;
	e->len = (uint32_t)len; /* at most MAX_NAME */
	e->kind = kind;
	if (is_new)
		*is_new = true;
	return p->n++;
}

int oxr__heat_metric_of(heat_parse *p, const char *name, size_t len)
{
	for (uint32_t i = 0; i < p->nmetrics; i++)
		if (strlen(p->metrics[i]) == len && memcmp(p->metrics[i], name, len) == 0)
			return (int)i;
	if (len == 0 || len > 64) {
		oxr__heat_bad(p, "a metric name of %zu bytes (1 to 64)", len);
		return -1;
	}
	if (p->nmetrics >= OXR_HEAT_MAX_METRICS) {
		oxr__heat_bad(p, "more than %d metrics", OXR_HEAT_MAX_METRICS);
		return -1;
	}
	const char *m = oxr__text(p->a, (oxp_str){name, len}, 64);
	if (m == NULL) {
		oxr__heat_nomem(p);
		return -1;
	}
	p->metrics[p->nmetrics] = m;
	return (int)p->nmetrics++;
}

/* Set metric k of entry i.  An entry's values are as wide as the metrics known when its
 * first value comes (a CSV's header names them all: 8 bytes per metric and entry); a
 * metric named later (JSON inputs) widens it once to OXR_HEAT_MAX_METRICS. */
bool oxr__heat_entry_set(heat_parse *p, uint32_t i, int k, double v)
{
	heat_entry *e = &p->e[i];
	if ((uint32_t)k >= e->nv) {
		uint32_t w = e->v == NULL && p->nmetrics > (uint32_t)k ? p->nmetrics
		                                                      : OXR_HEAT_MAX_METRICS;
		double *nv = oxp_arena_array(p->a, w, sizeof(double));
		if (nv == NULL) {
			oxr__heat_nomem(p);
			return false;
		}
		for (uint32_t j = 0; j < w; j++)
			nv[j] = j < e->nv ? e->v[j] : NAN;
		e->v = nv;
		e->nv = (uint8_t)w;
	}
	e->v[k] = v;
	return true;
}

bool oxr__heat_number_ok(double v)
{
	return isfinite(v) && fabs(v) <= MAX_ABS;
}

/* A kernel's op type or provider as display text in the arena (NULL for ""), shared
 * with the previous entry when it is the same text, as it nearly always is (a profile of
 * 1.4M kernels names a few ops and providers; a copy each was 30 bytes per name).
 * raw: the previous text as given, *last its copy. */
const char *oxr__heat_shared_text(heat_parse *p, char raw[SHARED_TEXT], const char **last,
                               const char *s)
{
	if (s[0] == '\0')
		return NULL;
	if (*last != NULL && strcmp(raw, s) == 0)
		return *last;
	size_t n = strlen(s);
	const char *t = oxr__text(p->a, (oxp_str){s, n}, SHARED_TEXT - 1);
	*last = t != NULL && n < SHARED_TEXT ? t : NULL;
	if (*last != NULL)
		memcpy(raw, s, n + 1);
	return t;
}
bool oxr__heat_kernel(heat_parse *p, uint32_t ei, uint32_t run, int64_t dur)
{
	p->e[ei].total += dur;
	if (p->e[ei].total > (int64_t)9e15) {
		oxr__heat_bad(p, "the total of \"%.60s\" passes 9e15 us", p->e[ei].name);
		return false;
	}
	if (p->nk == p->capk) {
		size_t cap = p->capk ? p->capk * 2 : 1024;
		void *nk = realloc(p->k, cap * sizeof(*p->k));
		if (nk == NULL) {
			oxr__heat_nomem(p);
			return false;
		}
		p->k = nk;
		p->capk = cap;
	}
	p->k[p->nk].entry = ei;
	p->k[p->nk].run = run;
	p->k[p->nk].dur = dur;
	p->nk++;
	return true;
}

/* ---------------------------------------------------------------------------------------
 * One input: its reader, by content
 */
static const oxr__heat_reader *const readers[] = {
    &oxr__heat_trt_profile, &oxr__heat_ort_profile, /* arrays: {"count"} first, else ORT */
    &oxr__heat_ort_trace, &oxr__heat_netron, &oxr__heat_trt_layers, &oxr__heat_me,
    &oxr__heat_ov, &oxr__heat_csv,                   /* text: OpenVINO's header, else CSV */
};

oxr_code oxr__heat_parse_one(heat_parse *p, const oxr_heat_input *in)
{
	size_t i = 0;
	const char *d = in->data;
	if (in->len > OXR_HEAT_MAX_BYTES)
		return oxr__heat_bad(p, "%zu bytes, more than the %zu an overlay may have", in->len,
		                     OXR_HEAT_MAX_BYTES);
	if (in->len >= 3 && memcmp(d, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	while (i < in->len && (d[i] == ' ' || d[i] == '\t' || d[i] == '\r' || d[i] == '\n'))
		i++;
	if (i == in->len)
		return oxr__heat_bad(p, "empty");
	uint8_t shape = d[i] == '[' ? HEAT_ARRAY : d[i] == '{' ? HEAT_OBJECT : HEAT_TEXT;
	json_t *root = NULL;
	if (shape == HEAT_OBJECT) {
		json_error_t je;
		/* jansson's depth limit (2048) bounds the nesting; numbers beyond a double fail.
		 * The tree comes from a scratch arena (jsonx.c): what is kept is copied out */
		jx_scratch_begin();
		root = json_loadb(d, in->len, JSON_REJECT_DUPLICATES, &je);
		if (root == NULL) {
			jx_scratch_end();
			return oxr__heat_bad(p, "line %d, column %d: %s", je.line, je.column, je.text);
		}
	}
	const oxr__heat_reader *r = NULL;
	for (size_t k = 0; k < sizeof(readers) / sizeof(readers[0]) && r == NULL; k++)
		if (readers[k]->shape == shape &&
		    (readers[k]->sniff == NULL || readers[k]->sniff(d, in->len, i, root)))
			r = readers[k];
	oxr_code rc;
	if (r == NULL)
		rc = oxr__heat_bad(p, "neither an ONNX Runtime or TensorRT profile, TensorRT layer "
		                      "info, OpenVINO counters, Model Explorer node data, a Netron "
		                      "attachment nor CSV");
	else if (p->format != NULL && strcmp(p->format, r->name) != 0)
		rc = oxr__heat_bad(p, "%s among %s inputs: one format at a time", r->noun, p->format);
	else {
		p->format = r->name;
		p->profile = p->profile || r->profile;
		rc = r->parse(p, d, in->len, i, root);
	}
	if (root != NULL) {
		json_decref(root);
		jx_scratch_end();
	}
	return rc;
}
