/* tests/integration/test_cli_client.c: the gateway's command-line clients
 * (`vitrine create`, `ls`, `show`, `rm`, `screenshot`, `act`) against a real
 * `vitrine serve` on loopback with tiny guests: a session's whole life, the
 * screenshots (checked by magic and pixel size) and every failure path with
 * its message and exit status (2 usage, 1 failure). */
#include "common/fsutil.h"
#include "tests/lib/gateway_proc.h"
#include "tests/lib/shell.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <pty.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

static struct gateway_proc gw;
static char url[64], tmp[64];
static const char *key_file;

static const char *bin(void)
{
	return getenv("VITRINE_BIN") ? getenv("VITRINE_BIN") : "build/vitrine";
}

static int qemu_running(void)
{
	return gateway_proc_guests(&gw);
}

static int setup(void **state)
{
	static const char *const args[] = { "--max-sessions", "2", NULL };

	(void)state;
	snprintf(tmp, sizeof(tmp), "/tmp/vitrine-cc-files-%d", (int)getpid());
	fs_mkdir_p(tmp, 0700);
	if (gateway_proc_start(&gw, args) < 0)
		return -1;
	key_file = gw.key_file;
	/* The clients find the gateway and the key the way users' shells would. */
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", gw.port);
	setenv("VITRINE_URL", url, 1);
	setenv("VITRINE_API_KEY", gw.key, 1);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	gateway_proc_stop(&gw);
	fs_rm_rf(tmp);
	return 0;
}

/* Runs `vitrine ARGS` through the shell; returns its exit status and puts
 * its stdout (and stderr, when with_stderr) in out. */
static int vitrine(const char *args, bool with_stderr, char *out, size_t len)
{
	char cmd[2048];

	snprintf(cmd, sizeof(cmd), "%s %s %s", bin(), args, with_stderr ? "2>&1" : "2>/dev/null");
	return shell_run(cmd, out, len);
}

/* Checks the exit status of `vitrine ARGS` and that its output has needle. */
static void expect(const char *args, int status, const char *needle)
{
	char out[16384];
	int st = vitrine(args, true, out, sizeof(out));

	if (st != status || !strstr(out, needle))
		fail_msg("`vitrine %s` exited %d (want %d) saying:\n%s(want '%s')", args, st,
			 status, out, needle);
}

/* Runs `vitrine ARGS`, which must succeed, and parses its stdout as JSON. */
static json_t *expect_json(const char *args)
{
	char out[16384];
	json_error_t jerr;
	json_t *j;
	int st = vitrine(args, false, out, sizeof(out));

	if (st != 0)
		fail_msg("`vitrine %s` exited %d", args, st);
	j = json_loads(out, 0, &jerr);
	if (!j)
		fail_msg("`vitrine %s` printed no JSON (%s):\n%s", args, jerr.text, out);
	return j;
}

/* Reads a PNG's or JPEG's pixel size from the file; fails the test if the
 * file is neither. Returns "png" or "jpeg". */
static const char *image_file(const char *path, int *w, int *h)
{
	unsigned char *d;
	char *buf = NULL;
	size_t len = 0;

	if (fs_read_file(path, 64u << 20, &buf, &len) < 0)
		fail_msg("cannot read %s", path);
	d = (unsigned char *)buf;
	if (len > 24 && !memcmp(d, "\x89PNG\r\n\x1a\n", 8) && !memcmp(d + 12, "IHDR", 4)) {
		*w = d[18] << 8 | d[19];
		*h = d[22] << 8 | d[23];
		free(buf);
		return "png";
	}
	if (len > 4 && !memcmp(d, "\xff\xd8\xff", 3)) {
		for (size_t i = 2; i + 9 <= len && d[i] == 0xff;
		     i += 2 + (size_t)(d[i + 2] << 8 | d[i + 3]))
			if (d[i + 1] >= 0xc0 && d[i + 1] <= 0xcf && d[i + 1] != 0xc4 &&
			    d[i + 1] != 0xc8 && d[i + 1] != 0xcc) {
				*h = d[i + 5] << 8 | d[i + 6];
				*w = d[i + 7] << 8 | d[i + 8];
				free(buf);
				return "jpeg";
			}
	}
	free(buf);
	fail_msg("%s (%zu bytes) is neither PNG nor JPEG", path, len);
	return NULL;
}

