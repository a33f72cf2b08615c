/* tests/integration/test_gateway_restart.c: sessions outlive the gateway
 * (docs/durability.md), with the tiny guest. A gateway killed with SIGKILL
 * while three sessions run (one paused in memory, one on disk) is replaced
 * by a new one that serves all three under their ids and old tokens, with
 * the same screen (the guest's click marks) and files, and the paused ones
 * resume; ten more kills at random moments (in the middle of a pause to
 * disk, a fork, a restore, a resume) lose no session that was answered;
 * with no gateway the grace period runs out and the guest's supervisor
 * pauses it to disk (or kills it), which the next gateway shows; SIGTERM
 * keeps the guests running (--on-stop keep) or pauses them first (pause);
 * torn, unknown and mismatched records become failed sessions that say
 * why, without touching the others or an unrelated process; ids are the
 * node name and lowercase letters and digits; `vitrine gc` refuses while a
 * gateway runs and then removes what no record knows (a checkpoint, a
 * running guest) and nothing else. Nothing is left behind. */
#include "common/base64.h"
#include "common/fsutil.h"
#include "common/http_client.h"
#include "tests/lib/gateway_proc.h"
#include "tests/lib/net.h"
#include "tests/lib/png.h"

#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#define MARK 0xFFFFFF /* the centre pixel of a click mark */
#define NODE "testnode"
#define KILLS 10

static struct gateway_proc gw;
static char tpl[64];

struct session {
	char id[64], ctl[64], view[64];
	int mark_x, mark_y; /* where it was clicked */
};

/* The gateway's options in most tests: guests stay when it stops, and
 * wait a minute for the next one. */
static const char *const keep_args[] = { "--on-stop", "keep",	      "--adopt-grace-s",
					 "60",	      "--on-abandon", "kill",
					 "--node",    NODE,	      NULL };

static struct http_resp req_as(const char *token, const char *method, const char *path,
			       const char *body, int status)
{
	struct http_resp r;
	int rc = http_request("127.0.0.1", gw.port, method, path, token, body,
			      body ? strlen(body) : 0, 120, &r);

	if (rc < 0 || r.status != status)
		fail_msg("%s %s %s -> %d %.300s (want %d)", method, path, body ? body : "",
			 r.status, r.body ? r.body : "", status);
	return r;
}

static const char *str(json_t *j, const char *key)
{
	const char *s = json_string_value(json_object_get(j, key));

	return s ? s : "";
}

static void spath(char *out, size_t len, const struct session *s, const char *what)
{
	snprintf(out, len, "/v1/sessions/%s%s", s->id, what);
}

static void decode_png(json_t *shot, struct ppm *img)
{
	const char *b64 = str(shot, "data");
	unsigned char *raw = malloc(strlen(b64) + 1);
	size_t n;

	assert_non_null(raw);
	assert_int_equal(base64_decode(b64, strlen(b64), raw, strlen(b64), &n), 0);
	assert_int_equal(png_decode(raw, n, img), 0);
	free(raw);
}

static void act(const struct session *s, const char *action, struct ppm *img)
{
	char path[160];
	struct http_resp r;

	spath(path, sizeof(path), s, "/actions");
	r = req_as(s->ctl, "POST", path, action, 200);
	if (img)
		decode_png(json_object_get(r.json, "screenshot"), img);
	http_resp_free(&r);
}

static void screen(const struct session *s, struct ppm *img)
{
	act(s, "{\"action\":\"screenshot\",\"screenshot\":{\"format\":\"png\"}}", img);
}

/* Clicks s at (x, y): the tiny guest draws a mark there. */
static void mark(struct session *s, int x, int y)
{
	char body[200];
	struct ppm img;

	snprintf(body, sizeof(body),
		 "{\"action\":\"left_click\",\"coordinate\":[%d,%d],\"screenshot\":{\"format\":"
		 "\"png\"}}",
		 x, y);
	act(s, body, &img);
	assert_int_equal(ppm_pixel(&img, x, y), MARK);
	ppm_free(&img);
	s->mark_x = x;
	s->mark_y = y;
}

