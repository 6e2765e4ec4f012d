/*
 * fuzz_tensor.c — libFuzzer target: tensor value decoding.  The input is parsed as a lone
 * TensorProto, and as a model whose first initializers and Constant tensors are taken; for
 * each tensor, oxp_tensor_size_get and every reader (read, read_f64, read_i64, read_u64,
 * read_bits, read_str) run over a bounded window, then the statistics with a histogram.
 * External tensors get the input's own bytes as their "region".
 *
 * Checks:
 *  - when the size check fails, every reader fails too (nothing is read from storage that
 *    disagrees with dims x dtype), with a well-formed error;
 *  - when it succeeds, the readers the type allows succeed on any window inside the
 *    tensor and refuse one past its end (OXP_E_RANGE), and agree with each other: the
 *    scalar, the double and the bit pattern of an element are the same value
 *    (oxp_bits_to_f64), integers read the same as int64, uint64 and scalar;
 *  - the statistics add up: finite + NaN + Inf = count, the histogram holds every finite
 *    element exactly once (with below/above for a given range), min <= mean <= max.
 * Outputs are malloc'd at exactly the window's size so that ASan sees any write past it.
 */
#include "tests/fuzz/fuzz_common.h"

#include <math.h>

#define FUZZ_MAX_ALLOC ((size_t)64 << 20)
#define WINDOW 1024  /* elements read per call */
#define MAX_TENSORS 16

/* Two doubles are the same value (NaN equals NaN; +0 and -0 differ). */
static bool same(double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) && isnan(b);
	return a == b && signbit(a) == signbit(b);
}

static void check_stats(const oxp_tensor *t, const uint8_t *bytes, size_t nbytes,
                        uint64_t count, uint8_t knob)
{
	size_t nbins = knob % 5 == 0 ? 0 : (size_t)knob * 7 % 300 + 1;
	uint64_t *bins = nbins ? calloc(nbins, sizeof(*bins)) : NULL;
	if (nbins && bins == NULL)
		return;
	oxp_stats_options opt = {.nbins = nbins, .bins = bins};
	if (knob & 0x80) {
		opt.has_range = true;
		opt.lo = -1.0 - (knob & 7);
		opt.hi = (knob & 0x40) ? 2.5 : 1e6;
	}
	oxp_tensor_stats s;
	oxp_error e;
	oxp_code rc = oxp_tensor_stats_get(t, bytes, nbytes, &opt, &s, &e);
	if (rc != OXP_OK) {
		fz_parse_error(&e, rc, SIZE_MAX);
		FZ_CHECK(rc == OXP_E_NOMEM || ((rc == OXP_E_STORAGE || rc <= OXP_E_PACKED) &&
		                               t->typed_fields != 0 && !t->has_raw_data));
		free(bins);
		return;
	}
	FZ_CHECK(s.count == count);
	FZ_CHECK(s.finite + s.nan + s.pos_inf + s.neg_inf == s.count);
	FZ_CHECK(s.zeros <= s.finite);
	if (s.finite > 0) {
		FZ_CHECK(s.min <= s.max);
		FZ_CHECK(!isnan(s.mean) && !isnan(s.std) && s.std >= 0);
		/* the mean of finite doubles may round a little outside [min, max] */
		double slack = fabs(s.max - s.min) * 1e-9 + fabs(s.max) * 1e-12 + 1e-300;
		FZ_CHECK(s.mean >= s.min - slack && s.mean <= s.max + slack);
	} else {
		FZ_CHECK(isnan(s.min) && isnan(s.max));
	}
	if (s.is_int)
		FZ_CHECK(s.finite == 0 || s.imin <= s.imax || s.umin <= s.umax);
	if (nbins > 0) {
		uint64_t sum = 0;
		for (size_t i = 0; i < nbins; i++)
			sum += bins[i];
		FZ_CHECK(sum + s.below + s.above == s.finite);
		if (!opt.has_range)
			FZ_CHECK(s.below == 0 && s.above == 0);
	}
	free(bins);
}

