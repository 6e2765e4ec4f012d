/*
 * test_lowrss.c — oxp_model_open_ex(OXP_OPEN_LOW_RSS): for files of 16 MB and more the
 * structure is decoded from a compacted copy read with pread() (the large payloads cut,
 * their views put back into the file's mapping, which the open never touches); in place,
 * as a fallback and through a test flag, the structure pages of the mapping are made
 * private copies and the insides of large payloads stay file pages nobody touched (found
 * by oxp__scan_holes).  Whatever the way, the buffer must be the file byte for byte, the
 * decoded model the same as a plain open's, and every view's file offset the same.  Models are written here: big raw_data
 * initializers between nodes, at odd offsets, a small one, and one payload crossing the
 * 16 MB mark.
 */
#include "parser/oxp.h"
#include "parser/internal.h" /* OXP__OPEN_IN_PLACE, OXP__OPEN_NO_POPULATE */
#include "tests/unit/support_pbw.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmocka.h>

/* One TensorProto initializer of n floats named name, values from seed. */
static void initializer(pbw *g, const char *name, size_t n, uint32_t seed)
{
	pbw t = {0};
	int64_t dims[1] = {(int64_t)n};
	pbw_tensor_head(&t, dims, 1, 1 /* FLOAT */);
	pbw_str(&t, 8, name);
	uint8_t *raw = malloc(n * 4);
	assert_non_null(raw);
	for (size_t i = 0; i < n * 4; i++)
		raw[i] = (uint8_t)(seed * 131u + i * 7u + (i >> 12));
	pbw_bytes(&t, 9, raw, n * 4);
	free(raw);
	pbw_bytes(g, 5, t.p, t.len);
	pbw_free(&t);
}

static void node(pbw *g, const char *in0, const char *in1, const char *out, const char *op)
{
	pbw n = {0};
	pbw_str(&n, 1, in0);
	pbw_str(&n, 1, in1);
	pbw_str(&n, 2, out);
	pbw_str(&n, 4, op);
	pbw_bytes(g, 1, n.p, n.len);
	pbw_free(&n);
}

