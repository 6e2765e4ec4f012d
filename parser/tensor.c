/*
 * tensor.c — tensor values decoded on demand.
 *
 * A tensor's values are in one of four places: raw_data (or the caller's external bytes),
 * a typed field (float_data, int32_data, ... walked again in the tensor's own message
 * segments with the checked wire reader), string_data, or nowhere (an empty tensor).
 * Every entry point first builds a `src` that checks the storage against dims x dtype
 * (exactly: a mismatch is an error, never a short or long read), then reads elements one
 * "unit" at a time: a unit is what the storage holds per value — one element, one part of
 * a complex element, or one byte of packed sub-byte elements.
 *
 * Statistics of types of at most 16 bits count bit patterns in one pass (a histogram of
 * the 2^bits patterns) and derive every figure from that table; wider types are streamed
 * twice.  Nothing of the tensor's size is ever allocated.
 */
#include "parser/internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* TensorProto field numbers of the value fields. */
enum {
	FLD_FLOAT = 4,
	FLD_INT32 = 5,
	FLD_STRING = 6,
	FLD_INT64 = 7,
	FLD_DOUBLE = 10,
	FLD_UINT64 = 11
};
#define TYPED_FIELDS \
	((1u << FLD_FLOAT) | (1u << FLD_INT32) | (1u << FLD_INT64) | (1u << FLD_DOUBLE) | \
	 (1u << FLD_UINT64))

static const char *field_name(uint32_t f)
{
	switch (f) {
	case FLD_FLOAT:
		return "float_data";
	case FLD_INT32:
		return "int32_data";
	case FLD_STRING:
		return "string_data";
	case FLD_INT64:
		return "int64_data";
	case FLD_DOUBLE:
		return "double_data";
	case FLD_UINT64:
		return "uint64_data";
	default:
		return "?";
	}
}

/* The typed field onnx.proto assigns to a data type. */
static uint32_t typed_field_for(int32_t dt)
{
	switch (dt) {
	case OXP_DT_FLOAT:
	case OXP_DT_COMPLEX64:
		return FLD_FLOAT;
	case OXP_DT_DOUBLE:
	case OXP_DT_COMPLEX128:
		return FLD_DOUBLE;
	case OXP_DT_INT64:
		return FLD_INT64;
	case OXP_DT_UINT32:
	case OXP_DT_UINT64:
		return FLD_UINT64;
	case OXP_DT_STRING:
		return FLD_STRING;
	default:
		return FLD_INT32; /* every other type of 32 bits or less, BOOL and FLOAT16 included */
	}
}

/* ---------------------------------------------------------------------------------------
 * The source of a tensor's values
 */
typedef enum src_kind { SRC_EMPTY, SRC_RAW, SRC_TYPED, SRC_STRING } src_kind;

typedef struct src {
	const oxp_tensor *t;
	int32_t dt;
	oxp_value_class cls;
	unsigned ebits;  /* bits of one element (of one part, for complex types) */
	unsigned ubytes; /* bytes of one unit in raw data */
	unsigned per;    /* elements per unit: 8/bits for sub-byte types, else 1 */
	unsigned parts;  /* units per element: 2 for complex types, else 1 */
	uint64_t count;  /* elements */
	uint64_t units;  /* units the elements need */
	src_kind kind;
	const uint8_t *raw; /* SRC_RAW: raw_data or the external bytes */
	size_t nraw;
	const char *where;  /* "raw_data" or "external data", for messages */
	uint32_t field;     /* SRC_TYPED: the field number */
	unsigned wt;        /* SRC_TYPED: wire type of one of its values */
} src;

static void clear_error(oxp_error *err)
{
	if (err != NULL)
		memset(err, 0, sizeof(*err));
}

/* Where the tensor holds values inline, for messages; NULL when nowhere. */
static const char *inline_place(const oxp_tensor *t)
{
	if (t->has_raw_data)
		return "raw_data";
	if (t->nstring_data > 0)
		return "string_data";
	for (uint32_t f = 0; f < 32; f++)
		if ((t->typed_fields & TYPED_FIELDS) >> f & 1u)
			return field_name(f);
	return NULL;
}

static oxp_code check_raw(const src *s, oxp_error *err)
{
	uint64_t need;
	if (__builtin_mul_overflow(s->units, (uint64_t)s->ubytes, &need))
		return oxp__set_error(err, OXP_E_STORAGE, 0, s->where,
		                      "%s holds %zu bytes; dims x %s need more than 2^64-1",
		                      s->where, s->nraw, oxp_dtype_name(s->dt));
	if (need != s->nraw)
		return oxp__set_error(err, OXP_E_STORAGE, 0, s->where,
		                      "%s holds %zu bytes; dims x %s need %" PRIu64 " (%" PRIu64
		                      " elements)",
		                      s->where, s->nraw, oxp_dtype_name(s->dt), need, s->count);
	return OXP_OK;
}

static oxp_code wire_error(const src *s, oxp_code rc, oxp_error *err)
{
	return oxp__set_error(err, rc, 0, field_name(s->field),
	                      "malformed tensor message while reading %s (%s)",
	                      field_name(s->field), oxp_code_name(rc));
}

static size_t wt_width(unsigned wt)
{
	return wt == OXP_WT_I32 ? 4 : 8;
}

/* Values and payload bytes of the typed field, all occurrences, packed or not. */
static oxp_code typed_count(const src *s, uint64_t *nvals, uint64_t *nbytes, oxp_error *err)
{
	uint64_t n = 0, b = 0;
	for (size_t i = 0; i < s->t->nsegments; i++) {
		oxp_reader r = {s->t->segments[i].p, s->t->segments[i].len};
		while (r.left > 0) {
			uint32_t num;
			unsigned wt;
			oxp_code rc = oxp__rd_tag(&r, &num, &wt);
			const uint8_t *before = r.p;
			if (rc == OXP_OK && num != s->field) {
				rc = oxp__rd_skip(&r, wt);
			} else if (rc == OXP_OK && wt == OXP_WT_LEN) {
				const uint8_t *p;
				size_t len, k = 0;
				rc = oxp__rd_bytes(&r, &p, &len);
				if (rc == OXP_OK && s->wt == OXP_WT_VARINT) {
					rc = oxp__packed_varint_count(p, len, &k);
				} else if (rc == OXP_OK) {
					k = len / wt_width(s->wt);
					rc = len % wt_width(s->wt) ? OXP_E_PACKED : OXP_OK;
				}
				n += k;
				b += len;
			} else if (rc == OXP_OK && wt == s->wt) {
				rc = oxp__rd_skip(&r, wt);
				n++;
				b += (uint64_t)(r.p - before);
			} else if (rc == OXP_OK) {
				rc = OXP_E_WIRETYPE;
			}
			if (rc != OXP_OK)
				return wire_error(s, rc, err);
		}
	}
	*nvals = n;
	*nbytes = b;
	return OXP_OK;
}