/* Creates a ready 800x600 tiny session; returns its id (static storage). */
static const char *create_tiny(void)
{
	static char id[64];
	json_t *s = expect_json("create --image tiny --width 800 --height 600 --wait");

	assert_string_equal(json_string_value(json_object_get(s, "status")), "ready");
	assert_int_equal(json_integer_value(json_object_get(s, "width")), 800);
	assert_non_null(
		json_string_value(json_object_get(json_object_get(s, "tokens"), "control")));
	snprintf(id, sizeof(id), "%s", json_string_value(json_object_get(s, "id")));
	json_decref(s);
	assert_int_equal(qemu_running(), 1);
	return id;
}

static void test_usage_errors(void **state)
{
	(void)state;
	expect("create --help", 0, "usage: vitrine create");
	expect("create extra", 2, "unexpected argument 'extra'");
	expect("create --width 5", 2, "--width must be a whole number in 320..3840");
	expect("create --bogus", 2, "usage: vitrine create");
	expect("ls extra", 2, "unexpected argument 'extra'");
	expect("ls --gateway https://127.0.0.1:1", 2,
	       "the gateway must be given as http://HOST:PORT");
	expect("ls --gateway http://127.0.0.1:99999", 2, "must be a whole number in 1..65535");
	expect("show", 2, "a session id is required");
	expect("show a/b", 2, "'a/b' is not a session id");
	expect("rm abc1 abc2", 2, "unexpected argument 'abc2'");
	expect("screenshot abc1", 2, "-o FILE is required");
	expect("screenshot abc1 -o x.png --format gif", 2, "--format must be jpeg or png");
	expect("screenshot abc1 -o x.jpg --quality 0", 2,
	       "--quality must be a whole number in 1..100");
	expect("act abc1", 2, "a session id and an action are required");
	expect("act abc1 '{\"action\":' ", 2, "the action is not valid JSON");
	expect("act abc1 '[1,2]'", 2, "the action must be a JSON object");
	expect("act --help", 0, "usage: vitrine act");
	/* every client's help has the one pair of gateway rows */
	expect("template save --help", 0, "  --gateway URL        the gateway (default");
	expect("template build --help", 0, "  -f, --file FILE      the recipe");
	expect("template build -f r.json more", 2, "unexpected argument 'more'");
	expect("template gc --older-than 2w", 2, "bad duration '2w'");
}

static void test_no_server_and_bad_keys(void **state)
{
	char args[256];

	(void)state;
	expect("ls --gateway http://127.0.0.1:1", 1, "connection refused");
	expect("show abc1 --gateway 127.0.0.1:1", 1,
	       "cannot connect to the gateway at 127.0.0.1:1");
	expect("ls --api-key-file /nonexistent/key", 1,
	       "cannot read the API key: /nonexistent/key: no such file");
	/* Without $VITRINE_API_KEY the default key file is used; here it is missing. */
	unsetenv("VITRINE_API_KEY");
	setenv("VITRINE_HOME", "/nonexistent", 1);
	expect("ls", 1, "no API key: set VITRINE_API_KEY or pass --api-key-file FILE");
	snprintf(args, sizeof(args), "ls --api-key-file %s", key_file);
	expect(args, 0, "ID");
	setenv("VITRINE_API_KEY", "not-the-key-not-the-key", 1);
	expect("ls", 1, "unauthorized: the token is not valid here (HTTP 401)");
	setenv("VITRINE_API_KEY", gw.key, 1);
	unsetenv("VITRINE_HOME");
}

/* vitrine key create|ls|rm: the key alone on stdout, usable at once (also
 * by the CLI itself), listed without its secret, refused once revoked; an
 * API key cannot manage keys; usage errors exit 2. */
