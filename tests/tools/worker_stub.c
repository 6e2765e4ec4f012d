/*
 * worker_stub.c — a stand-in for `onnxviz __render` that misbehaves on request, so
 * tests/render/worker.py can see how oxr_render_isolated() copes.
 *
 * Called as the worker: worker_stub __render MODEL FORMAT OPTIONS.  The last component of
 * MODEL says what to do:
 *   ok        print "stub FORMAT OPTIONS" and exit 0
 *   env       print the limits it runs under, its open descriptors and its ignored and
 *             blocked signals (hex masks of /proc/self/status), exit 0:
 *             "cpu=<RLIMIT_CPU> as=<RLIMIT_AS> core=<RLIMIT_CORE> stdin=<null|other>
 *              fds=<list> ign=<SigIgn> blk=<SigBlk>"
 *   sleep     sleep 60 s (wall-clock limit)
 *   spin      burn CPU forever (RLIMIT_CPU)
 *   segv      die of SIGSEGV;  abort: die of SIGABRT
 *   exit5     "it broke" on stderr, exit 5
 *   protocol  "layout_failed<TAB>Graphviz said no" on stderr, exit 3 (a render error)
 *   noisy     100 KB on stderr, exit 3 without the protocol's tab
 *   flood     write to stdout until killed (output cap)
 *   detach    close stdout and stderr, then sleep 8 s (the caller must still stop it)
 * Anything else: exit 9.
 */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

static unsigned long long limit(__rlimit_resource_t resource)
{
	struct rlimit r;
	if (getrlimit(resource, &r) != 0)
		return 0;
	return r.rlim_cur == RLIM_INFINITY ? 0 : (unsigned long long)r.rlim_cur;
}

static void nap(unsigned seconds)
{
	struct timespec t = {(time_t)seconds, 0};
	while (nanosleep(&t, &t) != 0)
		;
}

static int env_report(void)
{
	struct stat st;
	int null_stdin = fstat(0, &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 &&
	                 minor(st.st_rdev) == 3;
	printf("cpu=%llu as=%llu core=%llu stdin=%s fds=", limit(RLIMIT_CPU), limit(RLIMIT_AS),
	       limit(RLIMIT_CORE), null_stdin ? "null" : "other");
	DIR *d = opendir("/proc/self/fd");
	if (d == NULL)
		return 1;
	int self = dirfd(d);
	const char *sep = "";
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.' || atoi(e->d_name) == self)
			continue;
		printf("%s%s", sep, e->d_name);
		sep = ",";
	}
	closedir(d);
	FILE *status = fopen("/proc/self/status", "r");
	if (status == NULL)
		return 1;
	char line[256], ign[32] = "?", blk[32] = "?";
	while (fgets(line, sizeof(line), status) != NULL) {
		if (!strncmp(line, "SigIgn:", 7))
			sscanf(line + 7, "%31s", ign);
		else if (!strncmp(line, "SigBlk:", 7))
			sscanf(line + 7, "%31s", blk);
	}
	fclose(status);
	printf(" ign=%s blk=%s\n", ign, blk);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 5 || strcmp(argv[1], "__render") != 0)
		return 8;
	const char *what = strrchr(argv[2], '/') ? strrchr(argv[2], '/') + 1 : argv[2];
	if (!strcmp(what, "ok")) {
		printf("stub %s %s", argv[3], argv[4]);
		return 0;
	}
	if (!strcmp(what, "env"))
		return env_report();
	if (!strcmp(what, "sleep")) {
		nap(60);
		return 0;
	}
	if (!strcmp(what, "spin")) {
		for (volatile unsigned long i = 0;; i++)
			;
	}
	/* a sanitizer build handles SIGSEGV itself and exits: die of the signal regardless */
	if (!strcmp(what, "segv")) {
		signal(SIGSEGV, SIG_DFL);
		raise(SIGSEGV);
	}
	if (!strcmp(what, "abort")) {
		signal(SIGABRT, SIG_DFL);
		abort();
	}
	if (!strcmp(what, "exit5")) {
		fprintf(stderr, "it broke\n");
		return 5;
	}
	if (!strcmp(what, "protocol")) {
		fprintf(stderr, "layout_failed\tGraphviz said no\n");
		return 3;
	}
	if (!strcmp(what, "noisy")) {
		for (int i = 0; i < 100 * 1024; i++)
			fputc('x', stderr);
		return 3;
	}
	if (!strcmp(what, "flood")) {
		static char block[65536];
		memset(block, 'f', sizeof(block));
		for (;;)
			if (fwrite(block, 1, sizeof(block), stdout) != sizeof(block))
				return 1;
	}
	if (!strcmp(what, "detach")) {
		fclose(stdout);
		fclose(stderr);
		nap(8);
		return 0;
	}
	return 9;
}
