/* tests/integration/test_gateway_template_move.c: moving templates
 * (GET /v1/templates/{name}/export, POST /v1/templates/import, `vitrine
 * template export|import|gc`, POST /v1/templates/gc), on the tiny guest
 * given a small disk as in test_gateway_template_save (a VITRINE_HOME of
 * its own): a template two layers deep is exported (its disk flattened),
 * deleted, imported, and a session from it has the file written before
 * the save; a corrupt, a truncated and two mismatched files (another
 * machine version, another image build) and a taken name are refused and
 * leave nothing; gc keeps young and used templates and removes an old
 * unused one. */
#include "common/fsutil.h"
#include "common/http_client.h"
#include "tests/lib/gateway_proc.h"
#include "tests/lib/test_home.h"

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

static struct gateway_proc gw;
static char home[128], tpl[48], work[160];

static int setup(void **state)
{
	(void)state;
	snprintf(tpl, sizeof(tpl), "tm-%d", (int)getpid());
	if (test_home_make(home, sizeof(home), "tplmove", true) != 0)
		return -1;
	snprintf(work, sizeof(work), "%s/work", home);
	if (test_sh("mkdir -p %s", work) != 0)
		return -1;
	setenv("VITRINE_HOME", home, 1);
	return gateway_proc_start(&gw, NULL);
}

static int teardown(void **state)
{
	(void)state;
	gateway_proc_delete_sessions(&gw);
	gateway_proc_stop(&gw);
	fs_rm_rf(home);
	return 0;
}

static struct http_resp req(const char *method, const char *path, const char *token,
			    const char *body, int status, const char *code)
{
	struct http_resp r;
	int rc = http_request("127.0.0.1", gw.port, method, path, token ? token : gw.key, body,
			      body ? strlen(body) : 0, 60, &r);

	if (rc < 0 || r.status != status || (code && strcmp(http_error_code(&r), code)))
		fail_msg("%s %s -> %d %.400s (want %d %s)", method, path, r.status,
			 r.body ? r.body : "", status, code ? code : "");
	return r;
}

static const char *str(const struct http_resp *r, const char *key)
{
	const char *v = json_string_value(json_object_get(r->json, key));

	return v ? v : "";
}

static void save(const char *id, const char *name)
{
	char body[160], path[96];
	struct http_resp r;

	snprintf(body, sizeof(body), "{\"name\":\"%s\",\"from_session\":\"%s\"}", name, id);
	r = req("POST", "/v1/templates", NULL, body, 202, NULL);
	http_resp_free(&r);
	snprintf(path, sizeof(path), "/v1/templates/%s", name);
	for (int i = 0;; i++) {
		r = req("GET", path, NULL, NULL, 200, NULL);
		if (strcmp(str(&r, "status"), "building"))
			break;
		http_resp_free(&r);
		if (i > 1500)
			fail_msg("template %s still building after 300 s", name);
		usleep(200 * 1000);
	}
	if (strcmp(str(&r, "status"), "ready"))
		fail_msg("template %s: %s", name, r.body);
	http_resp_free(&r);
}

static void session_from(const char *name, struct gateway_session *s)
{
	char body[128];

	snprintf(body, sizeof(body), "{\"template\":\"%s\"}", name);
	if (gateway_proc_create_session(&gw, body, 120, s) < 0)
		fail_msg("cannot create a session from %s", name);
}

static void del(const char *what, const char *name)
{
	char path[128];
	struct http_resp r;

	snprintf(path, sizeof(path), "/v1/%s/%s", what, name);
	r = req("DELETE", path, NULL, NULL, 200, NULL);
	http_resp_free(&r);
}

/* POSTs file to the import route as name; expects status and code. */
static void import_expect(const char *file, const char *name, int status, const char *code)
{
	char path[128];
	struct http_resp r;
	struct stat st;
	int fd = open(file, O_RDONLY), rc;

	assert_true(fd >= 0 && fstat(fd, &st) == 0);
	snprintf(path, sizeof(path), "/v1/templates/import?name=%s", name);
	rc = http_request_fd("127.0.0.1", gw.port, "POST", path, gw.key, fd, (uint64_t)st.st_size,
			     -1, 300, &r);
	close(fd);
	if (rc < 0 || r.status != status || (code && strcmp(http_error_code(&r), code)))
		fail_msg("import %s as %s -> %d %.400s (want %d %s)", file, name, r.status,
			 r.body ? r.body : "", status, code ? code : "");
	if (code)
		assert_non_null(json_object_get(json_object_get(r.json, "error"), "message"));
	http_resp_free(&r);
}

