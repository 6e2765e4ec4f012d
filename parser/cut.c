/*
 * cut.c — a model's structure as the page cuts it (web/structure.js structureOf), made
 * from the whole file in place: the proof behind a structure's link (service/links.c,
 * docs/decisions.md 82).
 *
 * web/structure.js is the specification; this file follows it step by step, so that the
 * same file cut here and in the page gives the same bytes (tests/e2e/cut.test.mjs runs
 * both on every corpus model).  The walk goes ModelProto → graph, functions,
 * training_info → nodes → attributes (t, tensors, g, graphs, sparse tensors) →
 * TensorProto; a tensor whose one payload field is raw_data (9), or packed float_data (4)
 * of FLOAT/COMPLEX64 or double_data (10) of DOUBLE/COMPLEX128, of at least THRESHOLD
 * bytes, with no segment, data_location or external_data of its own and a data type
 * external data can hold, loses that field and gains external_data {location, offset,
 * length} naming the payload's bytes in the file, then data_location = EXTERNAL.  Every
 * message on the way to a changed tensor gets its new length (the tag bytes are kept
 * as they were); everything else is copied as it is.
 *
 * Zero-copy: the structure is never built.  Pass one measures (new lengths, what is cut);
 * pass two hands the structure to a sink piece by piece — ranges of the input and a few
 * new bytes — so a multi-GB model is hashed without a second copy, and its payloads are
 * never read.  The reader is checked (no pointer is formed past the input), varints are
 * at most 10 bytes, and nesting spends a depth budget of OXP_CUT_MAX_DEPTH (the page's
 * MAX_DEPTH); a changed message's length is measured once per level above it, which the
 * depth bounds.
 */
#include "parser/internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Message kinds, as structure.js's K. */
enum { K_MODEL, K_GRAPH, K_NODE, K_ATTR, K_TENSOR, K_SPARSE, K_FUNC, K_TRAINING, K_NONE };

/* structure.js DESCEND: the length-delimited fields that lead to a message that may hold
 * tensors, by kind; K_NONE elsewhere. */
static int descend(int kind, uint64_t field)
{
	switch (kind) {
	case K_MODEL:
		return field == 7 ? K_GRAPH : field == 20 ? K_TRAINING : field == 25 ? K_FUNC : K_NONE;
	case K_GRAPH:
		return field == 1 ? K_NODE : field == 5 ? K_TENSOR : field == 15 ? K_SPARSE : K_NONE;
	case K_NODE:
		return field == 5 ? K_ATTR : K_NONE;
	case K_ATTR:
		return field == 5 || field == 10 ? K_TENSOR
		       : field == 6 || field == 11 ? K_GRAPH
		       : field == 22 || field == 23 ? K_SPARSE
		                                    : K_NONE;
	case K_SPARSE:
		return field == 1 || field == 2 ? K_TENSOR : K_NONE;
	case K_FUNC:
		return field == 7 ? K_NODE : field == 11 ? K_ATTR : K_NONE;
	case K_TRAINING:
		return field == 1 || field == 2 ? K_GRAPH : K_NONE;
	default:
		return K_NONE;
	}
}

/* TensorProto's payload fields (structure.js PAYLOAD). */
static bool payload_field(uint64_t f)
{
	return f == 4 || f == 5 || f == 6 || f == 7 || f == 9 || f == 10 || f == 11;
}

typedef struct cut {
	const uint8_t *buf;
	size_t size;
	const char *loc;
	size_t loclen;
	uint64_t threshold;
	oxp_cut_sink sink;
	void *ctx;
	bool sink_failed;
	uint64_t cut, ranges; /* pass one: payload bytes cut, tensors cut */
	uint64_t external;    /* pass one: tensors whose data is external already */
	bool saw_graph;
	oxp_error *err;
} cut;

static OXP_CHECK bool fail(cut *c, oxp_code code, uint64_t at, const char *msg)
{
	if (c->err != NULL && c->err->code == OXP_OK) {
		c->err->code = code;
		c->err->offset = at;
		snprintf(c->err->message, sizeof(c->err->message), "%s", msg);
	}
	return false;
}

/* A varint at *pos before end (at most 10 bytes; as structure.js, bits past 64 are
 * dropped rather than refused). */
static OXP_CHECK bool varint(cut *c, size_t *pos, size_t end, uint64_t *out)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < 10; i++) {
		if (*pos >= end)
			return fail(c, OXP_E_TRUNCATED, *pos, "truncated varint");
		uint8_t b = c->buf[(*pos)++];
		v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (b < 0x80) {
			*out = v;
			return true;
		}
	}
	return fail(c, OXP_E_VARINT, *pos, "varint over 10 bytes");
}

