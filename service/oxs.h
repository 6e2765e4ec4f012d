/*
 * oxs.h — onnxviz service: the one public header of service/.
 *
 * The program's commands (main.c dispatches to them) and what the tests drive directly.
 * Names start with oxs_ / OXS_.
 */
#ifndef OXS_H
#define OXS_H

#ifdef __cplusplus
extern "C" {
#endif

#define OXS_VERSION "0.1.0"

/* `onnxviz inspect MODEL [--json]`: summary or the full JSON document (cli.c). */
int oxs_cli_inspect(int argc, char **argv);
/* `onnxviz render MODEL [-o out.svg|.dot|.json] [--key=value ...]` (cli.c). */
int oxs_cli_render(int argc, char **argv);
/* `onnxviz serve [options]`: the HTTP service (serve.c). */
int oxs_serve_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif /* OXS_H */
