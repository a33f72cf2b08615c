/* gateway/stream/vnc.c: see vnc.h. */
#include "gateway/stream/vnc.h"

#include "common/log.h"
#include "display/vnc_share.h"
#include "gateway/action/keys.h"
#include "gateway/core/audit.h"
#include "gateway/session/session.h"
#include "gateway/stream/stream_hub.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	uint32_t keysym;
	const char *qcode;
} specials[] = {
	{ 0xff08, "backspace" }, { 0xff09, "tab" },	    { 0xff0d, "ret" },
	{ 0xff13, "pause" },	 { 0xff14, "scroll_lock" }, { 0xff1b, "esc" },
	{ 0xffff, "delete" },	 { 0xff50, "home" },	    { 0xff51, "left" },
	{ 0xff52, "up" },	 { 0xff53, "right" },	    { 0xff54, "down" },
	{ 0xff55, "pgup" },	 { 0xff56, "pgdn" },	    { 0xff57, "end" },
	{ 0xff61, "print" },	 { 0xff63, "insert" },	    { 0xff67, "menu" },
	{ 0xff7f, "num_lock" },	 { 0xff8d, "kp_enter" },    { 0xffaa, "kp_multiply" },
	{ 0xffab, "kp_add" },	 { 0xffad, "kp_subtract" }, { 0xffae, "kp_decimal" },
	{ 0xffaf, "kp_divide" }, { 0xffe1, "shift" },	    { 0xffe2, "shift_r" },
	{ 0xffe3, "ctrl" },	 { 0xffe4, "ctrl_r" },	    { 0xffe5, "caps_lock" },
	{ 0xffe7, "meta_l" },	 { 0xffe8, "meta_r" },	    { 0xffe9, "alt" },
	{ 0xffea, "alt_r" },	 { 0xffeb, "meta_l" },	    { 0xffec, "meta_r" },
	{ 0xfe03, "alt_r" },
};

const char *vnc_keysym_qcode(uint32_t keysym)
{
	static const char *const kp[] = { "kp_0", "kp_1", "kp_2", "kp_3", "kp_4",
					  "kp_5", "kp_6", "kp_7", "kp_8", "kp_9" };
	static const char *const fn[] = { "f1", "f2", "f3", "f4",  "f5",  "f6",
					  "f7", "f8", "f9", "f10", "f11", "f12" };
	const char *q;
	bool shift;

	/* Printable ASCII: the key that types it; the client sends Shift itself. */
	if (keysym >= 0x20 && keysym <= 0x7e)
		return keys_char_to_qcodes(keysym, &q, &shift) == 0 ? q : NULL;
	if (keysym >= 0xffb0 && keysym <= 0xffb9)
		return kp[keysym - 0xffb0];
	if (keysym >= 0xffbe && keysym <= 0xffc9)
		return fn[keysym - 0xffbe];
	for (size_t i = 0; i < sizeof(specials) / sizeof(specials[0]); i++)
		if (specials[i].keysym == keysym)
			return specials[i].qcode;
	return NULL;
}

static void on_input(void *ud)
{
	struct gw *gw = ud;

	lws_cancel_service(gw->ctx);
}

/* 8 password characters from a fresh token. */
static int new_password(char *out)
{
	char t[AUTH_TOKEN_LEN + 1];

	if (auth_new_token(t) < 0)
		return -1;
	memcpy(out, t, VNC_SHARE_PASSWORD_LEN);
	out[VNC_SHARE_PASSWORD_LEN] = '\0';
	return 0;
}

/* The door as one viewer of the hub: every wake-up shows the newest
 * frame and applies the clients' input; the session going stops it. */
static void door_poke(struct stream_viewer *v, bool changed)
{
	(void)changed;
	if (v->hub)
		vnc_poke(v->hub);
}

static void door_gone(struct stream_viewer *v, struct stream_hub *h)
{
	(void)v;
	vnc_stop(h); /* frees v */
}

static const struct stream_viewer_ops door_ops = {
	.poke = door_poke,
	.text = NULL, /* VNC clients get no JSON */
	.gone = door_gone,
};

static int door_open(struct stream_hub *h, struct gw *gw, const char **code, char *err,
		     size_t errlen)
{
	const char *bind = gw->vnc_listen[0] ? gw->vnc_listen : "127.0.0.1";
	struct sess *s = h->s;
	int rc;

	*code = "internal";
	if (h->vnc)
		return 1;
	if (new_password(h->vnc_view_pw) < 0 || new_password(h->vnc_control_pw) < 0) {
		snprintf(err, errlen, "no randomness");
		return -EIO;
	}
	h->vnc_viewer = calloc(1, sizeof(*h->vnc_viewer));
	if (!h->vnc_viewer) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = display_vnc_share_start(bind, sess_screen(s).width, sess_screen(s).height,
				     h->vnc_control_pw, h->vnc_view_pw, on_input, gw, &h->vnc, err,
				     errlen);
	if (rc < 0) {
		free(h->vnc_viewer);
		h->vnc_viewer = NULL;
		*code = "vnc_failed";
		return rc;
	}
	/* The VNC clients act as one viewer of the hub (frames, the lease). */
	h->vnc_viewer->ops = &door_ops;
	h->vnc_viewer->gw = gw;
	h->vnc_viewer->scope = AUTH_CONTROL;
	stream_hub_add(h, h->vnc_viewer);
	snprintf(h->vnc_viewer->name, sizeof(h->vnc_viewer->name), "VNC client");
	audit_log(gw, "vnc_started", sess_id(s), NULL, NULL,
		  json_pack("{s:s, s:i}", "listen", bind, "port", display_vnc_share_port(h->vnc)));
	h->vnc_buttons = 0;
	h->vnc_serial++;
	vnc_poke(h);
	return 0;
}

