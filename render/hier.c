/*
 * hier.c — the large-graph hierarchy: name scopes as groups.
 *
 * Exporters name nodes by module path: "/encoder/layers.3/self_attn/MatMul".  Every node
 * of a scope is filed under the group of its path without the last component (depth 3:
 * encoder > layers.3 > self_attn).  A view collapses every group at depth N (and deeper)
 * into one box, except groups the options expand; expanded groups below the root become
 * clusters.  N comes from the options (group=N, depth=N-1), or automatically: the most
 * detailed depth whose overview stays small.  Edges between groups are aggregated by
 * view.c from node_box.
 */
#include "render/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GROUP_DEPTH OXR_MAX_GROUP_DEPTH
#define AUTO_FLAT 320   /* up to this many op boxes: no grouping */
#define AUTO_MAX 160    /* an automatic overview aims at most at this many boxes */

typedef struct hgroup {
	oxp_str key;        /* path component (bytes of the model) */
	uint32_t parent;
	uint32_t depth;     /* root 0 */
	uint32_t nops;      /* nodes in this group and below */
	uint32_t rep;       /* collapsed group standing for this one, or OXP_NONE */
	uint32_t box;       /* BX_GROUP box when collapsed and visible */
	uint32_t cluster;   /* cluster when expanded (not root) */
	uint32_t first_node;/* list of nodes mapped to this collapsed box (via next[]) */
	bool expanded;
	bool keep;          /* holds a node an overlay keeps open */
	const char *path;   /* "/encoder/layers.3" (display text), built when needed */
} hgroup;

typedef struct hier {
	hgroup *g;
	uint32_t n, cap;
	uint32_t *table;    /* open addressing over (parent, key) -> group */
	uint32_t tcap;
} hier;

static uint64_t hkey(uint32_t parent, oxp_str k)
{
	uint64_t h = 1469598103934665603ull ^ parent;
	for (size_t i = 0; i < k.len; i++)
		h = (h ^ (unsigned char)k.p[i]) * 1099511628211ull;
	return h ^ (h >> 31);
}

static bool same(oxp_str a, oxp_str b)
{
	return a.len == b.len && (a.len == 0 || memcmp(a.p, b.p, a.len) == 0);
}

static uint32_t child(hier *h, uint32_t parent, oxp_str key, bool *oom)
{
	uint32_t mask = h->tcap - 1;
	uint32_t i = (uint32_t)hkey(parent, key) & mask;
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
	g->rep = g->box = g->cluster = g->first_node = OXP_NONE;
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

/* Does the expand list name group gi (or a group below it)?  Entries are paths like
 * "/encoder/layers.3"; a leading '/' is optional. */
static bool listed(view *v, hier *h, uint32_t gi)
{
	const char *list = v->o.expand;
	if (list[0] == '\0')
		return false;
	const char *path = group_path(v, h, gi);
	size_t plen = strlen(path);
	const char *p = list;
	while (*p) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		const char *q = p;
		size_t qn = n;
		if (qn > 0 && q[0] != '/') {
			/* compare without the leading slash */
			if (qn <= plen - 1 && memcmp(q, path + 1, qn) == 0 &&
			    (qn == plen - 1 || path[1 + qn] == '/'))
				return true;
		} else if (qn <= plen && qn > 0 && memcmp(q, path, qn) == 0 &&
		           (qn == plen || path[qn] == '/')) {
			return true; /* the entry is this group or one of its ancestors */
		}
		/* an entry below this group also keeps it expanded */
		if (qn > plen && path[0] != '\0' && memcmp(q, path, plen) == 0 && q[plen] == '/')
			return true;
		if (qn > plen - 1 && q[0] != '/' && plen > 1 && memcmp(q, path + 1, plen - 1) == 0 &&
		    q[plen - 1] == '/')
			return true;
		if (e == NULL)
			break;
		p = e + 1;
	}
	return false;
}

