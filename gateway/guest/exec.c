/* gateway/guest/exec.c: see exec.h. A job is a small machine on the loop:
 * waiting for its session's link (a timer retries), running (an
 * agent_exec_start handle; the timer is its timeout, then the kill's
 * grace), ended (the handle's done, on the link's thread, puts the job on
 * its runs' ended list under a lock and wakes the loop), done (exec_reap
 * takes the outcome and calls the completion). For a watched job, the
 * output hook keeps each stream's last bytes in the job, under its lock,
 * as they arrive. */
#include "gateway/guest/exec.h"

#include "common/base64.h"
#include "common/fsutil.h"
#include "common/strv.h"
#include "gateway/core/gw.h"
#include "gateway/core/metrics.h"
#include "vmm-qemu/agent_exec.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXEC_MAX_ARGS 256
#define USER_PATH "PATH=/usr/local/bin:/usr/bin:/bin"
#define ROOT_PATH "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define PROXY "http://127.0.0.1:3128" /* vitrine-agent's egress listener */
#define GUEST_MAX_OUTPUT (4u << 20)
#define WATCH_MAX_KEEP (1u << 20)
#define LINK_RETRY_MS 50 /* while the session's link is on its way */

/* A watched job's stream: its last bytes, and how many it sent in all. */
struct out_tail {
	char *b; /* owned, 2 * keep bytes: trimmed to the last keep when full */
	size_t len;
	uint64_t total;
};

struct exec_job {
	struct strv argv; /* the program and its arguments, NULL-terminated */
	struct strv env; /* the whole environment, "K=V", NULL-terminated */
	char cwd[1024];
	bool root; /* else the desktop's user */
	unsigned char *in; /* owned stdin */
	size_t in_len;
	int timeout_ms;
	/* The loop's, from exec_start: */
	enum { JOB_NEW, JOB_WAITING, JOB_RUNNING, JOB_DONE } state;
	struct exec_runs *runs; /* NULL once done */
	struct exec_job *next; /* exec_runs::jobs, while started and not done */
	struct sess_agent *agent; /* held until done */
	struct agent_exec *x; /* owned while running (agent_exec_close) */
	lws_sorted_usec_list_t sul; /* the link's wait, the timeout, the kill's grace */
	bool killed; /* the timeout passed: SIGKILL sent */
	bool released; /* the starter let go: no completion, freed at its end */
	exec_done_fn on_done;
	void *ud;
	int64_t t0;
	struct exec_job *next_ended; /* exec_runs::ended: under its mu */
	/* results, set when done */
	int rc;
	char err[512];
	struct agent_exec_result res;
	int64_t elapsed_ms;
	pthread_mutex_t mu;
	/* A watched job (exec_watch): under mu (the output hook writes on the
	 * link's thread, exec_output reads). */
	size_t keep; /* 0: not watched */
	struct out_tail tail[2]; /* stdout, stderr */
};

struct exec_runs {
	struct lws_context *ctx; /* what ends wake */
	struct exec_job *jobs; /* started, not done: the loop's list */
	int n;
	pthread_mutex_t mu; /* ended */
	struct exec_job *ended; /* handed over by the links' threads, newest first */
};

static int fail(struct api_error *e, const char *msg)
{
	return api_error_set(e, 400, "invalid_argument", msg);
}

/* A string array field into v (appended); -EINVAL when not one. */
static int strings(json_t *a, const char *prefix, struct strv *v)
{
	size_t i;
	json_t *s;

	if (!json_is_array(a) || json_array_size(a) > EXEC_MAX_ARGS)
		return -EINVAL;
	json_array_foreach(a, i, s)
	{
		if (!json_is_string(s) || strlen(json_string_value(s)) != json_string_length(s))
			return -EINVAL;
		strv_pushf(v, "%s%s", prefix, json_string_value(s));
	}
	return 0;
}

/* What every command starts with: who it is, where programs are, UTF-8,
 * the desktop's display and the way out (the egress proxy). */
