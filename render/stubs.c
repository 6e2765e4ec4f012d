/* stubs.c — TEMPORARY: render entry points not written yet answer "not implemented".
 * Each function moves to its real file as it is written; this file then disappears. */
#include "render/oxr.h"

#include <stdio.h>

static oxr_code todo(oxr_error *err, const char *what)
{
	if (err != NULL) {
		err->code = OXR_E_LAYOUT;
		snprintf(err->message, sizeof(err->message), "%s: not implemented yet", what);
	}
	return OXR_E_LAYOUT;
}

oxr_code oxr_render(const oxp_model *m, const oxp_dag *d, const oxr_options *o,
                    oxr_format fmt, oxr_buf *out, oxr_error *err)
{
	(void)m, (void)d, (void)o, (void)fmt, (void)out;
	return todo(err, "render");
}

void oxr_worker_limits_default(oxr_worker_limits *l)
{
	l->cpu_seconds = 30;
	l->memory_bytes = (size_t)2 << 30;
	l->wall_ms = 30000;
	l->max_output = (size_t)256 << 20;
}

oxr_code oxr_render_isolated(const char *exe, const char *model_path, const oxr_options *o,
                             oxr_format fmt, const oxr_worker_limits *lim, oxr_buf *out,
                             oxr_error *err)
{
	(void)exe, (void)model_path, (void)o, (void)fmt, (void)lim, (void)out;
	return todo(err, "render_isolated");
}

int oxr_worker_main(int argc, char **argv)
{
	(void)argc, (void)argv;
	fprintf(stderr, "worker: not implemented yet\n");
	return 70;
}
