/*
 * models.c — parsed models in memory: oxp_model + oxp_dag by id, so that summaries,
 * /nodes and /search do not parse the file for every request.
 *
 * Entries are reference counted; the least recently used unreferenced ones leave when the
 * count or the byte estimate is over its bound.  A model is loaded by one thread while
 * others asking for the same id wait for it (a failed load is not kept).
 */
#include "service/internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct oxs_mentry {
	char id[OXS_ID_LEN + 1];
	oxp_model *model;
	oxp_dag *dag;
	uint64_t bytes;
	unsigned refs;
	bool loading;
	bool gone; /* forgotten (model deleted) while referenced: freed on last release */
	struct oxs_mentry *prev, *next; /* list: head = most recently used */
};

struct oxs_models {
	pthread_mutex_t mu;
	pthread_cond_t loaded;
	oxs_mentry *head, *tail;
	unsigned count, max_count;
	uint64_t bytes, max_bytes;
};

oxs_models *oxs_models_new(unsigned max_count, uint64_t max_bytes)
{
	oxs_models *mc = calloc(1, sizeof(*mc));
	if (mc == NULL)
		return NULL;
	pthread_mutex_init(&mc->mu, NULL);
	pthread_cond_init(&mc->loaded, NULL);
	mc->max_count = max_count ? max_count : 1;
	mc->max_bytes = max_bytes;
	return mc;
}

static void list_unlink(oxs_models *mc, oxs_mentry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		mc->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		mc->tail = e->prev;
	e->prev = e->next = NULL;
}

static void list_push_front(oxs_models *mc, oxs_mentry *e)
{
	e->prev = NULL;
	e->next = mc->head;
	if (mc->head)
		mc->head->prev = e;
	mc->head = e;
	if (mc->tail == NULL)
		mc->tail = e;
}

static void entry_destroy(oxs_mentry *e)
{
	oxp_dag_free(e->dag);
	oxp_model_free(e->model);
	free(e);
}

/* Estimate of the memory a parsed model holds: its arena plus the linked graph's arrays
 * (the mapping of the file itself is page cache, not counted). */
static uint64_t estimate(const oxp_model *m, const oxp_dag *d)
{
	uint64_t b = oxp_model_arena_bytes(m) + 4096;
	const oxp_dag_view *v = d ? oxp_dag_get(d) : NULL;
	if (v != NULL)
		b += (uint64_t)v->nnodes * 160 + (uint64_t)v->nvalues * 200 + (uint64_t)v->nedges * 24 +
		     (uint64_t)v->nscopes * 120 + (uint64_t)v->nwarnings * 160;
	return b;
}

/* Evict unreferenced entries from the cold end while over a bound (mu held); returns
 * the evicted entries as a list through ->next for freeing outside the lock. */
static oxs_mentry *trim(oxs_models *mc)
{
	oxs_mentry *out = NULL;
	oxs_mentry *e = mc->tail;
	while (e != NULL && (mc->count > mc->max_count || mc->bytes > mc->max_bytes)) {
		oxs_mentry *prev = e->prev;
		if (e->refs == 0 && !e->loading) {
			list_unlink(mc, e);
			mc->count--;
			mc->bytes -= e->bytes;
			e->next = out;
			out = e;
		}
		e = prev;
	}
	return out;
}

static void destroy_list(oxs_mentry *e)
{
	while (e != NULL) {
		oxs_mentry *next = e->next;
		entry_destroy(e);
		e = next;
	}
}

static oxs_mentry *find(oxs_models *mc, const char *id)
{
	for (oxs_mentry *e = mc->head; e != NULL; e = e->next)
		if (strcmp(e->id, id) == 0)
			return e;
	return NULL;
}

