/* gateway/guest/file_xfer.c: see file_xfer.h. A transfer is held twice: by
 * its owner (until file_xfer_release) and by its agent channel (until the
 * channel's closed callback); the link's thread only notes what came
 * under the transfer's lock and wakes the loop, as api/guest_ws.c does. */
#include "gateway/guest/file_xfer.h"

#include "common/bytebuf.h"
#include "common/fsutil.h"
#include "gateway/guest/exec.h"
#include "gateway/guest/sess_agent.h"
#include "vmm-qemu/agent_exec.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINK_POLL_US (50 * LWS_US_PER_MS)
/* stdout bytes queued at most: the guest's window and one frame's slack
 * (the link drops a channel that overruns the window before this). */
#define OUT_MAX (AGENT_WINDOW + AGENT_MAX_PAYLOAD)

struct file_xfer {
	atomic_int refs; /* the owner + the channel */
	struct file_xfer *next; /* all (loop) */
	void (*woken)(void *ud); /* the owner's; NULL once released */
	void *woken_ud;
	struct lws_context *ctx;
	struct sess_agent *agent; /* held: the session's link to its agent */
	char *payload; /* owned: the EXEC payload, until the channel opens */
	size_t payload_len;
	int64_t link_wait_until; /* monotonic ms */
	lws_sorted_usec_list_t sul_link;
	struct agent_link *link; /* held; NULL until the session's link is up */
	uint32_t chan; /* 0 until opened */
	/* loop: the upload's side */
	struct bytebuf held; /* written while the queue was full (or no link) */
	bool full; /* the queue said full: wait for writable() */
	bool eof_wanted, eof_sent;
	uint64_t written;
	atomic_bool pending, room;
	/* shared with the link's thread, under mu */
	pthread_mutex_t mu;
	unsigned char *out; /* stdout not taken yet: out[out_off..out_len) */
	size_t out_off, out_len, out_cap;
	bool ended;
	struct file_xfer_end end;
	size_t err_len;
};

static struct file_xfer *all; /* loop */

/* $0 the path, $1 "gz" or "-". */
static const char put_script[] =
	"[ -d \"$0\" ] && { echo \"$0: is a directory\" >&2; exit 21; }; "
	"d=$(dirname -- \"$0\"); mkdir -p -- \"$d\" || exit 1; "
	"t=$(mktemp \"$d/.vitrine-upload.XXXXXX\") || exit 1; "
	"trap 'rm -f -- \"$t\"; exit 143' TERM INT HUP; "
	"if [ \"$1\" = gz ]; then gzip -dc > \"$t\"; else cat > \"$t\"; fi && "
	"chmod \"$(stat -c %a -- \"$0\" 2>/dev/null || echo 644)\" \"$t\" && "
	"mv -f -- \"$t\" \"$0\" || { rm -f -- \"$t\"; exit 1; }";
/* $0 the path, $1 "list" or "-", $2 "gz" or "-". */
static const char get_script[] =
	"if [ -d \"$0\" ]; then "
	"[ \"$1\" = list ] || { echo \"$0: is a directory\" >&2; exit 21; }; printf 'D\\n'; "
	"exec find \"$0\" -mindepth 1 -maxdepth 1 -printf '%y\\t%s\\t%T@\\t%f\\n'; "
	"elif [ -f \"$0\" ]; then "
	"[ -r \"$0\" ] || { echo \"$0: permission denied\" >&2; exit 13; }; "
	"if [ \"$2\" = gz ]; then printf 'Z\\n'; exec gzip -c -- \"$0\"; fi; "
	"s=$(stat -L -c %s -- \"$0\") || exit 1; printf 'F%s\\n' \"$s\"; "
	"exec head -c \"$s\" -- \"$0\"; "
	"else echo \"$0: no such file or directory\" >&2; exit 2; fi";

