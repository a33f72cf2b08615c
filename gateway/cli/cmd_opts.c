/* gateway/cli/cmd_opts.c: the subcommands' option tables, their parsers and
 * their help (cmd_opts.h). Each table's rows are in its --help's order; the
 * options several commands take are one set of rows each (the gateway's
 * clients' --gateway and --api-key-file, a guest's size, a boot's
 * screenshot, hold and json), put into each table by a macro whose CONF is
 * the table's configuration. The messages are the ones the commands gave
 * before they had tables. */
#include "gateway/cli/cmd_opts.h"

#include "gateway/core/project_table.h"

#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define N_ROWS(rows) (sizeof(rows) / sizeof((rows)[0]))

/* How a row's argument goes into CONF, the configuration of the table at
 * hand (defined before each table). */
#define STR(field) .set = opt_set_str, .off = offsetof(CONF, field)
#define FLAG(field) .set = opt_set_flag, .off = offsetof(CONF, field)
#define INT(field, lo, hi)                                                                         \
	.set = opt_set_int, .off = offsetof(CONF, field), .min = (lo), .max = (hi)
#define CALL(fn) .set = (fn)

#define HELP_ROW                                                                                   \
	{                                                                                          \
		"help", 0, NULL, NULL, .set = NULL                                                 \
	}

/* Every client of the gateway: where it is and which key to send. */
#define ROW_GATEWAY                                                                                \
	{                                                                                          \
		"gateway", 0, "URL",                                                               \
			"the gateway (default $VITRINE_URL, else " CLI_DEFAULT_GATEWAY ")",        \
			STR(cl.gateway_url)                                                        \
	}
#define ROW_KEY_FILE                                                                               \
	{                                                                                          \
		"api-key-file", 0, "FILE",                                                         \
			"bearer key (default $VITRINE_API_KEY, else $VITRINE_HOME/api-key)",       \
			STR(cl.key_file)                                                           \
	}
#define CLIENT_ROWS ROW_GATEWAY, ROW_KEY_FILE

/* A guest's page and size: create, boot, template create. */
#define ROW_URL                                                                                    \
	{                                                                                          \
		"url", 0, "URL", "page the guest's browser opens", STR(url)                        \
	}
#define ROW_WIDTH                                                                                  \
	{                                                                                          \
		"width", 0, "N", "screen width (default 1280)",                                    \
			INT(width, VMM_MIN_WIDTH, VMM_MAX_WIDTH)                                   \
	}
#define ROW_HEIGHT                                                                                 \
	{                                                                                          \
		"height", 0, "N", "screen height (default 800)",                                   \
			INT(height, VMM_MIN_HEIGHT, VMM_MAX_HEIGHT)                                \
	}
#define ROW_VCPUS                                                                                  \
	{                                                                                          \
		"vcpus", 0, "N", "virtual CPUs (default 2)", INT(vcpus, 1, VMM_MAX_VCPUS)          \
	}
#define ROW_MEMORY                                                                                 \
	{                                                                                          \
		"memory", 0, "MIB", "guest memory (default 2048; tiny 256)",                       \
			INT(memory_mib, VMM_MIN_MEMORY_MIB, VMM_MAX_MEMORY_MIB)                    \
	}
#define GUEST_ROWS ROW_URL, ROW_WIDTH, ROW_HEIGHT, ROW_VCPUS, ROW_MEMORY

/* A guest booted here, not by the gateway: boot, template create. */
#define ROW_IMAGE                                                                                  \
	{                                                                                          \
		"image", 0, "IMAGE",                                                               \
			"guest image (tiny, desktop) or a directory holding image.json",           \
			STR(image)                                                                 \
	}
#define ROW_PAGE                                                                                   \
	{                                                                                          \
		"page", 0, "FILE",                                                                 \
			"host HTML file shown to the guest (default URL:\n" VMM_PAGE_URL ")",      \
			STR(page)                                                                  \
	}
#define ROW_READY_TIMEOUT                                                                          \
	{                                                                                          \
		"timeout", 0, "S", "give up when not ready after S seconds (default 180)",         \
			INT(timeout_s, 1, 3600)                                                    \
	}
#define LOCAL_GUEST_ROWS ROW_IMAGE, GUEST_ROWS, ROW_PAGE, ROW_READY_TIMEOUT

/* What a boot does once its guest is ready: boot, boot --template. */
#define ROW_SCREENSHOT                                                                             \
	{                                                                                          \
		"screenshot", 0, "FILE", "save the screen once ready (.png or .ppm)",              \
			STR(screenshot)                                                            \
	}
#define ROW_HOLD                                                                                   \
	{                                                                                          \
		"hold", 0, "S", "keep the guest running S seconds after ready",                    \
			INT(hold_s, 0, 86400)                                                      \
	}
#define ROW_JSON                                                                                   \
	{                                                                                          \
		"json", 0, NULL, "print a JSON summary (phases, timings) on stdout", FLAG(json)    \
	}
#define READY_ROWS ROW_SCREENSHOT, ROW_HOLD, ROW_JSON

