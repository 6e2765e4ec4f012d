/*
 * diff.h — `onnxviz diff` and diff drawings for the layout worker (diff.c); the comparison
 * itself is diff/oxd.h's.
 */
#ifndef OXS_DIFF_H
#define OXS_DIFF_H

#include "diff/oxd.h"
#include "render/oxr.h"

/* `onnxviz diff A B [-o out.json|.svg|.dot] [--format=...] [--key=value ...]`: exit 0 the
 * models are the same, 1 they differ, 2 trouble (diff.c). */
int oxs_cli_diff(int argc, char **argv);
/* The layout worker's pair function (render/oxr.h, oxr_pair_fn): model is B, other is A;
 * fmt "json" (the diff document), "svg", "dot", "layout" (B's drawing with the changes
 * marked), "text" or "md" (diff.c).  args (may be NULL): for "md", A's id, B's id and the
 * base URL of the links (oxs_diff_md_args). */
oxr_code oxs_diff_pair(const oxr_model_files *model, const oxr_model_files *other,
                       const char *fmt, const char *const *args, const oxr_options *o,
                       oxr_buf *out, oxr_error *err);

/* The links of a diff's Markdown: base (a --base-url without its trailing '/'; NULL: no
 * links) and the two models' ids. */
typedef struct oxs_md_links {
	const char *base;
	const char *a, *b;
} oxs_md_links;
/* The diff df of A (ma, da) and B (mb, db) as GitHub Flavored Markdown, at most
 * OXS_MD_MAX bytes (diff_md.c).  links may be NULL. */
oxr_code oxs_diff_md(oxd_diff *df, const oxp_model *ma, const oxp_dag *da, const oxp_model *mb,
                     const oxp_dag *db, const oxs_md_links *links, oxr_buf *out, oxr_error *err);
/* err (may be NULL) set to code and the message; returns code (diff.c). */
oxr_code oxs_render_fail(oxr_error *err, oxr_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif /* OXS_DIFF_H */
