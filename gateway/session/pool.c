/* gateway/session/pool.c: see pool.h. The table of wanted sizes (and its
 * file), the timer that tends the pools (drops failed and unwanted
 * members, pauses the freshly restored ones, starts one refill at a time),
 * the claim that hands a member to a create, and the eviction that makes
 * room for real sessions. */
#include "gateway/session/pool.h"

#include "common/fsutil.h"
#include "common/log.h"
#include "gateway/core/json_file.h"
#include "gateway/core/metrics.h"
#include "gateway/core/project_table.h"
#include "gateway/guest/sess_agent.h"
#include "gateway/session/job_kind.h"
#include "gateway/session/registry.h"
#include "gateway/session/session_int.h"
#include "gateway/session/session_quota.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POOLS_FILE_MAX (64 << 10)

struct pool_entry {
	char name[64]; /* the template */
	int size; /* members wanted */
	int64_t retry_ms; /* monotonic: no refill before (a failed one) */
	int memory_mib; /* a member's, once one was made; 0: not known yet */
};

struct sess_pools {
	lws_sorted_usec_list_t sul; /* the tending timer */
	struct gw *gw;
	char path[PATH_MAX]; /* the state dir's file; "" without a registry */
	int n;
	struct pool_entry e[POOL_TEMPLATES_MAX];
};

static struct pool_entry *entry(struct sess_pools *p, const char *tpl)
{
	for (int i = 0; p && i < p->n; i++)
		if (!strcmp(p->e[i].name, tpl))
			return &p->e[i];
	return NULL;
}

/* A member paused in memory with nothing under way: claimable. */
static bool member_ready(const struct sess *s)
{
	return s->state == SESS_PAUSED && s->pause == SESS_PAUSE_MEMORY && !s->job;
}

static void count(struct gw *gw, const char *tpl, int *all, int *ready)
{
	*all = *ready = 0;
	for (struct sess *s = gw->sessions; s; s = s->next)
		if (s->pool_of[0] && (!tpl || !strcmp(s->pool_of, tpl))) {
			(*all)++;
			*ready += member_ready(s);
		}
}

static void tend(lws_sorted_usec_list_t *sul);

/* The pools are looked after ms from now (lws_sul_schedule moves a
 * scheduled timer). */
static void schedule(struct sess_pools *p, int ms)
{
	lws_sul_schedule(p->gw->ctx, 0, &p->sul, tend, (lws_usec_t)ms * 1000);
}

/* Drops member s (its guest stops on a job thread, its record goes). */
static void drop(struct sess *s, const char *why)
{
	log_info("pool", "%s: member %s dropped: %s", s->pool_of, s->id, why);
	sess_destroy(s, NULL);
}

/* One look at the members: true when it dropped one (the list changed:
 * look again). */
static bool tend_members(struct sess_pools *p, int64_t now)
{
	struct gw *gw = p->gw;

	for (struct sess *s = gw->sessions; s; s = s->next) {
		struct pool_entry *e;
		struct api_error err;
		int all, ready;

		if (!s->pool_of[0])
			continue;
		e = entry(p, s->pool_of);
		if (s->state == SESS_FAILED) {
			if (!s->pool_counted)
				metrics_pool_refill(false, now - s->created_ms);
			if (e)
				e->retry_ms = now + POOL_RETRY_MS;
			log_warn("pool", "%s: a member failed: %s", s->pool_of, s->error);
			drop(s, "it failed");
			return true;
		}
		if (e) /* known from its members, adopted ones too */
			e->memory_mib = s->memory_mib;
		count(gw, s->pool_of, &all, &ready);
		if (!e || all > e->size) {
			drop(s, "the pool is smaller now");
			return true;
		}
		/* its supervisor paused it to disk while no gateway ran: a
		 * resume from disk is no warm start */
		if (s->state == SESS_PAUSED && s->pause == SESS_PAUSE_DISK && !s->job) {
			drop(s, "it was paused to disk");
			return true;
		}
		if (s->state == SESS_READY && !s->job && sess_pause(s, SESS_PAUSE_MEMORY, &err) < 0)
			log_warn("pool", "%s: member %s not paused: %s", s->pool_of, s->id,
				 err.message);
		if (member_ready(s) && !s->pool_counted) {
			s->pool_counted = true;
			metrics_pool_refill(true, now - s->created_ms);
			log_info("pool", "%s: member ready in %lld ms (%d of %d)", s->pool_of,
				 (long long)(now - s->created_ms), ready, e->size);
		}
	}
	return false;
}