void cli_cmd_usage(const struct cli_cmd *cmd, FILE *f)
{
	fputs(cmd->head, f);
	opt_usage(f, cmd->rows, cmd->n_rows);
	if (cmd->foot)
		fputs(cmd->foot, f);
}

int cli_cmd_answer(const struct cli_cmd *cmd, int rc, const char *err)
{
	if (rc == OPT_OK)
		return -1;
	if (rc == OPT_HELP) {
		cli_cmd_usage(cmd, stdout);
		return 0;
	}
	fprintf(stderr, "%s\n", err);
	if (rc == OPT_BAD_LINE)
		cli_cmd_usage(cmd, stderr);
	return 2;
}

/* Puts the message into err; returns status. */
__attribute__((format(printf, 4, 5))) static int say(int status, char *err, size_t errlen,
						     const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return status;
}

/* Reads argv against cmd's rows into conf and its words into *args. */
static int parse_rows(const struct cli_cmd *cmd, void *conf, int argc, char *const *argv,
		      struct opt_args *args, char *err, size_t errlen)
{
	return opt_parse(cmd->rows, cmd->n_rows, conf, argc, argv, args, err, errlen);
}

/* id as a session id: [a-z0-9]{1,64}. */
static int check_session_id(const struct cli_cmd *cmd, const char *id, char *err, size_t errlen)
{
	size_t n = strspn(id, "abcdefghijklmnopqrstuvwxyz0123456789");

	if (n == 0 || n > 64 || id[n])
		return say(OPT_BAD_VALUE, err, errlen,
			   "%s: '%s' is not a session id (lowercase letters and digits, at most "
			   "64)",
			   cmd->name, id);
	return OPT_OK;
}

static bool shot_suffix_ok(const char *file)
{
	const char *dot = strrchr(file, '.');

	return dot && (!strcmp(dot, ".png") || !strcmp(dot, ".ppm"));
}

/* ---- vitrine boot, vitrine boot --template ---- */

static int set_accel(const struct opt *o, void *conf, const char *arg, char *err, size_t errlen)
{
	struct boot_config *c = conf;

	(void)o;
	if (vmm_accel_parse(arg, &c->accel) < 0)
		return say(-1, err, errlen,
			   "vitrine boot: --accel must be auto, kvm or tcg, not '%s'", arg);
	return 0;
}

#define CONF struct boot_config
static const struct opt boot_rows[] = {
	LOCAL_GUEST_ROWS,
	{ "accel", 0, "auto|kvm|tcg", "accelerator (default auto: KVM when it works)",
	  CALL(set_accel) },
	READY_ROWS,
	HELP_ROW,
};

static const struct opt boot_template_rows[] = {
	{ "template", 0, "NAME", "the template to restore (vitrine template ls)",
	  STR(template_name) },
	READY_ROWS,
	HELP_ROW,
};
#undef CONF

const struct cli_cmd cli_boot_cmd = {
	"vitrine boot",
	"usage: vitrine boot --image IMAGE [options]\n"
	"       vitrine boot --template NAME [--screenshot FILE] [--hold S] [--json]\n",
	boot_rows,
	N_ROWS(boot_rows),
	NULL,
};

const struct cli_cmd cli_boot_template_cmd = {
	"vitrine boot",
	"usage: vitrine boot --template NAME [options]\n",
	boot_template_rows,
	N_ROWS(boot_template_rows),
	NULL,
};

int cli_boot_parse(struct boot_config *c, int argc, char *const *argv, char *err, size_t errlen)
{
	struct opt_args args;
	int rc;

	*c = (struct boot_config){
		.width = 1280, .height = 800, .vcpus = 2, .timeout_s = 180, .accel = VMM_ACCEL_AUTO
	};
	if ((rc = parse_rows(&cli_boot_cmd, c, argc, argv, &args, err, errlen)) != OPT_OK)
		return rc;
	if (args.n)
		return say(OPT_BAD_VALUE, err, errlen, "vitrine boot: unexpected argument '%s'",
			   args.v[0]);
	if (!c->image)
		return say(OPT_BAD_LINE, err, errlen, "vitrine boot: --image is required");
	if (c->screenshot && !shot_suffix_ok(c->screenshot))
		return say(OPT_BAD_VALUE, err, errlen,
			   "vitrine boot: --screenshot must end in .png or .ppm");
	return OPT_OK;
}

int cli_boot_template_parse(struct boot_config *c, int argc, char *const *argv, char *err,
			    size_t errlen)
{
	struct opt_args args;
	int rc;

	*c = (struct boot_config){ .accel = VMM_ACCEL_AUTO };
	if ((rc = parse_rows(&cli_boot_template_cmd, c, argc, argv, &args, err, errlen)) != OPT_OK)
		return rc;
	if (args.n)
		return say(OPT_BAD_VALUE, err, errlen, "vitrine boot: unexpected argument '%s'",
			   args.v[0]);
	if (!c->template_name)
		return say(OPT_BAD_LINE, err, errlen, "vitrine boot: --template is required");
	if (c->screenshot && !shot_suffix_ok(c->screenshot))
		return say(OPT_BAD_VALUE, err, errlen,
			   "vitrine boot: --screenshot must end in .png or .ppm");
	return OPT_OK;
}

/* ---- vitrine template create ---- */

