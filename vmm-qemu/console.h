/* vmm-qemu/console.h: the guest's progress lines on its serial console.
 *
 * Guest images print lines "VITRINE [EVENT] key=value key=value ..." on
 * ttyS0 (see docs/images.md): boot phases, errors, and for the tiny guest the
 * input it saw ("VITRINE click x=1 y=2 button=left"). This is the pure parser
 * for them. A bare first word is stored as the value of the key "event"; the
 * value of the key "text" runs to the end of the line, every other value to
 * the next space. */
#ifndef VITRINE_VMM_CONSOLE_H
#define VITRINE_VMM_CONSOLE_H

#include <stddef.h>

#define VMM_MARKER_MAX_KV 12

struct vmm_marker {
	size_t n;
	struct {
		char key[32];
		char value[512];
	} kv[VMM_MARKER_MAX_KV];
};

/* Parses one console line (trailing CR/LF ignored; text before "VITRINE " is
 * skipped, since kernel messages may share the line). Returns 1 and fills *m
 * for a marker line, 0 for any other line, -EINVAL for a marker line that is
 * malformed (a field without '=', too many fields, an over-long key). */
int vmm_console_parse_line(const char *line, size_t len, struct vmm_marker *m);

/* The value of key, or NULL. */
const char *vmm_marker_get(const struct vmm_marker *m, const char *key);

#endif
