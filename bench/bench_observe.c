/* bench/bench_observe.c: what observability costs the agent. Gateways run
 * side by side in one run, each with one session on the same image, and
 * differ only in what they observe:
 *  - "plain": no audit log, no access log, nobody reads /metrics;
 *  - "metrics+audit": --audit-log and --access-log written, GET /metrics
 *    scraped once a second by a thread of this program;
 *  - "…+recording": the same, and the session records its screen and
 *    timeline ("record": true).
 * Rounds are interleaved (a screenshot, then a click answered with its
 * settled screenshot, on each gateway in turn), so the machine's noise falls
 * on all of them alike; p50/p95 of each and the ratio to "plain" are
 * printed. Then a recording's frames and bytes per minute (from its
 * timeline) while the rounds clicked, and with each gateway's CPU (from
 * /proc/PID/stat) over STATIC_S s of nobody touching the screen and over
 * TYPING_S s of words typed into each session every half second (the tiny
 * guest's text area; on the desktop, the page).
 * usage: bench_observe [--image tiny|desktop] [--rounds N] */
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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define STATIC_S 20
#define TYPING_S 10
#define TYPING "{\"action\":\"type\",\"text\":\"fox jumps \"}"

enum { CFG_PLAIN, CFG_OBSERVED, CFG_RECORDING, CFG_COUNT };

static const char *const cfg_names[CFG_COUNT] = { "plain", "metrics+audit",
						  "metrics+audit+recording" };

struct cfg {
	struct gateway_proc gw;
	bool started;
	char id[64];
	char audit[96], access[96];
	double *shot, *act;
	pthread_t scraper;
	bool scraping;
	atomic_bool stop;
	int scrapes;
};

/* Milliseconds, to the microsecond (fs_now_ms counts whole ones). */
static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

static long file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* Reads /metrics once a second until told to stop, as Prometheus would. */
static void *scrape(void *arg)
{
	struct cfg *c = arg;

	while (!atomic_load(&c->stop)) {
		struct http_resp r;

		if (http_request("127.0.0.1", c->gw.port, "GET", "/metrics", c->gw.key, NULL, 0, 10,
				 &r) == 0 &&
		    r.status == 200)
			c->scrapes++;
		http_resp_free(&r);
		for (int i = 0; i < 10 && !atomic_load(&c->stop); i++)
			usleep(100 * 1000);
	}
	return NULL;
}

static int start(struct cfg *c, int k, const char *image)
{
	const char *args[8] = { NULL };
	struct http_resp r;
	char body[256];

	if (k != CFG_PLAIN) {
		snprintf(c->audit, sizeof(c->audit), "/tmp/vitrine-bench-observe-%d-%d.audit",
			 (int)getpid(), k);
		snprintf(c->access, sizeof(c->access), "/tmp/vitrine-bench-observe-%d-%d.access",
			 (int)getpid(), k);
		args[0] = "--audit-log";
		args[1] = c->audit;
		args[2] = "--access-log";
		args[3] = c->access;
	}
	if (gateway_proc_start(&c->gw, args) < 0)
		return -1;
	c->started = true;
	snprintf(body, sizeof(body), "{\"image\":\"%s\"%s}", image,
		 k == CFG_RECORDING ? ",\"record\":true" : "");
	if (http_request("127.0.0.1", c->gw.port, "POST", "/v1/sessions?wait=ready", c->gw.key,
			 body, strlen(body), 600, &r) < 0 ||
	    r.status != 201) {
		fprintf(stderr, "bench_observe: %s: create: %d %s\n", cfg_names[k], r.status,
			r.body ? r.body : "");
		http_resp_free(&r);
		return -1;
	}
	snprintf(c->id, sizeof(c->id), "%s", json_string_value(json_object_get(r.json, "id")));
	http_resp_free(&r);
	if (k != CFG_PLAIN) {
		if (pthread_create(&c->scraper, NULL, scrape, c) != 0)
			return -1;
		c->scraping = true;
	}
	return 0;
}

/* One round on c: a screenshot, then a click with its settled screenshot,
 * somewhere new each round (so the screen changes: the tiny guest marks
 * every click; on the desktop a click on a plain page changes little). */
