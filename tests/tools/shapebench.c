/*
 * shapebench — how long linking a model takes with and without shape inference.
 *
 *   shapebench MODEL.onnx [RUNS]
 *
 * Parses the model once, then builds the dag RUNS times (default 30) each way, the two
 * ways alternating so that a change in machine load hits both alike, and prints one line:
 * nodes, values, values with an inferred type, and the median and fastest build times
 * without and with inference.  Exit status 1 when the model does not parse or link.
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

/* One build, timed into *ms; the dag is freed unless keep is given. */
static int build_once(const oxp_model *m, bool infer, double *ms, oxp_dag **keep)
{
	oxp_dag_options opt = {.infer_shapes = infer};
	oxp_error err;
	oxp_dag *d;
	double t0 = now_ms();
	if (oxp_dag_build(&d, m, &opt, &err) != OXP_OK) {
		fprintf(stderr, "dag: %s\n", err.message);
		return -1;
	}
	*ms = now_ms() - t0;
	if (keep != NULL)
		*keep = d;
	else
		oxp_dag_free(d);
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
	double *off = calloc((size_t)runs, sizeof(double));
	double *on = calloc((size_t)runs, sizeof(double));
	oxp_dag *d = NULL;
	int rc = off == NULL || on == NULL ? -1 : 0;
	for (int i = 0; i < runs && rc == 0; i++)
		rc = build_once(m, false, &off[i], NULL) != 0 ||
		             build_once(m, true, &on[i], i + 1 == runs ? &d : NULL) != 0
		         ? -1
		         : 0;
	if (rc == 0) {
		qsort(off, (size_t)runs, sizeof(double), cmp_double);
		qsort(on, (size_t)runs, sizeof(double), cmp_double);
		const oxp_dag_view *v = oxp_dag_get(d);
		uint32_t inferred = 0;
		for (uint32_t i = 0; i < v->nvalues; i++)
			inferred += v->values[i].inferred.source == OXP_SHAPE_INFERRED;
		printf("%s: nodes %u values %u inferred %u; dag build median %.3f ms (fastest %.3f) "
		       "without inference, %.3f ms (fastest %.3f) with\n",
		       argv[1], v->nnodes, v->nvalues, inferred, off[runs / 2], off[0], on[runs / 2],
		       on[0]);
	}
	oxp_dag_free(d);
	free(off);
	free(on);
	oxp_model_free(m);
	return rc == 0 ? 0 : 1;
}
