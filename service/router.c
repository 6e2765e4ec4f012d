/*
 * router.c — the route table and the matcher: which route a path is, its methods, who may
 * call it, whether it takes a body.  Which handler answers a route is routes.c's
 * (oxs_route_handler).
 *
 * The table is the single truth about what the server answers: the matcher, the Allow
 * header, the metrics labels and the OpenAPI test (tests/unit/test_openapi.c checks the
 * table against service/openapi.json in both directions) all read it.
 */
#include "service/router.h"
#include "store/oxst.h" /* ids */

#include <stdio.h>
#include <string.h>

/* service/openapi.json (service/embed-openapi.sh generates build/gen/openapi.c). */
extern const char oxs_openapi_json[];
extern const size_t oxs_openapi_json_len;

#define OPEN OXS_ACCESS_OPEN
#define READ OXS_ACCESS_READ
#define UPLOAD OXS_ACCESS_UPLOAD
#define ADMIN OXS_ACCESS_ADMIN

static const oxs_route routes[OXS_R__COUNT] = {
#define ROUTE(name, pattern, methods, get, post, del, upload, small_body, ...) \
	[OXS_R_##name] = {pattern, methods, get, post, del, upload, small_body},
    OXS_ROUTES(ROUTE)
#undef ROUTE
};

size_t oxs_route_count(void)
{
	return OXS_R__COUNT;
}

const oxs_route *oxs_route_at(int i)
{
	return &routes[i];
}

const char *oxs_route_pattern(int i)
{
	return i >= 0 && i < OXS_R__COUNT ? routes[i].pattern : "unmatched";
}

bool oxs_route_get(size_t i, const char **pattern, const char **methods)
{
	if (i >= OXS_R__COUNT)
		return false;
	*pattern = routes[i].pattern;
	*methods = routes[i].methods;
	return true;
}

static const struct oxw_asset *find_asset(const char *path)
{
	for (const struct oxw_asset *a = oxw_assets; a->path != NULL; a++)
		if (strcmp(a->path, path) == 0)
			return a;
	return NULL;
}

/* Match one path segment against one pattern segment (both [p, p+n)); captures
 * parameters.  The path segment never contains '/'. */
static bool match_segment(const char *pat, size_t pn, const char *seg, size_t sn, char *id,
                          char *param, size_t paramsize)
{
	if (pn == 0 || pat[0] != '{')
		return pn == sn && memcmp(pat, seg, pn) == 0;
	if (sn == 0)
		return false;
	if (pn == 4 && memcmp(pat, "{id}", 4) == 0) {
		/* any segment routes here; only a valid id is kept (handlers answer 404) */
		id[0] = '\0';
		if (sn == OXST_ID_LEN) {
			memcpy(id, seg, sn);
			id[sn] = '\0';
			if (!oxst_id_valid(id))
				id[0] = '\0';
		}
		return true;
	}
	/* "{other}.json": the segment ends with what follows the brace, which is not kept */
	const char *close = memchr(pat, '}', pn);
	size_t suffix = close != NULL ? pn - (size_t)(close + 1 - pat) : 0;
	if (suffix > 0) {
		if (sn <= suffix || memcmp(seg + sn - suffix, close + 1, suffix) != 0)
			return false;
		sn -= suffix;
	}
	if (sn >= paramsize)
		return false;
	memcpy(param, seg, sn);
	param[sn] = '\0';
	if (pn == 6 && memcmp(pat, "{file}", 6) == 0) {
		char path[OXS_TENSOR_KEY_MAX + 2];
		snprintf(path, sizeof(path), "/%s", param);
		return find_asset(path) != NULL || strcmp(param, "index.html") == 0;
	}
	return true;
}

/* A segment naming a model file under --models-dir ends the {path} capture. */
static bool model_segment(const char *s, size_t n)
{
	return (n > 5 && memcmp(s + n - 5, ".onnx", 5) == 0) ||
	       (n > 3 && memcmp(s + n - 3, ".pb", 3) == 0);
}

/* {path}: segments from s up to and including the first model file name; *se is set to
 * the '/' after it (or NULL at the end).  False when none or too long. */
static bool capture_path(const char *s, const char **se, char *fpath, size_t fpathsize)
{
	const char *p = s;
	for (;;) {
		const char *e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (model_segment(p, n)) {
			size_t len = (size_t)(p + n - s);
			if (len >= fpathsize)
				return false;
			memcpy(fpath, s, len);
			fpath[len] = '\0';
			*se = e;
			return true;
		}
		if (e == NULL)
			return false;
		p = e + 1;
	}
}

int oxs_route_match(const char *path, char *id, char *param, size_t paramsize, char *fpath,
                    size_t fpathsize)
{
	id[0] = '\0';
	param[0] = '\0';
	fpath[0] = '\0';
	if (path == NULL || path[0] != '/')
		return -1;
	for (int i = 0; i < OXS_R__COUNT; i++) {
		const char *p = routes[i].pattern + 1, *s = path + 1;
		bool ok = true;
		for (;;) {
			const char *pe = strchr(p, '/'), *se = strchr(s, '/');
			size_t pn = pe ? (size_t)(pe - p) : strlen(p);
			size_t sn = se ? (size_t)(se - s) : strlen(s);
			if (pn == 6 && memcmp(p, "{path}", 6) == 0) {
				if (!capture_path(s, &se, fpath, fpathsize)) {
					ok = false;
					break;
				}
			} else if (pe == NULL && pn == 6 && memcmp(p, "{name}", 6) == 0) {
				/* the rest of the path: tensor names may hold '/' */
				sn = strlen(s);
				if (sn == 0 || sn >= paramsize) {
					ok = false;
					break;
				}
				memcpy(param, s, sn + 1);
				break;
			} else if (!match_segment(p, pn, s, sn, id, param, paramsize)) {
				ok = false;
				break;
			}
			if ((pe == NULL) != (se == NULL)) {
				ok = false;
				break;
			}
			if (pe == NULL)
				break;
			p = pe + 1;
			s = se + 1;
		}
		if (ok)
			return i;
		id[0] = '\0';
		param[0] = '\0';
		fpath[0] = '\0';
	}
	return -1;
}

const char *oxs_openapi(size_t *len)
{
	*len = oxs_openapi_json_len;
	return oxs_openapi_json;
}
