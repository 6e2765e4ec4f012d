/*
 * worker.c — layouts in a process of their own.
 *
 * Graphviz calls exit() when memory runs out, is not thread-safe, and can run for hours
 * on a crafted graph.  So the service never lays out in its own process: it runs
 * `onnxviz __render MODEL FORMAT OPTIONS` with RLIMIT_CPU and RLIMIT_AS set between fork
 * and exec, reads the result from a pipe with a wall-clock deadline and a size cap, and
 * kills the worker (SIGKILL) when it overruns.  A dead worker is an error for the one
 * request that asked; the service goes on.
 *
 * Protocol: the worker writes the rendering to stdout and exits 0; on a render error it
 * writes "<code name>\t<message>\n" to stderr and exits 3.  `onnxviz __render MODEL FORMAT
 * OPTIONS OTHER DATA OTHER_DATA` (a rendering of MODEL against OTHER, e.g. a diff; DATA:
 * the folders of their external data or "") hands both to the pair function the program
 * registered (oxr_worker_main_pair): the same process, limits and protocol.
 */
#include "render/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WORKER_RENDER_ERROR 3
/* a format as the worker is told it: "svg", "heat-svg", or a raster one with its options,
 * "png?w=1200&h=0&scale=100&theme=light&max=64000000" (oxr_raster_key) */
#define FMT_MAX (24 + OXR_RASTER_KEY_MAX)

void oxr_worker_limits_default(oxr_worker_limits *l)
{
	l->cpu_seconds = 30;
	l->memory_bytes = (size_t)2 << 30;
	l->wall_ms = 30000;
	l->max_output = (size_t)256 << 20;
}

static int64_t now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static oxr_code code_from_name(const char *name)
{
	for (int c = 1; c < OXR_E__COUNT; c++)
		if (strcmp(oxr_code_name((oxr_code)c), name) == 0)
			return (oxr_code)c;
	return OXR_E_WORKER;
}

/* Child side after fork: only async-signal-safe calls.  Default dispositions for every
 * signal (ignored signals and the blocked mask survive fork and exec: the child must die
 * of SIGPIPE/SIGXFSZ/SIGXCPU/SIGFPE/SIGSEGV like any process would), the limits, no core
 * files.  RLIMIT_AS is memory_bytes above vm_base (the caller's address space for a
 * forked copy, 0 before exec). */
