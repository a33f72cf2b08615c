/* common/log.h: one-line structured logs on stderr.
 *
 * Every log line is "TIME LEVEL component: message" (TIME in RFC 3339, UTC,
 * with milliseconds), or with LOG_FORMAT_JSON one JSON object a line:
 * {"time", "level", "component", "msg"}. Low layers do not log; they
 * fill an error buffer and return a status, and the caller that decides what
 * to do about the failure logs it once. */
#ifndef VITRINE_COMMON_LOG_H
#define VITRINE_COMMON_LOG_H

enum log_level { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR };

/* Lines below this level are dropped. Reads VITRINE_LOG (debug|info|warn|error)
 * on first use; defaults to info. */
void log_set_level(enum log_level level);

enum log_format { LOG_FORMAT_TEXT, LOG_FORMAT_JSON };
/* Reads VITRINE_LOG_FORMAT (text|json) on first use; defaults to text. */
void log_set_format(enum log_format format);
/* "text" or "json" into *out: 0, or -1 for anything else. */
int log_format_parse(const char *s, enum log_format *out);

void log_msg(enum log_level level, const char *component, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define log_debug(comp, ...) log_msg(LOG_DEBUG, comp, __VA_ARGS__)
#define log_info(comp, ...) log_msg(LOG_INFO, comp, __VA_ARGS__)
#define log_warn(comp, ...) log_msg(LOG_WARN, comp, __VA_ARGS__)
#define log_error(comp, ...) log_msg(LOG_ERROR, comp, __VA_ARGS__)

#endif