static void default_env(struct strv *env, bool root_user)
{
	strv_push(env, root_user ? "HOME=/root" : "HOME=/home/vitrine");
	strv_push(env, root_user ? "USER=root" : "USER=vitrine");
	strv_push(env, root_user ? ROOT_PATH : USER_PATH);
	strv_push(env, "LANG=C.UTF-8");
	strv_push(env, "DISPLAY=:0");
	strv_push(env, "http_proxy=" PROXY);
	strv_push(env, "https_proxy=" PROXY);
	strv_push(env, "HTTP_PROXY=" PROXY);
	strv_push(env, "HTTPS_PROXY=" PROXY);
	strv_push(env, "no_proxy=localhost,127.0.0.1,::1");
}

struct exec_job *exec_parse(const char *body, size_t len, struct api_error *e)
{
	static const char *known[] = { "cmd",	  "args",  "env",	"cwd",
				       "timeout", "stdin", "stdin_b64", "user" };
	json_t *root = json_loadb(body ? body : "", len, JSON_REJECT_DUPLICATES, NULL), *v;
	const char *key, *cmd, *cwd = NULL, *user = "vitrine";
	struct exec_job *j = calloc(1, sizeof(*j));
	bool root_user;
	int timeout_s = EXEC_DEFAULT_TIMEOUT_S;

	if (!j) {
		json_decref(root);
		api_error_set(e, 500, "internal", "out of memory");
		return NULL;
	}
	pthread_mutex_init(&j->mu, NULL);
	if (!json_is_object(root)) {
		api_error_set(e, 400, "invalid_json", "the body must be a JSON object");
		goto bad;
	}
	json_object_foreach(root, key, v)
	{
		bool ok = false;

		for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			ok |= !strcmp(key, known[i]);
		if (!ok) {
			char msg[128];

			snprintf(msg, sizeof(msg), "unknown field '%.64s'", key);
			fail(e, msg);
			goto bad;
		}
	}
	cmd = json_string_value(json_object_get(root, "cmd"));
	if (!cmd || !*cmd || strlen(cmd) != json_string_length(json_object_get(root, "cmd"))) {
		fail(e, "cmd must be a non-empty string");
		goto bad;
	}
	if ((v = json_object_get(root, "user")) &&
	    (!(user = json_string_value(v)) || (strcmp(user, "root") && strcmp(user, "vitrine")))) {
		fail(e, "user must be \"vitrine\" (default) or \"root\"");
		goto bad;
	}
	root_user = !strcmp(user, "root");
	/* Longer than j->cwd holds would be cut into another directory. */
	if ((v = json_object_get(root, "cwd")) &&
	    (!(cwd = json_string_value(v)) || cwd[0] != '/' || strlen(cwd) >= sizeof(j->cwd))) {
		fail(e, "cwd must be an absolute path of at most 1023 bytes");
		goto bad;
	}
	if ((v = json_object_get(root, "timeout"))) {
		if (!json_is_integer(v) || json_integer_value(v) < 1 ||
		    json_integer_value(v) > EXEC_MAX_TIMEOUT_S) {
			fail(e, "timeout must be whole seconds in 1..600");
			goto bad;
		}
		timeout_s = (int)json_integer_value(v);
	}
	j->timeout_ms = timeout_s * 1000;
	if ((v = json_object_get(root, "stdin"))) {
		if (!json_is_string(v)) {
			fail(e, "stdin must be a string (stdin_b64 for bytes)");
			goto bad;
		}
		j->in_len = json_string_length(v);
		j->in = malloc(j->in_len + 1);
		if (j->in)
			memcpy(j->in, json_string_value(v), j->in_len);
	} else if ((v = json_object_get(root, "stdin_b64"))) {
		const char *b = json_string_value(v);

		j->in = b ? malloc(strlen(b) + 1) : NULL;
		if (!b || !j->in ||
		    base64_decode(b, strlen(b), j->in, strlen(b) + 1, &j->in_len) < 0) {
			fail(e, "stdin_b64 must be base64");
			goto bad;
		}
	}
	/* The agent starts the command in a process group of its own (a
	 * timeout kills the group), as the desktop's user unless root was
	 * asked for, with exactly this environment, in cwd. */
	j->root = root_user;
	snprintf(j->cwd, sizeof(j->cwd), "%s", cwd ? cwd : root_user ? "/root" : "/home/vitrine");
	default_env(&j->env, root_user);
	if ((v = json_object_get(root, "env"))) {
		const char *k;
		json_t *val;

		if (!json_is_object(v)) {
			fail(e, "env must be an object of strings");
			goto bad;
		}
		json_object_foreach(v, k, val)
		{
			if (!json_is_string(val) || !*k || strchr(k, '=') ||
			    strlen(json_string_value(val)) != json_string_length(val)) {
				fail(e, "env must be an object of strings with names without '='");
				goto bad;
			}
			strv_pushf(&j->env, "%s=%s", k, json_string_value(val));
		}
	}
	if ((v = json_object_get(root, "args"))) {
		/* cmd is the program, args its arguments: no shell parsing. */
		strv_push(&j->argv, cmd);
		if (strings(v, "", &j->argv) < 0) {
			fail(e, "args must be an array of strings");
			goto bad;
		}
	} else {
		/* cmd is a shell command line. */
		strv_push(&j->argv, "/bin/sh");
		strv_push(&j->argv, "-c");
		strv_push(&j->argv, cmd);
	}
	if (j->argv.oom || j->env.oom || (j->in_len && !j->in)) {
		api_error_set(e, 500, "internal", "out of memory");
		goto bad;
	}
	json_decref(root);
	return j;
bad:
	json_decref(root);
	exec_free(j);
	return NULL;
}

