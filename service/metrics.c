/*
 * metrics.c — counters in the Prometheus text format (GET /metrics); the JSON log lines
 * on stderr are log.c's.
 *
 * Counters are relaxed atomics in fixed arrays indexed by route and status, so recording
 * a request costs a few atomic adds and no lock or allocation.
 */
#include "service/metrics.h"
#include "parser/oxp.h"
#include "render/oxr.h"
#include "service/router.h"
#include "store/oxst.h"

#include <stdatomic.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define MAX_ROUTES 32
#define ROUTE_SLOTS (MAX_ROUTES + 1) /* + unmatched */

static const unsigned statuses[] = {200, 201, 204, 304, 400, 401, 403, 404, 405, 406,
                                    411, 413, 414, 415, 422, 429, 431, 500, 503, 507};
#define NSTATUS (sizeof(statuses) / sizeof(statuses[0]) + 1) /* + other */

static const double buckets[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                 0.1,    0.25,  0.5,    1,     2.5,   5,    10,  30};
#define NBUCKETS (sizeof(buckets) / sizeof(buckets[0]))

static atomic_uint_fast64_t requests[ROUTE_SLOTS][NSTATUS];
static atomic_uint_fast64_t latency[ROUTE_SLOTS][NBUCKETS + 1];
static atomic_uint_fast64_t latency_sum_ns[ROUTE_SLOTS];
static atomic_uint_fast64_t uploads[OXS_UP__COUNT];
static atomic_uint_fast64_t upload_bytes;
static atomic_uint_fast64_t cache_events[OXS_HIT__COUNT];
static atomic_uint_fast64_t layouts[OXS_LAYOUT__COUNT];
static atomic_uint_fast64_t isolated[OXS_ISO__COUNT][OXS_ISOLATED__COUNT];
static atomic_uint_fast64_t loads[OXS_LOAD__COUNT];
static atomic_uint_fast64_t store_requests[OXST_S3OP__COUNT][OXST_REQ__COUNT];
static atomic_uint_fast64_t store_latency[OXST_S3OP__COUNT][NBUCKETS + 1];
static atomic_uint_fast64_t store_latency_sum_ns[OXST_S3OP__COUNT];

static size_t status_slot(unsigned status)
{
	for (size_t i = 0; i < NSTATUS - 1; i++)
		if (statuses[i] == status)
			return i;
	return NSTATUS - 1;
}

static size_t route_slot(int route)
{
	return route >= 0 && route < MAX_ROUTES ? (size_t)route : MAX_ROUTES;
}

/* The histogram bucket of a duration (NBUCKETS: above the last bound). */
static size_t bucket_of(uint64_t ns)
{
	double s = (double)ns / 1e9;
	size_t b = 0;
	while (b < NBUCKETS && s > buckets[b])
		b++;
	return b;
}

void oxs_metrics_request(int route, unsigned status, uint64_t ns)
{
	size_t r = route_slot(route);
	atomic_fetch_add_explicit(&requests[r][status_slot(status)], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&latency[r][bucket_of(ns)], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&latency_sum_ns[r], ns, memory_order_relaxed);
}

void oxs_metrics_upload(int result, uint64_t bytes)
{
	if (result >= 0 && result < OXS_UP__COUNT)
		atomic_fetch_add_explicit(&uploads[result], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&upload_bytes, bytes, memory_order_relaxed);
}

void oxs_metrics_cache(int which)
{
	if (which >= 0 && which < OXS_HIT__COUNT)
		atomic_fetch_add_explicit(&cache_events[which], 1, memory_order_relaxed);
}

void oxs_metrics_layout(int result)
{
	if (result >= 0 && result < OXS_LAYOUT__COUNT)
		atomic_fetch_add_explicit(&layouts[result], 1, memory_order_relaxed);
}

void oxs_metrics_load(int result)
{
	if (result >= 0 && result < OXS_LOAD__COUNT)
		atomic_fetch_add_explicit(&loads[result], 1, memory_order_relaxed);
}

void oxs_metrics_isolated(int what, int result)
{
	if (what >= 0 && what < OXS_ISO__COUNT && result >= 0 && result < OXS_ISOLATED__COUNT)
		atomic_fetch_add_explicit(&isolated[what][result], 1, memory_order_relaxed);
}

