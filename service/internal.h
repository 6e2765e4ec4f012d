/*
 * internal.h — shared inside service/ only (never included from parser/ or render/).
 *
 * The server object, the per-request object and the pieces the service is made of:
 * job pools (jobs.c), the in-memory response cache (cache.c), the parsed-model cache
 * (models.c), artifacts = cached renderings and documents (artifacts.c), uploads
 * (upload.c), route handlers (routes.c), metrics and logs (metrics.c), per-address
 * upload rate limits (ratelimit.c), replies and their headers (reply.c) and the
 * libmicrohttpd glue (http.c).
 */
#ifndef OXS_INTERNAL_H
#define OXS_INTERNAL_H

#include "parser/oxp.h"
#include "render/oxr.h"
#include "service/clock.h"
#include "service/hash.h"
#include "service/log.h"
#include "service/oxs.h"
#include "store/oxst.h"

#include <limits.h>
#include <microhttpd.h>
#include <stdatomic.h>
#include <sys/socket.h>

#define OXS_PRINTF(a, b) __attribute__((format(printf, a, b)))

typedef struct oxs_server oxs_server;
typedef struct oxs_req oxs_req;
typedef struct oxs_resumable oxs_resumable; /* resumable.c */
typedef struct oxs_rpatch oxs_rpatch;

/* ---------------------------------------------------------------------------------------
 * Job pools (jobs.c): fixed threads, a bounded FIFO.  A job is embedded in its owner.
 */
typedef struct oxs_job oxs_job;
struct oxs_job {
	void (*run)(oxs_job *job);
	void (*cancel)(oxs_job *job); /* called instead of run when the pool stops first */
	oxs_job *next;
};

typedef struct oxs_pool oxs_pool;

/* NULL when threads cannot be started. */
oxs_pool *oxs_pool_new(const char *name, unsigned threads, unsigned capacity);
/* False when the queue is full or the pool is stopping (the job is not taken). */
bool oxs_pool_submit(oxs_pool *p, oxs_job *job);
void oxs_pool_counts(oxs_pool *p, unsigned *running, unsigned *queued);
/* Cancel queued jobs (their cancel runs), wait for running ones; later submissions
 * fail.  The pool stays valid until oxs_pool_free (which stops it first). */
void oxs_pool_stop(oxs_pool *p);
void oxs_pool_free(oxs_pool *p);

/* ---------------------------------------------------------------------------------------
 * Response cache (cache.c): ready libmicrohttpd responses by key, bounded by bytes and
 * count, least recently used out.  Entries are reference counted; a response may be
 * queued on many connections at once (libmicrohttpd counts its own references).
 */
typedef struct oxs_centry {
	unsigned status;           /* 200, or the error status of a cached failure */
	struct MHD_Response *resp; /* status response */
	struct MHD_Response *nm;   /* 304 response, NULL for failures */
	char etag[48];             /* with quotes; "" for failures */
	const char *type;          /* Content-Type */
	const char *data;          /* body when held in memory (valid while referenced) */
	size_t len;                /* body bytes */
	int fd;                    /* body file when too large for memory, else -1 */
	/* private */
	char *key;
	uint64_t hash;
	size_t cost;
	int64_t expires_ms; /* 0 = never */
	atomic_uint refs;
	bool in_table;
	struct oxs_centry *hnext, *lprev, *lnext;
} oxs_centry;

typedef struct oxs_cache oxs_cache;

oxs_cache *oxs_cache_new(uint64_t max_bytes, size_t max_entries);
void oxs_cache_free(oxs_cache *c);
/* A referenced entry, or NULL (absent or expired). */
oxs_centry *oxs_cache_get(oxs_cache *c, const char *key);
/* Add e (which the caller holds one reference to) under key, replacing an older entry;
 * entries costing more than an eighth of the budget are not kept.  The caller keeps its
 * reference either way. */
