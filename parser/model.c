/*
 * model.c — the model container: parse from a buffer or an mmap'd file, free in one call;
 * error and name helpers.
 */
#include "parser/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

oxp_limits oxp_limits_default(void)
{
	oxp_limits l = {
	    .max_depth = 100,
	    .max_graph_depth = 32,
	    .max_alloc = (size_t)512 << 20,
	    .max_nodes = 500000,
	    .max_node_io = 65536,
	    .max_repeated = (size_t)1 << 26,
	};
	return l;
}

static const char *const code_names[OXP_E__COUNT] = {
    [OXP_OK] = "ok",
    [OXP_E_TRUNCATED] = "truncated",
    [OXP_E_VARINT] = "bad_varint",
    [OXP_E_TAG] = "bad_tag",
    [OXP_E_WIRETYPE] = "bad_wire_type",
    [OXP_E_GROUP] = "group_not_supported",
    [OXP_E_LENGTH] = "bad_length",
    [OXP_E_PACKED] = "bad_packed",
    [OXP_E_DEPTH] = "too_deep",
    [OXP_E_GRAPH_DEPTH] = "subgraphs_too_deep",
    [OXP_E_LIMIT] = "limit_exceeded",
    [OXP_E_NOMEM] = "out_of_memory",
    [OXP_E_DIMS] = "bad_dims",
    [OXP_E_NOT_MODEL] = "not_a_model",
    [OXP_E_IO] = "io_error",
    [OXP_E_DTYPE] = "bad_dtype",
    [OXP_E_STORAGE] = "bad_storage",
    [OXP_E_EXTERNAL] = "external_data",
    [OXP_E_RANGE] = "out_of_range",
    [OXP_E_RECURSION] = "recursive_function",
    [OXP_E_BUDGET] = "over_budget",
};

const char *oxp_code_name(oxp_code code)
{
	if ((unsigned)code >= OXP_E__COUNT || code_names[code] == NULL)
		return "unknown";
	return code_names[code];
}

char *oxp_error_format(const oxp_error *err, char *buf, size_t size)
{
	if (size == 0)
		return buf;
	if (err->path[0] != '\0')
		snprintf(buf, size, "%s at byte %" PRIu64 " in %s", err->message, err->offset,
		         err->path);
	else
		snprintf(buf, size, "%s at byte %" PRIu64, err->message, err->offset);
	return buf;
}

oxp_code oxp__set_error(oxp_error *err, oxp_code code, uint64_t offset, const char *path,
                        const char *fmt, ...)
{
	if (err == NULL || err->code != OXP_OK)
		return code;
	err->code = code;
	err->offset = offset;
	snprintf(err->path, sizeof(err->path), "%s", path ? path : "");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	return code;
}

static void clear_error(oxp_error *err)
{
	if (err != NULL)
		memset(err, 0, sizeof(*err));
}

/* ---------------------------------------------------------------------------------------
 */
typedef oxp_code (*decode_fn)(oxp_model *m, const oxp_limits *lim, oxp_error *err);

static oxp_code decode_as_model(oxp_model *m, const oxp_limits *lim, oxp_error *err)
{
	m->proto = oxp__arena_alloc(m->arena, sizeof(*m->proto));
	if (m->proto == NULL)
		return oxp__set_error(err, OXP_E_NOMEM, 0, "", "out of memory");
	oxp_code rc = m->compact.buf != NULL
	                  ? oxp__decode_model_compact(m->arena, lim, &m->compact, m->proto, err)
	                  : oxp__decode_model(m->arena, lim, m->data, m->size, m->proto, err);
	if (rc != OXP_OK)
		return rc;
	const oxp_model_proto *p = m->proto;
	if (p->graph == NULL && p->ir_version == 0 && p->nfunctions == 0)
		return oxp__set_error(err, OXP_E_NOT_MODEL, 0, "",
		                      m->size == 0 ? "empty input: not an ONNX model"
		                                   : "no graph and no ir_version: not an ONNX model");
	return OXP_OK;
}

static oxp_code decode_as_tensor(oxp_model *m, const oxp_limits *lim, oxp_error *err)
{
	m->tensor = oxp__arena_alloc(m->arena, sizeof(*m->tensor));
	if (m->tensor == NULL)
		return oxp__set_error(err, OXP_E_NOMEM, 0, "", "out of memory");
	return oxp__decode_tensor(m->arena, lim, m->data, m->size, m->tensor, err);
}

