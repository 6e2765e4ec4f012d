/*
 * failmalloc.c — an LD_PRELOAD shim for the hostile suite's out-of-memory test (curl's
 * "torture" idea): the FAILMALLOC_AT-th call to malloc, calloc, realloc, posix_memalign
 * or aligned_alloc of the process fails (NULL, errno ENOMEM); every other call goes to
 * glibc.  With FAILMALLOC_AT=0 nothing fails and, when the process exits, the number of
 * calls made is written to the file FAILMALLOC_COUNT names (so the test knows how many
 * runs cover every call); SIGUSR2 writes it at any moment.  With FAILMALLOC_ARM=1 the
 * calls are counted (and FAILMALLOC_AT is reached) from the process's SIGUSR1 on (which
 * writes the counts, as SIGUSR2 does: the sender waits for them): a server's start, whose
 * number of calls varies with its threads, is left out.
 * FAILMALLOC_RUN=K fails K calls in a row from FAILMALLOC_AT on (a burst: the error path's
 * own allocations fail too); 1 when not set.  FAILMALLOC_TRACE=1 writes the stack of
 * each failed call to standard error (backtrace_symbols_fd: no allocation), to find the
 * code behind a wrong answer.  FAILMALLOC_SKIP="libcgraph,libgvc" leaves out (neither counts
 * nor fails) calls made from shared objects whose path contains one of those words
 * (directly or through a libc helper such as strdup: the first frames are looked at): Graphviz does not check its allocations (it crashes or exits, which is why the
 * service lays out in a worker process), and the test is about onnxviz's own handling.
 * FAILMALLOC_SKIP_OWN="libmicrohttpd" leaves out the calls such an object makes on its own
 * behalf: from it (first frames), with no frame of the program itself on the stack (a
 * libmicrohttpd polling thread's poll array, a connection it accepts); the calls it makes
 * for the program (a response the service creates, its callbacks' own) still count.
 * Test code only; built by tests/hostile/run.sh (plain builds: under AddressSanitizer the
 * allocator is ASan's own).
 *
 * The same for file I/O: FAILIO_AT=N makes the Nth call to open/openat, write/pwrite or
 * fsync/fdatasync on a file or folder, rename/renameat/renameat2 or mkdir/mkdirat of the
 * process fail with
 * FAILIO_ERRNO (EIO, or ENOSPC; or EMFILE, which only opens count and fail with, as when the
 * process is out of descriptors); FAILIO_COUNT names the file the count goes to (at exit
 * with FAILIO_AT=0, and on SIGUSR2).  Only direct calls are seen: stdio's own writes
 * inside glibc are not (the service writes its store with these calls).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);

static long fail_at = -1; /* -1: not read yet */
static long fail_run = 1;
static int trace;
static long calls;
static int armed = 1; /* 0 from the start with FAILMALLOC_ARM=1, until SIGUSR1 */
static const char *skip, *skip_own;
static uintptr_t prog_lo, prog_hi; /* the program's own code: [lo, hi) */
static __thread int inside; /* dladdr may allocate: no second look from within */

