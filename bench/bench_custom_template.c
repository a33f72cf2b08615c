/* bench/bench_custom_template.c: what a custom template costs and buys,
 * through the gateway, in one run (the custom-templates benchmark):
 *  - restore to ready from a custom template against from the base
 *    template it was made on, interleaved, N each (default 10): median and
 *    p90 to "ready" (POST /v1/sessions?wait=ready) and to a first click the
 *    page has seen (its mousedown handler ran, read with `vitrine-ready
 *    eval` through POST .../exec), as bench_sessions measures it; and,
 *    as a control, from the base saved again untouched after 60 s of
 *    running (the base is saved 2 s after its boot's "ready"; the custom
 *    template after a minute or more of running);
 *  - the save of a running session: POST /v1/templates {"name",
 *    "from_session"} to the template "ready", and how long the guest was
 *    stopped (the session's "saved" event);
 *  - export (bytes, time until the file is written and fsynced) and import
 *    back under another name (time to the 201);
 *  - the disk a chain of 3 templates (A from a session of the base, B from
 *    a session of A, C of B) uses against the same 3 flattened (a second
 *    gateway with --template-chain-max 1 flattens every save): st_blocks of
 *    the templates' files, not their apparent size.
 * The base template is the desktop image showing tests/e2e/pages/life.html
 * (--image tiny: the tiny image, no page, so no click check and no venv:
 * the action's 200 is the landing). The custom template is a session of
 * the base given ~6 MiB of files, a python venv and a page opened (the
 * same life.html, written to a file through exec and opened with POST
 * .../open: the restore's warm-up renders the page, so another page would
 * weigh in the ratio), then saved. Each chain link adds 2 MiB of random
 * bytes. Figures and ratios, no targets.
 * Medians of an even count are the mean of the middle two; p90 is the
 * nearest rank (the 9th of 10). Everything made (sessions, templates, the
 * export file) is removed at the end, on failure and on SIGINT too.
 *
 * usage: bench_custom_template [--image desktop|tiny] [--runs N] */
#include "common/fsutil.h"
#include "common/http_client.h"
#include "tests/lib/gateway_proc.h"
#include "tests/lib/stats.h"
#include "vmm-qemu/image.h"
#include "vmm-qemu/snapshot.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_RUNS 30
#define MAX_MADE 16
#define CONTROL_IDLE_S 60

enum { K_BASE, K_CONTROL, K_CUSTOM, KINDS }; /* the templates restored */
#define MIB (1024.0 * 1024.0)
/* The custom template's page: the base's page again, from a file the
 * session wrote, so that both restore the same page (the warm-up before
 * "ready" renders it: a page of its own would weigh in the ratio). */
#define CUSTOM_URL "file:///home/vitrine/site/index.html"

/* The customisation's commands: ~6 MiB of files (4 MiB of them random,
 * so that no layer compresses them away), a venv. */
static const char files_cmd[] =
	"set -e; mkdir -p ~/data/small; head -c 4194304 /dev/urandom > ~/data/blob.bin;"
	" seq 1 250000 > ~/data/numbers.txt;"
	" for i in $(seq 1 64); do head -c 8192 /dev/urandom > ~/data/small/f$i; done;"
	" sync; du -sk ~/data | cut -f1";
static const char venv_cmd[] =
	"set -e; python3 -m venv /home/vitrine/venv;"
	" /home/vitrine/venv/bin/python -c 'import sys; assert sys.prefix != sys.base_prefix';"
	" sync; du -sk /home/vitrine/venv | cut -f1";

static struct gateway_proc gw1, gw2; /* gw2: --template-chain-max 1 */
static char *page; /* tests/e2e/pages/life.html on the desktop */
static bool desktop = true;
static const char *image_name = "desktop";
static char prefix[32]; /* of every template this run makes */
static char made[MAX_MADE][64]; /* templates asked for, in order */
static int n_made;
static char export_file[PATH_MAX];
static volatile sig_atomic_t interrupted;

struct session {
	char id[64], ctl[64];
};

/* A template's figures. */
struct tpl {
	char name[64];
	int depth;
	long long disk, ram, total; /* bytes allocated (st_blocks) */
	long long size_bytes, chain_bytes; /* as the gateway reports them */
	double save_ms, stopped_ms; /* a save: POST to ready; the guest stopped */
};

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

static const char *str(json_t *j, const char *key)
{
	const char *s = json_string_value(json_object_get(j, key));

	return s ? s : "";
}

/* method path on g with token and body; 0 when it answers want (then r is
 * the caller's to free), else -1 after printing the answer. */
