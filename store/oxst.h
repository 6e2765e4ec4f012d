/*
 * oxst.h — onnxviz store: the one public header of store/.
 *
 * Models by content id, what belongs to them (meta, external data files) and their cached
 * renderings, behind one backend vtable (oxst_ops, in the manner of libgit2's
 * git_odb_backend): the local folder (local.c) and an S3-compatible object store with a
 * local cache in front (s3.c), plus the small S3 client both that store and the service's
 * models registered by reference use (s3client.c).  ids.c names models (ids, bundles,
 * meta); store.c opens a store by its location and holds the hooks.  Names start with oxst_ / OXST_.
 *
 * The store sits below the service and beside render: it uses parser/ (opening beneath a
 * folder) and render's bounded buffer (oxr_buf) only, and never includes service/ headers.
 * The service tells it where to log and count requests through oxst_set_hooks.
 */
#ifndef OXST_H
#define OXST_H

#include "render/oxr.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------
 * The model store: models by content id, plus cached renderings per model.
 *
 * One vtable of operations (oxst_ops), each backend in a file of its own defining every
 * operation (local.c, s3.c; store/internal.h's OXST_OPS_OF_FILE lists them): a new
 * operation is a member here, a static op_<name> in each backend file and a line in that
 * list.  The service only uses these.  Ids are 64 lowercase hex characters (SHA-256 of the
 * model bytes).  All functions are thread-safe.
 */
typedef enum oxst_status {
	OXST_OK = 0,
	OXST_E_NOT_FOUND,
	OXST_E_NOSPACE, /* disk full, file size limit, or the budget cannot be met */
	OXST_E_IO,
	OXST_E_INVALID, /* bad id or name */
	OXST_E_NOMEM,
	OXST_E_BUSY,        /* the store is locked by another process */
	OXST_E_UNAVAILABLE, /* the object store does not answer (after retries): 503 */
	OXST_E_AGAIN        /* stat_model without blocking: only a slow lookup could tell */
} oxst_status;

const char *oxst_status_name(oxst_status s);

#define OXST_ID_LEN 64

/* What is kept with a model at upload (put_meta) and returned by listings: the
 * uploaded file's name, the graph's name, the producer and the node count.  Strings are
 * NUL-terminated ("" = unknown); nodes is -1 when unknown (models stored without it). */
#define OXST_META_STR 256
typedef struct oxst_model_meta {
	char name[OXST_META_STR];     /* the uploaded file's name (no folders) */
	char graph[OXST_META_STR];    /* the main graph's name */
	char producer[OXST_META_STR]; /* producer_name */
	char kind[8];                 /* "model" or "tensor" ("" = unknown) */
	int64_t nodes;                /* nodes of the linked graph, subgraphs included */
} oxst_model_meta;

/* meta as a JSON object into b ({"name":...,"graph":...,"producer":...,"kind":...,
 * "nodes":...}; unknown values are null), and back (false when malformed). */
bool oxst_meta_json(oxr_buf *b, const oxst_model_meta *m);
bool oxst_meta_parse(const char *json, size_t len, oxst_model_meta *out);

typedef struct oxst_model_info {
	char id[OXST_ID_LEN + 1];
	uint64_t size;
	int64_t created; /* Unix seconds */
	bool has_meta;   /* meta below was kept with the model */
	oxst_model_meta meta;
} oxst_model_info;

typedef struct oxst_stats {
	uint64_t models, model_bytes;
	uint64_t renderings, rendering_bytes;
	uint64_t budget;              /* 0 = unlimited */
	uint64_t evicted_models, evicted_renderings;
	uint64_t removed_temporaries; /* at open: leftovers of interrupted writes */
	uint64_t quarantined;         /* files whose content did not match their id */
	/* verification of the stored models after start (verify_background) */
	bool verifying;               /* still running */
	uint64_t verified, to_verify; /* checked so far, of this many */
} oxst_stats;

typedef struct oxst_store oxst_store;

/* A resumable transfer's state (the ops xfer_*): what the service keeps, the running
 * SHA-256 as its midstate (so any replica can take the next part), and the backend's own
 * (an object store: its multipart upload's id).  Parts are multiples of 64 bytes, so the
 * hash of the first `offset` bytes is whole blocks: h[] and offset say it all. */
#define OXST_XFER_UID_LEN 32
typedef struct oxst_xfer {
	uint64_t length;   /* the file's bytes */
	uint64_t part;     /* the part size: every part but the last (a multiple of 64) */
	uint64_t offset;   /* bytes acknowledged */
	int64_t created, expires; /* Unix seconds */
	uint32_t h[8];     /* SHA-256 midstate after `offset` bytes */
	/* the id the file must hash to; "" = not named yet (the last part names it: decision
	 * 97; kept in the record as 64 zeros) */
	char sha256[OXST_ID_LEN + 1];
	char structure[OXST_ID_LEN + 1]; /* "" = none */
	char name[OXST_META_STR];        /* the file's name (no control characters) */
	char kind[8];                    /* "model", "data" or "bundle" */
	char backend[600];               /* the backend's (no newline): "" = none */
	/* the client that started it (service/quota.h's key as hex: its uploads in progress
	 * are counted against it, by any replica and after a restart); "" = none */
	char owner[72];
	/* an object store's writer of the next part: "<nonce> <until>" (32 hex digits, Unix
	 * seconds; s3.c); "" = none */
	char lease[56];
	/* an object store's transfer begun unnamed (decision 97): its parts go to a key of its
	 * own (uploads/<uid>/file), copied to the model's or the blob's once the bytes named
	 * it (s3.c) */
	bool staged;
} oxst_xfer;
/* uid is OXST_XFER_UID_LEN lowercase hex digits. */
bool oxst_xfer_uid_valid(const char *uid);
/* A new transfer's state: sizes, times and an empty hash. */
void oxst_xfer_init(oxst_xfer *x, uint64_t length, uint64_t part, int64_t now, int64_t expiry);

/* SHA-256 that can stop at a block boundary and go on elsewhere (store/crypto.c). */
typedef struct oxst_sha256 {
	_Alignas(8) unsigned char ctx[128];
} oxst_sha256;
/* Go on from midstate h after `bytes` bytes (a multiple of 64; 0: from the start, h is
 * not read and may be NULL). */
void oxst_sha256_resume(oxst_sha256 *c, const uint32_t h[8], uint64_t bytes);
void oxst_sha256_update(oxst_sha256 *c, const void *data, size_t n);
/* The midstate and byte count; false when the bytes so far are not whole blocks. */
bool oxst_sha256_midstate(const oxst_sha256 *c, uint32_t h[8], uint64_t *bytes);
void oxst_sha256_final(oxst_sha256 *c, char hex[OXST_ID_LEN + 1]);
/* Hash the file's bytes [from, upto) into c (pread in 1 MiB pieces; UINT64_MAX: to the
 * end); false on a read error or a file shorter than upto. */
bool oxst_sha256_read(oxst_sha256 *c, int fd, uint64_t from, uint64_t upto);

struct oxst_bundle_file; /* below */

typedef struct oxst_ops {
	const char *name;
	/* Calls may wait on the network (an object store): HTTP threads hand them to a job
	 * rather than making them.  stat_model with OXST_STAT_NONBLOCK never waits. */
	bool remote;
	/* A new empty spool file for an upload, open for writing: *fd and its path.  The
	 * caller writes it, then hands it to put_model or removes it with unlink(). */
	oxst_status (*spool)(oxst_store *s, int *fd, char *path, size_t pathsize);
	/* Store the spool file as model id durably and atomically (the file moves; the fd
	 * stays the caller's).  *created is false when the id was already stored (the spool
	 * is then removed).  May evict cached renderings (and models, when allowed) to stay
	 * within the budget; OXST_E_NOSPACE when it cannot. */
	oxst_status (*put_model)(oxst_store *s, const char *id, const char *spool_path, int fd,
	                        bool *created);
	/* Whether model id is stored, and its size.  flags: OXST_STAT_NONBLOCK answers from
	 * what is known without waiting (OXST_E_AGAIN when only a slow lookup — the network,
	 * hashing an unverified file — could tell; for HTTP threads); OXST_STAT_FRESH asks the
	 * backing store itself rather than caches (before an upload). */
	oxst_status (*stat_model)(oxst_store *s, const char *id, unsigned flags, uint64_t *size);
	/* Keep meta with model id; call it before put_model.  The first upload's meta stays
	 * (a later call for the same id does not replace it). */
	oxst_status (*put_meta)(oxst_store *s, const char *id, const oxst_model_meta *meta);
	/* Give the meta kept with model id the file name `name` when it has none (a model
	 * first stored without a name, then uploaded again under one); a name kept already
	 * stays: names are labels a later upload cannot change.  OXST_OK also when nothing
	 * changed; OXST_E_NOT_FOUND when no meta is kept. */
	oxst_status (*name_meta)(oxst_store *s, const char *id, const char *name);
	/* Open the model read-only: *fd (caller closes) and its size. */
	oxst_status (*open_model)(oxst_store *s, const char *id, int *fd, uint64_t *size);
	/* A local file path holding the model (for mmap and the layout worker). */
	oxst_status (*model_path)(oxst_store *s, const char *id, char *path, size_t pathsize);
	/* Models in id order after `after` ("" = from the start): up to max into out, with
	 * their meta when kept.  *total (may be NULL) counts them all. */
	oxst_status (*list_models)(oxst_store *s, const char *after, oxst_model_info *out,
	                          size_t max, size_t *n, uint64_t *total);
	/* Remove the model and its renderings. */
	oxst_status (*delete_model)(oxst_store *s, const char *id);
	/* A cached rendering of model id, by name ([a-z0-9._-], at most 96 bytes). */
	oxst_status (*get_rendering)(oxst_store *s, const char *id, const char *name, int *fd,
	                            uint64_t *size);
	oxst_status (*put_rendering)(oxst_store *s, const char *id, const char *name,
	                            const void *data, size_t len);
	void (*stats)(oxst_store *s, oxst_stats *out);
	/* True when a write succeeds now (readiness).  Answers without waiting on the network
	 * (a remote store answers from its last probe): HTTP threads call it. */
	bool (*writable)(oxst_store *s);
	/* Remove temporaries, release the lock, free. */
	void (*close)(oxst_store *s);
	/* External data: the files a model references by relative location, kept in a
	 * folder of their own per model.  spool_dir makes a new empty folder in the store's
	 * temporary area (its path; the caller fills it and hands it to put_data, or leaves
	 * it to be removed at close/open).  put_data moves it to be model id's data folder,
	 * durably (files and folders fsync'ed by the caller, the rename here); call it before
	 * put_model of the same id so that a stored model never lacks its data.  When id
	 * already has data the spool folder is removed.  open_data opens the model's data
	 * folder O_PATH|O_DIRECTORY (*dirfd, the caller closes it); OXST_E_NOT_FOUND when the
	 * model has none. */
	oxst_status (*spool_dir)(oxst_store *s, char *path, size_t pathsize);
	oxst_status (*put_data)(oxst_store *s, const char *id, const char *spool_dir);
	oxst_status (*open_data)(oxst_store *s, const char *id, int *dirfd);
	/* Resumable transfers (service/resumable.c; oxst_xfer below): a file sent in parts of
	 * a fixed size, each part stored durably when acknowledged.  uid is the transfer's
	 * name (OXST_XFER_UID_LEN hex digits).  xfer_create starts one with state *x (its
	 * backend[] filled here) unless one exists: then *created is false and *x is that
	 * one's state.  xfer_get reads the state (OXST_E_NOT_FOUND: none; OXST_E_IO: read and
	 * corrupt, the one case a state may be removed; OXST_E_UNAVAILABLE / OXST_E_NOMEM: not
	 * readable now — no descriptors, EIO — and nothing is removed); xfer_put replaces it
	 * durably (the caller changed what is its own). */
	oxst_status (*xfer_create)(oxst_store *s, const char *uid, oxst_xfer *x, bool *created);
	oxst_status (*xfer_get)(oxst_store *s, const char *uid, oxst_xfer *x);
	oxst_status (*xfer_put)(oxst_store *s, const char *uid, const oxst_xfer *x);
	/* Where the next part's bytes go: a file open for writing (*fd, the caller closes it)
	 * and the offset in it to write them at (the local store: the transfer's file at
	 * x->offset; an object store: a part-sized temporary of its cache, from 0). */
	oxst_status (*xfer_part_fd)(oxst_store *s, const char *uid, const oxst_xfer *x, int *fd,
	                            uint64_t *at);
	/* Store the part of len bytes written to fd at `at` durably — the part at x->offset,
	 * x the state before it — then the state next (its offset moved past the part, its
	 * hash over it; NULL for the last part: xfer_finish follows): a part is acknowledged
	 * only after this answers OXST_OK.  The same part again (same number, same bytes) is
	 * harmless.  OXST_E_NOT_FOUND: the transfer is gone (aborted, expired). */
	oxst_status (*xfer_part_put)(oxst_store *s, const char *uid, const oxst_xfer *x,
	                             const oxst_xfer *next, int fd, uint64_t at, uint64_t len);
	/* The whole file has arrived and hashed to x->sha256.  Either the store keeps it as
	 * model x->sha256 itself (an object store: *fd is -1 and *created tells whether it is
	 * new), or it hands the file over as a new spool file (the local store: *fd open for
	 * reading and its path in spool, for put_model or a rename; *created false).  The
	 * transfer stays, its state before the last part, until the service removes it with
	 * xfer_abort once the model is stored (or refused for its content): a store that
	 * fails is finished again by the last part sent again (issue 35). */
	oxst_status (*xfer_finish)(oxst_store *s, const char *uid, const oxst_xfer *x, int *fd,
	                           char *spool, size_t spoolsize, bool *created);
	/* Give up the transfer and what it holds (parts, state). */
	oxst_status (*xfer_abort)(oxst_store *s, const char *uid);
	/* The transfers' uids, up to max into uids (*n of them): for the expiry sweep. */
	oxst_status (*xfer_list)(oxst_store *s, char (*uids)[OXST_XFER_UID_LEN + 1], size_t max,
	                         size_t *n);
	/* Blobs: data files of bundles kept by their SHA-256 in the store itself, where any
	 * replica finds them (an object store's transfers of kind data: blobs/<sha256>; the
	 * local store keeps none — the service keeps its own).  blob_stat: OXST_OK when the
	 * blob of sha is there with `length` bytes.  put_bundle: store model id made of the
	 * model file model_sha (stored as a model, or a blob) and the data files (blobs)
	 * files[0..n), exactly as put_data and put_model of the same files store it, without
	 * the bytes passing through here (server-side copies); *created false when id was
	 * there; OXST_E_NOT_FOUND when a piece is missing (nothing written then).
	 * blob_expire: remove the blobs written before `before` (Unix seconds; the expiry
	 * sweep), *removed of them. */
	oxst_status (*blob_stat)(oxst_store *s, const char *sha, uint64_t length);
	oxst_status (*put_bundle)(oxst_store *s, const char *id, const char *model_sha,
	                          uint64_t model_size, const struct oxst_bundle_file *files,
	                          size_t n, bool *created);
	oxst_status (*blob_expire)(oxst_store *s, int64_t before, uint64_t *removed);
} oxst_ops;

#define OXST_STAT_NONBLOCK 1u
#define OXST_STAT_FRESH 2u

struct oxst_store {
	const oxst_ops *ops;
};

typedef struct oxst_local_options {
	uint64_t budget;   /* bytes; 0 = unlimited */
	bool evict_models; /* the budget may evict least-recently-used models */
	bool verify;       /* hash every model at open; mismatches go to quarantine/ */
	/* instead: open at once, hash every model on a background thread, and any model not
	 * yet checked when it is first read (stats() tells the progress) */
	bool verify_background;
	/* a cache of another store: no fsync (with verify_background only: after a crash
	 * the verification finds torn files) */
	bool no_sync;
} oxst_local_options;

/* Open (creating it when missing) the folder store at root: takes an exclusive lock,
 * removes temporaries left by a crash, quarantines misnamed or (with verify) corrupt
 * files and renderings without a model, and indexes the rest.  err gets a message. */
oxst_status oxst_local_open(oxst_store **out, const char *root,
                            const oxst_local_options *opt, char *err,
                            size_t errsize);

/* The S3-compatible object store (s3.c): models and what belongs to them under
 * s3://BUCKET/PREFIX, a bounded local cache folder in front (a local store under
 * cache_dir), no lock: any number of replicas share the bucket.  The endpoint, region
 * and credentials come from the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
 * AWS_SESSION_TOKEN, AWS_REGION, AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL). */
typedef struct oxst_s3_options {
	const char *url;        /* s3://BUCKET[/PREFIX] */
	const char *cache_dir;  /* the local cache folder */
	uint64_t cache_budget;  /* bytes of the local cache (> 0): a model and its data fit it */
	unsigned timeout;       /* seconds a request may stall (connect, no progress) */
	uint64_t part_size;     /* multipart upload above this many bytes (>= 5 MiB) */
	char *const *envp;      /* the environment to read AWS_* from */
} oxst_s3_options;

oxst_status oxst_s3_open(oxst_store **out, const oxst_s3_options *opt, char *err,
                         size_t errsize);

/* Open the store at opt->location: a folder (the local store, created when missing), or
 * s3://BUCKET[/PREFIX] (the object store, with its local cache in cache_dir).  The
 * service fills opt from its configuration (service/config.c). */
typedef struct oxst_options {
	const char *location;  /* folder, or s3://BUCKET[/PREFIX] */
	uint64_t budget;       /* bytes (0 = unlimited); of an S3 store: its cache's (> 0) */
	bool evict_models;     /* local: the budget may evict models too */
	bool verify_background;/* local: hash every model after open, in the background */
	const char *cache_dir; /* S3: the local cache folder */
	unsigned timeout;      /* S3: seconds a request may stall */
	uint64_t part_size;    /* S3: multipart upload above this many bytes */
	char *const *envp;     /* S3: the environment to read AWS_* from */
} oxst_options;

oxst_status oxst_open(oxst_store **out, const oxst_options *opt, char *err, size_t errsize);
/* True when location names an object store (s3://...) rather than a folder. */
bool oxst_location_is_s3(const char *location);

/* S3's least part (but the last) of a multipart upload: 5 MiB.  Resumable transfers of
 * smaller parts stay in an S3 store's local cache. */
#define OXST_S3_MIN_PART ((uint64_t)5 << 20)
/* S3 takes at most 10,000 parts per multipart upload. */
#define OXST_S3_MAX_PARTS 10000
/* The part size for an object of size bytes: part_size, or the next MiB above
 * size / OXST_S3_MAX_PARTS (rounded up) when that many parts of part_size would not
 * hold it (the S3 store's multipart uploads; the service's resumable uploads). */
uint64_t oxst_s3_part_for(uint64_t size, uint64_t part_size);

/* ---------------------------------------------------------------------------------------
 * Ids, bundles of a model and its data files, and the files of a stored model.
 */
/* Longest relative location of an uploaded data file (bytes, without the NUL). */
#define OXST_LOCATION_MAX 1023

/* A data file's location as a multipart field name gives it ("weights.bin",
 * "data/w.bin"): 1..OXST_LOCATION_MAX bytes, '/'-separated components of 1..255 bytes, at
 * most 8 of them, none "." or "..", no control byte, no backslash, not absolute, no
 * drive ("C:").  False with the reason (a short rule name such as "dotdot") in *rule. */
bool oxst_location_valid(const char *s, const char **rule);

/* One data file of a bundle, for oxst_bundle_id. */
typedef struct oxst_bundle_file {
	char location[OXST_LOCATION_MAX + 1];
	uint64_t size;
	char sha256[65]; /* lowercase hex */
} oxst_bundle_file;

/* The id of a model uploaded with data files: SHA-256 (hex) of the manifest
 *   "onnxviz-bundle/1\nmodel <sha256> <size>\n" + "file <sha256> <size> <location>\n"...
 * with the files sorted by location (byte order; files[] is sorted in place).  With no
 * files the id is the model's own SHA-256, so plain uploads keep their ids.  False (out
 * untouched) when hashing failed. */
bool oxst_bundle_id(const char *model_sha, uint64_t model_size, oxst_bundle_file *files,
                    size_t n, char out[OXST_ID_LEN + 1]);
/* 64 lowercase hex characters. */
bool oxst_id_valid(const char *s);

/* The first size bytes of fd (pread from 0) in a new buffer, NULL when short or out of
 * memory. */
char *oxst_read_all(int fd, uint64_t size);

/* Remove a file or a folder tree (never following symbolic links). */
void oxst_remove_path(const char *path);
/* The files of a data folder (regular files and folders only, at most 8 levels and 4096
 * files) with their locations, sizes and SHA-256 into *files (the caller frees); false
 * when it holds anything else or cannot be read. */
bool oxst_data_files(const char *dir, oxst_bundle_file **files, size_t *n, uint64_t *bytes);
/* Create the file at relative location loc (oxst_location_valid) beneath dirfd, making
 * its folders, never following a symbolic link and never replacing anything
 * (oxp_open_beneath with OXP_BENEATH_MKDIRS): the new file open for reading and writing,
 * or -1 with *err the errno (EEXIST, ENOTDIR, ELOOP, EISDIR: the name collides with what
 * is there). */
int oxst_create_beneath(int dirfd, const char *loc, int *err);
/* SHA-256 of a whole file (read with pread from offset 0) as hex; false on read errors. */
bool oxst_sha256_fd(int fd, char hex[OXST_ID_LEN + 1]);

/* ---------------------------------------------------------------------------------------
 * Where the store logs and counts its object store requests (the service's log and
 * metrics).  Hooks not set do nothing.  Set them before opening a store, before threads.
 */
/* One request to the object store: its op (OXST_S3OP_*), how long it took and its outcome
 * (OXST_REQ_OK: answered as expected — 2xx, 304, 404, 412; OXST_REQ_ERROR: another
 * answer; OXST_REQ_RETRIED: a connection error, timeout or 5xx that was retried;
 * OXST_REQ_FAILED: the same on the last attempt; OXST_REQ_SHED: not sent, the store
 * having just failed). */
enum { OXST_REQ_OK, OXST_REQ_ERROR, OXST_REQ_RETRIED, OXST_REQ_FAILED, OXST_REQ_SHED,
       OXST_REQ__COUNT };
typedef struct oxst_hooks {
	/* one log line: level ("info", "warn", "error"), message, and "" or preformatted
	 * JSON members starting with ',' */
	void (*log)(const char *level, const char *msg, const char *extra);
	/* one request to the object store: its op (OXST_S3OP_*), time, outcome (above) */
	void (*request)(int op, uint64_t ns, int outcome);
} oxst_hooks;

void oxst_set_hooks(const oxst_hooks *h);

/* ---------------------------------------------------------------------------------------
 * Libraries loaded when first needed
 */
/* (dlopen and the .note.dlopen names: oxr_dlopen and OXR_DLOPEN_* in render/oxr.h) */

/* Load libcrypto (once; store/crypto.c: the program's EVP_* calls go through it): false
 * with the reason in err (may be NULL).  A hash without it stops the program; the server
 * calls this at start to fail there instead. */
bool oxst_crypto_load(char *err, size_t errsize);

/* ---------------------------------------------------------------------------------------
 * An S3 client (s3client.c): path-style (custom endpoints) or virtual-hosted (AWS) requests
 * signed here (Signature Version 4, oxst_s3_sign) with the payload's SHA-256 in
 * x-amz-content-sha256, so the object store refuses a body that changed on the way.
 * Every request has a connect timeout, a no-progress timeout and a total cap, and is
 * retried with exponential backoff and jitter on connection errors, timeouts and 5xx.
 * Credentials never reach a log: errors name the operation, the key and the status only.
 */
typedef struct oxst_s3_config {
	char endpoint[512];  /* scheme://host[:port] ("" = AWS, https://s3.REGION.amazonaws.com) */
	char region[64];
	char access[256], secret[256], token[4096];
	bool path_style;     /* BUCKET in the path (custom endpoints) rather than the host */
	unsigned timeout;    /* seconds a request may stall (connect, no progress) */
} oxst_s3_config;

/* The configuration from an environment (NULL-terminated "NAME=value" strings):
 * AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION (else
 * AWS_DEFAULT_REGION, else us-east-1), AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL (path-style
 * addressing then).  False with a message when the credentials are missing or a value is
 * malformed. */
bool oxst_s3_config_env(oxst_s3_config *c, char *const *envp, unsigned timeout, char *err,
                        size_t errsize);
/* "s3://BUCKET[/PREFIX]" into bucket (3..63 characters of [a-z0-9.-]) and prefix (without
 * leading or trailing '/'; "" when none).  False when malformed. */
bool oxst_s3_url_parse(const char *url, char *bucket, size_t bsize, char *prefix, size_t psize);

typedef struct oxst_s3 oxst_s3;
/* Load libcurl (once; dlopen, see s3client.c): false with the reason in err (may be NULL)
 * when it cannot be loaded.  oxst_s3_new calls it; callers call it first for the message. */
bool oxst_s3_load(char *err, size_t errsize);
/* NULL when out of memory or libcurl cannot be loaded.  Loads libcurl and calls
 * curl_global_init the first time (before threads). */
oxst_s3 *oxst_s3_new(const oxst_s3_config *c);
void oxst_s3_free(oxst_s3 *c);
/* From now on requests end at once (OXST_E_UNAVAILABLE), those running included: for a
 * shutdown that must not wait out an object store that hangs. */
void oxst_s3_cancel(oxst_s3 *c);

/* What a request is, for metrics (onnxviz_store_requests_total{op}). */
enum { OXST_S3OP_GET, OXST_S3OP_PUT, OXST_S3OP_HEAD, OXST_S3OP_DELETE, OXST_S3OP_LIST,
       OXST_S3OP_MULTIPART, OXST_S3OP__COUNT };

typedef struct oxst_s3_req {
	/* in */
	int op;                   /* OXST_S3OP_* */
	const char *method;       /* GET, HEAD, PUT, POST, DELETE */
	const char *bucket;
	const char *key;          /* "" for the bucket itself */
	const char *query;        /* canonical query string (oxst_s3_query), NULL = none */
	const char *if_none_match;/* "*" for a conditional write, NULL = none */
	const char *if_match;     /* an ETag (quotes included): write only over it, NULL = none */
	/* a server-side copy (CopyObject, UploadPartCopy): the source's key in this bucket
	 * (encoded here) and, for a part, its byte range "bytes=FIRST-LAST"; NULL = none */
	const char *copy_key;
	const char *copy_range;
	/* the request body: body[0..body_len), or body_size bytes of body_fd from body_off */
	const void *body;
	size_t body_len;
	int body_fd;              /* -1 = body is in memory (or none) */
	uint64_t body_off, body_size;
	const char *body_sha256;  /* its SHA-256 in hex when known; NULL: hashed by each call
	                           * (which leaves this NULL: r holds nothing of the call's) */
	/* the answer's body when 2xx: into out, or written to out_fd from offset 0 */
	oxr_buf *out;
	int out_fd;               /* -1 = not to a file */
	uint64_t out_max;         /* most bytes taken (0 = no limit): more is OXST_E_NOSPACE */
	bool out_sha;             /* hash what is received into sha256 */
	/* out */
	long status;              /* HTTP status of the last attempt, 0 when none answered */
	char code[64];            /* S3 error code of a non-2xx answer ("NoSuchKey"), or "" */
	char etag[96];            /* ETag of the answer, quotes included */
	uint64_t length;          /* Content-Length of the answer */
	int64_t last_modified;    /* Last-Modified (Unix seconds), 0 when absent */
	uint64_t received;        /* body bytes received */
	char sha256[65];          /* out_sha: hex SHA-256 of them */
} oxst_s3_req;

/* A request with its defaults (no body, answer discarded). */
void oxst_s3_req_init(oxst_s3_req *r, int op, const char *method, const char *bucket,
                      const char *key);
/* Run the request, retrying as above.  OXST_OK when an answer came (whatever its status:
 * see r->status and r->code); OXST_E_UNAVAILABLE when none came after the retries (or the
 * store kept answering 5xx); OXST_E_NOSPACE when the answer was larger than out_max or the
 * disk was full writing it; OXST_E_IO when writing it failed; OXST_E_NOMEM. */
oxst_status oxst_s3_do(oxst_s3 *c, oxst_s3_req *r);

#ifdef __cplusplus
}
#endif
#endif /* OXST_H */
