/*
 * s3client.c — a small S3 client on libcurl: configuration from the environment, signed
 * requests with retries and timeouts, and the few pieces of XML the store reads
 * (listings, multipart upload ids, error codes).
 *
 * Signing is ours (oxst_s3_sign, Signature Version 4 over OpenSSL's SHA-256), not
 * libcurl's CURLOPT_AWS_SIGV4: libcurl 7.88 sorts the signed headers as "name:value"
 * lines, so x-amz-copy-source-range came before x-amz-copy-source and every UploadPartCopy
 * (the copy of a data file above 5 GiB into a bundle) was refused as SignatureDoesNotMatch.
 * Paths are percent-encoded here and sent as they are (CURLOPT_PATH_AS_IS), query strings
 * are built canonical (sorted, encoded; oxst_s3_query), and every request carries the
 * SHA-256 of its body, which the object store checks.
 *
 * Easy handles are pooled so that connections are reused (curl_easy_reset keeps them).
 * When a request finally failed (the store is down or hangs), requests in the next
 * DOWN_MS fail at once instead of each waiting out its own timeouts and retries: one
 * request then probes again.  A hung store thus holds one work thread, not all of them.
 * Nothing here logs the credentials or a signature: no CURLOPT_VERBOSE, and failures are
 * logged with the operation, the key, the status and libcurl's error text only.
 */
#include "store/internal.h"

#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define POOL_MAX 32
#define ATTEMPTS 4
#define ERRBODY_MAX 4096
#define DOWN_MS 1000
#define EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

struct oxst_s3 {
	oxst_s3_config cfg;
	pthread_mutex_t mu;
	CURL *pool[POOL_MAX];
	size_t npool;
	int64_t down_until_ms; /* under mu: fail at once until then */
	int64_t up_at_ms;      /* under mu: when a request last succeeded */
	atomic_bool cancelled; /* oxst_s3_cancel: requests end now, without retries */
};

/* ---------------------------------------------------------------------------------------
 * Configuration
 */
const char *oxst_env_get(char *const *envp, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; envp != NULL && envp[i] != NULL; i++)
		if (strncmp(envp[i], name, n) == 0 && envp[i][n] == '=')
			return envp[i] + n + 1;
	return NULL;
}

static bool copy_value(char *out, size_t size, const char *v)
{
	size_t n = strlen(v);
	if (n >= size)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f)
			return false; /* no control characters in headers or URLs */
	memcpy(out, v, n + 1);
	return true;
}

bool oxst_s3_config_env(oxst_s3_config *c, char *const *envp, unsigned timeout, char *err,
                        size_t errsize)
{
	memset(c, 0, sizeof(*c));
	c->timeout = timeout ? timeout : 10;
	const char *ak = oxst_env_get(envp, "AWS_ACCESS_KEY_ID");
	const char *sk = oxst_env_get(envp, "AWS_SECRET_ACCESS_KEY");
	const char *tok = oxst_env_get(envp, "AWS_SESSION_TOKEN");
	const char *region = oxst_env_get(envp, "AWS_REGION");
	if (region == NULL || region[0] == '\0')
		region = oxst_env_get(envp, "AWS_DEFAULT_REGION");
	if (region == NULL || region[0] == '\0')
		region = "us-east-1";
	const char *ep = oxst_env_get(envp, "AWS_ENDPOINT_URL_S3");
	if (ep == NULL || ep[0] == '\0')
		ep = oxst_env_get(envp, "AWS_ENDPOINT_URL");
	if (ak == NULL || ak[0] == '\0' || sk == NULL || sk[0] == '\0') {
		snprintf(err, errsize, "an S3 store needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY");
		return false;
	}
	/* the values themselves are never repeated in messages */
	if (!copy_value(c->access, sizeof(c->access), ak) || strchr(ak, ':') != NULL ||
	    !copy_value(c->secret, sizeof(c->secret), sk) ||
	    (tok != NULL && !copy_value(c->token, sizeof(c->token), tok))) {
		snprintf(err, errsize, "AWS credentials too long or holding control characters");
		return false;
	}
	for (const char *p = region; *p; p++) {
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '_')) {
			snprintf(err, errsize, "AWS_REGION: letters, digits and '-' only");
			return false;
		}
	}
	if (!copy_value(c->region, sizeof(c->region), region)) {
		snprintf(err, errsize, "AWS_REGION too long");
		return false;
	}
	if (ep != NULL && ep[0] != '\0') {
		size_t n = strlen(ep);
		while (n > 0 && ep[n - 1] == '/')
			n--;
		if ((strncmp(ep, "http://", 7) != 0 && strncmp(ep, "https://", 8) != 0) ||
		    n >= sizeof(c->endpoint) || n <= 8 || memchr(ep, '?', n) != NULL) {
			snprintf(err, errsize, "AWS_ENDPOINT_URL: expected http(s)://host[:port]");
			return false;
		}
		memcpy(c->endpoint, ep, n);
		c->endpoint[n] = '\0';
		if (!copy_value(c->endpoint, sizeof(c->endpoint), c->endpoint)) {
			snprintf(err, errsize, "AWS_ENDPOINT_URL: control characters");
			return false;
		}
		c->path_style = true;
	}
	return true;
}

