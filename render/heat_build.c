/*
 * heat_build.c — the table of an overlay (oxr_heat_build, oxr_heat_cost): inputs read
 * (heat_read.c), their entries attributed (heat_attr.c), per node and metric; a
 * profile's figures per run (mean, p50, p90, total, per provider), exact in whole
 * microseconds; what matched nothing listed, the largest first.
 */
#include "render/heat_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------
 * Building the table
 */
static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static int cmp_unmatched(const void *a, const void *b)
{
	const oxr_heat_unmatched *x = a, *y = b;
	return x->value > y->value ? -1 : x->value < y->value ? 1 : strcmp(x->name, y->name);
}

/* Sum or max for a metric named so (docs/overlays.md): time, counts and sizes add up. */
static bool summable(const char *m)
{
	static const char *const words[] = {"dur", "time", "latency", "mac", "flop", "byte",
	                                    "param", "count", "cycles", "energy", "mem", "ms",
	                                    "us", "size"};
	char low[72];
	size_t i = 0;
	for (; m[i] && i + 1 < sizeof(low); i++)
		low[i] = (char)(m[i] >= 'A' && m[i] <= 'Z' ? m[i] + 32 : m[i]);
	low[i] = '\0';
	for (size_t k = 0; k < sizeof(words) / sizeof(words[0]); k++)
		if (strstr(low, words[k]) != NULL)
			return true;
	return false;
}

static oxr_heat *heat_new(oxp_arena *a, uint32_t nnodes, uint32_t nmetrics)
{
	oxr_heat *h = oxp_arena_alloc(a, sizeof(oxr_heat));
	if (h == NULL)
		return NULL;
	memset(h, 0, sizeof(*h));
	h->arena = a;
	h->nnodes = nnodes;
	h->nmetrics = nmetrics;
	h->runs = 1;
	double *vals = oxp_arena_array(a, (size_t)(nnodes ? nnodes : 1) * nmetrics, sizeof(double));
	uint32_t *fused = oxp_arena_array(a, nnodes ? nnodes : 1, sizeof(uint32_t));
	uint32_t *fsize = oxp_arena_array(a, nnodes ? nnodes : 1, sizeof(uint32_t));
	uint8_t *by = oxp_arena_array(a, nnodes ? nnodes : 1, 1);
	h->metrics = oxp_arena_array(a, nmetrics, sizeof(char *));
	h->units = oxp_arena_array(a, nmetrics, sizeof(char *));
	h->sums = oxp_arena_array(a, nmetrics, sizeof(bool));
	if (!vals || !fused || !fsize || !by || !h->metrics || !h->units || !h->sums)
		return NULL;
	memset(by, 0, nnodes ? nnodes : 1);
	h->matched_by = by;
	for (size_t i = 0; i < (size_t)nnodes * nmetrics; i++)
		vals[i] = NAN;
	for (uint32_t i = 0; i < nnodes; i++) {
		fused[i] = OXP_NONE;
		fsize[i] = 0;
	}
	h->values = vals;
	h->fused = fused;
	h->fused_size = fsize;
	return h;
}

/* An unmatched entry's value: a profile's time, else its first metric (0 when none). */
static double unmatched_value(const heat_parse *p, uint32_t i, bool profile)
{
	if (profile)
		return (double)p->e[i].total;
	double v = p->e[i].nv > 0 ? p->e[i].v[0] : NAN;
	return isfinite(v) ? v : 0;
}

/* True when entry i goes after entry j in the list: smaller, or as large and named
 * after it (cmp_unmatched's order). */
static bool unmatched_after(const heat_parse *p, uint32_t i, uint32_t j, bool profile)
{
	double x = unmatched_value(p, i, profile), y = unmatched_value(p, j, profile);
	return x < y || (x == y && strcmp(p->e[i].name, p->e[j].name) > 0);
}

