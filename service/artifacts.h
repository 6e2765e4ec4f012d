/*
 * artifacts.h — getting an artifact (artifacts.c): summary JSON, full document, and graph
 * renderings of a stored model, cached in memory and in the store, computed once for
 * concurrent requests.  What names one: art.h.
 */
#ifndef OXS_ARTIFACTS_H
#define OXS_ARTIFACTS_H

#include "parser/oxp.h"
#include "service/art.h"
#include "service/cache.h"
#include "service/server.h"

#include <stdbool.h>
#include <stddef.h>

/* Answer r with the artifact: at once from memory, else r is suspended until the
 * artifact is loaded or computed (r->on_art decides the reply then).  `suspended`: r is
 * already suspended (called from a job). */
void oxs_art_request(oxs_req *r, const oxs_art *a, bool suspended);
/* From a job thread: the summary artifact of a stored model, computed now when needed
 * (model may be NULL, then it is loaded).  Referenced entry or NULL with *status/err set. */
oxs_centry *oxs_art_summary_now(oxs_server *srv, const char *id, const oxp_model *m,
                                const oxp_dag *d, unsigned *status, char *err, size_t errsize);
oxs_flights *oxs_flights_new(void);
void oxs_flights_free(oxs_flights *f);

#endif /* OXS_ARTIFACTS_H */
