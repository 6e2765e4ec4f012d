/*
 * local.c — the local-folder model store (the embedded default behind oxst_ops).
 *
 * Layout under the root folder:
 *   lock                      flock()ed while a server uses the store
 *   models/ab/<id>.onnx       the models, by content id (SHA-256), fanned out by prefix
 *   renderings/<id>/<name>    cached renderings and documents of a model
 *   data/<id>/<location>      external data files of a model uploaded with them
 *   meta/<id>.json            what was kept with a model at upload (its file's name, ...)
 *   tmp/                      spool files of uploads and temporaries (emptied at open)
 *   quarantine/               files found misnamed or corrupt at open, kept for people
 *
 * Writes are write-temp, fsync, rename, fsync(dir): after a crash at any moment a model
 * is either complete under its name or absent.  An in-memory index (sorted by id, plus
 * least-recently-used lists) answers lookups and listing and enforces the byte budget:
 * renderings are evicted first, models only when allowed.
 *
 * Verification (the files hash to their ids) happens at open, or, with
 * verify_background, on a thread after open and before any model not yet checked is
 * first read: start-up then does not grow with the bytes stored.
 */
#include "store/internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PATH_BUF 4096
#define NAME_MAX_LEN 96

typedef struct lru_link {
	struct lru_link *prev, *next;
} lru_link;

typedef struct model_ent model_ent;

typedef struct rend_ent {
	lru_link lru;          /* first member: the global renderings LRU */
	struct rend_ent *next; /* in its model's list */
	model_ent *model;
	uint64_t size;
	char name[NAME_MAX_LEN + 1];
} rend_ent;

struct model_ent {
	lru_link lru; /* first member: the models LRU */
	rend_ent *renderings;
	uint64_t size;
	uint64_t data; /* bytes of its external data files (data/<id>/) */
	int64_t created;
	bool verified;         /* hashed to its id (at open, after it, or written here) */
	bool rend_scanned;     /* its renderings/<id>/ folder is in the index */
	bool meta_read;        /* meta/<id>.json was looked for; meta is NULL when absent */
	oxst_model_meta *meta;
	char id[OXST_ID_LEN + 1];
};

typedef struct local_store {
	oxst_store base;
	char root[PATH_BUF / 2];
	int lock_fd;
	bool locked; /* the flock is ours: tmp/ may be cleaned */
	bool nosync; /* a cache: writes are not fsync'ed */
	pthread_mutex_t mu;
	model_ent **ids; /* sorted by id */
	size_t n, cap;
	lru_link models_lru, rend_lru; /* heads: next = least recently used */
	uint64_t model_bytes, rend_bytes, nrend, reserved;
	uint64_t budget;
	bool evict_models;
	uint64_t evicted_models, evicted_rend, removed_tmp, quarantined;
	/* opened without verify: a thread indexes renderings and removes leftovers after
	 * open, then (verify_background) checks every model; its progress under mu */
	pthread_t verifier;
	bool verifier_started, verifying, verify_bg;
	atomic_bool verify_stop;
	uint64_t verified, to_verify;
	struct timespec opened;  /* leftovers are older (CLOCK_REALTIME_COARSE: the clock of
	                            file times) */
	char (*data_ids)[OXST_ID_LEN + 1]; /* at open: models with a data/<id>/ folder, sorted */
	size_t ndata_ids;
} local_store;

static atomic_uint_fast64_t tmp_counter;

/* ---------------------------------------------------------------------------------------
 * Small helpers
 */
static void lru_init(lru_link *h)
{
	h->prev = h->next = h;
}

static void lru_unlink(lru_link *l)
{
	l->prev->next = l->next;
	l->next->prev = l->prev;
	l->prev = l->next = l;
}

/* Append at the most-recently-used end. */
static void lru_push(lru_link *h, lru_link *l)
{
	l->prev = h->prev;
	l->next = h;
	h->prev->next = l;
	h->prev = l;
}

static void lru_touch(lru_link *h, lru_link *l)
{
	lru_unlink(l);
	lru_push(h, l);
}

static void seterr(char *err, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void seterr(char *err, size_t size, const char *fmt, ...)
{
	if (err == NULL || size == 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, size, fmt, ap);
	va_end(ap);
}

static oxst_status errno_status(int e)
{
	if (e == ENOSPC || e == EFBIG || e == EDQUOT)
		return OXST_E_NOSPACE;
	if (e == ENOENT)
		return OXST_E_NOT_FOUND;
	if (e == ENOMEM)
		return OXST_E_NOMEM;
	return OXST_E_IO;
}

static bool path_fmt(char *out, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static bool path_fmt(char *out, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(out, size, fmt, ap);
	va_end(ap);
	return n >= 0 && (size_t)n < size;
}

static int fsync_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int rc = fsync(fd);
	int e = errno;
	close(fd);
	errno = e;
	return rc;
}

/* fsync, unless the store is a cache (no_sync): a crash may then tear a file, which the
 * verification after the next start finds and removes. */
static int sync_fd(const local_store *s, int fd)
{
	return s->nosync ? 0 : fsync(fd);
}

static int sync_dir(const local_store *s, const char *path)
{
	return s->nosync ? 0 : fsync_dir(path);
}

/* mkdir that accepts an existing folder; *made tells whether it was created. */
static int mkdir_once(const char *path, bool *made)
{
	if (made != NULL)
		*made = false;
	if (mkdir(path, 0700) == 0) {
		if (made != NULL)
			*made = true;
		return 0;
	}
	return errno == EEXIST ? 0 : -1;
}

static bool name_valid(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n > NAME_MAX_LEN || name[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		      c == '-'))
			return false;
	}
	return true;
}

/* Remove a folder and the files in it (renderings/<id>/ has no subfolders, data/<id>/
 * at most 8 levels; deeper ones are left), never following symbolic links. */
static void remove_tree(int dirfd_parent, const char *name, int depth)
{
	int fd = openat(dirfd_parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		(void)unlinkat(dirfd_parent, name, 0);
		return;
	}
	DIR *d = fdopendir(fd);
	if (d == NULL) {
		close(fd);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (unlinkat(fd, e->d_name, 0) == 0 || errno != EISDIR)
			continue;
		if (depth < 12)
			remove_tree(fd, e->d_name, depth + 1);
		else
			(void)unlinkat(fd, e->d_name, AT_REMOVEDIR);
	}
	closedir(d);
	(void)unlinkat(dirfd_parent, name, AT_REMOVEDIR);
}

void oxst_remove_path(const char *path)
{
	char dir[PATH_BUF];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash == NULL || slash[1] == '\0')
		return;
	*slash = '\0';
	int fd = open(dir[0] ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	remove_tree(fd, slash + 1, 0);
	close(fd);
}

/* ---------------------------------------------------------------------------------------
 * Index (callers hold s->mu)
 */
static size_t lower_bound(const local_store *s, const char *id)
{
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(s->ids[mid]->id, id) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static model_ent *find_model(const local_store *s, const char *id)
{
	size_t i = lower_bound(s, id);
	return i < s->n && strcmp(s->ids[i]->id, id) == 0 ? s->ids[i] : NULL;
}

/* Room for one more entry in the index. */
static bool index_grow(local_store *s)
{
	if (s->n < s->cap)
		return true;
	size_t cap = s->cap ? s->cap * 2 : 64;
	model_ent **p = realloc(s->ids, cap * sizeof(*p));
	if (p == NULL)
		return false;
	s->ids = p;
	s->cap = cap;
	return true;
}

static bool index_insert(local_store *s, model_ent *m)
{
	if (!index_grow(s))
		return false;
	size_t i = lower_bound(s, m->id);
	memmove(s->ids + i + 1, s->ids + i, (s->n - i) * sizeof(*s->ids));
	s->ids[i] = m;
	s->n++;
	lru_push(&s->models_lru, &m->lru);
	s->model_bytes += m->size + m->data;
	return true;
}

/* At open: add without keeping the order (index_sort afterwards). */
static bool index_append(local_store *s, model_ent *m)
{
	if (!index_grow(s))
		return false;
	s->ids[s->n++] = m;
	lru_push(&s->models_lru, &m->lru);
	s->model_bytes += m->size + m->data;
	return true;
}

static int cmp_ent_id(const void *a, const void *b)
{
	return strcmp((*(model_ent *const *)a)->id, (*(model_ent *const *)b)->id);
}

static void index_sort(local_store *s)
{
	if (s->n > 1)
		qsort(s->ids, s->n, sizeof(*s->ids), cmp_ent_id);
}

static void rend_forget(local_store *s, rend_ent *r)
{
	lru_unlink(&r->lru);
	s->rend_bytes -= r->size;
	s->nrend--;
	free(r);
}

/* Drop a model from the index with its renderings (files untouched). */
static void index_remove(local_store *s, model_ent *m)
{
	size_t i = lower_bound(s, m->id);
	if (i < s->n && s->ids[i] == m) {
		memmove(s->ids + i, s->ids + i + 1, (s->n - i - 1) * sizeof(*s->ids));
		s->n--;
	}
	lru_unlink(&m->lru);
	s->model_bytes -= m->size + m->data;
	rend_ent *r = m->renderings;
	while (r != NULL) {
		rend_ent *next = r->next;
		rend_forget(s, r);
		r = next;
	}
	free(m->meta);
	free(m);
}

static rend_ent *find_rend(const model_ent *m, const char *name)
{
	for (rend_ent *r = m->renderings; r != NULL; r = r->next)
		if (strcmp(r->name, name) == 0)
			return r;
	return NULL;
}

static void unlink_rend(model_ent *m, rend_ent *r)
{
	for (rend_ent **p = &m->renderings; *p != NULL; p = &(*p)->next) {
		if (*p == r) {
			*p = r->next;
			return;
		}
	}
}

/* Index a rendering of m (mu held); false when out of memory. */
static bool add_rend(local_store *s, model_ent *m, const char *name, uint64_t size)
{
	rend_ent *r = calloc(1, sizeof(*r));
	if (r == NULL)
		return false;
	snprintf(r->name, sizeof(r->name), "%.96s", name);
	r->model = m;
	r->size = size;
	r->next = m->renderings;
	m->renderings = r;
	lru_init(&r->lru);
	lru_push(&s->rend_lru, &r->lru);
	s->rend_bytes += size;
	s->nrend++;
	return true;
}

static void model_file(const local_store *s, const char *id, char *out, size_t size)
{
	(void)path_fmt(out, size, "%s/models/%.2s/%s.onnx", s->root, id, id);
}

static void evict_rendering(local_store *s, rend_ent *r)
{
	char path[PATH_BUF];
	if (path_fmt(path, sizeof(path), "%s/renderings/%s/%s", s->root, r->model->id, r->name))
		(void)unlink(path);
	unlink_rend(r->model, r);
	rend_forget(s, r);
	s->evicted_rend++;
}

/* Remove root/<sub>/<id> and everything in it. */
static void remove_model_dir(const local_store *s, const char *sub, const char *id)
{
	char dir[PATH_BUF];
	if (path_fmt(dir, sizeof(dir), "%s/%s", s->root, sub)) {
		int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0) {
			remove_tree(fd, id, 0);
			close(fd);
		}
	}
}

