/* gateway/e2b/e2b_api.h: E2B's SDKs on the gateway's own listener
 * (docs/e2b.md), a door of the front door (api/door.h: e2b_door, which
 * cli/gw_start.c registers): the control plane (e2b_api.c: /sandboxes,
 * /v2/sandboxes, X-API-KEY), envd (e2b_envd.c: Connect-RPC process.Process
 * and filesystem.Filesystem, /files, /health, for the sandbox an
 * E2b-Sandbox-Id header or a "49983-{id}." Host names, X-Access-Token), the
 * desktop stream's live view (e2b_live.c: /vnc.html on a "PORT-{id}." Host)
 * and noVNC's /websockify there (e2b_websockify.h). The sandbox id is the
 * session id. Loop thread only. */
#ifndef VITRINE_GATEWAY_E2B_API_H
#define VITRINE_GATEWAY_E2B_API_H

#include "gateway/api/door.h"
#include "gateway/e2b/e2b_route.h"
#include "gateway/e2b/e2b_wait.h"
#include "gateway/session/session_spec.h"

/* The door's ops table. */
extern const struct api_door_ops e2b_door;

/* The body limit of envd's /files requests the door does not stream: an
 * upload streams its body to the guest as it comes (e2b_files.c, up to
 * --files-max-bytes) once begun, so this bounds only a body kept for a
 * request refused before it. */
#define E2B_MAX_FILE_BODY (4u << 20)

/* How long a create, connect, pause, kill or fork waits for its
 * sandbox (each fork's, for a fork). */
#define E2B_WAIT_MS (300 * 1000)

struct e2b_files;
struct e2b_fork;
struct e2b_snapshot;
struct e2b_sandbox;
struct e2b_stream;
struct job_ticket;

/* An E2B request's own state (the door's: http_route_state), made when
 * the door takes the request and released with it (e2b_api.c). */
struct e2b_call {
	struct http_req *r;
	struct e2b_route route; /* which call */
	char sandbox[E2B_ID_MAX]; /* envd's and the live view's: the Host's or header's */
	int live_port; /* E2B_LIVE_*: the Host's port */
	/* create, connect, pause and kill: the session waited on, whether a
	 * connect waits for a running sandbox's agent, a kill's ticket
	 * (held); envd's Start, WatchDir and CreateWatcher: whether they have
	 * waited for the agent link already. The wait, while parked. */
	char wait_id[SESS_ID_MAX];
	bool was_running;
	struct job_ticket *ticket;
	bool agent_waited;
	struct e2b_wait wait;
	struct e2b_fork *fork; /* owned: a fork's progress (e2b_fork.c) */
	struct e2b_snapshot *snapshot; /* owned: a snapshot under way (e2b_snapshot.c) */
	/* envd: a streamed answer (owned: e2b_envd_release), a files call's
	 * guest path, a filesystem call under way (1 + its enum e2b_fs_call,
	 * else 0) */
	struct e2b_stream *stream;
	struct e2b_files *files; /* owned: /files' transfers (e2b_files.c) */
	char files_path[1200];
	int fs;
};

/* r's call (NULL only when it could not be made: r was answered 500). */
struct e2b_call *e2b_call_of(const struct http_req *r);

/* The value of query parameter name (with its '='), decoded, into buf;
 * false (buf "") when absent. */
bool e2b_query(struct http_req *r, const char *name, char *buf, int len);

/* The control plane's pieces the calls in other files share: an error
 * answered in E2B's {"code", "message"}; whether r's key is the
 * operator's or a project's (else answered 401); the route's session
 * (else answered 404, as for another project's); what E2B says of a
 * sandbox (sb may be NULL), with the envd token for create's and
 * connect's answers. */
void e2b_error(struct http_req *r, int status, const char *message);
bool e2b_operator_ok(struct http_req *r);
struct sess *e2b_route_sess(struct http_req *r);
json_t *e2b_sandbox_json(struct sess *s, struct e2b_sandbox *sb, bool with_token);

/* e2b_fork.c: POST /sandboxes/{id}/fork; what a call holds of it let go of. */
void e2b_fork(struct http_req *r);
void e2b_fork_release(struct e2b_call *c);

/* e2b_snapshot.c: POST /sandboxes/{id}/snapshots, GET /snapshots, DELETE
 * /templates/{id} (E2B's snapshots as templates made from a sandbox); what
 * a call holds of a snapshot under way let go of. */
void e2b_snapshot_create(struct http_req *r);
void e2b_snapshot_list(struct http_req *r);
void e2b_snapshot_delete(struct http_req *r);
void e2b_snapshot_release(struct e2b_call *c);

/* True while s's link to its vitrine-agent is up (its commands would run). */
bool e2b_agent_up(struct sess *s);

/* What r's token may do on s (NULL: the operator's routes), noted for
 * r's audit entry. */
unsigned e2b_rights(struct http_req *r, const struct sess *s);

/* e2b_live.c: GET /vnc.html and /websockify on a "PORT-{id}." Host. */
void e2b_live(struct http_req *r);
/* The door's stream_origin (api/door.h): the viewer /vnc.html sends the
 * browser to is on the live host, https://PORT-{id}.{domain}/web/, and so
 * is the Origin of its stream socket: that origin is let in for that
 * session while its stream runs on PORT (e2b_req.h's e2b_live_origin). */
bool e2b_live_stream_origin(struct gw *gw, struct lws *wsi, struct sess *s, const char *origin);

/* e2b_envd.c: answers an envd call; a parked one woken (files); what c
 * holds of it let go of; on each wake-up of the loop, streams with news
 * made writable. */
void e2b_envd(struct http_req *r);
void e2b_envd_resume(struct http_req *r, struct sess *s, bool timed_out);
void e2b_envd_release(struct e2b_call *c);
void e2b_envd_poke_all(void);

#endif