static int request(const struct gateway_proc *g, const char *token, const char *method,
		   const char *path, const char *body, int want, int timeout_s, struct http_resp *r)
{
	if (interrupted) {
		memset(r, 0, sizeof(*r));
		fprintf(stderr, "interrupted\n");
		return -1;
	}
	if (http_request("127.0.0.1", g->port, method, path, token, body, body ? strlen(body) : 0,
			 timeout_s, r) < 0 ||
	    r->status != want) {
		fprintf(stderr, "%s %s -> %d %.400s\n", method, path, r->status,
			r->body ? r->body : "");
		http_resp_free(r);
		return -1;
	}
	return 0;
}

/* The same with a JSON body, which it takes. */
static int request_json(const struct gateway_proc *g, const char *token, const char *method,
			const char *path, json_t *body, int want, int timeout_s,
			struct http_resp *r)
{
	char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	int rc = body && !text ? -1 : request(g, token, method, path, text, want, timeout_s, r);

	free(text);
	json_decref(body);
	return rc;
}

static double elapsed_ms(int64_t t0)
{
	return (double)(fs_now_ms() - t0);
}

static void remember(const char *name)
{
	if (n_made < MAX_MADE)
		snprintf(made[n_made++], sizeof(made[0]), "%s", name);
}

/* Polls GET /v1/templates/NAME (every 100 ms) until it is no longer
 * building. Returns 0 when it is ready, -1 after printing why not. */
static int wait_template(const struct gateway_proc *g, const char *name, int timeout_s)
{
	int64_t until = fs_now_ms() + (int64_t)timeout_s * 1000;
	char path[128];

	snprintf(path, sizeof(path), "/v1/templates/%s", name);
	while (fs_now_ms() < until) {
		struct http_resp r;
		const char *status;

		if (request(g, g->key, "GET", path, NULL, 200, 30, &r) < 0)
			return -1;
		status = str(r.json, "status");
		if (strcmp(status, "building")) {
			int rc = strcmp(status, "ready") ? -1 : 0;

			if (rc < 0)
				fprintf(stderr, "template %s: %s\n", name, r.body);
			http_resp_free(&r);
			return rc;
		}
		http_resp_free(&r);
		usleep(100 * 1000);
	}
	fprintf(stderr, "template %s: not ready within %d s\n", name, timeout_s);
	return -1;
}

/* The base template: the image booted (with the page on the desktop).
 * Tried twice: on a busy host a desktop's boot can miss the gateway's
 * 180 s; *ms is the attempt that made it. */
static int make_base(const char *name, double *ms)
{
	char *text, path[128];
	struct http_resp r;
	int64_t t0 = fs_now_ms();
	json_t *body = json_pack("{s:s, s:s}", "name", name, "image", image_name);
	int rc = -1;

	if (page)
		json_object_set_new(body, "page", json_string(page));
	text = json_dumps(body, JSON_COMPACT);
	json_decref(body);
	if (!text)
		return -1;
	remember(name);
	snprintf(path, sizeof(path), "/v1/templates/%s", name);
	for (int attempt = 0; rc < 0 && attempt < 2 && !interrupted; attempt++) {
		if (attempt) {
			printf("  failed; once more\n");
			fflush(stdout);
			/* Forgets the failed build (404: it left no template). */
			http_request("127.0.0.1", gw1.port, "DELETE", path, gw1.key, NULL, 0, 60,
				     &r);
			http_resp_free(&r);
		}
		t0 = fs_now_ms();
		if (request(&gw1, gw1.key, "POST", "/v1/templates", text, 202, 30, &r) < 0)
			break;
		http_resp_free(&r);
		rc = wait_template(&gw1, name, 900);
	}
	free(text);
	*ms = elapsed_ms(t0);
	return rc;
}

/* A session restored from template, ready. */
static int session_from(const struct gateway_proc *g, const char *template, struct session *s)
{
	struct http_resp r;

	if (request_json(g, g->key, "POST", "/v1/sessions?wait=ready",
			 json_pack("{s:s}", "template", template), 201, 330, &r) < 0)
		return -1;
	snprintf(s->id, sizeof(s->id), "%s", str(r.json, "id"));
	snprintf(s->ctl, sizeof(s->ctl), "%s", str(json_object_get(r.json, "tokens"), "control"));
	if (strcmp(str(r.json, "status"), "ready")) {
		fprintf(stderr, "session from %s: %s\n", template, r.body);
		http_resp_free(&r);
		return -1;
	}
	http_resp_free(&r);
	return 0;
}

