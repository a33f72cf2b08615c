/* gateway/e2b/desktop_cmd.c: see desktop_cmd.h. A line is cut into words
 * and operators by the strict shell subset, then matched against each form
 * the SDK sends, word for word. */
#include "gateway/e2b/desktop_cmd.h"

#include "common/bytebuf.h"
#include "gateway/action/keys.h"
#include "vmm-qemu/guest_prep.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define MAX_TOKENS 48

struct tok {
	bool op; /* an operator: |, &&, >, 2>, 2>& */
	bool glob; /* holds an unquoted '?' */
	bool tilde; /* begins with an unquoted '~' */
	bool digits; /* unquoted and all digits (a redirection's fd, when next to one) */
	size_t off, len; /* text in words::buf, NUL-terminated */
	size_t end; /* where it ends in the line */
};

struct words {
	struct tok t[MAX_TOKENS];
	size_t n;
	char buf[DESKTOP_MAX_LINE + MAX_TOKENS + 8];
	size_t used;
};

static bool is_op_byte(char c)
{
	return c == '|' || c == '&' || c == '<' || c == '>';
}

/* What the SDK's quoteString leaves unquoted: JavaScript's \w (ASCII) and
 * @%+=:,./- */
static bool safe_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("_@%+=:,./-", c));
}

/* Strict UTF-8: no overlong forms, no surrogates, nothing past U+10FFFF. */
static bool utf8_valid(const unsigned char *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		unsigned char c = s[i];
		size_t n;
		uint32_t cp, min;

		if (c < 0x80) {
			i++;
			continue;
		}
		if ((c & 0xe0) == 0xc0)
			n = 1, cp = c & 0x1f, min = 0x80;
		else if ((c & 0xf0) == 0xe0)
			n = 2, cp = c & 0x0f, min = 0x800;
		else if ((c & 0xf8) == 0xf0)
			n = 3, cp = c & 0x07, min = 0x10000;
		else
			return false;
		if (len - i <= n)
			return false;
		for (size_t k = 1; k <= n; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += n + 1;
	}
	return true;
}

static int push(struct words *w, const struct tok *t)
{
	if (w->n == MAX_TOKENS)
		return -1;
	w->t[w->n++] = *t;
	w->buf[w->used++] = '\0';
	return 0;
}

static bool op_allowed(const char *s, size_t len)
{
	static const char *const ok[] = { "|", "&&", ">", "2>", "2>&" };

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (strlen(ok[i]) == len && !memcmp(ok[i], s, len))
			return true;
	return false;
}

/* An operator at line[*i]: a run of |&<> bytes, with the fd of a word of
 * digits right before it folded in ("2>"). */
static int lex_op(const char *line, size_t len, size_t *i, struct words *w)
{
	struct tok t = { .op = true };
	size_t start = *i;

	while (*i < len && is_op_byte(line[*i]))
		(*i)++;
	if (w->n && w->t[w->n - 1].digits && w->t[w->n - 1].end == start &&
	    (line[start] == '<' || line[start] == '>')) {
		t = w->t[--w->n]; /* its text stays where it is in buf; the NUL goes */
		w->used--;
		t.op = true;
		t.digits = false;
	} else {
		t.off = w->used;
	}
	memcpy(w->buf + w->used, line + start, *i - start);
	w->used += *i - start;
	t.len = w->used - t.off;
	t.end = *i;
	if (!op_allowed(w->buf + t.off, t.len))
		return -1;
	return push(w, &t);
}

