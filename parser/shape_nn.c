/*
 * shape_nn.c — inference rules for convolution, pooling, normalization, recurrent,
 * resize, quantization and control-flow ops (If, Loop, Scan) of the default domain.
 *
 * Window arithmetic is done on known sizes only, with overflow checks; a symbolic
 * spatial dim goes through unchanged only where the arithmetic is the identity (kernel 1,
 * stride 1, no padding; SAME padding with stride 1; scale 1).
 */
#include "parser/shape.h"

#include <math.h>
#include <string.h>

static oxp_code out0(sh_ctx *c, const sh_type *t)
{
	return oxp__sh_out(c, 0, t);
}

/* An optional INTS attribute of exactly n entries, else filled with def.  false when
 * present with another length or type. */
static bool ints_n(const sh_ctx *c, const char *name, size_t n, int64_t def, int64_t *out)
{
	const int64_t *v;
	size_t k;
	int st = oxp__sh_attr_ints(c, name, &v, &k);
	if (st == SH_BAD || (st == SH_OK && k != n))
		return false;
	for (size_t i = 0; i < n; i++)
		out[i] = st == SH_OK ? v[i] : def;
	return true;
}

/* ---------------------------------------------------------------------------------------
 * Windows: Conv, ConvTranspose, pools
 */
enum { PAD_NOTSET, PAD_SAME_UPPER, PAD_SAME_LOWER, PAD_VALID, PAD_BAD };

static int auto_pad(const sh_ctx *c)
{
	oxp_str s;
	int st = oxp__sh_attr_str(c, "auto_pad", &s);
	if (st == SH_ABSENT || (st == SH_OK && oxp_str_eq(s, "NOTSET")))
		return PAD_NOTSET;
	if (st != SH_OK)
		return PAD_BAD;
	if (oxp_str_eq(s, "SAME_UPPER"))
		return PAD_SAME_UPPER;
	if (oxp_str_eq(s, "SAME_LOWER"))
		return PAD_SAME_LOWER;
	if (oxp_str_eq(s, "VALID"))
		return PAD_VALID;
	return PAD_BAD;
}

/* Output size of a sliding window over `in`: kernel k, stride s, dilation d, pads pb/pe.
 * ceil_mode rounds up, dropping a last window that would start inside the end padding. */
static oxp_dim window_out(oxp_dim in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe,
                          int mode, bool ceil_mode)
{
	int64_t eff, total;
	if (k < 1 || s < 1 || d < 1 || pb < 0 || pe < 0 || mode == PAD_BAD ||
	    !oxp__sh_mul(k - 1, d, &eff) || !oxp__sh_add(eff, 1, &eff))
		return sh_dim_unk();
	if (mode == PAD_SAME_UPPER || mode == PAD_SAME_LOWER) {
		if (s == 1)
			return in;
		if (!sh_known(in))
			return sh_dim_unk();
		return sh_dim_val(in.value == 0 ? 0 : (in.value - 1) / s + 1);
	}
	if (mode == PAD_VALID)
		pb = pe = 0;
	if (!sh_known(in))
		return eff == 1 && s == 1 && pb == 0 && pe == 0 ? in : sh_dim_unk();
	if (!oxp__sh_add(in.value, pb, &total) || !oxp__sh_add(total, pe, &total) || total < eff)
		return sh_dim_unk();
	int64_t span = total - eff, out = span / s + 1, start; /* s >= 1 */
	if (ceil_mode && span % s != 0) {
		out++;
		/* a start past INT64_MAX is past in + pb too (issue 22: the product overflowed) */
		if (!oxp__sh_mul(out - 1, s, &start) || start >= in.value + pb)
			out--;
	}
	return sh_dim_val(out);
}

typedef struct window {
	int32_t n; /* spatial dims */
	int64_t k[SH_MAX_RANK], s[SH_MAX_RANK], d[SH_MAX_RANK], p[2 * SH_MAX_RANK];
	int mode;
	bool ceil_mode;
} window;

/* Read kernel_shape (or the given kernel), strides, dilations, pads, auto_pad, ceil_mode
 * for n spatial dims.  false when any is unusable. */
static bool read_window(const sh_ctx *c, int32_t n, const sh_type *w, bool dilations,
                        bool ceil, window *win)
{
	win->n = n;
	win->mode = auto_pad(c);
	const int64_t *ks;
	size_t nk;
	int st = oxp__sh_attr_ints(c, "kernel_shape", &ks, &nk);
	if (st == SH_OK && nk == (size_t)n) {
		memcpy(win->k, ks, (size_t)n * sizeof(int64_t));
	} else if (st == SH_ABSENT && w != NULL && w->rank == n + 2) {
		for (int32_t i = 0; i < n; i++) {
			if (!sh_known(w->d[i + 2]))
				return false;
			win->k[i] = w->d[i + 2].value;
		}
	} else {
		return false;
	}
	int64_t cm = 0;
	if (ceil && !oxp__sh_attr_int_or(c, "ceil_mode", 0, &cm))
		return false;
	win->ceil_mode = cm != 0;
	if (!ints_n(c, "strides", (size_t)n, 1, win->s) ||
	    !ints_n(c, "pads", 2 * (size_t)n, 0, win->p) ||
	    !ints_n(c, "dilations", (size_t)n, 1, win->d))
		return false;
	/* a wrong value anywhere makes the whole window unusable */
	for (int32_t i = 0; i < n; i++) {
		int64_t eff;
		if (!dilations)
			win->d[i] = 1;
		if (win->k[i] < 1 || win->s[i] < 1 || win->d[i] < 1 || win->p[i] < 0 ||
		    win->p[i + n] < 0 || !oxp__sh_mul(win->k[i] - 1, win->d[i], &eff) ||
		    eff == INT64_MAX)
			return false;
	}
	return true;
}

