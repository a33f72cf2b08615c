/* gateway/session/job_boot.c: the job that boots an image (qemu-img, QEMU,
 * the QMP greeting, the boot itself, the screen's VNC handshake) and the
 * session that takes the guest once it is ready. */
#include "common/fsutil.h"
#include "common/log.h"
#include "gateway/core/metrics.h"
#include "gateway/session/job_int.h"
#include "gateway/session/session_int.h"
#include "vmm-qemu/accel.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

/* How long a booting guest may take to say it is ready. */
#define BOOT_READY_TIMEOUT_MS (600 * 1000)

/* Boots the guest, tells the loop once QEMU runs (it connects to the
 * agent meanwhile), waits for the guest's "ready" and connects its screen.
 * A session deleted meanwhile ends the wait (the guest is freed). */
static void run(struct job *j)
{
	struct vmm_vm_opts opts = job_guest_opts(j);
	char why[256];
	int64_t until;

	job_phase(j, PROGRESS_PREPARING); /* the accelerator's probe (cached) too */
	j->spec.image = &j->image;
	j->spec.url = j->url[0] ? j->url : NULL;
	opts.page_file = j->page_path[0] ? j->page_path : NULL;
	vmm_accel_resolve(VMM_ACCEL_AUTO, &j->image, "qemu-system-x86_64", &j->spec.accel, why,
			  sizeof(why));
	j->rc = vmm_vm_start(&j->spec, &opts, &j->vm, j->err, sizeof(j->err));
	if (j->page_path[0]) {
		unlink(j->page_path); /* vmm copied it into the run dir */
		j->page_path[0] = '\0';
	}
	if (j->rc < 0)
		return;
	pthread_mutex_lock(&j->mu);
	vmm_vm_socket(j->vm, VMM_SOCKET_AGENT, j->agent_path, sizeof(j->agent_path));
	j->started = true;
	progress_enter(&j->progress, PROGRESS_BOOTING, fs_now_ms());
	if (!j->orphaned)
		lws_cancel_service(j->ctx);
	pthread_mutex_unlock(&j->mu);
	until = fs_now_ms() + BOOT_READY_TIMEOUT_MS;
	for (;;) {
		j->rc = vmm_vm_wait_phase(j->vm, "ready", 200, j->err, sizeof(j->err));
		if (j->rc != -ETIMEDOUT)
			break;
		if (job_orphaned(j))
			return; /* freed with the job */
		if (fs_now_ms() >= until) {
			snprintf(j->err, sizeof(j->err), "the guest was not ready within %d s",
				 BOOT_READY_TIMEOUT_MS / 1000);
			return;
		}
	}
	if (j->rc == 0 && j->set_layout)
		j->rc = guest_prep_set_layout(j->vm, j->keyboard_layout, j->err, sizeof(j->err));
	/* The mirror connects once the guest has set its screen mode: QEMU
	 * does not tell a client that connected during boot about the
	 * guest's resize. */
	if (j->rc == 0)
		job_connect_screen(j, j->vm);
}

static void finish(struct sess *s, struct job *j)
{
	if (!sess_take_started_guest(s, j))
		return;
	sess_mark_ready(s, j->mirror);
	j->mirror = NULL;
	if (s->state == SESS_READY)
		log_info("session", "%s ready in %.2f s", s->id,
			 (s->ready_ms - s->created_ms) / 1000.0);
}

const struct job_kind job_kind_boot = {
	.busy = "booting",
	.metrics_op = METRICS_OP_CREATE,
	.starts_guest = true,
	.run = run,
	.finish = finish,
};
