/* display/encode.c: see encode.h. */
#include "display/encode.h"

#include <errno.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>

/* Shrinks *w x *h, aspect ratio kept, to the largest size within the limits
 * of display_size_ok: the widest width whose rounded height fits (the test
 * is monotonic in the width, so a binary search finds it). */
static void shrink_to_limit(int *w, int *h)
{
	int64_t lo = 1, hi = *w < DISPLAY_MAX_SIDE ? *w : DISPLAY_MAX_SIDE;
	int64_t w0 = *w, h0 = *h;

	while (lo < hi) {
		int64_t mid = (lo + hi + 1) / 2, mh = (mid * h0 + w0 / 2) / w0;

		if (mh <= DISPLAY_MAX_SIDE && mid * (mh > 0 ? mh : 1) <= DISPLAY_MAX_PIXELS)
			lo = mid;
		else
			hi = mid - 1;
	}
	*w = (int)lo;
	*h = (int)((lo * h0 + w0 / 2) / w0);
	if (*h < 1)
		*h = 1;
	if (*h > DISPLAY_MAX_SIDE) /* a sliver taller than the limit at width 1 */
		*h = DISPLAY_MAX_SIDE;
}

void display_scale_fit(int src_w, int src_h, int max_w, int max_h, int *out_w, int *out_h,
		       double *scale)
{
	double sx = max_w > 0 ? (double)max_w / src_w : 0,
	       sy = max_h > 0 ? (double)max_h / src_h : 0;

	*out_w = src_w > 0 ? src_w : 1;
	*out_h = src_h > 0 ? src_h : 1;
	*scale = 1.0;
	if (src_w <= 0 || src_h <= 0 || (sx == 0 && sy == 0))
		return;
	if (sx > 0 && (sy == 0 || sx <= sy)) {
		/* The width binds: keep it exact, round the height. */
		*out_w = max_w;
		*out_h = (int)(src_h * sx + 0.5);
		if (max_h > 0 && *out_h > max_h)
			*out_h = max_h;
	} else {
		*out_h = max_h;
		*out_w = (int)(src_w * sy + 0.5);
		if (max_w > 0 && *out_w > max_w)
			*out_w = max_w;
	}
	if (*out_w < 1)
		*out_w = 1;
	if (*out_h < 1)
		*out_h = 1;
	if (!display_size_ok(*out_w, *out_h))
		shrink_to_limit(out_w, out_h);
	*scale = (double)*out_w / src_w;
}

static void scale_down(const uint8_t *src, int sw, int sh, int sstride, uint8_t *dst, int dw,
		       int dh, int dstride)
{
	for (int y = 0; y < dh; y++) {
		int y0 = (int)((int64_t)y * sh / dh), y1 = (int)((int64_t)(y + 1) * sh / dh);
		uint8_t *out = dst + (size_t)y * dstride;

		if (y1 <= y0)
			y1 = y0 + 1;
		for (int x = 0; x < dw; x++) {
			int x0 = (int)((int64_t)x * sw / dw),
			    x1 = (int)((int64_t)(x + 1) * sw / dw);
			uint32_t sum[3] = { 0, 0, 0 }, n;

			if (x1 <= x0)
				x1 = x0 + 1;
			n = (uint32_t)((x1 - x0) * (y1 - y0));
			for (int yy = y0; yy < y1; yy++) {
				const uint8_t *p = src + (size_t)yy * sstride + (size_t)x0 * 4;

				for (int xx = x0; xx < x1; xx++, p += 4) {
					sum[0] += p[0];
					sum[1] += p[1];
					sum[2] += p[2];
				}
			}
			out[x * 4 + 0] = (uint8_t)((sum[0] + n / 2) / n);
			out[x * 4 + 1] = (uint8_t)((sum[1] + n / 2) / n);
			out[x * 4 + 2] = (uint8_t)((sum[2] + n / 2) / n);
			out[x * 4 + 3] = 0xFF;
		}
	}
}

