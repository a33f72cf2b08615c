/* gateway/e2b/e2b_files.c: envd's GET and POST /files, streamed both ways
 * as the native route is (gateway/guest/file_xfer.h): a raw body
 * (application/octet-stream, gunzipped in the guest for Content-Encoding:
 * gzip) or a multipart/form-data one (gateway/e2b/multipart.h: each part
 * named "file" into its own command, to the ?path= or the part's
 * filename), and a download gzipped in the guest for Accept-Encoding: gzip,
 * as envd does. An upload starts before its body comes (the door's early
 * check calls e2b_envd, which calls here), and is answered once every
 * file's command ended. */
#include "gateway/e2b/e2b_files.h"

#include "gateway/api/api_audit.h"
#include "gateway/api/api_int.h"
#include "gateway/e2b/desktop_serve.h"
#include "gateway/e2b/e2b_api.h"
#include "gateway/e2b/e2b_req.h"
#include "gateway/e2b/multipart.h"
#include "gateway/guest/file_xfer.h"
#include "gateway/guest/sess_agent.h"
#include "gateway/session/session.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PARTS_MAX 64 /* files in one multipart upload */

struct e2b_files {
	struct http_req *r;
	struct sess_agent *agent; /* held */
	bool root; /* as root (home /root) */
	bool multipart, body_done, rx_stopped;
	char path[1200]; /* ?path= made absolute; "" when none (multipart) */
	struct file_xfer *x[PARTS_MAX]; /* owned: each file's command, in order */
	char *paths[PARTS_MAX]; /* owned: where each goes */
	int n;
	bool in_file; /* the current multipart part is a file (else dropped) */
	struct multipart mp;
	uint64_t bytes; /* of the body, as it came */
	lws_sorted_usec_list_t sul_hold;
};

static void plain_error(struct http_req *r, int status, const char *message)
{
	http_reply_json(r, status,
			json_pack("{s:i, s:o}", "code", status, "message",
				  api_error_text(message)));
}

void e2b_files_release(struct e2b_call *c)
{
	struct e2b_files *f = c->files;

	if (!f)
		return;
	lws_sul_cancel(&f->sul_hold);
	for (int i = 0; i < f->n; i++) {
		file_xfer_release(f->x[i]);
		free(f->paths[i]);
	}
	sess_agent_release(f->agent);
	free(f);
	c->files = NULL;
}

/* p made absolute (relative ones start in the user's home) into out. */
static int abs_path(const struct e2b_files *f, const char *p, char *out, size_t cap)
{
	int n;

	if (!p[0])
		return -EINVAL;
	n = p[0] == '/' ? snprintf(out, cap, "%s", p)
			: snprintf(out, cap, "%s/%s", f->root ? "/root" : "/home/vitrine", p);
	return n < 0 || (size_t)n >= cap ? -EINVAL : 0;
}

static void hold_later(lws_sorted_usec_list_t *sul)
{
	struct e2b_files *f = lws_container_of(sul, struct e2b_files, sul_hold);

	api_hold(f->r, FILE_XFER_IDLE_S);
}

/* The client is read only while no file's command is blocked. */
static void sync_rx(struct e2b_files *f)
{
	bool blocked = false;

	for (int i = 0; i < f->n && !blocked; i++)
		blocked = file_xfer_blocked(f->x[i]);
	if (blocked != f->rx_stopped)
		lws_rx_flow_control(f->r->wsi, !blocked);
	if (blocked && !f->rx_stopped) /* after lws's own body timeout, set on return */
		lws_sul_schedule(f->r->gw->ctx, 0, &f->sul_hold, hold_later, 1);
	f->rx_stopped = blocked;
}

/* Answers as envd does for a command that failed. */
static void reply_failed(struct http_req *r, const struct file_xfer_end *e)
{
	const char *msg = e->err[0] ? e->err : "the guest refused";

	if (!e->exited)
		plain_error(r, 502, e->reason);
	else if (e->exit_code == FILE_XFER_EXIT_MISSING)
		plain_error(r, 404, msg);
	else if (e->exit_code == FILE_XFER_EXIT_IS_DIR)
		plain_error(r, 400, msg);
	else if (e->exit_code == FILE_XFER_EXIT_DENIED)
		plain_error(r, 401, msg);
	else if (strstr(e->err, "No space left"))
		plain_error(r, 507, msg);
	else if (!strncmp(e->err, "gzip:", 5)) /* a body that is not gzip's */
		plain_error(r, 400, msg);
	else
		plain_error(r, 500, msg);
}

