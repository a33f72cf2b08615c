/* tests/unit/test_audit.c: the audit log's pure parts (docs/audit.md): the
 * time format, principals from what matched a token, an entry's line (the
 * five fixed keys first, fields that cannot replace them), the event of
 * each audited route, and the size cap's rotation (when, and the name),
 * with one real rotation in a temporary directory. */
#include "common/fsutil.h"
#include "gateway/api/api_audit.h"
#include "gateway/core/audit.h"
#include "gateway/core/audit_refusals.h"
#include "gateway/core/auth.h"
#include "gateway/core/logfile.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static void test_time(void **state)
{
	char t[40];

	(void)state;
	fs_utc_time(0, t, sizeof(t));
	assert_string_equal(t, "1970-01-01T00:00:00.000Z");
	fs_utc_time(1796155650123LL, t, sizeof(t));
	assert_string_equal(t, "2026-12-01T20:07:30.123Z");
	fs_utc_time(1796155650007LL, t, sizeof(t));
	assert_string_equal(t, "2026-12-01T20:07:30.007Z");
}

static void test_principal(void **state)
{
	const char *hash = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	struct audit_principal p;
	char tid[AUDIT_TOKEN_ID_LEN + 1], h[AUTH_HASH_LEN + 1];

	(void)state;
	audit_principal_set(&p, hash, "operator", false);
	assert_string_equal(p.kind, "operator");
	assert_string_equal(p.token_id, "01234567");
	audit_principal_set(&p, hash, "control", false);
	assert_string_equal(p.kind, "control");
	audit_principal_set(&p, hash, "view", false);
	assert_string_equal(p.kind, "view");
	audit_principal_set(&p, hash, "t4k2m9x0qa", false);
	assert_string_equal(p.kind, "minted");
	audit_principal_set(&p, hash, "", true);
	assert_string_equal(p.kind, "share");
	audit_principal_set(&p, hash, "", false);
	assert_string_equal(p.kind, "unknown");
	audit_principal_set(&p, "", "operator", false);
	assert_null(p.kind);
	assert_string_equal(p.token_id, "");
	audit_principal_set(&p, NULL, NULL, false);
	assert_null(p.kind);
	/* a token's id is its hash's prefix */
	audit_token_id("some-token", tid);
	auth_token_hash("some-token", h);
	assert_int_equal(strncmp(tid, h, AUDIT_TOKEN_ID_LEN), 0);
	assert_int_equal(strlen(tid), AUDIT_TOKEN_ID_LEN);
}

static void test_format(void **state)
{
	struct audit_principal p;
	json_t *f = json_pack("{s:s, s:s, s:i}", "event", "forged", "path", "/tmp/x", "size", 3);
	char *line;

	(void)state;
	audit_principal_set(&p, "abcdef0123456789", "control", false);
	line = audit_format(1796155650123LL, "file_put", "node1abc", &p, "127.0.0.1", f);
	assert_string_equal(line, "{\"time\":\"2026-12-01T20:07:30.123Z\",\"event\":\"file_put\","
				  "\"session\":\"node1abc\",\"principal\":{\"kind\":\"control\","
				  "\"token_id\":\"abcdef01\"},\"remote\":\"127.0.0.1\","
				  "\"path\":\"/tmp/x\",\"size\":3}");
	free(line);
	json_decref(f);
	line = audit_format(0, "vnc_stopped", NULL, NULL, NULL, NULL);
	assert_string_equal(line,
			    "{\"time\":\"1970-01-01T00:00:00.000Z\",\"event\":\"vnc_stopped\","
			    "\"session\":null,\"principal\":null,\"remote\":null}");
	free(line);
}

