/* tests/unit/test_serve_config.c: command lines read from an option table
 * (common/opt.c: getopt_long's rules and messages) and `vitrine serve`'s
 * own (gateway/cli/serve_config.c): good option sets into the
 * configuration, bad ones refused with their exact messages, and --help
 * printed from the table. */
#include "common/opt.h"
#include "gateway/cli/serve_config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define MAX_WORDS 96

/* line split at spaces into argv, behind "serve". */
static int split(const char *line, char *buf, size_t len, char **argv)
{
	int argc = 0;

	snprintf(buf, len, "%s", line);
	argv[argc++] = "serve";
	for (char *w = strtok(buf, " "); w && argc < MAX_WORDS - 1; w = strtok(NULL, " "))
		argv[argc++] = w;
	argv[argc] = NULL;
	return argc;
}

static int parse(const char *line, struct serve_config *cfg, char *err, size_t errlen)
{
	static char buf[2048]; /* cfg's strings point into it */
	static char *argv[MAX_WORDS];
	int argc = split(line, buf, sizeof(buf), argv);

	err[0] = '\0';
	return serve_config_parse(cfg, argc, argv, err, errlen);
}

static void test_defaults(void **state)
{
	struct serve_config cfg;
	char err[512];

	(void)state;
	assert_int_equal(parse("", &cfg, err, sizeof(err)), OPT_OK);
	assert_string_equal(cfg.host, "127.0.0.1");
	assert_int_equal(cfg.port, 8080);
	assert_int_equal(cfg.max_sessions, 8);
	assert_int_equal(cfg.max_connections, 512);
	assert_int_equal(cfg.max_connections_per_ip, 128);
	assert_int_equal(cfg.adopt_grace_s, 300);
	assert_true(cfg.abandon_pause);
	assert_int_equal(cfg.on_stop, GW_STOP_KEEP);
	assert_int_equal(cfg.trajectory_max_steps, 1000);
	assert_int_equal(cfg.trajectory_max_bytes, 64 << 20);
	assert_int_equal(cfg.record_fps, 5);
	assert_int_equal(cfg.record_max_bytes, 512ll << 20);
	assert_int_equal(cfg.audit_log_max_bytes, 64ll << 20);
	assert_int_equal(cfg.usage_retention, 10000);
	assert_int_equal(cfg.max_vcpus, 0);
	assert_int_equal(cfg.egress.max_total, 0);
	assert_false(cfg.egress.allow_private);
	assert_false(cfg.log_format_given);
	assert_false(cfg.qemu_uids_given);
	assert_null(cfg.api_key_file);
	assert_null(cfg.state_dir);
	assert_null(cfg.node);
	assert_null(cfg.demo_page);
	assert_string_equal(err, "");
}

