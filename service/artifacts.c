/*
 * artifacts.c — what is computed from a stored model and cached: the summary JSON, the
 * full JSON document, and graph renderings (SVG, DOT, layout JSON) per option set.
 *
 * Lookup order: the memory cache (answered on the HTTP thread, no allocation), then the
 * store's cached renderings (a work thread reads the file), then computing it: documents
 * on a work thread from the parsed model, layouts on a layout thread that runs
 * oxr_render_isolated() (a worker process with CPU, memory and wall-clock limits).
 * Concurrent requests for the same artifact join one "flight": the work is done once and
 * every waiting connection is resumed with the result.  Layout failures are remembered
 * for a minute so that a model that times out cannot be made to time out again and again.
 */
#include "service/artifacts.h"
#include "parser/oxp.h"
#include "render/oxr.h"
#include "service/art.h"
#include "service/cache.h"
#include "service/clock.h"
#include "service/embed.h"
#include "service/gzip.h"
#include "service/hash.h"
#include "service/heat_svc.h"
#include "service/isolate.h"
#include "service/jobs.h"
#include "service/log.h"
#include "service/metrics.h"
#include "service/models.h"
#include "service/preview.h"
#include "service/reply.h"
#include "service/request.h"
#include "service/server.h"
#include "store/oxst.h"

#include <errno.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define FAILURE_TTL_MS 60000

typedef struct flight {
	oxs_art art;
	oxs_server *srv;
	oxs_req *waiters;
	oxs_job job;
	struct flight *next;
} flight;

struct oxs_flights {
	pthread_mutex_t mu;
	flight *list;
};

oxs_flights *oxs_flights_new(void)
{
	oxs_flights *f = calloc(1, sizeof(*f));
	if (f != NULL)
		pthread_mutex_init(&f->mu, NULL);
	return f;
}

void oxs_flights_free(oxs_flights *f)
{
	if (f == NULL)
		return;
	pthread_mutex_destroy(&f->mu);
	free(f);
}

/* Drawn by the layout worker: graphs, diffs and heat. */
static bool laid_out(const oxs_art *a)
{
	return a->kind == OXS_ART_GRAPH || a->kind == OXS_ART_DIFF || a->kind == OXS_ART_HEAT;
}

static const char *art_type(const oxs_art *a)
{
	if (a->kind == OXS_ART_TENSOR && a->u.tensor.opt.npy)
		return "application/octet-stream";
	if (!laid_out(a))
		return "application/json";
	if (a->kind == OXS_ART_DIFF && a->u.diff.md)
		return "text/markdown; charset=utf-8";
	if (a->raster)
		return "image/png";
	switch (a->fmt) {
	case OXR_FMT_SVG: return "image/svg+xml; charset=utf-8";
	case OXR_FMT_DOT: return "text/vnd.graphviz; charset=utf-8";
	case OXR_FMT_LAYOUT_JSON: return "application/json";
	}
	return "application/octet-stream";
}

/* The headers of a 200 or 304 answer of a: content-addressed (immutable) for stored
 * models; for --models-dir files, whose bytes may change under the same path, the ETag
 * with "no-cache" (revalidate each time). */
static void art_headers(struct MHD_Response *resp, const oxs_server *srv, const oxs_art *a,
                        const char *etag, const char *type)
{
	if (a->src[0] == '\0') {
		oxs_response_immutable(resp, srv, etag, type, a->id, oxs_art_ext(a));
	} else {
		oxs_response_common(resp, type);
		MHD_add_response_header(resp, "ETag", etag);
		oxs_response_cache(resp, srv, false);
		/* named after the file's version id, as stored models' renderings after theirs */
		oxs_response_disposition(resp, a->id, oxs_art_ext(a));
	}
}

/* ---------------------------------------------------------------------------------------
 * Entries
 */

/* Give e its gzip'd variant of data[0..len) (its body) when worth it, and count it in
 * the entry's cost: compressed once here, sent to every client that accepts it. */
static void entry_gzip(oxs_centry *e, const void *data, size_t len)
{
	if (oxs_response_gzip(e->resp, e->nm, e->etag, data, len, e->type, &e->gz, &e->gz_nm,
	                      e->gz_etag, &e->gz_len))
		e->cost += e->gz_len;
}

