/*
 * hier.c — the large-graph hierarchy: name scopes as groups.
 *
 * Exporters name nodes by module path: "/encoder/layers.3/self_attn/MatMul".  Every node
 * of a scope is filed under the group of its path without the last component (depth 3:
 * encoder > layers.3 > self_attn).  A view collapses every group at depth N (and deeper)
 * into one box, except groups the options expand; open groups below the root become
 * clusters; a collapsed group of one node is drawn as that node.  N comes from the options
 * (group=N, depth=N-1), or automatically: the most detailed depth whose overview stays
 * small.  Edges between groups are aggregated by view.c from node_box.
 *
 * Among the collapsed children of an open group:
 *   - runs: consecutive siblings that repeat each other (repeat.c) share one box,
 *     "layers.0–47 ×48", summarised by the first;
 *   - ranges: a family of numbered siblings with more than RANGE_MAX boxes (after runs) is
 *     cut by number into at most ~RANGE_BLOCKS ranges, "layers.0–99", each one box that
 *     opens like a group (expand=/model/layers.0..99) to show its members.
 * Ranges depend only on N and the model, never on the expand list, so opening one member
 * leaves the others where they were.  An automatic overview with fewer than AUTO_MIN boxes
 * opens the first instance of each run one level ("layers.0" as a cluster of its parts,
 * "layers.1–47 ×47" beside it).
 *
 * Expand entries (comma-separated): "/a/b" opens /a/b and everything below it (and keeps
 * its ancestors open); "/a/" followed by "*" opens every child of /a that way; the same
 * after "/a/layers.3..9" the children layers.3 to layers.9; "/a/layers.0..99" alone opens
 * that range (its members stay collapsed).  A scope whose name really is "layers.3..9" is
 * matched as a name first.
 */
#include "render/hier.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GROUP_DEPTH OXR_MAX_GROUP_DEPTH
#define AUTO_FLAT 320   /* up to this many op boxes: no grouping */
#define AUTO_MAX 160    /* an automatic overview aims at most at this many boxes */
#define AUTO_MIN 5      /* ... and at least at this many ("a handful") */
#define SHUT_MAX 32     /* a group beside numbered blocks with at most this many nodes stays
                           one box in the automatic overview (mark_shut) */
#define RANGE_MAX 32    /* a family with more boxes than this is drawn as ranges */
#define RANGE_BLOCKS 16 /* ... of 10, 20, 50, 100, ... members: at most this many */

/* ---------------------------------------------------------------------------------------
 * The tree
 */
static bool same(oxp_str a, oxp_str b)
{
	return a.len == b.len && (a.len == 0 || memcmp(a.p, b.p, a.len) == 0);
}

static uint32_t child(hier *h, uint32_t parent, oxp_str key, bool *oom)
{
	uint32_t mask = h->tcap - 1;
	uint32_t i = (uint32_t)oxp_hash(key.p, key.len, parent) & mask;
	while (h->table[i] != OXP_NONE) {
		hgroup *g = &h->g[h->table[i]];
		if (g->parent == parent && same(g->key, key))
			return h->table[i];
		i = (i + 1) & mask;
	}
	if (h->n == h->cap) { /* cannot happen: cap is nodes*depth+1 */
		*oom = true;
		return parent;
	}
	uint32_t gi = h->n++;
	hgroup *g = &h->g[gi];
	memset(g, 0, sizeof(*g));
	g->key = key;
	g->parent = parent;
	g->depth = h->g[parent].depth + 1;
	g->box = g->content = g->first_node = g->member = g->range = g->run = OXP_NONE;
	h->table[i] = gi;
	return gi;
}

size_t oxr__name_scope(oxp_str name, oxp_str *c, size_t max)
{
	size_t i = 0, n = 0;
	while (i < name.len && n < max) {
		while (i < name.len && name.p[i] == '/')
			i++;
		size_t j = i;
		while (j < name.len && name.p[j] != '/')
			j++;
		if (j >= name.len)
			break; /* the last component is the node's own name */
		c[n].p = name.p + i;
		c[n].len = j - i;
		n++;
		i = j;
	}
	return n;
}

const char *oxr__scope_path(oxp_arena *a, const oxp_str *c, size_t n)
{
	char buf[1024];
	size_t o = 0;
	buf[0] = '\0';
	for (size_t k = 0; k < n; k++) {
		const char *t = oxr__text(a, c[k], 60);
		int w = snprintf(buf + o, sizeof(buf) - o, "/%s", t);
		if (w < 0 || (size_t)w >= sizeof(buf) - o)
			break;
		o += (size_t)w;
	}
	const char *p = oxp_arena_strndup(a, buf, o);
	return p ? p : "";
}

/* The group of a node name: its name-scope components. */
static uint32_t file_node(hier *h, oxp_str name, bool *oom)
{
	oxp_str c[MAX_GROUP_DEPTH];
	size_t n = oxr__name_scope(name, c, MAX_GROUP_DEPTH);
	uint32_t g = 0;
	for (size_t k = 0; k < n; k++)
		g = child(h, g, c[k], oom);
	return g;
}

static const char *group_path(view *v, hier *h, uint32_t gi)
{
	if (h->g[gi].path != NULL)
		return h->g[gi].path;
	/* components from the root down */
	uint32_t chain[MAX_GROUP_DEPTH + 1];
	uint32_t n = 0;
	for (uint32_t x = gi; x != 0 && n <= MAX_GROUP_DEPTH; x = h->g[x].parent)
		chain[n++] = x;
	oxp_str c[MAX_GROUP_DEPTH + 1];
	for (uint32_t k = 0; k < n; k++)
		c[k] = h->g[chain[n - 1 - k]].key;
	h->g[gi].path = oxr__scope_path(v->arena, c, n);
	return h->g[gi].path;
}

/* ---------------------------------------------------------------------------------------
 * Runs and ranges as the default view sees them (every child collapsed)
 */