oxs_status oxs_models_get(oxs_models *mc, oxs_store *store, const char *id, oxs_mentry **out,
                          oxp_error *perr)
{
	pthread_mutex_lock(&mc->mu);
	oxs_mentry *e;
	for (;;) {
		e = find(mc, id);
		if (e == NULL || !e->loading)
			break;
		pthread_cond_wait(&mc->loaded, &mc->mu);
	}
	if (e != NULL) {
		e->refs++;
		list_unlink(mc, e);
		list_push_front(mc, e);
		pthread_mutex_unlock(&mc->mu);
		*out = e;
		return OXS_OK;
	}
	e = calloc(1, sizeof(*e));
	if (e == NULL) {
		pthread_mutex_unlock(&mc->mu);
		return OXS_E_NOMEM;
	}
	snprintf(e->id, sizeof(e->id), "%s", id);
	e->loading = true;
	e->refs = 1;
	list_push_front(mc, e);
	mc->count++;
	pthread_mutex_unlock(&mc->mu);

	/* load without the lock */
	char path[PATH_MAX];
	oxs_status rc = store->ops->model_path(store, id, path, sizeof(path));
	oxp_error err;
	memset(&err, 0, sizeof(err));
	if (rc == OXS_OK && oxp_model_open(&e->model, path, NULL, &err) != OXP_OK)
		rc = err.code == OXP_E_IO ? OXS_E_IO : OXS_E_INVALID;
	if (rc == OXS_OK) {
		oxp_dag_options opt = {.infer_shapes = true};
		if (oxp_dag_build(&e->dag, e->model, &opt, &err) != OXP_OK)
			rc = err.code == OXP_E_NOMEM ? OXS_E_NOMEM : OXS_E_INVALID;
	}
	if (rc != OXS_OK && perr != NULL)
		*perr = err;

	pthread_mutex_lock(&mc->mu);
	e->loading = false;
	oxs_mentry *dead = NULL;
	if (rc == OXS_OK) {
		e->bytes = estimate(e->model, e->dag);
		if (!e->gone)
			mc->bytes += e->bytes;
		*out = e;
	} else {
		if (!e->gone) {
			list_unlink(mc, e);
			mc->count--;
		}
		e->next = NULL;
		dead = e;
	}
	oxs_mentry *evicted = trim(mc);
	pthread_cond_broadcast(&mc->loaded);
	pthread_mutex_unlock(&mc->mu);
	destroy_list(evicted);
	destroy_list(dead);
	return rc;
}

void oxs_models_add(oxs_models *mc, const char *id, oxp_model *m, oxp_dag *d)
{
	oxs_mentry *e = calloc(1, sizeof(*e));
	if (e == NULL) {
		oxp_dag_free(d);
		oxp_model_free(m);
		return;
	}
	snprintf(e->id, sizeof(e->id), "%s", id);
	e->model = m;
	e->dag = d;
	e->bytes = estimate(m, d);
	pthread_mutex_lock(&mc->mu);
	if (find(mc, id) != NULL) {
		pthread_mutex_unlock(&mc->mu);
		entry_destroy(e);
		return;
	}
	list_push_front(mc, e);
	mc->count++;
	mc->bytes += e->bytes;
	oxs_mentry *evicted = trim(mc);
	pthread_mutex_unlock(&mc->mu);
	destroy_list(evicted);
}

void oxs_models_release(oxs_models *mc, oxs_mentry *e)
{
	if (e == NULL)
		return;
	pthread_mutex_lock(&mc->mu);
	e->refs--;
	bool dead = e->gone && e->refs == 0;
	oxs_mentry *evicted = trim(mc);
	pthread_mutex_unlock(&mc->mu);
	destroy_list(evicted);
	if (dead)
		entry_destroy(e);
}

void oxs_models_forget(oxs_models *mc, const char *id)
{
	pthread_mutex_lock(&mc->mu);
	oxs_mentry *e = find(mc, id);
	oxs_mentry *dead = NULL;
	if (e != NULL) {
		list_unlink(mc, e);
		mc->count--;
		if (!e->loading)
			mc->bytes -= e->bytes;
		if (e->refs == 0 && !e->loading)
			dead = e;
		else
			e->gone = true; /* still in use: freed by the last release */
	}
	pthread_mutex_unlock(&mc->mu);
	if (dead != NULL)
		entry_destroy(dead);
}

const oxp_model *oxs_mentry_model(const oxs_mentry *e)
{
	return e->model;
}

const oxp_dag *oxs_mentry_dag(const oxs_mentry *e)
{
	return e->dag;
}

void oxs_models_stats(oxs_models *mc, uint64_t *count, uint64_t *bytes)
{
	pthread_mutex_lock(&mc->mu);
	*count = mc->count;
	*bytes = mc->bytes;
	pthread_mutex_unlock(&mc->mu);
}

void oxs_models_free(oxs_models *mc)
{
	if (mc == NULL)
		return;
	destroy_list(mc->head);
	pthread_cond_destroy(&mc->loaded);
	pthread_mutex_destroy(&mc->mu);
	free(mc);
}
