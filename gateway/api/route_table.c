/* gateway/api/route_table.c: the API's routes, one row each (routes.h says
 * the columns). A new route is a kind in routes.h's ROUTE_KINDS, a row here
 * and its handler; parsing, dispatch, waking, names, the audit entry, the
 * body limit, the route's state and a WebSocket's callback all read the row. docs/api.md is the
 * API's reference. */
#include "gateway/api/api_int.h"
#include "gateway/api/api_ports.h"
#include "gateway/api/api_ports_ws.h"
#include "gateway/api/control.h"
#include "gateway/api/door.h"
#include "gateway/api/guest_ws.h"
#include "gateway/api/routes.h"
#include "gateway/api/stream.h"

#include "gateway/core/auth.h"
#include "gateway/session/pool.h"
#include "vmm-qemu/jail.h"

_Static_assert((AUTH_RIGHTS_OPERATOR & (ROUTE_NO_TOKEN | ROUTE_OPERATOR_KEY | ROUTE_OWN_AUTH)) == 0,
	       "routes.h's flags are no token's right");

/* The routes that are no path of the API's, and the few answered here. */
static void not_found(struct http_req *r)
{
	http_reply_error(r, 404, "not_found", "no such path");
}

static void method_not_allowed(struct http_req *r)
{
	http_reply_error(r, 405, "method_not_allowed", "this path does not take that method");
}

/* unconfined: guests run without a cgroup (vmm-qemu/jail.h). */
static void health(struct http_req *r)
{
	int ready, refilling; /* the warm pools' members are no one's sessions */

	sess_pool_totals(r->gw, &ready, &refilling);
	http_reply_json(r, 200,
			json_pack("{s:s, s:i, s:b}", "status", "ok", "sessions",
				  r->gw->n_sessions - ready - refilling, "unconfined",
				  vmm_jail_cgroups() == VMM_JAIL_CGROUPS_NONE));
}

static void root(struct http_req *r)
{
	http_add_header(r, "location", "/web/");
	http_reply_json(r, 302, json_pack("{s:s}", "location", "/web/"));
}

/* A WebSocket route asked without an upgrade (api/ws_upgrade.c takes the
 * upgrades). */
static void upgrade_required(struct http_req *r)
{
	if (api_route_session(r))
		http_reply_error(r, 426, "upgrade_required",
				 "this is a WebSocket endpoint: connect with Upgrade: websocket");
}

static void share(struct http_req *r)
{
	struct sess *s = api_route_session(r);

	if (s)
		api_share(r, s);
}

static void vnc(struct http_req *r)
{
	struct sess *s = api_route_session(r);

	if (s)
		api_vnc(r, s);
}

#define NONE ROUTE_NO_AUDIT
#define NO_AUDIT                                                                                   \
	{                                                                                          \
		NONE, NONE, NONE, NONE, NONE                                                       \
	}
#define BODY HTTP_MAX_BODY
#define SESSION "/v1/sessions/{id}"

