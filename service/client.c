/*
 * client.c — who a client is (client.h): addresses, CIDR lists, X-Forwarded-For from
 * trusted proxies, and the quota key of each.
 */
#include "service/client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct cidr {
	oxs_ip ip;
	unsigned bits;
} cidr;

struct oxs_cidrs {
	size_t n;
	cidr c[];
};

static void from_v6(const unsigned char a[16], oxs_ip *ip)
{
	static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	memset(ip, 0, sizeof(*ip));
	if (memcmp(a, mapped, 12) == 0) { /* ::ffff:a.b.c.d is the IPv4 client it maps */
		ip->fam = 4;
		memcpy(ip->a, a + 12, 4);
	} else {
		ip->fam = 6;
		memcpy(ip->a, a, 16);
	}
}

bool oxs_ip_from_sockaddr(const struct sockaddr *sa, oxs_ip *ip)
{
	memset(ip, 0, sizeof(*ip));
	if (sa != NULL && sa->sa_family == AF_INET) {
		ip->fam = 4;
		memcpy(ip->a, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
		return true;
	}
	if (sa != NULL && sa->sa_family == AF_INET6) {
		from_v6(((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr.s6_addr, ip);
		return true;
	}
	return false;
}

bool oxs_ip_parse(const char *s, size_t n, oxs_ip *ip)
{
	char buf[INET6_ADDRSTRLEN + 1];
	while (n > 0 && (*s == ' ' || *s == '\t'))
		s++, n--;
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	if (n == 0 || n >= sizeof(buf))
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	unsigned char a[16];
	memset(ip, 0, sizeof(*ip));
	if (inet_pton(AF_INET, buf, a) == 1) {
		ip->fam = 4;
		memcpy(ip->a, a, 4);
		return true;
	}
	if (inet_pton(AF_INET6, buf, a) == 1) {
		from_v6(a, ip);
		return true;
	}
	return false;
}

bool oxs_cidrs_parse(const char *list, oxs_cidrs **out, char *err, size_t errsize)
{
	*out = NULL;
	if (list == NULL || list[0] == '\0')
		return true;
	size_t cap = 1;
	for (const char *p = list; *p; p++)
		cap += *p == ',';
	oxs_cidrs *l = calloc(1, sizeof(*l) + cap * sizeof(cidr));
	if (l == NULL) {
		snprintf(err, errsize, "out of memory");
		return false;
	}
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ","), an = n;
		const char *slash = memchr(p, '/', n);
		unsigned bits = 0;
		bool has_bits = slash != NULL;
		if (has_bits) {
			an = (size_t)(slash - p);
			char *end = NULL;
			unsigned long b = strtoul(slash + 1, &end, 10);
			if (end == slash + 1 || (size_t)(end - p) != n || b > 128)
				goto bad;
			bits = (unsigned)b;
		}
		cidr *c = &l->c[l->n];
		if (!oxs_ip_parse(p, an, &c->ip))
			goto bad;
		unsigned max = c->ip.fam == 4 ? 32 : 128;
		if (has_bits && bits > max)
			goto bad;
		c->bits = has_bits ? bits : max;
		l->n++;
		p += n + (p[n] == ',');
		continue;
	bad:
		snprintf(err, errsize, "--trusted-proxies: '%.*s' is not an address or CIDR block",
		         (int)(n > 64 ? 64 : n), p);
		free(l);
		return false;
	}
	*out = l;
	return true;
}

void oxs_cidrs_free(oxs_cidrs *l)
{
	free(l);
}

bool oxs_cidrs_match(const oxs_cidrs *l, const oxs_ip *ip)
{
	if (l == NULL || ip->fam == 0)
		return false;
	for (size_t i = 0; i < l->n; i++) {
		const cidr *c = &l->c[i];
		if (c->ip.fam != ip->fam)
			continue;
		unsigned full = c->bits / 8, rest = c->bits % 8;
		if (memcmp(c->ip.a, ip->a, full) != 0)
			continue;
		if (rest == 0)
			return true;
		unsigned char mask = (unsigned char)(0xffu << (8 - rest));
		if ((c->ip.a[full] & mask) == (ip->a[full] & mask))
			return true;
	}
	return false;
}

oxs_ip oxs_client_addr(const oxs_cidrs *trusted, const oxs_ip *peer, const char *xff)
{
	if (xff == NULL || !oxs_cidrs_match(trusted, peer))
		return *peer;
	/* right to left: each proxy appends the address it saw */
	size_t end = strlen(xff);
	while (end > 0) {
		size_t start = end;
		while (start > 0 && xff[start - 1] != ',')
			start--;
		oxs_ip ip;
		if (!oxs_ip_parse(xff + start, end - start, &ip))
			return *peer; /* unreadable: not believed, the proxy counts */
		if (!oxs_cidrs_match(trusted, &ip))
			return ip;
		end = start > 0 ? start - 1 : 0;
	}
	return *peer;
}

void oxs_client_of_ip(const oxs_ip *ip, oxs_client *out)
{
	memset(out, 0, sizeof(*out));
	if (ip->fam == 4) {
		out->k[0] = '4';
		memcpy(out->k + 1, ip->a, 4);
	} else if (ip->fam == 6) {
		out->k[0] = '6';
		memcpy(out->k + 1, ip->a, 8); /* the /64 */
	}
}

void oxs_client_of_token(const unsigned char md[32], oxs_client *out)
{
	memset(out, 0, sizeof(*out));
	out->k[0] = 't';
	memcpy(out->k + 1, md, 32);
}
