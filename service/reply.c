/*
 * reply.c — small helpers every part of the service answers with: the common security
 * headers (nosniff, the API and SVG content security policies), content-addressed
 * caching headers, JSON error bodies, replies set on a request, and the clock and hash
 * helpers behind ETags.
 */
#include "service/reply.h"
#include "parser/oxp.h"
#include "render/oxr.h"
#include "service/cache.h"
#include "service/gzip.h"
#include "service/query.h"
#include "service/server.h"
#include "store/oxst.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char API_CSP[] =
    "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
static const char SVG_CSP[] =
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'none'; object-src 'none'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'; sandbox";

/* ---------------------------------------------------------------------------------------
 * Responses
 */
void oxs_response_common(struct MHD_Response *resp, const char *type)
{
	if (type != NULL)
		MHD_add_response_header(resp, "Content-Type", type);
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
	bool svg = type != NULL && strncmp(type, "image/svg+xml", 13) == 0;
	MHD_add_response_header(resp, "Content-Security-Policy", svg ? SVG_CSP : API_CSP);
}

bool oxs_reads_private(const oxs_server *srv)
{
	return srv->cfg.auth_reads || srv->has_read_token;
}

void oxs_response_cache(struct MHD_Response *resp, const oxs_server *srv, bool immutable)
{
	/* RFC 9111 3.5: a shared cache may give a response stored for a request with a token
	 * to one without when it says public; private keeps it in the browser that asked */
	bool priv = oxs_reads_private(srv);
	if (immutable)
		MHD_add_response_header(resp, "Cache-Control",
		                        priv ? "private, max-age=31536000, immutable"
		                             : "public, max-age=31536000, immutable");
	else
		MHD_add_response_header(resp, "Cache-Control", priv ? "private, no-cache" : "no-cache");
	if (priv)
		MHD_add_response_header(resp, "Vary", "Authorization");
}

void oxs_response_immutable(struct MHD_Response *resp, const oxs_server *srv,
                            const char *etag, const char *type, const char *id, const char *ext)
{
	bool svg = strcmp(ext, "svg") == 0;
	if (type != NULL)
		MHD_add_response_header(resp, "Content-Type", type);
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(resp, "Content-Security-Policy", svg ? SVG_CSP : API_CSP);
	MHD_add_response_header(resp, "ETag", etag);
	oxs_response_cache(resp, srv, true);
	oxs_response_disposition(resp, id, ext);
}

void oxs_response_disposition(struct MHD_Response *resp, const char *id, const char *ext)
{
	if (id != NULL && id[0] != '\0' && strcmp(ext, "json") != 0) {
		/* built from the id only, never from model data */
		char cd[128];
		snprintf(cd, sizeof(cd), "%s; filename=\"%.64s.%.8s\"",
		         strcmp(ext, "onnx") == 0 || strcmp(ext, "npy") == 0 ? "attachment" : "inline",
		         id, ext);
		MHD_add_response_header(resp, "Content-Disposition", cd);
	}
}

struct MHD_Response *oxs_response_copy(const void *data, size_t len, const char *type)
{
	struct MHD_Response *resp =
	    MHD_create_response_from_buffer(len, (void *)data, MHD_RESPMEM_MUST_COPY);
	if (resp != NULL)
		oxs_response_common(resp, type);
	return resp;
}

void oxs_reply_clear(oxs_req *r)
{
	if (r->reply != NULL)
		MHD_destroy_response(r->reply);
	if (r->reply_entry != NULL)
		oxs_cache_release(r->reply_entry);
	r->reply = NULL;
	r->reply_entry = NULL;
	r->shared = NULL;
}

void oxs_reply(oxs_req *r, unsigned status, struct MHD_Response *resp, uint64_t bytes)
{
	oxs_reply_clear(r);
	r->status = status;
	r->reply = resp;
	r->reply_bytes = bytes;
}

void oxs_reply_shared(oxs_req *r, unsigned status, struct MHD_Response *resp, uint64_t bytes)
{
	oxs_reply_clear(r);
	r->status = status;
	r->shared = resp;
	r->reply_bytes = bytes;
}