/* The output of a conv or pool: batch, channels (given), then the windowed dims. */
static void window_shape(sh_type *t, const sh_type *x, oxp_dim channels, const window *win,
                         bool ok)
{
	t->rank = x->rank;
	t->d[0] = x->d[0];
	t->d[1] = channels;
	for (int32_t i = 0; i + 2 < x->rank; i++)
		t->d[i + 2] = ok ? window_out(x->d[i + 2], win->k[i], win->s[i], win->d[i], win->p[i],
		                              win->p[i + win->n], win->mode, win->ceil_mode)
		                 : sh_dim_unk();
}

static oxp_code conv_like(sh_ctx *c, size_t xi, size_t wi, int32_t elem)
{
	sh_type x, w, t;
	window win;
	oxp__sh_in(c, xi, &x);
	oxp__sh_in(c, wi, &w);
	t.elem = elem;
	t.rank = -1;
	if (x.rank < 0 && w.rank >= 3) { /* the rank still follows from W */
		x.rank = w.rank;
		for (int32_t k = 0; k < x.rank; k++)
			x.d[k] = sh_dim_unk();
	}
	if (x.rank < 3 || (w.rank >= 0 && w.rank != x.rank))
		return out0(c, &t);
	bool ok = read_window(c, x.rank - 2, &w, true, false, &win);
	window_shape(&t, &x, w.rank >= 1 ? w.d[0] : sh_dim_unk(), &win, ok);
	return out0(c, &t);
}

static oxp_code r_conv(sh_ctx *c)
{
	sh_type x;
	oxp__sh_in(c, 0, &x);
	return conv_like(c, 0, 1, x.elem);
}

static oxp_code r_conv_integer(sh_ctx *c)
{
	return conv_like(c, 0, 1, OXP_DT_INT32);
}

static oxp_code r_qlinear_conv(sh_ctx *c)
{
	sh_type z;
	oxp__sh_in(c, 7, &z);
	return conv_like(c, 0, 3, z.elem);
}

static oxp_code r_conv_transpose(sh_ctx *c)
{
	sh_type x, w, t;
	window win;
	int64_t op[SH_MAX_RANK], group;
	oxp__sh_in(c, 0, &x);
	oxp__sh_in(c, 1, &w);
	t.elem = x.elem;
	t.rank = -1;
	if (x.rank < 3 || (w.rank >= 0 && w.rank != x.rank))
		return out0(c, &t);
	int32_t n = x.rank - 2;
	bool ok = read_window(c, n, &w, true, false, &win) &&
	          ints_n(c, "output_padding", (size_t)n, 0, op) &&
	          oxp__sh_attr_int_or(c, "group", 1, &group) && group >= 1;
	t.rank = x.rank;
	t.d[0] = x.d[0];
	t.d[1] = ok && w.rank >= 2 ? oxp__sh_dim_mul(w.d[1], sh_dim_val(group)) : sh_dim_unk();
	const int64_t *os;
	size_t nos;
	int st = oxp__sh_attr_ints(c, "output_shape", &os, &nos);
	for (int32_t i = 0; i < n; i++) {
		oxp_dim in = x.d[i + 2], r = sh_dim_unk();
		int64_t eff, v;
		if (st == SH_OK && (nos == (size_t)n || nos == (size_t)x.rank)) {
			int64_t o = os[nos == (size_t)n ? i : i + 2];
			r = o >= 0 ? sh_dim_val(o) : sh_dim_unk();
		} else if (st == SH_ABSENT && ok && sh_known(in) && win.s[i] >= 1 && win.k[i] >= 1 &&
		           win.d[i] >= 1) {
			int64_t s = win.s[i];
			if (win.mode == PAD_SAME_UPPER || win.mode == PAD_SAME_LOWER) {
				if (oxp__sh_mul(in.value, s, &v))
					r = sh_dim_val(v);
			} else if (win.mode != PAD_BAD && in.value >= 1 &&
			           oxp__sh_mul(win.k[i] - 1, win.d[i], &eff) &&
			           oxp__sh_mul(in.value - 1, s, &v) && oxp__sh_add(v, op[i], &v) &&
			           oxp__sh_add(v, eff + 1, &v)) {
				int64_t pb = win.mode == PAD_VALID ? 0 : win.p[i];
				int64_t pe = win.mode == PAD_VALID ? 0 : win.p[i + n];
				if (pb >= 0 && pe >= 0 && op[i] >= 0 && !__builtin_sub_overflow(v, pb, &v) &&
				    !__builtin_sub_overflow(v, pe, &v) && v >= 0)
					r = sh_dim_val(v);
			}
		}
		t.d[i + 2] = r;
	}
	return out0(c, &t);
}

