/*
 * routes.c — which handler answers each route (oxs_route_handler), and the handlers of
 * everything except uploads (upload.c, resumable.c) and overlays (heat_svc.c).
 *
 * The route table itself (patterns, methods, access, body kind) and the matcher are
 * router.c's; this file's table is indexed by the same OXS_R_* and holds only handlers.
 */
#include "service/routes.h"
#include "parser/oxp.h"
#include "render/oxr.h"
#include "service/art.h"
#include "service/artifacts.h"
#include "service/cache.h"
#include "service/clock.h"
#include "service/deadline.h"
#include "service/embed.h"
#include "service/formats.h"
#include "service/gzip.h"
#include "service/hash.h"
#include "service/heat_svc.h"
#include "service/jobs.h"
#include "service/metrics.h"
#include "service/models.h"
#include "service/png.h"
#include "service/query.h"
#include "service/reply.h"
#include "service/request.h"
#include "service/resumable.h"
#include "service/router.h"
#include "service/server.h"
#include "service/sign.h"
#include "store/oxst.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


static const char WEB_CSP[] = "default-src 'self'; object-src 'none'; base-uri 'none'; "
                              "frame-ancestors 'none'; form-action 'self'";

/* Served at / when web/ has no index.html: a form that works without scripts. */
static const char PLACEHOLDER[] =
    "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
    "<title>onnxviz</title></head><body>\n"
    "<h1>onnxviz</h1>\n"
    "<p>Upload an ONNX model to get its id, summary and links to its views.</p>\n"
    "<form method=\"post\" action=\"/models\" enctype=\"multipart/form-data\">\n"
    "<input type=\"file\" name=\"model\" accept=\".onnx\" required>\n"
    "<button type=\"submit\">Upload</button>\n</form>\n"
    "<p>API: <a href=\"/openapi.json\">/openapi.json</a></p>\n"
    "</body></html>\n";

static void h_index(oxs_req *r);
static void h_asset(oxs_req *r);
static void h_healthz(oxs_req *r);
static void h_readyz(oxs_req *r);
static void h_metrics(oxs_req *r);
static void h_openapi(oxs_req *r);
static void h_list(oxs_req *r);
static void h_model(oxs_req *r);
static void h_delete(oxs_req *r);
static void h_graph(oxs_req *r);
static void h_card(oxs_req *r);
static void h_document(oxs_req *r);
static void h_cost(oxs_req *r);
static void h_node(oxs_req *r);
static void h_search(oxs_req *r);
static void h_check(oxs_req *r);
static void h_model_onnx(oxs_req *r);
static void h_tensor(oxs_req *r);
static void h_diff(oxs_req *r);
static void h_diff_md(oxs_req *r);