/* True when the code at pc lies in a shared object the list (FAILMALLOC_SKIP's) names. */
static int in_named_object(const void *pc, const char *list)
{
	Dl_info info;
	int hit = 0;
	if (dladdr(pc, &info) != 0 && info.dli_fname != NULL) {
		const char *w = list;
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

/* The program's first loaded segment to its last (dl_iterate_phdr: no allocation; the
 * first object it reports is the program); found once, by the constructor. */
static int find_program(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		if (prog_hi == 0 || lo < prog_lo)
			prog_lo = lo;
		if (hi > prog_hi)
			prog_hi = hi;
	}
	return 1; /* the program only */
}

/* True when one of the first frames (the caller, or the caller of a libc helper such as
 * strdup) lies in an object the list names; 0: here, 1: the shim's allocator. */
static int from_named(void *const *frames, int n, const char *list)
{
	for (int i = 2; i < n && i < 6; i++)
		if (in_named_object(frames[i], list))
			return 1;
	return 0;
}

/* True when the allocation is left out: FAILMALLOC_SKIP's objects, or FAILMALLOC_SKIP_OWN's
 * with no frame of the program on the stack. */
static int skipped(void)
{
	int by_name = skip != NULL && *skip != '\0', own = skip_own != NULL && *skip_own != '\0';
	if ((!by_name && !own) || inside)
		return 0;
	inside = 1;
	void *frames[48];
	int n = backtrace(frames, own ? 48 : 6);
	int hit = by_name && from_named(frames, n, skip);
	if (!hit && own && from_named(frames, n, skip_own)) {
		hit = 1;
		for (int i = 2; i < n && hit; i++)
			hit = !((uintptr_t)frames[i] >= prog_lo && (uintptr_t)frames[i] < prog_hi);
	}
	inside = 0;
	return hit;
}

static int fail_now(void)
{
	if (fail_at < 0) {
		const char *e = getenv("FAILMALLOC_AT"); /* getenv allocates nothing */
		skip = getenv("FAILMALLOC_SKIP");
		skip_own = getenv("FAILMALLOC_SKIP_OWN");
		fail_at = e != NULL ? atol(e) : 0;
		const char *k = getenv("FAILMALLOC_RUN");
		fail_run = k != NULL && atol(k) > 0 ? atol(k) : 1;
		const char *t = getenv("FAILMALLOC_TRACE");
		trace = t != NULL && strcmp(t, "1") == 0;
	}
	if (skipped())
		return 0;
	long n = __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
	if (fail_at > 0 && n >= fail_at && n - fail_at < fail_run &&
	    __atomic_load_n(&armed, __ATOMIC_ACQUIRE)) {
		if (trace && !inside) {
			inside = 1;
			void *frames[16];
			int nf = backtrace(frames, 16);
			static const char head[] = "failmalloc: failed here\n";
			(void)!write(2, head, sizeof(head) - 1);
			backtrace_symbols_fd(frames, nf, 2);
			inside = 0;
		}
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

/* --- file I/O (raw system calls: syscall() sets errno and returns -1 on failure) --- */
static long io_fail_at = -1, io_calls;
static int io_errno = EIO;

static void io_config(void)
{
	if (io_fail_at < 0) {
		const char *e = getenv("FAILIO_AT"), *en = getenv("FAILIO_ERRNO");
		io_errno = en == NULL               ? EIO
		           : !strcmp(en, "ENOSPC") ? ENOSPC
		           : !strcmp(en, "EMFILE") ? EMFILE
		                                   : EIO;
		io_fail_at = e != NULL ? atol(e) : 0;
	}
}

static int io_fail_now(void)
{
	io_config();
	if (io_errno == EMFILE)
		return 0; /* only opens count (io_open_fails) */
	long n = __atomic_add_fetch(&io_calls, 1, __ATOMIC_RELAXED);
	if (io_fail_at > 0 && n == io_fail_at) {
		errno = io_errno;
		return 1;
	}
	return 0;
}

/* An open counts and fails for every errno (EMFILE too). */
static int io_open_fails(void)
{
	io_config();
	if (io_errno != EMFILE)
		return io_fail_now();
	long n = __atomic_add_fetch(&io_calls, 1, __ATOMIC_RELAXED);
	if (io_fail_at > 0 && n == io_fail_at) {
		errno = EMFILE;
		return 1;
	}
	return 0;
}

/* The mode argument exists only with O_CREAT or O_TMPFILE. */
static int vopenat(int dirfd, const char *path, int flags, va_list ap)
{
	mode_t mode = flags & (O_CREAT | O_TMPFILE) ? va_arg(ap, mode_t) : 0;
	return io_open_fails() ? -1 : (int)(syscall(SYS_openat, dirfd, path, flags, mode));
}

int open(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	int r = vopenat(AT_FDCWD, path, flags, ap);
	va_end(ap);
	return r;
}

int open64(const char *path, int flags, ...) __attribute__((alias("open")));

int openat(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	int r = vopenat(dirfd, path, flags, ap);
	va_end(ap);
	return r;
}

int openat64(int dirfd, const char *path, int flags, ...) __attribute__((alias("openat")));

/* Writes and syncs count (and fail) on files and folders only: the pipes, eventfds and
 * sockets of the server's threads cannot fail with EIO or ENOSPC. */
static int on_file(int fd)
{
	struct stat st;
	return syscall(SYS_fstat, fd, &st) == 0 && (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode));
}

ssize_t write(int fd, const void *buf, size_t n)
{
	return on_file(fd) && io_fail_now() ? -1 : (ssize_t)(syscall(SYS_write, fd, buf, n));
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	return on_file(fd) && io_fail_now() ? -1 : (ssize_t)(syscall(SYS_pwrite64, fd, buf, n, off));
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off) __attribute__((alias("pwrite")));

int fsync(int fd)
{
	return on_file(fd) && io_fail_now() ? -1 : (int)(syscall(SYS_fsync, fd));
}

int fdatasync(int fd)
{
	return on_file(fd) && io_fail_now() ? -1 : (int)(syscall(SYS_fdatasync, fd));
}

int rename(const char *a, const char *b)
{
	return io_fail_now() ? -1 : (int)(syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, 0));
}

int renameat(int da, const char *a, int db, const char *b)
{
	return io_fail_now() ? -1 : (int)(syscall(SYS_renameat2, da, a, db, b, 0));
}

int renameat2(int da, const char *a, int db, const char *b, unsigned flags)
{
	return io_fail_now() ? -1 : (int)(syscall(SYS_renameat2, da, a, db, b, flags));
}

int mkdir(const char *path, mode_t mode)
{
	return io_fail_now() ? -1 : (int)(syscall(SYS_mkdirat, AT_FDCWD, path, mode));
}

int mkdirat(int dirfd, const char *path, mode_t mode)
{
	return io_fail_now() ? -1 : (int)(syscall(SYS_mkdirat, dirfd, path, mode));
}

/* --- counts --- */
static const char *count_path, *io_count_path;

/* Write v to path (async-signal-safe; raw system calls: open and write are ours above). */
static void put_count(const char *path, long v)
{
	if (path == NULL)
		return;
	int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	                      0600);
	if (fd < 0)
		return;
	char buf[24];
	size_t n = sizeof(buf);
	buf[--n] = '\n';
	do {
		buf[--n] = (char)('0' + v % 10);
		v /= 10;
	} while (v > 0 && n > 0);
	(void)!syscall(SYS_write, fd, buf + n, sizeof(buf) - n);
	close(fd);
}

