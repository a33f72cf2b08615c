/* tests/fuzz/fuzz_recipe.c: libFuzzer target for the body of POST
 * /v1/templates with a recipe (api_recipe_body_parse, gateway/api/
 * api_recipe.c) and the recipe itself (recipe_parse, gateway/session/
 * recipe.c). The input is the body. Checked besides "no crash":
 *   - a recipe body is taken only with exactly a valid name and an object;
 *   - an accepted recipe has as many steps as it gave, each one a body
 *     exec_parse takes, running what the step says: a copy is /bin/sh -c
 *     with the step's path and mode (0644 when none) and the content (or
 *     content_b64 decoded) as stdin; a run is /bin/sh -c the line, or the
 *     argv given, whole and in order; as root exactly when "user" is "root";
 *   - its session part is one session_request_parse takes, with the base
 *     the recipe named;
 *   - its canonical text reads back as the recipe, and the hash is the
 *     same for the same recipe and base;
 *   - a refusal is a 400 with a code and a message, and holds nothing. */
#include "common/base64.h"
#include "gateway/api/api_recipe.h"
#include "gateway/guest/exec.h"
#include "gateway/session/session_spec.h"
#include "gateway/template/recipe.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool same(json_t *v, const char *s)
{
	return json_is_string(v) && s && !strcmp(json_string_value(v), s);
}

/* Step spec ran as j. */
static void check_step(json_t *spec, struct exec_job *j, const struct recipe_step *st)
{
	const char *const *argv = exec_argv(j);
	json_t *copy = json_object_get(spec, "copy"), *run = json_object_get(spec, "run");
	const char *user = json_string_value(json_object_get(spec, "user"));
	const void *in;
	size_t len, i;

	if (exec_as_root(j) != (user && !strcmp(user, "root")))
		__builtin_trap();
	in = exec_stdin(j, &len);
	if (copy) {
		json_t *c = json_object_get(copy, "content"), *mode = json_object_get(copy, "mode");

		if (st->kind != RECIPE_STEP_COPY || strcmp(argv[0], "/bin/sh") ||
		    strcmp(argv[1], "-c") || !same(json_object_get(copy, "to"), argv[3]) ||
		    (mode ? !same(mode, argv[4]) : strcmp(argv[4], "0644")) || argv[5])
			__builtin_trap();
		if (c) {
			if (len != json_string_length(c) ||
			    (len && memcmp(in, json_string_value(c), len)))
				__builtin_trap();
		} else {
			const char *b = json_string_value(json_object_get(copy, "content_b64"));
			unsigned char *want = malloc(strlen(b) + 1);
			size_t n = 0;

			if (!want || base64_decode(b, strlen(b), want, strlen(b) + 1, &n) < 0 ||
			    n != len || (n && memcmp(in, want, n)))
				__builtin_trap();
			free(want);
		}
		return;
	}
	if (st->kind != RECIPE_STEP_RUN || in)
		__builtin_trap();
	if (json_is_string(run)) {
		if (strcmp(argv[0], "/bin/sh") || strcmp(argv[1], "-c") || !same(run, argv[2]) ||
		    argv[3])
			__builtin_trap();
		return;
	}
	for (i = 0; i < json_array_size(run); i++)
		if (!same(json_array_get(run, i), argv[i]))
			__builtin_trap();
	if (argv[i])
		__builtin_trap();
}

static void check_recipe(json_t *rec, const struct recipe *r)
{
	json_t *steps = json_object_get(rec, "steps"), *canon;
	struct session_request req;
	struct api_error e;
	char *text;
	bool is_tpl;
	const char *base = recipe_base(r, &is_tpl);

	if ((size_t)r->n_steps != json_array_size(steps))
		__builtin_trap();
	for (int i = 0; i < r->n_steps; i++) {
		struct exec_job *j;

		text = json_dumps(r->steps[i].exec, JSON_COMPACT);
		j = text ? exec_parse(text, strlen(text), &e) : NULL;
		free(text);
		if (!j)
			__builtin_trap();
		check_step(json_array_get(steps, (size_t)i), j, &r->steps[i]);
		exec_free(j);
	}
	text = json_dumps(r->session, JSON_COMPACT);
	if (!text || session_request_parse(text, strlen(text), &req, &e) < 0 ||
	    strcmp(req.image, base) || req.from_template != is_tpl ||
	    !same(json_object_get(rec, is_tpl ? "template" : "image"), base))
		__builtin_trap();
	session_request_free(&req);
	free(text);
	canon = json_loads(r->canonical, 0, NULL);
	if (!json_equal(canon, rec))
		__builtin_trap();
	json_decref(canon);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct api_error e = { 0 };
	struct recipe r, again;
	char name[64], h1[SHA256_HEX_LEN + 1], h2[SHA256_HEX_LEN + 1];
	json_t *rec;
	int rc = api_recipe_body_parse((const char *)data, size, name, sizeof(name), &rec, &e);

	if (rc < 0) {
		if (rec || e.status != 400 || !e.code[0] || !e.message[0])
			__builtin_trap();
		return 0;
	}
	if (rc == 0)
		return 0;
	if (!json_is_object(rec) || !name[0] ||
	    strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_-") != strlen(name))
		__builtin_trap();
	memset(&e, 0, sizeof(e));
	if (recipe_parse(rec, &r, &e) < 0) {
		if ((e.status != 400 && e.status != 500) || !e.code[0] || !e.message[0] ||
		    r.session || r.n_steps || r.canonical)
			__builtin_trap();
		json_decref(rec);
		return 0;
	}
	check_recipe(rec, &r);
	recipe_hash(&r, "image tiny 1", h1);
	if (recipe_parse(rec, &again, &e) < 0)
		__builtin_trap();
	recipe_hash(&again, "image tiny 1", h2);
	if (strcmp(h1, h2))
		__builtin_trap();
	recipe_free(&again);
	recipe_free(&r);
	json_decref(rec);
	return 0;
}