static void test_good_set(void **state)
{
	struct serve_config cfg;
	char err[512];

	(void)state;
	assert_int_equal(parse("--listen 0.0.0.0:0 --api-key-file /k --origins http://a,http://b "
			       "--max-sessions=4 --max-connections 16 --max-connections-per-ip 2 "
			       "--max-vcpus 2 --max-memory-mib 2048 --memory-budget-mib 4096 "
			       "--template-chain-max 9 --public-url https://x.test --web-dir /w "
			       "--audit-log /a --audit-log-max-bytes 4096 --access-log /l "
			       "--access-log-max-bytes 1125899906842624 --stream-idle-s 3600 "
			       "--trajectory-max-steps 0 --trajectory-max-bytes 8192 "
			       "--vnc-listen 0.0.0.0 --e2b-default-template desk "
			       "--egress-map Db=10.0.0.5 --egress-map cache=::1 "
			       "--metrics-listen 127.0.0.1:9100 --usage-retention 1 "
			       "--log-format json --egress-max-connections 4096 "
			       "--egress-allow-private --node n1 --state-dir /s --record-fps 30 "
			       "--record-max-bytes 65536 --on-stop pause --adopt-grace-s 604800 "
			       "--on-abandon kill --qemu-uids 1000-1009 --allow-root-qemu "
			       "--demo /p.html --demo-template t",
			       &cfg, err, sizeof(err)),
			 OPT_OK);
	assert_string_equal(cfg.host, "0.0.0.0");
	assert_int_equal(cfg.port, 0);
	assert_string_equal(cfg.api_key_file, "/k");
	assert_string_equal(cfg.origins, "http://a,http://b");
	assert_int_equal(cfg.max_sessions, 4);
	assert_int_equal(cfg.max_connections, 16);
	assert_int_equal(cfg.max_connections_per_ip, 2);
	assert_int_equal(cfg.max_vcpus, 2);
	assert_int_equal(cfg.max_memory_mib, 2048);
	assert_int_equal(cfg.memory_budget_mib, 4096);
	assert_int_equal(cfg.template_chain_max, 9);
	assert_string_equal(cfg.public_url, "https://x.test");
	assert_string_equal(cfg.web_dir, "/w");
	assert_string_equal(cfg.audit_log, "/a");
	assert_int_equal(cfg.audit_log_max_bytes, 4096);
	assert_string_equal(cfg.access_log, "/l");
	assert_int_equal(cfg.access_log_max_bytes, 1ll << 50);
	assert_int_equal(cfg.stream_idle_s, 3600);
	assert_int_equal(cfg.trajectory_max_steps, 0);
	assert_int_equal(cfg.trajectory_max_bytes, 8192);
	assert_string_equal(cfg.vnc_listen, "0.0.0.0");
	assert_string_equal(cfg.e2b_default_template, "desk");
	assert_int_equal(cfg.egress.n_maps, 2);
	assert_string_equal(cfg.egress.maps[0].name, "db");
	assert_string_equal(cfg.egress.maps[1].name, "cache");
	assert_string_equal(cfg.metrics_listen, "127.0.0.1:9100");
	assert_int_equal(cfg.usage_retention, 1);
	assert_true(cfg.log_format_given);
	assert_int_equal(cfg.log_format, LOG_FORMAT_JSON);
	assert_int_equal(cfg.egress.max_total, 4096);
	assert_true(cfg.egress.allow_private);
	assert_string_equal(cfg.node, "n1");
	assert_string_equal(cfg.state_dir, "/s");
	assert_int_equal(cfg.record_fps, 30);
	assert_int_equal(cfg.record_max_bytes, 65536);
	assert_int_equal(cfg.on_stop, GW_STOP_PAUSE);
	assert_int_equal(cfg.adopt_grace_s, 604800);
	assert_false(cfg.abandon_pause);
	assert_true(cfg.qemu_uids_given);
	assert_int_equal(cfg.qemu_uid_first, 1000);
	assert_int_equal(cfg.qemu_uid_last, 1009);
	assert_true(cfg.allow_root_qemu);
	assert_string_equal(cfg.demo_page, "/p.html");
	assert_string_equal(cfg.demo_template, "t");
}

/* What getopt_long also takes: a unique prefix, --name=value, the last
 * of a repeated option, an argument that looks like an option, "--". */
static void test_getopt_forms(void **state)
{
	struct serve_config cfg;
	char err[512];

	(void)state;
	assert_int_equal(parse("--max-s 3 --max-sessions 5 --on-s=kill --qemu-uids none "
			       "--public-url --listen --",
			       &cfg, err, sizeof(err)),
			 OPT_OK);
	assert_int_equal(cfg.max_sessions, 5);
	assert_int_equal(cfg.on_stop, GW_STOP_KILL);
	assert_true(cfg.qemu_uids_given);
	assert_int_equal(cfg.qemu_uid_first, 0);
	assert_int_equal(cfg.qemu_uid_last, 0);
	assert_string_equal(cfg.public_url, "--listen");
	/* An exact name wins over the longer names it begins. */
	assert_int_equal(parse("--max-connections 20", &cfg, err, sizeof(err)), OPT_OK);
	assert_int_equal(cfg.max_connections, 20);
	assert_int_equal(cfg.max_connections_per_ip, 128);
	assert_int_equal(parse("--listen=[::1]:8443", &cfg, err, sizeof(err)), OPT_OK);
	assert_string_equal(cfg.host, "[::1]");
	assert_int_equal(cfg.port, 8443);
	/* --help stops the reading: what follows it is not looked at. */
	assert_int_equal(parse("--node n --help --node BAD extra", &cfg, err, sizeof(err)),
			 OPT_HELP);
	assert_int_equal(parse("--he", &cfg, err, sizeof(err)), OPT_HELP);
}

