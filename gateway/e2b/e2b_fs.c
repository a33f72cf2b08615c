/* gateway/e2b/e2b_fs.c: see e2b_fs.h. The scripts use only what busybox
 * has (stat -c, find -exec), so the tiny guest serves them too. */
#include "gateway/e2b/e2b_fs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* type, size, octal permissions, permissions, owner, group, mtime, path */
#define FMT "'%F\t%s\t%a\t%A\t%U\t%G\t%Y\t%n'"
#define MISSING "[ -e \"$1\" ] || [ -L \"$1\" ] || exit 2; "
/* l LINK: a symlink's line, then its target's: "\tL\t" type, octal
 * permissions and the resolved path (envd's EvalSymlinks), or "none\t0"
 * and the link itself when it resolves to nothing. e PATH: its line(s). */
#define LINK                                                                                       \
	"l() { stat -c " FMT " -- \"$1\" || return; "                                              \
	"if s=$(stat -L -c '%F\t%a' -- \"$1\" 2>/dev/null) && t=$(readlink -f -- \"$1\"); "        \
	"then :; else s='none\t0'; t=$1; fi; printf '\\tL\\t%s\\t%s\\n' \"$s\" \"$t\"; }; "        \
	"e() { if [ -L \"$1\" ]; then l \"$1\"; else stat -c " FMT " -- \"$1\"; fi; }; "

static const struct {
	const char *method;
	const char *script;
} calls[] = {
	[E2B_FS_STAT] = { "Stat", LINK MISSING "e \"$1\"" },
	/* symlinks one by one (their targets), the rest in batches */
	[E2B_FS_LIST_DIR] = { "ListDir", LINK MISSING
			      "[ -d \"$1\" ] || exit 20; find \"$1\" -mindepth 1 "
			      "-maxdepth \"$3\" ! -type l -exec stat -c " FMT
			      " -- {} +; find \"$1\" -mindepth 1 -maxdepth \"$3\" -type l "
			      "| while IFS= read -r p; do l \"$p\"; done" },
	[E2B_FS_MAKE_DIR] = { "MakeDir", LINK "[ -e \"$1\" ] && exit 17; mkdir -p -- \"$1\" && "
					      "e \"$1\"" },
	[E2B_FS_MOVE] = { "Move", LINK MISSING "mkdir -p -- \"$(dirname -- \"$2\")\" && mv -- "
					       "\"$1\" \"$2\" && e \"$2\"" },
	[E2B_FS_REMOVE] = { "Remove", MISSING "exec rm -rf -- \"$1\"" },
};

int e2b_fs_call_of(const char *rpc, enum e2b_fs_call *call)
{
	static const char prefix[] = "filesystem.Filesystem/";

	if (strncmp(rpc, prefix, sizeof(prefix) - 1))
		return -ENOENT;
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (!strcmp(rpc + sizeof(prefix) - 1, calls[i].method)) {
			*call = (enum e2b_fs_call)i;
			return 0;
		}
	return -ENOENT;
}

int e2b_fs_path(const json_t *v, const char *home, char *out, size_t cap)
{
	const char *p = json_string_value(v);
	int n;

	if (!p || !*p || strlen(p) != json_string_length(v))
		return -EINVAL;
	n = p[0] == '/' ? snprintf(out, cap, "%s", p) : snprintf(out, cap, "%s/%s", home, p);
	return n < 0 || (size_t)n >= cap ? -EINVAL : 0;
}

int e2b_fs_req_parse(enum e2b_fs_call call, const char *msg, size_t len, const char *home,
		     struct e2b_fs_req *out, char *err, size_t errlen)
{
	json_t *root = len ? json_loadb(msg, len, JSON_REJECT_DUPLICATES, NULL) : json_object(), *v;
	int rc = -EINVAL;

	memset(out, 0, sizeof(*out));
	out->call = call;
	out->depth = 1;
	if (!json_is_object(root)) {
		snprintf(err, errlen, "the message must be a JSON object");
		goto out;
	}
	if (e2b_fs_path(json_object_get(root, call == E2B_FS_MOVE ? "source" : "path"), home,
			out->path, sizeof(out->path)) < 0) {
		snprintf(err, errlen, "%s must be a path of at most 1023 bytes",
			 call == E2B_FS_MOVE ? "source" : "path");
		goto out;
	}
	if (call == E2B_FS_MOVE && e2b_fs_path(json_object_get(root, "destination"), home,
					       out->dest, sizeof(out->dest)) < 0) {
		snprintf(err, errlen, "destination must be a path of at most 1023 bytes");
		goto out;
	}
	if (call == E2B_FS_LIST_DIR && (v = json_object_get(root, "depth")) && !json_is_null(v)) {
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    json_integer_value(v) > 64) {
			snprintf(err, errlen, "depth must be 0..64");
			goto out;
		}
		out->depth = json_integer_value(v) ? (int)json_integer_value(v) : 1;
	}
	rc = 0;
