/* tests/unit/test_traj_log.c: a session's trajectory (gateway/action/
 * traj_log.c): numbering in arrival order whatever order steps end in,
 * the step and byte bounds (oldest dropped first, and counted), the rule
 * for a screenshot fetched after a step, the reply kept without its
 * base64, and the archive read back member by member: meta.json's counts,
 * one line per step with its action, coordinates, result and image name,
 * and each named image present with its bytes. */
#include "gateway/action/traj_log.h"

#include "common/tar.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* A fake encoded image of len bytes of c. */
static struct display_image *image(size_t len, char c, enum display_format f)
{
	struct display_image *img = calloc(1, sizeof(*img));

	assert_non_null(img);
	img->data = malloc(len);
	memset(img->data, c, len);
	img->len = len;
	img->width = 4;
	img->height = 2;
	img->format = f;
	atomic_init(&img->refs, 1);
	return img;
}

static struct traj_step *begin(struct traj_log *log, const char *text)
{
	struct traj_step *st = traj_step_begin(log, text, strlen(text), TRAJ_HTTP, 1000);

	assert_non_null(st);
	return st;
}

/* Adds a step of text ending 200 with image (may be NULL; its reference
 * stays the caller's). */
static void step(struct traj_log *log, const char *text, struct display_image *img)
{
	traj_log_add(log, begin(log, text), 200, json_pack("{s:b}", "ok", 1), img, 2000);
}

static void test_step_bound_drops_oldest(void **state)
{
	struct traj_log log;

	(void)state;
	traj_log_init(&log, 3, 1 << 20);
	for (int i = 0; i < 5; i++)
		step(&log, "{\"action\":\"screenshot\"}", NULL);
	assert_int_equal(log.n_steps, 3);
	assert_int_equal(log.dropped, 2);
	assert_int_equal(log.head->n, 3);
	assert_int_equal(log.tail->n, 5);
	assert_int_equal(log.in_flight, 0);
	traj_log_clear(&log);
}

static void test_byte_bound_counts_images(void **state)
{
	struct display_image *a = image(4000, 'a', DISPLAY_FORMAT_JPEG);
	struct display_image *huge = image(20000, 'h', DISPLAY_FORMAT_PNG);
	struct traj_log log;

	(void)state;
	traj_log_init(&log, 100, 10000);
	step(&log, "{}", a);
	step(&log, "{}", a);
	assert_int_equal(log.n_steps, 2);
	step(&log, "{}", a); /* three images are past 10000 bytes: the oldest goes */
	assert_int_equal(log.n_steps, 2);
	assert_int_equal(log.dropped, 1);
	assert_int_equal(log.head->n, 2);
	assert_true(log.bytes <= 10000);
	/* One step over the bound on its own goes too: the bound is kept. */
	step(&log, "{}", huge);
	assert_int_equal(log.n_steps, 0);
	assert_int_equal(log.bytes, 0);
	assert_int_equal(log.dropped, 4);
	/* The log let go of its references: ours are the last. */
	assert_int_equal(atomic_load(&a->refs), 1);
	assert_int_equal(atomic_load(&huge->refs), 1);
	display_image_unref(a);
	display_image_unref(huge);
	traj_log_clear(&log);
}

static void test_numbered_by_arrival(void **state)
{
	struct traj_log log;
	struct traj_step *a, *b, *c;

	(void)state;
	traj_log_init(&log, 10, 1 << 20);
	a = begin(&log, "{\"n\":1}");
	b = begin(&log, "{\"n\":2}");
	c = begin(&log, "{\"n\":3}");
	assert_int_equal(log.in_flight, 3);
	traj_log_add(&log, b, 200, NULL, NULL, 5);
	traj_log_abandon(&log, c);
	traj_log_add(&log, a, 409, NULL, NULL, 6);
	assert_int_equal(log.in_flight, 0);
	assert_int_equal(log.head->n, 1);
	assert_int_equal(log.head->next->n, 2);
	assert_ptr_equal(log.tail, log.head->next);
	assert_int_equal(log.next_n, 4);
	traj_log_clear(&log);
}

