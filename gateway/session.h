/* gateway/session.h: the session registry and each session's lifecycle:
 * starting (QEMU booting) -> ready (the guest says its page is up) or
 * failed; deleted or expired sessions are destroyed at once. A session's
 * guest is serviced by a timer on the lws loop. */
#ifndef VITRINE_GATEWAY_SESSION_H
#define VITRINE_GATEWAY_SESSION_H

#include "display/encode_cache.h"
#include "display/mirror.h"
#include "gateway/auth.h"
#include "gateway/gw.h"
#include "gateway/session_spec.h"
#include "vmm-qemu/vm.h"

#include <jansson.h>
#include <libwebsockets.h>

#define SESS_MAX_WAITERS 16

enum sess_state { SESS_STARTING, SESS_READY, SESS_FAILED };

struct sess {
	struct sess *next; /* gw::sessions */
	struct gw *gw;
	char id[24];
	enum sess_state state;
	char error[1024]; /* why it failed */
	char control_token[AUTH_TOKEN_LEN + 1];
	char view_token[AUTH_TOKEN_LEN + 1];
	struct session_request req;
	struct vmm_image image;
	struct vmm_vm *vm; /* owned; NULL once the guest is gone */
	int width, height;
	int64_t created_ms, ready_ms, expires_ms; /* monotonic; expires_ms 0: never */
	lws_sorted_usec_list_t sul; /* services the guest, checks expiry */
	struct display_mirror *mirror; /* owned; the guest's screen */
	struct display_encode_cache *shots; /* owned; encodings of recent frames */
	struct run *runs; /* owned list of actions under way, linked by run::next */
	int pointer_x, pointer_y; /* where the last action left the pointer */
	int64_t last_click_ms; /* when the last click action ended */
	struct lws *waiters[SESS_MAX_WAITERS]; /* HTTP requests waiting for a state change */
	struct stream_hub *hub; /* owned: live viewers and control lease (stream_hub.h); NULL until used */
};

/* Starts a session for req: loads the image, boots the guest. Returns 0
 * with *out linked into gw, or -errno with *e filled (nothing is left). */
int sess_create(struct gw *gw, const struct session_request *req, struct sess **out,
		struct api_error *e);
/* The session with id, or NULL. */
struct sess *sess_find(struct gw *gw, const char *id);
/* Unlinks, stops the guest, wakes its waiters, frees. Accepts NULL. */
void sess_destroy(struct sess *s);
/* Destroys every session (shutdown). */
void sess_destroy_all(struct gw *gw);

/* {id, status, image, width, height, created_at_ms..., urls} and, when
 * with_tokens, {tokens: {control, view}}. */
json_t *sess_to_json(const struct sess *s, bool with_tokens);
const char *sess_state_name(enum sess_state st);

/* Registers wsi to be made writable when the session's state changes.
 * Returns 0, or -ENOSPC when too many requests wait already. */
int sess_add_waiter(struct sess *s, struct lws *wsi);
void sess_remove_waiter(struct sess *s, struct lws *wsi);

#endif
