/* tests/unit/test_stream_pure.c: the live view's pure parts: the binary
 * wire format (round trips, malformed frames refused), the frame diff and
 * the shared encoder (changed tiles only, whole frames when cheaper, pixels
 * survive the trip), the viewer message parser with its close codes, DOM key
 * codes, sharing tokens (and the live view's pool of them), the stream
 * routes and VNC keysyms. */
#include "display/stream_encode.h"
#include "display/stream_wire.h"
#include "gateway/api/routes.h"
#include "gateway/stream/share.h"
#include "gateway/stream/stream_msg.h"
#include "gateway/stream/vnc.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>

#include <cmocka.h>

static void test_wire_round_trip(void **state)
{
	uint8_t buf[STREAM_WIRE_FRAME_HDR + 2 * STREAM_WIRE_RECT_HDR + 5];
	struct stream_wire_frame f = { .key = false,
				       .rects = 2,
				       .seq = 77,
				       .time_us = 1796000000123456ull,
				       .width = 1280,
				       .height = 800 };
	struct stream_wire_rect r1 = { 10, 20, 30, 40, STREAM_WIRE_ENC_JPEG, NULL, 3 },
				r2 = { 1270, 790, 10, 10, STREAM_WIRE_ENC_JPEG, NULL, 2 }, out[4];
	struct stream_wire_frame g;
	int x, y;
	bool vis;

	(void)state;
	stream_wire_put_frame(buf, &f);
	stream_wire_put_rect(buf + 24, &r1);
	memcpy(buf + 40, "abc", 3);
	stream_wire_put_rect(buf + 43, &r2);
	memcpy(buf + 59, "de", 2);
	assert_int_equal(stream_wire_type(buf, sizeof(buf)), STREAM_WIRE_FRAME);
	assert_int_equal(stream_wire_parse_frame(buf, sizeof(buf), &g, out, 4), 0);
	assert_false(g.key);
	assert_int_equal(g.rects, 2);
	assert_int_equal(g.seq, 77);
	assert_true(g.time_us == 1796000000123456ull);
	assert_int_equal(g.width, 1280);
	assert_int_equal(out[0].x, 10);
	assert_int_equal(out[0].h, 40);
	assert_memory_equal(out[0].data, "abc", 3);
	assert_int_equal(out[1].x, 1270);
	assert_memory_equal(out[1].data, "de", 2);
	/* Truncated, trailing bytes, too many rects, a rect off the screen. */
	assert_int_equal(stream_wire_parse_frame(buf, sizeof(buf) - 1, &g, out, 4), -EINVAL);
	assert_int_equal(stream_wire_parse_frame(buf, 23, &g, out, 4), -EINVAL);
	assert_int_equal(stream_wire_parse_frame(buf, sizeof(buf), &g, out, 1), -EINVAL);
	r2.x = 1275;
	stream_wire_put_rect(buf + 43, &r2);
	assert_int_equal(stream_wire_parse_frame(buf, sizeof(buf), &g, out, 4), -EINVAL);

	stream_wire_put_cursor(buf, 1279, 3, true);
	assert_int_equal(stream_wire_type(buf, 8), STREAM_WIRE_CURSOR);
	assert_int_equal(stream_wire_parse_cursor(buf, 8, &x, &y, &vis), 0);
	assert_int_equal(x, 1279);
	assert_int_equal(y, 3);
	assert_true(vis);
	assert_int_equal(stream_wire_parse_cursor(buf, 7, &x, &y, &vis), -EINVAL);
	{
		uint8_t shape[STREAM_WIRE_SHAPE_HDR + 2 * 3 * 4];
		const uint8_t *rgba;
		int w, h, hx, hy;

		stream_wire_put_shape(shape, 2, 3, 1, 2);
		memset(shape + STREAM_WIRE_SHAPE_HDR, 0xab, 24);
		assert_int_equal(stream_wire_type(shape, sizeof(shape)), STREAM_WIRE_CURSOR_SHAPE);
		assert_int_equal(stream_wire_parse_shape(shape, sizeof(shape), &w, &h, &hx, &hy,
							 &rgba),
				 0);
		assert_int_equal(w, 2);
		assert_int_equal(h, 3);
		assert_int_equal(hx, 1);
		assert_int_equal(hy, 2);
		assert_ptr_equal(rgba, shape + STREAM_WIRE_SHAPE_HDR);
		assert_int_equal(stream_wire_parse_shape(shape, sizeof(shape) - 1, &w, &h, &hx, &hy,
							 &rgba),
				 -EINVAL);
		stream_wire_put_shape(shape, 2, 3, 2, 0); /* hot spot outside */
		assert_int_equal(stream_wire_parse_shape(shape, sizeof(shape), &w, &h, &hx, &hy,
							 &rgba),
				 -EINVAL);
	}
	assert_int_equal(stream_wire_type(buf, 0), 0);
}

