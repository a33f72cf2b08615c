/* gateway/template/recipe_build.c: see recipe_build.h. A build is a small
 * machine on the loop: starting (the session boots or restores; its timer
 * looks), a step at a time (an exec job each, whose completion starts the
 * next), saving (its timer looks)
 * (template_build_from_session under the staging name), finishing (a job
 * of the gateway's bulk queue: the hash into template.json, the old
 * template out, the staged one renamed over it; its done ends the build),
 * then over. fail() is the one place a build goes wrong:
 * it ends what runs and deletes what was made. */
#include "gateway/template/recipe_build.h"

#include "common/fsutil.h"
#include "common/log.h"
#include "common/utf8.h"
#include "common/work_queue.h"
#include "gateway/guest/exec.h"
#include "gateway/session/session.h"
#include "gateway/template/recipe.h"
#include "gateway/template/template_build.h"
#include "vmm-qemu/snapshot.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TICK_US (50 * 1000)
#define OUTPUT_TAIL 8192 /* of each stream of each step, kept for the API */

enum rb_state { RB_STARTING, RB_STEP, RB_SAVING, RB_FINISHING, RB_OVER };

struct step_result {
	const char *status; /* "pending", "running", "ok", "failed" */
	int64_t started_ms, ms;
	bool exited;
	int exit_code, signal;
	char *out, *err; /* owned: the output's last OUTPUT_TAIL bytes, as text */
	uint64_t out_bytes, err_bytes; /* what each stream sent in all */
};

struct recipe_build {
	struct recipe_build *next; /* gw::recipes */
	struct gw *gw;
	char name[VMM_TEMPLATE_NAME_MAX + 1];
	char stage[VMM_TEMPLATE_NAME_MAX + 1]; /* the template made before it is renamed */
	char hash[SHA256_HEX_LEN + 1];
	struct recipe recipe; /* owned */
	enum rb_state state;
	bool failed;
	char err[1024];
	char session_id[SESS_ID_MAX]; /* "" once it is gone */
	int step; /* the one running (RB_STEP) */
	struct exec_job *job; /* owned while it runs */
	struct step_result results[RECIPE_MAX_STEPS];
	int64_t started_ms, phase_ms, ended_ms;
	lws_sorted_usec_list_t sul; /* while starting and saving */
	bool stopping; /* the gateway stops: the finishing job's done frees b */
	/* the finishing job's (a worker's between its submit and its done) */
	int fin_rc;
	char fin_err[1024]; /* set by the loop before it starts when it must fail */
};

static void tick(lws_sorted_usec_list_t *sul);
static void step_done(struct exec_job *j, void *ud);

static struct recipe_build *find(struct gw *gw, const char *name)
{
	for (struct recipe_build *b = gw->recipes; b; b = b->next)
		if (!strcmp(b->name, name))
			return b;
	return NULL;
}

static void build_free(struct recipe_build *b)
{
	lws_sul_cancel(&b->sul);
	exec_release(b->job);
	recipe_free(&b->recipe);
	for (int i = 0; i < RECIPE_MAX_STEPS; i++) {
		free(b->results[i].out);
		free(b->results[i].err);
	}
	free(b);
}

static void schedule(struct recipe_build *b)
{
	lws_sul_schedule(b->gw->ctx, 0, &b->sul, tick, TICK_US);
}

static void enter(struct recipe_build *b, enum rb_state st)
{
	b->state = st;
	b->phase_ms = fs_now_ms();
}

/* n bytes of output as JSON-safe text: its last OUTPUT_TAIL bytes, stray
 * bytes and NULs as '?'. NULL when there is none (or out of memory). */
static char *tail_text(const char *data, size_t n)
{
	size_t skip = n > OUTPUT_TAIL ? n - OUTPUT_TAIL : 0;
	char *t;

	if (!data || n == 0)
		return NULL;
	t = malloc(n - skip + 1);
	if (!t)
		return NULL;
	for (size_t i = skip; i < n; i++)
		t[i - skip] = data[i] ? data[i] : '?';
	t[n - skip] = '\0';
	utf8_scrub(t);
	return t;
}

