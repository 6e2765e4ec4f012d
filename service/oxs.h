/*
 * oxs.h — onnxviz service: the one public header of service/.
 *
 * The program's commands (main.c dispatches to them) and what the tests drive directly:
 * the configuration parser, the model store interface with its local-folder
 * implementation, and a few pure helpers of the HTTP layer (query strings, ETags, JSON
 * strings, the route table).  Names start with oxs_ / OXS_.
 */
#ifndef OXS_H
#define OXS_H

#include "render/oxr.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define OXS_VERSION "0.1.0"

/* `onnxviz inspect MODEL [--json]`: summary or the full JSON document (cli.c). */
int oxs_cli_inspect(int argc, char **argv);
/* `onnxviz render MODEL [-o out.svg|.dot|.json] [--key=value ...]` (cli.c). */
int oxs_cli_render(int argc, char **argv);
/* `onnxviz check MODEL [--json]`: the model's problems (docs/check.md).  Exit status 0
 * without errors, 1 with errors, 2 when the model cannot be read or on usage errors. */
int oxs_cli_check(int argc, char **argv);
/* `onnxviz diff A B [-o out.json|.svg|.dot] [--format=...] [--key=value ...]`: exit 0 the
 * models are the same, 1 they differ, 2 trouble (diff.c). */
int oxs_cli_diff(int argc, char **argv);
/* The layout worker's pair function (render/oxr.h, oxr_pair_fn): model is B, other is A;
 * fmt "json" (the diff document), "svg", "dot", "layout" (B's drawing with the changes
 * marked) or "text" (diff.c). */
oxr_code oxs_diff_pair(const oxr_model_files *model, const oxr_model_files *other,
                       const char *fmt, const oxr_options *o, oxr_buf *out, oxr_error *err);
