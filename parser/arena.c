/*
 * arena.c — one arena per model: bump allocation from growing chunks under a byte budget.
 */
#include "parser/internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define ARENA_ALIGN 16u
#define ARENA_FIRST_CHUNK (16u * 1024u)
#define ARENA_MAX_CHUNK (4u * 1024u * 1024u)

typedef struct chunk {
	struct chunk *next;
	size_t size;  /* usable bytes after the header */
	size_t used;
	size_t ready; /* a mapped chunk: bytes after the header whose pages are populated */
	bool mapped;  /* fresh anonymous memory (mmap'ed or the region's): populated ahead */
	bool region;  /* the one-shot region's: never returned */
} chunk;

/* Big chunks are fresh anonymous mappings whose pages are populated ahead of use, a
 * window at a time, with one madvise rather than one page fault each: on the VMs this
 * runs on a fault costs ~20 us and a page populated in bulk ~1.3 us, and a parse writes
 * every page of its arena anyway (docs/decisions.md).  They are mapped by the arena
 * itself because calloc would hand out recycled heap memory for them once glibc's
 * mmap threshold has risen, and zero it, faulting every page.  Kernels before 5.14
 * refuse the advice: the pages then fault one by one as before. */
#define ARENA_MAP_MIN ((size_t)128 * 1024)
#define ARENA_WINDOW ((size_t)256 * 1024)
#define PAGE_BYTES ((uintptr_t)4096)

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

static void chunk_free(chunk *c)
{
	if (c->region)
		return;
	if (c->mapped)
		munmap(c, CHUNK_HDR + c->size);
	else
		free(c);
}

/* Populate the whole pages of [p, p + len). */
static void populate_range(uintptr_t p, size_t len)
{
	uintptr_t from = (p + PAGE_BYTES - 1) & ~(PAGE_BYTES - 1);
	uintptr_t to = (p + len) & ~(PAGE_BYTES - 1);
#ifdef MADV_POPULATE_WRITE
	if (to > from)
		(void)madvise((void *)from, to - from, MADV_POPULATE_WRITE);
#else
	(void)from;
	(void)to;
#endif
}

/* The one-shot region (oxp_arena_one_shot): one reservation, 2 MB aligned and advised
 * for transparent huge pages, from which every later chunk is carved by a bump of `next`
 * until it is spent; nothing carved is ever given back, so all of it is still zero when
 * carved.  Why: on the VMs this runs on, the first touch of each new 4 KB page costs
 * ~4 us even when populated in bulk (the hypervisor learns of every new page table
 * entry), so a parse that writes 1-2 MB of arena paid 1-2 ms for it; a huge page is one
 * entry (docs/decisions.md 78). */
#define REGION_ALIGN ((size_t)2 << 20)

static struct {
	char *base; /* set once, before any thread allocates (the function's contract) */
	size_t size;
	size_t next; /* bytes carved, bumped atomically (may pass size once spent) */
} region;

bool oxp_arena_one_shot(size_t bytes)
{
	if (region.base != NULL)
		return true;
	if (bytes == 0 || bytes > SIZE_MAX / 4)
		return false;
	bytes = (bytes + REGION_ALIGN - 1) & ~(REGION_ALIGN - 1);
	char *r = mmap(NULL, bytes + REGION_ALIGN, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r == MAP_FAILED)
		return false;
	char *base = (char *)(((uintptr_t)r + REGION_ALIGN - 1) & ~(uintptr_t)(REGION_ALIGN - 1));
	/* only the aligned part stays mapped */
	if (base > r)
		(void)munmap(r, (size_t)(base - r));
	if (base + bytes < r + bytes + REGION_ALIGN)
		(void)munmap(base + bytes, (size_t)(r + bytes + REGION_ALIGN - (base + bytes)));
#ifdef MADV_HUGEPAGE
	/* refused where THP is off: the pages are then 4 KB ones, populated in windows as
	 * the arena's own mappings are */
	(void)madvise(base, bytes, MADV_HUGEPAGE);
#endif
	region.size = bytes;
	region.base = base;
	return true;
}

/* len bytes (a whole number of pages) of the region, or NULL when there is none or it is
 * spent. */
static void *region_take(size_t len)
{
	if (region.base == NULL || len > region.size)
		return NULL;
	size_t at = __atomic_fetch_add(&region.next, len, __ATOMIC_RELAXED);
	if (at > region.size || region.size - at < len)
		return NULL; /* spent (next stays past the end: later calls fail at once) */
	return region.base + at;
}

/* A new chunk of size usable bytes, zeroed. */
static chunk *chunk_new(size_t size)
{
	chunk *c;
	bool pages = size <= SIZE_MAX - CHUNK_HDR - PAGE_BYTES; /* whole pages: no overflow */
	size_t len = pages ? (CHUNK_HDR + size + PAGE_BYTES - 1) & ~(size_t)(PAGE_BYTES - 1) : 0;
	if (pages && (c = region_take(len)) != NULL) {
		populate_range((uintptr_t)c, PAGE_BYTES); /* the header's page */
		c->mapped = true;
		c->region = true;
		c->size = len - CHUNK_HDR;
	} else if (pages && size >= ARENA_MAP_MIN) {
		void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return NULL;
		c = m;
		c->mapped = true;
		c->size = len - CHUNK_HDR;
	} else {
		/* heap memory: new pages are populated in one go before the zeroing writes
		 * them (pages the heap had already cost nothing more) */
		c = malloc(CHUNK_HDR + size);
		if (c == NULL)
			return NULL;
		populate_range((uintptr_t)c, CHUNK_HDR + size);
		memset(c, 0, CHUNK_HDR + size);
		c->size = size;
	}
	return c;
}

/* Populate the pages of a mapped chunk up to upto bytes and a window beyond. */
static void populate(chunk *c, size_t upto)
{
	size_t end = c->ready + ARENA_WINDOW;
	if (end < upto)
		end = upto;
	if (end > c->size)
		end = c->size;
	uintptr_t base = (uintptr_t)c + CHUNK_HDR;
	uintptr_t from = (base + c->ready) & ~(PAGE_BYTES - 1);
	uintptr_t to = (base + end + PAGE_BYTES - 1) & ~(PAGE_BYTES - 1);
	populate_range(from, (size_t)(to - from));
	c->ready = end;
}

void oxp__arena_free(oxp_arena *a)
{
	if (a == NULL)
		return;
	chunk *c = a->head;
	while (c != NULL) {
		chunk *next = c->next;
		chunk_free(c);
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
	c->mapped = false;
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
		/* chunks are zero from the start (big ones arrive as fresh zero pages, so
		 * nothing is written twice) and an arena never reuses memory */
		c = chunk_new(csize);
		if (c == NULL)
			return alloc_failed(a, true);
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
	if (c->mapped && c->used + need > c->ready)
		populate(c, c->used + need);
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
