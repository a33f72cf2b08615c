/* gateway/session/template_build.c: see template_build.h. */
#include "gateway/session/template_build.h"

#include "common/fsutil.h"
#include "common/log.h"
#include "gateway/session/session.h"
#include "vmm-qemu/template_create.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct build {
	struct build *next; /* gw::builds */
	char name[65];
	struct vmm_template_params p; /* strings below */
	char image[64], url[VMM_MAX_URL + 1], page_file[PATH_MAX];
	int memory_mib; /* counted against the budget while building */
	int64_t started_ms;
	volatile sig_atomic_t cancel;
	atomic_int done; /* set by the thread */
	int rc;
	char err[1024];
	struct lws_context *ctx;
};

static struct build *find(struct gw *gw, const char *name)
{
	for (struct build *b = gw->builds; b; b = b->next)
		if (!strcmp(b->name, name))
			return b;
	return NULL;
}

static void *build_thread(void *arg)
{
	struct build *b = arg;

	b->rc = vmm_template_create(b->name, &b->p, &b->cancel, b->err, sizeof(b->err));
	if (b->page_file[0])
		unlink(b->page_file);
	atomic_store(&b->done, 1);
	if (!b->cancel) /* cancelled: the gateway is going, maybe its context too */
		lws_cancel_service(b->ctx);
	return NULL;
}

/* Notes builds that ended: the successful ones are forgotten (the template
 * answers for itself), failed ones stay to say why. */
static void reap(struct gw *gw)
{
	for (struct build **pp = &gw->builds; *pp;) {
		struct build *b = *pp;

		if (!atomic_load(&b->done) || b->memory_mib == 0) {
			pp = &b->next;
			continue;
		}
		gw->memory_used_mib -= b->memory_mib;
		b->memory_mib = 0;
		if (b->rc == 0) {
			log_info("template", "%s built in %.1f s", b->name,
				 (fs_now_ms() - b->started_ms) / 1000.0);
			*pp = b->next;
			free(b);
			continue;
		}
		log_warn("template", "%s failed: %s", b->name, b->err);
		pp = &b->next;
	}
}

int template_build_start(struct gw *gw, const char *name, const struct session_request *req,
			 struct api_error *e)
{
	char path[PATH_MAX], err[256];
	struct vmm_image img;
	struct build *b, *old;
	struct stat st;
	pthread_attr_t attr;
	pthread_t t;
	int rc, memory;

	reap(gw);
	old = find(gw, name);
	snprintf(path, sizeof(path), "%s/%s/template.json", vmm_templates_dir(), name);
	if ((old && !atomic_load(&old->done)) || stat(path, &st) == 0)
		return api_error_set(e, 409, "template_exists",
				     old && !atomic_load(&old->done)
					     ? "that template is being built"
					     : "that template exists: delete it first");
	rc = vmm_image_load(req->image, &img, err, sizeof(err));
	if (rc < 0) {
		api_error_set(e, rc == -ENOENT ? 404 : 500,
			      rc == -ENOENT ? "unknown_image" : "internal", err);
		return rc;
	}
	memory = req->memory_mib ? req->memory_mib : img.rootfs[0] ? 2048 : 256;
	rc = sess_check_resources(gw, req->vcpus ? req->vcpus : 2, memory, e);
	if (rc < 0)
		return rc;
	if (old) { /* a failed build of the same name: forget it */
		template_build_forget(gw, name);
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return api_error_set(e, 500, "internal", "out of memory");
	snprintf(b->name, sizeof(b->name), "%s", name);
	snprintf(b->image, sizeof(b->image), "%s", req->image);
	snprintf(b->url, sizeof(b->url), "%s", req->url);
	b->p.image = b->image;
	b->p.url = b->url[0] ? b->url : NULL;
	b->p.width = req->width;
	b->p.height = req->height;
	b->p.vcpus = req->vcpus;
	b->p.memory_mib = req->memory_mib;
	b->p.settle_s = -1;
	if (req->page) {
		/* Where only we can write (as a session's page: session.c), not
		 * under a name in /tmp that anyone could have linked elsewhere;
		 * a failed build's leftover of the same name goes first. */
		if ((size_t)snprintf(b->page_file, sizeof(b->page_file), "%s/pages/tpl-%s.html",
				     vmm_run_base(NULL), name) >= sizeof(b->page_file) ||
		    (unlink(b->page_file) < 0 && errno != ENOENT) ||
		    fs_write_file_private(b->page_file, req->page, strlen(req->page)) < 0) {
			free(b);
			return api_error_set(e, 500, "internal", "cannot stage the page");
		}
		b->p.page_file = b->page_file;
	}
	b->memory_mib = memory;
	b->started_ms = fs_now_ms();
	b->ctx = gw->ctx;
	pthread_attr_init(&attr);
	rc = pthread_create(&t, &attr, build_thread, b);
	pthread_attr_destroy(&attr);
	if (rc) {
		if (b->page_file[0])
			unlink(b->page_file);
		free(b);
		return api_error_set(e, 500, "internal", "cannot start a thread");
	}
	pthread_detach(t);
	gw->memory_used_mib += memory;
	b->next = gw->builds;
	gw->builds = b;
	log_info("template", "%s: building from %s", name, req->image);
	return 0;
}

json_t *template_build_json(struct gw *gw, const char *name)
{
	struct build *b;

	reap(gw);
	b = find(gw, name);
	if (!b)
		return NULL;
	return json_pack("{s:s, s:s, s:s, s:s*, s:I}", "name", b->name, "image", b->image, "status",
			 atomic_load(&b->done) ? "failed" : "building", "error",
			 atomic_load(&b->done) ? b->err : NULL, "age_ms",
			 (json_int_t)(fs_now_ms() - b->started_ms));
}

void template_build_list(struct gw *gw, json_t *a)
{
	reap(gw);
	for (struct build *b = gw->builds; b; b = b->next)
		json_array_append_new(a, template_build_json(gw, b->name));
}

void template_build_forget(struct gw *gw, const char *name)
{
	for (struct build **pp = &gw->builds; *pp; pp = &(*pp)->next)
		if (!strcmp((*pp)->name, name) && atomic_load(&(*pp)->done)) {
			struct build *b = *pp;

			*pp = b->next;
			if (b->memory_mib)
				gw->memory_used_mib -= b->memory_mib;
			free(b);
			return;
		}
}

void template_build_stop_all(struct gw *gw, int timeout_ms)
{
	int64_t until = fs_now_ms() + timeout_ms;
	bool running = true;

	for (struct build *b = gw->builds; b; b = b->next)
		b->cancel = 1;
	while (running && fs_now_ms() < until) {
		running = false;
		for (struct build *b = gw->builds; b; b = b->next)
			running |= !atomic_load(&b->done);
		if (running)
			usleep(20 * 1000);
	}
	if (running) {
		log_warn("template", "a template build is still running at exit");
		return; /* its thread still uses its build: leak it */
	}
	while (gw->builds) {
		struct build *b = gw->builds;

		gw->builds = b->next;
		free(b);
	}
}
