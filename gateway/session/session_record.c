/* gateway/session/session_record.c: see session_record.h. */
#include "gateway/session/session_record.h"

#include "common/fsutil.h"
#include "common/log.h"
#include "gateway/egress/egress.h"
#include "gateway/session/job_kind.h"
#include "gateway/session/registry.h"
#include "gateway/session/session_int.h"
#include "gateway/session/session_usage.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Unix ms now minus the monotonic clock: converts deadlines both ways. */
static int64_t unix_offset_ms(void)
{
	return fs_unix_ms() - fs_now_ms();
}

const char *sess_record_state(const struct sess *s)
{
	switch (s->state) {
	case SESS_STARTING:
		return "starting";
	case SESS_READY:
		return "running";
	case SESS_PAUSED:
		return s->pause == SESS_PAUSE_DISK ? "paused_disk" : "paused_memory";
	case SESS_FAILED:
		return "failed";
	}
	return "failed";
}

/* The create body that makes req again (egress: the rules now). */
static json_t *request_json(const struct sess *s)
{
	const struct session_request *q = &s->req;
	json_t *j = json_object();

	if (!j)
		return NULL;
	json_object_set_new(j, q->from_template ? "template" : "image", json_string(q->image));
	if (q->width)
		json_object_set_new(j, "width", json_integer(q->width));
	if (q->height)
		json_object_set_new(j, "height", json_integer(q->height));
	if (q->vcpus)
		json_object_set_new(j, "vcpus", json_integer(q->vcpus));
	if (q->memory_mib)
		json_object_set_new(j, "memory_mib", json_integer(q->memory_mib));
	if (q->url[0])
		json_object_set_new(j, "url", json_string(q->url));
	if (q->timeout_s)
		json_object_set_new(j, "timeout_s", json_integer(q->timeout_s));
	if (q->idle_timeout_s)
		json_object_set_new(j, "idle_timeout_s", json_integer(q->idle_timeout_s));
	if (q->expire_pause)
		json_object_set_new(j, "on_expiry", json_string("pause"));
	if (q->keyboard_layout[0])
		json_object_set_new(j, "keyboard_layout", json_string(q->keyboard_layout));
	json_object_set_new(j, "egress", egress_rules_now(s->egress));
	return j;
}

static json_int_t to_unix(int64_t mono_ms, int64_t off)
{
	return mono_ms ? (json_int_t)(mono_ms + off) : 0;
}

json_t *sess_record(const struct sess *s)
{
	int64_t off = unix_offset_ms();
	const char *ckpt = s->ckpt;
	json_t *j;

	/* A resume from disk holds the checkpoint until the guest runs. */
	if (!ckpt[0] && s->job && s->job->kind == &job_kind_resume_disk)
		ckpt = s->job->ckpt;
	j = json_pack("{s:i, s:s, s:s, s:s, s:o, s:[i,i], s:i, s:i, s:b, s:I, s:I, s:I, s:b, "
		      "s:{s:s, s:s}, s:I}",
		      "version", SESS_RECORD_VERSION, "id", s->id, "node", s->gw->node, "state",
		      sess_record_state(s), "request", request_json(s), "screen", s->width,
		      s->height, "vcpus", s->vcpus, "memory_mib", s->memory_mib, "has_agent",
		      s->has_agent, "created_unix_ms", to_unix(s->created_ms, off), "ready_unix_ms",
		      to_unix(s->ready_ms, off), "expires_unix_ms", to_unix(s->expires_ms, off),
		      "warned", s->warned, "tokens", "control_sha256", s->control_hash,
		      "view_sha256", s->view_hash, "events_seq",
		      (json_int_t)events_last(&s->events));
	if (!j)
		return NULL;
	if (s->n_grants) {
		json_t *minted = json_array();

		for (int i = 0; i < s->n_grants; i++) {
			json_t *scopes = json_array();

			for (unsigned b = 1; b & AUTH_RIGHTS_MINTABLE; b <<= 1)
				if (s->grants[i].rights & b)
					json_array_append_new(scopes,
							      json_string(auth_right_name(b)));
			json_array_append_new(minted,
					      json_pack("{s:s, s:s, s:o, s:I}", "id",
							s->grants[i].id, "sha256",
							s->grants[i].hash, "scopes", scopes,
							"expires_unix_ms",
							(json_int_t)s->grants[i].expires_unix_ms));
		}
		json_object_set_new(json_object_get(j, "tokens"), "minted", minted);
	}
	if (s->error[0])
		json_object_set_new(j, "error", json_string(s->error));
	json_object_set_new(j, "usage", usage_record_json(&s->usage));
	json_object_set_new(j, "usage_since_unix_ms",
			    json_integer(to_unix(s->usage.since_ms, off)));
	if (s->template_name[0])
		json_object_set_new(j, "template", json_string(s->template_name));
	if (s->req.project[0])
		json_object_set_new(j, "project", json_string(s->req.project));
	if (s->pool_of[0]) /* a warm pool's member (pool.h), adopted as one */
		json_object_set_new(j, "pool", json_string(s->pool_of));
	if (s->parent_id[0])
		json_object_set_new(j, "forked_from", json_string(s->parent_id));
	json_object_set_new(j, "keyboard_layout",
			    json_string(s->keyboard_layout[0] ? s->keyboard_layout
							      : VMM_KEYMAP_DEFAULT));
	if (ckpt[0])
		json_object_set_new(j, "checkpoint", json_string(ckpt));
	if (json_object_size(s->ext))
		json_object_set_new(j, "ext", json_deep_copy(s->ext));
	if (s->guest.run_dir[0])
		json_object_set_new(j, "guest",
				    json_pack("{s:s, s:i, s:I}", "run_dir", s->guest.run_dir, "pid",
					      (int)s->guest.pid, "start_time",
					      (json_int_t)s->guest.start_time));
	return j;
}

