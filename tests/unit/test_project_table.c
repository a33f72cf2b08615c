/* tests/unit/test_project_table.c: projects, the gateway's tenants
 * (gateway/core/project_table.c): names ([a-z0-9-] from a letter, at most
 * 32), quotas (whole numbers or null for none; unknown names refused),
 * POST and PATCH bodies (unknown and duplicate fields refused, a PATCH
 * changing only what it names), the table's bounds, a template's owner by
 * its name's prefix (also when one project's name starts another's), the
 * file's round trip (0600) and its refusals, a missing file as no
 * projects. */
#include "gateway/core/project_table.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

static void test_names(void **state)
{
	char long_name[PROJECT_NAME_MAX + 2];

	(void)state;
	assert_true(project_name_ok("acme"));
	assert_true(project_name_ok("a-1"));
	assert_false(project_name_ok(""));
	assert_false(project_name_ok(NULL));
	assert_false(project_name_ok("1abc"));
	assert_false(project_name_ok("-abc"));
	assert_false(project_name_ok("Acme"));
	assert_false(project_name_ok("a_b")); /* '_' ends a template's prefix */
	assert_false(project_name_ok("a/b"));
	assert_false(project_name_ok("a b"));
	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[PROJECT_NAME_MAX + 1] = '\0';
	assert_false(project_name_ok(long_name));
	long_name[PROJECT_NAME_MAX] = '\0';
	assert_true(project_name_ok(long_name));
}

/* A PATCH body over p. */
static int patch(const char *body, struct project *p)
{
	char err[256];

	return project_body_parse(body, strlen(body), false, p, err, sizeof(err));
}

static void test_bodies(void **state)
{
	static const char *bad_create[] = {
		"",
		"[]",
		"{}",
		"{\"name\":\"Acme\"}",
		"{\"name\":\"acme\",\"owner\":\"x\"}",
		"{\"name\":\"acme\",\"name\":\"b\"}",
		"{\"name\":\"acme\",\"quota\":{\"gpus\":1}}",
		"{\"name\":\"acme\",\"quota\":{\"sessions\":-1}}",
		"{\"name\":\"acme\",\"quota\":{\"sessions\":1.5}}",
		"{\"name\":\"acme\",\"quota\":{\"sessions\":\"2\"}}",
		"{\"name\":\"acme\",\"quota\":{\"sessions\":2199023255553}}",
		"{\"name\":\"acme\",\"quota\":[]}",
		"{\"name\":\"acme\",\"allow_root\":1}",
	};
	const char *ok = "{\"name\":\"acme\",\"quota\":{\"sessions\":3,\"memory_mib\":null,"
			 "\"disk_gib\":0},\"allow_root\":true}";
	struct project p, before;
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad_create) / sizeof(bad_create[0]); i++) {
		memset(&p, 0x5a, sizeof(p));
		before = p;
		err[0] = '\0';
		if (project_body_parse(bad_create[i], strlen(bad_create[i]), true, &p, err,
				       sizeof(err)) != -EINVAL)
			fail_msg("accepted %s", bad_create[i]);
		assert_true(err[0] != '\0');
		assert_memory_equal(&p, &before, sizeof(p)); /* untouched */
	}
	assert_int_equal(project_body_parse(ok, strlen(ok), true, &p, err, sizeof(err)), 0);
	assert_string_equal(p.name, "acme");
	assert_int_equal(p.quota.sessions, 3);
	assert_int_equal(p.quota.vcpus, PROJECT_NO_LIMIT);
	assert_int_equal(p.quota.memory_mib, PROJECT_NO_LIMIT);
	assert_int_equal(p.quota.disk_gib, 0);
	assert_true(p.allow_root);
	/* PATCH: only what it names changes; no name there */
	assert_int_equal(patch("{\"quota\":{\"vcpus\":8,\"sessions\":null}}", &p), 0);
	assert_string_equal(p.name, "acme");
	assert_int_equal(p.quota.vcpus, 8);
	assert_int_equal(p.quota.sessions, PROJECT_NO_LIMIT);
	assert_int_equal(p.quota.disk_gib, 0);
	assert_true(p.allow_root);
	assert_int_equal(patch("{\"name\":\"other\"}", &p), -EINVAL);
	assert_string_equal(p.name, "acme");
	assert_int_equal(patch("{\"allow_root\":false}", &p), 0);
	assert_false(p.allow_root);
}

