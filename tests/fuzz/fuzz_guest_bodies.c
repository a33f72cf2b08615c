/* tests/fuzz/fuzz_guest_bodies.c: libFuzzer target for the bodies of PUT
 * .../clipboard (api_clipboard_parse), POST .../open (api_open_parse),
 * POST .../launch (api_launch_parse), POST .../pause (api_pause_parse),
 * the empty bodies of resume and fork (api_empty_body_parse), POST
 * /v1/templates from a session (api_template_save_parse), PATCH
 * /v1/templates/{name} (api_template_patch_parse: the first byte % 9 == 4
 * with its high bit set) and POST /v1/keys (api_keys_parse), all in
 * gateway/api/bodies.c. The first byte picks the parser, the rest is the
 * body. Checked besides "no crash":
 *   - accepted strings are the ones the body gave, whole: the clipboard
 *     text (its length too), the url, the command and each argument, in
 *     order, and nothing else in the body;
 *   - an accepted url has an allowed scheme and at most VMM_MAX_URL bytes,
 *     and the JavaScript that opens it holds it as one string literal that
 *     reads back as the url;
 *   - pause is "disk" only when the body says so; an empty body is only
 *     nothing or {};
 *   - a template save is taken only with exactly a valid name and a
 *     session id of [a-z0-9], both whole;
 *   - a template's PATCH only as exactly {"pool": N}, N the integer given,
 *     0..POOL_SIZE_MAX;
 *   - a key's body is taken only empty or as an object with at most a
 *     "name", kept whole and valid (api_keys_name_ok);
 *   - a project's body (POST /v1/projects, PATCH /v1/projects/{name}:
 *     core/project_table.c) is taken only as an object of name (a create's
 *     alone, valid, whole), quota and allow_root, each quota the number
 *     given or none for null (a PATCH keeps what it does not name), and the
 *     project round-trips through the projects file's form; a refusal
 *     leaves the project as it was, and the owner of a template named by
 *     the body's bytes is a project of the table or none;
 *   - a refusal is a 400 with a code and a message, and leaves nothing
 *     owned behind (ASan's leak check). */
#include "gateway/api/bodies.h"
#include "gateway/core/key_table.h"
#include "gateway/core/project_table.h"
#include "vmm-qemu/snapshot.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_error(const struct api_error *e)
{
	if (e->status != 400 ||
	    (strcmp(e->code, "invalid_json") && strcmp(e->code, "invalid_argument")) ||
	    !e->message[0])
		__builtin_trap();
}

static bool same(json_t *v, const char *s, size_t len)
{
	return json_is_string(v) && json_string_length(v) == len &&
	       !memcmp(json_string_value(v), s, len);
}

static void clipboard(const char *b, size_t n, json_t *body)
{
	struct clipboard_body c;
	struct api_error e = { 0 };

	if (api_clipboard_parse(b, n, &c, &e) != 0) {
		if (c.json)
			__builtin_trap();
		check_error(&e);
		return;
	}
	if (!json_is_object(body) || json_object_size(body) != 1 ||
	    !same(json_object_get(body, "text"), c.text, c.len) || strlen(c.text) != c.len)
		__builtin_trap();
	json_decref(c.json);
}

static void open_url(const char *b, size_t n, json_t *body)
{
	static const char head[] = "(window.__vitrineOld = 1, location.assign(", tail[] = "), 1)";
	struct open_body o;
	struct api_error e = { 0 };
	size_t len, js_len;
	json_t *lit;

	if (api_open_parse(b, n, &o, &e) != 0) {
		check_error(&e);
		return;
	}
	len = strlen(o.url);
	if (!json_is_object(body) || json_object_size(body) != 1 ||
	    !same(json_object_get(body, "url"), o.url, len) || len > VMM_MAX_URL ||
	    (strncmp(o.url, "http://", 7) && strncmp(o.url, "https://", 8) &&
	     strncmp(o.url, "file://", 7) && strcmp(o.url, "about:blank")))
		__builtin_trap();
	js_len = strlen(o.js);
	if (js_len < sizeof(head) + sizeof(tail) || strncmp(o.js, head, sizeof(head) - 1) ||
	    strcmp(o.js + js_len - (sizeof(tail) - 1), tail))
		__builtin_trap();
	lit = json_loadb(o.js + sizeof(head) - 1, js_len - (sizeof(head) - 1) - (sizeof(tail) - 1),
			 JSON_DECODE_ANY, NULL);
	if (!same(lit, o.url, len))
		__builtin_trap();
	json_decref(lit);
}

