/*
 * fuzz_overlay.c — libFuzzer target: heat overlay files (render/heat_*.c, docs/overlays.md)
 * read and attributed to a model, and drawn into a view, in process and without Graphviz.
 * The input's first byte is options, the rest an overlay file of any kind (ONNX Runtime
 * profile, Model Explorer node data, Netron attachment, CSV).  The model is fixed
 * (tests/fuzz/overlay_model.h, made with the seeds by tests/fuzz/make_overlay_seeds, in
 * python3 with onnx, which the suite does not run: three repeated scopes that draw as a ×3
 * stack, unnamed nodes ORT names <Op>_<k>, a folded Shape chain), and so is
 * ORT's optimized model of it, given when bit 5 of the options is set.  Bits 0-2 pick the
 * metric drawn, 3-4 the scale, 6-7 the grouping (auto, none, 1, 2).
 *
 * Checks:
 *  - the overlay is built, or refused with OXR_E_OVERLAY (or memory) and a message in
 *    valid UTF-8 (messages end up in JSON error answers);
 *  - a built overlay is consistent: 1 to 32 metrics with names and units, names found
 *    again by oxr_heat_metric, a primary metric in range, one value per node and metric,
 *    each NaN or finite within 1e300 (profiles: at least 0); fused groups point at an
 *    anchor in range that is its own anchor, of at least 2 nodes; matched + unmatched =
 *    entries; the unmatched largest first, with finite shares (profiles: in [0, 1]) and
 *    UTF-8 names;
 *  - a profile adds up exactly: per node dur.total is whole microseconds, the nodes' sum
 *    is the attributed time, plus the unmatched the total; dur.mean = dur.total / runs,
 *    p50 <= p90 <= dur.total; each provider's own dur.total@P is at most the node's
 *    dur.total, and the providers' sum at most the total;
 *  - the table (oxr_heat_table_json) is valid UTF-8 and parses (jansson) with the
 *    unmatched and at most one entry per node;
 *  - the view with the overlay builds (or fails for size or memory) and its layout JSON is
 *    valid UTF-8 and parses, every box with heat has a finite value and a #rrggbb colour;
 *    a ×N stack's hottest repetition is within its repetitions with a UTF-8 name and, for
 *    a profile (no negative figures), at most the box's value.
 */
#include "tests/fuzz/fuzz_common.h"
#include "render/internal.h"
#include "tests/fuzz/overlay_model.h"

#include <jansson.h>
#include <math.h>

#define FUZZ_MAX_OUTPUT ((size_t)16 << 20)

static oxp_model *model_m, *opt_m;
static oxp_dag *model_d, *opt_d;

/* The fixed models, parsed once (the buffers are static: oxp_model_parse borrows them). */
static void load_models(void)
{
	if (model_d != NULL)
		return;
	FZ_CHECK(fz_parse_link(overlay_model, sizeof(overlay_model), NULL, true, &model_m,
	                       &model_d));
	FZ_CHECK(fz_parse_link(overlay_optimized, sizeof(overlay_optimized), NULL, false, &opt_m,
	                       &opt_d));
}

static bool is_profile(const oxr_heat *h)
{
	return !strcmp(h->format, "ort-profile");
}

