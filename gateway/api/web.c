/* gateway/api/web.c: see web.h. */
#include "gateway/api/web.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int has_index(const char *dir)
{
	char p[PATH_MAX + 16];

	snprintf(p, sizeof(p), "%s/index.html", dir);
	return access(p, R_OK) == 0;
}

int web_mount(struct lws_http_mount *m, const char *override, char *dir_out, size_t dir_len)
{
	char exe[PATH_MAX], resolved[PATH_MAX];
	ssize_t n;

	memset(m, 0, sizeof(*m));
	dir_out[0] = '\0';
	if (override) {
		snprintf(dir_out, dir_len, "%s", override);
	} else if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) > 0) {
		exe[n] = '\0';
		snprintf(resolved, sizeof(resolved), "%s/../web", dirname(exe));
		if (has_index(resolved))
			snprintf(dir_out, dir_len, "%s", resolved);
	}
	if (!dir_out[0])
		snprintf(dir_out, dir_len, "/usr/share/vitrine/web");
	if (realpath(dir_out, resolved))
		snprintf(dir_out, dir_len, "%s", resolved);
	if (!has_index(dir_out))
		return -ENOENT;
	m->mountpoint = "/web";
	m->mountpoint_len = 4;
	m->origin = dir_out;
	m->def = "index.html";
	m->origin_protocol = LWSMPRO_FILE;
	return 0;
}
