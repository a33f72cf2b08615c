/* common/log.h: one-line structured logs on stderr.
 *
 * Every log line is "LEVEL component: message". Low layers do not log; they
 * fill an error buffer and return a status, and the caller that decides what
 * to do about the failure logs it once. */
#ifndef VITRINE_COMMON_LOG_H
#define VITRINE_COMMON_LOG_H

enum log_level { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR };

/* Lines below this level are dropped. Reads VITRINE_LOG (debug|info|warn|error)
 * on first use; defaults to info. */
void log_set_level(enum log_level level);

void log_msg(enum log_level level, const char *component, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define log_debug(comp, ...) log_msg(LOG_DEBUG, comp, __VA_ARGS__)
#define log_info(comp, ...) log_msg(LOG_INFO, comp, __VA_ARGS__)
#define log_warn(comp, ...) log_msg(LOG_WARN, comp, __VA_ARGS__)
#define log_error(comp, ...) log_msg(LOG_ERROR, comp, __VA_ARGS__)

#endif
