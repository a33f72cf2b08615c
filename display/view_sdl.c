/* display/view_sdl.c: vitrine-view's main(): parses the command line, starts
 * the network thread (view_conn.c) and runs the SDL2 window: the session's
 * screen scaled to the window (SDL's logical size maps mouse coordinates
 * back to screen pixels), the guest's cursor drawn on top, and, while this
 * viewer holds control, mouse and keyboard sent as stream input. Right Ctrl
 * takes or releases control.
 *
 * Keys go by what the person typed, as web/keyboard.js sends them: SDL's
 * text input (the person's layout, dead keys and input methods applied)
 * goes as {type:"text"}; other keys, and any key with Ctrl, Alt or GUI
 * held, as {type:"key"} with their code and, for a printable one, its
 * character; Shift, AltGr and the others go to the guest only when a key
 * sent as a key needs them. */
#include "common/opt.h"
#include "display/view.h"

#include <SDL.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	SDL_Scancode sc;
	const char *code;
} scancodes[] = {
	{ SDL_SCANCODE_RETURN, "Enter" },
	{ SDL_SCANCODE_ESCAPE, "Escape" },
	{ SDL_SCANCODE_BACKSPACE, "Backspace" },
	{ SDL_SCANCODE_TAB, "Tab" },
	{ SDL_SCANCODE_SPACE, "Space" },
	{ SDL_SCANCODE_MINUS, "Minus" },
	{ SDL_SCANCODE_EQUALS, "Equal" },
	{ SDL_SCANCODE_LEFTBRACKET, "BracketLeft" },
	{ SDL_SCANCODE_RIGHTBRACKET, "BracketRight" },
	{ SDL_SCANCODE_BACKSLASH, "Backslash" },
	{ SDL_SCANCODE_SEMICOLON, "Semicolon" },
	{ SDL_SCANCODE_APOSTROPHE, "Quote" },
	{ SDL_SCANCODE_GRAVE, "Backquote" },
	{ SDL_SCANCODE_COMMA, "Comma" },
	{ SDL_SCANCODE_PERIOD, "Period" },
	{ SDL_SCANCODE_SLASH, "Slash" },
	{ SDL_SCANCODE_CAPSLOCK, "CapsLock" },
	{ SDL_SCANCODE_PRINTSCREEN, "PrintScreen" },
	{ SDL_SCANCODE_SCROLLLOCK, "ScrollLock" },
	{ SDL_SCANCODE_PAUSE, "Pause" },
	{ SDL_SCANCODE_INSERT, "Insert" },
	{ SDL_SCANCODE_HOME, "Home" },
	{ SDL_SCANCODE_PAGEUP, "PageUp" },
	{ SDL_SCANCODE_DELETE, "Delete" },
	{ SDL_SCANCODE_END, "End" },
	{ SDL_SCANCODE_PAGEDOWN, "PageDown" },
	{ SDL_SCANCODE_RIGHT, "ArrowRight" },
	{ SDL_SCANCODE_LEFT, "ArrowLeft" },
	{ SDL_SCANCODE_DOWN, "ArrowDown" },
	{ SDL_SCANCODE_UP, "ArrowUp" },
	{ SDL_SCANCODE_NUMLOCKCLEAR, "NumLock" },
	{ SDL_SCANCODE_KP_DIVIDE, "NumpadDivide" },
	{ SDL_SCANCODE_KP_MULTIPLY, "NumpadMultiply" },
	{ SDL_SCANCODE_KP_MINUS, "NumpadSubtract" },
	{ SDL_SCANCODE_KP_PLUS, "NumpadAdd" },
	{ SDL_SCANCODE_KP_ENTER, "NumpadEnter" },
	{ SDL_SCANCODE_KP_PERIOD, "NumpadDecimal" },
	{ SDL_SCANCODE_NONUSBACKSLASH, "IntlBackslash" },
	{ SDL_SCANCODE_APPLICATION, "ContextMenu" },
	{ SDL_SCANCODE_LCTRL, "ControlLeft" },
	{ SDL_SCANCODE_LSHIFT, "ShiftLeft" },
	{ SDL_SCANCODE_LALT, "AltLeft" },
	{ SDL_SCANCODE_LGUI, "MetaLeft" },
	{ SDL_SCANCODE_RSHIFT, "ShiftRight" },
	{ SDL_SCANCODE_RALT, "AltRight" },
	{ SDL_SCANCODE_RGUI, "MetaRight" },
};

