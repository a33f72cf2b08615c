/* tests/fuzz/fuzz_qga_exec.c: libFuzzer target for the guest-exec helpers
 * of vmm-qemu/qga.c, which decode what qemu-ga in the guest says about a
 * command (fuzz_qga covers the protocol machine; these run on the values
 * its replies carry). The first byte picks the most output kept, the rest
 * is a JSON value as guest-exec or guest-exec-status returns it. Checked
 * besides "no crash":
 *   - a pid is only ever positive;
 *   - decoded output is at most the limit, NUL-terminated, the prefix of
 *     the base64 the guest sent, and marked truncated when cut;
 *   - a running process has no output, a failed decode leaves no buffers
 *     and the pid it was given. */
#include "common/base64.h"
#include "vmm-qemu/qga.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_stream(const json_t *ret, const char *key, const char *buf, size_t len,
			 bool truncated, size_t max)
{
	json_t *v = json_object_get(ret, key);
	size_t n, full;
	char *dec;

	if (!buf || len > max || buf[len] != '\0')
		__builtin_trap();
	if (!v) {
		if (len)
			__builtin_trap();
		return;
	}
	n = json_string_length(v);
	dec = malloc(n + 1);
	if (!dec || base64_decode(json_string_value(v), n, dec, n, &full) != 0)
		__builtin_trap();
	if (len != (full < max ? full : max) || memcmp(dec, buf, len) || (full > max && !truncated))
		__builtin_trap();
	free(dec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct qga_exec_result r = { .pid = 77 };
	size_t max;
	int64_t pid = 0;
	char err[256];
	json_t *ret;

	if (size < 1)
		return 0;
	max = data[0] == 0xff ? QGA_EXEC_MAX_OUTPUT : data[0];
	ret = json_loadb((const char *)data + 1, size - 1, 0, NULL);
	if (!ret)
		return 0;
	if (qga_exec_parse_pid(ret, &pid, err, sizeof(err)) == 0 && pid <= 0)
		__builtin_trap();
	if (qga_exec_parse_status(ret, max, &r, err, sizeof(err)) != 0) {
		if (r.out || r.err || r.pid != 77 || !err[0])
			__builtin_trap();
	} else if (!r.exited) {
		if (r.out || r.err || r.out_len || r.err_len)
			__builtin_trap();
	} else {
		if (r.pid != 77 || (r.signal && r.exit_code != -1))
			__builtin_trap();
		check_stream(ret, "out-data", r.out, r.out_len, r.out_truncated, max);
		check_stream(ret, "err-data", r.err, r.err_len, r.err_truncated, max);
	}
	qga_exec_result_free(&r);
	json_decref(ret);
	return 0;
}
