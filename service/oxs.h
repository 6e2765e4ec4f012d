/*
 * oxs.h — onnxviz service: the one public header of service/.
 *
 * The program's commands (main.c dispatches to them) and what the tests drive directly:
 * the configuration parser (and the store's options from it: the store itself is
 * store/oxst.h), and a few pure helpers of the HTTP layer (query strings, ETags, JSON
 * strings, the route table).  Names start with oxs_ / OXS_.
 */
#ifndef OXS_H
#define OXS_H

#include "render/oxr.h"
#include "store/oxst.h"

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
/* Write out whole to path ("-" or NULL: standard output) through a temporary renamed over
 * it; 0, or 1 after a message on stderr (cli.c). */
int oxs_write_output(const char *path, const oxr_buf *out);
/* A command's `--key=value` argument as a render option: 0 set, 1 not of that form (the
 * caller goes on), 2 refused after "onnxviz CMD: message" on stderr (cli.c). */
int oxs_cli_render_option(oxr_options *opt, const char *cmd, const char *arg);
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
/* The store's options from the configuration (--store, --store-budget, --cache-dir, ...;
 * AWS_* read from envp) for oxst_open. */
void oxs_config_store(const oxs_config *c, char *const *envp, oxst_options *o);


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
