/*
 * main.c — the onnxviz program: one binary, a few commands.
 */
#include "parser/oxp.h"
#include "render/oxr.h"
#include "service/heat_svc.h" /* oxs_pair */
#include "service/oxs.h"
#include "service/sign.h" /* oxs_cli_sign */

#include <stdio.h>
#include <string.h>

static void usage(FILE *f)
{
	fprintf(f, "onnxviz %s — ONNX model graphs as SVG, DOT and JSON\n"
	           "\n"
	           "usage:\n"
	           "  onnxviz inspect MODEL [--json]     summary, or the full JSON document\n"
	           "  onnxviz check MODEL [--json]       problems of the model; exit 0 none, 1 errors,\n"
	           "                                     2 unreadable (docs/check.md)\n"
	           "  onnxviz render MODEL [-o OUT] [--OPTION=VALUE ...]\n"
	           "                                     SVG (default), .dot or .json layout\n"
	           "  onnxviz render MODEL --overlay PROFILE.json|node-data.json|data.csv|cost\n"
	           "                 [--metric M] [--scale linear|log|thresholds] -o hot.svg\n"
	           "                                     the same, boxes coloured by the figures\n"
	           "  onnxviz overlay MODEL FILE... [--json]\n"
	           "                                     a profile's time per node and its coverage\n"
	           "  onnxviz diff A B [-o OUT] [--OPTION=VALUE ...]\n"
	           "                                     what changed from A to B: a summary, or\n"
	           "                                     .json, .svg, .dot, .md (exit 0 same, 1 differ)\n"
	           "  onnxviz serve [--OPTION=VALUE ...] the HTTP service (serve --help)\n"
	           "  onnxviz sign URL [--ttl 1h]        a link that reads URL without a token until\n"
	           "                                     it expires (the server's --sign-secret-file)\n"
	           "  onnxviz --version\n",
	        OXS_VERSION);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	const char *cmd = argv[1];
	/* once: a command that runs once and exits takes its arenas from one huge-page region
	 * (parser/oxp.h); the service lives on and frees them */
	static const struct {
		const char *name;
		int (*run)(int argc, char **argv);
		bool once;
	} commands[] = {
	    {"inspect", oxs_cli_inspect, true}, {"check", oxs_cli_check, true},
	    {"render", oxs_cli_render, true},   {"overlay", oxs_cli_overlay, true},
	    {"diff", oxs_cli_diff, true},       {"serve", oxs_serve_main, false},
	    {"sign", oxs_cli_sign, true},
	};
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(cmd, commands[i].name) == 0) {
			if (commands[i].once)
				(void)oxp_arena_one_shot((size_t)64 << 20);
			return commands[i].run(argc - 1, argv + 1);
		}
	if (strcmp(cmd, "__render") == 0) /* the layout worker process (render/worker.c) */
		return oxr_worker_main_pair(argc - 1, argv + 1, oxs_pair);
	if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
		printf("onnxviz %s\n", OXS_VERSION);
		return 0;
	}
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "onnxviz: unknown command '%s'\n", cmd);
	usage(stderr);
	return 2;
}
