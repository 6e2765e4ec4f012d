/*
 * heat_svc.c — heat overlays in the service (docs/overlays.md): stored overlays (POST and
 * GET /models/{id}/overlays), the query of a drawing
 * (`graph.svg?overlay=cost&metric=macs&scale=log`) and the worker side of both.
 *
 * A heat drawing is laid out by the layout worker like a diff, through the worker's pair
 * function: the model, and as the "other" file the overlay (a path, or "cost" for the
 * built-in), and as the pair arguments the scale, the metric and the optimized model's
 * path when the overlay has one; the format is "heat-svg", "heat-dot", "heat-json" or
 * "heat-table" (the attributed table).  oxs_pair routes those here and everything else to
 * the diff (oxs_diff_pair).
 */
#include "service/heat_svc.h"
#include "parser/oxp.h"
#include "render/oxr.h"
#include "service/art.h"
#include "service/artifacts.h"
#include "service/diff.h"
#include "service/hash.h"
#include "service/models.h"
#include "service/query.h"
#include "service/quota.h"
#include "service/reply.h"
#include "service/request.h"
#include "service/router.h"
#include "service/server.h"
#include "store/oxst.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* An overlay's or a model's id: 64 lowercase hex digits. */
static bool oid_ok(const char *s)
{
	return strlen(s) == 64 && strspn(s, "0123456789abcdef") == 64;
}

bool oxs_heat_query(oxs_query_pair *pairs, size_t *n, oxs_heat_req *hr, char *err,
                    size_t errsize)
{
	memset(hr, 0, sizeof(*hr));
	size_t k = 0;
	bool metric = false, scale = false;
	for (size_t i = 0; i < *n; i++) {
		const char *key = pairs[i].key, *v = pairs[i].value;
		if (!strcmp(key, "overlay")) {
			/* the built-in, or a stored overlay's id: nothing else may reach the worker */
			if ((strcmp(v, "cost") != 0 && !oid_ok(v)) || hr->overlay[0] != '\0') {
				snprintf(err, errsize, "overlay: 'cost' or an overlay's id (64 hex digits), once");
				return false;
			}
			snprintf(hr->overlay, sizeof(hr->overlay), "%s", v);
		} else if (!strcmp(key, "compare")) {
			/* B, another stored overlay of the model: drawn as B - A of overlay= */
			if (!oid_ok(v) || hr->compare[0] != '\0') {
				snprintf(err, errsize, "compare: an overlay's id (64 hex digits), once");
				return false;
			}
			snprintf(hr->compare, sizeof(hr->compare), "%s", v);
		} else if (!strcmp(key, "metric")) {
			size_t len = strlen(v);
			/* '@': a provider's own metric, dur.total@CPUExecutionProvider */
			if (metric || len == 0 || len > 64 || strspn(v, OXR_HEAT_NAME_CHARS "@") != len) {
				snprintf(err, errsize, "metric: a metric name ([A-Za-z0-9._-@], 1 to 64), once");
				return false;
			}
			metric = true;
			snprintf(hr->metric, sizeof(hr->metric), "%s", v);
		} else if (!strcmp(key, "scale")) {
			if (scale || !oxr_heat_scale_parse(v, &hr->scale)) {
				snprintf(err, errsize, "scale: linear, log or thresholds, once");
				return false;
			}
			scale = true;
		} else {
			pairs[k++] = pairs[i];
		}
	}
	if ((metric || scale) && hr->overlay[0] == '\0') {
		snprintf(err, errsize, "metric and scale go with overlay=");
		return false;
	}
	if (hr->compare[0] && !oid_ok(hr->overlay)) {
		snprintf(err, errsize, "compare= goes with overlay=<a stored overlay's id>: B - A");
		return false;
	}
	*n = k;
	return true;
}

/* A stored overlay attributed through ORT's optimized model starts with a line naming
 * that model (uploaded with POST /models): OXS_OVERLAY_TAG, its id, '\n'; the file follows.
 * Its id is the SHA-256 of all of it, so the same file with and without the optimized
 * model are two overlays.  optid: the id or "" (data then starts with the file). */
#define TAG_LEN (sizeof(OXS_OVERLAY_TAG) - 1 + 64 + 1)
bool oxs_overlay_split(const char *data, size_t len, char optid[65], const char **body,
                   size_t *blen)
{
	optid[0] = '\0';
	*body = data;
	*blen = len;
	size_t t = sizeof(OXS_OVERLAY_TAG) - 1;
	if (len < TAG_LEN || memcmp(data, OXS_OVERLAY_TAG, t) != 0 || data[TAG_LEN - 1] != '\n')
		return false;
	memcpy(optid, data + t, 64);
	optid[64] = '\0';
	if (!oid_ok(optid)) {
		optid[0] = '\0';
		return false;
	}
	*body = data + TAG_LEN;
	*blen = len - TAG_LEN;
	return true;
}

/* The overlay file (the worker's copy of the path it was given), at most the bound. */
static char *read_overlay(const char *path, size_t *len, oxr_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		if (fd >= 0)
			close(fd);
		oxs_render_fail(err, OXR_E_IO, "cannot read the overlay: %s", strerror(errno));
		return NULL;
	}
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > OXR_HEAT_MAX_BYTES) {
		close(fd);
		oxs_render_fail(err, OXR_E_OVERLAY, "the overlay is more than %zu bytes",
		                 OXR_HEAT_MAX_BYTES);
		return NULL;
	}
	char *buf = oxst_read_all(fd, (uint64_t)st.st_size);
	close(fd);
	if (buf == NULL)
		oxs_render_fail(err, OXR_E_IO, "cannot read the overlay");
	*len = (size_t)st.st_size;
	return buf;
}

/* The overlay at path ("cost": the built-in) attributed to d, through the optimized model
 * at opt_path when not NULL. */
