/* gateway/e2b/e2b_req.h: what E2B's SDKs send, read into what Vitrine
 * does: the control plane's bodies (create, timeout, connect), the
 * sandbox a request is for (the E2b-Sandbox-Id header or a
 * "49983-{id}.{domain}" Host), the user of an envd call (Authorization:
 * Basic), the proto3-JSON messages of process.Process, the list's
 * metadata filter and a multipart upload's file. Pure: no I/O, no
 * sessions; unit-tested (tests/unit/test_e2b.c) and fuzzed
 * (tests/fuzz/fuzz_e2b.c). Every parser fills err with a sentence on
 * failure. */
#ifndef VITRINE_GATEWAY_E2B_REQ_H
#define VITRINE_GATEWAY_E2B_REQ_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define E2B_DEFAULT_TIMEOUT_S 300
#define E2B_MAX_TIMEOUT_S (24 * 3600)
#define E2B_ENVD_PORT 49983
/* the desktop SDK's stream (noVNC's port in E2B's desktop image) */
#define E2B_STREAM_PORT 6080
#define E2B_TAG_MAX 64
#define E2B_MAX_ENV 256 /* entries of envVars or envs */

/* POST /sandboxes and /v2/sandboxes. */
struct e2b_create {
	char template_id[64]; /* "" when not given */
	int timeout_s; /* E2B_DEFAULT_TIMEOUT_S when not given */
	json_t *metadata; /* owned: an object of strings (empty when none) */
	json_t *env_vars; /* owned: an object of strings (empty when none) */
	bool auto_pause;
};

/* Parses a create body (fields the SDKs send that Vitrine has no use for,
 * such as mcp, network or secure, are ignored). Returns 0, or -EINVAL
 * (c is then zeroed: nothing to free). */
int e2b_create_parse(const char *body, size_t len, struct e2b_create *c, char *err, size_t errlen);
void e2b_create_free(struct e2b_create *c);

/* {"timeout": seconds} (POST .../timeout: required; connect and resume:
 * optional, *timeout_s -1 when absent; an empty body counts as {}).
 * Returns 0 or -EINVAL. */
int e2b_timeout_parse(const char *body, size_t len, bool required, int *timeout_s, char *err,
		      size_t errlen);

/* The sandbox id of "PORT-ID.domain[:p]" into id (idlen > 1), the port into
 * *port. Returns 0, or -EINVAL when host is not of that shape (ids are
 * [a-z0-9], 1..idlen-1 of them). */
int e2b_host_sandbox(const char *host, int *port, char *id, size_t idlen);

/* Whether a browser's Origin is the live view's own page for sandbox id
 * with its stream on port: "http(s)://PORT-ID.D" where D is the rest of
 * host (the upgrade's Host header: the page and its socket on the same
 * live host) or the host of public_url (the gateway's --public-url, when a
 * proxy passes another Host on). Any other sandbox's, port's or site's
 * Origin is not (hosts compare case-insensitively). */
bool e2b_live_origin(const char *origin, const char *host, const char *public_url, const char *id,
		     int port);

/* The user an envd call names: header is the Authorization header's
 * value ("" or NULL: the default user), or the username query value when
 * the header gives none. "user" and "vitrine" are the desktop user, "root"
 * is root. Returns 0 with *root, or -EINVAL for anything else. */
int e2b_user_parse(const char *header, const char *username, bool *root);

/* A pseudo-terminal's size (cols 0: none). */
struct e2b_pty_size {
	unsigned cols, rows;
};
/* pty: {size: {cols, rows}} of Start and Update (each 1..65535) into
 * *out; NULL or null is none (0 0). 0 or -EINVAL. */
int e2b_pty_size_parse(const json_t *pty, struct e2b_pty_size *out, char *err, size_t errlen);
/* Process.Start's request: an exec body for exec_parse (gateway/guest/exec.h:
 * {cmd, args, env, cwd?, user}) with env the sandbox's env (may be NULL)
 * overlaid by the request's envs, the process's config as List reports it
 * (*config, owned), its tag ("" when none), whether stdin stays open and
 * its terminal's size (*pty; a process on a terminal keeps its stdin).
 * "/bin/bash" runs bash where the guest has it and sh otherwise.
 * Returns the body (owned) or NULL. */
json_t *e2b_start_parse(const char *msg, size_t len, const json_t *sandbox_env, bool root,
			json_t **config, char *tag, size_t taglen, bool *keep_stdin,
			struct e2b_pty_size *pty, char *err, size_t errlen);

enum e2b_proc_call {
	E2B_CALL_CONNECT, /* {process} */
	E2B_CALL_SEND_INPUT, /* {process, input: {stdin|pty: base64}} */
	E2B_CALL_SEND_SIGNAL, /* {process, signal} */
	E2B_CALL_CLOSE_STDIN, /* {process} */
	E2B_CALL_UPDATE, /* {process, pty?: {size: {cols, rows}}} */
};

struct e2b_proc_req {
	uint32_t pid; /* 0: by tag */
	char tag[E2B_TAG_MAX];
	unsigned char *input; /* owned: SEND_INPUT's (StreamInput's) bytes */
	size_t input_len;
	bool pty_input; /* they were given as pty (the last, for StreamInput) */
	struct e2b_pty_size pty; /* UPDATE's (0 0: none given) */
	int signal; /* SEND_SIGNAL: 9 or 15 */
};

/* Parses one of the calls above on a running process. Returns 0, or
 * -EINVAL (nothing to free then). */
int e2b_proc_req_parse(enum e2b_proc_call call, const char *msg, size_t len,
		       struct e2b_proc_req *out, char *err, size_t errlen);
void e2b_proc_req_free(struct e2b_proc_req *r);
/* Process.StreamInput's body (client streaming): Connect envelopes of
 * {start: {process}} first, then {data: {input: {stdin|pty}}} and
 * {keepalive: {}} in any number (a client's end-of-stream envelope is
 * passed over), into out: the selector and every data's bytes in order.
 * Returns 0, or -EINVAL (nothing to free then). */
int e2b_stream_input_parse(const void *body, size_t len, struct e2b_proc_req *out, char *err,
			   size_t errlen);

/* True when metadata (an object of strings) holds every key=value pair
 * of filter, as GET /v2/sandboxes's metadata parameter carries them
 * ("k=v&k2=v2", each key and value percent-encoded once more by the
 * SDK). NULL or "" matches all. */
bool e2b_metadata_match(const json_t *metadata, const char *filter);

/* envd's /files encodings (gzip the only one besides identity): whether
 * an Accept-Encoding value hv asks for gzip (by quality, "*" and an
 * identity refused with q=0 as RFC 7231 says), -EINVAL when it accepts
 * nothing envd has; whether a Content-Encoding value asks to gunzip,
 * -EINVAL for any encoding but gzip and identity. Case-insensitive. 0
 * with *gzip set. */
int e2b_accept_gzip(const char *hv, bool *gzip);
int e2b_content_gzip(const char *hv, bool *gzip);

#endif
