/* gateway/cli/gw_start.c: the gateway daemon's start, its loop and its one
 * teardown (gw_start.h). One lws event loop owns every session. */
#include "gateway/cli/gw_start.h"

#include "common/fsutil.h"
#include "common/log.h"
#include "common/test_hook.h"
#include "common/work_queue.h"
#include "display/encode_pool.h"
#include "gateway/api/conn_gate.h"
#include "gateway/api/control.h"
#include "gateway/api/protocols.h"
#include "gateway/api/routes.h"
#include "gateway/api/web.h"
#include "gateway/core/audit.h"
#include "gateway/core/gw.h"
#include "gateway/core/metrics.h"
#include "gateway/core/metrics_proc.h"
#include "gateway/e2b/e2b_api.h"
#include "gateway/guest/exec.h"
#include "gateway/guest/sess_agent.h"
#include "gateway/session/job.h"
#include "gateway/session/pool.h"
#include "gateway/session/registry.h"
#include "gateway/session/session.h"
#include "gateway/session/usage_log.h"
#include "gateway/template/recipe_build.h"
#include "gateway/template/template_build.h"
#include "vmm-qemu/accel.h"
#include "vmm-qemu/jail.h"
#include "vmm-qemu/priv.h"
#include "vmm-qemu/run_lock.h"
#include "vmm-qemu/run_owner.h"
#include "vmm-qemu/vm.h"

#include <ctype.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <unistd.h>

static struct gw *the_gw; /* for the signal handler only */

/* Buffers of 16 MiB or more (the frames, framebuffer and encoder scratch
 * of a guest screen bigger than 2560x1600: sizes a guest picks) come from
 * mmap and go back to the kernel when freed. glibc's default raises its
 * mmap threshold to the size of each such buffer freed (up to 32 MiB),
 * after which they come from the threads' arenas, which keep the pages: a
 * guest that went to 2560x2048 and back left the gateway ~100 MiB bigger
 * for good. A fixed threshold ends that adjustment. It sits above the
 * frames of ordinary screens (1920x1080 is 8 MiB), which stay in the
 * arenas and are reused: a fresh mapping costs its page faults, measured
 * here 1.4 ms more per 4 MiB frame (0.17 ms reused, 1.6 ms mapped). */
#define MMAP_THRESHOLD (16 << 20)

static void on_stop_signal(int sig)
{
	(void)sig;
	if (the_gw) {
		the_gw->stop = 1;
		if (the_gw->ctx)
			lws_cancel_service(the_gw->ctx);
	}
}

/* Resolves the accelerator once, so no request waits on the KVM probe. */
static void warm_accel_probe(void)
{
	struct vmm_image img;
	enum vmm_accel a;
	char err[512], why[256];

	if (vmm_image_load("tiny", &img, err, sizeof(err)) < 0 &&
	    vmm_image_load("desktop", &img, err, sizeof(err)) < 0)
		return;
	vmm_accel_resolve(VMM_ACCEL_AUTO, &img, "qemu-system-x86_64", &a, why, sizeof(why));
	if (a == VMM_ACCEL_TCG)
		log_warn("serve",
			 "guests run under TCG (%s): slower, and per QEMU's security docs "
			 "not a security boundary",
			 why);
	else
		log_info("serve", "guests run under KVM");
}

/* Screenshots and stream frames are encoded on these threads (a job each;
 * past the bound a screenshot is refused with 503, a stream frame waits). */
#define ENCODE_THREADS 3 /* one session holds at most 2: one is left for the others */
#define ENCODE_MAX_JOBS 64

/* The gateway's work queues (docs/architecture.md, "Threads"): round trips
 * to guests, which wait seconds at most, on many workers; bulk work, which
 * may take minutes, on fewer. Not niced: the child processes a worker
 * starts inherit its nice value, and a template build's guest, starved on
 * a busy host, misses its own ready timeout. */