/* Layout of a non-string type: element bits, unit size, packing. */
static void layout(src *s)
{
	unsigned bits = oxp_dtype_bits(s->dt);
	s->parts = s->cls == OXP_VC_COMPLEX ? 2 : 1;
	s->ebits = bits / s->parts;
	if (bits < 8) {
		s->per = 8 / bits;
		s->ubytes = 1;
		s->units = s->count / s->per + (s->count % s->per != 0);
	} else {
		s->per = 1;
		s->ubytes = s->ebits / 8;
		s->units = s->count * s->parts; /* count <= 2^63-1: no overflow */
	}
}

/* Build the source of t's values and check it against dims x dtype.  bytes: the external
 * region for external tensors, NULL otherwise. */
static oxp_code src_init(src *s, const oxp_tensor *t, const uint8_t *bytes, size_t nbytes,
                         oxp_error *err)
{
	memset(s, 0, sizeof(*s));
	s->t = t;
	s->dt = t->data_type;
	s->cls = oxp_dtype_class(s->dt);
	if (s->cls == OXP_VC_NONE)
		return oxp__set_error(err, OXP_E_DTYPE, 0, "data_type",
		                      "data type %" PRId32 " is not a known ONNX data type", s->dt);
	if (!oxp_dims_count(t->dims, t->ndims, &s->count))
		return oxp__set_error(err, OXP_E_DIMS, 0, "dims",
		                      "tensor dims are negative or multiply to more than 2^63-1");
	if (s->cls != OXP_VC_STRING)
		layout(s);

	const char *inl = inline_place(t);
	if (t->data_location == 1) {
		if (bytes == NULL)
			return oxp__set_error(err, OXP_E_EXTERNAL, 0, "external_data",
			                      "tensor data is external: pass the bytes of its region");
		if (s->cls == OXP_VC_STRING)
			return oxp__set_error(err, OXP_E_DTYPE, 0, "data_type",
			                      "STRING tensors cannot have external data");
		if (inl != NULL)
			return oxp__set_error(err, OXP_E_STORAGE, 0, inl,
			                      "external tensor also stores values in %s", inl);
		s->kind = SRC_RAW;
		s->raw = bytes;
		s->nraw = nbytes;
		s->where = "external data";
		return check_raw(s, err);
	}
	if (bytes != NULL)
		return oxp__set_error(err, OXP_E_EXTERNAL, 0, "",
		                      "bytes given for a tensor whose data is inline");

	if (s->cls == OXP_VC_STRING) {
		if (inl != NULL && strcmp(inl, "string_data") != 0)
			return oxp__set_error(err, OXP_E_STORAGE, 0, inl,
			                      "STRING tensor stores values in %s; only string_data may "
			                      "hold strings", inl);
		if (t->nstring_data != s->count)
			return oxp__set_error(err, OXP_E_STORAGE, 0, "string_data",
			                      "string_data holds %zu strings; dims need %" PRIu64,
			                      t->nstring_data, s->count);
		s->kind = SRC_STRING;
		return OXP_OK;
	}
	if (t->nstring_data > 0)
		return oxp__set_error(err, OXP_E_STORAGE, 0, "string_data",
		                      "%s tensor stores values in string_data (only STRING may)",
		                      oxp_dtype_name(s->dt));
	uint32_t allowed = typed_field_for(s->dt);
	uint32_t typed = t->typed_fields & TYPED_FIELDS;
	uint32_t other = typed & ~(1u << allowed);
	if (other != 0) {
		uint32_t f = (uint32_t)__builtin_ctz(other);
		return oxp__set_error(err, OXP_E_STORAGE, 0, field_name(f),
		                      "%s tensor stores values in %s; it may only use raw_data or %s",
		                      oxp_dtype_name(s->dt), field_name(f), field_name(allowed));
	}
	if (t->has_raw_data && typed != 0)
		return oxp__set_error(err, OXP_E_STORAGE, 0, field_name(allowed),
		                      "tensor stores values in both raw_data and %s",
		                      field_name(allowed));
	if (t->has_raw_data) {
		s->kind = SRC_RAW;
		s->raw = (const uint8_t *)t->raw_data.p;
		s->nraw = t->raw_data.len;
		s->where = "raw_data";
		return check_raw(s, err);
	}
	if (typed == 0) {
		s->kind = SRC_EMPTY;
		if (s->count != 0)
			return oxp__set_error(err, OXP_E_STORAGE, 0, "",
			                      "tensor has %" PRIu64 " elements but stores no values",
			                      s->count);
		return OXP_OK;
	}
	s->kind = SRC_TYPED;
	s->field = allowed;
	s->wt = allowed == FLD_FLOAT ? OXP_WT_I32
	        : allowed == FLD_DOUBLE ? OXP_WT_I64
	                                : OXP_WT_VARINT;
	uint64_t n, b;
	oxp_code rc = typed_count(s, &n, &b, err);
	if (rc != OXP_OK)
		return rc;
	if (n != s->units)
		return oxp__set_error(err, OXP_E_STORAGE, 0, field_name(s->field),
		                      "%s holds %" PRIu64 " values; dims x %s need %" PRIu64
		                      " (%" PRIu64 " elements)",
		                      field_name(s->field), n, oxp_dtype_name(s->dt), s->units,
		                      s->count);
	return OXP_OK;
}

static oxp_code check_range(const src *s, uint64_t off, size_t n, oxp_error *err)
{
	if (off > s->count || n > s->count - off)
		return oxp__set_error(err, OXP_E_RANGE, 0, "",
		                      "elements %" PRIu64 "..+%zu are outside the tensor's %" PRIu64
		                      " elements", off, n, s->count);
	return OXP_OK;
}

/* ---------------------------------------------------------------------------------------
 * Reading units
 */
typedef struct cursor {  /* SRC_TYPED: a forward walk over the field's values */
	size_t seg;          /* segment r reads */
	oxp_reader r;        /* the rest of segment seg */
	oxp_reader pk;       /* the rest of the packed payload being read */
	uint64_t pos;        /* index of the next value */
	uint64_t cache_u;    /* the unit last read (UINT64_MAX: none) and its value */
	uint64_t cache_v;
} cursor;

static void cur_init(cursor *c, const src *s)
{
	memset(c, 0, sizeof(*c));
	c->cache_u = UINT64_MAX;
	if (s->t->nsegments > 0) {
		c->r.p = s->t->segments[0].p;
		c->r.left = s->t->segments[0].len;
	}
}

static oxp_code rd_value(oxp_reader *r, unsigned wt, uint64_t *v)
{
	uint32_t v32;
	oxp_code rc;
	switch (wt) {
	case OXP_WT_VARINT:
		return oxp__rd_varint(r, v);
	case OXP_WT_I32:
		rc = oxp__rd_fixed32(r, &v32);
		*v = v32;
		return rc;
	default:
		return oxp__rd_fixed64(r, v);
	}
}

