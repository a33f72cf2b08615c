/* gateway/cli/cmd_screen.c: the client commands that look at and drive a
 * session's screen: `vitrine screenshot` (GET .../screenshot into a file) and
 * `vitrine act` (POST one action to .../actions, optionally saving the
 * settled screenshot the reply carries). Gateway access and error reporting
 * are cmd_client.c's. */
#include "common/fsutil.h"
#include "common/http_client.h"
#include "gateway/cli/cli.h"
#include "gateway/cli/cmd_opts.h"

#include <libwebsockets.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SCREENSHOT_TIMEOUT_S 60
#define ACT_TIMEOUT_S 300 /* a wait action may take 100 s, settling more */

/* "png" for a .png path, else "jpeg". */
static const char *format_of_path(const char *path)
{
	const char *dot = strrchr(path, '.');

	return dot && !strcasecmp(dot, ".png") ? "png" : "jpeg";
}

/* Reads the pixel size of a PNG or baseline/progressive JPEG image. Returns
 * "png" or "jpeg" with *w, *h set, or NULL when data is neither. */
static const char *image_size(const unsigned char *d, size_t len, int *w, int *h)
{
	if (len >= 24 && !memcmp(d, "\x89PNG\r\n\x1a\n", 8) && !memcmp(d + 12, "IHDR", 4)) {
		*w = (int)((unsigned)d[16] << 24 | (unsigned)d[17] << 16 | d[18] << 8 | d[19]);
		*h = (int)((unsigned)d[20] << 24 | (unsigned)d[21] << 16 | d[22] << 8 | d[23]);
		return "png";
	}
	if (len < 4 || d[0] != 0xff || d[1] != 0xd8)
		return NULL;
	/* Walk the marker segments to the first SOFn (not DHT C4, JPG C8, DAC CC). */
	for (size_t i = 2; i + 9 <= len && d[i] == 0xff;) {
		unsigned m = d[i + 1], seg = (unsigned)d[i + 2] << 8 | d[i + 3];

		if (m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc) {
			*h = d[i + 5] << 8 | d[i + 6];
			*w = d[i + 7] << 8 | d[i + 8];
			return "jpeg";
		}
		i += 2 + seg;
	}
	return NULL;
}

int cmd_screenshot(int argc, char **argv)
{
	struct screenshot_config cfg;
	const char *out, *format, *kind;
	int c, rc, w = 0, h = 0;
	char path[256], err[512];
	struct http_resp r;

	rc = cli_screenshot_parse(&cfg, argc, argv, err, sizeof(err));
	if ((rc = cli_cmd_answer(&cli_screenshot_cmd, rc, err)) >= 0)
		return rc;
	if ((rc = cli_client_init(&cfg.cl)))
		return rc;
	out = cfg.out;
	format = cfg.format;
	if (!format)
		format = format_of_path(out);
	c = snprintf(path, sizeof(path), "/v1/sessions/%s/screenshot?format=%s", cfg.id, format);
	if (cfg.quality)
		c += snprintf(path + c, sizeof(path) - (size_t)c, "&quality=%d", cfg.quality);
	if (cfg.width)
		c += snprintf(path + c, sizeof(path) - (size_t)c, "&width=%d", cfg.width);
	if (cfg.height)
		snprintf(path + c, sizeof(path) - (size_t)c, "&height=%d", cfg.height);
	if ((rc = cli_client_request(&cfg.cl, "GET", path, NULL, 0, SCREENSHOT_TIMEOUT_S, &r)))
		return rc;
	kind = image_size((const unsigned char *)r.body, r.body_len, &w, &h);
	if (!kind || strcmp(kind, format)) {
		fprintf(stderr,
			"vitrine screenshot: the gateway answered %zu bytes that are not a %s image\n",
			r.body_len, format);
		rc = 1;
	} else if ((rc = fs_write_file(out, r.body, r.body_len)) < 0) {
		fprintf(stderr, "vitrine screenshot: cannot write %s: %s\n", out, strerror(-rc));
		rc = 1;
	} else {
		printf("%s: %dx%d %s, %zu bytes\n", out, w, h, kind, r.body_len);
	}
	http_resp_free(&r);
	return rc;
}