static void woken(void *ud);

/* A new file's command, writing path (gunzipped when gz). 0, or answered. */
static int add_file(struct e2b_files *f, const char *path, bool gz)
{
	const char *argv[7];

	if (f->n == PARTS_MAX) {
		plain_error(f->r, 400, "too many files in one upload");
		return -E2BIG;
	}
	for (int i = 0; i < f->n; i++)
		if (!strcmp(f->paths[i], path)) {
			plain_error(
				f->r, 400,
				"you cannot upload multiple files to the same path in one upload "
				"request");
			return -EEXIST;
		}
	file_xfer_put_argv(argv, path, gz);
	if (!(f->paths[f->n] = strdup(path)) ||
	    !(f->x[f->n] = file_xfer_start(f->r->gw->ctx, f->agent, argv, f->root, woken, f->r))) {
		free(f->paths[f->n]);
		plain_error(f->r, 500, "out of memory");
		return -ENOMEM;
	}
	f->n++;
	return 0;
}

/* The bytes of the file being written. 0, or answered. */
static int to_file(struct e2b_files *f, const void *p, size_t n)
{
	struct file_xfer_end e;

	if (file_xfer_write(f->x[f->n - 1], p, n) < 0) {
		file_xfer_ended(f->x[f->n - 1], &e);
		reply_failed(f->r, &e);
		return -EPIPE;
	}
	return 0;
}

static int mp_part(void *u, const char *name, const char *filename)
{
	struct e2b_files *f = u;
	char path[1200];

	f->in_file = !strcmp(name, "file");
	if (!f->in_file) /* envd skips other fields */
		return 0;
	if (f->path[0])
		snprintf(path, sizeof(path), "%s", f->path);
	else if (abs_path(f, filename, path, sizeof(path)) < 0) {
		plain_error(f->r, 400, "a file part needs a filename (its path) or ?path=");
		return -EINVAL;
	}
	return add_file(f, path, false);
}

static int mp_data(void *u, const void *p, size_t n)
{
	struct e2b_files *f = u;

	return f->in_file ? to_file(f, p, n) : 0;
}

static int mp_part_end(void *u)
{
	struct e2b_files *f = u;

	if (f->in_file)
		file_xfer_finish(f->x[f->n - 1]);
	f->in_file = false;
	return 0;
}

static const struct multipart_ops mp_ops = {
	.part = mp_part,
	.data = mp_data,
	.part_end = mp_part_end,
};

static int sink(struct http_req *r, const void *p, size_t n)
{
	struct e2b_files *f = e2b_call_of(r)->files;
	int64_t max = r->gw->files_max_bytes > 0 ? r->gw->files_max_bytes
						 : FILE_XFER_DEFAULT_MAX_BYTES;
	int rc;

	if (r->have_response)
		return 0;
	f->bytes += n;
	if (f->bytes > (uint64_t)max) {
		r->close_after = true;
		e2b_files_release(e2b_call_of(r)); /* the commands stop, their temporary files go */
		plain_error(r, 413, "the request body is over the gateway's --files-max-bytes");
		return 0;
	}
	if (!f->multipart)
		rc = to_file(f, p, n);
	else if ((rc = multipart_feed(&f->mp, p, n, &mp_ops, f)) == -EPROTO)
		plain_error(r, 400, "malformed multipart/form-data body");
	if (rc < 0) {
		r->close_after = true;
		return 0;
	}
	sync_rx(f);
	return 0;
}

/* The upload's answer once every file's command ended: envd's list of
 * entries, or the first failure. */
