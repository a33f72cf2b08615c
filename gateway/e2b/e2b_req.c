/* gateway/e2b/e2b_req.c: see e2b_req.h. */
#include "gateway/e2b/e2b_req.h"

#include "common/base64.h"
#include "gateway/e2b/connect.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The bash of E2B's templates where the guest has one, else sh: Vitrine's
 * tiny guest is busybox. "$@" are bash's arguments ("-l", "-c", line). */
#define BASH_OR_SH "if command -v bash >/dev/null 2>&1; then exec bash \"$@\"; fi; exec sh \"$@\""

static int fail(char *err, size_t errlen, const char *msg)
{
	snprintf(err, errlen, "%s", msg);
	return -EINVAL;
}

static json_t *load(const char *body, size_t len, char *err, size_t errlen)
{
	json_t *root;

	if (len == 0)
		return json_object();
	root = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(root)) {
		json_decref(root);
		fail(err, errlen, "the body must be a JSON object");
		return NULL;
	}
	return root;
}

static bool plain_string(const json_t *v)
{
	return json_is_string(v) && strlen(json_string_value(v)) == json_string_length(v);
}

/* An object of strings (NULL or null: empty) copied into *out; env names
 * have no '=' and are not empty. */
static int string_map(const json_t *v, bool env, json_t **out)
{
	const char *k;
	json_t *val;

	*out = json_object();
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_object(v) || json_object_size(v) > E2B_MAX_ENV)
		goto bad;
	json_object_foreach((json_t *)v, k, val)
	{
		if (!plain_string(val) || (env && (!*k || strchr(k, '='))))
			goto bad;
		json_object_set(*out, k, val);
	}
	return 0;
bad:
	json_decref(*out);
	*out = NULL;
	return -EINVAL;
}

static int seconds(const json_t *v, int *out)
{
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    json_integer_value(v) > E2B_MAX_TIMEOUT_S)
		return -EINVAL;
	*out = (int)json_integer_value(v);
	return 0;
}

int e2b_create_parse(const char *body, size_t len, struct e2b_create *c, char *err, size_t errlen)
{
	json_t *root = load(body, len, err, errlen), *v;
	int rc = -EINVAL;

	memset(c, 0, sizeof(*c));
	c->timeout_s = E2B_DEFAULT_TIMEOUT_S;
	if (!root)
		return -EINVAL;
	if ((v = json_object_get(root, "templateID")) && !json_is_null(v)) {
		if (!plain_string(v) || json_string_length(v) >= sizeof(c->template_id)) {
			fail(err, errlen, "templateID must be a string of at most 63 bytes");
			goto out;
		}
		snprintf(c->template_id, sizeof(c->template_id), "%s", json_string_value(v));
	}
	if ((v = json_object_get(root, "timeout")) && !json_is_null(v) &&
	    (seconds(v, &c->timeout_s) < 0 || c->timeout_s == 0)) {
		fail(err, errlen, "timeout must be whole seconds in 1..86400");
		goto out;
	}
	if ((v = json_object_get(root, "autoPause")) && !json_is_null(v)) {
		if (!json_is_boolean(v)) {
			fail(err, errlen, "autoPause must be a boolean");
			goto out;
		}
		c->auto_pause = json_is_true(v);
	}
	if (string_map(json_object_get(root, "metadata"), false, &c->metadata) < 0) {
		fail(err, errlen, "metadata must be an object of strings");
		goto out;
	}
	if (string_map(json_object_get(root, "envVars"), true, &c->env_vars) < 0) {
		fail(err, errlen, "envVars must be an object of strings with names without '='");
		goto out;
	}
	rc = 0;
out:
	json_decref(root);
	if (rc < 0)
		e2b_create_free(c);
	return rc;
}

void e2b_create_free(struct e2b_create *c)
{
	json_decref(c->metadata);
	json_decref(c->env_vars);
	memset(c, 0, sizeof(*c));
}

int e2b_timeout_parse(const char *body, size_t len, bool required, int *timeout_s, char *err,
		      size_t errlen)
{
	json_t *root = load(body, len, err, errlen), *v;
	int rc = 0;

	*timeout_s = -1;
	if (!root)
		return -EINVAL;
	v = json_object_get(root, "timeout");
	if ((!v || json_is_null(v)) ? required : seconds(v, timeout_s) < 0)
		rc = fail(err, errlen, "timeout must be whole seconds in 0..86400");
	json_decref(root);
	return rc;
}