static void launch(const char *b, size_t n, json_t *body)
{
	struct launch_body l;
	struct api_error e = { 0 };
	json_t *args;

	if (api_launch_parse(b, n, &l, &e) != 0) {
		if (l.json)
			__builtin_trap();
		check_error(&e);
		return;
	}
	args = json_object_get(body, "args");
	if (!json_is_object(body) || json_object_size(body) != (args ? 2u : 1u) || l.argc < 1 ||
	    l.argc > API_LAUNCH_MAX_ARGS + 1 || l.argv[l.argc] || !l.argv[0][0] ||
	    !same(json_object_get(body, "command"), l.argv[0], strlen(l.argv[0])) ||
	    l.argc != 1 + json_array_size(args))
		__builtin_trap();
	for (size_t i = 1; i < l.argc; i++)
		if (!same(json_array_get(args, i - 1), l.argv[i], strlen(l.argv[i])))
			__builtin_trap();
	json_decref(l.json);
}

static void pause_mode(const char *b, size_t n, json_t *body)
{
	enum sess_pause how = SESS_PAUSE_DISK;
	struct api_error e = { 0 };
	const char *mode = json_string_value(json_object_get(body, "mode"));

	if (api_pause_parse(n ? b : NULL, n, &how, &e) != 0) {
		check_error(&e);
		return;
	}
	if (n && (!json_is_object(body) || json_object_size(body) > (mode ? 1u : 0u)))
		__builtin_trap();
	if ((how == SESS_PAUSE_DISK) != (mode && !strcmp(mode, "disk")))
		__builtin_trap();
}

static void empty(const char *b, size_t n, json_t *body)
{
	struct api_error e = { 0 };

	if (api_empty_body_parse(n ? b : NULL, n, &e) != 0) {
		check_error(&e);
		return;
	}
	if (n && (!json_is_object(body) || json_object_size(body)))
		__builtin_trap();
}

static void template_save(const char *b, size_t n, json_t *body)
{
	char name[VMM_TEMPLATE_NAME_MAX + 1], id[SESS_ID_MAX];
	struct api_error e = { 0 };
	int rc = api_template_save_parse(b, n, name, sizeof(name), id, sizeof(id), &e);

	if (rc < 0) {
		check_error(&e);
		return;
	}
	if (!json_is_object(body) || (rc == 0) != !json_object_get(body, "from_session"))
		__builtin_trap();
	if (rc == 1 && (json_object_size(body) != 2 || !vmm_template_name_ok(name) ||
			!same(json_object_get(body, "name"), name, strlen(name)) ||
			!same(json_object_get(body, "from_session"), id, strlen(id)) || !id[0] ||
			strspn(id, "abcdefghijklmnopqrstuvwxyz0123456789") != strlen(id)))
		__builtin_trap();
}

static void template_patch(const char *b, size_t n, json_t *body)
{
	struct api_error e = { 0 };
	json_t *given;
	int pool = -1;

	if (api_template_patch_parse(b, n, 16, &pool, &e) < 0) {
		check_error(&e);
		if (pool != -1)
			__builtin_trap(); /* nothing taken from a refusal */
		return;
	}
	given = json_object_get(body, "pool");
	if (!json_is_object(body) || json_object_size(body) != 1 || !json_is_integer(given) ||
	    json_integer_value(given) != pool || pool < 0 || pool > 16)
		__builtin_trap();
}

