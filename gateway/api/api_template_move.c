/* gateway/api/api_template_move.c: moving templates between hosts:
 * GET /v1/templates/{name}/export (one file, tpl_archive.h) and POST
 * /v1/templates/import?name=N (that file back). The slow parts run as a job
 * of the gateway's bulk queue (opening an export, which may flatten a disk
 * with qemu-img; checking and installing an import), whose done answers
 * the request on the loop. On the loop there are only 64 KiB reads of the
 * export (http_reply_stream) and writes of the import's body as it comes
 * (http_req.body_sink), each hashed as it passes. */
#include "common/log.h"
#include "common/space.h"
#include "common/work_queue.h"
#include "gateway/api/api_int.h"
#include "gateway/template/template_build.h"
#include "vmm-qemu/snapshot.h"
#include "vmm-qemu/tpl_export.h"
#include "vmm-qemu/tpl_import.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MOVE_HOLD_S 900

/* Template moves hold at most all but one of the bulk queue's workers. */
static const char move_owner;

/* The work a worker does for one request: the queue's job, from the submit
 * until its done, which answers the request (or, once the request went,
 * only frees the op). */
struct move_op {
	struct move_req *m; /* the request's state; NULL once it went */
	struct work_queue *q;
	char name[ROUTE_ID_MAX + 1];
	struct tpl_import *im; /* owned: an import to finish, or NULL (an export) */
	struct tpl_export *x; /* owned: an opened export, once done */
	int rc;
	char err[1024];
};

static void op_free(struct move_op *op)
{
	tpl_export_free(op->x);
	tpl_import_free(op->im);
	free(op);
}

/* The bulk queue's work (a worker's). */
static void op_work(void *ud, void *ctx)
{
	struct move_op *op = ud;

	(void)ctx;
	if (op->im)
		op->rc = tpl_import_finish(op->im, op->err, sizeof(op->err));
	else
		op->rc = tpl_export_open(op->name, &op->x, op->err, sizeof(op->err));
}

void api_move_req_release(void *state)
{
	struct move_req *m = state;

	tpl_import_free(m->im);
	if (m->op) {
		/* Still queued: its done comes now and frees it; else once it ran. */
		m->op->m = NULL;
		work_queue_cancel(m->op->q, m->op);
	}
}

/* r's state, made on first use; NULL when out of memory (answered). */
static struct move_req *move_req_of(struct http_req *r)
{
	struct move_req *m = http_route_state(r);

	if (m)
		m->r = r;
	return m;
}

static void answer(struct move_req *m, struct move_op *op);

/* The job's done (the loop's): the answer, if anyone still waits. */
static void op_done(void *ud, int status)
{
	struct move_op *op = ud;
	struct move_req *m = op->m;

	if (m) {
		m->op = NULL;
		if (status < 0)
			http_reply_error(m->r, 503, "unavailable", "the gateway is stopping");
		else
			answer(m, op);
	}
	op_free(op);
}

/* Queues op for m. Answers 503 or 500 on failure. */
static void start(struct move_req *m, struct move_op *op)
{
	int rc;

	op->m = m;
	op->q = m->r->gw->bulk_work;
	rc = work_queue_submit(op->q, &move_owner, op_work, op_done, op);
	if (rc < 0) {
		op_free(op);
		if (rc == -EBUSY)
			http_reply_error(m->r, 503, "busy",
					 "too many templates and videos are being made: try again");
		else
			http_reply_error(m->r, 500, "internal", "cannot queue the work");
		return;
	}
	m->op = op;
	api_hold(m->r, MOVE_HOLD_S);
}

/* The work is done: the answer. */
static void answer(struct move_req *m, struct move_op *op)
{
	struct http_req *r = m->r;
	char disp[160];

	if (op->rc == 0)
		log_info("template", "%s: %s", op->name, op->im ? "imported" : "export started");
	else
		log_info("template", "%s: %s refused: %s", op->name, op->im ? "import" : "export",
			 op->err);
	if (op->im) {
		if (op->rc == 0) {
			struct vmm_template t;
			char err[512];

			if (vmm_template_load(op->name, &t, err, sizeof(err)) == 0)
				http_reply_json(r, 201,
						json_pack("{s:s, s:s, s:s, s:i, s:i, s:i}", "name",
							  op->name, "status", "ready", "image",
							  t.image, "memory_mib", t.memory_mib,
							  "width", t.width, "height", t.height));
			else
				http_reply_error(r, 500, "internal", err);
		} else if (op->rc == -EPROTO) {
			http_reply_error(r, 400, "invalid_archive", op->err);
		} else if (op->rc == -ESTALE) {
			http_reply_error(r, 422, "template_mismatch", op->err);
		} else if (op->rc == -EEXIST) {
			http_reply_error(r, 409, "template_exists", op->err);
		} else {
			http_reply_error(r, 500, "internal", op->err);
		}
	} else if (op->rc == 0) {
		struct tpl_export *x = op->x;

		op->x = NULL; /* the answer's now */
		snprintf(disp, sizeof(disp), "attachment; filename=\"%s.vtpl\"", op->name);
		http_add_header(r, "content-disposition", disp);
		http_reply_stream(r, 200, "application/x-tar", tpl_export_size(x), tpl_export_read,
				  tpl_export_free, x);
	} else if (op->rc == -ENOENT) {
		http_reply_error(r, 404, "unknown_template", "no such template");
	} else if (op->rc == -ESTALE) {
		http_reply_error(r, 409, "template_stale", op->err);
	} else {
		http_reply_error(r, op->rc == -EINVAL ? 400 : 500,
				 op->rc == -EINVAL ? "invalid_argument" : "internal", op->err);
	}
}

