/*
 * client.h — who a client is (client.c; docs/security-model.md), for what it may hold
 * (quota.h): the valid bearer token it presented when the server has tokens, else its
 * address.  A request from a load balancer named in --trusted-proxies counts against the
 * client its X-Forwarded-For names: the rightmost address not itself a trusted proxy (the
 * entries to its left are the client's own words and are not believed).  A leaf:
 * request.c applies it to a request (oxs_client_of).
 */
#ifndef OXS_CLIENT_H
#define OXS_CLIENT_H

#include "service/quota.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

/* An address: fam 4 (a[0..3]) or 6 (a[0..15]); fam 0: none. */
typedef struct oxs_ip {
	unsigned char fam;
	unsigned char a[16];
} oxs_ip;

bool oxs_ip_from_sockaddr(const struct sockaddr *sa, oxs_ip *ip);
/* A textual address (n bytes, no port; IPv4-mapped IPv6 is its IPv4 address). */
bool oxs_ip_parse(const char *s, size_t n, oxs_ip *ip);

/* A list of addresses and CIDR blocks ("10.0.0.0/8, 127.0.0.1, fd00::/8"). */
typedef struct oxs_cidrs oxs_cidrs;
/* NULL list or "" gives an empty list (*out NULL, true); false with a message on a bad
 * entry or out of memory. */
bool oxs_cidrs_parse(const char *list, oxs_cidrs **out, char *err, size_t errsize);
void oxs_cidrs_free(oxs_cidrs *l);
bool oxs_cidrs_match(const oxs_cidrs *l, const oxs_ip *ip);

/* The client's address: peer, or when peer is a trusted proxy, the rightmost address of
 * xff (the X-Forwarded-For header, may be NULL) that is not a trusted proxy (peer when
 * xff names none, or an entry does not parse: then the proxy itself is the client). */
oxs_ip oxs_client_addr(const oxs_cidrs *trusted, const oxs_ip *peer, const char *xff);
/* The key of an address (IPv6 by its /64). */
void oxs_client_of_ip(const oxs_ip *ip, oxs_client *out);
/* The key of a token's SHA-256. */
void oxs_client_of_token(const unsigned char md[32], oxs_client *out);

#endif /* OXS_CLIENT_H */
