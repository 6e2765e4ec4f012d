/*
 * png.c — the PNG routes' query and artifact names (png.h).  Drawing is the layout
 * worker's (render/worker.c: the SVG, then render/raster.c); caching, the store and
 * conditional requests are every rendering's (artifacts.c).
 */
#include "service/png.h"
#include "service/hash.h"
#include "service/version.h"

#include <stdio.h>
#include <string.h>

static bool heat_scale_word(const char *v)
{
	uint8_t s;
	return oxr_heat_scale_parse(v, &s);
}

bool oxs_raster_query(oxs_query_pair *pairs, size_t *n, uint64_t max_pixels, bool card,
                      oxr_raster *r, char *err, size_t errsize)
{
	static const char *const keys[] = {"w", "h", "scale", "theme"};
	bool seen[4] = {false, false, false, false};
	oxr_raster_default(r);
	r->max_pixels = max_pixels;
	size_t k = 0;
	for (size_t i = 0; i < *n; i++) {
		const char *key = pairs[i].key, *v = pairs[i].value;
		int which = -1;
		for (int j = 0; j < 4; j++)
			if (!strcmp(key, keys[j]))
				which = j;
		if (which == 2 && !card && heat_scale_word(v))
			which = -1; /* the heat overlay's scale (heat_svc.c reads it) */
		if (which < 0 || (card && which < 2)) {
			if (card) {
				snprintf(err, errsize, "card.png takes scale= and theme= only (it is %u x %u "
				                       "CSS pixels, of the overview), not '%.32s'",
				         OXR_CARD_W, OXR_CARD_H, key);
				return false;
			}
			pairs[k++] = pairs[i];
			continue;
		}
		if (seen[which]) {
			snprintf(err, errsize, "%s: once", keys[which]);
			return false;
		}
		seen[which] = true;
		oxr_error e;
		memset(&e, 0, sizeof(e));
		if (oxr_raster_set(r, key, v, &e) != OXR_OK) {
			snprintf(err, errsize, "%s", e.message);
			return false;
		}
	}
	*n = k;
	return true;
}

void oxs_art_raster(oxs_art *a, const oxr_raster *r, bool card)
{
	a->raster = true;
	a->card = card;
	a->ras = *r;
	char rkey[OXR_RASTER_KEY_MAX], salted[sizeof(a->name) + OXR_RASTER_KEY_MAX + 64], h[65];
	oxr_raster_key(r, rkey, sizeof(rkey));
	const char *what = card ? "card" : "png";
	size_t kl = strlen(a->key);
	snprintf(a->key + kl, sizeof(a->key) - kl, "|%s|%s", what, rkey);
	/* the drawing's own store name names what it draws, options and renderer version */
	snprintf(salted, sizeof(salted), "%s|%s|%s|%s", OXS_VERSION, a->name, what, rkey);
	oxs_sha256_hex(salted, strlen(salted), h, 32);
	snprintf(a->name, sizeof(a->name), "%s-%s.png", what, h);
}
