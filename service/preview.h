/*
 * preview.h — tensor previews (preview.c): GET /models/{id}/tensors/{name}.
 */
#ifndef OXS_PREVIEW_H
#define OXS_PREVIEW_H

#include "parser/oxp.h"
#include "service/art.h"
#include "service/isolate.h"
#include "service/query.h"
#include "service/server.h"
#include "store/oxst.h"

/* Compute the preview a (OXS_ART_TENSOR) on a work thread: load the model, find the
 * tensor and its data folder, the statistics kept in the store; then compute in a process
 * of its own (config isolation, the default) or in this one; keep fresh
 * statistics in the store.  out is initialised here; free it with oxs_preview_out_free. */
void oxs_preview_run(oxs_server *srv, const oxs_art *a, oxs_preview_out *out);

/* What a preview computation reads: nothing of the server's (no store, lock or log), so
 * that it can run in a forked copy of the server. */
typedef struct oxs_preview_in {
	const char *model;           /* the model's id, as the answer names it */
	const char *key;             /* the tensor key asked for (name or document ref) */
	const oxp_dag *dag;          /* the linked model, NULL for a lone tensor upload */
	const oxp_tensor *t;         /* the tensor */
	int datadir;                 /* the folder of its external data, -1 when not open */
	oxst_status datadir_status;   /* why -1: OXST_E_NOT_FOUND (stored without data files) */
	oxs_preview_opt opt;
	const char *stats;           /* statistics JSON kept from before, or NULL */
	size_t stats_len;
} oxs_preview_in;

/* The computation itself: decode the slice, the statistics (unless in->stats), the JSON
 * or .npy answer.  out is initialised here; free it with oxs_preview_out_free. */
void oxs_preview_compute(const oxs_preview_in *in, oxs_preview_out *out);
/* The summary of a tensor upload: {"id","size","kind":"tensor","tensor":{...},"links"}. */
bool oxs_preview_summary(oxr_buf *out, const oxs_art *a, const oxp_model *m,
                         const oxp_tensor *t);

#endif /* OXS_PREVIEW_H */