static oxr_code build_one(const char *path, const char *opt_path, const oxp_dag *d,
                          oxr_heat **h, oxr_error *err)
{
	if (!strcmp(path, "cost"))
		return oxr_heat_cost(d, h, err);
	oxp_model *om = NULL;
	oxp_dag *od = NULL;
	oxp_error pe;
	char msg[600];
	size_t len = 0;
	char *data = read_overlay(path, &len, err);
	char optid[65];
	oxr_heat_input in = {data, len, "overlay"};
	if (data != NULL)
		oxs_overlay_split(data, len, optid, &in.data, &in.len);
	oxr_code rc = data ? OXR_OK : err->code;
	if (rc == OXR_OK && opt_path != NULL) {
		oxp_dag_options oo = {.infer_shapes = false};
		if (oxp_model_open_ex(&om, opt_path, NULL, OXP_OPEN_LOW_RSS, &pe) != OXP_OK ||
		    oxp_dag_build(&od, om, &oo, &pe) != OXP_OK)
			rc = oxs_render_fail(err, OXR_E_MODEL, "the optimized model: %s",
			                     oxp_error_format(&pe, msg, sizeof(msg)));
	}
	if (rc == OXR_OK)
		rc = oxr_heat_build(&in, 1, d, od, h, err);
	free(data);
	oxp_dag_free(od);
	oxp_model_free(om);
	return rc;
}

/* args: the scale, the metric, then the optimized model's path when there is one (else
 * NULL, or "" when a comparison follows), then for a comparison B's path and B's optimized
 * model's ("" when none) (heat_isolated in artifacts.c); other is the overlay ("cost", or
 * the stored one's path). */
static oxr_code heat_pair(const oxr_model_files *model, const oxr_model_files *other,
                          const char *fmt, const char *const *args, const oxr_options *o,
                          oxr_buf *out, oxr_error *err)
{
	uint8_t scale = 0;
	if (args == NULL || args[0] == NULL || args[1] == NULL ||
	    !oxr_heat_scale_parse(args[0], &scale) || strlen(args[1]) >= 80)
		return oxs_render_fail(err, OXR_E_OPTION, "bad heat arguments");
	const char *metric = args[1];
	const char *opt_path = args[2];
	/* heat-table: the attributed table (onnxviz.overlay/1), for GET .../overlays/{oid} and
	 * the check of a POST: attributed here, in the worker, never in the server */
	bool table = !strcmp(fmt, "heat-table");
	if (opt_path != NULL && opt_path[0] == '\0')
		opt_path = NULL; /* a comparison's A without one */
	oxr_format f = !strcmp(fmt, "heat-dot") ? OXR_FMT_DOT : !strcmp(fmt, "heat-json")
	                                                         ? OXR_FMT_LAYOUT_JSON
	                                                         : OXR_FMT_SVG;
	oxp_model *m = NULL;
	oxp_dag *d = NULL;
	oxp_error pe;
	char msg[600];
	if (oxp_model_open_ex(&m, model->path, NULL, OXP_OPEN_LOW_RSS, &pe) != OXP_OK) {
		return oxs_render_fail(err, OXR_E_MODEL, "%s", oxp_error_format(&pe, msg, sizeof(msg)));
	}
	oxp_dag_options dopt = {.infer_shapes = true};
	if (oxp_dag_build(&d, m, &dopt, &pe) != OXP_OK) {
		oxp_model_free(m);
		return oxs_render_fail(err, OXR_E_MODEL, "%s", oxp_error_format(&pe, msg, sizeof(msg)));
	}
	oxr_heat *h = NULL;
	oxr_code rc = build_one(other->path, opt_path, d, &h, err);
	/* the list ends at its first NULL: args[3] only after a non-NULL args[2] */
	if (rc == OXR_OK && args[2] != NULL && args[3] != NULL) {
		/* a comparison: B (args[3], its optimized model args[4]) - A, of A's metric */
		oxr_heat *a = h, *b = NULL;
		h = NULL;
		rc = build_one(args[3], args[4] && args[4][0] ? args[4] : NULL, d, &b, err);
		int ka = -1, kb = -1;
		if (rc == OXR_OK &&
		    ((ka = metric[0] ? oxr_heat_metric(a, metric) : (int)a->primary) < 0 ||
		     (kb = oxr_heat_metric(b, a->metrics[ka])) < 0))
			rc = oxs_render_fail(err, OXR_E_OPTION, "no metric '%s' in overlay %s",
			                     ka < 0 ? metric : a->metrics[ka], ka < 0 ? "A" : "B");
		if (rc == OXR_OK)
			rc = oxr_heat_compare(a, (uint32_t)ka, b, (uint32_t)kb, &h, err);
		oxr_heat_free(a);
		oxr_heat_free(b);
		metric = "diff";
	}
	int k = -1;
	if (rc == OXR_OK && (k = metric[0] ? oxr_heat_metric(h, metric) : (int)h->primary) < 0)
		rc = oxs_render_fail(err, OXR_E_OPTION, "no metric '%s' in the overlay", metric);
	if (rc == OXR_OK && table) {
		rc = oxr_heat_table_json(h, d, (uint32_t)k, 0, out, err);
	} else if (rc == OXR_OK) {
		oxr_overlay ov;
		memset(&ov, 0, sizeof(ov));
		ov.heat = h;
		ov.heat_metric = (uint32_t)k;
		ov.heat_scale = scale;
		char cap[200];
		/* rounded down: never "100%" with something unmatched */
		if (h->side != NULL)
			snprintf(cap, sizeof(cap), "A %s · B %s · only in A %u nodes, only in B %u",
			         h->compare_sources[0], h->compare_sources[1], h->compare_only[0],
			         h->compare_only[1]);
		else
			snprintf(cap, sizeof(cap), "%s · coverage %.2f%% · %u unmatched", h->format,
			         floor(10000 * (h->total != 0 ? h->attributed / h->total : 1)) / 100,
			         h->nunmatched);
		ov.legend = cap;
		rc = oxr_render_overlay(m, d, o, &ov, f, out, err);
	}
	oxr_heat_free(h);
	oxp_dag_free(d);
	oxp_model_free(m);
	return rc;
}

oxr_code oxs_pair(const oxr_model_files *model, const oxr_model_files *other, const char *fmt,
                  const char *const *args, const oxr_options *o, oxr_buf *out, oxr_error *err)
{
	if (!strncmp(fmt, "heat-", 5))
		return heat_pair(model, other, fmt, args, o, out, err);
	return oxs_diff_pair(model, other, fmt, args, o, out, err);
}

