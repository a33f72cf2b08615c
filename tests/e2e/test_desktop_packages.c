/* tests/e2e/test_desktop_packages.c: packages installed at run time, inside
 * a desktop session, through the egress proxy (issue 16): this host serves
 * an apt repository, a pip index and an npm tarball
 * (tests/e2e/repos/make.sh) on 127.0.0.1, which the operator maps to the
 * name pkgs.test (--egress-map). Without egress rules `apt-get install`,
 * `pip install` and `npm install` fail and the connection log shows the
 * refusals; with pkgs.test allowed, all three install and what they
 * installed runs. One desktop session, restored from the shared template
 * (tests/lib/e2e_template.h), serves the group. */
#include "common/http_client.h"
#include "tests/lib/e2e_template.h"
#include "tests/lib/gateway_proc.h"
#include "tests/lib/net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

static struct gateway_proc gw;
static char tpl[64]; /* the shared desktop template */
static char base[128], ctl[64], repos[64];
static int repo_port;
static pid_t repo_pid = -1;

/* Whether something accepts connections on 127.0.0.1:port. */
static bool listening(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	bool ok;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ok = fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

/* Makes the repositories in a fresh folder and serves it over HTTP with
 * python3's http.server. Returns 0, or -1 after printing why. */
static int start_repos(void)
{
	char cmd[256], port[16];

	snprintf(repos, sizeof(repos), "/tmp/vitrine-repos-XXXXXX");
	if (!mkdtemp(repos))
		return perror("mkdtemp"), -1;
	snprintf(cmd, sizeof(cmd), "tests/e2e/repos/make.sh %s/www", repos);
	if (system(cmd) != 0) {
		fprintf(stderr, "%s failed\n", cmd);
		return -1;
	}
	repo_port = net_free_port();
	snprintf(port, sizeof(port), "%d", repo_port);
	snprintf(cmd, sizeof(cmd), "%s/www", repos);
	if ((repo_pid = fork()) == 0) {
		execlp("python3", "python3", "-m", "http.server", "--bind", "127.0.0.1",
		       "--directory", cmd, port, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 100 && repo_pid > 0; i++) {
		if (listening(repo_port))
			return 0;
		usleep(100 * 1000);
	}
	fprintf(stderr, "the repository server did not listen on %d\n", repo_port);
	return -1;
}

static int setup(void **state)
{
	const char *args[] = { "--egress-map", "pkgs.test=127.0.0.1", NULL };
	char body[160];
	struct gateway_session created;

	(void)state;
	if (start_repos() < 0 || gateway_proc_start(&gw, args) < 0)
		return -1;
	if (e2e_template_get(&gw, tpl, sizeof(tpl), NULL) < 0)
		return -1;
	snprintf(body, sizeof(body), "{\"template\":\"%s\"}", tpl);
	if (gateway_proc_create_session(&gw, body, 300, &created) < 0)
		return -1;
	snprintf(base, sizeof(base), "/v1/sessions/%s", created.id);
	snprintf(ctl, sizeof(ctl), "%s", created.control);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	if (repo_pid > 0) {
		kill(repo_pid, SIGTERM);
		waitpid(repo_pid, NULL, 0);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", repos);
	if (repos[0] && system(cmd) != 0)
		fprintf(stderr, "%s failed\n", cmd);
	gateway_proc_delete_sessions(&gw); /* a template in use cannot go */
	e2e_template_release(&gw, tpl);
	return gateway_proc_stop(&gw) == 0 ? 0 : -1;
}

/* method base+sub with body and token; fails unless the status is want. */
static json_t *call_as(const char *token, const char *method, const char *sub, const char *body,
		       int want)
{
	char url[512];
	struct http_resp r;
	json_t *j;

	snprintf(url, sizeof(url), "%s%s", base, sub);
	if (http_request("127.0.0.1", gw.port, method, url, token, body, body ? strlen(body) : 0,
			 400, &r) < 0 ||
	    r.status != want)
		fail_msg("%s %s %s -> %d %.400s (want %d)", method, url, body ? body : "", r.status,
			 r.body ? r.body : "", want);
	j = json_incref(r.json);
	http_resp_free(&r);
	return j;
}

/* Runs shell line cmd in the guest (as root with root set: the operator
 * key) with up to 300 s; its exit code, and its stdout and stderr in out
 * (caller frees). */
static int sh(bool root, const char *cmd, char **out)
{
	json_t *body = json_pack("{s:s, s:i, s:s}", "cmd", cmd, "timeout", 300, "user",
				 root ? "root" : "vitrine");
	char *text = json_dumps(body, JSON_COMPACT);
	json_t *j = call_as(root ? gw.key : ctl, "POST", "/exec", text, 200);
	json_t *code = json_object_get(j, "exit_code");
	int rc = json_is_integer(code) ? (int)json_integer_value(code) : -1;

	const char *o = json_string_value(json_object_get(j, "stdout"));
	const char *e = json_string_value(json_object_get(j, "stderr"));

	if (asprintf(out, "%s%s", o ? o : "", e ? e : "") < 0)
		*out = NULL;
	free(text);
	json_decref(body);
	json_decref(j);
	return rc;
}

/* The three installs, each a shell line with the repositories' address
 * filled in, ending with what it installed printing its greeting. pip's
 * venv is made once, by the first run (it costs most of a minute here). */
#define APT_LIST "/etc/apt/sources.list.d/vitrine-test.list"
#define APT_OPTS "-o Dir::Etc::sourcelist=" APT_LIST " -o Dir::Etc::sourceparts=-"
static void install_lines(char apt[512], char pip[512], char npm[512])
{
	snprintf(apt, 512,
		 "echo 'deb [trusted=yes] http://pkgs.test:%d/apt ./' > " APT_LIST " && "
		 "apt-get -q " APT_OPTS " -o APT::Update::Error-Mode=any update && "
		 "apt-get -q -y " APT_OPTS " install vitrine-hello && vitrine-hello",
		 repo_port);
	snprintf(
		pip, 512,
		"{ [ -x /tmp/pv/bin/pip ] || python3 -m venv /tmp/pv; } && /tmp/pv/bin/pip install -q "
		"--no-cache-dir --retries 0 --timeout 20 --index-url http://pkgs.test:%d/simple "
		"--trusted-host pkgs.test vitrine-hello && "
		"/tmp/pv/bin/python -c 'import vitrine_hello; print(vitrine_hello.GREETING)'",
		repo_port);
	snprintf(npm, 512,
		 "rm -rf /tmp/np && mkdir /tmp/np && cd /tmp/np && "
		 "npm install --no-audit --no-fund --fetch-retries=0 "
		 "http://pkgs.test:%d/npm/vitrine-hello-1.0.0.tgz && "
		 "node -e 'console.log(require(\"vitrine-hello\"))'",
		 repo_port);
}

/* How many of the session's logged connections went to pkgs.test with
 * verdict (allowed or denied). */
static int logged(const char *verdict)
{
	json_t *j = call_as(gw.key, "GET", "/egress/log", NULL, 200), *e;
	size_t i;
	int n = 0;

	json_array_foreach(json_object_get(j, "entries"), i, e)
	{
		const char *host = json_string_value(json_object_get(e, "host"));
		const char *v = json_string_value(json_object_get(e, "verdict"));

		n += host && v && !strcmp(host, "pkgs.test") && !strcmp(v, verdict);
	}
	json_decref(j);
	return n;
}

static void test_installs_refused_without_rules(void **state)
{
	char apt[512], pip[512], npm[512], *out;

	(void)state;
	install_lines(apt, pip, npm);
	if (sh(true, apt, &out) == 0 || strstr(out, "vitrine-hello apt"))
		fail_msg("apt without egress rules: %s", out);
	free(out);
	if (sh(false, pip, &out) == 0 || strstr(out, "vitrine-hello pip"))
		fail_msg("pip without egress rules: %s", out);
	free(out);
	if (sh(false, npm, &out) == 0 || strstr(out, "vitrine-hello npm"))
		fail_msg("npm without egress rules: %s", out);
	free(out);
	assert_true(logged("denied") >= 3);
	assert_int_equal(logged("allowed"), 0);
}

static void test_installs_through_the_proxy(void **state)
{
	char apt[512], pip[512], npm[512], rules[96], *out;

	(void)state;
	install_lines(apt, pip, npm);
	snprintf(rules, sizeof(rules), "{\"allow\":[\"pkgs.test:%d\"]}", repo_port);
	json_decref(call_as(gw.key, "PUT", "/egress", rules, 200));
	if (sh(true, apt, &out) != 0 || !strstr(out, "vitrine-hello apt\n"))
		fail_msg("apt: %s", out);
	free(out);
	if (sh(false, pip, &out) != 0 || !strstr(out, "vitrine-hello pip\n"))
		fail_msg("pip: %s", out);
	free(out);
	if (sh(false, npm, &out) != 0 || !strstr(out, "vitrine-hello npm\n"))
		fail_msg("npm: %s", out);
	free(out);
	/* apt's index and package, pip's index and wheel, npm's tarball */
	assert_true(logged("allowed") >= 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_installs_refused_without_rules),
		cmocka_unit_test(test_installs_through_the_proxy),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