void oxs_cache_add(oxs_cache *c, const char *key, oxs_centry *e);
void oxs_cache_release(oxs_centry *e);
/* Drop every entry whose key starts with prefix. */
void oxs_cache_purge(oxs_cache *c, const char *prefix);
void oxs_cache_stats(oxs_cache *c, uint64_t *bytes, uint64_t *entries);

/* ---------------------------------------------------------------------------------------
 * Parsed models (models.c): oxp_model + oxp_dag by id, reference counted, least recently
 * used out beyond a count and a byte estimate.  Loading is done once per id.
 */
typedef struct oxs_models oxs_models;
typedef struct oxs_mentry oxs_mentry;

/* A stored file, parsed: a model (linked) or a lone TensorProto ("tensor" upload). */
typedef struct oxs_loaded {
	oxp_model *model; /* the model, or the container of the tensor */
	oxp_dag *dag;     /* NULL for a tensor */
	void *map;        /* a tensor's file mapping (models own theirs), else NULL */
	size_t map_len;
} oxs_loaded;

/* Parse path as a model and link it, or, when it does not parse as a model, as a lone
 * TensorProto with a data type (oxs_tensor_upload_parse).  On failure the model's error
 * (err) stands and *out is untouched. */
oxp_code oxs_load(oxs_loaded *out, const char *path, uint64_t budget, oxp_error *err);
void oxs_loaded_free(oxs_loaded *l);
/* buf as a "tensor" upload: a TensorProto whose data_type is set (an empty or unrelated
 * body that happens to decode as a TensorProto has none).  OXP_E_NOT_MODEL otherwise. */
oxp_code oxs_tensor_upload_parse(oxp_model **out, const void *buf, size_t len, oxp_error *err);

/* budget: the parse budget of one model (oxp_limits.max_alloc; 0: the parser's default). */
oxs_models *oxs_models_new(unsigned max_count, uint64_t max_bytes, uint64_t budget);
void oxs_models_free(oxs_models *mc);
/* Load (or find) model id: from src when not NULL/"" (a path, e.g. a --models-dir file
 * opened confined, with id naming that file's version), else from the store.  OXST_OK with
 * *out referenced; OXST_E_NOT_FOUND; OXST_E_INVALID when the file does not parse or link
 * (*perr says why). */
oxst_status oxs_models_get(oxs_models *mc, oxst_store *store, const char *id, const char *src,
                           oxs_mentry **out, oxp_error *perr);
/* Keep an already parsed file (ownership of *l passes; freed if not kept). */
void oxs_models_add(oxs_models *mc, const char *id, oxs_loaded *l);
void oxs_models_release(oxs_models *mc, oxs_mentry *e);
void oxs_models_forget(oxs_models *mc, const char *id);
const oxp_model *oxs_mentry_model(const oxs_mentry *e);
const oxp_dag *oxs_mentry_dag(const oxs_mentry *e);     /* NULL for a tensor upload */
const oxp_tensor *oxs_mentry_tensor(const oxs_mentry *e); /* the tensor of a tensor upload */
void oxs_models_stats(oxs_models *mc, uint64_t *count, uint64_t *bytes);

/* ---------------------------------------------------------------------------------------
 * Metrics (metrics.c); request logs: log.h.
 */
enum { OXS_UP_CREATED, OXS_UP_EXISTING, OXS_UP_REJECTED, OXS_UP__COUNT };
enum { OXS_HIT_MEMORY, OXS_HIT_STORE, OXS_MISS, OXS_HIT__COUNT };
enum { OXS_LAYOUT_OK, OXS_LAYOUT_FAILED, OXS_LAYOUT_KILLED, OXS_LAYOUT__COUNT };
/* Computations in a process of their own (isolate.c), by kind, and how they ended:
 * answered (a value or the model's error), crashed (a signal or a failed exit: a bug),
 * killed (time or memory limit, or output cap), not started (no fork). */
