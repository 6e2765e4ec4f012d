/*
 * heat_svc.h — heat overlays in the service (heat_svc.c): POST and GET of overlays, the
 * heat query of a drawing, and the layout worker's pair function.
 */
#ifndef OXS_HEAT_SVC_H
#define OXS_HEAT_SVC_H

#include "render/oxr.h"
#include "service/art.h"
#include "service/query.h"
#include "service/server.h"

#include <stdbool.h>
#include <stddef.h>

/* POST /models/{id}/overlays and GET /models/{id}/overlays/{oid} (heat_svc.c); the body
 * of such a POST goes to a spool file as it arrives (r->body, oxs_body_*, at most
 * OXS_OVERLAY_MAX bytes); oxs_body_begin answers early what must not send its body (401,
 * 400 for the query, 429 over the client's --overlays-per-client). */
#define OXS_OVERLAY_MAX ((size_t)32 << 20)
/* A stored overlay attributed through ORT's optimized model (POST ...?optimized=ID) is
 * "onnxviz:optimized=<ID>\n" and the file; oxs_overlay_split tells them apart (optid ""
 * without) and answers whether the line is there. */
#define OXS_OVERLAY_TAG "onnxviz:optimized="
bool oxs_overlay_split(const char *data, size_t len, char optid[65], const char **body,
                       size_t *blen);
void oxs_overlay_post(oxs_req *r);
void oxs_overlay_get(oxs_req *r);
bool oxs_body_begin(oxs_req *r);
bool oxs_body_data(oxs_req *r, const char *data, size_t len);
void oxs_body_free(oxs_req *r);

/* Takes overlay=, metric= and scale= out of a drawing's query (pairs and *n shrink):
 * false with a message when one is malformed (heat_svc.c). */
bool oxs_heat_query(oxs_query_pair *pairs, size_t *n, oxs_heat_req *hr, char *err,
                    size_t errsize);

/* The layout worker's pair function: heat drawings (fmt "heat-svg|dot|json", heat_svc.c)
 * there, the rest to oxs_diff_pair. */
oxr_code oxs_pair(const oxr_model_files *model, const oxr_model_files *other, const char *fmt,
                  const char *const *args, const oxr_options *o, oxr_buf *out, oxr_error *err);

#endif /* OXS_HEAT_SVC_H */