struct exec_job *exec_new(const char *const *argv, const void *in, size_t in_len, int timeout_s)
{
	struct exec_job *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	pthread_mutex_init(&j->mu, NULL);
	j->timeout_ms = timeout_s * 1000;
	snprintf(j->cwd, sizeof(j->cwd), "/"); /* these commands name absolute paths */
	default_env(&j->env, false);
	for (const char *const *a = argv; *a; a++)
		strv_push(&j->argv, *a);
	if (in_len && (j->in = malloc(in_len)))
		memcpy(j->in, in, in_len);
	j->in_len = in_len;
	if (j->argv.oom || j->env.oom || (in_len && !j->in)) {
		exec_free(j);
		return NULL;
	}
	return j;
}

int exec_result(struct exec_job *j, const struct agent_exec_result **res, const char **err)
{
	*res = &j->res;
	*err = j->err;
	if (j->rc == 0 && j->res.timed_out) {
		snprintf(j->err, sizeof(j->err), "timed out");
		return -ETIMEDOUT;
	}
	return j->rc;
}

void exec_free(struct exec_job *j)
{
	if (!j)
		return;
	strv_free(&j->argv);
	strv_free(&j->env);
	free(j->in);
	if (j->keep) {
		free(j->tail[0].b);
		free(j->tail[1].b);
	}
	agent_exec_result_free(&j->res);
	sess_agent_release(j->agent);
	pthread_mutex_destroy(&j->mu);
	free(j);
}

const char *const *exec_argv(const struct exec_job *j)
{
	return (const char *const *)j->argv.v;
}

const char *const *exec_env(const struct exec_job *j)
{
	return (const char *const *)j->env.v;
}

const char *exec_cwd(const struct exec_job *j)
{
	return j->cwd;
}

bool exec_as_root(const struct exec_job *j)
{
	return j->root;
}

const void *exec_stdin(const struct exec_job *j, size_t *len)
{
	*len = j->in_len;
	return j->in_len ? j->in : NULL;
}

int exec_timeout_ms(const struct exec_job *j)
{
	return j->timeout_ms;
}

int exec_watch(struct exec_job *j, size_t keep)
{
	if (keep < 1 || keep > WATCH_MAX_KEEP || j->keep)
		return -EINVAL;
	j->tail[0].b = malloc(2 * keep);
	j->tail[1].b = malloc(2 * keep);
	if (!j->tail[0].b || !j->tail[1].b) {
		free(j->tail[0].b);
		free(j->tail[1].b);
		j->tail[0].b = j->tail[1].b = NULL;
		return -ENOMEM;
	}
	j->keep = keep;
	return 0;
}

