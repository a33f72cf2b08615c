/* tests/e2e/test_desktop_template.c: templates, pause, resume and fork on
 * the real desktop guest through the gateway. One template is made through
 * the API (one desktop boot) from tests/e2e/pages/life.html; then: a
 * session restored from it is ready with the page from before the snapshot
 * (not reloaded) and a current clock; each clone's kernel reseeded its RNG
 * (the VM generation id changed); a template restored with a url
 * loads that url; 20 restores in a row each show the page; a value typed into an
 * input (never submitted) and the scroll position survive pause and resume
 * in memory and on disk; a fork has its parent's page and the two diverge;
 * nothing is left behind. Page state is read in the guest with
 * `vitrine-ready eval` over qemu-ga. */
#include "common/base64.h"
#include "common/fsutil.h"
#include "common/http_client.h"
#include "tests/lib/gateway_proc.h"
#include "tests/lib/page_eval.h"
#include "tests/lib/png.h"
#include "vmm-qemu/qga_client.h"
#include "vmm-qemu/run_dir.h"

#include <dirent.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#define RESTORES 20

static struct gateway_proc gw;
static char tpl[64];
static int64_t tpl_created_ms; /* Unix ms */

struct session {
	char id[64], ctl[64], run_dir[PATH_MAX];
};

static const char *str(json_t *j, const char *key)
{
	const char *s = json_string_value(json_object_get(j, key));

	return s ? s : "";
}

static int64_t unix_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct http_resp req_as(const char *token, const char *method, const char *path,
			       const char *body, int status)
{
	struct http_resp r;
	int rc = http_request("127.0.0.1", gw.port, method, path, token, body,
			      body ? strlen(body) : 0, 300, &r);

	if (rc < 0 || r.status != status)
		fail_msg("%s %s -> %d %.300s (want %d)", method, path, r.status,
			 r.body ? r.body : "", status);
	return r;
}

/* The run dir of the guest that is not in known (QEMU run dirs only). */
static void new_run_dir(char known[][PATH_MAX], int n_known, char *out)
{
	DIR *d = opendir(gw.run_base);
	struct dirent *e;

	out[0] = '\0';
	while (d && (e = readdir(d))) {
		bool old = false;
		char path[PATH_MAX];

		if (strncmp(e->d_name, "vm-", 3) || !strncmp(e->d_name, "vm-ckpt-", 8))
			continue;
		snprintf(path, sizeof(path), "%s/%s", gw.run_base, e->d_name);
		for (int i = 0; i < n_known; i++)
			old |= !strcmp(known[i], path);
		if (!old)
			snprintf(out, PATH_MAX, "%s", path);
	}
	if (d)
		closedir(d);
}

/* Evaluates expr in session s's page; its JSON value (caller decrefs). */
static json_t *eval(const struct session *s, const char *expr)
{
	char err[1024], path[PATH_MAX + 16];
	json_t *j;

	assert_int_equal(vmm_run_dir_socket(s->run_dir, VMM_SOCKET_QGA, path, sizeof(path)), 0);
	if (!(j = page_eval(path, expr, err, sizeof(err))))
		fail_msg("%s", err);
	return j;
}

static int64_t eval_int(const struct session *s, const char *expr)
{
	json_t *j = eval(s, expr);
	int64_t v = (int64_t)json_number_value(j);

	json_decref(j);
	return v;
}

/* Polls until expr is the string want (actions answer once their events
 * are sent, not once the page has them). */
static void expect_str(const struct session *s, const char *expr, const char *want)
{
	json_t *v = NULL;

	for (int i = 0; i < 100; i++) {
		json_decref(v);
		v = eval(s, expr);
		if (json_is_string(v) && !strcmp(json_string_value(v), want))
			break;
		usleep(100 * 1000);
	}
	if (!json_is_string(v) || strcmp(json_string_value(v), want))
		fail_msg("%s is %s, want \"%s\"", expr,
			 json_is_string(v) ? json_string_value(v) : "?", want);
	json_decref(v);
}

