/*
 * log.c — the JSON log lines on stderr (log.h): one object per line, written with a
 * single write() so lines from several threads never interleave.
 */
#include "service/log.h"
#include "render/oxr.h" /* oxr_json_string */

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void oxs_log(const char *level, const char *msg, const char *extra)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct tm tm;
	gmtime_r(&ts.tv_sec, &tm);
	char line[2048];
	int n = snprintf(line, sizeof(line),
	                 "{\"ts\":\"%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ\",\"level\":\"%s\",\"msg\":",
	                 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
	                 tm.tm_sec, ts.tv_nsec / 1000000, level);
	if (n < 0 || (size_t)n >= sizeof(line))
		return;
	oxr_buf b;
	oxr_buf_init(&b, sizeof(line) - (size_t)n - 64);
	oxr_json_string(&b, msg, strlen(msg));
	if (!b.failed) {
		memcpy(line + n, b.data, b.len);
		n += (int)b.len;
	}
	oxr_buf_free(&b);
	size_t el = strlen(extra);
	if (el < sizeof(line) - (size_t)n - 3) {
		memcpy(line + n, extra, el);
		n += (int)el;
	}
	line[n++] = '}';
	line[n++] = '\n';
	ssize_t w = write(STDERR_FILENO, line, (size_t)n);
	(void)w;
}

void oxs_logf(const char *level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	oxs_log(level, msg, "");
}
