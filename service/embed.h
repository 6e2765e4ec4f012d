/*
 * embed.h — views other sites embed (embed.c; issue 36 items 3 and 4, docs/embed.md):
 *   GET /embed/{id}   the page's drawing alone (pan and zoom, selection, the node panel),
 *                     framable by the origins of --frame-ancestors and by nothing else;
 *                     the page learns the origins it may talk to from its <html>'s
 *                     data-embed-origins (web/embed.js, the postMessage API);
 *   GET /m/{id}       a share URL for link unfurlers: the page, with a server-written
 *                     <head> of Open Graph and Twitter card tags and the oEmbed link;
 *   GET /oembed       oEmbed 1.0 for those URLs: rich (the iframe) or photo (the PNG).
 */
#ifndef OXS_EMBED_H
#define OXS_EMBED_H

#include "service/server.h"

#include <stdbool.h>
#include <stddef.h>

void oxs_embed_get(oxs_req *r);  /* GET /embed/{id} */
void oxs_share_get(oxs_req *r);  /* GET /m/{id} */
void oxs_oembed_get(oxs_req *r); /* GET /oembed */
/* The meta kept with model id at upload (its name, as GET /models lists it; the card's
 * title, artifacts.c); false when none is kept. */
bool oxs_model_meta(oxs_server *srv, const char *id, oxst_model_meta *meta);

#endif /* OXS_EMBED_H */