const struct route_def route_table[R_KIND_COUNT] = {
	[R_NOT_FOUND] = { .right = ROUTE_NO_TOKEN,
			  .body_max = BODY,
			  .handle = not_found,
			  .audit = NO_AUDIT },
	[R_METHOD_NOT_ALLOWED] = { .right = ROUTE_NO_TOKEN,
				   .body_max = BODY,
				   .handle = method_not_allowed,
				   .audit = NO_AUDIT },
	[R_HEALTH] = { ROUTE_GET, "/healthz", .right = ROUTE_NO_TOKEN, .body_max = BODY,
		       .handle = health, .audit = NO_AUDIT },
	[R_SESSIONS_LIST] = { ROUTE_GET, "/v1/sessions/?", .right = AUTH_R_MANAGE, .body_max = BODY,
			      .handle = api_list_sessions, .audit = NO_AUDIT },
	[R_SESSIONS_CREATE] = { ROUTE_POST, "/v1/sessions/?", .right = AUTH_R_MANAGE,
				.body_max = BODY, .handle = api_create_session,
				.resume = api_created_woken,
				.audit = { [M_POST] = "session_create" } },
	[R_SESSION_GET] = { ROUTE_GET, SESSION "/?", .right = AUTH_R_VIEW, .body_max = BODY,
			    .handle = api_get_session, .resume = api_session_woken,
			    .audit = NO_AUDIT },
	[R_SESSION_DELETE] = { ROUTE_DELETE, SESSION "/?", .right = AUTH_R_MANAGE, .body_max = BODY,
			       .state_size = sizeof(struct api_delete_state),
			       .state_release = api_delete_state_release,
			       .handle = api_delete_session,
			       .audit = { [M_DELETE] = "session_delete" } },
	[R_SESSION_SCREENSHOT] = { ROUTE_GET, SESSION "/screenshot", .right = AUTH_R_VIEW,
				   .body_max = BODY, .handle = api_screenshot,
				   .state_size = sizeof(struct api_shot_state),
				   .state_release = api_shot_state_release, .audit = NO_AUDIT },
	[R_SESSION_ACTIONS] = { ROUTE_POST, SESSION "/actions", .right = AUTH_R_ACT,
				.body_max = BODY, .handle = api_act, .resume = api_act_woken,
				.state_size = sizeof(struct api_act_state),
				.state_release = api_act_state_release, .audit = NO_AUDIT },
	[R_SESSION_CONTROL_WS] = { ROUTE_GET, SESSION "/control", .right = AUTH_R_ACT,
				   .body_max = BODY, .handle = upgrade_required,
				   .ws = control_callback, .audit = NO_AUDIT },
	[R_SESSION_STREAM_WS] = { ROUTE_GET, SESSION "/stream", .right = AUTH_R_VIEW,
				  .body_max = BODY, .handle = upgrade_required,
				  .ws = stream_callback, .audit = NO_AUDIT },
	/* a control link needs "share" too (api_share.c) */
	[R_SESSION_SHARE] = { ROUTE_POST | ROUTE_DELETE, SESSION "/share", .right = AUTH_R_ACT,
			      .right_of = { [M_DELETE] = AUTH_R_ACT | AUTH_R_SHARE },
			      .body_max = BODY, .handle = share,
			      .audit = { [M_POST] = "share_minted",
					 [M_DELETE] = "share_revoked" } },
	[R_ROOT] = { ROUTE_GET, "/", .right = ROUTE_NO_TOKEN, .body_max = BODY, .handle = root,
		     .audit = NO_AUDIT },
	[R_SESSION_VNC] = { ROUTE_POST | ROUTE_DELETE, SESSION "/vnc", .right = AUTH_R_VNC,
			    .body_max = BODY, .handle = vnc,
			    .audit = { [M_POST] = "vnc_door_opened",
				       [M_DELETE] = "vnc_door_closed" } },
	[R_SESSION_PAUSE] = { ROUTE_POST, SESSION "/pause", .right = AUTH_R_ACT, .body_max = BODY,
			      .handle = api_pause, .resume = api_op_woken,
			      .state_size = sizeof(struct api_op_state),
			      .audit = { [M_POST] = "session_pause" } },
	[R_SESSION_RESUME] = { ROUTE_POST, SESSION "/resume", .right = AUTH_R_ACT, .body_max = BODY,
			       .handle = api_resume, .resume = api_op_woken,
			       .state_size = sizeof(struct api_op_state),
			       .audit = { [M_POST] = "session_resume" } },
	/* ?wait=ready waits on the child */
	[R_SESSION_FORK] = { ROUTE_POST, SESSION "/fork", .right = AUTH_R_FORK, .body_max = BODY,
			     .handle = api_fork, .resume = api_created_woken,
			     .audit = { [M_POST] = "session_fork" } },
	[R_SESSION_EVENTS] = { ROUTE_GET, SESSION "/events", .right = AUTH_R_VIEW, .body_max = BODY,
			       .handle = api_events, .resume = api_events_woken,
			       .state_size = sizeof(struct api_after_state), .audit = NO_AUDIT },
	/* a command as root needs "root" too (api_exec.c) */
	[R_SESSION_EXEC] = { ROUTE_POST, SESSION "/exec", .right = AUTH_R_EXEC, .body_max = BODY,
			     .handle = api_exec, .resume = api_exec_resume,
			     .audit = { [M_POST] = "command" } },
	/* a PUT's body goes to the guest as it comes (--files-max-bytes) */
	[R_SESSION_FILES] = { ROUTE_GET | ROUTE_PUT, SESSION "/files", .right = AUTH_R_EXEC,
			      .body_max = BODY, .body_max_of = api_files_body_max,
			      .begin = api_files_begin,
			      .state_size = sizeof(struct api_files_state),
			      .state_release = api_files_release, .handle = api_files,
			      .audit = { [M_GET] = "file_get", [M_PUT] = "file_put" } },
	[R_SESSION_EXEC_WS] = { ROUTE_GET, SESSION "/exec/stream", .right = AUTH_R_EXEC,
				.body_max = BODY, .handle = upgrade_required,
				.ws = guest_ws_callback, .audit = NO_AUDIT },
	[R_SESSION_CDP_WS] = { ROUTE_GET, SESSION "/cdp", .right = AUTH_R_ACT, .body_max = BODY,
			       .handle = upgrade_required, .ws = guest_ws_callback,
			       .audit = NO_AUDIT },
	[R_SESSION_CDP_VERSION] = { ROUTE_GET, SESSION "/cdp/json/version/?", .right = AUTH_R_ACT,
				    .body_max = BODY, .handle = api_cdp_version,
				    .audit = NO_AUDIT },
	[R_SESSION_EGRESS] = { ROUTE_GET | ROUTE_PUT, SESSION "/egress", .right = AUTH_R_ACT,
			       .right_of = { [M_PUT] = AUTH_R_EGRESS }, .body_max = BODY,
			       .handle = api_egress,
			       .audit = { [M_GET] = NONE, [M_PUT] = "egress_rules_set" } },
	[R_SESSION_EGRESS_LOG] = { ROUTE_GET, SESSION "/egress/log", .right = AUTH_R_ACT,
				   .body_max = BODY, .handle = api_egress_log, .audit = NO_AUDIT },
	[R_SESSION_CLIPBOARD] = { ROUTE_GET | ROUTE_PUT, SESSION "/clipboard", .right = AUTH_R_ACT,
				  .body_max = BODY, .handle = api_clipboard,
				  .resume = api_guest_resume,
				  .state_size = sizeof(struct api_clip_state),
				  .audit = { [M_GET] = "clipboard_get",
					     [M_PUT] = "clipboard_set" } },
	[R_SESSION_OPEN] = { ROUTE_POST, SESSION "/open", .right = AUTH_R_ACT, .body_max = BODY,
			     .state_size = sizeof(struct api_path_state), .handle = api_open,
			     .resume = api_guest_resume, .audit = { [M_POST] = "open" } },
	[R_SESSION_LAUNCH] = { ROUTE_POST, SESSION "/launch", .right = AUTH_R_ACT, .body_max = BODY,
			       .handle = api_launch, .resume = api_guest_resume,
			       .audit = { [M_POST] = "launch" } },
	[R_TEMPLATES_LIST] = { ROUTE_GET, "/v1/templates/?", .right = AUTH_R_MANAGE,
			       .body_max = BODY, .handle = api_list_templates, .audit = NO_AUDIT },
	[R_TEMPLATES_CREATE] = { ROUTE_POST, "/v1/templates/?", .right = AUTH_R_MANAGE,
				 .body_max = BODY, .handle = api_create_template,
				 .audit = { [M_POST] = "template_create" } },
	[R_TEMPLATE_GET] = { ROUTE_GET, "/v1/templates/{name}", .right = AUTH_R_MANAGE,
			     .body_max = BODY, .handle = api_get_template, .audit = NO_AUDIT },
	[R_TEMPLATE_DELETE] = { ROUTE_DELETE, "/v1/templates/{name}", .right = AUTH_R_MANAGE,
				.body_max = BODY, .handle = api_delete_template,
				.audit = { [M_DELETE] = "template_delete" } },
	/* the operator's: a pool's members hold the gateway's memory */
	[R_TEMPLATE_PATCH] = { ROUTE_PATCH, "/v1/templates/{name}", .right = AUTH_R_ADMIN,
			       .body_max = BODY, .handle = api_patch_template,
			       .audit = { [M_PATCH] = "template_pool" } },
	[R_SESSION_TOKENS] = { ROUTE_GET | ROUTE_POST, SESSION "/tokens", .right = AUTH_R_MANAGE,
			       .body_max = BODY, .handle = api_tokens,
			       .audit = { [M_GET] = NONE, [M_POST] = "token_minted" } },
	[R_SESSION_TOKEN] = { ROUTE_DELETE, SESSION "/tokens/{tid}", .right = AUTH_R_MANAGE,
			      .body_max = BODY, .handle = api_token_revoke,
			      .audit = { [M_DELETE] = "token_revoked" } },
	[R_SESSION_TOKEN_ROTATE] = { ROUTE_POST, SESSION "/tokens/{tid}/rotate",
				     .right = AUTH_R_MANAGE, .body_max = BODY,
				     .handle = api_token_rotate,
				     .audit = { [M_POST] = "token_rotated" } },
	[R_METRICS] = { ROUTE_GET, "/metrics", .right = AUTH_R_ADMIN, .body_max = BODY,
			.handle = api_metrics, .audit = NO_AUDIT },
	[R_USAGE] = { ROUTE_GET, "/v1/usage", .right = AUTH_R_MANAGE, .body_max = BODY,
		      .handle = api_usage, .audit = NO_AUDIT },
	[R_SESSION_THUMBNAIL] = { ROUTE_GET, SESSION "/thumbnail", .right = AUTH_R_VIEW,
				  .body_max = BODY, .handle = api_thumbnail,
				  .state_size = sizeof(struct api_shot_state),
				  .state_release = api_shot_state_release, .audit = NO_AUDIT },
	[R_SESSION_TRAJECTORY] = { ROUTE_GET, SESSION "/trajectory", .right = AUTH_R_VIEW,
				   .body_max = BODY, .handle = api_trajectory, .audit = NO_AUDIT },
	[R_SESSION_RECORDING] = { ROUTE_GET, SESSION "/recording", .right = AUTH_R_VIEW,
				  .body_max = BODY, .handle = api_recording_timeline,
				  .audit = NO_AUDIT },
	[R_SESSION_RECORDING_START] = { ROUTE_POST, SESSION "/recording/start", .right = AUTH_R_ACT,
					.body_max = BODY, .handle = api_recording_start,
					.audit = { [M_POST] = "recording_start" } },
	[R_SESSION_RECORDING_STOP] = { ROUTE_POST, SESSION "/recording/stop", .right = AUTH_R_ACT,
				       .body_max = BODY, .handle = api_recording_stop,
				       .audit = { [M_POST] = "recording_stop" } },
	[R_SESSION_RECORDING_FRAME] = { ROUTE_GET, SESSION "/recording/frames/{n}",
					.right = AUTH_R_VIEW, .body_max = BODY,
					.handle = api_recording_frame, .audit = NO_AUDIT },
	[R_SESSION_RECORDING_WEBM] = { ROUTE_GET, SESSION "/recording.webm", .right = AUTH_R_VIEW,
				       .body_max = BODY, .handle = api_recording_webm,
				       .resume = api_recording_resume,
				       .state_size = sizeof(struct api_after_state),
				       .audit = NO_AUDIT },
	[R_KEYS] = { ROUTE_GET | ROUTE_POST, "/v1/keys/?",
		     .right = AUTH_R_ADMIN | ROUTE_OPERATOR_KEY, .body_max = BODY,
		     .handle = api_keys, .audit = { [M_GET] = NONE, [M_POST] = "key_created" } },
	[R_KEY_DELETE] = { ROUTE_DELETE, "/v1/keys/{key}",
			   .right = AUTH_R_ADMIN | ROUTE_OPERATOR_KEY, .body_max = BODY,
			   .handle = api_keys, .audit = { [M_DELETE] = "key_revoked" } },
	[R_TEMPLATE_EXPORT] = { ROUTE_GET, "/v1/templates/{name}/export", .right = AUTH_R_MANAGE,
				.body_max = BODY, .handle = api_template_export,
				.state_size = sizeof(struct move_req),
				.state_release = api_move_req_release, .audit = NO_AUDIT },
	/* its body goes to disk as it comes (no limit) */
	[R_TEMPLATE_IMPORT] = { ROUTE_POST, "/v1/templates/import", .right = AUTH_R_ADMIN,
				.body_max = BODY, .begin = api_template_import_begin,
				.handle = api_template_import,
				.state_size = sizeof(struct move_req),
				.state_release = api_move_req_release, .audit = NO_AUDIT },
	[R_TEMPLATES_GC] = { ROUTE_POST, "/v1/templates/gc", .right = AUTH_R_ADMIN,
			     .body_max = BODY, .handle = api_templates_gc, .audit = NO_AUDIT },
	[R_PROJECTS] = { ROUTE_GET | ROUTE_POST, "/v1/projects/?", .right = AUTH_R_ADMIN,
			 .body_max = BODY, .handle = api_projects,
			 .audit = { [M_GET] = NONE, [M_POST] = "project_create" } },
	/* a project's key may read its own */
	[R_PROJECT] = { ROUTE_GET | ROUTE_PATCH | ROUTE_DELETE, "/v1/projects/{name}",
			.right = AUTH_R_MANAGE,
			.right_of = { [M_PATCH] = AUTH_R_ADMIN, [M_DELETE] = AUTH_R_ADMIN },
			.body_max = BODY, .handle = api_projects,
			.audit = { [M_GET] = NONE,
				   [M_PATCH] = "project_update",
				   [M_DELETE] = "project_delete" } },
	[R_PROJECT_KEYS] = { ROUTE_GET | ROUTE_POST, "/v1/projects/{name}/keys",
			     .right = AUTH_R_ADMIN | ROUTE_OPERATOR_KEY, .body_max = BODY,
			     .handle = api_keys,
			     .audit = { [M_GET] = NONE, [M_POST] = "key_created" } },
	[R_PROJECT_KEY] = { ROUTE_DELETE, "/v1/projects/{name}/keys/{kid}",
			    .right = AUTH_R_ADMIN | ROUTE_OPERATOR_KEY, .body_max = BODY,
			    .handle = api_keys, .audit = { [M_DELETE] = "key_revoked" } },
	/* a guest's port (api/api_ports.h, its WebSockets api_ports_ws.h): by
	 * path, any method, any rest of the path; by host name
	 * ({port}-{id}.{domain}: no path of its own, set by api_ports_claim).
	 * The body goes to the guest as it comes. */
	[R_SESSION_PORT] = { ROUTE_ANY, SESSION "/ports/{n}{rest}", .right = AUTH_R_ACT,
			     .body_max = BODY, .refuse_early = api_ports_begin,
			     .handle = api_ports_handle, .state_size = sizeof(void *),
			     .state_release = api_ports_state_release, .ws = api_ports_ws_callback,
			     .audit = NO_AUDIT },
	/* a port's own settings: GET says them, PUT {"public": bool}, POST a
	 * link for a browser */
	[R_SESSION_PORT_SETTINGS] = { ROUTE_GET | ROUTE_PUT | ROUTE_POST, SESSION "/ports/{n}",
				      .right = AUTH_R_ACT,
				      .right_of = { [M_PUT] = AUTH_R_SHARE,
						    [M_POST] = AUTH_R_SHARE },
				      .body_max = BODY, .handle = api_ports_settings,
				      .audit = { [M_GET] = NONE,
						 [M_PUT] = "port_public_set",
						 [M_POST] = "port_link_minted" } },
	[R_SESSION_PORT_HOST] = { .right = AUTH_R_ACT,
				  .body_max = BODY,
				  .refuse_early = api_ports_begin,
				  .handle = api_ports_handle,
				  .state_size = sizeof(void *),
				  .state_release = api_ports_state_release,
				  .audit = NO_AUDIT },
	/* a door's requests (api/door.h): its own paths, keys, errors, state
	 * and audit events */
	[R_DOOR] = { .right = ROUTE_OWN_AUTH,
		     .body_max = BODY,
		     .body_max_of = api_door_body_max,
		     .refuse_early = api_door_refuse_early,
		     .handle = api_door_handle,
		     .resume = api_door_resume,
		     .state_size_of = api_door_state_size,
		     .state_release = api_door_state_release,
		     .audit_of = api_door_audit_of },
};
