/* bench/bench_loop.c: does one session's slow work hold up another's
 * requests? Session A's screenshot latency (p50, p99, max), taken back to
 * back on one thread the whole run, idle and while session B cold-boots
 * (its QEMU start slowed on purpose by VITRINE_TEST_SLOW_START_MS, so a
 * loop that waited on it would show seconds), pauses and resumes in memory
 * and on disk, is screenshotted at 16 sizes and qualities at once, and is
 * deleted. Tiny guests; the baseline is A idle, in the same run.
 * A's requests alternate fresh=0 (the gateway's own path: loop, encode
 * cache, encoder pool; the target applies to it) and fresh=1 (the default,
 * which may also wait for a round trip to A's QEMU, another process that
 * competes for the same 2 cores).
 * Target: p99 <= 30 ms and max <= 250 ms in every phase where B works.
 * usage: bench_loop [--slow-ms N] [--idle-s N] */
#include "common/fsutil.h"
#include "common/http_client.h"
#include "tests/lib/gateway_proc.h"
#include "tests/lib/stats.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum phase {
	P_IDLE,
	P_BOOT,
	P_PAUSE_MEM,
	P_RESUME_MEM,
	P_PAUSE_DISK,
	P_RESUME_DISK,
	P_SHOTS,
	P_DELETE,
	P_COUNT
};

static const char *const phase_names[P_COUNT] = {
	"idle (baseline)", "B cold-boots",     "B pauses (memory)", "B resumes (memory)",
	"B pauses (disk)", "B resumes (disk)", "B at 16 sizes",	    "B is deleted",
};

#define MAX_SAMPLES 20000

static struct gateway_proc gw;
static struct gateway_session a;
static atomic_int phase = P_IDLE;
static atomic_bool stop;
/* [0]: fresh=0, the gateway's own path (loop, cache, encoder pool);
 * [1]: fresh=1 (the default), which also waits for a round trip to A's
 * QEMU when its screen was not confirmed current in the last 80 ms. */
static double samples[2][P_COUNT][MAX_SAMPLES];
static int n_samples[2][P_COUNT];
static int failures;

