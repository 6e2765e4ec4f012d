/*
 * http.c — the libmicrohttpd glue: daemon options and the life of a request (what a
 * handler does with its request — authorization, work on job threads — is request.c's;
 * the replies are built by reply.c).
 *
 * A request object is made in the URI-log callback (first thing libmicrohttpd reports),
 * routed on the handler's first call, and answered on its final call (after the body),
 * or later: the handler suspends the connection, a job thread computes the reply and
 * resumes it, and libmicrohttpd calls the handler once more to queue it.  Replies are
 * only queued on the final call so that keep-alive connections stay open (libmicrohttpd
 * closes a connection whose reply is queued before the body was read, which is what the
 * early rejections — 401, 413, 415, 429, ambiguous lengths — want).
 */
#include "service/http.h"
#include "parser/oxp.h"
#include "render/oxr.h"
#include "service/art.h"
#include "service/cache.h"
#include "service/clock.h"
#include "service/config.h"
#include "service/deadline.h"
#include "service/gzip.h"
#include "service/heat_svc.h"
#include "service/host.h"
#include "service/log.h"
#include "service/metrics.h"
#include "service/reply.h"
#include "service/request.h"
#include "service/resumable.h"
#include "service/router.h"
#include "service/routes.h"
#include "service/server.h"
#include "service/sign.h"
#include "service/upload.h"
#include "store/oxst.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static bool has_reply(const oxs_req *r)
{
	return r->reply != NULL || r->shared != NULL;
}

/* ---------------------------------------------------------------------------------------
 * Request life
 */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
	oxs_server *srv = cls;
	oxs_req *r = calloc(1, sizeof(*r));
	if (r == NULL)
		return NULL;
	r->srv = srv;
	r->conn = conn;
	r->start_ns = oxs_now_ns();
	r->route = -1;
	r->file_fd = r->dir_fd = -1;
	const char *q = uri ? strchr(uri, '?') : NULL;
	if (q != NULL) {
		size_t n = strlen(q + 1);
		if (n >= sizeof(r->query))
			r->query_too_long = true;
		else
			memcpy(r->query, q + 1, n + 1);
	}
	atomic_fetch_add(&srv->inflight, 1);
	return r;
}

static void log_request(oxs_req *r, uint64_t ns, bool complete)
{
	char extra[512];
	snprintf(extra, sizeof(extra),
	         ",\"method\":\"%s\",\"route\":\"%s\",\"status\":%u,\"bytes\":%" PRIu64
	         ",\"ms\":%.3f%s%s%s%s",
	         r->method_name ? r->method_name : "-", oxs_route_pattern(r->route), r->status,
	         r->reply_bytes, (double)ns / 1e6, r->id[0] ? ",\"id\":\"" : "", r->id,
	         r->id[0] ? "\"" : "", complete ? "" : ",\"aborted\":true");
	oxs_log("info", "request", extra);
}

/* The request no longer waits for a job (its reply is sent, or it completes). */
static void not_waiting(oxs_req *r)
{
	if (r->suspended) {
		r->suspended = false;
		atomic_fetch_sub(&r->srv->waiting, 1);
	}
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
	oxs_server *srv = cls;
	oxs_req *r = *con_cls;
	/* keep-alive: the next request's headers have --timeout seconds from now */
	oxs_deadlines_request_done(srv->deadlines, conn);
	if (r == NULL)
		return;
	*con_cls = NULL;
	uint64_t ns = oxs_now_ns() - r->start_ns;
	if (!r->queued)
		r->status = 0; /* the client went away before an answer */
	oxs_metrics_request(r->route, r->status, ns);
	if (srv->cfg.log_requests)
		log_request(r, ns, toe == MHD_REQUEST_TERMINATED_COMPLETED_OK);
	if (r->up != NULL)
		oxs_upload_cleanup(r);
	if (r->rp != NULL)
		oxs_resumable_cleanup(r);
	not_waiting(r);
	oxs_body_release(r);
	oxs_body_free(r);
	oxs_jbody_free(r);
	if (r->file_fd >= 0)
		close(r->file_fd);
	if (r->dir_fd >= 0)
		close(r->dir_fd);
	oxs_reply_clear(r);
	free(r);
	atomic_fetch_sub(&srv->inflight, 1);
}