enum { OXS_ISO_PREVIEW, OXS_ISO_DOCUMENT, OXS_ISO__COUNT };
enum { OXS_ISOLATED_OK, OXS_ISOLATED_CRASHED, OXS_ISOLATED_KILLED, OXS_ISOLATED_UNSTARTED,
       OXS_ISOLATED__COUNT };

void oxs_metrics_request(int route, unsigned status, uint64_t ns);
void oxs_metrics_upload(int result, uint64_t bytes);
void oxs_metrics_cache(int which);
void oxs_metrics_layout(int result);
void oxs_metrics_isolated(int what, int result);
/* Loads of models into the parsed-model cache (models.c): parsed and linked, refused for
 * the model's own reason, failed for ours (I/O, memory), or refused from the memory of a
 * recent refusal without parsing. */
enum { OXS_LOAD_OK, OXS_LOAD_INVALID, OXS_LOAD_FAILED, OXS_LOAD_REMEMBERED, OXS_LOAD__COUNT };
void oxs_metrics_load(int result);
void oxs_metrics_store(int op, uint64_t ns, int outcome);
void oxs_metrics_render(oxs_server *srv, oxr_buf *out);

/* The JSON log lines: log.h. */

/* ---------------------------------------------------------------------------------------
 * Per-address upload rate limit (ratelimit.c): a token bucket per client address.
 */
typedef struct oxs_ratelimit oxs_ratelimit;
oxs_ratelimit *oxs_ratelimit_new(unsigned per_minute);
void oxs_ratelimit_free(oxs_ratelimit *rl);
/* True when allowed; else *retry_after gets seconds until a token is back. */
bool oxs_ratelimit_allow(oxs_ratelimit *rl, const struct sockaddr *sa, unsigned *retry_after);

/* ---------------------------------------------------------------------------------------
 * Routes (routes.c)
 */
enum {
	OXS_M_GET = 1,
	OXS_M_HEAD = 2,
	OXS_M_POST = 4,
	OXS_M_DELETE = 8,
	OXS_M_OTHER = 16,
	OXS_M_PATCH = 32 /* resumable uploads only (resumable.c): routes whose methods name it */
};

typedef enum {
	OXS_ACCESS_OPEN = 0, /* anyone */
	OXS_ACCESS_READ,     /* the read token when reads are protected */
	OXS_ACCESS_UPLOAD,   /* the token when one is configured */
	OXS_ACCESS_ADMIN     /* the token, and refused when none is configured */
} oxs_access;

typedef void (*oxs_handler)(oxs_req *r);

typedef struct oxs_route {
	const char *pattern;
	const char *methods; /* for Allow and the OpenAPI test: "GET HEAD POST" */
	oxs_handler get, post, del;
	oxs_access get_access, post_access, del_access;
	bool upload;         /* POST streams a model body (upload.c) */
	bool small_body;     /* POST reads its body into memory, bounded (heat_svc.c) */
} oxs_route;

/* Prebuilt responses of the web page and /openapi.json; false when out of memory. */
bool oxs_routes_init(void);
void oxs_routes_free(void);
/* Match a decoded path: the route index (params filled) or -1.  {id} takes a segment
 * (kept in id only when valid), {path} (in fpath) the segments up to and including the
 * first ending in ".onnx" or ".pb", a final {name} (in param) the rest of the path,
 * slashes included; other {x} one segment (in param). */
int oxs_route_match(const char *path, char *id, char *param, size_t paramsize, char *fpath,
                    size_t fpathsize);
const oxs_route *oxs_route_at(int i);
const char *oxs_route_pattern(int i); /* "unmatched" for -1 */
size_t oxs_route_count(void);

/* ---------------------------------------------------------------------------------------
 * Artifacts (artifacts.c): summary JSON, full document, and graph renderings of a stored
 * model, cached in memory and in the store, computed once for concurrent requests.
 */
