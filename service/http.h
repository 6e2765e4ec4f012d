/*
 * http.h — the libmicrohttpd daemon and the life of a request (http.c): route, check,
 * read the body, call the handler, queue its reply.
 */
#ifndef OXS_HTTP_H
#define OXS_HTTP_H

#include "service/server.h"

#include <stdbool.h>
#include <stddef.h>

/* Daemon lifetime (http.c).  listen: on cfg.bind/port; else without a listening socket,
 * fed by oxs_server_add_connection. */
int oxs_http_start(oxs_server *srv, bool listen, char *err, size_t errsize);
unsigned oxs_http_port(oxs_server *srv);
/* Stop accepting; returns at once. */
void oxs_http_quiesce(oxs_server *srv);
void oxs_http_stop(oxs_server *srv);

#endif /* OXS_HTTP_H */