/* Restore the heap below slot k (the entry that goes last at the root). */
static void heap_down(const heat_parse *p, uint32_t *heap, uint32_t n, uint32_t k, bool profile)
{
	for (;;) {
		uint32_t l = 2 * k + 1, r = l + 1, m = k;
		if (l < n && unmatched_after(p, heap[l], heap[m], profile))
			m = l;
		if (r < n && unmatched_after(p, heap[r], heap[m], profile))
			m = r;
		if (m == k)
			return;
		uint32_t t = heap[k];
		heap[k] = heap[m];
		heap[m] = t;
		k = m;
	}
}

/* The unmatched entries (those with flag[i] == mark): h->nunmatched counts them all,
 * h->unmatched lists the OXR_HEAT_UNMATCHED_LISTED largest, largest first.  A hostile
 * input of 1.4M names nothing matches keeps a few hundred KB here, not a copy of every
 * name: the selection is a heap of the listed ones (their names copied at the end). */
static oxr_code list_unmatched(heat_parse *p, oxr_heat *h, const uint32_t *flag, uint32_t mark,
                               bool profile, double total)
{
	uint32_t heap[OXR_HEAT_UNMATCHED_LISTED], nh = 0, nun = 0;
	for (uint32_t i = 0; i < p->n; i++) {
		if (flag[i] != mark)
			continue;
		nun++;
		if (nh < OXR_HEAT_UNMATCHED_LISTED) {
			/* sift up: the root is the entry that goes last */
			uint32_t k = nh++;
			heap[k] = i;
			while (k > 0 && unmatched_after(p, heap[k], heap[(k - 1) / 2], profile)) {
				uint32_t t = heap[k];
				heap[k] = heap[(k - 1) / 2];
				heap[(k - 1) / 2] = t;
				k = (k - 1) / 2;
			}
		} else if (unmatched_after(p, heap[0], i, profile)) {
			heap[0] = i;
			heap_down(p, heap, nh, 0, profile);
		}
	}
	oxr_heat_unmatched *un = oxp_arena_array(h->arena, nh ? nh : 1, sizeof(*un));
	if (un == NULL)
		return oxr__heat_nomem(p);
	for (uint32_t u = 0; u < nh; u++) {
		const heat_entry *e = &p->e[heap[u]];
		double v = unmatched_value(p, heap[u], profile);
		un[u].name = oxr__text(h->arena, (oxp_str){e->name, e->len}, 200);
		un[u].op = profile ? e->op : NULL;
		un[u].value = v;
		un[u].share = total != 0 ? v / total : 0;
		if (un[u].name == NULL)
			return oxr__heat_nomem(p);
	}
	if (nh > 1)
		qsort(un, nh, sizeof(*un), cmp_unmatched);
	h->unmatched = un;
	h->nunmatched = nun;
	h->nunmatched_listed = nh;
	return OXR_OK;
}

typedef heat_groups groups;

static void groups_free(groups *gs)
{
	free(gs->off);
	free(gs->nodes);
	free(gs->how);
}

static bool groups_push(groups *gs, const uint32_t *g, uint32_t n)
{
	if (gs->len + n > gs->cap) {
		size_t cap = gs->cap * 2;
		while (cap < gs->len + n)
			cap *= 2;
		uint32_t *nn = realloc(gs->nodes, cap * sizeof(uint32_t));
		if (nn == NULL)
			return false;
		gs->nodes = nn;
		gs->cap = cap;
	}
	memcpy(gs->nodes + gs->len, g, n * sizeof(uint32_t));
	gs->len += n;
	return true;
}

/* What oxr__heat_infer gives, kept aside until all is known: (entry, nodes, how) */
typedef struct given {
	groups *gs;
	uint32_t *at;     /* per entry: its first node in extra, else OXP_NONE */
	uint32_t *size;   /* per entry given: nodes */
	groups extra;     /* off[] unused: at[] and size[] say where */
} given;

static oxr_code give(void *ctx, uint32_t entry, const uint32_t *g, uint32_t n, uint8_t how)
{
	given *gv = ctx;
	if (gv->at[entry] != OXP_NONE)
		return OXR_OK;
	gv->at[entry] = (uint32_t)gv->extra.len;
	gv->size[entry] = n;
	gv->gs->how[entry] = how;
	return groups_push(&gv->extra, g, n) ? OXR_OK : OXR_E_NOMEM;
}