typedef enum {
	OXS_ART_SUMMARY = 0,
	OXS_ART_DOCUMENT,
	OXS_ART_GRAPH,
	OXS_ART_TENSOR, /* a tensor preview (preview.c): JSON or .npy */
	OXS_ART_DIFF,   /* what changed from model id to model `other` (diff.c): the JSON
	                   document (fmt OXR_FMT_LAYOUT_JSON stands for it), SVG or DOT */
	OXS_ART_COST,   /* cost.json (oxr_cost_json) with the dims bound by `dims` */
	OXS_ART_HEAT    /* a drawing with a heat overlay (heat_svc.c): `heat` */
} oxs_art_kind;

#define OXS_KEY_MAX (OXR_OPTIONS_KEY_MAX + 256)
#define OXS_TENSOR_KEY_MAX 1024 /* longest tensor name or ref in a preview URL */

typedef struct oxs_art {
	oxs_art_kind kind;
	oxr_format fmt;
	oxr_options opt;
	char id[OXST_ID_LEN + 1];
	char key[OXS_KEY_MAX]; /* cache key: id|kind|options */
	char name[112];        /* store rendering name */
	/* a --models-dir file (oxs_art_file): read from src, not kept in the store, answered
	 * with no-cache instead of immutable; id names that version of the file */
	char src[64];          /* "/proc/self/fd/N", "" for stored models */
	int dirfd;             /* its folder (external data), -1 for stored models */
	char fpath[OXST_LOCATION_MAX + 1]; /* its path under --models-dir, for links */
	/* OXS_ART_DIFF (oxs_art_diff): the model compared with (B; id is A) */
	char other[OXST_ID_LEN + 1];
	/* OXS_ART_TENSOR (oxs_art_tensor) */
	char tensor[OXS_TENSOR_KEY_MAX + 1];
	oxs_preview_opt popt;
	/* OXS_ART_COST (oxs_art_cost): "batch:1,sequence_length:128", checked, or "" */
	char dims[512];
	/* OXS_ART_HEAT (oxs_art_heat) */
	struct oxs_heat_req {
		char overlay[72]; /* "cost", or an overlay id */
		char metric[72];  /* "" for the overlay's primary */
		uint8_t scale;    /* oxr_heat_scale */
	} heat;
} oxs_art;

typedef struct oxs_heat_req oxs_heat_req;
/* POST /models/{id}/overlays and GET /models/{id}/overlays/{oid} (heat_svc.c); the body
 * of such a POST is kept in r->body (oxs_body_*, at most OXS_OVERLAY_MAX bytes). */
#define OXS_OVERLAY_MAX ((size_t)32 << 20)
/* A stored overlay attributed through ORT's optimized model (POST ...?optimized=ID) is
 * "onnxviz:optimized=<ID>\n" and the file; oxs_overlay_split tells them apart (optid ""
 * without) and answers whether the line is there. */
#define OXS_OVERLAY_TAG "onnxviz:optimized="
bool oxs_overlay_split(const char *data, size_t len, char optid[65], const char **body,
                       size_t *blen);
void oxs_overlay_post(oxs_req *r);
void oxs_overlay_get(oxs_req *r);
bool oxs_body_begin(oxs_req *r);
bool oxs_body_data(oxs_req *r, const char *data, size_t len);
void oxs_body_free(oxs_req *r);

/* Takes overlay=, metric= and scale= out of a drawing's query (pairs and *n shrink):
 * false with a message when one is malformed (heat_svc.c). */
bool oxs_heat_query(oxs_query_pair *pairs, size_t *n, oxs_heat_req *hr, char *err,
                    size_t errsize);
/* After oxs_art_init(OXS_ART_HEAT): the overlay, metric and scale (cache key, store
 * name). */
void oxs_art_heat(oxs_art *a, const oxs_heat_req *hr);


void oxs_art_init(oxs_art *a, oxs_art_kind kind, const char *id, oxr_format fmt,
                  const oxr_options *opt);
/* After oxs_art_init(OXS_ART_TENSOR): the tensor key and the preview options (the cache
 * key gets a hash of the tensor key and the canonical options). */
