/* gateway/api/api_guest.c: what an agent does in the desktop besides commands
 * and files, each a command run as the desktop's user (api_exec_start):
 *
 *   GET|PUT /v1/sessions/{id}/clipboard   {text} (UTF-8), through xclip
 *   POST /v1/sessions/{id}/open {url}     navigates Chromium's tab, waits
 *                                         until the page has loaded and painted
 *   POST /v1/sessions/{id}/launch {command, args}  starts an installed
 *                                         program on the desktop, detached
 *
 * and the egress rules and log (gateway/egress.h):
 *
 *   GET|PUT /v1/sessions/{id}/egress      {allow: [...]}
 *   GET /v1/sessions/{id}/egress/log?after=SEQ&limit=N */
#include "gateway/api/api_audit.h"
#include "gateway/api/api_int.h"
#include "gateway/api/bodies.h"
#include "gateway/egress/egress.h"
#include "gateway/guest/exec.h"
#include "gateway/guest/guest_apps.h"
#include "gateway/session/session.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void api_clipboard(struct http_req *r)
{
	struct sess *s = api_route_session(r);
	const char *set[] = { "/bin/sh", "-c",
			      "exec xclip -selection clipboard -i -t UTF8_STRING >/dev/null",
			      NULL };
	struct api_clip_state *st;
	struct clipboard_body b;
	struct api_error e;

	if (!s || !api_exec_ready(r, s))
		return;
	if (r->method == M_GET) {
		api_exec_start(r, s, guest_clipboard_get_argv, NULL, 0, GUEST_CLIPBOARD_TIMEOUT_S);
		return;
	}
	if (api_clipboard_parse(r->body, r->body_len, &b, &e) < 0) {
		http_reply_api_error(r, &e);
		return;
	}
	if (!(st = http_route_state(r))) {
		json_decref(b.json);
		return;
	}
	st->len = b.len;
	api_audit_set(r, "size", json_integer((json_int_t)b.len)); /* never the text */
	api_exec_start(r, s, set, b.text, b.len, GUEST_CLIPBOARD_TIMEOUT_S);
	json_decref(b.json);
}

void api_open(struct http_req *r)
{
	struct sess *s = api_route_session(r);
	struct api_path_state *st;
	struct open_body b;
	struct api_error e;

	if (!s || !api_exec_ready(r, s) || !(st = http_route_state(r)))
		return;
	if (api_open_parse(r->body, r->body_len, &b, &e) < 0) {
		http_reply_api_error(r, &e);
		return;
	}
	snprintf(st->path, sizeof(st->path), "%s", b.url);
	api_audit_set(r, "url", json_string(b.url));
	api_exec_start(r, s,
		       (const char *const[]){ "/bin/sh", "-c", guest_open_script, b.js, b.url,
					      NULL },
		       NULL, 0, GUEST_OPEN_TIMEOUT_S);
}

void api_launch(struct http_req *r)
{
	struct sess *s = api_route_session(r);
	const char *argv[API_LAUNCH_MAX_ARGS + 4] = { "/bin/sh", "-c", guest_launch_script };
	struct launch_body b;
	struct api_error e;

	if (!s || !api_exec_ready(r, s))
		return;
	if (api_launch_parse(r->body, r->body_len, &b, &e) < 0) {
		http_reply_api_error(r, &e);
		return;
	}
	memcpy(argv + 3, b.argv, (b.argc + 1) * sizeof(b.argv[0]));
	{
		json_t *cmd = json_array();

		for (size_t i = 0; cmd && i < b.argc; i++)
			json_array_append_new(cmd, json_string(b.argv[i]));
		api_audit_set(r, "command", cmd ? cmd : json_null());
	}
	api_exec_start(r, s, argv, NULL, 0, GUEST_LAUNCH_TIMEOUT_S);
	json_decref(b.json);
}