bool oxst_s3_url_parse(const char *url, char *bucket, size_t bsize, char *prefix, size_t psize)
{
	if (url == NULL || strncmp(url, "s3://", 5) != 0)
		return false;
	const char *b = url + 5;
	const char *slash = strchr(b, '/');
	size_t bn = slash ? (size_t)(slash - b) : strlen(b);
	if (bn < 3 || bn > 63 || bn >= bsize)
		return false;
	for (size_t i = 0; i < bn; i++) {
		char ch = b[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '.' || ch == '-'))
			return false;
	}
	memcpy(bucket, b, bn);
	bucket[bn] = '\0';
	const char *p = slash ? slash + 1 : "";
	size_t pn = strlen(p);
	while (pn > 0 && p[pn - 1] == '/')
		pn--;
	if (pn >= psize || pn > 512)
		return false;
	for (size_t i = 0; i < pn; i++) {
		unsigned char ch = (unsigned char)p[i];
		if (ch < 0x20 || ch == 0x7f || (ch == '/' && (i == 0 || p[i - 1] == '/')))
			return false; /* no empty segment, no control byte */
	}
	memcpy(prefix, p, pn);
	prefix[pn] = '\0';
	return true;
}

/* ---------------------------------------------------------------------------------------
 * URLs, query strings, XML
 */
bool oxst_s3_encode(oxr_buf *b, const char *s, bool keep_slash)
{
	static const char hex[] = "0123456789ABCDEF";
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		unsigned char c = *p;
		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '.' || c == '_' || c == '~' || (keep_slash && c == '/')) {
			oxr_buf_append(b, p, 1);
		} else {
			char e[3] = {'%', hex[c >> 4], hex[c & 15]};
			oxr_buf_append(b, e, 3);
		}
	}
	return !b->failed;
}

typedef struct kv_pair {
	const char *k, *v;
} kv_pair;

static int cmp_kv(const void *a, const void *b)
{
	return strcmp(((const kv_pair *)a)->k, ((const kv_pair *)b)->k);
}

uint64_t oxst_s3_part_for(uint64_t size, uint64_t part_size)
{
	const uint64_t mib = (uint64_t)1 << 20;
	uint64_t least = size / OXST_S3_MAX_PARTS + (size % OXST_S3_MAX_PARTS != 0);
	if (part_size >= least)
		return part_size;
	return (least + mib - 1) / mib * mib;
}

bool oxst_s3_query(char *out, size_t size, const char *const *kv, size_t n)
{
	kv_pair pairs[16];
	if (n > 16 || size == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		pairs[i].k = kv[2 * i];
		pairs[i].v = kv[2 * i + 1] ? kv[2 * i + 1] : "";
	}
	qsort(pairs, n, sizeof(pairs[0]), cmp_kv);
	oxr_buf b;
	oxr_buf_init(&b, size - 1);
	for (size_t i = 0; i < n; i++) {
		if (i > 0)
			oxr_buf_append(&b, "&", 1);
		oxst_s3_encode(&b, pairs[i].k, false);
		oxr_buf_append(&b, "=", 1);
		oxst_s3_encode(&b, pairs[i].v, false);
	}
	bool ok = !b.failed;
	if (ok) {
		memcpy(out, b.len ? b.data : "", b.len);
		out[b.len] = '\0';
	}
	oxr_buf_free(&b);
	return ok;
}

/* ---------------------------------------------------------------------------------------
 * Signature Version 4 (docs.aws.amazon.com, "Authenticating requests: header-based"):
 * the canonical request (method, path, query, the signed headers sorted by name, their
 * names, the payload's hash) is hashed into the string to sign, which the key derived from
 * the secret, the day, the region and the service signs.
 */
static int cmp_header(const void *a, const void *b)
{
	return strcmp(((const oxst_s3_header *)a)->name, ((const oxst_s3_header *)b)->name);
}