static void scale_up(const uint8_t *src, int sw, int sh, int sstride, uint8_t *dst, int dw, int dh,
		     int dstride)
{
	for (int y = 0; y < dh; y++) {
		/* Pixel centres map onto pixel centres; 8-bit fixed-point weights. */
		double fy = (y + 0.5) * sh / dh - 0.5;
		int y0 = fy < 0 ? 0 : (int)fy, y1 = y0 + 1 < sh ? y0 + 1 : sh - 1;
		int wy = fy < 0 ? 0 : (int)((fy - y0) * 256);
		uint8_t *out = dst + (size_t)y * dstride;

		for (int x = 0; x < dw; x++) {
			double fx = (x + 0.5) * sw / dw - 0.5;
			int x0 = fx < 0 ? 0 : (int)fx, x1 = x0 + 1 < sw ? x0 + 1 : sw - 1;
			int wx = fx < 0 ? 0 : (int)((fx - x0) * 256);
			const uint8_t *a = src + (size_t)y0 * sstride + (size_t)x0 * 4;
			const uint8_t *b = src + (size_t)y0 * sstride + (size_t)x1 * 4;
			const uint8_t *c = src + (size_t)y1 * sstride + (size_t)x0 * 4;
			const uint8_t *d = src + (size_t)y1 * sstride + (size_t)x1 * 4;

			for (int k = 0; k < 3; k++) {
				int top = a[k] * (256 - wx) + b[k] * wx;
				int bot = c[k] * (256 - wx) + d[k] * wx;

				out[x * 4 + k] = (uint8_t)((top * (256 - wy) + bot * wy + 32768) >>
							   16);
			}
			out[x * 4 + 3] = 0xFF;
		}
	}
}

int display_scale_rgbx(const uint8_t *src, int sw, int sh, int sstride, uint8_t *dst, int dw,
		       int dh, int dstride)
{
	if (sw <= 0 || sh <= 0 || dw <= 0 || dh <= 0 || sstride < sw * 4 || dstride < dw * 4)
		return -EINVAL;
	if (dw <= sw && dh <= sh)
		scale_down(src, sw, sh, sstride, dst, dw, dh, dstride);
	else
		scale_up(src, sw, sh, sstride, dst, dw, dh, dstride);
	return 0;
}

static struct display_image *image_new(void)
{
	struct display_image *img = calloc(1, sizeof(*img));

	if (img)
		atomic_init(&img->refs, 1);
	return img;
}

struct display_image *display_image_ref(struct display_image *img)
{
	if (img)
		atomic_fetch_add_explicit(&img->refs, 1, memory_order_relaxed);
	return img;
}

void display_image_unref(struct display_image *img)
{
	if (!img || atomic_fetch_sub_explicit(&img->refs, 1, memory_order_acq_rel) != 1)
		return;
	free(img->data);
	free(img);
}

static int encode_jpeg(const uint8_t *px, int w, int h, int stride, int quality,
		       struct display_image *img, char *err, size_t errlen)
{
	tjhandle tj = tjInitCompress();
	unsigned char *buf = NULL;
	unsigned long len = 0;
	int rc = 0;

	if (!tj) {
		snprintf(err, errlen, "jpeg: %s", tjGetErrorStr2(NULL));
		return -ENOMEM;
	}
	if (tjCompress2(tj, px, w, stride, h, TJPF_RGBX, &buf, &len, TJSAMP_420, quality,
			TJFLAG_FASTDCT) < 0) {
		snprintf(err, errlen, "jpeg: %s", tjGetErrorStr2(tj));
		rc = -EIO;
		goto out;
	}
	/* TurboJPEG's buffer must go back through tjFree: copy into a malloc'd one. */
	img->data = malloc(len);
	if (!img->data) {
		snprintf(err, errlen, "jpeg: out of memory");
		rc = -ENOMEM;
		goto out;
	}
	memcpy(img->data, buf, len);
	img->len = len;
out:
	tjFree(buf);
	tjDestroy(tj);
	return rc;
}