/* The next value of the field, in the order protobuf defines (occurrences in order,
 * packed payloads element by element). */
static oxp_code cur_next(const src *s, cursor *c, uint64_t *v, oxp_error *err)
{
	oxp_code rc;
	for (;;) {
		if (c->pk.left > 0) {
			rc = rd_value(&c->pk, s->wt, v);
			if (rc != OXP_OK)
				return wire_error(s, rc, err);
			c->pos++;
			return OXP_OK;
		}
		while (c->r.left == 0) {
			if (c->seg + 1 >= s->t->nsegments)
				return oxp__set_error(err, OXP_E_STORAGE, 0, field_name(s->field),
				                      "%s ends after %" PRIu64 " values",
				                      field_name(s->field), c->pos);
			c->seg++;
			c->r.p = s->t->segments[c->seg].p;
			c->r.left = s->t->segments[c->seg].len;
		}
		uint32_t num;
		unsigned wt;
		rc = oxp__rd_tag(&c->r, &num, &wt);
		if (rc == OXP_OK && num != s->field) {
			rc = oxp__rd_skip(&c->r, wt);
		} else if (rc == OXP_OK && wt == OXP_WT_LEN) {
			const uint8_t *p;
			size_t len;
			rc = oxp__rd_bytes(&c->r, &p, &len);
			c->pk.p = p;
			c->pk.left = rc == OXP_OK ? len : 0;
		} else if (rc == OXP_OK && wt == s->wt) {
			rc = rd_value(&c->r, wt, v);
			if (rc == OXP_OK) {
				c->pos++;
				return OXP_OK;
			}
		} else if (rc == OXP_OK) {
			rc = OXP_E_WIRETYPE;
		}
		if (rc != OXP_OK)
			return wire_error(s, rc, err);
	}
}

/* Move over n values without converting them (fast inside packed payloads). */
static oxp_code cur_skip(const src *s, cursor *c, uint64_t n, oxp_error *err)
{
	while (n > 0) {
		if (c->pk.left == 0) {
			uint64_t v;
			oxp_code rc = cur_next(s, c, &v, err);
			if (rc != OXP_OK)
				return rc;
			n--;
			continue;
		}
		uint64_t k = 0;
		size_t adv;
		if (s->wt == OXP_WT_VARINT) {
			for (adv = 0; adv < c->pk.left && k < n; adv++)
				k += (c->pk.p[adv] & 0x80) == 0;
		} else {
			uint64_t avail = c->pk.left / wt_width(s->wt);
			k = n < avail ? n : avail;
			adv = (size_t)k * wt_width(s->wt);
		}
		c->pk.p += adv;
		c->pk.left -= adv;
		c->pos += k;
		n -= k;
	}
	return OXP_OK;
}

/* A typed field's value as the bits raw_data would hold for it; checks the value fits. */
static oxp_code typed_unit(const src *s, uint64_t wire, uint64_t index, uint64_t *out,
                           oxp_error *err)
{
	if (s->field != FLD_INT32) {
		if (s->dt == OXP_DT_UINT32 && wire > UINT32_MAX)
			return oxp__set_error(err, OXP_E_STORAGE, 0, "uint64_data",
			                      "uint64_data[%" PRIu64 "] = %" PRIu64 " does not fit UINT32",
			                      index, wire);
		*out = wire;
		return OXP_OK;
	}
	int32_t v = (int32_t)(uint32_t)wire; /* protobuf int32: the low 32 bits of the varint */
	int32_t lo = 0, hi = 255;
	switch (s->dt) {
	case OXP_DT_INT32:
		*out = (uint32_t)v;
		return OXP_OK;
	case OXP_DT_BOOL:
		*out = v != 0;
		return OXP_OK;
	case OXP_DT_INT16:
		lo = INT16_MIN, hi = INT16_MAX;
		break;
	case OXP_DT_INT8:
		lo = INT8_MIN, hi = INT8_MAX;
		break;
	case OXP_DT_UINT16:
	case OXP_DT_FLOAT16:
	case OXP_DT_BFLOAT16:
		hi = UINT16_MAX;
		break;
	default: /* 8-bit types, and the bytes of packed sub-byte types */
		break;
	}
	if (v < lo || v > hi)
		return oxp__set_error(err, OXP_E_STORAGE, 0, "int32_data",
		                      "int32_data[%" PRIu64 "] = %" PRId32 " is outside %" PRId32
		                      "..%" PRId32 " for %s",
		                      index, v, lo, hi, oxp_dtype_name(s->dt));
	*out = (uint32_t)v & (s->ubytes == 2 ? 0xffffu : 0xffu);
	return OXP_OK;
}

/* n (1..8) little-endian bytes at p. */
static inline uint64_t load_le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(&v, p, n);
#else
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
#endif
	return v;
}

/* Unit u (u < s->units).  Typed fields are read forward; going back restarts the walk. */
static oxp_code unit_get(const src *s, cursor *c, uint64_t u, uint64_t *val, oxp_error *err)
{
	if (s->kind == SRC_RAW) {
		*val = load_le(s->raw + u * s->ubytes, s->ubytes);
		return OXP_OK;
	}
	if (u == c->cache_u) {
		*val = c->cache_v;
		return OXP_OK;
	}
	if (u < c->pos)
		cur_init(c, s);
	uint64_t wire;
	oxp_code rc = cur_skip(s, c, u - c->pos, err);
	if (rc == OXP_OK)
		rc = cur_next(s, c, &wire, err);
	if (rc == OXP_OK)
		rc = typed_unit(s, wire, u, val, err);
	if (rc != OXP_OK)
		return rc;
	c->cache_u = u;
	c->cache_v = *val;
	return OXP_OK;
}

/* The bits of part `part` of element e. */
static oxp_code elem_bits(const src *s, cursor *c, uint64_t e, unsigned part, uint64_t *out,
                          oxp_error *err)
{
	uint64_t v;
	oxp_code rc;
	if (s->per == 1) {
		rc = unit_get(s, c, e * s->parts + part, &v, err);
	} else {
		rc = unit_get(s, c, e / s->per, &v, err);
		v = (v >> ((e % s->per) * s->ebits)) & ((1u << s->ebits) - 1);
	}
	if (rc != OXP_OK)
		return rc;
	*out = s->dt == OXP_DT_BOOL ? v != 0 : v;
	return OXP_OK;
}

static int64_t sign_extend(uint64_t v, unsigned bits)
{
	uint64_t m = (uint64_t)1 << (bits - 1);
	v &= bits == 64 ? ~(uint64_t)0 : (m << 1) - 1;
	return (int64_t)((v ^ m) - m);
}

/* ---------------------------------------------------------------------------------------
 * The readers
 */
typedef enum out_kind { OUT_F64, OUT_I64, OUT_U64, OUT_BITS, OUT_SCALAR } out_kind;

