/*
 * sign.c — the rule of signed links (sign.h): the canonical request, HMAC-SHA256 over it,
 * and the check in the read authorization.  docs/api.md "Signed links" says it for users,
 * docs/decisions.md (89) why it is this way.
 */
#include "service/sign.h"
#include "service/hash.h"
#include "service/query.h"
#include "service/reply.h"
#include "service/router.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_PARAMS 64

const char *oxs_sign_code(oxs_sign_result r)
{
	switch (r) {
	case OXS_SIGN_OK: return "ok";
	case OXS_SIGN_MALFORMED: return "signature_malformed";
	case OXS_SIGN_MISMATCH: return "signature_mismatch";
	case OXS_SIGN_EXPIRED: return "signature_expired";
	case OXS_SIGN_TTL: return "signature_ttl_too_long";
	case OXS_SIGN_DISABLED: return "signing_disabled";
	}
	return "signature_malformed";
}

bool oxs_sign_key_load(oxs_sign_key *key, const char *path, char *err, size_t errsize)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errsize, "%s: %s", path, strerror(errno));
		return false;
	}
	unsigned char buf[OXS_SIGN_KEY_MAX + 3];
	size_t n = 0;
	ssize_t got;
	while (n < sizeof(buf) && (got = read(fd, buf + n, sizeof(buf) - n)) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			snprintf(err, errsize, "%s: %s", path, strerror(errno));
			close(fd);
			return false;
		}
		n += (size_t)got;
	}
	close(fd);
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		n--; /* `echo secret > file`, `openssl rand -hex 32 > file` */
	if (n < OXS_SIGN_KEY_MIN || n > OXS_SIGN_KEY_MAX) {
		snprintf(err, errsize, "%s: the key must be %d..%d bytes (e.g. `openssl rand -hex 32`)",
		         path, OXS_SIGN_KEY_MIN, OXS_SIGN_KEY_MAX);
		return false;
	}
	memcpy(key->k, buf, n);
	key->len = n;
	OPENSSL_cleanse(buf, sizeof(buf));
	return true;
}

/* HMAC-SHA256 (RFC 2104) of msg under key into mac. */
static bool hmac_sha256(const oxs_sign_key *key, const void *msg, size_t n, unsigned char mac[32])
{
	unsigned char k[64] = {0}, pad[64], inner[32];
	unsigned int len = 0;
	if (key->len > sizeof(k)) {
		if (EVP_Digest(key->k, key->len, k, &len, EVP_sha256(), NULL) != 1)
			return false;
	} else {
		memcpy(k, key->k, key->len);
	}
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	bool ok = c != NULL;
	for (int pass = 0; ok && pass < 2; pass++) {
		for (size_t i = 0; i < sizeof(pad); i++)
			pad[i] = (unsigned char)(k[i] ^ (pass == 0 ? 0x36 : 0x5c));
		ok = EVP_DigestInit_ex(c, EVP_sha256(), NULL) == 1 &&
		     EVP_DigestUpdate(c, pad, sizeof(pad)) == 1 &&
		     (pass == 0 ? EVP_DigestUpdate(c, msg, n) : EVP_DigestUpdate(c, inner, 32)) == 1 &&
		     EVP_DigestFinal_ex(c, pass == 0 ? inner : mac, &len) == 1;
	}
	EVP_MD_CTX_free(c);
	OPENSSL_cleanse(k, sizeof(k));
	OPENSSL_cleanse(pad, sizeof(pad));
	return ok;
}

/* Bytes outside [A-Za-z0-9._~-] (and '/' unless slash) as %XX. */
static void encode(oxr_buf *b, const char *s, bool slash)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '.' || c == '_' || c == '~' || c == '-' || (slash && c == '/'))
			oxr_buf_append(b, s, 1);
		else
			oxr_buf_printf(b, "%%%02X", c);
	}
}

static int cmp_pair(const void *p, const void *q)
{
	const oxs_query_pair *a = p, *b = q;
	int c = strcmp(a->key, b->key);
	return c ? c : strcmp(a->value, b->value);
}

/* The query part of the canonical request: pairs (signature left out) sorted and
 * encoded.  Sorts pairs. */
static void canonical_query(oxr_buf *b, oxs_query_pair *pairs, size_t n)
{
	qsort(pairs, n, sizeof(*pairs), cmp_pair);
	for (size_t i = 0; i < n; i++) {
		if (i > 0)
			oxr_buf_append(b, "&", 1);
		encode(b, pairs[i].key, false);
		oxr_buf_append(b, "=", 1);
		encode(b, pairs[i].value, false);
	}
}