/* An entry answering with `data` (taken; freed with the response). */
static oxs_centry *entry_from_data(const oxs_server *srv, const oxs_art *a, char *data,
                                   size_t len)
{
	oxs_centry *e = calloc(1, sizeof(*e));
	struct MHD_Response *resp =
	    e ? MHD_create_response_from_buffer_with_free_callback(len, data, free) : NULL;
	struct MHD_Response *nm = resp ? MHD_create_response_from_buffer(0, (void *)"",
	                                                                 MHD_RESPMEM_PERSISTENT)
	                               : NULL;
	if (nm == NULL) {
		if (resp != NULL)
			MHD_destroy_response(resp);
		else
			free(data);
		free(e);
		return NULL;
	}
	oxs_etag_of(data, len, e->etag);
	e->status = 200;
	e->type = art_type(a);
	e->data = data;
	e->len = len;
	e->fd = -1;
	e->resp = resp;
	e->nm = nm;
	e->cost = len + sizeof(*e) + strlen(a->key) + 1024;
	atomic_init(&e->refs, 1);
	art_headers(resp, srv, a, e->etag, e->type);
	art_headers(nm, srv, a, e->etag, NULL);
	entry_gzip(e, data, len);
	return e;
}

/* An entry answering from an open file (taken) too large to hold in memory; its ETag is
 * the hash of the content, as for entries in memory (hashed once per load). */
static oxs_centry *entry_from_fd(const oxs_server *srv, const oxs_art *a, int fd,
                                 uint64_t size)
{
	char h[OXST_ID_LEN + 1];
	oxs_centry *e = calloc(1, sizeof(*e));
	struct MHD_Response *resp = NULL, *nm = NULL;
	if (e != NULL && oxst_sha256_fd(fd, h))
		resp = MHD_create_response_from_fd64(size, fd);
	if (resp != NULL)
		nm = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
	if (nm == NULL) {
		if (resp != NULL)
			MHD_destroy_response(resp);
		else
			close(fd);
		free(e);
		return NULL;
	}
	snprintf(e->etag, sizeof(e->etag), "\"%.32s\"", h);
	e->status = 200;
	e->type = art_type(a);
	e->fd = fd;
	e->len = (size_t)size;
	e->resp = resp;
	e->nm = nm;
	e->cost = 1 << 20; /* not memory but an open file: at most budget / 1 MiB of them */
	atomic_init(&e->refs, 1);
	art_headers(resp, srv, a, e->etag, e->type);
	art_headers(nm, srv, a, e->etag, NULL);
	/* the gzip'd variant is held in memory (a fifth to a twentieth of the file), read
	 * from a mapping of the file: no copy of the plain bytes on the heap */
	void *map = size > 0 && size <= SIZE_MAX && oxs_gzip_worth(e->type, (size_t)size)
	                ? mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0)
	                : MAP_FAILED;
	if (map != MAP_FAILED) {
		entry_gzip(e, map, (size_t)size);
		munmap(map, (size_t)size);
	}
	return e;
}

/* A failure as an entry (JSON error body); NULL when out of memory. */
static oxs_centry *entry_error(unsigned status, const char *code, const char *message,
                               const char *extra)
{
	oxs_centry *e = calloc(1, sizeof(*e));
	size_t len = 0;
	const char *body = NULL;
	struct MHD_Response *resp =
	    e != NULL ? oxs_error_response(status, code, message, extra, &body, &len) : NULL;
	if (resp == NULL) {
		free(e);
		return NULL;
	}
	e->data = body; /* lives as long as resp, which the entry holds */
	e->status = status;
	e->resp = resp;
	e->type = "application/json";
	e->fd = -1;
	e->len = len;
	e->cost = len + sizeof(*e) + 256;
	atomic_init(&e->refs, 1);
	return e;
}

/* ---------------------------------------------------------------------------------------
 * Flights
 */
static void default_on_art(oxs_req *r, oxs_centry *e)
{
	oxs_reply_entry(r, e);
}

/* Answer every waiter of f with e (NULL: out of memory), resume them, free f. */
static void flight_finish(flight *f, oxs_centry *e)
{
	oxs_flights *fl = f->srv->flights;
	pthread_mutex_lock(&fl->mu);
	for (flight **pp = &fl->list; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == f) {
			*pp = f->next;
			break;
		}
	}
	oxs_req *w = f->waiters;
	f->waiters = NULL;
	pthread_mutex_unlock(&fl->mu);
	while (w != NULL) {
		oxs_req *next = w->next_waiter;
		w->next_waiter = NULL;
		if (e != NULL)
			w->on_art(w, e);
		else
			oxs_reply_error(w, 503, "out_of_memory", "", "out of memory");
		oxs_resume(w);
		w = next;
	}
	oxs_cache_release(e);
	free(f);
}

