/*
 * preview.c — tensor previews: GET /models/{id}/tensors/{name} (and /files/.../tensors/).
 *
 * A preview names a tensor of a model (an initializer, a Constant's value, a tensor
 * attribute: oxp_dag_find_tensor resolves names and document refs) or the tensor of a
 * "tensor" upload (a lone TensorProto), and answers its type, dims, storage and size, a
 * page of decoded values (JSON, or a .npy file) and statistics over the whole tensor.
 *
 * Values come from the parser's readers (parser/oxp.h, "Tensor values").  External data
 * is opened with oxp_external_open beneath the model's data folder (confined: openat2
 * RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS, regular files with one link, offset + length
 * within the file) and read with pread: a page reads only the bytes of its elements;
 * statistics stream over the region in CHUNK-byte pieces (two passes: figures, then the
 * histogram over the global range), so memory does not grow with the tensor.
 *
 * Statistics are a pure function of (model, tensor, bins): kept in the store as a
 * rendering of the model ("stats-<hash>.json"), so a second preview with another page
 * costs a small file read; the whole answer is cached in memory by artifacts.c.
 */
#include "service/preview.h"
#include "parser/oxp.h"
#include "render/oxr.h"
#include "service/art.h"
#include "service/hash.h"
#include "service/isolate.h"
#include "service/metrics.h"
#include "service/models.h"
#include "service/query.h"
#include "service/router.h"
#include "service/server.h"
#include "store/oxst.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PREVIEW_VERSION "p1" /* bump when the statistics' JSON changes */
#define CHUNK ((size_t)8 << 20) /* bytes of external data read at once for statistics */
#define PAGE_ELEMS 4096         /* elements decoded at once */
#define JSON_BODY_MAX ((size_t)64 << 20)

/* ---------------------------------------------------------------------------------------
 * Where a tensor's values are: inline (the parser reads them in place) or an open
 * external region (read with pread in windows).
 */
typedef struct tsrc {
	const oxp_tensor *t;
	int32_t dt;
	uint64_t count;
	unsigned bits;           /* per element (both parts of a complex) */
	bool external;
	oxp_external_file f;     /* external: the region, fd open */
	uint8_t *buf;            /* external: window buffer */
	size_t bufsize;
} tsrc;

static void fail(oxs_preview_out *o, unsigned status, const char *code, const char *extra,
                 const char *fmt, ...) OXS_PRINTF(5, 6);

static void fail(oxs_preview_out *o, unsigned status, const char *code, const char *extra,
                 const char *fmt, ...)
{
	if (o->status != 0)
		return;
	o->status = status;
	snprintf(o->code, sizeof(o->code), "%s", code);
	snprintf(o->extra, sizeof(o->extra), "%s", extra ? extra : "");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(o->message, sizeof(o->message), fmt, ap);
	va_end(ap);
}

/* A parser failure as the answer: 422 with the parser's code and message. */
static void fail_parser(oxs_preview_out *o, const oxp_error *e)
{
	unsigned status = e->code == OXP_E_IO ? 500 : e->code == OXP_E_NOMEM ? 503 : 422;
	fail(o, status, oxp_code_name(e->code), "", "%s", e->message);
}

/* A view of the external window bytes[0..n) as a tensor of `count` elements of t's type,
 * for the readers (they only read dims, data_type and the bytes given). */
static void window_tensor(oxp_tensor *w, int64_t *dim, const tsrc *s, uint64_t count)
{
	memset(w, 0, sizeof(*w));
	*dim = (int64_t)count;
	w->data_type = s->dt;
	w->ndims = 1;
	w->dims = dim;
	w->data_location = 1;
	w->storage = OXP_STORE_EXTERNAL;
}

/* Read the bytes of elements [off, off+n) of an external tensor into s->buf: *w is the
 * window tensor, *sub the index of element `off` in it. */
static bool ext_window(tsrc *s, uint64_t off, uint64_t n, oxp_tensor *w, int64_t *dim,
                       uint64_t *sub, size_t *nbytes, oxs_preview_out *o)
{
	uint64_t first_bit = off * s->bits; /* off < 2^63 / bits: checked by the size rule */
	uint64_t start = first_bit / 8;
	*sub = (first_bit % 8) / s->bits;
	uint64_t cover = *sub + n;
	uint64_t len = (cover * s->bits + 7) / 8;
	if (len > s->bufsize) {
		fail(o, 500, "internal", NULL, "window too large");
		return false;
	}
	size_t got = 0;
	while (got < len) {
		ssize_t r = pread(s->f.fd, s->buf + got, (size_t)len - got,
		                  (off_t)(s->f.offset + start + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			fail(o, 500, "external_io", ",\"rule\":\"io\"",
			     "cannot read the external data file (it changed or shrank)");
			return false;
		}
		got += (size_t)r;
	}
	window_tensor(w, dim, s, cover);
	*nbytes = (size_t)len;
	return true;
}

enum { RD_SCALAR, RD_BITS, RD_I64, RD_U64, RD_F64 };

/* Decode elements [off, off+n) (n <= PAGE_ELEMS) in the given form. */
static bool src_read(tsrc *s, int how, uint64_t off, size_t n, void *out, oxs_preview_out *o)
{
	oxp_error e;
	memset(&e, 0, sizeof(e));
	const oxp_tensor *t = s->t;
	const uint8_t *bytes = NULL;
	size_t nbytes = 0;
	oxp_tensor w;
	int64_t dim;
	uint64_t at = off;
	if (s->external) {
		if (!ext_window(s, off, n, &w, &dim, &at, &nbytes, o))
			return false;
		t = &w;
		bytes = s->buf;
	}
	oxp_code rc;
	switch (how) {
	case RD_BITS: rc = oxp_tensor_read_bits(t, bytes, nbytes, at, n, out, &e); break;
	case RD_I64: rc = oxp_tensor_read_i64(t, bytes, nbytes, at, n, out, &e); break;
	case RD_U64: rc = oxp_tensor_read_u64(t, bytes, nbytes, at, n, out, &e); break;
	case RD_F64: rc = oxp_tensor_read_f64(t, bytes, nbytes, at, n, out, &e); break;
	default: rc = oxp_tensor_read(t, bytes, nbytes, at, n, out, &e); break;
	}
	if (rc != OXP_OK) {
		fail_parser(o, &e);
		return false;
	}
	return true;
}

/* Merge chunk statistics c into a (population figures over finite values; Chan's
 * parallel formula for the mean and the sum of squared deviations m2). */
typedef struct merged {
	oxp_tensor_stats st;
	double m2;
	bool any;
} merged;

static void merge_stats(merged *a, const oxp_tensor_stats *c)
{
	oxp_tensor_stats *s = &a->st;
	s->count += c->count;
	s->nan += c->nan;
	s->pos_inf += c->pos_inf;
	s->neg_inf += c->neg_inf;
	s->zeros += c->zeros;
	s->is_int = c->is_int;
	if (c->finite == 0)
		return;
	double nb = (double)c->finite, m2b = c->std * c->std * nb;
	if (!a->any) {
		s->min = c->min;
		s->max = c->max;
		s->imin = c->imin, s->imax = c->imax, s->umin = c->umin, s->umax = c->umax;
		s->mean = c->mean;
		s->finite = c->finite;
		a->m2 = m2b;
		a->any = true;
		return;
	}
	s->min = fmin(s->min, c->min);
	s->max = fmax(s->max, c->max);
	s->imin = c->imin < s->imin ? c->imin : s->imin;
	s->imax = c->imax > s->imax ? c->imax : s->imax;
	s->umin = c->umin < s->umin ? c->umin : s->umin;
	s->umax = c->umax > s->umax ? c->umax : s->umax;
	double na = (double)s->finite, n = na + nb, delta = c->mean - s->mean;
	s->mean += delta * (nb / n);
	a->m2 += m2b + delta * delta * (na * (nb / n));
	s->finite += c->finite;
}

/* One piece of a tensor for two_pass_stats: elements [off, off+n) as the window *w over
 * *bytes (pass 0 computes the figures, pass 1 the histogram). */
typedef bool (*piece_fn)(void *ctx, uint64_t off, uint64_t n, int pass, oxp_tensor *w,
                         int64_t *dim, const uint8_t **bytes, size_t *nbytes, oxs_preview_out *o);

/* Statistics over a tensor too big to hold, in pieces of `per` elements: figures merged
 * piece by piece (Chan), then the histogram over the global [min, max]. */
static bool two_pass_stats(void *ctx, piece_fn piece, uint64_t count, uint64_t per,
                           uint32_t nbins, uint64_t *bins, oxp_tensor_stats *out,
                           oxs_preview_out *o)
{
	oxp_error e;
	memset(&e, 0, sizeof(e));
	oxp_stats_options so = {0, NULL, false, 0, 0};
	merged m;
	memset(&m, 0, sizeof(m));
	oxp_tensor_stats c;
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1) {
			if (nbins == 0 || !m.any)
				break;
			so.has_range = true;
			so.lo = m.st.min;
			so.hi = m.st.max;
			if (!(so.hi > so.lo)) { /* all finite values equal: numpy's range */
				so.lo -= 0.5;
				so.hi += 0.5;
			}
			memset(bins, 0, nbins * sizeof(*bins));
		}
		uint64_t *cb = pass == 1 ? calloc(nbins, sizeof(*cb)) : NULL;
		if (pass == 1 && cb == NULL) {
			fail(o, 503, "out_of_memory", NULL, "out of memory");
			return false;
		}
		oxp_stats_options po = so;
		po.nbins = pass == 1 ? nbins : 0;
		po.bins = cb;
		for (uint64_t off = 0; off < count; off += per) {
			uint64_t n = count - off < per ? count - off : per;
			oxp_tensor w;
			int64_t dim;
			const uint8_t *bytes;
			size_t nbytes;
			if (!piece(ctx, off, n, pass, &w, &dim, &bytes, &nbytes, o)) {
				free(cb);
				return false;
			}
			if (oxp_tensor_stats_get(&w, bytes, nbytes, &po, &c, &e) != OXP_OK) {
				free(cb);
				fail_parser(o, &e);
				return false;
			}
			if (pass == 0)
				merge_stats(&m, &c);
			for (uint32_t b = 0; pass == 1 && b < nbins; b++)
				bins[b] += cb[b];
		}
		free(cb);
	}
	*out = m.st;
	if (m.any) {
		out->std = sqrt(m.m2 / (double)m.st.finite);
	} else {
		out->min = out->max = out->mean = out->std = NAN;
		so.lo = so.hi = NAN;
		if (nbins > 0)
			memset(bins, 0, nbins * sizeof(*bins));
	}
	out->lo = so.lo;
	out->hi = so.hi;
	out->below = out->above = 0;
	if (nbins == 0)
		out->lo = out->hi = NAN;
	return true;
}

