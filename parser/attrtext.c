/*
 * attrtext.c — the one attribute formatter: an attribute's value as one line of text, as
 * drawings print it in op boxes and diffs print it in their change notes and documents.
 */
#include "parser/internal.h"

#include <inttypes.h>
#include <stdio.h>

#define ELLIPSIS "\xe2\x80\xa6" /* … */

/* A model string as display text of at most max characters into t. */
static void put_text(oxp_textbuf *t, oxp_str s, size_t max)
{
	char tmp[32 * 12 + 4]; /* oxp_text_size(any, 32) */
	if (max > 32)
		max = 32;
	oxp_text_into(tmp, s, max);
	oxp_textbuf_printf(t, "%s", tmp);
}

char *oxp_attr_text(const oxp_attr *a, char *buf, size_t size)
{
	oxp_textbuf t = {.b = buf, .size = size};
	if (size == 0)
		return buf;
	buf[0] = '\0';
	switch (a->type) {
	case OXP_ATTR_FLOAT:
		oxp_textbuf_printf(&t, "%.4g", (double)a->f);
		break;
	case OXP_ATTR_INT:
		/* Cast's "to" (and the like) name an element type */
		if (oxp_str_eq(a->name, "to"))
			oxp_textbuf_printf(&t, "%s", oxp_dtype_name((int32_t)a->i));
		else
			oxp_textbuf_printf(&t, "%" PRId64, a->i);
		break;
	case OXP_ATTR_STRING:
		put_text(&t, a->s, 32);
		break;
	case OXP_ATTR_INTS:
		for (size_t i = 0; i < a->nints; i++) {
			if (i == 8 && a->nints > 9) {
				oxp_textbuf_printf(&t, "," ELLIPSIS "(%zu)", a->nints);
				break;
			}
			oxp_textbuf_printf(&t, "%s%" PRId64, i ? "," : "", a->ints[i]);
		}
		if (a->nints == 0)
			oxp_textbuf_printf(&t, "[]");
		break;
	case OXP_ATTR_FLOATS:
		for (size_t i = 0; i < a->nfloats; i++) {
			if (i == 6 && a->nfloats > 7) {
				oxp_textbuf_printf(&t, "," ELLIPSIS "(%zu)", a->nfloats);
				break;
			}
			oxp_textbuf_printf(&t, "%s%.4g", i ? "," : "", (double)a->floats[i]);
		}
		if (a->nfloats == 0)
			oxp_textbuf_printf(&t, "[]");
		break;
	case OXP_ATTR_STRINGS:
		for (size_t i = 0; i < a->nstrings && i < 4; i++) {
			oxp_textbuf_printf(&t, "%s", i ? "," : "");
			put_text(&t, a->strings[i], 12);
		}
		if (a->nstrings > 4)
			oxp_textbuf_printf(&t, "," ELLIPSIS "(%zu)", a->nstrings);
		if (a->nstrings == 0)
			oxp_textbuf_printf(&t, "[]");
		break;
	case OXP_ATTR_TENSOR:
		if (a->t != NULL) {
			oxp_textbuf_printf(&t, "\xe2\x9f\xa8"); /* ⟨ */
			oxp_textbuf_dims(&t, a->t->dims, a->t->ndims);
			oxp_textbuf_printf(&t, "\xe2\x9f\xa9 %s", oxp_dtype_short(a->t->data_type)); /* ⟩ */
		}
		break;
	case OXP_ATTR_GRAPH:
		oxp_textbuf_printf(&t, "graph");
		break;
	case OXP_ATTR_GRAPHS:
		oxp_textbuf_printf(&t, "%zu graphs", a->ngraphs);
		break;
	default:
		oxp_textbuf_printf(&t, "%s", oxp_attr_type_name(a->type));
		break;
	}
	return buf;
}