/* "GET\n" + path + "\n" + query, signed; false when out of memory. */
static bool mac_of(const oxs_sign_key *key, const char *path, const char *cquery,
                   unsigned char mac[32])
{
	oxr_buf c;
	oxr_buf_init(&c, 3 * (OXS_QUERY_MAX + OXST_LOCATION_MAX) + 64);
	oxr_buf_append(&c, "GET\n", 4);
	encode(&c, path, true);
	oxr_buf_printf(&c, "\n%s", cquery);
	bool ok = !c.failed && hmac_sha256(key, c.data, c.len, mac);
	oxr_buf_free(&c);
	return ok;
}

static int hexdigit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static int hexval(char c)
{
	return c >= 'A' && c <= 'F' ? c - 'A' + 10 : hexdigit(c);
}

/* Decode a path's %XX (not '+': a path is not a form) into out; false on a bad escape
 * or a NUL. */
static bool decode_path(const char *s, size_t n, char *out, size_t size)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned v = (unsigned char)s[i];
		if (s[i] == '%') {
			int hi = n - i < 3 ? -1 : hexval(s[i + 1]), lo = n - i < 3 ? -1 : hexval(s[i + 2]);
			if (hi < 0 || lo < 0)
				return false;
			v = (unsigned)(hi * 16 + lo);
			i += 2;
		}
		if (v == 0 || o + 1 >= size)
			return false;
		out[o++] = (char)v;
	}
	out[o] = '\0';
	return true;
}

bool oxs_sign_target(const oxs_sign_key *key, const char *target, int64_t expires,
                     oxr_buf *out, char *err, size_t errsize)
{
	const char *q = strchr(target, '?');
	size_t plen = q != NULL ? (size_t)(q - target) : strlen(target);
	char query[OXS_QUERY_MAX], ebuf[24];
	oxs_query_pair pairs[MAX_PARAMS + 1];
	int n = 0;
	if (target[0] != '/' || strchr(target, '#') != NULL) {
		snprintf(err, errsize, "a path on the server (/models/...), without a fragment");
		return false;
	}
	char *dpath = malloc(plen + 1);
	bool ok = dpath != NULL && decode_path(target, plen, dpath, plen + 1);
	if (!ok) {
		free(dpath);
		snprintf(err, errsize, "the path has a bad %%-escape or a NUL");
		return false;
	}
	/* only what a GET reads: a route whose GET needs at most the read token */
	char id[OXST_ID_LEN + 1], param[OXS_TENSOR_KEY_MAX + 1], fpath[OXST_LOCATION_MAX + 1];
	int route = oxs_route_match(dpath, id, param, sizeof(param), fpath, sizeof(fpath));
	const oxs_route *rt = route >= 0 ? oxs_route_at(route) : NULL;
	if (rt == NULL || rt->get_access != OXS_ACCESS_READ || strstr(rt->methods, "GET") == NULL) {
		free(dpath);
		snprintf(err, errsize, "not a path that reads (GET /models/..., /files/..., /diff.md)");
		return false;
	}
	if (q != NULL && strlen(q + 1) >= sizeof(query) - 64) {
		free(dpath);
		snprintf(err, errsize, "the query is too long");
		return false;
	}
	snprintf(query, sizeof(query), "%s", q != NULL ? q + 1 : "");
	n = oxs_query_split(query, pairs, MAX_PARAMS);
	for (int i = 0; n > 0 && i < n; i++)
		if (!strcmp(pairs[i].key, "expires") || !strcmp(pairs[i].key, "signature"))
			n = -2;
	if (n < 0) {
		free(dpath);
		snprintf(err, errsize, n == -2 ? "the URL is signed already"
		                               : "the query has a bad %%-escape, a NUL or over %d parameters",
		         MAX_PARAMS);
		return false;
	}
	snprintf(ebuf, sizeof(ebuf), "%" PRId64, expires);
	pairs[n++] = (oxs_query_pair){"expires", ebuf};
	oxr_buf cq;
	oxr_buf_init(&cq, 3 * OXS_QUERY_MAX + 64);
	canonical_query(&cq, pairs, (size_t)n);
	unsigned char mac[32];
	ok = !cq.failed && mac_of(key, dpath, cq.data, mac);
	if (ok) {
		encode(out, dpath, true);
		oxr_buf_printf(out, "?%s&signature=", cq.data);
		for (int i = 0; i < 32; i++)
			oxr_buf_printf(out, "%02x", mac[i]);
		ok = !out->failed;
	}
	if (!ok)
		snprintf(err, errsize, "out of memory");
	oxr_buf_free(&cq);
	free(dpath);
	return ok;
}