static void flight_fail(flight *f, unsigned status, const char *code, const char *message)
{
	flight_finish(f, entry_error(status, code, message, NULL));
}

static void flight_cancel(oxs_job *j)
{
	flight *f = (flight *)((char *)j - offsetof(flight, job));
	flight_fail(f, 503, "shutting_down", "the server is shutting down");
}

/* Keep e in the memory cache and answer the flight with it. */
static void flight_done(flight *f, oxs_centry *e)
{
	if (e != NULL)
		oxs_cache_add(f->srv->cache, f->art.key, e);
	flight_finish(f, e);
}

/* Read the stored rendering of a, if any: an entry, or NULL. */
static oxs_centry *load_stored(oxs_server *srv, const oxs_art *a)
{
	int fd;
	uint64_t size;
	if (a->src[0] != '\0' || a->name[0] == '\0')
		return NULL; /* --models-dir files and previews are not kept in the store */
	if (srv->store->ops->get_rendering(srv->store, a->id, a->name, &fd, &size) != OXST_OK)
		return NULL;
	if (size > srv->cfg.memory_cache / 8 || size > SIZE_MAX / 2)
		return entry_from_fd(srv, a, fd, size);
	char *data = oxst_read_all(fd, size);
	oxs_centry *e = data ? entry_from_data(srv, a, data, size) : NULL;
	if (e != NULL && e->cost > srv->cfg.memory_cache / 8) {
		/* with its gzip'd variant it is more than the cache keeps (an eighth): it would be
		 * read and compressed again for every request.  Plain from the file and gzip'd
		 * from memory instead, which is kept (compressed twice, once per load) */
		oxs_centry *fe = entry_from_fd(srv, a, fd, size); /* closes fd when it fails */
		if (fe == NULL)
			return e;
		oxs_cache_release(e);
		return fe;
	}
	close(fd);
	return e;
}

/* Keep the bytes in the store (best effort: a full store only costs the cache), then
 * make the entry. */
static oxs_centry *store_and_entry(oxs_server *srv, const oxs_art *a, oxr_buf *out)
{
	oxst_status st = a->src[0] != '\0' || a->name[0] == '\0'
	                     ? OXST_OK
	                     : srv->store->ops->put_rendering(srv->store, a->id, a->name,
	                                                      out->data, out->len);
	if (st != OXST_OK && st != OXST_E_NOT_FOUND)
		oxs_logf("warn", "rendering %s of %s not stored: %s", a->name, a->id,
		         oxst_status_name(st));
	size_t len;
	char *data = oxr_buf_steal(out, &len);
	if (data == NULL) {
		data = strdup("");
		len = 0;
		if (data == NULL)
			return NULL;
	}
	return entry_from_data(srv, a, data, len);
}

/* Compute a summary or document artifact from a parsed model into an entry; on failure
 * NULL with *status and err set. */
/* A JSON document (summary or document.json), in a process of its own (isolate.c) unless
 * --isolation=off: the checks, shapes and quantization figures it derives from the model
 * are computed by rules the model sets. */
#define DOC_MAX ((size_t)1 << 30)

typedef struct doc_call {
	const oxp_model *m;
	const oxp_dag *d;
	oxr_doc_kind kind;
	const oxp_cost_bind *cost; /* cost.json with these dims, instead of the document */
} doc_call;

static oxr_code doc_compute(const doc_call *c, oxr_buf *out, oxr_error *err)
{
	if (c->cost != NULL)
		return oxr_cost_json(c->m, c->d, c->cost, out, err);
	return oxr_doc_json(c->m, c->d, c->kind, out, err);
}

static unsigned doc_status(oxr_code rc)
{
	return rc == OXR_E_TOO_BIG ? 422 : rc == OXR_E_NOMEM ? 503 : 500;
}

#ifdef OXS_FAULT_INJECTION
/* The fault-injection build (tests/preview/isolation.py): a model whose main graph is
 * named __fault_doc_segv faults while its document is built. */
