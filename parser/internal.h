/*
 * internal.h — shared inside parser/ only (never included from render/ or service/).
 *
 * The arena (one per model), the checked wire reader, and the model container.
 */
#ifndef OXP_INTERNAL_H
#define OXP_INTERNAL_H

#include "parser/oxp.h"

#include <stdarg.h>

#if defined(__GNUC__)
#define OXP_CHECK __attribute__((warn_unused_result))
#define OXP_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define OXP_CHECK
#define OXP_PRINTF(a, b)
#endif

/* ---------------------------------------------------------------------------------------
 * Arena: bump allocation from chunks, a hard byte budget, freed in one call.  Built with
 * -DOXP_ARENA_MALLOC every allocation is its own malloc() so ASan/valgrind see each one.
 */
typedef struct oxp_arena oxp_arena;

oxp_arena *oxp__arena_new(size_t budget);
void oxp__arena_free(oxp_arena *a);
/* Zeroed memory aligned to 16, or NULL when the budget would be exceeded / malloc fails. */
OXP_CHECK void *oxp__arena_alloc(oxp_arena *a, size_t size);
/* n * size with overflow check; NULL on overflow as well. */
OXP_CHECK void *oxp__arena_array(oxp_arena *a, size_t n, size_t size);
size_t oxp__arena_used(const oxp_arena *a);
/* Whether the last failed allocation failed in malloc (true) or on the budget (false). */
bool oxp__arena_malloc_failed(const oxp_arena *a);
/* A NUL-terminated copy of s[0..len). */
OXP_CHECK char *oxp__arena_strndup(oxp_arena *a, const char *s, size_t len);
/* printf into the arena. */
#define oxp__arena_printf oxp_arena_printf

/* ---------------------------------------------------------------------------------------
 * Wire reader: never forms a pointer past the end of its range.
 */
enum {
	OXP_WT_VARINT = 0,
	OXP_WT_I64 = 1,
	OXP_WT_LEN = 2,
	OXP_WT_SGROUP = 3,
	OXP_WT_EGROUP = 4,
	OXP_WT_I32 = 5
};

typedef struct oxp_reader {
	const uint8_t *p; /* next byte */
	size_t left;      /* bytes remaining in this (sub-)message */
} oxp_reader;

/* Each returns OXP_OK, or an error code without moving the reader. */
OXP_CHECK oxp_code oxp__rd_varint_slow(oxp_reader *r, uint64_t *out);
OXP_CHECK oxp_code oxp__rd_tag_slow(oxp_reader *r, uint32_t *field, unsigned *wiretype);

/* Most varints and tags are one byte: that case is inline, the rest in wire.c. */
OXP_CHECK static inline oxp_code oxp__rd_varint(oxp_reader *r, uint64_t *out)
{
	if (r->left > 0 && r->p[0] < 0x80) {
		*out = r->p[0];
		r->p++;
		r->left--;
		return OXP_OK;
	}
	return oxp__rd_varint_slow(r, out);
}

OXP_CHECK static inline oxp_code oxp__rd_tag(oxp_reader *r, uint32_t *field,
                                             unsigned *wiretype)
{
	if (r->left > 0 && r->p[0] < 0x80 && r->p[0] >= 8) {
		*field = (uint32_t)(r->p[0] >> 3);
		*wiretype = r->p[0] & 7u;
		r->p++;
		r->left--;
		return OXP_OK;
	}
	return oxp__rd_tag_slow(r, field, wiretype);
}

OXP_CHECK oxp_code oxp__rd_fixed32(oxp_reader *r, uint32_t *out);
OXP_CHECK oxp_code oxp__rd_fixed64(oxp_reader *r, uint64_t *out);
/* A length-delimited payload: a view of exactly len bytes, checked against what remains. */
OXP_CHECK oxp_code oxp__rd_bytes_slow(oxp_reader *r, const uint8_t **p, size_t *len);

/* Most lengths are one byte: that case is inline. */
OXP_CHECK static inline oxp_code oxp__rd_bytes(oxp_reader *r, const uint8_t **p, size_t *len)
{
	if (r->left > 0 && r->p[0] < 0x80 && (size_t)r->p[0] < r->left) {
		size_t n = r->p[0];
		*p = r->p + 1;
		*len = n;
		r->p += n + 1;
		r->left -= n + 1;
		return OXP_OK;
	}
	return oxp__rd_bytes_slow(r, p, len);
}
/* Skip one field's payload of the given wire type. */
OXP_CHECK oxp_code oxp__rd_skip(oxp_reader *r, unsigned wiretype);

/* Number of varints in a packed payload; OXP_E_PACKED when the last one is cut short. */
OXP_CHECK oxp_code oxp__packed_varint_count(const uint8_t *p, size_t len, size_t *out);

/* ---------------------------------------------------------------------------------------
 * The model container.
 */
/* The compacted structure of a model file (oxp__scan_compact, decode.c): every byte of the
 * file but the payloads of large string fields (raw_data, ...), in file order, each cut
 * payload's length written as 0 and each enclosing message's length as its new value,
 * both padded to their old varint width so that nothing else moves.  cuts[i].at is where
 * the cut payload would start in buf; from there buf goes on with the file's bytes from
 * cuts[i].off + cuts[i].len. */
typedef struct oxp__cut {
	uint64_t at, off, len;
} oxp__cut;

typedef struct oxp__compact {
	uint8_t *buf; /* a mapping of cap bytes (the model's once parsed) */
	size_t len, cap;
	oxp__cut *cuts; /* malloc'd, in order */
	size_t ncuts;
	const uint8_t *file; /* the file's mapping: where cut payloads are read */
} oxp__compact;