static void test_fetched_screenshot_rule(void **state)
{
	struct display_image *s1 = image(10, '1', DISPLAY_FORMAT_JPEG);
	struct display_image *s2 = image(20, '2', DISPLAY_FORMAT_PNG);
	struct display_image *own = image(30, 'o', DISPLAY_FORMAT_JPEG);
	struct traj_log log;
	struct traj_step *pending;

	(void)state;
	traj_log_init(&log, 10, 1 << 20);
	assert_false(traj_log_observe(&log, s1)); /* no step yet */
	step(&log, "{}", NULL);
	assert_true(traj_log_observe(&log, s1));
	assert_ptr_equal(log.tail->image, s1);
	assert_false(log.tail->image_from_action);
	assert_true(traj_log_observe(&log, s2)); /* the latest one counts */
	assert_ptr_equal(log.tail->image, s2);
	assert_int_equal(atomic_load(&s1->refs), 1);
	assert_int_equal(log.bytes, log.tail->line_len + 20);
	/* A later action has arrived: no longer step 1's. */
	pending = begin(&log, "{}");
	assert_false(traj_log_observe(&log, s1));
	traj_log_add(&log, pending, 200, NULL, own, 7);
	/* Step 2 returned its own image: a fetch after it does not replace it. */
	assert_false(traj_log_observe(&log, s1));
	assert_ptr_equal(log.tail->image, own);
	assert_true(log.tail->image_from_action);
	traj_log_clear(&log);
	display_image_unref(s1);
	display_image_unref(s2);
	display_image_unref(own);
}

static void test_reply_without_image(void **state)
{
	json_t *reply = json_pack("{s:b, s:{s:s, s:i, s:s}}", "ok", 1, "screenshot", "format",
				  "png", "width", 4, "data", "AAAA");
	json_t *kept = traj_reply_without_image(reply);

	(void)state;
	assert_non_null(kept);
	assert_null(json_object_get(json_object_get(kept, "screenshot"), "data"));
	assert_int_equal(json_integer_value(
				 json_object_get(json_object_get(kept, "screenshot"), "width")),
			 4);
	/* the reply itself is untouched (it is sent as it is) */
	assert_non_null(json_object_get(json_object_get(reply, "screenshot"), "data"));
	assert_null(traj_reply_without_image(NULL));
	json_decref(kept);
	json_decref(reply);
}

/* A member of an archive, found by name: its data, or NULL. */
static const unsigned char *member(const unsigned char *buf, uint64_t total, const char *name,
				   uint64_t *size)
{
	for (uint64_t off = 0; off + TAR_BLOCK <= total && buf[off];) {
		uint64_t n = strtoull((const char *)buf + off + 124, NULL, 8);

		if (!strcmp((const char *)buf + off, name)) {
			*size = n;
			return buf + off + TAR_BLOCK;
		}
		off += TAR_BLOCK + (n + TAR_BLOCK - 1) / TAR_BLOCK * TAR_BLOCK;
	}
	return NULL;
}

