/*
 * heat_ort.c — ONNX Runtime profiles (Chrome trace JSON: an array of events, or
 * {"traceEvents": [...]}), read with the scanner (heat_scan.c): a kernel's name, op type,
 * provider and duration, and the run it belongs to.
 */
#include "render/heat_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------
 * ONNX Runtime profiles (Chrome trace JSON: an array of events, or {"traceEvents": [...]})
 */
typedef struct run_span {
	int64_t ts, end;
} run_span;

static int cmp_span(const void *a, const void *b)
{
	const run_span *x = a, *y = b;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

typedef struct kernel_ev {
	uint32_t entry;
	int64_t ts, dur;
	size_t index;
	bool has_ts;
} kernel_ev;

/* A shape list at sc->i (args.input_type_shape: [{"float": [1, 16, 64]}, ...]): the first
 * one's dims as text into out ("1x16x64"; "" for a scalar or a form not known), the rest
 * stepped over.  Attribution by op type and shapes (heat_attr.c) compares it with the
 * model's. */
static oxr_code scan_shape(heat_scan *sc, char *out, size_t cap)
{
	size_t start = sc->i, o = 0;
	bool ok = oxr__heat_scan_lit(sc, '[') && oxr__heat_scan_lit(sc, '{');
	char ty[24];
	size_t tl;
	ok = ok && oxr__heat_scan_string(sc, ty, sizeof(ty), &tl) == OXR_OK &&
	     oxr__heat_scan_lit(sc, ':') && oxr__heat_scan_lit(sc, '[');
	if (ok && !oxr__heat_scan_lit(sc, ']'))
		for (int k = 0; ok; k++) {
			double d;
			oxr__heat_scan_ws(sc);
			ok = k < 16 && sc->i < sc->n && sc->s[sc->i] >= '0' && sc->s[sc->i] <= '9' &&
			     oxr__heat_scan_number(sc, &d) == OXR_OK && d >= 0 && d <= 1e15 &&
			     d == floor(d);
			int w = ok ? snprintf(out + o, cap - o, "%s%.0f", k ? "x" : "", d) : -1;
			ok = ok && w > 0 && (size_t)w < cap - o;
			o += ok ? (size_t)w : 0;
			if (ok && oxr__heat_scan_lit(sc, ']'))
				break;
			ok = ok && oxr__heat_scan_lit(sc, ',');
		}
	ok = ok && oxr__heat_scan_lit(sc, '}');
	while (ok && oxr__heat_scan_lit(sc, ','))
		ok = oxr__heat_scan_skip(sc, 3) == OXR_OK;
	ok = ok && oxr__heat_scan_lit(sc, ']');
	out[ok ? o : 0] = '\0';
	if (ok)
		return OXR_OK;
	sc->i = start; /* another form: stepped over (or its syntax error) */
	return oxr__heat_scan_skip(sc, 2);
}

/* An event object at sc->i: the fields kept.  kind: 0 other, 1 a kernel, 2 a run. */
static oxr_code scan_event(heat_scan *sc, size_t idx, char *name, size_t *name_len, char *op,
                           char *provider, char *shapes, double *dur, double *ts,
                           unsigned *have, int *kind)
{
	char cat[16] = "", key[16], out_shape[SHAPE_TEXT];
	*have = 0;
	op[0] = provider[0] = name[0] = shapes[0] = out_shape[0] = '\0';
	*name_len = 0;
	if (!oxr__heat_scan_lit(sc, '{'))
		return oxr__heat_bad(sc->p, "$[%zu]: an event is an object", idx);
	if (!oxr__heat_scan_lit(sc, '}'))
		while (true) {
			oxr_code rc = oxr__heat_scan_key(sc, key, sizeof(key));
			if (rc != OXR_OK)
				return rc;
			unsigned bit = !strcmp(key, "cat") ? 1u : !strcmp(key, "name") ? 2u
			             : !strcmp(key, "dur") ? 4u : !strcmp(key, "ts") ? 8u
			             : !strcmp(key, "args") ? 16u : 0u;
			if (bit & *have)
				return oxr__heat_bad(sc->p, "$[%zu].%s: given twice", idx, key);
			*have |= bit;
			oxr__heat_scan_ws(sc);
			bool str = sc->i < sc->n && sc->s[sc->i] == '"';
			if (bit == 1 && str) {
				size_t cl;
				rc = oxr__heat_scan_string(sc, cat, sizeof(cat), &cl);
				if (cl >= sizeof(cat))
					cat[0] = '\0';
			} else if (bit == 2 && str) {
				rc = oxr__heat_scan_string(sc, name, MAX_NAME + 1, name_len);
			} else if ((bit == 4 || bit == 8) && !str && sc->i < sc->n &&
			           (sc->s[sc->i] == '-' || (sc->s[sc->i] >= '0' && sc->s[sc->i] <= '9'))) {
				rc = oxr__heat_scan_number(sc, bit == 4 ? dur : ts);
			} else if (bit == 16 && sc->i < sc->n && sc->s[sc->i] == '{') {
				/* args: op_name and provider */
				sc->i++;
				if (!oxr__heat_scan_lit(sc, '}'))
					while (rc == OXR_OK) {
						char ak[24];
						size_t akl;
						if ((rc = oxr__heat_scan_string(sc, ak, sizeof(ak), &akl)) != OXR_OK)
							break;
						if (!oxr__heat_scan_lit(sc, ':'))
							return oxr__heat_scan_fail(sc, "':' expected");
						oxr__heat_scan_ws(sc);
						bool astr = sc->i < sc->n && sc->s[sc->i] == '"';
						if (astr && akl < sizeof(ak) && !strcmp(ak, "op_name"))
							rc = oxr__heat_scan_string(sc, op, 65, NULL);
						else if (astr && akl < sizeof(ak) && !strcmp(ak, "provider"))
							rc = oxr__heat_scan_string(sc, provider, 65, NULL);
						else if (akl < sizeof(ak) && !strcmp(ak, "input_type_shape"))
							rc = scan_shape(sc, shapes, SHAPE_TEXT);
						else if (akl < sizeof(ak) && !strcmp(ak, "output_type_shape"))
							rc = scan_shape(sc, out_shape, SHAPE_TEXT);
						else
							rc = oxr__heat_scan_skip(sc, 2);
						if (rc != OXR_OK || oxr__heat_scan_lit(sc, '}'))
							break;
						if (!oxr__heat_scan_lit(sc, ','))
							return oxr__heat_scan_fail(sc, "',' or '}' expected");
					}
			} else {
				if (bit == 2 || bit == 1)
					*have &= ~bit; /* not a string: as if absent */
				if (bit == 4 || bit == 8)
					*have |= 32u; /* a duration or time that is no number */
				rc = oxr__heat_scan_skip(sc, 2);
			}
			if (rc != OXR_OK)
				return rc;
			if (oxr__heat_scan_lit(sc, '}'))
				break;
			if (!oxr__heat_scan_lit(sc, ','))
				return oxr__heat_scan_fail(sc, "',' or '}' expected");
		}
	/* "first input>first output", both known */
	if (shapes[0] != '\0' && out_shape[0] != '\0') {
		size_t l = strlen(shapes);
		snprintf(shapes + l, 2 * SHAPE_TEXT - l, ">%s", out_shape);
	} else {
		shapes[0] = '\0';
	}
	*kind = 0;
	if ((*have & 2u) && !strcmp(cat, "Session") && !strcmp(name, "model_run"))
		*kind = 2;
	static const char suffix[] = "_kernel_time";
	size_t sl = sizeof(suffix) - 1;
	if ((*have & 2u) && !strcmp(cat, "Node") && *name_len > sl && *name_len <= MAX_NAME &&
	    memcmp(name + *name_len - sl, suffix, sl) == 0)
		*kind = 1; /* fences and other node events are not kernel time */
	return OXR_OK;
}

static bool whole(double d, double hi, int64_t *out)
{
	if (!(d >= 0 && d <= hi) || d != floor(d))
		return false;
	*out = (int64_t)d;
	return true;
}

/* events: the profile's array, at data[start] */
static oxr_code parse_profile(heat_parse *p, const char *data, size_t len, size_t start,
                              const json_t *root)
{
	(void)root;
	heat_scan sc = {data, len, start, p};
	run_span *spans = NULL;
	size_t nspans = 0, nev = 0, capev = 0;
	kernel_ev *ev = NULL;
	char *name = malloc(MAX_NAME + 1);
	char op[65], provider[65], shapes[2 * SHAPE_TEXT];
	oxr_code rc = OXR_OK;
	if (name == NULL) {
		rc = oxr__heat_nomem(p);
		goto out;
	}
	if (!oxr__heat_scan_lit(&sc, '[')) {
		rc = oxr__heat_scan_fail(&sc, "'[' expected");
		goto out;
	}
	bool empty = oxr__heat_scan_lit(&sc, ']');
	for (size_t idx = 0; !empty; idx++) {
		double dur = 0, ts = 0;
		unsigned have = 0;
		int kind = 0;
		size_t nl = 0;
		rc = scan_event(&sc, idx, name, &nl, op, provider, shapes, &dur, &ts, &have, &kind);
		if (rc != OXR_OK)
			goto out;
		int64_t d = 0, t = 0;
		if (kind != 0 && (!(have & 4u) || !whole(dur, MAX_DUR, &d))) {
			rc = oxr__heat_bad(p, "$[%zu].dur: a whole number of microseconds, 0..1e12", idx);
			goto out;
		}
		if (kind != 0 && (have & 8u) && !whole(ts, 9e15, &t)) {
			rc = oxr__heat_bad(p, "$[%zu].ts: a whole number of microseconds, 0..9e15", idx);
			goto out;
		}
		if (kind == 2) {
			if (!(have & 8u)) {
				rc = oxr__heat_bad(p, "$[%zu].ts: a whole number of microseconds, 0..9e15", idx);
				goto out;
			}
			if (nspans >= MAX_RUNS) {
				rc = oxr__heat_bad(p, "more than %u runs", MAX_RUNS);
				goto out;
			}
			run_span *ns = realloc(spans, (nspans + 1) * sizeof(run_span));
			if (ns == NULL) {
				rc = oxr__heat_nomem(p);
				goto out;
			}
			spans = ns;
			spans[nspans].ts = t;
			spans[nspans].end = t + d;
			nspans++;
		} else if (kind == 1) {
			bool fresh;
			uint32_t ei = oxr__heat_entry_of(p, name, nl - (sizeof("_kernel_time") - 1),
			                                 KEY_ANY, &fresh);
			if (ei == OXP_NONE) {
				rc = p->err->code;
				goto out;
			}
			if (fresh) {
				p->e[ei].op = oxr__heat_shared_text(p, p->op_raw, &p->last_op, op);
				p->e[ei].provider =
				    oxr__heat_shared_text(p, p->provider_raw, &p->last_provider, provider);
				p->e[ei].shapes =
				    oxr__heat_shared_text(p, p->shapes_raw, &p->last_shapes, shapes);
			}
			p->e[ei].total += d;
			if (p->e[ei].total > (int64_t)9e15) {
				rc = oxr__heat_bad(p, "$[%zu].dur: the kernel's total passes 9e15 us", idx);
				goto out;
			}
			if (nev == capev) {
				size_t cap = capev ? capev * 2 : 1024;
				kernel_ev *ne = realloc(ev, cap * sizeof(kernel_ev));
				if (ne == NULL) {
					rc = oxr__heat_nomem(p);
					goto out;
				}
				ev = ne;
				capev = cap;
			}
			ev[nev++] = (kernel_ev){ei, t, d, idx, (have & 8u) != 0};
		}
		if (oxr__heat_scan_lit(&sc, ']'))
			break;
		if (!oxr__heat_scan_lit(&sc, ',')) {
			rc = oxr__heat_scan_fail(&sc, "',' or ']' expected");
			goto out;
		}
	}
	/* runs: the "model_run" session events; a kernel belongs to the last one starting at
	 * or before it */
	if (nspans > 1)
		qsort(spans, nspans, sizeof(run_span), cmp_span);
	uint32_t base = p->runs, nruns = nspans ? (uint32_t)nspans : 1;
	if ((uint64_t)base + nruns > MAX_RUNS) {
		rc = oxr__heat_bad(p, "more than %u runs over the inputs", MAX_RUNS);
		goto out;
	}
	p->runs += nruns;
	if (p->nk + nev > p->capk) {
		void *nk = realloc(p->k, (p->nk + nev) * sizeof(*p->k));
		if (nk == NULL) {
			rc = oxr__heat_nomem(p);
			goto out;
		}
		p->k = nk;
		p->capk = p->nk + nev;
	}
	for (size_t i = 0; i < nev; i++) {
		uint32_t run = 0;
		if (nspans > 0) {
			if (!ev[i].has_ts) {
				rc = oxr__heat_bad(p, "$[%zu].ts: a whole number of microseconds, 0..9e15", ev[i].index);
				goto out;
			}
			size_t lo = 0, hi = nspans;
			while (hi - lo > 1) {
				size_t mid = (lo + hi) / 2;
				if (spans[mid].ts <= ev[i].ts)
					lo = mid;
				else
					hi = mid;
			}
			run = (uint32_t)lo;
		}
		p->k[p->nk].entry = ev[i].entry;
		p->k[p->nk].run = base + run;
		p->k[p->nk].dur = ev[i].dur;
		p->nk++;
	}
out:
	free(name);
	free(ev);
	free(spans);
	return rc;
}

/* {"traceEvents": [...], ...} (already checked by jansson): the array, by the scanner */
static oxr_code parse_trace_object(heat_parse *p, const char *data, size_t len, size_t start,
                                   const json_t *root)
{
	(void)root;
	heat_scan sc = {data, len, start, p};
	if (!oxr__heat_scan_lit(&sc, '{'))
		return oxr__heat_scan_fail(&sc, "'{' expected");
	while (true) {
		char key[16];
		oxr_code rc = oxr__heat_scan_key(&sc, key, sizeof(key));
		if (rc != OXR_OK)
			return rc;
		if (!strcmp(key, "traceEvents")) {
			oxr__heat_scan_ws(&sc);
			return parse_profile(p, data, len, sc.i, NULL);
		}
		if ((rc = oxr__heat_scan_skip(&sc, 1)) != OXR_OK)
			return rc;
		if (!oxr__heat_scan_lit(&sc, ','))
			return oxr__heat_scan_fail(&sc, "no traceEvents");
	}
}

static bool sniff_trace(const char *d, size_t len, size_t start, const json_t *root)
{
	(void)d;
	(void)len;
	(void)start;
	return json_is_array(json_object_get(root, "traceEvents"));
}

/* an array is a profile's events */
const oxr__heat_reader oxr__heat_ort_profile = {"ort-profile", "an ort-profile input",
                                                HEAT_ARRAY, true, NULL, parse_profile};
const oxr__heat_reader oxr__heat_ort_trace = {"ort-profile", "an ort-profile input", HEAT_OBJECT,
                                              true, sniff_trace, parse_trace_object};