/* Appends n bytes to t, which keeps the last keep of them. Under mu. */
static void tail_add(struct out_tail *t, size_t keep, const char *p, size_t n)
{
	t->total += n;
	if (n > keep) {
		p += n - keep;
		n = keep;
	}
	if (t->len + n > 2 * keep) {
		size_t drop = t->len + n - keep; /* at most t->len, since n <= keep */

		memmove(t->b, t->b + drop, t->len - drop);
		t->len -= drop;
	}
	memcpy(t->b + t->len, p, n);
	t->len += n;
}

/* The kept bytes of t: its last keep. */
static const char *tail_kept(const struct out_tail *t, size_t keep, size_t *n)
{
	size_t skip = t->len > keep ? t->len - keep : 0;

	*n = t->len - skip;
	return t->b + skip;
}

size_t exec_output(struct exec_job *j, int stream, char *buf, size_t len, uint64_t *total)
{
	const char *kept;
	size_t n = 0;

	*total = 0;
	if (!j || !j->keep || (stream != 1 && stream != 2))
		return 0;
	pthread_mutex_lock(&j->mu);
	kept = tail_kept(&j->tail[stream - 1], j->keep, &n);
	if (n > len) {
		kept += n - len;
		n = len;
	}
	memcpy(buf, kept, n);
	*total = j->tail[stream - 1].total;
	pthread_mutex_unlock(&j->mu);
	return n;
}

/* t's kept bytes as a result's output: into *out (NUL-terminated, *len;
 * nothing when out of memory), *trunc when more came. Under mu. */
static void kept_result(const struct out_tail *t, size_t keep, char **out, size_t *len, bool *trunc)
{
	size_t n;
	const char *k = tail_kept(t, keep, &n);

	free(*out);
	*out = NULL;
	*len = 0;
	*trunc = t->total > n;
	if (n && (*out = malloc(n + 1))) {
		memcpy(*out, k, n);
		(*out)[n] = '\0';
		*len = n;
	}
}

/* A watched job's output hook: the link's thread. */
static void keep_output(void *ud, uint8_t stream, const void *p, size_t n)
{
	struct exec_job *j = ud;

	pthread_mutex_lock(&j->mu);
	tail_add(&j->tail[stream == AGENT_STREAM_STDERR], j->keep, p, n);
	pthread_mutex_unlock(&j->mu);
}

/* The handle's done, on the link's thread (under the handle's lock): the
 * job goes to the loop. */
static void job_ended(void *ud)
{
	struct exec_job *j = ud;
	struct exec_runs *runs = j->runs;

	pthread_mutex_lock(&runs->mu);
	j->next_ended = runs->ended;
	runs->ended = j;
	pthread_mutex_unlock(&runs->mu);
	lws_cancel_service(runs->ctx);
}

/* The job fails before its command ran: its end comes through the ended
 * list as any other (never from inside exec_start). */
static void fail_early(struct exec_job *j, int rc, const char *why)
{
	j->rc = rc;
	snprintf(j->err, sizeof(j->err), "%s", why);
	job_ended(j);
}

static void on_timer(lws_sorted_usec_list_t *sul);

static void arm(struct exec_job *j, int ms)
{
	lws_sul_schedule(j->runs->ctx, 0, &j->sul, on_timer, (lws_usec_t)ms * LWS_US_PER_MS);
}

/* The link is up: the command starts, its timeout armed. */
static void launch(struct exec_job *j, struct agent_link *l)
{
	struct agent_exec_spec spec = {
		.argv = exec_argv(j),
		.env = exec_env(j),
		.cwd = j->cwd,
		.uid = j->root ? -1 : EXEC_DESKTOP_UID,
		.gid = j->root ? -1 : EXEC_DESKTOP_UID,
		.in = j->in,
		.in_len = j->in_len,
		.timeout_ms = j->timeout_ms,
		/* a watched job's output is what it kept */
		.max_output = j->keep ? 1 : GUEST_MAX_OUTPUT,
		.on_output = j->keep ? keep_output : NULL,
		.on_output_ud = j,
	};
	char err[sizeof(j->err)];
	int rc;

	j->state = JOB_RUNNING;
	rc = agent_exec_start(l, &spec, job_ended, j, &j->x, err, sizeof(err));
	agent_link_release(l); /* the handle holds it */
	if (rc < 0) {
		fail_early(j, rc, err);
		return;
	}
	arm(j, j->timeout_ms);
}