/* A window of external data for two_pass_stats. */
static bool ext_piece(void *ctx, uint64_t off, uint64_t n, int pass, oxp_tensor *w,
                      int64_t *dim, const uint8_t **bytes, size_t *nbytes, oxs_preview_out *o)
{
	tsrc *s = ctx;
	uint64_t sub;
	(void)pass;
	*bytes = s->buf;
	return ext_window(s, off, n, w, dim, &sub, nbytes, o);
}

/* Statistics of the whole tensor: one call for inline data and small regions; else one
 * chunked pass counting bit patterns (types of at most 16 bits), or two chunked passes
 * over the region (figures; then the histogram over [min, max]). */
static bool src_stats(tsrc *s, uint32_t nbins, uint64_t *bins, oxp_tensor_stats *out,
                      oxs_preview_out *o)
{
	oxp_error e;
	memset(&e, 0, sizeof(e));
	oxp_stats_options so = {nbins, bins, false, 0, 0};
	if (!s->external || s->f.length <= s->bufsize) {
		const uint8_t *bytes = NULL;
		size_t nbytes = 0;
		oxp_tensor w;
		int64_t dim;
		uint64_t sub;
		const oxp_tensor *t = s->t;
		if (s->external) {
			if (!ext_window(s, 0, s->count, &w, &dim, &sub, &nbytes, o))
				return false;
			t = &w;
			bytes = s->buf;
		}
		if (oxp_tensor_stats_get(t, bytes, nbytes, &so, out, &e) != OXP_OK) {
			fail_parser(o, &e);
			return false;
		}
		return true;
	}
	/* chunks of whole bytes and whole elements */
	uint64_t per = (uint64_t)s->bufsize * 8 / s->bits;
	per -= per % 8;
	/* types of at most 16 bits: one pass counting bit patterns, the statistics and the
	 * histogram then come from the counts (as for an in-memory tensor) */
	unsigned pbits = oxp_dtype_pattern_bits(s->dt);
	if (pbits > 0) {
		uint64_t *cnt = calloc((size_t)1 << pbits, sizeof(*cnt));
		if (cnt == NULL) {
			fail(o, 503, "out_of_memory", NULL, "out of memory");
			return false;
		}
		bool ok = true;
		for (uint64_t off = 0; ok && off < s->count; off += per) {
			uint64_t n = s->count - off < per ? s->count - off : per;
			oxp_tensor w;
			int64_t dim;
			uint64_t sub;
			size_t nbytes;
			ok = ext_window(s, off, n, &w, &dim, &sub, &nbytes, o);
			if (ok && oxp_tensor_count_patterns(&w, s->buf, nbytes, cnt, &e) != OXP_OK) {
				fail_parser(o, &e);
				ok = false;
			}
		}
		if (ok && oxp_stats_from_patterns(s->dt, cnt, &so, out, &e) != OXP_OK) {
			fail_parser(o, &e);
			ok = false;
		}
		free(cnt);
		return ok;
	}
	return two_pass_stats(s, ext_piece, s->count, per, nbins, bins, out, o);
}

/* ---------------------------------------------------------------------------------------
 * JSON
 */

/* A double: "%.*g" with `digits` significant digits (17 when 0); NaN and the infinities
 * as the strings "NaN", "Infinity", "-Infinity" (JSON has no such numbers). */