/* Parses the action argument (or stdin for "-") into an object. Returns it,
 * or NULL after printing why. */
static json_t *load_action(const char *arg)
{
	json_error_t jerr;
	json_t *a = strcmp(arg, "-") ? json_loads(arg, 0, &jerr) : json_loadf(stdin, 0, &jerr);

	if (!a) {
		fprintf(stderr, "vitrine act: the action is not valid JSON: %s (column %d)\n",
			jerr.text, jerr.column);
		return NULL;
	}
	if (!json_is_object(a)) {
		fprintf(stderr, "vitrine act: the action must be a JSON object, like "
				"'{\"action\":\"left_click\",\"coordinate\":[10,20]}'\n");
		json_decref(a);
		return NULL;
	}
	return a;
}

/* Asks for a screenshot in the format file's name implies, keeping any
 * screenshot options the action carries. */
static void want_screenshot(json_t *action, const char *file)
{
	json_t *opts = json_object_get(action, "screenshot");

	if (!json_is_object(opts)) {
		opts = json_object();
		json_object_set_new(action, "screenshot", opts);
	}
	if (!json_object_get(opts, "format"))
		json_object_set_new(opts, "format", json_string(format_of_path(file)));
}

/* Decodes the reply's screenshot into file. Returns 0 or -1 after printing why. */
static int save_screenshot(const json_t *shot, const char *file)
{
	const char *b64 = json_string_value(json_object_get(shot, "data"));
	size_t cap;
	char *bin;
	int n, rc;

	if (!b64) {
		fprintf(stderr, "vitrine act: the reply carries no screenshot\n");
		return -1;
	}
	cap = strlen(b64) / 4 * 3 + 4;
	if (cap > 256u << 20 || !(bin = malloc(cap))) {
		fprintf(stderr, "vitrine act: the screenshot is too large\n");
		return -1;
	}
	n = lws_b64_decode_string(b64, bin, (int)cap);
	if (n < 0) {
		fprintf(stderr, "vitrine act: the screenshot is not valid base64\n");
		free(bin);
		return -1;
	}
	rc = fs_write_file(file, bin, (size_t)n);
	free(bin);
	if (rc < 0) {
		fprintf(stderr, "vitrine act: cannot write %s: %s\n", file, strerror(-rc));
		return -1;
	}
	return 0;
}

int cmd_act(int argc, char **argv)
{
	struct act_config cfg;
	json_t *action, *shot;
	struct http_resp r;
	char path[96], err[512], *body;
	const char *shot_file;
	int rc = cli_act_parse(&cfg, argc, argv, err, sizeof(err));

	if ((rc = cli_cmd_answer(&cli_act_cmd, rc, err)) >= 0)
		return rc;
	if (!(action = load_action(cfg.action)))
		return 2;
	if ((rc = cli_client_init(&cfg.cl))) {
		json_decref(action);
		return rc;
	}
	shot_file = cfg.shot_file;
	if (shot_file)
		want_screenshot(action, shot_file);
	body = json_dumps(action, JSON_COMPACT);
	json_decref(action);
	if (!body)
		return 1;
	snprintf(path, sizeof(path), "/v1/sessions/%s/actions", cfg.id);
	rc = cli_client_request(&cfg.cl, "POST", path, body, strlen(body), ACT_TIMEOUT_S, &r);
	free(body);
	if (rc)
		return rc;
	shot = json_object_get(r.json, "screenshot");
	if (shot_file && save_screenshot(shot, shot_file) < 0)
		rc = 1;
	/* The image is in the file (or unwanted): keep the printout readable. */
	if (json_is_object(shot))
		json_object_del(shot, "data");
	if (shot_file && rc == 0)
		json_object_set_new(shot, "file", json_string(shot_file));
	cli_print_json(r.json);
	http_resp_free(&r);
	return rc;
}
