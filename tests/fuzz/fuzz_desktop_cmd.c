/* tests/fuzz/fuzz_desktop_cmd.c: libFuzzer target for the @e2b/desktop
 * command recogniser (gateway/e2b/desktop_cmd.c), the untrusted side being
 * whoever calls Process.Start. The first byte picks the mode: even, the rest
 * is a shell line; odd, the rest is a text the SDK's write() would type.
 * Checked besides "no crash":
 *   - a recognised line's numbers are within their bounds, and a move, a
 *     click or a scroll written back in the SDK's form parses to the same;
 *   - a recognised type text is valid UTF-8 of its length without NUL, and
 *     written back through the SDK's own quoting (quoteString) it parses to
 *     exactly the same bytes;
 *   - every key chord recognised is one keys.h knows; scrot's path stays
 *     a file in /tmp; xdg-open's url has an allowed scheme;
 *   - text mode: any valid UTF-8 text without NUL, quoted as the SDK
 *     quotes it, is recognised as exactly that text, also when the line
 *     is wrapped once more in bash -l -c '...';
 *   - an input op's Vitrine action (desktop_cmd_action) is one actions_parse
 *     takes on the screen, a move on the pixel given (or the edge past it),
 *     a type with exactly the text. */
#include "gateway/action/keys.h"
#include "gateway/e2b/desktop_cmd.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct desktop_op op, again;
static char line[2 * DESKTOP_MAX_LINE + 64], quoted[DESKTOP_MAX_LINE + 64];

