/* gateway/action/actions.h: one agent action (a JSON object) -> a validated,
 * normalized struct action, in three dialects.
 *
 * Agents send what their model emitted, verbatim: Anthropic computer-use tool
 * inputs (computer_20250124 / computer_20251124), OpenAI computer-use actions,
 * or Vitrine's own dialect (which also takes E2B Desktop names). Parsing them
 * all into one struct keeps the planner (plan.h) and everything after it
 * dialect-free, and keeps every validation rule in one pure, unit-tested and
 * fuzzable place. No I/O happens here.
 *
 * Dialect: the "dialect" field ("anthropic", "openai", "vitrine"), or by shape
 * when absent: a string "action" naming only a Vitrine action is Vitrine; one
 * naming an Anthropic action is Anthropic, unless the name is Vitrine's too and
 * a field only Vitrine has is present (x, y, dx, dy, direction, amount, keys,
 * modifiers, duration_ms, path, from, to, button, count); a string "type"
 * (without "action") is OpenAI.
 *
 * Fields every dialect accepts:
 *   "id":       string or integer, kept for the caller to echo back
 *   "screenshot": true/false, or an object of screenshot options (kept as
 *               given, for the caller): reply with the settled screenshot
 *   "coordinate_space": "screen" (default) or "screenshot"; with
 *               "screenshot", "screenshot_width" and "screenshot_height" give
 *               the size of the scaled screenshot the agent saw, and every
 *               coordinate is mapped to screen pixels (actions_map_point)
 * A null value counts as an absent field (SDKs serialize unset fields as
 * null). Vendor dialects ignore fields they do not know, so newer vendor
 * inputs still parse; the Vitrine dialect rejects them.
 *
 * Claude's computer toolset (computer_toolset_20260801) names its calls
 * after these Anthropic actions, with their fields and no "action":
 * toolset.h turns each into one, in the session's screenshot space.
 *
 * Anthropic (computer_20250124, computer_20251124), coordinates [x, y]:
 *   key {text: xdotool keys, "ctrl+a Delete"; repeat: 1..100}
 *   hold_key {text, duration: seconds}   type {text}   mouse_move {coordinate}
 *   left_click right_click middle_click double_click triple_click
 *       {coordinate?; text or key: modifiers held, "shift", "ctrl+shift"}
 *   left_mouse_down left_mouse_up {coordinate?}
 *   left_click_drag {start_coordinate?, coordinate; text/key modifiers}
 *   scroll {coordinate?, scroll_direction up|down|left|right,
 *           scroll_amount (default 3), text: modifiers}
 *   wait {duration: seconds, default 1}   screenshot   cursor_position
 *   zoom {region: [x0, y0, x1, y1]}
 * OpenAI computer-use, coordinates x, y; "keys" (optional) = modifiers held:
 *   click {x, y, button: left|right|wheel|back|forward}  double_click {x, y}
 *   scroll {x, y, scroll_x, scroll_y: pixels}  type {text}
 *   keypress {keys: [...] pressed as one chord}  move {x, y}
 *   drag {path: [{x, y}, ...]}  wait (1 s)  screenshot
 * Vitrine (E2B names in brackets), points as x, y or coordinate [x, y]:
 *   click [left_click right_click middle_click double_click triple_click]
 *       {x?, y?, button: left|middle|right|back|forward, count: 1..3,
 *        modifiers: "ctrl+shift" or ["ctrl", "shift"]}
 *   mouse_down mouse_up {x?, y?, button, modifiers}
 *   move [move_mouse, mouse_move] {x, y, modifiers}
 *   drag {path: [[x, y] or {x, y}, ...] (2 or more), button, modifiers}
 *   scroll {x?, y?, dx, dy: notches, +dy down, +dx right} or
 *          {direction: up|down|left|right, amount (default 1)}, modifiers
 *   type [write] {text}
 *   key [press] {keys: "ctrl+a Delete" (xdotool syntax) or ["ctrl", "a"]
 *               (one chord, as E2B's press and OpenAI's keypress); repeat}
 *   hold_key {keys, duration_ms}   wait {duration_ms}
 *   screenshot   cursor_position   zoom {region: [x0, y0, x1, y1]}
 */
