/*
 * request.c — what a handler does with its request besides answering it (reply.c):
 * check the caller's access (bearer tokens) and hand work to a job thread while the
 * connection waits, then resume it.  Below routes and handlers, above nothing of theirs:
 * request → route (routes.c) → handler → reply.
 */
#include "service/request.h"
#include "parser/oxp.h"
#include "render/oxr.h"
#include "service/jobs.h"
#include "service/client.h"
#include "service/quota.h"
#include "service/ratelimit.h"
#include "service/reply.h"
#include "service/router.h"
#include "service/server.h"
#include "service/sign.h"
#include "store/oxst.h"

#include <inttypes.h>
#include <netinet/in.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ---------------------------------------------------------------------------------------
 * Authorization
 */

/* True when the request carries "Authorization: Bearer T" with SHA-256(T) == md. */
static bool bearer_is(oxs_req *r, const unsigned char md[32])
{
	const char *h = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Authorization");
	if (h == NULL || strncasecmp(h, "Bearer ", 7) != 0)
		return false;
	h += 7;
	while (*h == ' ')
		h++;
	unsigned char got[32];
	unsigned int n = 0;
	if (EVP_Digest(h, strlen(h), got, &n, EVP_sha256(), NULL) != 1 || n != 32)
		return false;
	/* equal-length digests compared in constant time: neither the token's bytes nor its
	 * length leak through timing */
	return CRYPTO_memcmp(got, md, 32) == 0;
}

unsigned oxs_authorize(oxs_req *r, oxs_access access)
{
	oxs_server *srv = r->srv;
	int sig;
	switch (access) {
	case OXS_ACCESS_OPEN:
		return 0;
	case OXS_ACCESS_READ:
		sig = oxs_sign_request(r); /* a signed link decides for itself (sign.h) */
		if (sig >= 0)
			return (unsigned)sig;
		if (!srv->cfg.auth_reads && !srv->has_read_token)
			return 0;
		if (srv->has_token && bearer_is(r, srv->token_md))
			return 0;
		if (srv->has_read_token && bearer_is(r, srv->read_md))
			return 0;
		return 401;
	case OXS_ACCESS_UPLOAD:
		return !srv->has_token || bearer_is(r, srv->token_md) ? 0 : 401;
	case OXS_ACCESS_ADMIN:
		if (!srv->has_token)
			return 403;
		return bearer_is(r, srv->token_md) ? 0 : 401;
	}
	return 403;
}

bool oxs_authorize_body(oxs_req *r, const oxs_route *rt)
{
	unsigned denied = oxs_authorize(r, rt->post_access);
	if (denied == 0)
		return true;
	oxs_reply_error(r, denied, denied == 401 ? "unauthorized" : "forbidden", "",
	                "uploading needs \"Authorization: Bearer <token>\"");
	return false;
}

/* The digest of the request's bearer token when it is one of the server's: true. */
static bool bearer_valid(oxs_req *r, unsigned char md[32])
{
	oxs_server *srv = r->srv;
	if (srv->has_token && bearer_is(r, srv->token_md)) {
		memcpy(md, srv->token_md, 32);
		return true;
	}
	if (srv->has_read_token && bearer_is(r, srv->read_md)) {
		memcpy(md, srv->read_md, 32);
		return true;
	}
	return false;
}

void oxs_client_of(oxs_req *r, oxs_client *out)
{
	unsigned char md[32];
	if (bearer_valid(r, md)) {
		oxs_client_of_token(md, out);
		return;
	}
	const union MHD_ConnectionInfo *ci =
	    r->conn != NULL ? MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS)
	                    : NULL;
	oxs_ip peer;
	oxs_ip_from_sockaddr(ci != NULL ? ci->client_addr : NULL, &peer);
	const char *xff = r->srv->proxies != NULL && r->conn != NULL
	                      ? MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
	                                                    "X-Forwarded-For")
	                      : NULL;
	oxs_ip ip = oxs_client_addr(r->srv->proxies, &peer, xff);
	oxs_client_of_ip(&ip, out);
}

bool oxs_body_hold(oxs_req *r, uint64_t n)
{
	oxs_client c;
	uint64_t held = 0;
	oxs_client_of(r, &c);
	if (r->body_held != 0)
		c = r->body_client; /* one client per request, whatever it holds */
	if (oxs_quota_take(r->srv->quota, &c, OXS_Q_BODY_BYTES, n, &held)) {
		r->body_client = c;
		r->body_held += n;
		return true;
	}
	oxs_reply_error(r, 503, "body_quota", "",
	                "this client holds %" PRIu64 " bytes of request bodies in memory already; "
	                "%" PRIu64 " more would pass its --body-per-client of %" PRIu64 " (retry "
	                "once its other requests have ended)",
	                held, n, oxs_quota_limit(r->srv->quota, OXS_Q_BODY_BYTES));
	return false;
}

void oxs_body_release(oxs_req *r)
{
	if (r->body_held == 0)
		return;
	oxs_quota_give(r->srv->quota, &r->body_client, OXS_Q_BODY_BYTES, r->body_held);
	r->body_held = 0;
}

bool oxs_rate_allow(oxs_req *r)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	unsigned retry = 0;
	if (oxs_ratelimit_allow(r->srv->rl, ci ? ci->client_addr : NULL, &retry))
		return true;
	oxs_reply_error(r, 429, "rate_limited", "", "too many uploads; retry in %u s", retry);
	char ra[16];
	snprintf(ra, sizeof(ra), "%u", retry);
	if (r->reply != NULL)
		MHD_add_response_header(r->reply, "Retry-After", ra);
	return false;
}

/* ---------------------------------------------------------------------------------------
 * Jobs
 */
static void job_run(oxs_job *j)
{
	oxs_req *r = (oxs_req *)((char *)j - offsetof(oxs_req, job));
	r->work(r);
}

static void job_cancel(oxs_job *j)
{
	oxs_req *r = (oxs_req *)((char *)j - offsetof(oxs_req, job));
	oxs_reply_error(r, 503, "shutting_down", "", "the server is shutting down");
	oxs_resume(r);
}

void oxs_defer(oxs_req *r, oxs_pool *p, void (*fn)(oxs_req *r))
{
	r->work = fn;
	r->job.run = job_run;
	r->job.cancel = job_cancel;
	oxs_suspend(r);
	if (!oxs_pool_submit(p, &r->job)) {
		oxs_reply_error(r, 503, "busy", "", "the server is busy; retry later");
		oxs_resume(r);
	}
}

void oxs_suspend(oxs_req *r)
{
	MHD_suspend_connection(r->conn);
	r->suspended = true;
	atomic_fetch_add(&r->srv->waiting, 1);
}

oxs_coding oxs_body_coding(oxs_req *r, const char **name)
{
	const char *ce = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Content-Encoding");
	if (name != NULL)
		*name = ce;
	if (ce == NULL || ce[0] == '\0' || strcasecmp(ce, "identity") == 0)
		return OXS_CODING_NONE;
	return strcasecmp(ce, "gzip") == 0 || strcasecmp(ce, "x-gzip") == 0 ? OXS_CODING_GZIP
	                                                                    : OXS_CODING_OTHER;
}

void oxs_resume(oxs_req *r)
{
	MHD_resume_connection(r->conn);
}