#define CONF struct template_create_config
static const struct opt template_create_rows[] = {
	LOCAL_GUEST_ROWS,
	{ "settle", 0, "S", "wait S seconds more once ready, then save (default 2)",
	  INT(settle_s, 0, 600) },
	{ "unless-current", 0, NULL,
	  "keep an existing template made from the current build\n"
	  "of the image (and make a stale one again)",
	  FLAG(unless_current) },
	HELP_ROW,
};
#undef CONF

const struct cli_cmd cli_template_create_cmd = {
	"vitrine template create",
	"usage: vitrine template create NAME --image IMAGE [options]\n"
	"  boots IMAGE here, waits until it is ready and saves its state as template\n"
	"  NAME ($VITRINE_HOME/templates/NAME)\n",
	template_create_rows,
	N_ROWS(template_create_rows),
	NULL,
};

int cli_template_create_parse(struct template_create_config *c, int argc, char *const *argv,
			      char *err, size_t errlen)
{
	struct opt_args args;
	int rc;

	*c = (struct template_create_config){
		.width = 1280, .height = 800, .vcpus = 2, .timeout_s = 180, .settle_s = 2
	};
	if ((rc = parse_rows(&cli_template_create_cmd, c, argc, argv, &args, err, errlen)) !=
	    OPT_OK)
		return rc;
	if (args.n != 1 || !c->image)
		return say(OPT_BAD_LINE, err, errlen,
			   "vitrine template create: need NAME and --image");
	c->name = args.v[0];
	return OPT_OK;
}

/* ---- vitrine gc ---- */

#define CONF struct gc_config
static const struct opt gc_rows[] = {
	{ "state-dir", 0, "DIR", "the session records (default $VITRINE_HOME/sessions)",
	  STR(state_dir) },
	{ "dry-run", 0, NULL, "say what would go, remove nothing", FLAG(dry_run) },
	HELP_ROW,
};
#undef CONF

const struct cli_cmd cli_gc_cmd = {
	"vitrine gc", "usage: vitrine gc [--state-dir DIR] [--dry-run]\n", gc_rows, N_ROWS(gc_rows),
	NULL,
};

int cli_gc_parse(struct gc_config *c, int argc, char *const *argv, char *err, size_t errlen)
{
	struct opt_args args;
	int rc;

	*c = (struct gc_config){ 0 };
	if ((rc = parse_rows(&cli_gc_cmd, c, argc, argv, &args, err, errlen)) != OPT_OK)
		return rc;
	if (args.n)
		return say(OPT_BAD_LINE, err, errlen, "vitrine gc: unexpected argument '%s'",
			   args.v[0]);
	return OPT_OK;
}

/* ---- vitrine create ---- */

#define CONF struct create_config
static const struct opt create_rows[] = {
	{ "image", 0, "NAME", "guest image (default: the gateway's, desktop)", STR(image) },
	{ "template", 0, "NAME", "start from a template instead of an image", STR(template_name) },
	GUEST_ROWS,
	{ "timeout", 0, "S", "the session ends after S seconds (default: never)",
	  INT(timeout_s, 1, INT_MAX) },
	{ "wait", 0, NULL, "answer once the session is ready (or failed)", FLAG(wait) },
	CLIENT_ROWS,
	HELP_ROW,
};
#undef CONF

const struct cli_cmd cli_create_cmd = {
	"vitrine create",
	"usage: vitrine create [options]\n",
	create_rows,
	N_ROWS(create_rows),
	"Prints the new session as JSON, with its control and view tokens.\n",
};

int cli_create_parse(struct create_config *c, int argc, char *const *argv, char *err, size_t errlen)
{
	struct opt_args args;
	int rc;

	*c = (struct create_config){ .cl.cmd = cli_create_cmd.name };
	if ((rc = parse_rows(&cli_create_cmd, c, argc, argv, &args, err, errlen)) != OPT_OK)
		return rc;
	if (args.n)
		return say(OPT_BAD_VALUE, err, errlen, "vitrine create: unexpected argument '%s'",
			   args.v[0]);
	return OPT_OK;
}

/* ---- vitrine ls, show, rm, pause, resume, fork ---- */

#define CONF struct session_config
static const struct opt ls_rows[] = {
	{ "json", 0, NULL, "print the gateway's answer as JSON", FLAG(json) },
	CLIENT_ROWS,
	HELP_ROW,
};
static const struct opt show_rows[] = {
	{ "wait", 0, NULL, "answer once the session is no longer starting", FLAG(wait) },
	CLIENT_ROWS,
	HELP_ROW,
};
static const struct opt pause_rows[] = {
	{ "disk", 0, NULL,
	  "save the whole guest to disk and stop QEMU (default:\n"
	  "stop it in memory)",
	  FLAG(disk) },
	CLIENT_ROWS,
	HELP_ROW,
};
static const struct opt fork_rows[] = {
	{ "wait", 0, NULL, "answer once the copy is ready", FLAG(wait) },
	CLIENT_ROWS,
	HELP_ROW,
};
/* rm and resume: the client's alone */
static const struct opt session_rows[] = {
	CLIENT_ROWS,
	HELP_ROW,
};
#undef CONF