static void child_setup(const oxr_worker_limits *lim, uint64_t vm_base)
{
	/* every signal, the real-time ones glibc keeps for itself included: the raw system
	 * call (libc's sigaction refuses 32 and 33) */
	struct {
		void *handler;
		unsigned long flags;
		void *restorer;
		uint64_t mask;
	} dfl = {SIG_DFL, 0, NULL, 0};
	for (long sig = 1; sig <= 64; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			syscall(SYS_rt_sigaction, sig, &dfl, NULL, sizeof(dfl.mask));
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	struct rlimit r;
	/* SIGXCPU at the soft limit (reported as a timeout), SIGKILL a second later */
	r.rlim_cur = lim->cpu_seconds ? lim->cpu_seconds : RLIM_INFINITY;
	r.rlim_max = lim->cpu_seconds ? lim->cpu_seconds + 1 : RLIM_INFINITY;
	setrlimit(RLIMIT_CPU, &r);
	if (lim->memory_bytes) {
		r.rlim_cur = r.rlim_max = vm_base + lim->memory_bytes;
		setrlimit(RLIMIT_AS, &r);
	}
	r.rlim_cur = r.rlim_max = 0;
	setrlimit(RLIMIT_CORE, &r);
}

/* Child side after fork: close every descriptor from 3 up but keep[0..n) (sorted, each
 * >= 3, no repeats): close_range over the gaps.  Without this, a forked copy that never
 * execs holds whatever the server had open at the fork (O_CLOEXEC acts at exec only): the
 * write end of another request's pipe, whose reader then waits for this copy to end, the
 * clients' sockets and the listening socket. */
static void close_all_but(const int *keep, size_t n)
{
	unsigned lo = 3;
	for (size_t i = 0; i <= n; i++) {
		unsigned hi = i < n ? (unsigned)keep[i] : ~0u; /* the next kept one, or the end */
		if (hi > lo && close_range(lo, hi - 1, 0) != 0) /* kernels before 5.9: one by one */
			for (unsigned fd = lo; fd < hi && fd < 65536; fd++)
				close((int)fd);
		if (i < n)
			lo = (unsigned)keep[i] + 1;
	}
}

/* Child side between fork and exec. */
static void child_exec(const char *exe, char *const argv[], int out_fd, int err_fd,
                       const oxr_worker_limits *lim)
{
	child_setup(lim, 0);
	int devnull = open("/dev/null", O_RDONLY);
	if (devnull >= 0) {
		dup2(devnull, 0);
	}
	dup2(out_fd, 1);
	dup2(err_fd, 2);
	/* nothing else of the parent's (sockets, store files) crosses into the worker */
	if (close_range(3, ~0u, 0) != 0)
		for (int fd = 3; fd < 65536; fd++)
			close(fd);
	execv(exe, argv);
	_exit(127);
}

/* Child side of a forked computation: fn writes its answer to out_fd; the child then
 * exits without running the caller's atexit handlers or flushing its stdio.  It dies
 * with the thread that forked it (PR_SET_PDEATHSIG), so a server that goes away leaves
 * no computation behind. */
static void child_fn(oxr_child_fn fn, void *ctx, int out_fd, const int *keep, size_t nkeep,
                     const oxr_worker_limits *lim, uint64_t vm_base, pid_t parent)
{
	close_all_but(keep, nkeep);
	child_setup(lim, vm_base);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(126);
	fn(ctx, out_fd);
	_exit(0);
}

/* The caller's address space in bytes (/proc/self/statm's first field), 0 when unknown. */
static uint64_t vm_size(void)
{
	int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	char text[64];
	ssize_t n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	text[n] = '\0';
	unsigned long long pages = strtoull(text, NULL, 10);
	long page = sysconf(_SC_PAGESIZE);
	return page > 0 && pages < UINT64_MAX / (uint64_t)page ? pages * (uint64_t)page : 0;
}

oxr_code oxr_child_run(const char *exe, char *const argv[], oxr_child_fn fn, void *ctx,
                       const int *keep, size_t nkeep, const oxr_worker_limits *lim,
                       oxr_buf *out, oxr_child_result *res, oxr_error *err)
{
	memset(res, 0, sizeof(*res));
	res->exit_code = -1;
	if (nkeep > OXR_CHILD_KEEP_MAX)
		return oxr__fail(err, OXR_E_IO, "more than %d descriptors to keep", OXR_CHILD_KEEP_MAX);
	int po[2], pe[2] = {-1, -1};
	if (pipe2(po, O_CLOEXEC) != 0)
		return oxr__fail(err, OXR_E_IO, "pipe: %s", strerror(errno));
	/* what the forked copy keeps, sorted for close_all_but (made here: the child may
	 * only make async-signal-safe calls) */
	int kept[OXR_CHILD_KEEP_MAX + 1];
	size_t nk = 0;
	kept[nk++] = po[1];
	for (size_t i = 0; i < nkeep; i++) {
		int fd = keep[i];
		size_t j = nk;
		if (fd < 3)
			continue; /* -1, or stdio, which stays anyway */
		while (j > 0 && kept[j - 1] > fd)
			j--;
		if (j > 0 && kept[j - 1] == fd)
			continue;
		memmove(kept + j + 1, kept + j, (nk - j) * sizeof(kept[0]));
		kept[j] = fd;
		nk++;
	}
	if (fn == NULL && pipe2(pe, O_CLOEXEC) != 0) {
		close(po[0]);
		close(po[1]);
		return oxr__fail(err, OXR_E_IO, "pipe: %s", strerror(errno));
	}
	uint64_t vm_base = fn != NULL && lim->memory_bytes ? vm_size() : 0;
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(po[0]);
		close(po[1]);
		if (pe[0] >= 0) {
			close(pe[0]);
			close(pe[1]);
		}
		return oxr__fail(err, OXR_E_IO, "fork: %s", strerror(e));
	}
	if (pid == 0) {
		if (fn != NULL) {
			child_fn(fn, ctx, po[1], kept, nk, lim, vm_base, parent);
		}
		child_exec(exe, argv, po[1], pe[1], lim);
	}
	close(po[1]);
	if (pe[1] >= 0)
		close(pe[1]);

	size_t errlen = 0;
	bool too_big = false, timed_out = false;
	int64_t deadline = now_ms() + (lim->wall_ms ? lim->wall_ms : 30000);
	struct pollfd fds[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
	int open_fds = pe[0] >= 0 ? 2 : 1;
	char chunk[65536];
	size_t max_out = lim->max_output ? lim->max_output : ((size_t)256 << 20);
	while (open_fds > 0) {
		int64_t left = deadline - now_ms();
		if (left <= 0) {
			timed_out = true;
			break;
		}
		int r = poll(fds, 2, (int)(left > 1000 ? 1000 : left));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		for (int i = 0; i < 2; i++) {
			if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			ssize_t n = read(fds[i].fd, chunk, sizeof(chunk));
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n <= 0) {
				close(fds[i].fd);
				fds[i].fd = -1;
				open_fds--;
				continue;
			}
			if (i == 0) {
				if (out->len + (size_t)n > max_out || !oxr_buf_append(out, chunk, (size_t)n)) {
					too_big = true;
					open_fds = 0;
					break;
				}
			} else {
				size_t room = sizeof(res->err) - 1 - errlen;
				size_t k = (size_t)n < room ? (size_t)n : room;
				memcpy(res->err + errlen, chunk, k);
				errlen += k;
			}
		}
	}
	for (int i = 0; i < 2; i++)
		if (fds[i].fd >= 0)
			close(fds[i].fd);
	/* the child may close its pipes and linger: the deadline holds for the wait too */
	int status = 0;
	bool killed = false;
	if (timed_out || too_big) {
		kill(pid, SIGKILL);
		killed = true;
	}
	/* its exit is waited for on a pidfd (readable once it has ended) up to the deadline;
	 * kernels without pidfd_open: short naps */
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	for (;;) {
		pid_t r = waitpid(pid, &status, killed ? 0 : WNOHANG);
		if (r == pid)
			break;
		if (r < 0 && errno != EINTR)
			break;
		if (r == 0) {
			int64_t left = deadline - now_ms();
			if (left <= 0) {
				timed_out = true;
				kill(pid, SIGKILL);
				killed = true;
				continue;
			}
			if (pidfd >= 0) {
				struct pollfd pf = {pidfd, POLLIN, 0};
				(void)poll(&pf, 1, (int)(left > 1000 ? 1000 : left));
			} else {
				struct timespec nap = {0, 2 * 1000 * 1000};
				nanosleep(&nap, NULL);
			}
		}
	}
	if (pidfd >= 0)
		close(pidfd);
	res->err[errlen] = '\0';
	char *nl = strchr(res->err, '\n');
	if (nl != NULL)
		*nl = '\0';
	res->timed_out = timed_out;
	res->too_big = too_big;
	if (!timed_out && !too_big) {
		if (WIFSIGNALED(status))
			res->signal = WTERMSIG(status);
		else if (WIFEXITED(status))
			res->exit_code = WEXITSTATUS(status);
	}
	return OXR_OK;
}

