/* display/vnc_share.h: a session's screen for standard VNC clients, through
 * libvncserver (optional part of the live view). The server runs its own
 * threads; the owner pushes frames into it and drains the input that
 * clients holding the control password sent. Clients with the view
 * password only watch (libvncserver drops their input). Listens on one
 * address, loopback by default, and IPv6 only on ::1. */
#ifndef VITRINE_DISPLAY_VNC_SHARE_H
#define VITRINE_DISPLAY_VNC_SHARE_H

#include "display/frame.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VNC_SHARE_PASSWORD_LEN 8 /* VNC authentication uses 8 characters */
#define VNC_SHARE_MAX_INPUT 256
/* Guessing the passwords: each wrong one costs its connection a second, and
 * an address with this many wrong ones in VNC_SHARE_LOCK_S is refused,
 * right password or not, until that long after its last. */
#define VNC_SHARE_MAX_FAILURES 5
#define VNC_SHARE_LOCK_S 60
#define VNC_SHARE_FAIL_DELAY_MS 1000

enum vnc_share_input_kind { VNC_IN_POINTER, VNC_IN_KEY };

struct vnc_share_input {
	enum vnc_share_input_kind kind;
	int x, y,
		buttons; /* VNC_IN_POINTER: RFB button mask (1 left, 2 middle, 4 right, 8/16 wheel) */
	uint32_t keysym; /* VNC_IN_KEY: an X keysym */
	bool down;
};

struct display_vnc_share;

/* Starts a server for a width x height screen on bind_ipv4 (e.g.
 * "127.0.0.1") at a free port, with the two passwords (VNC_SHARE_PASSWORD_LEN
 * characters each). wake(ud) is called from a server thread when input is
 * queued (the gateway calls lws_cancel_service). Returns 0 with *out, or
 * -errno with a sentence in err. */
int display_vnc_share_start(const char *bind_ipv4, int width, int height, const char *control_pw,
			    const char *view_pw, void (*wake)(void *ud), void *ud,
			    struct display_vnc_share **out, char *err, size_t errlen);
/* Stops the server, disconnecting its clients, and frees. Accepts NULL. */
void display_vnc_share_stop(struct display_vnc_share *v);
int display_vnc_share_port(const struct display_vnc_share *v);
/* Shows frame f (the screen may change size): copies the pixels that
 * differ from what the clients have. Can't fail. */
void display_vnc_share_show(struct display_vnc_share *v, const struct display_frame *f);
/* Moves up to max queued input events to out; returns how many. */
int display_vnc_share_input(struct display_vnc_share *v, struct vnc_share_input *out, int max);
/* Connected clients, and how many of them hold the control password. */
void display_vnc_share_clients(struct display_vnc_share *v, int *all, int *controllers);

#define VNC_AUTH_CHALLENGE_LEN 16
/* VNC Authentication's answer to challenge for password (its first
 * VNC_SHARE_PASSWORD_LEN characters count, as in every VNC server and
 * client): the challenge DES-encrypted with the password as the key, into
 * out, as libvncserver checks it. Pure; any thread. */
void display_vnc_auth_response(const uint8_t challenge[VNC_AUTH_CHALLENGE_LEN],
			       const char *password, uint8_t out[VNC_AUTH_CHALLENGE_LEN]);

#endif