static int lex_word(const char *line, size_t len, size_t *i, struct words *w)
{
	struct tok t = { .off = w->used };
	size_t start = *i;
	bool quoted = false;

	while (*i < len) {
		char c = line[*i];

		if (c == ' ' || c == '\t' || is_op_byte(c))
			break;
		if (c == '\'') {
			const char *q = memchr(line + *i + 1, '\'', len - *i - 1);

			if (!q)
				return -1;
			memcpy(w->buf + w->used, line + *i + 1, (size_t)(q - line) - *i - 1);
			w->used += (size_t)(q - line) - *i - 1;
			*i = (size_t)(q - line) + 1;
			quoted = true;
			continue;
		}
		if (c == '"') {
			for ((*i)++; *i < len && line[*i] != '"'; (*i)++) {
				if (strchr("$`\\!", line[*i]))
					return -1;
				w->buf[w->used++] = line[*i];
			}
			if (*i == len)
				return -1;
			(*i)++;
			quoted = true;
			continue;
		}
		if (c == '\\') {
			if (*i + 1 == len || line[*i + 1] == '\n')
				return -1;
			w->buf[w->used++] = line[*i + 1];
			*i += 2;
			quoted = true;
			continue;
		}
		if (c == '?')
			t.glob = true;
		else if (c == '~' && *i == start)
			t.tilde = true;
		else if (!safe_byte((unsigned char)c))
			return -1;
		w->buf[w->used++] = c;
		(*i)++;
	}
	t.len = w->used - t.off;
	t.end = *i;
	t.digits = !quoted && t.len > 0 && !t.glob && !t.tilde;
	for (size_t k = 0; t.digits && k < t.len; k++)
		t.digits = w->buf[t.off + k] >= '0' && w->buf[t.off + k] <= '9';
	return push(w, &t);
}

/* Cuts line into w; -1 when it holds anything outside the subset. */
static int lex(const char *line, size_t len, struct words *w)
{
	size_t i = 0;

	w->n = 0;
	w->used = 0;
	if (len > DESKTOP_MAX_LINE || memchr(line, '\0', len))
		return -1;
	while (i < len) {
		if (line[i] == ' ' || line[i] == '\t')
			i++;
		else if ((is_op_byte(line[i]) ? lex_op(line, len, &i, w)
					      : lex_word(line, len, &i, w)) < 0)
			return -1;
	}
	return utf8_valid((const unsigned char *)w->buf, w->used) ? 0 : -1;
}

static const char *text(const struct words *w, size_t i)
{
	return w->buf + w->t[i].off;
}

/* Word i: no operator, no glob, no tilde. */
static bool plain(const struct words *w, size_t i)
{
	return i < w->n && !w->t[i].op && !w->t[i].glob && !w->t[i].tilde;
}

static bool word_is(const struct words *w, size_t i, const char *lit)
{
	return plain(w, i) && w->t[i].len == strlen(lit) && !memcmp(text(w, i), lit, w->t[i].len);
}

static bool op_is(const struct words *w, size_t i, const char *lit)
{
	return i < w->n && w->t[i].op && w->t[i].len == strlen(lit) &&
	       !memcmp(text(w, i), lit, w->t[i].len);
}

/* Decimal digits s[0..len) as a value 0..max. */
static bool digits_value(const char *s, size_t len, int max, int *out)
{
	long v = 0;

	if (!len || len > 9)
		return false;
	for (size_t k = 0; k < len; k++) {
		if (s[k] < '0' || s[k] > '9')
			return false;
		v = v * 10 + (s[k] - '0');
	}
	if (v > max)
		return false;
	*out = (int)v;
	return true;
}

static bool num(const struct words *w, size_t i, int min, int max, int *out)
{
	return plain(w, i) && digits_value(text(w, i), w->t[i].len, max, out) && *out >= min;
}

/* ":N", a display. */
static bool display(const struct words *w, size_t i, struct desktop_op *op)
{
	int d;

	if (!plain(w, i) || w->t[i].len < 2 || w->t[i].len > 4 || text(w, i)[0] != ':' ||
	    !digits_value(text(w, i) + 1, w->t[i].len - 1, 999, &d))
		return false;
	memcpy(op->display, text(w, i), w->t[i].len + 1);
	return true;
}

/* The -screen geometry "WxHxD". */
static bool geometry(const char *s, struct desktop_op *op)
{
	const char *x1 = strchr(s, 'x'), *x2 = x1 ? strchr(x1 + 1, 'x') : NULL;

	return x2 && digits_value(s, (size_t)(x1 - s), DESKTOP_MAX_COORD, &op->width) &&
	       digits_value(x1 + 1, (size_t)(x2 - x1 - 1), DESKTOP_MAX_COORD, &op->height) &&
	       digits_value(x2 + 1, strlen(x2 + 1), 32, &op->depth) && op->width > 0 &&
	       op->height > 0 && op->depth > 0;
}