static void remove_meta(const local_store *s, const char *id)
{
	char path[PATH_BUF];
	if (path_fmt(path, sizeof(path), "%s/meta/%s.json", s->root, id))
		(void)unlink(path);
}

static void evict_model(local_store *s, model_ent *m)
{
	char path[PATH_BUF];
	model_file(s, m->id, path, sizeof(path));
	(void)unlink(path);
	remove_model_dir(s, "renderings", m->id);
	remove_model_dir(s, "data", m->id);
	remove_meta(s, m->id);
	index_remove(s, m);
	s->evicted_models++;
}

/* Make room for `need` more bytes within the budget: least recently used renderings
 * first, then (when allowed and may_evict_models) models other than keep_id.  Returns
 * true when the bytes fit; the caller then adds them to s->reserved. */
static bool make_room(local_store *s, uint64_t need, bool may_evict_models)
{
	if (s->budget == 0)
		return true;
	for (;;) {
		uint64_t used = s->model_bytes + s->rend_bytes + s->reserved;
		if (used <= s->budget && need <= s->budget - used)
			return true;
		if (s->rend_lru.next != &s->rend_lru) {
			evict_rendering(s, (rend_ent *)s->rend_lru.next);
			continue;
		}
		if (may_evict_models && s->evict_models && s->models_lru.next != &s->models_lru) {
			evict_model(s, (model_ent *)s->models_lru.next);
			continue;
		}
		return false;
	}
}

/* ---------------------------------------------------------------------------------------
 * External data folders (data/<id>/)
 */
#define DATA_MAX_FILES 4096
#define DATA_MAX_DEPTH 8

typedef struct data_walk {
	oxst_bundle_file *files; /* with hash: each file, its size and SHA-256 (caller frees) */
	size_t n, cap;
	uint64_t bytes;
	bool hash;              /* collect files[] and hash them; else only count */
} data_walk;

/* Walk folder fd (prefix: its location, "" at the top): regular files with one link and
 * folders only, never through a symbolic link, at most DATA_MAX_DEPTH levels and
 * DATA_MAX_FILES files.  False when anything else is found or a read fails. */