static void test_route_events(void **state)
{
	(void)state;
	assert_string_equal(api_audit_event(R_SESSIONS_CREATE, M_POST), "session_create");
	assert_string_equal(api_audit_event(R_SESSION_DELETE, M_DELETE), "session_delete");
	assert_string_equal(api_audit_event(R_SESSION_FILES, M_PUT), "file_put");
	assert_string_equal(api_audit_event(R_SESSION_FILES, M_GET), "file_get");
	assert_string_equal(api_audit_event(R_SESSION_CLIPBOARD, M_PUT), "clipboard_set");
	assert_string_equal(api_audit_event(R_SESSION_CLIPBOARD, M_GET), "clipboard_get");
	assert_string_equal(api_audit_event(R_SESSION_EGRESS, M_PUT), "egress_rules_set");
	assert_null(api_audit_event(R_SESSION_EGRESS, M_GET));
	assert_string_equal(api_audit_event(R_SESSION_TOKENS, M_POST), "token_minted");
	assert_null(api_audit_event(R_SESSION_TOKENS, M_GET));
	assert_string_equal(api_audit_event(R_SESSION_RECORDING_START, M_POST), "recording_start");
	assert_string_equal(api_audit_event(R_SESSION_RECORDING_STOP, M_POST), "recording_stop");
	assert_null(api_audit_event(R_SESSION_RECORDING_WEBM, M_GET));
	assert_string_equal(api_audit_event(R_SESSION_SHARE, M_DELETE), "share_revoked");
	assert_string_equal(api_audit_event(R_SESSION_VNC, M_POST), "vnc_door_opened");
	assert_null(api_audit_event(R_SESSION_GET, M_GET));
	assert_null(api_audit_event(R_SESSION_SCREENSHOT, M_GET));
	assert_string_equal(api_method_name(M_DELETE), "DELETE");
	assert_string_equal(api_method_name(M_OTHER), "OTHER");
}

static void test_rotation(void **state)
{
	char dir[] = "/tmp/vitrine-logfile-XXXXXX", path[128], old[160], *text;
	struct logfile lf;

	(void)state;
	assert_false(logfile_must_rotate(0, 100, 10)); /* an empty file takes any line */
	assert_false(logfile_must_rotate(50, 50, 100));
	assert_true(logfile_must_rotate(51, 50, 100));
	assert_int_equal(logfile_rotated_name("/var/log/audit", 1, old, sizeof(old)), 0);
	assert_string_equal(old, "/var/log/audit.1");
	assert_int_equal(logfile_rotated_name("/var/log/audit", 1, old, 10), -1);

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/audit", dir);
	snprintf(old, sizeof(old), "%s/audit.1", dir);
	logfile_init(&lf, path, 20, 1);
	logfile_append(&lf, "first line", 10); /* 11 bytes */
	logfile_append(&lf, "second", 6); /* 18 */
	logfile_append(&lf, "third", 5); /* would be 24: rotates */
	logfile_append(&lf, "fourth line!", 12); /* 6 + 13 = 19 */
	logfile_append(&lf, "fifth", 5); /* rotates again: FILE.1 replaced */
	logfile_close(&lf);
	assert_int_equal(fs_read_file(path, 1024, &text, NULL), 0);
	assert_string_equal(text, "fifth\n");
	free(text);
	assert_int_equal(fs_read_file(old, 1024, &text, NULL), 0);
	assert_string_equal(text, "third\nfourth line!\n");
	free(text);
	/* disabled: nothing happens */
	logfile_init(&lf, "", 0, 0);
	logfile_append(&lf, "x", 1);
	assert_int_equal(lf.fd, -1);
	assert_int_equal(lf.max_bytes, LOGFILE_DEFAULT_MAX_BYTES);
	unlink(path);
	unlink(old);
	rmdir(dir);
}

