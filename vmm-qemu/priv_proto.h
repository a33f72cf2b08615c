/* vmm-qemu/priv_proto.h: what the gateway asks of its root helper
 * (privd.h) and what the helper answers, in one place. The helper keeps
 * root for the few things that need it while the gateway's process, which
 * parses what clients and guests send, is to run without it; everything the
 * helper reads comes from that process, so its requests are a fixed table
 * of operations with a fixed count of arguments, parsed here and fuzzed
 * (tests/fuzz/fuzz_priv_proto.c). Pure; unit-tested
 * (tests/unit/test_priv_proto.c).
 *
 * A request is one datagram (SOCK_SEQPACKET): the operation's name and its
 * arguments, each ended by a NUL, nothing after the last; an argument is
 * 1..PATH_MAX-1 bytes without a newline. A reply is "RC\0MESSAGE\0": RC 0
 * or -errno in decimal, MESSAGE at most PRIV_MSG_MAX-1 bytes of one line
 * saying why (or what was done; "" for nothing to say). */
#ifndef VITRINE_VMM_PRIV_PROTO_H
#define VITRINE_VMM_PRIV_PROTO_H

#include <limits.h>
#include <stddef.h>

#define PRIV_ARGS_MAX 2
#define PRIV_MSG_MAX 512
/* A request's largest datagram: a name and PRIV_ARGS_MAX paths. */
#define PRIV_REQ_MAX (32 + PRIV_ARGS_MAX * PATH_MAX)
#define PRIV_REPLY_MAX (16 + PRIV_MSG_MAX)

/* The operations, one row each in priv_proto.c (name, argument count) and
 * in privd.c (what the helper does). */
enum priv_op {
	PRIV_RUN_DIR_REMOVE, /* RUN_DIR: one of the helper's run base's vm-XXXXXX */
	PRIV_SWEEP, /* (none): the helper's run base's stale run dirs removed */
	PRIV_SHIM_TERMINATE, /* RUN_DIR MS: its shim stopped (SIGTERM, SIGKILL past MS) */
	PRIV_OP_COUNT
};

struct priv_req {
	enum priv_op op;
	int argc;
	const char *argv[PRIV_ARGS_MAX]; /* point into the datagram parsed */
};

/* The operation's name ("run-dir-remove"), or NULL for none. */
const char *priv_op_name(enum priv_op op);

/* The datagram for op with argv[0..argc) into out (len bytes). Returns its
 * length, or -EINVAL (an unknown op, a wrong count, an empty argument or
 * one with a newline, or too long for PATH_MAX) / -ENAMETOOLONG (out too
 * small). */
int priv_req_format(enum priv_op op, const char *const *argv, int argc, char *out, size_t len);

/* Parses a datagram of n bytes, which it may change (its argv points into
 * it). Returns 0, or -EINVAL with why in err. */
int priv_req_parse(char *data, size_t n, struct priv_req *out, char *err, size_t errlen);

/* The reply for rc (0 or -errno) and msg (NULL: none; cut to fit) into out.
 * Returns its length, or -ENAMETOOLONG. */
int priv_reply_format(int rc, const char *msg, char *out, size_t len);

/* Parses a reply of n bytes: rc (0 or -1..-4095) and its message into msg
 * (msglen bytes). Returns 0, or -EPROTO for anything else. */
int priv_reply_parse(const char *data, size_t n, int *rc, char *msg, size_t msglen);

#endif
