/*
 * family.c — families of graph inputs and outputs, and inputs/outputs as rows (io=fold).
 *
 * An LLM exported with its KV cache has 64 inputs past_key_values.0.key ...
 * past_key_values.31.value and as many outputs present.N.*: drawn one terminal each they
 * are a row of 128 pills 24,000 px wide.  Here:
 *   - a family is a set of main-graph inputs (or outputs) whose names differ only in their
 *     numbers and in what follows the last number (".key", ".value"), with the same
 *     element type and the same dims (numbers and symbols alike), at least FAM_MIN of them
 *     under at least two different numbers;
 *   - a member whose only consumer is drawn as its own op box (an output: whose producer
 *     is) is a row of that box: "past_key = past_key_values.3.key", "present_key →
 *     present.3.key" (the row's data-value is the member);
 *   - the other members are one terminal per family and cluster of the box they feed (come
 *     from): "past_key_values.0–31.{key,value} ×64" with the common shape, wired once to
 *     each box; opening a stack splits it as the boxes split.  The terminal's data-value
 *     is its first member, data-values lists them all.
 * Values that belong to no family are drawn as before.  io=nodes draws every input and
 * output as in the file.
 */
#include "render/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAM_MIN 4        /* members a family needs */
#define LABEL_RANGES 3   /* number ranges a label spells out ("0–4,6–31") */

typedef struct iofam {
	bool output;
	uint32_t first;      /* first member (value) */
	uint32_t count;
} iofam;

typedef struct iopiece {
	uint32_t fam, cluster, box;
} iopiece;

struct oxr_io {
	uint32_t *fam;       /* per value: its family, else OXP_NONE */
	uint32_t *nextm;     /* per value: next member of its family */
	uint32_t *piece;     /* per value: the terminal's piece it is drawn in, else OXP_NONE */
	uint8_t *row;        /* per value: drawn as a row (1 input, 2 output) */
	iofam *fams;
	uint32_t nfams;
	uint32_t nmembers;
	iopiece *pieces;
	uint32_t npieces, cappieces;
	uint32_t *slots;     /* (family, cluster) -> piece, open addressing */
	uint32_t nslots;
};

/* ---------------------------------------------------------------------------------------
 * Names as patterns
 */
static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Bytes of the name up to the end of its last digit run (0: no digits). */
static size_t stem_len(oxp_str s)
{
	size_t n = s.len;
	while (n > 0 && !is_digit(s.p[n - 1]))
		n--;
	return n;
}

typedef struct cand {
	uint32_t value;
	uint32_t order;
	uint64_t hash;      /* of the pattern: stem with digit runs as '#', type, dims */
} cand;

static uint64_t mix(uint64_t h, uint64_t x)
{
	h ^= x * 0x9e3779b97f4a7c15ull;
	return (h << 27 | h >> 37) * 0x94d049bb133111ebull;
}

static uint64_t str_hash(uint64_t h, oxp_str s)
{
	h = mix(h, s.len);
	for (size_t i = 0; i < s.len; i++)
		h = mix(h, (unsigned char)s.p[i]);
	return h;
}

static uint64_t pattern_hash(const oxp_value *val, bool output)
{
	uint64_t h = output ? 0x6f7574 : 0x696e;
	size_t n = stem_len(val->name);
	for (size_t i = 0; i < n; i++) {
		if (is_digit(val->name.p[i])) {
			while (i + 1 < n && is_digit(val->name.p[i + 1]))
				i++;
			h = mix(h, '#' | 0x100);
		} else {
			h = mix(h, (unsigned char)val->name.p[i]);
		}
	}
	const oxp_value_type *ty = oxp_value_best_type(val);
	h = mix(h, (uint64_t)(uint32_t)ty->elem_type);
	h = mix(h, (uint64_t)(uint32_t)ty->rank);
	for (int32_t k = 0; k < ty->rank; k++) {
		h = mix(h, (uint64_t)ty->dims[k].kind);
		if (ty->dims[k].kind == OXP_DIM_VALUE)
			h = mix(h, (uint64_t)ty->dims[k].value);
		else if (ty->dims[k].kind == OXP_DIM_PARAM)
			h = str_hash(h, ty->dims[k].param);
	}
	return h;
}

static bool same_str(oxp_str a, oxp_str b)
{
	return a.len == b.len && (a.len == 0 || memcmp(a.p, b.p, a.len) == 0);
}