#define GUEST_WORK_THREADS 16
#define GUEST_WORK_MAX_JOBS 1024
#define BULK_WORK_THREADS 6
#define BULK_WORK_MAX_JOBS 256
/* Egress connections wait here for DNS only (their dials are the agent
 * link's): one session's lookups hold at most NET_WORK_PER_SESSION workers,
 * so a guest asking for names that never answer delays its own lookups,
 * not the others'. */
#define NET_WORK_THREADS 16
#define NET_WORK_PER_SESSION 4

/* A worker (an encoder's or a queue's) has a finished job for the loop. */
static void wake_loop(void *ctx)
{
	lws_cancel_service(ctx);
}

/* A work queue whose finished jobs wake ctx's loop (max_per_owner 0: the
 * queue's default). 0 or -errno. */
static int make_queue(struct lws_context *ctx, int threads, int max_jobs, int max_per_owner,
		      struct work_queue **out)
{
	const struct work_queue_config cfg = { .threads = threads,
					       .max_jobs = max_jobs,
					       .max_per_owner = max_per_owner,
					       .wake = wake_loop,
					       .wake_ud = ctx };

	return work_queue_create(&cfg, out);
}

/* --demo: one desktop session showing page_file (or restored from the
 * template tpl, which shows its own page), and how to drive it. 0, or -1
 * after saying why on stderr. */
static int start_demo(struct gw *gw, const char *page_file, const char *tpl)
{
	struct session_request req = { .image = "desktop" };
	struct api_error e;
	struct sess *s;
	size_t len;

	if (tpl) {
		snprintf(req.image, sizeof(req.image), "%s", tpl);
		req.from_template = true;
	} else if (fs_read_file(page_file, SESSION_MAX_PAGE, &req.page, &len) < 0) {
		fprintf(stderr, "vitrine serve: cannot read the demo page %s\n", page_file);
		return -1;
	} else {
		snprintf(req.url, sizeof(req.url), "%s", SESSION_PAGE_URL);
	}
	if (sess_create(gw, &req, &s, &e) < 0) {
		fprintf(stderr, "vitrine serve: demo session: %s: %s\n", e.code, e.message);
		session_request_free(&req);
		return -1;
	}
	session_request_free(&req);
	printf("demo session %s is starting (%s).\n"
	       "  screenshot: curl -s -H 'Authorization: Bearer %s' -o shot.jpg '%s/v1/sessions/%s/screenshot'\n"
	       "  act:        curl -s -H 'Authorization: Bearer %s' -d '{\"action\":\"left_click\",\"coordinate\":[640,400],\"screenshot\":true}' '%s/v1/sessions/%s/actions'\n"
	       "  run:        curl -s -H 'Authorization: Bearer %s' -d '{\"cmd\":\"uname -a\"}' '%s/v1/sessions/%s/exec'\n"
	       "  Playwright: chromium.connectOverCDP('%s/v1/sessions/%s/cdp', {headers: {Authorization: 'Bearer %s'}})\n"
	       "  control token %s, view token %s\n"
	       "  watch it live, and take control: %s/web/#s=%s&t=%s\n",
	       sess_id(s),
	       tpl ? "restored from a template: about a second" : "booting: about 20 s under TCG",
	       sess_view_token(s), gw->public_url, sess_id(s), sess_control_token(s),
	       gw->public_url, sess_id(s), sess_control_token(s), gw->public_url, sess_id(s),
	       gw->public_url, sess_id(s), sess_control_token(s), sess_control_token(s),
	       sess_view_token(s), gw->public_url, sess_id(s), sess_control_token(s));
	fflush(stdout);
	return 0;
}

/* The host name's letters and digits, lowercased (at most GW_NODE_MAX). */
static void default_node(char *out, size_t len)
{
	char host[256] = "";
	size_t n = 0;

	gethostname(host, sizeof(host) - 1);
	for (const char *p = host; *p && n + 1 < len && n < GW_NODE_MAX; p++)
		if (isalnum((unsigned char)*p))
			out[n++] = (char)tolower((unsigned char)*p);
	out[n] = '\0';
	if (!n)
		snprintf(out, len, "node");
}