static void check_heat(const oxr_heat *h)
{
	const oxp_dag_view *dv = oxp_dag_get(model_d);
	FZ_CHECK(h->format != NULL && h->nnodes == dv->nnodes);
	FZ_CHECK(h->nmetrics >= 1 && h->nmetrics <= OXR_HEAT_MAX_METRICS && h->primary < h->nmetrics);
	for (uint32_t k = 0; k < h->nmetrics; k++) {
		FZ_CHECK(h->metrics[k] != NULL && h->units[k] != NULL);
		FZ_CHECK(fz_utf8_valid((const unsigned char *)h->metrics[k], strlen(h->metrics[k])));
		int f = oxr_heat_metric(h, h->metrics[k]);
		FZ_CHECK(f >= 0 && (uint32_t)f < h->nmetrics && !strcmp(h->metrics[f], h->metrics[k]));
	}
	bool prof = is_profile(h);
	for (uint32_t n = 0; n < h->nnodes; n++) {
		for (uint32_t k = 0; k < h->nmetrics; k++) {
			double v = h->values[(size_t)n * h->nmetrics + k];
			FZ_CHECK(isnan(v) || (isfinite(v) && fabs(v) <= 1e300));
			FZ_CHECK(!prof || isnan(v) || v >= 0);
		}
		uint32_t a = h->fused[n];
		if (a != OXP_NONE) {
			FZ_CHECK(a < h->nnodes && h->fused[a] == a && h->fused_size[n] >= 2);
			FZ_CHECK(h->fused_size[a] == h->fused_size[n]);
		}
	}
	FZ_CHECK(h->nmatched + h->nunmatched == h->nentries);
	FZ_CHECK(h->nunmatched_listed == (h->nunmatched < OXR_HEAT_UNMATCHED_LISTED
	                                      ? h->nunmatched : OXR_HEAT_UNMATCHED_LISTED));
	for (uint32_t i = 0; i < h->nunmatched_listed; i++) {
		const oxr_heat_unmatched *u = &h->unmatched[i];
		FZ_CHECK(u->name != NULL && fz_utf8_valid((const unsigned char *)u->name, strlen(u->name)));
		/* a share of the total: within [0, 1] when no figure is negative (profiles) */
		FZ_CHECK(isfinite(u->share) && (!prof || (u->share >= 0 && u->share <= 1)));
		FZ_CHECK(i == 0 || !(u->value > h->unmatched[i - 1].value));
	}
	if (!prof)
		return;
	/* the four time metrics come first (docs/overlays.md), then dur.mean@P, dur.total@P */
	FZ_CHECK(h->nmetrics >= 4 && (h->nmetrics - 4) % 2 == 0 && h->runs >= 1);
	FZ_CHECK(!strcmp(h->metrics[0], "dur.mean") && !strcmp(h->metrics[3], "dur.total"));
	double sum = 0, un = 0, prov = 0;
	for (uint32_t n = 0; n < h->nnodes; n++) {
		const double *v = h->values + (size_t)n * h->nmetrics;
		if (isnan(v[3])) {
			for (uint32_t k = 0; k < h->nmetrics; k++)
				FZ_CHECK(isnan(v[k]));
			continue;
		}
		FZ_CHECK(v[3] == floor(v[3]) && v[3] <= 9e15);
		FZ_CHECK(fabs(v[0] - v[3] / h->runs) <= 1e-9 * (v[3] + 1));
		FZ_CHECK(v[1] <= v[2] && v[2] <= v[3]);
		double mine = 0;
		for (uint32_t k = 4; k + 1 < h->nmetrics; k += 2) {
			FZ_CHECK(strchr(h->metrics[k], '@') != NULL);
			if (!isnan(v[k + 1])) {
				FZ_CHECK(v[k + 1] == floor(v[k + 1]) && v[k + 1] <= v[3]);
				FZ_CHECK(fabs(v[k] - v[k + 1] / h->runs) <= 1e-9 * (v[k + 1] + 1));
				mine += v[k + 1];
			}
		}
		FZ_CHECK(mine <= v[3]);
		sum += v[3];
	}
	for (uint32_t i = 0; i < h->nunmatched_listed; i++)
		un += h->unmatched[i].value;
	for (uint32_t i = 0; i < h->nproviders; i++)
		prov += h->providers[i].total;
	/* whole microseconds below 2^53: the sums are exact */
	FZ_CHECK(sum == h->attributed);
	/* every unmatched name listed: they add up to the rest (else the listed are a part) */
	FZ_CHECK(h->nunmatched_listed < h->nunmatched ? sum + un <= h->total : sum + un == h->total);
	FZ_CHECK(prov <= h->total);
}

