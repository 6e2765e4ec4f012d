/*
 * mhd.c — libmicrohttpd, loaded when the server first calls it rather than linked.
 *
 * Only `serve` (and the server in process, oxs_server_open) talks HTTP, but a linked
 * libmicrohttpd brings GnuTLS and its eight libraries into every run of the program: the
 * CLI's start-up paid for them (docs/decisions.md, docs/bench.md).  This file defines the
 * libmicrohttpd functions the service calls, each forwarding to the library's own,
 * which the first call loads (dlopen) and looks up (dlsym) once.  The program's other
 * files call MHD_* as before; the binary names the library in its .note.dlopen section
 * for the image check (tests/docker/run.sh).
 *
 * The variadic three: MHD_start_daemon forwards its options to MHD_start_daemon_va;
 * MHD_get_connection_info and MHD_get_daemon_info take no further argument for the
 * kinds asked here (libmicrohttpd 0.9.75 reads none for any kind).
 */
#include "service/mhd.h"
#include "parser/oxp.h"
#include "render/oxr.h"
#include "store/oxst.h"

#include <microhttpd.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#define MHD_SONAME "libmicrohttpd.so.12"

OXR_DLOPEN_NOTE(mhd, "serve", "the HTTP service (onnxviz serve)", MHD_SONAME);

#define MHD_FNS(X)                                                                       \
	X(start_daemon_va) X(stop_daemon) X(quiesce_daemon) X(get_daemon_info)             \
	X(add_connection) X(get_connection_info) X(get_connection_values)                  \
	X(lookup_connection_value) X(suspend_connection) X(resume_connection)              \
	X(queue_response) X(create_response_from_buffer)                                   \
	X(create_response_from_buffer_with_free_callback) X(create_response_from_fd64)     \
	X(add_response_header) X(get_response_headers) X(destroy_response) X(create_post_processor)                \
	X(post_process) X(destroy_post_processor)

static union {
	struct {
#define X(name) __typeof__(MHD_##name) *name;
		MHD_FNS(X)
#undef X
	};
	void *slot[0 MHD_FNS(OXR_DLOPEN_SLOT)];
} lib;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool loaded;
static char load_err[300];

static void load(void)
{
	static const char *const names[] = {MHD_FNS(OXR_DLOPEN_NAME)};
	loaded = oxr_dlopen(MHD_SONAME, "MHD_", names, lib.slot, sizeof(names) / sizeof(names[0]),
	                      load_err, sizeof(load_err));
}

bool oxs_mhd_load(char *err, size_t errsize)
{
	pthread_once(&once, load);
	if (!loaded && err != NULL)
		snprintf(err, errsize, "%s", load_err);
	return loaded;
}

/* The library's functions, NULL when it cannot be loaded (the server checked it could,
 * oxs_mhd_load, before it calls any). */
#define LIB(name) (oxs_mhd_load(NULL, 0) ? lib.name : NULL)

struct MHD_Daemon *MHD_start_daemon(unsigned int flags, uint16_t port,
                                    MHD_AcceptPolicyCallback apc, void *apc_cls,
                                    MHD_AccessHandlerCallback dh, void *dh_cls, ...)
{
	__typeof__(MHD_start_daemon_va) *f = LIB(start_daemon_va);
	if (f == NULL)
		return NULL;
	va_list ap;
	va_start(ap, dh_cls);
	struct MHD_Daemon *d = f(flags, port, apc, apc_cls, dh, dh_cls, ap);
	va_end(ap);
	return d;
}

/* Before a daemon started nothing else is called: these need no NULL check but the
 * first ones, which a failed start reaches (nothing was started, nothing to stop). */
void MHD_stop_daemon(struct MHD_Daemon *daemon)
{
	if (daemon != NULL)
		LIB(stop_daemon)(daemon);
}

MHD_socket MHD_quiesce_daemon(struct MHD_Daemon *daemon)
{
	return LIB(quiesce_daemon)(daemon);
}

const union MHD_DaemonInfo *MHD_get_daemon_info(struct MHD_Daemon *daemon,
                                                enum MHD_DaemonInfoType info_type, ...)
{
	return LIB(get_daemon_info)(daemon, info_type);
}

enum MHD_Result MHD_add_connection(struct MHD_Daemon *daemon, MHD_socket client_socket,
                                   const struct sockaddr *addr, socklen_t addrlen)
{
	return LIB(add_connection)(daemon, client_socket, addr, addrlen);
}

const union MHD_ConnectionInfo *MHD_get_connection_info(struct MHD_Connection *connection,
                                                        enum MHD_ConnectionInfoType info_type,
                                                        ...)
{
	return LIB(get_connection_info)(connection, info_type);
}

int MHD_get_connection_values(struct MHD_Connection *connection, enum MHD_ValueKind kind,
                              MHD_KeyValueIterator iterator, void *iterator_cls)
{
	return LIB(get_connection_values)(connection, kind, iterator, iterator_cls);
}

const char *MHD_lookup_connection_value(struct MHD_Connection *connection,
                                        enum MHD_ValueKind kind, const char *key)
{
	return LIB(lookup_connection_value)(connection, kind, key);
}

void MHD_suspend_connection(struct MHD_Connection *connection)
{
	LIB(suspend_connection)(connection);
}

void MHD_resume_connection(struct MHD_Connection *connection)
{
	LIB(resume_connection)(connection);
}

enum MHD_Result MHD_queue_response(struct MHD_Connection *connection, unsigned int status_code,
                                   struct MHD_Response *response)
{
	return LIB(queue_response)(connection, status_code, response);
}

struct MHD_Response *MHD_create_response_from_buffer(size_t size, void *buffer,
                                                     enum MHD_ResponseMemoryMode mode)
{
	__typeof__(MHD_create_response_from_buffer) *f = LIB(create_response_from_buffer);
	return f != NULL ? f(size, buffer, mode) : NULL;
}

struct MHD_Response *MHD_create_response_from_buffer_with_free_callback(
    size_t size, void *buffer, MHD_ContentReaderFreeCallback crfc)
{
	__typeof__(MHD_create_response_from_buffer_with_free_callback) *f =
	    LIB(create_response_from_buffer_with_free_callback);
	return f != NULL ? f(size, buffer, crfc) : NULL;
}

struct MHD_Response *MHD_create_response_from_fd64(uint64_t size, int fd)
{
	__typeof__(MHD_create_response_from_fd64) *f = LIB(create_response_from_fd64);
	return f != NULL ? f(size, fd) : NULL;
}

enum MHD_Result MHD_add_response_header(struct MHD_Response *response, const char *header,
                                        const char *content)
{
	return LIB(add_response_header)(response, header, content);
}

int MHD_get_response_headers(struct MHD_Response *response, MHD_KeyValueIterator iterator,
                             void *iterator_cls)
{
	return LIB(get_response_headers)(response, iterator, iterator_cls);
}

void MHD_destroy_response(struct MHD_Response *response)
{
	LIB(destroy_response)(response);
}

struct MHD_PostProcessor *MHD_create_post_processor(struct MHD_Connection *connection,
                                                    size_t buffer_size, MHD_PostDataIterator iter,
                                                    void *iter_cls)
{
	return LIB(create_post_processor)(connection, buffer_size, iter, iter_cls);
}

enum MHD_Result MHD_post_process(struct MHD_PostProcessor *pp, const char *post_data,
                                 size_t post_data_len)
{
	return LIB(post_process)(pp, post_data, post_data_len);
}

enum MHD_Result MHD_destroy_post_processor(struct MHD_PostProcessor *pp)
{
	return LIB(destroy_post_processor)(pp);
}
