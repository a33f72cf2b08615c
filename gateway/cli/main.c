/* gateway/cli/main.c: the `vitrine` binary: one entry point, subcommands. */
#include "common/opt.h"
#include "gateway/cli/cli.h"
#include "vmm-qemu/privd.h"
#include "vmm-qemu/shim.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

volatile sig_atomic_t cli_interrupted;

static void on_signal(int sig)
{
	(void)sig;
	cli_interrupted = 1;
}

int cli_parse_int(const char *opt, const char *s, int min, int max, int *out)
{
	char err[PATH_MAX];

	if (opt_parse_int(opt, s, min, max, out, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(int, char **);
	const char *help;
} commands[] = {
	{ "serve", cmd_serve, "run the gateway: HTTP API for sessions (see docs/api.md)" },
	{ "boot", cmd_boot_any,
	  "boot a guest image (or --template NAME), wait until ready, optionally screenshot it" },
	{ "template", cmd_template, "make, list and remove templates (saved ready guests)" },
	{ "accel", cmd_accel, "show which accelerator guests would use, and why" },
	{ "gc", cmd_gc, "remove run dirs left behind by killed vitrine processes" },
	{ "create", cmd_create, "ask the gateway for a new session (prints it as JSON)" },
	{ "ls", cmd_ls, "list the gateway's sessions" },
	{ "show", cmd_show, "show one session as JSON" },
	{ "rm", cmd_rm, "delete a session" },
	{ "pause", cmd_pause, "pause a session, in memory or (--disk) to disk" },
	{ "resume", cmd_resume, "resume a paused session" },
	{ "fork", cmd_fork, "start a copy of a running session (prints it as JSON)" },
	{ "screenshot", cmd_screenshot, "save a session's screen to a file" },
	{ "act", cmd_act, "send one action (click, type, key...) to a session" },
	{ "key", cmd_key, "make, list and revoke API keys (e2b_ + hex, for E2B's SDKs too)" },
	{ "project", cmd_project, "make, list, change and remove projects (tenants, quotas)" },
	{ "shim", vmm_shim_main, "hold a guest's QEMU so that it outlives the gateway (internal)" },
	{ "privd", vmm_privd_main, "the gateway's root helper (internal)" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: vitrine COMMAND [OPTIONS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\n`vitrine COMMAND --help` describes each command's options.\n");
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal }; /* no SA_RESTART: poll wakes */

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "vitrine: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