static void upload_progress(struct http_req *r, struct e2b_files *f)
{
	struct file_xfer_end e;
	json_t *list;

	sync_rx(f);
	for (int i = 0; i < f->n; i++)
		if (!file_xfer_ended(f->x[i], &e)) {
			if (f->body_done)
				continue;
			return;
		} else if (!e.exited || e.exit_code != 0) {
			if (!f->body_done)
				r->close_after = true; /* the rest is not read */
			reply_failed(r, &e);
			return;
		}
	for (int i = 0; i < f->n; i++)
		if (!file_xfer_ended(f->x[i], NULL))
			return;
	if (!f->body_done)
		return;
	if (!(list = json_array())) {
		plain_error(r, 500, "out of memory");
		return;
	}
	for (int i = 0; i < f->n; i++) {
		const char *slash = strrchr(f->paths[i], '/');

		json_array_append_new(list, json_pack("{s:s, s:s, s:s}", "name",
						      slash ? slash + 1 : f->paths[i], "type",
						      "file", "path", f->paths[i]));
	}
	api_audit_set(r, "size", json_integer((json_int_t)f->bytes));
	http_reply_json(r, 200, list);
}

static long get_pull(struct http_req *r, unsigned char *buf, size_t cap)
{
	struct e2b_files *f = e2b_call_of(r)->files;
	size_t n = f && f->n ? file_xfer_read(f->x[0], buf, cap) : 0;

	if (n)
		return (long)n;
	if (!f || !f->n)
		return -1;
	if (file_xfer_ended(f->x[0], NULL)) /* whole (no length: gzip), or cut short */
		return r->pull_len < 0 ? HTTP_PULL_END : -1;
	return 0;
}

static void download_progress(struct http_req *r, struct e2b_files *f)
{
	struct file_xfer_end e;
	bool ended = file_xfer_ended(f->x[0], &e);
	char line[64];
	int rc = file_xfer_line(f->x[0], line, sizeof(line));

	if (rc == 0)
		return;
	if (rc > 0 && line[0] == 'F') {
		long long size = strtoll(line + 1, NULL, 10);

		api_audit_set(r, "size", json_integer((json_int_t)size));
		http_reply_pull(r, 200, "application/octet-stream", size < 0 ? 0 : size, get_pull);
	} else if (rc > 0 && !strcmp(line, "Z")) {
		http_add_header(r, "content-encoding", "gzip");
		http_add_header(r, "vary", "Accept-Encoding");
		http_reply_pull(r, 200, "application/octet-stream", -1, get_pull);
	} else if (ended && !(e.exited && e.exit_code == 0)) {
		reply_failed(r, &e);
	} else {
		plain_error(r, 502, "unexpected answer from the guest");
	}
}

/* The transfers have news (the loop's wake-up), or r is writable. */
static void progress(struct http_req *r)
{
	struct e2b_files *f = e2b_call_of(r)->files;
	struct sess *s;

	if (!f || !f->n)
		return;
	for (int i = 0; i < f->n; i++)
		file_xfer_service(f->x[i]);
	api_hold(r, FILE_XFER_IDLE_S);
	if ((s = sess_find(r->gw, e2b_call_of(r)->sandbox)))
		sess_touch(s);
	if (r->method == M_GET)
		download_progress(r, f);
	else
		upload_progress(r, f);
}

static void woken(void *ud)
{
	struct http_req *r = ud;

	if (r->have_response)
		lws_callback_on_writable(r->wsi);
	else
		progress(r);
}

/* Starts r's transfer: the download, or the upload before its body.
 * False when answered. */