/* Fills s from a 201 answer and finds its guest's run dir. */
static void adopt(struct session *s, struct http_resp *r, char known[][PATH_MAX], int n_known)
{
	snprintf(s->id, sizeof(s->id), "%s", str(r->json, "id"));
	snprintf(s->ctl, sizeof(s->ctl), "%s", str(json_object_get(r->json, "tokens"), "control"));
	new_run_dir(known, n_known, s->run_dir);
	assert_true(s->run_dir[0] != '\0');
}

static void create(struct session *s, const char *extra)
{
	char body[1024];
	struct http_resp r;

	snprintf(body, sizeof(body), "{\"template\":\"%s\"%s}", tpl, extra ? extra : "");
	r = req_as(gw.key, "POST", "/v1/sessions?wait=ready", body, 201);
	assert_string_equal(str(r.json, "status"), "ready");
	adopt(s, &r, NULL, 0);
	http_resp_free(&r);
}

static void op(struct session *s, const char *what, const char *body, const char *want_status)
{
	char path[160], before[1][PATH_MAX];
	struct http_resp r;

	snprintf(before[0], sizeof(before[0]), "%s", s->run_dir);
	snprintf(path, sizeof(path), "/v1/sessions/%s/%s", s->id, what);
	r = req_as(s->ctl, "POST", path, body, 200);
	assert_string_equal(str(r.json, "status"), want_status);
	http_resp_free(&r);
	/* A resume from disk runs a new QEMU: find its run dir. */
	if (!strcmp(want_status, "ready") && access(s->run_dir, F_OK) < 0)
		new_run_dir(before, 1, s->run_dir);
}

static void act(struct session *s, const char *action)
{
	char path[160];
	struct http_resp r;

	snprintf(path, sizeof(path), "/v1/sessions/%s/actions", s->id);
	r = req_as(s->ctl, "POST", path, action, 200);
	http_resp_free(&r);
}

static void delete (struct session *s)
{
	char path[160];
	struct http_resp r;

	snprintf(path, sizeof(path), "/v1/sessions/%s", s->id);
	r = req_as(gw.key, "DELETE", path, NULL, 200);
	http_resp_free(&r);
}

/* After each test: no session survives into the next one. */
static int delete_all(void **state)
{
	(void)state;
	return gateway_proc_delete_sessions(&gw);
}

static int setup(void **state)
{
	char *page = NULL, *body;
	long long created = 0;
	json_t *j;
	int rc;

	(void)state;
	if (fs_read_file("tests/e2e/pages/life.html", 1 << 20, &page, NULL) < 0 ||
	    gateway_proc_start(&gw, NULL) < 0)
		return -1;
	snprintf(tpl, sizeof(tpl), "e2e-life-%d", (int)getpid());
	j = json_pack("{s:s, s:s, s:s}", "name", tpl, "image", "desktop", "page", page);
	body = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	free(page);
	rc = gateway_proc_make_template(&gw, body, 900, &created);
	free(body);
	tpl_created_ms = created * 1000;
	return rc;
}

static int teardown(void **state)
{
	char path[128];
	struct http_resp r;

	(void)state;
	gateway_proc_delete_sessions(&gw); /* a template in use cannot go */
	snprintf(path, sizeof(path), "/v1/templates/%s", tpl);
	if (http_request("127.0.0.1", gw.port, "DELETE", path, gw.key, NULL, 0, 30, &r) == 0)
		http_resp_free(&r);
	return gateway_proc_stop(&gw) == 0 ? 0 : -1;
}

static void test_restored_state_and_clock(void **state)
{
	struct session s;
	int64_t loaded, skew;

	(void)state;
	create(&s, NULL);
	/* The page is the one loaded before the snapshot, not a new load ... */
	loaded = eval_int(&s, "window.loadedAt");
	assert_true(loaded > 0 && loaded <= tpl_created_ms + 999);
	/* ... and the guest's clock is the host's, not the template's. */
	skew = eval_int(&s, "Date.now()") - unix_ms();
	print_message("restored: page loaded %lld s before, guest clock off by %lld ms\n",
		      (long long)((unix_ms() - loaded) / 1000), (long long)skew);
	assert_true(skew > -3000 && skew < 3000);
	delete (&s);
}