/* Write the numbers of calls so far to FAILMALLOC_COUNT and FAILIO_COUNT. */
static void report_now(void)
{
	put_count(count_path, __atomic_load_n(&calls, __ATOMIC_RELAXED));
	put_count(io_count_path, __atomic_load_n(&io_calls, __ATOMIC_RELAXED));
}

static void on_usr2(int sig)
{
	(void)sig;
	report_now();
}

/* SIGUSR1 (FAILMALLOC_ARM=1): the count starts again from here, and now may fail; the
 * counts are written as for SIGUSR2, which tells the sender it is armed (two signals
 * sent one after the other may be handled in either order, on two threads). */
static void on_usr1(int sig)
{
	(void)sig;
	__atomic_store_n(&calls, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&armed, 1, __ATOMIC_RELEASE);
	report_now();
}

/* SIGUSR2 writes the counts at any moment (a server between phases). */
__attribute__((constructor)) static void setup(void)
{
	count_path = getenv("FAILMALLOC_COUNT");
	io_count_path = getenv("FAILIO_COUNT");
	if (count_path != NULL || io_count_path != NULL)
		signal(SIGUSR2, on_usr2);
	dl_iterate_phdr(find_program, NULL);
	const char *arm = getenv("FAILMALLOC_ARM");
	if (arm != NULL && strcmp(arm, "1") == 0) {
		armed = 0;
		signal(SIGUSR1, on_usr1);
	}
}

__attribute__((destructor)) static void report(void)
{
	if (fail_at <= 0 && io_fail_at <= 0)
		report_now();
}