/* Run `exe __render PATH FMT OPTIONS [OTHER DATA OTHER_DATA [ARG...]]` under lim and
 * collect its output. */
static oxr_code run_worker(const char *exe, const char *path, const oxr_model_files *pair,
                           const char *const *args, const char *fmtname,
                           const oxr_options *o, const oxr_worker_limits *lim, oxr_buf *out,
                           oxr_error *err)
{
	oxr_worker_limits dl;
	if (lim == NULL) {
		oxr_worker_limits_default(&dl);
		lim = &dl;
	}
	char key[OXR_OPTIONS_KEY_MAX];
	oxr_options_key(o, key, sizeof(key));
	char fmtcopy[FMT_MAX];
	snprintf(fmtcopy, sizeof(fmtcopy), "%s", fmtname);
	char *argv[9 + OXR_PAIR_ARGS_MAX] = {(char *)exe, "__render", (char *)path, fmtcopy, key};
	if (pair != NULL) {
		argv[5] = (char *)pair[1].path;
		argv[6] = (char *)(pair[0].data_dir ? pair[0].data_dir : "");
		argv[7] = (char *)(pair[1].data_dir ? pair[1].data_dir : "");
		for (size_t i = 0; args != NULL && args[i] != NULL; i++) {
			if (i == OXR_PAIR_ARGS_MAX)
				return oxr__fail(err, OXR_E_OPTION, "more than %d pair arguments",
				                 OXR_PAIR_ARGS_MAX);
			argv[8 + i] = (char *)args[i];
		}
	} else if (args != NULL && args[0] != NULL) {
		argv[5] = (char *)args[0]; /* a card's title */
	}
	oxr_child_result res;
	oxr_code rc = oxr_child_run(exe, argv, NULL, NULL, NULL, 0, lim, out, &res, err);
	if (rc != OXR_OK)
		return rc;
	if (res.timed_out)
		return oxr__fail(err, OXR_E_TIMEOUT, "layout took longer than %u ms and was stopped",
		                 lim->wall_ms);
	if (res.too_big)
		return oxr__fail(err, OXR_E_TOO_BIG, "rendering exceeds %zu bytes",
		                 lim->max_output ? lim->max_output : ((size_t)256 << 20));
	if (res.signal != 0) {
		int sig = res.signal;
		if (sig == SIGXCPU)
			return oxr__fail(err, OXR_E_TIMEOUT,
			                 "layout used more than %u s of CPU and was stopped",
			                 lim->cpu_seconds);
		if (sig == SIGKILL) /* not ours: the CPU hard limit, or the kernel's OOM killer */
			return oxr__fail(err, OXR_E_WORKER,
			                 "layout worker was killed (CPU limit or out of memory)");
		return oxr__fail(err, OXR_E_WORKER, "layout worker died (signal %d)", sig);
	}
	int code = res.exit_code;
	if (code == 0)
		return OXR_OK;
	if (code == WORKER_RENDER_ERROR) {
		char *tab = strchr(res.err, '\t');
		if (tab != NULL) {
			*tab = '\0';
			return oxr__fail(err, code_from_name(res.err), "%s", tab + 1);
		}
	}
	if (code == 127)
		return oxr__fail(err, OXR_E_WORKER, "layout worker could not be started");
	return oxr__fail(err, OXR_E_WORKER, "layout worker failed (exit %d)%s%s", code,
	                 res.err[0] ? ": " : "", res.err);
}

