/* gateway/api/session_json.c: a session as the API shows it, with the URLs
 * of its routes (the session itself knows nothing of them). Loop thread. */
#include "common/fsutil.h"
#include "gateway/api/api_int.h"
#include "gateway/session/session.h"
#include "gateway/session/session_usage.h"
#include "gateway/stream/recorder.h"
#include "gateway/stream/stream_hub.h"

#include <string.h>

json_t *api_session_json(const struct sess *s, bool with_tokens)
{
	const char *base = s->gw->public_url, *which;
	char ws[sizeof(s->gw->public_url) + 8];
	int64_t d = sess_deadline(s, &which);
	json_t *j, *boot;

	/* http://host -> ws://host, https://host -> wss://host */
	snprintf(ws, sizeof(ws), "ws%s", strncmp(base, "http", 4) ? base : base + 4);
	j = json_pack("{s:s, s:s, s:s, s:i, s:i, s:i, s:i, s:I, s:{s:s++, s:s+++, s:s+++, s:s+++, "
		      "s:s+++}}",
		      "id", s->id, "status", sess_state_name(s->state), "image", s->req.image,
		      "width", s->width, "height", s->height, "vcpus", s->vcpus, "memory_mib",
		      s->memory_mib, "age_ms", (json_int_t)(fs_now_ms() - s->created_ms), "urls",
		      "self", base, "/v1/sessions/", s->id, "screenshot", base, "/v1/sessions/",
		      s->id, "/screenshot", "actions", base, "/v1/sessions/", s->id, "/actions",
		      "control", ws, "/v1/sessions/", s->id, "/control", "events", base,
		      "/v1/sessions/", s->id, "/events");
	if (!j)
		return NULL;
	json_object_set_new(json_object_get(j, "urls"), "stream",
			    json_pack("s+++", ws, "/v1/sessions/", s->id, "/stream"));
	json_object_set_new(json_object_get(j, "urls"), "viewer",
			    json_pack("s++", base, "/web/#s=", s->id));
	/* Live view: who drives the guest now (agents get 409 meanwhile). */
	json_object_set_new(j, "controlled_by",
			    stream_controller(s) ? json_string(stream_controller(s)) : json_null());
	if (s->ready_ms)
		json_object_set_new(j, "ready_ms", json_integer(s->ready_ms - s->created_ms));
	json_object_set_new(j, "usage", sess_usage_json(s));
	if ((boot = sess_boot_json(s)))
		json_object_set_new(j, "boot", boot);
	if (rec_exists(s)) { /* its summary, and where it plays back */
		json_object_set_new(j, "recording", rec_summary(s));
		json_object_set_new(json_object_get(j, "urls"), "replay",
				    json_pack("s++", base, "/web/#r=", s->id));
	}
	if (s->state == SESS_FAILED)
		json_object_set_new(j, "error", json_string(s->error));
	if (s->state == SESS_PAUSED)
		json_object_set_new(j, "paused",
				    json_string(s->pause == SESS_PAUSE_DISK ? "disk" : "memory"));
	if (s->job)
		json_object_set_new(j, "busy", json_string(job_kind_name(s->job->kind)));
	if (s->template_name[0])
		json_object_set_new(j, "template", json_string(s->template_name));
	json_object_set_new(j, "keyboard_layout",
			    json_string(s->keyboard_layout[0] ? s->keyboard_layout : "us"));
	if (s->parent_id[0])
		json_object_set_new(j, "forked_from", json_string(s->parent_id));
	if (s->req.url[0])
		json_object_set_new(j, "url", json_string(s->req.url));
	if (s->req.timeout_s)
		json_object_set_new(j, "timeout_s", json_integer(s->req.timeout_s));
	if (s->req.idle_timeout_s)
		json_object_set_new(j, "idle_timeout_s", json_integer(s->req.idle_timeout_s));
	if (s->req.timeout_s || s->req.idle_timeout_s)
		json_object_set_new(j, "on_expiry",
				    json_string(s->req.expire_pause ? "pause" : "kill"));
	if (d)
		json_object_set_new(j, "expires_in_ms",
				    json_integer(d > fs_now_ms() ? d - fs_now_ms() : 0));
	if (with_tokens && s->control_token[0])
		json_object_set_new(j, "tokens",
				    json_pack("{s:s, s:s}", "control", s->control_token, "view",
					      s->view_token));
	return j;
}
