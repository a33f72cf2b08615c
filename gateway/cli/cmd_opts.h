/* gateway/cli/cmd_opts.h: the command lines of `vitrine`'s subcommands (but
 * serve's, serve_config.h): each command's options as one table (common/opt.h)
 * whose rows are read into a small configuration and print the command's
 * --help. The gateway's clients share one set of rows for --gateway and
 * --api-key-file. Pure: reading a line prints nothing and touches neither
 * files nor the environment; what the command then does with the gateway,
 * a guest or a file is its own (cmd_*.c).
 *
 * Every parse function returns OPT_OK; OPT_HELP for --help; or, with one
 * message (no newline) in err, OPT_BAD_LINE when the command's usage should
 * follow it, OPT_BAD_VALUE when not. Every error is exit status 2
 * (cli_cmd_answer). Strings in a configuration point into argv. */
#ifndef VITRINE_GATEWAY_CLI_CMD_OPTS_H
#define VITRINE_GATEWAY_CLI_CMD_OPTS_H

#include "common/opt.h"
#include "gateway/cli/cli.h"
#include "vmm-qemu/spec.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* A command as its --help shows it. */
struct cli_cmd {
	const char *name; /* "vitrine show": its messages' prefix */
	const char *head; /* its usage line(s) and what comes before the options */
	const struct opt *rows;
	size_t n_rows;
	const char *foot; /* what comes after them; NULL: nothing */
};

/* cmd's help: head, its rows' lines (opt_usage), foot. */
void cli_cmd_usage(const struct cli_cmd *cmd, FILE *f);

/* What a command does with a parse function's answer rc: -1 for OPT_OK
 * (go on); else the exit status once done: 0 after the usage on stdout for
 * OPT_HELP, 2 after err (and after OPT_BAD_LINE the usage) on stderr. */
int cli_cmd_answer(const struct cli_cmd *cmd, int rc, const char *err);

/* `vitrine boot` (cmd_boot.c) and `vitrine boot --template` (cmd_template.c). */
struct boot_config {
	const char *image, *url, *page, *screenshot, *template_name;
	int width, height, vcpus, memory_mib, timeout_s, hold_s; /* memory_mib 0: the image's */
	bool json;
	enum vmm_accel accel;
};
extern const struct cli_cmd cli_boot_cmd, cli_boot_template_cmd;
/* --image and the options of a boot; its defaults (1280x800, 2 vcpus, 180
 * s, auto) where not given. */
int cli_boot_parse(struct boot_config *c, int argc, char *const *argv, char *err, size_t errlen);
/* --template and the options of a restore. */
int cli_boot_template_parse(struct boot_config *c, int argc, char *const *argv, char *err,
			    size_t errlen);

/* `vitrine template create NAME --image IMAGE ...` (cmd_template.c). */
struct template_create_config {
	const char *name;
	/* the guest's, as boot's (memory_mib 0: the image's) */
	const char *image, *url, *page;
	int width, height, vcpus, memory_mib, timeout_s, settle_s;
	bool unless_current;
};
extern const struct cli_cmd cli_template_create_cmd;
int cli_template_create_parse(struct template_create_config *c, int argc, char *const *argv,
			      char *err, size_t errlen);

/* `vitrine gc` (cmd_gc.c). */
struct gc_config {
	const char *state_dir; /* NULL: $VITRINE_HOME/sessions */
	bool dry_run;
};
extern const struct cli_cmd cli_gc_cmd;
int cli_gc_parse(struct gc_config *c, int argc, char *const *argv, char *err, size_t errlen);

/* The gateway's clients: each configuration holds the client (cl: its
 * cmd, the prefix of every message, and --gateway and --api-key-file;
 * cli_client_init does the rest). */

/* `vitrine create` (cmd_client.c). */
struct create_config {
	struct cli_client cl;
	const char *image, *template_name, *url;
	int width, height, vcpus, memory_mib, timeout_s; /* 0: not given (the gateway's) */
	bool wait;
};
extern const struct cli_cmd cli_create_cmd;
int cli_create_parse(struct create_config *c, int argc, char *const *argv, char *err,
		     size_t errlen);

/* `vitrine ls`, `show`, `rm`, `pause`, `resume`, `fork` (cmd_client.c): a
 * session's id (none for ls) and the command's flag. */
struct session_config {
	struct cli_client cl;
	const char *id;
	bool json, wait, disk; /* ls --json; show, fork --wait; pause --disk */
};
extern const struct cli_cmd cli_ls_cmd, cli_show_cmd, cli_rm_cmd, cli_pause_cmd, cli_resume_cmd,
	cli_fork_cmd;