static void test_api_keys(void **state)
{
	char key[256], out[16384], args[512], id[32] = "";
	json_t *j, *k;
	size_t i;

	(void)state;
	assert_int_equal(vitrine("key create --name 'cli test'", false, key, sizeof(key)), 0);
	key[strcspn(key, "\n")] = '\0';
	assert_int_equal(strlen(key), 44);
	assert_memory_equal(key, "e2b_", 4);
	j = expect_json("key ls --json");
	json_array_foreach(json_object_get(j, "keys"), i,
			   k) if (!strcmp(json_string_value(json_object_get(k, "name")) ?: "",
					  "cli test"))
		snprintf(id, sizeof(id), "%s", json_string_value(json_object_get(k, "id")));
	json_decref(j);
	assert_int_equal(strlen(id), 12);
	assert_int_equal(vitrine("key ls", false, out, sizeof(out)), 0);
	assert_non_null(strstr(out, id));
	assert_non_null(strstr(out, "cli test"));
	assert_null(strstr(out, key));
	/* The new key drives the CLI; it may not make keys. */
	setenv("VITRINE_API_KEY", key, 1);
	expect("ls", 0, "ID");
	expect("key create", 1, "forbidden: API keys are managed with the operator key");
	setenv("VITRINE_API_KEY", gw.key, 1);
	snprintf(args, sizeof(args), "key rm %s", id);
	expect(args, 0, "revoked");
	expect(args, 1, "unknown_key");
	setenv("VITRINE_API_KEY", key, 1);
	expect("ls", 1, "unauthorized");
	setenv("VITRINE_API_KEY", gw.key, 1);
	expect("key", 2, "a subcommand is required");
	expect("key make", 2, "unknown subcommand 'make'");
	expect("key rm", 2, "a key id is required");
	expect("key ls --name x", 2, "usage: vitrine key");
	expect("key ls --name x", 2, "--name goes with key create only");
	expect("key create --name 'bad/name'", 1, "invalid_argument");
}

/* vitrine project create|ls|show|set|rm and key create --project: a
 * project's key lists its own (none), cannot manage projects; an empty
 * project goes with its key. */
static void test_projects(void **state)
{
	char key[256];
	json_t *j;

	(void)state;
	expect("project create cli-p --sessions 2 --vcpus 4", 0, "cli-p");
	assert_int_equal(vitrine("key create --project cli-p --name agent", false, key,
				 sizeof(key)),
			 0);
	key[strcspn(key, "\n")] = '\0';
	assert_memory_equal(key, "e2b_", 4);
	expect("project ls", 0, "0/2");
	expect("key ls --project cli-p", 0, "cli-p");
	j = expect_json("project show cli-p --json");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "quota"), "vcpus")),
			 4);
	assert_int_equal(json_integer_value(json_object_get(j, "keys")), 1);
	json_decref(j);
	expect("project set cli-p --vcpus none --allow-root", 0, "yes");
	setenv("VITRINE_API_KEY", key, 1);
	j = expect_json("ls --json");
	assert_int_equal(json_array_size(json_object_get(j, "sessions")), 0);
	json_decref(j);
	expect("project ls", 1, "forbidden");
	setenv("VITRINE_API_KEY", gw.key, 1);
	expect("project create cli-p", 1, "project_exists");
	expect("project set cli-p --sessions many", 2, "--sessions takes a whole number");
	expect("project rm cli-p", 0, "removed cli-p (1 keys revoked)");
	setenv("VITRINE_API_KEY", key, 1);
	expect("ls", 1, "unauthorized");
	setenv("VITRINE_API_KEY", gw.key, 1);
	expect("project show cli-p", 1, "unknown_project");
}

