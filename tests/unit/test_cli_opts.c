/* tests/unit/test_cli_opts.c: the command lines of `vitrine`'s subcommands
 * (gateway/cli/cmd_opts.c): good lines into each command's configuration,
 * bad ones refused with the messages the commands always gave and with or
 * without the usage after them, and each --help printed from its table,
 * the clients' --gateway and --api-key-file rows shared by all. */
#include "common/opt.h"
#include "gateway/cli/cmd_opts.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define MAX_WORDS 64

static char words_buf[1024]; /* the configurations' strings point into it */
static char *words[MAX_WORDS];
static char err[512];

/* "prog" and line split at spaces into words; returns their count. */
static int split(const char *prog, const char *line)
{
	int argc = 0;

	snprintf(words_buf, sizeof(words_buf), "%s", line);
	words[argc++] = (char *)prog;
	for (char *w = strtok(words_buf, " "); w && argc < MAX_WORDS - 1; w = strtok(NULL, " "))
		words[argc++] = w;
	words[argc] = NULL;
	err[0] = '\0';
	return argc;
}

/* A refusal: the status and the exact message. */
#define assert_refused(rc, status, msg)                                                            \
	do {                                                                                       \
		int rc_ = (rc);                                                                    \
		if (rc_ != (status) || strcmp(err, (msg)))                                         \
			fail_msg("got %d '%s', want %d '%s'", rc_, err, (status), (msg));          \
	} while (0)

static int boot(const char *line, struct boot_config *c)
{
	return cli_boot_parse(c, split("boot", line), words, err, sizeof(err));
}

static void test_boot(void **state)
{
	struct boot_config c;

	(void)state;
	assert_int_equal(boot("--image tiny", &c), OPT_OK);
	assert_string_equal(c.image, "tiny");
	assert_int_equal(c.width, 1280);
	assert_int_equal(c.height, 800);
	assert_int_equal(c.vcpus, 2);
	assert_int_equal(c.memory_mib, 0); /* the image's: 2048, tiny 256 */
	assert_int_equal(c.timeout_s, 180);
	assert_int_equal(c.hold_s, 0);
	assert_int_equal(c.accel, VMM_ACCEL_AUTO);
	assert_false(c.json);
	assert_null(c.screenshot);
	assert_null(c.url);
	assert_int_equal(boot("--image=/img --url u --page p.html --width 3840 --height 200 "
			      "--vcpus 16 --memory 128 --accel tcg --timeout 3600 --screenshot "
			      "s.ppm --hold 86400 --json",
			      &c),
			 OPT_OK);
	assert_string_equal(c.image, "/img");
	assert_string_equal(c.url, "u");
	assert_string_equal(c.page, "p.html");
	assert_int_equal(c.width, 3840);
	assert_int_equal(c.height, 200);
	assert_int_equal(c.vcpus, 16);
	assert_int_equal(c.memory_mib, 128);
	assert_int_equal(c.accel, VMM_ACCEL_TCG);
	assert_int_equal(c.timeout_s, 3600);
	assert_string_equal(c.screenshot, "s.ppm");
	assert_int_equal(c.hold_s, 86400);
	assert_true(c.json);
	assert_int_equal(boot("--image tiny --help --width 1", &c), OPT_HELP);
	assert_int_equal(boot("--help", &c), OPT_HELP);

	assert_refused(boot("", &c), OPT_BAD_LINE, "vitrine boot: --image is required");
	assert_refused(boot("--image tiny --width 5", &c), OPT_BAD_VALUE,
		       "vitrine: --width must be a whole number in 320..3840, not '5'");
	assert_refused(boot("--image tiny --vcpus x", &c), OPT_BAD_VALUE,
		       "vitrine: --vcpus must be a whole number in 1..16, not 'x'");
	assert_refused(boot("--image tiny --memory 127", &c), OPT_BAD_VALUE,
		       "vitrine: --memory must be a whole number in 128..32768, not '127'");
	assert_refused(boot("--image tiny --timeout 0", &c), OPT_BAD_VALUE,
		       "vitrine: --timeout must be a whole number in 1..3600, not '0'");
	assert_refused(boot("--image tiny --hold -1", &c), OPT_BAD_VALUE,
		       "vitrine: --hold must be a whole number in 0..86400, not '-1'");
	assert_refused(boot("--image tiny --accel hvf", &c), OPT_BAD_VALUE,
		       "vitrine boot: --accel must be auto, kvm or tcg, not 'hvf'");
	assert_refused(boot("--image tiny --screenshot out.gif", &c), OPT_BAD_VALUE,
		       "vitrine boot: --screenshot must end in .png or .ppm");
	assert_refused(boot("--image tiny --screenshot png", &c), OPT_BAD_VALUE,
		       "vitrine boot: --screenshot must end in .png or .ppm");
	assert_refused(boot("--image tiny extra", &c), OPT_BAD_VALUE,
		       "vitrine boot: unexpected argument 'extra'");
	assert_refused(boot("--image tiny --bogus", &c), OPT_BAD_LINE,
		       "boot: unrecognized option '--bogus'");
	assert_refused(boot("--image", &c), OPT_BAD_LINE,
		       "boot: option '--image' requires an argument");
	assert_refused(boot("--h 1", &c), OPT_BAD_LINE,
		       "boot: option '--h' is ambiguous; possibilities: '--height' '--hold' "
		       "'--help'");
	/* the restore's options are not a boot's */
	assert_refused(boot("--image tiny --template t", &c), OPT_BAD_LINE,
		       "boot: unrecognized option '--template'");
}

