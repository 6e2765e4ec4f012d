/*
 * heat_svc.c — heat overlays in the service (docs/overlays.md): the query of a drawing
 * (`graph.svg?overlay=cost&metric=macs&scale=log`) and the worker side of such a drawing.
 *
 * A heat drawing is laid out by the layout worker like a diff, through the worker's pair
 * function: the model, and as the "other" file the overlay (a path, or "cost" for the
 * built-in), and as the pair arguments the scale, the metric and the optimized model's
 * path when the overlay has one; the format is "heat-svg", "heat-dot" or "heat-json".  oxs_pair routes those here and
 * everything else to the diff (oxs_diff_pair).
 */
#include "service/heat_svc.h"
#include "parser/oxp.h"
#include "render/oxr.h"
#include "service/art.h"
#include "service/diff.h"
#include "service/hash.h"
#include "service/models.h"
#include "service/query.h"
#include "service/reply.h"
#include "service/request.h"
#include "service/router.h"
#include "service/server.h"
#include "store/oxst.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* args: the scale, the metric, then the optimized model's path when there is one
 * (heat_isolated in artifacts.c); other is the overlay ("cost", or the stored one's path). */
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
	oxr_code rc;
	oxp_model *om = NULL;
	oxp_dag *od = NULL;
	if (!strcmp(other->path, "cost")) {
		rc = oxr_heat_cost(d, &h, err);
	} else {
		size_t len = 0;
		char *data = read_overlay(other->path, &len, err);
		char optid[65];
		oxr_heat_input in = {data, len, "overlay"};
		if (data != NULL)
			oxs_overlay_split(data, len, optid, &in.data, &in.len);
		rc = data ? OXR_OK : err->code;
		if (rc == OXR_OK && opt_path != NULL) {
			oxp_dag_options oo = {.infer_shapes = false};
			if (oxp_model_open_ex(&om, opt_path, NULL, OXP_OPEN_LOW_RSS, &pe) != OXP_OK ||
			    oxp_dag_build(&od, om, &oo, &pe) != OXP_OK)
				rc = oxs_render_fail(err, OXR_E_MODEL, "the optimized model: %s",
				                     oxp_error_format(&pe, msg, sizeof(msg)));
		}
		if (rc == OXR_OK)
			rc = oxr_heat_build(&in, 1, d, od, &h, err);
		free(data);
	}
	int k = -1;
	if (rc == OXR_OK && (k = metric[0] ? oxr_heat_metric(h, metric) : (int)h->primary) < 0)
		rc = oxs_render_fail(err, OXR_E_OPTION, "no metric '%s' in the overlay", metric);
	if (rc == OXR_OK) {
		oxr_overlay ov;
		memset(&ov, 0, sizeof(ov));
		ov.heat = h;
		ov.heat_metric = (uint32_t)k;
		ov.heat_scale = scale;
		char cap[200];
		/* rounded down: never "100%" with something unmatched */
		snprintf(cap, sizeof(cap), "%s · coverage %.2f%% · %u unmatched", h->format,
		         floor(10000 * (h->total != 0 ? h->attributed / h->total : 1)) / 100,
		         h->nunmatched);
		ov.legend = cap;
		rc = oxr_render_overlay(m, d, o, &ov, f, out, err);
	}
	oxr_heat_free(h);
	oxp_dag_free(od);
	oxp_model_free(om);
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
 */
bool oxs_body_begin(oxs_req *r)
{
	unsigned denied = oxs_authorize(r, oxs_route_at(r->route)->post_access);
	if (denied != 0) {
		oxs_reply_error(r, denied, denied == 401 ? "unauthorized" : "forbidden", "",
		                "this request needs \"Authorization: Bearer <token>\"");
		return true;
	}
	r->body = malloc(sizeof(oxr_buf));
	if (r->body == NULL)
		return false;
	oxr_buf_init(r->body, OXS_OVERLAY_MAX);
	return true;
}

bool oxs_body_data(oxs_req *r, const char *data, size_t len)
{
	if (r->body->failed)
		return true; /* drained; answered at the end */
	oxr_buf_append(r->body, data, len);
	return true;
}

void oxs_body_free(oxs_req *r)
{
	if (r->body != NULL) {
		oxr_buf_free(r->body);
		free(r->body);
		r->body = NULL;
	}
}

static void overlay_name(const char *oid, char *name, size_t size)
{
	snprintf(name, size, "overlay-%.64s.dat", oid);
}

/* The attributed overlay of model r->id from data (a stored overlay: the optimized
 * model's line first, if any): NULL after replying.  *opt: the optimized model's entry. */
static oxr_heat *attribute(oxs_req *r, const char *data, size_t len, oxs_mentry **me,
                           oxs_mentry **opt)
{
	oxs_server *srv = r->srv;
	*me = *opt = NULL;
	char optid[65];
	const char *body;
	size_t blen;
	oxs_overlay_split(data, len, optid, &body, &blen);
	oxst_status st = oxs_models_get(srv->models, srv->store, r->id, "", me, NULL);
	if (st != OXST_OK) {
		oxs_reply_store_error(r, st, "cannot read the model");
		return NULL;
	}
	const oxp_dag *d = oxs_mentry_dag(*me), *od = NULL;
	if (d == NULL) {
		oxs_reply_error(r, 422, "tensor_upload", "", "this upload is a lone tensor, not a model");
		return NULL;
	}
	if (optid[0] != '\0') {
		st = oxs_models_get(srv->models, srv->store, optid, "", opt, NULL);
		if (st == OXST_E_NOT_FOUND) {
			oxs_reply_error(r, 422, "no_optimized_model", "",
			                "no model %s: upload the optimized model with POST /models first",
			                optid);
			return NULL;
		}
		if (st != OXST_OK) {
			oxs_reply_store_error(r, st, "cannot read the optimized model");
			return NULL;
		}
		if ((od = oxs_mentry_dag(*opt)) == NULL) {
			oxs_reply_error(r, 422, "tensor_upload", "",
			                "the optimized model is a lone tensor, not a model");
			return NULL;
		}
	}
	oxr_heat *h = NULL;
	oxr_error err;
	memset(&err, 0, sizeof(err));
	oxr_heat_input in = {body, blen, "overlay"};
	if (oxr_heat_build(&in, 1, d, od, &h, &err) != OXR_OK) {
		oxs_reply_error(r, err.code == OXR_E_NOMEM ? 503 : 422, oxr_code_name(err.code), "",
		                "%s", err.message);
		return NULL;
	}
	return h;
}

static void release(oxs_server *srv, oxs_mentry *me, oxs_mentry *opt)
{
	if (me != NULL)
		oxs_models_release(srv->models, me);
	if (opt != NULL)
		oxs_models_release(srv->models, opt);
}

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

static void work_overlay_post(oxs_req *r)
{
	oxs_server *srv = r->srv;
	oxs_mentry *me = NULL, *opt = NULL;
	/* ?optimized=ID: what is stored is the optimized model's line, then the body */
	char optid[65];
	(void)optimized_query(r, optid); /* checked by oxs_overlay_post */
	oxr_buf *stored = r->body, tagged;
	oxr_buf_init(&tagged, 0);
	if (optid[0] != '\0') {
		oxr_buf_printf(&tagged, OXS_OVERLAY_TAG "%s\n", optid);
		oxr_buf_append(&tagged, r->body->data, r->body->len);
		stored = &tagged;
	}
	oxr_heat *h = tagged.failed ? NULL
	                            : attribute(r, stored->data ? stored->data : "", stored->len,
	                                        &me, &opt);
	if (tagged.failed)
		oxs_reply_error(r, 503, "out_of_memory", "", "out of memory");
	if (h != NULL) {
		char oid[65], name[96];
		oxs_sha256_hex(stored->data ? stored->data : "", stored->len, oid, 64);
		overlay_name(oid, name, sizeof(name));
		oxst_status st = srv->store->ops->put_rendering(srv->store, r->id, name, stored->data,
		                                               stored->len);
		if (st != OXST_OK) {
			oxs_reply_store_error(r, st, "cannot store the overlay");
		} else {
			oxr_buf b;
			oxr_buf_init(&b, 0);
			oxr_buf_printf(&b,
			               "{\"id\":\"%s\",\"model\":\"%s\",\"source\":\"%s\",\"runs\":%u,"
			               "\"entries\":%u,\"matched\":%u,\"unmatched\":%u,\"coverage\":%.9g,",
			               oid, r->id, h->format, h->runs, h->nentries, h->nmatched,
			               h->nunmatched, h->total != 0 ? h->attributed / h->total : 1.0);
			if (optid[0] != '\0')
				oxr_buf_printf(&b, "\"optimized\":\"%s\",", optid);
			oxr_buf_printf(&b, "\"metrics\":[");
			for (uint32_t k = 0; k < h->nmetrics; k++) /* names: [A-Za-z0-9._-] or text */
				oxr_buf_printf(&b, "%s\"%s\"", k ? "," : "",
				               strspn(h->metrics[k], OXR_HEAT_NAME_CHARS "@") ==
				                       strlen(h->metrics[k])
				                   ? h->metrics[k] : "?");
			oxr_buf_printf(&b, "],\"links\":{\"self\":\"/models/%s/overlays/%s\","
			                   "\"graph.svg\":\"/models/%s/graph.svg?overlay=%s\"}}",
			               r->id, oid, r->id, oid);
			oxs_reply_json(r, 201, &b);
			oxr_buf_free(&b);
		}
		oxr_heat_free(h);
	}
	oxr_buf_free(&tagged);
	release(srv, me, opt);
	oxs_resume(r);
}

void oxs_overlay_post(oxs_req *r)
{
	if (r->body == NULL || r->body->len == 0) {
		oxs_reply_error(r, 400, "empty_body", "", "send the overlay file as the body");
		return;
	}
	if (r->body->failed) {
		oxs_reply_error(r, 413, "payload_too_large", "", "an overlay is at most %zu bytes",
		                OXS_OVERLAY_MAX);
		return;
	}
	if (r->id[0] == '\0') {
		oxs_reply_error(r, 404, "not_found", "", "no such model");
		return;
	}
	/* the query: optimized=<a model's id> at most, once */
	char optid[65];
	if (!optimized_query(r, optid)) {
		oxs_reply_error(r, 400, "bad_query", "",
		                "the one parameter is optimized=<the id of ORT's optimized model, "
		                "uploaded with POST /models>");
		return;
	}
	/* a file that starts as a stored overlay's line would be taken for one */
	const char *body;
	size_t blen;
	if (oxs_overlay_split(r->body->data, r->body->len, optid, &body, &blen)) {
		oxs_reply_error(r, 422, "bad_overlay", "",
		                "an overlay file does not start with \"" OXS_OVERLAY_TAG "\" (give the "
		                "optimized model as ?optimized=)");
		return;
	}
	oxs_defer(r, r->srv->work, work_overlay_post);
}

static void work_overlay_get(oxs_req *r)
{
	oxs_server *srv = r->srv;
	char name[96];
	overlay_name(r->param, name, sizeof(name));
	int fd = -1;
	uint64_t size = 0;
	oxst_status st = srv->store->ops->get_rendering(srv->store, r->id, name, &fd, &size);
	if (st != OXST_OK || size > OXR_HEAT_MAX_BYTES) {
		if (fd >= 0)
			close(fd);
		oxs_reply_error(r, 404, "not_found", "", "no such overlay of this model");
		oxs_resume(r);
		return;
	}
	char *data = oxst_read_all(fd, size);
	close(fd);
	oxs_mentry *me = NULL, *opt = NULL;
	oxr_heat *h = data ? attribute(r, data, (size_t)size, &me, &opt) : NULL;
	if (data == NULL)
		oxs_reply_error(r, 503, "io_error", "", "cannot read the overlay");
	if (h != NULL) {
		oxs_query_pair pairs[8];
		char q[OXS_QUERY_MAX];
		snprintf(q, sizeof(q), "%s", r->query);
		int n = oxs_query_split(q, pairs, 8);
		int k = (int)h->primary;
		for (int i = 0; i < n; i++)
			if (!strcmp(pairs[i].key, "metric"))
				k = oxr_heat_metric(h, pairs[i].value);
		oxr_buf b;
		oxr_error err;
		oxr_buf_init(&b, 0);
		if (k < 0)
			oxs_reply_error(r, 400, "bad_option", "", "no such metric in the overlay");
		else if (oxr_heat_table_json(h, oxs_mentry_dag(me), (uint32_t)k, 0, &b, &err) != OXR_OK)
			oxs_reply_error(r, 503, oxr_code_name(err.code), "", "%s", err.message);
		else
			oxs_reply_json(r, 200, &b);
		oxr_buf_free(&b);
		oxr_heat_free(h);
	}
	free(data);
	release(srv, me, opt);
	oxs_resume(r);
}

void oxs_overlay_get(oxs_req *r)
{
	if (r->id[0] == '\0' || !oid_ok(r->param)) {
		oxs_reply_error(r, 404, "not_found", "", "no such overlay");
		return;
	}
	oxs_defer(r, r->srv->work, work_overlay_get);
}