static const struct {
	const char *line;
	int status;
	const char *err;
} bad[] = {
	{ "--foo", OPT_BAD_LINE, "serve: unrecognized option '--foo'" },
	{ "--foo=3", OPT_BAD_LINE, "serve: unrecognized option '--foo=3'" },
	{ "--listen", OPT_BAD_LINE, "serve: option '--listen' requires an argument" },
	{ "--help=3", OPT_BAD_LINE, "serve: option '--help' doesn't allow an argument" },
	{ "--egress-allow-private=1", OPT_BAD_LINE,
	  "serve: option '--egress-allow-private' doesn't allow an argument" },
	{ "-h", OPT_BAD_LINE, "serve: invalid option -- 'h'" },
	{ "-xyz", OPT_BAD_LINE, "serve: invalid option -- 'x'" },
	{ "--max=3", OPT_BAD_LINE,
	  "serve: option '--max=3' is ambiguous; possibilities: '--max-sessions' "
	  "'--max-connections' '--max-connections-per-ip' '--max-vcpus' '--max-memory-mib'" },
	{ "--max-s 3 --bogus", OPT_BAD_LINE, "serve: unrecognized option '--bogus'" },
	{ "--max-sessions 0", OPT_BAD_VALUE,
	  "vitrine: --max-sessions must be a whole number in 1..256, not '0'" },
	{ "--max-sessions=abc", OPT_BAD_VALUE,
	  "vitrine: --max-sessions must be a whole number in 1..256, not 'abc'" },
	{ "--max-sessions 99999999999999999999", OPT_BAD_VALUE,
	  "vitrine: --max-sessions must be a whole number in 1..256, not "
	  "'99999999999999999999'" },
	{ "--max-connections 15", OPT_BAD_VALUE,
	  "vitrine: --max-connections must be a whole number in 16..4096, not '15'" },
	{ "--max-memory-mib 127", OPT_BAD_VALUE,
	  "vitrine: --max-memory-mib must be a whole number in 128..32768, not '127'" },
	{ "--adopt-grace-s 0", OPT_BAD_VALUE,
	  "vitrine: --adopt-grace-s must be a whole number in 1..604800, not '0'" },
	{ "--egress-max-connections 4097", OPT_BAD_VALUE,
	  "vitrine: --egress-max-connections must be a whole number in 1..4096, not '4097'" },
	{ "--audit-log-max-bytes 4095", OPT_BAD_VALUE,
	  "vitrine serve: --audit-log-max-bytes must be a number of bytes, at least 4096, not "
	  "'4095'" },
	{ "--record-max-bytes 1125899906842625", OPT_BAD_VALUE,
	  "vitrine serve: --record-max-bytes must be a number of bytes, at least 4096, not "
	  "'1125899906842625'" },
	{ "--log-format xml", OPT_BAD_VALUE,
	  "vitrine serve: --log-format is text or json, not 'xml'" },
	{ "--on-stop x", OPT_BAD_VALUE, "vitrine serve: --on-stop must be keep, pause or kill" },
	{ "--on-abandon keep", OPT_BAD_VALUE, "vitrine serve: --on-abandon must be pause or kill" },
	{ "--node A", OPT_BAD_VALUE,
	  "vitrine serve: --node must be 1..20 lowercase letters and digits, not 'A'" },
	{ "--node abcdefghijklmnopqrstu", OPT_BAD_VALUE,
	  "vitrine serve: --node must be 1..20 lowercase letters and digits, not "
	  "'abcdefghijklmnopqrstu'" },
	{ "--qemu-uids 5", OPT_BAD_VALUE,
	  "vitrine serve: --qemu-uids must be FIRST-LAST (1 <= FIRST <= LAST, at most 65536 "
	  "uids) or none, not '5'" },
	{ "--egress-map foo", OPT_BAD_VALUE,
	  "vitrine serve: --egress-map wants NAME=ADDRESS, not 'foo'" },
	{ "--listen nocolon", OPT_BAD_VALUE,
	  "vitrine serve: --listen must be HOST:PORT, not 'nocolon'" },
	{ "--listen :80", OPT_BAD_VALUE, "vitrine serve: --listen must be HOST:PORT, not ':80'" },
	{ "--listen h:99999", OPT_BAD_VALUE,
	  "vitrine: --listen port must be a whole number in 0..65535, not '99999'\n"
	  "vitrine serve: --listen must be HOST:PORT, not 'h:99999'" },
	{ "extra", SERVE_CONFIG_BAD_ARG, "vitrine serve: unexpected argument 'extra'" },
	{ "-", SERVE_CONFIG_BAD_ARG, "vitrine serve: unexpected argument '-'" },
	{ "-- --max-sessions", SERVE_CONFIG_BAD_ARG,
	  "vitrine serve: unexpected argument '--max-sessions'" },
	/* Options first, in their order; then stray words; then --listen. */
	{ "extra --max-sessions 0 --node A", OPT_BAD_VALUE,
	  "vitrine: --max-sessions must be a whole number in 1..256, not '0'" },
	{ "--listen x extra", SERVE_CONFIG_BAD_ARG, "vitrine serve: unexpected argument 'extra'" },
	{ "--max-sessions 0 --help", OPT_BAD_VALUE,
	  "vitrine: --max-sessions must be a whole number in 1..256, not '0'" },
};

static void test_bad_sets(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct serve_config cfg;
		char err[512];
		int rc = parse(bad[i].line, &cfg, err, sizeof(err));

		if (rc != bad[i].status || strcmp(err, bad[i].err))
			fail_msg("`serve %s`: %d '%s' (want %d '%s')", bad[i].line, rc, err,
				 bad[i].status, bad[i].err);
	}
}