static enum desktop_kind xvfb(const struct words *w, struct desktop_op *op)
{
	if (w->n == 13 && display(w, 1, op) && word_is(w, 2, "-ac") && word_is(w, 3, "-screen") &&
	    word_is(w, 4, "0") && plain(w, 5) && geometry(text(w, 5), op) &&
	    word_is(w, 6, "-retro") && word_is(w, 7, "-dpi") && num(w, 8, 1, 10000, &op->dpi) &&
	    word_is(w, 9, "-nolisten") && word_is(w, 10, "tcp") && word_is(w, 11, "-nolisten") &&
	    word_is(w, 12, "unix"))
		return DESKTOP_XVFB;
	return DESKTOP_NONE;
}

/* scrot's file: /tmp/NAME.png, NAME of [A-Za-z0-9_.-], not starting with '.'. */
static bool shot_path(const struct words *w, size_t i, struct desktop_op *op)
{
	const char *p = text(w, i);
	size_t len = w->t[i].len;

	if (!plain(w, i) || len > DESKTOP_MAX_PATH || len < 10 || strncmp(p, "/tmp/", 5) ||
	    p[5] == '.' || strcmp(p + len - 4, ".png"))
		return false;
	for (size_t k = 5; k < len; k++)
		if (!safe_byte((unsigned char)p[k]) || strchr("@%+=:,/", p[k]))
			return false;
	memcpy(op->path, p, len + 1);
	return true;
}

static enum desktop_kind xdotool_click(const struct words *w, struct desktop_op *op)
{
	size_t b = w->n == 3 ? 2 : 4;
	int count = 1;

	if (!(w->n == 3 || (w->n == 5 && word_is(w, 2, "--repeat") &&
			    num(w, 3, 1, DESKTOP_MAX_REPEAT, &count))) ||
	    !num(w, b, 1, 5, &op->button))
		return DESKTOP_NONE;
	op->count = count;
	if (op->button >= 4) {
		op->scroll_up = op->button == 4;
		op->button = 0;
		return DESKTOP_SCROLL;
	}
	return count <= 3 ? DESKTOP_CLICK : DESKTOP_NONE;
}

static bool has_space(const char *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] == ' ' || (p[i] >= '\t' && p[i] <= '\r'))
			return true;
	return false;
}

static enum desktop_kind xdotool_key(const struct words *w, struct desktop_op *op)
{
	size_t used = 0;

	if (w->n < 3 || w->n - 2 > ACTIONS_MAX_CHORDS)
		return DESKTOP_NONE;
	for (size_t i = 2; i < w->n; i++) {
		struct keys_chord c;
		char err[64];

		/* The chords go on as one space-separated sequence: a chord
		 * with white space in it (a quoted ' ') would not come back. */
		if (!plain(w, i) || !w->t[i].len || text(w, i)[0] == '-' ||
		    has_space(text(w, i), w->t[i].len) ||
		    keys_parse_chord(text(w, i), w->t[i].len, &c, err, sizeof(err)) < 0 ||
		    used + w->t[i].len + 1 >= sizeof(op->keys))
			return DESKTOP_NONE;
		if (used)
			op->keys[used++] = ' ';
		memcpy(op->keys + used, text(w, i), w->t[i].len);
		used += w->t[i].len;
	}
	op->keys[used] = '\0';
	return DESKTOP_KEY;
}

static enum desktop_kind xdotool(const struct words *w, struct desktop_op *op)
{
	if (w->n == 2 && word_is(w, 1, "getmouselocation"))
		return DESKTOP_MOUSE_LOCATION;
	if (word_is(w, 1, "mousemove") &&
	    ((w->n == 5 && word_is(w, 2, "--sync") && num(w, 3, 0, DESKTOP_MAX_COORD, &op->x) &&
	      num(w, 4, 0, DESKTOP_MAX_COORD, &op->y)) ||
	     (w->n == 4 && num(w, 2, 0, DESKTOP_MAX_COORD, &op->x) &&
	      num(w, 3, 0, DESKTOP_MAX_COORD, &op->y))))
		return DESKTOP_MOVE;
	if (word_is(w, 1, "click"))
		return xdotool_click(w, op);
	if (w->n == 3 && (word_is(w, 1, "mousedown") || word_is(w, 1, "mouseup")) &&
	    num(w, 2, 1, 3, &op->button))
		return word_is(w, 1, "mousedown") ? DESKTOP_MOUSE_DOWN : DESKTOP_MOUSE_UP;
	if (w->n == 6 && word_is(w, 1, "type") && word_is(w, 2, "--delay") &&
	    num(w, 3, 0, ACTIONS_MAX_DURATION_MS, &op->delay_ms) && word_is(w, 4, "--") &&
	    plain(w, 5) && w->t[5].len <= DESKTOP_MAX_TEXT) {
		memcpy(op->text, text(w, 5), w->t[5].len + 1);
		op->text_len = w->t[5].len;
		return DESKTOP_TYPE;
	}
	if (word_is(w, 1, "key"))
		return xdotool_key(w, op);
	return DESKTOP_NONE;
}