const struct cli_cmd cli_ls_cmd = {
	"vitrine ls", "usage: vitrine ls [--json]\n", ls_rows, N_ROWS(ls_rows), NULL,
};
const struct cli_cmd cli_show_cmd = {
	"vitrine show", "usage: vitrine show ID [--wait]\n", show_rows, N_ROWS(show_rows), NULL,
};
const struct cli_cmd cli_rm_cmd = {
	"vitrine rm", "usage: vitrine rm ID\n", session_rows, N_ROWS(session_rows), NULL,
};
const struct cli_cmd cli_pause_cmd = {
	"vitrine pause", "usage: vitrine pause ID [--disk]\n", pause_rows, N_ROWS(pause_rows), NULL,
};
const struct cli_cmd cli_resume_cmd = {
	"vitrine resume", "usage: vitrine resume ID\n", session_rows, N_ROWS(session_rows), NULL,
};
const struct cli_cmd cli_fork_cmd = {
	"vitrine fork", "usage: vitrine fork ID [--wait]\n", fork_rows, N_ROWS(fork_rows), NULL,
};

int cli_session_parse(const struct cli_cmd *cmd, struct session_config *c, int argc,
		      char *const *argv, char *err, size_t errlen)
{
	int want = cmd == &cli_ls_cmd ? 0 : 1;
	struct opt_args args;
	int rc;

	*c = (struct session_config){ .cl.cmd = cmd->name };
	if ((rc = parse_rows(cmd, c, argc, argv, &args, err, errlen)) != OPT_OK)
		return rc;
	if (want && !args.n)
		return say(OPT_BAD_LINE, err, errlen, "%s: a session id is required", cmd->name);
	if (args.n > want)
		return say(OPT_BAD_LINE, err, errlen, "%s: unexpected argument '%s'", cmd->name,
			   args.v[want]);
	if (!want)
		return OPT_OK;
	c->id = args.v[0];
	return check_session_id(cmd, c->id, err, errlen);
}

/* ---- vitrine screenshot, vitrine act ---- */

static int set_format(const struct opt *o, void *conf, const char *arg, char *err, size_t errlen)
{
	struct screenshot_config *c = conf;

	(void)o;
	if (strcmp(arg, "jpeg") && strcmp(arg, "png"))
		return say(-1, err, errlen,
			   "vitrine screenshot: --format must be jpeg or png, not '%s'", arg);
	c->format = arg;
	return 0;
}

#define CONF struct screenshot_config
static const struct opt screenshot_rows[] = {
	{ "output", 'o', "FILE", "where to save the image", STR(out) },
	{ "format", 0, "jpeg|png", "(default: png for a .png FILE, else jpeg)", CALL(set_format) },
	{ "quality", 0, "N", "JPEG quality 1..100", INT(quality, 1, 100) },
	{ "width", 0, "N", "scale the image to this width", INT(width, 1, 16384) },
	{ "height", 0, "N", "scale the image to this height", INT(height, 1, 16384) },
	CLIENT_ROWS,
	HELP_ROW,
};
#undef CONF

const struct cli_cmd cli_screenshot_cmd = {
	"vitrine screenshot",
	"usage: vitrine screenshot ID -o FILE [options]\n",
	screenshot_rows,
	N_ROWS(screenshot_rows),
	NULL,
};

int cli_screenshot_parse(struct screenshot_config *c, int argc, char *const *argv, char *err,
			 size_t errlen)
{
	const struct cli_cmd *cmd = &cli_screenshot_cmd;
	struct opt_args args;
	int rc;

	*c = (struct screenshot_config){ .cl.cmd = cmd->name };
	if ((rc = parse_rows(cmd, c, argc, argv, &args, err, errlen)) != OPT_OK)
		return rc;
	if (!args.n)
		return say(OPT_BAD_VALUE, err, errlen, "%s: a session id is required", cmd->name);
	if (args.n > 1)
		return say(OPT_BAD_VALUE, err, errlen, "%s: unexpected argument '%s'", cmd->name,
			   args.v[1]);
	if (!c->out)
		return say(OPT_BAD_VALUE, err, errlen, "%s: -o FILE is required", cmd->name);
	c->id = args.v[0];
	return check_session_id(cmd, c->id, err, errlen);
}

#define CONF struct act_config
static const struct opt act_rows[] = {
	{ "screenshot", 0, "FILE", "ask for the settled screenshot and save it (.png or .jpg)",
	  STR(shot_file) },
	CLIENT_ROWS,
	HELP_ROW,
};
#undef CONF

const struct cli_cmd cli_act_cmd = {
	"vitrine act",
	"usage: vitrine act ID 'ACTION' [--screenshot FILE]\n"
	"  ACTION               one action as JSON, in the Anthropic, OpenAI or vitrine\n"
	"                       dialect (docs/api.md); - reads it from stdin\n",
	act_rows,
	N_ROWS(act_rows),
	"Prints the gateway's reply as JSON, without the image data.\n",
};

