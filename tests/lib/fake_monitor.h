/* tests/lib/fake_monitor.h: a scripted fake peer for the line protocols QEMU
 * speaks (QMP, qemu-ga), on a thread over a real unix socket, in the manner
 * of libvirt's qemumonitortestutils.c. A script is a list of steps: bytes to
 * send, lines to expect (with an fd passed along, or a qemu-ga sync), pauses,
 * an answer to everything, a hang-up. The peer accepts one client, plays
 * the script and records what went wrong; the test asserts on that after
 * fake_monitor_finish(). Not thread-safe beyond that: read the fields only
 * after finishing. */
#ifndef VITRINE_TESTS_FAKE_MONITOR_H
#define VITRINE_TESTS_FAKE_MONITOR_H

#include <pthread.h>

enum fake_step_kind {
	/* Sends text, where "@ID" stands for the "id" of the line last
	 * expected, "@PREV" for the one before it and "@SYNC" for the id of the
	 * last qemu-ga sync, so replies need not know the client's ids. */
	FAKE_SEND,
	FAKE_EXPECT, /* the next line contains text */
	FAKE_EXPECT_FD, /* the same, with an fd (SCM_RIGHTS) whose content is kept */
	FAKE_EXPECT_SYNC, /* the next line is a 0xFF-prefixed guest-sync-delimited */
	FAKE_SLEEP_MS, /* waits ms */
	FAKE_ANSWER_ALL, /* answers every further line with text until the client goes */
	FAKE_HANG_UP, /* closes the connection; ends every script */
};

struct fake_step {
	enum fake_step_kind kind;
	const char *text;
	int ms;
};

struct fake_monitor {
	char path[108]; /* the socket the client connects to */
	int listen_fd; /* owned */
	const char *name; /* for messages: "fake monitor", "fake agent" */
	const struct fake_step *script; /* borrowed; ends with FAKE_HANG_UP or FAKE_ANSWER_ALL */
	pthread_t thread;
	char failure[512]; /* what the peer saw go wrong; empty when all went to script */
	char fd_content[64]; /* read from the fd of the last FAKE_EXPECT_FD */
	int answered; /* lines answered by FAKE_ANSWER_ALL */
	char sync_ids[4][32]; /* the ids of the first syncs seen, in order */
	int n_syncs;
};

/* Listens on a fresh socket under /tmp (f->path) and starts playing script
 * on a thread for the first client. Returns 0, or -errno (f is then not
 * started). */
int fake_monitor_start(struct fake_monitor *f, const char *name, const struct fake_step *script);
/* Waits for the script to end (the client must have gone or the script
 * hung up), removes the socket, and returns f->failure, or NULL when the
 * script ran as written. */
const char *fake_monitor_finish(struct fake_monitor *f);

#endif