static void inject_fault(const oxp_model *m)
{
	const oxp_model_proto *mp = oxp_model_proto_get(m);
	if (mp != NULL && mp->graph != NULL && oxp_str_eq(mp->graph->name, "__fault_doc_segv")) {
		volatile int *volatile p = NULL;
		*p = 1;
	}
}
#endif

static void doc_fn(void *ctx, oxs_preview_out *out)
{
	const doc_call *c = ctx;
#ifdef OXS_FAULT_INJECTION
	inject_fault(c->m);
#endif
	oxr_error rerr;
	memset(&rerr, 0, sizeof(rerr));
	oxr_code rc = doc_compute(c, &out->body, &rerr);
	if (rc != OXR_OK) {
		out->status = doc_status(rc);
		snprintf(out->code, sizeof(out->code), "%s", oxr_code_name(rc));
		snprintf(out->message, sizeof(out->message), "%s", rerr.message);
	}
}

/* code (may be NULL) gets the failure's own code when the document's process crashed or
 * overran ("document_crashed", ...); err then holds its message alone, else "code: message". */
static oxs_centry *compute_doc(oxs_server *srv, const oxs_art *a, const oxp_model *m,
                               const oxp_dag *d, unsigned *status, char *err, size_t errsize,
                               char *code, size_t codesize)
{
	oxr_buf doc, out;
	oxr_error rerr;
	memset(&rerr, 0, sizeof(rerr));
	oxr_buf_init(&doc, 0);
	oxr_buf_init(&out, 0);
	oxs_centry *e = NULL;
	if (d == NULL) { /* a tensor upload */
		const oxp_tensor *t = oxp_model_tensor_get(m);
		if (a->kind != OXS_ART_SUMMARY || t == NULL) {
			*status = 422;
			snprintf(err, errsize, "this upload is a lone tensor (TensorProto), not a model: "
			                       "only its summary and /tensors/ previews exist");
			goto done;
		}
		if (!oxs_preview_summary(&out, a, m, t)) {
			*status = 503;
			snprintf(err, errsize, "out of memory");
			goto done;
		}
		e = store_and_entry(srv, a, &out);
		goto done;
	}
	doc_call dc = {m, d, a->kind == OXS_ART_SUMMARY ? OXR_DOC_SUMMARY : OXR_DOC_FULL, NULL};
	oxp_cost_bind bind;
	if (a->kind == OXS_ART_COST) {
		if (oxp_cost_bind_parse(&bind, a->u.cost.dims, NULL) != OXP_OK) { /* checked by the route */
			*status = 400;
			snprintf(err, errsize, "bad_query: malformed dims");
			goto done;
		}
		dc.cost = &bind;
	}
	if (srv->cfg.isolation) {
		oxs_preview_out o;
		oxs_isolated(srv, OXS_ISO_DOCUMENT, doc_fn, &dc, -1, DOC_MAX, &o);
		if (o.status != 0) {
			*status = o.status;
			if (code != NULL && strncmp(o.code, "document_", 9) == 0) {
				snprintf(code, codesize, "%s", o.code);
				snprintf(err, errsize, "%s", o.message);
			} else {
				snprintf(err, errsize, "%s: %s", o.code, o.message);
			}
			oxs_preview_out_free(&o);
			goto done;
		}
		oxr_buf_free(&doc);
		doc = o.body; /* moved */
		oxr_buf_free(&o.stats);
	} else {
		oxr_code rc = doc_compute(&dc, &doc, &rerr);
		if (rc != OXR_OK) {
			*status = doc_status(rc);
			snprintf(err, errsize, "%s: %s", oxr_code_name(rc), rerr.message);
			goto done;
		}
	}
	if (a->kind == OXS_ART_SUMMARY) {
		oxr_buf_printf(&out, "{\"id\":\"%s\",\"size\":%zu,\"kind\":\"model\",\"summary\":",
		               a->id, oxp_model_size(m));
		oxr_buf_append(&out, doc.data, doc.len);
		oxr_buf_append(&out, ",", 1);
		oxs_links_json(&out, a, false);
		oxr_buf_append(&out, "}\n", 2);
		if (out.failed) {
			*status = 503;
			snprintf(err, errsize, "out of memory");
			goto done;
		}
		e = store_and_entry(srv, a, &out);
	} else {
		e = store_and_entry(srv, a, &doc);
	}
	if (e == NULL) {
		*status = 503;
		snprintf(err, errsize, "out of memory");
	}
done:
	oxr_buf_free(&doc);
	oxr_buf_free(&out);
	return e;
}

