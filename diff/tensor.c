/*
 * tensor.c — the contents of a tensor pair.
 *
 * Stored bytes first: two raw_data payloads of the same data type and length that are
 * byte for byte equal are the same tensor (the common case, and the fast one: memcmp runs
 * at memory speed).  Otherwise the elements are decoded in chunks and compared: with the
 * same data type, by their stored bit patterns (an element is changed when its bits
 * differ: -0 vs +0 and NaN payloads count); with different types (a f32 -> f16
 * conversion, say), by value (NaN equals NaN).  Figures: elements changed, the largest
 * |b - a| where both are finite, the largest |b - a| / |a| where also a != 0, and how
 * many changed elements involve NaN or ±Inf.  A pair with different element counts has
 * no figures.  Complex types compare both parts' bits; the differences are of the real
 * part.  Strings compare byte for byte.  External data is read from the folders the
 * caller gave (oxd_options), else compared by location, offset and length only.
 */
#include "diff/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK 4096

typedef struct side {
	const oxp_tensor *t;
	const uint8_t *bytes; /* external data, mapped; NULL for inline values */
	size_t nbytes;
	oxp_external_file f;
	oxp_external_region r;
	bool mapped;
} side;

static bool dims_equal(const oxp_tensor *a, const oxp_tensor *b)
{
	return a->ndims == b->ndims &&
	       (a->ndims == 0 || memcmp(a->dims, b->dims, a->ndims * sizeof(int64_t)) == 0);
}

static bool entries_equal(const oxp_tensor *a, const oxp_tensor *b)
{
	if (a->nexternal_data != b->nexternal_data)
		return false;
	for (size_t i = 0; i < a->nexternal_data; i++)
		if (!oxd__same_str(a->external_data[i].key, b->external_data[i].key) ||
		    !oxd__same_str(a->external_data[i].value, b->external_data[i].value))
			return false;
	return true;
}

/* The message bytes of both tensors are equal (the last resort for values that cannot be
 * decoded), and their raw_data: a low-RSS open decodes a copy of the structure in which
 * large payloads are cut, their views pointing into the file. */
static bool segments_equal(const oxp_tensor *a, const oxp_tensor *b)
{
	if (a->raw_data.len != b->raw_data.len ||
	    (a->raw_data.len && memcmp(a->raw_data.p, b->raw_data.p, a->raw_data.len) != 0))
		return false;
	if (a->nsegments != b->nsegments)
		return false;
	for (size_t i = 0; i < a->nsegments; i++)
		if (a->segments[i].len != b->segments[i].len ||
		    (a->segments[i].len &&
		     memcmp(a->segments[i].p, b->segments[i].p, a->segments[i].len) != 0))
			return false;
	return true;
}

static const char *open_side(oxd_diff *d, side *s, int dirfd)
{
	s->f.fd = -1;
	if (s->t->storage != OXP_STORE_EXTERNAL)
		return NULL;
	if (dirfd < 0)
		return "external data: values not compared (no folder given)";
	oxp_ext_rule rule;
	oxp_error e;
	if (oxp_external_open(&s->f, dirfd, s->t, 0, &rule, &e) != OXP_OK ||
	    oxp_external_map(&s->r, &s->f, &e) != OXP_OK) {
		if (d->ioerr.code == OXD_OK) {
			d->ioerr.code = OXD_E_IO;
			char msg[700];
			snprintf(d->ioerr.message, sizeof(d->ioerr.message), "%s",
			         oxp_error_format(&e, msg, sizeof(msg)));
		}
		return "external data: values not compared (cannot be read)";
	}
	s->mapped = true;
	s->bytes = s->r.bytes;
	s->nbytes = s->r.nbytes;
	return NULL;
}

static void close_side(side *s)
{
	if (s->mapped)
		oxp_external_unmap(&s->r);
	if (s->f.fd >= 0)
		oxp_external_close(&s->f);
}

static bool bits_class_complex(int32_t dt)
{
	return dt == OXP_DT_COMPLEX64 || dt == OXP_DT_COMPLEX128;
}

/* Element by element; false when out of memory.  *readable false when either side could
 * not be decoded. */
