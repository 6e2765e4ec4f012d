/*
 * models.c — parsed models in memory: oxp_model + oxp_dag by id, so that summaries,
 * /nodes and /search do not parse the file for every request.
 *
 * Entries are reference counted; the least recently used unreferenced ones leave when the
 * count or the byte estimate is over its bound.  A model is loaded by one thread while
 * others asking for the same id wait for it.  A load that fails for the model's own reason
 * (not a model, over its budget, ...: the file behind an id never changes) is remembered
 * for FAILURE_TTL_MS, so that retries answer the same error without parsing it again;
 * failures that are ours (I/O, out of memory) are not kept.
 */
#include "service/models.h"
#include "parser/oxp.h"
#include "render/oxr.h"
#include "service/clock.h"
#include "service/metrics.h"
#include "store/oxst.h"

#include <limits.h>
#include <stdio.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct oxs_mentry {
	char id[OXST_ID_LEN + 1];
	oxs_loaded l;
	uint64_t bytes;
	unsigned refs;
	bool loading;
	bool gone; /* forgotten (model deleted) while referenced: freed on last release */
	struct oxs_mentry *prev, *next; /* list: head = most recently used */
};

#define FAILURES 16
#define FAILURE_TTL_MS 60000

typedef struct failure {
	char id[OXST_ID_LEN + 1];
	int64_t until_ms; /* 0: a free slot */
	oxp_error err;
} failure;

struct oxs_models {
	failure failures[FAILURES]; /* recent permanent load failures (mu held) */
	unsigned next_failure;      /* the slot the next one takes (round robin) */
	pthread_mutex_t mu;
	pthread_cond_t loaded;
	oxs_mentry *head, *tail;
	unsigned count, max_count;
	uint64_t bytes, max_bytes;
	uint64_t budget; /* the parse budget of one model, 0: the parser's default */
};

oxs_models *oxs_models_new(unsigned max_count, uint64_t max_bytes, uint64_t budget)
{
	oxs_models *mc = calloc(1, sizeof(*mc));
	if (mc == NULL)
		return NULL;
	pthread_mutex_init(&mc->mu, NULL);
	pthread_cond_init(&mc->loaded, NULL);
	mc->max_count = max_count ? max_count : 1;
	mc->max_bytes = max_bytes;
	mc->budget = budget;
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
	oxs_loaded_free(&e->l);
	free(e);
}

/* ---------------------------------------------------------------------------------------
 * Loading a stored file: a model, else a lone TensorProto
 */
void oxs_loaded_free(oxs_loaded *l)
{
	oxp_dag_free(l->dag);
	oxp_model_free(l->model);
	if (l->map != NULL)
		munmap(l->map, l->map_len);
	memset(l, 0, sizeof(*l));
}

/* Map path read-only (regular files only): *map and *len; an empty file maps to NULL. */
static oxp_code map_file(const char *path, void **map, size_t *len, oxp_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size > SIZE_MAX) {
		if (fd >= 0)
			close(fd);
		snprintf(err->message, sizeof(err->message), "cannot open the stored file");
		err->code = OXP_E_IO;
		return OXP_E_IO;
	}
	void *p = NULL;
	if (st.st_size > 0) {
		p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED) {
			close(fd);
			snprintf(err->message, sizeof(err->message), "cannot map the stored file");
			err->code = OXP_E_IO;
			return OXP_E_IO;
		}
	}
	close(fd);
	*map = p;
	*len = (size_t)st.st_size;
	return OXP_OK;
}

oxp_code oxs_tensor_upload_parse(oxp_model **out, const void *buf, size_t len, oxp_error *err)
{
	oxp_model *m = NULL;
	oxp_code rc = oxp_tensor_file_parse(&m, buf, len, NULL, err);
	if (rc != OXP_OK)
		return rc;
	const oxp_tensor *t = oxp_model_tensor_get(m);
	if (t == NULL || t->data_type == OXP_DT_UNDEFINED) {
		oxp_model_free(m);
		return OXP_E_NOT_MODEL;
	}
	*out = m;
	return OXP_OK;
}

