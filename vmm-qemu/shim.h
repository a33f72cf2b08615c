/* vmm-qemu/shim.h: the per-guest supervisor that lets a guest outlive its
 * gateway (the containerd-shim pattern). `vitrine shim ARGS -- QEMU-ARGV`
 * (shim_proto.h has the arguments) runs in a session of its own, spawns
 * QEMU as its child (QEMU keeps PR_SET_PDEATHSIG: it dies with the shim,
 * never with a gateway) and holds it; gateways attach to it on
 * RUN_DIR/shim.sock (vm.h: vmm_vm_start with opts.shim, vmm_vm_adopt).
 *
 * Its life, in one poll loop on one thread:
 *  - owner.pid names the shim (vmm_sweep_stale keeps the run dir while it
 *    lives); each accepted connection on shim.sock is an attachment and
 *    gets one hello line (shim_proto.h), then is only held.
 *  - With no attachment (from the start, or once the last one closes), a
 *    grace period of --grace-s starts; an attachment cancels it.
 *  - QEMU exits: RUN_DIR/qemu.exit says how (vmm_proc_describe's words),
 *    and the shim exits with QEMU's status (its exit code, or the same
 *    signal); the run dir stays for its owner to remove.
 *  - SIGTERM: QMP quit (SIGTERM to QEMU when the monitor is busy),
 *    SIGKILL after 3 s; the run dir is removed; exit 0.
 *  - The grace period runs out ("abandoned"): shim.sock goes first (no
 *    attachment any more), then with --on-abandon pause and a --record
 *    that names this run dir, the guest is checkpointed (checkpoint.h,
 *    VMM_CKPT_QUIT) into a held checkpoint and the record patched
 *    (shim_record.h); otherwise, or when that fails, QEMU is quit and a
 *    record naming this run dir says the session failed. The run dir is
 *    removed; exit 0.
 * It logs to stderr, which its spawner points at
 * <run base>/shim-vm-XXXXXX.log (sweep.h says how long those stay). */
#ifndef VITRINE_VMM_SHIM_H
#define VITRINE_VMM_SHIM_H

/* The `vitrine shim` command: argv[0] is "shim". Returns an exit code for
 * a bad command line (2) or a failure before QEMU ran (1); otherwise it
 * does not return (it exits as described above). */
int vmm_shim_main(int argc, char **argv);

#endif
