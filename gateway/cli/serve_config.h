/* gateway/cli/serve_config.h: `vitrine serve`'s command line as one
 * configuration, read from one option table (common/opt.h) whose rows
 * also print `vitrine serve --help`. Pure: what the environment and the
 * host add (VITRINE_HOME, the host name, the QEMU uid range) is gw_start's. */
#ifndef VITRINE_GATEWAY_SERVE_CONFIG_H
#define VITRINE_GATEWAY_SERVE_CONFIG_H

#include "common/log.h"
#include "gateway/core/gw.h"
#include "gateway/egress/egress.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* Every option of `vitrine serve`; strings point into argv (NULL: not
 * given, gw_start's default). */
struct serve_config {
	const char *listen; /* --listen, split into host and port */
	char host[128];
	int port; /* 0: any */
	const char *api_key_file; /* NULL: $VITRINE_HOME/api-key */
	const char *origins; /* NULL: the public URL */
	const char *public_url; /* NULL: http://HOST:PORT */
	const char *public_domain; /* NULL: no {port}-{id}.DOMAIN host names */
	const char *web_dir;
	const char *state_dir; /* NULL: $VITRINE_HOME/sessions */
	const char *node; /* NULL: the host name's letters and digits */
	const char *vnc_listen;
	const char *e2b_default_template;
	const char *metrics_listen; /* checked when its door opens (exit 1, as ever) */
	const char *audit_log, *access_log;
	int64_t audit_log_max_bytes, access_log_max_bytes;
	int audit_log_keep; /* old audit files kept (the access log keeps one) */
	int audit_refused_window_s; /* refused authentications aggregated per address */
	int max_sessions, max_connections, max_connections_per_ip;
	int max_vcpus, max_memory_mib, memory_budget_mib; /* 0: no limit */
	int template_chain_max; /* 0: VMM_TEMPLATE_CHAIN_MAX */
	int stream_idle_s; /* 0: the live view's default */
	int trajectory_max_steps;
	int64_t trajectory_max_bytes;
	int record_fps;
	int64_t record_max_bytes;
	int64_t files_max_bytes; /* a files upload's body at most */
	int usage_retention;
	struct egress_config
		egress; /* --egress-map, --egress-allow-private, --egress-max-connections */
	enum log_format log_format;
	bool log_format_given; /* else VITRINE_LOG_FORMAT's, or text */
	enum gw_on_stop on_stop;
	int adopt_grace_s;
	bool abandon_pause; /* --on-abandon pause (else kill) */
	bool qemu_uids_given; /* else $VITRINE_QEMU_UIDS's range, or the default */
	uid_t qemu_uid_first, qemu_uid_last; /* 0, 0: none */
	bool allow_root_qemu;
	bool allow_no_cgroup; /* guests unconfined where no cgroup can be made (else refused) */
	const char *demo_page, *demo_template;
};

/* What serve_config_parse returns besides OPT_OK, OPT_HELP, OPT_BAD_LINE
 * and OPT_BAD_VALUE (common/opt.h): a word that is no option. */
#define SERVE_CONFIG_BAD_ARG (-3)

/* Fills *cfg with the defaults, then with argv's options (argv[0] is
 * "serve"). Returns OPT_OK; OPT_HELP for --help; or, with a message (no
 * newline; a bad --listen port's has two lines) in err, OPT_BAD_LINE
 * (the usage should follow it), OPT_BAD_VALUE or SERVE_CONFIG_BAD_ARG.
 * Every error is the command's exit status 2. Pure. */
int serve_config_parse(struct serve_config *cfg, int argc, char *const *argv, char *err,
		       size_t errlen);

/* `vitrine serve --help`, from the same table. */
void serve_config_usage(FILE *f);

#endif
