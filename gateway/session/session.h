/* gateway/session/session.h: the session registry and each session's lifecycle:
 * starting (QEMU booting, or a template being restored) -> ready (the
 * guest says its page is up) <-> paused (in memory or on disk), or failed;
 * deleted or expired sessions are destroyed at once. A session's guest is
 * serviced by a timer on the lws loop; slow operations (restore, pause to
 * disk, resume from disk, fork) run as a job on a thread (job.h), during
 * which the session is "busy" and its guest belongs to the job. */
#ifndef VITRINE_GATEWAY_SESSION_H
#define VITRINE_GATEWAY_SESSION_H

#include "display/encode_cache.h"
#include "display/mirror.h"
#include "gateway/core/auth.h"
#include "gateway/core/gw.h"
#include "gateway/session/events.h"
#include "gateway/session/job.h"
#include "gateway/session/screen_size.h"
#include "gateway/session/session_spec.h"
#include "gateway/session/usage.h"
#include "vmm-qemu/vm.h"

#include <jansson.h>
#include <libwebsockets.h>
#include <limits.h>

#define SESS_MAX_WAITERS 16
/* Of those, how many may only watch (long polls of events and of ready),
 * so that watchers cannot keep operations out. */
#define SESS_MAX_WATCHERS 8
#define SESS_GRANTS_MAX 16 /* tokens minted for one session, live at once */

enum sess_state { SESS_STARTING, SESS_READY, SESS_PAUSED, SESS_FAILED };
enum sess_pause { SESS_PAUSE_MEMORY, SESS_PAUSE_DISK };

/* A guest that changes its resolution again and again has its size
 * recorded at most this often (a record write is an fsync on the loop). */
#define SESS_SCREEN_SAVE_GAP_MS 1000

/* The "expiring" event comes this long before a timeout (or half the
 * timeout when that is shorter). */
#define SESS_EXPIRY_WARNING_MS 10000

struct sess {
	struct sess *next; /* gw::sessions */
	struct gw *gw;
	char id[SESS_ID_MAX];
	enum sess_state state;
	char error[1024]; /* why it failed */
	/* The tokens, for the answer that hands them out ("" once the session
	 * was adopted from its record), and their hashes, which authorise. */
	char control_token[AUTH_TOKEN_LEN + 1];
	char view_token[AUTH_TOKEN_LEN + 1];
	char control_hash[AUTH_HASH_LEN + 1];
	char view_hash[AUTH_HASH_LEN + 1];
	struct auth_grant grants[SESS_GRANTS_MAX]; /* minted tokens (session_grants.c) */
	int n_grants;
	struct session_request req;
	struct vmm_image image;
	struct vmm_vm *vm; /* owned; NULL once the guest is gone (or while a job holds it) */
	struct vmm_identity guest; /* the guest process, as recorded; run_dir "" for none */
	bool adopt_pending; /* start-up: waits to see whether a guest claims it */
	/* width x height: the guest's screen, as made, then as its frames
	 * show it (sess_follow_screen); actions are mapped on it */
	int width, height, vcpus, memory_mib;
	struct screen_size screen_said; /* what the guest said it set (sess_screen_said); 0x0 */
	int64_t screen_saved_ms; /* when a new size was last recorded */
	bool screen_unsaved; /* a newer size waits to be recorded (SESS_SCREEN_SAVE_GAP_MS) */
	char parent_id[SESS_ID_MAX]; /* a fork: the session it was copied from */
	int64_t created_ms, ready_ms, expires_ms; /* monotonic; expires_ms 0: never */
	int64_t active_ms; /* last action or screenshot, for the idle timeout */
	bool warned; /* "expiring" was sent for the deadline ahead */
	enum sess_pause pause; /* while SESS_PAUSED */
	char ckpt[PATH_MAX]; /* paused on disk: the checkpoint folder, else "" */
	struct job *job; /* owned: the slow operation under way, NULL for none */
	char template_name[64]; /* "" unless restored from a template */
	/* the guest's keyboard layout, canonical (vmm-qemu/keymap.h): what the
	 * create asked for, else its template's, else "us" */
	char keyboard_layout[VMM_KEYMAP_MAX_NAME];
	struct sess_usage usage; /* what it used (usage.h, session_usage.h) */
	struct progress boot; /* its guest's last start, once over (session_boot.c) */
	bool has_agent; /* the guest runs qemu-ga (images with a rootfs): clock, page probes */
	struct sess_agent
		*agent; /* owned while the guest runs: vitrine-agent (commands, CDP, egress) */
	struct egress *egress; /* owned (held): the rules and log of the guest's connections */
	struct event_log events;
	lws_sorted_usec_list_t sul; /* services the guest, checks expiry */
	struct display_mirror *mirror; /* owned; the guest's screen */
	struct display_encode_cache *shots; /* owned; encodings of recent frames */
	struct sess_listener *listeners; /* not owned: rooms told of changes (sess_listen) */
	/* owned, object or NULL: what other rooms keep with the session, by
	 * room (sess_ext_set); in its record, opaque to session/ */
	json_t *ext;
	int pointer_x, pointer_y; /* where the last action left the pointer */
	int64_t last_click_ms; /* when the last click action ended */
	struct lws *waiters[SESS_MAX_WAITERS]; /* HTTP requests waiting for a state change */
	bool watching[SESS_MAX_WAITERS]; /* that waiter only watches (SESS_MAX_WATCHERS) */
};