static oxp_code parse_with(oxp_model **out, const void *buf, size_t len, void *map,
                           const oxp__compact *cp, const oxp_limits *limits, oxp_error *err,
                           decode_fn fn)
{
	clear_error(err);
	oxp_limits lim = limits ? *limits : oxp_limits_default();
	oxp_model *m = calloc(1, sizeof(*m));
	if (m == NULL)
		return oxp__set_error(err, OXP_E_NOMEM, 0, "", "out of memory");
	m->arena = oxp__arena_new(lim.max_alloc);
	if (m->arena == NULL) {
		free(m);
		return oxp__set_error(err, OXP_E_NOMEM, 0, "", "out of memory");
	}
	m->data = buf;
	m->size = len;
	if (cp != NULL)
		m->compact = *cp; /* the model's once parsed; the caller's on failure */
	oxp_code rc = fn(m, &lim, err);
	if (rc != OXP_OK) {
		oxp__arena_free(m->arena);
		free(m);
		return rc;
	}
	if (map != NULL) {
		m->map = map;
		m->map_size = len;
	}
	*out = m;
	return OXP_OK;
}

oxp_code oxp_model_parse(oxp_model **out, const void *buf, size_t len,
                         const oxp_limits *limits, oxp_error *err)
{
	if (buf == NULL && len != 0) {
		clear_error(err);
		return oxp__set_error(err, OXP_E_IO, 0, "", "no input buffer");
	}
	return parse_with(out, buf, len, NULL, NULL, limits, err, decode_as_model);
}

oxp_code oxp_tensor_file_parse(oxp_model **out, const void *buf, size_t len,
                               const oxp_limits *limits, oxp_error *err)
{
	if (buf == NULL && len != 0) {
		clear_error(err);
		return oxp__set_error(err, OXP_E_IO, 0, "", "no input buffer");
	}
	return parse_with(out, buf, len, NULL, NULL, limits, err, decode_as_tensor);
}

/* Files at least this big get the structure/payload split below. */
#define SPLIT_MIN_FILE ((size_t)16 << 20)
#define HOLE_MIN ((uint64_t)16 << 10)
#define MAX_HOLES 4000

/* The low-RSS open first decodes a compacted copy of the structure, read with pread()
 * (oxp__scan_compact, decode.c; decision 78): the file's mapping is then not touched at
 * all, and each page holding a tensor header costs a share of a pread instead of a
 * populate call and a first touch (~10 us a page on the VMs measured).  When that is not
 * possible, or the copy does not decode, the open is done in place, below.
 *
 * In place: map a big model so that parsing touches only memory of our own.  map is a
 * fresh private read-write mapping of the file (nothing of it touched yet).
 *
 * A plain read-only mapping would be zero-copy, but on kernels with large page-cache
 * folios touching one page of a warm file maps the whole folio, up to 2 MB, into the
 * process: parsing an 88 MB model that touches ~300 tensor headers then shows 50-70 MB
 * RSS.  So every page that holds structure (everything but the insides of large
 * payloads, found by oxp__scan_holes) is made a private copy before the parse reads it,
 * and the insides of payloads stay file pages nobody has touched (weights stay zero-copy
 * and are only mapped where someone decodes them).  The buffer is byte for byte the
 * file.  Where the kernel takes MADV_POPULATE_WRITE (5.14 on) the scan itself does it,
 * reading the mapping as it makes the copies, a call per window; before, each structure
 * range was read with pread() and each payload mapped back from the file, two syscalls
 * and a mapping per payload (docs/decisions.md 78).  Older kernels: the scan reads with
 * pread() and each structure range is read over itself, which copies it with a fault
 * per page.  Returns false when the split was not worth it or failed: the mapping is
 * still the file, its untouched parts mapped as a plain mapping's would be. */
bool oxp__read_at(int fd, uint8_t *to, size_t n, uint64_t off)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = pread(fd, to + got, n - got, (off_t)(off + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		got += (size_t)r;
	}
	return true;
}