static bool url_allowed(const char *u)
{
	return !strncmp(u, "http://", 7) || !strncmp(u, "https://", 8) ||
	       !strncmp(u, "file://", 7) || !strcmp(u, "about:blank");
}

static enum desktop_kind xdg_open(const struct words *w, struct desktop_op *op)
{
	char js[VMM_MAX_URL * 2 + 128]; /* only whether it fits matters here */

	if (w->n != 2 || w->t[1].op || w->t[1].tilde || w->t[1].len > VMM_MAX_URL ||
	    !url_allowed(text(w, 1)) || guest_prep_nav_js(text(w, 1), js, sizeof(js)) < 0)
		return DESKTOP_NONE;
	memcpy(op->url, text(w, 1), w->t[1].len + 1);
	return DESKTOP_XDG_OPEN;
}

static enum desktop_kind gtk_launch(const struct words *w, struct desktop_op *op)
{
	const char *name = w->n >= 2 ? text(w, 1) : "";
	size_t len = w->n >= 2 ? w->t[1].len : 0;

	if ((w->n != 2 && w->n != 3) || !plain(w, 1) || !len || name[0] == '.' || name[0] == '-' ||
	    len > DESKTOP_MAX_NAME)
		return DESKTOP_NONE;
	for (size_t k = 0; k < len; k++)
		if (!safe_byte((unsigned char)name[k]) || strchr("@%+=:,/", name[k]))
			return DESKTOP_NONE;
	if (len > 8 && !strcmp(name + len - 8, ".desktop"))
		len -= 8;
	memcpy(op->name, name, len);
	op->name[len] = '\0';
	op->arg[0] = '\0';
	if (w->n == 3) {
		if (w->t[2].op || w->t[2].tilde || w->t[2].len > VMM_MAX_URL)
			return DESKTOP_NONE;
		memcpy(op->arg, text(w, 2), w->t[2].len + 1);
	}
	return DESKTOP_GTK_LAUNCH;
}

static enum desktop_kind x11vnc(const struct words *w, struct desktop_op *op)
{
	if (w->n == 4 && word_is(w, 1, "-storepasswd") && plain(w, 2) && w->t[2].len &&
	    w->t[2].len <= DESKTOP_MAX_NAME && text(w, 2)[0] != '-' && w->t[3].tilde &&
	    !w->t[3].glob && !strcmp(text(w, 3), "~/.vnc/passwd")) {
		memcpy(op->name, text(w, 2), w->t[2].len + 1);
		return DESKTOP_X11VNC_PASSWD;
	}
	if ((w->n != 13 && w->n != 15) || !word_is(w, 1, "-bg") || !word_is(w, 2, "-display") ||
	    !display(w, 3, op) || !word_is(w, 4, "-forever") || !word_is(w, 5, "-wait") ||
	    !word_is(w, 6, "50") || !word_is(w, 7, "-shared") || !word_is(w, 8, "-rfbport") ||
	    !num(w, 9, 1, 65535, &op->port) ||
	    !(word_is(w, 10, "-nopw") || word_is(w, 10, "-usepw")) || !op_is(w, 11, "2>") ||
	    !word_is(w, 12, "/tmp/x11vnc_stderr.log"))
		return DESKTOP_NONE;
	op->use_password = word_is(w, 10, "-usepw");
	op->window[0] = '\0';
	if (w->n == 15) {
		const char *id = text(w, 14);
		size_t len = w->t[14].len, k = len > 2 && !strncmp(id, "0x", 2) ? 2 : 0;
		bool hex = k == 2;

		if (!word_is(w, 13, "-id") || !plain(w, 14) || !len || len >= sizeof(op->window))
			return DESKTOP_NONE;
		for (; k < len; k++)
			if (!((id[k] >= '0' && id[k] <= '9') ||
			      (hex &&
			       ((id[k] >= 'a' && id[k] <= 'f') || (id[k] >= 'A' && id[k] <= 'F')))))
				return DESKTOP_NONE;
		memcpy(op->window, id, len + 1);
	}
	return DESKTOP_X11VNC;
}

