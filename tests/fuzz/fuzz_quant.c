/*
 * fuzz_quant.c — libFuzzer target: what is derived from a model's quantization, and the
 * tensor preview, in process.  The input is parsed (64 MB arena, 128 inputs per node) and linked (shape
 * inference when the last byte's bit 0 is set); then oxp_quant_analyze runs (with a roomy
 * arena, and again with a small one), and for every tensor of the model (initializers,
 * sparse initializers' values, tensor attributes of any node including Constants; the
 * first 32) oxp_dequant_find, and when it pairs the tensor, the dequantization arithmetic
 * the preview uses: oxp_dequant_span, oxp_dequant_unpack, oxp_dequant_zero_points,
 * oxp_dequant_apply(_float), oxp_dequant_scale_index, over windows at the start, the end
 * and a place the input picks.  External tensors get the input's own bytes as their
 * region (as in fuzz_tensor.c).
 *
 * Checks:
 *  - analysis fails only for memory (OXP_E_BUDGET past its arena's budget, OXP_E_NOMEM
 *    when malloc fails, with a message); its answer is
 *    consistent: one record per node, roles in range, an op's record points back at its
 *    node, plumbing joins a box of its own scope that is not plumbing, the summary counts
 *    the roles, formats are the OR of the ops' (one bit each), the precisions are sorted
 *    as documented with names unique, and their op counts add up; quantized + float +
 *    other parameters are the summary's count, each value's params what the analysis
 *    marked it (parser/params.c);
 *  - a pairing that fails is a well-formed error (DTYPE, RANGE or STORAGE, message, no
 *    byte offset) and leaves no node;
 *  - a pairing that succeeds agrees with itself: the data is the tensor, nscales is the
 *    scale tensor's element count, the zero point's stored count is its element count,
 *    the logical count is the product of the logical dims (and the packed and NBits
 *    layouts' stored count matches it), the axis arithmetic matches the dims, a block size
 *    is positive and nblocks is ceil(dim / block);
 *  - every span of logical elements lies within the stored elements; every scale index is
 *    below nscales; the incremental walk of oxp_dequant_apply picks the same scale element
 *    as oxp_dequant_scale_index (applied to a scale that holds its own index);
 *  - values read as the preview reads them: integers within [qmin, qmax] after unpacking,
 *    packed zero points within the bit width, and every dequantized value equal (bit for
 *    bit, NaN as NaN) to (float)(q - zp[s]) * scale[s] computed here;
 *  - the preview itself (oxs_preview_compute, service/preview.c: the answer of GET
 *    /models/{id}/tensors/{t}, without a server, no data folder) of every tensor as JSON
 *    and .npy, with and without dequantize=1, over a slice the input picks: an error is a
 *    4xx or 503 (never 500) with a code and a message; a JSON answer is valid UTF-8 and
 *    parses, its values slice is where and as long as asked, its statistics count the
 *    tensor's (or the dequantized) elements, finite + NaN + Inf = count, the histogram
 *    holds every finite value; with the statistics kept from that answer the next answer
 *    is the same byte for byte; a .npy answer has a well-formed 1.0 header padded to 64
 *    bytes, the descr it reports, and exactly shape x itemsize bytes of data.
 */
#include "tests/fuzz/fuzz_common.h"
#include "service/preview.h"
#include "service/query.h"

#include <jansson.h>
#include <math.h>

#define FUZZ_MAX_ALLOC ((size_t)64 << 20)
#define MAX_TENSORS 32
#define MAX_SCALES 4096 /* scale elements read (index checks need exact floats: < 2^24) */
#define WINDOW 256      /* logical elements dequantized per window */

/* ---------------------------------------------------------------------------------------
 * The analysis
 */
static bool one_bit(unsigned f)
{
	return f != 0 && (f & (f - 1)) == 0;
}

