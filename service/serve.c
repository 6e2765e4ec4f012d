/* serve.c — TEMPORARY stub until the HTTP service lands. */
#include "service/oxs.h"

#include <stdio.h>

int oxs_serve_main(int argc, char **argv)
{
	(void)argc, (void)argv;
	fprintf(stderr, "onnxviz serve: not implemented yet\n");
	return 70;
}