static enum MHD_Result send_reply(oxs_req *r)
{
	enum MHD_Result rc;
	not_waiting(r);
	r->queued = true;
	if (r->rp != NULL)
		oxs_resumable_replied(r);
	if (r->shared != NULL) {
		rc = MHD_queue_response(r->conn, r->status, r->shared);
		oxs_cache_release(r->reply_entry);
		r->reply_entry = NULL;
		r->shared = NULL;
	} else {
		rc = MHD_queue_response(r->conn, r->status, r->reply);
		MHD_destroy_response(r->reply);
		r->reply = NULL;
	}
	return rc;
}

static unsigned method_bit(const char *m)
{
	if (strcmp(m, "GET") == 0)
		return OXS_M_GET;
	if (strcmp(m, "HEAD") == 0)
		return OXS_M_HEAD;
	if (strcmp(m, "POST") == 0)
		return OXS_M_POST;
	if (strcmp(m, "DELETE") == 0)
		return OXS_M_DELETE;
	if (strcmp(m, "PATCH") == 0)
		return OXS_M_PATCH;
	return OXS_M_OTHER;
}

/* Bytes of request headers accepted in total (names and values).  libmicrohttpd's own
 * bound is the connection's memory (--conn-memory, 128 KiB by default, sized for upload
 * buffers); headers get much less, as in common servers (8-32 KiB). */
#define MAX_HEADER_BYTES (32u << 10)

typedef struct length_headers {
	unsigned content_length, transfer_encoding, host;
	bool chunked;
	size_t bytes; /* all headers, names and values */
} length_headers;

static enum MHD_Result count_lengths(void *cls, enum MHD_ValueKind kind, const char *key,
                                     const char *value)
{
	length_headers *lh = cls;
	(void)kind;
	lh->bytes += strlen(key) + (value != NULL ? strlen(value) : 0) + 4;
	if (strcasecmp(key, "Content-Length") == 0)
		lh->content_length++;
	else if (strcasecmp(key, "Host") == 0)
		lh->host++;
	else if (strcasecmp(key, "Transfer-Encoding") == 0) {
		lh->transfer_encoding++;
		lh->chunked = value != NULL && strcasecmp(value, "chunked") == 0;
	}
	return MHD_YES;
}

/* Allowed methods of a route as an Allow header value: "GET HEAD" -> "GET, HEAD". */
static void allow_header(const oxs_route *rt, char *out, size_t size)
{
	size_t o = 0;
	for (const char *p = rt->methods; *p != '\0' && o + 3 < size; p++) {
		if (*p == ' ') {
			out[o++] = ',';
			out[o++] = ' ';
		} else {
			out[o++] = *p;
		}
	}
	out[o] = '\0';
}

static oxs_access access_for(const oxs_route *rt, unsigned m)
{
	if (m == OXS_M_POST || m == OXS_M_PATCH)
		return rt->post_access;
	if (m == OXS_M_DELETE)
		return rt->del_access;
	return rt->get_access;
}

static oxs_handler handler_for(int route, const oxs_route *rt, unsigned m)
{
	if (m == OXS_M_PATCH && strstr(rt->methods, "PATCH") != NULL)
		return oxs_resumable_patch_end; /* PATCH is the resumable uploads' only */
	return oxs_route_handler(route, m);
}

static bool method_allowed(int route, const oxs_route *rt, unsigned m)
{
	if (m == OXS_M_POST)
		return oxs_route_handler(route, m) != NULL || rt->upload;
	return handler_for(route, rt, m) != NULL;
}

static void reply_auth(oxs_req *r, unsigned status)
{
	if (has_reply(r))
		return; /* the check answered with its own reason (a signed link's, sign.c) */
	if (status == 401)
		oxs_reply_error(r, 401, "unauthorized", "",
		                "this request needs \"Authorization: Bearer <token>\"");
	else
		oxs_reply_error(r, 403, "forbidden", "",
		                "deleting is disabled: the server runs without a token (ONNXVIZ_TOKEN)");
}

static bool reply_unrouted(oxs_req *r);