/* Past the cap, FILE.1 .. FILE.keep move up one and the oldest goes. */
static void test_generations(void **state)
{
	char dir[] = "/tmp/vitrine-logfile-XXXXXX", path[128], name[160], *text;
	struct logfile lf;

	(void)state;
	assert_int_equal(logfile_rotated_name("/var/log/audit", 12, name, sizeof(name)), 0);
	assert_string_equal(name, "/var/log/audit.12");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/audit", dir);
	logfile_init(&lf, path, 8, 3);
	assert_int_equal(lf.keep, 3);
	/* each line fills the cap: every append after the first rotates */
	logfile_append(&lf, "line-1", 6);
	logfile_append(&lf, "line-2", 6);
	logfile_append(&lf, "line-3", 6);
	logfile_append(&lf, "line-4", 6);
	logfile_append(&lf, "line-5", 6);
	logfile_close(&lf);
	for (int gen = 0; gen <= 3; gen++) {
		char want[16];

		if (gen)
			assert_int_equal(logfile_rotated_name(path, gen, name, sizeof(name)), 0);
		else
			snprintf(name, sizeof(name), "%s", path);
		assert_int_equal(fs_read_file(name, 1024, &text, NULL), 0);
		snprintf(want, sizeof(want), "line-%d\n", 5 - gen);
		assert_string_equal(text, want);
		free(text);
		unlink(name);
	}
	assert_int_equal(logfile_rotated_name(path, 4, name, sizeof(name)), 0);
	assert_int_equal(access(name, F_OK), -1); /* line-1 went: three kept */
	rmdir(dir);
	logfile_init(&lf, "x", 0, 0);
	assert_int_equal(lf.keep, 1);
	logfile_init(&lf, "x", 0, 1 << 20);
	assert_int_equal(lf.keep, LOGFILE_MAX_KEEP);
}

/* Per address: the burst in full, the rest counted into one summary when
 * the window closes; addresses apart; a full table counts the others. */
static void test_refusals(void **state)
{
	struct audit_refusals *t = calloc(1, sizeof(*t));
	struct audit_refusal_summary sum[4];
	int written = 0;

	(void)state;
	assert_non_null(t);
	audit_refusals_init(t, 10);
	assert_int_equal(t->window_ms, 10000);
	for (int i = 0; i < 1000; i++)
		written += audit_refusals_note(t, "10.0.0.1", 1000 + i);
	assert_int_equal(written, AUDIT_REFUSALS_BURST);
	assert_true(audit_refusals_note(t, "10.0.0.2", 1500)); /* its own window */
	assert_true(audit_refusals_note(t, NULL, 1500));
	assert_int_equal(audit_refusals_next_due(t), 11000);
	assert_int_equal(audit_refusals_close(t, 10999, false, sum, 4), 0);
	assert_int_equal(audit_refusals_close(t, 11000, false, sum, 4), 1);
	assert_string_equal(sum[0].remote, "10.0.0.1");
	assert_false(sum[0].others);
	assert_int_equal(sum[0].counted, 1000 - AUDIT_REFUSALS_BURST);
	assert_int_equal(sum[0].first_ms, 1000 + AUDIT_REFUSALS_BURST);
	assert_int_equal(sum[0].last_ms, 1999);
	assert_int_equal(sum[0].window_ms, 10000);
	assert_int_equal(audit_refusals_next_due(t), 0); /* nothing counted is left */
	/* A new window after it: the burst in full again. */
	assert_true(audit_refusals_note(t, "10.0.0.1", 12000));
	/* 10.0.0.2's window ended with nothing counted: it starts over. */
	for (int i = 0; i < AUDIT_REFUSALS_BURST; i++)
		assert_true(audit_refusals_note(t, "10.0.0.2", 12000));
	assert_false(audit_refusals_note(t, "10.0.0.2", 12001));
	/* A full table: the others are counted together, none in full. */
	audit_refusals_init(t, 10);
	for (int i = 0; i < AUDIT_REFUSALS_MAX; i++) {
		char a[32];

		snprintf(a, sizeof(a), "10.1.0.%d", i);
		assert_true(audit_refusals_note(t, a, 100));
	}
	assert_false(audit_refusals_note(t, "10.2.0.1", 200));
	assert_false(audit_refusals_note(t, "10.2.0.2", 300));
	assert_int_equal(audit_refusals_close(t, 400, true, sum, 4), 1);
	assert_true(sum[0].others);
	assert_int_equal(sum[0].counted, 2);
	assert_int_equal(audit_refusals_close(t, 400, true, sum, 4), 0);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_time),	 cmocka_unit_test(test_principal),
		cmocka_unit_test(test_format),	 cmocka_unit_test(test_route_events),
		cmocka_unit_test(test_rotation), cmocka_unit_test(test_generations),
		cmocka_unit_test(test_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