/* Starts one refill when none runs and a pool is short. */
static void refill(struct sess_pools *p, int64_t now)
{
	struct gw *gw = p->gw;

	for (struct sess *s = gw->sessions; s; s = s->next)
		if ((s->pool_of[0] && !member_ready(s)) ||
		    (s->job && s->job->kind == &job_kind_claim))
			return; /* one at a time, and never beside a claim's resume */
	for (int i = 0; i < p->n; i++) {
		struct pool_entry *e = &p->e[i];
		struct api_error err;
		struct sess *s;
		int all, ready;

		count(gw, e->name, &all, &ready);
		if (all >= e->size || now < e->retry_ms)
			continue;
		/* A member never takes the room a real session would. */
		if (e->memory_mib && gw->memory_budget_mib &&
		    gw->memory_used_mib + e->memory_mib > gw->memory_budget_mib)
			continue;
		if (gw->n_sessions >= gw->max_sessions)
			continue;
		if (sess_create_member(gw, e->name, &s, &err) < 0) {
			/* no room (503) is waited out; anything else is a failure */
			if (err.status == 503)
				log_info("pool", "%s: no refill for now: %s", e->name, err.message);
			else
				log_warn("pool", "%s: cannot refill: %s (again in %d s)", e->name,
					 err.message, POOL_RETRY_MS / 1000);
			e->retry_ms = now + POOL_RETRY_MS;
			if (err.status != 503)
				metrics_pool_refill(false, 0);
			continue;
		}
		e->memory_mib = s->memory_mib;
		return;
	}
}

static void tend(lws_sorted_usec_list_t *sul)
{
	struct sess_pools *p = lws_container_of(sul, struct sess_pools, sul);
	int64_t now = fs_now_ms();

	if (p->gw->stop)
		return;
	for (int guard = 0; guard < 256 && tend_members(p, now); guard++)
		;
	refill(p, now);
	schedule(p, POOL_TICK_MS);
}

/* Writes the table (without a registry: nothing). */
static int save(struct sess_pools *p, char *err, size_t errlen)
{
	json_t *pools = json_object(), *j;
	int rc;

	if (!p->path[0])
		return 0;
	for (int i = 0; pools && i < p->n; i++)
		if (p->e[i].size > 0)
			json_object_set_new(pools, p->e[i].name, json_integer(p->e[i].size));
	if (!(j = json_pack("{s:o}", "pools", pools))) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = json_file_write(p->path, j, err, errlen);
	json_decref(j);
	return rc;
}

/* Reads the table from p->path: 0, or -errno with err. */
static int load(struct sess_pools *p, char *err, size_t errlen)
{
	json_t *j = NULL, *pools, *v;
	const char *name;
	int rc = json_file_read(p->path, POOLS_FILE_MAX, &j, err, errlen);

	if (rc == -ENOENT)
		return 0;
	if (rc < 0)
		return rc;
	pools = json_object_get(j, "pools");
	if (!json_is_object(pools)) {
		snprintf(err, errlen, "%s: no \"pools\" object", p->path);
		json_decref(j);
		return -EINVAL;
	}
	json_object_foreach(pools, name, v)
	{
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    json_integer_value(v) > POOL_SIZE_MAX || strlen(name) >= sizeof(p->e[0].name) ||
		    p->n >= POOL_TEMPLATES_MAX) {
			snprintf(err, errlen, "%s: bad pool %.64s", p->path, name);
			json_decref(j);
			return -EINVAL;
		}
		snprintf(p->e[p->n].name, sizeof(p->e[0].name), "%s", name);
		p->e[p->n++].size = (int)json_integer_value(v);
	}
	json_decref(j);
	return 0;
}

int sess_pool_open(struct gw *gw, char *err, size_t errlen)
{
	struct sess_pools *p = calloc(1, sizeof(*p));
	int rc;

	if (!p) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	p->gw = gw;
	if (gw->registry)
		snprintf(p->path, sizeof(p->path), "%s/" REGISTRY_POOLS_FILE, gw->registry->dir);
	if (p->path[0] && (rc = load(p, err, errlen)) < 0) {
		free(p);
		return rc;
	}
	gw->pools = p;
	schedule(p, POOL_TICK_MS);
	return 0;
}

