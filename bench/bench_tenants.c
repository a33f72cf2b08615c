/* bench/bench_tenants.c: what projects (tenants) cost (issue 25's
 * benchmark), on tiny guests under one gateway, interleaved so the host's
 * noise falls on every figure alike:
 *  - create to ready (POST /v1/sessions?wait=ready) of N sessions of one
 *    project against N sessions of N projects (one each), p50/p95;
 *  - a screenshot (the default, fresh) of each of those sessions with its
 *    project's key against the same with the operator key (no project: the
 *    owner check is skipped), p50/p95 of R rounds, and their ratio;
 *  - the root helper's round trip (vmm-qemu/privd.h): a create asks it
 *    twice (the sweep at the start, the run dir's removal at the end); the
 *    sweep of an empty run base through a helper of the bench's own,
 *    against the same sweep in this process, p50/p95 of 200 each.
 * Target: the owner check costs nothing you can see (ratios within the
 * run's noise, ~1.0). usage: bench_tenants [--sessions N] [--rounds R] */
#include "common/fsutil.h"
#include "common/http_client.h"
#include "tests/lib/gateway_proc.h"
#include "tests/lib/stats.h"
#include "vmm-qemu/priv.h"
#include "vmm-qemu/sweep.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_N 32

static struct gateway_proc gw;

struct tenant {
	char key[128];
	struct gateway_session s;
};

/* POST path with body as the operator; 0 on want, else -1 (printed). */
static int post(const char *path, const char *body, int want, struct http_resp *out)
{
	struct http_resp r;

	if (http_request("127.0.0.1", gw.port, "POST", path, gw.key, body, strlen(body), 60, &r) <
		    0 ||
	    r.status != want) {
		fprintf(stderr, "POST %s: %d %s\n", path, r.status, r.body ? r.body : "");
		http_resp_free(&r);
		return -1;
	}
	if (out)
		*out = r;
	else
		http_resp_free(&r);
	return 0;
}

/* Project name with a key of its own, into key. */
static int project(const char *name, char *key)
{
	char body[96], path[96];
	struct http_resp r;

	snprintf(body, sizeof(body), "{\"name\":\"%s\"}", name);
	snprintf(path, sizeof(path), "/v1/projects/%s/keys", name);
	if (post("/v1/projects", body, 201, NULL) < 0 || post(path, "{}", 201, &r) < 0)
		return -1;
	snprintf(key, 128, "%s", json_string_value(json_object_get(r.json, "key")));
	http_resp_free(&r);
	return 0;
}

/* One session for key; its create-to-ready ms into *ms. */
static int create(struct tenant *t, double *ms)
{
	int64_t t0 = fs_now_ms();

	if (gateway_proc_create_session_as(&gw, t->key, "{\"image\":\"tiny\"}", 180, &t->s) < 0)
		return -1;
	*ms = (double)(fs_now_ms() - t0);
	return 0;
}

/* Monotonic time in ms, to the microsecond. */
static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A screenshot of id with token; ms, or -1. */
static double shot(const char *id, const char *token)
{
	char path[128];
	struct http_resp r;
	double t0 = now_ms(), ms;

	snprintf(path, sizeof(path), "/v1/sessions/%s/screenshot", id);
	if (http_request("127.0.0.1", gw.port, "GET", path, token, NULL, 0, 30, &r) < 0 ||
	    r.status != 200) {
		fprintf(stderr, "screenshot %s: %d\n", id, r.status);
		http_resp_free(&r);
		return -1;
	}
	ms = now_ms() - t0;
	http_resp_free(&r);
	return ms;
}

static void line(const char *what, double *v, int n, double *p50)
{
	*p50 = stats_pct(v, n, 0.5);
	printf("  %-44s p50 %8.2f ms  p95 %8.2f ms  (n=%d)\n", what, *p50, stats_pct(v, n, 0.95),
	       n);
}