void oxs_metrics_store(int op, uint64_t ns, int outcome)
{
	if (op < 0 || op >= OXST_S3OP__COUNT || outcome < 0 || outcome >= OXST_REQ__COUNT)
		return;
	atomic_fetch_add_explicit(&store_requests[op][outcome], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&store_latency[op][bucket_of(ns)], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&store_latency_sum_ns[op], ns, memory_order_relaxed);
}

static uint64_t get(atomic_uint_fast64_t *a)
{
	return atomic_load_explicit(a, memory_order_relaxed);
}

static void header(oxr_buf *o, const char *name, const char *type, const char *help)
{
	oxr_buf_printf(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A counter with one or two labels: vals[i * n2 + k] for label values l1[i], l2[k] (l2
 * NULL: one label). */
static void counters(oxr_buf *o, const char *name, const char *help, const char *k1,
                     const char *const *l1, size_t n1, const char *k2, const char *const *l2,
                     size_t n2, atomic_uint_fast64_t *vals)
{
	header(o, name, "counter", help);
	for (size_t i = 0; i < n1; i++)
		for (size_t k = 0; k < (l2 ? n2 : 1); k++) {
			if (l2 != NULL)
				oxr_buf_printf(o, "%s{%s=\"%s\",%s=\"%s\"} %" PRIu64 "\n", name, k1, l1[i],
				               k2, l2[k], get(&vals[i * n2 + k]));
			else
				oxr_buf_printf(o, "%s{%s=\"%s\"} %" PRIu64 "\n", name, k1, l1[i],
				               get(&vals[i]));
		}
}

void oxs_metrics_render(const oxs_gauges *g, oxr_buf *o)
{
	size_t nroutes = oxs_route_count();
	header(o, "onnxviz_http_requests_total", "counter", "HTTP requests by route and status.");
	for (size_t r = 0; r < ROUTE_SLOTS; r++) {
		if (r < MAX_ROUTES && r >= nroutes)
			continue;
		const char *pat = oxs_route_pattern(r < MAX_ROUTES ? (int)r : -1);
		for (size_t s = 0; s < NSTATUS; s++) {
			uint64_t v = get(&requests[r][s]);
			if (v == 0)
				continue;
			if (s < NSTATUS - 1)
				oxr_buf_printf(o, "onnxviz_http_requests_total{route=\"%s\",status=\"%u\"} %" PRIu64 "\n",
				               pat, statuses[s], v);
			else
				oxr_buf_printf(o, "onnxviz_http_requests_total{route=\"%s\",status=\"other\"} %" PRIu64 "\n",
				               pat, v);
		}
	}
	header(o, "onnxviz_http_request_duration_seconds", "histogram",
	       "Time from the request line to the completed response, by route.");
	for (size_t r = 0; r < ROUTE_SLOTS; r++) {
		if (r < MAX_ROUTES && r >= nroutes)
			continue;
		const char *pat = oxs_route_pattern(r < MAX_ROUTES ? (int)r : -1);
		uint64_t cum = 0;
		for (size_t b = 0; b <= NBUCKETS; b++)
			cum += get(&latency[r][b]);
		if (cum == 0)
			continue;
		uint64_t run = 0;
		for (size_t b = 0; b < NBUCKETS; b++) {
			run += get(&latency[r][b]);
			oxr_buf_printf(o, "onnxviz_http_request_duration_seconds_bucket{route=\"%s\",le=\"%g\"} %" PRIu64 "\n",
			               pat, buckets[b], run);
		}
		oxr_buf_printf(o, "onnxviz_http_request_duration_seconds_bucket{route=\"%s\",le=\"+Inf\"} %" PRIu64 "\n",
		               pat, cum);
		oxr_buf_printf(o, "onnxviz_http_request_duration_seconds_sum{route=\"%s\"} %.6f\n", pat,
		               (double)get(&latency_sum_ns[r]) / 1e9);
		oxr_buf_printf(o, "onnxviz_http_request_duration_seconds_count{route=\"%s\"} %" PRIu64 "\n",
		               pat, cum);
	}
	static const char *const up_names[] = {"created", "existing", "rejected"};
	header(o, "onnxviz_uploads_total", "counter", "Model uploads by outcome.");
	for (int i = 0; i < OXS_UP__COUNT; i++)
		oxr_buf_printf(o, "onnxviz_uploads_total{result=\"%s\"} %" PRIu64 "\n", up_names[i],
		               get(&uploads[i]));
	header(o, "onnxviz_upload_bytes_total", "counter", "Bytes of model uploads received.");
	oxr_buf_printf(o, "onnxviz_upload_bytes_total %" PRIu64 "\n", get(&upload_bytes));
	if (g->uploads != NULL) {
		if (g->uploads->len > 0)
			oxr_buf_append(o, g->uploads->data, g->uploads->len);
		if (g->uploads->failed)
			o->failed = true;
	}

	header(o, "onnxviz_cache_hits_total", "counter",
	       "Renderings and documents answered from the memory or the store cache.");
	oxr_buf_printf(o, "onnxviz_cache_hits_total{tier=\"memory\"} %" PRIu64 "\n",
	               get(&cache_events[OXS_HIT_MEMORY]));
	oxr_buf_printf(o, "onnxviz_cache_hits_total{tier=\"store\"} %" PRIu64 "\n",
	               get(&cache_events[OXS_HIT_STORE]));
	header(o, "onnxviz_cache_misses_total", "counter",
	       "Renderings and documents that had to be computed.");
	oxr_buf_printf(o, "onnxviz_cache_misses_total %" PRIu64 "\n", get(&cache_events[OXS_MISS]));

	header(o, "onnxviz_slow_clients_dropped_total", "counter",
	       "Connections cut for not sending a request's headers within --timeout seconds.");
	oxr_buf_printf(o, "onnxviz_slow_clients_dropped_total %" PRIu64 "\n",
	               g->slow_dropped);
	header(o, "onnxviz_slow_bodies_dropped_total", "counter",
	       "Connections cut for a request body slower than --min-body-rate over a --timeout "
	       "window.");
	oxr_buf_printf(o, "onnxviz_slow_bodies_dropped_total %" PRIu64 "\n", g->slow_bodies);

	header(o, "onnxviz_layouts_running", "gauge", "Layout worker processes running now.");
	oxr_buf_printf(o, "onnxviz_layouts_running %u\n", g->layouts_running);
	header(o, "onnxviz_layouts_queued", "gauge", "Layouts waiting for a worker.");
	oxr_buf_printf(o, "onnxviz_layouts_queued %u\n", g->layouts_queued);
	static const char *const lay_names[] = {"ok", "failed", "killed"};
	counters(o, "onnxviz_layouts_total",
	         "Finished layouts by outcome (killed: over the time or memory limit, or crashed).",
	         "result", lay_names, OXS_LAYOUT__COUNT, NULL, NULL, 0, layouts);
	static const char *const load_names[] = {"ok", "invalid", "failed", "remembered"};
	counters(o, "onnxviz_model_loads_total",
	         "Models loaded into the parsed-model cache, by outcome (invalid: refused for the "
	         "model's own reason, e.g. over its budget; failed: I/O or out of memory; "
	         "remembered: refused again from the memory of a recent refusal, not parsed).",
	         "result", load_names, OXS_LOAD__COUNT, NULL, NULL, 0, loads);
	static const char *const iso_what[] = {"preview", "document"};
	static const char *const iso_names[] = {"ok", "crashed", "killed", "unstarted"};
	counters(o, "onnxviz_isolated_total",
	         "Computations in a process of their own (tensor previews, JSON documents), by "
	         "outcome (ok: an answer, the model's errors included; crashed: the computation "
	         "died of a signal or failed; killed: over the time or memory limit or the output "
	         "cap; unstarted: no process could be made).",
	         "what", iso_what, OXS_ISO__COUNT, "result", iso_names, OXS_ISOLATED__COUNT,
	         &isolated[0][0]);
	header(o, "onnxviz_work_running", "gauge", "Parse and document jobs running now.");
	oxr_buf_printf(o, "onnxviz_work_running %u\n", g->work_running);
	header(o, "onnxviz_work_queued", "gauge", "Parse and document jobs waiting.");
	oxr_buf_printf(o, "onnxviz_work_queued %u\n", g->work_queued);

	const oxst_stats *st = &g->store;
	header(o, "onnxviz_store_bytes", "gauge", "Bytes in the store by kind.");
	oxr_buf_printf(o, "onnxviz_store_bytes{kind=\"models\"} %" PRIu64 "\n", st->model_bytes);
	oxr_buf_printf(o, "onnxviz_store_bytes{kind=\"renderings\"} %" PRIu64 "\n",
	               st->rendering_bytes);
	header(o, "onnxviz_store_objects", "gauge", "Objects in the store by kind.");
	oxr_buf_printf(o, "onnxviz_store_objects{kind=\"models\"} %" PRIu64 "\n", st->models);
	oxr_buf_printf(o, "onnxviz_store_objects{kind=\"renderings\"} %" PRIu64 "\n", st->renderings);
	header(o, "onnxviz_store_budget_bytes", "gauge", "The store's byte budget (0: none).");
	oxr_buf_printf(o, "onnxviz_store_budget_bytes %" PRIu64 "\n", st->budget);
	header(o, "onnxviz_store_evictions_total", "counter", "Objects evicted for the budget.");
	oxr_buf_printf(o, "onnxviz_store_evictions_total{kind=\"models\"} %" PRIu64 "\n",
	               st->evicted_models);
	oxr_buf_printf(o, "onnxviz_store_evictions_total{kind=\"renderings\"} %" PRIu64 "\n",
	               st->evicted_renderings);

	header(o, "onnxviz_store_verifying", "gauge",
	       "1 while the stored models are being verified after start.");
	oxr_buf_printf(o, "onnxviz_store_verifying %d\n", st->verifying ? 1 : 0);
	header(o, "onnxviz_store_quarantined_total", "counter",
	       "Stored models found not to match their id.");
	oxr_buf_printf(o, "onnxviz_store_quarantined_total %" PRIu64 "\n", st->quarantined);

	/* requests to an object store (none with the local store) */
	static const char *const ops[] = {"get", "put", "head", "delete", "list", "multipart"};
	static const char *const outcomes[] = {"ok", "error", "retried", "failed", "shed"};
	counters(o, "onnxviz_object_store_requests_total",
	         "Requests to the object store by operation and outcome (ok: answered as expected; "
	         "error: another 4xx; retried: a connection error, timeout or 5xx retried; failed: "
	         "the same on the last attempt; shed: failed at once, the store having just "
	         "failed).",
	         "op", ops, OXST_S3OP__COUNT, "result", outcomes, OXST_REQ__COUNT,
	         &store_requests[0][0]);
	header(o, "onnxviz_object_store_request_duration_seconds", "histogram",
	       "Time of one attempt of a request to the object store, by operation.");
	for (int i = 0; i < OXST_S3OP__COUNT; i++) {
		uint64_t run = 0, cum = 0;
		for (size_t b = 0; b <= NBUCKETS; b++)
			cum += get(&store_latency[i][b]);
		for (size_t b = 0; b < NBUCKETS; b++) {
			run += get(&store_latency[i][b]);
			oxr_buf_printf(o, "onnxviz_object_store_request_duration_seconds_bucket{op=\"%s\",le=\"%g\"} %" PRIu64 "\n",
			               ops[i], buckets[b], run);
		}
		oxr_buf_printf(o, "onnxviz_object_store_request_duration_seconds_bucket{op=\"%s\",le=\"+Inf\"} %" PRIu64 "\n",
		               ops[i], cum);
		oxr_buf_printf(o, "onnxviz_object_store_request_duration_seconds_sum{op=\"%s\"} %.6f\n", ops[i],
		               (double)get(&store_latency_sum_ns[i]) / 1e9);
		oxr_buf_printf(o, "onnxviz_object_store_request_duration_seconds_count{op=\"%s\"} %" PRIu64 "\n",
		               ops[i], cum);
	}

	header(o, "onnxviz_memory_cache_bytes", "gauge", "Bytes of responses held in memory.");
	oxr_buf_printf(o, "onnxviz_memory_cache_bytes %" PRIu64 "\n", g->cache_bytes);
	header(o, "onnxviz_memory_cache_entries", "gauge", "Responses held in memory.");
	oxr_buf_printf(o, "onnxviz_memory_cache_entries %" PRIu64 "\n", g->cache_entries);
	header(o, "onnxviz_parsed_models", "gauge", "Parsed models held in memory.");
	oxr_buf_printf(o, "onnxviz_parsed_models %" PRIu64 "\n", g->parsed_models);
	header(o, "onnxviz_parsed_models_bytes", "gauge", "Estimated memory of those models.");
	oxr_buf_printf(o, "onnxviz_parsed_models_bytes %" PRIu64 "\n", g->parsed_bytes);
	header(o, "onnxviz_requests_in_flight", "gauge", "Requests begun and not completed.");
	oxr_buf_printf(o, "onnxviz_requests_in_flight %d\n", g->inflight);
	header(o, "onnxviz_uptime_seconds", "gauge", "Seconds since the server started.");
	oxr_buf_printf(o, "onnxviz_uptime_seconds %.3f\n",
	               (double)g->uptime_ms / 1000.0);
}
