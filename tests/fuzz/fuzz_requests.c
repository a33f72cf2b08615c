/* tests/fuzz/fuzz_requests.c: libFuzzer target for the request bodies a
 * client sends to create and share sessions: POST /v1/sessions
 * (session_request_parse), POST /v1/templates (template_request_parse),
 * the screenshot options of GET .../screenshot and of an action's
 * "screenshot" (shot_opts_parse), POST .../share (api_share_parse) and the
 * ?path= of the files routes (api_files_path). The first byte picks the
 * parser, the rest is the body. Checked besides "no crash":
 *   - accepted values are the ones the body gave, not cut or wrapped: the
 *     image or template name, the url, every number in its range;
 *   - an accepted file path, with "." and empty parts dropped, is
 *     /home/vitrine or /tmp or below them, and has no ".." part;
 *   - a refusal is a 400 with a code and a message, and leaves nothing
 *     owned behind (ASan's leak check). */
#include "gateway/action/run.h"
#include "gateway/api/api_int.h"
#include "gateway/session/session_spec.h"
#include "gateway/stream/share.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_error(const struct api_error *e)
{
	if (e->status != 400 || !e->code[0] || !e->message[0])
		__builtin_trap();
}

/* A number field the body gave equals what was kept. */
static void same_int(json_t *body, const char *key, int kept)
{
	json_t *v = json_object_get(body, key);

	if (json_is_integer(v) && json_integer_value(v) != kept)
		__builtin_trap();
}

static void same_string(json_t *body, const char *key, const char *kept)
{
	json_t *v = json_object_get(body, key);

	if (json_is_string(v) && json_string_length(v) && strcmp(json_string_value(v), kept))
		__builtin_trap();
}

static void check_request(const struct session_request *req, json_t *body)
{
	if (!req->image[0] || strlen(req->image) >= sizeof(req->image) || req->width < 0 ||
	    req->height < 0 || req->vcpus < 0 || req->memory_mib < 0 || req->timeout_s < 0 ||
	    req->timeout_s > SESSION_MAX_TIMEOUT_S || req->idle_timeout_s < 0 ||
	    (req->page && strlen(req->page) > SESSION_MAX_PAGE))
		__builtin_trap();
	same_string(body, req->from_template ? "template" : "image", req->image);
	if (!req->page)
		same_string(body, "url", req->url);
	same_int(body, "width", req->width);
	same_int(body, "height", req->height);
	same_int(body, "vcpus", req->vcpus);
	same_int(body, "memory_mib", req->memory_mib);
	same_int(body, "timeout_s", req->timeout_s);
	same_int(body, "idle_timeout_s", req->idle_timeout_s);
}

static void session(const char *b, size_t n, json_t *body)
{
	struct session_request req = { 0 };
	struct api_error e = { 0 };

	if (session_request_parse(b, n, &req, &e) == 0)
		check_request(&req, body);
	else
		check_error(&e);
	session_request_free(&req);
}

static void template(const char *b, size_t n, json_t *body)
{
	struct session_request req = { 0 };
	struct api_error e = { 0 };
	char name[65];

	if (template_request_parse(b, n, name, sizeof(name), &req, &e) == 0) {
		if (!name[0])
			__builtin_trap();
		same_string(body, "name", name);
		check_request(&req, body);
	} else {
		check_error(&e);
	}
	session_request_free(&req);
}

static void shot(json_t *body)
{
	struct shot_opts o;
	struct api_error e = { 0 };

	shot_opts_default(&o);
	if (shot_opts_parse(body, &o, &e) != 0) {
		check_error(&e);
		return;
	}
	if (o.enc.quality < 0 || o.enc.quality > 100 || o.enc.max_width < 0 ||
	    o.enc.max_width > 16384 || o.enc.max_height < 0 || o.enc.max_height > 16384 ||
	    o.quiet_ms < 0 || o.quiet_ms > 10000 || o.timeout_ms < 0 || o.timeout_ms > 60000)
		__builtin_trap();
	same_int(body, "quality", o.enc.quality);
	same_int(body, "width", o.enc.max_width);
	same_int(body, "height", o.enc.max_height);
	same_int(body, "quiet_ms", o.quiet_ms);
	same_int(body, "timeout_ms", o.timeout_ms);
}

static void share(const char *b, size_t n, json_t *body)
{
	struct api_error e = { 0 };
	enum auth_scope want = AUTH_NONE;
	int ttl;

	if (api_share_parse(b, n, &want, &ttl, &e) != 0) {
		check_error(&e);
		return;
	}
	if ((want != AUTH_VIEW && want != AUTH_CONTROL) || ttl < 1 || ttl > SHARE_MAX_TTL_S)
		__builtin_trap();
	same_int(body, "ttl_s", ttl);
	same_string(body, "scope", want == AUTH_VIEW ? "view" : "control");
}

/* Whether path, read part by part ("." and empty parts dropped), is dir
 * or below it, with no ".." part. */
static bool under(const char *path, const char *dir)
{
	char norm[1300] = "";
	size_t n = 0, d = strlen(dir);

	for (const char *p = path; *p;) {
		size_t len = strcspn(p, "/");

		if (len == 2 && !strncmp(p, "..", 2))
			return false;
		if (len && !(len == 1 && p[0] == '.')) {
			if (n + len + 2 > sizeof(norm))
				return false;
			norm[n++] = '/';
			memcpy(norm + n, p, len);
			n += len;
			norm[n] = '\0';
		}
		p += len;
		while (*p == '/')
			p++;
	}
	return !strncmp(norm, dir, d) && (norm[d] == '\0' || norm[d] == '/');
}

static void files_path(const uint8_t *data, size_t size)
{
	char in[1100], out[1200];
	size_t n = size < sizeof(in) - 1 ? size : sizeof(in) - 1;

	memcpy(in, data, n);
	in[n] = '\0';
	if (api_files_path(in, out, sizeof(out)) != 0)
		return;
	if (out[0] != '/' || (!under(out, "/home/vitrine") && !under(out, "/tmp")))
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *b = (const char *)data + 1;
	size_t n = size - 1;
	json_t *body;

	if (size < 1)
		return 0;
	body = json_loadb(b, n, 0, NULL);
	switch (data[0] % 5) {
	case 0:
		session(b, n, body);
		break;
	case 1:
		template(b, n, body);
		break;
	case 2:
		if (body)
			shot(body);
		break;
	case 3:
		share(b, n, body);
		break;
	default:
		files_path(data + 1, n);
		break;
	}
	json_decref(body);
	return 0;
}