static bool walk_data(int fd, const char *prefix, int depth, data_walk *w)
{
	DIR *d = fdopendir(fd);
	if (d == NULL) {
		close(fd);
		return false;
	}
	bool ok = true;
	struct dirent *e;
	while (ok && (e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char loc[OXST_LOCATION_MAX + 1];
		struct stat st;
		if (!path_fmt(loc, sizeof(loc), "%s%s%s", prefix, prefix[0] ? "/" : "", e->d_name) ||
		    fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
			ok = false;
		} else if (S_ISDIR(st.st_mode) && depth + 1 < DATA_MAX_DEPTH) {
			int sub = openat(fd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			ok = sub >= 0 && walk_data(sub, loc, depth + 1, w);
		} else if (!S_ISREG(st.st_mode) || st.st_nlink != 1 || w->n >= DATA_MAX_FILES) {
			ok = false;
		} else {
			w->bytes += (uint64_t)st.st_size;
			if (w->hash && w->n == w->cap) {
				size_t cap = w->cap ? w->cap * 2 : 16;
				void *p = realloc(w->files, cap * sizeof(*w->files));
				ok = p != NULL;
				if (ok) {
					w->files = p;
					w->cap = cap;
				}
			}
			if (ok && w->hash) {
				oxst_bundle_file *f = &w->files[w->n];
				snprintf(f->location, sizeof(f->location), "%s", loc);
				f->size = (uint64_t)st.st_size;
				int ff = openat(fd, e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
				ok = ff >= 0 && oxst_sha256_fd(ff, f->sha256);
				if (ff >= 0)
					close(ff);
			}
			w->n++;
		}
	}
	closedir(d);
	return ok;
}

/* Bytes of model id's data folder (0 when it has none) and, when w is given, its files
 * (w->files is the caller's to free).  False when the folder holds something else than
 * plain files and folders, or cannot be read. */
static bool data_size(const local_store *s, const char *id, uint64_t *bytes, data_walk *w)
{
	data_walk local = {NULL, 0, 0, 0, false};
	if (w == NULL)
		w = &local;
	char dir[PATH_BUF];
	if (!path_fmt(dir, sizeof(dir), "%s/data/%s", s->root, id))
		return false;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		*bytes = 0;
		return errno == ENOENT;
	}
	if (!walk_data(fd, "", 0, w))
		return false;
	*bytes = w->bytes;
	return true;
}

bool oxst_data_files(const char *dir, oxst_bundle_file **files, size_t *n, uint64_t *bytes)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	data_walk w = {NULL, 0, 0, 0, true};
	if (!walk_data(fd, "", 0, &w)) {
		free(w.files);
		return false;
	}
	*files = w.files;
	*n = w.n;
	if (bytes != NULL)
		*bytes = w.bytes;
	return true;
}

int oxst_create_beneath(int dirfd, const char *loc, int *err)
{
	int fd = -1;
	*err = oxp_open_beneath(&fd, dirfd, loc, strlen(loc), O_RDWR | O_CREAT | O_EXCL,
	                        OXP_BENEATH_MKDIRS);
	return *err == 0 ? fd : -1;
}

/* fsync every folder of a tree (the files were fsync'ed as they were written). */
static bool fsync_tree(int fd, int depth)
{
	DIR *d = fdopendir(fd);
	if (d == NULL) {
		close(fd);
		return false;
	}
	bool ok = fsync(dirfd(d)) == 0;
	struct dirent *e;
	while (ok && depth < DATA_MAX_DEPTH && (e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub >= 0)
			ok = fsync_tree(sub, depth + 1);
	}
	closedir(d);
	return ok;
}

static oxst_status op_spool_dir(oxst_store *base, char *path, size_t pathsize)
{
	local_store *s = (local_store *)base;
	unsigned char rnd[8];
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		memset(rnd, 0, sizeof(rnd));
	char hex[17];
	oxst_hex(hex, rnd, sizeof(rnd));
	if (!path_fmt(path, pathsize, "%s/tmp/data-%ld-%" PRIu64 "-%s", s->root, (long)getpid(),
	              (uint64_t)atomic_fetch_add(&tmp_counter, 1), hex))
		return OXST_E_INVALID;
	return mkdir(path, 0700) == 0 ? OXST_OK : errno_status(errno);
}

static oxst_status op_put_data(oxst_store *base, const char *id, const char *spool_dir)
{
	local_store *s = (local_store *)base;
	char data[PATH_BUF], target[PATH_BUF];
	if (!oxst_id_valid(id) || !path_fmt(data, sizeof(data), "%s/data", s->root) ||
	    !path_fmt(target, sizeof(target), "%s/%s", data, id))
		return OXST_E_INVALID;
	int fd = open(spool_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || !(s->nosync ? close(fd) == 0 : fsync_tree(fd, 0)))
		return errno_status(errno);
	if (renameat2(AT_FDCWD, spool_dir, AT_FDCWD, target, RENAME_NOREPLACE) != 0) {
		bool there = errno == EEXIST || errno == ENOTEMPTY;
		if (!there && (errno == EINVAL || errno == ENOSYS)) {
			/* no RENAME_NOREPLACE: a plain rename onto an existing non-empty folder
			 * fails too (ENOTEMPTY), onto a missing one it is what we want */
			if (rename(spool_dir, target) == 0)
				return sync_dir(s, data) == 0 ? OXST_OK : errno_status(errno);
			there = errno == EEXIST || errno == ENOTEMPTY;
		}
		if (!there)
			return errno_status(errno);
		/* the same bundle is stored already (same id, same bytes) */
		int tfd = open(s->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		char rel[PATH_BUF];
		const char *base_name = strrchr(spool_dir, '/');
		if (tfd >= 0 && base_name != NULL && path_fmt(rel, sizeof(rel), "tmp%s", base_name))
			remove_tree(tfd, rel, 0);
		if (tfd >= 0)
			close(tfd);
		return OXST_OK;
	}
	return sync_dir(s, data) == 0 ? OXST_OK : errno_status(errno);
}

static oxst_status ensure_verified(local_store *s, const char *id);

static oxst_status op_open_data(oxst_store *base, const char *id, int *dirfd)
{
	local_store *s = (local_store *)base;
	char dir[PATH_BUF];
	if (!oxst_id_valid(id) || !path_fmt(dir, sizeof(dir), "%s/data/%s", s->root, id))
		return OXST_E_INVALID;
	oxst_status rc = ensure_verified(s, id);
	if (rc != OXST_OK)
		return rc;
	int fd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno_status(errno);
	*dirfd = fd;
	return OXST_OK;
}

/* ---------------------------------------------------------------------------------------
 * Verification: a model's files hash to its id (oxst_bundle_id over the model and its data)
 */
static void quarantine(local_store *s, int dirfd, const char *name);
static bool write_all(int fd, const void *data, size_t len);

/* 1: model id's files hash to it; 0: they do not (or are missing); -1: a read failed. */
static int check_model(const local_store *s, const char *id)
{
	char path[PATH_BUF];
	model_file(s, id, path, sizeof(path));
	int f = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (f < 0 || fstat(f, &st) != 0) {
		int e = errno;
		if (f >= 0)
			close(f);
		return e == ENOENT || e == ELOOP ? 0 : -1;
	}
	data_walk w = {NULL, 0, 0, 0, true};
	uint64_t dbytes = 0;
	int r = 0;
	char got[OXST_ID_LEN + 1], bid[OXST_ID_LEN + 1];
	if (!S_ISREG(st.st_mode) || !data_size(s, id, &dbytes, &w))
		r = 0; /* a data folder holding anything but plain files does not match */
	else if (!oxst_sha256_fd(f, got))
		r = -1;
	else
		r = oxst_bundle_id(got, (uint64_t)st.st_size, w.files, w.n, bid) && strcmp(bid, id) == 0;
	free(w.files);
	close(f);
	return r;
}

/* Move a model that did not match into quarantine/ and forget it (mu held). */
static void quarantine_model(local_store *s, model_ent *m)
{
	char dir[PATH_BUF], name[OXST_ID_LEN + 8];
	snprintf(name, sizeof(name), "%s.onnx", m->id);
	if (path_fmt(dir, sizeof(dir), "%s/models/%.2s", s->root, m->id)) {
		int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0) {
			quarantine(s, fd, name);
			close(fd);
		}
	}
	remove_model_dir(s, "data", m->id);
	remove_model_dir(s, "renderings", m->id);
	remove_meta(s, m->id);
	index_remove(s, m);
}

/* Record the outcome r of check_model for id: verified, quarantined (OXST_E_NOT_FOUND),
 * or still unchecked after a read error (OXST_E_IO). */
static oxst_status settle(local_store *s, const char *id, int r)
{
	oxst_status rc = OXST_OK;
	bool bad = false;
	pthread_mutex_lock(&s->mu);
	model_ent *m = find_model(s, id);
	if (m == NULL) {
		rc = OXST_E_NOT_FOUND;
	} else if (m->verified) {
		rc = OXST_OK; /* settled meanwhile by another thread */
	} else if (r > 0) {
		m->verified = true;
		s->verified++;
	} else if (r == 0) {
		quarantine_model(s, m);
		s->verified++;
		bad = true;
		rc = OXST_E_NOT_FOUND;
	} else {
		rc = OXST_E_IO;
	}
	pthread_mutex_unlock(&s->mu);
	if (bad) {
		char extra[OXST_ID_LEN + 16];
		snprintf(extra, sizeof(extra), ",\"id\":\"%s\"", id);
		oxst_log("warn", "stored model does not match its id: quarantined", extra);
	}
	return rc;
}

/* Before a model is read: OXST_OK once its files were found to match. */
static oxst_status ensure_verified(local_store *s, const char *id)
{
	pthread_mutex_lock(&s->mu);
	model_ent *m = oxst_id_valid(id) ? find_model(s, id) : NULL;
	bool known = m != NULL, done = m != NULL && m->verified;
	pthread_mutex_unlock(&s->mu);
	if (!known)
		return OXST_E_NOT_FOUND;
	return done ? OXST_OK : settle(s, id, check_model(s, id));
}

static bool scan_renderings(local_store *s, int rendfd, const struct timespec *before);
static void remove_orphans(local_store *s, const char *sub, const char *suffix,
                           const struct timespec *before);

/* After an open without verify, at a lower priority than the requests: index the
 * renderings, remove what earlier runs left, meet a budget lowered since; then, with
 * verify_background, check every model not checked yet, in id order.  Start-up only
 * indexed the models. */
static void *background_main(void *arg)
{
	local_store *s = arg;
	(void)setpriority(PRIO_PROCESS, (id_t)gettid(), 10);
	int64_t t0 = oxst_now_ms();
	char path[PATH_BUF];
	int rfd = path_fmt(path, sizeof(path), "%s/renderings", s->root)
	              ? open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
	              : -1;
	if (rfd < 0 || !scan_renderings(s, rfd, &s->opened)) {
		char msg[160];
		snprintf(msg, sizeof(msg), "cannot index the store's renderings: %s", strerror(errno));
		oxst_log("warn", msg, "");
	}
	if (rfd >= 0)
		close(rfd);
	remove_orphans(s, "data", "", &s->opened);
	remove_orphans(s, "meta", ".json", &s->opened);
	pthread_mutex_lock(&s->mu);
	(void)make_room(s, 0, true); /* a budget lowered since the last run */
	char extra[200];
	snprintf(extra, sizeof(extra),
	         ",\"renderings\":%" PRIu64 ",\"removed_temporaries\":%" PRIu64 ",\"ms\":%" PRId64,
	         s->nrend, s->removed_tmp, oxst_now_ms() - t0);
	pthread_mutex_unlock(&s->mu);
	oxst_log("info", "store indexed", extra);
	if (!s->verify_bg)
		return NULL;
	t0 = oxst_now_ms();
	char cursor[OXST_ID_LEN + 1] = "";
	while (!atomic_load(&s->verify_stop)) {
		char id[OXST_ID_LEN + 1];
		bool found = false;
		pthread_mutex_lock(&s->mu);
		for (size_t i = lower_bound(s, cursor); i < s->n && !found; i++) {
			if (!s->ids[i]->verified && strcmp(s->ids[i]->id, cursor) != 0) {
				memcpy(id, s->ids[i]->id, sizeof(id));
				found = true;
			}
		}
		pthread_mutex_unlock(&s->mu);
		if (!found)
			break;
		memcpy(cursor, id, sizeof(cursor));
		(void)settle(s, id, check_model(s, id));
	}
	pthread_mutex_lock(&s->mu);
	s->verifying = false;
	snprintf(extra, sizeof(extra),
	         ",\"checked\":%" PRIu64 ",\"of\":%" PRIu64 ",\"quarantined\":%" PRIu64
	         ",\"ms\":%" PRId64 "%s",
	         s->verified, s->to_verify, s->quarantined, oxst_now_ms() - t0,
	         atomic_load(&s->verify_stop) ? ",\"interrupted\":true" : "");
	pthread_mutex_unlock(&s->mu);
	oxst_log("info", "store verified", extra);
	return NULL;
}

/* ---------------------------------------------------------------------------------------
 * Meta (meta/<id>.json)
 */
/* meta/<id>.json written from meta: through a temporary, linked in place when there is
 * none (replace false: the first upload's meta stays) or renamed over it (replace). */
static oxst_status write_meta(local_store *s, const char *id, const oxst_model_meta *meta,
                              bool replace)
{
	char tmp[PATH_BUF], path[PATH_BUF], dir[PATH_BUF];
	if (!oxst_id_valid(id) || !path_fmt(dir, sizeof(dir), "%s/meta", s->root) ||
	    !path_fmt(path, sizeof(path), "%s/%s.json", dir, id) ||
	    !path_fmt(tmp, sizeof(tmp), "%s/tmp/meta-%ld-%" PRIu64, s->root, (long)getpid(),
	              (uint64_t)atomic_fetch_add(&tmp_counter, 1)))
		return OXST_E_INVALID;
	oxr_buf b;
	oxr_buf_init(&b, 1 << 16);
	if (!oxst_meta_json(&b, meta)) {
		oxr_buf_free(&b);
		return OXST_E_NOMEM;
	}
	oxst_status rc = OXST_OK;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || !write_all(fd, b.data, b.len) || sync_fd(s, fd) != 0)
		rc = errno_status(errno);
	else if (replace ? rename(tmp, path) != 0 : link(tmp, path) != 0 && errno != EEXIST)
		rc = errno_status(errno);
	else if (sync_dir(s, dir) != 0)
		rc = errno_status(errno);
	if (fd >= 0)
		close(fd);
	(void)unlink(tmp);
	oxr_buf_free(&b);
	return rc;
}

