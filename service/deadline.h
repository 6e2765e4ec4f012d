/*
 * deadline.h — the request-header deadline (deadline.c): a request's headers must arrive
 * within a time in total, however slowly they trickle in (libmicrohttpd's timeout counts
 * idle time only), and a body must come at a least rate (--min-body-rate, averaged over
 * each window of that time).  A watcher thread shuts down the sockets of connections that
 * fail either.
 */
#ifndef OXS_DEADLINE_H
#define OXS_DEADLINE_H

#include <microhttpd.h>
#include <stdint.h>

typedef struct oxs_deadlines oxs_deadlines;
/* Start the watcher: headers within `seconds`, bodies at min_rate bytes/s or more over
 * each window of `seconds` (0: no least rate); NULL when out of memory or threads. */
oxs_deadlines *oxs_deadlines_new(unsigned seconds, uint64_t min_rate);
/* Stop the watcher (before the daemon stops); then free (after it stopped). */
void oxs_deadlines_stop(oxs_deadlines *d);
void oxs_deadlines_free(oxs_deadlines *d);
/* libmicrohttpd's NOTIFY_CONNECTION callback: a record per connection (socket context). */
void oxs_deadlines_notify(oxs_deadlines *d, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe);
/* The headers of the connection's request are in / the request ended (keep-alive: the
 * next request's headers are waited for from now). */
void oxs_deadlines_headers_done(oxs_deadlines *d, struct MHD_Connection *conn);
void oxs_deadlines_request_done(oxs_deadlines *d, struct MHD_Connection *conn);
/* The request's body begins now (its headers are in and it will be read); n bytes of it
 * have arrived; it has all arrived (or will not be read).  Between the first and the last
 * call each window of `seconds` must bring min_rate x seconds bytes. */
void oxs_deadlines_body_start(oxs_deadlines *d, struct MHD_Connection *conn);
void oxs_deadlines_body(oxs_deadlines *d, struct MHD_Connection *conn, size_t n);
void oxs_deadlines_body_done(oxs_deadlines *d, struct MHD_Connection *conn);
/* Connections shut down for being too slow: with their headers, with their bodies. */
uint64_t oxs_deadlines_dropped(oxs_deadlines *d);
uint64_t oxs_deadlines_slow_bodies(oxs_deadlines *d);

#endif /* OXS_DEADLINE_H */
