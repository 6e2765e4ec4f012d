/*
 * ids.c — what names a stored model and what is kept with it: ids (SHA-256 in hex), the
 * id of a model stored with data files (a bundle), the rules for those files' locations,
 * and the JSON of model meta.  Pure: no allocation except through the caller's oxr_buf
 * (and jansson's, reading meta).
 */
#include "store/internal.h"

#include <inttypes.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool oxst_id_valid(const char *s)
{
	if (s == NULL)
		return false;
	size_t i = 0;
	for (; i < OXST_ID_LEN; i++) {
		char c = s[i];
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return false;
	}
	return s[i] == '\0';
}

bool oxst_location_valid(const char *s, const char **rule)
{
	const char *why = NULL;
	size_t n = s ? strlen(s) : 0;
	if (n == 0)
		why = "empty_location";
	else if (n > OXST_LOCATION_MAX)
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
	return strcmp(((const oxst_bundle_file *)a)->location,
	              ((const oxst_bundle_file *)b)->location);
}

bool oxst_bundle_id(const char *model_sha, uint64_t model_size, oxst_bundle_file *files,
                   size_t n, char out[OXST_ID_LEN + 1])
{
	if (n == 0) {
		snprintf(out, OXST_ID_LEN + 1, "%s", model_sha);
		return true;
	}
	qsort(files, n, sizeof(*files), cmp_bundle_file);
	unsigned char md[32];
	unsigned int mdlen = 0;
	char line[OXST_LOCATION_MAX + 128];
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
		oxst_hex(out, md, 32);
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
		oxr_json_string(b, v, strlen(v));
}

bool oxst_meta_json(oxr_buf *b, const oxst_model_meta *m)
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

bool oxst_meta_parse(const char *json, size_t len, oxst_model_meta *out)
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
