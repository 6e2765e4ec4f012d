/*
 * repeat.c — repeated blocks: the order of sibling scopes and which neighbours repeat.
 *
 * Exporters number the instances of a module list: "layers.0", "layers.1", ... (and
 * torchvision's "features.1.0").  Siblings of one family (same parent, same key without
 * the trailing number) are ordered by number; a sibling repeats the one before it when the
 * numbers follow each other and the two have the same structure, weights and names aside:
 *   - the nodes in order, each with its domain, op type and attributes (tensor attributes
 *     by element type and shape only);
 *   - the wiring inside: an input from a node of the same group names that node by its
 *     position in the group and the output used;
 *   - how it connects to the outside: an input from outside is numbered by first use in
 *     the group (two uses of the same outer value get the same number), and every output
 *     says whether something outside the group uses it;
 *   - initializers (and folded constants) by element type and shape;
 *   - the shape of the scope tree below it (scope names aside).
 * This canonical form is hashed for every group that has a candidate neighbour, one pass
 * over the nodes per scope depth (positions and outer numbering are relative to the group
 * at that depth), without recursion; groups whose hashes agree are then compared node by
 * node on the forms themselves, so a hash collision never merges two different blocks.
 */
#include "render/hier.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------
 * Order
 */
static void parse_num(hgroup *g)
{
	size_t n = g->key.len, d = 0;
	while (d < n && d < 10 && g->key.p[n - 1 - d] >= '0' && g->key.p[n - 1 - d] <= '9')
		d++;
	g->num = HIER_NONUM;
	g->prefix_len = (uint32_t)n;
	if (d == 0 || d > 9 || n > UINT32_MAX)
		return; /* no number, or one too long to be an index */
	uint32_t v = 0;
	for (size_t i = n - d; i < n; i++)
		v = v * 10 + (uint32_t)(g->key.p[i] - '0');
	g->num = v;
	g->prefix_len = (uint32_t)(n - d);
}

typedef struct sortkey {
	uint32_t parent, fam, num, idx;
} sortkey;

static int by_sibling(const void *a, const void *b)
{
	const sortkey *x = a, *y = b;
	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	if (x->fam != y->fam)
		return x->fam < y->fam ? -1 : 1;
	if (x->num != y->num)
		return x->num < y->num ? -1 : 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

bool oxr__hier_order(hier *h)
{
	uint32_t cap = 16;
	while (cap < h->n * 2u && cap < (1u << 30))
		cap <<= 1;
	uint32_t *fam = malloc((size_t)cap * sizeof(uint32_t));
	sortkey *keys = malloc((size_t)(h->n ? h->n : 1) * sizeof(sortkey));
	uint32_t *last = malloc((size_t)(h->n ? h->n : 1) * sizeof(uint32_t));
	if (fam == NULL || keys == NULL || last == NULL) {
		free(fam);
		free(keys);
		free(last);
		return false;
	}
	memset(fam, 0xff, (size_t)cap * sizeof(uint32_t));
	uint32_t nk = 0;
	for (uint32_t gi = 0; gi < h->n; gi++) {
		hgroup *g = &h->g[gi];
		g->first_child = g->next_sibling = OXP_NONE;
		last[gi] = OXP_NONE;
		g->fam = gi;
		if (gi == 0) {
			g->num = HIER_NONUM;
			continue;
		}
		parse_num(g);
		if (g->num != HIER_NONUM) {
			/* the first sibling with this prefix names the family */
			uint32_t i = (uint32_t)oxp_hash(g->key.p, g->prefix_len, g->parent) & (cap - 1);
			while (fam[i] != OXP_NONE) {
				const hgroup *f = &h->g[fam[i]];
				if (f->parent == g->parent && f->prefix_len == g->prefix_len &&
				    memcmp(f->key.p, g->key.p, g->prefix_len) == 0)
					break;
				i = (i + 1) & (cap - 1);
			}
			if (fam[i] == OXP_NONE)
				fam[i] = gi;
			g->fam = fam[i];
		}
		keys[nk++] = (sortkey){g->parent, g->fam, g->num, gi};
	}
	qsort(keys, nk, sizeof(*keys), by_sibling);
	for (uint32_t k = 0; k < nk; k++) {
		uint32_t gi = keys[k].idx, p = keys[k].parent;
		if (last[p] == OXP_NONE)
			h->g[p].first_child = gi;
		else
			h->g[last[p]].next_sibling = gi;
		last[p] = gi;
	}
	free(fam);
	free(keys);
	free(last);
	return true;
}

/* ---------------------------------------------------------------------------------------
 * Canonical forms
 */
typedef struct words {
	uint64_t *w;
	size_t n, cap;
	bool oom;
} words;

/* The forms of one depth are kept (each is compared with up to two neighbours): at most
 * this many words (256 MB); a model whose forms are bigger gets no runs. */
#define MAX_WORDS ((size_t)32 << 20)

static void put(words *b, uint64_t x)
{
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 4096;
		uint64_t *nw = b->oom || cap > MAX_WORDS ? NULL : realloc(b->w, cap * sizeof(uint64_t));
		if (nw == NULL) {
			b->oom = true;
			b->n = 0; /* keep going; the caller checks oom */
			return;
		}
		b->w = nw;
		b->cap = cap;
	}
	b->w[b->n++] = x;
}