static int boot_template(const char *line, struct boot_config *c)
{
	return cli_boot_template_parse(c, split("boot", line), words, err, sizeof(err));
}

static void test_boot_template(void **state)
{
	struct boot_config c;

	(void)state;
	assert_int_equal(boot_template("--template shop --screenshot a.png --hold 5 --json", &c),
			 OPT_OK);
	assert_string_equal(c.template_name, "shop");
	assert_string_equal(c.screenshot, "a.png");
	assert_int_equal(c.hold_s, 5);
	assert_true(c.json);
	assert_int_equal(boot_template("--template=shop", &c), OPT_OK);
	assert_int_equal(c.hold_s, 0);
	assert_false(c.json);
	assert_null(c.screenshot);
	assert_int_equal(boot_template("--template shop --help", &c), OPT_HELP);

	assert_refused(boot_template("--template shop --image tiny", &c), OPT_BAD_LINE,
		       "boot: unrecognized option '--image'");
	assert_refused(boot_template("--template shop x", &c), OPT_BAD_VALUE,
		       "vitrine boot: unexpected argument 'x'");
	assert_refused(boot_template("--template shop --hold 86401", &c), OPT_BAD_VALUE,
		       "vitrine: --hold must be a whole number in 0..86400, not '86401'");
	assert_refused(boot_template("--template shop --screenshot a.jpg", &c), OPT_BAD_VALUE,
		       "vitrine boot: --screenshot must end in .png or .ppm");
	/* cmd_boot_any saw "--template", but as --screenshot's argument */
	assert_refused(boot_template("--screenshot --template", &c), OPT_BAD_LINE,
		       "vitrine boot: --template is required");
}

static int template_create(const char *line, struct template_create_config *c)
{
	return cli_template_create_parse(c, split("create", line), words, err, sizeof(err));
}

static void test_template_create(void **state)
{
	struct template_create_config c;

	(void)state;
	assert_int_equal(template_create("shop --image desktop", &c), OPT_OK);
	assert_string_equal(c.name, "shop");
	assert_string_equal(c.image, "desktop");
	assert_int_equal(c.width, 1280);
	assert_int_equal(c.height, 800);
	assert_int_equal(c.vcpus, 2);
	assert_int_equal(c.memory_mib, 0);
	assert_int_equal(c.timeout_s, 180);
	assert_int_equal(c.settle_s, 2);
	assert_false(c.unless_current);
	assert_int_equal(template_create("--image tiny --url u --page p --width 800 --height 600 "
					 "--vcpus 1 --memory 256 --timeout 60 --settle 0 "
					 "--unless-current t1",
					 &c),
			 OPT_OK);
	assert_string_equal(c.name, "t1");
	assert_string_equal(c.url, "u");
	assert_string_equal(c.page, "p");
	assert_int_equal(c.width, 800);
	assert_int_equal(c.height, 600);
	assert_int_equal(c.vcpus, 1);
	assert_int_equal(c.memory_mib, 256);
	assert_int_equal(c.timeout_s, 60);
	assert_int_equal(c.settle_s, 0);
	assert_true(c.unless_current);
	assert_int_equal(template_create("--help", &c), OPT_HELP);

	assert_refused(template_create("shop", &c), OPT_BAD_LINE,
		       "vitrine template create: need NAME and --image");
	assert_refused(template_create("--image tiny", &c), OPT_BAD_LINE,
		       "vitrine template create: need NAME and --image");
	assert_refused(template_create("a b --image tiny", &c), OPT_BAD_LINE,
		       "vitrine template create: need NAME and --image");
	assert_refused(template_create("a --image tiny --settle 601", &c), OPT_BAD_VALUE,
		       "vitrine: --settle must be a whole number in 0..600, not '601'");
	assert_refused(template_create("a --image tiny --height 4000", &c), OPT_BAD_VALUE,
		       "vitrine: --height must be a whole number in 200..2160, not '4000'");
	assert_refused(template_create("a --image tiny --accel kvm", &c), OPT_BAD_LINE,
		       "create: unrecognized option '--accel'");
}

static int gc(const char *line, struct gc_config *c)
{
	return cli_gc_parse(c, split("gc", line), words, err, sizeof(err));
}

