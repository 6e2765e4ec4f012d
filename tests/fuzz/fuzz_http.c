/*
 * fuzz_http.c — libFuzzer target: the HTTP request path.  One server runs in process for
 * the whole run (oxs_server_open: libmicrohttpd without a listening socket, a store in a
 * temporary folder, the real routes, uploads, multipart parsing, parse/link jobs and
 * caches); each input is a byte stream sent by a client on a fresh loopback TCP
 * connection handed over with oxs_server_add_connection, pipelined requests included.
 * The client half-closes once it has sent everything, no request waits for a job and
 * nothing came for 5 ms, and reads until the server closes, or has nothing in flight and
 * sends nothing for 20 ms (libmicrohttpd keeps an idle keep-alive connection until its
 * timeout).  Layout workers point at a program that does
 * not exist, so graph renderings fail fast (fuzz_render covers them).
 *
 * Checks, whatever the bytes:
 *  - the server answers within 10 s (no request hangs), and every request it began is
 *    completed once the connection is gone (no leaked request object);
 *  - everything it sends is a sequence of HTTP/1.x responses (status line first);
 *  - no 500 at all (no "no reply", no internal error: bad input is a 4xx); every 5xx is
 *    503 (busy), 507 (full), or libmicrohttpd's 501/505 (unknown coding, HTTP/2.0 ...);
 *  - a JSON answer is valid JSON (the first response, unless it answers a HEAD);
 *  - no temporary (spool file) is left in the store after the connection ends.
 */
#include "service/oxs.h"
#include "tests/fuzz/fuzz_common.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define DEADLINE_MS 10000
#define MAX_REPLY ((size_t)4 << 20)