static void test_session_lifecycle(void **state)
{
	const char *id;
	char args[512], out[16384];
	json_t *j;

	(void)state;
	id = create_tiny();
	assert_int_equal(vitrine("ls", false, out, sizeof(out)), 0);
	if (!strstr(out, id) || !strstr(out, "ready") || !strstr(out, "800x600"))
		fail_msg("ls does not list %s:\n%s", id, out);
	j = expect_json("ls --json");
	assert_int_equal(json_array_size(json_object_get(j, "sessions")), 1);
	json_decref(j);

	snprintf(args, sizeof(args), "show %s", id);
	j = expect_json(args);
	assert_string_equal(json_string_value(json_object_get(j, "id")), id);
	assert_null(json_object_get(j, "tokens"));
	json_decref(j);
	expect("show doesnotexist0", 1, "not_found: no such session (HTTP 404)");

	snprintf(args, sizeof(args),
		 "act %s '{\"action\":\"left_click\",\"coordinate\":[10,20],\"id\":7}'", id);
	j = expect_json(args);
	assert_true(json_is_true(json_object_get(j, "ok")));
	assert_string_equal(json_string_value(json_object_get(j, "action")), "left_click");
	assert_int_equal(json_integer_value(json_object_get(j, "id")), 7);
	json_decref(j);
	/* "-" reads the action from stdin. */
	snprintf(args, sizeof(args), "%s/move.json", tmp);
	assert_int_equal(fs_write_file(args, "{\"action\":\"mouse_move\",\"coordinate\":[1,1]}",
				       42),
			 0);
	snprintf(args, sizeof(args), "act %s - < %s/move.json", id, tmp);
	expect(args, 0, "\"action\": \"mouse_move\"");
	/* The gateway's own validation reaches the user with its code. */
	snprintf(args, sizeof(args), "act %s '{\"action\":\"teleport\"}'", id);
	expect(args, 1, "unknown_action");
	snprintf(args, sizeof(args), "act %s '{\"action\":\"left_click\",\"coordinate\":[5000,5]}'",
		 id);
	expect(args, 1, "out_of_range");
	expect("act doesnotexist0 '{\"action\":\"left_click\"}'", 1, "not_found");

	snprintf(args, sizeof(args), "rm %s", id);
	expect(args, 0, "deleted");
	expect(args, 1, "not_found: no such session");
	snprintf(args, sizeof(args), "show %s", id);
	expect(args, 1, "not_found");
	assert_int_equal(vitrine("ls", false, out, sizeof(out)), 0);
	assert_null(strstr(out, id));
	assert_int_equal(qemu_running(), 0);
}

static void test_pause_resume_fork(void **state)
{
	char args[256], child[64];
	const char *id;
	json_t *j;

	(void)state;
	id = create_tiny();
	snprintf(args, sizeof(args), "pause %s", id);
	expect(args, 0, "\"paused\": \"memory\"");
	snprintf(args, sizeof(args), "resume %s", id);
	expect(args, 0, "\"status\": \"ready\"");
	snprintf(args, sizeof(args), "pause %s --disk", id);
	expect(args, 0, "\"paused\": \"disk\"");
	assert_int_equal(qemu_running(), 0);
	snprintf(args, sizeof(args), "fork %s", id);
	expect(args, 1, "session_paused");
	snprintf(args, sizeof(args), "resume %s", id);
	expect(args, 0, "\"status\": \"ready\"");
	snprintf(args, sizeof(args), "fork %s --wait", id);
	j = expect_json(args);
	assert_string_equal(json_string_value(json_object_get(j, "status")), "ready");
	assert_string_equal(json_string_value(json_object_get(j, "forked_from")), id);
	snprintf(child, sizeof(child), "%s", json_string_value(json_object_get(j, "id")));
	json_decref(j);
	assert_int_equal(qemu_running(), 2);
	expect("pause", 2, "a session id is required");
	expect("pause abc1 --swap", 2, "usage: vitrine pause");
	expect("resume doesnotexist0", 1, "not_found");
	snprintf(args, sizeof(args), "rm %s", child);
	expect(args, 0, "deleted");
	snprintf(args, sizeof(args), "rm %s", id);
	expect(args, 0, "deleted");
	assert_int_equal(qemu_running(), 0);
}

