/* gateway/cli/serve_config.c: `vitrine serve`'s option table, its parser
 * and its help (serve_config.h). Each row is an option as --help shows it,
 * in --help's order, with the setter that puts it into the configuration. */
#include "gateway/cli/serve_config.h"

#include "common/opt.h"
#include "gateway/action/trajectory.h"
#include "gateway/api/conn_gate.h"
#include "gateway/core/audit_refusals.h"
#include "gateway/core/logfile.h"
#include "gateway/guest/file_xfer.h"
#include "gateway/session/usage_log.h"
#include "gateway/stream/recorder.h"
#include "vmm-qemu/jail.h"
#include "vmm-qemu/spec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* How a row's argument goes into struct serve_config. */
#define CONF(field) offsetof(struct serve_config, field)
#define STR(field) .set = opt_set_str, .off = CONF(field)
#define FLAG(field) .set = opt_set_flag, .off = CONF(field)
#define INT(field, lo, hi) .set = opt_set_int, .off = CONF(field), .min = (lo), .max = (hi)
#define BYTES(field) .set = set_bytes, .off = CONF(field)
#define CALL(fn) .set = (fn)

/* A byte count, 4096..2^50: an int64_t at o->off. */
static int set_bytes(const struct opt *o, void *conf, const char *arg, char *err, size_t errlen)
{
	char *end;
	long long n;

	errno = 0;
	n = strtoll(arg, &end, 10);
	if (errno || end == arg || *end || n < 4096 || n > (1ll << 50)) {
		snprintf(err, errlen,
			 "vitrine serve: --%s must be a number of bytes, at least 4096, not '%s'",
			 o->name, arg);
		return -1;
	}
	*(int64_t *)((char *)conf + o->off) = n;
	return 0;
}

static int set_egress_map(const struct opt *o, void *conf, const char *arg, char *err,
			  size_t errlen)
{
	struct serve_config *cfg = conf;
	char why[512];

	(void)o;
	if (egress_config_add_map(&cfg->egress, arg, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "vitrine serve: %s", why);
		return -1;
	}
	return 0;
}

static int set_log_format(const struct opt *o, void *conf, const char *arg, char *err,
			  size_t errlen)
{
	struct serve_config *cfg = conf;

	(void)o;
	if (log_format_parse(arg, &cfg->log_format) < 0) {
		snprintf(err, errlen, "vitrine serve: --log-format is text or json, not '%s'", arg);
		return -1;
	}
	cfg->log_format_given = true;
	return 0;
}

static int set_node(const struct opt *o, void *conf, const char *arg, char *err, size_t errlen)
{
	struct serve_config *cfg = conf;
	size_t n = strlen(arg);

	(void)o;
	if (n < 1 || n > GW_NODE_MAX || strspn(arg, "abcdefghijklmnopqrstuvwxyz0123456789") != n) {
		snprintf(err, errlen,
			 "vitrine serve: --node must be 1..%d lowercase letters and digits, not "
			 "'%s'",
			 GW_NODE_MAX, arg);
		return -1;
	}
	cfg->node = arg;
	return 0;
}

static int set_on_stop(const struct opt *o, void *conf, const char *arg, char *err, size_t errlen)
{
	struct serve_config *cfg = conf;

	(void)o;
	if (!strcmp(arg, "keep"))
		cfg->on_stop = GW_STOP_KEEP;
	else if (!strcmp(arg, "pause"))
		cfg->on_stop = GW_STOP_PAUSE;
	else if (!strcmp(arg, "kill"))
		cfg->on_stop = GW_STOP_KILL;
	else {
		snprintf(err, errlen, "vitrine serve: --on-stop must be keep, pause or kill");
		return -1;
	}
	return 0;
}

static int set_on_abandon(const struct opt *o, void *conf, const char *arg, char *err,
			  size_t errlen)
{
	struct serve_config *cfg = conf;

	(void)o;
	if (strcmp(arg, "pause") && strcmp(arg, "kill")) {
		snprintf(err, errlen, "vitrine serve: --on-abandon must be pause or kill");
		return -1;
	}
	cfg->abandon_pause = !strcmp(arg, "pause");
	return 0;
}