const char *view_scancode_name(int sc)
{
	static char buf[SDL_NUM_SCANCODES][12];

	if (sc >= SDL_SCANCODE_A && sc <= SDL_SCANCODE_Z) {
		snprintf(buf[sc], sizeof(buf[sc]), "Key%c", 'A' + (sc - SDL_SCANCODE_A));
		return buf[sc];
	}
	if (sc >= SDL_SCANCODE_1 && sc <= SDL_SCANCODE_0) {
		snprintf(buf[sc], sizeof(buf[sc]), "Digit%d", (sc - SDL_SCANCODE_1 + 1) % 10);
		return buf[sc];
	}
	if (sc >= SDL_SCANCODE_F1 && sc <= SDL_SCANCODE_F12) {
		snprintf(buf[sc], sizeof(buf[sc]), "F%d", sc - SDL_SCANCODE_F1 + 1);
		return buf[sc];
	}
	if (sc >= SDL_SCANCODE_KP_1 && sc <= SDL_SCANCODE_KP_0) {
		snprintf(buf[sc], sizeof(buf[sc]), "Numpad%d", (sc - SDL_SCANCODE_KP_1 + 1) % 10);
		return buf[sc];
	}
	for (size_t i = 0; i < sizeof(scancodes) / sizeof(scancodes[0]); i++)
		if ((int)scancodes[i].sc == sc)
			return scancodes[i].code;
	return NULL;
}

/* --quality and --max-fps as atoi reads them; main checks their ranges
 * once the URL is read too, and answers any of the three with the usage. */
static int set_atoi(const struct opt *o, void *conf, const char *arg, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	*(int *)((char *)conf + o->off) = atoi(arg);
	return 0;
}

static int set_name(const struct opt *o, void *conf, const char *arg, char *err, size_t errlen)
{
	struct view_opts *v = conf;

	(void)o;
	(void)err;
	(void)errlen;
	snprintf(v->name, sizeof(v->name), "%s", arg);
	return 0;
}

#define VIEW(field) offsetof(struct view_opts, field)

/* vitrine-view's options (common/opt.h), read into struct view_opts. */
static const struct opt view_rows[] = {
	{ "token-file", 0, "FILE", "read the token from FILE", .set = opt_set_str,
	  .off = VIEW(token_file) },
	{ "control", 0, NULL, "take control once connected (control token)", .set = opt_set_flag,
	  .off = VIEW(take) },
	{ "quality", 0, "N", "JPEG quality 1..100", .set = set_atoi, .off = VIEW(quality) },
	{ "max-fps", 0, "N", "frames a second at most, 1..60", .set = set_atoi,
	  .off = VIEW(max_fps) },
	{ "name", 0, "NAME", "how other viewers see you", .set = set_name },
	{ "verbose", 0, NULL, "print a line for every frame shown", .set = opt_set_flag,
	  .off = VIEW(verbose) },
	{ "help", 0, NULL, NULL, .set = NULL },
};

#define N_VIEW_ROWS (sizeof(view_rows) / sizeof(view_rows[0]))

static void usage(FILE *f)
{
	fprintf(f, "usage: vitrine-view [options] ws://HOST:PORT/v1/sessions/ID/stream\n"
		   "  the token (view or control) comes from $VITRINE_TOKEN or --token-file FILE,\n"
		   "  never from the command line (other users can read that)\n");
	opt_usage(f, view_rows, N_VIEW_ROWS);
	fprintf(f, "Right Ctrl takes or releases control.\n");
}

