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

/* The routes: one line each, in the table's order (the index is OXS_R_<NAME>).
 *   X(NAME, pattern, methods, GET access, POST access, DELETE access, upload, small_body,
 *     GET handler, POST handler, DELETE handler)
 * upload: POST streams a model body (upload.c); small_body: POST reads its body into
 * memory, bounded (heat_svc.c).  Handlers are routes.c's (`_`: none; PATCH is http.c's).
 * router.c expands the list into the route table, routes.c into the handler table, so a
 * new route is one line here. */
#define OXS_ROUTES(X) \
	X(INDEX, "/", "GET HEAD", OPEN, OPEN, OPEN, false, false, h_index, _, _) \
	X(HEALTHZ, "/healthz", "GET HEAD", OPEN, OPEN, OPEN, false, false, h_healthz, _, _) \
	X(READYZ, "/readyz", "GET HEAD", OPEN, OPEN, OPEN, false, false, h_readyz, _, _) \
	X(METRICS, "/metrics", "GET HEAD", OPEN, OPEN, OPEN, false, false, h_metrics, _, _) \
	X(OPENAPI, "/openapi.json", "GET HEAD", OPEN, OPEN, OPEN, false, false, h_openapi, _, _) \
	X(MODELS, "/models", "GET HEAD POST", READ, UPLOAD, OPEN, true, false, h_list, _, _) \
	X(MODEL, "/models/{id}", "GET HEAD DELETE", READ, OPEN, ADMIN, false, false, h_model, _, h_delete) \
	X(GRAPH_SVG, "/models/{id}/graph.svg", "GET HEAD", READ, OPEN, OPEN, false, false, h_graph, _, _) \
	X(GRAPH_JSON, "/models/{id}/graph.json", "GET HEAD", READ, OPEN, OPEN, false, false, h_graph, _, _) \
	X(GRAPH_DOT, "/models/{id}/graph.dot", "GET HEAD", READ, OPEN, OPEN, false, false, h_graph, _, _) \
	X(GRAPH_PNG, "/models/{id}/graph.png", "GET HEAD", READ, OPEN, OPEN, false, false, h_graph, _, _) \
	X(CARD_PNG, "/models/{id}/card.png", "GET HEAD", READ, OPEN, OPEN, false, false, h_card, _, _) \
	X(DOCUMENT, "/models/{id}/document.json", "GET HEAD", READ, OPEN, OPEN, false, false, h_document, _, _) \
	X(COST, "/models/{id}/cost.json", "GET HEAD", READ, OPEN, OPEN, false, false, h_cost, _, _) \
	X(NODE, "/models/{id}/nodes/{node_id}", "GET HEAD", READ, OPEN, OPEN, false, false, h_node, _, _) \
	X(SEARCH, "/models/{id}/search", "GET HEAD", READ, OPEN, OPEN, false, false, h_search, _, _) \
	X(CHECK, "/models/{id}/check", "GET HEAD", READ, OPEN, OPEN, false, false, h_check, _, _) \
	X(MODEL_ONNX, "/models/{id}/model.onnx", "GET HEAD", READ, OPEN, OPEN, false, false, h_model_onnx, _, _) \
	X(TENSOR, "/models/{id}/tensors/{name}", "GET HEAD", READ, OPEN, OPEN, false, false, h_tensor, _, _) \
	X(OVERLAYS, "/models/{id}/overlays", "POST", READ, UPLOAD, OPEN, false, true, _, oxs_overlay_post, _) \
	X(OVERLAY, "/models/{id}/overlays/{oid}", "GET HEAD", READ, OPEN, OPEN, false, false, oxs_overlay_get, _, _) \
	X(DIFF_LAYOUT, "/models/{id}/diff/{other}.layout.json", "GET HEAD", READ, OPEN, OPEN, false, false, h_diff, _, _) \
	X(DIFF_JSON, "/models/{id}/diff/{other}.json", "GET HEAD", READ, OPEN, OPEN, false, false, h_diff, _, _) \
	X(DIFF_SVG, "/models/{id}/diff/{other}.svg", "GET HEAD", READ, OPEN, OPEN, false, false, h_diff, _, _) \
	X(DIFF_DOT, "/models/{id}/diff/{other}.dot", "GET HEAD", READ, OPEN, OPEN, false, false, h_diff, _, _) \
	X(DIFF_PNG, "/models/{id}/diff/{other}.png", "GET HEAD", READ, OPEN, OPEN, false, false, h_diff, _, _) \
	X(FILE, "/files/{path}", "GET HEAD", READ, OPEN, OPEN, false, false, h_model, _, _) \
	X(FILE_SVG, "/files/{path}/graph.svg", "GET HEAD", READ, OPEN, OPEN, false, false, h_graph, _, _) \
	X(FILE_JSON, "/files/{path}/graph.json", "GET HEAD", READ, OPEN, OPEN, false, false, h_graph, _, _) \
	X(FILE_DOT, "/files/{path}/graph.dot", "GET HEAD", READ, OPEN, OPEN, false, false, h_graph, _, _) \
	X(FILE_PNG, "/files/{path}/graph.png", "GET HEAD", READ, OPEN, OPEN, false, false, h_graph, _, _) \
	X(FILE_CARD, "/files/{path}/card.png", "GET HEAD", READ, OPEN, OPEN, false, false, h_card, _, _) \
	X(FILE_DOCUMENT, "/files/{path}/document.json", "GET HEAD", READ, OPEN, OPEN, false, false, h_document, _, _) \
	X(FILE_NODE, "/files/{path}/nodes/{node_id}", "GET HEAD", READ, OPEN, OPEN, false, false, h_node, _, _) \
	X(FILE_SEARCH, "/files/{path}/search", "GET HEAD", READ, OPEN, OPEN, false, false, h_search, _, _) \
	X(FILE_CHECK, "/files/{path}/check", "GET HEAD", READ, OPEN, OPEN, false, false, h_check, _, _) \
	X(FILE_TENSOR, "/files/{path}/tensors/{name}", "GET HEAD", READ, OPEN, OPEN, false, false, h_tensor, _, _) \
	X(POST_SVG, "/graph.svg", "POST", OPEN, UPLOAD, OPEN, true, false, _, _, _) \
	X(POST_JSON, "/graph.json", "POST", OPEN, UPLOAD, OPEN, true, false, _, _, _) \
	X(POST_DOT, "/graph.dot", "POST", OPEN, UPLOAD, OPEN, true, false, _, _, _) \
	X(POST_PNG, "/graph.png", "POST", OPEN, UPLOAD, OPEN, true, false, _, _, _) \
	X(POST_DIFF_JSON, "/diff.json", "POST", OPEN, UPLOAD, OPEN, true, false, _, _, _) \
	X(POST_DIFF_SVG, "/diff.svg", "POST", OPEN, UPLOAD, OPEN, true, false, _, _, _) \
	X(DIFF_MD, "/diff.md", "GET HEAD", READ, OPEN, OPEN, false, false, h_diff_md, _, _) \
	X(SIGN, "/sign", "POST", OPEN, READ, OPEN, false, true, _, oxs_sign_post, _) \
	X(POST_DIFF_PNG, "/diff.png", "POST", OPEN, UPLOAD, OPEN, true, false, _, _, _) \
	X(UPLOADS, "/uploads", "POST", OPEN, UPLOAD, OPEN, false, false, _, oxs_resumable_create, _) \
	X(UPLOAD, "/uploads/{uid}", "GET HEAD PATCH DELETE", UPLOAD, UPLOAD, UPLOAD, false, false, oxs_resumable_get, _, oxs_resumable_delete) \
	X(EMBED, "/embed/{id}", "GET HEAD", READ, OPEN, OPEN, false, false, oxs_embed_get, _, _) \
	X(SHARE, "/m/{id}", "GET HEAD", READ, OPEN, OPEN, false, false, oxs_share_get, _, _) \
	X(OEMBED, "/oembed", "GET HEAD", READ, OPEN, OPEN, false, false, oxs_oembed_get, _, _) \
	X(ASSET, "/{file}", "GET HEAD", OPEN, OPEN, OPEN, false, false, h_asset, _, _)

enum {
#define OXS_ROUTE_INDEX(name, ...) OXS_R_##name,
	OXS_ROUTES(OXS_ROUTE_INDEX)
#undef OXS_ROUTE_INDEX
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