static oxp_code pool(sh_ctx *c, bool dilations, bool ceil)
{
	sh_type x, t;
	window win;
	oxp__sh_in(c, 0, &x);
	t.elem = x.elem;
	t.rank = -1;
	if (x.rank < 3)
		return out0(c, &t);
	bool ok = read_window(c, x.rank - 2, NULL, dilations, ceil, &win);
	window_shape(&t, &x, x.d[1], &win, ok);
	SH_TRY(out0(c, &t));
	t.elem = OXP_DT_INT64; /* MaxPool's Indices */
	return oxp__sh_out(c, 1, &t);
}

static oxp_code r_maxpool(sh_ctx *c)
{
	return pool(c, !sh_before(c, 10), !sh_before(c, 10));
}

static oxp_code r_avgpool(sh_ctx *c)
{
	return pool(c, !sh_before(c, 19), !sh_before(c, 10));
}

static oxp_code r_lppool(sh_ctx *c)
{
	return pool(c, !sh_before(c, 18), !sh_before(c, 18));
}

static oxp_code r_global_pool(sh_ctx *c)
{
	sh_type x;
	oxp__sh_in(c, 0, &x);
	if (x.rank >= 0 && x.rank < 2)
		x.rank = -1;
	for (int32_t k = 2; k < x.rank; k++)
		x.d[k] = sh_dim_val(1);
	return out0(c, &x);
}

static oxp_code r_max_unpool(sh_ctx *c)
{
	sh_type x, t;
	window win;
	oxp__sh_in(c, 0, &x);
	t = x;
	if (x.rank < 3) {
		t.rank = -1;
		return out0(c, &t);
	}
	int32_t n = x.rank - 2;
	sh_vals v;
	if (oxp__sh_has_in(c, 2)) {
		bool known = oxp__sh_in_vals(c, 2, &v) && v.n == (uint32_t)x.rank;
		for (int32_t k = 0; k < x.rank; k++)
			t.d[k] = known && sh_known(v.v[k]) ? v.v[k] : sh_dim_unk();
		return out0(c, &t);
	}
	bool ok = read_window(c, n, NULL, false, false, &win);
	for (int32_t i = 0; i < n; i++) {
		oxp_dim in = x.d[i + 2];
		int64_t r;
		t.d[i + 2] = sh_dim_unk();
		if (ok && sh_known(in) && in.value >= 1 && win.p[i] >= 0 && win.p[i + n] >= 0 &&
		    oxp__sh_mul(in.value - 1, win.s[i], &r) && oxp__sh_add(r, win.k[i], &r) &&
		    !__builtin_sub_overflow(r, win.p[i] + win.p[i + n], &r) && r >= 0)
			t.d[i + 2] = sh_dim_val(r);
	}
	return out0(c, &t);
}

static oxp_code r_max_roi_pool(sh_ctx *c)
{
	sh_type x, rois, t;
	int64_t ps[2];
	oxp__sh_in(c, 0, &x);
	oxp__sh_in(c, 1, &rois);
	t.elem = x.elem;
	t.rank = 4;
	bool ok = ints_n(c, "pooled_shape", 2, -1, ps);
	t.d[0] = rois.rank == 2 ? rois.d[0] : sh_dim_unk();
	t.d[1] = x.rank == 4 ? x.d[1] : sh_dim_unk();
	t.d[2] = ok && ps[0] >= 0 ? sh_dim_val(ps[0]) : sh_dim_unk();
	t.d[3] = ok && ps[1] >= 0 ? sh_dim_val(ps[1]) : sh_dim_unk();
	return out0(c, &t);
}

static oxp_code r_roi_align(sh_ctx *c)
{
	sh_type x, rois, t;
	int64_t oh, ow;
	oxp__sh_in(c, 0, &x);
	oxp__sh_in(c, 1, &rois);
	t.elem = x.elem;
	t.rank = 4;
	t.d[0] = rois.rank == 2 ? rois.d[0] : sh_dim_unk();
	t.d[1] = x.rank == 4 ? x.d[1] : sh_dim_unk();
	t.d[2] = oxp__sh_attr_int_or(c, "output_height", 1, &oh) && oh >= 0 ? sh_dim_val(oh)
	                                                                     : sh_dim_unk();
	t.d[3] = oxp__sh_attr_int_or(c, "output_width", 1, &ow) && ow >= 0 ? sh_dim_val(ow)
	                                                                    : sh_dim_unk();
	return out0(c, &t);
}

