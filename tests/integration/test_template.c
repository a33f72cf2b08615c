/* tests/integration/test_template.c: templates with the tiny guest under real
 * QEMU. A template is made after typing keys (so the guest's line buffer
 * lives only in its RAM); restored 20 times, each clone shows the template's
 * screen pixel for pixel, still holds the typed text and takes a click at an
 * exact pixel; two clones at once diverge; clones leave no files behind and
 * never write the template's. At most two QEMUs run at a time. */
#include "common/fsutil.h"
#include "tests/lib/guest.h"
#include "tests/lib/ppm.h"
#include "vmm-qemu/accel.h"
#include "vmm-qemu/snapshot.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#define W 1280
#define H 800
#define RESTORES 20

static char tpl_dir[PATH_MAX];
static char run_base[64]; /* VITRINE_RUN of this test: its own */
static struct vmm_template tpl;
static struct ppm tpl_screen;
static struct stat ram_st, state_st;
static int run_dirs_before;

static void on_marker(void *ud, const struct vmm_marker *m)
{
	struct test_guest *g = ud;

	if (g->n_seen == g->cap_seen) {
		size_t cap = g->cap_seen ? g->cap_seen * 2 : 64;
		struct vmm_marker *n = realloc(g->seen, cap * sizeof(*n));

		if (!n)
			return;
		g->seen = n;
		g->cap_seen = cap;
	}
	g->seen[g->n_seen++] = *m;
}

static int count_run_dirs(void)
{
	DIR *d = opendir(vmm_run_base(NULL));
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		n += !strncmp(e->d_name, "vm-", 3);
	closedir(d);
	return n;
}

static bool same_screen(const struct ppm *a, const struct ppm *b)
{
	return a->width == b->width && a->height == b->height &&
	       !memcmp(a->rgb, b->rgb, (size_t)a->width * a->height * 3);
}

/* Boots tiny with file-backed RAM, types "ab", saves it as the template. */
static int setup(void **state)
{
	struct vmm_vm_opts opts = { .on_marker = on_marker };
	struct test_guest g = { .width = W, .height = H };
	struct vmm_spec spec;
	char err[2048], why[256], ram[PATH_MAX], path[PATH_MAX + 16];
	size_t cursor = 0;
	struct ppm img;
	int rc;

	(void)state;
	opts.ud = &g;
	/* A run base of its own: the count of run dirs below holds only if no
	 * other test's guest starts there meanwhile (tests/run.sh runs two
	 * binaries at a time). */
	snprintf(run_base, sizeof(run_base), "/tmp/vitrine-tpl-%d", (int)getpid());
	setenv("VITRINE_RUN", run_base, 1);
	fs_mkdir_p(vmm_run_base(NULL), 0755);
	run_dirs_before = count_run_dirs();
	snprintf(tpl_dir, sizeof(tpl_dir), "%s/tpl-XXXXXX", vmm_run_base(NULL));
	/* Traversable: QEMU may run as another user. */
	if (!mkdtemp(tpl_dir) || chmod(tpl_dir, 0755) < 0)
		return -1;
	if (vmm_image_load("tiny", &g.image, err, sizeof(err)) < 0)
		goto fail;
	vmm_spec_defaults(&spec);
	spec.image = &g.image;
	spec.memory_mib = 256;
	vmm_accel_resolve(VMM_ACCEL_AUTO, &g.image, "qemu-system-x86_64", &spec.accel, why,
			  sizeof(why));
	if (vmm_template_prepare(tpl_dir, &spec, ram, sizeof(ram), err, sizeof(err)) < 0 ||
	    vmm_vm_start(&spec, &opts, &g.vm, err, sizeof(err)) < 0 ||
	    vmm_vm_wait_phase(g.vm, "ready", 60000, err, sizeof(err)) < 0)
		goto fail;
	for (int tries = 0; tries < 50; tries++) { /* QEMU's copy of the screen lags "ready" */
		if (test_guest_screen(&g, &img) < 0)
			goto fail_quiet;
		rc = ppm_pixel(&img, 0, 0) == 0x00FF00;
		ppm_free(&img);
		if (rc)
			break;
		usleep(100 * 1000);
	}
	if (test_guest_key(&g, NULL, "a") < 0 || test_guest_key(&g, NULL, "b") < 0 ||
	    !test_guest_wait_marker(&g, &cursor, "text", "ab", 10000)) {
		snprintf(err, sizeof(err), "typed keys did not arrive");
		goto fail;
	}
	if (vmm_template_save(g.vm, tpl_dir, err, sizeof(err)) < 0)
		goto fail;
	test_guest_destroy(&g);
	if (vmm_template_load(tpl_dir, &tpl, err, sizeof(err)) < 0)
		goto fail;
	snprintf(path, sizeof(path), "%s/screen.ppm", tpl_dir);
	if (ppm_load(path, &tpl_screen) < 0 || stat(ram, &ram_st) < 0)
		goto fail_quiet;
	snprintf(path, sizeof(path), "%s/state", tpl_dir);
	if (stat(path, &state_st) < 0)
		goto fail_quiet;
	printf("template: state %lld bytes, RAM file %lld MiB\n", (long long)state_st.st_size,
	       (long long)ram_st.st_size >> 20);
	return 0;
fail:
	fprintf(stderr, "template setup: %s\n", err);
fail_quiet:
	test_guest_destroy(&g);
	fs_rm_rf(tpl_dir);
	return -1;
}