/* The handler of each route (router.h's OXS_ROUTES; `_` is none; PATCH is http.c's). */
#define _ NULL
static const struct {
	oxs_handler get, post, del;
} handlers[OXS_R__COUNT] = {
#define HANDLERS(name, pattern, methods, ga, pa, da, upload, small_body, get, post, del) \
	[OXS_R_##name] = {get, post, del},
    OXS_ROUTES(HANDLERS)
#undef HANDLERS
};
#undef _

oxs_handler oxs_route_handler(int route, unsigned method)
{
	if (route < 0 || route >= OXS_R__COUNT)
		return NULL;
	if (method == OXS_M_GET || method == OXS_M_HEAD)
		return handlers[route].get;
	if (method == OXS_M_POST)
		return handlers[route].post;
	if (method == OXS_M_DELETE)
		return handlers[route].del;
	return NULL;
}



/* ---------------------------------------------------------------------------------------
 * Static responses, built once: the web page's files and the OpenAPI document.
 */
typedef struct static_resp {
	struct MHD_Response *resp, *nm;
	char etag[48];
	size_t len;
	struct MHD_Response *gz, *gz_nm; /* the gzip'd variant, NULL when not worth it */
	char gz_etag[48];
	size_t gz_len;
} static_resp;

static static_resp *asset_resps;
static size_t nassets;
static static_resp placeholder, openapi;

static bool build_static(static_resp *s, const void *data, size_t len, const char *type,
                         const char *csp)
{
	oxs_etag_of(data, len, s->etag);
	s->len = len;
	s->resp = MHD_create_response_from_buffer(len, (void *)data, MHD_RESPMEM_PERSISTENT);
	s->nm = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
	if (s->resp == NULL || s->nm == NULL)
		return false;
	struct MHD_Response *both[2] = {s->resp, s->nm};
	for (int i = 0; i < 2; i++) {
		if (i == 0)
			MHD_add_response_header(both[i], "Content-Type", type);
		MHD_add_response_header(both[i], "X-Content-Type-Options", "nosniff");
		MHD_add_response_header(both[i], "Referrer-Policy", "no-referrer");
		MHD_add_response_header(both[i], "Content-Security-Policy", csp);
		MHD_add_response_header(both[i], "ETag", s->etag);
		MHD_add_response_header(both[i], "Cache-Control", "no-cache");
	}
	/* compressed once, here (gzip.c); without zlib the page goes plain */
	oxs_response_gzip(s->resp, s->nm, s->etag, data, len, type, &s->gz, &s->gz_nm,
	                  s->gz_etag, &s->gz_len);
	return true;
}

static void free_static(static_resp *s)
{
	if (s->resp)
		MHD_destroy_response(s->resp);
	if (s->nm)
		MHD_destroy_response(s->nm);
	if (s->gz)
		MHD_destroy_response(s->gz);
	if (s->gz_nm)
		MHD_destroy_response(s->gz_nm);
	memset(s, 0, sizeof(*s));
}

bool oxs_routes_init(void)
{
	nassets = 0;
	while (oxw_assets[nassets].path != NULL)
		nassets++;
	asset_resps = calloc(nassets + 1, sizeof(*asset_resps));
	if (asset_resps == NULL)
		return false;
	for (size_t i = 0; i < nassets; i++)
		if (!build_static(&asset_resps[i], oxw_assets[i].data, oxw_assets[i].size,
		                  oxw_assets[i].type, WEB_CSP))
			return false;
	size_t doclen = 0;
	const char *doc = oxs_openapi(&doclen);
	static const char api_csp[] =
	    "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
	return build_static(&placeholder, PLACEHOLDER, sizeof(PLACEHOLDER) - 1,
	                    "text/html; charset=utf-8", WEB_CSP) &&
	       build_static(&openapi, doc, doclen, "application/json",
	                    api_csp);
}

void oxs_routes_free(void)
{
	for (size_t i = 0; asset_resps != NULL && i < nassets; i++)
		free_static(&asset_resps[i]);
	free(asset_resps);
	asset_resps = NULL;
	free_static(&placeholder);
	free_static(&openapi);
}

static void reply_static(oxs_req *r, const static_resp *s)
{
	bool gz = s->gz != NULL && r->gzip_ok;
	bool nm = r->inm[0] != '\0' && oxs_etag_match(r->inm, gz ? s->gz_etag : s->etag);
	/* static responses live until exit: queued directly, never destroyed per request */
	oxs_reply_shared(r, nm ? 304 : 200, gz ? (nm ? s->gz_nm : s->gz) : nm ? s->nm : s->resp,
	                 nm ? 0 : gz ? s->gz_len : s->len);
}

static void serve_asset(oxs_req *r, const char *path)
{
	for (size_t i = 0; i < nassets; i++) {
		if (strcmp(oxw_assets[i].path, path) == 0) {
			reply_static(r, &asset_resps[i]);
			return;
		}
	}
	if (strcmp(path, "/index.html") == 0)
		reply_static(r, &placeholder);
	else
		oxs_reply_error(r, 404, "not_found", "", "no such file");
}

static void h_index(oxs_req *r)
{
	serve_asset(r, "/index.html");
}

static void h_asset(oxs_req *r)
{
	char path[OXS_TENSOR_KEY_MAX + 2];
	snprintf(path, sizeof(path), "/%s", r->param);
	serve_asset(r, path);
}

static void h_openapi(oxs_req *r)
{
	reply_static(r, &openapi);
}

/* ---------------------------------------------------------------------------------------
 * Operations
 */
static void reply_text(oxs_req *r, unsigned status, const char *type, const char *text)
{
	struct MHD_Response *resp = oxs_response_copy(text, strlen(text), type);
	if (resp == NULL) {
		oxs_reply_error(r, 503, "out_of_memory", "", "out of memory");
		return;
	}
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	oxs_reply(r, status, resp, strlen(text));
}

static void h_healthz(oxs_req *r)
{
	reply_text(r, 200, "application/json", "{\"status\":\"ok\"}\n");
}

static void h_readyz(oxs_req *r)
{
	oxs_server *srv = r->srv;
	oxst_stats st;
	memset(&st, 0, sizeof(st));
	srv->store->ops->stats(srv->store, &st);
	if (atomic_load(&srv->stopping)) {
		reply_text(r, 503, "application/json", "{\"status\":\"stopping\"}\n");
	} else if (!srv->store->ops->writable(srv->store)) {
		reply_text(r, 503, "application/json", "{\"status\":\"store not writable\"}\n");
	} else if (st.verifying) {
		/* ready: a model not checked yet is checked before it is first read */
		char text[160];
		snprintf(text, sizeof(text),
		         "{\"status\":\"ready\",\"verifying\":{\"checked\":%" PRIu64 ",\"of\":%" PRIu64
		         "}}\n",
		         st.verified, st.to_verify);
		reply_text(r, 200, "application/json", text);
	} else {
		reply_text(r, 200, "application/json", "{\"status\":\"ready\"}\n");
	}
}

/* A remote store's calls may wait on the network: off the HTTP threads. */
static bool remote(const oxs_req *r)
{
	return r->srv->store->ops->remote;
}



static void h_metrics(oxs_req *r)
{
	oxs_server *srv = r->srv;
	/* the figures the other parts of the server keep; metrics.c keeps the counters */
	oxs_gauges g;
	memset(&g, 0, sizeof(g));
	g.slow_dropped = oxs_deadlines_dropped(srv->deadlines);
	g.slow_bodies = oxs_deadlines_slow_bodies(srv->deadlines);
	if (srv->layout != NULL)
		oxs_pool_counts(srv->layout, &g.layouts_running, &g.layouts_queued);
	if (srv->work != NULL)
		oxs_pool_counts(srv->work, &g.work_running, &g.work_queued);
	srv->store->ops->stats(srv->store, &g.store);
	oxs_cache_stats(srv->cache, &g.cache_bytes, &g.cache_entries);
	oxs_models_stats(srv->models, &g.parsed_models, &g.parsed_bytes);
	g.inflight = atomic_load(&srv->inflight);
	g.uptime_ms = oxs_now_ms() - srv->started_ms;
	oxr_buf uploads;
	oxr_buf_init(&uploads, 1 << 20);
	oxs_resumable_metrics(srv, &uploads);
	g.uploads = &uploads;
	oxr_buf b;
	oxr_buf_init(&b, 16 << 20);
	oxs_metrics_render(&g, &b);
	oxr_buf_free(&uploads);
	oxs_reply_text(r, 200, &b, "text/plain; version=0.0.4; charset=utf-8");
	oxr_buf_free(&b);
}

/* ---------------------------------------------------------------------------------------
 * Query strings
 */
#define MAX_PAIRS 32

/* Split r->query into pairs; replies 400 and returns -1 when malformed. */
static int query_pairs(oxs_req *r, oxs_query_pair *pairs)
{
	int n = oxs_query_split(r->query, pairs, MAX_PAIRS);
	if (n < 0)
		oxs_reply_error(r, 400, "bad_query", "",
		                "malformed query string (bad %%-escape, NUL byte, or over %d "
		                "parameters)",
		                MAX_PAIRS);
	return n;
}

/* Strict whole number in [lo, hi]. */
static bool query_uint(const char *s, unsigned lo, unsigned hi, unsigned *out)
{
	if (s[0] < '0' || s[0] > '9' || strlen(s) > 9)
		return false;
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	if (*end != '\0' || v < lo || v > hi)
		return false;
	*out = (unsigned)v;
	return true;
}


/* ---------------------------------------------------------------------------------------
 * --models-dir files: opened beneath the folder, never through a symbolic link
 */
static bool is_file_route(int route)
{
	return route >= OXS_R_FILE && route <= OXS_R_FILE_TENSOR;
}

/* Open r->fpath under --models-dir: r->file_fd, r->dir_fd (its folder) and r->id, a
 * name of this version of the file (SHA-256 of the path, device, inode, size and
 * change times: a rewritten file gets a new one).  Replies and returns false when the
 * path is refused or missing. */
static bool open_file_route(oxs_req *r)
{
	oxs_server *srv = r->srv;
	if (srv->models_dirfd < 0) {
		oxs_reply_error(r, 404, "not_found", "", "no --models-dir is configured");
		return false;
	}
	const char *rule = NULL;
	char extra[96];
	if (!oxst_location_valid(r->fpath, &rule)) {
		snprintf(extra, sizeof(extra), ",\"rule\":\"%s\"", rule);
		oxs_reply_error(r, 400, "bad_path", extra, "path refused (%s)", rule);
		return false;
	}
	int fd = -1;
	int e = oxp_open_beneath(&fd, srv->models_dirfd, r->fpath, strlen(r->fpath),
	                         O_RDONLY | O_NONBLOCK | O_NOCTTY, 0);
	struct stat st;
	if (fd >= 0 && fstat(fd, &st) != 0) {
		e = errno;
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		rule = e == ENOENT ? "not_found" : e == ELOOP ? "symlink" : e == EXDEV ? "escapes_directory"
		       : e == ENOTDIR ? "not_regular_file" : "io";
		snprintf(extra, sizeof(extra), ",\"rule\":\"%s\"", rule);
		if (e == ENOENT)
			oxs_reply_error(r, 404, "not_found", extra, "no such file under --models-dir");
		else
			oxs_reply_error(r, 403, "path_refused", extra, "path refused (%s)", rule);
		return false;
	}
	if (!S_ISREG(st.st_mode) || st.st_nlink != 1) {
		close(fd);
		rule = S_ISREG(st.st_mode) ? "hard_link" : "not_regular_file";
		snprintf(extra, sizeof(extra), ",\"rule\":\"%s\"", rule);
		oxs_reply_error(r, 403, "path_refused", extra, "path refused (%s)", rule);
		return false;
	}
	char dir[OXST_LOCATION_MAX + 1];
	snprintf(dir, sizeof(dir), "%s", r->fpath);
	char *slash = strrchr(dir, '/');
	int dfd = -1;
	if (slash == NULL)
		dfd = fcntl(srv->models_dirfd, F_DUPFD_CLOEXEC, 0);
	else if (oxp_open_beneath(&dfd, srv->models_dirfd, dir, (size_t)(slash - dir),
	                          O_PATH | O_DIRECTORY, 0) != 0)
		dfd = -1;
	if (dfd < 0) {
		close(fd);
		oxs_reply_error(r, 404, "not_found", "", "the file's folder is gone");
		return false;
	}
	char ver[OXST_LOCATION_MAX + 200];
	snprintf(ver, sizeof(ver),
	         "onnxviz-file/1|%s|%ju|%ju|%jd|%jd.%09ld|%jd.%09ld", r->fpath, (uintmax_t)st.st_dev,
	         (uintmax_t)st.st_ino, (intmax_t)st.st_size, (intmax_t)st.st_mtim.tv_sec,
	         st.st_mtim.tv_nsec, (intmax_t)st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
	oxs_sha256_hex(ver, strlen(ver), r->id, 64);
	r->file_fd = fd;
	r->dir_fd = dfd;
	return true;
}

/* Start r->art for the request's model (a stored one, or a --models-dir file). */
static void art_for(oxs_req *r, oxs_art_kind kind, oxr_format fmt, const oxr_options *opt)
{
	oxs_art_init(&r->art, kind, r->id, fmt, opt);
	if (r->file_fd >= 0)
		oxs_art_file(&r->art, r->file_fd, r->dir_fd, r->fpath);
}

/* ---------------------------------------------------------------------------------------
 * Models
 */
static bool need_model(oxs_req *r)
{
	if (is_file_route(r->route))
		return open_file_route(r);
	/* without waiting: a model not known here yet (stored through another replica, or
	 * not verified yet) is looked up by the job that answers, which says 404 or 503 */
	oxst_store *st = r->srv->store;
	oxst_status s = r->id[0] != '\0' ? st->ops->stat_model(st, r->id, OXST_STAT_NONBLOCK, NULL)
	                                 : OXST_E_NOT_FOUND;
	if (s == OXST_OK || s == OXST_E_AGAIN)
		return true;
	oxs_reply_error(r, 404, "not_found", "", "no such model");
	return false;
}

static void list_models(oxs_req *r);

static void work_list(oxs_req *r)
{
	list_models(r);
	oxs_resume(r);
}

static void h_list(oxs_req *r)
{
	if (remote(r))
		oxs_defer(r, r->srv->work, work_list);
	else
		list_models(r);
}

static void list_models(oxs_req *r)
{
	oxs_query_pair pairs[MAX_PAIRS];
	int n = query_pairs(r, pairs);
	if (n < 0)
		return;
	unsigned limit = 100;
	const char *after = "";
	for (int i = 0; i < n; i++) {
		if (strcmp(pairs[i].key, "limit") == 0) {
			if (!query_uint(pairs[i].value, 1, 1000, &limit)) {
				oxs_reply_error(r, 400, "bad_query", "", "limit: a whole number in 1..1000");
				return;
			}
		} else if (strcmp(pairs[i].key, "after") == 0) {
			after = pairs[i].value;
			if (after[0] != '\0' && !oxst_id_valid(after)) {
				oxs_reply_error(r, 400, "bad_query", "", "after: a model id");
				return;
			}
		}
	}
	oxst_model_info *items = calloc(limit, sizeof(*items));
	if (items == NULL) {
		oxs_reply_error(r, 503, "out_of_memory", "", "out of memory");
		return;
	}
	size_t got = 0;
	uint64_t total = 0;
	oxst_store *st = r->srv->store;
	oxst_status ls = st->ops->list_models(st, after, items, limit, &got, &total);
	if (ls != OXST_OK) {
		free(items);
		oxs_reply_store_error(r, ls, "cannot list the store");
		return;
	}
	static const oxst_model_meta none = {.nodes = -1};
	oxr_buf b, m;
	oxr_buf_init(&b, 0);
	oxr_buf_init(&m, 1 << 16);
	oxr_buf_printf(&b, "{\"total\":%" PRIu64 ",\"models\":[", total);
	size_t shown = 0;
	for (size_t i = 0; i < got; i++) {
		char full[OXST_ID_LEN + 1];
		if (oxs_resumable_moved(r->srv->rs, items[i].id, full))
			continue; /* a structure whose whole model arrived: listed as that model */
		/* the meta kept at upload, as members of the item (null when not kept) */
		m.len = 0;
		oxst_meta_json(&m, items[i].has_meta ? &items[i].meta : &none);
		oxr_buf_printf(&b, "%s{\"id\":\"%s\",\"size\":%" PRIu64 ",\"created\":%" PRId64 ",",
		               shown++ ? "," : "", items[i].id, items[i].size, items[i].created);
		if (!m.failed && m.len >= 2)
			oxr_buf_append(&b, m.data + 1, m.len - 2); /* without its braces */
		oxr_buf_printf(&b, ",\"links\":{\"self\":\"/models/%s\"}}", items[i].id);
	}
	oxr_buf_free(&m);
	oxr_buf_printf(&b, "],\"next\":");
	if (got == limit && got > 0)
		oxr_buf_printf(&b, "\"/models?limit=%u&after=%s\"", limit, items[got - 1].id);
	else
		oxr_buf_printf(&b, "null");
	oxr_buf_printf(&b, "}\n");
	free(items);
	oxs_reply_json(r, 200, &b);
}

static void h_model(oxs_req *r)
{
	if (!need_model(r))
		return;
	art_for(r, OXS_ART_SUMMARY, OXR_FMT_SVG, NULL);
	oxs_art_request(r, &r->art, false);
}

static void h_document(oxs_req *r)
{
	if (!need_model(r))
		return;
	art_for(r, OXS_ART_DOCUMENT, OXR_FMT_SVG, NULL);
	oxs_art_request(r, &r->art, false);
}

/* GET /models/{id}/cost.json[?dims=NAME:VALUE,...] (docs/api.md, "Cost"). */
static void h_cost(oxs_req *r)
{
	oxs_query_pair pairs[MAX_PAIRS];
	int n = query_pairs(r, pairs);
	if (n < 0)
		return;
	const char *dims = "";
	for (int i = 0; i < n; i++) {
		if (strcmp(pairs[i].key, "dims") != 0) {
			oxs_reply_error(r, 400, "bad_query", "", "unknown parameter (cost.json takes dims)");
			return;
		}
		dims = pairs[i].value;
	}
	oxp_cost_bind bind;
	oxp_error e;
	memset(&e, 0, sizeof(e));
	if (strlen(dims) >= sizeof(r->art.u.cost.dims) || oxp_cost_bind_parse(&bind, dims, &e) != OXP_OK) {
		oxs_reply_error(r, 400, "bad_query", "", "%s",
		                strlen(dims) >= sizeof(r->art.u.cost.dims) ? "dims: too long" : e.message);
		return;
	}
	if (!need_model(r))
		return;
	art_for(r, OXS_ART_COST, OXR_FMT_SVG, NULL);
	oxs_art_cost(&r->art, dims);
	oxs_art_request(r, &r->art, false);
}

/* The raster parameters of a .png route (png.c) taken out of pairs; false after the 400.
 * *raster: the route is one. */
static bool route_raster(oxs_req *r, oxs_query_pair *pairs, size_t *np, bool card,
                         oxr_raster *ras, bool *raster)
{
	const oxs_ext_format *e = oxs_format_of_path(oxs_route_at(r->route)->pattern);
	*raster = e != NULL && e->raster;
	char err[300];
	if (*raster && !oxs_raster_query(pairs, np, r->srv->cfg.max_pixels, card, ras, err,
	                                 sizeof(err))) {
		oxs_reply_error(r, 400, "bad_option", "", "%s", err);
		return false;
	}
	return true;
}

/* A drawing's query: the PNG's (w, h, scale, theme: *raster says whether the route is one),
 * the overlay's when hr is not NULL (overlay=, metric=, scale=: heat_svc.c), the view's
 * options; false after the 400. */
static bool drawing_query(oxs_req *r, oxr_options *opt, oxr_raster *ras, bool *raster,
                          oxs_heat_req *hr)
{
	oxs_query_pair pairs[MAX_PAIRS];
	int n = query_pairs(r, pairs);
	if (n < 0)
		return false;
	size_t np = (size_t)n;
	char err[600];
	if (!route_raster(r, pairs, &np, false, ras, raster))
		return false;
	if ((hr != NULL && !oxs_heat_query(pairs, &np, hr, err, sizeof(err))) ||
	    !oxs_query_options(pairs, np, opt, err, sizeof(err))) {
		oxs_reply_error(r, 400, "bad_option", "", "%s", err);
		return false;
	}
	if (*raster) /* a PNG's theme is its drawing's too (render/style.c's palette) */
		opt->theme_dark = ras->theme == OXR_THEME_DARK;
	return true;
}

static void h_graph(oxs_req *r)
{
	oxr_options opt;
	oxr_raster ras;
	bool raster;
	oxs_heat_req hr;
	if (!drawing_query(r, &opt, &ras, &raster, &hr) || !need_model(r))
		return;
	art_for(r, hr.overlay[0] ? OXS_ART_HEAT : OXS_ART_GRAPH,
	        oxs_format_of_route(oxs_route_at(r->route)->pattern), &opt);
	if (hr.overlay[0])
		oxs_art_heat(&r->art, &hr);
	if (raster)
		oxs_art_raster(&r->art, &ras, false);
	oxs_art_request(r, &r->art, false);
}

/* GET .../card.png: the model's card (render/card.c), scale= and theme= only. */
static void h_card(oxs_req *r)
{
	oxs_query_pair pairs[MAX_PAIRS];
	int n = query_pairs(r, pairs);
	if (n < 0)
		return;
	size_t np = (size_t)n;
	oxr_raster ras;
	bool raster;
	if (!route_raster(r, pairs, &np, true, &ras, &raster))
		return;
	if (ras.theme != OXR_THEME_LIGHT) { /* render/card.c draws in the light palette only */
		oxs_reply_error(r, 400, "bad_option", "", "theme: a card is light only");
		return;
	}
	if (!need_model(r))
		return;
	art_for(r, OXS_ART_GRAPH, OXR_FMT_SVG, NULL);
	oxs_art_raster(&r->art, &ras, true);
	oxs_art_request(r, &r->art, false);
}

static void delete_model(oxs_req *r);

static void work_delete(oxs_req *r)
{
	delete_model(r);
	oxs_resume(r);
}

static void h_delete(oxs_req *r)
{
	if (remote(r) && r->id[0] != '\0')
		oxs_defer(r, r->srv->work, work_delete);
	else
		delete_model(r);
}

static void delete_model(oxs_req *r)
{
	oxs_server *srv = r->srv;
	oxst_status st = r->id[0] ? srv->store->ops->delete_model(srv->store, r->id)
	                          : OXST_E_NOT_FOUND;
	if (st != OXST_OK) {
		oxs_reply_store_error(r, st, "cannot delete");
		return;
	}
	char prefix[OXST_ID_LEN + 2];
	snprintf(prefix, sizeof(prefix), "%s|", r->id);
	oxs_cache_purge(srv->cache, prefix);
	oxs_models_forget(srv->models, r->id);
	struct MHD_Response *resp = MHD_create_response_from_buffer(0, (void *)"",
	                                                           MHD_RESPMEM_PERSISTENT);
	if (resp == NULL) {
		oxs_reply_error(r, 503, "out_of_memory", "", "out of memory");
		return;
	}
	oxs_response_common(resp, NULL);
	oxs_reply(r, 204, resp, 0);
}

static void model_onnx(oxs_req *r);

static void work_model_onnx(oxs_req *r)
{
	model_onnx(r);
	oxs_resume(r);
}

static void h_model_onnx(oxs_req *r)
{
	oxst_store *st = r->srv->store;
	oxst_status s = r->id[0] != '\0' ? st->ops->stat_model(st, r->id, OXST_STAT_NONBLOCK, NULL)
	                                 : OXST_E_NOT_FOUND;
	if (s == OXST_E_NOT_FOUND) {
		oxs_reply_error(r, 404, "not_found", "", "no such model");
		return;
	}
	if (s == OXST_E_AGAIN || remote(r)) /* to be fetched or verified first: a job's work */
		oxs_defer(r, r->srv->work, work_model_onnx);
	else
		model_onnx(r);
}

static void model_onnx(oxs_req *r)
{
	char etag[OXST_ID_LEN + 3];
	snprintf(etag, sizeof(etag), "\"%s\"", r->id);
	bool nm = r->inm[0] != '\0' && oxs_etag_match(r->inm, etag);
	int fd = -1;
	uint64_t size = 0;
	oxst_store *st = r->srv->store;
	oxst_status s = st->ops->open_model(st, r->id, &fd, &size);
	if (s != OXST_OK) {
		oxs_reply_store_error(r, s, "cannot read the model");
		return;
	}
	struct MHD_Response *resp;
	if (nm) {
		close(fd);
		resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
	} else {
		resp = MHD_create_response_from_fd64(size, fd); /* sendfile; closes fd */
	}
	if (resp == NULL) {
		if (!nm)
			close(fd);
		oxs_reply_error(r, 503, "out_of_memory", "", "out of memory");
		return;
	}
	oxs_response_immutable(resp, r->srv, etag, nm ? NULL : "application/octet-stream", r->id,
	                       "onnx");
	oxs_reply(r, nm ? 304 : 200, resp, nm ? 0 : size);
}

/* ---------------------------------------------------------------------------------------
 * Node and search: computed on a work thread from the parsed model, not cached (cheap),
 * but content-addressed: ETag from the bytes, immutable.
 */
/* The headers of a computed answer (type NULL for a 304). */
static void computed_headers(oxs_req *r, struct MHD_Response *resp, const char *etag,
                             const char *type)
{
	if (r->file_fd >= 0) { /* a --models-dir file may change: revalidate */
		oxs_response_common(resp, type);
		MHD_add_response_header(resp, "ETag", etag);
		oxs_response_cache(resp, r->srv, false);
	} else {
		oxs_response_immutable(resp, r->srv, etag, type, r->id, "json");
	}
}

/* gzip'd per request when the client accepts it (these are not cached: gzip.c compresses
 * a few KB to a few hundred KB in well under the time it took to compute them). */
static void reply_computed(oxs_req *r, oxr_buf *b)
{
	char etag[48], gz_etag[48];
	oxs_etag_of(b->data ? b->data : "", b->len, etag);
	/* a client revalidating the gzip'd variant is answered before anything is compressed:
	 * the same bytes compress to the same body, so its tag follows from the plain one */
	if (r->gzip_ok && r->inm[0] != '\0' && oxs_gzip_worth("application/json", b->len) &&
	    oxs_gzip_etag(etag, gz_etag) && oxs_etag_match(r->inm, gz_etag)) {
		struct MHD_Response *nm =
		    MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
		if (nm == NULL) {
			oxs_reply_error(r, 503, "out_of_memory", "", "out of memory");
			return;
		}
		computed_headers(r, nm, gz_etag, NULL);
		MHD_add_response_header(nm, "Vary", "Accept-Encoding");
		oxs_reply(r, 304, nm, 0);
		return;
	}
	size_t len = 0, gz_len = 0;
	char *data = oxr_buf_steal(b, &len);
	struct MHD_Response *resp =
	    data ? MHD_create_response_from_buffer_with_free_callback(len, data, free) : NULL;
	struct MHD_Response *nm =
	    resp ? MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT) : NULL;
	if (nm == NULL) {
		if (resp != NULL)
			MHD_destroy_response(resp);
		else
			free(data);
		oxs_reply_error(r, 503, "out_of_memory", "", "out of memory");
		return;
	}
	computed_headers(r, resp, etag, "application/json");
	computed_headers(r, nm, etag, NULL);
	struct MHD_Response *gz = NULL, *gz_nm = NULL;
	bool z = r->gzip_ok && oxs_response_gzip(resp, nm, etag, data, len, "application/json",
	                                         &gz, &gz_nm, gz_etag, &gz_len);
	if (!z && oxs_gzip_worth("application/json", len)) {
		/* the same URL answers gzip'd to a client that accepts it */
		MHD_add_response_header(resp, "Vary", "Accept-Encoding");
		MHD_add_response_header(nm, "Vary", "Accept-Encoding");
	}
	bool m = r->inm[0] != '\0' && oxs_etag_match(r->inm, z ? gz_etag : etag);
	struct MHD_Response *all[4] = {resp, nm, gz, gz_nm};
	int pick = (z ? 2 : 0) + (m ? 1 : 0);
	for (int i = 0; i < 4; i++)
		if (i != pick && all[i] != NULL)
			MHD_destroy_response(all[i]);
	oxs_reply(r, m ? 304 : 200, all[pick], m ? 0 : z ? gz_len : len);
}

/* Reply with the reason a stored model could not be loaded. */
static void reply_load_error(oxs_req *r, oxst_status st, const oxp_error *perr)
{
	if (st == OXST_E_NOT_FOUND) {
		oxs_reply_error(r, 404, "not_found", "", "no such model");
	} else if (st == OXST_E_INVALID) {
		char extra[400], msg[700];
		oxr_buf b;
		oxr_buf_init(&b, sizeof(extra) - 40);
		oxr_json_string(&b, perr->path, strlen(perr->path));
		snprintf(extra, sizeof(extra), ",\"offset\":%" PRIu64 ",\"path\":%s", perr->offset,
		         b.failed ? "\"\"" : b.data);
		oxr_buf_free(&b);
		oxp_error_format(perr, msg, sizeof(msg));
		oxs_reply_error(r, 422, oxp_code_name(perr->code), extra, "%s", msg);
	} else {
		oxs_reply_error(r, 503, oxst_status_name(st), "", "cannot load the model");
	}
}

static void reply_render_error(oxs_req *r, oxr_code rc, const oxr_error *e)
{
	unsigned status = rc == OXR_E_NOT_FOUND ? 404 : rc == OXR_E_OPTION ? 400
	                  : rc == OXR_E_NOMEM       ? 503
	                  : rc == OXR_E_TOO_BIG     ? 422
	                                            : 500;
	oxs_reply_error(r, status, oxr_code_name(rc), "", "%s", e->message);
}

/* Load r's model, run fn on it, reply with its JSON (or the error), resume r. */
static void work_with_model(oxs_req *r,
                            oxr_code (*fn)(oxs_req *r, const oxp_model *m, const oxp_dag *d,
                                           oxr_buf *out, oxr_error *e))
{
	oxs_mentry *me = NULL;
	oxp_error perr;
	memset(&perr, 0, sizeof(perr));
	oxst_status st = oxs_models_get(r->srv->models, r->srv->store, r->id, r->art.src, &me,
	                                &perr);
	if (st != OXST_OK) {
		reply_load_error(r, st, &perr);
	} else if (oxs_mentry_dag(me) == NULL) {
		oxs_reply_error(r, 422, "tensor_upload", "",
		                "this upload is a lone tensor (TensorProto), not a model: it has no "
		                "nodes; see its /tensors/ preview");
		oxs_models_release(r->srv->models, me);
	} else {
		oxr_buf b;
		oxr_error e;
		memset(&e, 0, sizeof(e));
		oxr_buf_init(&b, 64 << 20);
		oxr_code rc = fn(r, oxs_mentry_model(me), oxs_mentry_dag(me), &b, &e);
		if (rc == OXR_OK)
			reply_computed(r, &b);
		else
			reply_render_error(r, rc, &e);
		oxr_buf_free(&b);
		oxs_models_release(r->srv->models, me);
	}
	oxs_resume(r);
}

static oxr_code node_json(oxs_req *r, const oxp_model *m, const oxp_dag *d, oxr_buf *out,
                          oxr_error *e)
{
	return oxr_node_json(m, d, r->param, out, e);
}

static void work_node(oxs_req *r)
{
	work_with_model(r, node_json);
}

static bool node_id_valid(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n >= OXS_PARAM_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return false;
	}
	return true;
}

