/*
 * links.c — which structure's URLs redirect to a whole model (issue 35 item 1,
 * docs/decisions.md 82, superseding 57).
 *
 * THE RULE.  A link structure S → model F is made, kept and served only when the server
 * has proven from the bytes it stores that S is F's structure; the client's claims
 * (S, the file's name, a manifest) only say which proof to try.  Proven means one of:
 *   1. the cut: cutting stored F exactly as the page does (parser/cut.c = web/structure.js
 *      structureOf, naming the location the page names for the file) gives bytes whose
 *      SHA-256 is S — the structure the page uploaded first;
 *   2. a bundle: F has data files, and F's model file is byte for byte S (SHA-256 of the
 *      stored model file is S) and names external data — the page uploads a model with
 *      data files as its model file first.
 * What a link promises is the structure: whoever first stores a whole model whose
 * structure is S links S (the weights are that model's); a structure is linked once.
 * No request removes or changes a link; links are lines "S F [location]" of
 * <uploads>/links, appended and synced once proven.  At start every line is proven
 * again, in the background, before it is served: a line that fails is dropped from the
 * file and logged; one that cannot be checked now (the store unreachable, no memory) is
 * not served and is tried again.
 *
 * The proof reads F through the store (an object store: its cache's copy, fetched and
 * checked against the id), maps it read-only and streams the cut into SHA-256: the
 * structure is never built, and F's payloads are never read.
 */
#include "service/links.h"
#include "parser/oxp.h"
#include "service/log.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define RETRY_SECONDS 30 /* a check that could not be made now is tried again after */

typedef enum { L_PENDING, L_PROVEN } lstate;

typedef struct slink {
	char structure[OXST_ID_LEN + 1], full[OXST_ID_LEN + 1];
	char loc[OXP_CUT_LOCATION_MAX + 1]; /* "": an older line (the model's kept name) */
	lstate state;
} slink;

struct oxs_links {
	char path[PATH_MAX];
	oxst_store *store;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	slink *v;
	size_t n, cap;
	uint64_t dropped;
	bool stop, thread_on;
	pthread_t thread;
};

/* ---------------------------------------------------------------------------------------
 * The proof
 */
static bool to_sha(void *ctx, const void *p, size_t n)
{
	oxst_sha256_update(ctx, p, n);
	return true;
}

/* The stored model id mapped read-only (*m, *size; unmap it); OXST_OK or the store's. */
static oxst_status map_model(oxst_store *store, const char *id, void **m, uint64_t *size)
{
	int fd = -1;
	oxst_status s = store->ops->open_model(store, id, &fd, size);
	if (s != OXST_OK)
		return s;
	*m = *size > 0 && *size <= SIZE_MAX ? mmap(NULL, (size_t)*size, PROT_READ, MAP_PRIVATE, fd, 0)
	                                    : MAP_FAILED;
	int e = errno;
	close(fd);
	if (*m == MAP_FAILED)
		return *size == 0 ? OXST_E_INVALID : e == ENOMEM ? OXST_E_NOMEM : OXST_E_IO;
	return OXST_OK;
}

/* The name kept with the stored model id ("" when none). */
static void kept_name(oxst_store *store, const char *id, char *out, size_t size)
{
	/* list from the id just before (ids are in order) */
	char after[OXST_ID_LEN + 1];
	memcpy(after, id, OXST_ID_LEN + 1);
	for (int i = OXST_ID_LEN - 1; i >= 0; i--) {
		if (after[i] == '0') {
			after[i] = 'f';
			continue;
		}
		after[i] = after[i] == 'a' ? '9' : (char)(after[i] - 1);
		break;
	}
	oxst_model_info info;
	size_t n = 0;
	out[0] = '\0';
	if (store->ops->list_models(store, after, &info, 1, &n, NULL) == OXST_OK && n == 1 &&
	    strcmp(info.id, id) == 0 && info.has_meta)
		snprintf(out, size, "%s", info.meta.name);
}

typedef enum { P_YES, P_NO, P_UNKNOWN } proof;

static proof of_status(oxst_status s)
{
	/* gone, or nothing a model could be: refuted; anything else may pass */
	return s == OXST_E_NOT_FOUND || s == OXST_E_INVALID ? P_NO : P_UNKNOWN;
}

/* Whether S is F's structure by the rule above; loc: the location the cut names. */
static proof prove(oxst_store *store, const char *S, const char *F, const char *loc)
{
	if (!oxst_id_valid(S) || !oxst_id_valid(F) || strcmp(S, F) == 0)
		return P_NO;
	void *m = NULL;
	uint64_t size = 0;
	oxst_status s = map_model(store, F, &m, &size);
	if (s != OXST_OK)
		return of_status(s);
	char hex[OXST_ID_LEN + 1];
	oxst_sha256 c;
	oxp_cut_info info;
	oxp_error err;
	/* 1. the page's cut of F */
	oxst_sha256_resume(&c, NULL, 0);
	oxp_code code = oxp_cut(&info, m, (size_t)size, loc, OXP_CUT_MIN_SAVING, to_sha, &c, &err);
	proof p = P_NO;
	if (code == OXP_OK && info.cuts) {
		oxst_sha256_final(&c, hex);
		p = strcmp(hex, S) == 0 ? P_YES : P_NO;
	}
	/* 2. a bundle whose model file is S, naming external data (and F has data files) */
	if (p == P_NO && code == OXP_OK && info.external > 0) {
		oxst_sha256_resume(&c, NULL, 0);
		oxst_sha256_update(&c, m, (size_t)size);
		oxst_sha256_final(&c, hex);
		int dfd = -1;
		if (strcmp(hex, S) == 0 && (s = store->ops->open_data(store, F, &dfd)) == OXST_OK) {
			close(dfd);
			p = P_YES;
		} else if (strcmp(hex, S) == 0) {
			p = of_status(s);
		}
	}
	munmap(m, (size_t)size);
	return p;
}