#ifndef VITRINE_GATEWAY_ACTIONS_H
#define VITRINE_GATEWAY_ACTIONS_H

#include "gateway/action/keys.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Bounds. Longer text goes through several actions; long waits through
 * several waits (a session's control channel stays responsive). */
#define ACTIONS_MAX_TEXT_BYTES 8192 /* "text" of type, in UTF-8 bytes */
#define ACTIONS_MAX_DURATION_MS 100000 /* wait, hold_key: 100 s */
#define ACTIONS_MAX_SCROLL_NOTCHES 100 /* per axis, one action */
#define ACTIONS_SCROLL_PX_PER_NOTCH 100 /* OpenAI scroll pixels per wheel notch */
#define ACTIONS_MAX_PATH 1024 /* drag path points */
#define ACTIONS_MAX_CHORDS 32 /* chords in one key action */
#define ACTIONS_MAX_REPEAT 100 /* key "repeat" */
#define ACTIONS_MAX_SCREENSHOT_DIM 16384 /* screenshot_width/height */

enum actions_dialect {
	ACTIONS_DIALECT_ANTHROPIC,
	ACTIONS_DIALECT_OPENAI,
	ACTIONS_DIALECT_VITRINE,
};

/* Stable machine codes, sent to clients as {"error":{"code": ...}}. */
enum actions_errc {
	ACTIONS_OK = 0,
	ACTIONS_E_INVALID_ARGUMENT, /* "invalid_argument": wrong type or shape, field not allowed */
	ACTIONS_E_MISSING_FIELD, /* "missing_field" */
	ACTIONS_E_UNKNOWN_ACTION, /* "unknown_action" */
	ACTIONS_E_UNKNOWN_DIALECT, /* "unknown_dialect" */
	ACTIONS_E_UNKNOWN_KEY, /* "unknown_key" */
	ACTIONS_E_OUT_OF_RANGE, /* "out_of_range": coordinates, durations, amounts, sizes */
	ACTIONS_E_TOO_LONG, /* "too_long": text, path, key sequence over its bound */
	ACTIONS_E_NO_MEMORY, /* "no_memory" */
};

struct actions_error {
	enum actions_errc code;
	char field[48]; /* the offending field ("coordinate", "text", ...), or "" */
	char message[256]; /* for people; names the field */
};

/* The stable name of a code ("invalid_argument", ...). Never NULL. */
const char *actions_errc_name(enum actions_errc code);

/* Fills *err (field may be NULL); the texts are cut to fit and made valid
 * UTF-8. Returns -1, for parsers that fail with it. */
int actions_fail(struct actions_error *err, enum actions_errc code, const char *field,
		 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

enum action_kind {
	ACTION_KEY, /* chords[0..n_chords) pressed one after another, repeat times */
	ACTION_HOLD_KEY, /* chords[0] held for duration_ms */
	ACTION_TYPE, /* text */
	ACTION_MOVE, /* pointer to point */
	ACTION_CLICK, /* button clicked count times, at point if has_point */
	ACTION_MOUSE_DOWN, /* button pressed, at point if has_point */
	ACTION_MOUSE_UP, /* button released, at point if has_point */
	ACTION_DRAG, /* button held along path (from the pointer when drag_from_pointer) */
	ACTION_SCROLL, /* scroll_dx, scroll_dy notches, at point if has_point */
	ACTION_WAIT, /* duration_ms */
	ACTION_SCREENSHOT,
	ACTION_CURSOR_POSITION,
	ACTION_ZOOM, /* region */
};

enum action_button {
	ACTION_BUTTON_LEFT,
	ACTION_BUTTON_MIDDLE,
	ACTION_BUTTON_RIGHT,
	ACTION_BUTTON_BACK,
	ACTION_BUTTON_FORWARD,
};

enum actions_coord_space {
	ACTIONS_SPACE_SCREEN,
	ACTIONS_SPACE_SCREENSHOT,
};

struct action_point {
	int x, y;
};

/* A rectangle of screen pixels: x, y is its top-left pixel. */
struct action_rect {
	int x, y, w, h;
};

/* The coordinate space coordinates are given in. */
struct actions_space {
	enum actions_coord_space kind;
	int width, height; /* ACTIONS_SPACE_SCREENSHOT: the screenshot's size */
};

/* What a parse needs to know about the session. */
struct actions_ctx {
	int screen_width, screen_height; /* guest screen, pixels; > 0 */
	/* Space used when an action declares none (e.g. the session's screenshots
	 * are always scaled to one size). Zeroed = screen pixels. */
	struct actions_space default_space;
	/* The session's keyboard layout (vmm-qemu/keymap.h; NULL: US): what key
	 * names and typed characters mean. Outlives the action (never freed). */
	const struct vmm_keymap *keymap;
};

/* A validated action. Every coordinate is in screen pixels, inside the screen. */
struct action {
	enum actions_dialect dialect;
	enum action_kind kind;
	char name[24]; /* the action's name as sent ("left_click"), for logs */
	json_t *id; /* owned reference, NULL when absent */
	bool want_screenshot;
	json_t *screenshot_opts; /* owned reference, object, NULL when absent */

	bool has_point;
	struct action_point point; /* MOVE, CLICK, MOUSE_*, SCROLL */
	enum action_button button; /* CLICK, MOUSE_*, DRAG */
	int click_count; /* CLICK: 1..3 */
	struct keys_chord modifiers; /* held during CLICK, MOUSE_*, MOVE, DRAG, SCROLL */

	struct keys_chord chords[ACTIONS_MAX_CHORDS]; /* KEY, HOLD_KEY */
	size_t n_chords;
	int repeat; /* KEY: 1..ACTIONS_MAX_REPEAT */
	char *text; /* owned, NUL-terminated UTF-8 without NUL bytes: TYPE */
	size_t text_len;
	int scroll_dx, scroll_dy; /* SCROLL: notches, +x right, +y down */
	int duration_ms; /* WAIT, HOLD_KEY */
	struct action_point *path; /* owned, DRAG: path_len >= 2 (>= 1 from the pointer) */
	size_t path_len;
	bool drag_from_pointer; /* DRAG: press where the pointer is, then follow path */
	struct action_rect region; /* ZOOM */
	const struct vmm_keymap *keymap; /* the ctx's: TYPE's keys come from it */
};

/* Parses and validates one action object against ctx. Returns a new action
 * (free with actions_destroy), or NULL with *err filled: bad input of any
 * kind, or ACTIONS_E_NO_MEMORY. obj is only borrowed. */
struct action *actions_parse(const json_t *obj, const struct actions_ctx *ctx,
			     struct actions_error *err);

/* Frees an action and everything it owns. Accepts NULL. */
void actions_destroy(struct action *a);

/* Maps point (x, y) of space to a pixel of a screen_w x screen_h screen.
 * Screen space is the identity. Screenshot space maps the end points of each
 * axis onto each other: X = round(x * (screen_w - 1) / (width - 1)), halves
 * rounded up, in exact integer arithmetic (a 1-pixel axis maps to the screen's
 * middle pixel). So corners map to corners, and for a screenshot no larger
 * than the screen every screenshot pixel lands on a screen pixel inside the
 * area that screenshot pixel shows. Returns 0, or -ERANGE when (x, y) is
 * outside the space, or -EINVAL when a size is not positive. */
int actions_map_point(const struct actions_space *space, int screen_w, int screen_h, int x, int y,
		      struct action_point *out);

#endif
