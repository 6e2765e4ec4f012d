/*
 * decode.c — table-driven decoding of every ONNX message.
 *
 * Each message is described by a table of its fields (number, kind, where the value goes).
 * One generic routine decodes any message in two passes over its bytes:
 *   pass 1 walks the tags, checks wire types and lengths, and counts the elements of every
 *          repeated field from the bytes actually present (never from a count the file
 *          declares), then checks the counts against the limits;
 *   the arrays are allocated from the model's arena at their exact sizes;
 *   pass 2 walks again and fills them; sub-messages are decoded as they are met (repeated)
 *          or after the pass (singular ones, merged from all their occurrences as protobuf
 *          does).
 * Recursion follows message nesting and is bounded by limits.max_depth (and subgraphs by
 * limits.max_graph_depth); the path of field names kept on the way names the place of an
 * error ("graph.node[12].attribute[3].t.dims").
 *
 * Some wire messages have no struct of their own: TypeProto.Tensor/Sequence/Map/Optional/
 * SparseTensor/Opaque and TensorProto.Segment are "inlined", their fields decoded into the
 * enclosing struct (see oxp_type), which keeps the public structures flat.
 */
#include "parser/internal.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum kind {
	F_I64,   /* int64 varint */
	F_I32,   /* int32 / enum varint (truncated to 32 bits as protobuf does) */
	F_FLOAT, /* float, fixed32 */
	F_STR,   /* string / bytes: a view */
	F_MSG,   /* sub-message */
	F_INL,   /* sub-message decoded into the enclosing struct */
	F_DATA   /* TensorProto typed data: validated and measured, never decoded here */
};

enum limit { L_REPEATED, L_NODE_IO, L_NODES };

struct mdesc;
typedef struct fdesc {
	uint32_t num;
	uint8_t kind;
	uint8_t rep;     /* repeated */
	uint8_t oneof;   /* 0 = none, else group 1..3 */
	uint8_t wt;      /* F_DATA: the scalar wire type of one element */
	uint8_t lim;     /* enum limit */
	uint16_t off;    /* offset of the value, or of the array pointer when repeated */
	uint16_t cnt;    /* offset of the size_t count when repeated */
	const struct mdesc *sub;
	const char *name;
} fdesc;

#define MAXF 32
#define NONEOF 4

typedef struct mstate {
	uint64_t present;          /* bit n: known field number n seen (every onnx.proto field
	                            * number is below 64: the tables go up to 26) */
	int8_t oneof_last[NONEOF]; /* index of the last member seen of each oneof group */
	const oxp_segment *segs;
	size_t nsegs;
} mstate;

typedef struct dctx dctx;
typedef oxp_code (*post_fn)(dctx *c, const struct mdesc *md, void *msg, const mstate *st);

typedef struct mdesc {
	const char *name;
	size_t size;
	const fdesc *f;
	size_t nf;
	post_fn post;
	bool graph;      /* GraphProto: counts toward max_graph_depth */
	uint8_t *by_num; /* [NUMS]: field number -> index + 1, 0 = unknown (index_tables) */
} mdesc;

/* Field numbers looked up through by_num; every onnx.proto number is below it (a larger
 * one would be searched for, index_tables) */
#define NUMS 64

#define MAXPATH 256

struct dctx {
	const uint8_t *base;
	size_t size;
	oxp_arena *arena;
	oxp_limits lim;
	oxp_error *err;
	uint32_t depth;
	uint32_t gdepth;
	size_t nnodes;
	const oxp__compact *cp; /* decoding a compacted copy (base is its buffer), or NULL */
	struct {
		const char *name;
		int64_t index; /* -1: singular */
	} path[MAXPATH];
};

/* ---------------------------------------------------------------------------------------
 * Errors
 */
static void format_path(const dctx *c, char *buf, size_t size, const char *last, int64_t idx)
{
	size_t n = 0;
	buf[0] = '\0';
	uint32_t depth = c->depth < MAXPATH ? c->depth : MAXPATH;
	for (uint32_t i = 0; i <= depth && n + 1 < size; i++) {
		const char *name;
		int64_t index;
		if (i < depth) {
			name = c->path[i].name;
			index = c->path[i].index;
		} else {
			if (last == NULL)
				break;
			name = last;
			index = idx;
		}
		if (name == NULL)
			continue;
		int w;
		if (index >= 0)
			w = snprintf(buf + n, size - n, "%s%s[%" PRId64 "]", n ? "." : "", name, index);
		else
			w = snprintf(buf + n, size - n, "%s%s", n ? "." : "", name);
		if (w < 0)
			break;
		n += (size_t)w;
		if (n >= size) {
			n = size - 1;
			break;
		}
	}
}

static oxp_code fail(dctx *c, oxp_code code, const uint8_t *at, const char *field,
                     int64_t idx, const char *fmt, ...) OXP_PRINTF(6, 7);

/* The file offset of p, a pointer into the buffer decoded. */
static uint64_t offset_of(const dctx *c, const uint8_t *p)
{
	uint64_t pos = (uint64_t)(p - c->base);
	return c->cp != NULL ? oxp__compact_offset(c->cp, pos) : pos;
}

static oxp_code fail(dctx *c, oxp_code code, const uint8_t *at, const char *field,
                     int64_t idx, const char *fmt, ...)
{
	if (c->err == NULL || c->err->code != OXP_OK)
		return code; /* the first error wins */
	oxp_error *e = c->err;
	e->code = code;
	e->offset = at != NULL && at >= c->base && at <= c->base + c->size ? offset_of(c, at) : 0;
	format_path(c, e->path, sizeof(e->path), field, idx);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
	return code;
}

static const char *wire_msg(oxp_code code)
{
	switch (code) {
	case OXP_E_TRUNCATED:
		return "truncated message";
	case OXP_E_VARINT:
		return "malformed varint (longer than 10 bytes or above 2^64-1)";
	case OXP_E_TAG:
		return "malformed field tag";
	case OXP_E_WIRETYPE:
		return "invalid wire type";
	case OXP_E_GROUP:
		return "protobuf groups (wire type 3/4) are not supported";
	case OXP_E_LENGTH:
		return "length prefix exceeds the remaining bytes";
	case OXP_E_PACKED:
		return "packed field is not a whole number of elements";
	default:
		return "malformed input";
	}
}

static oxp_code nomem(dctx *c, const uint8_t *at)
{
	if (oxp__arena_malloc_failed(c->arena))
		return fail(c, OXP_E_NOMEM, at, NULL, -1, "out of memory");
	return fail(c, OXP_E_BUDGET, at, NULL, -1,
	            "the model needs more than its parse budget of %zu bytes", c->lim.max_alloc);
}

/* ---------------------------------------------------------------------------------------
 * Field helpers
 */
static const char *wt_name(unsigned wt)
{
	static const char *const names[] = {"varint", "64-bit", "length-delimited", "start-group",
	                                    "end-group", "32-bit", "6", "7"};
	return names[wt & 7];
}

static int find_field(const mdesc *md, uint32_t num)
{
	for (size_t i = 0; i < md->nf; i++)
		if (md->f[i].num == num)
			return (int)i;
	return -1;
}

/* The field of number num, or -1: a table look-up (the per-message cost of finding
 * fields was ~7% of a whole inspect with a search). */
static inline int field_of(const mdesc *md, uint32_t num)
{
	return num < NUMS ? (int)md->by_num[num] - 1 : find_field(md, num);
}

static unsigned scalar_wt(const fdesc *f)
{
	switch (f->kind) {
	case F_I64:
	case F_I32:
		return OXP_WT_VARINT;
	case F_FLOAT:
		return OXP_WT_I32;
	case F_DATA:
		return f->wt;
	default:
		return OXP_WT_LEN;
	}
}

static size_t limit_of(const dctx *c, const fdesc *f)
{
	switch (f->lim) {
	case L_NODE_IO:
		return c->lim.max_node_io;
	default:
		return c->lim.max_repeated;
	}
}

#define AT(base, off, type) ((type *)(void *)((char *)(base) + (off)))

static size_t elem_size(const fdesc *f)
{
	switch (f->kind) {
	case F_I64:
		return sizeof(int64_t);
	case F_I32:
		return sizeof(int32_t);
	case F_FLOAT:
		return sizeof(float);
	case F_STR:
		return sizeof(oxp_str);
	case F_MSG:
		return f->sub->size;
	default:
		return 0;
	}
}

