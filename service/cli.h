/*
 * cli.h — the model commands (cli.c): inspect, render, check, and what the other commands
 * share with them (writing the output, `--key=value` render options).
 */
#ifndef OXS_CLI_H
#define OXS_CLI_H

#include "render/oxr.h"

/* `onnxviz inspect MODEL [--json]`: summary or the full JSON document (cli.c). */
int oxs_cli_inspect(int argc, char **argv);
/* `onnxviz render MODEL [-o out.svg|.dot|.json] [--key=value ...]` (cli.c). */
int oxs_cli_render(int argc, char **argv);
/* `onnxviz check MODEL [--json]`: the model's problems (docs/check.md).  Exit status 0
 * without errors, 1 with errors, 2 when the model cannot be read or on usage errors. */
int oxs_cli_check(int argc, char **argv);
/* Write out whole to path ("-" or NULL: standard output) through a temporary renamed over
 * it; 0, or 1 after a message on stderr (cli.c). */
int oxs_write_output(const char *path, const oxr_buf *out);
/* A command's `--key=value` argument as a render option: 0 set, 1 not of that form (the
 * caller goes on), 2 refused after "onnxviz CMD: message" on stderr (cli.c). */
int oxs_cli_render_option(oxr_options *opt, const char *cmd, const char *arg);
/* --w=, --h=, --scale=N (a number: the pixel ratio), --theme=, --max-pixels= into r
 * (render/oxr.h, "Raster images"): the same, 0 taken, 1 not one of them, 2 bad (message
 * printed). */
int oxs_cli_raster_option(oxr_raster *r, const char *cmd, const char *arg);
/* out (an SVG) replaced by its PNG under r: 0, or 1 after a message naming path. */
int oxs_cli_rasterize(const char *path, const oxr_raster *r, oxr_buf *out);

#endif /* OXS_CLI_H */
