/*
 * util.c — small pure helpers of the service: ids, hex, query strings, ETag matching,
 * JSON strings and the JSON of model meta.  No allocation except through the caller's
 * oxr_buf (and jansson's, reading meta).
 */
#include "render/oxr.h"
#include "service/oxs.h"

#include <inttypes.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool oxs_id_valid(const char *s)
{
	if (s == NULL)
		return false;
	size_t i = 0;
	for (; i < OXS_ID_LEN; i++) {
		char c = s[i];
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return false;
	}
	return s[i] == '\0';
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decode s[0..n) in place (%XX, '+' = space) and NUL-terminate it; false on a bad
 * escape or a decoded NUL. */
static bool decode_in_place(char *s, size_t n)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '+') {
			c = ' ';
		} else if (c == '%') {
			if (n - i < 3)
				return false;
			int hi = hexval(s[i + 1]), lo = hexval(s[i + 2]);
			if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
				return false;
			c = (char)(hi * 16 + lo);
			i += 2;
		}
		s[o++] = c;
	}
	s[o] = '\0';
	return true;
}

int oxs_query_split(char *query, oxs_query_pair *out, size_t max)
{
	size_t n = 0;
	char *p = query;
	while (*p != '\0') {
		char *amp = strchr(p, '&');
		size_t len = amp ? (size_t)(amp - p) : strlen(p);
		char *next = amp ? amp + 1 : p + len;
		if (len > 0) {
			if (n == max)
				return -1;
			char *eq = memchr(p, '=', len);
			size_t klen = eq ? (size_t)(eq - p) : len;
			if (eq != NULL && !decode_in_place(eq + 1, len - klen - 1))
				return -1;
			if (!decode_in_place(p, klen))
				return -1;
			/* without '=', the key's own terminator serves as the empty value */
			char *val = eq != NULL ? eq + 1 : p + strlen(p);
			out[n].key = p;
			out[n].value = val;
			n++;
		}
		p = next;
	}
	return (int)n;
}

/* Skip optional whitespace and commas. */
static const char *skip_sep(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == ',')
		p++;
	return p;
}

bool oxs_etag_match(const char *inm, const char *etag)
{
	if (inm == NULL || etag == NULL)
		return false;
	size_t elen = strlen(etag);
	/* weak comparison: compare the opaque tags, ignoring a W/ prefix on either side */
	if (elen >= 2 && etag[0] == 'W' && etag[1] == '/') {
		etag += 2;
		elen -= 2;
	}
	const char *p = skip_sep(inm);
	while (*p != '\0') {
		if (*p == '*')
			return true;
		if (p[0] == 'W' && p[1] == '/')
			p += 2;
		if (*p != '"')
			return false; /* malformed list: no match */
		const char *end = strchr(p + 1, '"');
		if (end == NULL)
			return false;
		size_t len = (size_t)(end - p) + 1;
		if (len == elen && memcmp(p, etag, len) == 0)
			return true;
		p = skip_sep(end + 1);
	}
	return false;
}

bool oxs_json_string(oxr_buf *b, const char *s, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)s;
	oxr_buf_append(b, "\"", 1);
	size_t run = 0; /* start of the pending run of bytes copied verbatim */
	size_t i = 0;
	while (i < n) {
		unsigned char c = u[i];
		const char *esc = NULL;
		char tmp[8];
		size_t step = 1;
		if (c == '"')
			esc = "\\\"";
		else if (c == '\\')
			esc = "\\\\";
		else if (c == '\n')
			esc = "\\n";
		else if (c == '\r')
			esc = "\\r";
		else if (c == '\t')
			esc = "\\t";
		else if (c < 0x20 || c == 0x7f) {
			memcpy(tmp, "\\u00", 4);
			tmp[4] = digits[c >> 4];
			tmp[5] = digits[c & 15];
			tmp[6] = '\0';
			esc = tmp;
		} else if (c >= 0x80) {
			uint32_t cp;
			step = oxp_utf8_at(u, n, i, &cp);
			if (step == 0) {
				esc = "\\ufffd";
				step = 1;
			}
		}
		if (esc != NULL) {
			oxr_buf_append(b, s + run, i - run);
			oxr_buf_append(b, esc, strlen(esc));
			run = i + step;
		}
		i += step;
	}
	oxr_buf_append(b, s + run, n - run);
	oxr_buf_append(b, "\"", 1);
	return !b->failed;
}

