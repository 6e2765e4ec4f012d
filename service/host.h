/*
 * host.h — the Host header check against DNS rebinding (host.c; docs/decisions.md 86).
 * A leaf.
 */
#ifndef OXS_HOST_H
#define OXS_HOST_H

#include <stdbool.h>

/* Whether a request naming `host` (the Host header's value, port included; NULL when
 * absent) may be answered by a server bound to `bind` (a numeric address) with
 * --allowed-hosts `allowed` (comma-separated names; "*" any; a name starting with "." any
 * name under it; "" none):
 *  - no Host (HTTP/1.0), localhost, a name under .localhost, a loopback address, the bind
 *    address, and any name of `allowed`: yes;
 *  - bound to a loopback address: nothing else;
 *  - bound to another address (0.0.0.0, ::, a LAN address): any IP address, and any name
 *    when `allowed` is empty.
 * A malformed Host (more than one colon outside brackets, a bad port, empty) is refused. */
bool oxs_host_allowed(const char *host, const char *bind, const char *allowed);

#endif /* OXS_HOST_H */
