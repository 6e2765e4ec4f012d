/*
 * ratelimit.c — uploads per minute per client address: a token bucket per address
 * (burst = the per-minute rate), in a fixed table of slots; when the table is full the
 * address idle the longest gives its slot up (a bounded table cannot be grown by a
 * flood of addresses).  IPv6 addresses are bucketed by /64.
 */
#include "service/ratelimit.h"
#include "parser/oxp.h"
#include "render/oxr.h"
#include "service/clock.h"
#include "store/oxst.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 4096
#define PROBE 8

typedef struct slot {
	unsigned char addr[17]; /* family byte + up to 16 address bytes */
	bool used;
	double tokens;
	int64_t last_ms;
} slot;

struct oxs_ratelimit {
	pthread_mutex_t mu;
	double rate_per_ms, burst;
	slot slots[SLOTS];
};

oxs_ratelimit *oxs_ratelimit_new(unsigned per_minute)
{
	if (per_minute == 0)
		return NULL;
	oxs_ratelimit *rl = calloc(1, sizeof(*rl));
	if (rl == NULL)
		return NULL;
	pthread_mutex_init(&rl->mu, NULL);
	rl->burst = per_minute;
	rl->rate_per_ms = per_minute / 60000.0;
	return rl;
}

void oxs_ratelimit_free(oxs_ratelimit *rl)
{
	if (rl == NULL)
		return;
	pthread_mutex_destroy(&rl->mu);
	free(rl);
}

static size_t addr_key(const struct sockaddr *sa, unsigned char key[17])
{
	memset(key, 0, 17);
	if (sa != NULL && sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
		key[0] = 4;
		memcpy(key + 1, &in->sin_addr, 4);
	} else if (sa != NULL && sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
		key[0] = 6;
		memcpy(key + 1, &in6->sin6_addr, 8); /* the /64 */
	}
	return (size_t)(oxp_hash(key, 17, 0) % SLOTS);
}

bool oxs_ratelimit_allow(oxs_ratelimit *rl, const struct sockaddr *sa, unsigned *retry_after)
{
	if (rl == NULL)
		return true;
	unsigned char key[17];
	size_t h = addr_key(sa, key);
	int64_t now = oxs_now_ms();
	pthread_mutex_lock(&rl->mu);
	slot *s = NULL, *oldest = NULL;
	for (size_t i = 0; i < PROBE; i++) {
		slot *c = &rl->slots[(h + i) % SLOTS];
		if (c->used && memcmp(c->addr, key, 17) == 0) {
			s = c;
			break;
		}
		if (oldest == NULL || !c->used || (oldest->used && c->last_ms < oldest->last_ms))
			oldest = c;
	}
	if (s == NULL) {
		s = oldest;
		memcpy(s->addr, key, 17);
		s->used = true;
		s->tokens = rl->burst;
		s->last_ms = now;
	}
	double t = s->tokens + (double)(now - s->last_ms) * rl->rate_per_ms;
	s->tokens = t > rl->burst ? rl->burst : t;
	s->last_ms = now;
	bool ok = s->tokens >= 1.0;
	if (ok)
		s->tokens -= 1.0;
	else if (retry_after != NULL)
		*retry_after = (unsigned)((1.0 - s->tokens) / rl->rate_per_ms / 1000.0) + 1;
	pthread_mutex_unlock(&rl->mu);
	return ok;
}
