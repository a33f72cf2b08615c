/* tests/fuzz/fuzz_qga.c: libFuzzer target for the qemu-ga machine. The input
 * is fed as agent bytes, in chunks whose sizes the input's first byte picks,
 * to a session that syncs and has commands queued; a chunk whose first byte
 * is 0xFE resynchronises first, as a client-side timeout does, and one whose
 * first byte is 0xFD forgets the second command (its caller gave up). Stale
 * bytes, sentinels, sync replies, replies, errors and garbage meet every
 * state. The machine must never crash, leak or misbehave under ASan/UBSan,
 * whatever the guest says; a stream it calls broken stays broken (and says
 * why), and a usable one never has more commands pending than were queued.
 * The guest-exec helpers are fuzz_qga_exec's. */
#include "vmm-qemu/qga.h"

#include <stddef.h>
#include <stdint.h>

#define SYNC_ID 4242

static void on_reply(void *ud, const json_t *ret, const struct qga_error *err)
{
	struct qga *g = ud;

	/* Replies may queue more commands: exercise that path too. */
	if (ret && json_is_object(ret) && json_object_size(ret) == 1)
		qga_command(g, "guest-ping", NULL, NULL, NULL);
	(void)err;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct qga *g = qga_create(SYNC_ID);
	char err[256];
	size_t chunk, pos;
	const char *out;
	size_t len;
	int64_t second;

	if (!g || size < 1)
		goto out;
	chunk = (size_t)(data[0] % 31) + 1;
	qga_command(g, "guest-info", NULL, on_reply, g);
	second = qga_command(g, "guest-exec-status", json_pack("{s:i}", "pid", 1), on_reply, g);
	for (pos = 1; pos < size; pos += chunk) {
		size_t n = size - pos < chunk ? size - pos : chunk;

		if (data[pos] == 0xfe)
			qga_resync(g, SYNC_ID);
		if (data[pos] == 0xfd)
			qga_forget(g, second);
		if (qga_feed(g, (const char *)data + pos, n, err, sizeof(err)) < 0) {
			if (!qga_broken(g) || qga_feed(g, "{}", 2, err, sizeof(err)) >= 0)
				__builtin_trap();
			break;
		}
		/* two queued, plus one per reply that queued a ping */
		if (qga_broken(g) || qga_pending(g) > 2 + size)
			__builtin_trap();
		while (qga_next_output(g, &out, &len))
			qga_output_done(g, len > 7 ? len / 2 : len);
	}
out:
	qga_destroy(g);
	return 0;
}
