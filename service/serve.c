/*
 * serve.c — `onnxviz serve`: configuration, start-up, and the graceful shutdown.
 *
 * SIGTERM/SIGINT: stop accepting (new connections are refused), let running requests
 * finish within the grace period, cancel queued jobs (503), stop the daemon, remove
 * temporaries, exit 0.
 */
#include "service/serve.h"
#include "parser/oxp.h"
#include "render/oxr.h"
#include "service/artifacts.h"
#include "service/cache.h"
#include "service/clock.h"
#include "service/config.h"
#include "service/http.h"
#include "service/jobs.h"
#include "service/log.h"
#include "service/metrics.h"
#include "service/mhd.h"
#include "service/models.h"
#include "service/client.h"
#include "service/quota.h"
#include "service/ratelimit.h"
#include "service/resumable.h"
#include "service/routes.h"
#include "service/server.h"
#include "service/sign.h"
#include "store/oxst.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

extern char **environ;

static int signal_pipe[2] = {-1, -1};

static void on_signal(int sig)
{
	unsigned char c = (unsigned char)sig;
	int saved = errno;
	ssize_t w = write(signal_pipe[1], &c, 1);
	(void)w;
	errno = saved;
}

static int install_signals(void)
{
	if (pipe2(signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
		return -1;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTERM, &sa, NULL) != 0 || sigaction(SIGINT, &sa, NULL) != 0)
		return -1;
	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN); /* a file size limit shows as EFBIG (507), not a kill */
	return 0;
}

/* Write "PORT\n" to path atomically. */
static int write_port_file(const char *path, unsigned port)
{
	char tmp[600];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (f == NULL)
		return -1;
	fprintf(f, "%u\n", port);
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		(void)unlink(tmp);
		return -1;
	}
	return 0;
}

static void digest_token(const char *token, unsigned char md[32])
{
	unsigned int n = 0;
	if (EVP_Digest(token, strlen(token), md, &n, EVP_sha256(), NULL) != 1)
		memset(md, 0xff, 32);
}