static int round_on(struct cfg *c, int k, int i)
{
	char path[160], act[160];

	snprintf(act, sizeof(act),
		 "{\"action\":\"left_click\",\"coordinate\":[%d,%d],\"screenshot\":true}",
		 40 + (i * 97) % 1200, 470 + (i * 31) % 280);
	struct http_resp r;
	double t;

	snprintf(path, sizeof(path), "/v1/sessions/%s/screenshot", c->id);
	t = now_ms();
	if (http_request("127.0.0.1", c->gw.port, "GET", path, c->gw.key, NULL, 0, 30, &r) < 0 ||
	    r.status != 200) {
		fprintf(stderr, "bench_observe: %s: screenshot: %d\n", cfg_names[k], r.status);
		http_resp_free(&r);
		return -1;
	}
	c->shot[i] = now_ms() - t;
	http_resp_free(&r);
	snprintf(path, sizeof(path), "/v1/sessions/%s/actions", c->id);
	t = now_ms();
	if (http_request("127.0.0.1", c->gw.port, "POST", path, c->gw.key, act, strlen(act), 60,
			 &r) < 0 ||
	    r.status != 200) {
		fprintf(stderr, "bench_observe: %s: action: %d %s\n", cfg_names[k], r.status,
			r.body ? r.body : "");
		http_resp_free(&r);
		return -1;
	}
	c->act[i] = now_ms() - t;
	http_resp_free(&r);
	return 0;
}

/* The recording's frames and bytes so far, from its timeline. */
static int recording_totals(struct cfg *c, double *bytes, double *ms, size_t *frames)
{
	char path[160];
	struct http_resp r;
	json_t *frame;
	size_t i;

	*bytes = 0;
	snprintf(path, sizeof(path), "/v1/sessions/%s/recording", c->id);
	if (http_request("127.0.0.1", c->gw.port, "GET", path, c->gw.key, NULL, 0, 30, &r) < 0 ||
	    r.status != 200 || !r.json) {
		printf("recording: GET %s answered %d\n", path, r.status);
		http_resp_free(&r);
		return -1;
	}
	json_array_foreach(json_object_get(r.json, "frames"), i,
			   frame) *bytes += (double)json_integer_value(json_object_get(frame,
										       "bytes"));
	*ms = (double)json_integer_value(json_object_get(r.json, "duration_ms"));
	*frames = json_array_size(json_object_get(r.json, "frames"));
	http_resp_free(&r);
	return 0;
}

static void print_rate(const char *what, double bytes, double ms, size_t frames)
{
	printf("recording, %-38s %5zu frames, %7.0f KiB in %5.1f s: %6.2f MiB a minute\n", what,
	       frames, bytes / 1024, ms / 1000,
	       ms > 0 ? bytes / (1024.0 * 1024.0) / (ms / 60000.0) : 0.0);
}

/* The gateway's CPU time so far (utime + stime), in clock ticks; -1 when
 * /proc cannot say. */
static long long gateway_ticks(const struct cfg *c)
{
	char path[64], buf[1024], *p;
	long long ut, st;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)c->gw.pid);
	if (!(f = fopen(path, "r")))
		return -1;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	/* state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
	if (!p ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lld %lld", &ut, &st) != 2)
		return -1;
	return ut + st;
}

/* Over seconds s: with action NULL nobody acts; else each session gets
 * action (a body for /actions) twice a second, in turn. Prints the
 * recording's frames and bytes a minute over the phase, and each gateway's
 * CPU. Returns 0, or -1 when an action or the timeline failed. */