bool oxst_s3_sign(const oxst_s3_config *cfg, const char *method, const char *path,
                  const char *query, const oxst_s3_header *h, size_t n,
                  const char *payload_sha, const char *amz_date, char *out, size_t size)
{
	oxst_s3_header sorted[16];
	if (n > 16 || strlen(amz_date) != 16)
		return false;
	memcpy(sorted, h, n * sizeof(*h));
	qsort(sorted, n, sizeof(sorted[0]), cmp_header);
	oxr_buf canon, names;
	oxr_buf_init(&canon, 64 << 10);
	oxr_buf_init(&names, 4096);
	oxr_buf_printf(&canon, "%s\n%s\n%s\n", method, path, query);
	for (size_t i = 0; i < n; i++) {
		oxr_buf_printf(&canon, "%s:%s\n", sorted[i].name, sorted[i].value);
		oxr_buf_printf(&names, "%s%s", i > 0 ? ";" : "", sorted[i].name);
	}
	oxr_buf_printf(&canon, "\n%s\n%s", names.len > 0 ? names.data : "", payload_sha);
	bool ok = !canon.failed && !names.failed;
	if (ok) {
		unsigned char md[32], k[32], sig[32];
		unsigned int mn = 0;
		char hex[65], scope[160], to_sign[300], secret[270];
		(void)EVP_Digest(canon.data, canon.len, md, &mn, EVP_sha256(), NULL);
		oxst_hex(hex, md, sizeof(md));
		int sn = snprintf(scope, sizeof(scope), "%.8s/%s/s3/aws4_request", amz_date,
		                  cfg->region);
		int tn = snprintf(to_sign, sizeof(to_sign), "AWS4-HMAC-SHA256\n%s\n%s\n%s", amz_date,
		                  scope, hex);
		int kn = snprintf(secret, sizeof(secret), "AWS4%s", cfg->secret);
		ok = sn > 0 && (size_t)sn < sizeof(scope) && tn > 0 && (size_t)tn < sizeof(to_sign) &&
		     kn > 0 && (size_t)kn < sizeof(secret);
		if (ok) {
			oxst_hmac_sha256(secret, (size_t)kn, amz_date, 8, k);
			oxst_hmac_sha256(k, sizeof(k), cfg->region, strlen(cfg->region), k);
			oxst_hmac_sha256(k, sizeof(k), "s3", 2, k);
			oxst_hmac_sha256(k, sizeof(k), "aws4_request", 12, k);
			oxst_hmac_sha256(k, sizeof(k), to_sign, (size_t)tn, sig);
			oxst_hex(hex, sig, sizeof(sig));
			int on = snprintf(out, size,
			                  "AWS4-HMAC-SHA256 Credential=%s/%s,SignedHeaders=%s,Signature=%s",
			                  cfg->access, scope, names.data, hex);
			ok = on > 0 && (size_t)on < size;
		}
		OPENSSL_cleanse(secret, sizeof(secret));
		OPENSSL_cleanse(k, sizeof(k));
	}
	oxr_buf_free(&canon);
	oxr_buf_free(&names);
	return ok;
}

bool oxst_xml_element(const char **p, const char *end, const char *tag, const char **begin,
                      const char **stop)
{
	char open[80], close[80];
	int on = snprintf(open, sizeof(open), "<%s>", tag);
	int cn = snprintf(close, sizeof(close), "</%s>", tag);
	if (on <= 0 || (size_t)on >= sizeof(open) || cn <= 0 || (size_t)cn >= sizeof(close))
		return false;
	const char *a = memmem(*p, (size_t)(end - *p), open, (size_t)on);
	if (a == NULL)
		return false;
	a += on;
	const char *z = memmem(a, (size_t)(end - a), close, (size_t)cn);
	if (z == NULL)
		return false;
	*begin = a;
	*stop = z;
	*p = z + cn;
	return true;
}

