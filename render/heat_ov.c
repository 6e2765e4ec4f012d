/*
 * heat_ov.c — OpenVINO's performance counters (an overlay input, docs/overlays.md):
 * `benchmark_app -report_type detailed_counters` (or average_counters, or
 * sort_detailed_counters) writes benchmark_detailed_counters_report.csv, `;`-separated, a
 * block per infer request:
 *
 *     layerName;execStatus;layerType;execType;realTime (ms);cpuTime (ms)[; %]
 *     conv1;EXECUTED;Convolution;jit_avx2_FP32;0.123;0.123
 *     ...
 *     Total;;;;1.234;1.234
 *
 * (samples/cpp/benchmark_app/statistics_report.cpp).  Each block is a run; a layer's real
 * time (ms, printed to 6 significant digits) becomes whole microseconds, rounded, and the
 * file is read as a profile: dur.mean, p50, p90 and total per node, exact over the rounded
 * figures.  Layers not EXECUTED (OPTIMIZED_OUT: fused into another) have no time.  Layer
 * names are the model's node names (or an output's); the layer type is the op, the exec
 * type ("jit_avx2_FP32": the implementation, the precision last) text per node.
 */
#include "render/heat_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char header[] = "layerName;execStatus;layerType;execType;realTime (ms)";

static bool sniff(const char *d, size_t len, size_t start, const json_t *root)
{
	(void)root;
	size_t n = sizeof(header) - 1;
	return len - start >= n && memcmp(d + start, header, n) == 0;
}

#define OV_FIELDS 8

static oxr_code parse(heat_parse *p, const char *data, size_t len, size_t start,
                      const json_t *root)
{
	(void)root;
	p->exec_detail = true;
	const char *s = data + start, *end = data + len;
	size_t line = 0;
	uint32_t base = p->runs, run = 0;
	bool in_block = false;
	/* the line number of data[start] */
	for (const char *q = data; q < s; q++)
		line += *q == '\n';
	while (s < end) {
		line++;
		const char *e = memchr(s, '\n', (size_t)(end - s));
		if (e == NULL)
			e = end;
		const char *next = e < end ? e + 1 : end;
		if (e > s && e[-1] == '\r')
			e--;
		if ((size_t)(e - s) > 65536)
			return oxr__heat_bad(p, "line %zu: longer than 65536 bytes", line);
		if (memchr(s, '\0', (size_t)(e - s)) != NULL)
			return oxr__heat_bad(p, "line %zu: a NUL byte", line);
		/* fields */
		const char *f[OV_FIELDS];
		size_t fl[OV_FIELDS];
		int nf = 0;
		for (const char *q = s; nf < OV_FIELDS;) {
			const char *semi = memchr(q, ';', (size_t)(e - q));
			f[nf] = q;
			fl[nf] = (size_t)((semi ? semi : e) - q);
			nf++;
			if (semi == NULL)
				break;
			q = semi + 1;
		}
		if (e == s) {
			in_block = false;
		} else if ((size_t)(e - s) >= sizeof(header) - 1 &&
		           memcmp(s, header, sizeof(header) - 1) == 0) {
			if (run >= MAX_RUNS || base + run >= MAX_RUNS)
				return oxr__heat_bad(p, "line %zu: more than %u runs", line, MAX_RUNS);
			run++;
			in_block = true;
		} else if (!in_block) {
			return oxr__heat_bad(p, "line %zu: a row outside a block (after a header "
			                        "\"%s...\")", line, header);
		} else if (fl[0] == 5 && memcmp(f[0], "Total", 5) == 0) {
			in_block = false;
		} else if (nf < 6) {
			return oxr__heat_bad(p, "line %zu: %d fields, 6 or more expected", line, nf);
		} else {
			char num[48];
			if (fl[4] == 0 || fl[4] >= sizeof(num))
				return oxr__heat_bad(p, "line %zu: realTime is no number", line);
			memcpy(num, f[4], fl[4]);
			num[fl[4]] = '\0';
			char *ne;
			double ms = strtod(num, &ne);
			if (ne == num || *ne != '\0' || !(ms >= 0 && ms <= MAX_DUR / 1000))
				return oxr__heat_bad(p, "line %zu: realTime \"%.40s\": a number of "
				                        "milliseconds, 0..1e9", line, num);
			bool executed = fl[1] == 8 && memcmp(f[1], "EXECUTED", 8) == 0;
			bool fresh;
			uint32_t ei = executed ? oxr__heat_entry_of(p, f[0], fl[0], KEY_ANY, &fresh) : 0;
			if (ei == OXP_NONE) {
				char msg[sizeof(p->err->message)];
				snprintf(msg, sizeof(msg), "%s", p->err->message);
				return oxr__fail(p->err, p->err->code, "line %zu: %s", line, msg);
			}
			if (executed) {
				char op[65], ex[65];
				snprintf(op, sizeof(op), "%.*s", (int)(fl[2] < 64 ? fl[2] : 64), f[2]);
				snprintf(ex, sizeof(ex), "%.*s", (int)(fl[3] < 64 ? fl[3] : 64), f[3]);
				if (fresh) {
					p->e[ei].op = oxr__heat_shared_text(p, p->op_raw, &p->last_op, op);
					p->e[ei].provider =
					    oxr__heat_shared_text(p, p->provider_raw, &p->last_provider, ex);
				}
				if (!oxr__heat_kernel(p, ei, base + run - 1, llround(ms * 1000)))
					return p->err->code;
			}
		}
		s = next;
	}
	if (run == 0)
		return oxr__heat_bad(p, "no block of counters");
	p->runs = base + run;
	return OXR_OK;
}

/* OpenVINO's header, else the text is CSV */
const oxr__heat_reader oxr__heat_ov = {"openvino-counters", "an openvino-counters input",
                                       HEAT_TEXT, true, sniff, parse};