/* The first call: route, and reject early what must not have its body read. */
static void first_call(oxs_req *r, const char *url, const char *method)
{
	r->started = true;
	r->url = url;
	r->method = method_bit(method);
	r->method_name = r->method == OXS_M_OTHER ? "OTHER" : method;
	length_headers lh = {0, 0, 0, false, 0};
	MHD_get_connection_values(r->conn, MHD_HEADER_KIND, count_lengths, &lh);
	const char *cl = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Content-Length");
	r->has_body = lh.transfer_encoding > 0 || (cl != NULL && strcmp(cl, "0") != 0);
	const char *inm = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "If-None-Match");
	if (inm != NULL && strlen(inm) < sizeof(r->inm))
		memcpy(r->inm, inm, strlen(inm) + 1);
	r->gzip_ok = oxs_gzip_accepted(
	    MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Accept-Encoding"));
	r->route = oxs_route_match(url, r->id, r->param, sizeof(r->param), r->fpath,
	                           sizeof(r->fpath));

	if (lh.bytes > MAX_HEADER_BYTES) {
		oxs_reply_error(r, 431, "headers_too_large", "",
		                "the request headers exceed %u bytes", MAX_HEADER_BYTES);
		if (r->reply != NULL)
			MHD_add_response_header(r->reply, "Connection", "close");
		return;
	}
	/* request smuggling: libmicrohttpd 0.9.75 takes the first of several Content-Length
	 * headers; refuse anything ambiguous and close the connection */
	if (lh.content_length > 1 || lh.transfer_encoding > 1 ||
	    (lh.transfer_encoding > 0 && (lh.content_length > 0 || !lh.chunked))) {
		oxs_reply_error(r, 400, "ambiguous_length", "",
		                "more than one Content-Length, or Transfer-Encoding with "
		                "Content-Length, or a transfer coding other than chunked");
		if (r->reply != NULL)
			MHD_add_response_header(r->reply, "Connection", "close");
		return;
	}
	/* DNS rebinding (host.c): a page whose name was made to resolve to this server
	 * names itself in Host; one Host at most (RFC 9112 3.2) */
	const char *host = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Host");
	if (lh.host > 1 ||
	    !oxs_host_allowed(host, r->srv->cfg.bind, r->srv->cfg.allowed_hosts)) {
		oxs_reply_error(r, 403, "bad_host", "",
		                "this server does not answer to the name '%.100s' (Host); a server "
		                "bound to loopback answers to localhost and loopback addresses, and "
		                "to the names given with --allowed-hosts",
		                lh.host > 1 ? "(several Host headers)" : host);
		return;
	}
	const oxs_route *rt = r->route >= 0 ? oxs_route_at(r->route) : NULL;
	if (rt != NULL && rt->upload && r->method == OXS_M_POST) {
		oxs_upload_begin(r);
		return;
	}
	/* only an upload decodes a Content-Encoding (gzip: upload.c); a part is stored and
	 * hashed as sent, an overlay read as it is, so a coded body there would be misread */
	if (rt != NULL && r->has_body && oxs_body_coding(r, NULL) != OXS_CODING_NONE) {
		oxs_reply_error(r, 415, "unsupported_encoding", "",
		                "this request's body goes as it is, without a Content-Encoding");
		return;
	}
	if (rt != NULL && r->method == OXS_M_PATCH && handler_for(r->route, rt, r->method) != NULL) {
		oxs_resumable_patch_begin(r);
		return;
	}
	/* a POST whose route reads a small body (overlays): spooled to a file, bounded */
	if (rt != NULL && rt->small_body && r->method == OXS_M_POST) {
		if (!(r->route == OXS_R_SIGN ? oxs_jbody_begin(r) : oxs_body_begin(r)))
			oxs_reply_error(r, 503, "out_of_memory", "", "out of memory");
		return;
	}
	/* no other request takes a body: answer now rather than read one */
	if (r->has_body && !reply_unrouted(r))
		oxs_reply_error(r, 413, "body_not_allowed", "", "this request takes no body");
}

/* 404 for no route, 405 for a method the route does not have; false when neither. */
static bool reply_unrouted(oxs_req *r)
{
	if (r->route < 0) {
		oxs_reply_error(r, 404, "not_found", "", "no such resource");
		return true;
	}
	const oxs_route *rt = oxs_route_at(r->route);
	if (method_allowed(r->route, rt, r->method))
		return false;
	char allow[64];
	allow_header(rt, allow, sizeof(allow));
	oxs_reply_error(r, 405, "method_not_allowed", "", "allowed methods: %s", allow);
	if (r->reply != NULL)
		MHD_add_response_header(r->reply, "Allow", allow);
	return true;
}

/* A structure whose whole model has arrived (resumable.c): its GET/HEAD URLs answer
 * 307 to the same URL of the whole model.  False when r is not such a request. */
