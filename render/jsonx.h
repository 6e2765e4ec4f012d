/*
 * jsonx.h — private to render/: small jansson helpers shared by the JSON writers.
 *
 * Model strings are arbitrary bytes.  jx_str() makes a valid JSON string of any bytes:
 * valid UTF-8 passes through; each invalid byte becomes U+FFFD, and jx_set_str() then adds
 * a sibling "<key>_hex" with the exact bytes in hex, so nothing is lost.  Numbers that JSON
 * cannot hold (NaN, ±Inf) become the strings "NaN", "Infinity", "-Infinity".
 */
#ifndef OXR_JSONX_H
#define OXR_JSONX_H

#include "parser/oxp.h"
#include "render/oxr.h"

#include <jansson.h>

/* Room for a tensor ref: node ids of the deepest subgraphs (32 levels of "n<k>.<attr>.")
 * stay below this. */
#define JX_REF_MAX 4096

/* A JSON string for any bytes (see above); NULL only when out of memory. */
json_t *jx_str(oxp_str s);
json_t *jx_cstr(const char *s);
/* obj[key] = string; adds key_hex when the bytes were not valid UTF-8. */
void jx_set_str(json_t *obj, const char *key, oxp_str s);
/* obj[key] = array of strings; adds key_hex (hex of the invalid ones, null for the
 * others) when some were not valid UTF-8. */
void jx_set_str_array(json_t *obj, const char *key, const oxp_str *s, size_t n);
/* obj[key] = dims as jx_dim_list; key_hex (hex of invalid dim_params, null for the
 * others) when some dim_param was not valid UTF-8. */
void jx_set_dims(json_t *obj, const char *key, const oxp_dim *dims, int32_t rank);
/* obj[key] = string only when s is not empty. */
void jx_set_str_nonempty(json_t *obj, const char *key, oxp_str s);
void jx_set(json_t *obj, const char *key, json_t *value); /* steals value; NULL ignored */
json_t *jx_real(double v);
json_t *jx_int(int64_t v);
/* A count (oxp_sat_add_u64 sums saturate at UINT64_MAX): past INT64_MAX, which JSON
 * readers hold exactly, it is INT64_MAX, never a negative number. */
json_t *jx_count(uint64_t v);
json_t *jx_entries(const oxp_entry *e, size_t n); /* [{"key","value"}] */
json_t *jx_dims(const int64_t *dims, size_t n);
/* ggml order: ne[0] is the last ONNX axis; more than 4 dims fold the leading ones into
 * ne[3]; always 4 entries. */
json_t *jx_ggml_ne(const int64_t *dims, size_t n);
json_t *jx_dim_list(const oxp_dim *dims, int32_t rank); /* [1, "N", null] or null */
json_t *jx_type(const oxp_type *t);                     /* TypeProto */
json_t *jx_value_type(const oxp_value_type *t);         /* {elem_type, shape, source} */
json_t *jx_tensor(const oxp_tensor *t, const char *ref);/* tensor summary */
json_t *jx_attr(const oxp_dag *d, uint32_t node, const oxp_attr *a, size_t index);

/* Between these two calls, jansson objects made by this thread come from a scratch arena
 * and freeing them costs nothing; _end() releases everything at once.  Every object made
 * in between must be dead by then. */
void jx_scratch_begin(void);
void jx_scratch_end(void);

/* A JSON answer is built with jx_oom_reset() first: any allocation that fails on the way
 * (jansson's, or the builders' own, which call jx_oom()) marks this thread, and jx_dump()
 * then answers out of memory instead of writing a document with parts missing. */
void jx_oom(void);
void jx_oom_reset(void);

/* Serialise compactly into out (appends).  Frees nothing.  OXR_E_NOMEM when j is NULL or
 * an allocation failed since jx_oom_reset(). */
oxr_code jx_dump(const json_t *j, oxr_buf *out, oxr_error *err);
oxr_code jx_nomem(oxr_error *err);

#endif /* OXR_JSONX_H */
