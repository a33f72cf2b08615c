/* gateway/session/session_spec.c: see session_spec.h. */
#include "gateway/session/session_spec.h"

#include "gateway/egress/egress_rules.h"
#include "vmm-qemu/snapshot.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(struct api_error *e, const char *code, const char *msg)
{
	return api_error_set(e, 400, code, msg);
}

/* Reads an optional integer field into *out, checking [min, max]. */
static int int_field(json_t *root, const char *name, int min, int max, int *out,
		     struct api_error *e)
{
	json_t *v = json_object_get(root, name);
	char msg[128];

	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max) {
		snprintf(msg, sizeof(msg), "%s must be an integer in %d..%d", name, min, max);
		return fail(e, json_is_integer(v) ? "out_of_range" : "invalid_argument", msg);
	}
	*out = (int)json_integer_value(v);
	return 0;
}

static int parse_object(json_t *root, struct session_request *req, struct api_error *e);

/* The body as JSON (duplicate keys refused), or NULL with *e filled. */
static json_t *load_body(const char *body, size_t len, struct api_error *e)
{
	json_error_t jerr;
	json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);

	if (!root) {
		char msg[200];

		snprintf(msg, sizeof(msg), "body is not valid JSON: %s", jerr.text);
		fail(e, "invalid_json", msg);
	}
	return root;
}

int session_request_parse(const char *body, size_t len, struct session_request *req,
			  struct api_error *e)
{
	json_t *root;
	int rc;

	memset(req, 0, sizeof(*req));
	if (!(root = load_body(body, len, e)))
		return -EINVAL;
	rc = parse_object(root, req, e);
	json_decref(root);
	return rc;
}

int template_request_parse(const char *body, size_t len, char *name, size_t namelen,
			   struct session_request *req, struct api_error *e)
{
	static const char *not_here[] = { "template", "timeout_s", "idle_timeout_s", "on_expiry",
					  "egress",   "record",	   "keyboard_layout" };
	json_t *root, *v;
	int rc = -EINVAL;

	memset(req, 0, sizeof(*req));
	if (!(root = load_body(body, len, e)))
		return -EINVAL;
	if (!json_is_object(root)) {
		fail(e, "invalid_json", "body must be a JSON object");
		goto out;
	}
	v = json_object_get(root, "name");
	/* The names a session can be created from (image below), no other. */
	if (!json_is_string(v) || json_string_length(v) >= namelen ||
	    strlen(json_string_value(v)) != json_string_length(v) ||
	    !vmm_template_name_ok(json_string_value(v))) {
		fail(e, "invalid_argument",
		     "name must be 1..63 of lowercase letters, digits, '_' or '-'");
		goto out;
	}
	strcpy(name, json_string_value(v));
	json_object_del(root, "name");
	for (size_t i = 0; i < sizeof(not_here) / sizeof(not_here[0]); i++)
		if (json_object_get(root, not_here[i])) {
			char msg[200];

			snprintf(msg, sizeof(msg), "'%s' is not a template field", not_here[i]);
			fail(e, "invalid_argument", msg);
			goto out;
		}
	rc = parse_object(root, req, e);
out:
	json_decref(root);
	return rc;
}

