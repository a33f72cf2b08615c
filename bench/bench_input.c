/* bench/bench_input.c: input through the gateway on the desktop guest, in
 * one run against one session with a page holding a focused textarea:
 *  - `type` of 100 ASCII characters and of 100 mixed-script ones (Latin
 *    accents, Cyrillic, CJK, two emoji) through POST .../actions (ASCII
 *    goes as QMP key events, the rest whole through the guest agent into
 *    the page), against `xdotool type` of the same strings run in the guest
 *    with POST .../exec (the usual way of typing into an X desktop). Each is
 *    timed from the request to its answer ("call"), and end to end: from
 *    the request's start until the page's textarea holds all 100 characters
 *    (the input event that completed it, or the last one when it never
 *    was). That moment is the page's own Date.now(), put on the host's
 *    clock with the guest clock's offset, measured before each run by
 *    `date +%s%N` through POST .../exec (the fastest of 5 round trips,
 *    taken as read at its middle: the figure is off by at most half that
 *    round trip, printed). Medians of --runs. The text is read back from
 *    the page afterwards: how many of the 100 characters arrived, in order
 *    (the longest common subsequence of what arrived and what was sent),
 *    and over how long the page saw its input events come in.
 *  - a batch of 5 mouse_move actions in one POST against the same 5 as
 *    separate POSTs, interleaved over --rounds rounds: p50 and p90 of each.
 * Prints chars/s and ratios. No target: a measurement.
 * usage: bench_input [--runs N] [--rounds N] [--xdotool-delay MS] */
#include "common/http_client.h"
#include "tests/lib/gateway_proc.h"
#include "tests/lib/page_eval.h"
#include "tests/lib/stats.h"
#include "vmm-qemu/run_dir.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_RUNS 50
#define MAX_ROUNDS 200
#define MAX_CP 512 /* code points compared per string */
#define TEXT_CP 100

/* A textarea over most of the page, focused; its input events timed, and
 * the wall-clock moment (Date.now(), the guest's clock) of the last one and
 * of the one after which it holds the text benchReset was given. */
static const char page_html[] =
	"<!doctype html><meta charset=\"utf-8\"><title>bench-input</title>"
	"<style>html,body{margin:0;height:100%}textarea{position:fixed;left:5%;top:5%;"
	"width:90%;height:90%;font-size:18px}</style>"
	"<textarea id=\"t\" autofocus spellcheck=\"false\" autocomplete=\"off\"></textarea>"
	"<script>const t = document.getElementById('t');"
	"t.addEventListener('input', () => { const n = performance.now(), d = Date.now();"
	" if (window.first === null) window.first = n; window.last = n; window.lastAt = d;"
	" window.inputs++; if (window.doneAt === null && t.value === window.want)"
	" window.doneAt = d; });"
	"window.benchReset = (want) => { t.value = ''; window.first = null; window.last = null;"
	" window.lastAt = null; window.doneAt = null; window.want = want; window.inputs = 0;"
	" t.focus(); return document.activeElement === t; };"
	"window.benchReset('');</script>";

/* 100 printable ASCII characters, every shifted one of a US keyboard among them. */
static const char text_ascii[] = "The quick brown fox jumps over the lazy dog. 0123456789 "
				 "~!@#$%^&*()_+-={}[]|\\:;\"'<>,.?/` Pack my box";
/* 100 code points: "Café déjà vu, naïve façade; Ærøskøbing, Łódź, Straße.
 * Привет, мир! Съешь же ещё. 你好世界，漢字テスト。😀🚀 ok ñ!" */