static int64_t to_mono(json_int_t unix_ms, int64_t off)
{
	return unix_ms > 0 ? (int64_t)unix_ms - off : 0;
}

/* Copies string field key of rec into out (len bytes); absent: "". */
static int get_str(const json_t *rec, const char *key, char *out, size_t len, char *why,
		   size_t whylen)
{
	const json_t *v = json_object_get(rec, key);

	out[0] = '\0';
	if (!v)
		return 0;
	if (!json_is_string(v) || json_string_length(v) >= len) {
		snprintf(why, whylen, "field %s is not a string of under %zu bytes", key, len);
		return -EINVAL;
	}
	memcpy(out, json_string_value(v), json_string_length(v) + 1);
	return 0;
}

/* The minted tokens of a record (absent: none). */
static int fill_grants(struct sess *s, const json_t *minted, char *why, size_t whylen)
{
	size_t i;
	const json_t *g;

	if (!minted)
		return 0;
	if (!json_is_array(minted) || json_array_size(minted) > SESS_GRANTS_MAX) {
		snprintf(why, whylen, "bad record: tokens.minted is not an array of at most %d",
			 SESS_GRANTS_MAX);
		return -EINVAL;
	}
	json_array_foreach(minted, i, g)
	{
		struct auth_grant *out = &s->grants[s->n_grants];
		const char *id = NULL, *hash = NULL;
		json_t *scopes = NULL, *name;
		json_int_t expires = 0;
		size_t k;

		if (json_unpack((json_t *)g, "{s:s, s:s, s:o, s:I}", "id", &id, "sha256", &hash,
				"scopes", &scopes, "expires_unix_ms", &expires) < 0 ||
		    strlen(id) != AUTH_GRANT_ID_LEN || strlen(hash) != AUTH_HASH_LEN ||
		    !json_is_array(scopes) || expires < 0) {
			snprintf(why, whylen, "bad record: tokens.minted[%zu] is malformed", i);
			return -EINVAL;
		}
		memset(out, 0, sizeof(*out));
		memcpy(out->id, id, AUTH_GRANT_ID_LEN + 1);
		memcpy(out->hash, hash, AUTH_HASH_LEN + 1);
		out->expires_unix_ms = expires;
		json_array_foreach(scopes, k, name)
		{
			unsigned r = auth_right_by_name(json_string_value(name));

			if (!r) {
				snprintf(why, whylen,
					 "bad record: tokens.minted[%zu]: unknown scope", i);
				return -EINVAL;
			}
			out->rights |= r;
		}
		s->n_grants++;
	}
	return 0;
}

