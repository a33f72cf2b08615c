/* gateway/template/recipe.c: see recipe.h. */
#include "gateway/template/recipe.h"

#include "gateway/guest/exec.h"
#include "gateway/session/session_spec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Writes the file from stdin, its directories first, then its mode: $0 is
 * the guest path, $1 the mode (octal digits). */
static const char *const copy_script =
	"mkdir -p \"$(dirname \"$0\")\" && cat > \"$0\" && chmod \"$1\" \"$0\"";

static const char *const session_keys[] = { "image", "template",   "width", "height",
					    "vcpus", "memory_mib", "url",   "egress" };

static int bad(struct api_error *e, const char *msg)
{
	return api_error_set(e, 400, "invalid_argument", msg);
}

static bool one_of(const char *key, const char *const *keys, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(key, keys[i]))
			return true;
	return false;
}

/* Refuses a key of o that keys does not list; where names the object. */
static int known_keys(json_t *o, const char *const *keys, size_t n, const char *where,
		      struct api_error *e)
{
	const char *key;
	json_t *v;

	json_object_foreach(o, key, v)
	{
		if (!one_of(key, keys, n)) {
			char msg[256];

			snprintf(msg, sizeof(msg), "unknown field '%.64s' in %s", key, where);
			return api_error_set(e, 400, "invalid_argument", msg);
		}
	}
	return 0;
}

/* A text without NUL or control characters, 1..max bytes. */
static bool plain_text(json_t *v, size_t max)
{
	const char *s = json_string_value(v);

	if (!s || json_string_length(v) == 0 || json_string_length(v) > max ||
	    strlen(s) != json_string_length(v))
		return false;
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

/* The copy step's exec body, into step->exec. */
static int parse_copy(json_t *step, json_t *copy, struct recipe_step *out, struct api_error *e)
{
	static const char *const keys[] = { "to", "content", "content_b64", "mode", "src" };
	const char *to, *mode = "0644";
	json_t *content = json_object_get(copy, "content");
	json_t *b64 = json_object_get(copy, "content_b64");
	json_t *user = json_object_get(step, "user"), *v;

	if (!json_is_object(copy))
		return bad(e, "copy must be an object {to, content | content_b64, mode?}");
	if (known_keys(copy, keys, sizeof(keys) / sizeof(keys[0]), "copy", e) < 0)
		return -EINVAL;
	if (json_object_get(copy, "src"))
		return bad(e, "copy.src is a host path the CLI reads (vitrine template build -f); "
			      "the API takes copy.content or copy.content_b64");
	to = json_string_value(json_object_get(copy, "to"));
	if (!to || to[0] != '/' || !plain_text(json_object_get(copy, "to"), 1023))
		return bad(e, "copy.to must be an absolute guest path of at most 1023 bytes");
	if (!!content == !!b64 || (content && !json_is_string(content)) ||
	    (b64 && !json_is_string(b64)))
		return bad(e, "copy needs one of content (text) or content_b64 (bytes as base64)");
	if ((v = json_object_get(copy, "mode"))) {
		mode = json_string_value(v);
		if (!mode || strlen(mode) < 3 || strlen(mode) > 4 ||
		    strspn(mode, "01234567") != strlen(mode))
			return bad(e, "copy.mode must be octal digits as a string, e.g. \"0755\"");
	}
	out->kind = RECIPE_STEP_COPY;
	if (!out->name[0])
		snprintf(out->name, sizeof(out->name), "copy %.58s", to);
	out->exec = json_pack("{s:s, s:[s, s, s, s], s:O, s:i}", "cmd", "/bin/sh", "args", "-c",
			      copy_script, to, mode, content ? "stdin" : "stdin_b64",
			      content ? content : b64, "timeout", EXEC_DEFAULT_TIMEOUT_S);
	if (out->exec && user)
		json_object_set(out->exec, "user", user);
	return out->exec ? 0 : -ENOMEM;
}

/* The run step's exec body: a shell line, or argv. */
static int parse_run(json_t *step, json_t *run, struct recipe_step *out, size_t index,
		     struct api_error *e)
{
	static const char *const pass[] = { "user", "timeout", "env", "cwd" };

	if (json_is_string(run)) {
		if (json_string_length(run) == 0)
			return bad(e, "run must be a non-empty shell line or an argv array");
		out->exec = json_pack("{s:O}", "cmd", run);
	} else if (json_is_array(run) && json_array_size(run) > 0 &&
		   json_is_string(json_array_get(run, 0))) {
		json_t *args = json_array();

		for (size_t i = 1; args && i < json_array_size(run); i++)
			json_array_append(args, json_array_get(run, i));
		out->exec = args ? json_pack("{s:O, s:o}", "cmd", json_array_get(run, 0), "args",
					     args)
				 : NULL;
	} else {
		return bad(e, "run must be a non-empty shell line or an argv array");
	}
	if (!out->exec)
		return -ENOMEM;
	for (size_t i = 0; i < sizeof(pass) / sizeof(pass[0]); i++) {
		json_t *v = json_object_get(step, pass[i]);

		if (v)
			json_object_set(out->exec, pass[i], v);
	}
	out->kind = RECIPE_STEP_RUN;
	if (!out->name[0])
		snprintf(out->name, sizeof(out->name), "run %zu", index + 1);
	return 0;
}

static int parse_step(json_t *step, size_t index, struct recipe_step *out, struct api_error *e)
{
	static const char *const keys[] = {
		"name", "copy", "run", "user", "timeout", "env", "cwd"
	};
	json_t *name = json_object_get(step, "name"), *copy, *run;
	struct exec_job *j;
	char *text;
	int rc;

	if (!json_is_object(step))
		return bad(e, "steps: each step is an object with copy or run");
	if (known_keys(step, keys, sizeof(keys) / sizeof(keys[0]), "a step", e) < 0)
		return -EINVAL;
	if (name && !plain_text(name, RECIPE_STEP_NAME_MAX))
		return bad(e,
			   "a step's name must be 1..63 bytes of text without control characters");
	if (name)
		snprintf(out->name, sizeof(out->name), "%s", json_string_value(name));
	copy = json_object_get(step, "copy");
	run = json_object_get(step, "run");
	if (!!copy == !!run)
		return bad(e, "steps: each step has exactly one of copy or run");
	if (copy && (json_object_get(step, "timeout") || json_object_get(step, "env") ||
		     json_object_get(step, "cwd")))
		return bad(e, "steps: a copy step takes name, copy and user only");
	rc = copy ? parse_copy(step, copy, out, e) : parse_run(step, run, out, index, e);
	if (rc == -ENOMEM)
		return api_error_set(e, 500, "internal", "out of memory"), -ENOMEM;
	if (rc < 0)
		return rc;
	/* The command exactly as it will run: what exec refuses, the recipe does. */
	text = json_dumps(out->exec, JSON_COMPACT);
	if (!text)
		return api_error_set(e, 500, "internal", "out of memory"), -ENOMEM;
	j = exec_parse(text, strlen(text), e);
	free(text);
	if (!j) {
		char msg[sizeof(e->message)], code[sizeof(e->code)];

		snprintf(msg, sizeof(msg), "step %zu (%s): %.900s", index + 1, out->name,
			 e->message);
		snprintf(code, sizeof(code), "%s", e->code);
		api_error_set(e, e->status, code, msg);
		return e->status == 500 ? -ENOMEM : -EINVAL;
	}
	exec_free(j);
	return 0;
}

/* The session's body: the base, size and egress of the recipe, checked as
 * POST /v1/sessions checks them. */
static int parse_session(json_t *recipe, struct recipe *out, struct api_error *e)
{
	struct session_request req;
	char *text;
	int rc;

	out->session = json_object();
	if (!out->session)
		return api_error_set(e, 500, "internal", "out of memory"), -ENOMEM;
	for (size_t i = 0; i < sizeof(session_keys) / sizeof(session_keys[0]); i++) {
		json_t *v = json_object_get(recipe, session_keys[i]);

		if (v)
			json_object_set(out->session, session_keys[i], v);
	}
	if (!json_object_get(recipe, "image") && !json_object_get(recipe, "template"))
		return bad(e, "a recipe names its base: image or template");
	text = json_dumps(out->session, JSON_COMPACT);
	if (!text)
		return api_error_set(e, 500, "internal", "out of memory"), -ENOMEM;
	rc = session_request_parse(text, strlen(text), &req, e);
	free(text);
	session_request_free(&req);
	return rc;
}

int recipe_parse(json_t *recipe, struct recipe *out, struct api_error *e)
{
	static const char *const keys[] = { "image",	  "template", "width",	"height", "vcpus",
					    "memory_mib", "url",      "egress", "steps" };
	json_t *steps, *step;
	size_t i;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(recipe))
		return bad(e, "recipe must be a JSON object");
	if ((rc = known_keys(recipe, keys, sizeof(keys) / sizeof(keys[0]), "the recipe", e)) < 0 ||
	    (rc = parse_session(recipe, out, e)) < 0)
		goto out;
	steps = json_object_get(recipe, "steps");
	if (steps && (!json_is_array(steps) || json_array_size(steps) > RECIPE_MAX_STEPS)) {
		rc = bad(e, "steps must be an array of at most 64 steps");
		goto out;
	}
	json_array_foreach(steps, i, step)
	{
		if ((rc = parse_step(step, i, &out->steps[i], e)) < 0)
			goto out;
		out->n_steps++;
	}
	out->canonical = json_dumps(recipe, JSON_COMPACT | JSON_SORT_KEYS);
	if (!out->canonical) {
		api_error_set(e, 500, "internal", "out of memory");
		rc = -ENOMEM;
	}
out:
	if (rc < 0)
		recipe_free(out);
	return rc < 0 ? rc : 0;
}