static const char text_mixed[] =
	"Caf\xc3\xa9 d\xc3\xa9j\xc3\xa0 vu, na\xc3\xafve fa\xc3\xa7"
	"ade; \xc3\x86r\xc3\xb8sk\xc3\xb8"
	"bing, \xc5\x81\xc3\xb3"
	"d\xc5\xba, Stra\xc3\x9f"
	"e. "
	"\xd0\x9f\xd1\x80\xd0\xb8\xd0\xb2\xd0\xb5\xd1\x82, \xd0\xbc\xd0\xb8\xd1\x80! "
	"\xd0\xa1\xd1\x8a\xd0\xb5\xd1\x88\xd1\x8c \xd0\xb6\xd0\xb5 \xd0\xb5\xd1\x89\xd1\x91. "
	"\xe4\xbd\xa0\xe5\xa5\xbd\xe4\xb8\x96\xe7\x95\x8c\xef\xbc\x8c\xe6\xbc\xa2\xe5\xad\x97"
	"\xe3\x83\x86\xe3\x82\xb9\xe3\x83\x88\xe3\x80\x82"
	"\xf0\x9f\x98\x80\xf0\x9f\x9a\x80 ok \xc3\xb1!";

/* What one way of typing one string did over the runs. */
struct series {
	const char *label;
	double call_ms[MAX_RUNS]; /* request -> answer */
	double e2e_ms[MAX_RUNS]; /* request -> the field held the text (or its last input) */
	double clock_err_ms[MAX_RUNS]; /* e2e_ms is off by at most this */
	bool complete[MAX_RUNS]; /* the field held the text at some point */
	double span_ms[MAX_RUNS]; /* the page's first -> last input event */
	int inputs[MAX_RUNS]; /* input events the page saw */
	int exact[MAX_RUNS]; /* characters that arrived in order */
	int got[MAX_RUNS]; /* characters in the field afterwards */
};

