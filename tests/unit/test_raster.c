/*
 * test_raster.c — the PNG size rule (render/raster.c, oxr_raster_size): fit inside w x h,
 * times scale; past the pixel budget or the side limit scaled down when the drawing is
 * large, refused (OXR_E_TOO_BIG, the numbers named) when the request's numbers ask for
 * it; the raster options' parsing and canonical key; the PNG query of the service
 * (service/png.c): scale= as a pixel ratio or, as a word, the heat overlay's.
 */
#include "render/oxr.h"
#include "service/png.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

static oxr_code size(const char *w, const char *h, const char *scale, uint64_t max, double dw,
                     double dh, uint32_t *pw, uint32_t *ph, bool *clamped, oxr_error *err)
{
	oxr_raster r;
	oxr_raster_default(&r);
	if (max)
		r.max_pixels = max;
	if (w)
		assert_int_equal(oxr_raster_set(&r, "w", w, err), OXR_OK);
	if (h)
		assert_int_equal(oxr_raster_set(&r, "h", h, err), OXR_OK);
	if (scale)
		assert_int_equal(oxr_raster_set(&r, "scale", scale, err), OXR_OK);
	return oxr_raster_size(&r, dw, dh, pw, ph, clamped, err);
}

static void test_fit(void **state)
{
	(void)state;
	uint32_t pw, ph;
	bool c;
	oxr_error e;
	assert_int_equal(size(NULL, NULL, NULL, 0, 466.4, 4383.2, &pw, &ph, &c, &e), OXR_OK);
	assert_int_equal(pw, 466);
	assert_int_equal(ph, 4383);
	assert_false(c);
	assert_int_equal(size("640", NULL, NULL, 0, 200, 100, &pw, &ph, &c, &e), OXR_OK);
	assert_int_equal(pw, 640); /* scaled up */
	assert_int_equal(ph, 320);
	assert_int_equal(size("400", "400", NULL, 0, 200, 800, &pw, &ph, &c, &e), OXR_OK);
	assert_int_equal(pw, 100);
	assert_int_equal(ph, 400);
	assert_int_equal(size("300", NULL, "1.5", 0, 600, 300, &pw, &ph, &c, &e), OXR_OK);
	assert_int_equal(pw, 450);
	assert_int_equal(ph, 225);
}

static void test_budget(void **state)
{
	(void)state;
	uint32_t pw, ph;
	bool c;
	oxr_error e;
	/* the drawing's own size past the budget: scaled down */
	assert_int_equal(size(NULL, NULL, NULL, 0, 20000, 8000, &pw, &ph, &c, &e), OXR_OK);
	assert_true(c);
	assert_true((uint64_t)pw * ph <= OXR_RASTER_MAX_PIXELS && pw > 12000);
	/* 1 x 100,000 with w=640: 640 x 64,000,000 asked, clamped to the side and the budget */
	assert_int_equal(size("640", NULL, NULL, 0, 1, 100000, &pw, &ph, &c, &e), OXR_OK);
	assert_true(c);
	assert_int_equal(ph, OXR_RASTER_SIDE_MAX);
	assert_int_equal(pw, 1);
	/* a 100k x 100k drawing: settled, nothing asked for */
	assert_int_equal(size(NULL, NULL, NULL, 0, 1e5, 1e5, &pw, &ph, &c, &e), OXR_OK);
	assert_true((uint64_t)pw * ph <= OXR_RASTER_MAX_PIXELS);
	/* the request's own numbers: refused, named */
	assert_int_equal(size("20000", "20000", NULL, 0, 100, 100, &pw, &ph, &c, &e), OXR_E_TOO_BIG);
	assert_non_null(strstr(e.message, "w=20000 x h=20000"));
	assert_non_null(strstr(e.message, "64000000"));
	assert_int_equal(size("20000", NULL, "2", 0, 100, 100, &pw, &ph, &c, &e), OXR_E_TOO_BIG);
	assert_int_equal(size(NULL, NULL, "4", 0, 3000, 3000, &pw, &ph, &c, &e), OXR_E_TOO_BIG);
	assert_non_null(strstr(e.message, "scale 4.00"));
	assert_int_equal(size(NULL, NULL, "2", 0, 3000, 3000, &pw, &ph, &c, &e), OXR_OK);
	assert_int_equal(pw, 6000);
	/* a smaller budget */
	assert_int_equal(size("100", "100", NULL, 5000, 10, 10, &pw, &ph, &c, &e), OXR_E_TOO_BIG);
}

static void test_options(void **state)
{
	(void)state;
	oxr_raster r;
	oxr_error e;
	oxr_raster_default(&r);
	const char *bad[][2] = {{"w", "0"},        {"w", "-5"},    {"w", "32768"}, {"w", "1e3"},
	                        {"h", ""},         {"scale", "1e9"}, {"scale", "0.5"},
	                        {"scale", "4.01"}, {"scale", "1.234"}, {"scale", "2."},
	                        {"theme", "<script>"}, {"theme", "Dark"}};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&e, 0, sizeof(e));
		assert_int_equal(oxr_raster_set(&r, bad[i][0], bad[i][1], &e), OXR_E_OPTION);
		assert_null(strstr(e.message, "<script>")); /* the value is never echoed */
	}
	assert_int_equal(oxr_raster_set(&r, "rankdir", "LR", &e), -1);
	assert_int_equal(oxr_raster_set(&r, "theme", "dark", &e), OXR_OK);
	assert_int_equal(r.theme, OXR_THEME_DARK);
	assert_int_equal(oxr_raster_set(&r, "theme", "light", &e), OXR_OK);
	assert_int_equal(oxr_raster_set(&r, "scale", "2.5", &e), OXR_OK);
	assert_int_equal(r.scale, 250);
	char key[OXR_RASTER_KEY_MAX];
	oxr_raster_key(&r, key, sizeof(key));
	assert_string_equal(key, "w=0&h=0&scale=250&theme=light&max=64000000");
	oxr_raster back;
	assert_int_equal(oxr_raster_parse(&back, key, &e), OXR_OK);
	assert_memory_equal(&back, &r, sizeof(r));
	assert_int_equal(oxr_raster_parse(&back, "w=1&h=0&scale=99&theme=light&max=1", &e), OXR_E_OPTION);
}

static void test_query(void **state)
{
	(void)state;
	char q[][2][16] = {{"w", "300"}, {"overlay", "cost"}, {"scale", "log"}, {"theme", "light"}};
	oxs_query_pair pairs[4];
	for (int i = 0; i < 4; i++)
		pairs[i] = (oxs_query_pair){q[i][0], q[i][1]};
	size_t n = 4;
	oxr_raster r;
	char err[300];
	assert_true(oxs_raster_query(pairs, &n, 1000000, false, &r, err, sizeof(err)));
	assert_int_equal(n, 2); /* overlay= and the heat scale stay */
	assert_string_equal(pairs[1].key, "scale");
	assert_int_equal(r.w, 300);
	assert_int_equal(r.max_pixels, 1000000);
	n = 1;
	pairs[0] = (oxs_query_pair){"w", "10"};
	assert_false(oxs_raster_query(pairs, &n, 1000000, true, &r, err, sizeof(err)));
	assert_non_null(strstr(err, "card.png"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fit),
	    cmocka_unit_test(test_budget),
	    cmocka_unit_test(test_options),
	    cmocka_unit_test(test_query),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
