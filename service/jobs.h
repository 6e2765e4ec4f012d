/*
 * jobs.h — job pools (jobs.c): fixed threads, a bounded FIFO.  A job is embedded in its
 * owner.  A leaf.
 */
#ifndef OXS_JOBS_H
#define OXS_JOBS_H

#include <stdbool.h>

typedef struct oxs_job oxs_job;
struct oxs_job {
	void (*run)(oxs_job *job);
	void (*cancel)(oxs_job *job); /* called instead of run when the pool stops first */
	oxs_job *next;
};

typedef struct oxs_pool oxs_pool;

/* NULL when threads cannot be started. */
oxs_pool *oxs_pool_new(const char *name, unsigned threads, unsigned capacity);
/* False when the queue is full or the pool is stopping (the job is not taken). */
bool oxs_pool_submit(oxs_pool *p, oxs_job *job);
void oxs_pool_counts(oxs_pool *p, unsigned *running, unsigned *queued);
/* Cancel queued jobs (their cancel runs), wait for running ones; later submissions
 * fail.  The pool stays valid until oxs_pool_free (which stops it first). */
void oxs_pool_stop(oxs_pool *p);
void oxs_pool_free(oxs_pool *p);

#endif /* OXS_JOBS_H */
