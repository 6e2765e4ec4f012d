/*
 * heat_compare.c — two overlays of one model compared (oxr_heat_compare, issue 38): per
 * node B − A and B / A of one metric, drawn on a diverging scale (heat_draw.c), the
 * largest changes first in the table (heat_table.c).  Before and after a change, or two
 * runtimes (ORT and TensorRT both give dur.mean in us), as long as both attribute to the
 * same nodes.
 *
 * A node with a figure in only one of them is marked (side 1: only A, 2: only B) and
 * counts with 0 on the other side: its difference is its figure, so the differences add
 * up to the difference of the two sums (sum_b − sum_a), node by node.  Its ratio is none.
 */
#include "render/heat_int.h"

#include <math.h>
#include <string.h>

oxr_code oxr_heat_compare(const oxr_heat *a, uint32_t ma, const oxr_heat *b, uint32_t mb,
                          oxr_heat **out, oxr_error *err)
{
	*out = NULL;
	if (ma >= a->nmetrics || mb >= b->nmetrics || a->nnodes != b->nnodes)
		return oxr__fail(err, OXR_E_OVERLAY, "the two overlays are not of one model");
	if (strcmp(a->units[ma], b->units[mb]) != 0 || a->sums[ma] != b->sums[mb])
		return oxr__fail(err, OXR_E_OVERLAY, "%s (%s) and %s (%s) are not one measure",
		                 a->metrics[ma], a->units[ma][0] ? a->units[ma] : "no unit",
		                 b->metrics[mb], b->units[mb][0] ? b->units[mb] : "no unit");
	oxp_arena *ar = oxp_arena_new((size_t)1 << 30);
	uint32_t nn = a->nnodes;
	oxr_heat *h = ar ? oxp_arena_alloc(ar, sizeof(*h)) : NULL;
	double *vals = ar ? oxp_arena_array(ar, (size_t)(nn ? nn : 1) * 4, sizeof(double)) : NULL;
	uint32_t *fused = ar ? oxp_arena_array(ar, nn ? nn : 1, sizeof(uint32_t)) : NULL;
	uint32_t *fsize = ar ? oxp_arena_array(ar, nn ? nn : 1, sizeof(uint32_t)) : NULL;
	uint8_t *side = ar ? oxp_arena_array(ar, nn ? nn : 1, 1) : NULL;
	uint8_t *by = ar ? oxp_arena_array(ar, nn ? nn : 1, 1) : NULL;
	if (h == NULL || vals == NULL || fused == NULL || fsize == NULL || side == NULL ||
	    by == NULL) {
		oxp_arena_free(ar);
		return oxr__fail(err, OXR_E_NOMEM, "out of memory");
	}
	memset(h, 0, sizeof(*h));
	static const char *const names[4] = {"diff", "ratio", "a", "b"};
	static const bool sums[4] = {true, false, true, true};
	/* copied: a and b may be freed before the comparison is */
	const char *unit = oxp_arena_strndup(ar, a->units[ma], strlen(a->units[ma]));
	const char *mname = oxp_arena_strndup(ar, a->metrics[ma], strlen(a->metrics[ma]));
	h->arena = ar;
	h->format = "compare";
	h->nmetrics = 4;
	h->metrics = names;
	const char **u = oxp_arena_array(ar, 4, sizeof(char *));
	if (u == NULL || unit == NULL || mname == NULL) {
		oxp_arena_free(ar);
		return oxr__fail(err, OXR_E_NOMEM, "out of memory");
	}
	u[0] = u[2] = u[3] = unit;
	u[1] = "×";
	h->units = u;
	h->sums = sums;
	h->nnodes = nn;
	h->runs = 1;
	double sa = 0, sb = 0;
	for (uint32_t n = 0; n < nn; n++) {
		double x = a->values[(size_t)n * a->nmetrics + ma];
		double y = b->values[(size_t)n * b->nmetrics + mb];
		bool hx = isfinite(x), hy = isfinite(y);
		double *v = vals + (size_t)n * 4;
		side[n] = (uint8_t)((hx ? 1 : 0) | (hy ? 2 : 0));
		v[0] = hx || hy ? (hy ? y : 0) - (hx ? x : 0) : NAN;
		v[1] = hx && hy && x > 0 ? y / x : NAN;
		v[2] = hx ? x : NAN;
		v[3] = hy ? y : NAN;
		sa += hx ? x : 0;
		sb += hy ? y : 0;
		fused[n] = OXP_NONE;
		fsize[n] = 0;
		by[n] = (uint8_t)((a->matched_by ? a->matched_by[n] : 0) |
		                  (b->matched_by ? b->matched_by[n] : 0));
		if (hx && hy) {
			h->nmatched++;
		} else if (hx || hy) {
			h->compare_only[hx ? 0 : 1]++; /* one-sided nodes */
		}
	}
	h->values = vals;
	h->fused = fused;
	h->fused_size = fsize;
	h->matched_by = by;
	h->side = side;
	h->compare_sources[0] = a->format; /* the readers' names: static */
	h->compare_sources[1] = b->format;
	h->compare_metric = mname;
	h->compare_sums[0] = sa;
	h->compare_sums[1] = sb;
	h->nentries = h->nmatched + h->compare_only[0] + h->compare_only[1];
	h->total = h->attributed = sb - sa;
	h->unmatched = NULL;
	*out = h;
	return OXR_OK;
}
