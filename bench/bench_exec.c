/* bench/bench_exec.c: a command's round trip on the desktop guest, in one
 * run: POST /v1/sessions/{id}/exec of `true` through the gateway and
 * vitrine-agent (what an agent sees: as the desktop user, its own process
 * group, a clean environment, a working directory), against qemu-ga's
 * guest-exec with guest-exec-status polling on the same guest, both with
 * the same semantics (setsid, setpriv, env, sh: what the gateway ran
 * before it had an agent of its own) and bare (/bin/true as root: the
 * floor of that path). p50/p95 of each and the ratios.
 * Target: the gateway's p50 <= 100 ms under TCG.
 * usage: bench_exec [--runs N] */
#include "common/fsutil.h"
#include "common/http_client.h"
#include "tests/lib/gateway_proc.h"
#include "tests/lib/stats.h"
#include "vmm-qemu/qga_client.h"
#include "vmm-qemu/run_dir.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	const char *body = "{\"image\":\"desktop\",\"page\":\"<p>bench</p>\"}";
	int runs = 50;
	double *gw_ms, *qga_ms, *qgab_ms;
	char path[256], qga[512], err[512];
	struct gateway_proc g;
	struct qga_client *c = NULL;
	struct http_resp r;
	int rc = 1;

	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--runs") && i + 1 < argc)
			runs = atoi(argv[++i]);
	if (runs < 5)
		runs = 5;
	gw_ms = calloc((size_t)runs, sizeof(double));
	qga_ms = calloc((size_t)runs, sizeof(double));
	qgab_ms = calloc((size_t)runs, sizeof(double));
	if (!gw_ms || !qga_ms || !qgab_ms || gateway_proc_start(&g, NULL) < 0)
		return 1;
	if (http_request("127.0.0.1", g.port, "POST", "/v1/sessions?wait=ready", g.key, body,
			 strlen(body), 600, &r) < 0 ||
	    r.status != 201) {
		fprintf(stderr, "bench: create: %d %s\n", r.status, r.body ? r.body : "");
		goto out;
	}
	snprintf(path, sizeof(path), "/v1/sessions/%s/exec",
		 json_string_value(json_object_get(r.json, "id")));
	http_resp_free(&r);
	if (gateway_proc_qga_socket(&g, qga, sizeof(qga)) < 0 ||
	    qga_client_connect(qga, 10000, &c, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench: qga: %s\n", err);
		goto out;
	}
	/* Interleaved, so both see the same load. */
	for (int i = -3; i < runs; i++) {
		const char *argv_true[] = { "/bin/true", NULL };
		const char *argv_user[] = { "/usr/bin/setsid",
					    "/usr/bin/setpriv",
					    "--reuid=1000",
					    "--regid=1000",
					    "--init-groups",
					    "--inh-caps=-all",
					    "/usr/bin/env",
					    "-i",
					    "HOME=/home/vitrine",
					    "PATH=/usr/local/bin:/usr/bin:/bin",
					    "/bin/sh",
					    "-c",
					    "cd \"$0\" && exec /bin/sh -c \"$1\"",
					    "/home/vitrine",
					    "true",
					    NULL };
		struct qga_exec_result res;
		int64_t t0 = fs_now_ms();

		if (http_request("127.0.0.1", g.port, "POST", path, g.key, "{\"cmd\":\"true\"}", 14,
				 60, &r) < 0 ||
		    r.status != 200) {
			fprintf(stderr, "bench: exec: %d %s\n", r.status, r.body ? r.body : "");
			goto out;
		}
		http_resp_free(&r);
		if (i >= 0)
			gw_ms[i] = (double)(fs_now_ms() - t0);
		t0 = fs_now_ms();
		if (qga_client_exec(c, argv_true, NULL, NULL, 0, 60000, &res, err, sizeof(err)) <
		    0) {
			fprintf(stderr, "bench: guest-exec: %s\n", err);
			goto out;
		}
		qga_exec_result_free(&res);
		if (i >= 0)
			qgab_ms[i] = (double)(fs_now_ms() - t0);
		t0 = fs_now_ms();
		if (qga_client_exec(c, argv_user, NULL, NULL, 0, 60000, &res, err, sizeof(err)) <
		    0) {
			fprintf(stderr, "bench: guest-exec: %s\n", err);
			goto out;
		}
		qga_exec_result_free(&res);
		if (i >= 0)
			qga_ms[i] = (double)(fs_now_ms() - t0);
	}
	{
		double g50 = stats_pct(gw_ms, runs, 0.5), g95 = stats_pct(gw_ms, runs, 0.95);
		double q50 = stats_pct(qga_ms, runs, 0.5), q95 = stats_pct(qga_ms, runs, 0.95);
		double b50 = stats_pct(qgab_ms, runs, 0.5), b95 = stats_pct(qgab_ms, runs, 0.95);

		printf("exec `true` round trip, desktop guest, %d runs each, interleaved (TCG):\n",
		       runs);
		printf("  gateway + vitrine-agent (POST .../exec, as the user): p50 %6.1f ms  p95 %6.1f ms\n",
		       g50, g95);
		printf("  qemu-ga guest-exec + polling, as the user:            p50 %6.1f ms  p95 %6.1f ms"
		       "  (%.1fx / %.1fx the gateway)\n",
		       q50, q95, q50 / (g50 > 0 ? g50 : 1), q95 / (g95 > 0 ? g95 : 1));
		printf("  qemu-ga guest-exec + polling, bare /bin/true as root: p50 %6.1f ms  p95 %6.1f ms"
		       "  (%.1fx / %.1fx the gateway)\n",
		       b50, b95, b50 / (g50 > 0 ? g50 : 1), b95 / (g95 > 0 ? g95 : 1));
		printf("  target p50 <= 100 ms: %s\n", g50 <= 100 ? "met" : "NOT met");
	}
	rc = 0;
out:
	qga_client_destroy(c);
	gateway_proc_delete_sessions(&g);
	gateway_proc_stop(&g);
	free(gw_ms);
	free(qga_ms);
	free(qgab_ms);
	return rc;
}