static void test_archive_reads_back(void **state)
{
	const char *drag = "{\"action\":\"left_click_drag\",\"start_coordinate\":[10,20],"
			   "\"coordinate\":[30,40]}";
	struct actions_ctx ctx = { .screen_width = 100, .screen_height = 50 };
	struct display_image *own = image(700, 'p', DISPLAY_FORMAT_PNG);
	struct display_image *shot = image(1500, 'j', DISPLAY_FORMAT_JPEG);
	struct actions_error ae;
	struct traj_log log;
	struct traj_archive *a;
	struct traj_step *st;
	struct action *act;
	json_t *obj, *meta, *line;
	const unsigned char *p;
	unsigned char *buf;
	uint64_t total, size;
	char *text, *nl;

	(void)state;
	traj_log_init(&log, 2, 1 << 20);
	step(&log, "{\"action\":\"screenshot\"}", NULL); /* dropped by the bound */
	/* a drag, with its coordinates; its reply's image */
	st = begin(&log, drag);
	obj = json_loads(drag, 0, NULL);
	act = actions_parse(obj, &ctx, &ae);
	assert_non_null(act);
	traj_step_parsed(st, act);
	actions_destroy(act);
	json_decref(obj);
	traj_log_add(&log, st, 200, json_pack("{s:b}", "ok", 1), own, 3000);
	/* not JSON at all; then a screenshot fetched after it */
	st = traj_step_begin(&log, "no json", 7, TRAJ_CONTROL, 4000);
	traj_log_add(&log, st, 400, json_pack("{s:{s:s}}", "error", "code", "invalid_json"), NULL,
		     4001);
	assert_true(traj_log_observe(&log, shot));
	a = traj_archive_new(&log, "node1abc", 100, 50, 1700000000123);
	assert_non_null(a);
	total = traj_archive_size(a);
	assert_int_equal(total % TAR_BLOCK, 0);
	buf = malloc(total);
	for (uint64_t off = 0; off < total;)
		off += traj_archive_read(a, off, buf + off, 1000);
	/* the log may go on (and go) while the archive is sent */
	traj_log_clear(&log);
	display_image_unref(own);
	display_image_unref(shot);

	p = member(buf, total, "meta.json", &size);
	assert_non_null(p);
	meta = json_loadb((const char *)p, size, 0, NULL);
	assert_non_null(meta);
	assert_string_equal(json_string_value(json_object_get(meta, "session")), "node1abc");
	assert_int_equal(json_integer_value(json_object_get(meta, "version")), 1);
	assert_int_equal(json_integer_value(json_object_get(meta, "steps")), 2);
	assert_int_equal(json_integer_value(json_object_get(meta, "images")), 2);
	assert_int_equal(json_integer_value(json_object_get(meta, "dropped")), 1);
	assert_int_equal(json_integer_value(json_object_get(meta, "first_step")), 2);
	assert_int_equal(json_integer_value(json_object_get(meta, "last_step")), 3);
	assert_int_equal(json_integer_value(
				 json_object_get(json_object_get(meta, "screen"), "width")),
			 100);
	json_decref(meta);

	p = member(buf, total, "trajectory.jsonl", &size);
	assert_non_null(p);
	text = strndup((const char *)p, size);
	nl = strchr(text, '\n');
	assert_non_null(nl);
	line = json_loadb(text, (size_t)(nl - text), 0, NULL);
	assert_non_null(line);
	assert_int_equal(json_integer_value(json_object_get(line, "step")), 2);
	assert_string_equal(json_string_value(json_object_get(line, "dialect")), "anthropic");
	assert_string_equal(json_string_value(json_object_get(line, "channel")), "http");
	assert_string_equal(json_string_value(
				    json_object_get(json_object_get(line, "action"), "action")),
			    "left_click_drag");
	obj = json_object_get(json_object_get(line, "coordinates"), "path");
	assert_int_equal(json_array_size(obj), 2);
	assert_int_equal(json_integer_value(json_array_get(json_array_get(obj, 1), 0)), 30);
	assert_int_equal(json_integer_value(json_object_get(line, "status")), 200);
	assert_int_equal(json_integer_value(json_object_get(line, "finished_ms")), 3000);
	assert_string_equal(json_string_value(json_object_get(line, "image")), "images/000002.png");
	assert_string_equal(json_string_value(json_object_get(line, "image_source")), "action");
	json_decref(line);
	line = json_loads(nl + 1, 0, NULL);
	assert_non_null(line);
	assert_int_equal(json_integer_value(json_object_get(line, "step")), 3);
	assert_true(json_is_null(json_object_get(line, "action")));
	assert_string_equal(json_string_value(json_object_get(line, "action_text")), "no json");
	assert_true(json_is_null(json_object_get(line, "dialect")));
	assert_string_equal(json_string_value(json_object_get(line, "channel")), "control");
	assert_int_equal(json_integer_value(json_object_get(line, "status")), 400);
	assert_string_equal(json_string_value(json_object_get(line, "image")),
			    "images/000003.jpeg");
	assert_string_equal(json_string_value(json_object_get(line, "image_source")), "screenshot");
	json_decref(line);
	free(text);

	p = member(buf, total, "images/000002.png", &size);
	assert_non_null(p);
	assert_int_equal(size, 700);
	assert_int_equal(p[699], 'p');
	p = member(buf, total, "images/000003.jpeg", &size);
	assert_non_null(p);
	assert_int_equal(size, 1500);
	assert_int_equal(p[0], 'j');
	free(buf);
	traj_archive_free(a);
}

