/* guest-images/agent/agent_exec.c: starting a command for an EXEC channel.
 * The agent runs as root; the child becomes a session and process group
 * of its own (so a signal from the host reaches everything it started),
 * drops to the uid/gid asked for, changes to its working directory and
 * execs the program with exactly the environment given. Doing this here,
 * instead of chaining setsid/setpriv/env/sh as qemu-ga's guest-exec
 * needs, costs one fork and one exec. */
#define _GNU_SOURCE
#include "agent.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXEC_MAX_ITEMS 1024

extern char **environ;

struct exec_spec {
	char *argv[EXEC_MAX_ITEMS + 1], *envp[EXEC_MAX_ITEMS + 1];
	int argc, envc;
	const char *cwd;
	long uid, gid;
};

/* Splits the NUL-separated key=value list (the payload ends in a NUL). */
static int spec_parse(const char *p, size_t len, struct exec_spec *s, char *err, size_t errlen)
{
	const char *end = p + len;

	memset(s, 0, sizeof(*s));
	s->uid = s->gid = -1;
	if (!len || p[len - 1] != '\0') {
		snprintf(err, errlen, "exec: payload not NUL-terminated");
		return -1;
	}
	for (; p < end; p += strlen(p) + 1) {
		if (!strncmp(p, "arg=", 4) && s->argc < EXEC_MAX_ITEMS)
			s->argv[s->argc++] = (char *)p + 4;
		else if (!strncmp(p, "env=", 4) && s->envc < EXEC_MAX_ITEMS)
			s->envp[s->envc++] = (char *)p + 4;
		else if (!strncmp(p, "cwd=", 4))
			s->cwd = p + 4;
		else if (!strncmp(p, "uid=", 4))
			s->uid = strtol(p + 4, NULL, 10);
		else if (!strncmp(p, "gid=", 4))
			s->gid = strtol(p + 4, NULL, 10);
		else {
			snprintf(err, errlen, "exec: unknown item '%.32s'", p);
			return -1;
		}
	}
	if (!s->argc) {
		snprintf(err, errlen, "exec: no program");
		return -1;
	}
	return 0;
}

/* In the child: never returns. Failures go to its stderr, exit 127. */
static void child(const struct exec_spec *s, int in, int out, int errfd)
{
	dup2(in, 0);
	dup2(out, 1);
	dup2(errfd, 2);
	close_range(3, ~0u, 0);
	setsid();
	if (s->gid >= 0) {
		gid_t g = (gid_t)s->gid;

		if (setgroups(1, &g) < 0 || setgid(g) < 0) {
			dprintf(2, "vitrine-agent: setgid %ld: %s\n", s->gid, strerror(errno));
			_exit(127);
		}
	}
	if (s->uid >= 0 && setuid((uid_t)s->uid) < 0) {
		dprintf(2, "vitrine-agent: setuid %ld: %s\n", s->uid, strerror(errno));
		_exit(127);
	}
	if (s->cwd && chdir(s->cwd) < 0) {
		dprintf(2, "vitrine-agent: cd %s: %s\n", s->cwd, strerror(errno));
		_exit(127);
	}
	environ = (char **)s->envp; /* execvp looks the program up in this PATH */
	execvp(s->argv[0], s->argv);
	dprintf(2, "vitrine-agent: cannot run %s: %s\n", s->argv[0], strerror(errno));
	_exit(127);
}

int agent_exec_start(struct chan *c, const char *payload, size_t len, char *err, size_t errlen)
{
	struct exec_spec s;
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, er[2] = { -1, -1 };
	pid_t pid;

	if (spec_parse(payload, len, &s, err, errlen) < 0)
		return -1;
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(er, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		goto fail;
	}
	if ((pid = fork()) < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		goto fail;
	}
	if (pid == 0)
		child(&s, in[0], out[1], er[1]);
	close(in[0]);
	close(out[1]);
	close(er[1]);
	fcntl(in[1], F_SETFL, O_NONBLOCK);
	fcntl(out[0], F_SETFL, O_NONBLOCK);
	fcntl(er[0], F_SETFL, O_NONBLOCK);
	c->pid = pid;
	c->sink = in[1];
	c->src[0] = out[0];
	c->src[1] = er[0];
	return 0;
fail:
	for (int i = 0; i < 2; i++) {
		if (in[i] >= 0)
			close(in[i]);
		if (out[i] >= 0)
			close(out[i]);
		if (er[i] >= 0)
			close(er[i]);
	}
	return -1;
}