/* The guest kernel's log, through qemu-ga. */
static char *guest_dmesg(const struct session *s)
{
	const char *argv[] = { "/bin/dmesg", NULL };
	char path[PATH_MAX + 16], err[512], *out;
	struct qga_exec_result res;
	struct qga_client *c = NULL;

	assert_int_equal(vmm_run_dir_socket(s->run_dir, VMM_SOCKET_QGA, path, sizeof(path)), 0);
	if (qga_client_connect(path, 5000, &c, err, sizeof(err)) < 0 ||
	    qga_client_exec(c, argv, NULL, NULL, 0, 20000, &res, err, sizeof(err)) < 0)
		fail_msg("dmesg: %s", err);
	qga_client_destroy(c);
	out = strdup(res.out ? res.out : "");
	qga_exec_result_free(&res);
	return out;
}

/* Every clone reseeds its RNG: the kernel saw the VM generation id change. */
static void test_restored_rng_reseeded(void **state)
{
	struct session a, b;
	char *log;

	(void)state;
	create(&a, NULL);
	create(&b, NULL);
	log = guest_dmesg(&a);
	assert_non_null(strstr(log, "crng reseeded due to virtual machine fork"));
	free(log);
	log = guest_dmesg(&b);
	assert_non_null(strstr(log, "crng reseeded due to virtual machine fork"));
	free(log);
	delete (&a);
	delete (&b);
}

static void test_restore_with_url(void **state)
{
	struct session s;

	(void)state;
	create(&s, ",\"url\":\"file:///run/vitrine/page.html?second\"");
	/* A new load of the page, at the new URL. */
	expect_str(&s, "location.search", "?second");
	assert_true(eval_int(&s, "window.loadedAt") > tpl_created_ms + 999);
	delete (&s);
}

/* The page's 20x20 magenta marker in a screenshot of s. */
static bool shows_page(struct session *s)
{
	char path[160];
	struct http_resp r;
	struct ppm img;
	int x0, y0, x1, y1;
	bool ok;

	snprintf(path, sizeof(path), "/v1/sessions/%s/screenshot?format=png", s->id);
	r = req_as(s->ctl, "GET", path, NULL, 200);
	ok = png_decode((const unsigned char *)r.body, r.body_len, &img) == 0 &&
	     ppm_find_bbox(&img, 0xFF00AA, 2, &x0, &y0, &x1, &y1) && x1 - x0 + 1 == 20 &&
	     y1 - y0 + 1 == 20;
	if (ok)
		ppm_free(&img);
	http_resp_free(&r);
	return ok;
}

static void test_twenty_restores(void **state)
{
	int64_t t0, ms[RESTORES];

	(void)state;
	for (int i = 0; i < RESTORES; i++) {
		struct session s;

		t0 = fs_now_ms();
		create(&s, NULL);
		ms[i] = fs_now_ms() - t0;
		if (!shows_page(&s))
			fail_msg("restore %d does not show the page", i + 1);
		delete (&s);
	}
	print_message("%d restores to ready: first %lld ms, last %lld ms\n", RESTORES,
		      (long long)ms[0], (long long)ms[RESTORES - 1]);
	assert_int_equal(gateway_proc_guests(&gw), 0);
}

/* Scrolls the page down by amount notches and answers the scroll position
 * once it has moved and then stopped changing (Chromium scrolls smoothly;
 * under load the wheel event can take a while to arrive). */
