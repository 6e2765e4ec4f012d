/*
 * raster.c — our own SVG as PNG: librsvg parses it and draws it with cairo into an image
 * surface, which cairo writes as PNG (render/oxr.h, "Raster images").
 *
 * Why librsvg: it is the SVG renderer of GNOME and of MediaWiki's thumbnails, draws text
 * through Pango with the same fontconfig families a browser picks ("Helvetica, Arial,
 * sans-serif" is Liberation Sans on Debian, in the image too), and a browser's picture of
 * the same SVG differs only in text anti-aliasing (tests/e2e/png.test.mjs).  It is loaded
 * when the first image is drawn (oxr_dlopen, as Graphviz is), never at the program's start:
 * its closure is some forty libraries (GLib, Pango, HarfBuzz, fontconfig, cairo, pixman).
 *
 * Safety: the size is settled from the SVG's own width and height before any pixel is
 * allocated (oxr_raster_size: the budget, the side limit), so a drawing that would need
 * 100k x 100k pixels is scaled down or refused without asking for the memory; the service
 * draws only in its layout worker process (worker.c), under the worker's memory limit, so
 * a fault of the rasterizer ends that process and not the server.
 */
#include "render/internal.h"

#include <cairo.h>
#include <librsvg/rsvg.h>
#include <zlib.h>

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RSVG_SONAME "librsvg-2.so.2"
OXR_DLOPEN_NOTE(rsvg, "png", "librsvg and cairo, for PNG images of drawings", RSVG_SONAME);

/* librsvg's, and (through its dependencies: dlsym searches them) GLib's, cairo's and
 * zlib's (cairo's PNG writer links it) */
#define RSVG_FNS(X)                                                                        \
	X(rsvg_handle_new_from_data) X(rsvg_handle_set_dpi)                                \
	X(rsvg_handle_get_intrinsic_size_in_pixels) X(rsvg_handle_render_document)         \
	X(g_object_unref) X(g_error_free)                                                  \
	X(cairo_image_surface_create) X(cairo_surface_status) X(cairo_surface_destroy)     \
	X(cairo_surface_flush) X(cairo_create)        \
	X(cairo_destroy) X(cairo_status) X(cairo_set_source_rgb) X(cairo_paint)            \
	X(cairo_status_to_string) X(cairo_save) X(cairo_restore) X(cairo_rectangle)          \
	X(cairo_clip) X(cairo_fill) X(cairo_set_source) X(cairo_pattern_create_linear)      \
	X(cairo_pattern_add_color_stop_rgba) X(cairo_pattern_destroy)                       \
	X(cairo_image_surface_get_data) X(cairo_image_surface_get_stride)                   \
	X(cairo_fill_extents) X(cairo_path_extents)                                         \
	X(deflateInit2_) X(deflate) X(deflateEnd) X(deflateBound) X(crc32) X(zlibVersion)       \
	X(adler32) X(adler32_combine)

static union {
	struct {
#define X(name) __typeof__(name) *name;
		RSVG_FNS(X)
#undef X
	};
	void *slot[0 RSVG_FNS(OXR_DLOPEN_SLOT)];
} rs;

static pthread_once_t rs_once = PTHREAD_ONCE_INIT;
static bool rs_loaded;
static char rs_load_err[300];

static void rs_load(void)
{
	static const char *const names[] = {RSVG_FNS(OXR_DLOPEN_NAME)};
	rs_loaded = oxr_dlopen(RSVG_SONAME, "", names, rs.slot, sizeof(names) / sizeof(names[0]),
	                       rs_load_err, sizeof(rs_load_err));
	/* cairo's own, not ours below (a library's scope never holds the program) */
	if (rs_loaded && rs.cairo_fill_extents == cairo_fill_extents) {
		snprintf(rs_load_err, sizeof(rs_load_err), "cairo_fill_extents is not cairo's");
		rs_loaded = false;
	}
}