void file_xfer_put_argv(const char *argv[7], const char *path, bool gz)
{
	argv[0] = "/bin/sh";
	argv[1] = "-c";
	argv[2] = put_script;
	argv[3] = path;
	argv[4] = gz ? "gz" : "-";
	argv[5] = NULL;
	argv[6] = NULL;
}

void file_xfer_get_argv(const char *argv[7], const char *path, bool list, bool gz)
{
	argv[0] = "/bin/sh";
	argv[1] = "-c";
	argv[2] = get_script;
	argv[3] = path;
	argv[4] = list ? "list" : "-";
	argv[5] = gz ? "gz" : "-";
	argv[6] = NULL;
}

static void release_ref(struct file_xfer *x)
{
	if (atomic_fetch_sub(&x->refs, 1) != 1)
		return;
	agent_link_release(x->link);
	sess_agent_release(x->agent);
	bytebuf_free(&x->held);
	free(x->payload);
	free(x->out);
	pthread_mutex_destroy(&x->mu);
	free(x);
}

/* Any thread: the owner looks on the loop's next wake-up. */
static void wake(struct file_xfer *x)
{
	atomic_store(&x->pending, true);
	lws_cancel_service(x->ctx);
}

/* Under mu: the transfer ends for reason (the first one said stays). */
static void end_locked(struct file_xfer *x, const char *reason)
{
	if (!x->ended && !x->end.reason[0] && reason[0])
		snprintf(x->end.reason, sizeof(x->end.reason), "%s", reason);
	x->ended = true;
}

/* ---- the channel's side (link thread) ---- */

static void on_data(void *u, uint8_t flags, const void *p, size_t n)
{
	struct file_xfer *x = u;
	bool err = (flags & AGENT_STREAM_MASK) == AGENT_STREAM_STDERR;

	pthread_mutex_lock(&x->mu);
	if (err) {
		size_t room = sizeof(x->end.err) - 1 - x->err_len;
		size_t k = n < room ? n : room;

		memcpy(x->end.err + x->err_len, p, k);
		x->err_len += k;
		x->end.err[x->err_len] = '\0';
	} else if (x->out_len - x->out_off + n > OUT_MAX) {
		end_locked(x, "the guest sent more than its window");
	} else {
		if (x->out_off && x->out_len + n > x->out_cap) { /* compact first */
			memmove(x->out, x->out + x->out_off, x->out_len - x->out_off);
			x->out_len -= x->out_off;
			x->out_off = 0;
		}
		if (x->out_len + n > x->out_cap) {
			size_t cap = x->out_cap ? x->out_cap : 64 * 1024;
			unsigned char *nb;

			while (cap < x->out_len + n)
				cap *= 2;
			if (!(nb = realloc(x->out, cap))) {
				end_locked(x, "out of memory");
				goto out;
			}
			x->out = nb;
			x->out_cap = cap;
		}
		memcpy(x->out + x->out_len, p, n);
		x->out_len += n;
	}
out:
	pthread_mutex_unlock(&x->mu);
	if (err) /* stderr is kept (its head) or dropped, never waited on */
		agent_chan_ack(x->link, x->chan, n);
	wake(x);
}

static void on_exit_status(void *u, const char *status)
{
	struct file_xfer *x = u;

	pthread_mutex_lock(&x->mu);
	if (agent_exit_parse(status, &x->end.exit_code, &x->end.signal) == 0)
		x->end.exited = true;
	pthread_mutex_unlock(&x->mu);
}

static void on_closed(void *u, const char *reason, uint64_t in, uint64_t out)
{
	struct file_xfer *x = u;

	(void)in;
	(void)out;
	pthread_mutex_lock(&x->mu);
	end_locked(x, x->end.exited ? ""
		      : reason[0]   ? reason
				    : "the command ended without a status");
	pthread_mutex_unlock(&x->mu);
	wake(x);
	release_ref(x);
}

static void on_writable(void *u)
{
	struct file_xfer *x = u;

	atomic_store(&x->room, true);
	wake(x);
}

