/* vmm-qemu/guest_prep.c: see guest_prep.h. Page steps run the desktop
 * image's vitrine-ready in the guest (DevTools listens on the guest's
 * loopback only): through vitrine-agent (a command in ~20 ms), or through
 * qemu-ga's guest-exec when the agent does not answer (each command then
 * costs a guest-exec-status poll or more). */
#include "vmm-qemu/guest_prep.h"

#include "common/fsutil.h"
#include "vmm-qemu/agent_exec.h"
#include "vmm-qemu/input.h"
#include "vmm-qemu/keymap.h"
#include "vmm-qemu/qga_client.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define READY "/usr/local/bin/vitrine-ready"
#define AGENT_MS 10000
#define NAV_TIMEOUT_S 60
#define CLOCK_REPLY_MS 300
#define VAGENT_MS 3000 /* vitrine-agent's answer to a new link */

/* Where commands go: vitrine-agent when it answered, else qemu-ga. */
struct runner {
	struct agent_link *agent;
	struct qga_client *qga;
	struct guest_prep_report *rep; /* never NULL inside a run */
};

/* Adds a note to the run's report. */
static void note(struct runner *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct runner *c, const char *fmt, ...)
{
	char *notes = c->rep->notes;
	size_t used = strlen(notes), size = sizeof(c->rep->notes);
	va_list ap;

	if (used + 3 >= size)
		return;
	if (used) {
		snprintf(notes + used, size - used, "; ");
		used += 2;
	}
	va_start(ap, fmt);
	vsnprintf(notes + used, size - used, fmt, ap);
	va_end(ap);
}

int guest_prep_nav_js(const char *url, char *out, size_t outlen)
{
	json_t *s = json_string(url);
	char *lit = s ? json_dumps(s, JSON_ENCODE_ANY | JSON_ESCAPE_SLASH) : NULL;
	int n = -1;

	/* A JSON string is a JavaScript string literal (U+2028/9 aside, which a
	 * URL cannot hold unencoded). */
	if (lit)
		n = snprintf(out, outlen, "(window.__vitrineOld = 1, location.assign(%s), 1)", lit);
	free(lit);
	json_decref(s);
	return n < 0 || (size_t)n >= outlen ? -ENOSPC : 0;
}

/* Runs vitrine-ready with args (as root); its stdout into out (may be NULL). */
static int ready_exec(struct runner *c, const char *const *argv, char *out, size_t outlen,
		      char *err, size_t errlen)
{
	static const char *const env[] = { "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8",
					   NULL };
	int code, rc;
	const char *stderr_text, *stdout_text;
	size_t stdout_len;
	struct qga_exec_result q = { 0 };
	struct agent_exec_result a = { 0 };

	if (c->agent) {
		struct agent_exec_spec spec = { .argv = argv,
						.env = env,
						.uid = -1,
						.gid = -1,
						.timeout_ms = (NAV_TIMEOUT_S + 5) * 1000,
						.max_output = 1 << 20 };

		rc = agent_exec_run(c->agent, &spec, &a, err, errlen);
		code = a.timed_out ? -1 : a.exit_code;
		stderr_text = a.err;
		stdout_text = a.out;
		stdout_len = a.out_len;
	} else {
		rc = qga_client_exec(c->qga, argv, NULL, NULL, 0, (NAV_TIMEOUT_S + 5) * 1000, &q,
				     err, errlen);
		code = q.exited ? q.exit_code : -1;
		stderr_text = q.err;
		stdout_text = q.out;
		stdout_len = q.out_len;
	}
	if (rc < 0)
		return rc;
	if (code != 0) {
		snprintf(err, errlen, "%s %s exited %d: %.300s", argv[0], argv[1], code,
			 stderr_text ? stderr_text : "");
		rc = -EIO;
	} else if (out) {
		snprintf(out, outlen, "%.*s", (int)stdout_len, stdout_text ? stdout_text : "");
	}
	qga_exec_result_free(&q);
	agent_exec_result_free(&a);
	return rc;
}

