/* gateway/cli/cmd_client.c: the session commands of the gateway's client side,
 * `vitrine create`, `ls`, `show` and `rm`, and what every client command
 * shares: finding the gateway and the key, sending one request and turning
 * every failure (no connection, an API error) into one message and exit 1.
 * The API itself is described in docs/api.md. */
#include "common/fsutil.h"
#include "common/http_client.h"
#include "gateway/cli/cli.h"
#include "gateway/cli/cmd_opts.h"
#include "gateway/core/auth.h"
#include "vmm-qemu/spec.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REQUEST_TIMEOUT_S 60
#define WAIT_TIMEOUT_S 330 /* the gateway gives up waiting after 300 s */

/* Parses http://HOST[:PORT][/] (or HOST:PORT) into cl. Returns 0 or -1. */
static int parse_gateway_url(struct cli_client *cl, const char *url)
{
	const char *p = url, *host_end, *port_s = NULL;
	char port_buf[8];
	size_t n;

	if (!strncmp(p, "http://", 7))
		p += 7;
	else if (strstr(p, "://"))
		return -1; /* https and friends: the CLI speaks plain HTTP to loopback */
	if (*p == '[') { /* [::1]:8080 */
		host_end = strchr(p, ']');
		if (!host_end)
			return -1;
		p++;
		if (host_end[1] == ':')
			port_s = host_end + 2;
		else if (host_end[1] && strcmp(host_end + 1, "/"))
			return -1;
	} else {
		host_end = p + strcspn(p, ":/");
		if (*host_end == ':')
			port_s = host_end + 1;
		else if (*host_end && strcmp(host_end, "/"))
			return -1;
	}
	n = (size_t)(host_end - p);
	if (n == 0 || n >= sizeof(cl->host))
		return -1;
	memcpy(cl->host, p, n);
	cl->host[n] = '\0';
	cl->port = 80;
	if (port_s) {
		n = strcspn(port_s, "/");
		if (n == 0 || n >= sizeof(port_buf) || (port_s[n] && strcmp(port_s + n, "/")))
			return -1;
		memcpy(port_buf, port_s, n);
		port_buf[n] = '\0';
		if (cli_parse_int("the gateway port", port_buf, 1, 65535, &cl->port) < 0)
			return -1;
	}
	return 0;
}

int cli_client_init(struct cli_client *cl)
{
	const char *url = cl->gateway_url, *env_key = getenv("VITRINE_API_KEY");
	const char *home = getenv("VITRINE_HOME");
	char path[4096], err[512];
	int rc;

	if (!url)
		url = getenv("VITRINE_URL") && *getenv("VITRINE_URL") ? getenv("VITRINE_URL")
								      : CLI_DEFAULT_GATEWAY;
	cl->gateway_url = url;
	if (parse_gateway_url(cl, url) < 0) {
		fprintf(stderr, "%s: the gateway must be given as http://HOST:PORT, not '%s'\n",
			cl->cmd, url);
		return 2;
	}
	/* The same checks as the gateway's: a key file others may read is
	 * refused, with how to fix it. */
	if (cl->key_file) {
		if (auth_read_key(cl->key_file, cl->key, sizeof(cl->key), err, sizeof(err)) < 0) {
			fprintf(stderr, "%s: cannot read the API key: %s\n", cl->cmd, err);
			return 1;
		}
		return 0;
	}
	if (env_key && *env_key) {
		snprintf(cl->key, sizeof(cl->key), "%s", env_key);
		return 0;
	}
	snprintf(path, sizeof(path), "%s/api-key", home && *home ? home : "/var/lib/vitrine");
	rc = auth_read_key(path, cl->key, sizeof(cl->key), err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr,
			"%s: no API key: set VITRINE_API_KEY or pass --api-key-file FILE "
			"(the default: %s)\n",
			cl->cmd, err);
		return 1;
	}
	return 0;
}

/* Says what went wrong with a request, if anything: 0 for a 2xx answer,
 * else 1 (resp freed). */
static int report(struct cli_client *cl, const char *method, const char *path, int timeout_s,
		  int rc, struct http_resp *resp)
{
	const char *msg;

	if (rc == -ECONNREFUSED) {
		fprintf(stderr,
			"%s: cannot connect to the gateway at %s: connection refused "
			"(is `vitrine serve` running there?)\n",
			cl->cmd, cl->gateway_url);
	} else if (rc == -EHOSTUNREACH) {
		fprintf(stderr, "%s: cannot resolve the gateway's host '%s'\n", cl->cmd, cl->host);
	} else if (rc < 0) {
		fprintf(stderr, "%s: %s %s: no valid HTTP reply from %s within %d s (%s)\n",
			cl->cmd, method, path, cl->gateway_url, timeout_s, strerror(-rc));
	} else if (resp->status >= 200 && resp->status < 300) {
		return 0;
	} else if (*http_error_code(resp)) {
		msg = json_string_value(
			json_object_get(json_object_get(resp->json, "error"), "message"));
		fprintf(stderr, "%s: %s: %s (HTTP %d)\n", cl->cmd, http_error_code(resp),
			msg ? msg : "", resp->status);
	} else {
		fprintf(stderr, "%s: HTTP %d from %s: %.200s\n", cl->cmd, resp->status,
			cl->gateway_url, resp->body ? resp->body : "");
	}
	http_resp_free(resp);
	return 1;
}

