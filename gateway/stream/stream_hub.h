/* gateway/stream/stream_hub.h: one session's live viewers: the list of them, the
 * encodings they share (keyed by the frame a viewer has and the frame it
 * gets, and quality: each encoded once), the control lease (one person at a
 * time drives the guest; agent actions are refused meanwhile), their input
 * into the guest, and the session's sharing tokens. Made on first use for a
 * session, which it listens to; freed when the session goes. Loop thread
 * only. */
#ifndef VITRINE_GATEWAY_STREAM_HUB_H
#define VITRINE_GATEWAY_STREAM_HUB_H

#include "common/ws_rx.h"
#include "display/stream_encode.h"
#include "gateway/core/audit.h"
#include "gateway/core/auth.h"
#include "gateway/session/live_auth.h"
#include "gateway/session/session.h"
#include "gateway/stream/share.h"
#include "gateway/stream/stream_msg.h"

#include <jansson.h>
#include <libwebsockets.h>
#include <stdint.h>

#define STREAM_CACHE 8
#define STREAM_TEXT_QUEUE 16 /* text messages waiting for a viewer */
#define STREAM_MAX_KEYS 16
#define STREAM_TYPE_GAP_MS 30 /* between two pieces of a text (stream_type_piece) */
/* Live-view sockets per session: authenticated viewers, and sockets still
 * to say who they are (so that strangers cannot keep the viewers out). */
#define STREAM_MAX_VIEWERS 32
#define STREAM_MAX_UNAUTHED 16

struct stream_hub;
struct run;
struct display_vnc_share;
struct display_mirror;

struct stream_viewer;

/* How the hub reaches a viewer: a WebSocket (api/stream.c) or the VNC
 * door's clients (stream/vnc.c). */
struct stream_viewer_ops {
	/* The loop woke: a frame, the cursor or a door's input may be new;
	 * changed says the screen or cursor did. */
	void (*poke)(struct stream_viewer *v, bool changed);
	/* Takes a JSON message (stolen): control changes, session events;
	 * NULL for a viewer that has no use for them. */
	void (*text)(struct stream_viewer *v, json_t *j);
	/* The session goes: the viewer leaves h (stream_hub_remove) or is
	 * cut off (v->hub = NULL), and may be freed. */
	void (*gone)(struct stream_viewer *v, struct stream_hub *h);
};

struct stream_viewer {
	struct stream_viewer *next; /* stream_hub::viewers */
	const struct stream_viewer_ops *ops;
	struct stream_hub *hub; /* NULL once the session is gone */
	struct lws *wsi;
	struct gw *gw;
	int id;
	char name[STREAM_NAME_MAX + 1];
	enum auth_scope scope; /* AUTH_NONE until authenticated */
	struct live_auth la; /* once authenticated: its token still views */
	struct audit_principal who; /* once authenticated: for the audit log */
	char remote[64]; /* the client's address ("" for the VNC door's) */
	int quality, max_fps;
	struct display_frame *base; /* owned reference: the frame it has */
	int64_t next_frame_ms; /* not before: max_fps */
	int cur_x, cur_y; /* the cursor position it was last sent; -1: none */
	uint64_t shape_serial; /* of the pointer shape it was last sent */
	struct ws_rx rx; /* the message being received */
	char *text[STREAM_TEXT_QUEUE]; /* owned, LWS_PRE headroom each */
	size_t text_len[STREAM_TEXT_QUEUE];
	int n_text;
	int close_code; /* non-zero: close with it at the next chance */
	char close_reason[120];
	bool ping_due;
	int64_t opened_ms, last_rx_ms;
	int buttons; /* held while in control */
	const char *keys[STREAM_MAX_KEYS]; /* qcodes held while in control */
	int n_keys;
	struct run *typing; /* owned: (a piece of) its SM_TYPE's text being typed, or NULL */
	char *type_text; /* owned: the text of its SM_TYPE, while it is typed; or NULL */
	size_t type_len, type_off, type_piece; /* bytes: all, typed, under way */
	lws_sorted_usec_list_t sul_type; /* the pause before the next piece */
	lws_sorted_usec_list_t sul_pace, sul_idle;
	uint64_t frames, bytes; /* sent */
};

