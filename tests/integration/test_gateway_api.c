/* tests/integration/test_gateway_api.c: `vitrine serve` as a real process,
 * driven over HTTP on loopback with tiny guests: session create (at once and
 * ?wait=ready), get, list, delete and expiry; auth negatives (no key, wrong
 * key, a view token acting as operator, another session's token); every
 * malformed request gets its status and error code; a guest's ports (busybox
 * httpd and an nc server in the tiny guest) by path and by host name, with
 * their refusals (a wrong token, a port out of range, nothing listening)
 * a port its owner made public, and a signed link's cookie; a client that
 * does not read 64 MiB holds the gateway's memory to about the window;
 * WebSockets to a guest's port (a busybox shell echo server) by path and
 * host name, with the same credentials and refusals, and their window;
 * SIGTERM leaves no QEMU. */
#include "common/fsutil.h"
#include "common/http_client.h"
#include "common/sha256.h"
#include "tests/lib/gateway_proc.h"
#include "tests/lib/ws_client.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

static struct gateway_proc gw;
static int port;
static const char *key;

static int qemu_running(void)
{
	return gateway_proc_guests(&gw);
}

static int setup(void **state)
{
	static const char *const args[] = { "--max-sessions", "3", "--public-domain", "ports.test",
					    NULL };

	(void)state;
	if (gateway_proc_start(&gw, args) < 0)
		return -1;
	port = gw.port;
	key = gw.key;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	gateway_proc_stop(&gw);
	return 0;
}

/* Sends a request and checks the status (and error code, when given). */
static struct http_resp expect(const char *method, const char *path, const char *token,
			       const char *body, int status, const char *code)
{
	struct http_resp r;
	int rc = http_request("127.0.0.1", port, method, path, token, body, body ? strlen(body) : 0,
			      600, &r);

	if (rc < 0 || r.status != status || (code && strcmp(http_error_code(&r), code)))
		fail_msg("%s %s -> %d %s (want %d %s)", method, path, r.status,
			 r.body ? r.body : strerror(-rc), status, code ? code : "");
	return r;
}

static void test_health_and_auth_negatives(void **state)
{
	struct http_resp r;

	(void)state;
	r = expect("GET", "/healthz", NULL, NULL, 200, NULL);
	assert_string_equal(json_string_value(json_object_get(r.json, "status")), "ok");
	http_resp_free(&r);
	r = expect("GET", "/v1/sessions", NULL, NULL, 401, "unauthorized");
	http_resp_free(&r);
	r = expect("GET", "/v1/sessions", "wrong-key-wrong-key", NULL, 401, "unauthorized");
	http_resp_free(&r);
	r = expect("POST", "/v1/sessions", NULL, "{\"image\":\"tiny\"}", 401, "unauthorized");
	http_resp_free(&r);
	/* A missing session looks the same as a wrong token to a non-operator. */
	r = expect("GET", "/v1/sessions/s_0000", "wrong-key-wrong-key", NULL, 401, "unauthorized");
	http_resp_free(&r);
	r = expect("GET", "/v1/sessions/s_0000", key, NULL, 404, "not_found");
	http_resp_free(&r);
	assert_int_equal(qemu_running(), 0);
}

static void test_malformed_requests(void **state)
{
	static const struct {
		const char *body;
		int status;
		const char *code;
	} bad[] = {
		{ "{not json", 400, "invalid_json" },
		{ "[1,2]", 400, "invalid_json" },
		{ "{\"image\":\"tiny\",\"bogus\":1}", 400, "invalid_argument" },
		{ "{\"image\":\"tiny\",\"width\":99999}", 400, "out_of_range" },
		{ "{\"image\":\"tiny\",\"width\":\"wide\"}", 400, "invalid_argument" },
		{ "{\"image\":\"tiny\",\"vcpus\":0}", 400, "out_of_range" },
		{ "{\"image\":\"tiny\",\"url\":\"javascript:alert(1)\"}", 400, "invalid_argument" },
		{ "{\"image\":\"../etc\"}", 400, "invalid_argument" },
		{ "{\"image\":\"tiny\",\"template\":\"x\"}", 400, "invalid_argument" },
		{ "{\"image\":\"no-such-image\"}", 404, "unknown_image" },
	};
	struct http_resp r;
	size_t big_len = (1u << 20) + 10;
	char *big = malloc(big_len + 1);

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = expect("POST", "/v1/sessions", key, bad[i].body, bad[i].status, bad[i].code);
		http_resp_free(&r);
	}
	memset(big, ' ', big_len);
	big[big_len] = '\0';
	r = expect("POST", "/v1/sessions", key, big, 413, "body_too_large");
	http_resp_free(&r);
	free(big);
	r = expect("POST", "/v1/sessions?wait=later", key, "{\"image\":\"tiny\"}", 400,
		   "invalid_argument");
	http_resp_free(&r);
	/* A query parameter is found behind one longer than its buffer too
	 * (lws_get_urlarg_by_name stopped there: this one booted a guest). */
	r = expect("POST",
		   "/v1/sessions?note=a-parameter-longer-than-the-32-bytes-wait-is-read-into&"
		   "wait=later",
		   key, "{\"image\":\"tiny\"}", 400, "invalid_argument");
	http_resp_free(&r);
	r = expect("PUT", "/v1/sessions", key, "{}", 405, "method_not_allowed");
	http_resp_free(&r);
	r = expect("GET", "/v2/nothing", key, NULL, 404, "not_found");
	http_resp_free(&r);
	/* None of that may have left a guest behind. */
	r = expect("GET", "/v1/sessions", key, NULL, 200, NULL);
	assert_int_equal(json_array_size(json_object_get(r.json, "sessions")), 0);
	http_resp_free(&r);
	assert_int_equal(qemu_running(), 0);
}