int cli_client_request(struct cli_client *cl, const char *method, const char *path,
		       const char *body, size_t body_len, int timeout_s, struct http_resp *resp)
{
	int rc = http_request(cl->host, cl->port, method, path, cl->key, body, body_len, timeout_s,
			      resp);

	return report(cl, method, path, timeout_s, rc, resp);
}

int cli_client_request_fd(struct cli_client *cl, const char *method, const char *path, int in_fd,
			  uint64_t in_len, int out_fd, int timeout_s, struct http_resp *resp)
{
	int rc = http_request_fd(cl->host, cl->port, method, path, cl->key, in_fd, in_len, out_fd,
				 timeout_s, resp);

	return report(cl, method, path, timeout_s, rc, resp);
}

void cli_print_json(const json_t *j)
{
	char *text = json_dumps(j, JSON_INDENT(2));

	if (text)
		puts(text);
	free(text);
}

/* --wait on a terminal: r, the answer that started a session (with its
 * tokens), becomes that session's once it is no longer busy (cli_wait.c),
 * tokens kept: the same JSON as the one long ?wait=ready request's.
 * Returns 0, or the exit status after printing why (r is freed then). */
static int wait_on_tty(struct cli_client *cl, struct http_resp *r)
{
	const char *id = json_string_value(json_object_get(r->json, "id"));
	json_t *tokens = json_object_get(r->json, "tokens");
	struct http_resp done;
	int rc;

	if (!id) {
		fprintf(stderr, "%s: the gateway's answer names no session\n", cl->cmd);
		http_resp_free(r);
		return 1;
	}
	rc = cli_wait_session(cl, id, r->json, &done);
	if (rc == 0 && tokens)
		json_object_set(done.json, "tokens", tokens);
	http_resp_free(r);
	*r = done;
	return rc;
}

int cmd_create(int argc, char **argv)
{
	struct create_config cfg;
	json_t *body, *st;
	struct http_resp r;
	bool tty;
	char *text, err[512];
	int rc = cli_create_parse(&cfg, argc, argv, err, sizeof(err));

	if ((rc = cli_cmd_answer(&cli_create_cmd, rc, err)) >= 0)
		return rc;
	if ((rc = cli_client_init(&cfg.cl)) != 0)
		return rc;
	body = json_object();
	if (cfg.image)
		json_object_set_new(body, "image", json_string(cfg.image));
	if (cfg.template_name)
		json_object_set_new(body, "template", json_string(cfg.template_name));
	if (cfg.url)
		json_object_set_new(body, "url", json_string(cfg.url));
	if (cfg.width)
		json_object_set_new(body, "width", json_integer(cfg.width));
	if (cfg.height)
		json_object_set_new(body, "height", json_integer(cfg.height));
	if (cfg.vcpus)
		json_object_set_new(body, "vcpus", json_integer(cfg.vcpus));
	if (cfg.memory_mib)
		json_object_set_new(body, "memory_mib", json_integer(cfg.memory_mib));
	if (cfg.timeout_s)
		json_object_set_new(body, "timeout_s", json_integer(cfg.timeout_s));
	text = json_dumps(body, JSON_COMPACT);
	json_decref(body);
	if (!text)
		return 1;
	/* On a terminal the wait is a spinner (cli_wait.c), not one long request. */
	tty = cfg.wait && cli_wait_on_tty();
	rc = cli_client_request(&cfg.cl, "POST",
				cfg.wait && !tty ? "/v1/sessions?wait=ready" : "/v1/sessions", text,
				strlen(text), cfg.wait && !tty ? WAIT_TIMEOUT_S : REQUEST_TIMEOUT_S,
				&r);
	free(text);
	if (rc == 0 && tty)
		rc = wait_on_tty(&cfg.cl, &r);
	if (rc)
		return rc;
	cli_print_json(r.json);
	/* --wait promises a ready session: say so when it is not. */
	st = json_object_get(r.json, "status");
	if (cfg.wait && (!json_is_string(st) || strcmp(json_string_value(st), "ready"))) {
		const char *why = json_string_value(json_object_get(r.json, "error"));

		fprintf(stderr, "vitrine create: session %s is %s, not ready%s%s\n",
			json_string_value(json_object_get(r.json, "id")),
			json_is_string(st) ? json_string_value(st) : "in an unknown state",
			why ? ": " : "", why ? why : "");
		rc = 1;
	}
	http_resp_free(&r);
	return rc;
}

/* "12 s", "5 min", "3 h": an age for people. */
static void format_age(json_int_t ms, char *buf, size_t len)
{
	json_int_t s = ms / 1000;

	if (s < 120)
		snprintf(buf, len, "%lld s", (long long)s);
	else if (s < 7200)
		snprintf(buf, len, "%lld min", (long long)(s / 60));
	else
		snprintf(buf, len, "%lld h", (long long)(s / 3600));
}

