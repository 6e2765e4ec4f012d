/*
 * clock.h — the service's clocks (clock.c): monotonic milliseconds and nanoseconds, for
 * deadlines, timeouts and durations (never wall-clock time).
 */
#ifndef OXS_CLOCK_H
#define OXS_CLOCK_H

#include <stdint.h>

int64_t oxs_now_ms(void);
uint64_t oxs_now_ns(void);

#endif /* OXS_CLOCK_H */
