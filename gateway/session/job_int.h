/* gateway/session/job_int.h: what job.c gives the kinds' own files
 * (job_kind.h) for their work on a job thread, and no one else calls. */
#ifndef VITRINE_GATEWAY_JOB_INT_H
#define VITRINE_GATEWAY_JOB_INT_H

#include "gateway/session/job.h"
#include "gateway/session/job_kind.h"
#include "vmm-qemu/guest_prep.h"

/* The job thread: j's guest start is in phase ph from now on. */
void job_phase(struct job *j, enum progress_phase ph);
/* The options for a guest j starts: supervised when the loop said so. */
struct vmm_vm_opts job_guest_opts(struct job *j);
/* Whether the loop let go of j meanwhile (its session was deleted). */
bool job_orphaned(struct job *j);
/* The last phase of a guest's start: connects j->mirror to vm's screen
 * (job_start_mirror), into j->rc and j->err. */
void job_connect_screen(struct job *j, struct vmm_vm *vm);
/* Says what a guest's preparation noted (vmm-qemu logs nothing). */
void job_log_prep(const struct job *j, const struct guest_prep_report *rep);

#endif