int cli_act_parse(struct act_config *c, int argc, char *const *argv, char *err, size_t errlen)
{
	const struct cli_cmd *cmd = &cli_act_cmd;
	struct opt_args args;
	int rc;

	*c = (struct act_config){ .cl.cmd = cmd->name };
	if ((rc = parse_rows(cmd, c, argc, argv, &args, err, errlen)) != OPT_OK)
		return rc;
	if (args.n < 2)
		return say(OPT_BAD_LINE, err, errlen, "%s: a session id and an action are required",
			   cmd->name);
	if (args.n > 2)
		return say(OPT_BAD_LINE, err, errlen, "%s: unexpected argument '%s'", cmd->name,
			   args.v[2]);
	c->id = args.v[0];
	c->action = args.v[1];
	return check_session_id(cmd, c->id, err, errlen);
}

/* ---- vitrine key ---- */

#define CONF struct key_config
static const struct opt key_rows[] = {
	{ "name", 0, "NAME", "create: the key's name, for people (ls shows it)", STR(name) },
	{ "project", 0, "NAME", "create, ls: a key of that project (vitrine project)",
	  STR(project) },
	{ "json", 0, NULL, "ls: print the gateway's answer as JSON", FLAG(json) },
	CLIENT_ROWS,
	HELP_ROW,
};
#undef CONF

const struct cli_cmd cli_key_cmd = {
	"vitrine key",
	"usage: vitrine key create [--name NAME] [--project NAME]\n"
	"       vitrine key ls [--project NAME] [--json]\n"
	"       vitrine key rm ID\n"
	"API keys, shaped e2b_ + hex as E2B's SDKs want them: an admin key has the\n"
	"operator key's rights (but managing keys), a project's key its project's;\n"
	"create prints the key once, on stdout.\n",
	key_rows,
	N_ROWS(key_rows),
	NULL,
};

int cli_key_parse(struct key_config *c, int argc, char *const *argv, char *err, size_t errlen)
{
	static const char *const subs[] = {
		[CLI_KEY_CREATE] = "create", [CLI_KEY_LS] = "ls", [CLI_KEY_RM] = "rm"
	};
	const char *sub = argc > 1 ? argv[1] : "";
	struct opt_args args;
	int rc, want, i = 0;

	*c = (struct key_config){ .cl.cmd = cli_key_cmd.name };
	if (!strcmp(sub, "-h") || !strcmp(sub, "--help"))
		return OPT_HELP;
	if (!*sub)
		return say(OPT_BAD_LINE, err, errlen, "vitrine key: a subcommand is required");
	while (i <= CLI_KEY_RM && strcmp(sub, subs[i]))
		i++;
	if (i > CLI_KEY_RM)
		return say(OPT_BAD_LINE, err, errlen, "vitrine key: unknown subcommand '%s'", sub);
	c->sub = (enum cli_key_sub)i;
	/* argv[1], the subcommand, is the first word: argv[0] stays "key" in
	 * opt_parse's messages. */
	if ((rc = parse_rows(&cli_key_cmd, c, argc, argv, &args, err, errlen)) != OPT_OK)
		return rc;
	if (c->name && c->sub != CLI_KEY_CREATE)
		return say(OPT_BAD_LINE, err, errlen,
			   "vitrine key %s: --name goes with key create only", sub);
	if (c->json && c->sub != CLI_KEY_LS)
		return say(OPT_BAD_LINE, err, errlen,
			   "vitrine key %s: --json goes with key ls only", sub);
	if (c->project && c->sub == CLI_KEY_RM)
		return say(
			OPT_BAD_LINE, err, errlen,
			"vitrine key rm: --project goes with create and ls (rm takes any key's id)");
	if (c->project && !project_name_ok(c->project))
		return say(OPT_BAD_LINE, err, errlen,
			   "vitrine key %s: --project: not a project's name ([a-z0-9-], from a "
			   "letter)",
			   sub);
	want = c->sub == CLI_KEY_RM ? 1 : 0;
	if (args.n - 1 < want)
		return say(OPT_BAD_LINE, err, errlen, "vitrine key %s: a key id is required", sub);
	if (args.n - 1 > want)
		return say(OPT_BAD_LINE, err, errlen, "vitrine key %s: unexpected argument '%s'",
			   sub, args.v[1 + want]);
	c->id = want ? args.v[1] : NULL;
	return OPT_OK;
}

/* ---- vitrine project ---- */

#define CONF struct project_config
static const struct opt project_rows[] = {
	{ "sessions", 0, "N|none", "create, set: its sessions at most", STR(quota[0]) },
	{ "vcpus", 0, "N|none", "create, set: vCPUs its running guests hold at most",
	  STR(quota[1]) },
	{ "memory-mib", 0, "N|none", "create, set: memory its running guests hold at most",
	  STR(quota[2]) },
	{ "disk-gib", 0, "N|none", "create, set: disk its sessions and templates take at most",
	  STR(quota[3]) },
	{ "allow-root", 0, NULL, "create, set: its keys may run commands as root",
	  FLAG(allow_root) },
	{ "deny-root", 0, NULL, "set: its keys may not run commands as root", FLAG(deny_root) },
	{ "json", 0, NULL, "ls, show: print the gateway's answer as JSON", FLAG(json) },
	CLIENT_ROWS,
	HELP_ROW,
};
#undef CONF

