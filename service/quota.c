/*
 * quota.c — per-client holdings (quota.h): a hash table of clients, each with a counter
 * per resource, under one mutex.  A client's entry exists while it holds anything, so the
 * table is bounded by what is held: connections (--max-connections) for bodies and
 * overlays, and uploads in progress, each of which a client can only hold within its own
 * limit.
 */
#include "service/quota.h"
#include "parser/oxp.h"
#include "service/hash.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct qent {
	struct qent *next;
	oxs_client c;
	uint64_t held[OXS_Q_COUNT];
} qent;

struct oxs_quota {
	pthread_mutex_t mu;
	uint64_t limit[OXS_Q_COUNT];
	qent **tab;
	size_t cap, n; /* cap: a power of two */
};

void oxs_client_hex(const oxs_client *c, char out[OXS_CLIENT_HEX])
{
	oxs_hex(out, c->k, OXS_CLIENT_KEY);
}

static int hexval(char ch)
{
	return ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
}

bool oxs_client_from_hex(const char *hex, oxs_client *c)
{
	if (hex == NULL || strlen(hex) != 2 * OXS_CLIENT_KEY)
		return false;
	for (size_t i = 0; i < OXS_CLIENT_KEY; i++) {
		int a = hexval(hex[2 * i]), b = hexval(hex[2 * i + 1]);
		if (a < 0 || b < 0)
			return false;
		c->k[i] = (unsigned char)(a << 4 | b);
	}
	return true;
}

oxs_quota *oxs_quota_new(const uint64_t limit[OXS_Q_COUNT])
{
	oxs_quota *q = calloc(1, sizeof(*q));
	if (q == NULL)
		return NULL;
	q->cap = 64;
	q->tab = calloc(q->cap, sizeof(*q->tab));
	if (q->tab == NULL) {
		free(q);
		return NULL;
	}
	memcpy(q->limit, limit, sizeof(q->limit));
	pthread_mutex_init(&q->mu, NULL);
	return q;
}

void oxs_quota_free(oxs_quota *q)
{
	if (q == NULL)
		return;
	for (size_t i = 0; i < q->cap; i++)
		for (qent *e = q->tab[i], *nx; e != NULL; e = nx) {
			nx = e->next;
			free(e);
		}
	free(q->tab);
	pthread_mutex_destroy(&q->mu);
	free(q);
}

static size_t slot_of(const oxs_quota *q, const oxs_client *c)
{
	return (size_t)oxp_hash(c->k, OXS_CLIENT_KEY, 0x9e3779b9u) & (q->cap - 1);
}

static qent **find(oxs_quota *q, const oxs_client *c)
{
	qent **p = &q->tab[slot_of(q, c)];
	while (*p != NULL && memcmp((*p)->c.k, c->k, OXS_CLIENT_KEY) != 0)
		p = &(*p)->next;
	return p;
}

/* Doubles the table when it holds as many clients as slots (failure keeps the old one:
 * only the chains grow). */
static void grow(oxs_quota *q)
{
	if (q->n < q->cap || q->cap > ((size_t)1 << 40))
		return;
	size_t cap = q->cap * 2;
	qent **t = calloc(cap, sizeof(*t));
	if (t == NULL)
		return;
	qent **old = q->tab;
	size_t ocap = q->cap;
	q->tab = t;
	q->cap = cap;
	for (size_t i = 0; i < ocap; i++)
		for (qent *e = old[i], *nx; e != NULL; e = nx) {
			nx = e->next;
			size_t s = slot_of(q, &e->c);
			e->next = t[s];
			t[s] = e;
		}
	free(old);
}

static bool empty(const qent *e)
{
	for (int i = 0; i < OXS_Q_COUNT; i++)
		if (e->held[i] != 0)
			return false;
	return true;
}

bool oxs_quota_take(oxs_quota *q, const oxs_client *c, oxs_qres res, uint64_t n,
                    uint64_t *held)
{
	if (q == NULL || (unsigned)res >= OXS_Q_COUNT)
		return false;
	pthread_mutex_lock(&q->mu);
	qent **p = find(q, c);
	uint64_t have = *p != NULL ? (*p)->held[res] : 0;
	if (held != NULL)
		*held = have;
	uint64_t lim = q->limit[res];
	bool ok = n <= UINT64_MAX - have && (lim == 0 || have + n <= lim);
	if (ok && *p == NULL && n > 0) {
		qent *e = calloc(1, sizeof(*e));
		if (e == NULL) {
			ok = false;
		} else {
			e->c = *c;
			*p = e;
			q->n++;
		}
	}
	if (ok && *p != NULL) {
		(*p)->held[res] = have + n;
		grow(q);
	}
	pthread_mutex_unlock(&q->mu);
	return ok;
}

void oxs_quota_give(oxs_quota *q, const oxs_client *c, oxs_qres res, uint64_t n)
{
	if (q == NULL || (unsigned)res >= OXS_Q_COUNT)
		return;
	pthread_mutex_lock(&q->mu);
	qent **p = find(q, c);
	if (*p != NULL) {
		qent *e = *p;
		e->held[res] = e->held[res] > n ? e->held[res] - n : 0;
		if (empty(e)) {
			*p = e->next;
			free(e);
			q->n--;
		}
	}
	pthread_mutex_unlock(&q->mu);
}

uint64_t oxs_quota_held(oxs_quota *q, const oxs_client *c, oxs_qres res)
{
	if (q == NULL || (unsigned)res >= OXS_Q_COUNT)
		return 0;
	pthread_mutex_lock(&q->mu);
	qent **p = find(q, c);
	uint64_t v = *p != NULL ? (*p)->held[res] : 0;
	pthread_mutex_unlock(&q->mu);
	return v;
}

uint64_t oxs_quota_limit(const oxs_quota *q, oxs_qres res)
{
	return q != NULL && (unsigned)res < OXS_Q_COUNT ? q->limit[res] : 0;
}

uint64_t oxs_quota_clients(oxs_quota *q)
{
	if (q == NULL)
		return 0;
	pthread_mutex_lock(&q->mu);
	uint64_t n = q->n;
	pthread_mutex_unlock(&q->mu);
	return n;
}