/* cd /opt/noVNC/utils && ./novnc_proxy --vnc localhost:P --listen Q
 * --web /opt/noVNC > /tmp/novnc.log 2>&1 */
static enum desktop_kind novnc(const struct words *w, struct desktop_op *op)
{
	const char *vnc = w->n == 14 ? text(w, 5) : "";

	if (w->n == 14 && word_is(w, 1, "/opt/noVNC/utils") && op_is(w, 2, "&&") &&
	    word_is(w, 3, "./novnc_proxy") && word_is(w, 4, "--vnc") && plain(w, 5) &&
	    !strncmp(vnc, "localhost:", 10) &&
	    digits_value(vnc + 10, w->t[5].len - 10, 65535, &op->vnc_port) && op->vnc_port > 0 &&
	    word_is(w, 6, "--listen") && num(w, 7, 1, 65535, &op->port) && word_is(w, 8, "--web") &&
	    word_is(w, 9, "/opt/noVNC") && op_is(w, 10, ">") && word_is(w, 11, "/tmp/novnc.log") &&
	    op_is(w, 12, "2>&") && word_is(w, 13, "1"))
		return DESKTOP_NOVNC;
	return DESKTOP_NONE;
}

static enum desktop_kind pgrep(const struct words *w)
{
	static const char *const xfce[] = { "xfce4-session", "xfwm4", "xfdesktop" };

	if (w->n == 3 && word_is(w, 1, "-x") && word_is(w, 2, "x11vnc"))
		return DESKTOP_VNC_PGREP;
	if (w->n != 17)
		return DESKTOP_NONE;
	for (size_t k = 0; k < 3; k++) {
		size_t b = k * 6;

		if (!word_is(w, b, "pgrep") || !word_is(w, b + 1, "-x") ||
		    !word_is(w, b + 2, xfce[k]) || !op_is(w, b + 3, ">") ||
		    !word_is(w, b + 4, "/dev/null") || (k < 2 && !op_is(w, b + 5, "&&")))
			return DESKTOP_NONE;
	}
	return DESKTOP_XFCE_PGREP;
}

