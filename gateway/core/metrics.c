/* gateway/core/metrics.c: see metrics.h. Every count is an atomic in a
 * fixed table; rendering reads them without a lock (a scrape may see one
 * family a moment later than another, as Prometheus allows). */
#include "gateway/core/metrics.h"

#include "gateway/core/metrics_proc.h"
#include "gateway/egress/egress.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* Latency buckets, seconds: from a fast screenshot to a slow boot. */
static const double bounds[] = { 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
				 2.5,	5,    10,    30,   60,	120,  300 };
#define N_BOUNDS (sizeof(bounds) / sizeof(bounds[0]))

struct hist {
	atomic_ullong bucket[N_BOUNDS]; /* not cumulative: rendering sums them */
	atomic_ullong count, sum_us;
};

/* HTTP statuses get a slot each of these; any other counts as its class. */
static const int codes[] = { 101, 200, 201, 202, 204, 301, 302, 304, 400, 401, 403,
			     404, 405, 408, 409, 413, 429, 500, 501, 502, 503, 504 };
#define N_CODES (sizeof(codes) / sizeof(codes[0]))
#define N_CODE_SLOTS (N_CODES + 5) /* + 1xx..5xx */

static const char *const op_names[METRICS_OP_COUNT] = { "create", "restore", "pause", "resume",
							"fork",	  "adopt",   "delete" };
static const char *const act_names[METRICS_ACT_COUNT] = { "vitrine", "anthropic", "openai",
							  "screenshot" };
static const char *const cmd_names[METRICS_CMD_COUNT] = { "exited", "timed_out", "failed" };
static const char *const *route_names;
static int n_routes;

static atomic_ullong http_count[METRICS_MAX_ROUTES][N_CODE_SLOTS];
static struct hist http_hist[METRICS_MAX_ROUTES];
static atomic_ullong op_count[METRICS_OP_COUNT][2]; /* [op][ok] */
static struct hist op_hist[METRICS_OP_COUNT];
static atomic_ullong act_count[METRICS_ACT_COUNT][2];
static struct hist act_hist[METRICS_ACT_COUNT];
static atomic_ullong cmd_count[METRICS_CMD_COUNT];
static struct hist cmd_hist;
static atomic_ullong frames, frame_bytes;
static const char *const pool_miss_names[] = { "empty", "keyboard_layout", "other" };
#define N_POOL_MISS (sizeof(pool_miss_names) / sizeof(pool_miss_names[0]))
static atomic_ullong pool_hits, pool_misses[N_POOL_MISS], pool_evictions, pool_refills[2];
static struct hist pool_refill_hist;

static void observe(struct hist *h, int64_t micros)
{
	double s = micros > 0 ? micros / 1e6 : 0;
	size_t i = 0;

	while (i < N_BOUNDS && s > bounds[i])
		i++;
	if (i < N_BOUNDS)
		atomic_fetch_add(&h->bucket[i], 1);
	atomic_fetch_add(&h->count, 1);
	atomic_fetch_add(&h->sum_us, (unsigned long long)(micros > 0 ? micros : 0));
}

void metrics_set_routes(const char *const *names, int n)
{
	route_names = names;
	n_routes = n < METRICS_MAX_ROUTES ? n : METRICS_MAX_ROUTES;
}

static size_t code_slot(int status)
{
	for (size_t i = 0; i < N_CODES; i++)
		if (codes[i] == status)
			return i;
	return status >= 100 && status < 600 ? N_CODES + (size_t)(status / 100 - 1) : N_CODES + 4;
}

void metrics_http(int route, int status, int64_t micros)
{
	if (route < 0 || route >= n_routes)
		return;
	atomic_fetch_add(&http_count[route][code_slot(status)], 1);
	observe(&http_hist[route], micros);
}

void metrics_op(enum metrics_op op, bool ok, int64_t millis)
{
	if ((unsigned)op >= METRICS_OP_COUNT)
		return;
	atomic_fetch_add(&op_count[op][ok], 1);
	if (ok && op != METRICS_OP_DELETE) /* a delete's work is the guest's disposal, later */
		observe(&op_hist[op], millis * 1000);
}

void metrics_act(enum metrics_act kind, bool ok, int64_t micros)
{
	if ((unsigned)kind >= METRICS_ACT_COUNT)
		return;
	atomic_fetch_add(&act_count[kind][ok], 1);
	if (ok)
		observe(&act_hist[kind], micros);
}

void metrics_cmd(enum metrics_cmd how, int64_t millis)
{
	if ((unsigned)how >= METRICS_CMD_COUNT)
		return;
	atomic_fetch_add(&cmd_count[how], 1);
	observe(&cmd_hist, millis * 1000);
}