/* Splits ws://host:port/path. Returns 0 or -1. */
static int parse_url(const char *url, struct view_opts *o)
{
	const char *p, *slash, *colon;

	if (strncmp(url, "ws://", 5))
		return -1;
	p = url + 5;
	slash = strchr(p, '/');
	colon = strchr(p, ':');
	if (!slash || !colon || colon > slash || colon == p ||
	    (size_t)(colon - p) >= sizeof(o->host))
		return -1;
	snprintf(o->host, sizeof(o->host), "%.*s", (int)(colon - p), p);
	o->port = atoi(colon + 1);
	snprintf(o->path, sizeof(o->path), "%s", slash);
	return o->port > 0 && o->port < 65536 ? 0 : -1;
}

static int read_token(const char *file, struct view_opts *o)
{
	const char *env = getenv("VITRINE_TOKEN");
	FILE *f;

	if (file) {
		f = fopen(file, "r");
		if (!f || !fgets(o->token, sizeof(o->token), f)) {
			if (f)
				fclose(f);
			return -1;
		}
		fclose(f);
		o->token[strcspn(o->token, "\r\n")] = '\0';
	} else if (env) {
		snprintf(o->token, sizeof(o->token), "%s", env);
	}
	return o->token[0] ? 0 : -1;
}

static void send_json(struct view_state *st, json_t *j)
{
	char *text = json_dumps(j, JSON_COMPACT);

	json_decref(j);
	if (text)
		view_send(st, text);
	free(text);
}

/* SDL button number -> the stream's bit (1 left, 2 middle, 4 right, 8, 16). */
/* -1, 0 or 1. */
static int sign(int v)
{
	return (v > 0) - (v < 0);
}

static int stream_button(Uint8 b)
{
	switch (b) {
	case SDL_BUTTON_LEFT:
		return 1;
	case SDL_BUTTON_MIDDLE:
		return 2;
	case SDL_BUTTON_RIGHT:
		return 4;
	case SDL_BUTTON_X1:
		return 8;
	case SDL_BUTTON_X2:
		return 16;
	}
	return 0;
}

static bool is_modifier(SDL_Scancode sc)
{
	return sc == SDL_SCANCODE_LSHIFT || sc == SDL_SCANCODE_RSHIFT || sc == SDL_SCANCODE_LCTRL ||
	       sc == SDL_SCANCODE_RCTRL || sc == SDL_SCANCODE_LALT || sc == SDL_SCANCODE_RALT ||
	       sc == SDL_SCANCODE_LGUI || sc == SDL_SCANCODE_RGUI || sc == SDL_SCANCODE_MODE;
}

static void send_key(struct view_state *st, SDL_Scancode sc, uint32_t ch, bool down)
{
	const char *code = view_scancode_name(sc);
	char utf8[8] = "";
	json_t *j;

	if (ch) {
		/* UTF-8 of ch */
		if (ch < 0x80) {
			utf8[0] = (char)ch;
			utf8[1] = 0;
		} else if (ch < 0x800) {
			utf8[0] = (char)(0xc0 | ch >> 6);
			utf8[1] = (char)(0x80 | (ch & 0x3f));
			utf8[2] = 0;
		} else if (ch < 0x10000) {
			utf8[0] = (char)(0xe0 | ch >> 12);
			utf8[1] = (char)(0x80 | (ch >> 6 & 0x3f));
			utf8[2] = (char)(0x80 | (ch & 0x3f));
			utf8[3] = 0;
		} else {
			utf8[0] = (char)(0xf0 | ch >> 18);
			utf8[1] = (char)(0x80 | (ch >> 12 & 0x3f));
			utf8[2] = (char)(0x80 | (ch >> 6 & 0x3f));
			utf8[3] = (char)(0x80 | (ch & 0x3f));
			utf8[4] = 0;
		}
	}
	if (!code && !utf8[0])
		return;
	j = json_pack("{s:s, s:b}", "type", "key", "down", down);
	if (j && code)
		json_object_set_new(j, "code", json_string(code));
	if (j && utf8[0])
		json_object_set_new(j, "key", json_string(utf8));
	send_json(st, j);
}

