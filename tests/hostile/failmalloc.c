/*
 * failmalloc.c — an LD_PRELOAD shim for the hostile suite's out-of-memory test (curl's
 * "torture" idea): the FAILMALLOC_AT-th call to malloc, calloc, realloc, posix_memalign
 * or aligned_alloc of the process fails (NULL, errno ENOMEM); every other call goes to
 * glibc.  With FAILMALLOC_AT=0 nothing fails and, when the process exits, the number of
 * calls made is written to the file FAILMALLOC_COUNT names (so the test knows how many
 * runs cover every call); SIGUSR2 writes it at any moment.  FAILMALLOC_SKIP="libcgraph,libgvc" leaves out (neither counts
 * nor fails) calls made from shared objects whose path contains one of those words
 * (directly or through a libc helper such as strdup: the first frames are looked at): Graphviz does not check its allocations (it crashes or exits, which is why the
 * service lays out in a worker process), and the test is about onnxviz's own handling.
 * Test code only; built by tests/hostile/run.sh (plain builds: under AddressSanitizer the
 * allocator is ASan's own).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);

static long fail_at = -1; /* -1: not read yet */
static long calls;
static const char *skip;
static __thread int inside; /* dladdr may allocate: no second look from within */

/* True when the code at pc lies in a shared object FAILMALLOC_SKIP names. */
static int in_skipped_object(const void *pc)
{
	Dl_info info;
	int hit = 0;
	if (dladdr(pc, &info) != 0 && info.dli_fname != NULL) {
		const char *w = skip;
		while (*w != '\0' && !hit) {
			size_t n = strcspn(w, ",");
			char word[64];
			if (n > 0 && n < sizeof(word)) {
				memcpy(word, w, n);
				word[n] = '\0';
				hit = strstr(info.dli_fname, word) != NULL;
			}
			w += n + (w[n] == ',');
		}
	}
	return hit;
}

/* True when the allocation comes from a skipped object, directly or through one or two
 * libc helpers (strdup, ...): the first frames of the stack are looked at. */
static int skipped(void)
{
	if (skip == NULL || *skip == '\0' || inside)
		return 0;
	inside = 1;
	void *frames[6];
	int n = backtrace(frames, 6);
	int hit = 0;
	for (int i = 2; i < n && !hit; i++) /* 0: here, 1: fail_now_from's caller (the shim) */
		hit = in_skipped_object(frames[i]);
	inside = 0;
	return hit;
}

static int fail_now(void)
{
	if (fail_at < 0) {
		const char *e = getenv("FAILMALLOC_AT"); /* getenv allocates nothing */
		skip = getenv("FAILMALLOC_SKIP");
		fail_at = e != NULL ? atol(e) : 0;
	}
	if (skipped())
		return 0;
	long n = __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
	if (fail_at > 0 && n == fail_at) {
		errno = ENOMEM;
		return 1;
	}
	return 0;
}

void *malloc(size_t n)
{
	return fail_now() ? NULL : __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
	return fail_now() ? NULL : __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
	return fail_now() ? NULL : __libc_realloc(p, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
	if (fail_now())
		return ENOMEM;
	void *p = __libc_memalign(align, n);
	if (p == NULL)
		return ENOMEM;
	*out = p;
	return 0;
}

void *aligned_alloc(size_t align, size_t n)
{
	return fail_now() ? NULL : __libc_memalign(align, n);
}

static const char *count_path;

/* Write the number of calls so far to FAILMALLOC_COUNT (async-signal-safe). */
static void report_now(void)
{
	if (count_path == NULL)
		return;
	int fd = open(count_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	char buf[24];
	long v = __atomic_load_n(&calls, __ATOMIC_RELAXED);
	size_t n = sizeof(buf);
	buf[--n] = '\n';
	do {
		buf[--n] = (char)('0' + v % 10);
		v /= 10;
	} while (v > 0 && n > 0);
	(void)!write(fd, buf + n, sizeof(buf) - n);
	close(fd);
}

static void on_usr2(int sig)
{
	(void)sig;
	report_now();
}

/* SIGUSR2 writes the count at any moment (a server between phases). */
__attribute__((constructor)) static void setup(void)
{
	count_path = getenv("FAILMALLOC_COUNT");
	if (count_path != NULL)
		signal(SIGUSR2, on_usr2);
}

__attribute__((destructor)) static void report(void)
{
	if (fail_at == 0)
		report_now();
}
