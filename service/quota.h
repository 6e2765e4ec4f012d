/*
 * quota.h — what one client may hold at once (quota.c; docs/security-model.md): resumable
 * uploads in progress, request body bytes held in memory, overlay posts in flight.  A
 * client is the bearer token it presented when the server has tokens and the token is
 * valid (all holders of one token are one client), else its address (IPv6 by its /64).
 * request.c makes the key (oxs_client_of); this file only counts.  A leaf.
 */
#ifndef OXS_QUOTA_H
#define OXS_QUOTA_H

#include <stdbool.h>
#include <stdint.h>

typedef enum {
	OXS_Q_UPLOADS,    /* resumable uploads in progress (--uploads-per-client) */
	OXS_Q_BODY_BYTES, /* request body bytes held in memory (--body-per-client) */
	OXS_Q_OVERLAYS,   /* overlay posts in flight (--overlays-per-client) */
	OXS_Q_COUNT
} oxs_qres;

/* k[0]: 't' (the SHA-256 of a valid token in k[1..32]), '4' or '6' (an address in
 * k[1..16], IPv6 cut to its /64), or 0 (unknown: counted as one client) */
#define OXS_CLIENT_KEY 33
typedef struct oxs_client {
	unsigned char k[OXS_CLIENT_KEY];
} oxs_client;
/* The key as 66 hex digits and a NUL (the owner kept with a resumable upload's state). */
#define OXS_CLIENT_HEX (2 * OXS_CLIENT_KEY + 1)
void oxs_client_hex(const oxs_client *c, char out[OXS_CLIENT_HEX]);
bool oxs_client_from_hex(const char *hex, oxs_client *c);

typedef struct oxs_quota oxs_quota;
/* limit[res]: the most one client may hold of res (0: no limit).  NULL when out of memory. */
oxs_quota *oxs_quota_new(const uint64_t limit[OXS_Q_COUNT]);
void oxs_quota_free(oxs_quota *q);
/* Takes n of res for c when c's holding stays within its limit: true; else false and
 * nothing taken (*held, when not NULL, gets what c holds).  Also false when the table
 * cannot hold a new client (out of memory). */
bool oxs_quota_take(oxs_quota *q, const oxs_client *c, oxs_qres res, uint64_t n,
                    uint64_t *held);
/* Gives back n of res taken by c (never below zero). */
void oxs_quota_give(oxs_quota *q, const oxs_client *c, oxs_qres res, uint64_t n);
uint64_t oxs_quota_held(oxs_quota *q, const oxs_client *c, oxs_qres res);
uint64_t oxs_quota_limit(const oxs_quota *q, oxs_qres res);
/* Clients holding anything now (the metrics). */
uint64_t oxs_quota_clients(oxs_quota *q);

#endif /* OXS_QUOTA_H */