static void check_counts(const oxp_qcount *c, uint32_t n, bool by_params, uint64_t ops)
{
	uint64_t sum = 0;
	for (uint32_t i = 0; i < n; i++) {
		FZ_CHECK(c[i].name != NULL && c[i].name[0] != '\0');
		for (uint32_t j = 0; j < i; j++)
			FZ_CHECK(strcmp(c[i].name, c[j].name) != 0);
		if (i > 0) {
			if (by_params)
				FZ_CHECK(c[i - 1].parameters >= c[i].parameters);
			else
				FZ_CHECK(c[i - 1].ops >= c[i].ops);
		}
		sum += c[i].ops;
	}
	FZ_CHECK(sum == ops);
}

static void check_quant(const oxp_dag_view *v, const oxp_quant *q)
{
	FZ_CHECK(q->nnodes == v->nnodes);
	FZ_CHECK(q->nops <= v->nnodes);
	uint64_t plumbing = 0, ops_seen = 0;
	for (uint32_t ni = 0; ni < q->nnodes; ni++) {
		const oxp_qnode *qn = &q->nodes[ni];
		FZ_CHECK(qn->role <= OXP_QR_WEIGHT);
		if (qn->role == OXP_QR_OP) {
			FZ_CHECK(qn->op < q->nops && q->ops[qn->op].node == ni);
			ops_seen++;
		} else {
			FZ_CHECK(qn->op == OXP_NONE);
		}
		if (qn->role == OXP_QR_PART || qn->role == OXP_QR_WEIGHT)
			plumbing++;
		if (qn->role == OXP_QR_PART && qn->rep != OXP_NONE) {
			FZ_CHECK(qn->rep < q->nnodes && qn->rep != ni);
			uint8_t r = q->nodes[qn->rep].role;
			FZ_CHECK(r != OXP_QR_PART && r != OXP_QR_WEIGHT);
			FZ_CHECK(v->nodes[qn->rep].scope == v->nodes[ni].scope);
		} else if (qn->role != OXP_QR_PART) {
			FZ_CHECK(qn->rep == OXP_NONE);
		}
	}
	FZ_CHECK(ops_seen == q->nops);
	FZ_CHECK(plumbing == q->plumbing);
	FZ_CHECK(q->float_ops + q->plumbing + q->nops <= q->nnodes);
	unsigned formats = 0;
	uint64_t wops = 0, aops = 0, dyn = 0;
	for (uint32_t i = 0; i < q->nops; i++) {
		const oxp_qop *op = &q->ops[i];
		FZ_CHECK(op->node < v->nnodes && q->nodes[op->node].role == OXP_QR_OP);
		FZ_CHECK(op->float_op != NULL);
		FZ_CHECK(one_bit(op->format) && op->format <= OXP_QF_WEIGHT_ONLY);
		FZ_CHECK(strcmp(oxp_qformat_name(op->format), "") != 0);
		FZ_CHECK(op->gran <= OXP_QG_BLOCK);
		FZ_CHECK(op->nqt == 0 || op->qt != NULL);
		formats |= op->format;
		wops += op->wtype != 0 || op->wname != NULL;
		aops += op->atype != 0;
		dyn += op->dynamic;
		for (uint32_t k = 0; k < op->nqt; k++) {
			const oxp_qtensor *t = &op->qt[k];
			FZ_CHECK(t->slot <= OXP_QS_OUTPUT && t->gran <= OXP_QG_BLOCK);
			FZ_CHECK(t->data == OXP_NONE || t->data < v->nvalues);
			FZ_CHECK(t->scale == OXP_NONE || t->scale < v->nvalues);
			FZ_CHECK(t->zero_point == OXP_NONE || t->zero_point < v->nvalues);
			FZ_CHECK(t->node == OXP_NONE || t->node < v->nnodes);
		}
	}
	FZ_CHECK(formats == q->formats);
	FZ_CHECK(dyn == q->dynamic_ops);
	check_counts(q->weights, q->nweights, true, wops);
	check_counts(q->acts, q->nacts, false, aops);
	/* one parameter count (parser/params.c): quantized + float + other is the summary's,
	 * and each value holds what the analysis says (short of saturated sums) */
	FZ_CHECK(q->nvalues == v->nvalues);
	uint64_t qp = 0, sum = 0;
	for (uint32_t i = 0; i < q->nweights; i++)
		qp = oxp_sat_add_u64(qp, q->weights[i].parameters);
	for (uint32_t vi = 0; vi < v->nvalues; vi++) {
		const oxp_value *val = &v->values[vi];
		const oxp_qvalue *qv = &q->values[vi];
		if (oxp_value_constant(v, vi) == NULL)
			FZ_CHECK(val->param_role == OXP_PARAM_NONE && val->params == 0);
		else
			FZ_CHECK(val->param_role != OXP_PARAM_NONE);
		if (val->param_role == OXP_PARAM_QUANTIZED)
			FZ_CHECK((qv->mark & OXP_QV_DATA) && val->params == qv->count);
		if (val->param_role == OXP_PARAM_SCALE)
			FZ_CHECK(qv->mark == OXP_QV_SCALE && val->params == 0);
		if (val->param_role == OXP_PARAM_PLAIN)
			FZ_CHECK(qv->mark == 0);
		sum = oxp_sat_add_u64(sum, val->params);
	}
	FZ_CHECK(sum == v->summary.parameters);
	uint64_t three = oxp_sat_add_u64(oxp_sat_add_u64(qp, q->float_params), q->other_params);
	if (three < UINT64_MAX / 4 && v->summary.parameters < UINT64_MAX / 4)
		FZ_CHECK(three == v->summary.parameters);
}