/* Profiles: the entries matched by op type, shapes and order or as neighbours
 * (oxr__heat_infer) merged into gs. */
static bool groups_infer(groups *gs, heat_parse *p, heat_attr *c)
{
	uint32_t *seq = malloc((size_t)(p->n ? p->n : 1) * sizeof(uint32_t));
	uint8_t *seen = calloc(p->n ? p->n : 1, 1);
	given gv = {gs, malloc((size_t)(p->n ? p->n : 1) * sizeof(uint32_t)),
	            calloc(p->n ? p->n : 1, sizeof(uint32_t)), {0}};
	gv.extra.nodes = malloc(256 * sizeof(uint32_t));
	gv.extra.cap = 256;
	groups ng = {0};
	bool ok = seq && seen && gv.at && gv.size && gv.extra.nodes;
	uint32_t nseq = 0;
	/* execution order: the entries as their kernels first come */
	for (size_t k = 0; ok && k < p->nk; k++)
		if (!seen[p->k[k].entry]) {
			seen[p->k[k].entry] = 1;
			seq[nseq++] = p->k[k].entry;
		}
	for (uint32_t i = 0; ok && i < p->n; i++)
		gv.at[i] = OXP_NONE;
	ok = ok && oxr__heat_infer(c, p, seq, nseq, gs, give, &gv) == OXR_OK;
	if (ok && gv.extra.len > 0) {
		ng.off = malloc(((size_t)p->n + 1) * sizeof(uint32_t));
		ng.nodes = malloc((gs->len + gv.extra.len) * sizeof(uint32_t));
		ok = ng.off && ng.nodes;
		for (uint32_t i = 0; ok && i < p->n; i++) {
			ng.off[i] = (uint32_t)ng.len;
			const uint32_t *src = gv.at[i] != OXP_NONE ? gv.extra.nodes + gv.at[i]
			                                          : gs->nodes + gs->off[i];
			uint32_t n = gv.at[i] != OXP_NONE ? gv.size[i] : gs->off[i + 1] - gs->off[i];
			memcpy(ng.nodes + ng.len, src, n * sizeof(uint32_t));
			ng.len += n;
		}
		if (ok) {
			ng.off[p->n] = (uint32_t)ng.len;
			ng.cap = gs->len + gv.extra.len;
			ng.how = gs->how;
			free(gs->off);
			free(gs->nodes);
			*gs = ng;
			ng.off = NULL;
			ng.nodes = NULL;
		}
	}
	free(ng.off);
	free(ng.nodes);
	free(seq);
	free(seen);
	free(gv.at);
	free(gv.size);
	free(gv.extra.nodes);
	return ok;
}

static bool groups_build(groups *gs, heat_parse *p, heat_attr *c)
{
	memset(gs, 0, sizeof(*gs));
	gs->off = malloc(((size_t)p->n + 1) * sizeof(uint32_t));
	gs->nodes = malloc(1024 * sizeof(uint32_t));
	gs->how = calloc(p->n ? p->n : 1, 1);
	if (gs->off == NULL || gs->nodes == NULL || gs->how == NULL)
		return false;
	gs->cap = 1024;
	uint32_t g[MAX_GROUP];
	for (uint32_t i = 0; i < p->n; i++) {
		gs->off[i] = (uint32_t)gs->len; /* at most 2,000,000 x 64 */
		uint32_t n = oxr__heat_map_entry(c, &p->e[i], g, &gs->how[i]);
		if (n == 0)
			gs->how[i] = 0;
		if (!groups_push(gs, g, n))
			return false;
	}
	gs->off[p->n] = (uint32_t)gs->len;
	return !p->profile || groups_infer(gs, p, c);
}

static int cmp_inferred(const void *a, const void *b)
{
	const oxr_heat_inferred *x = a, *y = b;
	return x->value > y->value ? -1 : x->value < y->value ? 1 : strcmp(x->name, y->name);
}

/* The kernels matched by shapes and order or as neighbours: all counted, the largest
 * OXR_HEAT_UNMATCHED_LISTED listed (each says how, and where it went). */