bool oxs_location_valid(const char *s, const char **rule)
{
	const char *why = NULL;
	size_t n = s ? strlen(s) : 0;
	if (n == 0)
		why = "empty_location";
	else if (n > OXS_LOCATION_MAX)
		why = "location_too_long";
	else if (s[0] == '/')
		why = "absolute_path";
	else if (((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z')) && s[1] == ':')
		why = "drive_path";
	size_t comp = 0, ncomp = 0;
	for (size_t i = 0; why == NULL && i <= n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '/' || c == '\0') {
			const char *start = s + i - comp;
			if (comp == 0)
				why = "empty_component";
			else if (comp > 255)
				why = "location_too_long";
			else if ((comp == 1 && start[0] == '.') ||
			         (comp == 2 && start[0] == '.' && start[1] == '.'))
				why = comp == 1 ? "dot_component" : "dotdot";
			else if (++ncomp > 8)
				why = "too_deep";
			comp = 0;
		} else if (c == '\\') {
			why = "backslash";
		} else if (c < 0x20 || c == 0x7f) {
			why = "control_character";
		} else {
			comp++;
		}
	}
	if (rule != NULL)
		*rule = why;
	return why == NULL;
}

static int cmp_bundle_file(const void *a, const void *b)
{
	return strcmp(((const oxs_bundle_file *)a)->location,
	              ((const oxs_bundle_file *)b)->location);
}

bool oxs_bundle_id(const char *model_sha, uint64_t model_size, oxs_bundle_file *files,
                   size_t n, char out[OXS_ID_LEN + 1])
{
	if (n == 0) {
		snprintf(out, OXS_ID_LEN + 1, "%s", model_sha);
		return true;
	}
	qsort(files, n, sizeof(*files), cmp_bundle_file);
	unsigned char md[32];
	unsigned int mdlen = 0;
	char line[OXS_LOCATION_MAX + 128];
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	bool ok = ctx != NULL && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1;
	int len = snprintf(line, sizeof(line), "onnxviz-bundle/1\nmodel %s %" PRIu64 "\n",
	                   model_sha, model_size);
	ok = ok && EVP_DigestUpdate(ctx, line, (size_t)len) == 1;
	for (size_t i = 0; ok && i < n; i++) {
		len = snprintf(line, sizeof(line), "file %s %" PRIu64 " %s\n", files[i].sha256,
		               files[i].size, files[i].location);
		ok = len > 0 && (size_t)len < sizeof(line) &&
		     EVP_DigestUpdate(ctx, line, (size_t)len) == 1;
	}
	ok = ok && EVP_DigestFinal_ex(ctx, md, &mdlen) == 1 && mdlen == 32;
	EVP_MD_CTX_free(ctx);
	if (ok)
		oxs_hex(out, md, 32);
	return ok;
}

/* ---------------------------------------------------------------------------------------
 * Model meta (kept with a model at upload, returned by listings)
 */
static void meta_str(oxr_buf *b, const char *key, const char *v, bool comma)
{
	oxr_buf_printf(b, "%s\"%s\":", comma ? "," : "", key);
	if (v[0] == '\0')
		oxr_buf_printf(b, "null");
	else
		oxs_json_string(b, v, strlen(v));
}

bool oxs_meta_json(oxr_buf *b, const oxs_model_meta *m)
{
	oxr_buf_printf(b, "{");
	meta_str(b, "name", m->name, false);
	meta_str(b, "graph", m->graph, true);
	meta_str(b, "producer", m->producer, true);
	meta_str(b, "kind", m->kind, true);
	if (m->nodes >= 0)
		oxr_buf_printf(b, ",\"nodes\":%" PRId64 "}", m->nodes);
	else
		oxr_buf_printf(b, ",\"nodes\":null}");
	return !b->failed;
}

/* A string member (null or absent: ""); false when of another type or too long. */
static bool meta_get(json_t *o, const char *key, char *out, size_t size)
{
	json_t *v = json_object_get(o, key);
	out[0] = '\0';
	if (v == NULL || json_is_null(v))
		return true;
	if (!json_is_string(v) || json_string_length(v) >= size)
		return false;
	memcpy(out, json_string_value(v), json_string_length(v) + 1);
	return strlen(out) == json_string_length(v); /* no NUL inside */
}

bool oxs_meta_parse(const char *json, size_t len, oxs_model_meta *out)
{
	memset(out, 0, sizeof(*out));
	out->nodes = -1;
	if (len > 8192)
		return false;
	json_t *o = json_loadb(json, len, JSON_REJECT_DUPLICATES, NULL);
	bool ok = json_is_object(o) && meta_get(o, "name", out->name, sizeof(out->name)) &&
	          meta_get(o, "graph", out->graph, sizeof(out->graph)) &&
	          meta_get(o, "producer", out->producer, sizeof(out->producer)) &&
	          meta_get(o, "kind", out->kind, sizeof(out->kind));
	json_t *n = ok ? json_object_get(o, "nodes") : NULL;
	if (json_is_integer(n) && json_integer_value(n) >= 0)
		out->nodes = (int64_t)json_integer_value(n);
	else if (n != NULL && !json_is_null(n))
		ok = false;
	json_decref(o);
	return ok;
}
