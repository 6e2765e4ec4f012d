/*
 * sign.h — signed links (sign.c: the rule; sign_api.c: POST /sign and `onnxviz sign`).
 *
 * When reads need a token, an <img>, an iframe or a link unfurler cannot send one.  A
 * signed link carries its authorization in the URL, in the manner of S3's presigned URLs:
 *
 *   /models/ID/graph.svg?expires=1767225600&theme=dark&signature=<64 hex>
 *
 *   signature = hex(HMAC-SHA256(key, "GET\n" + PATH + "\n" + QUERY))
 *
 * PATH is the decoded path with every byte outside [A-Za-z0-9._~/-] as %XX (upper-case
 * hex); QUERY the query's parameters except `signature`, decoded, sorted by key then
 * value (bytes), each key and value encoded the same way (with '/' as %2F), joined as
 * k=v with '&'; `expires` (Unix seconds) is one of them, so it is signed too.  The key is
 * the content of --sign-secret-file (trailing line breaks dropped, 32..1024 bytes); the
 * server and `onnxviz sign` read the same file.
 *
 * It reads exactly that resource until it expires, and nothing else: checked in the read
 * authorization (request.c, oxs_authorize's READ case) for GET and HEAD only; a route that
 * writes never looks at it; another path, another query, a changed byte or a late clock
 * is 403 with the reason; expires more than --sign-max-ttl ahead is refused too.  The
 * signature is compared in constant time.  A signed request is checked whether or not
 * reads need a token (a bad one is 403 either way), and reaches its handler with
 * `expires` and `signature` taken out of its query.
 */
#ifndef OXS_SIGN_H
#define OXS_SIGN_H

#include "render/oxr.h"
#include "service/server.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OXS_SIGN_KEY_MIN 32
#define OXS_SIGN_KEY_MAX 1024
#define OXS_SIGN_TTL_DEFAULT 3600u     /* POST /sign and `onnxviz sign` without a TTL */
#define OXS_SIGN_MAX_TTL_DEFAULT 604800u /* --sign-max-ttl: 7 days, as S3's presigned URLs */

typedef struct oxs_sign_key {
	unsigned char k[OXS_SIGN_KEY_MAX];
	size_t len;
} oxs_sign_key;

typedef enum {
	OXS_SIGN_OK = 0,
	OXS_SIGN_MALFORMED,    /* "signature_malformed": not exactly one expires and one
	                          signature of 64 hex digits, or a bad %-escape */
	OXS_SIGN_MISMATCH,     /* "signature_mismatch": another path, query or key */
	OXS_SIGN_EXPIRED,      /* "signature_expired" */
	OXS_SIGN_TTL,          /* "signature_ttl_too_long": expires beyond --sign-max-ttl */
	OXS_SIGN_DISABLED      /* "signing_disabled": the server has no --sign-secret-file */
} oxs_sign_result;

/* The error code of a result ("signature_expired", ...). */
const char *oxs_sign_code(oxs_sign_result r);

/* Read the key file at path.  False with a message (missing, unreadable, shorter than
 * OXS_SIGN_KEY_MIN or longer than OXS_SIGN_KEY_MAX bytes). */
bool oxs_sign_key_load(oxs_sign_key *key, const char *path, char *err, size_t errsize);

/* Sign target ("/path" or "/path?query", as a client sends it) until expires (Unix
 * seconds): the signed target, canonically encoded, with expires and signature, appended
 * to out.  False with a message when the target is malformed (no leading '/', a '#', a
 * bad or NUL %-escape, more than 64 parameters, expires or signature already there). */
bool oxs_sign_target(const oxs_sign_key *key, const char *target, int64_t expires,
                     oxr_buf *out, char *err, size_t errsize);

/* Check a request's signature: path as decoded for routing, query raw (without '?'),
 * now and max_ttl in seconds.  On OXS_SIGN_OK `expires` and `signature` are taken out of
 * query (in place). */
oxs_sign_result oxs_sign_check(const oxs_sign_key *key, const char *path, char *query,
                               int64_t now, unsigned max_ttl);
/* True when the raw query has a `signature` parameter. */
bool oxs_sign_present(const char *query);

/* The hook of oxs_authorize's READ case (request.c): -1 when the request is not a signed
 * GET or HEAD nor one with X-Onnxviz-Cap (tokens decide), 0 when its signature or
 * capability holds (its query cleaned), else 403
 * after replying with the reason. */
int oxs_sign_request(oxs_req *r);

/* The capability a signed /embed/{id} hands its page (decision 92; sign.c says the rule
 * whole): "EXPIRES.<64 hex>", sent back as the header X-Onnxviz-Cap, reads (GET, HEAD)
 * /models/ID and under it, except its diffs, until EXPIRES; nothing else.  oxs_sign_cap
 * writes it for id (64 hex) into out (false when out of memory or id is not an id);
 * oxs_sign_cap_check checks cap for the decoded path, in constant time, as oxs_sign_check
 * does (MISMATCH for another model or path). */
#define OXS_SIGN_CAP_MAX (12 + 1 + 64)
bool oxs_sign_cap(const oxs_sign_key *key, const char *id, int64_t expires,
                  char out[OXS_SIGN_CAP_MAX + 1]);
oxs_sign_result oxs_sign_cap_check(const oxs_sign_key *key, const char *path, const char *cap,
                                   int64_t now, unsigned max_ttl);

/* POST /sign (sign_api.c): {"path": "/models/ID/graph.svg?...", "ttl": 3600} as a JSON
 * body, or path= and ttl= in the query; answers {"path", "url" (with --base-url),
 * "expires"}. */
void oxs_sign_post(oxs_req *r);
/* POST /sign's JSON body, read into memory (r->jbody, at most OXS_JBODY_MAX bytes; more
 * sets its failed flag: 413): the early answer (401) before it is read, and its end. */
#define OXS_JBODY_MAX ((size_t)8 << 10)
bool oxs_jbody_begin(oxs_req *r);
void oxs_jbody_free(oxs_req *r);
/* `onnxviz sign URL [--ttl 1h | --expires UNIX] [--secret-file F]` (sign_api.c). */
int oxs_cli_sign(int argc, char **argv);
/* "3600", "90s", "15m", "1h", "7d" as seconds in 1..max; false when malformed or out of
 * range. */
bool oxs_sign_parse_ttl(const char *s, unsigned max, unsigned *out);

#endif /* OXS_SIGN_H */
