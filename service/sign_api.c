/*
 * sign_api.c — signed links handed out (sign.h): POST /sign for a holder of a read token,
 * and `onnxviz sign` for whoever has the server's key file (a CI job, an operator).  The
 * rule itself — what is signed, how it is checked — is sign.c's.
 */
#include "service/reply.h"
#include "service/request.h"
#include "service/router.h"
#include "service/query.h"
#include "service/sign.h"

#include <inttypes.h>
#include <jansson.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

bool oxs_sign_parse_ttl(const char *s, unsigned max, unsigned *out)
{
	size_t n = strlen(s), digits = strspn(s, "0123456789");
	if (digits == 0 || digits > 9 || n > digits + 1)
		return false;
	uint64_t v = strtoull(s, NULL, 10);
	char unit = n > digits ? s[digits] : 's';
	uint64_t mul = unit == 's' ? 1 : unit == 'm' ? 60 : unit == 'h' ? 3600 : unit == 'd' ? 86400 : 0;
	if (mul == 0 || v == 0 || v * mul > max)
		return false;
	*out = (unsigned)(v * mul);
	return true;
}

/* ---------------------------------------------------------------------------------------
 * POST /sign
 */
/* path and ttl from a JSON body {"path": "...", "ttl": 3600 | "1h"} into the buffers;
 * false after a 400 reply. */
static bool body_args(oxs_req *r, char *path, size_t psize, char *ttl, size_t tsize)
{
	json_error_t je;
	json_t *o = json_loadb(r->jbody->data, r->jbody->len, JSON_REJECT_DUPLICATES, &je);
	json_t *p = json_is_object(o) ? json_object_get(o, "path") : NULL;
	json_t *t = json_is_object(o) ? json_object_get(o, "ttl") : NULL;
	bool ok = json_is_string(p) && json_object_size(o) == 1u + (t != NULL) &&
	          (t == NULL || json_is_string(t) || json_is_integer(t)) &&
	          json_string_length(p) < psize;
	if (ok) {
		snprintf(path, psize, "%s", json_string_value(p));
		if (json_is_string(t))
			snprintf(ttl, tsize, "%s", json_string_value(t));
		else if (t != NULL)
			snprintf(ttl, tsize, "%" JSON_INTEGER_FORMAT, json_integer_value(t));
	}
	json_decref(o);
	if (!ok)
		oxs_reply_error(r, 400, "bad_request", "",
		                "the body: {\"path\": \"/models/...\", \"ttl\": seconds or \"1h\"}");
	return ok;
}

bool oxs_jbody_begin(oxs_req *r)
{
	unsigned denied = oxs_authorize(r, oxs_route_at(r->route)->post_access);
	if (denied != 0) {
		oxs_reply_error(r, denied, denied == 401 ? "unauthorized" : "forbidden", "",
		                "this request needs \"Authorization: Bearer <token>\"");
		return true;
	}
	if (!oxs_body_hold(r, OXS_JBODY_MAX + sizeof(oxr_buf)))
		return true; /* answered: over the client's --body-per-client */
	r->jbody = malloc(sizeof(oxr_buf));
	if (r->jbody == NULL)
		return false;
	oxr_buf_init(r->jbody, OXS_JBODY_MAX);
	return true;
}

void oxs_jbody_free(oxs_req *r)
{
	if (r->jbody != NULL) {
		oxr_buf_free(r->jbody);
		free(r->jbody);
		r->jbody = NULL;
	}
}

void oxs_sign_post(oxs_req *r)
{
	oxs_server *srv = r->srv;
	if (srv->sign_key == NULL) {
		oxs_reply_error(r, 403, "signing_disabled", "",
		                "this server signs no links (--sign-secret-file)");
		return;
	}
	if (r->jbody != NULL && r->jbody->failed) {
		oxs_reply_error(r, 413, "payload_too_large", "", "the body is too large");
		return;
	}
	char path[OXS_QUERY_MAX + OXST_LOCATION_MAX], ttl[32] = "";
	path[0] = '\0';
	if (r->jbody != NULL && r->jbody->len > 0 && r->query[0] != '\0') {
		oxs_reply_error(r, 400, "bad_request", "", "path and ttl in the body or the query, not both");
		return;
	}
	if (r->jbody != NULL && r->jbody->len > 0) {
		if (!body_args(r, path, sizeof(path), ttl, sizeof(ttl)))
			return;
	} else {
		oxs_query_pair pairs[4];
		int n = oxs_query_split(r->query, pairs, 4);
		for (int i = 0; i < n; i++) {
			bool p = !strcmp(pairs[i].key, "path"), t = !strcmp(pairs[i].key, "ttl");
			if ((!p && !t) || (p && path[0]) || (t && ttl[0]) ||
			    strlen(pairs[i].value) >= (p ? sizeof(path) : sizeof(ttl))) {
				n = -1;
				break;
			}
			snprintf(p ? path : ttl, p ? sizeof(path) : sizeof(ttl), "%s", pairs[i].value);
		}
		if (n < 0 || path[0] == '\0') {
			oxs_reply_error(r, 400, "bad_query", "",
			                "path= (the URL's path and query, URL-encoded) and ttl= at most");
			return;
		}
	}
	unsigned secs = OXS_SIGN_TTL_DEFAULT < srv->cfg.sign_max_ttl ? OXS_SIGN_TTL_DEFAULT
	                                                             : srv->cfg.sign_max_ttl;
	if (ttl[0] != '\0' && !oxs_sign_parse_ttl(ttl, srv->cfg.sign_max_ttl, &secs)) {
		oxs_reply_error(r, 400, "bad_ttl", "",
		                "ttl: seconds (or 90s, 15m, 1h, 7d), 1 to --sign-max-ttl (%u)",
		                srv->cfg.sign_max_ttl);
		return;
	}
	int64_t expires = (int64_t)time(NULL) + secs;
	oxr_buf target, b;
	oxr_buf_init(&target, 4 * (OXS_QUERY_MAX + OXST_LOCATION_MAX));
	oxr_buf_init(&b, 0);
	char err[200];
	if (!oxs_sign_target(srv->sign_key, path, expires, &target, err, sizeof(err))) {
		oxs_reply_error(r, 400, "not_signable", "", "%s", err);
	} else {
		oxr_buf_printf(&b, "{\"path\":");
		oxr_json_string(&b, target.data, target.len);
		if (srv->cfg.base_url[0] != '\0') {
			oxr_buf url;
			oxr_buf_init(&url, 0);
			oxr_buf_printf(&url, "%s%s", srv->cfg.base_url, target.data);
			oxr_buf_printf(&b, ",\"url\":");
			oxr_json_string(&b, url.data, url.len);
			oxr_buf_free(&url);
		}
		oxr_buf_printf(&b, ",\"expires\":%" PRId64 "}", expires);
		oxs_reply_json(r, 200, &b);
	}
	oxr_buf_free(&target);
	oxr_buf_free(&b);
}