int e2b_host_sandbox(const char *host, int *port, char *id, size_t idlen)
{
	const char *p = host, *dash, *dot;
	long n = 0;

	if (!host || idlen < 2)
		return -EINVAL;
	for (; isdigit((unsigned char)*p) && n < 100000; p++)
		n = n * 10 + (*p - '0');
	dash = p;
	if (dash == host || *dash != '-' || n < 1 || n > 65535)
		return -EINVAL;
	dot = dash + 1;
	while (*dot && ((*dot >= 'a' && *dot <= 'z') || isdigit((unsigned char)*dot)))
		dot++;
	if (*dot != '.' || dot == dash + 1 || (size_t)(dot - dash - 1) >= idlen || !dot[1])
		return -EINVAL;
	memcpy(id, dash + 1, (size_t)(dot - dash - 1));
	id[dot - dash - 1] = '\0';
	*port = (int)n;
	return 0;
}

/* The host[:port] of an "http(s)://host[:port][/...]" URL, or NULL. */
static const char *url_host(const char *url, size_t *len)
{
	const char *p;

	if (!url)
		return NULL;
	if (!strncasecmp(url, "https://", 8))
		p = url + 8;
	else if (!strncasecmp(url, "http://", 7))
		p = url + 7;
	else
		return NULL;
	*len = strcspn(p, "/?#");
	return *len ? p : NULL;
}

bool e2b_live_origin(const char *origin, const char *host, const char *public_url, const char *id,
		     int port)
{
	char oid[80];
	const char *o = NULL, *dom, *pub;
	size_t olen = 0, plen = 0;
	int oport;

	if (!origin || !host || !id || !(o = url_host(origin, &olen)) || o[olen] ||
	    e2b_host_sandbox(o, &oport, oid, sizeof(oid)) < 0 || oport != port || strcmp(oid, id))
		return false;
	if (!strcasecmp(o, host))
		return true;
	dom = strchr(o, '.') + 1; /* e2b_host_sandbox saw the dot */
	pub = url_host(public_url, &plen);
	return pub && strlen(dom) == plen && !strncasecmp(dom, pub, plen);
}

int e2b_user_parse(const char *header, const char *username, bool *root)
{
	char dec[96];
	size_t n = 0;
	const char *name = username;

	*root = false;
	if (header && *header) {
		if (strncmp(header, "Basic ", 6) ||
		    base64_decode(header + 6, strlen(header + 6), dec, sizeof(dec) - 1, &n) < 0 ||
		    n >= sizeof(dec)) /* a short buffer gets a prefix, n says the whole */
			return -EINVAL;
		dec[n] = '\0';
		if (strlen(dec) != n)
			return -EINVAL;
		dec[strcspn(dec, ":")] = '\0';
		name = dec;
	}
	if (!name || !*name || !strcmp(name, "user") || !strcmp(name, "vitrine"))
		return 0;
	if (!strcmp(name, "root")) {
		*root = true;
		return 0;
	}
	return -EINVAL;
}

json_t *e2b_start_parse(const char *msg, size_t len, const json_t *sandbox_env, bool root,
			json_t **config, char *tag, size_t taglen, bool *keep_stdin,
			struct e2b_pty_size *pty, char *err, size_t errlen)
{
	json_t *req = load(msg, len, err, errlen), *proc, *v, *env = NULL, *args, *exec = NULL;
	const char *cmd;

