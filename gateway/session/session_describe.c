/* gateway/session/session_describe.c: what a session says of itself in the
 * API's JSON (docs/api.md, "The session object"): its state, size, image,
 * timings, usage, boot, lifetimes and tokens. The front door adds what
 * only it knows (the URLs of its routes, api/session_json.c) and the rooms
 * above what is theirs (the live view's controller, the recording).
 * Loop thread. */
#include "common/fsutil.h"
#include "gateway/session/job_kind.h"
#include "gateway/session/session_int.h"
#include "gateway/session/session_usage.h"

json_t *sess_describe(const struct sess *s, bool with_tokens)
{
	const char *which;
	int64_t d = sess_deadline(s, &which);
	json_t *j, *boot;

	j = json_pack("{s:s, s:s, s:s, s:i, s:i, s:i, s:i, s:I}", "id", s->id, "status",
		      sess_state_name(s->state), "image", s->req.image, "width", s->width, "height",
		      s->height, "vcpus", s->vcpus, "memory_mib", s->memory_mib, "age_ms",
		      (json_int_t)(fs_now_ms() - s->created_ms));
	if (!j)
		return NULL;
	if (s->ready_ms)
		json_object_set_new(j, "ready_ms", json_integer(s->ready_ms - s->created_ms));
	json_object_set_new(j, "usage", sess_usage_json(s));
	if ((boot = sess_boot_json(s)))
		json_object_set_new(j, "boot", boot);
	if (s->state == SESS_FAILED)
		json_object_set_new(j, "error", json_string(s->error));
	if (s->state == SESS_PAUSED)
		json_object_set_new(j, "paused",
				    json_string(s->pause == SESS_PAUSE_DISK ? "disk" : "memory"));
	if (s->job)
		json_object_set_new(j, "busy", json_string(job_kind_name(s->job->kind)));
	if (s->template_name[0])
		json_object_set_new(j, "template", json_string(s->template_name));
	if (s->req.project[0])
		json_object_set_new(j, "project", json_string(s->req.project));
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
