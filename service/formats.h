/*
 * formats.h — the one table of output formats by file extension, for the CLI (render and
 * diff with -o FILE) and HTTP (the routes' .svg/.dot/.json).  service/ only.
 */
#ifndef OXS_FORMATS_H
#define OXS_FORMATS_H

#include "render/oxr.h"

typedef struct oxs_ext_format {
	const char *ext;   /* "svg", "dot", "gv", "json", "txt", "md", "png" */
	int render;        /* the drawing's oxr_format, -1 when the extension draws nothing */
	const char *diff;  /* what a diff writes: "svg", "dot", "json" (the document), "text",
	                      "md", "png" */
	bool raster;       /* the drawing (SVG) is then rasterized: PNG (render/raster.c) */
} oxs_ext_format;

/* The row of an extension (without the dot, case as written), or NULL when unknown. */
const oxs_ext_format *oxs_format_of_ext(const char *ext);
/* The row of a path's extension (after its last '.'), or NULL (none, or unknown). */
const oxs_ext_format *oxs_format_of_path(const char *path);
/* The drawing format a route's path ends in ("/models/{id}/graph.dot": OXR_FMT_DOT);
 * SVG when its extension draws nothing. */
oxr_format oxs_format_of_route(const char *pattern);

#endif /* OXS_FORMATS_H */
