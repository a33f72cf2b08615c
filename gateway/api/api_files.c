/* gateway/api/api_files.c: PUT and GET /v1/sessions/{id}/files?path=P: upload
 * a file into the guest, download one, or list a directory. A file moves as
 * it comes, both ways (gateway/guest/file_xfer.h: a command of its own in
 * the guest, run as the desktop's user, with the agent link's windows for
 * backpressure), up to `vitrine serve --files-max-bytes` an upload; paths
 * are confined to the user's home and /tmp, with no ".." parts. */
#include "gateway/api/api_audit.h"
#include "gateway/api/api_int.h"
#include "gateway/guest/file_xfer.h"
#include "gateway/session/session.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOME "/home/vitrine"
/* A directory's listing is collected whole before it is answered. */
#define LISTING_MAX (4u << 20)

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

void api_files_release(void *state)
{
	struct api_files_state *st = state;
	lws_sul_cancel(&st->sul_hold);

	file_xfer_release(st->x);
	st->x = NULL;
	bytebuf_free(&st->listing);
}

/* --files-max-bytes (a gateway made without it: the default). */
static int64_t max_bytes(const struct http_req *r)
{
	return r->gw->files_max_bytes > 0 ? r->gw->files_max_bytes : FILE_XFER_DEFAULT_MAX_BYTES;
}

size_t api_files_body_max(const struct http_req *r)
{
	return (size_t)max_bytes(r);
}

/* The wait for the guest may be longer than lws's body timeout. */
static void hold_later(lws_sorted_usec_list_t *sul)
{
	struct api_files_state *st = lws_container_of(sul, struct api_files_state, sul_hold);

	api_hold(st->r, FILE_XFER_IDLE_S);
}

/* The request's transfer stops or starts reading its client as the
 * guest's side is blocked or not. */
static void sync_rx(struct http_req *r, struct api_files_state *st)
{
	bool blocked = st->x && file_xfer_blocked(st->x);

	if (blocked != st->rx_stopped)
		lws_rx_flow_control(r->wsi, !blocked);
	if (blocked && !st->rx_stopped) /* after lws's own body timeout, set on return */
		lws_sul_schedule(lws_get_context(r->wsi), 0, &st->sul_hold, hold_later, 1);
	st->rx_stopped = blocked;
}

/* Answers a transfer that failed, as e says. */
static void reply_failed(struct http_req *r, const struct file_xfer_end *e)
{
	const char *msg = e->err[0] ? e->err : "the guest refused";

	if (!e->exited)
		http_reply_error(r, 503, "agent_unavailable", e->reason);
	else if (e->exit_code == FILE_XFER_EXIT_MISSING)
		http_reply_error(r, 404, "not_found", msg);
	else if (e->exit_code == FILE_XFER_EXIT_DENIED)
		http_reply_error(r, 403, "forbidden", msg);
	else if (strstr(e->err, "No space left"))
		http_reply_error(r, 507, "insufficient_storage", msg);
	else
		http_reply_error(r, 400, "file_error", msg);
}

/* The guest path of ?path=, into st; false when answered 400. */
static bool take_path(struct http_req *r, struct api_files_state *st)
{
	char raw[1100];
	const char *arg = http_query(r, "path=", raw, sizeof(raw));

	if (!arg || api_files_path(arg, st->path, sizeof(st->path)) < 0) {
		http_reply_error(r, 400, "path_not_allowed",
				 "give ?path= under /home/vitrine (relative paths start there) or "
				 "/tmp, without '..'");
		return false;
	}
	api_audit_set(r, "path", json_string(st->path));
	return true;
}

static int put_sink(struct http_req *r, const void *p, size_t n)
{
	struct api_files_state *st = r->route_state;
	struct file_xfer_end e;

	if (r->have_response || !st->x)
		return 0;
	if (file_xfer_written(st->x) + n > (uint64_t)max_bytes(r)) {
		char msg[96];

		/* the command is stopped: its temporary file goes, path is untouched */
		file_xfer_release(st->x);
		st->x = NULL;
		r->close_after = true;
		snprintf(msg, sizeof(msg), "request body over %lld bytes", (long long)max_bytes(r));
		http_reply_error(r, 413, "body_too_large", msg);
		return 0;
	}
	if (file_xfer_write(st->x, p, n) < 0) { /* the guest gave up before the body's end */
		file_xfer_ended(st->x, &e);
		r->close_after = true;
		reply_failed(r, &e);
		return 0;
	}
	sync_rx(r, st);
	return 0;
}

/* GET: a directory's lines came whole, or the file's first line decides. */
static long get_pull(struct http_req *r, unsigned char *buf, size_t cap)
{
	struct api_files_state *st = r->route_state;
	size_t n = st->x ? file_xfer_read(st->x, buf, cap) : 0;

	if (n)
		return (long)n;
	return !st->x || file_xfer_ended(st->x, NULL) ? -1 : 0;
}