struct bench {
	struct gateway_proc g;
	char path_act[128], path_exec[128];
	char qga[512];
	int xdotool_delay; /* -1: xdotool's default */
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The host's wall clock in ms, the one the guest's is compared with. */
static double wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* UTF-8 (valid: it comes from jansson or from this file) -> at most max
 * code points. Returns how many. */
static int utf8_codepoints(const char *s, uint32_t *out, int max)
{
	const unsigned char *u = (const unsigned char *)s;
	int n = 0;

	while (*u && n < max) {
		uint32_t c = *u++;
		int extra = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;

		if (extra)
			c &= 0x3f >> extra;
		for (; extra > 0 && *u; extra--)
			c = (c << 6) | (*u++ & 0x3f);
		out[n++] = c;
	}
	return n;
}

/* The length of the longest common subsequence of a and b: the characters
 * sent that arrived, in order, whatever was dropped or repeated around them. */
static int lcs(const uint32_t *a, int na, const uint32_t *b, int nb)
{
	static int prev[MAX_CP + 1], cur[MAX_CP + 1];

	memset(prev, 0, sizeof(prev));
	for (int i = 1; i <= na; i++) {
		cur[0] = 0;
		for (int j = 1; j <= nb; j++)
			cur[j] = a[i - 1] == b[j - 1]	? prev[j - 1] + 1
				 : prev[j] > cur[j - 1] ? prev[j]
							: cur[j - 1];
		memcpy(prev, cur, sizeof(prev));
	}
	return prev[nb];
}

/* POSTs body (a JSON value, which it consumes) to path and wants 200.
 * Returns the answer (the caller decrefs), or NULL after printing why;
 * *ms is the request's time. */
static json_t *post(const struct bench *b, const char *path, json_t *body, double *ms)
{
	char *text = json_dumps(body, JSON_COMPACT);
	struct http_resp r;
	json_t *j = NULL;
	double t0 = now_ms();

	json_decref(body);
	if (!text)
		return NULL;
	if (http_request("127.0.0.1", b->g.port, "POST", path, b->g.key, text, strlen(text), 120,
			 &r) < 0 ||
	    r.status != 200)
		fprintf(stderr, "bench_input: POST %s %.200s: %d %.300s\n", path, text, r.status,
			r.body ? r.body : "");
	else
		j = json_incref(r.json);
	if (ms)
		*ms = now_ms() - t0;
	http_resp_free(&r);
	free(text);
	return j;
}

/* Runs argv-less shell line cmd in the guest as the desktop user; returns
 * its exit code, or -1 when the exec itself failed. */
static int guest_sh(const struct bench *b, const char *cmd)
{
	json_t *j = post(b, b->path_exec, json_pack("{s:s}", "cmd", cmd), NULL);
	int code = j ? (int)json_integer_value(json_object_get(j, "exit_code")) : -1;

	json_decref(j);
	return code;
}

/* The guest's wall clock minus the host's, in ms: `date +%s%N` run in the
 * guest through POST .../exec five times, the one with the shortest round
 * trip taken as read at its middle; *err_ms is half that round trip, what
 * the offset may be off by. Returns 0, or -1 after printing why. */
static int guest_clock_offset(const struct bench *b, double *offset_ms, double *err_ms)
{
	double best = -1;

	for (int i = 0; i < 5; i++) {
		double t0 = wall_ms(), t1, guest;
		json_t *j = post(b, b->path_exec,
				 json_pack("{s:s, s:[s]}", "cmd", "/bin/date", "args", "+%s%N"),
				 NULL);
		const char *out = j ? json_string_value(json_object_get(j, "stdout")) : NULL;

		t1 = wall_ms();
		if (!out || json_integer_value(json_object_get(j, "exit_code")) != 0) {
			fprintf(stderr, "bench_input: date in the guest failed\n");
			json_decref(j);
			return -1;
		}
		guest = strtod(out, NULL) / 1e6;
		json_decref(j);
		if (best < 0 || t1 - t0 < best) {
			best = t1 - t0;
			*offset_ms = guest - (t0 + t1) / 2;
		}
	}
	*err_ms = best / 2;
	return 0;
}

/* Empties the field and tells the page the text to wait for. */
static int page_reset(const struct bench *b, const char *want)
{
	json_t *w = json_string(want), *v = NULL;
	char err[1024], expr[2048];
	char *lit = w ? json_dumps(w, JSON_ENCODE_ANY | JSON_ENSURE_ASCII) : NULL;
	int rc;

	json_decref(w);
	if (lit && snprintf(expr, sizeof(expr), "window.benchReset(%s)", lit) < (int)sizeof(expr))
		v = page_eval(b->qga, expr, err, sizeof(err));
	else
		snprintf(err, sizeof(err), "the text does not fit the expression");
	free(lit);
	rc = json_is_true(v) ? 0 : -1;
	if (!v)
		fprintf(stderr, "bench_input: page: %s\n", err);
	else if (rc)
		fprintf(stderr, "bench_input: the textarea does not have the focus\n");
	json_decref(v);
	return rc;
}

/* Waits until the field holds want, or has not changed for three reads in
 * a row (input still on its way to a slow guest is given that long), 60 s
 * at most. Returns the page's state {v, span, inputs, doneAt, lastAt} (the
 * caller decrefs), or NULL after printing why. */
static json_t *page_settled(const struct bench *b, const char *want)
{
	static const char expr[] = "({v: document.getElementById('t').value, inputs: window.inputs,"
				   " span: window.last === null ? 0 : window.last - window.first,"
				   " doneAt: window.doneAt, lastAt: window.lastAt})";
	char err[1024], *last = NULL;
	json_t *st = NULL;
	int same = 0;
	double t0 = now_ms();

	while (now_ms() - t0 < 60000) {
		const char *v;

		json_decref(st);
		/* A Chromium busy with a burst of input may leave DevTools
		 * unanswered for a while under TCG: ask again. */
		if (!(st = page_eval(b->qga, expr, err, sizeof(err)))) {
			usleep(500 * 1000);
			continue;
		}
		v = json_string_value(json_object_get(st, "v"));
		if (!v || !strcmp(v, want))
			break;
		same = last && !strcmp(last, v) ? same + 1 : 0;
		if (same >= 2)
			break;
		free(last);
		last = strdup(v);
		usleep(200 * 1000);
	}
	free(last);
	if (!st)
		fprintf(stderr, "bench_input: page: %s\n", err);
	return st;
}

/* Types text once, by the gateway's `type` action or by xdotool in the
 * guest, into the emptied field, and notes run i of s (i < 0: a warm-up,
 * not noted). Returns 0, or -1 after printing why. */
static int type_once(const struct bench *b, bool xdotool, const char *text, struct series *s, int i)
{
	uint32_t want[MAX_CP], got[MAX_CP];
	int n_want, n_got, exact;
	double ms = 0, offset = 0, clock_err = 0, start, e2e;
	json_t *j, *st, *done, *last;
	const char *v;

	if (page_reset(b, text) < 0 || guest_clock_offset(b, &offset, &clock_err) < 0)
		return -1;
	start = wall_ms();
	if (!xdotool) {
		j = post(b, b->path_act, json_pack("{s:s, s:s}", "action", "type", "text", text),
			 &ms);
	} else {
		json_t *args = json_pack("[s]", "type");

		if (b->xdotool_delay >= 0) {
			char d[16];

			snprintf(d, sizeof(d), "%d", b->xdotool_delay);
			json_array_append_new(args, json_string("--delay"));
			json_array_append_new(args, json_string(d));
		}
		json_array_append_new(args, json_string("--"));
		json_array_append_new(args, json_string(text));
		j = post(b, b->path_exec,
			 json_pack("{s:s, s:o, s:i}", "cmd", "/usr/bin/xdotool", "args", args,
				   "timeout", 120),
			 &ms);
		if (j && json_integer_value(json_object_get(j, "exit_code")) != 0) {
			fprintf(stderr, "bench_input: xdotool exited %d: %s\n",
				(int)json_integer_value(json_object_get(j, "exit_code")),
				json_string_value(json_object_get(j, "stderr")));
			json_decref(j);
			return -1;
		}
	}
	if (!j)
		return -1;
	json_decref(j);
	if (!(st = page_settled(b, text)))
		return -1;
	/* When the field held the text (or took its last input), on the
	 * host's clock. */
	done = json_object_get(st, "doneAt");
	last = json_object_get(st, "lastAt");
	e2e = (json_is_number(done)   ? json_number_value(done)
	       : json_is_number(last) ? json_number_value(last)
				      : start + offset) -
	      offset - start;
	v = json_string_value(json_object_get(st, "v"));
	n_want = utf8_codepoints(text, want, MAX_CP);
	n_got = utf8_codepoints(v ? v : "", got, MAX_CP);
	exact = lcs(want, n_want, got, n_got);
	fprintf(stderr,
		"bench_input: %s %s run %d: call %.0f ms, end to end %.0f ms%s (+-%.0f), %d in "
		"order, the field holds %d, %d input events\n",
		xdotool ? "xdotool" : "gateway", text == text_ascii ? "ASCII" : "mixed", i, ms, e2e,
		json_is_number(done) ? "" : " (never whole: its last input)", clock_err, exact,
		n_got, (int)json_integer_value(json_object_get(st, "inputs")));
	if (i >= 0) {
		s->call_ms[i] = ms;
		s->e2e_ms[i] = e2e;
		s->clock_err_ms[i] = clock_err;
		s->complete[i] = json_is_number(done);
		s->span_ms[i] = json_number_value(json_object_get(st, "span"));
		s->inputs[i] = (int)json_integer_value(json_object_get(st, "inputs"));
		s->exact[i] = exact;
		s->got[i] = n_got;
	}
	json_decref(st);
	return 0;
}

static double median(const double *v, int n)
{
	double tmp[MAX_RUNS];

	memcpy(tmp, v, sizeof(double) * (size_t)n);
	return stats_pct(tmp, n, 0.5);
}

/* One line of the typing table; *cps_call and *cps_e2e get its chars/s by
 * the median call and the median end to end. */
static void report_series(const struct series *s, int runs, double *cps_call, double *cps_e2e)
{
	double call = median(s->call_ms, runs), span = median(s->span_ms, runs);
	double e2e = median(s->e2e_ms, runs), err = 0;
	double inputs[MAX_RUNS];
	char arrived[MAX_RUNS * 5 + 1] = "";
	int whole = 0;

	for (int i = 0; i < runs; i++) {
		inputs[i] = s->inputs[i];
		whole += s->complete[i];
		if (s->clock_err_ms[i] > err)
			err = s->clock_err_ms[i];
		snprintf(arrived + strlen(arrived), sizeof(arrived) - strlen(arrived), "%s%d",
			 i ? " " : "", s->exact[i]);
	}
	*cps_call = TEXT_CP / (call / 1e3);
	*cps_e2e = TEXT_CP / (e2e / 1e3);
	printf("  %-34s %7.0f ms %8.1f %7.0f ms %8.1f %3d/%-3d +-%-3.0f %7.0f ms %5.0f   %s (of %d; "
	       "field held",
	       s->label, call, *cps_call, e2e, *cps_e2e, whole, runs, err, span,
	       median(inputs, runs), arrived, TEXT_CP);
	for (int i = 0; i < runs; i++)
		printf(" %d", s->got[i]);
	printf(")\n");
}

static void report_batch(const char *label, double *v, int n, double *p50, double *p90)
{
	*p50 = stats_pct(v, n, 0.5);
	*p90 = stats_pct(v, n, 0.9);
	printf("  %-40s p50 %7.1f ms  p90 %7.1f ms\n", label, *p50, *p90);
}

/* Five small actions: pointer moves over the textarea (no click pacing). */
static json_t *move_action(int k)
{
	return json_pack("{s:s, s:[i,i]}", "action", "mouse_move", "coordinate", 300 + 40 * k,
			 300 + 20 * (k % 2));
}

int main(int argc, char **argv)
{
	static struct series series[4] = {
		{ .label = "ASCII  gateway POST .../actions" },
		{ .label = "ASCII  xdotool type (POST .../exec)" },
		{ .label = "mixed  gateway POST .../actions" },
		{ .label = "mixed  xdotool type (POST .../exec)" },
	};
	static double sep_ms[MAX_ROUNDS], batch_ms[MAX_ROUNDS];
	static struct bench b;
	const char *texts[2] = { text_ascii, text_mixed };
	uint32_t cp[MAX_CP];
	int runs = 5, rounds = 20, rc = 1;
	struct gateway_session sess = { 0 };
	int have_xdotool;
	json_t *req;
	char *body;

	b.xdotool_delay = -1;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--runs") && i + 1 < argc)
			runs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--xdotool-delay") && i + 1 < argc)
			b.xdotool_delay = atoi(argv[++i]);
	if (runs < 1 || runs > MAX_RUNS || rounds < 2 || rounds > MAX_ROUNDS) {
		fprintf(stderr,
			"usage: bench_input [--runs 1..%d] [--rounds 2..%d] "
			"[--xdotool-delay MS]\n",
			MAX_RUNS, MAX_ROUNDS);
		return 2;
	}
	if (utf8_codepoints(text_ascii, cp, MAX_CP) != TEXT_CP ||
	    utf8_codepoints(text_mixed, cp, MAX_CP) != TEXT_CP) {
		fprintf(stderr, "bench_input: a test string is not %d characters\n", TEXT_CP);
		return 1;
	}
	if (gateway_proc_start(&b.g, NULL) < 0)
		return 1;
	req = json_pack("{s:s, s:s}", "image", "desktop", "page", page_html);
	body = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	/* A desktop boot on a loaded TCG host can miss the guest's own ready
	 * timeout: a second boot gets its chance. */
	for (int tries = 0; body && !sess.id[0] && tries < 2; tries++)
		if (gateway_proc_create_session(&b.g, body, 900, &sess) < 0)
			gateway_proc_delete_sessions(&b.g);
	free(body);
	if (!sess.id[0])
		goto out;
	snprintf(b.path_act, sizeof(b.path_act), "/v1/sessions/%s/actions", sess.id);
	snprintf(b.path_exec, sizeof(b.path_exec), "/v1/sessions/%s/exec", sess.id);
	if (gateway_proc_qga_socket(&b.g, b.qga, sizeof(b.qga)) < 0) {
		fprintf(stderr, "bench_input: no guest agent socket in %s\n", b.g.run_base);
		goto out;
	}
	/* The desktop image lists xdotool (guest-images/desktop/recipe.sh);
	 * an image without it still gets the gateway's figures. */
	if ((have_xdotool = guest_sh(&b, "command -v xdotool >/dev/null")) < 0)
		goto out;
	have_xdotool = have_xdotool == 0;
	if (!have_xdotool)
		printf("xdotool is not in this desktop image: no baseline\n");
	/* A click gives Chromium's window the keyboard and the caret the field. */
	req = json_pack("{s:s, s:[i,i]}", "action", "left_click", "coordinate", 640, 400);
	json_decref(post(&b, b.path_act, req, NULL));

	/* One untimed round first (TCG translates each path's code on first use),
	 * then the runs, interleaved so each way sees the same load. */
	for (int i = -1; i < runs; i++)
		for (int t = 0; t < 2; t++)
			for (int x = 0; x < (have_xdotool ? 2 : 1); x++)
				if (type_once(&b, x, texts[t], &series[t * 2 + x], i) < 0)
					goto out;
	for (int i = -2; i < rounds; i++) {
		json_t *list = json_array();
		double ms, sum = 0;

		for (int k = 0; k < 5; k++) {
			json_t *j = post(&b, b.path_act, move_action(k), &ms);

			if (!j)
				goto out;
			json_decref(j);
			sum += ms;
		}
		for (int k = 0; k < 5; k++)
			json_array_append_new(list, move_action(4 - k));
		if (!(req = post(&b, b.path_act, json_pack("{s:o}", "actions", list), &ms)))
			goto out;
		json_decref(req);
		if (i >= 0) {
			sep_ms[i] = sum;
			batch_ms[i] = ms;
		}
	}

	printf("type of %d characters into a focused textarea, desktop guest 1280x800, median of %d "
	       "runs, interleaved (TCG):\n",
	       TEXT_CP, runs);
	printf("  %-34s %10s %8s %10s %8s %7s %5s %10s %5s   %s\n", "", "call", "chars/s",
	       "end to end", "chars/s", "whole", "clock", "page input", "events",
	       "arrived in order, each run");
	{
		double call[4], e2e[4];

		for (int s = 0; s < 4; s++)
			if (have_xdotool || s % 2 == 0)
				report_series(&series[s], runs, &call[s], &e2e[s]);
		if (have_xdotool)
			printf("  ratio gateway / xdotool (chars/s): by the call ASCII %.2fx, mixed "
			       "%.2fx; end to end ASCII %.2fx, mixed %.2fx  (xdotool %s)\n",
			       call[0] / call[1], call[2] / call[3], e2e[0] / e2e[1],
			       e2e[2] / e2e[3],
			       b.xdotool_delay < 0 ? "with its default 12 ms delay"
						   : "--delay given");
	}
	printf("  (end to end: request start -> the input event after which the field held all %d "
	       "characters, the page's Date.now() on the host's clock; \"whole\": runs where it "
	       "did, the others count to their last input; \"clock\": the most the guest clock's "
	       "offset may be off, ms)\n",
	       TEXT_CP);
	{
		double s50, s90, b50, b90;

		printf("5 mouse_move actions, %d rounds, interleaved:\n", rounds);
		report_batch("5 separate POST .../actions", sep_ms, rounds, &s50, &s90);
		report_batch("one POST {\"actions\": [5 of them]}", batch_ms, rounds, &b50, &b90);
		printf("  ratio separate / batch: p50 %.2fx  p90 %.2fx\n",
		       s50 / (b50 > 0 ? b50 : 1), s90 / (b90 > 0 ? b90 : 1));
	}
	rc = 0;
out:
	gateway_proc_delete_sessions(&b.g);
	gateway_proc_stop(&b.g);
	return rc;
}