static void assert_marked(const struct session *s)
{
	struct ppm img;

	screen(s, &img);
	if (ppm_pixel(&img, s->mark_x, s->mark_y) != MARK)
		fail_msg("%s lost its mark at %d,%d", s->id, s->mark_x, s->mark_y);
	ppm_free(&img);
}

static void create(struct session *s)
{
	char body[128];
	struct http_resp r;

	memset(s, 0, sizeof(*s));
	snprintf(body, sizeof(body), "{\"template\":\"%s\"}", tpl);
	r = req_as(gw.key, "POST", "/v1/sessions?wait=ready", body, 201);
	assert_string_equal(str(r.json, "status"), "ready");
	snprintf(s->id, sizeof(s->id), "%s", str(r.json, "id"));
	snprintf(s->ctl, sizeof(s->ctl), "%s", str(json_object_get(r.json, "tokens"), "control"));
	snprintf(s->view, sizeof(s->view), "%s", str(json_object_get(r.json, "tokens"), "view"));
	http_resp_free(&r);
}

/* GET s (waiting while it is busy, e.g. being adopted) with its own
 * control token; the answer's JSON (caller decrefs). */
static json_t *get(const struct session *s)
{
	char path[160];
	struct http_resp r;
	json_t *j;

	spath(path, sizeof(path), s, "?wait=ready&timeout_s=120");
	r = req_as(s->ctl, "GET", path, NULL, 200);
	j = json_incref(r.json);
	http_resp_free(&r);
	return j;
}

static void expect_state(const struct session *s, const char *status, const char *paused)
{
	json_t *j = get(s);

	if (strcmp(str(j, "status"), status) || (paused && strcmp(str(j, "paused"), paused)))
		fail_msg("%s is %s %s (%s), want %s %s", s->id, str(j, "status"), str(j, "paused"),
			 str(j, "error"), status, paused ? paused : "");
	json_decref(j);
}

static void op(const struct session *s, const char *what, const char *body, const char *status)
{
	char path[160];
	struct http_resp r;

	spath(path, sizeof(path), s, what);
	r = req_as(s->ctl, "POST", path, body, 200);
	assert_string_equal(str(r.json, "status"), status);
	http_resp_free(&r);
}

static char *sh(const struct session *s, const char *cmd)
{
	json_t *body = json_pack("{s:s, s:s}", "cmd", cmd, "cwd", "/");
	char path[160], *text = json_dumps(body, JSON_COMPACT), *out;
	struct http_resp r;

	spath(path, sizeof(path), s, "/exec");
	r = req_as(s->ctl, "POST", path, text, 200);
	out = strdup(str(r.json, "stdout"));
	http_resp_free(&r);
	free(text);
	json_decref(body);
	return out;
}

static void assert_sh(const struct session *s, const char *cmd, const char *want)
{
	char *out = sh(s, cmd);

	assert_string_equal(out, want);
	free(out);
}

static void delete (const struct session *s)
{
	char path[160];
	struct http_resp r;

	spath(path, sizeof(path), s, "");
	r = req_as(gw.key, "DELETE", path, NULL, 200);
	http_resp_free(&r);
}

/* Processes whose command line names the gateway's run base (as a folder:
 * /tmp/vitrine-gw-123 is not /tmp/vitrine-gw-1234's): QEMUs and their
 * supervisors. */
static int guest_processes(void)
{
	char base[80];

	snprintf(base, sizeof(base), "%s/", gw.run_base);
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d))) {
		char path[300], *text = NULL;
		size_t len = 0;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
		if (fs_read_file(path, 1 << 16, &text, &len) < 0)
			continue;
		for (size_t i = 0; i < len; i++)
			if (!text[i])
				text[i] = ' ';
		n += strstr(text, base) != NULL;
		free(text);
	}
	if (d)
		closedir(d);
	return n;
}