static enum desktop_kind match(const struct words *w, struct desktop_op *op, int depth)
{
	if (!w->n || !plain(w, 0))
		return DESKTOP_NONE;
	if (word_is(w, 0, "bash") || word_is(w, 0, "/bin/bash") || word_is(w, 0, "/usr/bin/bash")) {
		size_t c = w->n == 4 && word_is(w, 1, "-l") ? 2 : 1;

		if (depth || w->n != c + 2 || !word_is(w, c, "-c") || w->t[c + 1].op)
			return DESKTOP_NONE;
		return desktop_cmd_parse_line(text(w, c + 1), w->t[c + 1].len, op) ? op->kind
										   : DESKTOP_NONE;
	}
	if (word_is(w, 0, "xdotool"))
		return w->n >= 2 ? xdotool(w, op) : DESKTOP_NONE;
	if (word_is(w, 0, "scrot"))
		return w->n == 3 && word_is(w, 1, "--pointer") && shot_path(w, 2, op)
			       ? DESKTOP_SCROT
			       : DESKTOP_NONE;
	if (word_is(w, 0, "xrandr"))
		return w->n == 1 ? DESKTOP_XRANDR : DESKTOP_NONE;
	if (word_is(w, 0, "Xvfb"))
		return xvfb(w, op);
	if (word_is(w, 0, "xdpyinfo"))
		return w->n == 3 && word_is(w, 1, "-display") && display(w, 2, op)
			       ? DESKTOP_XDPYINFO
			       : DESKTOP_NONE;
	if (word_is(w, 0, "startxfce4"))
		return w->n == 1 ? DESKTOP_STARTXFCE4 : DESKTOP_NONE;
	if (word_is(w, 0, "ps"))
		return w->n == 13 && word_is(w, 1, "aux") && op_is(w, 2, "|") &&
				       word_is(w, 3, "grep") && num(w, 4, 0, 1 << 30, &op->pid) &&
				       op_is(w, 5, "|") && word_is(w, 6, "grep") &&
				       word_is(w, 7, "-v") && word_is(w, 8, "grep") &&
				       op_is(w, 9, "|") && word_is(w, 10, "head") &&
				       word_is(w, 11, "-n") && word_is(w, 12, "1")
			       ? DESKTOP_XFCE_PS
			       : DESKTOP_NONE;
	if (word_is(w, 0, "pgrep"))
		return pgrep(w);
	if (word_is(w, 0, "pkill"))
		return w->n == 2 && word_is(w, 1, "x11vnc") ? DESKTOP_VNC_PKILL : DESKTOP_NONE;
	if (word_is(w, 0, "xdg-open"))
		return xdg_open(w, op);
	if (word_is(w, 0, "gtk-launch"))
		return gtk_launch(w, op);
	if (word_is(w, 0, "x11vnc"))
		return x11vnc(w, op);
	if (word_is(w, 0, "cd"))
		return novnc(w, op);
	if (word_is(w, 0, "netstat")) {
		const char *g = w->n == 5 ? text(w, 4) : "";
		size_t len = w->n == 5 ? w->t[4].len : 0;

		return w->n == 5 && word_is(w, 1, "-tuln") && op_is(w, 2, "|") &&
				       word_is(w, 3, "grep") && plain(w, 4) && len > 2 &&
				       g[0] == ':' && g[len - 1] == ' ' &&
				       digits_value(g + 1, len - 2, 65535, &op->port) &&
				       op->port > 0
			       ? DESKTOP_NETSTAT
			       : DESKTOP_NONE;
	}
	return DESKTOP_NONE;
}

static enum desktop_kind parse_line(const char *line, size_t len, struct desktop_op *op, int depth)
{
	/* The words of an unwrapped line live apart from the outer line's. */
	static _Thread_local struct words ws[2];
	struct words *w = &ws[depth];

	op->kind = DESKTOP_NONE;
	if (lex(line, len, w) < 0)
		return DESKTOP_NONE;
	op->kind = match(w, op, depth);
	return op->kind;
}

enum desktop_kind desktop_cmd_parse_line(const char *line, size_t len, struct desktop_op *op)
{
	static _Thread_local int depth;
	enum desktop_kind k;

	if (depth > 1)
		return op->kind = DESKTOP_NONE;
	depth++;
	k = parse_line(line, len, op, depth - 1);
	depth--;
	return k;
}

enum desktop_kind desktop_cmd_parse_argv(const char *cmd, const char *const *args, size_t nargs,
					 struct desktop_op *op)
{
	size_t c = nargs == 3 && args[0] && !strcmp(args[0], "-l") ? 1 : 0;

	op->kind = DESKTOP_NONE;
	if (!cmd || (strcmp(cmd, "/bin/bash") && strcmp(cmd, "bash")) || nargs != c + 2 ||
	    !args[c] || strcmp(args[c], "-c") || !args[c + 1])
		return DESKTOP_NONE;
	return desktop_cmd_parse_line(args[c + 1], strlen(args[c + 1]), op);
}

static const char *button_name(int b)
{
	return b == 2 ? "middle" : b == 3 ? "right" : "left";
}

static int clamp(int v, int max)
{
	return v < 0 ? 0 : v > max ? max : v;
}

json_t *desktop_cmd_action(const struct desktop_op *op, int screen_w, int screen_h)
{
	switch (op->kind) {
	case DESKTOP_MOVE: /* xdotool clamps to the screen, and so do we */
		return json_pack("{s:s, s:i, s:i}", "action", "move", "x",
				 clamp(op->x, screen_w - 1), "y", clamp(op->y, screen_h - 1));
	case DESKTOP_CLICK:
		return json_pack("{s:s, s:s, s:i}", "action", "click", "button",
				 button_name(op->button), "count", op->count);
	case DESKTOP_SCROLL:
		return json_pack("{s:s, s:s, s:i}", "action", "scroll", "direction",
				 op->scroll_up ? "up" : "down", "amount", op->count);
	case DESKTOP_MOUSE_DOWN:
	case DESKTOP_MOUSE_UP:
		return json_pack("{s:s, s:s}", "action",
				 op->kind == DESKTOP_MOUSE_DOWN ? "mouse_down" : "mouse_up",
				 "button", button_name(op->button));
	case DESKTOP_TYPE:
		return json_pack("{s:s, s:s%}", "action", "type", "text", op->text, op->text_len);
	case DESKTOP_KEY:
		return json_pack("{s:s, s:s}", "action", "key", "keys", op->keys);
	default:
		return NULL;
	}
}

