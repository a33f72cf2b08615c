/* gateway/e2b/e2b_watch.c: see e2b_watch.h. */
#include "gateway/e2b/e2b_watch.h"

#include "common/utf8.h"
#include "gateway/e2b/e2b_fs.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char *const methods[] = {
	[E2B_WATCH_DIR] = "WatchDir",
	[E2B_WATCH_CREATE] = "CreateWatcher",
	[E2B_WATCH_GET] = "GetWatcherEvents",
	[E2B_WATCH_REMOVE] = "RemoveWatcher",
};

int e2b_watch_call_of(const char *rpc, enum e2b_watch_call *call)
{
	static const char prefix[] = "filesystem.Filesystem/";

	if (strncmp(rpc, prefix, sizeof(prefix) - 1))
		return -ENOENT;
	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		if (!strcmp(rpc + sizeof(prefix) - 1, methods[i])) {
			*call = (enum e2b_watch_call)i;
			return 0;
		}
	return -ENOENT;
}

/* A field by its proto3 JSON name or its original one. */
static json_t *field(const json_t *o, const char *json_name, const char *proto_name)
{
	json_t *v = json_object_get(o, json_name);

	return v ? v : json_object_get(o, proto_name);
}

/* A bool field: absent or null is false. -EINVAL for another type. */
static int flag(const json_t *o, const char *json_name, const char *proto_name, bool *out)
{
	json_t *v = field(o, json_name, proto_name);

	if (v && !json_is_null(v) && !json_is_boolean(v))
		return -EINVAL;
	*out = json_is_true(v);
	return 0;
}

int e2b_watch_req_parse(enum e2b_watch_call call, const char *msg, size_t len, const char *home,
			struct e2b_watch_req *out, char *err, size_t errlen)
{
	json_t *root = len ? json_loadb(msg, len, JSON_REJECT_DUPLICATES, NULL) : json_object(), *v;
	bool ignored;
	int rc = -EINVAL;

	memset(out, 0, sizeof(*out));
	out->call = call;
	if (!json_is_object(root)) {
		snprintf(err, errlen, "the message must be a JSON object");
		goto out;
	}
	if (call == E2B_WATCH_GET || call == E2B_WATCH_REMOVE) {
		const char *id;

		v = field(root, "watcherId", "watcher_id");
		id = json_string_value(v);
		if (!id || !*id || strlen(id) != json_string_length(v) ||
		    strlen(id) >= sizeof(out->id)) {
			snprintf(err, errlen, "watcherId must be a watcher's id");
			goto out;
		}
		snprintf(out->id, sizeof(out->id), "%s", id);
		rc = 0;
		goto out;
	}
	if (e2b_fs_path(json_object_get(root, "path"), home, out->path, sizeof(out->path)) < 0) {
		snprintf(err, errlen, "path must be a path of at most 1023 bytes");
		goto out;
	}
	if (flag(root, "recursive", "recursive", &out->recursive) < 0 ||
	    flag(root, "includeEntry", "include_entry", &ignored) < 0 ||
	    flag(root, "allowNetworkMounts", "allow_network_mounts", &ignored) < 0) {
		snprintf(err, errlen,
			 "recursive, includeEntry and allowNetworkMounts are booleans");
		goto out;
	}
	rc = 0;
out:
	json_decref(root);
	return rc;
}

void e2b_watch_argv(const struct e2b_watch_req *q, const char *argv[6])
{
	int n = 0;

	argv[n++] = "vitrine-agent";
	argv[n++] = "watch";
	if (q->recursive)
		argv[n++] = "--recursive";
	argv[n++] = "--";
	argv[n++] = q->path;
	argv[n] = NULL;
}

