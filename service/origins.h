/*
 * origins.h — lists of web origins (origins.c): --frame-ancestors, the origins that may
 * frame GET /embed/{id} and talk to it (embed.h).  A leaf.
 */
#ifndef OXS_ORIGINS_H
#define OXS_ORIGINS_H

#include <stdbool.h>
#include <stddef.h>

#define OXS_FRAME_ANCESTORS_MAX 16 /* origins in --frame-ancestors */

/* Check and normalise --frame-ancestors in place: origins (http:// or https://, a host
 * name or address, an optional port; no path, no wildcard) separated by spaces or
 * commas, lower-cased and joined by one space.  False with a message naming the bad one;
 * "" (none) is valid. */
bool oxs_frame_ancestors_parse(char *list, size_t size, char *err, size_t errsize);
/* Whether origin ("https://host[:port]", as a browser sends it) is one of list's. */
bool oxs_frame_ancestor_listed(const char *list, const char *origin);

#endif /* OXS_ORIGINS_H */
