/* gateway/api/api_files.c: PUT and GET /v1/sessions/{id}/files?path=P: upload
 * a file into the guest (binary safe, up to the 1 MiB body limit),
 * download one, or list a directory. The work is a command run as the
 * desktop's user through the agent (gateway/exec.h); paths are confined to
 * the user's home and /tmp, with no ".." parts. */
#include "gateway/api/api_audit.h"
#include "gateway/api/api_int.h"
#include "gateway/guest/exec.h"
#include "gateway/session/session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FILES_TIMEOUT_S 60
#define HOME "/home/vitrine"

/* GET: "D\n" then one line per entry, or "F\n" then the bytes. */
static const char *const get_script =
	"if [ -d \"$0\" ]; then printf 'D\\n'; "
	"exec find \"$0\" -mindepth 1 -maxdepth 1 -printf '%y\\t%s\\t%T@\\t%f\\n'; "
	"elif [ -f \"$0\" ]; then printf 'F\\n'; exec cat -- \"$0\"; "
	"else echo 'no such file or directory' >&2; exit 2; fi";
static const char *const put_script = "mkdir -p -- \"$(dirname -- \"$0\")\" && cat > \"$0\"";

int api_files_path(const char *in, char *out, size_t outlen)
{
	size_t n = strlen(in);
	int w;

	if (n == 0 || n > 1024)
		return -1;
	w = in[0] == '/' ? snprintf(out, outlen, "%s", in) : snprintf(out, outlen, HOME "/%s", in);
	if (w < 0 || (size_t)w >= outlen)
		return -1;
	/* No ".." part, anywhere. */
	for (const char *p = out; *p;) {
		size_t len = strcspn(p, "/");

		if (len == 2 && p[0] == '.' && p[1] == '.')
			return -1;
		p += len;
		while (*p == '/')
			p++;
	}
	if (strcmp(out, HOME) && strncmp(out, HOME "/", sizeof(HOME)) && strcmp(out, "/tmp") &&
	    strncmp(out, "/tmp/", 5))
		return -1;
	return 0;
}

static void start(struct http_req *r, struct sess *s, const char *script, const char *path,
		  const void *in, size_t in_len)
{
	const char *argv[] = { "/bin/sh", "-c", script, path, NULL };

	api_exec_start(r, s, argv, in, in_len, FILES_TIMEOUT_S);
}

void api_files(struct http_req *r)
{
	struct sess *s = api_route_session(r);
	struct api_path_state *st;
	char raw[1100], path[1200];
	const char *arg;

	if (!s)
		return;
	arg = http_query(r, "path=", raw, sizeof(raw));
	if (!arg || api_files_path(arg, path, sizeof(path)) < 0) {
		http_reply_error(r, 400, "path_not_allowed",
				 "give ?path= under /home/vitrine (relative paths start there) or "
				 "/tmp, without '..'");
		return;
	}
	if (!api_exec_ready(r, s) || !(st = http_route_state(r)))
		return;
	snprintf(st->path, sizeof(st->path), "%s", path);
	api_audit_set(r, "path", json_string(path));
	if (r->method == M_PUT)
		api_audit_set(r, "size", json_integer((json_int_t)r->body_len));
	if (r->method == M_PUT)
		start(r, s, put_script, path, r->body, r->body_len);
	else
		start(r, s, get_script, path, NULL, 0);
}

json_t *api_files_listing(const char *path, const char *text, size_t len)
{
	json_t *entries = json_array();
	const char *p = text, *end = text + len;

	while (entries && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char line[1200], type;
		long long size;
		double mtime;
		int off = 0;

		snprintf(line, sizeof(line), "%.*s", (int)n, p);
		/* The mtime is the guest's to choose: one no json_int_t holds (or
		 * NaN) is a malformed line, not a conversion out of range. */
		if (sscanf(line, "%c\t%lld\t%lf\t%n", &type, &size, &mtime, &off) == 3 && off > 0 &&
		    mtime > -9e18 && mtime < 9e18)
			json_array_append_new(entries, json_pack("{s:s, s:s, s:I, s:I}", "name",
								 line + off, "type",
								 type == 'd'   ? "dir"
								 : type == 'f' ? "file"
								 : type == 'l' ? "link"
									       : "other",
								 "size", (json_int_t)size, "mtime",
								 (json_int_t)mtime));
		p += n + 1;
	}
	return json_pack("{s:s, s:o}", "path", path, "entries", entries ? entries : json_array());
}

void api_files_resume(struct http_req *r, struct sess *s, bool timed_out)
{
	const struct api_path_state *st = r->route_state;
	const struct agent_exec_result *res;
	const char *err;
	int rc;

	if (!api_exec_finished(r, s, timed_out))
		return;
	rc = exec_result(r->exec, &res, &err);
	if (rc < 0)
		http_reply_error(r, 503, "agent_unavailable", err);
	else if (res->timed_out || res->exit_code != 0)
		http_reply_error(r, res->exit_code == 2 ? 404 : 400,
				 res->exit_code == 2 ? "not_found" : "file_error",
				 res->err && res->err_len ? res->err : "the guest refused");
	else if (r->method == M_PUT)
		http_reply_json(r, 200,
				json_pack("{s:s, s:I}", "path", st->path, "size",
					  (json_int_t)r->body_len));
	else if (res->out_truncated)
		http_reply_error(r, 413, "file_too_large",
				 "files of up to 4 MiB can be downloaded");
	else if (res->out_len >= 2 && res->out[0] == 'D')
		http_reply_json(r, 200,
				api_files_listing(st->path, res->out + 2, res->out_len - 2));
	else if (res->out_len >= 2 && res->out[0] == 'F' &&
		 (api_audit_set(r, "size", json_integer((json_int_t)res->out_len - 2)), 1))
		http_reply_bytes(r, 200, "application/octet-stream", res->out + 2,
				 res->out_len - 2);
	else
		http_reply_error(r, 502, "file_error", "unexpected answer from the guest");
	exec_release(r->exec);
	r->exec = NULL;
}
