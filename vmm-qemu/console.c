/* vmm-qemu/console.c: see console.h. */
#include "vmm-qemu/console.h"

#include <errno.h>
#include <string.h>

static const char tag[] = "VITRINE ";

int vmm_console_parse_line(const char *line, size_t len, struct vmm_marker *m)
{
	const char *p = NULL, *end;

	memset(m, 0, sizeof(*m));
	while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		len--;
	for (size_t i = 0; i + sizeof(tag) - 1 <= len; i++) {
		if (!memcmp(line + i, tag, sizeof(tag) - 1)) {
			p = line + i + sizeof(tag) - 1;
			break;
		}
	}
	if (!p)
		return 0;
	end = line + len;
	while (p < end) {
		const char *eq, *stop;
		size_t klen, vlen;

		while (p < end && *p == ' ')
			p++;
		if (p == end)
			break;
		if (m->n == VMM_MARKER_MAX_KV)
			return -EINVAL;
		stop = memchr(p, ' ', (size_t)(end - p));
		if (!stop)
			stop = end;
		eq = memchr(p, '=', (size_t)(stop - p));
		if (!eq && m->n == 0 && (size_t)(stop - p) < sizeof(m->kv[0].value)) {
			/* A leading bare word names the event. */
			strcpy(m->kv[0].key, "event");
			memcpy(m->kv[0].value, p, (size_t)(stop - p));
			m->n++;
			p = stop;
			continue;
		}
		if (!eq || eq == p)
			return -EINVAL;
		klen = (size_t)(eq - p);
		if (klen >= sizeof(m->kv[0].key))
			return -EINVAL;
		if (klen == 4 && !memcmp(p, "text", 4))
			stop = end;
		vlen = (size_t)(stop - eq - 1);
		if (vlen >= sizeof(m->kv[0].value))
			vlen = sizeof(m->kv[0].value) - 1;
		memcpy(m->kv[m->n].key, p, klen);
		memcpy(m->kv[m->n].value, eq + 1, vlen);
		m->n++;
		p = stop;
	}
	return m->n ? 1 : -EINVAL;
}

const char *vmm_marker_get(const struct vmm_marker *m, const char *key)
{
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->kv[i].key, key))
			return m->kv[i].value;
	return NULL;
}