struct stream_hub {
	struct sess *s; /* the session it serves (it listens to it) */
	struct sess_listener listener; /* on s: events go to the viewers; destroy frees the hub */
	struct stream_viewer *viewers; /* not owned (their connections, or the door, own them) */
	int n_viewers, next_id;
	struct stream_viewer *controller; /* holds the lease, or NULL */
	struct {
		uint64_t from, to; /* frame seqs; from 0: a whole frame */
		int quality;
		struct display_stream_msg *msg; /* owned reference; NULL: free or pending */
		struct frame_job *pending; /* being encoded on the encoder pool, or NULL */
		uint64_t used;
	} cache[STREAM_CACHE];
	uint64_t clock, seen_seq, encodes;
	const struct display_mirror *mirror; /* the mirror the cache and bases belong to */
	struct display_stream_msg *shape_msg; /* owned: the pointer shape, once per shape */
	uint64_t shape_serial, seen_shape;
	int seen_x, seen_y;
	struct share_table shares;
	/* Optional VNC door (gateway/vnc.c). */
	struct display_vnc_share *vnc; /* owned, or NULL */
	struct stream_viewer *vnc_viewer; /* owned: the VNC clients' place in the lease */
	char vnc_view_pw[9], vnc_control_pw[9];
	int vnc_buttons; /* RFB buttons last seen */
	bool vnc_asked; /* started or asked for by POST .../vnc (not only held) */
	int vnc_holders; /* the gateway's own clients of it (vnc_hold) */
	unsigned vnc_serial; /* which door this is: one more each start */
	lws_sorted_usec_list_t vnc_idle; /* a held door's stop, a while after its last holder */
};

/* Sends the session's event (borrowed) to every authenticated viewer as
 * {"type":"event","event":{...}}: viewers see pauses, resumes, expiry
 * warnings as they happen. */
void stream_hub_event(struct stream_hub *h, json_t *event);

/* The hub of s, made now if it has none; NULL when out of memory. The hub
 * lives until s is destroyed (it hears that). */
struct stream_hub *stream_hub_of(struct sess *s);
/* The hub of s, or NULL when nobody has looked at s yet. */
struct stream_hub *stream_hub_find(const struct sess *s);
/* Closes every viewer (1001: the session is going away) and frees. Accepts NULL. */
void stream_hub_destroy(struct stream_hub *h);
/* Wakes the viewers of every session whose screen or cursor changed. */
void stream_poke_all(struct gw *gw);
/* The name of the viewer holding control of s ("" is possible), or NULL. */
const char *stream_controller(const struct sess *s);

/* Adds v (its ops set) to the viewers of h. */
void stream_hub_add(struct stream_hub *h, struct stream_viewer *v);
/* Viewers of h that are authenticated (scope set), or not yet. */
int stream_hub_count(const struct stream_hub *h, bool authed);
/* Unlinks v, giving up control (reason for the audit log) if it held it. */
void stream_hub_remove(struct stream_hub *h, struct stream_viewer *v, const char *reason);
/* The message bringing a viewer from base (NULL: nothing) to f at quality,
 * from the cache: a new reference. NULL while it is being encoded on the
 * encoder pool (the viewers are made writable when it is done) or when it
 * cannot be encoded now: ask again later. */
struct display_stream_msg *stream_hub_message(struct stream_hub *h,
					      const struct display_frame *base,
					      const struct display_frame *f, int quality);

/* The message carrying pointer shape c: encoded once per shape. A new
 * reference, or NULL when out of memory. */
struct display_stream_msg *stream_hub_shape(struct stream_hub *h, const struct display_cursor *c);

/* Lease. Return 0, or a negative errno with an error code/message for the
 * viewer: -EPERM (view scope), -EBUSY (someone else holds it). */
int stream_hub_take(struct stream_hub *h, struct stream_viewer *v, const char **code,
		    const char **msg);
int stream_hub_release(struct stream_hub *h, struct stream_viewer *v, const char *reason);
/* Sends the input of m (pointer, wheel, key) from the controller v to the
 * guest. Returns 0, or -EPERM when v does not hold control, -EPIPE when the
 * guest is gone. */
int stream_hub_input(struct stream_hub *h, struct stream_viewer *v, const struct stream_msg *m);

/* Types text (len bytes of UTF-8, no NUL) for the controller v exactly as
 * the type action does (keys for what the keymap can type, the guest agent
 * for the rest), after letting go of the keys v holds (a Ctrl held for the
 * paste shortcut would turn the text into shortcuts). Text the keymap types
 * goes STREAM_TYPE_PIECE characters at a time, STREAM_TYPE_GAP_MS apart: a
 * paste's burst of key events at once overflows the guest's virtio input
 * queue under TCG, and QEMU drops what does not fit. One text at a time per
 * viewer. Later, on the loop, v's text op gets {"type":"typed","bytes":N}
 * or {"type":"error","code","message"} (the action's error: type_failed,
 * session_paused...). Returns 0, or -EPERM (v does not hold control),
 * -EBUSY (its last text is still being typed), -EPIPE (the guest is not
 * running: *code and *msg say why), -ENOMEM. Giving up control, or
 * leaving, abandons a text under way (what was typed stays). */
int stream_hub_type(struct stream_hub *h, struct stream_viewer *v, const char *text, size_t len,
		    const char **code, const char **msg);

/* {"type":"control","controller":{id,name}|null,"you":bool} for v. */
json_t *stream_control_json(const struct stream_hub *h, const struct stream_viewer *v);

#endif
