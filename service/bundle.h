/*
 * bundle.h — a model and its data files sent resumably (bundle.c; issue 23, issue 35 item
 * 6): the bundle's manifest, and the data files kept as blobs by SHA-256 under
 * <uploads>/blobs/ until a manifest takes them.  Internal to the resumable uploads
 * (resumable.c is its one user).
 */
#ifndef OXS_BUNDLE_H
#define OXS_BUNDLE_H

#include "store/oxst.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OXS_MANIFEST_MAX ((uint64_t)8 << 20) /* a manifest's bytes (4096 files fit) */

/* A manifest: "onnxviz-bundle/1\nmodel <sha256> <size>\n" then "file <sha256> <size>
 * <location>\n" per data file, sorted by location (oxst_bundle_id's text). */
typedef struct oxs_manifest {
	char model_sha[OXST_ID_LEN + 1];
	uint64_t model_size;
	oxst_bundle_file *files; /* sorted by location; the caller frees (oxs_manifest_free) */
	size_t nfiles;
} oxs_manifest;

/* text[0, len) as the manifest whose SHA-256 is id.  False with the answer in *status,
 * *code and err: 422 bad_manifest (malformed, a NUL, not sorted, a location the
 * data-file rules refuse, one listed twice), 400 bad_location (a location that is a
 * folder of another, "a" and "a/b", as a multipart POST /models answers), 503
 * out_of_memory.  Nothing is touched either way. */
bool oxs_manifest_parse(oxs_manifest *m, const char *text, size_t len, const char *id,
                        unsigned *status, const char **code, char *err, size_t errsize);
void oxs_manifest_free(oxs_manifest *m);

/* errno as a store status: ENOENT not found, ENOSPC/EDQUOT/EFBIG no space, ENOMEM, else
 * I/O (resumable.c's too). */
oxst_status oxs_errno_status(int e);

/* The blob of sha under blobs (a folder): its path; OXST_OK when it is there with
 * `length` bytes; keep: the file at spool becomes it (renamed, the folder synced). */
bool oxs_blob_path(const char *blobs, const char *sha, char *out, size_t size);
oxst_status oxs_blob_stat(const char *blobs, const char *sha, uint64_t length);
oxst_status oxs_blob_keep(const char *blobs, const char *sha, const char *spool);

/* The pieces m names all kept here (the model file stored or a blob, every data file a
 * blob): true; else the first one missing named in err (for 422 bundle_incomplete). */
bool oxs_bundle_here(oxst_store *store, const char *blobs, const oxs_manifest *m, char *err,
                     size_t errsize);
/* The message naming the first piece neither here nor in the store (an object store's
 * put_bundle said one is missing). */
void oxs_bundle_missing(oxst_store *store, const char *blobs, const oxs_manifest *m, char *err,
                        size_t errsize);
/* The files of the bundle for put_data and put_model (after oxs_bundle_here): the model
 * file copied into a new spool file (*sfd open, its path in spool) and the data files
 * copied from their blobs into a new spool folder (dir), all synced.  The
 * blobs stay until oxs_bundle_release (called once the model is stored): a failure after
 * this leaves them for the manifest sent again.  On failure nothing is left behind. */
oxst_status oxs_bundle_assemble(oxst_store *store, const char *blobs, const oxs_manifest *m,
                                int *sfd, char *spool, size_t spoolsize, char *dir,
                                size_t dirsize);
/* The blobs the bundle took: removed (its model holds their bytes now). */
void oxs_bundle_release(const char *blobs, const oxs_manifest *m);

#endif /* OXS_BUNDLE_H */