/* A running (or ended) step's stream so far (1 stdout, 2 stderr), as
 * tail_text has it; what it sent in all into *total. */
static char *job_text(struct exec_job *job, int stream, uint64_t *total)
{
	char buf[OUTPUT_TAIL];
	size_t n = exec_output(job, stream, buf, sizeof(buf), total);

	return tail_text(buf, n);
}

/* The step that ran (or runs) ends: its output's last bytes and counts
 * kept in its result. */
static void note_output(struct recipe_build *b)
{
	struct step_result *res = &b->results[b->step];

	res->ms = fs_now_ms() - res->started_ms;
	free(res->out);
	free(res->err);
	res->out = job_text(b->job, 1, &res->out_bytes);
	res->err = job_text(b->job, 2, &res->err_bytes);
}

/* The one way a build fails: what runs ends, what was made goes (the
 * session and its guest; a staged template is the finishing job's to
 * remove, a template build's its own), and err stays for GET. */
static void fail(struct recipe_build *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void fail(struct recipe_build *b, const char *fmt, ...)
{
	struct sess *s = b->session_id[0] ? sess_find(b->gw, b->session_id) : NULL;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(b->err, sizeof(b->err), fmt, ap);
	va_end(ap);
	utf8_scrub(b->err);
	b->failed = true;
	if (b->job) {
		if (b->state == RB_STEP && !strcmp(b->results[b->step].status, "running"))
			note_output(b); /* what it printed until now */
		exec_release(b->job);
		b->job = NULL;
		if (b->state == RB_STEP)
			b->results[b->step].status = "failed";
	}
	if (s)
		sess_destroy(s, NULL);
	b->session_id[0] = '\0';
	template_build_forget(b->gw, b->stage);
	enter(b, RB_OVER);
	b->ended_ms = fs_now_ms();
	lws_sul_cancel(&b->sul);
	log_warn("template", "%s: recipe build failed: %s", b->name, b->err);
}

/* The last line or so of a step's output, for the build's error. */
static const char *gist(const struct step_result *r)
{
	const char *t = r->err && r->err[0] ? r->err : r->out ? r->out : "";
	size_t n = strlen(t);

	return n > 400 ? t + n - 400 : t;
}

static int start_step(struct recipe_build *b, struct sess *s)
{
	struct step_result *res = &b->results[b->step];
	struct api_error e;
	char *text = json_dumps(b->recipe.steps[b->step].exec, JSON_COMPACT);

	b->job = text ? exec_parse(text, strlen(text), &e) : NULL;
	free(text);
	if (b->job && exec_watch(b->job, OUTPUT_TAIL) < 0) {
		exec_free(b->job);
		b->job = NULL;
	}
	if (!b->job) {
		fail(b, "step %d (%s): cannot be run", b->step + 1, b->recipe.steps[b->step].name);
		return -EINVAL;
	}
	if (exec_start(b->job, b->gw, sess_agent_of(s), step_done, b) < 0) {
		exec_free(b->job);
		b->job = NULL;
		fail(b, "step %d (%s): cannot be started", b->step + 1,
		     b->recipe.steps[b->step].name);
		return -EAGAIN;
	}
	res->status = "running";
	res->started_ms = fs_now_ms();
	log_info("template", "%s: step %d/%d: %s", b->name, b->step + 1, b->recipe.n_steps,
		 b->recipe.steps[b->step].name);
	return 0;
}

static void start_save(struct recipe_build *b, struct sess *s)
{
	struct api_error e;

	enter(b, RB_SAVING);
	if (template_build_from_session(b->gw, b->stage, s, &e) < 0)
		fail(b, "saving the session: %s", e.message);
}

/* The step that ran has ended: noted, then the next one, or the save. */
static void step_ended(struct recipe_build *b, struct sess *s)
{
	struct step_result *res = &b->results[b->step];
	const struct agent_exec_result *out;
	const char *why;
	int rc = exec_result(b->job, &out, &why);

	note_output(b);
	if (rc == 0 && !out->timed_out) {
		res->exited = true;
		res->exit_code = out->exit_code;
		res->signal = out->signal;
	}
	if (rc < 0 || out->timed_out || out->signal || out->exit_code != 0) {
		char how[600];

		if (rc == -ETIMEDOUT || out->timed_out)
			snprintf(how, sizeof(how), "timed out");
		else if (rc < 0)
			snprintf(how, sizeof(how), "did not run: %s", why);
		else if (out->signal)
			snprintf(how, sizeof(how), "was killed by signal %d", out->signal);
		else
			snprintf(how, sizeof(how), "exited with status %d", out->exit_code);
		res->status = "failed";
		fail(b, "step %d (%s) %s%s%s", b->step + 1, b->recipe.steps[b->step].name, how,
		     gist(res)[0] ? ": " : "", gist(res));
		return;
	}
	res->status = "ok";
	exec_release(b->job);
	b->job = NULL;
	if (++b->step < b->recipe.n_steps)
		start_step(b, s);
	else
		start_save(b, s);
}

/* Whether a template other than skip has name as its disk's backing file
 * (its name into who). Reads the templates' small files: the finishing job's. */
static bool backs_another(const char *name, const char *skip, char *who, size_t len)
{
	DIR *d = opendir(vmm_templates_dir());
	struct dirent *de;
	bool found = false;

	while (d && !found && (de = readdir(d))) {
		struct vmm_template t;
		char err[512];
		int rc;

		if (de->d_name[0] == '.' || !strcmp(de->d_name, skip))
			continue;
		rc = vmm_template_load(de->d_name, &t, err, sizeof(err));
		if ((rc == 0 || rc == -ESTALE) && !strcmp(t.backing, name)) {
			snprintf(who, len, "%.*s", (int)(len ? len - 1 : 0), de->d_name);
			found = true;
		}
	}
	if (d)
		closedir(d);
	return found;
}

/* The finishing job's work (a worker's): the hash into the staged
 * template's template.json, the template it replaces removed, the staged
 * one renamed to its name. On failure the staged template goes too. */
static void finish_work(void *ud, void *ctx)
{
	struct recipe_build *b = ud;
	char dir[PATH_MAX], stage[PATH_MAX], meta[PATH_MAX + 16], who[128], old[SHA256_HEX_LEN + 1];
	json_t *j = NULL;
	char *text = NULL;
	int rc = 0;

	(void)ctx;
	snprintf(dir, sizeof(dir), "%s/%s", vmm_templates_dir(), b->name);
	snprintf(stage, sizeof(stage), "%s/%s", vmm_templates_dir(), b->stage);
	snprintf(meta, sizeof(meta), "%s/template.json", stage);
	if (b->fin_err[0])
		rc = -EBUSY; /* the loop found the old one in use */
	else if (!(j = json_load_file(meta, 0, NULL)) ||
		 json_object_set_new(j, "recipe_hash", json_string(b->hash)) < 0 ||
		 !(text = json_dumps(j, JSON_INDENT(2)))) {
		rc = -EIO;
		snprintf(b->fin_err, sizeof(b->fin_err), "cannot read %.400s", meta);
	} else if ((rc = fs_write_file_atomic(meta, text, strlen(text), 0644)) < 0) {
		snprintf(b->fin_err, sizeof(b->fin_err), "cannot write %.400s: %s", meta,
			 strerror(-rc));
	}
	if (rc == 0) {
		int had = recipe_template_hash(b->name, old, sizeof(old));

		if (had == -ENODATA) {
			rc = -EEXIST;
			snprintf(b->fin_err, sizeof(b->fin_err),
				 "template %s was made meanwhile, not from a recipe", b->name);
		} else if (had == 0 && backs_another(b->name, b->stage, who, sizeof(who))) {
			rc = -EBUSY;
			snprintf(b->fin_err, sizeof(b->fin_err),
				 "template %s is made on the old %s (its disk's backing file): "
				 "delete it first",
				 who, b->name);
		} else if (had == 0 && (rc = fs_rm_rf(dir)) < 0) {
			snprintf(b->fin_err, sizeof(b->fin_err), "cannot remove the old %.400s: %s",
				 dir, strerror(-rc));
		}
	}
	if (rc == 0 && rename(stage, dir) < 0) {
		rc = -errno;
		snprintf(b->fin_err, sizeof(b->fin_err), "rename %.400s to %.400s: %s", stage, dir,
			 strerror(errno));
	}
	if (rc < 0)
		fs_rm_rf(stage);
	json_decref(j);
	free(text);
	b->fin_rc = rc;
}

static void succeed(struct recipe_build *b);

/* Removes the staged template from the loop itself: rare (the finishing
 * job could not be queued, or the gateway stopped before it ran). */
static void remove_stage(struct recipe_build *b)
{
	char stage[PATH_MAX];

	snprintf(stage, sizeof(stage), "%s/%s", vmm_templates_dir(), b->stage);
	fs_rm_rf(stage);
}

static void unlink_build(struct recipe_build *b)
{
	struct recipe_build **pp;

	for (pp = &b->gw->recipes; *pp != b; pp = &(*pp)->next)
		;
	*pp = b->next;
}

/* The finishing job's done (the loop's): the build succeeds or fails. */
static void finish_done(void *ud, int status)
{
	struct recipe_build *b = ud;

	if (status < 0) {
		remove_stage(b);
		b->fin_rc = -ECANCELED;
		snprintf(b->fin_err, sizeof(b->fin_err), "cancelled: the gateway stopped");
	}
	if (b->fin_rc == 0) {
		succeed(b); /* b is gone */
		return;
	}
	fail(b, "%s", b->fin_err);
	if (b->stopping) {
		unlink_build(b);
		build_free(b);
	}
}

/* The staged template is made: the session goes, the files are moved (or,
 * when a session runs from the template it replaces, the staged one is
 * removed: the finishing job's work either way). */
static void start_finish(struct recipe_build *b)
{
	struct sess *s = sess_find(b->gw, b->session_id);

	if (s)
		sess_destroy(s, NULL);
	b->session_id[0] = '\0';
	for (s = sess_first(b->gw); s && !b->fin_err[0]; s = sess_next(s))
		if (!strcmp(sess_template(s), b->name))
			snprintf(b->fin_err, sizeof(b->fin_err),
				 "session %s runs from the old %s: delete it first", sess_id(s),
				 b->name);
	enter(b, RB_FINISHING);
	lws_sul_cancel(&b->sul); /* the job's done moves the build on */
	if (work_queue_submit(b->gw->bulk_work, NULL, finish_work, finish_done, b) < 0) {
		remove_stage(b);
		fail(b, "cannot queue its finishing: too many templates and videos are being "
			"made");
	}
}

/* Success: the template answers for itself from now on. */
static void succeed(struct recipe_build *b)
{
	log_info("template", "%s: built from its recipe in %.1f s (%d steps)", b->name,
		 (fs_now_ms() - b->started_ms) / 1000.0, b->recipe.n_steps);
	unlink_build(b);
	build_free(b);
}

static void tick(lws_sorted_usec_list_t *sul)
{
	struct recipe_build *b = lws_container_of(sul, struct recipe_build, sul);
	struct sess *s = b->session_id[0] ? sess_find(b->gw, b->session_id) : NULL;
	json_t *save;

	switch (b->state) {
	case RB_STARTING:
		if (!s) {
			fail(b, "the build's session was deleted");
			return;
		}
		if (sess_state_of(s) == SESS_FAILED) {
			fail(b, "the build's session failed: %s", sess_error(s));
			return;
		}
		if (!sess_guest_free(s) || !sess_agent_of(s))
			break;
		enter(b, RB_STEP);
		if (b->recipe.n_steps == 0)
			start_save(b, s);
		else
			start_step(b, s);
		break;
	case RB_SAVING:
		save = template_build_json(b->gw, b->stage);
		if (!save) {
			start_finish(b);
		} else if (!strcmp(json_string_value(json_object_get(save, "status")), "failed")) {
			fail(b, "saving the session: %s",
			     json_string_value(json_object_get(save, "error")));
		}
		json_decref(save);
		break;
	case RB_STEP: /* each step's completion moves it on */
	case RB_FINISHING: /* the finishing job's done moves it on */
	case RB_OVER:
		return;
	}
	if (b->state == RB_STARTING || b->state == RB_SAVING)
		schedule(b);
}

/* A step's command ended (its completion, on the loop): the next step, the
 * save (its timer looks from then on), or the build fails. */
static void step_done(struct exec_job *j, void *ud)
{
	struct recipe_build *b = ud;
	struct sess *s = b->session_id[0] ? sess_find(b->gw, b->session_id) : NULL;

	(void)j;
	if (!s) {
		fail(b, "the build's session was deleted during step %d (%s)", b->step + 1,
		     b->recipe.steps[b->step].name);
		return;
	}
	step_ended(b, s);
	if (b->state == RB_SAVING)
		schedule(b);
}

int recipe_template_hash(const char *name, char *out, size_t len)
{
	char path[PATH_MAX];
	const char *h;
	json_t *j;
	int rc = -ENODATA;

	snprintf(path, sizeof(path), "%s/%s/template.json", vmm_templates_dir(), name);
	j = json_load_file(path, 0, NULL);
	if (!j)
		return access(path, F_OK) == 0 ? -ENODATA : -ENOENT;
	h = json_string_value(json_object_get(j, "recipe_hash"));
	if (h && strlen(h) == SHA256_HEX_LEN) {
		snprintf(out, len, "%s", h);
		rc = 0;
	}
	json_decref(j);
	return rc;
}

/* What the base is, for the hash: its image's build, or its template's
 * making (and recipe). 0, or -errno with *e (404, 409 stale). */
static int base_id(const struct recipe *r, char *out, size_t len, struct api_error *e)
{
	bool is_template;
	const char *name = recipe_base(r, &is_template);
	char err[1024];

	if (is_template) {
		struct vmm_template t;
		char h[SHA256_HEX_LEN + 1] = "";
		int rc = vmm_template_load(name, &t, err, sizeof(err));

		if (rc == -ENOENT)
			return api_error_set(e, 404, "unknown_template", err), rc;
		if (rc == -ESTALE)
			return api_error_set(e, 409, "template_stale", err), rc;
		if (rc < 0)
			return api_error_set(e, 500, "internal", err), rc;
		recipe_template_hash(name, h, sizeof(h));
		snprintf(out, len, "template %s %lld %s %s %s", name, (long long)t.created_at,
			 t.image, t.image_recipe, h);
	} else {
		struct vmm_image img;
		int rc = vmm_image_load(name, &img, err, sizeof(err));

		if (rc < 0)
			return api_error_set(e, rc == -ENOENT ? 404 : 500,
					     rc == -ENOENT ? "unknown_image" : "internal", err),
			       rc;
		snprintf(out, len, "image %s %s", name, img.recipe);
	}
	return 0;
}

/* 409 when name (or its staging name) is taken in a way a recipe build
 * may not replace; 1 when it is up to date. */
static int check_names(struct gw *gw, const char *name, const char *stage, const char *hash,
		       struct api_error *e)
{
	char have[SHA256_HEX_LEN + 1], msg[256];
	json_t *j;
	int rc;

	if ((j = template_build_json(gw, name)) || (j = template_build_json(gw, stage))) {
		bool building = !strcmp(json_string_value(json_object_get(j, "status")),
					"building");

		json_decref(j);
		if (building)
			return api_error_set(e, 409, "template_exists",
					     "that template is being built");
	}
	rc = recipe_template_hash(name, have, sizeof(have));
	if (rc == 0 && !strcmp(have, hash))
		return 1;
	if (rc == -ENODATA)
		return api_error_set(e, 409, "template_exists",
				     "that template exists and was not made from a recipe: "
				     "delete it first");
	if (recipe_template_hash(stage, have, sizeof(have)) != -ENOENT) {
		snprintf(msg, sizeof(msg),
			 "template %s (a recipe build's staging name) exists: delete it first",
			 stage);
		return api_error_set(e, 409, "template_exists", msg);
	}
	for (struct sess *s = sess_first(gw); rc == 0 && s; s = sess_next(s))
		if (!strcmp(sess_template(s), name)) {
			snprintf(msg, sizeof(msg),
				 "its recipe changed, but session %s runs from this template: "
				 "delete it first",
				 sess_id(s));
			return api_error_set(e, 409, "template_in_use", msg);
		}
	return 0;
}

int recipe_build_start(struct gw *gw, const char *name, json_t *recipe, const char *project,
		       struct api_error *e)
{
	struct session_request req;
	struct recipe_build *b, *old;
	char base[512], *text;
	bool is_template;
	struct sess *s;
	int rc;

	if (!vmm_template_name_ok(name) || strlen(name) > RECIPE_NAME_MAX)
		return api_error_set(e, 400, "invalid_argument",
				     "name must be 1..55 of lowercase letters, digits, '_' or '-' "
				     "(a recipe's template is staged under NAME--next)");
	old = find(gw, name);
	if (old && old->state != RB_OVER)
		return api_error_set(e, 409, "template_exists", "that template is being built");
	b = calloc(1, sizeof(*b));
	if (!b)
		return api_error_set(e, 500, "internal", "out of memory");
	b->gw = gw;
	snprintf(b->name, sizeof(b->name), "%s", name);
	snprintf(b->stage, sizeof(b->stage), "%s" RECIPE_STAGE_SUFFIX, name);
	if ((rc = recipe_parse(recipe, &b->recipe, e)) < 0 ||
	    (rc = base_id(&b->recipe, base, sizeof(base), e)) < 0)
		goto bad;
	if (!strcmp(recipe_base(&b->recipe, &is_template), name) && is_template) {
		rc = api_error_set(e, 400, "invalid_argument",
				   "a recipe cannot be built on the template it makes");
		goto bad;
	}
	recipe_hash(&b->recipe, base, b->hash);
	if ((rc = check_names(gw, name, b->stage, b->hash, e)) != 0)
		goto bad;
	text = json_dumps(b->recipe.session, JSON_COMPACT);
	rc = text ? session_request_parse(text, strlen(text), &req, e)
		  : api_error_set(e, 500, "internal", "out of memory");
	free(text);
	if (rc < 0)
		goto bad;
	snprintf(req.project, sizeof(req.project), "%s", project ? project : "");
	rc = sess_create(gw, &req, &s, e);
	session_request_free(&req);
	if (rc < 0)
		goto bad;
	if (old)
		recipe_build_forget(gw, name);
	snprintf(b->session_id, sizeof(b->session_id), "%s", sess_id(s));
	for (int i = 0; i < b->recipe.n_steps; i++)
		b->results[i].status = "pending";
	b->started_ms = fs_now_ms();
	enter(b, RB_STARTING);
	b->next = gw->recipes;
	gw->recipes = b;
	schedule(b);
	log_info("template", "%s: building from its recipe (%d steps) in session %s", name,
		 b->recipe.n_steps, sess_id(s));
	return 0;
bad:
	build_free(b);
	return rc;
}

static const char *phase_name(const struct recipe_build *b)
{
	switch (b->state) {
	case RB_STARTING:
		return "starting_session";
	case RB_STEP:
		return "running_steps";
	case RB_SAVING:
		return "saving_state";
	case RB_FINISHING:
		return "finishing";
	case RB_OVER:
		break;
	}
	return b->failed ? "failed" : "ready";
}

static json_t *step_json(const struct recipe_build *b, int i)
{
	const struct step_result *r = &b->results[i];
	const char *status = r->status ? r->status : "pending";
	json_t *o = json_pack("{s:s, s:s, s:s}", "name", b->recipe.steps[i].name, "kind",
			      b->recipe.steps[i].kind == RECIPE_STEP_COPY ? "copy" : "run",
			      "status", status);

	if (!o)
		return NULL;
	if (!strcmp(status, "running") && b->job && b->step == i) {
		/* Its output so far: the agent link's, copied under the job's lock. */
		uint64_t out_bytes, err_bytes;
		char *out = job_text(b->job, 1, &out_bytes), *err = job_text(b->job, 2, &err_bytes);

		json_object_set_new(o, "ms", json_integer(fs_now_ms() - r->started_ms));
		if (out)
			json_object_set_new(o, "stdout", json_string(out));
		if (err)
			json_object_set_new(o, "stderr", json_string(err));
		json_object_set_new(o, "stdout_bytes", json_integer((json_int_t)out_bytes));
		json_object_set_new(o, "stderr_bytes", json_integer((json_int_t)err_bytes));
		free(out);
		free(err);
		return o;
	}
	if (strcmp(status, "pending"))
		json_object_set_new(o, "ms", json_integer(r->ms));
	if (r->exited)
		json_object_set_new(o, "exit_code", json_integer(r->exit_code));
	if (r->signal)
		json_object_set_new(o, "signal", json_integer(r->signal));
	if (r->out)
		json_object_set_new(o, "stdout", json_string(r->out));
	if (r->err)
		json_object_set_new(o, "stderr", json_string(r->err));
	if (strcmp(status, "pending")) {
		json_object_set_new(o, "stdout_bytes", json_integer((json_int_t)r->out_bytes));
		json_object_set_new(o, "stderr_bytes", json_integer((json_int_t)r->err_bytes));
	}
	return o;
}

json_t *recipe_build_json(struct gw *gw, const char *name)
{
	struct recipe_build *b = find(gw, name);
	int64_t now = fs_now_ms(), end = b && b->ended_ms ? b->ended_ms : now;
	json_t *o, *steps;

	if (!b)
		return NULL;
	steps = json_array();
	for (int i = 0; steps && i < b->recipe.n_steps; i++)
		json_array_append_new(steps, step_json(b, i));
	o = json_pack("{s:s, s:s, s:s*, s:I, s:s, s:s*, s:{s:s, s:I, s:I}, s:o*}", "name", b->name,
		      "status", b->failed ? "failed" : "building", "error",
		      b->failed ? b->err : NULL, "age_ms", (json_int_t)(now - b->started_ms),
		      "recipe_hash", b->hash, "session", b->session_id[0] ? b->session_id : NULL,
		      "build", "phase", phase_name(b), "phase_ms", (json_int_t)(end - b->phase_ms),
		      "elapsed_ms", (json_int_t)(end - b->started_ms), "steps", steps);
	if (o && b->state == RB_SAVING) {
		json_t *save = template_build_json(gw, b->stage);

		if (save)
			json_object_set_new(o, "save", save);
	}
	return o;
}

void recipe_build_list(struct gw *gw, json_t *a)
{
	for (struct recipe_build *b = gw->recipes; b; b = b->next)
		json_array_append_new(a, recipe_build_json(gw, b->name));
}

bool recipe_build_running(struct gw *gw, const char *name)
{
	struct recipe_build *b = find(gw, name);

	return b && b->state != RB_OVER;
}

void recipe_build_forget(struct gw *gw, const char *name)
{
	for (struct recipe_build **pp = &gw->recipes; *pp; pp = &(*pp)->next)
		if (!strcmp((*pp)->name, name) && (*pp)->state == RB_OVER) {
			struct recipe_build *b = *pp;

			*pp = b->next;
			build_free(b);
			return;
		}
}

void recipe_build_stop_all(struct gw *gw)
{
	for (struct recipe_build *b = gw->recipes, *next; b; b = next) {
		next = b->next;
		if (b->state == RB_FINISHING) {
			b->stopping = true; /* its job's done frees it */
			continue;
		}
		if (b->state != RB_OVER)
			fail(b, "cancelled: the gateway stopped");
		unlink_build(b);
		build_free(b);
	}
}
