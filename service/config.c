/*
 * config.c — `onnxviz serve` options: one table gives each option's flag, environment
 * variable, type, default and help line.  Order of precedence: built-in default, then
 * environment, then command line.
 */
#include "service/config.h"
#include "parser/oxp.h"
#include "render/oxr.h"
#include "service/md.h"
#include "service/origins.h"
#include "store/oxst.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef enum { T_STR, T_UINT, T_SIZE, T_BOOL } opt_type;

typedef struct opt {
	const char *flag; /* without the leading "--" */
	const char *env;
	opt_type type;
	size_t offset;    /* of the field in oxs_config */
	size_t size;      /* T_STR: buffer size */
	unsigned min, max;/* T_UINT bounds */
	const char *arg;  /* placeholder in --help */
	const char *help;
} opt;

#define F(field) offsetof(oxs_config, field), sizeof(((oxs_config *)0)->field)

static const opt opts[] = {
    {"port", "ONNXVIZ_PORT", T_UINT, F(port), 0, 65535, "N",
     "TCP port (default 8080; 0 picks a free one)"},
    {"bind", "ONNXVIZ_BIND", T_STR, F(bind), 0, 0, "ADDR",
     "address to listen on (default 127.0.0.1; 0.0.0.0 or :: for all)"},
    {"port-file", "ONNXVIZ_PORT_FILE", T_STR, F(port_file), 0, 0, "PATH",
     "write the port number there once listening"},
    {"store", "ONNXVIZ_STORE", T_STR, F(store), 0, 0, "DIR|URL",
     "folder of the model store (default ./data), or s3://BUCKET[/PREFIX] for an "
     "S3-compatible object store shared by replicas (credentials and endpoint: AWS_*)"},
    {"cache-dir", "ONNXVIZ_CACHE_DIR", T_STR, F(cache_dir), 0, 0, "DIR",
     "with an S3 store: this replica's local cache folder (default ./cache)"},
    {"s3-timeout", "ONNXVIZ_S3_TIMEOUT", T_UINT, F(s3_timeout), 1, 3600, "SEC",
     "seconds an object store request may stall (connect, no progress) before it is "
     "retried (default 10)"},
    {"s3-part-size", "ONNXVIZ_S3_PART_SIZE", T_SIZE, F(s3_part_size), 0, 0, "SIZE",
     "models larger than this go up to the object store as multipart uploads of parts "
     "this size (default 16M; 5M..5G)"},
    {"source-buckets", "ONNXVIZ_SOURCE_BUCKETS", T_STR, F(source_buckets), 0, 0, "LIST",
     "comma-separated buckets that POST /models {\"source\": \"s3://...\"} may register "
     "models from (default: none)"},
    {"models-dir", "ONNXVIZ_MODELS_DIR", T_STR, F(models_dir), 0, 0, "DIR",
     "serve the models of this folder read-only at /files/<path>/... (default: none)"},
    {"max-upload", "ONNXVIZ_MAX_UPLOAD", T_SIZE, F(max_upload), 0, 0, "SIZE",
     "largest request body (default 2G)"},
    {"upload-part-size", "ONNXVIZ_UPLOAD_PART_SIZE", T_SIZE, F(upload_part_size), 0, 0,
     "SIZE", "part size of resumable uploads (POST /uploads; default 16M; 64K..1G; more "
     "when 10,000 parts would not hold a file)"},
    {"upload-streams", "ONNXVIZ_UPLOAD_STREAMS", T_UINT, F(upload_streams), 1, 8, "N",
     "requests a client may send one part of a resumable upload in at once, as pieces "
     "(default 4; 1: one PATCH per part; an S3 store takes whole parts only)"},
    {"max-resumable", "ONNXVIZ_MAX_RESUMABLE", T_SIZE, F(max_resumable), 0, 0, "SIZE",
     "largest file of a resumable upload (default 0: what the store budget and the disk "
     "hold)"},
    {"upload-expiry", "ONNXVIZ_UPLOAD_EXPIRY", T_UINT, F(upload_expiry), 1, 31 * 86400, "SEC",
     "seconds a resumable upload is kept after its last part (default 86400)"},
    {"token", "ONNXVIZ_TOKEN", T_STR, F(token), 0, 0, "TOKEN",
     "bearer token for uploads and deletes (DELETE is refused without one); prefer "
     "--token-file: a flag's value is overwritten at start but was in the process list "
     "until then"},
    {"read-token", "ONNXVIZ_READ_TOKEN", T_STR, F(read_token), 0, 0, "TOKEN",
     "bearer token for reads (the write token works too); prefer --read-token-file"},
    {"auth-reads", "ONNXVIZ_AUTH_READS", T_BOOL, F(auth_reads), 0, 0, NULL,
     "reads need the token (or the read token) as well"},
    {"threads", "ONNXVIZ_THREADS", T_UINT, F(threads), 1, 256, "N",
     "HTTP threads (default 4)"},
    {"workers", "ONNXVIZ_WORKERS", T_UINT, F(workers), 1, 256, "N",
     "threads parsing models and building JSON documents (default 2)"},
    {"work-queue", "ONNXVIZ_WORK_QUEUE", T_UINT, F(work_queue), 1, 100000, "N",
     "jobs waiting for those threads before 503 (default 64)"},
    {"layout-workers", "ONNXVIZ_LAYOUT_WORKERS", T_UINT, F(layout_workers), 1, 256, "N",
     "layout processes running at once (default 2)"},
    {"layout-queue", "ONNXVIZ_LAYOUT_QUEUE", T_UINT, F(layout_queue), 1, 100000, "N",
     "layouts waiting before 503 + Retry-After (default 16)"},
    {"layout-timeout", "ONNXVIZ_LAYOUT_TIMEOUT", T_UINT, F(layout_timeout), 1, 86400, "SEC",
     "wall-clock and CPU seconds of one layout (default 30)"},
    {"layout-memory", "ONNXVIZ_LAYOUT_MEMORY", T_SIZE, F(layout_memory), 0, 0, "SIZE",
     "address space of one layout process (default 2G)"},
    {"isolation", "ONNXVIZ_ISOLATION", T_BOOL, F(isolation), 0, 0, NULL,
     "compute tensor previews and JSON documents in a process each, so that a fault in "
     "one cannot stop the server (default on)"},
    {"isolation-timeout", "ONNXVIZ_ISOLATION_TIMEOUT", T_UINT, F(isolation_timeout), 1,
     86400, "SEC", "wall-clock and CPU seconds of one such computation (default 120)"},
    {"isolation-memory", "ONNXVIZ_ISOLATION_MEMORY", T_SIZE, F(isolation_memory), 0, 0,
     "SIZE", "address space one such process may add to the server's (default 2G)"},
    {"store-budget", "ONNXVIZ_STORE_BUDGET", T_SIZE, F(store_budget), 0, 0, "SIZE",
     "bytes the store may use; least recently used renderings are evicted (default 0: "
     "no limit); with an S3 store, the local cache's bytes (default 0: 4G)"},
    {"evict-models", "ONNXVIZ_EVICT_MODELS", T_BOOL, F(evict_models), 0, 0, NULL,
     "let the budget evict least recently used models too (default off)"},
    {"verify-store", "ONNXVIZ_VERIFY_STORE", T_BOOL, F(verify_store), 0, 0, NULL,
     "hash every stored model after start, in the background and before a model is first "
     "read, quarantining mismatches (default on)"},
    {"max-connections", "ONNXVIZ_MAX_CONNECTIONS", T_UINT, F(max_connections), 1, 100000,
     "N", "open connections (default 512)"},
    {"max-per-ip", "ONNXVIZ_MAX_PER_IP", T_UINT, F(max_per_ip), 0, 100000, "N",
     "open connections from one address (default 64; 0 = no limit)"},
    {"timeout", "ONNXVIZ_TIMEOUT", T_UINT, F(timeout), 1, 86400, "SEC",
     "idle seconds before a connection is dropped; also the time a request's "
     "headers may take in total (default 30)"},
    {"conn-memory", "ONNXVIZ_CONN_MEMORY", T_SIZE, F(conn_memory), 0, 0, "SIZE",
     "buffer memory per connection (default 128K)"},
    {"upload-rate", "ONNXVIZ_UPLOAD_RATE", T_UINT, F(upload_rate), 0, 1000000, "N",
     "uploads per minute from one address before 429 (default 0: no limit)"},
    {"model-cache", "ONNXVIZ_MODEL_CACHE", T_UINT, F(model_cache), 1, 100000, "N",
     "parsed models kept in memory (default 16)"},
    {"model-memory", "ONNXVIZ_MODEL_MEMORY", T_SIZE, F(model_memory), 0, 0, "SIZE",
     "memory the parser may use for one model (its parse budget, default 512M); a model "
     "that needs more is refused: 422 over_budget"},
    {"model-cache-bytes", "ONNXVIZ_MODEL_CACHE_BYTES", T_SIZE, F(model_cache_bytes), 0, 0,
     "SIZE", "memory those parsed models may use (default 512M)"},
    {"memory-cache", "ONNXVIZ_MEMORY_CACHE", T_SIZE, F(memory_cache), 0, 0, "SIZE",
     "renderings and documents kept in memory (default 256M)"},
    {"max-pixels", "ONNXVIZ_MAX_PIXELS", T_UINT, F(max_pixels), 1, 1000000000, "N",
     "pixels of one PNG image, width x height (default 64000000): a drawing larger is "
     "scaled down to fit, a request asking for more (w, h, scale) is refused (422)"},
    {"grace", "ONNXVIZ_GRACE", T_UINT, F(grace), 0, 3600, "SEC",
     "on SIGTERM/SIGINT, time to finish running requests (default 30)"},
    {"base-url", "ONNXVIZ_BASE_URL", T_STR, F(base_url), 0, 0, "URL",
     "this server's address as its users reach it (http[s]://host[:port][/path]): links in "
     "GET /diff.md and the url of POST /sign (default: none)"},
    {"frame-ancestors", "ONNXVIZ_FRAME_ANCESTORS", T_STR, F(frame_ancestors), 0, 0, "ORIGINS",
     "origins that may show GET /embed/{id} in a frame and talk to it (postMessage), "
     "space- or comma-separated: https://registry.example.com (default: none; every other "
     "answer stays unframable)"},
    {"sign-secret-file", "ONNXVIZ_SIGN_SECRET_FILE", T_STR, F(sign_secret_file), 0, 0, "PATH",
     "the key of signed links (32..1024 bytes, e.g. `openssl rand -hex 32`): URLs that read "
     "one resource until they expire without a token (POST /sign, onnxviz sign; default: "
     "none, no signed links)"},
    {"sign-max-ttl", "ONNXVIZ_SIGN_MAX_TTL", T_UINT, F(sign_max_ttl), 1, 31536000, "SEC",
     "the longest a signed link may live (default 604800, 7 days)"},
    {"log-requests", "ONNXVIZ_LOG_REQUESTS", T_BOOL, F(log_requests), 0, 0, NULL,
     "log one line per request on stderr (default on)"},
    {"uploads-per-client", "ONNXVIZ_UPLOADS_PER_CLIENT", T_UINT, F(uploads_per_client), 1,
     100000, "N", "resumable uploads one client (its token, else its address) may have in "
     "progress (default 16)"},
    {"body-per-client", "ONNXVIZ_BODY_PER_CLIENT", T_SIZE, F(body_per_client), 0, 0, "SIZE",
     "memory one client (its token, else its address) may hold for request bodies at "
     "once: an upload holds --conn-memory and its state (default 64M; 503 body_quota "
     "beyond)"},
    {"overlays-per-client", "ONNXVIZ_OVERLAYS_PER_CLIENT", T_UINT, F(overlays_per_client), 1,
     10000, "N", "overlay posts one client may have in flight (default 2)"},
    {"upload-start-expiry", "ONNXVIZ_UPLOAD_START_EXPIRY", T_UINT, F(upload_start_expiry), 1,
     31 * 86400, "SEC", "seconds a resumable upload with no part acknowledged is kept "
     "(default 600)"},
    {"inflate-ratio-limit", "ONNXVIZ_INFLATE_RATIO_LIMIT", T_UINT, F(inflate_ratio), 1,
     1000000, "N", "most bytes a gzip'd body may decode to per byte sent, past the burst "
     "(default 200; 413 beyond)"},
    {"inflate-ratio-burst", "ONNXVIZ_INFLATE_RATIO_BURST", T_SIZE, F(inflate_burst), 0, 0,
     "SIZE", "decoded bytes of a gzip'd body before the ratio applies (default 1M)"},
    {"min-body-rate", "ONNXVIZ_MIN_BODY_RATE", T_SIZE, F(min_body_rate), 0, 0, "SIZE",
     "bytes per second a request body must average over each --timeout window (default "
     "1K; 0 = off)"},
    {"token-file", "ONNXVIZ_TOKEN_FILE", T_STR, F(token_file), 0, 0, "PATH",
     "read the bearer token for uploads and deletes from this file, read once at start "
     "(its one line; a trailing newline is dropped; refused when others may write it or "
     "with --token): the token never shows in the process list"},
    {"read-token-file", "ONNXVIZ_READ_TOKEN_FILE", T_STR, F(read_token_file), 0, 0, "PATH",
     "read the read token from this file (as --token-file)"},
    {"trusted-proxies", "ONNXVIZ_TRUSTED_PROXIES", T_STR, F(trusted_proxies), 0, 0, "LIST",
     "addresses or CIDR blocks of load balancers (comma-separated): a request from one of "
     "them counts against the client its X-Forwarded-For names (default: none)"},
    {"allowed-hosts", "ONNXVIZ_ALLOWED_HOSTS", T_STR, F(allowed_hosts), 0, 0, "LIST",
     "Host names answered besides localhost, names under .localhost and loopback and "
     "bind addresses (comma-separated; .example.com: any name under it; * = any); others "
     "are 403 bad_host (DNS rebinding). Default: none when bound to loopback; bound "
     "elsewhere, any name unless this is set (IP addresses always)"},
};

