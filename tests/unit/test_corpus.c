/*
 * test_corpus.c — every real model of the corpus ($ONNXVIZ_CORPUS/models/, recursively: *.onnx) parses
 * without error, both mmap'd (oxp_model_open) and from a buffer (oxp_model_parse) with the
 * same result, and every serialized TensorProto of the test data sets (*.pb) parses as a
 * lone tensor.  The corpus's README lists what is there; at least 150 models are expected.
 */
#define _XOPEN_SOURCE 700
#include "parser/oxp.h"

#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define MAX_FILES 4096

static char *models[MAX_FILES], *tensors[MAX_FILES];
static size_t nmodels, ntensors;

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int collect(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st, (void)ftw;
	if (type != FTW_F)
		return 0;
	if (ends_with(path, ".onnx") && nmodels < MAX_FILES)
		models[nmodels++] = strdup(path);
	else if (ends_with(path, ".pb") && ntensors < MAX_FILES)
		tensors[ntensors++] = strdup(path);
	return 0;
}

static int setup(void **state)
{
	(void)state;
	const char *corpus = getenv("ONNXVIZ_CORPUS");
	char dir[1024];
	snprintf(dir, sizeof(dir), "%s/models", corpus ? corpus : "../shared/corpus");
	if (nftw(dir, collect, 16, FTW_PHYS) != 0) {
		fprintf(stderr, "test_corpus: cannot walk %s (set ONNXVIZ_CORPUS)\n", dir);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	for (size_t i = 0; i < nmodels; i++)
		free(models[i]);
	for (size_t i = 0; i < ntensors; i++)
		free(tensors[i]);
	return 0;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	long n = ftell(f);
	assert_true(n >= 0);
	rewind(f);
	uint8_t *buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static size_t count_nodes(const oxp_graph *g)
{
	size_t n = g->nnodes;
	for (size_t i = 0; i < g->nnodes; i++)
		for (size_t j = 0; j < g->nodes[i].nattrs; j++) {
			const oxp_attr *a = &g->nodes[i].attrs[j];
			if (a->g != NULL)
				n += count_nodes(a->g);
			for (size_t k = 0; k < a->ngraphs; k++)
				n += count_nodes(&a->graphs[k]);
		}
	return n;
}

static void test_every_model_parses(void **state)
{
	(void)state;
	assert_true(nmodels >= 150);
	size_t failed = 0, nodes = 0;
	for (size_t i = 0; i < nmodels; i++) {
		oxp_model *m = NULL;
		oxp_error e;
		if (oxp_model_open(&m, models[i], NULL, &e) != OXP_OK) {
			char buf[700];
			fprintf(stderr, "%s: %s: %s\n", models[i], oxp_code_name(e.code),
			        oxp_error_format(&e, buf, sizeof(buf)));
			failed++;
			continue;
		}
		const oxp_model_proto *p = oxp_model_proto_get(m);
		assert_non_null(p->graph);
		assert_true(p->ir_version >= 3);
		assert_true(p->nopset_import >= 1);
		assert_true(p->graph->nnodes >= 1);
		size_t n = count_nodes(p->graph);
		nodes += n;
		/* the same bytes from a buffer: same structure */
		size_t len;
		uint8_t *buf = slurp(models[i], &len);
		oxp_model *m2 = NULL;
		assert_int_equal(oxp_model_parse(&m2, buf, len, NULL, &e), OXP_OK);
		const oxp_model_proto *p2 = oxp_model_proto_get(m2);
		assert_int_equal(oxp_model_size(m2), oxp_model_size(m));
		assert_int_equal(count_nodes(p2->graph), n);
		assert_int_equal(p2->graph->ninitializers, p->graph->ninitializers);
		assert_int_equal(oxp_model_arena_bytes(m2), oxp_model_arena_bytes(m));
		oxp_model_free(m2);
		free(buf);
		oxp_model_free(m);
	}
	printf("test_corpus: %zu models, %zu nodes (subgraphs included), %zu failed\n", nmodels,
	       nodes, failed);
	assert_int_equal(failed, 0);
}

static void test_every_tensor_parses(void **state)
{
	(void)state;
	assert_true(ntensors >= 100);
	size_t failed = 0;
	for (size_t i = 0; i < ntensors; i++) {
		size_t len;
		uint8_t *buf = slurp(tensors[i], &len);
		oxp_model *m = NULL;
		oxp_error e;
		if (oxp_tensor_file_parse(&m, buf, len, NULL, &e) != OXP_OK) {
			fprintf(stderr, "%s: %s: %s\n", tensors[i], oxp_code_name(e.code), e.message);
			failed++;
		} else {
			const oxp_tensor *t = oxp_model_tensor_get(m);
			assert_non_null(t);
			assert_true(t->data_type > 0);
			assert_true(t->storage != OXP_STORE_NONE || t->ndims > 0);
			oxp_model_free(m);
		}
		free(buf);
	}
	printf("test_corpus: %zu tensors, %zu failed\n", ntensors, failed);
	assert_int_equal(failed, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_model_parses),
	    cmocka_unit_test(test_every_tensor_parses),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