/* The same pattern (what the hash says, checked). */
static bool same_pattern(const oxp_value *a, const oxp_value *b)
{
	size_t na = stem_len(a->name), nb = stem_len(b->name), i = 0, j = 0;
	while (i < na && j < nb) {
		bool da = is_digit(a->name.p[i]), db = is_digit(b->name.p[j]);
		if (da != db)
			return false;
		if (da) {
			while (i < na && is_digit(a->name.p[i]))
				i++;
			while (j < nb && is_digit(b->name.p[j]))
				j++;
			continue;
		}
		if (a->name.p[i] != b->name.p[j])
			return false;
		i++;
		j++;
	}
	if (i != na || j != nb)
		return false;
	const oxp_value_type *x = oxp_value_best_type(a), *y = oxp_value_best_type(b);
	if (x->elem_type != y->elem_type || x->rank != y->rank)
		return false;
	for (int32_t k = 0; k < x->rank; k++) {
		const oxp_dim *p = &x->dims[k], *q = &y->dims[k];
		if (p->kind != q->kind || (p->kind == OXP_DIM_VALUE && p->value != q->value) ||
		    (p->kind == OXP_DIM_PARAM && !same_str(p->param, q->param)))
			return false;
	}
	return true;
}

static int by_pattern(const void *a, const void *b)
{
	const cand *x = a, *y = b;
	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	return (x->order > y->order) - (x->order < y->order);
}

static int by_order(const void *a, const void *b)
{
	const cand *x = a, *y = b;
	return (x->order > y->order) - (x->order < y->order);
}

/* ---------------------------------------------------------------------------------------
 * Finding families
 */
static bool grow_pieces(struct oxr_io *io)
{
	if (io->npieces < io->cappieces)
		return true;
	uint32_t cap = io->cappieces ? io->cappieces * 2 : 16;
	iopiece *np = realloc(io->pieces, (size_t)cap * sizeof(iopiece));
	if (np == NULL)
		return false;
	io->pieces = np;
	io->cappieces = cap;
	return true;
}

/* Families among the candidates c[0..n) (inputs, or outputs). */
static bool find_families(view *v, struct oxr_io *io, cand *c, uint32_t n, bool output)
{
	qsort(c, n, sizeof(*c), by_pattern);
	for (uint32_t i = 0; i < n;) {
		uint32_t j = i + 1;
		while (j < n && c[j].hash == c[i].hash)
			j++;
		/* [i, j) share a hash: members of the first's pattern, rest tried again */
		while (i < j) {
			const oxp_value *a = &v->dv->values[c[i].value];
			uint32_t k = i + 1, members = 1;
			bool two_stems = false;
			for (uint32_t x = i + 1; x < j; x++) {
				const oxp_value *b = &v->dv->values[c[x].value];
				if (!same_pattern(a, b))
					continue;
				cand t = c[k];
				c[k] = c[x];
				c[x] = t;
				k++;
				members++;
				two_stems |= stem_len(a->name) != stem_len(b->name) ||
				             memcmp(a->name.p, b->name.p, stem_len(a->name)) != 0;
			}
			if (members >= FAM_MIN && two_stems) {
				qsort(c + i, members, sizeof(*c), by_order);
				iofam *nf = realloc(io->fams, (size_t)(io->nfams + 1) * sizeof(iofam));
				if (nf == NULL)
					return false;
				io->fams = nf;
				uint32_t f = io->nfams++;
				io->fams[f] = (iofam){.output = output, .first = c[i].value, .count = members};
				io->nmembers += members;
				for (uint32_t x = i; x < i + members; x++) {
					io->fam[c[x].value] = f;
					io->nextm[c[x].value] = x + 1 < i + members ? c[x + 1].value : OXP_NONE;
				}
			}
			i += members;
			if (i < j) /* the rest, in their order */
				qsort(c + i, j - i, sizeof(*c), by_order);
		}
	}
	return true;
}

/* The op box drawing node ni itself, else OXP_NONE (grouped, folded, joined). */
static uint32_t own_box(const view *v, uint32_t ni)
{
	if (ni == OXP_NONE || v->node_hidden[ni])
		return OXP_NONE;
	uint32_t b = v->node_box[ni];
	return b != OXP_NONE && v->boxes[b].kind == BX_OP && v->boxes[b].node == ni ? b : OXP_NONE;
}

