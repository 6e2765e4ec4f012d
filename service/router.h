/*
 * router.h — the route table and the matcher (router.c): which route a decoded path is,
 * its methods, who may call it and whether it takes a body.  A leaf: which handler
 * answers a route is routes.c's (oxs_route_handler, routes.h), so that handlers may look
 * their route up without needing every other handler.
 */
#ifndef OXS_ROUTER_H
#define OXS_ROUTER_H

#include <stdbool.h>
#include <stddef.h>

#define OXS_TENSOR_KEY_MAX 1024 /* longest tensor name or ref in a preview URL */

enum {
	OXS_M_GET = 1,
	OXS_M_HEAD = 2,
	OXS_M_POST = 4,
	OXS_M_DELETE = 8,
	OXS_M_OTHER = 16,
	OXS_M_PATCH = 32 /* resumable uploads only (resumable.c): routes whose methods name it */
};

typedef enum {
	OXS_ACCESS_OPEN = 0, /* anyone */
	OXS_ACCESS_READ,     /* the read token when reads are protected */
	OXS_ACCESS_UPLOAD,   /* the token when one is configured */
	OXS_ACCESS_ADMIN     /* the token, and refused when none is configured */
} oxs_access;

typedef struct oxs_route {
	const char *pattern;
	const char *methods; /* for Allow and the OpenAPI test: "GET HEAD POST" */
	oxs_access get_access, post_access, del_access;
	bool upload;         /* POST streams a model body (upload.c) */
	bool small_body;     /* POST reads its body into memory, bounded (heat_svc.c) */
} oxs_route;

/* The routes, by index (the table's order). */
enum {
	OXS_R_INDEX,
	OXS_R_HEALTHZ,
	OXS_R_READYZ,
	OXS_R_METRICS,
	OXS_R_OPENAPI,
	OXS_R_MODELS,
	OXS_R_MODEL,
	OXS_R_GRAPH_SVG,
	OXS_R_GRAPH_JSON,
	OXS_R_GRAPH_DOT,
	OXS_R_DOCUMENT,
	OXS_R_COST,
	OXS_R_NODE,
	OXS_R_SEARCH,
	OXS_R_CHECK,
	OXS_R_MODEL_ONNX,
	OXS_R_TENSOR,
	OXS_R_OVERLAYS,
	OXS_R_OVERLAY,
	OXS_R_DIFF_JSON,
	OXS_R_DIFF_SVG,
	OXS_R_DIFF_DOT,
	OXS_R_FILE,
	OXS_R_FILE_SVG,
	OXS_R_FILE_JSON,
	OXS_R_FILE_DOT,
	OXS_R_FILE_DOCUMENT,
	OXS_R_FILE_NODE,
	OXS_R_FILE_SEARCH,
	OXS_R_FILE_CHECK,
	OXS_R_FILE_TENSOR,
	OXS_R_POST_SVG,
	OXS_R_POST_JSON,
	OXS_R_POST_DOT,
	OXS_R_POST_DIFF_JSON,
	OXS_R_POST_DIFF_SVG,
	OXS_R_UPLOADS,
	OXS_R_UPLOAD,
	OXS_R_ASSET,
	OXS_R__COUNT
};

/* The web page's files (web/embed.sh generates the table into build/gen/): served by
 * routes.c, matched by a final {file} segment. */
struct oxw_asset {
	const char *path;
	const char *type;
	const unsigned char *data;
	size_t size;
};
extern const struct oxw_asset oxw_assets[];

/* Match a decoded path: the route index (params filled) or -1.  {id} takes a segment
 * (kept in id only when valid), {path} (in fpath) the segments up to and including the
 * first ending in ".onnx" or ".pb", a final {name} (in param) the rest of the path,
 * slashes included; other {x} one segment (in param). */
int oxs_route_match(const char *path, char *id, char *param, size_t paramsize, char *fpath,
                    size_t fpathsize);
const oxs_route *oxs_route_at(int i);
const char *oxs_route_pattern(int i); /* "unmatched" for -1 */
size_t oxs_route_count(void);
/* The route table, as the server answers it: pattern ("/models/{id}") and methods
 * ("GET HEAD DELETE").  False past the end. */
bool oxs_route_get(size_t i, const char **pattern, const char **methods);

/* The OpenAPI document served at /openapi.json (service/openapi.json, embedded at build
 * time). */
const char *oxs_openapi(size_t *len);

#endif /* OXS_ROUTER_H */
