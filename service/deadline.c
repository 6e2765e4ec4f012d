/*
 * deadline.c — the request-header deadline (slowloris).
 *
 * libmicrohttpd's CONNECTION_TIMEOUT counts idle time only: a client that sends one byte
 * of its headers every few seconds never goes idle and holds its connection (and, with
 * enough such clients, every connection slot) for as long as it likes.  So the headers of
 * each request must arrive within --timeout seconds in total, counted from the
 * connection's start or from the end of the previous request on a keep-alive connection.
 *
 * Every connection gets a record (libmicrohttpd's NOTIFY_CONNECTION callback, kept in its
 * socket context) on a list; a watcher thread looks at the list four times a second and
 * shuts down the socket of each connection still waiting for headers past the deadline.
 * libmicrohttpd then sees the end of the stream and closes the connection itself.  The
 * socket stays valid while we hold the list's lock: libmicrohttpd reports CLOSED (which
 * takes the record off the list under that lock) before it closes the descriptor.
 *
 * Bodies the same way (a body sent a byte every 29 s never lets a 30 s idle timeout
 * fire): from the end of its headers, each window of --timeout seconds must bring at
 * least --min-body-rate bytes a second on average, or the connection is shut down (and
 * logged; nothing can answer it 408 mid-body, libmicrohttpd calls the handler only when
 * bytes come).  The HTTP thread adds the bytes as they arrive (an atomic counter in the
 * connection's record); the watcher compares at each window's end.
 */
#include "service/deadline.h"
#include "parser/oxp.h"
#include "render/oxr.h"
#include "service/clock.h"
#include "service/log.h"
#include "store/oxst.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

typedef struct conn_rec {
	int fd;
	int64_t since_ms; /* waiting for headers since; 0 = not waiting (a request is running) */
	int64_t body_ms;  /* a body's current window began then; 0 = no body being read */
	uint64_t window_bytes;         /* body bytes when that window began */
	atomic_uint_fast64_t body_bytes; /* body bytes received (the HTTP thread adds) */
	bool shut;        /* already shut down */
	struct conn_rec *prev, *next;
} conn_rec;

struct oxs_deadlines {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	conn_rec *head;
	int64_t limit_ms;
	uint64_t window_min; /* bytes a body's window must bring (0: no least rate) */
	bool stop;
	bool started;
	pthread_t thread;
	atomic_uint_fast64_t dropped, slow_bodies;
};

/* A body's window has ended at now: shut the connection down when it brought less than
 * the least, else start the next. */
static void body_window(oxs_deadlines *d, conn_rec *c, int64_t now)
{
	uint64_t got = (uint64_t)atomic_load(&c->body_bytes);
	if (got - c->window_bytes >= d->window_min) {
		c->body_ms = now;
		c->window_bytes = got;
		return;
	}
	shutdown(c->fd, SHUT_RDWR);
	c->shut = true;
	atomic_fetch_add(&d->slow_bodies, 1);
	char extra[160];
	snprintf(extra, sizeof(extra),
	         ",\"received\":%" PRIu64 ",\"window_s\":%" PRId64 ",\"least\":%" PRIu64, got - c->window_bytes,
	         d->limit_ms / 1000, d->window_min);
	oxs_log("warn", "connection dropped: its body came slower than --min-body-rate", extra);
}

static void *watch(void *arg)
{
	oxs_deadlines *d = arg;
	pthread_mutex_lock(&d->lock);
	while (!d->stop) {
		int64_t now = oxs_now_ms();
		for (conn_rec *c = d->head; c != NULL; c = c->next) {
			if (c->since_ms != 0 && !c->shut && now - c->since_ms > d->limit_ms) {
				shutdown(c->fd, SHUT_RDWR);
				c->shut = true;
				atomic_fetch_add(&d->dropped, 1);
			}
			if (d->window_min != 0 && c->body_ms != 0 && !c->shut &&
			    now - c->body_ms >= d->limit_ms)
				body_window(d, c, now);
		}
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 250000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&d->wake, &d->lock, &ts);
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

oxs_deadlines *oxs_deadlines_new(unsigned seconds, uint64_t min_rate)
{
	oxs_deadlines *d = calloc(1, sizeof(*d));
	if (d == NULL)
		return NULL;
	d->limit_ms = (int64_t)seconds * 1000;
	/* a rate past what any window could bring (2^62 bytes) is that much */
	d->window_min = seconds == 0 || min_rate <= (UINT64_C(1) << 62) / seconds
	                    ? min_rate * seconds : UINT64_C(1) << 62;
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->wake, NULL);
	if (pthread_create(&d->thread, NULL, watch, d) != 0) {
		pthread_cond_destroy(&d->wake);
		pthread_mutex_destroy(&d->lock);
		free(d);
		return NULL;
	}
	d->started = true;
	return d;
}