/* cmd is one of those six. */
int cli_session_parse(const struct cli_cmd *cmd, struct session_config *c, int argc,
		      char *const *argv, char *err, size_t errlen);

/* `vitrine screenshot` (cmd_screen.c). */
struct screenshot_config {
	struct cli_client cl;
	const char *id, *out, *format; /* format: NULL, "jpeg" or "png" */
	int quality, width, height; /* 0: not given */
};
extern const struct cli_cmd cli_screenshot_cmd;
int cli_screenshot_parse(struct screenshot_config *c, int argc, char *const *argv, char *err,
			 size_t errlen);

/* `vitrine act` (cmd_screen.c). */
struct act_config {
	struct cli_client cl;
	const char *id, *action, *shot_file; /* action: its JSON text, "-" for stdin's */
};
extern const struct cli_cmd cli_act_cmd;
int cli_act_parse(struct act_config *c, int argc, char *const *argv, char *err, size_t errlen);

/* `vitrine key create|ls|rm` (cmd_key.c); argv[1] is the subcommand. */
enum cli_key_sub { CLI_KEY_CREATE, CLI_KEY_LS, CLI_KEY_RM };
struct key_config {
	struct cli_client cl;
	enum cli_key_sub sub;
	const char *name, *id; /* create --name; rm's ID */
	const char *project; /* create, ls --project: a project's keys */
	bool json; /* ls --json */
};
extern const struct cli_cmd cli_key_cmd;
int cli_key_parse(struct key_config *c, int argc, char *const *argv, char *err, size_t errlen);

/* `vitrine project create|ls|show|set|rm` (cmd_project.c); argv[1] is the
 * subcommand. A quota's text is a whole number or "none" (no limit). */
enum cli_project_sub {
	CLI_PROJECT_CREATE,
	CLI_PROJECT_LS,
	CLI_PROJECT_SHOW,
	CLI_PROJECT_SET,
	CLI_PROJECT_RM
};
struct project_config {
	struct cli_client cl;
	enum cli_project_sub sub;
	const char *name; /* all but ls */
	const char *quota[4]; /* --sessions, --vcpus, --memory-mib, --disk-gib; NULL: not given */
	bool allow_root, deny_root, json;
};
extern const struct cli_cmd cli_project_cmd;
int cli_project_parse(struct project_config *c, int argc, char *const *argv, char *err,
		      size_t errlen);
/* The body of create (with c->name) or set: {"name"?, "quota"?, "allow_root"?}.
 * NULL with a reason in err for a quota that is not a number or "none". */
json_t *cli_project_body(const struct project_config *c, char *err, size_t errlen);

/* `vitrine template save ID NAME` (cmd_template_save.c). */
struct template_save_config {
	struct cli_client cl;
	const char *id, *name;
	bool no_wait;
};
extern const struct cli_cmd cli_template_save_cmd;
int cli_template_save_parse(struct template_save_config *c, int argc, char *const *argv, char *err,
			    size_t errlen);

/* `vitrine template pool NAME N` (cmd_template_pool.c). */
struct template_pool_config {
	struct cli_client cl;
	const char *name;
	int size;
};
extern const struct cli_cmd cli_template_pool_cmd;
int cli_template_pool_parse(struct template_pool_config *c, int argc, char *const *argv, char *err,
			    size_t errlen);

/* `vitrine template build -f FILE` (cmd_template_build.c). */
struct template_build_config {
	struct cli_client cl;
	const char *file, *name; /* name: NULL, the file's "name" */
	bool no_wait;
};
extern const struct cli_cmd cli_template_build_cmd;
int cli_template_build_parse(struct template_build_config *c, int argc, char *const *argv,
			     char *err, size_t errlen);

/* `vitrine template export NAME FILE`, `import FILE [--name N]`, `gc
 * --older-than DURATION` (cmd_template_move.c). */
struct template_move_config {
	struct cli_client cl;
	const char *name, *file; /* import's name: --name, else the file's (in guess) */
	const char *older_than;
	long long older_than_s;
	char guess[64];
};
extern const struct cli_cmd cli_template_export_cmd, cli_template_import_cmd, cli_template_gc_cmd;
int cli_template_export_parse(struct template_move_config *c, int argc, char *const *argv,
			      char *err, size_t errlen);
int cli_template_import_parse(struct template_move_config *c, int argc, char *const *argv,
			      char *err, size_t errlen);
int cli_template_gc_parse(struct template_move_config *c, int argc, char *const *argv, char *err,
			  size_t errlen);

#endif