/* The headers of every JSON error: never cached, and what its status asks for. */
static void error_headers(struct MHD_Response *resp, unsigned status)
{
	oxs_response_common(resp, "application/json");
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	if (status == 401)
		MHD_add_response_header(resp, "WWW-Authenticate", "Bearer realm=\"onnxviz\"");
	if (status == 503)
		MHD_add_response_header(resp, "Retry-After", "5");
}

struct MHD_Response *oxs_error_response(unsigned status, const char *code, const char *msg,
                                        const char *extra, const char **body, size_t *len)
{
	oxr_buf b;
	oxr_buf_init(&b, 1 << 16);
	oxr_buf_printf(&b, "{\"error\":{\"code\":");
	oxr_json_string(&b, code, strlen(code));
	oxr_buf_printf(&b, ",\"message\":");
	oxr_json_string(&b, msg, strlen(msg));
	oxr_buf_printf(&b, ",\"status\":%u%s}}\n", status, extra ? extra : "");
	size_t n = 0;
	char *data = b.failed ? NULL : oxr_buf_steal(&b, &n);
	oxr_buf_free(&b);
	struct MHD_Response *resp =
	    data ? MHD_create_response_from_buffer_with_free_callback(n, data, free) : NULL;
	if (resp == NULL) {
		free(data);
		return NULL;
	}
	error_headers(resp, status);
	if (body != NULL)
		*body = data;
	*len = n;
	return resp;
}

#define OOM_BODY "{\"error\":{\"code\":\"out_of_memory\",\"message\":\"out of memory\",\"status\":503}}\n"

struct MHD_Response *oxs_oom_response(void)
{
	static const char body[] = OOM_BODY;
	struct MHD_Response *resp =
	    MHD_create_response_from_buffer(sizeof(body) - 1, (void *)body, MHD_RESPMEM_PERSISTENT);
	if (resp == NULL)
		return NULL;
	error_headers(resp, 503);
	return resp;
}

void oxs_reply_error(oxs_req *r, unsigned status, const char *code, const char *extra,
                     const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	size_t len = 0;
	struct MHD_Response *resp = oxs_error_response(status, code, msg, extra, NULL, &len);
	if (resp == NULL) {
		/* no memory for an error: the answer made at the start, which needs none (a
		 * job's request left with no answer would wait for its connection's timeout) */
		oxs_reply_shared(r, 503, r->srv->oom_reply, sizeof(OOM_BODY) - 1);
		return;
	}
	oxs_reply(r, status, resp, len);
}

struct MHD_Response *oxs_response_buf(oxs_req *r, oxr_buf *b, const char *type, bool gzip,
                                      size_t *len)
{
	char *data = NULL;
	*len = 0;
	if (b->failed)
		oxr_buf_free(b); /* over its bound or out of memory: what it holds is no answer */
	else
		data = oxr_buf_steal(b, len);
	bool worth = gzip && data != NULL && oxs_gzip_worth(type, *len);
	char *z = NULL;
	size_t zlen = 0;
	if (worth && r->gzip_ok && oxs_gzip(data, *len, &z, &zlen)) {
		free(data);
		data = z;
		*len = zlen;
	}
	struct MHD_Response *resp =
	    data ? MHD_create_response_from_buffer_with_free_callback(*len, data, free) : NULL;
	if (resp == NULL) {
		free(data);
		oxs_reply_error(r, 503, "out_of_memory", "", "out of memory");
		return NULL;
	}
	if (z != NULL)
		MHD_add_response_header(resp, "Content-Encoding", "gzip");
	if (worth)
		MHD_add_response_header(resp, "Vary", "Accept-Encoding");
	return resp;
}

void oxs_reply_text(oxs_req *r, unsigned status, oxr_buf *b, const char *type)
{
	size_t len = 0;
	/* not cached (no-store): gzip'd here, per request, when the client takes it */
	struct MHD_Response *resp = oxs_response_buf(r, b, type, true, &len);
	if (resp == NULL)
		return;
	oxs_response_common(resp, type);
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	oxs_reply(r, status, resp, len);
}

