/*
 * test_palette.c — render/style.c's palettes (theme=light and theme=dark): every text
 * colour against every fill it is drawn on has a WCAG 2 contrast ratio of at least 4.5:1
 * (the pairs are internal.h's comment on oxr_palette, which svg.c and heat.c draw from):
 *   op-family headers on each family band and an unchanged box's grey one; each row style
 *   on each box fill (op, input, output, tensor, stub, group, the diff marks' tints, an
 *   unchanged box's muted fill, a changed row's fill and the badge's pill); edge labels on the canvas and both cluster fills; cluster titles;
 *   legend text on the canvas; the heat scale sampled at 1001 points with the text
 *   oxr__heat_text picks.
 * The ratio is computed here from the colours' text ("#rrggbb"), independently of
 * style.c's own luminance code; a failing pair names both colours and the ratio.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/internal.h"

#define MIN_RATIO 4.5

static double channel(unsigned v)
{
	double c = v / 255.0;
	return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4);
}

/* Relative luminance of "#rrggbb" (WCAG 2.x); fails the test on any other text. */
static double luminance(const char *hex)
{
	unsigned r = 0, g = 0, b = 0; /* fail_msg does not return, which clang cannot tell */
	if (hex == NULL || strlen(hex) != 7 || hex[0] != '#' ||
	    sscanf(hex + 1, "%2x%2x%2x", &r, &g, &b) != 3)
		fail_msg("not a #rrggbb colour: %s", hex ? hex : "(null)");
	return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
}

static double ratio(const char *a, const char *b)
{
	double la = luminance(a), lb = luminance(b);
	double hi = la > lb ? la : lb, lo = la > lb ? lb : la;
	return (hi + 0.05) / (lo + 0.05);
}

static unsigned checked;

static void pair(const char *theme, const char *what, const char *text, const char *fill)
{
	double r = ratio(text, fill);
	if (r < MIN_RATIO)
		fail_msg("%s: %s %s on %s is %.2f:1 (under %.1f:1)", theme, what, text, fill, r,
		         MIN_RATIO);
	checked++;
}

static void check_theme(const oxr_palette *p)
{
	for (int f = 0; f < FAM__COUNT; f++)
		pair(p->name, "op-family header", p->header, p->family[f]);
	pair(p->name, "unchanged box's header", p->header, p->same_band);
	const char *fills[] = {p->op_fill,      p->input_fill,   p->output_fill,
	                       p->tensor_fill,  p->stub_fill,    p->group_fill,
	                       p->mark_tint[0], p->mark_tint[1], p->mark_tint[2],
	                       p->same_fill,    p->row_mark};
	for (int s = 0; s < ROW__COUNT; s++) {
		if (s == ROW_HEADER)
			continue;
		for (size_t f = 0; f < sizeof(fills) / sizeof(fills[0]); f++)
			pair(p->name, "row", p->row[s], fills[f]);
	}
	pair(p->name, "badge", p->row[ROW_BADGE], p->badge_fill);
	pair(p->name, "edge label", p->edge_label, p->canvas);
	pair(p->name, "edge label", p->edge_label, p->scope_fill);
	pair(p->name, "edge label", p->edge_label, p->sub_fill);
	pair(p->name, "scope title", p->scope_text, p->scope_fill);
	pair(p->name, "subgraph title", p->sub_text, p->sub_fill);
	pair(p->name, "legend", p->legend_text, p->canvas);
	pair(p->name, "legend note", p->legend_note, p->canvas);
}

static void test_light(void **state)
{
	(void)state;
	const oxr_palette *p = oxr__palette(false);
	assert_string_equal(p->name, "light");
	checked = 0;
	check_theme(p);
	assert_true(checked > 20 + 7 * 11);
}

static void test_dark(void **state)
{
	(void)state;
	const oxr_palette *p = oxr__palette(true);
	assert_string_equal(p->name, "dark");
	/* a dark theme: its canvas and op boxes are dark, its row text light */
	assert_true(luminance(p->canvas) < 0.05 && luminance(p->op_fill) < 0.05);
	assert_true(luminance(p->row[ROW_ATTR]) > 0.5);
	checked = 0;
	check_theme(p);
	assert_true(checked > 20 + 7 * 11);
}

/* The heat scale is the same in both themes: each fill takes the text oxr__heat_text
 * gives, black or white. */
static void test_heat(void **state)
{
	(void)state;
	double worst = 100;
	for (int i = 0; i <= 1000; i++) {
		unsigned char rgb[3];
		oxr__heat_color(i / 1000.0, rgb);
		char fill[8];
		snprintf(fill, sizeof(fill), "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
		const char *text = oxr__heat_text(rgb);
		pair("heat", "heat row", text, fill);
		double r = ratio(text, fill);
		if (r < worst)
			worst = r;
	}
	/* the scale runs from light to dark: both texts are used */
	unsigned char lo[3], hi[3];
	oxr__heat_color(0, lo);
	oxr__heat_color(1, hi);
	assert_string_equal(oxr__heat_text(lo), "#000000");
	assert_string_equal(oxr__heat_text(hi), "#ffffff");
	assert_true(worst >= MIN_RATIO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_light),
	    cmocka_unit_test(test_dark),
	    cmocka_unit_test(test_heat),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
