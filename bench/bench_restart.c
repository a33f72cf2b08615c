/* bench/bench_restart.c: what sessions that outlive the gateway cost
 * (docs/durability.md).
 *
 * 1. Restart: N sessions run; the gateway is killed with SIGKILL and a new
 *    one started on the same state; the time from the new process's start
 *    to all N sessions answering ready (GET ?wait=ready), for N = 1 and 8
 *    tiny guests and 2 desktops. Baseline in the same run: making the same
 *    N sessions afresh from the template (what a gateway without adoption
 *    would have to do, losing their state).
 * 2. The registry's cost on each state change: create (from the template)
 *    and pause/resume in memory, p50/p95 through the API, against the
 *    record write alone (session_record + registry_write, temp file,
 *    fsync, rename, fsync of the dir) timed in this process on the same
 *    state dir's file system, and a plain write without fsync as its
 *    baseline.
 * usage: bench_restart [--no-desktop] */
#include "common/fsutil.h"
#include "common/http_client.h"
#include "gateway/session/registry.h"
#include "tests/lib/gateway_proc.h"
#include "tests/lib/stats.h"

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_N 8
#define REPS 30

static struct gateway_proc gw;
static const char *const args[] = { "--on-stop", "kill", "--adopt-grace-s", "120", "--max-sessions",
				    "12",	 NULL };

static int make_template(const char *name, const char *image)
{
	char body[256];

	snprintf(body, sizeof(body), "{\"name\":\"%s\",\"image\":\"%s\"}", name, image);
	return gateway_proc_make_template(&gw, body, 900, NULL);
}

static void delete_template(const char *name)
{
	char path[128];
	struct http_resp r;

	snprintf(path, sizeof(path), "/v1/templates/%s", name);
	if (http_request("127.0.0.1", gw.port, "DELETE", path, gw.key, NULL, 0, 30, &r) == 0)
		http_resp_free(&r);
}

/* Creates n sessions from tpl; their ids into ids. Returns ms, or -1. */
static double create_n(const char *tpl, int n, struct gateway_session *s)
{
	char body[128];
	int64_t t0 = fs_now_ms();

	snprintf(body, sizeof(body), "{\"template\":\"%s\"}", tpl);
	for (int i = 0; i < n; i++)
		if (gateway_proc_create_session(&gw, body, 300, &s[i]) < 0)
			return -1;
	return (double)(fs_now_ms() - t0);
}

/* Kills the gateway, starts a new one and waits for all n to be ready:
 * ms from the new process's start. */
static double restart_n(int n, const struct gateway_session *s)
{
	int64_t t0;

	gateway_proc_kill(&gw, SIGKILL);
	t0 = fs_now_ms();
	if (gateway_proc_restart(&gw, args) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		char path[160];
		struct http_resp r;
		const char *st;
		bool ok;

		snprintf(path, sizeof(path), "/v1/sessions/%.64s?wait=ready&timeout_s=300",
			 s[i].id);
		if (http_request("127.0.0.1", gw.port, "GET", path, s[i].control, NULL, 0, 310,
				 &r) < 0)
			return -1;
		st = json_string_value(json_object_get(r.json, "status"));
		ok = r.status == 200 && st && !strcmp(st, "ready");
		if (!ok)
			fprintf(stderr, "%s after restart: %d %s\n", s[i].id, r.status,
				r.body ? r.body : "");
		http_resp_free(&r);
		if (!ok)
			return -1;
	}
	return (double)(fs_now_ms() - t0);
}

static void delete_all(void)
{
	gateway_proc_delete_sessions(&gw);
}

static int bench_restart(const char *tpl, const char *label, int n)
{
	struct gateway_session s[MAX_N];
	double fresh = create_n(tpl, n, s), adopt;

	if (fresh < 0)
		return -1;
	adopt = restart_n(n, s);
	delete_all();
	if (adopt < 0)
		return -1;
	printf("  %-22s all answering after %7.0f ms; creating them afresh: %7.0f ms (%.2fx)\n",
	       label, adopt, fresh, adopt / fresh);
	return 0;
}

static double request_ms(const char *token, const char *method, const char *path, const char *body)
{
	int64_t t0 = fs_now_ms();
	struct http_resp r;
	int rc = http_request("127.0.0.1", gw.port, method, path, token, body,
			      body ? strlen(body) : 0, 120, &r);

	if (rc < 0 || r.status >= 300) {
		fprintf(stderr, "%s %s: %d %s\n", method, path, r.status, r.body ? r.body : "");
		if (rc == 0)
			http_resp_free(&r);
		return -1;
	}
	http_resp_free(&r);
	return (double)(fs_now_ms() - t0);
}

