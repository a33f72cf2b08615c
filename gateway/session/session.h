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
/* A pause to disk an expiry asked for that could not be made (no space) is
 * tried again this much later; the session runs on meanwhile. */
#define SESS_EXPIRY_RETRY_MS 60000

/* A session. Its fields are session/'s own (session_int.h); the other
 * rooms read what they need through the functions below ("What the other
 * rooms read of a session"), which carry the rules about them. */
struct sess;

/* What a session tells the rooms that care about it (the tinywl wl_signal
 * model): the session never calls up into them. A listener is embedded in
 * its owner (container_of finds the owner), added with sess_listen and
 * removed with sess_unlisten, at the latest when it hears DESTROY. */
enum sess_signal {
	SESS_SIGNAL_EVENT, /* data: the event just logged (json_t *, borrowed) */
	SESS_SIGNAL_GUEST_STOPPING, /* data: why (const char *): actions under way must end
				     * (the guest stops, pauses, or is handed to a job) */
	SESS_SIGNAL_DESTROY, /* data: NULL; the session is freed once every listener was told */
	SESS_SIGNAL_WAKE, /* data: NULL; what a request may wait for changed (its state, its
			   * job's end, its agent link up or down): waiters look again */
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

/* What s says of itself in the API's JSON (session_describe.c): {id,
 * status, image, width, height, vcpus, memory_mib, age_ms, usage, boot,
 * ...; tokens only with_tokens, while s has them}; NULL when out of memory. */
json_t *sess_describe(const struct sess *s, bool with_tokens);

/* ---- What the other rooms read of a session (session_view.c) ----
 * The rules live here once: a guest that a job holds is no one's to act
 * on, a guest with no screen has no frame, a token handed out once is
 * "" afterwards. Loop thread. */
const char *sess_id(const struct sess *s);
struct gw *sess_gw(const struct sess *s);
enum sess_state sess_state_of(const struct sess *s);
/* Why it failed (or why its last resume, or pause to disk, did), "" for nothing. */
const char *sess_error(const struct sess *s);
/* The HTTP status of its last failed pause to disk: 507 (out of space) or
 * 500. */
int sess_error_status(const struct sess *s);
/* What a job has s busy with ("booting", "pausing", ...), NULL when none. */
const char *sess_busy_with(const struct sess *s);
/* Whether s's guest runs and is free to act on: ready, no job holding it. */
bool sess_guest_free(const struct sess *s);
/* The screen's size, as actions map coordinates on it. */
struct screen_size sess_screen(const struct sess *s);
/* The guest's screen (its latest frame, its cursor), or NULL while there
 * is none (paused on disk, the guest gone, a job making it). */
struct display_mirror *sess_mirror(const struct sess *s);
/* Recent frames' encodings (screenshots of one frame are encoded once). */
struct display_encode_cache *sess_shots(const struct sess *s);
/* Sends input events (vmm_vm_input: stolen) to s's guest, also to one
 * paused in memory (QEMU keeps it). Returns 0, -EBUSY with err when s has
 * no guest of its own (none, or a job holds it), or vmm_vm_input's error. */
int sess_input(struct sess *s, json_t *events, char *err, size_t errlen);
/* The guest's QEMU socket of kind (vmm_vm_socket) into out, or -ENOENT
 * when no guest is free (sess_guest_free). */
int sess_guest_socket(const struct sess *s, enum vmm_socket kind, char *out, size_t len);
/* The connection to the guest's vitrine-agent (borrowed: sess_agent_hold
 * to keep it), or NULL while the guest runs none. */
struct sess_agent *sess_agent_of(const struct sess *s);
/* Whether the guest runs qemu-ga (images with a rootfs: clock, page probes). */
bool sess_has_guest_agent(const struct sess *s);
/* Where input last left the pointer. */
void sess_pointer(const struct sess *s, int *x, int *y);
/* The template it was restored from, "" for none. */
const char *sess_template(const struct sess *s);
/* The project it belongs to, "" for the operator's (core/project_table.h). */
const char *sess_project(const struct sess *s);
/* The sessions of gw, in no particular order: for (s = sess_first(gw); s;
 * s = sess_next(s)). */
struct sess *sess_first(struct gw *gw);
struct sess *sess_next(const struct sess *s);
/* The session's own tokens as handed out at its create, "" once it was
 * adopted from its record (records keep only their hashes). */
const char *sess_control_token(const struct sess *s);
const char *sess_view_token(const struct sess *s);
/* Its guest's size and the image it runs ("" for a template's clone: its
 * template says). */
int sess_vcpus(const struct sess *s);
int sess_memory_mib(const struct sess *s);
const char *sess_image(const struct sess *s);
/* How a paused session is paused (meaningful while SESS_PAUSED). */
enum sess_pause sess_paused_how(const struct sess *s);
/* Its QEMU's pid, 0 while it has no guest of its own. */
pid_t sess_qemu_pid(const struct sess *s);
/* The rules and log of its guest's connections (egress.h). */
struct egress *sess_egress(const struct sess *s);
/* Its event log (events.h), read only. */
const struct event_log *sess_events(const struct sess *s);
/* Whether its control or view token ("control", "view") works now (a
 * revoked one does not); its minted tokens, *n of them. */
bool sess_token_live(const struct sess *s, const char *id);
const struct auth_grant *sess_grants(const struct sess *s, int *n);
/* When the last click action ended (monotonic ms; 0: none yet). */
int64_t sess_last_click_ms(const struct sess *s);
/* Whether an action (or, screenshot_only, a screenshot: also of a guest
 * paused in memory, whose screen still shows) may run on s now: 0, or
 * -EBUSY with *e the 409 that says why (session_paused, session_busy,
 * session_not_ready). */
int sess_check_actable(const struct sess *s, bool screenshot_only, struct api_error *e);
/* Counts what was done with s through the API (usage.h): actions,
 * screenshots and commands. */
void sess_count_use(struct sess *s, int actions, int screenshots, int commands);

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
/* The same, for a change that must not be answered unless it is on disk
 * (a credential's): returns 0 (also without a registry) or -errno, and
 * logs nothing: the caller rolls its change back and says why. */
int sess_save_checked(struct sess *s);
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
 * paused, or busy pausing) or -errno with *e filled: 507
 * insufficient_storage, before anything starts, when the run base has no
 * room for the guest's RAM (common/space.h). A pause to disk whose save
 * fails leaves the guest running and the session ready, with the reason in
 * sess_error and sess_error_status. */
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
 * -errno with *e: 409 session_busy, session_not_running; 507
 * insufficient_storage, before the guest stops, when the run base or the
 * templates' folder has no room for its RAM and disk. */
