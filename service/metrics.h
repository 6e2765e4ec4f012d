/*
 * metrics.h — counters in the Prometheus text format (metrics.c), and what GET /metrics
 * writes among them.  A leaf: the figures other parts hold (pools, caches, the store,
 * resumable uploads) are gathered by the /metrics handler (routes.c) into oxs_gauges.
 * Request logs: log.h.
 */
#ifndef OXS_METRICS_H
#define OXS_METRICS_H

#include "render/oxr.h"
#include "store/oxst.h"

#include <stdint.h>

enum { OXS_UP_CREATED, OXS_UP_EXISTING, OXS_UP_REJECTED, OXS_UP__COUNT };
enum { OXS_HIT_MEMORY, OXS_HIT_STORE, OXS_MISS, OXS_HIT__COUNT };
enum { OXS_LAYOUT_OK, OXS_LAYOUT_FAILED, OXS_LAYOUT_KILLED, OXS_LAYOUT__COUNT };
/* Computations in a process of their own (isolate.c), by kind, and how they ended:
 * answered (a value or the model's error), crashed (a signal or a failed exit: a bug),
 * killed (time or memory limit, or output cap), not started (no fork). */
enum { OXS_ISO_PREVIEW, OXS_ISO_DOCUMENT, OXS_ISO__COUNT };
enum { OXS_ISOLATED_OK, OXS_ISOLATED_CRASHED, OXS_ISOLATED_KILLED, OXS_ISOLATED_UNSTARTED,
       OXS_ISOLATED__COUNT };

void oxs_metrics_request(int route, unsigned status, uint64_t ns);
void oxs_metrics_upload(int result, uint64_t bytes);
void oxs_metrics_cache(int which);
void oxs_metrics_layout(int result);
void oxs_metrics_isolated(int what, int result);
/* Loads of models into the parsed-model cache (models.c): parsed and linked, refused for
 * the model's own reason, failed for ours (I/O, memory), or refused from the memory of a
 * recent refusal without parsing. */
enum { OXS_LOAD_OK, OXS_LOAD_INVALID, OXS_LOAD_FAILED, OXS_LOAD_REMEMBERED, OXS_LOAD__COUNT };
void oxs_metrics_load(int result);
void oxs_metrics_store(int op, uint64_t ns, int outcome);
/* What the other parts of the server count or hold now, gathered by the /metrics handler
 * (routes.c) and written among the counters. */
typedef struct oxs_gauges {
	uint64_t slow_dropped;                  /* deadline.c: headers */
	uint64_t slow_bodies;                   /* deadline.c: bodies */
	unsigned layouts_running, layouts_queued, work_running, work_queued; /* jobs.c */
	oxst_stats store;
	uint64_t cache_bytes, cache_entries;    /* cache.c */
	uint64_t parsed_models, parsed_bytes;   /* models.c */
	int inflight;                           /* requests begun and not completed */
	int64_t uptime_ms;
	const oxr_buf *uploads; /* resumable uploads' families (resumable.c), or NULL */
} oxs_gauges;
/* The Prometheus text of every counter and of g. */
void oxs_metrics_render(const oxs_gauges *g, oxr_buf *out);

#endif /* OXS_METRICS_H */
