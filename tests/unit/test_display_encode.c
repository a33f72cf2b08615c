/* tests/unit/test_display_encode.c: scaling math and filters, JPEG and PNG
 * encoding checked by decoding back (TurboJPEG within a tolerance, libpng
 * exactly), and the encode-once cache. */
#include "display/encode.h"
#include "display/encode_cache.h"

#include <errno.h>
#include <png.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>
#include <unistd.h>

#include <cmocka.h>

static void put(struct display_frame *f, int x, int y, uint32_t rgb)
{
	uint8_t *p = f->pixels + (size_t)y * f->stride + (size_t)x * 4;

	p[0] = (uint8_t)(rgb >> 16);
	p[1] = (uint8_t)(rgb >> 8);
	p[2] = (uint8_t)rgb;
	p[3] = 0x5A; /* padding must never leak into output */
}

/* Four flat quadrants: red, green, blue, white; plus a 1-pixel diagonal. */
static struct display_frame *test_frame(int w, int h)
{
	struct display_frame *f = display_frame_create(w, h);

	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++)
			put(f, x, y,
			    y < h / 2 ? (x < w / 2 ? 0xFF0000 : 0x00FF00)
				      : (x < w / 2 ? 0x0000FF : 0xFFFFFF));
	f->seq = 1;
	return f;
}

static bool close_rgb(const uint8_t *p, uint32_t rgb, int tol)
{
	int d0 = p[0] - (int)(rgb >> 16 & 0xFF), d1 = p[1] - (int)(rgb >> 8 & 0xFF),
	    d2 = p[2] - (int)(rgb & 0xFF);

	return abs(d0) <= tol && abs(d1) <= tol && abs(d2) <= tol;
}

static void test_scale_fit(void **state)
{
	int w, h;
	double s;

	(void)state;
	display_scale_fit(1280, 800, 0, 0, &w, &h, &s);
	assert_int_equal(w, 1280);
	assert_int_equal(h, 800);
	assert_true(s == 1.0);
	display_scale_fit(1280, 800, 640, 0, &w, &h, &s);
	assert_int_equal(w, 640);
	assert_int_equal(h, 400);
	assert_true(s == 0.5);
	display_scale_fit(1280, 800, 0, 200, &w, &h, &s);
	assert_int_equal(w, 320);
	assert_int_equal(h, 200);
	display_scale_fit(1280, 800, 1024, 768, &w, &h, &s); /* width binds */
	assert_int_equal(w, 1024);
	assert_int_equal(h, 640);
	assert_true(s == 0.8);
	display_scale_fit(1280, 800, 2000, 400, &w, &h, &s); /* height binds */
	assert_int_equal(w, 640);
	assert_int_equal(h, 400);
	display_scale_fit(1280, 800, 2560, 0, &w, &h, &s); /* upscale */
	assert_int_equal(w, 2560);
	assert_int_equal(h, 1600);
	assert_true(s == 2.0);
	display_scale_fit(1000, 3, 10, 0, &w, &h, &s); /* never below 1 */
	assert_int_equal(w, 10);
	assert_int_equal(h, 1);
	display_scale_fit(1366, 768, 1280, 0, &w, &h, &s); /* rounding */
	assert_int_equal(h, 720);
}

/* No fit goes past the display limits, however large the asked size. */
static void test_scale_fit_capped(void **state)
{
	int w, h;
	double s;

	(void)state;
	/* 16384 wide on a 1280x800 screen would be 16384x10240 (168 Mpixel). */
	display_scale_fit(1280, 800, 16384, 0, &w, &h, &s);
	assert_true(display_size_ok(w, h));
	assert_true((int64_t)(w + 1) * ((w + 1) * 800 / 1280) >
		    DISPLAY_MAX_PIXELS); /* the largest */
	assert_true(abs(h - (w * 800 + 640) / 1280) <= 1); /* aspect ratio kept */
	assert_true(s == (double)w / 1280);
	display_scale_fit(1280, 800, 16384, 16384, &w, &h, &s);
	assert_true(display_size_ok(w, h));
	/* A wide strip meets the side limit first. */
	display_scale_fit(1000, 10, 16384, 0, &w, &h, &s);
	assert_int_equal(w, DISPLAY_MAX_SIDE);
	assert_int_equal(h, 82);
	display_scale_fit(10, 1000, 0, 16384, &w, &h, &s);
	assert_int_equal(h, DISPLAY_MAX_SIDE);
	assert_int_equal(w, 82);
	/* Exactly at the limit is allowed. */
	display_scale_fit(1024, 256, DISPLAY_MAX_SIDE, 0, &w, &h, &s);
	assert_int_equal(w, DISPLAY_MAX_SIDE);
	assert_int_equal(h, 2048);
	/* A 1-pixel sliver stays within the side limit too. */
	display_scale_fit(1, 8000, 0, 16384, &w, &h, &s);
	assert_true(display_size_ok(w, h));
}