static void test_gc(void **state)
{
	struct gc_config c;

	(void)state;
	assert_int_equal(gc("", &c), OPT_OK);
	assert_null(c.state_dir);
	assert_false(c.dry_run);
	assert_int_equal(gc("--state-dir /s --dry-run", &c), OPT_OK);
	assert_string_equal(c.state_dir, "/s");
	assert_true(c.dry_run);
	assert_int_equal(gc("--help", &c), OPT_HELP);
	assert_refused(gc("extra", &c), OPT_BAD_LINE, "vitrine gc: unexpected argument 'extra'");
	assert_refused(gc("--dry-run=1", &c), OPT_BAD_LINE,
		       "gc: option '--dry-run' doesn't allow an argument");
}

static int create(const char *line, struct create_config *c)
{
	return cli_create_parse(c, split("create", line), words, err, sizeof(err));
}

static void test_create(void **state)
{
	struct create_config c;

	(void)state;
	assert_int_equal(create("", &c), OPT_OK);
	assert_string_equal(c.cl.cmd, "vitrine create");
	assert_null(c.cl.gateway_url);
	assert_null(c.cl.key_file);
	assert_null(c.image);
	assert_null(c.template_name);
	assert_null(c.url);
	/* 0: not given, the gateway's default */
	assert_int_equal(c.width, 0);
	assert_int_equal(c.height, 0);
	assert_int_equal(c.vcpus, 0);
	assert_int_equal(c.memory_mib, 0);
	assert_int_equal(c.timeout_s, 0);
	assert_false(c.wait);
	assert_int_equal(create("--image tiny --template t --url https://x --width 800 "
				"--height 600 --vcpus 1 --memory 256 --timeout 2147483647 --wait "
				"--gateway http://h:1 --api-key-file /k",
				&c),
			 OPT_OK);
	assert_string_equal(c.image, "tiny");
	assert_string_equal(c.template_name, "t");
	assert_string_equal(c.url, "https://x");
	assert_int_equal(c.width, 800);
	assert_int_equal(c.height, 600);
	assert_int_equal(c.vcpus, 1);
	assert_int_equal(c.memory_mib, 256);
	assert_int_equal(c.timeout_s, 2147483647);
	assert_true(c.wait);
	assert_string_equal(c.cl.gateway_url, "http://h:1");
	assert_string_equal(c.cl.key_file, "/k");
	/* unique prefixes, as getopt_long takes them */
	assert_int_equal(create("--gate=http://g:2 --api /k2 --temp t2", &c), OPT_OK);
	assert_string_equal(c.cl.gateway_url, "http://g:2");
	assert_string_equal(c.cl.key_file, "/k2");
	assert_string_equal(c.template_name, "t2");
	assert_int_equal(create("--help", &c), OPT_HELP);

	assert_refused(create("extra", &c), OPT_BAD_VALUE,
		       "vitrine create: unexpected argument 'extra'");
	assert_refused(create("--width 5", &c), OPT_BAD_VALUE,
		       "vitrine: --width must be a whole number in 320..3840, not '5'");
	assert_refused(create("--timeout 0", &c), OPT_BAD_VALUE,
		       "vitrine: --timeout must be a whole number in 1..2147483647, not '0'");
	assert_refused(create("--bogus", &c), OPT_BAD_LINE,
		       "create: unrecognized option '--bogus'");
	assert_refused(create("-h", &c), OPT_BAD_LINE, "create: invalid option -- 'h'");
	assert_refused(create("--gateway", &c), OPT_BAD_LINE,
		       "create: option '--gateway' requires an argument");
}

static int session(const struct cli_cmd *cmd, const char *prog, const char *line,
		   struct session_config *c)
{
	return cli_session_parse(cmd, c, split(prog, line), words, err, sizeof(err));
}

static void test_session_commands(void **state)
{
	struct session_config c;

	(void)state;
	assert_int_equal(session(&cli_ls_cmd, "ls", "--json --gateway http://h:1", &c), OPT_OK);
	assert_string_equal(c.cl.cmd, "vitrine ls");
	assert_true(c.json);
	assert_null(c.id);
	assert_string_equal(c.cl.gateway_url, "http://h:1");
	assert_int_equal(session(&cli_show_cmd, "show", "abc1 --wait", &c), OPT_OK);
	assert_string_equal(c.cl.cmd, "vitrine show");
	assert_string_equal(c.id, "abc1");
	assert_true(c.wait);
	assert_int_equal(session(&cli_pause_cmd, "pause", "--disk abc1", &c), OPT_OK);
	assert_true(c.disk);
	assert_false(c.wait);
	assert_int_equal(session(&cli_fork_cmd, "fork", "abc1 --wait", &c), OPT_OK);
	assert_true(c.wait);
	assert_int_equal(session(&cli_rm_cmd, "rm", "abc1", &c), OPT_OK);
	assert_int_equal(session(&cli_resume_cmd, "resume", "abc1", &c), OPT_OK);
	assert_string_equal(c.cl.cmd, "vitrine resume");
	assert_false(c.wait || c.disk || c.json);
	assert_int_equal(session(&cli_rm_cmd, "rm", "--help", &c), OPT_HELP);

	assert_refused(session(&cli_ls_cmd, "ls", "extra", &c), OPT_BAD_LINE,
		       "vitrine ls: unexpected argument 'extra'");
	assert_refused(session(&cli_show_cmd, "show", "", &c), OPT_BAD_LINE,
		       "vitrine show: a session id is required");
	assert_refused(session(&cli_rm_cmd, "rm", "abc1 abc2", &c), OPT_BAD_LINE,
		       "vitrine rm: unexpected argument 'abc2'");
	assert_refused(session(&cli_show_cmd, "show", "ABC", &c), OPT_BAD_VALUE,
		       "vitrine show: 'ABC' is not a session id (lowercase letters and digits, at "
		       "most 64)");
	assert_refused(session(&cli_pause_cmd, "pause", "abc1 --swap", &c), OPT_BAD_LINE,
		       "pause: unrecognized option '--swap'");
	/* each command its own flag */
	assert_refused(session(&cli_resume_cmd, "resume", "abc1 --wait", &c), OPT_BAD_LINE,
		       "resume: unrecognized option '--wait'");
	assert_refused(session(&cli_ls_cmd, "ls", "--disk", &c), OPT_BAD_LINE,
		       "ls: unrecognized option '--disk'");
}