/* Load the model from the parsed-model cache and compute a document artifact. */
static oxs_centry *compute_doc_loaded(oxs_server *srv, const oxs_art *a, unsigned *status,
                                      char *err, size_t errsize, char *code, size_t codesize)
{
	oxs_mentry *me = NULL;
	oxp_error perr;
	memset(&perr, 0, sizeof(perr));
	oxst_status st = oxs_models_get(srv->models, srv->store, a->id, a->src, &me, &perr);
	if (st != OXST_OK) {
		*status = st == OXST_E_NOT_FOUND ? 404 : st == OXST_E_INVALID ? 422 : 503;
		snprintf(code, codesize, "%s",
		         st == OXST_E_INVALID ? oxp_code_name(perr.code) : oxst_status_name(st));
		if (st == OXST_E_INVALID)
			oxp_error_format(&perr, err, errsize);
		else
			snprintf(err, errsize, "model %s: %s", a->id, oxst_status_name(st));
		return NULL;
	}
	snprintf(code, codesize, oxs_mentry_dag(me) == NULL ? "tensor_upload" : "render_failed");
	oxs_centry *e = compute_doc(srv, a, oxs_mentry_model(me), oxs_mentry_dag(me), status, err,
	                            errsize, code, codesize);
	oxs_models_release(srv->models, me);
	return e;
}

oxs_centry *oxs_art_summary_now(oxs_server *srv, const char *id, const oxp_model *m,
                                const oxp_dag *d, unsigned *status, char *err, size_t errsize)
{
	oxs_art a;
	oxs_art_init(&a, OXS_ART_SUMMARY, id, OXR_FMT_SVG, NULL);
	oxs_centry *e = oxs_cache_get(srv->cache, a.key);
	if (e != NULL)
		return e;
	e = load_stored(srv, &a);
	if (e == NULL) {
		char code[64];
		if (m != NULL)
			e = compute_doc(srv, &a, m, d, status, err, errsize, NULL, 0);
		else
			e = compute_doc_loaded(srv, &a, status, err, errsize, code, sizeof(code));
	}
	if (e != NULL)
		oxs_cache_add(srv->cache, a.key, e);
	return e;
}

/* The worker's format for a pair rendering: fmt, or for a PNG its raster form
 * ("png?...", "heat-png?...": the worker draws the SVG, then rasterizes it). */
static void raster_fmt(const oxs_art *a, const char *fmt, char *buf, size_t size)
{
	if (!a->raster || !oxr_raster_format(fmt, &a->ras, buf, size))
		snprintf(buf, size, "%s", fmt);
}

/* A diff in a worker process: B (art->u.diff.other, at b_path) drawn against A (art->id, at
 * a_path), each with its external data folder when it has one (open here; the worker
 * reaches it through /proc/<our pid>/fd/N). */
static oxr_code diff_isolated(oxs_server *srv, const oxs_art *art, const char *a_path,
                              const char *b_path, oxr_buf *out, oxr_error *err)
{
	int fds[2] = {-1, -1};
	char dirs[2][64] = {"", ""};
	const char *ids[2] = {art->id, art->u.diff.other};
	for (int i = 0; i < 2; i++)
		if (srv->store->ops->open_data(srv->store, ids[i], &fds[i]) == OXST_OK)
			snprintf(dirs[i], sizeof(dirs[i]), "/proc/%ld/fd/%d", (long)getpid(), fds[i]);
	oxr_model_files a = {a_path, dirs[0]}, b = {b_path, dirs[1]};
	/* Markdown: the ids and the base URL of its links (diff.c, oxs_diff_pair) */
	const char *md_args[4] = {art->id, art->u.diff.other,
	                          art->u.diff.base[0] != '\0' ? art->u.diff.base : NULL, NULL};
	char fmt[160];
	raster_fmt(art, art->u.diff.md       ? "md"
	                : art->u.diff.layout ? "layout" /* diff.c's name of the drawing's JSON */
	                : art->fmt == OXR_FMT_LAYOUT_JSON ? "json"
	                                                  : oxr_format_ext(art->fmt),
	           fmt, sizeof(fmt));
	oxr_code rc = oxr_render_isolated_pair(srv->exe, &b, &a, fmt,
	                                       art->u.diff.md ? md_args : NULL, &art->opt, &srv->wlim,
	                                       out, err);
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return rc;
}

