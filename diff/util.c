/*
 * util.c — the small pieces diff/ shares: growable arrays, a string map, a hash, display
 * text (parser/text.c's), names of enums, and the one-line text of a tensor pair
 * (attributes: oxp_attr_text, parser/attrtext.c).
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
const char *oxd__text(oxp_arena *a, oxp_str s, size_t max_chars)
{
	return oxp_text(a, s, max_chars);
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
/* "1,234,567" */
static void put_count(oxp_textbuf *l, uint64_t v)
{
	char d[32];
	int n = snprintf(d, sizeof(d), "%" PRIu64, v);
	for (int i = 0; i < n; i++) {
		oxp_textbuf_printf(l, "%c", d[i]);
		if ((n - 1 - i) % 3 == 0 && i != n - 1)
			oxp_textbuf_printf(l, ",");
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
	oxp_textbuf l = {.b = buf, .size = size};
	if (size == 0)
		return buf;
	buf[0] = '\0';
	if (t->status == OXD_ADDED || t->status == OXD_REMOVED) {
		const oxp_tensor *x = t->a ? t->a : t->b;
		oxp_textbuf_printf(&l, "%s ", t->status == OXD_ADDED ? "added" : "removed");
		oxp_textbuf_dims(&l, x->dims, x->ndims);
		oxp_textbuf_printf(&l, " %s", oxp_dtype_short(x->data_type));
		return buf;
	}
	if (t->status == OXD_SAME) {
		oxp_textbuf_printf(&l, "unchanged");
		return buf;
	}
	const char *sep = "";
	if (t->dtype_changed) {
		oxp_textbuf_printf(&l, "%s \xe2\x86\x92 %s", oxp_dtype_short(t->a->data_type),
		    oxp_dtype_short(t->b->data_type));
		sep = ", ";
	}
	if (t->shape_changed || !dims_equal(t->a, t->b)) {
		oxp_textbuf_printf(&l, "%s", sep);
		oxp_textbuf_dims(&l, t->a->dims, t->a->ndims);
		oxp_textbuf_printf(&l, " \xe2\x86\x92 ");
		oxp_textbuf_dims(&l, t->b->dims, t->b->ndims);
		sep = ", ";
	}
	if (t->compared) {
		oxp_textbuf_printf(&l, "%s", sep);
		put_count(&l, t->changed);
		oxp_textbuf_printf(&l, " of ");
		put_count(&l, t->elements);
		oxp_textbuf_printf(&l, " changed");
		if (t->changed > 0 && t->changed > t->nonfinite)
			oxp_textbuf_printf(&l, ", max |\xce\x94| %.3g", t->max_abs);
	} else if (t->not_compared != NULL) {
		oxp_textbuf_printf(&l, "%s%s", sep, t->not_compared);
	}
	return buf;
}
