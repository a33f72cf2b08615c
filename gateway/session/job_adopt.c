/* gateway/session/job_adopt.c: the job that takes over a guest an earlier
 * gateway started (its supervisor still runs it), put back as recorded,
 * running or paused; session_adopt.c finds those guests and takes them (or
 * says what became of them) when the job ends. */
#include "common/log.h"
#include "gateway/core/metrics.h"
#include "gateway/session/job_int.h"
#include "gateway/session/session_int.h"
#include "vmm-qemu/migrate.h"
#include "vmm-qemu/vm_find.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* An operation the old gateway had under way may have left the guest
 * stopped (a pause to disk or a fork between stop and cont). */
static void run(struct job *j)
{
	struct vmm_vm_opts opts = job_guest_opts(j);
	json_t *ret = NULL;
	const char *status;
	bool runs;

	/* A monitor connection can first carry the reply to a command the
	 * dead gateway had sent (QEMU answers on whichever connection is
	 * open): the stream then breaks (-EPROTO), and one new connection,
	 * past that reply, is tried. */
	for (int attempt = 0; attempt < 2; attempt++) {
		if (j->vm) {
			vmm_vm_detach(j->vm);
			j->vm = NULL;
		}
		j->rc = vmm_vm_adopt(&j->adopt, &opts, &j->vm, j->err, sizeof(j->err));
		if (j->rc == -EAGAIN) {
			/* Its supervisor is pausing or stopping it (the grace
			 * period ran out): the record says what became of it. */
			vmm_identity_wait_gone(&j->adopt, 300 * 1000);
			return;
		}
		/* A migration the old gateway started (a pause to disk) goes no
		 * further; QEMU cancels it on its migration thread, and until
		 * that is over (finish-migrate) the guest cannot run. */
		if (j->rc == 0 && vmm_vm_qmp(j->vm, "migrate_cancel", NULL, NULL, 5000, j->err,
					     sizeof(j->err)) == 0)
			j->rc = vmm_migrate_settle(j->vm, 60000, j->err, sizeof(j->err));
		if (j->rc == 0)
			j->rc = vmm_vm_qmp(j->vm, "query-status", NULL, &ret, 10000, j->err,
					   sizeof(j->err));
		if (j->rc != -EPROTO)
			break;
		log_warn("job", "adopting %s: %s; connecting again", j->adopt.run_dir, j->err);
	}
	if (j->rc < 0)
		return;
	status = json_string_value(json_object_get(ret, "status"));
	runs = json_is_true(json_object_get(ret, "running"));
	if (status && (!strcmp(status, "inmigrate") || !strcmp(status, "prelaunch"))) {
		/* A restore the old gateway had started and not finished: this
		 * guest never ran, and is let go (job_free destroys it). */
		snprintf(j->err, sizeof(j->err), "its guest had not finished restoring (%s)",
			 status);
		json_decref(ret);
		j->rc = -EINPROGRESS;
		return;
	}
	if (!j->adopt_paused && !runs)
		j->rc = vmm_vm_qmp(j->vm, "cont", NULL, NULL, 10000, j->err, sizeof(j->err));
	else if (j->adopt_paused && runs)
		j->rc = vmm_vm_qmp(j->vm, "stop", NULL, NULL, 10000, j->err, sizeof(j->err));
	if (j->rc < 0)
		log_warn("job", "adopted guest (status %s) not put back: %s", status ? status : "?",
			 j->err);
	json_decref(ret);
	if (j->rc == 0)
		j->rc = job_start_mirror(j->vm, j->ctx, &j->mirror, j->err, sizeof(j->err));
}

const struct job_kind job_kind_adopt = {
	.busy = "adopting",
	.metrics_op = METRICS_OP_ADOPT,
	.run = run,
	.finish = sess_adopt_finished,
};