bool oxst_xml_next(const char **p, const char *end, const char *tag, char *out, size_t size)
{
	const char *a, *z;
	if (size == 0 || !oxst_xml_element(p, end, tag, &a, &z))
		return false;
	static const struct {
		const char *ent;
		char c;
	} ents[] = {{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
	size_t o = 0;
	while (a < z) {
		char c = *a;
		size_t step = 1;
		if (c == '&') {
			size_t i = 0;
			for (; i < sizeof(ents) / sizeof(ents[0]); i++) {
				size_t n = strlen(ents[i].ent);
				if ((size_t)(z - a) >= n && memcmp(a, ents[i].ent, n) == 0) {
					c = ents[i].c;
					step = n;
					break;
				}
			}
			if (i == sizeof(ents) / sizeof(ents[0]))
				return false; /* numeric references are not needed here */
		}
		if (c == '\0' || o + 1 >= size)
			return false;
		out[o++] = c;
		a += step;
	}
	out[o] = '\0';
	return true;
}

int64_t oxst_iso8601(const char *s)
{
	int y, mo, d, h, mi, sec;
	char t = 0;
	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%c", &y, &mo, &d, &h, &mi, &sec, &t) < 6 ||
	    y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
		return -1;
	struct tm tm;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	return (int64_t)timegm(&tm);
}

/* ---------------------------------------------------------------------------------------
 * The client
 */
/* libcurl is loaded (dlopen) when the first client is made, not linked: only an S3 store
 * or models registered by reference use it, and its ~30 libraries (TLS, Kerberos, LDAP,
 * SSH, ...) would otherwise be mapped and relocated by every run of the program
 * (docs/decisions.md).  The binary names it in its .note.dlopen note for the image check. */
#define LIBCURL_SONAME "libcurl.so.4"
#define LIBCURL_FNS(X)                                                                   \
	X(global_init) X(easy_init) X(easy_cleanup) X(easy_reset) X(easy_setopt)         \
	X(easy_getinfo) X(easy_perform) X(easy_strerror) X(slist_append) X(slist_free_all)
static union {
	struct {
#define X(name) __typeof__(curl_##name) *name;
		LIBCURL_FNS(X)
#undef X
	};
	void *slot[0 LIBCURL_FNS(OXR_DLOPEN_SLOT)];
} libcurl;

OXR_DLOPEN_NOTE(libcurl, "s3", "the S3 store and models registered by reference",
                 LIBCURL_SONAME);

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static bool global_ok;
static char global_err[256];

static void global_init(void)
{
	static const char *const names[] = {LIBCURL_FNS(OXR_DLOPEN_NAME)};
	bool ok = oxr_dlopen(LIBCURL_SONAME, "curl_", names, libcurl.slot,
	                      sizeof(names) / sizeof(names[0]), global_err, sizeof(global_err));
	if (ok && libcurl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(global_err, sizeof(global_err), "curl_global_init failed");
		ok = false;
	}
	global_ok = ok;
}

bool oxst_s3_load(char *err, size_t errsize)
{
	pthread_once(&global_once, global_init);
	if (!global_ok && err != NULL)
		snprintf(err, errsize, "%s", global_err);
	return global_ok;
}

oxst_s3 *oxst_s3_new(const oxst_s3_config *cfg)
{
	if (!oxst_s3_load(NULL, 0))
		return NULL;
	oxst_s3 *c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->cfg = *cfg;
	pthread_mutex_init(&c->mu, NULL);
	return c;
}

void oxst_s3_free(oxst_s3 *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->npool; i++)
		libcurl.easy_cleanup(c->pool[i]);
	/* the secrets do not outlive the client in this process's memory */
	OPENSSL_cleanse(&c->cfg, sizeof(c->cfg));
	pthread_mutex_destroy(&c->mu);
	free(c);
}

static CURL *handle_get(oxst_s3 *c)
{
	CURL *h = NULL;
	pthread_mutex_lock(&c->mu);
	if (c->npool > 0)
		h = c->pool[--c->npool];
	pthread_mutex_unlock(&c->mu);
	return h != NULL ? h : libcurl.easy_init();
}

static void handle_put(oxst_s3 *c, CURL *h)
{
	pthread_mutex_lock(&c->mu);
	if (c->npool < POOL_MAX) {
		c->pool[c->npool++] = h;
		h = NULL;
	}
	pthread_mutex_unlock(&c->mu);
	if (h != NULL)
		libcurl.easy_cleanup(h);
}

void oxst_s3_req_init(oxst_s3_req *r, int op, const char *method, const char *bucket,
                      const char *key)
{
	memset(r, 0, sizeof(*r));
	r->op = op;
	r->method = method;
	r->bucket = bucket;
	r->key = key;
	r->body_fd = -1;
	r->out_fd = -1;
}

/* One attempt's state, seen by the callbacks. */
typedef struct xfer {
	oxst_s3_req *r;
	CURL *h;
	uint64_t sent;          /* request body bytes handed to libcurl */
	EVP_MD_CTX *md;         /* out_sha */
	char errbody[ERRBODY_MAX];
	size_t errlen;
	bool too_big;
	int write_errno;
} xfer;

static size_t on_read(char *buf, size_t size, size_t nmemb, void *ud)
{
	xfer *x = ud;
	oxst_s3_req *r = x->r;
	size_t want = size * nmemb;
	uint64_t total = r->body_fd >= 0 ? r->body_size : r->body_len;
	if (x->sent >= total)
		return 0;
	if (want > total - x->sent)
		want = (size_t)(total - x->sent);
	if (r->body_fd < 0) {
		memcpy(buf, (const char *)r->body + x->sent, want);
		x->sent += want;
		return want;
	}
	for (;;) {
		ssize_t n = pread(r->body_fd, buf, want, (off_t)(r->body_off + x->sent));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return CURL_READFUNC_ABORT; /* the spool file shrank or failed */
		x->sent += (uint64_t)n;
		return (size_t)n;
	}
}

/* Progress: ends the transfer once the client is cancelled (shutdown). */
static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
	(void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	oxst_s3 *c = ud;
	return atomic_load(&c->cancelled) ? 1 : 0;
}

void oxst_s3_cancel(oxst_s3 *c)
{
	if (c != NULL)
		atomic_store(&c->cancelled, true);
}

static int on_seek(void *ud, curl_off_t offset, int origin)
{
	xfer *x = ud;
	if (origin != SEEK_SET || offset < 0)
		return CURL_SEEKFUNC_CANTSEEK;
	x->sent = (uint64_t)offset;
	return CURL_SEEKFUNC_OK;
}

static size_t on_write(char *data, size_t size, size_t nmemb, void *ud)
{
	xfer *x = ud;
	oxst_s3_req *r = x->r;
	size_t n = size * nmemb;
	long code = 0;
	libcurl.easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &code);
	if (code < 200 || code > 299) {
		/* an error's body: kept (bounded) for its <Code> */
		size_t k = n < sizeof(x->errbody) - 1 - x->errlen ? n : sizeof(x->errbody) - 1 - x->errlen;
		memcpy(x->errbody + x->errlen, data, k);
		x->errlen += k;
		x->errbody[x->errlen] = '\0';
		return n;
	}
	if (r->out_max != 0 && (n > r->out_max || r->received > r->out_max - n)) {
		x->too_big = true;
		return 0;
	}
	if (r->out_fd >= 0) {
		size_t done = 0;
		while (done < n) {
			ssize_t w = pwrite(r->out_fd, data + done, n - done, (off_t)(r->received + done));
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				x->write_errno = w < 0 ? errno : EIO;
				return 0;
			}
			done += (size_t)w;
		}
	} else if (r->out != NULL && !oxr_buf_append(r->out, data, n)) {
		x->too_big = true;
		return 0;
	}
	if (x->md != NULL && EVP_DigestUpdate(x->md, data, n) != 1) {
		x->write_errno = ENOMEM;
		return 0;
	}
	r->received += n;
	return n;
}