void oxs_art_tensor(oxs_art *a, const char *tensor, const oxs_preview_opt *o);
/* After oxs_art_init(OXS_ART_DIFF): the model compared with (cache key and store name
 * name both; the store keeps the artifact under id). */
void oxs_art_diff(oxs_art *a, const char *other);
/* After oxs_art_init(OXS_ART_COST): the dims binding (valid for oxp_cost_bind_parse; part
 * of the cache key and store name). */
void oxs_art_cost(oxs_art *a, const char *dims);
/* After oxs_art_init: the artifact is of a --models-dir file open as fd (its folder
 * dirfd, its relative path fpath); both fds stay the request's. */
void oxs_art_file(oxs_art *a, int fd, int dirfd, const char *fpath);
/* Answer r with the artifact: at once from memory, else r is suspended until the
 * artifact is loaded or computed (r->on_art decides the reply then).  `suspended`: r is
 * already suspended (called from a job). */
void oxs_art_request(oxs_req *r, const oxs_art *a, bool suspended);
/* From a job thread: the summary artifact of a stored model, computed now when needed
 * (model may be NULL, then it is loaded).  Referenced entry or NULL with *status/err set. */
oxs_centry *oxs_art_summary_now(oxs_server *srv, const char *id, const oxp_model *m,
                                const oxp_dag *d, unsigned *status, char *err, size_t errsize);
typedef struct oxs_flights oxs_flights;
oxs_flights *oxs_flights_new(void);
/* Append a URL path (a --models-dir file's, a redirect's): bytes outside
 * [A-Za-z0-9._~/-] as %XX. */
void oxs_url_path(oxr_buf *b, const char *p);
/* The "links" member of a summary, for a stored model or a --models-dir file. */
void oxs_links_json(oxr_buf *b, const oxs_art *a, bool tensor);

/* ---------------------------------------------------------------------------------------
 * Tensor previews (preview.c)
 */
typedef struct oxs_preview_out {
	oxr_buf body;            /* the JSON document or the .npy file */
	const char *type;        /* its Content-Type */
	char npy_descr[16];      /* .npy: the element type written ("<f4", ...) */
	char widened_from[24];   /* .npy: the tensor's data type when widened, else "" */
	unsigned status;         /* 0 on success, else the error's status ... */
	char code[48];           /* ... code ... */
	char message[512];       /* ... message ... */
	char extra[900];         /* ... and extra members ("" or ",\"rule\":...") */
	oxr_buf stats;           /* statistics computed by this call (for the store), or empty */
} oxs_preview_out;

/* Compute the preview a (OXS_ART_TENSOR) on a work thread: load the model, find the
 * tensor and its data folder, the statistics kept in the store; then compute in a process
 * of its own (config isolation, the default) or in this one; keep fresh
 * statistics in the store.  out is initialised here; free it with oxs_preview_out_free. */
void oxs_preview_run(oxs_server *srv, const oxs_art *a, oxs_preview_out *out);

/* What a preview computation reads: nothing of the server's (no store, lock or log), so
 * that it can run in a forked copy of the server. */
typedef struct oxs_preview_in {
	const char *model;           /* the model's id, as the answer names it */
	const char *key;             /* the tensor key asked for (name or document ref) */
	const oxp_dag *dag;          /* the linked model, NULL for a lone tensor upload */
	const oxp_tensor *t;         /* the tensor */
	int datadir;                 /* the folder of its external data, -1 when not open */
	oxst_status datadir_status;   /* why -1: OXST_E_NOT_FOUND (stored without data files) */
	oxs_preview_opt opt;
	const char *stats;           /* statistics JSON kept from before, or NULL */
	size_t stats_len;
} oxs_preview_in;

/* The computation itself: decode the slice, the statistics (unless in->stats), the JSON
 * or .npy answer.  out is initialised here; free it with oxs_preview_out_free. */
void oxs_preview_compute(const oxs_preview_in *in, oxs_preview_out *out);
void oxs_preview_out_free(oxs_preview_out *out);

