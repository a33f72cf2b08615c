/* gateway/core/metrics_proc.c: see metrics_proc.h. The table is under one
 * mutex; the sampler copies the pids out, reads /proc without the lock,
 * and writes the figures back to the entries that still have that pid. */
#include "gateway/core/metrics_proc.h"

#include "common/fsutil.h"
#include "gateway/core/metrics.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_SESSIONS 512

struct entry {
	struct metrics_session s;
	bool sampled;
	uint64_t rss, pss;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t kick = PTHREAD_COND_INITIALIZER;
static struct entry table[MAX_SESSIONS]; /* under mu */
static int n_table;
static bool running, stopping, kicked;
static pthread_t thread;

int metrics_proc_stat_ticks(const char *text, uint64_t *ticks)
{
	/* after "pid (comm) ": comm may hold anything, so start past the last ')' */
	const char *p = text ? strrchr(text, ')') : NULL;
	unsigned long long ut, st;

	if (!p ||
	    sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return -EINVAL;
	*ticks = ut + st;
	return 0;
}

int metrics_proc_rollup(const char *text, uint64_t *rss, uint64_t *pss)
{
	bool have_rss = false, have_pss = false;

	for (const char *line = text; line && *line;) {
		unsigned long long kib;

		if (sscanf(line, "Rss: %llu kB", &kib) == 1) {
			*rss = kib * 1024;
			have_rss = true;
		} else if (sscanf(line, "Pss: %llu kB", &kib) == 1) {
			*pss = kib * 1024;
			have_pss = true;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return have_rss && have_pss ? 0 : -EINVAL;
}

static void sample_one(pid_t pid, struct entry *e)
{
	char path[64], *text = NULL;

	e->sampled = false;
	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
	if (fs_read_file(path, 1 << 16, &text, NULL) < 0 ||
	    metrics_proc_rollup(text, &e->rss, &e->pss))
		goto out;
	e->sampled = true;
out:
	free(text);
}

static void *sampler(void *arg)
{
	static pid_t pids[MAX_SESSIONS];
	static struct entry got[MAX_SESSIONS];

	(void)arg;
	pthread_mutex_lock(&mu);
	while (!stopping) {
		struct timespec until;
		int n = n_table;

		for (int i = 0; i < n; i++)
			pids[i] = table[i].s.pid;
		pthread_mutex_unlock(&mu);
		for (int i = 0; i < n; i++)
			if (pids[i] > 0)
				sample_one(pids[i], &got[i]);
		pthread_mutex_lock(&mu);
		/* the table may have changed meanwhile: match by pid */
		for (int i = 0; i < n; i++)
			for (int k = 0; k < n_table && pids[i] > 0; k++)
				if (table[k].s.pid == pids[i]) {
					table[k].sampled = got[i].sampled;
					table[k].rss = got[i].rss;
					table[k].pss = got[i].pss;
				}
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += METRICS_PROC_INTERVAL_MS / 1000;
		while (!stopping && !kicked)
			if (pthread_cond_timedwait(&kick, &mu, &until) == ETIMEDOUT)
				break;
		kicked = false;
	}
	pthread_mutex_unlock(&mu);
	return NULL;
}

int metrics_proc_start(void)
{
	int rc = 0;

	pthread_mutex_lock(&mu);
	if (!running) {
		stopping = false;
		rc = -pthread_create(&thread, NULL, sampler, NULL);
		running = rc == 0;
	}
	pthread_mutex_unlock(&mu);
	return rc;
}

void metrics_proc_stop(void)
{
	bool was;

	pthread_mutex_lock(&mu);
	was = running;
	stopping = true;
	pthread_cond_signal(&kick);
	pthread_mutex_unlock(&mu);
	if (was)
		pthread_join(thread, NULL);
	pthread_mutex_lock(&mu);
	running = false;
	n_table = 0;
	pthread_mutex_unlock(&mu);
}

void metrics_proc_sync(const struct metrics_session *list, int n)
{
	static struct entry next[MAX_SESSIONS]; /* under mu */
	bool fresh = false;

	if (n > MAX_SESSIONS)
		n = MAX_SESSIONS;
	pthread_mutex_lock(&mu);
	for (int i = 0; i < n; i++) {
		int k = 0;

		while (k < n_table && strcmp(table[k].s.id, list[i].id))
			k++;
		if (k < n_table && table[k].s.pid == list[i].pid) {
			next[i] = table[k];
		} else {
			memset(&next[i], 0, sizeof(next[i]));
			fresh |= list[i].pid > 0;
		}
		next[i].s = list[i];
	}
	memcpy(table, next, (size_t)n * sizeof(table[0]));
	n_table = n;
	if (fresh) {
		kicked = true;
		pthread_cond_signal(&kick);
	}
	pthread_mutex_unlock(&mu);
}

int metrics_proc_render(struct bytebuf *out)
{
	static const struct {
		const char *name, *type, *help;
	} fam[] = {
		{ "vitrine_session_guest_memory_bytes", "gauge", "A session's guest memory." },
		{ "vitrine_session_vcpus", "gauge", "A session's vCPUs." },
		{ "vitrine_session_qemu_cpu_seconds_total", "counter",
		  "CPU time the session's QEMUs have used (its usage, read every few seconds)." },
		{ "vitrine_session_qemu_resident_bytes", "gauge",
		  "The session's QEMU's resident memory (RSS, sampled)." },
		{ "vitrine_session_qemu_proportional_bytes", "gauge",
		  "The session's QEMU's proportional set size (PSS, sampled)." },
	};
	char line[256];
	int rc = 0;

	pthread_mutex_lock(&mu);
	for (size_t f = 0; f < sizeof(fam) / sizeof(fam[0]) && rc == 0; f++) {
		int n = snprintf(line, sizeof(line), "# HELP %s %s\n# TYPE %s %s\n", fam[f].name,
				 fam[f].help, fam[f].name, fam[f].type);

		rc = bytebuf_append(out, line, (size_t)n);
		for (int i = 0; i < n_table && rc == 0; i++) {
			const struct entry *e = &table[i];
			char id[160];

			if (f >= 3 && !e->sampled)
				continue;
			metrics_escape(e->s.id, id, sizeof(id));
			if (f == 0)
				n = snprintf(line, sizeof(line), "%s{session=\"%s\"} %llu\n",
					     fam[f].name, id,
					     (unsigned long long)e->s.guest_memory_bytes);
			else if (f == 1)
				n = snprintf(line, sizeof(line), "%s{session=\"%s\"} %d\n",
					     fam[f].name, id, e->s.vcpus);
			else if (f == 2)
				n = snprintf(line, sizeof(line), "%s{session=\"%s\"} %.2f\n",
					     fam[f].name, id, e->s.qemu_cpu_seconds);
			else
				n = snprintf(line, sizeof(line), "%s{session=\"%s\"} %llu\n",
					     fam[f].name, id,
					     (unsigned long long)(f == 3 ? e->rss : e->pss));
			rc = bytebuf_append(out, line, (size_t)n);
		}
	}
	pthread_mutex_unlock(&mu);
	return rc < 0 ? -ENOMEM : 0;
}