static void h_node(oxs_req *r)
{
	if (!need_model(r))
		return;
	if (!node_id_valid(r->param)) {
		oxs_reply_error(r, 404, "not_found", "", "no such node");
		return;
	}
	art_for(r, OXS_ART_DOCUMENT, OXR_FMT_SVG, NULL); /* only its source is used */
	oxs_defer(r, r->srv->work, work_node);
}

/* h_search checked the query (now in r->param) and the limit. */
static oxr_code search_json(oxs_req *r, const oxp_model *m, const oxp_dag *d, oxr_buf *out,
                            oxr_error *e)
{
	return oxr_search_json(m, d, r->param, r->limit, out, e);
}

static void work_search(oxs_req *r)
{
	work_with_model(r, search_json);
}

static void h_search(oxs_req *r)
{
	oxs_query_pair pairs[MAX_PAIRS];
	int n = query_pairs(r, pairs);
	if (n < 0)
		return;
	const char *q = NULL;
	unsigned limit = 50;
	for (int i = 0; i < n; i++) {
		if (strcmp(pairs[i].key, "q") == 0) {
			q = pairs[i].value;
		} else if (strcmp(pairs[i].key, "limit") == 0 &&
		           !query_uint(pairs[i].value, 1, 1000, &limit)) {
			oxs_reply_error(r, 400, "bad_query", "", "limit: a whole number in 1..1000");
			return;
		}
	}
	if (q == NULL || q[0] == '\0' || strlen(q) >= OXS_PARAM_MAX) {
		oxs_reply_error(r, 400, "bad_query", "", "q: the text to search for (1..%d bytes)",
		                OXS_PARAM_MAX - 1);
		return;
	}
	if (!need_model(r))
		return;
	snprintf(r->param, sizeof(r->param), "%s", q);
	r->limit = limit;
	art_for(r, OXS_ART_DOCUMENT, OXR_FMT_SVG, NULL); /* only its source is used */
	oxs_defer(r, r->srv->work, work_search);
}