static int auto_depth(const hier *h, const uint32_t *node_group, const uint32_t *nodes,
                      uint32_t nn)
{
	if (nn <= AUTO_FLAT)
		return 0;
	uint32_t maxd = 0;
	for (uint32_t gi = 0; gi < h->n; gi++)
		if (h->g[gi].depth > maxd)
			maxd = h->g[gi].depth;
	if (maxd == 0)
		return 0; /* no scopes in the names: nothing to group by */
	int best = 1;
	for (uint32_t N = 1; N <= maxd; N++) {
		/* boxes at depth N: nodes filed above depth N, plus groups at depth N */
		uint32_t boxes = 0;
		for (uint32_t k = 0; k < nn; k++)
			boxes += h->g[node_group[nodes[k]]].depth < N;
		for (uint32_t gi = 1; gi < h->n; gi++)
			boxes += h->g[gi].depth == N && h->g[gi].nops > 0;
		if (boxes <= AUTO_MAX)
			best = (int)N;
		else
			break;
	}
	return best;
}

typedef struct opcount {
	oxp_str op;
	uint32_t n;
} opcount;

static oxr_code group_rows(view *v, hier *h, uint32_t gi, const uint32_t *next)
{
	hgroup *g = &h->g[gi];
	vbox *b = &v->boxes[g->box];
	const char *name = oxr__text(v->arena, g->key, 40);
	oxr__add_row(v, b, ROW_HEADER, name);
	const char *path = group_path(v, h, gi);
	oxr__add_row(v, b, ROW_NAME, oxr__text(v->arena, (oxp_str){path, strlen(path)}, 44));
	b->title = path;
	opcount ops[8];
	uint32_t nops = 0, other = 0, total = 0;
	for (uint32_t ni = g->first_node; ni != OXP_NONE; ni = next[ni]) {
		oxp_str op = v->dv->nodes[ni].proto->op_type;
		total++;
		uint32_t k = 0;
		while (k < nops && !same(ops[k].op, op))
			k++;
		if (k == nops) {
			if (nops == 8) {
				other++;
				continue;
			}
			ops[nops].op = op;
			ops[nops].n = 0;
			nops++;
		}
		ops[k].n++;
	}
	/* most frequent first */
	for (uint32_t a = 0; a < nops; a++)
		for (uint32_t c = a + 1; c < nops; c++)
			if (ops[c].n > ops[a].n) {
				opcount t = ops[a];
				ops[a] = ops[c];
				ops[c] = t;
			}
	char line[200];
	snprintf(line, sizeof(line), "%u nodes", total);
	oxr__add_row(v, b, ROW_SUB, oxp_arena_strndup(v->arena, line, strlen(line)));
	size_t o = 0;
	line[0] = '\0';
	for (uint32_t k = 0; k < nops && k < 3; k++) {
		int w = snprintf(line + o, sizeof(line) - o, "%s%s \xc3\x97%u", k ? ", " : "",
		                 oxr__text(v->arena, ops[k].op, 20), ops[k].n);
		if (w < 0 || (size_t)w >= sizeof(line) - o)
			break;
		o += (size_t)w;
	}
	if (o > 0)
		oxr__add_row(v, b, ROW_SUB, oxp_arena_strndup(v->arena, line, o));
	return OXR_OK;
}

/* Group the visible nodes of `scope` (normally the main graph).  On return, for each node
 * of the scope: v->node_box[n] is the collapsed group box standing for it (unchanged,
 * OXP_NONE, when the node is drawn itself) and v->node_cluster[n] the cluster of an
 * expanded group it is drawn in. */