static void put_bytes(words *b, oxp_str s)
{
	put(b, s.len);
	for (size_t i = 0; i < s.len; i += 8) {
		uint64_t x = 0;
		size_t k = s.len - i < 8 ? s.len - i : 8;
		memcpy(&x, s.p + i, k);
		put(b, x);
	}
}

static void put_tensor(words *b, const oxp_tensor *t)
{
	if (t == NULL) {
		put(b, UINT64_MAX);
		return;
	}
	put(b, (uint64_t)(uint32_t)t->data_type);
	put(b, t->ndims);
	for (size_t k = 0; k < t->ndims; k++)
		put(b, (uint64_t)t->dims[k]);
}

/* A subgraph attribute by the op types of its nodes (not deeper: no recursion). */
static void put_graph(words *b, const oxp_graph *g)
{
	if (g == NULL) {
		put(b, UINT64_MAX);
		return;
	}
	put(b, g->nnodes);
	for (size_t k = 0; k < g->nnodes; k++) {
		put_bytes(b, g->nodes[k].domain);
		put_bytes(b, g->nodes[k].op_type);
	}
}

enum {
	AT_FLOAT = 1, AT_INT, AT_STRING, AT_TENSOR, AT_GRAPH, AT_FLOATS, AT_INTS, AT_STRINGS,
	AT_TENSORS, AT_GRAPHS, AT_SPARSE_TENSOR, AT_SPARSE_TENSORS
};

static void put_attrs(words *b, const oxp_node *n)
{
	put(b, n->nattrs);
	for (size_t k = 0; k < n->nattrs; k++) {
		const oxp_attr *a = &n->attrs[k];
		put_bytes(b, a->name);
		put_bytes(b, a->ref_attr_name);
		put(b, (uint64_t)(uint32_t)a->type);
		uint32_t bits;
		switch (a->type) {
		case AT_FLOAT:
			memcpy(&bits, &a->f, sizeof(bits));
			put(b, bits);
			break;
		case AT_INT:
			put(b, (uint64_t)a->i);
			break;
		case AT_STRING:
			put_bytes(b, a->s);
			break;
		case AT_TENSOR:
			put_tensor(b, a->t);
			break;
		case AT_GRAPH:
			put_graph(b, a->g);
			break;
		case AT_FLOATS:
			put(b, a->nfloats);
			for (size_t i = 0; i < a->nfloats; i++) {
				memcpy(&bits, &a->floats[i], sizeof(bits));
				put(b, bits);
			}
			break;
		case AT_INTS:
			put(b, a->nints);
			for (size_t i = 0; i < a->nints; i++)
				put(b, (uint64_t)a->ints[i]);
			break;
		case AT_STRINGS:
			put(b, a->nstrings);
			for (size_t i = 0; i < a->nstrings; i++)
				put_bytes(b, a->strings[i]);
			break;
		case AT_TENSORS:
			put(b, a->ntensors);
			for (size_t i = 0; i < a->ntensors; i++)
				put_tensor(b, &a->tensors[i]);
			break;
		case AT_GRAPHS:
			put(b, a->ngraphs);
			for (size_t i = 0; i < a->ngraphs; i++)
				put_graph(b, &a->graphs[i]);
			break;
		case AT_SPARSE_TENSOR:
			put_tensor(b, a->sparse_tensor ? a->sparse_tensor->values : NULL);
			break;
		case AT_SPARSE_TENSORS:
			put(b, a->nsparse_tensors);
			for (size_t i = 0; i < a->nsparse_tensors; i++)
				put_tensor(b, a->sparse_tensors[i].values);
			break;
		default:
			break; /* type protos and unknown types: by type only */
		}
	}
}