enum connect_code e2b_watch_exit_code(int exit_code, bool ready, const char **what)
{
	if (!ready && exit_code == E2B_WATCH_EXIT_MISSING) {
		*what = "no such directory";
		return CONNECT_NOT_FOUND;
	}
	if (!ready && exit_code == E2B_WATCH_EXIT_NOT_DIR) {
		*what = "not a directory";
		return CONNECT_INVALID_ARGUMENT;
	}
	if (!ready && exit_code == E2B_WATCH_EXIT_USAGE) {
		*what = "this guest's vitrine-agent cannot watch (an image older than watching)";
		return CONNECT_UNIMPLEMENTED;
	}
	if (exit_code == E2B_WATCH_EXIT_OVERFLOW) {
		*what = "the guest's event queue overflowed: events were lost";
		return CONNECT_INTERNAL;
	}
	*what = exit_code < 0 ? "the watcher was killed" : "the watcher failed";
	return CONNECT_INTERNAL;
}

size_t e2b_watch_feed(struct e2b_watch_lines *l, const void *p, size_t n,
		      void (*fn)(void *ud, const char *line, size_t len), void *ud)
{
	const char *s = p, *end = s + n;
	size_t dropped = 0;

	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t take = nl ? (size_t)(nl - s) : (size_t)(end - s);

		if (!l->overlong && l->len + take > sizeof(l->buf)) {
			l->overlong = true;
			l->len = 0;
		}
		if (!l->overlong) {
			memcpy(l->buf + l->len, s, take);
			l->len += take;
		}
		s += take;
		if (!nl)
			break;
		s++; /* the '\n' */
		if (l->overlong)
			dropped++;
		else
			fn(ud, l->buf, l->len);
		l->len = 0;
		l->overlong = false;
	}
	return dropped;
}

int e2b_watch_line_parse(const char *line, size_t len, char *name, size_t cap)
{
	static const char types[] = { [E2B_EVENT_CREATE] = 'c',
				      [E2B_EVENT_WRITE] = 'w',
				      [E2B_EVENT_REMOVE] = 'd',
				      [E2B_EVENT_RENAME] = 'r',
				      [E2B_EVENT_CHMOD] = 'm' };
	int type = 0;
	size_t n = 0;

	if (len == 5 && !memcmp(line, "ready", 5))
		return 0;
	if (len < 3 || line[1] != ' ' || memchr(line, '\0', len))
		return -EINVAL;
	for (int t = E2B_EVENT_CREATE; t <= E2B_EVENT_CHMOD; t++)
		if (line[0] == types[t])
			type = t;
	if (!type)
		return -EINVAL;
	for (size_t i = 2; i < len; i++) {
		char c = line[i];

		if (c == '\\') {
			if (++i == len || (line[i] != '\\' && line[i] != 'n'))
				return -EINVAL;
			c = line[i] == 'n' ? '\n' : '\\';
		}
		if (n + 1 >= cap)
			return -EINVAL;
		name[n++] = c;
	}
	name[n] = '\0';
	utf8_scrub(name);
	return type;
}

const char *e2b_event_type_name(int type)
{
	static const char *const names[] = {
		[E2B_EVENT_CREATE] = "EVENT_TYPE_CREATE", [E2B_EVENT_WRITE] = "EVENT_TYPE_WRITE",
		[E2B_EVENT_REMOVE] = "EVENT_TYPE_REMOVE", [E2B_EVENT_RENAME] = "EVENT_TYPE_RENAME",
		[E2B_EVENT_CHMOD] = "EVENT_TYPE_CHMOD",
	};

	return type >= E2B_EVENT_CREATE && type <= E2B_EVENT_CHMOD ? names[type] : NULL;
}

json_t *e2b_watch_event(int type, const char *name)
{
	const char *t = e2b_event_type_name(type);

	return t ? json_pack("{s:s, s:s}", "name", name, "type", t) : NULL;
}

json_t *e2b_watch_msg_start(void)
{
	return json_pack("{s:{}}", "start");
}

json_t *e2b_watch_msg_event(json_t *event)
{
	return event ? json_pack("{s:o}", "filesystem", event) : NULL;
}

json_t *e2b_watch_msg_keepalive(void)
{
	return json_pack("{s:{}}", "keepalive");
}
