/*
 * support_pb.c — see support_pb.h.
 */
#include "tests/unit/support_pb.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

void pb_free(pb *b)
{
	free(b->p);
	b->p = NULL;
	b->n = b->cap = 0;
}

void pb_raw(pb *b, const void *data, size_t n)
{
	if (b->n + n > b->cap) {
		size_t cap = b->cap ? b->cap : 64;
		while (cap < b->n + n)
			cap *= 2;
		uint8_t *p = realloc(b->p, cap);
		assert_non_null(p);
		b->p = p;
		b->cap = cap;
	}
	if (n)
		memcpy(b->p + b->n, data, n);
	b->n += n;
}

size_t pb_varint_encode(uint8_t out[10], uint64_t v)
{
	size_t n = 0;
	do {
		out[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			out[n] |= 0x80;
		n++;
	} while (v);
	return n;
}

void pb_varint(pb *b, uint64_t v)
{
	uint8_t tmp[10];
	pb_raw(b, tmp, pb_varint_encode(tmp, v));
}

void pb_tag(pb *b, uint32_t field, unsigned wt)
{
	pb_varint(b, (uint64_t)field << 3 | wt);
}

size_t pb_uint(pb *b, uint32_t field, uint64_t v)
{
	size_t at = b->n;
	pb_tag(b, field, 0);
	pb_varint(b, v);
	return at;
}

size_t pb_bytes(pb *b, uint32_t field, const void *data, size_t n, size_t *payload)
{
	size_t at = b->n;
	pb_tag(b, field, 2);
	pb_varint(b, n);
	if (payload)
		*payload = b->n;
	pb_raw(b, data, n);
	return at;
}

size_t pb_str(pb *b, uint32_t field, const char *s)
{
	return pb_bytes(b, field, s, strlen(s), NULL);
}

size_t pb_msg(pb *b, uint32_t field, const pb *sub, size_t *payload)
{
	return pb_bytes(b, field, sub->p, sub->n, payload);
}

size_t pb_float(pb *b, uint32_t field, float f)
{
	size_t at = b->n;
	uint32_t u;
	memcpy(&u, &f, 4);
	uint8_t le[4] = {(uint8_t)u, (uint8_t)(u >> 8), (uint8_t)(u >> 16), (uint8_t)(u >> 24)};
	pb_tag(b, field, 5);
	pb_raw(b, le, 4);
	return at;
}

/* ---------------------------------------------------------------------------------------
 * Parsing.  Every buffer handed to the parser is kept (models borrow it) until
 * support_free_all().
 */
typedef struct kept {
	struct kept *next;
	oxp_model *model;
	uint8_t data[];
} kept;

static kept *all;

static uint8_t *keep(const void *data, size_t n)
{
	kept *k = malloc(sizeof(*k) + (n ? n : 1));
	assert_non_null(k);
	if (n)
		memcpy(k->data, data, n);
	k->model = NULL;
	k->next = all;
	all = k;
	return k->data;
}

void support_free_all(void)
{
	while (all != NULL) {
		kept *k = all;
		all = k->next;
		oxp_model_free(k->model);
		free(k);
	}
}

oxp_model *pb_parse_ok(const pb *b, const oxp_limits *lim)
{
	uint8_t *data = keep(b->p, b->n);
	oxp_model *m = NULL;
	oxp_error e;
	oxp_code rc = oxp_model_parse(&m, data, b->n, lim, &e);
	if (rc != OXP_OK) {
		char msg[700];
		fail_msg("parse failed: %s: %s", oxp_code_name(rc), oxp_error_format(&e, msg, 700));
	}
	all->model = m;
	return m;
}

oxp_error pb_parse_err(const pb *b, const oxp_limits *lim, oxp_code code)
{
	uint8_t *data = malloc(b->n ? b->n : 1); /* exactly its size, for ASan */
	assert_non_null(data);
	if (b->n)
		memcpy(data, b->p, b->n);
	oxp_model *m = (oxp_model *)(uintptr_t)0x1; /* must stay untouched */
	oxp_error e;
	memset(&e, 0x55, sizeof(e)); /* must be overwritten */
	oxp_code rc = oxp_model_parse(&m, data, b->n, lim, &e);
	free(data);
	if (rc != code)
		fail_msg("expected %s, got %s (%s at %llu in %s)", oxp_code_name(code),
		         oxp_code_name(rc), rc ? e.message : "", (unsigned long long)e.offset,
		         rc ? e.path : "");
	assert_ptr_equal(m, (oxp_model *)(uintptr_t)0x1);
	assert_int_equal(e.code, code);
	assert_true(e.offset <= b->n);
	assert_non_null(memchr(e.message, '\0', sizeof(e.message)));
	assert_non_null(memchr(e.path, '\0', sizeof(e.path)));
	assert_true(e.message[0] != '\0');
	return e;
}

pb fixture_bytes(const char *name)
{
	const char *dir = getenv("ONNXVIZ_TESTDATA");
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", dir ? dir : "tests/data/models", name);
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		fail_msg("cannot open %s (run from the repository root or set ONNXVIZ_TESTDATA)",
		         path);
	pb b = {0};
	uint8_t tmp[4096];
	size_t n;
	while ((n = fread(tmp, 1, sizeof(tmp), f)) > 0)
		pb_raw(&b, tmp, n);
	fclose(f);
	return b;
}

oxp_model *fixture(const char *name)
{
	pb b = fixture_bytes(name);
	oxp_model *m = pb_parse_ok(&b, NULL);
	pb_free(&b);
	return m;
}

void support_assert_str(oxp_str s, const char *want, const char *file, int line)
{
	size_t n = strlen(want);
	if (s.len != n || (n && memcmp(s.p, want, n) != 0)) {
		char got[256];
		size_t k = s.len < sizeof(got) - 1 ? s.len : sizeof(got) - 1;
		if (k)
			memcpy(got, s.p, k);
		got[k] = '\0';
		print_error("expected \"%s\", got \"%s\" (%zu bytes)\n", want, got, s.len);
		_fail(file, line);
	}
}