/* The run of siblings starting at x, all collapsed: how many groups it takes (1: x alone)
 * and its period (1: each repeats the one before; 2 or 3: A B A B ..., whole periods, at
 * least two). */
static uint32_t run_span(const hier *h, uint32_t x, uint32_t *period)
{
	*period = 1;
	uint32_t n = 1;
	for (uint32_t y = x; h->g[y].same_next; y = h->g[y].next_sibling)
		n++;
	if (n > 1)
		return n;
	for (uint32_t p = 2; p <= HIER_PERIOD_MAX; p++) {
		uint32_t m = 0; /* groups from x on that the group p places on repeats */
		for (uint32_t y = x; y != OXP_NONE && (((unsigned)h->g[y].same_at >> p) & 1u) != 0;
		     y = h->g[y].next_sibling)
			m++;
		if (m >= p) {
			*period = p;
			return (m + p) / p * p;
		}
	}
	return 1;
}

static uint32_t skip(const hier *h, uint32_t x, uint32_t n)
{
	for (uint32_t i = 0; i < n && x != OXP_NONE; i++)
		x = h->g[x].next_sibling;
	return x;
}

/* Ranges of size s over the family starting at x: how many. */
static uint32_t blocks(const hier *h, uint32_t x, uint32_t s)
{
	uint32_t fam = h->g[x].fam, n = 0, last = UINT32_MAX;
	for (; x != OXP_NONE && h->g[x].fam == fam; x = h->g[x].next_sibling) {
		if (h->g[x].num / s != last)
			n++;
		last = h->g[x].num / s;
	}
	return n;
}

/* The range size for a family: 10, 20, 50, 100, ... members, the first giving at most
 * RANGE_BLOCKS ranges. */
static uint32_t range_size(const hier *h, uint32_t x)
{
	uint32_t s = 10;
	for (int k = 0; k < 24; k++) {
		if (blocks(h, x, s) <= RANGE_BLOCKS)
			return s;
		uint32_t lead = s;
		while (lead >= 10)
			lead /= 10;
		uint32_t nx = lead == 2 ? s / 2 * 5 : s * 2; /* 10 20 50 100 200 500 ... */
		if (nx <= s)
			break;
		s = nx;
	}
	return s;
}

/* Boxes of one family of collapsed siblings starting at x (runs merged), and where the
 * family ends. */
static uint32_t family_items(const hier *h, uint32_t x, uint32_t *end)
{
	uint32_t fam = h->g[x].fam, items = 0, period;
	for (; x != OXP_NONE && h->g[x].fam == fam; x = skip(h, x, run_span(h, x, &period)))
		items++;
	*end = x;
	return items;
}

/* Boxes for the children of group p, all collapsed: runs merged, ranges where a family
 * has too many. */
static uint32_t items_of(const hier *h, uint32_t p)
{
	uint32_t total = 0;
	for (uint32_t c = h->g[p].first_child; c != OXP_NONE;) {
		if (h->g[c].num == HIER_NONUM) {
			total++;
			c = h->g[c].next_sibling;
			continue;
		}
		uint32_t end;
		uint32_t items = family_items(h, c, &end);
		total += items > RANGE_MAX ? blocks(h, c, range_size(h, c)) : items;
		c = end;
	}
	return total;
}

/* Boxes of the view collapsing at depth N: nodes filed in open groups above N, the boxes
 * of the children of every open group at N-1, and one box per group kept shut above N. */
static uint64_t level_boxes(const hier *h, uint32_t N, bool *open)
{
	uint64_t boxes = 0;
	for (uint32_t gi = 0; gi < h->n; gi++) {
		const hgroup *g = &h->g[gi];
		bool parent_open = gi == 0 || open[g->parent];
		open[gi] = gi == 0 || (parent_open && g->depth < N && !g->shut);
		if (open[gi]) {
			boxes += g->own;
			if (g->depth + 1 == N)
				boxes += items_of(h, gi);
		} else if (parent_open && g->depth < N) {
			boxes++; /* shut */
		}
	}
	return boxes;
}

/* Groups the automatic overview keeps shut: small ones (at most SHUT_MAX nodes) holding no
 * numbered blocks, beside groups that do — swin_t's patch merging between its stages, a
 * final norm — drawn as one box, not as their ops, at any depth.  A model without
 * numbered blocks keeps every group as before.  false when out of memory. */
static bool mark_shut(hier *h)
{
	bool *org = calloc(h->n ? h->n : 1, sizeof(bool)); /* holds numbered blocks */
	if (org == NULL)
		return false;
	for (uint32_t gi = 1; gi < h->n; gi++) {
		const hgroup *g = &h->g[gi];
		uint32_t nx = g->next_sibling;
		if (g->num != HIER_NONUM && nx != OXP_NONE && h->g[nx].fam == g->fam)
			org[g->parent] = true;
	}
	for (uint32_t gi = h->n; gi-- > 1;) /* children come after their parents */
		if (org[gi])
			org[h->g[gi].parent] = true;
	for (uint32_t gi = 1; gi < h->n; gi++) {
		hgroup *g = &h->g[gi];
		g->shut = !org[gi] && org[g->parent] && g->nops >= 2 && g->nops <= SHUT_MAX;
	}
	free(org);
	return true;
}

/* The runs among p's children (in families not cut into ranges), all collapsed: the
 * boxes the children of their first members add when those open (mark: set them to open
 * one level), or (rest) the boxes the children of all the other members add. */
enum { RUNS_FIRST = 0, RUNS_MARK, RUNS_REST };