/* All readers over [off, off+n) of a tensor whose size check passed. */
static void read_window(const oxp_tensor *t, const uint8_t *bytes, size_t nbytes,
                        uint64_t off, size_t n)
{
	oxp_value_class cls = oxp_dtype_class(t->data_type);
	bool complex = cls == OXP_VC_COMPLEX;
	oxp_scalar *sc = malloc((n ? n : 1) * sizeof(*sc));
	double *f = malloc((n ? n : 1) * sizeof(*f));
	uint64_t *bits = malloc((n ? n : 1) * (complex ? 2 : 1) * sizeof(*bits));
	int64_t *iv = malloc((n ? n : 1) * sizeof(*iv));
	uint64_t *uv = malloc((n ? n : 1) * sizeof(*uv));
	oxp_str *sv = malloc((n ? n : 1) * sizeof(*sv));
	oxp_error e;
	if (!sc || !f || !bits || !iv || !uv || !sv)
		goto done;

	oxp_code rc = oxp_tensor_read(t, bytes, nbytes, off, n, sc, &e);
	if (rc != OXP_OK) {
		/* typed fields are counted by the size check, decoded only when read: a value
		 * that does not fit its type (int32_data 128 of an INT8) or a malformed varint
		 * (11 bytes) is found here; every reader then refuses the window the same way */
		fz_parse_error(&e, rc, SIZE_MAX);
		if (rc != OXP_E_STORAGE && rc > OXP_E_PACKED)
			fprintf(stderr, "fuzz_tensor: read [%llu,+%zu): %s: %s\n", (unsigned long long)off,
			        n, oxp_code_name(rc), e.message);
		FZ_CHECK(rc == OXP_E_STORAGE || rc <= OXP_E_PACKED);
		FZ_CHECK(t->typed_fields != 0 && !t->has_raw_data);
		FZ_CHECK(oxp_tensor_read_f64(t, bytes, nbytes, off, n, f, &e) == rc);
		FZ_CHECK(oxp_tensor_read_bits(t, bytes, nbytes, off, n, bits, &e) == rc);
		goto done;
	}
	for (size_t i = 0; i < n; i++)
		FZ_CHECK(sc[i].cls == cls);
	if (cls == OXP_VC_STRING) {
		FZ_CHECK(oxp_tensor_read_str(t, off, n, sv, &e) == OXP_OK);
		for (size_t i = 0; i < n; i++)
			FZ_CHECK(sv[i].p == sc[i].v.s.p && sv[i].len == sc[i].v.s.len);
		FZ_CHECK(oxp_tensor_read_f64(t, bytes, nbytes, off, n, f, &e) == OXP_E_DTYPE);
		FZ_CHECK(oxp_tensor_read_bits(t, bytes, nbytes, off, n, bits, &e) == OXP_E_DTYPE);
		goto done;
	}
	/* read_str takes no region: an external tensor is refused as such */
	FZ_CHECK(oxp_tensor_read_str(t, off, n, sv, &e) ==
	         (t->data_location == 1 ? OXP_E_EXTERNAL : OXP_E_DTYPE));
	FZ_CHECK(oxp_tensor_read_f64(t, bytes, nbytes, off, n, f, &e) == OXP_OK);
	FZ_CHECK(oxp_tensor_read_bits(t, bytes, nbytes, off, n, bits, &e) == OXP_OK);
	for (size_t i = 0; i < n; i++) {
		uint64_t b = complex ? bits[2 * i] : bits[i];
		double fb = oxp_bits_to_f64(t->data_type, b);
		switch (cls) {
		case OXP_VC_FLOAT:
			FZ_CHECK(same(f[i], sc[i].v.f));
			if (!isnan(fb))
				FZ_CHECK(same(fb, f[i]));
			else
				FZ_CHECK(isnan(f[i]));
			break;
		case OXP_VC_COMPLEX:
			FZ_CHECK(same(f[i], sc[i].v.c[0]));
			FZ_CHECK(same(fb, sc[i].v.c[0]) || (isnan(fb) && isnan(sc[i].v.c[0])));
			FZ_CHECK(same(oxp_bits_to_f64(t->data_type, bits[2 * i + 1]), sc[i].v.c[1]) ||
			         isnan(sc[i].v.c[1]));
			break;
		case OXP_VC_INT:
			FZ_CHECK(f[i] == (double)sc[i].v.i);
			break;
		case OXP_VC_UINT:
			FZ_CHECK(f[i] == (double)sc[i].v.u);
			break;
		case OXP_VC_BOOL:
			FZ_CHECK(b <= 1 && f[i] == (sc[i].v.b ? 1.0 : 0.0));
			break;
		default:
			FZ_CHECK(0);
		}
	}
	bool integral = cls == OXP_VC_INT || cls == OXP_VC_UINT || cls == OXP_VC_BOOL;
	rc = oxp_tensor_read_i64(t, bytes, nbytes, off, n, iv, &e);
	if (!integral) {
		FZ_CHECK(rc == OXP_E_DTYPE);
	} else if (rc == OXP_OK) {
		for (size_t i = 0; i < n; i++)
			FZ_CHECK(cls == OXP_VC_INT   ? iv[i] == sc[i].v.i
			         : cls == OXP_VC_UINT ? (uint64_t)iv[i] == sc[i].v.u
			                              : iv[i] == (sc[i].v.b ? 1 : 0));
	} else {
		FZ_CHECK(rc == OXP_E_RANGE && cls == OXP_VC_UINT); /* above INT64_MAX */
	}
	rc = oxp_tensor_read_u64(t, bytes, nbytes, off, n, uv, &e);
	if (!integral) {
		FZ_CHECK(rc == OXP_E_DTYPE);
	} else if (rc == OXP_OK) {
		for (size_t i = 0; i < n; i++)
			FZ_CHECK(cls == OXP_VC_INT   ? (int64_t)uv[i] == sc[i].v.i && sc[i].v.i >= 0
			         : cls == OXP_VC_UINT ? uv[i] == sc[i].v.u
			                              : uv[i] == (sc[i].v.b ? 1u : 0u));
	} else {
		FZ_CHECK(rc == OXP_E_RANGE && cls == OXP_VC_INT); /* a negative value */
	}
done:
	free(sc);
	free(f);
	free(bits);
	free(iv);
	free(uv);
	free(sv);
}