/* Lets go in the guest of the modifiers sent for an earlier key: they
 * would change what text types. */
static void lift_modifiers(struct view_state *st)
{
	for (int sc = 0; sc < VIEW_MAX_SCANCODE; sc++)
		if (st->mod_sent[sc]) {
			send_key(st, (SDL_Scancode)sc, 0, false);
			st->mod_sent[sc] = false;
		}
}

/* Sends the modifiers held and not sent yet (before a key that goes as a
 * key, a click or a wheel notch). AltGr (and SDL's MODE) make the person's
 * characters, never the guest's Alt. */
static void press_modifiers(struct view_state *st)
{
	for (int m = 0; m < VIEW_MAX_SCANCODE; m++)
		if (st->mod_held[m] && !st->mod_sent[m] && m != SDL_SCANCODE_RALT &&
		    m != SDL_SCANCODE_MODE) {
			send_key(st, (SDL_Scancode)m, 0, true);
			st->mod_sent[m] = true;
		}
}

static void forward_key(struct view_state *st, const SDL_KeyboardEvent *k)
{
	SDL_Scancode sc = k->keysym.scancode;
	SDL_Keycode sym = k->keysym.sym;
	bool down = k->type == SDL_KEYDOWN;
	/* SDL names a printable key by its character on the person's layout. */
	uint32_t ch = !(sym & SDLK_SCANCODE_MASK) && sym >= 0x20 && sym != 0x7f ? (uint32_t)sym : 0;

	if ((int)sc < 0 || (int)sc >= VIEW_MAX_SCANCODE)
		return;
	if (is_modifier(sc)) {
		st->mod_held[sc] = down;
		if (!down && st->mod_sent[sc]) {
			send_key(st, sc, 0, false);
			st->mod_sent[sc] = false;
		}
		return;
	}
	if (!down) {
		if (st->key_sent[sc])
			send_key(st, sc, st->key_char[sc], false);
		st->key_sent[sc] = false;
		return;
	}
	/* A character with no shortcut modifier comes as SDL_TEXTINPUT. */
	if (ch && !(k->keysym.mod & (KMOD_CTRL | KMOD_LALT | KMOD_GUI)))
		return;
	press_modifiers(st);
	st->key_sent[sc] = true;
	st->key_char[sc] = ch;
	send_key(st, sc, ch, true);
}

/* Forwards one input event while in control. Buttons are tracked from the
 * events themselves: SDL_GetMouseState() is already past a queued click. */
static void forward(struct view_state *st, const SDL_Event *e, int w, int h)
{
	static int buttons;
	int x, y;

	switch (e->type) {
	case SDL_MOUSEMOTION:
	case SDL_MOUSEBUTTONDOWN:
	case SDL_MOUSEBUTTONUP:
		x = e->type == SDL_MOUSEMOTION ? e->motion.x : e->button.x;
		y = e->type == SDL_MOUSEMOTION ? e->motion.y : e->button.y;
		if (e->type == SDL_MOUSEBUTTONDOWN) {
			press_modifiers(st); /* shift-click, ctrl-click */
			buttons |= stream_button(e->button.button);
		} else if (e->type == SDL_MOUSEBUTTONUP)
			buttons &= ~stream_button(e->button.button);
		if (x < 0 || y < 0 || x >= w || y >= h)
			return;
		send_json(st, json_pack("{s:s, s:i, s:i, s:i}", "type", "pointer", "x", x, "y", y,
					"buttons", buttons));
		return;
	case SDL_MOUSEWHEEL:
		press_modifiers(st); /* ctrl+wheel zooms */
		SDL_GetMouseState(&x, &y);
		/* Window coordinates: the logical size maps events, not this. */
		{
			int ww, wh;

			SDL_GetWindowSize(SDL_GetWindowFromID(e->wheel.windowID), &ww, &wh);
			x = ww ? x * w / ww : 0;
			y = wh ? y * h / wh : 0;
		}
		if (x >= w || y >= h)
			return;
		/* SDL's wheel y grows upwards, the stream's downwards. */
		send_json(st, json_pack("{s:s, s:i, s:i, s:i, s:i}", "type", "wheel", "x", x, "y",
					y, "dx", sign(e->wheel.x), "dy", -sign(e->wheel.y)));
		return;
	case SDL_KEYDOWN:
	case SDL_KEYUP:
		forward_key(st, &e->key);
		return;
	case SDL_TEXTINPUT:
		if (SDL_GetModState() & (KMOD_CTRL | KMOD_LALT | KMOD_GUI))
			return; /* a shortcut: its key went as a key */
		lift_modifiers(st);
		send_json(st, json_pack("{s:s, s:s}", "type", "text", "text", e->text.text));
		return;
	default:
		return;
	}
}

