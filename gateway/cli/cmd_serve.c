/* gateway/cli/cmd_serve.c: `vitrine serve`: the gateway daemon. One lws event
 * loop (HTTP now; WebSocket with the screen mirror) owns every session. */
#include "common/fsutil.h"
#include "common/log.h"
#include "common/test_hook.h"
#include "display/encode_pool.h"
#include "gateway/action/run.h"
#include "gateway/action/trajectory.h"
#include "gateway/api/conn_gate.h"
#include "gateway/api/control.h"
#include "gateway/api/protocols.h"
#include "gateway/api/routes.h"
#include "gateway/api/web.h"
#include "gateway/cli/cli.h"
#include "gateway/core/gw.h"
#include "gateway/core/metrics.h"
#include "gateway/core/metrics_proc.h"
#include "gateway/guest/exec.h"
#include "gateway/guest/sess_agent.h"
#include "gateway/session/job.h"
#include "gateway/session/registry.h"
#include "gateway/session/session.h"
#include "gateway/session/usage_log.h"
#include "gateway/stream/rec_export.h"
#include "gateway/stream/recorder.h"
#include "gateway/template/recipe_build.h"
#include "gateway/template/template_build.h"
#include "vmm-qemu/accel.h"
#include "vmm-qemu/jail.h"
#include "vmm-qemu/vm.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <malloc.h>
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

static void serve_usage(FILE *f)
{
	fprintf(f,
		"usage: vitrine serve [options]\n"
		"  --listen HOST:PORT   where to listen (default 127.0.0.1:8080; port 0 picks one)\n"
		"  --api-key-file FILE  operator API key (default $VITRINE_HOME/api-key, made if missing)\n"
		"  --origins LIST       WebSocket Origin allowlist, comma-separated (default: same host)\n"
		"  --max-sessions N     sessions at once (default 8; more get 429)\n"
		"  --max-connections N  client connections at once (default 512; more are closed\n"
		"                       as they come)\n"
		"  --max-connections-per-ip N  of those from one address (default 128; raise it\n"
		"                       behind a reverse proxy)\n"
		"  --max-vcpus N        vcpus one session may ask for (default 16)\n"
		"  --max-memory-mib N   memory one session may ask for (default 32768)\n"
		"  --memory-budget-mib N  guest memory over all sessions (default: no budget;\n"
		"                       past it, new sessions get 503)\n"
		"  --template-chain-max N  template disk layers a save from a session may stack\n"
		"                       before it flattens them (default 4)\n"
		"  --public-url URL     base of the URLs handed out (default http://HOST:PORT)\n"
		"  --web-dir DIR        the web viewer's files (default: BIN/../web, /usr/share/vitrine/web)\n"
		"  --audit-log FILE     append audit entries (docs/audit.md: who did what to\n"
		"                       which session, refused authentications) to FILE\n"
		"  --audit-log-max-bytes N  past N bytes FILE becomes FILE.1 and a new one\n"
		"                       starts (default 67108864)\n"
		"  --access-log FILE    append one JSON line per HTTP answer to FILE\n"
		"  --access-log-max-bytes N  the same cap for it (default 67108864)\n"
		"  --stream-idle-s N    hang up on stream viewers silent this long (default 30)\n"
		"  --trajectory-max-steps N  agent steps each session's trajectory keeps, the\n"
		"                       oldest dropped past it (default 1000; 0: none kept)\n"
		"  --trajectory-max-bytes N  and bytes of them, screenshots included (default\n"
		"                       67108864)\n"
		"  --vnc-listen ADDR    IPv4 address of VNC doors to sessions (default 127.0.0.1)\n"
		"  --e2b-default-template T  E2B's templateID \"desktop\" (and unknown ones) restore\n"
		"                       template T (docs/e2b.md)\n"
		"  --egress-map NAME=ADDR  guests reaching NAME (when a session's egress rules\n"
		"                       allow it) connect to ADDR, even a private one; repeatable\n"
		"  --metrics-listen HOST:PORT  also serve GET /metrics there, without a token\n"
		"                       (for a Prometheus on a trusted network; default: none)\n"
		"  --usage-retention N  ended sessions whose usage GET /v1/usage keeps (default\n"
		"                       10000; in STATE_DIR/usage.jsonl)\n"
		"  --log-format text|json  the log on stderr: lines with an RFC 3339 time (default)\n"
		"                       or one JSON object a line {time, level, component, msg}\n"
		"  --egress-max-connections N  guests' egress connections over all sessions at\n"
		"                       once (default 256; 128 a session in any case)\n"
		"  --egress-allow-private  let names resolve to loopback, private and link-local\n"
		"                       addresses (default: refused; the gateway's port always is)\n"
		"  --node NAME          node name every session id starts with: lowercase\n"
		"                       letters and digits, up to 20 (default: the host name's)\n"
		"  --state-dir DIR      session records (default $VITRINE_HOME/sessions)\n"
		"  --record-fps N       recordings: frames a second at most (default 5)\n"
		"  --record-max-bytes N  recordings: bytes per session (default 512 MiB; then\n"
		"                       the recording stops)\n"
		"  --on-stop MODE       on SIGTERM/SIGINT: keep (default: guests run on for the\n"
		"                       next gateway), pause (running sessions go to disk first)\n"
		"                       or kill (every session is destroyed)\n"
		"  --adopt-grace-s N    how long a guest waits for a gateway once none is\n"
		"                       attached (default 300)\n"
		"  --on-abandon MODE    then: pause (default: to disk, for the next gateway) or kill\n"
		"  --qemu-uids FIRST-LAST  uids (and gids) guests' QEMUs run as, one per live guest\n"
		"                       (default " VMM_QEMU_UIDS_DEFAULT
		", reserved by the installer;\n"
		"                       none: no range); only when the gateway runs as root\n"
		"  --allow-root-qemu    run QEMU as root when there is no range (else refused)\n"
		"  --demo FILE          start a desktop session showing this HTML page and\n"
		"                       print how to drive it\n"
		"  --demo-template NAME start the demo session from this template instead\n");
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

/* --demo: one desktop session showing page_file (or restored from the
 * template tpl, which shows its own page), and how to drive it. */
/* Screenshots and stream frames are encoded on these threads (a job each;
 * past the bound a screenshot is refused with 503, a stream frame waits). */
#define ENCODE_THREADS 3 /* one session holds at most 2: one is left for the others */
#define ENCODE_MAX_JOBS 64

/* An encoder thread has a finished encode for the loop. */
static void wake_loop(void *ctx)
{
	lws_cancel_service(ctx);
}

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
	       s->id,
	       tpl ? "restored from a template: about a second" : "booting: about 20 s under TCG",
	       s->view_token, gw->public_url, s->id, s->control_token, gw->public_url, s->id,
	       s->control_token, gw->public_url, s->id, gw->public_url, s->id, s->control_token,
	       s->control_token, s->view_token, gw->public_url, s->id, s->control_token);
	fflush(stdout);
	return 0;
}