static int teardown(void **state)
{
	(void)state;
	ppm_free(&tpl_screen);
	fs_rm_rf(tpl_dir);
	fs_rm_rf(run_base);
	return 0;
}

/* Restores a clone into g; returns ms until its screen equals the template's. */
static int64_t restore(struct test_guest *g, struct vmm_restore_times *tm)
{
	struct vmm_vm_opts opts = { .on_marker = on_marker, .ud = g };
	int64_t t0 = fs_now_ms();
	char err[2048];
	struct ppm img;

	memset(g, 0, sizeof(*g));
	g->width = W;
	g->height = H;
	if (vmm_template_restore(&tpl, &opts, &g->vm, tm, err, sizeof(err)) < 0)
		fail_msg("restore: %s", err);
	for (;;) {
		bool same;

		assert_int_equal(test_guest_screen(g, &img), 0);
		same = same_screen(&img, &tpl_screen);
		ppm_free(&img);
		if (same)
			return fs_now_ms() - t0;
		if (fs_now_ms() - t0 > 10000)
			fail_msg("clone's screen is not the template's after 10 s");
		usleep(10 * 1000);
	}
}

/* Clicks (x, y) in g; checks the guest saw exactly that and drew its mark. */
static void click_lands(struct test_guest *g, size_t *cursor, int x, int y)
{
	const struct vmm_marker *m;
	struct ppm img;
	char want[32];

	assert_int_equal(test_guest_click(g, x, y, "left"), 0);
	m = test_guest_wait_marker(g, cursor, "event", "click", 10000);
	assert_non_null(m);
	snprintf(want, sizeof(want), "%d,%d", x, y);
	if (atoi(vmm_marker_get(m, "x")) != x || atoi(vmm_marker_get(m, "y")) != y)
		fail_msg("clicked %s, guest saw %s,%s", want, vmm_marker_get(m, "x"),
			 vmm_marker_get(m, "y"));
	for (int tries = 0;; tries++) {
		assert_int_equal(test_guest_screen(g, &img), 0);
		if (ppm_pixel(&img, x, y) == 0xFFFFFF && ppm_pixel(&img, x + 1, y) == 0xFF0000)
			break;
		ppm_free(&img);
		if (tries == 50)
			fail_msg("no click mark at %s", want);
		usleep(20 * 1000);
	}
	ppm_free(&img);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static void test_restore_many_times(void **state)
{
	int64_t screen_ms[RESTORES], input_ms[RESTORES], run_ms[RESTORES];

	(void)state;
	for (int i = 0; i < RESTORES; i++) {
		struct test_guest g;
		struct vmm_restore_times tm;
		size_t cursor = 0;
		int64_t t0 = fs_now_ms();

		screen_ms[i] = restore(&g, &tm);
		run_ms[i] = tm.running_ms;
		click_lands(&g, &cursor, 100 + i * 37, 200 + i * 11);
		input_ms[i] = fs_now_ms() - t0;
		/* The line typed before the save is in the clone's RAM. */
		assert_int_equal(test_guest_key(&g, NULL, "c"), 0);
		assert_non_null(test_guest_wait_marker(&g, &cursor, "text", "abc", 10000));
		test_guest_destroy(&g);
	}
	qsort(screen_ms, RESTORES, sizeof(int64_t), cmp_i64);
	qsort(input_ms, RESTORES, sizeof(int64_t), cmp_i64);
	qsort(run_ms, RESTORES, sizeof(int64_t), cmp_i64);
	printf("%d restores: running median %lld ms, screen back median %lld ms (max %lld), "
	       "first click seen median %lld ms (max %lld)\n",
	       RESTORES, (long long)run_ms[RESTORES / 2], (long long)screen_ms[RESTORES / 2],
	       (long long)screen_ms[RESTORES - 1], (long long)input_ms[RESTORES / 2],
	       (long long)input_ms[RESTORES - 1]);
}

static void test_clones_diverge(void **state)
{
	struct test_guest a, b;
	size_t ca = 0, cb = 0;
	struct ppm img;

	(void)state;
	restore(&a, NULL);
	restore(&b, NULL);
	click_lands(&a, &ca, 400, 300);
	click_lands(&b, &cb, 500, 350);
	assert_int_equal(test_guest_key(&a, NULL, "x"), 0);
	assert_int_equal(test_guest_key(&b, NULL, "y"), 0);
	assert_non_null(test_guest_wait_marker(&a, &ca, "text", "abx", 10000));
	assert_non_null(test_guest_wait_marker(&b, &cb, "text", "aby", 10000));
	/* Each clone has its own mark only. */
	assert_int_equal(test_guest_screen(&a, &img), 0);
	assert_int_equal(ppm_pixel(&img, 500, 350), ppm_pixel(&tpl_screen, 500, 350));
	ppm_free(&img);
	assert_int_equal(test_guest_screen(&b, &img), 0);
	assert_int_equal(ppm_pixel(&img, 400, 300), ppm_pixel(&tpl_screen, 400, 300));
	assert_int_equal(ppm_pixel(&img, 500, 350), 0xFFFFFF);
	ppm_free(&img);
	test_guest_destroy(&a);
	test_guest_destroy(&b);
}

static void test_nothing_left_behind(void **state)
{
	char path[PATH_MAX + 16];
	struct stat st;

	(void)state;
	assert_int_equal(count_run_dirs(), run_dirs_before);
	snprintf(path, sizeof(path), "%s/ram", tpl_dir);
	assert_int_equal(stat(path, &st), 0);
	assert_true(st.st_mtim.tv_sec == ram_st.st_mtim.tv_sec &&
		    st.st_mtim.tv_nsec == ram_st.st_mtim.tv_nsec);
	assert_int_equal(st.st_size, ram_st.st_size);
	snprintf(path, sizeof(path), "%s/state", tpl_dir);
	assert_int_equal(stat(path, &st), 0);
	assert_true(st.st_mtim.tv_sec == state_st.st_mtim.tv_sec &&
		    st.st_mtim.tv_nsec == state_st.st_mtim.tv_nsec);
}

static void test_bad_names(void **state)
{
	struct vmm_template t;
	char err[256];

	(void)state;
	assert_false(vmm_template_name_ok(""));
	assert_false(vmm_template_name_ok("../x"));
	assert_false(vmm_template_name_ok("a b"));
	assert_true(vmm_template_name_ok("chromium-ready_1"));
	assert_false(vmm_template_name_ok("Chromium")); /* sessions name [a-z0-9_-] */
	assert_false(vmm_template_name_ok(
		"0123456789012345678901234567890123456789012345678901234567890123"));
	assert_int_equal(vmm_template_load("no-such-template-here", &t, err, sizeof(err)), -ENOENT);
	assert_int_equal(vmm_template_load("bad name", &t, err, sizeof(err)), -EINVAL);
}

/* A template made for another set of devices, or from another build of
 * its image, is refused as stale (QEMU could not load its state). */
static void test_stale(void **state)
{
	char dir[PATH_MAX], path[PATH_MAX + 32], err[512], *text = NULL, *p;
	struct vmm_template t;
	size_t len;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/stale-XXXXXX", vmm_run_base(NULL));
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/template.json", tpl_dir);
	assert_int_equal(fs_read_file(path, 1 << 16, &text, &len), 0);
	snprintf(path, sizeof(path), "%s/template.json", dir);
	/* as it is: loads */
	assert_int_equal(fs_write_file(path, text, len), 0);
	assert_int_equal(vmm_template_load(dir, &t, err, sizeof(err)), 0);
	/* another machine version */
	p = strstr(text, "\"machine\": ");
	assert_non_null(p);
	p[11] = p[11] == '9' ? '8' : '9';
	assert_int_equal(fs_write_file(path, text, len), 0);
	assert_int_equal(vmm_template_load(dir, &t, err, sizeof(err)), -ESTALE);
	assert_non_null(strstr(err, "another set of devices"));
	p[11] = (char)('0' + VMM_MACHINE_VERSION);
	/* another build of the image */
	p = strstr(text, "\"image_recipe\": \"");
	assert_non_null(p);
	p[17] = p[17] == 'x' ? 'y' : 'x';
	assert_int_equal(fs_write_file(path, text, len), 0);
	assert_int_equal(vmm_template_load(dir, &t, err, sizeof(err)), -ESTALE);
	assert_non_null(strstr(err, "another build of image"));
	free(text);
	fs_rm_rf(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_names),
		cmocka_unit_test(test_restore_many_times),
		cmocka_unit_test(test_clones_diverge),
		cmocka_unit_test(test_stale),
		cmocka_unit_test(test_nothing_left_behind),
	};

	return cmocka_run_group_tests_name("templates (tiny guest)", tests, setup, teardown);
}
