/* gateway/core/gw.h: the daemon's state, owned by the one lws service thread.
 * Nothing here is touched from another thread. */
#ifndef VITRINE_GATEWAY_GW_H
#define VITRINE_GATEWAY_GW_H

#include "gateway/core/audit_refusals.h"
#include "gateway/core/auth.h"
#include "gateway/core/key_table.h"
#include "gateway/core/logfile.h"

#include "gateway/egress/egress.h"

#include <libwebsockets.h>
#include <stdbool.h>

struct sess;
struct build;
struct recipe_build;
struct encode_pool;
struct work_queue;
struct exec_runs;
struct registry;
struct usage_log;
struct sess_pools;

/* A session id: the node name and 16 random lowercase letters and digits
 * (docs/durability.md), with its NUL. */
#define SESS_ID_MAX 72
#define GW_NODE_MAX 20 /* letters and digits of a node name */
#define SESS_ID_RANDOM 16 /* the random letters and digits after it */

/* What a stopping gateway does with its sessions (serve --on-stop). */
enum gw_on_stop {
	GW_STOP_KEEP, /* guests run on for the next gateway to adopt */
	GW_STOP_PAUSE, /* every running session is paused to disk first */
	GW_STOP_KILL, /* every session is destroyed (its guest and checkpoint go) */
};

struct gw {
	struct lws_context *ctx; /* owned */
	struct lws_vhost *vhost;
	int port; /* the port actually listened on */
	char operator_key[128];
	char operator_hash[AUTH_HASH_LEN + 1]; /* of operator_key, what requests are held to */
	struct api_keys api_keys; /* `vitrine key create`'s keys: admin's, or a project's */
	struct projects projects; /* the tenants (core/project_table.h) */
	char origins[512]; /* WebSocket Origin allowlist, comma-separated */
	char public_url[256]; /* base of the URLs handed out, e.g. http://127.0.0.1:8080 */
	/* {port}-{id}.{public_domain} host names reach a guest's port ("": none) */
	char public_domain[192];
	struct sess *sessions; /* owned list, linked by sess::next */
	struct build *builds; /* owned list of template builds (template_build.h) */
	struct recipe_build *recipes; /* owned list of recipe builds (recipe_build.h) */
	int n_sessions;
	int max_sessions;
	struct usage_log *usage_log; /* owned (cli/gw_start.c): ended sessions' usage; NULL: none */
	struct logfile audit_log; /* serve --audit-log (core/audit.h) */
	/* refused authentications per address, and the timer that writes a
	 * closed window's summary (core/audit.c; cancelled by audit_stop) */
	struct audit_refusals audit_refused;
	lws_sorted_usec_list_t audit_sul;
	bool audit_stopped; /* audit_stop ran: no timer, refusals written in full */
	struct logfile access_log; /* serve --access-log: one line per HTTP answer */
	int stream_idle_s; /* live view: hang up on viewers silent this long (0: default) */
	int control_auth_ms; /* WS .../control: deadline of a first-message token
			      * (0: CONTROL_AUTH_DEADLINE_MS; VITRINE_TEST_CONTROL_AUTH_MS) */
	char vnc_listen[64]; /* live view: IPv4 address for VNC doors ("" : 127.0.0.1) */
	char e2b_default_template[64]; /* E2B's "desktop": this template ("": the image) */
	/* Operator limits (0: none): per session, and memory over all sessions
	 * (a guest's whole RAM is counted, as it may use it all). */
	int max_vcpus, max_memory_mib, memory_budget_mib;
	int template_chain_max; /* disk layers before a save flattens; 0: VMM_TEMPLATE_CHAIN_MAX */
	int vcpus_used, memory_used_mib; /* by the sessions in the registry */
	struct egress_config egress_cfg; /* the operator's part of every session's egress */
	int record_fps; /* recordings: frames a second at most (serve --record-fps) */
	int64_t record_max_bytes; /* recordings: bytes per session (--record-max-bytes) */
	int64_t files_max_bytes; /* a files upload's body at most (--files-max-bytes) */
	struct encode_pool *encoders; /* owned: every screenshot and stream encode, off the loop
				       * (serve does not start without it) */
	/* owned (cli/gw_start.c): the gateway's background work, each job's
	 * done reaped on the loop (common/work_queue.h; docs/architecture.md,
	 * "Threads"). guest_work: round trips to a guest that end within
	 * seconds; bulk_work: child processes and disk work that may take
	 * minutes; net_work: the egress proxy's name lookups (a session's
	 * hold a few of its workers at most). Drained once, by gw_stop. */
	struct work_queue *guest_work, *bulk_work, *net_work;
	/* owned (cli/gw_start.c): the commands running in guests, each an
	 * agent channel whose end the loop reaps (guest/exec.h); drained by
	 * gw_stop. */
	struct exec_runs *execs;
	char node[GW_NODE_MAX + 1]; /* prefix of every session id (serve --node) */
	struct registry *registry; /* cli/gw_start.c's: the session records on disk */
	struct sess_pools *pools; /* owned by session/pool.c: the warm pools (sess_pool_open) */
	int run_lock_fd; /* owned: the run base's lock (vmm-qemu/run_lock.h); -1: none */
	char self_bin[4096]; /* this executable, which the guests' supervisors run */
	int adopt_grace_s; /* how long a guest waits for a gateway once none is attached */
	bool abandon_pause; /* past it: pause to disk (else kill) */
	enum gw_on_stop on_stop;
	/* Each session's trajectory (action/trajectory.h): steps and bytes
	 * kept at most; 0 steps keeps none. */
	int trajectory_max_steps;
	int64_t trajectory_max_bytes;
	volatile int stop; /* set by a signal; the loop exits */
};

#endif