static void check_tensor(const oxp_tensor *t, const uint8_t *data, size_t size, uint8_t knob)
{
	oxp_tensor_size sz;
	oxp_error e;
	const uint8_t *bytes = NULL;
	size_t nbytes = 0;
	if (t->data_location == 1) {
		oxp_external x;
		oxp_ext_rule rule = OXP_EXT__COUNT;
		oxp_code xr = oxp_external_parse(t, &x, &rule, &e);
		FZ_CHECK((xr == OXP_OK) == (rule == OXP_EXT_OK));
		FZ_CHECK(strcmp(oxp_ext_rule_name(rule), "unknown") != 0);
		if (xr != OXP_OK)
			fz_parse_error(&e, xr, SIZE_MAX);
		oxp_scalar one;
		FZ_CHECK(oxp_tensor_read(t, NULL, 0, 0, 0, &one, &e) != OXP_OK);
		if (xr != OXP_OK) {
			/* refused entries: a caller never gets to map a region (oxp_external_open
			 * fails the same way), so there is nothing to read */
			FZ_CHECK(oxp_tensor_size_get(t, &sz, &e) == xr);
			return;
		}
		/* the region: the input's own bytes, of the length asked when there are enough */
		bytes = data;
		nbytes = x.length <= size ? (size_t)x.length : size;
	}
	oxp_code rc = oxp_tensor_size_get(t, &sz, &e);
	oxp_scalar one;
	if (rc != OXP_OK) {
		fz_parse_error(&e, rc, SIZE_MAX);
		/* no reader may read storage that disagrees with dims x dtype */
		FZ_CHECK(oxp_tensor_read(t, bytes, nbytes, 0, 1, &one, &e) != OXP_OK);
		FZ_CHECK(oxp_tensor_read(t, bytes, nbytes, 0, 0, &one, &e) != OXP_OK);
		oxp_tensor_stats s;
		FZ_CHECK(oxp_tensor_stats_get(t, bytes, nbytes, NULL, &s, &e) != OXP_OK);
		return;
	}
	rc = oxp_tensor_read(t, bytes, nbytes, 0, 0, &one, &e);
	if (rc != OXP_OK) {
		/* the external region given may not be what the entries promise */
		fz_parse_error(&e, rc, SIZE_MAX);
		FZ_CHECK(t->data_location == 1);
		return;
	}
	uint64_t count = sz.count;
	size_t n = count < WINDOW ? (size_t)count : WINDOW;
	read_window(t, bytes, nbytes, 0, n);
	if (count > n) {
		uint64_t off = (count - n) / 255 * knob + (count - n) % 255 * knob / 255;
		read_window(t, bytes, nbytes, off, n);
		read_window(t, bytes, nbytes, count - 1, 1);
	}
	/* outside the tensor */
	FZ_CHECK(oxp_tensor_read(t, bytes, nbytes, count, 1, &one, &e) == OXP_E_RANGE);
	FZ_CHECK(oxp_tensor_read(t, bytes, nbytes, UINT64_MAX, 1, &one, &e) == OXP_E_RANGE);
	FZ_CHECK(oxp_tensor_read(t, bytes, nbytes, 1, SIZE_MAX, &one, &e) == OXP_E_RANGE);
	if (oxp_dtype_class(t->data_type) != OXP_VC_STRING)
		check_stats(t, bytes, nbytes, count, knob);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	oxp_limits lim = oxp_limits_default();
	lim.max_alloc = FUZZ_MAX_ALLOC;
	uint8_t knob = size > 0 ? data[size / 2] : 0;
	oxp_model *m = NULL;
	oxp_error e;
	if (oxp_tensor_file_parse(&m, data, size, &lim, &e) == OXP_OK) {
		check_tensor(oxp_model_tensor_get(m), data, size, knob);
		oxp_model_free(m);
	}
	m = NULL;
	if (oxp_model_parse(&m, data, size, &lim, &e) == OXP_OK) {
		const oxp_graph *g = oxp_model_proto_get(m)->graph;
		size_t done = 0;
		for (size_t i = 0; g != NULL && i < g->ninitializers && done < MAX_TENSORS; i++, done++)
			check_tensor(&g->initializers[i], data, size, knob);
		for (size_t i = 0; g != NULL && i < g->nnodes && done < MAX_TENSORS; i++)
			for (size_t a = 0; a < g->nodes[i].nattrs && done < MAX_TENSORS; a++)
				if (g->nodes[i].attrs[a].t != NULL) {
					check_tensor(g->nodes[i].attrs[a].t, data, size, knob);
					done++;
				}
		oxp_model_free(m);
	}
	/* the scalar conversions over the input's own bits */
	for (size_t i = 0; i + 1 < size && i < 64; i += 2) {
		uint16_t h = (uint16_t)(data[i] | data[i + 1] << 8);
		uint32_t a = oxp_f16_to_f32_bits(h), b = oxp_bf16_to_f32_bits(h);
		FZ_CHECK(b == (uint32_t)h << 16);
		(void)a;
		for (int32_t dt = OXP_DT_FLOAT8E4M3FN; dt <= OXP_DT_FLOAT8E8M0; dt++)
			(void)oxp_f8_to_f32_bits(dt, data[i]);
	}
	return 0;
}