static void put_num(oxr_buf *b, double v, unsigned digits)
{
	if (isnan(v))
		oxr_buf_printf(b, "\"NaN\"");
	else if (isinf(v))
		oxr_buf_printf(b, v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
	else
		oxr_buf_printf(b, "%.*g", (int)(digits ? digits : 17), v);
}

/* A figure that may be undefined (no finite element): null then. */
static void put_fig(oxr_buf *b, double v, unsigned digits)
{
	if (isnan(v))
		oxr_buf_printf(b, "null");
	else
		put_num(b, v, digits);
}

static void put_dims(oxr_buf *b, const int64_t *dims, size_t n)
{
	oxr_buf_printf(b, "[");
	for (size_t i = 0; i < n; i++)
		oxr_buf_printf(b, "%s%" PRId64, i ? "," : "", dims[i]);
	oxr_buf_printf(b, "]");
}

/* ggml's ne: dims reversed (ne[0] the fastest-varying), four of them, the outer dims
 * beyond the fourth multiplied into ne[3]. */
static void put_ggml_ne(oxr_buf *b, const int64_t *dims, size_t n)
{
	int64_t ne[4] = {1, 1, 1, 1};
	for (size_t i = 0; i < n && i < 3; i++)
		ne[i] = dims[n - 1 - i];
	if (n >= 4) {
		int64_t rest = 1;
		for (size_t i = 0; i + 3 < n; i++)
			rest *= dims[i]; /* validated dims: the product fits int64 */
		ne[3] = rest;
	}
	put_dims(b, ne, 4);
}

static void put_str(oxr_buf *b, oxp_str s)
{
	oxr_json_string(b, s.p ? s.p : "", s.len);
}

/* One element as JSON (exact integers, floats with their type's digits). */
static void put_scalar(oxr_buf *b, const oxp_scalar *v, unsigned digits)
{
	switch (v->cls) {
	case OXP_VC_FLOAT: put_num(b, v->v.f, digits); break;
	case OXP_VC_INT: oxr_buf_printf(b, "%" PRId64, v->v.i); break;
	case OXP_VC_UINT: oxr_buf_printf(b, "%" PRIu64, v->v.u); break;
	case OXP_VC_BOOL: oxr_buf_printf(b, v->v.b ? "true" : "false"); break;
	case OXP_VC_COMPLEX:
		oxr_buf_printf(b, "[");
		put_num(b, v->v.c[0], digits);
		oxr_buf_printf(b, ",");
		put_num(b, v->v.c[1], digits);
		oxr_buf_printf(b, "]");
		break;
	case OXP_VC_STRING: put_str(b, v->v.s); break;
	default: oxr_buf_printf(b, "null"); break;
	}
}

/* The statistics object (without the histogram's counts when nbins is 0). */
static void put_stats(oxr_buf *b, const oxp_tensor_stats *st, int32_t dt, uint32_t nbins,
                      const uint64_t *bins, const char *extra)
{
	unsigned digits = oxp_dtype_digits(dt);
	oxr_buf_printf(b,
	               "{\"count\":%" PRIu64 ",\"finite\":%" PRIu64 ",\"nan\":%" PRIu64
	               ",\"pos_inf\":%" PRIu64 ",\"neg_inf\":%" PRIu64 ",\"zeros\":%" PRIu64
	               ",\"min\":",
	               st->count, st->finite, st->nan, st->pos_inf, st->neg_inf, st->zeros);
	oxp_value_class cls = oxp_dtype_class(dt);
	bool exact = st->is_int && st->finite > 0;
	if (exact && cls == OXP_VC_UINT)
		oxr_buf_printf(b, "%" PRIu64 ",\"max\":%" PRIu64, st->umin, st->umax);
	else if (exact)
		oxr_buf_printf(b, "%" PRId64 ",\"max\":%" PRId64, st->imin, st->imax);
	else {
		put_fig(b, st->min, cls == OXP_VC_FLOAT ? digits : 17);
		oxr_buf_printf(b, ",\"max\":");
		put_fig(b, st->max, cls == OXP_VC_FLOAT ? digits : 17);
	}
	oxr_buf_printf(b, ",\"mean\":");
	put_fig(b, st->mean, 17);
	oxr_buf_printf(b, ",\"std\":");
	put_fig(b, st->std, 17);
	if (nbins > 0) {
		oxr_buf_printf(b, ",\"histogram\":{\"bins\":%" PRIu32 ",\"lo\":", nbins);
		put_fig(b, st->lo, 17);
		oxr_buf_printf(b, ",\"hi\":");
		put_fig(b, st->hi, 17);
		oxr_buf_printf(b, ",\"counts\":[");
		for (uint32_t i = 0; i < nbins; i++)
			oxr_buf_printf(b, "%s%" PRIu64, i ? "," : "", bins[i]);
		oxr_buf_printf(b, "]}");
	}
	if (extra != NULL)
		oxr_buf_append(b, extra, strlen(extra));
	oxr_buf_printf(b, "}");
}

static bool open_external(const oxs_preview_in *in, tsrc *s, oxs_preview_out *o);

/* ---------------------------------------------------------------------------------------
 * Dequantization (docs/quant.md): the graph pairs the tensor with a scale and a zero point
 * (oxp_dequant_find); the scales and zero points are read whole (bounded), the data in
 * pages as for any preview, and (q - zero_point) * scale is computed in float32.
 */
#define DQ_MAX_SCALES ((uint64_t)1 << 26) /* scale elements read into memory at most */
#define DQ_RAW (2 * PAGE_ELEMS)           /* stored elements read at once */
#define DQ_CHUNK ((size_t)1 << 16)        /* dequantized values per statistics chunk */

typedef struct dqsrc {
	oxp_dequant dq;
	tsrc *s;           /* the quantized data */
	float *scale;      /* nscales */
	int32_t *zp;       /* nscales integer zero points (defaults filled in), or NULL */
	float *zpf;        /* nscales floating zero points, or NULL */
	int64_t *raw, *q;  /* DQ_RAW stored, PAGE_ELEMS logical */
	double *x;         /* PAGE_ELEMS, FLOAT8 / FLOAT4 data */
	float *y;          /* DQ_CHUNK dequantized values (statistics) */
	/* what pass one of the statistics saw of the integers */
	uint64_t sat_lo, sat_hi;
	uint8_t *seen;     /* one byte per level qmin..qmax (16 bits at most), or NULL */
	uint64_t nlevels;
} dqsrc;

static void dq_free(dqsrc *d)
{
	free(d->scale);
	free(d->zp);
	free(d->zpf);
	free(d->raw);
	free(d->q);
	free(d->x);
	free(d->y);
	free(d->seen);
}

/* n elements of constant tensor t (a scale or zero point) as double or int64, read whole
 * (external data beneath the model's folder as the data's). */
static bool read_const(const oxs_preview_in *in, const oxp_tensor *t, int how, uint64_t n,
                       void *out, oxs_preview_out *o)
{
	tsrc c;
	memset(&c, 0, sizeof(c));
	c.f.fd = -1;
	c.t = t;
	c.dt = t->data_type;
	c.bits = oxp_dtype_bits(c.dt);
	c.external = t->data_location == 1;
	c.count = n;
	bool ok = !c.external || open_external(in, &c, o);
	if (ok && c.external) {
		c.bufsize = CHUNK;
		c.buf = malloc(c.bufsize);
		if (c.buf == NULL) {
			fail(o, 503, "out_of_memory", NULL, "out of memory");
			ok = false;
		}
	}
	for (uint64_t i = 0; ok && i < n; i += PAGE_ELEMS) {
		size_t k = n - i < PAGE_ELEMS ? (size_t)(n - i) : PAGE_ELEMS;
		void *at = how == RD_F64 ? (void *)((double *)out + i) : (void *)((int64_t *)out + i);
		ok = src_read(&c, how, i, k, at, o);
	}
	oxp_external_close(&c.f);
	free(c.buf);
	return ok;
}

/* Pair the tensor with its scale and zero point and load them.  Answers 422 when nothing
 * pairs it or the pairing does not fit. */
static bool dq_open(const oxs_preview_in *in, tsrc *s, dqsrc *d, oxs_preview_out *o)
{
	const oxp_dag *dag = in->dag;
	memset(d, 0, sizeof(*d));
	d->s = s;
	oxp_error e;
	memset(&e, 0, sizeof(e));
	if (dag == NULL) {
		fail(o, 422, "not_quantized", NULL, "a lone tensor has no graph to pair it with a scale");
		return false;
	}
	if (oxp_dequant_find(dag, s->t, &d->dq, &e) != OXP_OK) {
		fail(o, 422, "bad_quantization", NULL, "cannot dequantize this tensor: %s", e.message);
		return false;
	}
	oxp_dequant *dq = &d->dq;
	if (dq->node == OXP_NONE) {
		fail(o, 422, "not_quantized", NULL,
		     "nothing in the graph pairs this tensor with a scale (DequantizeLinear, "
		     "QLinearConv, MatMulNBits, ...): its values are not quantized");
		return false;
	}
	if (dq->nscales > DQ_MAX_SCALES || dq->zp_stored > DQ_MAX_SCALES) {
		fail(o, 422, "too_big", NULL, "the scale has more than %" PRIu64 " elements",
		     DQ_MAX_SCALES);
		return false;
	}
	size_t ns = (size_t)(dq->nscales ? dq->nscales : 1);
	double *sd = malloc(ns * sizeof(double));
	d->scale = malloc(ns * sizeof(float));
	d->raw = malloc(DQ_RAW * sizeof(int64_t));
	d->q = malloc(PAGE_ELEMS * sizeof(int64_t));
	d->x = malloc(PAGE_ELEMS * sizeof(double));
	if (sd == NULL || d->scale == NULL || d->raw == NULL || d->q == NULL || d->x == NULL) {
		free(sd);
		fail(o, 503, "out_of_memory", NULL, "out of memory");
		return false;
	}
	bool ok = read_const(in, dq->scale, RD_F64, dq->nscales, sd, o);
	for (uint64_t i = 0; ok && i < dq->nscales; i++)
		d->scale[i] = (float)sd[i]; /* FLOAT, FLOAT16, BFLOAT16, E8M0: exact */
	if (ok && dq->zero_point != NULL && dq->zp_float) {
		d->zpf = malloc(ns * sizeof(float));
		ok = d->zpf != NULL && read_const(in, dq->zero_point, RD_F64, dq->nscales, sd, o);
		for (uint64_t i = 0; ok && i < dq->nscales; i++)
			d->zpf[i] = (float)sd[i];
	} else if (ok && !dq->qfloat) {
		d->zp = malloc(ns * sizeof(int32_t));
		int64_t *raw = NULL;
		if (d->zp != NULL && dq->zero_point != NULL) {
			uint64_t nz = dq->zp_stored ? dq->zp_stored : dq->nscales;
			raw = malloc((size_t)(nz ? nz : 1) * sizeof(int64_t));
			ok = raw != NULL && read_const(in, dq->zero_point, RD_I64, nz, raw, o);
		}
		ok = ok && d->zp != NULL;
		if (ok)
			oxp_dequant_zero_points(dq, raw, d->zp);
		free(raw);
	}
	free(sd);
	if (!ok && o->status == 0)
		fail(o, 503, "out_of_memory", NULL, "out of memory");
	return ok;
}

/* How many of the logical elements from i (at most n) can be read at once. */
static size_t dq_fit(const oxp_dequant *dq, uint64_t i, size_t n)
{
	while (n > 1) {
		uint64_t first, count;
		oxp_dequant_span(dq, i, n, &first, &count);
		if (count <= DQ_RAW)
			break;
		n /= 2;
	}
	return n;
}

/* Dequantize logical elements [i, i+n) into y (any n); with `count`, tally the integers'
 * saturation and levels. */
static bool dq_values(dqsrc *d, uint64_t i, size_t n, float *y, bool count, oxs_preview_out *o)
{
	const oxp_dequant *dq = &d->dq;
	while (n > 0) {
		size_t k = dq_fit(dq, i, n < PAGE_ELEMS ? n : PAGE_ELEMS);
		if (dq->qfloat) {
			if (!src_read(d->s, RD_F64, i, k, d->x, o))
				return false;
			oxp_dequant_apply_float(dq, i, k, d->x, d->scale, y);
		} else {
			uint64_t first, cnt;
			oxp_dequant_span(dq, i, k, &first, &cnt);
			if (!src_read(d->s, RD_I64, first, (size_t)cnt, d->raw, o))
				return false;
			oxp_dequant_unpack(dq, i, k, d->raw, first, d->q);
			oxp_dequant_apply(dq, i, k, d->q, d->scale, d->zp, d->zpf, y);
			for (size_t j = 0; count && j < k; j++) {
				int64_t q = d->q[j];
				d->sat_lo += q <= dq->qmin;
				d->sat_hi += q >= dq->qmax;
				if (d->seen != NULL && q >= dq->qmin && q <= dq->qmax && !d->seen[q - dq->qmin]) {
					d->seen[q - dq->qmin] = 1;
					d->nlevels++;
				}
			}
		}
		i += k;
		n -= k;
		y += k;
	}
	return true;
}

/* A piece of dequantized values for two_pass_stats (a float32 window over d->y); the
 * first pass also tallies the integers' saturation and levels. */
static bool dq_piece(void *ctx, uint64_t off, uint64_t n, int pass, oxp_tensor *w,
                     int64_t *dim, const uint8_t **bytes, size_t *nbytes, oxs_preview_out *o)
{
	dqsrc *d = ctx;
	if (!dq_values(d, off, (size_t)n, d->y, pass == 0, o))
		return false;
	*dim = (int64_t)n;
	memset(w, 0, sizeof(*w));
	w->data_type = OXP_DT_FLOAT;
	w->ndims = 1;
	w->dims = dim;
	w->data_location = 1;
	w->storage = OXP_STORE_EXTERNAL;
	*bytes = (const uint8_t *)d->y; /* float32 as the readers take it: little-endian */
	*nbytes = (size_t)n * sizeof(float);
	return true;
}

/* Statistics of the dequantized values, in float32 pieces. */
static bool dq_stats(dqsrc *d, uint32_t nbins, uint64_t *bins, oxp_tensor_stats *out,
                     oxs_preview_out *o)
{
	const oxp_dequant *dq = &d->dq;
	uint64_t range = (uint64_t)(dq->qmax - dq->qmin) + 1;
	d->y = malloc(DQ_CHUNK * sizeof(float));
	if (!dq->qfloat && range <= 65536)
		d->seen = calloc((size_t)range, 1);
	if (d->y == NULL || (!dq->qfloat && range <= 65536 && d->seen == NULL)) {
		fail(o, 503, "out_of_memory", NULL, "out of memory");
		return false;
	}
	if (!two_pass_stats(d, dq_piece, dq->count, DQ_CHUNK, nbins, bins, out, o))
		return false;
	out->is_int = false;
	return true;
}

/* The integers' figures as members of the statistics object. */
static void put_quant_figures(oxr_buf *b, const dqsrc *d)
{
	const oxp_dequant *dq = &d->dq;
	if (dq->qfloat) {
		oxr_buf_printf(b, ",\"quant\":null");
		return;
	}
	oxr_buf_printf(b,
	               ",\"quant\":{\"qmin\":%" PRId64 ",\"qmax\":%" PRId64
	               ",\"saturated_low\":%" PRIu64 ",\"saturated_high\":%" PRIu64 ",\"levels\":",
	               dq->qmin, dq->qmax, d->sat_lo, d->sat_hi);
	if (d->seen != NULL)
		oxr_buf_printf(b, "%" PRIu64, d->nlevels);
	else
		oxr_buf_printf(b, "null");
	oxr_buf_printf(b, ",\"levels_possible\":%" PRIu64 "}",
	               (uint64_t)(dq->qmax - dq->qmin) + 1);
}

/* ---------------------------------------------------------------------------------------
 * Statistics, cached in the store
 */
static void stats_name(const oxs_art *a, char out[112])
{
	char salted[OXS_TENSOR_KEY_MAX + 64], h[65];
	snprintf(salted, sizeof(salted), "%s|%" PRIu32 "|%s%s", PREVIEW_VERSION, a->u.tensor.opt.bins,
	         a->u.tensor.opt.dequantize ? "dq|" : "", a->u.tensor.name);
	oxs_sha256_hex(salted, strlen(salted), h, 32);
	snprintf(out, 112, "stats-%s.json", h);
}

/* The statistics JSON of the tensor into b: the caller's copy when it kept one, else
 * computed (and handed back in o->stats for the caller to keep). */
static bool stats_json(const oxs_preview_in *in, tsrc *s, dqsrc *d, oxr_buf *b,
                       oxs_preview_out *o)
{
	if (in->stats != NULL) {
		oxr_buf_append(b, in->stats, in->stats_len);
		return true;
	}
	uint32_t nbins = in->opt.bins;
	uint64_t *bins = nbins ? calloc(nbins, sizeof(*bins)) : NULL;
	if (nbins && bins == NULL) {
		fail(o, 503, "out_of_memory", NULL, "out of memory");
		return false;
	}
	oxp_tensor_stats ts;
	bool ok = d != NULL ? dq_stats(d, nbins, bins, &ts, o) : src_stats(s, nbins, bins, &ts, o);
	if (ok) {
		oxr_buf qb;
		oxr_buf_init(&qb, 1 << 12);
		if (d != NULL)
			put_quant_figures(&qb, d);
		put_stats(&o->stats, &ts, d != NULL ? OXP_DT_FLOAT : s->dt, nbins, bins,
		          d != NULL ? qb.data : NULL);
		oxr_buf_free(&qb);
		ok = !o->stats.failed;
		if (ok)
			oxr_buf_append(b, o->stats.data, o->stats.len);
		else
			fail(o, 503, "out_of_memory", NULL, "out of memory");
	}
	free(bins);
	return ok;
}

/* ---------------------------------------------------------------------------------------
 * .npy
 */
typedef struct npy_type {
	const char *descr;
	unsigned size;  /* bytes per element written */
	int how;        /* RD_BITS, RD_I64 or RD_U64 */
	bool widened;
} npy_type;

/* The .npy element type of a data type; FLOAT16, BFLOAT16, FLOAT8* and FLOAT4E2M1 are
 * widened to float32, 4- and 2-bit integers to 8 bits.  False for STRING (handled
 * apart) and unknown types. */
static bool npy_type_of(int32_t dt, npy_type *out)
{
	npy_type t = {NULL, 0, RD_BITS, false};
	switch (dt) {
	case OXP_DT_FLOAT: t.descr = "<f4", t.size = 4; break;
	case OXP_DT_DOUBLE: t.descr = "<f8", t.size = 8; break;
	case OXP_DT_FLOAT16:
	case OXP_DT_BFLOAT16:
	case OXP_DT_FLOAT8E4M3FN:
	case OXP_DT_FLOAT8E4M3FNUZ:
	case OXP_DT_FLOAT8E5M2:
	case OXP_DT_FLOAT8E5M2FNUZ:
	case OXP_DT_FLOAT8E8M0:
	case OXP_DT_FLOAT4E2M1: t.descr = "<f4", t.size = 4, t.widened = true; break;
	case OXP_DT_INT2:
	case OXP_DT_INT4: t.descr = "|i1", t.size = 1, t.how = RD_I64, t.widened = true; break;
	case OXP_DT_UINT2:
	case OXP_DT_UINT4: t.descr = "|u1", t.size = 1, t.how = RD_U64, t.widened = true; break;
	case OXP_DT_INT8: t.descr = "|i1", t.size = 1, t.how = RD_I64; break;
	case OXP_DT_INT16: t.descr = "<i2", t.size = 2, t.how = RD_I64; break;
	case OXP_DT_INT32: t.descr = "<i4", t.size = 4, t.how = RD_I64; break;
	case OXP_DT_INT64: t.descr = "<i8", t.size = 8, t.how = RD_I64; break;
	case OXP_DT_UINT8: t.descr = "|u1", t.size = 1, t.how = RD_U64; break;
	case OXP_DT_UINT16: t.descr = "<u2", t.size = 2, t.how = RD_U64; break;
	case OXP_DT_UINT32: t.descr = "<u4", t.size = 4, t.how = RD_U64; break;
	case OXP_DT_UINT64: t.descr = "<u8", t.size = 8, t.how = RD_U64; break;
	case OXP_DT_BOOL: t.descr = "|b1", t.size = 1, t.how = RD_U64; break;
	case OXP_DT_COMPLEX64: t.descr = "<c8", t.size = 8; break;
	case OXP_DT_COMPLEX128: t.descr = "<c16", t.size = 16; break;
	default: return false;
	}
	*out = t;
	return true;
}

static void put_le(uint8_t *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* The 32-bit float pattern of a narrow floating element. */
static uint32_t widen(int32_t dt, uint64_t bits)
{
	if (dt == OXP_DT_FLOAT16)
		return oxp_f16_to_f32_bits((uint16_t)bits);
	if (dt == OXP_DT_BFLOAT16)
		return oxp_bf16_to_f32_bits((uint16_t)bits);
	return oxp_f8_to_f32_bits(dt, (uint8_t)bits);
}

/* The .npy header (format 1.0): magic, length, the dict padded to 64 bytes. */
static void npy_header(oxr_buf *b, const char *descr, const int64_t *shape, size_t n)
{
	char dict[2048];
	size_t o = (size_t)snprintf(dict, sizeof(dict),
	                            "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
	for (size_t i = 0; i < n && o < sizeof(dict) - 64; i++)
		o += (size_t)snprintf(dict + o, sizeof(dict) - o, "%" PRId64 ",%s", shape[i],
		                      i + 1 < n ? " " : "");
	if (n > 1)
		o--; /* "(2, 3)" rather than "(2, 3,)"; one dim keeps its comma: "(5,)" */
	o += (size_t)snprintf(dict + o, sizeof(dict) - o, "), }");
	size_t total = 10 + o + 1;
	size_t pad = (64 - total % 64) % 64;
	uint8_t pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0};
	put_le(pre + 8, o + pad + 1, 2);
	oxr_buf_append(b, pre, 10);
	oxr_buf_append(b, dict, o);
	for (size_t i = 0; i < pad; i++)
		oxr_buf_append(b, " ", 1);
	oxr_buf_append(b, "\n", 1);
}

static bool write_npy(tsrc *s, uint64_t off, uint64_t n, oxs_preview_out *o)
{
	oxr_buf *b = &o->body;
	const oxp_tensor *t = s->t;
	bool whole = off == 0 && n == s->count;
	int64_t flat = (int64_t)n;
	const int64_t *shape = whole ? t->dims : &flat;
	size_t rank = whole ? t->ndims : 1;
	if (s->dt == OXP_DT_STRING) {
		/* fixed-width bytes, as long as the longest string of the slice */
		size_t width = 1;
		for (uint64_t i = 0; i < n; i++)
			width = t->string_data[off + i].len > width ? t->string_data[off + i].len : width;
		if (width > (64u << 20) / (n ? n : 1)) {
			fail(o, 422, "too_big", NULL, "the strings are too long for one .npy answer");
			return false;
		}
		snprintf(o->npy_descr, sizeof(o->npy_descr), "|S%zu", width);
		npy_header(b, o->npy_descr, shape, rank);
		static const char zeros[64];
		for (uint64_t i = 0; i < n && !b->failed; i++) {
			oxp_str v = t->string_data[off + i];
			oxr_buf_append(b, v.p, v.len);
			for (size_t k = v.len; k < width; k += sizeof(zeros))
				oxr_buf_append(b, zeros, width - k < sizeof(zeros) ? width - k : sizeof(zeros));
		}
		return true;
	}
	npy_type nt;
	if (!npy_type_of(s->dt, &nt)) {
		fail(o, 422, "bad_dtype", NULL, "no .npy form for %s", oxp_dtype_name(s->dt));
		return false;
	}
	snprintf(o->npy_descr, sizeof(o->npy_descr), "%s", nt.descr);
	if (nt.widened)
		snprintf(o->widened_from, sizeof(o->widened_from), "%s", oxp_dtype_name(s->dt));
	npy_header(b, nt.descr, shape, rank);
	bool cplx = oxp_dtype_class(s->dt) == OXP_VC_COMPLEX;
	uint64_t *vals = malloc(PAGE_ELEMS * 2 * sizeof(*vals));
	uint8_t *row = malloc(PAGE_ELEMS * 16);
	bool ok = vals != NULL && row != NULL;
	if (!ok)
		fail(o, 503, "out_of_memory", NULL, "out of memory");
	for (uint64_t i = 0; ok && i < n; i += PAGE_ELEMS) {
		size_t k = n - i < PAGE_ELEMS ? (size_t)(n - i) : PAGE_ELEMS;
		ok = src_read(s, nt.how, off + i, k, vals, o);
		size_t w = 0;
		for (size_t j = 0; ok && j < k * (cplx ? 2 : 1); j++) {
			uint64_t v = vals[j];
			if (nt.widened && nt.how == RD_BITS)
				v = widen(s->dt, v);
			unsigned size = cplx ? nt.size / 2 : nt.size;
			put_le(row + w, v, size);
			w += size;
		}
		if (ok && !oxr_buf_append(b, row, w))
			ok = false;
	}
	free(vals);
	free(row);
	if (b->failed)
		fail(o, 422, "too_big", NULL, "the answer is over %zu bytes; ask for fewer values",
		     JSON_BODY_MAX);
	return ok && !b->failed;
}

/* ---------------------------------------------------------------------------------------
 * The preview
 */

/* Open t's external region beneath the model's data folder; errors name the rule. */
static bool open_external(const oxs_preview_in *in, tsrc *s, oxs_preview_out *o)
{
	oxp_ext_rule rule = OXP_EXT_OK;
	oxp_error e;
	memset(&e, 0, sizeof(e));
	oxp_external ext;
	oxp_code rc = oxp_external_parse(s->t, &ext, &rule, &e);
	int dirfd = in->datadir;
	if (rc == OXP_OK && dirfd < 0) {
		oxst_status st = in->datadir_status;
		if (st == OXST_E_NOT_FOUND) {
			rc = OXP_E_IO;
			rule = OXP_EXT_NOT_FOUND;
			snprintf(e.message, sizeof(e.message),
			         "the model was stored without data files; upload them with it "
			         "(multipart, one part per location)");
		} else if (st != OXST_OK) {
			rc = OXP_E_IO;
			rule = OXP_EXT_IO;
			snprintf(e.message, sizeof(e.message), "cannot open the model's data folder");
		}
	}
	if (rc == OXP_OK)
		rc = oxp_external_open(&s->f, dirfd, s->t, 0, &rule, &e);
	if (rc == OXP_OK)
		return true;
	char extra[64];
	snprintf(extra, sizeof(extra), ",\"rule\":\"%s\"", oxp_ext_rule_name(rule));
	if (rule == OXP_EXT_NOT_FOUND)
		fail(o, 404, "external_data_missing", extra, "external data not found: %s",
		     e.message);
	else if (rule == OXP_EXT_IO)
		fail(o, 500, "external_io", extra, "%s", e.message);
	else {
		char code[48];
		snprintf(code, sizeof(code), "external_%s", oxp_ext_rule_name(rule));
		fail(o, 422, code, extra, "external data refused (%s): %s", oxp_ext_rule_name(rule),
		     e.message);
	}
	return false;
}

/* A tensor of the graph (a scale, a zero point) by name and ref. */
static void put_param(oxr_buf *b, const oxp_dag *dag, uint32_t vi, const oxp_tensor *t)
{
	if (t == NULL) {
		oxr_buf_printf(b, "null");
		return;
	}
	oxr_buf_printf(b, "{\"name\":");
	put_str(b, vi != OXP_NONE ? oxp_dag_get(dag)->values[vi].name : t->name);
	oxr_buf_printf(b, ",\"dtype\":\"%s\",\"dims\":", oxp_dtype_name(t->data_type));
	put_dims(b, t->dims, t->ndims);
	oxr_buf_printf(b, "}");
}

/* What pairs the tensor with its scale: "dequantized" (a dequantized answer) or
 * "quantized_by" (a raw one, telling that dequantize=1 applies). */
static void put_pairing(oxr_buf *b, const oxp_dag *dag, const oxp_dequant *dq, bool full)
{
	const oxp_dag_view *v = oxp_dag_get(dag);
	const oxp_dnode *dn = &v->nodes[dq->node];
	oxr_buf_printf(b, ",\"%s\":{\"node\":\"%s\",\"op_type\":", full ? "dequantized" : "quantized_by",
	               dn->id);
	put_str(b, dn->proto->op_type);
	oxr_buf_printf(b, ",\"input\":%" PRIu32 ",\"qtype\":\"%s\",\"granularity\":\"%s\"", dq->input,
	               oxp_dtype_name(dq->qtype), oxp_qgran_name(dq->gran));
	if (!full) {
		oxr_buf_printf(b, "}");
		return;
	}
	if (dq->gran != OXP_QG_TENSOR)
		oxr_buf_printf(b, ",\"axis\":%" PRId64, dq->axis);
	if (dq->gran == OXP_QG_BLOCK)
		oxr_buf_printf(b, ",\"block_size\":%" PRId64, dq->block);
	if (dq->layout != OXP_DQL_PLAIN)
		oxr_buf_printf(b, ",\"bits\":%u,\"packing\":\"%s\"", dq->bits,
		               dq->layout == OXP_DQL_NBITS ? "MatMulNBits" : "low bits first");
	oxr_buf_printf(b, ",\"from\":{\"dtype\":\"%s\",\"dims\":", oxp_dtype_name(dq->data->data_type));
	put_dims(b, dq->data->dims, dq->data->ndims);
	oxr_buf_printf(b, "},\"scale\":");
	put_param(b, dag, dq->scale_value, dq->scale);
	oxr_buf_printf(b, ",\"zero_point\":");
	put_param(b, dag, dq->zp_value, dq->zero_point);
	if (dq->zero_point == NULL && !dq->qfloat)
		oxr_buf_printf(b, ",\"zero_point_default\":%" PRId64, dq->zp_default);
	oxr_buf_printf(b, ",\"formula\":\"%s\"}",
	               dq->qfloat ? "float32(x) * scale"
	               : dq->zp_float ? "(float32(q) - zero_point) * scale"
	                               : "float32(q - zero_point) * scale");
}

/* The JSON answer: description, values page, statistics; with d, of the dequantized
 * values. */
static void preview_json(const oxs_preview_in *in, tsrc *s, dqsrc *d, uint64_t off, uint64_t n,
                         const oxp_tensor_size *sz, oxs_preview_out *o)
{
	const oxp_dag *dag = in->dag;
	const oxp_tensor *t = s->t;
	oxr_buf *b = &o->body;
	int32_t dt = d != NULL ? OXP_DT_FLOAT : s->dt;
	const int64_t *dims = d != NULL ? d->dq.dims : t->dims;
	size_t ndims = d != NULL ? d->dq.ndims : t->ndims;
	uint64_t count = d != NULL ? d->dq.count : s->count;
	oxr_buf_printf(b, "{\"model\":\"%s\",\"tensor\":", in->model);
	oxr_json_string(b, in->key, strlen(in->key));
	oxr_buf_printf(b, ",\"name\":");
	put_str(b, t->name);
	oxr_buf_printf(b, ",\"dtype\":\"%s\",\"dtype_short\":\"%s\",\"class\":\"%s\",\"dims\":",
	               oxp_dtype_name(dt), oxp_dtype_short(dt),
	               oxp_value_class_name(oxp_dtype_class(dt)));
	put_dims(b, dims, ndims);
	oxr_buf_printf(b, ",\"ggml_ne\":");
	put_ggml_ne(b, dims, ndims);
	oxr_buf_printf(b, ",\"count\":%" PRIu64 ",\"storage\":\"%s\",\"bytes\":%" PRIu64,
	               count, oxp_storage_name(t->storage), sz->stored_bytes);
	if (s->external) {
		oxp_external ext;
		if (oxp_external_parse(t, &ext, NULL, NULL) == OXP_OK) {
			oxr_buf_printf(b, ",\"external\":{\"location\":");
			put_str(b, ext.location);
			oxr_buf_printf(b, ",\"offset\":%" PRIu64 ",\"length\":%" PRIu64 "}", ext.offset,
			               ext.length);
		}
	}
	if (d != NULL) {
		put_pairing(b, dag, &d->dq, true);
	} else if (dag != NULL && t->data_type != OXP_DT_STRING) {
		oxp_dequant dq;
		if (oxp_dequant_find(dag, t, &dq, NULL) == OXP_OK && dq.node != OXP_NONE)
			put_pairing(b, dag, &dq, false);
	}
	if (n > 0 || in->opt.values_given) {
		oxr_buf_printf(b, ",\"values\":{\"offset\":%" PRIu64 ",\"count\":%" PRIu64 ",\"data\":[",
		               off, n);
		unsigned digits = oxp_dtype_digits(dt);
		oxp_scalar *v = d == NULL ? malloc(PAGE_ELEMS * sizeof(*v)) : NULL;
		float *y = d != NULL ? malloc(PAGE_ELEMS * sizeof(*y)) : NULL;
		bool ok = v != NULL || y != NULL;
		if (!ok)
			fail(o, 503, "out_of_memory", NULL, "out of memory");
		for (uint64_t i = 0; ok && i < n; i += PAGE_ELEMS) {
			size_t k = n - i < PAGE_ELEMS ? (size_t)(n - i) : PAGE_ELEMS;
			ok = d != NULL ? dq_values(d, off + i, k, y, false, o)
			               : src_read(s, RD_SCALAR, off + i, k, v, o);
			for (size_t j = 0; ok && j < k; j++) {
				if (i + j > 0)
					oxr_buf_printf(b, ",");
				if (d != NULL)
					put_num(b, (double)y[j], digits);
				else
					put_scalar(b, &v[j], digits);
			}
		}
		free(v);
		free(y);
		if (!ok)
			return;
		oxr_buf_printf(b, "]}");
	}
	if (in->opt.stats && dt != OXP_DT_STRING) {
		oxr_buf_printf(b, ",\"stats\":");
		if (!stats_json(in, s, d, b, o))
			return;
	} else if (in->opt.stats) {
		oxr_buf_printf(b, ",\"stats\":null");
	}
	oxr_buf_printf(b, "}\n");
	if (b->failed)
		fail(o, 422, "too_big", NULL, "the answer is over %zu bytes; ask for fewer values",
		     JSON_BODY_MAX);
}

/* The dequantized slice as a float32 .npy. */
static bool write_npy_dq(dqsrc *d, uint64_t off, uint64_t n, oxs_preview_out *o)
{
	oxr_buf *b = &o->body;
	bool whole = off == 0 && n == d->dq.count;
	int64_t flat = (int64_t)n;
	snprintf(o->npy_descr, sizeof(o->npy_descr), "<f4");
	npy_header(b, "<f4", whole ? d->dq.dims : &flat, whole ? d->dq.ndims : 1);
	float *y = malloc(PAGE_ELEMS * sizeof(*y));
	uint8_t *row = malloc(PAGE_ELEMS * 4);
	bool ok = y != NULL && row != NULL;
	if (!ok)
		fail(o, 503, "out_of_memory", NULL, "out of memory");
	for (uint64_t i = 0; ok && i < n; i += PAGE_ELEMS) {
		size_t k = n - i < PAGE_ELEMS ? (size_t)(n - i) : PAGE_ELEMS;
		ok = dq_values(d, off + i, k, y, false, o);
		for (size_t j = 0; ok && j < k; j++) {
			uint32_t bits;
			memcpy(&bits, &y[j], 4);
			put_le(row + 4 * j, bits, 4);
		}
		if (ok && !oxr_buf_append(b, row, 4 * k))
			ok = false;
	}
	free(y);
	free(row);
	if (b->failed)
		fail(o, 422, "too_big", NULL, "the answer is over %zu bytes; ask for fewer values",
		     JSON_BODY_MAX);
	return ok && !b->failed;
}

#ifdef OXS_FAULT_INJECTION
/* The fault-injection build (make's $(BUILD)/onnxviz-fault, tests/preview/isolation.py):
 * a preview of a tensor named __fault_fpe / __fault_segv / __fault_hang divides by zero,
 * writes through NULL or spins, as a bug in the computation would. */
static void inject_fault(const oxp_tensor *t)
{
	if (oxp_str_eq(t->name, "__fault_fpe")) {
		volatile int num = 7919, zero = 0;
		volatile int x = num / zero;
		(void)x;
	} else if (oxp_str_eq(t->name, "__fault_segv")) {
		volatile int *volatile p = NULL;
		*p = 1;
	} else if (oxp_str_eq(t->name, "__fault_hang")) {
		for (volatile uint64_t i = 0;; i++)
			;
	}
}
#endif

void oxs_preview_compute(const oxs_preview_in *in, oxs_preview_out *o)
{
	memset(o, 0, sizeof(*o));
	oxr_buf_init(&o->body, JSON_BODY_MAX);
	oxr_buf_init(&o->stats, 1 << 20);
	o->type = in->opt.npy ? "application/octet-stream" : "application/json";
	tsrc s;
	memset(&s, 0, sizeof(s));
	s.f.fd = -1;
	dqsrc dqs, *d = NULL;
	memset(&dqs, 0, sizeof(dqs));
	s.t = in->t;
	oxp_tensor_size sz;
	oxp_error e;
	memset(&e, 0, sizeof(e));
#ifdef OXS_FAULT_INJECTION
	inject_fault(s.t);
#endif
	s.dt = s.t->data_type;
	s.bits = oxp_dtype_bits(s.dt);
	s.external = s.t->data_location == 1;
	/* external entries first: each refusal answers with its own rule */
	if (s.external && !open_external(in, &s, o))
		goto done;
	if (oxp_tensor_size_get(s.t, &sz, &e) != OXP_OK) {
		fail_parser(o, &e);
		goto done;
	}
	s.count = sz.count;
	if (s.external) {
		s.bufsize = CHUNK;
		s.buf = malloc(s.bufsize);
		if (s.buf == NULL) {
			fail(o, 503, "out_of_memory", NULL, "out of memory");
			goto done;
		}
	}
	if (in->opt.dequantize) {
		if (!dq_open(in, &s, &dqs, o))
			goto done;
		d = &dqs;
	}
	uint64_t off = in->opt.offset, count = d != NULL ? d->dq.count : s.count;
	if (off > count) {
		fail(o, 400, "bad_query", NULL,
		     "offset %" PRIu64 " is past the end of the tensor (%" PRIu64 " elements)", off,
		     count);
		goto done;
	}
	uint64_t n = count - off;
	if (in->opt.values_given || !in->opt.npy)
		n = n < in->opt.values ? n : in->opt.values;
	else if (n > OXS_PREVIEW_NPY_MAX) {
		fail(o, 400, "bad_query", NULL,
		     "the tensor has %" PRIu64 " elements from that offset; a .npy answer holds at "
		     "most %u: give values=",
		     n, OXS_PREVIEW_NPY_MAX);
		goto done;
	}
	if (in->opt.npy && d != NULL)
		(void)write_npy_dq(d, off, n, o);
	else if (in->opt.npy)
		(void)write_npy(&s, off, n, o);
	else
		preview_json(in, &s, d, off, n, &sz, o);
done:
	dq_free(&dqs);
	oxp_external_close(&s.f);
	free(s.buf);
}


/* In a process of its own (isolate.c) */
static void preview_fn(void *ctx, oxs_preview_out *out)
{
	oxs_preview_compute(ctx, out);
}

void oxs_preview_run(oxs_server *srv, const oxs_art *a, oxs_preview_out *o)
{
	memset(o, 0, sizeof(*o));
	oxr_buf_init(&o->body, JSON_BODY_MAX);
	oxr_buf_init(&o->stats, 1 << 20);
	o->type = a->u.tensor.opt.npy ? "application/octet-stream" : "application/json";
	oxs_mentry *me = NULL;
	oxp_error perr;
	memset(&perr, 0, sizeof(perr));
	oxst_status st = oxs_models_get(srv->models, srv->store, a->id, a->src, &me, &perr);
	if (st != OXST_OK) {
		if (st == OXST_E_NOT_FOUND)
			fail(o, 404, "not_found", NULL, "no such model");
		else if (st == OXST_E_INVALID)
			fail_parser(o, &perr);
		else
			fail(o, 503, oxst_status_name(st), NULL, "cannot load the model");
		return;
	}
	oxs_preview_in in;
	memset(&in, 0, sizeof(in));
	in.model = a->id;
	in.key = a->u.tensor.name;
	in.dag = oxs_mentry_dag(me);
	in.opt = a->u.tensor.opt;
	in.datadir = a->dirfd;
	in.datadir_status = OXST_OK;
	in.t = oxs_mentry_tensor(me);
	if (in.t == NULL)
		in.t = oxp_dag_find_tensor(in.dag, a->u.tensor.name);
	int own = -1;
	char *kept = NULL;
	char name[112];
	stats_name(a, name);
	bool store_stats = a->src[0] == '\0' && a->u.tensor.opt.stats && !a->u.tensor.opt.npy;
	if (in.t == NULL) {
		fail(o, 404, "tensor_not_found", NULL,
		     "no initializer, Constant value or tensor attribute of that name or ref");
		goto done;
	}
	/* the data folder is opened here when the preview may read from it: for the tensor's
	 * own external bytes, or (dequantized) for its scale's and zero point's, which are
	 * found in the computation */
	if (in.datadir < 0 && (in.t->data_location == 1 || a->u.tensor.opt.dequantize)) {
		in.datadir_status = srv->store->ops->open_data(srv->store, a->id, &own);
		in.datadir = in.datadir_status == OXST_OK ? own : -1;
	} else if (in.datadir < 0) {
		in.datadir_status = OXST_E_NOT_FOUND;
	}
	/* statistics computed before: from the store */
	int fd = -1;
	uint64_t size = 0;
	if (store_stats && srv->store->ops->get_rendering(srv->store, a->id, name, &fd, &size) ==
	                       OXST_OK) {
		kept = size > 0 && size < (64u << 20) ? oxst_read_all(fd, size) : NULL;
		close(fd);
		if (kept != NULL) { /* else unreadable: compute it again */
			in.stats = kept;
			in.stats_len = (size_t)size;
		}
	}
	oxs_preview_out_free(o);
	if (srv->cfg.isolation)
		oxs_isolated(srv, OXS_ISO_PREVIEW, preview_fn, &in, in.datadir, JSON_BODY_MAX, o);
	else
		oxs_preview_compute(&in, o);
	if (o->status == 0 && store_stats && kept == NULL && o->stats.len > 0)
		(void)srv->store->ops->put_rendering(srv->store, a->id, name, o->stats.data,
		                                     o->stats.len);
done:
	free(kept);
	if (own >= 0)
		close(own);
	oxs_models_release(srv->models, me);
}

bool oxs_preview_summary(oxr_buf *out, const oxs_art *a, const oxp_model *m,
                         const oxp_tensor *t)
{
	oxr_buf_printf(out, "{\"id\":\"%s\",\"size\":%zu,\"kind\":\"tensor\",\"tensor\":{\"name\":",
	               a->id, oxp_model_size(m));
	put_str(out, t->name);
	oxr_buf_printf(out, ",\"dtype\":\"%s\",\"dims\":", oxp_dtype_name(t->data_type));
	put_dims(out, t->dims, t->ndims);
	uint64_t count = 0;
	(void)oxp_dims_count(t->dims, t->ndims, &count);
	oxr_buf_printf(out, ",\"count\":%" PRIu64 ",\"storage\":\"%s\"},", count,
	               oxp_storage_name(t->storage));
	oxs_links_json(out, a, true);
	oxr_buf_printf(out, "}\n");
	return !out->failed;
}