/* State of one pass: forms relative to the groups at depth d. */
typedef struct sigpass {
	const view *v;
	const oxp_dag_view *dv;
	hier *h;
	const uint32_t *node_group;
	uint32_t d;
	uint32_t *anc;      /* per group: its ancestor at depth d (itself at d), else NONE */
	bool *want;         /* per group: a candidate of a repeat (forms needed) */
	uint32_t *cnt;      /* per group at d: nodes so far */
	uint32_t *nsub;     /* per group at d: scope ordinals given so far */
	uint32_t *nslot;    /* per group at d: outer values numbered so far */
	uint32_t *head, *tail;
	uint32_t *firstk, *lastk; /* per group at d: first and last place in the drawn nodes */
	uint64_t *hash;
	uint32_t *ord;      /* per group: ordinal in its ancestor at d, 0 = none yet */
	uint32_t *pos;      /* per dag node: position in its ancestor at d */
	size_t *off;        /* per dag node: where its form starts in the pass's words */
	uint32_t *flen;     /* per dag node: its form's length */
	uint32_t *next;     /* per dag node: next node of the same ancestor */
	uint8_t *exported;  /* per value: used outside the group at d */
	uint64_t *skey;     /* outer value numbering: (group << 32 | value) -> slot */
	uint32_t *sval;
	uint32_t scap;
} sigpass;

#define SKEY_EMPTY UINT64_MAX

