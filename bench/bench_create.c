/* bench/bench_create.c: create to ready (POST /v1/sessions?wait=ready) of
 * a session from a template's warm pool (docs/templates.md "Warm pools"),
 * from a template without a pool, and by a cold boot of the image, N of
 * each interleaved in one run (the host's noise falls on all three alike),
 * p50/p95 each; and the memory (QEMU's resident set) each pool member
 * holds while it waits. Each create's session is deleted before the next,
 * and the pool is full again before each measurement, so that no refill
 * runs beside one. Issue 28's target: from the pool, at most 150 ms p50.
 * Create to first command is not measured: the tiny guest runs no agent.
 * usage: bench_create [--desktop] [--n N] (tiny by default) */
#include "common/fsutil.h"
#include "common/http_client.h"
#include "tests/lib/gateway_proc.h"
#include "tests/lib/stats.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_N 50

static struct gateway_proc gw;
static char tpl_pool[64], tpl_plain[64];

static int vitrine(const char *args)
{
	const char *bin = getenv("VITRINE_BIN") ? getenv("VITRINE_BIN") : "build/vitrine";
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "%s %s >/dev/null 2>&1", bin, args);
	return system(cmd);
}

static int call(const char *method, const char *path, const char *body, int want,
		struct http_resp *out)
{
	struct http_resp r;

	if (http_request("127.0.0.1", gw.port, method, path, gw.key, body, body ? strlen(body) : 0,
			 300, &r) < 0 ||
	    r.status != want) {
		fprintf(stderr, "%s %s: %d %s\n", method, path, r.status, r.body ? r.body : "");
		http_resp_free(&r);
		return -1;
	}
	if (out)
		*out = r;
	else
		http_resp_free(&r);
	return 0;
}

/* Waits until tpl_pool's pool has n members ready and none refilling. */
static int pool_full(int n)
{
	char path[128];

	snprintf(path, sizeof(path), "/v1/templates/%s", tpl_pool);
	for (int i = 0; i < 3000; i++) {
		struct http_resp r;
		json_t *p;
		int ready, refilling;

		if (call("GET", path, NULL, 200, &r) < 0)
			return -1;
		p = json_object_get(r.json, "pool");
		ready = (int)json_integer_value(json_object_get(p, "ready"));
		refilling = (int)json_integer_value(json_object_get(p, "refilling"));
		http_resp_free(&r);
		if (ready == n && refilling == 0)
			return 0;
		usleep(100 * 1000);
	}
	fprintf(stderr, "the pool did not fill in 5 min\n");
	return -1;
}

/* One create of body to ready and its delete: the create's ms, or -1.
 * want_pool: the answer's boot.pool must be it (NULL: anything). */
static double create(const char *body, const char *want_pool)
{
	int64_t t0 = fs_now_ms();
	double ms;
	struct http_resp r;
	const char *id, *pool;
	char path[128];

	if (call("POST", "/v1/sessions?wait=ready&timeout_s=600", body, 201, &r) < 0)
		return -1;
	ms = (double)(fs_now_ms() - t0);
	pool = json_string_value(json_object_get(json_object_get(r.json, "boot"), "pool"));
	if (want_pool && (!pool || strcmp(pool, want_pool)))
		fprintf(stderr, "warning: %s was a pool %s, not a %s\n", body, pool ? pool : "-",
			want_pool);
	id = json_string_value(json_object_get(r.json, "id"));
	snprintf(path, sizeof(path), "/v1/sessions/%s", id ? id : "none");
	http_resp_free(&r);
	if (call("DELETE", path, NULL, 200, NULL) < 0)
		return -1;
	return ms;
}

/* What each pool member's QEMU holds (KiB, from /proc/PID/status: its
 * resident set, of which private and of which file-backed: the template's
 * RAM file, shared) and its name, from the records of the state dir
 * ("pool", "guest": {"pid"}: its supervisor, whose child QEMU is); their
 * count. */
struct member_mem {
	char name[32];
	long rss, anon, file;
};