oxr_code oxr_render_isolated(const char *exe, const char *model_path, const oxr_options *o,
                             oxr_format fmt, const oxr_worker_limits *lim, oxr_buf *out,
                             oxr_error *err)
{
	return run_worker(exe, model_path, NULL, NULL, oxr_format_ext(fmt), o, lim, out, err);
}

oxr_code oxr_render_isolated_pair(const char *exe, const oxr_model_files *model,
                                  const oxr_model_files *other, const char *fmt,
                                  const char *const *args, const oxr_options *o,
                                  const oxr_worker_limits *lim, oxr_buf *out,
                                  oxr_error *err)
{
	if (strlen(fmt) >= FMT_MAX)
		return oxr__fail(err, OXR_E_OPTION, "bad format");
	oxr_model_files pair[2] = {*model, *other};
	return run_worker(exe, model->path, pair, args, fmt, o, lim, out, err);
}

bool oxr_raster_format(const char *base, const oxr_raster *r, char *buf, size_t size)
{
	size_t n = strlen(base);
	if (n < 3 || strcmp(base + n - 3, "svg") != 0 || n + 1 + OXR_RASTER_KEY_MAX >= FMT_MAX)
		return false;
	char key[OXR_RASTER_KEY_MAX];
	oxr_raster_key(r, key, sizeof(key));
	return snprintf(buf, size, "%.*spng?%s", (int)(n - 3), base, key) < (int)size;
}