/* ---------------------------------------------------------------------------------------
 * Computations in a forked copy of the server (isolate.c): fn fills out (an
 * oxs_preview_out serves every kind: the body, an error's status, code and message,
 * auxiliary bytes in out->stats) using memory, inherited descriptors and the allocator
 * only.  o is initialised here with a body cap of max_body; free it with
 * oxs_preview_out_free.  A crash is 500 "<what>_crashed", an overrun 503 "<what>_timeout".
 */
typedef void (*oxs_iso_fn)(void *ctx, oxs_preview_out *out);
void oxs_isolated(oxs_server *srv, int what, oxs_iso_fn fn, void *ctx, size_t max_body,
                  oxs_preview_out *o);
/* The summary of a tensor upload: {"id","size","kind":"tensor","tensor":{...},"links"}. */
bool oxs_preview_summary(oxr_buf *out, const oxs_art *a, const oxp_model *m,
                         const oxp_tensor *t);
void oxs_flights_free(oxs_flights *f);

/* ---------------------------------------------------------------------------------------
 * The request-header deadline (deadline.c): a request's headers must arrive within a
 * time in total, however slowly they trickle in (libmicrohttpd's timeout counts idle
 * time only).  A watcher thread shuts down the sockets of connections past it.
 */
typedef struct oxs_deadlines oxs_deadlines;
/* Start the watcher; NULL when out of memory or threads. */
oxs_deadlines *oxs_deadlines_new(unsigned seconds);
/* Stop the watcher (before the daemon stops); then free (after it stopped). */
void oxs_deadlines_stop(oxs_deadlines *d);
void oxs_deadlines_free(oxs_deadlines *d);
/* libmicrohttpd's NOTIFY_CONNECTION callback: a record per connection (socket context). */
void oxs_deadlines_notify(oxs_deadlines *d, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe);
/* The headers of the connection's request are in / the request ended (keep-alive: the
 * next request's headers are waited for from now). */
void oxs_deadlines_headers_done(oxs_deadlines *d, struct MHD_Connection *conn);
void oxs_deadlines_request_done(oxs_deadlines *d, struct MHD_Connection *conn);
/* Connections shut down for being too slow. */
uint64_t oxs_deadlines_dropped(oxs_deadlines *d);

/* ---------------------------------------------------------------------------------------
 * The server and a request (http.c; replies: reply.c)
 */
struct oxs_server {
	oxs_config cfg;
	oxst_store *store;
	struct MHD_Daemon *daemon;
	oxs_pool *work, *layout;
	oxs_cache *cache;
	oxs_models *models;
	oxs_flights *flights;
	oxs_ratelimit *rl;
	oxs_deadlines *deadlines;
	oxr_worker_limits wlim;
	oxr_worker_limits plim; /* preview processes (preview.c) */
	char exe[PATH_MAX];
	unsigned char token_md[32], read_md[32]; /* SHA-256 of the tokens */
	bool has_token, has_read_token;
	atomic_int inflight;   /* requests begun and not completed */
	atomic_bool stopping;  /* SIGTERM seen: not ready, no new jobs */
	int64_t started_ms;
	int models_dirfd;      /* --models-dir, O_PATH; -1 when not configured */
	oxst_s3 *s3;            /* reads models registered by reference (--source-buckets) */
	oxs_resumable *rs;     /* resumable uploads (resumable.c) */
};

#define OXS_QUERY_MAX 4096
#define OXS_PARAM_MAX 256

typedef struct oxs_upload oxs_upload;