void recipe_free(struct recipe *r)
{
	json_decref(r->session);
	for (int i = 0; i < RECIPE_MAX_STEPS; i++)
		json_decref(r->steps[i].exec);
	free(r->canonical);
	memset(r, 0, sizeof(*r));
}

void recipe_hash(const struct recipe *r, const char *base_id, char out[SHA256_HEX_LEN + 1])
{
	size_t a = strlen(base_id), b = r->canonical ? strlen(r->canonical) : 0;
	char *buf = malloc(a + b + 32);

	if (!buf) { /* hash the parts' hashes instead: still a function of both */
		char h[2][SHA256_HEX_LEN + 1], both[2 * SHA256_HEX_LEN + 1];

		sha256_hex(base_id, a, h[0]);
		sha256_hex(r->canonical ? r->canonical : "", b, h[1]);
		snprintf(both, sizeof(both), "%s%s", h[0], h[1]);
		sha256_hex(both, strlen(both), out);
		return;
	}
	/* Versioned, so a change of what a step means can rebuild them all. */
	memcpy(buf, "vitrine-recipe-1\n", 17);
	memcpy(buf + 17, base_id, a);
	buf[17 + a] = '\n';
	if (b)
		memcpy(buf + 18 + a, r->canonical, b);
	sha256_hex(buf, 18 + a + b, out);
	free(buf);
}

const char *recipe_base(const struct recipe *r, bool *is_template)
{
	json_t *t = json_object_get(r->session, "template");

	*is_template = t != NULL;
	return json_string_value(t ? t : json_object_get(r->session, "image"));
}