void oxs_reply_json(oxs_req *r, unsigned status, oxr_buf *b)
{
	oxs_reply_text(r, status, b, "application/json");
}

/* Copy one header to the response cls, all but ETag (each variant has its own). */
static enum MHD_Result copy_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value)
{
	(void)kind;
	if (strcasecmp(key, "ETag") != 0)
		MHD_add_response_header(cls, key, value);
	return MHD_YES;
}

bool oxs_gzip_etag(const char *etag, char out[48])
{
	size_t elen = strlen(etag);
	if (elen < 2 || elen + 3 >= 48 || etag[elen - 1] != '"')
		return false;
	snprintf(out, 48, "%.*s-gz\"", (int)(elen - 1), etag);
	return true;
}

bool oxs_response_gzip(struct MHD_Response *plain, struct MHD_Response *plain_nm,
                       const char *etag, const void *data, size_t len, const char *type,
                       struct MHD_Response **gz, struct MHD_Response **gz_nm,
                       char gz_etag[48], size_t *gz_len)
{
	if (!oxs_gzip_worth(type, len) || !oxs_gzip_etag(etag, gz_etag))
		return false;
	char *z = NULL;
	size_t zlen = 0;
	if (!oxs_gzip(data, len, &z, &zlen))
		return false;
	struct MHD_Response *resp = MHD_create_response_from_buffer_with_free_callback(zlen, z,
	                                                                              free);
	if (resp == NULL) {
		free(z);
		return false;
	}
	struct MHD_Response *nm =
	    MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
	if (nm == NULL) {
		MHD_destroy_response(resp);
		return false;
	}
	MHD_get_response_headers(plain, copy_header, resp);
	MHD_get_response_headers(plain_nm, copy_header, nm);
	struct MHD_Response *all[4] = {resp, nm, plain, plain_nm};
	for (int i = 0; i < 4; i++) {
		if (i < 2) /* a 304 has no body to be coded: no Content-Encoding on it */
			MHD_add_response_header(all[i], "ETag", gz_etag);
		if (i == 0)
			MHD_add_response_header(all[i], "Content-Encoding", "gzip");
		MHD_add_response_header(all[i], "Vary", "Accept-Encoding");
	}
	*gz = resp;
	*gz_nm = nm;
	*gz_len = zlen;
	return true;
}

void oxs_reply_entry(oxs_req *r, const oxs_centry *e)
{
	bool gz = e->status == 200 && e->gz != NULL && r->gzip_ok;
	const char *etag = gz ? e->gz_etag : e->etag;
	bool nm = e->status == 200 && e->nm != NULL && r->inm[0] != '\0' &&
	          oxs_etag_match(r->inm, etag);
	/* libmicrohttpd has no public "add a reference" call: the entry stays referenced
	 * until the response is queued (then libmicrohttpd holds its own reference) */
	oxs_reply_shared(r, nm ? 304 : e->status, gz ? (nm ? e->gz_nm : e->gz) : nm ? e->nm : e->resp,
	                 nm ? 0 : gz ? e->gz_len : e->len);
	oxs_centry *me = (oxs_centry *)e;
	atomic_fetch_add(&me->refs, 1);
	r->reply_entry = me;
}

unsigned oxs_store_http_status(oxst_status st)
{
	switch (st) {
	case OXST_OK: return 200;
	case OXST_E_NOT_FOUND:
	case OXST_E_INVALID: return 404;
	case OXST_E_NOSPACE: return 507;
	case OXST_E_IO: return 500;
	case OXST_E_NOMEM:
	case OXST_E_BUSY:
	case OXST_E_UNAVAILABLE:
	case OXST_E_AGAIN: return 503;
	}
	return 500;
}

void oxs_reply_store_error(oxs_req *r, oxst_status st, const char *what)
{
	unsigned status = oxs_store_http_status(st);
	const char *code = status == 404   ? "not_found"
	                   : status == 507 ? "insufficient_storage"
	                   : status == 503 ? "store_unavailable"
	                                   : "store_error";
	if (status == 404)
		oxs_reply_error(r, 404, code, "", "no such model");
	else
		oxs_reply_error(r, status, code, "", "%s: %s", what, oxst_status_name(st));
}