/* Needs GET .../screenshot and screenshots in action replies. */
static void test_screenshots(void **state)
{
	const char *id;
	char args[512], out[16384], file[128];
	int w = 0, h = 0;
	json_t *j, *shot;

	(void)state;
	id = create_tiny();
	snprintf(file, sizeof(file), "%s/full.jpg", tmp);
	snprintf(args, sizeof(args), "screenshot %s -o %s --quality 80", id, file);
	assert_int_equal(vitrine(args, true, out, sizeof(out)), 0);
	assert_string_equal(image_file(file, &w, &h), "jpeg");
	assert_int_equal(w, 800);
	assert_int_equal(h, 600);
	assert_non_null(strstr(out, "800x600 jpeg"));

	snprintf(file, sizeof(file), "%s/half.png", tmp);
	snprintf(args, sizeof(args), "screenshot %s -o %s --width 400 --height 300", id, file);
	expect(args, 0, "400x300 png");
	assert_string_equal(image_file(file, &w, &h), "png");
	assert_int_equal(w, 400);
	assert_int_equal(h, 300);
	snprintf(args, sizeof(args), "screenshot %s -o %s/x.png --format jpeg", id, tmp);
	expect(args, 0, "jpeg"); /* --format beats the file name */
	expect("screenshot doesnotexist0 -o /dev/null", 1, "not_found");

	/* act --screenshot: the settled screen lands in the file, not on stdout. */
	snprintf(file, sizeof(file), "%s/after.png", tmp);
	snprintf(args, sizeof(args),
		 "act %s '{\"action\":\"left_click\",\"coordinate\":[400,300]}' --screenshot %s",
		 id, file);
	j = expect_json(args);
	shot = json_object_get(j, "screenshot");
	assert_non_null(shot);
	assert_null(json_object_get(shot, "data"));
	assert_string_equal(json_string_value(json_object_get(shot, "format")), "png");
	assert_string_equal(image_file(file, &w, &h), "png");
	assert_int_equal(w, json_integer_value(json_object_get(shot, "width")));
	assert_int_equal(h, json_integer_value(json_object_get(shot, "height")));
	json_decref(j);

	snprintf(args, sizeof(args), "rm %s", id);
	expect(args, 0, "deleted");
	assert_int_equal(qemu_running(), 0);
}

/* Runs `vitrine ARGS` with stderr (and stdin) on a pseudo-terminal and
 * stdout into a file; returns its exit status, with what the terminal got
 * in term and stdout parsed as JSON in *json (NULL when it is none). */