static int screenshot(const char *line, struct screenshot_config *c)
{
	return cli_screenshot_parse(c, split("screenshot", line), words, err, sizeof(err));
}

static void test_screenshot(void **state)
{
	struct screenshot_config c;

	(void)state;
	assert_int_equal(screenshot("abc1 -o x.png", &c), OPT_OK);
	assert_string_equal(c.cl.cmd, "vitrine screenshot");
	assert_string_equal(c.id, "abc1");
	assert_string_equal(c.out, "x.png");
	assert_null(c.format);
	assert_int_equal(c.quality + c.width + c.height, 0);
	assert_int_equal(screenshot("-oy.jpg abc1 --format png --quality 100 --width 16384 "
				    "--height 1",
				    &c),
			 OPT_OK);
	assert_string_equal(c.out, "y.jpg");
	assert_string_equal(c.format, "png");
	assert_int_equal(c.quality, 100);
	assert_int_equal(c.width, 16384);
	assert_int_equal(c.height, 1);
	assert_int_equal(screenshot("--output=z.png abc1", &c), OPT_OK);
	assert_string_equal(c.out, "z.png");

	assert_refused(screenshot("abc1", &c), OPT_BAD_VALUE,
		       "vitrine screenshot: -o FILE is required");
	assert_refused(screenshot("-o x.png", &c), OPT_BAD_VALUE,
		       "vitrine screenshot: a session id is required");
	assert_refused(screenshot("abc1 abc2 -o x.png", &c), OPT_BAD_VALUE,
		       "vitrine screenshot: unexpected argument 'abc2'");
	assert_refused(screenshot("abc1 -o x.png --format gif", &c), OPT_BAD_VALUE,
		       "vitrine screenshot: --format must be jpeg or png, not 'gif'");
	assert_refused(screenshot("abc1 -o x.png --quality 0", &c), OPT_BAD_VALUE,
		       "vitrine: --quality must be a whole number in 1..100, not '0'");
	assert_refused(screenshot("abc1 -o", &c), OPT_BAD_LINE,
		       "screenshot: option requires an argument -- 'o'");
	assert_refused(screenshot("abc1 -x", &c), OPT_BAD_LINE,
		       "screenshot: invalid option -- 'x'");
	assert_refused(screenshot("a_b -o x.png", &c), OPT_BAD_VALUE,
		       "vitrine screenshot: 'a_b' is not a session id (lowercase letters and "
		       "digits, at most 64)");
}

static int act(const char *line, struct act_config *c)
{
	return cli_act_parse(c, split("act", line), words, err, sizeof(err));
}

static void test_act(void **state)
{
	struct act_config c;

	(void)state;
	assert_int_equal(act("abc1 {} --screenshot s.png", &c), OPT_OK);
	assert_string_equal(c.cl.cmd, "vitrine act");
	assert_string_equal(c.id, "abc1");
	assert_string_equal(c.action, "{}");
	assert_string_equal(c.shot_file, "s.png");
	/* "-", stdin's action, is a word */
	assert_int_equal(act("abc1 -", &c), OPT_OK);
	assert_string_equal(c.action, "-");
	assert_null(c.shot_file);

	assert_refused(act("abc1", &c), OPT_BAD_LINE,
		       "vitrine act: a session id and an action are required");
	assert_refused(act("abc1 {} c", &c), OPT_BAD_LINE, "vitrine act: unexpected argument 'c'");
	assert_refused(act("A {}", &c), OPT_BAD_VALUE,
		       "vitrine act: 'A' is not a session id (lowercase letters and digits, at "
		       "most 64)");
	assert_refused(act("abc1 {} --screenshot", &c), OPT_BAD_LINE,
		       "act: option '--screenshot' requires an argument");
}

static int key(const char *line, struct key_config *c)
{
	return cli_key_parse(c, split("key", line), words, err, sizeof(err));
}