/* Writes the model to a temporary file; returns its path (static buffer) and size. */
static const char *write_model(size_t pad, size_t *size)
{
	pbw g = {0}, m = {0};
	pbw_str(&g, 2, "lowrss");
	node(&g, "x", "w0", "y0", "Add");
	initializer(&g, "w0", (6u << 20) / 4 + pad, 1);
	node(&g, "y0", "small", "y1", "Mul");
	initializer(&g, "small", 3, 2);
	initializer(&g, "w1", (7u << 20) / 4 + 3 * pad, 3);
	node(&g, "y1", "w1", "y2", "Sub");
	initializer(&g, "w2", (5u << 20) / 4 + 17, 4); /* crosses 16 MB */
	node(&g, "y2", "w2", "z", "Div");
	pbw_int(&m, 1, 8);
	pbw_str(&m, 2, "test_lowrss");
	pbw_bytes(&m, 7, g.p, g.len);
	static char path[64];
	snprintf(path, sizeof(path), "/tmp/onnxviz-lowrss-XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, m.p, m.len), (ssize_t)m.len);
	close(fd);
	*size = m.len;
	pbw_free(&g);
	pbw_free(&m);
	return path;
}

static void same_model(const oxp_model *a, const oxp_model *b)
{
	const oxp_graph *ga = oxp_model_proto_get(a)->graph, *gb = oxp_model_proto_get(b)->graph;
	assert_non_null(ga);
	assert_non_null(gb);
	assert_int_equal(ga->nnodes, 4);
	assert_int_equal(ga->nnodes, gb->nnodes);
	assert_int_equal(ga->ninitializers, 4);
	assert_int_equal(ga->ninitializers, gb->ninitializers);
	for (size_t i = 0; i < ga->nnodes; i++) {
		assert_int_equal(ga->nodes[i].op_type.len, gb->nodes[i].op_type.len);
		assert_memory_equal(ga->nodes[i].op_type.p, gb->nodes[i].op_type.p,
		                    ga->nodes[i].op_type.len);
	}
	for (size_t i = 0; i < ga->ninitializers; i++) {
		const oxp_tensor *ta = &ga->initializers[i], *tb = &gb->initializers[i];
		assert_int_equal(ta->name.len, tb->name.len);
		assert_memory_equal(ta->name.p, tb->name.p, ta->name.len);
		assert_int_equal(ta->raw_data.len, tb->raw_data.len);
		assert_memory_equal(ta->raw_data.p, tb->raw_data.p, ta->raw_data.len);
		assert_int_equal(oxp_model_offset(a, ta->raw_data.p),
		                 oxp_model_offset(b, tb->raw_data.p));
		/* structure views too, wherever they point (a compacted copy, or the file) */
		assert_int_equal(oxp_model_offset(a, ta->name.p), oxp_model_offset(b, tb->name.p));
	}
	for (size_t i = 0; i < ga->nnodes; i++) {
		assert_int_equal(ga->nodes[i].offset, gb->nodes[i].offset);
		assert_int_equal(oxp_model_offset(a, ga->nodes[i].op_type.p),
		                 oxp_model_offset(b, gb->nodes[i].op_type.p));
	}
}

/* Mappings of path in this process (/proc/self/maps lines naming it). */
static int mappings_of(const char *path)
{
	FILE *f = fopen("/proc/self/maps", "r");
	assert_non_null(f);
	char line[512];
	int n = 0;
	while (fgets(line, sizeof(line), f) != NULL)
		n += strstr(line, path) != NULL;
	fclose(f);
	return n;
}

/* What /proc/self/pagemap says of the page holding p: 0 not mapped, 1 a page of the file,
 * 2 a private copy (anonymous).  Bits 63 (present) and 61 (file page or shared) are
 * readable without privileges. */
static int page_state(const void *p)
{
	FILE *f = fopen("/proc/self/pagemap", "rb");
	assert_non_null(f);
	uint64_t e = 0;
	assert_int_equal(fseeko(f, (off_t)((uintptr_t)p / 4096 * 8), SEEK_SET), 0);
	assert_int_equal(fread(&e, sizeof(e), 1, f), 1);
	fclose(f);
	if (!(e >> 63 & 1))
		return 0;
	return (e >> 61 & 1) ? 1 : 2;
}

/* The pages of the low-RSS buffer right after the open.  Compacted: no page of the file's
 * mapping was touched, the structure's views point outside it (into the copy) and large
 * payloads' into it.  In place: every page holding a tensor's header (and the first and
 * last page of the file) is a private copy.  Both ways the pages well inside the big
 * payloads were never touched. */
static void check_pages(const oxp_model *low, bool compacted)
{
	const uint8_t *base = oxp_model_data(low);
	size_t size = oxp_model_size(low);
	int header = compacted ? 0 : 2; /* the state of a page holding structure */
	assert_int_equal(page_state(base), header);
	assert_int_equal(page_state(base + size - 1), header);
	const oxp_graph *g = oxp_model_proto_get(low)->graph;
	for (size_t i = 0; i < g->ninitializers; i++) {
		const oxp_tensor *t = &g->initializers[i];
		const uint8_t *p = (const uint8_t *)t->raw_data.p;
		const uint8_t *name = (const uint8_t *)t->name.p;
		if (compacted) {
			assert_true(name < base || name >= base + size);
			if (t->raw_data.len < (16u << 10)) /* a small payload is structure */
				continue;
			assert_true(p >= base && p + t->raw_data.len <= base + size);
		} else {
			assert_int_equal(page_state(name), 2);
		}
		assert_int_equal(page_state(p), header); /* the payload's first page: its header's */
		if (t->raw_data.len < ((size_t)1 << 20))
			continue;
		/* past the scan's first window (64 KB), up to the page before the last */
		for (size_t off = 128u << 10; off + 8192 < t->raw_data.len; off += 256u << 10)
			assert_int_equal(page_state(p + off), 0);
		assert_int_equal(page_state(p + t->raw_data.len - 1), header); /* the next header's */
	}
}

static void check_layout(size_t pad, unsigned flags)
{
	size_t size;
	const char *path = write_model(pad, &size);
	assert_true(size >= ((size_t)16 << 20));
	oxp_model *plain = NULL, *low = NULL;
	oxp_error err;
	assert_int_equal(oxp_model_open(&plain, path, NULL, &err), OXP_OK);
	assert_int_equal(mappings_of(path), 1);
	assert_int_equal(oxp_model_open_ex(&low, path, NULL, OXP_OPEN_LOW_RSS | flags, &err), OXP_OK);
	/* one more mapping of the file: untouched (compacted), or private copies and
	 * untouched file pages (in place) */
	assert_int_equal(mappings_of(path), 2);
	check_pages(low, flags == 0);
	assert_int_equal(oxp_model_size(low), size);
	/* the buffer is the file, byte for byte */
	assert_memory_equal(oxp_model_data(low), oxp_model_data(plain), size);
	same_model(plain, low);
	oxp_model_free(low);
	oxp_model_free(plain);
	unlink(path);
}

static void test_layouts(void **state)
{
	(void)state;
	/* payloads at page-aligned, odd and unaligned offsets */
	static const size_t pads[] = {0, 1, 1021, 4096, 4099};
	for (size_t i = 0; i < sizeof(pads) / sizeof(pads[0]); i++)
		for (int pass = 0; pass < 3; pass++) /* compacted; in place with and without
		                                      * MADV_POPULATE_WRITE */
			check_layout(pads[i], pass == 0 ? 0u
			                      : pass == 1 ? OXP__OPEN_IN_PLACE : OXP__OPEN_NO_POPULATE);
}

/* A file of 16 MB whose structure is broken past the first payload: both opens give the
 * same error (the low-RSS one may not make up bytes). */
static void test_broken_tail(void **state)
{
	(void)state;
	size_t size;
	const char *path = write_model(5, &size);
	FILE *f = fopen(path, "r+b");
	assert_non_null(f);
	assert_int_equal(fseek(f, (long)size - 9, SEEK_SET), 0);
	assert_int_equal(fputc(0xff, f), 0xff); /* a varint that never ends, or a bad tag */
	assert_int_equal(fputc(0xff, f), 0xff);
	fclose(f);
	oxp_model *plain = NULL, *low = NULL;
	oxp_error e1, e2;
	oxp_code r1 = oxp_model_open(&plain, path, NULL, &e1);
	oxp_code r2 = oxp_model_open_ex(&low, path, NULL, OXP_OPEN_LOW_RSS, &e2);
	assert_int_equal(r1, r2);
	if (r1 != OXP_OK) {
		assert_int_equal(e1.offset, e2.offset);
		assert_string_equal(e1.path, e2.path);
	} else {
		assert_memory_equal(oxp_model_data(low), oxp_model_data(plain), size);
		same_model(plain, low);
	}
	oxp_model_free(low);
	oxp_model_free(plain);
	unlink(path);
}

/* The peak RSS of this process, KB (getrusage reads the same high-water mark as VmHWM,
 * which clear_refs resets). */
static long peak_kb(void)
{
	struct rusage ru;
	assert_int_equal(getrusage(RUSAGE_SELF, &ru), 0);
	return ru.ru_maxrss;
}

/* Files that are not models, opened low-RSS: the scan runs before the parser judges
 * anything, so it must not make much of them private memory.  20 MB of zeros (field
 * number 0: the scan stops at once, the parse refuses it at byte 0; the compacted copy's
 * first huge page is allowed) and 40 MB of "field 7 (graph), varint 1" over and over
 * (valid protobuf for the scan, which takes it all for structure: the compacted copy
 * gives up at 32 MB and is given back, then the open in place gives up after 32 MB of
 * private copies, decode.c; the parse refuses the wire type at byte 0).  Each answers as
 * the plain open does. */
static void check_garbage(size_t size, const uint8_t *unit, size_t nunit, long max_grow_kb)
{
	char path[64];
	snprintf(path, sizeof(path), "/tmp/onnxviz-lowrss-XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	static uint8_t block[1u << 16];
	size_t blen = sizeof(block) / nunit * nunit;
	for (size_t i = 0; i < blen; i++)
		block[i] = unit[i % nunit];
	for (size_t done = 0; done < size; done += blen)
		assert_int_equal(write(fd, block, blen), (ssize_t)blen);
	close(fd);
	oxp_model *plain = NULL, *low = NULL;
	oxp_error e1, e2;
	/* the peak from here on: writing 5 to clear_refs resets VmHWM to the current RSS */
	FILE *cr = fopen("/proc/self/clear_refs", "w");
	assert_non_null(cr);
	assert_true(fputs("5", cr) >= 0);
	assert_int_equal(fclose(cr), 0);
	long before = peak_kb();
	oxp_code r2 = oxp_model_open_ex(&low, path, NULL, OXP_OPEN_LOW_RSS, &e2);
	long grown = peak_kb() - before;
	assert_true(grown <= max_grow_kb);
	oxp_model_free(low);
	oxp_code r1 = oxp_model_open(&plain, path, NULL, &e1);
	assert_int_equal(r1, r2);
	if (r1 != OXP_OK)
		assert_int_equal(e1.offset, e2.offset);
	oxp_model_free(plain);
	unlink(path);
}

/* Under AddressSanitizer every byte the open may read is checked in shadow memory, one
 * shadow byte per 8: the shadow pages of the whole mapping count in the peak too (the
 * sanitized build measured 38,016 KB here for the 40 MB file: 32 MB private copies, 4.1 MB
 * of their shadow and the rest for the other pages read). */
#if defined(__SANITIZE_ADDRESS__)
#define SHADOW_KB(kb) ((kb) / 8)
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SHADOW_KB(kb) ((kb) / 8)
#endif
#endif
#ifndef SHADOW_KB
#define SHADOW_KB(kb) 0
#endif

static void test_garbage(void **state)
{
	(void)state;
	static const uint8_t zero[1] = {0};
	static const uint8_t graph_varint[2] = {0x38, 0x01};
	check_garbage((size_t)20 << 20, zero, 1, 1024 + 2048 + SHADOW_KB(20 << 10));
	/* (the compacted copy takes its 32 MB first, is given back, then the open in place
	 * takes its own: under ASan the copy's shadow stays) */
	check_garbage((size_t)40 << 20, graph_varint, 2,
	              (33 << 10) + SHADOW_KB(40 << 10) + SHADOW_KB(32 << 10));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_layouts),
	    cmocka_unit_test(test_broken_tail),
	    cmocka_unit_test(test_garbage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