static oxp_code r_grid_sample(sh_ctx *c)
{
	sh_type x, g, t;
	oxp__sh_in(c, 0, &x);
	oxp__sh_in(c, 1, &g);
	t.elem = x.elem;
	t.rank = g.rank >= 3 ? g.rank : x.rank;
	if (t.rank < 3 || (x.rank >= 0 && x.rank != t.rank)) {
		t.rank = -1;
		return out0(c, &t);
	}
	t.d[0] = x.rank >= 0 ? x.d[0] : g.d[0];
	t.d[1] = x.rank >= 0 ? x.d[1] : sh_dim_unk();
	for (int32_t k = 2; k < t.rank; k++)
		t.d[k] = g.rank >= 0 ? g.d[k - 1] : sh_dim_unk();
	return out0(c, &t);
}

/* ---------------------------------------------------------------------------------------
 * Normalizations, Dropout
 */
static oxp_code r_batchnorm(sh_ctx *c)
{
	SH_TRY(oxp__sh_rule_same(c));
	sh_type m;
	oxp__sh_in(c, 3, &m);
	for (size_t o = 1; o < 5; o++)
		SH_TRY(oxp__sh_out(c, o, &m));
	return OXP_OK;
}

static oxp_code r_layernorm(sh_ctx *c)
{
	sh_type x, t;
	int64_t axis, stash;
	int32_t ax = 0;
	SH_TRY(oxp__sh_rule_same(c));
	oxp__sh_in(c, 0, &x);
	t = x;
	t.elem = oxp__sh_attr_int_or(c, "stash_type", OXP_DT_FLOAT, &stash) && stash > 0 &&
	                 stash < OXP_DT__COUNT
	             ? (int32_t)stash
	             : 0;
	if (!oxp__sh_attr_int_or(c, "axis", -1, &axis) || !oxp__sh_axis(axis, x.rank, &ax))
		t.rank = -1;
	for (int32_t k = ax; k < t.rank; k++)
		t.d[k] = sh_dim_val(1);
	SH_TRY(oxp__sh_out(c, 1, &t));
	return oxp__sh_out(c, 2, &t);
}

static oxp_code r_dropout(sh_ctx *c)
{
	sh_type t;
	SH_TRY(oxp__sh_rule_same(c));
	oxp__sh_in(c, 0, &t);
	if (c->opset == 0)
		t.elem = 0;
	else if (!sh_before(c, 10))
		t.elem = OXP_DT_BOOL;
	return oxp__sh_out(c, 1, &t);
}

/* ---------------------------------------------------------------------------------------
 * RNN, GRU, LSTM
 */
static oxp_code r_rnn(sh_ctx *c)
{
	sh_type x, r, y, yh;
	oxp__sh_in(c, 0, &x);
	oxp__sh_in(c, 2, &r);
	int64_t hidden = -1, layout = 0;
	oxp_dim h = sh_dim_unk(), dirs = sh_dim_unk(), seq = sh_dim_unk(), batch = sh_dim_unk();
	int st = oxp__sh_attr_int(c, "hidden_size", &hidden);
	if (st == SH_OK && hidden >= 0)
		h = sh_dim_val(hidden);
	else if (st == SH_ABSENT && r.rank == 3)
		h = r.d[2];
	oxp_str dir;
	st = oxp__sh_attr_str(c, "direction", &dir);
	if (st == SH_ABSENT || (st == SH_OK && (oxp_str_eq(dir, "forward") ||
	                                        oxp_str_eq(dir, "reverse"))))
		dirs = sh_dim_val(1);
	else if (st == SH_OK && oxp_str_eq(dir, "bidirectional"))
		dirs = sh_dim_val(2);
	bool ok = sh_before(c, 14) || oxp__sh_attr_int_or(c, "layout", 0, &layout);
	if (x.rank == 3 && (layout == 0 || layout == 1)) {
		seq = x.d[layout == 0 ? 0 : 1];
		batch = x.d[layout == 0 ? 1 : 0];
	}
	y.elem = yh.elem = x.elem;
	y.rank = ok && (layout == 0 || layout == 1) ? 4 : -1;
	yh.rank = y.rank < 0 ? -1 : 3;
	if (layout == 0) {
		y.d[0] = seq, y.d[1] = dirs, y.d[2] = batch, y.d[3] = h;
		yh.d[0] = dirs, yh.d[1] = batch, yh.d[2] = h;
	} else {
		y.d[0] = batch, y.d[1] = seq, y.d[2] = dirs, y.d[3] = h;
		yh.d[0] = batch, yh.d[1] = dirs, yh.d[2] = h;
	}
	SH_TRY(out0(c, &y));
	SH_TRY(oxp__sh_out(c, 1, &yh));
	if (oxp_str_eq(c->node->op_type, "LSTM"))
		SH_TRY(oxp__sh_out(c, 2, &yh));
	return OXP_OK;
}

/* ---------------------------------------------------------------------------------------
 * Resize, Upsample, DepthToSpace, SpaceToDepth, CenterCropPad
 */

/* Read n float scales from constant input i; false when unknown.  An empty tensor gives
 * n = 0 (Resize: "not given"). */
static bool const_floats(sh_ctx *c, size_t i, double *out, size_t cap, size_t *n)
{
	const oxp_tensor *t = oxp__sh_in_const(c, i);
	uint64_t count;
	if (t == NULL || t->storage == OXP_STORE_EXTERNAL || t->ndims != 1 ||
	    !oxp_dims_count(t->dims, t->ndims, &count) || count > cap)
		return false;
	if (count > 0 && oxp_tensor_read_f64(t, NULL, 0, 0, (size_t)count, out, NULL) != OXP_OK)
		return false;
	*n = (size_t)count;
	return true;
}