static oxst_status op_put_meta(oxst_store *base, const char *id, const oxst_model_meta *meta)
{
	return write_meta((local_store *)base, id, meta, false);
}

/* meta/<id>.json into *out; false when there is none (or it cannot be read). */
static bool read_meta(const local_store *s, const char *id, oxst_model_meta *out)
{
	char path[PATH_BUF], buf[8192];
	if (!path_fmt(path, sizeof(path), "%s/meta/%s.json", s->root, id))
		return false;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof(buf));
	close(fd);
	return n > 0 && (size_t)n < sizeof(buf) && oxst_meta_parse(buf, (size_t)n, out);
}

/* Meta fills in one at a time in this process: read, then replace, without a second
 * filler's write landing between the two (between processes sharing a root, the later
 * of two simultaneous fills wins: both are names the same bytes were uploaded under). */
static pthread_mutex_t name_mu = PTHREAD_MUTEX_INITIALIZER;

static oxst_status op_name_meta(oxst_store *base, const char *id, const char *name)
{
	local_store *s = (local_store *)base;
	if (!oxst_id_valid(id) || name == NULL || name[0] == '\0' || strlen(name) >= OXST_META_STR)
		return OXST_E_INVALID;
	oxst_status rc = OXST_OK;
	oxst_model_meta meta;
	pthread_mutex_lock(&name_mu);
	if (!read_meta(s, id, &meta))
		rc = OXST_E_NOT_FOUND;
	else if (meta.name[0] == '\0') { /* not named yet (a name kept stays: OXST_OK) */
		snprintf(meta.name, sizeof(meta.name), "%s", name);
		rc = write_meta(s, id, &meta, true);
		if (rc == OXST_OK) { /* what listings answer from memory follows */
			pthread_mutex_lock(&s->mu);
			model_ent *m = find_model(s, id);
			if (m != NULL && m->meta != NULL)
				*m->meta = meta;
			pthread_mutex_unlock(&s->mu);
		}
	}
	pthread_mutex_unlock(&name_mu);
	return rc;
}

/* ---------------------------------------------------------------------------------------
 * Operations
 */
static oxst_status op_spool(oxst_store *base, int *fd, char *path, size_t pathsize)
{
	local_store *s = (local_store *)base;
	unsigned char rnd[8];
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		memset(rnd, 0, sizeof(rnd));
	char hex[17];
	oxst_hex(hex, rnd, sizeof(rnd));
	uint64_t n = atomic_fetch_add(&tmp_counter, 1);
	if (!path_fmt(path, pathsize, "%s/tmp/up-%ld-%" PRIu64 "-%s", s->root, (long)getpid(), n,
	              hex))
		return OXST_E_INVALID;
	int f = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (f < 0)
		return errno_status(errno);
	*fd = f;
	return OXST_OK;
}

static oxst_status op_put_model(oxst_store *base, const char *id, const char *spool_path, int fd,
                                bool *created)
{
	local_store *s = (local_store *)base;
	if (!oxst_id_valid(id))
		return OXST_E_INVALID;
	pthread_mutex_lock(&s->mu);
	model_ent *have = find_model(s, id);
	if (have != NULL)
		lru_touch(&s->models_lru, &have->lru);
	pthread_mutex_unlock(&s->mu);
	if (have != NULL) {
		(void)unlink(spool_path);
		*created = false;
		return OXST_OK;
	}
	struct stat st;
	if (sync_fd(s, fd) != 0 || fstat(fd, &st) != 0)
		return errno_status(errno);
	uint64_t data = 0;
	if (!data_size(s, id, &data, NULL))
		return OXST_E_IO;
	uint64_t size = (uint64_t)st.st_size + data;

	pthread_mutex_lock(&s->mu);
	bool fits = make_room(s, size, true);
	if (fits)
		s->reserved += size;
	pthread_mutex_unlock(&s->mu);
	if (!fits)
		return OXST_E_NOSPACE;

	oxst_status rc = OXST_OK;
	char dir[PATH_BUF], target[PATH_BUF], models[PATH_BUF];
	bool made = false, stored = false;
	if (!path_fmt(models, sizeof(models), "%s/models", s->root) ||
	    !path_fmt(dir, sizeof(dir), "%s/%.2s", models, id)) {
		rc = OXST_E_INVALID;
		goto out;
	}
	model_file(s, id, target, sizeof(target));
	if (mkdir_once(dir, &made) != 0 || (made && sync_dir(s, models) != 0)) {
		rc = errno_status(errno);
		goto out;
	}
	if (renameat2(AT_FDCWD, spool_path, AT_FDCWD, target, RENAME_NOREPLACE) != 0) {
		if (errno == EINVAL || errno == ENOSYS) {
			/* no RENAME_NOREPLACE here: link() refuses to replace as well */
			if (link(spool_path, target) == 0) {
				(void)unlink(spool_path);
				stored = true;
			} else if (errno != EEXIST) {
				rc = errno_status(errno);
				goto out;
			}
		} else if (errno != EEXIST) {
			rc = errno_status(errno);
			goto out;
		}
		if (!stored)
			(void)unlink(spool_path); /* a concurrent upload of the same bytes won */
	} else {
		stored = true;
	}
	if (stored && sync_dir(s, dir) != 0) {
		rc = errno_status(errno);
		goto out;
	}
out:
	pthread_mutex_lock(&s->mu);
	s->reserved -= size;
	if (rc == OXST_OK && stored && find_model(s, id) == NULL) {
		model_ent *m = calloc(1, sizeof(*m));
		if (m != NULL) {
			memcpy(m->id, id, OXST_ID_LEN + 1);
			m->size = size - data;
			m->data = data;
			m->created = (int64_t)time(NULL);
			m->verified = true; /* hashed on its way in */
			m->rend_scanned = true;
			lru_init(&m->lru);
			if (!index_insert(s, m))
				free(m);
		}
	}
	pthread_mutex_unlock(&s->mu);
	if (rc == OXST_OK)
		*created = stored;
	return rc;
}

/* Look the model up and mark it used; false when absent. */
static bool touch_model(local_store *s, const char *id, uint64_t *size)
{
	if (!oxst_id_valid(id))
		return false;
	pthread_mutex_lock(&s->mu);
	model_ent *m = find_model(s, id);
	if (m != NULL) {
		lru_touch(&s->models_lru, &m->lru);
		if (size != NULL)
			*size = m->size;
	}
	pthread_mutex_unlock(&s->mu);
	return m != NULL;
}