static uint32_t slot_of(sigpass *s, uint32_t a, uint32_t vi)
{
	uint64_t key = (uint64_t)a << 32 | vi;
	uint32_t i = (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & (s->scap - 1);
	while (s->skey[i] != SKEY_EMPTY) {
		if (s->skey[i] == key)
			return s->sval[i];
		i = (i + 1) & (s->scap - 1);
	}
	s->skey[i] = key; /* the table holds at least twice the inputs of all nodes */
	s->sval[i] = s->nslot[a]++;
	return s->sval[i];
}

static bool drawn_main(const sigpass *s, uint32_t ni)
{
	return ni < s->dv->nnodes && s->dv->nodes[ni].scope == 0 && !s->v->node_hidden[ni];
}

/* The group at depth d holding drawn node ni, else OXP_NONE. */
static uint32_t anc_of(const sigpass *s, uint32_t ni)
{
	if (!drawn_main(s, ni))
		return OXP_NONE;
	return s->anc[s->node_group[ni]];
}

/* A folded input (hidden producer): the initializer behind it (PyTorch shares equal
 * weights through Identity nodes, so one layer reads an initializer where the next reads
 * an Identity of it: both are the same form), or the constant node. */
static void put_folded(const sigpass *s, words *b, uint32_t p)
{
	for (int hops = 0; hops < 64; hops++) {
		const oxp_node *n = s->dv->nodes[p].proto;
		if (!oxp_str_eq(n->op_type, "Identity") || n->ninputs < 1) {
			put(b, 8);
			put_bytes(b, n->op_type);
			put_attrs(b, n);
			return;
		}
		uint32_t vi = s->dv->nodes[p].inputs[0];
		const oxp_value *val = vi != OXP_NONE ? &s->dv->values[vi] : NULL;
		if (val != NULL && val->kind == OXP_VALUE_INITIALIZER) {
			put(b, 4);
			put_tensor(b, val->initializer);
			return;
		}
		if (val != NULL && val->kind == OXP_VALUE_SPARSE_INITIALIZER) {
			put(b, 5);
			put_tensor(b, val->sparse_initializer->values);
			return;
		}
		if (val == NULL || val->kind != OXP_VALUE_NODE_OUTPUT ||
		    !s->v->node_hidden[val->producer])
			break;
		p = val->producer;
	}
	put(b, 7);
}

/* The canonical form of drawn node ni in group a (at depth d). */
static void node_form(sigpass *s, words *b, uint32_t ni, uint32_t a)
{
	const oxp_dnode *dn = &s->dv->nodes[ni];
	const oxp_node *n = dn->proto;
	put(b, 0x6e6f6465); /* a node */
	put_bytes(b, n->domain);
	put_bytes(b, n->op_type);
	put_bytes(b, n->overload);
	/* where it sits in the scope tree below a: ordinals up the chain */
	uint32_t chain[OXR_MAX_GROUP_DEPTH + 1], nc = 0;
	for (uint32_t x = s->node_group[ni]; x != a && nc <= OXR_MAX_GROUP_DEPTH;
	     x = s->h->g[x].parent)
		chain[nc++] = x;
	put(b, nc);
	for (uint32_t k = nc; k-- > 0;) { /* top down: ordinals in order of first sight */
		if (s->ord[chain[k]] == 0)
			s->ord[chain[k]] = ++s->nsub[a];
	}
	for (uint32_t k = 0; k < nc; k++)
		put(b, s->ord[chain[k]]);
	put_attrs(b, n);
	put(b, n->ninputs);
	for (size_t k = 0; k < n->ninputs; k++) {
		uint32_t vi = dn->inputs[k];
		if (vi == OXP_NONE) {
			put(b, 1);
			continue;
		}
		const oxp_value *val = &s->dv->values[vi];
		if (val->kind == OXP_VALUE_INITIALIZER) {
			put(b, 4);
			put_tensor(b, val->initializer);
		} else if (val->kind == OXP_VALUE_SPARSE_INITIALIZER) {
			put(b, 5);
			put_tensor(b, val->sparse_initializer->values);
		} else if (val->kind == OXP_VALUE_NODE_OUTPUT && s->v->node_hidden[val->producer]) {
			put_folded(s, b, val->producer);
		} else if (val->kind == OXP_VALUE_NODE_OUTPUT && anc_of(s, val->producer) == a) {
			put(b, 3);
			put(b, s->pos[val->producer]);
			put(b, val->producer_output);
		} else {
			put(b, 6);
			put(b, slot_of(s, a, vi));
		}
	}
	put(b, n->noutputs);
	for (size_t k = 0; k < n->noutputs; k++) {
		uint32_t vi = dn->outputs[k];
		put(b, vi == OXP_NONE ? 0 : s->exported[vi] ? 2 : 1);
	}
}

static uint64_t fold(uint64_t h, const words *b, size_t from)
{
	for (size_t i = from; i < b->n; i++) {
		h ^= b->w[i] * 0x9e3779b97f4a7c15ull;
		h = (h << 27 | h >> 37) * 0x94d049bb133111ebull;
	}
	return h;
}

/* The drawn main-graph node a consumer stands behind (its owner, for subgraph nodes). */
static uint32_t main_node(const oxp_dag_view *dv, uint32_t ni)
{
	for (int hops = 0; hops < 64 && ni != OXP_NONE; hops++) {
		const oxp_scope *sc = &dv->scopes[dv->nodes[ni].scope];
		if (sc->kind == OXP_SCOPE_MAIN)
			return ni;
		if (sc->kind != OXP_SCOPE_SUBGRAPH)
			return OXP_NONE;
		ni = sc->owner;
	}
	return OXP_NONE;
}

/* Which outputs of the wanted groups' nodes are used outside their group. */
static void mark_exported(sigpass *s, const uint32_t *nodes, uint32_t nn)
{
	const oxp_dag_view *dv = s->dv;
	for (uint32_t k = 0; k < nn; k++) {
		uint32_t p = nodes[k];
		uint32_t a = anc_of(s, p);
		if (a == OXP_NONE || !s->want[a])
			continue;
		const oxp_dnode *dn = &dv->nodes[p];
		for (size_t o = 0; o < dn->proto->noutputs; o++) {
			uint32_t vi = dn->outputs[o];
			if (vi == OXP_NONE)
				continue;
			const oxp_value *val = &dv->values[vi];
			bool out = val->graph_output;
			for (uint32_t c = 0; c < val->nconsumers && !out; c++) {
				uint32_t m = main_node(dv, dv->edges[val->consumers[c]].dst);
				out = m == OXP_NONE || anc_of(s, m) != a;
			}
			s->exported[vi] = out;
		}
	}
}

static bool same_forms(const sigpass *s, uint32_t a, uint32_t b, const words *w)
{
	if (s->cnt[a] != s->cnt[b] || s->hash[a] != s->hash[b] || s->nsub[a] != s->nsub[b] ||
	    s->nslot[a] != s->nslot[b])
		return false;
	for (uint32_t x = s->head[a], y = s->head[b]; x != OXP_NONE || y != OXP_NONE;
	     x = s->next[x], y = s->next[y]) {
		if (x == OXP_NONE || y == OXP_NONE || s->flen[x] != s->flen[y] ||
		    memcmp(w->w + s->off[x], w->w + s->off[y], s->flen[x] * sizeof(uint64_t)) != 0)
			return false;
	}
	return true;
}

/* Next to each other: no other drawn node between them in the graph's order (then one box
 * for both cannot make a cycle through something outside, as norm1 -> linear -> norm2
 * would). */
static bool adjacent(const sigpass *s, uint32_t a, uint32_t b)
{
	if (s->cnt[a] == 0 || s->cnt[b] == 0)
		return false;
	uint32_t lo = s->firstk[a] < s->firstk[b] ? s->firstk[a] : s->firstk[b];
	uint32_t hi = s->lastk[a] > s->lastk[b] ? s->lastk[a] : s->lastk[b];
	return (uint64_t)hi - lo + 1 == (uint64_t)s->cnt[a] + s->cnt[b];
}

/* Could the sibling k places after g repeat it (k = 1: the next)?  Same family, the
 * number k higher, as many nodes. */
static uint32_t candidate_at(const hier *h, uint32_t gi, uint32_t k)
{
	const hgroup *g = &h->g[gi];
	if (g->num == HIER_NONUM || g->nops < 2)
		return OXP_NONE;
	uint32_t si = gi;
	for (uint32_t i = 0; i < k && si != OXP_NONE; i++)
		si = h->g[si].next_sibling;
	if (si == OXP_NONE)
		return OXP_NONE;
	const hgroup *s = &h->g[si];
	if (s->fam != g->fam || s->num != g->num + k || s->nops != g->nops)
		return OXP_NONE;
	return si;
}

static uint32_t candidate(const hier *h, uint32_t gi)
{
	return candidate_at(h, gi, 1);
}

/* Any sibling up to HIER_PERIOD_MAX places on that could repeat g. */
static bool has_candidate(const hier *h, uint32_t gi)
{
	for (uint32_t k = 1; k <= HIER_PERIOD_MAX; k++)
		if (candidate_at(h, gi, k) != OXP_NONE)
			return true;
	return false;
}

/* Do the k siblings from gi on follow each other in the graph's order, each next to the
 * one before?  (Their places are known: each is a candidate of some period.) */
static bool chain_adjacent(const sigpass *s, uint32_t gi, uint32_t k)
{
	for (uint32_t i = 0; i < k; i++) {
		uint32_t nx = s->h->g[gi].next_sibling;
		if (nx == OXP_NONE || !adjacent(s, gi, nx))
			return false;
		gi = nx;
	}
	return true;
}

oxr_code oxr__hier_repeats(const view *v, hier *h, const uint32_t *node_group,
                           const uint32_t *nodes, uint32_t nn, oxr_error *err)
{
	const oxp_dag_view *dv = v->dv;
	uint32_t maxd = 0;
	bool need[OXR_MAX_GROUP_DEPTH + 1] = {false};
	for (uint32_t gi = 1; gi < h->n; gi++) {
		h->g[gi].same_next = false;
		h->g[gi].same_at = 0;
		if (has_candidate(h, gi) && h->g[gi].depth <= OXR_MAX_GROUP_DEPTH) {
			need[h->g[gi].depth] = true;
			if (h->g[gi].depth > maxd)
				maxd = h->g[gi].depth;
		}
	}
	if (maxd == 0)
		return OXR_OK;
	uint64_t ninputs = 0;
	for (uint32_t k = 0; k < nn; k++)
		ninputs += dv->nodes[nodes[k]].proto->ninputs;
	sigpass s = {.v = v, .dv = dv, .h = h, .node_group = node_group};
	s.scap = 16;
	while (s.scap < ninputs * 2 && s.scap < (1u << 30))
		s.scap <<= 1;
	if (s.scap < ninputs * 2)
		return OXR_OK; /* beyond any model the parser's budgets let through: no runs */
	size_t ng = h->n, nd = dv->nnodes ? dv->nnodes : 1, nv = dv->nvalues ? dv->nvalues : 1;
	s.anc = malloc(ng * sizeof(uint32_t));
	s.want = malloc(ng * sizeof(bool));
	s.cnt = malloc(ng * sizeof(uint32_t));
	s.nsub = malloc(ng * sizeof(uint32_t));
	s.nslot = malloc(ng * sizeof(uint32_t));
	s.head = malloc(ng * sizeof(uint32_t));
	s.tail = malloc(ng * sizeof(uint32_t));
	s.firstk = malloc(ng * sizeof(uint32_t));
	s.lastk = malloc(ng * sizeof(uint32_t));
	s.hash = malloc(ng * sizeof(uint64_t));
	s.ord = malloc(ng * sizeof(uint32_t));
	s.pos = malloc(nd * sizeof(uint32_t));
	s.off = malloc(nd * sizeof(size_t));
	s.flen = malloc(nd * sizeof(uint32_t));
	s.next = malloc(nd * sizeof(uint32_t));
	s.exported = calloc(nv, 1);
	s.skey = malloc((size_t)s.scap * sizeof(uint64_t));
	s.sval = malloc((size_t)s.scap * sizeof(uint32_t));
	words w = {0};
	oxr_code rc = OXR_OK;
	if (!s.anc || !s.want || !s.cnt || !s.nsub || !s.nslot || !s.head || !s.tail || !s.hash ||
	    !s.firstk || !s.lastk || !s.ord || !s.pos || !s.off || !s.flen || !s.next ||
	    !s.exported || !s.skey || !s.sval) {
		rc = oxr__fail(err, OXR_E_NOMEM, "out of memory");
		goto out;
	}
	for (uint32_t d = 1; d <= maxd; d++) {
		if (!need[d])
			continue;
		s.d = d;
		/* ancestors at depth d (parents come before children) and the candidates */
		for (uint32_t gi = 0; gi < h->n; gi++) {
			const hgroup *g = &h->g[gi];
			s.anc[gi] = g->depth == d ? gi : g->depth > d ? s.anc[g->parent] : OXP_NONE;
			s.want[gi] = false;
			s.cnt[gi] = s.nsub[gi] = s.nslot[gi] = s.ord[gi] = 0;
			s.head[gi] = s.tail[gi] = OXP_NONE;
			s.hash[gi] = 0x243f6a8885a308d3ull;
		}
		for (uint32_t gi = 1; gi < h->n; gi++)
			for (uint32_t k = 1; k <= HIER_PERIOD_MAX && h->g[gi].depth == d; k++) {
				uint32_t si = candidate_at(h, gi, k);
				if (si != OXP_NONE)
					s.want[gi] = s.want[si] = true;
			}
		/* every candidate's nodes in order, with their positions (before any form: an
		 * input may come from a later node in a graph that is not sorted) */
		for (uint32_t k = 0; k < nn; k++) {
			uint32_t ni = nodes[k];
			uint32_t a = s.anc[node_group[ni]];
			if (a == OXP_NONE || !s.want[a])
				continue;
			if (s.cnt[a] == 0)
				s.firstk[a] = k;
			s.lastk[a] = k;
			s.pos[ni] = s.cnt[a]++;
			s.next[ni] = OXP_NONE;
			if (s.tail[a] == OXP_NONE)
				s.head[a] = ni;
			else
				s.next[s.tail[a]] = ni;
			s.tail[a] = ni;
		}
		/* forms only for groups next to a candidate neighbour, or a period on from one
		 * with every group between them next to each other */
		bool *near = calloc(h->n, sizeof(bool));
		if (near == NULL) {
			rc = oxr__fail(err, OXR_E_NOMEM, "out of memory");
			goto out;
		}
		for (uint32_t gi = 1; gi < h->n; gi++) {
			uint32_t si = h->g[gi].depth == d ? candidate(h, gi) : OXP_NONE;
			if (si != OXP_NONE && adjacent(&s, gi, si))
				near[gi] = near[si] = true;
			for (uint32_t k = 2; k <= HIER_PERIOD_MAX && h->g[gi].depth == d; k++) {
				si = candidate_at(h, gi, k);
				if (si != OXP_NONE && chain_adjacent(&s, gi, k))
					near[gi] = near[si] = true;
			}
		}
		for (uint32_t gi = 1; gi < h->n; gi++)
			if (h->g[gi].depth == d)
				s.want[gi] = near[gi];
		free(near);
		memset(s.skey, 0xff, (size_t)s.scap * sizeof(uint64_t));
		mark_exported(&s, nodes, nn);
		w.n = 0;
		for (uint32_t k = 0; k < nn; k++) {
			uint32_t ni = nodes[k];
			uint32_t a = s.anc[node_group[ni]];
			if (a == OXP_NONE || !s.want[a])
				continue;
			size_t start = w.n;
			node_form(&s, &w, ni, a);
			if (w.oom)
				goto out; /* forms too big to keep: no runs here or deeper */
			s.off[ni] = start;
			s.flen[ni] = (uint32_t)(w.n - start);
			s.hash[a] = fold(s.hash[a], &w, start);
		}
		for (uint32_t gi = 1; gi < h->n; gi++) {
			uint32_t si = h->g[gi].depth == d ? candidate(h, gi) : OXP_NONE;
			if (si != OXP_NONE && s.want[gi] && adjacent(&s, gi, si))
				h->g[gi].same_next = same_forms(&s, gi, si, &w);
		}
		/* periods */
		for (uint32_t gi = 1; gi < h->n; gi++)
			for (uint32_t k = 2; k <= HIER_PERIOD_MAX && h->g[gi].depth == d; k++) {
				uint32_t si = candidate_at(h, gi, k);
				if (si != OXP_NONE && s.want[gi] && s.want[si] && chain_adjacent(&s, gi, k) &&
				    same_forms(&s, gi, si, &w))
					h->g[gi].same_at |= (uint8_t)(1u << k);
			}
	}
out:
	free(s.anc);
	free(s.want);
	free(s.cnt);
	free(s.nsub);
	free(s.nslot);
	free(s.head);
	free(s.tail);
	free(s.firstk);
	free(s.lastk);
	free(s.hash);
	free(s.ord);
	free(s.pos);
	free(s.off);
	free(s.flen);
	free(s.next);
	free(s.exported);
	free(s.skey);
	free(s.sval);
	free(w.w);
	return rc;
}
