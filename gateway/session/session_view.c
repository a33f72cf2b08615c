/* gateway/session/session_view.c: what the other rooms read of a session
 * (session.h, "What the other rooms read"), so that struct sess's fields
 * and the rules about them (a guest a job holds is no one's to act on)
 * stay session/'s. */
#include "gateway/session/session_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

const char *sess_id(const struct sess *s)
{
	return s->id;
}

struct gw *sess_gw(const struct sess *s)
{
	return s->gw;
}

enum sess_state sess_state_of(const struct sess *s)
{
	return s->state;
}

const char *sess_error(const struct sess *s)
{
	return s->error;
}

int sess_error_status(const struct sess *s)
{
	return s->error_status ? s->error_status : 500;
}

const char *sess_busy_with(const struct sess *s)
{
	return s->job ? job_kind_name(s->job->kind) : NULL;
}

bool sess_guest_free(const struct sess *s)
{
	return s->state == SESS_READY && !s->job && s->vm;
}

struct screen_size sess_screen(const struct sess *s)
{
	return (struct screen_size){ s->width, s->height };
}

struct display_mirror *sess_mirror(const struct sess *s)
{
	return s->mirror;
}

struct display_encode_cache *sess_shots(const struct sess *s)
{
	return s->shots;
}

int sess_input(struct sess *s, json_t *events, char *err, size_t errlen)
{
	int rc;

	if (!s->vm || s->job) {
		json_decref(events);
		snprintf(err, errlen, "the session has no guest to take input%s%s",
			 s->job ? " while busy " : "", s->job ? job_kind_name(s->job->kind) : "");
		return -EBUSY;
	}
	rc = vmm_vm_input(s->vm, events, err, errlen);
	if (rc == 0)
		sess_guest_queued(s); /* what the socket did not take yet */
	return rc;
}

int sess_guest_socket(const struct sess *s, enum vmm_socket kind, char *out, size_t len)
{
	if (!sess_guest_free(s))
		return -ENOENT;
	return vmm_vm_socket(s->vm, kind, out, len);
}

struct sess_agent *sess_agent_of(const struct sess *s)
{
	return s->agent;
}

bool sess_has_guest_agent(const struct sess *s)
{
	return s->has_agent;
}

void sess_pointer(const struct sess *s, int *x, int *y)
{
	*x = s->pointer_x;
	*y = s->pointer_y;
}

const char *sess_template(const struct sess *s)
{
	return s->template_name;
}

const char *sess_project(const struct sess *s)
{
	return s->req.project;
}

/* s or the first after it that is not a pool's member (pool.h: no one
 * outside session/ sees those). */
static struct sess *visible(struct sess *s)
{
	while (s && s->pool_of[0])
		s = s->next;
	return s;
}

struct sess *sess_first(struct gw *gw)
{
	return visible(gw->sessions);
}

struct sess *sess_next(const struct sess *s)
{
	return visible(s->next);
}

void sess_count_use(struct sess *s, int actions, int screenshots, int commands)
{
	s->usage.actions += (uint64_t)actions;
	s->usage.screenshots += (uint64_t)screenshots;
	s->usage.commands += (uint64_t)commands;
}

const char *sess_control_token(const struct sess *s)
{
	return s->control_token;
}

const char *sess_view_token(const struct sess *s)
{
	return s->view_token;
}

int sess_vcpus(const struct sess *s)
{
	return s->vcpus;
}

int sess_memory_mib(const struct sess *s)
{
	return s->memory_mib;
}

const char *sess_image(const struct sess *s)
{
	return s->image.name;
}

int64_t sess_last_click_ms(const struct sess *s)
{
	return s->last_click_ms;
}

int sess_check_actable(const struct sess *s, bool screenshot_only, struct api_error *e)
{
	/* A paused-in-memory guest still shows its screen: screenshots only. */
	bool shot_ok = screenshot_only && s->state == SESS_PAUSED && s->pause == SESS_PAUSE_MEMORY;
	char msg[160];

	if ((s->state == SESS_READY || shot_ok) && !s->job && s->vm && s->mirror)
		return 0;
	if (s->job)
		snprintf(msg, sizeof(msg), "the session is busy %s", job_kind_name(s->job->kind));
	else if (s->state == SESS_PAUSED)
		snprintf(msg, sizeof(msg),
			 "the session is paused (%s): resume it first, or "
			 "send the action with ?auto_resume=1",
			 s->pause == SESS_PAUSE_DISK ? "on disk" : "in memory");
	else
		snprintf(msg, sizeof(msg), "the session is %s", sess_state_name(s->state));
	api_error_set(e, 409,
		      s->state == SESS_PAUSED ? "session_paused"
		      : s->job		      ? "session_busy"
					      : "session_not_ready",
		      msg);
	return -EBUSY;
}

enum sess_pause sess_paused_how(const struct sess *s)
{
	return s->pause;
}

pid_t sess_qemu_pid(const struct sess *s)
{
	return s->vm ? vmm_vm_qemu_pid(s->vm) : 0;
}

struct egress *sess_egress(const struct sess *s)
{
	return s->egress;
}

const struct event_log *sess_events(const struct sess *s)
{
	return &s->events;
}

bool sess_token_live(const struct sess *s, const char *id)
{
	return !strcmp(id, "control") ? s->control_hash[0] != '\0'
	       : !strcmp(id, "view")  ? s->view_hash[0] != '\0'
				      : false;
}

const struct auth_grant *sess_grants(const struct sess *s, int *n)
{
	*n = s->n_grants;
	return s->grants;
}