static oxp_code read_one(const src *s, cursor *c, uint64_t e, out_kind k, void *out,
                         size_t i, oxp_error *err)
{
	uint64_t b, b1 = 0;
	oxp_code rc = elem_bits(s, c, e, 0, &b, err);
	if (rc == OXP_OK && s->parts == 2)
		rc = elem_bits(s, c, e, 1, &b1, err);
	if (rc != OXP_OK)
		return rc;
	switch (k) {
	case OUT_F64:
		((double *)out)[i] = oxp_bits_to_f64(s->dt, b);
		return OXP_OK;
	case OUT_BITS:
		((uint64_t *)out)[i * s->parts] = b;
		if (s->parts == 2)
			((uint64_t *)out)[i * 2 + 1] = b1;
		return OXP_OK;
	case OUT_I64:
		if (s->cls == OXP_VC_INT) {
			((int64_t *)out)[i] = sign_extend(b, s->ebits);
		} else if (b > INT64_MAX) {
			return oxp__set_error(err, OXP_E_RANGE, 0, "",
			                      "element %" PRIu64 " = %" PRIu64 " does not fit int64", e,
			                      b);
		} else {
			((int64_t *)out)[i] = (int64_t)b;
		}
		return OXP_OK;
	case OUT_U64:
		if (s->cls == OXP_VC_INT && sign_extend(b, s->ebits) < 0)
			return oxp__set_error(err, OXP_E_RANGE, 0, "",
			                      "element %" PRIu64 " = %" PRId64 " is negative", e,
			                      sign_extend(b, s->ebits));
		((uint64_t *)out)[i] = b;
		return OXP_OK;
	case OUT_SCALAR: {
		oxp_scalar *o = &((oxp_scalar *)out)[i];
		memset(o, 0, sizeof(*o));
		o->cls = s->cls;
		if (s->cls == OXP_VC_INT)
			o->v.i = sign_extend(b, s->ebits);
		else if (s->cls == OXP_VC_UINT)
			o->v.u = b;
		else if (s->cls == OXP_VC_BOOL)
			o->v.b = b != 0;
		else if (s->cls == OXP_VC_COMPLEX)
			o->v.c[0] = oxp_bits_to_f64(s->dt, b), o->v.c[1] = oxp_bits_to_f64(s->dt, b1);
		else
			o->v.f = oxp_bits_to_f64(s->dt, b);
		return OXP_OK;
	}
	}
	return OXP_OK;
}

static oxp_code read_values(const oxp_tensor *t, const uint8_t *bytes, size_t nbytes,
                            uint64_t off, size_t n, out_kind k, void *out, oxp_error *err)
{
	clear_error(err);
	src s;
	oxp_code rc = src_init(&s, t, bytes, nbytes, err);
	if (rc != OXP_OK)
		return rc;
	if (s.cls == OXP_VC_STRING && k == OUT_SCALAR) {
		rc = check_range(&s, off, n, err);
		for (size_t i = 0; rc == OXP_OK && i < n; i++) {
			((oxp_scalar *)out)[i].cls = OXP_VC_STRING;
			((oxp_scalar *)out)[i].v.s = t->string_data[off + i];
		}
		return rc;
	}
	bool ok = k == OUT_F64 || k == OUT_BITS || k == OUT_SCALAR
	              ? s.cls != OXP_VC_STRING
	              : s.cls == OXP_VC_INT || s.cls == OXP_VC_UINT || s.cls == OXP_VC_BOOL;
	if (!ok)
		return oxp__set_error(err, OXP_E_DTYPE, 0, "data_type",
		                      "%s values cannot be read as %s", oxp_dtype_name(s.dt),
		                      k == OUT_I64 ? "int64" : k == OUT_U64 ? "uint64" : "numbers");
	rc = check_range(&s, off, n, err);
	if (rc != OXP_OK)
		return rc;
	cursor c;
	cur_init(&c, &s);
	for (size_t i = 0; i < n; i++) {
		rc = read_one(&s, &c, off + i, k, out, i, err);
		if (rc != OXP_OK)
			return rc;
	}
	return OXP_OK;
}

oxp_code oxp_tensor_read_f64(const oxp_tensor *t, const uint8_t *bytes, size_t nbytes,
                             uint64_t offset, size_t count, double *out, oxp_error *err)
{
	return read_values(t, bytes, nbytes, offset, count, OUT_F64, out, err);
}

oxp_code oxp_tensor_read_i64(const oxp_tensor *t, const uint8_t *bytes, size_t nbytes,
                             uint64_t offset, size_t count, int64_t *out, oxp_error *err)
{
	return read_values(t, bytes, nbytes, offset, count, OUT_I64, out, err);
}

oxp_code oxp_tensor_read_u64(const oxp_tensor *t, const uint8_t *bytes, size_t nbytes,
                             uint64_t offset, size_t count, uint64_t *out, oxp_error *err)
{
	return read_values(t, bytes, nbytes, offset, count, OUT_U64, out, err);
}

oxp_code oxp_tensor_read_bits(const oxp_tensor *t, const uint8_t *bytes, size_t nbytes,
                              uint64_t offset, size_t count, uint64_t *out, oxp_error *err)
{
	return read_values(t, bytes, nbytes, offset, count, OUT_BITS, out, err);
}

oxp_code oxp_tensor_read(const oxp_tensor *t, const uint8_t *bytes, size_t nbytes,
                         uint64_t offset, size_t count, oxp_scalar *out, oxp_error *err)
{
	return read_values(t, bytes, nbytes, offset, count, OUT_SCALAR, out, err);
}

oxp_code oxp_tensor_read_str(const oxp_tensor *t, uint64_t offset, size_t count,
                             oxp_str *out, oxp_error *err)
{
	clear_error(err);
	src s;
	oxp_code rc = src_init(&s, t, NULL, 0, err);
	if (rc != OXP_OK)
		return rc;
	if (s.cls != OXP_VC_STRING)
		return oxp__set_error(err, OXP_E_DTYPE, 0, "data_type",
		                      "%s values are not strings", oxp_dtype_name(s.dt));
	rc = check_range(&s, offset, count, err);
	if (rc != OXP_OK)
		return rc;
	if (count > 0)
		memcpy(out, t->string_data + offset, count * sizeof(*out));
	return OXP_OK;
}

