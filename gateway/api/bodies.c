/* gateway/api/bodies.c: see bodies.h. */
#include "gateway/api/bodies.h"

#include "gateway/action/actions.h"
#include "gateway/action/batch.h"
#include "gateway/action/run.h"
#include "gateway/core/key_table.h"
#include "vmm-qemu/guest_prep.h"
#include "vmm-qemu/snapshot.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

json_t *api_body_object(const char *body, size_t len, struct api_error *e)
{
	json_t *j = json_loadb(body ? body : "", len, JSON_REJECT_DUPLICATES, NULL);

	if (!json_is_object(j)) {
		json_decref(j);
		api_error_set(e, 400, "invalid_json", "the body must be a JSON object");
		return NULL;
	}
	return j;
}

/* A string with no NUL character in it. */
static bool plain_string(const json_t *v)
{
	return json_is_string(v) && strlen(json_string_value(v)) == json_string_length(v);
}

int api_clipboard_parse(const char *body, size_t len, struct clipboard_body *out,
			struct api_error *e)
{
	json_t *j = api_body_object(body, len, e), *text;

	out->json = NULL;
	if (!j)
		return -EINVAL;
	text = json_object_get(j, "text");
	if (!plain_string(text) || json_object_size(j) != 1) {
		json_decref(j);
		return api_error_set(
			e, 400, "invalid_argument",
			"the body is {\"text\": \"...\"}: a string without NUL characters");
	}
	out->json = j;
	out->text = json_string_value(text);
	out->len = json_string_length(text);
	return 0;
}

static bool url_allowed(const char *u)
{
	return !strncmp(u, "http://", 7) || !strncmp(u, "https://", 8) ||
	       !strncmp(u, "file://", 7) || !strcmp(u, "about:blank");
}

int api_open_parse(const char *body, size_t len, struct open_body *out, struct api_error *e)
{
	json_t *j = api_body_object(body, len, e);
	const char *url;
	int rc = 0;

	if (!j)
		return -EINVAL;
	url = json_string_value(json_object_get(j, "url"));
	if (!url || json_object_size(j) != 1 || strlen(url) > VMM_MAX_URL || !url_allowed(url) ||
	    guest_prep_nav_js(url, out->js, sizeof(out->js)) < 0)
		rc = api_error_set(e, 400, "invalid_argument",
				   "the body is {\"url\": ...}: http://, https://, file:// or "
				   "about:blank, up to 1024 bytes");
	else
		snprintf(out->url, sizeof(out->url), "%s", url);
	json_decref(j);
	return rc;
}

int api_launch_parse(const char *body, size_t len, struct launch_body *out, struct api_error *e)
{
	json_t *j = api_body_object(body, len, e), *cmd, *args, *a;
	size_t i;

	out->json = NULL;
	out->argc = 0;
	if (!j)
		return -EINVAL;
	cmd = json_object_get(j, "command");
	args = json_object_get(j, "args");
	if (!plain_string(cmd) || !json_string_length(cmd) ||
	    (args && (!json_is_array(args) || json_array_size(args) > API_LAUNCH_MAX_ARGS)) ||
	    json_object_size(j) != (args ? 2u : 1u)) {
		json_decref(j);
		return api_error_set(
			e, 400, "invalid_argument",
			"the body is {\"command\": \"NAME\", \"args\": [up to 32 strings]}");
	}
	out->argv[out->argc++] = json_string_value(cmd);
	json_array_foreach(args, i, a)
	{
		if (!plain_string(a)) {
			json_decref(j);
			out->argc = 0;
			return api_error_set(e, 400, "invalid_argument", "args must be strings");
		}
		out->argv[out->argc++] = json_string_value(a);
	}
	out->argv[out->argc] = NULL;
	out->json = j;
	return 0;
}

int api_pause_parse(const char *body, size_t len, enum sess_pause *how, struct api_error *e)
{
	const char *key, *mode = "memory";
	json_t *j, *v;
	int rc = 0;

	*how = SESS_PAUSE_MEMORY;
	if (!body || len == 0)
		return 0;
	if (!(j = api_body_object(body, len, e)))
		return -EINVAL;
	json_object_foreach(j, key, v)
	{
		if (strcmp(key, "mode")) {
			rc = api_error_set(e, 400, "invalid_argument",
					   "unknown field: only 'mode'");
			break;
		}
		mode = json_string_value(v);
	}
	if (rc == 0 && (!mode || (strcmp(mode, "memory") && strcmp(mode, "disk"))))
		rc = api_error_set(e, 400, "invalid_argument",
				   "mode must be \"memory\" or \"disk\"");
	if (rc == 0 && !strcmp(mode, "disk"))
		*how = SESS_PAUSE_DISK;
	json_decref(j);
	return rc;
}

