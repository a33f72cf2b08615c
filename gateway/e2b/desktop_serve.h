/* gateway/e2b/desktop_serve.h: an @e2b/desktop shell command served by the
 * gateway itself (docs/e2b-desktop.md has the table): pointer, clicks,
 * scrolls, keys and typing go through Vitrine's own input path (actions,
 * action/run.h), scrot is a PNG from the screen mirror held for the read
 * and remove that follow, xrandr and getmouselocation are answered from the
 * session, the X server, XFCE and stream set-up commands succeed at once,
 * xdg-open and gtk-launch open in Chromium and launch through vitrine-agent.
 * The answer is what the command would have printed and its exit code, for
 * Process.Start to stream back as if it had run.
 *
 * The hook for envd's Process.Start (one call, before it starts anything in
 * the guest):
 *
 *	rc = desktop_serve_try(s, cmd, args, nargs, done, ud, &d);
 *	rc == 0: not a desktop command, run it in the guest as usual;
 *	rc == 1: served: done(ud, answer) comes exactly once, later, on the
 *	         loop, unless desktop_serve_cancel(d) comes first (the request
 *	         went away). The serving is freed as done returns: forget d
 *	         in done, never cancel it there.
 *
 * The caller checks the live view's control lease first, as
 * api_start_action does (stream_controller(s): this room cannot see it).
 *
 * Per session, the room keeps (as a session listener, freed with the
 * session) the held screenshots and the stream's state: whether "x11vnc"
 * runs, the port "novnc_proxy" listens on, the password the SDK stored.
 *
 * Everything here runs on the lws loop and never blocks it. */
#ifndef VITRINE_GATEWAY_E2B_DESKTOP_SERVE_H
#define VITRINE_GATEWAY_E2B_DESKTOP_SERVE_H

#include "gateway/core/api_error.h"
#include "gateway/e2b/desktop_cmd.h"

#include <stdbool.h>
#include <stddef.h>

struct sess;
struct display_image;
struct desktop_serve;

/* What the command "printed". out and err are borrowed for the call. */
struct desktop_answer {
	enum desktop_kind kind;
	int exit_code; /* 0 done; 1 failed (err says why), or the tool's own 1 (pgrep) */
	const char *out; /* stdout */
	size_t out_len;
	const char *err; /* stderr */
	size_t err_len;
	/* Set when the gateway could not serve it at all (the session is
	 * paused, busy, gone): the caller may answer a Connect error from it
	 * instead of exit 1 (then err holds the same message). NULL otherwise. */
	const struct api_error *error;
	/* A real one keeps running in the background (Xvfb, startxfce4,
	 * novnc_proxy): report it as running, and answer its kill with
	 * success, until killed (the SDK's stream.stop() kills novnc_proxy). */
	bool lingers;
};

typedef void (*desktop_done_fn)(void *ud, const struct desktop_answer *a);

/* The hook: recognises cmd + args (desktop_cmd_parse_argv) and, when it
 * is a desktop command, starts serving it on s. Returns 1 with *out set
 * (done follows), or 0 when it is not one (nothing happened). Never fails
 * otherwise: trouble becomes an answer with exit code 1. */
int desktop_serve_try(struct sess *s, const char *cmd, const char *const *args, size_t nargs,
		      desktop_done_fn done, void *ud, struct desktop_serve **out);
/* Serves op (kind != DESKTOP_NONE; only borrowed) on s; as above. Returns
 * the serving, never NULL but when out of memory (then nothing happened
 * and done is not called). */
struct desktop_serve *desktop_serve_start(struct sess *s, const struct desktop_op *op,
					  desktop_done_fn done, void *ud);
/* Abandons a serving without calling done (input already sent stays sent).
 * Accepts NULL. */
void desktop_serve_cancel(struct desktop_serve *d);

/* Holds img (the reference is taken over) as the file at path of s, as a
 * served scrot does. Returns 0, or -ENOMEM (img let go). */
int desktop_held_keep(struct sess *s, const char *path, struct display_image *img);
/* For the files endpoint (GET /files?path=): the PNG a served scrot wrote
 * to path, as a new reference in *img (display_image_unref it; img->data,
 * img->len are the file's bytes), or -ENOENT when none is held (read the
 * guest's file as usual). The file stays held for another read. */
int desktop_held_take(struct sess *s, const char *path, struct display_image **img);
/* For Filesystem.Remove, and before a write to path (the guest's new file
 * is the one to read then): lets the held file go. Returns 0, or -ENOENT when
 * none is held (remove the guest's file as usual). */
int desktop_held_remove(struct sess *s, const char *path);

/* For the live view at the SDK's URL (6080-{id}.{domain}/vnc.html): whether
 * the SDK started its stream (x11vnc and novnc_proxy both "run"), the port
 * novnc_proxy was told to listen on, and the password it stored (NULL when
 * the stream needs none: x11vnc got -nopw). */
bool desktop_stream_started(struct sess *s, int *port);
const char *desktop_stream_password(struct sess *s);

#endif