oxp_code oxp_tensor_size_get(const oxp_tensor *t, oxp_tensor_size *out, oxp_error *err)
{
	clear_error(err);
	src s;
	oxp_code rc;
	oxp_tensor_size z = {0, 0, 0};
	if (t->data_location == 1) {
		/* External: the entries give the length; check them, then the length as raw. */
		oxp_external ext;
		rc = oxp_external_parse(t, &ext, NULL, err);
		if (rc != OXP_OK)
			return rc;
		static const uint8_t none[1];
		rc = src_init(&s, t, none, (size_t)ext.length, err);
		if (rc != OXP_OK)
			return rc;
		z.stored_bytes = ext.length;
	} else {
		rc = src_init(&s, t, NULL, 0, err);
		if (rc != OXP_OK)
			return rc;
		if (s.kind == SRC_RAW) {
			z.stored_bytes = s.nraw;
		} else if (s.kind == SRC_STRING) {
			for (size_t i = 0; i < t->nstring_data; i++)
				z.stored_bytes += t->string_data[i].len;
		} else if (s.kind == SRC_TYPED) {
			uint64_t n;
			rc = typed_count(&s, &n, &z.stored_bytes, err);
			if (rc != OXP_OK)
				return rc;
		}
	}
	z.count = s.count;
	if (s.kind == SRC_STRING)
		z.stored_count = t->nstring_data;
	else if (s.kind != SRC_EMPTY)
		z.stored_count = s.units * s.per / s.parts;
	*out = z;
	return OXP_OK;
}

/* ---------------------------------------------------------------------------------------
 * Statistics
 */
typedef __int128 i128;
typedef unsigned __int128 u128;

typedef struct sval { /* one value as the statistics see it */
	double f;         /* as double (the magnitude for complex types) */
	int64_t i;        /* exact, INT and BOOL */
	uint64_t u;       /* exact, UINT and BOOL */
} sval;

static sval value_of(const src *s, uint64_t b0, uint64_t b1)
{
	sval v = {0, 0, 0};
	switch (s->cls) {
	case OXP_VC_INT:
		v.i = sign_extend(b0, s->ebits);
		v.f = (double)v.i;
		break;
	case OXP_VC_UINT:
	case OXP_VC_BOOL:
		v.u = s->cls == OXP_VC_BOOL ? b0 != 0 : b0;
		v.i = (int64_t)(v.u & 1); /* only meaningful for BOOL */
		v.f = (double)v.u;
		break;
	case OXP_VC_COMPLEX: {
		double re = oxp_bits_to_f64(s->dt, b0), im = oxp_bits_to_f64(s->dt, b1);
		if (isnan(re) || isnan(im))
			v.f = (double)NAN;
		else if (isinf(re) || isinf(im))
			v.f = (double)INFINITY;
		else
			v.f = hypot(re, im);
		break;
	}
	default:
		v.f = oxp_bits_to_f64(s->dt, b0);
	}
	return v;
}

/* Neumaier's compensated sum: *sum + *comp is the running total. */
static void sum_add(double *sum, double *comp, double x)
{
	double t = *sum + x;
	if (fabs(*sum) >= fabs(x))
		*comp += (*sum - t) + x;
	else
		*comp += (x - t) + *sum;
	*sum = t;
}

typedef struct acc {
	oxp_value_class cls;
	uint64_t finite, nan, pinf, ninf, zeros;
	double min, max, sum, comp;  /* floats (and complex magnitudes) */
	double ssum, scomp;          /* the same sum scaled by 2^-SUM_SHIFT: cannot overflow */
	bool overflow;               /* a plain sum overflowed: the scaled one holds the total */
	i128 isum;                   /* INT, BOOL */
	u128 usum;                   /* UINT */
	int64_t imin, imax;
	uint64_t umin, umax;
	double mean;
	double scale;                /* pass 2 works on v * scale, a power of two */
	double dev, devc;            /* pass 2: sum of squared scaled deviations */
} acc;

#define SUM_SHIFT 600 /* 2^1024 * 2^-600 * 2^63 elements stays far below DBL_MAX */
#define SUM_SCALE 0x1p-600 /* 2^-SUM_SHIFT: a multiply, exact for normal results */

static void acc_init(acc *a, oxp_value_class cls)
{
	memset(a, 0, sizeof(*a));
	a->cls = cls;
	a->min = (double)INFINITY;
	a->max = -(double)INFINITY;
	a->imin = INT64_MAX;
	a->imax = INT64_MIN;
	a->umin = UINT64_MAX;
}

/* Pass 1: w elements of value v. */
static void acc_add(acc *a, sval v, uint64_t w)
{
	if (isnan(v.f)) {
		a->nan += w;
		return;
	}
	if (isinf(v.f)) {
		*(v.f > 0 ? &a->pinf : &a->ninf) += w;
		return;
	}
	a->finite += w;
	a->zeros += v.f == 0 ? w : 0;
	a->min = v.f < a->min ? v.f : a->min;
	a->max = v.f > a->max ? v.f : a->max;
	if (a->cls == OXP_VC_INT || a->cls == OXP_VC_BOOL) {
		a->isum += (i128)v.i * (i128)w;
		a->imin = v.i < a->imin ? v.i : a->imin;
		a->imax = v.i > a->imax ? v.i : a->imax;
	}
	if (a->cls == OXP_VC_UINT || a->cls == OXP_VC_BOOL) {
		a->usum += (u128)v.u * (u128)w;
		a->umin = v.u < a->umin ? v.u : a->umin;
		a->umax = v.u > a->umax ? v.u : a->umax;
	}
	if (a->cls == OXP_VC_FLOAT || a->cls == OXP_VC_COMPLEX) {
		sum_add(&a->sum, &a->comp, v.f * (double)w);
		sum_add(&a->ssum, &a->scomp, v.f * SUM_SCALE * (double)w);
	}
}

/* The mean of pass 1; integer sums are exact, divided with one rounding of the remainder.
 * Floating sums that overflowed (doubles near DBL_MAX) use the scaled sum.  Also chooses
 * pass 2's scale: 2^-e with max|v| = f * 2^e, so that squared deviations neither overflow
 * (values near 1e308) nor underflow (subnormal values); e is clamped to +-1000, and a
 * power of two scales exactly. */
static void acc_mean(acc *a)
{
	a->scale = 1.0;
	if (a->finite > 0) {
		int e;
		(void)frexp(fmax(fabs(a->min), fabs(a->max)), &e);
		a->scale = ldexp(1.0, e < -1000 ? 1000 : e > 1000 ? -1000 : -e);
	}
	if (a->finite == 0) {
		a->mean = (double)NAN;
	} else if (a->cls == OXP_VC_INT || a->cls == OXP_VC_BOOL) {
		i128 q = a->isum / (i128)a->finite, r = a->isum % (i128)a->finite;
		a->mean = (double)q + (double)r / (double)a->finite;
	} else if (a->cls == OXP_VC_UINT) {
		u128 q = a->usum / a->finite, r = a->usum % a->finite;
		a->mean = (double)q + (double)r / (double)a->finite;
	} else if (!a->overflow && isfinite(a->sum + a->comp)) {
		a->mean = (a->sum + a->comp) / (double)a->finite;
	} else {
		a->mean = ldexp((a->ssum + a->scomp) / (double)a->finite, SUM_SHIFT);
	}
}

