/*
 * textwidth.c — render/textfit.c's widths, for tests/render/widths.py.
 *
 * usage: textwidth < LINES
 *
 * For each line of stdin (UTF-8, the newline left out) prints "<regular> <bold>": the
 * width the boxes are sized with at a font size of 2048 (one unit per font unit of
 * DejaVu Sans and Liberation Sans, both 2048 units per em).
 */
#include "render/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	while ((n = getline(&line, &cap, stdin)) >= 0) {
		if (n > 0 && line[n - 1] == '\n')
			line[n - 1] = '\0';
		printf("%.3f %.3f\n", oxr__text_width(line, 2048, false),
		       oxr__text_width(line, 2048, true));
	}
	free(line);
	return 0;
}
