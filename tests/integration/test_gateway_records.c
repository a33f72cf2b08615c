/* tests/integration/test_gateway_records.c: what a hostile tenant must not
 * be able to undo, with no guest (issue 25). A token change the session's
 * record cannot hold (the state dir read-only: a bind mount in this test's
 * own mount namespace) answers 500 and is undone, so the tokens work the
 * same before and after a restart; a revocation that answered 200 holds
 * after one. And 1000 refused requests neither flush the audit log's
 * history (a tiny cap rotates it) nor write more than a handful of lines,
 * whose counts add up. The session is a planted record of a failed
 * session: its token routes are served without a guest. */
#include "common/fsutil.h"
#include "common/http_client.h"
#include "gateway/core/auth.h"
#include "tests/lib/gateway_proc.h"

#include <errno.h>
#include <jansson.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cmocka.h>

#define SID "recs1"
#define CONTROL "control-token-of-test-gateway-records-0001"
#define VIEW "view-token-of-test-gateway-records-0002"

static struct gateway_proc gw;
static char audit_path[96];
static bool ro_mounted;

/* METHOD path as token; the answer's status (the body in *out if asked). */
static int call(const char *method, const char *path, const char *token, const char *body,
		struct http_resp *out)
{
	struct http_resp r;
	int st;

	http_request("127.0.0.1", gw.port, method, path, token, body, body ? strlen(body) : 0, 30,
		     &r);
	st = r.status;
	if (out)
		*out = r;
	else
		http_resp_free(&r);
	return st;
}

static void expect(int got, int want, const char *what)
{
	if (got != want)
		fail_msg("%s: status %d, want %d", what, got, want);
}

/* Makes the state dir read-only (or writable again) for the gateway and
 * this test alone: both live in the test's mount namespace. */
static void state_dir_read_only(bool ro)
{
	if (ro) {
		assert_int_equal(mount(gw.state_dir, gw.state_dir, NULL, MS_BIND, NULL), 0);
		ro_mounted = true;
		assert_int_equal(mount(NULL, gw.state_dir, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY,
				       NULL),
				 0);
	} else if (ro_mounted) {
		assert_int_equal(umount2(gw.state_dir, MNT_DETACH), 0);
		ro_mounted = false;
	}
}

/* A failed session's record with the control and view tokens above. */
static void plant_record(void)
{
	char ctl[AUTH_HASH_LEN + 1], view[AUTH_HASH_LEN + 1], path[160], *text;
	json_t *rec;

	auth_token_hash(CONTROL, ctl);
	auth_token_hash(VIEW, view);
	rec = json_pack("{s:i, s:s, s:s, s:s, s:{s:s}, s:[i,i], s:i, s:i, s:b, s:I, s:{s:s, s:s}, "
			"s:i, s:s}",
			"version", 1, "id", SID, "node", "recs", "state", "failed", "request",
			"image", "tiny", "screen", 1024, 768, "vcpus", 1, "memory_mib", 256,
			"has_agent", 0, "created_unix_ms", (json_int_t)fs_unix_ms(), "tokens",
			"control_sha256", ctl, "view_sha256", view, "events_seq", 0, "error",
			"planted by test_gateway_records");
	assert_non_null(rec);
	text = json_dumps(rec, JSON_COMPACT);
	json_decref(rec);
	snprintf(path, sizeof(path), "%s/" SID ".json", gw.state_dir);
	assert_int_equal(fs_write_file_atomic(path, text, strlen(text), 0600), 0);
	free(text);
}

static void remove_audit(void)
{
	for (int gen = 0; gen <= 20; gen++) {
		char path[128];

		snprintf(path, sizeof(path), gen ? "%s.%d" : "%s", audit_path, gen);
		unlink(path);
	}
}

static int setup(void **state)
{
	(void)state;
	snprintf(audit_path, sizeof(audit_path), "/tmp/vitrine-records-audit-%d.log",
		 (int)getpid());
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (ro_mounted)
		umount2(gw.state_dir, MNT_DETACH);
	ro_mounted = false;
	gateway_proc_stop(&gw);
	remove_audit();
	return 0;
}

