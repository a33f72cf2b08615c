/* gateway/session.c: see session.h. */
#include "gateway/session.h"

#include "common/fsutil.h"
#include "common/log.h"
#include "gateway/run.h"
#include "gateway/stream_hub.h"
#include "vmm-qemu/accel.h"
#include "vmm-qemu/snapshot.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#define POLL_US (20 * LWS_US_PER_MS)
#define SESS_KEEP_FRESH_MS 30

const char *sess_state_name(enum sess_state st)
{
	switch (st) {
	case SESS_STARTING:
		return "starting";
	case SESS_READY:
		return "ready";
	case SESS_FAILED:
		return "failed";
	}
	return "unknown";
}

static void wake_waiters(struct sess *s)
{
	for (int i = 0; i < SESS_MAX_WAITERS; i++)
		if (s->waiters[i])
			lws_callback_on_writable(s->waiters[i]);
}

/* Releases the guest and everything watching it. */
static void stop_guest(struct sess *s, const char *why)
{
	run_fail_all(s, why);
	display_mirror_stop(s->mirror);
	s->mirror = NULL;
	vmm_vm_destroy(s->vm);
	s->vm = NULL;
}

static void set_failed(struct sess *s, const char *why)
{
	log_warn("session", "%s failed: %s", s->id, why);
	s->state = SESS_FAILED;
	snprintf(s->error, sizeof(s->error), "%.*s", (int)sizeof(s->error) - 1, why);
	stop_guest(s, "the session failed");
	wake_waiters(s);
}

/* Called on the mirror's worker thread: only wake the loop. */
static void on_frame(void *ud)
{
	struct gw *gw = ud;

	lws_cancel_service(gw->ctx);
}

static int start_mirror(struct sess *s, char *err, size_t errlen)
{
	char path[4200];
	int rc;

	snprintf(path, sizeof(path), "%s/vnc.sock", vmm_vm_run_dir(s->vm));
	s->shots = display_encode_cache_create(8);
	if (!s->shots) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = display_mirror_start(path, on_frame, s->gw, &s->mirror, err, errlen);
	/* Screenshots then need no round trip to QEMU (see run.c). */
	if (rc == 0)
		display_mirror_keep_fresh(s->mirror, SESS_KEEP_FRESH_MS);
	return rc;
}

/* The session's heartbeat: services QMP and the console, notices the guest
 * becoming ready or dying, and the session expiring. */
static void sess_tick(lws_sorted_usec_list_t *sul)
{
	struct sess *s = lws_container_of(sul, struct sess, sul);
	char err[2048];
	int rc;

	if (s->expires_ms && fs_now_ms() >= s->expires_ms) {
		log_info("session", "%s reached its timeout_s=%d: destroying", s->id,
			 s->req.timeout_s);
		sess_destroy(s);
		return;
	}
	if (!s->vm)
		goto again;
	rc = vmm_vm_service(s->vm, 0, err, sizeof(err));
	if (rc < 0) {
		set_failed(s, err);
		goto again;
	}
	if (s->state == SESS_STARTING) {
		const struct vmm_phase *ph;
		size_t n = vmm_vm_phases(s->vm, &ph);

		for (size_t i = 0; i < n; i++)
			if (!strcmp(ph[i].name, "ready")) {
				/* The mirror connects once the guest has set its screen
				 * mode: QEMU does not tell a client that connected
				 * during boot about the guest's resize. */
				if (start_mirror(s, err, sizeof(err)) < 0) {
					set_failed(s, err);
					break;
				}
				s->state = SESS_READY;
				s->ready_ms = fs_now_ms();
				log_info("session", "%s ready in %.2f s", s->id,
					 (s->ready_ms - s->created_ms) / 1000.0);
				wake_waiters(s);
				break;
			}
	}
again:
	lws_sul_schedule(s->gw->ctx, 0, &s->sul, sess_tick, POLL_US);
}

/* Starts s's guest from the template req->image: restored, not booted, so
 * it is ready as soon as it runs. Returns 0 or -errno with *e filled. */
static int restore_template(struct sess *s, const struct session_request *req,
			    struct api_error *e)
{
	struct vmm_vm_opts opts = { 0 };
	struct vmm_template t;
	char err[2048];
	int rc = vmm_template_load(req->image, &t, err, sizeof(err));