static size_t varint_len(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static size_t put_varint(uint8_t *out, uint64_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		out[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (uint8_t)v;
	return n;
}

/* One field: tag at fs, value [vs, end) (end within `lim`); false after an error. */
typedef struct field {
	uint64_t num;
	unsigned wt;
	size_t fs, te, vs, end; /* te: where the tag ends */
} field;

static OXP_CHECK bool next_field(cut *c, size_t pos, size_t lim, field *f)
{
	uint64_t tag = 0;
	f->fs = pos;
	if (!varint(c, &pos, lim, &tag))
		return false;
	f->te = pos;
	f->num = tag >> 3;
	f->wt = (unsigned)(tag & 7);
	if (f->num == 0)
		return fail(c, OXP_E_TAG, f->fs, "field number 0");
	f->vs = pos;
	uint64_t v = 0;
	switch (f->wt) {
	case 0:
		if (!varint(c, &pos, lim, &v))
			return false;
		f->end = pos;
		return true;
	case 1:
	case 5:
		if (lim - pos < (f->wt == 1 ? 8u : 4u))
			return fail(c, OXP_E_TRUNCATED, f->fs, "a field runs past its message");
		f->end = pos + (f->wt == 1 ? 8u : 4u);
		return true;
	case 2:
		if (!varint(c, &pos, lim, &v))
			return false;
		if (v > lim - pos)
			return fail(c, OXP_E_LENGTH, f->fs, "a field runs past its message");
		f->vs = pos;
		f->end = pos + (size_t)v;
		return true;
	default:
		return fail(c, f->wt == 3 || f->wt == 4 ? OXP_E_GROUP : OXP_E_WIRETYPE, f->fs,
		            "wire type of a group, or invalid");
	}
}

/* What structure.js's finishTensor decides: the payload to cut out of the tensor
 * [from, to), or none (*pay.fs == SIZE_MAX); *external: its data_location says EXTERNAL
 * (set, never cleared). */
static OXP_CHECK bool tensor_payload(cut *c, size_t from, size_t to, field *pay,
                                     bool *external)
{
	uint64_t dtype = 0;
	unsigned npay = 0;
	bool own = false;
	pay->fs = SIZE_MAX;
	field one = {0};
	for (size_t pos = from; pos < to;) {
		field f;
		if (!next_field(c, pos, to, &f))
			return false;
		if (f.num == 2 && f.wt == 0) {
			size_t p = f.vs;
			if (!varint(c, &p, f.end, &dtype))
				return false;
		} else if (f.num == 3 || f.num == 13 || f.num == 14) {
			own = true;
			uint64_t v = 0;
			size_t p = f.vs;
			if (f.num == 14 && f.wt == 0 && varint(c, &p, f.end, &v) && v == 1)
				*external = true;
		} else if (payload_field(f.num)) {
			npay++;
			one = f;
		}
		pos = f.end;
	}
	if (npay != 1 || own || one.wt != 2 || one.end - one.vs < c->threshold || dtype == 0 ||
	    dtype == 8)
		return true;
	if (one.num == 9 || (one.num == 4 && (dtype == 1 || dtype == 14)) ||
	    (one.num == 10 && (dtype == 11 || dtype == 15)))
		*pay = one;
	return true;
}

/* The external_data entries and data_location a cut tensor gains (structure.js
 * externalFields): written into out (NULL: measured only); their length. */
static size_t ext_fields(const cut *c, uint64_t offset, uint64_t length, uint8_t *out)
{
	char num[2][24];
	snprintf(num[0], sizeof(num[0]), "%" PRIu64, offset);
	snprintf(num[1], sizeof(num[1]), "%" PRIu64, length);
	const char *key[3] = {"location", "offset", "length"};
	const char *val[3] = {c->loc, num[0], num[1]};
	size_t vlen[3] = {c->loclen, strlen(num[0]), strlen(num[1])};
	size_t n = 0;
	for (int i = 0; i < 3; i++) {
		size_t kl = strlen(key[i]);
		size_t entry = 1 + varint_len(kl) + kl + 1 + varint_len(vlen[i]) + vlen[i];
		if (out != NULL) {
			out[n] = 13 << 3 | 2;
			size_t o = n + 1 + put_varint(out + n + 1, entry);
			out[o++] = 1 << 3 | 2;
			o += put_varint(out + o, kl);
			memcpy(out + o, key[i], kl);
			o += kl;
			out[o++] = 2 << 3 | 2;
			o += put_varint(out + o, vlen[i]);
			memcpy(out + o, val[i], vlen[i]);
		}
		n += 1 + varint_len(entry) + entry;
	}
	if (out != NULL) {
		out[n] = 14 << 3;
		out[n + 1] = 1;
	}
	return n + 2;
}

static OXP_CHECK bool emit(cut *c, const void *p, size_t n)
{
	if (n == 0 || c->sink_failed)
		return !c->sink_failed;
	if (!c->sink(c->ctx, p, n))
		c->sink_failed = true;
	return !c->sink_failed;
}

/* The message of `kind` at [from, to) (depth: its level, the model's 1): its new length
 * into *len and whether it changed into *changed; with out, its new bytes go to the sink
 * (measure first: a changed child's length precedes it).  Pass one (count) also sums
 * what is cut. */
static OXP_CHECK bool message(cut *c, int kind, size_t from, size_t to, unsigned depth,
                              bool out, bool count, uint64_t *len, bool *changed)
{
	*changed = false;
	*len = to - from;
	if (kind == K_TENSOR) {
		field pay;
		bool external = false;
		if (!tensor_payload(c, from, to, &pay, &external))
			return false;
		if (count && external)
			c->external++;
		if (pay.fs == SIZE_MAX)
			return !out || emit(c, c->buf + from, to - from);
		uint8_t ext[3 * 64 + 2 * 24 + OXP_CUT_LOCATION_MAX];
		size_t en = ext_fields(c, pay.vs, pay.end - pay.vs, out ? ext : NULL);
		*changed = true;
		*len = (to - from) - (pay.end - pay.fs) + en;
		if (count) {
			c->cut += pay.end - pay.vs;
			c->ranges++;
		}
		return !out || (emit(c, c->buf + from, pay.fs - from) &&
		                emit(c, c->buf + pay.end, to - pay.end) && emit(c, ext, en));
	}
	size_t run = from;
	uint64_t total = 0;
	for (size_t pos = from; pos < to;) {
		field f;
		if (!next_field(c, pos, to, &f))
			return false;
		if (kind == K_MODEL && f.num == 7 && f.wt == 2)
			c->saw_graph = true;
		int sub = f.wt == 2 ? descend(kind, f.num) : K_NONE;
		pos = f.end;
		if (sub == K_NONE) {
			total += f.end - f.fs;
			continue;
		}
		if (depth >= OXP_CUT_MAX_DEPTH)
			return fail(c, OXP_E_DEPTH, f.fs, "nested too deep");
		uint64_t clen = 0;
		bool cch = false;
		if (!message(c, sub, f.vs, f.end, depth + 1, false, count, &clen, &cch))
			return false;
		if (!cch) {
			total += f.end - f.fs;
			continue;
		}
		/* the tag as it was, the new length, the new bytes */
		size_t taglen = f.te - f.fs;
		total += taglen + varint_len(clen) + clen;
		*changed = true;
		if (out) {
			uint8_t lb[10];
			bool again = false;
			uint64_t same = 0;
			if (!emit(c, c->buf + run, f.fs - run) || !emit(c, c->buf + f.fs, taglen) ||
			    !emit(c, lb, put_varint(lb, clen)) ||
			    !message(c, sub, f.vs, f.end, depth + 1, true, false, &same, &again))
				return false;
			run = f.end;
		}
	}
	*len = total;
	return !out || emit(c, c->buf + run, to - run);
}

bool oxp_cut_location(const char *name, char *out, size_t size)
{
	size_t n = name != NULL ? strlen(name) : 0;
	bool ok = n > 0 && n <= OXP_CUT_LOCATION_MAX && strcmp(name, ".") != 0 &&
	          strcmp(name, "..") != 0 &&
	          !(n >= 2 && name[1] == ':' &&
	            ((name[0] >= 'A' && name[0] <= 'Z') || (name[0] >= 'a' && name[0] <= 'z')));
	for (size_t i = 0; ok && i < n; i++) {
		unsigned char ch = (unsigned char)name[i];
		ok = ch != '/' && ch != '\\' && ch >= 0x20 && ch != 0x7f;
	}
	const char *loc = ok ? name : "model.onnx";
	if (strlen(loc) >= size)
		return false;
	memcpy(out, loc, strlen(loc) + 1);
	return ok;
}

oxp_code oxp_cut(oxp_cut_info *info, const void *buf, size_t size, const char *location,
                 uint64_t min_saving, oxp_cut_sink sink, void *ctx, oxp_error *err)
{
	if (err != NULL)
		memset(err, 0, sizeof(*err));
	oxp_cut_info res = {0, 0, 0, 0, false};
	size_t loclen = strlen(location);
	if (loclen > OXP_CUT_LOCATION_MAX) {
		if (err != NULL) {
			err->code = OXP_E_LIMIT;
			snprintf(err->message, sizeof(err->message), "location longer than %d bytes",
			         OXP_CUT_LOCATION_MAX);
		}
		return OXP_E_LIMIT;
	}
	cut c = {buf, size, location, loclen, OXP_CUT_THRESHOLD, sink, ctx, false, 0, 0, 0, false, err};
	uint64_t len = 0;
	bool changed = false;
	if (!message(&c, K_MODEL, 0, size, 1, false, true, &len, &changed))
		return err != NULL ? err->code : OXP_E_TRUNCATED;
	if (!c.saw_graph) {
		if (err != NULL) {
			err->code = OXP_E_NOT_MODEL;
			snprintf(err->message, sizeof(err->message), "not an ONNX model (no graph)");
		}
		return OXP_E_NOT_MODEL;
	}
	res.cut = c.cut;
	res.tensors = c.ranges;
	res.external = c.external;
	res.bytes = len;
	/* the page sends a file whose cut saves too little as it is: no structure */
	res.cuts = c.ranges > 0 && c.cut >= min_saving;
	if (res.cuts && sink != NULL) {
		uint64_t same = 0;
		bool again = false;
		if (!message(&c, K_MODEL, 0, size, 1, true, false, &same, &again))
			return c.sink_failed ? OXP_E_IO : (err != NULL ? err->code : OXP_E_TRUNCATED);
	}
	*info = res;
	return OXP_OK;
}