static oxr_code list_inferred(heat_parse *p, oxr_heat *h, const groups *gs)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < p->n; i++)
		n += (gs->how[i] & (OXR_HEAT_BY_SHAPES | OXR_HEAT_BY_NEIGHBOUR)) != 0;
	h->ninferred = n;
	if (n == 0)
		return OXR_OK;
	oxr_heat_inferred *all = malloc((size_t)n * sizeof(*all));
	if (all == NULL)
		return oxr__heat_nomem(p);
	n = 0;
	for (uint32_t i = 0; i < p->n; i++)
		if (gs->how[i] & (OXR_HEAT_BY_SHAPES | OXR_HEAT_BY_NEIGHBOUR))
			all[n++] = (oxr_heat_inferred){p->e[i].name, p->e[i].op, gs->how[i],
			                               gs->nodes[gs->off[i]], gs->off[i + 1] - gs->off[i],
			                               gs->nodes + gs->off[i], (double)p->e[i].total};
	qsort(all, n, sizeof(*all), cmp_inferred);
	uint32_t keep = n < OXR_HEAT_UNMATCHED_LISTED ? n : OXR_HEAT_UNMATCHED_LISTED;
	oxr_heat_inferred *li = oxp_arena_array(h->arena, keep, sizeof(*li));
	oxr_code rc = OXR_OK;
	for (uint32_t i = 0; li != NULL && i < keep && rc == OXR_OK; i++) {
		li[i] = all[i];
		li[i].name = oxr__text(h->arena, (oxp_str){all[i].name, strlen(all[i].name)}, 200);
		uint32_t *grp = oxp_arena_array(h->arena, all[i].size, sizeof(uint32_t));
		if (grp != NULL)
			memcpy(grp, all[i].group, all[i].size * sizeof(uint32_t));
		li[i].group = grp;
		if (li[i].name == NULL || grp == NULL)
			rc = oxr__heat_nomem(p);
	}
	free(all);
	if (li == NULL)
		return oxr__heat_nomem(p);
	h->inferred = li;
	h->ninferred_listed = keep;
	return rc;
}