int vnc_start(struct stream_hub *h, struct gw *gw, const char **code, char *err, size_t errlen)
{
	int rc = door_open(h, gw, code, err, errlen);

	if (rc >= 0)
		h->vnc_asked = true;
	return rc;
}

int vnc_hold(struct stream_hub *h, struct gw *gw, unsigned *serial, const char **code, char *err,
	     size_t errlen)
{
	int rc = door_open(h, gw, code, err, errlen);

	if (rc < 0)
		return rc;
	h->vnc_holders++;
	*serial = h->vnc_serial;
	return 0;
}

static void on_idle(lws_sorted_usec_list_t *sul)
{
	struct stream_hub *h = lws_container_of(sul, struct stream_hub, vnc_idle);
	int all, controllers;

	if (!h->vnc || h->vnc_asked || h->vnc_holders)
		return;
	display_vnc_share_clients(h->vnc, &all, &controllers);
	if (all) /* still leaving */
		lws_sul_schedule(sess_gw(h->s)->ctx, 0, &h->vnc_idle, on_idle,
				 (lws_usec_t)VNC_IDLE_STOP_S * LWS_US_PER_SEC);
	else
		vnc_stop(h);
}

void vnc_unhold(struct stream_hub *h, unsigned serial)
{
	if (!h->vnc || serial != h->vnc_serial || h->vnc_holders <= 0)
		return;
	if (--h->vnc_holders == 0 && !h->vnc_asked)
		lws_sul_schedule(sess_gw(h->s)->ctx, 0, &h->vnc_idle, on_idle,
				 (lws_usec_t)VNC_IDLE_STOP_S * LWS_US_PER_SEC);
}

void vnc_stop(struct stream_hub *h)
{
	if (!h->vnc)
		return;
	lws_sul_cancel(&h->vnc_idle);
	stream_hub_remove(h, h->vnc_viewer, "vnc_stopped"); /* gives back control if held */
	display_vnc_share_stop(h->vnc);
	h->vnc = NULL;
	free(h->vnc_viewer);
	h->vnc_viewer = NULL;
	h->vnc_asked = false;
	h->vnc_holders = 0;
	audit_log(sess_gw(h->s), "vnc_stopped", sess_id(h->s), NULL, NULL, NULL);
}

/* One input event of a control client, through the lease. */
static void apply(struct stream_hub *h, const struct vnc_share_input *in)
{
	struct stream_viewer *v = h->vnc_viewer;
	struct stream_msg m = { 0 };
	const char *code, *msg;
	int pressed;

	if (!h->controller && stream_hub_take(h, v, &code, &msg) < 0)
		return;
	if (h->controller != v)
		return; /* a person holds control: VNC input waits its turn */
	if (in->kind == VNC_IN_KEY) {
		m.kind = SM_KEY;
		m.qcode = vnc_keysym_qcode(in->keysym);
		m.down = in->down;
		if (m.qcode)
			stream_hub_input(h, v, &m);
		return;
	}
	m.x = in->x < 0				 ? 0
	      : in->x >= sess_screen(h->s).width ? sess_screen(h->s).width - 1
						 : in->x;
	m.y = in->y < 0				  ? 0
	      : in->y >= sess_screen(h->s).height ? sess_screen(h->s).height - 1
						  : in->y;
	pressed = in->buttons & ~h->vnc_buttons;
	h->vnc_buttons = in->buttons;
	if (pressed & (8 | 16)) { /* RFB wheel buttons: a notch per press */
		m.kind = SM_WHEEL;
		m.dy = pressed & 8 ? -1 : 1;
		stream_hub_input(h, v, &m);
		m.dy = 0;
	}
	m.kind = SM_POINTER;
	m.buttons = in->buttons & 7; /* left, middle, right: the same bits */
	stream_hub_input(h, v, &m);
}

void vnc_poke(struct stream_hub *h)
{
	struct vnc_share_input in[64];
	struct display_frame *f;
	int n, all, controllers;

	if (!h->vnc || !sess_mirror(h->s))
		return;
	f = display_mirror_latest(sess_mirror(h->s));
	if (f)
		display_vnc_share_show(h->vnc, f);
	display_frame_unref(f);
	while ((n = display_vnc_share_input(h->vnc, in, 64)) > 0)
		for (int i = 0; i < n; i++)
			apply(h, &in[i]);
	display_vnc_share_clients(h->vnc, &all, &controllers);
	if (!controllers && h->controller == h->vnc_viewer)
		stream_hub_release(h, h->vnc_viewer, "disconnected");
}