static void analyze(const oxp_dag *d, size_t budget, bool must_fit)
{
	oxp_arena *a = oxp_arena_new(budget);
	if (a == NULL)
		return;
	const oxp_quant *q = NULL;
	oxp_error e;
	oxp_code rc = oxp_quant_analyze(d, a, &q, &e);
	if (rc != OXP_OK) {
		FZ_CHECK((rc == OXP_E_BUDGET || rc == OXP_E_NOMEM) && q == NULL);
		FZ_CHECK(e.code == rc && e.message[0] != '\0');
		FZ_CHECK(!must_fit);
	} else {
		check_quant(oxp_dag_get(d), q);
	}
	oxp_arena_free(a);
}

/* ---------------------------------------------------------------------------------------
 * Dequantization
 */
/* The bytes an external tensor reads: the input's own (as fuzz_tensor.c); NULL when its
 * entries are refused (nothing can be read then). */
static void region_of(const oxp_tensor *t, const uint8_t *data, size_t size,
                      const uint8_t **bytes, size_t *nbytes)
{
	*bytes = NULL;
	*nbytes = 0;
	if (t->data_location != 1)
		return;
	oxp_external x;
	oxp_ext_rule rule;
	oxp_error e;
	if (oxp_external_parse(t, &x, &rule, &e) != OXP_OK)
		return;
	*bytes = data;
	*nbytes = x.length <= size ? (size_t)x.length : size;
}

static uint64_t elems(const oxp_tensor *t)
{
	uint64_t c = 0;
	return oxp_dims_count(t->dims, t->ndims, &c) ? c : 0;
}

/* Two floats are the same value (NaN equals NaN; +0 and -0 differ). */
static bool same_f(float a, float b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) && isnan(b);
	return a == b && signbit(a) == signbit(b);
}

/* What the preview holds once the pairing is loaded: scales and zero points (NULL when
 * they could not be read: the preview answers an error then). */
typedef struct loaded {
	float *scale;
	int32_t *zp;
	float *zpf;
} loaded;