int sess_save_template(struct sess *s, const char *tpl_name, sess_saved_fn saved,
		       struct api_error *e);
/* Whether s (may be NULL) is saving its state for tpl_name now. */
bool sess_saving(const struct sess *s, const char *tpl_name);
/* Makes the requests waiting on s look at it again. */
void sess_wake_waiters(struct sess *s);
/* Ends every session's job whose thread is done (it woke the loop): the
 * session takes its results and its waiters are woken now, not at its
 * next heartbeat. Loop thread. */
void sess_reap_jobs(struct gw *gw);
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
/* Refuses any guest where none may run without a cgroup and none can be
 * made (503 no_cgroup: vmm-qemu/jail.h), vcpus/memory_mib beyond the
 * operator's per-session limits (400) or beyond the memory budget left
 * (503). Every guest's start asks it first. Returns 0 or -errno with *e. */
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
/* The project a credential is held to: a project key's project, NULL for
 * any other (the operator key, an admin key, a session's token, nothing).
 * By the credential's hash, or by the credential itself. */
const char *sess_project_of_hash(struct gw *gw, const char *hash);
const char *sess_project_of(struct gw *gw, const char *token);
/* Whether s is seen by a credential held to project (NULL: every session
 * is). */
bool sess_in_project(const struct sess *s, const char *project);
/* Mints a token with rights (AUTH_RIGHTS_MINTABLE bits) for ttl_s seconds
 * (0: as long as the session); the secret goes to token (AUTH_TOKEN_LEN +
 * 1 bytes) and is kept only as its hash. Recorded before it returns: NULL
 * with *e (500) and no token minted when the record cannot be written. */
const struct auth_grant *sess_grant_add(struct sess *s, unsigned rights, int ttl_s, char *token,
					struct api_error *e);
/* Revokes the token id ("control", "view" or a minted id), recorded before
 * it returns. 0, -ENOENT (no such live token), or -errno when the record
 * cannot be written: then nothing changed (the token still works, here
 * and after a restart). */
int sess_grant_revoke(struct sess *s, const char *id);
/* A new secret for "control" or "view" (the old one stops working), in
 * token, recorded before it returns. 0, or -errno with *e (500 when the
 * record cannot be written: then the old secret still holds). */
int sess_token_rotate(struct sess *s, const char *id, char *token, struct api_error *e);

/* Registers wsi to be made writable when the session's state changes; a
 * watch only observes (at most SESS_MAX_WATCHERS of them). Returns 0, or
 * -ENOSPC when too many requests wait already. */
int sess_add_waiter(struct sess *s, struct lws *wsi, bool watch);
/* Whether one more operation could wait on s: asked before it starts. */
bool sess_can_wait(const struct sess *s);
void sess_remove_waiter(struct sess *s, struct lws *wsi);

/* The lws protocol a session's guest's QMP socket and pidfd are adopted
 * under (guest_watch.c), and its callback: api/protocols.c lists it on the
 * API's vhost. Loop thread. */
#define SESS_GUEST_PROTOCOL "vitrine-guest-fds"
int sess_guest_fd_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
			   size_t len);

#endif