static bool header_is(const char *line, size_t n, const char *name, const char **value)
{
	size_t k = strlen(name);
	if (n <= k || strncasecmp(line, name, k) != 0 || line[k] != ':')
		return false;
	const char *v = line + k + 1;
	while (*v == ' ' || *v == '\t')
		v++;
	*value = v;
	return true;
}

static size_t on_header(char *line, size_t size, size_t nmemb, void *ud)
{
	xfer *x = ud;
	oxst_s3_req *r = x->r;
	size_t n = size * nmemb;
	char buf[512];
	size_t k = n < sizeof(buf) - 1 ? n : sizeof(buf) - 1;
	memcpy(buf, line, k);
	while (k > 0 && (buf[k - 1] == '\r' || buf[k - 1] == '\n'))
		k--;
	buf[k] = '\0';
	const char *v;
	if (strncmp(buf, "HTTP/", 5) == 0) {
		/* a new header block (after "100 Continue"): forget the previous one */
		r->etag[0] = '\0';
		r->length = 0;
		r->last_modified = 0;
	} else if (header_is(buf, k, "ETag", &v)) {
		snprintf(r->etag, sizeof(r->etag), "%s", v);
	} else if (header_is(buf, k, "Content-Length", &v)) {
		r->length = strtoull(v, NULL, 10);
	} else if (header_is(buf, k, "Last-Modified", &v)) {
		struct tm tm;
		memset(&tm, 0, sizeof(tm));
		const char *end = strptime(v, "%a, %d %b %Y %H:%M:%S", &tm);
		r->last_modified = end != NULL ? (int64_t)timegm(&tm) : 0;
	}
	return n;
}

/* SHA-256 of the request body (hex). */
static bool body_sha256(const oxst_s3_req *r, char out[65])
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	bool ok = md != NULL && EVP_DigestInit_ex(md, EVP_sha256(), NULL) == 1;
	if (r->body_fd < 0) {
		ok = ok && EVP_DigestUpdate(md, r->body ? r->body : "", r->body_len) == 1;
	} else {
		enum { CHUNK = 1 << 20 };
		char *buf = ok ? malloc(CHUNK) : NULL;
		ok = buf != NULL;
		uint64_t done = 0;
		while (ok && done < r->body_size) {
			size_t want = r->body_size - done < CHUNK ? (size_t)(r->body_size - done) : CHUNK;
			ssize_t n = pread(r->body_fd, buf, want, (off_t)(r->body_off + done));
			if (n < 0 && errno == EINTR)
				continue;
			ok = n > 0 && EVP_DigestUpdate(md, buf, (size_t)n) == 1;
			done += n > 0 ? (uint64_t)n : 0;
		}
		free(buf);
	}
	unsigned char h[32];
	unsigned int hn = 0;
	ok = ok && EVP_DigestFinal_ex(md, h, &hn) == 1 && hn == 32;
	if (ok)
		oxst_hex(out, h, 32);
	EVP_MD_CTX_free(md);
	return ok;
}

/* The request's URL into b. */
static bool build_url(const oxst_s3 *c, const oxst_s3_req *r, oxr_buf *b)
{
	const oxst_s3_config *cfg = &c->cfg;
	bool path_style = cfg->path_style || strchr(r->bucket, '.') != NULL;
	if (cfg->endpoint[0] != '\0')
		oxr_buf_printf(b, "%s/", cfg->endpoint);
	else if (path_style)
		oxr_buf_printf(b, "https://s3.%s.amazonaws.com/", cfg->region);
	else
		oxr_buf_printf(b, "https://%s.s3.%s.amazonaws.com/", r->bucket, cfg->region);
	if (path_style) {
		oxst_s3_encode(b, r->bucket, false);
		if (r->key[0] != '\0')
			oxr_buf_append(b, "/", 1);
	}
	oxst_s3_encode(b, r->key, true);
	if (r->query != NULL && r->query[0] != '\0')
		oxr_buf_printf(b, "?%s", r->query);
	return !b->failed;
}