static oxs_server *srv;
static char store[64];
static int listener = -1; /* loopback TCP: connections are made here, accepted, handed over */

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static void cleanup(void)
{
	oxs_server_close(srv);
	srv = NULL;
	if (store[0] != '\0')
		nftw(store, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	if (listener >= 0)
		close(listener);
}

static char *exchange(const uint8_t *data, size_t size, size_t *n);

static void start(void)
{
	signal(SIGPIPE, SIG_IGN);
	snprintf(store, sizeof(store), "/tmp/oxs-fuzz-http-XXXXXX");
	FZ_CHECK(mkdtemp(store) != NULL);
	oxs_config c;
	oxs_config_default(&c);
	snprintf(c.store, sizeof(c.store), "%s", store);
	snprintf(c.token, sizeof(c.token), "t");
	/* the seeds' Host names (the seed maker's req(), "x" in the hand-written ones): with the
	 * Host check (issue 35) every other name is refused, as seed_hostile_hosts tries */
	snprintf(c.allowed_hosts, sizeof(c.allowed_hosts), "fuzz,x");
	c.max_upload = 1 << 20; /* uploads and deletes need "Authorization: Bearer t" */
	c.threads = 1;
	c.workers = 1;
	c.work_queue = 4;
	c.layout_workers = 1;
	c.layout_queue = 2;
	c.layout_timeout = 2;
	c.timeout = 2;
	c.max_connections = 64;
	c.memory_cache = 4 << 20;
	c.store_budget = 32 << 20;
	c.evict_models = true;
	c.log_requests = false;
	c.isolation = false; /* previews and documents in process: the fuzzer sees their coverage */
	/* the resumable seeds name their uploads (the id derived from the file, not a secret),
	 * and every input comes from 127.0.0.1: one client, who must not run out of uploads */
	c.test_derived_upload_ids = true;
	c.uploads_per_client = 100000;
	char err[600];
	if (oxs_server_open(&srv, &c, "/nonexistent/onnxviz-layout-worker", err, sizeof(err)) != 0) {
		fprintf(stderr, "fuzz_http: %s\n", err);
		abort();
	}
	listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	FZ_CHECK(listener >= 0 && bind(listener, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	         listen(listener, 16) == 0);
	atexit(cleanup);
	/* one exchange before the first input: the server's threads start meanwhile, which
	 * under load took longer than the wait before the FIN (the first input's reply was
	 * then cut) */
	static const char warm[] = "GET /healthz HTTP/1.1\r\nHost: fuzz\r\n\r\n";
	size_t n = 0;
	free(exchange((const uint8_t *)warm, sizeof(warm) - 1, &n));
}

/* A loopback TCP connection: the client end (non-blocking) in *client; the server end
 * goes to the server. */
static void connect_pair(int *client)
{
	struct sockaddr_in a;
	socklen_t al = sizeof(a);
	FZ_CHECK(getsockname(listener, (struct sockaddr *)&a, &al) == 0);
	int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	/* closed with a reset, not into TIME_WAIT: at ~500 inputs a second the 28,000
	 * ephemeral ports of loopback ran out after 156 s (connect: EADDRNOTAVAIL) */
	struct linger lg = {1, 0};
	FZ_CHECK(c >= 0 && setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)) == 0);
	/* non-blocking before connect: libFuzzer's timeout alarm (SIGALRM) interrupted a
	 * blocking connect once in ~13,000 runs (EINTR, the check failed); a connect that is
	 * under way goes on, and the accept says when it is made */
	FZ_CHECK(fcntl(c, F_SETFL, O_NONBLOCK) == 0);
	if (connect(c, (struct sockaddr *)&a, al) != 0 && errno != EINPROGRESS && errno != EINTR) {
		fprintf(stderr, "fuzz_http: connect: %s\n", strerror(errno));
		fz_broken(__FILE__, __LINE__, "connect to the harness's listener");
	}
	int s;
	do
		s = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
	while (s < 0 && errno == EINTR);
	FZ_CHECK(s >= 0);
	FZ_CHECK(oxs_server_add_connection(srv, s) == 0);
	*client = c;
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Send data on a new connection, half-close, collect the reply until the server closes.
 * Returns the reply (malloc'd, *n bytes; the rest beyond MAX_REPLY is dropped). */
static char *exchange(const uint8_t *data, size_t size, size_t *n)
{
	int sv[1];
	connect_pair(&sv[0]);
	char *out = malloc(MAX_REPLY + 1);
	FZ_CHECK(out != NULL);
	size_t sent = 0, got = 0;
	bool eof = false, shut = false, begun = false;
	int64_t deadline = now_ms() + DEADLINE_MS, idle_since = -1, sent_at = -1, last_rx = -1;
	while (!eof) {
		/* libmicrohttpd keeps an idle keep-alive connection open after the client's FIN
		 * until its timeout: everything sent, nothing in flight and no byte for 20 ms
		 * counts as the end of the exchange */
		if (shut && oxs_server_inflight(srv) == 0) {
			if (idle_since < 0)
				idle_since = now_ms();
			else if (now_ms() - idle_since >= 20)
				break;
		} else {
			idle_since = -1;
		}
		/* the FIN once the server is done with what was sent: with poll(), libmicrohttpd
		 * sees a client's close at once and cuts the request it is on, also one about to
		 * wait for a job (POST /uploads, a part's store, a parse), and every pipelined
		 * request after it.  So the FIN waits until no request waits for a job and 5 ms
		 * passed without a byte (the next pipelined request begins meanwhile); 30 ms
		 * while a request is in flight (its body being taken: a multipart upload's
		 * spooling took over 5 ms under load; or waiting for more body than the input
		 * holds); 25 ms until the server has begun a request or answered. */
		if (sent == size && !shut) {
			if (sent_at < 0)
				sent_at = now_ms();
			int64_t quiet = now_ms() - (last_rx > sent_at ? last_rx : sent_at);
			int inflight = oxs_server_inflight(srv);
			begun = begun || got > 0 || inflight > 0;
			if (oxs_server_waiting(srv) == 0 &&
			    quiet >= (!begun ? 25 : inflight == 0 ? 5 : 30)) {
				shutdown(sv[0], SHUT_WR);
				shut = true;
			}
		}
		struct pollfd p = {.fd = sv[0], .events = (short)(POLLIN | (shut ? 0 : POLLOUT))};
		int left = (int)(deadline - now_ms());
		if (left <= 0) {
			fprintf(stderr, "fuzz_http: no end of the reply after %d ms (%zu of %zu bytes sent, "
			        "%zu received)\n", DEADLINE_MS, sent, size, got);
			fz_broken(__FILE__, __LINE__, "the server neither answered nor closed in time");
		}
		if (poll(&p, 1, left < 10 ? left : 10) <= 0)
			continue;
		if (p.revents & POLLOUT) {
			ssize_t w = send(sv[0], data + sent, size - sent, MSG_NOSIGNAL);
			if (w > 0)
				sent += (size_t)w;
			else if (w < 0 && errno != EAGAIN && errno != EINTR)
				sent = size, shut = true; /* the server closed its side: stop sending */
		}
		if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
			char buf[65536];
			ssize_t r = recv(sv[0], buf, sizeof(buf), 0);
			if (r > 0) {
				idle_since = -1;
				last_rx = now_ms();
				size_t k = (size_t)r;
				if (got + k > MAX_REPLY)
					k = MAX_REPLY - got;
				memcpy(out + got, buf, k);
				got += k;
			} else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
				eof = true;
			}
		}
	}
	close(sv[0]);
	out[got] = '\0';
	*n = got;
	return out;
}

/* The status code of the response starting at p, or 0 when it is no status line. */
static unsigned status_at(const char *p, size_t n)
{
	if (n < 12 || memcmp(p, "HTTP/1.", 7) != 0 || p[8] != ' ')
		return 0;
	unsigned s = 0;
	for (int i = 9; i < 12; i++) {
		if (p[i] < '0' || p[i] > '9')
			return 0;
		s = s * 10 + (unsigned)(p[i] - '0');
	}
	return s;
}

/* Header value of the response head [h, h+n) (case-insensitive name), or NULL. */
static const char *header(const char *h, size_t n, const char *name, size_t *vlen)
{
	size_t nl = strlen(name);
	for (const char *p = h; p + nl + 1 < h + n; p++) {
		if ((p == h || p[-1] == '\n') && strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
			const char *v = p + nl + 1;
			while (*v == ' ')
				v++;
			const char *e = strstr(v, "\r\n");
			*vlen = e ? (size_t)(e - v) : 0;
			return v;
		}
	}
	return NULL;
}