static int self_path(char *out, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", out, len - 1);

	if (n <= 0)
		return -1;
	out[n] = '\0';
	return 0;
}

/* Serves the loop until no session has a job under way (at most
 * timeout_ms): jobs hold guests that a stop would otherwise lose. */
static void drain_jobs(struct gw *gw, int timeout_ms)
{
	int64_t until = fs_now_ms() + timeout_ms;

	for (;;) {
		bool busy = false;

		for (struct sess *s = sess_first(gw); s; s = sess_next(s))
			busy |= sess_busy_with(s) != NULL;
		if (!busy || fs_now_ms() >= until)
			return;
		lws_service(gw->ctx, 0);
	}
}

/* What --on-stop says: keep the guests for the next gateway, pause them
 * to disk first, or destroy them. */
static void stop_sessions(struct gw *gw)
{
	struct api_error e;

	if (gw->on_stop == GW_STOP_KILL) {
		log_info("serve", "stopping: destroying %d sessions", gw->n_sessions);
		sess_destroy_all(gw);
		return;
	}
	drain_jobs(gw, 60000);
	if (gw->on_stop == GW_STOP_PAUSE) {
		int n = 0;

		/* A pause refused (no space) or failed leaves its guest running:
		 * it is kept for the next gateway, as --on-stop keep would. */
		for (struct sess *s = sess_first(gw); s; s = sess_next(s)) {
			if (!sess_guest_free(s))
				continue;
			if (sess_pause(s, SESS_PAUSE_DISK, &e) == 0)
				n++;
			else
				log_warn("serve", "stopping: %s not paused, kept running: %s",
					 sess_id(s), e.message);
		}
		log_info("serve", "stopping: pausing %d sessions to disk", n);
		drain_jobs(gw, 300000);
	}
	log_info("serve", "stopping: %d sessions left for the next gateway", gw->n_sessions);
	sess_release_all(gw);
}

/* Every connection is a descriptor. The VNC libraries wait on theirs with
 * select(), which cannot take a descriptor number of FD_SETSIZE (1024) or
 * more, so the gateway does not raise its limit past that; the caps on
 * client connections (conn_gate.h) and on guests' egress connections
 * (egress.h) keep it well below instead. Says so when the limit is lower
 * than the caps, plus some descriptors per session (its monitors, VNC,
 * agent link, logs), need. */
static void check_fd_limit(int max_connections, int egress_max, int max_sessions)
{
	rlim_t need = (rlim_t)max_connections + (rlim_t)egress_max + 16 * (rlim_t)max_sessions + 64;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur < need)
		log_warn("serve",
			 "open files limit %llu is below the %llu that --max-connections %d, "
			 "--egress-max-connections %d and --max-sessions %d may take: raise it "
			 "(ulimit -n, LimitNOFILE=) or lower the caps",
			 (unsigned long long)rl.rlim_cur, (unsigned long long)need, max_connections,
			 egress_max, max_sessions);
	if (need > FD_SETSIZE)
		log_warn("serve",
			 "--max-connections %d, --egress-max-connections %d and --max-sessions "
			 "%d may take %llu descriptors, past the %d that the VNC libraries' "
			 "select() can wait on: lower them",
			 max_connections, egress_max, max_sessions, (unsigned long long)need,
			 FD_SETSIZE);
}

/* HOST:PORT into host and *port (port 0: any). 0, or -1. */
static int split_host_port(const char *s, char *host, size_t hostlen, int *port)
{
	const char *colon = strrchr(s, ':');
	char *end;
	long p;

	if (!colon || colon == s || (size_t)(colon - s) >= hostlen)
		return -1;
	p = strtol(colon + 1, &end, 10);
	if (end == colon + 1 || *end || p < 0 || p > 65535)
		return -1;
	snprintf(host, hostlen, "%.*s", (int)(colon - s), s);
	*port = (int)p;
	return 0;
}

/* The --metrics-listen door: a vhost of its own on the same loop, whose
 * only route is GET /metrics (api/protocols.c, metrics_protocols). 0 with
 * its URL in url, or -1 with why in err. */
