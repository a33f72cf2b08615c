/* tests/lib/gateway_proc.c: see gateway_proc.h. */
#include "tests/lib/gateway_proc.h"

#include "common/http_client.h"

#include "common/fsutil.h"
#include "tests/lib/png.h"
#include "vmm-qemu/run_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Whether extra (NULL-terminated, may be NULL) has option opt. */
static bool has_arg(const char *const *extra, const char *opt)
{
	for (int i = 0; extra && extra[i]; i++)
		if (!strcmp(extra[i], opt))
			return true;
	return false;
}

/* Starts `vitrine serve` on g's dirs and waits for its first line. */
static int spawn(struct gateway_proc *g, const char *const *extra_args)
{
	const char *bin = getenv("VITRINE_BIN") ? getenv("VITRINE_BIN") : "build/vitrine";
	const char *argv[40] = { bin, "serve", "--listen", "127.0.0.1:0", "--api-key-file" };
	char line[512] = "", *text = NULL;
	int n = 5, out[2];
	FILE *f;

	argv[n++] = g->key_file;
	argv[n++] = "--state-dir";
	argv[n++] = g->state_dir;
	/* A test's gateway takes its guests with it unless the test says
	 * otherwise, and guests a crashed test left go soon. */
	if (!has_arg(extra_args, "--on-stop")) {
		argv[n++] = "--on-stop";
		argv[n++] = "kill";
	}
	if (!has_arg(extra_args, "--adopt-grace-s")) {
		argv[n++] = "--adopt-grace-s";
		argv[n++] = "30";
	}
	if (!has_arg(extra_args, "--on-abandon")) {
		argv[n++] = "--on-abandon";
		argv[n++] = "kill";
	}
	for (int i = 0; extra_args && extra_args[i] && n < 39; i++)
		argv[n++] = extra_args[i];
	argv[n] = NULL;
	if (pipe(out) < 0)
		return -1;
	g->pid = fork();
	if (g->pid == 0) {
		const char *err_file = getenv("VITRINE_TEST_GATEWAY_STDERR");
		int efd = err_file ? open(err_file, O_WRONLY | O_CREAT | O_APPEND, 0600) : -1;

		setenv("VITRINE_RUN", g->run_base, 1);
		dup2(out[1], 1);
		if (efd >= 0)
			dup2(efd, 2); /* the test reads what the gateway said */
		close(out[0]);
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	close(out[1]);
	f = fdopen(out[0], "r");
	if (!f || !fgets(line, sizeof(line), f) ||
	    sscanf(line, "vitrine: listening on http://127.0.0.1:%d", &g->port) != 1) {
		fprintf(stderr, "gateway did not start; it said: %s\n", line);
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	if (fs_read_file(g->key_file, 256, &text, NULL) < 0)
		return -1;
	text[strcspn(text, "\n")] = '\0';
	snprintf(g->key, sizeof(g->key), "%s", text);
	free(text);
	return 0;
}

/* Fresh dirs for g (the run base's name too). */
static void name_dirs(struct gateway_proc *g)
{
	/* Each server of this process gets dirs of its own: two sharing a run
	 * base would adopt (and stop) each other's guests. */
	static int started;
	char tag[32];

	if (started++)
		snprintf(tag, sizeof(tag), "%d-%d", (int)getpid(), started);
	else
		snprintf(tag, sizeof(tag), "%d", (int)getpid());
	memset(g, 0, sizeof(*g));
	snprintf(g->run_base, sizeof(g->run_base), "/tmp/vitrine-gw-%s", tag);
	snprintf(g->key_file, sizeof(g->key_file), "/tmp/vitrine-gw-key-%s", tag);
	snprintf(g->state_dir, sizeof(g->state_dir), "/tmp/vitrine-gw-state-%s", tag);
	unlink(g->key_file);
	fs_rm_rf(g->state_dir);
}

int gateway_proc_start(struct gateway_proc *g, const char *const *extra_args)
{
	name_dirs(g);
	return spawn(g, extra_args);
}

int gateway_proc_start_in(struct gateway_proc *g, const char *run_base,
			  const char *const *extra_args)
{
	name_dirs(g);
	snprintf(g->run_base, sizeof(g->run_base), "%s", run_base);
	return spawn(g, extra_args);
}

int gateway_proc_restart(struct gateway_proc *g, const char *const *extra_args)
{
	if (g->pid > 0)
		gateway_proc_kill(g, SIGKILL);
	return spawn(g, extra_args);
}

int gateway_proc_kill(struct gateway_proc *g, int sig)
{
	int st = -1;

	if (g->pid <= 0)
		return -1;
	kill(g->pid, sig);
	if (waitpid(g->pid, &st, 0) != g->pid)
		st = -1;
	g->pid = 0;
	return st;
}

/* Reaps pid within timeout_s; false (still running) after that. */
static bool reap_within(pid_t pid, int timeout_s, int *st)
{
	for (int i = 0; i < timeout_s * 10; i++) {
		pid_t got = waitpid(pid, st, WNOHANG);

		if (got == pid || got < 0)
			return true;
		usleep(100 * 1000);
	}
	return false;
}

int gateway_proc_stop(struct gateway_proc *g)
{
	int st = -1;

	if (g->pid > 0) {
		kill(g->pid, SIGTERM);
		if (!reap_within(g->pid, GATEWAY_PROC_STOP_S, &st)) {
			/* A shutdown that hangs is a bug of the gateway's: where
			 * its threads are, for the log, then the end. */
			char cmd[256];

			fprintf(stderr,
				"!! vitrine serve (pid %d) did not exit within %d s of SIGTERM; its "
				"threads:\n",
				(int)g->pid, GATEWAY_PROC_STOP_S);
			snprintf(cmd, sizeof(cmd),
				 "timeout 60 gdb -p %d -batch -ex 'thread apply all bt' 2>&1 | "
				 "grep -E '^(Thread|#)' | head -300 >&2",
				 (int)g->pid);
			if (system(cmd) != 0)
				fprintf(stderr, "(gdb could not show them)\n");
			kill(g->pid, SIGKILL);
			waitpid(g->pid, &st, 0);
			st = -1;
		}
		if (st != -1 && WIFEXITED(st))
			st = WEXITSTATUS(st);
		else
			st = -1;
		g->pid = 0;
	}
	unlink(g->key_file);
	fs_rm_rf(g->run_base);
	fs_rm_rf(g->state_dir);
	return st;
}

int gateway_proc_guests(const struct gateway_proc *g)
{
	DIR *d = opendir(g->run_base);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += !strncmp(e->d_name, "vm-", 3) && strncmp(e->d_name, "vm-ckpt-", 8);
	if (d)
		closedir(d);
	return n;
}

int gateway_proc_checkpoints(const struct gateway_proc *g)
{
	DIR *d = opendir(g->run_base);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += !strncmp(e->d_name, "vm-ckpt-", 8);
	if (d)
		closedir(d);
	return n;
}

int gateway_proc_delete_sessions(const struct gateway_proc *g)
{
	struct http_resp r;
	json_t *v;
	size_t i;

	if (http_request("127.0.0.1", g->port, "GET", "/v1/sessions", g->key, NULL, 0, 30, &r) < 0)
		return -1;
	json_array_foreach(json_object_get(r.json, "sessions"), i, v)
	{
		char path[128];
		struct http_resp d;

		snprintf(path, sizeof(path), "/v1/sessions/%s",
			 json_string_value(json_object_get(v, "id")));
		if (http_request("127.0.0.1", g->port, "DELETE", path, g->key, NULL, 0, 30, &d) ==
		    0)
			http_resp_free(&d);
	}
	http_resp_free(&r);
	return 0;
}

int gateway_proc_make_template(const struct gateway_proc *g, const char *body, int timeout_s,
			       long long *created_at)
{
	char path[160];
	struct http_resp r;
	const char *name, *status;
	int64_t until = fs_now_ms() + (int64_t)timeout_s * 1000;

	if (http_request("127.0.0.1", g->port, "POST", "/v1/templates", g->key, body, strlen(body),
			 30, &r) < 0 ||
	    r.status != 202 || !(name = json_string_value(json_object_get(r.json, "name")))) {
		fprintf(stderr, "POST /v1/templates: %d %s\n", r.status, r.body ? r.body : "");
		http_resp_free(&r);
		return -1;
	}
	snprintf(path, sizeof(path), "/v1/templates/%s", name);
	http_resp_free(&r);
	while (fs_now_ms() < until) {
		if (http_request("127.0.0.1", g->port, "GET", path, g->key, NULL, 0, 30, &r) < 0)
			return -1;
		status = json_string_value(json_object_get(r.json, "status"));
		if (status && strcmp(status, "building")) {
			int rc = strcmp(status, "ready") ? -1 : 0;

			if (rc < 0)
				fprintf(stderr, "template build: %s\n", r.body);
			else if (created_at)
				*created_at = json_integer_value(
					json_object_get(r.json, "created_at"));
			http_resp_free(&r);
			return rc;
		}
		http_resp_free(&r);
		usleep(100 * 1000);
	}
	fprintf(stderr, "%s: not built within %d s\n", path, timeout_s);
	return -1;
}

int gateway_proc_create_session(const struct gateway_proc *g, const char *body, int timeout_s,
				struct gateway_session *out)
{
	return gateway_proc_create_session_as(g, g->key, body, timeout_s, out);
}

int gateway_proc_create_session_as(const struct gateway_proc *g, const char *key, const char *body,
				   int timeout_s, struct gateway_session *out)
{
	struct http_resp r;
	json_t *tokens;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (http_request("127.0.0.1", g->port, "POST", "/v1/sessions?wait=ready", key, body,
			 strlen(body), timeout_s, &r) < 0 ||
	    r.status != 201 ||
	    strcmp(json_string_value(json_object_get(r.json, "status")) ?: "", "ready")) {
		fprintf(stderr, "create session: %d %s\n", r.status, r.body ? r.body : "");
		goto out;
	}
	tokens = json_object_get(r.json, "tokens");
	snprintf(out->id, sizeof(out->id), "%s",
		 json_string_value(json_object_get(r.json, "id")) ?: "");
	snprintf(out->control, sizeof(out->control), "%s",
		 json_string_value(json_object_get(tokens, "control")) ?: "");
	snprintf(out->view, sizeof(out->view), "%s",
		 json_string_value(json_object_get(tokens, "view")) ?: "");
	rc = out->id[0] && out->control[0] && out->view[0] ? 0 : -1;
out:
	http_resp_free(&r);
	return rc;
}

int gateway_proc_screenshot(const struct gateway_proc *g, const char *id, const char *token,
			    struct ppm *img)
{
	char path[200];
	struct http_resp r;
	int rc = -1;

	snprintf(path, sizeof(path), "/v1/sessions/%s/screenshot?format=png", id);
	if (http_request("127.0.0.1", g->port, "GET", path, token, NULL, 0, 30, &r) == 0 &&
	    r.status == 200 && png_decode(r.body, r.body_len, img) == 0)
		rc = 0;
	http_resp_free(&r);
	return rc;
}

int gateway_proc_serve_calls(const struct gateway_proc *g, const struct gateway_session *s,
			     int64_t *slowest_ms)
{
	static const struct {
		const char *method, *sub, *body;
	} calls[] = {
		{ "GET", "/screenshot?format=png", NULL },
		{ "POST", "/actions", "{\"action\":\"left_click\",\"coordinate\":[40,40]}" },
		{ "POST", "/exec", "{\"cmd\":\"echo ok\",\"cwd\":\"/\"}" },
	};

	*slowest_ms = 0;
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		char path[256];
		struct http_resp r;
		struct timespec a, b;
		int64_t ms;
		int rc;

		snprintf(path, sizeof(path), "/v1/sessions/%s%s", s->id, calls[i].sub);
		clock_gettime(CLOCK_MONOTONIC, &a);
		rc = http_request("127.0.0.1", g->port, calls[i].method, path, s->control,
				  calls[i].body, calls[i].body ? strlen(calls[i].body) : 0, 60, &r);
		clock_gettime(CLOCK_MONOTONIC, &b);
		if (rc < 0 || r.status != 200) {
			fprintf(stderr, "%s %s: %d %s\n", calls[i].method, calls[i].sub,
				rc < 0 ? rc : r.status,
				rc < 0	 ? "no answer"
				: r.body ? r.body
					 : "");
			http_resp_free(&r);
			return -1;
		}
		http_resp_free(&r);
		ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
		if (ms > *slowest_ms)
			*slowest_ms = ms;
	}
	return 0;
}

long gateway_proc_rss_kib(const struct gateway_proc *g)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)g->pid);
	if (!(f = fopen(path, "re")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

int gateway_proc_qga_socket(const struct gateway_proc *g, char *out, size_t len)
{
	DIR *d = opendir(g->run_base);
	struct dirent *e;
	int rc = -1;

	while (d && (e = readdir(d)))
		if (!strncmp(e->d_name, "vm-", 3)) {
			char dir[PATH_MAX];

			snprintf(dir, sizeof(dir), "%s/%s", g->run_base, e->d_name);
			rc = vmm_run_dir_socket(dir, VMM_SOCKET_QGA, out, len) < 0 ? -1 : 0;
		}
	if (d)
		closedir(d);
	return rc;
}
