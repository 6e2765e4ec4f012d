/*
 * util.c — the small pieces diff/ shares: growable arrays, a string map, a hash, display
 * text, names of enums, and one-line texts of tensors and attributes.
 */
#include "diff/internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *oxd__push(vec *v, size_t size)
{
	if (v->n == v->cap) {
		if (v->cap >= (1u << 30))
			return NULL;
		uint32_t cap = v->cap ? v->cap * 2 : 64;
		void *p = realloc(v->p, (size_t)cap * size);
		if (p == NULL)
			return NULL;
		v->p = p;
		v->cap = cap;
	}
	void *item = (char *)v->p + (size_t)v->n * size;
	memset(item, 0, size);
	v->n++;
	return item;
}

/* ---------------------------------------------------------------------------------------
 * Hash (64-bit, 8 bytes a step; for tables, never for equality decisions on its own)
 */
uint64_t oxd__hash(const void *p, size_t n, uint64_t seed)
{
	const unsigned char *s = p;
	uint64_t h = seed ^ (0x9e3779b97f4a7c15ull * (n + 1));
	while (n >= 8) {
		uint64_t w;
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
		s += 8;
		n -= 8;
	}
	uint64_t w = 0;
	if (n > 0)
		memcpy(&w, s, n);
	h = (h ^ w ^ n) * 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 29);
}

/* ---------------------------------------------------------------------------------------
 * String map
 */
bool oxd__smap_init(smap *m, uint32_t max)
{
	memset(m, 0, sizeof(*m));
	uint32_t ns = 16;
	while (ns < max * 2u && ns < (1u << 30))
		ns <<= 1;
	m->cap = max ? max : 1;
	m->e = malloc((size_t)m->cap * sizeof(smap_entry));
	m->slot = malloc((size_t)ns * sizeof(uint32_t));
	if (m->e == NULL || m->slot == NULL) {
		oxd__smap_free(m);
		return false;
	}
	memset(m->slot, 0xff, (size_t)ns * sizeof(uint32_t));
	m->mask = ns - 1;
	return true;
}

void oxd__smap_free(smap *m)
{
	free(m->e);
	free(m->slot);
	memset(m, 0, sizeof(*m));
}

bool oxd__same_str(oxp_str a, oxp_str b)
{
	return a.len == b.len && (a.len == 0 || memcmp(a.p, b.p, a.len) == 0);
}

static uint32_t *slot_of(const smap *m, oxp_str key, uint64_t h)
{
	uint32_t i = (uint32_t)h & m->mask;
	while (m->slot[i] != OXP_NONE) {
		const smap_entry *e = &m->e[m->slot[i]];
		if (e->hash == h && oxd__same_str(e->key, key))
			break;
		i = (i + 1) & m->mask;
	}
	return &m->slot[i];
}

smap_entry *oxd__smap_find(const smap *m, oxp_str key)
{
	if (m->slot == NULL)
		return NULL;
	uint32_t *s = slot_of(m, key, oxd__hash(key.p, key.len, 0));
	return *s == OXP_NONE ? NULL : &m->e[*s];
}

smap_entry *oxd__smap_put(smap *m, oxp_str key, bool *fresh)
{
	uint64_t h = oxd__hash(key.p, key.len, 0);
	uint32_t *s = slot_of(m, key, h);
	*fresh = false;
	if (*s != OXP_NONE)
		return &m->e[*s];
	if (m->n == m->cap)
		return NULL;
	*s = m->n;
	smap_entry *e = &m->e[m->n++];
	e->key = key;
	e->hash = h;
	e->val = OXP_NONE;
	*fresh = true;
	return e;
}

/* ---------------------------------------------------------------------------------------
 * Display text
 */