void api_template_export(struct http_req *r)
{
	struct move_req *m;
	struct move_op *op;
	json_t *build;

	if (!api_authorise_route(r) || !api_template_own(r, r->route.id))
		return;
	build = template_build_json(r->gw, r->route.id);
	if (build && !strcmp(json_string_value(json_object_get(build, "status")), "building")) {
		json_decref(build);
		http_reply_error(r, 409, "template_building", "that template is being built");
		return;
	}
	json_decref(build);
	if (!(m = move_req_of(r)))
		return;
	if (!(op = calloc(1, sizeof(*op)))) {
		http_reply_error(r, 500, "internal", "out of memory");
		return;
	}
	snprintf(op->name, sizeof(op->name), "%s", r->route.id);
	start(m, op);
}

static int import_sink(struct http_req *r, const void *p, size_t n)
{
	struct move_req *m = r->route_state;

	/* Refused: the rest is read and dropped, the answer waits for the end. */
	if (m->im && tpl_import_error(m->im)[0] == '\0')
		tpl_import_write(m->im, p, n);
	return 0;
}

/* Whether the file r declares (its Content-Length; a chunked body declares
 * none) fits in the templates' folder, before a byte of it is written;
 * false with err. */
static bool room_for(struct http_req *r, char *err, size_t errlen)
{
	char len[32];

	return lws_hdr_copy(r->wsi, len, sizeof(len), WSI_TOKEN_HTTP_CONTENT_LENGTH) <= 0 ||
	       space_check(vmm_templates_dir(), strtoull(len, NULL, 10), "importing this file", err,
			   errlen) == 0;
}

void api_template_import_begin(struct http_req *r)
{
	/* http_query's buffer holds "name=" too; one more byte than a name
	 * may have tells a long one */
	char name[sizeof("name=") + VMM_TEMPLATE_NAME_MAX + 1], err[512];
	struct move_req *m;
	json_t *build;
	int rc;

	if (!api_authorise_route(r)) {
		r->close_after = true;
		return;
	}
	if (!http_query(r, "name=", name, sizeof(name)) || !vmm_template_name_ok(name)) {
		r->close_after = true;
		http_reply_error(r, 400, "invalid_argument",
				 "?name= must be a template name (1-63 of a-z, 0-9, '_', '-')");
		return;
	}
	if (!(m = move_req_of(r))) {
		r->close_after = true;
		return;
	}
	if (!room_for(r, err, sizeof(err))) {
		r->close_after = true;
		http_reply_error(r, 507, "insufficient_storage", err);
		return;
	}
	if ((build = template_build_json(r->gw, name))) /* being built, or failed */
		rc = -EEXIST;
	else
		rc = tpl_import_begin(name, &m->im, err, sizeof(err));
	json_decref(build);
	if (rc < 0) {
		r->close_after = true;
		http_reply_error(r,
				 rc == -EEXIST	 ? 409
				 : rc == -EINVAL ? 400
						 : 500,
				 rc == -EEXIST	 ? "template_exists"
				 : rc == -EINVAL ? "invalid_argument"
						 : "internal",
				 rc == -EEXIST ? "a template of that name exists" : err);
		return;
	}
	r->body_sink = import_sink;
}

void api_template_import(struct http_req *r)
{
	struct move_req *m = r->route_state;
	struct move_op *op;

	if (!m || !m->im) { /* no body came: nothing was begun */
		api_template_import_begin(r);
		if (r->have_response || !(m = r->route_state) || !m->im)
			return;
	}
	if (tpl_import_error(m->im)[0]) {
		/* A write that found the disk full is no fault of the file's. */
		if (strstr(tpl_import_error(m->im), strerror(ENOSPC)))
			http_reply_error(r, 507, "insufficient_storage", tpl_import_error(m->im));
		else
			http_reply_error(r, 400, "invalid_archive", tpl_import_error(m->im));
		tpl_import_free(m->im);
		m->im = NULL;
		return;
	}
	if (!(op = calloc(1, sizeof(*op)))) {
		http_reply_error(r, 500, "internal", "out of memory");
		return;
	}
	snprintf(op->name, sizeof(op->name), "%s", tpl_import_name(m->im));
	op->im = m->im;
	m->im = NULL;
	start(m, op);
}