/* Nothing of a refused import: no template, no staging directory. */
static void nothing_left(const char *name)
{
	char path[128];
	struct http_resp r;

	snprintf(path, sizeof(path), "/v1/templates/%s", name);
	r = req("GET", path, NULL, NULL, 404, "unknown_template");
	http_resp_free(&r);
	assert_int_equal(test_sh("ls -a %s/templates | grep -q '^\\.import-'", home) != 0, 1);
	assert_int_equal(test_sh("test ! -e %s/templates/%s", home, name), 0);
}

static void test_move(void **state)
{
	const char *bin = getenv("VITRINE_BIN") ? getenv("VITRINE_BIN") : "build/vitrine";
	char t1[64], t2[64], path[160], file[256], bad[256], x[300];
	struct gateway_session a, b, c;
	struct http_resp r;
	json_t *list;
	bool seen = false;

	(void)state;
	snprintf(t1, sizeof(t1), "%s-1", tpl);
	snprintf(t2, sizeof(t2), "%s-2", tpl);
	snprintf(file, sizeof(file), "%s/%s.vtpl", work, t2);
	snprintf(bad, sizeof(bad), "%s/bad.vtpl", work);
	if (gateway_proc_create_session(&gw, "{\"image\":\"tinyd\",\"memory_mib\":256}", 120, &a) <
	    0)
		fail_msg("no session");
	save(a.id, t1);
	session_from(t1, &b);
	snprintf(path, sizeof(path), "/v1/sessions/%s/files?path=/tmp/moved.txt", b.id);
	r = req("PUT", path, b.control, "written before the save", 200, NULL);
	http_resp_free(&r);
	save(b.id, t2); /* a chain of two: t2's disk is on t1's */
	del("sessions", a.id);
	del("sessions", b.id);

	/* Sizes: t2's chain holds t1 too. */
	r = req("GET", "/v1/templates", NULL, NULL, 200, NULL);
	list = json_object_get(r.json, "templates");
	for (size_t i = 0; i < json_array_size(list); i++) {
		json_t *t = json_array_get(list, i);

		if (strcmp(json_string_value(json_object_get(t, "name")), t2))
			continue;
		seen = true;
		assert_true(json_integer_value(json_object_get(t, "size_bytes")) > 0);
		assert_true(json_integer_value(json_object_get(t, "chain_bytes")) >
			    json_integer_value(json_object_get(t, "size_bytes")));
	}
	assert_true(seen);
	http_resp_free(&r);

	/* Export with the CLI: a tar of the members, in order. */
	assert_int_equal(
		test_sh("VITRINE_URL=http://127.0.0.1:%d %s template export --api-key-file "
			"%s %s %s",
			gw.port, bin, gw.key_file, t2, file),
		0);
	assert_int_equal(test_sh("tar tf %s | tr '\\n' ' ' | grep -qx 'template.json ram state "
				 "disk.qcow2 screen.ppm SHA256SUMS '",
				 file),
			 0);
	snprintf(path, sizeof(path), "/v1/templates/%s-none/export", tpl);
	r = req("GET", path, NULL, NULL, 404, "unknown_template");
	http_resp_free(&r);
	del("templates", t2);

	/* Refused, leaving nothing: a flipped byte in the RAM's member ... */
	assert_int_equal(test_sh("cp %s %s && printf 'X' | dd of=%s bs=1 seek=40000 conv=notrunc "
				 "status=none",
				 file, bad, bad),
			 0);
	import_expect(bad, t2, 400, "invalid_archive");
	nothing_left(t2);
	/* ... the file cut in half ... */
	assert_int_equal(test_sh("head -c $(( $(stat -c %%s %s) / 2 )) %s > %s", file, file, bad),
			 0);
	import_expect(bad, t2, 400, "invalid_archive");
	nothing_left(t2);
	/* ... another machine version, another build of the image (checksums
	 * made right: what is refused is the metadata) ... */
	snprintf(x, sizeof(x), "%s/x", work);
	assert_int_equal(
		test_sh("set -e; rm -rf %s; mkdir %s; tar xf %s -C %s; cd %s; "
			"sed -i 's/\"machine\": [0-9]*/\"machine\": 999/' template.json; "
			"sha256sum template.json ram state disk.qcow2 screen.ppm > SHA256SUMS; "
			"tar --format=ustar -cf %s template.json ram state disk.qcow2 "
			"screen.ppm SHA256SUMS",
			x, x, file, x, x, bad),
		0);
	import_expect(bad, t2, 422, "template_mismatch");
	nothing_left(t2);
	assert_int_equal(
		test_sh("set -e; rm -rf %s; mkdir %s; tar xf %s -C %s; cd %s; "
			"sed -i 's/\"image_recipe\": \"[^\"]*\"/\"image_recipe\": \"other\"/' "
			"template.json; grep -q other template.json; "
			"sha256sum template.json ram state disk.qcow2 screen.ppm > SHA256SUMS; "
			"tar --format=ustar -cf %s template.json ram state disk.qcow2 "
			"screen.ppm SHA256SUMS",
			x, x, file, x, x, bad),
		0);
	import_expect(bad, t2, 422, "template_mismatch");
	nothing_left(t2);
	/* ... a name taken, a bad name, no body. */
	import_expect(file, t1, 409, "template_exists");
	import_expect(file, "Bad!", 400, "invalid_argument");
	r = req("POST", "/v1/templates/import?name=tm-empty", NULL, NULL, 400, "invalid_archive");
	http_resp_free(&r);
	nothing_left("tm-empty");

	/* Imported with the CLI: flattened, and the session has its file. */
	assert_int_equal(
		test_sh("VITRINE_URL=http://127.0.0.1:%d %s template import --api-key-file "
			"%s %s | grep -q '\"status\": \"ready\"'",
			gw.port, bin, gw.key_file, file),
		0);
	snprintf(path, sizeof(path), "/v1/templates/%s", t2);
	r = req("GET", path, NULL, NULL, 200, NULL);
	assert_int_equal(json_integer_value(json_object_get(r.json, "depth")), 1);
	assert_null(json_object_get(r.json, "backing"));
	http_resp_free(&r);
	session_from(t2, &c);
	snprintf(path, sizeof(path), "/v1/sessions/%s/files?path=/tmp/moved.txt", c.id);
	r = req("GET", path, c.control, NULL, 200, NULL);
	assert_int_equal(r.body_len, strlen("written before the save"));
	assert_memory_equal(r.body, "written before the save", r.body_len);
	http_resp_free(&r);

	/* gc: nothing is old enough; then t1 (unused now) goes, t2 (c runs
	 * from it) stays. */
	r = req("POST", "/v1/templates/gc?older_than_s=3600", NULL, NULL, 200, NULL);
	assert_int_equal(json_array_size(json_object_get(r.json, "removed")), 0);
	http_resp_free(&r);
	r = req("POST", "/v1/templates/gc", NULL, NULL, 400, "invalid_argument");
	http_resp_free(&r);
	assert_int_equal(test_sh("VITRINE_URL=http://127.0.0.1:%d %s template gc --api-key-file %s "
				 "--older-than 0s | grep -q '\"%s\"'",
				 gw.port, bin, gw.key_file, t1),
			 0);
	snprintf(path, sizeof(path), "/v1/templates/%s", t1);
	r = req("GET", path, NULL, NULL, 404, "unknown_template");
	http_resp_free(&r);
	snprintf(path, sizeof(path), "/v1/templates/%s", t2);
	r = req("GET", path, NULL, NULL, 200, NULL);
	http_resp_free(&r);
	del("sessions", c.id);
	del("templates", t2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_move),
	};

	return cmocka_run_group_tests_name("moving templates", tests, setup, teardown);
}
