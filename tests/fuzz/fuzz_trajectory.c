/* tests/fuzz/fuzz_trajectory.c: libFuzzer target for a session's
 * trajectory (gateway/action/traj_log.c) fed what agents send: each input
 * is a few action bodies (split at NUL bytes; the first byte picks the
 * bounds, the chunk size the archive is read in and which steps fetch a
 * screenshot after them), recorded as steps (parsed with actions_parse
 * when they are actions) and then archived (common/tar.c). Checked besides
 * "no crash":
 *   - the archive is whole ustar: a multiple of 512, each header's
 *     checksum right, and the same bytes whatever the chunk size;
 *   - trajectory.jsonl has one JSON line per step kept, numbered in order,
 *     steps kept + dropped = steps sent, within the bounds;
 *   - each line's action is the body as JSON, or action_text the body
 *     itself when it is not JSON (and is UTF-8), or action_bytes its
 *     length past TRAJ_MAX_ACTION_BYTES;
 *   - every coordinate a line gives is on the screen;
 *   - nothing owned is left behind (ASan's leak check). */
#include "common/tar.h"
#include "gateway/action/traj_log.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define W 64
#define H 48
#define MAX_BODIES 16

static struct display_image *fake_image(size_t len)
{
	struct display_image *img = calloc(1, sizeof(*img));

	img->data = calloc(1, len ? len : 1);
	img->len = len;
	img->format = len % 2 ? DISPLAY_FORMAT_PNG : DISPLAY_FORMAT_JPEG;
	atomic_init(&img->refs, 1);
	return img;
}

static const unsigned char *member(const unsigned char *buf, uint64_t total, const char *name,
				   uint64_t *len)
{
	for (uint64_t off = 0; off + TAR_BLOCK <= total && buf[off];) {
		uint64_t n = strtoull((const char *)buf + off + 124, NULL, 8);
		unsigned sum = 0;

		for (size_t i = 0; i < TAR_BLOCK; i++)
			sum += i >= 148 && i < 156 ? ' ' : buf[off + i];
		if (strtoul((const char *)buf + off + 148, NULL, 8) != sum)
			__builtin_trap();
		if (!strcmp((const char *)buf + off, name)) {
			*len = n;
			return buf + off + TAR_BLOCK;
		}
		off += TAR_BLOCK + (n + TAR_BLOCK - 1) / TAR_BLOCK * TAR_BLOCK;
	}
	return NULL;
}

static void on_screen(const json_t *p)
{
	json_int_t x = json_integer_value(json_array_get(p, 0)),
		   y = json_integer_value(json_array_get(p, 1));

	if (json_array_size(p) != 2 || x < 0 || x >= W || y < 0 || y >= H)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct actions_ctx ctx = { .screen_width = W, .screen_height = H };
	const char *bodies[MAX_BODIES];
	size_t lens[MAX_BODIES], n = 0, chunk;
	struct traj_log log;
	struct traj_archive *a;
	unsigned char *whole, *part;
	uint64_t total, jl;
	const unsigned char *p;
	uint8_t pick;

	if (size < 1)
		return 0;
	pick = data[0];
	for (size_t at = 1; at <= size && n < MAX_BODIES;) {
		const uint8_t *nul = memchr(data + at, 0, size - at);
		size_t len = nul ? (size_t)(nul - (data + at)) : size - at;

		bodies[n] = (const char *)data + at;
		lens[n++] = len;
		at += len + 1;
		if (!nul)
			break;
	}
	traj_log_init(&log, 1 + pick % 5, 200 + (size_t)(pick >> 3) * 64);
	for (size_t i = 0; i < n; i++) {
		struct traj_step *st = traj_step_begin(&log, bodies[i], lens[i],
						       i % 2 ? TRAJ_CONTROL : TRAJ_HTTP, 1000);
		json_t *obj = json_loadb(bodies[i], lens[i], JSON_DECODE_ANY, NULL);
		struct actions_error ae;
		struct action *act = json_is_object(obj) ? actions_parse(obj, &ctx, &ae) : NULL;
		struct display_image *img = act && act->want_screenshot ? fake_image(lens[i])
									: NULL;

		traj_step_parsed(st, act);
		traj_log_add(&log, st, act ? 200 : 400, json_pack("{s:b}", "ok", act != NULL), img,
			     2000);
		if (!img && pick & (1u << (i % 8))) {
			img = fake_image(i * 10);
			traj_log_observe(&log, img);
		}
		display_image_unref(img);
		actions_destroy(act);
		json_decref(obj);
	}
	if (log.n_steps > log.max_steps || log.bytes > log.max_bytes ||
	    log.n_steps + (size_t)log.dropped != n)
		__builtin_trap();
	a = traj_archive_new(&log, "fuzz", W, H, 0);
	if (!a)
		goto out;
	total = traj_archive_size(a);
	if (total % TAR_BLOCK)
		__builtin_trap();
	whole = malloc(total);
	part = malloc(total);
	chunk = 1 + (size_t)pick * 37;
	traj_archive_read(a, 0, whole, total);
	for (uint64_t off = 0; off < total;)
		off += traj_archive_read(a, off, part + off, chunk);
	if (memcmp(whole, part, total))
		__builtin_trap();
	p = member(whole, total, "trajectory.jsonl", &jl);
	if (!p)
		__builtin_trap();
	{
		size_t lines = 0, at = 0;
		int64_t prev = 0;

		while (at < jl) {
			const unsigned char *nl = memchr(p + at, '\n', jl - at);
			json_t *line = nl ? json_loadb((const char *)p + at,
						       (size_t)(nl - (p + at)), 0, NULL)
					  : NULL;
			int64_t k = json_integer_value(json_object_get(line, "step"));
			const char *body;
			size_t blen;
			json_t *sent, *c;

			if (!line || k <= prev || k > (int64_t)n)
				__builtin_trap();
			prev = k;
			body = bodies[k - 1];
			blen = lens[k - 1];
			sent = blen > TRAJ_MAX_ACTION_BYTES
				       ? NULL
				       : json_loadb(body, blen,
						    JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, NULL);
			if (blen > TRAJ_MAX_ACTION_BYTES &&
			    json_integer_value(json_object_get(line, "action_bytes")) !=
				    (json_int_t)blen)
				__builtin_trap();
			if (sent ? !json_equal(sent, json_object_get(line, "action"))
				 : !json_is_null(json_object_get(line, "action")))
				__builtin_trap();
			if (!sent && json_is_string(json_object_get(line, "action_text")) &&
			    (json_string_length(json_object_get(line, "action_text")) != blen ||
			     memcmp(json_string_value(json_object_get(line, "action_text")), body,
				    blen)))
				__builtin_trap();
			c = json_object_get(line, "coordinates");
			if (json_object_get(c, "point"))
				on_screen(json_object_get(c, "point"));
			for (size_t i = 0; i < json_array_size(json_object_get(c, "path")); i++)
				on_screen(json_array_get(json_object_get(c, "path"), i));
			json_decref(sent);
			json_decref(line);
			lines++;
			at = (size_t)(nl - p) + 1;
		}
		if (lines != log.n_steps)
			__builtin_trap();
	}
	free(whole);
	free(part);
	traj_archive_free(a);
out:
	traj_log_clear(&log);
	return 0;
}