static void load(const oxp_dequant *dq, const uint8_t *data, size_t size, loaded *l)
{
	memset(l, 0, sizeof(*l));
	if (dq->nscales == 0 || dq->nscales > MAX_SCALES || dq->zp_stored > MAX_SCALES)
		return;
	size_t ns = (size_t)dq->nscales;
	const uint8_t *b;
	size_t nb;
	oxp_error e;
	double *sd = malloc(ns * sizeof(double));
	l->scale = malloc(ns * sizeof(float));
	if (sd == NULL || l->scale == NULL)
		goto fail;
	region_of(dq->scale, data, size, &b, &nb);
	if (oxp_tensor_read_f64(dq->scale, b, nb, 0, ns, sd, &e) != OXP_OK)
		goto fail;
	for (size_t s = 0; s < ns; s++)
		l->scale[s] = (float)sd[s];
	if (dq->zero_point != NULL && dq->zp_float) {
		l->zpf = malloc(ns * sizeof(float));
		region_of(dq->zero_point, data, size, &b, &nb);
		if (l->zpf == NULL || oxp_tensor_read_f64(dq->zero_point, b, nb, 0, ns, sd, &e) != OXP_OK)
			goto fail;
		for (size_t s = 0; s < ns; s++)
			l->zpf[s] = (float)sd[s];
	} else if (!dq->qfloat) {
		l->zp = malloc(ns * sizeof(int32_t));
		if (l->zp == NULL)
			goto fail;
		int64_t *raw = NULL;
		if (dq->zero_point != NULL) {
			uint64_t nz = dq->zp_stored ? dq->zp_stored : dq->nscales;
			raw = malloc((size_t)nz * sizeof(int64_t));
			region_of(dq->zero_point, data, size, &b, &nb);
			if (raw == NULL ||
			    oxp_tensor_read_i64(dq->zero_point, b, nb, 0, (size_t)nz, raw, &e) != OXP_OK) {
				free(raw);
				goto fail;
			}
		}
		oxp_dequant_zero_points(dq, raw, l->zp);
		free(raw);
		if (dq->zero_point == NULL)
			for (size_t s = 0; s < ns; s++)
				FZ_CHECK(l->zp[s] == dq->zp_default);
		else if (dq->zp_packed)
			for (size_t s = 0; s < ns; s++)
				FZ_CHECK(l->zp[s] >= 0 && (uint64_t)l->zp[s] < (UINT64_C(1) << dq->bits));
	}
	free(sd);
	return;
fail:
	free(sd);
	free(l->scale);
	free(l->zp);
	free(l->zpf);
	memset(l, 0, sizeof(*l));
}

/* Logical elements [i, i+n) (n <= WINDOW): spans, scale indices, and the values. */
static void dq_window(const oxp_dequant *dq, const loaded *l, uint64_t stored, uint64_t i,
                      size_t n, const uint8_t *bytes, size_t nbytes)
{
	uint64_t first, cnt;
	oxp_dequant_span(dq, i, n, &first, &cnt);
	FZ_CHECK(cnt >= 1 && first < stored && cnt <= stored - first);
	if (dq->layout == OXP_DQL_PLAIN)
		FZ_CHECK(first == i && cnt == n);
	uint64_t sidx[WINDOW];
	for (size_t k = 0; k < n; k++) {
		sidx[k] = oxp_dequant_scale_index(dq, i + k);
		FZ_CHECK(sidx[k] < dq->nscales);
	}
	float y[WINDOW];
	if (dq->nscales <= MAX_SCALES) {
		/* the incremental walk picks the element scale_index names: a scale holding its
		 * own index, q = 1 and no zero point give y = index */
		float *own = malloc((size_t)dq->nscales * sizeof(float));
		int64_t ones[WINDOW];
		double xs[WINDOW];
		if (own == NULL)
			return;
		for (uint64_t s = 0; s < dq->nscales; s++)
			own[s] = (float)s;
		for (size_t k = 0; k < n; k++)
			ones[k] = 1, xs[k] = 1.0;
		oxp_dequant_apply(dq, i, n, ones, own, NULL, NULL, y);
		for (size_t k = 0; k < n; k++)
			FZ_CHECK(y[k] == (float)sidx[k]);
		oxp_dequant_apply_float(dq, i, n, xs, own, y);
		for (size_t k = 0; k < n; k++)
			FZ_CHECK(y[k] == (float)sidx[k]);
		free(own);
	}
	if (l->scale == NULL)
		return;
	oxp_error e;
	if (dq->qfloat) {
		double x[WINDOW];
		if (oxp_tensor_read_f64(dq->data, bytes, nbytes, i, n, x, &e) != OXP_OK)
			return;
		oxp_dequant_apply_float(dq, i, n, x, l->scale, y);
		for (size_t k = 0; k < n; k++)
			FZ_CHECK(same_f(y[k], (float)x[k] * l->scale[sidx[k]]));
		return;
	}
	/* NBits rows lie far apart in storage: read fewer at once, as the preview does
	 * (dq_fit in service/preview.c) */
	while (cnt > 4 * WINDOW && n > 1) {
		n /= 2;
		oxp_dequant_span(dq, i, n, &first, &cnt);
	}
	int64_t *raw = malloc((size_t)cnt * sizeof(int64_t));
	int64_t q[WINDOW];
	if (raw == NULL)
		return;
	if (oxp_tensor_read_i64(dq->data, bytes, nbytes, first, (size_t)cnt, raw, &e) != OXP_OK) {
		free(raw);
		return;
	}
	oxp_dequant_unpack(dq, i, n, raw, first, q);
	free(raw);
	for (size_t k = 0; k < n; k++)
		FZ_CHECK(q[k] >= dq->qmin && q[k] <= dq->qmax);
	oxp_dequant_apply(dq, i, n, q, l->scale, l->zp, l->zpf, y);
	for (size_t k = 0; k < n; k++) {
		uint64_t s = sidx[k];
		float want = l->zpf != NULL ? ((float)q[k] - l->zpf[s]) * l->scale[s]
		                            : (float)(q[k] - (l->zp != NULL ? (int64_t)l->zp[s] : 0)) *
		                                  l->scale[s];
		FZ_CHECK(same_f(y[k], want));
	}
}