static bool compare_elements(oxd_tensor *t, side *a, side *b, uint64_t count, bool *readable)
{
	bool same_type = a->t->data_type == b->t->data_type;
	bool strings = a->t->data_type == OXP_DT_STRING || b->t->data_type == OXP_DT_STRING;
	*readable = true;
	if (strings) {
		if (!same_type) {
			*readable = false;
			return true;
		}
		oxp_str *xs = malloc(CHUNK * sizeof(oxp_str)), *ys = malloc(CHUNK * sizeof(oxp_str));
		bool ok = xs != NULL && ys != NULL;
		for (uint64_t off = 0; ok && *readable && off < count; off += CHUNK) {
			size_t n = count - off < CHUNK ? (size_t)(count - off) : CHUNK;
			if (oxp_tensor_read_str(a->t, off, n, xs, NULL) != OXP_OK ||
			    oxp_tensor_read_str(b->t, off, n, ys, NULL) != OXP_OK) {
				*readable = false;
				break;
			}
			for (size_t i = 0; i < n; i++)
				t->changed += !oxd__same_str(xs[i], ys[i]);
		}
		free(xs);
		free(ys);
		t->elements = count;
		return ok;
	}
	unsigned parts = same_type && bits_class_complex(a->t->data_type) ? 2 : 1;
	double *xf = malloc(CHUNK * sizeof(double)), *yf = malloc(CHUNK * sizeof(double));
	uint64_t *xb = same_type ? malloc(CHUNK * parts * sizeof(uint64_t)) : NULL;
	uint64_t *yb = same_type ? malloc(CHUNK * parts * sizeof(uint64_t)) : NULL;
	bool ok = xf && yf && (!same_type || (xb && yb));
	for (uint64_t off = 0; ok && off < count; off += CHUNK) {
		size_t n = count - off < CHUNK ? (size_t)(count - off) : CHUNK;
		if (oxp_tensor_read_f64(a->t, a->bytes, a->nbytes, off, n, xf, NULL) != OXP_OK ||
		    oxp_tensor_read_f64(b->t, b->bytes, b->nbytes, off, n, yf, NULL) != OXP_OK ||
		    (same_type &&
		     (oxp_tensor_read_bits(a->t, a->bytes, a->nbytes, off, n, xb, NULL) != OXP_OK ||
		      oxp_tensor_read_bits(b->t, b->bytes, b->nbytes, off, n, yb, NULL) != OXP_OK))) {
			*readable = false;
			break;
		}
		for (size_t i = 0; i < n; i++) {
			double x = xf[i], y = yf[i];
			bool differs;
			if (same_type) {
				differs = xb[i * parts] != yb[i * parts] ||
				          (parts == 2 && xb[i * 2 + 1] != yb[i * 2 + 1]);
			} else {
				differs = !(x == y || (isnan(x) && isnan(y)));
			}
			if (!differs)
				continue;
			t->changed++;
			if (!isfinite(x) || !isfinite(y)) {
				t->nonfinite++;
				continue;
			}
			double ad = fabs(y - x);
			if (ad > t->max_abs)
				t->max_abs = ad;
			if (x != 0 && ad / fabs(x) > t->max_rel)
				t->max_rel = ad / fabs(x);
		}
	}
	free(xf);
	free(yf);
	free(xb);
	free(yb);
	t->elements = count;
	return ok;
}

bool oxd__compare_tensor(oxd_diff *d, oxd_tensor *t)
{
	const oxp_tensor *ta = t->a, *tb = t->b;
	t->dtype_changed = ta->data_type != tb->data_type;
	t->shape_changed = !dims_equal(ta, tb);
	t->compared = false;
	t->not_compared = NULL;
	t->elements = t->changed = t->nonfinite = 0;
	t->max_abs = t->max_rel = 0;
	uint64_t ca = 0, cb = 0;
	bool counts_ok = oxp_dims_count(ta->dims, ta->ndims, &ca) &&
	                 oxp_dims_count(tb->dims, tb->ndims, &cb);
	/* the fast and common case: the same stored bytes */
	if (!t->dtype_changed && ta->storage == OXP_STORE_RAW && tb->storage == OXP_STORE_RAW &&
	    ta->raw_data.len == tb->raw_data.len &&
	    (ta->raw_data.len == 0 || memcmp(ta->raw_data.p, tb->raw_data.p, ta->raw_data.len) == 0)) {
		t->compared = counts_ok && ca == cb;
		t->elements = t->compared ? ca : 0;
		t->status = t->shape_changed ? OXD_CHANGED : OXD_SAME;
		return true;
	}
	if (!counts_ok || ca != cb) {
		t->not_compared = "element counts differ";
		t->status = OXD_CHANGED;
		return true;
	}
	side a = {.t = ta}, b = {.t = tb};
	const char *why = open_side(d, &a, d->opt.dirfd_a);
	if (why == NULL)
		why = open_side(d, &b, d->opt.dirfd_b);
	bool ok = true;
	if (why != NULL) {
		/* by reference only: where the values lie */
		bool same_ref = ta->storage == tb->storage && entries_equal(ta, tb) &&
		                segments_equal(ta, tb);
		t->not_compared = why;
		t->status = same_ref && !t->shape_changed && !t->dtype_changed ? OXD_SAME : OXD_CHANGED;
	} else {
		bool readable = true;
		ok = compare_elements(t, &a, &b, ca, &readable);
		if (!readable) {
			t->elements = t->changed = t->nonfinite = 0;
			t->max_abs = t->max_rel = 0;
			t->not_compared = "values unreadable (stored values disagree with dims and dtype)";
			t->status = segments_equal(ta, tb) ? OXD_SAME : OXD_CHANGED;
		} else {
			t->compared = true;
			t->status = t->changed || t->shape_changed || t->dtype_changed ? OXD_CHANGED : OXD_SAME;
		}
	}
	close_side(&a);
	close_side(&b);
	return ok;
}
