/* vmm-qemu/guest_prep.h: making a guest that was restored (from a template
 * or a checkpoint) current before anyone uses it: its clock set to now
 * through qemu-ga (it shows the time it was saved at until then), its page
 * navigated to a URL, and its input and page paths run once (warm-up: under
 * TCG a restored QEMU translates guest code afresh, so the first click
 * would otherwise take ~2 s to reach the page instead of ~0.4 s). The guest's RNG needs nothing here: QEMU's
 * vmgenid device gives every start a new generation id and the kernel
 * reseeds itself when it changes ("crng reseeded due to virtual machine
 * fork"). Blocking; for a job thread or a command-line tool. */
#ifndef VITRINE_VMM_GUEST_PREP_H
#define VITRINE_VMM_GUEST_PREP_H

#include "vmm-qemu/agent_link.h"
#include "vmm-qemu/vm.h"

#include <stdbool.h>

struct guest_prep {
	bool has_agent; /* the guest runs qemu-ga and the desktop's vitrine-ready */
	bool set_clock; /* needs has_agent */
	bool warm;
	const char *url; /* NULL: stay; needs has_agent */
	/* NULL: leave it; else a canonical layout name (keymap.h) set on the
	 * guest's X display with setxkbmap; needs has_agent; failing fails */
	const char *keyboard_layout;
	/* Non-NULL: the link to vitrine-agent the steps used is handed over
	 * here (NULL when there was none) instead of closed, for the session. */
	struct agent_link **keep_agent;
};

/* What a run did besides its result, for the caller to log (this layer
 * logs nothing): the steps that fell short without failing it, and where
 * its time went. */
struct guest_prep_report {
	char notes[1024]; /* "; "-separated, "" when none; cut short when long */
	long long page_ms, warm_ms; /* the page step; warm-up and clock */
	bool via_agent; /* the steps ran through vitrine-agent, not qemu-ga */
};

/* Runs the steps p asks for into rep (may be NULL). Returns 0, or -errno
 * with a reason in err; a failed clock or warm-up is only noted in rep,
 * a failed navigation or layout fails. */
int guest_prep_run(struct vmm_vm *vm, const struct guest_prep *p, struct guest_prep_report *rep,
		   char *err, size_t errlen);

/* Sets the keyboard layout of vm's X display to canonical name layout
 * through qemu-ga (for a guest that just booted: vitrine-agent's one link
 * is the session's). Returns 0 or -errno with a reason in err. */
int guest_prep_set_layout(struct vmm_vm *vm, const char *layout, char *err, size_t errlen);

/* The setxkbmap command line that sets canonical layout on display :0:
 * argv (at least 12 slots) pointing into buf (buflen bytes). Returns 0 or
 * -EINVAL (not a layout name). Pure. */
int guest_prep_layout_argv(const char *layout, const char **argv, char *buf, size_t buflen);

struct qga_client;
/* Sets the guest clock to the host's with qemu-ga's guest-set-time on c,
 * waiting up to timeout_ms for the reply. Returns 0 or -errno with a reason
 * in err (-ETIMEDOUT: no reply yet; the time may well be set). */
int guest_prep_set_clock(struct qga_client *c, int timeout_ms, char *err, size_t errlen);

/* The JavaScript that sends the page to url and marks the old document so
 * that its replacement can be told apart: into out, or -ENOSPC. Pure. */
int guest_prep_nav_js(const char *url, char *out, size_t outlen);

#endif