	*config = NULL;
	tag[0] = '\0';
	*keep_stdin = false;
	pty->cols = pty->rows = 0;
	if (!req)
		return NULL;
	proc = json_object_get(req, "process");
	cmd = json_string_value(json_object_get(proc, "cmd"));
	if (!json_is_object(proc) || !cmd || !*cmd || !plain_string(json_object_get(proc, "cmd"))) {
		fail(err, errlen, "process.cmd must be a non-empty string");
		goto out;
	}
	args = json_object_get(proc, "args");
	if (args && !json_is_null(args)) {
		size_t i;

		if (!json_is_array(args) || json_array_size(args) > 255) {
			fail(err, errlen, "process.args must be an array of strings");
			goto out;
		}
		json_array_foreach(args, i, v) if (!plain_string(v))
		{
			fail(err, errlen, "process.args must be an array of strings");
			goto out;
		}
	}
	if (e2b_pty_size_parse(json_object_get(req, "pty"), pty, err, errlen) < 0)
		goto out;
	if ((v = json_object_get(req, "tag")) && !json_is_null(v)) {
		if (!plain_string(v) || json_string_length(v) >= taglen) {
			fail(err, errlen, "tag must be a string of at most 63 bytes");
			goto out;
		}
		snprintf(tag, taglen, "%s", json_string_value(v));
	}
	if ((v = json_object_get(req, "stdin")) && !json_is_null(v)) {
		if (!json_is_boolean(v)) {
			fail(err, errlen, "stdin must be a boolean");
			goto out;
		}
		*keep_stdin = json_is_true(v);
	}
	if (pty->cols)
		*keep_stdin = true; /* a terminal always takes input (envd's too) */
	if (string_map(sandbox_env, true, &env) < 0) {
		fail(err, errlen, "the sandbox's envVars are malformed");
		goto out;
	}
	{
		json_t *extra;

		if (string_map(json_object_get(proc, "envs"), true, &extra) < 0) {
			fail(err, errlen, "process.envs must be an object of strings");
			goto out;
		}
		json_object_update(env, extra);
		json_decref(extra);
	}
	exec = json_pack("{s:O, s:s}", "env", env, "user", root ? "root" : "vitrine");
	if (!exec)
		goto oom;
	if (!strcmp(cmd, "/bin/bash")) {
		json_t *a = json_pack("[s, s]", BASH_OR_SH, "bash");

		if (!a)
			goto oom;
		if (args && !json_is_null(args))
			json_array_extend(a, args);
		json_object_set_new(exec, "cmd", json_string("/bin/sh"));
		json_array_insert_new(a, 0, json_string("-c"));
		json_object_set_new(exec, "args", a);
	} else {
		json_object_set_new(exec, "cmd", json_string(cmd));
		json_object_set_new(exec, "args",
				    args && !json_is_null(args) ? json_incref(args) : json_array());
	}
	if ((v = json_object_get(proc, "cwd")) && !json_is_null(v)) {
		if (!plain_string(v) || json_string_value(v)[0] != '/') {
			fail(err, errlen, "process.cwd must be an absolute path");
			goto bad;
		}
		json_object_set(exec, "cwd", v);
	}
	*config = json_pack("{s:s, s:o, s:O}", "cmd", cmd, "args",
			    args && !json_is_null(args) ? json_incref(args) : json_array(), "envs",
			    env);
	if (!*config)
		goto oom;
	if (json_object_get(proc, "cwd") && json_is_string(json_object_get(proc, "cwd")))
		json_object_set(*config, "cwd", json_object_get(proc, "cwd"));
	goto out;
oom:
	fail(err, errlen, "out of memory");
bad:
	json_decref(exec);
	exec = NULL;
out:
	if (!exec) {
		tag[0] = '\0';
		*keep_stdin = false;
		pty->cols = pty->rows = 0;
	}
	json_decref(env);
	json_decref(req);
	return exec;
}

/* process: {pid: N} or {tag: "..."} (the selector's oneof). */
static int selector(const json_t *proc, struct e2b_proc_req *out)
{
	const json_t *sel = json_object_get(proc, "selector"), *v;

	if (json_is_object(sel)) /* some clients nest it */
		proc = sel;
	if ((v = json_object_get(proc, "pid"))) {
		/* proto3 JSON: uint32 as a number or a decimal string */
		long long n = -1;

		if (json_is_integer(v))
			n = json_integer_value(v);
		else if (plain_string(v) && json_string_length(v) <= 10) {
			char *end;

			n = strtoll(json_string_value(v), &end, 10);
			if (*end || end == json_string_value(v))
				n = -1;
		}
		if (n < 1 || n > 0xffffffffLL)
			return -EINVAL;
		out->pid = (uint32_t)n;
		return 0;
	}
	if ((v = json_object_get(proc, "tag")) && plain_string(v) && json_string_length(v) > 0 &&
	    json_string_length(v) < sizeof(out->tag)) {
		snprintf(out->tag, sizeof(out->tag), "%s", json_string_value(v));
		return 0;
	}
	return -EINVAL;
}

static int signal_of(const json_t *v)
{
	const char *s = json_string_value(v);

	if (json_is_integer(v))
		return json_integer_value(v) == 9 || json_integer_value(v) == 15
			       ? (int)json_integer_value(v)
			       : -EINVAL;
	if (s && !strcmp(s, "SIGNAL_SIGKILL"))
		return 9;
	if (s && !strcmp(s, "SIGNAL_SIGTERM"))
		return 15;
	return -EINVAL;
}