/* ---------------------------------------------------------------------------------------
 * Bounding boxes nothing reads
 *
 * librsvg computes the bounding box of everything it draws, for what may be sized by one
 * (objectBoundingBox gradients, patterns, clips, masks and filters), and takes its fill
 * part from cairo_fill_extents, which in cairo 1.16 tessellates the path into trapezoids
 * (Bentley-Ottmann) to find it.  A span of text is drawn as the path of its glyphs'
 * outlines, so every label is tessellated once for a box and filled once: 45% of the
 * drawing's samples in perf on swin_t's full detail.  Our drawings use none of those
 * features (svg_box_free), so the box changes
 * no pixel: while one of them is drawn, this program's cairo_fill_extents (exported by
 * the executable, which precedes every library in the lookup of librsvg's symbols:
 * Makefile, BIN_LDFLAGS) answers with the path's extents, computed from its points
 * without tessellating; any other call, and every call in a program that does not export
 * it, is cairo's.  librsvg is the only library in the closure that calls it.  Measured on
 * swin_t's full detail: the drawing 0.55 to 0.33 s, byte-identical pixels. */
static _Thread_local bool rs_box_free;

void cairo_fill_extents(cairo_t *cr, double *x1, double *y1, double *x2, double *y2)
{
	if (rs_box_free)
		rs.cairo_path_extents(cr, x1, y1, x2, y2);
	else
		rs.cairo_fill_extents(cr, x1, y1, x2, y2);
}

/* True when no element of svg can be sized by a bounding box: none of the elements that
 * can be (gradients, patterns, clips, masks, filters: a reference to one missing is
 * ignored) and no filter property (CSS filter functions are sized by the box).  Element
 * names are searched with their '<' (text holds it escaped); a label reading "filter="
 * only costs the shortcut. */
static bool svg_box_free(const char *svg, size_t len)
{
	static const char *const uses_box[] = {"<linearGradient", "<radialGradient", "<pattern",
	                                       "<clipPath", "<mask", "<filter", "filter=",
	                                       "filter:"};
	for (size_t i = 0; i < sizeof(uses_box) / sizeof(uses_box[0]); i++)
		if (memmem(svg, len, uses_box[i], strlen(uses_box[i])) != NULL)
			return false;
	return true;
}

/* ---------------------------------------------------------------------------------------
 * Options
 */

/* The themes: a name and the page colour under the drawing.  A theme's palette for the
 * drawing itself is the SVG writer's (a dark theme adds its row here and its colours
 * there); "light" is the SVG as it is. */
static const struct {
	const char *name;
	double bg[3];
} themes[OXR_THEME__COUNT] = {
    [OXR_THEME_LIGHT] = {"light", {1, 1, 1}},
    [OXR_THEME_DARK] = {"dark", {0x0f / 255.0, 0x14 / 255.0, 0x19 / 255.0}}, /* style.c's */
};

const char *oxr_theme_name(uint8_t theme)
{
	return theme < OXR_THEME__COUNT ? themes[theme].name : "light";
}

void oxr_raster_default(oxr_raster *r)
{
	memset(r, 0, sizeof(*r));
	r->scale = OXR_RASTER_SCALE_MIN;
	r->theme = OXR_THEME_LIGHT;
	r->max_pixels = OXR_RASTER_MAX_PIXELS;
}

/* A whole number lo..hi, digits only (no sign, no spaces, no exponent). */
static bool parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
	uint64_t v = 0;
	size_t n = strspn(s, "0123456789");
	if (n == 0 || n > 10 || s[n] != '\0')
		return false;
	for (size_t i = 0; i < n; i++)
		v = v * 10 + (uint64_t)(s[i] - '0');
	if (v < lo || v > hi)
		return false;
	*out = (uint32_t)v;
	return true;
}