static bool redirect_moved(oxs_req *r, const oxs_route *rt, const char *url)
{
	char full[OXST_ID_LEN + 1];
	if ((r->method != OXS_M_GET && r->method != OXS_M_HEAD) || r->id[0] == '\0' ||
	    strncmp(rt->pattern, "/models/{id}", 12) != 0 || strncmp(url, "/models/", 8) != 0 ||
	    !oxs_resumable_moved(r->srv->rs, r->id, full))
		return false;
	oxr_buf loc;
	oxr_buf_init(&loc, 256);
	oxr_buf_printf(&loc, "/models/%s", full);
	oxs_url_path(&loc, url + 8 + OXST_ID_LEN);
	if (r->query[0] != '\0')
		oxr_buf_printf(&loc, "?%s", r->query);
	if (loc.failed) {
		oxr_buf_free(&loc);
		return false;
	}
	oxs_reply_error(r, 307, "moved", "", "the whole model of this structure has arrived: %s",
	                full);
	if (r->reply != NULL)
		MHD_add_response_header(r->reply, "Location", loc.data);
	oxr_buf_free(&loc);
	return true;
}

/* The final call: everything but uploads is answered here. */
static void final_call(oxs_req *r, const char *url)
{
	if (reply_unrouted(r))
		return;
	const oxs_route *rt = oxs_route_at(r->route);
	if (r->query_too_long) {
		oxs_reply_error(r, 414, "uri_too_long", "", "the query string is too long");
		return;
	}
	unsigned denied = oxs_authorize(r, access_for(rt, r->method));
	if (denied != 0) {
		reply_auth(r, denied);
		return;
	}
	if (redirect_moved(r, rt, url))
		return;
	if (rt->upload && r->method == OXS_M_POST)
		oxs_upload_end(r);
	else
		handler_for(r->route, rt, r->method)(r);
}

/* The next n bytes of the request's body to its reader; *left gets those not taken now
 * (0 unless a gzip body's slice of decoding is done: libmicrohttpd gives the rest again
 * once the thread has been round its other connections). */
static enum MHD_Result body_data(oxs_req *r, const char *data, size_t n, size_t *left)
{
	if (r->up != NULL) {
		size_t used = n;
		if (!oxs_upload_data(r, data, n, &used))
			return MHD_NO;
		if (used < n) {
			/* a resumed connection is processed on the thread's next pass, bytes left in
			 * its buffer with it; without the suspension they would wait for the
			 * client's next bytes, which may never come */
			*left = n - used;
			MHD_suspend_connection(r->conn);
			MHD_resume_connection(r->conn);
		}
		return MHD_YES;
	}
	if (r->rp != NULL)
		return oxs_resumable_patch_data(r, data, n) ? MHD_YES : MHD_NO;
	if (r->body != NULL)
		return oxs_body_data(r, data, n) ? MHD_YES : MHD_NO;
	if (r->jbody != NULL)
		oxr_buf_append(r->jbody, data, n); /* past its bound: failed, answered 413 */
	return MHD_YES; /* else not reached: bodies elsewhere are refused early */
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *conn, const char *url,
                                 const char *method, const char *version,
                                 const char *upload_data, size_t *upload_data_size,
                                 void **con_cls)
{
	(void)cls, (void)version;
	oxs_req *r = *con_cls;
	if (r == NULL)
		return MHD_NO; /* no memory for the request object */
	oxs_deadlines *dl = r->srv->deadlines;
	if (!r->started) {
		oxs_deadlines_headers_done(dl, conn);
		first_call(r, url, method);
		if (has_reply(r))
			return send_reply(r); /* early: libmicrohttpd skips the body and closes */
		if (r->has_body)
			oxs_deadlines_body_start(dl, conn); /* --min-body-rate from now */
		return MHD_YES;
	}
	if (*upload_data_size != 0) {
		size_t n = *upload_data_size;
		*upload_data_size = 0;
		enum MHD_Result rc = body_data(r, upload_data, n, upload_data_size);
		oxs_deadlines_body(dl, conn, n - *upload_data_size);
		return rc;
	}
	if (r->has_body)
		oxs_deadlines_body_done(dl, conn);
	if (has_reply(r))
		return send_reply(r);
	if (r->suspended)
		return MHD_YES; /* woken without a reply: wait for the job */
	(void)conn;
	final_call(r, url);
	if (r->suspended)
		return MHD_YES; /* a job answers; do not touch the reply meanwhile */
	if (has_reply(r))
		return send_reply(r);
	oxs_reply_error(r, 500, "internal", "", "no reply");
	return send_reply(r);
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
	oxs_server *srv = cls;
	oxs_deadlines_notify(srv->deadlines, conn, socket_context, toe);
}