void metrics_stream_frame(uint64_t bytes)
{
	atomic_fetch_add(&frames, 1);
	atomic_fetch_add(&frame_bytes, bytes);
}

void metrics_pool_hit(void)
{
	atomic_fetch_add(&pool_hits, 1);
}

void metrics_pool_miss(const char *why)
{
	size_t i = 0;

	while (i < N_POOL_MISS - 1 && strcmp(pool_miss_names[i], why))
		i++;
	atomic_fetch_add(&pool_misses[i], 1);
}

void metrics_pool_evicted(void)
{
	atomic_fetch_add(&pool_evictions, 1);
}

void metrics_pool_refill(bool ok, int64_t millis)
{
	atomic_fetch_add(&pool_refills[ok], 1);
	if (ok)
		observe(&pool_refill_hist, millis * 1000);
}

void metrics_reset(void)
{
	atomic_store(&pool_hits, 0);
	memset(pool_misses, 0, sizeof(pool_misses));
	atomic_store(&pool_evictions, 0);
	memset(pool_refills, 0, sizeof(pool_refills));
	memset(&pool_refill_hist, 0, sizeof(pool_refill_hist));
	memset(http_count, 0, sizeof(http_count));
	memset(http_hist, 0, sizeof(http_hist));
	memset(op_count, 0, sizeof(op_count));
	memset(op_hist, 0, sizeof(op_hist));
	memset(act_count, 0, sizeof(act_count));
	memset(act_hist, 0, sizeof(act_hist));
	memset(cmd_count, 0, sizeof(cmd_count));
	memset(&cmd_hist, 0, sizeof(cmd_hist));
	atomic_store(&frames, 0);
	atomic_store(&frame_bytes, 0);
}

void metrics_escape(const char *in, char *out, size_t outlen)
{
	size_t o = 0;

	if (!outlen)
		return;
	for (; *in && o + 2 < outlen; in++) {
		if (*in == '\\' || *in == '"' || *in == '\n') {
			out[o++] = '\\';
			out[o++] = *in == '\n' ? 'n' : *in;
		} else {
			out[o++] = *in;
		}
	}
	out[o] = '\0';
}

/* ---- rendering ---- */

struct out {
	struct bytebuf *b;
	int rc;
};

__attribute__((format(printf, 2, 3))) static void put(struct out *o, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(line) || bytebuf_append(o->b, line, (size_t)n) < 0)
		o->rc = -ENOMEM;
}