#define NOPTS (sizeof(opts) / sizeof(opts[0]))

void oxs_config_default(oxs_config *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->bind, sizeof(c->bind), "127.0.0.1");
	c->port = 8080;
	snprintf(c->store, sizeof(c->store), "./data");
	snprintf(c->cache_dir, sizeof(c->cache_dir), "./cache");
	c->s3_timeout = 10;
	c->s3_part_size = (uint64_t)16 << 20;
	c->max_upload = (uint64_t)2 << 30;
	c->upload_part_size = (uint64_t)16 << 20;
	c->upload_expiry = 86400;
	c->upload_streams = 4;
	c->threads = 4;
	c->workers = 2;
	c->work_queue = 64;
	c->layout_workers = 2;
	c->layout_queue = 16;
	c->layout_timeout = 30;
	c->layout_memory = (uint64_t)2 << 30;
	/* AddressSanitizer's allocator (GCC 12's libasan) is not fork-safe: a forked copy can
	 * hang in malloc on a lock another thread held at the fork (seen as a 120 s timeout
	 * under the hostile suite's 64 concurrent uploads).  Sanitizer builds compute in
	 * process unless --isolation=on asks (the isolation test does, one request at a time). */
#if defined(__SANITIZE_ADDRESS__)
	c->isolation = false;