/* ---------------------------------------------------------------------------------------
 * The table and its file (mu held)
 */
static slink *find(oxs_links *l, const char *S)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i].structure, S) == 0)
			return &l->v[i];
	return NULL;
}

static slink *add(oxs_links *l)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		slink *v = realloc(l->v, cap * sizeof(*v));
		if (v == NULL)
			return NULL;
		l->v = v;
		l->cap = cap;
	}
	slink *k = &l->v[l->n++];
	memset(k, 0, sizeof(*k));
	return k;
}

static bool line_of(const slink *k, char *out, size_t size)
{
	int n = snprintf(out, size, "%s %s%s%s\n", k->structure, k->full, k->loc[0] ? " " : "", k->loc);
	return n > 0 && (size_t)n < size;
}

/* Append k's line durably. */
static bool append(oxs_links *l, const slink *k)
{
	char line[2 * OXST_ID_LEN + OXP_CUT_LOCATION_MAX + 4];
	if (!line_of(k, line, sizeof(line)))
		return false;
	int fd = open(l->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return false;
	bool ok = write(fd, line, strlen(line)) == (ssize_t)strlen(line) && fdatasync(fd) == 0;
	close(fd);
	return ok;
}

/* The file again with the table's lines only (a temporary, synced, renamed over it). */
static bool rewrite(oxs_links *l)
{
	char tmp[PATH_MAX + 8], line[2 * OXST_ID_LEN + OXP_CUT_LOCATION_MAX + 4];
	snprintf(tmp, sizeof(tmp), "%s.tmp", l->path);
	FILE *f = fopen(tmp, "we");
	if (f == NULL)
		return false;
	bool ok = true;
	for (size_t i = 0; ok && i < l->n; i++)
		ok = line_of(&l->v[i], line, sizeof(line)) && fputs(line, f) >= 0;
	ok = fflush(f) == 0 && fdatasync(fileno(f)) == 0 && ok;
	ok = fclose(f) == 0 && ok;
	if (!ok || rename(tmp, l->path) != 0) {
		(void)unlink(tmp);
		return false;
	}
	return true;
}

/* Lines "S F" (before decision 82) or "S F location"; torn or malformed ones are left. */
static void load(oxs_links *l)
{
	FILE *f = fopen(l->path, "re");
	if (f == NULL)
		return;
	char line[2 * OXST_ID_LEN + OXP_CUT_LOCATION_MAX + 8];
	while (fgets(line, sizeof(line), f) != NULL) {
		size_t n = strlen(line);
		if (n < 2 * OXST_ID_LEN + 2 || line[n - 1] != '\n' || line[OXST_ID_LEN] != ' ' ||
		    (n > 2 * OXST_ID_LEN + 2 && line[2 * OXST_ID_LEN + 1] != ' '))
			continue;
		line[n - 1] = '\0';
		slink k;
		memset(&k, 0, sizeof(k));
		memcpy(k.structure, line, OXST_ID_LEN);
		memcpy(k.full, line + OXST_ID_LEN + 1, OXST_ID_LEN);
		size_t ln = n > 2 * OXST_ID_LEN + 2 ? n - 1 - (2 * OXST_ID_LEN + 2) : 0;
		if (ln >= sizeof(k.loc))
			continue;
		memcpy(k.loc, line + 2 * OXST_ID_LEN + 2, ln);
		slink *d;
		if (!oxst_id_valid(k.structure) || !oxst_id_valid(k.full) || find(l, k.structure) != NULL ||
		    (d = add(l)) == NULL)
			continue;
		*d = k;
	}
	fclose(f);
}

/* ---------------------------------------------------------------------------------------
 * The check at start
 */
static void log_link(const char *level, const char *msg, const slink *k)
{
	char extra[2 * OXST_ID_LEN + 64];
	snprintf(extra, sizeof(extra), ",\"structure\":\"%s\",\"model\":\"%s\"", k->structure, k->full);
	oxs_log(level, msg, extra);
}

static void *check_main(void *arg)
{
	oxs_links *l = arg;
	pthread_mutex_lock(&l->mu);
	while (!l->stop) {
		size_t left = 0;
		bool changed = false;
		for (size_t i = 0; i < l->n && !l->stop;) {
			if (l->v[i].state != L_PENDING) {
				i++;
				continue;
			}
			slink k = l->v[i];
			pthread_mutex_unlock(&l->mu);
			char name[OXST_META_STR] = "";
			if (k.loc[0] == '\0')
				kept_name(l->store, k.full, name, sizeof(name));
			char loc[OXP_CUT_LOCATION_MAX + 1];
			(void)oxp_cut_location(k.loc[0] ? k.loc : name, loc, sizeof(loc));
			proof p = prove(l->store, k.structure, k.full, loc);
			pthread_mutex_lock(&l->mu);
			/* the table only grows meanwhile: i is still k */
			if (p == P_YES) {
				l->v[i++].state = L_PROVEN;
			} else if (p == P_NO) {
				log_link("warn", "structure link not proven from the stored bytes: dropped", &k);
				l->v[i] = l->v[--l->n];
				l->dropped++;
				changed = true;
			} else {
				i++;
				left++;
			}
		}
		if (changed && !rewrite(l))
			oxs_log("warn", "cannot rewrite the structure links file (the check drops the "
			        "lines again at the next start)", "");
		if (left == 0)
			break;
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += RETRY_SECONDS;
		while (!l->stop && pthread_cond_timedwait(&l->cv, &l->mu, &until) == 0) {
		}
	}
	pthread_mutex_unlock(&l->mu);
	return NULL;
}

/* ---------------------------------------------------------------------------------------
 * The interface
 */
oxs_links *oxs_links_open(const char *dir, oxst_store *store)
{
	oxs_links *l = calloc(1, sizeof(*l));
	if (l == NULL)
		return NULL;
	if (snprintf(l->path, sizeof(l->path), "%s/links", dir) >= (int)sizeof(l->path)) {
		free(l);
		return NULL;
	}
	l->store = store;
	pthread_mutex_init(&l->mu, NULL);
	pthread_cond_init(&l->cv, NULL);
	load(l);
	if (l->n > 0) {
		l->thread_on = pthread_create(&l->thread, NULL, check_main, l) == 0;
		if (!l->thread_on)
			oxs_log("warn", "cannot start the check of structure links: none is served", "");
	}
	return l;
}

void oxs_links_free(oxs_links *l)
{
	if (l == NULL)
		return;
	pthread_mutex_lock(&l->mu);
	l->stop = true;
	pthread_cond_broadcast(&l->cv);
	pthread_mutex_unlock(&l->mu);
	if (l->thread_on)
		pthread_join(l->thread, NULL);
	pthread_cond_destroy(&l->cv);
	pthread_mutex_destroy(&l->mu);
	free(l->v);
	free(l);
}

bool oxs_links_moved(oxs_links *l, const char *id, char full[OXST_ID_LEN + 1])
{
	if (l == NULL || id[0] == '\0')
		return false;
	pthread_mutex_lock(&l->mu);
	const slink *k = find(l, id);
	bool ok = k != NULL && k->state == L_PROVEN;
	if (ok)
		memcpy(full, k->full, OXST_ID_LEN + 1);
	pthread_mutex_unlock(&l->mu);
	return ok;
}

oxs_link_verdict oxs_links_prove(oxs_links *l, const char *structure, const char *full,
                                 const char *name)
{
	slink k;
	memset(&k, 0, sizeof(k));
	if (l == NULL || !oxst_id_valid(structure) || !oxst_id_valid(full))
		return OXS_LINK_REFUTED;
	pthread_mutex_lock(&l->mu);
	bool had = find(l, structure) != NULL;
	pthread_mutex_unlock(&l->mu);
	if (had)
		return OXS_LINK_HAD;
	memcpy(k.structure, structure, OXST_ID_LEN + 1);
	memcpy(k.full, full, OXST_ID_LEN + 1);
	(void)oxp_cut_location(name, k.loc, sizeof(k.loc));
	proof p = prove(l->store, structure, full, k.loc);
	if (p != P_YES) {
		log_link("info", p == P_NO ? "structure link refused: not proven from the stored bytes"
		                           : "structure link not made: the proof could not be made now",
		         &k);
		return p == P_NO ? OXS_LINK_REFUTED : OXS_LINK_UNKNOWN;
	}
	pthread_mutex_lock(&l->mu);
	oxs_link_verdict v = OXS_LINK_HAD;
	slink *d;
	if (find(l, structure) == NULL) { /* a link proven meanwhile stays: the first wins */
		v = OXS_LINK_UNKNOWN;
		k.state = L_PROVEN;
		if (append(l, &k) && (d = add(l)) != NULL) {
			*d = k;
			v = OXS_LINK_MADE;
		}
	}
	pthread_mutex_unlock(&l->mu);
	if (v == OXS_LINK_MADE)
		log_link("info", "structure linked to its whole model (proven)", &k);
	return v;
}

void oxs_links_counts(oxs_links *l, uint64_t *served, uint64_t *pending, uint64_t *dropped)
{
	*served = *pending = *dropped = 0;
	if (l == NULL)
		return;
	pthread_mutex_lock(&l->mu);
	for (size_t i = 0; i < l->n; i++)
		*(l->v[i].state == L_PROVEN ? served : pending) += 1;
	*dropped = l->dropped;
	pthread_mutex_unlock(&l->mu);
}