/* The model check (docs/check.md): every problem listed (up to the parser's cap); the
 * external data files are left alone, as in the summary's check. */
static oxr_code check_json(oxs_req *r, const oxp_model *m, const oxp_dag *d, oxr_buf *out,
                           oxr_error *e)
{
	(void)r;
	return oxr_check_json(m, d, -1, OXP_CHECK_MAX_LISTED, out, e);
}

static void work_check(oxs_req *r)
{
	work_with_model(r, check_json);
}

static void h_check(oxs_req *r)
{
	if (!need_model(r))
		return;
	art_for(r, OXS_ART_DOCUMENT, OXR_FMT_SVG, NULL); /* only its source is used */
	oxs_defer(r, r->srv->work, work_check);
}

/* ---------------------------------------------------------------------------------------
 * Tensor previews (preview.c computes them on a work thread; cached like artifacts)
 */
static void h_tensor(oxs_req *r)
{
	oxs_query_pair pairs[MAX_PAIRS];
	int n = query_pairs(r, pairs);
	if (n < 0)
		return;
	oxs_preview_opt o;
	char err[300];
	if (!oxs_preview_query(pairs, (size_t)n, &o, err, sizeof(err))) {
		oxs_reply_error(r, 400, "bad_query", "", "%s", err);
		return;
	}
	if (!need_model(r))
		return;
	art_for(r, OXS_ART_TENSOR, OXR_FMT_SVG, NULL);
	oxs_art_tensor(&r->art, r->param, &o);
	oxs_art_request(r, &r->art, false);
}

