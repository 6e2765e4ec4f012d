/*
 * render_isolated.c — drives oxr_render_isolated() for tests/render/worker.py.
 *
 * usage: render_isolated EXE MODEL svg|dot|json [--wall=MS] [--cpu=S] [--mem=BYTES]
 *            [--max-output=BYTES] [--threads=N] [--extra-fds=N] [--odd-signals] [-o OUT]
 *            [--KEY=VALUE ...]
 *
 * Calls oxr_render_isolated(EXE, MODEL, ...) once per thread (all at the same time), then
 * prints one line per call: "<code name>\t<output bytes>\t<elapsed ms>\t<message>", and
 * with several threads "identical\t<yes|no>" (do all successful outputs agree).  -o OUT
 * writes the first call's output.  --extra-fds=N opens N descriptors without O_CLOEXEC
 * first, so the test can see that none reaches the worker; --odd-signals ignores SIGPIPE,
 * SIGXCPU and SIGTERM and blocks SIGINT and SIGUSR1 first (the worker must not inherit
 * that: a service ignores SIGPIPE).  Other --KEY=VALUE arguments
 * are render options (oxr_options_set); a rejected one prints "bad_option\t0\t0\t<msg>".
 * Exit status: 0 when every call returned (the test judges the codes), 2 on usage errors.
 */
#include "render/oxr.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_THREADS 16

typedef struct call {
	const char *exe, *model;
	oxr_format fmt;
	const oxr_options *opt;
	const oxr_worker_limits *lim;
	oxr_buf out;
	oxr_error err;
	oxr_code rc;
	long ms;
} call;

static long now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void *run(void *arg)
{
	call *c = arg;
	long start = now_ms();
	memset(&c->err, 0, sizeof(c->err));
	c->rc = oxr_render_isolated(c->exe, c->model, c->opt, c->fmt, c->lim, &c->out, &c->err);
	c->ms = now_ms() - start;
	return NULL;
}

static unsigned long long number(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (*s == '\0' || *end != '\0') {
		fprintf(stderr, "render_isolated: bad number '%s'\n", s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: render_isolated EXE MODEL svg|dot|json [options]\n");
		return 2;
	}
	oxr_format fmt = !strcmp(argv[3], "dot")    ? OXR_FMT_DOT
	                 : !strcmp(argv[3], "json") ? OXR_FMT_LAYOUT_JSON
	                                            : OXR_FMT_SVG;
	oxr_options opt;
	oxr_options_default(&opt);
	oxr_worker_limits lim;
	oxr_worker_limits_default(&lim);
	unsigned threads = 1, extra_fds = 0;
	bool odd_signals = false;
	const char *out_path = NULL;
	for (int i = 4; i < argc; i++) {
		const char *a = argv[i];
		if (!strncmp(a, "--wall=", 7))
			lim.wall_ms = (unsigned)number(a + 7);
		else if (!strncmp(a, "--cpu=", 6))
			lim.cpu_seconds = (unsigned)number(a + 6);
		else if (!strncmp(a, "--mem=", 6))
			lim.memory_bytes = (size_t)number(a + 6);
		else if (!strncmp(a, "--max-output=", 13))
			lim.max_output = (size_t)number(a + 13);
		else if (!strncmp(a, "--threads=", 10))
			threads = (unsigned)number(a + 10);
		else if (!strncmp(a, "--extra-fds=", 12))
			extra_fds = (unsigned)number(a + 12);
		else if (!strcmp(a, "--odd-signals"))
			odd_signals = true;
		else if (!strcmp(a, "-o") && i + 1 < argc)
			out_path = argv[++i];
		else if (!strncmp(a, "--", 2) && strchr(a, '=') != NULL) {
			char key[64];
			size_t kl = (size_t)(strchr(a, '=') - (a + 2));
			if (kl >= sizeof(key)) {
				fprintf(stderr, "render_isolated: bad option %s\n", a);
				return 2;
			}
			memcpy(key, a + 2, kl);
			key[kl] = '\0';
			oxr_error err;
			if (oxr_options_set(&opt, key, a + 3 + kl, &err) != OXR_OK) {
				printf("%s\t0\t0\t%s\n", oxr_code_name(err.code), err.message);
				return 0;
			}
		} else {
			fprintf(stderr, "render_isolated: unknown argument %s\n", a);
			return 2;
		}
	}
	if (threads < 1 || threads > MAX_THREADS) {
		fprintf(stderr, "render_isolated: 1..%d threads\n", MAX_THREADS);
		return 2;
	}
	if (odd_signals) {
		signal(SIGPIPE, SIG_IGN);
		signal(SIGXCPU, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, SIGINT);
		sigaddset(&set, SIGUSR1);
		pthread_sigmask(SIG_BLOCK, &set, NULL);
	}
	for (unsigned i = 0; i < extra_fds; i++)
		if (open("/dev/null", O_RDONLY) < 0) /* deliberately inheritable */
			return 2;

	call calls[MAX_THREADS];
	pthread_t tids[MAX_THREADS];
	for (unsigned t = 0; t < threads; t++) {
		calls[t] = (call){.exe = argv[1], .model = argv[2], .fmt = fmt, .opt = &opt,
		                  .lim = &lim};
		oxr_buf_init(&calls[t].out, 0);
		if (pthread_create(&tids[t], NULL, run, &calls[t]) != 0)
			return 2;
	}
	for (unsigned t = 0; t < threads; t++)
		pthread_join(tids[t], NULL);
	bool identical = true;
	for (unsigned t = 0; t < threads; t++) {
		call *c = &calls[t];
		printf("%s\t%zu\t%ld\t%s\n", oxr_code_name(c->rc), c->out.len, c->ms,
		       c->rc == OXR_OK ? "" : c->err.message);
		if (c->rc == OXR_OK && calls[0].rc == OXR_OK &&
		    (c->out.len != calls[0].out.len ||
		     (c->out.len > 0 && memcmp(c->out.data, calls[0].out.data, c->out.len) != 0)))
			identical = false;
	}
	if (threads > 1)
		printf("identical\t%s\n", identical ? "yes" : "no");
	int status = 0;
	if (out_path != NULL) {
		FILE *f = fopen(out_path, "wb");
		if (f == NULL || (calls[0].out.len > 0 &&
		                  fwrite(calls[0].out.data, 1, calls[0].out.len, f) != calls[0].out.len))
			status = 2;
		if (f != NULL && fclose(f) != 0)
			status = 2;
	}
	for (unsigned t = 0; t < threads; t++)
		oxr_buf_free(&calls[t].out);
	return status;
}
