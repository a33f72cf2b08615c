/* gateway/stream/rec_export.c: see rec_export.h. */
#include "gateway/stream/rec_export.h"

#include "common/fsutil.h"
#include "common/work_queue.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* ffmpeg gets this long, plus a second per 20 frames, then it is killed. */
#define EXPORT_BASE_TIMEOUT_MS 60000
#define EXPORT_MS_PER_FRAME 50
#define EXPORT_MAX_BYTES (1u << 30)

struct rec_export {
	struct work_queue *q; /* whose job it is */
	char dir[PATH_MAX - 32];
	struct rec_frame *frames; /* owned copy */
	size_t n;
	int64_t end_ms;
	int width, height;
	atomic_bool cancel; /* set by the loop: ffmpeg is killed */
	/* The loop's: who hears of the end (done, or gone once abandoned). */
	rec_export_done_fn done;
	void *ud;
	void (*gone)(void *gone_ud);
	void *gone_ud;
	/* The result, written by the worker before the job's done. */
	int rc;
	char err[256];
	uint8_t *data; /* owned until handed to done */
	size_t len;
};

/* Runs ffmpeg on the list; 0, or -errno with x->err. */
static int run_ffmpeg(struct rec_export *x, const char *list, const char *out, const char *log)
{
	char scale[64], timeout_note[64];
	const char *argv[] = {
		"ffmpeg",	"-nostdin",  "-v",    "error",	"-y",
		"-f",		"concat",    "-safe", "0",	"-protocol_whitelist",
		"file,subfile", "-i",	     list,    "-vf",	scale,
		"-fps_mode",	"vfr",	     "-c:v",  "libvpx", "-deadline",
		"realtime",	"-cpu-used", "8",     "-b:v",	"1M",
		"-f",		"webm",	     out,     NULL
	};
	posix_spawn_file_actions_t fa;
	int64_t deadline = fs_now_ms() + EXPORT_BASE_TIMEOUT_MS +
			   (int64_t)x->n * EXPORT_MS_PER_FRAME;
	pid_t pid;
	int rc, status;

	snprintf(scale, sizeof(scale), "scale=%d:%d,format=yuv420p", x->width, x->height);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	rc = posix_spawnp(&pid, "ffmpeg", &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc) {
		snprintf(x->err, sizeof(x->err), "cannot run ffmpeg: %s", strerror(rc));
		return -rc;
	}
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);

		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			snprintf(x->err, sizeof(x->err), "waitpid: %s", strerror(errno));
			return -ECHILD;
		}
		if (atomic_load(&x->cancel) || fs_now_ms() > deadline) {
			kill(pid, SIGKILL);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			snprintf(timeout_note, sizeof(timeout_note), "%s",
				 atomic_load(&x->cancel) ? "cancelled" : "took too long");
			snprintf(x->err, sizeof(x->err), "ffmpeg was killed: %s", timeout_note);
			return atomic_load(&x->cancel) ? -ECANCELED : -ETIMEDOUT;
		}
		nanosleep(&(struct timespec){ 0, 50 * 1000 * 1000 }, NULL);
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		char *msg = NULL;
		size_t n = 0;

		fs_read_file(log, 4096, &msg, &n);
		while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
			msg[--n] = '\0';
		snprintf(x->err, sizeof(x->err), "ffmpeg %s %d: %.180s",
			 WIFEXITED(status) ? "exited" : "died of signal",
			 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
			 msg && n ? (strrchr(msg, '\n') ? strrchr(msg, '\n') + 1 : msg) : "");
		free(msg);
		return -EIO;
	}
	return 0;
}

static int export(struct rec_export *x)
{
	char frames[PATH_MAX], list[PATH_MAX], tmp[PATH_MAX], out[PATH_MAX], log[PATH_MAX];
	char *text;
	int rc;

	snprintf(frames, sizeof(frames), "%s/frames.bin", x->dir);
	snprintf(list, sizeof(list), "%s/export.ffconcat", x->dir);
	snprintf(tmp, sizeof(tmp), "%s/recording.webm.tmp", x->dir);
	snprintf(out, sizeof(out), "%s/recording.webm", x->dir);
	snprintf(log, sizeof(log), "%s/export.log", x->dir);
	if (!(text = rec_concat_list(x->frames, x->n, x->end_ms, frames))) {
		snprintf(x->err, sizeof(x->err), "out of memory for the frame list");
		return -ENOMEM;
	}
	rc = fs_write_file(list, text, strlen(text));
	free(text);
	if (rc < 0) {
		snprintf(x->err, sizeof(x->err), "writing %.200s: %s", list, strerror(-rc));
		return rc;
	}
	if ((rc = run_ffmpeg(x, list, tmp, log)) < 0)
		return rc;
	if (rename(tmp, out) < 0) {
		rc = -errno;
		snprintf(x->err, sizeof(x->err), "rename %.200s: %s", out, strerror(errno));
		return rc;
	}
	rc = fs_read_file(out, EXPORT_MAX_BYTES, (char **)&x->data, &x->len);
	if (rc < 0)
		snprintf(x->err, sizeof(x->err), "reading %.200s: %s", out, strerror(-rc));
	return rc;
}

static void export_free(struct rec_export *x)
{
	free(x->frames);
	free(x->data);
	free(x);
}

/* The bulk queue's work (a worker's). */
static void export_work(void *ud, void *ctx)
{
	struct rec_export *x = ud;

	(void)ctx;
	x->rc = export(x);
}

/* The job's done (the loop's): the export's owner hears, and it goes. */
static void export_done(void *ud, int status)
{
	struct rec_export *x = ud;

	if (status < 0) {
		x->rc = status;
		snprintf(x->err, sizeof(x->err), "the export never ran: the gateway is stopping");
	}
	if (x->done) {
		x->done(x->ud, x->rc, x->rc == 0 ? x->data : NULL, x->rc == 0 ? x->len : 0, x->err);
		if (x->rc == 0)
			x->data = NULL; /* done's now */
	} else if (x->gone) {
		x->gone(x->gone_ud);
	}
	export_free(x);
}

int rec_export_start(struct work_queue *q, const void *owner, const char *dir,
		     const struct rec_frame *frames, size_t n, int64_t end_ms, int width,
		     int height, rec_export_done_fn done, void *ud, struct rec_export **out)
{
	struct rec_export *x = calloc(1, sizeof(*x));
	int rc;

	*out = NULL;
	if (!x || !n || !(x->frames = malloc(n * sizeof(*frames)))) {
		free(x);
		return -ENOMEM;
	}
	memcpy(x->frames, frames, n * sizeof(*frames));
	x->q = q;
	x->n = n;
	snprintf(x->dir, sizeof(x->dir), "%s", dir);
	x->end_ms = end_ms;
	x->width = width;
	x->height = height;
	x->done = done;
	x->ud = ud;
	atomic_init(&x->cancel, false);
	if ((rc = work_queue_submit(q, owner, export_work, export_done, x)) < 0) {
		export_free(x);
		return rc == -EBUSY ? rc : -ENOMEM;
	}
	*out = x;
	return 0;
}

void rec_export_abandon(struct rec_export *x, void (*gone)(void *gone_ud), void *gone_ud)
{
	if (!x)
		return;
	x->done = NULL;
	x->gone = gone;
	x->gone_ud = gone_ud;
	atomic_store(&x->cancel, true);
	/* Still queued: its done comes now (and calls gone); else once ffmpeg is gone. */
	work_queue_cancel(x->q, x);
}