static void test_key(void **state)
{
	struct key_config c;

	(void)state;
	assert_int_equal(key("create --name ci", &c), OPT_OK);
	assert_string_equal(c.cl.cmd, "vitrine key");
	assert_int_equal(c.sub, CLI_KEY_CREATE);
	assert_string_equal(c.name, "ci");
	assert_int_equal(key("create", &c), OPT_OK);
	assert_null(c.name);
	assert_int_equal(key("ls --json --api-key-file /k", &c), OPT_OK);
	assert_int_equal(c.sub, CLI_KEY_LS);
	assert_true(c.json);
	assert_string_equal(c.cl.key_file, "/k");
	assert_int_equal(key("rm k1", &c), OPT_OK);
	assert_int_equal(c.sub, CLI_KEY_RM);
	assert_string_equal(c.id, "k1");
	assert_int_equal(key("-h", &c), OPT_HELP);
	assert_int_equal(key("--help", &c), OPT_HELP);
	assert_int_equal(key("rm --help", &c), OPT_HELP);

	assert_refused(key("", &c), OPT_BAD_LINE, "vitrine key: a subcommand is required");
	assert_refused(key("revoke k1", &c), OPT_BAD_LINE,
		       "vitrine key: unknown subcommand 'revoke'");
	assert_refused(key("--json ls", &c), OPT_BAD_LINE,
		       "vitrine key: unknown subcommand '--json'");
	assert_refused(key("rm", &c), OPT_BAD_LINE, "vitrine key rm: a key id is required");
	assert_refused(key("rm k1 k2", &c), OPT_BAD_LINE,
		       "vitrine key rm: unexpected argument 'k2'");
	assert_refused(key("ls extra", &c), OPT_BAD_LINE,
		       "vitrine key ls: unexpected argument 'extra'");
	/* each subcommand's option with it alone */
	assert_refused(key("ls --name x", &c), OPT_BAD_LINE,
		       "vitrine key ls: --name goes with key create only");
	assert_refused(key("create --json", &c), OPT_BAD_LINE,
		       "vitrine key create: --json goes with key ls only");
	assert_refused(key("rm k1 --json", &c), OPT_BAD_LINE,
		       "vitrine key rm: --json goes with key ls only");
	/* the messages of the line name "key", as they did */
	assert_refused(key("create --bogus", &c), OPT_BAD_LINE,
		       "key: unrecognized option '--bogus'");
	/* a project's keys */
	assert_int_equal(key("create --project acme --name a1", &c), OPT_OK);
	assert_string_equal(c.project, "acme");
	assert_int_equal(key("ls --project acme", &c), OPT_OK);
	assert_string_equal(c.project, "acme");
	assert_refused(key("rm k1 --project acme", &c), OPT_BAD_LINE,
		       "vitrine key rm: --project goes with create and ls (rm takes any key's id)");
	assert_refused(key("create --project ../x", &c), OPT_BAD_LINE,
		       "vitrine key create: --project: not a project's name ([a-z0-9-], from a "
		       "letter)");
}

static int project(const char *line, struct project_config *c)
{
	return cli_project_parse(c, split("project", line), words, err, sizeof(err));
}