static oxst_status open_file(const char *path, int *fd, uint64_t *size)
{
	int f = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (f < 0)
		return errno_status(errno);
	struct stat st;
	if (fstat(f, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(f);
		return OXST_E_IO;
	}
	*fd = f;
	*size = (uint64_t)st.st_size;
	return OXST_OK;
}

static oxst_status op_stat_model(oxst_store *base, const char *id, unsigned flags,
                                 uint64_t *size)
{
	local_store *s = (local_store *)base;
	if (!oxst_id_valid(id))
		return OXST_E_NOT_FOUND;
	pthread_mutex_lock(&s->mu);
	model_ent *m = find_model(s, id);
	bool known = m != NULL, verified = m != NULL && m->verified;
	uint64_t sz = m != NULL ? m->size : 0;
	pthread_mutex_unlock(&s->mu);
	if (!known)
		return OXST_E_NOT_FOUND;
	if (!verified) {
		if (flags & OXST_STAT_NONBLOCK)
			return OXST_E_AGAIN; /* hashing it is work for a job thread */
		oxst_status rc = ensure_verified(s, id);
		if (rc != OXST_OK)
			return rc;
	}
	if (size != NULL)
		*size = sz;
	return OXST_OK;
}

static oxst_status op_open_model(oxst_store *base, const char *id, int *fd, uint64_t *size)
{
	local_store *s = (local_store *)base;
	oxst_status rc = ensure_verified(s, id);
	if (rc != OXST_OK)
		return rc;
	if (!touch_model(s, id, NULL))
		return OXST_E_NOT_FOUND;
	char path[PATH_BUF];
	model_file(s, id, path, sizeof(path));
	return open_file(path, fd, size);
}

static oxst_status op_model_path(oxst_store *base, const char *id, char *path, size_t pathsize)
{
	local_store *s = (local_store *)base;
	oxst_status rc = ensure_verified(s, id);
	if (rc != OXST_OK)
		return rc;
	if (!touch_model(s, id, NULL))
		return OXST_E_NOT_FOUND;
	model_file(s, id, path, pathsize);
	return OXST_OK;
}

static oxst_status op_list(oxst_store *base, const char *after, oxst_model_info *out, size_t max,
                           size_t *n, uint64_t *total)
{
	local_store *s = (local_store *)base;
	pthread_mutex_lock(&s->mu);
	size_t i = lower_bound(s, after ? after : "");
	if (after != NULL && i < s->n && strcmp(s->ids[i]->id, after) == 0)
		i++;
	size_t k = 0;
	bool unread = false;
	for (; i < s->n && k < max; i++, k++) {
		const model_ent *m = s->ids[i];
		memcpy(out[k].id, m->id, OXST_ID_LEN + 1);
		out[k].size = m->size;
		out[k].created = m->created;
		out[k].has_meta = m->meta != NULL;
		if (m->meta != NULL)
			out[k].meta = *m->meta;
		unread = unread || !m->meta_read;
	}
	*n = k;
	if (total != NULL)
		*total = s->n;
	pthread_mutex_unlock(&s->mu);
	if (!unread)
		return OXST_OK;
	/* meta files not read yet: read them without the lock, then keep what was found */
	for (size_t j = 0; j < k; j++)
		if (!out[j].has_meta)
			out[j].has_meta = read_meta(s, out[j].id, &out[j].meta);
	pthread_mutex_lock(&s->mu);
	for (size_t j = 0; j < k; j++) {
		model_ent *m = find_model(s, out[j].id);
		if (m == NULL || m->meta_read)
			continue;
		m->meta_read = true;
		if (out[j].has_meta && (m->meta = malloc(sizeof(*m->meta))) != NULL)
			*m->meta = out[j].meta;
	}
	pthread_mutex_unlock(&s->mu);
	return OXST_OK;
}

static oxst_status op_delete(oxst_store *base, const char *id)
{
	local_store *s = (local_store *)base;
	if (!oxst_id_valid(id))
		return OXST_E_NOT_FOUND;
	pthread_mutex_lock(&s->mu);
	model_ent *m = find_model(s, id);
	if (m == NULL) {
		pthread_mutex_unlock(&s->mu);
		return OXST_E_NOT_FOUND;
	}
	index_remove(s, m);
	pthread_mutex_unlock(&s->mu);
	char path[PATH_BUF], dir[PATH_BUF];
	model_file(s, id, path, sizeof(path));
	if (unlink(path) != 0 && errno != ENOENT)
		return errno_status(errno);
	if (path_fmt(dir, sizeof(dir), "%s/models/%.2s", s->root, id))
		(void)sync_dir(s, dir);
	remove_model_dir(s, "renderings", id);
	remove_model_dir(s, "data", id);
	remove_meta(s, id);
	return OXST_OK;
}

static oxst_status op_get_rendering(oxst_store *base, const char *id, const char *name, int *fd,
                                    uint64_t *size)
{
	local_store *s = (local_store *)base;
	if (!oxst_id_valid(id) || !name_valid(name))
		return OXST_E_INVALID;
	pthread_mutex_lock(&s->mu);
	model_ent *m = find_model(s, id);
	rend_ent *r = m ? find_rend(m, name) : NULL;
	if (r != NULL) {
		lru_touch(&s->rend_lru, &r->lru);
		lru_touch(&s->models_lru, &m->lru);
	}
	/* renderings not indexed yet (just after open): the folder may have it */
	bool unscanned = m != NULL && r == NULL && !m->rend_scanned;
	pthread_mutex_unlock(&s->mu);
	if (r == NULL && !unscanned)
		return OXST_E_NOT_FOUND;
	char path[PATH_BUF];
	if (!path_fmt(path, sizeof(path), "%s/renderings/%s/%s", s->root, id, name))
		return OXST_E_INVALID;
	oxst_status rc = open_file(path, fd, size);
	if (rc == OXST_OK && unscanned) {
		pthread_mutex_lock(&s->mu);
		m = find_model(s, id);
		if (m != NULL && find_rend(m, name) == NULL)
			(void)add_rend(s, m, name, *size);
		pthread_mutex_unlock(&s->mu);
	}
	return rc;
}

/* Write all of data to fd; false with errno set on failure. */
static bool write_all(int fd, const void *data, size_t len)
{
	const char *p = data;
	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return false;
		}
		p += w;
		len -= (size_t)w;
	}
	return true;
}

static oxst_status op_put_rendering(oxst_store *base, const char *id, const char *name,
                                    const void *data, size_t len)
{
	local_store *s = (local_store *)base;
	if (!oxst_id_valid(id) || !name_valid(name))
		return OXST_E_INVALID;
	pthread_mutex_lock(&s->mu);
	bool exists = find_model(s, id) != NULL;
	bool fits = exists && make_room(s, len, false);
	if (fits)
		s->reserved += len;
	pthread_mutex_unlock(&s->mu);
	if (!exists)
		return OXST_E_NOT_FOUND;
	if (!fits)
		return OXST_E_NOSPACE;

	oxst_status rc = OXST_OK;
	char dir[PATH_BUF], tmp[PATH_BUF], path[PATH_BUF];
	int fd = -1;
	if (!path_fmt(dir, sizeof(dir), "%s/renderings/%s", s->root, id) ||
	    !path_fmt(path, sizeof(path), "%s/%s", dir, name) ||
	    !path_fmt(tmp, sizeof(tmp), "%s/.tmp-%" PRIu64, dir, atomic_fetch_add(&tmp_counter, 1))) {
		rc = OXST_E_INVALID;
		goto out;
	}
	if (mkdir_once(dir, NULL) != 0) {
		rc = errno_status(errno);
		goto out;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || !write_all(fd, data, len) || sync_fd(s, fd) != 0 || rename(tmp, path) != 0) {
		rc = errno_status(errno);
		(void)unlink(tmp);
		goto out;
	}
out:
	if (fd >= 0)
		close(fd);
	pthread_mutex_lock(&s->mu);
	s->reserved -= len;
	model_ent *m = find_model(s, id);
	if (rc == OXST_OK && m == NULL) {
		(void)unlink(path); /* the model was deleted meanwhile */
		rc = OXST_E_NOT_FOUND;
	} else if (rc == OXST_OK) {
		rend_ent *r = find_rend(m, name);
		if (r != NULL) {
			s->rend_bytes -= r->size;
			r->size = len;
			s->rend_bytes += len;
			lru_touch(&s->rend_lru, &r->lru);
		} else {
			(void)add_rend(s, m, name, len);
		}
	}
	pthread_mutex_unlock(&s->mu);
	return rc;
}

static void op_stats(oxst_store *base, oxst_stats *out)
{
	local_store *s = (local_store *)base;
	pthread_mutex_lock(&s->mu);
	out->models = s->n;
	out->model_bytes = s->model_bytes;
	out->renderings = s->nrend;
	out->rendering_bytes = s->rend_bytes;
	out->budget = s->budget;
	out->evicted_models = s->evicted_models;
	out->evicted_renderings = s->evicted_rend;
	out->removed_temporaries = s->removed_tmp;
	out->quarantined = s->quarantined;
	out->verifying = s->verifying;
	out->verified = s->verified;
	out->to_verify = s->to_verify;
	pthread_mutex_unlock(&s->mu);
}

static bool op_writable(oxst_store *base)
{
	int fd;
	char path[PATH_BUF];
	if (op_spool(base, &fd, path, sizeof(path)) != OXST_OK)
		return false;
	bool ok = write_all(fd, "ok", 2);
	close(fd);
	(void)unlink(path);
	return ok;
}

/* Remove every entry of root/tmp; returns how many. */
static uint64_t clean_tmp(const local_store *s)
{
	char dir[PATH_BUF];
	if (!path_fmt(dir, sizeof(dir), "%s/tmp", s->root))
		return 0;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	DIR *d = fdopendir(fd);
	if (d == NULL) {
		close(fd);
		return 0;
	}
	uint64_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (unlinkat(fd, e->d_name, 0) == 0)
			n++;
		else if (errno == EISDIR) {
			remove_tree(fd, e->d_name, 0);
			n++;
		}
	}
	closedir(d);
	return n;
}

static void op_close(oxst_store *base)
{
	local_store *s = (local_store *)base;
	if (s->verifier_started) {
		atomic_store(&s->verify_stop, true);
		pthread_join(s->verifier, NULL);
	}
	if (s->locked)
		(void)clean_tmp(s);
	while (s->n > 0)
		index_remove(s, s->ids[s->n - 1]);
	free(s->ids);
	if (s->lock_fd >= 0)
		close(s->lock_fd); /* releases the flock */
	pthread_mutex_destroy(&s->mu);
	free(s);
}