/* What a session tells the rooms that care about it (the tinywl wl_signal
 * model): the session never calls up into them. A listener is embedded in
 * its owner (container_of finds the owner), added with sess_listen and
 * removed with sess_unlisten, at the latest when it hears DESTROY. */
enum sess_signal {
	SESS_SIGNAL_EVENT, /* data: the event just logged (json_t *, borrowed) */
	SESS_SIGNAL_GUEST_STOPPING, /* data: why (const char *): actions under way must end
				     * (the guest stops, pauses, or is handed to a job) */
	SESS_SIGNAL_DESTROY, /* data: NULL; the session is freed once every listener was told */
};

struct sess_listener;
typedef void (*sess_notify_fn)(struct sess_listener *l, struct sess *s, enum sess_signal sig,
			       const void *data);

struct sess_listener {
	struct sess_listener *next; /* sess::listeners */
	sess_notify_fn notify;
};

/* Adds l (notify set by the caller) to the listeners of s. */
void sess_listen(struct sess *s, struct sess_listener *l);
/* Removes l; nothing happens when it is not listening. May be called from
 * inside a notify (also for another listener). */
void sess_unlisten(struct sess *s, struct sess_listener *l);
/* The listener of s whose notify is fn, or NULL: how a room finds its own
 * state for a session (one such listener per session and room). */
struct sess_listener *sess_find_listener(const struct sess *s, sess_notify_fn fn);

/* Starts a session for req: loads the image and boots the guest, or starts
 * restoring the template. Returns 0 with *out linked into gw, or -errno
 * with *e filled (nothing is left). */
int sess_create(struct gw *gw, const struct session_request *req, struct sess **out,
		struct api_error *e);
/* The session with id, or NULL. */
struct sess *sess_find(struct gw *gw, const char *id);
/* Unlinks, tells the listeners, wakes its waiters, frees; the guest is
 * stopped on a job thread, and ticket (may be NULL) is done once it is
 * gone. Accepts NULL. */
void sess_destroy(struct sess *s, struct job_ticket *ticket);
/* Destroys every session (shutdown with --on-stop kill). */
void sess_destroy_all(struct gw *gw);
/* Lets every session go without stopping its guest or touching its
 * record (shutdown with --on-stop keep): the guests' supervisors wait for
 * the next gateway. A session whose job still runs loses that job's guest. */
void sess_release_all(struct gw *gw);
/* Writes s's record (registry.h) now: called on every state change before
 * it is answered, and by the API when the rules or lifetimes change. A
 * failed write is logged (the session runs on, but would not survive a
 * restart). Nothing without a registry. */
void sess_save(struct sess *s);
/* Serves again every session the registry knows (start-up): each
 * running or memory-paused guest is adopted on a job thread, disk-paused
 * sessions come back paused, and a record that cannot be served becomes a
 * failed session saying why. Returns the number of records. */
int sess_adopt_all(struct gw *gw);

/* The deadline ahead (monotonic ms; 0: none) and which timeout it is
 * ("timeout" or "idle_timeout"). */
int64_t sess_deadline(const struct sess *s, const char **which);
const char *sess_state_name(enum sess_state st);
/* The phases of s's guest's start under way, else of its last one
 * (session_boot.c, docs/api.md "boot"); NULL when none is known (a
 * session adopted from its record) or out of memory. */
json_t *sess_boot_json(const struct sess *s);
/* True while the session waits for something: starting, or a job runs. */
bool sess_busy(const struct sess *s);

/* Pauses a ready session: in memory (the guest stops, at once) or to disk
 * (its state is saved and QEMU quits: a job). Returns 0 (the session is
 * paused, or busy pausing) or -errno with *e filled. */
int sess_pause(struct sess *s, enum sess_pause how, struct api_error *e);
/* Resumes a paused session (a job when it is on disk). Same returns. */
int sess_resume(struct sess *s, struct api_error *e);
/* The session now ends timeout_s from now (0: at once), as its on_expiry
 * says; the record is saved. */
void sess_set_timeout(struct sess *s, int timeout_s);
/* Starts a copy of a running (or memory-paused) session's current state,
 * disk and memory, as a new session (*out, "starting" until the copy
 * runs); s keeps running. Same returns. */