/* An encode asked for more than the limit makes the largest picture within
 * it and says so (width, height, scale). */
static void test_encode_capped(void **state)
{
	struct display_frame *f = test_frame(64, 40);
	struct display_encode_opts o = { .format = DISPLAY_FORMAT_JPEG,
					 .quality = 50,
					 .max_width = 16384,
					 .max_height = 16384 };
	struct display_image *img;
	char err[256];

	(void)state;
	assert_int_equal(display_encode(f, &o, &img, err, sizeof(err)), 0);
	assert_true(display_size_ok(img->width, img->height));
	assert_true((int64_t)img->width * img->height > DISPLAY_MAX_PIXELS * 0.99);
	assert_true(img->scale == (double)img->width / 64);
	print_message("asked 16384x16384 of 64x40: made %dx%d (%zu bytes)\n", img->width,
		      img->height, img->len);
	display_image_unref(img);
	display_frame_unref(f);
}

static void test_scale_filters(void **state)
{
	struct display_frame *f = test_frame(8, 8);
	uint8_t down[4 * 4 * 4], up[16 * 16 * 4], odd[3 * 3 * 4];

	(void)state;
	/* 2x box: each output pixel is one flat 2x2 block. */
	assert_int_equal(display_scale_rgbx(f->pixels, 8, 8, f->stride, down, 4, 4, 16), 0);
	assert_true(close_rgb(down + 0, 0xFF0000, 0));
	assert_true(close_rgb(down + 3 * 4, 0x00FF00, 0));
	assert_true(close_rgb(down + 3 * 16, 0x0000FF, 0));
	assert_true(close_rgb(down + 3 * 16 + 3 * 4, 0xFFFFFF, 0));
	/* 8 -> 3: the middle pixel averages across the quadrant border. */
	assert_int_equal(display_scale_rgbx(f->pixels, 8, 8, f->stride, odd, 3, 3, 12), 0);
	assert_true(close_rgb(odd + 0, 0xFF0000, 0));
	assert_true(odd[4 * 4 + 0] > 0x40 && odd[4 * 4 + 0] < 0xC0);
	/* Bilinear 2x: corners keep their colours, the border blends. */
	assert_int_equal(display_scale_rgbx(f->pixels, 8, 8, f->stride, up, 16, 16, 64), 0);
	assert_true(close_rgb(up + 0, 0xFF0000, 0));
	assert_true(close_rgb(up + 15 * 64 + 15 * 4, 0xFFFFFF, 0));
	assert_true(up[0 * 64 + 7 * 4 + 0] > 0x80 && up[0 * 64 + 7 * 4 + 1] > 0x10);
	assert_int_equal(display_scale_rgbx(f->pixels, 8, 8, 8, down, 4, 4, 16), -EINVAL);
	display_frame_unref(f);
}

static uint8_t *decode_jpeg(const struct display_image *img, int *w, int *h)
{
	tjhandle tj = tjInitDecompress();
	int sub, cs;
	uint8_t *out;

	assert_int_equal(tjDecompressHeader3(tj, img->data, img->len, w, h, &sub, &cs), 0);
	out = malloc((size_t)*w * *h * 3);
	assert_int_equal(tjDecompress2(tj, img->data, img->len, out, *w, 0, *h, TJPF_RGB, 0), 0);
	tjDestroy(tj);
	return out;
}

static uint8_t *decode_png(const struct display_image *img, int *w, int *h)
{
	png_image pi;
	uint8_t *out;

	memset(&pi, 0, sizeof(pi));
	pi.version = PNG_IMAGE_VERSION;
	assert_true(png_image_begin_read_from_memory(&pi, img->data, img->len));
	pi.format = PNG_FORMAT_RGB;
	*w = (int)pi.width;
	*h = (int)pi.height;
	out = malloc(PNG_IMAGE_SIZE(pi));
	assert_true(png_image_finish_read(&pi, NULL, out, 0, NULL));
	return out;
}

