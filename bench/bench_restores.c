/* bench/bench_restores.c: desktop sessions restored from one template in a
 * row, one at a time: each POST /v1/sessions?wait=ready is timed, its
 * screenshot must show the page's 20x20 magenta marker, and it is deleted
 * before the next. The template is the end-to-end tests' (tests/lib/
 * e2e_template.h: tests/e2e/pages/life.html at 1280x800), found on
 * VITRINE_HOME when $VITRINE_E2E_TEMPLATE names one, else made here (one
 * desktop boot) and removed at the end. Prints each restore's time to
 * ready, then the first, median, p90, slowest and last; exits 1 when a
 * restore fails or does not show the page, or a guest is left behind.
 * test_desktop_template restores a few in a row and asserts the same of
 * each; this is its former printout of 20.
 * usage: bench_restores [--runs N] (default 20, 2..100) */
#include "common/fsutil.h"
#include "common/http_client.h"
#include "tests/lib/e2e_template.h"
#include "tests/lib/gateway_proc.h"
#include "tests/lib/png.h"
#include "tests/lib/ppm.h"
#include "tests/lib/stats.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RUNS 100

static struct gateway_proc gw;

/* Whether session id's screenshot shows the page's marker. */
static bool shows_page(const char *id, const char *token)
{
	char path[160];
	struct http_resp r;
	struct ppm img;
	int x0, y0, x1, y1;
	bool ok = false;

	snprintf(path, sizeof(path), "/v1/sessions/%s/screenshot?format=png", id);
	if (http_request("127.0.0.1", gw.port, "GET", path, token, NULL, 0, 60, &r) == 0 &&
	    r.status == 200 && png_decode((const unsigned char *)r.body, r.body_len, &img) == 0) {
		ok = ppm_find_bbox(&img, 0xFF00AA, 2, &x0, &y0, &x1, &y1) && x1 - x0 + 1 == 20 &&
		     y1 - y0 + 1 == 20;
		ppm_free(&img);
	}
	http_resp_free(&r);
	return ok;
}

/* One restore of tpl to ready: its ms into *ms. Returns 0, or -1 after
 * printing why. */
static int one_restore(const char *tpl, int i, double *ms)
{
	char body[160], path[160], id[64], ctl[64];
	struct http_resp r;
	int64_t t0 = fs_now_ms();
	bool shown;

	snprintf(body, sizeof(body), "{\"template\":\"%s\"}", tpl);
	if (http_request("127.0.0.1", gw.port, "POST", "/v1/sessions?wait=ready", gw.key, body,
			 strlen(body), 300, &r) < 0 ||
	    r.status != 201) {
		fprintf(stderr, "bench_restores: restore %d: %d %s\n", i + 1, r.status,
			r.body ? r.body : "");
		http_resp_free(&r);
		return -1;
	}
	*ms = (double)(fs_now_ms() - t0);
	snprintf(id, sizeof(id), "%s", json_string_value(json_object_get(r.json, "id")));
	snprintf(ctl, sizeof(ctl), "%s",
		 json_string_value(json_object_get(json_object_get(r.json, "tokens"), "control")));
	http_resp_free(&r);
	shown = shows_page(id, ctl);
	snprintf(path, sizeof(path), "/v1/sessions/%s", id);
	if (http_request("127.0.0.1", gw.port, "DELETE", path, gw.key, NULL, 0, 60, &r) == 0)
		http_resp_free(&r);
	if (!shown) {
		fprintf(stderr, "bench_restores: restore %d does not show the page\n", i + 1);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int runs = 20, rc = 0;
	double ms[MAX_RUNS], first, last;
	char tpl[64];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--runs") && i + 1 < argc) {
			runs = atoi(argv[++i]);
		} else {
			fprintf(stderr, "usage: bench_restores [--runs N]\n");
			return 2;
		}
	}
	if (runs < 2 || runs > MAX_RUNS) {
		fprintf(stderr, "bench_restores: --runs 2..%d\n", MAX_RUNS);
		return 2;
	}
	if (gateway_proc_start(&gw, NULL) < 0)
		return 1;
	if (e2e_template_get(&gw, tpl, sizeof(tpl), NULL) < 0) {
		gateway_proc_stop(&gw);
		return 1;
	}
	printf("== %d restores in a row of template %s (desktop, 1280x800)\n", runs, tpl);
	fflush(stdout);
	for (int i = 0; i < runs && rc == 0; i++) {
		rc = one_restore(tpl, i, &ms[i]);
		if (rc == 0) {
			printf("restore %2d: ready in %6.0f ms, shows the page\n", i + 1, ms[i]);
			fflush(stdout);
		}
	}
	if (rc == 0 && gateway_proc_guests(&gw) != 0) {
		fprintf(stderr, "bench_restores: %d guests left behind\n",
			gateway_proc_guests(&gw));
		rc = -1;
	}
	if (rc == 0) {
		first = ms[0];
		last = ms[runs - 1];
		printf("to ready: first %.0f ms, median %.0f ms, p90 %.0f ms, slowest %.0f ms, last "
		       "%.0f ms\n",
		       first, stats_pct(ms, runs, 0.5), stats_pct(ms, runs, 0.9),
		       stats_pct(ms, runs, 1.0), last);
	}
	gateway_proc_delete_sessions(&gw);
	e2e_template_release(&gw, tpl);
	gateway_proc_stop(&gw);
	return rc == 0 ? 0 : 1;
}