static void key_body(const char *b, size_t n, json_t *body)
{
	char name[API_KEY_NAME_MAX + 1];
	struct api_error e = { 0 };
	json_t *given;

	if (api_keys_parse(b, n, name, sizeof(name), &e) < 0) {
		check_error(&e);
		return;
	}
	if (n == 0) {
		if (name[0])
			__builtin_trap();
		return;
	}
	given = json_object_get(body, "name");
	if (!json_is_object(body) || json_object_size(body) > (given ? 1u : 0u) ||
	    !api_keys_name_ok(name) || (given ? !same(given, name, strlen(name)) : name[0] != '\0'))
		__builtin_trap();
}

static void project_body(const char *b, size_t n, json_t *body, bool create)
{
	static struct projects t, back;
	struct project p = { .name = "acme", .quota = { 1, 2, 3, 4 }, .allow_root = true },
		       before = p;
	char err[256], tname[80];
	const char *key;
	json_t *v, *quota, *j;

	if (project_body_parse(b, n, create, &p, err, sizeof(err)) < 0) {
		if (memcmp(&p, &before, sizeof(p)) || !err[0])
			__builtin_trap();
		return;
	}
	if (!json_is_object(body))
		__builtin_trap();
	json_object_foreach(body, key, v) if (strcmp(key, "quota") && strcmp(key, "allow_root") &&
					      (!create || strcmp(key, "name"))) __builtin_trap();
	if (!project_name_ok(p.name) ||
	    (create ? !same(json_object_get(body, "name"), p.name, strlen(p.name))
		    : strcmp(p.name, "acme")))
		__builtin_trap();
	v = json_object_get(body, "allow_root");
	if (p.allow_root != (v ? json_is_true(v) : !create))
		__builtin_trap();
	quota = json_object_get(body, "quota");
	for (int k = 0; k < QUOTA_N; k++) {
		int64_t got = project_quota_get(&p.quota, k);

		v = json_object_get(quota, project_quota_names[k]);
		if (v ? got != (json_is_null(v) ? PROJECT_NO_LIMIT : json_integer_value(v))
		      : got != (create ? PROJECT_NO_LIMIT : project_quota_get(&before.quota, k)))
			__builtin_trap();
	}
	t.n = 0;
	if (projects_add(&t, &p) < 0 || !(j = projects_to_json(&t)) ||
	    projects_from_json(j, &back, err, sizeof(err)) < 0 || back.n != 1 ||
	    memcmp(&back.p[0], &p, sizeof(p)))
		__builtin_trap();
	json_decref(j);
	/* a template named by the body's bytes belongs to p or to no one */
	snprintf(tname, sizeof(tname), "%.*s", (int)(n < 79 ? n : 79), b);
	if (project_of_template(&t, tname) &&
	    (strncmp(tname, p.name, strlen(p.name)) || tname[strlen(p.name)] != '_'))
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *b = (const char *)data + 1;
	size_t n = size - 1;
	json_t *body;

	if (size < 1)
		return 0;
	/* what the parsers read, read independently */
	body = json_loadb(b, n, JSON_REJECT_DUPLICATES, NULL);
	switch (data[0] % 9) {
	case 0:
		clipboard(b, n, body);
		break;
	case 1:
		open_url(b, n, body);
		break;
	case 2:
		launch(b, n, body);
		break;
	case 3:
		pause_mode(b, n, body);
		break;
	case 5:
		template_save(b, n, body);
		break;
	case 6:
		key_body(b, n, body);
		break;
	case 7:
	case 8:
		project_body(b, n, body, data[0] % 9 == 7);
		break;
	default:
		if (data[0] % 9 == 4 && (data[0] & 0x80))
			template_patch(b, n, body);
		else
			empty(b, n, body);
		break;
	}
	json_decref(body);
	return 0;
}