static uint64_t run_members(hier *h, uint32_t p, int what)
{
	uint64_t boxes = 0;
	for (uint32_t c = h->g[p].first_child; c != OXP_NONE;) {
		if (h->g[c].num == HIER_NONUM) {
			c = h->g[c].next_sibling;
			continue;
		}
		uint32_t end;
		if (family_items(h, c, &end) <= RANGE_MAX) {
			for (uint32_t x = c; x != end;) {
				uint32_t period, n = run_span(h, x, &period);
				if (what == RUNS_REST) { /* members after the first period */
					uint32_t y = skip(h, x, period);
					for (uint32_t i = period; i < n && y != OXP_NONE; i++, y = h->g[y].next_sibling)
						boxes += items_of(h, y);
				} else if (n > 1 && period == 1) {
					boxes += items_of(h, x);
					if (what == RUNS_MARK)
						h->g[x].auto_open = true;
				}
				x = skip(h, x, n);
			}
		}
		c = end;
	}
	return boxes;
}

static uint64_t level_runs(hier *h, uint32_t depth, int what)
{
	uint64_t boxes = 0;
	for (uint32_t gi = 0; gi < h->n; gi++)
		if (h->g[gi].depth == depth)
			boxes += run_members(h, gi, what);
	return boxes;
}

/* The automatic depth: the most detailed whose view has at most AUTO_MAX boxes, but not
 * one that opens copies of what a run at the level above already says (the members of a
 * run after its first, or after its first period: 48 copies of one layer; vit_b_16's 11
 * encoder layers after the first; swin_t's features.5.2-5).  Fewer than AUTO_MIN boxes:
 * the first member of every run opens one level. */
static int auto_depth(hier *h)
{
	uint32_t maxd = 0;
	for (uint32_t gi = 0; gi < h->n; gi++)
		if (h->g[gi].depth > maxd)
			maxd = h->g[gi].depth;
	if (maxd == 0)
		return 0; /* no scopes in the names: nothing to group by */
	bool *open = malloc(h->n * sizeof(bool));
	if (open == NULL || !mark_shut(h)) {
		free(open);
		return -1;
	}
	uint32_t best = 1;
	uint64_t best_boxes = level_boxes(h, 1, open);
	for (uint32_t N = 2; N <= maxd; N++) {
		uint64_t boxes = level_boxes(h, N, open);
		if (boxes > AUTO_MAX || level_runs(h, N - 2, RUNS_REST) > 0)
			break;
		best = N;
		best_boxes = boxes;
	}
	if (best_boxes < AUTO_MIN) {
		uint64_t extra = level_runs(h, best - 1, RUNS_FIRST);
		if (extra > 0 && best_boxes + extra <= AUTO_MAX)
			level_runs(h, best - 1, RUNS_MARK);
	}
	free(open);
	return (int)best;
}

/* ---------------------------------------------------------------------------------------
 * The expand list
 */
typedef struct xentry {
	const char *p;      /* normalised: starts with '/' */
	size_t n;
	bool all;           /* ends in a slash and a star: the children of the base */
	size_t base;        /* length without them */
	bool span;          /* the base's last component is "<prefix><lo>..<hi>" */
	size_t span_parent; /* length of the path before that component */
	size_t prefix_len;  /* of the component's prefix (it starts at p + span_parent + 1) */
	uint32_t lo, hi;
} xentry;

static bool digits(const char *s, size_t n, uint32_t *v)
{
	if (n == 0 || n > 9)
		return false;
	uint32_t x = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		x = x * 10 + (uint32_t)(s[i] - '0');
	}
	*v = x;
	return true;
}

/* "<prefix><lo>..<hi>" (the last ".." splits). */
static bool parse_span(const char *c, size_t n, size_t *prefix_len, uint32_t *lo, uint32_t *hi)
{
	size_t i = n;
	while (i >= 2 && !(c[i - 2] == '.' && c[i - 1] == '.'))
		i--;
	if (i < 2)
		return false;
	size_t left = i - 2, d = 0;
	while (d < left && c[left - 1 - d] >= '0' && c[left - 1 - d] <= '9')
		d++;
	if (!digits(c + left - d, d, lo) || !digits(c + i, n - i, hi) || *lo > *hi)
		return false;
	*prefix_len = left - d;
	return true;
}

static uint32_t parse_entries(view *v, xentry **out)
{
	const char *list = v->o.expand;
	uint32_t n = 0;
	for (const char *p = list; *p; p++)
		n += *p == ',';
	xentry *x = oxp_arena_alloc(v->arena, (size_t)(n + 1) * sizeof(xentry));
	if (x == NULL)
		return 0;
	n = 0;
	for (const char *p = list; *p;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len > 0) {
			xentry *t = &x[n];
			memset(t, 0, sizeof(*t));
			bool slash = p[0] == '/';
			char *s = oxp_arena_printf(v->arena, "%s%.*s", slash ? "" : "/", (int)len, p);
			if (s == NULL)
				return 0;
			t->p = s;
			t->n = strlen(s);
			t->all = t->n >= 2 && s[t->n - 2] == '/' && s[t->n - 1] == '*';
			t->base = t->all ? t->n - 2 : t->n;
			size_t slash_at = t->base;
			while (slash_at > 0 && s[slash_at - 1] != '/')
				slash_at--;
			if (slash_at > 0) {
				t->span_parent = slash_at - 1;
				t->span = parse_span(s + slash_at, t->base - slash_at, &t->prefix_len, &t->lo,
				                     &t->hi);
			}
			n++;
		}
		if (e == NULL)
			break;
		p = e + 1;
	}
	*out = x;
	return n;
}

/* Is key text k (a child of the span's parent) inside the span? */
static bool in_span(const xentry *e, const char *k, size_t kn)
{
	const char *prefix = e->p + e->span_parent + 1;
	uint32_t num;
	return kn > e->prefix_len && memcmp(k, prefix, e->prefix_len) == 0 &&
	       digits(k + e->prefix_len, kn - e->prefix_len, &num) && num >= e->lo && num <= e->hi;
}

/* ---------------------------------------------------------------------------------------
 * The view's state
 */
typedef struct hrange {
	uint32_t parent, first, last, count;
	bool open;
	uint32_t box, cluster;
	const char *path, *label;
} hrange;

