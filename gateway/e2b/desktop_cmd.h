/* gateway/e2b/desktop_cmd.h: which desktop operation an @e2b/desktop shell
 * command is, so the gateway can serve it itself (desktop_serve.h) instead
 * of running xdotool, scrot and friends in the guest.
 *
 * The SDK (npm @e2b/desktop 2.3.2 and 2.4.0, dist/index.js) does all its
 * desktop work through envd's Process.Start as `/bin/bash -l -c LINE`
 * (e2b's commands.run). This file reads LINE with a strict subset of the
 * shell's rules and matches it against the exact forms the SDK builds
 * (docs/e2b-desktop.md lists them). A line with any other shell syntax
 * (`;`, `$`, backquotes, globs, other pipes or redirections, newlines) is
 * not recognised and runs in the guest as usual, as does every command the
 * SDK may send that the gateway has no better answer for (sleep, mkdir,
 * xdotool getwindowfocus/search/getwindowname).
 *
 * Words: blanks separate; 'single quotes' are literal; "double quotes" are
 * literal but for $, `, \ and ! (refused); an unquoted backslash quotes the
 * next byte (so the `'\''` idiom works, as does the SDK's `'"'"'`). Unquoted,
 * only [A-Za-z0-9_@%+=:,./-] and, where a form wants them, `?` (a URL's
 * query: a glob to bash that matches no file in practice) and a leading `~`
 * (x11vnc's password file) are taken.
 *
 * Pure: no I/O, no allocation but desktop_cmd_action's JSON. Any thread. */
#ifndef VITRINE_GATEWAY_E2B_DESKTOP_CMD_H
#define VITRINE_GATEWAY_E2B_DESKTOP_CMD_H

#include "gateway/action/actions.h"
#include "vmm-qemu/spec.h"

#include <stdbool.h>
#include <stddef.h>

#define DESKTOP_MAX_LINE 32768 /* longer lines are never the SDK's */
#define DESKTOP_MAX_TEXT ACTIONS_MAX_TEXT_BYTES /* xdotool type's text, UTF-8 bytes */
#define DESKTOP_MAX_COORD 65535 /* x, y, sizes; the session clamps to its screen */
#define DESKTOP_MAX_REPEAT ACTIONS_MAX_SCROLL_NOTCHES /* scroll --repeat */
#define DESKTOP_MAX_PATH 255 /* scrot's file */
#define DESKTOP_MAX_NAME 127 /* gtk-launch's app, a password, a display */

enum desktop_kind {
	DESKTOP_NONE = 0, /* not recognised: run it in the guest */
	DESKTOP_XVFB, /* display, width, height, depth, dpi */
	DESKTOP_XDPYINFO, /* display */
	DESKTOP_STARTXFCE4,
	DESKTOP_XFCE_PS, /* `ps aux | grep PID | ...`: pid (2.3.2, 2.4.0 startXfce4) */
	DESKTOP_XFCE_PGREP, /* 2.4.0: pgrep xfce4-session && xfwm4 && xfdesktop */
	DESKTOP_SCROT, /* path */
	DESKTOP_MOVE, /* x, y */
	DESKTOP_CLICK, /* button 1..3, count 1..3 */
	DESKTOP_SCROLL, /* scroll_up, count 1..DESKTOP_MAX_REPEAT (buttons 4, 5) */
	DESKTOP_MOUSE_DOWN, /* button 1..3 */
	DESKTOP_MOUSE_UP, /* button 1..3 */
	DESKTOP_TYPE, /* text, text_len; delay_ms (the SDK's, not followed) */
	DESKTOP_KEY, /* keys: xdotool key's chords joined by spaces, each known to keys.h */
	DESKTOP_XRANDR,
	DESKTOP_MOUSE_LOCATION, /* xdotool getmouselocation */
	DESKTOP_XDG_OPEN, /* url: http(s)://, file:// or about:blank, <= VMM_MAX_URL */
	DESKTOP_GTK_LAUNCH, /* name (".desktop" taken off), arg ("" for none) */
	DESKTOP_VNC_PGREP, /* pgrep -x x11vnc */
	DESKTOP_VNC_PKILL, /* pkill x11vnc */
	DESKTOP_X11VNC, /* display, port (rfbport), use_password, window ("" for none) */
	DESKTOP_X11VNC_PASSWD, /* name: the password (x11vnc -storepasswd) */
	DESKTOP_NOVNC, /* port (--listen), vnc_port (--vnc localhost:N) */
	DESKTOP_NETSTAT, /* port: netstat -tuln | grep ":PORT " */
};