static const struct agent_chan_ops xfer_ops = {
	.data = on_data,
	.exit = on_exit_status,
	.closed = on_closed,
	.writable = on_writable,
};

/* ---- the loop's side ---- */

/* The transfer fails before its channel (loop). */
static void fail(struct file_xfer *x, const char *why)
{
	pthread_mutex_lock(&x->mu);
	end_locked(x, why);
	pthread_mutex_unlock(&x->mu);
	wake(x);
}

/* The link is up: the channel opens with the command. */
static void linked(struct file_xfer *x, struct agent_link *l)
{
	x->link = l;
	atomic_fetch_add(&x->refs, 1);
	if (!(x->chan = agent_chan_open(l, AGENT_EXEC, x->payload, x->payload_len, &xfer_ops, x))) {
		atomic_fetch_sub(&x->refs, 1);
		fail(x, "the guest agent is not connected");
		return;
	}
	free(x->payload);
	x->payload = NULL;
	wake(x); /* what was held goes now */
}

static void poll_link(lws_sorted_usec_list_t *sul)
{
	struct file_xfer *x = lws_container_of(sul, struct file_xfer, sul_link);
	struct agent_link *l = sess_agent_get(x->agent, 0);

	if (l)
		linked(x, l);
	else if (fs_now_ms() >= x->link_wait_until)
		fail(x, "the guest agent is not connected");
	else
		lws_sul_schedule(x->ctx, 0, &x->sul_link, poll_link, LINK_POLL_US);
}

struct file_xfer *file_xfer_start(struct lws_context *ctx, struct sess_agent *agent,
				  const char *const *argv, bool as_root, void (*woken)(void *ud),
				  void *ud)
{
	static const char *const user_env[] = { "HOME=/home/vitrine", "USER=vitrine",
						"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8",
						NULL };
	static const char *const root_env[] = {
		"HOME=/root", "USER=root",
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8",
		NULL
	};
	struct agent_exec_spec spec = { .argv = argv,
					.env = as_root ? root_env : user_env,
					.cwd = "/",
					.uid = as_root ? -1 : EXEC_DESKTOP_UID,
					.gid = as_root ? -1 : EXEC_DESKTOP_UID };
	struct file_xfer *x = calloc(1, sizeof(*x));
	struct agent_link *l;

	if (!x)
		return NULL;
	if (agent_exec_payload(&spec, &x->payload, &x->payload_len) < 0) {
		free(x);
		return NULL;
	}
	atomic_init(&x->refs, 1);
	pthread_mutex_init(&x->mu, NULL);
	x->woken = woken;
	x->woken_ud = ud;
	x->ctx = ctx;
	x->agent = sess_agent_hold(agent);
	x->next = all;
	all = x;
	if ((l = sess_agent_get(agent, 0))) {
		linked(x, l);
	} else {
		/* a session just ready: its link is on its way */
		x->link_wait_until = fs_now_ms() + SESS_AGENT_WAIT_MS;
		lws_sul_schedule(x->ctx, 0, &x->sul_link, poll_link, LINK_POLL_US);
	}
	return x;
}

/* Sends p[n] on the channel, or holds it. */
static void send_or_hold(struct file_xfer *x, const void *p, size_t n)
{
	int rc;

	if (x->full || x->held.len || !x->chan) {
		if (bytebuf_append(&x->held, p, n) < 0)
			fail(x, "out of memory");
		return;
	}
	rc = agent_chan_send(x->link, x->chan, AGENT_DATA, 0, p, n);
	if (rc == -ENOBUFS) {
		if (bytebuf_append(&x->held, p, n) < 0)
			fail(x, "out of memory");
	} else if (rc < 0) {
		fail(x, "the guest agent closed the channel");
		return;
	}
	if (rc == -ENOBUFS || rc == AGENT_SEND_FULL)
		x->full = true;
}