/* Recordings in the state dir (docs/api.md "Recordings": STATE_DIR/recordings/ID.N). */
static int recordings(void)
{
	char dir[160];
	DIR *d;
	struct dirent *e;
	int n = 0;

	snprintf(dir, sizeof(dir), "%s/recordings", gw.state_dir);
	d = opendir(dir);
	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

static void restart(const char *const *args)
{
	assert_int_equal(gateway_proc_restart(&gw, args ? args : keep_args), 0);
}

/* The record of s on disk (caller decrefs), or NULL. */
static json_t *record(const struct session *s)
{
	char path[200];

	snprintf(path, sizeof(path), "%s/%s.json", gw.state_dir, s->id);
	return json_load_file(path, 0, NULL);
}

static int delete_all(void **state)
{
	(void)state;
	if (gw.pid <= 0 && gateway_proc_restart(&gw, keep_args) < 0)
		return -1;
	return gateway_proc_delete_sessions(&gw);
}

static int setup(void **state)
{
	char body[256];

	(void)state;
	if (gateway_proc_start(&gw, keep_args) < 0)
		return -1;
	snprintf(tpl, sizeof(tpl), "test-restart-%d", (int)getpid());
	snprintf(body, sizeof(body),
		 "{\"name\":\"%s\",\"image\":\"tiny\",\"width\":800,\"height\":600}", tpl);
	return gateway_proc_make_template(&gw, body, 300, NULL);
}

static int teardown(void **state)
{
	char path[128];
	struct http_resp r;
	int left;

	(void)state;
	if (gw.pid <= 0)
		gateway_proc_restart(&gw, keep_args);
	gateway_proc_delete_sessions(&gw);
	snprintf(path, sizeof(path), "/v1/templates/%s", tpl);
	if (http_request("127.0.0.1", gw.port, "DELETE", path, gw.key, NULL, 0, 30, &r) == 0)
		http_resp_free(&r);
	gateway_proc_kill(&gw, SIGTERM); /* keep: nothing may be left to keep */
	left = guest_processes();
	if (left)
		fprintf(stderr, "%d guest processes left behind\n", left);
	return gateway_proc_stop(&gw) == -1 && left == 0 ? 0 : -1;
}

static void test_ids_name_the_node(void **state)
{
	struct session s;
	size_t n;

	(void)state;
	create(&s);
	n = strlen(s.id);
	assert_true(n == strlen(NODE) + 16);
	assert_memory_equal(s.id, NODE, strlen(NODE));
	assert_int_equal(strspn(s.id, "abcdefghijklmnopqrstuvwxyz0123456789"), n);
	delete (&s);
}

static void test_kill9_three_sessions(void **state)
{
	struct session a, b, c;
	json_t *rec;
	char path[160], *text;
	struct http_resp r;

	(void)state;
	create(&a);
	create(&b);
	create(&c);
	mark(&a, 100, 100);
	mark(&b, 200, 150);
	mark(&c, 300, 200);
	assert_sh(&a, "echo alpha > /tmp/f && cat /tmp/f", "alpha\n");
	assert_sh(&c, "echo gamma > /tmp/f && cat /tmp/f", "gamma\n");
	op(&b, "/pause", "{\"mode\":\"memory\"}", "paused");
	op(&c, "/pause", "{\"mode\":\"disk\"}", "paused");
	/* The records say so, and keep no token. */
	rec = record(&c);
	assert_non_null(rec);
	assert_string_equal(str(rec, "state"), "paused_disk");
	text = json_dumps(rec, 0);
	assert_null(strstr(text, c.ctl));
	free(text);
	json_decref(rec);

	assert_true(WIFSIGNALED(gateway_proc_kill(&gw, SIGKILL)));
	restart(NULL);

	expect_state(&a, "ready", NULL);
	expect_state(&b, "paused", "memory");
	expect_state(&c, "paused", "disk");
	assert_marked(&a);
	assert_sh(&a, "cat /tmp/f", "alpha\n");
	/* The view token still views, and only views. */
	spath(path, sizeof(path), &a, "");
	r = req_as(a.view, "GET", path, NULL, 200);
	http_resp_free(&r);
	spath(path, sizeof(path), &a, "/actions");
	r = req_as(a.view, "POST", path, "{\"action\":\"screenshot\"}", 403);
	http_resp_free(&r);
	r = req_as("not-a-token", "GET", "/v1/sessions", NULL, 401);
	http_resp_free(&r);

	op(&b, "/resume", NULL, "ready");
	assert_marked(&b);
	op(&c, "/resume", NULL, "ready");
	assert_marked(&c);
	assert_sh(&c, "cat /tmp/f", "gamma\n");
	delete (&a);
	delete (&b);
	delete (&c);
	assert_int_equal(gateway_proc_guests(&gw), 0);
	assert_int_equal(guest_processes(), 0);
	assert_int_equal(gateway_proc_checkpoints(&gw), 0);
}

/* Sends a request and does not wait for its answer. */
static void fire(const char *token, const char *method, const char *path, const char *body)
{
	int fd = net_send_request(gw.port, token, method, path, body);

	assert_true(fd >= 0);
	close(fd); /* the gateway carries on with a request whose client left */
}

/* Every session in the gateway's list: ready ones show their mark, paused
 * ones resume and show it, failed ones must be new ones cut short. */
static void check_after_kill(struct session *all, int *n, int round)
{
	for (int i = 0; i < *n; i++) {
		json_t *j = get(&all[i]);
		const char *st = str(j, "status");

		if (!strcmp(st, "paused"))
			op(&all[i], "/resume", NULL, "ready");
		else if (strcmp(st, "ready"))
			fail_msg("round %d: %s is %s: %s", round, all[i].id, st, str(j, "error"));
		json_decref(j);
		assert_marked(&all[i]);
	}
}

static void test_kills_at_random_moments(void **state)
{
	unsigned seed;
	struct session all[4];
	int n = 0;
	struct http_resp r;
	json_t *v;
	size_t k;

	(void)state;
	/* A failing round replays with the seed it printed:
	 * VITRINE_TEST_SEED=N build-san/tests/integration/test_gateway_restart */
	seed = getenv("VITRINE_TEST_SEED")
		       ? (unsigned)strtoul(getenv("VITRINE_TEST_SEED"), NULL, 10)
		       : (unsigned)getpid();
	print_message("random kills: seed %u (VITRINE_TEST_SEED=%u replays them)\n", seed, seed);
	srand(seed);
	create(&all[n]);
	mark(&all[n++], 120, 120);
	for (int round = 0; round < KILLS; round++) {
		struct session *s = &all[rand() % n];
		char path[160], body[128];
		int what = round % 4, delay_ms = rand() % 1500;

		spath(path, sizeof(path), s, "");
		switch (what) {
		case 0:
			strcat(path, "/pause");
			fire(s->ctl, "POST", path, "{\"mode\":\"disk\"}");
			break;
		case 1:
			strcat(path, "/fork");
			fire(gw.key, "POST", path, NULL);
			break;
		case 2:
			snprintf(body, sizeof(body), "{\"template\":\"%s\"}", tpl);
			fire(gw.key, "POST", "/v1/sessions", body);
			break;
		case 3:
			/* A resume from disk, killed part-way. */
			op(s, "/pause", "{\"mode\":\"disk\"}", "paused");
			strcat(path, "/resume");
			fire(s->ctl, "POST", path, NULL);
			break;
		}
		usleep((useconds_t)delay_ms * 1000);
		gateway_proc_kill(&gw, SIGKILL);
		restart(NULL);
		check_after_kill(all, &n, round);
		/* Sessions that were being made when the gateway died: kept if
		 * they run (a fork or create that was answered), else dropped. */
		r = req_as(gw.key, "GET", "/v1/sessions", NULL, 200);
		json_array_foreach(json_object_get(r.json, "sessions"), k, v)
		{
			struct session extra = { 0 };
			bool known = false;

			snprintf(extra.id, sizeof(extra.id), "%s", str(v, "id"));
			for (int i = 0; i < n; i++)
				known |= !strcmp(all[i].id, extra.id);
			if (!known)
				delete (&extra);
		}
		http_resp_free(&r);
		print_message("round %d: %s after %d ms; %d sessions answer\n", round,
			      what == 0	  ? "pause"
			      : what == 1 ? "fork"
			      : what == 2 ? "create"
					  : "resume",
			      delay_ms, n);
		if (n < 3) {
			create(&all[n]);
			mark(&all[n], 100 + 60 * n, 300);
			n++;
		}
	}
	for (int i = 0; i < n; i++)
		delete (&all[i]);
	assert_int_equal(gateway_proc_guests(&gw), 0);
	assert_int_equal(guest_processes(), 0);
	assert_int_equal(gateway_proc_checkpoints(&gw), 0); /* no half-made one either */
}

/* Waits up to 60 s for s's record to leave state "running". */
static json_t *wait_abandoned(const struct session *s)
{
	for (int i = 0; i < 600; i++) {
		json_t *rec = record(s);

		if (rec && strcmp(str(rec, "state"), "running") && guest_processes() == 0)
			return rec;
		json_decref(rec);
		usleep(100 * 1000);
	}
	fail_msg("%s was not abandoned within 60 s", s->id);
	return NULL;
}

static void test_grace_runs_out_pause(void **state)
{
	static const char *const args[] = { "--on-stop", "keep",	 "--adopt-grace-s",
					    "2",	 "--on-abandon", "pause",
					    "--node",	 NODE,		 NULL };
	struct session s;
	json_t *rec;

	(void)state;
	restart(args);
	create(&s);
	mark(&s, 150, 150);
	gateway_proc_kill(&gw, SIGKILL);
	rec = wait_abandoned(&s);
	assert_string_equal(str(rec, "state"), "paused_disk");
	assert_string_equal(str(json_object_get(rec, "abandoned"), "action"), "pause");
	json_decref(rec);
	restart(NULL);
	expect_state(&s, "paused", "disk");
	op(&s, "/resume", NULL, "ready");
	assert_marked(&s);
	delete (&s);
}

static void test_grace_runs_out_kill(void **state)
{
	static const char *const args[] = { "--on-stop", "keep",	 "--adopt-grace-s",
					    "2",	 "--on-abandon", "kill",
					    "--node",	 NODE,		 NULL };
	struct session s;
	json_t *rec, *j;

	(void)state;
	restart(args);
	create(&s);
	gateway_proc_kill(&gw, SIGKILL);
	rec = wait_abandoned(&s);
	assert_string_equal(str(rec, "state"), "failed");
	json_decref(rec);
	restart(NULL);
	j = get(&s);
	assert_string_equal(str(j, "status"), "failed");
	assert_non_null(strstr(str(j, "error"), "abandoned"));
	json_decref(j);
	delete (&s);
}

static void test_sigterm_keeps_or_pauses(void **state)
{
	static const char *const pause_args[] = { "--on-stop", "pause", "--node", NODE, NULL };
	struct session s;

	(void)state;
	create(&s);
	mark(&s, 90, 90);
	/* keep: the gateway goes, the guest runs on. */
	assert_int_equal(gateway_proc_kill(&gw, SIGTERM), 0);
	assert_true(guest_processes() > 0);
	restart(pause_args);
	expect_state(&s, "ready", NULL);
	assert_marked(&s);
	/* pause: the guest goes to disk first. */
	assert_int_equal(gateway_proc_kill(&gw, SIGTERM), 0);
	assert_int_equal(guest_processes(), 0);
	restart(NULL);
	expect_state(&s, "paused", "disk");
	op(&s, "/resume", NULL, "ready");
	assert_marked(&s);
	delete (&s);
}

/* Writes rec (stolen) as the record of id into the state dir. */
static void plant(const char *id, json_t *rec)
{
	char path[200];

	snprintf(path, sizeof(path), "%s/%s.json", gw.state_dir, id);
	assert_int_equal(json_dump_file(rec, path, 0), 0);
	json_decref(rec);
}

static void plant_text(const char *id, const char *text)
{
	char path[200];

	snprintf(path, sizeof(path), "%s/%s.json", gw.state_dir, id);
	assert_int_equal(fs_write_file(path, text, strlen(text)), 0);
}

/* A copy of rec under id with key set to v (stolen; NULL deletes it). */
static json_t *variant(json_t *rec, const char *id, const char *key, json_t *v)
{
	json_t *c = json_deep_copy(rec);

	json_object_set_new(c, "id", json_string(id));
	if (v)
		json_object_set_new(c, key, v);
	else
		json_object_del(c, key);
	return c;
}

static void expect_failed(const char *id, const char *why)
{
	char path[160];
	struct http_resp r;

	snprintf(path, sizeof(path), "/v1/sessions/%s", id);
	r = req_as(gw.key, "GET", path, NULL, 200);
	if (strcmp(str(r.json, "status"), "failed") || !strstr(str(r.json, "error"), why))
		fail_msg("%s is %s: %s (want failed: ...%s...)", id, str(r.json, "status"),
			 str(r.json, "error"), why);
	http_resp_free(&r);
	r = req_as(gw.key, "DELETE", path, NULL, 200);
	http_resp_free(&r);
}

static void test_corrupt_records(void **state)
{
	struct session good;
	json_t *rec, *guest, *v;
	pid_t bystander;
	int st;

	(void)state;
	create(&good);
	mark(&good, 110, 210);
	rec = record(&good);
	assert_non_null(rec);
	gateway_proc_kill(&gw, SIGKILL);
	bystander = fork();
	if (bystander == 0) {
		execlp("sleep", "sleep", "120", (char *)NULL);
		_exit(127);
	}
	plant_text("torn1", "{\"version\":1,\"id\":\"torn1\",\"sta");
	plant_text("future1", "{\"version\":99,\"id\":\"future1\"}");
	plant("badstate1", variant(rec, "badstate1", "state", json_string("dancing")));
	guest = json_deep_copy(json_object_get(rec, "guest"));
	json_object_set_new(guest, "run_dir", json_string("/tmp/vitrine-no-such-run-dir"));
	plant("norundir1", variant(rec, "norundir1", "guest", guest));
	guest = json_deep_copy(json_object_get(rec, "guest"));
	json_object_set_new(guest, "pid", json_integer(bystander));
	plant("otherpid1", variant(rec, "otherpid1", "guest", guest));
	v = variant(rec, "notpl1", "template", json_string("no-such-template-x"));
	json_object_del(v, "guest");
	plant("notpl1", v);
	v = variant(rec, "nockpt1", "state", json_string("paused_disk"));
	json_object_set_new(v, "checkpoint", json_string("/tmp/vitrine-no-such-ckpt"));
	json_object_del(v, "guest");
	plant("nockpt1", v);
	json_decref(rec);

	restart(NULL);
	expect_state(&good, "ready", NULL);
	assert_marked(&good);
	/* Once more: the failed ones stay failed, the torn record stays aside. */
	restart(NULL);
	expect_state(&good, "ready", NULL);
	{
		char path[200], *text = NULL;

		snprintf(path, sizeof(path), "%s/torn1.json.unreadable", gw.state_dir);
		assert_int_equal(fs_read_file(path, 4096, &text, NULL), 0);
		assert_string_equal(text, "{\"version\":1,\"id\":\"torn1\",\"sta");
		free(text);
	}
	expect_failed("torn1", "not a JSON object");
	expect_failed("future1", "version");
	expect_failed("badstate1", "unknown state");
	expect_failed("norundir1", "");
	expect_failed("otherpid1", "");
	expect_failed("notpl1", "template");
	expect_failed("nockpt1", "checkpoint");
	/* The process whose pid a record named was never signalled. */
	assert_int_equal(waitpid(bystander, &st, WNOHANG), 0);
	kill(bystander, SIGKILL);
	waitpid(bystander, &st, 0);
	/* The good guest still runs; nothing of the bad ones is left. */
	assert_marked(&good);
	delete (&good);
	assert_int_equal(guest_processes(), 0);
}

/* Runs `vitrine gc` on the gateway's dirs; its exit status, its output
 * into out. */
static int run_gc(char *out, size_t len)
{
	const char *bin = getenv("VITRINE_BIN") ? getenv("VITRINE_BIN") : "build/vitrine";
	char cmd[512];
	FILE *p;
	size_t n;
	int st;

	snprintf(cmd, sizeof(cmd), "VITRINE_RUN=%s %s gc --state-dir %s 2>&1", gw.run_base, bin,
		 gw.state_dir);
	p = popen(cmd, "r");
	assert_non_null(p);
	n = fread(out, 1, len - 1, p);
	out[n] = '\0';
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_gc_removes_what_no_record_knows(void **state)
{
	struct session kept, lost_ckpt, orphan;
	char out[4096], path[200];

	(void)state;
	create(&kept);
	create(&lost_ckpt);
	create(&orphan);
	/* A recording a killed gateway leaves behind goes too. */
	spath(path, sizeof(path), &kept, "/recording/start");
	{
		struct http_resp r = req_as(kept.ctl, "POST", path, NULL, 200);

		http_resp_free(&r);
	}
	op(&kept, "/pause", "{\"mode\":\"disk\"}", "paused");
	op(&lost_ckpt, "/pause", "{\"mode\":\"disk\"}", "paused");
	assert_int_equal(recordings(), 1);
	/* While the gateway runs, gc leaves its house alone. */
	assert_int_equal(run_gc(out, sizeof(out)), 1);
	assert_non_null(strstr(out, "another gateway"));
	gateway_proc_kill(&gw, SIGKILL);
	/* Two records go missing: a disk-paused session's, a running one's. */
	snprintf(path, sizeof(path), "%s/%s.json", gw.state_dir, lost_ckpt.id);
	assert_int_equal(unlink(path), 0);
	snprintf(path, sizeof(path), "%s/%s.json", gw.state_dir, orphan.id);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(gateway_proc_checkpoints(&gw), 2);
	assert_int_equal(run_gc(out, sizeof(out)), 0);
	print_message("%s", out);
	assert_int_equal(gateway_proc_checkpoints(&gw), 1); /* kept's stays */
	assert_int_equal(recordings(), 0);
	assert_non_null(strstr(out, "1 recordings"));
	assert_int_equal(guest_processes(), 0); /* the orphan was stopped */
	restart(NULL);
	expect_state(&kept, "paused", "disk");
	op(&kept, "/resume", NULL, "ready");
	delete (&kept);
	assert_int_equal(gateway_proc_checkpoints(&gw), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_ids_name_the_node, delete_all),
		cmocka_unit_test_teardown(test_kill9_three_sessions, delete_all),
		cmocka_unit_test_teardown(test_sigterm_keeps_or_pauses, delete_all),
		cmocka_unit_test_teardown(test_grace_runs_out_pause, delete_all),
		cmocka_unit_test_teardown(test_grace_runs_out_kill, delete_all),
		cmocka_unit_test_teardown(test_corrupt_records, delete_all),
		cmocka_unit_test_teardown(test_gc_removes_what_no_record_knows, delete_all),
		cmocka_unit_test_teardown(test_kills_at_random_moments, delete_all),
	};

	return cmocka_run_group_tests_name("sessions outlive the gateway", tests, setup, teardown);
}