/* libmicrohttpd's messages: its own format strings, hence the pragma. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	char msg[512];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	size_t n = strlen(msg);
	while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
		msg[--n] = '\0';
	oxs_log("warn", msg, ",\"source\":\"libmicrohttpd\"");
}
#pragma GCC diagnostic pop

/* ---------------------------------------------------------------------------------------
 * Daemon
 */
int oxs_http_start(oxs_server *srv, bool listen, char *err, size_t errsize)
{
	const oxs_config *c = &srv->cfg;
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof(ss));
	/* poll, not epoll: libmicrohttpd 0.9.75's edge-triggered epoll misses a client's close
	 * in the middle of a body larger than its read buffer until the idle timeout (30 s
	 * holding a resumable part busy after a page reload); poll sees it at once
	 * (docs/decisions.md 80) */
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_ALLOW_SUSPEND_RESUME |
	                 MHD_USE_ERROR_LOG;
	srv->oom_reply = oxs_oom_response();
	if (srv->oom_reply == NULL) {
		snprintf(err, errsize, "out of memory");
		return -1;
	}
	srv->deadlines = oxs_deadlines_new(c->timeout, c->min_body_rate);
	if (srv->deadlines == NULL) {
		snprintf(err, errsize, "cannot start the header-deadline thread");
		return -1;
	}
	/* options of both kinds of daemon; callbacks give their closure as ptr_value */
	struct MHD_OptionItem common[] = {
	    {MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)on_mhd_log, srv},
	    {MHD_OPTION_CONNECTION_LIMIT, (intptr_t)c->max_connections, NULL},
	    {MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)c->timeout, NULL},
	    {MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)c->conn_memory, NULL},
	    {MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)on_uri, srv},
	    {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, srv},
	    {MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, srv},
	    {MHD_OPTION_END, 0, NULL},
	};
	if (!listen) {
		/* connections come from oxs_server_add_connection (tests, fuzzing) */
		flags |= MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ITC;
		srv->daemon = MHD_start_daemon(flags, 0, NULL, NULL, on_access, srv, MHD_OPTION_ARRAY,
		                               common, MHD_OPTION_END);
		if (srv->daemon == NULL) {
			snprintf(err, errsize, "cannot start the HTTP daemon");
			return -1;
		}
		return 0;
	}
	struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	if (inet_pton(AF_INET, c->bind, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)c->port);
	} else if (inet_pton(AF_INET6, c->bind, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)c->port);
		flags |= MHD_USE_IPv6;
	} else {
		snprintf(err, errsize, "--bind: '%s' is not a numeric IPv4 or IPv6 address", c->bind);
		return -1;
	}
	srv->daemon = MHD_start_daemon(
	    flags, (uint16_t)c->port, NULL, NULL, on_access, srv, MHD_OPTION_ARRAY, common,
	    MHD_OPTION_SOCK_ADDR, &ss, MHD_OPTION_THREAD_POOL_SIZE, (unsigned)c->threads,
	    MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)c->max_per_ip,
	    MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned)1024, MHD_OPTION_END);
	if (srv->daemon == NULL) {
		snprintf(err, errsize, "cannot listen on %s port %u: %s", c->bind, c->port,
		         strerror(errno));
		return -1;
	}
	return 0;
}

unsigned oxs_http_port(oxs_server *srv)
{
	const union MHD_DaemonInfo *info =
	    MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_BIND_PORT);
	return info ? info->port : 0;
}

void oxs_http_quiesce(oxs_server *srv)
{
	MHD_socket fd = MHD_quiesce_daemon(srv->daemon);
	/* libmicrohttpd no longer uses the listening socket after quiescing (it leaves it
	 * to us); closing it now makes new connections fail fast instead of hanging */
	if (fd != MHD_INVALID_SOCKET)
		close(fd);
}

void oxs_http_stop(oxs_server *srv)
{
	oxs_deadlines_stop(srv->deadlines);
	if (srv->daemon != NULL)
		MHD_stop_daemon(srv->daemon);
	srv->daemon = NULL;
	oxs_deadlines_free(srv->deadlines);
	srv->deadlines = NULL;
	if (srv->oom_reply != NULL)
		MHD_destroy_response(srv->oom_reply);
	srv->oom_reply = NULL;
}