static void expect_tokens(const char *minted, const char *when)
{
	char what[160];

	snprintf(what, sizeof(what), "the minted token %s", when);
	expect(call("GET", "/v1/sessions/" SID, minted, NULL, NULL), 200, what);
	snprintf(what, sizeof(what), "the view token %s", when);
	expect(call("GET", "/v1/sessions/" SID, VIEW, NULL, NULL), 200, what);
	snprintf(what, sizeof(what), "the control token %s", when);
	expect(call("GET", "/v1/sessions/" SID, CONTROL, NULL, NULL), 200, what);
}

static void test_token_changes_saved_first(void **state)
{
	struct http_resp r;
	char minted[128], gid[32], path[128];
	size_t n_tokens;

	(void)state;
	assert_int_equal(gateway_proc_start(&gw, NULL), 0);
	gateway_proc_kill(&gw, SIGKILL);
	plant_record();
	assert_int_equal(gateway_proc_restart(&gw, NULL), 0);

	expect(call("POST", "/v1/sessions/" SID "/tokens", gw.key, "{\"scopes\":[\"view\"]}", &r),
	       201, "mint");
	snprintf(minted, sizeof(minted), "%s", json_string_value(json_object_get(r.json, "token")));
	snprintf(gid, sizeof(gid), "%s", json_string_value(json_object_get(r.json, "id")));
	http_resp_free(&r);
	expect_tokens(minted, "as minted");

	state_dir_read_only(true);
	snprintf(path, sizeof(path), "/v1/sessions/" SID "/tokens/%s", gid);
	expect(call("DELETE", path, gw.key, NULL, &r), 500, "revoke, record read-only");
	assert_string_equal(http_error_code(&r), "not_recorded");
	http_resp_free(&r);
	expect(call("DELETE", "/v1/sessions/" SID "/tokens/view", gw.key, NULL, NULL), 500,
	       "revoke view, record read-only");
	expect(call("POST", "/v1/sessions/" SID "/tokens/control/rotate", gw.key, NULL, &r), 500,
	       "rotate control, record read-only");
	assert_null(json_object_get(r.json, "token"));
	http_resp_free(&r);
	expect(call("POST", "/v1/sessions/" SID "/tokens", gw.key, "{\"scopes\":[\"exec\"]}", &r),
	       500, "mint, record read-only");
	assert_null(json_object_get(r.json, "token"));
	http_resp_free(&r);
	expect_tokens(minted, "after the failed changes");
	expect(call("GET", "/v1/sessions/" SID "/tokens", gw.key, NULL, &r), 200, "list");
	n_tokens = json_array_size(json_object_get(r.json, "tokens"));
	http_resp_free(&r);
	assert_int_equal(n_tokens, 3); /* control, view, the one minted: nothing more */

	/* What was answered holds after a restart: the same tokens work. */
	state_dir_read_only(false);
	assert_int_equal(gateway_proc_restart(&gw, NULL), 0);
	expect_tokens(minted, "after a restart");

	/* A revocation that answered 200 holds after a restart too. */
	expect(call("DELETE", path, gw.key, NULL, NULL), 200, "revoke");
	expect(call("GET", "/v1/sessions/" SID, minted, NULL, NULL), 401, "revoked token");
	assert_int_equal(gateway_proc_restart(&gw, NULL), 0);
	expect(call("GET", "/v1/sessions/" SID, minted, NULL, NULL), 401,
	       "revoked token after a restart");
}

/* Every line of the audit log and its old generations, oldest first. */
static json_t *audit_lines(void)
{
	json_t *all = json_array();

	for (int gen = 20; gen >= 0; gen--) {
		char path[128], *text = NULL, *line, *save = NULL;

		snprintf(path, sizeof(path), gen ? "%s.%d" : "%s", audit_path, gen);
		if (fs_read_file(path, 16 << 20, &text, NULL) < 0)
			continue;
		for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
			json_array_append_new(all, json_loads(line, 0, NULL));
		free(text);
	}
	return all;
}