/* A body past TRAJ_MAX_ACTION_BYTES keeps only its length. */
static void test_huge_body_kept_as_length(void **state)
{
	size_t n = TRAJ_MAX_ACTION_BYTES + 1;
	char *body = malloc(n + 1);
	struct traj_log log;
	struct traj_step *st;
	char *line;

	(void)state;
	memset(body, ' ', n);
	body[0] = '{';
	body[n - 1] = '}';
	body[n] = '\0';
	traj_log_init(&log, 5, 1 << 20);
	st = traj_step_begin(&log, body, n, TRAJ_HTTP, 1);
	assert_non_null(st);
	traj_log_add(&log, st, 400, NULL, NULL, 2);
	assert_true(log.tail->line_len < 1000);
	line = strndup(log.tail->line->data, log.tail->line_len);
	assert_non_null(strstr(line, "\"action\":null"));
	assert_non_null(strstr(line, "\"action_bytes\":65537"));
	assert_null(strstr(line, "action_text"));
	free(line);
	/* one byte less is kept, as JSON */
	body[n - 2] = '}';
	st = traj_step_begin(&log, body, n - 1, TRAJ_HTTP, 1);
	traj_log_add(&log, st, 400, NULL, NULL, 2);
	line = strndup(log.tail->line->data, log.tail->line_len);
	assert_non_null(strstr(line, "\"action\":{}"));
	assert_null(strstr(line, "action_bytes"));
	free(line);
	free(body);
	traj_log_clear(&log);
}

static void test_empty_archive(void **state)
{
	struct traj_log log;
	struct traj_archive *a;
	unsigned char buf[4096];
	uint64_t size;
	const unsigned char *p;
	json_t *meta;

	(void)state;
	traj_log_init(&log, 5, 1000);
	a = traj_archive_new(&log, "s", 10, 10, 0);
	assert_non_null(a);
	assert_true(traj_archive_size(a) <= sizeof(buf));
	assert_int_equal(traj_archive_read(a, 0, buf, sizeof(buf)), traj_archive_size(a));
	assert_non_null(member(buf, traj_archive_size(a), "trajectory.jsonl", &size));
	assert_int_equal(size, 0);
	p = member(buf, traj_archive_size(a), "meta.json", &size);
	meta = json_loadb((const char *)p, size, 0, NULL);
	assert_int_equal(json_integer_value(json_object_get(meta, "steps")), 0);
	assert_true(json_is_null(json_object_get(meta, "first_step")));
	json_decref(meta);
	traj_archive_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_step_bound_drops_oldest),
		cmocka_unit_test(test_byte_bound_counts_images),
		cmocka_unit_test(test_numbered_by_arrival),
		cmocka_unit_test(test_fetched_screenshot_rule),
		cmocka_unit_test(test_reply_without_image),
		cmocka_unit_test(test_archive_reads_back),
		cmocka_unit_test(test_huge_body_kept_as_length),
		cmocka_unit_test(test_empty_archive),
	};

	return cmocka_run_group_tests_name("trajectory log", tests, NULL, NULL);
}
