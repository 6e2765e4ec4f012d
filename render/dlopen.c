/*
 * dlopen.c — a library loaded by its first user rather than linked (render/oxr.h,
 * "Libraries loaded when first needed"): Graphviz here, libcurl, libcrypto and
 * libmicrohttpd above.
 */
#include "render/oxr.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

bool oxr_dlopen(const char *soname, const char *prefix, const char *const *names, void **slots,
                size_t n, char *err, size_t errsize)
{
	void *so = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (so == NULL) {
		const char *e = dlerror();
		snprintf(err, errsize, "cannot load %s: %s", soname, e != NULL ? e : "unknown");
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		char sym[128];
		snprintf(sym, sizeof(sym), "%s%s", prefix, names[i]);
		if ((slots[i] = dlsym(so, sym)) == NULL) {
			snprintf(err, errsize, "cannot load %s: no %s in it", soname, sym);
			return false;
		}
	}
	return true;
}

bool oxr_dlopen_nomem(const char *err)
{
	/* the loader's words (glibc's dl-load.c, dl-map-segments.h) for an mmap or malloc that
	 * failed: a worker's memory limit reached while mapping the library, not a library
	 * missing or broken */
	return strstr(err, "failed to map segment") != NULL ||
	       strstr(err, "annot allocate memory") != NULL;
}