/* The root helper's round trip against the same work in this process. */
static int helper_round_trip(void)
{
	static double via[200], here[200];
	char base[64], err[512];
	const char *bin = getenv("VITRINE_BIN") ? getenv("VITRINE_BIN") : "build/vitrine";
	double p_via, p_here;

	snprintf(base, sizeof(base), "/tmp/vitrine-bench-privd-XXXXXX");
	if (!mkdtemp(base) || vmm_priv_start(bin, base, "", err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_tenants: the root helper: %s\n", err);
		return -1;
	}
	for (int i = 0; i < 200; i++) {
		double t0 = now_ms();

		if (vmm_priv_sweep(base) < 0)
			break;
		via[i] = now_ms() - t0;
		t0 = now_ms();
		vmm_sweep_stale(base);
		here[i] = now_ms() - t0;
	}
	vmm_priv_stop();
	rmdir(base);
	printf("the root helper (a create asks it twice: the sweep, the run dir's removal):\n");
	line("a sweep through the helper", via, 200, &p_via);
	line("the same sweep in this process", here, 200, &p_here);
	printf("  round trip's cost per create: %.2f ms\n", 2 * (p_via - p_here));
	return 0;
}

int main(int argc, char **argv)
{
	static struct tenant one[MAX_N], many[MAX_N];
	static double c_one[MAX_N], c_many[MAX_N], s_one[MAX_N * 64], s_many[MAX_N * 64],
		s_op[MAX_N * 128];
	int n = 10, rounds = 10, ns = 0, no = 0;
	double p_one, p_many, p_sone, p_smany, p_op;
	char key_one[128], max[16];
	const char *args[] = { "--max-sessions", max, NULL };

	for (int i = 1; i < argc; i += 2) {
		if (i + 1 < argc && !strcmp(argv[i], "--sessions"))
			n = atoi(argv[i + 1]);
		else if (i + 1 < argc && !strcmp(argv[i], "--rounds"))
			rounds = atoi(argv[i + 1]);
		else {
			fprintf(stderr, "usage: bench_tenants [--sessions N] [--rounds R]\n");
			return 2;
		}
	}
	if (n < 1 || n > MAX_N || rounds < 1 || rounds > 64) {
		fprintf(stderr, "bench_tenants: 1..%d sessions, 1..64 rounds\n", MAX_N);
		return 2;
	}
	snprintf(max, sizeof(max), "%d", 2 * n + 2);
	if (gateway_proc_start(&gw, args) < 0 || project("one", key_one) < 0)
		return 1;
	printf("bench_tenants: %d tiny sessions in one project against %d projects of one\n", n, n);
	for (int i = 0; i < n; i++) {
		char name[16];

		snprintf(name, sizeof(name), "p%d", i);
		snprintf(one[i].key, sizeof(one[i].key), "%s", key_one);
		if (project(name, many[i].key) < 0 || create(&one[i], &c_one[i]) < 0 ||
		    create(&many[i], &c_many[i]) < 0)
			goto fail;
	}
	for (int r = 0; r < rounds; r++)
		for (int i = 0; i < n; i++) {
			/* who asks first takes the freshness round trip: alternate */
			bool op_first = r % 2;
			double c = op_first ? shot(one[i].s.id, gw.key) : 0,
			       d = op_first ? shot(many[i].s.id, gw.key) : 0,
			       a = shot(one[i].s.id, one[i].key),
			       b = shot(many[i].s.id, many[i].key);

			if (!op_first) {
				c = shot(one[i].s.id, gw.key);
				d = shot(many[i].s.id, gw.key);
			}

			if (a < 0 || b < 0 || c < 0 || d < 0)
				goto fail;
			s_one[ns] = a;
			s_many[ns++] = b;
			s_op[no++] = c;
			s_op[no++] = d;
		}
	printf("create to ready:\n");
	line("one project", c_one, n, &p_one);
	line("one project each", c_many, n, &p_many);
	printf("  ratio (each / one): %.2f\n", p_many / p_one);
	printf("screenshot (fresh):\n");
	line("one project's key", s_one, ns, &p_sone);
	line("projects' own keys", s_many, ns, &p_smany);
	line("the operator key (no owner check)", s_op, no, &p_op);
	printf("  ratio (project keys / operator): %.2f and %.2f\n", p_sone / p_op, p_smany / p_op);
	gateway_proc_delete_sessions(&gw);
	if (gateway_proc_stop(&gw) < 0)
		return 1;
	return helper_round_trip() == 0 ? 0 : 1;
fail:
	gateway_proc_delete_sessions(&gw);
	gateway_proc_stop(&gw);
	return 1;
}
