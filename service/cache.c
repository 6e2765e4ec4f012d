/*
 * cache.c — ready responses in memory, by key.
 *
 * Serving a cached rendering is a hash lookup and MHD_queue_response() of a response
 * built once: no per-request allocation or copy (libmicrohttpd reference-counts
 * responses and sends one buffer to many connections).  Bounded by total cost and entry
 * count; least recently used entries leave first.  An entry leaving the table stays
 * alive while requests still hold it.
 */
#include "service/cache.h"
#include "parser/oxp.h"
#include "render/oxr.h"
#include "service/clock.h"
#include "store/oxst.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NBUCKETS 4096

struct oxs_cache {
	pthread_mutex_t mu;
	oxs_centry *buckets[NBUCKETS];
	oxs_centry lru; /* sentinel: lnext = least recently used */
	uint64_t bytes, max_bytes;
	size_t entries, max_entries;
};

static uint64_t hash_key(const char *s)
{
	return oxp_hash(s, strlen(s), 0);
}

oxs_cache *oxs_cache_new(uint64_t max_bytes, size_t max_entries)
{
	oxs_cache *c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	pthread_mutex_init(&c->mu, NULL);
	c->lru.lnext = c->lru.lprev = &c->lru;
	c->max_bytes = max_bytes;
	c->max_entries = max_entries;
	return c;
}

static void entry_free(oxs_centry *e)
{
	if (e->resp != NULL)
		MHD_destroy_response(e->resp); /* closes e->fd / frees e->data when last */
	if (e->nm != NULL)
		MHD_destroy_response(e->nm);
	if (e->gz != NULL)
		MHD_destroy_response(e->gz);
	if (e->gz_nm != NULL)
		MHD_destroy_response(e->gz_nm);
	free(e->key);
	free(e);
}

void oxs_cache_release(oxs_centry *e)
{
	if (e != NULL && atomic_fetch_sub(&e->refs, 1) == 1)
		entry_free(e);
}

/* Unlink e from the table and the LRU list and drop the table's reference (mu held). */
static void unlink_entry(oxs_cache *c, oxs_centry *e)
{
	oxs_centry **pp = &c->buckets[e->hash % NBUCKETS];
	while (*pp != NULL && *pp != e)
		pp = &(*pp)->hnext;
	if (*pp == e)
		*pp = e->hnext;
	e->lprev->lnext = e->lnext;
	e->lnext->lprev = e->lprev;
	e->lprev = e->lnext = NULL;
	e->in_table = false;
	c->bytes -= e->cost;
	c->entries--;
	oxs_cache_release(e);
}

oxs_centry *oxs_cache_get(oxs_cache *c, const char *key)
{
	uint64_t h = hash_key(key);
	pthread_mutex_lock(&c->mu);
	oxs_centry *e = c->buckets[h % NBUCKETS];
	while (e != NULL && (e->hash != h || strcmp(e->key, key) != 0))
		e = e->hnext;
	if (e != NULL && e->expires_ms != 0 && e->expires_ms < oxs_now_ms()) {
		unlink_entry(c, e);
		e = NULL;
	}
	if (e != NULL) {
		/* most recently used: move to the tail */
		e->lprev->lnext = e->lnext;
		e->lnext->lprev = e->lprev;
		e->lprev = c->lru.lprev;
		e->lnext = &c->lru;
		c->lru.lprev->lnext = e;
		c->lru.lprev = e;
		atomic_fetch_add(&e->refs, 1);
	}
	pthread_mutex_unlock(&c->mu);
	return e;
}

void oxs_cache_add(oxs_cache *c, const char *key, oxs_centry *e)
{
	if (e->cost > c->max_bytes / 8 || e->in_table)
		return;
	char *k = strdup(key);
	if (k == NULL)
		return;
	uint64_t h = hash_key(key);
	pthread_mutex_lock(&c->mu);
	oxs_centry *old = c->buckets[h % NBUCKETS];
	while (old != NULL && (old->hash != h || strcmp(old->key, key) != 0))
		old = old->hnext;
	if (old != NULL)
		unlink_entry(c, old);
	while ((c->bytes + e->cost > c->max_bytes || c->entries + 1 > c->max_entries) &&
	       c->lru.lnext != &c->lru)
		unlink_entry(c, c->lru.lnext);
	free(e->key);
	e->key = k;
	e->hash = h;
	e->hnext = c->buckets[h % NBUCKETS];
	c->buckets[h % NBUCKETS] = e;
	e->lprev = c->lru.lprev;
	e->lnext = &c->lru;
	c->lru.lprev->lnext = e;
	c->lru.lprev = e;
	e->in_table = true;
	c->bytes += e->cost;
	c->entries++;
	atomic_fetch_add(&e->refs, 1); /* the table's reference */
	pthread_mutex_unlock(&c->mu);
}

void oxs_cache_purge(oxs_cache *c, const char *prefix)
{
	size_t n = strlen(prefix);
	pthread_mutex_lock(&c->mu);
	oxs_centry *e = c->lru.lnext;
	while (e != &c->lru) {
		oxs_centry *next = e->lnext;
		if (strncmp(e->key, prefix, n) == 0)
			unlink_entry(c, e);
		e = next;
	}
	pthread_mutex_unlock(&c->mu);
}

void oxs_cache_stats(oxs_cache *c, uint64_t *bytes, uint64_t *entries)
{
	pthread_mutex_lock(&c->mu);
	*bytes = c->bytes;
	*entries = c->entries;
	pthread_mutex_unlock(&c->mu);
}

void oxs_cache_free(oxs_cache *c)
{
	if (c == NULL)
		return;
	while (c->lru.lnext != &c->lru)
		unlink_entry(c, c->lru.lnext);
	pthread_mutex_destroy(&c->mu);
	free(c);
}