static void check_table(const oxr_heat *h, uint32_t metric)
{
	oxr_buf b;
	oxr_error e;
	memset(&e, 0, sizeof(e));
	oxr_buf_init(&b, FUZZ_MAX_OUTPUT);
	oxr_code rc = oxr_heat_table_json(h, model_d, metric, 0, &b, &e);
	fz_buf(&b);
	if (rc != OXR_OK) {
		fz_render_error(&e, rc);
		FZ_CHECK(rc == OXR_E_NOMEM || rc == OXR_E_TOO_BIG);
		oxr_buf_free(&b);
		return;
	}
	json_t *j = fz_json_doc(&b, JSON_ALLOW_NUL, "fuzz_overlay: table");
	FZ_CHECK(json_array_size(json_object_get(j, "unmatched")) == h->nunmatched_listed);
	FZ_CHECK(json_integer_value(json_object_get(j, "unmatched_count")) == h->nunmatched);
	FZ_CHECK(json_array_size(json_object_get(j, "nodes")) <= h->nnodes);
	json_decref(j);
	oxr_buf_free(&b);
}

static void check_view(const oxr_heat *h, uint8_t opt)
{
	static const char *const groups[4] = {"auto", "none", "1", "2"};
	oxr_options o;
	oxr_error e;
	memset(&e, 0, sizeof(e));
	oxr_options_default(&o);
	FZ_CHECK(oxr_options_set(&o, "group", groups[(opt >> 6) & 3], &e) == OXR_OK);
	oxr_overlay ov;
	memset(&ov, 0, sizeof(ov));
	ov.heat = h;
	ov.heat_metric = (uint32_t)(opt & 7) % h->nmetrics;
	ov.heat_scale = (uint8_t)(((opt >> 3) & 3) % 3);
	ov.legend = "fuzz";
	view v;
	oxr_code rc = oxr__view_build(&v, model_m, model_d, &o, &ov, &e);
	if (rc != OXR_OK) {
		fz_render_error(&e, rc);
		FZ_CHECK(rc == OXR_E_TOO_BIG || rc == OXR_E_NOMEM);
		oxr__view_free(&v);
		return;
	}
	oxr_buf b;
	oxr_buf_init(&b, FUZZ_MAX_OUTPUT);
	rc = oxr__write_layout_json(&v, &b, &e);
	fz_buf(&b);
	if (rc == OXR_OK) {
		json_t *j = fz_json_doc(&b, 0, "fuzz_overlay: layout JSON");
		FZ_CHECK(json_array_size(json_object_get(j, "nodes")) == v.nboxes);
		json_decref(j);
	} else {
		fz_render_error(&e, rc);
		FZ_CHECK(rc == OXR_E_TOO_BIG);
	}
	oxr_buf_free(&b);
	for (uint32_t i = 0; i < v.nboxes; i++) {
		const vbox *bx = &v.boxes[i];
		if (!bx->heat)
			continue;
		FZ_CHECK(isfinite(bx->heat_value) && bx->heat_fill != NULL);
		FZ_CHECK(strlen(bx->heat_fill) == 7 && bx->heat_fill[0] == '#' &&
		         strspn(bx->heat_fill + 1, "0123456789abcdef") == 6);
		if (bx->heat_rep >= 0) {
			FZ_CHECK(bx->reps > 0 && (uint32_t)bx->heat_rep < bx->reps);
			FZ_CHECK(isfinite(bx->heat_rep_value));
			FZ_CHECK(!is_profile(h) || bx->heat_rep_value <= bx->heat_value * (1 + 1e-12));
		}
	}
	oxr__view_free(&v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	load_models();
	if (size == 0)
		return 0;
	uint8_t opt = data[0];
	oxr_heat_input in = {(const char *)data + 1, size - 1, "fuzz"};
	oxr_heat *h = NULL;
	oxr_error e;
	memset(&e, 0, sizeof(e));
	oxr_code rc = oxr_heat_build(&in, 1, model_d, opt & 0x20 ? opt_d : NULL, &h, &e);
	if (rc != OXR_OK) {
		fz_render_error(&e, rc);
		FZ_CHECK(rc == OXR_E_OVERLAY || rc == OXR_E_NOMEM);
		FZ_CHECK(fz_utf8_valid((const unsigned char *)e.message, strlen(e.message)));
		FZ_CHECK(h == NULL);
		return 0;
	}
	FZ_CHECK(h != NULL);
	check_heat(h);
	check_table(h, (uint32_t)(opt & 7) % h->nmetrics);
	check_view(h, opt);
	oxr_heat_free(h);
	return 0;
}