oxr_code oxr__hier_apply(view *v, uint32_t scope, oxr_error *err)
{
	const oxp_scope *s = &v->dv->scopes[scope];
	if (v->o.group == OXR_GROUP_NONE || strcmp(v->o.expand, "*") == 0 || s->nnodes == 0)
		return OXR_OK;
	/* the nodes that would be boxes: all but the folded ones */
	uint32_t *nodes = malloc((size_t)s->nnodes * sizeof(uint32_t));
	uint32_t *node_group = calloc(v->dv->nnodes, sizeof(uint32_t));
	uint32_t *next = malloc((size_t)v->dv->nnodes * sizeof(uint32_t));
	hier h = {0};
	oxr_code rc = OXR_OK;
	if (nodes == NULL || node_group == NULL || next == NULL) {
		rc = oxr__fail(err, OXR_E_NOMEM, "out of memory");
		goto out;
	}
	uint32_t nn = 0;
	for (uint32_t k = 0; k < s->nnodes; k++) {
		uint32_t ni = s->first_node + k;
		if (!v->node_hidden[ni])
			nodes[nn++] = ni;
	}
	h.cap = nn * MAX_GROUP_DEPTH + 1;
	h.g = malloc((size_t)h.cap * sizeof(hgroup));
	h.tcap = 16;
	while (h.tcap < h.cap * 2u && h.tcap < (1u << 30))
		h.tcap <<= 1;
	h.table = malloc((size_t)h.tcap * sizeof(uint32_t));
	if (h.g == NULL || h.table == NULL) {
		rc = oxr__fail(err, OXR_E_NOMEM, "out of memory");
		goto out;
	}
	memset(h.table, 0xff, (size_t)h.tcap * sizeof(uint32_t));
	memset(&h.g[0], 0, sizeof(hgroup));
	h.g[0].rep = h.g[0].box = h.g[0].cluster = h.g[0].first_node = OXP_NONE;
	h.g[0].expanded = true;
	h.n = 1;
	bool oom = false;
	for (uint32_t k = 0; k < nn; k++) {
		uint32_t ni = nodes[k];
		uint32_t g = file_node(&h, v->dv->nodes[ni].proto->name, &oom);
		node_group[ni] = g;
		for (uint32_t x = g;; x = h.g[x].parent) {
			h.g[x].nops++;
			if (x == 0)
				break;
		}
		if (v->ov != NULL && oxr__overlay_keeps(v, ni))
			for (uint32_t x = g; x != 0 && !h.g[x].keep; x = h.g[x].parent)
				h.g[x].keep = true;
	}
	if (oom) {
		rc = oxr__fail(err, OXR_E_NOMEM, "too many groups");
		goto out;
	}
	int N;
	if (v->o.group > 0)
		N = v->o.group;
	else if (v->o.expand_depth > 0)
		N = v->o.expand_depth + 1;
	else
		N = auto_depth(&h, node_group, nodes, nn);
	if (N <= 0)
		goto out; /* flat */
	v->group_depth = N;

	/* expanded or collapsed, then who stands for whom (parents come before children) */
	for (uint32_t gi = 1; gi < h.n; gi++) {
		hgroup *g = &h.g[gi];
		g->expanded = (int)g->depth < N || listed(v, &h, gi) || g->keep;
		hgroup *p = &h.g[g->parent];
		if (p->rep != OXP_NONE)
			g->rep = p->rep;
		else if (!g->expanded)
			g->rep = gi;
		else
			g->rep = OXP_NONE;
	}
	/* clusters for expanded groups, boxes for collapsed ones, in index order */
	for (uint32_t gi = 1; gi < h.n; gi++) {
		hgroup *g = &h.g[gi];
		if (g->rep != OXP_NONE && g->rep != gi)
			continue; /* hidden below a collapsed group */
		uint32_t pc = h.g[g->parent].cluster;
		if (g->rep == gi) {
			uint32_t bi = oxr__view_add_box(v, BX_GROUP, err);
			if (bi == OXP_NONE) {
				rc = err ? err->code : OXR_E_NOMEM;
				goto out;
			}
			g->box = bi;
			v->boxes[bi].group = gi;
			v->boxes[bi].cluster = pc;
			v->boxes[bi].family = FAM_GROUP;
			v->boxes[bi].id = oxp_arena_printf(v->arena, "g%u", bi);
			v->boxes[bi].title = group_path(v, &h, gi);
		} else if (g->nops > 0) {
			uint32_t ci = oxr__view_add_cluster(v, pc, err);
			if (ci == OXP_NONE) {
				rc = err ? err->code : OXR_E_NOMEM;
				goto out;
			}
			g->cluster = ci;
			vcluster *c = &v->clusters[ci];
			c->kind = CL_SCOPE;
			c->group = gi;
			c->label = oxr__text(v->arena, g->key, 48);
			c->title = group_path(v, &h, gi);
		}
	}
	/* map nodes */
	for (uint32_t k = 0; k < nn; k++) {
		uint32_t ni = nodes[k];
		hgroup *g = &h.g[node_group[ni]];
		if (g->rep != OXP_NONE) {
			hgroup *r = &h.g[g->rep];
			v->node_box[ni] = r->box;
			next[ni] = r->first_node;
			r->first_node = ni;
		} else {
			v->node_cluster[ni] = g->cluster;
		}
	}
	for (uint32_t gi = 1; gi < h.n; gi++)
		if (h.g[gi].rep == gi) {
			rc = group_rows(v, &h, gi, next);
			if (rc != OXR_OK)
				goto out;
		}
out:
	free(nodes);
	free(node_group);
	free(next);
	free(h.g);
	free(h.table);
	return rc;
}