static int navigate(struct runner *c, const char *url, char *err, size_t errlen)
{
	const char *check = "document.readyState === 'complete' && !window.__vitrineOld";
	char js[VMM_MAX_URL * 2 + 128], out[64], wait_s[16];
	int64_t until = fs_now_ms() + NAV_TIMEOUT_S * 1000;
	int rc, tries = 0;

	if (guest_prep_nav_js(url, js, sizeof(js)) < 0) {
		snprintf(err, errlen, "url too long");
		return -EINVAL;
	}
	rc = ready_exec(c, (const char *const[]){ READY, "eval", "9222", js, NULL }, NULL, 0, err,
			errlen);
	/* The new document has loaded once the old one's mark is gone. While
	 * the old one is torn down an eval can fail (DevTools answers nothing
	 * for seconds on a loaded host, and vitrine-ready's read times out):
	 * only the deadline ends the wait. */
	while (rc == 0) {
		rc = ready_exec(c, (const char *const[]){ READY, "eval", "9222", check, NULL }, out,
				sizeof(out), err, errlen);
		if (rc == 0 && !strncmp(out, "true", 4))
			break;
		if (fs_now_ms() > until) {
			if (rc == 0)
				snprintf(err, errlen, "%s did not load within %d s", url,
					 NAV_TIMEOUT_S);
			return rc < 0 ? rc : -ETIMEDOUT;
		}
		if (rc < 0) {
			if (!tries++)
				note(c, "waiting for %s to load: %s (trying again)", url, err);
			usleep(200 * 1000);
			rc = 0;
		}
	}
	/* ... and painted (vitrine-ready waits for two animation frames). */
	snprintf(wait_s, sizeof(wait_s), "%d", NAV_TIMEOUT_S);
	if (rc == 0)
		rc = ready_exec(c,
				(const char *const[]){ READY, "page", "9222", wait_s, url, NULL },
				NULL, 0, err, errlen);
	return rc;
}

/* Moves the pointer across the screen and back to its centre (X, the
 * window manager and Chromium run their input paths once), then lets the
 * page render two frames (its script and compositor run once). Measured
 * here on the desktop: without the page step the first click took ~2 s to
 * reach the page after ready, with it ~0.4 s, like later ones. */
static void warm(struct vmm_vm *vm, struct runner *c, bool page)
{
	const struct vmm_spec *spec = vmm_vm_spec(vm);
	int w = spec->width, h = spec->height;
	const int pts[][2] = { { w / 4, h / 4 },
			       { 3 * w / 4, h / 4 },
			       { 3 * w / 4, 3 * h / 4 },
			       { w / 4, 3 * h / 4 },
			       { w / 2, h / 2 } };
	char err[512];

	for (size_t i = 0; i < sizeof(pts) / sizeof(pts[0]); i++)
		if (vmm_vm_qmp(vm, "input-send-event", vmm_input_move(pts[i][0], pts[i][1], w, h),
			       NULL, 5000, err, sizeof(err)) < 0) {
			note(c, "warm-up input: %s", err);
			return;
		}
	if (page &&
	    ready_exec(c,
		       (const char *const[]){ READY, "eval", "9222",
					      "new Promise(r => requestAnimationFrame(() => "
					      "requestAnimationFrame(() => r(1))))",
					      NULL },
		       NULL, 0, err, sizeof(err)) < 0)
		note(c, "warm-up page: %s", err);
}

int guest_prep_layout_argv(const char *layout, const char **argv, char *buf, size_t buflen)
{
	char canon[VMM_KEYMAP_MAX_NAME], lay[32], var[32], why[256];
	size_t n = 0;

	if (buflen < 64 || vmm_keymap_name_parse(layout, canon, lay, var, why, sizeof(why)) < 0)
		return -EINVAL;
	snprintf(buf, buflen, "%s", lay);
	snprintf(buf + 32, buflen - 32, "%s", var);
	/* The rules and model of the image's xorg.conf (and of keymap.c). */
	argv[n++] = "/usr/bin/setxkbmap";
	argv[n++] = "-display";
	argv[n++] = ":0";
	argv[n++] = "-rules";
	argv[n++] = "evdev";
	argv[n++] = "-model";
	argv[n++] = "pc105";
	argv[n++] = "-layout";
	argv[n++] = buf;
	argv[n++] = "-variant";
	argv[n++] = buf + 32;
	argv[n] = NULL;
	return 0;
}

/* Sets the layout through c. */
static int set_layout(struct runner *c, const char *layout, char *err, size_t errlen)
{
	const char *argv[12];
	char buf[64], why[512];
	int rc;

	if (guest_prep_layout_argv(layout, argv, buf, sizeof(buf)) < 0) {
		snprintf(err, errlen, "keyboard layout %s: not a layout name", layout);
		return -EINVAL;
	}
	rc = ready_exec(c, argv, NULL, 0, why, sizeof(why));
	if (rc < 0)
		snprintf(err, errlen, "keyboard layout %s: %s", layout, why);
	return rc;
}

