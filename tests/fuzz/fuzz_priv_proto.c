/* tests/fuzz/fuzz_priv_proto.c: libFuzzer target for what the gateway's
 * root helper reads (vmm-qemu/priv_proto.c): a request datagram, which
 * comes from the process that parses untrusted input, and the helper's
 * reply, read by the gateway. Checks: an accepted request names an
 * operation of the table with its exact argument count, and formats back
 * to the very bytes parsed; an accepted reply's code is 0 or -1..-4095 and
 * formats back to the very bytes parsed; and the run dir policy passes only
 * names under its base. */
#include "vmm-qemu/priv_proto.h"
#include "vmm-qemu/privd.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char copy[PRIV_REQ_MAX + 64], again[PRIV_REQ_MAX + 64];
	char err[256], msg[PRIV_MSG_MAX], out[PRIV_REPLY_MAX];
	struct priv_req q;
	int rc, n;

	if (size > sizeof(copy))
		return 0;
	memcpy(copy, data, size);
	rc = priv_req_parse(copy, size, &q, err, sizeof(err));
	if (rc != 0 && rc != -EINVAL)
		__builtin_trap();
	if (rc == 0) {
		if (!priv_op_name(q.op) || q.argc < 0 || q.argc > PRIV_ARGS_MAX)
			__builtin_trap();
		n = priv_req_format(q.op, q.argv, q.argc, again, sizeof(again));
		if (n != (int)size || memcmp(again, data, size))
			__builtin_trap();
		if (q.op == PRIV_RUN_DIR_REMOVE && vmm_privd_run_dir_ok("/r", q.argv[0]) &&
		    (strncmp(q.argv[0], "/r/vm-", 6) || strlen(q.argv[0]) != 12 ||
		     strchr(q.argv[0] + 3, '/') || strchr(q.argv[0], '.')))
			__builtin_trap();
	}
	if (priv_reply_parse((const char *)data, size, &rc, msg, sizeof(msg)) == 0) {
		if (rc > 0 || rc < -4095)
			__builtin_trap();
		n = priv_reply_format(rc, msg, out, sizeof(out));
		if (n != (int)size || memcmp(out, data, size))
			__builtin_trap();
	}
	return 0;
}