struct oxs_req {
	oxs_server *srv;
	struct MHD_Connection *conn;
	uint64_t start_ns;
	int route;             /* index in the route table, -1 when none matched */
	unsigned method;       /* OXS_M_* */
	const char *method_name;
	bool started;          /* the first call happened */
	bool suspended;        /* waiting for a job */
	bool queued;           /* a reply was handed to libmicrohttpd */
	bool has_body;
	bool query_too_long;
	bool oneshot;          /* POST /graph.*: answer with the rendering */
	bool existing;         /* upload: the model was already stored */
	char query[OXS_QUERY_MAX];
	char inm[256];         /* If-None-Match, "" when absent */
	char id[OXST_ID_LEN + 1];
	char param[OXS_TENSOR_KEY_MAX + 1]; /* node id, search text or tensor key */
	char fpath[OXST_LOCATION_MAX + 1];   /* /files/{path} */
	int file_fd, dir_fd;   /* /files: the model file and its folder, open; else -1 */
	unsigned limit;        /* search: most hits */
	oxs_art art;           /* the artifact asked for, when any */
	/* reply, set by handlers and jobs, queued by http.c */
	unsigned status;
	struct MHD_Response *reply;  /* owned */
	oxs_centry *reply_entry;     /* or: a referenced cache entry whose response ... */
	struct MHD_Response *shared; /* ... (resp or nm) is queued */
	uint64_t reply_bytes;
	void (*on_art)(oxs_req *r, oxs_centry *e); /* how to answer from an artifact */
	/* jobs */
	oxs_job job;
	void (*work)(oxs_req *r);
	oxs_req *next_waiter;
	oxs_upload *up;
	oxs_rpatch *rp;        /* PATCH /uploads/{uid}: the part being received */
	oxr_buf *body;         /* POST /models/{id}/overlays: the body, in memory, bounded
	                          (heat_svc.c) */
};

/* Response helpers (reply.c).  Each sets r->reply (taking ownership of resp). */
void oxs_reply(oxs_req *r, unsigned status, struct MHD_Response *resp, uint64_t bytes);
/* Drop a reply that was set but not queued. */
void oxs_reply_clear(oxs_req *r);
/* JSON error {"error":{"code","message","status"[,extra]}}; extra: "" or ",\"k\":v...". */
void oxs_reply_error(oxs_req *r, unsigned status, const char *code, const char *extra,
                     const char *fmt, ...) OXS_PRINTF(5, 6);
/* A body (stolen from b) of the given type, with no-store caching. */
void oxs_reply_text(oxs_req *r, unsigned status, oxr_buf *b, const char *type);
void oxs_reply_json(oxs_req *r, unsigned status, oxr_buf *b);
/* The JSON error response (no-store; WWW-Authenticate for 401, Retry-After for 503);
 * *body (when not NULL) gets its body, valid while the response lives, *len its size.
 * NULL when out of memory. */
struct MHD_Response *oxs_error_response(unsigned status, const char *code, const char *msg,
                                        const char *extra, const char **body, size_t *len);
/* The HTTP status of a store failure: 404 not found, 507 no space, 503 (with Retry-After)
 * when the store does not answer or memory ran out, 500 for an I/O error. */
unsigned oxs_store_http_status(oxst_status st);
/* Answer a store failure with that status; what: "cannot store the model", ... */
void oxs_reply_store_error(oxs_req *r, oxst_status st, const char *what);
/* Answer from a cache entry: 304 when If-None-Match matches, else the entry. */
void oxs_reply_entry(oxs_req *r, const oxs_centry *e);
/* A response for JSON/text bodies with the common headers (nosniff, API CSP); data is
 * copied.  NULL when out of memory. */
struct MHD_Response *oxs_response_copy(const void *data, size_t len, const char *type);
/* The headers every API response carries (nosniff, the restrictive CSP). */
void oxs_response_common(struct MHD_Response *resp, const char *type);
/* The headers of a content-addressed 200 response (ETag, immutable caching) and, for
 * SVG, its CSP and Content-Disposition. */
void oxs_response_immutable(struct MHD_Response *resp, const char *etag, const char *type,
                            const char *id, const char *ext);
/* Content-Disposition from an id (64 hex digits) and an extension only, never from model
 * data: attachment for .onnx and .npy, inline for renderings, none for JSON. */