/* floor(in * scale) as the runtimes compute it (in float). */
static oxp_dim scale_dim(oxp_dim in, double scale)
{
	if (!isfinite(scale) || scale <= 0)
		return sh_dim_unk();
	if (scale == 1.0)
		return in;
	if (!sh_known(in) || in.value > (1ll << 40))
		return sh_dim_unk();
	float r = floorf((float)in.value * (float)scale);
	if (!(r >= 0 && r < 1.0e15f))
		return sh_dim_unk();
	return sh_dim_val((int64_t)r);
}

static void scale_all(sh_type *t, const sh_type *x, const double *sc, size_t n, bool ok)
{
	for (int32_t k = 0; k < x->rank; k++)
		t->d[k] = ok && n == (size_t)x->rank ? scale_dim(x->d[k], sc[k]) : sh_dim_unk();
}

static oxp_code r_upsample(sh_ctx *c)
{
	sh_type x, t;
	double sc[SH_MAX_RANK];
	size_t n = 0;
	bool ok = false;
	oxp__sh_in(c, 0, &x);
	t = x;
	if (x.rank < 0 || c->opset == 0) {
		t.rank = -1;
		return out0(c, &t);
	}
	if (sh_before(c, 7)) {
		double hs = 0, ws = 0;
		ok = x.rank == 4 && oxp__sh_attr_float(c, "height_scale", &hs) == SH_OK &&
		     oxp__sh_attr_float(c, "width_scale", &ws) == SH_OK;
		sc[0] = sc[1] = 1.0;
		sc[2] = hs;
		sc[3] = ws;
		n = 4;
	} else if (sh_before(c, 9)) {
		const float *f;
		ok = oxp__sh_attr_floats(c, "scales", &f, &n) == SH_OK && n <= SH_MAX_RANK;
		for (size_t k = 0; ok && k < n; k++)
			sc[k] = (double)f[k];
	} else {
		ok = const_floats(c, 1, sc, SH_MAX_RANK, &n);
	}
	scale_all(&t, &x, sc, n, ok);
	return out0(c, &t);
}

static oxp_code r_resize(sh_ctx *c)
{
	sh_type x, t;
	double sc[SH_MAX_RANK];
	int64_t axes[SH_MAX_RANK];
	int32_t ax[SH_MAX_RANK];
	size_t ns = 0, na = 0;
	oxp__sh_in(c, 0, &x);
	t = x;
	if (x.rank < 0 || c->opset == 0) {
		t.rank = -1;
		return out0(c, &t);
	}
	for (int32_t k = 0; k < x.rank; k++)
		t.d[k] = sh_dim_unk();
	if (sh_before(c, 11)) { /* X, scales */
		bool ok = const_floats(c, 1, sc, SH_MAX_RANK, &ns);
		scale_all(&t, &x, sc, ns, ok);
		return out0(c, &t);
	}
	/* X, roi, scales, sizes; opset 18: axes, keep_aspect_ratio_policy */
	int sa = SH_ABSENT;
	if (!sh_before(c, 18)) {
		const int64_t *av;
		sa = oxp__sh_attr_ints(c, "axes", &av, &na);
		if (sa == SH_OK && na <= SH_MAX_RANK)
			memcpy(axes, av, na * sizeof(int64_t));
		else if (sa == SH_OK)
			sa = SH_BAD;
		oxp_str pol;
		int sp = oxp__sh_attr_str(c, "keep_aspect_ratio_policy", &pol);
		if (sp == SH_BAD || (sp == SH_OK && !oxp_str_eq(pol, "stretch")))
			sa = SH_BAD; /* sizes are then adjusted: not decided here */
	}
	if (sa == SH_ABSENT) {
		na = (size_t)x.rank;
		for (size_t k = 0; k < na; k++)
			axes[k] = (int64_t)k;
	}
	if (sa == SH_BAD || !oxp__sh_norm_axes(axes, na, x.rank, ax))
		return out0(c, &t);
	sh_type st;
	sh_vals v;
	oxp__sh_in(c, 3, &st);
	bool empty = (st.rank == 1 && sh_is(st.d[0], 0)) ||
	             (oxp__sh_in_vals(c, 3, &v) && v.rank == 1 && v.n == 0);
	if (oxp__sh_has_in(c, 3) && !empty) { /* sizes (an empty one means: use scales) */
		if (oxp__sh_in_vals(c, 3, &v) && v.rank == 1 && v.n == na) {
			for (size_t k = 0; k < na; k++)
				t.d[ax[k]] = v.v[k].kind == OXP_DIM_VALUE && v.v[k].value < 0 ? sh_dim_unk()
				                                                              : v.v[k];
			for (int32_t k = 0; k < x.rank; k++)
				if (sa == SH_OK && !oxp__sh_axis_listed(ax, na, k))
					t.d[k] = x.d[k];
			return out0(c, &t);
		}
		return out0(c, &t);
	}
	if (const_floats(c, 2, sc, SH_MAX_RANK, &ns) && ns == na) {
		for (size_t k = 0; k < na; k++)
			t.d[ax[k]] = scale_dim(x.d[ax[k]], sc[k]);
		for (int32_t k = 0; k < x.rank; k++)
			if (sa == SH_OK && !oxp__sh_axis_listed(ax, na, k))
				t.d[k] = x.d[k];
	}
	return out0(c, &t);
}

