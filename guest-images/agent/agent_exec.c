/* guest-images/agent/agent_exec.c: starting a command for an EXEC channel.
 * The agent runs as root; the child becomes a session and process group
 * of its own (so a signal from the host reaches everything it started),
 * drops to the uid/gid asked for, changes to its working directory and
 * execs the program with exactly the environment given. Doing this here,
 * instead of chaining setsid/setpriv/env/sh as qemu-ga's guest-exec
 * needs, costs one fork and one exec. With a "pty=COLSxROWS" item the
 * command gets a pseudo-terminal of that size instead of pipes (E2B's
 * PTYs): the terminal is its stdin, stdout, stderr and controlling
 * terminal; the host's stdin bytes are typed into it, what it shows
 * comes back as stdout, and RESIZE changes its size (agent_exec_resize). */
#define _GNU_SOURCE
#include "agent.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#define EXEC_MAX_ITEMS 1024

extern char **environ;

struct exec_spec {
	char *argv[EXEC_MAX_ITEMS + 1], *envp[EXEC_MAX_ITEMS + 1];
	int argc, envc;
	const char *cwd;
	long uid, gid;
	bool pty;
	unsigned cols, rows;
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
		else if (!strncmp(p, "pty=", 4) &&
			 agent_winsize_parse(p + 4, strlen(p + 4), &s->cols, &s->rows) == 0)
			s->pty = true;
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
	/* the terminal becomes the command's, and its user's (as login's) */
	if (s->pty && (ioctl(0, TIOCSCTTY, 0) < 0 || fchown(0, (uid_t)s->uid, (gid_t)s->gid) < 0)) {
		dprintf(2, "vitrine-agent: the terminal: %s\n", strerror(errno));
		_exit(127);
	}
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

/* A pseudo-terminal of s's size: *master (non-blocking) and *slave
 * (opened without becoming the agent's terminal). 0 or -1 with a reason. */
static int pty_open(const struct exec_spec *s, int *master, int *slave, char *err, size_t errlen)
{
	struct winsize ws = { .ws_row = (unsigned short)s->rows,
			      .ws_col = (unsigned short)s->cols };
	char name[64];

	*slave = -1;
	if ((*master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0 || grantpt(*master) < 0 ||
	    unlockpt(*master) < 0 || ptsname_r(*master, name, sizeof(name)) != 0 ||
	    (*slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0 ||
	    ioctl(*master, TIOCSWINSZ, &ws) < 0) {
		snprintf(err, errlen, "pty: %s", strerror(errno));
		if (*master >= 0)
			close(*master);
		if (*slave >= 0)
			close(*slave);
		return -1;
	}
	fcntl(*master, F_SETFL, O_NONBLOCK);
	return 0;
}

/* A command on a pseudo-terminal: the master is both the sink and the
 * one source (a duplicate each, so that the host's EOF closes only the
 * sink's); reading it fails with EIO once the command and all it started
 * have let go of the terminal, which ends its output. */
static int start_on_pty(struct chan *c, const struct exec_spec *s, char *err, size_t errlen)
{
	int master, slave, sink;
	pid_t pid;

	if (pty_open(s, &master, &slave, err, errlen) < 0)
		return -1;
	if ((sink = fcntl(master, F_DUPFD_CLOEXEC, 0)) < 0 || (pid = fork()) < 0) {
		snprintf(err, errlen, "%s: %s", sink < 0 ? "dup" : "fork", strerror(errno));
		if (sink >= 0)
			close(sink);
		close(master);
		close(slave);
		return -1;
	}
	if (pid == 0)
		child(s, slave, slave, slave);
	close(slave);
	c->pid = pid;
	c->pty = true;
	c->sink = sink;
	c->src[0] = master;
	return 0;
}

int agent_exec_resize(struct chan *c, const void *p, size_t n)
{
	unsigned cols, rows;
	struct winsize ws;
	int fd = c->src[0] >= 0 ? c->src[0] : c->sink;

	if (!c->pty || fd < 0 || agent_winsize_parse(p, n, &cols, &rows) < 0)
		return -1;
	ws = (struct winsize){ .ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols };
	return ioctl(fd, TIOCSWINSZ, &ws); /* the kernel sends SIGWINCH to its group */
}

int agent_exec_start(struct chan *c, const char *payload, size_t len, char *err, size_t errlen)
{
	struct exec_spec s;
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, er[2] = { -1, -1 };
	pid_t pid;

	if (spec_parse(payload, len, &s, err, errlen) < 0)
		return -1;
	if (s.pty)
		return start_on_pty(c, &s, err, errlen);
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