void oxs_response_disposition(struct MHD_Response *resp, const char *id, const char *ext);

/* Run fn(r) on pool p while the connection waits; replies 503 when the queue is full
 * (request.c, as the two below). */
void oxs_defer(oxs_req *r, oxs_pool *p, void (*fn)(oxs_req *r));
/* From a job: the reply is set; let libmicrohttpd send it. */
void oxs_resume(oxs_req *r);

/* Authorization for an access level: 0 when allowed, else the status to answer. */
unsigned oxs_authorize(oxs_req *r, oxs_access access);
/* Before reading a body (POST uploads, PATCH parts): the route's upload access; false
 * after the 401/403 reply. */
bool oxs_authorize_body(oxs_req *r, const oxs_route *rt);
/* An upload within --upload-rate for the client's address; false after the 429 reply
 * (with Retry-After). */
bool oxs_rate_allow(oxs_req *r);

/* Upload hooks (upload.c), called by http.c for routes with `upload`. */
void oxs_upload_begin(oxs_req *r);
/* False: abort the connection. */
bool oxs_upload_data(oxs_req *r, const char *data, size_t size);
void oxs_upload_end(oxs_req *r);
void oxs_upload_cleanup(oxs_req *r);
/* From a job (r suspended): store the complete file at path (open as fd; both pass to
 * this call) as model r->id, with the data folder datadir (a spool_dir of the store, its
 * files synced; NULL: none), exactly as POST /models stores an upload (parse, meta, the
 * store), and answer r as it does (201/200 with the summary, or the parse error); r is
 * resumed.  on_stored (may be NULL) runs once the model is stored, before the answer. */
typedef void (*oxs_stored_fn)(oxs_req *r, const char *id, bool created);
void oxs_upload_adopt(oxs_req *r, int fd, const char *path, const char *datadir,
                      const char *name, uint64_t bytes, oxs_stored_fn on_stored);

/* Resumable uploads (resumable.c, issue 23): POST /uploads, GET/HEAD/PATCH/DELETE
 * /uploads/{uid}.  The parts area lives in the store's folder (or an S3 store's cache). */
/* NULL with a message in err when the folder cannot be made. */
oxs_resumable *oxs_resumable_open(const oxs_config *c, char *err, size_t errsize);
void oxs_resumable_free(oxs_resumable *rs);
void oxs_resumable_create(oxs_req *r);  /* POST /uploads */
void oxs_resumable_get(oxs_req *r);     /* GET, HEAD /uploads/{uid} */
void oxs_resumable_delete(oxs_req *r);  /* DELETE /uploads/{uid} */
void oxs_resumable_patch_begin(oxs_req *r); /* PATCH: headers (first call) */
bool oxs_resumable_patch_data(oxs_req *r, const char *data, size_t size);
void oxs_resumable_patch_end(oxs_req *r);   /* PATCH: the final call */
void oxs_resumable_cleanup(oxs_req *r);
/* GET/HEAD of a structure's URL whose whole model has arrived: the whole model's id
 * into full (then the request is redirected).  False when id is not such a structure. */
bool oxs_resumable_moved(oxs_resumable *rs, const char *id, char full[OXST_ID_LEN + 1]);
void oxs_resumable_metrics(oxs_server *srv, oxr_buf *o);

/* Load libmicrohttpd (once; service/mhd.c): false with the reason in err (may be NULL). */
bool oxs_mhd_load(char *err, size_t errsize);
/* Daemon lifetime (http.c).  listen: on cfg.bind/port; else without a listening socket,
 * fed by oxs_server_add_connection. */
int oxs_http_start(oxs_server *srv, bool listen, char *err, size_t errsize);
unsigned oxs_http_port(oxs_server *srv);
/* Stop accepting; returns at once. */
void oxs_http_quiesce(oxs_server *srv);
void oxs_http_stop(oxs_server *srv);

/* Hex and digests: hash.h; the clocks: clock.h. */

#endif /* OXS_INTERNAL_H */
