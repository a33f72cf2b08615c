/* bench/bench_ports.c: a guest's web page through the gateway's port
 * route (docs/api.md, "Ports"): busybox httpd in the tiny guest serves a
 * 2 KiB page and 1 MiB; GET /v1/sessions/{id}/ports/8080/... one at a
 * time (p50, p95, requests/s) and from 4 clients at once (requests/s),
 * each request a connection of its own (what http_client does), and the
 * 1 MiB's throughput. No target yet: the numbers to hold later changes to.
 * usage: bench_ports [--runs N] */
#include "common/http_client.h"
#include "tests/lib/gateway_proc.h"
#include "tests/lib/stats.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CLIENTS 4

static struct gateway_proc g;
static char page[256], big[256], token[128];
static int runs = 200;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

/* One GET of path; its time in ms, or -1 when it did not answer 200. */
static double get(const char *path, size_t *len)
{
	struct http_resp r;
	double t0 = now_ms(), t;
	int rc = http_request("127.0.0.1", g.port, "GET", path, token, NULL, 0, 60, &r);

	t = now_ms() - t0;
	if (rc < 0 || r.status != 200)
		t = -1;
	if (len)
		*len = r.body_len;
	http_resp_free(&r);
	return t;
}

static void *client(void *arg)
{
	int *failed = arg;

	for (int i = 0; i < runs / CLIENTS; i++)
		*failed += get(page, NULL) < 0;
	return NULL;
}

int main(int argc, char **argv)
{
	const char *setup = "{\"cmd\":\"sh\",\"args\":[\"-c\",\"mkdir -p /tmp/www && "
			    "yes x | head -c 2048 > /tmp/www/page.html && "
			    "head -c 1048576 /dev/urandom > /tmp/www/big && "
			    "httpd -p 127.0.0.1:8080 -h /tmp/www\"],\"user\":\"root\"}";
	const char *body = "{\"image\":\"tiny\"}";
	pthread_t th[CLIENTS];
	int failed[CLIENTS] = { 0 }, bad = 0, rc = 1;
	double *ms, t0, wall, p50, p95, mib_s = 0;
	char path[256], id[64];
	struct http_resp r;

	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--runs") && i + 1 < argc)
			runs = atoi(argv[++i]);
	if (runs < 20)
		runs = 20;
	if (!(ms = calloc((size_t)runs, sizeof(double))) || gateway_proc_start(&g, NULL) < 0)
		return 1;
	snprintf(token, sizeof(token), "%s", g.key);
	if (http_request("127.0.0.1", g.port, "POST", "/v1/sessions?wait=ready", g.key, body,
			 strlen(body), 600, &r) < 0 ||
	    r.status != 201) {
		fprintf(stderr, "bench: create: %d %s\n", r.status, r.body ? r.body : "");
		goto out;
	}
	snprintf(id, sizeof(id), "%s", json_string_value(json_object_get(r.json, "id")));
	http_resp_free(&r);
	snprintf(path, sizeof(path), "/v1/sessions/%s/exec", id);
	if (http_request("127.0.0.1", g.port, "POST", path, g.key, setup, strlen(setup), 60, &r) <
		    0 ||
	    r.status != 200 || json_integer_value(json_object_get(r.json, "exit_code"))) {
		fprintf(stderr, "bench: httpd: %d %s\n", r.status, r.body ? r.body : "");
		goto out;
	}
	http_resp_free(&r);
	snprintf(page, sizeof(page), "/v1/sessions/%s/ports/8080/page.html", id);
	snprintf(big, sizeof(big), "/v1/sessions/%s/ports/8080/big", id);
	for (int i = 0; i < 5; i++) /* warm up */
		get(page, NULL);
	t0 = now_ms();
	for (int i = 0; i < runs; i++)
		if ((ms[i] = get(page, NULL)) < 0)
			bad++;
	wall = now_ms() - t0;
	p50 = stats_pct(ms, runs, 0.5);
	p95 = stats_pct(ms, runs, 0.95);
	printf("ports: 2 KiB page, one at a time: p50 %.1f ms, p95 %.1f ms, %.0f requests/s "
	       "(%d failed)\n",
	       p50, p95, runs * 1000.0 / wall, bad);
	t0 = now_ms();
	for (int i = 0; i < CLIENTS; i++)
		pthread_create(&th[i], NULL, client, &failed[i]);
	for (int i = 0; i < CLIENTS; i++)
		pthread_join(th[i], NULL);
	wall = now_ms() - t0;
	for (int i = 0; i < CLIENTS; i++)
		bad += failed[i];
	printf("ports: 2 KiB page, %d clients: %.0f requests/s\n", CLIENTS,
	       (runs / CLIENTS) * CLIENTS * 1000.0 / wall);
	for (int i = 0; i < 5; i++) {
		size_t len = 0;
		double t = get(big, &len);

		if (t > 0 && len == 1u << 20 && 1000.0 / t > mib_s)
			mib_s = 1000.0 / t;
	}
	printf("ports: 1 MiB answer: %.1f MiB/s (best of 5)\n", mib_s);
	rc = bad ? 1 : 0;
out:
	gateway_proc_delete_sessions(&g);
	gateway_proc_stop(&g);
	free(ms);
	return rc;
}