static struct display_frame *pattern(int w, int h, uint64_t seq)
{
	struct display_frame *f = display_frame_create(w, h);

	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			uint8_t *p = f->pixels + (size_t)y * f->stride + (size_t)x * 4;

			p[0] = (uint8_t)(x * 3);
			p[1] = (uint8_t)(y * 5);
			p[2] = 0x40;
		}
	f->seq = seq;
	return f;
}

static struct display_frame *copy_frame(const struct display_frame *a, uint64_t seq)
{
	struct display_frame *f = display_frame_create(a->width, a->height);

	memcpy(f->pixels, a->pixels, (size_t)a->stride * a->height);
	f->seq = seq;
	return f;
}

static void paint(struct display_frame *f, int x0, int y0, int w, int h, uint32_t rgb)
{
	for (int y = y0; y < y0 + h; y++)
		for (int x = x0; x < x0 + w; x++) {
			uint8_t *p = f->pixels + (size_t)y * f->stride + (size_t)x * 4;

			p[0] = (uint8_t)(rgb >> 16);
			p[1] = (uint8_t)(rgb >> 8);
			p[2] = (uint8_t)rgb;
		}
}

static void test_diff_tiles_and_merges(void **state)
{
	struct display_frame *a = pattern(300, 200, 1), *b = copy_frame(a, 2);
	struct display_rect r[8];

	(void)state;
	assert_int_equal(display_stream_diff(a, b, r, 8), 0);
	paint(b, 70, 10, 2, 2, 0xFFFFFF); /* one tile: x 64..127, y 0..63 */
	assert_int_equal(display_stream_diff(a, b, r, 8), 1);
	assert_int_equal(r[0].x, 64);
	assert_int_equal(r[0].y, 0);
	assert_int_equal(r[0].w, 64);
	assert_int_equal(r[0].h, 64);
	/* Same columns one band lower merge; the last, partial tile is clipped. */
	paint(b, 70, 100, 2, 2, 0xFFFFFF);
	paint(b, 299, 199, 1, 1, 0xFFFFFF);
	assert_int_equal(display_stream_diff(a, b, r, 8), 2);
	assert_int_equal(r[0].h, 128);
	assert_int_equal(r[1].x, 256);
	assert_int_equal(r[1].w, 44);
	assert_int_equal(r[1].y, 192);
	assert_int_equal(r[1].h, 8);
	/* More than max: max + 1. */
	assert_int_equal(display_stream_diff(a, b, r, 1), 2);
	display_frame_unref(a);
	display_frame_unref(b);
}

/* Decodes a frame message onto rgb (w x h x 3). */
static void apply(const struct display_stream_msg *m, uint8_t *rgb, int w)
{
	struct stream_wire_rect rects[64];
	struct stream_wire_frame f;
	tjhandle tj = tjInitDecompress();

	assert_int_equal(stream_wire_parse_frame(m->buf + m->headroom, m->len, &f, rects, 64), 0);
	for (int i = 0; i < f.rects; i++) {
		uint8_t *part = malloc((size_t)rects[i].w * rects[i].h * 3);

		assert_int_equal(tjDecompress2(tj, rects[i].data, rects[i].len, part, rects[i].w, 0,
					       rects[i].h, TJPF_RGB, 0),
				 0);
		for (int y = 0; y < rects[i].h; y++)
			memcpy(rgb + ((size_t)(rects[i].y + y) * w + rects[i].x) * 3,
			       part + (size_t)y * rects[i].w * 3, (size_t)rects[i].w * 3);
		free(part);
	}
	tjDestroy(tj);
}

