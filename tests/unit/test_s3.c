/*
 * test_s3.c — the S3 client's pure parts: store URLs, the configuration from the
 * environment, percent-encoding and canonical query strings (as SigV4 signs them), the
 * XML the store reads, ISO 8601 times, and model meta's JSON.  Against a fake object store
 * (a thread answering HTTP on 127.0.0.1): the client leaves the caller's request as it
 * was, multipart uploads name their upload in every query, and a download of a model's
 * data stops at the cache's budget.  The requests themselves are tested against a real
 * object store by the s3 suite (tests/s3).
 */
#include "store/internal.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cmocka.h>

static void test_url_parse(void **state)
{
	(void)state;
	char b[64], p[600];
	assert_true(oxst_s3_url_parse("s3://models/team/prod", b, sizeof(b), p, sizeof(p)));
	assert_string_equal(b, "models");
	assert_string_equal(p, "team/prod");
	assert_true(oxst_s3_url_parse("s3://my.bucket-1", b, sizeof(b), p, sizeof(p)));
	assert_string_equal(b, "my.bucket-1");
	assert_string_equal(p, "");
	assert_true(oxst_s3_url_parse("s3://abc/x/", b, sizeof(b), p, sizeof(p)));
	assert_string_equal(p, "x"); /* trailing slashes go */
	static const char *const bad[] = {
	    "models",              /* no scheme */
	    "http://b/x",          /* another scheme */
	    "s3://",               /* no bucket */
	    "s3://ab",             /* too short */
	    "s3://Upper/x",        /* upper case */
	    "s3://b_u/x",          /* underscore */
	    "s3://abc//x",         /* an empty segment */
	    "s3://abc/a//b",       /* ... inside */
	    "s3://abc/a\nb",       /* a control character */
	    "s3://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", /* 64 */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_false(oxst_s3_url_parse(bad[i], b, sizeof(b), p, sizeof(p)));
}

static void test_config_env(void **state)
{
	(void)state;
	oxst_s3_config c;
	char err[256];
	char *minimal[] = {"AWS_ACCESS_KEY_ID=AK", "AWS_SECRET_ACCESS_KEY=SK", NULL};
	assert_true(oxst_s3_config_env(&c, minimal, 0, err, sizeof(err)));
	assert_string_equal(c.region, "us-east-1");
	assert_string_equal(c.endpoint, "");
	assert_false(c.path_style);
	assert_int_equal(c.timeout, 10);
	char *full[] = {"AWS_ACCESS_KEY_ID=AK",
	                "AWS_SECRET_ACCESS_KEY=SK",
	                "AWS_SESSION_TOKEN=TOK",
	                "AWS_DEFAULT_REGION=eu-west-3",
	                "AWS_ENDPOINT_URL=http://other:1",
	                "AWS_ENDPOINT_URL_S3=http://127.0.0.1:9000/",
	                NULL};
	assert_true(oxst_s3_config_env(&c, full, 3, err, sizeof(err)));
	assert_string_equal(c.region, "eu-west-3");
	assert_string_equal(c.endpoint, "http://127.0.0.1:9000"); /* _S3 wins, no '/' */
	assert_true(c.path_style);
	assert_string_equal(c.token, "TOK");
	assert_int_equal(c.timeout, 3);
	char *region[] = {"AWS_ACCESS_KEY_ID=AK", "AWS_SECRET_ACCESS_KEY=SK", "AWS_REGION=default",
	                  "AWS_DEFAULT_REGION=x", NULL};
	assert_true(oxst_s3_config_env(&c, region, 0, err, sizeof(err)));
	assert_string_equal(c.region, "default");
	/* failures never repeat a secret */
	char *nokey[] = {"AWS_SECRET_ACCESS_KEY=hunter2", NULL};
	assert_false(oxst_s3_config_env(&c, nokey, 0, err, sizeof(err)));
	assert_null(strstr(err, "hunter2"));
	char *ctl[] = {"AWS_ACCESS_KEY_ID=AK", "AWS_SECRET_ACCESS_KEY=hun\rter2", NULL};
	assert_false(oxst_s3_config_env(&c, ctl, 0, err, sizeof(err)));
	assert_null(strstr(err, "hun"));
	char *colon[] = {"AWS_ACCESS_KEY_ID=A:K", "AWS_SECRET_ACCESS_KEY=S", NULL};
	assert_false(oxst_s3_config_env(&c, colon, 0, err, sizeof(err)));
	char *badep[] = {"AWS_ACCESS_KEY_ID=AK", "AWS_SECRET_ACCESS_KEY=SK",
	                 "AWS_ENDPOINT_URL=ftp://x", NULL};
	assert_false(oxst_s3_config_env(&c, badep, 0, err, sizeof(err)));
	char *badregion[] = {"AWS_ACCESS_KEY_ID=AK", "AWS_SECRET_ACCESS_KEY=SK",
	                     "AWS_REGION=us east", NULL};
	assert_false(oxst_s3_config_env(&c, badregion, 0, err, sizeof(err)));
}

static void test_encode_query(void **state)
{
	(void)state;
	oxr_buf b;
	oxr_buf_init(&b, 0);
	assert_true(oxst_s3_encode(&b, "data/a b/ü~x.bin", true));
	assert_string_equal(b.data, "data/a%20b/%C3%BC~x.bin");
	b.len = 0;
	assert_true(oxst_s3_encode(&b, "a/b+c=d&e", false));
	assert_string_equal(b.data, "a%2Fb%2Bc%3Dd%26e");
	oxr_buf_free(&b);
	/* canonical: sorted by key, keys and values encoded, "key=" for no value */
	char q[256];
	const char *kv[] = {"prefix", "p/models/", "list-type", "2", "uploads", NULL,
	                    "continuation-token", "a+b=="};
	assert_true(oxst_s3_query(q, sizeof(q), kv, 4));
	assert_string_equal(q, "continuation-token=a%2Bb%3D%3D&list-type=2&prefix=p%2Fmodels%2F&"
	                       "uploads=");
	assert_false(oxst_s3_query(q, 10, kv, 4)); /* does not fit */
	assert_true(oxst_s3_query(q, sizeof(q), kv, 0));
	assert_string_equal(q, "");
}

/* HMAC-SHA256 against RFC 4231 (test cases 2 and 6: a short key, a key longer than the
 * block), and Signature Version 4 against AWS's published example (S3 GET Object with a
 * Range header, "Authenticating requests: header-based"): the signature is the oracle's,
 * not ours.  Headers are given unsorted; a header that is another's prefix
 * (x-amz-copy-source, -range) sorts by name, not by "name:value". */
static void test_sign(void **state)
{
	(void)state;
	unsigned char md[32];
	char hex[65];
	static const char msg2[] = "what do ya want for nothing?";
	oxst_hmac_sha256("Jefe", 4, msg2, strlen(msg2), md);
	oxst_hex(hex, md, 32);
	assert_string_equal(hex, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
	unsigned char key6[131];
	memset(key6, 0xaa, sizeof(key6));
	static const char msg6[] = "Test Using Larger Than Block-Size Key - Hash Key First";
	oxst_hmac_sha256(key6, sizeof(key6), msg6, strlen(msg6), md);
	oxst_hex(hex, md, 32);
	assert_string_equal(hex, "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");

	oxst_s3_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	snprintf(cfg.access, sizeof(cfg.access), "AKIAIOSFODNN7EXAMPLE");
	snprintf(cfg.secret, sizeof(cfg.secret), "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY");
	snprintf(cfg.region, sizeof(cfg.region), "us-east-1");
	const char *empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
	const oxst_s3_header h[] = {{"x-amz-date", "20130524T000000Z"},
	                            {"range", "bytes=0-9"},
	                            {"x-amz-content-sha256", empty},
	                            {"host", "examplebucket.s3.amazonaws.com"}};
	char auth[512];
	assert_true(oxst_s3_sign(&cfg, "GET", "/test.txt", "", h, 4, empty, "20130524T000000Z",
	                         auth, sizeof(auth)));
	assert_string_equal(auth, "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/"
	                          "us-east-1/s3/aws4_request,SignedHeaders=host;range;"
	                          "x-amz-content-sha256;x-amz-date,Signature="
	                          "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
	/* the copy headers' order in SignedHeaders: by name */
	const oxst_s3_header c[] = {{"x-amz-copy-source-range", "bytes=0-9"},
	                            {"x-amz-copy-source", "/b/k"},
	                            {"host", "h"},
	                            {"x-amz-date", "20130524T000000Z"}};
	assert_true(oxst_s3_sign(&cfg, "PUT", "/b/k2", "partNumber=1&uploadId=U", c, 4, empty,
	                         "20130524T000000Z", auth, sizeof(auth)));
	assert_non_null(strstr(auth, "SignedHeaders=host;x-amz-copy-source;"
	                             "x-amz-copy-source-range;x-amz-date,"));
	/* too small an output, too many headers: refused, not cut */
	assert_false(oxst_s3_sign(&cfg, "GET", "/test.txt", "", h, 4, empty, "20130524T000000Z",
	                          auth, 100));
	oxst_s3_header many[17];
	for (size_t i = 0; i < 17; i++)
		many[i] = h[0];
	assert_false(oxst_s3_sign(&cfg, "GET", "/", "", many, 17, empty, "20130524T000000Z", auth,
	                          sizeof(auth)));
}

static void test_xml(void **state)
{
	(void)state;
	const char *xml =
	    "<?xml version=\"1.0\"?><ListBucketResult><IsTruncated>true</IsTruncated>"
	    "<Contents><Key>p/models/a&amp;b&lt;&gt;&quot;&apos;.onnx</Key><Size>12</Size></Contents>"
	    "<Contents><Key>second</Key><Size>3</Size></Contents>"
	    "<NextContinuationToken>tok</NextContinuationToken></ListBucketResult>";
	const char *end = xml + strlen(xml), *p = xml, *a, *z;
	char v[64];
	int n = 0;
	while (oxst_xml_element(&p, end, "Contents", &a, &z)) {
		const char *q = a;
		assert_true(oxst_xml_next(&q, z, "Key", v, sizeof(v)));
		assert_string_equal(v, n == 0 ? "p/models/a&b<>\"'.onnx" : "second");
		n++;
	}
	assert_int_equal(n, 2);
	p = xml;
	assert_true(oxst_xml_next(&p, end, "NextContinuationToken", v, sizeof(v)));
	assert_string_equal(v, "tok");
	p = xml;
	assert_false(oxst_xml_next(&p, end, "Missing", v, sizeof(v)));
	p = xml;
	assert_false(oxst_xml_next(&p, end, "NextContinuationToken", v, 3)); /* too long */
	const char *bad = "<Code>a&#65;</Code><Open>unclosed";
	p = bad;
	assert_false(oxst_xml_next(&p, bad + strlen(bad), "Code", v, sizeof(v)));
	p = bad;
	assert_false(oxst_xml_next(&p, bad + strlen(bad), "Open", v, sizeof(v)));
	/* bounded by end: nothing past it is read */
	p = xml;
	assert_false(oxst_xml_next(&p, xml + 60, "IsTruncated", v, sizeof(v)));
}

static void test_iso8601(void **state)
{
	(void)state;
	assert_int_equal(oxst_iso8601("1970-01-01T00:00:00.000Z"), 0);
	assert_int_equal(oxst_iso8601("2026-12-01T17:11:17.131Z"), 1796145077);
	assert_int_equal(oxst_iso8601("2024-02-29T23:59:59Z"), 1709251199);
	assert_int_equal(oxst_iso8601(""), -1);
	assert_int_equal(oxst_iso8601("yesterday"), -1);
	assert_int_equal(oxst_iso8601("2026-13-01T00:00:00Z"), -1);
}

static void test_part_for(void **state)
{
	(void)state;
	const uint64_t MiB = (uint64_t)1 << 20;
	assert_true(oxst_s3_part_for(100 * MiB, 16 * MiB) == 16 * MiB);
	/* exactly 10,000 parts still fit; one byte more needs larger parts */
	assert_true(oxst_s3_part_for(10000 * 5 * MiB, 5 * MiB) == 5 * MiB);
	assert_true(oxst_s3_part_for(10000 * 5 * MiB + 1, 5 * MiB) == 6 * MiB);
	uint64_t sizes[] = {10000 * 5 * MiB + 1, 123456789012ULL, (uint64_t)5 << 40};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint64_t part = oxst_s3_part_for(sizes[i], 5 * MiB);
		assert_true(part % MiB == 0 && part >= 5 * MiB);
		assert_true((sizes[i] + part - 1) / part <= OXST_S3_MAX_PARTS);
	}
}

static void test_meta_json(void **state)
{
	(void)state;
	oxst_model_meta m, back;
	memset(&m, 0, sizeof(m));
	snprintf(m.name, sizeof(m.name), "resnet \"50\".onnx");
	snprintf(m.graph, sizeof(m.graph), "torch_jit");
	snprintf(m.producer, sizeof(m.producer), "pytorch");
	snprintf(m.kind, sizeof(m.kind), "model");
	m.nodes = 122;
	oxr_buf b;
	oxr_buf_init(&b, 0);
	assert_true(oxst_meta_json(&b, &m));
	assert_string_equal(b.data, "{\"name\":\"resnet \\\"50\\\".onnx\",\"graph\":\"torch_jit\","
	                            "\"producer\":\"pytorch\",\"kind\":\"model\",\"nodes\":122}");
	assert_true(oxst_meta_parse(b.data, b.len, &back));
	assert_memory_equal(&m, &back, sizeof(m));
	/* unknown values are null, and read back as unknown */
	memset(&m, 0, sizeof(m));
	m.nodes = -1;
	b.len = 0;
	assert_true(oxst_meta_json(&b, &m));
	assert_string_equal(b.data, "{\"name\":null,\"graph\":null,\"producer\":null,\"kind\":null,"
	                            "\"nodes\":null}");
	assert_true(oxst_meta_parse(b.data, b.len, &back));
	assert_int_equal(back.nodes, -1);
	assert_string_equal(back.name, "");
	oxr_buf_free(&b);
	/* refused: not an object, wrong types, too long, a NUL inside, duplicates */
	static const char *const bad[] = {"[]", "{\"name\":1}", "{\"nodes\":\"3\"}", "{\"nodes\":-2}",
	                                  "{\"name\":\"a\\u0000b\"}", "{\"name\":\"a\",\"name\":\"b\"}",
	                                  "{"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_false(oxst_meta_parse(bad[i], strlen(bad[i]), &back));
	char big[400];
	snprintf(big, sizeof(big), "{\"graph\":\"%0300d\"}", 0);
	assert_false(oxst_meta_parse(big, strlen(big), &back));
}

/* ---------------------------------------------------------------------------------------
 * A fake object store: one thread answering HTTP/1.1 on 127.0.0.1 (one request per
 * connection), logging each request and answering through the test's handler.
 */
typedef struct fake_req {
	char method[8];
	char target[4096];
	char sha[72];   /* x-amz-content-sha256 */
	uint64_t body;  /* bytes of body received */
	char data[4096]; /* its first bytes (NUL-terminated) */
	char copy[512];  /* x-amz-copy-source */
	char range[64];  /* x-amz-copy-source-range */
	char if_match[100]; /* if-match */
} fake_req;

typedef struct fake_reply {
	int status;
	char headers[256];   /* extra header lines, each ending in \r\n */
	const char *body;    /* body[0..len), or len bytes of `fill` when body is NULL */
	size_t len;
	char fill;
} fake_reply;

typedef void (*fake_fn)(const fake_req *q, fake_reply *a);

#define FAKE_LOG 512
static struct {
	int lfd, port;
	pthread_t th;
	pthread_mutex_t mu;
	fake_req log[FAKE_LOG];
	size_t nlog;
	fake_fn fn;
	atomic_bool stop;
} fk = {.lfd = -1, .mu = PTHREAD_MUTEX_INITIALIZER};

static bool send_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n > 0) {
		ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
		if (w <= 0)
			return false;
		c += w;
		n -= (size_t)w;
	}
	return true;
}

/* The value of header `name` (lowercase, with ": ") in head, into out. */
static void header_of(const char *head, const char *name, char *out, size_t size)
{
	out[0] = '\0';
	for (const char *p = strstr(head, "\r\n"); p != NULL && p[2] != '\r';
	     p = strstr(p + 2, "\r\n")) {
		size_t n = strlen(name);
		if (strncasecmp(p + 2, name, n) == 0) {
			const char *v = p + 2 + n, *e = strstr(v, "\r\n");
			snprintf(out, size, "%.*s", (int)(e - v), v);
			return;
		}
	}
}

static void fake_serve(int cfd)
{
	static char head[16384];
	size_t got = 0;
	char *end = NULL;
	while (end == NULL && got < sizeof(head) - 1) {
		ssize_t r = recv(cfd, head + got, sizeof(head) - 1 - got, 0);
		if (r <= 0)
			return;
		got += (size_t)r;
		head[got] = '\0';
		end = strstr(head, "\r\n\r\n");
	}
	if (end == NULL)
		return;
	fake_req q;
	memset(&q, 0, sizeof(q));
	if (sscanf(head, "%7s %4095s", q.method, q.target) != 2)
		return;
	char v[128];
	header_of(head, "x-amz-content-sha256: ", q.sha, sizeof(q.sha));
	header_of(head, "x-amz-copy-source: ", q.copy, sizeof(q.copy));
	header_of(head, "x-amz-copy-source-range: ", q.range, sizeof(q.range));
	header_of(head, "if-match: ", q.if_match, sizeof(q.if_match));
	header_of(head, "content-length: ", v, sizeof(v));
	uint64_t want = strtoull(v, NULL, 10);
	header_of(head, "expect: ", v, sizeof(v));
	static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
	if (strcasecmp(v, "100-continue") == 0 && !send_all(cfd, cont, strlen(cont)))
		return;
	q.body = got - (size_t)(end + 4 - head);
	size_t nd = q.body < sizeof(q.data) - 1 ? (size_t)q.body : sizeof(q.data) - 1;
	memcpy(q.data, end + 4, nd);
	char buf[65536];
	while (q.body < want) {
		ssize_t r = recv(cfd, buf, sizeof(buf), 0);
		if (r <= 0)
			return;
		size_t k = (size_t)r < sizeof(q.data) - 1 - nd ? (size_t)r : sizeof(q.data) - 1 - nd;
		memcpy(q.data + nd, buf, k);
		nd += k;
		q.body += (uint64_t)r;
	}
	pthread_mutex_lock(&fk.mu);
	if (fk.nlog < FAKE_LOG)
		fk.log[fk.nlog++] = q;
	pthread_mutex_unlock(&fk.mu);
	fake_reply a = {.status = 404, .headers = "", .body = "", .len = 0, .fill = 0};
	fk.fn(&q, &a);
	char top[512];
	int n = snprintf(top, sizeof(top), "HTTP/1.1 %d X\r\nContent-Length: %zu\r\n"
	                 "Connection: close\r\n%s\r\n", a.status, a.len, a.headers);
	if (!send_all(cfd, top, (size_t)n) || strcmp(q.method, "HEAD") == 0)
		return;
	if (a.body != NULL) {
		(void)send_all(cfd, a.body, a.len);
		return;
	}
	memset(buf, a.fill, sizeof(buf));
	for (size_t left = a.len; left > 0;) {
		size_t k = left < sizeof(buf) ? left : sizeof(buf);
		if (!send_all(cfd, buf, k))
			return;
		left -= k;
	}
}

static void *fake_main(void *arg)
{
	(void)arg;
	while (!atomic_load(&fk.stop)) {
		int cfd = accept(fk.lfd, NULL, NULL);
		if (cfd < 0)
			continue;
		struct timeval tv = {10, 0};
		setsockopt(cfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		fake_serve(cfd);
		close(cfd);
	}
	return NULL;
}

static void fake_start(fake_fn fn)
{
	fk.fn = fn;
	fk.nlog = 0;
	atomic_store(&fk.stop, false);
	fk.lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fk.lfd >= 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sa);
	assert_int_equal(bind(fk.lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fk.lfd, 16), 0);
	assert_int_equal(getsockname(fk.lfd, (struct sockaddr *)&sa, &sl), 0);
	fk.port = ntohs(sa.sin_port);
	/* accept() wakes up every 100 ms to see fk.stop */
	struct timeval tv = {0, 100000};
	setsockopt(fk.lfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	assert_int_equal(pthread_create(&fk.th, NULL, fake_main, NULL), 0);
}

static int fake_stop(void **state)
{
	(void)state;
	if (fk.lfd >= 0) {
		atomic_store(&fk.stop, true);
		pthread_join(fk.th, NULL);
		close(fk.lfd);
		fk.lfd = -1;
	}
	return 0;
}

/* Requests logged so far whose method is `method` and whose target contains `part`. */
static size_t fake_count(const char *method, const char *part)
{
	size_t n = 0;
	pthread_mutex_lock(&fk.mu);
	for (size_t i = 0; i < fk.nlog; i++)
		n += strcmp(fk.log[i].method, method) == 0 && strstr(fk.log[i].target, part) != NULL;
	pthread_mutex_unlock(&fk.mu);
	return n;
}

static void sha_hex(const void *p, size_t n, char out[65])
{
	unsigned char md[32];
	unsigned int mn = 0;
	assert_int_equal(EVP_Digest(p, n, md, &mn, EVP_sha256(), NULL), 1);
	oxst_hex(out, md, 32);
}

/* ---------------------------------------------------------------------------------------
 * The client's request stays the caller's: no pointer into oxst_s3_do's frame is left in
 * it (a body hashed by the call once was; the next call on the same request then sent
 * the old hash — or, under ASan's detect_stack_use_after_return, read a dead frame).
 */
static void answer_ok(const fake_req *q, fake_reply *a)
{
	(void)q;
	a->status = 200;
}

static void test_request_keeps_nothing(void **state)
{
	(void)state;
	fake_start(answer_ok);
	oxst_s3_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	snprintf(cfg.endpoint, sizeof(cfg.endpoint), "http://127.0.0.1:%d", fk.port);
	snprintf(cfg.region, sizeof(cfg.region), "us-east-1");
	snprintf(cfg.access, sizeof(cfg.access), "AK");
	snprintf(cfg.secret, sizeof(cfg.secret), "SK");
	cfg.path_style = true;
	cfg.timeout = 5;
	oxst_s3 *c = oxst_s3_new(&cfg);
	assert_non_null(c);
	oxst_s3_req r;
	oxst_s3_req_init(&r, OXST_S3OP_PUT, "PUT", "bkt", "k");
	static const char *const bodies[] = {"hello", "another body"};
	for (size_t i = 0; i < 2; i++) {
		r.body = bodies[i];
		r.body_len = strlen(bodies[i]);
		assert_int_equal(oxst_s3_do(c, &r), OXST_OK);
		assert_int_equal(r.status, 200);
		assert_null(r.body_sha256);
		char want[65];
		sha_hex(bodies[i], strlen(bodies[i]), want);
		assert_int_equal(fk.nlog, i + 1);
		assert_string_equal(fk.log[i].sha, want);
		assert_int_equal(fk.log[i].body, strlen(bodies[i]));
	}
	oxst_s3_free(c);
	fake_stop(NULL);
}

/* ---------------------------------------------------------------------------------------
 * The S3 store against the fake: multipart uploads' queries, the download budget.
 */
static char s3root[256];
static char upload_id[700];
static bool fail_parts;

static oxst_store *open_store(uint64_t budget)
{
	snprintf(s3root, sizeof(s3root), "/tmp/oxs_s3_XXXXXX");
	assert_non_null(mkdtemp(s3root));
	char cache[300], endpoint[100];
	snprintf(cache, sizeof(cache), "%s/cache", s3root);
	snprintf(endpoint, sizeof(endpoint), "AWS_ENDPOINT_URL=http://127.0.0.1:%d", fk.port);
	char *env[] = {"AWS_ACCESS_KEY_ID=AK", "AWS_SECRET_ACCESS_KEY=SK", endpoint, NULL};
	oxst_s3_options o = {.url = "s3://bkt", .cache_dir = cache, .cache_budget = budget,
	                          .timeout = 5, .part_size = (uint64_t)5 << 20, .envp = env};
	oxst_store *s = NULL;
	char err[256];
	if (oxst_s3_open(&s, &o, err, sizeof(err)) != OXST_OK)
		fail_msg("open: %s", err);
	/* The store probes readiness at open, a PUT of .readyz from its own thread; wait for
	 * that answer, or the PUT can land in a log a test has just cleared (seen under the
	 * sanitizers on a loaded machine: a bundle that must write nothing counted 1 PUT). */
	(void)s->ops->writable(s);
	return s;
}

static void close_store(oxst_store *s)
{
	s->ops->close(s);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", s3root);
	assert_int_equal(system(cmd), 0);
}

static void answer_multipart(const fake_req *q, fake_reply *a)
{
	static char xml[1024];
	a->status = 404;
	if (strcmp(q->method, "PUT") == 0 && strstr(q->target, ".readyz") != NULL) {
		a->status = 200;
	} else if (strcmp(q->method, "POST") == 0 && strstr(q->target, "?uploads=") != NULL) {
		a->status = 200;
		a->len = (size_t)snprintf(xml, sizeof(xml), "<InitiateMultipartUploadResult><UploadId>"
		                          "%s</UploadId></InitiateMultipartUploadResult>", upload_id);
		a->body = xml;
	} else if (strcmp(q->method, "PUT") == 0 && strstr(q->target, "partNumber=") != NULL) {
		a->status = fail_parts ? 403 : 200;
		snprintf(a->headers, sizeof(a->headers), "ETag: \"e%zu\"\r\n", (size_t)q->body);
	} else if (strcmp(q->method, "POST") == 0 && strstr(q->target, "?uploadId=") != NULL) {
		a->status = 200;
		a->body = "<CompleteMultipartUploadResult></CompleteMultipartUploadResult>";
		a->len = strlen(a->body);
	} else if (strcmp(q->method, "DELETE") == 0) {
		a->status = 204;
	}
}

/* Put a model of 5 MiB + 1 byte (two parts) with the current upload_id. */
static oxst_status put_big(oxst_store *s, const char *id)
{
	int fd = -1;
	char path[600];
	assert_int_equal(s->ops->spool(s, &fd, path, sizeof(path)), OXST_OK);
	assert_int_equal(ftruncate(fd, ((off_t)5 << 20) + 1), 0);
	bool created = false;
	oxst_status st = s->ops->put_model(s, id, path, fd, &created);
	assert_true(st != OXST_OK || created);
	close(fd);
	(void)unlink(path);
	return st;
}

static void test_multipart_queries(void **state)
{
	(void)state;
	fake_start(answer_multipart);
	oxst_store *s = open_store((uint64_t)64 << 20);
	char id[65], enc[2048] = "uploadId=";
	sha_hex("multipart", 9, id);
	/* the longest upload id the store takes, every byte of it percent-encoded */
	memset(upload_id, '+', 511);
	upload_id[511] = '\0';
	for (size_t i = 0; i < 511; i++)
		strcat(enc, "%2B");
	fail_parts = false;
	assert_int_equal(put_big(s, id), OXST_OK);
	assert_int_equal(fake_count("POST", "?uploads="), 1);
	assert_int_equal(fake_count("PUT", enc), 2); /* both parts name the upload */
	assert_int_equal(fake_count("PUT", "?partNumber=1&"), 1);
	assert_int_equal(fake_count("PUT", "?partNumber=2&"), 1);
	char want[2100];
	snprintf(want, sizeof(want), "?%s", enc);
	assert_int_equal(fake_count("POST", want), 1); /* the completion: exactly that query */
	assert_int_equal(fake_count("DELETE", ""), 0);

	/* a part refused: the upload is aborted with its id, never a DELETE of anything else */
	fk.nlog = 0;
	sha_hex("multipart 2", 11, id);
	fail_parts = true;
	assert_int_equal(put_big(s, id), OXST_E_UNAVAILABLE);
	assert_int_equal(fake_count("DELETE", ""), 1);
	assert_int_equal(fake_count("DELETE", want), 1);

	/* an upload id too long to keep: an error, and nothing sent after it */
	fk.nlog = 0;
	sha_hex("multipart 3", 11, id);
	memset(upload_id, 'u', 600);
	upload_id[600] = '\0';
	fail_parts = false;
	assert_int_equal(put_big(s, id), OXST_E_UNAVAILABLE);
	assert_int_equal(fake_count("PUT", "partNumber"), 0);
	assert_int_equal(fake_count("DELETE", ""), 0);
	close_store(s);
	fake_stop(NULL);
}

/* A model with data files: nfiles of file_size bytes under data/<id>/ */
#define MODEL_BYTES 1000
static char dl_id[65];
static size_t dl_nfiles;
static size_t dl_file_size;

static void answer_download(const fake_req *q, fake_reply *a)
{
	static char xml[65536];
	char model[200], data[200];
	snprintf(model, sizeof(model), "/bkt/models/%s.onnx", dl_id);
	snprintf(data, sizeof(data), "/bkt/data/%s/", dl_id);
	a->status = 404;
	if (strcmp(q->method, "PUT") == 0 && strstr(q->target, ".readyz") != NULL) {
		a->status = 200;
	} else if (strcmp(q->method, "GET") != 0) {
		return;
	} else if (strcmp(q->target, model) == 0) {
		a->status = 200;
		a->body = NULL;
		a->fill = 'M';
		a->len = MODEL_BYTES;
	} else if (strncmp(q->target, data, strlen(data)) == 0) {
		a->status = 200;
		a->body = NULL;
		a->fill = 'D';
		a->len = dl_file_size;
	} else if (strstr(q->target, "list-type=2") != NULL && strstr(q->target, "data%2F") != NULL) {
		size_t o = (size_t)snprintf(xml, sizeof(xml), "<ListBucketResult>");
		for (size_t i = 0; i < dl_nfiles; i++)
			o += (size_t)snprintf(xml + o, sizeof(xml) - o, "<Contents><Key>data/%s/f%03zu.bin"
			                      "</Key><Size>%zu</Size></Contents>", dl_id, i, dl_file_size);
		o += (size_t)snprintf(xml + o, sizeof(xml) - o, "<IsTruncated>false</IsTruncated>"
		                      "</ListBucketResult>");
		a->status = 200;
		a->body = xml;
		a->len = o;
	}
}

/* The id of the bundle answer_download serves. */
static void bundle_id(char out[65])
{
	static char buf[1 << 20];
	char msha[65];
	memset(buf, 'M', MODEL_BYTES);
	sha_hex(buf, MODEL_BYTES, msha);
	oxst_bundle_file *files = calloc(dl_nfiles, sizeof(*files));
	assert_non_null(files);
	assert_true(dl_file_size <= sizeof(buf));
	memset(buf, 'D', dl_file_size);
	for (size_t i = 0; i < dl_nfiles; i++) {
		snprintf(files[i].location, sizeof(files[i].location), "f%03zu.bin", i);
		files[i].size = dl_file_size;
		sha_hex(buf, dl_file_size, files[i].sha256);
	}
	assert_true(oxst_bundle_id(msha, MODEL_BYTES, files, dl_nfiles, out));
	free(files);
}

static void test_download_budget(void **state)
{
	(void)state;
	fake_start(answer_download);
	const uint64_t budget = 1 << 20;
	oxst_store *s = open_store(budget);
	/* within the budget together: served */
	dl_nfiles = 2;
	dl_file_size = 400 << 10;
	bundle_id(dl_id);
	int fd = -1;
	uint64_t size = 0;
	assert_int_equal(s->ops->open_model(s, dl_id, &fd, &size), OXST_OK);
	assert_int_equal(size, MODEL_BYTES);
	close(fd);
	assert_int_equal(fake_count("GET", "/bkt/data/"), 2);

	/* 40 files of 512 KiB, each within the budget, 20 MiB together: 507, and the
	 * downloads stop where the budget ends (the model and two files at most) */
	fk.nlog = 0;
	dl_nfiles = 40;
	dl_file_size = 512 << 10;
	bundle_id(dl_id);
	assert_int_equal(s->ops->open_model(s, dl_id, &fd, &size), OXST_E_NOSPACE);
	size_t gets = fake_count("GET", "/bkt/data/");
	if (gets > 2)
		fail_msg("%zu data files downloaded past a budget of 2", gets);
	/* nothing kept: the cache's temporary folder is empty */
	char tmp[300];
	snprintf(tmp, sizeof(tmp), "%s/cache/tmp", s3root);
	DIR *d = opendir(tmp);
	assert_non_null(d);
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			fail_msg("left in the cache: %s", e->d_name);
	closedir(d);
	close_store(s);
	fake_stop(NULL);
}

/* ---------------------------------------------------------------------------------------
 * Resumable transfers on the S3 store against a fake that keeps the state object, the
 * parts and the upload: the state after each part, the parts listed at the end, nothing
 * recorded for a part the object store refused, abort.
 */
static struct {
	char state[4096]; /* the state object ("" = none) */
	uint64_t parts[8]; /* bytes of part k+1, 0 = none */
	bool open, completed, aborted, refuse_part;
	int creates;
	unsigned version; /* the state object's ETag: "s<version>" */
	bool steal;       /* another replica takes the lease at the next state read */
} xf;

static void answer_xfer(const fake_req *q, fake_reply *a)
{
	static char xml[2048];
	a->status = 404;
	bool state = strstr(q->target, "/uploads/") != NULL && strstr(q->target, "/state") != NULL;
	if (strcmp(q->method, "PUT") == 0 && strstr(q->target, ".readyz") != NULL) {
		a->status = 200;
	} else if (state && strcmp(q->method, "PUT") == 0) {
		char tag[32];
		snprintf(tag, sizeof(tag), "\"s%u\"", xf.version);
		if (q->if_match[0] != '\0' && (xf.state[0] == '\0' || strcmp(q->if_match, tag) != 0)) {
			a->status = 412; /* a conditional write over another state */
		} else {
			a->status = 200;
			snprintf(xf.state, sizeof(xf.state), "%s", q->data);
			xf.version++;
		}
	} else if (state && strcmp(q->method, "GET") == 0 && xf.state[0] != '\0') {
		if (xf.steal) { /* another replica writes its lease just after this read */
			xf.steal = false;
			a->status = 200;
			snprintf(a->headers, sizeof(a->headers), "ETag: \"s%u\"\r\n", xf.version);
			a->body = xf.state;
			a->len = strlen(xf.state);
			size_t n = strlen(xf.state);
			snprintf(xf.state + n, sizeof(xf.state) - n, "lease %032d 4000000000\n", 7);
			xf.version++;
			return;
		}
		a->status = 200;
		snprintf(a->headers, sizeof(a->headers), "ETag: \"s%u\"\r\n", xf.version);
		a->body = xf.state;
		a->len = strlen(xf.state);
	} else if (state && strcmp(q->method, "DELETE") == 0) {
		a->status = 204;
		xf.state[0] = '\0';
	} else if (strcmp(q->method, "POST") == 0 && strstr(q->target, "?uploads=") != NULL) {
		a->status = 200;
		xf.open = true;
		xf.creates++;
		a->body = "<InitiateMultipartUploadResult><UploadId>U1</UploadId></InitiateMultipartUploadResult>";
		a->len = strlen(a->body);
	} else if (strcmp(q->method, "PUT") == 0 && strstr(q->target, "partNumber=") != NULL) {
		unsigned k = (unsigned)atoi(strstr(q->target, "partNumber=") + 11);
		if (!xf.open || k < 1 || k > 8) {
			a->status = 404;
		} else if (xf.refuse_part) {
			a->status = 403;
		} else {
			a->status = 200;
			xf.parts[k - 1] = q->body;
			snprintf(a->headers, sizeof(a->headers), "ETag: \"p%u\"\r\n", k);
		}
	} else if (strcmp(q->method, "GET") == 0 && strstr(q->target, "uploadId=U1") != NULL && xf.open) {
		int n = snprintf(xml, sizeof(xml), "<ListPartsResult><IsTruncated>false</IsTruncated>");
		for (unsigned k = 0; k < 8; k++)
			if (xf.parts[k] != 0)
				n += snprintf(xml + n, sizeof(xml) - (size_t)n, "<Part><PartNumber>%u</PartNumber>"
				              "<ETag>\"p%u\"</ETag><Size>%" PRIu64 "</Size></Part>", k + 1, k + 1,
				              xf.parts[k]);
		n += snprintf(xml + n, sizeof(xml) - (size_t)n, "</ListPartsResult>");
		a->status = 200;
		a->body = xml;
		a->len = (size_t)n;
	} else if (strcmp(q->method, "POST") == 0 && strstr(q->target, "uploadId=U1") != NULL && xf.open) {
		a->status = 200;
		xf.open = false;
		xf.completed = true;
		a->body = "<CompleteMultipartUploadResult></CompleteMultipartUploadResult>";
		a->len = strlen(a->body);
	} else if (strcmp(q->method, "DELETE") == 0 && strstr(q->target, "uploadId=U1") != NULL) {
		a->status = xf.open ? 204 : 404;
		xf.open = false;
		xf.aborted = true;
	} else if (strcmp(q->method, "HEAD") == 0 &&
	           (strstr(q->target, "/models/") != NULL || strstr(q->target, "/blobs/") != NULL)) {
		a->status = xf.completed ? 200 : 404;
		for (unsigned k = 0; k < 8 && xf.completed; k++)
			a->len += xf.parts[k]; /* Content-Length only: HEAD has no body */
	}
}

/* The part at x->offset (its bytes: `fill`) through the ops; x moves on when stored. */
static oxst_status xfer_send(oxst_store *s, const char *uid, oxst_xfer *x, char fill)
{
	uint64_t len = x->length - x->offset < x->part ? x->length - x->offset : x->part;
	int fd = -1;
	uint64_t at = 0;
	assert_int_equal(s->ops->xfer_part_fd(s, uid, x, &fd, &at), OXST_OK);
	assert_int_equal(at, 0); /* a part-sized temporary */
	char *buf = malloc(len);
	assert_non_null(buf);
	memset(buf, fill, len);
	assert_int_equal(pwrite(fd, buf, len, 0), (ssize_t)len);
	free(buf);
	oxst_xfer next = *x;
	next.offset += len;
	bool last = next.offset == x->length;
	oxst_status st = s->ops->xfer_part_put(s, uid, x, last ? NULL : &next, fd, at, len);
	close(fd);
	if (st == OXST_OK)
		*x = next;
	return st;
}

static void test_xfer_s3(void **state)
{
	(void)state;
	memset(&xf, 0, sizeof(xf));
	fake_start(answer_xfer);
	oxst_store *s = open_store((uint64_t)64 << 20);
	const char *uid = "0123456789abcdef0123456789abcdef";
	uint64_t part = (uint64_t)5 << 20;
	oxst_xfer x, y;
	oxst_xfer_init(&x, 2 * part + 100, part, 1700000000, 60);
	sha_hex("xfer", 4, x.sha256);
	snprintf(x.name, sizeof(x.name), "big.onnx");
	bool created = false;
	assert_int_equal(s->ops->xfer_create(s, uid, &x, &created), OXST_OK);
	assert_true(created);
	assert_string_equal(x.backend, "mpu U1");
	assert_int_equal(xf.creates, 1);
	/* the state object is the record */
	assert_true(oxst_xfer_parse(xf.state, strlen(xf.state), &y));
	assert_int_equal(y.offset, 0);
	/* the same transfer again (another replica): found, no second upload */
	oxst_xfer other = x;
	other.backend[0] = '\0';
	assert_int_equal(s->ops->xfer_create(s, uid, &other, &created), OXST_OK);
	assert_false(created);
	assert_string_equal(other.backend, "mpu U1");
	assert_int_equal(xf.creates, 1);
	assert_int_equal(xfer_send(s, uid, &x, 'a'), OXST_OK);
	assert_int_equal(s->ops->xfer_get(s, uid, &y), OXST_OK);
	assert_int_equal(y.offset, part);
	/* a part the object store refuses: not acknowledged, the state stays */
	xf.refuse_part = true;
	oxst_xfer try = x;
	assert_int_equal(xfer_send(s, uid, &try, 'b'), OXST_E_UNAVAILABLE);
	assert_int_equal(s->ops->xfer_get(s, uid, &y), OXST_OK);
	assert_int_equal(y.offset, part);
	xf.refuse_part = false;
	/* one writer per part: another replica leased the part between this one's read of
	 * the state and its lease write: refused before a byte went (issue 35) */
	char saved[4096];
	snprintf(saved, sizeof(saved), "%s", xf.state);
	unsigned parts_before = (unsigned)fake_count("PUT", "partNumber=2&uploadId=U1");
	xf.steal = true;
	try = x;
	assert_int_equal(xfer_send(s, uid, &try, 'z'), OXST_E_BUSY);
	assert_int_equal((unsigned)fake_count("PUT", "partNumber=2&uploadId=U1"), parts_before);
	/* its lease is live: a second try is refused too */
	try = x;
	assert_int_equal(xfer_send(s, uid, &try, 'z'), OXST_E_BUSY);
	assert_int_equal((unsigned)fake_count("PUT", "partNumber=2&uploadId=U1"), parts_before);
	snprintf(xf.state, sizeof(xf.state), "%s", saved); /* that replica's lease ended */
	xf.version++;
	assert_int_equal(xfer_send(s, uid, &x, 'b'), OXST_OK);
	assert_true(strstr(xf.state, "lease") == NULL); /* the lease went with the part */
	/* the finish before the last part: a part missing, nothing completed */
	int fd = -1;
	char spool[600];
	assert_int_equal(s->ops->xfer_finish(s, uid, &x, &fd, spool, sizeof(spool), &created), OXST_E_IO);
	assert_false(xf.completed);
	assert_int_equal(xfer_send(s, uid, &x, 'c'), OXST_OK); /* the last: state not moved */
	assert_int_equal(s->ops->xfer_get(s, uid, &y), OXST_OK);
	assert_int_equal(y.offset, 2 * part);
	char (*uids)[OXST_XFER_UID_LEN + 1] = calloc(4, sizeof(*uids));
	size_t n = 0;
	/* list: ListObjectsV2 is not answered by this fake (404): an error, not an empty list */
	assert_int_not_equal(s->ops->xfer_list(s, uids, 4, &n), OXST_OK);
	free(uids);
	assert_int_equal(s->ops->xfer_finish(s, uid, &x, &fd, spool, sizeof(spool), &created), OXST_OK);
	assert_true(created);
	assert_int_equal(fd, -1); /* kept by the object store: nothing to adopt */
	assert_true(xf.completed);
	/* the state stays until the service has stored the model (issue 35 item 3): a
	 * finish that failed after this is done again by the last part sent again, which
	 * meets the completed upload (404) and is taken as the object holds the file */
	assert_string_not_equal(xf.state, "");
	assert_int_equal(s->ops->stat_model(s, x.sha256, 0, NULL), OXST_OK);
	assert_int_equal(s->ops->xfer_get(s, uid, &y), OXST_OK);
	assert_int_equal(y.offset, 2 * part);
	oxst_xfer again = y;
	assert_int_equal(xfer_send(s, uid, &again, 'c'), OXST_OK);
	assert_int_equal(s->ops->xfer_finish(s, uid, &y, &fd, spool, sizeof(spool), &created), OXST_OK);
	assert_false(created); /* there already */
	assert_int_equal(s->ops->xfer_abort(s, uid), OXST_OK); /* stored: the service ends it */
	assert_string_equal(xf.state, "");
	char want[64];
	assert_int_equal(fake_count("PUT", "partNumber=1&uploadId=U1"), 1);
	assert_int_equal(fake_count("PUT", "partNumber=2&uploadId=U1"), 2); /* refused, then sent
	                                                                     * (not while leased) */
	snprintf(want, sizeof(want), "partNumber=3&uploadId=U1");
	assert_int_equal(fake_count("PUT", want), 2); /* the last, then again after the finish */

	/* abort: the upload and the state go */
	memset(&xf, 0, sizeof(xf));
	oxst_xfer_init(&x, 2 * part, part, 1700000000, 60);
	sha_hex("xfer 2", 6, x.sha256);
	assert_int_equal(s->ops->xfer_create(s, uid, &x, &created), OXST_OK);
	assert_int_equal(xfer_send(s, uid, &x, 'a'), OXST_OK);
	assert_int_equal(s->ops->xfer_abort(s, uid), OXST_OK);
	assert_true(xf.aborted);
	assert_string_equal(xf.state, "");
	assert_int_equal(s->ops->xfer_get(s, uid, &y), OXST_E_NOT_FOUND);
	/* a part after the abort: the transfer is gone */
	assert_int_equal(xfer_send(s, uid, &x, 'b'), OXST_E_NOT_FOUND);
	/* a data file of a bundle: the same, to its blob; kept there at the end (no fd) */
	memset(&xf, 0, sizeof(xf));
	char wantb[200];
	fk.nlog = 0;
	oxst_xfer_init(&x, part + 10, part, 1700000000, 60);
	sha_hex("xfer 4", 6, x.sha256);
	snprintf(x.kind, sizeof(x.kind), "data");
	assert_int_equal(s->ops->xfer_create(s, uid, &x, &created), OXST_OK);
	assert_true(created);
	snprintf(wantb, sizeof(wantb), "/bkt/blobs/%s?uploads=", x.sha256);
	assert_int_equal(fake_count("POST", wantb), 1);
	assert_int_equal(xfer_send(s, uid, &x, 'a'), OXST_OK);
	assert_int_equal(xfer_send(s, uid, &x, 'b'), OXST_OK);
	snprintf(wantb, sizeof(wantb), "/bkt/blobs/%s?partNumber=2&uploadId=U1", x.sha256);
	assert_int_equal(fake_count("PUT", wantb), 1);
	assert_int_equal(s->ops->xfer_finish(s, uid, &x, &fd, spool, sizeof(spool), &created), OXST_OK);
	assert_true(created);
	assert_int_equal(fd, -1);
	assert_true(xf.completed);
	assert_int_equal(s->ops->xfer_abort(s, uid), OXST_OK);
	assert_string_equal(xf.state, "");
	/* small parts stay in the local cache: no request at all */
	fk.nlog = 0;
	oxst_xfer_init(&x, 3000, 1024, 1700000000, 60);
	sha_hex("xfer 3", 6, x.sha256);
	const char *uid2 = "fedcba9876543210fedcba9876543210";
	assert_int_equal(s->ops->xfer_create(s, uid2, &x, &created), OXST_OK);
	assert_true(created);
	assert_int_equal(fake_count("POST", ""), 0);
	assert_int_equal(s->ops->xfer_get(s, uid2, &y), OXST_OK);
	assert_int_equal(s->ops->xfer_abort(s, uid2), OXST_OK);
	close_store(s);
	fake_stop(NULL);
}

/* ---------------------------------------------------------------------------------------
 * Bundles from blobs on the S3 store: a data file's transfer goes to blobs/<sha256>; a
 * bundle is made by server-side copies (CopyObject up to 5 GiB, UploadPartCopy ranges
 * of 1 GiB above: the fake copies nothing), the data files before the model, nothing written when a piece is
 * missing, nothing when the bundle is there.
 */
static struct {
	char wsha[65], msha[65], bid[65];
	uint64_t wsize, msize;
	bool bundle; /* models/<bid>.onnx exists */
	unsigned copies; /* UploadPartCopy answered */
} bf;

static void answer_bundle(const fake_req *q, fake_reply *a)
{
	static char xml[512];
	char blob[100], model[100], bundle[100];
	snprintf(blob, sizeof(blob), "/bkt/blobs/%s", bf.wsha);
	snprintf(model, sizeof(model), "/bkt/models/%s.onnx", bf.msha);
	snprintf(bundle, sizeof(bundle), "/bkt/models/%s.onnx", bf.bid);
	a->status = 404;
	a->body = NULL;
	if (strcmp(q->method, "HEAD") == 0 && strcmp(q->target, blob) == 0) {
		a->status = 200;
		a->len = bf.wsize; /* Content-Length only: HEAD has no body */
	} else if (strcmp(q->method, "HEAD") == 0 && strcmp(q->target, model) == 0) {
		a->status = 200;
		a->len = bf.msize;
	} else if (strcmp(q->method, "HEAD") == 0 && strcmp(q->target, bundle) == 0) {
		a->status = bf.bundle ? 200 : 404;
		a->len = bf.bundle ? bf.msize : 0;
	} else if (strcmp(q->method, "POST") == 0 && strstr(q->target, "?uploads=") != NULL) {
		a->status = 200;
		a->body = "<InitiateMultipartUploadResult><UploadId>C1</UploadId></InitiateMultipartUploadResult>";
		a->len = strlen(a->body);
	} else if (strcmp(q->method, "PUT") == 0 && strstr(q->target, "partNumber=") != NULL &&
	           q->copy[0] != '\0' && q->range[0] != '\0') {
		bf.copies++;
		int n = snprintf(xml, sizeof(xml), "<CopyPartResult><ETag>&quot;c%u&quot;</ETag></CopyPartResult>",
		                 bf.copies);
		a->status = 200;
		a->body = xml;
		a->len = (size_t)n;
	} else if (strcmp(q->method, "POST") == 0 && strstr(q->target, "uploadId=C1") != NULL) {
		a->status = 200;
		a->body = "<CompleteMultipartUploadResult></CompleteMultipartUploadResult>";
		a->len = strlen(a->body);
	} else if (strcmp(q->method, "PUT") == 0 && strcmp(q->target, bundle) == 0 &&
	           q->copy[0] != '\0') {
		a->status = 200;
		bf.bundle = true;
		a->body = "<CopyObjectResult><ETag>\"m\"</ETag></CopyObjectResult>";
		a->len = strlen(a->body);
	}
	if (a->body == NULL && strcmp(q->method, "HEAD") != 0) {
		a->body = "";
		a->len = 0;
	}
}

/* The log entry of the nth request whose target starts with prefix (NULL: none). */
static const fake_req *fake_find(const char *method, const char *prefix, size_t nth)
{
	for (size_t i = 0; i < fk.nlog; i++)
		if (strcmp(fk.log[i].method, method) == 0 &&
		    strncmp(fk.log[i].target, prefix, strlen(prefix)) == 0 && nth-- == 0)
			return &fk.log[i];
	return NULL;
}

static void test_bundle_s3(void **state)
{
	(void)state;
	memset(&bf, 0, sizeof(bf));
	fake_start(answer_bundle);
	oxst_store *s = open_store((uint64_t)8 << 30); /* a budget the bundle fits */
	uint64_t part = (uint64_t)1 << 30;
	sha_hex("weights", 7, bf.wsha);
	sha_hex("model", 5, bf.msha);
	bf.wsize = 5 * part + 100;
	bf.msize = 1234;
	oxst_bundle_file f = {.location = "w.bin", .size = bf.wsize};
	memcpy(f.sha256, bf.wsha, 65);
	assert_true(oxst_bundle_id(bf.msha, bf.msize, &f, 1, bf.bid));
	/* blob_stat: there with its length only */
	assert_int_equal(s->ops->blob_stat(s, bf.wsha, bf.wsize), OXST_OK);
	assert_int_equal(s->ops->blob_stat(s, bf.wsha, bf.wsize + 1), OXST_E_NOT_FOUND);
	assert_int_equal(s->ops->blob_stat(s, bf.msha, 5), OXST_E_NOT_FOUND);
	assert_int_equal(s->ops->blob_stat(s, "nothex", 5), OXST_E_INVALID);
	/* a data file missing: nothing written */
	oxst_bundle_file missing = f;
	sha_hex("other", 5, missing.sha256);
	char bid2[65];
	assert_true(oxst_bundle_id(bf.msha, bf.msize, &missing, 1, bid2));
	bool created = true;
	fk.nlog = 0;
	assert_int_equal(s->ops->put_bundle(s, bid2, bf.msha, bf.msize, &missing, 1, &created),
	                 OXST_E_NOT_FOUND);
	assert_false(created);
	assert_int_equal(fake_count("PUT", ""), 0);
	assert_int_equal(fake_count("POST", ""), 0);
	/* the bundle: the data file in 6 ranges (above 5 GiB), then the model (CopyObject) */
	fk.nlog = 0;
	assert_int_equal(s->ops->put_bundle(s, bf.bid, bf.msha, bf.msize, &f, 1, &created), OXST_OK);
	assert_true(created);
	assert_int_equal(bf.copies, 6);
	char want[200], range[64];
	snprintf(want, sizeof(want), "/bkt/data/%s/w.bin?partNumber=", bf.bid);
	for (size_t i = 0; i < 6; i++) {
		const fake_req *q = fake_find("PUT", want, i);
		assert_non_null(q);
		snprintf(want + 100, 100, "/bkt/blobs/%s", bf.wsha);
		assert_string_equal(q->copy, want + 100);
		uint64_t off = i * part, last = i == 5 ? bf.wsize - 1 : off + part - 1;
		snprintf(range, sizeof(range), "bytes=%" PRIu64 "-%" PRIu64, off, last);
		assert_string_equal(q->range, range);
	}
	snprintf(want, sizeof(want), "/bkt/data/%s/w.bin?uploadId=C1", bf.bid);
	const fake_req *done = fake_find("POST", want, 0);
	assert_non_null(done); /* completed with the copies' ETags */
	assert_non_null(strstr(done->data, "<PartNumber>6</PartNumber><ETag>\"c6\"</ETag>"));
	snprintf(want, sizeof(want), "/bkt/models/%s.onnx", bf.bid);
	const fake_req *m = fake_find("PUT", want, 0);
	assert_non_null(m);
	assert_true(m > done); /* the model after its data */
	snprintf(want, sizeof(want), "/bkt/models/%s.onnx", bf.msha);
	assert_string_equal(m->copy, want);
	assert_string_equal(m->range, "");
	assert_int_equal(s->ops->stat_model(s, bf.bid, OXST_STAT_NONBLOCK, NULL), OXST_OK);
	/* again: there, nothing copied */
	fk.nlog = 0;
	assert_int_equal(s->ops->put_bundle(s, bf.bid, bf.msha, bf.msize, &f, 1, &created), OXST_OK);
	assert_false(created);
	assert_int_equal(fake_count("PUT", ""), 0);
	close_store(s);
	fake_stop(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_url_parse),  cmocka_unit_test(test_config_env),
	    cmocka_unit_test(test_encode_query), cmocka_unit_test(test_xml),
	    cmocka_unit_test(test_sign),
	    cmocka_unit_test(test_iso8601),    cmocka_unit_test(test_meta_json),
	    cmocka_unit_test(test_part_for),
	    cmocka_unit_test_teardown(test_request_keeps_nothing, fake_stop),
	    cmocka_unit_test_teardown(test_multipart_queries, fake_stop),
	    cmocka_unit_test_teardown(test_download_budget, fake_stop),
	    cmocka_unit_test_teardown(test_xfer_s3, fake_stop),
	    cmocka_unit_test_teardown(test_bundle_s3, fake_stop),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