static void check_dequant(const oxp_dag *d, const oxp_tensor *t, const uint8_t *data,
                          size_t size, uint8_t knob)
{
	const oxp_dag_view *v = oxp_dag_get(d);
	oxp_dequant dq;
	oxp_error e;
	oxp_code rc = oxp_dequant_find(d, t, &dq, &e);
	if (rc != OXP_OK) {
		fz_parse_error(&e, rc, SIZE_MAX);
		FZ_CHECK(e.offset == 0);
		FZ_CHECK(rc == OXP_E_DTYPE || rc == OXP_E_RANGE || rc == OXP_E_STORAGE);
		FZ_CHECK(dq.node == OXP_NONE);
		return;
	}
	if (dq.node == OXP_NONE)
		return;
	/* the pairing agrees with itself */
	FZ_CHECK(dq.node < v->nnodes && dq.data == t && dq.scale != NULL);
	FZ_CHECK(dq.data_value < v->nvalues);
	FZ_CHECK(dq.ndims <= OXP_DQ_MAX_DIMS && dq.layout <= OXP_DQL_PACKED);
	FZ_CHECK(dq.gran >= OXP_QG_TENSOR && dq.gran <= OXP_QG_BLOCK);
	FZ_CHECK(dq.nscales == elems(dq.scale));
	FZ_CHECK(dq.qfloat || dq.qmin <= dq.qmax);
	uint64_t count;
	FZ_CHECK(oxp_dims_count(dq.dims, dq.ndims, &count) && count == dq.count);
	uint64_t stored = elems(t);
	switch (dq.layout) {
	case OXP_DQL_PLAIN:
		FZ_CHECK(dq.count == stored);
		break;
	case OXP_DQL_PACKED:
		FZ_CHECK(dq.bits == 2 || dq.bits == 4);
		FZ_CHECK(t->data_type == OXP_DT_UINT8 && dq.count == stored * (8 / dq.bits));
		break;
	default:
		FZ_CHECK(dq.bits == 2 || dq.bits == 4 || dq.bits == 8);
		FZ_CHECK(dq.ndims == 2 && stored == (uint64_t)dq.dims[0] * dq.row_bytes);
		break;
	}
	if (dq.zero_point != NULL && !dq.zp_packed)
		FZ_CHECK(dq.zp_stored == dq.nscales && dq.zp_stored == elems(dq.zero_point));
	if (dq.zero_point != NULL && dq.zp_packed)
		FZ_CHECK(dq.zp_stored == elems(dq.zero_point));
	if (dq.gran == OXP_QG_TENSOR) {
		FZ_CHECK(dq.nscales == 1);
	} else {
		FZ_CHECK(dq.axis >= 0 && (size_t)dq.axis < dq.ndims);
		FZ_CHECK(dq.dim == (uint64_t)dq.dims[dq.axis]);
		uint64_t inner = 1;
		for (size_t k = (size_t)dq.axis + 1; k < dq.ndims; k++)
			inner *= (uint64_t)dq.dims[k];
		FZ_CHECK(dq.inner == inner);
		if (dq.gran == OXP_QG_AXIS) {
			FZ_CHECK(dq.nscales == dq.dim);
		} else {
			FZ_CHECK(dq.block > 0);
			FZ_CHECK(dq.nblocks == dq.dim / (uint64_t)dq.block +
			                           (dq.dim % (uint64_t)dq.block != 0));
			if (dq.dim > 0)
				FZ_CHECK(dq.nscales == dq.count / dq.dim * dq.nblocks);
		}
	}
	if (dq.count == 0)
		return;
	/* the arithmetic over three windows: start, a place the input picks, end */
	loaded l;
	load(&dq, data, size, &l);
	const uint8_t *bytes;
	size_t nbytes;
	region_of(t, data, size, &bytes, &nbytes);
	size_t n = dq.count < WINDOW ? (size_t)dq.count : WINDOW;
	dq_window(&dq, &l, stored, 0, n, bytes, nbytes);
	if (dq.count > n) {
		uint64_t span = dq.count - n;
		uint64_t off = span / 255 * knob + span % 255 * knob / 255;
		dq_window(&dq, &l, stored, off, n, bytes, nbytes);
		dq_window(&dq, &l, stored, dq.count - n, n, bytes, nbytes);
	}
	free(l.scale);
	free(l.zp);
	free(l.zpf);
}

