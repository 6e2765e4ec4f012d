/*
 * heat.c — per-node figures from a file (or the cost model), attributed to one model's
 * nodes and drawn as heat: box fills on a colour-blind-safe sequential scale, a value row,
 * a legend (oxr_heat_*, render/oxr.h; docs/overlays.md).
 *
 * Inputs are told apart by content and parsed with the bounds of OXR_HEAT_MAX_*: every
 * error names the input, and the line (CSV, JSON syntax) or the JSON path ($[12].dur) of
 * what is wrong.  Numbers must be finite and at most 1e300 in magnitude (so sums of up to
 * OXR_HEAT_MAX_ENTRIES of them stay finite); profile durations are whole microseconds,
 * 0..1e12, kept as integers so that the per-node sums equal the profile's exactly.
 *
 * Attribution, for each name of the input:
 *  1. a node of that name;
 *  2. the name without ORT's fusion segments ("/MatMul_2/MatmulTransposeFusion/" is the
 *     node "/MatMul_2");
 *  3. with ORT's optimized model: its node of that name, whose outputs are values of the
 *     original graph (or are, without "_nchwc"): their producers and what fed them through
 *     values the optimized graph no longer has are the nodes the kernel covers;
 *  4. a value name (without "_nchwc"): its producer; when the kernel's op type is not the
 *     producer's, the producer's single-consumer chain upwards (at most 6 nodes) to a node
 *     of that op type (Conv <- BatchNormalization <- Relu for a fused Conv).
 * A kernel that covers several nodes (a fused group) has its time spread over them in
 * proportion to their MACs + other ops (parser/cost.c), in whole microseconds, the
 * remainder to the anchor (the node of the kernel's op type), so the sums stay exact; when
 * those figures are all 0 or unknown, the anchor has it all.  Other figures (node data, CSV) go to the anchor only.
 */
#include "render/internal.h"
#include "render/jsonx.h"

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NAME 4096       /* bytes of a name */
#define MAX_GROUP 64        /* nodes a fused kernel covers */
#define MAX_RUNS 100000u
#define MAX_CELLS ((size_t)64 << 20) /* per-node per-run cells */
#define MAX_ABS 1e300
#define MAX_DUR 1e12        /* us: 11.6 days per kernel call */

enum { KEY_ANY = 0, KEY_NODE, KEY_VALUE };

/* Execution providers of a profile given metrics of their own (docs/overlays.md): the
 * first this many named [A-Za-z0-9._-], two metrics each after the four */
#define HEAT_PROVIDER_METRICS 8
#define SHARED_TEXT 80 /* op types and providers shorter than this are shared */

/* ---------------------------------------------------------------------------------------
 * Entries: what the input says, per distinct name
 */
typedef struct entry {
	/* 48 bytes: there may be 2,000,000 of them (docs/decisions.md 85) */
	const char *name; /* arena, NUL-terminated (may hold other bytes: matched as bytes) */
	const char *op, *provider; /* arena; equal strings of consecutive entries shared */
	double *v;        /* nv metrics (generic inputs), NaN where not given */
	int64_t total;    /* profiles: us over all runs */
	uint32_t len;     /* of name, at most MAX_NAME */
	uint8_t kind;     /* KEY_* */
	uint8_t nv;       /* v's width: the metrics known when it was made (all of a CSV's
	                     header), else OXR_HEAT_MAX_METRICS once a later metric needs it */
} entry;

typedef struct parse {
	oxp_arena *a;
	oxr_error *err;
	const char *input;  /* its name for messages */
	const char *format;
	entry *e;
	uint32_t n, cap;
	oxp_smap by_name;
	uint32_t nmetrics;
	const char *metrics[OXR_HEAT_MAX_METRICS];
	/* profiles */
	bool profile;
	uint32_t runs;       /* so far (over inputs) */
	int64_t *cells;      /* entry x run, us; cells of an entry are contiguous: runs are
	                        known per input before its kernels are read, so cells are
	                        laid out [entry][run] once all inputs are read (see below) */
	/* kernels are first collected as (entry, run, dur) triples */
	struct {
		uint32_t entry, run;
		int64_t dur;
	} *k;
	size_t nk, capk;
	double thresholds[16];
	uint32_t nthresholds;
	/* profiles: the providers with metrics of their own (dur.mean@P, dur.total@P) */
	const char *pm[HEAT_PROVIDER_METRICS];
	uint32_t npm;
	/* shared_text's: the last op type and provider, as given and their copies */
	char op_raw[SHARED_TEXT], provider_raw[SHARED_TEXT];
	const char *last_op, *last_provider;
} parse;