/* The body of create or set, as text. */
static void expect_body(const struct project_config *c, const char *want)
{
	json_t *b = cli_project_body(c, err, sizeof(err));
	char *text;

	assert_non_null(b);
	text = json_dumps(b, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(text, want);
	free(text);
	json_decref(b);
}

static void test_project(void **state)
{
	struct project_config c;

	(void)state;
	assert_int_equal(project("create acme --sessions 3 --memory-mib 4096 --allow-root", &c),
			 OPT_OK);
	assert_int_equal(c.sub, CLI_PROJECT_CREATE);
	assert_string_equal(c.name, "acme");
	expect_body(&c, "{\"allow_root\":true,\"name\":\"acme\",\"quota\":{\"memory_mib\":4096,"
			"\"sessions\":3}}");
	assert_int_equal(project("set acme --vcpus none --deny-root", &c), OPT_OK);
	expect_body(&c, "{\"allow_root\":false,\"quota\":{\"vcpus\":null}}");
	assert_int_equal(project("set acme --disk-gib 20", &c), OPT_OK);
	expect_body(&c, "{\"quota\":{\"disk_gib\":20}}");
	assert_int_equal(project("set acme --disk-gib lots", &c), OPT_OK);
	assert_null(cli_project_body(&c, err, sizeof(err)));
	assert_non_null(strstr(err, "--disk-gib takes a whole number or \"none\""));
	assert_int_equal(project("ls --json", &c), OPT_OK);
	assert_int_equal(c.sub, CLI_PROJECT_LS);
	assert_null(c.name);
	assert_int_equal(project("show acme", &c), OPT_OK);
	assert_int_equal(project("rm acme", &c), OPT_OK);
	assert_int_equal(c.sub, CLI_PROJECT_RM);
	assert_int_equal(project("--help", &c), OPT_HELP);
	assert_refused(project("", &c), OPT_BAD_LINE, "vitrine project: a subcommand is required");
	assert_refused(project("make acme", &c), OPT_BAD_LINE,
		       "vitrine project: unknown subcommand 'make'");
	assert_refused(project("create", &c), OPT_BAD_LINE,
		       "vitrine project create: a project name is required");
	assert_refused(project("create a b", &c), OPT_BAD_LINE,
		       "vitrine project create: one project name only");
	assert_refused(project("ls acme", &c), OPT_BAD_LINE,
		       "vitrine project ls: takes no argument");
	assert_refused(project("create Acme", &c), OPT_BAD_LINE,
		       "vitrine project create: 'Acme' is not a project's name (1..32 of "
		       "[a-z0-9-], from a letter)");
	assert_refused(project("set acme", &c), OPT_BAD_LINE,
		       "vitrine project set: say what changes (a quota, --allow-root or "
		       "--deny-root)");
	assert_refused(project("rm acme --sessions 1", &c), OPT_BAD_LINE,
		       "vitrine project rm: quotas and --allow-root go with create and set");
	assert_refused(project("create acme --deny-root", &c), OPT_BAD_LINE,
		       "vitrine project create: --deny-root goes with set, without --allow-root");
	assert_refused(project("create acme --json", &c), OPT_BAD_LINE,
		       "vitrine project create: --json goes with ls and show");
}

static void test_template_save_build(void **state)
{
	struct template_save_config s;
	struct template_build_config b;

	(void)state;
	assert_int_equal(cli_template_save_parse(&s, split("save", "abc1 shop --no-wait"), words,
						 err, sizeof(err)),
			 OPT_OK);
	assert_string_equal(s.cl.cmd, "vitrine template save");
	assert_string_equal(s.id, "abc1");
	assert_string_equal(s.name, "shop");
	assert_true(s.no_wait);
	assert_refused(cli_template_save_parse(&s, split("save", "abc1"), words, err, sizeof(err)),
		       OPT_BAD_LINE,
		       "vitrine template save: a session id and a template name are required");
	assert_refused(cli_template_save_parse(&s, split("save", "Abc shop"), words, err,
					       sizeof(err)),
		       OPT_BAD_VALUE,
		       "vitrine template save: 'Abc' is not a session id (lowercase letters and "
		       "digits, at most 64)");

	assert_int_equal(cli_template_build_parse(&b,
						  split("build", "-f r.json --name n --no-wait"),
						  words, err, sizeof(err)),
			 OPT_OK);
	assert_string_equal(b.cl.cmd, "vitrine template build");
	assert_string_equal(b.file, "r.json");
	assert_string_equal(b.name, "n");
	assert_true(b.no_wait);
	assert_int_equal(cli_template_build_parse(&b, split("build", "-fr.json"), words, err,
						  sizeof(err)),
			 OPT_OK);
	assert_string_equal(b.file, "r.json");
	assert_null(b.name);
	assert_false(b.no_wait);
	assert_int_equal(cli_template_build_parse(&b, split("build", "--file=r.json"), words, err,
						  sizeof(err)),
			 OPT_OK);
	assert_string_equal(b.file, "r.json");
	assert_refused(cli_template_build_parse(&b, split("build", "r.json"), words, err,
						sizeof(err)),
		       OPT_BAD_LINE, "vitrine template build: a recipe file (-f FILE) is required");
	assert_refused(cli_template_build_parse(&b, split("build", "-f r.json more"), words, err,
						sizeof(err)),
		       OPT_BAD_LINE, "vitrine template build: unexpected argument 'more'");
}

static void test_template_pool(void **state)
{
	struct template_pool_config c;

	(void)state;
	assert_int_equal(cli_template_pool_parse(&c, split("pool", "shop 2"), words, err,
						 sizeof(err)),
			 OPT_OK);
	assert_string_equal(c.cl.cmd, "vitrine template pool");
	assert_string_equal(c.name, "shop");
	assert_int_equal(c.size, 2);
	assert_int_equal(cli_template_pool_parse(&c, split("pool", "shop 0"), words, err,
						 sizeof(err)),
			 OPT_OK);
	assert_int_equal(c.size, 0);
	assert_refused(cli_template_pool_parse(&c, split("pool", "shop"), words, err, sizeof(err)),
		       OPT_BAD_LINE,
		       "vitrine template pool: a template name and a size are required");
	assert_refused(cli_template_pool_parse(&c, split("pool", "shop two"), words, err,
					       sizeof(err)),
		       OPT_BAD_VALUE,
		       "vitrine template pool: bad size 'two' (a number, 0 for none)");
	assert_refused(
		cli_template_pool_parse(&c, split("pool", "Shop 1"), words, err, sizeof(err)),
		OPT_BAD_VALUE,
		"vitrine template pool: bad template name 'Shop' (1-63 of a-z, 0-9, '_', '-')");
}

static void test_template_move(void **state)
{
	struct template_move_config c;

	(void)state;
	assert_int_equal(cli_template_export_parse(&c, split("export", "shop -"), words, err,
						   sizeof(err)),
			 OPT_OK);
	assert_string_equal(c.cl.cmd, "vitrine template export");
	assert_string_equal(c.name, "shop");
	assert_string_equal(c.file, "-");
	assert_refused(cli_template_export_parse(&c, split("export", "Shop f"), words, err,
						 sizeof(err)),
		       OPT_BAD_LINE,
		       "vitrine template export: a template name and a file are required");
	assert_refused(cli_template_export_parse(&c, split("export", "shop"), words, err,
						 sizeof(err)),
		       OPT_BAD_LINE,
		       "vitrine template export: a template name and a file are required");
	assert_refused(cli_template_export_parse(&c, split("export", "--name n shop f"), words, err,
						 sizeof(err)),
		       OPT_BAD_LINE, "export: unrecognized option '--name'");

	assert_int_equal(cli_template_import_parse(&c, split("import", "/d/shop.v2.vtpl"), words,
						   err, sizeof(err)),
			 OPT_OK);
	assert_string_equal(c.name, "shop");
	assert_string_equal(c.file, "/d/shop.v2.vtpl");
	assert_int_equal(cli_template_import_parse(&c, split("import", "f --name s_2"), words, err,
						   sizeof(err)),
			 OPT_OK);
	assert_string_equal(c.name, "s_2");
	assert_refused(cli_template_import_parse(&c, split("import", "a b"), words, err,
						 sizeof(err)),
		       OPT_BAD_LINE, "vitrine template import: a file is required");
	assert_refused(cli_template_import_parse(&c, split("import", "Shop.vtpl"), words, err,
						 sizeof(err)),
		       OPT_BAD_VALUE,
		       "vitrine template import: bad template name 'Shop' (1-63 of a-z, 0-9, '_', "
		       "'-')");
	assert_refused(cli_template_import_parse(&c, split("import", ".vtpl"), words, err,
						 sizeof(err)),
		       OPT_BAD_VALUE,
		       "vitrine template import: bad template name '' (1-63 of a-z, 0-9, '_', "
		       "'-')");

	assert_int_equal(cli_template_gc_parse(&c, split("gc", "--older-than 7d"), words, err,
					       sizeof(err)),
			 OPT_OK);
	assert_int_equal(c.older_than_s, 7 * 86400);
	assert_int_equal(cli_template_gc_parse(&c, split("gc", "--older-than=90"), words, err,
					       sizeof(err)),
			 OPT_OK);
	assert_int_equal(c.older_than_s, 90);
	assert_int_equal(cli_template_gc_parse(&c, split("gc", "--older-than 3660d"), words, err,
					       sizeof(err)),
			 OPT_OK);
	assert_int_equal(c.older_than_s, 3660LL * 86400);
	assert_refused(cli_template_gc_parse(&c, split("gc", ""), words, err, sizeof(err)),
		       OPT_BAD_LINE, "vitrine template gc: --older-than is required");
	assert_refused(cli_template_gc_parse(&c, split("gc", "--older-than 1d x"), words, err,
					     sizeof(err)),
		       OPT_BAD_LINE, "vitrine template gc: unexpected argument 'x'");
	assert_refused(cli_template_gc_parse(&c, split("gc", "--older-than 2w"), words, err,
					     sizeof(err)),
		       OPT_BAD_VALUE,
		       "vitrine template gc: bad duration '2w' (N, Ns, Nm, Nh or Nd, up to 10 "
		       "years)");
	assert_refused(cli_template_gc_parse(&c, split("gc", "--older-than 3661d"), words, err,
					     sizeof(err)),
		       OPT_BAD_VALUE,
		       "vitrine template gc: bad duration '3661d' (N, Ns, Nm, Nh or Nd, up to 10 "
		       "years)");
}

static const struct cli_cmd *const every_cmd[] = {
	&cli_boot_cmd,
	&cli_boot_template_cmd,
	&cli_template_create_cmd,
	&cli_gc_cmd,
	&cli_create_cmd,
	&cli_ls_cmd,
	&cli_show_cmd,
	&cli_rm_cmd,
	&cli_pause_cmd,
	&cli_resume_cmd,
	&cli_fork_cmd,
	&cli_screenshot_cmd,
	&cli_act_cmd,
	&cli_key_cmd,
	&cli_template_save_cmd,
	&cli_template_build_cmd,
	&cli_template_export_cmd,
	&cli_template_import_cmd,
	&cli_template_gc_cmd,
};

static char *usage_of(const struct cli_cmd *cmd)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	cli_cmd_usage(cmd, f);
	fclose(f);
	return text;
}