void sess_pool_close(struct gw *gw)
{
	if (!gw->pools)
		return;
	lws_sul_cancel(&gw->pools->sul);
	free(gw->pools);
	gw->pools = NULL;
}

int sess_pool_set(struct gw *gw, const char *tpl, int n, struct api_error *e)
{
	struct sess_pools *p = gw->pools;
	struct pool_entry *ent, old;
	char err[512], msg[96];
	bool added = false;

	if (n < 0 || n > POOL_SIZE_MAX) {
		snprintf(msg, sizeof(msg), "pool is 0..%d members", POOL_SIZE_MAX);
		return api_error_set(e, 400, "invalid_argument", msg);
	}
	if (!p)
		return api_error_set(e, 503, "unavailable", "the gateway keeps no pools");
	if (!(ent = entry(p, tpl))) {
		if (n == 0)
			return 0;
		if (p->n >= POOL_TEMPLATES_MAX)
			return api_error_set(e, 429, "too_many_pools",
					     "the gateway keeps pools for this many templates "
					     "already");
		ent = &p->e[p->n++];
		memset(ent, 0, sizeof(*ent));
		snprintf(ent->name, sizeof(ent->name), "%s", tpl);
		added = true;
	}
	old = *ent;
	ent->size = n;
	ent->retry_ms = 0;
	if (save(p, err, sizeof(err)) < 0) {
		*ent = old;
		if (added)
			p->n--;
		return api_error_set(e, 500, "internal", err);
	}
	log_info("pool", "%s: pool of %d", tpl, n);
	if (n == 0) /* its members go at the next look (they have no entry) */
		*ent = p->e[--p->n];
	schedule(p, 0);
	return 0;
}

int sess_pool_size(struct gw *gw, const char *tpl)
{
	struct pool_entry *e = entry(gw->pools, tpl);

	return e ? e->size : 0;
}

json_t *sess_pool_json(struct gw *gw, const char *tpl)
{
	int all, ready, size = sess_pool_size(gw, tpl);

	count(gw, tpl, &all, &ready);
	if (!size && !all)
		return NULL;
	return json_pack("{s:i, s:i, s:i}", "size", size, "ready", ready, "refilling", all - ready);
}

void sess_pool_forget(struct gw *gw, const char *tpl)
{
	struct api_error e;
	bool again = true;

	if (!gw->pools)
		return;
	if (sess_pool_set(gw, tpl, 0, &e) < 0)
		log_warn("pool", "%s: pool not forgotten on disk: %s", tpl, e.message);
	while (again) {
		again = false;
		for (struct sess *s = gw->sessions; s; s = s->next)
			if (!strcmp(s->pool_of, tpl)) {
				drop(s, "its template is deleted");
				again = true;
				break;
			}
	}
}

void sess_pool_totals(struct gw *gw, int *ready, int *refilling)
{
	int all;

	count(gw, NULL, &all, ready);
	*refilling = all - *ready;
}

bool sess_pool_make_room(struct gw *gw, int memory_mib)
{
	for (;;) {
		bool fits = memory_mib
				    ? !gw->memory_budget_mib || gw->memory_used_mib + memory_mib <=
									gw->memory_budget_mib
				    : gw->n_sessions < gw->max_sessions;
		struct sess *victim = NULL;

		if (fits)
			return true;
		/* ready members first: a refill under way is the newest */
		for (struct sess *s = gw->sessions; s; s = s->next)
			if (s->pool_of[0] && (!victim || member_ready(s)))
				victim = s;
		if (!victim)
			return false;
		metrics_pool_evicted();
		drop(victim, "a session needs the room");
	}
}

/* Makes member m the session req asks for and starts its resume: fresh
 * tokens, req's project, timeouts, egress rules and URL. 0, or -errno with
 * *e (m is untouched). */