static void test_encode_delta_and_key(void **state)
{
	struct display_stream_encoder *e = display_stream_encoder_create();
	struct display_frame *a = pattern(320, 240, 1), *b = copy_frame(a, 2), *c;
	struct display_stream_msg *m;
	uint8_t *rgb = calloc(320 * 240, 3);
	char err[128];

	(void)state;
	assert_int_equal(display_stream_encode(e, NULL, a, 90, 5, 16, &m, err, sizeof(err)), 0);
	assert_true(m->key);
	assert_int_equal(m->rects, 1);
	apply(m, rgb, 320);
	display_stream_msg_unref(m);
	paint(b, 100, 100, 20, 20, 0xFF0000);
	assert_int_equal(display_stream_encode(e, a, b, 90, 5, 16, &m, err, sizeof(err)), 0);
	assert_false(m->key);
	assert_int_equal(m->rects, 1);
	apply(m, rgb, 320);
	display_stream_msg_unref(m);
	/* The viewer's picture now shows the red square, and the rest unchanged. */
	assert_true(rgb[(110 * 320 + 110) * 3] > 230 && rgb[(110 * 320 + 110) * 3 + 1] < 30);
	assert_true(abs(rgb[(10 * 320 + 10) * 3] - 30) < 12);
	/* No change: a frame with no rects. */
	c = copy_frame(b, 3);
	assert_int_equal(display_stream_encode(e, b, c, 90, 5, 16, &m, err, sizeof(err)), 0);
	assert_int_equal(m->rects, 0);
	display_stream_msg_unref(m);
	/* Most of the screen changed: a whole frame is cheaper. */
	paint(c, 0, 0, 320, 200, 0x00FF00);
	assert_int_equal(display_stream_encode(e, b, c, 90, 5, 16, &m, err, sizeof(err)), 0);
	assert_true(m->key);
	display_stream_msg_unref(m);
	display_frame_unref(c);
	/* Another size: whole. */
	c = pattern(200, 100, 4);
	assert_int_equal(display_stream_encode(e, b, c, 90, 5, 16, &m, err, sizeof(err)), 0);
	assert_true(m->key);
	display_stream_msg_unref(m);
	display_frame_unref(a);
	display_frame_unref(b);
	display_frame_unref(c);
	free(rgb);
	display_stream_encoder_destroy(e);
}

static int parse(const char *text, struct stream_msg *m)
{
	char reason[120];

	return stream_msg_parse(text, strlen(text), 1280, 800, m, reason, sizeof(reason));
}

