/*
 * models.h — parsed models (models.c): oxp_model + oxp_dag by id, reference counted, least
 * recently used out beyond a count and a byte estimate.  Loading is done once per id.
 */
#ifndef OXS_MODELS_H
#define OXS_MODELS_H

#include "parser/oxp.h"
#include "store/oxst.h"

typedef struct oxs_models oxs_models;
typedef struct oxs_mentry oxs_mentry;

/* A stored file, parsed: a model (linked) or a lone TensorProto ("tensor" upload). */
typedef struct oxs_loaded {
	oxp_model *model; /* the model, or the container of the tensor */
	oxp_dag *dag;     /* NULL for a tensor */
	void *map;        /* a tensor's file mapping (models own theirs), else NULL */
	size_t map_len;
} oxs_loaded;

/* Parse path as a model and link it, or, when it does not parse as a model, as a lone
 * TensorProto with a data type (oxs_tensor_upload_parse).  On failure the model's error
 * (err) stands and *out is untouched. */
oxp_code oxs_load(oxs_loaded *out, const char *path, uint64_t budget, oxp_error *err);
void oxs_loaded_free(oxs_loaded *l);
/* buf as a "tensor" upload: a TensorProto whose data_type is set (an empty or unrelated
 * body that happens to decode as a TensorProto has none).  OXP_E_NOT_MODEL otherwise. */
oxp_code oxs_tensor_upload_parse(oxp_model **out, const void *buf, size_t len, oxp_error *err);

/* budget: the parse budget of one model (oxp_limits.max_alloc; 0: the parser's default). */
oxs_models *oxs_models_new(unsigned max_count, uint64_t max_bytes, uint64_t budget);
void oxs_models_free(oxs_models *mc);
/* Load (or find) model id: from src when not NULL/"" (a path, e.g. a --models-dir file
 * opened confined, with id naming that file's version), else from the store.  OXST_OK with
 * *out referenced; OXST_E_NOT_FOUND; OXST_E_INVALID when the file does not parse or link
 * (*perr says why). */
oxst_status oxs_models_get(oxs_models *mc, oxst_store *store, const char *id, const char *src,
                           oxs_mentry **out, oxp_error *perr);
/* Keep an already parsed file (ownership of *l passes; freed if not kept). */
void oxs_models_add(oxs_models *mc, const char *id, oxs_loaded *l);
void oxs_models_release(oxs_models *mc, oxs_mentry *e);
void oxs_models_forget(oxs_models *mc, const char *id);
const oxp_model *oxs_mentry_model(const oxs_mentry *e);
const oxp_dag *oxs_mentry_dag(const oxs_mentry *e);     /* NULL for a tensor upload */
const oxp_tensor *oxs_mentry_tensor(const oxs_mentry *e); /* the tensor of a tensor upload */
void oxs_models_stats(oxs_models *mc, uint64_t *count, uint64_t *bytes);

#endif /* OXS_MODELS_H */
