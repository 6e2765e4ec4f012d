/*
 * test_gunzip.c — gzip request bodies (service/gunzip.c): members one after the other,
 * fed whole or a byte at a time; cut short, corrupt, followed by garbage, empty; a sink
 * that refuses; a body decoded in slices (each call stops once its budget is given).  The
 * two members were made by Python's gzip.compress (mtime 0).
 */
#include "service/gunzip.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* gzip("onnxviz " * 200) */
static const unsigned char m1[] = {
    0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xcb, 0xcf, 0xcb, 0xab,
    0x28, 0xcb, 0xac, 0x52, 0xc8, 0x1f, 0xa5, 0x47, 0xe9, 0x51, 0x7a, 0x94, 0x1e, 0xa5,
    0x47, 0x69, 0x12, 0x68, 0x00, 0x6d, 0x9d, 0x36, 0x22, 0x40, 0x06, 0x00, 0x00};
/* gzip("tail!" * 40) */
static const unsigned char m2[] = {
    0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x2b, 0x49, 0xcc, 0xcc,
    0x51, 0x2c, 0x19, 0xfa, 0x04, 0x00, 0xb5, 0x2f, 0x82, 0x57, 0xc8, 0x00, 0x00, 0x00};

typedef struct sink {
	char buf[4096];
	size_t n;
	size_t refuse_after; /* 0: never */
} sink;

static bool take(void *cls, const char *data, size_t n)
{
	sink *s = cls;
	if (s->refuse_after != 0 && s->n + n > s->refuse_after)
		return false;
	assert_true(s->n + n <= sizeof(s->buf));
	memcpy(s->buf + s->n, data, n);
	s->n += n;
	return true;
}

/* All of data[0..n) fed at once (no budget): true when taken whole. */
static bool feed(oxs_gunzip *g, const void *data, size_t n, char *err, size_t errsize)
{
	size_t used = 0;
	bool ok = oxs_gunzip_feed(g, data, n, SIZE_MAX, &used, err, errsize);
	if (ok)
		assert_int_equal(used, n);
	return ok;
}

/* What the two members decode to. */
static size_t expected(char *out)
{
	size_t n = 0;
	for (int i = 0; i < 200; i++, n += 8)
		memcpy(out + n, "onnxviz ", 8);
	for (int i = 0; i < 40; i++, n += 5)
		memcpy(out + n, "tail!", 5);
	return n;
}

static size_t both(unsigned char *out)
{
	memcpy(out, m1, sizeof(m1));
	memcpy(out + sizeof(m1), m2, sizeof(m2));
	return sizeof(m1) + sizeof(m2);
}

static void test_members(void **state)
{
	(void)state;
	char want[4096], err[200];
	size_t wn = expected(want);
	unsigned char body[128];
	size_t bn = both(body);
	for (int bytewise = 0; bytewise < 2; bytewise++) {
		sink s = {.n = 0};
		oxs_gunzip *g = oxs_gunzip_new(take, &s, err, sizeof(err));
		assert_non_null(g);
		if (bytewise) {
			for (size_t i = 0; i < bn; i++)
				assert_true(feed(g, body + i, 1, err, sizeof(err)));
		} else {
			assert_true(feed(g, body, bn, err, sizeof(err)));
		}
		assert_true(oxs_gunzip_end(g, err, sizeof(err)));
		assert_int_equal(s.n, wn);
		assert_memory_equal(s.buf, want, wn);
		assert_int_equal(oxs_gunzip_in(g), bn);
		assert_int_equal(oxs_gunzip_out(g), wn);
		oxs_gunzip_free(g);
	}
}

static void test_bad(void **state)
{
	(void)state;
	char err[200];
	unsigned char body[128];
	size_t bn = both(body);
	sink s = {.n = 0};
	/* cut short, inside the second member */
	oxs_gunzip *g = oxs_gunzip_new(take, &s, err, sizeof(err));
	assert_true(feed(g, body, bn - 3, err, sizeof(err)));
	assert_false(oxs_gunzip_end(g, err, sizeof(err)));
	assert_non_null(strstr(err, "ends inside a gzip member"));
	oxs_gunzip_free(g);
	/* garbage after the members */
	memcpy(body + bn, "xyz", 3);
	s.n = 0;
	g = oxs_gunzip_new(take, &s, err, sizeof(err));
	assert_false(feed(g, body, bn + 3, err, sizeof(err)));
	assert_non_null(strstr(err, "not valid gzip at byte"));
	oxs_gunzip_free(g);
	/* a changed byte of the first member's data: its CRC (or the deflate data) fails */
	body[20] ^= 0x40;
	s.n = 0;
	g = oxs_gunzip_new(take, &s, err, sizeof(err));
	assert_false(feed(g, body, bn, err, sizeof(err)));
	assert_non_null(strstr(err, "not valid gzip"));
	oxs_gunzip_free(g);
	/* not gzip at all, and nothing at all */
	s.n = 0;
	g = oxs_gunzip_new(take, &s, err, sizeof(err));
	assert_false(feed(g, "\x08\x07onnx", 6, err, sizeof(err)));
	assert_non_null(strstr(err, "at byte"));
	oxs_gunzip_free(g);
	g = oxs_gunzip_new(take, &s, err, sizeof(err));
	assert_false(oxs_gunzip_end(g, err, sizeof(err)));
	assert_non_null(strstr(err, "empty"));
	oxs_gunzip_free(g);
	oxs_gunzip_free(NULL);
}

