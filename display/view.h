/* display/view.h: vitrine-view, the native viewer of a session's live
 * stream: a network thread (view_conn.c: a libwebsockets client of
 * WS /v1/sessions/{id}/stream that decodes frames into one shared screen
 * buffer) and the SDL2 window on the main thread (view_sdl.c: shows that
 * buffer, forwards mouse and keyboard while it holds control). They share
 * only struct view_state, under its lock; the network thread wakes SDL with
 * SDL_PushEvent and SDL wakes it with lws_cancel_service. */
#ifndef VITRINE_DISPLAY_VIEW_H
#define VITRINE_DISPLAY_VIEW_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define VIEW_OUT_QUEUE 64
#define VIEW_MAX_SCANCODE 512 /* SDL_NUM_SCANCODES */

struct view_opts {
	char host[256];
	int port;
	char path[512];
	char token[256];
	char name[33];
	int quality, max_fps;
	bool take; /* ask for control once connected */
	bool verbose; /* print a line per frame shown (tests) */
	const char *token_file; /* --token-file, or NULL: $VITRINE_TOKEN */
};

struct view_state {
	pthread_mutex_t lock;
	/* Written by the network thread. */
	int width, height; /* 0 until the first frame */
	uint8_t *pixels; /* owned, width * height * 4, R G B X */
	bool dirty; /* new pixels since the window last drew */
	uint32_t seq; /* of the last frame decoded */
	int frames;
	int cursor_x, cursor_y; /* -1 until known */
	uint8_t *shape; /* owned: the pointer shape, RGBA, shape_w * shape_h; NULL: none yet */
	int shape_w, shape_h, hot_x, hot_y;
	bool shape_dirty;
	bool you_control, can_control;
	char controller[64]; /* "" when nobody */
	char session[64];
	bool closed;
	char why[160]; /* why it closed */
	/* Written by the SDL thread: JSON texts to send (owned). */
	char *out[VIEW_OUT_QUEUE];
	int n_out;
	/* The lws context, for lws_cancel_service from the SDL thread. */
	void *ctx;
	uint32_t sdl_event; /* SDL user event type that means "look again" */
	/* The SDL thread's keyboard (view_sdl.c "keys"): modifier scancodes
	 * held, and which of them and which other keys went to the guest. */
	bool mod_held[VIEW_MAX_SCANCODE], mod_sent[VIEW_MAX_SCANCODE], key_sent[VIEW_MAX_SCANCODE];
	uint32_t key_char[VIEW_MAX_SCANCODE]; /* the character a key went with, 0 none */
	volatile int stop;
};

/* Runs the connection until st->stop or it closes (thread body: arg is a
 * struct view_run). */
struct view_run {
	const struct view_opts *opts;
	struct view_state *st;
};
void *view_conn_thread(void *arg);
/* Asks the network thread to end (then join it). */
void view_stop(struct view_state *st);
/* Queues a JSON text (copied) and wakes the network thread. */
void view_send(struct view_state *st, const char *json);

/* The DOM KeyboardEvent.code name of an SDL scancode, or NULL. */
const char *view_scancode_name(int scancode);

#endif
