/* gateway/action/traj_log.h: a session's trajectory, what an RL or
 * evaluation pipeline replays (docs/trajectory.md): the agent's steps in
 * order, each with its action as received, the screen coordinates it
 * resolved to, its result and a screenshot, bounded by a count of steps
 * and of bytes (the oldest steps go first, and are counted); and the tar
 * archive of a snapshot of it (common/tar.h), read chunk by chunk.
 *
 * Pure: no session, no I/O, no clock (times are given). Loop thread only
 * (a log is one session's); an archive may be read on any one thread. */
#ifndef VITRINE_GATEWAY_TRAJ_LOG_H
#define VITRINE_GATEWAY_TRAJ_LOG_H

#include "display/encode.h"
#include "gateway/action/actions.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* An action body longer than this is not kept (its length is): parsing
 * and keeping a megabyte would cost the loop tens of ms a step, and no
 * action of any dialect is near it (actions.h's bounds). */
#define TRAJ_MAX_ACTION_BYTES (64u << 10)

enum traj_channel {
	TRAJ_HTTP, /* POST /v1/sessions/{id}/actions */
	TRAJ_CONTROL, /* a message of WS /v1/sessions/{id}/control */
};

/* A finished step's line, shared by the step and the archives that hold
 * it (loop thread: a plain count). */
struct traj_text {
	int refs;
	size_t len;
	char data[]; /* the line's JSON without its closing '}' (no NUL counted) */
};

/* One step. Made by traj_step_begin when the action arrives, owned by
 * whoever runs it until traj_log_add, then by the log. */
struct traj_step {
	struct traj_step *next; /* traj_log::head, oldest first */
	int64_t n; /* 1.. in the order the actions arrived */
	json_t *rec; /* owned while under way: the line's fields so far */
	struct traj_text *line; /* a reference once finished */
	size_t line_len; /* line->len */
	struct display_image *image; /* a reference, or NULL */
	bool image_from_action; /* else a screenshot fetched after the step */
	size_t bytes; /* what the step counts against the byte bound */
};

struct traj_log {
	struct traj_step *head, *tail; /* owned, finished steps by n */
	size_t n_steps;
	size_t bytes; /* of the steps held */
	int64_t next_n; /* the number the next action gets */
	int64_t dropped; /* steps let go past a bound */
	int in_flight; /* begun, not yet added */
	size_t max_steps; /* > 0 */
	size_t max_bytes;
};

/* An empty log with its bounds (max_steps > 0). Can't fail. */
void traj_log_init(struct traj_log *log, size_t max_steps, size_t max_bytes);
/* Frees every step held (their images' references go). */
void traj_log_clear(struct traj_log *log);

/* A new step for an action of text (len bytes, as received: kept as its
 * JSON when it is JSON, else as a string; past TRAJ_MAX_ACTION_BYTES only
 * its length) that arrived at received_ms
 * (Unix ms) over channel; it gets the log's next number. Returns the step
 * (counted in flight until traj_log_add or traj_log_abandon), or NULL when
 * out of memory. */
struct traj_step *traj_step_begin(struct traj_log *log, const char *text, size_t len,
				  enum traj_channel channel, int64_t received_ms);
/* Notes what the parsed action a resolved to: its dialect, name and
 * screen coordinates (point, path, region). Accepts a NULL step. */
void traj_step_parsed(struct traj_step *st, const struct action *a);
/* Ends st with status (200: ok) and result (stolen: the reply without its
 * screenshot's data, or the error's JSON) and image (a reference taken
 * here, may be NULL) at finished_ms, and adds it to the log, which may
 * drop its oldest steps (or st itself, past the byte bound) to keep its
 * bounds. Accepts a NULL step (result and image are then let go). */
void traj_log_add(struct traj_log *log, struct traj_step *st, int status, json_t *result,
		  struct display_image *image, int64_t finished_ms);
/* A step the log will never see (its log is gone): freed. Accepts NULL. */
void traj_step_free(struct traj_step *st);
/* A step begun on log that ends without being added. Accepts NULL. */
void traj_log_abandon(struct traj_log *log, struct traj_step *st);

/* A screenshot the agent fetched (GET .../screenshot): it becomes the
 * image of the latest step, when that step returned none and no later
 * action has arrived since; an earlier one fetched for it is replaced.
 * Takes its own reference. Returns whether it was taken. */
bool traj_log_observe(struct traj_log *log, struct display_image *image);

/* The reply of an action, without its screenshot's base64 "data": a new
 * object sharing everything else with reply; NULL when out of memory or
 * reply is NULL. */
json_t *traj_reply_without_image(json_t *reply);

/* The archive of a snapshot of log: meta.json, trajectory.jsonl,
 * images/NNNNNN.jpeg|png (docs/trajectory.md). It holds references to the
 * images and the lines, so the log may change or go meanwhile. It is made
 * and freed on the loop; read on any one thread. */
struct traj_archive;
/* For session id with a screen of width x height, at now_ms. NULL when
 * out of memory. */
struct traj_archive *traj_archive_new(const struct traj_log *log, const char *id, int width,
				      int height, int64_t now_ms);
uint64_t traj_archive_size(const struct traj_archive *a);
/* Up to cap bytes from off (tar_read). */
size_t traj_archive_read(void *a, uint64_t off, unsigned char *buf, size_t cap);
/* Accepts NULL. */
void traj_archive_free(void *a);

/* The image file name of step n in format ("images/000007.png"). */
void traj_image_name(int64_t n, enum display_format format, char *out, size_t size);

#endif