typedef struct hist {
	size_t n;
	uint64_t *bins;
	double lo, hi;
	bool equal;     /* lo == hi even after widening: every value in the middle bin */
	bool halves;    /* hi - lo overflows: compute with halves */
	uint64_t below, above;
} hist;

static void hist_init(hist *h, const acc *a, const oxp_stats_options *opt)
{
	memset(h, 0, sizeof(*h));
	if (opt != NULL && opt->nbins > 0) {
		h->n = opt->nbins;
		h->bins = opt->bins;
		memset(h->bins, 0, h->n * sizeof(*h->bins));
	}
	if (opt != NULL && opt->has_range) {
		h->lo = opt->lo;
		h->hi = opt->hi;
	} else if (a->finite == 0) {
		h->lo = h->hi = (double)NAN;
		return;
	} else {
		h->lo = a->min;
		h->hi = a->max;
		if (h->lo == h->hi)
			h->lo -= 0.5, h->hi += 0.5;
		h->equal = h->lo == h->hi;
	}
	h->halves = isinf(h->hi - h->lo);
}

static inline void hist_add(hist *h, double v, uint64_t w)
{
	if (v < h->lo) {
		h->below += w;
		return;
	}
	if (v > h->hi) {
		h->above += w;
		return;
	}
	if (h->n == 0)
		return;
	size_t b;
	if (h->equal) {
		b = h->n / 2;
	} else {
		double f = h->halves ? (v * 0.5 - h->lo * 0.5) / (h->hi * 0.5 - h->lo * 0.5)
		                     : (v - h->lo) / (h->hi - h->lo);
		f *= (double)h->n;
		b = f >= (double)h->n ? h->n - 1 : (size_t)f;
	}
	h->bins[b] += w;
}

/* Pass 2: squared deviation and histogram of w elements of value v. */
static void acc_add2(acc *a, hist *h, sval v, uint64_t w)
{
	if (isnan(v.f) || isinf(v.f))
		return;
	double d = v.f * a->scale - a->mean * a->scale;
	sum_add(&a->dev, &a->devc, d * d * (double)w);
	hist_add(h, v.f, w);
}

static void stats_finish(const src *s, const acc *a, const hist *h, oxp_tensor_stats *out)
{
	oxp_tensor_stats st;
	memset(&st, 0, sizeof(st));
	st.count = s->count;
	st.finite = a->finite;
	st.nan = a->nan;
	st.pos_inf = a->pinf;
	st.neg_inf = a->ninf;
	st.zeros = a->zeros;
	bool any = a->finite > 0;
	st.min = any ? a->min : (double)NAN;
	st.max = any ? a->max : (double)NAN;
	st.mean = a->mean;
	st.std = any ? sqrt((a->dev + a->devc) / (double)a->finite) / a->scale : (double)NAN;
	st.is_int = s->cls == OXP_VC_INT || s->cls == OXP_VC_UINT || s->cls == OXP_VC_BOOL;
	if (any && (s->cls == OXP_VC_INT || s->cls == OXP_VC_BOOL))
		st.imin = a->imin, st.imax = a->imax;
	if (any && (s->cls == OXP_VC_UINT || s->cls == OXP_VC_BOOL))
		st.umin = a->umin, st.umax = a->umax;
	st.lo = h->lo;
	st.hi = h->hi;
	st.below = h->below;
	st.above = h->above;
	*out = st;
}

/* --- pattern counting (types of at most 16 bits) --- */
#define COUNT_CHUNK ((uint64_t)1 << 30) /* elements per uint32 table round */

static uint64_t load64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

/* Count the n little-endian 16-bit patterns at p (n < 2^32), eight per iteration (two
 * 64-bit loads), lane k into t[k]: eight tables, or the same one eight times.  Two words
 * of eight equal patterns equal to the last such pair only extend a run: constant data
 * would otherwise chain every increment on one counter. */
static void count16_lanes(const uint8_t *p, size_t n, uint32_t *const t[8])
{
	size_t i = 0;
	uint64_t rw = 0, run = 0; /* rw: last word of four equal patterns; run: not yet added */
	for (; i + 8 <= n; i += 8) {
		uint64_t w = load64(p + 2 * i), x = load64(p + 2 * i + 8);
		if (w == rw && x == rw) {
			run += 8;
			continue;
		}
		t[0][w & 0xffff]++;
		t[1][(w >> 16) & 0xffff]++;
		t[2][(w >> 32) & 0xffff]++;
		t[3][w >> 48]++;
		t[4][x & 0xffff]++;
		t[5][(x >> 16) & 0xffff]++;
		t[6][(x >> 32) & 0xffff]++;
		t[7][x >> 48]++;
		if (w == x && w == (w & 0xffff) * 0x0001000100010001u) {
			t[0][rw & 0xffff] += (uint32_t)run;
			run = 0;
			rw = w;
		}
	}
	t[0][rw & 0xffff] += (uint32_t)run;
	for (; i < n; i++)
		t[0][p[2 * i] | p[2 * i + 1] << 8]++;
}

/* 16-bit patterns into tab (room for 8 x 65536 counters); returns how many of its tables
 * hold counts (1 or 8), each zeroed here before use.  When the data hold few distinct
 * patterns (at most 8192 in the first 64Ki), some counters are hot and increments of one
 * counter stall on each other: the eight lanes then go to eight tables (their footprint
 * stays small, as few counters are touched).  With many distinct patterns one table keeps
 * the cache footprint down.  The counts are the same either way. */
#define COUNT16_SAMPLE 65536
#define COUNT16_FEW 8192

static size_t count16(const uint8_t *p, size_t n, uint32_t *tab)
{
	uint32_t *const one[8] = {tab, tab, tab, tab, tab, tab, tab, tab};
	uint32_t *const eight[8] = {tab,
	                            tab + 1 * 65536,
	                            tab + 2 * 65536,
	                            tab + 3 * 65536,
	                            tab + 4 * 65536,
	                            tab + 5 * 65536,
	                            tab + 6 * 65536,
	                            tab + 7 * 65536};
	memset(tab, 0, 65536 * sizeof(*tab));
	size_t sample = n < COUNT16_SAMPLE ? n : COUNT16_SAMPLE;
	count16_lanes(p, sample, one);
	size_t distinct = 0;
	for (size_t j = 0; j < 65536; j++)
		distinct += tab[j] != 0;
	if (distinct > COUNT16_FEW) {
		count16_lanes(p + 2 * sample, n - sample, one);
		return 1;
	}
	memset(tab + 65536, 0, 7 * 65536 * sizeof(*tab));
	count16_lanes(p + 2 * sample, n - sample, eight);
	return 8;
}