/* ---------------------------------------------------------------------------------------
 * The preview (service/preview.c's oxs_preview_compute: what GET /models/{id}/tensors/{t}
 * answers, without the server)
 */
static bool is_status(unsigned st)
{
	/* 400 bad query, 404 external data absent, 422 what the tensor or its pairing cannot
	 * give, 503 out of memory; never 500 (internal, or I/O: there is no data folder) */
	return st == 400 || st == 404 || st == 422 || st == 503;
}

/* Bytes per element of a .npy descr ("<f4", "|u1", "<c16", "|S12"). */
static uint64_t npy_itemsize(const char *descr)
{
	if (strlen(descr) < 3 || strchr("<|", descr[0]) == NULL ||
	    strchr("fiubcS", descr[1]) == NULL)
		return 0;
	char *end;
	unsigned long long v = strtoull(descr + 2, &end, 10);
	return *end == '\0' ? v : 0;
}

/* A .npy answer: format 1.0, the header padded to 64 bytes and ending in a newline, its
 * descr the one reported, and the body exactly shape x itemsize bytes. */
static void check_npy(const oxs_preview_out *o, uint64_t count_max)
{
	const uint8_t *p = (const uint8_t *)o->body.data;
	size_t n = o->body.len;
	FZ_CHECK(n >= 10 && memcmp(p, "\x93NUMPY\x01\x00", 8) == 0);
	size_t hlen = (size_t)p[8] | (size_t)p[9] << 8;
	FZ_CHECK(10 + hlen <= n && (10 + hlen) % 64 == 0 && p[10 + hlen - 1] == '\n');
	char head[2048];
	FZ_CHECK(hlen < sizeof(head));
	memcpy(head, p + 10, hlen);
	head[hlen] = '\0';
	char want[64];
	snprintf(want, sizeof(want), "{'descr': '%s', 'fortran_order': False, 'shape': (", o->npy_descr);
	FZ_CHECK(strncmp(head, want, strlen(want)) == 0);
	uint64_t itemsize = npy_itemsize(o->npy_descr);
	FZ_CHECK(itemsize > 0);
	const char *q = head + strlen(want);
	uint64_t elems = 1;
	while (*q != ')') {
		char *end;
		long long dim = strtoll(q, &end, 10);
		FZ_CHECK(end != q && dim >= 0);
		FZ_CHECK(elems == 0 || (uint64_t)dim <= UINT64_MAX / elems);
		elems *= (uint64_t)dim;
		q = end;
		if (*q == ',')
			q++;
		if (*q == ' ')
			q++;
	}
	FZ_CHECK(strncmp(q, "), }", 4) == 0);
	FZ_CHECK(elems <= count_max);
	FZ_CHECK(elems <= UINT64_MAX / itemsize && n - 10 - hlen == elems * itemsize);
}

