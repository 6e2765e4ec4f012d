/*
 * upload.h — uploads of a whole model in one request body (upload.c): POST /models,
 * /graph.*, /diff.*.
 */
#ifndef OXS_UPLOAD_H
#define OXS_UPLOAD_H

#include "service/server.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Upload hooks (upload.c), called by http.c for routes with `upload`. */
void oxs_upload_begin(oxs_req *r);
/* The next bytes of the body: *used gets how many were taken (fewer than size when a
 * gzip body's slice of decoding is done: the rest is given again, after the thread's
 * other connections).  False: abort the connection. */
bool oxs_upload_data(oxs_req *r, const char *data, size_t size, size_t *used);
void oxs_upload_end(oxs_req *r);
void oxs_upload_cleanup(oxs_req *r);
/* From a job (r suspended): store the complete file at path (open as fd; both pass to
 * this call) as model r->id, with the data folder datadir (a spool_dir of the store, its
 * files synced; NULL: none), exactly as POST /models stores an upload (parse, meta, the
 * store), and answer r as it does (201/200 with the summary, or the parse error); r is
 * resumed.  on_stored (may be NULL) runs once the model is stored, before the answer, or
 * with id NULL when it was not (the answer is set then: r->status says which; the
 * caller's resumable upload stays or goes by it). */
typedef void (*oxs_stored_fn)(oxs_req *r, const char *id, bool created);
void oxs_upload_adopt(oxs_req *r, int fd, const char *path, const char *datadir,
                      const char *name, uint64_t bytes, oxs_stored_fn on_stored);
/* The same for a model the store holds already (an object store assembled it from a
 * resumable transfer's parts): parsed from the store's copy and its meta kept; created:
 * this transfer stored it (a model that does not parse is then removed again). */
void oxs_upload_adopt_stored(oxs_req *r, const char *name, uint64_t bytes, bool created,
                             oxs_stored_fn on_stored);

#endif /* OXS_UPLOAD_H */
