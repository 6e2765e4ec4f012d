/*
 * zload.c — zlib, loaded when the server first needs it rather than linked, as the other
 * libraries only some commands need are (render/oxr.h, oxr_dlopen): the CLI does not map
 * it (tests/bench/cli_startup.sh).  The binary names it in its .note.dlopen section for
 * the image check (tests/docker/run.sh).
 */
#include "service/zload.h"
#include "render/oxr.h"

#include <pthread.h>
#include <stdio.h>

#define Z_SONAME "libz.so.1"

OXR_DLOPEN_NOTE(zlib, "gzip",
                "gzip request bodies (Content-Encoding) and answers (Accept-Encoding)",
                Z_SONAME);

static union {
	oxs_zlib fns;
	void *slot[0 OXS_ZLIB_FNS(OXR_DLOPEN_SLOT)];
} lib;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool loaded;
static char load_err[300];

static void load(void)
{
	static const char *const names[] = {OXS_ZLIB_FNS(OXR_DLOPEN_NAME)};
	loaded = oxr_dlopen(Z_SONAME, "", names, lib.slot, sizeof(names) / sizeof(names[0]),
	                    load_err, sizeof(load_err));
}

const oxs_zlib *oxs_zlib_load(char *err, size_t errsize)
{
	pthread_once(&once, load);
	if (!loaded) {
		snprintf(err, errsize, "%s", load_err);
		return NULL;
	}
	return &lib.fns;
}