static oxp_code space_depth(sh_ctx *c, bool to_space)
{
	sh_type x, t;
	int64_t b, b2;
	oxp__sh_in(c, 0, &x);
	t = x;
	if (x.rank != 4 || oxp__sh_attr_int(c, "blocksize", &b) != SH_OK || b < 1 ||
	    !oxp__sh_mul(b, b, &b2)) {
		t.rank = x.rank == 4 ? 4 : -1;
		for (int32_t k = 1; k < t.rank; k++)
			t.d[k] = sh_dim_unk();
		return out0(c, &t);
	}
	if (to_space) {
		t.d[1] = sh_known(x.d[1]) && x.d[1].value % b2 == 0 ? sh_dim_val(x.d[1].value / b2)
		                                                   : sh_dim_unk();
		t.d[2] = oxp__sh_dim_mul(x.d[2], sh_dim_val(b));
		t.d[3] = oxp__sh_dim_mul(x.d[3], sh_dim_val(b));
	} else {
		t.d[1] = oxp__sh_dim_mul(x.d[1], sh_dim_val(b2));
		for (int k = 2; k < 4; k++)
			t.d[k] = sh_known(x.d[k]) && x.d[k].value % b == 0 ? sh_dim_val(x.d[k].value / b)
			                                                  : sh_dim_unk();
	}
	return out0(c, &t);
}

static oxp_code r_depth_to_space(sh_ctx *c)
{
	return space_depth(c, true);
}

static oxp_code r_space_to_depth(sh_ctx *c)
{
	return space_depth(c, false);
}

static oxp_code r_center_crop_pad(sh_ctx *c)
{
	sh_type x, t;
	int64_t axes[SH_MAX_RANK];
	int32_t ax[SH_MAX_RANK];
	size_t na;
	sh_vals v;
	oxp__sh_in(c, 0, &x);
	t = x;
	if (x.rank < 0)
		return out0(c, &t);
	const int64_t *av;
	int st = oxp__sh_attr_ints(c, "axes", &av, &na);
	if (st == SH_OK && na <= SH_MAX_RANK) {
		memcpy(axes, av, na * sizeof(int64_t));
	} else {
		na = (size_t)x.rank;
		for (size_t k = 0; k < na; k++)
			axes[k] = (int64_t)k;
	}
	bool known = st != SH_BAD && oxp__sh_norm_axes(axes, na, x.rank, ax) &&
	             oxp__sh_in_vals(c, 1, &v) && v.n == na;
	for (int32_t k = 0; k < x.rank; k++)
		if (!known || oxp__sh_axis_listed(ax, na, k))
			t.d[k] = sh_dim_unk();
	for (size_t k = 0; known && k < na; k++)
		t.d[ax[k]] = v.v[k].kind == OXP_DIM_VALUE && v.v[k].value < 0 ? sh_dim_unk() : v.v[k];
	return out0(c, &t);
}

/* ---------------------------------------------------------------------------------------
 * Quantization
 */
static oxp_code r_quantize(sh_ctx *c)
{
	sh_type x, z;
	int64_t dt = 0;
	oxp__sh_in(c, 0, &x);
	if (oxp__sh_in(c, 2, &z))
		x.elem = z.elem;
	else if (oxp__sh_attr_int_or(c, "output_dtype", 0, &dt) && dt > 0 && dt < OXP_DT__COUNT)
		x.elem = (int32_t)dt;
	else
		x.elem = dt == 0 ? OXP_DT_UINT8 : 0;
	return out0(c, &x);
}

static oxp_code r_dequantize(sh_ctx *c)
{
	sh_type x, s;
	int64_t dt = 0;
	oxp__sh_in(c, 0, &x);
	oxp__sh_in(c, 1, &s);
	if (c->opset == 0)
		x.elem = 0;
	else if (sh_before(c, 19))
		x.elem = OXP_DT_FLOAT;
	else if (oxp__sh_attr_int_or(c, "output_dtype", 0, &dt) && dt > 0 && dt < OXP_DT__COUNT)
		x.elem = (int32_t)dt;
	else
		x.elem = dt == 0 ? s.elem : 0;
	return out0(c, &x);
}

static oxp_code r_dynamic_quantize(sh_ctx *c)
{
	sh_type x, t;
	oxp__sh_in(c, 0, &x);
	x.elem = OXP_DT_UINT8;
	SH_TRY(out0(c, &x));
	t.rank = 0;
	t.elem = OXP_DT_FLOAT;
	SH_TRY(oxp__sh_out(c, 1, &t));
	t.elem = OXP_DT_UINT8;
	return oxp__sh_out(c, 2, &t);
}