static int encode_png(const uint8_t *px, int w, int h, int stride, struct display_image *img,
		      char *err, size_t errlen)
{
	png_image pi;
	png_alloc_size_t size;
	uint8_t *rgb;
	int rc = 0;

	/* libpng's simplified API has no RGBX input: pack to RGB first. */
	rgb = malloc((size_t)w * 3 * (size_t)h);
	if (!rgb) {
		snprintf(err, errlen, "png: out of memory");
		return -ENOMEM;
	}
	for (int y = 0; y < h; y++) {
		const uint8_t *s = px + (size_t)y * stride;
		uint8_t *d = rgb + (size_t)y * w * 3;

		for (int x = 0; x < w; x++, s += 4, d += 3) {
			d[0] = s[0];
			d[1] = s[1];
			d[2] = s[2];
		}
	}
	memset(&pi, 0, sizeof(pi));
	pi.version = PNG_IMAGE_VERSION;
	pi.width = (png_uint_32)w;
	pi.height = (png_uint_32)h;
	pi.format = PNG_FORMAT_RGB;
	size = PNG_IMAGE_PNG_SIZE_MAX(pi);
	img->data = malloc(size);
	if (!img->data) {
		snprintf(err, errlen, "png: out of memory");
		rc = -ENOMEM;
		goto out;
	}
	if (!png_image_write_to_memory(&pi, img->data, &size, 0, rgb, w * 3, NULL)) {
		snprintf(err, errlen, "png: %s", pi.message);
		png_image_free(&pi);
		rc = -EIO;
		goto out;
	}
	img->len = size;
out:
	free(rgb);
	return rc;
}

int display_encode(const struct display_frame *f, const struct display_encode_opts *opts,
		   struct display_image **out, char *err, size_t errlen)
{
	struct display_rect r = opts->region;
	struct display_image *img;
	const uint8_t *src;
	uint8_t *scaled = NULL;
	int quality = opts->quality ? opts->quality : 80;
	int w, h, stride, rc;
	double scale;

	*out = NULL;
	if (r.w <= 0 || r.h <= 0)
		r = (struct display_rect){ 0, 0, f->width, f->height };
	if (r.x < 0 || r.y < 0 || r.x + r.w > f->width || r.y + r.h > f->height) {
		snprintf(err, errlen, "region %dx%d+%d+%d is outside the %dx%d screen", r.w, r.h,
			 r.x, r.y, f->width, f->height);
		return -EINVAL;
	}
	if (opts->format == DISPLAY_FORMAT_JPEG && (quality < 1 || quality > 100)) {
		snprintf(err, errlen, "jpeg quality %d is not in 1..100", quality);
		return -EINVAL;
	}
	if (opts->format != DISPLAY_FORMAT_JPEG && opts->format != DISPLAY_FORMAT_PNG) {
		snprintf(err, errlen, "unknown image format %d", (int)opts->format);
		return -EINVAL;
	}
	src = f->pixels + (size_t)r.y * f->stride + (size_t)r.x * 4;
	stride = f->stride;
	display_scale_fit(r.w, r.h, opts->max_width, opts->max_height, &w, &h, &scale);
	if (w != r.w || h != r.h) {
		scaled = malloc((size_t)w * 4 * (size_t)h);
		if (!scaled) {
			snprintf(err, errlen, "scale: out of memory");
			return -ENOMEM;
		}
		display_scale_rgbx(src, r.w, r.h, f->stride, scaled, w, h, w * 4);
		src = scaled;
		stride = w * 4;
	}
	img = image_new();
	if (!img) {
		free(scaled);
		snprintf(err, errlen, "encode: out of memory");
		return -ENOMEM;
	}
	img->width = w;
	img->height = h;
	img->scale = scale;
	img->format = opts->format;
	if (opts->format == DISPLAY_FORMAT_JPEG)
		rc = encode_jpeg(src, w, h, stride, quality, img, err, errlen);
	else
		rc = encode_png(src, w, h, stride, img, err, errlen);
	free(scaled);
	if (rc < 0) {
		display_image_unref(img);
		return rc;
	}
	*out = img;
	return 0;
}
