/*
 * heat_svc.c — heat overlays in the service (docs/overlays.md): the query of a drawing
 * (`graph.svg?overlay=cost&metric=macs&scale=log`) and the worker side of such a drawing.
 *
 * A heat drawing is laid out by the layout worker like a diff, through the worker's pair
 * function: the model, and as the "other" file the overlay (a path, or "cost" for the
 * built-in), with the scale and metric where a model's data folder would be ("log|macs");
 * the format is "heat-svg", "heat-dot" or "heat-json".  oxs_pair routes those here and
 * everything else to the diff (oxs_diff_pair).
 */
#include "render/oxr.h"
#include "service/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool oxs_heat_query(oxs_query_pair *pairs, size_t *n, oxs_heat_req *hr, char *err,
                    size_t errsize)
{
	memset(hr, 0, sizeof(*hr));
	size_t k = 0;
	bool metric = false, scale = false;
	for (size_t i = 0; i < *n; i++) {
		const char *key = pairs[i].key, *v = pairs[i].value;
		if (!strcmp(key, "overlay")) {
			/* the built-in only: stored overlays (POST /models/{id}/overlays) are not there
			 * yet, and nothing else may reach the worker as a path */
			if (strcmp(v, "cost") != 0 || hr->overlay[0] != '\0') {
				snprintf(err, errsize, "overlay: 'cost' (the cost model's figures), once");
				return false;
			}
			snprintf(hr->overlay, sizeof(hr->overlay), "%s", v);
		} else if (!strcmp(key, "metric")) {
			size_t len = strlen(v);
			if (metric || len == 0 || len > 64 || strspn(v, "abcdefghijklmnopqrstuvwxyz"
			                                              "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
			                                              "0123456789._-") != len) {
				snprintf(err, errsize, "metric: a metric name ([A-Za-z0-9._-], 1 to 64), once");
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
	char *buf = oxs_read_all(fd, (uint64_t)st.st_size);
	close(fd);
	if (buf == NULL)
		oxs_render_fail(err, OXR_E_IO, "cannot read the overlay");
	*len = (size_t)st.st_size;
	return buf;
}

static oxr_code heat_pair(const oxr_model_files *model, const oxr_model_files *other,
                          const char *fmt, const oxr_options *o, oxr_buf *out, oxr_error *err)
{
	/* other->data_dir: "<scale>|<metric>" */
	const char *bar = strchr(other->data_dir, '|');
	uint8_t scale = 0;
	char sname[16];
	snprintf(sname, sizeof(sname), "%.*s", bar ? (int)(bar - other->data_dir) : 0,
	         other->data_dir);
	if (bar == NULL || !oxr_heat_scale_parse(sname, &scale))
		return oxs_render_fail(err, OXR_E_OPTION, "bad heat arguments");
	const char *metric = bar + 1;
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
	if (!strcmp(other->path, "cost")) {
		rc = oxr_heat_cost(d, &h, err);
	} else {
		size_t len = 0;
		char *data = read_overlay(other->path, &len, err);
		oxr_heat_input in = {data, len, "overlay"};
		rc = data ? oxr_heat_build(&in, 1, d, NULL, &h, err) : err->code;
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
		snprintf(cap, sizeof(cap), "%s · coverage %.1f%% · %u unmatched", h->format,
		         100 * (h->total != 0 ? h->attributed / h->total : 1), h->nunmatched);
		ov.legend = cap;
		rc = oxr_render_overlay(m, d, o, &ov, f, out, err);
	}
	oxr_heat_free(h);
	oxp_dag_free(d);
	oxp_model_free(m);
	return rc;
}

oxr_code oxs_pair(const oxr_model_files *model, const oxr_model_files *other, const char *fmt,
                  const oxr_options *o, oxr_buf *out, oxr_error *err)
{
	if (!strncmp(fmt, "heat-", 5))
		return heat_pair(model, other, fmt, o, out, err);
	return oxs_diff_pair(model, other, fmt, o, out, err);
}
