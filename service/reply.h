/*
 * reply.h — replies and their headers (reply.c).  Each oxs_reply* sets r->reply (taking
 * ownership of a response).
 */
#ifndef OXS_REPLY_H
#define OXS_REPLY_H

#include "service/cache.h"
#include "service/server.h"

#include <microhttpd.h>

void oxs_reply(oxs_req *r, unsigned status, struct MHD_Response *resp, uint64_t bytes);
/* Drop a reply that was set but not queued. */
void oxs_reply_clear(oxs_req *r);
/* Answer with a response that outlives the request (a static one, a cache entry's, the
 * server's oom_reply): queued as it is, never destroyed by the request. */
void oxs_reply_shared(oxs_req *r, unsigned status, struct MHD_Response *resp, uint64_t bytes);
/* The answer given when memory runs out even for an error's body: a static 503
 * out_of_memory, made once when the server starts (oxs_server.oom_reply) so that no
 * request is ever left without one.  NULL when out of memory. */
struct MHD_Response *oxs_oom_response(void);
/* JSON error {"error":{"code","message","status"[,extra]}}; extra: "" or ",\"k\":v...".
 * With no memory for it: the server's oom_reply. */
void oxs_reply_error(oxs_req *r, unsigned status, const char *code, const char *extra,
                     const char *fmt, ...) OXS_PRINTF(5, 6);
/* The answer of b (taken over, freed): a response, gzip'd when `gzip`, the type is worth
 * it and the client takes it (Content-Encoding and Vary set); NULL after a 503 (b over its
 * bound, or out of memory).  *len: the bytes sent. */
struct MHD_Response *oxs_response_buf(oxs_req *r, oxr_buf *b, const char *type, bool gzip,
                                      size_t *len);
/* A body (stolen from b) of the given type, with no-store caching; gzip'd when worth it
 * (gzip.h) and the request accepts gzip. */
void oxs_reply_text(oxs_req *r, unsigned status, oxr_buf *b, const char *type);
void oxs_reply_json(oxs_req *r, unsigned status, oxr_buf *b);
/* The JSON error response (no-store; WWW-Authenticate for 401, Retry-After for 503);
 * *body (when not NULL) gets its body, valid while the response lives, *len its size.
 * NULL when out of memory. */
struct MHD_Response *oxs_error_response(unsigned status, const char *code, const char *msg,
                                        const char *extra, const char **body, size_t *len);
/* The HTTP status of a store failure: 404 not found, 507 no space, 503 (with Retry-After)
 * when the store does not answer or memory ran out, 500 for an I/O error. */
unsigned oxs_store_http_status(oxst_status st);
/* Answer a store failure with that status; what: "cannot store the model", ... */
void oxs_reply_store_error(oxs_req *r, oxst_status st, const char *what);
/* Answer from a cache entry: its gzip'd variant when it has one and the request accepts
 * gzip, else the plain one; 304 when If-None-Match holds that variant's ETag. */
void oxs_reply_entry(oxs_req *r, const oxs_centry *e);
/* A response for JSON/text bodies with the common headers (nosniff, API CSP); data is
 * copied.  NULL when out of memory. */
struct MHD_Response *oxs_response_copy(const void *data, size_t len, const char *type);
/* The headers every API response carries (nosniff, the restrictive CSP). */
void oxs_response_common(struct MHD_Response *resp, const char *type);
/* Reads need a token (--auth-reads, --read-token): answers are for the asker alone. */
bool oxs_reads_private(const oxs_server *srv);
/* Cache-Control of a read's answer: content-addressed (immutable, a year) or to be
 * revalidated (no-cache); "private" and "Vary: Authorization" when reads need a token
 * (a shared cache must not hand it to a request without one), else public. */
void oxs_response_cache(struct MHD_Response *resp, const oxs_server *srv, bool immutable);
/* The headers of a content-addressed 200 response (ETag, immutable caching as above)
 * and, for SVG, its CSP and Content-Disposition. */
void oxs_response_immutable(struct MHD_Response *resp, const oxs_server *srv,
                            const char *etag, const char *type, const char *id, const char *ext);
/* Content-Disposition from an id (64 hex digits) and an extension only, never from model
 * data: attachment for .onnx and .npy, inline for renderings, none for JSON. */
void oxs_response_disposition(struct MHD_Response *resp, const char *id, const char *ext);

/* The ETag of the gzip'd variant of an answer tagged etag: "-gz" inside its quotes (RFC
 * 9110 8.8.3.3: another representation, another tag); false when etag is not a quoted tag
 * short enough for out. */
bool oxs_gzip_etag(const char *etag, char out[48]);

/* The gzip'd variant of a 200 answer (plain, its 304 plain_nm, its ETag, its body
 * data[0..len) of Content-Type type), compressed now: *gz and *gz_nm get the plain ones'
 * headers with the ETag gz_etag (etag with "-gz" inside the quotes), Content-Encoding
 * gzip and Vary: Accept-Encoding; the plain ones get that Vary too.  False (nothing
 * made, nothing changed) when the answer is not worth compressing (gzip.h), zlib is
 * missing or memory ran out: the plain answer then goes to everyone. */
bool oxs_response_gzip(struct MHD_Response *plain, struct MHD_Response *plain_nm,
                       const char *etag, const void *data, size_t len, const char *type,
                       struct MHD_Response **gz, struct MHD_Response **gz_nm,
                       char gz_etag[48], size_t *gz_len);

#endif /* OXS_REPLY_H */