/* A heat drawing in a worker process (heat_svc.c): the overlay is "cost", or one stored
 * by POST /models/{id}/overlays (a rendering of the model).  An overlay's table too: it
 * is parsed and attributed there, with the layout's limits, never in the server. */
/* A stored overlay oid of model id, for the worker: *fd our descriptor of it, opath its
 * path through /proc, optimized the path of ORT's optimized model it names ("" when
 * none). */
static oxr_code overlay_open(oxs_server *srv, const char *id, const char *oid, int *fd,
                             char opath[64], char optimized[PATH_MAX], oxr_error *err)
{
	char name[96];
	uint64_t size = 0;
	optimized[0] = '\0';
	snprintf(name, sizeof(name), "overlay-%s.dat", oid);
	if (srv->store->ops->get_rendering(srv->store, id, name, fd, &size) != OXST_OK) {
		*fd = -1;
		err->code = OXR_E_NOT_FOUND;
		snprintf(err->message, sizeof(err->message), "no such overlay of this model");
		return OXR_E_NOT_FOUND;
	}
	snprintf(opath, 64, "/proc/%ld/fd/%d", (long)getpid(), *fd);
	/* attributed through ORT's optimized model: the worker reads that model too */
	char head[sizeof(OXS_OVERLAY_TAG) + 66], optid[65];
	const char *body;
	size_t blen;
	ssize_t got = pread(*fd, head, sizeof(head) - 1, 0);
	if (got > 0 && oxs_overlay_split(head, (size_t)got, optid, &body, &blen)) {
		oxst_status st = srv->store->ops->model_path(srv->store, optid, optimized, PATH_MAX);
		if (st != OXST_OK) {
			close(*fd);
			*fd = -1;
			err->code = st == OXST_E_NOT_FOUND ? OXR_E_NOT_FOUND : OXR_E_IO;
			snprintf(err->message, sizeof(err->message), "%s",
			         st == OXST_E_NOT_FOUND ? "no optimized model of this overlay"
			                                : "cannot read the optimized model");
			return err->code;
		}
	}
	return OXR_OK;
}

static oxr_code heat_isolated(oxs_server *srv, const oxs_art *art, const char *path,
                              oxr_buf *out, oxr_error *err)
{
	static const char *const scales[] = {"linear", "log", "thresholds"};
	char opath[64] = "cost", optimized[PATH_MAX] = "", bpath[64], boptimized[PATH_MAX] = "";
	int fd = -1, bfd = -1;
	oxr_code rc = OXR_OK;
	if (strcmp(art->u.heat.overlay, "cost") != 0)
		rc = overlay_open(srv, art->id, art->u.heat.overlay, &fd, opath, optimized, err);
	bool cmp = art->u.heat.compare[0] != '\0';
	if (rc == OXR_OK && cmp) /* a comparison: B too */
		rc = overlay_open(srv, art->id, art->u.heat.compare, &bfd, bpath, boptimized, err);
	const char *args[] = {scales[art->u.heat.scale % 3], art->u.heat.metric,
	                      optimized[0] || cmp ? optimized : NULL, cmp ? bpath : NULL,
	                      boptimized, NULL};
	oxr_model_files m = {path, ""}, other = {opath, ""};
	char fmt[160];
	if (art->u.heat.table)
		snprintf(fmt, sizeof(fmt), "heat-table");
	else
		raster_fmt(art, art->fmt == OXR_FMT_DOT ? "heat-dot" : art->fmt == OXR_FMT_LAYOUT_JSON
		                                                          ? "heat-json" : "heat-svg",
		           fmt, sizeof(fmt));
	if (rc == OXR_OK)
		rc = oxr_render_isolated_pair(srv->exe, &m, &other, fmt, args, &art->opt, &srv->wlim,
		                              out, err);
	if (fd >= 0)
		close(fd);
	if (bfd >= 0)
		close(bfd);
	return rc;
}