static void delete_session(const struct gateway_proc *g, const struct session *s)
{
	char path[128];
	struct http_resp r;

	snprintf(path, sizeof(path), "/v1/sessions/%s", s->id);
	http_request("127.0.0.1", g->port, "DELETE", path, g->key, NULL, 0, 60, &r);
	http_resp_free(&r);
}

/* Runs cmd (sh -c) in s as the desktop user with stdin (may be NULL).
 * Returns 0 when it exited 0, with its stdout in out (may be NULL), else
 * -1 after printing its end and stderr. */
static int exec_cmd(const struct gateway_proc *g, const struct session *s, const char *cmd,
		    const char *stdin_text, int timeout_s, char *out, size_t outlen)
{
	char path[128];
	struct http_resp r;
	json_t *body = json_pack("{s:s, s:i}", "cmd", cmd, "timeout", timeout_s), *code;

	if (stdin_text)
		json_object_set_new(body, "stdin", json_string(stdin_text));
	snprintf(path, sizeof(path), "/v1/sessions/%s/exec", s->id);
	if (request_json(g, s->ctl, "POST", path, body, 200, timeout_s + 30, &r) < 0)
		return -1;
	code = json_object_get(r.json, "exit_code");
	if (!json_is_integer(code) || json_integer_value(code) != 0) {
		fprintf(stderr, "exec '%.80s': %.600s\n", cmd, r.body);
		http_resp_free(&r);
		return -1;
	}
	if (out)
		snprintf(out, outlen, "%s", str(r.json, "stdout"));
	http_resp_free(&r);
	return 0;
}

/* Clicks in s's page; on the desktop, waits until the page's mousedown
 * handler has seen it. Returns 0 or -1. */
static int click_lands(const struct gateway_proc *g, const struct session *s)
{
	char path[128], out[64];
	struct http_resp r;

	snprintf(path, sizeof(path), "/v1/sessions/%s/actions", s->id);
	if (request(g, s->ctl, "POST", path, "{\"action\":\"left_click\",\"coordinate\":[640,500]}",
		    200, 60, &r) < 0)
		return -1;
	http_resp_free(&r);
	if (!desktop)
		return 0;
	for (int64_t until = fs_now_ms() + 120000; fs_now_ms() < until && !interrupted;) {
		if (exec_cmd(g, s, "vitrine-ready eval 9222 window.clicks.length", NULL, 20, out,
			     sizeof(out)) == 0 &&
		    atoi(out) > 0)
			return 0;
	}
	fprintf(stderr, "session %s: the page saw no click\n", s->id);
	return -1;
}

/* The session's "saved" event: how long its guest was stopped, or -1. */
static double stopped_ms(const struct gateway_proc *g, const struct session *s)
{
	char path[128];
	struct http_resp r;
	double ms = -1;
	json_t *e;
	size_t i;

	snprintf(path, sizeof(path), "/v1/sessions/%s/events", s->id);
	if (request(g, g->key, "GET", path, NULL, 200, 30, &r) < 0)
		return -1;
	json_array_foreach(json_object_get(r.json, "events"), i, e)
	{
		if (!strcmp(str(e, "type"), "saved"))
			ms = (double)json_integer_value(json_object_get(e, "ms"));
	}
	http_resp_free(&r);
	return ms;
}

/* Saves s as template name: t's save_ms (the POST to "ready") and
 * stopped_ms. Returns 0 or -1. */
static int save(const struct gateway_proc *g, const struct session *s, const char *name,
		struct tpl *t)
{
	struct http_resp r;
	int64_t t0 = fs_now_ms();

	remember(name);
	if (request_json(g, g->key, "POST", "/v1/templates",
			 json_pack("{s:s, s:s}", "name", name, "from_session", s->id), 202, 60,
			 &r) < 0)
		return -1;
	http_resp_free(&r);
	if (wait_template(g, name, 900) < 0)
		return -1;
	t->save_ms = elapsed_ms(t0);
	t->stopped_ms = stopped_ms(g, s);
	snprintf(t->name, sizeof(t->name), "%s", name);
	return 0;
}

/* The customisation: files, a venv and a page (the last two on the
 * desktop). Prints what each step took. Returns 0 or -1. */