static double now_ms_f(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The record write alone, on the state dir's file system. */
static void bench_record_writes(void)
{
	static double atomic_ms[200], plain_ms[200];
	char dir[128], path[200], err[256], *text;
	struct registry reg = { 0 };
	json_t *rec;
	int n = 200;

	snprintf(dir, sizeof(dir), "%s-bench", gw.state_dir);
	if (registry_open(&reg, dir, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return;
	}
	/* A record of a typical size (~1 KiB). */
	rec = json_pack("{s:i, s:s, s:s, s:s, s:{s:s, s:{s:[s,s]}}, s:[i,i], s:{s:s, s:s}, s:{s:s, "
			"s:i, s:I}}",
			"version", 1, "id", "benchnode0123456789abcdef", "node", "benchnode",
			"state", "running", "request", "template", "desktop", "egress", "allow",
			"example.com:443", "*.debian.org:80", "screen", 1280, 800, "tokens",
			"control_sha256",
			"8d64666b3a57b53101d5ec122525a781485120c5ee7be962ba492bef42096341",
			"view_sha256",
			"8d64666b3a57b53101d5ec122525a781485120c5ee7be962ba492bef42096341", "guest",
			"run_dir", "/var/lib/vitrine/run/vm-abcdef", "pid", 12345, "start_time",
			(json_int_t)987654321);
	text = json_dumps(rec, JSON_COMPACT);
	snprintf(path, sizeof(path), "%s/plain.json", dir);
	for (int i = 0; i < n; i++) {
		double a = now_ms_f();

		registry_write(&reg, "benchnode0123456789abcdef", rec);
		atomic_ms[i] = now_ms_f() - a;
		a = now_ms_f();
		fs_write_file(path, text, strlen(text));
		plain_ms[i] = now_ms_f() - a;
	}
	printf("  record write (%zu bytes, atomic + fsync): p50 %.1f ms p95 %.1f ms; a plain "
	       "write without fsync: p50 %.2f ms p95 %.2f ms\n",
	       strlen(text), stats_pct(atomic_ms, n, 0.5), stats_pct(atomic_ms, n, 0.95),
	       stats_pct(plain_ms, n, 0.5), stats_pct(plain_ms, n, 0.95));
	free(text);
	json_decref(rec);
	registry_close(&reg);
	fs_rm_rf(dir);
}

static int bench_state_changes(const char *tpl)
{
	static double create_ms[REPS], pause_ms[REPS], resume_ms[REPS];
	char body[128], path[160];
	int n = REPS;

	snprintf(body, sizeof(body), "{\"template\":\"%s\"}", tpl);
	for (int i = 0; i < n; i++) {
		struct gateway_session s;
		int64_t t0 = fs_now_ms();

		if (gateway_proc_create_session(&gw, body, 300, &s) < 0)
			return -1;
		create_ms[i] = (double)(fs_now_ms() - t0);
		snprintf(path, sizeof(path), "/v1/sessions/%s/pause", s.id);
		pause_ms[i] = request_ms(s.control, "POST", path, "{\"mode\":\"memory\"}");
		snprintf(path, sizeof(path), "/v1/sessions/%s/resume", s.id);
		resume_ms[i] = request_ms(s.control, "POST", path, NULL);
		delete_all();
		if (pause_ms[i] < 0 || resume_ms[i] < 0)
			return -1;
	}
	printf("  create (tiny, from a template, %d runs): p50 %.0f ms p95 %.0f ms\n", n,
	       stats_pct(create_ms, n, 0.5), stats_pct(create_ms, n, 0.95));
	printf("  pause in memory: p50 %.1f ms p95 %.1f ms; resume: p50 %.1f ms p95 %.1f ms\n",
	       stats_pct(pause_ms, n, 0.5), stats_pct(pause_ms, n, 0.95),
	       stats_pct(resume_ms, n, 0.5), stats_pct(resume_ms, n, 0.95));
	return 0;
}

int main(int argc, char **argv)
{
	bool desktop = !(argc > 1 && !strcmp(argv[1], "--no-desktop"));
	char tiny[64], desk[64];
	int rc = 0;

	snprintf(tiny, sizeof(tiny), "bench-restart-tiny-%d", (int)getpid());
	snprintf(desk, sizeof(desk), "bench-restart-desk-%d", (int)getpid());
	if (gateway_proc_start(&gw, args) < 0 || make_template(tiny, "tiny") < 0) {
		fprintf(stderr, "bench_restart: no gateway or no tiny template\n");
		gateway_proc_stop(&gw);
		return 1;
	}
	printf("restart: SIGKILL of the gateway, a new one, until every session answers ready\n");
	if (bench_restart(tiny, "1 tiny session", 1) < 0 ||
	    bench_restart(tiny, "8 tiny sessions", 8) < 0)
		rc = 1;
	if (rc == 0 && desktop) {
		if (make_template(desk, "desktop") < 0 ||
		    bench_restart(desk, "2 desktop sessions", 2) < 0)
			rc = 1;
		delete_template(desk);
	}
	printf("registry writes on each state change\n");
	bench_record_writes();
	if (rc == 0 && bench_state_changes(tiny) < 0)
		rc = 1;
	delete_template(tiny);
	gateway_proc_stop(&gw);
	if (rc)
		fprintf(stderr, "bench_restart: failed\n");
	return rc;
}