static void store_scalar(const fdesc *f, void *slot, uint64_t v)
{
	switch (f->kind) {
	case F_I64: {
		int64_t x = (int64_t)v;
		memcpy(slot, &x, sizeof(x));
		break;
	}
	case F_I32: {
		int32_t x = (int32_t)(uint32_t)(v & 0xffffffffu);
		memcpy(slot, &x, sizeof(x));
		break;
	}
	case F_FLOAT: {
		uint32_t u = (uint32_t)v;
		float x;
		memcpy(&x, &u, sizeof(x));
		memcpy(slot, &x, sizeof(x));
		break;
	}
	default:
		break;
	}
}

/* Read one scalar element of f's kind. */
static oxp_code read_scalar(oxp_reader *r, const fdesc *f, uint64_t *v)
{
	if (f->kind == F_FLOAT) {
		uint32_t u;
		oxp_code rc = oxp__rd_fixed32(r, &u);
		*v = u;
		return rc;
	}
	return oxp__rd_varint(r, v);
}

static oxp_code decode_msg(dctx *c, const mdesc *md, const oxp_segment *segs, size_t nsegs,
                           void *dst);

/* ---------------------------------------------------------------------------------------
 * Pass 1: check and count
 */
typedef struct counts {
	size_t n[MAXF]; /* set at a field's first occurrence: read only for fields in seen */
	uint32_t seen; /* bit i: field i occurred (the loops after pass 1 visit only these) */
} counts;
_Static_assert(MAXF <= 32, "counts.seen has a bit per field");

static oxp_code pass1_field(dctx *c, const mdesc *md, int fi, unsigned wt, oxp_reader *r,
                            const uint8_t *start, counts *cn)
{
	const fdesc *f = &md->f[fi];
	unsigned swt = scalar_wt(f);
	oxp_code rc;
	bool packable = (f->rep || f->kind == F_DATA) && swt != OXP_WT_LEN;
	if (wt == OXP_WT_SGROUP || wt == OXP_WT_EGROUP)
		return fail(c, OXP_E_GROUP, start, f->name, -1,
		            "protobuf groups (wire type 3/4) are not supported (field %s)", f->name);
	if (!(cn->seen & (uint32_t)1 << fi)) { /* the count starts at its first occurrence */
		cn->seen |= (uint32_t)1 << fi;
		cn->n[fi] = 0;
	}

	if (wt != swt && !(packable && wt == OXP_WT_LEN))
		return fail(c, OXP_E_WIRETYPE, start, f->name, -1,
		            "field %s (%" PRIu32 ") of %s has wire type %s, expected %s", f->name,
		            f->num, md->name, wt_name(wt), wt_name(swt));

	if (wt == OXP_WT_LEN) {
		const uint8_t *p;
		size_t len;
		rc = oxp__rd_bytes(r, &p, &len);
		if (rc != OXP_OK)
			return fail(c, rc, start, f->name, -1, "%s in field %s", wire_msg(rc), f->name);
		if (swt == OXP_WT_LEN) {
			cn->n[fi]++;
			return OXP_OK;
		}
		/* packed scalars */
		size_t k = 0;
		if (swt == OXP_WT_VARINT) {
			rc = oxp__packed_varint_count(p, len, &k);
		} else {
			size_t w = swt == OXP_WT_I32 ? 4 : 8;
			rc = len % w ? OXP_E_PACKED : OXP_OK;
			k = len / w;
		}
		if (rc != OXP_OK)
			return fail(c, rc, start, f->name, -1, "%s in field %s", wire_msg(rc), f->name);
		cn->n[fi] += f->kind == F_DATA ? len : k;
		return OXP_OK;
	}
	/* a single scalar */
	const uint8_t *before = r->p;
	rc = oxp__rd_skip(r, wt);
	if (rc != OXP_OK)
		return fail(c, rc, start, f->name, -1, "%s in field %s", wire_msg(rc), f->name);
	cn->n[fi] += f->kind == F_DATA ? (size_t)(r->p - before) : 1;
	return OXP_OK;
}

static oxp_code pass1(dctx *c, const mdesc *md, const oxp_segment *segs, size_t nsegs,
                      counts *cn)
{
	for (size_t s = 0; s < nsegs; s++) {
		oxp_reader r = {segs[s].p, segs[s].len};
		while (r.left > 0) {
			const uint8_t *start = r.p;
			uint32_t num;
			unsigned wt;
			oxp_code rc = oxp__rd_tag(&r, &num, &wt);
			if (rc != OXP_OK)
				return fail(c, rc, start, NULL, -1, "%s in %s", wire_msg(rc), md->name);
			int fi = field_of(md, num);
			if (fi < 0) {
				rc = oxp__rd_skip(&r, wt);
				if (rc != OXP_OK) {
					char fname[32];
					snprintf(fname, sizeof(fname), "<field %" PRIu32 ">", num);
					return fail(c, rc, start, fname, -1, "%s in unknown field %" PRIu32
					            " of %s", wire_msg(rc), num, md->name);
				}
				continue;
			}
			rc = pass1_field(c, md, fi, wt, &r, start, cn);
			if (rc != OXP_OK)
				return rc;
		}
	}
	return OXP_OK;
}

/* ---------------------------------------------------------------------------------------
 * Pass 2: fill
 */
typedef struct fillstate {
	size_t next[MAXF];           /* next element index per field (fields in seen only) */
	oxp_segment *segs[MAXF];     /* singular sub-message occurrences */
} fillstate;

static oxp_code push(dctx *c, const char *name, int64_t index, const uint8_t *at)
{
	if (c->depth >= c->lim.max_depth || c->depth >= MAXPATH - 1)
		return fail(c, OXP_E_DEPTH, at, name, index,
		            "messages nested deeper than %" PRIu32, c->lim.max_depth);
	c->path[c->depth].name = name;
	c->path[c->depth].index = index;
	c->depth++;
	return OXP_OK;
}

static void pop(dctx *c)
{
	c->depth--;
}

static oxp_code decode_sub(dctx *c, const fdesc *f, int64_t index, const oxp_segment *segs,
                           size_t nsegs, void *dst)
{
	oxp_code rc = push(c, f->name, index, segs[0].p);
	if (rc != OXP_OK)
		return rc;
	rc = decode_msg(c, f->sub, segs, nsegs, dst);
	pop(c);
	return rc;
}

/* Bytes a singular field occupies in its struct. */
static size_t slot_size(const fdesc *f)
{
	switch (f->kind) {
	case F_I64:
		return sizeof(int64_t);
	case F_I32:
		return sizeof(int32_t);
	case F_FLOAT:
		return sizeof(float);
	case F_STR:
		return sizeof(oxp_str);
	case F_MSG:
		return sizeof(void *);
	default:
		return 0;
	}
}

/* Forget what an earlier member of a oneof wrote (protobuf clears it when another member
 * arrives); an inlined member wrote its own fields into dst. */
static void clear_member(const fdesc *f, void *dst)
{
	if (f->kind == F_INL) {
		for (size_t i = 0; i < f->sub->nf; i++)
			if (!f->sub->f[i].rep)
				memset(AT(dst, f->sub->f[i].off, char), 0, slot_size(&f->sub->f[i]));
	} else if (!f->rep) {
		memset(AT(dst, f->off, char), 0, slot_size(f));
	}
}

/* An empty string field of a compacted copy where a payload was cut: its view becomes the
 * payload's bytes in the file's mapping. */
static void uncut(const dctx *c, const uint8_t *p, oxp_str *v)
{
	uint64_t pos = (uint64_t)(p - c->base);
	size_t k = oxp__compact_cuts_before(c->cp, pos);
	if (k > 0 && c->cp->cuts[k - 1].at == pos) {
		v->p = (const char *)c->cp->file + c->cp->cuts[k - 1].off;
		v->len = (size_t)c->cp->cuts[k - 1].len;
	}
}

