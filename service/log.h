/*
 * log.h — request and event logs: one JSON line on stderr (log.c).
 */
#ifndef OXS_LOG_H
#define OXS_LOG_H

/* One JSON line on stderr: {"ts":..,"level":..,"msg":..} plus preformatted fields
 * (`extra` is either "" or starts with ',' and holds valid JSON members). */
void oxs_log(const char *level, const char *msg, const char *extra);
void oxs_logf(const char *level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif /* OXS_LOG_H */