/* ---------------------------------------------------------------------------------------
 * Stored overlays: POST /models/{id}/overlays keeps the body as a rendering of the model
 * ("overlay-<sha256>.dat", through the store's put_rendering: the S3 store and replicas
 * see it as they see renderings), after checking that it parses and attributes to the
 * model; GET /models/{id}/overlays/{oid} answers the attributed table; graph.svg?overlay=
 * <oid> draws it.  Renderings may be evicted under a store budget: an overlay then answers
 * 404 and is posted again.
 *
 * Bounds (docs/decisions.md 85): the body goes to a spool file of the store as it arrives,
 * never into the heap (16 stalled posts held 32 MiB each); a client has at most
 * --overlays-per-client posts in flight (429 beyond); parsing and attributing run in a
 * layout worker process (its CPU, memory and time limits, on the layout threads: never a
 * work thread an upload or a search waits for), for the check of a POST as for the table
 * of a GET, which is an artifact (artifacts.c: memory cache, the store, one computation
 * for concurrent requests) keyed by model, overlay (whose content names the optimized
 * model) and metric.
 */
struct oxs_obody {
	int fd;                   /* the spool file (its path below), -1 before it exists */
	char path[PATH_MAX];
	uint64_t len;             /* bytes written: the optimized model's line, then the body */
	uint64_t skip;            /* the line's length, 0 without ?optimized= */
	char optid[65];           /* ?optimized=, or "" */
	oxs_client client;
	bool counted;             /* one of the client's OXS_Q_OVERLAYS is ours */
	bool too_big;
	int write_errno;          /* a failed write (-1: a short one), 0 when none */
	/* Two profiles compared (multipart/form-data, parts `a` and `b`): fd above is a's
	 * spool, bfd b's; both together at most OXS_OVERLAY_MAX bytes */
	bool multipart;
	struct MHD_PostProcessor *pp;
	int bfd;
	char bpath[PATH_MAX];
	uint64_t blen;
	uint64_t raw;             /* bytes of the multipart body received */
	unsigned seen;            /* bit 0: a part `a` began, bit 1: `b` */
	char fail_msg[160];       /* the body's first fault (400 bad_multipart), "" none */
	/* a comparison's answer (compare_answer): A's and B's ids and, when posted with it,
	 * each one's answer as a single POST gives it */
	char oid[2][65];
	oxr_buf posted[2];
	bool has_posted;
};

#define PP_BUFFER 1024               /* libmicrohttpd's multipart parser's buffer */
#define MULTIPART_SLACK ((uint64_t)64 << 10) /* part headers and boundaries */
#define COMPARE_JSON_MAX 4096        /* a {"compare": [A, B]} body is read up to this */
#define COMPARE_TOP 20               /* the largest changes listed in a comparison's answer */

/* POST ...?optimized=ID: the one parameter there may be.  optid: ID or "".  False when
 * the query has anything else. */
static bool optimized_query(const oxs_req *r, char optid[65])
{
	oxs_query_pair pairs[8];
	char q[OXS_QUERY_MAX];
	snprintf(q, sizeof(q), "%s", r->query);
	int n = oxs_query_split(q, pairs, 8);
	optid[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (strcmp(pairs[i].key, "optimized") != 0 || i > 0 || !oid_ok(pairs[i].value))
			return false;
		snprintf(optid, 65, "%s", pairs[i].value);
	}
	return true;
}

/* len bytes to the spool fd at *at (a's or b's), *at moved on; a failure kept. */
static void spool_write(oxs_obody *b, int fd, uint64_t *at, const char *data, size_t len)
{
	size_t done = 0;
	while (b->write_errno == 0 && done < len) {
		ssize_t w = pwrite(fd, data + done, len - done, (off_t)(*at + done));
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			b->write_errno = w < 0 ? errno : -1;
		else
			done += (size_t)w;
	}
	*at += done;
}

/* The first fault of a multipart body wins (answered 400 bad_multipart at its end). */
static enum MHD_Result part_fail(oxs_obody *b, const char *msg)
{
	if (b->fail_msg[0] == '\0')
		snprintf(b->fail_msg, sizeof(b->fail_msg), "%s", msg);
	return MHD_NO;
}

/* libmicrohttpd's multipart parser hands each part's bytes here: `a` to fd, `b` to bfd,
 * in order, once each; anything else ends the body's reading. */
static enum MHD_Result on_part(void *cls, enum MHD_ValueKind kind, const char *key,
                               const char *filename, const char *content_type,
                               const char *transfer_encoding, const char *data, uint64_t off,
                               size_t size)
{
	oxs_obody *b = cls;
	(void)kind, (void)filename, (void)content_type;
	int side = key == NULL ? -1 : !strcmp(key, "a") ? 0 : !strcmp(key, "b") ? 1 : -1;
	if (side < 0)
		return part_fail(b, "a comparison's parts are 'a' and 'b' (a profile each), nothing else");
	if (transfer_encoding != NULL && strcasecmp(transfer_encoding, "binary") != 0 &&
	    strcasecmp(transfer_encoding, "8bit") != 0 && strcasecmp(transfer_encoding, "7bit") != 0)
		return part_fail(b, "part transfer encodings are not supported");
	uint64_t *at = side ? &b->blen : &b->len;
	/* a second part of the same name (an empty one may be reported twice at offset 0) */
	if (off == 0 && (b->seen & (1u << side)) && *at > 0)
		return part_fail(b, side ? "more than one part 'b'" : "more than one part 'a'");
	b->seen |= 1u << side;
	if (off != *at)
		return part_fail(b, "a part out of order");
	if (size > OXS_OVERLAY_MAX - (b->len + b->blen)) {
		b->too_big = true;
		return MHD_NO;
	}
	spool_write(b, side ? b->bfd : b->fd, at, data, size);
	return b->write_errno == 0 ? MHD_YES : MHD_NO;
}

/* The early answers (before the body is read: libmicrohttpd closes the connection after
 * them): authorization, the query, the client's quota, the spool file. */
