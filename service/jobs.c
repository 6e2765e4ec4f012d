/*
 * jobs.c — fixed-size thread pools with a bounded FIFO of jobs.
 *
 * Used for work that must not run on libmicrohttpd's threads: parsing models, building
 * JSON documents, and (in a separate pool whose size bounds the number of concurrent
 * worker processes) layouts.  A full queue refuses the job at once, which the HTTP layer
 * turns into 503 + Retry-After: the queue is the backpressure.
 */
#include "service/jobs.h"
#include "parser/oxp.h"
#include "render/oxr.h"
#include "store/oxst.h"

#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct oxs_pool {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	oxs_job *head, *tail;
	unsigned queued, running, capacity;
	bool stopping;
	unsigned nthreads;
	pthread_t *threads;
	char name[16];
};

static void *pool_main(void *arg)
{
	oxs_pool *p = arg;
	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (p->head == NULL && !p->stopping)
			pthread_cond_wait(&p->cv, &p->mu);
		if (p->head == NULL)
			break; /* stopping and nothing queued (queued jobs are cancelled first) */
		oxs_job *j = p->head;
		p->head = j->next;
		if (p->head == NULL)
			p->tail = NULL;
		p->queued--;
		p->running++;
		pthread_mutex_unlock(&p->mu);
		j->next = NULL;
		j->run(j);
		pthread_mutex_lock(&p->mu);
		p->running--;
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

oxs_pool *oxs_pool_new(const char *name, unsigned threads, unsigned capacity)
{
	oxs_pool *p = calloc(1, sizeof(*p));
	if (p == NULL)
		return NULL;
	p->threads = calloc(threads, sizeof(*p->threads));
	if (p->threads == NULL) {
		free(p);
		return NULL;
	}
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	p->capacity = capacity;
	snprintf(p->name, sizeof(p->name), "%s", name);
	for (unsigned i = 0; i < threads; i++) {
		if (pthread_create(&p->threads[i], NULL, pool_main, p) != 0)
			break;
		char tname[16];
		snprintf(tname, sizeof(tname), "%.8s-%u", name, i % 1000u);
		(void)pthread_setname_np(p->threads[i], tname);
		p->nthreads++;
	}
	if (p->nthreads != threads) {
		oxs_pool_free(p);
		return NULL;
	}
	return p;
}

bool oxs_pool_submit(oxs_pool *p, oxs_job *job)
{
	pthread_mutex_lock(&p->mu);
	bool ok = !p->stopping && p->queued < p->capacity;
	if (ok) {
		job->next = NULL;
		if (p->tail != NULL)
			p->tail->next = job;
		else
			p->head = job;
		p->tail = job;
		p->queued++;
		pthread_cond_signal(&p->cv);
	}
	pthread_mutex_unlock(&p->mu);
	return ok;
}

void oxs_pool_counts(oxs_pool *p, unsigned *running, unsigned *queued)
{
	pthread_mutex_lock(&p->mu);
	*running = p->running;
	*queued = p->queued;
	pthread_mutex_unlock(&p->mu);
}

void oxs_pool_stop(oxs_pool *p)
{
	if (p == NULL)
		return;
	pthread_mutex_lock(&p->mu);
	bool joined = p->stopping;
	p->stopping = true;
	oxs_job *j = p->head;
	p->head = p->tail = NULL;
	p->queued = 0;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	while (j != NULL) {
		oxs_job *next = j->next;
		j->next = NULL;
		if (j->cancel != NULL)
			j->cancel(j);
		j = next;
	}
	if (joined)
		return;
	for (unsigned i = 0; i < p->nthreads; i++)
		pthread_join(p->threads[i], NULL);
}

void oxs_pool_free(oxs_pool *p)
{
	if (p == NULL)
		return;
	oxs_pool_stop(p);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	free(p->threads);
	free(p);
}