oxp_code oxs_load(oxs_loaded *out, const char *path, uint64_t budget, oxp_error *err)
{
	oxs_loaded l;
	memset(&l, 0, sizeof(l));
	oxp_limits lim = oxp_limits_default();
	if (budget > 0)
		lim.max_alloc = (size_t)budget;
	oxp_code rc = oxp_model_open_ex(&l.model, path, &lim, OXP_OPEN_LOW_RSS, err);
	if (rc == OXP_OK) {
		oxp_dag_options opt = {.infer_shapes = true};
		rc = oxp_dag_build(&l.dag, l.model, &opt, err);
		if (rc != OXP_OK) {
			oxs_loaded_free(&l);
			return rc;
		}
		*out = l;
		return OXP_OK;
	}
	if (rc == OXP_E_IO || rc == OXP_E_NOMEM || rc == OXP_E_BUDGET)
		return rc;
	/* not a model: perhaps a TensorProto (test data .pb); the model's error stands
	 * when it is not one either */
	oxp_error terr;
	memset(&terr, 0, sizeof(terr));
	if (map_file(path, &l.map, &l.map_len, &terr) != OXP_OK)
		return rc;
	if (oxs_tensor_upload_parse(&l.model, l.map, l.map_len, &terr) != OXP_OK) {
		oxs_loaded_free(&l);
		return rc;
	}
	if (err != NULL)
		memset(err, 0, sizeof(*err));
	*out = l;
	return OXP_OK;
}

/* Estimate of the memory a parsed model holds: its arena plus the linked graph's arrays
 * (the mapping of the file itself is page cache, not counted). */
static uint64_t estimate(const oxp_model *m, const oxp_dag *d)
{
	uint64_t b = (m ? oxp_model_arena_bytes(m) : 0) + 4096;
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

/* The remembered failure of id (mu held), or NULL. */
static failure *failure_of(oxs_models *mc, const char *id)
{
	int64_t now = oxs_now_ms();
	for (unsigned i = 0; i < FAILURES; i++)
		if (mc->failures[i].until_ms > now && strcmp(mc->failures[i].id, id) == 0)
			return &mc->failures[i];
	return NULL;
}

oxst_status oxs_models_get(oxs_models *mc, oxst_store *store, const char *id, const char *src,
                           oxs_mentry **out, oxp_error *perr)
{
	pthread_mutex_lock(&mc->mu);
	failure *f = failure_of(mc, id);
	if (f != NULL) {
		if (perr != NULL)
			*perr = f->err;
		pthread_mutex_unlock(&mc->mu);
		oxs_metrics_load(OXS_LOAD_REMEMBERED);
		return OXST_E_INVALID;
	}
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
		return OXST_OK;
	}
	e = calloc(1, sizeof(*e));
	if (e == NULL) {
		pthread_mutex_unlock(&mc->mu);
		return OXST_E_NOMEM;
	}
	snprintf(e->id, sizeof(e->id), "%s", id);
	e->loading = true;
	e->refs = 1;
	list_push_front(mc, e);
	mc->count++;
	pthread_mutex_unlock(&mc->mu);

	/* load without the lock */
	char path[PATH_MAX];
	oxst_status rc = OXST_OK;
	if (src != NULL && src[0] != '\0')
		snprintf(path, sizeof(path), "%s", src);
	else
		rc = store->ops->model_path(store, id, path, sizeof(path));
	oxp_error err;
	memset(&err, 0, sizeof(err));
	if (rc == OXST_OK && oxs_load(&e->l, path, mc->budget, &err) != OXP_OK)
		rc = err.code == OXP_E_IO ? OXST_E_IO : err.code == OXP_E_NOMEM ? OXST_E_NOMEM
		                                                               : OXST_E_INVALID;
	if (rc != OXST_OK && perr != NULL)
		*perr = err;
	oxs_metrics_load(rc == OXST_OK ? OXS_LOAD_OK : rc == OXST_E_INVALID ? OXS_LOAD_INVALID
	                                                                 : OXS_LOAD_FAILED);

	pthread_mutex_lock(&mc->mu);
	if (rc == OXST_E_INVALID && !e->gone) {
		failure *nf = &mc->failures[mc->next_failure++ % FAILURES];
		snprintf(nf->id, sizeof(nf->id), "%s", id);
		nf->err = err;
		nf->until_ms = oxs_now_ms() + FAILURE_TTL_MS;
	}
	e->loading = false;
	oxs_mentry *dead = NULL;
	if (rc == OXST_OK) {
		e->bytes = estimate(e->l.model, e->l.dag) + e->l.map_len / 16;
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

void oxs_models_add(oxs_models *mc, const char *id, oxs_loaded *l)
{
	oxs_mentry *e = calloc(1, sizeof(*e));
	if (e == NULL) {
		oxs_loaded_free(l);
		return;
	}
	snprintf(e->id, sizeof(e->id), "%s", id);
	e->l = *l;
	memset(l, 0, sizeof(*l));
	e->bytes = estimate(e->l.model, e->l.dag) + e->l.map_len / 16;
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
	failure *f = failure_of(mc, id);
	if (f != NULL)
		f->until_ms = 0;
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
	return e->l.model;
}

const oxp_dag *oxs_mentry_dag(const oxs_mentry *e)
{
	return e->l.dag;
}

const oxp_tensor *oxs_mentry_tensor(const oxs_mentry *e)
{
	return e->l.dag == NULL ? oxp_model_tensor_get(e->l.model) : NULL;
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