int file_xfer_write(struct file_xfer *x, const void *p, size_t n)
{
	if (file_xfer_ended(x, NULL))
		return -EPIPE;
	x->written += n;
	send_or_hold(x, p, n);
	return 0;
}

void file_xfer_finish(struct file_xfer *x)
{
	x->eof_wanted = true;
	file_xfer_service(x);
}

bool file_xfer_blocked(const struct file_xfer *x)
{
	return x->full || x->held.len || !x->chan;
}

void file_xfer_service(struct file_xfer *x)
{
	if (atomic_exchange(&x->room, false))
		x->full = false;
	if (!x->chan || file_xfer_ended(x, NULL))
		return;
	if (!x->full && x->held.len) {
		struct bytebuf b = x->held;

		x->held = (struct bytebuf){ 0 };
		send_or_hold(x, b.data, b.len);
		bytebuf_free(&b);
	}
	if (!x->full && !x->held.len && x->eof_wanted && !x->eof_sent) {
		int rc = agent_chan_send(x->link, x->chan, AGENT_EOF, 0, NULL, 0);

		if (rc == -ENOBUFS)
			x->full = true;
		else
			x->eof_sent = true;
	}
}

size_t file_xfer_read(struct file_xfer *x, void *buf, size_t cap)
{
	size_t n;

	pthread_mutex_lock(&x->mu);
	n = x->out_len - x->out_off;
	if (n > cap)
		n = cap;
	memcpy(buf, x->out + x->out_off, n);
	x->out_off += n;
	if (x->out_off == x->out_len)
		x->out_off = x->out_len = 0;
	pthread_mutex_unlock(&x->mu);
	if (n && x->chan)
		agent_chan_ack(x->link, x->chan, n);
	return n;
}

int file_xfer_line(struct file_xfer *x, char *line, size_t cap)
{
	const unsigned char *nl;
	size_t have, n;
	bool ended;

	pthread_mutex_lock(&x->mu);
	have = x->out_len - x->out_off;
	nl = have ? memchr(x->out + x->out_off, '\n', have) : NULL;
	ended = x->ended;
	pthread_mutex_unlock(&x->mu);
	if (!nl)
		return ended || have >= cap ? -1 : 0;
	n = (size_t)(nl - (x->out + x->out_off));
	if (n >= cap)
		return -1;
	file_xfer_read(x, line, n + 1);
	line[n] = '\0';
	return 1;
}

size_t file_xfer_available(struct file_xfer *x)
{
	size_t n;

	pthread_mutex_lock(&x->mu);
	n = x->out_len - x->out_off;
	pthread_mutex_unlock(&x->mu);
	return n;
}

bool file_xfer_ended(struct file_xfer *x, struct file_xfer_end *e)
{
	bool ended;

	pthread_mutex_lock(&x->mu);
	ended = x->ended;
	if (ended && e)
		*e = x->end;
	pthread_mutex_unlock(&x->mu);
	return ended;
}

uint64_t file_xfer_written(const struct file_xfer *x)
{
	return x->written;
}

void file_xfer_release(struct file_xfer *x)
{
	if (!x)
		return;
	for (struct file_xfer **pp = &all; *pp; pp = &(*pp)->next)
		if (*pp == x) {
			*pp = x->next;
			break;
		}
	lws_sul_cancel(&x->sul_link);
	x->woken = NULL;
	/* SIGTERM, not the channel's close (SIGKILL): the upload script's trap
	 * removes its temporary file; the channel ends when the command has. */
	if (x->chan && !file_xfer_ended(x, NULL))
		agent_chan_send(x->link, x->chan, AGENT_SIGNAL, 0, "15", 2);
	release_ref(x);
}

void file_xfer_poke_all(void)
{
	struct file_xfer *next;

	/* (woken may release its transfer) */
	for (struct file_xfer *x = all; x; x = next) {
		next = x->next;
		if (atomic_exchange(&x->pending, false) && x->woken)
			x->woken(x->woken_ud);
	}
}
