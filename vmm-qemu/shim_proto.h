/* vmm-qemu/shim_proto.h: what the gateway's side (vm.c) and the shim
 * (shim.c) say to each other, in one place: the shim's command line (built
 * by one, parsed by the other) and the hello line the shim writes to each
 * attachment on shim.sock. Pure; unit-tested (tests/unit/test_shim_proto.c). */
#ifndef VITRINE_VMM_SHIM_PROTO_H
#define VITRINE_VMM_SHIM_PROTO_H

#include "common/strv.h"
#include "vmm-qemu/proc.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define VMM_SHIM_MAX_KEEP_FDS 8
#define VMM_SHIM_MAX_GRACE_S 86400
/* serial.log and qemu.log rotate past this (--log-cap): 16 MiB. */
#define VMM_SHIM_LOG_CAP_DEFAULT (16LL << 20)
/* The hello's longest form, newline included. */
#define VMM_SHIM_HELLO_MAX 64

/* `vitrine shim --run-dir DIR --grace-s N --on-abandon pause|kill
 * [--record PATH] [--uid U --gid G --groups G1,G2] [--keep-fd N]...
 * [--lease-fd N] [--netns] [--mntns [--ro DIR]... [--rw PATH]... [--keep-dir DIR]...]
 * [--fsize BYTES] [--nofile N] [--nproc N] [--cgroup DIR]...
 * [--log-cap BYTES] -- QEMU-ARGV...` (the jail's parts: jail.h) */
struct vmm_shim_args {
	const char *run_dir;
	int grace_s; /* 0..VMM_SHIM_MAX_GRACE_S */
	bool abandon_pause; /* else kill */
	const char *record; /* the session's record (JSON), or NULL */
	bool drop_privileges; /* QEMU runs as cred */
	struct vmm_cred cred;
	int keep_fds[VMM_SHIM_MAX_KEEP_FDS]; /* inherited, handed on to QEMU */
	size_t n_keep_fds;
	int lease_fd; /* inherited, kept by the shim for QEMU's life (its uid's lease); <= 2: none */
	bool netns; /* QEMU in a network namespace of its own */
	bool mntns; /* and a mount namespace (mount_ns.h), ro read-only, rw not, keep kept */
	const char *ro[VMM_MNTNS_MAX_RO];
	size_t n_ro;
	const char *rw[VMM_MNTNS_MAX_RW];
	size_t n_rw;
	const char *keep[VMM_MNTNS_MAX_KEEP]; /* kept where the host's places are hidden */
	size_t n_keep;
	unsigned long long fsize; /* QEMU's rlimits; 0: unchanged */
	unsigned long nofile, nproc;
	const char *cgroups[VMM_JAIL_MAX_CGROUPS]; /* QEMU joins them; removed at the end */
	size_t n_cgroups;
	long long log_cap; /* rotate QEMU's logs past this; 0: the default */
	char *const *qemu_argv; /* NULL-terminated; points into what was parsed */
};

/* Appends bin, "shim", the options of a and, after "--", qemu_argv to out
 * (a->qemu_argv is the QEMU command line). Returns 0, or -ENOMEM / -EINVAL
 * (too many fds, groups or paths) with a reason in err. */
int vmm_shim_args_build(const char *bin, const struct vmm_shim_args *a, struct strv *out, char *err,
			size_t errlen);

/* Parses argv (argv[0] is "shim") into a; a's strings point into argv.
 * Returns 0, or -EINVAL with a reason in err. */
int vmm_shim_args_parse(int argc, char **argv, struct vmm_shim_args *a, char *err, size_t errlen);

/* "vitrine-shim 1 pid=<shim> qemu=<qemu>\n" into buf; returns its length. */
size_t vmm_shim_hello_format(char *buf, size_t len, pid_t shim, pid_t qemu);

/* Parses a hello (len bytes, the newline included). Returns 0, or -EPROTO
 * for anything else (another version included). */
int vmm_shim_hello_parse(const char *line, size_t len, pid_t *shim, pid_t *qemu);

#endif
