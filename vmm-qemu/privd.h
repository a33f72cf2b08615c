/* vmm-qemu/privd.h: the gateway's root helper. `vitrine serve` starts it
 * (priv.h) before it reads anything a client or a guest sends, so that
 * the work that needs root runs in a small process of its own that takes
 * only the requests of priv_proto.h, each checked against the helper's own
 * configuration (its run base, fixed at its start) rather than trusted:
 * the process that asks is the one that parses untrusted input, and is to
 * run without root (docs/security.md, Privilege separation).
 *
 * One request at a time comes in on the control socket with a socket of
 * its own for the reply (SCM_RIGHTS); each runs in a child of the helper,
 * so that a slow one (a sweep) holds no other back and a crash in one
 * answers nothing to its asker only. The helper exits when the control
 * socket's peer closes it, and dies with the process that started it. */
#ifndef VITRINE_VMM_PRIVD_H
#define VITRINE_VMM_PRIVD_H

#include <stdbool.h>
#include <stddef.h>

/* How many requests run at once; more wait for one to end. */
#define PRIVD_CHILDREN_MAX 32

/* Whether path names a run dir of run_base: run_base, "/vm-" and six
 * letters or digits (what mkdtemp makes), nothing else. Pure. */
bool vmm_privd_run_dir_ok(const char *run_base, const char *path);

/* What a guest's end leaves to remove, as vmm_vm_destroy leaves it: its
 * cgroup where its owner died before removing it, its run dir and the
 * run dir's owner record (run_owner.h), its shim's log. Here, in this
 * process: the helper's operation once the run dir passed
 * vmm_privd_run_dir_ok. Returns 0 (also when nothing was there) or -errno
 * with why in msg. */
int vmm_privd_remove_run_dir(const char *run_dir, char *msg, size_t len);

/* Serves the control socket fd (SOCK_SEQPACKET) for run_base until its
 * peer closes it. Returns 0, or -errno when the socket failed. */
int vmm_privd_serve(int fd, const char *run_base);

/* `vitrine privd --fd N --run-base DIR [--gateway ID]` (internal: started
 * by vmm_priv_start). */
int vmm_privd_main(int argc, char **argv);

#endif
