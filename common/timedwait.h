/* common/timedwait.h: condition variables on the monotonic clock, for the
 * threads that wait with a deadline (the agent link, its commands, the
 * session's agent connector): a wall-clock jump must not cut or stretch a
 * wait. */
#ifndef VITRINE_COMMON_TIMEDWAIT_H
#define VITRINE_COMMON_TIMEDWAIT_H

#include <pthread.h>
#include <time.h>

/* Initialises c to time its waits on CLOCK_MONOTONIC. */
void timedwait_cond_init(pthread_cond_t *c);
/* The CLOCK_MONOTONIC time ms milliseconds from now, for
 * pthread_cond_timedwait on such a condition. */
struct timespec timedwait_deadline(int ms);

#endif
