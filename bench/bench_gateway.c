/* bench/bench_gateway.c: the agent's view of latency, on the desktop guest
 * showing a static page, measured in one run:
 *  - screenshot: GET /v1/sessions/{id}/screenshot (JPEG, 1280x800, fresh)
 *    against QMP screendump to PNG (the path the prototype had), p50/p95;
 *  - action -> settled screenshot: POST .../actions with "screenshot": true
 *    against the reference computer-use loop (act, sleep 2 s, screenshot).
 * Targets: screenshot p50 <= 20 ms and >= 5x faster than screendump-PNG;
 * action -> settled screenshot >= 4x faster than the fixed sleep.
 * usage: bench_gateway [--shots N] [--actions N] */
#include "common/fsutil.h"
#include "common/http_client.h"
#include "tests/lib/gateway_proc.h"
#include "tests/lib/stats.h"
#include "vmm-qemu/accel.h"
#include "vmm-qemu/vm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PAGE_URL                                                                                   \
	"data:text/html,<title>static</title><body style='margin:0;font:24px sans-serif'>"         \
	"<h1 style='background:%2328a;color:white;padding:20px'>A static page</h1>"                \
	"<p style='padding:20px'>Nothing here moves.</p></body>"

static double now_ms(void)
{
	return (double)fs_now_ms();
}

