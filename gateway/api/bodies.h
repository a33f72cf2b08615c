/* gateway/api/bodies.h: the small request bodies that had their parsing
 * inside their handlers, parsed here without I/O or session state so they
 * are unit-tested and fuzzed (tests/fuzz/fuzz_guest_bodies.c):
 *
 *   PUT .../clipboard {text}              api_clipboard_parse
 *   POST .../open {url}                   api_open_parse
 *   POST .../launch {command, args?}      api_launch_parse
 *   POST .../pause {mode?}                api_pause_parse
 *   POST .../resume, .../fork: no body    api_empty_body_parse
 *   POST /v1/templates {name, from_session}
 *                                         api_template_save_parse
 *   PATCH /v1/templates/{name} {pool}     api_template_patch_parse
 *   POST /v1/keys {name?}                 api_keys_parse
 *   one action (POST .../actions, and each message of WS .../control)
 *                                         api_action_parse
 *
 * Every refusal is the 400 the client gets, with its code and message
 * (docs/api.md). Pure: any thread. */
#ifndef VITRINE_GATEWAY_API_BODIES_H
#define VITRINE_GATEWAY_API_BODIES_H

#include "gateway/core/api_error.h"
#include "gateway/session/session.h"
#include "vmm-qemu/spec.h"

#include <jansson.h>
#include <stddef.h>

struct action_batch;
struct shot_opts;

#define API_LAUNCH_MAX_ARGS 32

/* Any of these bodies as JSON (len bytes; body may be NULL when len is 0):
 * a new reference to the object, or NULL with *e filled (400
 * invalid_json) when it is not one (PUT .../egress reads its rules from
 * it). */
json_t *api_body_object(const char *body, size_t len, struct api_error *e);

/* {"text": "..."}: a UTF-8 string without NUL characters, nothing else. */
struct clipboard_body {
	json_t *json; /* owned (json_decref): text points into it */
	const char *text;
	size_t len;
};
/* Returns 0 with *out filled, or -EINVAL with *e (400; out->json NULL). */
int api_clipboard_parse(const char *body, size_t len, struct clipboard_body *out,
			struct api_error *e);

/* {"url": "..."}: http://, https://, file:// or about:blank, at most
 * VMM_MAX_URL bytes, no NUL; js is what navigates Chromium's tab there. */
struct open_body {
	char url[VMM_MAX_URL + 1];
	char js[VMM_MAX_URL * 2 + 128];
};
/* Returns 0 with *out filled, or -EINVAL with *e (400). */
int api_open_parse(const char *body, size_t len, struct open_body *out, struct api_error *e);

/* {"command": "NAME", "args"?: [up to API_LAUNCH_MAX_ARGS strings]}: no
 * string with a NUL, the command not empty. */
struct launch_body {
	json_t *json; /* owned (json_decref): argv's strings point into it */
	const char *argv[API_LAUNCH_MAX_ARGS + 2]; /* the command, its args, NULL */
	size_t argc;
};
/* Returns 0 with *out filled, or -EINVAL with *e (400; out->json NULL). */
int api_launch_parse(const char *body, size_t len, struct launch_body *out, struct api_error *e);

/* {"mode": "memory"|"disk"}, mode optional; an empty body is {}. Returns 0
 * with *how, or -EINVAL with *e (400). */
int api_pause_parse(const char *body, size_t len, enum sess_pause *how, struct api_error *e);

/* POST /v1/keys (len bytes, may be empty): {"name"?: TEXT} into name ("" when
 * none; a name api_keys_name_ok takes). Returns 0, or -EINVAL with *e (400). */
int api_keys_parse(const char *body, size_t len, char *name, size_t name_size, struct api_error *e);

/* POST /v1/templates with "from_session" (a template of a running
 * session): exactly {"name": N, "from_session": ID}, N a template name
 * (vmm_template_name_ok), ID 1..SESS_ID_MAX-1 of [a-z0-9]. Returns 1 with
 * name and session filled (name_len, session_len bytes each), 0 when the
 * body is an object without "from_session" (a template built from an
 * image: session_spec.h parses it), or -EINVAL with *e. */
int api_template_save_parse(const char *body, size_t len, char *name, size_t name_len,
			    char *session, size_t session_len, struct api_error *e);

/* PATCH /v1/templates/{name}: exactly {"pool": N}, N an integer 0..max
 * (the members of the template's warm pool, session/pool.h). Returns 0
 * with *pool, or -EINVAL with *e (400). */
int api_template_patch_parse(const char *body, size_t len, int max, int *pool, struct api_error *e);

/* An empty body or {} only. Returns 0, or -EINVAL with *e (400). */
int api_empty_body_parse(const char *body, size_t len, struct api_error *e);

/* One action object, or a batch {"actions": [...]} (text, len bytes; see
 * gateway/action/batch.h) for a screen of width x height: the batch (one
 * action is a batch of one; batch_destroy), with its screenshot options in
 * *o; or NULL with *status (400, 500 out of memory) and *error, the
 * answer's JSON ({"error": {code, message, field?, index?}}, index that of
 * a batch's action refused first, nothing having run; the body's "id"
 * echoed when it had one; NULL only when out of memory). Key names and
 * typed text mean what they do on keymap km (NULL: US; actions.h). */
struct action_batch *api_action_parse(const char *text, size_t len, int width, int height,
				      const struct vmm_keymap *km, struct shot_opts *o, int *status,
				      json_t **error);

#endif
