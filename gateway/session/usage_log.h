/* gateway/session/usage_log.h: the usage of sessions that ended, so that
 * GET /v1/usage can bill them after they are gone: one JSON line each,
 * appended to $STATE_DIR/usage.jsonl as a session is destroyed (the file
 * outlives restarts, like the records beside it), and the newest
 * `retention` of them kept in memory. At start the file is read back (the
 * newest kept) and, when it holds over twice that many, rewritten with
 * them alone. Loop thread only. */
#ifndef VITRINE_GATEWAY_USAGE_LOG_H
#define VITRINE_GATEWAY_USAGE_LOG_H

#include <jansson.h>

#include <stddef.h>
#include <stdint.h>

#define USAGE_LOG_DEFAULT_RETENTION 10000

struct usage_log;

/* Opens dir/usage.jsonl (made when missing). NULL with err when it cannot. */
struct usage_log *usage_log_open(const char *dir, size_t retention, char *err, size_t errlen);
void usage_log_close(struct usage_log *l);
/* Adds one ended session's entry (stolen): {"id", ..., "ended_unix_ms",
 * "usage": {...}}. A failed write is logged; the entry stays in memory. */
void usage_log_add(struct usage_log *l, json_t *entry);
/* Appends to out (an array) the entries whose life [created_unix_ms,
 * ended_unix_ms] meets [from_ms, to_ms] (0: open), oldest first. */
void usage_log_select(const struct usage_log *l, int64_t from_ms, int64_t to_ms, json_t *out);

/* Whether an entry's life [created, ended] (ended 0: still running) meets
 * [from, to] (0: open ends). Pure. */
int usage_overlaps(int64_t created, int64_t ended, int64_t from, int64_t to);

#endif