static oxr_code build_profile(heat_parse *p, heat_attr *c, oxr_heat *h, int64_t *node_total)
{
	/* per node per run: cells for the nodes that get time (slot per node) */
	uint32_t nn = c->dv->nnodes, runs = p->runs ? p->runs : 1;
	uint32_t *slot = malloc((size_t)(nn ? nn : 1) * sizeof(uint32_t));
	uint32_t *gn = calloc(p->n ? p->n : 1, sizeof(uint32_t));
	groups gs;
	bool mapped = groups_build(&gs, p, c);
	int64_t *cells = NULL, *tmp = NULL, *ptot = NULL;
	oxr_code rc = OXR_OK;
	if (!slot || !gn || !mapped) {
		rc = oxr__heat_nomem(p);
		goto out;
	}
	memset(slot, 0xff, (size_t)(nn ? nn : 1) * sizeof(uint32_t));
	uint32_t nslots = 0;
	for (uint32_t i = 0; i < p->n; i++) {
		gn[i] = gs.off[i + 1] - gs.off[i];
		for (uint32_t k = 0; k < gn[i]; k++) {
			uint32_t node = gs.nodes[gs.off[i] + k];
			if (slot[node] == OXP_NONE)
				slot[node] = nslots++;
		}
	}
	if ((size_t)nslots * runs > MAX_CELLS) {
		rc = oxr__heat_bad(p, "%u runs of %u nodes: more than %zu figures", runs, nslots, MAX_CELLS);
		goto out;
	}
	cells = calloc((size_t)(nslots ? nslots : 1) * runs, sizeof(int64_t));
	tmp = malloc((size_t)runs * sizeof(int64_t));
	if (!cells || !tmp) {
		rc = oxr__heat_nomem(p);
		goto out;
	}
	/* per node and provider with metrics: the time over all runs, -1 when none ran there */
	uint32_t npm = p->npm;
	ptot = malloc((size_t)(nslots ? nslots : 1) * (npm ? npm : 1) * sizeof(int64_t));
	if (ptot == NULL) {
		rc = oxr__heat_nomem(p);
		goto out;
	}
	for (size_t i = 0; i < (size_t)nslots * npm; i++)
		ptot[i] = -1;
	int64_t share[MAX_GROUP];
	for (size_t k = 0; k < p->nk; k++) {
		uint32_t ei = p->k[k].entry, n = gn[ei];
		if (n == 0)
			continue;
		const uint32_t *g = gs.nodes + gs.off[ei];
		oxr__heat_spread(c, g, n, p->k[k].dur, share);
		uint32_t pi = 0;
		while (pi < npm && (p->e[ei].provider == NULL || strcmp(p->pm[pi], p->e[ei].provider)))
			pi++;
		for (uint32_t i = 0; i < n; i++) {
			cells[(size_t)slot[g[i]] * runs + p->k[k].run] += share[i];
			if (pi < npm) {
				int64_t *t = &ptot[(size_t)slot[g[i]] * npm + pi];
				*t = (*t < 0 ? 0 : *t) + share[i];
			}
		}
	}
	/* fused groups and the table */
	int64_t total = 0, attributed = 0;
	for (uint32_t i = 0; i < p->n; i++) {
		total += p->e[i].total;
		if (gn[i] > 0) {
			attributed += p->e[i].total;
			h->nmatched++;
		}
		const uint32_t *g = gs.nodes + gs.off[i];
		for (uint32_t k = 0; k < gn[i]; k++)
			((uint8_t *)h->matched_by)[g[k]] |= gs.how[i];
		if (gn[i] > 1)
			for (uint32_t k = 0; k < gn[i]; k++) {
				((uint32_t *)h->fused)[g[k]] = g[0];
				((uint32_t *)h->fused_size)[g[k]] = gn[i];
			}
	}
	double *vals = (double *)h->values;
	for (uint32_t node = 0; node < nn; node++) {
		if (slot[node] == OXP_NONE)
			continue;
		const int64_t *row = cells + (size_t)slot[node] * runs;
		int64_t sum = 0;
		for (uint32_t r = 0; r < runs; r++)
			sum += (tmp[r] = row[r]);
		qsort(tmp, runs, sizeof(int64_t), cmp_i64);
		/* nearest rank: the smallest value with at least q of the runs at or below it */
		uint32_t r50 = (uint32_t)ceil(0.5 * runs), r90 = (uint32_t)ceil(0.9 * runs);
		double *v = vals + (size_t)node * h->nmetrics;
		v[0] = (double)sum / runs;
		v[1] = (double)tmp[r50 ? r50 - 1 : 0];
		v[2] = (double)tmp[r90 ? r90 - 1 : 0];
		v[3] = (double)sum;
		for (uint32_t pi = 0; pi < npm; pi++) { /* NaN (no data) where none ran there */
			int64_t t = ptot[(size_t)slot[node] * npm + pi];
			v[4 + 2 * pi] = t < 0 ? NAN : (double)t / runs;
			v[5 + 2 * pi] = t < 0 ? NAN : (double)t;
		}
		node_total[node] = sum;
	}
	h->total = (double)total;
	h->attributed = (double)attributed;
	h->runs = runs;
	rc = list_unmatched(p, h, gn, 0, true, (double)total);
	if (rc != OXR_OK)
		goto out;
	rc = list_inferred(p, h, &gs);
	if (rc != OXR_OK)
		goto out;
	if (p->exec_detail) { /* OpenVINO: per node its execution type, no providers */
		const char **det = oxp_arena_array(h->arena, nn ? nn : 1, sizeof(char *));
		if (det == NULL) {
			rc = oxr__heat_nomem(p);
			goto out;
		}
		memset(det, 0, (nn ? nn : 1) * sizeof(char *));
		for (uint32_t i = 0; i < p->n; i++)
			for (uint32_t k = 0; k < gn[i]; k++)
				if (det[gs.nodes[gs.off[i] + k]] == NULL)
					det[gs.nodes[gs.off[i] + k]] = p->e[i].provider;
		h->detail = det;
		goto out;
	}
	/* providers */
	oxr_heat_provider *pv = oxp_arena_array(h->arena, 16, sizeof(*pv));
	if (pv == NULL) {
		rc = oxr__heat_nomem(p);
		goto out;
	}
	uint32_t npv = 0;
	for (uint32_t i = 0; i < p->n; i++) {
		const char *name = p->e[i].provider ? p->e[i].provider : "(none)";
		uint32_t k = 0;
		while (k < npv && strcmp(pv[k].name, name) != 0)
			k++;
		if (k == npv) {
			if (npv == 16)
				continue;
			pv[npv].name = name;
			pv[npv].total = 0;
			npv++;
		}
		pv[k].total += (double)p->e[i].total;
	}
	h->providers = pv;
	h->nproviders = npv;
out:
	free(slot);
	groups_free(&gs);
	free(gn);
	free(cells);
	free(tmp);
	free(ptot);
	return rc;
}