/* ---------------------------------------------------------------------------------------
 * Control flow.  A subgraph's outputs are typed by the time the holding node's rule runs.
 */

/* The subgraph scope of the current node held by attribute `name`, else OXP_NONE. */
static uint32_t subscope(const sh_ctx *c, const char *name)
{
	const oxp_dnode *dn = c->dn;
	for (uint32_t k = 0; k < dn->nsubscopes; k++) {
		const oxp_scope *s = &c->dag->scopes[dn->first_subscope + k];
		if (s->attr != NULL && strcmp(s->attr, name) == 0)
			return dn->first_subscope + k;
	}
	return OXP_NONE;
}

static void scope_output(const sh_ctx *c, uint32_t si, size_t o, sh_type *t)
{
	const oxp_scope *s = &c->dag->scopes[si];
	if (o < s->noutputs)
		oxp__sh_value_type(c->dag, s->outputs[o], t);
	else
		oxp__sh_type_unknown(t);
}

static oxp_code r_if(sh_ctx *c)
{
	uint32_t th = subscope(c, "then_branch"), el = subscope(c, "else_branch");
	if (th == OXP_NONE || el == OXP_NONE)
		return OXP_OK;
	for (size_t o = 0; o < oxp__sh_nout(c); o++) {
		sh_type a, b, t;
		scope_output(c, th, o, &a);
		scope_output(c, el, o, &b);
		oxp__sh_type_union(&t, &a, &b);
		SH_TRY(oxp__sh_out(c, o, &t));
	}
	return OXP_OK;
}

/* Type the subgraph input `k` of scope si (a declared type stays first). */
static oxp_code set_scope_input(sh_ctx *c, uint32_t si, size_t k, const sh_type *t)
{
	const oxp_scope *s = &c->dag->scopes[si];
	if (k >= s->ninputs)
		return OXP_OK;
	return oxp__sh_set_value(c, s->inputs[k], t);
}

/* A loop-carried value: its type only (the shape may change from one iteration to the
 * next). */
static void carried(sh_type *t)
{
	t->rank = -1;
}

static oxp_code pre_loop(sh_ctx *c)
{
	uint32_t body = subscope(c, "body");
	if (body == OXP_NONE)
		return OXP_OK;
	sh_type t;
	t.elem = OXP_DT_INT64;
	t.rank = 0;
	SH_TRY(set_scope_input(c, body, 0, &t));
	t.elem = OXP_DT_BOOL;
	SH_TRY(set_scope_input(c, body, 1, &t));
	for (size_t i = 2; i < oxp__sh_nin(c); i++) {
		oxp__sh_in(c, i, &t);
		carried(&t);
		SH_TRY(set_scope_input(c, body, i, &t));
	}
	return OXP_OK;
}

static oxp_code r_loop(sh_ctx *c)
{
	uint32_t body = subscope(c, "body");
	if (body == OXP_NONE)
		return OXP_OK;
	size_t n = oxp__sh_nin(c) >= 2 ? oxp__sh_nin(c) - 2 : 0; /* carried values */
	for (size_t o = 0; o < oxp__sh_nout(c); o++) {
		sh_type a, b, t;
		scope_output(c, body, o + 1, &b);
		if (o < n) {
			/* the initial value when the body never runs, else the body's last output */
			oxp__sh_in(c, o + 2, &a);
			oxp__sh_type_union(&t, &a, &b);
		} else {
			/* scan outputs: the body's per-iteration values stacked */
			t.elem = b.elem;
			t.rank = b.rank >= 0 && b.rank < SH_MAX_RANK ? b.rank + 1 : -1;
			t.d[0] = sh_dim_unk();
			for (int32_t k = 0; k < b.rank && t.rank > 0; k++)
				t.d[k + 1] = b.d[k];
		}
		SH_TRY(oxp__sh_out(c, o, &t));
	}
	return OXP_OK;
}

/* Scan (opset >= 9): num_scan_inputs M of the inputs are scanned along their axes. */
typedef struct scan_info {
	int64_t m;            /* scan inputs */
	size_t nstate;        /* state variables */
	const int64_t *in_axes, *out_axes;
	size_t nin_axes, nout_axes;
	bool ok;
} scan_info;

static void scan_read(const sh_ctx *c, scan_info *s)
{
	int st1, st2;
	s->ok = !sh_before(c, 9) && oxp__sh_attr_int(c, "num_scan_inputs", &s->m) == SH_OK &&
	        s->m >= 1 && (size_t)s->m <= oxp__sh_nin(c);
	s->nstate = s->ok ? oxp__sh_nin(c) - (size_t)s->m : 0;
	st1 = oxp__sh_attr_ints(c, "scan_input_axes", &s->in_axes, &s->nin_axes);
	st2 = oxp__sh_attr_ints(c, "scan_output_axes", &s->out_axes, &s->nout_axes);
	if (st1 == SH_BAD || st2 == SH_BAD || (st1 == SH_OK && s->nin_axes != (size_t)s->m))
		s->ok = false;
	if (st1 == SH_ABSENT)
		s->nin_axes = 0;
	if (st2 == SH_ABSENT)
		s->nout_axes = 0;
}

