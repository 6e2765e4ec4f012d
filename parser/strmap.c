/*
 * strmap.c — the string -> index map of parser/oxp.h (oxp_smap): open addressing over
 * (pointer, length) keys with FNV-1a, grown at half load.  Used where names are looked up
 * by their bytes: an overlay's node and value names (render/heat.c), scope paths
 * (render/costdoc.c).
 */
#include "parser/oxp.h"

#include <stdlib.h>
#include <string.h>

uint64_t oxp_hash(const void *data, size_t n, uint64_t seed)
{
	const unsigned char *p = data;
	const uint64_t k = 0x9e3779b97f4a7c15ull; /* 2^64 / golden ratio, odd */
	uint64_t h = (seed ^ n) * k;
	for (; n >= 8; n -= 8, p += 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		h = (h ^ w) * k;
		h ^= h >> 32;
	}
	if (n > 0) {
		uint64_t w = 0;
		for (size_t i = 0; i < n; i++)
			w |= (uint64_t)p[i] << (8 * i);
		h = (h ^ w) * k;
	}
	/* MurmurHash3's 64-bit finalizer: every input bit reaches every output bit */
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h;
}

bool oxp_smap_init(oxp_smap *m, uint32_t want)
{
	uint32_t cap = 64;
	while (cap < want * 2u && cap < (1u << 30))
		cap *= 2;
	m->cap = cap;
	m->n = 0;
	m->key = calloc(cap, sizeof(*m->key));
	m->len = calloc(cap, sizeof(*m->len));
	m->val = calloc(cap, sizeof(*m->val));
	if (m->key && m->len && m->val)
		return true;
	oxp_smap_free(m);
	return false;
}

void oxp_smap_free(oxp_smap *m)
{
	free(m->key);
	free(m->len);
	free(m->val);
	memset(m, 0, sizeof(*m));
}

uint32_t oxp_smap_get(const oxp_smap *m, const char *p, size_t n)
{
	if (m->cap == 0)
		return OXP_NONE;
	uint32_t mask = m->cap - 1, i = (uint32_t)oxp_hash(p, n, 0) & mask;
	while (m->key[i] != NULL) {
		if (m->len[i] == n && memcmp(m->key[i], p, n) == 0)
			return m->val[i];
		i = (i + 1) & mask;
	}
	return OXP_NONE;
}

static bool grow(oxp_smap *m)
{
	oxp_smap bigger;
	if (m->cap >= (1u << 30) || !oxp_smap_init(&bigger, m->cap))
		return false;
	for (uint32_t i = 0; i < m->cap; i++)
		if (m->key[i] != NULL) {
			uint32_t mask = bigger.cap - 1, j = (uint32_t)oxp_hash(m->key[i], m->len[i], 0) & mask;
			while (bigger.key[j] != NULL)
				j = (j + 1) & mask;
			bigger.key[j] = m->key[i];
			bigger.len[j] = m->len[i];
			bigger.val[j] = m->val[i];
			bigger.n++;
		}
	oxp_smap_free(m);
	*m = bigger;
	return true;
}

bool oxp_smap_put(oxp_smap *m, const char *p, size_t n, uint32_t v)
{
	if ((m->n + 1) * 2 > m->cap && !grow(m))
		return false;
	uint32_t mask = m->cap - 1, i = (uint32_t)oxp_hash(p, n, 0) & mask;
	while (m->key[i] != NULL) {
		if (m->len[i] == n && memcmp(m->key[i], p, n) == 0)
			return true;
		i = (i + 1) & mask;
	}
	m->key[i] = p;
	m->len[i] = n;
	m->val[i] = v;
	m->n++;
	return true;
}
