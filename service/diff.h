/*
 * diff.h — `onnxviz diff` and diff drawings for the layout worker (diff.c); the comparison
 * itself is diff/oxd.h's.
 */
#ifndef OXS_DIFF_H
#define OXS_DIFF_H

#include "render/oxr.h"

/* `onnxviz diff A B [-o out.json|.svg|.dot] [--format=...] [--key=value ...]`: exit 0 the
 * models are the same, 1 they differ, 2 trouble (diff.c). */
int oxs_cli_diff(int argc, char **argv);
/* The layout worker's pair function (render/oxr.h, oxr_pair_fn): model is B, other is A;
 * fmt "json" (the diff document), "svg", "dot", "layout" (B's drawing with the changes
 * marked) or "text" (diff.c). */
oxr_code oxs_diff_pair(const oxr_model_files *model, const oxr_model_files *other,
                       const char *fmt, const oxr_options *o, oxr_buf *out, oxr_error *err);
/* err (may be NULL) set to code and the message; returns code (diff.c). */
oxr_code oxs_render_fail(oxr_error *err, oxr_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif /* OXS_DIFF_H */
