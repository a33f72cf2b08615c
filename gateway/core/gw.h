/* gateway/core/gw.h: the daemon's state, owned by the one lws service thread.
 * Nothing here is touched from another thread. */
#ifndef VITRINE_GATEWAY_GW_H
#define VITRINE_GATEWAY_GW_H

#include "gateway/core/auth.h"

#include "gateway/egress/egress.h"

#include <libwebsockets.h>
#include <stdbool.h>

struct sess;
struct build;
struct encode_pool;

struct gw {
	struct lws_context *ctx; /* owned */
	struct lws_vhost *vhost;
	int port; /* the port actually listened on */
	char operator_key[128];
	char origins[512]; /* WebSocket Origin allowlist, comma-separated */
	char public_url[256]; /* base of the URLs handed out, e.g. http://127.0.0.1:8080 */
	struct sess *sessions; /* owned list, linked by sess::next */
	struct build *builds; /* owned list of template builds (template_build.h) */
	int n_sessions;
	int max_sessions;
	char audit_path[512]; /* live view: audit log file ("" : log lines only) */
	int stream_idle_s; /* live view: hang up on viewers silent this long (0: default) */
	char vnc_listen[64]; /* live view: IPv4 address for VNC doors ("" : 127.0.0.1) */
	/* Operator limits (0: none): per session, and memory over all sessions
	 * (a guest's whole RAM is counted, as it may use it all). */
	int max_vcpus, max_memory_mib, memory_budget_mib;
	int vcpus_used, memory_used_mib; /* by the sessions in the registry */
	struct egress_config egress_cfg; /* the operator's part of every session's egress */
	struct encode_pool *encoders; /* owned: every screenshot and stream encode, off the loop
				       * (serve does not start without it) */
	volatile int stop; /* set by a signal; the loop exits */
};

#endif