void oxs_deadlines_stop(oxs_deadlines *d)
{
	if (d == NULL || !d->started)
		return;
	pthread_mutex_lock(&d->lock);
	d->stop = true;
	pthread_cond_signal(&d->wake);
	pthread_mutex_unlock(&d->lock);
	pthread_join(d->thread, NULL);
	d->started = false;
}

void oxs_deadlines_free(oxs_deadlines *d)
{
	if (d == NULL)
		return;
	oxs_deadlines_stop(d);
	/* records still listed belong to connections libmicrohttpd has not reported closed
	 * (it reports them all when it stops, so normally none) */
	for (conn_rec *c = d->head, *n; c != NULL; c = n) {
		n = c->next;
		free(c);
	}
	pthread_cond_destroy(&d->wake);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

void oxs_deadlines_notify(oxs_deadlines *d, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
	if (d == NULL)
		return;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
		    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		conn_rec *c = ci != NULL ? calloc(1, sizeof(*c)) : NULL;
		*socket_context = c;
		if (c == NULL)
			return; /* no deadline for this one: libmicrohttpd's idle timeout still holds */
		c->fd = ci->connect_fd;
		c->since_ms = oxs_now_ms();
		pthread_mutex_lock(&d->lock);
		c->next = d->head;
		if (d->head != NULL)
			d->head->prev = c;
		d->head = c;
		pthread_mutex_unlock(&d->lock);
		return;
	}
	conn_rec *c = *socket_context;
	if (c == NULL)
		return;
	pthread_mutex_lock(&d->lock);
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		d->head = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	pthread_mutex_unlock(&d->lock);
	*socket_context = NULL;
	free(c);
}

/* The record of a connection, from its socket context. */
static conn_rec *rec_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci != NULL ? ci->socket_context : NULL;
}

void oxs_deadlines_headers_done(oxs_deadlines *d, struct MHD_Connection *conn)
{
	conn_rec *c = d != NULL ? rec_of(conn) : NULL;
	if (c == NULL)
		return;
	pthread_mutex_lock(&d->lock);
	c->since_ms = 0;
	pthread_mutex_unlock(&d->lock);
}

void oxs_deadlines_request_done(oxs_deadlines *d, struct MHD_Connection *conn)
{
	conn_rec *c = d != NULL ? rec_of(conn) : NULL;
	if (c == NULL)
		return;
	pthread_mutex_lock(&d->lock);
	c->since_ms = oxs_now_ms();
	c->body_ms = 0;
	pthread_mutex_unlock(&d->lock);
}

/* A body's first window begins now (on), or no body is being read. */
static void body_mark(oxs_deadlines *d, struct MHD_Connection *conn, bool on)
{
	conn_rec *c = d != NULL ? rec_of(conn) : NULL;
	if (c == NULL)
		return;
	pthread_mutex_lock(&d->lock);
	c->body_ms = on ? oxs_now_ms() : 0;
	c->window_bytes = (uint64_t)atomic_load(&c->body_bytes);
	pthread_mutex_unlock(&d->lock);
}

void oxs_deadlines_body_start(oxs_deadlines *d, struct MHD_Connection *conn)
{
	body_mark(d, conn, true);
}

void oxs_deadlines_body(oxs_deadlines *d, struct MHD_Connection *conn, size_t n)
{
	conn_rec *c = d != NULL ? rec_of(conn) : NULL;
	if (c != NULL) /* the record is this thread's connection's: alive, no lock needed */
		atomic_fetch_add(&c->body_bytes, n);
}

void oxs_deadlines_body_done(oxs_deadlines *d, struct MHD_Connection *conn)
{
	body_mark(d, conn, false);
}

uint64_t oxs_deadlines_dropped(oxs_deadlines *d)
{
	return d != NULL ? (uint64_t)atomic_load(&d->dropped) : 0;
}

uint64_t oxs_deadlines_slow_bodies(oxs_deadlines *d)
{
	return d != NULL ? (uint64_t)atomic_load(&d->slow_bodies) : 0;
}