oxr_code oxr_render_isolated_raster(const char *exe, const char *model_path,
                                    const oxr_options *o, bool card, const char *title,
                                    const oxr_raster *r,
                                    const oxr_worker_limits *lim, oxr_buf *out,
                                    oxr_error *err)
{
	char fmt[FMT_MAX];
	if (card) {
		char key[OXR_RASTER_KEY_MAX];
		oxr_raster_key(r, key, sizeof(key));
		snprintf(fmt, sizeof(fmt), "card?%s", key);
	} else if (!oxr_raster_format("svg", r, fmt, sizeof(fmt))) {
		return oxr__fail(err, OXR_E_OPTION, "bad format");
	}
	/* a card's title: one more argument (the worker checks it, as any model text) */
	const char *const args[2] = {card && title != NULL ? title : NULL, NULL};
	return run_worker(exe, model_path, NULL, args, fmt, o, lim, out, err);
}

/* ---------------------------------------------------------------------------------------
 * The worker process
 */
static oxr_code options_from_key(oxr_options *o, char *key, oxr_error *err)
{
	oxr_options_default(o);
	char *save = NULL;
	for (char *kv = strtok_r(key, "&", &save); kv != NULL; kv = strtok_r(NULL, "&", &save)) {
		char *eq = strchr(kv, '=');
		if (eq == NULL)
			return oxr__fail(err, OXR_E_OPTION, "bad option text");
		*eq = '\0';
		oxr_code rc = oxr_options_set(o, kv, eq + 1, err);
		if (rc != OXR_OK)
			return rc;
	}
	return OXR_OK;
}

/* A parser failure in the worker: resources are not the model's fault. */
static oxr_code model_code(oxp_code c)
{
	switch (c) {
	case OXP_E_NOMEM: /* ours: over the budget (OXP_E_BUDGET) is the model's */
		return OXR_E_NOMEM;
	case OXP_E_IO:
		return OXR_E_IO;
	default:
		return OXR_E_MODEL;
	}
}

static int fail_out(oxr_code code, const char *msg)
{
	fprintf(stderr, "%s\t%s\n", oxr_code_name(code), msg);
	return WORKER_RENDER_ERROR;
}

