/*
 * serve.h — `onnxviz serve` (serve.c), and the server in process without a listening
 * socket: the request handling of `serve`, fed connections one by one (the HTTP fuzz
 * target and tests).
 */
#ifndef OXS_SERVE_H
#define OXS_SERVE_H

#include "service/config.h"

/* `onnxviz serve [options]`: the HTTP service.  Returns the exit code: 0 after a clean
 * SIGTERM/SIGINT shutdown, 2 for a usage error, 1 when it cannot start. */
int oxs_serve_main(int argc, char **argv);

typedef struct oxs_server oxs_server;

/* Start a server with configuration cfg (bind and port are not used) whose layout workers
 * run exe (`exe __render ...`).  Returns 0 with *out set, or -1 with a message in err. */
int oxs_server_open(oxs_server **out, const oxs_config *cfg, const char *exe, char *err,
                    size_t errsize);
/* Hand a connected stream socket to the server (it owns fd from now on, also on failure,
 * when it is closed).  Returns 0, or -1 when the daemon refused it. */
int oxs_server_add_connection(oxs_server *srv, int fd);
/* Requests begun and not yet completed. */
int oxs_server_inflight(oxs_server *srv);
/* Of those, the ones waiting for a job's reply (their connection suspended). */
int oxs_server_waiting(oxs_server *srv);
/* Stop the daemon and the pools, close the store, free.  NULL is a no-op. */
void oxs_server_close(oxs_server *srv);

#endif /* OXS_SERVE_H */