struct oxp_model {
	oxp_arena *arena;
	const uint8_t *data;
	size_t size;
	void *map;        /* mmap base when the model owns a mapping */
	size_t map_size;
	oxp_model_proto *proto;   /* for models */
	oxp_tensor *tensor;       /* for lone TensorProto files */
	oxp__compact compact;     /* the structure decoded, when compacted (buf NULL if not) */
};

/* Decode a whole ModelProto / TensorProto from buf into dst (zeroed by the caller). */
OXP_CHECK oxp_code oxp__decode_model(oxp_arena *arena, const oxp_limits *lim,
                                     const uint8_t *buf, size_t len, oxp_model_proto *dst,
                                     oxp_error *err);
OXP_CHECK oxp_code oxp__decode_tensor(oxp_arena *arena, const oxp_limits *lim,
                                      const uint8_t *buf, size_t len, oxp_tensor *dst,
                                      oxp_error *err);

/* ---------------------------------------------------------------------------------------
 * The linked graph (graph.c), visible to shape.c.
 */
struct oxp_dag {
	oxp_arena *arena;
	const oxp_model *model;
	oxp_dag_view v;          /* what oxp_dag_get() returns; arrays below back it */
	oxp_scope *scopes;
	oxp_dnode *nodes;
	oxp_value *values;
	oxp_edge *edges;
	oxp_warning *warnings;
	uint32_t warnings_cap;
	uint32_t warnings_dropped;
	uint32_t *id_table;      /* open addressing: node index per slot, OXP_NONE = empty */
	uint32_t id_cap;
	struct sh_data **sh_data; /* per value: its known small-integer values (shape.c), or
	                             NULL (the array too, when inference did not run) */
};

/* Fill values[].inferred for every scope (shape.c).  Never fails on odd graphs: what it
 * cannot decide stays unknown.  OXP_E_NOMEM only. */
OXP_CHECK oxp_code oxp__dag_infer_shapes(oxp_dag *dag, oxp_error *err);

/* Set oxp_dnode.bookkeeping for every node (bookkeeping.c).  OXP_E_NOMEM only. */
OXP_CHECK oxp_code oxp__dag_mark_bookkeeping(oxp_dag *dag, oxp_error *err);

/* Set every value's params and param_role and the summary's parameter
 * figures (params.c); runs the quantization analysis.  OXP_E_NOMEM or OXP_E_BUDGET only. */
OXP_CHECK oxp_code oxp__dag_params(oxp_dag *dag, oxp_error *err);

/* The page size the low-RSS open and its scan split files at (model.c, decode.c). */
#define OXP__PAGE ((uint64_t)4096)

/* Test-only flag of oxp_model_open_ex: the low-RSS open as on kernels without
 * MADV_POPULATE_WRITE (the scan reads with pread(), the structure is read over itself). */
#define OXP__OPEN_NO_POPULATE 0x100u

/* A byte range of a file that only holds payload (see oxp__scan_holes, decode.c). */
typedef struct oxp__hole {
	uint64_t off, len;
} oxp__hole;

/* Find payloads of at least `min` bytes in the ModelProto file behind fd by reading it
 * through a small window: read with pread() when map is NULL; else map is a private
 * writable mapping of the file, read in place, and every page of it holding structure is
 * populated for writing (a private copy) as the scan goes (decode.c says how).  false
 * when the scan gave up (odd input, more than max holes, the advice refused); *n holds
 * the holes found, in file order. */
bool oxp__scan_holes(int fd, uint64_t size, uint64_t min, uint8_t *map, oxp__hole *out,
                     size_t max, size_t *n);

/* Test-only flag of oxp_model_open_ex: the low-RSS open in place (the scan makes the
 * structure's pages of the file mapping private copies) instead of the compacted copy. */
#define OXP__OPEN_IN_PLACE 0x200u


/* Build c from the file behind fd, reading it with pread() (no page of a file mapping is
 * touched).  false when compacting is not worth it or not possible (odd input, more than
 * max cuts, more than cap bytes of structure): c is then released. */
/* n bytes of the file behind fd from off into to, whole (pread() again after a short
 * read or EINTR); false on an error or the file's end (model.c). */
bool oxp__read_at(int fd, uint8_t *to, size_t n, uint64_t off);

bool oxp__scan_compact(int fd, uint64_t size, uint64_t min, size_t max, oxp__compact *c);
void oxp__compact_release(oxp__compact *c);
/* The number of cuts at or before position pos of c's buffer (cuts[i].at <= pos). */
size_t oxp__compact_cuts_before(const oxp__compact *c, uint64_t pos);
/* The file offset of position pos of c's buffer. */
uint64_t oxp__compact_offset(const oxp__compact *c, uint64_t pos);
/* Decode the compacted ModelProto: views of cut fields point into c->file. */
OXP_CHECK oxp_code oxp__decode_model_compact(oxp_arena *arena, const oxp_limits *lim,
                                             const oxp__compact *c, oxp_model_proto *dst,
                                             oxp_error *err);

/* Printable copy of a model string for messages: non-printable bytes (and backslash) as
 * \xNN, cut after 96 bytes with "..." (graph.c).  size >= 5. */
void oxp__printable(char *out, size_t size, oxp_str s);

/* Set err (if not NULL) and return code.  The first error wins: callers pass it up. */
oxp_code oxp__set_error(oxp_error *err, oxp_code code, uint64_t offset, const char *path,
                        const char *fmt, ...) OXP_PRINTF(5, 6);

#endif /* OXP_INTERNAL_H */
