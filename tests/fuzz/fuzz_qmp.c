/* tests/fuzz/fuzz_qmp.c: libFuzzer target for the QMP machine. The input is
 * fed as monitor bytes, in chunks whose sizes the input's first bytes pick,
 * to a session that has commands pending, so greetings, replies, errors,
 * events and garbage meet every state. The machine must never crash, leak or
 * misbehave under ASan/UBSan, whatever QEMU (or a guest that owns it) says. */
#include "vmm-qemu/qmp.h"

#include <stddef.h>
#include <stdint.h>

static void on_reply(void *ud, const json_t *ret, const struct qmp_error *err)
{
	struct qmp *q = ud;

	/* Replies may queue more commands: exercise that path too. */
	if (ret && json_is_object(ret) && json_object_size(ret) == 1)
		qmp_command(q, "query-status", NULL, -1, NULL, NULL);
	(void)err;
}

static void on_event(void *ud, const char *name, const json_t *data)
{
	(void)ud;
	(void)name;
	(void)data;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct qmp *q = qmp_create(on_event, NULL);
	char err[256];
	size_t chunk, pos = 0;
	const char *out;
	size_t len;
	int fd;

	if (!q || size < 1)
		goto out;
	chunk = (size_t)(data[0] % 31) + 1;
	qmp_command(q, "stop", NULL, -1, on_reply, q);
	qmp_command(q, "cont", json_pack("{s:i}", "x", 1), 3, on_reply, q);
	for (pos = 1; pos < size; pos += chunk) {
		size_t n = size - pos < chunk ? size - pos : chunk;

		if (qmp_feed(q, (const char *)data + pos, n, err, sizeof(err)) < 0)
			break;
		while (qmp_next_output(q, &out, &len, &fd))
			qmp_output_done(q, len > 7 ? len / 2 : len);
	}
out:
	qmp_destroy(q);
	return 0;
}
