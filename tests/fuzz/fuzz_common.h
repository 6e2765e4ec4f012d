/*
 * fuzz_common.h — what the fuzz targets share: the invariant check that aborts (libFuzzer
 * then keeps the input), the checks of a parser error and a render error, parsing and
 * linking a model under limits, a UTF-8 validator.  Header-only (static inline): each
 * target is one translation unit linked with tests/fuzz/replay.c or libFuzzer.
 */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include "parser/oxp.h"
#include "render/oxr.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken invariant: say which and abort (this is a test harness, not product code). */
static inline void fz_broken(const char *file, int line, const char *what)
{
	fprintf(stderr, "%s:%d: invariant broken: %s\n", file, line, what);
	abort();
}

#define FZ_CHECK(cond)                                  \
	do {                                                \
		if (!(cond))                                    \
			fz_broken(__FILE__, __LINE__, #cond);       \
	} while (0)

/* A failed parser call reports a well-formed error: a real code, its name, an offset in
 * the input, a non-empty NUL-terminated message and a NUL-terminated path. */
static inline void fz_parse_error(const oxp_error *e, oxp_code rc, size_t size)
{
	FZ_CHECK(rc > OXP_OK && rc < OXP_E__COUNT);
	FZ_CHECK(e->code == rc);
	FZ_CHECK(e->offset <= size);
	FZ_CHECK(memchr(e->message, '\0', sizeof(e->message)) != NULL);
	FZ_CHECK(e->message[0] != '\0');
	FZ_CHECK(memchr(e->path, '\0', sizeof(e->path)) != NULL);
	FZ_CHECK(strcmp(oxp_code_name(rc), "unknown") != 0);
}

/* A failed render call reports a real code with a name and a NUL-terminated message. */
static inline void fz_render_error(const oxr_error *e, oxr_code rc)
{
	FZ_CHECK(rc > OXR_OK && rc < OXR_E__COUNT);
	FZ_CHECK(memchr(e->message, '\0', sizeof(e->message)) != NULL);
	FZ_CHECK(e->message[0] != '\0');
}

/* An output buffer after a call: within its cap, NUL-terminated when not empty. */
static inline void fz_buf(const oxr_buf *b)
{
	FZ_CHECK(b->len <= b->max);
	FZ_CHECK(b->len == 0 || b->data[b->len] == '\0');
}

/* Parse the input as a model under lim and link it (with or without shape inference):
 * true with *m and *d set, false (nothing to free) when either step refuses it. */
static inline bool fz_parse_link(const uint8_t *data, size_t size, const oxp_limits *lim,
                                 bool infer_shapes, oxp_model **m, oxp_dag **d)
{
	oxp_error pe;
	*m = NULL;
	*d = NULL;
	if (oxp_model_parse(m, data, size, lim, &pe) != OXP_OK)
		return false;
	oxp_dag_options dopt = {.infer_shapes = infer_shapes};
	if (oxp_dag_build(d, *m, &dopt, &pe) != OXP_OK) {
		oxp_model_free(*m);
		*m = NULL;
		return false;
	}
	return true;
}

/* Valid UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF). */
static inline int fz_utf8_valid(const unsigned char *s, size_t n)
{
	size_t i = 0;
	while (i < n) {
		unsigned c = s[i];
		size_t k;
		unsigned min;
		if (c < 0x80) {
			i++;
			continue;
		} else if ((c & 0xe0) == 0xc0) {
			k = 1, min = 0x80, c &= 0x1f;
		} else if ((c & 0xf0) == 0xe0) {
			k = 2, min = 0x800, c &= 0x0f;
		} else if ((c & 0xf8) == 0xf0) {
			k = 3, min = 0x10000, c &= 0x07;
		} else {
			return 0;
		}
		if (n - i <= k)
			return 0;
		for (size_t j = 1; j <= k; j++) {
			if ((s[i + j] & 0xc0) != 0x80)
				return 0;
			c = (c << 6) | (s[i + j] & 0x3fu);
		}
		if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
			return 0;
		i += k + 1;
	}
	return 1;
}

/* A rendered document: valid UTF-8 that parses as JSON (what names it in the message when
 * not); the caller frees it (json_decref). */
static inline json_t *fz_json_doc(const oxr_buf *b, size_t flags, const char *what)
{
	FZ_CHECK(fz_utf8_valid((const unsigned char *)b->data, b->len));
	json_error_t je;
	json_t *j = json_loadb(b->data, b->len, flags, &je);
	if (j == NULL)
		fprintf(stderr, "%s: %s at %d\n", what, je.text, je.position);
	FZ_CHECK(j != NULL);
	return j;
}

#endif /* FUZZ_COMMON_H */