/* Layout thread: run the worker process. */
static void flight_layout(oxs_job *j)
{
	flight *f = (flight *)((char *)j - offsetof(flight, job));
	oxs_server *srv = f->srv;
	char path[PATH_MAX];
	if (f->art.src[0] != '\0') {
		/* a --models-dir file: the worker process opens our descriptor of it */
		snprintf(path, sizeof(path), "/proc/%ld/fd/%s", (long)getpid(),
		         strrchr(f->art.src, '/') + 1);
	} else {
		oxst_status st = srv->store->ops->model_path(srv->store, f->art.id, path, sizeof(path));
		if (st != OXST_OK) {
			unsigned status = oxs_store_http_status(st);
			flight_fail(f, status, status == 404 ? "not_found" : oxst_status_name(st),
			            status == 404 ? "no such model" : "cannot read the model");
			return;
		}
	}
	char b_path[PATH_MAX] = "";
	if (f->art.kind == OXS_ART_DIFF) {
		/* B may be in the object store only: an outage is a 503, not a 404 */
		oxst_status st = srv->store->ops->model_path(srv->store, f->art.u.diff.other, b_path,
		                                             sizeof(b_path));
		if (st != OXST_OK) {
			unsigned status = oxs_store_http_status(st);
			flight_fail(f, status, status == 404 ? "not_found" : oxst_status_name(st),
			            status == 404 ? "no such model to compare with"
			                          : "cannot read the model to compare with");
			return;
		}
	}
	oxr_buf out;
	oxr_error err;
	memset(&err, 0, sizeof(err));
	oxr_buf_init(&out, srv->wlim.max_output);
	oxs_metrics_cache(OXS_MISS);
	oxr_code rc;
	if (f->art.kind == OXS_ART_DIFF) {
		rc = diff_isolated(srv, &f->art, path, b_path, &out, &err);
	} else if (f->art.kind == OXS_ART_HEAT) {
		rc = heat_isolated(srv, &f->art, path, &out, &err);
	} else if (f->art.raster) { /* graph.png, card.png (titled by the uploaded name) */
		oxst_model_meta meta;
		const char *title = f->art.card && oxs_model_meta(srv, f->art.id, &meta) &&
		                            meta.name[0] != '\0'
		                        ? meta.name
		                        : NULL;
		rc = oxr_render_isolated_raster(srv->exe, path, &f->art.opt, f->art.card, title,
		                                &f->art.ras, &srv->wlim, &out, &err);
	} else {
		rc = oxr_render_isolated(srv->exe, path, &f->art.opt, f->art.fmt, &srv->wlim, &out,
		                         &err);
	}
	if (rc == OXR_OK) {
		oxs_metrics_layout(OXS_LAYOUT_OK);
		oxs_centry *e = store_and_entry(srv, &f->art, &out);
		oxr_buf_free(&out);
		flight_done(f, e);
		return;
	}
	oxr_buf_free(&out);
	bool killed = rc == OXR_E_TIMEOUT || rc == OXR_E_WORKER;
	oxs_metrics_layout(killed ? OXS_LAYOUT_KILLED : OXS_LAYOUT_FAILED);
	unsigned status;
	switch (rc) {
	case OXR_E_OPTION: status = 400; break;
	case OXR_E_NOT_FOUND: status = 404; break;
	case OXR_E_NOMEM: status = 503; break;
	case OXR_E_IO: status = 500; break;
	default: status = 422; break; /* too big, layout failed, timeout, worker killed, model */
	}
	oxs_logf("warn", "layout of %s failed: %s: %s", f->art.id, oxr_code_name(rc), err.message);
	oxs_centry *e = entry_error(status, oxr_code_name(rc), err.message[0] ? err.message
	                                                                      : "layout failed",
	                            NULL);
	if (e != NULL && status == 422) {
		/* remember deterministic failures for a while: no retry storm of 30 s layouts */
		e->expires_ms = oxs_now_ms() + FAILURE_TTL_MS;
		oxs_cache_add(srv->cache, f->art.key, e);
	}
	flight_finish(f, e);
}

/* True when the artifact's model is a tensor upload (it is parsed for that, usually
 * found in the parsed-model cache: uploads leave it there). */
static bool is_tensor_upload(oxs_server *srv, const oxs_art *a)
{
	oxs_mentry *me = NULL;
	if (oxs_models_get(srv->models, srv->store, a->id, a->src, &me, NULL) != OXST_OK)
		return false; /* the layout worker reports what is wrong */
	bool tensor = oxs_mentry_dag(me) == NULL;
	oxs_models_release(srv->models, me);
	return tensor;
}

