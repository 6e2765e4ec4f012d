/*
 * isolate.h — computations in a forked copy of the server (isolate.c), and what they
 * answer (oxs_preview_out: previews and documents alike).
 */
#ifndef OXS_ISOLATE_H
#define OXS_ISOLATE_H

#include "render/oxr.h"
#include "service/metrics.h"
#include "service/server.h"

#include <stddef.h>

typedef struct oxs_preview_out {
	oxr_buf body;            /* the JSON document or the .npy file */
	const char *type;        /* its Content-Type */
	char npy_descr[16];      /* .npy: the element type written ("<f4", ...) */
	char widened_from[24];   /* .npy: the tensor's data type when widened, else "" */
	unsigned status;         /* 0 on success, else the error's status ... */
	char code[48];           /* ... code ... */
	char message[512];       /* ... message ... */
	char extra[900];         /* ... and extra members ("" or ",\"rule\":...") */
	oxr_buf stats;           /* statistics computed by this call (for the store), or empty */
} oxs_preview_out;

void oxs_preview_out_free(oxs_preview_out *out);

/* Run fn in a forked copy of the server: fn fills out (the body, an error's status, code
 * and message, auxiliary bytes in out->stats) using memory, the descriptor keep_fd (-1:
 * none; every other one is closed in the copy) and the allocator only.  o is initialised here with a body cap of max_body; free it with
 * oxs_preview_out_free.  A crash is 500 "<what>_crashed", an overrun 503 "<what>_timeout";
 * what: OXS_ISO_* (metrics.h). */
typedef void (*oxs_iso_fn)(void *ctx, oxs_preview_out *out);
void oxs_isolated(oxs_server *srv, int what, oxs_iso_fn fn, void *ctx, int keep_fd,
                  size_t max_body, oxs_preview_out *o);

#endif /* OXS_ISOLATE_H */