const struct cli_cmd cli_project_cmd = {
	"vitrine project",
	"usage: vitrine project create NAME [--sessions N] [--vcpus N] [--memory-mib N]\n"
	"                              [--disk-gib N] [--allow-root]\n"
	"       vitrine project ls [--json]\n"
	"       vitrine project show NAME [--json]\n"
	"       vitrine project set NAME [--sessions N|none] [--vcpus N|none] ...\n"
	"                                [--allow-root|--deny-root]\n"
	"       vitrine project rm NAME\n"
	"Projects (tenants): their keys (vitrine key create --project NAME) see their\n"
	"own sessions and templates alone, held to the project's quotas.\n",
	project_rows,
	N_ROWS(project_rows),
	NULL,
};

int cli_project_parse(struct project_config *c, int argc, char *const *argv, char *err,
		      size_t errlen)
{
	static const char *const subs[] = { [CLI_PROJECT_CREATE] = "create",
					    [CLI_PROJECT_LS] = "ls",
					    [CLI_PROJECT_SHOW] = "show",
					    [CLI_PROJECT_SET] = "set",
					    [CLI_PROJECT_RM] = "rm" };
	const char *sub = argc > 1 ? argv[1] : "";
	bool quota = false;
	struct opt_args args;
	int rc, i = 0;

	*c = (struct project_config){ .cl.cmd = cli_project_cmd.name };
	if (!strcmp(sub, "-h") || !strcmp(sub, "--help"))
		return OPT_HELP;
	if (!*sub)
		return say(OPT_BAD_LINE, err, errlen, "vitrine project: a subcommand is required");
	while (i <= CLI_PROJECT_RM && strcmp(sub, subs[i]))
		i++;
	if (i > CLI_PROJECT_RM)
		return say(OPT_BAD_LINE, err, errlen, "vitrine project: unknown subcommand '%s'",
			   sub);
	c->sub = (enum cli_project_sub)i;
	if ((rc = parse_rows(&cli_project_cmd, c, argc, argv, &args, err, errlen)) != OPT_OK)
		return rc;
	for (int q = 0; q < 4; q++)
		quota = quota || c->quota[q];
	if ((quota || c->allow_root) && c->sub != CLI_PROJECT_CREATE && c->sub != CLI_PROJECT_SET)
		return say(OPT_BAD_LINE, err, errlen,
			   "vitrine project %s: quotas and --allow-root go with create and set",
			   sub);
	if (c->deny_root && (c->sub != CLI_PROJECT_SET || c->allow_root))
		return say(OPT_BAD_LINE, err, errlen,
			   "vitrine project %s: --deny-root goes with set, without --allow-root",
			   sub);
	if (c->json && c->sub != CLI_PROJECT_LS && c->sub != CLI_PROJECT_SHOW)
		return say(OPT_BAD_LINE, err, errlen,
			   "vitrine project %s: --json goes with ls and show", sub);
	if (c->sub == CLI_PROJECT_SET && !quota && !c->allow_root && !c->deny_root)
		return say(OPT_BAD_LINE, err, errlen,
			   "vitrine project set: say what changes (a quota, --allow-root or "
			   "--deny-root)");
	if (c->sub == CLI_PROJECT_LS ? args.n > 1 : args.n != 2)
		return say(OPT_BAD_LINE, err, errlen, "vitrine project %s: %s", sub,
			   c->sub == CLI_PROJECT_LS ? "takes no argument"
			   : args.n < 2		    ? "a project name is required"
						    : "one project name only");
	c->name = c->sub == CLI_PROJECT_LS ? NULL : args.v[1];
	if (c->name && !project_name_ok(c->name))
		return say(OPT_BAD_LINE, err, errlen,
			   "vitrine project %s: '%s' is not a project's name (1..%d of [a-z0-9-], "
			   "from a letter)",
			   sub, c->name, PROJECT_NAME_MAX);
	return OPT_OK;
}

json_t *cli_project_body(const struct project_config *c, char *err, size_t errlen)
{
	static const char *const names[4] = { "sessions", "vcpus", "memory_mib", "disk_gib" };
	json_t *body = json_object(), *quota = json_object();

	for (int q = 0; body && quota && q < 4; q++) {
		char *end;
		long long v;

		if (!c->quota[q])
			continue;
		if (!strcmp(c->quota[q], "none")) {
			json_object_set_new(quota, names[q], json_null());
			continue;
		}
		v = strtoll(c->quota[q], &end, 10);
		if (!*c->quota[q] || *end || v < 0) {
			snprintf(err, errlen,
				 "vitrine project: --%s takes a whole number or \"none\"",
				 q == 2	  ? "memory-mib"
				 : q == 3 ? "disk-gib"
					  : names[q]);
			json_decref(body);
			json_decref(quota);
			return NULL;
		}
		json_object_set_new(quota, names[q], json_integer(v));
	}
	if (!body || !quota) {
		json_decref(body);
		json_decref(quota);
		snprintf(err, errlen, "vitrine project: out of memory");
		return NULL;
	}
	if (c->sub == CLI_PROJECT_CREATE)
		json_object_set_new(body, "name", json_string(c->name));
	if (json_object_size(quota))
		json_object_set(body, "quota", quota);
	json_decref(quota);
	if (c->allow_root || c->deny_root)
		json_object_set_new(body, "allow_root", json_boolean(c->allow_root));
	return body;
}