static void test_jpeg_round_trip(void **state)
{
	struct display_frame *f = test_frame(320, 200);
	struct display_encode_opts o = { .format = DISPLAY_FORMAT_JPEG, .quality = 80 };
	struct display_image *img;
	char err[256];
	uint8_t *px;
	int w, h;

	(void)state;
	assert_int_equal(display_encode(f, &o, &img, err, sizeof(err)), 0);
	assert_int_equal(img->width, 320);
	assert_int_equal(img->height, 200);
	assert_true(img->len > 100 && img->data[0] == 0xFF && img->data[1] == 0xD8);
	px = decode_jpeg(img, &w, &h);
	assert_int_equal(w, 320);
	assert_int_equal(h, 200);
	/* Centres of the quadrants, away from 4:2:0 edges. */
	assert_true(close_rgb(px + (50 * 320 + 80) * 3, 0xFF0000, 8));
	assert_true(close_rgb(px + (50 * 320 + 240) * 3, 0x00FF00, 8));
	assert_true(close_rgb(px + (150 * 320 + 80) * 3, 0x0000FF, 8));
	assert_true(close_rgb(px + (150 * 320 + 240) * 3, 0xFFFFFF, 8));
	free(px);
	display_image_unref(img);

	/* Scaled to 160 wide, and a region. */
	o.max_width = 160;
	assert_int_equal(display_encode(f, &o, &img, err, sizeof(err)), 0);
	assert_int_equal(img->width, 160);
	assert_int_equal(img->height, 100);
	assert_true(img->scale == 0.5);
	px = decode_jpeg(img, &w, &h);
	assert_true(close_rgb(px + (75 * 160 + 120) * 3, 0xFFFFFF, 8));
	free(px);
	display_image_unref(img);
	o.max_width = 0;
	o.region = (struct display_rect){ 160, 100, 64, 32 };
	assert_int_equal(display_encode(f, &o, &img, err, sizeof(err)), 0);
	assert_int_equal(img->width, 64);
	px = decode_jpeg(img, &w, &h);
	assert_true(close_rgb(px + (16 * 64 + 32) * 3, 0xFFFFFF, 8));
	free(px);
	display_image_unref(img);

	o.region = (struct display_rect){ 300, 0, 64, 32 };
	assert_int_equal(display_encode(f, &o, &img, err, sizeof(err)), -EINVAL);
	assert_null(img);
	o.region = (struct display_rect){ 0 };
	o.quality = 101;
	assert_int_equal(display_encode(f, &o, &img, err, sizeof(err)), -EINVAL);
	display_frame_unref(f);
}

static void test_png_round_trip_exact(void **state)
{
	struct display_frame *f = test_frame(97, 31); /* odd sizes */
	struct display_encode_opts o = { .format = DISPLAY_FORMAT_PNG };
	struct display_image *img;
	char err[256];
	uint8_t *px;
	int w, h;

	(void)state;
	for (int i = 0; i < 97; i++)
		put(f, i, i % 31, (uint32_t)(i * 0x010203));
	assert_int_equal(display_encode(f, &o, &img, err, sizeof(err)), 0);
	px = decode_png(img, &w, &h);
	assert_int_equal(w, 97);
	assert_int_equal(h, 31);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			const uint8_t *p = px + ((size_t)y * w + x) * 3;
			uint32_t want = display_frame_pixel(f, x, y);

			if (!close_rgb(p, want, 0))
				fail_msg("png (%d,%d) = %02x%02x%02x, want %06x", x, y, p[0], p[1],
					 p[2], want);
		}
	free(px);
	display_image_unref(img);
	display_frame_unref(f);
}

static void test_cache_encodes_once(void **state)
{
	struct display_encode_cache *c = display_encode_cache_create(2);
	struct display_frame *f = test_frame(64, 64);
	struct display_encode_opts jpeg = { .format = DISPLAY_FORMAT_JPEG, .quality = 80 };
	struct display_encode_opts png = { .format = DISPLAY_FORMAT_PNG };
	struct display_image *a, *b, *p;
	uint64_t hits, misses;
	char err[256];

	(void)state;
	assert_int_equal(display_encode_cache_get(c, f, &jpeg, &a, err, sizeof(err)), 0);
	assert_int_equal(display_encode_cache_get(c, f, &jpeg, &b, err, sizeof(err)), 0);
	assert_ptr_equal(a, b);
	display_encode_cache_stats(c, &hits, &misses);
	assert_int_equal(hits, 1);
	assert_int_equal(misses, 1);
	assert_int_equal(display_encode_cache_get(c, f, &png, &p, err, sizeof(err)), 0);
	assert_ptr_not_equal(p, a);
	display_image_unref(p);
	/* A new frame seq misses and evicts the least recently used entry. */
	f->seq = 2;
	assert_int_equal(display_encode_cache_get(c, f, &jpeg, &p, err, sizeof(err)), 0);
	assert_ptr_not_equal(p, a);
	display_image_unref(p);
	display_encode_cache_stats(c, &hits, &misses);
	assert_int_equal(misses, 3);
	display_encode_cache_destroy(c);
	/* Handed-out images outlive the cache. */
	assert_true(a->len > 0);
	display_image_unref(a);
	display_image_unref(b);
	display_encode_cache_destroy(NULL);
	display_frame_unref(f);
}

