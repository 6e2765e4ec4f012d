/*
 * store.c — the front of the store: opening one by its location, status names, the hooks
 * through which it logs and counts requests, and small helpers its backends share.
 */
#include "store/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

bool oxst_location_is_s3(const char *location)
{
	return strncmp(location, "s3://", 5) == 0;
}

oxst_status oxst_open(oxst_store **out, const oxst_options *opt, char *err, size_t errsize)
{
	if (oxst_location_is_s3(opt->location)) {
		oxst_s3_options o = {.url = opt->location, .cache_dir = opt->cache_dir,
		                     .cache_budget = opt->budget, .timeout = opt->timeout,
		                     .part_size = opt->part_size, .envp = opt->envp};
		return oxst_s3_open(out, &o, err, errsize);
	}
	oxst_local_options o = {.budget = opt->budget, .evict_models = opt->evict_models,
	                        .verify = false, .verify_background = opt->verify_background};
	return oxst_local_open(out, opt->location, &o, err, errsize);
}

const char *oxst_status_name(oxst_status s)
{
	static const char *const names[] = {"ok", "not_found", "no_space", "io_error",
	                                    "invalid", "out_of_memory", "busy",
	                                    "unavailable", "again"};
	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "unknown";
}

static oxst_hooks hooks;

void oxst_set_hooks(const oxst_hooks *h)
{
	hooks = *h;
}

void oxst_log(const char *level, const char *msg, const char *extra)
{
	if (hooks.log != NULL)
		hooks.log(level, msg, extra);
}

void oxst_count_request(int op, uint64_t ns, int outcome)
{
	if (hooks.request != NULL)
		hooks.request(op, ns, outcome);
}

void oxst_hex(char *out, const unsigned char *bytes, size_t n)
{
	out[0] = '\0';
	for (size_t i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", bytes[i]);
}

uint64_t oxst_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int64_t oxst_now_ms(void)
{
	return (int64_t)(oxst_now_ns() / 1000000u);
}

char *oxst_read_all(int fd, uint64_t size)
{
	if (size > SIZE_MAX / 2)
		return NULL;
	char *data = malloc(size ? (size_t)size : 1);
	size_t got = 0;
	while (data != NULL && got < size) {
		ssize_t n = pread(fd, data + got, (size_t)size - got, (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (data != NULL && got != size) {
		free(data);
		data = NULL;
	}
	return data;
}