/* Every command's help: its head, then one paragraph a row in the two
 * columns (but --help's), then its foot; the gateway's clients all with
 * the same two rows. */
static void test_usage(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(every_cmd) / sizeof(every_cmd[0]); i++) {
		const struct cli_cmd *cmd = every_cmd[i];
		char *text = usage_of(cmd), *rows = text + strlen(cmd->head);
		bool client = cmd != &cli_boot_cmd && cmd != &cli_boot_template_cmd &&
			      cmd != &cli_template_create_cmd && cmd != &cli_gc_cmd;

		if (strncmp(text, "usage: vitrine ", 15) ||
		    strncmp(text, cmd->head, strlen(cmd->head)))
			fail_msg("%s: the help does not start with its usage:\n%s", cmd->name,
				 text);
		if (strncmp(text + 7, cmd->name, strlen(cmd->name)))
			fail_msg("%s: the usage names another command:\n%s", cmd->name, text);
		if (strstr(text, "--help"))
			fail_msg("%s: --help has a line:\n%s", cmd->name, text);
		if (client !=
		    (strstr(text, "\n  --gateway URL        the gateway (default "
				  "$VITRINE_URL, else http://127.0.0.1:8080)\n"
				  "  --api-key-file FILE  bearer key (default "
				  "$VITRINE_API_KEY, else $VITRINE_HOME/api-key)\n") != NULL))
			fail_msg("%s: the client's rows %s:\n%s", cmd->name,
				 client ? "are missing" : "are there", text);
		/* the rows: each line an option's, or its help's next line */
		for (const char *line = rows; *line && (!cmd->foot || strcmp(line, cmd->foot));
		     line = strchr(line, '\n') + 1)
			if (strncmp(line, "  -", 3) &&
			    (strncmp(line, "                       ", 23) || line[23] == ' '))
				fail_msg("%s: a help line out of its column: %.*s", cmd->name,
					 (int)strcspn(line, "\n"), line);
		if (cmd->foot && strcmp(text + strlen(text) - strlen(cmd->foot), cmd->foot))
			fail_msg("%s: the help does not end with its foot:\n%s", cmd->name, text);
		/* a table's names and letters are each its own */
		for (size_t a = 0; a < cmd->n_rows; a++)
			for (size_t b = a + 1; b < cmd->n_rows; b++)
				if (!strcmp(cmd->rows[a].name, cmd->rows[b].name) ||
				    (cmd->rows[a].letter &&
				     cmd->rows[a].letter == cmd->rows[b].letter))
					fail_msg("%s: two rows for --%s", cmd->name,
						 cmd->rows[a].name);
		free(text);
	}
}