static int fill(struct sess *s, const json_t *rec, int64_t off, char *why, size_t whylen)
{
	json_int_t created = 0, ready = 0, expires = 0, seq = 0, start_time = 0;
	const char *state = NULL, *ctl = NULL, *view = NULL, *run_dir = NULL;
	int warned = 0, has_agent = 0, pid = 0;
	json_error_t jerr;

	if (json_unpack_ex((json_t *)rec, &jerr, 0,
			   "{s:s, s:[ii], s:i, s:i, s:b, s:I, s?I, s?I, s?b, s:{s:s, s:s}, s:I}",
			   "state", &state, "screen", &s->width, &s->height, "vcpus", &s->vcpus,
			   "memory_mib", &s->memory_mib, "has_agent", &has_agent, "created_unix_ms",
			   &created, "ready_unix_ms", &ready, "expires_unix_ms", &expires, "warned",
			   &warned, "tokens", "control_sha256", &ctl, "view_sha256", &view,
			   "events_seq", &seq) < 0) {
		snprintf(why, whylen, "bad record: %s", jerr.text);
		return -EINVAL;
	}
	/* "" for none: a session that stands for an unreadable record. */
	if ((strlen(ctl) != AUTH_HASH_LEN && *ctl) || (strlen(view) != AUTH_HASH_LEN && *view)) {
		snprintf(why, whylen, "bad record: token hashes are not SHA-256 hex");
		return -EINVAL;
	}
	snprintf(s->control_hash, sizeof(s->control_hash), "%s", ctl);
	snprintf(s->view_hash, sizeof(s->view_hash), "%s", view);
	if (fill_grants(s, json_object_get(json_object_get(rec, "tokens"), "minted"), why, whylen) <
	    0)
		return -EINVAL;
	s->has_agent = has_agent;
	s->warned = warned;
	s->created_ms = to_mono(created, off);
	s->ready_ms = to_mono(ready, off);
	s->expires_ms = to_mono(expires, off);
	s->active_ms = fs_now_ms(); /* the idle timeout counts from the adoption */
	s->events.next_seq = seq + 1;
	if (!strcmp(state, "starting"))
		s->state = SESS_STARTING;
	else if (!strcmp(state, "running"))
		s->state = SESS_READY;
	else if (!strcmp(state, "paused_memory") || !strcmp(state, "paused_disk")) {
		s->state = SESS_PAUSED;
		s->pause = !strcmp(state, "paused_disk") ? SESS_PAUSE_DISK : SESS_PAUSE_MEMORY;
	} else if (!strcmp(state, "failed"))
		s->state = SESS_FAILED;
	else {
		snprintf(why, whylen, "bad record: unknown state '%.40s'", state);
		return -EINVAL;
	}
	/* what it used before (a record from before metering has none) */
	if (json_object_get(rec, "usage") &&
	    usage_record_parse(json_object_get(rec, "usage"), &s->usage) < 0) {
		snprintf(why, whylen, "bad record: usage is malformed");
		return -EINVAL;
	}
	{
		json_int_t since = json_integer_value(json_object_get(rec, "usage_since_unix_ms"));

		s->usage.phase = USAGE_NONE; /* opened below, from when the record says */
		s->usage.since_ms = since > 0 ? to_mono(since, off) : fs_now_ms();
	}
	if (get_str(rec, "error", s->error, sizeof(s->error), why, whylen) < 0 ||
	    get_str(rec, "template", s->template_name, sizeof(s->template_name), why, whylen) < 0 ||
	    get_str(rec, "project", s->req.project, sizeof(s->req.project), why, whylen) < 0 ||
	    get_str(rec, "forked_from", s->parent_id, sizeof(s->parent_id), why, whylen) < 0 ||
	    get_str(rec, "pool", s->pool_of, sizeof(s->pool_of), why, whylen) < 0 ||
	    get_str(rec, "checkpoint", s->ckpt, sizeof(s->ckpt), why, whylen) < 0 ||
	    get_str(rec, "keyboard_layout", s->keyboard_layout, sizeof(s->keyboard_layout), why,
		    whylen) < 0)
		return -EINVAL;
	{
		const json_t *ext = json_object_get(rec, "ext");

		if (ext && !json_is_object(ext)) {
			snprintf(why, whylen, "bad record: ext is not an object");
			return -EINVAL;
		}
		if (ext && !(s->ext = json_deep_copy(ext))) {
			snprintf(why, whylen, "out of memory");
			return -ENOMEM;
		}
	}
	s->pool_counted = s->pool_of[0] != '\0'; /* its refill was counted by its gateway */
	/* A record from before layouts: the guest runs the image's US layout. */
	if (!s->keyboard_layout[0])
		snprintf(s->keyboard_layout, sizeof(s->keyboard_layout), "%s", VMM_KEYMAP_DEFAULT);
	/* The loop does not run yet (adoption at start): compile it now. */
	if (strcmp(s->keyboard_layout, VMM_KEYMAP_DEFAULT)) {
		char canon[VMM_KEYMAP_MAX_NAME], err[256];

		if (vmm_keymap_check(s->keyboard_layout, canon, err, sizeof(err)) < 0 ||
		    !vmm_keymap_get(canon, err, sizeof(err))) {
			snprintf(why, whylen, "bad record: %s", err);
			return -EINVAL;
		}
	}
	if (json_object_get(rec, "guest") &&
	    json_unpack_ex((json_t *)rec, &jerr, 0, "{s:{s:s, s:i, s:I}}", "guest", "run_dir",
			   &run_dir, "pid", &pid, "start_time", &start_time) < 0) {
		snprintf(why, whylen, "bad record: guest: %s", jerr.text);
		return -EINVAL;
	}
	if (run_dir) {
		if (pid <= 0 || start_time <= 0 || strlen(run_dir) >= sizeof(s->guest.run_dir)) {
			snprintf(why, whylen, "bad record: guest identity out of range");
			return -EINVAL;
		}
		snprintf(s->guest.run_dir, sizeof(s->guest.run_dir), "%s", run_dir);
		s->guest.pid = pid;
		s->guest.start_time = (unsigned long long)start_time;
	}
	return 0;
}