static oxp_code pass2(dctx *c, const mdesc *md, const oxp_segment *segs, size_t nsegs,
                      void *dst, fillstate *fs, mstate *st)
{
	for (size_t s = 0; s < nsegs; s++) {
		oxp_reader r = {segs[s].p, segs[s].len};
		while (r.left > 0) {
			uint32_t num;
			unsigned wt;
			oxp_code rc = oxp__rd_tag(&r, &num, &wt); /* checked in pass 1 */
			if (rc != OXP_OK)
				return fail(c, rc, r.p, NULL, -1, "%s", wire_msg(rc));
			int fi = field_of(md, num);
			if (fi < 0) {
				rc = oxp__rd_skip(&r, wt);
				if (rc != OXP_OK)
					return fail(c, rc, r.p, NULL, -1, "%s", wire_msg(rc));
				continue;
			}
			const fdesc *f = &md->f[fi];
			if (num < 64)
				st->present |= (uint64_t)1 << num;
			if (f->oneof) {
				int prev = st->oneof_last[f->oneof];
				if (prev >= 0 && prev != fi)
					clear_member(&md->f[prev], dst); /* a oneof holds one member */
				st->oneof_last[f->oneof] = (int8_t)fi;
			}

			if (f->kind == F_DATA) {
				const uint8_t *before = r.p;
				size_t len = 0;
				if (wt == OXP_WT_LEN) {
					const uint8_t *p;
					rc = oxp__rd_bytes(&r, &p, &len);
				} else {
					rc = oxp__rd_skip(&r, wt);
					len = (size_t)(r.p - before);
				}
				*AT(dst, f->off, size_t) += len;
				if (len > 0) /* an empty packed field holds no element: not present */
					*AT(dst, f->cnt, uint32_t) |= (uint32_t)1 << f->num;
				if (rc != OXP_OK)
					return fail(c, rc, before, f->name, -1, "%s", wire_msg(rc));
				continue;
			}

			if (f->kind == F_STR || f->kind == F_MSG || f->kind == F_INL) {
				const uint8_t *p;
				size_t len;
				rc = oxp__rd_bytes(&r, &p, &len);
				if (rc != OXP_OK)
					return fail(c, rc, r.p, f->name, -1, "%s", wire_msg(rc));
				if (f->kind == F_STR) {
					oxp_str v = {(const char *)p, len};
					if (len == 0 && c->cp != NULL)
						uncut(c, p, &v);
					if (f->rep)
						(*AT(dst, f->off, oxp_str *))[fs->next[fi]++] = v;
					else
						*AT(dst, f->off, oxp_str) = v;
				} else if (f->kind == F_INL) {
					oxp_segment seg = {p, len};
					rc = decode_sub(c, f, -1, &seg, 1, dst);
					if (rc != OXP_OK)
						return rc;
				} else if (f->rep) {
					size_t i = fs->next[fi]++;
					void *elem = *AT(dst, f->off, char *) + i * f->sub->size;
					oxp_segment seg = {p, len};
					rc = decode_sub(c, f, (int64_t)i, &seg, 1, elem);
					if (rc != OXP_OK)
						return rc;
				} else {
					oxp_segment *sl = fs->segs[fi];
					sl[fs->next[fi]].p = p;
					sl[fs->next[fi]].len = len;
					fs->next[fi]++;
				}
				continue;
			}

			/* scalars, packed or not */
			if (wt == OXP_WT_LEN) {
				const uint8_t *p;
				size_t len;
				rc = oxp__rd_bytes(&r, &p, &len);
				if (rc != OXP_OK)
					return fail(c, rc, r.p, f->name, -1, "%s", wire_msg(rc));
				oxp_reader pr = {p, len};
				char *arr = *AT(dst, f->off, char *);
				size_t es = elem_size(f);
				while (pr.left > 0) {
					uint64_t v;
					const uint8_t *at = pr.p;
					rc = read_scalar(&pr, f, &v);
					if (rc != OXP_OK)
						return fail(c, rc, at, f->name, -1, "%s", wire_msg(rc));
					store_scalar(f, arr + es * fs->next[fi]++, v);
				}
			} else {
				uint64_t v;
				const uint8_t *at = r.p;
				rc = read_scalar(&r, f, &v);
				if (rc != OXP_OK)
					return fail(c, rc, at, f->name, -1, "%s", wire_msg(rc));
				if (f->rep)
					store_scalar(f, *AT(dst, f->off, char *) + elem_size(f) * fs->next[fi]++,
					             v);
				else
					store_scalar(f, AT(dst, f->off, char), v);
			}
		}
	}
	return OXP_OK;
}

/* ---------------------------------------------------------------------------------------
 * One message
 */
static oxp_code decode_msg(dctx *c, const mdesc *md, const oxp_segment *segs, size_t nsegs,
                           void *dst)
{
	const uint8_t *at = nsegs ? segs[0].p : NULL;
	oxp_code rc;
	bool graph = md->graph;
	if (graph) {
		if (c->gdepth > c->lim.max_graph_depth)
			return fail(c, OXP_E_GRAPH_DEPTH, at, NULL, -1,
			            "subgraphs nested deeper than %" PRIu32, c->lim.max_graph_depth);
		c->gdepth++;
	}

	/* a field's count is set when it first occurs (pass1_field): only those are read */
	counts cn;
	cn.seen = 0;
	rc = pass1(c, md, segs, nsegs, &cn);
	if (rc != OXP_OK)
		goto out;

	/* arrays for the fields that occurred (pass 2 meets the same fields: fs.segs of the
	 * others is never read) */
	fillstate fs;
	for (uint32_t m = cn.seen; m != 0; m &= m - 1) {
		size_t i = (size_t)__builtin_ctz(m);
		const fdesc *f = &md->f[i];
		size_t n = cn.n[i];
		fs.next[i] = 0;
		fs.segs[i] = NULL;
		if (n == 0 || f->kind == F_DATA || f->kind == F_INL)
			continue;
		if (f->lim == L_NODES) {
			c->nnodes += n;
			if (c->nnodes > c->lim.max_nodes) {
				rc = fail(c, OXP_E_LIMIT, at, f->name, -1,
				          "more than %zu nodes in the model", c->lim.max_nodes);
				goto out;
			}
		}
		if (f->rep) {
			size_t lim = limit_of(c, f);
			if (n > lim) {
				rc = fail(c, OXP_E_LIMIT, at, f->name, -1,
				          "%zu elements in %s.%s, more than the limit of %zu", n, md->name,
				          f->name, lim);
				goto out;
			}
			void *arr = oxp__arena_array(c->arena, n, elem_size(f));
			if (arr == NULL) {
				rc = nomem(c, at);
				goto out;
			}
			*AT(dst, f->off, void *) = arr;
			*AT(dst, f->cnt, size_t) = n;
		} else if (f->kind == F_MSG) {
			fs.segs[i] = oxp__arena_array(c->arena, n, sizeof(oxp_segment));
			if (fs.segs[i] == NULL) {
				rc = nomem(c, at);
				goto out;
			}
		}
	}

	mstate st;
	memset(&st, 0, sizeof(st));
	memset(st.oneof_last, -1, sizeof(st.oneof_last));
	st.segs = segs;
	st.nsegs = nsegs;
	rc = pass2(c, md, segs, nsegs, dst, &fs, &st);
	if (rc != OXP_OK)
		goto out;

	/* singular sub-messages, each merged from all of its occurrences */
	for (uint32_t m = cn.seen; m != 0; m &= m - 1) {
		size_t i = (size_t)__builtin_ctz(m);
		const fdesc *f = &md->f[i];
		if (f->kind != F_MSG || f->rep || fs.next[i] == 0)
			continue;
		void *sub = oxp__arena_alloc(c->arena, f->sub->size);
		if (sub == NULL) {
			rc = nomem(c, at);
			goto out;
		}
		rc = decode_sub(c, f, -1, fs.segs[i], fs.next[i], sub);
		if (rc != OXP_OK)
			goto out;
		*AT(dst, f->off, void *) = sub;
	}

	if (md->post != NULL)
		rc = md->post(c, md, dst, &st);
out:
	if (graph)
		c->gdepth--;
	return rc;
}

/* ---------------------------------------------------------------------------------------
 * Post-processing: derived fields and checks that need the whole message.
 */
static bool has(const mstate *st, uint32_t num)
{
	return num < 64 && ((st->present >> num) & 1);
}

static uint32_t last_oneof(const mdesc *md, const mstate *st, int group)
{
	int fi = st->oneof_last[group];
	return fi >= 0 ? md->f[fi].num : 0;
}