static int set_qemu_uids(const struct opt *o, void *conf, const char *arg, char *err, size_t errlen)
{
	struct serve_config *cfg = conf;

	(void)o;
	if (vmm_uid_range_parse(arg, &cfg->qemu_uid_first, &cfg->qemu_uid_last) < 0) {
		snprintf(err, errlen,
			 "vitrine serve: --qemu-uids must be FIRST-LAST (1 <= FIRST <= LAST, at "
			 "most 65536 uids) or none, not '%s'",
			 arg);
		return -1;
	}
	cfg->qemu_uids_given = true;
	return 0;
}

/* In --help's order. A row of opt_set_int carries its range. */
static const struct opt serve_opts[] = {
	{ "listen", 0, "HOST:PORT", "where to listen (default 127.0.0.1:8080; port 0 picks one)",
	  STR(listen) },
	{ "api-key-file", 0, "FILE",
	  "operator API key (default $VITRINE_HOME/api-key, made if missing)", STR(api_key_file) },
	{ "origins", 0, "LIST", "WebSocket Origin allowlist, comma-separated (default: same host)",
	  STR(origins) },
	{ "max-sessions", 0, "N", "sessions at once (default 8; more get 429)",
	  INT(max_sessions, 1, 256) },
	{ "max-connections", 0, "N",
	  "client connections at once (default 512; more are closed\n"
	  "as they come)",
	  INT(max_connections, 16, 4096) },
	{ "max-connections-per-ip", 0, "N",
	  "of those from one address (default 128; raise it\n"
	  "behind a reverse proxy)",
	  INT(max_connections_per_ip, 1, 4096) },
	{ "max-vcpus", 0, "N", "vcpus one session may ask for (default 16)",
	  INT(max_vcpus, 1, VMM_MAX_VCPUS) },
	{ "max-memory-mib", 0, "N", "memory one session may ask for (default 32768)",
	  INT(max_memory_mib, VMM_MIN_MEMORY_MIB, VMM_MAX_MEMORY_MIB) },
	{ "memory-budget-mib", 0, "N",
	  "guest memory over all sessions (default: no budget;\n"
	  "past it, new sessions get 503)",
	  INT(memory_budget_mib, VMM_MIN_MEMORY_MIB, 1 << 24) },
	{ "template-chain-max", 0, "N",
	  "template disk layers a save from a session may stack\n"
	  "before it flattens them (default 4)",
	  INT(template_chain_max, 1, 64) },
	{ "public-url", 0, "URL", "base of the URLs handed out (default http://HOST:PORT)",
	  STR(public_url) },
	{ "public-domain", 0, "DOMAIN",
	  "requests to host names PORT-ID.DOMAIN reach port PORT\n"
	  "of session ID's guest (docs/api.md, \"Ports\")",
	  STR(public_domain) },
	{ "web-dir", 0, "DIR",
	  "the web viewer's files (default: BIN/../web, /usr/share/vitrine/web)", STR(web_dir) },
	{ "audit-log", 0, "FILE",
	  "append audit entries (docs/audit.md: who did what to\n"
	  "which session, refused authentications) to FILE",
	  STR(audit_log) },
	{ "audit-log-max-bytes", 0, "N",
	  "past N bytes FILE becomes FILE.1 and a new one\n"
	  "starts (default 67108864)",
	  BYTES(audit_log_max_bytes) },
	{ "audit-log-keep", 0, "N", "old files kept, FILE.1 (newest) .. FILE.N (default 8)",
	  INT(audit_log_keep, 1, LOGFILE_MAX_KEEP) },
	{ "audit-refused-window-s", 0, "N",
	  "per address, refused authentications past the first\n"
	  "8 in N seconds are counted, one summary line each\n"
	  "N seconds (default 60)",
	  INT(audit_refused_window_s, 1, 86400) },
	{ "access-log", 0, "FILE", "append one JSON line per HTTP answer to FILE",
	  STR(access_log) },
	{ "access-log-max-bytes", 0, "N", "the same cap for it (default 67108864)",
	  BYTES(access_log_max_bytes) },
	{ "stream-idle-s", 0, "N", "hang up on stream viewers silent this long (default 30)",
	  INT(stream_idle_s, 1, 3600) },
	{ "trajectory-max-steps", 0, "N",
	  "agent steps each session's trajectory keeps, the\n"
	  "oldest dropped past it (default 1000; 0: none kept)",
	  INT(trajectory_max_steps, 0, 1000000) },
	{ "trajectory-max-bytes", 0, "N",
	  "and bytes of them, screenshots included (default\n"
	  "67108864)",
	  BYTES(trajectory_max_bytes) },
	{ "vnc-listen", 0, "ADDR", "IPv4 address of VNC doors to sessions (default 127.0.0.1)",
	  STR(vnc_listen) },
	{ "e2b-default-template", 0, "T",
	  "E2B's templateID \"desktop\" (and unknown ones) restore\n"
	  "template T (docs/e2b.md)",
	  STR(e2b_default_template) },
	{ "egress-map", 0, "NAME=ADDR",
	  "guests reaching NAME (when a session's egress rules\n"
	  "allow it) connect to ADDR, even a private one; repeatable",
	  CALL(set_egress_map) },
	{ "metrics-listen", 0, "HOST:PORT",
	  "also serve GET /metrics there, without a token\n"
	  "(for a Prometheus on a trusted network; default: none)",
	  STR(metrics_listen) },
	{ "usage-retention", 0, "N",
	  "ended sessions whose usage GET /v1/usage keeps (default\n"
	  "10000; in STATE_DIR/usage.jsonl)",
	  INT(usage_retention, 1, 10000000) },
	{ "log-format", 0, "text|json",
	  "the log on stderr: lines with an RFC 3339 time (default)\n"
	  "or one JSON object a line {time, level, component, msg}",
	  CALL(set_log_format) },
	{ "egress-max-connections", 0, "N",
	  "guests' egress connections over all sessions at\n"
	  "once (default 256; 128 a session in any case)",
	  INT(egress.max_total, 1, 4096) },
	{ "egress-allow-private", 0, NULL,
	  "let names resolve to loopback, private and link-local\n"
	  "addresses (default: refused; the gateway's port always is)",
	  FLAG(egress.allow_private) },
	{ "node", 0, "NAME",
	  "node name every session id starts with: lowercase\n"
	  "letters and digits, up to 20 (default: the host name's)",
	  CALL(set_node) },
	{ "state-dir", 0, "DIR", "session records (default $VITRINE_HOME/sessions)",
	  STR(state_dir) },
	{ "record-fps", 0, "N", "recordings: frames a second at most (default 5)",
	  INT(record_fps, 1, 30) },
	{ "record-max-bytes", 0, "N",
	  "recordings: bytes per session (default 512 MiB; then\n"
	  "the recording stops)",
	  BYTES(record_max_bytes) },
	{ "files-max-bytes", 0, "N",
	  "an upload's body at most, native and E2B's /files\n"
	  "(default 2147483648; larger is refused 413)",
	  BYTES(files_max_bytes) },
	{ "on-stop", 0, "MODE",
	  "on SIGTERM/SIGINT: keep (default: guests run on for the\n"
	  "next gateway), pause (running sessions go to disk first)\n"
	  "or kill (every session is destroyed)",
	  CALL(set_on_stop) },
	{ "adopt-grace-s", 0, "N",
	  "how long a guest waits for a gateway once none is\n"
	  "attached (default 300)",
	  INT(adopt_grace_s, 1, 7 * 24 * 3600) },
	{ "on-abandon", 0, "MODE", "then: pause (default: to disk, for the next gateway) or kill",
	  CALL(set_on_abandon) },
	{ "qemu-uids", 0, "FIRST-LAST",
	  "uids (and gids) guests' QEMUs run as, one per live guest\n"
	  "(default " VMM_QEMU_UIDS_DEFAULT ", reserved by the installer;\n"
	  "none: no range); only when the gateway runs as root",
	  CALL(set_qemu_uids) },
	{ "allow-root-qemu", 0, NULL, "run QEMU as root when there is no range (else refused)",
	  FLAG(allow_root_qemu) },
	{ "allow-no-cgroup", 0, NULL,
	  "run guests without a cgroup where none can be made\n"
	  "(else refused: 503 no_cgroup)",
	  FLAG(allow_no_cgroup) },
	{ "demo", 0, "FILE",
	  "start a desktop session showing this HTML page and\n"
	  "print how to drive it",
	  STR(demo_page) },
	{ "demo-template", 0, "NAME", "start the demo session from this template instead",
	  STR(demo_template) },
	{ "help", 0, NULL, NULL, .set = NULL },
};

