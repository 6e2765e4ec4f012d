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
	/* the message as a JSON string; too long once escaped: its first bytes (an escape
	 * takes at most 6, so those always fit); no memory to escape it: a fixed string —
	 * every line stays one valid JSON object */
	size_t room = sizeof(line) - (size_t)n - 64, ml = strlen(msg);
	oxr_buf b;
	oxr_buf_init(&b, room);
	if (!oxr_json_string(&b, msg, ml) && ml > (room - 2) / 6) {
		oxr_buf_free(&b);
		oxr_json_string(&b, msg, (room - 2) / 6);
	}
	static const char nomem[] = "\"(not written: out of memory)\"";
	const char *text = b.failed ? nomem : b.data;
	size_t tl = b.failed ? sizeof(nomem) - 1 : b.len;
	memcpy(line + n, text, tl);
	n += (int)tl;
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