/* ---------------------------------------------------------------------------------------
 * Diffs of two stored models (diff.c computes them in a layout worker; cached like
 * renderings): A is {id}, B is {other}; the drawing is B's graph.
 */
/* The diff of r->id (A) with r->param (B), as the route's format or Markdown (md); ras:
 * the drawing rasterized (diff.png), or NULL. */
static void diff_request(oxs_req *r, const oxr_options *opt, bool md, const oxr_raster *ras)
{
	if (!need_model(r))
		return;
	/* without waiting, as need_model: B not known here yet is looked up by the layout */
	oxst_store *st = r->srv->store;
	oxst_status s = oxst_id_valid(r->param)
	                    ? st->ops->stat_model(st, r->param, OXST_STAT_NONBLOCK, NULL)
	                    : OXST_E_NOT_FOUND;
	if (s != OXST_OK && s != OXST_E_AGAIN) {
		oxs_reply_error(r, 404, "not_found", "", "no such model to compare with");
		return;
	}
	oxs_art_init(&r->art, OXS_ART_DIFF, r->id, oxs_format_of_route(oxs_route_at(r->route)->pattern), opt);
	if (md)
		oxs_art_diff_md(&r->art, r->param, r->srv->cfg.base_url);
	else if (r->route == OXS_R_DIFF_LAYOUT) /* before .json in the route table */
		oxs_art_diff_layout(&r->art, r->param);
	else
		oxs_art_diff(&r->art, r->param);
	if (ras != NULL)
		oxs_art_raster(&r->art, ras, false);
	oxs_art_request(r, &r->art, false);
}