/* A JSON answer: parses; the values slice is where it was asked and as long as said; the
 * statistics add up.  Returns the statistics' count (or -1 without statistics). */
static long long check_json(const oxs_preview_out *o, const oxs_preview_opt *opt)
{
	FZ_CHECK(fz_utf8_valid((const unsigned char *)o->body.data, o->body.len));
	json_error_t je;
	/* integers as reals: uint64 values above INT64_MAX are valid JSON jansson's integers
	 * cannot hold (the counts checked are far below 2^53); NUL allowed: a name holding a
	 * NUL byte is "\u0000", valid JSON */
	json_t *j = json_loadb(o->body.data, o->body.len, JSON_DECODE_INT_AS_REAL | JSON_ALLOW_NUL, &je);
	if (j == NULL)
		fprintf(stderr, "fuzz_quant: preview JSON: %s at %d\n", je.text, je.position);
	FZ_CHECK(json_is_object(j));
	json_t *v = json_object_get(j, "values");
	if (json_is_object(v)) {
		double count = json_number_value(json_object_get(v, "count"));
		FZ_CHECK(json_number_value(json_object_get(v, "offset")) == (double)opt->offset);
		FZ_CHECK(count >= 0 && count <= (double)opt->values);
		FZ_CHECK((double)json_array_size(json_object_get(v, "data")) == count);
	}
	long long total = -1;
	json_t *st = json_object_get(j, "stats");
	if (json_is_object(st)) {
		double c = json_number_value(json_object_get(st, "count"));
		double fin = json_number_value(json_object_get(st, "finite"));
		FZ_CHECK(fin + json_number_value(json_object_get(st, "nan")) +
		             json_number_value(json_object_get(st, "pos_inf")) +
		             json_number_value(json_object_get(st, "neg_inf")) == c);
		json_t *h = json_object_get(st, "histogram");
		if (json_is_object(h)) {
			json_t *counts = json_object_get(h, "counts");
			double sum = 0;
			for (size_t i = 0; i < json_array_size(counts); i++)
				sum += json_number_value(json_array_get(counts, i));
			FZ_CHECK(json_array_size(counts) == opt->bins && sum == fin);
		}
		total = (long long)c;
	}
	json_decref(j);
	return total;
}

/* One preview of tensor t as the query `query` asks ("format=npy&dequantize=1..."). */
static void preview(const oxp_dag *d, const oxp_tensor *t, const char *query)
{
	char q[128];
	snprintf(q, sizeof(q), "%s", query);
	oxs_query_pair pairs[8];
	int np = oxs_query_split(q, pairs, 8);
	FZ_CHECK(np >= 0);
	oxs_preview_in in = {.model = "fuzz", .key = "t", .dag = d, .t = t, .datadir = -1,
	                     .datadir_status = OXST_E_NOT_FOUND};
	char err[256];
	FZ_CHECK(oxs_preview_query(pairs, (size_t)np, &in.opt, err, sizeof(err)));
	oxs_preview_out o;
	oxs_preview_compute(&in, &o);
	fz_buf(&o.body);
	if (o.status != 0) {
		if (!is_status(o.status))
			fprintf(stderr, "fuzz_quant: preview %s: %u %s: %s\n", query, o.status, o.code,
			        o.message);
		FZ_CHECK(is_status(o.status));
		FZ_CHECK(memchr(o.code, '\0', sizeof(o.code)) && o.code[0] != '\0');
		FZ_CHECK(memchr(o.message, '\0', sizeof(o.message)) && o.message[0] != '\0');
		FZ_CHECK(fz_utf8_valid((const unsigned char *)o.message, strlen(o.message)));
		oxs_preview_out_free(&o);
		return;
	}
	/* the logical count bounds any slice: the tensor's elements, or dequantized ones */
	oxp_dequant dq;
	oxp_error e;
	uint64_t count = elems(t);
	if (in.opt.dequantize && oxp_dequant_find(d, t, &dq, &e) == OXP_OK && dq.node != OXP_NONE)
		count = dq.count;
	if (in.opt.npy) {
		FZ_CHECK(strcmp(o.type, "application/octet-stream") == 0);
		check_npy(&o, count);
	} else {
		FZ_CHECK(strcmp(o.type, "application/json") == 0);
		long long total = check_json(&o, &in.opt);
		FZ_CHECK(total < 0 || (uint64_t)total == count);
		if (o.stats.len > 0) {
			/* statistics kept from before give the same answer */
			oxs_preview_out again;
			in.stats = o.stats.data;
			in.stats_len = o.stats.len;
			oxs_preview_compute(&in, &again);
			FZ_CHECK(again.status == 0 && again.body.len == o.body.len &&
			         memcmp(again.body.data, o.body.data, o.body.len) == 0);
			oxs_preview_out_free(&again);
		}
	}
	oxs_preview_out_free(&o);
}