static int parse_object(json_t *root, struct session_request *req, struct api_error *e)
{
	static const char *known[] = { "image",	 "template",	   "width",	"height",
				       "vcpus",	 "memory_mib",	   "url",	"timeout_s",
				       "page",	 "idle_timeout_s", "on_expiry", "egress",
				       "record", "keyboard_layout" };
	json_t *v;
	const char *key;
	int rc = -EINVAL;

	if (!json_is_object(root)) {
		fail(e, "invalid_json", "body must be a JSON object");
		goto out;
	}
	json_object_foreach(root, key, v)
	{
		bool ok = false;

		for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			ok |= !strcmp(key, known[i]);
		if (!ok) {
			char msg[200];

			snprintf(msg, sizeof(msg), "unknown field '%.64s'", key);
			fail(e, "invalid_argument", msg);
			goto out;
		}
	}
	v = json_object_get(root, "image");
	if (!v)
		v = json_object_get(root, "template");
	if (json_object_get(root, "image") && json_object_get(root, "template")) {
		fail(e, "invalid_argument", "give image or template, not both");
		goto out;
	}
	if (!v) {
		snprintf(req->image, sizeof(req->image), "desktop");
	} else if (!json_is_string(v) || json_string_length(v) == 0 ||
		   json_string_length(v) >= sizeof(req->image) ||
		   strspn(json_string_value(v), "abcdefghijklmnopqrstuvwxyz0123456789-_") !=
			   json_string_length(v)) {
		fail(e, "invalid_argument", "image must be a name of [a-z0-9_-], 1..63 characters");
		goto out;
	} else {
		strcpy(req->image, json_string_value(v));
		req->from_template = json_object_get(root, "template") != NULL;
	}
	if (int_field(root, "width", VMM_MIN_WIDTH, VMM_MAX_WIDTH, &req->width, e) ||
	    int_field(root, "height", VMM_MIN_HEIGHT, VMM_MAX_HEIGHT, &req->height, e) ||
	    int_field(root, "vcpus", 1, VMM_MAX_VCPUS, &req->vcpus, e) ||
	    int_field(root, "memory_mib", VMM_MIN_MEMORY_MIB, VMM_MAX_MEMORY_MIB, &req->memory_mib,
		      e) ||
	    int_field(root, "timeout_s", 1, SESSION_MAX_TIMEOUT_S, &req->timeout_s, e) ||
	    int_field(root, "idle_timeout_s", 1, SESSION_MAX_TIMEOUT_S, &req->idle_timeout_s, e))
		goto out;
	v = json_object_get(root, "on_expiry");
	if (v) {
		const char *x = json_string_value(v);

		if (!x || (strcmp(x, "kill") && strcmp(x, "pause"))) {
			fail(e, "invalid_argument", "on_expiry must be \"kill\" or \"pause\"");
			goto out;
		}
		req->expire_pause = !strcmp(x, "pause");
	}
	v = json_object_get(root, "record");
	if (v) {
		if (!json_is_boolean(v)) {
			fail(e, "invalid_argument", "record must be true or false");
			goto out;
		}
		req->record = json_is_true(v);
	}
	v = json_object_get(root, "keyboard_layout");
	if (v) {
		char msg[256];

		if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v)) {
			fail(e, "invalid_argument",
			     "keyboard_layout must be an xkb layout name such as \"de\" or "
			     "\"fr(azerty)\"");
			goto out;
		}
		if (vmm_keymap_check(json_string_value(v), req->keyboard_layout, msg, sizeof(msg)) <
		    0) {
			fail(e, "invalid_argument", msg);
			goto out;
		}
	}
	v = json_object_get(root, "url");
	if (v) {
		const char *u = json_string_value(v);

		if (!json_is_string(v) || json_string_length(v) > VMM_MAX_URL ||
		    strlen(u) != json_string_length(v)) {
			fail(e, "invalid_argument", "url must be a string of at most 1024 bytes");
			goto out;
		}
		if (strncmp(u, "http://", 7) && strncmp(u, "https://", 8) &&
		    strncmp(u, "file://", 7) && strcmp(u, "about:blank") &&
		    strncmp(u, "data:", 5)) {
			fail(e, "invalid_argument",
			     "url must start with http://, https://, file://, data: or be about:blank");
			goto out;
		}
		strcpy(req->url, u);
	}
	v = json_object_get(root, "page");
	if (v) {
		if (!json_is_string(v) || json_string_length(v) == 0 ||
		    json_string_length(v) > SESSION_MAX_PAGE) {
			fail(e, "invalid_argument", "page must be HTML text of 1 byte to 256 KiB");
			goto out;
		}
		req->page = strdup(json_string_value(v));
		if (!req->page) {
			fail(e, "internal", "out of memory");
			e->status = 500;
			goto out;
		}
		if (!req->url[0])
			strcpy(req->url, SESSION_PAGE_URL);
	}
	{
		char msg[512];

		if (egress_rules_parse(json_object_get(root, "egress"), &req->egress, msg,
				       sizeof(msg)) < 0) {
			fail(e, "invalid_argument", msg);
			goto out;
		}
	}
	rc = 0;
out:
	if (rc < 0)
		session_request_free(req);
	return rc;
}

void session_request_free(struct session_request *req)
{
	free(req->page);
	req->page = NULL;
	egress_rules_destroy(req->egress);
	req->egress = NULL;
}