typedef struct hrun {
	uint32_t first, last, count, box;
	uint32_t groups;    /* members: count * period */
	uint32_t period;    /* 1, or 2, 3: "features.5.0–5 ×3 (2 blocks)" */
} hrun;

enum { IT_GROUP = 0, IT_RUN, IT_RANGE };

typedef struct hitem {
	uint8_t kind;
	uint32_t ref;        /* group, run or range */
	uint32_t first_node; /* nodes it summarises (via next[]) */
} hitem;

typedef struct hstate {
	view *v;
	hier h;
	int N;
	xentry *x;
	uint32_t nx;
	hrange *ranges;
	uint32_t nranges, capranges;
	hrun *runs;
	uint32_t nruns, capruns;
	hitem *items;
	uint32_t nitems, capitems;
	uint32_t *next;      /* per dag node: next node of the same item */
} hstate;

static bool grow(void **p, uint32_t *cap, uint32_t n, size_t size)
{
	if (n < *cap)
		return true;
	uint32_t nc = *cap ? *cap * 2 : 64;
	void *np = realloc(*p, (size_t)nc * size);
	if (np == NULL)
		return false;
	*p = np;
	*cap = nc;
	return true;
}

static const char *key_text(hstate *st, uint32_t gi, size_t max)
{
	return oxr__text(st->v->arena, st->h.g[gi].key, max);
}

/* Cut the collapsed children of open group p into ranges where a family is too big. */
static bool make_ranges(hstate *st, uint32_t p)
{
	hier *h = &st->h;
	for (uint32_t c = h->g[p].first_child; c != OXP_NONE;) {
		if (h->g[c].num == HIER_NONUM || h->g[c].auto_open) {
			c = h->g[c].next_sibling;
			continue;
		}
		uint32_t end;
		if (family_items(h, c, &end) > RANGE_MAX) {
			uint32_t s = range_size(h, c), cur = OXP_NONE;
			for (uint32_t x = c; x != end; x = h->g[x].next_sibling) {
				if (cur == OXP_NONE || h->g[x].num / s != h->g[st->ranges[cur].first].num / s) {
					if (!grow((void **)&st->ranges, &st->capranges, st->nranges, sizeof(hrange)))
						return false;
					cur = st->nranges++;
					st->ranges[cur] = (hrange){.parent = p, .first = x, .box = OXP_NONE,
					                           .cluster = OXP_NONE};
				}
				st->ranges[cur].last = x;
				st->ranges[cur].count++;
				h->g[x].range = cur;
			}
		}
		c = end;
	}
	return true;
}

/* Open or collapsed, for every group and range, from N, the automatic openings and the
 * expand list. */
static bool decide(hstate *st)
{
	hier *h = &st->h;
	view *v = st->v;
	for (uint32_t gi = 1; gi < h->n; gi++) {
		hgroup *g = &h->g[gi];
		bool dflt = ((int)g->depth < st->N && !g->shut) || g->auto_open;
		g->full = h->g[g->parent].full;
		g->below = g->keep; /* an overlay keeps it open, as if something below were named */
		g->split = false;
		if (st->nx > 0) {
			const char *P = group_path(v, h, gi);
			const char *Q = group_path(v, h, g->parent);
			size_t L = strlen(P), QL = strlen(Q);
			const char *K = P + QL + (L > QL);
			size_t KL = L - QL - (L > QL);
			for (uint32_t k = 0; k < st->nx; k++) {
				const xentry *e = &st->x[k];
				if (!e->all && e->n == L && memcmp(e->p, P, L) == 0)
					g->full = true;
				else if (e->all && !e->span && e->base == QL && memcmp(e->p, Q, QL) == 0)
					g->full = true;
				else if (e->all && e->span && e->span_parent == QL &&
				         memcmp(e->p, Q, QL) == 0 && in_span(e, K, KL))
					g->full = true;
				else if (!e->all && e->span && e->span_parent == QL &&
				         memcmp(e->p, Q, QL) == 0 && in_span(e, K, KL))
					g->split = true; /* a period of a run, shown block by block */
				if (e->n > L && e->p[L] == '/' && memcmp(e->p, P, L) == 0)
					g->below = true;
			}
		}
		g->open = dflt || g->full || g->below;
	}
	/* ranges among the children that are collapsed unless named, of every open group not
	 * opened in full (they depend on the family alone, not on what is open) */
	for (uint32_t gi = 0; gi < h->n; gi++) {
		hgroup *g = &h->g[gi];
		if (((int)g->depth + 1 >= st->N || g->auto_open) && g->open && !g->full &&
		    !make_ranges(st, gi))
			return false;
	}
	for (uint32_t gi = 1; gi < h->n; gi++)
		if (h->g[gi].range != OXP_NONE && (h->g[gi].full || h->g[gi].below || h->g[gi].split))
			st->ranges[h->g[gi].range].open = true;
	for (uint32_t r = 0; r < st->nranges; r++) {
		hrange *rg = &st->ranges[r];
		const char *Q = group_path(v, h, rg->parent);
		rg->path = oxp_arena_printf(v->arena, "%s/%s..%u", Q, key_text(st, rg->first, 60),
		                            h->g[rg->last].num);
		rg->label = oxp_arena_printf(v->arena, "%s\xe2\x80\x93%u", key_text(st, rg->first, 40),
		                             h->g[rg->last].num);
		if (rg->path == NULL || rg->label == NULL)
			return false;
		bool named = false;
		for (uint32_t k = 0; k < st->nx; k++)
			if (!st->x[k].all && strcmp(st->x[k].p, rg->path) == 0)
				named = rg->open = true;
		/* "prefix.lo..hi" names this range, not a period to show block by block: its
		 * members keep forming runs inside it */
		for (uint32_t x = rg->first; named && x != OXP_NONE; x = h->g[x].next_sibling) {
			h->g[x].split = false;
			if (x == rg->last)
				break;
		}
	}
	/* runs: repeats next to each other (or whole periods of them: A B A B), all collapsed,
	 * not shown one by one, in the same (open) range */
	for (uint32_t p = 0; p < h->n; p++) {
		if (!h->g[p].open && p != 0)
			continue;
		for (uint32_t c = h->g[p].first_child; c != OXP_NONE;) {
			uint32_t period, n = run_span(h, c, &period), ok = 0;
			for (uint32_t x = c; ok < n && x != OXP_NONE && !h->g[x].open && !h->g[x].split &&
			                     h->g[x].range == h->g[c].range;
			     x = h->g[x].next_sibling)
				ok++;
			n = ok / period * period;
			if (n < 2 * period) {
				c = h->g[c].next_sibling;
				continue;
			}
			if (!grow((void **)&st->runs, &st->capruns, st->nruns, sizeof(hrun)))
				return false;
			uint32_t cur = st->nruns++;
			st->runs[cur] = (hrun){.first = c, .count = n / period, .groups = n,
			                       .period = period, .box = OXP_NONE};
			for (uint32_t i = 0; i < n; i++, c = h->g[c].next_sibling) {
				h->g[c].run = cur;
				st->runs[cur].last = c;
			}
		}
	}
	return true;
}