/* ---------------------------------------------------------------------------------------
 * Resumable transfers: <root>/uploads/<uid>/data (the bytes received, written in place at
 * their offsets) and <uid>/state (oxst_xfer_text, replaced atomically after each part is
 * synced).  Always synced, in a cache too: an acknowledged part must survive a crash.
 * A state is corrupt (OXST_E_IO: the service may remove it) only when its bytes were read
 * and are not a state, or its data file is missing or shorter than it says; a failed
 * open or read (no descriptors, no memory, EIO, EACCES) is the machine's, not the
 * transfer's: OXST_E_UNAVAILABLE / OXST_E_NOMEM, and nothing is removed (issue 35).
 */
static oxst_status transient(int e)
{
	return e == ENOMEM ? OXST_E_NOMEM : OXST_E_UNAVAILABLE;
}

static bool xfer_path(const local_store *s, char *out, size_t size, const char *uid,
                      const char *file)
{
	if (!oxst_xfer_uid_valid(uid))
		return false;
	return path_fmt(out, size, "%s/uploads/%s%s%s", s->root, uid, file[0] ? "/" : "", file);
}

/* A state written before the midstate was kept: the hash of the first x->offset bytes
 * of the data file (once; the next state written keeps it). */
static oxst_status xfer_rehash(const local_store *s, const char *uid, oxst_xfer *x)
{
	char data[PATH_BUF];
	if (!xfer_path(s, data, sizeof(data), uid, "data"))
		return OXST_E_INVALID;
	int fd = open(data, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? OXST_E_IO : transient(errno); /* a state without data */
	oxst_sha256 c;
	oxst_sha256_resume(&c, NULL, 0);
	errno = 0;
	bool whole = oxst_sha256_read(&c, fd, 0, x->offset);
	int e = errno;
	close(fd);
	if (!whole && e != 0)
		return transient(e);
	uint64_t bytes = 0;
	if (!whole || !oxst_sha256_midstate(&c, x->h, &bytes) || bytes != x->offset)
		return OXST_E_IO; /* shorter than the state says */
	return OXST_OK;
}

static oxst_status xfer_read(const local_store *s, const char *uid, oxst_xfer *x)
{
	char path[PATH_BUF];
	if (!xfer_path(s, path, sizeof(path), uid, "state"))
		return OXST_E_INVALID;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? OXST_E_NOT_FOUND : errno == ELOOP ? OXST_E_IO : transient(errno);
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof(buf));
	int e = errno;
	close(fd);
	if (n < 0)
		return transient(e);
	if (n == 0 || (size_t)n >= sizeof(buf) || !oxst_xfer_parse(buf, (size_t)n, x))
		return OXST_E_IO;
	return oxst_xfer_unhashed(x) ? xfer_rehash(s, uid, x) : OXST_OK;
}

/* Replace <uid>/state durably: a temporary, fsync, rename, fsync of the folder. */
static oxst_status xfer_write(const local_store *s, const char *uid, const oxst_xfer *x)
{
	char path[PATH_BUF], tmp[PATH_BUF], dir[PATH_BUF], buf[4096];
	size_t len = 0;
	if (!xfer_path(s, path, sizeof(path), uid, "state") ||
	    !xfer_path(s, tmp, sizeof(tmp), uid, "state.tmp") || !xfer_path(s, dir, sizeof(dir), uid, "") ||
	    !oxst_xfer_text(x, buf, sizeof(buf), &len))
		return OXST_E_INVALID;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return errno_status(errno);
	ssize_t w = write(fd, buf, len);
	bool ok = w == (ssize_t)len && fsync(fd) == 0;
	int e = w >= 0 && (size_t)w < len ? ENOSPC : errno; /* a short write: a limit met */
	close(fd);
	if (!ok || rename(tmp, path) != 0 || fsync_dir(dir) != 0) {
		e = ok ? errno : e;
		(void)unlink(tmp);
		return errno_status(e);
	}
	return OXST_OK;
}

static oxst_status op_xfer_get(oxst_store *base, const char *uid, oxst_xfer *x)
{
	return xfer_read((local_store *)base, uid, x);
}

static oxst_status op_xfer_put(oxst_store *base, const char *uid, const oxst_xfer *x)
{
	return xfer_write((local_store *)base, uid, x);
}

static oxst_status op_xfer_abort(oxst_store *base, const char *uid)
{
	local_store *s = (local_store *)base;
	char dir[PATH_BUF], up[PATH_BUF];
	if (!xfer_path(s, dir, sizeof(dir), uid, "") || !path_fmt(up, sizeof(up), "%s/uploads", s->root))
		return OXST_E_INVALID;
	oxst_remove_path(dir);
	(void)fsync_dir(up);
	return OXST_OK;
}

static oxst_status op_xfer_create(oxst_store *base, const char *uid, oxst_xfer *x, bool *created)
{
	local_store *s = (local_store *)base;
	char up[PATH_BUF], dir[PATH_BUF], data[PATH_BUF];
	*created = false;
	if (!path_fmt(up, sizeof(up), "%s/uploads", s->root) ||
	    !xfer_path(s, dir, sizeof(dir), uid, "") || !xfer_path(s, data, sizeof(data), uid, "data"))
		return OXST_E_INVALID;
	oxst_xfer cur;
	oxst_status st = xfer_read(s, uid, &cur);
	if (st == OXST_OK) {
		*x = cur;
		return OXST_OK;
	}
	if (st != OXST_E_NOT_FOUND && st != OXST_E_IO)
		return st; /* it may be readable again: nothing is removed */
	oxst_remove_path(dir); /* a corrupt leftover */
	x->backend[0] = '\0';
	int fd = -1;
	if ((mkdir(up, 0700) != 0 && errno != EEXIST) || mkdir(dir, 0700) != 0 ||
	    (fd = open(data, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600)) < 0) {
		st = errno_status(errno);
		oxst_remove_path(dir);
		return st == OXST_E_NOT_FOUND ? OXST_E_IO : st;
	}
	close(fd);
	st = xfer_write(s, uid, x);
	if (st != OXST_OK) {
		oxst_remove_path(dir);
		return st;
	}
	(void)fsync_dir(up);
	*created = true;
	return OXST_OK;
}