#else
	c->isolation = true;
#endif
	c->isolation_timeout = 120;
	c->isolation_memory = (uint64_t)2 << 30;
	c->verify_store = true;
	c->max_connections = 512;
	c->max_per_ip = 64;
	c->timeout = 30;
	c->conn_memory = 128 << 10;
	c->model_cache = 16;
	c->model_cache_bytes = (uint64_t)512 << 20;
	c->model_memory = (uint64_t)512 << 20;
	c->memory_cache = (uint64_t)256 << 20;
	c->max_pixels = OXR_RASTER_MAX_PIXELS;
	c->grace = 30;
	c->sign_max_ttl = 604800;
	c->log_requests = true;
	c->uploads_per_client = 16;
	c->body_per_client = (uint64_t)64 << 20;
	c->overlays_per_client = 2;
	c->upload_start_expiry = 600;
	c->inflate_ratio = 200;
	c->inflate_burst = (uint64_t)1 << 20;
	c->min_body_rate = 1024;
}

bool oxs_parse_size(const char *s, uint64_t *out)
{
	if (s == NULL || *s < '0' || *s > '9')
		return false;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno != 0)
		return false;
	unsigned shift = 0;
	switch (*end) {
	case '\0': break;
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: return false;
	}
	if (shift != 0 && (strcmp(end, "iB") == 0 || strcmp(end, "B") == 0 ||
	                   strcmp(end, "ib") == 0 || strcmp(end, "b") == 0))
		end += strlen(end);
	if (*end != '\0')
		return false;
	if (v > ((uint64_t)1 << 62) >> shift)
		return false;
	*out = (uint64_t)v << shift;
	return true;
}