static bool node_name_ok(const char *s)
{
	size_t n = strlen(s);

	return n >= 1 && n <= GW_NODE_MAX && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789") == n;
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

		for (struct sess *s = gw->sessions; s; s = s->next)
			busy |= s->job != NULL;
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

		for (struct sess *s = gw->sessions; s; s = s->next)
			if (s->state == SESS_READY && !s->job &&
			    sess_pause(s, SESS_PAUSE_DISK, &e) == 0)
				n++;
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
 * only route is GET /metrics (api/protocols.c, metrics_protocols). */
static int open_metrics_door(struct lws_context *ctx, const char *addr, struct gw *gw, char *url,
			     size_t urllen)
{
	static char host[128]; /* lws keeps pointing at it */
	struct lws_context_creation_info mi;
	struct lws_vhost *vh;
	int port;

	if (split_host_port(addr, host, sizeof(host), &port) < 0) {
		fprintf(stderr, "vitrine serve: --metrics-listen must be HOST:PORT, not '%s'\n",
			addr);
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
		fprintf(stderr, "vitrine serve: cannot listen on %s (--metrics-listen)\n", addr);
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

/* A log's size cap: 4096..2^50 bytes. 0, or -1 with a line on stderr. */
static int parse_bytes(const char *flag, const char *arg, int64_t *out)
{
	char *end;
	long long n;

	errno = 0;
	n = strtoll(arg, &end, 10);
	if (errno || end == arg || *end || n < 4096 || n > (1ll << 50)) {
		fprintf(stderr,
			"vitrine serve: %s must be a number of bytes, at least 4096, not '%s'\n",
			flag, arg);
		return -1;
	}
	*out = n;
	return 0;
}

int cmd_serve(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "listen", required_argument, 0, 'l' },
		{ "api-key-file", required_argument, 0, 'k' },
		{ "origins", required_argument, 0, 'o' },
		{ "max-sessions", required_argument, 0, 'm' },
		{ "public-url", required_argument, 0, 'u' },
		{ "help", no_argument, 0, 'h' },
		{ "demo", required_argument, 0, 'd' },
		{ "demo-template", required_argument, 0, 'T' },
		{ "max-vcpus", required_argument, 0, 'V' },
		{ "max-memory-mib", required_argument, 0, 'M' },
		{ "memory-budget-mib", required_argument, 0, 'B' },
		{ "web-dir", required_argument, 0, 'w' },
		{ "audit-log", required_argument, 0, 'a' },
		{ "audit-log-max-bytes", required_argument, 0, 1001 },
		{ "access-log", required_argument, 0, 1002 },
		{ "access-log-max-bytes", required_argument, 0, 1003 },
		{ "stream-idle-s", required_argument, 0, 'i' },
		{ "trajectory-max-steps", required_argument, 0, 1004 },
		{ "trajectory-max-bytes", required_argument, 0, 1005 },
		{ "vnc-listen", required_argument, 0, 'X' },
		{ "e2b-default-template", required_argument, 0, 1008 },
		{ "egress-map", required_argument, 0, 'E' },
		{ "egress-allow-private", no_argument, 0, 'P' },
		{ "egress-max-connections", required_argument, 0, 'e' },
		{ "log-format", required_argument, 0, 'F' },
		{ "usage-retention", required_argument, 0, 'Y' },
		{ "metrics-listen", required_argument, 0, 'L' },
		{ "node", required_argument, 0, 'N' },
		{ "state-dir", required_argument, 0, 'S' },
		{ "on-stop", required_argument, 0, 'O' },
		{ "adopt-grace-s", required_argument, 0, 'G' },
		{ "on-abandon", required_argument, 0, 'A' },
		{ "max-connections", required_argument, 0, 'C' },
		{ "max-connections-per-ip", required_argument, 0, 'c' },
		{ "qemu-uids", required_argument, 0, 'U' },
		{ "allow-root-qemu", no_argument, 0, 'R' },
		{ "record-fps", required_argument, 0, 1006 },
		{ "record-max-bytes", required_argument, 0, 1007 },
		{ "template-chain-max", required_argument, 0, 1020 },
		{ 0, 0, 0, 0 },
	};
	struct lws_context_creation_info info;
	struct gw gw = { .max_sessions = 8,
			 .adopt_grace_s = 300,
			 .abandon_pause = true,
			 .trajectory_max_steps = TRAJECTORY_DEFAULT_MAX_STEPS,
			 .trajectory_max_bytes = TRAJECTORY_DEFAULT_MAX_BYTES,
			 .record_fps = REC_DEFAULT_FPS,
			 .record_max_bytes = REC_DEFAULT_MAX_BYTES };
	int max_connections = CONN_GATE_DEFAULT_MAX,
	    max_connections_per_ip = CONN_GATE_DEFAULT_PER_IP;
	static struct registry registry; /* gw.registry points here */
	char state_dir[PATH_MAX] = "";
	char host[128] = "127.0.0.1", keyfile[4096] = "", err[512];
	const char *listen = "127.0.0.1:8080", *public_url = NULL, *home = getenv("VITRINE_HOME");
	const char *metrics_listen = NULL, *audit_path = NULL, *access_path = NULL;
	int64_t audit_max = LOGFILE_DEFAULT_MAX_BYTES, access_max = LOGFILE_DEFAULT_MAX_BYTES;
	int usage_retention = USAGE_LOG_DEFAULT_RETENTION;
	char metrics_url[160] = "";
	const char *demo_page = NULL, *demo_template = NULL, *web_dir = NULL;
	static char web_root[4096]; /* the mount points at it for the context's life */
	struct lws_http_mount web;
	struct sigaction sa = { .sa_handler = on_stop_signal };
	int c, port, rc = 1;
	const char *colon;
	struct vmm_jail_config jail;

	if (!mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) /* not glibc's malloc (ASan's) */
		log_debug("serve", "mallopt(M_MMAP_THRESHOLD) failed: big buffers stay in arenas");
	vmm_jail_config_get(&jail); /* the environment's, or the default range */
	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'l':
			listen = optarg;
			break;
		case 'k':
			snprintf(keyfile, sizeof(keyfile), "%s", optarg);
			break;
		case 'o':
			snprintf(gw.origins, sizeof(gw.origins), "%s", optarg);
			break;
		case 'u':
			public_url = optarg;
			break;
		case 'd':
			demo_page = optarg;
			break;
		case 'w':
			web_dir = optarg;
			break;
		case 'a':
			audit_path = optarg;
			break;
		case 1002:
			access_path = optarg;
			break;
		case 1001:
		case 1003:
			if (parse_bytes(c == 1001 ? "--audit-log-max-bytes"
						  : "--access-log-max-bytes",
					optarg, c == 1001 ? &audit_max : &access_max) < 0)
				return 2;
			break;
		case 'X':
			snprintf(gw.vnc_listen, sizeof(gw.vnc_listen), "%s", optarg);
			break;
		case 1004:
			if (cli_parse_int("--trajectory-max-steps", optarg, 0, 1000000,
					  &gw.trajectory_max_steps) < 0)
				return 2;
			break;
		case 1005:
			if (parse_bytes("--trajectory-max-bytes", optarg,
					&gw.trajectory_max_bytes) < 0)
				return 2;
			break;
		case 1008:
			snprintf(gw.e2b_default_template, sizeof(gw.e2b_default_template), "%s",
				 optarg);
			break;
		case 'i':
			if (cli_parse_int("--stream-idle-s", optarg, 1, 3600, &gw.stream_idle_s) <
			    0)
				return 2;
			break;
		case 'T':
			demo_template = optarg;
			break;
		case 'E':
			if (egress_config_add_map(&gw.egress_cfg, optarg, err, sizeof(err)) < 0) {
				fprintf(stderr, "vitrine serve: %s\n", err);
				return 2;
			}
			break;
		case 'P':
			gw.egress_cfg.allow_private = true;
			break;
		case 'Y':
			if (cli_parse_int("--usage-retention", optarg, 1, 10000000,
					  &usage_retention) < 0)
				return 2;
			break;
		case 'L':
			metrics_listen = optarg;
			break;
		case 'F': {
			enum log_format f;

			if (log_format_parse(optarg, &f) < 0) {
				fprintf(stderr,
					"vitrine serve: --log-format is text or json, not '%s'\n",
					optarg);
				return 2;
			}
			log_set_format(f);
			break;
		}
		case 'e':
			if (cli_parse_int("--egress-max-connections", optarg, 1, 4096,
					  &gw.egress_cfg.max_total) < 0)
				return 2;
			break;
		case 'N':
			if (!node_name_ok(optarg)) {
				fprintf(stderr,
					"vitrine serve: --node must be 1..%d lowercase letters and "
					"digits, not '%s'\n",
					GW_NODE_MAX, optarg);
				return 2;
			}
			snprintf(gw.node, sizeof(gw.node), "%s", optarg);
			break;
		case 'S':
			snprintf(state_dir, sizeof(state_dir), "%s", optarg);
			break;
		case 'O':
			if (!strcmp(optarg, "keep"))
				gw.on_stop = GW_STOP_KEEP;
			else if (!strcmp(optarg, "pause"))
				gw.on_stop = GW_STOP_PAUSE;
			else if (!strcmp(optarg, "kill"))
				gw.on_stop = GW_STOP_KILL;
			else {
				fprintf(stderr,
					"vitrine serve: --on-stop must be keep, pause or kill\n");
				return 2;
			}
			break;
		case 'G':
			if (cli_parse_int("--adopt-grace-s", optarg, 1, 7 * 24 * 3600,
					  &gw.adopt_grace_s) < 0)
				return 2;
			break;
		case 'A':
			if (strcmp(optarg, "pause") && strcmp(optarg, "kill")) {
				fprintf(stderr,
					"vitrine serve: --on-abandon must be pause or kill\n");
				return 2;
			}
			gw.abandon_pause = !strcmp(optarg, "pause");
			break;
		case 'U':
			if (vmm_uid_range_parse(optarg, &jail.first, &jail.last) < 0) {
				fprintf(stderr,
					"vitrine serve: --qemu-uids must be FIRST-LAST (1 <= FIRST <= "
					"LAST, at most 65536 uids) or none, not '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'R':
			jail.allow_root = true;
			break;
		case 'V':
			if (cli_parse_int("--max-vcpus", optarg, 1, VMM_MAX_VCPUS, &gw.max_vcpus) <
			    0)
				return 2;
			break;
		case 'M':
			if (cli_parse_int("--max-memory-mib", optarg, VMM_MIN_MEMORY_MIB,
					  VMM_MAX_MEMORY_MIB, &gw.max_memory_mib) < 0)
				return 2;
			break;
		case 'B':
			if (cli_parse_int("--memory-budget-mib", optarg, VMM_MIN_MEMORY_MIB,
					  1 << 24, &gw.memory_budget_mib) < 0)
				return 2;
			break;
		case 1020:
			if (cli_parse_int("--template-chain-max", optarg, 1, 64,
					  &gw.template_chain_max) < 0)
				return 2;
			break;
		case 1006:
			if (cli_parse_int("--record-fps", optarg, 1, 30, &gw.record_fps) < 0)
				return 2;
			break;
		case 1007:
			if (parse_bytes("--record-max-bytes", optarg, &gw.record_max_bytes) < 0)
				return 2;
			break;
		case 'm':
			if (cli_parse_int("--max-sessions", optarg, 1, 256, &gw.max_sessions) < 0)
				return 2;
			break;
		case 'C':
			if (cli_parse_int("--max-connections", optarg, 16, 4096, &max_connections) <
			    0)
				return 2;
			break;
		case 'c':
			if (cli_parse_int("--max-connections-per-ip", optarg, 1, 4096,
					  &max_connections_per_ip) < 0)
				return 2;
			break;
		case 'h':
			serve_usage(stdout);
			return 0;
		default:
			serve_usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "vitrine serve: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	logfile_init(&gw.audit_log, audit_path, audit_max);
	logfile_init(&gw.access_log, access_path, access_max);
	colon = strrchr(listen, ':');
	if (!colon || colon == listen || (size_t)(colon - listen) >= sizeof(host) ||
	    cli_parse_int("--listen port", colon + 1, 0, 65535, &port) < 0) {
		fprintf(stderr, "vitrine serve: --listen must be HOST:PORT, not '%s'\n", listen);
		return 2;
	}
	snprintf(host, sizeof(host), "%.*s", (int)(colon - listen), listen);
	if (geteuid() == 0 && jail.first &&
	    vmm_uid_range_check(jail.first, jail.last, err, sizeof(err)) < 0) {
		fprintf(stderr, "vitrine serve: %s: choose another --qemu-uids\n", err);
		return 1;
	}
	vmm_jail_configure(&jail);
	{
		char notes[1024], *line, *save = NULL;

		/* What guests will not get on this host, said once, here. */
		if (vmm_jail_report(notes, sizeof(notes)) > 0)
			for (line = strtok_r(notes, "\n", &save); line;
			     line = strtok_r(NULL, "\n", &save))
				log_warn("jail", "%s", line);
	}
	if (geteuid() == 0 && !jail.first)
		log_warn("serve", "%s",
			 jail.allow_root ? "QEMU runs as root (--allow-root-qemu)"
					 : "no --qemu-uids range: guests are refused");
	if (!keyfile[0])
		snprintf(keyfile, sizeof(keyfile), "%s/api-key",
			 home && *home ? home : "/var/lib/vitrine");
	if (auth_load_or_create_key(keyfile, gw.operator_key, sizeof(gw.operator_key), err,
				    sizeof(err)) < 0) {
		fprintf(stderr, "vitrine serve: %s\n", err);
		return 1;
	}
	auth_token_hash(gw.operator_key, gw.operator_hash);
	if (!gw.node[0])
		default_node(gw.node, sizeof(gw.node));
	if (!state_dir[0])
		snprintf(state_dir, sizeof(state_dir), "%s/sessions",
			 home && *home ? home : "/var/lib/vitrine");
	if (registry_open(&registry, state_dir, err, sizeof(err)) < 0) {
		fprintf(stderr, "vitrine serve: %s\n", err);
		return 1;
	}
	gw.registry = &registry;
	{
		char keys[PATH_MAX];

		snprintf(keys, sizeof(keys), "%s/api-keys.json", state_dir);
		if (api_keys_load(&gw.api_keys, keys, err, sizeof(err)) < 0) {
			fprintf(stderr, "vitrine serve: the API keys: %s\n", err);
			registry_close(&registry);
			return 1;
		}
	}
	if (self_path(gw.self_bin, sizeof(gw.self_bin)) < 0) {
		fprintf(stderr, "vitrine serve: cannot find its own executable\n");
		registry_close(&registry);
		return 1;
	}
	/* Ended sessions' usage, beside their records; metering goes on
	 * without it (GET /v1/usage then lists live sessions only). */
	if (!(gw.usage_log = usage_log_open(state_dir, (size_t)usage_retention, err, sizeof(err))))
		log_warn("serve", "no usage log of ended sessions: %s", err);
	/* Run dirs of live supervisors and held checkpoints stay. */
	vmm_sweep_stale(vmm_run_base(NULL));
	warm_accel_probe();

	conn_gate_init(max_connections, max_connections_per_ip);
	metrics_set_routes(route_kind_names, R_KIND_COUNT);
	if (metrics_proc_start() < 0)
		log_warn("serve",
			 "no sampler of the guests' QEMU figures: /metrics goes without them");
	if (!gw.egress_cfg.max_total)
		gw.egress_cfg.max_total = EGRESS_DEFAULT_MAX_TOTAL;
	check_fd_limit(max_connections, gw.egress_cfg.max_total, gw.max_sessions);
	lws_set_log_level(LLL_ERR | LLL_WARN, NULL);
	memset(&info, 0, sizeof(info));
	info.port = port;
	info.iface = host;
	info.protocols = api_protocols;
	info.user = &gw;
	info.options = LWS_SERVER_OPTION_VALIDATE_UTF8;
	read_test_hooks(&gw, &info);
	if (web_mount(&web, web_dir, web_root, sizeof(web_root)) == 0)
		info.mounts = &web;
	else
		log_warn("serve", "no web viewer: %s has no index.html (see --web-dir)", web_root);
	gw.ctx = lws_create_context(&info);
	if (!gw.ctx) {
		fprintf(stderr, "vitrine serve: cannot listen on %s\n", listen);
		registry_close(&registry);
		return 1;
	}
	if (encode_pool_create(ENCODE_THREADS, ENCODE_MAX_JOBS, wake_loop, gw.ctx, &gw.encoders) <
	    0) {
		fprintf(stderr, "vitrine serve: cannot start the encoder threads\n");
		lws_context_destroy(gw.ctx);
		registry_close(&registry);
		return 1;
	}
	if (metrics_listen &&
	    open_metrics_door(gw.ctx, metrics_listen, &gw, metrics_url, sizeof(metrics_url)) < 0) {
		encode_pool_destroy(gw.encoders);
		lws_context_destroy(gw.ctx);
		registry_close(&registry);
		return 1;
	}
	gw.vhost = lws_get_vhost_by_name(gw.ctx, "default");
	gw.port = gw.vhost ? lws_get_vhost_listen_port(gw.vhost) : port;
	gw.egress_cfg.gateway_port = gw.port;
	if (public_url)
		snprintf(gw.public_url, sizeof(gw.public_url), "%s", public_url);
	else
		snprintf(gw.public_url, sizeof(gw.public_url), "http://%s:%d", host, gw.port);
	if (!gw.origins[0])
		snprintf(gw.origins, sizeof(gw.origins), "%s", gw.public_url);

	the_gw = &gw;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	printf("vitrine: listening on %s (API key in %s)\n", gw.public_url, keyfile);
	if (metrics_url[0])
		printf("vitrine: metrics on %s (no token)\n", metrics_url);
	fflush(stdout);
	rc = 0;
	sess_adopt_all(&gw);
	if ((demo_page || demo_template) && start_demo(&gw, demo_page, demo_template) < 0)
		rc = 1;
	while (rc == 0 && !gw.stop)
		if (lws_service(gw.ctx, 0) < 0)
			break;
	/* The one way out: every session, build and thread is ended before
	 * the context they wake goes. */
	recipe_build_stop_all(&gw, 30000); /* its sessions go, whatever --on-stop says */
	stop_sessions(&gw);
	template_build_stop_all(&gw, 30000);
	if (!exec_wait_threads(15000))
		log_warn("serve", "a command thread is still running at exit");
	if (!sess_agent_wait_threads(5000))
		log_warn("serve", "an agent connection attempt is still running at exit");
	/* Orphaned jobs end (and free their guests) on their own; so do the
	 * dispose jobs of the sessions just destroyed. */
	if (!job_wait_all(30000))
		log_warn("serve", "a session job is still running at exit");
	/* An agent call times out within 35 s; its thread then wakes the context. */
	if (!run_wait_threads(40000))
		log_warn("serve", "a typing thread is still running at exit");
	/* A recording's video export (ffmpeg) was told to stop with its session. */
	if (!rec_export_wait_threads(5000))
		log_warn("serve", "a recording's video export is still running at exit");
	metrics_proc_stop();
	encode_pool_destroy(gw.encoders); /* its workers wake the context too */
	lws_context_destroy(gw.ctx);
	registry_close(&registry);
	usage_log_close(gw.usage_log);
	logfile_close(&gw.audit_log);
	logfile_close(&gw.access_log);
	the_gw = NULL;
	return rc;
}