/* Is input value vi consumed by one node only, drawn as its own box in the main graph? */
static bool input_row(const view *v, uint32_t vi)
{
	const oxp_value *val = &v->dv->values[vi];
	if (val->graph_output || val->nconsumers == 0)
		return false;
	uint32_t node = v->dv->edges[val->consumers[0]].dst;
	for (uint32_t k = 1; k < val->nconsumers; k++)
		if (v->dv->edges[val->consumers[k]].dst != node)
			return false;
	return v->dv->nodes[node].scope == 0 && own_box(v, node) != OXP_NONE;
}

oxr_code oxr__io_mark(view *v, oxr_error *err)
{
	if (v->o.io_nodes)
		return OXR_OK;
	const oxp_scope *s = &v->dv->scopes[0];
	uint32_t nv = v->dv->nvalues;
	struct oxr_io *io = oxp_arena_alloc(v->arena, sizeof(*io));
	uint32_t most = s->ninputs > s->noutputs ? s->ninputs : s->noutputs;
	cand *c = malloc((size_t)(most ? most : 1) * sizeof(cand));
	if (io == NULL || c == NULL) {
		free(c);
		return oxr__fail(err, OXR_E_NOMEM, "out of memory");
	}
	memset(io, 0, sizeof(*io));
	io->fam = malloc((size_t)(nv ? nv : 1) * sizeof(uint32_t));
	io->nextm = malloc((size_t)(nv ? nv : 1) * sizeof(uint32_t));
	io->piece = malloc((size_t)(nv ? nv : 1) * sizeof(uint32_t));
	io->row = calloc(nv ? nv : 1, 1);
	v->io = io; /* freed by oxr__io_free whatever happens next */
	if (io->fam == NULL || io->nextm == NULL || io->piece == NULL || io->row == NULL) {
		free(c);
		return oxr__fail(err, OXR_E_NOMEM, "out of memory");
	}
	memset(io->fam, 0xff, (size_t)(nv ? nv : 1) * sizeof(uint32_t));
	memset(io->piece, 0xff, (size_t)(nv ? nv : 1) * sizeof(uint32_t));
	bool ok = true;
	for (int pass = 0; pass < 2 && ok; pass++) {
		bool output = pass == 1;
		uint32_t n = 0, total = output ? s->noutputs : s->ninputs;
		for (uint32_t k = 0; k < total; k++) {
			uint32_t vi = output ? s->outputs[k] : s->inputs[k];
			if (vi == OXP_NONE || io->fam[vi] != OXP_NONE)
				continue;
			const oxp_value *val = &v->dv->values[vi];
			if (output ? val->kind != OXP_VALUE_NODE_OUTPUT
			           : val->kind != OXP_VALUE_INPUT || val->nconsumers == 0)
				continue;
			if (stem_len(val->name) == 0)
				continue;
			c[n++] = (cand){.value = vi, .order = k, .hash = pattern_hash(val, output)};
		}
		ok = find_families(v, io, c, n, output);
	}
	free(c);
	if (!ok)
		return oxr__fail(err, OXR_E_NOMEM, "out of memory");
	/* the pieces' table: at most one piece per member */
	io->nslots = 16;
	while (io->nslots < io->nmembers * 2u && io->nslots < (1u << 30))
		io->nslots <<= 1;
	io->slots = malloc((size_t)io->nslots * sizeof(uint32_t));
	if (io->slots == NULL)
		return oxr__fail(err, OXR_E_NOMEM, "out of memory");
	memset(io->slots, 0xff, (size_t)io->nslots * sizeof(uint32_t));
	/* members drawn as rows of the box they feed or come from */
	for (uint32_t f = 0; f < io->nfams; f++)
		for (uint32_t vi = io->fams[f].first; vi != OXP_NONE; vi = io->nextm[vi]) {
			const oxp_value *val = &v->dv->values[vi];
			if (io->fams[f].output)
				io->row[vi] = own_box(v, val->producer) != OXP_NONE ? 2 : 0;
			else
				io->row[vi] = input_row(v, vi) ? 1 : 0;
		}
	return OXR_OK;
}

