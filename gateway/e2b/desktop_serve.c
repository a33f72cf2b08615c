/* gateway/e2b/desktop_serve.c: see desktop_serve.h. Input and screenshots
 * are runs (action/run.h), whose done comes back on the loop; Xvfb at
 * another size runs the guest's vitrine-screen and waits for the session
 * to show the size, and xdpyinfo waits for that, both polling on a timer;
 * everything else is answered from the session at once, the answer handed
 * over from a zero-delay timer so that done never runs inside the caller. */
#include "gateway/e2b/desktop_serve.h"

#include "common/fsutil.h"
#include "common/log.h"
#include "display/encode.h"
#include "gateway/action/batch.h"
#include "gateway/action/run.h"
#include "gateway/core/gw.h"
#include "gateway/e2b/desktop_held.h"
#include "gateway/guest/exec.h"
#include "gateway/guest/guest_apps.h"
#include "gateway/session/session.h"
#include "vmm-qemu/guest_prep.h"
#include "vmm-qemu/spec.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The stream's processes have no pid: pgrep answers this one. */
#define FAKE_X11VNC_PID 4242
/* A served button waits for the screen to be quiet this long after it
 * (at most SETTLE_TIMEOUT_MS), as xdotool waits for X to take it. */
#define SETTLE_QUIET_MS 150
#define SETTLE_TIMEOUT_MS 3000
/* Xvfb at another size: the guest's script sets it (xrandr), then the
 * session must show it (sess_follow_screen); xdpyinfo waits as long. */
#define SCREEN_SCRIPT "/usr/local/bin/vitrine-screen"
#define SCREEN_SCRIPT_TIMEOUT_S 30
#define SCREEN_SHOWN_MS 15000
#define SCREEN_WAIT_MS ((SCREEN_SCRIPT_TIMEOUT_S + 5) * 1000 + SCREEN_SHOWN_MS)
#define SCREEN_POLL_US (50 * LWS_US_PER_MS)

/* A session's desktop state: found through its listener, freed when the
 * session is destroyed. */
struct desktop_sess {
	struct sess_listener listener; /* sess::listeners */
	struct desktop_held held;
	bool vnc_running; /* "x11vnc" started and not killed */
	int vnc_port;
	int novnc_port; /* "novnc_proxy --listen" port, 0 for none */
	char password[DESKTOP_MAX_NAME + 1]; /* x11vnc -storepasswd, "" for none */
	bool use_password; /* x11vnc -usepw */
	/* The screen size the last Xvfb asked for: being set (by xvfb),
	 * or why it could not be ("" when it was, or none was asked). */
	struct desktop_serve *xvfb; /* not owned: the serving that sets it, or NULL */
	char screen_failed[300];
};

/* What a serving waits for on its poll timer. */
enum desktop_wait {
	WAIT_NONE,
	WAIT_SCRIPT, /* Xvfb: the guest's vitrine-screen to end */
	WAIT_SHOWN, /* Xvfb: the session to show the size */
	WAIT_XVFB, /* xdpyinfo: the Xvfb under way to end */
};

struct desktop_serve {
	struct sess *s; /* NULL once the session is gone (a waiting serving hears it) */
	enum desktop_kind kind;
	char path[DESKTOP_MAX_PATH + 1]; /* SCROT */
	struct run *run; /* the input or screenshot under way, or NULL */
	lws_sorted_usec_list_t sul; /* hands a ready answer over */
	int exit_code;
	bool lingers;
	bool has_error;
	struct api_error error;
	char out[512];
	size_t out_len;
	char err[512];
	size_t err_len;
	desktop_done_fn done;
	void *ud;
	/* Xvfb and xdpyinfo that wait: */
	enum desktop_wait wait;
	struct sess_listener listener; /* sess::listeners while it waits */
	lws_sorted_usec_list_t poll;
	int64_t deadline_ms;
	struct exec_job *exec; /* owned (released): vitrine-screen */
	int width, height; /* the size Xvfb sets */
	char display[16]; /* xdpyinfo's */
};