#define N_SERVE_OPTS (sizeof(serve_opts) / sizeof(serve_opts[0]))

static void set_defaults(struct serve_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->listen = "127.0.0.1:8080";
	cfg->max_sessions = 8;
	cfg->max_connections = CONN_GATE_DEFAULT_MAX;
	cfg->max_connections_per_ip = CONN_GATE_DEFAULT_PER_IP;
	cfg->audit_log_max_bytes = LOGFILE_DEFAULT_MAX_BYTES;
	cfg->audit_log_keep = AUDIT_LOG_DEFAULT_KEEP;
	cfg->audit_refused_window_s = AUDIT_REFUSALS_DEFAULT_WINDOW_S;
	cfg->access_log_max_bytes = LOGFILE_DEFAULT_MAX_BYTES;
	cfg->trajectory_max_steps = TRAJECTORY_DEFAULT_MAX_STEPS;
	cfg->trajectory_max_bytes = TRAJECTORY_DEFAULT_MAX_BYTES;
	cfg->record_fps = REC_DEFAULT_FPS;
	cfg->record_max_bytes = REC_DEFAULT_MAX_BYTES;
	cfg->files_max_bytes = FILE_XFER_DEFAULT_MAX_BYTES;
	cfg->usage_retention = USAGE_LOG_DEFAULT_RETENTION;
	cfg->on_stop = GW_STOP_KEEP;
	cfg->adopt_grace_s = 300;
	cfg->abandon_pause = true;
}

