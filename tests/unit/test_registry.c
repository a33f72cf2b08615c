/* tests/unit/test_registry.c: the session registry on disk
 * (gateway/session/registry.c) and what a record says
 * (session_record.c): atomic writes that leave no temporary behind, one
 * gateway per state dir, records listed with torn and non-object files
 * reported, leftovers of interrupted writes removed, ids that may become
 * file names; a session's record read back gives the same session (id,
 * token hashes, request, egress rules, deadlines, events' sequence, guest
 * identity, checkpoint), and every malformed record is refused with a
 * reason instead of crashing. */
#include "common/fsutil.h"
#include "gateway/egress/egress.h"
#include "gateway/session/registry.h"
#include "gateway/session/session_int.h"
#include "gateway/session/session_record.h"

#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static char dir[64];

static int make_dir(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/vitrine-test-registry-%d", (int)getpid());
	fs_rm_rf(dir);
	return 0;
}

static int remove_dir(void **state)
{
	(void)state;
	return fs_rm_rf(dir);
}

static int entries(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

static void test_ids(void **state)
{
	(void)state;
	assert_true(registry_id_ok("node0123456789abcdef"));
	assert_true(registry_id_ok("a"));
	assert_false(registry_id_ok(""));
	assert_false(registry_id_ok("s_0123"));
	assert_false(registry_id_ok("node-1"));
	assert_false(registry_id_ok("Node"));
	assert_false(registry_id_ok("../x"));
	assert_false(registry_id_ok("a.json"));
	assert_false(
		registry_id_ok("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
}

struct seen {
	int good, bad;
	char why[512];
};

static void count(void *ud, const char *id, json_t *rec, const char *why)
{
	struct seen *s = ud;

	if (rec) {
		assert_string_equal(json_string_value(json_object_get(rec, "id")), id);
		s->good++;
	} else {
		s->bad++;
		snprintf(s->why, sizeof(s->why), "%s", why);
	}
}

static void test_write_list_remove(void **state)
{
	struct registry r = { 0 }, other = { 0 };
	char err[512], path[PATH_MAX];
	struct seen seen = { 0 };
	json_t *rec = json_pack("{s:s}", "id", "abc1");

	(void)state;
	assert_int_equal(registry_open(&r, dir, err, sizeof(err)), 0);
	/* One gateway per state dir. */
	assert_int_equal(registry_open(&other, dir, err, sizeof(err)), -EBUSY);
	assert_non_null(strstr(err, "another gateway"));
	registry_close(&other); /* never opened: harmless */

	assert_int_equal(registry_write(&r, "abc1", rec), 0);
	assert_int_equal(registry_write(&r, "abc1", rec), 0); /* replaced, not doubled */
	assert_int_equal(registry_write(&r, "../evil", rec), -EINVAL);
	assert_int_equal(entries(), 1);
	/* A torn file, a non-object, an interrupted write's temporary, a stranger. */
	snprintf(path, sizeof(path), "%s/torn1.json", dir);
	fs_write_file(path, "{\"id\":\"torn1\",\"st", 17);
	snprintf(path, sizeof(path), "%s/list1.json", dir);
	fs_write_file(path, "[1,2]", 5);
	snprintf(path, sizeof(path), "%s/abc2.json.tmp-Xy12ab", dir);
	fs_write_file(path, "{", 1);
	snprintf(path, sizeof(path), "%s/notes.txt", dir);
	fs_write_file(path, "x", 1);
	assert_int_equal(registry_each(&r, count, &seen), 3);
	assert_int_equal(seen.good, 1);
	assert_int_equal(seen.bad, 2);
	assert_int_equal(access(path, F_OK), 0); /* not ours: left alone */
	snprintf(path, sizeof(path), "%s/abc2.json.tmp-Xy12ab", dir);
	assert_int_equal(access(path, F_OK), -1); /* an interrupted write: removed */

	assert_int_equal(registry_remove(&r, "abc1"), 0);
	assert_int_equal(registry_remove(&r, "abc1"), 0); /* gone already: fine */
	registry_close(&r);
	/* Unlocked: the next gateway may take it. */
	assert_int_equal(registry_open(&other, dir, err, sizeof(err)), 0);
	registry_close(&other);
	json_decref(rec);
}

struct rewriter {
	struct registry *r;
	int seen[8];
};

/* Rewrites each record it is shown, as adoption does. */
static void rewrite(void *ud, const char *id, json_t *rec, const char *why)
{
	struct rewriter *w = ud;

	(void)why;
	assert_non_null(rec);
	w->seen[id[3] - '0']++;
	assert_int_equal(registry_write(w->r, id, rec), 0);
}

static void test_each_once_while_rewriting(void **state)
{
	struct registry r = { 0 };
	struct rewriter w = { .r = &r };
	char err[256], id[8];

	(void)state;
	assert_int_equal(registry_open(&r, dir, err, sizeof(err)), 0);
	for (int i = 0; i < 8; i++) {
		json_t *rec;

		snprintf(id, sizeof(id), "rec%d", i);
		rec = json_pack("{s:s}", "id", id);
		assert_int_equal(registry_write(&r, id, rec), 0);
		json_decref(rec);
	}
	assert_int_equal(registry_each(&r, rewrite, &w), 8);
	for (int i = 0; i < 8; i++)
		assert_int_equal(w.seen[i], 1);
	registry_close(&r);
}

static void test_atomic_write(void **state)
{
	char path[PATH_MAX], *text = NULL;

	(void)state;
	assert_int_equal(fs_mkdir_p(dir, 0700), 0);
	snprintf(path, sizeof(path), "%s/f", dir);
	assert_int_equal(fs_write_file_atomic(path, "one", 3, 0600), 0);
	assert_int_equal(fs_write_file_atomic(path, "second", 6, 0600), 0);
	assert_int_equal(fs_read_file(path, 64, &text, NULL), 0);
	assert_string_equal(text, "second");
	free(text);
	assert_int_equal(entries(), 1); /* no temporary left */
	snprintf(path, sizeof(path), "%s/no-such-dir/f", dir);
	assert_int_equal(fs_write_file_atomic(path, "x", 1, 0600), -ENOENT);
}

static struct gw gw = { .max_sessions = 8, .node = "unit" };

/* A session as the gateway would have it, with a guest and a history. */
static struct sess *sample(void)
{
	struct session_request req = { 0 };
	struct api_error e;
	const char *body =
		"{\"template\":\"tpl1\",\"url\":\"https://example.com/\",\"timeout_s\":600,"
		"\"idle_timeout_s\":60,\"on_expiry\":\"pause\","
		"\"egress\":{\"allow\":[\"example.com\",\"*.debian.org:80\"]}}";
	struct sess *s;

	assert_int_equal(session_request_parse(body, strlen(body), &req, &e), 0);
	s = sess_alloc(&gw, &req, &e);
	session_request_free(&req);
	assert_non_null(s);
	s->state = SESS_PAUSED;
	s->pause = SESS_PAUSE_MEMORY;
	s->width = 1280;
	s->height = 800;
	s->vcpus = 2;
	s->memory_mib = 2048;
	s->has_agent = true;
	s->ready_ms = s->created_ms + 1500;
	snprintf(s->template_name, sizeof(s->template_name), "tpl1");
	snprintf(s->parent_id, sizeof(s->parent_id), "unitparent");
	snprintf(s->keyboard_layout, sizeof(s->keyboard_layout), "de(nodeadkeys)");
	snprintf(s->guest.run_dir, sizeof(s->guest.run_dir), "/var/lib/vitrine/run/vm-abc123");
	s->guest.pid = 4242;
	s->guest.start_time = 987654321ULL;
	for (int i = 0; i < 5; i++)
		events_add(&s->events, "state", NULL);
	assert_int_equal(sess_ext_set(s, "e2b",
				      json_pack("{s:s, s:{s:s}}", "template_id", "desktop",
						"metadata", "user", "ana")),
			 0);
	return s;
}

static void free_sess(struct sess *s)
{
	events_clear(&s->events);
	sess_free_unlinked(s);
}

static void test_record_round_trip(void **state)
{
	struct sess *s = sample(), *b;
	char why[600] = "", *t1, *t2;
	json_t *rec = sess_record(s), *again;

	(void)state;
	assert_non_null(rec);
	/* The tokens themselves are never written. */
	t1 = json_dumps(rec, 0);
	assert_null(strstr(t1, s->control_token));
	assert_null(strstr(t1, s->view_token));
	assert_non_null(strstr(t1, s->control_hash));
	assert_string_equal(json_string_value(json_object_get(rec, "state")), "paused_memory");
	b = sess_from_record(&gw, s->id, rec, why, sizeof(why));
	if (!b)
		fail_msg("%s", why);
	assert_string_equal(b->id, s->id);
	assert_string_equal(b->control_token, ""); /* only the hashes came back */
	assert_string_equal(b->control_hash, s->control_hash);
	assert_string_equal(b->view_hash, s->view_hash);
	assert_int_equal(b->state, SESS_PAUSED);
	assert_int_equal(b->pause, SESS_PAUSE_MEMORY);
	assert_string_equal(b->req.image, "tpl1");
	assert_true(b->req.from_template);
	assert_string_equal(b->req.url, "https://example.com/");
	assert_int_equal(b->req.timeout_s, 600);
	assert_int_equal(b->req.idle_timeout_s, 60);
	assert_true(b->req.expire_pause);
	assert_int_equal(b->width, 1280);
	assert_int_equal(b->memory_mib, 2048);
	assert_true(b->has_agent);
	assert_string_equal(b->template_name, "tpl1");
	assert_string_equal(b->parent_id, "unitparent");
	assert_string_equal(b->keyboard_layout, "de(nodeadkeys)");
	assert_string_equal(b->guest.run_dir, s->guest.run_dir);
	assert_int_equal(b->guest.pid, 4242);
	assert_int_equal(b->guest.start_time, 987654321ULL);
	assert_int_equal(events_last(&b->events) + 1, b->events.next_seq);
	assert_int_equal(b->events.next_seq, 6);
	/* what another room kept came back as it was */
	assert_string_equal(json_string_value(
				    json_object_get(json_object_get(sess_ext_get(b, "e2b"),
								    "metadata"),
						    "user")),
			    "ana");
	assert_null(sess_ext_get(b, "other"));
	/* Deadlines are absolute: within a few ms of the original's. */
	assert_true(llabs((long long)(b->expires_ms - s->expires_ms)) < 50);
	assert_true(llabs((long long)(b->created_ms - s->created_ms)) < 50);
	/* The rules came back, and the record of the copy is the same. */
	again = sess_record(b);
	json_object_del(again, "events_seq"); /* the copy has no events kept */
	json_object_del(rec, "events_seq");
	json_object_del(again, "created_unix_ms");
	json_object_del(rec, "created_unix_ms");
	json_object_del(again, "ready_unix_ms");
	json_object_del(rec, "ready_unix_ms");
	json_object_del(again, "expires_unix_ms");
	json_object_del(rec, "expires_unix_ms");
	/* Unix <-> monotonic offsets are read to the ms at each end: +-1 ms. */
	assert_true(llabs((long long)(json_integer_value(
					      json_object_get(again, "usage_since_unix_ms")) -
				      json_integer_value(
					      json_object_get(rec, "usage_since_unix_ms")))) <= 1);
	json_object_del(again, "usage_since_unix_ms");
	json_object_del(rec, "usage_since_unix_ms");
	t2 = json_dumps(again, JSON_SORT_KEYS);
	free(t1);
	t1 = json_dumps(rec, JSON_SORT_KEYS);
	assert_string_equal(t1, t2);
	free(t1);
	free(t2);
	json_decref(again);
	json_decref(rec);
	free_sess(b);
	free_sess(s);
}

/* rec with key replaced by v (stolen; NULL removes it). */
static void expect_refused(json_t *good, const char *key, json_t *v, const char *reason)
{
	json_t *bad = json_deep_copy(good);
	char why[600] = "";
	struct sess *s;

	if (v)
		json_object_set_new(bad, key, v);
	else
		json_object_del(bad, key);
	s = sess_from_record(&gw, json_string_value(json_object_get(good, "id")), bad, why,
			     sizeof(why));
	if (s)
		fail_msg("a record with %s changed was taken", key);
	if (!strstr(why, reason))
		fail_msg("%s: '%s' does not say '%s'", key, why, reason);
	json_decref(bad);
}

static void test_bad_records(void **state)
{
	struct sess *s = sample();
	json_t *rec = sess_record(s);
	char why[600];

	(void)state;
	expect_refused(rec, "version", json_integer(2), "version");
	expect_refused(rec, "version", NULL, "version");
	expect_refused(rec, "id", json_string("someoneelse"), "id");
	expect_refused(rec, "state", json_string("dancing"), "unknown state");
	expect_refused(rec, "state", json_integer(1), "bad record");
	expect_refused(rec, "request", NULL, "request");
	expect_refused(rec, "request", json_pack("{s:s}", "image", "BAD NAME"), "request");
	expect_refused(rec, "request", json_pack("{s:i}", "bogus", 1), "request");
	expect_refused(rec, "tokens", NULL, "bad record");
	expect_refused(rec, "tokens",
		       json_pack("{s:s, s:s}", "control_sha256", "abc", "view_sha256", "def"),
		       "SHA-256");
	expect_refused(rec, "screen", json_pack("[i]", 3), "bad record");
	expect_refused(rec, "ext", json_string("x"), "ext is not an object");
	expect_refused(rec, "guest", json_pack("{s:s}", "run_dir", "/x"), "guest");
	expect_refused(rec, "guest",
		       json_pack("{s:s, s:i, s:I}", "run_dir", "/x", "pid", -1, "start_time",
				 (json_int_t)1),
		       "out of range");
	expect_refused(rec, "error", json_integer(5), "error");
	expect_refused(rec, "checkpoint", json_true(), "checkpoint");
	/* A session that stood for an unreadable record has no token hashes:
	 * its record reads back so (only the operator reaches it). */
	{
		json_t *none = json_deep_copy(rec);
		struct sess *b;

		json_object_set_new(none, "tokens",
				    json_pack("{s:s, s:s}", "control_sha256", "", "view_sha256",
					      ""));
		b = sess_from_record(&gw, s->id, none, why, sizeof(why));
		assert_non_null(b);
		assert_string_equal(b->control_hash, "");
		free_sess(b);
		json_decref(none);
	}
	/* Not an object at all. */
	json_decref(rec);
	rec = json_array();
	assert_null(sess_from_record(&gw, s->id, rec, why, sizeof(why)));
	json_decref(rec);
	free_sess(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ids),
		cmocka_unit_test_setup_teardown(test_write_list_remove, make_dir, remove_dir),
		cmocka_unit_test_setup_teardown(test_each_once_while_rewriting, make_dir,
						remove_dir),
		cmocka_unit_test_setup_teardown(test_atomic_write, make_dir, remove_dir),
		cmocka_unit_test(test_record_round_trip),
		cmocka_unit_test(test_bad_records),
	};

	return cmocka_run_group_tests_name("session registry", tests, NULL, NULL);
}