/* ---- vitrine template save, build, export, import, gc ---- */

#define CONF struct template_save_config
static const struct opt template_save_rows[] = {
	{ "no-wait", 0, NULL, "answer once the save has started (the template is \"building\")",
	  FLAG(no_wait) },
	CLIENT_ROWS,
	HELP_ROW,
};
#undef CONF

const struct cli_cmd cli_template_save_cmd = {
	"vitrine template save",
	"usage: vitrine template save ID NAME [--no-wait]\n"
	"  saves session ID (running or paused in memory; it runs on) as template NAME\n",
	template_save_rows,
	N_ROWS(template_save_rows),
	NULL,
};

int cli_template_save_parse(struct template_save_config *c, int argc, char *const *argv, char *err,
			    size_t errlen)
{
	const struct cli_cmd *cmd = &cli_template_save_cmd;
	struct opt_args args;
	int rc;

	*c = (struct template_save_config){ .cl.cmd = cmd->name };
	if ((rc = parse_rows(cmd, c, argc, argv, &args, err, errlen)) != OPT_OK)
		return rc;
	if (args.n != 2)
		return say(OPT_BAD_LINE, err, errlen,
			   "%s: a session id and a template name are required", cmd->name);
	c->id = args.v[0];
	c->name = args.v[1];
	return check_session_id(cmd, c->id, err, errlen);
}

static bool template_name_ok(const char *name);

#define CONF struct template_pool_config
static const struct opt template_pool_rows[] = {
	CLIENT_ROWS,
	HELP_ROW,
};
#undef CONF

const struct cli_cmd cli_template_pool_cmd = {
	"vitrine template pool",
	"usage: vitrine template pool NAME N\n"
	"  keeps N sessions of template NAME restored and paused, for creates to take\n"
	"  (0 drops the pool; docs/templates.md \"Warm pools\")\n",
	template_pool_rows,
	N_ROWS(template_pool_rows),
	NULL,
};

int cli_template_pool_parse(struct template_pool_config *c, int argc, char *const *argv, char *err,
			    size_t errlen)
{
	const struct cli_cmd *cmd = &cli_template_pool_cmd;
	struct opt_args args;
	char *end;
	long n;
	int rc;

	*c = (struct template_pool_config){ .cl.cmd = cmd->name };
	if ((rc = parse_rows(cmd, c, argc, argv, &args, err, errlen)) != OPT_OK)
		return rc;
	if (args.n != 2)
		return say(OPT_BAD_LINE, err, errlen, "%s: a template name and a size are required",
			   cmd->name);
	c->name = args.v[0];
	if (!template_name_ok(c->name))
		return say(OPT_BAD_VALUE, err, errlen,
			   "%s: bad template name '%s' (1-63 of a-z, 0-9, '_', '-')", cmd->name,
			   c->name);
	n = strtol(args.v[1], &end, 10);
	if (end == args.v[1] || *end || n < 0 || n > 1000)
		return say(OPT_BAD_VALUE, err, errlen, "%s: bad size '%s' (a number, 0 for none)",
			   cmd->name, args.v[1]);
	c->size = (int)n;
	return OPT_OK;
}

#define CONF struct template_build_config
static const struct opt template_build_rows[] = {
	{ "file", 'f', "FILE", "the recipe (docs/templates.md)", STR(file) },
	{ "name", 0, "NAME", "the template's name (default: the file's \"name\")", STR(name) },
	{ "no-wait", 0, NULL, "answer once the build has started", FLAG(no_wait) },
	CLIENT_ROWS,
	HELP_ROW,
};
#undef CONF

const struct cli_cmd cli_template_build_cmd = {
	"vitrine template build",
	"usage: vitrine template build -f FILE [--name NAME] [--no-wait]\n"
	"  builds template NAME (else the file's \"name\") from the recipe in FILE; an\n"
	"  unchanged recipe on an unchanged base is up to date and not built again;\n"
	"  prints each step's output lines on stderr as they come, then its status line\n",
	template_build_rows,
	N_ROWS(template_build_rows),
	NULL,
};

int cli_template_build_parse(struct template_build_config *c, int argc, char *const *argv,
			     char *err, size_t errlen)
{
	const struct cli_cmd *cmd = &cli_template_build_cmd;
	struct opt_args args;
	int rc;

	*c = (struct template_build_config){ .cl.cmd = cmd->name };
	if ((rc = parse_rows(cmd, c, argc, argv, &args, err, errlen)) != OPT_OK)
		return rc;
	if (!c->file)
		return say(OPT_BAD_LINE, err, errlen, "%s: a recipe file (-f FILE) is required",
			   cmd->name);
	if (args.n)
		return say(OPT_BAD_LINE, err, errlen, "%s: unexpected argument '%s'", cmd->name,
			   args.v[0]);
	return OPT_OK;
}