static double now_ms_f(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* A's screenshots, back to back, fresh=0 and fresh=1 in turn, each counted
 * in the phase it began in. */
static void *sampler(void *arg)
{
	char path[2][160];

	(void)arg;
	for (int k = 0; k < 2; k++)
		snprintf(path[k], sizeof(path[k]), "/v1/sessions/%s/screenshot?quality=70&fresh=%d",
			 a.id, k);
	for (int k = 0; !atomic_load(&stop); k ^= 1) {
		int ph = atomic_load(&phase);
		double t0 = now_ms_f();
		struct http_resp r;
		int rc = http_request("127.0.0.1", gw.port, "GET", path[k], a.control, NULL, 0, 60,
				      &r);
		double ms = now_ms_f() - t0;

		if (rc < 0 || r.status != 200) {
			if (failures++ < 3)
				fprintf(stderr, "bench_loop: A's screenshot: rc %d, %d %.200s\n",
					rc, r.status, r.status && r.body ? r.body : "");
		} else if (n_samples[k][ph] < MAX_SAMPLES) {
			samples[k][ph][n_samples[k][ph]++] = ms;
		}
		http_resp_free(&r);
		usleep(5000);
	}
	return NULL;
}

static int call(const char *method, const char *path, const char *body, int want, json_t **out)
{
	struct http_resp r;
	int rc = http_request("127.0.0.1", gw.port, method, path, gw.key, body,
			      body ? strlen(body) : 0, 300, &r);

	if (rc < 0 || r.status != want) {
		fprintf(stderr, "bench_loop: %s %s -> %d %.300s\n", method, path, r.status,
			r.body ? r.body : "");
		http_resp_free(&r);
		return -1;
	}
	if (out)
		*out = json_incref(r.json);
	http_resp_free(&r);
	return 0;
}

struct shot {
	pthread_t t;
	char path[200];
};

static void *take(void *arg)
{
	struct shot *s = arg;
	struct http_resp r;

	if (http_request("127.0.0.1", gw.port, "GET", s->path, gw.key, NULL, 0, 120, &r) < 0 ||
	    r.status != 200) {
		if (failures++ < 3)
			fprintf(stderr, "bench_loop: B's screenshot %s: %d %.200s\n", s->path,
				r.status, r.status && r.body ? r.body : "");
	}
	http_resp_free(&r);
	return NULL;
}

static int run_phases(int idle_s)
{
	char id[64], path[200];
	json_t *j = NULL;

	sleep((unsigned)idle_s);
	atomic_store(&phase, P_BOOT);
	if (call("POST", "/v1/sessions?wait=ready&timeout_s=300", "{\"image\":\"tiny\"}", 201, &j) <
	    0)
		return -1;
	snprintf(id, sizeof(id), "%s", json_string_value(json_object_get(j, "id")));
	json_decref(j);

	static const struct {
		enum phase ph;
		const char *op, *body;
	} ops[] = {
		{ P_PAUSE_MEM, "pause", "{\"mode\":\"memory\"}" },
		{ P_RESUME_MEM, "resume", NULL },
		{ P_PAUSE_DISK, "pause", "{\"mode\":\"disk\"}" },
		{ P_RESUME_DISK, "resume", NULL },
	};
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		int64_t until = fs_now_ms() + 1000; /* at least a second of samples */

		atomic_store(&phase, ops[i].ph);
		snprintf(path, sizeof(path), "/v1/sessions/%s/%s", id, ops[i].op);
		if (call("POST", path, ops[i].body, 200, NULL) < 0)
			return -1;
		while (fs_now_ms() < until)
			usleep(20000);
	}

	atomic_store(&phase, P_SHOTS);
	for (int round = 0; round < 4; round++) {
		struct shot shots[16];

		for (int i = 0; i < 16; i++) {
			snprintf(shots[i].path, sizeof(shots[i].path),
				 "/v1/sessions/%s/screenshot?format=%s&width=%d&quality=%d", id,
				 i % 2 ? "png" : "jpeg", 1280 - 37 * i - round, 30 + 4 * i + round);
			pthread_create(&shots[i].t, NULL, take, &shots[i]);
		}
		for (int i = 0; i < 16; i++)
			pthread_join(shots[i].t, NULL);
	}

	atomic_store(&phase, P_DELETE);
	{
		int64_t until = fs_now_ms() + 1000;

		snprintf(path, sizeof(path), "/v1/sessions/%s", id);
		if (call("DELETE", path, NULL, 200, NULL) < 0)
			return -1;
		while (fs_now_ms() < until)
			usleep(20000);
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *slow = "2000";
	int idle_s = 5, rc = 1, met = 1;
	pthread_t t;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--slow-ms") && i + 1 < argc)
			slow = argv[++i];
		else if (!strcmp(argv[i], "--idle-s") && i + 1 < argc)
			idle_s = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: bench_loop [--slow-ms N] [--idle-s N]\n");
			return 2;
		}
	}
	/* Every QEMU start of this gateway waits slow ms twice (before qemu-img
	 * and before the QMP greeting): A's too, before the benchmark begins. */
	setenv("VITRINE_TEST_SLOW_START_MS", slow, 1);
	if (gateway_proc_start(&gw, NULL) < 0)
		return 1;
	if (gateway_proc_create_session(&gw, "{\"image\":\"tiny\"}", 300, &a) < 0)
		goto out;
	{ /* A's first frame has arrived (a fresh screenshot waits for it) */
		char path[160];
		struct http_resp r;

		snprintf(path, sizeof(path), "/v1/sessions/%s/screenshot", a.id);
		http_request("127.0.0.1", gw.port, "GET", path, a.control, NULL, 0, 60, &r);
		http_resp_free(&r);
	}
	pthread_create(&t, NULL, sampler, NULL);
	rc = run_phases(idle_s) < 0;
	atomic_store(&stop, true);
	pthread_join(t, NULL);

	printf("bench_loop: session A's screenshot latency while session B works (tiny guests, "
	       "QEMU start slowed by %s ms twice)\n",
	       slow);
	for (int k = 0; k < 2; k++) {
		double idle99 = n_samples[k][P_IDLE]
					? stats_pct(samples[k][P_IDLE], n_samples[k][P_IDLE], 0.99)
					: 0;

		printf("\n%s\n", k ? "fresh=1 (default: with the freshness round trip to A's QEMU)"
				   : "fresh=0 (the gateway's own path: the target)");
		printf("%-20s %7s %9s %9s %9s %10s\n", "phase", "n", "p50 ms", "p99 ms", "max ms",
		       "p99/idle");
		for (int p = 0; p < P_COUNT; p++) {
			int n = n_samples[k][p];
			double p50, p99, max;

			if (!n) {
				printf("%-20s %7d (no samples)\n", phase_names[p], n);
				continue;
			}
			p50 = stats_pct(samples[k][p], n, 0.50);
			p99 = stats_pct(samples[k][p], n, 0.99);
			max = samples[k][p][n - 1];
			printf("%-20s %7d %9.1f %9.1f %9.1f %9.2fx\n", phase_names[p], n, p50, p99,
			       max, idle99 > 0 ? p99 / idle99 : 0);
			if (k == 0 && p != P_IDLE && (p99 > 30 || max > 250))
				met = 0;
		}
	}
	printf("failed requests: %d\n", failures);
	printf("target (p99 <= 30 ms, max <= 250 ms while B works): %s\n", met ? "met" : "NOT met");
out:
	gateway_proc_delete_sessions(&gw);
	gateway_proc_stop(&gw);
	return rc;
}
