/*
 * isolate.c — computations derived from a model, each in a forked copy of the server
 * (docs/decisions.md 43): tensor previews and JSON documents (the summary, document.json).
 *
 * The parser's decoding and linking run in the server (they are what the fuzzers hammer
 * hardest, and their result is what the copy reuses); what is computed from the linked
 * model by rules the model sets (dequantization, statistics, shape-derived figures,
 * folding, the check) runs in a child made by oxr_child_run (render/worker.c) under the
 * preview limits.  The child calls fn, which may use memory, the one descriptor it is
 * given (a model's data folder) and the allocator only (no store, no lock, no log: other threads' locks do not come along
 * into a forked copy), and writes its result to a pipe as one frame: the fixed head, then
 * the body and the auxiliary bytes (a preview's fresh statistics).  A crash, an overrun or
 * a broken frame is an error for that request alone, counted in /metrics.
 */
#include "service/isolate.h"
#include "parser/oxp.h"
#include "render/oxr.h"
#include "service/log.h"
#include "service/metrics.h"
#include "service/server.h"
#include "store/oxst.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#define FRAME_MAGIC 0x6f787866u /* "oxxf" */

typedef struct frame {
	uint32_t magic;
	uint32_t status;
	uint64_t body_len, aux_len;
	char code[48];
	char message[512];
	char extra[900];
	char npy_descr[16];
	char widened_from[24];
} frame;

typedef struct call {
	oxs_iso_fn fn;
	void *ctx;
	size_t max_body;
} call;

static const char *const what_names[OXS_ISO__COUNT] = {"preview", "document"};

static void result_init(oxs_preview_out *o, size_t max_body)
{
	memset(o, 0, sizeof(*o));
	oxr_buf_init(&o->body, max_body);
	oxr_buf_init(&o->stats, 1 << 20);
}

static void set_error(oxs_preview_out *o, unsigned status, const char *code, const char *fmt,
                      ...) OXS_PRINTF(4, 5);

static void set_error(oxs_preview_out *o, unsigned status, const char *code, const char *fmt,
                      ...)
{
	o->status = status;
	snprintf(o->code, sizeof(o->code), "%s", code);
	o->extra[0] = '\0';
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(o->message, sizeof(o->message), fmt, ap);
	va_end(ap);
}

static bool write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n > 0) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		c += w;
		n -= (size_t)w;
	}
	return true;
}

/* The child: compute, write the frame (an unwritable pipe means the server gave up). */
static void child(void *ctx, int fd)
{
	const call *c = ctx;
	oxs_preview_out o;
	result_init(&o, c->max_body);
	c->fn(c->ctx, &o);
	frame f;
	memset(&f, 0, sizeof(f));
	f.magic = FRAME_MAGIC;
	f.status = o.status;
	f.body_len = o.status == 0 ? o.body.len : 0;
	f.aux_len = o.status == 0 ? o.stats.len : 0;
	memcpy(f.code, o.code, sizeof(f.code));
	memcpy(f.message, o.message, sizeof(f.message));
	memcpy(f.extra, o.extra, sizeof(f.extra));
	memcpy(f.npy_descr, o.npy_descr, sizeof(f.npy_descr));
	memcpy(f.widened_from, o.widened_from, sizeof(f.widened_from));
	if (write_all(fd, &f, sizeof(f)) && write_all(fd, o.body.data, (size_t)f.body_len))
		(void)write_all(fd, o.stats.data, (size_t)f.aux_len);
}

