/* tests/fuzz/fuzz_console.c: libFuzzer target for the guest console parser
 * and image.json parsing: both read what a guest or an image file says. */
#include "vmm-qemu/console.h"
#include "vmm-qemu/image.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vmm_marker m;
	struct vmm_image img;
	char err[256], *text;

	if (vmm_console_parse_line((const char *)data, size, &m) == 1)
		for (size_t i = 0; i < m.n; i++)
			(void)vmm_marker_get(&m, m.kv[i].key);
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	vmm_image_parse(text, "/images/x", &img, err, sizeof(err));
	free(text);
	return 0;
}