static bool split_structure(int fd, uint8_t *map, size_t len, bool populate)
{
	oxp__hole *h = malloc(MAX_HOLES * sizeof(*h));
	if (h == NULL)
		return false;
	size_t nh = 0;
	bool ok;
#ifdef MADV_POPULATE_WRITE
	if (populate && madvise(map, (size_t)OXP__PAGE, MADV_POPULATE_WRITE) == 0) {
		ok = oxp__scan_holes(fd, len, HOLE_MIN, map, h, MAX_HOLES, &nh);
		free(h);
		return ok;
	}
#else
	(void)populate;
#endif
	ok = oxp__scan_holes(fd, len, HOLE_MIN, NULL, h, MAX_HOLES, &nh) && nh > 0;
	uint64_t pos = 0; /* start of the next structure range */
	for (size_t i = 0; ok && i <= nh; i++) {
		uint64_t end = len, next = len;
		if (i < nh) {
			/* keep only whole pages inside the payload as file pages */
			end = (h[i].off + OXP__PAGE - 1) & ~(OXP__PAGE - 1);
			next = (h[i].off + h[i].len) & ~(OXP__PAGE - 1);
			if (next <= end)
				continue; /* payload within a page or two: stays structure */
		}
		if (end > pos && !oxp__read_at(fd, map + pos, (size_t)(end - pos), pos))
			ok = false;
		pos = next;
	}
	free(h);
	return ok;
}

oxp_code oxp_model_open(oxp_model **out, const char *path, const oxp_limits *limits,
                        oxp_error *err)
{
	return oxp_model_open_ex(out, path, limits, 0, err);
}

oxp_code oxp_model_open_ex(oxp_model **out, const char *path, const oxp_limits *limits,
                           unsigned flags, oxp_error *err)
{
	clear_error(err);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return oxp__set_error(err, OXP_E_IO, 0, "", "cannot open file: %s", strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return oxp__set_error(err, OXP_E_IO, 0, "", "not a regular file");
	}
	if ((uint64_t)st.st_size > SIZE_MAX / 2) {
		close(fd);
		return oxp__set_error(err, OXP_E_IO, 0, "", "file too large");
	}
	size_t len = (size_t)st.st_size;
	void *map = NULL;
	bool split = len > 0 && (flags & OXP_OPEN_LOW_RSS) && len >= SPLIT_MIN_FILE;
	if (split && !(flags & (OXP__OPEN_IN_PLACE | OXP__OPEN_NO_POPULATE))) {
		/* decode a compacted copy of the structure: the file's mapping is not touched */
		oxp__compact cp;
		map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
		if (map != MAP_FAILED && oxp__scan_compact(fd, len, HOLE_MIN, MAX_HOLES, &cp)) {
			cp.file = map;
			(void)madvise(map, len, MADV_RANDOM);
			oxp_error e2;
			oxp_code rc = parse_with(out, map, len, map, &cp, limits, &e2, decode_as_model);
			if (rc == OXP_OK) {
				close(fd);
				return OXP_OK;
			}
			/* refused: the open in place says why, at the file's own offsets */
			oxp__compact_release(&cp);
		}
		if (map != MAP_FAILED)
			munmap(map, len);
		map = NULL;
	}
	if (len > 0) {
		map = mmap(NULL, len, split ? PROT_READ | PROT_WRITE : PROT_READ, MAP_PRIVATE, fd, 0);
		if (map == MAP_FAILED) {
			int e = errno;
			close(fd);
			return oxp__set_error(err, e == ENOMEM ? OXP_E_NOMEM : OXP_E_IO, 0, "",
			                      "mmap failed: %s", strerror(e));
		}
		/* split or not (or half done), the mapping reads as the file; from here on it is
		 * read-only, as the plain one */
		if (split) {
			(void)split_structure(fd, map, len, !(flags & OXP__OPEN_NO_POPULATE));
			(void)mprotect(map, len, PROT_READ);
		}
		/* Parsing jumps over weights: no read-ahead of pages it will not touch. */
		(void)madvise(map, len, MADV_RANDOM);
	}
	close(fd);
	oxp_code rc = parse_with(out, map, len, map, NULL, limits, err, decode_as_model);
	if (rc != OXP_OK && map != NULL)
		munmap(map, len);
	return rc;
}

void oxp_model_free(oxp_model *m)
{
	if (m == NULL)
		return;
	oxp__arena_free(m->arena);
	if (m->map != NULL)
		munmap(m->map, m->map_size);
	oxp__compact_release(&m->compact);
	free(m);
}

const oxp_model_proto *oxp_model_proto_get(const oxp_model *m)
{
	return m->proto;
}

const oxp_tensor *oxp_model_tensor_get(const oxp_model *m)
{
	return m->tensor;
}

const uint8_t *oxp_model_data(const oxp_model *m)
{
	return m->data;
}

size_t oxp_model_size(const oxp_model *m)
{
	return m->size;
}

size_t oxp_model_arena_bytes(const oxp_model *m)
{
	return oxp__arena_used(m->arena);
}

uint64_t oxp_model_offset(const oxp_model *m, const void *p)
{
	const uint8_t *q = p;
	if (m->compact.buf != NULL && q >= m->compact.buf && q < m->compact.buf + m->compact.len)
		return oxp__compact_offset(&m->compact, (uint64_t)(q - m->compact.buf));
	return (uint64_t)(q - m->data);
}

