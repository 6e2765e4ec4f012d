/*
 * art.h — what names an artifact (art.c): its kind, format and options, the model it is of,
 * its cache key and its name in the store; the links of a summary.  Getting one (memory,
 * store, computing) is artifacts.h's.  A leaf.
 */
#ifndef OXS_ART_H
#define OXS_ART_H

#include "render/oxr.h"
#include "service/query.h"
#include "service/router.h"
#include "store/oxst.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum {
	OXS_ART_SUMMARY = 0,
	OXS_ART_DOCUMENT,
	OXS_ART_GRAPH,
	OXS_ART_TENSOR, /* a tensor preview (preview.c): JSON or .npy */
	OXS_ART_DIFF,   /* what changed from model id to model `other` (diff.c): the JSON
	                   document (fmt OXR_FMT_LAYOUT_JSON stands for it), SVG or DOT */
	OXS_ART_COST,   /* cost.json (oxr_cost_json) with the dims bound by `dims` */
	OXS_ART_HEAT    /* a drawing with a heat overlay (heat_svc.c): `heat` */
} oxs_art_kind;

/* id|kind|ext|options, and a PNG's raster key after them (png.c) */
#define OXS_KEY_MAX (OXR_OPTIONS_KEY_MAX + 256 + OXR_RASTER_KEY_MAX + 16)

/* A heat drawing's overlay (heat_svc.c: oxs_heat_query reads it from the query). */
typedef struct oxs_heat_req {
	char overlay[72]; /* "cost", or an overlay id */
	char compare[72]; /* "", or a second overlay's id: B compared with overlay (A) */
	char metric[72];  /* "" for the overlay's primary */
	uint8_t scale;    /* oxr_heat_scale */
	bool table;       /* the attributed table (GET /models/{id}/overlays/{oid}, JSON),
	                     not a drawing: scale and the options do not matter */
} oxs_heat_req;

typedef struct oxs_art {
	oxs_art_kind kind;     /* and which member of `u` is set */
	oxr_format fmt;
	oxr_options opt;
	char id[OXST_ID_LEN + 1];
	char key[OXS_KEY_MAX]; /* cache key: id|kind|options */
	char name[112];        /* store rendering name */
	/* a --models-dir file (oxs_art_file): read from src, not kept in the store, answered
	 * with no-cache instead of immutable; id names that version of the file */
	char src[64];          /* "/proc/self/fd/N", "" for stored models */
	int dirfd;             /* its folder (external data), -1 for stored models */
	char fpath[OXST_LOCATION_MAX + 1]; /* its path under --models-dir, for links */
	/* a PNG of the drawing (graphs, diffs, heat) or the model's card: png.c's
	 * oxs_art_raster sets these (key and store name too) */
	bool raster, card;
	oxr_raster ras;
	/* What one kind only has: read only the member of a->kind.  Summaries, documents and
	 * graphs have none. */
	union {
		struct {
			char other[OXST_ID_LEN + 1]; /* the model compared with (B; id is A) */
			bool md;                     /* Markdown (oxs_art_diff_md), not fmt */
			bool layout;                 /* the drawing's layout JSON, not the
			                                document (oxs_art_diff_layout) */
			char base[256];              /* md: --base-url of its links, "" none */
		} diff;                              /* OXS_ART_DIFF (oxs_art_diff) */
		struct {
			char name[OXS_TENSOR_KEY_MAX + 1]; /* the tensor's name or document ref */
			oxs_preview_opt opt;
		} tensor;                            /* OXS_ART_TENSOR (oxs_art_tensor) */
		struct {
			char dims[512]; /* "batch:1,sequence_length:128", checked, or "" */
		} cost;                              /* OXS_ART_COST (oxs_art_cost) */
		oxs_heat_req heat;                   /* OXS_ART_HEAT (oxs_art_heat) */
	} u;
} oxs_art;

/* After oxs_art_init(OXS_ART_HEAT): the overlay, metric and scale (cache key, store
 * name). */
void oxs_art_heat(oxs_art *a, const oxs_heat_req *hr);

void oxs_art_init(oxs_art *a, oxs_art_kind kind, const char *id, oxr_format fmt,
                  const oxr_options *opt);
/* After oxs_art_init(OXS_ART_TENSOR): the tensor key and the preview options (the cache
 * key gets a hash of the tensor key and the canonical options). */
void oxs_art_tensor(oxs_art *a, const char *tensor, const oxs_preview_opt *o);
/* After oxs_art_init(OXS_ART_DIFF): the model compared with (cache key and store name
 * name both; the store keeps the artifact under id). */
void oxs_art_diff(oxs_art *a, const char *other);
/* The same for the diff as Markdown (diff_md.c) with links under base ("": none). */
void oxs_art_diff_md(oxs_art *a, const char *other, const char *base);
/* The same for the diff drawing's layout JSON (fmt OXR_FMT_LAYOUT_JSON: .layout.json,
 * where .json is the diff document): a canvas draws a big diff from it (web/canvas.js). */
void oxs_art_diff_layout(oxs_art *a, const char *other);
/* After oxs_art_init(OXS_ART_COST): the dims binding (valid for oxp_cost_bind_parse; part
 * of the cache key and store name). */
void oxs_art_cost(oxs_art *a, const char *dims);
/* After oxs_art_init: the artifact is of a --models-dir file open as fd (its folder
 * dirfd, its relative path fpath); both fds stay the request's. */
void oxs_art_file(oxs_art *a, int fd, int dirfd, const char *fpath);
/* The file extension of a's answer ("svg", "json", "npy", "png"). */
const char *oxs_art_ext(const oxs_art *a);
/* Append a URL path (a --models-dir file's, a redirect's): bytes outside
 * [A-Za-z0-9._~/-] as %XX. */
void oxs_url_path(oxr_buf *b, const char *p);
/* The "links" member of a summary, for a stored model or a --models-dir file. */
void oxs_links_json(oxr_buf *b, const oxs_art *a, bool tensor);

#endif /* OXS_ART_H */