/* input: {stdin: base64} or {pty: base64}, appended to out->input. */
static int input_of(const json_t *in, struct e2b_proc_req *out, char *err, size_t errlen)
{
	const json_t *data = json_object_get(in, "stdin");
	const char *b;
	unsigned char *grown;
	size_t n;

	if (!data)
		data = json_object_get(in, "pty");
	if (!(b = json_string_value(data)))
		return fail(err, errlen, "input must hold stdin or pty bytes (base64)");
	out->pty_input = data == json_object_get(in, "pty");
	grown = realloc(out->input, out->input_len + json_string_length(data) + 1);
	if (!grown)
		return fail(err, errlen, "out of memory");
	out->input = grown;
	if (base64_decode(b, json_string_length(data), out->input + out->input_len,
			  json_string_length(data) + 1, &n) < 0)
		return fail(err, errlen, "input must be base64");
	out->input_len += n;
	return 0;
}

int e2b_pty_size_parse(const json_t *pty, struct e2b_pty_size *out, char *err, size_t errlen)
{
	const json_t *size = json_object_get(pty, "size"), *c, *r;

	out->cols = out->rows = 0;
	if (!pty || json_is_null(pty))
		return 0;
	c = json_object_get(size, "cols");
	r = json_object_get(size, "rows");
	if (!json_is_object(pty) || !json_is_integer(c) || !json_is_integer(r) ||
	    json_integer_value(c) < 1 || json_integer_value(c) > 65535 ||
	    json_integer_value(r) < 1 || json_integer_value(r) > 65535)
		return fail(err, errlen, "pty.size must be {cols, rows}, each 1 to 65535");
	out->cols = (unsigned)json_integer_value(c);
	out->rows = (unsigned)json_integer_value(r);
	return 0;
}

int e2b_proc_req_parse(enum e2b_proc_call call, const char *msg, size_t len,
		       struct e2b_proc_req *out, char *err, size_t errlen)
{
	json_t *req = load(msg, len, err, errlen);
	int rc = -EINVAL;

	memset(out, 0, sizeof(*out));
	if (!req)
		return -EINVAL;
	if (selector(json_object_get(req, "process"), out) < 0) {
		fail(err, errlen, "process must select a pid or a tag");
		goto out;
	}
	if (call == E2B_CALL_SEND_SIGNAL &&
	    (out->signal = signal_of(json_object_get(req, "signal"))) < 0) {
		fail(err, errlen, "signal must be SIGNAL_SIGKILL or SIGNAL_SIGTERM");
		goto out;
	}
	if (call == E2B_CALL_SEND_INPUT &&
	    input_of(json_object_get(req, "input"), out, err, errlen) < 0)
		goto out;
	if (call == E2B_CALL_UPDATE &&
	    e2b_pty_size_parse(json_object_get(req, "pty"), &out->pty, err, errlen) < 0)
		goto out;
	rc = 0;
out:
	json_decref(req);
	if (rc < 0)
		e2b_proc_req_free(out);
	return rc;
}

int e2b_stream_input_parse(const void *body, size_t len, struct e2b_proc_req *out, char *err,
			   size_t errlen)
{
	const uint8_t *b = body, *msg;
	bool started = false;
	size_t off = 0, mlen;
	uint8_t flags;
	int n;

	memset(out, 0, sizeof(*out));
	while (off < len) {
		json_t *m, *v;
		int rc = 0;

		n = connect_frame_parse(b + off, len - off, CONNECT_MAX_MESSAGE, &flags, &msg,
					&mlen);
		if (n <= 0) {
			fail(err, errlen,
			     n == -E2BIG    ? "a message is too large"
			     : n == -EPROTO ? "compressed messages are not supported"
					    : "the body ends inside an envelope");
			goto bad;
		}
		off += (size_t)n;
		if (flags & CONNECT_FLAG_END)
			continue; /* a client's end-of-stream: nothing to take */
		if (!(m = load((const char *)msg, mlen, err, errlen)))
			goto bad;
		if ((v = json_object_get(m, "start"))) {
			if (started || selector(json_object_get(v, "process"), out) < 0)
				rc = fail(err, errlen,
					  "start must come first, once, and select a pid or a tag");
			started = true;
		} else if ((v = json_object_get(m, "data"))) {
			if (!started)
				rc = fail(err, errlen, "data before start");
			else
				rc = input_of(json_object_get(v, "input"), out, err, errlen);
		} else if (!json_object_get(m, "keepalive")) {
			rc = fail(err, errlen, "a message must be start, data or keepalive");
		}
		json_decref(m);
		if (rc < 0)
			goto bad;
	}
	if (!started) {
		fail(err, errlen, "the stream has no start");
		goto bad;
	}
	return 0;
bad:
	e2b_proc_req_free(out);
	return -EINVAL;
}

void e2b_proc_req_free(struct e2b_proc_req *r)
{
	free(r->input);
	memset(r, 0, sizeof(*r));
}