/* The child's frame into o; false (o->status set) when there is none. */
static bool read_frame(const oxr_buf *raw, const char *what, oxs_preview_out *o)
{
	frame f;
	if (raw->len < sizeof(f)) {
		set_error(o, 500, "isolation_failed", "the %s process gave no answer", what);
		return false;
	}
	memcpy(&f, raw->data, sizeof(f));
	if (f.magic != FRAME_MAGIC || f.body_len > raw->len - sizeof(f) ||
	    f.aux_len != raw->len - sizeof(f) - f.body_len) {
		set_error(o, 500, "isolation_failed", "the %s process gave a broken answer", what);
		return false;
	}
	f.code[sizeof(f.code) - 1] = f.message[sizeof(f.message) - 1] = '\0';
	f.extra[sizeof(f.extra) - 1] = f.npy_descr[sizeof(f.npy_descr) - 1] = '\0';
	f.widened_from[sizeof(f.widened_from) - 1] = '\0';
	if (f.status != 0) {
		set_error(o, f.status, f.code, "%s", f.message);
		snprintf(o->extra, sizeof(o->extra), "%s", f.extra);
		return false;
	}
	const char *p = raw->data + sizeof(f);
	if (!oxr_buf_append(&o->body, p, (size_t)f.body_len) ||
	    !oxr_buf_append(&o->stats, p + f.body_len, (size_t)f.aux_len)) {
		set_error(o, 503, "out_of_memory", "out of memory");
		return false;
	}
	memcpy(o->npy_descr, f.npy_descr, sizeof(o->npy_descr));
	memcpy(o->widened_from, f.widened_from, sizeof(o->widened_from));
	return true;
}

void oxs_isolated(oxs_server *srv, int what, oxs_iso_fn fn, void *ctx, int keep_fd,
                  size_t max_body, oxs_preview_out *o)
{
	result_init(o, max_body);
	const char *name = what >= 0 && what < OXS_ISO__COUNT ? what_names[what] : "computation";
	call c = {fn, ctx, max_body};
	oxr_worker_limits lim = srv->plim;
	lim.max_output = sizeof(frame) + max_body + ((size_t)1 << 20);
	oxr_buf raw;
	oxr_buf_init(&raw, lim.max_output);
	oxr_child_result res;
	oxr_error err;
	memset(&err, 0, sizeof(err));
	char code[48];
	if (oxr_child_run(NULL, NULL, child, &c, &keep_fd, 1, &lim, &raw, &res, &err) != OXR_OK) {
		oxs_metrics_isolated(what, OXS_ISOLATED_UNSTARTED);
		snprintf(code, sizeof(code), "%s_unavailable", name);
		set_error(o, 503, code, "cannot start the %s process: %s", name, err.message);
	} else if (res.timed_out || res.signal == SIGXCPU || res.signal == SIGKILL) {
		oxs_metrics_isolated(what, OXS_ISOLATED_KILLED);
		snprintf(code, sizeof(code), "%s_timeout", name);
		set_error(o, 503, code,
		          "the %s took longer than %u s (or more memory than allowed) and was stopped",
		          name, srv->plim.wall_ms / 1000);
	} else if (res.too_big) {
		oxs_metrics_isolated(what, OXS_ISOLATED_KILLED);
		set_error(o, 422, "too_big", "the %s is over %zu bytes", name, max_body);
	} else if (res.signal != 0 || res.exit_code != 0) {
		oxs_metrics_isolated(what, OXS_ISOLATED_CRASHED);
		snprintf(code, sizeof(code), "%s_crashed", name);
		if (res.signal != 0)
			set_error(o, 500, code,
			          "the %s computation died of %s; the server goes on (this is a bug: "
			          "please report it with the model)", name, strsignal(res.signal));
		else
			set_error(o, 500, code,
			          "the %s computation failed (exit %d); the server goes on (this is a "
			          "bug: please report it with the model)", name, res.exit_code);
		oxs_logf("error", "%s computation crashed (signal %d, exit %d)", name, res.signal,
		         res.exit_code);
	} else {
		bool ok = read_frame(&raw, name, o);
		oxs_metrics_isolated(what, ok || strcmp(o->code, "isolation_failed") != 0
		                               ? OXS_ISOLATED_OK : OXS_ISOLATED_CRASHED);
	}
	oxr_buf_free(&raw);
}

void oxs_preview_out_free(oxs_preview_out *o)
{
	oxr_buf_free(&o->body);
	oxr_buf_free(&o->stats);
}
