/* gateway/cli/cli_wait.c: waiting on a terminal. Off a terminal a client
 * command makes one long ?wait=ready request and prints its answer (what
 * scripts parse); on one (stderr a tty) it polls GET /v1/sessions/ID
 * instead and redraws one line on stderr with a spinner, the phase the
 * guest's start is in (the session's "boot", docs/api.md) and the time so
 * far, so that a person sees where a slow boot is. The line is cleared at
 * the end; stdout gets the same JSON either way. `vitrine template create`,
 * which makes its template itself, gets the same line from a thread of
 * its own (cli_spinner_*), told the steps by vmm_template_create. */
#include "common/fsutil.h"
#include "common/http_client.h"
#include "gateway/cli/cli.h"
#include "gateway/session/progress.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define POLL_MS 250
#define WAIT_LIMIT_MS (330 * 1000) /* as the one long request's */

bool cli_wait_on_tty(void)
{
	return isatty(STDERR_FILENO) == 1;
}

/* True while s (a session's JSON) is starting or a job is under way. */
static bool busy(const json_t *s)
{
	const char *st = json_string_value(json_object_get(s, "status"));

	return !st || !strcmp(st, "starting") || json_object_get(s, "busy");
}

static const char *const spin[] = { "⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏" };

/* One frame of the line for s, after waited_ms of waiting. */
static void draw(const json_t *s, int frame, int64_t waited_ms)
{
	const json_t *boot = json_object_get(s, "boot");
	const char *status = json_string_value(json_object_get(s, "status"));
	/* "starting", else what the job does ("resuming") */
	const char *what = status && !strcmp(status, "starting")
				   ? status
				   : json_string_value(json_object_get(s, "busy"));
	const char *phase = json_string_value(json_object_get(boot, "phase"));
	int64_t ms = json_object_get(boot, "phase_ms")
			     ? json_integer_value(json_object_get(boot, "elapsed_ms"))
			     : waited_ms; /* no start under way: a pause, say */

	if (!what)
		what = status;
	fprintf(stderr, "\r%s %s%s%s (%.1f s)\033[K", spin[frame % 10], what ? what : "waiting",
		phase && json_object_get(boot, "phase_ms") ? ": " : "",
		phase && json_object_get(boot, "phase_ms") ? progress_describe(phase) : "",
		ms / 1000.0);
	fflush(stderr);
}

int cli_wait_session(struct cli_client *cl, const char *id, const json_t *first,
		     struct http_resp *out)
{
	int64_t t0 = fs_now_ms();
	char path[96];
	int frame = 0, rc;

	snprintf(path, sizeof(path), "/v1/sessions/%s", id);
	if (first)
		draw(first, frame++, 0);
	for (;;) {
		if (cli_interrupted) {
			fprintf(stderr, "\r\033[K%s: interrupted while session %s was busy\n",
				cl->cmd, id);
			return 1;
		}
		if (frame) /* a failure's message must not follow the spinner */
			fprintf(stderr, "\r\033[K");
		rc = cli_client_request(cl, "GET", path, NULL, 0, 60, out);
		if (rc)
			return rc;
		if (!busy(out->json) || fs_now_ms() - t0 > WAIT_LIMIT_MS)
			break;
		draw(out->json, frame++, fs_now_ms() - t0);
		http_resp_free(out);
		usleep(POLL_MS * 1000);
	}
	fprintf(stderr, "\r\033[K");
	fflush(stderr);
	return 0;
}

struct cli_spinner {
	pthread_t thread;
	const char *what; /* not owned: the caller's, for as long as the spinner */
	_Atomic(const char *) phase; /* a progress_phase_name(): static */
	atomic_bool stop;
	int64_t t0;
};

static void *spinner_thread(void *arg)
{
	struct cli_spinner *sp = arg;

	for (int frame = 0; !atomic_load(&sp->stop); frame++) {
		fprintf(stderr, "\r%s %s: %s (%.1f s)\033[K", spin[frame % 10], sp->what,
			progress_describe(atomic_load(&sp->phase)),
			(fs_now_ms() - sp->t0) / 1000.0);
		fflush(stderr);
		usleep(POLL_MS * 1000);
	}
	fprintf(stderr, "\r\033[K");
	fflush(stderr);
	return NULL;
}

struct cli_spinner *cli_spinner_start(const char *what)
{
	struct cli_spinner *sp;

	if (!cli_wait_on_tty() || !(sp = calloc(1, sizeof(*sp))))
		return NULL;
	sp->what = what;
	sp->t0 = fs_now_ms();
	atomic_init(&sp->phase, progress_phase_name(PROGRESS_PREPARING));
	if (pthread_create(&sp->thread, NULL, spinner_thread, sp)) {
		free(sp);
		return NULL; /* no line then */
	}
	return sp;
}

void cli_spinner_step(void *ud, enum vmm_step step)
{
	struct cli_spinner *sp = ud;

	if (sp)
		atomic_store(&sp->phase, progress_phase_name(progress_of_step(step)));
}

void cli_spinner_stop(struct cli_spinner *sp)
{
	if (!sp)
		return;
	atomic_store(&sp->stop, true);
	pthread_join(sp->thread, NULL);
	free(sp);
}
