/* gateway/api/routes.c: see routes.h. */
#include "gateway/api/routes.h"

#include "gateway/core/gw.h"

#include <string.h>

_Static_assert(ROUTE_SESSION_ID_MAX == GW_NODE_MAX + SESS_ID_RANDOM,
	       "routes.h's longest session id is the one sess_alloc makes");
_Static_assert(ROUTE_SESSION_ID_MAX < SESS_ID_MAX, "a session id fits struct sess");

static size_t id_len(const char *p)
{
	size_t n = 0;

	while ((p[n] >= 'a' && p[n] <= 'z') || (p[n] >= 'A' && p[n] <= 'Z') ||
	       (p[n] >= '0' && p[n] <= '9') || p[n] == '_' || p[n] == '-')
		n++;
	return n;
}

static struct route pick(enum route_method m, enum route_method want, enum route_kind kind)
{
	struct route r = { .kind = m == want ? kind : R_METHOD_NOT_ALLOWED };

	return r;
}

const char *const route_kind_names[R_KIND_COUNT] = {
	[R_NOT_FOUND] = "not_found",
	[R_METHOD_NOT_ALLOWED] = "method_not_allowed",
	[R_HEALTH] = "health",
	[R_SESSIONS_LIST] = "sessions_list",
	[R_SESSIONS_CREATE] = "sessions_create",
	[R_SESSION_GET] = "session_get",
	[R_SESSION_DELETE] = "session_delete",
	[R_SESSION_SCREENSHOT] = "session_screenshot",
	[R_SESSION_THUMBNAIL] = "session_thumbnail",
	[R_E2B] = "e2b",
	[R_SESSION_ACTIONS] = "session_actions",
	[R_SESSION_CONTROL_WS] = "session_control_ws",
	[R_SESSION_STREAM_WS] = "session_stream_ws",
	[R_SESSION_SHARE] = "session_share",
	[R_ROOT] = "root",
	[R_SESSION_VNC] = "session_vnc",
	[R_SESSION_PAUSE] = "session_pause",
	[R_SESSION_RESUME] = "session_resume",
	[R_SESSION_FORK] = "session_fork",
	[R_SESSION_EVENTS] = "session_events",
	[R_SESSION_EXEC] = "session_exec",
	[R_SESSION_FILES] = "session_files",
	[R_SESSION_EXEC_WS] = "session_exec_ws",
	[R_SESSION_CDP_WS] = "session_cdp_ws",
	[R_SESSION_CDP_VERSION] = "session_cdp_version",
	[R_SESSION_EGRESS] = "session_egress",
	[R_SESSION_EGRESS_LOG] = "session_egress_log",
	[R_SESSION_CLIPBOARD] = "session_clipboard",
	[R_SESSION_OPEN] = "session_open",
	[R_SESSION_LAUNCH] = "session_launch",
	[R_TEMPLATES_LIST] = "templates_list",
	[R_TEMPLATES_CREATE] = "templates_create",
	[R_TEMPLATE_GET] = "template_get",
	[R_TEMPLATE_DELETE] = "template_delete",
	[R_SESSION_TOKENS] = "session_tokens",
	[R_SESSION_TOKEN] = "session_token",
	[R_SESSION_TOKEN_ROTATE] = "session_token_rotate",
	[R_METRICS] = "metrics",
	[R_USAGE] = "usage",
	[R_KEYS] = "keys",
	[R_KEY_DELETE] = "key_delete",
	[R_TEMPLATE_EXPORT] = "template_export",
	[R_TEMPLATE_IMPORT] = "template_import",
	[R_TEMPLATES_GC] = "templates_gc",
	[R_SESSION_TRAJECTORY] = "session_trajectory",
	[R_SESSION_RECORDING] = "session_recording",
	[R_SESSION_RECORDING_START] = "session_recording_start",
	[R_SESSION_RECORDING_STOP] = "session_recording_stop",
	[R_SESSION_RECORDING_FRAME] = "session_recording_frame",
	[R_SESSION_RECORDING_WEBM] = "session_recording_webm",
};

struct route route_parse(enum route_method m, const char *path)
{
	static const char prefix[] = "/v1/sessions";
	struct route r = { .kind = R_NOT_FOUND };
	const char *rest;
	size_t n;