static int64_t scan_in_axis(const scan_info *s, size_t k)
{
	return s->nin_axes > 0 ? s->in_axes[k] : 0;
}

static oxp_code pre_scan(sh_ctx *c)
{
	uint32_t body = subscope(c, "body");
	scan_info s;
	scan_read(c, &s);
	if (body == OXP_NONE || !s.ok)
		return OXP_OK;
	sh_type t;
	for (size_t i = 0; i < s.nstate; i++) {
		oxp__sh_in(c, i, &t);
		carried(&t);
		SH_TRY(set_scope_input(c, body, i, &t));
	}
	for (size_t k = 0; k < (size_t)s.m; k++) {
		int32_t ax;
		oxp__sh_in(c, s.nstate + k, &t);
		if (oxp__sh_axis(scan_in_axis(&s, k), t.rank, &ax)) {
			memmove(&t.d[ax], &t.d[ax + 1], (size_t)(t.rank - ax - 1) * sizeof(oxp_dim));
			t.rank--;
		} else {
			t.rank = -1;
		}
		SH_TRY(set_scope_input(c, body, s.nstate + k, &t));
	}
	return OXP_OK;
}

static oxp_code r_scan(sh_ctx *c)
{
	uint32_t body = subscope(c, "body");
	scan_info s;
	scan_read(c, &s);
	if (body == OXP_NONE || !s.ok)
		return OXP_OK;
	/* the scan length: the scanned axis of the first scan input */
	sh_type x, a, b, t;
	int32_t ax;
	oxp_dim len = sh_dim_unk();
	oxp__sh_in(c, s.nstate, &x);
	if (oxp__sh_axis(scan_in_axis(&s, 0), x.rank, &ax))
		len = x.d[ax];
	for (size_t o = 0; o < oxp__sh_nout(c); o++) {
		scope_output(c, body, o, &b);
		if (o < s.nstate) {
			oxp__sh_in(c, o, &a);
			oxp__sh_type_union(&t, &a, &b);
		} else {
			size_t k = o - s.nstate;
			int64_t axis = s.nout_axes > k ? s.out_axes[k] : (s.nout_axes == 0 ? 0 : -999);
			t.elem = b.elem;
			t.rank = -1;
			if (b.rank >= 0 && b.rank < SH_MAX_RANK && oxp__sh_axis(axis, b.rank + 1, &ax)) {
				t.rank = b.rank + 1;
				for (int32_t i = 0, j = 0; i < t.rank; i++)
					t.d[i] = i == ax ? len : b.d[j++];
			}
		}
		SH_TRY(oxp__sh_out(c, o, &t));
	}
	return OXP_OK;
}

/* ---------------------------------------------------------------------------------------
 * The table (sorted by name, strcmp order)
 */
static const sh_op nn_ops[] = {
    {"AveragePool", r_avgpool, NULL},
    {"BatchNormalization", r_batchnorm, NULL},
    {"CenterCropPad", r_center_crop_pad, NULL},
    {"Conv", r_conv, NULL},
    {"ConvInteger", r_conv_integer, NULL},
    {"ConvTranspose", r_conv_transpose, NULL},
    {"DepthToSpace", r_depth_to_space, NULL},
    {"DequantizeLinear", r_dequantize, NULL},
    {"Dropout", r_dropout, NULL},
    {"DynamicQuantizeLinear", r_dynamic_quantize, NULL},
    {"GRU", r_rnn, NULL},
    {"GlobalAveragePool", r_global_pool, NULL},
    {"GlobalLpPool", r_global_pool, NULL},
    {"GlobalMaxPool", r_global_pool, NULL},
    {"GridSample", r_grid_sample, NULL},
    {"GroupNormalization", oxp__sh_rule_same, NULL},
    {"If", r_if, NULL},
    {"InstanceNormalization", oxp__sh_rule_same, NULL},
    {"LRN", oxp__sh_rule_same, NULL},
    {"LSTM", r_rnn, NULL},
    {"LayerNormalization", r_layernorm, NULL},
    {"Loop", r_loop, pre_loop},
    {"LpNormalization", oxp__sh_rule_same, NULL},
    {"LpPool", r_lppool, NULL},
    {"MaxPool", r_maxpool, NULL},
    {"MaxRoiPool", r_max_roi_pool, NULL},
    {"MaxUnpool", r_max_unpool, NULL},
    {"MeanVarianceNormalization", oxp__sh_rule_same, NULL},
    {"QLinearConv", r_qlinear_conv, NULL},
    {"QuantizeLinear", r_quantize, NULL},
    {"RNN", r_rnn, NULL},
    {"Resize", r_resize, NULL},
    {"RoiAlign", r_roi_align, NULL},
    {"Scan", r_scan, pre_scan},
    {"SpaceToDepth", r_space_to_depth, NULL},
    {"Upsample", r_upsample, NULL},
};

const sh_op *oxp__sh_find_nn_op(oxp_str op_type)
{
	return oxp__sh_table_find(nn_ops, sizeof(nn_ops) / sizeof(nn_ops[0]), op_type);
}