static int on_terminal(const char *args, char *term, size_t len, json_t **json)
{
	char cmd[2048], file[128], *text = NULL;
	size_t used = 0;
	pid_t pid;
	int master, st;

	snprintf(file, sizeof(file), "%s/stdout.json", tmp);
	snprintf(cmd, sizeof(cmd), "exec %s %s >%s", bin(), args, file);
	pid = forkpty(&master, NULL, NULL, NULL);
	assert_true(pid >= 0);
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	for (;;) { /* EIO once the child closed the terminal */
		ssize_t n = read(master, term + used, len - 1 - used);

		if (n > 0 && (used += (size_t)n) < len - 1)
			continue;
		if (n < 0 && errno == EINTR)
			continue;
		break;
	}
	term[used] = '\0';
	close(master);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	*json = fs_read_file(file, 1 << 20, &text, NULL) == 0 ? json_loads(text, 0, NULL) : NULL;
	free(text);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* Fails unless a and b have the same members, in the same order. */
static void same_members(const json_t *a, const json_t *b)
{
	void *ia = json_object_iter((json_t *)a), *ib = json_object_iter((json_t *)b);

	for (; ia && ib; ia = json_object_iter_next((json_t *)a, ia),
			 ib = json_object_iter_next((json_t *)b, ib))
		assert_string_equal(json_object_iter_key(ia), json_object_iter_key(ib));
	if (ia || ib)
		fail_msg("member %s of one answer only", json_object_iter_key(ia ? ia : ib));
}

/* --wait on a terminal: a spinner line on stderr with the phase the
 * guest's start is in, cleared at the end, and the same JSON on stdout as
 * off a terminal; off one, no spinner (no carriage return). */
static void test_wait_on_a_terminal(void **state)
{
	char term[65536], args[256], out[16384], id[64];
	json_t *tty_json, *plain, *fork_json;

	(void)state;
	assert_int_equal(on_terminal("create --image tiny --width 800 --height 600 --wait", term,
				     sizeof(term), &tty_json),
			 0);
	if (!tty_json || !strstr(term, "\r") || !strstr(term, "\u280b starting: ") ||
	    !strstr(term, "waiting for the guest (") || !strstr(term, " s)\033[K"))
		fail_msg("no spinner with the phase on the terminal:\n%s", term);
	/* cleared at the end: nothing after the last erase */
	assert_string_equal(strrchr(term, '\r'), "\r\033[K");
	assert_string_equal(json_string_value(json_object_get(tty_json, "status")), "ready");
	assert_non_null(json_object_get(json_object_get(tty_json, "tokens"), "control"));
	assert_string_equal(json_string_value(
				    json_object_get(json_object_get(tty_json, "boot"), "phase")),
			    "ready");
	snprintf(id, sizeof(id), "%s", json_string_value(json_object_get(tty_json, "id")));

	/* Off a terminal: the same members (the answer of ?wait=ready, which
	 * is GET's with the tokens last), and no \r anywhere. */
	snprintf(args, sizeof(args), "show %s --wait", id);
	assert_int_equal(vitrine(args, true, out, sizeof(out)), 0);
	assert_null(strchr(out, '\r'));
	plain = json_loads(out, 0, NULL);
	assert_non_null(plain);
	json_object_set(plain, "tokens", json_object_get(tty_json, "tokens"));
	same_members(tty_json, plain);
	json_decref(plain);
	json_decref(tty_json);

	/* show --wait of a ready session on a terminal: at once, same JSON */
	assert_int_equal(on_terminal(args, term, sizeof(term), &plain), 0);
	assert_non_null(plain);
	assert_string_equal(json_string_value(json_object_get(plain, "id")), id);
	assert_null(json_object_get(plain, "tokens"));
	json_decref(plain);

	/* fork --wait: the copy's start, shown from its original's job */
	snprintf(args, sizeof(args), "fork %s --wait", id);
	assert_int_equal(on_terminal(args, term, sizeof(term), &fork_json), 0);
	if (!fork_json || !strstr(term, "starting"))
		fail_msg("no spinner while forking:\n%s", term);
	assert_string_equal(json_string_value(json_object_get(fork_json, "status")), "ready");
	assert_string_equal(json_string_value(json_object_get(fork_json, "forked_from")), id);
	assert_non_null(json_object_get(json_object_get(fork_json, "tokens"), "control"));
	assert_string_equal(json_string_value(
				    json_object_get(json_object_get(fork_json, "boot"), "phase")),
			    "ready");
	snprintf(args, sizeof(args), "rm %s", json_string_value(json_object_get(fork_json, "id")));
	expect(args, 0, "deleted");
	json_decref(fork_json);
	snprintf(args, sizeof(args), "rm %s", id);
	expect(args, 0, "deleted");
	assert_int_equal(qemu_running(), 0);

	/* template create makes it here, with the same line from its steps */
	snprintf(args, sizeof(args), "template create cli-tty-%d --image tiny --settle 0",
		 (int)getpid());
	assert_int_equal(on_terminal(args, term, sizeof(term), &plain), 0);
	snprintf(args, sizeof(args), "template cli-tty-%d: waiting for the guest (", (int)getpid());
	if (!strstr(term, args)) /* the boot is the long step; saving may be quicker than a frame */
		fail_msg("no spinner while making a template:\n%s", term);
	assert_string_equal(strrchr(term, '\r'), "\r\033[K");
	snprintf(args, sizeof(args), "%s/stdout.json", tmp);
	{
		char *text = NULL;

		assert_int_equal(fs_read_file(args, 4096, &text, NULL), 0);
		if (strncmp(text, "template cli-tty-", 17) || !strstr(text, " made from tiny in "))
			fail_msg("template create printed:\n%s", text);
		free(text);
	}
	snprintf(args, sizeof(args), "template rm cli-tty-%d", (int)getpid());
	expect(args, 0, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_usage_errors),
		cmocka_unit_test(test_no_server_and_bad_keys),
		cmocka_unit_test(test_api_keys),
		cmocka_unit_test(test_projects),
		cmocka_unit_test(test_session_lifecycle),
		cmocka_unit_test(test_pause_resume_fork),
		cmocka_unit_test(test_screenshots),
		cmocka_unit_test(test_wait_on_a_terminal),
	};

	return cmocka_run_group_tests_name("vitrine API clients", tests, setup, teardown);
}