static int hexval(int c)
{
	return isdigit(c) ? c - '0' : isxdigit(c) ? (tolower(c) - 'a' + 10) : -1;
}

/* Percent-decodes (and '+' as space) n bytes of in into out (cap > n). */
static void pct_decode(const char *in, size_t n, char *out)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		if (in[i] == '%' && i + 2 < n && hexval((unsigned char)in[i + 1]) >= 0 &&
		    hexval((unsigned char)in[i + 2]) >= 0) {
			out[o++] = (char)(hexval((unsigned char)in[i + 1]) * 16 +
					  hexval((unsigned char)in[i + 2]));
			i += 2;
		} else {
			out[o++] = in[i] == '+' ? ' ' : in[i];
		}
	}
	out[o] = '\0';
}

bool e2b_metadata_match(const json_t *metadata, const char *filter)
{
	const char *p = filter;

	while (p && *p) {
		size_t n = strcspn(p, "&");
		const char *eq = memchr(p, '=', n);
		char k1[512], k2[512], v1[512], v2[512];
		const char *have;

		if (n && (!eq || (size_t)(eq - p) >= sizeof(k1) || n >= sizeof(v1)))
			return false;
		if (n) {
			pct_decode(p, (size_t)(eq - p), k1);
			pct_decode(k1, strlen(k1), k2);
			pct_decode(eq + 1, n - (size_t)(eq - p) - 1, v1);
			pct_decode(v1, strlen(v1), v2);
			have = json_string_value(json_object_get(metadata, k2));
			if (!have || strcmp(have, v2))
				return false;
		}
		p += n;
		if (*p == '&')
			p++;
	}
	return true;
}

/* One "coding;q=X" of an encoding list: its name (lower case, trimmed) into
 * name[cap] and its quality (1 when none is given, 0 for a bad one). */
static void coding_of(const char *p, size_t n, char *name, size_t cap, double *q)
{
	const char *semi = memchr(p, ';', n);
	size_t nl = semi ? (size_t)(semi - p) : n, k = 0;

	*q = 1.0;
	while (nl && (*p == ' ' || *p == '\t'))
		p++, nl--, n--;
	while (nl && (p[nl - 1] == ' ' || p[nl - 1] == '\t'))
		nl--;
	for (; k < nl && k + 1 < cap; k++)
		name[k] = (char)tolower((unsigned char)p[k]);
	name[k] = '\0';
	for (const char *a = semi; a && a < p + n;) {
		const char *next = memchr(a + 1, ';', (size_t)(p + n - a - 1));
		const char *v = a + 1;

		while (v < p + n && (*v == ' ' || *v == '\t'))
			v++;
		if (p + n - v >= 2 && (v[0] == 'q' || v[0] == 'Q') && v[1] == '=') {
			char num[16];
			size_t vl = (size_t)((next ? next : p + n) - v - 2);
			char *end;

			snprintf(num, sizeof(num), "%.*s", (int)(vl < 15 ? vl : 15), v + 2);
			*q = strtod(num, &end);
			if (end == num || *q < 0 || *q > 1)
				*q = 1.0; /* as envd: an unparsable q is ignored */
		}
		a = next;
	}
}

int e2b_accept_gzip(const char *hv, bool *gzip)
{
	bool identity_refused = false;
	double best_q = -1;
	int best = 0; /* 1 identity, 2 gzip */
	const char *p = hv;

	*gzip = false;
	for (int pass = 0; pass < 2; pass++) {
		for (p = hv; *p;) {
			size_t n = strcspn(p, ",");
			char name[32];
			double q;

			coding_of(p, n, name, sizeof(name), &q);
			if (pass == 0) {
				if (!strcmp(name, "identity") && q == 0)
					identity_refused = true;
			} else if (q > 0 && q > best_q) {
				int w = !strcmp(name, "identity") ? 1
					: !strcmp(name, "gzip")	  ? 2
					: !strcmp(name, "*")	  ? (identity_refused ? 2 : 1)
								  : 0;

				if (w) {
					best = w;
					best_q = q;
				}
			}
			p += n;
			if (*p == ',')
				p++;
		}
	}
	if (best == 0 && identity_refused)
		return -EINVAL;
	*gzip = best == 2;
	return 0;
}

int e2b_content_gzip(const char *hv, bool *gzip)
{
	char name[32];
	double q;

	coding_of(hv, strlen(hv), name, sizeof(name), &q);
	*gzip = !strcmp(name, "gzip");
	return *gzip || !name[0] || !strcmp(name, "identity") ? 0 : -EINVAL;
}