static bool retryable_curl(CURLcode rc)
{
	switch (rc) {
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		return true;
	default:
		return false;
	}
}

/* Exponential backoff with jitter: about 100 ms, 300 ms, 900 ms. */
static void backoff(int attempt)
{
	uint32_t rnd = 0;
	if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd))
		rnd = (uint32_t)oxst_now_ns();
	uint64_t ms = 100;
	for (int i = 1; i < attempt; i++)
		ms *= 3;
	ms = ms / 2 + rnd % (ms + 1); /* 50%..150% */
	struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static void log_failure(const oxst_s3_req *r, const char *what, int attempt, bool last)
{
	char key[300];
	snprintf(key, sizeof(key), "%.280s", r->key);
	char extra[900];
	oxr_buf b;
	oxr_buf_init(&b, sizeof(extra) - 1);
	oxr_buf_printf(&b, ",\"op\":\"%s\",\"key\":", r->method);
	oxr_json_string(&b, key, strlen(key));
	oxr_buf_printf(&b, ",\"status\":%ld,\"attempt\":%d,\"error\":", r->status, attempt);
	oxr_json_string(&b, what, strlen(what));
	snprintf(extra, sizeof(extra), "%s", b.failed ? "" : b.data);
	oxr_buf_free(&b);
	oxst_log("warn", last ? "object store request failed" : "object store request retried",
	         extra);
}

/* True while the store is known to be down (and this request is not the probe). */
static bool known_down(oxst_s3 *c)
{
	pthread_mutex_lock(&c->mu);
	int64_t now = oxst_now_ms();
	bool down = now < c->down_until_ms;
	if (!down && c->down_until_ms != 0)
		c->down_until_ms = now + DOWN_MS; /* this one probes; the others wait for it */
	pthread_mutex_unlock(&c->mu);
	return down;
}

/* The outcome of a request begun at started_ms: a failure marks the store down unless a
 * request succeeded since it began (a late timeout after the store came back). */
static void mark(oxst_s3 *c, bool up, int64_t started_ms)
{
	pthread_mutex_lock(&c->mu);
	int64_t now = oxst_now_ms();
	if (up) {
		c->down_until_ms = 0;
		c->up_at_ms = now;
	} else if (started_ms >= c->up_at_ms) {
		c->down_until_ms = now + DOWN_MS;
	}
	pthread_mutex_unlock(&c->mu);
}

typedef struct headers {
	oxst_s3_header h[8];
	size_t n;
} headers;

static void hdr_add(headers *hs, const char *name, const char *value)
{
	if (hs->n < sizeof(hs->h) / sizeof(hs->h[0]))
		hs->h[hs->n++] = (oxst_s3_header){name, value};
}

/* The request's headers with x-amz-date (now) and the signature, as libcurl's list; NULL
 * when out of memory.  Each attempt signs anew: a retry may come minutes later. */
static struct curl_slist *signed_headers(const oxst_s3 *c, const oxst_s3_req *r, headers hs,
                                         const char *path, const char *query,
                                         const char *payload_sha)
{
	char date[20], auth[1024], line[4400];
	time_t now = time(NULL);
	struct tm tm;
	if (gmtime_r(&now, &tm) == NULL || strftime(date, sizeof(date), "%Y%m%dT%H%M%SZ", &tm) != 16)
		return NULL;
	hdr_add(&hs, "x-amz-date", date);
	if (!oxst_s3_sign(&c->cfg, r->method, path, query, hs.h, hs.n, payload_sha, date, auth,
	                  sizeof(auth)))
		return NULL;
	struct curl_slist *l = NULL;
	bool ok = true;
	for (size_t i = 0; ok && i <= hs.n; i++) {
		if (i < hs.n)
			snprintf(line, sizeof(line), "%s: %s", hs.h[i].name, hs.h[i].value);
		else
			snprintf(line, sizeof(line), "authorization: %s", auth);
		struct curl_slist *t = libcurl.slist_append(l, line);
		ok = t != NULL;
		l = ok ? t : l;
	}
	OPENSSL_cleanse(line, sizeof(line)); /* the session token */
	if (!ok) {
		libcurl.slist_free_all(l);
		return NULL;
	}
	return l;
}