static bool begin(struct http_req *r, struct sess *s, bool root)
{
	struct e2b_call *c = e2b_call_of(r);
	char q[1024], ctype[256], enc[128];
	struct e2b_files *f;
	bool gz = false;

	if (!(f = calloc(1, sizeof(*f)))) {
		plain_error(r, 500, "out of memory");
		return false;
	}
	c->files = f;
	f->r = r;
	f->root = root;
	f->agent = sess_agent_hold(sess_agent_of(s));
	if (e2b_query(r, "path=", q, sizeof(q)) && abs_path(f, q, f->path, sizeof(f->path)) < 0) {
		plain_error(r, 400, "path is too long");
		return false;
	}
	snprintf(c->files_path, sizeof(c->files_path), "%s", f->path);
	if (f->path[0])
		api_audit_set(r, "path", json_string(f->path));
	r->waiting = progress;
	api_hold(r, FILE_XFER_IDLE_S);
	if (r->method == M_GET) {
		const char *argv[7];

		if (!f->path[0]) {
			plain_error(r, 400, "path is required");
			return false;
		}
		if (lws_hdr_copy(r->wsi, enc, sizeof(enc), WSI_TOKEN_HTTP_ACCEPT_ENCODING) > 0 &&
		    e2b_accept_gzip(enc, &gz) < 0) {
			plain_error(r, 400, "no acceptable encoding found, supported: [gzip]");
			return false;
		}
		file_xfer_get_argv(argv, f->path, false, gz);
		if (!(f->x[0] = file_xfer_start(r->gw->ctx, f->agent, argv, root, woken, r))) {
			plain_error(r, 500, "out of memory");
			return false;
		}
		f->paths[0] = NULL;
		f->n = 1;
		return true;
	}
	if (lws_hdr_copy(r->wsi, ctype, sizeof(ctype), WSI_TOKEN_HTTP_CONTENT_TYPE) <= 0)
		ctype[0] = '\0';
	if (lws_hdr_copy(r->wsi, enc, sizeof(enc), WSI_TOKEN_HTTP_CONTENT_ENCODING) > 0 &&
	    e2b_content_gzip(enc, &gz) < 0) {
		plain_error(r, 400, "unsupported Content-Encoding, supported: [gzip]");
		return false;
	}
	if (!strncasecmp(ctype, "multipart/", 10)) {
		if (gz) { /* the SDKs gzip raw bodies only */
			plain_error(r, 400,
				    "a gzipped multipart body is not supported: send "
				    "application/octet-stream");
			return false;
		}
		if (multipart_init(&f->mp, ctype) < 0) {
			plain_error(r, 400, "the body must be multipart/form-data with a boundary");
			return false;
		}
		f->multipart = true;
	} else if (!f->path[0]) {
		plain_error(r, 400, "path query parameter is required for raw body upload");
		return false;
	} else if (add_file(f, f->path, gz) < 0) {
		return false;
	}
	r->body_sink = sink;
	return true;
}

void e2b_files(struct http_req *r, struct sess *s, bool root)
{
	struct e2b_call *c = e2b_call_of(r);
	struct e2b_files *f = c->files;
	char q[1024];

	if (f && r->method != M_POST)
		return; /* a GET that came with a body: begun already */
	if (f) { /* the upload's body came whole */
		if (f->multipart && !multipart_done(&f->mp)) {
			plain_error(r, 400,
				    "the multipart/form-data body ended before its last part");
			return;
		}
		f->body_done = true;
		for (int i = 0; i < f->n; i++)
			file_xfer_finish(f->x[i]);
		progress(r);
		return;
	}
	if (r->method == M_GET && e2b_query(r, "path=", q, sizeof(q)) && q[0]) {
		struct display_image *img;
		char abs[1200];

		if (q[0] == '/')
			snprintf(abs, sizeof(abs), "%s", q);
		else
			snprintf(abs, sizeof(abs), "%s/%s", root ? "/root" : "/home/vitrine", q);
		if (desktop_held_take(s, abs, &img) == 0) {
			/* a served scrot's file: the gateway holds it */
			http_reply_bytes(r, 200, "application/octet-stream", img->data, img->len);
			display_image_unref(img);
			return;
		}
	}
	if (!api_exec_ready(r, s) || !begin(r, s, root)) {
		r->close_after = true; /* a body is not read */
		return;
	}
	if (r->method == M_POST) {
		desktop_held_remove(s, c->files_path); /* the guest's new file wins */
		/* as http_begin says: with neither a length nor chunks, no body */
		if (r->chunked || lws_hdr_total_length(r->wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH) > 0)
			return; /* the body follows (the door's early check called) */
		e2b_files(r, s, root); /* no body: it is whole now */
		return;
	}
	progress(r);
}