/* ---------------------------------------------------------------------------------------
 * onnxviz sign
 */
static const char USAGE[] =
    "usage: onnxviz sign URL [--ttl 1h | --expires UNIX_SECONDS] [--secret-file FILE]\n"
    "A link that reads URL (a GET of the server: /models/ID/graph.svg, /diff.md?a=&b=, ...)\n"
    "without a token until it expires, for an <img>, an iframe or a chat unfurl.  URL is a\n"
    "path or a full http(s):// URL.  The key is the server's --sign-secret-file (FILE, else\n"
    "$ONNXVIZ_SIGN_SECRET_FILE).  --ttl: seconds, or 90s, 15m, 1h, 7d (default 1h, at most\n"
    "$ONNXVIZ_SIGN_MAX_TTL or 7d; the server refuses links that live longer than its\n"
    "--sign-max-ttl).  Prints the signed URL.\n";

int oxs_cli_sign(int argc, char **argv)
{
	const char *url = NULL, *secret = getenv("ONNXVIZ_SIGN_SECRET_FILE"), *ttl = NULL,
	           *exp = NULL;
	unsigned max = OXS_SIGN_MAX_TTL_DEFAULT, secs = OXS_SIGN_TTL_DEFAULT;
	const char *env_max = getenv("ONNXVIZ_SIGN_MAX_TTL");
	if (env_max != NULL && env_max[0] != '\0' && !oxs_sign_parse_ttl(env_max, 31536000u, &max)) {
		fprintf(stderr, "onnxviz sign: ONNXVIZ_SIGN_MAX_TTL: seconds in 1..31536000\n");
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char **slot = !strcmp(a, "--ttl") ? &ttl : !strcmp(a, "--expires") ? &exp
		                    : !strcmp(a, "--secret-file") ? &secret : NULL;
		if (slot != NULL && i + 1 < argc) {
			*slot = argv[++i];
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(USAGE, stdout);
			return 0;
		} else if (a[0] == '-' || url != NULL) {
			fputs(USAGE, stderr);
			return 2;
		} else {
			url = a;
		}
	}
	if (url == NULL || (ttl != NULL && exp != NULL)) {
		fputs(USAGE, stderr);
		return 2;
	}
	if (secret == NULL || secret[0] == '\0') {
		fprintf(stderr, "onnxviz sign: the server's key: --secret-file FILE or ONNXVIZ_SIGN_SECRET_FILE\n");
		return 2;
	}
	if (ttl != NULL && !oxs_sign_parse_ttl(ttl, max, &secs)) {
		fprintf(stderr, "onnxviz sign: --ttl: seconds (or 90s, 15m, 1h, 7d), 1 to %u\n", max);
		return 2;
	}
	int64_t expires = (int64_t)time(NULL) + secs;
	if (exp != NULL) {
		/* a fixed expiry (a release's links; a test's expired one): checked by the server */
		if (exp[0] == '\0' || strlen(exp) > 12 || strspn(exp, "0123456789") != strlen(exp)) {
			fprintf(stderr, "onnxviz sign: --expires: Unix seconds\n");
			return 2;
		}
		expires = strtoll(exp, NULL, 10);
	}
	/* http(s)://host[:port] kept as it is; the rest is the target */
	size_t origin = 0;
	if (!strncmp(url, "http://", 7) || !strncmp(url, "https://", 8)) {
		const char *slash = strchr(strstr(url, "://") + 3, '/');
		origin = slash != NULL ? (size_t)(slash - url) : strlen(url);
	}
	oxs_sign_key key;
	char err[700];
	if (!oxs_sign_key_load(&key, secret, err, sizeof(err))) {
		fprintf(stderr, "onnxviz sign: %s\n", err);
		return 2;
	}
	oxr_buf out;
	oxr_buf_init(&out, 0);
	oxr_buf_append(&out, url, origin);
	int rc = 0;
	if (!oxs_sign_target(&key, url[origin] != '\0' ? url + origin : "/", expires, &out, err,
	                     sizeof(err))) {
		fprintf(stderr, "onnxviz sign: %s\n", err);
		rc = 2;
	} else {
		printf("%.*s\n", (int)out.len, out.data);
	}
	oxr_buf_free(&out);
	OPENSSL_cleanse(&key, sizeof(key));
	return rc;
}