static bool parse_uint(const char *s, unsigned min, unsigned max, unsigned *out)
{
	if (s == NULL || *s < '0' || *s > '9' || strlen(s) > 10)
		return false;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (*end != '\0' || v < min || v > max)
		return false;
	*out = (unsigned)v;
	return true;
}

static bool parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = {"1", "on", "yes", "true"};
	static const char *const no[] = {"0", "off", "no", "false"};
	for (size_t i = 0; i < 4; i++) {
		if (strcmp(s, yes[i]) == 0) {
			*out = true;
			return true;
		}
		if (strcmp(s, no[i]) == 0) {
			*out = false;
			return true;
		}
	}
	return false;
}

static int fail(char *err, size_t errsize, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errsize, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errsize, fmt, ap);
	va_end(ap);
	return -1;
}

/* Set option o from text v; `from` names the source in error messages. */
static int set_opt(oxs_config *c, const opt *o, const char *v, const char *from, char *err,
                   size_t errsize)
{
	char *field = (char *)c + o->offset;
	switch (o->type) {
	case T_STR:
		if (strlen(v) >= o->size)
			return fail(err, errsize, "%s: value too long (at most %zu bytes)", from,
			            o->size - 1);
		memcpy(field, v, strlen(v) + 1);
		return 0;
	case T_UINT: {
		unsigned u;
		if (!parse_uint(v, o->min, o->max, &u))
			return fail(err, errsize, "%s: expected a whole number in %u..%u", from, o->min,
			            o->max);
		memcpy(field, &u, sizeof(u));
		return 0;
	}
	case T_SIZE: {
		uint64_t sz;
		if (!oxs_parse_size(v, &sz))
			return fail(err, errsize, "%s: expected a size such as 512M, 2G or 1048576", from);
		memcpy(field, &sz, sizeof(sz));
		return 0;
	}
	case T_BOOL: {
		bool b;
		if (!parse_bool(v, &b))
			return fail(err, errsize, "%s: expected on/off (1/0, yes/no, true/false)", from);
		memcpy(field, &b, sizeof(b));
		return 0;
	}
	}
	return fail(err, errsize, "%s: internal error", from);
}

