/*
 * support_pb.h — helpers shared by the parser's unit tests (tests/unit/support_pb.c):
 * a tiny protobuf writer to build test messages byte by byte, fixture loading, and view
 * comparison.  Test code only.
 */
#ifndef SUPPORT_PB_H
#define SUPPORT_PB_H

#include "parser/oxp.h"

#include <stddef.h>
#include <stdint.h>

/* A growable byte buffer; every helper aborts the test on allocation failure. */
typedef struct pb {
	uint8_t *p;
	size_t n, cap;
} pb;

void pb_free(pb *b);
void pb_raw(pb *b, const void *data, size_t n);
void pb_varint(pb *b, uint64_t v);
/* Encode v as a varint into out; returns its length (1..10). */
size_t pb_varint_encode(uint8_t out[10], uint64_t v);
void pb_tag(pb *b, uint32_t field, unsigned wt);
/* A varint field; returns the offset of its tag in b. */
size_t pb_uint(pb *b, uint32_t field, uint64_t v);
/* A length-delimited field holding s (NUL-terminated) / data[0..n) / another buffer.
 * Return the offset of the tag in b; *payload (when not NULL) gets the payload's offset. */
size_t pb_str(pb *b, uint32_t field, const char *s);
size_t pb_bytes(pb *b, uint32_t field, const void *data, size_t n, size_t *payload);
size_t pb_msg(pb *b, uint32_t field, const pb *sub, size_t *payload);
/* A fixed32 field holding a float. */
size_t pb_float(pb *b, uint32_t field, float f);

/* Parse b as a model (default limits when lim is NULL); fails the test unless it parses. */
oxp_model *pb_parse_ok(const pb *b, const oxp_limits *lim);
/* Parse b as a model, expecting failure with code; returns the error for more checks.
 * The input is copied into a buffer of exactly its size first (for ASan). */
oxp_error pb_parse_err(const pb *b, const oxp_limits *lim, oxp_code code);

/* The bytes of tests/data/models/NAME (or $ONNXVIZ_TESTDATA/NAME); the caller frees them
 * with pb_free(). */
pb fixture_bytes(const char *name);
/* The same, parsed; the buffer is kept until support_free_all(). */
oxp_model *fixture(const char *name);
void support_free_all(void);

/* Fails the test unless s holds exactly the bytes of want (NUL-terminated). */
#define assert_str(s, want) support_assert_str((s), (want), __FILE__, __LINE__)
void support_assert_str(oxp_str s, const char *want, const char *file, int line);

#endif /* SUPPORT_PB_H */
