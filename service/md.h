/*
 * md.h — GitHub Flavored Markdown for people to read in a pull request or a wiki (md.c):
 * model text written so that it stays text, figures, and lists kept within a byte budget.
 * The diff's Markdown (diff_md.c) and `onnxviz inspect --format md` (card_md.c) write
 * through these.  service/ only.
 *
 * Model text (node, tensor, op and attribute names, producers, dims) is never written
 * as Markdown: it goes into code spans, whose content GFM renders literally — no
 * emphasis, links, autolinks, entities or HTML, and GitHub does not look for @mentions
 * or #references inside them.  What a code span cannot hold is handled here: backtick
 * runs (a longer delimiter), '|' inside a table cell (GFM splits cells before inline
 * parsing: written "\|"), line breaks and control characters (spaces), invalid UTF-8
 * (U+FFFD) and bidirectional controls (U+FFFD: they would reorder what a reader sees).
 */
#ifndef OXS_MD_H
#define OXS_MD_H

#include "parser/oxp.h"
#include "render/oxr.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* GitHub's limit on a comment, issue or pull request body: 65,536 characters.  Documents
 * are bounded in bytes, which are never fewer than characters. */
#define OXS_MD_MAX 65536u

/* Append model bytes s as a code span: at most max_chars characters (an ellipsis marks a
 * cut); cell: inside a table cell.  Empty text is written as the plain "(empty)".  False
 * when b failed. */
bool oxs_md_code(oxr_buf *b, oxp_str s, size_t max_chars, bool cell);
/* The same for a NUL-terminated string. */
bool oxs_md_code_z(oxr_buf *b, const char *s, size_t max_chars, bool cell);
/* Append our own text (messages, not model bytes) with every ASCII punctuation character
 * backslash-escaped, which CommonMark allows for any of them: no markup survives. */
bool oxs_md_text(oxr_buf *b, const char *s);
/* Append v with thousands separators: "1,234,567". */
bool oxs_md_count(oxr_buf *b, uint64_t v);
/* Append a signed change of counts: "+3", "−12" (U+2212), "0". */
bool oxs_md_delta(oxr_buf *b, int64_t d);

/* Byte order of two model strings, for the sorted lists of the writers. */
int oxs_md_str_cmp(oxp_str a, oxp_str b);

/* A table (its heading and header row, then rows) within a byte budget: rows are appended
 * to out while out stays within `limit` bytes with `reserve` left over, and at most
 * max_rows of them (0: no count limit); after the first row left out the others are only
 * counted, and oxs_md_list_end writes "… and N more WHAT" after a blank line (so that GFM
 * does not take it for a row).  Nothing at all is written for a table without rows. */
typedef struct oxs_md_list {
	oxr_buf *out;
	size_t limit, reserve;
	uint32_t max_rows;
	const char *head; /* written before the first row */
	uint32_t shown, more;
	bool begun;
	oxr_buf row;      /* the row being written (oxs_md_row_begin), bounded */
} oxs_md_list;

void oxs_md_list_init(oxs_md_list *l, oxr_buf *out, size_t limit, size_t reserve,
                      uint32_t max_rows, const char *head);
/* The buffer to write the next row into (emptied); the head goes out before the first. */
oxr_buf *oxs_md_row_begin(oxs_md_list *l);
/* The row written since oxs_md_row_begin goes to out when it fits, else is counted. */
void oxs_md_row_end(oxs_md_list *l);
/* Close the table: a blank line, and the "… and N more" line when rows were left out;
 * frees the row. */
void oxs_md_list_end(oxs_md_list *l, const char *what);

/* A --base-url: http:// or https://, then only [A-Za-z0-9._~:/%-] (no query, fragment,
 * quotes, brackets or spaces: it goes into Markdown link destinations as written), at most
 * 200 bytes.  A trailing '/' is dropped by the caller. */
bool oxs_md_base_url_valid(const char *url);

/* The model card of `onnxviz inspect --format md` (card_md.c): name (the file's), producer,
 * IR version, opsets, nodes, parameters, MACs, inputs and outputs with their shapes, the op
 * histogram, into out.  False when memory ran out. */
bool oxs_card_md(const char *name, const oxp_model *m, const oxp_dag *d, oxr_buf *out);

#endif /* OXS_MD_H */