static const opt *find_flag(const char *name, size_t len)
{
	for (size_t i = 0; i < NOPTS; i++)
		if (strlen(opts[i].flag) == len && memcmp(opts[i].flag, name, len) == 0)
			return &opts[i];
	return NULL;
}

/* A token from a file (--token-file): its one line, a trailing newline (LF or CRLF)
 * dropped, into out[size].  Refused: a file that is not regular, one others may write (it
 * would let them choose the token), an empty one, control characters or more than one
 * line, more than size - 1 bytes.  A file others may read is taken: Docker and Kubernetes
 * mount secrets 0444, the container being the boundary (docs/decisions.md 86). */
static int read_secret(const char *path, const char *flag, char *out, size_t size, char *err,
                       size_t errsize)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return fail(err, errsize, "%s %.200s: %s", flag, path, strerror(errno));
	struct stat st;
	char buf[512];
	ssize_t n = -1;
	int rc = 0;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		rc = fail(err, errsize, "%s %.200s: not a regular file", flag, path);
	else if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
		rc = fail(err, errsize, "%s %.200s: others may write it (chmod go-w)", flag, path);
	else if ((n = read(fd, buf, sizeof(buf))) < 0)
		rc = fail(err, errsize, "%s %.200s: %s", flag, path, strerror(errno));
	close(fd);
	size_t len = n > 0 ? (size_t)n : 0;
	if (rc == 0 && len > 0 && buf[len - 1] == '\n')
		len -= len > 1 && buf[len - 2] == '\r' ? 2 : 1;
	for (size_t i = 0; rc == 0 && i < len; i++)
		if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
			rc = fail(err, errsize, "%s %.200s: control characters or more than one line",
			          flag, path);
	if (rc == 0 && len == 0)
		rc = fail(err, errsize, "%s %.200s: the file is empty", flag, path);
	if (rc == 0 && len >= size)
		rc = fail(err, errsize, "%s %.200s: the token is longer than %zu bytes", flag, path,
		          size - 1);
	if (rc == 0) {
		memcpy(out, buf, len);
		out[len] = '\0';
	}
	explicit_bzero(buf, sizeof(buf));
	return rc;
}

