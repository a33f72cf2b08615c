/* gateway/core/audit.c: see audit.h. */
#include "gateway/core/audit.h"

#include "common/fsutil.h"
#include "common/log.h"
#include "gateway/core/auth.h"
#include "gateway/core/gw.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void audit_principal_set(struct audit_principal *p, const char *hash, const char *which, bool share)
{
	memset(p, 0, sizeof(*p));
	if (!hash || !hash[0])
		return;
	snprintf(p->token_id, sizeof(p->token_id), "%.*s", AUDIT_TOKEN_ID_LEN, hash);
	if (share)
		p->kind = "share";
	else if (!which || !which[0])
		p->kind = "unknown";
	else if (!strcmp(which, "operator"))
		p->kind = "operator";
	else if (!strcmp(which, "control"))
		p->kind = "control";
	else if (!strcmp(which, "view"))
		p->kind = "view";
	else if (!strncmp(which, "key_", 4))
		p->kind = "api_key";
	else
		p->kind = "minted";
}

void audit_token_id(const char *token, char out[AUDIT_TOKEN_ID_LEN + 1])
{
	char h[AUTH_HASH_LEN + 1];

	auth_token_hash(token, h);
	snprintf(out, AUDIT_TOKEN_ID_LEN + 1, "%.*s", AUDIT_TOKEN_ID_LEN, h);
}

static json_t *str_or_null(const char *s)
{
	return s && s[0] ? json_string(s) : json_null();
}

char *audit_format(int64_t unix_ms, const char *event, const char *session,
		   const struct audit_principal *p, const char *remote, const json_t *fields)
{
	json_t *j = json_object();
	char when[40], *line;

	if (!j)
		return NULL;
	fs_utc_time(unix_ms, when, sizeof(when));
	json_object_set_new(j, "time", json_string(when));
	json_object_set_new(j, "event", json_string(event));
	json_object_set_new(j, "session", str_or_null(session));
	if (p && p->kind)
		json_object_set_new(j, "principal",
				    json_pack("{s:s, s:s, s:s*}", "kind", p->kind, "token_id",
					      p->token_id, "project",
					      p->project[0] ? p->project : NULL));
	else
		json_object_set_new(j, "principal", json_null());
	json_object_set_new(j, "remote", str_or_null(remote));
	if (fields && json_is_object(fields))
		json_object_update_missing(j, (json_t *)fields);
	line = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	return line;
}

const char *audit_peer(struct lws *wsi, char *buf, size_t len)
{
	static const char mapped[] = "::ffff:";

	if (!lws_get_peer_simple(wsi, buf, len))
		return NULL;
	if (!strncmp(buf, mapped, sizeof(mapped) - 1) && strchr(buf, '.'))
		memmove(buf, buf + sizeof(mapped) - 1, strlen(buf) - (sizeof(mapped) - 1) + 1);
	return buf;
}

static void write_line(struct gw *gw, const char *event, const char *session,
		       const struct audit_principal *p, const char *remote, json_t *fields)
{
	char *line = audit_format(fs_unix_ms(), event, session, p, remote, fields);

	json_decref(fields);
	if (!line)
		return;
	log_debug("audit", "%s", line);
	logfile_append(&gw->audit_log, line, strlen(line));
	free(line);
}

static void write_summary(struct gw *gw, const struct audit_refusal_summary *sum)
{
	int64_t to_unix = fs_unix_ms() - fs_now_ms();
	char first[40], last[40];
	json_t *f;

	fs_utc_time(sum->first_ms + to_unix, first, sizeof(first));
	fs_utc_time(sum->last_ms + to_unix, last, sizeof(last));
	f = json_pack("{s:I, s:s, s:s, s:I}", "refused", (json_int_t)sum->counted, "first", first,
		      "last", last, "window_s", (json_int_t)(sum->window_ms / 1000));
	if (f && sum->others)
		json_object_set_new(f, "other_addresses", json_true());
	write_line(gw, "auth_refused_summary", NULL, NULL, sum->remote[0] ? sum->remote : NULL, f);
}

/* Writes the summaries of the windows closed by now (all: every one). */
static void write_closed(struct gw *gw, bool all)
{
	struct audit_refusal_summary sum[8];
	int n;

	do {
		n = audit_refusals_close(&gw->audit_refused, fs_now_ms(), all, sum, 8);
		for (int i = 0; i < n; i++)
			write_summary(gw, &sum[i]);
	} while (n == 8);
}

static void on_window_end(lws_sorted_usec_list_t *sul);

/* The timer at the next window with a summary to write, if any. */
static void arm(struct gw *gw)
{
	int64_t due = audit_refusals_next_due(&gw->audit_refused), in = due - fs_now_ms();

	if (!due || !gw->ctx)
		return;
	lws_sul_schedule(gw->ctx, 0, &gw->audit_sul, on_window_end,
			 (lws_usec_t)(in > 0 ? in : 0) * LWS_US_PER_MS);
}

static void on_window_end(lws_sorted_usec_list_t *sul)
{
	struct gw *gw = lws_container_of(sul, struct gw, audit_sul);

	write_closed(gw, false);
	arm(gw);
}

void audit_log(struct gw *gw, const char *event, const char *session,
	       const struct audit_principal *p, const char *remote, json_t *fields)
{
	if (gw->audit_log.path[0] && !gw->audit_stopped && !strcmp(event, "auth_refused")) {
		write_closed(gw, false); /* a window due, should the timer be late */
		if (!audit_refusals_note(&gw->audit_refused, remote, fs_now_ms())) {
			json_decref(fields);
			arm(gw);
			return;
		}
	}
	write_line(gw, event, session, p, remote, fields);
}

void audit_stop(struct gw *gw)
{
	gw->audit_stopped = true; /* the context is about to go: no timer after this */
	lws_sul_cancel(&gw->audit_sul);
	write_closed(gw, true);
}