/* The preview's queries: JSON and .npy, with and without dequantize=1, at a place and of
 * a length the input picks. */
static void previews(const oxp_dag *d, const oxp_tensor *t, uint8_t knob)
{
	static const char *const slices[] = {"", "&values=1", "&offset=3&values=7",
	                                     "&offset=100&values=1000", "&values=0",
	                                     "&offset=9999999999"};
	static const char *const bins[] = {"", "&bins=0", "&bins=1", "&bins=7"};
	const char *slice = slices[knob % 6];
	char q[128];
	for (int dq = 0; dq < 2; dq++) {
		snprintf(q, sizeof(q), "dequantize=%d%s%s", dq, slice, bins[(knob >> 4) & 3]);
		preview(d, t, q);
		snprintf(q, sizeof(q), "format=npy&dequantize=%d%s", dq,
		         slice[0] ? slice : "&values=4096");
		preview(d, t, q);
	}
}

/* ---------------------------------------------------------------------------------------
 * The target
 */
typedef struct tlist {
	const oxp_tensor *t[MAX_TENSORS];
	size_t n;
} tlist;

static void add(tlist *l, const oxp_tensor *t)
{
	if (t != NULL && l->n < MAX_TENSORS)
		l->t[l->n++] = t;
}

/* Every tensor of the model the preview can show: initializers and sparse initializers'
 * values of every scope, tensor attributes of every node (Constants' values among them). */
static void tensors_of(const oxp_dag_view *v, tlist *l)
{
	l->n = 0;
	for (uint32_t vi = 0; vi < v->nvalues; vi++) {
		const oxp_value *val = &v->values[vi];
		if (val->kind == OXP_VALUE_INITIALIZER)
			add(l, val->initializer);
		else if (val->kind == OXP_VALUE_SPARSE_INITIALIZER)
			add(l, val->sparse_initializer->values);
	}
	for (uint32_t ni = 0; ni < v->nnodes; ni++) {
		const oxp_node *n = v->nodes[ni].proto;
		for (size_t a = 0; a < n->nattrs; a++) {
			add(l, n->attrs[a].t);
			for (size_t j = 0; j < n->attrs[a].ntensors; j++)
				add(l, &n->attrs[a].tensors[j]);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	oxp_limits lim = oxp_limits_default();
	lim.max_alloc = FUZZ_MAX_ALLOC;
	lim.max_node_io = 128;
	uint8_t last = size > 0 ? data[size - 1] : 0;
	uint8_t knob = size > 1 ? data[size - 2] : 0;
	oxp_model *m;
	oxp_dag *d;
	if (!fz_parse_link(data, size, &lim, (last & 1) != 0, &m, &d))
		return 0;
	analyze(d, (size_t)1 << 30, true);
	analyze(d, (size_t)256 << (last >> 5), false); /* 256 B .. 32 KB: the out-of-memory paths */
	tlist l;
	tensors_of(oxp_dag_get(d), &l);
	for (size_t i = 0; i < l.n; i++) {
		check_dequant(d, l.t[i], data, size, knob);
		previews(d, l.t[i], (uint8_t)(knob + i));
	}
	oxp_dag_free(d);
	oxp_model_free(m);
	return 0;
}