static int member_mem(struct member_mem *m, int max)
{
	DIR *d = opendir(gw.state_dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)) && n < max) {
		char path[512], line[256];
		json_t *rec;
		json_int_t pid;
		FILE *f;

		if (!strstr(e->d_name, ".json"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", gw.state_dir, e->d_name);
		if (!(rec = json_load_file(path, 0, NULL)))
			continue;
		pid = json_integer_value(json_object_get(json_object_get(rec, "guest"), "pid"));
		if (json_object_get(rec, "pool") && pid > 0) {
			long long child = 0;

			/* the record names its supervisor: QEMU is its child */
			snprintf(path, sizeof(path), "/proc/%lld/task/%lld/children",
				 (long long)pid, (long long)pid);
			if ((f = fopen(path, "r"))) {
				if (fscanf(f, "%lld", &child) != 1)
					child = 0;
				fclose(f);
			}
			snprintf(path, sizeof(path), "/proc/%lld/status",
				 child > 0 ? child : (long long)pid);
			m[n] = (struct member_mem){ .rss = -1, .anon = -1, .file = -1 };
			if ((f = fopen(path, "r"))) {
				while (fgets(line, sizeof(line), f)) {
					sscanf(line, "Name: %31s", m[n].name);
					sscanf(line, "VmRSS: %ld", &m[n].rss);
					sscanf(line, "RssAnon: %ld", &m[n].anon);
					sscanf(line, "RssFile: %ld", &m[n].file);
				}
				fclose(f);
			}
			n++;
		}
		json_decref(rec);
	}
	if (d)
		closedir(d);
	return n;
}

static void report(const char *what, double *v, int n)
{
	printf("  %-28s p50 %7.0f ms   p95 %7.0f ms   (n=%d)\n", what, stats_pct(v, n, 0.5),
	       stats_pct(v, n, 0.95), n);
}

int main(int argc, char **argv)
{
	const char *image = "tiny";
	double pool_ms[MAX_N], plain_ms[MAX_N], cold_ms[MAX_N];
	char args[256], body[128], path[128];
	struct member_mem mm[8];
	int n = 10, rc = 1, members;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--desktop"))
			image = "desktop";
		else if (!strcmp(argv[i], "--n") && i + 1 < argc)
			n = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: bench_create [--desktop] [--n N]\n");
			return 2;
		}
	}
	if (n < 1 || n > MAX_N)
		n = 10;
	snprintf(tpl_pool, sizeof(tpl_pool), "bench-pool-%d", (int)getpid());
	snprintf(tpl_plain, sizeof(tpl_plain), "bench-nopool-%d", (int)getpid());
	for (int t = 0; t < 2; t++) {
		snprintf(args, sizeof(args), "template create %s --image %s --settle 1",
			 t ? tpl_plain : tpl_pool, image);
		/* once more: a loaded host can time a tiny boot out */
		if (vitrine(args) != 0 && vitrine(args) != 0) {
			fprintf(stderr, "vitrine %s failed\n", args);
			goto out_tpl;
		}
	}
	if (gateway_proc_start(&gw, NULL) < 0)
		goto out_tpl;
	snprintf(path, sizeof(path), "/v1/templates/%s", tpl_pool);
	if (call("PATCH", path, "{\"pool\":1}", 200, NULL) < 0 || pool_full(1) < 0)
		goto out;
	members = member_mem(mm, 8);
	printf("bench_create: %s guest, %d of each, interleaved (the host may be loaded by "
	       "others)\n",
	       image, n);
	for (int i = 0; i < members; i++)
		printf("  pool member %d (%s): %ld MiB resident, %ld MiB of it private, %ld MiB "
		       "file-backed (the template's RAM file, QEMU's own: shared)\n",
		       i, mm[i].name, mm[i].rss / 1024, mm[i].anon / 1024, mm[i].file / 1024);
	for (int i = 0; i < n; i++) {
		/* each round in another order */
		for (int k = 0; k < 3; k++) {
			int which = (i + k) % 3;

			if (pool_full(1) < 0)
				goto out;
			if (which == 0) {
				snprintf(body, sizeof(body), "{\"template\":\"%s\"}", tpl_pool);
				pool_ms[i] = create(body, "hit");
			} else if (which == 1) {
				snprintf(body, sizeof(body), "{\"template\":\"%s\"}", tpl_plain);
				plain_ms[i] = create(body, NULL);
			} else {
				snprintf(body, sizeof(body), "{\"image\":\"%s\"}", image);
				cold_ms[i] = create(body, NULL);
			}
			if ((which == 0 ? pool_ms : which == 1 ? plain_ms : cold_ms)[i] < 0)
				goto out;
		}
	}
	report("from the pool", pool_ms, n);
	report("from the template, no pool", plain_ms, n);
	report("cold boot", cold_ms, n);
	printf("  target: from the pool at most 150 ms p50: %s\n",
	       stats_pct(pool_ms, n, 0.5) <= 150 ? "met" : "NOT met");
	rc = 0;
out:
	call("PATCH", path, "{\"pool\":0}", 200, NULL);
	gateway_proc_delete_sessions(&gw);
	gateway_proc_stop(&gw);
out_tpl:
	snprintf(args, sizeof(args), "template rm %s", tpl_pool);
	vitrine(args);
	snprintf(args, sizeof(args), "template rm %s", tpl_plain);
	vitrine(args);
	return rc;
}