static int customise(const struct session *s)
{
	char out[256], body[160], path[128];
	struct http_resp r;
	int64_t t0 = fs_now_ms();

	if (exec_cmd(&gw1, s, files_cmd, NULL, 120, out, sizeof(out)) < 0)
		return -1;
	printf("  files: %d KiB in ~/data in %.1f s\n", atoi(out), elapsed_ms(t0) / 1000);
	fflush(stdout);
	if (!desktop)
		return 0;
	t0 = fs_now_ms();
	if (exec_cmd(&gw1, s, venv_cmd, NULL, 600, out, sizeof(out)) < 0)
		return -1;
	printf("  python3 -m venv /home/vitrine/venv: %d KiB in %.1f s\n", atoi(out),
	       elapsed_ms(t0) / 1000);
	fflush(stdout);
	t0 = fs_now_ms();
	if (exec_cmd(&gw1, s, "mkdir -p ~/site && cat > ~/site/index.html && sync", page, 60, NULL,
		     0) < 0)
		return -1;
	snprintf(path, sizeof(path), "/v1/sessions/%s/open", s->id);
	snprintf(body, sizeof(body), "{\"url\":\"" CUSTOM_URL "\"}");
	if (request(&gw1, s->ctl, "POST", path, body, 200, 60, &r) < 0)
		return -1;
	http_resp_free(&r);
	if (exec_cmd(&gw1, s, "vitrine-ready eval 9222 location.href", NULL, 30, out, sizeof(out)) <
		    0 ||
	    !strstr(out, CUSTOM_URL)) {
		fprintf(stderr, "the page shown is %s, not " CUSTOM_URL "\n", out);
		return -1;
	}
	printf("  page written and opened (POST .../open) in %.1f s\n", elapsed_ms(t0) / 1000);
	fflush(stdout);
	return 0;
}

/* What a session restored from the custom template must have. */
static int check_custom(const struct session *s)
{
	char out[256];
	const char *cmd =
		desktop ? "test -x /home/vitrine/venv/bin/python && test -s ~/data/blob.bin &&"
			  " vitrine-ready eval 9222 location.href"
			: "test -s ~/data/blob.bin && echo ok";

	if (exec_cmd(&gw1, s, cmd, NULL, 30, out, sizeof(out)) < 0)
		return -1;
	if (desktop && !strstr(out, CUSTOM_URL)) {
		fprintf(stderr, "restored from the custom template: the page is %s\n", out);
		return -1;
	}
	return 0;
}

/* One restore from template: ms to ready (the client's clock and the
 * session's ready_ms) and to the click landing. */
static int restore_once(const char *template, bool check, double *ready, double *landed,
			double *server_ready)
{
	struct session s = { 0 };
	struct http_resp r;
	int64_t t0 = fs_now_ms();
	int rc;

	if (request_json(&gw1, gw1.key, "POST", "/v1/sessions?wait=ready",
			 json_pack("{s:s}", "template", template), 201, 330, &r) < 0)
		return -1;
	*ready = elapsed_ms(t0);
	snprintf(s.id, sizeof(s.id), "%s", str(r.json, "id"));
	snprintf(s.ctl, sizeof(s.ctl), "%s", str(json_object_get(r.json, "tokens"), "control"));
	*server_ready = (double)json_integer_value(json_object_get(r.json, "ready_ms"));
	rc = strcmp(str(r.json, "status"), "ready") ? -1 : 0;
	if (rc < 0)
		fprintf(stderr, "restore from %s: %s\n", template, r.body);
	http_resp_free(&r);
	if (rc == 0)
		rc = click_lands(&gw1, &s);
	*landed = elapsed_ms(t0);
	if (rc == 0 && check)
		rc = check_custom(&s);
	delete_session(&gw1, &s);
	return rc;
}