	if (!strcmp(path, "/"))
		return pick(m, M_GET, R_ROOT);
	if (!strcmp(path, "/healthz"))
		return pick(m, M_GET, R_HEALTH);
	if (!strcmp(path, "/metrics"))
		return pick(m, M_GET, R_METRICS);
	if (!strcmp(path, "/v1/usage"))
		return pick(m, M_GET, R_USAGE);
	if (!strcmp(path, "/v1/templates") || !strcmp(path, "/v1/templates/")) {
		r.kind = m == M_GET    ? R_TEMPLATES_LIST
			 : m == M_POST ? R_TEMPLATES_CREATE
				       : R_METHOD_NOT_ALLOWED;
		return r;
	}
	if (!strcmp(path, "/v1/keys") || !strcmp(path, "/v1/keys/")) {
		r.kind = m == M_GET || m == M_POST ? R_KEYS : R_METHOD_NOT_ALLOWED;
		return r;
	}
	if (!strncmp(path, "/v1/keys/", 9)) {
		n = id_len(path + 9);
		if (n == 0 || n > ROUTE_ID_MAX || path[9 + n] != '\0')
			return r;
		memcpy(r.id, path + 9, n);
		r.id[n] = '\0';
		r.kind = m == M_DELETE ? R_KEY_DELETE : R_METHOD_NOT_ALLOWED;
		return r;
	}
	/* A template may be called "import" or "gc": those take POST only. */
	if (m == M_POST && !strcmp(path, "/v1/templates/import"))
		return pick(m, M_POST, R_TEMPLATE_IMPORT);
	if (m == M_POST && !strcmp(path, "/v1/templates/gc"))
		return pick(m, M_POST, R_TEMPLATES_GC);
	if (!strncmp(path, "/v1/templates/", 14)) {
		n = id_len(path + 14);
		if (n == 0 || n > ROUTE_ID_MAX ||
		    (path[14 + n] != '\0' && strcmp(path + 14 + n, "/export")))
			return r;
		memcpy(r.id, path + 14, n);
		r.id[n] = '\0';
		if (path[14 + n]) {
			r.kind = m == M_GET ? R_TEMPLATE_EXPORT : R_METHOD_NOT_ALLOWED;
			return r;
		}
		r.kind = m == M_GET	 ? R_TEMPLATE_GET
			 : m == M_DELETE ? R_TEMPLATE_DELETE
					 : R_METHOD_NOT_ALLOWED;
		return r;
	}
	if (strncmp(path, prefix, sizeof(prefix) - 1))
		return r;
	rest = path + sizeof(prefix) - 1;
	if (!strcmp(rest, "") || !strcmp(rest, "/")) {
		if (m == M_GET)
			r.kind = R_SESSIONS_LIST;
		else if (m == M_POST)
			r.kind = R_SESSIONS_CREATE;
		else
			r.kind = R_METHOD_NOT_ALLOWED;
		return r;
	}
	if (*rest++ != '/')
		return r;
	n = id_len(rest);
	if (n == 0 || n > ROUTE_SESSION_ID_MAX)
		return r;
	memcpy(r.id, rest, n);
	r.id[n] = '\0';
	rest += n;
	if (!strcmp(rest, "") || !strcmp(rest, "/")) {
		r.kind = m == M_GET	 ? R_SESSION_GET
			 : m == M_DELETE ? R_SESSION_DELETE
					 : R_METHOD_NOT_ALLOWED;
	} else if (!strcmp(rest, "/screenshot")) {
		r.kind = m == M_GET ? R_SESSION_SCREENSHOT : R_METHOD_NOT_ALLOWED;
	} else if (!strcmp(rest, "/thumbnail")) {
		r.kind = m == M_GET ? R_SESSION_THUMBNAIL : R_METHOD_NOT_ALLOWED;
	} else if (!strcmp(rest, "/actions")) {
		r.kind = m == M_POST ? R_SESSION_ACTIONS : R_METHOD_NOT_ALLOWED;
	} else if (!strcmp(rest, "/control")) {
		r.kind = m == M_GET ? R_SESSION_CONTROL_WS : R_METHOD_NOT_ALLOWED;
	} else if (!strcmp(rest, "/stream")) {
		r.kind = m == M_GET ? R_SESSION_STREAM_WS : R_METHOD_NOT_ALLOWED;
	} else if (!strcmp(rest, "/vnc")) {
		r.kind = m == M_POST || m == M_DELETE ? R_SESSION_VNC : R_METHOD_NOT_ALLOWED;
	} else if (!strcmp(rest, "/share")) {
		r.kind = m == M_POST || m == M_DELETE ? R_SESSION_SHARE : R_METHOD_NOT_ALLOWED;
	} else if (!strcmp(rest, "/pause")) {
		r.kind = m == M_POST ? R_SESSION_PAUSE : R_METHOD_NOT_ALLOWED;
	} else if (!strcmp(rest, "/resume")) {
		r.kind = m == M_POST ? R_SESSION_RESUME : R_METHOD_NOT_ALLOWED;
	} else if (!strcmp(rest, "/fork")) {
		r.kind = m == M_POST ? R_SESSION_FORK : R_METHOD_NOT_ALLOWED;
	} else if (!strcmp(rest, "/files")) {
		r.kind = m == M_GET || m == M_PUT ? R_SESSION_FILES : R_METHOD_NOT_ALLOWED;
	} else if (!strcmp(rest, "/exec")) {
		r.kind = m == M_POST ? R_SESSION_EXEC : R_METHOD_NOT_ALLOWED;
	} else if (!strcmp(rest, "/exec/stream")) {
		r.kind = m == M_GET ? R_SESSION_EXEC_WS : R_METHOD_NOT_ALLOWED;
	} else if (!strcmp(rest, "/cdp")) {
		r.kind = m == M_GET ? R_SESSION_CDP_WS : R_METHOD_NOT_ALLOWED;
	} else if (!strcmp(rest, "/cdp/json/version") || !strcmp(rest, "/cdp/json/version/")) {
		r.kind = m == M_GET ? R_SESSION_CDP_VERSION : R_METHOD_NOT_ALLOWED;
	} else if (!strcmp(rest, "/egress")) {
		r.kind = m == M_GET || m == M_PUT ? R_SESSION_EGRESS : R_METHOD_NOT_ALLOWED;
	} else if (!strcmp(rest, "/egress/log")) {
		r.kind = m == M_GET ? R_SESSION_EGRESS_LOG : R_METHOD_NOT_ALLOWED;
	} else if (!strcmp(rest, "/clipboard")) {
		r.kind = m == M_GET || m == M_PUT ? R_SESSION_CLIPBOARD : R_METHOD_NOT_ALLOWED;
	} else if (!strcmp(rest, "/open")) {
		r.kind = m == M_POST ? R_SESSION_OPEN : R_METHOD_NOT_ALLOWED;
	} else if (!strcmp(rest, "/launch")) {
		r.kind = m == M_POST ? R_SESSION_LAUNCH : R_METHOD_NOT_ALLOWED;
	} else if (!strcmp(rest, "/trajectory")) {
		r.kind = m == M_GET ? R_SESSION_TRAJECTORY : R_METHOD_NOT_ALLOWED;
	} else if (!strcmp(rest, "/events")) {
		r.kind = m == M_GET ? R_SESSION_EVENTS : R_METHOD_NOT_ALLOWED;
	} else if (!strcmp(rest, "/recording")) {
		r.kind = m == M_GET ? R_SESSION_RECORDING : R_METHOD_NOT_ALLOWED;
	} else if (!strcmp(rest, "/recording.webm")) {
		r.kind = m == M_GET ? R_SESSION_RECORDING_WEBM : R_METHOD_NOT_ALLOWED;
	} else if (!strcmp(rest, "/recording/start")) {
		r.kind = m == M_POST ? R_SESSION_RECORDING_START : R_METHOD_NOT_ALLOWED;
	} else if (!strcmp(rest, "/recording/stop")) {
		r.kind = m == M_POST ? R_SESSION_RECORDING_STOP : R_METHOD_NOT_ALLOWED;
	} else if (!strncmp(rest, "/recording/frames/", 18) &&
		   (n = strspn(rest + 18, "0123456789")) > 0 && n <= 9 && !rest[18 + n]) {
		memcpy(r.sub, rest + 18, n);
		r.sub[n] = '\0';
		r.kind = m == M_GET ? R_SESSION_RECORDING_FRAME : R_METHOD_NOT_ALLOWED;
	} else if (!strcmp(rest, "/tokens")) {
		r.kind = m == M_GET || m == M_POST ? R_SESSION_TOKENS : R_METHOD_NOT_ALLOWED;
	} else if (!strncmp(rest, "/tokens/", 8) && (n = id_len(rest + 8)) > 0 &&
		   n <= ROUTE_SUB_MAX &&
		   (!strcmp(rest + 8 + n, "") || !strcmp(rest + 8 + n, "/rotate"))) {
		memcpy(r.sub, rest + 8, n);
		r.sub[n] = '\0';
		if (rest[8 + n])
			r.kind = m == M_POST ? R_SESSION_TOKEN_ROTATE : R_METHOD_NOT_ALLOWED;
		else
			r.kind = m == M_DELETE ? R_SESSION_TOKEN : R_METHOD_NOT_ALLOWED;
	} else {
		r.kind = R_NOT_FOUND;
		r.id[0] = '\0';
	}
	return r;
}