bool oxs_body_begin(oxs_req *r)
{
	oxs_server *srv = r->srv;
	unsigned denied = oxs_authorize(r, oxs_route_at(r->route)->post_access);
	if (denied != 0) {
		oxs_reply_error(r, denied, denied == 401 ? "unauthorized" : "forbidden", "",
		                "posting an overlay needs \"Authorization: Bearer <token>\"");
		return true;
	}
	char optid[65];
	if (!optimized_query(r, optid)) {
		oxs_reply_error(r, 400, "bad_query", "",
		                "the one parameter is optimized=<the id of ORT's optimized model, "
		                "uploaded with POST /models>");
		return true;
	}
	const char *ct = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Content-Type");
	bool multipart = ct != NULL && strncasecmp(ct, "multipart/form-data", 19) == 0;
	if (multipart && optid[0] != '\0') {
		oxs_reply_error(r, 400, "bad_query", "",
		                "two profiles compared take no ?optimized=: post each with its own, "
		                "then compare their ids ({\"compare\": [A, B]})");
		return true;
	}
	/* the multipart parser's buffer is the one thing such a body holds in memory */
	if (multipart && !oxs_body_hold(r, PP_BUFFER))
		return true;
	oxs_obody *b = calloc(1, sizeof(*b));
	if (b == NULL)
		return false;
	b->fd = b->bfd = -1;
	oxr_buf_init(&b->posted[0], 0);
	oxr_buf_init(&b->posted[1], 0);
	snprintf(b->optid, sizeof(b->optid), "%s", optid);
	r->body = b;
	oxs_client_of(r, &b->client);
	uint64_t held = 0;
	/* one per request, whether it carries one profile or two */
	if (!oxs_quota_take(srv->quota, &b->client, OXS_Q_OVERLAYS, 1, &held)) {
		uint64_t lim = oxs_quota_limit(srv->quota, OXS_Q_OVERLAYS);
		oxs_reply_error(r, 429, "overlay_quota", "",
		                "this client has %" PRIu64 " overlay posts in flight, the most "
		                "--overlays-per-client (%" PRIu64 ") allows; retry when one is answered",
		                held, lim);
		if (r->reply != NULL)
			MHD_add_response_header(r->reply, "Retry-After", "2");
		return true;
	}
	b->counted = true;
	if (multipart) {
		/* NULL for a missing or too long boundary (it must fit the buffer twice) */
		b->pp = MHD_create_post_processor(r->conn, PP_BUFFER, on_part, b);
		if (b->pp == NULL) {
			oxs_reply_error(r, 400, "bad_multipart", "",
			                "a multipart/form-data body with a boundary: the parts 'a' and 'b'");
			return true;
		}
		b->multipart = true;
	}
	oxst_status st = srv->store->ops->spool(srv->store, &b->fd, b->path, sizeof(b->path));
	if (st != OXST_OK) {
		b->fd = -1;
	} else if (multipart &&
	           (st = srv->store->ops->spool(srv->store, &b->bfd, b->bpath, sizeof(b->bpath))) !=
	               OXST_OK) {
		b->bfd = -1;
		close(b->fd); /* no body is read without both */
		unlink(b->path);
		b->fd = -1;
	}
	if (st != OXST_OK) {
		oxs_reply_error(r, st == OXST_E_NOSPACE ? 507 : 500,
		                st == OXST_E_NOSPACE ? "insufficient_storage" : "store_error", "",
		                "cannot keep the overlay: %s", oxst_status_name(st));
		return true;
	}
	/* what is stored is the optimized model's line, then the body (oxs_overlay_split) */
	if (optid[0] != '\0') {
		char line[TAG_LEN + 1];
		snprintf(line, sizeof(line), OXS_OVERLAY_TAG "%s\n", optid);
		spool_write(b, b->fd, &b->len, line, TAG_LEN);
		b->skip = b->len;
	}
	return true;
}

bool oxs_body_data(oxs_req *r, const char *data, size_t len)
{
	oxs_obody *b = r->body;
	if (b->too_big || b->write_errno != 0 || b->fd < 0 || b->fail_msg[0] != '\0')
		return true; /* drained; answered at the end */
	if (b->multipart) {
		/* the parts within OXS_OVERLAY_MAX together (on_part); the body with its part
		 * headers and boundaries a little more */
		if (len > OXS_OVERLAY_MAX + MULTIPART_SLACK - b->raw) {
			b->too_big = true;
			return true;
		}
		b->raw += len;
		if (MHD_post_process(b->pp, data, len) != MHD_YES && !b->too_big && b->write_errno == 0)
			part_fail(b, "malformed multipart body");
		return true;
	}
	if (len > OXS_OVERLAY_MAX - (b->len - b->skip)) {
		b->too_big = true;
		return true;
	}
	spool_write(b, b->fd, &b->len, data, len);
	return true;
}

void oxs_body_free(oxs_req *r)
{
	oxs_obody *b = r->body;
	if (b == NULL)
		return;
	if (b->pp != NULL)
		MHD_destroy_post_processor(b->pp);
	if (b->fd >= 0) {
		close(b->fd);
		unlink(b->path);
	}
	if (b->bfd >= 0) {
		close(b->bfd);
		unlink(b->bpath);
	}
	if (b->counted)
		oxs_quota_give(r->srv->quota, &b->client, OXS_Q_OVERLAYS, 1);
	oxr_buf_free(&b->posted[0]);
	oxr_buf_free(&b->posted[1]);
	free(b);
	r->body = NULL;
}

static void overlay_name(const char *oid, char *name, size_t size)
{
	snprintf(name, size, "overlay-%.64s.dat", oid);
}

static void release(oxs_server *srv, oxs_mentry *me, oxs_mentry *opt)
{
	if (me != NULL)
		oxs_models_release(srv->models, me);
	if (opt != NULL)
		oxs_models_release(srv->models, opt);
}

/* The model r->id and, when the overlay names one, its optimized model: their paths for
 * the worker; false after replying (no such model, a lone tensor, the store). */
static bool overlay_models(oxs_req *r, const char *optid, char *path, char *opath)
{
	oxs_server *srv = r->srv;
	oxs_mentry *me = NULL, *opt = NULL;
	bool ok = false;
	oxst_status st = oxs_models_get(srv->models, srv->store, r->id, "", &me, NULL);
	if (st != OXST_OK) {
		oxs_reply_store_error(r, st, "cannot read the model");
	} else if (oxs_mentry_dag(me) == NULL) {
		oxs_reply_error(r, 422, "tensor_upload", "", "this upload is a lone tensor, not a model");
	} else if (optid[0] != '\0' &&
	           (st = oxs_models_get(srv->models, srv->store, optid, "", &opt, NULL)) != OXST_OK) {
		if (st == OXST_E_NOT_FOUND)
			oxs_reply_error(r, 422, "no_optimized_model", "",
			                "no model %s: upload the optimized model with POST /models first",
			                optid);
		else
			oxs_reply_store_error(r, st, "cannot read the optimized model");
	} else if (opt != NULL && oxs_mentry_dag(opt) == NULL) {
		oxs_reply_error(r, 422, "tensor_upload", "",
		                "the optimized model is a lone tensor, not a model");
	} else if ((st = srv->store->ops->model_path(srv->store, r->id, path, PATH_MAX)) != OXST_OK ||
	           (optid[0] != '\0' && (st = srv->store->ops->model_path(srv->store, optid, opath,
	                                                                  PATH_MAX)) != OXST_OK)) {
		oxs_reply_store_error(r, st, "cannot read the model");
	} else {
		ok = true;
	}
	release(srv, me, opt);
	return ok;
}