/* ---------------------------------------------------------------------------------------
 * Names
 */
bool oxp_dims_count(const int64_t *dims, size_t ndims, uint64_t *out)
{
	uint64_t n = 1;
	for (size_t i = 0; i < ndims; i++) {
		if (dims[i] < 0)
			return false;
		uint64_t d = (uint64_t)dims[i];
		if (d != 0 && n > (uint64_t)INT64_MAX / d)
			return false;
		n *= d;
	}
	*out = n;
	return true;
}

static const struct {
	const char *name, *short_name;
	unsigned bits;
} dtypes[OXP_DT__COUNT] = {
    [OXP_DT_UNDEFINED] = {"UNDEFINED", "?", 0},
    [OXP_DT_FLOAT] = {"FLOAT", "f32", 32},
    [OXP_DT_UINT8] = {"UINT8", "u8", 8},
    [OXP_DT_INT8] = {"INT8", "i8", 8},
    [OXP_DT_UINT16] = {"UINT16", "u16", 16},
    [OXP_DT_INT16] = {"INT16", "i16", 16},
    [OXP_DT_INT32] = {"INT32", "i32", 32},
    [OXP_DT_INT64] = {"INT64", "i64", 64},
    [OXP_DT_STRING] = {"STRING", "str", 0},
    [OXP_DT_BOOL] = {"BOOL", "bool", 8},
    [OXP_DT_FLOAT16] = {"FLOAT16", "f16", 16},
    [OXP_DT_DOUBLE] = {"DOUBLE", "f64", 64},
    [OXP_DT_UINT32] = {"UINT32", "u32", 32},
    [OXP_DT_UINT64] = {"UINT64", "u64", 64},
    [OXP_DT_COMPLEX64] = {"COMPLEX64", "c64", 64},
    [OXP_DT_COMPLEX128] = {"COMPLEX128", "c128", 128},
    [OXP_DT_BFLOAT16] = {"BFLOAT16", "bf16", 16},
    [OXP_DT_FLOAT8E4M3FN] = {"FLOAT8E4M3FN", "f8e4m3fn", 8},
    [OXP_DT_FLOAT8E4M3FNUZ] = {"FLOAT8E4M3FNUZ", "f8e4m3fnuz", 8},
    [OXP_DT_FLOAT8E5M2] = {"FLOAT8E5M2", "f8e5m2", 8},
    [OXP_DT_FLOAT8E5M2FNUZ] = {"FLOAT8E5M2FNUZ", "f8e5m2fnuz", 8},
    [OXP_DT_UINT4] = {"UINT4", "u4", 4},
    [OXP_DT_INT4] = {"INT4", "i4", 4},
    [OXP_DT_FLOAT4E2M1] = {"FLOAT4E2M1", "f4e2m1", 4},
    [OXP_DT_FLOAT8E8M0] = {"FLOAT8E8M0", "f8e8m0", 8},
    [OXP_DT_UINT2] = {"UINT2", "u2", 2},
    [OXP_DT_INT2] = {"INT2", "i2", 2},
};

const char *oxp_dtype_name(int32_t dt)
{
	return dt > 0 && dt < OXP_DT__COUNT ? dtypes[dt].name : "UNDEFINED";
}

const char *oxp_dtype_short(int32_t dt)
{
	return dt > 0 && dt < OXP_DT__COUNT ? dtypes[dt].short_name : "?";
}

unsigned oxp_dtype_bits(int32_t dt)
{
	return dt > 0 && dt < OXP_DT__COUNT ? dtypes[dt].bits : 0;
}

const char *oxp_storage_name(oxp_storage s)
{
	static const char *const names[] = {"none",       "raw",         "float_data",
	                                    "int32_data", "string_data", "int64_data",
	                                    "double_data", "uint64_data", "external"};
	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "none";
}

const char *oxp_attr_type_name(int32_t t)
{
	static const char *const names[] = {
	    "UNDEFINED", "FLOAT",   "INT",    "STRING",        "TENSOR",         "GRAPH",
	    "FLOATS",    "INTS",    "STRINGS", "TENSORS",      "GRAPHS",         "SPARSE_TENSOR",
	    "SPARSE_TENSORS", "TYPE_PROTO", "TYPE_PROTOS"};
	return t >= 0 && (size_t)t < sizeof(names) / sizeof(names[0]) ? names[t] : "UNDEFINED";
}