static int open_metrics_door(struct lws_context *ctx, const char *addr, struct gw *gw, char *url,
			     size_t urllen, char *err, size_t errlen)
{
	static char host[128]; /* lws keeps pointing at it */
	struct lws_context_creation_info mi;
	struct lws_vhost *vh;
	int port;

	if (split_host_port(addr, host, sizeof(host), &port) < 0) {
		snprintf(err, errlen, "--metrics-listen must be HOST:PORT, not '%s'", addr);
		return -1;
	}
	memset(&mi, 0, sizeof(mi));
	mi.port = port;
	mi.iface = host;
	mi.protocols = metrics_protocols;
	mi.vhost_name = "metrics";
	mi.user = gw;
	mi.options = LWS_SERVER_OPTION_VALIDATE_UTF8;
	vh = lws_create_vhost(ctx, &mi);
	if (!vh) {
		snprintf(err, errlen, "cannot listen on %s (--metrics-listen)", addr);
		return -1;
	}
	snprintf(url, urllen, "http://%s:%d/metrics", host, lws_get_vhost_listen_port(vh));
	return 0;
}

/* lws's own timeouts for connections that send nothing (its defaults):
 * between two requests on a kept-alive connection, and from the first byte
 * of a request's head to its end (slowloris). */
#define HTTP_KEEPALIVE_S 5
#define HTTP_HEAD_S 10

/* The test hooks of the gateway (docs/vmm.md, "Test hooks"), read once:
 * shorter fixed waits, so that tests need not sit through them. */
static void read_test_hooks(struct gw *gw, struct lws_context_creation_info *info)
{
	long idle = test_hook_get("VITRINE_TEST_HTTP_IDLE_S", HTTP_HEAD_S);

	gw->control_auth_ms = (int)test_hook_get("VITRINE_TEST_CONTROL_AUTH_MS",
						 CONTROL_AUTH_DEADLINE_MS);
	if (idle) { /* else lws's defaults, the same */
		info->keepalive_timeout = idle < HTTP_KEEPALIVE_S ? (int)idle : HTTP_KEEPALIVE_S;
		info->timeout_secs_ah_idle = (unsigned)idle;
	}
}

/* The options the rooms read from struct gw. */
static void take_config(struct gw *gw, const struct serve_config *cfg)
{
	gw->max_sessions = cfg->max_sessions;
	gw->max_vcpus = cfg->max_vcpus;
	gw->max_memory_mib = cfg->max_memory_mib;
	gw->memory_budget_mib = cfg->memory_budget_mib;
	gw->template_chain_max = cfg->template_chain_max;
	gw->stream_idle_s = cfg->stream_idle_s;
	gw->trajectory_max_steps = cfg->trajectory_max_steps;
	gw->trajectory_max_bytes = cfg->trajectory_max_bytes;
	gw->record_fps = cfg->record_fps;
	gw->record_max_bytes = cfg->record_max_bytes;
	gw->files_max_bytes = cfg->files_max_bytes;
	gw->egress_cfg = cfg->egress;
	if (!gw->egress_cfg.max_total)
		gw->egress_cfg.max_total = EGRESS_DEFAULT_MAX_TOTAL;
	gw->on_stop = cfg->on_stop;
	gw->adopt_grace_s = cfg->adopt_grace_s;
	gw->abandon_pause = cfg->abandon_pause;
	snprintf(gw->origins, sizeof(gw->origins), "%s", cfg->origins ? cfg->origins : "");
	snprintf(gw->vnc_listen, sizeof(gw->vnc_listen), "%s",
		 cfg->vnc_listen ? cfg->vnc_listen : "");
	snprintf(gw->e2b_default_template, sizeof(gw->e2b_default_template), "%s",
		 cfg->e2b_default_template ? cfg->e2b_default_template : "");
	if (cfg->node)
		snprintf(gw->node, sizeof(gw->node), "%s", cfg->node);
	else
		default_node(gw->node, sizeof(gw->node));
}