out:
	json_decref(root);
	return rc;
}

const char *e2b_fs_script(enum e2b_fs_call call)
{
	return calls[call].script;
}

static const char *type_of(const char *t)
{
	if (!strcmp(t, "directory"))
		return "FILE_TYPE_DIRECTORY";
	if (!strcmp(t, "symbolic link"))
		return "FILE_TYPE_SYMLINK";
	if (!strcmp(t, "regular file") || !strcmp(t, "regular empty file"))
		return "FILE_TYPE_FILE";
	return NULL; /* devices, sockets, fifos: not E2B's */
}

json_t *e2b_fs_entry(const char *line, size_t len)
{
	char buf[2048], *f[8], *p, *end, when[40], num[24];
	const char *type, *name;
	long long size, mtime;
	unsigned long mode;
	struct tm tm;
	time_t t;
	int n = 0;

	if (len >= sizeof(buf) || memchr(line, '\0', len))
		return NULL;
	memcpy(buf, line, len);
	buf[len] = '\0';
	for (p = buf; n < 7 && (end = strchr(p, '\t')); p = end + 1) {
		*end = '\0';
		f[n++] = p;
	}
	f[n++] = p; /* the path, which may hold tabs */
	if (n != 8 || f[7][0] != '/' || !(type = type_of(f[0])))
		return NULL;
	size = strtoll(f[1], &end, 10);
	if (*end || end == f[1] || size < 0)
		return NULL;
	mode = strtoul(f[2], &end, 8);
	if (*end || end == f[2] || mode > 07777)
		return NULL;
	mtime = strtoll(f[6], &end, 10);
	if (*end || end == f[6] || mtime < 0 || mtime > 253402300799LL)
		return NULL;
	t = (time_t)mtime;
	if (!gmtime_r(&t, &tm))
		return NULL;
	snprintf(when, sizeof(when), "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
	snprintf(num, sizeof(num), "%lld", size); /* proto3 JSON: int64 as a string */
	name = strrchr(f[7], '/') + 1;
	return json_pack("{s:s%, s:s, s:s, s:s, s:i, s:s, s:s, s:s, s:s}", "name", name,
			 strlen(name), "type", type, "path", f[7], "size", num, "mode", (int)mode,
			 "permissions", f[3], "owner", f[4], "group", f[5], "modifiedTime", when);
}

int e2b_fs_link_amend(json_t *entry, const char *line, size_t len)
{
	char buf[2048], *type, *mode, *target, *end;
	unsigned long m;

	if (len < 3 || memcmp(line, "\tL\t", 3) || len - 3 >= sizeof(buf) ||
	    memchr(line, '\0', len) ||
	    strcmp(json_string_value(json_object_get(entry, "type")), "FILE_TYPE_SYMLINK"))
		return -EINVAL;
	memcpy(buf, line + 3, len - 3);
	buf[len - 3] = '\0';
	type = buf;
	if (!(mode = strchr(type, '\t')))
		return -EINVAL;
	*mode++ = '\0';
	if (!(target = strchr(mode, '\t')) || target[1] != '/')
		return -EINVAL;
	*target++ = '\0';
	m = strtoul(mode, &end, 8);
	if (*end || end == mode || m > 07777)
		return -EINVAL;
	/* as envd: the target's type and permissions, unspecified when it
	 * resolves to nothing (or to a kind that is not E2B's) */
	json_object_set_new(entry, "type",
			    json_string(type_of(type) && strcmp(type_of(type), "FILE_TYPE_SYMLINK")
						? type_of(type)
						: "FILE_TYPE_UNSPECIFIED"));
	json_object_set_new(entry, "mode", json_integer(strcmp(type, "none") ? (json_int_t)m : 0));
	json_object_set_new(entry, "symlinkTarget", json_string(target));
	return 0;
}

json_t *e2b_fs_answer(enum e2b_fs_call call, const char *out, size_t len)
{
	json_t *arr, *e;
	const char *p = out, *end = out + len;

	if (call == E2B_FS_REMOVE)
		return json_object();
	if (!(arr = json_array()))
		return NULL;
	e = NULL; /* the last entry read, for its target's line */
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (n && p[0] == '\t') {
			if (e)
				e2b_fs_link_amend(e, p, n); /* a stray one is passed over */
			e = NULL;
		} else if ((e = e2b_fs_entry(p, n))) {
			json_array_append_new(arr, e);
		}
		p += n + 1;
	}
	if (call == E2B_FS_LIST_DIR)
		return json_pack("{s:o}", "entries", arr);
	e = json_array_size(arr) ? json_pack("{s:O}", "entry", json_array_get(arr, 0))
				 : json_object();
	json_decref(arr);
	return e;
}