int main(int argc, char **argv)
{
	struct view_opts o = { .name = "vitrine-view" };
	struct view_state st = { .cursor_x = -1, .cursor_y = -1 };
	struct view_run run = { &o, &st };
	SDL_Window *win = NULL;
	SDL_Renderer *ren = NULL;
	SDL_Texture *tex = NULL, *ptr = NULL; /* the screen; the pointer shape */
	pthread_t net;
	struct opt_args args;
	char err[512];
	int rc = 1, tw = 0, th = 0, shown = -1;
	bool shown_you = false;
	char title[160] = "";

	switch (opt_parse(view_rows, N_VIEW_ROWS, &o, argc, argv, &args, err, sizeof(err))) {
	case OPT_OK:
		break;
	case OPT_HELP:
		usage(stdout);
		return 0;
	default:
		fprintf(stderr, "%s\n", err);
		usage(stderr);
		return 2;
	}
	if (args.n != 1 || parse_url(args.v[0], &o) < 0 || o.quality < 0 || o.quality > 100 ||
	    o.max_fps < 0 || o.max_fps > 60) {
		usage(stderr);
		return 2;
	}
	if (read_token(o.token_file, &o) < 0) {
		fprintf(stderr,
			"vitrine-view: no token: set VITRINE_TOKEN or pass --token-file FILE\n");
		return 2;
	}
	/* A click that also focuses the window is a click in the guest too
	 * (SDL drops one within 10 ms of focus otherwise). */
	SDL_SetHint(SDL_HINT_MOUSE_FOCUS_CLICKTHROUGH, "1");
	if (SDL_Init(SDL_INIT_VIDEO) < 0) {
		fprintf(stderr, "vitrine-view: SDL: %s\n", SDL_GetError());
		return 1;
	}
	st.sdl_event = SDL_RegisterEvents(1);
	pthread_mutex_init(&st.lock, NULL);
	if (pthread_create(&net, NULL, view_conn_thread, &run) != 0) {
		fprintf(stderr, "vitrine-view: cannot start the network thread\n");
		goto out;
	}
	for (;;) {
		SDL_Event e;
		bool closed, you, can;

		if (!SDL_WaitEvent(&e))
			break;
		if (e.type == SDL_QUIT)
			break;
		pthread_mutex_lock(&st.lock);
		closed = st.closed;
		you = st.you_control;
		can = st.can_control;
		pthread_mutex_unlock(&st.lock);
		if (closed) {
			fprintf(stderr, "vitrine-view: %s\n", st.why);
			break;
		}
		if (e.type == SDL_KEYDOWN && e.key.keysym.scancode == SDL_SCANCODE_RCTRL) {
			if (can)
				view_send(&st,
					  you ? "{\"type\":\"release\"}" : "{\"type\":\"take\"}");
			continue;
		}
		if (e.type == SDL_KEYUP && e.key.keysym.scancode == SDL_SCANCODE_RCTRL)
			continue;
		if (you && tw)
			forward(&st, &e, tw, th);
		if (e.type != st.sdl_event && e.type != SDL_WINDOWEVENT)
			continue;
		pthread_mutex_lock(&st.lock);
		if (st.width && (st.width != tw || st.height != th)) {
			if (!win) {
				win = SDL_CreateWindow("vitrine-view", 0, 0, st.width, st.height,
						       SDL_WINDOW_RESIZABLE);
				ren = win ? SDL_CreateRenderer(win, -1, 0) : NULL;
			} else {
				SDL_SetWindowSize(win, st.width, st.height);
			}
			SDL_DestroyTexture(tex);
			tex = ren ? SDL_CreateTexture(ren, SDL_PIXELFORMAT_XBGR8888,
						      SDL_TEXTUREACCESS_STREAMING, st.width,
						      st.height)
				  : NULL;
			if (!tex) {
				pthread_mutex_unlock(&st.lock);
				fprintf(stderr, "vitrine-view: cannot open a window: %s\n",
					SDL_GetError());
				goto stop;
			}
			SDL_RenderSetLogicalSize(ren, st.width, st.height);
			tw = st.width;
			th = st.height;
			st.dirty = true;
		}
		if (tex && st.dirty)
			SDL_UpdateTexture(tex, NULL, st.pixels, tw * 4);
		st.dirty = false;
		{
			char t[160];

			snprintf(t, sizeof(t), "vitrine-view %s: %s", st.session,
				 st.you_control	    ? "you control (Right Ctrl releases)"
				 : st.controller[0] ? "controlled by another viewer"
				 : can		    ? "watching (Right Ctrl takes control)"
						    : "watching");
			if (win && strcmp(t, title)) {
				snprintf(title, sizeof(title), "%s", t);
				SDL_SetWindowTitle(win, title);
			}
		}
		if (ren) {
			SDL_RenderClear(ren);
			SDL_RenderCopy(ren, tex, NULL, NULL);
			if (st.shape_dirty) {
				st.shape_dirty = false;
				SDL_DestroyTexture(ptr);
				ptr = SDL_CreateTexture(ren, SDL_PIXELFORMAT_ABGR8888,
							SDL_TEXTUREACCESS_STATIC, st.shape_w,
							st.shape_h);
				if (ptr) {
					SDL_UpdateTexture(ptr, NULL, st.shape, st.shape_w * 4);
					SDL_SetTextureBlendMode(ptr, SDL_BLENDMODE_BLEND);
				}
			}
			if (st.cursor_x >= 0 && !you && ptr) {
				/* The guest's pointer in its own shape, where an agent or
				 * another person left it. */
				SDL_Rect d = { st.cursor_x - st.hot_x, st.cursor_y - st.hot_y,
					       st.shape_w, st.shape_h };

				SDL_RenderCopy(ren, ptr, NULL, &d);
			} else if (st.cursor_x >= 0 && !you) {
				/* No shape yet: a plain marker. */
				SDL_Rect r1 = { st.cursor_x - 1, st.cursor_y - 1, 3, 12 },
					 r2 = { st.cursor_x - 1, st.cursor_y - 1, 9, 3 };

				SDL_SetRenderDrawColor(ren, 255, 255, 255, 255);
				SDL_RenderFillRect(ren, &r1);
				SDL_RenderFillRect(ren, &r2);
			}
			SDL_RenderPresent(ren);
		}
		if (o.verbose && you != shown_you) {
			shown_you = you;
			printf("vitrine-view: %s\n", you ? "you control" : "you do not control");
			fflush(stdout);
		}
		if (o.verbose && tw && st.frames != shown) {
			shown = st.frames;
			printf("vitrine-view: shown frame seq=%u (%dx%d)\n", st.seq, tw, th);
			fflush(stdout);
		}
		pthread_mutex_unlock(&st.lock);
	}
	rc = 0;
stop:
	view_stop(&st);
	pthread_join(net, NULL);
out:
	SDL_DestroyTexture(ptr);
	SDL_DestroyTexture(tex);
	SDL_DestroyRenderer(ren);
	SDL_DestroyWindow(win);
	SDL_Quit();
	free(st.pixels);
	free(st.shape);
	for (int i = 0; i < st.n_out; i++)
		free(st.out[i]);
	pthread_mutex_destroy(&st.lock);
	return rc;
}
