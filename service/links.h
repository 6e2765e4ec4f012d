/*
 * links.h — a structure's URLs redirect to its whole model only when the server proved
 * it (links.c; issue 35 item 1, docs/decisions.md 82).
 */
#ifndef OXS_LINKS_H
#define OXS_LINKS_H

#include "store/oxst.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct oxs_links oxs_links;

/* The links kept in dir/links (read now; each is checked again from the stored bytes by
 * a background thread, and served only once proven).  NULL when out of memory. */
oxs_links *oxs_links_open(const char *dir, oxst_store *store);
/* Stops the check (waits for the proof under way) and frees. */
void oxs_links_free(oxs_links *l);

/* Whether id is a structure proven to be the structure of the stored model *full. */
bool oxs_links_moved(oxs_links *l, const char *id, char full[OXST_ID_LEN + 1]);

typedef enum {
	OXS_LINK_MADE,    /* proven and kept */
	OXS_LINK_HAD,     /* structure was linked already (the first proven link stays) */
	OXS_LINK_REFUTED, /* not full's structure: nothing kept */
	OXS_LINK_UNKNOWN  /* the proof could not be made now (the store, memory): nothing kept */
} oxs_link_verdict;

/* The stored model `full` has arrived with `structure` named as its structure and `name`
 * as the file's name (claims of the client: inputs of the proof, never its answer).
 * Proves it from the stored bytes (links.c's rule) and keeps the link durably when it
 * holds.  Blocking: call it from a job. */
oxs_link_verdict oxs_links_prove(oxs_links *l, const char *structure, const char *full,
                                 const char *name);
/* Links served / waiting for their check / dropped at the check (for metrics). */
void oxs_links_counts(oxs_links *l, uint64_t *served, uint64_t *pending, uint64_t *dropped);

#endif /* OXS_LINKS_H */
