/*
 * request.h — what a handler does with its request besides replying (request.c): jobs
 * (oxs_defer, oxs_resume), bearer tokens, the upload rate limit.
 */
#ifndef OXS_REQUEST_H
#define OXS_REQUEST_H

#include "service/jobs.h"
#include "service/router.h"
#include "service/server.h"

/* Run fn(r) on pool p while the connection waits; replies 503 when the queue is full
 * (request.c, as the two below). */
void oxs_defer(oxs_req *r, oxs_pool *p, void (*fn)(oxs_req *r));
/* From a job: the reply is set; let libmicrohttpd send it. */
void oxs_resume(oxs_req *r);
/* The connection waits (for oxs_resume) without reading or writing; counted in waiting
 * until its reply is sent or the request completes (http.c). */
void oxs_suspend(oxs_req *r);

/* The Content-Encoding of the request's body: none (absent, empty or identity), gzip (or
 * x-gzip: only an upload decodes it, upload.c), or another (*name: the header's value). */
typedef enum { OXS_CODING_NONE, OXS_CODING_GZIP, OXS_CODING_OTHER } oxs_coding;
oxs_coding oxs_body_coding(oxs_req *r, const char **name);

/* Authorization for an access level: 0 when allowed, else the status to answer. */
unsigned oxs_authorize(oxs_req *r, oxs_access access);
/* Before reading a body (POST uploads, PATCH parts): the route's upload access; false
 * after the 401/403 reply. */
bool oxs_authorize_body(oxs_req *r, const oxs_route *rt);
/* An upload within --upload-rate for the client's address; false after the 429 reply
 * (with Retry-After). */
bool oxs_rate_allow(oxs_req *r);

/* The client the request's holdings count against (quota.h): the valid bearer token it
 * presented when the server has tokens, else its address. */
struct oxs_client;
void oxs_client_of(oxs_req *r, struct oxs_client *out);
/* n more bytes of memory held for the request's body, counted against its client's
 * --body-per-client (OXS_Q_BODY_BYTES) until the request completes (oxs_body_release,
 * http.c).  False after the reply: 503 body_quota with Retry-After, naming the flag. */
bool oxs_body_hold(oxs_req *r, uint64_t n);
void oxs_body_release(oxs_req *r);

#endif /* OXS_REQUEST_H */