static oxp_code post_tensor(dctx *c, const mdesc *md, void *msg, const mstate *st)
{
	(void)md;
	oxp_tensor *t = msg;
	if (t->data_location != 0 && t->data_location != 1)
		t->data_location = 0; /* unknown enum value: protobuf keeps it as an unknown field */
	t->has_segment = has(st, 3);
	t->has_raw_data = has(st, 9);
	for (size_t i = 0; i < t->ndims; i++) {
		if (t->dims[i] < 0)
			return fail(c, OXP_E_DIMS, st->segs[0].p, "dims", (int64_t)i,
			            "negative dimension %" PRId64 " in tensor dims", t->dims[i]);
	}
	uint64_t count;
	if (!oxp_dims_count(t->dims, t->ndims, &count))
		return fail(c, OXP_E_DIMS, st->segs[0].p, "dims", -1,
		            "tensor dims multiply to more than 2^63-1 elements");
	if (t->data_location == 1)
		t->storage = OXP_STORE_EXTERNAL;
	else if (t->has_raw_data)
		t->storage = OXP_STORE_RAW;
	else if (t->nstring_data > 0)
		t->storage = OXP_STORE_STRING_DATA;
	else if (t->typed_fields & (1u << 4))
		t->storage = OXP_STORE_FLOAT_DATA;
	else if (t->typed_fields & (1u << 5))
		t->storage = OXP_STORE_INT32_DATA;
	else if (t->typed_fields & (1u << 7))
		t->storage = OXP_STORE_INT64_DATA;
	else if (t->typed_fields & (1u << 10))
		t->storage = OXP_STORE_DOUBLE_DATA;
	else if (t->typed_fields & (1u << 11))
		t->storage = OXP_STORE_UINT64_DATA;
	else
		t->storage = OXP_STORE_NONE;
	t->segments = oxp__arena_array(c->arena, st->nsegs, sizeof(oxp_segment));
	if (t->segments == NULL)
		return nomem(c, st->segs[0].p);
	memcpy(t->segments, st->segs, st->nsegs * sizeof(oxp_segment));
	t->nsegments = st->nsegs;
	return OXP_OK;
}

static oxp_code post_dim(dctx *c, const mdesc *md, void *msg, const mstate *st)
{
	(void)c;
	oxp_dim *d = msg;
	uint32_t last = last_oneof(md, st, 1);
	d->kind = last == 1 ? OXP_DIM_VALUE : last == 2 ? OXP_DIM_PARAM : OXP_DIM_UNKNOWN;
	return OXP_OK;
}

static oxp_code post_simple_sharded(dctx *c, const mdesc *md, void *msg, const mstate *st)
{
	(void)c;
	oxp_simple_sharded_dim *d = msg;
	uint32_t last = last_oneof(md, st, 1);
	d->kind = last == 1 ? OXP_DIM_VALUE : last == 2 ? OXP_DIM_PARAM : OXP_DIM_UNKNOWN;
	return OXP_OK;
}

static oxp_code post_type(dctx *c, const mdesc *md, void *msg, const mstate *st)
{
	(void)c;
	oxp_type *t = msg;
	switch (last_oneof(md, st, 1)) {
	case 1:
		t->kind = OXP_TYPE_TENSOR;
		break;
	case 4:
		t->kind = OXP_TYPE_SEQUENCE;
		break;
	case 5:
		t->kind = OXP_TYPE_MAP;
		break;
	case 9:
		t->kind = OXP_TYPE_OPTIONAL;
		break;
	case 8:
		t->kind = OXP_TYPE_SPARSE_TENSOR;
		break;
	case 7:
		t->kind = OXP_TYPE_OPAQUE;
		break;
	default:
		t->kind = OXP_TYPE_NONE;
	}
	return OXP_OK;
}

static oxp_code post_attr(dctx *c, const mdesc *md, void *msg, const mstate *st)
{
	(void)c;
	(void)md;
	oxp_attr *a = msg;
	/* An enum value outside AttributeType is, for protobuf, an unknown field: as if the
	 * type were not given at all. */
	if (a->type < OXP_ATTR_UNDEFINED || a->type > OXP_ATTR_TYPE_PROTOS)
		a->type = OXP_ATTR_UNDEFINED;
	if (has(st, 20) && a->type != OXP_ATTR_UNDEFINED)
		return OXP_OK;
	/* IR version 1: no type field; infer it from the value present (a repeated field is
	 * present when it has elements, as protobuf sees it). */
	const struct {
		uint32_t num;
		int32_t type;
		size_t count; /* repeated fields: elements; SIZE_MAX for singular ones */
	} by_field[] = {
	    {2, OXP_ATTR_FLOAT, SIZE_MAX},
	    {3, OXP_ATTR_INT, SIZE_MAX},
	    {4, OXP_ATTR_STRING, SIZE_MAX},
	    {5, OXP_ATTR_TENSOR, SIZE_MAX},
	    {6, OXP_ATTR_GRAPH, SIZE_MAX},
	    {22, OXP_ATTR_SPARSE_TENSOR, SIZE_MAX},
	    {14, OXP_ATTR_TYPE_PROTO, SIZE_MAX},
	    {7, OXP_ATTR_FLOATS, a->nfloats},
	    {8, OXP_ATTR_INTS, a->nints},
	    {9, OXP_ATTR_STRINGS, a->nstrings},
	    {10, OXP_ATTR_TENSORS, a->ntensors},
	    {11, OXP_ATTR_GRAPHS, a->ngraphs},
	    {23, OXP_ATTR_SPARSE_TENSORS, a->nsparse_tensors},
	    {15, OXP_ATTR_TYPE_PROTOS, a->ntype_protos},
	};
	for (size_t i = 0; i < sizeof(by_field) / sizeof(by_field[0]); i++) {
		bool present = by_field[i].count == SIZE_MAX ? has(st, by_field[i].num)
		                                              : by_field[i].count > 0;
		if (present) {
			a->type = by_field[i].type;
			a->type_inferred = true;
			return OXP_OK;
		}
	}
	return OXP_OK;
}

/* ---------------------------------------------------------------------------------------
 * The tables.  Field numbers are onnx.proto's (docs/onnx-wire.md lists them).
 */