/* Where the next response starts after the one whose status line is at p: after its
 * Content-Length of body, or after its head (a HEAD's answer), when a status line is
 * there; NULL when neither is (no Content-Length: chunked, or the reply closed). */
static const char *next_response(const char *p, const char *end)
{
	const char *he = memmem(p, (size_t)(end - p), "\r\n\r\n", 4);
	if (he == NULL)
		return NULL;
	size_t vl = 0;
	const char *v = header(p, (size_t)(he - p), "Content-Length", &vl);
	he += 4;
	if (v != NULL) {
		unsigned long long len = strtoull(v, NULL, 10); /* the value ends at its "\r\n" */
		size_t left = (size_t)(end - he);
		if (len < left && status_at(he + len, left - (size_t)len) != 0)
			return he + len;
	}
	return status_at(he, (size_t)(end - he)) != 0 ? he : NULL;
}

static void check_reply(const uint8_t *req, size_t reqn, const char *r, size_t n)
{
	static int show = -1;
	if (show < 0) {
		const char *e = getenv("FUZZ_HTTP_SHOW");
		show = e != NULL && strcmp(e, "1") == 0;
	}
	if (n == 0)
		return; /* closed without an answer (e.g. nothing was sent) */
	unsigned first = status_at(r, n);
	if (first == 0)
		fprintf(stderr, "fuzz_http: reply starts with %.40s\n", r);
	FZ_CHECK(first >= 100 && first <= 599);
	/* every status line in the stream: response after response by their Content-Length,
	 * else (a chunked or closing reply, a body shorter than said) the next "\r\nHTTP/1."
	 * that makes a status line; bytes, not strings (a body may hold NULs) */
	const char *stop = r + n;
	for (const char *p = r; p != NULL && p < stop;) {
		unsigned s = status_at(p, (size_t)(stop - p));
		if (s != 0) {
			if (show) /* FUZZ_HTTP_SHOW=1: what a seed reaches, one status a line */
				fprintf(stderr, "fuzz_http: %u %.*s\n", s,
				        (int)strcspn(p + 13, "\r"), p + 13);
			/* 501 and 505 are libmicrohttpd's own answers to a transfer coding or an
			 * HTTP version it does not speak */
			if (s >= 500 && s != 501 && s != 503 && s != 505 && s != 507) {
				fprintf(stderr, "fuzz_http: %.300s\n", p);
				fz_broken(__FILE__, __LINE__, "a 5xx other than 501/503/505/507");
			}
		}
		const char *q = s != 0 ? next_response(p, stop) : NULL;
		if (q == NULL) {
			q = memmem(p + 1, (size_t)(stop - p - 1), "\r\nHTTP/1.", 9);
			if (q != NULL)
				q += 2;
		}
		p = q;
	}
	/* the first response's JSON body parses */
	/* a HEAD answer has a Content-Length and no body; servers skip empty lines before a
	 * request line (RFC 9112 2.2), so the method is after them */
	while (reqn > 0 && (*req == '\r' || *req == '\n'))
		req++, reqn--;
	const char *end = strstr(r, "\r\n\r\n");
	if (end == NULL || (reqn >= 4 && memcmp(req, "HEAD", 4) == 0))
		return;
	size_t hl = (size_t)(end - r), tl = 0, cl = 0;
	const char *type = header(r, hl, "Content-Type", &tl);
	const char *len = header(r, hl, "Content-Length", &cl);
	if (type == NULL || tl < 16 || strncmp(type, "application/json", 16) != 0 || len == NULL)
		return;
	size_t body = strtoul(len, NULL, 10);
	if (body == 0 || (size_t)(r + n - (end + 4)) < body)
		return;
	json_error_t je;
	json_t *j = json_loadb(end + 4, body, JSON_ALLOW_NUL, &je);
	if (j == NULL)
		fprintf(stderr, "fuzz_http: bad JSON (%s): %.200s\n", je.text, end + 4);
	FZ_CHECK(j != NULL);
	json_decref(j);
}

/* No spool file left in the store's tmp/ folder. */
static void check_no_temporaries(void)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/tmp", store);
	DIR *d = opendir(path);
	if (d == NULL)
		return;
	struct dirent *de;
	int left = 0;
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.') {
			fprintf(stderr, "fuzz_http: temporary left: %s\n", de->d_name);
			left++;
		}
	closedir(d);
	FZ_CHECK(left == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (srv == NULL)
		start();
	size_t n = 0;
	char *reply = exchange(data, size, &n);
	/* the connection is gone: every request it began completes */
	int64_t deadline = now_ms() + DEADLINE_MS;
	while (oxs_server_inflight(srv) > 0 && now_ms() < deadline)
		usleep(200);
	FZ_CHECK(oxs_server_inflight(srv) == 0);
	check_reply(data, size, reply, n);
	check_no_temporaries();
	free(reply);
	return 0;
}