static const char *event_of(const json_t *e)
{
	return json_string_value(json_object_get(e, "event"));
}

static void test_refusals_keep_the_history(void **state)
{
	const char *const args[] = { "--audit-log", audit_path, "--audit-log-max-bytes", "4096",
				     NULL };
	int64_t refused = 0;
	bool created = false;
	json_t *all, *e;
	size_t i;

	(void)state;
	remove_audit();
	assert_int_equal(gateway_proc_start(&gw, args), 0);
	expect(call("POST", "/v1/keys", gw.key, "{\"name\":\"before\"}", NULL), 201,
	       "a key made before the flood");
	for (int k = 0; k < 1000; k++)
		if (call("GET", "/v1/sessions", "not-a-key-of-this-gateway", NULL, NULL) != 401)
			fail_msg("refused request %d was not answered 401", k);
	assert_int_equal(gateway_proc_stop(&gw), 0); /* a window still open is summed up */

	all = audit_lines();
	json_array_foreach(all, i, e)
	{
		assert_non_null(e);
		if (!strcmp(event_of(e), "key_created"))
			created = true;
		else if (!strcmp(event_of(e), "auth_refused"))
			refused++;
		else if (!strcmp(event_of(e), "auth_refused_summary")) {
			assert_string_equal(json_string_value(json_object_get(e, "remote")),
					    "127.0.0.1");
			refused += json_integer_value(json_object_get(e, "refused"));
		}
	}
	if (!created || refused != 1000 || json_array_size(all) > 12)
		fail_msg("after 1000 refusals the audit log holds %zu lines, the key made before "
			 "%s, %lld refusals counted (want it kept, 1000, a dozen lines at most)",
			 json_array_size(all), created ? "kept" : "gone", (long long)refused);
	json_decref(all);
}

/* The window's summary comes on its own when the window closes. */
static void test_refusal_window_closes(void **state)
{
	const char *const args[] = { "--audit-log", audit_path,		"--audit-refused-window-s",
				     "1",	    "--audit-log-keep", "2",
				     NULL };
	json_t *all, *e;
	int full = 0, summaries = 0;
	size_t i;

	(void)state;
	remove_audit();
	assert_int_equal(gateway_proc_start(&gw, args), 0);
	for (int k = 0; k < 50; k++)
		expect(call("GET", "/v1/sessions", "wrong", NULL, NULL), 401, "refused");
	usleep(1600 * 1000);
	all = audit_lines(); /* while the gateway still runs */
	json_array_foreach(all, i, e)
	{
		if (!strcmp(event_of(e), "auth_refused"))
			full++;
		if (!strcmp(event_of(e), "auth_refused_summary")) {
			summaries++;
			assert_int_equal(json_integer_value(json_object_get(e, "refused")),
					 50 - full);
			assert_int_equal(json_integer_value(json_object_get(e, "window_s")), 1);
		}
	}
	assert_int_equal(full, 8);
	assert_int_equal(summaries, 1);
	assert_int_equal(json_array_size(all), 9);
	json_decref(all);
	/* A new window: its first refusals are written in full again. */
	expect(call("GET", "/v1/sessions", "wrong", NULL, NULL), 401, "refused");
	all = audit_lines();
	assert_string_equal(event_of(json_array_get(all, json_array_size(all) - 1)),
			    "auth_refused");
	assert_int_equal(json_array_size(all), 10);
	json_decref(all);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_token_changes_saved_first, teardown),
		cmocka_unit_test_teardown(test_refusals_keep_the_history, teardown),
		cmocka_unit_test_teardown(test_refusal_window_closes, teardown),
	};

	/* The state dir's read-only mount is this process's and its
	 * gateway's alone: nothing of it reaches the host. */
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		fprintf(stderr, "test_gateway_records: a mount namespace of its own: %s\n",
			strerror(errno));
		return 1;
	}
	return cmocka_run_group_tests(tests, setup, NULL);
}