/* The same for bytes, eight at a time, spread over four tables of 256. */
static void count8(const uint8_t *p, size_t n, uint32_t (*tab)[256])
{
	size_t i = 0;
	uint64_t rw = 0, run = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w = load64(p + i);
		if (w == rw) {
			run += 8;
			continue;
		}
		for (unsigned k = 0; k < 8; k++)
			tab[k & 3][(w >> (8 * k)) & 0xff]++;
		if (w == (w & 0xff) * 0x0101010101010101u) {
			tab[0][rw & 0xff] += (uint32_t)run;
			run = 0;
			rw = w;
		}
	}
	tab[0][rw & 0xff] += (uint32_t)run;
	for (; i < n; i++)
		tab[0][p[i]]++;
}

/* Raw units [0, n) of 8 or 16 bits counted into cnt (uint64, 2^bits entries). */
static oxp_code count_raw(const uint8_t *p, uint64_t n, unsigned bits, uint64_t *cnt,
                          oxp_error *err)
{
	size_t ntab = (size_t)1 << bits;
	size_t ncopies = bits == 16 ? 8 : 4; /* tables for the lanes: see count16, count8 */
	uint32_t *tab = malloc(ntab * ncopies * sizeof(*tab));
	if (tab == NULL)
		return oxp__set_error(err, OXP_E_NOMEM, 0, "", "out of memory for statistics");
	for (uint64_t done = 0; done < n;) {
		size_t k = (size_t)(n - done < COUNT_CHUNK ? n - done : COUNT_CHUNK);
		size_t used = ncopies;
		if (bits == 16) {
			used = count16(p + done * 2, k, tab);
		} else {
			memset(tab, 0, ntab * ncopies * sizeof(*tab));
			count8(p + done, k, (uint32_t(*)[256])tab);
		}
		for (size_t j = 0; j < ntab * used; j++)
			cnt[j % ntab] += tab[j];
		done += k;
	}
	free(tab);
	return OXP_OK;
}

/* How often each element bit pattern occurs, over the whole tensor. */
static oxp_code count_patterns(const src *s, uint64_t *cnt, oxp_error *err)
{
	cursor c;
	cur_init(&c, s);
	oxp_code rc = OXP_OK;
	uint64_t full = s->count / s->per; /* units whose every slot is an element */
	if (s->per > 1) {
		uint64_t bytes[256] = {0};
		if (s->kind == SRC_RAW)
			rc = count_raw(s->raw, full, 8, bytes, err);
		for (uint64_t u = 0; s->kind != SRC_RAW && rc == OXP_OK && u < full; u++) {
			uint64_t v;
			rc = unit_get(s, &c, u, &v, err);
			if (rc == OXP_OK)
				bytes[v & 0xff]++;
		}
		unsigned mask = (1u << s->ebits) - 1;
		for (unsigned b = 0; b < 256; b++)
			for (unsigned k = 0; bytes[b] != 0 && k < s->per; k++)
				cnt[(b >> (k * s->ebits)) & mask] += bytes[b];
		for (uint64_t e = full * s->per; rc == OXP_OK && e < s->count; e++) {
			uint64_t v;
			rc = elem_bits(s, &c, e, 0, &v, err);
			if (rc == OXP_OK)
				cnt[v]++;
		}
		return rc;
	}
	if (s->kind == SRC_RAW)
		return count_raw(s->raw, s->count, s->ebits, cnt, err);
	for (uint64_t e = 0; rc == OXP_OK && e < s->count; e++) {
		uint64_t v; /* typed_unit bounds it to the type's 2^bits patterns */
		rc = unit_get(s, &c, e, &v, err);
		if (rc == OXP_OK)
			cnt[v]++;
	}
	return rc;
}

/* Statistics from pattern counts cnt[1 << s->ebits] (s->count: their sum). */
static void stats_from_counts(const src *s, const uint64_t *cnt, const oxp_stats_options *opt,
                              oxp_tensor_stats *out)
{
	size_t npat = (size_t)1 << s->ebits;
	acc a;
	hist h;
	acc_init(&a, s->cls);
	for (size_t p = 0; p < npat; p++)
		if (cnt[p] != 0)
			acc_add(&a, value_of(s, p, 0), cnt[p]);
	acc_mean(&a);
	hist_init(&h, &a, opt);
	for (size_t p = 0; p < npat; p++)
		if (cnt[p] != 0)
			acc_add2(&a, &h, value_of(s, p, 0), cnt[p]);
	stats_finish(s, &a, &h, out);
}

static oxp_code stats_by_pattern(const src *s, const oxp_stats_options *opt,
                                 oxp_tensor_stats *out, oxp_error *err)
{
	size_t npat = (size_t)1 << s->ebits;
	uint64_t *cnt = calloc(npat, sizeof(*cnt));
	if (cnt == NULL)
		return oxp__set_error(err, OXP_E_NOMEM, 0, "", "out of memory for statistics");
	oxp_code rc = count_patterns(s, cnt, err);
	if (rc == OXP_OK)
		stats_from_counts(s, cnt, opt, out);
	free(cnt);
	return rc;
}

unsigned oxp_dtype_pattern_bits(int32_t dtype)
{
	oxp_value_class cls = oxp_dtype_class(dtype);
	unsigned bits = oxp_dtype_bits(dtype);
	if (cls == OXP_VC_NONE || cls == OXP_VC_STRING || cls == OXP_VC_COMPLEX || bits > 16)
		return 0;
	return bits;
}

static oxp_code check_stats_options(const oxp_stats_options *opt, oxp_error *err)
{
	if (opt != NULL && (opt->nbins > OXP_STATS_MAX_BINS || (opt->nbins > 0 && !opt->bins)))
		return oxp__set_error(err, OXP_E_RANGE, 0, "",
		                      "histogram of %zu bins: at most %d, and bins must be given",
		                      opt->nbins, OXP_STATS_MAX_BINS);
	if (opt != NULL && opt->has_range &&
	    (!isfinite(opt->lo) || !isfinite(opt->hi) || !(opt->lo < opt->hi)))
		return oxp__set_error(err, OXP_E_RANGE, 0, "",
		                      "histogram range must be finite with lo < hi");
	return OXP_OK;
}

oxp_code oxp_tensor_count_patterns(const oxp_tensor *t, const uint8_t *bytes, size_t nbytes,
                                   uint64_t *cnt, oxp_error *err)
{
	clear_error(err);
	if (oxp_dtype_pattern_bits(t->data_type) == 0)
		return oxp__set_error(err, OXP_E_DTYPE, 0, "data_type",
		                      "%s values are not counted by bit pattern",
		                      oxp_dtype_name(t->data_type));
	src s;
	oxp_code rc = src_init(&s, t, bytes, nbytes, err);
	if (rc != OXP_OK)
		return rc;
	return count_patterns(&s, cnt, err);
}

