/* gateway/stream/audit.c: see audit.h. */
#include "gateway/stream/audit.h"

#include "common/log.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void audit_event(struct gw *gw, const char *session, const char *event, json_t *fields)
{
	struct timespec ts;
	json_t *j = json_object();
	char *line;
	int fd;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (!j) {
		json_decref(fields);
		return;
	}
	json_object_set_new(j, "ts",
			    json_integer((json_int_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000));
	json_object_set_new(j, "session", json_string(session));
	json_object_set_new(j, "event", json_string(event));
	if (fields)
		json_object_update(j, fields);
	json_decref(fields);
	line = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	if (!line)
		return;
	log_info("audit", "%s", line);
	if (gw->audit_path[0]) {
		fd = open(gw->audit_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
		size_t n = strlen(line);

		line[n] = '\n'; /* replaces the NUL: written with an explicit length */
		if (fd < 0 || write(fd, line, n + 1) != (ssize_t)(n + 1))
			log_warn("audit", "cannot append to %s", gw->audit_path);
		if (fd >= 0)
			close(fd);
	}
	free(line);
}