static oxr_code bad(parse *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static oxr_code bad(parse *p, const char *fmt, ...)
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

static oxr_code nomem(parse *p)
{
	return oxr__fail(p->err, OXR_E_NOMEM, "out of memory");
}

/* The entry for a name (created when new).  OXP_NONE after setting the error. */
static uint32_t entry_of(parse *p, const char *name, size_t len, uint8_t kind, bool *is_new)
{
	if (len == 0 || len > MAX_NAME) {
		if (len == 0)
			bad(p, "an empty name");
		else
			bad(p, "a name of %zu bytes (at most %d)", len, MAX_NAME);
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
		bad(p, "more than %u names", OXR_HEAT_MAX_ENTRIES);
		return OXP_NONE;
	}
	if (p->n == p->cap) {
		uint32_t cap = p->cap ? p->cap * 2 : 256;
		entry *ne = realloc(p->e, (size_t)cap * sizeof(entry));
		if (ne == NULL) {
			nomem(p);
			return OXP_NONE;
		}
		p->e = ne;
		p->cap = cap;
	}
	char *stored = oxp_arena_strndup(p->a, key, len + 1);
	if (stored == NULL || !oxp_smap_put(&p->by_name, stored, len + 1, p->n)) {
		nomem(p);
		return OXP_NONE;
	}
	entry *e = &p->e[p->n];
	memset(e, 0, sizeof(*e));
	e->name = stored + 1;
	e->len = (uint32_t)len; /* at most MAX_NAME */
	e->kind = kind;
	if (is_new)
		*is_new = true;
	return p->n++;
}

static int metric_of(parse *p, const char *name, size_t len)
{
	for (uint32_t i = 0; i < p->nmetrics; i++)
		if (strlen(p->metrics[i]) == len && memcmp(p->metrics[i], name, len) == 0)
			return (int)i;
	if (len == 0 || len > 64) {
		bad(p, "a metric name of %zu bytes (1 to 64)", len);
		return -1;
	}
	if (p->nmetrics >= OXR_HEAT_MAX_METRICS) {
		bad(p, "more than %d metrics", OXR_HEAT_MAX_METRICS);
		return -1;
	}
	const char *m = oxr__text(p->a, (oxp_str){name, len}, 64);
	if (m == NULL) {
		nomem(p);
		return -1;
	}
	p->metrics[p->nmetrics] = m;
	return (int)p->nmetrics++;
}

/* Set metric k of entry i.  An entry's values are as wide as the metrics known when its
 * first value comes (a CSV's header names them all: 8 bytes per metric and entry); a
 * metric named later (JSON inputs) widens it once to OXR_HEAT_MAX_METRICS. */
static bool entry_set(parse *p, uint32_t i, int k, double v)
{
	entry *e = &p->e[i];
	if ((uint32_t)k >= e->nv) {
		uint32_t w = e->v == NULL && p->nmetrics > (uint32_t)k ? p->nmetrics
		                                                      : OXR_HEAT_MAX_METRICS;
		double *nv = oxp_arena_array(p->a, w, sizeof(double));
		if (nv == NULL) {
			nomem(p);
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

static bool number_ok(double v)
{
	return isfinite(v) && fabs(v) <= MAX_ABS;
}

/* A kernel's op type or provider as display text in the arena (NULL for ""), shared
 * with the previous entry when it is the same text, as it nearly always is (a profile of
 * 1.4M kernels names a few ops and providers; a copy each was 30 bytes per name).
 * raw: the previous text as given, *last its copy. */
static const char *shared_text(parse *p, char raw[SHARED_TEXT], const char **last,
                               const char *s)
{
	if (s[0] == '\0')
		return NULL;
	if (*last != NULL && strcmp(raw, s) == 0)
		return *last;
	size_t n = strlen(s);
	const char *t = oxr__text(p->a, (oxp_str){s, n}, 64);
	*last = t != NULL && n < SHARED_TEXT ? t : NULL;
	if (*last != NULL)
		memcpy(raw, s, n + 1);
	return t;
}

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

/* Profiles are read by a scanner of their own, not into a jansson tree: a 10 MB profile is
 * 100,000 events, and the tree of them cost a second.  It reads what it needs (cat, name,
 * dur, ts, args.op_name, args.provider) and steps over the rest, at most 64 levels deep;
 * syntax errors name the line and column, field errors the path ($[12].dur). */
typedef struct scan {
	const char *s;
	size_t n, i;
	parse *p;
} scan;

static oxr_code scan_fail(scan *sc, const char *what)
{
	size_t line = 1, col = 1;
	for (size_t k = 0; k < sc->i && k < sc->n; k++) {
		if (sc->s[k] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	return bad(sc->p, "line %zu, column %zu: %s", line, col, what);
}

static void scan_ws(scan *sc)
{
	while (sc->i < sc->n && (sc->s[sc->i] == ' ' || sc->s[sc->i] == '\t' ||
	                         sc->s[sc->i] == '\n' || sc->s[sc->i] == '\r'))
		sc->i++;
}

static bool scan_lit(scan *sc, char c)
{
	scan_ws(sc);
	if (sc->i < sc->n && sc->s[sc->i] == c) {
		sc->i++;
		return true;
	}
	return false;
}

static int hex4(const char *s)
{
	int v = 0;
	for (int k = 0; k < 4; k++) {
		char c = s[k];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

/* A string at sc->i (after whitespace), decoded into out (cap bytes, NUL-terminated; *len
 * its full decoded length, which may exceed cap - 1: then out holds the start).  out may
 * be NULL to step over it. */
static oxr_code scan_string(scan *sc, char *out, size_t cap, size_t *len)
{
	scan_ws(sc);
	if (sc->i >= sc->n || sc->s[sc->i] != '"')
		return scan_fail(sc, "a string expected");
	sc->i++;
	size_t o = 0;
	while (true) {
		if (sc->i >= sc->n)
			return scan_fail(sc, "an unterminated string");
		unsigned char c = (unsigned char)sc->s[sc->i];
		uint32_t cp;
		if (c == '"') {
			sc->i++;
			break;
		}
		if (c < 0x20)
			return scan_fail(sc, "a control character in a string");
		if (c != '\\') {
			/* runs of plain bytes; UTF-8 is checked where names are kept (oxr__text) */
			size_t start = sc->i;
			while (sc->i < sc->n && sc->s[sc->i] != '"' && sc->s[sc->i] != '\\' &&
			       (unsigned char)sc->s[sc->i] >= 0x20)
				sc->i++;
			size_t k = sc->i - start;
			if (out != NULL && o < cap - 1)
				memcpy(out + o, sc->s + start, o + k < cap - 1 ? k : cap - 1 - o);
			o += k;
			continue;
		}
		if (sc->i + 1 >= sc->n)
			return scan_fail(sc, "an unterminated string");
		char e = sc->s[sc->i + 1];
		sc->i += 2;
		char one = e == '"' ? '"' : e == '\\' ? '\\' : e == '/' ? '/' : e == 'b' ? '\b'
		         : e == 'f' ? '\f' : e == 'n' ? '\n' : e == 'r' ? '\r' : e == 't' ? '\t' : 0;
		char u8[4];
		size_t k = 1;
		if (one != 0) {
			u8[0] = one;
		} else if (e == 'u') {
			int v = sc->i + 4 <= sc->n ? hex4(sc->s + sc->i) : -1;
			if (v < 0)
				return scan_fail(sc, "a bad \\u escape");
			sc->i += 4;
			cp = (uint32_t)v;
			if (cp >= 0xd800 && cp < 0xdc00) {
				int lo = sc->i + 6 <= sc->n && sc->s[sc->i] == '\\' && sc->s[sc->i + 1] == 'u'
				             ? hex4(sc->s + sc->i + 2) : -1;
				if (lo < 0xdc00 || lo > 0xdfff)
					return scan_fail(sc, "a lone surrogate in a \\u escape");
				sc->i += 6;
				cp = 0x10000 + ((cp - 0xd800) << 10) + ((uint32_t)lo - 0xdc00);
			} else if (cp >= 0xdc00 && cp < 0xe000) {
				return scan_fail(sc, "a lone surrogate in a \\u escape");
			}
			if (cp < 0x80) {
				u8[0] = (char)cp;
			} else if (cp < 0x800) {
				u8[0] = (char)(0xc0 | cp >> 6);
				u8[1] = (char)(0x80 | (cp & 0x3f));
				k = 2;
			} else if (cp < 0x10000) {
				u8[0] = (char)(0xe0 | cp >> 12);
				u8[1] = (char)(0x80 | (cp >> 6 & 0x3f));
				u8[2] = (char)(0x80 | (cp & 0x3f));
				k = 3;
			} else {
				u8[0] = (char)(0xf0 | cp >> 18);
				u8[1] = (char)(0x80 | (cp >> 12 & 0x3f));
				u8[2] = (char)(0x80 | (cp >> 6 & 0x3f));
				u8[3] = (char)(0x80 | (cp & 0x3f));
				k = 4;
			}
		} else {
			sc->i -= 1;
			return scan_fail(sc, "a bad escape in a string");
		}
		for (size_t j = 0; j < k; j++, o++)
			if (out != NULL && o < cap - 1)
				out[o] = u8[j];
	}
	if (out != NULL)
		out[o < cap - 1 ? o : cap - 1] = '\0';
	if (len != NULL)
		*len = o;
	return OXR_OK;
}

/* A number: JSON's grammar only (no nan, inf, hex) */
static oxr_code scan_number(scan *sc, double *out)
{
	scan_ws(sc);
	size_t start = sc->i;
	while (sc->i < sc->n && sc->i - start < 40 &&
	       ((sc->s[sc->i] >= '0' && sc->s[sc->i] <= '9') || sc->s[sc->i] == '-' ||
	        sc->s[sc->i] == '+' || sc->s[sc->i] == '.' || sc->s[sc->i] == 'e' || sc->s[sc->i] == 'E'))
		sc->i++;
	char buf[48];
	size_t k = sc->i - start;
	if (k == 0 || k >= 40)
		return scan_fail(sc, "a number expected");
	memcpy(buf, sc->s + start, k);
	buf[k] = '\0';
	char *end;
	*out = strtod(buf, &end);
	if (*end != '\0' || !(buf[0] == '-' || (buf[0] >= '0' && buf[0] <= '9')))
		return scan_fail(sc, "a malformed number");
	return OXR_OK;
}

static oxr_code scan_skip(scan *sc, int depth)
{
	scan_ws(sc);
	if (sc->i >= sc->n)
		return scan_fail(sc, "a value expected");
	char c = sc->s[sc->i];
	if (c == '"')
		return scan_string(sc, NULL, 0, NULL);
	if (c == '{' || c == '[') {
		if (depth >= 64)
			return scan_fail(sc, "nested deeper than 64 levels");
		char close = c == '{' ? '}' : ']';
		sc->i++;
		if (scan_lit(sc, close))
			return OXR_OK;
		while (true) {
			oxr_code rc;
			if (c == '{') {
				if ((rc = scan_string(sc, NULL, 0, NULL)) != OXR_OK)
					return rc;
				if (!scan_lit(sc, ':'))
					return scan_fail(sc, "':' expected");
			}
			if ((rc = scan_skip(sc, depth + 1)) != OXR_OK)
				return rc;
			if (scan_lit(sc, close))
				return OXR_OK;
			if (!scan_lit(sc, ','))
				return scan_fail(sc, "',' or the end of an object or array expected");
		}
	}
	static const char *const words[] = {"true", "false", "null"};
	for (int w = 0; w < 3; w++) {
		size_t k = strlen(words[w]);
		if (sc->n - sc->i >= k && memcmp(sc->s + sc->i, words[w], k) == 0) {
			sc->i += k;
			return OXR_OK;
		}
	}
	double d;
	return scan_number(sc, &d);
}

typedef struct kernel_ev {
	uint32_t entry;
	int64_t ts, dur;
	size_t index;
	bool has_ts;
} kernel_ev;

/* An event object at sc->i: the fields kept.  kind: 0 other, 1 a kernel, 2 a run. */
static oxr_code scan_event(scan *sc, size_t idx, char *name, size_t *name_len, char *op,
                           char *provider, double *dur, double *ts, unsigned *have, int *kind)
{
	char cat[16] = "", key[16];
	*have = 0;
	op[0] = provider[0] = name[0] = '\0';
	*name_len = 0;
	if (!scan_lit(sc, '{'))
		return bad(sc->p, "$[%zu]: an event is an object", idx);
	if (!scan_lit(sc, '}'))
		while (true) {
			size_t kl;
			oxr_code rc = scan_string(sc, key, sizeof(key), &kl);
			if (rc != OXR_OK)
				return rc;
			if (!scan_lit(sc, ':'))
				return scan_fail(sc, "':' expected");
			if (kl >= sizeof(key))
				key[0] = '\0';
			unsigned bit = !strcmp(key, "cat") ? 1u : !strcmp(key, "name") ? 2u
			             : !strcmp(key, "dur") ? 4u : !strcmp(key, "ts") ? 8u
			             : !strcmp(key, "args") ? 16u : 0u;
			if (bit & *have)
				return bad(sc->p, "$[%zu].%s: given twice", idx, key);
			*have |= bit;
			scan_ws(sc);
			bool str = sc->i < sc->n && sc->s[sc->i] == '"';
			if (bit == 1 && str) {
				size_t cl;
				rc = scan_string(sc, cat, sizeof(cat), &cl);
				if (cl >= sizeof(cat))
					cat[0] = '\0';
			} else if (bit == 2 && str) {
				rc = scan_string(sc, name, MAX_NAME + 1, name_len);
			} else if ((bit == 4 || bit == 8) && !str && sc->i < sc->n &&
			           (sc->s[sc->i] == '-' || (sc->s[sc->i] >= '0' && sc->s[sc->i] <= '9'))) {
				rc = scan_number(sc, bit == 4 ? dur : ts);
			} else if (bit == 16 && sc->i < sc->n && sc->s[sc->i] == '{') {
				/* args: op_name and provider */
				sc->i++;
				if (!scan_lit(sc, '}'))
					while (rc == OXR_OK) {
						char ak[16];
						size_t akl;
						if ((rc = scan_string(sc, ak, sizeof(ak), &akl)) != OXR_OK)
							break;
						if (!scan_lit(sc, ':'))
							return scan_fail(sc, "':' expected");
						scan_ws(sc);
						bool astr = sc->i < sc->n && sc->s[sc->i] == '"';
						if (astr && akl < sizeof(ak) && !strcmp(ak, "op_name"))
							rc = scan_string(sc, op, 65, NULL);
						else if (astr && akl < sizeof(ak) && !strcmp(ak, "provider"))
							rc = scan_string(sc, provider, 65, NULL);
						else
							rc = scan_skip(sc, 2);
						if (rc != OXR_OK || scan_lit(sc, '}'))
							break;
						if (!scan_lit(sc, ','))
							return scan_fail(sc, "',' or '}' expected");
					}
			} else {
				if (bit == 2 || bit == 1)
					*have &= ~bit; /* not a string: as if absent */
				if (bit == 4 || bit == 8)
					*have |= 32u; /* a duration or time that is no number */
				rc = scan_skip(sc, 2);
			}
			if (rc != OXR_OK)
				return rc;
			if (scan_lit(sc, '}'))
				break;
			if (!scan_lit(sc, ','))
				return scan_fail(sc, "',' or '}' expected");
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
static oxr_code parse_profile(parse *p, const char *data, size_t len, size_t start)
{
	scan sc = {data, len, start, p};
	run_span *spans = NULL;
	size_t nspans = 0, nev = 0, capev = 0;
	kernel_ev *ev = NULL;
	char *name = malloc(MAX_NAME + 1);
	char op[65], provider[65];
	oxr_code rc = OXR_OK;
	if (name == NULL) {
		rc = nomem(p);
		goto out;
	}
	if (!scan_lit(&sc, '[')) {
		rc = scan_fail(&sc, "'[' expected");
		goto out;
	}
	bool empty = scan_lit(&sc, ']');
	for (size_t idx = 0; !empty; idx++) {
		double dur = 0, ts = 0;
		unsigned have = 0;
		int kind = 0;
		size_t nl = 0;
		rc = scan_event(&sc, idx, name, &nl, op, provider, &dur, &ts, &have, &kind);
		if (rc != OXR_OK)
			goto out;
		int64_t d = 0, t = 0;
		if (kind != 0 && (!(have & 4u) || !whole(dur, MAX_DUR, &d))) {
			rc = bad(p, "$[%zu].dur: a whole number of microseconds, 0..1e12", idx);
			goto out;
		}
		if (kind != 0 && (have & 8u) && !whole(ts, 9e15, &t)) {
			rc = bad(p, "$[%zu].ts: a whole number of microseconds, 0..9e15", idx);
			goto out;
		}
		if (kind == 2) {
			if (!(have & 8u)) {
				rc = bad(p, "$[%zu].ts: a whole number of microseconds, 0..9e15", idx);
				goto out;
			}
			if (nspans >= MAX_RUNS) {
				rc = bad(p, "more than %u runs", MAX_RUNS);
				goto out;
			}
			run_span *ns = realloc(spans, (nspans + 1) * sizeof(run_span));
			if (ns == NULL) {
				rc = nomem(p);
				goto out;
			}
			spans = ns;
			spans[nspans].ts = t;
			spans[nspans].end = t + d;
			nspans++;
		} else if (kind == 1) {
			bool fresh;
			uint32_t ei = entry_of(p, name, nl - (sizeof("_kernel_time") - 1), KEY_ANY, &fresh);
			if (ei == OXP_NONE) {
				rc = p->err->code;
				goto out;
			}
			if (fresh) {
				p->e[ei].op = shared_text(p, p->op_raw, &p->last_op, op);
				p->e[ei].provider =
				    shared_text(p, p->provider_raw, &p->last_provider, provider);
			}
			p->e[ei].total += d;
			if (p->e[ei].total > (int64_t)9e15) {
				rc = bad(p, "$[%zu].dur: the kernel's total passes 9e15 us", idx);
				goto out;
			}
			if (nev == capev) {
				size_t cap = capev ? capev * 2 : 1024;
				kernel_ev *ne = realloc(ev, cap * sizeof(kernel_ev));
				if (ne == NULL) {
					rc = nomem(p);
					goto out;
				}
				ev = ne;
				capev = cap;
			}
			ev[nev++] = (kernel_ev){ei, t, d, idx, (have & 8u) != 0};
		}
		if (scan_lit(&sc, ']'))
			break;
		if (!scan_lit(&sc, ',')) {
			rc = scan_fail(&sc, "',' or ']' expected");
			goto out;
		}
	}
	/* runs: the "model_run" session events; a kernel belongs to the last one starting at
	 * or before it */
	if (nspans > 1)
		qsort(spans, nspans, sizeof(run_span), cmp_span);
	uint32_t base = p->runs, nruns = nspans ? (uint32_t)nspans : 1;
	if ((uint64_t)base + nruns > MAX_RUNS) {
		rc = bad(p, "more than %u runs over the inputs", MAX_RUNS);
		goto out;
	}
	p->runs += nruns;
	if (p->nk + nev > p->capk) {
		void *nk = realloc(p->k, (p->nk + nev) * sizeof(*p->k));
		if (nk == NULL) {
			rc = nomem(p);
			goto out;
		}
		p->k = nk;
		p->capk = p->nk + nev;
	}
	for (size_t i = 0; i < nev; i++) {
		uint32_t run = 0;
		if (nspans > 0) {
			if (!ev[i].has_ts) {
				rc = bad(p, "$[%zu].ts: a whole number of microseconds, 0..9e15", ev[i].index);
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
static oxr_code parse_trace_object(parse *p, const char *data, size_t len, size_t start)
{
	scan sc = {data, len, start, p};
	if (!scan_lit(&sc, '{'))
		return scan_fail(&sc, "'{' expected");
	while (true) {
		char key[16];
		size_t kl;
		oxr_code rc = scan_string(&sc, key, sizeof(key), &kl);
		if (rc != OXR_OK)
			return rc;
		if (!scan_lit(&sc, ':'))
			return scan_fail(&sc, "':' expected");
		if (kl == 11 && !strcmp(key, "traceEvents")) {
			scan_ws(&sc);
			return parse_profile(p, data, len, sc.i);
		}
		if ((rc = scan_skip(&sc, 1)) != OXR_OK)
			return rc;
		if (!scan_lit(&sc, ','))
			return scan_fail(&sc, "no traceEvents");
	}
}

/* ---------------------------------------------------------------------------------------
 * Model Explorer node data: {"results": {NAME: {"value": N}}, "thresholds": [...]} or
 * {GRAPH_ID: {"results": ...}, ...}
 */
static oxr_code parse_me_graph(parse *p, const char *path, const json_t *g)
{
	const json_t *res = json_object_get(g, "results");
	if (!json_is_object(res))
		return bad(p, "%s.results: an object of node id -> {\"value\": ...}", path);
	int k = metric_of(p, "value", 5);
	if (k < 0)
		return p->err->code;
	const char *key;
	const json_t *val;
	json_object_foreach((json_t *)res, key, val) {
		const json_t *num = json_is_object(val) ? json_object_get(val, "value") : val;
		if (json_is_string(num) || json_is_null(num) || num == NULL)
			continue; /* a text value colours nothing */
		if (!json_is_number(num))
			return bad(p, "%s.results[\"%.60s\"].value: a number", path, key);
		double d = json_number_value(num);
		if (!number_ok(d))
			return bad(p, "%s.results[\"%.60s\"].value: not a finite number up to 1e300",
			           path, key);
		uint32_t ei = entry_of(p, key, strlen(key), KEY_ANY, NULL);
		if (ei == OXP_NONE || !entry_set(p, ei, k, d))
			return p->err->code;
	}
	const json_t *th = json_object_get(g, "thresholds");
	if (json_is_array(th)) {
		for (size_t i = 0; i < json_array_size(th) && p->nthresholds < 16; i++) {
			const json_t *v = json_object_get(json_array_get(th, i), "value");
			if (!json_is_number(v) || !number_ok(json_number_value(v)))
				return bad(p, "%s.thresholds[%zu].value: a finite number", path, i);
			p->thresholds[p->nthresholds++] = json_number_value(v);
		}
	}
	return OXR_OK;
}

static oxr_code parse_model_explorer(parse *p, const json_t *root)
{
	p->format = "model-explorer";
	if (json_object_get(root, "results") != NULL)
		return parse_me_graph(p, "$", root);
	const char *key;
	const json_t *g;
	json_object_foreach((json_t *)root, key, g) {
		char path[100];
		snprintf(path, sizeof(path), "$[\"%.60s\"]", key);
		oxr_code rc = parse_me_graph(p, path, g);
		if (rc != OXR_OK)
			return rc;
	}
	return OXR_OK;
}

/* ---------------------------------------------------------------------------------------
 * Netron attachments: {"signature": "netron:attachment", "metrics": [{"kind": "node",
 * "target": NAME, "name": METRIC, "value": N}, ...]}
 */
static oxr_code parse_netron(parse *p, const json_t *root)
{
	p->format = "netron";
	const json_t *list = json_object_get(root, "metrics");
	if (list == NULL)
		return OXR_OK;
	if (!json_is_array(list))
		return bad(p, "$.metrics: an array");
	for (size_t i = 0; i < json_array_size(list); i++) {
		const json_t *it = json_array_get(list, i);
		if (!json_is_object(it))
			return bad(p, "$.metrics[%zu]: an object", i);
		const json_t *kind = json_object_get(it, "kind"), *target = json_object_get(it, "target");
		const json_t *name = json_object_get(it, "name"), *val = json_object_get(it, "value");
		if (!json_is_string(kind) || !json_is_string(target) || !json_is_string(name))
			return bad(p, "$.metrics[%zu]: kind, target and name are strings", i);
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
			return bad(p, "$.metrics[%zu].value: a number", i);
		}
		if (!number_ok(d))
			return bad(p, "$.metrics[%zu].value: not a finite number up to 1e300", i);
		int k = metric_of(p, json_string_value(name), json_string_length(name));
		if (k < 0)
			return p->err->code;
		uint32_t ei = entry_of(p, json_string_value(target), json_string_length(target), kk, NULL);
		if (ei == OXP_NONE || !entry_set(p, ei, k, d))
			return p->err->code;
	}
	return OXR_OK;
}

/* ---------------------------------------------------------------------------------------
 * CSV: a header `node,metric[,metric...]`, then one line per node; fields may be quoted
 * ("a,b" and "" for a quote); an empty field is no value.
 */
typedef struct field {
	char *p;
	size_t len;
} field;

/* Splits line [s, e) into fields (quotes undone in place).  Returns the count, or -1 for
 * an unterminated quote, -2 for more than max fields. */
static int csv_fields(char *s, char *e, field *f, int max)
{
	int n = 0;
	while (true) {
		if (n == max)
			return -2;
		char *out = s, *start = s;
		if (s < e && *s == '"') {
			s++;
			while (true) {
				if (s >= e)
					return -1;
				if (*s == '"') {
					if (s + 1 < e && s[1] == '"') {
						*out++ = '"';
						s += 2;
						continue;
					}
					s++;
					break;
				}
				*out++ = *s++;
			}
			f[n].p = start;
			f[n].len = (size_t)(out - start);
		} else {
			while (s < e && *s != ',')
				s++;
			f[n].p = start;
			f[n].len = (size_t)(s - start);
		}
		n++;
		if (s >= e)
			return n;
		if (*s != ',')
			return -1;
		s++;
	}
}

static void trim(field *f)
{
	while (f->len > 0 && (f->p[0] == ' ' || f->p[0] == '\t')) {
		f->p++;
		f->len--;
	}
	while (f->len > 0 && (f->p[f->len - 1] == ' ' || f->p[f->len - 1] == '\t'))
		f->len--;
}

static oxr_code parse_csv(parse *p, const char *data, size_t len)
{
	p->format = "csv";
	char *buf = malloc(len + 1);
	if (buf == NULL)
		return nomem(p);
	memcpy(buf, data, len);
	buf[len] = '\0';
	oxr_code rc = OXR_OK;
	field f[OXR_HEAT_MAX_METRICS + 1];
	int cols = 0, midx[OXR_HEAT_MAX_METRICS];
	size_t line = 0;
	char *s = buf, *end = buf + len;
	if (len >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
		s += 3;
	while (s < end) {
		line++;
		char *e = memchr(s, '\n', (size_t)(end - s));
		if (e == NULL)
			e = end;
		char *next = e < end ? e + 1 : end;
		if (e > s && e[-1] == '\r')
			e--;
		if ((size_t)(e - s) > 65536) {
			rc = bad(p, "line %zu: longer than 65536 bytes", line);
			break;
		}
		if (e == s) { /* blank line */
			s = next;
			continue;
		}
		if (memchr(s, '\0', (size_t)(e - s)) != NULL) {
			rc = bad(p, "line %zu: a NUL byte", line);
			break;
		}
		int n = csv_fields(s, e, f, OXR_HEAT_MAX_METRICS + 1);
		if (n == -1) {
			rc = bad(p, "line %zu: an unterminated quote or text after a quoted field", line);
			break;
		}
		if (n == -2) {
			rc = bad(p, "line %zu: more than %d metrics", line, OXR_HEAT_MAX_METRICS);
			break;
		}
		if (cols == 0) { /* the header */
			if (n < 2) {
				rc = bad(p, "line %zu: the header is node,metric[,metric...]", line);
				break;
			}
			cols = n;
			for (int c = 1; c < n && rc == OXR_OK; c++) {
				trim(&f[c]);
				for (int c2 = 1; c2 < c; c2++)
					if (f[c2].len == f[c].len && memcmp(f[c2].p, f[c].p, f[c].len) == 0)
						rc = bad(p, "line %zu: metric \"%.*s\" twice in the header", line,
						         (int)(f[c].len > 60 ? 60 : f[c].len), f[c].p);
				if (rc == OXR_OK && (midx[c - 1] = metric_of(p, f[c].p, f[c].len)) < 0)
					rc = p->err->code;
			}
		} else {
			if (n != cols) {
				rc = bad(p, "line %zu: %d fields, the header has %d", line, n, cols);
				break;
			}
			trim(&f[0]);
			bool fresh;
			uint32_t ei = entry_of(p, f[0].p, f[0].len, KEY_ANY, &fresh);
			if (ei == OXP_NONE) {
				char msg[sizeof(p->err->message)];
				snprintf(msg, sizeof(msg), "%s", p->err->message);
				rc = oxr__fail(p->err, p->err->code, "line %zu: %s", line, msg);
				break;
			}
			if (!fresh) {
				rc = bad(p, "line %zu: node \"%.60s\" given twice", line, p->e[ei].name);
				break;
			}
			for (int c = 1; c < n && rc == OXR_OK; c++) {
				trim(&f[c]);
				if (f[c].len == 0)
					continue;
				char num[64];
				if (f[c].len >= sizeof(num)) {
					rc = bad(p, "line %zu, column %d: not a number", line, c + 1);
					break;
				}
				memcpy(num, f[c].p, f[c].len);
				num[f[c].len] = '\0';
				char *ne;
				double d = strtod(num, &ne);
				if (ne == num || *ne != '\0')
					rc = bad(p, "line %zu, column %d: \"%s\" is not a number", line, c + 1, num);
				else if (!number_ok(d))
					rc = bad(p, "line %zu, column %d: %s is not a finite number up to 1e300",
					         line, c + 1, num);
				else if (!entry_set(p, ei, midx[c - 1], d))
					rc = p->err->code;
			}
		}
		s = next;
	}
	if (rc == OXR_OK && cols == 0)
		rc = bad(p, "no header line (node,metric[,metric...])");
	free(buf);
	return rc;
}

/* ---------------------------------------------------------------------------------------
 * One input: what it is, then its parser
 */
static oxr_code parse_one(parse *p, const oxr_heat_input *in)
{
	size_t i = 0;
	const char *d = in->data;
	if (in->len > OXR_HEAT_MAX_BYTES)
		return bad(p, "%zu bytes, more than the %zu an overlay may have", in->len,
		           OXR_HEAT_MAX_BYTES);
	if (in->len >= 3 && memcmp(d, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	while (i < in->len && (d[i] == ' ' || d[i] == '\t' || d[i] == '\r' || d[i] == '\n'))
		i++;
	if (i == in->len)
		return bad(p, "empty");
	const char *fmt;
	if (d[i] != '[' && d[i] != '{') {
		fmt = "csv";
		if (p->format != NULL && strcmp(p->format, fmt) != 0)
			return bad(p, "a CSV file among %s inputs: one format at a time", p->format);
		return parse_csv(p, d, in->len);
	}
	if (d[i] == '[') { /* an array: a profile's events */
		if (p->format != NULL && strcmp(p->format, "ort-profile") != 0)
			return bad(p, "an ort-profile input among %s inputs: one format at a time", p->format);
		p->format = "ort-profile";
		p->profile = true;
		return parse_profile(p, d, in->len, i);
	}
	json_error_t je;
	/* jansson's depth limit (2048) bounds the nesting; numbers beyond a double fail.  The
	 * tree comes from a scratch arena (jsonx.c): what is kept is copied out */
	jx_scratch_begin();
	json_t *root = json_loadb(d, in->len, JSON_REJECT_DUPLICATES, &je);
	if (root == NULL) {
		json_decref(root);
		jx_scratch_end();
		return bad(p, "line %d, column %d: %s", je.line, je.column, je.text);
	}
	oxr_code rc = OXR_OK;
	const json_t *events = json_object_get(root, "traceEvents");
	const json_t *sig = json_object_get(root, "signature");
	if (json_is_array(events)) {
		fmt = "ort-profile";
	} else if (json_is_string(sig) && strcmp(json_string_value(sig), "netron:attachment") == 0) {
		fmt = "netron";
	} else if (json_is_object(root)) {
		fmt = "model-explorer";
	} else {
		json_decref(root);
		jx_scratch_end();
		return bad(p, "neither an ONNX Runtime profile, Model Explorer node data, a Netron "
		              "attachment nor CSV");
	}
	if (p->format != NULL && strcmp(p->format, fmt) != 0) {
		rc = bad(p, "a %s input among %s inputs: one format at a time", fmt, p->format);
	} else if (!strcmp(fmt, "ort-profile")) {
		p->format = fmt;
		p->profile = true;
		rc = parse_trace_object(p, d, in->len, i);
	} else if (!strcmp(fmt, "netron")) {
		rc = parse_netron(p, root);
	} else {
		const char *key;
		const json_t *g;
		bool ok = json_object_get(root, "results") != NULL;
		json_object_foreach((json_t *)root, key, g) if (json_is_object(g) &&
		                                                 json_object_get(g, "results"))
			ok = true;
		rc = ok ? parse_model_explorer(p, root)
		        : bad(p, "a JSON object that is neither Model Explorer node data "
		                 "(\"results\") nor a Netron attachment (\"signature\")");
	}
	json_decref(root);
	jx_scratch_end();
	return rc;
}

/* ---------------------------------------------------------------------------------------
 * Attribution
 */
typedef struct attr_ctx {
	const oxp_dag_view *dv;
	oxp_smap nodes, values;        /* names in the model: node / value -> index */
	const oxp_dag_view *ov;    /* the optimized model, or NULL */
	oxp_smap onodes, ovalues;
	const oxp_dag *d;
	const oxp_cost *cost;      /* for the spreading weights (computed when first needed), */
	oxp_arena *cost_arena;     /* or NULL */
	bool cost_tried;
	uint32_t *mark;            /* per node: generation last put in a group */
	uint32_t gen;
	bool *owned;               /* per node: an output of it is an output of an optimized
	                              node (by name, or with "_nchwc"); NULL without one */
} attr_ctx;

/* Node and value names -> indices.  ONNX Runtime names an unnamed node of the main graph
 * "<op type>_<k>", k counting the unnamed nodes in order: those names are known too
 * (names the model has win). */
static bool index_dag(const oxp_dag_view *dv, oxp_arena *a, oxp_smap *nodes, oxp_smap *values)
{
	if (!oxp_smap_init(nodes, dv->nnodes + 1) || !oxp_smap_init(values, dv->nvalues + 1))
		return false;
	for (uint32_t i = 0; i < dv->nnodes; i++) {
		oxp_str s = dv->nodes[i].proto->name;
		if (s.len > 0 && !oxp_smap_put(nodes, s.p, s.len, i))
			return false;
	}
	uint32_t unnamed = 0;
	for (uint32_t i = 0; a != NULL && i < dv->nnodes; i++) {
		const oxp_node *n = dv->nodes[i].proto;
		if (dv->nodes[i].scope != 0 || n->name.len > 0)
			continue;
		char *g = oxp_arena_printf(a, "%.*s_%u", (int)(n->op_type.len > 256 ? 256 : n->op_type.len),
		                           n->op_type.p, unnamed++);
		if (g == NULL || !oxp_smap_put(nodes, g, strlen(g), i))
			return false;
	}
	for (uint32_t i = 0; i < dv->nvalues; i++) {
		oxp_str s = dv->values[i].name;
		if (s.len > 0 && !oxp_smap_put(values, s.p, s.len, i))
			return false;
	}
	return true;
}

/* The node the first output consumed feeds (a dag's first edge of it), else OXP_NONE */
static uint32_t first_consumer(const oxp_dag_view *dv, uint32_t n)
{
	const oxp_dnode *dn = &dv->nodes[n];
	for (size_t k = 0; k < dn->proto->noutputs; k++) {
		uint32_t vi = dn->outputs[k];
		if (vi != OXP_NONE && dv->values[vi].nconsumers > 0)
			return dv->edges[dv->values[vi].consumers[0]].dst;
	}
	return OXP_NONE;
}

static bool op_is(const oxp_dag_view *dv, uint32_t n, const char *op)
{
	oxp_str t = dv->nodes[n].proto->op_type;
	return op != NULL && strlen(op) == t.len && memcmp(op, t.p, t.len) == 0;
}

/* The name without ORT's fusion segments: "/x/MatMul/MatmulTransposeFusion//Mul...Fusion/"
 * -> "/x/MatMul", "/x/Slice_3/GatherSliceToSplitFusion" -> "/x/Slice_3".  Returns the new
 * length. */
static size_t strip_fusion(const char *s, size_t len)
{
	while (len > 0) {
		size_t end = s[len - 1] == '/' ? len - 1 : len, k = end;
		while (k > 0 && s[k - 1] != '/')
			k--;
		if (k == 0)
			break;
		static const char fu[] = "Fusion";
		size_t seg = end - k;
		/* "XFusion" or "XFusion_3" */
		const char *f = NULL;
		for (size_t j = k; j + 6 <= end; j++)
			if (memcmp(s + j, fu, 6) == 0)
				f = s + j;
		if (f == NULL || seg < 6)
			break;
		len = k - 1; /* drop "/Seg/" or "/Seg" */
	}
	return len;
}

/* A value of the original graph by name, also without an "_nchwc" suffix. */
static uint32_t value_named(const attr_ctx *c, const char *s, size_t len)
{
	uint32_t v = oxp_smap_get(&c->values, s, len);
	if (v == OXP_NONE && len > 6 && memcmp(s + len - 6, "_nchwc", 6) == 0)
		v = oxp_smap_get(&c->values, s, len - 6);
	return v;
}

/* Whether the optimized graph still has a value of this name (or its _nchwc twin). */
static bool visible(const attr_ctx *c, oxp_str name)
{
	if (oxp_smap_get(&c->ovalues, name.p, name.len) != OXP_NONE)
		return true;
	char buf[MAX_NAME + 8];
	if (name.len > MAX_NAME)
		return false;
	memcpy(buf, name.p, name.len);
	memcpy(buf + name.len, "_nchwc", 6);
	return oxp_smap_get(&c->ovalues, buf, name.len + 6) != OXP_NONE;
}

/* The nodes of the original graph optimized node on stands for: the node of its name, the
 * producer of the value its name is made from (an NCHWc node is named after the output it
 * replaces: "<value>_nchwc"), the producers of its outputs (by name, or without "_nchwc").
 * Calls fn(c, node, ctx) for each. */
static void stands_for(attr_ctx *c, uint32_t on, void (*fn)(attr_ctx *, uint32_t, void *),
                       void *ctx)
{
	const oxp_dnode *o = &c->ov->nodes[on];
	oxp_str name = o->proto->name;
	uint32_t x = oxp_smap_get(&c->nodes, name.p, name.len);
	if (x != OXP_NONE)
		fn(c, x, ctx);
	uint32_t v = name.len > 0 ? value_named(c, name.p, name.len) : OXP_NONE;
	if (v != OXP_NONE && c->dv->values[v].producer != OXP_NONE)
		fn(c, c->dv->values[v].producer, ctx);
	for (size_t k = 0; k < o->proto->noutputs; k++) {
		uint32_t ovi = o->outputs[k];
		if (ovi == OXP_NONE)
			continue;
		oxp_str nm = c->ov->values[ovi].name;
		v = value_named(c, nm.p, nm.len);
		if (v != OXP_NONE && c->dv->values[v].producer != OXP_NONE)
			fn(c, c->dv->values[v].producer, ctx);
	}
}

static void own(attr_ctx *c, uint32_t node, void *ctx)
{
	(void)ctx;
	c->owned[node] = true;
}

/* Which nodes of the original graph some optimized node stands for. */
static bool mark_owned(attr_ctx *c)
{
	c->owned = calloc(c->dv->nnodes ? c->dv->nnodes : 1, sizeof(bool));
	if (c->owned == NULL)
		return false;
	for (uint32_t i = 0; i < c->ov->nnodes; i++)
		stands_for(c, i, own, NULL);
	return true;
}

typedef struct group_acc {
	uint32_t *g, n;
} group_acc;

static bool add_node(attr_ctx *c, uint32_t *g, uint32_t *n, uint32_t node)
{
	if (c->mark[node] == c->gen || *n >= MAX_GROUP)
		return false;
	c->mark[node] = c->gen;
	g[(*n)++] = node;
	return true;
}

static void seed(attr_ctx *c, uint32_t node, void *ctx)
{
	group_acc *ga = ctx;
	add_node(c, ga->g, &ga->n, node);
}

/* The nodes an optimized node covers: those it stands for and what fed them through
 * values the optimized graph no longer has, from nodes no optimized node stands for. */
static uint32_t cover_optimized(attr_ctx *c, uint32_t on, uint32_t *g)
{
	group_acc ga = {g, 0};
	/* a node that stands for nothing (ReorderInput: its output is new): the first node
	 * downstream that does, a few hops at most */
	for (int hop = 0; hop < 8 && ga.n == 0 && on != OXP_NONE; hop++) {
		stands_for(c, on, seed, &ga);
		on = first_consumer(c->ov, on);
	}
	uint32_t n = ga.n;
	/* upwards through values that disappeared */
	for (uint32_t i = 0; i < n; i++) {
		const oxp_dnode *dn = &c->dv->nodes[g[i]];
		for (size_t k = 0; k < dn->proto->ninputs; k++) {
			uint32_t vi = dn->inputs[k];
			if (vi == OXP_NONE)
				continue;
			const oxp_value *val = &c->dv->values[vi];
			uint32_t p = val->producer;
			if (p == OXP_NONE || c->dv->nodes[p].bookkeeping || c->owned[p] ||
			    visible(c, val->name))
				continue;
			add_node(c, g, &n, p);
		}
	}
	return n;
}

/* The nodes entry e covers, the anchor first; 0 when none. */
static uint32_t map_entry(attr_ctx *c, const entry *e, uint32_t *g)
{
	uint32_t n = 0, node;
	c->gen++;
	if (e->kind == KEY_ANY && c->ov != NULL) {
		uint32_t on = oxp_smap_get(&c->onodes, e->name, e->len);
		if (on != OXP_NONE && (n = cover_optimized(c, on, g)) > 0)
			goto anchor;
	}
	if (e->kind != KEY_VALUE) {
		if ((node = oxp_smap_get(&c->nodes, e->name, e->len)) != OXP_NONE) {
			g[0] = node;
			return 1;
		}
	}
	size_t sl = strip_fusion(e->name, e->len);
	if (e->kind != KEY_VALUE && sl < e->len &&
	    (node = oxp_smap_get(&c->nodes, e->name, sl)) != OXP_NONE) {
		g[0] = node;
		return 1;
	}
	if (e->kind == KEY_NODE)
		return 0;
	uint32_t v = value_named(c, e->name, sl);
	if (v == OXP_NONE || (node = c->dv->values[v].producer) == OXP_NONE)
		return 0;
	add_node(c, g, &n, node);
	if (e->op != NULL && !op_is(c->dv, node, e->op)) {
		/* a fused kernel named after its last output: up the single-consumer chain */
		uint32_t path[8], np = 0, x = node;
		path[np++] = x;
		while (np < 7) {
			const oxp_dnode *dn = &c->dv->nodes[x];
			uint32_t vi = dn->proto->ninputs > 0 ? dn->inputs[0] : OXP_NONE;
			if (vi == OXP_NONE || c->dv->values[vi].nconsumers != 1 ||
			    c->dv->values[vi].producer == OXP_NONE)
				break;
			x = c->dv->values[vi].producer;
			path[np++] = x;
			if (op_is(c->dv, x, e->op)) {
				for (uint32_t i = 1; i < np; i++)
					add_node(c, g, &n, path[i]);
				break;
			}
		}
	}
anchor:
	for (uint32_t i = 0; i < n && e->op != NULL; i++)
		if (op_is(c->dv, g[i], e->op)) {
			uint32_t t = g[0];
			g[0] = g[i];
			g[i] = t;
			break;
		}
	return n;
}

static double node_weight(attr_ctx *c, uint32_t node)
{
	if (!c->cost_tried) {
		c->cost_tried = true;
		c->cost_arena = oxp_arena_new((size_t)512 << 20);
		if (c->cost_arena == NULL ||
		    oxp_cost_compute(c->d, c->cost_arena, NULL, &c->cost, NULL) != OXP_OK)
			c->cost = NULL;
	}
	if (c->cost == NULL)
		return 0;
	double w = oxp_cost_poly_eval(&c->cost->nodes[node].macs, 1) +
	           oxp_cost_poly_eval(&c->cost->nodes[node].ops, 1);
	return isfinite(w) && w > 0 ? w : 0;
}

/* dur spread over the group: out[i] for g[i], whole microseconds summing to dur exactly */
static void spread(attr_ctx *c, const uint32_t *g, uint32_t n, int64_t dur, int64_t *out)
{
	double w[MAX_GROUP], W = 0;
	if (n == 1) {
		out[0] = dur;
		return;
	}
	for (uint32_t i = 0; i < n; i++)
		W += (w[i] = node_weight(c, g[i]));
	int64_t given = 0;
	for (uint32_t i = 1; i < n; i++) {
		double share = W > 0 ? (double)dur * (w[i] / W) : 0;
		int64_t s = (int64_t)floor(share);
		if (s < 0)
			s = 0;
		if (s > dur - given)
			s = dur - given;
		out[i] = s;
		given += s;
	}
	out[0] = dur - given;
}

/* ---------------------------------------------------------------------------------------
 * Building the table
 */
static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static int cmp_unmatched(const void *a, const void *b)
{
	const oxr_heat_unmatched *x = a, *y = b;
	return x->value > y->value ? -1 : x->value < y->value ? 1 : strcmp(x->name, y->name);
}

/* Sum or max for a metric named so (docs/overlays.md): time, counts and sizes add up. */
static bool summable(const char *m)
{
	static const char *const words[] = {"dur", "time", "latency", "mac", "flop", "byte",
	                                    "param", "count", "cycles", "energy", "mem", "ms",
	                                    "us", "size"};
	char low[72];
	size_t i = 0;
	for (; m[i] && i + 1 < sizeof(low); i++)
		low[i] = (char)(m[i] >= 'A' && m[i] <= 'Z' ? m[i] + 32 : m[i]);
	low[i] = '\0';
	for (size_t k = 0; k < sizeof(words) / sizeof(words[0]); k++)
		if (strstr(low, words[k]) != NULL)
			return true;
	return false;
}

static oxr_heat *heat_new(oxp_arena *a, uint32_t nnodes, uint32_t nmetrics)
{
	oxr_heat *h = oxp_arena_alloc(a, sizeof(oxr_heat));
	if (h == NULL)
		return NULL;
	memset(h, 0, sizeof(*h));
	h->arena = a;
	h->nnodes = nnodes;
	h->nmetrics = nmetrics;
	h->runs = 1;
	double *vals = oxp_arena_array(a, (size_t)(nnodes ? nnodes : 1) * nmetrics, sizeof(double));
	uint32_t *fused = oxp_arena_array(a, nnodes ? nnodes : 1, sizeof(uint32_t));
	uint32_t *fsize = oxp_arena_array(a, nnodes ? nnodes : 1, sizeof(uint32_t));
	h->metrics = oxp_arena_array(a, nmetrics, sizeof(char *));
	h->units = oxp_arena_array(a, nmetrics, sizeof(char *));
	h->sums = oxp_arena_array(a, nmetrics, sizeof(bool));
	if (!vals || !fused || !fsize || !h->metrics || !h->units || !h->sums)
		return NULL;
	for (size_t i = 0; i < (size_t)nnodes * nmetrics; i++)
		vals[i] = NAN;
	for (uint32_t i = 0; i < nnodes; i++) {
		fused[i] = OXP_NONE;
		fsize[i] = 0;
	}
	h->values = vals;
	h->fused = fused;
	h->fused_size = fsize;
	return h;
}

/* An unmatched entry's value: a profile's time, else its first metric (0 when none). */
static double unmatched_value(const parse *p, uint32_t i, bool profile)
{
	if (profile)
		return (double)p->e[i].total;
	double v = p->e[i].nv > 0 ? p->e[i].v[0] : NAN;
	return isfinite(v) ? v : 0;
}

/* True when entry i goes after entry j in the list: smaller, or as large and named
 * after it (cmp_unmatched's order). */
static bool unmatched_after(const parse *p, uint32_t i, uint32_t j, bool profile)
{
	double x = unmatched_value(p, i, profile), y = unmatched_value(p, j, profile);
	return x < y || (x == y && strcmp(p->e[i].name, p->e[j].name) > 0);
}

/* Restore the heap below slot k (the entry that goes last at the root). */
static void heap_down(const parse *p, uint32_t *heap, uint32_t n, uint32_t k, bool profile)
{
	for (;;) {
		uint32_t l = 2 * k + 1, r = l + 1, m = k;
		if (l < n && unmatched_after(p, heap[l], heap[m], profile))
			m = l;
		if (r < n && unmatched_after(p, heap[r], heap[m], profile))
			m = r;
		if (m == k)
			return;
		uint32_t t = heap[k];
		heap[k] = heap[m];
		heap[m] = t;
		k = m;
	}
}

/* The unmatched entries (those with flag[i] == mark): h->nunmatched counts them all,
 * h->unmatched lists the OXR_HEAT_UNMATCHED_LISTED largest, largest first.  A hostile
 * input of 1.4M names nothing matches keeps a few hundred KB here, not a copy of every
 * name: the selection is a heap of the listed ones (their names copied at the end). */
static oxr_code list_unmatched(parse *p, oxr_heat *h, const uint32_t *flag, uint32_t mark,
                               bool profile, double total)
{
	uint32_t heap[OXR_HEAT_UNMATCHED_LISTED], nh = 0, nun = 0;
	for (uint32_t i = 0; i < p->n; i++) {
		if (flag[i] != mark)
			continue;
		nun++;
		if (nh < OXR_HEAT_UNMATCHED_LISTED) {
			/* sift up: the root is the entry that goes last */
			uint32_t k = nh++;
			heap[k] = i;
			while (k > 0 && unmatched_after(p, heap[k], heap[(k - 1) / 2], profile)) {
				uint32_t t = heap[k];
				heap[k] = heap[(k - 1) / 2];
				heap[(k - 1) / 2] = t;
				k = (k - 1) / 2;
			}
		} else if (unmatched_after(p, heap[0], i, profile)) {
			heap[0] = i;
			heap_down(p, heap, nh, 0, profile);
		}
	}
	oxr_heat_unmatched *un = oxp_arena_array(h->arena, nh ? nh : 1, sizeof(*un));
	if (un == NULL)
		return nomem(p);
	for (uint32_t u = 0; u < nh; u++) {
		const entry *e = &p->e[heap[u]];
		double v = unmatched_value(p, heap[u], profile);
		un[u].name = oxr__text(h->arena, (oxp_str){e->name, e->len}, 200);
		un[u].op = profile ? e->op : NULL;
		un[u].value = v;
		un[u].share = total != 0 ? v / total : 0;
		if (un[u].name == NULL)
			return nomem(p);
	}
	if (nh > 1)
		qsort(un, nh, sizeof(*un), cmp_unmatched);
	h->unmatched = un;
	h->nunmatched = nun;
	h->nunmatched_listed = nh;
	return OXR_OK;
}

/* The nodes each entry covers, all entries' in one array: entry i's are
 * nodes[off[i] .. off[i + 1]).  Most names cover one node or none, so this is about
 * 8 bytes per entry (a fixed MAX_GROUP slots per entry was 256). */
typedef struct groups {
	uint32_t *off;   /* n + 1 */
	uint32_t *nodes;
	size_t len, cap;
} groups;

static void groups_free(groups *gs)
{
	free(gs->off);
	free(gs->nodes);
}

static bool groups_build(groups *gs, parse *p, attr_ctx *c)
{
	memset(gs, 0, sizeof(*gs));
	gs->off = malloc(((size_t)p->n + 1) * sizeof(uint32_t));
	gs->nodes = malloc(1024 * sizeof(uint32_t));
	if (gs->off == NULL || gs->nodes == NULL)
		return false;
	gs->cap = 1024;
	uint32_t g[MAX_GROUP];
	for (uint32_t i = 0; i < p->n; i++) {
		gs->off[i] = (uint32_t)gs->len; /* at most 2,000,000 x 64 */
		uint32_t n = map_entry(c, &p->e[i], g);
		if (gs->len + n > gs->cap) {
			size_t cap = gs->cap * 2;
			while (cap < gs->len + n)
				cap *= 2;
			uint32_t *nn = realloc(gs->nodes, cap * sizeof(uint32_t));
			if (nn == NULL)
				return false;
			gs->nodes = nn;
			gs->cap = cap;
		}
		memcpy(gs->nodes + gs->len, g, n * sizeof(uint32_t));
		gs->len += n;
	}
	gs->off[p->n] = (uint32_t)gs->len;
	return true;
}

static oxr_code build_profile(parse *p, attr_ctx *c, oxr_heat *h, int64_t *node_total)
{
	/* per node per run: cells for the nodes that get time (slot per node) */
	uint32_t nn = c->dv->nnodes, runs = p->runs ? p->runs : 1;
	uint32_t *slot = malloc((size_t)(nn ? nn : 1) * sizeof(uint32_t));
	uint32_t *gn = calloc(p->n ? p->n : 1, sizeof(uint32_t));
	groups gs;
	bool mapped = groups_build(&gs, p, c);
	int64_t *cells = NULL, *tmp = NULL, *ptot = NULL;
	oxr_code rc = OXR_OK;
	if (!slot || !gn || !mapped) {
		rc = nomem(p);
		goto out;
	}
	memset(slot, 0xff, (size_t)(nn ? nn : 1) * sizeof(uint32_t));
	uint32_t nslots = 0;
	for (uint32_t i = 0; i < p->n; i++) {
		gn[i] = gs.off[i + 1] - gs.off[i];
		for (uint32_t k = 0; k < gn[i]; k++) {
			uint32_t node = gs.nodes[gs.off[i] + k];
			if (slot[node] == OXP_NONE)
				slot[node] = nslots++;
		}
	}
	if ((size_t)nslots * runs > MAX_CELLS) {
		rc = bad(p, "%u runs of %u nodes: more than %zu figures", runs, nslots, MAX_CELLS);
		goto out;
	}
	cells = calloc((size_t)(nslots ? nslots : 1) * runs, sizeof(int64_t));
	tmp = malloc((size_t)runs * sizeof(int64_t));
	if (!cells || !tmp) {
		rc = nomem(p);
		goto out;
	}
	/* per node and provider with metrics: the time over all runs, -1 when none ran there */
	uint32_t npm = p->npm;
	ptot = malloc((size_t)(nslots ? nslots : 1) * (npm ? npm : 1) * sizeof(int64_t));
	if (ptot == NULL) {
		rc = nomem(p);
		goto out;
	}
	for (size_t i = 0; i < (size_t)nslots * npm; i++)
		ptot[i] = -1;
	int64_t share[MAX_GROUP];
	for (size_t k = 0; k < p->nk; k++) {
		uint32_t ei = p->k[k].entry, n = gn[ei];
		if (n == 0)
			continue;
		const uint32_t *g = gs.nodes + gs.off[ei];
		spread(c, g, n, p->k[k].dur, share);
		uint32_t pi = 0;
		while (pi < npm && (p->e[ei].provider == NULL || strcmp(p->pm[pi], p->e[ei].provider)))
			pi++;
		for (uint32_t i = 0; i < n; i++) {
			cells[(size_t)slot[g[i]] * runs + p->k[k].run] += share[i];
			if (pi < npm) {
				int64_t *t = &ptot[(size_t)slot[g[i]] * npm + pi];
				*t = (*t < 0 ? 0 : *t) + share[i];
			}
		}
	}
	/* fused groups and the table */
	int64_t total = 0, attributed = 0;
	for (uint32_t i = 0; i < p->n; i++) {
		total += p->e[i].total;
		if (gn[i] > 0) {
			attributed += p->e[i].total;
			h->nmatched++;
		}
		const uint32_t *g = gs.nodes + gs.off[i];
		if (gn[i] > 1)
			for (uint32_t k = 0; k < gn[i]; k++) {
				((uint32_t *)h->fused)[g[k]] = g[0];
				((uint32_t *)h->fused_size)[g[k]] = gn[i];
			}
	}
	double *vals = (double *)h->values;
	for (uint32_t node = 0; node < nn; node++) {
		if (slot[node] == OXP_NONE)
			continue;
		const int64_t *row = cells + (size_t)slot[node] * runs;
		int64_t sum = 0;
		for (uint32_t r = 0; r < runs; r++)
			sum += (tmp[r] = row[r]);
		qsort(tmp, runs, sizeof(int64_t), cmp_i64);
		/* nearest rank: the smallest value with at least q of the runs at or below it */
		uint32_t r50 = (uint32_t)ceil(0.5 * runs), r90 = (uint32_t)ceil(0.9 * runs);
		double *v = vals + (size_t)node * h->nmetrics;
		v[0] = (double)sum / runs;
		v[1] = (double)tmp[r50 ? r50 - 1 : 0];
		v[2] = (double)tmp[r90 ? r90 - 1 : 0];
		v[3] = (double)sum;
		for (uint32_t pi = 0; pi < npm; pi++) { /* NaN (no data) where none ran there */
			int64_t t = ptot[(size_t)slot[node] * npm + pi];
			v[4 + 2 * pi] = t < 0 ? NAN : (double)t / runs;
			v[5 + 2 * pi] = t < 0 ? NAN : (double)t;
		}
		node_total[node] = sum;
	}
	h->total = (double)total;
	h->attributed = (double)attributed;
	h->runs = runs;
	rc = list_unmatched(p, h, gn, 0, true, (double)total);
	if (rc != OXR_OK)
		goto out;
	/* providers */
	oxr_heat_provider *pv = oxp_arena_array(h->arena, 16, sizeof(*pv));
	if (pv == NULL) {
		rc = nomem(p);
		goto out;
	}
	uint32_t npv = 0;
	for (uint32_t i = 0; i < p->n; i++) {
		const char *name = p->e[i].provider ? p->e[i].provider : "(none)";
		uint32_t k = 0;
		while (k < npv && strcmp(pv[k].name, name) != 0)
			k++;
		if (k == npv) {
			if (npv == 16)
				continue;
			pv[npv].name = name;
			pv[npv].total = 0;
			npv++;
		}
		pv[k].total += (double)p->e[i].total;
	}
	h->providers = pv;
	h->nproviders = npv;
out:
	free(slot);
	groups_free(&gs);
	free(gn);
	free(cells);
	free(tmp);
	free(ptot);
	return rc;
}

/* The providers of a profile's kernels that get metrics of their own, in the order they
 * first appear: named [A-Za-z0-9._-] (they become metric names), the first few. */
static void profile_providers(parse *p)
{
	p->npm = 0;
	for (uint32_t i = 0; i < p->n && p->npm < HEAT_PROVIDER_METRICS; i++) {
		const char *pv = p->e[i].provider;
		if (pv == NULL || pv[0] == '\0' ||
		    strspn(pv, OXR_HEAT_NAME_CHARS) != strlen(pv))
			continue;
		uint32_t k = 0;
		while (k < p->npm && strcmp(p->pm[k], pv) != 0)
			k++;
		if (k == p->npm)
			p->pm[p->npm++] = pv;
	}
}

static oxr_code build_generic(parse *p, attr_ctx *c, oxr_heat *h)
{
	uint32_t g[MAX_GROUP];
	double total = 0, attributed = 0;
	double *vals = (double *)h->values;
	uint32_t *hit = calloc(p->n ? p->n : 1, sizeof(uint32_t));
	if (hit == NULL)
		return nomem(p);
	for (uint32_t i = 0; i < p->n; i++) {
		const entry *e = &p->e[i];
		uint32_t n = map_entry(c, e, g);
		double pv = e->nv > 0 ? e->v[0] : NAN;
		if (isfinite(pv))
			total += pv;
		if (n == 0) {
			hit[i] = OXP_NONE;
			continue;
		}
		hit[i] = g[0];
		h->nmatched++;
		if (isfinite(pv))
			attributed += pv;
		for (uint32_t k = 0; k < p->nmetrics && k < e->nv; k++) {
			double x = e->v[k];
			if (!isfinite(x))
				continue;
			double *cell = vals + (size_t)g[0] * p->nmetrics + k;
			/* two names for one node (a node and its output): added, or the larger */
			*cell = isnan(*cell) ? x : h->sums[k] ? *cell + x : fmax(*cell, x);
		}
	}
	oxr_code rc = list_unmatched(p, h, hit, OXP_NONE, false, total);
	if (rc != OXR_OK) {
		free(hit);
		return rc;
	}
	h->total = total;
	h->attributed = attributed;
	free(hit);
	return OXR_OK;
}

oxr_code oxr_heat_build(const oxr_heat_input *in, uint32_t nin, const oxp_dag *d,
                        const oxp_dag *optimized, oxr_heat **out, oxr_error *err)
{
	*out = NULL;
	if (nin == 0 || nin > OXR_HEAT_MAX_INPUTS)
		return oxr__fail(err, OXR_E_OVERLAY, "%u inputs (1 to %d)", nin, OXR_HEAT_MAX_INPUTS);
	parse p;
	memset(&p, 0, sizeof(p));
	attr_ctx c;
	memset(&c, 0, sizeof(c));
	int64_t *node_total = NULL;
	p.err = err;
	p.a = oxp_arena_new((size_t)1 << 30);
	oxr_code rc = OXR_OK;
	if (p.a == NULL || !oxp_smap_init(&p.by_name, 1024)) {
		rc = oxr__fail(err, OXR_E_NOMEM, "out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < nin && rc == OXR_OK; i++) {
		p.input = in[i].name ? in[i].name : "overlay";
		rc = parse_one(&p, &in[i]);
	}
	if (rc != OXR_OK)
		goto out;
	if (p.n == 0) {
		rc = bad(&p, "no figures in it (%s)", p.format ? p.format : "?");
		goto out;
	}
	c.dv = oxp_dag_get(d);
	c.mark = calloc(c.dv->nnodes ? c.dv->nnodes : 1, sizeof(uint32_t));
	if (c.mark == NULL || !index_dag(c.dv, p.a, &c.nodes, &c.values) ||
	    (optimized != NULL && !index_dag(oxp_dag_get(optimized), NULL, &c.onodes, &c.ovalues))) {
		rc = oxr__fail(err, OXR_E_NOMEM, "out of memory");
		goto out;
	}
	if (optimized != NULL) {
		c.ov = oxp_dag_get(optimized);
		if (!mark_owned(&c)) {
			rc = oxr__fail(err, OXR_E_NOMEM, "out of memory");
			goto out;
		}
	}
	c.d = d;
	if (p.profile)
		profile_providers(&p);
	uint32_t nm = p.profile ? 4 + 2 * p.npm : p.nmetrics;
	oxr_heat *h = heat_new(p.a, c.dv->nnodes, nm);
	if (h == NULL) {
		rc = oxr__fail(err, OXR_E_NOMEM, "out of memory");
		goto out;
	}
	h->format = p.format;
	h->nentries = p.n;
	if (p.profile) {
		static const char *const names[4] = {"dur.mean", "dur.p50", "dur.p90", "dur.total"};
		for (uint32_t k = 0; k < nm; k++) {
			((const char **)h->metrics)[k] =
			    k < 4 ? names[k]
			          : oxp_arena_printf(p.a, "%s@%s", names[k % 2 ? 3 : 0], p.pm[(k - 4) / 2]);
			((const char **)h->units)[k] = "us";
			((bool *)h->sums)[k] = true;
		}
		node_total = calloc(c.dv->nnodes ? c.dv->nnodes : 1, sizeof(int64_t));
		rc = node_total ? build_profile(&p, &c, h, node_total) : nomem(&p);
	} else {
		for (uint32_t k = 0; k < nm; k++) {
			((const char **)h->metrics)[k] = p.metrics[k];
			((const char **)h->units)[k] = "";
			((bool *)h->sums)[k] = summable(p.metrics[k]);
		}
		if (p.nthresholds > 0) {
			double *t = oxp_arena_array(p.a, p.nthresholds, sizeof(double));
			if (t != NULL) {
				memcpy(t, p.thresholds, p.nthresholds * sizeof(double));
				for (uint32_t i = 1; i < p.nthresholds; i++) /* ascending */
					for (uint32_t j = i; j > 0 && t[j - 1] > t[j]; j--) {
						double x = t[j];
						t[j] = t[j - 1];
						t[j - 1] = x;
					}
				h->thresholds = t;
				h->nthresholds = p.nthresholds;
			}
		}
		rc = build_generic(&p, &c, h);
	}
	if (rc == OXR_OK && oxp_arena_failed(p.a))
		rc = oxr__fail(err, OXR_E_NOMEM, "out of memory");
	if (rc == OXR_OK) {
		*out = h;
		p.a = NULL; /* the table owns it now */
	}
out:
	free(node_total);
	free(p.e);
	free(p.k);
	oxp_smap_free(&p.by_name);
	oxp_smap_free(&c.nodes);
	oxp_smap_free(&c.values);
	oxp_smap_free(&c.onodes);
	oxp_smap_free(&c.ovalues);
	free(c.mark);
	free(c.owned);
	oxp_arena_free(c.cost_arena);
	oxp_arena_free(p.a);
	return rc;
}

oxr_code oxr_heat_cost(const oxp_dag *d, oxr_heat **out, oxr_error *err)
{
	*out = NULL;
	const oxp_dag_view *dv = oxp_dag_get(d);
	oxp_arena *a = oxp_arena_new((size_t)1 << 30);
	const oxp_cost *cost = NULL;
	if (a == NULL || oxp_cost_compute(d, a, NULL, &cost, NULL) != OXP_OK) {
		oxp_arena_free(a);
		return oxr__fail(err, OXR_E_NOMEM, "the cost could not be computed (memory)");
	}
	static const char *const names[4] = {"macs", "flops", "params", "bytes"};
	static const char *const units[4] = {"MACs", "FLOPs", "params", "bytes"};
	oxr_heat *h = heat_new(a, dv->nnodes, 4);
	if (h == NULL) {
		oxp_arena_free(a);
		return oxr__fail(err, OXR_E_NOMEM, "out of memory");
	}
	h->format = "cost";
	for (uint32_t k = 0; k < 4; k++) {
		((const char **)h->metrics)[k] = names[k];
		((const char **)h->units)[k] = units[k];
		((bool *)h->sums)[k] = true;
	}
	double *vals = (double *)h->values, total = 0;
	for (uint32_t n = 0; n < dv->nnodes; n++) {
		const oxp_cost_node *cn = &cost->nodes[n];
		oxp_cost_poly fl;
		oxp_cost_flops(&fl, &cn->macs, &cn->ops);
		double v[4] = {oxp_cost_poly_eval(&cn->macs, 1), oxp_cost_poly_eval(&fl, 1),
		               cn->params.too_large ? NAN : (double)cn->params.weights,
		               oxp_cost_poly_eval(&cn->read, 1) + oxp_cost_poly_eval(&cn->written, 1)};
		for (int k = 0; k < 4; k++)
			vals[(size_t)n * 4 + (size_t)k] = isfinite(v[k]) ? v[k] : NAN;
		if (isfinite(v[0]))
			total += v[0];
		h->nentries++;
		h->nmatched++;
	}
	h->total = h->attributed = total;
	*out = h;
	return OXR_OK;
}

void oxr_heat_free(oxr_heat *h)
{
	if (h != NULL)
		oxp_arena_free(h->arena);
}

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
		if (v >= 1e6)
			snprintf(buf, size, "%.3g s", v / 1e6);
		else if (v >= 1e3)
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

static json_t *num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
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
	qsort(r, n, sizeof(ranked), cmp_ranked);
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
		                      num(h->sums[metric] && msum > 0 ? r[i].v / msum : NAN));
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
	oxr_code rc = oxp_arena_failed(a) ? oxr__fail(err, OXR_E_NOMEM, "out of memory")
	                                  : jx_dump(root, out, err);
	json_decref(root); /* big arrays live on the heap, not in the scratch arena */
	jx_scratch_end();
	free(r);
	oxp_arena_free(a);
	return rc;
}

/* ---------------------------------------------------------------------------------------
 * Drawing: fills (style.c's scale, oxr__heat_color), value rows, the legend
 */
/* Where v falls on the scale, 0..1 */
static double scale_pos(const view *v, double x)
{
	double lo = v->heat_lo, hi = v->heat_hi;
	switch (v->ov->heat_scale) {
	case OXR_HEAT_LOG:
		if (!(x > 0) || !(hi > 0))
			return 0;
		if (hi <= lo)
			return 1;
		return (log(x) - log(lo)) / (log(hi) - log(lo));
	case OXR_HEAT_THRESHOLDS: {
		uint32_t bin = 0;
		for (uint32_t i = 0; i < v->heat_nthr; i++)
			if (x >= v->heat_thr[i])
				bin = i + 1;
		return v->heat_nthr ? (double)bin / v->heat_nthr : 0;
	}
	default:
		return hi > 0 ? x / hi : 0;
	}
}

/* The box a node's figure shows on: its own, or for a node folded into its consumers
 * (constants, bookkeeping: Shape, Gather of shapes, ...) the box of the first consumer
 * drawn, a few steps down at most; *at: the node drawn in it. */
static uint32_t box_of(const view *v, uint32_t n, uint32_t *at)
{
	for (int step = 0; step < 16 && n != OXP_NONE; step++) {
		uint32_t bi = v->node_box[n];
		if (bi != OXP_NONE && bi < v->nboxes) {
			*at = n;
			return bi;
		}
		n = first_consumer(v->dv, n);
	}
	return OXP_NONE;
}

/* A stack's hottest repetition as its members are named: "layers.3", or with a period
 * "features.4–5" */
static void rep_name(const vbox *b, char *buf, size_t size)
{
	uint64_t lo = (uint64_t)b->rep_first + (uint64_t)b->heat_rep * b->rep_period;
	if (b->rep_period > 1)
		snprintf(buf, size, "%s%" PRIu64 "\xe2\x80\x93%" PRIu64, b->rep_key ? b->rep_key : "",
		         lo, lo + b->rep_period - 1);
	else
		snprintf(buf, size, "%s%" PRIu64, b->rep_key ? b->rep_key : "", lo);
}

oxr_code oxr__heat_apply(view *v, oxr_error *err)
{
	const oxr_heat *h = v->ov->heat;
	uint32_t m = v->ov->heat_metric;
	if (m >= h->nmetrics || h->nnodes != v->dv->nnodes)
		return oxr__fail(err, OXR_E_OPTION, "the overlay does not fit this model");
	bool sum = h->sums[m];
	double *bv = malloc((size_t)(v->nboxes ? v->nboxes : 1) * sizeof(double));
	uint32_t *bf = malloc((size_t)(v->nboxes ? v->nboxes : 1) * sizeof(uint32_t));
	if (bv == NULL || bf == NULL) {
		free(bv);
		free(bf);
		return oxr__fail(err, OXR_E_NOMEM, "out of memory");
	}
	/* a ×N stack's repetitions: each one's figure (aggregated as the box's), from
	 * rep_at[box] on in rv */
	uint32_t *rep_at = malloc((size_t)(v->nboxes ? v->nboxes : 1) * sizeof(uint32_t));
	size_t nrv = 0;
	for (uint32_t i = 0; rep_at != NULL && i < v->nboxes; i++) {
		v->boxes[i].heat_rep = -1;
		rep_at[i] = (uint32_t)nrv;
		if (v->boxes[i].reps > 0 && v->node_rep != NULL)
			nrv += v->boxes[i].reps; /* at most 4x the dag's nodes in all (hier.c) */
	}
	double *rv = rep_at != NULL ? malloc((nrv ? nrv : 1) * sizeof(double)) : NULL;
	if (rv == NULL) {
		free(bv);
		free(bf);
		free(rep_at);
		return oxr__fail(err, OXR_E_NOMEM, "out of memory");
	}
	for (size_t i = 0; i < nrv; i++)
		rv[i] = NAN;
	for (uint32_t i = 0; i < v->nboxes; i++) {
		bv[i] = NAN;
		bf[i] = OXP_NONE;
	}
	double total = 0;
	for (uint32_t n = 0; n < h->nnodes; n++) {
		double x = h->values[(size_t)n * h->nmetrics + m];
		if (!isfinite(x))
			continue;
		total += x;
		uint32_t rn = OXP_NONE; /* the node drawn in it: a stack's member */
		uint32_t bi = box_of(v, n, &rn);
		if (bi == OXP_NONE)
			continue;
		bv[bi] = isnan(bv[bi]) ? x : sum ? bv[bi] + x : fmax(bv[bi], x);
		if (h->fused[n] != OXP_NONE && v->boxes[bi].kind == BX_OP)
			bf[bi] = n;
		uint32_t r = rn != OXP_NONE && v->node_rep != NULL ? v->node_rep[rn] : OXP_NONE;
		if (r != OXP_NONE && r < v->boxes[bi].reps) {
			double *y = &rv[rep_at[bi] + r];
			*y = isnan(*y) ? x : sum ? *y + x : fmax(*y, x);
		}
	}
	for (uint32_t i = 0; i < v->nboxes; i++) {
		vbox *b = &v->boxes[i];
		for (uint32_t r = 0; r < b->reps && v->node_rep != NULL; r++) {
			double y = rv[rep_at[i] + r];
			if (isfinite(y) && (b->heat_rep < 0 || y > b->heat_rep_value)) {
				b->heat_rep = (int32_t)r;
				b->heat_rep_value = y;
			}
		}
	}
	free(rv);
	free(rep_at);
	double lo = INFINITY, hi = 0;
	for (uint32_t i = 0; i < v->nboxes; i++)
		if (isfinite(bv[i])) {
			if (bv[i] > hi)
				hi = bv[i];
			if (bv[i] > 0 && bv[i] < lo)
				lo = bv[i];
		}
	if (!isfinite(lo))
		lo = hi;
	if (v->ov->heat_scale == OXR_HEAT_LOG && hi > 0 && lo < hi * 1e-4)
		lo = hi * 1e-4; /* four decades: smaller values share the coldest colour */
	v->heat_lo = lo;
	v->heat_hi = hi;
	v->heat_total = sum ? total : NAN;
	/* thresholds: the input's (Model Explorer), else shares of the total (sums) or of the
	 * largest value (max): 0.1%, 1%, 5%, 10% */
	if (h->nthresholds > 0) {
		v->heat_nthr = h->nthresholds < 8 ? h->nthresholds : 8;
		for (uint32_t i = 0; i < v->heat_nthr; i++)
			v->heat_thr[i] = h->thresholds[i];
	} else {
		static const double q[4] = {0.001, 0.01, 0.05, 0.1};
		v->heat_nthr = 4;
		for (int i = 0; i < 4; i++)
			v->heat_thr[i] = q[i] * (sum ? total : hi * 10);
	}
	for (uint32_t i = 0; i < v->nboxes; i++) {
		if (!isfinite(bv[i]))
			continue;
		vbox *b = &v->boxes[i];
		unsigned char rgb[3];
		oxr__heat_color(scale_pos(v, bv[i]), rgb);
		b->heat = true;
		b->heat_value = bv[i];
		b->heat_dark = oxr__heat_text(rgb)[1] == 'f'; /* white text */
		b->heat_fill = oxp_arena_printf(v->arena, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
		b->heat_fused = bf[i];
		char val[48], row[128];
		oxr_heat_format(h, m, bv[i], val, sizeof(val));
		int len;
		const char *tot = sum && b->heat_rep >= 0 ? "total " : ""; /* a stack's */
		if (sum && total > 0)
			len = snprintf(row, sizeof(row), "%s%s · %.1f%%", tot, val, 100 * bv[i] / total);
		else
			len = snprintf(row, sizeof(row), "%s%s", tot, val);
		if (bf[i] != OXP_NONE && len > 0 && (size_t)len < sizeof(row))
			snprintf(row + len, sizeof(row) - (size_t)len, " · fused ×%u",
			         h->fused_size[bf[i]]);
		const char *text = oxp_arena_printf(v->arena, "%s", row);
		if (text != NULL && oxr__add_row(v, b, ROW_SUB, text))
			b->rows[b->nrows - 1].heat = true;
		if (b->heat_rep >= 0) { /* a stack: its total above, its hottest repetition here */
			char key[64];
			rep_name(b, key, sizeof(key));
			oxr_heat_format(h, m, b->heat_rep_value, val, sizeof(val));
			text = oxp_arena_printf(v->arena, "hottest %s: %s", key, val);
			if (text != NULL && oxr__add_row(v, b, ROW_SUB, text))
				b->rows[b->nrows - 1].heat = true;
		}
	}
	free(bv);
	free(bf);
	return OXR_OK;
}

#define LEGEND_SW 18.0 /* a swatch's width */

static const char *legend_caption(const view *v, char *buf, size_t size)
{
	const oxr_heat *h = v->ov->heat;
	uint32_t m = v->ov->heat_metric;
	static const char *const scales[] = {"linear", "log", "thresholds"};
	snprintf(buf, size, "%s%s%s%s · %s scale · groups show the %s", h->metrics[m],
	         h->units[m][0] ? " (" : "", h->units[m], h->units[m][0] ? ")" : "",
	         scales[v->ov->heat_scale % 3], h->sums[m] ? "sum" : "largest");
	return buf;
}

/* Steps drawn: 9 for a continuous scale, bins for thresholds */
static uint32_t legend_steps(const view *v)
{
	return v->ov->heat_scale == OXR_HEAT_THRESHOLDS ? v->heat_nthr + 1 : 9;
}

static void step_label(const view *v, uint32_t i, char *buf, size_t size)
{
	const oxr_heat *h = v->ov->heat;
	uint32_t m = v->ov->heat_metric, n = legend_steps(v);
	buf[0] = '\0';
	if (v->ov->heat_scale == OXR_HEAT_THRESHOLDS) {
		if (i == 0)
			snprintf(buf, size, "<");
		char val[48];
		oxr_heat_format(h, m, v->heat_thr[i == 0 ? 0 : i - 1], val, sizeof(val));
		size_t l = strlen(buf);
		snprintf(buf + l, size - l, "%s%s", i == 0 ? " " : "≥ ", val);
	} else if (i == 0 || i + 1 == n) {
		oxr_heat_format(h, m, i == 0 ? (v->ov->heat_scale == OXR_HEAT_LOG ? v->heat_lo : 0)
		                             : v->heat_hi, buf, size);
	}
}

double oxr__heat_legend_width(const view *v)
{
	char buf[256];
	double x = 10;
	uint32_t n = legend_steps(v);
	for (uint32_t i = 0; i < n; i++) {
		step_label(v, i, buf, sizeof(buf));
		x += LEGEND_SW + (buf[0] ? oxr__text_width(buf, 10, false) + 8 : 0);
	}
	x += 14 + LEGEND_SW + 5 + oxr__text_width("no data", 10, false) + 14;
	x += oxr__text_width(legend_caption(v, buf, sizeof(buf)), 10, false) + 14;
	if (v->ov->legend != NULL)
		x += oxr__text_width(v->ov->legend, 10, false);
	return x + 10;
}

void oxr__heat_legend_svg(const view *v, oxr_buf *o, double y)
{
	const oxr_palette *pal = oxr__palette(v->o.theme_dark);
	char buf[256];
	double x = 10;
	uint32_t n = legend_steps(v);
	oxr_buf_printf(o, "<g id=\"legend\" class=\"legend heat-legend\">");
	for (uint32_t i = 0; i < n; i++) {
		unsigned char rgb[3];
		double t = v->ov->heat_scale == OXR_HEAT_THRESHOLDS ? (double)i / (n - 1)
		                                                    : (double)i / 8.0;
		oxr__heat_color(t, rgb);
		step_label(v, i, buf, sizeof(buf));
		if (buf[0] && i + 1 == n && v->ov->heat_scale != OXR_HEAT_THRESHOLDS) {
			oxr_buf_printf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"13\" "
			                  "fill=\"#%02x%02x%02x\"/>",
			               x, y, LEGEND_SW, rgb[0], rgb[1], rgb[2]);
			x += LEGEND_SW + 4;
			oxr_buf_printf(o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"%s\">",
			               x, y + 10.5, pal->legend_text);
			oxr__xml(o, buf);
			oxr_buf_append(o, "</text>", 7);
			x += oxr__text_width(buf, 10, false) + 4;
			continue;
		}
		if (buf[0]) {
			oxr_buf_printf(o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"%s\">",
			               x, y + 10.5, pal->legend_text);
			oxr__xml(o, buf);
			oxr_buf_append(o, "</text>", 7);
			x += oxr__text_width(buf, 10, false) + 4;
		}
		oxr_buf_printf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"13\" "
		                  "fill=\"#%02x%02x%02x\"/>",
		               x, y, LEGEND_SW, rgb[0], rgb[1], rgb[2]);
		x += LEGEND_SW + (buf[0] ? 4 : 0);
	}
	x += 14;
	oxr_buf_printf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"13\" fill=\"%s\" "
	                  "stroke=\"%s\"/><text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" "
	                  "fill=\"%s\">no data</text>",
	               x, y, LEGEND_SW, pal->op_fill, pal->op_stroke, x + LEGEND_SW + 5, y + 10.5,
	               pal->legend_text);
	x += LEGEND_SW + 5 + oxr__text_width("no data", 10, false) + 14;
	oxr_buf_printf(o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"%s\">", x,
	               y + 10.5, pal->legend_text);
	oxr__xml(o, legend_caption(v, buf, sizeof(buf)));
	oxr_buf_append(o, "</text>", 7);
	x += oxr__text_width(buf, 10, false) + 14;
	if (v->ov->legend != NULL) {
		oxr_buf_printf(o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"%s\">",
		               x, y + 10.5, pal->legend_note);
		oxr__xml(o, v->ov->legend);
		oxr_buf_append(o, "</text>", 7);
	}
	oxr_buf_append(o, "</g>\n", 5);
}

void oxr__heat_layout_json(const view *v, oxr_buf *o)
{
	const oxr_heat *h = v->ov->heat;
	uint32_t m = v->ov->heat_metric;
	static const char *const scales[] = {"linear", "log", "thresholds"};
	/* the metric's name is the input's (a CSV header): escaped */
	oxr_buf_append(o, ",\"heat\":{\"metric\":", 18);
	oxr_json_string(o, h->metrics[m], strlen(h->metrics[m]));
	oxr_buf_append(o, ",\"unit\":", 8);
	oxr_json_string(o, h->units[m], strlen(h->units[m]));
	oxr_buf_printf(o, ",\"scale\":\"%s\",\"aggregate\":\"%s\",\"low\":%.6g,\"high\":%.6g",
	               scales[v->ov->heat_scale % 3], h->sums[m] ? "sum" : "max",
	               isfinite(v->heat_lo) ? v->heat_lo : 0, v->heat_hi);
	if (isfinite(v->heat_total))
		oxr_buf_printf(o, ",\"total\":%.6g", v->heat_total);
	oxr_buf_append(o, "}", 1);
}

void oxr__heat_box_json(const view *v, const vbox *b, oxr_buf *o)
{
	if (!b->heat)
		return;
	oxr_buf_printf(o, ",\"heat\":{\"value\":%.10g,\"color\":\"%s\"", b->heat_value,
	               b->heat_fill ? b->heat_fill : "#ffffff");
	if (isfinite(v->heat_total) && v->heat_total > 0)
		oxr_buf_printf(o, ",\"share\":%.6g", b->heat_value / v->heat_total);
	if (b->heat_rep >= 0) {
		char key[64];
		rep_name(b, key, sizeof(key));
		oxr_buf_printf(o, ",\"repetitions\":%u,\"hottest\":{\"repetition\":%d,\"name\":",
		               b->reps, b->heat_rep);
		oxr_json_string(o, key, strlen(key));
		oxr_buf_printf(o, ",\"value\":%.10g}", b->heat_rep_value);
	}
	if (b->heat_fused != OXP_NONE) {
		const oxr_heat *h = v->ov->heat;
		oxr_buf_printf(o, ",\"fused\":\"%s\",\"fused_size\":%u",
		               v->dv->nodes[h->fused[b->heat_fused]].id, h->fused_size[b->heat_fused]);
	}
	oxr_buf_append(o, "}", 1);
}