bool oxs_sign_present(const char *query)
{
	char copy[OXS_QUERY_MAX];
	oxs_query_pair pairs[MAX_PARAMS];
	snprintf(copy, sizeof(copy), "%s", query);
	int n = oxs_query_split(copy, pairs, MAX_PARAMS);
	for (int i = 0; i < n; i++)
		if (strcmp(pairs[i].key, "signature") == 0)
			return true;
	/* a query the split refuses may still try: `signature=` written plainly */
	return n < 0 && (strncmp(query, "signature=", 10) == 0 || strstr(query, "&signature=") != NULL);
}

/* Take the raw segments whose decoded key is expires or signature out of query. */
static void strip(char *query)
{
	char *w = query, *p = query;
	while (*p != '\0') {
		char *amp = strchr(p, '&');
		size_t len = amp != NULL ? (size_t)(amp - p) : strlen(p);
		char seg[OXS_QUERY_MAX];
		memcpy(seg, p, len);
		seg[len] = '\0';
		oxs_query_pair kv;
		bool drop = oxs_query_split(seg, &kv, 1) == 1 &&
		            (!strcmp(kv.key, "expires") || !strcmp(kv.key, "signature"));
		if (!drop && len > 0) {
			if (w != query)
				*w++ = '&';
			memmove(w, p, len);
			w += len;
		}
		p += len + (amp != NULL);
	}
	*w = '\0';
}

