/*
 * host.c — the Host header check against DNS rebinding (docs/decisions.md 86).
 *
 * A server on the loopback address with no token trusts whoever can reach it: the
 * developer's own programs.  A web page the developer visits is not one of them, but it
 * can become one: its name (evil.example) is made to resolve to 127.0.0.1 after the page
 * has loaded, and the page's scripts then read http://evil.example:8080/models as a
 * same-origin request — the browser sends "Host: evil.example:8080".  So a server bound
 * to loopback answers only requests that name it by a loopback name (localhost, an
 * address) or by a name the operator listed (--allowed-hosts), as Jupyter does.  A server
 * bound to all addresses is meant to be reached by any name unless names are listed.  An
 * IP address in Host cannot be rebound (the page's origin would be that address itself).
 */
#include "service/host.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#define NAME_MAX_LEN 255

/* A loopback address: 127.0.0.0/8, ::1, ::ffff:127.0.0.0/104. */
static bool loopback(const char *ip)
{
	struct in_addr a4;
	struct in6_addr a6;
	if (inet_pton(AF_INET, ip, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, ip, &a6) == 1)
		return IN6_IS_ADDR_LOOPBACK(&a6) || (IN6_IS_ADDR_V4MAPPED(&a6) && a6.s6_addr[12] == 127);
	return false;
}

static bool is_ip(const char *s)
{
	unsigned char buf[sizeof(struct in6_addr)];
	return inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1;
}

/* Two numeric addresses that are the same address (text forms differ: ::1, 0::1). */
static bool same_ip(const char *a, const char *b)
{
	unsigned char x[sizeof(struct in6_addr)], y[sizeof(struct in6_addr)];
	if (inet_pton(AF_INET, a, x) == 1)
		return inet_pton(AF_INET, b, y) == 1 && memcmp(x, y, 4) == 0;
	if (inet_pton(AF_INET6, a, x) == 1)
		return inet_pton(AF_INET6, b, y) == 1 && memcmp(x, y, 16) == 0;
	return false;
}

/* The name of a Host value into out (lower case, brackets and port and one final dot
 * dropped); false when malformed. */
static bool host_name(const char *host, char out[NAME_MAX_LEN + 1])
{
	size_t n = strlen(host);
	const char *name = host, *port = NULL;
	size_t len;
	if (host[0] == '[') { /* [v6]:port */
		const char *close = strchr(host, ']');
		if (close == NULL)
			return false;
		name = host + 1;
		len = (size_t)(close - name);
		if (close[1] == ':')
			port = close + 2;
		else if (close[1] != '\0')
			return false;
	} else {
		const char *colon = strchr(host, ':');
		if (colon != NULL && strchr(colon + 1, ':') != NULL)
			return false; /* an IPv6 address must be in brackets */
		len = colon != NULL ? (size_t)(colon - host) : n;
		if (colon != NULL)
			port = colon + 1;
	}
	if (port != NULL && (port[0] == '\0' || strspn(port, "0123456789") != strlen(port) ||
	                     strlen(port) > 5))
		return false;
	if (len > 0 && name[len - 1] == '.')
		len--;
	if (len == 0 || len > NAME_MAX_LEN)
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];
		if (c <= 0x20 || c >= 0x7f || c == '/' || c == '@')
			return false;
		out[i] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
	}
	out[len] = '\0';
	return true;
}

/* name ends with the suffix s (".example.com") and has something before it. */
static bool under(const char *name, const char *s, size_t sn)
{
	size_t n = strlen(name);
	return n > sn && strncasecmp(name + n - sn, s, sn) == 0;
}

/* name is one of the comma-separated entries of list ("*" any). */
static bool listed(const char *list, const char *name)
{
	size_t nn = strlen(name);
	for (const char *p = list; *p != '\0';) {
		while (*p == ' ' || *p == ',')
			p++;
		size_t n = strcspn(p, ", ");
		if (n == 1 && p[0] == '*')
			return true;
		if (n > 1 && p[0] == '.' && under(name, p, n))
			return true;
		if (n > 0 && n == nn && strncasecmp(p, name, n) == 0)
			return true;
		p += n;
	}
	return false;
}

bool oxs_host_allowed(const char *host, const char *bind, const char *allowed)
{
	if (host == NULL)
		return true; /* HTTP/1.0 without Host: no browser sends that */
	char name[NAME_MAX_LEN + 1];
	if (!host_name(host, name))
		return false;
	bool ip = is_ip(name);
	if (strcmp(name, "localhost") == 0 || under(name, ".localhost", 10) ||
	    (ip && (loopback(name) || same_ip(name, bind))))
		return true;
	if (listed(allowed, name))
		return true;
	if (loopback(bind))
		return false;
	return ip || allowed[0] == '\0';
}