/* The providers of a profile's kernels that get metrics of their own, in the order they
 * first appear: named [A-Za-z0-9._-] (they become metric names), the first few. */
static void profile_providers(heat_parse *p)
{
	p->npm = 0;
	for (uint32_t i = 0; i < p->n && p->npm < HEAT_PROVIDER_METRICS; i++) {
		const char *pv = p->e[i].provider;
		if (pv == NULL || pv[0] == '\0' ||
		    strspn(pv, OXR_HEAT_NAME_CHARS) != strlen(pv))
			continue;
		uint32_t k = 0;
		while (k < p->npm && strcmp(p->pm[k], pv) != 0)
			k++;
		if (k == p->npm)
			p->pm[p->npm++] = pv;
	}
}

static oxr_code build_generic(heat_parse *p, heat_attr *c, oxr_heat *h)
{
	uint32_t g[MAX_GROUP];
	double total = 0, attributed = 0;
	double *vals = (double *)h->values;
	uint32_t *hit = calloc(p->n ? p->n : 1, sizeof(uint32_t));
	if (hit == NULL)
		return oxr__heat_nomem(p);
	for (uint32_t i = 0; i < p->n; i++) {
		const heat_entry *e = &p->e[i];
		uint8_t how = 0;
		uint32_t n = oxr__heat_map_entry(c, e, g, &how);
		double pv = e->nv > 0 ? e->v[0] : NAN;
		if (isfinite(pv))
			total += pv;
		if (n == 0) {
			hit[i] = OXP_NONE;
			continue;
		}
		hit[i] = g[0];
		if (!p->spread)
			n = 1; /* node data: the anchor's */
		/* a fused layer drawn as a group when none of its nodes is in one yet: layers
		 * naming the same nodes (a layer and its reformatter, a node in two merged
		 * layers) keep the groups whole and apart, each anchor its own */
		bool free_nodes = n > 1;
		for (uint32_t k = 0; k < n; k++) {
			((uint8_t *)h->matched_by)[g[k]] |= how;
			free_nodes = free_nodes && h->fused[g[k]] == OXP_NONE;
		}
		for (uint32_t k = 0; free_nodes && k < n; k++) {
			((uint32_t *)h->fused)[g[k]] = g[0];
			((uint32_t *)h->fused_size)[g[k]] = n;
		}
		h->nmatched++;
		if (isfinite(pv))
			attributed += pv;
		for (uint32_t k = 0; k < p->nmetrics && k < e->nv; k++) {
			double x = e->v[k], share[MAX_GROUP];
			if (!isfinite(x))
				continue;
			/* a fused layer's figure spread as a profile's time is (sums), each node's
			 * the layer's (largest) */
			if (h->sums[k])
				oxr__heat_spread_real(c, g, n, x, share);
			for (uint32_t j = 0; j < n; j++) {
				double y = h->sums[k] ? share[j] : x;
				double *cell = vals + (size_t)g[j] * p->nmetrics + k;
				/* two names for one node (a node and its output): added, or the larger */
				*cell = isnan(*cell) ? y : h->sums[k] ? *cell + y : fmax(*cell, y);
			}
		}
	}
	oxr_code rc = list_unmatched(p, h, hit, OXP_NONE, false, total);
	if (rc != OXR_OK) {
		free(hit);
		return rc;
	}
	if (p->exec_detail) { /* TensorRT's layer type and precision, per anchor */
		const char **det = oxp_arena_array(h->arena, h->nnodes ? h->nnodes : 1, sizeof(char *));
		if (det == NULL) {
			free(hit);
			return oxr__heat_nomem(p);
		}
		memset(det, 0, (h->nnodes ? h->nnodes : 1) * sizeof(char *));
		for (uint32_t i = 0; i < p->n; i++)
			if (hit[i] != OXP_NONE && det[hit[i]] == NULL)
				det[hit[i]] = p->e[i].provider;
		h->detail = det;
	}
	h->total = total;
	h->attributed = attributed;
	free(hit);
	return OXR_OK;
}