struct desktop_op {
	enum desktop_kind kind;
	char display[16]; /* ":0" */
	int width, height, depth, dpi; /* XVFB */
	int x, y; /* MOVE: as given, 0..DESKTOP_MAX_COORD */
	int button; /* CLICK, MOUSE_*: 1 left, 2 middle, 3 right */
	int count; /* CLICK: clicks; SCROLL: notches */
	bool scroll_up; /* SCROLL: button 4 (up) or 5 (down) */
	int delay_ms; /* TYPE */
	int pid; /* XFCE_PS */
	int port, vnc_port; /* X11VNC, NOVNC, NETSTAT */
	bool use_password; /* X11VNC: -usepw */
	char window[24]; /* X11VNC: -id, digits or 0x-hex */
	char text[DESKTOP_MAX_TEXT + 1]; /* TYPE: valid UTF-8, no NUL */
	size_t text_len;
	char keys[256]; /* KEY */
	char path[DESKTOP_MAX_PATH + 1]; /* SCROT: /tmp/NAME.png */
	char url[VMM_MAX_URL + 1]; /* XDG_OPEN */
	char name[DESKTOP_MAX_NAME + 1]; /* GTK_LAUNCH, X11VNC_PASSWD */
	char arg[VMM_MAX_URL + 1]; /* GTK_LAUNCH */
};

/* One shell line, as `bash -c` gets it (len bytes, need not be
 * NUL-terminated; a NUL byte in it is not recognised). A line that is
 * itself `bash -l -c 'LINE'` (or /bin/bash, -c alone) is unwrapped once.
 * Fills *op and returns its kind; DESKTOP_NONE when not recognised (then
 * *op holds nothing of use). Can't fail otherwise. */
enum desktop_kind desktop_cmd_parse_line(const char *line, size_t len, struct desktop_op *op);

/* The command as Process.Start receives it: cmd ("/bin/bash" or "bash")
 * and its nargs args, `-l -c LINE` or `-c LINE`. Anything else is
 * DESKTOP_NONE. As desktop_cmd_parse_line otherwise. */
enum desktop_kind desktop_cmd_parse_argv(const char *cmd, const char *const *args, size_t nargs,
					 struct desktop_op *op);

/* Whether kind sends input to the guest (a move, click, scroll, button,
 * typing or keys): those wait their turn while a person holds the live
 * view's control, as the native actions do. */
bool desktop_kind_is_input(enum desktop_kind kind);

/* The Vitrine action (its own dialect, for actions_parse) that does what
 * an input op (MOVE, CLICK, SCROLL, MOUSE_DOWN, MOUSE_UP, TYPE, KEY) asks,
 * on a screen_w x screen_h screen: a move is clamped to the screen as
 * xdotool clamps; clicks, scrolls and presses happen where the pointer is.
 * Returns a new reference; NULL for any other kind, or out of memory. */
json_t *desktop_cmd_action(const struct desktop_op *op, int screen_w, int screen_h);

/* What the desktop's tools print, for the SDK's parsers. Each writes a
 * NUL-terminated text into buf and returns its length, or -ENOSPC when it
 * does not fit (256 bytes always do). */
/* xrandr on an Xvfb screen of w x h: getScreenSize() takes its first WxH. */
int desktop_fmt_xrandr(int w, int h, char *buf, size_t len);
/* xdotool getmouselocation: "x:X y:Y screen:0 window:W\n". */
int desktop_fmt_mouse_location(int x, int y, char *buf, size_t len);

/* The password of an X11VNC_PASSWD op, wherever it stands in the strings
 * of config's "cmd" and "args" (the SDK's `/bin/bash -l -c LINE`), is
 * replaced by "********" in place: config is what List shows and what the
 * audit log and recordings note of the command. Pure. 0, or -ENOMEM. */
int desktop_redact_secret(json_t *config, const char *secret);

/* The SDK's own quoting of a word (quoteString in dist/index.js): "''" for
 * empty, s itself when it holds only [A-Za-z0-9_@%+=:,./-], else
 * 'quoted' with each ' written '"'"'. Returns the length written (NUL
 * added) or -ENOSPC. For tests and the fuzz target: what a recognised type
 * text must round-trip through. */
int desktop_sdk_quote(const char *s, size_t len, char *buf, size_t buflen);

#endif