/* Work thread: a tensor preview, answered from memory afterwards. */
static void flight_preview(flight *f)
{
	oxs_preview_out o;
	oxs_preview_run(f->srv, &f->art, &o);
	oxs_centry *e = NULL;
	if (o.status != 0) {
		e = entry_error(o.status, o.code, o.message, o.extra);
		oxs_preview_out_free(&o);
		flight_finish(f, e);
		return;
	}
	size_t len = 0;
	char *data = oxr_buf_steal(&o.body, &len);
	oxs_preview_out_free(&o);
	if (data == NULL)
		data = strdup("");
	e = data ? entry_from_data(f->srv, &f->art, data, len) : NULL;
	if (e != NULL && f->art.u.tensor.opt.npy) {
		struct MHD_Response *both[2] = {e->resp, e->nm};
		for (int i = 0; i < 2; i++) {
			MHD_add_response_header(both[i], "X-Npy-Dtype", o.npy_descr);
			if (o.widened_from[0] != '\0')
				MHD_add_response_header(both[i], "X-Widened-From", o.widened_from);
		}
	}
	flight_done(f, e);
}

/* Work thread: the stored copy, else compute (documents here, layouts handed on). */
static void flight_load(oxs_job *j)
{
	flight *f = (flight *)((char *)j - offsetof(flight, job));
	oxs_server *srv = f->srv;
	oxs_centry *e = load_stored(srv, &f->art);
	if (e != NULL) {
		oxs_metrics_cache(OXS_HIT_STORE);
		flight_done(f, e);
		return;
	}
	if (f->art.kind == OXS_ART_TENSOR) {
		oxs_metrics_cache(OXS_MISS);
		flight_preview(f);
		return;
	}
	if (f->art.kind == OXS_ART_GRAPH && is_tensor_upload(srv, &f->art)) {
		oxs_centry *te = entry_error(422, "tensor_upload",
		                             "this upload is a lone tensor (TensorProto), not a model: "
		                             "it has no graph; see its /tensors/ preview",
		                             NULL);
		if (te != NULL)
			oxs_cache_add(srv->cache, f->art.key, te);
		flight_finish(f, te);
		return;
	}
	if (laid_out(&f->art)) {
		f->job.run = flight_layout;
		if (!oxs_pool_submit(srv->layout, &f->job))
			flight_fail(f, 503, "layout_queue_full",
			            "too many layouts waiting; retry later");
		return;
	}
	oxs_metrics_cache(OXS_MISS);
	unsigned status = 500;
	char err[600], code[64];
	e = compute_doc_loaded(srv, &f->art, &status, err, sizeof(err), code, sizeof(code));
	if (e == NULL) {
		flight_fail(f, status, code, err);
		return;
	}
	flight_done(f, e);
}

void oxs_art_request(oxs_req *r, const oxs_art *a, bool suspended)
{
	oxs_server *srv = r->srv;
	if (r->on_art == NULL)
		r->on_art = default_on_art;
	oxs_centry *e = oxs_cache_get(srv->cache, a->key);
	if (e != NULL) {
		if (e->status == 200)
			oxs_metrics_cache(OXS_HIT_MEMORY);
		r->on_art(r, e);
		oxs_cache_release(e);
		if (suspended)
			oxs_resume(r);
		return;
	}
	if (!suspended)
		oxs_suspend(r);
	oxs_flights *fl = srv->flights;
	pthread_mutex_lock(&fl->mu);
	flight *f = fl->list;
	while (f != NULL && strcmp(f->art.key, a->key) != 0)
		f = f->next;
	if (f != NULL) {
		r->next_waiter = f->waiters;
		f->waiters = r;
		pthread_mutex_unlock(&fl->mu);
		return;
	}
	f = calloc(1, sizeof(*f));
	if (f == NULL) {
		pthread_mutex_unlock(&fl->mu);
		oxs_reply_error(r, 503, "out_of_memory", "", "out of memory");
		oxs_resume(r);
		return;
	}
	f->art = *a;
	f->srv = srv;
	f->waiters = r;
	f->next = fl->list;
	fl->list = f;
	pthread_mutex_unlock(&fl->mu);
	f->job.run = flight_load;
	f->job.cancel = flight_cancel;
	if (!oxs_pool_submit(srv->work, &f->job))
		flight_fail(f, 503, "busy", "the server is busy; retry later");
}