/* Length of the UTF-8 sequence at s[i] (code point in *cp), 0 when it is not valid. */
static size_t utf8_len(const unsigned char *s, size_t n, size_t i, uint32_t *cp)
{
	unsigned char c = s[i];
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
	if (len == 0 || n - i < len)
		return 0;
	uint32_t v = c & (0x7fu >> len);
	for (size_t k = 1; k < len; k++) {
		if ((s[i + k] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (s[i + k] & 0x3fu);
	}
	bool overlong = (len == 3 && v < 0x800) || (len == 4 && v < 0x10000);
	if (overlong || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return len;
}

/* s as display text into out, which has room for min(s.len, 4 * max_chars) * 3 + 4
 * bytes (an invalid byte becomes 3, the ellipsis 3, the NUL 1); returns the length. */
static size_t text_into(char *out, oxp_str s, size_t max_chars)
{
	size_t limit = s.len < max_chars * 4 ? s.len : max_chars * 4;
	const unsigned char *u = (const unsigned char *)s.p;
	size_t o = 0, chars = 0;
	for (size_t i = 0; i < s.len;) {
		if (chars == max_chars || i >= limit) {
			memcpy(out + o, "\xe2\x80\xa6", 3);
			o += 3;
			break;
		}
		uint32_t cp = 0;
		size_t k = utf8_len(u, s.len, i, &cp);
		if (k == 0 || cp == 0xfffe || cp == 0xffff) {
			memcpy(out + o, "\xef\xbf\xbd", 3); /* U+FFFD */
			o += 3;
			i += k ? k : 1;
		} else if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0) || cp == 0x2028 ||
		           cp == 0x2029) {
			out[o++] = ' ';
			i += k;
		} else {
			memcpy(out + o, u + i, k);
			o += k;
			i += k;
		}
		chars++;
	}
	out[o] = '\0';
	return o;
}

const char *oxd__text(oxp_arena *a, oxp_str s, size_t max_chars)
{
	size_t limit = s.len < max_chars * 4 ? s.len : max_chars * 4;
	char *out = oxp_arena_alloc(a, limit * 3 + 4);
	if (out == NULL)
		return "";
	text_into(out, s, max_chars);
	return out;
}

const char *oxd_text(oxd_diff *d, oxp_str s, size_t max_chars)
{
	return oxd__text(d->arena, s, max_chars);
}

/* ---------------------------------------------------------------------------------------
 * Names
 */
const char *oxd_code_name(oxd_code code)
{
	switch (code) {
	case OXD_OK: return "ok";
	case OXD_E_NOMEM: return "out_of_memory";
	case OXD_E_IO: return "io";
	case OXD_E_BUDGET: return "over_budget";
	default: return "unknown";
	}
}

const char *oxd_status_name(oxd_status s)
{
	static const char *const n[] = {"unchanged", "changed", "added", "removed"};
	return (unsigned)s < 4 ? n[s] : "unchanged";
}

const char *oxd_how_name(oxd_how h)
{
	static const char *const n[] = {"", "name", "output", "structure", "content"};
	return (unsigned)h < 5 ? n[h] : "";
}

const char *oxd_change_name(oxd_change_kind k)
{
	static const char *const n[OXD_CH__COUNT] = {"op_type", "domain",  "overload", "name",
	                                             "attribute", "input", "output",  "type",
	                                             "tensor",  "subgraph"};
	return (unsigned)k < OXD_CH__COUNT ? n[k] : "unknown";
}

/* ---------------------------------------------------------------------------------------
 * One-line texts
 */
typedef struct line {
	char *b;
	size_t size, n;
} line;

static void put(line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(line *l, const char *fmt, ...)
{
	if (l->n + 1 >= l->size)
		return;
	va_list ap;
	va_start(ap, fmt);
	int w = vsnprintf(l->b + l->n, l->size - l->n, fmt, ap);
	va_end(ap);
	if (w < 0)
		return;
	l->n = (size_t)w < l->size - l->n ? l->n + (size_t)w : l->size - 1;
	/* a cut multi-byte character would make the line invalid UTF-8 */
	size_t back = 0;
	while (l->n > back && back < 3 && ((unsigned char)l->b[l->n - 1 - back] & 0xc0) == 0x80)
		back++;
	if (l->n > back && (unsigned char)l->b[l->n - 1 - back] >= 0xc0) {
		unsigned char lead = (unsigned char)l->b[l->n - 1 - back];
		size_t need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
		if (need != back + 1) {
			l->n -= back + 1;
			l->b[l->n] = '\0';
		}
	}
}

/* "1,234,567" */
static void put_count(line *l, uint64_t v)
{
	char d[32];
	int n = snprintf(d, sizeof(d), "%" PRIu64, v);
	for (int i = 0; i < n; i++) {
		put(l, "%c", d[i]);
		if ((n - 1 - i) % 3 == 0 && i != n - 1)
			put(l, ",");
	}
}

static void put_dims(line *l, const oxp_tensor *t)
{
	if (t->ndims == 0)
		put(l, "scalar");
	for (size_t i = 0; i < t->ndims; i++) {
		if (i == 8 && t->ndims > 9) {
			put(l, "\xc3\x97\xe2\x80\xa6(%zu)", t->ndims);
			break;
		}
		put(l, "%s%" PRId64, i ? "\xc3\x97" : "", t->dims[i]);
	}
}

static bool dims_equal(const oxp_tensor *a, const oxp_tensor *b)
{
	if (a->ndims != b->ndims)
		return false;
	for (size_t i = 0; i < a->ndims; i++)
		if (a->dims[i] != b->dims[i])
			return false;
	return true;
}

char *oxd_tensor_line(const oxd_tensor *t, char *buf, size_t size)
{
	line l = {buf, size, 0};
	if (size == 0)
		return buf;
	buf[0] = '\0';
	if (t->status == OXD_ADDED || t->status == OXD_REMOVED) {
		const oxp_tensor *x = t->a ? t->a : t->b;
		put(&l, "%s ", t->status == OXD_ADDED ? "added" : "removed");
		put_dims(&l, x);
		put(&l, " %s", oxp_dtype_short(x->data_type));
		return buf;
	}
	if (t->status == OXD_SAME) {
		put(&l, "unchanged");
		return buf;
	}
	const char *sep = "";
	if (t->dtype_changed) {
		put(&l, "%s \xe2\x86\x92 %s", oxp_dtype_short(t->a->data_type),
		    oxp_dtype_short(t->b->data_type));
		sep = ", ";
	}
	if (t->shape_changed || !dims_equal(t->a, t->b)) {
		put(&l, "%s", sep);
		put_dims(&l, t->a);
		put(&l, " \xe2\x86\x92 ");
		put_dims(&l, t->b);
		sep = ", ";
	}
	if (t->compared) {
		put(&l, "%s", sep);
		put_count(&l, t->changed);
		put(&l, " of ");
		put_count(&l, t->elements);
		put(&l, " changed");
		if (t->changed > 0 && t->changed > t->nonfinite)
			put(&l, ", max |\xce\x94| %.3g", t->max_abs);
	} else if (t->not_compared != NULL) {
		put(&l, "%s%s", sep, t->not_compared);
	}
	return buf;
}

char *oxd_attr_text(const oxp_attr *a, char *buf, size_t size)
{
	line l = {buf, size, 0};
	if (size == 0)
		return buf;
	buf[0] = '\0';
	char tmp[96];
	switch (a->type) {
	case OXP_ATTR_FLOAT:
		put(&l, "%.6g", (double)a->f);
		break;
	case OXP_ATTR_INT:
		put(&l, "%" PRId64, a->i);
		break;
	case OXP_ATTR_STRING: {
		char t[40 * 12 + 4];
		text_into(t, a->s, 40);
		put(&l, "%s", t);
		break;
	}
	case OXP_ATTR_INTS:
		for (size_t i = 0; i < a->nints; i++) {
			if (i == 8 && a->nints > 9) {
				put(&l, ",\xe2\x80\xa6(%zu)", a->nints);
				break;
			}
			put(&l, "%s%" PRId64, i ? "," : "", a->ints[i]);
		}
		if (a->nints == 0)
			put(&l, "[]");
		break;
	case OXP_ATTR_FLOATS:
		for (size_t i = 0; i < a->nfloats; i++) {
			if (i == 6 && a->nfloats > 7) {
				put(&l, ",\xe2\x80\xa6(%zu)", a->nfloats);
				break;
			}
			put(&l, "%s%.4g", i ? "," : "", (double)a->floats[i]);
		}
		if (a->nfloats == 0)
			put(&l, "[]");
		break;
	case OXP_ATTR_STRINGS:
		put(&l, "%zu strings", a->nstrings);
		break;
	case OXP_ATTR_TENSOR:
		if (a->t != NULL) {
			line t = {tmp, sizeof(tmp), 0};
			tmp[0] = '\0';
			put_dims(&t, a->t);
			put(&l, "\xe2\x9f\xa8%s\xe2\x9f\xa9 %s", tmp, oxp_dtype_short(a->t->data_type));
		}
		break;
	case OXP_ATTR_GRAPH:
		put(&l, "graph");
		break;
	case OXP_ATTR_GRAPHS:
		put(&l, "%zu graphs", a->ngraphs);
		break;
	default:
		put(&l, "%s", oxp_attr_type_name(a->type));
		break;
	}
	return buf;
}
