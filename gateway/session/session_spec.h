/* gateway/session/session_spec.h: the body of POST /v1/sessions, validated. Pure:
 * JSON text in, a filled request or an API error out. */
#ifndef VITRINE_GATEWAY_SESSION_SPEC_H
#define VITRINE_GATEWAY_SESSION_SPEC_H

#include "gateway/core/api_error.h"
#include "gateway/core/project_table.h"
#include "gateway/egress/egress_rules.h"
#include "vmm-qemu/keymap.h"
#include "vmm-qemu/spec.h"

#include <jansson.h>

#include <stddef.h>

#define SESSION_MAX_TIMEOUT_S (7 * 24 * 3600)

struct session_request {
	char image[64]; /* image (or template) name */
	bool from_template; /* image names a template (the "template" field) */
	int width, height, vcpus, memory_mib; /* 0: the image's default */
	char url[VMM_MAX_URL + 1]; /* "" for none */
	int timeout_s; /* maximum life; 0: none */
	int idle_timeout_s; /* life without actions or screenshots; 0: none */
	bool expire_pause; /* on_expiry "pause" (to disk) rather than "kill" */
	bool record; /* "record": true: recorded from the start (docs/api.md "Recordings") */
	char keyboard_layout[VMM_KEYMAP_MAX_NAME]; /* canonical; "" when not given */
	char *page; /* owned: HTML handed to the guest (opened when url is empty); NULL: none */
	struct egress_rules *egress; /* owned: where the guest may connect (NULL: nowhere) */
	/* the project it belongs to, "" for the operator's: the API sets it
	 * from the credential (a fork keeps its parent's), never a body */
	char project[PROJECT_NAME_MAX + 1];
};

#define SESSION_MAX_PAGE (256u << 10)
#define SESSION_PAGE_URL VMM_PAGE_URL

/* Frees what a parsed request owns. Accepts a zeroed request. */
void session_request_free(struct session_request *req);

/* Parses and validates body (len bytes of JSON; unknown fields are errors).
 * Returns 0, or -EINVAL with *e filled (status 400). */
int session_request_parse(const char *body, size_t len, struct session_request *req,
			  struct api_error *e);

/* The body of POST /v1/templates: {"name", and image, url, page, width,
 * height, vcpus, memory_mib as for a session}. name goes into name
 * (namelen > 64). Returns 0, or -EINVAL with *e filled (status 400). */
int template_request_parse(const char *body, size_t len, char *name, size_t namelen,
			   struct session_request *req, struct api_error *e);

#endif
