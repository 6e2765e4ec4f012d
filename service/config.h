/*
 * config.h — the configuration of `onnxviz serve` (config.c).  Defaults, then ONNXVIZ_*
 * environment variables, then flags (flags win).  `onnxviz serve --help` prints every
 * option with its variable.  A leaf.
 */
#ifndef OXS_CONFIG_H
#define OXS_CONFIG_H

#include "store/oxst.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

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
	uint64_t upload_part_size; /* --upload-part-size: parts of resumable uploads */
	uint64_t max_resumable;  /* --max-resumable: bytes of one resumable upload (0: the
	                            store budget and the disk) */
	unsigned upload_streams; /* --upload-streams: pieces of one part in flight at once */
	unsigned upload_expiry;  /* --upload-expiry: seconds an idle resumable upload is kept */
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
	unsigned max_pixels;     /* --max-pixels: pixels of one PNG (render/oxr.h, raster) */
	unsigned grace;          /* --grace: seconds to finish requests on SIGTERM */
	bool log_requests;       /* --log-requests: one line per request on stderr */
	bool help;               /* --help was given */
	char models_dir[512];    /* --models-dir, ONNXVIZ_MODELS_DIR: "" = no /files routes */
	/* per-client limits and hardening (issue 35; docs/security-model.md) */
	unsigned uploads_per_client;   /* --uploads-per-client: resumable uploads in progress */
	uint64_t body_per_client;      /* --body-per-client: request body bytes held in memory */
	unsigned overlays_per_client;  /* --overlays-per-client: overlay posts in flight */
	unsigned upload_start_expiry;  /* --upload-start-expiry: seconds an upload with nothing
	                                  acknowledged is kept */
	/* fuzz_http only, no flag and no variable: an upload's secret is derived from its
	 * file's sha256 and size (as before issue 35), so static seeds can name it */
	bool test_derived_upload_ids;
	unsigned inflate_ratio;        /* --inflate-ratio-limit: decoded/encoded bytes of a body */
	uint64_t inflate_burst;        /* --inflate-ratio-burst: decoded bytes before the ratio
	                                  applies */
	uint64_t min_body_rate;        /* --min-body-rate: bytes/s a body must average over each
	                                  --timeout window; 0 = off */
	char token_file[512];          /* --token-file: read --token from this file */
	char read_token_file[512];     /* --read-token-file */
	char trusted_proxies[1024];    /* --trusted-proxies: addresses or CIDR blocks whose
	                                  X-Forwarded-For names the client (quota.h) */
	char base_url[256];            /* --base-url: this server as its users reach it ("" = not
	                                  known; no trailing '/'), for links in /diff.md and
	                                  POST /sign */
	char sign_secret_file[512];    /* --sign-secret-file: the key of signed links (sign.h) */
	unsigned sign_max_ttl;         /* --sign-max-ttl: seconds a signed link may live */
	char frame_ancestors[1024];    /* --frame-ancestors: origins that may frame /embed/{id}
	                                  (embed.h; "" = none, the default) */
	char allowed_hosts[1024];      /* --allowed-hosts: Host names accepted besides the bind
	                                  address's (comma-separated; "*" = any) */
} oxs_config;

void oxs_config_default(oxs_config *c);
/* Apply envp (NULL-terminated "NAME=value" strings, may be NULL) then argv[1..argc) over
 * *c.  Returns 0, or -1 with a one-line message in err (the config is then partly
 * updated and must not be used). */
int oxs_config_parse(oxs_config *c, int argc, char **argv, char *const *envp, char *err,
                     size_t errsize);
/* Overwrite the values of --token and --read-token in argv (with x, in place) so that the
 * process list no longer shows them; after oxs_config_parse. */
void oxs_config_hide_secrets(int argc, char **argv);
/* The --help text. */
void oxs_config_usage(FILE *f);
/* "2G", "512MiB", "64k", "1048576" (K/M/G/T = powers of 1024).  False when malformed or
 * above 2^62. */
bool oxs_parse_size(const char *s, uint64_t *out);
/* The store's options from the configuration (--store, --store-budget, --cache-dir, ...;
 * AWS_* read from envp) for oxst_open. */
void oxs_config_store(const oxs_config *c, char *const *envp, oxst_options *o);

#endif /* OXS_CONFIG_H */