#define OFF(T, m) ((uint16_t)offsetof(T, m))
#define S(T, num, m, nm) {num, F_STR, 0, 0, 0, 0, OFF(T, m), 0, NULL, nm}
#define RS(T, num, m, nm) {num, F_STR, 1, 0, 0, L_REPEATED, OFF(T, m), OFF(T, n##m), NULL, nm}
#define I64(T, num, m, nm) {num, F_I64, 0, 0, 0, 0, OFF(T, m), 0, NULL, nm}
#define RI64(T, num, m, nm) {num, F_I64, 1, 0, 0, L_REPEATED, OFF(T, m), OFF(T, n##m), NULL, nm}
#define I32(T, num, m, nm) {num, F_I32, 0, 0, 0, 0, OFF(T, m), 0, NULL, nm}
#define MSG(T, num, m, sub, nm) {num, F_MSG, 0, 0, 0, 0, OFF(T, m), 0, &sub, nm}
#define RMSG(T, num, m, sub, nm) \
	{num, F_MSG, 1, 0, 0, L_REPEATED, OFF(T, m), OFF(T, n##m), &sub, nm}
#define INL(num, sub, oneof, nm) {num, F_INL, 0, oneof, 0, 0, 0, 0, &sub, nm}
/* (the char array's size is negative, a compile error, for a table of more than MAXF
 * fields: per-message state has MAXF slots and a 32-bit mask) */
#define MD(name, T, fields, post, graph) \
	{name, sizeof(T), fields, \
	 sizeof(fields) / sizeof(fields[0]) + \
	     0 * sizeof(char[sizeof(fields) / sizeof(fields[0]) <= MAXF ? 1 : -1]), \
	 post, graph, (uint8_t[NUMS]){0}}

static const mdesc md_entry, md_opset, md_tensor, md_sparse, md_dim, md_shape, md_type,
    md_type_tensor, md_type_seq, md_type_map, md_type_opt, md_type_opaque, md_value_info,
    md_attr, md_node, md_graph, md_training, md_function, md_annotation, md_segment,
    md_device_config, md_node_device_config, md_sharding_spec, md_int_list, md_sharded_dim,
    md_simple_sharded;

static const fdesc f_entry[] = {
    S(oxp_entry, 1, key, "key"),
    S(oxp_entry, 2, value, "value"),
};
static const mdesc md_entry = MD("StringStringEntryProto", oxp_entry, f_entry, NULL, false);

static const fdesc f_opset[] = {
    S(oxp_opset, 1, domain, "domain"),
    I64(oxp_opset, 2, version, "version"),
};
static const mdesc md_opset = MD("OperatorSetIdProto", oxp_opset, f_opset, NULL, false);

static const fdesc f_segment[] = {
    I64(oxp_tensor, 1, segment_begin, "begin"),
    I64(oxp_tensor, 2, segment_end, "end"),
};
static const mdesc md_segment = MD("TensorProto.Segment", oxp_tensor, f_segment, NULL, false);

#define DATA(num, wt, nm) \
	{num, F_DATA, 1, 0, wt, 0, OFF(oxp_tensor, typed_bytes), OFF(oxp_tensor, typed_fields), \
	 NULL, nm}
static const fdesc f_tensor[] = {
    RI64(oxp_tensor, 1, dims, "dims"),
    I32(oxp_tensor, 2, data_type, "data_type"),
    INL(3, md_segment, 0, "segment"),
    DATA(4, OXP_WT_I32, "float_data"),
    DATA(5, OXP_WT_VARINT, "int32_data"),
    RS(oxp_tensor, 6, string_data, "string_data"),
    DATA(7, OXP_WT_VARINT, "int64_data"),
    S(oxp_tensor, 8, name, "name"),
    S(oxp_tensor, 9, raw_data, "raw_data"),
    DATA(10, OXP_WT_I64, "double_data"),
    DATA(11, OXP_WT_VARINT, "uint64_data"),
    S(oxp_tensor, 12, doc_string, "doc_string"),
    RMSG(oxp_tensor, 13, external_data, md_entry, "external_data"),
    I32(oxp_tensor, 14, data_location, "data_location"),
    RMSG(oxp_tensor, 16, metadata_props, md_entry, "metadata_props"),
};
static const mdesc md_tensor = MD("TensorProto", oxp_tensor, f_tensor, post_tensor, false);

static const fdesc f_sparse[] = {
    MSG(oxp_sparse_tensor, 1, values, md_tensor, "values"),
    MSG(oxp_sparse_tensor, 2, indices, md_tensor, "indices"),
    RI64(oxp_sparse_tensor, 3, dims, "dims"),
};
static const mdesc md_sparse = MD("SparseTensorProto", oxp_sparse_tensor, f_sparse, NULL, false);

static const fdesc f_dim[] = {
    {1, F_I64, 0, 1, 0, 0, OFF(oxp_dim, value), 0, NULL, "dim_value"},
    {2, F_STR, 0, 1, 0, 0, OFF(oxp_dim, param), 0, NULL, "dim_param"},
    S(oxp_dim, 3, denotation, "denotation"),
};
static const mdesc md_dim = MD("TensorShapeProto.Dimension", oxp_dim, f_dim, post_dim, false);

static const fdesc f_shape[] = {
    RMSG(oxp_shape, 1, dims, md_dim, "dim"),
};
static const mdesc md_shape = MD("TensorShapeProto", oxp_shape, f_shape, NULL, false);

/* TypeProto and its oneof members, flattened into oxp_type */
static const fdesc f_type_tensor[] = {
    I32(oxp_type, 1, elem_type, "elem_type"),
    MSG(oxp_type, 2, shape, md_shape, "shape"),
};
static const mdesc md_type_tensor = MD("TypeProto.Tensor", oxp_type, f_type_tensor, NULL, false);
static const fdesc f_type_seq[] = {
    MSG(oxp_type, 1, elem, md_type, "elem_type"),
};
static const mdesc md_type_seq = MD("TypeProto.Sequence", oxp_type, f_type_seq, NULL, false);
static const fdesc f_type_map[] = {
    I32(oxp_type, 1, key_type, "key_type"),
    MSG(oxp_type, 2, elem, md_type, "value_type"),
};
static const mdesc md_type_map = MD("TypeProto.Map", oxp_type, f_type_map, NULL, false);
static const fdesc f_type_opt[] = {
    MSG(oxp_type, 1, elem, md_type, "elem_type"),
};
static const mdesc md_type_opt = MD("TypeProto.Optional", oxp_type, f_type_opt, NULL, false);
static const fdesc f_type_opaque[] = {
    S(oxp_type, 1, opaque_domain, "domain"),
    S(oxp_type, 2, opaque_name, "name"),
};
static const mdesc md_type_opaque =
    MD("TypeProto.Opaque", oxp_type, f_type_opaque, NULL, false);
static const fdesc f_type[] = {
    INL(1, md_type_tensor, 1, "tensor_type"),
    INL(4, md_type_seq, 1, "sequence_type"),
    INL(5, md_type_map, 1, "map_type"),
    S(oxp_type, 6, denotation, "denotation"),
    INL(7, md_type_opaque, 1, "opaque_type"),
    INL(8, md_type_tensor, 1, "sparse_tensor_type"),
    INL(9, md_type_opt, 1, "optional_type"),
};
static const mdesc md_type = MD("TypeProto", oxp_type, f_type, post_type, false);

static const fdesc f_value_info[] = {
    S(oxp_value_info, 1, name, "name"),
    MSG(oxp_value_info, 2, type, md_type, "type"),
    S(oxp_value_info, 3, doc_string, "doc_string"),
    RMSG(oxp_value_info, 4, metadata_props, md_entry, "metadata_props"),
};
static const mdesc md_value_info =
    MD("ValueInfoProto", oxp_value_info, f_value_info, NULL, false);

static const fdesc f_attr[] = {
    S(oxp_attr, 1, name, "name"),
    {2, F_FLOAT, 0, 0, 0, 0, OFF(oxp_attr, f), 0, NULL, "f"},
    I64(oxp_attr, 3, i, "i"),
    S(oxp_attr, 4, s, "s"),
    MSG(oxp_attr, 5, t, md_tensor, "t"),
    MSG(oxp_attr, 6, g, md_graph, "g"),
    {7, F_FLOAT, 1, 0, 0, L_REPEATED, OFF(oxp_attr, floats), OFF(oxp_attr, nfloats), NULL,
     "floats"},
    RI64(oxp_attr, 8, ints, "ints"),
    RS(oxp_attr, 9, strings, "strings"),
    RMSG(oxp_attr, 10, tensors, md_tensor, "tensors"),
    RMSG(oxp_attr, 11, graphs, md_graph, "graphs"),
    S(oxp_attr, 13, doc_string, "doc_string"),
    MSG(oxp_attr, 14, tp, md_type, "tp"),
    RMSG(oxp_attr, 15, type_protos, md_type, "type_protos"),
    I32(oxp_attr, 20, type, "type"),
    S(oxp_attr, 21, ref_attr_name, "ref_attr_name"),
    MSG(oxp_attr, 22, sparse_tensor, md_sparse, "sparse_tensor"),
    RMSG(oxp_attr, 23, sparse_tensors, md_sparse, "sparse_tensors"),
};
static const mdesc md_attr = MD("AttributeProto", oxp_attr, f_attr, post_attr, false);

static const fdesc f_int_list[] = {
    I64(oxp_int_list_entry, 1, key, "key"),
    RI64(oxp_int_list_entry, 2, value, "value"),
};
static const mdesc md_int_list =
    MD("IntIntListEntryProto", oxp_int_list_entry, f_int_list, NULL, false);

static const fdesc f_simple_sharded[] = {
    {1, F_I64, 0, 1, 0, 0, OFF(oxp_simple_sharded_dim, dim_value), 0, NULL, "dim_value"},
    {2, F_STR, 0, 1, 0, 0, OFF(oxp_simple_sharded_dim, dim_param), 0, NULL, "dim_param"},
    I64(oxp_simple_sharded_dim, 3, num_shards, "num_shards"),
};
static const mdesc md_simple_sharded = MD("SimpleShardedDimProto", oxp_simple_sharded_dim,
                                          f_simple_sharded, post_simple_sharded, false);

static const fdesc f_sharded_dim[] = {
    I64(oxp_sharded_dim, 1, axis, "axis"),
    RMSG(oxp_sharded_dim, 2, simple_sharding, md_simple_sharded, "simple_sharding"),
};
static const mdesc md_sharded_dim =
    MD("ShardedDimProto", oxp_sharded_dim, f_sharded_dim, NULL, false);

static const fdesc f_sharding_spec[] = {
    S(oxp_sharding_spec, 1, tensor_name, "tensor_name"),
    RI64(oxp_sharding_spec, 2, device, "device"),
    RMSG(oxp_sharding_spec, 3, index_to_device_group_map, md_int_list,
         "index_to_device_group_map"),
    RMSG(oxp_sharding_spec, 4, sharded_dim, md_sharded_dim, "sharded_dim"),
};
static const mdesc md_sharding_spec =
    MD("ShardingSpecProto", oxp_sharding_spec, f_sharding_spec, NULL, false);

static const fdesc f_node_device_config[] = {
    S(oxp_node_device_config, 1, configuration_id, "configuration_id"),
    RMSG(oxp_node_device_config, 2, sharding_spec, md_sharding_spec, "sharding_spec"),
    I32(oxp_node_device_config, 3, pipeline_stage, "pipeline_stage"),
};
static const mdesc md_node_device_config = MD("NodeDeviceConfigurationProto",
                                              oxp_node_device_config, f_node_device_config,
                                              NULL, false);

static oxp_code post_node(dctx *c, const mdesc *md, void *msg, const mstate *st)
{
	(void)md;
	oxp_node *n = msg;
	n->offset = offset_of(c, st->segs[0].p);
	return OXP_OK;
}

static const fdesc f_node[] = {
    {1, F_STR, 1, 0, 0, L_NODE_IO, OFF(oxp_node, inputs), OFF(oxp_node, ninputs), NULL, "input"},
    {2, F_STR, 1, 0, 0, L_NODE_IO, OFF(oxp_node, outputs), OFF(oxp_node, noutputs), NULL,
     "output"},
    S(oxp_node, 3, name, "name"),
    S(oxp_node, 4, op_type, "op_type"),
    RMSG(oxp_node, 5, attrs, md_attr, "attribute"),
    S(oxp_node, 6, doc_string, "doc_string"),
    S(oxp_node, 7, domain, "domain"),
    S(oxp_node, 8, overload, "overload"),
    RMSG(oxp_node, 9, metadata_props, md_entry, "metadata_props"),
    RMSG(oxp_node, 10, device_configurations, md_node_device_config, "device_configurations"),
};
static const mdesc md_node = MD("NodeProto", oxp_node, f_node, post_node, false);

static const fdesc f_annotation[] = {
    S(oxp_tensor_annotation, 1, tensor_name, "tensor_name"),
    RMSG(oxp_tensor_annotation, 2, quant_parameter_tensor_names, md_entry,
         "quant_parameter_tensor_names"),
};
static const mdesc md_annotation =
    MD("TensorAnnotation", oxp_tensor_annotation, f_annotation, NULL, false);

static const fdesc f_graph[] = {
    {1, F_MSG, 1, 0, 0, L_NODES, OFF(oxp_graph, nodes), OFF(oxp_graph, nnodes), &md_node,
     "node"},
    S(oxp_graph, 2, name, "name"),
    RMSG(oxp_graph, 5, initializers, md_tensor, "initializer"),
    S(oxp_graph, 10, doc_string, "doc_string"),
    RMSG(oxp_graph, 11, inputs, md_value_info, "input"),
    RMSG(oxp_graph, 12, outputs, md_value_info, "output"),
    RMSG(oxp_graph, 13, value_info, md_value_info, "value_info"),
    RMSG(oxp_graph, 14, quantization_annotation, md_annotation, "quantization_annotation"),
    RMSG(oxp_graph, 15, sparse_initializers, md_sparse, "sparse_initializer"),
    RMSG(oxp_graph, 16, metadata_props, md_entry, "metadata_props"),
};
static const mdesc md_graph = MD("GraphProto", oxp_graph, f_graph, NULL, true);

static const fdesc f_training[] = {
    MSG(oxp_training_info, 1, initialization, md_graph, "initialization"),
    MSG(oxp_training_info, 2, algorithm, md_graph, "algorithm"),
    RMSG(oxp_training_info, 3, initialization_binding, md_entry, "initialization_binding"),
    RMSG(oxp_training_info, 4, update_binding, md_entry, "update_binding"),
};
static const mdesc md_training =
    MD("TrainingInfoProto", oxp_training_info, f_training, NULL, false);

static const fdesc f_function[] = {
    S(oxp_function, 1, name, "name"),
    RS(oxp_function, 4, inputs, "input"),
    RS(oxp_function, 5, outputs, "output"),
    RS(oxp_function, 6, attribute, "attribute"),
    {7, F_MSG, 1, 0, 0, L_NODES, OFF(oxp_function, nodes), OFF(oxp_function, nnodes), &md_node,
     "node"},
    S(oxp_function, 8, doc_string, "doc_string"),
    RMSG(oxp_function, 9, opset_import, md_opset, "opset_import"),
    S(oxp_function, 10, domain, "domain"),
    RMSG(oxp_function, 11, attribute_proto, md_attr, "attribute_proto"),
    RMSG(oxp_function, 12, value_info, md_value_info, "value_info"),
    S(oxp_function, 13, overload, "overload"),
    RMSG(oxp_function, 14, metadata_props, md_entry, "metadata_props"),
};
static const mdesc md_function = MD("FunctionProto", oxp_function, f_function, NULL, false);

static const fdesc f_device_config[] = {
    S(oxp_device_config, 1, name, "name"),
    I32(oxp_device_config, 2, num_devices, "num_devices"),
    RS(oxp_device_config, 3, device, "device"),
};
static const mdesc md_device_config =
    MD("DeviceConfigurationProto", oxp_device_config, f_device_config, NULL, false);

static const fdesc f_model[] = {
    I64(oxp_model_proto, 1, ir_version, "ir_version"),
    S(oxp_model_proto, 2, producer_name, "producer_name"),
    S(oxp_model_proto, 3, producer_version, "producer_version"),
    S(oxp_model_proto, 4, domain, "domain"),
    I64(oxp_model_proto, 5, model_version, "model_version"),
    S(oxp_model_proto, 6, doc_string, "doc_string"),
    MSG(oxp_model_proto, 7, graph, md_graph, "graph"),
    RMSG(oxp_model_proto, 8, opset_import, md_opset, "opset_import"),
    RMSG(oxp_model_proto, 14, metadata_props, md_entry, "metadata_props"),
    RMSG(oxp_model_proto, 20, training_info, md_training, "training_info"),
    RMSG(oxp_model_proto, 25, functions, md_function, "functions"),
    RMSG(oxp_model_proto, 26, configuration, md_device_config, "configuration"),
};
static const mdesc md_model = MD("ModelProto", oxp_model_proto, f_model, NULL, false);

/* ---------------------------------------------------------------------------------------
 * Entry points (declared in internal.h, used by model.c)
 */
/* Fills every table's by_num, once per process, walking the tables reachable from each
 * entry point's. */
#define MAXMD 64 /* tables in this file: 27 */
static void index_md(const mdesc *md, const mdesc **seen, size_t *nseen)
{
	for (size_t i = 0; i < *nseen; i++)
		if (seen[i] == md)
			return;
	if (*nseen == MAXMD)
		abort(); /* more tables than MAXMD: raise it (every test would stop here) */
	seen[(*nseen)++] = md;
	for (size_t i = 0; i < md->nf; i++)
		if (md->f[i].num < NUMS && md->by_num[md->f[i].num] == 0)
			md->by_num[md->f[i].num] = (uint8_t)(i + 1);
	for (size_t i = 0; i < md->nf; i++)
		if (md->f[i].sub != NULL)
			index_md(md->f[i].sub, seen, nseen);
}

static void index_tables(void)
{
	const mdesc *seen[MAXMD];
	size_t nseen = 0;
	index_md(&md_model, seen, &nseen);
	index_md(&md_tensor, seen, &nseen); /* the other entry point (reached from the model) */
}

static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static oxp_code decode_top(const mdesc *md, oxp_arena *arena, const oxp_limits *lim,
                           const uint8_t *buf, size_t len, const oxp__compact *cp, void *dst,
                           oxp_error *err)
{
	static const dctx zero;
	pthread_once(&tables_once, index_tables);
	dctx *c = malloc(sizeof(*c)); /* the path stack is too big for small thread stacks */
	if (c == NULL)
		return oxp__set_error(err, OXP_E_NOMEM, 0, "", "out of memory");
	*c = zero;
	c->base = buf;
	c->size = len;
	c->arena = arena;
	c->lim = *lim;
	if (c->lim.max_depth > MAXPATH - 2)
		c->lim.max_depth = MAXPATH - 2;
	c->err = err;
	c->cp = cp;
	oxp_segment seg = {buf, len};
	oxp_code rc = decode_msg(c, md, &seg, 1, dst);
	free(c);
	return rc;
}

oxp_code oxp__decode_model(oxp_arena *arena, const oxp_limits *lim, const uint8_t *buf,
                           size_t len, oxp_model_proto *dst, oxp_error *err)
{
	return decode_top(&md_model, arena, lim, buf, len, NULL, dst, err);
}

oxp_code oxp__decode_tensor(oxp_arena *arena, const oxp_limits *lim, const uint8_t *buf,
                            size_t len, oxp_tensor *dst, oxp_error *err)
{
	return decode_top(&md_tensor, arena, lim, buf, len, NULL, dst, err);
}

oxp_code oxp__decode_model_compact(oxp_arena *arena, const oxp_limits *lim,
                                   const oxp__compact *c, oxp_model_proto *dst, oxp_error *err)
{
	return decode_top(&md_model, arena, lim, c->buf, c->len, c, dst, err);
}

/* ---------------------------------------------------------------------------------------
 * Structure scan for oxp_model_open (model.c): find the big byte payloads (raw_data,
 * typed data, large strings) without mapping the file, reading it through a small window.
 * Every length-delimited field that is not a known sub-message and is at least `min`
 * bytes long is reported as a hole (sub-messages shorter than `min` are stepped over: they
 * cannot hold one).  Best effort: returns false on anything odd (the
 * parser proper reports errors), or when more than max_holes would be needed.
 *
 * With `map` (a private writable mapping of the file) the window is the mapping itself:
 * each window's pages are populated for writing first (MADV_POPULATE_WRITE breaks
 * copy-on-write: they become private copies, made in the kernel, no fault per page), and
 * so are the small fields stepped over, so that after a scan every page holding
 * structure is a private copy, and the insides of holes were never touched.  A window
 * may reach into the start of a payload (at most SCAN_WINDOW); holes dropped when there
 * are too many stay untouched, like the rest.  At most SCAN_POPULATE_MAX bytes are made
 * private: past that the scan gives up (false).
 */
#define SCAN_WINDOW (64u * 1024u)
#define SCAN_POPULATE_MAX ((uint64_t)32 << 20)

typedef struct scanwin {
	int fd;
	uint64_t size;
	uint8_t *buf; /* the read buffer (pread), or NULL when reading the mapping */
	uint8_t *map; /* the mapping read through, or NULL */
	const uint8_t *at; /* the window's bytes */
	uint64_t base;
	size_t len;
	size_t want; /* next read size: one page after a jump, doubling while reads continue */
	uint64_t ready; /* with map: pages below this are populated as far as wanted */
	uint64_t populated; /* with map: bytes populated so far (at most SCAN_POPULATE_MAX) */
	uint64_t ahead; /* with map: populated past a request that continues the run (below) */
	oxp__compact *cp; /* compacting (oxp__scan_compact): the window is cp->buf's last run */
	uint64_t rb;      /* with cp: where the last run starts in cp->buf ... */
	uint64_t ready_b; /* with cp: cp->buf populated below this */
	uint64_t removed; /* with cp: payload bytes cut so far */
	size_t maxcuts;
} scanwin;

/* Compacting: the file's bytes [w->base, w->base + w->len) are cp->buf's last run, from
 * w->rb.  Appends the file's bytes up to `upto` (clipped to the file) with pread(),
 * populating the buffer ahead in bulk first (one call for many pages is several times
 * cheaper a page than the faults of pread's copy). */
#define CP_POPULATE ((uint64_t)256 << 10)
static bool cp_grow(scanwin *w, uint64_t upto)
{
	oxp__compact *c = w->cp;
	uint64_t fend = w->base + w->len;
	if (upto > w->size)
		upto = w->size;
	if (upto <= fend)
		return true;
	uint64_t n = upto - fend;
	if (n > c->cap - c->len)
		return false; /* more structure than the buffer: not worth compacting */
	if (c->len + n > w->ready_b) {
		uint64_t to = c->len + n + CP_POPULATE;
		to = to > c->cap ? c->cap : (to + OXP__PAGE - 1) & ~(OXP__PAGE - 1);
#ifdef MADV_POPULATE_WRITE
		(void)madvise(c->buf + w->ready_b, (size_t)(to - w->ready_b), MADV_POPULATE_WRITE);
#endif
		w->ready_b = to;
	}
	if (!oxp__read_at(w->fd, c->buf + c->len, (size_t)n, fend))
		return false;
	c->len += (size_t)n;
	w->len += (size_t)n;
	return true;
}

/* v as a varint of exactly `width` bytes (v fits: it is at most the value written there
 * before); protobuf reads padded varints as their value. */
static void put_padded(uint8_t *p, size_t width, uint64_t v)
{
	for (size_t i = 0; i + 1 < width; i++, v >>= 7)
		p[i] = (uint8_t)((v & 0x7f) | 0x80);
	p[width - 1] = (uint8_t)(v & 0x7f);
}

/* Cut the payload [off, off + v) of a field whose length varint is [lp, off): the varint
 * becomes a padded 0, the buffer ends where the payload started, and the next run starts
 * at the file's off + v. */
static bool cp_cut(scanwin *w, uint64_t lp, uint64_t off, uint64_t v)
{
	oxp__compact *c = w->cp;
	if (lp < w->base || off > w->base + w->len || c->ncuts == w->maxcuts)
		return false;
	put_padded(c->buf + w->rb + (lp - w->base), (size_t)(off - lp), 0);
	uint64_t at = w->rb + (off - w->base);
	c->len = (size_t)at;
	c->cuts[c->ncuts++] = (oxp__cut){at, off, v};
	w->rb = at;
	w->at = c->buf + at;
	w->base = off + v;
	w->len = 0;
	w->removed += v;
	return true;
}

/* Populate the map's pages holding [from, to) that are not yet; false when refused. */
static bool win_populate(scanwin *w, uint64_t from, uint64_t to)
{
	bool run = from <= w->ready; /* continues the populated run */
	if (from < w->ready)
		from = w->ready;
	from &= ~(OXP__PAGE - 1);
	to = (to + OXP__PAGE - 1) & ~(OXP__PAGE - 1);
	if (to <= from)
		return true;
	/* In a run of structure (a graph's nodes: many small messages stepped over one after
	 * the other) each request would be a call for a page or two; populate ahead instead,
	 * doubling up to SCAN_WINDOW while the run goes on.  Here one call of many pages costs
	 * ~0.8 us a page, a call per page 3-6 us (decision 78).  When the run ends at a
	 * payload, at most SCAN_WINDOW of it becomes private, as a window may already. */
	if (run) {
		w->ahead = w->ahead == 0 ? OXP__PAGE : w->ahead * 2 > SCAN_WINDOW ? SCAN_WINDOW
		                                                                 : w->ahead * 2;
		uint64_t last = (w->size + OXP__PAGE - 1) & ~(OXP__PAGE - 1);
		to = last - to < w->ahead ? last : to + w->ahead;
	} else {
		w->ahead = 0;
	}
	/* a budget on private copies: the scan runs before the parser has judged anything,
	 * and a file that scans as endless small fields would otherwise become private
	 * memory all of it (the parse then reads the rest as file pages) */
	if (to - from > SCAN_POPULATE_MAX - w->populated)
		return false;
	w->populated += to - from;
#ifdef MADV_POPULATE_WRITE
	if (madvise(w->map + from, (size_t)(to - from), MADV_POPULATE_WRITE) != 0)
		return false;
	w->ready = to;
	return true;
#else
	return false;
#endif
}

static bool win_byte(scanwin *w, uint64_t off, uint8_t *out)
{
	if (off >= w->size)
		return false;
	if (off < w->base || off >= w->base + w->len) {
		bool follows = off == w->base + w->len && w->len > 0;
		w->want = follows ? (w->want * 2 > SCAN_WINDOW ? SCAN_WINDOW : w->want * 2) : 4096;
	}
	if (w->cp != NULL && (off < w->base || off >= w->base + w->len)) {
		/* the scan only goes forward: what it skipped is structure, read with the rest */
		if (off < w->base || !cp_grow(w, off + w->want) || off >= w->base + w->len)
			return false;
	} else if (off < w->base || off >= w->base + w->len) {
		uint64_t base = off & ~(uint64_t)4095;
		size_t want = w->want;
		if (off - base >= want)
			want = SCAN_WINDOW;
		size_t n;
		if (w->map != NULL) {
			n = w->size - base < want ? (size_t)(w->size - base) : want;
			if (!win_populate(w, base, base + n))
				return false;
			w->at = w->map + base;
		} else {
			ssize_t r = pread(w->fd, w->buf, want, (off_t)base);
			if (r <= 0)
				return false;
			n = (size_t)r;
			w->at = w->buf;
		}
		w->base = base;
		w->len = n;
		if (off >= base + n)
			return false;
	}
	*out = w->at[off - w->base];
	return true;
}

static bool win_varint(scanwin *w, uint64_t *off, uint64_t end, uint64_t *out)
{
	/* the common case: the whole varint is in the window and the message, read by the
	 * parser's own reader (truncated there: it may go on in the next window) */
	if (*off >= w->base && *off < w->base + w->len) {
		uint64_t room = w->base + w->len - *off;
		if (end - *off < room)
			room = end - *off;
		oxp_reader r = {w->at + (*off - w->base), (size_t)room};
		oxp_code rc = oxp__rd_varint(&r, out);
		if (rc == OXP_OK) {
			*off += room - r.left;
			return true;
		}
		if (rc != OXP_E_TRUNCATED)
			return false;
	}
	uint64_t v = 0;
	for (unsigned i = 0; i < 10; i++) {
		uint8_t b;
		if (*off >= end || !win_byte(w, *off, &b))
			return false;
		(*off)++;
		v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			*out = v;
			return true;
		}
	}
	return false;
}

typedef struct holes {
	oxp__hole *h;
	size_t n, max;
	uint64_t min;
} holes;

static bool scan_msg(scanwin *w, const mdesc *md, uint64_t off, uint64_t end, unsigned depth,
                     holes *hs)
{
	if (depth > 100)
		return false;
	while (off < end) {
		uint64_t tag, v;
		if (!win_varint(w, &off, end, &tag))
			return false;
		unsigned wt = (unsigned)(tag & 7);
		uint32_t num = (uint32_t)(tag >> 3);
		if (num == 0 || tag >> 32 != 0)
			return false; /* not a field: the parser refuses it (bad_tag) */
		switch (wt) {
		case OXP_WT_VARINT:
			if (!win_varint(w, &off, end, &v))
				return false;
			break;
		case OXP_WT_I64:
			off += 8;
			break;
		case OXP_WT_I32:
			off += 4;
			break;
		case OXP_WT_LEN: {
			uint64_t lp = off; /* where the length starts */
			if (!win_varint(w, &off, end, &v) || v > end - off)
				return false;
			int fi = field_of(md, num);
			const fdesc *f = fi >= 0 ? &md->f[fi] : NULL;
			/* a sub-message shorter than a hole cannot hold one: stepped over */
			if (f != NULL && (f->kind == F_MSG || f->kind == F_INL) && v >= hs->min) {
				/* compacting: its length is written again once its cuts are known (the
				 * varint is in the current run: it was just read) */
				if (w->cp != NULL && lp < w->base)
					return false;
				uint64_t lb = w->rb + (lp - w->base), removed = w->removed;
				if (!scan_msg(w, f->sub, off, off + v, depth + 1, hs))
					return false;
				if (w->cp != NULL && w->removed != removed)
					put_padded(w->cp->buf + lb, (size_t)(off - lp), v - (w->removed - removed));
			} else if (w->cp != NULL) {
				/* compacting: large string payloads are cut (the decoder puts their views
				 * back); anything else is structure, read on with the rest */
				if (v >= hs->min && f != NULL && f->kind == F_STR && !cp_cut(w, lp, off, v))
					return false;
			} else if (v >= hs->min) {
				if (hs->n == hs->max) {
					/* too many: keep only the bigger ones from here on */
					hs->min *= 4;
					size_t k = 0;
					for (size_t i = 0; i < hs->n; i++)
						if (hs->h[i].len >= hs->min)
							hs->h[k++] = hs->h[i];
					hs->n = k;
					if (hs->n == hs->max)
						return false;
				}
				if (v < hs->min) {
					if (w->map != NULL && !win_populate(w, off, off + v))
						return false;
					off += v;
					break;
				}
				hs->h[hs->n].off = off;
				hs->h[hs->n].len = v;
				hs->n++;
			} else if (w->map != NULL && !win_populate(w, off, off + v)) {
				return false; /* a small payload is structure */
			}
			off += v;
			break;
		}
		default:
			return false;
		}
		if (off > end)
			return false;
	}
	return true;
}

/* The compacted copy is at most this big (a reservation: pages are only used as the copy
 * grows); a model with more structure is opened in place. */
#define CP_CAP ((uint64_t)32 << 20)

void oxp__compact_release(oxp__compact *c)
{
	if (c->buf != NULL)
		munmap(c->buf, c->cap);
	free(c->cuts);
	c->buf = NULL;
	c->cuts = NULL;
	c->len = c->cap = c->ncuts = 0;
}

bool oxp__scan_compact(int fd, uint64_t size, uint64_t min, size_t max, oxp__compact *c)
{
	memset(c, 0, sizeof(*c));
	pthread_once(&tables_once, index_tables);
	size_t cap = (size_t)(size < CP_CAP ? size : CP_CAP);
	cap = (size_t)((cap + OXP__PAGE - 1) & ~(OXP__PAGE - 1));
	void *buf = mmap(NULL, cap, PROT_READ | PROT_WRITE,
	                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (buf == MAP_FAILED)
		return false;
	(void)madvise(buf, cap, MADV_HUGEPAGE);
	c->buf = buf;
	c->cap = cap;
	c->cuts = malloc(max * sizeof(*c->cuts));
	scanwin w = {.fd = fd, .size = size, .want = 4096, .cp = c, .at = c->buf, .maxcuts = max};
	holes hs = {NULL, 0, 0, min};
	bool ok = c->cuts != NULL && scan_msg(&w, &md_model, 0, size, 0, &hs) &&
	          cp_grow(&w, size) && c->ncuts > 0;
	if (ok)
		ok = mprotect(c->buf, cap, PROT_READ) == 0; /* views only, from here on */
	if (ok) { /* the model keeps the cuts: only those found */
		oxp__cut *fit = realloc(c->cuts, c->ncuts * sizeof(*c->cuts));
		if (fit != NULL)
			c->cuts = fit;
	}
	if (!ok)
		oxp__compact_release(c);
	return ok;
}

size_t oxp__compact_cuts_before(const oxp__compact *c, uint64_t pos)
{
	size_t lo = 0, hi = c->ncuts;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->cuts[mid].at <= pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

uint64_t oxp__compact_offset(const oxp__compact *c, uint64_t pos)
{
	/* the last cut at or before pos: the buffer goes on there with the file after it */
	size_t n = oxp__compact_cuts_before(c, pos);
	if (n == 0)
		return pos;
	const oxp__cut *k = &c->cuts[n - 1];
	return k->off + k->len + (pos - k->at);
}

bool oxp__scan_holes(int fd, uint64_t size, uint64_t min, uint8_t *map, oxp__hole *out,
                     size_t max, size_t *n)
{
	scanwin w = {.fd = fd, .size = size, .map = map, .want = 4096};
	*n = 0;
	pthread_once(&tables_once, index_tables);
	if (map == NULL && (w.buf = malloc(SCAN_WINDOW)) == NULL)
		return false;
	holes hs = {out, 0, max, min};
	bool ok = scan_msg(&w, &md_model, 0, size, 0, &hs);
	free(w.buf);
	*n = hs.n;
	return ok;
}