/* --token-file and --read-token-file into the tokens; either token given both ways is
 * refused (which one was meant?). */
static int read_token_files(oxs_config *c, char *err, size_t errsize)
{
	if (c->token_file[0] != '\0') {
		if (c->token[0] != '\0')
			return fail(err, errsize, "--token and --token-file: give one of them");
		if (read_secret(c->token_file, "--token-file", c->token, sizeof(c->token), err,
		                errsize) != 0)
			return -1;
	}
	if (c->read_token_file[0] != '\0') {
		if (c->read_token[0] != '\0')
			return fail(err, errsize, "--read-token and --read-token-file: give one of them");
		if (read_secret(c->read_token_file, "--read-token-file", c->read_token,
		                sizeof(c->read_token), err, errsize) != 0)
			return -1;
	}
	return 0;
}

void oxs_config_hide_secrets(int argc, char **argv)
{
	static const char *const secret[] = {"--token", "--read-token"};
	for (int a = 1; a < argc; a++) {
		for (size_t i = 0; i < sizeof(secret) / sizeof(secret[0]); i++) {
			size_t n = strlen(secret[i]);
			char *v = NULL;
			if (strncmp(argv[a], secret[i], n) != 0)
				continue;
			if (argv[a][n] == '=')
				v = argv[a] + n + 1;
			else if (argv[a][n] == '\0' && a + 1 < argc)
				v = argv[++a];
			/* the same length of x: the arguments keep their places in the process list */
			for (; v != NULL && *v != '\0'; v++)
				*v = 'x';
			break;
		}
	}
}