static void test_messages_and_close_codes(void **state)
{
	struct stream_msg m;
	char big[5000];

	(void)state;
	assert_int_equal(
		parse("{\"type\":\"auth\",\"token\":\"abc\",\"name\":\"Ann\",\"quality\":40}", &m),
		0);
	assert_int_equal(m.kind, SM_AUTH);
	assert_string_equal(m.token, "abc");
	assert_string_equal(m.name, "Ann");
	assert_int_equal(m.quality, 40);
	assert_int_equal(parse("{\"type\":\"settings\",\"max_fps\":60}", &m), 0);
	assert_int_equal(m.max_fps, 60);
	assert_int_equal(parse("{\"type\":\"pointer\",\"x\":1279,\"y\":799,\"buttons\":5}", &m), 0);
	assert_int_equal(m.buttons, 5);
	assert_int_equal(parse("{\"type\":\"wheel\",\"x\":1,\"y\":2,\"dy\":-3}", &m), 0);
	assert_int_equal(m.dy, -3);
	assert_int_equal(parse("{\"type\":\"key\",\"code\":\"KeyQ\",\"down\":false}", &m), 0);
	assert_string_equal(m.qcode, "q");
	assert_false(m.down);
	assert_int_equal(m.key_char, 0);
	/* a key by what the person's layout made of it (AZERTY's a on KeyQ) */
	assert_int_equal(parse("{\"type\":\"key\",\"code\":\"KeyQ\",\"key\":\"a\",\"down\":true}",
			       &m),
			 0);
	assert_string_equal(m.qcode, "q");
	assert_int_equal(m.key_char, 'a');
	assert_int_equal(parse("{\"type\":\"key\",\"key\":\"\u00e9\",\"down\":true}", &m), 0);
	assert_null(m.qcode);
	assert_int_equal(m.key_char, 0xe9);
	/* a code the gateway does not know is fine beside a character */
	assert_int_equal(parse("{\"type\":\"key\",\"code\":\"IntlRo\",\"key\":\"/\",\"down\":true}",
			       &m),
			 0);
	assert_int_equal(m.key_char, '/');
	assert_int_equal(parse("{\"type\":\"key\",\"key\":\"ab\",\"down\":true}", &m),
			 STREAM_CLOSE_POLICY);
	assert_int_equal(parse("{\"type\":\"key\",\"key\":\"\\n\",\"down\":true}", &m),
			 STREAM_CLOSE_POLICY);
	assert_int_equal(parse("{\"type\":\"key\",\"down\":true}", &m), STREAM_CLOSE_POLICY);
	/* text the person typed */
	assert_int_equal(parse("{\"type\":\"text\",\"text\":\"Gr\u00fc\u00dfe \u4e16\"}", &m), 0);
	assert_int_equal(m.kind, SM_TEXT);
	assert_string_equal(m.text, "Gr\xc3\xbc\xc3\x9f"
				    "e \xe4\xb8\x96");
	assert_int_equal(parse("{\"type\":\"text\",\"text\":\"\"}", &m), STREAM_CLOSE_POLICY);
	assert_int_equal(parse("{\"type\":\"text\",\"text\":3}", &m), STREAM_CLOSE_POLICY);
	assert_int_equal(parse("{\"type\":\"text\",\"text\":\"a\",\"x\":1}", &m),
			 STREAM_CLOSE_POLICY);
	{
		char msg[400] = "{\"type\":\"text\",\"text\":\"";

		memset(msg + strlen(msg), 'x', STREAM_TEXT_MAX + 1);
		strcat(msg, "\"}");
		assert_int_equal(parse(msg, &m), STREAM_CLOSE_POLICY);
	}
	assert_int_equal(stream_one_char("\xe2\x82\xac", 3), 0x20ac);
	assert_int_equal(stream_one_char("a", 1), 'a');
	assert_int_equal(stream_one_char("\x7f", 1), 0);
	assert_int_equal(stream_one_char("ab", 2), 0);
	assert_int_equal(stream_one_char("", 0), 0);
	assert_int_equal(parse("{\"type\":\"ping\",\"t\":12.5}", &m), 0);
	assert_true(m.has_t);
	assert_int_equal(parse("{\"type\":\"take\"}", &m), 0);
	assert_int_equal(m.kind, SM_TAKE);
	assert_int_equal(parse("{\"type\":\"release\"}", &m), 0);
	assert_int_equal(m.kind, SM_RELEASE);

	assert_int_equal(parse("{nope", &m), STREAM_CLOSE_INVALID);
	assert_int_equal(parse("\"str\"", &m), STREAM_CLOSE_INVALID);
	assert_int_equal(parse("{\"type\":\"x\",\"type\":\"y\"}", &m), STREAM_CLOSE_INVALID);
	assert_int_equal(parse("{\"type\":3}", &m), STREAM_CLOSE_POLICY);
	assert_int_equal(parse("{\"type\":\"pointer\",\"x\":1280,\"y\":0}", &m),
			 STREAM_CLOSE_POLICY);
	assert_int_equal(parse("{\"type\":\"pointer\",\"x\":1}", &m), STREAM_CLOSE_POLICY);
	assert_int_equal(parse("{\"type\":\"pointer\",\"x\":1,\"y\":1,\"buttons\":32}", &m),
			 STREAM_CLOSE_POLICY);
	assert_int_equal(parse("{\"type\":\"wheel\",\"x\":1,\"y\":1,\"dy\":11}", &m),
			 STREAM_CLOSE_POLICY);
	assert_int_equal(parse("{\"type\":\"key\",\"code\":\"KeyA\"}", &m), STREAM_CLOSE_POLICY);
	assert_int_equal(parse("{\"type\":\"key\",\"code\":\"Keya\",\"down\":true}", &m),
			 STREAM_CLOSE_POLICY);
	assert_int_equal(parse("{\"type\":\"auth\",\"token\":\"\"}", &m), STREAM_CLOSE_POLICY);
	assert_int_equal(parse("{\"type\":\"auth\",\"token\":\"t\",\"name\":\"a\\nb\"}", &m),
			 STREAM_CLOSE_POLICY);
	assert_int_equal(parse("{\"type\":\"settings\",\"max_fps\":61}", &m), STREAM_CLOSE_POLICY);
	assert_int_equal(parse("{\"type\":\"ping\",\"t\":\"x\"}", &m), STREAM_CLOSE_POLICY);
	assert_int_equal(parse("{\"type\":\"take\",\"now\":true}", &m), STREAM_CLOSE_POLICY);
	memset(big, ' ', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(parse(big, &m), STREAM_CLOSE_TOO_BIG);
}

/* A person's paste ({"type":"type"}) and copy ({"type":"clipboard"}). */
static void test_type_and_clipboard_messages(void **state)
{
	struct stream_msg m;
	char big[STREAM_MSG_MAX + 1];
	int n;

	(void)state;
	assert_int_equal(parse("{\"type\":\"type\",\"text\":\"Gr\u00fc\u00dfe\\n\\t\\\"x\\\"\"}",
			       &m),
			 0);
	assert_int_equal(m.kind, SM_TYPE);
	assert_string_equal(m.text, "Gr\xc3\xbc\xc3\x9f"
				    "e\n\t\"x\"");
	assert_int_equal(m.text_len, strlen("Gr\xc3\xbc\xc3\x9f"
					    "e\n\t\"x\""));
	/* As long as a message can carry: 4096 bytes, of which 4074 text. */
	n = snprintf(big, sizeof(big), "{\"type\":\"type\",\"text\":\"");
	memset(big + n, 'a', STREAM_MSG_MAX - n - 2);
	memcpy(big + STREAM_MSG_MAX - 2, "\"}", 3);
	assert_int_equal(stream_msg_parse(big, strlen(big), 1280, 800, &m, (char[120]){ 0 }, 120),
			 0);
	assert_int_equal(m.text_len, (size_t)(STREAM_MSG_MAX - n - 2));
	assert_int_equal(m.text[m.text_len - 1], 'a');
	assert_int_equal(m.text[m.text_len], '\0');
	assert_int_equal(parse("{\"type\":\"type\",\"text\":\"\"}", &m), STREAM_CLOSE_POLICY);
	assert_int_equal(parse("{\"type\":\"type\",\"text\":3}", &m), STREAM_CLOSE_POLICY);
	assert_int_equal(parse("{\"type\":\"type\"}", &m), STREAM_CLOSE_POLICY);
	assert_int_equal(parse("{\"type\":\"type\",\"text\":\"a\\u0000b\"}", &m),
			 STREAM_CLOSE_INVALID);
	assert_int_equal(parse("{\"type\":\"type\",\"text\":\"a\",\"down\":true}", &m),
			 STREAM_CLOSE_POLICY);
	assert_int_equal(parse("{\"type\":\"clipboard\"}", &m), 0);
	assert_int_equal(m.kind, SM_CLIPBOARD);
	assert_int_equal(parse("{\"type\":\"clipboard\",\"text\":\"x\"}", &m), STREAM_CLOSE_POLICY);
}

static void test_key_codes(void **state)
{
	(void)state;
	assert_string_equal(stream_code_to_qcode("KeyA"), "a");
	assert_string_equal(stream_code_to_qcode("KeyZ"), "z");
	assert_string_equal(stream_code_to_qcode("Digit0"), "0");
	assert_string_equal(stream_code_to_qcode("Enter"), "ret");
	assert_string_equal(stream_code_to_qcode("ShiftRight"), "shift_r");
	assert_string_equal(stream_code_to_qcode("ArrowLeft"), "left");
	assert_string_equal(stream_code_to_qcode("NumpadEnter"), "kp_enter");
	assert_null(stream_code_to_qcode("KeyAA"));
	assert_null(stream_code_to_qcode(""));
	assert_null(stream_code_to_qcode("Fn"));
}

static void test_share_tokens(void **state)
{
	struct share_table st;
	char a[AUTH_TOKEN_LEN + 1], b[AUTH_TOKEN_LEN + 1], first[AUTH_TOKEN_LEN + 1];

	(void)state;
	memset(&st, 0, sizeof(st));
	assert_int_equal(share_add(&st, AUTH_VIEW, 10, 1000, a), 0);
	assert_int_equal(share_add(&st, AUTH_CONTROL, 20, 1000, b), 0);
	assert_int_equal(share_scope(&st, a, 1000), AUTH_VIEW);
	assert_int_equal(share_scope(&st, b, 20999), AUTH_CONTROL);
	assert_int_equal(share_scope(&st, a, 11000), AUTH_NONE); /* expired */
	assert_int_equal(share_scope(&st, "nope", 1000), AUTH_NONE);
	/* Only hashes are kept. */
	assert_null(memmem(&st, sizeof(st), b, AUTH_TOKEN_LEN));
	{
		char h[AUTH_HASH_LEN + 1];

		auth_token_hash(b, h);
		assert_int_equal(share_scope_of_hash(&st, h, 1000), AUTH_CONTROL);
	}
	/* Full: a live share is never evicted (expired slots are reused). */
	memcpy(first, b, sizeof(b));
	for (int i = 0; i < SHARE_MAX - 1; i++)
		assert_int_equal(share_add(&st, AUTH_VIEW, 100 + i, 12000, a), 0);
	assert_int_equal(share_scope(&st, a, 12000), AUTH_VIEW);
	assert_int_equal(share_scope(&st, first, 12000), AUTH_CONTROL);
	assert_int_equal(share_add(&st, AUTH_VIEW, 100, 12000, a), -ENOSPC);
	assert_int_equal(share_scope(&st, first, 12000), AUTH_CONTROL);
	assert_int_equal(share_add(&st, AUTH_VIEW, 100, 21000, a), 0); /* first expired */
	assert_int_equal(share_revoke_all(&st, 21000), SHARE_MAX);
	assert_int_equal(share_scope(&st, a, 21000), AUTH_NONE);
}

/* The live view's pool: one link per scope handed out again while more
 * than half its life is left, then a new one; two per scope are enough;
 * any number of them leaves share_add's table alone; revoked with it. */
static void test_share_live_pool(void **state)
{
	struct share_table st;
	char v1[AUTH_TOKEN_LEN + 1], v2[AUTH_TOKEN_LEN + 1], c1[AUTH_TOKEN_LEN + 1],
		t[AUTH_TOKEN_LEN + 1];

	(void)state;
	memset(&st, 0, sizeof(st));
	assert_int_equal(share_live(&st, AUTH_VIEW, 3600, 0, v1), 0);
	assert_int_equal(share_live(&st, AUTH_CONTROL, 3600, 0, c1), 0);
	assert_string_not_equal(v1, c1);
	for (int i = 0; i < 1000; i++) { /* the same links, and no share_add slot taken */
		assert_int_equal(share_live(&st, AUTH_VIEW, 3600, i, t), 1);
		assert_string_equal(t, v1);
		assert_int_equal(share_live(&st, AUTH_CONTROL, 3600, i, t), 1);
		assert_string_equal(t, c1);
	}
	assert_int_equal(share_scope(&st, v1, 5000), AUTH_VIEW);
	assert_int_equal(share_scope(&st, c1, 5000), AUTH_CONTROL);
	for (int i = 0; i < SHARE_MAX; i++)
		assert_int_equal(share_add(&st, AUTH_VIEW, 600, 5000, t), 0);
	/* half its life gone: a new link; the old one still works till its end */
	assert_int_equal(share_live(&st, AUTH_VIEW, 3600, 1800 * 1000, v2), 0);
	assert_string_not_equal(v2, v1);
	assert_int_equal(share_live(&st, AUTH_VIEW, 3600, 1800 * 1000 + 1, t), 1);
	assert_string_equal(t, v2);
	assert_int_equal(share_scope(&st, v1, 3599 * 1000), AUTH_VIEW);
	assert_int_equal(share_scope(&st, v1, 3600 * 1000), AUTH_NONE);
	/* hours of asking in both scopes never run out of room */
	for (int64_t now = 0; now < 10 * 3600 * 1000; now += 60 * 1000) {
		assert_true(share_live(&st, AUTH_VIEW, 3600, now, t) >= 0);
		assert_int_equal(share_scope(&st, t, now), AUTH_VIEW);
		assert_true(share_live(&st, AUTH_CONTROL, 3600, now, t) >= 0);
		assert_int_equal(share_scope(&st, t, now), AUTH_CONTROL);
	}
	/* at 35970 s: links made at 32400 and 34200 s of each scope live */
	assert_int_equal(share_live(&st, AUTH_VIEW, 3600, 35970 * 1000, t), 1);
	assert_int_equal(share_revoke_all(&st, 35970 * 1000), 4);
	assert_int_equal(share_scope(&st, t, 35970 * 1000), AUTH_NONE);
	assert_int_equal(share_live(&st, AUTH_VIEW, 3600, 35970 * 1000, v1), 0);
	assert_string_not_equal(v1, t);
}

static void test_stream_routes(void **state)
{
	struct route r;

	(void)state;
	r = route_parse(M_GET, "/v1/sessions/s_1/stream");
	assert_int_equal(r.kind, R_SESSION_STREAM_WS);
	assert_string_equal(r.id, "s_1");
	assert_int_equal(route_parse(M_POST, "/v1/sessions/s_1/stream").kind, R_METHOD_NOT_ALLOWED);
	assert_int_equal(route_parse(M_POST, "/v1/sessions/s_1/share").kind, R_SESSION_SHARE);
	assert_int_equal(route_parse(M_GET, "/v1/sessions/s_1/share").kind, R_METHOD_NOT_ALLOWED);
	assert_int_equal(route_parse(M_GET, "/").kind, R_ROOT);
	assert_int_equal(route_parse(M_GET, "/v1/sessions/s_1/streams").kind, R_NOT_FOUND);
	assert_int_equal(route_parse(M_POST, "/v1/sessions/s_1/vnc").kind, R_SESSION_VNC);
	assert_int_equal(route_parse(M_DELETE, "/v1/sessions/s_1/vnc").kind, R_SESSION_VNC);
	assert_int_equal(route_parse(M_GET, "/v1/sessions/s_1/vnc").kind, R_METHOD_NOT_ALLOWED);
}

static void test_vnc_keysyms(void **state)
{
	(void)state;
	assert_string_equal(vnc_keysym_qcode('a'), "a");
	assert_string_equal(vnc_keysym_qcode('A'), "a"); /* the client sends Shift itself */
	assert_string_equal(vnc_keysym_qcode('!'), "1");
	assert_string_equal(vnc_keysym_qcode(' '), "spc");
	assert_string_equal(vnc_keysym_qcode(0xff0d), "ret");
	assert_string_equal(vnc_keysym_qcode(0xffe1), "shift");
	assert_string_equal(vnc_keysym_qcode(0xffbe), "f1");
	assert_string_equal(vnc_keysym_qcode(0xffc9), "f12");
	assert_string_equal(vnc_keysym_qcode(0xffb5), "kp_5");
	assert_string_equal(vnc_keysym_qcode(0xff52), "up");
	assert_null(vnc_keysym_qcode(0x20ac)); /* the euro sign: no key on a US layout */
	assert_null(vnc_keysym_qcode(0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wire_round_trip),
		cmocka_unit_test(test_diff_tiles_and_merges),
		cmocka_unit_test(test_encode_delta_and_key),
		cmocka_unit_test(test_messages_and_close_codes),
		cmocka_unit_test(test_type_and_clipboard_messages),
		cmocka_unit_test(test_key_codes),
		cmocka_unit_test(test_share_tokens),
		cmocka_unit_test(test_share_live_pool),
		cmocka_unit_test(test_stream_routes),
		cmocka_unit_test(test_vnc_keysyms),
	};

	return cmocka_run_group_tests_name("live view, pure parts", tests, NULL, NULL);
}
