/*
 * arena.c — one arena per model: bump allocation from growing chunks under a byte budget.
 */
#include "parser/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_ALIGN 16u
#define ARENA_FIRST_CHUNK (16u * 1024u)
#define ARENA_MAX_CHUNK (4u * 1024u * 1024u)

typedef struct chunk {
	struct chunk *next;
	size_t size; /* usable bytes after the header */
	size_t used;
} chunk;

struct oxp_arena {
	chunk *head;
	size_t budget;  /* bytes that may still be handed out */
	size_t used;    /* bytes handed out so far (incl. alignment) */
	size_t next_chunk;
	bool malloc_failed; /* the last failure was malloc's, not the budget's */
	bool any_failed;    /* some allocation has failed (sticky) */
};

/* Header rounded up so the first allocation is aligned. */
#define CHUNK_HDR ((sizeof(chunk) + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1))

oxp_arena *oxp__arena_new(size_t budget)
{
	oxp_arena *a = calloc(1, sizeof(*a));
	if (a == NULL)
		return NULL;
	a->budget = budget;
	a->next_chunk = ARENA_FIRST_CHUNK;
	return a;
}

void oxp__arena_free(oxp_arena *a)
{
	if (a == NULL)
		return;
	chunk *c = a->head;
	while (c != NULL) {
		chunk *next = c->next;
		free(c);
		c = next;
	}
	free(a);
}

size_t oxp__arena_used(const oxp_arena *a)
{
	return a->used;
}

bool oxp__arena_malloc_failed(const oxp_arena *a)
{
	return a->malloc_failed;
}

/* An allocation that cannot be made: remembered (any_failed is sticky), and whether it
 * was malloc's fault or the budget's. */
static void *alloc_failed(oxp_arena *a, bool by_malloc)
{
	a->malloc_failed = by_malloc;
	a->any_failed = true;
	return NULL;
}

void *oxp__arena_alloc(oxp_arena *a, size_t size)
{
	if (size == 0)
		size = 1;
	if (size > SIZE_MAX - ARENA_ALIGN)
		return alloc_failed(a, false);
	size_t need = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	if (need > a->budget - a->used || a->used > a->budget)
		return alloc_failed(a, false);
#ifdef OXP_ARENA_MALLOC
	/* Debug mode: every allocation is a malloc of its own, linked for the final free. */
	chunk *c = malloc(CHUNK_HDR + need);
	if (c == NULL)
		return alloc_failed(a, true);
	c->next = a->head;
	c->size = need;
	c->used = need;
	a->head = c;
	a->used += need;
	void *p = (char *)c + CHUNK_HDR;
	memset(p, 0, need);
	return p;
#else
	chunk *c = a->head;
	if (c == NULL || c->size - c->used < need) {
		size_t csize = a->next_chunk;
		if (csize < need)
			csize = need;
		/* calloc: chunks are zero from the start (big ones arrive as fresh zero pages, so
		 * nothing is written twice) and an arena never reuses memory */
		c = calloc(1, CHUNK_HDR + csize);
		if (c == NULL)
			return alloc_failed(a, true);
		c->size = csize;
		c->used = 0;
		/* Keep the current chunk at the head only if this new one is a one-off for a big
		 * request; otherwise the new chunk becomes the current one. */
		if (a->head != NULL && csize > a->next_chunk &&
		    a->head->size - a->head->used >= ARENA_ALIGN) {
			c->next = a->head->next;
			a->head->next = c;
		} else {
			c->next = a->head;
			a->head = c;
			if (a->next_chunk < ARENA_MAX_CHUNK)
				a->next_chunk *= 2;
		}
	}
	void *p = (char *)c + CHUNK_HDR + c->used;
	c->used += need;
	a->used += need;
	return p;
#endif
}

void *oxp__arena_array(oxp_arena *a, size_t n, size_t size)
{
	if (size != 0 && n > SIZE_MAX / size)
		return alloc_failed(a, false);
	return oxp__arena_alloc(a, n * size);
}

char *oxp__arena_strndup(oxp_arena *a, const char *s, size_t len)
{
	if (len == SIZE_MAX)
		return NULL;
	char *d = oxp__arena_alloc(a, len + 1);
	if (d == NULL)
		return NULL;
	if (len != 0)
		memcpy(d, s, len);
	d[len] = '\0';
	return d;
}


/* Public names (parser/oxp.h) for the same arena. */
oxp_arena *oxp_arena_new(size_t budget)
{
	return oxp__arena_new(budget);
}

void oxp_arena_free(oxp_arena *a)
{
	oxp__arena_free(a);
}

void *oxp_arena_alloc(oxp_arena *a, size_t size)
{
	return oxp__arena_alloc(a, size);
}

void *oxp_arena_array(oxp_arena *a, size_t n, size_t size)
{
	return oxp__arena_array(a, n, size);
}

char *oxp_arena_strndup(oxp_arena *a, const char *s, size_t len)
{
	return oxp__arena_strndup(a, s, len);
}

size_t oxp_arena_used(const oxp_arena *a)
{
	return oxp__arena_used(a);
}

bool oxp_arena_failed(const oxp_arena *a)
{
	return a->any_failed;
}

oxp_code oxp_arena_code(const oxp_arena *a)
{
	return !a->any_failed ? OXP_OK : a->malloc_failed ? OXP_E_NOMEM : OXP_E_BUDGET;
}

char *oxp_arena_printf(oxp_arena *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	char *d = oxp__arena_alloc(a, (size_t)n + 1);
	if (d == NULL)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(d, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return d;
}