/* Baseline: QMP screendump PNG on a desktop guest booted directly. */
static int screendump_series(double *v, int n)
{
	struct vmm_vm_opts opts = { 0 };
	struct vmm_image img;
	struct vmm_spec spec;
	struct vmm_vm *vm = NULL;
	char err[2048], why[256];
	int rc;

	if (vmm_image_load("desktop", &img, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench: %s\n", err);
		return -1;
	}
	vmm_spec_defaults(&spec);
	spec.image = &img;
	spec.url = PAGE_URL;
	vmm_accel_resolve(VMM_ACCEL_AUTO, &img, "qemu-system-x86_64", &spec.accel, why,
			  sizeof(why));
	rc = vmm_vm_start(&spec, &opts, &vm, err, sizeof(err));
	if (rc == 0)
		rc = vmm_vm_wait_phase(vm, "ready", 300000, err, sizeof(err));
	for (int i = 0; rc == 0 && i < n; i++) {
		double t = now_ms();

		rc = vmm_vm_screendump(vm, "/tmp/vitrine-bench-shot.png", "png", err, sizeof(err));
		v[i] = now_ms() - t;
	}
	if (rc < 0)
		fprintf(stderr, "bench: screendump: %s\n", err);
	unlink("/tmp/vitrine-bench-shot.png");
	vmm_vm_destroy(vm);
	return rc;
}

int main(int argc, char **argv)
{
	int shots = 30, actions = 5;
	double *sd, *gs, *act_ours, *act_ref, p50_sd, p50_gs, p95_gs, p50_ours, p50_ref;
	struct gateway_proc gw;
	struct http_resp r;
	char body[1024], path_shot[160], path_act[160], id[64];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--shots") && i + 1 < argc)
			shots = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--actions") && i + 1 < argc)
			actions = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: bench_gateway [--shots N] [--actions N]\n");
			return 2;
		}
	}
	if (shots < 5 || shots > 1000 || actions < 1 || actions > 100) {
		fprintf(stderr, "bench_gateway: --shots 5..1000, --actions 1..100\n");
		return 2;
	}
	sd = calloc((size_t)shots, sizeof(double));
	gs = calloc((size_t)shots, sizeof(double));
	act_ours = calloc((size_t)actions, sizeof(double));
	act_ref = calloc((size_t)actions, sizeof(double));
	printf("== baseline: QMP screendump PNG, desktop guest 1280x800\n");
	fflush(stdout);
	if (screendump_series(sd, shots) < 0)
		return 1;

	printf("== gateway: desktop session 1280x800\n");
	fflush(stdout);
	if (gateway_proc_start(&gw, NULL) < 0)
		return 1;
	snprintf(body, sizeof(body), "{\"image\":\"desktop\",\"url\":\"%s\"}", PAGE_URL);
	if (http_request("127.0.0.1", gw.port, "POST", "/v1/sessions?wait=ready", gw.key, body,
			 strlen(body), 600, &r) < 0 ||
	    r.status != 201) {
		fprintf(stderr, "bench: create: %d %s\n", r.status, r.body ? r.body : "");
		gateway_proc_stop(&gw);
		return 1;
	}
	snprintf(id, sizeof(id), "%s", json_string_value(json_object_get(r.json, "id")));
	http_resp_free(&r);
	snprintf(path_shot, sizeof(path_shot), "/v1/sessions/%s/screenshot", id);
	snprintf(path_act, sizeof(path_act), "/v1/sessions/%s/actions", id);
	for (int i = 0; i < shots; i++) {
		double t = now_ms();

		if (http_request("127.0.0.1", gw.port, "GET", path_shot, gw.key, NULL, 0, 30, &r) <
			    0 ||
		    r.status != 200) {
			fprintf(stderr, "bench: screenshot failed: %d\n", r.status);
			gateway_proc_stop(&gw);
			return 1;
		}
		gs[i] = now_ms() - t;
		http_resp_free(&r);
	}
	/* Clicks on the page's plain background: a static page stays still. */
	for (int i = 0; i < actions; i++) {
		const char *ours =
			"{\"action\":\"left_click\",\"coordinate\":[900,600],\"screenshot\":true}";
		const char *plain = "{\"action\":\"left_click\",\"coordinate\":[900,600]}";
		double t = now_ms();

		if (http_request("127.0.0.1", gw.port, "POST", path_act, gw.key, ours, strlen(ours),
				 60, &r) < 0 ||
		    r.status != 200) {
			fprintf(stderr, "bench: action failed: %d %s\n", r.status,
				r.body ? r.body : "");
			gateway_proc_stop(&gw);
			return 1;
		}
		act_ours[i] = now_ms() - t;
		http_resp_free(&r);
		t = now_ms();
		http_request("127.0.0.1", gw.port, "POST", path_act, gw.key, plain, strlen(plain),
			     60, &r);
		http_resp_free(&r);
		usleep(2000 * 1000);
		http_request("127.0.0.1", gw.port, "GET", path_shot, gw.key, NULL, 0, 30, &r);
		http_resp_free(&r);
		act_ref[i] = now_ms() - t;
	}
	gateway_proc_stop(&gw);

	p50_sd = stats_pct(sd, shots, 0.5);
	printf("screendump PNG (QMP)        p50 %7.2f ms  p95 %7.2f ms  (n=%d)\n", p50_sd,
	       stats_pct(sd, shots, 0.95), shots);
	p50_gs = stats_pct(gs, shots, 0.5);
	p95_gs = stats_pct(gs, shots, 0.95);
	printf("gateway screenshot JPEG     p50 %7.2f ms  p95 %7.2f ms  (n=%d, over HTTP)\n",
	       p50_gs, p95_gs, shots);
	printf("  ratio screendump/gateway: %.1fx (target >= 5x); p50 <= 20 ms: %s\n",
	       p50_sd / p50_gs, p50_gs <= 20 ? "met" : "NOT met");
	p50_ours = stats_pct(act_ours, actions, 0.5);
	p50_ref = stats_pct(act_ref, actions, 0.5);
	printf("action -> settled screenshot p50 %7.1f ms  (n=%d)\n", p50_ours, actions);
	printf("act + sleep 2 s + screenshot p50 %7.1f ms  (n=%d)\n", p50_ref, actions);
	printf("  ratio fixed-sleep/settled: %.1fx (target >= 4x)\n", p50_ref / p50_ours);
	return 0;
}