/* GET .../export into export_file: its bytes and the time. */
static int export_template(const char *name, long long *bytes, double *ms)
{
	char path[128];
	struct http_resp r;
	struct stat st;
	int64_t t0 = fs_now_ms();
	int fd = open(export_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), rc;

	if (fd < 0) {
		fprintf(stderr, "%s: %s\n", export_file, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "/v1/templates/%s/export", name);
	rc = http_request_fd("127.0.0.1", gw1.port, "GET", path, gw1.key, -1, 0, fd, 900, &r);
	if (rc == 0 && fsync(fd) < 0)
		rc = -errno;
	*ms = elapsed_ms(t0);
	if (rc < 0 || r.status != 200 || fstat(fd, &st) < 0) {
		fprintf(stderr, "export %s: %s, %d %.300s\n", name, strerror(-rc), r.status,
			r.body ? r.body : "");
		rc = -1;
	} else
		*bytes = (long long)st.st_size;
	http_resp_free(&r);
	close(fd);
	return rc < 0 ? -1 : 0;
}

/* POST .../import?name=NAME of export_file: the time. */
static int import_template(const char *name, double *ms)
{
	char path[128];
	struct http_resp r;
	struct stat st;
	int64_t t0 = fs_now_ms();
	int fd = open(export_file, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "%s: %s\n", export_file, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	remember(name);
	snprintf(path, sizeof(path), "/v1/templates/import?name=%s", name);
	rc = http_request_fd("127.0.0.1", gw1.port, "POST", path, gw1.key, fd, (uint64_t)st.st_size,
			     -1, 900, &r);
	*ms = elapsed_ms(t0);
	close(fd);
	if (rc < 0 || r.status != 201) {
		fprintf(stderr, "import %s: %s, %d %.300s\n", name, strerror(-rc), r.status,
			r.body ? r.body : "");
		rc = -1;
	}
	http_resp_free(&r);
	return rc < 0 ? -1 : 0;
}

/* Bytes allocated to path (st_blocks), or 0. */
static long long blocks_of(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (long long)st.st_blocks * 512 : 0;
}

/* t's files on disk (every file in its dir), and the gateway's view of
 * it from GET /v1/templates (the list: its chain length there). */
static int measure(const struct gateway_proc *g, struct tpl *t)
{
	char dir[PATH_MAX], path[PATH_MAX + 300];
	struct http_resp r;
	struct dirent *e;
	json_t *v;
	size_t i;
	bool found = false;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/%s", vmm_templates_dir(), t->name);
	t->total = 0;
	if (!(d = opendir(dir))) {
		fprintf(stderr, "%s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d)))
		if (e->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			t->total += blocks_of(path);
		}
	closedir(d);
	snprintf(path, sizeof(path), "%s/disk.qcow2", dir);
	t->disk = blocks_of(path);
	snprintf(path, sizeof(path), "%s/ram", dir);
	t->ram = blocks_of(path);
	if (request(g, g->key, "GET", "/v1/templates", NULL, 200, 30, &r) < 0)
		return -1;
	json_array_foreach(json_object_get(r.json, "templates"), i, v)
	{
		if (strcmp(str(v, "name"), t->name))
			continue;
		t->depth = (int)json_integer_value(json_object_get(v, "depth"));
		t->size_bytes = json_integer_value(json_object_get(v, "size_bytes"));
		t->chain_bytes = json_integer_value(json_object_get(v, "chain_bytes"));
		found = true;
	}
	http_resp_free(&r);
	if (!found)
		fprintf(stderr, "GET /v1/templates does not list %s\n", t->name);
	return found ? 0 : -1;
}

/* Three templates on g, each from a session of the one before (the first
 * of from), each session given 2 MiB of random bytes. */
static int chain(const struct gateway_proc *g, const char *from, const char *tag, struct tpl out[3])
{
	char name[64];
	const char *parent = from;

	for (int i = 0; i < 3; i++) {
		struct session s = { 0 };
		char cmd[128];
		int rc;

		snprintf(name, sizeof(name), "%s-%s%c", prefix, tag, 'a' + i);
		snprintf(cmd, sizeof(cmd), "head -c 2097152 /dev/urandom > ~/layer-%c.bin && sync",
			 'a' + i);
		if (session_from(g, parent, &s) < 0)
			return -1;
		rc = exec_cmd(g, &s, cmd, NULL, 60, NULL, 0);
		if (rc == 0)
			rc = save(g, &s, name, &out[i]);
		delete_session(g, &s);
		if (rc < 0 || measure(g, &out[i]) < 0)
			return -1;
		printf("  %s: saved in %.1f s (guest stopped %.0f ms), depth %d\n", name,
		       out[i].save_ms / 1000, out[i].stopped_ms, out[i].depth);
		fflush(stdout);
		parent = out[i].name;
	}
	return 0;
}

/* v[n] copied into c, sorted (v keeps its run order). */
static void sorted_copy(const double *v, int n, double c[MAX_RUNS])
{
	memcpy(c, v, sizeof(*v) * (size_t)n);
	stats_sort(c, n);
}

static double median(double *v, int n)
{
	double c[MAX_RUNS];

	sorted_copy(v, n, c);
	return n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
}

/* The nearest-rank p90. */
static double p90(double *v, int n)
{
	double c[MAX_RUNS];
	int rank = (9 * n + 9) / 10; /* ceil(0.9 n) */

	sorted_copy(v, n, c);
	return c[rank - 1];
}

/* Removes what the run made: sessions, then templates (newest first, a
 * few rounds: a template backs the next), the gateways, and any of this
 * run's template dirs a gateway could not remove. */
static void clean_up(void)
{
	struct gateway_proc *gws[] = { &gw1, &gw2 };
	char path[PATH_MAX];
	DIR *d;
	struct dirent *e;

	for (int k = 0; k < 2; k++)
		if (gws[k]->pid > 0)
			gateway_proc_delete_sessions(gws[k]);
	for (int round = 0; round < 3; round++)
		for (int i = n_made - 1; i >= 0; i--) {
			const struct gateway_proc *g = gw1.pid > 0 ? &gw1 : &gw2;
			struct http_resp r;

			if (!made[i][0] || g->pid <= 0)
				continue;
			snprintf(path, sizeof(path), "/v1/templates/%s", made[i]);
			if (http_request("127.0.0.1", g->port, "DELETE", path, g->key, NULL, 0, 60,
					 &r) == 0 &&
			    (r.status == 200 || r.status == 404))
				made[i][0] = '\0';
			http_resp_free(&r);
		}
	for (int k = 0; k < 2; k++)
		if (gws[k]->pid > 0)
			gateway_proc_stop(gws[k]);
	if (export_file[0])
		unlink(export_file);
	if ((d = opendir(vmm_templates_dir()))) {
		while ((e = readdir(d)))
			if (!strncmp(e->d_name, prefix, strlen(prefix))) {
				snprintf(path, sizeof(path), "%s/%s", vmm_templates_dir(),
					 e->d_name);
				fprintf(stderr, "removing %s (the gateway did not)\n", path);
				fs_rm_rf(path);
			}
		closedir(d);
	}
}

/* a / b as "1.23x" in buf, or "-" when b is not positive. */
static const char *ratio(double a, double b, char *buf, size_t len)
{
	if (b > 0)
		snprintf(buf, len, "%.2fx", a / b);
	else
		snprintf(buf, len, "-");
	return buf;
}

static void row_ms(const char *what, double base, double custom)
{
	char r[32];

	printf("| %s | %.0f ms | %.0f ms | %s | | |\n", what, base, custom,
	       ratio(custom, base, r, sizeof(r)));
}

static void row3_ms(const char *what, double base, double custom, double control)
{
	char r[32], r2[32];

	printf("| %s | %.0f ms | %.0f ms | %s | %.0f ms | %s |\n", what, base, custom,
	       ratio(custom, base, r, sizeof(r)), control, ratio(control, base, r2, sizeof(r2)));
}

static void row_mib(const char *what, long long base, long long custom)
{
	char r[32];

	printf("| %s | %.1f MiB | %.1f MiB | %s | | |\n", what, base / MIB, custom / MIB,
	       ratio((double)custom, (double)base, r, sizeof(r)));
}

static void chain_rows(const char *set, struct tpl t[3], long long *sum)
{
	*sum = 0;
	for (int i = 0; i < 3; i++) {
		printf("| %s %c (%s) | %d | %.1f MiB | %.1f MiB | %.1f MiB | %.1f / %.1f MiB | "
		       "%.1f s (%.0f ms stopped) |\n",
		       set, 'A' + i, t[i].name, t[i].depth, t[i].disk / MIB, t[i].ram / MIB,
		       t[i].total / MIB, t[i].size_bytes / MIB, t[i].chain_bytes / MIB,
		       t[i].save_ms / 1000, t[i].stopped_ms);
		*sum += t[i].total;
	}
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = { { "image", required_argument, 0, 'i' },
						  { "runs", required_argument, 0, 'r' },
						  { 0, 0, 0, 0 } };
	const char *flat_args[] = { "--template-chain-max", "1", NULL };
	const char *run_dir = getenv("VITRINE_RUN");
	static double ready[KINDS][MAX_RUNS], landed[KINDS][MAX_RUNS], srv[KINDS][MAX_RUNS];
	static const char *const kind_names[KINDS] = { "base", "control", "custom" };
	double base_build_ms, base_exp_ms, custom_exp_ms, base_imp_ms, custom_imp_ms;
	long long base_exp_bytes, custom_exp_bytes, sum_chain, sum_flat, rootfs_bytes, disks_chain,
		disks_flat;
	char name[64], err[512], rbuf[32], rbuf2[32];
	struct tpl base = { 0 }, custom = { 0 }, resaved = { 0 }, layered[3] = { 0 },
		   flat[3] = { 0 };
	const struct tpl *kinds[KINDS] = { &base, &resaved, &custom };
	struct session s = { 0 };
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESETHAND };
	struct vmm_image img;
	int runs = 10, c, status = 1;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == 'i')
			image_name = optarg;
		else if (c == 'r')
			runs = atoi(optarg);
		else
			return 2;
	}
	desktop = !strcmp(image_name, "desktop");
	if ((!desktop && strcmp(image_name, "tiny")) || runs < 1 || runs > MAX_RUNS) {
		fprintf(stderr,
			"usage: bench_custom_template [--image desktop|tiny] [--runs 1..%d]\n",
			MAX_RUNS);
		return 2;
	}
	if (vmm_image_load(image_name, &img, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	rootfs_bytes = img.rootfs[0] ? blocks_of(img.rootfs) : 0;
	if (desktop && fs_read_file("tests/e2e/pages/life.html", 1 << 20, &page, NULL) < 0) {
		fprintf(stderr, "tests/e2e/pages/life.html: cannot read it (run from the "
				"repository's root)\n");
		return 1;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	snprintf(prefix, sizeof(prefix), "bct%d", (int)getpid());
	snprintf(export_file, sizeof(export_file), "%s/bench-custom-template-%d.vtpl",
		 run_dir && *run_dir ? run_dir : "/tmp", (int)getpid());
	fs_mkdir_p(run_dir && *run_dir ? run_dir : "/tmp", 0755);
	if (gateway_proc_start(&gw1, NULL) < 0)
		goto out;

	snprintf(base.name, sizeof(base.name), "%s-base", prefix);
	printf("%s: making the base template %s from the image ...\n", image_name, base.name);
	fflush(stdout);
	if (make_base(base.name, &base_build_ms) < 0 || measure(&gw1, &base) < 0)
		goto out;
	printf("  made in %.1f s\n", base_build_ms / 1000);

	printf("customising a session of it ...\n");
	fflush(stdout);
	if (session_from(&gw1, base.name, &s) < 0 || customise(&s) < 0)
		goto out;
	snprintf(name, sizeof(name), "%s-custom", prefix);
	if (save(&gw1, &s, name, &custom) < 0 || measure(&gw1, &custom) < 0)
		goto out;
	delete_session(&gw1, &s);
	printf("  saved as %s in %.1f s (guest stopped %.0f ms)\n", custom.name,
	       custom.save_ms / 1000, custom.stopped_ms);
	fflush(stdout);

	/* The control: the base as it is, saved again after as long a run as
	 * the customisation's, so that what the custom template's restore
	 * gains or loses by having run a while is told from what its
	 * contents cost. */
	printf("the control: a session of the base, idle for %d s, saved ...\n", CONTROL_IDLE_S);
	fflush(stdout);
	if (session_from(&gw1, base.name, &s) < 0)
		goto out;
	for (int i = 0; i < CONTROL_IDLE_S && !interrupted; i++)
		sleep(1);
	snprintf(name, sizeof(name), "%s-resaved", prefix);
	if (save(&gw1, &s, name, &resaved) < 0)
		goto out;
	delete_session(&gw1, &s);
	printf("  saved as %s in %.1f s (guest stopped %.0f ms)\n", resaved.name,
	       resaved.save_ms / 1000, resaved.stopped_ms);

	printf("restore to ready, %d each, interleaved:\n", runs);
	fflush(stdout);
	for (int i = 0; i < runs; i++) {
		for (int k = 0; k < KINDS; k++) {
			int kind = (i + k) % KINDS; /* each goes first in turn */

			if (restore_once(kinds[kind]->name, kind == K_CUSTOM && i == 0,
					 &ready[kind][i], &landed[kind][i], &srv[kind][i]) < 0)
				goto out;
		}
		printf("  run %d:", i + 1);
		for (int k = 0; k < KINDS; k++)
			printf("%s %s ready %.0f ms (gateway %.0f), click seen %.0f ms",
			       k ? " |" : "", kind_names[k], ready[k][i], srv[k][i], landed[k][i]);
		printf("\n");
		fflush(stdout);
	}

	printf("export and import ...\n");
	fflush(stdout);
	snprintf(name, sizeof(name), "%s-base-imported", prefix);
	if (export_template(base.name, &base_exp_bytes, &base_exp_ms) < 0 ||
	    import_template(name, &base_imp_ms) < 0)
		goto out;
	snprintf(name, sizeof(name), "%s-custom-imported", prefix);
	if (export_template(custom.name, &custom_exp_bytes, &custom_exp_ms) < 0 ||
	    import_template(name, &custom_imp_ms) < 0)
		goto out;
	unlink(export_file);
	printf("  base %.1f MiB out in %.1f s, in in %.1f s; custom %.1f MiB out in %.1f s, in "
	       "in %.1f s\n",
	       base_exp_bytes / MIB, base_exp_ms / 1000, base_imp_ms / 1000, custom_exp_bytes / MIB,
	       custom_exp_ms / 1000, custom_imp_ms / 1000);

	printf("a chain of 3 (--template-chain-max 4, the default):\n");
	fflush(stdout);
	if (chain(&gw1, base.name, "chain", layered) < 0)
		goto out;
	printf("the same flattened (a second gateway, --template-chain-max 1):\n");
	fflush(stdout);
	if (gateway_proc_start(&gw2, flat_args) < 0 || chain(&gw2, base.name, "flat", flat) < 0)
		goto out;

	printf("\n%s guest, same run; base = the template made from the image, custom = a "
	       "session of it customised and saved\n\n",
	       image_name);
	printf("| | base | custom | custom / base | control: the base resaved after %d s idle "
	       "| control / base |\n|---|---|---|---|---|---|\n",
	       CONTROL_IDLE_S);
	row3_ms("restore -> ready, median", median(ready[K_BASE], runs),
		median(ready[K_CUSTOM], runs), median(ready[K_CONTROL], runs));
	row3_ms("restore -> ready, p90", p90(ready[K_BASE], runs), p90(ready[K_CUSTOM], runs),
		p90(ready[K_CONTROL], runs));
	row3_ms(desktop ? "restore -> ready + click seen by the page, median"
			: "restore -> ready + click answered, median",
		median(landed[K_BASE], runs), median(landed[K_CUSTOM], runs),
		median(landed[K_CONTROL], runs));
	row3_ms(desktop ? "restore -> ready + click seen by the page, p90"
			: "restore -> ready + click answered, p90",
		p90(landed[K_BASE], runs), p90(landed[K_CUSTOM], runs),
		p90(landed[K_CONTROL], runs));
	printf("| making the template (base: booted from the image; custom: a running session "
	       "saved, POST -> ready) | %.1f s | %.1f s | %s | | |\n",
	       base_build_ms / 1000, custom.save_ms / 1000,
	       ratio(custom.save_ms, base_build_ms, rbuf, sizeof(rbuf)));
	printf("| a save's share: the session's guest stopped | | %.0f ms | | | |\n",
	       custom.stopped_ms);
	row_mib("export size", base_exp_bytes, custom_exp_bytes);
	row_ms("export time", base_exp_ms, custom_exp_ms);
	row_ms("import time", base_imp_ms, custom_imp_ms);
	row_mib("on disk: disk.qcow2 (st_blocks)", base.disk, custom.disk);
	row_mib("on disk: ram (st_blocks)", base.ram, custom.ram);
	row_mib("on disk: the template's dir (st_blocks)", base.total, custom.total);
	printf("\n(%d runs each; the click is at 640,500; the custom template's disk backs on "
	       "the base's: depth %d vs %d)\n",
	       runs, custom.depth, base.depth);

	printf("\nchain vs flattened (each link: a session of the one before + 2 MiB of random "
	       "bytes, saved)\n\n");
	printf("| template | depth | disk.qcow2 | ram | dir (st_blocks) | gateway's size_bytes / "
	       "chain_bytes | save (POST -> ready) |\n|---|---|---|---|---|---|---|\n");
	chain_rows("chain", layered, &sum_chain);
	chain_rows("flat", flat, &sum_flat);
	disks_chain = layered[0].disk + layered[1].disk + layered[2].disk;
	disks_flat = flat[0].disk + flat[1].disk + flat[2].disk;
	printf("\n3 layered: %.1f MiB, 3 flattened: %.1f MiB (%s); disks alone: %.1f vs %.1f "
	       "MiB (%s)\n",
	       sum_chain / MIB, sum_flat / MIB,
	       ratio((double)sum_flat, (double)sum_chain, rbuf, sizeof(rbuf)), disks_chain / MIB,
	       disks_flat / MIB,
	       ratio((double)disks_flat, (double)disks_chain, rbuf2, sizeof(rbuf2)));
	if (!img.rootfs[0])
		printf("(the %s image has no disk: its guest's files live in its RAM)\n",
		       image_name);
	printf("shared and counted in neither: the image's rootfs (%.1f MiB on disk), the base "
	       "template (%.1f MiB, its disk.qcow2 %.1f MiB): every flattened disk and the base's "
	       "back on the rootfs; chain A backs on the base's disk, B on A's, C on B's\n",
	       rootfs_bytes / MIB, base.total / MIB, base.disk / MIB);
	status = 0;
out:
	if (status)
		fprintf(stderr, "bench_custom_template failed; cleaning up\n");
	clean_up();
	free(page);
	return status;
}
