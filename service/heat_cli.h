/*
 * heat_cli.h — heat overlays on the command line (heat_cli.c): `onnxviz overlay` and
 * `onnxviz render --overlay`.
 */
#ifndef OXS_HEAT_CLI_H
#define OXS_HEAT_CLI_H

#include "parser/oxp.h"
#include "render/oxr.h"

/* `onnxviz overlay MODEL FILE... [--json]`: the attributed table of a profile or node
 * data, with its coverage (heat_cli.c, docs/overlays.md). */
int oxs_cli_overlay(int argc, char **argv);
/* `onnxviz render`'s overlay options (--overlay FILE, --metric M, --scale S, --optimized
 * OPT.onnx), kept in a state from oxs_cli_render_heat_new (free()d by the caller):
 * option: 1 taken (argv[*i], maybe its value too), 0 not one, -1 usage error (printed);
 * render: -1 no overlay asked for, 0 drawn into out, 1 the overlay could not be read, 2
 * usage, 3 the drawing failed (err). */
void *oxs_cli_render_heat_new(void);
int oxs_cli_render_heat_option(void *state, int argc, char **argv, int *i);
int oxs_cli_render_heat(void *state, const oxp_model *m, const oxp_dag *d,
                        const oxr_options *opt, oxr_format fmt, oxr_buf *out, oxr_error *err);

#endif /* OXS_HEAT_CLI_H */
