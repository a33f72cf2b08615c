/* gateway/session/session_int.h: struct sess itself and what the files of
 * session/ share and no one else calls. Loop thread only. */
#ifndef VITRINE_GATEWAY_SESSION_INT_H
#define VITRINE_GATEWAY_SESSION_INT_H

#include "gateway/session/session.h"

/* A session; only session/ sees its fields (tests/rooms.py checks that no
 * file outside session/ includes this header). */
struct sess {
	struct sess *next; /* gw::sessions */
	struct gw *gw;
	char id[SESS_ID_MAX];
	enum sess_state state;
	char error[1024]; /* why it failed, or why its last pause or resume did */
	int error_status; /* the HTTP status of a failed pause to disk: 507 out of space, else 500 */
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
	/* owned: vm's QMP socket and process's pidfd (dups) on the loop while
	 * s holds vm (guest_watch.c); NULL when not watched */
	struct lws *watch[2];
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
	/* the deadline ("timeout", "idle_timeout") whose pause to disk is under
	 * way, NULL for none: a failed one is tried again (sess_expiry_pause_failed) */
	const char *expiry_pausing;
	enum sess_pause pause; /* while SESS_PAUSED */
	char ckpt[PATH_MAX]; /* paused on disk: the checkpoint folder, else "" */
	struct job *job; /* owned: the slow operation under way, NULL for none */
	char template_name[64]; /* "" unless restored from a template */
	/* a warm pool's member (pool.h): the template whose pool it is in, ""
	 * for a session of someone's; hidden from the API until claimed */
	char pool_of[64];
	/* what the pool did for this session's create (pool.h): "" none (no
	 * pool), "hit", or a miss's reason */
	char pool_note[32];
	bool pool_counted; /* a member's refill was counted (metrics) once it was ready */
	/* the guest's keyboard layout, canonical (vmm-qemu/keymap.h): what the
	 * create asked for, else its template's, else "us" */
	char keyboard_layout[VMM_KEYMAP_MAX_NAME];
	struct sess_usage usage; /* what it used (usage.h, session_usage.h) */
	int64_t recording_bytes; /* its recording's on disk (sess_note_recording_bytes) */
	struct progress boot; /* its guest's last start, once over (session_boot.c) */
	bool has_agent; /* the guest runs qemu-ga (images with a rootfs): clock, page probes */
	struct sess_agent
		*agent; /* owned while the guest runs: vitrine-agent (commands, CDP, egress) */
	struct egress *egress; /* owned (held): the rules and log of the guest's connections */
	struct event_log events;
	lws_sorted_usec_list_t sul; /* the heartbeat (session_tick.c) */
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

/* Tells s's listeners sig (session_state.c). */
void sess_emit(struct sess *s, enum sess_signal sig, const void *data);
/* Takes the guest's screen size from its latest frame now, whatever s's
 * state (sess_follow_screen does so only while it is ready). */
void sess_follow_screen_now(struct sess *s);
/* Starts connecting to the agent at path (keeping first, a link already
 * open, when given). */
void sess_start_agent_at(struct sess *s, const char *path, struct agent_link *first);
/* guest_watch.c: s->vm (if any) joins the loop, any earlier watch let go
 * of first. Called whenever s takes a guest (sess_set_vm). */
void sess_guest_watch(struct sess *s);
/* Lets go of s->vm's descriptors (the fds stay the vm's): before the vm
 * is handed to a job, detached, freed or destroyed. Accepts an unwatched s. */
void sess_guest_unwatch(struct sess *s);
/* Services s->vm (its console, its monitor, its exit) unless a job holds
 * it; a guest gone fails s. */
void sess_guest_service(struct sess *s);
/* QMP commands were queued on s->vm: written as its socket takes them. */
void sess_guest_queued(struct sess *s);
/* The pause to disk that s's expiry started (s->expiry_pausing) was refused
 * or failed, and the guest runs on: it is tried again later (a timeout's
 * deadline moves SESS_EXPIRY_RETRY_MS ahead, an idle timeout's clock starts
 * over), with its warning first. Accepts an s whose expiry paused nothing. */
void sess_expiry_pause_failed(struct sess *s);
/* Starts s's heartbeat (session_tick.c), or moves its next beat to when
 * it is due now (a new deadline); sess_destroy's unlink stops it. */
void sess_tick_start(struct sess *s);
/* Makes requests waiting on s writable (they look at it again). */
void sess_wake(struct sess *s);
/* Changes the state, with a "state" event. */
void sess_set_state(struct sess *s, enum sess_state st);
/* Tells the listeners that actions under way must end (why). */
void sess_guest_stopping(struct sess *s, const char *why);
/* Fails the actions under way, stops the mirror and the guest. */
void sess_stop_guest(struct sess *s, const char *why);
void sess_set_failed(struct sess *s, const char *why);
/* m (a job connected it, owned from now on) becomes s's screen; the one
 * before, if any, is stopped on a job thread. Returns 0, or -ENOMEM (the
 * session cannot take screenshots). */
int sess_adopt_mirror(struct sess *s, struct display_mirror *m);
/* s->vm runs and is ready, m is its screen: goes "ready" (or "failed"). */
void sess_mark_ready(struct sess *s, struct display_mirror *m);
/* Frees a session sess_alloc made that was never linked. Accepts NULL. */
void sess_free_unlinked(struct sess *s);
/* Starts connecting to the guest's vitrine-agent once the guest runs
 * (keeping first, a link already open, when given). */
void sess_start_agent(struct sess *s, struct agent_link *first);
/* A new session for req, not yet linked nor started; NULL with *e filled
 * (429 when the gateway is full). */
struct sess *sess_alloc(struct gw *gw, const struct session_request *req, struct api_error *e);
/* Links s into the registry (it counts against the limits from now on)
 * and starts its heartbeat. */
void sess_link(struct sess *s);
/* vm (may be NULL) becomes s's guest, and its identity the one recorded. */
void sess_set_vm(struct sess *s, struct vmm_vm *vm);
/* A job that started a guest for s ended: s takes its guest (j->vm) and
 * returns true, or fails with the job's error and returns false. */
bool sess_take_started_guest(struct sess *s, struct job *j);
/* Guests j starts are held by a supervisor that patches session id's
 * record when abandoned (nothing without serve's self_bin). */
void sess_supervise(struct gw *gw, struct job *j, const char *id);
/* s's job_kind_adopt (j) has ended: takes its guest, or says what became of it. */
void sess_adopt_finished(struct sess *s, struct job *j);
/* The job j that started s's guest has ended, ok (s is ready) or not: its
 * timeline becomes s's "boot" (session_boot.c), with a "boot" event. */
void sess_boot_end(struct sess *s, struct job *j, bool ok);
/* s->job has ended: takes its results. */
void sess_job_finished(struct sess *s);
/* The session with id, pool members too (sess_find passes them by). */
struct sess *sess_find_any(struct gw *gw, const char *id);
/* sess_check_resources, but a pool's members are dropped to make room
 * only when may_evict (never for another member). */
int sess_check_room(struct gw *gw, int vcpus, int memory_mib, bool may_evict, struct api_error *e);
/* Starts a member of template tpl's pool (pool.c): a session of the
 * operator's restored from tpl, hidden, never evicting. 0, or -errno with
 * *e. */
int sess_create_member(struct gw *gw, const char *tpl, struct sess **out, struct api_error *e);

/* ---- pool.c's hooks (pool.h) ---- */
/* sess_create's hook: takes a member of req's template's pool for req when
 * one fits. Returns 1 with *out the claimed session (starting: resuming),
 * 0 when none was taken (why: the miss's reason, "empty" or
 * "keyboard_layout"; "" when the template has no pool, or when the create
 * is one a restore refuses anyway: another size, a page, a data: URL), or
 * -errno with *e (the creator's project is over its quota). */
int sess_pool_claim(struct gw *gw, const struct session_request *req, struct sess **out, char *why,
		    size_t whylen, struct api_error *e);
/* Drops members until memory_mib more fits the memory budget (0: until one
 * more session fits max_sessions): ready ones first. True when it fits. */
bool sess_pool_make_room(struct gw *gw, int memory_mib);

#endif