oxr_code oxr_heat_build(const oxr_heat_input *in, uint32_t nin, const oxp_dag *d,
                        const oxp_dag *optimized, oxr_heat **out, oxr_error *err)
{
	*out = NULL;
	if (nin == 0 || nin > OXR_HEAT_MAX_INPUTS)
		return oxr__fail(err, OXR_E_OVERLAY, "%u inputs (1 to %d)", nin, OXR_HEAT_MAX_INPUTS);
	heat_parse p;
	memset(&p, 0, sizeof(p));
	heat_attr c;
	memset(&c, 0, sizeof(c));
	int64_t *node_total = NULL;
	p.err = err;
	p.a = oxp_arena_new((size_t)1 << 30);
	oxr_code rc = OXR_OK;
	if (p.a == NULL || !oxp_smap_init(&p.by_name, 1024)) {
		rc = oxr__fail(err, OXR_E_NOMEM, "out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < nin && rc == OXR_OK; i++) {
		p.input = in[i].name ? in[i].name : "overlay";
		rc = oxr__heat_parse_one(&p, &in[i]);
	}
	if (rc != OXR_OK)
		goto out;
	if (p.n == 0) {
		rc = oxr__heat_bad(&p, "no figures in it (%s)", p.format ? p.format : "?");
		goto out;
	}
	c.dv = oxp_dag_get(d);
	c.mark = calloc(c.dv->nnodes ? c.dv->nnodes : 1, sizeof(uint32_t));
	if (c.mark == NULL || !oxr__heat_index_dag(c.dv, p.a, &c.nodes, &c.values) ||
	    (optimized != NULL &&
	     !oxr__heat_index_dag(oxp_dag_get(optimized), NULL, &c.onodes, &c.ovalues))) {
		rc = oxr__fail(err, OXR_E_NOMEM, "out of memory");
		goto out;
	}
	if (optimized != NULL) {
		c.ov = oxp_dag_get(optimized);
		if (!oxr__heat_mark_owned(&c)) {
			rc = oxr__fail(err, OXR_E_NOMEM, "out of memory");
			goto out;
		}
	}
	c.d = d;
	if (p.profile && !p.exec_detail)
		profile_providers(&p);
	uint32_t nm = p.profile ? 4 + 2 * p.npm : p.nmetrics;
	oxr_heat *h = heat_new(p.a, c.dv->nnodes, nm);
	if (h == NULL) {
		rc = oxr__fail(err, OXR_E_NOMEM, "out of memory");
		goto out;
	}
	h->format = p.format;
	h->nentries = p.n;
	if (p.profile) {
		static const char *const names[4] = {"dur.mean", "dur.p50", "dur.p90", "dur.total"};
		for (uint32_t k = 0; k < nm; k++) {
			((const char **)h->metrics)[k] =
			    k < 4 ? names[k]
			          : oxp_arena_printf(p.a, "%s@%s", names[k % 2 ? 3 : 0], p.pm[(k - 4) / 2]);
			((const char **)h->units)[k] = "us";
			((bool *)h->sums)[k] = true;
		}
		node_total = calloc(c.dv->nnodes ? c.dv->nnodes : 1, sizeof(int64_t));
		rc = node_total ? build_profile(&p, &c, h, node_total) : oxr__heat_nomem(&p);
	} else {
		for (uint32_t k = 0; k < nm; k++) {
			((const char **)h->metrics)[k] = p.metrics[k];
			((const char **)h->units)[k] = p.units[k] ? p.units[k] : "";
			((bool *)h->sums)[k] = (p.sum_mask >> k & 1u) || summable(p.metrics[k]);
		}
		if (p.nthresholds > 0) {
			double *t = oxp_arena_array(p.a, p.nthresholds, sizeof(double));
			if (t != NULL) {
				memcpy(t, p.thresholds, p.nthresholds * sizeof(double));
				for (uint32_t i = 1; i < p.nthresholds; i++) /* ascending */
					for (uint32_t j = i; j > 0 && t[j - 1] > t[j]; j--) {
						double x = t[j];
						t[j] = t[j - 1];
						t[j - 1] = x;
					}
				h->thresholds = t;
				h->nthresholds = p.nthresholds;
			}
		}
		if (p.runs > 0)
			h->runs = p.runs; /* TensorRT's iterations */
		rc = build_generic(&p, &c, h);
	}
	if (rc == OXR_OK && oxp_arena_failed(p.a))
		rc = oxr__fail(err, OXR_E_NOMEM, "out of memory");
	if (rc == OXR_OK) {
		*out = h;
		p.a = NULL; /* the table owns it now */
	}
out:
	free(node_total);
	free(p.e);
	free(p.k);
	oxp_smap_free(&p.by_name);
	oxp_smap_free(&c.nodes);
	oxp_smap_free(&c.values);
	oxp_smap_free(&c.onodes);
	oxp_smap_free(&c.ovalues);
	free(c.mark);
	free(c.owned);
	oxp_arena_free(c.cost_arena);
	oxp_arena_free(p.a);
	return rc;
}

oxr_code oxr_heat_cost(const oxp_dag *d, oxr_heat **out, oxr_error *err)
{
	*out = NULL;
	const oxp_dag_view *dv = oxp_dag_get(d);
	oxp_arena *a = oxp_arena_new((size_t)1 << 30);
	const oxp_cost *cost = NULL;
	if (a == NULL || oxp_cost_compute(d, a, NULL, &cost, NULL) != OXP_OK) {
		oxp_arena_free(a);
		return oxr__fail(err, OXR_E_NOMEM, "the cost could not be computed (memory)");
	}
	static const char *const names[4] = {"macs", "flops", "params", "bytes"};
	static const char *const units[4] = {"MACs", "FLOPs", "params", "bytes"};
	oxr_heat *h = heat_new(a, dv->nnodes, 4);
	if (h == NULL) {
		oxp_arena_free(a);
		return oxr__fail(err, OXR_E_NOMEM, "out of memory");
	}
	h->format = "cost";
	for (uint32_t k = 0; k < 4; k++) {
		((const char **)h->metrics)[k] = names[k];
		((const char **)h->units)[k] = units[k];
		((bool *)h->sums)[k] = true;
	}
	double *vals = (double *)h->values, total = 0;
	for (uint32_t n = 0; n < dv->nnodes; n++) {
		const oxp_cost_node *cn = &cost->nodes[n];
		oxp_cost_poly fl;
		oxp_cost_flops(&fl, &cn->macs, &cn->ops);
		double v[4] = {oxp_cost_poly_eval(&cn->macs, 1), oxp_cost_poly_eval(&fl, 1),
		               cn->params.too_large ? NAN : (double)cn->params.weights,
		               oxp_cost_poly_eval(&cn->read, 1) + oxp_cost_poly_eval(&cn->written, 1)};
		for (int k = 0; k < 4; k++)
			vals[(size_t)n * 4 + (size_t)k] = isfinite(v[k]) ? v[k] : NAN;
		if (isfinite(v[0]))
			total += v[0];
		h->nentries++;
		h->nmatched++;
	}
	h->total = h->attributed = total;
	*out = h;
	return OXR_OK;
}

void oxr_heat_free(oxr_heat *h)
{
	if (h != NULL)
		oxp_arena_free(h->arena);
}