oxst_status oxst_s3_do(oxst_s3 *c, oxst_s3_req *r)
{
	char sha[65];
	const char *body_sha = r->body_sha256; /* r keeps no pointer into this frame */
	r->status = 0;
	r->code[0] = '\0';
	if (atomic_load(&c->cancelled) || known_down(c)) {
		oxst_count_request(r->op, 0, OXST_REQ_SHED);
		return OXST_E_UNAVAILABLE;
	}
	if (body_sha == NULL && (r->body_fd >= 0 || r->body_len > 0)) {
		if (!body_sha256(r, sha))
			return OXST_E_IO;
		body_sha = sha;
	}
	oxr_buf url;
	oxr_buf_init(&url, 16384);
	if (!build_url(c, r, &url)) {
		oxr_buf_free(&url);
		return OXST_E_INVALID;
	}
	uint64_t body = r->body_fd >= 0 ? r->body_size : r->body_len;
	bool has_body = r->body_fd >= 0 || r->body != NULL || strcmp(r->method, "POST") == 0 ||
	                strcmp(r->method, "PUT") == 0;
	/* the cap on one attempt: the stall timeout plus 1 s per MiB of body (either way) */
	uint64_t cap_ms = (uint64_t)c->cfg.timeout * 1000 + ((body + r->out_max) >> 20) * 1000;
	if (r->out_max == 0 && strcmp(r->method, "GET") == 0)
		cap_ms += (uint64_t)3600 * 1000; /* downloads of unknown size: the stall bound rules */

	/* the headers signed (x-amz-date and authorization are added by each attempt) */
	const char *host = strstr(url.data, "://") + 3;
	const char *slash = strchr(host, '/');
	const char *qmark = strchr(slash, '?');
	char host_v[520];
	snprintf(host_v, sizeof(host_v), "%.*s", (int)(slash - host), host);
	oxr_buf path, copy_src;
	oxr_buf_init(&path, 16384);
	oxr_buf_init(&copy_src, 8192);
	oxr_buf_append(&path, slash, qmark ? (size_t)(qmark - slash) : strlen(slash));
	if (r->copy_key != NULL) {
		oxr_buf_printf(&copy_src, "/");
		(void)(oxst_s3_encode(&copy_src, r->bucket, false) && oxr_buf_printf(&copy_src, "/") &&
		       oxst_s3_encode(&copy_src, r->copy_key, true));
	}
	headers hs = {.n = 0};
	hdr_add(&hs, "host", host_v);
	hdr_add(&hs, "x-amz-content-sha256", body_sha ? body_sha : EMPTY_SHA256);
	if (r->if_none_match != NULL)
		hdr_add(&hs, "if-none-match", strcmp(r->if_none_match, "*") == 0 ? "*" : "\"\"");
	if (r->if_match != NULL)
		hdr_add(&hs, "if-match", r->if_match);
	if (c->cfg.token[0] != '\0')
		hdr_add(&hs, "x-amz-security-token", c->cfg.token);
	if (r->copy_key != NULL)
		hdr_add(&hs, "x-amz-copy-source", copy_src.len > 0 ? copy_src.data : "");
	if (r->copy_range != NULL)
		hdr_add(&hs, "x-amz-copy-source-range", r->copy_range);
	bool built = strlen(host_v) == (size_t)(slash - host) && !path.failed && !copy_src.failed &&
	             path.len > 0 && (r->copy_range == NULL || strlen(r->copy_range) < 64);
	CURL *h = built ? handle_get(c) : NULL;
	xfer *x = h != NULL ? calloc(1, sizeof(*x)) : NULL;
	if (x == NULL || (r->out_sha && (x->md = EVP_MD_CTX_new()) == NULL)) {
		if (x != NULL)
			EVP_MD_CTX_free(x->md);
		free(x);
		if (h != NULL)
			handle_put(c, h);
		oxr_buf_free(&copy_src);
		oxr_buf_free(&path);
		oxr_buf_free(&url);
		return built ? OXST_E_NOMEM : OXST_E_INVALID;
	}
	x->r = r;
	x->h = h;
	struct curl_slist *hl = NULL;

	oxst_status st = OXST_E_UNAVAILABLE;
	int64_t started = oxst_now_ms();
	for (int attempt = 1;; attempt++) {
		x->sent = 0;
		x->errlen = 0;
		x->errbody[0] = '\0';
		x->too_big = false;
		x->write_errno = 0;
		r->received = 0;
		r->status = 0;
		r->code[0] = '\0';
		if (x->md != NULL)
			(void)EVP_DigestInit_ex(x->md, EVP_sha256(), NULL);
		if (r->out_fd >= 0 && ftruncate(r->out_fd, 0) != 0) {
			st = OXST_E_IO;
			break;
		}
		if (r->out != NULL)
			r->out->len = 0;
		libcurl.easy_reset(h);
		libcurl.easy_setopt(h, CURLOPT_URL, url.data);
		libcurl.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
		libcurl.easy_setopt(h, CURLOPT_PATH_AS_IS, 1L); /* the path signed is the one sent */
		libcurl.slist_free_all(hl);
		hl = signed_headers(c, r, hs, path.data, qmark != NULL ? qmark + 1 : "",
		                    body_sha ? body_sha : EMPTY_SHA256);
		if (hl == NULL) {
			st = OXST_E_NOMEM;
			break;
		}
		libcurl.easy_setopt(h, CURLOPT_HTTPHEADER, hl);
		libcurl.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)c->cfg.timeout * 1000L);
		libcurl.easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
		libcurl.easy_setopt(h, CURLOPT_LOW_SPEED_TIME, (long)c->cfg.timeout);
		libcurl.easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)cap_ms);
		libcurl.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
		libcurl.easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
		libcurl.easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
		libcurl.easy_setopt(h, CURLOPT_WRITEDATA, x);
		libcurl.easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
		libcurl.easy_setopt(h, CURLOPT_HEADERDATA, x);
		libcurl.easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
		libcurl.easy_setopt(h, CURLOPT_XFERINFODATA, c);
		libcurl.easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
		if (strcmp(r->method, "HEAD") == 0) {
			libcurl.easy_setopt(h, CURLOPT_NOBODY, 1L);
		} else if (has_body) {
			libcurl.easy_setopt(h, CURLOPT_UPLOAD, 1L);
			libcurl.easy_setopt(h, CURLOPT_INFILESIZE_LARGE, (curl_off_t)body);
			libcurl.easy_setopt(h, CURLOPT_READFUNCTION, on_read);
			libcurl.easy_setopt(h, CURLOPT_READDATA, x);
			libcurl.easy_setopt(h, CURLOPT_SEEKFUNCTION, on_seek);
			libcurl.easy_setopt(h, CURLOPT_SEEKDATA, x);
			if (strcmp(r->method, "PUT") != 0)
				libcurl.easy_setopt(h, CURLOPT_CUSTOMREQUEST, r->method);
		} else if (strcmp(r->method, "GET") != 0) {
			libcurl.easy_setopt(h, CURLOPT_CUSTOMREQUEST, r->method);
		}
		uint64_t t0 = oxst_now_ns();
		CURLcode rc = libcurl.easy_perform(h);
		uint64_t ns = oxst_now_ns() - t0;
		long code = 0;
		libcurl.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
		r->status = rc == CURLE_OK ? code : 0;
		if (x->errlen > 0) {
			const char *p = x->errbody;
			(void)oxst_xml_next(&p, x->errbody + x->errlen, "Code", r->code, sizeof(r->code));
		}
		if (rc == CURLE_WRITE_ERROR && (x->too_big || x->write_errno != 0)) {
			oxst_count_request(r->op, ns, OXST_REQ_ERROR);
			int e = x->write_errno;
			st = x->too_big || e == ENOSPC || e == EFBIG || e == EDQUOT ? OXST_E_NOSPACE
			     : e == ENOMEM                                         ? OXST_E_NOMEM
			                                                           : OXST_E_IO;
			break;
		}
		bool retry = rc != CURLE_OK ? retryable_curl(rc) : code >= 500 && code <= 599;
		if (rc != CURLE_OK && !retry) {
			/* a local failure (the spool file could not be read, a bad URL) */
			oxst_count_request(r->op, ns, OXST_REQ_ERROR);
			log_failure(r, libcurl.easy_strerror(rc), attempt, true);
			st = rc == CURLE_READ_ERROR ||
			             (rc == CURLE_ABORTED_BY_CALLBACK && !atomic_load(&c->cancelled))
			         ? OXST_E_IO
			         : OXST_E_UNAVAILABLE;
			break;
		}
		if (!retry) {
			bool expected = (code >= 200 && code <= 299) || code == 304 || code == 404 ||
			                code == 412;
			oxst_count_request(r->op, ns, expected ? OXST_REQ_OK : OXST_REQ_ERROR);
			if (!expected) {
				char what[128];
				snprintf(what, sizeof(what), "%s", r->code[0] ? r->code : "unexpected status");
				log_failure(r, what, attempt, true);
			}
			st = OXST_OK;
			break;
		}
		/* retry within the attempts and a bound on the whole operation */
		bool last = attempt >= ATTEMPTS || atomic_load(&c->cancelled) ||
		            oxst_now_ms() - started > (int64_t)(cap_ms + (uint64_t)c->cfg.timeout * 1000);
		oxst_count_request(r->op, ns, last ? OXST_REQ_FAILED : OXST_REQ_RETRIED);
		char what[200];
		if (rc != CURLE_OK)
			snprintf(what, sizeof(what), "%s", libcurl.easy_strerror(rc));
		else
			snprintf(what, sizeof(what), "%s", r->code[0] ? r->code : "server error");
		log_failure(r, what, attempt, last);
		if (last) {
			st = OXST_E_UNAVAILABLE;
			break;
		}
		backoff(attempt);
	}
	mark(c, st != OXST_E_UNAVAILABLE, started);
	if (st == OXST_OK && x->md != NULL) {
		unsigned char md[32];
		unsigned int mn = 0;
		if (EVP_DigestFinal_ex(x->md, md, &mn) == 1 && mn == 32)
			oxst_hex(r->sha256, md, 32);
		else
			st = OXST_E_NOMEM;
	}
	EVP_MD_CTX_free(x->md);
	free(x);
	handle_put(c, h);
	libcurl.slist_free_all(hl);
	oxr_buf_free(&copy_src);
	oxr_buf_free(&path);
	oxr_buf_free(&url);
	return st;
}