oxs_sign_result oxs_sign_check(const oxs_sign_key *key, const char *path, char *query,
                               int64_t now, unsigned max_ttl)
{
	char copy[OXS_QUERY_MAX];
	oxs_query_pair pairs[MAX_PARAMS];
	snprintf(copy, sizeof(copy), "%s", query);
	int n = oxs_query_split(copy, pairs, MAX_PARAMS);
	if (n < 0)
		return OXS_SIGN_MALFORMED;
	const char *sig = NULL, *exp = NULL;
	int nsig = 0, nexp = 0, k = 0;
	for (int i = 0; i < n; i++) {
		if (strcmp(pairs[i].key, "signature") == 0) {
			sig = pairs[i].value;
			nsig++;
			continue; /* not signed itself */
		}
		if (strcmp(pairs[i].key, "expires") == 0) {
			exp = pairs[i].value;
			nexp++;
		}
		pairs[k++] = pairs[i];
	}
	if (nsig != 1 || nexp != 1 || strlen(sig) != 64 || strlen(exp) == 0 || strlen(exp) > 12 ||
	    strspn(exp, "0123456789") != strlen(exp))
		return OXS_SIGN_MALFORMED;
	unsigned char got[32], mac[32];
	for (int i = 0; i < 32; i++) {
		int hi = hexdigit(sig[2 * i]), lo = hexdigit(sig[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return OXS_SIGN_MALFORMED;
		got[i] = (unsigned char)(hi * 16 + lo);
	}
	int64_t expires = strtoll(exp, NULL, 10);
	oxr_buf cq;
	oxr_buf_init(&cq, 3 * OXS_QUERY_MAX + 64);
	canonical_query(&cq, pairs, (size_t)k);
	bool ok = !cq.failed && mac_of(key, path, cq.data, mac);
	oxr_buf_free(&cq);
	/* the signature first: a changed expires is a mismatch, not "expired"; compared in
	 * constant time so that its bytes cannot be found one at a time */
	if (!ok || CRYPTO_memcmp(got, mac, 32) != 0)
		return OXS_SIGN_MISMATCH;
	if (now > expires)
		return OXS_SIGN_EXPIRED;
	if (expires - now > (int64_t)max_ttl)
		return OXS_SIGN_TTL;
	strip(query);
	return OXS_SIGN_OK;
}

/* ---------------------------------------------------------------------------------------
 * The capability of a signed embed (sign.h, decision 92): the whole rule.
 *
 *   cap = EXPIRES "." hex(HMAC-SHA256(key, "CAP\n/models/ID\n" + EXPIRES))
 *
 * It reads (GET, HEAD) /models/ID and what is under it, but not /models/ID/diff/...
 * (that reads a second model), until EXPIRES.  "CAP\n" cannot begin a link's canonical
 * request ("GET\n"), so neither stands for the other.  Every route under /models/{id}
 * takes {id} from that first segment (router.h), so the prefix is the model.
 */
static bool cap_mac(const oxs_sign_key *key, const char *id, int64_t expires, unsigned char mac[32])
{
	char msg[OXST_ID_LEN + 64];
	int n = snprintf(msg, sizeof(msg), "CAP\n/models/%s\n%" PRId64, id, expires);
	return n > 0 && (size_t)n < sizeof(msg) && hmac_sha256(key, msg, (size_t)n, mac);
}

bool oxs_sign_cap(const oxs_sign_key *key, const char *id, int64_t expires,
                  char out[OXS_SIGN_CAP_MAX + 1])
{
	unsigned char mac[32];
	if (strlen(id) != OXST_ID_LEN || !cap_mac(key, id, expires, mac))
		return false;
	int n = snprintf(out, OXS_SIGN_CAP_MAX + 1, "%" PRId64 ".", expires);
	if (n <= 0 || (size_t)n + 2 * sizeof(mac) > OXS_SIGN_CAP_MAX)
		return false;
	oxs_hex(out + n, mac, sizeof(mac));
	return true;
}

oxs_sign_result oxs_sign_cap_check(const oxs_sign_key *key, const char *path, const char *cap,
                                   int64_t now, unsigned max_ttl)
{
	const char *dot = strchr(cap, '.');
	size_t elen = dot != NULL ? (size_t)(dot - cap) : 0;
	if (elen == 0 || elen > 12 || strspn(cap, "0123456789") != elen || strlen(dot + 1) != 64 ||
	    strspn(dot + 1, "0123456789abcdef") != 64)
		return OXS_SIGN_MALFORMED;
	unsigned char got[32], mac[32];
	for (int i = 0; i < 32; i++)
		got[i] = (unsigned char)(hexdigit(dot[1 + 2 * i]) * 16 + hexdigit(dot[2 + 2 * i]));
	int64_t expires = strtoll(cap, NULL, 10);
	/* the scope: /models/ID exactly or /models/ID/..., not its diffs */
	char id[OXST_ID_LEN + 1];
	const char *rest = path + 8 + OXST_ID_LEN;
	if (strncmp(path, "/models/", 8) != 0 || strspn(path + 8, "0123456789abcdef") != OXST_ID_LEN ||
	    (*rest != '\0' && *rest != '/') || strncmp(rest, "/diff/", 6) == 0)
		return OXS_SIGN_MISMATCH;
	memcpy(id, path + 8, OXST_ID_LEN);
	id[OXST_ID_LEN] = '\0';
	if (!cap_mac(key, id, expires, mac) || CRYPTO_memcmp(got, mac, 32) != 0)
		return OXS_SIGN_MISMATCH; /* another model, another key, a changed byte */
	if (now > expires)
		return OXS_SIGN_EXPIRED;
	if (expires - now > (int64_t)max_ttl)
		return OXS_SIGN_TTL;
	return OXS_SIGN_OK;
}

int oxs_sign_request(oxs_req *r)
{
	if ((r->method != OXS_M_GET && r->method != OXS_M_HEAD) || r->url == NULL)
		return -1;
	oxs_server *srv = r->srv;
	const char *cap = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "X-Onnxviz-Cap");
	bool link = oxs_sign_present(r->query); /* a link's signature decides before a cap */
	if (!link && cap == NULL)
		return -1;
	/* expires, before the check takes it out of the query: the answer may sign its own
	 * links until then (embed.c) */
	int64_t expires = 0;
	for (const char *p = r->query; p != NULL && *p != '\0'; p = strchr(p, '&'), p = p ? p + 1 : p) {
		if (strncmp(p, "expires=", 8) == 0) {
			expires = strtoll(p + 8, NULL, 10);
			break;
		}
	}
	oxs_sign_result res = srv->sign_key == NULL ? OXS_SIGN_DISABLED
	                      : !link
	                          ? oxs_sign_cap_check(srv->sign_key, r->url, cap, (int64_t)time(NULL),
	                                               srv->cfg.sign_max_ttl)
	                          : oxs_sign_check(srv->sign_key, r->url, r->query, (int64_t)time(NULL),
	                                           srv->cfg.sign_max_ttl);
	if (res == OXS_SIGN_OK && !link)
		return 0; /* a capability: its answer's links stay as they are */
	if (res == OXS_SIGN_OK) {
		r->signed_expires = expires;
		return 0;
	}
	static const char *const why[] = {
	    [OXS_SIGN_MALFORMED] = "a signed link has one expires and one signature of 64 hex digits",
	    [OXS_SIGN_MISMATCH] = "the signature (or X-Onnxviz-Cap) does not match this path and "
	                          "query",
	    [OXS_SIGN_EXPIRED] = "the signed link has expired",
	    [OXS_SIGN_TTL] = "the signed link expires further ahead than the server allows "
	                     "(--sign-max-ttl)",
	    [OXS_SIGN_DISABLED] = "this server signs no links (--sign-secret-file)",
	};
	oxs_reply_error(r, 403, oxs_sign_code(res), "", "%s", why[res]);
	return 403;
}