static int claim(struct sess *m, const struct session_request *req, struct api_error *e)
{
	char control[AUTH_TOKEN_LEN + 1], view[AUTH_TOKEN_LEN + 1];
	struct egress_rules *rules = NULL;
	int64_t now = fs_now_ms();
	struct job *j;

	if (auth_new_token(control) < 0 || auth_new_token(view) < 0 ||
	    (req->egress && !(rules = egress_rules_dup(req->egress))))
		return api_error_set(e, 500, "internal", "out of memory or randomness");
	if (!(j = job_new(&job_kind_claim, m->gw->ctx))) {
		egress_rules_destroy(rules);
		return api_error_set(e, 500, "internal", "out of memory");
	}
	snprintf(j->url, sizeof(j->url), "%s", req->url);
	snprintf(j->label, sizeof(j->label), "%s", m->id); /* its logs name it */
	j->has_agent = m->has_agent;
	/* From here on m is the creator's: nothing of its time in the pool
	 * (its tokens, events, usage, boot) goes with it. */
	memcpy(m->control_token, control, sizeof(control));
	memcpy(m->view_token, view, sizeof(view));
	auth_token_hash(m->control_token, m->control_hash);
	auth_token_hash(m->view_token, m->view_hash);
	m->n_grants = 0;
	m->pool_of[0] = '\0';
	snprintf(m->pool_note, sizeof(m->pool_note), "hit");
	m->req = *req;
	m->req.page = NULL;
	m->req.egress = NULL;
	egress_set_rules(m->egress, rules);
	json_decref(m->ext);
	m->ext = NULL;
	events_clear(&m->events);
	m->error[0] = '\0';
	m->created_ms = m->active_ms = now;
	m->ready_ms = 0;
	m->expires_ms = req->timeout_s ? now + (int64_t)req->timeout_s * 1000 : 0;
	m->warned = false;
	memset(&m->usage, 0, sizeof(m->usage));
	usage_enter(&m->usage, USAGE_RUNNING, now);
	memset(&m->boot, 0, sizeof(m->boot));
	if (j->url[0]) { /* the page is opened over a link of the job's own */
		sess_agent_stop(m->agent);
		m->agent = NULL;
	}
	job_progress_begin(j, now);
	sess_guest_unwatch(m); /* the job's to service from now on */
	j->vm = m->vm;
	m->vm = NULL;
	if (job_start(j) < 0) {
		m->vm = j->vm;
		j->vm = NULL;
		job_free(j);
		sess_guest_watch(m);
		sess_set_failed(m, "cannot start a thread");
		return 0; /* a failed session of the creator's */
	}
	m->job = j;
	sess_set_state(m, SESS_STARTING);
	sess_tick_start(m);
	return 0;
}

int sess_pool_claim(struct gw *gw, const struct session_request *req, struct sess **out, char *why,
		    size_t whylen, struct api_error *e)
{
	struct pool_entry *ent = entry(gw->pools, req->image);
	struct sess *m = NULL;
	const char *miss = NULL;
	int rc;

	why[0] = '\0';
	if (!req->from_template || !ent || ent->size <= 0)
		return 0;
	/* What a restore would refuse, it refuses (another project's template
	 * is not there; a page, another size, a data: URL are 400s). */
	if (!project_sees_template(&gw->projects, req->project[0] ? req->project : NULL,
				   req->image) ||
	    req->page || !strncmp(req->url, "data:", 5))
		return 0;
	for (struct sess *s = gw->sessions; s && !m; s = s->next)
		if (!strcmp(s->pool_of, req->image) && member_ready(s))
			m = s;
	if (!m)
		miss = "empty";
	else if ((req->width && req->width != m->width) ||
		 (req->height && req->height != m->height) ||
		 (req->vcpus && req->vcpus != m->vcpus) ||
		 (req->memory_mib && req->memory_mib != m->memory_mib))
		return 0;
	else if (req->url[0] && !m->has_agent)
		return 0;
	else if (req->keyboard_layout[0] && strcmp(req->keyboard_layout, m->keyboard_layout))
		miss = "keyboard_layout";
	if (miss) {
		snprintf(why, whylen, "%s", miss);
		metrics_pool_miss(miss);
		return 0;
	}
	{
		struct quota_ask ask = { 1, m->vcpus, m->memory_mib, true };

		if ((rc = sess_check_quota(gw, req->project, &ask, e)) < 0)
			return rc;
	}
	if ((rc = claim(m, req, e)) < 0)
		return rc;
	metrics_pool_hit();
	log_info("pool", "%s: member %s claimed", req->image, m->id);
	schedule(gw->pools, POOL_TICK_MS); /* the refill, once the claim is over */
	*out = m;
	return 1;
}