static struct project named(const char *name)
{
	struct project p = { .quota = { PROJECT_NO_LIMIT, PROJECT_NO_LIMIT, PROJECT_NO_LIMIT,
					PROJECT_NO_LIMIT } };

	snprintf(p.name, sizeof(p.name), "%s", name);
	return p;
}

static void test_table_and_templates(void **state)
{
	static struct projects t; /* large: not on the stack */
	struct project p = named("a");

	(void)state;
	t.n = 0;
	assert_int_equal(projects_add(&t, &p), 0);
	assert_int_equal(projects_add(&t, &p), -EEXIST);
	p = named("a-b");
	assert_int_equal(projects_add(&t, &p), 0);
	p = named("Bad");
	assert_int_equal(projects_add(&t, &p), -EINVAL);
	assert_non_null(projects_find(&t, "a-b"));
	assert_null(projects_find(&t, "b"));
	/* a template's owner: the prefix before its first '_' */
	assert_string_equal(project_of_template(&t, "a_x")->name, "a");
	assert_string_equal(project_of_template(&t, "a-b_x")->name, "a-b");
	assert_string_equal(project_of_template(&t, "a-b_c_d")->name, "a-b");
	assert_null(project_of_template(&t, "a-bx_y")); /* no such project: the operator's */
	assert_null(project_of_template(&t, "desktop"));
	assert_null(project_of_template(&t, "_a"));
	assert_null(project_of_template(&t, "a-b-x"));
	assert_true(project_sees_template(&t, NULL, "a_x"));
	assert_true(project_sees_template(&t, "a", "a_x"));
	assert_true(project_sees_template(&t, "a", "desktop"));
	assert_false(project_sees_template(&t, "a-b", "a_x"));
	assert_false(project_sees_template(&t, "a", "a-b_x"));
	assert_int_equal(projects_remove(&t, "a"), 0);
	assert_int_equal(projects_remove(&t, "a"), -ENOENT);
	assert_null(project_of_template(&t, "a_x")); /* gone: the operator's again */
	for (int i = t.n; i < PROJECTS_MAX; i++) {
		char name[16];

		snprintf(name, sizeof(name), "p%d", i);
		p = named(name);
		assert_int_equal(projects_add(&t, &p), 0);
	}
	p = named("one-more");
	assert_int_equal(projects_add(&t, &p), -ENOSPC);
}

static void test_file(void **state)
{
	static struct projects t, back;
	char dir[] = "/tmp/vitrine-projects-XXXXXX", path[96], err[512];
	struct project p = named("acme");
	struct stat st;
	json_t *j;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/projects.json", dir);
	assert_int_equal(projects_load(&t, path, err, sizeof(err)), 0); /* missing: none */
	assert_int_equal(t.n, 0);
	p.quota.vcpus = 4;
	p.allow_root = true;
	p.created_unix_ms = 77;
	assert_int_equal(projects_add(&t, &p), 0);
	p = named("beta");
	p.quota.disk_gib = 0;
	assert_int_equal(projects_add(&t, &p), 0);
	assert_int_equal(projects_save(&t, err, sizeof(err)), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(projects_load(&back, path, err, sizeof(err)), 0);
	assert_int_equal(back.n, 2);
	assert_memory_equal(back.p, t.p, sizeof(t.p[0]) * 2);
	/* what it did not write is refused, naming the file */
	j = json_pack("[{s:s, s:{}, s:b, s:I}, {s:s, s:{}, s:b, s:I}]", "name", "x", "quota",
		      "allow_root", 0, "created_at", (json_int_t)1, "name", "x", "quota",
		      "allow_root", 0, "created_at", (json_int_t)1);
	assert_int_equal(projects_from_json(j, &back, err, sizeof(err)), -EINVAL);
	assert_int_equal(back.n, 0);
	json_decref(j);
	j = json_pack("[{s:s, s:{}, s:b, s:I, s:s}]", "name", "x", "quota", "allow_root", 0,
		      "created_at", (json_int_t)1, "extra", "y");
	assert_int_equal(projects_from_json(j, &back, err, sizeof(err)), -EINVAL);
	json_decref(j);
	assert_non_null(f = fopen(path, "w"));
	fputs("[{\"name\":", f);
	fclose(f);
	assert_int_equal(projects_load(&back, path, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, path));
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_bodies),
		cmocka_unit_test(test_table_and_templates),
		cmocka_unit_test(test_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