static int cost_phase(struct cfg *cfg, const char *what, const char *action, int seconds)
{
	long long t0[CFG_COUNT];
	double b0, b1, ms0, ms1, elapsed;
	size_t f0, f1;
	int64_t start;

	if (recording_totals(&cfg[CFG_RECORDING], &b0, &ms0, &f0) < 0)
		return -1;
	for (int k = 0; k < CFG_COUNT; k++)
		t0[k] = gateway_ticks(&cfg[k]);
	start = fs_now_ms();
	while (fs_now_ms() - start < seconds * 1000) {
		for (int k = 0; action && k < CFG_COUNT; k++) {
			char path[160];
			struct http_resp r;

			snprintf(path, sizeof(path), "/v1/sessions/%s/actions", cfg[k].id);
			if (http_request("127.0.0.1", cfg[k].gw.port, "POST", path, cfg[k].gw.key,
					 action, strlen(action), 60, &r) < 0 ||
			    r.status != 200) {
				fprintf(stderr, "bench_observe: %s: %s %d\n", cfg_names[k], what,
					r.status);
				http_resp_free(&r);
				return -1;
			}
			http_resp_free(&r);
		}
		usleep(500 * 1000);
	}
	elapsed = (double)(fs_now_ms() - start);
	if (recording_totals(&cfg[CFG_RECORDING], &b1, &ms1, &f1) < 0)
		return -1;
	print_rate(what, b1 - b0, ms1 - ms0, f1 - f0);
	printf("  gateway CPU over the same %.1f s:", elapsed / 1000);
	for (int k = 0; k < CFG_COUNT; k++) {
		long long t1 = gateway_ticks(&cfg[k]);

		if (t0[k] < 0 || t1 < 0)
			printf(" %s ?", cfg_names[k]);
		else
			printf(" %s %.1f%%", cfg_names[k],
			       100.0 * (double)(t1 - t0[k]) / (double)sysconf(_SC_CLK_TCK) *
				       1000.0 / elapsed);
		printf(k + 1 < CFG_COUNT ? "," : "\n");
	}
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	const char *image = "tiny";
	struct cfg cfg[CFG_COUNT] = { 0 };
	int rounds = 40, rc = 0;
	double b0, ms0;
	size_t f0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--image") && i + 1 < argc)
			image = argv[++i];
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else {
			fprintf(stderr,
				"usage: bench_observe [--image tiny|desktop] [--rounds N]\n");
			return 2;
		}
	}
	if (rounds < 5 || rounds > 1000) {
		fprintf(stderr, "bench_observe: --rounds 5..1000\n");
		return 2;
	}
	printf("== %d gateways, one %s session each; %d interleaved rounds\n", CFG_COUNT, image,
	       rounds);
	fflush(stdout);
	for (int k = 0; k < CFG_COUNT && rc == 0; k++) {
		cfg[k].shot = calloc((size_t)rounds, sizeof(double));
		cfg[k].act = calloc((size_t)rounds, sizeof(double));
		rc = !cfg[k].shot || !cfg[k].act ? -1 : start(&cfg[k], k, image);
	}
	for (int i = 0; i < rounds && rc == 0; i++)
		for (int k = 0; k < CFG_COUNT && rc == 0; k++)
			rc = round_on(&cfg[(i + k) % CFG_COUNT], (i + k) % CFG_COUNT, i);
	/* Bytes a minute: while the rounds changed the screen, then, with
	 * each gateway's CPU, over STATIC_S seconds of nobody touching it and
	 * TYPING_S of typing. */
	if (rc == 0 && recording_totals(&cfg[CFG_RECORDING], &b0, &ms0, &f0) == 0) {
		print_rate("while the rounds clicked:", b0, ms0, f0);
		rc = cost_phase(cfg, "static screen, nobody acting:", NULL, STATIC_S);
		if (rc == 0)
			rc = cost_phase(cfg, "typing every half second:", TYPING, TYPING_S);
	}
	for (int k = 0; k < CFG_COUNT; k++) {
		if (cfg[k].scraping) {
			atomic_store(&cfg[k].stop, true);
			pthread_join(cfg[k].scraper, NULL);
		}
		if (cfg[k].started)
			gateway_proc_stop(&cfg[k].gw);
		if (k != CFG_PLAIN && cfg[k].started) {
			long audit = file_size(cfg[k].audit), access = file_size(cfg[k].access);

			printf("%s: %d scrapes of /metrics, audit log %ld bytes, access log %ld "
			       "bytes\n",
			       cfg_names[k], cfg[k].scrapes, audit, access);
			unlink(cfg[k].audit);
			unlink(cfg[k].access);
		}
	}
	if (rc == 0) {
		double shot50 = stats_pct(cfg[CFG_PLAIN].shot, rounds, 0.5);
		double act50 = stats_pct(cfg[CFG_PLAIN].act, rounds, 0.5);

		for (int k = 0; k < CFG_COUNT; k++) {
			double s50 = stats_pct(cfg[k].shot, rounds, 0.5);
			double a50 = stats_pct(cfg[k].act, rounds, 0.5);

			printf("%-24s screenshot p50 %7.2f ms p95 %7.2f ms (x%.2f)   action+shot "
			       "p50 %7.1f ms p95 %7.1f ms (x%.2f)\n",
			       cfg_names[k], s50, stats_pct(cfg[k].shot, rounds, 0.95),
			       s50 / shot50, a50, stats_pct(cfg[k].act, rounds, 0.95), a50 / act50);
		}
	}
	for (int k = 0; k < CFG_COUNT; k++) {
		free(cfg[k].shot);
		free(cfg[k].act);
	}
	return rc == 0 ? 0 : 1;
}