static void test_session_lifecycle_and_tokens(void **state)
{
	struct http_resp a, b, r;
	const char *ida, *idb, *ctl_a, *view_a, *ctl_b;
	char path[128];

	(void)state;
	a = expect("POST", "/v1/sessions?wait=ready", key,
		   "{\"image\":\"tiny\",\"width\":800,\"height\":600}", 201, NULL);
	assert_string_equal(json_string_value(json_object_get(a.json, "status")), "ready");
	assert_int_equal(json_integer_value(json_object_get(a.json, "width")), 800);
	b = expect("POST", "/v1/sessions", key, "{\"image\":\"tiny\"}", 201, NULL);
	assert_string_equal(json_string_value(json_object_get(b.json, "status")), "starting");
	ida = json_string_value(json_object_get(a.json, "id"));
	idb = json_string_value(json_object_get(b.json, "id"));
	ctl_a = json_string_value(json_object_get(json_object_get(a.json, "tokens"), "control"));
	view_a = json_string_value(json_object_get(json_object_get(a.json, "tokens"), "view"));
	ctl_b = json_string_value(json_object_get(json_object_get(b.json, "tokens"), "control"));
	assert_non_null(ctl_a);
	assert_non_null(view_a);
	assert_string_not_equal(ctl_a, view_a);
	assert_string_not_equal(ctl_a, ctl_b);

	/* b becomes ready; a GET may wait for it. */
	snprintf(path, sizeof(path), "/v1/sessions/%s?wait=ready", idb);
	r = expect("GET", path, key, NULL, 200, NULL);
	assert_string_equal(json_string_value(json_object_get(r.json, "status")), "ready");
	assert_null(json_object_get(r.json, "tokens")); /* tokens only at creation */
	http_resp_free(&r);
	/* Each its own guest (b's QEMU starts on a job thread after the POST
	 * answered, so it is counted once b is ready). */
	assert_int_equal(qemu_running(), 2);

	/* Session tokens see their own session only; they cannot act as operator. */
	snprintf(path, sizeof(path), "/v1/sessions/%s", ida);
	r = expect("GET", path, view_a, NULL, 200, NULL);
	http_resp_free(&r);
	r = expect("GET", path, ctl_a, NULL, 200, NULL);
	http_resp_free(&r);
	r = expect("GET", path, ctl_b, NULL, 401, "unauthorized");
	http_resp_free(&r);
	r = expect("DELETE", path, ctl_a, NULL, 403, "forbidden");
	http_resp_free(&r);
	r = expect("GET", "/v1/sessions", ctl_a, NULL, 403, "forbidden");
	http_resp_free(&r);
	r = expect("POST", "/v1/sessions", view_a, "{\"image\":\"tiny\"}", 403, "forbidden");
	http_resp_free(&r);

	r = expect("GET", "/v1/sessions", key, NULL, 200, NULL);
	assert_int_equal(json_array_size(json_object_get(r.json, "sessions")), 2);
	http_resp_free(&r);

	r = expect("DELETE", path, key, NULL, 200, NULL);
	http_resp_free(&r);
	r = expect("GET", path, key, NULL, 404, "not_found");
	http_resp_free(&r);
	assert_int_equal(qemu_running(), 1);
	snprintf(path, sizeof(path), "/v1/sessions/%s", idb);
	r = expect("DELETE", path, key, NULL, 200, NULL);
	http_resp_free(&r);
	assert_int_equal(qemu_running(), 0);
	http_resp_free(&a);
	http_resp_free(&b);
}

/* The boot phases in the order docs/api.md lists them ("boot"). */
static const char *const boot_phases[] = {
	"queued",	 "preparing",	  "saving_state",    "spawning", "connecting_monitor",
	"loading_state", "booting_guest", "preparing_guest", "settling", "connecting_screen",
};

static int phase_index(const char *name)
{
	for (size_t i = 0; i < sizeof(boot_phases) / sizeof(boot_phases[0]); i++)
		if (name && !strcmp(boot_phases[i], name))
			return (int)i;
	fail_msg("unknown boot phase '%s'", name ? name : "(none)");
	return -1;
}

/* A booting session shows its phase: polled while it boots, the phases
 * come in the documented order with elapsed_ms never going back; once
 * ready the finished phases add up to the elapsed time, which is the
 * session's ready_ms, and the list shows the same. */
