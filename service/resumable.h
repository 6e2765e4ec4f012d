/*
 * resumable.h — resumable uploads (resumable.c, issue 23).
 */
#ifndef OXS_RESUMABLE_H
#define OXS_RESUMABLE_H

#include "render/oxr.h"
#include "service/config.h"
#include "service/server.h"
#include "store/oxst.h"

#include <stdbool.h>
#include <stddef.h>

/* Resumable uploads (resumable.c, issue 23): POST /uploads, GET/HEAD/PATCH/DELETE
 * /uploads/{uid}.  The parts area lives in the store's folder (or an S3 store's cache). */
/* NULL with a message in err when the folder cannot be made.  quota: the server's (its
 * OXS_Q_UPLOADS counts each client's uploads in progress), kept until oxs_resumable_free,
 * which stops the expiry sweep's thread. */
oxs_resumable *oxs_resumable_open(const oxs_config *c, oxst_store *store, oxs_quota *quota,
                                  char *err, size_t errsize);
void oxs_resumable_free(oxs_resumable *rs);
void oxs_resumable_create(oxs_req *r);  /* POST /uploads */
void oxs_resumable_get(oxs_req *r);     /* GET, HEAD /uploads/{uid} */
void oxs_resumable_delete(oxs_req *r);  /* DELETE /uploads/{uid} */
void oxs_resumable_patch_begin(oxs_req *r); /* PATCH: headers (first call) */
bool oxs_resumable_patch_data(oxs_req *r, const char *data, size_t size);
void oxs_resumable_patch_end(oxs_req *r);   /* PATCH: the final call */
/* The request's answer is being queued: an upload it held is free for the next part. */
void oxs_resumable_replied(oxs_req *r);
void oxs_resumable_cleanup(oxs_req *r);
/* GET/HEAD of a structure's URL whose whole model has arrived: the whole model's id
 * into full (then the request is redirected).  False when id is not such a structure. */
bool oxs_resumable_moved(oxs_resumable *rs, const char *id, char full[OXST_ID_LEN + 1]);
void oxs_resumable_metrics(oxs_server *srv, oxr_buf *o);

#endif /* OXS_RESUMABLE_H */
