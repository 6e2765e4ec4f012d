/*
 * routes.h — the handlers of the routes (routes.c), one per route and method; the table
 * they answer is router.h's.
 */
#ifndef OXS_ROUTES_H
#define OXS_ROUTES_H

#include "service/server.h"

#include <stdbool.h>

typedef void (*oxs_handler)(oxs_req *r);
/* The handler of a route for GET/HEAD, POST or DELETE, or NULL (PATCH: http.c). */
oxs_handler oxs_route_handler(int route, unsigned method);
/* Prebuilt responses of the web page and /openapi.json; false when out of memory. */
bool oxs_routes_init(void);
void oxs_routes_free(void);

#endif /* OXS_ROUTES_H */
