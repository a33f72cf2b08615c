/* vmm-qemu/shim_proto.c: see shim_proto.h. */
#include "vmm-qemu/shim_proto.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int vmm_shim_args_build(const char *bin, const struct vmm_shim_args *a, struct strv *out, char *err,
			size_t errlen)
{
	if (a->n_keep_fds > VMM_SHIM_MAX_KEEP_FDS || a->n_cgroups > VMM_JAIL_MAX_CGROUPS ||
	    a->n_ro > VMM_MNTNS_MAX_RO || a->n_rw > VMM_MNTNS_MAX_RW ||
	    a->n_keep > VMM_MNTNS_MAX_KEEP || a->cred.n_groups < 0 ||
	    a->cred.n_groups > (int)(sizeof(a->cred.groups) / sizeof(a->cred.groups[0]))) {
		snprintf(err, errlen, "shim: too many inherited fds, groups or paths");
		return -EINVAL;
	}
	strv_push(out, bin);
	strv_push(out, "shim");
	strv_push(out, "--run-dir");
	strv_push(out, a->run_dir);
	strv_push(out, "--grace-s");
	strv_pushf(out, "%d", a->grace_s);
	strv_push(out, "--on-abandon");
	strv_push(out, a->abandon_pause ? "pause" : "kill");
	if (a->record) {
		strv_push(out, "--record");
		strv_push(out, a->record);
	}
	if (a->drop_privileges) {
		char groups[8 * 12] = "";
		size_t n = 0;

		for (int i = 0; i < a->cred.n_groups; i++)
			n += (size_t)snprintf(groups + n, sizeof(groups) - n, "%s%u", i ? "," : "",
					      (unsigned)a->cred.groups[i]);
		strv_push(out, "--uid");
		strv_pushf(out, "%u", (unsigned)a->cred.uid);
		strv_push(out, "--gid");
		strv_pushf(out, "%u", (unsigned)a->cred.gid);
		strv_push(out, "--groups");
		strv_push(out, groups);
	}
	for (size_t i = 0; i < a->n_keep_fds; i++) {
		strv_push(out, "--keep-fd");
		strv_pushf(out, "%d", a->keep_fds[i]);
	}
	if (a->lease_fd > 2) { /* 0 (a zeroed struct) or -1: none */
		strv_push(out, "--lease-fd");
		strv_pushf(out, "%d", a->lease_fd);
	}
	if (a->netns)
		strv_push(out, "--netns");
	if (a->mntns) {
		strv_push(out, "--mntns");
		for (size_t i = 0; i < a->n_ro; i++) {
			strv_push(out, "--ro");
			strv_push(out, a->ro[i]);
		}
		for (size_t i = 0; i < a->n_rw; i++) {
			strv_push(out, "--rw");
			strv_push(out, a->rw[i]);
		}
		for (size_t i = 0; i < a->n_keep; i++) {
			strv_push(out, "--keep-dir");
			strv_push(out, a->keep[i]);
		}
	}
	if (a->fsize) {
		strv_push(out, "--fsize");
		strv_pushf(out, "%llu", a->fsize);
	}
	if (a->nofile) {
		strv_push(out, "--nofile");
		strv_pushf(out, "%lu", a->nofile);
	}
	if (a->nproc) {
		strv_push(out, "--nproc");
		strv_pushf(out, "%lu", a->nproc);
	}
	for (size_t i = 0; i < a->n_cgroups; i++) {
		strv_push(out, "--cgroup");
		strv_push(out, a->cgroups[i]);
	}
	if (a->log_cap > 0) {
		strv_push(out, "--log-cap");
		strv_pushf(out, "%lld", a->log_cap);
	}
	strv_push(out, "--");
	for (size_t i = 0; a->qemu_argv[i]; i++)
		strv_push(out, a->qemu_argv[i]);
	if (out->oom) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

/* A whole decimal number in [min, max]. */
static int parse_num(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_groups(const char *s, struct vmm_cred *cred)
{
	char buf[256], *save = NULL;
	const int max = (int)(sizeof(cred->groups) / sizeof(cred->groups[0]));
	long g;

	if (snprintf(buf, sizeof(buf), "%s", s) >= (int)sizeof(buf))
		return -EINVAL;
	cred->n_groups = 0;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (cred->n_groups == max || parse_num(t, 0, UINT32_MAX - 1, &g) < 0)
			return -EINVAL;
		cred->groups[cred->n_groups++] = (gid_t)g;
	}
	return 0;
}

int vmm_shim_args_parse(int argc, char **argv, struct vmm_shim_args *a, char *err, size_t errlen)
{
	static const struct option opts[] = {
		{ "run-dir", required_argument, NULL, 'r' },
		{ "grace-s", required_argument, NULL, 't' },
		{ "on-abandon", required_argument, NULL, 'a' },
		{ "record", required_argument, NULL, 'R' },
		{ "uid", required_argument, NULL, 'u' },
		{ "gid", required_argument, NULL, 'g' },
		{ "groups", required_argument, NULL, 'G' },
		{ "keep-fd", required_argument, NULL, 'k' },
		{ "lease-fd", required_argument, NULL, 'L' },
		{ "netns", no_argument, NULL, 'n' },
		{ "mntns", no_argument, NULL, 'm' },
		{ "ro", required_argument, NULL, 'O' },
		{ "rw", required_argument, NULL, 'W' },
		{ "keep-dir", required_argument, NULL, 'K' },
		{ "fsize", required_argument, NULL, 'f' },
		{ "nofile", required_argument, NULL, 'o' },
		{ "nproc", required_argument, NULL, 'p' },
		{ "cgroup", required_argument, NULL, 'c' },
		{ "log-cap", required_argument, NULL, 'C' },
		{ 0 },
	};
	bool uid = false, gid = false;
	long v;
	int c;

	unsigned long long big;
	char *end;

	memset(a, 0, sizeof(*a));
	a->grace_s = -1;
	a->lease_fd = -1;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			a->run_dir = optarg;
			break;
		case 't':
			if (parse_num(optarg, 0, VMM_SHIM_MAX_GRACE_S, &v) < 0)
				goto bad;
			a->grace_s = (int)v;
			break;
		case 'a':
			if (strcmp(optarg, "pause") && strcmp(optarg, "kill"))
				goto bad;
			a->abandon_pause = !strcmp(optarg, "pause");
			break;
		case 'R':
			a->record = optarg;
			break;
		case 'u':
			if (parse_num(optarg, 0, UINT32_MAX - 1, &v) < 0)
				goto bad;
			a->cred.uid = (uid_t)v;
			uid = true;
			break;
		case 'g':
			if (parse_num(optarg, 0, UINT32_MAX - 1, &v) < 0)
				goto bad;
			a->cred.gid = (gid_t)v;
			gid = true;
			break;
		case 'G':
			if (parse_groups(optarg, &a->cred) < 0)
				goto bad;
			break;
		case 'k':
			if (a->n_keep_fds == VMM_SHIM_MAX_KEEP_FDS ||
			    parse_num(optarg, 3, INT32_MAX, &v) < 0)
				goto bad;
			a->keep_fds[a->n_keep_fds++] = (int)v;
			break;
		case 'L':
			if (parse_num(optarg, 3, INT32_MAX, &v) < 0)
				goto bad;
			a->lease_fd = (int)v;
			break;
		case 'n':
			a->netns = true;
			break;
		case 'm':
			a->mntns = true;
			break;
		case 'O':
			if (a->n_ro == VMM_MNTNS_MAX_RO || optarg[0] != '/')
				goto bad;
			a->ro[a->n_ro++] = optarg;
			break;
		case 'W':
			if (a->n_rw == VMM_MNTNS_MAX_RW || optarg[0] != '/')
				goto bad;
			a->rw[a->n_rw++] = optarg;
			break;
		case 'K':
			if (a->n_keep == VMM_MNTNS_MAX_KEEP || optarg[0] != '/')
				goto bad;
			a->keep[a->n_keep++] = optarg;
			break;
		case 'f':
			errno = 0;
			big = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || *optarg == '-' || big == 0)
				goto bad;
			a->fsize = big;
			break;
		case 'o':
		case 'p':
			if (parse_num(optarg, 1, INT32_MAX, &v) < 0)
				goto bad;
			*(c == 'o' ? &a->nofile : &a->nproc) = (unsigned long)v;
			break;
		case 'C':
			errno = 0;
			big = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || *optarg == '-' || big < 4096 ||
			    big > 1ULL << 40)
				goto bad;
			a->log_cap = (long long)big;
			break;
		case 'c':
			if (a->n_cgroups == VMM_JAIL_MAX_CGROUPS || optarg[0] != '/')
				goto bad;
			a->cgroups[a->n_cgroups++] = optarg;
			break;
		default:
			snprintf(err, errlen, "shim: unknown option %s", argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (!a->run_dir || a->grace_s < 0 || uid != gid || optind >= argc ||
	    ((a->n_ro || a->n_rw || a->n_keep) && !a->mntns) || strcmp(argv[optind - 1], "--")) {
		snprintf(err, errlen,
			 "usage: vitrine shim --run-dir DIR --grace-s N --on-abandon pause|kill "
			 "[--record PATH] [--uid U --gid G --groups G1,G2] [--keep-fd N]... "
			 "[--lease-fd N] [--netns] [--mntns [--ro DIR]... [--rw PATH]... "
			 "[--keep-dir DIR]...] "
			 "[--fsize BYTES] [--nofile N] [--nproc N] "
			 "[--cgroup DIR]... [--log-cap BYTES] -- QEMU-ARGV...");
		return -EINVAL;
	}
	a->drop_privileges = uid;
	a->qemu_argv = argv + optind;
	return 0;
bad:
	snprintf(err, errlen, "shim: bad value '%s' for %s", optarg, argv[optind - 1]);
	return -EINVAL;
}

size_t vmm_shim_hello_format(char *buf, size_t len, pid_t shim, pid_t qemu)
{
	int n = snprintf(buf, len, "vitrine-shim 1 pid=%d qemu=%d\n", (int)shim, (int)qemu);

	return n < 0 ? 0 : (size_t)n < len ? (size_t)n : len - 1;
}

int vmm_shim_hello_parse(const char *line, size_t len, pid_t *shim, pid_t *qemu)
{
	char buf[VMM_SHIM_HELLO_MAX + 1], again[VMM_SHIM_HELLO_MAX + 1];
	int s, q;

	if (len == 0 || len > VMM_SHIM_HELLO_MAX || line[len - 1] != '\n' ||
	    memchr(line, '\0', len))
		return -EPROTO;
	memcpy(buf, line, len);
	buf[len] = '\0';
	/* sscanf is lenient about spaces and signs: the line must be exactly
	 * what the shim would write. */
	if (sscanf(buf, "vitrine-shim 1 pid=%d qemu=%d", &s, &q) != 2 || s <= 0 || q <= 0 ||
	    vmm_shim_hello_format(again, sizeof(again), s, q) != len || memcmp(again, buf, len))
		return -EPROTO;
	*shim = s;
	*qemu = q;
	return 0;
}