/* --listen's HOST:PORT into cfg->host and cfg->port. */
static int split_listen(struct serve_config *cfg, char *err, size_t errlen)
{
	const char *colon = strrchr(cfg->listen, ':');
	char why[512] = "";
	int used;

	if (colon && colon != cfg->listen && (size_t)(colon - cfg->listen) < sizeof(cfg->host)) {
		if (opt_parse_int("--listen port", colon + 1, 0, 65535, &cfg->port, why,
				  sizeof(why)) == 0) {
			snprintf(cfg->host, sizeof(cfg->host), "%.*s", (int)(colon - cfg->listen),
				 cfg->listen);
			return 0;
		}
	}
	used = snprintf(err, errlen, "%s%s", why, why[0] ? "\n" : "");
	if (used >= 0 && (size_t)used < errlen)
		snprintf(err + used, errlen - (size_t)used,
			 "vitrine serve: --listen must be HOST:PORT, not '%s'", cfg->listen);
	return -1;
}

int serve_config_parse(struct serve_config *cfg, int argc, char *const *argv, char *err,
		       size_t errlen)
{
	struct opt_args args;
	int rc;

	set_defaults(cfg);
	rc = opt_parse(serve_opts, N_SERVE_OPTS, cfg, argc, argv, &args, err, errlen);
	if (rc != OPT_OK)
		return rc;
	if (args.n) {
		snprintf(err, errlen, "vitrine serve: unexpected argument '%s'", args.v[0]);
		return SERVE_CONFIG_BAD_ARG;
	}
	return split_listen(cfg, err, errlen) < 0 ? OPT_BAD_VALUE : OPT_OK;
}

void serve_config_usage(FILE *f)
{
	fprintf(f, "usage: vitrine serve [options]\n");
	opt_usage(f, serve_opts, N_SERVE_OPTS);
}
