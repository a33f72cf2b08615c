/* display/view_sdl.c: vitrine-view's main(): parses the command line, starts
 * the network thread (view_conn.c) and runs the SDL2 window: the session's
 * screen scaled to the window (SDL's logical size maps mouse coordinates
 * back to screen pixels), the guest's cursor drawn on top, and, while this
 * viewer holds control, mouse and keyboard sent as stream input. Right Ctrl
 * takes or releases control. */
#include "display/view.h"

#include <SDL.h>
#include <getopt.h>
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

static void usage(FILE *f)
{
	fprintf(f, "usage: vitrine-view [options] ws://HOST:PORT/v1/sessions/ID/stream\n"
		   "  the token (view or control) comes from $VITRINE_TOKEN or --token-file FILE,\n"
		   "  never from the command line (other users can read that)\n"
		   "  --token-file FILE  read the token from FILE\n"
		   "  --control          take control once connected (control token)\n"
		   "  --quality N        JPEG quality 1..100   --max-fps N  1..60\n"
		   "  --name NAME        how other viewers see you\n"
		   "  --verbose          print a line for every frame shown\n"
		   "Right Ctrl takes or releases control.\n");
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
		if (e->type == SDL_MOUSEBUTTONDOWN)
			buttons |= stream_button(e->button.button);
		else if (e->type == SDL_MOUSEBUTTONUP)
			buttons &= ~stream_button(e->button.button);
		if (x < 0 || y < 0 || x >= w || y >= h)
			return;
		send_json(st, json_pack("{s:s, s:i, s:i, s:i}", "type", "pointer", "x", x, "y", y,
					"buttons", buttons));
		return;
	case SDL_MOUSEWHEEL:
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
	case SDL_KEYUP: {
		const char *code = view_scancode_name(e->key.keysym.scancode);

		if (code)
			send_json(st, json_pack("{s:s, s:s, s:b}", "type", "key", "code", code,
						"down", e->type == SDL_KEYDOWN));
		return;
	}
	default:
		return;
	}
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "token-file", required_argument, 0, 't' },
		{ "control", no_argument, 0, 'c' },
		{ "quality", required_argument, 0, 'q' },
		{ "max-fps", required_argument, 0, 'f' },
		{ "name", required_argument, 0, 'n' },
		{ "verbose", no_argument, 0, 'v' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	struct view_opts o = { .name = "vitrine-view" };
	struct view_state st = { .cursor_x = -1, .cursor_y = -1 };
	struct view_run run = { &o, &st };
	const char *token_file = NULL;
	SDL_Window *win = NULL;
	SDL_Renderer *ren = NULL;
	SDL_Texture *tex = NULL, *ptr = NULL; /* the screen; the pointer shape */
	pthread_t net;
	int c, rc = 1, tw = 0, th = 0, shown = -1;
	bool shown_you = false;
	char title[160] = "";

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 't':
			token_file = optarg;
			break;
		case 'c':
			o.take = true;
			break;
		case 'q':
			o.quality = atoi(optarg);
			break;
		case 'f':
			o.max_fps = atoi(optarg);
			break;
		case 'n':
			snprintf(o.name, sizeof(o.name), "%s", optarg);
			break;
		case 'v':
			o.verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1 || parse_url(argv[optind], &o) < 0 || o.quality < 0 ||
	    o.quality > 100 || o.max_fps < 0 || o.max_fps > 60) {
		usage(stderr);
		return 2;
	}
	if (read_token(token_file, &o) < 0) {
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