/* stdout gets the whole buffer; 0, or 1 when it could not be written */
static int write_out(const oxr_buf *out)
{
	size_t off = 0;
	while (off < out->len) {
		ssize_t n = write(1, out->data + off, out->len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 1;
		off += (size_t)n;
	}
	return 0;
}

int oxr_worker_main(int argc, char **argv)
{
	return oxr_worker_main_pair(argc, argv, NULL);
}

/* Before drawing pixels: the worker's address space capped at what r's budget needs (4
 * bytes a pixel, three times: the image, a translucent group's layer, the PNG encoder's
 * rows) plus RASTER_BASE for librsvg, Pango and fonts, within the limit it has (the
 * layout's), so that a drawing past its budget fails here instead of growing. */
#define RASTER_BASE ((uint64_t)512 << 20)
static void raster_limit(const oxr_raster *r)
{
	struct rlimit cur;
	uint64_t vm = vm_size();
	if (vm == 0 || getrlimit(RLIMIT_AS, &cur) != 0 || r->max_pixels > ((uint64_t)1 << 40))
		return;
	uint64_t want = vm + RASTER_BASE + r->max_pixels * 12;
	if (cur.rlim_cur != RLIM_INFINITY && cur.rlim_cur <= want)
		return;
	cur.rlim_cur = want;
	setrlimit(RLIMIT_AS, &cur);
}

/* A raster format ("png?KEY", "card?KEY", "heat-png?KEY"): r from KEY, and in svgfmt
 * what to draw first ("svg", "heat-svg"; "card" for a card).  False when fmt is none. */
static bool raster_format(const char *fmt, oxr_raster *r, char *svgfmt, size_t size,
                          oxr_error *err, bool *bad)
{
	const char *q = strchr(fmt, '?');
	*bad = false;
	if (q == NULL)
		return false;
	size_t n = (size_t)(q - fmt);
	bool card = n == 4 && memcmp(fmt, "card", 4) == 0;
	if (n >= size || (!card && (n < 3 || memcmp(q - 3, "png", 3) != 0)) ||
	    oxr_raster_parse(r, q + 1, err) != OXR_OK) {
		*bad = true;
		return true;
	}
	snprintf(svgfmt, size, "%.*s%s", (int)(card ? n : n - 3), fmt, card ? "" : "svg");
	return true;
}

/* svg drawn as PNG in place of out's text; the worker's exit status */
static int raster_out(oxr_buf *out, const oxr_raster *r)
{
	oxr_error err = {0};
	oxr_buf png;
	oxr_buf_init(&png, 0);
	raster_limit(r);
	oxr_code rc = oxr_raster_png(out->data, out->len, r, &png, &err);
	int status = rc != OXR_OK ? fail_out(rc, err.message) : write_out(&png);
	oxr_buf_free(&png);
	return status;
}

int oxr_worker_main_pair(int argc, char **argv, oxr_pair_fn pair)
{
	if (argc != 4 && argc != 5 && !(argc >= 7 && argc <= 7 + OXR_PAIR_ARGS_MAX && pair != NULL))
		return fail_out(OXR_E_WORKER, "usage: onnxviz __render MODEL svg|dot|json OPTIONS "
		                              "[TITLE | OTHER DATA OTHER_DATA [ARG...]]");
	oxr_error err = {0};
	oxr_options o;
	oxr_raster r;
	char svgfmt[FMT_MAX];
	bool bad_raster = false;
	bool raster = raster_format(argv[2], &r, svgfmt, sizeof(svgfmt), &err, &bad_raster);
	if (bad_raster)
		return fail_out(OXR_E_OPTION, err.message[0] ? err.message : "bad raster format");
	if (argc == 5 && !(raster && !strcmp(svgfmt, "card")))
		return fail_out(OXR_E_WORKER, "a title is a card's only");
	if (argc >= 7) {
		if (options_from_key(&o, argv[3], &err) != OXR_OK)
			return fail_out(err.code, err.message);
		oxr_model_files model = {argv[1], argv[5]}, other = {argv[4], argv[6]};
		oxr_buf out;
		oxr_buf_init(&out, 0);
		/* argv[argc] is NULL: the pair arguments are a NULL-terminated list */
		oxr_code rc = pair(&model, &other, raster ? svgfmt : argv[2],
		                   (const char *const *)(argv + 7), &o, &out, &err);
		int status = rc != OXR_OK ? fail_out(rc, err.message)
		             : raster     ? raster_out(&out, &r)
		                          : write_out(&out);
		oxr_buf_free(&out);
		return status;
	}
	oxr_format fmt = !strcmp(argv[2], "dot")    ? OXR_FMT_DOT
	                 : !strcmp(argv[2], "json") ? OXR_FMT_LAYOUT_JSON
	                                            : OXR_FMT_SVG;
	if (options_from_key(&o, argv[3], &err) != OXR_OK)
		return fail_out(err.code, err.message);
	oxp_model *m;
	oxp_dag *d;
	oxp_error pe;
	if (oxp_model_open_ex(&m, argv[1], NULL, OXP_OPEN_LOW_RSS, &pe) != OXP_OK)
		return fail_out(model_code(pe.code), pe.message);
	oxp_dag_options dopt = {.infer_shapes = true};
	if (oxp_dag_build(&d, m, &dopt, &pe) != OXP_OK) {
		oxp_model_free(m);
		return fail_out(model_code(pe.code), pe.message);
	}
	oxr_buf out;
	oxr_buf_init(&out, 0);
	oxr_code rc;
	int status;
	if (raster && !strcmp(svgfmt, "card")) {
		raster_limit(&r);
		rc = oxr_card_png(m, d, argc == 5 ? argv[4] : NULL, &r, &out, &err);
		status = rc != OXR_OK ? fail_out(rc, err.message) : write_out(&out);
	} else {
		rc = oxr_render(m, d, &o, fmt, &out, &err);
		status = rc != OXR_OK ? fail_out(rc, err.message)
		         : raster     ? raster_out(&out, &r)
		                      : write_out(&out);
	}
	oxr_buf_free(&out);
	oxp_dag_free(d);
	oxp_model_free(m);
	return status;
}
