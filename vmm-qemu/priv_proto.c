/* vmm-qemu/priv_proto.c: see priv_proto.h. */
#include "vmm-qemu/priv_proto.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *name;
	int argc;
} ops[PRIV_OP_COUNT] = {
	[PRIV_RUN_DIR_REMOVE] = { "run-dir-remove", 1 },
	[PRIV_SWEEP] = { "sweep", 0 },
	[PRIV_SHIM_TERMINATE] = { "shim-terminate", 2 },
};

const char *priv_op_name(enum priv_op op)
{
	return (unsigned)op < PRIV_OP_COUNT ? ops[op].name : NULL;
}

static bool arg_ok(const char *a, size_t n)
{
	return n > 0 && n < PATH_MAX && !memchr(a, '\n', n);
}

int priv_req_format(enum priv_op op, const char *const *argv, int argc, char *out, size_t len)
{
	size_t at = 0;

	if ((unsigned)op >= PRIV_OP_COUNT || argc != ops[op].argc)
		return -EINVAL;
	for (int i = -1; i < argc; i++) {
		const char *a = i < 0 ? ops[op].name : argv[i];
		size_t n = a ? strlen(a) : 0;

		if (!arg_ok(a ? a : "", n))
			return -EINVAL;
		if (n + 1 > len - at)
			return -ENAMETOOLONG;
		memcpy(out + at, a, n + 1);
		at += n + 1;
	}
	return (int)at;
}

int priv_req_parse(char *data, size_t n, struct priv_req *out, char *err, size_t errlen)
{
	const char *field[PRIV_ARGS_MAX + 1];
	size_t at = 0;
	int nf = 0;

	if (n == 0 || n > PRIV_REQ_MAX || data[n - 1] != '\0') {
		snprintf(err, errlen, "a request is NUL-ended fields of at most %d bytes",
			 PRIV_REQ_MAX);
		return -EINVAL;
	}
	while (at < n) {
		size_t len = strlen(data + at);

		if (nf == PRIV_ARGS_MAX + 1) {
			snprintf(err, errlen, "more than %d arguments", PRIV_ARGS_MAX);
			return -EINVAL;
		}
		if (!arg_ok(data + at, len)) {
			snprintf(err, errlen, "field %d is empty, too long or holds a newline", nf);
			return -EINVAL;
		}
		field[nf++] = data + at;
		at += len + 1;
	}
	for (int op = 0; op < PRIV_OP_COUNT; op++) {
		if (strcmp(field[0], ops[op].name))
			continue;
		if (nf - 1 != ops[op].argc) {
			snprintf(err, errlen, "%s takes %d arguments, not %d", ops[op].name,
				 ops[op].argc, nf - 1);
			return -EINVAL;
		}
		out->op = (enum priv_op)op;
		out->argc = nf - 1;
		for (int i = 0; i < out->argc; i++)
			out->argv[i] = field[i + 1];
		return 0;
	}
	snprintf(err, errlen, "no operation %.64s", field[0]);
	return -EINVAL;
}

int priv_reply_format(int rc, const char *msg, char *out, size_t len)
{
	int head = snprintf(out, len, "%d", rc);
	size_t m = msg ? strnlen(msg, PRIV_MSG_MAX - 1) : 0;

	if (head < 0 || (size_t)head + 1 + m + 1 > len)
		return -ENAMETOOLONG;
	memcpy(out + head + 1, msg ? msg : "", m);
	out[head + 1 + m] = '\0';
	/* a message cut inside its newline-free text stays one line */
	for (size_t i = 0; i < m; i++)
		if (out[head + 1 + i] == '\n')
			out[head + 1 + i] = ' ';
	return head + 1 + (int)m + 1;
}

/* "0", or "-" and 1..4 digits without a leading zero. */
static bool rc_text_ok(const char *s, size_t n)
{
	if (n == 1 && s[0] == '0')
		return true;
	if (n < 2 || n > 5 || s[0] != '-' || s[1] < '1' || s[1] > '9')
		return false;
	for (size_t i = 2; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

int priv_reply_parse(const char *data, size_t n, int *rc, char *msg, size_t msglen)
{
	const char *end = memchr(data, '\0', n), *m;
	long v;

	if (!end || !rc_text_ok(data, (size_t)(end - data)))
		return -EPROTO;
	v = strtol(data, NULL, 10);
	m = end + 1;
	/* exactly one more field, the message, ending the datagram */
	if (v < -4095 || m >= data + n || memchr(m, '\0', n - (size_t)(m - data)) != data + n - 1 ||
	    (size_t)(data + n - 1 - m) >= PRIV_MSG_MAX || strchr(m, '\n'))
		return -EPROTO;
	*rc = (int)v;
	snprintf(msg, msglen, "%s", m);
	return 0;
}
