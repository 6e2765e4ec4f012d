/*
 * server.h — the server and a request: the structures the parts of the service share.
 * Types only (no function is declared here), so that including it needs no part of the
 * service beyond the leaves it includes (art.h, config.h, jobs.h); what a handler does
 * with its request is request.h's, replying reply.h's.
 */
#ifndef OXS_SERVER_H
#define OXS_SERVER_H

#include "render/oxr.h"
#include "service/art.h"
#include "service/config.h"
#include "service/jobs.h"
#include "service/quota.h"
#include "store/oxst.h"

#include <limits.h>
#include <microhttpd.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define OXS_PRINTF(a, b) __attribute__((format(printf, a, b)))

typedef struct oxs_server oxs_server;
typedef struct oxs_req oxs_req;
typedef struct oxs_centry oxs_centry;       /* cache.h */
typedef struct oxs_models oxs_models;       /* models.h */
typedef struct oxs_cache oxs_cache;         /* cache.h */
typedef struct oxs_flights oxs_flights;     /* artifacts.h */
typedef struct oxs_ratelimit oxs_ratelimit; /* ratelimit.h */
typedef struct oxs_deadlines oxs_deadlines; /* deadline.h */
typedef struct oxs_resumable oxs_resumable; /* resumable.h */
typedef struct oxs_rpatch oxs_rpatch;       /* resumable.c */
typedef struct oxs_upload oxs_upload;       /* upload.c */
typedef struct oxs_quota oxs_quota;         /* quota.h */
typedef struct oxs_cidrs oxs_cidrs;         /* client.h */
typedef struct oxs_obody oxs_obody;         /* heat_svc.c */

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
	atomic_int waiting;    /* of those, suspended until a job replies (oxs_suspend) */
	atomic_bool stopping;  /* SIGTERM seen: not ready, no new jobs */
	int64_t started_ms;
	int models_dirfd;      /* --models-dir, O_PATH; -1 when not configured */
	oxst_s3 *s3;            /* reads models registered by reference (--source-buckets) */
	oxs_resumable *rs;     /* resumable uploads (resumable.c) */
	oxs_quota *quota;      /* what each client holds (quota.h; request.c's oxs_client_of) */
	oxs_cidrs *proxies;    /* --trusted-proxies (client.h) */
	struct oxs_sign_key *sign_key; /* --sign-secret-file's key (sign.h); NULL: no signed links */
	struct MHD_Response *oom_reply; /* the answer when memory runs out (reply.h) */
};

#define OXS_QUERY_MAX 4096
#define OXS_PARAM_MAX 256

struct oxs_req {
	oxs_server *srv;
	struct MHD_Connection *conn;
	uint64_t start_ns;
	int route;             /* index in the route table, -1 when none matched */
	unsigned method;       /* OXS_M_* */
	const char *method_name;
	const char *url;       /* the decoded path (libmicrohttpd's, valid until completed) */
	bool started;          /* the first call happened */
	bool suspended;        /* waiting for a job */
	bool queued;           /* a reply was handed to libmicrohttpd */
	bool has_body;
	bool query_too_long;
	bool oneshot;          /* POST /graph.*: answer with the rendering */
	bool existing;         /* upload: the model was already stored */
	char query[OXS_QUERY_MAX];
	char inm[256];         /* If-None-Match, "" when absent */
	bool gzip_ok;          /* Accept-Encoding accepts gzip (gzip.c) */
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
	oxr_buf *jbody;         /* POST /sign: its JSON body, in memory (sign_api.c) */
	oxs_rpatch *rp;        /* PATCH /uploads/{uid}: the part being received */
	oxs_obody *body;       /* POST /models/{id}/overlays: the body, spooled to a file of
	                          the store as it arrives (heat_svc.c) */
	uint64_t body_held;    /* bytes of the client's --body-per-client this request holds
	                          (oxs_body_hold; given back when it completes) ... */
	oxs_client body_client;/* ... to this client */
	int64_t signed_expires; /* a GET through a signed link: its expires (sign.c), for the
	                           links its answer holds (embed.c); 0 otherwise */
};

#endif /* OXS_SERVER_H */