static int scroll_and_settle(struct session *s, int amount)
{
	char action[160];
	int from = (int)eval_int(s, "scrollY"), y = from;

	snprintf(action, sizeof(action),
		 "{\"action\":\"scroll\",\"coordinate\":[640,500],\"scroll_direction\":\"down\","
		 "\"scroll_amount\":%d}",
		 amount);
	act(s, action);
	for (int i = 0; i < 50 && y == from; i++) {
		usleep(100 * 1000);
		y = (int)eval_int(s, "scrollY");
	}
	for (int i = 0, last = -1; i < 50 && y != last; i++) {
		last = y;
		usleep(300 * 1000);
		y = (int)eval_int(s, "scrollY");
	}
	return y;
}

/* Types into the input (never submitted) and scrolls the page. */
static void make_state(struct session *s, const char *text, int *scroll_y)
{
	char action[256];

	snprintf(action, sizeof(action), "{\"action\":\"type\",\"text\":\"%s\"}", text);
	act(s, action);
	expect_str(s, "document.getElementById('in').value", text);
	*scroll_y = scroll_and_settle(s, 5);
	assert_true(*scroll_y > 0);
}

static void test_pause_resume_keeps_page_state(void **state)
{
	static const char *modes[] = { "{\"mode\":\"memory\"}", "{\"mode\":\"disk\"}" };
	struct session s;
	int scroll_y;

	(void)state;
	create(&s, NULL);
	make_state(&s, "unsent draft", &scroll_y);
	for (int i = 0; i < 2; i++) {
		op(&s, "pause", modes[i], "paused");
		op(&s, "resume", NULL, "ready");
		expect_str(&s, "document.getElementById('in').value", "unsent draft");
		assert_int_equal(eval_int(&s, "scrollY"), scroll_y);
		/* and it still takes input */
		act(&s, "{\"action\":\"type\",\"text\":\"!\"}");
		expect_str(&s, "document.getElementById('in').value", "unsent draft!");
		act(&s, "{\"action\":\"key\",\"text\":\"BackSpace\"}");
		expect_str(&s, "document.getElementById('in').value", "unsent draft");
		/* Typing scrolled the input back into view: scroll away again. */
		scroll_y = scroll_and_settle(&s, 3);
	}
	delete (&s);
}

static void test_fork_diverges(void **state)
{
	struct session a, b;
	char path[160], known[1][PATH_MAX];
	struct http_resp r;
	int scroll_y;

	(void)state;
	create(&a, NULL);
	make_state(&a, "shared", &scroll_y);
	snprintf(known[0], sizeof(known[0]), "%s", a.run_dir);
	snprintf(path, sizeof(path), "/v1/sessions/%s/fork?wait=ready", a.id);
	r = req_as(a.ctl, "POST", path, NULL, 403); /* the control token may not fork */
	http_resp_free(&r);
	r = req_as(gw.key, "POST", path, NULL, 201);
	assert_string_equal(str(r.json, "status"), "ready");
	adopt(&b, &r, known, 1);
	http_resp_free(&r);
	expect_str(&b, "document.getElementById('in').value", "shared");
	assert_int_equal(eval_int(&b, "scrollY"), scroll_y);
	act(&a, "{\"action\":\"type\",\"text\":\" by a\"}");
	act(&b, "{\"action\":\"type\",\"text\":\" by b\"}");
	expect_str(&a, "document.getElementById('in').value", "shared by a");
	expect_str(&b, "document.getElementById('in').value", "shared by b");
	delete (&b);
	delete (&a);
	assert_int_equal(gateway_proc_guests(&gw), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_restored_state_and_clock, delete_all),
		cmocka_unit_test_teardown(test_restored_rng_reseeded, delete_all),
		cmocka_unit_test_teardown(test_restore_with_url, delete_all),
		cmocka_unit_test_teardown(test_twenty_restores, delete_all),
		cmocka_unit_test_teardown(test_pause_resume_keeps_page_state, delete_all),
		cmocka_unit_test_teardown(test_fork_diverges, delete_all),
	};

	return cmocka_run_group_tests_name("desktop templates, pause, resume, fork", tests, setup,
					   teardown);
}
