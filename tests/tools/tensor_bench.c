/*
 * tensor_bench — speed of oxp_tensor_stats_get() on a synthetic tensor built in memory.
 *
 *   tensor_bench DTYPE N DATA [REPEAT]
 *     DTYPE  f16 | bf16 | f32
 *     N      elements (e.g. 100000000)
 *     DATA   weights  normal(0, 0.02) values, 0.1% NaN and 0.1% +-Inf (typical weights)
 *            uniform  every bit pattern equally likely (the worst case for the counting)
 *            zeros    all +0 (a constant tensor: bias initialisers)
 *     REPEAT timed runs, the best is reported (default 3)
 *
 * The TensorProto (dims, data_type, raw_data) is written into one buffer and parsed with
 * oxp_tensor_file_parse(); the statistics run with a 256-bin histogram.  Prints one line:
 *   DTYPE DATA N seconds values/s ratio-to-1G/s and the RSS the statistics added beyond
 *   the data (peak RSS after minus before), then the process's peak RSS.
 */
#include "parser/oxp.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long peak_rss_kib(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t next_rand(void)
{
	uint64_t x = rng_state; /* xorshift64* */
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	rng_state = x;
	return x * 0x2545f4914f6cdd1du;
}

/* float bits -> FLOAT16 bits, truncating (synthetic data: rounding does not matter). */
static uint16_t to_f16(float f)
{
	uint32_t b;
	memcpy(&b, &f, 4);
	uint32_t s = (b >> 16) & 0x8000, e = (b >> 23) & 0xff, m = b & 0x7fffff;
	if (e == 0xff)
		return (uint16_t)(s | 0x7c00 | (m ? 0x200 : 0));
	int ne = (int)e - 127 + 15;
	if (ne >= 31)
		return (uint16_t)(s | 0x7c00);
	if (ne <= 0) { /* subnormal or zero */
		if (ne < -10)
			return (uint16_t)s;
		return (uint16_t)(s | ((m | 0x800000) >> (14 - ne)));
	}
	return (uint16_t)(s | (uint32_t)ne << 10 | m >> 13);
}

static uint16_t to_bf16(float f)
{
	uint32_t b;
	memcpy(&b, &f, 4);
	return (uint16_t)(b >> 16);
}

/* A pool of weight-like values: normal(0, 0.02), with a few NaN and infinities. */
#define POOL (1u << 20)
static float pool[POOL];

static void fill_pool(void)
{
	for (unsigned i = 0; i < POOL; i++) {
		double u1 = ((double)(next_rand() >> 11) + 1) * 0x1p-53;
		double u2 = (double)(next_rand() >> 11) * 0x1p-53;
		pool[i] = (float)(sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2) * 0.02);
		unsigned r = (unsigned)(next_rand() % 1000);
		if (r == 0)
			pool[i] = NAN;
		else if (r == 1)
			pool[i] = (next_rand() & 1) ? INFINITY : -INFINITY;
	}
}

/* One element's bytes for the chosen type and data. */
static void put(uint8_t *p, int32_t dt, const char *data)
{
	float f = 0;
	if (strcmp(data, "weights") == 0)
		f = pool[next_rand() % POOL];
	if (strcmp(data, "uniform") == 0) {
		uint64_t r = next_rand();
		if (dt == OXP_DT_FLOAT) {
			uint32_t b = (uint32_t)r;
			memcpy(p, &b, 4);
		} else {
			p[0] = (uint8_t)r;
			p[1] = (uint8_t)(r >> 8);
		}
		return;
	}
	if (dt == OXP_DT_FLOAT) {
		memcpy(p, &f, 4);
	} else {
		uint16_t h = dt == OXP_DT_FLOAT16 ? to_f16(f) : to_bf16(f);
		p[0] = (uint8_t)h;
		p[1] = (uint8_t)(h >> 8);
	}
}

static size_t put_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;
	do {
		p[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			p[n] |= 0x80;
		n++;
	} while (v);
	return n;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: tensor_bench f16|bf16|f32 N weights|uniform|zeros [REPEAT]\n");
		return 2;
	}
	int32_t dt = strcmp(argv[1], "f16") == 0    ? OXP_DT_FLOAT16
	             : strcmp(argv[1], "bf16") == 0 ? OXP_DT_BFLOAT16
	             : strcmp(argv[1], "f32") == 0  ? OXP_DT_FLOAT
	                                            : 0;
	uint64_t n = strtoull(argv[2], NULL, 10);
	const char *data = argv[3];
	int repeat = argc > 4 ? atoi(argv[4]) : 3;
	if (dt == 0 || n == 0 || repeat < 1 ||
	    (strcmp(data, "weights") && strcmp(data, "uniform") && strcmp(data, "zeros"))) {
		fprintf(stderr, "tensor_bench: bad arguments\n");
		return 2;
	}
	size_t esize = dt == OXP_DT_FLOAT ? 4 : 2;
	size_t payload = (size_t)n * esize;
	uint8_t *buf = malloc(payload + 64);
	if (buf == NULL) {
		fprintf(stderr, "tensor_bench: out of memory\n");
		return 1;
	}
	/* TensorProto: dims (1), data_type (2), raw_data (9) */
	size_t h = 0;
	buf[h++] = 0x08;
	h += put_varint(buf + h, n);
	buf[h++] = 0x10;
	h += put_varint(buf + h, (uint64_t)dt);
	buf[h++] = 0x4a;
	h += put_varint(buf + h, payload);
	fill_pool();
	if (strcmp(data, "zeros") == 0)
		memset(buf + h, 0, payload);
	else
		for (uint64_t i = 0; i < n; i++)
			put(buf + h + i * esize, dt, data);

	oxp_model *m = NULL;
	oxp_error err;
	if (oxp_tensor_file_parse(&m, buf, h + payload, NULL, &err) != OXP_OK) {
		fprintf(stderr, "tensor_bench: parse failed: %s\n", err.message);
		return 1;
	}
	const oxp_tensor *t = oxp_model_tensor_get(m);
	long rss_before = peak_rss_kib();
	uint64_t bins[256];
	oxp_stats_options opt = {256, bins, false, 0, 0};
	oxp_tensor_stats st;
	double best = 1e30;
	for (int r = 0; r < repeat; r++) {
		double t0 = now();
		if (oxp_tensor_stats_get(t, NULL, 0, &opt, &st, &err) != OXP_OK) {
			fprintf(stderr, "tensor_bench: stats failed: %s\n", err.message);
			return 1;
		}
		double dt_s = now() - t0;
		best = dt_s < best ? dt_s : best;
	}
	long rss_after = peak_rss_kib();
	double vps = (double)n / best;
	printf("%-5s %-8s %" PRIu64 " values  best of %d: %.4f s  %.3f G values/s  ratio %.2f "
	       "to 1 G/s  extra RSS %.1f MiB  (finite %" PRIu64 ", nan %" PRIu64
	       ", mean %.3g, std %.3g)\n",
	       argv[1], data, n, repeat, best, vps / 1e9, vps / 1e9,
	       (double)(rss_after - rss_before) / 1024.0, st.finite, st.nan, st.mean, st.std);
	printf("peak RSS %.1f MiB (the tensor's bytes: %.1f MiB)\n", (double)rss_after / 1024.0,
	       (double)payload / 1048576.0);
	oxp_model_free(m);
	free(buf);
	return 0;
}
