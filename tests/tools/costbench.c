/*
 * costbench — how long the cost of a linked model takes (oxp_cost_compute, issue 25:
 * target 5 ms for a 6,600-node model in process).
 *
 *   costbench MODEL.onnx [RUNS]
 *
 * Parses and links the model once (with shape inference), then computes its cost RUNS
 * times (default 50), each into a fresh arena, and prints one line: nodes, symbols, the
 * total MACs, and the median and fastest times.  Exit status 1 when the model does not
 * parse or link, or the cost fails.
 */
#include "parser/oxp.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: costbench MODEL.onnx [RUNS]\n");
		return 2;
	}
	int runs = argc == 3 ? atoi(argv[2]) : 50;
	if (runs < 1 || runs > 10000)
		runs = 50;
	oxp_model *m;
	oxp_dag *d;
	oxp_error err;
	oxp_dag_options opt = {.infer_shapes = true};
	if (oxp_model_open(&m, argv[1], NULL, &err) != OXP_OK ||
	    oxp_dag_build(&d, m, &opt, &err) != OXP_OK) {
		fprintf(stderr, "%s: %s\n", argv[1], err.message);
		return 1;
	}
	double *ms = calloc((size_t)runs, sizeof(double));
	char macs[256] = "";
	uint32_t nsym = 0;
	int rc = ms == NULL;
	for (int i = 0; i < runs && rc == 0; i++) {
		oxp_arena *a = oxp_arena_new((size_t)256 << 20);
		const oxp_cost *c;
		double t0 = now_ms();
		if (a == NULL || oxp_cost_compute(d, a, NULL, &c, &err) != OXP_OK) {
			fprintf(stderr, "cost: out of memory\n");
			rc = 1;
		} else {
			ms[i] = now_ms() - t0;
			oxp_cost_poly_format(c, &c->total.macs, 0, macs, sizeof(macs));
			nsym = c->nsymbols;
		}
		oxp_arena_free(a);
	}
	if (rc == 0) {
		qsort(ms, (size_t)runs, sizeof(double), by_value);
		printf("%s: nodes %u symbols %u MACs %s; cost median %.3f ms (fastest %.3f)\n", argv[1],
		       oxp_dag_get(d)->nnodes, nsym, macs, ms[runs / 2], ms[0]);
	}
	free(ms);
	oxp_dag_free(d);
	oxp_model_free(m);
	return rc;
}
