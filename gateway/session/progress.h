/* gateway/session/progress.h: where a slow guest operation's time goes,
 * as the API shows it ("boot" of a session, "build" of a template,
 * docs/api.md): a timeline of named phases, each from the moment it began,
 * and how it ended (ready or failed). A person waiting on a boot sees which
 * step it is in, and once it is over where the time went.
 *
 * Pure and not thread-safe: a timeline written on a job thread is read by
 * the loop under the lock of whoever holds it (job.h, template_build.c). */
#ifndef VITRINE_GATEWAY_PROGRESS_H
#define VITRINE_GATEWAY_PROGRESS_H

#include "vmm-qemu/vm.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* In the order a cold boot goes through them; restores, forks and
 * template builds use some of them. The names are the API's. */
enum progress_phase {
	PROGRESS_QUEUED, /* "queued": waiting for a job thread */
	PROGRESS_PREPARING, /* "preparing": the run dir and the disk overlay (qemu-img) */
	PROGRESS_SAVING, /* "saving_state": a fork saves the original; a template is saved */
	PROGRESS_SPAWNING, /* "spawning": the supervisor and QEMU start */
	PROGRESS_MONITOR, /* "connecting_monitor": QMP's greeting, the console */
	PROGRESS_LOADING, /* "loading_state": QEMU reads a saved state (restore, fork, resume) */
	PROGRESS_BOOTING, /* "booting_guest": until the guest prints its "ready" line */
	PROGRESS_GUEST_PREP, /* "preparing_guest": clock, page, warm-up through the agents */
	PROGRESS_SETTLING, /* "settling": a template's guest finishes its first paint */
	PROGRESS_SCREEN, /* "connecting_screen": the VNC handshake of the screen mirror */
	PROGRESS_READY, /* "ready": over, successfully */
	PROGRESS_FAILED, /* "failed": over, unsuccessfully */
};

#define PROGRESS_MAX_STEPS 16

struct progress {
	int64_t t0_ms; /* monotonic, when it began; 0: never begun */
	int64_t end_ms; /* when it ended (ready or failed); 0: under way */
	int n; /* steps entered */
	enum progress_phase phase[PROGRESS_MAX_STEPS];
	int64_t start_ms[PROGRESS_MAX_STEPS];
	enum progress_phase outcome; /* once ended: PROGRESS_READY or PROGRESS_FAILED */
};

/* The API's name of p ("booting_guest"). This function can't fail. */
const char *progress_phase_name(enum progress_phase p);
/* The phase vmm's step (vm.h: a guest's start, a template's making) is. */
enum progress_phase progress_of_step(enum vmm_step step);
/* Plain words for the phase named name ("waiting for the guest"), for
 * people; name itself when it is not one of ours. */
const char *progress_describe(const char *name);
/* Starts p at t0 (ms) in phase first, forgetting what it held. */
void progress_begin(struct progress *p, enum progress_phase first, int64_t t0);
/* p is in phase ph from now on. Nothing happens when p is in ph already,
 * has ended or never began; a timeline of PROGRESS_MAX_STEPS steps goes on
 * counting its time to the last. */
void progress_enter(struct progress *p, enum progress_phase ph, int64_t now);
/* p ended now, ready (ok) or failed. Nothing when it never began or has
 * ended. */
void progress_end(struct progress *p, bool ok, int64_t now);
/* True once begun. */
bool progress_begun(const struct progress *p);
/* {"phase", "phase_ms", "elapsed_ms", "phases": [{"phase", "ms"}...]} while
 * under way (phases: the ones done); once ended {"phase": "ready"|"failed",
 * "elapsed_ms", "phases": [every step, the last included]}, and "failed_in"
 * naming the step that failed. now: the time to measure against. NULL when
 * p never began or out of memory. */
json_t *progress_json(const struct progress *p, int64_t now);

#endif
