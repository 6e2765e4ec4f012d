/*
 * schemabench.c — what the operator-schema table costs a process (tests/bench/schema.sh).
 *
 * In a fresh process, times the first pass over the whole table (every version looked up
 * by domain, name and opset, and every port, attribute and constraint read: all of its
 * pages faulted in), then the median of warm passes, and prints
 *   first_us=<first pass> warm_us=<median warm pass> lookups=<per pass> ns_per_lookup=...
 * Usage: schemabench [-n PASSES]
 */
#include "parser/oxp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static size_t sink;

/* One pass: look every version up as a node would, and read all it holds. */
static size_t pass(void)
{
	size_t n = oxp_schema_count(), lookups = 0;
	for (size_t i = 0; i < n; i++) {
		oxp_schema_info si;
		oxp_schema_get_info(oxp_schema_at(i), &si);
		const oxp_schema *s = NULL;
		oxp_str dom = {si.domain, strlen(si.domain)}, op = {si.name, strlen(si.name)};
		if (oxp_schema_find(dom, op, si.since_version, &s) != OXP_SCHEMA_FOUND)
			abort();
		lookups++;
		oxp_schema_port p;
		for (uint32_t k = 0; oxp_schema_input(s, k, &p); k++)
			sink += strlen(p.name) + p.types.tensor;
		for (uint32_t k = 0; oxp_schema_output(s, k, &p); k++)
			sink += strlen(p.name) + p.types.tensor;
		oxp_schema_attr a;
		for (uint32_t k = 0; oxp_schema_attribute(s, k, &a); k++)
			sink += strlen(a.name) + (a.default_json ? strlen(a.default_json) : 0);
		oxp_schema_constraint c;
		for (uint32_t k = 0; oxp_schema_constraint_at(s, k, &c); k++)
			sink += c.types.tensor;
	}
	return lookups;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int passes = 50;
	if (argc == 3 && !strcmp(argv[1], "-n"))
		passes = atoi(argv[2]);
	if (passes < 1 || passes > 100000) {
		fprintf(stderr, "usage: schemabench [-n PASSES]\n");
		return 2;
	}
	double t0 = now_us();
	size_t lookups = pass();
	double first = now_us() - t0;
	double *t = malloc((size_t)passes * sizeof(double));
	if (t == NULL)
		return 1;
	for (int i = 0; i < passes; i++) {
		double a = now_us();
		pass();
		t[i] = now_us() - a;
	}
	qsort(t, (size_t)passes, sizeof(double), cmp);
	double warm = t[passes / 2];
	printf("first_us=%.1f warm_us=%.1f lookups=%zu ns_per_lookup=%.0f sink=%zu\n", first, warm,
	       lookups, warm * 1e3 / (double)lookups, sink % 10);
	free(t);
	return 0;
}