/* Says once, at start, what guests will not get on this host (the jail
 * itself logs nothing). */
static void say_jail_report(void)
{
	char notes[1024], *line, *save = NULL;

	if (vmm_jail_report(notes, sizeof(notes)) > 0)
		for (line = strtok_r(notes, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
			log_warn("jail", "%s", line);
}

/* The uids guests' QEMUs run as: the environment's range, or --qemu-uids,
 * checked against the host's users when the gateway runs as root. 0, or
 * -1 with why in err. */
static int configure_jail(const struct serve_config *cfg, char *err, size_t errlen)
{
	struct vmm_jail_config jail;
	char why[512];

	vmm_jail_config_get(&jail); /* the environment's, or the default range */
	if (cfg->qemu_uids_given) {
		jail.first = cfg->qemu_uid_first;
		jail.last = cfg->qemu_uid_last;
	}
	jail.allow_root |= cfg->allow_root_qemu;
	jail.allow_no_cgroup |= cfg->allow_no_cgroup;
	if (geteuid() == 0 && jail.first &&
	    vmm_uid_range_check(jail.first, jail.last, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "%s: choose another --qemu-uids", why);
		return -1;
	}
	vmm_jail_configure(&jail);
	say_jail_report();
	if (geteuid() == 0 && !jail.first)
		log_warn("serve", "%s",
			 jail.allow_root ? "QEMU runs as root (--allow-root-qemu)"
					 : "no --qemu-uids range: guests are refused");
	return 0;
}

int gw_start(struct gw *gw, const struct serve_config *cfg, char *err, size_t errlen)
{
	static struct registry registry; /* gw->registry points here once it is open */
	static char web_root[4096]; /* the mount points at it for the context's life */
	static struct lws_http_mount web;
	struct lws_context_creation_info info;
	struct sigaction sa = { .sa_handler = on_stop_signal };
	const char *home = getenv("VITRINE_HOME");
	char key_file[4096], state_dir[PATH_MAX], path[PATH_MAX + 32], why[512];
	char metrics_url[160] = "";

	memset(gw, 0, sizeof(*gw));
	gw->run_lock_fd = -1;
	/* First: from here on gw_stop can undo whatever came before a failure. */
	logfile_init(&gw->audit_log, cfg->audit_log, cfg->audit_log_max_bytes, cfg->audit_log_keep);
	logfile_init(&gw->access_log, cfg->access_log, cfg->access_log_max_bytes, 1);
	audit_refusals_init(&gw->audit_refused, cfg->audit_refused_window_s);
	if (cfg->log_format_given)
		log_set_format(cfg->log_format);
	if (!mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) /* not glibc's malloc (ASan's) */
		log_debug("serve", "mallopt(M_MMAP_THRESHOLD) failed: big buffers stay in arenas");
	take_config(gw, cfg);

	if (configure_jail(cfg, err, errlen) < 0)
		goto fail;

	if (cfg->api_key_file)
		snprintf(key_file, sizeof(key_file), "%s", cfg->api_key_file);
	else
		snprintf(key_file, sizeof(key_file), "%s/api-key",
			 home && *home ? home : "/var/lib/vitrine");
	if (auth_load_or_create_key(key_file, gw->operator_key, sizeof(gw->operator_key), err,
				    errlen) < 0)
		goto fail;
	auth_token_hash(gw->operator_key, gw->operator_hash);

	if (cfg->state_dir)
		snprintf(state_dir, sizeof(state_dir), "%s", cfg->state_dir);
	else
		snprintf(state_dir, sizeof(state_dir), "%s/sessions",
			 home && *home ? home : "/var/lib/vitrine");
	if (registry_open(&registry, state_dir, err, errlen) < 0)
		goto fail;
	gw->registry = &registry;
	/* Before anything in the run base is swept, adopted or started. */
	if ((gw->run_lock_fd = vmm_run_base_lock(vmm_run_base(NULL), err, errlen)) < 0)
		goto fail;
	/* Its run dirs carry its id (vmm-qemu/run_owner.h): the state dir's
	 * real path. */
	vmm_run_owner_set_gateway(realpath(state_dir, path) ? path : state_dir);
	snprintf(path, sizeof(path), "%s/" REGISTRY_KEYS_FILE, state_dir);
	if (api_keys_load(&gw->api_keys, path, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "the API keys: %s", why);
		goto fail;
	}
	snprintf(path, sizeof(path), "%s/" REGISTRY_PROJECTS_FILE, state_dir);
	if (projects_load(&gw->projects, path, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "the projects: %s", why);
		goto fail;
	}
	if (self_path(gw->self_bin, sizeof(gw->self_bin)) < 0) {
		snprintf(err, errlen, "cannot find its own executable");
		goto fail;
	}
	/* Root's work goes to a helper of its own (vmm-qemu/privd.h), started
	 * before anything a client or a guest sends is read. */
	if (geteuid() == 0 && vmm_priv_start(gw->self_bin, vmm_run_base(NULL),
					     vmm_run_owner_gateway(), why, sizeof(why)) < 0) {
		snprintf(err, errlen, "the root helper: %s", why);
		goto fail;
	}
	/* Ended sessions' usage, beside their records; metering goes on
	 * without it (GET /v1/usage then lists live sessions only). */
	gw->usage_log = usage_log_open(state_dir, (size_t)cfg->usage_retention, why, sizeof(why));
	if (!gw->usage_log)
		log_warn("serve", "no usage log of ended sessions: %s", why);
	/* Run dirs of live supervisors and held checkpoints stay. */
	vmm_priv_sweep(vmm_run_base(NULL));
	warm_accel_probe();

	conn_gate_init(cfg->max_connections, cfg->max_connections_per_ip);
	/* E2B's SDKs come in through the front door as its door (its
	 * route's name with it, for the metrics below). */
	if (api_door_register(&e2b_door) < 0) {
		snprintf(err, errlen, "another door than E2B's is registered");
		goto fail;
	}
	metrics_set_routes(route_kind_names, R_KIND_COUNT);
	if (metrics_proc_start() < 0)
		log_warn("serve",
			 "no sampler of the guests' QEMU figures: /metrics goes without them");
	check_fd_limit(cfg->max_connections, gw->egress_cfg.max_total, gw->max_sessions);

	lws_set_log_level(LLL_ERR | LLL_WARN, NULL);
	memset(&info, 0, sizeof(info));
	info.port = cfg->port;
	info.iface = cfg->host;
	info.protocols = api_protocols;
	info.user = gw;
	info.options = LWS_SERVER_OPTION_VALIDATE_UTF8;
	read_test_hooks(gw, &info);
	if (web_mount(&web, cfg->web_dir, web_root, sizeof(web_root)) == 0)
		info.mounts = &web;
	else
		log_warn("serve", "no web viewer: %s has no index.html (see --web-dir)", web_root);
	gw->ctx = lws_create_context(&info);
	if (!gw->ctx) {
		snprintf(err, errlen, "cannot listen on %s", cfg->listen);
		goto fail;
	}
	if (encode_pool_create(ENCODE_THREADS, ENCODE_MAX_JOBS, wake_loop, gw->ctx, &gw->encoders) <
	    0) {
		snprintf(err, errlen, "cannot start the encoder threads");
		goto fail;
	}
	if (make_queue(gw->ctx, GUEST_WORK_THREADS, GUEST_WORK_MAX_JOBS, 0, &gw->guest_work) < 0 ||
	    make_queue(gw->ctx, BULK_WORK_THREADS, BULK_WORK_MAX_JOBS, 0, &gw->bulk_work) < 0 ||
	    make_queue(gw->ctx, NET_WORK_THREADS, gw->egress_cfg.max_total, NET_WORK_PER_SESSION,
		       &gw->net_work) < 0) {
		snprintf(err, errlen, "cannot start the work queues' threads");
		goto fail;
	}
	if (!(gw->execs = exec_runs_create(gw->ctx))) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	/* The warm pools' sizes (their members are adopted as sessions). */
	if (sess_pool_open(gw, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "the warm pools: %s", why);
		goto fail;
	}
	if (cfg->metrics_listen && open_metrics_door(gw->ctx, cfg->metrics_listen, gw, metrics_url,
						     sizeof(metrics_url), err, errlen) < 0)
		goto fail;

	gw->vhost = lws_get_vhost_by_name(gw->ctx, "default");
	gw->port = gw->vhost ? lws_get_vhost_listen_port(gw->vhost) : cfg->port;
	gw->egress_cfg.gateway_port = gw->port;
	snprintf(gw->public_domain, sizeof(gw->public_domain), "%s",
		 cfg->public_domain ? cfg->public_domain : "");
	if (cfg->public_url)
		snprintf(gw->public_url, sizeof(gw->public_url), "%s", cfg->public_url);
	else
		snprintf(gw->public_url, sizeof(gw->public_url), "http://%s:%d", cfg->host,
			 gw->port);
	if (!gw->origins[0])
		snprintf(gw->origins, sizeof(gw->origins), "%s", gw->public_url);

	the_gw = gw;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	printf("vitrine: listening on %s (API key in %s)\n", gw->public_url, key_file);
	if (metrics_url[0])
		printf("vitrine: metrics on %s (no token)\n", metrics_url);
	fflush(stdout);
	return 0;

fail:
	gw_stop(gw);
	return -1;
}

int gw_serve(struct gw *gw, const struct serve_config *cfg)
{
	int rc = 0;

	sess_adopt_all(gw);
	if ((cfg->demo_page || cfg->demo_template) &&
	    start_demo(gw, cfg->demo_page, cfg->demo_template) < 0)
		rc = 1;
	while (rc == 0 && !gw->stop)
		if (lws_service(gw->ctx, 0) < 0)
			break;
	/* Every session and build ends here, while the loop can still run
	 * their jobs; gw_stop then waits for the threads they started. */
	sess_pool_close(gw); /* no refill starts while the sessions stop */
	recipe_build_stop_all(gw); /* its sessions go, whatever --on-stop says */
	stop_sessions(gw);
	template_build_stop_all(gw);
	return rc;
}

void gw_stop(struct gw *gw)
{
	the_gw = NULL; /* a signal from now on finds no context to wake */
	/* Orphaned jobs end (and free their guests) on their own; so do the
	 * dispose jobs of the sessions just destroyed. */
	if (!job_wait_all(30000))
		log_warn("serve", "a session job is still running at exit");
	metrics_proc_stop();
	/* The sessions' links are closed, so their commands have ended: what
	 * the loop has not reaped yet is settled here (a command of a link
	 * still open is cut), without waiting. */
	exec_runs_destroy(gw->execs);
	gw->execs = NULL;
	/* The one wait for the queues' work: what runs finishes (the owners
	 * that went have told theirs to stop), and every done runs here, on
	 * this thread, while the context they may wake still is. */
	work_queue_destroy(gw->guest_work);
	gw->guest_work = NULL;
	sess_agent_poke_all(); /* word of links lost at the end: no one listens */
	work_queue_destroy(gw->bulk_work);
	gw->bulk_work = NULL;
	work_queue_destroy(gw->net_work);
	gw->net_work = NULL;
	encode_pool_destroy(gw->encoders); /* its workers wake the context too */
	gw->encoders = NULL;
	sess_pool_close(gw); /* a start that failed after opening them */
	audit_stop(gw); /* the refusals still only counted are written */
	if (gw->ctx)
		lws_context_destroy(gw->ctx);
	gw->ctx = NULL;
	if (gw->registry)
		registry_close(gw->registry);
	gw->registry = NULL;
	vmm_priv_stop(); /* after the queues: their work may still ask it */
	if (gw->run_lock_fd >= 0)
		close(gw->run_lock_fd); /* the next gateway may have the run base */
	gw->run_lock_fd = -1;
	usage_log_close(gw->usage_log);
	gw->usage_log = NULL;
	logfile_close(&gw->audit_log);
	logfile_close(&gw->access_log);
}