/* More descriptors for connections and open renderings, up to the hard limit. */
static void raise_nofile(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max > 65536 ? 65536 : rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static void server_free(oxs_server *srv)
{
	/* work first: its running jobs may still hand layouts on */
	oxs_pool_stop(srv->work);
	oxs_pool_stop(srv->layout);
	oxs_http_stop(srv); /* no request can reach a pool after this */
	oxs_pool_free(srv->work);
	oxs_pool_free(srv->layout);
	oxs_routes_free();
	oxs_cache_free(srv->cache);
	oxs_models_free(srv->models);
	oxs_flights_free(srv->flights);
	oxs_ratelimit_free(srv->rl);
	oxs_cidrs_free(srv->proxies);
	if (srv->sign_key != NULL)
		OPENSSL_cleanse(srv->sign_key, sizeof(*srv->sign_key));
	free(srv->sign_key);
	oxst_s3_free(srv->s3);
	oxs_resumable_free(srv->rs); /* its sweep counts into the quota: before it goes */
	oxs_quota_free(srv->quota);
	if (srv->store != NULL)
		srv->store->ops->close(srv->store);
	if (srv->models_dirfd >= 0)
		close(srv->models_dirfd);
	free(srv);
}

/* Wait until no request is in flight or the deadline passes; a second signal ends the
 * wait at once. */
static void drain(oxs_server *srv, int64_t deadline_ms)
{
	struct pollfd pfd = {.fd = signal_pipe[0], .events = POLLIN};
	unsigned char sig;
	while (atomic_load(&srv->inflight) > 0 && oxs_now_ms() < deadline_ms) {
		if (poll(&pfd, 1, 20) > 0 && read(signal_pipe[0], &sig, 1) == 1) {
			oxs_log("warn", "second signal: not waiting for running requests", "");
			return;
		}
	}
}

/* Everything but the configuration, the signals and exe: the store, caches, pools,
 * routes and the daemon (listening, or waiting for oxs_server_add_connection).  Returns 0,
 * or -1 with a message in err (the caller then frees srv with server_free). */
static int server_start(oxs_server *srv, bool listen, char *err, size_t errsize)
{
	oxs_config *c = &srv->cfg;
	srv->started_ms = oxs_now_ms();
	srv->has_token = c->token[0] != '\0';
	srv->has_read_token = c->read_token[0] != '\0';
	if (srv->has_token)
		digest_token(c->token, srv->token_md);
	if (srv->has_read_token)
		digest_token(c->read_token, srv->read_md);
	/* the secrets are only needed as digests from now on */
	memset(c->token, 0, sizeof(c->token));
	memset(c->read_token, 0, sizeof(c->read_token));
	if (c->sign_secret_file[0] != '\0') { /* signed links (sign.h) */
		srv->sign_key = malloc(sizeof(*srv->sign_key));
		if (srv->sign_key == NULL) {
			snprintf(err, errsize, "out of memory");
			return -1;
		}
		char kerr[600];
		if (!oxs_sign_key_load(srv->sign_key, c->sign_secret_file, kerr, sizeof(kerr))) {
			snprintf(err, errsize, "--sign-secret-file: %s", kerr);
			return -1;
		}
	}

	oxr_worker_limits_default(&srv->wlim);
	srv->wlim.cpu_seconds = c->layout_timeout;
	srv->wlim.wall_ms = c->layout_timeout * 1000u;
	srv->wlim.memory_bytes = (size_t)c->layout_memory;
	oxr_worker_limits_default(&srv->plim);
	srv->plim.cpu_seconds = c->isolation_timeout;
	srv->plim.wall_ms = c->isolation_timeout * 1000u;
	srv->plim.memory_bytes = (size_t)c->isolation_memory;
#if defined(__SANITIZE_ADDRESS__)
#define OXS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OXS_ASAN 1
#endif
#endif
#ifdef OXS_ASAN
	/* AddressSanitizer reserves terabytes of address space: under RLIMIT_AS every layout
	 * worker would abort at start.  Sanitizer builds run workers without it. */
	srv->wlim.memory_bytes = 0;
	srv->plim.memory_bytes = 0;
	oxs_log("warn", "sanitizer build: layout and preview processes run without a memory "
	        "limit", "");
#endif

	if (!oxs_mhd_load(err, errsize) || !oxst_crypto_load(err, errsize))
		return -1;
	/* the store logs and counts its object store requests through the service's */
	static const oxst_hooks hooks = {.log = oxs_log, .request = oxs_metrics_store};
	oxst_set_hooks(&hooks);
	oxst_options so;
	oxs_config_store(c, environ, &so);
	if (oxst_open(&srv->store, &so, err, errsize) != OXST_OK)
		return -1;
	oxst_stats st;
	srv->store->ops->stats(srv->store, &st);
	char extra[300];
	snprintf(extra, sizeof(extra),
	         ",\"kind\":\"%s\",\"models\":%" PRIu64 ",\"renderings\":%" PRIu64
	         ",\"removed_temporaries\":%" PRIu64 ",\"quarantined\":%" PRIu64
	         ",\"verifying\":%s",
	         srv->store->ops->name, st.models, st.renderings, st.removed_temporaries,
	         st.quarantined, st.verifying ? "true" : "false");
	oxs_log("info", "store opened", extra);
	const uint64_t qlim[OXS_Q_COUNT] = {
	    [OXS_Q_UPLOADS] = c->uploads_per_client,
	    [OXS_Q_BODY_BYTES] = c->body_per_client,
	    [OXS_Q_OVERLAYS] = c->overlays_per_client,
	};
	srv->quota = oxs_quota_new(qlim);
	if (srv->quota == NULL) {
		snprintf(err, errsize, "out of memory at start");
		return -1;
	}
	/* after the quota: the uploads in progress count against their owners from the start */
	srv->rs = oxs_resumable_open(c, srv->store, srv->quota, err, errsize);
	if (srv->rs == NULL)
		return -1;

	if (c->models_dir[0] != '\0') {
		srv->models_dirfd = open(c->models_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (srv->models_dirfd < 0) {
			snprintf(err, errsize, "--models-dir %s: %s", c->models_dir, strerror(errno));
			return -1;
		}
	}
	if (c->source_buckets[0] != '\0') {
		/* models registered by reference are read with the AWS_* configuration */
		oxst_s3_config sc;
		if (!oxst_s3_config_env(&sc, environ, c->s3_timeout, err, errsize) ||
		    !oxst_s3_load(err, errsize))
			return -1;
		srv->s3 = oxst_s3_new(&sc);
		OPENSSL_cleanse(&sc, sizeof(sc));
		if (srv->s3 == NULL) {
			snprintf(err, errsize, "out of memory (S3 client)");
			return -1;
		}
	}
	srv->cache = oxs_cache_new(c->memory_cache, 65536);
	srv->models = oxs_models_new(c->model_cache, c->model_cache_bytes, c->model_memory);
	srv->flights = oxs_flights_new();
	srv->rl = oxs_ratelimit_new(c->upload_rate);
	if (!oxs_cidrs_parse(c->trusted_proxies, &srv->proxies, err, errsize))
		return -1;
	srv->work = oxs_pool_new("work", c->workers, c->work_queue);
	srv->layout = oxs_pool_new("layout", c->layout_workers, c->layout_queue);
	if (srv->cache == NULL || srv->models == NULL || srv->flights == NULL ||
	    (c->upload_rate != 0 && srv->rl == NULL) || srv->work == NULL || srv->layout == NULL ||
	    srv->quota == NULL || !oxs_routes_init()) {
		snprintf(err, errsize, "out of memory or threads at start");
		return -1;
	}
	return oxs_http_start(srv, listen, err, errsize);
}

int oxs_server_open(oxs_server **out, const oxs_config *cfg, const char *exe, char *err,
                    size_t errsize)
{
	oxs_server *srv = calloc(1, sizeof(*srv));
	if (srv == NULL) {
		snprintf(err, errsize, "out of memory");
		return -1;
	}
	srv->models_dirfd = -1;
	srv->cfg = *cfg;
	snprintf(srv->exe, sizeof(srv->exe), "%s", exe);
	if (server_start(srv, false, err, errsize) != 0) {
		server_free(srv);
		return -1;
	}
	*out = srv;
	return 0;
}

int oxs_server_add_connection(oxs_server *srv, int fd)
{
	/* a made-up peer: the per-address limits and logs need one */
	struct sockaddr_in peer;
	memset(&peer, 0, sizeof(peer));
	peer.sin_family = AF_INET;
	peer.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	peer.sin_port = htons(1);
	if (MHD_add_connection(srv->daemon, fd, (const struct sockaddr *)&peer, sizeof(peer)) !=
	    MHD_YES) {
		close(fd);
		return -1;
	}
	return 0;
}

int oxs_server_inflight(oxs_server *srv)
{
	return atomic_load(&srv->inflight);
}

int oxs_server_waiting(oxs_server *srv)
{
	return atomic_load(&srv->waiting);
}

void oxs_server_close(oxs_server *srv)
{
	if (srv != NULL)
		server_free(srv);
}

int oxs_serve_main(int argc, char **argv)
{
	oxs_server *srv = calloc(1, sizeof(*srv));
	if (srv == NULL) {
		fprintf(stderr, "onnxviz serve: out of memory\n");
		return 1;
	}
	srv->models_dirfd = -1;
	char err[600];
	oxs_config_default(&srv->cfg);
	if (oxs_config_parse(&srv->cfg, argc, argv, environ, err, sizeof(err)) != 0) {
		fprintf(stderr, "onnxviz serve: %s\n", err);
		free(srv);
		return 2;
	}
	oxs_config_hide_secrets(argc, argv);
	oxs_config *c = &srv->cfg;
	if (c->help) {
		oxs_config_usage(stdout);
		free(srv);
		return 0;
	}
	if (install_signals() != 0) {
		fprintf(stderr, "onnxviz serve: cannot install signal handlers\n");
		free(srv);
		return 1;
	}
	raise_nofile();
	ssize_t n = readlink("/proc/self/exe", srv->exe, sizeof(srv->exe) - 1);
	if (n <= 0) {
		fprintf(stderr, "onnxviz serve: cannot find its own binary (/proc/self/exe)\n");
		free(srv);
		return 1;
	}
	srv->exe[n] = '\0';
	if (server_start(srv, true, err, sizeof(err)) != 0) {
		fprintf(stderr, "onnxviz serve: %s\n", err);
		server_free(srv);
		return 1;
	}
	unsigned port = oxs_http_port(srv);
	if (c->port_file[0] != '\0' && write_port_file(c->port_file, port) != 0) {
		fprintf(stderr, "onnxviz serve: cannot write --port-file %s: %s\n", c->port_file,
		        strerror(errno));
		server_free(srv);
		return 1;
	}
	bool v6 = strchr(c->bind, ':') != NULL;
	fprintf(stderr, "listening on http://%s%s%s:%u\n", v6 ? "[" : "", c->bind, v6 ? "]" : "",
	        port);
	fflush(stderr);

	/* wait for a signal */
	struct pollfd pfd = {.fd = signal_pipe[0], .events = POLLIN};
	unsigned char sig = 0;
	for (;;) {
		int pr = poll(&pfd, 1, -1);
		if (pr > 0 && read(signal_pipe[0], &sig, 1) == 1)
			break;
		if (pr < 0 && errno != EINTR)
			break;
	}
	char extra[300];
	snprintf(extra, sizeof(extra), ",\"signal\":%d,\"in_flight\":%d,\"grace_s\":%u", sig,
	         atomic_load(&srv->inflight), c->grace);
	oxs_log("info", "stopping", extra);
	atomic_store(&srv->stopping, true);
	oxs_http_quiesce(srv);
	drain(srv, oxs_now_ms() + (int64_t)c->grace * 1000);
	/* past the grace period: queued jobs are answered 503, running ones finish */
	oxs_pool_stop(srv->work);
	oxs_pool_stop(srv->layout);
	drain(srv, oxs_now_ms() + 2000);
	int left = atomic_load(&srv->inflight);
	if (c->port_file[0] != '\0')
		(void)unlink(c->port_file);
	server_free(srv);
	snprintf(extra, sizeof(extra), ",\"cut_requests\":%d", left);
	oxs_log("info", "stopped", extra);
	return 0;
}
