/*
 * parsebench.c — times the parser inside its own process, for tests/bench/parse.sh.
 *
 *   parsebench [-n RUNS] [--buffer | --low-rss] FILE
 *
 * Default: each run is oxp_model_open(FILE) + oxp_model_free (mmap, parse, unmap) of a warm
 * file.  --low-rss: oxp_model_open_ex(OXP_OPEN_LOW_RSS) instead (structure pages copied,
 * as the CLI and the service open models).  --buffer: the file is read into memory once,
 * then each run is oxp_model_parse of
 * that buffer + oxp_model_free.  One untimed warm-up run comes first; start-up and reading
 * are never timed.  Prints one line:
 *   runs=N median_ms=M min_ms=M max_ms=M nodes=K initializers=I arena_kb=A peak_rss_kb=R
 * (peak_rss_kb: VmHWM of this process, from /proc/self/status).  Exit 1 when the file does not parse.
 */
#include "parser/oxp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Peak RSS of this program's own address space (VmHWM), in KB; -1 when unknown.  Unlike
 * getrusage's ru_maxrss, it does not include what the parent had mapped before exec. */
static long peak_rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	if (f == NULL)
		return -1;
	char line[256];
	long kb = -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static uint8_t *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL || fseek(f, 0, SEEK_END) != 0) {
		if (f)
			fclose(f);
		return NULL;
	}
	long n = ftell(f);
	rewind(f);
	uint8_t *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
	if (buf != NULL && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* One timed parse; returns the model (caller frees) or NULL after printing the error. */
static unsigned open_flags;

static oxp_model *parse_once(const char *path, const uint8_t *buf, size_t len, double *ms)
{
	oxp_model *m = NULL;
	oxp_error e;
	double t0 = now_ms();
	oxp_code rc = buf ? oxp_model_parse(&m, buf, len, NULL, &e)
	                  : oxp_model_open_ex(&m, path, NULL, open_flags, &e);
	*ms = now_ms() - t0;
	if (rc != OXP_OK) {
		char msg[700];
		fprintf(stderr, "parsebench: %s: %s: %s\n", path, oxp_code_name(rc),
		        oxp_error_format(&e, msg, sizeof(msg)));
		return NULL;
	}
	return m;
}

int main(int argc, char **argv)
{
	int runs = 20;
	bool buffer = false;
	const char *path = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
			runs = atoi(argv[++i]);
		else if (strcmp(argv[i], "--buffer") == 0)
			buffer = true;
		else if (strcmp(argv[i], "--low-rss") == 0)
			open_flags = OXP_OPEN_LOW_RSS;
		else
			path = argv[i];
	}
	if (path == NULL || runs < 1 || runs > 100000) {
		fprintf(stderr, "usage: parsebench [-n RUNS] [--buffer | --low-rss] FILE\n");
		return 2;
	}
	size_t len = 0;
	uint8_t *buf = NULL;
	if (buffer && (buf = read_all(path, &len)) == NULL) {
		fprintf(stderr, "parsebench: %s: cannot read\n", path);
		return 2;
	}
	double ms;
	oxp_model *m = parse_once(path, buf, len, &ms); /* warm-up, untimed */
	if (m == NULL)
		return 1;
	const oxp_model_proto *p = oxp_model_proto_get(m);
	size_t nodes = p->graph ? p->graph->nnodes : 0;
	size_t inits = p->graph ? p->graph->ninitializers : 0;
	size_t arena = oxp_model_arena_bytes(m);
	oxp_model_free(m);
	double *t = malloc((size_t)runs * sizeof(*t));
	if (t == NULL)
		return 2;
	for (int i = 0; i < runs; i++) {
		m = parse_once(path, buf, len, &t[i]);
		if (m == NULL)
			return 1;
		oxp_model_free(m);
	}
	qsort(t, (size_t)runs, sizeof(*t), cmp_double);
	double median = runs % 2 ? t[runs / 2] : (t[runs / 2 - 1] + t[runs / 2]) / 2;
	printf("runs=%d median_ms=%.4f min_ms=%.4f max_ms=%.4f nodes=%zu initializers=%zu "
	       "arena_kb=%zu peak_rss_kb=%ld\n",
	       runs, median, t[0], t[runs - 1], nodes, inits, arena / 1024, peak_rss_kb());
	free(t);
	free(buf);
	return 0;
}
