/* gateway/e2b/e2b_list.c: see e2b_list.h. */
#include "gateway/e2b/e2b_list.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void e2b_list_query_init(struct e2b_list_query *q)
{
	memset(q, 0, sizeof(*q));
	q->limit = E2B_LIST_DEFAULT_LIMIT;
}

static int fail(char *err, size_t errlen, const char *what, const char *value)
{
	snprintf(err, errlen, "%s: '%.64s' %s", what, value,
		 !strcmp(what, "state")		 ? "is not running or paused"
		 : !strcmp(what, "order")	 ? "is not asc or desc"
		 : !strcmp(what, "limit")	 ? "is not a number from 1 to 100"
		 : !strcmp(what, "startedAfter") ? "is not an RFC 3339 time"
		 : !strcmp(what, "nextToken")	 ? "is not a token this gateway gave"
						 : "is too long");
	return -EINVAL;
}

/* Adds each comma-separated state of v to *states. 0 or -EINVAL. */
static int states_of(const char *v, unsigned *states)
{
	while (*v) {
		size_t n = strcspn(v, ",");

		if (n == 7 && !strncmp(v, "running", 7))
			*states |= E2B_LIST_STATE_RUNNING;
		else if (n == 6 && !strncmp(v, "paused", 6))
			*states |= E2B_LIST_STATE_PAUSED;
		else
			return -EINVAL;
		v += n;
		if (*v == ',' && !*++v)
			return -EINVAL;
	}
	return 0;
}

/* A whole decimal number of at most digits digits at *p (advanced). */
static int number(const char **p, int digits, long long *out)
{
	long long v = 0;
	int n = 0;

	while (n < digits && isdigit((unsigned char)(*p)[n]))
		v = v * 10 + ((*p)[n++] - '0');
	if (!n || (digits < 18 && n != digits))
		return -EINVAL;
	*p += n;
	*out = v;
	return 0;
}

static int expect(const char **p, char c)
{
	if (toupper((unsigned char)**p) != c)
		return -EINVAL;
	(*p)++;
	return 0;
}

int e2b_rfc3339_ms(const char *s, int64_t *out_ms)
{
	long long y, mo, d, h, mi, sec, oh = 0, om = 0;
	int64_t frac_ms = 0, sign = 0;
	const char *p = s;
	struct tm tm = { 0 };
	time_t t;

	if (number(&p, 4, &y) || expect(&p, '-') || number(&p, 2, &mo) || expect(&p, '-') ||
	    number(&p, 2, &d) || expect(&p, 'T') || number(&p, 2, &h) || expect(&p, ':') ||
	    number(&p, 2, &mi) || expect(&p, ':') || number(&p, 2, &sec))
		return -EINVAL;
	if (*p == '.') {
		int n = 0;

		for (p++; isdigit((unsigned char)*p); p++, n++)
			if (n < 3)
				frac_ms = frac_ms * 10 + (*p - '0');
		if (!n)
			return -EINVAL;
		for (; n < 3; n++)
			frac_ms *= 10;
	}
	if (toupper((unsigned char)*p) == 'Z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		sign = *p++ == '+' ? 1 : -1;
		if (number(&p, 2, &oh) || expect(&p, ':') || number(&p, 2, &om) || oh > 23 ||
		    om > 59)
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	if (*p || y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
		return -EINVAL;
	tm.tm_year = (int)y - 1900;
	tm.tm_mon = (int)mo - 1;
	tm.tm_mday = (int)d;
	tm.tm_hour = (int)h;
	tm.tm_min = (int)mi;
	tm.tm_sec = (int)sec;
	if ((t = timegm(&tm)) == (time_t)-1)
		return -EINVAL;
	*out_ms = (int64_t)t * 1000 + frac_ms - sign * (oh * 3600 + om * 60) * 1000;
	return 0;
}

/* "MS.ID" as e2b_list_token writes it. 0 or -EINVAL. */
static int token_parse(const char *v, struct e2b_list_query *q)
{
	const char *dot = strchr(v, '.');
	long long ms;
	const char *p = v;

	if (!dot || dot == v || number(&p, 18, &ms) || p != dot || !dot[1] ||
	    strlen(dot + 1) >= sizeof(q->cursor_id))
		return -EINVAL;
	for (p = dot + 1; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_')
			return -EINVAL;
	q->has_cursor = true;
	q->cursor_ms = ms;
	snprintf(q->cursor_id, sizeof(q->cursor_id), "%s", dot + 1);
	return 0;
}

int e2b_list_query_arg(struct e2b_list_query *q, const char *arg, char *err, size_t errlen)
{
	const char *eq = strchr(arg, '=');
	const char *v = eq ? eq + 1 : "";
	size_t n = eq ? (size_t)(eq - arg) : strlen(arg);
	char *end;
	long l;

#define NAMED(s) (n == strlen(s) && !strncmp(arg, s, n))
	if (NAMED("metadata")) {
		if (strlen(v) >= sizeof(q->metadata))
			return fail(err, errlen, "metadata", v);
		snprintf(q->metadata, sizeof(q->metadata), "%s", v);
	} else if (NAMED("state")) {
		if (states_of(v, &q->states) < 0)
			return fail(err, errlen, "state", v);
	} else if (NAMED("startedAfter")) {
		if (e2b_rfc3339_ms(v, &q->started_after_ms) < 0)
			return fail(err, errlen, "startedAfter", v);
	} else if (NAMED("template")) {
		if (strlen(v) >= sizeof(q->template_id))
			return fail(err, errlen, "template", v);
		snprintf(q->template_id, sizeof(q->template_id), "%s", v);
	} else if (NAMED("order")) {
		if (strcmp(v, "asc") && strcmp(v, "desc"))
			return fail(err, errlen, "order", v);
		q->asc = !strcmp(v, "asc");
	} else if (NAMED("limit")) {
		errno = 0;
		l = strtol(v, &end, 10);
		if (!isdigit((unsigned char)*v) || *end || errno || l < 1 || l > E2B_LIST_MAX_LIMIT)
			return fail(err, errlen, "limit", v);
		q->limit = (int)l;
	} else if (NAMED("nextToken")) {
		if (*v && token_parse(v, q) < 0)
			return fail(err, errlen, "nextToken", v);
	}
#undef NAMED
	return 0;
}

int e2b_list_cmp(const struct e2b_list_query *q, int64_t a_ms, const char *a_id, int64_t b_ms,
		 const char *b_id)
{
	int c = a_ms < b_ms ? -1 : a_ms > b_ms ? 1 : strcmp(a_id, b_id);

	c = c < 0 ? -1 : c > 0;
	return q->asc ? c : -c;
}

bool e2b_list_after_cursor(const struct e2b_list_query *q, int64_t ms, const char *id)
{
	return !q->has_cursor || e2b_list_cmp(q, ms, id, q->cursor_ms, q->cursor_id) > 0;
}

void e2b_list_token(int64_t ms, const char *id, char *out, size_t len)
{
	snprintf(out, len, "%" PRId64 ".%s", ms, id);
}