int sess_fork(struct sess *s, struct sess **out, struct api_error *e);
/* Told, on the loop, that a save's state is written (ckpt, the checkpoint
 * folder; NULL with err when it failed). Returns 0 when it took ckpt (else
 * the job removes it). */
typedef int (*sess_saved_fn)(struct gw *gw, const char *tpl_name, const char *ckpt,
			     const char *err);
/* Saves a running (or memory-paused) session's state for the template
 * tpl_name, as a fork does (a job: the guest is stopped while it is
 * written, then runs on); when the job ends, saved is told. Returns 0 or
 * -errno with *e: 409 session_busy, session_not_running. */
int sess_save_template(struct sess *s, const char *tpl_name, sess_saved_fn saved,
		       struct api_error *e);
/* Whether s (may be NULL) is saving its state for tpl_name now. */
bool sess_saving(const struct sess *s, const char *tpl_name);
/* Makes the requests waiting on s look at it again. */
void sess_wake_waiters(struct sess *s);
/* Counts as activity for the idle timeout. */
void sess_touch(struct sess *s);
/* The keymap of s's keyboard layout for its actions (NULL: US, the
 * built-in table). Loop thread; compiled already by the job that started
 * the guest (else now, logged). */
const struct vmm_keymap *sess_keymap(const struct sess *s);
/* Makes s's width and height the size of its guest's screen as the
 * mirror's latest frame shows it (screen_size.h), when they differ: the
 * record is written, a "screen_resized" event ({width, height}) logged and
 * the pointer kept on the screen. Only while s is ready and no job runs.
 * The heartbeat calls it; so does whoever is about to use the size (an
 * action's coordinates, a screenshot's headers). Loop thread; a lock, no
 * copy: cheap. */
void sess_follow_screen(struct sess *s);
/* The guest says its screen is now width x height (the desktop guest's
 * screen script said so): the first frame that agrees makes it s's size,
 * also past what QEMU's VNC server shows of a screen (screen_size.h). */
void sess_screen_said(struct sess *s, int width, int height);
/* Where input (an action, a person) left the pointer. */
void sess_set_pointer(struct sess *s, int x, int y);
/* A click action ended now (the next one waits out the click sequence). */
void sess_note_click(struct sess *s);
/* Refuses vcpus/memory_mib beyond the operator's per-session limits (400)
 * or beyond the memory budget left (503). Returns 0 or -errno with *e. */
int sess_check_resources(struct gw *gw, int vcpus, int memory_mib, struct api_error *e);
/* Appends an event to the session's log and wakes requests waiting on it. */
void sess_event(struct sess *s, const char *type, json_t *data);

/* What a room keeps with s beyond s's life in this process: value (an
 * object, stolen; NULL removes it) is written in s's record under room
 * and handed back by sess_ext_get after a restart. For small state (a
 * few KiB: the record is rewritten on every change). 0, or -ENOMEM. */
int sess_ext_set(struct sess *s, const char *room, json_t *value);
/* What room keeps with s (borrowed), or NULL. */
const json_t *sess_ext_get(const struct sess *s, const char *room);

/* Tokens (session_grants.c; docs/api.md "Tokens and their rights"). The
 * rights of token on s (AUTH_R_* bits, 0 for none): the operator key, the
 * control and view tokens, the minted ones; *which (may be NULL) names
 * what matched. s NULL: the operator key alone. */
unsigned sess_rights(struct gw *gw, const struct sess *s, const char *token, const char **which);
/* The same for a token known by its hash (a live connection re-checks). */
unsigned sess_rights_of_hash(struct gw *gw, const struct sess *s, const char *hash,
			     const char **which);
/* Mints a token with rights (AUTH_RIGHTS_MINTABLE bits) for ttl_s seconds
 * (0: as long as the session); the secret goes to token (AUTH_TOKEN_LEN +
 * 1 bytes) and is kept only as its hash. Recorded before it returns. */
const struct auth_grant *sess_grant_add(struct sess *s, unsigned rights, int ttl_s, char *token,
					struct api_error *e);
/* Revokes the token id ("control", "view" or a minted id). 0, or -ENOENT. */
int sess_grant_revoke(struct sess *s, const char *id);
/* A new secret for "control" or "view" (the old one stops working), in
 * token. 0, or -errno with *e. */
int sess_token_rotate(struct sess *s, const char *id, char *token, struct api_error *e);

/* Registers wsi to be made writable when the session's state changes; a
 * watch only observes (at most SESS_MAX_WATCHERS of them). Returns 0, or
 * -ENOSPC when too many requests wait already. */
int sess_add_waiter(struct sess *s, struct lws *wsi, bool watch);
/* Whether one more operation could wait on s: asked before it starts. */
bool sess_can_wait(const struct sess *s);
void sess_remove_waiter(struct sess *s, struct lws *wsi);

#endif