/* find and put: the loop's half of an encode done elsewhere. */
static void test_cache_find_and_put(void **state)
{
	struct display_encode_cache *c = display_encode_cache_create(4);
	struct display_frame *f = test_frame(32, 32);
	struct display_encode_opts o = { .format = DISPLAY_FORMAT_JPEG, .quality = 60 };
	struct display_image *a, *b, *got;
	uint64_t hits, misses;
	char err[256];

	(void)state;
	got = (void *)1;
	assert_int_equal(display_encode_cache_find(c, f, &o, &got), -ENOENT);
	assert_null(got);
	assert_int_equal(display_encode(f, &o, &a, err, sizeof(err)), 0);
	assert_int_equal(display_encode(f, &o, &b, err, sizeof(err)), 0);
	/* The first put is stored and handed back... */
	got = display_encode_cache_put(c, f, &o, a);
	assert_ptr_equal(got, a);
	display_image_unref(got);
	/* ...a racing second one for the same key gets the first image. */
	got = display_encode_cache_put(c, f, &o, b);
	assert_ptr_equal(got, a);
	display_image_unref(got);
	assert_int_equal(display_encode_cache_find(c, f, &o, &got), 0);
	assert_ptr_equal(got, a);
	display_image_unref(got);
	display_encode_cache_stats(c, &hits, &misses);
	assert_int_equal(hits, 1);
	assert_int_equal(misses, 1);
	assert_null(display_encode_cache_put(c, f, &o, NULL));
	display_image_unref(a);
	display_image_unref(b); /* never stored: this frees it */
	display_encode_cache_destroy(c);
	display_frame_unref(f);
}

struct slow_get {
	struct display_encode_cache *c;
	struct display_frame *f;
	struct display_encode_opts o;
	atomic_bool started, finished;
	int rc;
};

static void *slow_get_main(void *arg)
{
	struct slow_get *g = arg;
	struct display_image *img = NULL;
	char err[256];

	atomic_store(&g->started, true);
	g->rc = display_encode_cache_get(g->c, g->f, &g->o, &img, err, sizeof(err));
	display_image_unref(img);
	atomic_store(&g->finished, true);
	return NULL;
}

/* A thread encoding through the cache does not hold up a lookup: the lock
 * is not held across the encoding. */
static void test_cache_lookup_not_blocked_by_encode(void **state)
{
	struct slow_get g = { .c = display_encode_cache_create(4),
			      .f = test_frame(2048, 2048),
			      .o = { .format = DISPLAY_FORMAT_PNG } };
	struct display_encode_opts other = { .format = DISPLAY_FORMAT_JPEG, .quality = 50 };
	struct display_image *img;
	pthread_t t;
	bool overlapped = false;

	(void)state;
	assert_int_equal(pthread_create(&t, NULL, slow_get_main, &g), 0);
	while (!atomic_load(&g.started))
		usleep(1000);
	usleep(20 * 1000); /* into the PNG encoding (hundreds of ms) */
	assert_int_equal(display_encode_cache_find(g.c, g.f, &other, &img), -ENOENT);
	assert_int_equal(display_encode_cache_find(g.c, g.f, &g.o, &img), -ENOENT);
	overlapped = !atomic_load(&g.finished);
	pthread_join(t, NULL);
	assert_int_equal(g.rc, 0);
	assert_true(overlapped);
	assert_int_equal(display_encode_cache_find(g.c, g.f, &g.o, &img), 0);
	display_image_unref(img);
	display_encode_cache_destroy(g.c);
	display_frame_unref(g.f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scale_fit),
		cmocka_unit_test(test_scale_fit_capped),
		cmocka_unit_test(test_encode_capped),
		cmocka_unit_test(test_scale_filters),
		cmocka_unit_test(test_jpeg_round_trip),
		cmocka_unit_test(test_png_round_trip_exact),
		cmocka_unit_test(test_cache_encodes_once),
		cmocka_unit_test(test_cache_find_and_put),
		cmocka_unit_test(test_cache_lookup_not_blocked_by_encode),
	};

	return cmocka_run_group_tests_name("display encode", tests, NULL, NULL);
}