int api_template_patch_parse(const char *body, size_t len, int max, int *pool, struct api_error *e)
{
	json_t *j = api_body_object(body, len, e), *n;
	char msg[96];
	int rc = 0;

	if (!j)
		return -EINVAL;
	n = json_object_get(j, "pool");
	snprintf(msg, sizeof(msg), "the body is {\"pool\": N}, N an integer 0..%d", max);
	if (!n || json_object_size(j) != 1 || !json_is_integer(n) || json_integer_value(n) < 0 ||
	    json_integer_value(n) > max)
		rc = api_error_set(e, 400, "invalid_argument", msg);
	else
		*pool = (int)json_integer_value(n);
	json_decref(j);
	return rc;
}

int api_template_save_parse(const char *body, size_t len, char *name, size_t name_len,
			    char *session, size_t session_len, struct api_error *e)
{
	json_t *j = api_body_object(body, len, e), *n, *from;
	const char *id;
	int rc = 1;

	if (!j)
		return -EINVAL;
	n = json_object_get(j, "name");
	from = json_object_get(j, "from_session");
	id = json_string_value(from);
	if (!from) {
		rc = 0;
	} else if (json_object_size(j) != (n ? 2u : 1u)) {
		rc = api_error_set(
			e, 400, "invalid_argument",
			"a template from a session takes only 'name' and 'from_session'");
	} else if (!plain_string(n) || !vmm_template_name_ok(json_string_value(n)) ||
		   strlen(json_string_value(n)) >= name_len) {
		rc = api_error_set(e, 400, "invalid_argument",
				   "name must be 1-63 of a-z, 0-9, '_', '-'");
	} else if (!plain_string(from) || !id[0] || strlen(id) >= session_len ||
		   strlen(id) >= SESS_ID_MAX ||
		   strspn(id, "abcdefghijklmnopqrstuvwxyz0123456789") != strlen(id)) {
		rc = api_error_set(
			e, 400, "invalid_argument",
			"from_session must be a session id (lowercase letters and digits)");
	} else {
		snprintf(name, name_len, "%s", json_string_value(n));
		snprintf(session, session_len, "%s", id);
	}
	json_decref(j);
	return rc;
}

int api_empty_body_parse(const char *body, size_t len, struct api_error *e)
{
	json_t *j;
	int rc = 0;

	if (!body || len == 0)
		return 0;
	j = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(j) || json_object_size(j) != 0)
		rc = api_error_set(e, 400, "invalid_argument", "this route takes no body (or {})");
	json_decref(j);
	return rc;
}

struct action_batch *api_action_parse(const char *text, size_t len, int width, int height,
				      const struct vmm_keymap *km, struct shot_opts *o, int *status,
				      json_t **error)
{
	struct actions_ctx ctx = { .screen_width = width, .screen_height = height, .keymap = km };
	struct action_batch *b;
	struct actions_error ae;
	struct api_error e;
	json_error_t jerr;
	json_t *body;
	long index;

	body = json_loadb(text ? text : "", len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
	if (!json_is_object(body)) {
		char msg[256];

		snprintf(msg, sizeof(msg), "the body must be one JSON action object%s%s",
			 body ? "" : ": ", body ? "" : jerr.text);
		json_decref(body);
		*status = 400;
		*error = api_error_json("invalid_json", msg);
		return NULL;
	}
	b = batch_parse(body, &ctx, &ae, &index);
	if (!b) {
		*status = ae.code == ACTIONS_E_NO_MEMORY ? 500 : 400;
		*error = json_pack("{s:{s:s, s:s, s:s}}", "error", "code",
				   actions_errc_name(ae.code), "message", ae.message, "field",
				   ae.field);
		if (*error && index >= 0) /* the batch's action that was refused */
			json_object_set_new(json_object_get(*error, "error"), "index",
					    json_integer(index));
		/* Echo the id even of an action that did not parse. */
		if (*error && json_object_get(body, "id"))
			json_object_set(*error, "id", json_object_get(body, "id"));
		json_decref(body);
		return NULL;
	}
	json_decref(body);
	shot_opts_default(o);
	if (b->screenshot_opts && shot_opts_parse(b->screenshot_opts, o, &e) < 0) {
		batch_destroy(b);
		*status = e.status;
		*error = api_error_json(e.code, e.message);
		return NULL;
	}
	return b;
}

int api_keys_parse(const char *body, size_t len, char *name, size_t name_size, struct api_error *e)
{
	const char *n = "";
	char msg[200];
	json_error_t je;
	json_t *j;
	int rc = 0;

	name[0] = '\0';
	if (len == 0)
		return 0;
	if (!(j = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je)) ||
	    json_unpack_ex(j, &je, JSON_STRICT, "{s?s}", "name", &n) < 0) {
		snprintf(msg, sizeof(msg), "the body is {\"name\"?: TEXT}: %s", je.text);
		api_error_set(e, 400, "invalid_argument", msg);
		rc = -EINVAL;
	} else if (!api_keys_name_ok(n) || strlen(n) >= name_size) {
		snprintf(msg, sizeof(msg),
			 "a key's name is at most %d letters, digits, spaces and -_.:@",
			 API_KEY_NAME_MAX);
		api_error_set(e, 400, "invalid_argument", msg);
		rc = -EINVAL;
	} else {
		snprintf(name, name_size, "%s", n);
	}
	json_decref(j);
	return rc;
}