/* ---------------------------------------------------------------------------------------
 * Boxes and clusters
 */
static uint32_t item_box(hstate *st, uint8_t kind, uint32_t ref, uint32_t cluster,
                         oxr_error *err)
{
	view *v = st->v;
	if (!grow((void **)&st->items, &st->capitems, st->nitems, sizeof(hitem))) {
		oxr__fail(err, OXR_E_NOMEM, "out of memory");
		return OXP_NONE;
	}
	uint32_t bi = oxr__view_add_box(v, BX_GROUP, err);
	if (bi == OXP_NONE)
		return OXP_NONE;
	uint32_t it = st->nitems++;
	st->items[it] = (hitem){.kind = kind, .ref = ref, .first_node = OXP_NONE};
	vbox *b = &v->boxes[bi];
	b->group = it;
	b->cluster = cluster;
	b->family = FAM_GROUP;
	b->id = oxp_arena_printf(v->arena, "g%u", bi);
	return bi;
}

static uint32_t scope_cluster(view *v, uint32_t parent, const char *label, const char *path,
                              uint32_t group, oxr_error *err)
{
	uint32_t ci = oxr__view_add_cluster(v, parent, err);
	if (ci == OXP_NONE)
		return OXP_NONE;
	vcluster *c = &v->clusters[ci];
	c->kind = CL_SCOPE;
	c->group = group;
	c->label = label;
	c->title = path;
	return ci;
}

/* Every group in index order (parents first): hidden in a box, drawn as a cluster, as a
 * box of its own or of its run or range, or (one node) as that node. */
static oxr_code place(hstate *st, oxr_error *err)
{
	hier *h = &st->h;
	view *v = st->v;
	for (uint32_t gi = 1; gi < h->n; gi++) {
		hgroup *g = &h->g[gi];
		hgroup *p = &h->g[g->parent];
		if (p->box != OXP_NONE) {
			g->box = p->box;
			g->member = p->member;
			continue;
		}
		uint32_t cc = p->content;
		if (g->range != OXP_NONE) {
			hrange *r = &st->ranges[g->range];
			if (!r->open) {
				if (r->box == OXP_NONE) {
					r->box = item_box(st, IT_RANGE, g->range, cc, err);
					if (r->box == OXP_NONE)
						return err ? err->code : OXR_E_NOMEM;
				}
				g->box = r->box;
				g->member = gi;
				continue;
			}
			if (r->cluster == OXP_NONE) {
				r->cluster = scope_cluster(v, cc, r->label, r->path, OXP_NONE, err);
				if (r->cluster == OXP_NONE)
					return err ? err->code : OXR_E_NOMEM;
			}
			cc = r->cluster;
		}
		if (g->nops <= 1 && !g->open) {
			g->content = cc; /* a collapsed group of one node is that node */
		} else if (g->open) {
			const char *label = key_text(st, gi, 48);
			if (g->auto_open) { /* the instance the overview opened: say it stands for more */
				uint32_t n = 1;
				for (uint32_t x = gi; h->g[x].same_next; x = h->g[x].next_sibling)
					n++;
				label = oxp_arena_printf(v->arena, "%s \xc2\xb7 1 of %u alike", label, n);
			}
			g->content = scope_cluster(v, cc, label, group_path(v, h, gi), gi, err);
			if (g->content == OXP_NONE)
				return err ? err->code : OXR_E_NOMEM;
		} else if (g->run != OXP_NONE) {
			hrun *r = &st->runs[g->run];
			if (r->box == OXP_NONE) {
				r->box = item_box(st, IT_RUN, g->run, cc, err);
				if (r->box == OXP_NONE)
					return err ? err->code : OXR_E_NOMEM;
			}
			g->box = r->box;
			g->member = gi;
		} else {
			g->box = item_box(st, IT_GROUP, gi, cc, err);
			if (g->box == OXP_NONE)
				return err ? err->code : OXR_E_NOMEM;
			g->member = gi;
		}
	}
	return OXR_OK;
}

/* ---------------------------------------------------------------------------------------
 * What a box says: name, size, parameters, and the ops that tell what it computes
 */
/* The constant behind an input (an initializer or a Constant node's output, directly or
 * through folded Identity nodes), else OXP_NONE. */
static uint32_t weight_of(const view *v, uint32_t vi)
{
	for (int hops = 0; hops < 64 && vi != OXP_NONE; hops++) {
		const oxp_value *val = &v->dv->values[vi];
		if (val->param_role != OXP_PARAM_NONE)
			return vi;
		if (val->kind != OXP_VALUE_NODE_OUTPUT || !v->node_hidden[val->producer])
			return OXP_NONE;
		const oxp_dnode *pn = &v->dv->nodes[val->producer];
		if (!oxp_str_eq(pn->proto->op_type, "Identity") || pn->proto->ninputs < 1)
			return OXP_NONE;
		vi = pn->inputs[0];
	}
	return OXP_NONE;
}