#define CONF struct template_move_config
static const struct opt template_export_rows[] = {
	CLIENT_ROWS,
	HELP_ROW,
};
static const struct opt template_import_rows[] = {
	{ "name", 0, "N", "the template's name", STR(name) },
	CLIENT_ROWS,
	HELP_ROW,
};
static const struct opt template_gc_rows[] = {
	{ "older-than", 0, "DURATION", "made longer ago than this (N, Ns, Nm, Nh, Nd)",
	  STR(older_than) },
	CLIENT_ROWS,
	HELP_ROW,
};
#undef CONF

const struct cli_cmd cli_template_export_cmd = {
	"vitrine template export",
	"usage: vitrine template export NAME FILE\n"
	"  writes template NAME of the gateway, its disk flattened, with its metadata\n"
	"  and checksums, to FILE (\"-\": standard output)\n",
	template_export_rows,
	N_ROWS(template_export_rows),
	NULL,
};

const struct cli_cmd cli_template_import_cmd = {
	"vitrine template import",
	"usage: vitrine template import FILE [--name N]\n"
	"  gives the gateway the template in FILE (made by export) as N (default: the\n"
	"  file's name without its directory and extension)\n",
	template_import_rows,
	N_ROWS(template_import_rows),
	NULL,
};

const struct cli_cmd cli_template_gc_cmd = {
	"vitrine template gc",
	"usage: vitrine template gc --older-than DURATION\n"
	"  removes the gateway's templates made longer than DURATION ago (N, Ns, Nm, Nh,\n"
	"  Nd) that no session and no other template uses, and lists them\n",
	template_gc_rows,
	N_ROWS(template_gc_rows),
	NULL,
};

/* A template name as the gateway takes it (so that it is safe in a path). */
static bool template_name_ok(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n <= 63 && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_-") == n;
}

int cli_template_export_parse(struct template_move_config *c, int argc, char *const *argv,
			      char *err, size_t errlen)
{
	const struct cli_cmd *cmd = &cli_template_export_cmd;
	struct opt_args args;
	int rc;

	*c = (struct template_move_config){ .cl.cmd = cmd->name };
	if ((rc = parse_rows(cmd, c, argc, argv, &args, err, errlen)) != OPT_OK)
		return rc;
	if (args.n != 2 || !template_name_ok(args.v[0]))
		return say(OPT_BAD_LINE, err, errlen, "%s: a template name and a file are required",
			   cmd->name);
	c->name = args.v[0];
	c->file = args.v[1];
	return OPT_OK;
}

int cli_template_import_parse(struct template_move_config *c, int argc, char *const *argv,
			      char *err, size_t errlen)
{
	const struct cli_cmd *cmd = &cli_template_import_cmd;
	struct opt_args args;
	const char *base;
	int rc;

	*c = (struct template_move_config){ .cl.cmd = cmd->name };
	if ((rc = parse_rows(cmd, c, argc, argv, &args, err, errlen)) != OPT_OK)
		return rc;
	if (args.n != 1)
		return say(OPT_BAD_LINE, err, errlen, "%s: a file is required", cmd->name);
	c->file = args.v[0];
	if (!c->name) {
		base = strrchr(c->file, '/') ? strrchr(c->file, '/') + 1 : c->file;
		snprintf(c->guess, sizeof(c->guess), "%.*s", (int)strcspn(base, "."), base);
		c->name = c->guess;
	}
	if (!template_name_ok(c->name))
		return say(OPT_BAD_VALUE, err, errlen,
			   "%s: bad template name '%s' (1-63 of a-z, 0-9, '_', '-')", cmd->name,
			   c->name);
	return OPT_OK;
}

/* "90", "90s", "15m", "12h", "7d" into seconds; -1 for anything else. */
static long long duration_s(const char *s)
{
	char *end;
	long long n = strtoll(s, &end, 10);
	int unit = !*end	       ? 1
		   : !strcmp(end, "s") ? 1
		   : !strcmp(end, "m") ? 60
		   : !strcmp(end, "h") ? 3600
		   : !strcmp(end, "d") ? 86400
				       : 0;

	if (end == s || n < 0 || unit == 0 || n > 10LL * 366 * 86400 / unit)
		return -1;
	return n * unit;
}

int cli_template_gc_parse(struct template_move_config *c, int argc, char *const *argv, char *err,
			  size_t errlen)
{
	const struct cli_cmd *cmd = &cli_template_gc_cmd;
	struct opt_args args;
	int rc;

	*c = (struct template_move_config){ .cl.cmd = cmd->name };
	if ((rc = parse_rows(cmd, c, argc, argv, &args, err, errlen)) != OPT_OK)
		return rc;
	if (!c->older_than)
		return say(OPT_BAD_LINE, err, errlen, "%s: --older-than is required", cmd->name);
	if (args.n)
		return say(OPT_BAD_LINE, err, errlen, "%s: unexpected argument '%s'", cmd->name,
			   args.v[0]);
	if ((c->older_than_s = duration_s(c->older_than)) < 0)
		return say(OPT_BAD_VALUE, err, errlen,
			   "%s: bad duration '%s' (N, Ns, Nm, Nh or Nd, up to 10 years)", cmd->name,
			   c->older_than);
	return OPT_OK;
}