/* The same strictness as desktop_cmd.c's, written apart, and no NUL. */
static bool utf8_ok(const uint8_t *s, size_t len)
{
	for (size_t i = 0; i < len;) {
		uint32_t cp;
		size_t n;

		if (!s[i])
			return false;
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		if (s[i] >= 0xc2 && s[i] <= 0xdf)
			n = 1, cp = s[i] & 0x1f;
		else if (s[i] >= 0xe0 && s[i] <= 0xef)
			n = 2, cp = s[i] & 0x0f;
		else if (s[i] >= 0xf0 && s[i] <= 0xf4)
			n = 3, cp = s[i] & 0x07;
		else
			return false;
		if (len - i <= n)
			return false;
		for (size_t k = 1; k <= n; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += n + 1;
	}
	return true;
}

static void reparse(const char *fmt, int a, int b)
{
	int n = snprintf(line, sizeof(line), fmt, a, b);

	if (desktop_cmd_parse_line(line, (size_t)n, &again) != op.kind)
		__builtin_trap();
}

/* The SDK's write() line for text, parsed: must be exactly text. */
static void type_round_trip(const char *text, size_t len, bool wrap)
{
	int q = desktop_sdk_quote(text, len, quoted, sizeof(quoted));
	size_t n;

	if (q < 0)
		return;
	n = (size_t)snprintf(line, sizeof(line), "xdotool type --delay 75 -- %s", quoted);
	if (wrap) { /* bash -l -c '<line>' with each ' written '\'' */
		size_t o = 0;
		static char inner[sizeof(line)];

		memcpy(inner, line, n + 1);
		o += (size_t)snprintf(line, sizeof(line), "bash -l -c '");
		for (size_t i = 0; i < n && o + 8 < sizeof(line); i++) {
			if (inner[i] == '\'') {
				memcpy(line + o, "'\\''", 4);
				o += 4;
			} else {
				line[o++] = inner[i];
			}
		}
		line[o++] = '\'';
		line[o] = '\0';
		n = o;
	}
	if (n > DESKTOP_MAX_LINE)
		return;
	if (desktop_cmd_parse_line(line, n, &again) != DESKTOP_TYPE || again.text_len != len ||
	    memcmp(again.text, text, len))
		__builtin_trap();
}

/* An input op becomes a Vitrine action that actions_parse takes, on the
 * screen; a move lands on the pixel given, or the screen's edge past it. */
static void check_action(void)
{
	struct actions_ctx ctx = { .screen_width = 1280, .screen_height = 800 };
	struct actions_error err;
	struct action *a;
	json_t *j = desktop_cmd_action(&op, 1280, 800);

	if (!j)
		__builtin_trap();
	a = actions_parse(j, &ctx, &err);
	json_decref(j);
	if (!a)
		__builtin_trap();
	if (op.kind == DESKTOP_MOVE &&
	    (a->point.x != (op.x > 1279 ? 1279 : op.x) || a->point.y != (op.y > 799 ? 799 : op.y)))
		__builtin_trap();
	if (op.kind == DESKTOP_TYPE &&
	    (a->text_len != op.text_len || memcmp(a->text, op.text, op.text_len)))
		__builtin_trap();
	actions_destroy(a);
}

static void check(void)
{
	switch (op.kind) {
	case DESKTOP_MOVE:
		if (op.x < 0 || op.x > DESKTOP_MAX_COORD || op.y < 0 || op.y > DESKTOP_MAX_COORD)
			__builtin_trap();
		reparse("xdotool mousemove --sync %d %d", op.x, op.y);
		if (again.x != op.x || again.y != op.y)
			__builtin_trap();
		break;
	case DESKTOP_CLICK:
		if (op.button < 1 || op.button > 3 || op.count < 1 || op.count > 3)
			__builtin_trap();
		reparse("xdotool click --repeat %d %d", op.count, op.button);
		if (again.button != op.button || again.count != op.count)
			__builtin_trap();
		break;
	case DESKTOP_SCROLL:
		if (op.count < 1 || op.count > DESKTOP_MAX_REPEAT)
			__builtin_trap();
		reparse("xdotool click --repeat %d %d", op.count, op.scroll_up ? 4 : 5);
		if (again.count != op.count || again.scroll_up != op.scroll_up)
			__builtin_trap();
		break;
	case DESKTOP_MOUSE_DOWN:
	case DESKTOP_MOUSE_UP:
		if (op.button < 1 || op.button > 3)
			__builtin_trap();
		break;
	case DESKTOP_TYPE:
		if (op.text_len > DESKTOP_MAX_TEXT || strlen(op.text) != op.text_len ||
		    !utf8_ok((const uint8_t *)op.text, op.text_len))
			__builtin_trap();
		type_round_trip(op.text, op.text_len, false);
		break;
	case DESKTOP_KEY: {
		char keys[sizeof(op.keys)], err[64], *save = NULL;
		struct keys_chord c;

		memcpy(keys, op.keys, sizeof(keys));
		for (char *w = strtok_r(keys, " ", &save); w; w = strtok_r(NULL, " ", &save))
			if (keys_parse_chord(w, strlen(w), &c, err, sizeof(err)) < 0)
				__builtin_trap();
		break;
	}
	case DESKTOP_SCROT:
		if (strncmp(op.path, "/tmp/", 5) || strchr(op.path + 5, '/') || op.path[5] == '.' ||
		    strlen(op.path) > DESKTOP_MAX_PATH)
			__builtin_trap();
		break;
	case DESKTOP_XDG_OPEN:
		if (strncmp(op.url, "http://", 7) && strncmp(op.url, "https://", 8) &&
		    strncmp(op.url, "file://", 7) && strcmp(op.url, "about:blank"))
			__builtin_trap();
		break;
	case DESKTOP_XVFB:
		if (op.width < 1 || op.width > DESKTOP_MAX_COORD || op.height < 1 ||
		    op.height > DESKTOP_MAX_COORD || op.depth < 1 || op.depth > 32)
			__builtin_trap();
		break;
	case DESKTOP_X11VNC:
	case DESKTOP_NOVNC:
	case DESKTOP_NETSTAT:
		if (op.port < 1 || op.port > 65535)
			__builtin_trap();
		break;
	default:
		break;
	}
	switch (op.kind) {
	case DESKTOP_MOVE:
	case DESKTOP_CLICK:
	case DESKTOP_SCROLL:
	case DESKTOP_MOUSE_DOWN:
	case DESKTOP_MOUSE_UP:
	case DESKTOP_KEY:
		check_action();
		break;
	case DESKTOP_TYPE:
		if (op.text_len)
			check_action();
		break;
	default:
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	if (data[0] % 2 == 0) {
		if (desktop_cmd_parse_line((const char *)data + 1, size - 1, &op) != op.kind)
			__builtin_trap();
		check();
		return 0;
	}
	if (size - 1 <= DESKTOP_MAX_TEXT && utf8_ok(data + 1, size - 1)) {
		type_round_trip((const char *)data + 1, size - 1, false);
		type_round_trip((const char *)data + 1, size - 1, true);
	}
	return 0;
}