static void test_boot_phases(void **state)
{
	struct http_resp b, r;
	char path[128], seen[512] = "";
	int last = -1, n_seen = 0, steps = 0;
	json_int_t elapsed = -1, sum = 0, total, ready_ms;
	json_t *boot, *phases, *ph;
	size_t i, n_phases;

	(void)state;
	b = expect("POST", "/v1/sessions", key, "{\"image\":\"tiny\"}", 201, NULL);
	snprintf(path, sizeof(path), "/v1/sessions/%s",
		 json_string_value(json_object_get(b.json, "id")));
	for (;; steps++) {
		const char *status, *phase;
		json_int_t e;

		r = expect("GET", path, key, NULL, 200, NULL);
		status = json_string_value(json_object_get(r.json, "status"));
		boot = json_object_get(r.json, "boot");
		if (strcmp(status, "starting"))
			break;
		phase = json_string_value(json_object_get(boot, "phase"));
		e = json_integer_value(json_object_get(boot, "elapsed_ms"));
		if (e < elapsed)
			fail_msg("elapsed_ms went back from %lld to %lld", (long long)elapsed,
				 (long long)e);
		elapsed = e;
		assert_true(json_integer_value(json_object_get(boot, "phase_ms")) <= e);
		if (phase_index(phase) < last)
			fail_msg("phase %s after %s", phase, seen);
		if (phase_index(phase) > last) {
			n_seen++;
			snprintf(seen + strlen(seen), sizeof(seen) - strlen(seen), " %s", phase);
		}
		last = phase_index(phase);
		/* the done ones come before the current one */
		json_array_foreach(json_object_get(boot, "phases"), i, ph) assert_true(
			phase_index(json_string_value(json_object_get(ph, "phase"))) < last);
		http_resp_free(&r);
		if (steps > 3000)
			fail_msg("not ready after %d polls (phases seen:%s)", steps, seen);
		usleep(20 * 1000);
	}
	print_message("boot phases seen while polling:%s\n", seen);
	/* The guest's boot is the long part: polling every 20 ms sees it. */
	if (!strstr(seen, "booting_guest") || n_seen < 2)
		fail_msg("phases seen while booting:%s", seen);
	assert_string_equal(json_string_value(json_object_get(r.json, "status")), "ready");
	assert_string_equal(json_string_value(json_object_get(boot, "phase")), "ready");
	assert_null(json_object_get(boot, "phase_ms"));
	total = json_integer_value(json_object_get(boot, "elapsed_ms"));
	ready_ms = json_integer_value(json_object_get(r.json, "ready_ms"));
	phases = json_object_get(boot, "phases");
	n_phases = json_array_size(phases);
	last = -1;
	json_array_foreach(phases, i, ph)
	{
		int at = phase_index(json_string_value(json_object_get(ph, "phase")));

		assert_true(at > last);
		last = at;
		assert_true(json_integer_value(json_object_get(ph, "ms")) >= 0);
		sum += json_integer_value(json_object_get(ph, "ms"));
		print_message("  %-20s %6lld ms\n", boot_phases[at],
			      (long long)json_integer_value(json_object_get(ph, "ms")));
	}
	print_message("  %-20s %6lld ms (ready_ms %lld)\n", "total", (long long)total,
		      (long long)ready_ms);
	assert_true(total >= elapsed);
	assert_int_equal(sum, total);
	/* the timeline runs from the request to the session going ready */
	if (total > ready_ms + 50 || total < ready_ms - 50)
		fail_msg("boot took %lld ms, ready_ms %lld", (long long)total, (long long)ready_ms);
	assert_string_equal(json_string_value(json_object_get(json_array_get(phases, 0), "phase")),
			    "queued");
	assert_string_equal(json_string_value(
				    json_object_get(json_array_get(phases,
								   json_array_size(phases) - 1),
						    "phase")),
			    "connecting_screen");
	http_resp_free(&r);
	r = expect("GET", "/v1/sessions", key, NULL, 200, NULL);
	json_array_foreach(json_object_get(r.json, "sessions"), i,
			   ph) if (!strcmp(json_string_value(json_object_get(ph, "id")), path + 13))
		assert_int_equal(json_integer_value(json_object_get(json_object_get(ph, "boot"),
								    "elapsed_ms")),
				 total);
	http_resp_free(&r);
	/* and the events tell it once */
	snprintf(path + strlen(path), sizeof(path) - strlen(path), "/events");
	r = expect("GET", path, key, NULL, 200, NULL);
	n_seen = 0;
	json_array_foreach(json_object_get(r.json, "events"), i,
			   ph) if (!strcmp(json_string_value(json_object_get(ph, "type")), "boot"))
	{
		n_seen++;
		assert_string_equal(json_string_value(json_object_get(ph, "phase")), "ready");
		assert_int_equal(json_integer_value(json_object_get(ph, "elapsed_ms")), total);
		assert_int_equal(json_array_size(json_object_get(ph, "phases")), n_phases);
	}
	assert_int_equal(n_seen, 1);
	http_resp_free(&r);
	path[strlen(path) - strlen("/events")] = '\0';
	r = expect("DELETE", path, key, NULL, 200, NULL);
	http_resp_free(&r);
	http_resp_free(&b);
}

/* One request on a fresh connection with Host host (and Authorization:
 * Bearer token unless NULL); the status, and the body (malloc'd) in *body.
 * The gateway closes after it (Connection: close). */