oxp_code oxp_stats_from_patterns(int32_t dtype, const uint64_t *cnt,
                                 const oxp_stats_options *opt, oxp_tensor_stats *out,
                                 oxp_error *err)
{
	clear_error(err);
	unsigned bits = oxp_dtype_pattern_bits(dtype);
	if (bits == 0)
		return oxp__set_error(err, OXP_E_DTYPE, 0, "data_type",
		                      "%s values are not counted by bit pattern",
		                      oxp_dtype_name(dtype));
	oxp_code rc = check_stats_options(opt, err);
	if (rc != OXP_OK)
		return rc;
	src s;
	memset(&s, 0, sizeof(s));
	s.dt = dtype;
	s.cls = oxp_dtype_class(dtype);
	for (size_t p = 0; p < ((size_t)1 << bits); p++) {
		if (cnt[p] > UINT64_MAX - s.count)
			return oxp__set_error(err, OXP_E_RANGE, 0, "", "pattern counts overflow");
		s.count += cnt[p];
	}
	layout(&s);
	stats_from_counts(&s, cnt, opt, out);
	return OXP_OK;
}

static oxp_code elem_value(const src *s, cursor *c, uint64_t e, sval *v, oxp_error *err)
{
	uint64_t b0, b1 = 0;
	oxp_code rc = elem_bits(s, c, e, 0, &b0, err);
	if (rc == OXP_OK && s->parts == 2)
		rc = elem_bits(s, c, e, 1, &b1, err);
	if (rc == OXP_OK)
		*v = value_of(s, b0, b1);
	return rc;
}

#define STREAM_CHUNK 1024

/* Values of elements [e0, e0 + n).  Raw data of one part per element (FLOAT, DOUBLE,
 * 32/64-bit integers) is decoded straight from the bytes; the rest element by element. */
static oxp_code chunk_values(const src *s, cursor *c, uint64_t e0, size_t n, sval *out,
                             oxp_error *err)
{
	if (s->kind == SRC_RAW && s->parts == 1) {
		const uint8_t *p = s->raw + e0 * s->ubytes;
		if (s->dt == OXP_DT_FLOAT) {
			for (size_t i = 0; i < n; i++) {
				uint32_t b = (uint32_t)load_le(p + 4 * i, 4);
				float f;
				memcpy(&f, &b, sizeof(f));
				out[i].f = (double)f;
			}
		} else if (s->dt == OXP_DT_DOUBLE) {
			for (size_t i = 0; i < n; i++) {
				uint64_t b = load_le(p + 8 * i, 8);
				memcpy(&out[i].f, &b, sizeof(double));
			}
		} else {
			for (size_t i = 0; i < n; i++)
				out[i] = value_of(s, load_le(p + (size_t)s->ubytes * i, s->ubytes), 0);
		}
		return OXP_OK;
	}
	for (size_t i = 0; i < n; i++) {
		oxp_code rc = elem_value(s, c, e0 + i, &out[i], err);
		if (rc != OXP_OK)
			return rc;
	}
	return OXP_OK;
}

/* Pass 1 over a chunk of values of weight 1.  Floating values keep plain local figures
 * in the loop and join the compensated totals once per chunk (a chunk whose plain sum
 * overflows joins the scaled sum value by value). */
static void acc_add_chunk(acc *a, const sval *v, size_t n)
{
	if (a->cls != OXP_VC_FLOAT && a->cls != OXP_VC_COMPLEX) {
		for (size_t i = 0; i < n; i++)
			acc_add(a, v[i], 1);
		return;
	}
	double mn = a->min, mx = a->max, sum = 0;
	uint64_t fin = 0, zeros = 0;
	for (size_t i = 0; i < n; i++) {
		double x = v[i].f;
		if (!isfinite(x)) {
			acc_add(a, v[i], 1); /* counts NaN and infinities only */
			continue;
		}
		fin++;
		zeros += x == 0;
		mn = x < mn ? x : mn;
		mx = x > mx ? x : mx;
		sum += x;
	}
	a->finite += fin;
	a->zeros += zeros;
	a->min = mn;
	a->max = mx;
	if (isfinite(sum)) {
		sum_add(&a->sum, &a->comp, sum);
		sum_add(&a->ssum, &a->scomp, sum * SUM_SCALE);
		return;
	}
	a->overflow = true;
	for (size_t i = 0; i < n; i++)
		if (isfinite(v[i].f))
			sum_add(&a->ssum, &a->scomp, v[i].f * SUM_SCALE);
}

/* Pass 2 over a chunk of values of weight 1. */
static void acc_add2_chunk(acc *a, hist *h, const sval *v, size_t n)
{
	double dev = 0, scale = a->scale, mean = a->mean * a->scale;
	for (size_t i = 0; i < n; i++) {
		double x = v[i].f;
		if (!isfinite(x))
			continue;
		double d = x * scale - mean;
		dev += d * d;
		hist_add(h, x, 1);
	}
	sum_add(&a->dev, &a->devc, dev);
}

/* One streaming pass over every element, in chunks: pass 1 (h == NULL) or pass 2. */
static oxp_code stream_pass(const src *s, acc *a, hist *h, oxp_error *err)
{
	cursor c;
	sval v[STREAM_CHUNK];
	cur_init(&c, s);
	for (uint64_t e = 0; e < s->count; e += STREAM_CHUNK) {
		size_t n = s->count - e < STREAM_CHUNK ? (size_t)(s->count - e) : STREAM_CHUNK;
		oxp_code rc = chunk_values(s, &c, e, n, v, err);
		if (rc != OXP_OK)
			return rc;
		if (h == NULL)
			acc_add_chunk(a, v, n);
		else
			acc_add2_chunk(a, h, v, n);
	}
	return OXP_OK;
}

static oxp_code stats_stream(const src *s, const oxp_stats_options *opt,
                             oxp_tensor_stats *out, oxp_error *err)
{
	acc a;
	hist h;
	acc_init(&a, s->cls);
	oxp_code rc = stream_pass(s, &a, NULL, err);
	if (rc != OXP_OK)
		return rc;
	acc_mean(&a);
	/* The bins are cleared here, once pass 1 has decoded every value: pass 2 reads the
	 * same values again and cannot fail on the data. */
	hist_init(&h, &a, opt);
	rc = stream_pass(s, &a, &h, err);
	if (rc != OXP_OK)
		return rc;
	stats_finish(s, &a, &h, out);
	return OXP_OK;
}

oxp_code oxp_tensor_stats_get(const oxp_tensor *t, const uint8_t *bytes, size_t nbytes,
                              const oxp_stats_options *opt, oxp_tensor_stats *out,
                              oxp_error *err)
{
	clear_error(err);
	oxp_code rc = check_stats_options(opt, err);
	if (rc != OXP_OK)
		return rc;
	src s;
	rc = src_init(&s, t, bytes, nbytes, err);
	if (rc != OXP_OK)
		return rc;
	if (s.cls == OXP_VC_STRING)
		return oxp__set_error(err, OXP_E_DTYPE, 0, "data_type",
		                      "no statistics for STRING values");
	if (s.parts == 1 && s.ebits <= 16)
		return stats_by_pattern(&s, opt, out, err);
	return stats_stream(&s, opt, out, err);
}
