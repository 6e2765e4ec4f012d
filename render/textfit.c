/*
 * textfit.c — how wide text is drawn, and text cut to a width.
 *
 * Boxes are sized here, before any font is known: the SVG asks for "Helvetica, Arial,
 * sans-serif", and where neither is installed (rsvg, many Linux browsers) DejaVu Sans
 * draws it, about 10% wider.  The widths (fontwidths.h, generated from the font files by
 * tests/tools/fontwidths.py) are per character the larger of DejaVu Sans and Liberation
 * Sans (Helvetica/Arial metrics), so a row sized with them fits in either; a narrower
 * real font leaves a little more margin.  SVG textLength is not used: it would also
 * stretch the text of every narrower font to the measured width.
 */
#include "render/internal.h"

#include <string.h>

#include "render/fontwidths.h"

/* Width of one character in 1/FW_UPEM em. */
static uint32_t char_units(uint32_t cp, bool bold)
{
	const uint16_t *w = bold ? fw_bold : fw_regular;
	if (cp >= 0x20 && cp < 0x20 + fw_ranges[0].count)
		return w[cp - 0x20];
	for (size_t i = 1; i < sizeof(fw_ranges) / sizeof(fw_ranges[0]); i++)
		if (cp >= fw_ranges[i].first && cp - fw_ranges[i].first < fw_ranges[i].count)
			return w[fw_ranges[i].at + cp - fw_ranges[i].first];
	if (cp >= 0x10000)
		return FW_ASTRAL;
	return (bold ? fw_bold_page : fw_regular_page)[cp >> 8];
}

/* The character at s[i] (of n bytes) and its length; an invalid byte counts as U+FFFD
 * (the text of a view is valid UTF-8: this only keeps the walk going). */
static size_t next_char(const char *s, size_t n, size_t i, uint32_t *cp)
{
	size_t k = oxr__utf8_at((const unsigned char *)s, n, i, cp);
	if (k == 0) {
		*cp = 0xfffd;
		k = 1;
	}
	return k;
}

static uint64_t text_units(const char *s, size_t n, bool bold)
{
	const uint16_t *w = bold ? fw_bold : fw_regular;
	uint64_t u = 0;
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c < 0x7f) { /* most text: one table look-up */
			u += w[c - 0x20];
			i++;
			continue;
		}
		uint32_t cp;
		i += next_char(s, n, i, &cp);
		u += char_units(cp, bold);
	}
	return u;
}

double oxr__text_width(const char *s, double size, bool bold)
{
	return (double)text_units(s, strlen(s), bold) * size / FW_UPEM;
}

#define ELLIPSIS "\xe2\x80\xa6"

const char *oxr__text_fit(oxp_arena *a, const char *s, double size, bool bold, double max_w,
                          bool keep_end)
{
	size_t n = strlen(s);
	if (max_w <= 0 || size <= 0)
		return "";
	double room = max_w * FW_UPEM / size; /* in font units */
	if ((double)text_units(s, n, bold) <= room)
		return s;
	room -= (double)char_units(0x2026, bold);
	if (room < 0)
		return ""; /* not even the ellipsis fits (an empty cluster has no width) */
	double used = 0;
	size_t cut = keep_end ? n : 0; /* start (keep_end) or end of what is kept */
	if (!keep_end) {
		for (size_t i = 0; i < n;) {
			uint32_t cp;
			size_t k = next_char(s, n, i, &cp);
			used += char_units(cp, bold);
			if (used > room)
				break;
			i += k;
			cut = i;
		}
		while (cut > 0 && s[cut - 1] == ' ')
			cut--;
		const char *out = oxp_arena_printf(a, "%.*s" ELLIPSIS, (int)cut, s);
		return out != NULL ? out : ELLIPSIS;
	}
	while (cut > 0) {
		size_t i = cut - 1;
		while (i > 0 && ((unsigned char)s[i] & 0xc0) == 0x80 && cut - i < 4)
			i--;
		uint32_t cp;
		size_t k = next_char(s, n, i, &cp);
		if (i + k != cut) { /* not one character: step back one byte (U+FFFD) */
			i = cut - 1;
			cp = 0xfffd;
		}
		used += char_units(cp, bold);
		if (used > room)
			break;
		cut = i;
	}
	while (s[cut] == ' ')
		cut++;
	const char *out = oxp_arena_printf(a, ELLIPSIS "%s", s + cut);
	return out != NULL ? out : ELLIPSIS;
}

/* Helvetica / Arial advance widths, 1/1000 em, for ' '..'~': what Graphviz assumes for a
 * label when it has no text layout plugin (ours: only the dot layout and core plugins). */
static const uint16_t helv[95] = {
    278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278, 556, 556,
    556, 556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556, 1015, 667, 667, 722,
    722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722, 778, 667, 778, 722, 667, 611, 722,
    667, 944, 667, 667, 611, 278, 278, 278, 469, 556, 333, 556, 556, 500, 556, 556, 278, 556,
    556, 222, 222, 500, 222, 833, 556, 556, 556, 556, 333, 500, 278, 556, 500, 722, 500, 500,
    500, 334, 260, 334, 584};

double oxr__helvetica_width(const char *s, double size)
{
	size_t n = strlen(s);
	double w = 0;
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		i += next_char(s, n, i, &cp);
		w += cp >= 0x20 && cp < 0x7f ? helv[cp - 0x20] : 556;
	}
	return w * size / 1000.0;
}