int guest_prep_set_layout(struct vmm_vm *vm, const char *layout, char *err, size_t errlen)
{
	struct runner r = { 0 };
	char path[PATH_MAX];
	int rc;

	vmm_vm_socket(vm, VMM_SOCKET_QGA, path, sizeof(path));
	rc = qga_client_connect(path, AGENT_MS, &r.qga, err, errlen);
	if (rc == 0)
		rc = set_layout(&r, layout, err, errlen);
	qga_client_destroy(r.qga);
	return rc;
}

int guest_prep_set_clock(struct qga_client *c, int timeout_ms, char *err, size_t errlen)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	return qga_client_call(c, "guest-set-time",
			       json_pack("{s:I}", "time",
					 (json_int_t)now.tv_sec * 1000000000 + now.tv_nsec),
			       NULL, timeout_ms, err, errlen);
}

/* Sets the guest clock to the host's: `date -s` through vitrine-agent, or
 * guest_prep_set_clock() through qemu-ga, waiting for the reply when wait.
 * qemu-ga sets the time at once and then runs `hwclock -w`, which waits
 * for the RTC's next second (up to 1 s under TCG, measured here); unless
 * wait, that reply is not waited for (a command in flight when the
 * connection closes is still carried out): only on a connection already in
 * sync, where the command goes out at once. */
static void set_clock(struct runner *c, bool wait)
{
	char err[512];
	int rc;

	if (c->agent) {
		struct timespec now;
		char when[64];

		clock_gettime(CLOCK_REALTIME, &now);
		snprintf(when, sizeof(when), "@%lld.%09ld", (long long)now.tv_sec, now.tv_nsec);
		rc = ready_exec(c, (const char *const[]){ "date", "-u", "-s", when, NULL }, NULL, 0,
				err, sizeof(err));
		if (rc < 0)
			note(c, "guest clock not set: %s", err);
		return;
	}
	rc = guest_prep_set_clock(c->qga, wait ? AGENT_MS : CLOCK_REPLY_MS, err, sizeof(err));
	if (rc < 0 && (wait || rc != -ETIMEDOUT))
		note(c, "guest clock not set: %s", err);
}

int guest_prep_run(struct vmm_vm *vm, const struct guest_prep *p, struct guest_prep_report *rep,
		   char *err, size_t errlen)
{
	struct guest_prep_report own;
	struct runner r = { .rep = rep ? rep : &own };
	struct runner *c = NULL;
	char path[PATH_MAX], why[256];
	int64_t t_clock = 0, t_nav = 0;
	int rc = 0;

	memset(r.rep, 0, sizeof(*r.rep));
	if (p->has_agent) {
		/* The run dir was checked for socket names at start. */
		vmm_vm_socket(vm, VMM_SOCKET_AGENT, path, sizeof(path));
		if (agent_link_open(path, VAGENT_MS, &r.agent, why, sizeof(why)) < 0) {
			note(&r, "vitrine-agent: %s; using qemu-ga", why);
			vmm_vm_socket(vm, VMM_SOCKET_QGA, path, sizeof(path));
			rc = qga_client_connect(path, AGENT_MS, &r.qga, err, errlen);
			if (rc < 0)
				return rc;
		}
		c = &r;
	}
	if (c && p->set_clock && !p->warm)
		set_clock(c, true);
	t_clock = fs_now_ms();
	if (c && p->url)
		rc = navigate(c, p->url, err, errlen);
	t_nav = fs_now_ms();
	if (c && rc == 0 && p->keyboard_layout)
		rc = set_layout(c, p->keyboard_layout, err, errlen);
	if (rc == 0 && p->warm)
		warm(vm, &r, c != NULL);
	/* Last, on a connection the page step has synced: its reply comes
	 * late (see set_clock). */
	if (c && p->set_clock && p->warm)
		set_clock(c, false);
	qga_client_destroy(r.qga);
	r.rep->page_ms = t_nav - t_clock;
	r.rep->warm_ms = fs_now_ms() - t_nav;
	r.rep->via_agent = r.agent != NULL;
	if (p->keep_agent)
		*p->keep_agent = r.agent;
	else
		agent_link_destroy(r.agent);
	return rc;
}