/* The session's link, if it is up; else another look soon, until
 * SESS_AGENT_WAIT_MS has passed since the start. */
static void look_for_link(struct exec_job *j)
{
	/* Just after ready the link may still be on its way. */
	struct agent_link *l = sess_agent_get(j->agent, 0);

	if (l)
		launch(j, l);
	else if (fs_now_ms() - j->t0 >= SESS_AGENT_WAIT_MS)
		fail_early(j, -EPIPE, "the guest agent is not connected");
	else
		arm(j, LINK_RETRY_MS);
}

static void on_timer(lws_sorted_usec_list_t *sul)
{
	struct exec_job *j = lws_container_of(sul, struct exec_job, sul);

	if (j->state == JOB_WAITING) {
		look_for_link(j);
	} else if (!j->killed) {
		j->killed = true; /* the timeout: SIGKILL, and a grace for its EXIT */
		agent_exec_kill(j->x);
		arm(j, AGENT_EXEC_KILL_GRACE_MS);
	} else {
		agent_exec_cut(j->x, "timed out"); /* the agent is stuck */
	}
}

int exec_start(struct exec_job *j, struct gw *gw, struct sess_agent *agent, exec_done_fn done,
	       void *ud)
{
	if (!gw->execs || j->state != JOB_NEW)
		return -EINVAL;
	j->runs = gw->execs;
	j->agent = sess_agent_hold(agent);
	j->on_done = done;
	j->ud = ud;
	j->t0 = fs_now_ms();
	j->state = JOB_WAITING;
	j->next = j->runs->jobs;
	j->runs->jobs = j;
	j->runs->n++;
	look_for_link(j);
	return 0;
}

static void unlink_job(struct exec_job *j)
{
	for (struct exec_job **pp = &j->runs->jobs; *pp; pp = &(*pp)->next)
		if (*pp == j) {
			*pp = j->next;
			j->runs->n--;
			return;
		}
}

/* An ended job's outcome into the job (the loop's): the handle closed,
 * the session's agent let go, the command counted. */
static void settle(struct exec_job *j)
{
	lws_sul_cancel(&j->sul);
	if (j->x) {
		j->rc = agent_exec_outcome(j->x, &j->res, j->err, sizeof(j->err));
		agent_exec_close(j->x); /* its channel is closed: nothing is cut */
		j->x = NULL;
	}
	if (j->rc == 0 && j->keep) {
		pthread_mutex_lock(&j->mu);
		kept_result(&j->tail[0], j->keep, &j->res.out, &j->res.out_len,
			    &j->res.out_truncated);
		kept_result(&j->tail[1], j->keep, &j->res.err, &j->res.err_len,
			    &j->res.err_truncated);
		pthread_mutex_unlock(&j->mu);
	}
	j->elapsed_ms = fs_now_ms() - j->t0;
	metrics_cmd(j->rc < 0	       ? METRICS_CMD_FAILED
		    : j->res.timed_out ? METRICS_CMD_TIMED_OUT
				       : METRICS_CMD_EXITED,
		    j->elapsed_ms);
	sess_agent_release(j->agent);
	j->agent = NULL;
	unlink_job(j);
	j->runs = NULL;
	j->state = JOB_DONE;
}

/* A settled job goes to its starter, or is freed when it was let go. */
static void hand_over(struct exec_job *j)
{
	if (j->released)
		exec_free(j);
	else if (j->on_done)
		j->on_done(j, j->ud); /* may free j */
}

/* The ended list, oldest first. */
static struct exec_job *take_ended(struct exec_runs *runs)
{
	struct exec_job *list, *rev = NULL;