static void test_sink_refuses(void **state)
{
	(void)state;
	char err[200];
	sink s = {.n = 0, .refuse_after = 100};
	oxs_gunzip *g = oxs_gunzip_new(take, &s, err, sizeof(err));
	assert_false(feed(g, m1, sizeof(m1), err, sizeof(err)));
	assert_string_equal(err, ""); /* the sink's own failure: no message of the decoder's */
	assert_true(s.n <= 100);
	oxs_gunzip_free(g);
}

/* CRC-32 (the gzip trailer's), bit by bit. */
static uint32_t crc32_of(const unsigned char *p, size_t n)
{
	uint32_t c = 0xffffffffu;
	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
	}
	return ~c;
}

typedef struct big_sink {
	unsigned char *buf;
	size_t n, cap, calls;
} big_sink;

static bool take_big(void *cls, const char *data, size_t n)
{
	big_sink *s = cls;
	assert_true(s->n + n <= s->cap);
	memcpy(s->buf + s->n, data, n);
	s->n += n;
	return true;
}

/* A gzip member of `n` bytes in stored blocks (as gzip -0 writes them: no compression,
 * so a body of known size with no compressor in the test) decoded with a budget of one
 * byte: each call stops after the sink's first piece and says how much it took; fed the
 * rest again, call after call, the whole body decodes to the same bytes. */
static void test_slices(void **state)
{
	(void)state;
	enum { N = 300000 };
	unsigned char *data = malloc(N), *body = malloc(N + 64), *out = malloc(N);
	assert_non_null(data);
	assert_non_null(body);
	assert_non_null(out);
	for (size_t i = 0; i < N; i++)
		data[i] = (unsigned char)(i * 7 + (i >> 9));
	static const unsigned char head[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff};
	size_t bn = 0;
	memcpy(body, head, sizeof(head));
	bn += sizeof(head);
	for (size_t at = 0; at < N;) {
		size_t k = N - at < 65535 ? N - at : 65535;
		body[bn++] = at + k == N ? 1 : 0; /* BFINAL, BTYPE 00 (stored) */
		body[bn++] = (unsigned char)k;
		body[bn++] = (unsigned char)(k >> 8);
		body[bn++] = (unsigned char)~k;
		body[bn++] = (unsigned char)(~k >> 8);
		memcpy(body + bn, data + at, k);
		bn += k;
		at += k;
	}
	uint32_t crc = crc32_of(data, N), size = N;
	for (int i = 0; i < 4; i++)
		body[bn++] = (unsigned char)(crc >> (8 * i));
	for (int i = 0; i < 4; i++)
		body[bn++] = (unsigned char)(size >> (8 * i));
	char err[200];
	big_sink s = {out, 0, N, 0};
	oxs_gunzip *g = oxs_gunzip_new(take_big, &s, err, sizeof(err));
	assert_non_null(g);
	size_t at = 0;
	while (at < bn) {
		size_t used = 0, before = s.n;
		assert_true(oxs_gunzip_feed(g, body + at, bn - at, 1, &used, err, sizeof(err)));
		assert_true(s.n - before <= (size_t)64 << 10); /* one piece at most */
		assert_true(used > 0 || s.n > before);          /* progress every call */
		at += used;
		s.calls++;
		assert_true(s.calls < 100);
	}
	assert_true(s.calls >= N / (64 << 10)); /* sliced, not decoded in one call */
	assert_true(oxs_gunzip_end(g, err, sizeof(err)));
	assert_int_equal(s.n, N);
	assert_memory_equal(out, data, N);
	assert_int_equal(oxs_gunzip_in(g), bn);
	oxs_gunzip_free(g);
	free(data);
	free(body);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_members),
	    cmocka_unit_test(test_bad),
	    cmocka_unit_test(test_sink_refuses),
	    cmocka_unit_test(test_slices),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
