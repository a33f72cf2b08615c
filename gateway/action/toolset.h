/* gateway/action/toolset.h: Claude's computer toolset (computer_toolset_20260801)
 * in the Anthropic dialect: member-named calls, a turn of them, the image
 * limits screenshots are scaled to, and the tool_result blocks that answer
 * them. Pure: no I/O, so every rule is unit-tested and fuzzed.
 *
 * The toolset is one tools[] entry offering 17 member tools. The model calls
 * a member by name, with its input and no "action" field:
 *   {"type": "tool_use", "id": "toolu_1", "name": "left_click",
 *    "toolset_name": "computer", "input": {"coordinate": [320, 200]}}
 * The entry takes no display size: coordinates are pixels of the full
 * screenshot the application returned, which it scaled to the model's image
 * limits; the application maps them back to the display, answers
 * cursor_position in screenshot pixels, captures zoom at display resolution,
 * and keeps the capture size fixed for the session (the SDKs' contract:
 * anthropic-sdk-python computer-toolset.md).
 *
 * A body is a toolset turn when it is
 *   - one tool_use block ("type": "tool_use") or its "name" and "input";
 *   - {"actions": [...]} whose elements are such blocks, in turn order;
 *   - an assistant message or its "content" ({"content": [...]}): its
 *     tool_use blocks of the computer toolset (toolset_name "computer", or
 *     none and a member's name), other blocks skipped.
 * Beside them a turn may carry:
 *   "id"           string or integer, echoed
 *   "tool"         the tools[] entry ({"type": TOOLSET_TYPE, "configs":
 *                  {member: {"enabled": bool}}}); or "tools", the request's
 *                  list, whose toolset entry is taken. Members with
 *                  "enabled": false are refused like an unknown action.
 *   "image_limits" {"max_long_edge", "max_visual_tokens"}: the model's image
 *                  limits (default TOOLSET_DEFAULT_*), settable per session
 *                  until its capture size is fixed
 *   "screenshot"   options {format, quality} for the images of the turn
 *
 * A turn runs in order and stops at its first failure; each later call is
 * answered with an error result of the fixed words TOOLSET_NOT_EXECUTED. */
#ifndef VITRINE_GATEWAY_TOOLSET_H
#define VITRINE_GATEWAY_TOOLSET_H

#include "gateway/action/actions.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TOOLSET_TYPE "computer_toolset_20260801"
#define TOOLSET_NAME "computer"
#define TOOLSET_NOT_EXECUTED "Not executed: an earlier computer action in this turn failed."

/* The image limits of the models that take the toolset (Claude Opus 4.7
 * and later: 2576 pixels on the long edge, 4784 visual tokens, a token
 * being a 28x28 patch, each side rounded up to whole patches). */
#define TOOLSET_DEFAULT_LONG_EDGE 2576
#define TOOLSET_DEFAULT_VISUAL_TOKENS 4784
#define TOOLSET_PATCH 28
#define TOOLSET_MAX_LONG_EDGE 16384
#define TOOLSET_MAX_VISUAL_TOKENS 1000000
#define TOOLSET_N_MEMBERS 17
#define TOOLSET_MAX_CALLS 64 /* calls in one turn: a batch's bound (batch.h) */

struct toolset_limits {
	int long_edge; /* 1..TOOLSET_MAX_LONG_EDGE */
	int visual_tokens; /* 1..TOOLSET_MAX_VISUAL_TOKENS */
};

/* One member call of a turn. */
struct toolset_call {
	json_t *id; /* owned reference: the tool_use's "id", NULL when absent */
	int member; /* index into the member table: toolset_member_name() */
	json_t *input; /* owned reference, an object */
};

struct toolset_turn {
	struct toolset_call *calls; /* owned, n of them, in turn order */
	size_t n;
	uint32_t disabled; /* bit per member: the entry given turns it off */
	bool has_entry; /* "tool"/"tools" was given: disabled is its word */
	bool has_limits;
	struct toolset_limits limits; /* when has_limits */
};

/* Where a turn's coordinates live: the fixed capture size and the limits. */
struct toolset_frame {
	struct toolset_limits limits;
	int shot_w, shot_h; /* the full screenshot's size, fixed for the session */
	int screen_w, screen_h; /* the display it was fixed against */
};

/* The default limits. */
struct toolset_limits toolset_default_limits(void);

/* A member's name ("left_click"), NULL past the table; its index by name,
 * -1 when name is no member. */
const char *toolset_member_name(int member);
int toolset_member_index(const char *name);

/* Whether obj (a request body, borrowed) is a toolset turn (the forms above). */
bool toolset_is_turn(const json_t *obj);

/* Parses a toolset turn. Returns the turn (toolset_turn_destroy), or NULL
 * with *err (and *index: the call refused, -1 for the turn itself). An
 * element that is no computer call, an unknown member and a bad entry or
 * limit refuse the turn whole; member inputs are checked later, in order,
 * by toolset_call_parse. */
struct toolset_turn *toolset_parse_turn(const json_t *obj, struct actions_error *err, long *index);

void toolset_turn_destroy(struct toolset_turn *t);

/* The largest size, aspect ratio kept and never larger than w x h, that
 * fits lim (long edge, and ceil(w/28) * ceil(h/28) visual tokens), as
 * display_scale_fit (display/encode.h) makes it from the encoder limits
 * *enc_w x *enc_h (one of them 0), which are what to ask the encoder for.
 * Sizes must be positive. */
void toolset_fit(int w, int h, const struct toolset_limits *lim, int *out_w, int *out_h, int *enc_w,
		 int *enc_h);

/* The frame of a session whose screen is screen_w x screen_h, under lim. */
void toolset_frame_init(struct toolset_frame *f, int screen_w, int screen_h,
			const struct toolset_limits *lim);

/* What a frame's screenshots are asked of the encoder (one side 0). */
void toolset_frame_encode_size(const struct toolset_frame *f, int *enc_w, int *enc_h);

/* A screen pixel (x, y) of a screen_w x screen_h screen in the frame's
 * screenshot pixels: the inverse of actions_map_point, rounded, clamped
 * into the screenshot. */
void toolset_to_shot(const struct toolset_frame *f, int screen_w, int screen_h, int x, int y,
		     int *sx, int *sy);

/* Parses call c's input as its member against ctx (whose default_space is
 * the frame's screenshot). disabled: members refused (bits). Returns the
 * action (actions_destroy) or NULL with *err. */
struct action *toolset_call_parse(const struct toolset_call *c, const struct actions_ctx *ctx,
				  uint32_t disabled, struct actions_error *err);

/* tool_result blocks (new references, NULL when out of memory):
 * a pure action's fixed acknowledgment ("Clicked.", "Scrolled down."), */
json_t *toolset_result_ack(const struct toolset_call *c);
/* cursor_position's "X=x,Y=y", */
json_t *toolset_result_point(const struct toolset_call *c, int x, int y);
/* an image (base64 data, "image/png" or "image/jpeg"; data is stolen), */
json_t *toolset_result_image(const struct toolset_call *c, json_t *data, const char *media_type);
/* an error result with text (is_error). */
json_t *toolset_result_error(const struct toolset_call *c, const char *text);

/* The answers of turn t stopped at call index: done (borrowed, the results
 * of calls 0..index-1; NULL: none), call index's error result with msg,
 * and TOOLSET_NOT_EXECUTED for every later call. A new array, NULL when
 * out of memory. */
json_t *toolset_results_stopped(const struct toolset_turn *t, const json_t *done, size_t index,
				const char *msg);

#endif