	pthread_mutex_lock(&runs->mu);
	list = runs->ended;
	runs->ended = NULL;
	pthread_mutex_unlock(&runs->mu);
	while (list) {
		struct exec_job *next = list->next_ended;

		list->next_ended = rev;
		rev = list;
		list = next;
	}
	return rev;
}

void exec_reap(struct exec_runs *runs)
{
	struct exec_job *j = runs ? take_ended(runs) : NULL;

	while (j) {
		struct exec_job *next = j->next_ended;

		settle(j);
		hand_over(j);
		j = next;
	}
}

int exec_runs_count(const struct exec_runs *runs)
{
	return runs ? runs->n : 0;
}

struct exec_runs *exec_runs_create(struct lws_context *ctx)
{
	struct exec_runs *runs = calloc(1, sizeof(*runs));

	if (!runs)
		return NULL;
	runs->ctx = ctx;
	pthread_mutex_init(&runs->mu, NULL);
	return runs;
}

void exec_runs_destroy(struct exec_runs *runs)
{
	if (!runs)
		return;
	exec_reap(runs); /* what ended has its outcome */
	/* The rest: no callback of theirs runs after agent_exec_close; those
	 * that ended meanwhile are on the ended list, which is dropped (every
	 * job is on jobs too). */
	for (struct exec_job *j = runs->jobs; j; j = j->next) {
		lws_sul_cancel(&j->sul);
		agent_exec_close(j->x);
		j->x = NULL;
	}
	take_ended(runs);
	while (runs->jobs) {
		struct exec_job *j = runs->jobs;

		j->rc = -EPIPE;
		snprintf(j->err, sizeof(j->err), "the gateway is stopping");
		settle(j); /* unlinks it */
		hand_over(j);
	}
	pthread_mutex_destroy(&runs->mu);
	free(runs);
}

bool exec_done(struct exec_job *j)
{
	return j->state == JOB_DONE;
}

void exec_release(struct exec_job *j)
{
	if (!j)
		return;
	if (j->state == JOB_NEW || j->state == JOB_DONE) {
		exec_free(j);
		return;
	}
	j->released = true;
	j->on_done = NULL;
}

/* Output as text when it is UTF-8 without NULs, else base64. */
static void put_output(json_t *o, const char *name, const char *data, size_t len)
{
	char enc_key[32];
	json_t *s = data && memchr(data, 0, len) == NULL ? json_stringn(data, len) : NULL;

	snprintf(enc_key, sizeof(enc_key), "%s_encoding", name);
	if (!data)
		s = json_string("");
	if (s) {
		json_object_set_new(o, name, s);
		json_object_set_new(o, enc_key, json_string("utf-8"));
		return;
	}
	{
		char *b = base64_encode(data, len, NULL);

		json_object_set_new(o, name, json_string(b ? b : ""));
		free(b);
		json_object_set_new(o, enc_key, json_string("base64"));
	}
}

json_t *exec_answer(struct exec_job *j, int *status)
{
	json_t *o;

	if (j->rc < 0) {
		/* -EPROTO: the agent ran it but its EXIT said nothing usable */
		bool failed = j->rc == -EREMOTEIO || j->rc == -EPROTO;

		*status = failed ? 502 : j->rc == -EINVAL ? 400 : 503;
		return api_error_json(failed ? "exec_failed" : "agent_unavailable", j->err);
	}
	*status = 200;
	o = json_pack("{s:b, s:I}", "timed_out", j->res.timed_out, "elapsed_ms",
		      (json_int_t)j->elapsed_ms);
	if (!o)
		return NULL;
	if (j->res.timed_out) {
		json_object_set_new(o, "exit_code", json_null());
		json_object_set_new(o, "signal", json_integer(9));
	} else {
		json_object_set_new(o, "exit_code",
				    j->res.signal ? json_null() : json_integer(j->res.exit_code));
		json_object_set_new(o, "signal", json_integer(j->res.signal));
	}
	put_output(o, "stdout", j->res.out, j->res.out_len);
	put_output(o, "stderr", j->res.err, j->res.err_len);
	json_object_set_new(o, "truncated",
			    json_boolean(j->res.out_truncated || j->res.err_truncated));
	return o;
}