	if (rc < 0) {
		api_error_set(e, rc == -ENOENT ? 404 : 500, rc == -ENOENT ? "unknown_template" : "internal",
			  err);
		return rc;
	}
	if ((req->width && req->width != t.width) || (req->height && req->height != t.height) ||
	    (req->vcpus && req->vcpus != t.vcpus) ||
	    (req->memory_mib && req->memory_mib != t.memory_mib) || req->url[0] || req->page) {
		api_error_set(e, 400, "invalid_argument",
			  "a template fixes screen, vcpus, memory and page; give none of them");
		return -EINVAL;
	}
	s->width = t.width;
	s->height = t.height;
	rc = vmm_template_restore(&t, &opts, &s->vm, NULL, err, sizeof(err));
	if (rc < 0) {
		api_error_set(e, 500, "restore_failed", err);
		return rc;
	}
	/* The guest shows the template's clock until told the time (the
	 * desktop's agent can; the tiny guest has none). */
	if (t.has_disk && vmm_template_set_clock(s->vm, 2000, err, sizeof(err)) < 0)
		log_warn("session", "%s: clock not set after restore: %s", s->id, err);
	rc = start_mirror(s, err, sizeof(err));
	if (rc < 0) {
		api_error_set(e, 500, "restore_failed", err);
		vmm_vm_destroy(s->vm);
		s->vm = NULL;
		return rc;
	}
	s->state = SESS_READY;
	s->ready_ms = fs_now_ms();
	return 0;
}

int sess_create(struct gw *gw, const struct session_request *req, struct sess **out,
		struct api_error *e)
{
	struct vmm_vm_opts opts = { 0 };
	struct vmm_spec spec;
	unsigned char rnd[8];
	char err[2048], why[256], page_path[96];
	struct sess *s;
	int rc;

	if (gw->n_sessions >= gw->max_sessions) {
		api_error_set(e, 429, "too_many_sessions", "the gateway runs its maximum of sessions");
		return -EBUSY;
	}
	s = calloc(1, sizeof(*s));
	if (!s || getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd) ||
	    auth_new_token(s->control_token) < 0 || auth_new_token(s->view_token) < 0) {
		free(s);
		api_error_set(e, 500, "internal", "out of memory or randomness");
		return -ENOMEM;
	}
	snprintf(s->id, sizeof(s->id), "s_%02x%02x%02x%02x%02x%02x%02x%02x", rnd[0], rnd[1],
		 rnd[2], rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
	s->gw = gw;
	s->req = *req;
	s->req.page = NULL; /* the page is handed over at start, not kept */
	if (req->from_template) {
		s->created_ms = fs_now_ms();
		if (req->timeout_s)
			s->expires_ms = s->created_ms + (int64_t)req->timeout_s * 1000;
		rc = restore_template(s, req, e);
		if (rc < 0) {
			display_encode_cache_destroy(s->shots);
			free(s);
			return rc;
		}
		goto started;
	}
	rc = vmm_image_load(req->image, &s->image, err, sizeof(err));
	if (rc < 0) {
		api_error_set(e, rc == -ENOENT ? 404 : 500, rc == -ENOENT ? "unknown_image" : "internal",
			  err);
		free(s);
		return rc;
	}
	vmm_spec_defaults(&spec);
	spec.image = &s->image;
	if (req->width)
		spec.width = req->width;
	if (req->height)
		spec.height = req->height;
	if (req->vcpus)
		spec.vcpus = req->vcpus;
	spec.memory_mib = req->memory_mib ? req->memory_mib : s->image.rootfs[0] ? 2048 : 256;
	spec.url = req->url[0] ? req->url : NULL;
	if (req->page) {
		/* The guest gets the page over fw_cfg (see docs/images.md). */
		snprintf(page_path, sizeof(page_path), "/tmp/vitrine-page-%s.html", s->id);
		if (fs_write_file(page_path, req->page, strlen(req->page)) < 0) {
			api_error_set(e, 500, "internal", "cannot stage the page");
			free(s);
			return -EIO;
		}
		opts.page_file = page_path;
	}
	vmm_accel_resolve(VMM_ACCEL_AUTO, &s->image, "qemu-system-x86_64", &spec.accel, why,
			  sizeof(why));
	s->width = spec.width;
	s->height = spec.height;
	s->created_ms = fs_now_ms();
	if (req->timeout_s)
		s->expires_ms = s->created_ms + (int64_t)req->timeout_s * 1000;
	rc = vmm_vm_start(&spec, &opts, &s->vm, err, sizeof(err));
	if (req->page)
		unlink(page_path); /* vmm copied it into the run dir */
	if (rc < 0) {
		api_error_set(e, rc == -EINVAL ? 400 : 500, rc == -EINVAL ? "invalid_argument" : "boot_failed",
			  err);
		free(s);
		return rc;
	}
started:
	s->pointer_x = s->width / 2;
	s->pointer_y = s->height / 2;
	s->next = gw->sessions;
	gw->sessions = s;
	gw->n_sessions++;
	log_info("session", "%s %s: %s %s %dx%d", s->id,
		 s->state == SESS_READY ? "restored, ready" : "starting",
		 req->from_template ? "template" : "image", req->image, s->width, s->height);
	lws_sul_schedule(gw->ctx, 0, &s->sul, sess_tick, POLL_US);
	*out = s;
	return 0;
}