/* Stored elements of constant vi (0 when not one). */
static uint64_t elements(const view *v, uint32_t vi)
{
	const oxp_tensor *t = oxp_value_constant(v->dv, vi);
	if (t == NULL)
		return 0;
	uint64_t n = 1;
	for (size_t k = 0; k < t->ndims; k++) {
		uint64_t d = (uint64_t)t->dims[k]; /* validated: >= 0, the product fits int64 */
		n = oxp_sat_mul_u64(n, d);
	}
	return n;
}

/* "1,234" */
static void fmt_count(char *buf, size_t size, uint64_t n)
{
	char tmp[32];
	int len = snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)n);
	size_t o = 0;
	for (int i = 0; i < len && o + 2 < size; i++) {
		if (i > 0 && (len - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = '\0';
}

/* "512", "50.4 K", "1.2 M", "3.4 G" */
static void fmt_params(char *buf, size_t size, uint64_t n)
{
	static const char *const unit[] = {"K", "M", "G", "T"};
	if (n < 1000) {
		snprintf(buf, size, "%llu", (unsigned long long)n);
		return;
	}
	double x = (double)n / 1000.0;
	int u = 0;
	while (x >= 999.95 && u < 3) {
		x /= 1000.0;
		u++;
	}
	snprintf(buf, size, x < 99.95 ? "%.1f %s" : "%.0f %s", x, unit[u]);
}

#define MAX_OPS 48

typedef struct opcount {
	oxp_str op;
	uint32_t n;
	uint32_t first;    /* order of first sight */
	uint8_t rank;      /* 0 conv/linear/attention/recurrent, 1 norm, 2 activation,
	                      3 other ops with weights, 4 the rest */
} opcount;

static int by_rank(const void *a, const void *b)
{
	const opcount *x = a, *y = b;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return (x->first > y->first) - (x->first < y->first);
}

static uint8_t op_rank(uint8_t fam, bool weighted)
{
	switch (fam) {
	case FAM_CONV:
	case FAM_LINEAR:
	case FAM_ATTN:
	case FAM_RNN:
		return 0;
	case FAM_NORM:
		return 1;
	case FAM_ACT:
		return 2;
	default:
		return weighted ? 3 : 4;
	}
}

/* "MatMul ×6, Softmax ×1, Relu ×1" from ops[from, to), at most about 44 characters. */
static const char *op_line(view *v, const opcount *ops, uint32_t from, uint32_t to,
                           uint32_t max)
{
	char line[200];
	size_t o = 0, chars = 0;
	uint32_t shown = 0;
	for (uint32_t k = from; k < to && shown < max; k++) {
		const char *name = oxr__text(v->arena, ops[k].op, 24);
		char item[128];
		int w = snprintf(item, sizeof(item), "%s%s \xc3\x97%u", shown ? ", " : "", name,
		                 ops[k].n);
		if (w < 0 || (size_t)w >= sizeof(item) || o + (size_t)w + 6 > sizeof(line))
			break;
		size_t c = 0; /* characters, not bytes */
		for (int i = 0; i < w; i++)
			c += ((unsigned char)item[i] & 0xc0) != 0x80;
		if (shown > 0 && chars + c > 46)
			break;
		memcpy(line + o, item, (size_t)w);
		o += (size_t)w;
		chars += c;
		shown++;
	}
	if (shown == 0)
		return NULL;
	if (from + shown < to) {
		memcpy(line + o, ", \xe2\x80\xa6", 5); /* ", …" */
		o += 5;
	}
	return oxp_arena_strndup(v->arena, line, o);
}

/* A ×N stack's or a range's repetitions, for the heat overlay's hottest one (heat_draw.c):
 * count of them, period member scopes each, numbered from group first's number. */
static void set_reps(view *v, const hier *h, vbox *b, uint32_t first, uint32_t count,
                     uint32_t period)
{
	b->reps = count;
	b->rep_first = h->g[first].num;
	b->rep_period = period;
	b->rep_key = oxr__text(v->arena, (oxp_str){h->g[first].key.p, h->g[first].prefix_len}, 24);
}

static void item_rows(hstate *st, uint32_t bi, uint32_t *stamp)
{
	view *v = st->v;
	hier *h = &st->h;
	vbox *b = &v->boxes[bi];
	const hitem *it = &st->items[b->group];
	char label[320], path[320];
	const char *each = "";
	uint32_t members = 0, reps = 0;
	if (it->kind == IT_GROUP) {
		const char *p = group_path(v, h, it->ref);
		snprintf(label, sizeof(label), "%s", key_text(st, it->ref, 40));
		snprintf(path, sizeof(path), "%s", p);
		b->gpath = p;
	} else if (it->kind == IT_RUN) {
		const hrun *r = &st->runs[it->ref];
		const char *q = group_path(v, h, h->g[r->first].parent);
		const char *k = key_text(st, r->first, 40);
		const char *k60 = key_text(st, r->first, 60);
		snprintf(label, sizeof(label), "%s\xe2\x80\x93%u \xc3\x97%u", k, h->g[r->last].num,
		         r->count);
		if (r->period > 1) {
			size_t o = strlen(label);
			snprintf(label + o, sizeof(label) - o, " (%u blocks)", r->period);
		}
		snprintf(path, sizeof(path), "%s/%s\xe2\x80\x93%u", q, k60, h->g[r->last].num);
		/* a click opens the first member; a period's blocks are shown one by one */
		b->gpath = r->period == 1 ? group_path(v, h, r->first)
		                          : oxp_arena_printf(v->arena, "%s/%s..%u", q, k60,
		                                             h->g[r->first].num + r->period - 1);
		b->open_all = oxp_arena_printf(v->arena, "%s/%s..%u/*", q, k60, h->g[r->last].num);
		members = r->groups;
		reps = r->count;
		each = r->period > 1 ? " per period" : " each";
		set_reps(v, h, b, r->first, r->count, r->period);
	} else {
		const hrange *r = &st->ranges[it->ref];
		snprintf(label, sizeof(label), "%s", r->label);
		snprintf(path, sizeof(path), "%s/%s", group_path(v, h, r->parent), r->label);
		b->gpath = r->path;
		members = r->count;
		reps = r->count;
		/* heat_draw.c's hottest member: indexed by number from the first (gaps stay empty;
		 * none for a range whose numbers are too sparse) */
		uint32_t span = h->g[r->last].num - h->g[r->first].num + 1;
		if (span <= 4 * (uint64_t)r->count && span <= 4096)
			set_reps(v, h, b, r->first, span, 1);
	}
	b->members = members;
	oxr__add_row(v, b, ROW_HEADER, oxp_arena_strndup(v->arena, label, strlen(label)));
	const char *ptext = oxr__text_tail(v->arena, (oxp_str){path, strlen(path)}, 44);
	oxr__add_row(v, b, ROW_NAME, ptext);
	b->title = oxp_arena_strndup(v->arena, path, strlen(path));

	opcount ops[MAX_OPS];
	uint32_t nops = 0, total = 0, other = 0;
	uint64_t params = 0;
	oxp_cost_poly macs = {0};
	for (uint32_t ni = it->first_node; ni != OXP_NONE; ni = st->next[ni]) {
		const oxp_dnode *dn = &v->dv->nodes[ni];
		total++;
		if (v->cost != NULL)
			oxp_cost_poly_add(&macs, &v->cost->nodes[ni].macs);
		bool weighted = false;
		for (size_t k = 0; k < dn->proto->ninputs; k++) {
			uint32_t w = weight_of(v, dn->inputs[k]);
			if (w == OXP_NONE)
				continue;
			/* an op reading a weight (not a Constant's table) ranks above the rest */
			weighted |= v->dv->values[w].kind != OXP_VALUE_NODE_OUTPUT && elements(v, w) > 1;
			if (stamp[w] != bi + 1) { /* each weight once per box */
				stamp[w] = bi + 1;
				/* the summary's parameters (parser/params.c): logical values, scales
				 * and zero points none */
				params = oxp_sat_add_u64(params, v->dv->values[w].params);
			}
		}
		/* a named pattern drawn as one box counts once, as its op (fusion.c) */
		if (oxr__fusion_joined(v, ni))
			continue;
		const char *pat = oxr__fusion_op(v, ni);
		/* ... and its nodes outside every box are drawn here too (a match may reach out
		 * of the scope: a name cut short puts a node in the parent) */
		if (pat != NULL)
			total += oxr__fusion_strays(v, ni);
		oxp_str op = pat != NULL ? (oxp_str){pat, strlen(pat)} : dn->proto->op_type;
		uint32_t k = 0;
		while (k < nops && !same(ops[k].op, op))
			k++;
		if (k == nops) {
			if (nops == MAX_OPS) {
				other++;
				continue;
			}
			/* the family once per op type (a search through every known op) */
			ops[nops] = (opcount){.op = op, .first = nops,
			                      .rank = op_rank(oxr__op_family(dn->proto->domain, op), false)};
			nops++;
		}
		ops[k].n++;
		if (weighted && ops[k].rank == 4)
			ops[k].rank = 3;
	}
	qsort(ops, nops, sizeof(*ops), by_rank);
	char n1[32], n2[32], line[160];
	fmt_count(n1, sizeof(n1), total);
	if (it->kind == IT_RANGE) {
		fmt_count(n2, sizeof(n2), members);
		snprintf(line, sizeof(line), "%s scopes \xc2\xb7 %s nodes", n2, n1);
	} else {
		snprintf(line, sizeof(line), "%s node%s", n1, total == 1 ? "" : "s");
	}
	if (params > 0) {
		size_t o = strlen(line);
		fmt_params(n2, sizeof(n2), params);
		snprintf(line + o, sizeof(line) - o, " \xc2\xb7 %s params", n2);
	}
	size_t o = strlen(line);
	snprintf(line + o, sizeof(line) - o, "%s", each);
	oxr__add_row(v, b, ROW_SUB, oxp_arena_strndup(v->arena, line, strlen(line)));
	/* what it computes first, then the rest */
	uint32_t key = 0;
	while (key < nops && ops[key].rank < 4)
		key++;
	const char *a = op_line(v, ops, 0, key, 4);
	const char *c = op_line(v, ops, key, nops, a ? 3 : 4);
	if (a != NULL)
		oxr__add_row(v, b, ROW_SUB, a);
	if (c != NULL)
		oxr__add_row(v, b, ROW_SUB, c);
	/* what it costs: per repetition and in all for a run */
	const char *mt = NULL;
	if (v->cost != NULL && each[0] != '\0') {
		oxp_cost_poly all = macs;
		oxp_cost_poly_scale(&all, reps);
		char t[160];
		const char *tail = NULL;
		if (!all.flags) {
			oxp_cost_poly_format(v->cost, &all, 0, t, sizeof(t));
			tail = oxp_arena_printf(v->arena, "%s \xc2\xb7 %s in all", each, t);
		}
		mt = oxr__macs_text(v, &macs, tail ? tail : each);
	} else if (v->cost != NULL) {
		mt = oxr__macs_text(v, &macs, "");
	}
	if (mt != NULL)
		oxr__add_row(v, b, ROW_SUB, mt);
	(void)other;
}

/* ---------------------------------------------------------------------------------------
 */
/* Group the visible nodes of `scope` (normally the main graph).  On return, for each node
 * of the scope: v->node_box[n] is the collapsed box standing for it (unchanged, OXP_NONE,
 * when the node is drawn itself) and v->node_cluster[n] the cluster of an open group it
 * is drawn in. */
oxr_code oxr__hier_apply(view *v, uint32_t scope, oxr_error *err)
{
	const oxp_scope *s = &v->dv->scopes[scope];
	if (v->o.group == OXR_GROUP_NONE || strcmp(v->o.expand, "*") == 0 || s->nnodes == 0)
		return OXR_OK;
	/* the nodes that would be boxes: all but the folded ones */
	uint32_t *nodes = malloc((size_t)s->nnodes * sizeof(uint32_t));
	uint32_t *node_group = calloc(v->dv->nnodes, sizeof(uint32_t));
	uint32_t *stamp = NULL;
	hstate st = {.v = v};
	hier *h = &st.h;
	st.next = malloc((size_t)v->dv->nnodes * sizeof(uint32_t));
	oxr_code rc = OXR_OK;
	if (nodes == NULL || node_group == NULL || st.next == NULL) {
		rc = oxr__fail(err, OXR_E_NOMEM, "out of memory");
		goto out;
	}
	uint32_t nn = 0;
	for (uint32_t k = 0; k < s->nnodes; k++) {
		uint32_t ni = s->first_node + k;
		if (!v->node_hidden[ni] && !oxr__quant_joined(v, ni))
			nodes[nn++] = ni;
	}
	bool automatic = v->o.group <= 0 && v->o.expand_depth <= 0;
	if (automatic && nn <= AUTO_FLAT)
		goto out; /* small enough to draw flat: no scope tree needed */
	h->cap = nn * MAX_GROUP_DEPTH + 1;
	h->g = malloc((size_t)h->cap * sizeof(hgroup));
	h->tcap = 16;
	while (h->tcap < h->cap * 2u && h->tcap < (1u << 30))
		h->tcap <<= 1;
	h->table = malloc((size_t)h->tcap * sizeof(uint32_t));
	if (h->g == NULL || h->table == NULL) {
		rc = oxr__fail(err, OXR_E_NOMEM, "out of memory");
		goto out;
	}
	memset(h->table, 0xff, (size_t)h->tcap * sizeof(uint32_t));
	memset(&h->g[0], 0, sizeof(hgroup));
	h->g[0].box = h->g[0].content = h->g[0].first_node = OXP_NONE;
	h->g[0].member = h->g[0].range = h->g[0].run = OXP_NONE;
	h->g[0].open = true;
	h->n = 1;
	bool oom = false;
	for (uint32_t k = 0; k < nn; k++) {
		uint32_t ni = nodes[k];
		uint32_t g = file_node(h, v->dv->nodes[ni].proto->name, &oom);
		node_group[ni] = g;
		h->g[g].own++;
		for (uint32_t x = g;; x = h->g[x].parent) {
			h->g[x].nops++;
			if (x == 0)
				break;
		}
		if (v->ov != NULL && oxr__overlay_keeps(v, ni))
			for (uint32_t x = g; x != 0 && !h->g[x].keep; x = h->g[x].parent)
				h->g[x].keep = true;
	}
	if (oom) {
		rc = oxr__fail(err, OXR_E_NOMEM, "too many groups");
		goto out;
	}
	if (!oxr__hier_order(h)) {
		rc = oxr__fail(err, OXR_E_NOMEM, "out of memory");
		goto out;
	}
	rc = oxr__hier_repeats(v, h, node_group, nodes, nn, err);
	if (rc != OXR_OK)
		goto out;
	if (v->o.group > 0)
		st.N = v->o.group;
	else if (!automatic)
		st.N = v->o.expand_depth + 1;
	else
		st.N = auto_depth(h);
	if (st.N < 0) {
		rc = oxr__fail(err, OXR_E_NOMEM, "out of memory");
		goto out;
	}
	if (st.N == 0)
		goto out; /* flat */
	v->group_depth = st.N;
	st.nx = parse_entries(v, &st.x);
	if (!decide(&st)) {
		rc = oxr__fail(err, OXR_E_NOMEM, "out of memory");
		goto out;
	}
	rc = place(&st, err);
	if (rc != OXR_OK)
		goto out;
	/* map nodes: into their box (summarised by the run's first member only), or into the
	 * cluster of their group */
	for (uint32_t k = nn; k-- > 0;) {
		uint32_t ni = nodes[k];
		hgroup *g = &h->g[node_group[ni]];
		if (g->box == OXP_NONE) {
			v->node_cluster[ni] = node_group[ni] == 0 ? OXP_NONE : g->content;
			continue;
		}
		v->node_box[ni] = g->box;
		hitem *it = &st.items[v->boxes[g->box].group];
		if (it->kind == IT_RUN && v->node_rep != NULL) /* its repetition, for heat_draw.c */
			v->node_rep[ni] = (h->g[g->member].num - h->g[st.runs[it->ref].first].num) /
			                  st.runs[it->ref].period;
		else if (it->kind == IT_RANGE && v->node_rep != NULL) /* ... its member */
			v->node_rep[ni] = h->g[g->member].num - h->g[st.ranges[it->ref].first].num;
		if (it->kind == IT_RUN && (h->g[g->member].num - h->g[st.runs[it->ref].first].num >=
		                           st.runs[it->ref].period))
			continue; /* summarised by the first member (period) */
		st.next[ni] = it->first_node;
		it->first_node = ni;
	}
	stamp = calloc(v->dv->nvalues ? v->dv->nvalues : 1, sizeof(uint32_t));
	if (stamp == NULL) {
		rc = oxr__fail(err, OXR_E_NOMEM, "out of memory");
		goto out;
	}
	for (uint32_t bi = 0; bi < v->nboxes; bi++)
		if (v->boxes[bi].kind == BX_GROUP && v->boxes[bi].group < st.nitems)
			item_rows(&st, bi, stamp);
out:
	free(nodes);
	free(node_group);
	free(stamp);
	free(st.next);
	free(st.ranges);
	free(st.runs);
	free(st.items);
	free(h->g);
	free(h->table);
	return rc;
}