void oxr__io_free(view *v)
{
	if (v->io == NULL)
		return;
	free(v->io->fam);
	free(v->io->nextm);
	free(v->io->piece);
	free(v->io->slots);
	free(v->io->row);
	free(v->io->fams);
	free(v->io->pieces);
	v->io = NULL;
}

bool oxr__io_row(const view *v, uint32_t vi)
{
	return v->io != NULL && vi < v->dv->nvalues && v->io->row[vi] != 0;
}

/* ---------------------------------------------------------------------------------------
 * Family terminals
 */
/* The box member vi is drawn with (inputs: the first consumer's; outputs: the producer's):
 * its cluster decides the piece. */
static uint32_t anchor_cluster(const view *v, uint32_t vi)
{
	const oxp_value *val = &v->dv->values[vi];
	uint32_t node = val->kind == OXP_VALUE_NODE_OUTPUT ? val->producer
	                : val->nconsumers > 0 ? v->dv->edges[val->consumers[0]].dst
	                                      : OXP_NONE;
	if (node == OXP_NONE || node >= v->dv->nnodes || v->node_box[node] == OXP_NONE)
		return OXP_NONE;
	return v->boxes[v->node_box[node]].cluster;
}

oxr_code oxr__io_box(view *v, uint32_t vi, uint32_t *box, oxr_error *err)
{
	*box = OXP_NONE;
	struct oxr_io *io = v->io;
	if (io == NULL || vi >= v->dv->nvalues || io->fam[vi] == OXP_NONE || io->row[vi])
		return OXR_OK;
	if (io->piece[vi] != OXP_NONE) {
		*box = io->pieces[io->piece[vi]].box;
		return OXR_OK;
	}
	uint32_t f = io->fam[vi], cl = anchor_cluster(v, vi);
	uint64_t key = (uint64_t)f << 32 | cl;
	uint32_t h = (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & (io->nslots - 1);
	for (; io->slots[h] != OXP_NONE; h = (h + 1) & (io->nslots - 1)) {
		const iopiece *p = &io->pieces[io->slots[h]];
		if (p->fam == f && p->cluster == cl) {
			io->piece[vi] = io->slots[h];
			*box = p->box;
			return OXR_OK;
		}
	}
	if (io->npieces >= io->nslots / 2 || !grow_pieces(io)) /* the table holds every member */
		return oxr__fail(err, OXR_E_NOMEM, "out of memory");
	uint32_t bi = oxr__view_add_box(v, io->fams[f].output ? BX_OUTPUT : BX_INPUT, err);
	if (bi == OXP_NONE)
		return err ? err->code : OXR_E_NOMEM;
	vbox *b = &v->boxes[bi];
	b->value = vi;
	b->cluster = OXP_NONE; /* with the other terminals, at the top (bottom) */
	b->family = FAM_IO;
	b->id = oxp_arena_printf(v->arena, "%s%u", io->fams[f].output ? "o" : "i", vi);
	io->slots[h] = io->npieces;
	io->piece[vi] = io->npieces;
	io->pieces[io->npieces++] = (iopiece){.fam = f, .cluster = cl, .box = bi};
	*box = bi;
	return OXR_OK;
}

bool oxr__io_family_box(const view *v, uint32_t bi)
{
	const vbox *b = &v->boxes[bi];
	return v->io != NULL && (b->kind == BX_INPUT || b->kind == BX_OUTPUT) &&
	       b->value != OXP_NONE && v->io->piece[b->value] != OXP_NONE;
}

/* "0–4,6–31" from sorted distinct numbers. */
static void put_ranges(char *buf, size_t size, const uint64_t *nums, uint32_t n)
{
	size_t o = 0;
	uint32_t ranges = 0;
	buf[0] = '\0';
	for (uint32_t i = 0; i < n && o < size;) {
		uint32_t j = i;
		while (j + 1 < n && nums[j] != UINT64_MAX && nums[j + 1] == nums[j] + 1)
			j++;
		if (ranges == LABEL_RANGES) {
			snprintf(buf + o, size - o, ",\xe2\x80\xa6");
			return;
		}
		int w = nums[i] == UINT64_MAX /* a number too long to read */
		            ? snprintf(buf + o, size - o, "%s\xe2\x80\xa6", ranges ? "," : "")
		        : i == j ? snprintf(buf + o, size - o, "%s%llu", ranges ? "," : "",
		                          (unsigned long long)nums[i])
		               : snprintf(buf + o, size - o, "%s%llu\xe2\x80\x93%llu", ranges ? "," : "",
		                          (unsigned long long)nums[i], (unsigned long long)nums[j]);
		if (w < 0)
			return;
		o += (size_t)w;
		ranges++;
		i = j + 1;
	}
}

static int by_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* The number of member vi's digit run `slot` (UINT64_MAX: none, or too long). */
static uint64_t number_at(oxp_str s, uint32_t slot)
{
	size_t n = stem_len(s);
	uint32_t run = 0;
	for (size_t i = 0; i < n; i++) {
		if (!is_digit(s.p[i]))
			continue;
		uint64_t x = 0;
		size_t d = 0;
		for (; i < n && is_digit(s.p[i]); i++, d++)
			x = x * 10 + (uint64_t)(s.p[i] - '0');
		if (run++ == slot)
			return d <= 18 ? x : UINT64_MAX;
	}
	return UINT64_MAX;
}

/* The label of the piece drawn by box bi: the first member's name with every number that
 * differs between members written as ranges, the different ends after the last number
 * in braces, and the count: "past_key_values.0–31.{key,value} ×64". */
static const char *piece_label(view *v, uint32_t bi, uint32_t *count, const char **values)
{
	struct oxr_io *io = v->io;
	const vbox *b = &v->boxes[bi];
	uint32_t f = io->fam[b->value], pc = io->piece[b->value];
	uint32_t n = 0;
	for (uint32_t vi = io->fams[f].first; vi != OXP_NONE; vi = io->nextm[vi])
		n += io->piece[vi] == pc;
	*count = n;
	uint64_t *nums = malloc((size_t)(n ? n : 1) * sizeof(uint64_t));
	oxp_str *tails = malloc((size_t)(n ? n : 1) * sizeof(oxp_str));
	char *ids = malloc((size_t)(n ? n : 1) * 12 + 1);
	if (nums == NULL || tails == NULL || ids == NULL) {
		free(nums);
		free(tails);
		free(ids);
		return NULL;
	}
	oxp_str first = v->dv->values[b->value].name;
	size_t sl = stem_len(first), o = 0;
	char out[512];
	size_t ol = 0;
	out[0] = '\0';
	uint32_t slot = 0;
	for (size_t i = 0; i < sl;) {
		if (!is_digit(first.p[i])) {
			size_t j = i;
			while (j < sl && !is_digit(first.p[j]))
				j++;
			const char *t = oxr__text(v->arena, (oxp_str){first.p + i, j - i}, 80);
			ol += (size_t)snprintf(out + ol, sizeof(out) - ol, "%s", t);
			if (ol >= sizeof(out))
				ol = sizeof(out) - 1;
			i = j;
			continue;
		}
		uint32_t m = 0;
		for (uint32_t vi = io->fams[f].first; vi != OXP_NONE; vi = io->nextm[vi])
			if (io->piece[vi] == pc)
				nums[m++] = number_at(v->dv->values[vi].name, slot);
		qsort(nums, m, sizeof(uint64_t), by_u64);
		uint32_t d = 0;
		for (uint32_t k = 0; k < m; k++)
			if (k == 0 || nums[k] != nums[d - 1])
				nums[d++] = nums[k];
		char r[160];
		put_ranges(r, sizeof(r), nums, d);
		ol += (size_t)snprintf(out + ol, sizeof(out) - ol, "%s", r);
		if (ol >= sizeof(out))
			ol = sizeof(out) - 1;
		while (i < sl && is_digit(first.p[i]))
			i++;
		slot++;
	}
	/* the ends after the last number, in order of first sight, their common start once */
	uint32_t nt = 0;
	for (uint32_t vi = io->fams[f].first; vi != OXP_NONE; vi = io->nextm[vi]) {
		if (io->piece[vi] != pc)
			continue;
		oxp_str nm = v->dv->values[vi].name;
		size_t st = stem_len(nm);
		oxp_str t = {nm.p + st, nm.len - st};
		uint32_t k = 0;
		while (k < nt && !same_str(tails[k], t))
			k++;
		if (k == nt)
			tails[nt++] = t;
		o += (size_t)snprintf(ids + o, (size_t)n * 12 + 1 - o, "%s%u", o ? " " : "", vi);
	}
	size_t common = nt > 1 ? tails[0].len : 0;
	for (uint32_t k = 1; k < nt; k++) {
		size_t c = 0;
		while (c < common && c < tails[k].len && tails[k].p[c] == tails[0].p[c])
			c++;
		common = c;
	}
	if (nt == 1) {
		ol += (size_t)snprintf(out + ol, sizeof(out) - ol, "%s",
		                       oxr__text(v->arena, tails[0], 40));
	} else if (nt > 1) {
		ol += (size_t)snprintf(out + ol, sizeof(out) - ol, "%s{",
		                       oxr__text(v->arena, (oxp_str){tails[0].p, common}, 40));
		for (uint32_t k = 0; k < nt && ol < sizeof(out); k++)
			ol += (size_t)snprintf(out + ol, sizeof(out) - ol, "%s%s", k ? "," : "",
			                       oxr__text(v->arena, (oxp_str){tails[k].p + common,
			                                                     tails[k].len - common}, 24));
		if (ol < sizeof(out))
			ol += (size_t)snprintf(out + ol, sizeof(out) - ol, "}");
	}
	if (ol >= sizeof(out))
		ol = sizeof(out) - 1;
	*values = oxp_arena_strndup(v->arena, ids, o);
	free(nums);
	free(tails);
	free(ids);
	if (n > 1)
		return oxp_arena_printf(v->arena, "%.*s \xc3\x97%u", (int)ol, out, n);
	return oxp_arena_strndup(v->arena, out, ol);
}

bool oxr__io_terminal_rows(view *v, uint32_t bi)
{
	struct oxr_io *io = v->io;
	vbox *b = &v->boxes[bi];
	if (io == NULL || b->value == OXP_NONE || (b->kind != BX_INPUT && b->kind != BX_OUTPUT) ||
	    io->fam[b->value] == OXP_NONE)
		return false;
	uint32_t count = 0;
	const char *values = NULL;
	const char *label = piece_label(v, bi, &count, &values);
	if (label == NULL)
		return false;
	if (count <= 1)
		return false; /* alone in its cluster: a terminal like any other */
	oxr__add_row(v, b, ROW_PLAIN, label);
	b->title = label;
	b->values = values;
	const char *sh = oxr__shape_text(v->arena, &v->dv->values[b->value]);
	if (sh != NULL)
		oxr__add_row(v, b, ROW_TENSOR, sh);
	return true;
}

/* ---------------------------------------------------------------------------------------
 * Rows of op boxes
 */
static void io_row(view *v, vbox *b, const char *port, uint32_t vi, bool output)
{
	const char *name = oxr__text_tail(v->arena, v->dv->values[vi].name, 48);
	const char *text = port == NULL
	                       ? oxp_arena_printf(v->arena, "%s %s", output ? "\xe2\x86\x92" : "\xe2\x86\x90",
	                                          name)
	                   : output ? oxp_arena_printf(v->arena, "%s \xe2\x86\x92 %s", port, name)
	                            : oxp_arena_printf(v->arena, "%s = %s", port, name);
	if (oxr__add_row(v, b, ROW_TENSOR, text))
		b->rows[b->nrows - 1].value = vi;
}

void oxr__io_rows(view *v, uint32_t bi)
{
	struct oxr_io *io = v->io;
	if (io == NULL)
		return;
	vbox *b = &v->boxes[bi];
	uint32_t ni = b->node;
	const oxp_dnode *dn = &v->dv->nodes[ni];
	for (size_t k = 0; k < dn->proto->ninputs; k++) {
		uint32_t vi = dn->inputs[k];
		if (vi == OXP_NONE || io->row[vi] != 1)
			continue;
		bool dup = false; /* an input read twice: one row */
		for (size_t j = 0; j < k && !dup; j++)
			dup = dn->inputs[j] == vi;
		if (!dup)
			io_row(v, b, oxr__input_label(v, ni, k), vi, false);
	}
	for (size_t k = 0; k < dn->proto->noutputs; k++) {
		uint32_t vi = dn->outputs[k];
		if (vi == OXP_NONE || io->row[vi] != 2)
			continue;
		char buf[96];
		const char *l = oxp_dag_port_label(v->d, ni, true, k, buf, sizeof(buf));
		io_row(v, b, l ? oxr__text(v->arena, (oxp_str){l, strlen(l)}, 40) : NULL, vi, true);
	}
}
