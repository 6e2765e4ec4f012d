/*
 * shapebench — how long linking a model takes with and without shape inference.
 *
 *   shapebench MODEL.onnx [RUNS]
 *
 * Parses the model once, then builds the dag RUNS times (default 30) each way, and prints
 * one line: nodes, values, the median build time without inference, with it, and the
 * values given an inferred type.  Exit status 1 when the model does not parse or link.
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

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Median time of `runs` builds (infer on or off); the last dag is kept in *keep. */
static int time_builds(const oxp_model *m, bool infer, int runs, double *median, oxp_dag **keep)
{
	double *t = calloc((size_t)runs, sizeof(double));
	oxp_dag_options opt = {.infer_shapes = infer};
	oxp_error err;
	if (t == NULL)
		return -1;
	*keep = NULL;
	for (int i = 0; i < runs; i++) {
		oxp_dag *d;
		double t0 = now_ms();
		if (oxp_dag_build(&d, m, &opt, &err) != OXP_OK) {
			fprintf(stderr, "dag: %s\n", err.message);
			free(t);
			return -1;
		}
		t[i] = now_ms() - t0;
		if (i + 1 == runs)
			*keep = d;
		else
			oxp_dag_free(d);
	}
	qsort(t, (size_t)runs, sizeof(double), cmp_double);
	*median = t[runs / 2];
	free(t);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: shapebench MODEL.onnx [RUNS]\n");
		return 2;
	}
	int runs = argc == 3 ? atoi(argv[2]) : 30;
	if (runs < 1 || runs > 10000)
		runs = 30;
	oxp_model *m;
	oxp_error err;
	if (oxp_model_open(&m, argv[1], NULL, &err) != OXP_OK) {
		fprintf(stderr, "%s: %s\n", argv[1], err.message);
		return 1;
	}
	double off, on;
	oxp_dag *d1, *d2;
	if (time_builds(m, false, runs, &off, &d1) != 0 || time_builds(m, true, runs, &on, &d2) != 0) {
		oxp_model_free(m);
		return 1;
	}
	const oxp_dag_view *v = oxp_dag_get(d2);
	uint32_t inferred = 0;
	for (uint32_t i = 0; i < v->nvalues; i++)
		inferred += v->values[i].inferred.source == OXP_SHAPE_INFERRED;
	printf("%s: nodes %u values %u inferred %u build %.3f ms without inference, %.3f ms with "
	       "(inference %.3f ms)\n",
	       argv[1], v->nnodes, v->nvalues, inferred, off, on, on - off);
	oxp_dag_free(d1);
	oxp_dag_free(d2);
	oxp_model_free(m);
	return 0;
}