/* A POST's answer (into out) from the table the worker made (a JSON object of the
 * worker's: its fields are checked, not trusted to exist).  False when it does not parse. */
static bool posted_json(oxr_buf *out, const char *id, const char *oid, const char *optid,
                        const char *table, size_t len)
{
	json_error_t je;
	json_t *t = json_loadb(table != NULL ? table : "", len, 0, &je);
	if (!json_is_object(t)) {
		json_decref(t);
		return false;
	}
	const char *source = json_string_value(json_object_get(t, "source"));
	json_t *cov = json_object_get(t, "coverage");
	oxr_buf_printf(out,
	               "{\"id\":\"%s\",\"model\":\"%s\",\"source\":\"%s\",\"runs\":%" PRId64
	               ",\"entries\":%" PRId64 ",\"matched\":%" PRId64 ",\"unmatched\":%" PRId64
	               ",\"coverage\":%.9g,",
	               oid, id,
	               source != NULL && strspn(source, OXR_HEAT_NAME_CHARS) == strlen(source)
	                   ? source : "?",
	               (int64_t)json_integer_value(json_object_get(t, "runs")),
	               (int64_t)json_integer_value(json_object_get(t, "entries")),
	               (int64_t)json_integer_value(json_object_get(t, "matched")),
	               (int64_t)json_integer_value(json_object_get(t, "unmatched_count")),
	               json_is_number(cov) ? json_number_value(cov) : 1.0);
	if (optid[0] != '\0')
		oxr_buf_printf(out, "\"optimized\":\"%s\",", optid);
	oxr_buf_printf(out, "\"metrics\":[");
	json_t *ms = json_object_get(t, "metrics");
	for (size_t k = 0; k < json_array_size(ms); k++) { /* names: [A-Za-z0-9._-@] or "?" */
		const char *m = json_string_value(json_object_get(json_array_get(ms, k), "name"));
		oxr_buf_printf(out, "%s\"%s\"", k ? "," : "",
		               m != NULL && strspn(m, OXR_HEAT_NAME_CHARS "@") == strlen(m) ? m : "?");
	}
	oxr_buf_printf(out, "],\"links\":{\"self\":\"/models/%s/overlays/%s\","
	                    "\"graph.svg\":\"/models/%s/graph.svg?overlay=%s\"}}",
	               id, oid, id, oid);
	json_decref(t);
	return true;
}

static void reply_posted(oxs_req *r, const char *oid, const char *optid, const char *table,
                         size_t len)
{
	oxr_buf b;
	oxr_buf_init(&b, 0);
	if (!posted_json(&b, r->id, oid, optid, table, len))
		oxs_reply_error(r, 500, "internal", "", "the overlay's table does not parse");
	else if (b.failed)
		oxs_reply_error(r, 503, "out_of_memory", "", "out of memory");
	else
		oxs_reply_json(r, 201, &b);
	oxr_buf_free(&b);
}

/* A failed check in the worker: the file's fault (422: malformed, beyond the bounds, past
 * the worker's limits), or the server's for now (503 with Retry-After: out of memory, no
 * process or pipe to start it with). */
static unsigned worker_status(oxr_code rc)
{
	return rc == OXR_E_NOMEM || rc == OXR_E_IO ? 503 : rc == OXR_E_NOT_FOUND ? 404 : 422;
}

/* The spooled overlay (len bytes of fd) into the store (put_rendering takes bytes:
 * mapped, not copied). */