/* The string member key of o, or "?". */
static const char *field(const json_t *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o, key));

	return v ? v : "?";
}

/* Reads the line of session command cmd into *c and readies its client.
 * Returns -1 to go on, else the exit status once said why. */
static int session_line(const struct cli_cmd *cmd, struct session_config *c, int argc, char **argv)
{
	char err[512];
	int rc = cli_session_parse(cmd, c, argc, argv, err, sizeof(err));

	if ((rc = cli_cmd_answer(cmd, rc, err)) >= 0)
		return rc;
	rc = cli_client_init(&c->cl);
	return rc ? rc : -1;
}

int cmd_ls(int argc, char **argv)
{
	struct session_config cfg;
	struct http_resp r;
	size_t i;
	json_t *s;
	int rc = session_line(&cli_ls_cmd, &cfg, argc, argv);

	if (rc >= 0)
		return rc;
	if ((rc = cli_client_request(&cfg.cl, "GET", "/v1/sessions", NULL, 0, REQUEST_TIMEOUT_S,
				     &r)))
		return rc;
	if (cfg.json) {
		cli_print_json(r.json);
	} else {
		printf("%-24s %-9s %-12s %-10s %s\n", "ID", "STATUS", "IMAGE", "SCREEN", "AGE");
		json_array_foreach(json_object_get(r.json, "sessions"), i, s)
		{
			char screen[32], age[32];

			snprintf(screen, sizeof(screen), "%lldx%lld",
				 (long long)json_integer_value(json_object_get(s, "width")),
				 (long long)json_integer_value(json_object_get(s, "height")));
			format_age(json_integer_value(json_object_get(s, "age_ms")), age,
				   sizeof(age));
			printf("%-24s %-9s %-12s %-10s %s\n", field(s, "id"), field(s, "status"),
			       field(s, "image"), screen, age);
		}
	}
	http_resp_free(&r);
	return 0;
}

int cmd_show(int argc, char **argv)
{
	struct session_config cfg;
	struct http_resp r;
	char path[96];
	int rc = session_line(&cli_show_cmd, &cfg, argc, argv);

	if (rc >= 0)
		return rc;
	if (cfg.wait && cli_wait_on_tty())
		rc = cli_wait_session(&cfg.cl, cfg.id, NULL, &r);
	else {
		snprintf(path, sizeof(path), "/v1/sessions/%s%s", cfg.id,
			 cfg.wait ? "?wait=ready" : "");
		rc = cli_client_request(&cfg.cl, "GET", path, NULL, 0,
					cfg.wait ? WAIT_TIMEOUT_S : REQUEST_TIMEOUT_S, &r);
	}
	if (rc)
		return rc;
	cli_print_json(r.json);
	http_resp_free(&r);
	return 0;
}

int cmd_rm(int argc, char **argv)
{
	struct session_config cfg;
	struct http_resp r;
	char path[96];
	int rc = session_line(&cli_rm_cmd, &cfg, argc, argv);

	if (rc >= 0)
		return rc;
	snprintf(path, sizeof(path), "/v1/sessions/%s", cfg.id);
	if ((rc = cli_client_request(&cfg.cl, "DELETE", path, NULL, 0, REQUEST_TIMEOUT_S, &r)))
		return rc;
	printf("deleted %s\n", cfg.id);
	http_resp_free(&r);
	return 0;
}

/* pause/resume/fork: POST /v1/sessions/ID/WHAT with body (body_if_flag
 * when the command's flag, --disk or --wait, was given), print the answer. */
static int session_op(int argc, char **argv, const struct cli_cmd *cmd, const char *what,
		      const char *body_if_flag, const char *query_if_flag)
{
	struct session_config cfg;
	struct http_resp r;
	bool flag, tty;
	char path[128];
	int rc = session_line(cmd, &cfg, argc, argv);

	if (rc >= 0)
		return rc;
	flag = cfg.disk || cfg.wait;
	/* A query that waits (fork's ?wait=ready) is a spinner on a terminal. */
	tty = flag && query_if_flag && cli_wait_on_tty();
	snprintf(path, sizeof(path), "/v1/sessions/%s/%s%s", cfg.id, what,
		 flag && query_if_flag && !tty ? query_if_flag : "");
	rc = cli_client_request(&cfg.cl, "POST", path, flag && body_if_flag ? body_if_flag : "{}",
				strlen(flag && body_if_flag ? body_if_flag : "{}"), WAIT_TIMEOUT_S,
				&r);
	if (rc == 0 && tty)
		rc = wait_on_tty(&cfg.cl, &r);
	if (rc)
		return rc;
	cli_print_json(r.json);
	http_resp_free(&r);
	return 0;
}

int cmd_pause(int argc, char **argv)
{
	return session_op(argc, argv, &cli_pause_cmd, "pause", "{\"mode\":\"disk\"}", NULL);
}

int cmd_resume(int argc, char **argv)
{
	return session_op(argc, argv, &cli_resume_cmd, "resume", NULL, NULL);
}

int cmd_fork(int argc, char **argv)
{
	return session_op(argc, argv, &cli_fork_cmd, "fork", NULL, "?wait=ready");
}
