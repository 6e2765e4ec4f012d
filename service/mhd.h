/*
 * mhd.h — libmicrohttpd, loaded when first used (mhd.c defines the library's functions the
 * service calls, each forwarding to the real one; docs/decisions.md 64).  A leaf.
 */
#ifndef OXS_MHD_H
#define OXS_MHD_H

#include <stdbool.h>
#include <stddef.h>

/* Load libmicrohttpd (once): false with the reason in err (may be NULL). */
bool oxs_mhd_load(char *err, size_t errsize);

#endif /* OXS_MHD_H */
