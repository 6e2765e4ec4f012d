/*
 * png.h — what the PNG routes ask for (png.c): the raster parameters of a query (w, h,
 * scale, theme; render/oxr.h "Raster images") taken out before the render options read
 * the rest, and what names a PNG artifact.  graph.png, the diff's .png, POST /graph.png
 * and card.png (docs/api.md "PNG").
 */
#ifndef OXS_PNG_H
#define OXS_PNG_H

#include "render/oxr.h"
#include "service/art.h"
#include "service/query.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Take w=, h=, scale= and theme= out of pairs[0..*n) (the rest is moved down, *n
 * lowered) into *r, defaults first, with max_pixels as the budget.  scale= with a heat
 * scale's word (linear, log, thresholds) is the heat overlay's and stays.  card: only
 * scale and theme are taken, and anything else is refused (a card is 1200 x 630, of the
 * default overview).  False with a message when a value is bad or a key repeated. */
bool oxs_raster_query(oxs_query_pair *pairs, size_t *n, uint64_t max_pixels, bool card,
                      oxr_raster *r, char *err, size_t errsize);

/* After oxs_art_init and the kind's own setter (oxs_art_diff, oxs_art_heat): the artifact
 * is that drawing as PNG under r, or with card the model's card (kind OXS_ART_GRAPH). */
void oxs_art_raster(oxs_art *a, const oxr_raster *r, bool card);

#endif /* OXS_PNG_H */