void api_guest_resume(struct http_req *r, struct sess *s, bool timed_out)
{
	const struct agent_exec_result *res;
	const char *err;
	int rc;

	if (!api_exec_finished(r, s, timed_out))
		return;
	api_exec_audit_result(r);
	rc = exec_result(r->exec, &res, &err);
	if (rc < 0 && rc != -ETIMEDOUT) {
		http_reply_error(r, 503, "agent_unavailable", err);
	} else if (r->route.kind == R_SESSION_CLIPBOARD && r->method == M_GET) {
		bool empty = guest_clipboard_empty(res->exit_code, res->err);

		if (rc == 0 && (res->exit_code == 0 || empty))
			http_reply_json(r, 200,
					json_pack("{s:s%}", "text",
						  empty	     ? ""
						  : res->out ? res->out
							     : "",
						  empty ? (size_t)0 : res->out_len));
		else
			http_reply_error(r, 502, "clipboard_failed", res->err ? res->err : err);
	} else if (rc < 0 || res->exit_code != 0) {
		const char *why = rc < 0		     ? err
				  : res->err && res->err_len ? res->err
							     : "the guest refused";

		if (r->route.kind == R_SESSION_LAUNCH && rc == 0 && res->exit_code == 127)
			http_reply_error(r, 404, "app_not_found", why);
		else
			http_reply_error(r, 502,
					 r->route.kind == R_SESSION_OPEN     ? "open_failed"
					 : r->route.kind == R_SESSION_LAUNCH ? "launch_failed"
									     : "clipboard_failed",
					 why);
	} else if (r->route.kind == R_SESSION_CLIPBOARD) {
		http_reply_json(r, 200,
				json_pack("{s:b, s:I}", "ok", 1, "bytes",
					  (json_int_t)((struct api_clip_state *)r->route_state)
						  ->len));
	} else if (r->route.kind == R_SESSION_OPEN) {
		http_reply_json(r, 200,
				json_pack("{s:s, s:b}", "url",
					  ((struct api_path_state *)r->route_state)->path, "loaded",
					  1));
	} else {
		http_reply_json(r, 200,
				json_pack("{s:I}", "pid",
					  (json_int_t)(res->out ? atoll(res->out) : 0)));
	}
	exec_release(r->exec);
	r->exec = NULL;
}

void api_egress(struct http_req *r)
{
	struct sess *s = api_route_session(r);
	struct egress_rules *rules;
	struct api_error e;
	char err[512];
	json_t *j;

	if (!s)
		return;
	if (r->method == M_PUT) {
		if (!(j = api_body_object(r->body, r->body_len, &e))) {
			http_reply_api_error(r, &e);
			return;
		}
		if (egress_rules_parse(j, &rules, err, sizeof(err)) < 0) {
			json_decref(j);
			http_reply_error(r, 400, "invalid_argument", err);
			return;
		}
		api_audit_set(r, "rules", json_incref(j));
		json_decref(j);
		egress_set_rules(sess_egress(s), rules);
		sess_save(s); /* the rules survive a restart */
	}
	http_reply_json(r, 200, egress_rules_now(sess_egress(s)));
}

void api_egress_log(struct http_req *r)
{
	struct sess *s = api_route_session(r);
	int after, limit;

	if (!s || api_query_int(r, "after=", 0, 0, 1 << 30, &after) < 0 ||
	    api_query_int(r, "limit=", 100, 1, 1000, &limit) < 0)
		return;
	http_reply_json(r, 200, egress_log_get(sess_egress(s), (uint64_t)after, (size_t)limit));
}

void api_cdp_version(struct http_req *r)
{
	struct sess *s = api_route_session(r);
	char host[256] = "", url[512];

	if (!s)
		return;
	if (lws_hdr_copy(r->wsi, host, sizeof(host), WSI_TOKEN_HOST) <= 0)
		snprintf(host, sizeof(host), "%s",
			 r->gw->public_url + (strncmp(r->gw->public_url, "https://", 8) ? 7 : 8));
	snprintf(url, sizeof(url), "ws://%s/v1/sessions/%s/cdp", host, sess_id(s));
	http_reply_json(r, 200,
			json_pack("{s:s, s:s, s:s, s:s}", "Browser", "Chromium (vitrine guest)",
				  "Protocol-Version", "1.3", "User-Agent", "vitrine",
				  "webSocketDebuggerUrl", url));
}