static int raw_get_with(const char *host, const char *path, const char *token, const char *extra,
			char **body, char **head)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct timeval tv = { .tv_sec = 60 };
	char req[1024], *buf = NULL, *p;
	size_t len = 0, cap = 0;
	int fd = socket(AF_INET, SOCK_STREAM, 0), status = -1;
	ssize_t n;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true(fd >= 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	n = snprintf(req, sizeof(req),
		     "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n%s%s%s%s\r\n", path, host,
		     token ? "Authorization: Bearer " : "", token ? token : "", token ? "\r\n" : "",
		     extra ? extra : "");
	assert_int_equal(write(fd, req, (size_t)n), n);
	for (;;) {
		if (len + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 65536;
			assert_non_null(buf = realloc(buf, cap));
		}
		if ((n = read(fd, buf + len, 4096)) <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	assert_non_null(buf);
	buf[len] = '\0';
	if (sscanf(buf, "HTTP/1.1 %d", &status) != 1)
		fail_msg("GET %s (Host %s): no answer: %s", path, host, buf);
	p = strstr(buf, "\r\n\r\n");
	*body = strdup(p ? p + 4 : "");
	if (head) {
		if (p)
			*p = '\0';
		*head = strdup(buf);
	}
	free(buf);
	return status;
}

static int raw_get(const char *host, const char *path, const char *token, char **body)
{
	return raw_get_with(host, path, token, NULL, body, NULL);
}

/* The SHA-256 of data in hex into hex[65]. */
static void hex_sha256(const void *data, size_t len, char *hex)
{
	struct sha256_ctx c;
	uint8_t d[SHA256_LEN];

	sha256_init(&c);
	sha256_update(&c, data, len);
	sha256_final(&c, d);
	for (int i = 0; i < SHA256_LEN; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

/* Runs sh -c cmd in the guest as root; its stdout (malloc'd). */
static char *guest_sh(const char *id, const char *cmd)
{
	json_t *req = json_pack("{s:s, s:[s, s], s:s}", "cmd", "sh", "args", "-c", cmd, "user",
				"root");
	char *text = json_dumps(req, JSON_COMPACT), path[128], *out;
	struct http_resp r;

	snprintf(path, sizeof(path), "/v1/sessions/%s/exec", id);
	r = expect("POST", path, key, text, 200, NULL);
	if (json_integer_value(json_object_get(r.json, "exit_code")))
		fail_msg("%s: %s", cmd, r.body);
	out = strdup(json_string_value(json_object_get(r.json, "stdout")));
	http_resp_free(&r);
	json_decref(req);
	free(text);
	return out;
}

/* The guest's ports: busybox httpd on 8080 (a page and 4 MiB of random
 * bytes) and an nc server on 9091 that answers with the request's head
 * and the SHA-256 of its body (Content-Length bytes), reached by path and
 * by host name ({port}-{id}.ports.test); a wrong token, a view token, none,
 * ports out of range and a port nobody listens on are refused. */
static void test_guest_ports(void **state)
{
	static const char srv[] =
		"#!/bin/sh\n"
		"len=0; head=''\n"
		"while IFS= read -r line; do\n"
		"  line=$(printf '%s' \"$line\" | tr -d '\\r')\n"
		"  [ -z \"$line\" ] && break\n"
		"  head=\"$head$line|\"\n"
		"  case \"$line\" in [Cc]ontent-[Ll]ength:*) len=${line#*: };; esac\n"
		"done\n"
		"sum=$(head -c \"$len\" | sha256sum | cut -d' ' -f1)\n"
		"body=\"$head$sum\"\n"
		"printf 'HTTP/1.1 201 Made\\r\\nContent-Type: text/plain\\r\\nContent-Length: "
		"%d\\r\\n\\r\\n%s' \"${#body}\" \"$body\"\n";
	char base[160], path[256], host[128], *out, *body, *upload, *cmd, want[65], hex[65];
	struct gateway_session s;
	struct http_resp r;
	size_t up_len = 300 * 1000;

	(void)state;
	assert_int_equal(gateway_proc_create_session(&gw, "{\"image\":\"tiny\"}", 300, &s), 0);
	snprintf(base, sizeof(base), "/v1/sessions/%s/ports", s.id);
	/* the servers */
	out = guest_sh(s.id, "mkdir -p /tmp/www && echo hello-port > /tmp/www/index.html && "
			     "dd if=/dev/urandom of=/tmp/www/big bs=1M count=4 2>/dev/null && "
			     "httpd -p 127.0.0.1:8080 -h /tmp/www && sha256sum /tmp/www/big");
	snprintf(want, sizeof(want), "%.64s", out);
	free(out);
	assert_non_null(cmd = malloc(sizeof(srv) + 256));
	snprintf(cmd, sizeof(srv) + 256,
		 "cat > /tmp/srv.sh <<'EOF'\n%sEOF\nchmod +x /tmp/srv.sh && "
		 "(nc -ll -p 9091 -e /tmp/srv.sh </dev/null >/dev/null 2>&1 &) && echo ok",
		 srv);
	free(guest_sh(s.id, cmd));
	free(cmd);

	/* by path: a page, then 4 MiB whole */
	snprintf(path, sizeof(path), "%s/8080/index.html", base);
	r = expect("GET", path, s.control, NULL, 200, NULL);
	assert_string_equal(r.body, "hello-port\n");
	http_resp_free(&r);
	snprintf(path, sizeof(path), "%s/8080/big", base);
	r = expect("GET", path, s.control, NULL, 200, NULL);
	assert_int_equal(r.body_len, 4 << 20);
	hex_sha256(r.body, r.body_len, hex);
	assert_string_equal(hex, want);
	http_resp_free(&r);
	/* a client that does not read 64 MiB: the gateway holds about the
	 * agent's window of it, not the rest; then all of it arrives */
	{
		struct sockaddr_in sa = { .sin_family = AF_INET,
					  .sin_port = htons((uint16_t)port) };
		long before = gateway_proc_rss_kib(&gw), during;
		char req[512], buf[65536];
		uint64_t got = 0;
		ssize_t n;
		int fd;

		free(guest_sh(s.id, "dd if=/dev/zero of=/tmp/www/huge bs=1M count=64 2>/dev/null"));
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		assert_true((fd = socket(AF_INET, SOCK_STREAM, 0)) >= 0);
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &(struct timeval){ .tv_sec = 120 },
			   sizeof(struct timeval));
		assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
		n = snprintf(req, sizeof(req),
			     "GET %s/8080/huge HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
			     "Authorization: Bearer %s\r\n\r\n",
			     base, s.control);
		assert_int_equal(write(fd, req, (size_t)n), n);
		sleep(4); /* the guest sends what the window lets it */
		during = gateway_proc_rss_kib(&gw);
		print_message("gateway RSS %ld KiB, %ld KiB with 64 MiB unread\n", before, during);
		assert_true(before > 0 && during - before < 32 * 1024);
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			got += (uint64_t)n;
		close(fd);
		assert_true(got > 64u << 20 && got < (64u << 20) + 4096); /* and its head */
		free(guest_sh(s.id, "rm /tmp/www/huge"));
	}
	/* a body through to the guest; the session's token stays here */
	assert_non_null(upload = malloc(up_len));
	for (size_t i = 0; i < up_len; i++)
		upload[i] = (char)('a' + i % 26);
	snprintf(path, sizeof(path), "%s/9091/echo?x=1&y=a%%20b", base);
	assert_int_equal(http_request("127.0.0.1", port, "POST", path, s.control, upload, up_len,
				      120, &r),
			 0);
	assert_int_equal(r.status, 201);
	assert_non_null(strstr(r.body, "POST /echo?x=1&y=a%20b HTTP/1.1|"));
	assert_non_null(strstr(r.body, "x-forwarded-prefix: /v1/sessions/"));
	assert_null(strstr(r.body, s.control));
	assert_null(strcasestr(r.body, "authorization"));
	hex_sha256(upload, up_len, hex);
	assert_non_null(strstr(r.body, hex));
	http_resp_free(&r);
	free(upload);
	/* by host name, any path */
	snprintf(host, sizeof(host), "8080-%s.ports.test:%d", s.id, port);
	assert_int_equal(raw_get(host, "/index.html", s.control, &body), 200);
	assert_string_equal(body, "hello-port\n");
	free(body);
	snprintf(host, sizeof(host), "8080-%s.PORTS.test", s.id);
	assert_int_equal(raw_get(host, "/", s.control, &body), 200);
	free(body);
	/* refusals: no token, a wrong one, a view token */
	assert_int_equal(raw_get(host, "/index.html", NULL, &body), 401);
	free(body);
	assert_int_equal(raw_get(host, "/index.html", "nosuchtoken", &body), 401);
	free(body);
	assert_int_equal(raw_get(host, "/index.html", s.view, &body), 403);
	free(body);
	snprintf(path, sizeof(path), "%s/8080/index.html", base);
	r = expect("GET", path, "nosuchtoken", NULL, 401, "unauthorized");
	http_resp_free(&r);
	/* ports out of range; nobody listening */
	snprintf(path, sizeof(path), "%s/0/", base);
	r = expect("GET", path, s.control, NULL, 400, "bad_port");
	http_resp_free(&r);
	snprintf(path, sizeof(path), "%s/65536/x", base);
	r = expect("GET", path, s.control, NULL, 400, "bad_port");
	http_resp_free(&r);
	snprintf(host, sizeof(host), "70000-%s.ports.test", s.id);
	assert_int_equal(raw_get(host, "/", s.control, &body), 400);
	assert_non_null(strstr(body, "bad_port"));
	free(body);
	snprintf(path, sizeof(path), "%s/8099/", base);
	r = expect("GET", path, s.control, NULL, 502, "bad_gateway");
	assert_non_null(strstr(r.body, "Connection refused"));
	http_resp_free(&r);
	/* a public port takes requests without a token (the owner says so:
	 * "share"; the control token has it not), until it is not again */
	snprintf(path, sizeof(path), "%s/8080", base);
	r = expect("PUT", path, s.control, "{\"public\":true}", 403, "forbidden");
	http_resp_free(&r);
	r = expect("PUT", path, key, "{\"public\":1}", 400, "bad_request");
	http_resp_free(&r);
	r = expect("PUT", path, key, "{\"public\":true}", 200, NULL);
	http_resp_free(&r);
	r = expect("GET", path, s.view, NULL, 403, "forbidden");
	http_resp_free(&r);
	r = expect("GET", path, s.control, NULL, 200, NULL);
	assert_true(json_is_true(json_object_get(r.json, "public")));
	http_resp_free(&r);
	snprintf(host, sizeof(host), "8080-%s.ports.test", s.id);
	assert_int_equal(raw_get(host, "/index.html", NULL, &body), 200);
	assert_string_equal(body, "hello-port\n");
	free(body);
	snprintf(path, sizeof(path), "%s/8080/index.html", base);
	r = expect("GET", path, NULL, NULL, 200, NULL);
	http_resp_free(&r);
	snprintf(path, sizeof(path), "%s/9091/x", base); /* another port stays closed */
	r = expect("GET", path, NULL, NULL, 401, "unauthorized");
	http_resp_free(&r);
	snprintf(path, sizeof(path), "%s/8080", base);
	r = expect("PUT", path, key, "{\"public\":false}", 200, NULL);
	assert_true(json_is_false(json_object_get(r.json, "public")));
	http_resp_free(&r);
	assert_int_equal(raw_get(host, "/index.html", NULL, &body), 401);
	free(body);
	/* a link for a browser: it sets a cookie for the port alone, which
	 * the guest never sees */
	snprintf(path, sizeof(path), "%s/9091", base);
	r = expect("POST", path, s.control, NULL, 403, "forbidden");
	http_resp_free(&r);
	r = expect("POST", path, key, NULL, 201, NULL);
	{
		const char *url = json_string_value(json_object_get(r.json, "url")),
			   *hurl = json_string_value(json_object_get(r.json, "host_url"));
		char link[512], cookie[256], *head, *c;

		assert_non_null(url);
		assert_non_null(hurl);
		assert_non_null(strstr(hurl, ".ports.test:"));
		snprintf(link, sizeof(link), "%s", strstr(url, "/v1/"));
		snprintf(host, sizeof(host), "127.0.0.1:%d", port);
		assert_int_equal(raw_get_with(host, link, NULL, NULL, &body, &head), 302);
		assert_non_null(c = strcasestr(head, "set-cookie: vitrine_port="));
		assert_non_null(strstr(c, "HttpOnly"));
		snprintf(cookie, sizeof(cookie), "Cookie: a=1; %.*s; b=2\r\n",
			 (int)strcspn(c + 12, ";"), c + 12);
		free(body);
		free(head);
		snprintf(path, sizeof(path), "%s/9091/x", base);
		assert_int_equal(raw_get_with(host, path, NULL, cookie, &body, NULL), 201);
		assert_non_null(strstr(body, "cookie: a=1; b=2|"));
		assert_null(strstr(body, "vitrine_port"));
		free(body);
		/* by host name, the same cookie */
		snprintf(host, sizeof(host), "9091-%s.ports.test", s.id);
		assert_int_equal(raw_get_with(host, "/y", NULL, cookie, &body, NULL), 201);
		free(body);
		/* another port's, or a forged one, is nothing */
		snprintf(host, sizeof(host), "8080-%s.ports.test", s.id);
		assert_int_equal(raw_get_with(host, "/", NULL, cookie, &body, NULL), 401);
		free(body);
		snprintf(host, sizeof(host), "9091-%s.ports.test", s.id);
		assert_int_equal(raw_get_with(host, "/", NULL,
					      "Cookie: vitrine_port=9999999999.00\r\n", &body,
					      NULL),
				 401);
		free(body);
		assert_int_equal(raw_get(host, "/.vitrine-port-auth?t=1.2", NULL, &body), 401);
		free(body);
	}
	http_resp_free(&r);
	/* another domain's name is no port's: the gateway's own answer */
	snprintf(host, sizeof(host), "8080-%s.other.test", s.id);
	assert_int_equal(raw_get(host, "/healthz", NULL, &body), 200);
	assert_non_null(strstr(body, "\"status\""));
	free(body);
	snprintf(path, sizeof(path), "/v1/sessions/%s", s.id);
	r = expect("DELETE", path, key, NULL, 200, NULL);
	http_resp_free(&r);
}

static void expect_text(int fd, const char *text)
{
	struct ws_msg m;

	assert_int_equal(ws_recv_message(fd, 60000, &m), 0);
	assert_int_equal(m.opcode, WS_TEXT);
	assert_string_equal((char *)m.data, text);
	ws_msg_free(&m);
}

/* Expects the server to close fd with code. */
static void expect_close(int fd, int code)
{
	struct ws_msg m;

	assert_int_equal(ws_recv_message(fd, 60000, &m), 0);
	assert_int_equal(m.opcode, WS_CLOSE);
	if (m.close_code != code)
		fail_msg("closed with %d (%s), not %d", m.close_code,
			 m.len > 2 ? (char *)m.data + 2 : "", code);
	ws_msg_free(&m);
	close(fd);
}

/* A guest port's WebSockets: a busybox shell server on 9092 in the tiny
 * guest (the handshake, a greeting, each short frame echoed, "bye" closed
 * with 4001; on /big one 64 MiB message), by path and by host name with
 * the session's token, with a link's cookie (and not from another page's
 * Origin) and as a public port; a wrong token, none and a view token
 * refused with their HTTP statuses; a port nobody listens on and a server
 * that does not take the upgrade (busybox httpd) close with 1011; a client
 * that reads nothing of 64 MiB holds the gateway to about the window; at
 * most 64 sockets and requests per session (429). */
static void test_guest_port_websockets(void **state)
{
	static const char srv[] =
		"#!/bin/sh\n"
		"key=''; target=''\n"
		"while IFS= read -r line; do\n"
		"  line=$(printf '%s' \"$line\" | tr -d '\\r')\n"
		"  [ -z \"$line\" ] && break\n"
		"  [ -z \"$target\" ] && target=$line\n"
		"  case \"$line\" in [Ss]ec-[Ww]eb[Ss]ocket-[Kk]ey:*) key=${line#*: };; esac\n"
		"done\n"
		"hex=$(printf '%s258EAFA5-E914-47DA-95CA-C5AB0DC85B11' \"$key\" | sha1sum | "
		"cut -c1-40)\n"
		"acc=$(printf \"$(echo \"$hex\" | sed 's/../\\\\x&/g')\" | base64)\n"
		"printf 'HTTP/1.1 101 Switching Protocols\\r\\nUpgrade: websocket\\r\\n"
		"Connection: Upgrade\\r\\nSec-WebSocket-Accept: %s\\r\\n\\r\\n' \"$acc\"\n"
		"case \"$target\" in *' /big '*)\n"
		"  printf '\\202\\177\\0\\0\\0\\0\\4\\0\\0\\0'; head -c 67108864 /dev/zero; exit 0;;\n"
		"esac\n"
		"printf '\\201\\005hello'\n"
		"while :; do\n"
		"  set -- $(dd bs=1 count=2 2>/dev/null | od -An -tu1)\n"
		"  [ $# -eq 2 ] || exit 0\n"
		"  op=$(($1 & 15)); len=$(($2 & 127))\n"
		"  set -- $(dd bs=1 count=$((len + 4)) 2>/dev/null | od -An -tu1 -v)\n"
		"  pay=$(echo \"$@\" | awk '{ s = \"\"; for (i = 5; i <= NF; i++) "
		"s = s sprintf(\"\\\\%03o\", xor($i, $((i - 5) % 4 + 1))); print s }')\n"
		"  if [ \"$pay\" = '\\142\\171\\145' ]; then printf '\\210\\005\\017\\241bye'; "
		"exit 0; fi\n"
		"  printf \"\\\\$(printf %o $((128 | op)))\\\\$(printf %o $len)$pay\"\n"
		"  [ $op -eq 8 ] && exit 0\n"
		"done\n";
	char base[160], path[256], host[128], extra[512], *cmd;
	struct gateway_session s;
	struct http_resp r;
	struct ws_msg m;
	int fd, st;

	(void)state;
	assert_int_equal(gateway_proc_create_session(&gw, "{\"image\":\"tiny\"}", 300, &s), 0);
	snprintf(base, sizeof(base), "/v1/sessions/%s/ports", s.id);
	assert_non_null(cmd = malloc(sizeof(srv) + 256));
	snprintf(cmd, sizeof(srv) + 256,
		 "cat > /tmp/ws.sh <<'EOF'\n%sEOF\nchmod +x /tmp/ws.sh && mkdir -p /tmp/www && "
		 "httpd -p 127.0.0.1:8080 -h /tmp/www && "
		 "(nc -ll -p 9092 -e /tmp/ws.sh </dev/null >/dev/null 2>&1 &) && echo ok",
		 srv);
	free(guest_sh(s.id, cmd));
	free(cmd);

	/* refusals, as HTTP answers to the upgrade */
	snprintf(path, sizeof(path), "%s/9092/chat", base);
	assert_int_equal(ws_connect(port, path, "wrong", NULL, &st), -1);
	assert_int_equal(st, 401);
	assert_int_equal(ws_connect(port, path, NULL, NULL, &st), -1);
	assert_int_equal(st, 401);
	assert_int_equal(ws_connect(port, path, s.view, NULL, &st), -1);
	assert_int_equal(st, 403);
	snprintf(path, sizeof(path), "%s/70000/chat", base);
	assert_int_equal(ws_connect(port, path, s.control, NULL, &st), -1);
	assert_int_equal(st, 400);
	snprintf(path, sizeof(path), "/v1/sessions/vmnosuch/ports/9092/chat");
	assert_int_equal(ws_connect(port, path, s.control, NULL, &st), -1);
	assert_true(st == 401 || st == 404);

	/* by path with the token: the greeting, text and binary echoed, the
	 * server's close with its code */
	snprintf(path, sizeof(path), "%s/9092/chat", base);
	assert_true((fd = ws_connect(port, path, s.control, NULL, &st)) >= 0);
	expect_text(fd, "hello");
	assert_int_equal(ws_send_text(fd, "ping-1"), 0);
	expect_text(fd, "ping-1");
	assert_int_equal(ws_send(fd, WS_BINARY, "\0\1\377\0", 4), 0);
	assert_int_equal(ws_recv_message(fd, 60000, &m), 0);
	assert_int_equal(m.opcode, WS_BINARY);
	assert_int_equal(m.len, 4);
	assert_memory_equal(m.data, "\0\1\377\0", 4);
	ws_msg_free(&m);
	assert_int_equal(ws_send_text(fd, "bye"), 0);
	expect_close(fd, 4001);

	/* by host name: the same, and a wrong token refused */
	snprintf(host, sizeof(host), "9092-%s.ports.test", s.id);
	snprintf(extra, sizeof(extra), "Authorization: Bearer %s\r\n", s.control);
	assert_true((fd = ws_connect_with(port, host, "/any/path?x=1", extra, &st)) >= 0);
	expect_text(fd, "hello");
	assert_int_equal(ws_send_text(fd, "by-host"), 0);
	expect_text(fd, "by-host");
	close(fd);
	assert_int_equal(ws_connect_with(port, host, "/", "Authorization: Bearer nope\r\n", &st),
			 -1);
	assert_int_equal(st, 401);

	/* a link's cookie: from no page or the port's own, not from another's */
	snprintf(path, sizeof(path), "%s/9092", base);
	r = expect("POST", path, key, NULL, 201, NULL);
	{
		const char *url = json_string_value(json_object_get(r.json, "url"));
		char own[64], *body, *head, *c;

		snprintf(own, sizeof(own), "127.0.0.1:%d", port);
		assert_int_equal(raw_get_with(own, strstr(url, "/v1/"), NULL, NULL, &body, &head),
				 302);
		assert_non_null(c = strcasestr(head, "set-cookie: vitrine_port="));
		snprintf(path, sizeof(path), "%s/9092/chat", base);
		snprintf(extra, sizeof(extra), "Cookie: %.*s\r\n", (int)strcspn(c + 12, ";"),
			 c + 12);
		assert_true((fd = ws_connect_with(port, NULL, path, extra, &st)) >= 0);
		expect_text(fd, "hello");
		close(fd);
		snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra),
			 "Origin: http://127.0.0.1:%d\r\n", port);
		assert_true((fd = ws_connect_with(port, NULL, path, extra, &st)) >= 0);
		expect_text(fd, "hello");
		close(fd);
		snprintf(extra, sizeof(extra), "Cookie: %.*s\r\nOrigin: http://evil.test\r\n",
			 (int)strcspn(c + 12, ";"), c + 12);
		assert_int_equal(ws_connect_with(port, NULL, path, extra, &st), -1);
		assert_int_equal(st, 403);
		free(body);
		free(head);
	}
	http_resp_free(&r);

	/* a public port takes no token */
	snprintf(path, sizeof(path), "%s/9092", base);
	r = expect("PUT", path, key, "{\"public\":true}", 200, NULL);
	http_resp_free(&r);
	snprintf(path, sizeof(path), "%s/9092/chat", base);
	assert_true((fd = ws_connect(port, path, NULL, NULL, &st)) >= 0);
	expect_text(fd, "hello");
	close(fd);
	snprintf(path, sizeof(path), "%s/9092", base);
	r = expect("PUT", path, key, "{\"public\":false}", 200, NULL);
	http_resp_free(&r);

	/* nobody listening; a server that does not take the upgrade */
	snprintf(path, sizeof(path), "%s/9099/", base);
	assert_true((fd = ws_connect(port, path, s.control, NULL, &st)) >= 0);
	expect_close(fd, 1011);
	snprintf(path, sizeof(path), "%s/8080/", base);
	assert_true((fd = ws_connect(port, path, s.control, NULL, &st)) >= 0);
	expect_close(fd, 1011);

	/* a client that reads nothing of a 64 MiB message: the gateway holds
	 * about the agent's window of it; then all of it arrives */
	{
		long before = gateway_proc_rss_kib(&gw), during;
		uint64_t got = 0;

		snprintf(path, sizeof(path), "%s/9092/big", base);
		assert_true((fd = ws_connect(port, path, s.control, NULL, &st)) >= 0);
		sleep(4); /* the guest sends what the window lets it */
		during = gateway_proc_rss_kib(&gw);
		print_message("gateway RSS %ld KiB, %ld KiB with a 64 MiB message unread\n", before,
			      during);
		assert_true(before > 0 && during - before < 32 * 1024);
		m.fin = 0;
		while (!m.fin) {
			assert_int_equal(ws_recv(fd, 120000, &m), 0);
			assert_true(m.opcode == WS_BINARY || m.opcode == 0);
			got += m.len;
			ws_msg_free(&m);
		}
		assert_int_equal(got, 64u << 20);
		close(fd);
	}
	/* connections per session: sockets to a server that answers nothing
	 * until 429, when 64 of them are open (one the gateway gave up on, a
	 * guest that could not take it, is no longer one); one closed makes
	 * room */
	{
		int fds[80], n, alive = 0, spare = -1;

		free(guest_sh(s.id, "(nc -ll -p 9093 -e sleep 600 </dev/null >/dev/null 2>&1 &) && "
				    "echo ok"));
		snprintf(path, sizeof(path), "%s/9093/", base);
		for (n = 0; n < 80 && (fds[n] = ws_connect(port, path, s.control, NULL, &st)) >= 0;
		     n++)
			;
		assert_true(n < 80);
		assert_int_equal(st, 429);
		for (int i = 0; i < n; i++) {
			struct pollfd pfd = { .fd = fds[i], .events = POLLIN };

			if (poll(&pfd, 1, 0) == 0) {
				alive++;
				spare = i;
			}
		}
		assert_int_equal(alive, 64);
		snprintf(path, sizeof(path), "%s/8080/", base); /* HTTP counts with them */
		r = expect("GET", path, s.control, NULL, 429, "too_many_connections");
		http_resp_free(&r);
		close(fds[spare]);
		snprintf(path, sizeof(path), "%s/9093/", base);
		for (int i = 0;
		     i < 100 && (fds[spare] = ws_connect(port, path, s.control, NULL, &st)) < 0;
		     i++) {
			assert_int_equal(st, 429); /* until the gateway saw the close */
			usleep(50 * 1000);
		}
		assert_true(fds[spare] >= 0);
		for (int i = 0; i < n; i++)
			close(fds[i]);
	}
	snprintf(path, sizeof(path), "/v1/sessions/%s", s.id);
	r = expect("DELETE", path, key, NULL, 200, NULL);
	http_resp_free(&r);
}

static void test_limits_and_expiry(void **state)
{
	struct http_resp s[3], r;
	char path[128];

	(void)state;
	for (int i = 0; i < 3; i++)
		s[i] = expect("POST", "/v1/sessions", key, "{\"image\":\"tiny\",\"timeout_s\":3}",
			      201, NULL);
	r = expect("POST", "/v1/sessions", key, "{\"image\":\"tiny\"}", 429, "too_many_sessions");
	http_resp_free(&r);
	snprintf(path, sizeof(path), "/v1/sessions/%s",
		 json_string_value(json_object_get(s[0].json, "id")));
	/* Alive (200) until its 3 s are up, then gone (404). */
	for (int i = 0; i < 100; i++) {
		assert_int_equal(http_request("127.0.0.1", port, "GET", path, key, NULL, 0, 60, &r),
				 0);
		if (r.status == 404)
			break;
		assert_int_equal(r.status, 200);
		http_resp_free(&r);
		usleep(100 * 1000);
	}
	assert_int_equal(r.status, 404);
	assert_string_equal(http_error_code(&r), "not_found");
	http_resp_free(&r);
	for (int i = 0; i < 50 && qemu_running(); i++)
		usleep(100 * 1000);
	assert_int_equal(qemu_running(), 0);
	for (int i = 0; i < 3; i++)
		http_resp_free(&s[i]);
}

static void test_sigterm_stops_every_guest(void **state)
{
	struct http_resp r;

	(void)state;
	r = expect("POST", "/v1/sessions", key, "{\"image\":\"tiny\"}", 201, NULL);
	http_resp_free(&r);
	/* Its QEMU starts on a job thread once the POST has answered. */
	for (int i = 0; i < 100 && !qemu_running(); i++)
		usleep(50 * 1000);
	assert_int_equal(qemu_running(), 1);
	/* Count the guests before stop removes the run base. */
	kill(gw.pid, SIGTERM);
	for (int i = 0; i < 100 && qemu_running(); i++)
		usleep(50 * 1000);
	assert_int_equal(qemu_running(), 0);
	assert_int_equal(gateway_proc_stop(&gw), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_health_and_auth_negatives),
		cmocka_unit_test(test_malformed_requests),
		cmocka_unit_test(test_session_lifecycle_and_tokens),
		cmocka_unit_test(test_boot_phases),
		cmocka_unit_test(test_guest_ports),
		cmocka_unit_test(test_guest_port_websockets),
		cmocka_unit_test(test_limits_and_expiry),
		cmocka_unit_test(test_sigterm_stops_every_guest),
	};

	return cmocka_run_group_tests_name("gateway API", tests, setup, teardown);
}