int desktop_fmt_xrandr(int w, int h, char *buf, size_t len)
{
	/* Xvfb's own answer (one output, "screen", one mode): the SDK's
	 * /(\d+x\d+)/ finds the first WxH written without spaces. */
	int n = snprintf(buf, len,
			 "Screen 0: minimum 1 x 1, current %d x %d, maximum %d x %d\n"
			 "screen connected primary %dx%d+0+0 0mm x 0mm\n"
			 "   %dx%d         0.00* \n",
			 w, h, w, h, w, h, w, h);

	return n < 0 || (size_t)n >= len ? -ENOSPC : n;
}

int desktop_fmt_mouse_location(int x, int y, char *buf, size_t len)
{
	/* window: the gateway knows no X window ids; the root window's id on
	 * a fresh Xvfb. */
	int n = snprintf(buf, len, "x:%d y:%d screen:0 window:%d\n", x, y, 0x1d5);

	return n < 0 || (size_t)n >= len ? -ENOSPC : n;
}

int desktop_sdk_quote(const char *s, size_t len, char *buf, size_t buflen)
{
	size_t o = 0;
	bool bare = len > 0;

	for (size_t i = 0; bare && i < len; i++)
		bare = safe_byte((unsigned char)s[i]);
	if (bare) {
		if (len + 1 > buflen)
			return -ENOSPC;
		memcpy(buf, s, len);
		buf[len] = '\0';
		return (int)len;
	}
#define PUT(str, n)                                                                                \
	do {                                                                                       \
		if (o + (n) + 1 > buflen)                                                          \
			return -ENOSPC;                                                            \
		memcpy(buf + o, (str), (n));                                                       \
		o += (n);                                                                          \
	} while (0)
	PUT("'", 1);
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\'')
			PUT("'\"'\"'", 5);
		else
			PUT(s + i, 1);
	}
	PUT("'", 1);
#undef PUT
	buf[o] = '\0';
	return (int)o;
}

bool desktop_kind_is_input(enum desktop_kind kind)
{
	switch (kind) {
	case DESKTOP_MOVE:
	case DESKTOP_CLICK:
	case DESKTOP_SCROLL:
	case DESKTOP_MOUSE_DOWN:
	case DESKTOP_MOUSE_UP:
	case DESKTOP_TYPE:
	case DESKTOP_KEY:
		return true;
	default:
		return false;
	}
}

/* s with every secret in it written as "********": a new string (s's own
 * reference when secret is not in it), NULL when out of memory. */
static json_t *redacted(json_t *s, const char *secret)
{
	const char *text = json_string_value(s), *at;
	size_t slen = strlen(secret);
	struct bytebuf b = { 0 };
	json_t *out;

	if (!text || !slen || !strstr(text, secret))
		return json_incref(s);
	while ((at = strstr(text, secret))) {
		if (bytebuf_append(&b, text, (size_t)(at - text)) < 0 ||
		    bytebuf_append(&b, "********", 8) < 0)
			goto oom;
		text = at + slen;
	}
	if (bytebuf_append(&b, text, strlen(text)) < 0)
		goto oom;
	out = json_stringn((const char *)b.data, b.len);
	bytebuf_free(&b);
	return out;
oom:
	bytebuf_free(&b);
	return NULL;
}

int desktop_redact_secret(json_t *config, const char *secret)
{
	json_t *args = json_object_get(config, "args"), *v, *cmd;
	size_t i;

	if (!(cmd = redacted(json_object_get(config, "cmd"), secret)) ||
	    json_object_set_new(config, "cmd", cmd) < 0)
		return -ENOMEM;
	json_array_foreach(args, i, v)
	{
		json_t *r = redacted(v, secret);

		if (!r || json_array_set_new(args, i, r) < 0)
			return -ENOMEM;
	}
	return 0;
}