static oxst_status store_overlay(oxs_server *srv, int fd, uint64_t len, const char *id,
                                 const char *name)
{
	if (len > SIZE_MAX)
		return OXST_E_IO;
	void *map = mmap(NULL, (size_t)len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		return OXST_E_IO;
	oxst_status st = srv->store->ops->put_rendering(srv->store, id, name, map, (size_t)len);
	munmap(map, (size_t)len);
	return st;
}

/* The artifact of overlay oid's table of the primary metric, the one a POST makes and
 * keeps where GET .../overlays/{oid} looks first. */
static void table_art(oxs_art *a, const char *id, const char *oid)
{
	oxs_heat_req hr;
	memset(&hr, 0, sizeof(hr));
	snprintf(hr.overlay, sizeof(hr.overlay), "%s", oid);
	hr.table = true;
	oxs_art_init(a, OXS_ART_HEAT, id, OXR_FMT_LAYOUT_JSON, NULL);
	oxs_art_heat(a, &hr);
}

/* The same overlay posted before: its stored table (malloc'd, *len bytes), when both are
 * still in the store (a budget may have evicted either); else NULL. */
static char *stored_table(oxs_req *r, const char *oid, size_t *len)
{
	oxst_store *store = r->srv->store;
	oxs_art a;
	table_art(&a, r->id, oid);
	char name[96];
	overlay_name(oid, name, sizeof(name));
	int fd = -1;
	uint64_t size = 0;
	if (store->ops->get_rendering(store, r->id, name, &fd, &size) != OXST_OK)
		return NULL;
	close(fd);
	if (store->ops->get_rendering(store, r->id, a.name, &fd, &size) != OXST_OK)
		return NULL;
	char *table = size <= r->srv->wlim.max_output ? oxst_read_all(fd, size) : NULL;
	close(fd);
	*len = (size_t)size;
	return table;
}

/* The table of the overlay spooled in fd, made by a layout worker process (the check of a
 * POST: parsed and attributed there, never in the server); path is the model's, opath
 * ORT's optimized model's or "". */
static oxr_code attribute(oxs_server *srv, const char *path, const char *opath, int fd,
                          oxr_buf *table, oxr_error *err)
{
	char spool[64];
	snprintf(spool, sizeof(spool), "/proc/%ld/fd/%d", (long)getpid(), fd);
	const char *args[] = {"linear", "", opath[0] ? opath : NULL, NULL};
	oxr_model_files m = {path, ""}, other = {spool, ""};
	oxr_options o;
	oxr_options_default(&o);
	memset(err, 0, sizeof(*err));
	oxr_buf_init(table, srv->wlim.max_output);
	return oxr_render_isolated_pair(srv->exe, &m, &other, "heat-table", args, &o, &srv->wlim,
	                                table, err);
}

/* The overlay (fd, len bytes) and its table into the store: false after replying. */
static bool keep(oxs_req *r, int fd, uint64_t len, const char *oid, const oxr_buf *table)
{
	oxs_server *srv = r->srv;
	oxs_art a;
	table_art(&a, r->id, oid);
	char name[96];
	overlay_name(oid, name, sizeof(name));
	oxst_status st = store_overlay(srv, fd, len, r->id, name);
	if (st != OXST_OK) {
		oxs_reply_store_error(r, st, "cannot store the overlay");
		return false;
	}
	/* best effort: without it the first GET makes the table again */
	(void)srv->store->ops->put_rendering(srv->store, r->id, a.name, table->data, table->len);
	return true;
}

/* A layout thread: check the spooled overlay by making its table in a worker process,
 * then store it (and the table, so that the first GET reads it from the store); when it
 * and its table are stored already, the same file again costs no worker. */
static void work_overlay_post(oxs_req *r)
{
	oxs_obody *b = r->body;
	char path[PATH_MAX], opath[PATH_MAX] = "", oid[OXST_ID_LEN + 1];
	if (!overlay_models(r, b->optid, path, opath)) {
		oxs_resume(r);
		return;
	}
	if (!oxst_sha256_fd(b->fd, oid)) {
		oxs_reply_error(r, 500, "io_error", "", "cannot read the overlay");
		oxs_resume(r);
		return;
	}
	size_t tlen = 0;
	char *before = stored_table(r, oid, &tlen);
	if (before != NULL) {
		reply_posted(r, oid, b->optid, before, tlen);
		free(before);
		oxs_resume(r);
		return;
	}
	oxr_buf table;
	oxr_error err;
	oxr_code rc = attribute(r->srv, path, opath, b->fd, &table, &err);
	if (rc != OXR_OK)
		oxs_reply_error(r, worker_status(rc), oxr_code_name(rc), "", "%s",
		                err.message[0] ? err.message : "the overlay cannot be attributed");
	else if (keep(r, b->fd, b->len, oid, &table))
		reply_posted(r, oid, b->optid, table.data, table.len);
	oxr_buf_free(&table);
	oxs_resume(r);
}

/* ---------------------------------------------------------------------------------------
 * Two profiles compared in one POST (issue 38, docs/overlays.md): a multipart body of
 * the parts `a` and `b` (each checked and stored as a single POST stores it: they get
 * their ids), or {"compare": [A, B]} naming two stored overlays.  The answer is the
 * comparison GET .../overlays/A?compare=B answers (the same artifact: computed once, in a
 * layout worker, cached), with both ids, the largest changes and the links.
 */

#define DUMP_FLAGS (JSON_COMPACT | JSON_REAL_PRECISION(9)) /* the table's own (jx_dump) */
static int dump_to(const char *data, size_t size, void *out)
{
	return oxr_buf_append(out, data, size) ? 0 : -1;
}

/* The comparison artifact's answer: the table as it is, the rest around it.  Runs where
 * the artifact is ready (a layout or work thread, never libmicrohttpd's: the POST was
 * deferred before asking for it). */
static void compare_on_art(oxs_req *r, oxs_centry *e)
{
	oxs_obody *b = r->body;
	if (e->status != 200) {
		oxs_reply_entry(r, e); /* its error: a metric B lacks, a worker's limit */
		return;
	}
	char *copy = NULL;
	const char *data = e->data;
	if (data == NULL) { /* too large for memory: read from its file */
		copy = e->len <= r->srv->wlim.max_output ? oxst_read_all(e->fd, e->len) : NULL;
		if (copy == NULL) {
			oxs_reply_error(r, 503, "io_error", "", "cannot read the comparison");
			return;
		}
		data = copy;
	}
	json_error_t je;
	json_t *t = json_loadb(data, e->len, 0, &je);
	json_t *top = json_array();
	json_t *nodes = json_object_get(t, "nodes");
	for (size_t i = 0; i < json_array_size(nodes) && i < COMPARE_TOP; i++)
		json_array_append(top, json_array_get(nodes, i)); /* largest |B - A| first */
	const char *id = r->id, *oa = b->oid[0], *ob = b->oid[1];
	oxr_buf out;
	oxr_buf_init(&out, 0);
	oxr_buf_printf(&out, "{\"model\":\"%s\",\"a\":\"%s\",\"b\":\"%s\",", id, oa, ob);
	if (b->has_posted)
		oxr_buf_printf(&out, "\"posted\":{\"a\":%s,\"b\":%s},", b->posted[0].data,
		               b->posted[1].data);
	/* jansson's dumps allocate with the render module's functions (jsonx.c): straight
	 * into the answer instead, as the table was written */
	json_t *cmp = json_object_get(t, "compare");
	oxr_buf_printf(&out, "\"compare\":");
	bool dumped = json_is_object(cmp) && json_is_array(top) &&
	              json_dump_callback(cmp, dump_to, &out, DUMP_FLAGS) == 0;
	oxr_buf_printf(&out, ",\"top\":");
	dumped = dumped && json_dump_callback(top, dump_to, &out, DUMP_FLAGS) == 0;
	oxr_buf_printf(&out, ",");
	oxr_buf_printf(&out,
	               "\"links\":{\"table\":\"/models/%s/overlays/%s?compare=%s\","
	               "\"graph.svg\":\"/models/%s/graph.svg?overlay=%s&compare=%s\","
	               "\"a\":\"/models/%s/overlays/%s\",\"b\":\"/models/%s/overlays/%s\"},"
	               "\"table\":",
	               id, oa, ob, id, oa, ob, id, oa, id, ob);
	oxr_buf_append(&out, data, e->len); /* byte for byte what the table URL answers */
	oxr_buf_printf(&out, "}");
	if (!json_is_object(t) || (!dumped && !out.failed))
		oxs_reply_error(r, 500, "internal", "", "the comparison's table does not parse");
	else if (out.failed)
		oxs_reply_error(r, 503, "out_of_memory", "", "out of memory");
	else
		oxs_reply_json(r, b->has_posted ? 201 : 200, &out);
	oxr_buf_free(&out);
	json_decref(top);
	json_decref(t);
	free(copy);
}

/* Ask for the comparison of b->oid[0] (A) and b->oid[1] (B): answered by compare_on_art;
 * r is resumed by the artifact's machinery. */
static void compare_answer(oxs_req *r)
{
	oxs_obody *b = r->body;
	oxs_heat_req hr;
	memset(&hr, 0, sizeof(hr));
	snprintf(hr.overlay, sizeof(hr.overlay), "%s", b->oid[0]);
	snprintf(hr.compare, sizeof(hr.compare), "%s", b->oid[1]);
	hr.table = true;
	oxs_art a;
	oxs_art_init(&a, OXS_ART_HEAT, r->id, OXR_FMT_LAYOUT_JSON, NULL);
	oxs_art_heat(&a, &hr);
	r->on_art = compare_on_art;
	oxs_art_request(r, &a, true);
}

/* A layout thread: {"compare": [A, B]}: both stored overlays of the model, compared. */
static void work_compare_ids(oxs_req *r)
{
	oxs_obody *b = r->body;
	char path[PATH_MAX], opath[PATH_MAX];
	if (!overlay_models(r, "", path, opath)) {
		oxs_resume(r);
		return;
	}
	for (int i = 0; i < 2; i++) {
		char name[96];
		int fd = -1;
		uint64_t size = 0;
		overlay_name(b->oid[i], name, sizeof(name));
		oxst_status st = r->srv->store->ops->get_rendering(r->srv->store, r->id, name, &fd, &size);
		if (st == OXST_E_NOT_FOUND) {
			oxs_reply_error(r, 404, "not_found", "",
			                "no overlay %s of this model (%s): post it first", b->oid[i],
			                i ? "B" : "A");
			oxs_resume(r);
			return;
		}
		if (st != OXST_OK) {
			oxs_reply_store_error(r, st, "cannot read the overlay");
			oxs_resume(r);
			return;
		}
		close(fd);
	}
	compare_answer(r);
}

/* A layout thread: the parts a and b, each checked (a worker makes its table) unless
 * stored before, then both stored, then compared.  Nothing is stored when either fails. */
static void work_compare_post(oxs_req *r)
{
	oxs_obody *b = r->body;
	char path[PATH_MAX], opath[PATH_MAX] = "";
	if (!overlay_models(r, "", path, opath)) {
		oxs_resume(r);
		return;
	}
	int fds[2] = {b->fd, b->bfd};
	uint64_t lens[2] = {b->len, b->blen};
	for (int i = 0; i < 2; i++) {
		if (!oxst_sha256_fd(fds[i], b->oid[i])) {
			oxs_reply_error(r, 500, "io_error", "", "cannot read the overlays");
			oxs_resume(r);
			return;
		}
	}
	if (!strcmp(b->oid[0], b->oid[1])) {
		oxs_reply_error(r, 400, "same_overlay", "", "the parts 'a' and 'b' are the same file");
		oxs_resume(r);
		return;
	}
	oxr_buf tables[2];
	oxr_buf_init(&tables[0], 0); /* allocates nothing: attribute() sets its bound */
	oxr_buf_init(&tables[1], 0);
	bool made[2] = {false, false}, ok = true;
	for (int i = 0; i < 2 && ok; i++) {
		size_t tlen = 0;
		char *before = stored_table(r, b->oid[i], &tlen);
		if (before != NULL) {
			ok = posted_json(&b->posted[i], r->id, b->oid[i], "", before, tlen);
			free(before);
			if (!ok)
				oxs_reply_error(r, 500, "internal", "", "the overlay's table does not parse");
			continue;
		}
		oxr_error err;
		oxr_code rc = attribute(r->srv, path, opath, fds[i], &tables[i], &err);
		made[i] = rc == OXR_OK;
		if (rc != OXR_OK) {
			ok = false;
			oxs_reply_error(r, worker_status(rc), oxr_code_name(rc), "", "part '%s': %s",
			                i ? "b" : "a",
			                err.message[0] ? err.message : "the overlay cannot be attributed");
		}
	}
	for (int i = 0; i < 2 && ok; i++) {
		if (!made[i])
			continue;
		ok = keep(r, fds[i], lens[i], b->oid[i], &tables[i]);
		if (ok && !posted_json(&b->posted[i], r->id, b->oid[i], "", tables[i].data,
		                       tables[i].len)) {
			ok = false;
			oxs_reply_error(r, 500, "internal", "", "the overlay's table does not parse");
		}
	}
	oxr_buf_free(&tables[0]);
	oxr_buf_free(&tables[1]);
	if (ok && (b->posted[0].failed || b->posted[1].failed)) {
		ok = false;
		oxs_reply_error(r, 503, "out_of_memory", "", "out of memory");
	}
	if (!ok) {
		oxs_resume(r);
		return;
	}
	b->has_posted = true;
	compare_answer(r);
}

/* {"compare": [A, B]} as the body: 1 (the ids in b->oid), 0 when the body is not one (an
 * overlay file), -1 after replying 400.  One when it is a JSON object with a member
 * "compare" that is not an object (Model Explorer's graph ids map to objects). */
static int compare_body(oxs_req *r, oxs_obody *b)
{
	uint64_t n = b->len - b->skip;
	char buf[COMPARE_JSON_MAX + 1];
	if (n > COMPARE_JSON_MAX)
		return 0;
	ssize_t got = pread(b->fd, buf, (size_t)n, (off_t)b->skip);
	if (got != (ssize_t)n)
		return 0; /* read again, and answered, by the worker */
	size_t i = strspn(buf, " \t\r\n");
	if (i >= (size_t)n || buf[i] != '{')
		return 0;
	json_error_t je;
	json_t *t = json_loadb(buf, (size_t)n, JSON_REJECT_DUPLICATES, &je);
	json_t *c = json_object_get(t, "compare");
	if (c == NULL || json_is_object(c)) {
		json_decref(t);
		return 0;
	}
	const char *ids[2] = {json_string_value(json_array_get(c, 0)),
	                      json_string_value(json_array_get(c, 1))};
	const char *why = NULL;
	if (json_object_size(t) != 1 || json_array_size(c) != 2 || ids[0] == NULL || ids[1] == NULL ||
	    !oid_ok(ids[0]) || !oid_ok(ids[1]))
		why = "the body {\"compare\": [\"<overlay A's id>\", \"<overlay B's id>\"]}: two "
		      "stored overlays' ids (64 hex digits), nothing else";
	else if (!strcmp(ids[0], ids[1]))
		why = "compare names the same overlay twice";
	else if (b->optid[0] != '\0')
		why = "a comparison of stored overlays takes no ?optimized= (each has its own)";
	if (why != NULL) {
		oxs_reply_error(r, 400, "bad_compare", "", "%s", why);
		json_decref(t);
		return -1;
	}
	snprintf(b->oid[0], sizeof(b->oid[0]), "%s", ids[0]);
	snprintf(b->oid[1], sizeof(b->oid[1]), "%s", ids[1]);
	json_decref(t);
	return 1;
}

/* The end of a multipart body: false after replying what is wrong with it. */
static bool parts_ok(oxs_req *r, oxs_obody *b)
{
	if (b->pp != NULL) {
		if (MHD_destroy_post_processor(b->pp) != MHD_YES)
			part_fail(b, "incomplete multipart body");
		b->pp = NULL;
	}
	if (b->too_big) {
		oxs_reply_error(r, 413, "payload_too_large", "",
		                "two overlays are at most %zu bytes together", OXS_OVERLAY_MAX);
		return false;
	}
	if (b->write_errno == 0 && b->fail_msg[0] == '\0' && (b->len == 0 || b->blen == 0))
		part_fail(b, !(b->seen & 1) ? "no part 'a' (the first profile)"
		             : !(b->seen & 2) ? "no part 'b' (the second profile)"
		                              : "an empty part");
	if (b->write_errno == 0 && b->fail_msg[0] != '\0') {
		oxs_reply_error(r, 400, "bad_multipart", "", "%s", b->fail_msg);
		return false;
	}
	return true;
}

/* A spooled overlay that starts as a stored overlay's line would be taken for one: false
 * after replying 422. */
static bool untagged(oxs_req *r, int fd, uint64_t at)
{
	char head[TAG_LEN], optid[65];
	const char *body;
	size_t blen;
	ssize_t got = pread(fd, head, sizeof(head), (off_t)at);
	if (got > 0 && oxs_overlay_split(head, (size_t)got, optid, &body, &blen)) {
		oxs_reply_error(r, 422, "bad_overlay", "",
		                "an overlay file does not start with \"" OXS_OVERLAY_TAG "\" (give the "
		                "optimized model as ?optimized=)");
		return false;
	}
	return true;
}

void oxs_overlay_post(oxs_req *r)
{
	oxs_obody *b = r->body;
	if (b != NULL && b->multipart && b->fd >= 0 && !parts_ok(r, b))
		return;
	if (b == NULL || b->fd < 0 || b->len == b->skip) {
		oxs_reply_error(r, 400, "empty_body", "", "send the overlay file as the body");
		return;
	}
	if (b->too_big) {
		oxs_reply_error(r, 413, "payload_too_large", "", "an overlay is at most %zu bytes",
		                OXS_OVERLAY_MAX);
		return;
	}
	if (b->write_errno != 0) {
		bool full = b->write_errno == ENOSPC || b->write_errno == EFBIG ||
		            b->write_errno == EDQUOT;
		oxs_reply_error(r, full ? 507 : 500, full ? "insufficient_storage" : "io_error", "",
		                "cannot keep the overlay: %s",
		                b->write_errno > 0 ? strerror(b->write_errno) : "short write");
		return;
	}
	if (r->id[0] == '\0') {
		oxs_reply_error(r, 404, "not_found", "", "no such model");
		return;
	}
	if (!untagged(r, b->fd, b->skip) || (b->multipart && !untagged(r, b->bfd, 0)))
		return;
	if (b->multipart) {
		oxs_defer(r, r->srv->layout, work_compare_post);
		return;
	}
	int cmp = compare_body(r, b);
	if (cmp != 0) {
		if (cmp > 0)
			oxs_defer(r, r->srv->layout, work_compare_ids);
		return;
	}
	oxs_defer(r, r->srv->layout, work_overlay_post);
}

/* GET /models/{id}/overlays/{oid}[?metric=M]: the table, an artifact (artifacts.c). */
void oxs_overlay_get(oxs_req *r)
{
	if (r->id[0] == '\0' || !oid_ok(r->param)) {
		oxs_reply_error(r, 404, "not_found", "", "no such overlay");
		return;
	}
	oxs_heat_req hr;
	memset(&hr, 0, sizeof(hr));
	snprintf(hr.overlay, sizeof(hr.overlay), "%s", r->param);
	hr.table = true;
	oxs_query_pair pairs[8];
	char q[OXS_QUERY_MAX];
	snprintf(q, sizeof(q), "%s", r->query);
	int n = oxs_query_split(q, pairs, 8);
	for (int i = 0; i < n; i++) {
		const char *v = pairs[i].value;
		size_t len = strlen(v);
		if (!strcmp(pairs[i].key, "compare") && hr.compare[0] == '\0' && oid_ok(v)) {
			snprintf(hr.compare, sizeof(hr.compare), "%s", v); /* B - this one */
			continue;
		}
		if (strcmp(pairs[i].key, "metric") != 0 || hr.metric[0] != '\0' || len == 0 ||
		    len > 64 || strspn(v, OXR_HEAT_NAME_CHARS "@") != len) {
			oxs_reply_error(r, 400, "bad_option", "",
			                "the parameters are metric=<a metric of the overlay> and "
			                "compare=<another overlay's id>, each once");
			return;
		}
		snprintf(hr.metric, sizeof(hr.metric), "%s", v);
	}
	oxs_art a;
	oxs_art_init(&a, OXS_ART_HEAT, r->id, OXR_FMT_LAYOUT_JSON, NULL);
	oxs_art_heat(&a, &hr);
	oxs_art_request(r, &a, false);
}