/* err (may be NULL) set to code and the message; returns code (diff.c). */
oxr_code oxs_render_fail(oxr_error *err, oxr_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The layout worker's pair function: heat drawings (fmt "heat-svg|dot|json", heat_svc.c)
 * there, the rest to oxs_diff_pair. */
oxr_code oxs_pair(const oxr_model_files *model, const oxr_model_files *other, const char *fmt,
                  const oxr_options *o, oxr_buf *out, oxr_error *err);
/* Write out whole to path ("-" or NULL: standard output) through a temporary renamed over
 * it; 0, or 1 after a message on stderr (cli.c). */
int oxs_write_output(const char *path, const oxr_buf *out);
/* A command's `--key=value` argument as a render option: 0 set, 1 not of that form (the
 * caller goes on), 2 refused after "onnxviz CMD: message" on stderr (cli.c). */
int oxs_cli_render_option(oxr_options *opt, const char *cmd, const char *arg);
/* `onnxviz overlay MODEL FILE... [--json]`: the attributed table of a profile or node
 * data, with its coverage (heat_cli.c, docs/overlays.md). */
int oxs_cli_overlay(int argc, char **argv);
/* `onnxviz render`'s overlay options (--overlay FILE, --metric M, --scale S, --optimized
 * OPT.onnx), kept in a state from oxs_cli_render_heat_new (free()d by the caller):
 * option: 1 taken (argv[*i], maybe its value too), 0 not one, -1 usage error (printed);
 * render: -1 no overlay asked for, 0 drawn into out, 1 the overlay could not be read, 2
 * usage, 3 the drawing failed (err). */
void *oxs_cli_render_heat_new(void);
int oxs_cli_render_heat_option(void *state, int argc, char **argv, int *i);
int oxs_cli_render_heat(void *state, const oxp_model *m, const oxp_dag *d,
                        const oxr_options *opt, oxr_format fmt, oxr_buf *out, oxr_error *err);
/* `onnxviz serve [options]`: the HTTP service (serve.c).  Returns the exit code: 0 after
 * a clean SIGTERM/SIGINT shutdown, 2 for a usage error, 1 when it cannot start. */
int oxs_serve_main(int argc, char **argv);

/* ---------------------------------------------------------------------------------------
 * Configuration (config.c).  Defaults, then ONNXVIZ_* environment variables, then flags
 * (flags win).  `onnxviz serve --help` prints every option with its variable.
 */
typedef struct oxs_config {
	char bind[64];           /* --bind, ONNXVIZ_BIND: numeric IPv4/IPv6 address */
	unsigned port;           /* --port, ONNXVIZ_PORT: 0 = ephemeral */
	char port_file[512];     /* --port-file, ONNXVIZ_PORT_FILE: "" = none */
	char store[512];         /* --store, ONNXVIZ_STORE: folder of the local store, or
	                            s3://BUCKET[/PREFIX] for an S3-compatible object store */
	char cache_dir[512];     /* --cache-dir, ONNXVIZ_CACHE_DIR: an S3 store's local cache */
	unsigned s3_timeout;     /* --s3-timeout: seconds an object store request may stall */
	uint64_t s3_part_size;   /* --s3-part-size: multipart upload above this size */
	char source_buckets[1024]; /* --source-buckets: buckets POST /models may register
	                              models from by reference ("" = none) */
	uint64_t max_upload;     /* --max-upload: bytes of one request body */
	char token[256];         /* --token, ONNXVIZ_TOKEN: "" = no token */
	char read_token[256];    /* --read-token, ONNXVIZ_READ_TOKEN */
	bool auth_reads;         /* --auth-reads: reads need a token too */
	unsigned threads;        /* --threads: HTTP threads (libmicrohttpd pool) */
	unsigned workers;        /* --workers: threads for parsing and JSON documents */
	unsigned work_queue;     /* --work-queue: jobs waiting for them */
	unsigned layout_workers; /* --layout-workers: concurrent layout processes */
	unsigned layout_queue;   /* --layout-queue: layouts waiting (503 beyond) */
	unsigned layout_timeout; /* --layout-timeout: seconds of wall/CPU time per layout */
	uint64_t layout_memory;  /* --layout-memory: address space of a layout process */
	bool isolation;          /* --isolation: previews and documents in processes of their own */
	unsigned isolation_timeout; /* --isolation-timeout: wall/CPU seconds of one of them */
	uint64_t isolation_memory;  /* --isolation-memory: address space one of them may add */
	uint64_t store_budget;   /* --store-budget: bytes; 0 = unlimited */
	bool evict_models;       /* --evict-models: the budget may evict models too */
	bool verify_store;       /* --verify-store: hash every stored model at start */
	unsigned max_connections;/* --max-connections */
	unsigned max_per_ip;     /* --max-per-ip: connections from one address */
	unsigned timeout;        /* --timeout: idle seconds before a connection is dropped, and
	                            the most a request's headers may take in total */
	uint64_t conn_memory;    /* --conn-memory: bytes of buffer per connection */
	unsigned upload_rate;    /* --upload-rate: uploads per minute per address; 0 = off */
	unsigned model_cache;    /* --model-cache: parsed models kept in memory */
	uint64_t model_cache_bytes; /* --model-cache-bytes */
	uint64_t model_memory;   /* --model-memory: the parse budget of one model */
	uint64_t memory_cache;   /* --memory-cache: bytes of responses kept in memory */
	unsigned grace;          /* --grace: seconds to finish requests on SIGTERM */
	bool log_requests;       /* --log-requests: one line per request on stderr */
	bool help;               /* --help was given */
	char models_dir[512];    /* --models-dir, ONNXVIZ_MODELS_DIR: "" = no /files routes */
} oxs_config;

void oxs_config_default(oxs_config *c);
/* Apply envp (NULL-terminated "NAME=value" strings, may be NULL) then argv[1..argc) over
 * *c.  Returns 0, or -1 with a one-line message in err (the config is then partly
 * updated and must not be used). */
int oxs_config_parse(oxs_config *c, int argc, char **argv, char *const *envp, char *err,
                     size_t errsize);
/* The --help text. */
void oxs_config_usage(FILE *f);
/* "2G", "512MiB", "64k", "1048576" (K/M/G/T = powers of 1024).  False when malformed or
 * above 2^62. */
bool oxs_parse_size(const char *s, uint64_t *out);

/* ---------------------------------------------------------------------------------------
 * The model store (store.c): models by content id, plus cached renderings per model.
 *
 * A struct of function pointers so that another backend (an S3-compatible object store
 * for many replicas) can be added beside the local folder; the service only uses these.
 * Ids are 64 lowercase hex characters (SHA-256 of the model bytes).  All functions are
 * thread-safe.
 */
typedef enum oxs_status {
	OXS_OK = 0,
	OXS_E_NOT_FOUND,
	OXS_E_NOSPACE, /* disk full, file size limit, or the budget cannot be met */
	OXS_E_IO,
	OXS_E_INVALID, /* bad id or name */
	OXS_E_NOMEM,
	OXS_E_BUSY,        /* the store is locked by another process */
	OXS_E_UNAVAILABLE, /* the object store does not answer (after retries): 503 */
	OXS_E_AGAIN        /* stat_model without blocking: only a slow lookup could tell */
} oxs_status;

const char *oxs_status_name(oxs_status s);

#define OXS_ID_LEN 64

/* What is kept with a model at upload (put_meta) and returned by listings: the
 * uploaded file's name, the graph's name, the producer and the node count.  Strings are
 * NUL-terminated ("" = unknown); nodes is -1 when unknown (models stored without it). */
#define OXS_META_STR 256
typedef struct oxs_model_meta {
	char name[OXS_META_STR];     /* the uploaded file's name (no folders) */
	char graph[OXS_META_STR];    /* the main graph's name */
	char producer[OXS_META_STR]; /* producer_name */
	char kind[8];                /* "model" or "tensor" ("" = unknown) */
	int64_t nodes;               /* nodes of the linked graph, subgraphs included */
} oxs_model_meta;

/* meta as a JSON object into b ({"name":...,"graph":...,"producer":...,"kind":...,
 * "nodes":...}; unknown values are null), and back (false when malformed). */
bool oxs_meta_json(oxr_buf *b, const oxs_model_meta *m);
bool oxs_meta_parse(const char *json, size_t len, oxs_model_meta *out);

typedef struct oxs_model_info {
	char id[OXS_ID_LEN + 1];
	uint64_t size;
	int64_t created; /* Unix seconds */
	bool has_meta;   /* meta below was kept with the model */
	oxs_model_meta meta;
} oxs_model_info;

typedef struct oxs_store_stats {
	uint64_t models, model_bytes;
	uint64_t renderings, rendering_bytes;
	uint64_t budget;              /* 0 = unlimited */
	uint64_t evicted_models, evicted_renderings;
	uint64_t removed_temporaries; /* at open: leftovers of interrupted writes */
	uint64_t quarantined;         /* files whose content did not match their id */
	/* verification of the stored models after start (verify_background) */
	bool verifying;               /* still running */
	uint64_t verified, to_verify; /* checked so far, of this many */
} oxs_store_stats;

typedef struct oxs_store oxs_store;

typedef struct oxs_store_ops {
	const char *name;
	/* Calls may wait on the network (an object store): HTTP threads hand them to a job
	 * rather than making them.  stat_model with OXS_STAT_NONBLOCK never waits. */
	bool remote;
	/* A new empty spool file for an upload, open for writing: *fd and its path.  The
	 * caller writes it, then hands it to put_model or removes it with unlink(). */
	oxs_status (*spool)(oxs_store *s, int *fd, char *path, size_t pathsize);
	/* Store the spool file as model id durably and atomically (the file moves; the fd
	 * stays the caller's).  *created is false when the id was already stored (the spool
	 * is then removed).  May evict cached renderings (and models, when allowed) to stay
	 * within the budget; OXS_E_NOSPACE when it cannot. */
	oxs_status (*put_model)(oxs_store *s, const char *id, const char *spool_path, int fd,
	                        bool *created);
	/* Whether model id is stored, and its size.  flags: OXS_STAT_NONBLOCK answers from
	 * what is known without waiting (OXS_E_AGAIN when only a slow lookup — the network,
	 * hashing an unverified file — could tell; for HTTP threads); OXS_STAT_FRESH asks the
	 * backing store itself rather than caches (before an upload). */
	oxs_status (*stat_model)(oxs_store *s, const char *id, unsigned flags, uint64_t *size);
	/* Keep meta with model id; call it before put_model.  The first upload's meta stays
	 * (a later call for the same id does not replace it). */
	oxs_status (*put_meta)(oxs_store *s, const char *id, const oxs_model_meta *meta);
	/* Open the model read-only: *fd (caller closes) and its size. */
	oxs_status (*open_model)(oxs_store *s, const char *id, int *fd, uint64_t *size);
	/* A local file path holding the model (for mmap and the layout worker). */
	oxs_status (*model_path)(oxs_store *s, const char *id, char *path, size_t pathsize);
	/* Models in id order after `after` ("" = from the start): up to max into out, with
	 * their meta when kept.  *total (may be NULL) counts them all. */
	oxs_status (*list_models)(oxs_store *s, const char *after, oxs_model_info *out,
	                          size_t max, size_t *n, uint64_t *total);
	/* Remove the model and its renderings. */
	oxs_status (*delete_model)(oxs_store *s, const char *id);
	/* A cached rendering of model id, by name ([a-z0-9._-], at most 96 bytes). */
	oxs_status (*get_rendering)(oxs_store *s, const char *id, const char *name, int *fd,
	                            uint64_t *size);
	oxs_status (*put_rendering)(oxs_store *s, const char *id, const char *name,
	                            const void *data, size_t len);
	void (*stats)(oxs_store *s, oxs_store_stats *out);
	/* True when a write succeeds now (readiness).  Answers without waiting on the network
	 * (a remote store answers from its last probe): HTTP threads call it. */
	bool (*writable)(oxs_store *s);
	/* Remove temporaries, release the lock, free. */
	void (*close)(oxs_store *s);
	/* External data: the files a model references by relative location, kept in a
	 * folder of their own per model.  spool_dir makes a new empty folder in the store's
	 * temporary area (its path; the caller fills it and hands it to put_data, or leaves
	 * it to be removed at close/open).  put_data moves it to be model id's data folder,
	 * durably (files and folders fsync'ed by the caller, the rename here); call it before
	 * put_model of the same id so that a stored model never lacks its data.  When id
	 * already has data the spool folder is removed.  open_data opens the model's data
	 * folder O_PATH|O_DIRECTORY (*dirfd, the caller closes it); OXS_E_NOT_FOUND when the
	 * model has none. */
	oxs_status (*spool_dir)(oxs_store *s, char *path, size_t pathsize);
	oxs_status (*put_data)(oxs_store *s, const char *id, const char *spool_dir);
	oxs_status (*open_data)(oxs_store *s, const char *id, int *dirfd);
} oxs_store_ops;

#define OXS_STAT_NONBLOCK 1u
#define OXS_STAT_FRESH 2u

struct oxs_store {
	const oxs_store_ops *ops;
};

typedef struct oxs_store_local_options {
	uint64_t budget;   /* bytes; 0 = unlimited */
	bool evict_models; /* the budget may evict least-recently-used models */
	bool verify;       /* hash every model at open; mismatches go to quarantine/ */
	/* instead: open at once, hash every model on a background thread, and any model not
	 * yet checked when it is first read (stats() tells the progress) */
	bool verify_background;
	/* a cache of another store: no fsync (with verify_background only: after a crash
	 * the verification finds torn files) */
	bool no_sync;
} oxs_store_local_options;

/* Open (creating it when missing) the folder store at root: takes an exclusive lock,
 * removes temporaries left by a crash, quarantines misnamed or (with verify) corrupt
 * files and renderings without a model, and indexes the rest.  err gets a message. */
oxs_status oxs_store_local_open(oxs_store **out, const char *root,
                                const oxs_store_local_options *opt, char *err,
                                size_t errsize);

/* The S3-compatible object store (store_s3.c): models and what belongs to them under
 * s3://BUCKET/PREFIX, a bounded local cache folder in front (a local store under
 * cache_dir), no lock: any number of replicas share the bucket.  The endpoint, region
 * and credentials come from the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
 * AWS_SESSION_TOKEN, AWS_REGION, AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL). */
typedef struct oxs_store_s3_options {
	const char *url;        /* s3://BUCKET[/PREFIX] */
	const char *cache_dir;  /* the local cache folder */
	uint64_t cache_budget;  /* bytes of the local cache (> 0): a model and its data fit it */
	unsigned timeout;       /* seconds a request may stall (connect, no progress) */
	uint64_t part_size;     /* multipart upload above this many bytes (>= 5 MiB) */
	char *const *envp;      /* the environment to read AWS_* from */
} oxs_store_s3_options;

oxs_status oxs_store_s3_open(oxs_store **out, const oxs_store_s3_options *opt, char *err,
                             size_t errsize);

/* ---------------------------------------------------------------------------------------
 * The server in process, without a listening socket (serve.c): the request handling of
 * `serve`, fed connections one by one.  For the HTTP fuzz target and tests.
 */
typedef struct oxs_server oxs_server;

/* Start a server with configuration cfg (bind and port are not used) whose layout workers
 * run exe (`exe __render ...`).  Returns 0 with *out set, or -1 with a message in err. */
int oxs_server_open(oxs_server **out, const oxs_config *cfg, const char *exe, char *err,
                    size_t errsize);
/* Hand a connected stream socket to the server (it owns fd from now on, also on failure,
 * when it is closed).  Returns 0, or -1 when the daemon refused it. */
int oxs_server_add_connection(oxs_server *srv, int fd);
/* Requests begun and not yet completed. */
int oxs_server_inflight(oxs_server *srv);
/* Stop the daemon and the pools, close the store, free.  NULL is a no-op. */
void oxs_server_close(oxs_server *srv);

/* ---------------------------------------------------------------------------------------
 * Helpers of the HTTP layer, pure and exposed for the unit tests (util.c, routes.c).
 */
/* Longest relative location of an uploaded data file (bytes, without the NUL). */
#define OXS_LOCATION_MAX 1023

/* A data file's location as a multipart field name gives it ("weights.bin",
 * "data/w.bin"): 1..OXS_LOCATION_MAX bytes, '/'-separated components of 1..255 bytes, at
 * most 8 of them, none "." or "..", no control byte, no backslash, not absolute, no
 * drive ("C:").  False with the reason (a short rule name such as "dotdot") in *rule. */
bool oxs_location_valid(const char *s, const char **rule);

/* One data file of a bundle, for oxs_bundle_id. */
typedef struct oxs_bundle_file {
	char location[OXS_LOCATION_MAX + 1];
	uint64_t size;
	char sha256[65]; /* lowercase hex */
} oxs_bundle_file;

/* The id of a model uploaded with data files: SHA-256 (hex) of the manifest
 *   "onnxviz-bundle/1\nmodel <sha256> <size>\n" + "file <sha256> <size> <location>\n"...
 * with the files sorted by location (byte order; files[] is sorted in place).  With no
 * files the id is the model's own SHA-256, so plain uploads keep their ids.  False (out
 * untouched) when hashing failed. */
bool oxs_bundle_id(const char *model_sha, uint64_t model_size, oxs_bundle_file *files,
                   size_t n, char out[OXS_ID_LEN + 1]);
/* 64 lowercase hex characters. */
bool oxs_id_valid(const char *s);
/* Lowercase hex of n bytes into out (2n+1 bytes). */
void oxs_hex(char *out, const unsigned char *bytes, size_t n);

typedef struct oxs_query_pair {
	const char *key, *value; /* NUL-terminated, inside the caller's buffer */
} oxs_query_pair;

/* Split a raw query string ("a=1&b=x%20y") in place into decoded pairs (%XX and '+').
 * A key without '=' gets the value "".  Returns the pair count, or -1 on a malformed
 * escape, a decoded NUL byte, or more than max pairs. */
int oxs_query_split(char *query, oxs_query_pair *out, size_t max);

/* If-None-Match semantics (weak comparison, lists, "*"): true when the header matches
 * etag (given with its quotes, e.g. "\"abc\""). */
bool oxs_etag_match(const char *if_none_match, const char *etag);

/* Append s[0..n) as a quoted JSON string: control characters escaped, invalid UTF-8
 * bytes replaced by U+FFFD.  False when the buffer failed. */
bool oxs_json_string(oxr_buf *b, const char *s, size_t n);

/* Render options from query pairs (oxr_options_set for each, defaults first).  False with
 * a message when a key is unknown, a value bad, or a key repeated. */
bool oxs_query_options(const oxs_query_pair *pairs, size_t n, oxr_options *opt, char *err,
                       size_t errsize);

/* Tensor previews (GET /models/{id}/tensors/{name}): the query, checked.
 *   values=N   elements to decode (JSON: default 100, at most OXS_PREVIEW_JSON_MAX;
 *              .npy: default the rest of the tensor, at most OXS_PREVIEW_NPY_MAX)
 *   offset=K   first element (default 0)
 *   stats=0|1  statistics over the whole tensor (default 1; JSON only)
 *   bins=B     histogram bins, 0..OXS_PREVIEW_BINS_MAX (default 32; 0 = none)
 *   format=json|npy */
#define OXS_PREVIEW_JSON_MAX 100000u
#define OXS_PREVIEW_NPY_MAX (16u << 20)
#define OXS_PREVIEW_BINS_MAX 4096u

typedef struct oxs_preview_opt {
	uint64_t offset;
	uint32_t values;
	bool values_given;
	bool stats;
	uint32_t bins;
	bool npy;
	bool dequantize;  /* the float32 values (q - zero_point) * scale (docs/quant.md) */
} oxs_preview_opt;

/* Fill *o from query pairs (defaults first).  False with a message when a key is
 * unknown or repeated or a value is malformed or out of range. */
bool oxs_preview_query(const oxs_query_pair *pairs, size_t n, oxs_preview_opt *o, char *err,
                       size_t errsize);
/* The canonical text of *o ("v=100&o=0&s=1&b=32&f=json&q=0"), for cache keys. */
void oxs_preview_key(const oxs_preview_opt *o, char *out, size_t size);

/* The route table, as the server answers it: pattern ("/models/{id}") and methods
 * ("GET HEAD DELETE").  False past the end. */
bool oxs_route_get(size_t i, const char **pattern, const char **methods);
/* The OpenAPI document served at /openapi.json (embedded at build time). */
const char *oxs_openapi(size_t *len);

#ifdef __cplusplus
}
#endif
#endif /* OXS_H */