int oxs_config_parse(oxs_config *c, int argc, char **argv, char *const *envp, char *err,
                     size_t errsize)
{
	for (size_t e = 0; envp != NULL && envp[e] != NULL; e++) {
		const char *eq = strchr(envp[e], '=');
		if (eq == NULL || strncmp(envp[e], "ONNXVIZ_", 8) != 0)
			continue;
		size_t nlen = (size_t)(eq - envp[e]);
		for (size_t i = 0; i < NOPTS; i++) {
			if (strlen(opts[i].env) != nlen || memcmp(opts[i].env, envp[e], nlen) != 0)
				continue;
			if (set_opt(c, &opts[i], eq + 1, opts[i].env, err, errsize) != 0)
				return -1;
		}
	}
	for (int a = 1; a < argc; a++) {
		const char *arg = argv[a];
		if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
			c->help = true;
			continue;
		}
		if (strncmp(arg, "--", 2) != 0)
			return fail(err, errsize, "unexpected argument '%.64s' (see --help)", arg);
		const char *name = arg + 2;
		const char *eq = strchr(name, '=');
		size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
		const opt *o = find_flag(name, nlen);
		if (o == NULL && eq == NULL && nlen > 3 && strncmp(name, "no-", 3) == 0) {
			o = find_flag(name + 3, nlen - 3);
			if (o != NULL && o->type == T_BOOL) {
				bool off = false;
				memcpy((char *)c + o->offset, &off, sizeof(off));
				continue;
			}
			o = NULL;
		}
		if (o == NULL)
			return fail(err, errsize, "unknown option '--%.*s' (see --help)",
			            (int)(nlen > 64 ? 64 : nlen), name);
		const char *value = eq ? eq + 1 : NULL;
		if (value == NULL && o->type == T_BOOL)
			value = "on";
		if (value == NULL) {
			if (a + 1 >= argc)
				return fail(err, errsize, "--%s needs a value", o->flag);
			value = argv[++a];
		}
		char from[64];
		snprintf(from, sizeof(from), "--%s", o->flag);
		if (set_opt(c, o, value, from, err, errsize) != 0)
			return -1;
	}
	if (c->store[0] == '\0')
		return fail(err, errsize, "--store: an empty path");
	if (c->s3_part_size < ((uint64_t)5 << 20) || c->s3_part_size > ((uint64_t)5 << 30))
		return fail(err, errsize, "--s3-part-size: must be within 5M..5G (S3's part limits)");
	if (c->upload_part_size < ((uint64_t)64 << 10) || c->upload_part_size > ((uint64_t)1 << 30))
		return fail(err, errsize, "--upload-part-size: must be within 64K..1G");
	if (c->upload_part_size % 64 != 0)
		return fail(err, errsize, "--upload-part-size: must be a multiple of 64 bytes (the "
		            "running hash stops at its blocks between parts)");
	if (strncmp(c->store, "s3://", 5) == 0 && c->cache_dir[0] == '\0')
		return fail(err, errsize, "--cache-dir: an empty path");
	if (c->max_upload == 0)
		return fail(err, errsize, "--max-upload: must be above 0");
	if (c->conn_memory < 16384 || c->conn_memory > ((uint64_t)64 << 20))
		return fail(err, errsize, "--conn-memory: must be within 16K..64M");
	if (read_token_files(c, err, errsize) != 0)
		return -1;
	if (c->read_token[0] != '\0' && c->token[0] == '\0')
		return fail(err, errsize, "--read-token needs --token as well");
	if (c->auth_reads && c->token[0] == '\0' && c->read_token[0] == '\0')
		return fail(err, errsize, "--auth-reads needs --token or --read-token");
	size_t bl = strlen(c->base_url);
	while (bl > 0 && c->base_url[bl - 1] == '/')
		c->base_url[--bl] = '\0';
	if (c->base_url[0] != '\0' && !oxs_md_base_url_valid(c->base_url))
		return fail(err, errsize, "--base-url: http:// or https://, then only "
		                          "[A-Za-z0-9._~:/%%-] (no query), at most 200 bytes");
	if (!oxs_frame_ancestors_parse(c->frame_ancestors, sizeof(c->frame_ancestors), err,
	                               errsize))
		return -1;
	return 0;
}

void oxs_config_usage(FILE *f)
{
	fprintf(f, "usage: onnxviz serve [--OPTION VALUE | --OPTION=VALUE ...]\n"
	           "\n"
	           "Serves the model store over HTTP (API reference: GET /openapi.json).\n"
	           "Every option may also be set by its environment variable; flags win.\n"
	           "Sizes take K, M, G suffixes (powers of 1024). Switches accept --no-NAME.\n"
	           "\n");
	for (size_t i = 0; i < NOPTS; i++) {
		char left[64];
		snprintf(left, sizeof(left), "--%s%s%s", opts[i].flag, opts[i].arg ? " " : "",
		         opts[i].arg ? opts[i].arg : "");
		fprintf(f, "  %-26s %-26s %s\n", left, opts[i].env, opts[i].help);
	}
	fprintf(f, "  %-26s %-26s %s\n", "--help", "", "this text");
}

void oxs_config_store(const oxs_config *c, char *const *envp, oxst_options *o)
{
	bool s3 = oxst_location_is_s3(c->store);
	*o = (oxst_options){
	    .location = c->store,
	    /* an S3 replica's cache: the budget bounds it (4 GiB unless given) */
	    .budget = s3 && c->store_budget == 0 ? (uint64_t)4 << 30 : c->store_budget,
	    .evict_models = c->evict_models,
	    /* models are verified after start (in the background, and before a model is
	     * first read): start-up does not grow with the bytes stored */
	    .verify_background = c->verify_store,
	    .cache_dir = c->cache_dir,
	    .timeout = c->s3_timeout,
	    .part_size = c->s3_part_size,
	    .envp = envp};
}