/* serve's help: every row, in the columns it always had. */
static void test_usage(void **state)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	assert_non_null(f);
	serve_config_usage(f);
	fclose(f);
	assert_true(!strncmp(text, "usage: vitrine serve [options]\n", 31));
	assert_non_null(strstr(text, "\n  --listen HOST:PORT   where to listen (default "
				     "127.0.0.1:8080; port 0 picks one)\n"));
	assert_non_null(strstr(text,
			       "\n  --max-connections N  client connections at once (default "
			       "512; more are closed\n                       as they come)\n"));
	assert_non_null(strstr(text, "\n  --max-connections-per-ip N  of those from one address"));
	assert_non_null(strstr(text, "(default 900000-900999, reserved by the installer;\n"));
	assert_non_null(strstr(text, "\n  --demo-template NAME  start the demo session from this "
				     "template instead\n"));
	assert_null(strstr(text, "--help"));
	for (const char *line = strchr(text, '\n') + 1; *line; line = strchr(line, '\n') + 1)
		if (strncmp(line, "  --", 4) &&
		    (strncmp(line, "                       ", 23) || line[23] == ' '))
			fail_msg("a help line out of its column: %.*s", (int)strcspn(line, "\n"),
				 line);
	free(text);
}

/* The table mechanism beyond serve's rows: letters, their groups and
 * arguments, the non-options in order, and the help's two columns. */
struct demo_conf {
	bool verbose;
	const char *out;
	int n;
};

static const struct opt demo_rows[] = {
	{ "verbose", 'v', NULL, "say more", .set = opt_set_flag,
	  .off = offsetof(struct demo_conf, verbose) },
	{ "output", 'o', "FILE", "write FILE\nand nothing else", .set = opt_set_str,
	  .off = offsetof(struct demo_conf, out) },
	{ "number-of-things", 0, "N", "a number", .set = opt_set_int,
	  .off = offsetof(struct demo_conf, n), .min = -3, .max = 3 },
	{ "help", 'h', NULL, NULL, .set = NULL },
};

static int demo_parse(const char *line, struct demo_conf *c, struct opt_args *args, char *err)
{
	static char buf[512];
	static char *argv[MAX_WORDS];
	int argc = split(line, buf, sizeof(buf), argv);

	argv[0] = "demo";
	memset(c, 0, sizeof(*c));
	err[0] = '\0';
	return opt_parse(demo_rows, 4, c, argc, argv, args, err, 256);
}

static void test_opt_table(void **state)
{
	struct demo_conf c;
	struct opt_args args;
	char err[256], *text = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_int_equal(demo_parse("a -vo x b --number-of-things=-3 -- -c", &c, &args, err),
			 OPT_OK);
	assert_true(c.verbose);
	assert_string_equal(c.out, "x");
	assert_int_equal(c.n, -3);
	assert_int_equal(args.n, 3);
	assert_string_equal(args.v[0], "a");
	assert_string_equal(args.v[1], "b");
	assert_string_equal(args.v[2], "-c");
	assert_int_equal(demo_parse("-oy", &c, &args, err), OPT_OK);
	assert_string_equal(c.out, "y");
	assert_int_equal(demo_parse("-v -o", &c, &args, err), OPT_BAD_LINE);
	assert_string_equal(err, "demo: option requires an argument -- 'o'");
	assert_int_equal(demo_parse("-vq", &c, &args, err), OPT_BAD_LINE);
	assert_string_equal(err, "demo: invalid option -- 'q'");
	assert_int_equal(demo_parse("-vh -q", &c, &args, err), OPT_HELP);
	assert_int_equal(demo_parse("--number-of-things 4", &c, &args, err), OPT_BAD_VALUE);
	assert_string_equal(err, "vitrine: --number-of-things must be a whole number in -3..3, "
				 "not '4'");
	assert_int_equal(demo_parse("1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18", &c, &args, err),
			 OPT_OK);
	assert_int_equal(args.n, 18);
	assert_string_equal(args.v[OPT_MAX_ARGS - 1], "16");

	f = open_memstream(&text, &len);
	assert_non_null(f);
	opt_usage(f, demo_rows, 4);
	fclose(f);
	assert_string_equal(text, "  -v, --verbose        say more\n"
				  "  -o, --output FILE    write FILE\n"
				  "                       and nothing else\n"
				  "  --number-of-things N  a number\n");
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),     cmocka_unit_test(test_good_set),
		cmocka_unit_test(test_getopt_forms), cmocka_unit_test(test_bad_sets),
		cmocka_unit_test(test_usage),	     cmocka_unit_test(test_opt_table),
	};

	return cmocka_run_group_tests_name("serve's command line", tests, NULL, NULL);
}