static void h_diff(oxs_req *r)
{
	oxr_options opt;
	oxr_raster ras;
	bool raster;
	if (!drawing_query(r, &opt, &ras, &raster, NULL))
		return;
	diff_request(r, &opt, false, raster ? &ras : NULL);
}

/* GET /diff.md?a=A&b=B: the diff as Markdown for a pull request comment (diff_md.c), with
 * links to the page and the PNG when --base-url is set. */
static void h_diff_md(oxs_req *r)
{
	oxs_query_pair pairs[MAX_PAIRS];
	int n = query_pairs(r, pairs);
	if (n < 0)
		return;
	const char *ab[2] = {NULL, NULL};
	for (int i = 0; i < n; i++) {
		int k = !strcmp(pairs[i].key, "a") ? 0 : !strcmp(pairs[i].key, "b") ? 1 : -1;
		if (k < 0 || ab[k] != NULL) {
			oxs_reply_error(r, 400, "bad_query", "", "a= and b= only, once each");
			return;
		}
		ab[k] = pairs[i].value;
	}
	if (ab[0] == NULL || ab[1] == NULL || !oxst_id_valid(ab[0]) || !oxst_id_valid(ab[1])) {
		oxs_reply_error(r, 400, "bad_query", "",
		                "a= and b=: the ids of two stored models (64 hex digits), A the old one");
		return;
	}
	snprintf(r->id, sizeof(r->id), "%s", ab[0]);
	snprintf(r->param, sizeof(r->param), "%s", ab[1]);
	diff_request(r, NULL, true, NULL);
}