struct sess *sess_from_record(struct gw *gw, const char *id, const json_t *rec, char *why,
			      size_t whylen)
{
	const json_t *v = json_object_get(rec, "version"), *req_json;
	struct session_request req = { 0 };
	struct api_error e;
	struct sess *s;
	char *text;
	int rc;

	if (!json_is_integer(v) || json_integer_value(v) != SESS_RECORD_VERSION) {
		snprintf(why, whylen, "record version %s is not %d (made by another vitrine?)",
			 json_is_integer(v) ? "unknown" : "missing", SESS_RECORD_VERSION);
		return NULL;
	}
	v = json_object_get(rec, "id");
	if (!json_is_string(v) || strcmp(json_string_value(v), id)) {
		snprintf(why, whylen, "bad record: its id is not its file's name");
		return NULL;
	}
	req_json = json_object_get(rec, "request");
	text = json_is_object(req_json) ? json_dumps(req_json, JSON_COMPACT) : NULL;
	rc = text ? session_request_parse(text, strlen(text), &req, &e) : -EINVAL;
	free(text);
	if (rc < 0) {
		snprintf(why, whylen, "bad record: request: %s",
			 json_is_object(req_json) ? e.message : "missing");
		return NULL;
	}
	s = sess_alloc(gw, &req, &e);
	session_request_free(&req);
	if (!s) {
		snprintf(why, whylen, "%s", e.message);
		return NULL;
	}
	snprintf(s->id, sizeof(s->id), "%s", id);
	s->control_token[0] = s->view_token[0] = '\0'; /* only their hashes survive */
	if (fill(s, rec, unix_offset_ms(), why, whylen) < 0) {
		sess_free_unlinked(s);
		return NULL;
	}
	sess_usage_adopted(s);
	return s;
}

int sess_save_checked(struct sess *s)
{
	json_t *rec;
	int rc;

	if (!s->gw->registry)
		return 0;
	rec = sess_record(s);
	rc = rec ? registry_write(s->gw->registry, s->id, rec) : -ENOMEM;
	json_decref(rec);
	return rc;
}

void sess_save(struct sess *s)
{
	int rc = sess_save_checked(s);

	if (rc < 0)
		log_error("session",
			  "%s: cannot write its record: %s (it would not survive a "
			  "restart)",
			  s->id, strerror(-rc));
}