static void family(struct out *o, const char *name, const char *type, const char *help)
{
	put(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* One histogram's series; labels is "" or `key="value"`. */
static void hist_series(struct out *o, const char *name, const char *labels, struct hist *h)
{
	unsigned long long cum = 0;
	const char *sep = labels[0] ? "," : "";

	for (size_t i = 0; i < N_BOUNDS; i++) {
		cum += atomic_load(&h->bucket[i]);
		put(o, "%s_bucket{%s%sle=\"%g\"} %llu\n", name, labels, sep, bounds[i], cum);
	}
	put(o, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name, labels, sep, atomic_load(&h->count));
	put(o, "%s_sum%s%s%s %.6f\n", name, labels[0] ? "{" : "", labels, labels[0] ? "}" : "",
	    atomic_load(&h->sum_us) / 1e6);
	put(o, "%s_count%s%s%s %llu\n", name, labels[0] ? "{" : "", labels, labels[0] ? "}" : "",
	    atomic_load(&h->count));
}

static void code_label(size_t slot, char *out, size_t len)
{
	if (slot < N_CODES)
		snprintf(out, len, "%d", codes[slot]);
	else
		snprintf(out, len, "%zuxx", slot - N_CODES + 1);
}

static void render_http(struct out *o)
{
	char labels[160], code[8];

	family(o, "vitrine_http_requests_total", "counter",
	       "HTTP requests answered, by route and status code.");
	for (int r = 0; r < n_routes; r++)
		for (size_t c = 0; c < N_CODE_SLOTS; c++) {
			unsigned long long v = atomic_load(&http_count[r][c]);

			if (!v)
				continue; /* a route x code series exists once it happened */
			code_label(c, code, sizeof(code));
			put(o, "vitrine_http_requests_total{route=\"%s\",code=\"%s\"} %llu\n",
			    route_names[r], code, v);
		}
	family(o, "vitrine_http_request_duration_seconds", "histogram",
	       "Time from a request's arrival to its answer, by route.");
	for (int r = 0; r < n_routes; r++) {
		if (!atomic_load(&http_hist[r].count))
			continue;
		snprintf(labels, sizeof(labels), "route=\"%s\"", route_names[r]);
		hist_series(o, "vitrine_http_request_duration_seconds", labels, &http_hist[r]);
	}
}

static void render_ops(struct out *o)
{
	char labels[64];

	family(o, "vitrine_session_operations_total", "counter",
	       "Session operations finished, by operation and result.");
	for (int i = 0; i < METRICS_OP_COUNT; i++)
		for (int ok = 1; ok >= 0; ok--)
			put(o, "vitrine_session_operations_total{op=\"%s\",result=\"%s\"} %llu\n",
			    op_names[i], ok ? "ok" : "error", atomic_load(&op_count[i][ok]));
	family(o, "vitrine_session_operation_duration_seconds", "histogram",
	       "How long successful session operations took, by operation.");
	for (int i = 0; i < METRICS_OP_DELETE; i++) {
		snprintf(labels, sizeof(labels), "op=\"%s\"", op_names[i]);
		hist_series(o, "vitrine_session_operation_duration_seconds", labels, &op_hist[i]);
	}
}

static void render_acts(struct out *o)
{
	char labels[64];

	family(o, "vitrine_actions_total", "counter",
	       "Actions (by dialect) and screenshots answered, by result.");
	for (int i = 0; i < METRICS_ACT_COUNT; i++)
		for (int ok = 1; ok >= 0; ok--)
			put(o, "vitrine_actions_total{kind=\"%s\",result=\"%s\"} %llu\n",
			    act_names[i], ok ? "ok" : "error", atomic_load(&act_count[i][ok]));
	family(o, "vitrine_action_duration_seconds", "histogram",
	       "How long successful actions and screenshots took, by kind.");
	for (int i = 0; i < METRICS_ACT_COUNT; i++) {
		snprintf(labels, sizeof(labels), "kind=\"%s\"", act_names[i]);
		hist_series(o, "vitrine_action_duration_seconds", labels, &act_hist[i]);
	}
	family(o, "vitrine_commands_total", "counter",
	       "Commands run in guests, by how they ended (failed: never ran or lost).");
	for (int i = 0; i < METRICS_CMD_COUNT; i++)
		put(o, "vitrine_commands_total{result=\"%s\"} %llu\n", cmd_names[i],
		    atomic_load(&cmd_count[i]));
	family(o, "vitrine_command_duration_seconds", "histogram", "How long commands ran.");
	hist_series(o, "vitrine_command_duration_seconds", "", &cmd_hist);
}

static void render_egress_stream(struct out *o, const struct metrics_now *now)
{
	struct egress_totals t;

	egress_totals(&t);
	family(o, "vitrine_egress_connections_total", "counter",
	       "Guests' egress connections ended, by the reason their log gives.");
	for (int i = 0; i < EGRESS_REASON_COUNT; i++)
		put(o, "vitrine_egress_connections_total{reason=\"%s\"} %llu\n",
		    egress_reason_name((enum egress_reason)i), (unsigned long long)t.ended[i]);
	family(o, "vitrine_egress_bytes_total", "counter",
	       "Bytes relayed for guests' egress connections, by direction.");
	put(o, "vitrine_egress_bytes_total{direction=\"up\"} %llu\n",
	    (unsigned long long)t.bytes_up);
	put(o, "vitrine_egress_bytes_total{direction=\"down\"} %llu\n",
	    (unsigned long long)t.bytes_down);
	family(o, "vitrine_egress_open_connections", "gauge",
	       "Egress connections connecting or relaying now.");
	put(o, "vitrine_egress_open_connections %d\n", t.open);
	family(o, "vitrine_stream_viewers", "gauge", "Live viewers connected now.");
	put(o, "vitrine_stream_viewers %d\n", now->viewers);
	family(o, "vitrine_stream_frames_total", "counter", "Frames sent to live viewers.");
	put(o, "vitrine_stream_frames_total %llu\n", atomic_load(&frames));
	family(o, "vitrine_stream_bytes_total", "counter", "Bytes of frames sent to live viewers.");
	put(o, "vitrine_stream_bytes_total %llu\n", atomic_load(&frame_bytes));
}

static void render_now(struct out *o, const struct metrics_now *now)
{
	family(o, "vitrine_unconfined", "gauge",
	       "1 when guests run without a cgroup (--allow-no-cgroup, or no root): their memory, "
	       "CPU and processes bounded by nothing.");
	put(o, "vitrine_unconfined %d\n", now->unconfined ? 1 : 0);
	family(o, "vitrine_sessions", "gauge", "Sessions now, by state.");
	put(o, "vitrine_sessions{state=\"starting\"} %d\n", now->sessions_starting);
	put(o, "vitrine_sessions{state=\"ready\"} %d\n", now->sessions_ready);
	put(o, "vitrine_sessions{state=\"paused_memory\"} %d\n", now->sessions_paused_memory);
	put(o, "vitrine_sessions{state=\"paused_disk\"} %d\n", now->sessions_paused_disk);
	put(o, "vitrine_sessions{state=\"failed\"} %d\n", now->sessions_failed);
	family(o, "vitrine_guest_memory_in_use_bytes", "gauge",
	       "Guest memory of the sessions that hold it (running or paused in memory).");
	put(o, "vitrine_guest_memory_in_use_bytes %llu\n",
	    (unsigned long long)now->memory_in_use_bytes);
	if (now->memory_budget_bytes) {
		family(o, "vitrine_guest_memory_budget_bytes", "gauge",
		       "The operator's budget of guest memory (--memory-budget-mib).");
		put(o, "vitrine_guest_memory_budget_bytes %llu\n",
		    (unsigned long long)now->memory_budget_bytes);
	}
}

static void render_pools(struct out *o, const struct metrics_now *now)
{
	family(o, "vitrine_pool_members", "gauge",
	       "Warm pools' members now: ready (paused, claimable) or refilling.");
	put(o, "vitrine_pool_members{state=\"ready\"} %d\n", now->pool_ready);
	put(o, "vitrine_pool_members{state=\"refilling\"} %d\n", now->pool_refilling);
	family(o, "vitrine_pool_claims_total", "counter",
	       "Creates from a template with a warm pool: hit (a member taken) or miss, by "
	       "why.");
	put(o, "vitrine_pool_claims_total{result=\"hit\"} %llu\n", atomic_load(&pool_hits));
	for (size_t i = 0; i < N_POOL_MISS; i++)
		put(o, "vitrine_pool_claims_total{result=\"miss\",reason=\"%s\"} %llu\n",
		    pool_miss_names[i], atomic_load(&pool_misses[i]));
	family(o, "vitrine_pool_evictions_total", "counter",
	       "Warm pools' members dropped to make room for a session.");
	put(o, "vitrine_pool_evictions_total %llu\n", atomic_load(&pool_evictions));
	family(o, "vitrine_pool_refills_total", "counter", "Warm pools' refills, by result.");
	put(o, "vitrine_pool_refills_total{result=\"ok\"} %llu\n", atomic_load(&pool_refills[1]));
	put(o, "vitrine_pool_refills_total{result=\"error\"} %llu\n",
	    atomic_load(&pool_refills[0]));
	family(o, "vitrine_pool_refill_duration_seconds", "histogram",
	       "From a refill's start to its member paused and ready.");
	hist_series(o, "vitrine_pool_refill_duration_seconds", "", &pool_refill_hist);
}

static const char *const queue_names[METRICS_QUEUES] = { "encode", "guest", "bulk", "net" };

static void render_queues(struct out *o, const struct metrics_now *now)
{
	family(o, "vitrine_work_jobs", "gauge",
	       "Background jobs in the gateway's queues now: queued, running, finished but "
	       "not yet taken back by the loop.");
	for (int i = 0; i < METRICS_QUEUES; i++) {
		const struct work_queue_stats *q = &now->queues[i];

		put(o, "vitrine_work_jobs{queue=\"%s\",state=\"queued\"} %d\n", queue_names[i],
		    q->queued);
		put(o, "vitrine_work_jobs{queue=\"%s\",state=\"running\"} %d\n", queue_names[i],
		    q->running);
		put(o, "vitrine_work_jobs{queue=\"%s\",state=\"finished\"} %d\n", queue_names[i],
		    q->finished);
	}
	family(o, "vitrine_work_jobs_total", "counter",
	       "Background jobs offered to the gateway's queues: accepted, refused because the "
	       "queue was full, cancelled before they ran.");
	for (int i = 0; i < METRICS_QUEUES; i++) {
		const struct work_queue_stats *q = &now->queues[i];

		put(o, "vitrine_work_jobs_total{queue=\"%s\",result=\"accepted\"} %llu\n",
		    queue_names[i], (unsigned long long)q->submitted);
		put(o, "vitrine_work_jobs_total{queue=\"%s\",result=\"rejected\"} %llu\n",
		    queue_names[i], (unsigned long long)q->rejected);
		put(o, "vitrine_work_jobs_total{queue=\"%s\",result=\"cancelled\"} %llu\n",
		    queue_names[i], (unsigned long long)q->cancelled);
	}
}

int metrics_render(const struct metrics_now *now, struct bytebuf *out)
{
	struct out o = { out, 0 };

	render_now(&o, now);
	render_queues(&o, now);
	render_ops(&o);
	render_pools(&o, now);
	render_acts(&o);
	render_egress_stream(&o, now);
	render_http(&o);
	if (o.rc == 0 && !now->no_session_series && metrics_proc_render(out) < 0)
		o.rc = -ENOMEM;
	return o.rc;
}