/* "2", "1.5", "1.25": hundredths lo..hi (digits, at most one '.', two places) */
static bool parse_hundredths(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
	size_t n = strspn(s, "0123456789");
	if (n == 0 || n > 3)
		return false;
	uint32_t v = 0;
	for (size_t i = 0; i < n; i++)
		v = v * 10 + (uint32_t)(s[i] - '0');
	v *= 100;
	if (s[n] == '.') {
		const char *f = s + n + 1;
		size_t fn = strspn(f, "0123456789");
		if (fn == 0 || fn > 2 || f[fn] != '\0')
			return false;
		v += (uint32_t)(f[0] - '0') * 10 + (fn == 2 ? (uint32_t)(f[1] - '0') : 0);
	} else if (s[n] != '\0') {
		return false;
	}
	if (v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

static int bad_raster(oxr_error *err, const char *key, const char *accepted)
{
	return (int)oxr__fail(err, OXR_E_OPTION, "bad value for option '%s' (accepted: %s)", key,
	                      accepted);
}

int oxr_raster_set(oxr_raster *r, const char *key, const char *value, oxr_error *err)
{
	if (!strcmp(key, "w") || !strcmp(key, "h")) {
		uint32_t *side = key[0] == 'w' ? &r->w : &r->h;
		if (!parse_u32(value, 1, OXR_RASTER_SIDE_MAX, side))
			return bad_raster(err, key, "a whole number of CSS pixels, 1..32767");
		return OXR_OK;
	}
	if (!strcmp(key, "scale")) {
		if (!parse_hundredths(value, OXR_RASTER_SCALE_MIN, OXR_RASTER_SCALE_MAX, &r->scale))
			return bad_raster(err, key, "a device pixel ratio 1..4, at most two decimals");
		return OXR_OK;
	}
	if (!strcmp(key, "theme")) {
		for (uint8_t t = 0; t < OXR_THEME__COUNT; t++) {
			if (!strcmp(value, themes[t].name)) {
				r->theme = t;
				return OXR_OK;
			}
		}
		return bad_raster(err, key, "light, dark");
	}
	return -1;
}

void oxr_raster_key(const oxr_raster *r, char *buf, size_t size)
{
	snprintf(buf, size, "w=%u&h=%u&scale=%u&theme=%s&max=%llu", r->w, r->h, r->scale,
	         oxr_theme_name(r->theme), (unsigned long long)r->max_pixels);
}

oxr_code oxr_raster_parse(oxr_raster *r, const char *key, oxr_error *err)
{
	oxr_raster_default(r);
	unsigned w, h, scale;
	unsigned long long max;
	char theme[16];
	int used = 0;
	if (sscanf(key, "w=%u&h=%u&scale=%u&theme=%15[a-z]&max=%llu%n", &w, &h, &scale, theme,
	           &max, &used) != 5 || key[used] != '\0' || w > OXR_RASTER_SIDE_MAX ||
	    h > OXR_RASTER_SIDE_MAX || scale < OXR_RASTER_SCALE_MIN ||
	    scale > OXR_RASTER_SCALE_MAX || max == 0)
		return oxr__fail(err, OXR_E_OPTION, "bad raster options");
	r->w = w;
	r->h = h;
	r->scale = scale;
	r->max_pixels = max;
	if (oxr_raster_set(r, "theme", theme, err) != OXR_OK)
		return OXR_E_OPTION;
	return OXR_OK;
}

/* ---------------------------------------------------------------------------------------
 * Size
 */
oxr_code oxr_raster_size(const oxr_raster *r, double dw, double dh, uint32_t *pw,
                         uint32_t *ph, bool *clamped, oxr_error *err)
{
	/* a drawing has a size; an absurd one is kept finite */
	if (!(dw >= 1e-3))
		dw = 1e-3;
	if (!(dh >= 1e-3))
		dh = 1e-3;
	if (dw > 1e12)
		dw = 1e12;
	if (dh > 1e12)
		dh = 1e12;
	double s = r->scale / 100.0, max = (double)r->max_pixels, side = OXR_RASTER_SIDE_MAX;
	double k = 1;
	if (r->w != 0 && r->h != 0)
		k = fmin(r->w / dw, r->h / dh);
	else if (r->w != 0)
		k = r->w / dw;
	else if (r->h != 0)
		k = r->h / dh;
	double fw = dw * k * s, fh = dh * k * s;
	/* what the request's own numbers ask for is refused, not quietly made smaller */
	if (r->w != 0 && r->h != 0 && (double)r->w * r->h * s * s > max)
		return oxr__fail(err, OXR_E_TOO_BIG,
		                 "w=%u x h=%u at scale %.2f is %.0f pixels, over the budget of %llu "
		                 "(--max-pixels)",
		                 r->w, r->h, s, (double)r->w * r->h * s * s,
		                 (unsigned long long)r->max_pixels);
	if ((r->w != 0 && r->w * s > side) || (r->h != 0 && r->h * s > side))
		return oxr__fail(err, OXR_E_TOO_BIG,
		                 "%s=%u at scale %.2f is more than %u pixels on a side",
		                 r->w != 0 && r->w * s > side ? "w" : "h",
		                 r->w != 0 && r->w * s > side ? r->w : r->h, s, OXR_RASTER_SIDE_MAX);
	if (r->scale > OXR_RASTER_SCALE_MIN && (fw * fh > max || fw > side || fh > side))
		return oxr__fail(err, OXR_E_TOO_BIG,
		                 "scale %.2f makes the image %.0f x %.0f pixels (%.0f), over the "
		                 "budget of %llu (--max-pixels) or %u on a side: ask a smaller scale, "
		                 "or w/h",
		                 s, ceil(fw), ceil(fh), ceil(fw) * ceil(fh),
		                 (unsigned long long)r->max_pixels, OXR_RASTER_SIDE_MAX);
	/* the drawing's own size past the budget: scaled down to fit */
	double c = 1;
	if (fw * fh > max)
		c = sqrt(max / (fw * fh));
	if (fw * c > side)
		c = side / fw;
	if (fh * c > side)
		c = side / fh;
	*clamped = c < 1;
	/* scaled down: rounded down (1e-6: c = side / fh gives side - epsilon), never past
	 * the side; the loop below takes back what rounding adds past the budget */
	double x = c < 1 ? fmin(floor(fw * c + 1e-6), side) : floor(fw + 0.5);
	double y = c < 1 ? fmin(floor(fh * c + 1e-6), side) : floor(fh + 0.5);
	*pw = x < 1 ? 1 : (uint32_t)x;
	*ph = y < 1 ? 1 : (uint32_t)y;
	/* the 1-pixel floor of a hairline drawing may add a row: still within the budget */
	while ((double)*pw * *ph > max && (*pw > 1 || *ph > 1)) {
		if (*pw >= *ph)
			(*pw)--;
		else
			(*ph)--;
	}
	return OXR_OK;
}

/* ---------------------------------------------------------------------------------------
 * Drawing
 */
/* librsvg, loaded; false with the reason in err */
static bool rsvg_ready(oxr_error *err)
{
	pthread_once(&rs_once, rs_load);
	if (!rs_loaded) /* librsvg that could not be mapped is out of memory, as Graphviz is */
		oxr__fail(err, oxr_dlopen_nomem(rs_load_err) ? OXR_E_NOMEM : OXR_E_LAYOUT,
		          "PNG images cannot be drawn here: %s", rs_load_err);
	return rs_loaded;
}

/* The SVG text parsed: a handle (g_object_unref), or NULL with err set. */
static RsvgHandle *svg_open(const char *svg, size_t len, double *dw, double *dh,
                            oxr_error *err)
{
	GError *ge = NULL;
	RsvgHandle *h = rs.rsvg_handle_new_from_data((const guint8 *)svg, len, &ge);
	if (h == NULL) {
		oxr__fail(err, OXR_E_LAYOUT, "the SVG cannot be read: %s",
		          ge != NULL && ge->message != NULL ? ge->message : "unknown");
		if (ge != NULL)
			rs.g_error_free(ge);
		return NULL;
	}
	rs.rsvg_handle_set_dpi(h, 96);
	if (!rs.rsvg_handle_get_intrinsic_size_in_pixels(h, dw, dh)) {
		rs.g_object_unref(h);
		oxr__fail(err, OXR_E_LAYOUT, "the SVG has no size");
		return NULL;
	}
	return h;
}

/* Draw h into cr's [x, y, w, h] (aspect kept, centred); box_free: svg_box_free of its
 * text.  False with err set. */
static bool svg_draw(RsvgHandle *h, bool box_free, cairo_t *cr, double x, double y, double w,
                     double hh, oxr_error *err)
{
	RsvgRectangle vp = {x, y, w, hh};
	GError *ge = NULL;
	rs_box_free = box_free;
	bool ok = rs.rsvg_handle_render_document(h, cr, &vp, &ge);
	rs_box_free = false;
	if (!ok) {
		oxr__fail(err, OXR_E_LAYOUT, "the SVG cannot be drawn: %s",
		          ge != NULL && ge->message != NULL ? ge->message : "unknown");
		if (ge != NULL)
			rs.g_error_free(ge);
		return false;
	}
	return true;
}

/* An image surface of pw x ph painted in the theme's page colour, and its context; false
 * with err set (surface and context released). */
static bool canvas(uint32_t pw, uint32_t ph, uint8_t theme, cairo_surface_t **sp,
                   cairo_t **crp, oxr_error *err)
{
	cairo_surface_t *s = rs.cairo_image_surface_create(CAIRO_FORMAT_ARGB32, (int)pw, (int)ph);
	cairo_status_t st = rs.cairo_surface_status(s);
	if (st != CAIRO_STATUS_SUCCESS) {
		rs.cairo_surface_destroy(s);
		oxr__fail(err, st == CAIRO_STATUS_NO_MEMORY ? OXR_E_NOMEM : OXR_E_LAYOUT,
		          "cannot make a %u x %u image: %s", pw, ph, rs.cairo_status_to_string(st));
		return false;
	}
	cairo_t *cr = rs.cairo_create(s);
	if (rs.cairo_status(cr) != CAIRO_STATUS_SUCCESS) {
		rs.cairo_destroy(cr);
		rs.cairo_surface_destroy(s);
		oxr__fail(err, OXR_E_NOMEM, "out of memory");
		return false;
	}
	const double *bg = themes[theme < OXR_THEME__COUNT ? theme : 0].bg;
	rs.cairo_set_source_rgb(cr, bg[0], bg[1], bg[2]);
	rs.cairo_paint(cr);
	*sp = s;
	*crp = cr;
	return true;
}

static unsigned paeth(int a, int b, int c)
{
	int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
	return (unsigned)(pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
}

/* cairo's ARGB32 pixel (a native-endian 0xAARRGGBB word, opaque here: the theme's page
 * is painted first) as RGB */
static void px_rgb(uint32_t px, unsigned char rgb[3])
{
	rgb[0] = (unsigned char)(px >> 16);
	rgb[1] = (unsigned char)(px >> 8);
	rgb[2] = (unsigned char)px;
}

/* One row of pw pixels filtered for PNG as RGB into out (its filter type first): "Up" on
 * a row equal to the one above (the page colour, a box's sides: all zeros), else "Paeth"
 * (anti-aliased text and curves), which compresses our drawings 5x better than no filter.
 * Read straight from cairo's words: a pixel equal to the one above it, whose left
 * neighbour also equals its own above, filters to zeros whatever its colour (Paeth's
 * left and upper-left are equal, so it predicts the pixel above), which is most pixels
 * of a row crossing a few boxes or a line of text: only the others are decoded and
 * predicted (all of them were: a third of the whole run on swin_t's full detail).  prev
 * is NULL for the image's first row. */
static void filter_row(unsigned char *out, const uint32_t *cur, const uint32_t *prev,
                       uint32_t pw)
{
	if (prev != NULL && memcmp(cur, prev, (size_t)pw * 4) == 0) {
		out[0] = 2;
		memset(out + 1, 0, (size_t)pw * 3);
		return;
	}
	out[0] = 4;
	unsigned char *o = out + 1;
	for (uint32_t x = 0; x < pw; x++, o += 3) {
		if (prev != NULL && cur[x] == prev[x] && (x == 0 || cur[x - 1] == prev[x - 1])) {
			o[0] = o[1] = o[2] = 0;
			continue;
		}
		/* left, above, upper left: 0 outside the image, as PNG defines */
		unsigned char c[3], a[3] = {0, 0, 0}, b[3] = {0, 0, 0}, ab[3] = {0, 0, 0};
		px_rgb(cur[x], c);
		if (x > 0)
			px_rgb(cur[x - 1], a);
		if (prev != NULL) {
			px_rgb(prev[x], b);
			if (x > 0)
				px_rgb(prev[x - 1], ab);
		}
		for (int i = 0; i < 3; i++)
			o[i] = (unsigned char)(c[i] - paeth(a[i], b[i], ab[i]));
	}
}

/* One PNG chunk: length, type, data, CRC of type and data. */
static void chunk(oxr_buf *out, const char *type, const unsigned char *data, size_t len)
{
	unsigned char be[4] = {(unsigned char)(len >> 24), (unsigned char)(len >> 16),
	                       (unsigned char)(len >> 8), (unsigned char)len};
	oxr_buf_append(out, be, 4);
	oxr_buf_append(out, type, 4);
	if (len > 0)
		oxr_buf_append(out, data, len);
	uLong crc = rs.crc32(0, (const Bytef *)type, 4);
	if (len > 0)
		crc = rs.crc32(crc, data, (uInt)len);
	unsigned char c[4] = {(unsigned char)(crc >> 24), (unsigned char)(crc >> 16),
	                      (unsigned char)(crc >> 8), (unsigned char)crc};
	oxr_buf_append(out, c, 4);
}

/* One part of the image's zlib stream: rows y0..y1 filtered (the row above y0 is the
 * filter's "previous" row even when another part codes it) and coded as raw deflate
 * into out, ending byte-aligned (Z_SYNC_FLUSH) or, for the last part, with the final
 * block; adler is the Adler-32 of the filtered bytes, for the stream's trailer. */
typedef struct {
	const unsigned char *px;
	int stride;
	uint32_t pw, y0, y1;
	bool last, ok;
	oxr_buf out;
	uLong adler;
	size_t raw; /* filtered bytes */
} png_part;

/* row y of the image */
static const uint32_t *part_row(const png_part *p, uint32_t y)
{
	return (const uint32_t *)(const void *)(p->px + (size_t)y * (size_t)p->stride);
}

static void *code_part(void *arg)
{
	png_part *p = arg;
	size_t n = (size_t)p->pw * 3, rowlen = 1 + n, zlen = (size_t)1 << 18;
	unsigned char *row = malloc(rowlen), *zbuf = malloc(zlen);
	z_stream z;
	memset(&z, 0, sizeof(z));
	/* level 1, raw deflate (-15: the parts are joined under one zlib header) */
	p->ok = row != NULL && zbuf != NULL &&
	        rs.deflateInit2_(&z, 1, Z_DEFLATED, -15, 8, Z_RLE, rs.zlibVersion(),
	                         (int)sizeof(z)) == Z_OK;
	bool open = p->ok;
	p->adler = rs.adler32(0, NULL, 0);
	p->raw = 0;
	for (uint32_t y = p->y0; p->ok && y <= p->y1; y++) {
		bool end = y == p->y1;
		if (!end) {
			filter_row(row, part_row(p, y), y > 0 ? part_row(p, y - 1) : NULL, p->pw);
			p->adler = rs.adler32(p->adler, row, (uInt)rowlen);
			p->raw += rowlen;
			z.next_in = row;
			z.avail_in = (uInt)rowlen;
		}
		int flush = !end ? Z_NO_FLUSH : p->last ? Z_FINISH : Z_SYNC_FLUSH;
		do {
			z.next_out = zbuf;
			z.avail_out = (uInt)zlen;
			int zr = rs.deflate(&z, flush);
			if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) {
				p->ok = false;
				break;
			}
			oxr_buf_append(&p->out, zbuf, zlen - z.avail_out);
		} while (z.avail_out == 0);
		p->ok = p->ok && !p->out.failed;
	}
	if (open)
		rs.deflateEnd(&z);
	free(row);
	free(zbuf);
	return NULL;
}

#define PNG_PARTS_MAX 4

/* The image (opaque: the theme's page is painted first; px: stride bytes a row) as an
 * 8-bit RGB PNG appended to out.  Written here rather than by cairo: its writer keeps the
 * alpha channel and compresses at zlib's default level, three times the time of the whole
 * drawing on a large image; rows filtered (filter_row) and coded at level 1 with run-length
 * matching are 4x faster on our drawings, which are mostly page colour (transformer_12x12's
 * full detail, 47 MP: the whole CLI run 5.9 s to 1.4 s, the same pixels), in a file 5%
 * larger.  A large image is coded in horizontal parts on threads, one a processor (pigz's
 * way: each part a raw deflate stream ending byte-aligned, joined under one zlib header,
 * the Adler-32s combined): a part cannot refer back into the one before, which costs a
 * few bytes, and the parts share nothing but the read-only pixels.  False with err set. */
static bool write_png(const unsigned char *px, int stride, uint32_t pw, uint32_t ph,
                      const char *title, oxr_buf *out, oxr_error *err)
{
	size_t start = out->len;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	/* a part of fewer than 1M pixels is not worth a thread */
	unsigned parts = cpus < 2 || (uint64_t)pw * ph < ((uint64_t)2 << 20) ? 1
	                 : cpus > PNG_PARTS_MAX ? PNG_PARTS_MAX
	                                        : (unsigned)cpus;
	png_part part[PNG_PARTS_MAX];
	pthread_t tid[PNG_PARTS_MAX];
	bool started[PNG_PARTS_MAX] = {false};
	for (unsigned i = 0; i < parts; i++) {
		part[i] = (png_part){.px = px, .stride = stride, .pw = pw,
		                     .y0 = (uint32_t)((uint64_t)ph * i / parts),
		                     .y1 = (uint32_t)((uint64_t)ph * (i + 1) / parts),
		                     .last = i + 1 == parts};
		oxr_buf_init(&part[i].out, out->max);
	}
	/* part 0 on this thread; a part whose thread cannot start, here too */
	for (unsigned i = 1; i < parts; i++)
		started[i] = pthread_create(&tid[i], NULL, code_part, &part[i]) == 0;
	code_part(&part[0]);
	bool ok = part[0].ok;
	uLong adler = part[0].adler;
	for (unsigned i = 1; i < parts; i++) {
		if (started[i])
			pthread_join(tid[i], NULL);
		else
			code_part(&part[i]);
		ok = ok && part[i].ok;
		adler = rs.adler32_combine(adler, part[i].adler, (z_off_t)part[i].raw);
	}
	static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
	unsigned char ihdr[13] = {(unsigned char)(pw >> 24), (unsigned char)(pw >> 16),
	                          (unsigned char)(pw >> 8),  (unsigned char)pw,
	                          (unsigned char)(ph >> 24), (unsigned char)(ph >> 16),
	                          (unsigned char)(ph >> 8),  (unsigned char)ph,
	                          8, 2, 0, 0, 0}; /* 8 bits, RGB, deflate, filter 0, no interlace */
	if (ok) {
		oxr_buf_append(out, sig, sizeof(sig));
		chunk(out, "IHDR", ihdr, sizeof(ihdr));
		if (title != NULL && title[0] != '\0') {
			/* iTXt (tEXt is Latin-1): "Title", no compression, no language, UTF-8 text
			 * (the caller's: valid, at most OXR_CARD_TITLE_MAX bytes) */
			unsigned char t[5 + 5 + OXR_CARD_TITLE_MAX];
			size_t n = strlen(title);
			if (n > OXR_CARD_TITLE_MAX)
				n = oxp_utf8_whole(title, OXR_CARD_TITLE_MAX);
			memcpy(t, "Title\0\0\0\0\0", 10);
			memcpy(t + 10, title, n);
			chunk(out, "iTXt", t, 10 + n);
		}
		/* the zlib stream: its header (deflate, 32K window, "fastest"), the parts, the
		 * Adler-32 of all filtered bytes; in IDAT chunks of at most 256 KiB, split
		 * where the parts end (a decoder joins them: no copy of the whole here) */
		static const unsigned char head[2] = {0x78, 0x01};
		chunk(out, "IDAT", head, 2);
		for (unsigned i = 0; i < parts; i++) {
			const unsigned char *d = (const unsigned char *)part[i].out.data;
			for (size_t at = 0; at < part[i].out.len; at += (size_t)1 << 18) {
				size_t n = part[i].out.len - at;
				chunk(out, "IDAT", d + at, n < ((size_t)1 << 18) ? n : (size_t)1 << 18);
			}
		}
		unsigned char tail[4] = {(unsigned char)(adler >> 24), (unsigned char)(adler >> 16),
		                         (unsigned char)(adler >> 8), (unsigned char)adler};
		chunk(out, "IDAT", tail, 4);
		chunk(out, "IEND", NULL, 0);
	}
	for (unsigned i = 0; i < parts; i++)
		oxr_buf_free(&part[i].out);
	if (!ok || out->failed) {
		bool capped = out->failed;
		for (unsigned i = 0; i < parts; i++)
			capped = capped || part[i].out.failed;
		out->len = start;
		oxr__fail(err, capped ? OXR_E_TOO_BIG : OXR_E_NOMEM, "cannot write the PNG: %s",
		          capped ? "over the output cap" : "out of memory");
		return false;
	}
	return true;
}

oxr_code oxr_raster_png(const char *svg, size_t len, const oxr_raster *r, oxr_buf *out,
                        oxr_error *err)
{
	if (!rsvg_ready(err))
		return err->code;
	double dw, dh;
	RsvgHandle *h = svg_open(svg, len, &dw, &dh, err);
	if (h == NULL)
		return err->code;
	uint32_t pw, ph;
	bool clamped;
	oxr_code rc = oxr_raster_size(r, dw, dh, &pw, &ph, &clamped, err);
	cairo_surface_t *s = NULL;
	cairo_t *cr = NULL;
	if (rc == OXR_OK && !canvas(pw, ph, r->theme, &s, &cr, err))
		rc = err->code;
	if (rc == OXR_OK && !svg_draw(h, svg_box_free(svg, len), cr, 0, 0, pw, ph, err))
		rc = err->code;
	if (cr != NULL)
		rs.cairo_destroy(cr);
	if (rc == OXR_OK) {
		rs.cairo_surface_flush(s);
		if (!write_png(rs.cairo_image_surface_get_data(s), rs.cairo_image_surface_get_stride(s),
		               pw, ph, NULL, out, err))
			rc = err->code;
	}
	if (s != NULL)
		rs.cairo_surface_destroy(s);
	rs.g_object_unref(h);
	return rc;
}

/* A card's drawing is fitted whole unless that draws it below CARD_MIN_SCALE: then its
 * start is drawn at CARD_TOP_SCALE (or the panel's width) and fades out at the foot. */
#define CARD_MIN_SCALE 0.3
#define CARD_TOP_SCALE 0.75
#define CARD_FADE 120.0 /* card units */

/* The foot of box fading into white over CARD_FADE. */
static void fade(cairo_t *cr, const double box[4], double s)
{
	double y1 = (box[1] + box[3]) * s, y0 = y1 - CARD_FADE * s;
	cairo_pattern_t *p = rs.cairo_pattern_create_linear(0, y0, 0, y1);
	rs.cairo_pattern_add_color_stop_rgba(p, 0, 1, 1, 1, 0);
	rs.cairo_pattern_add_color_stop_rgba(p, 1, 1, 1, 1, 1);
	rs.cairo_set_source(cr, p);
	rs.cairo_rectangle(cr, box[0] * s, y0, box[2] * s, CARD_FADE * s);
	rs.cairo_fill(cr);
	rs.cairo_pattern_destroy(p);
}

/* For card.c: draw a card from its frame SVG (the page, texts) and the drawing fitted
 * into [x, y, w, h] of it, both in card units (OXR_CARD_W x OXR_CARD_H) times scale. */
oxr_code oxr__raster_card(const char *frame, size_t frame_len, const char *drawing,
                          size_t drawing_len, const double box[4], const char *title,
                          const oxr_raster *r, oxr_buf *out, oxr_error *err)
{
	if (!rsvg_ready(err))
		return err->code;
	double s = r->scale / 100.0, fw, fh, dw, dh;
	uint32_t pw = (uint32_t)lround(OXR_CARD_W * s), ph = (uint32_t)lround(OXR_CARD_H * s);
	if ((double)pw * ph > (double)r->max_pixels)
		return oxr__fail(err, OXR_E_TOO_BIG,
		                 "a card at scale %.2f is %u x %u pixels, over the budget of %llu "
		                 "(--max-pixels)",
		                 s, pw, ph, (unsigned long long)r->max_pixels);
	RsvgHandle *f = svg_open(frame, frame_len, &fw, &fh, err);
	if (f == NULL)
		return err->code;
	RsvgHandle *g = drawing != NULL ? svg_open(drawing, drawing_len, &dw, &dh, err) : NULL;
	oxr_code rc = drawing != NULL && g == NULL ? err->code : OXR_OK;
	cairo_surface_t *surf = NULL;
	cairo_t *cr = NULL;
	if (rc == OXR_OK && !canvas(pw, ph, r->theme, &surf, &cr, err))
		rc = err->code;
	if (rc == OXR_OK && !svg_draw(f, svg_box_free(frame, frame_len), cr, 0, 0, pw, ph, err))
		rc = err->code;
	if (rc == OXR_OK && g != NULL) {
		/* fitted, centred, never drawn above its own size times 1.6 (a two-box model
		 * would otherwise fill the card with two huge boxes) */
		double k = fmin(fmin(box[2] / dw, box[3] / dh), 1.6);
		bool top = k < CARD_MIN_SCALE; /* too long to read fitted: its start, fading */
		if (top)
			k = fmin(box[2] / dw, CARD_TOP_SCALE);
		double w = dw * k, hh = dh * k;
		double x = box[0] + (box[2] - w) / 2, y = top ? box[1] : box[1] + (box[3] - hh) / 2;
		rs.cairo_save(cr);
		rs.cairo_rectangle(cr, box[0] * s, box[1] * s, box[2] * s, box[3] * s);
		rs.cairo_clip(cr);
		if (!svg_draw(g, svg_box_free(drawing, drawing_len), cr, x * s, y * s, w * s, hh * s,
		               err))
			rc = err->code;
		rs.cairo_restore(cr);
		if (rc == OXR_OK && top)
			fade(cr, box, s);
	}
	if (cr != NULL)
		rs.cairo_destroy(cr);
	if (rc == OXR_OK) {
		rs.cairo_surface_flush(surf);
		if (!write_png(rs.cairo_image_surface_get_data(surf),
		               rs.cairo_image_surface_get_stride(surf), pw, ph, title, out, err))
			rc = err->code;
	}
	if (surf != NULL)
		rs.cairo_surface_destroy(surf);
	if (g != NULL)
		rs.g_object_unref(g);
	rs.g_object_unref(f);
	return rc;
}