static oxst_status op_xfer_part_fd(oxst_store *base, const char *uid, const oxst_xfer *x,
                                   int *fd, uint64_t *at)
{
	local_store *s = (local_store *)base;
	char data[PATH_BUF];
	if (!xfer_path(s, data, sizeof(data), uid, "data"))
		return OXST_E_INVALID;
	*fd = open(data, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (*fd < 0)
		return errno == ENOENT ? OXST_E_NOT_FOUND : transient(errno);
	/* more than one link: the file was handed over (xfer_finish) and is a stored model's
	 * now (a finish stopped before the transfer was removed): never written again */
	struct stat sb;
	if (fstat(*fd, &sb) != 0 || sb.st_nlink != 1) {
		close(*fd);
		*fd = -1;
		return OXST_E_NOT_FOUND;
	}
	*at = x->offset;
	return OXST_OK;
}

static oxst_status op_xfer_part_put(oxst_store *base, const char *uid, const oxst_xfer *x,
                                    const oxst_xfer *next, int fd, uint64_t at, uint64_t len)
{
	(void)x, (void)at, (void)len;
	if (fdatasync(fd) != 0)
		return errno_status(errno);
	return next != NULL ? xfer_write((local_store *)base, uid, next) : OXST_OK;
}

static oxst_status op_xfer_finish(oxst_store *base, const char *uid, const oxst_xfer *x,
                                  int *fd, char *spool, size_t spoolsize, bool *created)
{
	local_store *s = (local_store *)base;
	char data[PATH_BUF];
	(void)x;
	*fd = -1;
	*created = false;
	if (!xfer_path(s, data, sizeof(data), uid, "data"))
		return OXST_E_INVALID;
	/* the file is handed over as a second link of the same bytes (no copy): the transfer
	 * and its state stay until the service removes them (xfer_abort) once the model is
	 * stored, so a finish that fails (the budget, the disk, memory) can be tried again
	 * without the parts; a crash leaves a temporary the store removes at start */
	int sfd = -1;
	oxst_status st = op_spool(base, &sfd, spool, spoolsize);
	if (st != OXST_OK)
		return st;
	close(sfd);
	(void)unlink(spool);
	if (link(data, spool) != 0 || (sfd = open(spool, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0) {
		st = errno_status(errno);
		(void)unlink(spool);
		return st == OXST_E_NOT_FOUND ? OXST_E_IO : st;
	}
	*fd = sfd;
	return OXST_OK;
}

static oxst_status op_xfer_list(oxst_store *base, char (*uids)[OXST_XFER_UID_LEN + 1], size_t max,
                                size_t *n)
{
	local_store *s = (local_store *)base;
	char up[PATH_BUF];
	*n = 0;
	if (!path_fmt(up, sizeof(up), "%s/uploads", s->root))
		return OXST_E_INVALID;
	DIR *d = opendir(up);
	if (d == NULL)
		return errno == ENOENT ? OXST_OK : errno_status(errno);
	for (struct dirent *e; *n < max && (e = readdir(d)) != NULL;)
		if (oxst_xfer_uid_valid(e->d_name))
			memcpy(uids[(*n)++], e->d_name, OXST_XFER_UID_LEN + 1);
	closedir(d);
	return OXST_OK;
}

/* Blobs: the local store keeps none in itself (the service keeps a bundle's data files
 * under uploads/blobs/, moves them into the bundle's data folder and stores it with
 * put_data and put_model). */
static oxst_status op_blob_stat(oxst_store *base, const char *sha, uint64_t length)
{
	(void)base, (void)length;
	return oxst_id_valid(sha) ? OXST_E_NOT_FOUND : OXST_E_INVALID;
}

static oxst_status op_put_bundle(oxst_store *base, const char *id, const char *model_sha,
                                 uint64_t model_size, const struct oxst_bundle_file *files,
                                 size_t n, bool *created)
{
	(void)base, (void)id, (void)model_sha, (void)model_size, (void)files, (void)n;
	*created = false;
	return OXST_E_NOT_FOUND; /* no blobs here */
}

static oxst_status op_blob_expire(oxst_store *base, int64_t before, uint64_t *removed)
{
	(void)base, (void)before;
	*removed = 0;
	return OXST_OK;
}

static const oxst_ops local_ops = {
    .name = "local",
    OXST_OPS_OF_FILE,
};

/* ---------------------------------------------------------------------------------------
 * Opening: recovery and indexing
 */

/* Move dirfd/name into quarantine/ under a unique name. */
static void quarantine(local_store *s, int dirfd, const char *name)
{
	char target[PATH_BUF];
	if (path_fmt(target, sizeof(target), "%s/quarantine/%s.%lld.%" PRIu64, s->root, name,
	             (long long)time(NULL), atomic_fetch_add(&tmp_counter, 1)) &&
	    renameat(dirfd, name, AT_FDCWD, target) == 0) {
		s->quarantined++;
		return;
	}
	/* cannot keep it aside: do not keep it at all */
	if (unlinkat(dirfd, name, 0) != 0 && errno == EISDIR)
		remove_tree(dirfd, name, 0);
	s->quarantined++;
}

static bool is_hex2(const char *n)
{
	return strlen(n) == 2 && ((n[0] >= '0' && n[0] <= '9') || (n[0] >= 'a' && n[0] <= 'f')) &&
	       ((n[1] >= '0' && n[1] <= '9') || (n[1] >= 'a' && n[1] <= 'f'));
}

/* True when data/<id>/ was there at open (s->data_ids, read once: a lookup per model
 * would cost a system call each). */
static int cmp_id(const void *a, const void *b)
{
	return strcmp((const char *)a, (const char *)b);
}

static bool has_data_dir(const local_store *s, const char *id)
{
	return s->ndata_ids > 0 &&
	       bsearch(id, s->data_ids, s->ndata_ids, sizeof(*s->data_ids), cmp_id) != NULL;
}

/* The ids of the data/ folder into s->data_ids, sorted. */
static bool read_data_ids(local_store *s)
{
	char dir[PATH_BUF];
	if (!path_fmt(dir, sizeof(dir), "%s/data", s->root))
		return false;
	DIR *d = opendir(dir);
	if (d == NULL)
		return errno == ENOENT;
	size_t cap = 0;
	struct dirent *e;
	bool ok = true;
	while (ok && (e = readdir(d)) != NULL) {
		if (!oxst_id_valid(e->d_name))
			continue;
		if (s->ndata_ids == cap) {
			size_t nc = cap ? cap * 2 : 16;
			void *p = realloc(s->data_ids, nc * sizeof(*s->data_ids));
			ok = p != NULL;
			if (!ok)
				break;
			s->data_ids = p;
			cap = nc;
		}
		memcpy(s->data_ids[s->ndata_ids++], e->d_name, OXST_ID_LEN + 1);
	}
	closedir(d);
	if (s->ndata_ids > 1)
		qsort(s->data_ids, s->ndata_ids, sizeof(*s->data_ids), cmp_id);
	return ok;
}

/* Check and index models/ab/<id>.onnx files of one prefix folder (verify: hash them now;
 * checked: they count as verified without it). */
static bool scan_prefix(local_store *s, int modelsfd, const char *prefix, bool verify,
                        bool checked)
{
	int fd = openat(modelsfd, prefix, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return true;
	DIR *d = fdopendir(fd);
	if (d == NULL) {
		close(fd);
		return false;
	}
	bool ok = true;
	struct dirent *e;
	while (ok && (e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char id[OXST_ID_LEN + 1];
		size_t n = strlen(e->d_name);
		bool named = n == OXST_ID_LEN + 5 && strcmp(e->d_name + OXST_ID_LEN, ".onnx") == 0 &&
		             memcmp(e->d_name, prefix, 2) == 0;
		if (named) {
			memcpy(id, e->d_name, OXST_ID_LEN);
			id[OXST_ID_LEN] = '\0';
			named = oxst_id_valid(id);
		}
		struct stat st;
		if (!named || fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(st.st_mode)) {
			quarantine(s, fd, e->d_name);
			continue;
		}
		/* a model uploaded with data files: its id covers them (oxst_bundle_id) */
		data_walk w = {NULL, 0, 0, 0, verify};
		uint64_t dbytes = 0;
		bool match = !has_data_dir(s, id) || data_size(s, id, &dbytes, &w);
		if (match && verify) {
			int f = openat(fd, e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
			char got[OXST_ID_LEN + 1], bid[OXST_ID_LEN + 1];
			match = f >= 0 && oxst_sha256_fd(f, got) &&
			        oxst_bundle_id(got, (uint64_t)st.st_size, w.files, w.n, bid) &&
			        strcmp(bid, id) == 0;
			if (f >= 0)
				close(f);
		}
		free(w.files);
		if (!match) {
			quarantine(s, fd, e->d_name);
			remove_model_dir(s, "data", id);
			continue;
		}
		model_ent *m = calloc(1, sizeof(*m));
		if (m == NULL) {
			ok = false;
			break;
		}
		memcpy(m->id, id, sizeof(id));
		m->size = (uint64_t)st.st_size;
		m->data = dbytes;
		m->created = (int64_t)st.st_mtime;
		m->verified = verify || checked;
		lru_init(&m->lru);
		if (!index_append(s, m)) {
			free(m);
			ok = false;
		}
	}
	closedir(d);
	return ok;
}

/* True when dirfd/name is a leftover of an earlier run (before: the store's open time;
 * NULL: everything there is one) — what was made since may belong to a write in progress. */
static bool leftover(int dirfd, const char *name, const struct timespec *before)
{
	struct stat st;
	return before == NULL ||
	       (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	        (st.st_mtim.tv_sec < before->tv_sec ||
	         (st.st_mtim.tv_sec == before->tv_sec && st.st_mtim.tv_nsec < before->tv_nsec)));
}

typedef struct rend_file {
	char name[NAME_MAX_LEN + 1];
	uint64_t size;
} rend_file;

/* Index renderings/<id>/ (open as fd, closed here): its files, and remove temporaries
 * and strays left by an earlier run (before: the open time; NULL: everything there is). */
static bool scan_model_renderings(local_store *s, int fd, const char *id, const struct timespec *before)
{
	DIR *rd = fdopendir(fd);
	if (rd == NULL) {
		close(fd);
		return true;
	}
	rend_file *files = NULL;
	size_t n = 0, cap = 0;
	bool ok = true;
	struct dirent *f;
	while (ok && (f = readdir(rd)) != NULL) {
		if (!strcmp(f->d_name, ".") || !strcmp(f->d_name, ".."))
			continue;
		struct stat st;
		if (!name_valid(f->d_name) ||
		    fstatat(fd, f->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) {
			if (!leftover(fd, f->d_name, before))
				continue;
			if (strncmp(f->d_name, ".tmp-", 5) == 0) {
				pthread_mutex_lock(&s->mu);
				s->removed_tmp++;
				pthread_mutex_unlock(&s->mu);
			}
			if (unlinkat(fd, f->d_name, 0) != 0 && errno == EISDIR)
				remove_tree(fd, f->d_name, 0);
			continue;
		}
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 8;
			void *p = realloc(files, nc * sizeof(*files));
			ok = p != NULL;
			if (!ok)
				break;
			files = p;
			cap = nc;
		}
		snprintf(files[n].name, sizeof(files[n].name), "%.96s", f->d_name);
		files[n++].size = (uint64_t)st.st_size;
	}
	closedir(rd);
	pthread_mutex_lock(&s->mu);
	model_ent *m = find_model(s, id);
	if (m != NULL && !m->rend_scanned) {
		for (size_t i = 0; ok && i < n; i++)
			if (find_rend(m, files[i].name) == NULL)
				ok = add_rend(s, m, files[i].name, files[i].size);
		m->rend_scanned = ok;
	}
	pthread_mutex_unlock(&s->mu);
	free(files);
	return ok;
}

/* Index renderings/<id>/<name> of every model; remove renderings of models the store does
 * not have, temporaries and strays (all of them, or with before, those of earlier runs). */
static bool scan_renderings(local_store *s, int rendfd, const struct timespec *before)
{
	DIR *d = fdopendir(dup(rendfd));
	if (d == NULL)
		return false;
	struct dirent *e;
	bool ok = true;
	while (ok && (e = readdir(d)) != NULL && !atomic_load(&s->verify_stop)) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		pthread_mutex_lock(&s->mu);
		bool known = oxst_id_valid(e->d_name) && find_model(s, e->d_name) != NULL;
		pthread_mutex_unlock(&s->mu);
		int fd = known ? openat(rendfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
		               : -1;
		if (fd >= 0)
			ok = scan_model_renderings(s, fd, e->d_name, before);
		else if (leftover(rendfd, e->d_name, before))
			remove_tree(rendfd, e->d_name, 0); /* rendering of a model we do not have */
	}
	closedir(d);
	/* the others have none (put_rendering indexes what comes from now on) */
	pthread_mutex_lock(&s->mu);
	for (size_t i = 0; ok && i < s->n; i++)
		s->ids[i]->rend_scanned = true;
	pthread_mutex_unlock(&s->mu);
	return ok;
}

/* Remove entries <id><suffix> of root/sub (data/<id>/ folders, meta/<id>.json files) of
 * models the store does not have: an upload interrupted between put_data or put_meta and
 * put_model, or a quarantined model. */
static bool owned_by_model(local_store *s, const char *name, const char *suffix)
{
	size_t n = strlen(name), sl = strlen(suffix);
	char id[OXST_ID_LEN + 1];
	if (n != OXST_ID_LEN + sl || strcmp(name + OXST_ID_LEN, suffix) != 0)
		return false;
	memcpy(id, name, OXST_ID_LEN);
	id[OXST_ID_LEN] = '\0';
	if (!oxst_id_valid(id))
		return false;
	pthread_mutex_lock(&s->mu);
	bool owned = find_model(s, id) != NULL;
	pthread_mutex_unlock(&s->mu);
	return owned;
}

static void remove_orphans(local_store *s, const char *sub, const char *suffix, const struct timespec *before)
{
	char dir[PATH_BUF];
	if (!path_fmt(dir, sizeof(dir), "%s/%s", s->root, sub))
		return;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (d == NULL) {
		if (fd >= 0)
			close(fd);
		return;
	}
	char (*names)[256] = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    owned_by_model(s, e->d_name, suffix) || !leftover(fd, e->d_name, before))
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 16;
			void *p = realloc(names, nc * sizeof(*names));
			if (p == NULL)
				break;
			names = p;
			cap = nc;
		}
		snprintf(names[n++], sizeof(names[0]), "%s", e->d_name);
	}
	for (size_t i = 0; i < n; i++) {
		remove_tree(fd, names[i], 0);
		pthread_mutex_lock(&s->mu);
		s->removed_tmp++;
		pthread_mutex_unlock(&s->mu);
	}
	free(names);
	closedir(d);
}

static int cmp_created(const void *a, const void *b)
{
	const model_ent *x = *(model_ent *const *)a, *y = *(model_ent *const *)b;
	return (x->created > y->created) - (x->created < y->created);
}

/* Start the models LRU in age order (oldest first): the best guess after a restart. */
static bool order_lru_by_age(local_store *s)
{
	if (s->n == 0)
		return true;
	model_ent **v = malloc(s->n * sizeof(*v));
	if (v == NULL)
		return false;
	memcpy(v, s->ids, s->n * sizeof(*v));
	qsort(v, s->n, sizeof(*v), cmp_created);
	for (size_t i = 0; i < s->n; i++)
		lru_touch(&s->models_lru, &v[i]->lru);
	free(v);
	return true;
}

static bool scan_models(local_store *s, bool verify, bool checked)
{
	char dir[PATH_BUF];
	if (!path_fmt(dir, sizeof(dir), "%s/models", s->root))
		return false;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return false;
	DIR *d = fdopendir(fd);
	if (d == NULL) {
		close(fd);
		return false;
	}
	/* collect the names first: quarantining renames entries while we read */
	char (*names)[256] = NULL;
	size_t n = 0, cap = 0;
	bool ok = true;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 64;
			void *p = realloc(names, nc * sizeof(*names));
			if (p == NULL) {
				ok = false;
				break;
			}
			names = p;
			cap = nc;
		}
		snprintf(names[n++], sizeof(names[0]), "%s", e->d_name);
	}
	for (size_t i = 0; ok && i < n; i++) {
		struct stat st;
		if (!is_hex2(names[i]) || fstatat(fd, names[i], &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISDIR(st.st_mode))
			quarantine(s, fd, names[i]);
		else
			ok = scan_prefix(s, fd, names[i], verify, checked);
	}
	free(names);
	closedir(d);
	return ok;
}

oxst_status oxst_local_open(oxst_store **out, const char *root,
                            const oxst_local_options *opt, char *err, size_t errsize)
{
	if (root == NULL || root[0] == '\0' || strlen(root) >= PATH_BUF / 2 - 128) {
		seterr(err, errsize, "store path empty or too long");
		return OXST_E_INVALID;
	}
	local_store *s = calloc(1, sizeof(*s));
	if (s == NULL) {
		seterr(err, errsize, "out of memory");
		return OXST_E_NOMEM;
	}
	s->base.ops = &local_ops;
	s->lock_fd = -1;
	snprintf(s->root, sizeof(s->root), "%s", root);
	pthread_mutex_init(&s->mu, NULL);
	lru_init(&s->models_lru);
	lru_init(&s->rend_lru);
	if (opt != NULL) {
		s->budget = opt->budget;
		s->evict_models = opt->evict_models;
		s->nosync = opt->no_sync && opt->verify_background;
	}
	oxst_status rc = OXST_OK;
	static const char *const subdirs[] = {"models", "renderings", "tmp", "quarantine", "data",
	                                      "meta"};
	char path[PATH_BUF];
	if (mkdir_once(root, NULL) != 0) {
		rc = errno_status(errno);
		seterr(err, errsize, "cannot create %s: %s", root, strerror(errno));
		goto fail;
	}
	for (size_t i = 0; i < sizeof(subdirs) / sizeof(subdirs[0]); i++) {
		(void)path_fmt(path, sizeof(path), "%s/%s", root, subdirs[i]);
		if (mkdir_once(path, NULL) != 0) {
			rc = errno_status(errno);
			seterr(err, errsize, "cannot create %s: %s", path, strerror(errno));
			goto fail;
		}
	}
	(void)path_fmt(path, sizeof(path), "%s/lock", root);
	s->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (s->lock_fd < 0) {
		rc = errno_status(errno);
		seterr(err, errsize, "cannot open %s: %s", path, strerror(errno));
		goto fail;
	}
	if (flock(s->lock_fd, LOCK_EX | LOCK_NB) != 0) {
		rc = errno == EWOULDBLOCK ? OXST_E_BUSY : errno_status(errno);
		seterr(err, errsize, "store %s is in use by another process", root);
		goto fail;
	}
	s->locked = true;
	s->removed_tmp = clean_tmp(s);
	clock_gettime(CLOCK_REALTIME_COARSE, &s->opened);
	bool verify = opt == NULL || opt->verify;
	s->verify_bg = !verify && opt->verify_background;
	bool scanned = read_data_ids(s) && scan_models(s, verify, !s->verify_bg);
	free(s->data_ids);
	s->data_ids = NULL;
	s->ndata_ids = 0;
	index_sort(s);
	if (!scanned || !order_lru_by_age(s)) {
		rc = OXST_E_IO;
		seterr(err, errsize, "cannot read %s/models: %s", root, strerror(errno));
		goto fail;
	}
	if (verify) {
		/* everything before returning (and everything there is a leftover) */
		(void)path_fmt(path, sizeof(path), "%s/renderings", root);
		int rfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		bool rok = rfd >= 0 && scan_renderings(s, rfd, NULL);
		if (rfd >= 0)
			close(rfd);
		if (!rok) {
			rc = OXST_E_IO;
			seterr(err, errsize, "cannot read %s: %s", path, strerror(errno));
			goto fail;
		}
		remove_orphans(s, "data", "", NULL);
		remove_orphans(s, "meta", ".json", NULL);
		pthread_mutex_lock(&s->mu);
		(void)make_room(s, 0, true); /* a budget lowered since the last run */
		pthread_mutex_unlock(&s->mu);
	} else {
		/* start-up does not grow with the store: the rest after listening */
		pthread_mutex_lock(&s->mu);
		s->to_verify = s->verify_bg ? s->n : 0;
		s->verifying = s->verify_bg && s->n > 0;
		pthread_mutex_unlock(&s->mu);
		if (pthread_create(&s->verifier, NULL, background_main, s) != 0) {
			rc = OXST_E_NOMEM;
			seterr(err, errsize, "cannot start the store's background thread");
			goto fail;
		}
		s->verifier_started = true;
	}
	*out = &s->base;
	return OXST_OK;
fail:
	op_close(&s->base);
	return rc;
}
