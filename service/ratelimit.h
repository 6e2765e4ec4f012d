/*
 * ratelimit.h — the per-address upload rate limit (ratelimit.c): a token bucket per
 * client address.  A leaf.
 */
#ifndef OXS_RATELIMIT_H
#define OXS_RATELIMIT_H

#include <stdbool.h>
#include <sys/socket.h>

typedef struct oxs_ratelimit oxs_ratelimit;
oxs_ratelimit *oxs_ratelimit_new(unsigned per_minute);
void oxs_ratelimit_free(oxs_ratelimit *rl);
/* True when allowed; else *retry_after gets seconds until a token is back. */
bool oxs_ratelimit_allow(oxs_ratelimit *rl, const struct sockaddr *sa, unsigned *retry_after);

#endif /* OXS_RATELIMIT_H */
