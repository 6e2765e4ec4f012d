/*
 * formats.c — output formats by file extension (formats.h): one table for `onnxviz
 * render -o`, `onnxviz diff -o` and the HTTP routes.  Where the extension says nothing,
 * each command keeps its own default: a drawing is SVG, a diff the JSON document
 * (docs/decisions.md).
 */
#include "service/formats.h"

#include <string.h>

static const oxs_ext_format table[] = {
    {"svg", OXR_FMT_SVG, "svg", false},
    {"dot", OXR_FMT_DOT, "dot", false},
    {"gv", OXR_FMT_DOT, "dot", false},
    {"json", OXR_FMT_LAYOUT_JSON, "json", false},
    {"txt", -1, "text", false},
    {"png", OXR_FMT_SVG, "png", true}, /* the SVG, rasterized (render/raster.c) */
    {"md", -1, "md", false},
};

const oxs_ext_format *oxs_format_of_ext(const char *ext)
{
	for (size_t i = 0; ext != NULL && i < sizeof(table) / sizeof(table[0]); i++)
		if (strcmp(ext, table[i].ext) == 0)
			return &table[i];
	return NULL;
}

const oxs_ext_format *oxs_format_of_path(const char *path)
{
	const char *dot = path != NULL ? strrchr(path, '.') : NULL;
	return dot != NULL ? oxs_format_of_ext(dot + 1) : NULL;
}

oxr_format oxs_format_of_route(const char *pattern)
{
	const oxs_ext_format *e = oxs_format_of_path(pattern);
	return e != NULL && e->render >= 0 ? (oxr_format)e->render : OXR_FMT_SVG;
}