/* What the commands' help said before it came from the tables, kept. */
static void test_usage_lines(void **state)
{
	char *text;

	(void)state;
	text = usage_of(&cli_screenshot_cmd);
	assert_non_null(strstr(text, "usage: vitrine screenshot ID -o FILE [options]\n"
				     "  -o, --output FILE    where to save the image\n"
				     "  --format jpeg|png    (default: png for a .png FILE, else "
				     "jpeg)\n"
				     "  --quality N          JPEG quality 1..100\n"));
	free(text);
	text = usage_of(&cli_template_build_cmd);
	assert_non_null(strstr(text, "\n  -f, --file FILE      the recipe (docs/templates.md)\n"));
	free(text);
	text = usage_of(&cli_pause_cmd);
	assert_string_equal(strstr(text, "  --disk"),
			    "  --disk               save the whole guest to disk and stop QEMU "
			    "(default:\n"
			    "                       stop it in memory)\n"
			    "  --gateway URL        the gateway (default $VITRINE_URL, else "
			    "http://127.0.0.1:8080)\n"
			    "  --api-key-file FILE  bearer key (default $VITRINE_API_KEY, else "
			    "$VITRINE_HOME/api-key)\n");
	free(text);
	text = usage_of(&cli_boot_cmd);
	assert_non_null(strstr(text, "       vitrine boot --template NAME [--screenshot FILE] "
				     "[--hold S] [--json]\n"));
	assert_non_null(strstr(text, "\n  --accel auto|kvm|tcg  accelerator (default auto: KVM "
				     "when it works)\n"));
	assert_non_null(strstr(text, "\n  --page FILE          host HTML file shown to the guest "
				     "(default URL:\n"
				     "                       file:///run/vitrine/page.html)\n"));
	free(text);
	text = usage_of(&cli_act_cmd);
	assert_non_null(strstr(text, "--screenshot FILE    ask for the settled screenshot"));
	assert_non_null(strstr(text, "\nPrints the gateway's reply as JSON, without the image "
				     "data.\n"));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_boot),
		cmocka_unit_test(test_boot_template),
		cmocka_unit_test(test_template_create),
		cmocka_unit_test(test_gc),
		cmocka_unit_test(test_create),
		cmocka_unit_test(test_session_commands),
		cmocka_unit_test(test_screenshot),
		cmocka_unit_test(test_act),
		cmocka_unit_test(test_key),
		cmocka_unit_test(test_project),
		cmocka_unit_test(test_template_save_build),
		cmocka_unit_test(test_template_move),
		cmocka_unit_test(test_template_pool),
		cmocka_unit_test(test_usage),
		cmocka_unit_test(test_usage_lines),
	};

	return cmocka_run_group_tests_name("the subcommands' command lines", tests, NULL, NULL);
}