static void get_progress(struct http_req *r, struct api_files_state *st)
{
	struct file_xfer_end e;
	bool ended = file_xfer_ended(st->x, &e);
	char line[64], buf[16384];
	int rc;

	if (!st->listing_on) {
		rc = file_xfer_line(st->x, line, sizeof(line));
		if (rc == 0)
			return;
		if (rc < 0 || !(line[0] == 'F' || !strcmp(line, "D"))) {
			if (ended && !(e.exited && e.exit_code == 0))
				reply_failed(r, &e);
			else
				http_reply_error(r, 502, "file_error",
						 "unexpected answer from the guest");
			return;
		}
		if (line[0] == 'F') {
			long long size = strtoll(line + 1, NULL, 10);

			api_audit_set(r, "size", json_integer((json_int_t)size));
			http_reply_pull(r, 200, "application/octet-stream", size < 0 ? 0 : size,
					get_pull);
			return;
		}
		st->listing_on = true;
	}
	while ((rc = (int)file_xfer_read(st->x, buf, sizeof(buf))) > 0)
		if (st->listing.len + (size_t)rc > LISTING_MAX ||
		    bytebuf_append(&st->listing, buf, (size_t)rc) < 0) {
			http_reply_error(r, 413, "listing_too_large",
					 "directories of up to 4 MiB of entries can be listed");
			return;
		}
	if (!ended)
		return;
	if (!e.exited || e.exit_code != 0)
		reply_failed(r, &e);
	else
		http_reply_json(r, 200,
				api_files_listing(st->path,
						  st->listing.data ? st->listing.data : "",
						  st->listing.len));
}

/* On each writable until answered: the transfer goes on, and is answered
 * once there is something to say. */
static void files_waiting(struct http_req *r)
{
	struct api_files_state *st = r->route_state;
	struct file_xfer_end e;
	struct sess *s;

	if (!st || !st->x)
		return;
	file_xfer_service(st->x);
	if ((s = sess_find(r->gw, r->route.id)))
		sess_touch(s); /* a transfer is use: the session does not idle out under it */
	api_hold(r, FILE_XFER_IDLE_S);
	if (r->method == M_GET) {
		get_progress(r, st);
		return;
	}
	sync_rx(r, st);
	if (!file_xfer_ended(st->x, &e))
		return;
	if (!st->body_done) /* failed before the body's end: the rest is not read */
		r->close_after = true;
	if (e.exited && e.exit_code == 0 && st->body_done) {
		api_audit_set(r, "size", json_integer((json_int_t)file_xfer_written(st->x)));
		http_reply_json(r, 200,
				json_pack("{s:s, s:I}", "path", st->path, "size",
					  (json_int_t)file_xfer_written(st->x)));
	} else if (e.exited && e.exit_code == 0) {
		http_reply_error(r, 502, "file_error", "the guest ended before the body did");
	} else {
		reply_failed(r, &e);
	}
}

/* The transfer has news (the loop's wake-up). */
static void files_woken(void *ud)
{
	struct http_req *r = ud;

	if (r->have_response)
		lws_callback_on_writable(r->wsi); /* the body's next part */
	else
		files_waiting(r);
}

/* Starts r's transfer (a PUT's before its body comes). False when answered. */
static bool start(struct http_req *r)
{
	struct sess *s = api_route_session(r);
	struct api_files_state *st;
	const char *argv[7];
	char len[32];

	if (!s || !(st = http_route_state(r)) || !take_path(r, st) || !api_exec_ready(r, s))
		return false;
	if (r->method == M_PUT &&
	    lws_hdr_copy(r->wsi, len, sizeof(len), WSI_TOKEN_HTTP_CONTENT_LENGTH) > 0 &&
	    strtoull(len, NULL, 10) > (unsigned long long)max_bytes(r)) {
		char msg[96];

		snprintf(msg, sizeof(msg), "request body over %lld bytes", (long long)max_bytes(r));
		http_reply_error(r, 413, "body_too_large", msg);
		return false;
	}
	if (r->method == M_PUT)
		file_xfer_put_argv(argv, st->path, false);
	else
		file_xfer_get_argv(argv, st->path, true, false);
	st->r = r;
	if (!(st->x = file_xfer_start(r->gw->ctx, sess_agent_of(s), argv, false, files_woken, r))) {
		http_reply_error(r, 500, "internal", "out of memory");
		return false;
	}
	r->waiting = files_waiting;
	api_hold(r, FILE_XFER_IDLE_S);
	return true;
}

void api_files_begin(struct http_req *r)
{
	if (!start(r)) {
		r->close_after = true; /* the body is not read */
		return;
	}
	r->body_sink = put_sink;
	sync_rx(r, r->route_state);
}

void api_files(struct http_req *r)
{
	struct api_files_state *st = r->route_state;

	if (!st || !st->x) { /* a GET, or a PUT with no body (nothing began) */
		if (!start(r))
			return;
		st = r->route_state;
	}
	if (r->method == M_PUT) {
		st->body_done = true;
		file_xfer_finish(st->x);
	}
	files_waiting(r);
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