struct sess *sess_find(struct gw *gw, const char *id)
{
	for (struct sess *s = gw->sessions; s; s = s->next)
		if (!strcmp(s->id, id))
			return s;
	return NULL;
}

void sess_destroy(struct sess *s)
{
	struct sess **pp;

	if (!s)
		return;
	for (pp = &s->gw->sessions; *pp; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			s->gw->n_sessions--;
			break;
		}
	lws_sul_cancel(&s->sul);
	stream_hub_destroy(s->hub);
	/* Waiters look the session up again by id and find it gone. */
	wake_waiters(s);
	stop_guest(s, "the session was deleted");
	display_encode_cache_destroy(s->shots);
	log_info("session", "%s destroyed", s->id);
	free(s);
}

void sess_destroy_all(struct gw *gw)
{
	while (gw->sessions)
		sess_destroy(gw->sessions);
}

json_t *sess_to_json(const struct sess *s, bool with_tokens)
{
	const char *base = s->gw->public_url;
	char ws[sizeof(s->gw->public_url) + 8];
	json_t *j;

	/* http://host -> ws://host, https://host -> wss://host */
	snprintf(ws, sizeof(ws), "ws%s", strncmp(base, "http", 4) ? base : base + 4);
	j = json_pack("{s:s, s:s, s:s, s:i, s:i, s:I, s:{s:s++, s:s+++, s:s+++, s:s+++}}", "id",
		      s->id, "status", sess_state_name(s->state), "image", s->req.image, "width",
		      s->width, "height", s->height, "age_ms",
		      (json_int_t)(fs_now_ms() - s->created_ms), "urls", "self", base,
		      "/v1/sessions/", s->id, "screenshot", base, "/v1/sessions/", s->id,
		      "/screenshot", "actions", base, "/v1/sessions/", s->id, "/actions", "control",
		      ws, "/v1/sessions/", s->id, "/control");
	if (!j)
		return NULL;
	json_object_set_new(json_object_get(j, "urls"), "stream",
			    json_pack("s+++", ws, "/v1/sessions/", s->id, "/stream"));
	json_object_set_new(json_object_get(j, "urls"), "viewer",
			    json_pack("s++", base, "/web/#s=", s->id));
	/* Live view: who drives the guest now (agents get 409 meanwhile). */
	json_object_set_new(j, "controlled_by",
			    stream_controller(s) ? json_string(stream_controller(s)) : json_null());
	if (s->state == SESS_READY)
		json_object_set_new(j, "ready_ms", json_integer(s->ready_ms - s->created_ms));
	if (s->state == SESS_FAILED)
		json_object_set_new(j, "error", json_string(s->error));
	if (s->req.url[0])
		json_object_set_new(j, "url", json_string(s->req.url));
	if (s->req.timeout_s)
		json_object_set_new(j, "timeout_s", json_integer(s->req.timeout_s));
	if (with_tokens)
		json_object_set_new(j, "tokens", json_pack("{s:s, s:s}", "control", s->control_token,
							   "view", s->view_token));
	return j;
}

int sess_add_waiter(struct sess *s, struct lws *wsi)
{
	for (int i = 0; i < SESS_MAX_WAITERS; i++)
		if (!s->waiters[i]) {
			s->waiters[i] = wsi;
			return 0;
		}
	return -ENOSPC;
}

void sess_remove_waiter(struct sess *s, struct lws *wsi)
{
	for (int i = 0; i < SESS_MAX_WAITERS; i++)
		if (s->waiters[i] == wsi)
			s->waiters[i] = NULL;
}