static void on_sess(struct sess_listener *l, struct sess *s, enum sess_signal sig, const void *data)
{
	struct desktop_sess *ds = lws_container_of(l, struct desktop_sess, listener);

	(void)data;
	if (sig != SESS_SIGNAL_DESTROY)
		return;
	sess_unlisten(s, l);
	desktop_held_clear(&ds->held);
	free(ds);
}

/* The desktop state of s, made when create is set; NULL when there is none
 * (or no memory). */
static struct desktop_sess *ds_of(struct sess *s, bool create)
{
	struct sess_listener *l = sess_find_listener(s, on_sess);
	struct desktop_sess *ds;

	if (l)
		return lws_container_of(l, struct desktop_sess, listener);
	if (!create || !(ds = calloc(1, sizeof(*ds))))
		return NULL;
	ds->listener.notify = on_sess;
	sess_listen(s, &ds->listener);
	return ds;
}

static void put_out(struct desktop_serve *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void put_out(struct desktop_serve *d, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(d->out, sizeof(d->out), fmt, ap);
	va_end(ap);
	d->out_len = n < 0 ? 0 : (size_t)n >= sizeof(d->out) ? sizeof(d->out) - 1 : (size_t)n;
}

/* Exit 1 with "vitrine: why" on stderr, as a tool that failed. */
static void put_failure(struct desktop_serve *d, const char *why)
{
	int n = snprintf(d->err, sizeof(d->err), "vitrine: %s\n", why);

	d->exit_code = 1;
	d->err_len = n < 0 ? 0 : (size_t)n >= sizeof(d->err) ? sizeof(d->err) - 1 : (size_t)n;
}

static void stop_waiting(struct desktop_serve *d);

static void finish(struct desktop_serve *d)
{
	struct desktop_answer a = {
		.kind = d->kind,
		.exit_code = d->exit_code,
		.out = d->out,
		.out_len = d->out_len,
		.err = d->err,
		.err_len = d->err_len,
		.error = d->has_error ? &d->error : NULL,
		.lingers = d->lingers,
	};
	desktop_done_fn done = d->done;
	void *ud = d->ud;

	stop_waiting(d);
	d->done = NULL;
	done(ud, &a);
	free(d);
}

static void on_sul(lws_sorted_usec_list_t *sul)
{
	finish(lws_container_of(sul, struct desktop_serve, sul));
}

static void run_done(void *ud, struct run_outcome *o)
{
	struct desktop_serve *d = ud;

	d->run = NULL;
	if (o->failed) {
		d->has_error = true;
		d->error = o->err;
		put_failure(d, o->err.message);
	} else if (d->kind == DESKTOP_SCROT && o->image) {
		/* The run listens to its session: it ends before the session
		 * is freed, so s is still there. */
		if (desktop_held_keep(d->s, d->path, o->image) < 0)
			put_failure(d, "out of memory");
		o->image = NULL;
	} else if (d->kind == DESKTOP_SCROT) {
		put_failure(d, "no screenshot was taken");
	}
	display_image_unref(o->image);
	json_decref(o->reply);
	finish(d);
}

/* Input through Vitrine's own path: a run of the action, no screenshot. */
static void serve_input(struct desktop_serve *d, const struct desktop_op *op)
{
	struct actions_ctx ctx = { .screen_width = sess_screen(d->s).width,
				   .screen_height = sess_screen(d->s).height,
				   .keymap = sess_keymap(d->s) };
	struct actions_error aerr;
	struct shot_opts shot;
	struct api_error e;
	struct action_batch *a;
	long index;
	json_t *j = desktop_cmd_action(op, sess_screen(d->s).width, sess_screen(d->s).height);

	if (!j) {
		put_failure(d, "out of memory");
		return;
	}
	a = batch_parse(j, &ctx, &aerr, &index); /* one action: a batch of one */
	json_decref(j);
	if (!a) {
		put_failure(d, aerr.message);
		return;
	}
	shot_opts_default(&shot);
	if (d->kind == DESKTOP_CLICK || d->kind == DESKTOP_MOUSE_DOWN ||
	    d->kind == DESKTOP_MOUSE_UP) {
		/* xdotool answers once X took the button; QMP's input is only
		 * sent. What follows may reach the guest another way (a type
		 * the keymap cannot express goes through Chromium itself): let
		 * the guest act on the button first, as the screen shows (a
		 * tiny screenshot, thrown away, is the price of the settle). */
		a->want_screenshot = true;
		shot.quiet_ms = SETTLE_QUIET_MS;
		shot.timeout_ms = SETTLE_TIMEOUT_MS;
		shot.enc.quality = 10;
		shot.enc.max_width = shot.enc.max_height = 64;
	}
	if (!(d->run = run_start(d->s, a, &shot, run_done, d, &e))) {
		d->has_error = true;
		d->error = e;
		put_failure(d, e.message);
	}
}

static void serve_scrot(struct desktop_serve *d, const struct desktop_op *op)
{
	struct shot_opts shot;
	struct api_error e;

	snprintf(d->path, sizeof(d->path), "%s", op->path);
	shot_opts_default(&shot);
	shot.enc.format = DISPLAY_FORMAT_PNG;
	shot.quiet_ms = 0; /* what is on the screen now, as scrot takes it */
	if (!(d->run = run_start(d->s, NULL, &shot, run_done, d, &e))) {
		d->has_error = true;
		d->error = e;
		put_failure(d, e.message);
	}
}

/* A command in the guest that nobody waits for (the SDK runs xdg-open and
 * gtk-launch in the background and lets go of them). */
static void serve_detached(struct desktop_serve *d, const char *const *argv, int timeout_s)
{
	struct sess *s = d->s;
	struct exec_job *j;

	if (!sess_guest_free(s) || !sess_agent_of(s)) {
		put_failure(d, "the session is not running: commands need a ready session");
		return;
	}
	if (!(j = exec_new(argv, NULL, 0, timeout_s))) {
		put_failure(d, "out of memory");
		return;
	}
	if (exec_start(j, sess_gw(s), sess_agent_of(s), NULL, NULL) < 0) {
		exec_free(j);
		put_failure(d, "cannot start the command in the guest");
		return;
	}
	exec_release(j); /* freed when the command ends */
}

static void serve_open(struct desktop_serve *d, const struct desktop_op *op)
{
	char js[VMM_MAX_URL * 2 + 128];

	if (guest_prep_nav_js(op->url, js, sizeof(js)) < 0) { /* desktop_cmd made sure */
		put_failure(d, "the url is too long");
		return;
	}
	serve_detached(d,
		       (const char *const[]){ "/bin/sh", "-c", guest_open_script, js, op->url,
					      NULL },
		       GUEST_OPEN_TIMEOUT_S);
}

static void serve_launch(struct desktop_serve *d, const struct desktop_op *op)
{
	serve_detached(d,
		       (const char *const[]){ "/bin/sh", "-c", guest_launch_script, op->name,
					      op->arg[0] ? op->arg : NULL, NULL },
		       GUEST_LAUNCH_TIMEOUT_S);
}

/* The stream's commands: the live view is the gateway's, so they only
 * keep the state the SDK will ask about again. */
static void serve_stream(struct desktop_serve *d, const struct desktop_op *op,
			 struct desktop_sess *ds)
{
	switch (op->kind) {
	case DESKTOP_VNC_PGREP: /* pgrep: exit 1 when nothing matches */
		if (ds->vnc_running)
			put_out(d, "%d\n", FAKE_X11VNC_PID);
		else
			d->exit_code = 1;
		break;
	case DESKTOP_VNC_PKILL:
		d->exit_code = ds->vnc_running ? 0 : 1;
		ds->vnc_running = false;
		ds->novnc_port = 0;
		break;
	case DESKTOP_X11VNC: /* -bg: it forks, says its port and exits */
		ds->vnc_running = true;
		ds->vnc_port = op->port;
		ds->use_password = op->use_password;
		put_out(d, "PORT=%d\n", op->port);
		break;
	case DESKTOP_X11VNC_PASSWD:
		snprintf(ds->password, sizeof(ds->password), "%s", op->name);
		break;
	case DESKTOP_NOVNC:
		ds->novnc_port = op->port;
		d->lingers = true;
		break;
	case DESKTOP_NETSTAT: /* grep: exit 1 when nothing matches */
		if (ds->novnc_port && ds->novnc_port == op->port)
			put_out(d,
				"tcp        0      0 0.0.0.0:%d            0.0.0.0:*       "
				"        LISTEN     \n",
				op->port);
		else
			d->exit_code = 1;
		break;
	default:
		break;
	}
}

/* ---- Xvfb's screen size, and xdpyinfo waiting for it ---- */

/* The session of a waiting serving is going: the serving fails (handed
 * over from the timer, as every answer), its session forgotten. */
static void on_waiting_sess(struct sess_listener *l, struct sess *s, enum sess_signal sig,
			    const void *data)
{
	struct desktop_serve *d = lws_container_of(l, struct desktop_serve, listener);

	(void)data;
	if (sig != SESS_SIGNAL_DESTROY)
		return;
	stop_waiting(d);
	d->s = NULL;
	put_failure(d, "the session is gone");
	lws_sul_schedule(sess_gw(s)->ctx, 0, &d->sul, on_sul, 1);
}

/* Ends d's waiting: no timer, no listener, the script let go (freed when
 * it ends); an Xvfb that was setting the screen no longer is. */
static void stop_waiting(struct desktop_serve *d)
{
	struct desktop_sess *ds;

	if (d->wait == WAIT_NONE)
		return;
	lws_sul_cancel(&d->poll);
	if (d->exec)
		exec_release(d->exec);
	d->exec = NULL;
	if (d->s) {
		sess_unlisten(d->s, &d->listener);
		if ((ds = ds_of(d->s, false)) && ds->xvfb == d)
			ds->xvfb = NULL;
	}
	d->wait = WAIT_NONE;
}

static void on_poll(lws_sorted_usec_list_t *sul);

/* d waits (what) until deadline_ms, listening to its session: on its
 * timer, which polls the screen, or, for the script, the script's
 * completion (the timer then only keeps the deadline). */
static void start_waiting(struct desktop_serve *d, enum desktop_wait what, int64_t ms)
{
	d->wait = what;
	d->deadline_ms = fs_now_ms() + ms;
	d->listener.notify = on_waiting_sess;
	sess_listen(d->s, &d->listener);
	lws_sul_schedule(sess_gw(d->s)->ctx, 0, &d->poll, on_poll,
			 what == WAIT_SCRIPT ? (lws_usec_t)ms * LWS_US_PER_MS : SCREEN_POLL_US);
}

/* Xvfb could not set the size: why, for this answer and for xdpyinfo. */
static void xvfb_failed(struct desktop_serve *d, struct desktop_sess *ds, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void xvfb_failed(struct desktop_serve *d, struct desktop_sess *ds, const char *fmt, ...)
{
	char why[sizeof(ds->screen_failed)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (ds)
		snprintf(ds->screen_failed, sizeof(ds->screen_failed), "%s", why);
	if (d->s)
		log_warn("e2b", "session %s: %s", sess_id(d->s), why);
	put_failure(d, why);
}

/* What xdpyinfo prints for s, or its failure when Xvfb failed. */
static void answer_xdpyinfo(struct desktop_serve *d, struct desktop_sess *ds)
{
	struct sess *s = d->s;

	if (ds && ds->screen_failed[0]) {
		char why[sizeof(ds->screen_failed) + 64];

		snprintf(why, sizeof(why), "xdpyinfo: unable to open display \"%s\": %s",
			 d->display, ds->screen_failed);
		put_failure(d, why);
		return;
	}
	sess_follow_screen(s);
	put_out(d,
		"name of display:    %s\nversion number:    11.0\n"
		"vendor string:    Vitrine\nnumber of screens:    1\n\n"
		"screen #0:\n  dimensions:    %dx%d pixels\n  depths (1):    24\n",
		d->display, sess_screen(s).width, sess_screen(s).height);
}

/* The guest's vitrine-screen ended: on success the session is told the
 * size (it may lie past what QEMU's VNC shows) and d waits to see it. */
static void script_ended(struct desktop_serve *d, struct desktop_sess *ds)
{
	const struct agent_exec_result *res;
	const char *err = NULL;

	if (exec_result(d->exec, &res, &err) < 0) {
		xvfb_failed(d, ds, "Xvfb: the guest's screen could not be set to %dx%d: %s",
			    d->width, d->height, err ? err : "the command failed");
		return;
	}
	if (res->timed_out || res->exit_code != 0) {
		size_t n = res->err_len;

		while (n && (res->err[n - 1] == '\n' || res->err[n - 1] == '\r'))
			n--;
		xvfb_failed(d, ds, "Xvfb: the guest's screen could not be set to %dx%d: %.*s",
			    d->width, d->height, n ? (int)(n > 200 ? 200 : n) : 16,
			    n		     ? res->err
			    : res->timed_out ? "it timed out"
					     : "no reason given");
		return;
	}
	exec_release(d->exec);
	d->exec = NULL;
	d->wait = WAIT_SHOWN;
	d->deadline_ms = fs_now_ms() + SCREEN_SHOWN_MS;
	sess_screen_said(d->s, d->width, d->height);
}

/* A waiting serving looks (its timer, or the script's end): 0 to poll
 * again, 1 when answered. */
static int poll_once(struct desktop_serve *d)
{
	struct desktop_sess *ds = ds_of(d->s, false);
	bool late = fs_now_ms() >= d->deadline_ms;

	switch (d->wait) {
	case WAIT_SCRIPT:
		if (!exec_done(d->exec)) {
			if (!late)
				return 0;
			xvfb_failed(d, ds, "Xvfb: setting the screen to %dx%d took too long",
				    d->width, d->height);
			return 1;
		}
		script_ended(d, ds);
		if (d->wait != WAIT_SHOWN)
			return 1;
		/* fall through */
	case WAIT_SHOWN:
		sess_follow_screen(d->s);
		if (sess_screen(d->s).width == d->width && sess_screen(d->s).height == d->height) {
			if (ds)
				ds->screen_failed[0] = '\0';
			log_info("e2b", "session %s: the screen is %dx%d, as the SDK's Xvfb asked",
				 sess_id(d->s), d->width, d->height);
			d->lingers = true;
			return 1;
		}
		if (!late)
			return 0;
		xvfb_failed(
			d, ds,
			"Xvfb: the guest set its screen to %dx%d, but it shows %dx%d after %d s",
			d->width, d->height, sess_screen(d->s).width, sess_screen(d->s).height,
			SCREEN_SHOWN_MS / 1000);
		return 1;
	case WAIT_XVFB:
		if (ds && ds->xvfb && !late)
			return 0;
		if (ds && ds->xvfb)
			put_failure(d, "xdpyinfo: the screen is still being set");
		else
			answer_xdpyinfo(d, ds);
		return 1;
	case WAIT_NONE:
		break;
	}
	return 1;
}

static void look(struct desktop_serve *d)
{
	if (!poll_once(d)) {
		lws_sul_schedule(sess_gw(d->s)->ctx, 0, &d->poll, on_poll, SCREEN_POLL_US);
		return;
	}
	stop_waiting(d);
	finish(d);
}

static void on_poll(lws_sorted_usec_list_t *sul)
{
	look(lws_container_of(sul, struct desktop_serve, poll));
}

/* vitrine-screen ended (its completion): d looks at once. */
static void on_script(struct exec_job *j, void *ud)
{
	struct desktop_serve *d = ud;

	(void)j;
	lws_sul_cancel(&d->poll);
	look(d);
}

/* Xvfb D -screen 0 WxHxDEPTH: the guest's X server runs already; another
 * size is set in it, and the answer comes once the session shows it. */
static void serve_xvfb(struct desktop_serve *d, const struct desktop_op *op)
{
	struct sess *s = d->s;
	struct desktop_sess *ds = ds_of(s, true);
	char w[16], h[16];
	struct exec_job *j;

	d->width = op->width;
	d->height = op->height;
	if (!ds) {
		put_failure(d, "out of memory");
		return;
	}
	if (ds->xvfb) {
		put_failure(d, "Xvfb: another Xvfb is setting the screen's size");
		return;
	}
	if (op->depth != 24) {
		xvfb_failed(d, ds, "Xvfb: the guest's screen has depth 24, not %d", op->depth);
		return;
	}
	if (op->width < VMM_MIN_WIDTH || op->width > VMM_MAX_WIDTH || op->height < VMM_MIN_HEIGHT ||
	    op->height > VMM_MAX_HEIGHT) {
		xvfb_failed(d, ds,
			    "Xvfb: a %dx%d screen is not one a session can have (%dx%d to %dx%d)",
			    op->width, op->height, VMM_MIN_WIDTH, VMM_MIN_HEIGHT, VMM_MAX_WIDTH,
			    VMM_MAX_HEIGHT);
		return;
	}
	sess_follow_screen(s);
	if (op->width == sess_screen(s).width && op->height == sess_screen(s).height) {
		ds->screen_failed[0] = '\0';
		d->lingers = true;
		return;
	}
	if (!sess_guest_free(s) || !sess_agent_of(s)) {
		xvfb_failed(d, ds,
			    "Xvfb: the session is not running: its screen (%dx%d) cannot be set "
			    "to %dx%d",
			    sess_screen(s).width, sess_screen(s).height, op->width, op->height);
		return;
	}
	snprintf(w, sizeof(w), "%d", op->width);
	snprintf(h, sizeof(h), "%d", op->height);
	j = exec_new((const char *const[]){ SCREEN_SCRIPT, w, h, NULL }, NULL, 0,
		     SCREEN_SCRIPT_TIMEOUT_S);
	if (!j || exec_start(j, sess_gw(s), sess_agent_of(s), on_script, d) < 0) {
		exec_free(j);
		xvfb_failed(d, ds, "Xvfb: cannot start %s in the guest", SCREEN_SCRIPT);
		return;
	}
	log_info("e2b", "session %s: the SDK's Xvfb asks for %dx%d (the screen is %dx%d)",
		 sess_id(s), op->width, op->height, sess_screen(s).width, sess_screen(s).height);
	d->exec = j;
	ds->xvfb = d;
	start_waiting(d, WAIT_SCRIPT, (SCREEN_SCRIPT_TIMEOUT_S + 5) * 1000);
}

/* xdpyinfo: the screen, once an Xvfb under way has set it. */
static void serve_xdpyinfo(struct desktop_serve *d, const struct desktop_op *op)
{
	struct desktop_sess *ds = ds_of(d->s, false);

	snprintf(d->display, sizeof(d->display), "%s", op->display);
	if (ds && ds->xvfb)
		start_waiting(d, WAIT_XVFB, SCREEN_WAIT_MS);
	else
		answer_xdpyinfo(d, ds);
}

/* Answers that need nothing but the session. */
static void serve_now(struct desktop_serve *d, const struct desktop_op *op)
{
	struct sess *s = d->s;
	struct desktop_sess *ds;
	int n, px, py;

	switch (op->kind) {
	case DESKTOP_XRANDR:
		sess_follow_screen(s);
		n = desktop_fmt_xrandr(sess_screen(s).width, sess_screen(s).height, d->out,
				       sizeof(d->out));
		d->out_len = n < 0 ? 0 : (size_t)n;
		break;
	case DESKTOP_MOUSE_LOCATION:
		sess_pointer(s, &px, &py);
		n = desktop_fmt_mouse_location(px, py, d->out, sizeof(d->out));
		d->out_len = n < 0 ? 0 : (size_t)n;
		break;
	case DESKTOP_XVFB:
		serve_xvfb(d, op);
		break;
	case DESKTOP_XDPYINFO:
		serve_xdpyinfo(d, op);
		break;
	case DESKTOP_STARTXFCE4:
		d->lingers = true;
		break;
	case DESKTOP_XFCE_PS: /* nothing defunct: the desktop runs */
	case DESKTOP_XFCE_PGREP:
		break;
	default:
		if (!(ds = ds_of(s, true)))
			put_failure(d, "out of memory");
		else
			serve_stream(d, op, ds);
		break;
	}
}

struct desktop_serve *desktop_serve_start(struct sess *s, const struct desktop_op *op,
					  desktop_done_fn done, void *ud)
{
	struct desktop_serve *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->s = s;
	d->kind = op->kind;
	d->done = done;
	d->ud = ud;
	switch (op->kind) {
	case DESKTOP_MOVE:
	case DESKTOP_CLICK:
	case DESKTOP_SCROLL:
	case DESKTOP_MOUSE_DOWN:
	case DESKTOP_MOUSE_UP:
	case DESKTOP_KEY:
		serve_input(d, op);
		break;
	case DESKTOP_TYPE:
		if (op->text_len)
			serve_input(d, op);
		break;
	case DESKTOP_SCROT:
		serve_scrot(d, op);
		break;
	case DESKTOP_XDG_OPEN:
		serve_open(d, op);
		break;
	case DESKTOP_GTK_LAUNCH:
		serve_launch(d, op);
		break;
	default:
		serve_now(d, op);
		break;
	}
	if (!d->run && d->wait == WAIT_NONE) /* answered already: hand it over from the loop */
		lws_sul_schedule(sess_gw(s)->ctx, 0, &d->sul, on_sul, 1);
	return d;
}

int desktop_serve_try(struct sess *s, const char *cmd, const char *const *args, size_t nargs,
		      desktop_done_fn done, void *ud, struct desktop_serve **out)
{
	struct desktop_op *op = malloc(sizeof(*op)); /* ~11 KiB: not on the loop's stack */
	int rc = 0;

	*out = NULL;
	if (!op)
		return 0; /* the guest runs it then */
	if (desktop_cmd_parse_argv(cmd, args, nargs, op) != DESKTOP_NONE &&
	    (*out = desktop_serve_start(s, op, done, ud)))
		rc = 1;
	free(op);
	return rc;
}

void desktop_serve_cancel(struct desktop_serve *d)
{
	if (!d)
		return;
	run_cancel(d->run);
	stop_waiting(d);
	lws_sul_cancel(&d->sul);
	free(d);
}

int desktop_held_keep(struct sess *s, const char *path, struct display_image *img)
{
	struct desktop_sess *ds = ds_of(s, true);

	if (!ds) {
		display_image_unref(img);
		return -ENOMEM;
	}
	desktop_held_put(&ds->held, path, img, fs_now_ms());
	return 0;
}

int desktop_held_take(struct sess *s, const char *path, struct display_image **img)
{
	struct desktop_sess *ds = ds_of(s, false);
	struct display_image *held = ds ? desktop_held_get(&ds->held, path, fs_now_ms()) : NULL;

	*img = held ? display_image_ref(held) : NULL;
	return held ? 0 : -ENOENT;
}

int desktop_held_remove(struct sess *s, const char *path)
{
	struct desktop_sess *ds = ds_of(s, false);

	return ds && desktop_held_drop(&ds->held, path, fs_now_ms()) ? 0 : -ENOENT;
}

bool desktop_stream_started(struct sess *s, int *port)
{
	struct desktop_sess *ds = ds_of(s, false);
	bool on = ds && ds->vnc_running && ds->novnc_port;

	if (port)
		*port = on ? ds->novnc_port : 0;
	return on;
}

const char *desktop_stream_password(struct sess *s)
{
	struct desktop_sess *ds = ds_of(s, false);

	return ds && ds->use_password && ds->password[0] ? ds->password : NULL;
}
