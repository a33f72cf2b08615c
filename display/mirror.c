/* display/mirror.c: the libvncclient worker behind display/mirror.h.
 *
 * Threads: the worker alone touches the rfbClient (reads, writes, the
 * client framebuffer, pending damage, probe state). Other threads only take
 * `lock` to read the latest frame, bump fresh_req, or wait on `cond`; they
 * wake the worker through an eventfd. */
#include "display/mirror.h"

#include "common/fsutil.h"
#include "common/unixsock.h"

#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <rfb/keysym.h>
#include <rfb/rfbclient.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* The pixel whose forced refresh marks the answer to a freshness probe:
 * (0, 0) exists at every resolution. */
#define PROBE_X 0
#define PROBE_Y 0
/* Key-up of a key this client never presses: resets QEMU's refresh timer,
 * dropped by QEMU's keyboard state tracker before it reaches the guest. */
#define NUDGE_KEYSYM XK_Pause
/* Connections lost and made again with no frame between before the mirror
 * gives up (see reconnect()). */
#define RECONNECTS_IN_A_ROW 3
/* How long after a screen shrinks its old buffers are taken to be freed
 * (the frames viewers and screenshots still held): then malloc_trim. */
#define TRIM_DELAY_MS 300

static atomic_uint_fast64_t frame_numbers;

struct display_mirror {
	/* owned; once the worker runs, only the worker uses it, and replaces
	 * it under `lock` (stop() reads its socket under `lock`) */
	rfbClient *client;
	char path[108]; /* the VNC server's unix socket */
	pthread_t thread;
	bool thread_started;
	int wake_fd; /* owned eventfd: other threads -> worker */
	void (*on_frame)(void *ud);
	void *ud;
	atomic_bool stopping;

	pthread_mutex_t lock; /* guards the fields down to `error` */
	pthread_cond_t cond; /* signalled on a new frame, a fresh answer or failure */
	struct display_frame *latest; /* owned reference; written by the worker only */
	struct display_cursor *cursor; /* owned reference; written by the worker only */
	uint64_t fresh_req; /* freshness requests so far */
	uint64_t fresh_done; /* requests answered (<= fresh_req) */
	bool failed;
	char error[256];

	/* Worker-only state. */
	uint64_t seq;
	uint64_t cursor_serial;
	uint64_t probe_gen; /* fresh_req value the probe in flight answers; 0: none */
	int64_t probe_sent_ms; /* when the probe in flight was sent */
	int64_t current_as_of_ms; /* send time of the newest answered probe; under lock */
	atomic_int keep_fresh_ms; /* probe on our own this often; 0: only on request */
	bool probe_hit; /* the current update carried the probe pixel */
	struct display_damage pending; /* rects of the current update */
	uint8_t *covered; /* owned, one byte per pixel until the first full frame */
	size_t covered_count;
	bool full; /* every pixel received since the last (re)size */
	bool resized; /* next publish carries the whole screen as damage */
	bool need_full; /* ask for every pixel: after a resize, QEMU sends only damage */
	bool size_refused; /* the server's screen size was over the limit */
	size_t fb_pixels; /* of the framebuffer now */
	int64_t trim_at_ms; /* the screen shrank: give malloc's free pages back then; 0 none */
	int reconnects; /* in a row, with no frame published since */
};

static int client_tag; /* its address keys rfbClientSetClientData */
static _Thread_local char vnc_last_error[256];

/* libvncclient logs through globals: keep its words for our err buffers. */
static void vnc_log_quiet(const char *fmt, ...)
{
	(void)fmt;
}

static void vnc_log_error(const char *fmt, ...)
{
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(vnc_last_error, sizeof(vnc_last_error), fmt, ap);
	va_end(ap);
	n = strlen(vnc_last_error);
	while (n && vnc_last_error[n - 1] == '\n')
		vnc_last_error[--n] = '\0';
}

static pthread_once_t log_once = PTHREAD_ONCE_INIT;
static void set_log_procs(void)
{
	rfbClientLog = vnc_log_quiet;
	rfbClientErr = vnc_log_error;
}

static struct display_mirror *mirror_of(rfbClient *cl)
{
	return rfbClientGetClientData(cl, &client_tag);
}

static rfbBool on_malloc_fb(rfbClient *cl)
{
	struct display_mirror *m = mirror_of(cl);
	size_t pixels = (size_t)cl->width * (size_t)cl->height;

	/* Refused before anything is allocated: the connection then ends
	 * (libvncclient gives up on FALSE) and the last frame stays. */
	if (!display_size_ok(cl->width, cl->height)) {
		vnc_log_error("the guest's screen size %dx%d is over the limit of %d pixels a side "
			      "and %d in all",
			      cl->width, cl->height, DISPLAY_MAX_SIDE, DISPLAY_MAX_PIXELS);
		m->size_refused = true;
		free(cl->frameBuffer);
		cl->frameBuffer = NULL;
		return FALSE;
	}
	if (pixels < m->fb_pixels)
		m->trim_at_ms = fs_now_ms() + TRIM_DELAY_MS;
	m->fb_pixels = pixels;
	free(cl->frameBuffer);
	free(m->covered);
	cl->frameBuffer = calloc(pixels, 4);
	m->covered = calloc(pixels, 1);
	if (!cl->frameBuffer || !m->covered) {
		vnc_log_error("out of memory for a %dx%d framebuffer", cl->width, cl->height);
		return FALSE;
	}
	m->covered_count = 0;
	m->full = false;
	m->resized = true;
	m->need_full = true;
	display_damage_clear(&m->pending);
	return TRUE;
}

static void mark_covered(struct display_mirror *m, rfbClient *cl, struct display_rect r)
{
	for (int y = r.y; y < r.y + r.h; y++) {
		uint8_t *row = m->covered + (size_t)y * cl->width;

		for (int x = r.x; x < r.x + r.w; x++)
			if (!row[x]) {
				row[x] = 1;
				m->covered_count++;
			}
	}
	if (m->covered_count == (size_t)cl->width * cl->height) {
		m->full = true;
		free(m->covered);
		m->covered = NULL;
	}
}

/* Pixels arrive through libvncclient's rendering hooks rather than
 * GotFrameBufferUpdate, which also reports pseudo-rects (QEMU's first
 * update is an ExtendedDesktopSize rect with no pixels). */
static void note_rect(rfbClient *cl, struct display_rect r)
{
	struct display_mirror *m = mirror_of(cl);

	display_damage_add(&m->pending, r, cl->width, cl->height);
	if (!m->full)
		mark_covered(m, cl, r);
	if (m->probe_gen && r.x <= PROBE_X && PROBE_X < r.x + r.w && r.y <= PROBE_Y &&
	    PROBE_Y < r.y + r.h)
		m->probe_hit = true;
}

static bool rect_ok(rfbClient *cl, int x, int y, int w, int h)
{
	return cl->frameBuffer && x >= 0 && y >= 0 && w > 0 && h > 0 && x + w <= cl->width &&
	       y + h <= cl->height;
}

static void on_bitmap(rfbClient *cl, const uint8_t *buf, int x, int y, int w, int h)
{
	size_t stride = (size_t)cl->width * 4;

	if (!rect_ok(cl, x, y, w, h))
		return;
	for (int j = 0; j < h; j++)
		memcpy(cl->frameBuffer + (size_t)(y + j) * stride + (size_t)x * 4,
		       buf + (size_t)j * w * 4, (size_t)w * 4);
	note_rect(cl, (struct display_rect){ x, y, w, h });
}

static void on_fill(rfbClient *cl, int x, int y, int w, int h, uint32_t colour)
{
	size_t stride = (size_t)cl->width * 4;

	if (!rect_ok(cl, x, y, w, h))
		return;
	for (int j = 0; j < h; j++) {
		uint8_t *row = cl->frameBuffer + (size_t)(y + j) * stride + (size_t)x * 4;

		for (int i = 0; i < w; i++)
			memcpy(row + (size_t)i * 4, &colour, 4);
	}
	note_rect(cl, (struct display_rect){ x, y, w, h });
}

static void on_copy(rfbClient *cl, int sx, int sy, int w, int h, int dx, int dy)
{
	size_t stride = (size_t)cl->width * 4;

	if (!rect_ok(cl, sx, sy, w, h) || !rect_ok(cl, dx, dy, w, h))
		return;
	/* Rows in the order that never reads an already-overwritten row. */
	for (int k = 0; k < h; k++) {
		int j = dy > sy ? h - 1 - k : k;

		memmove(cl->frameBuffer + (size_t)(dy + j) * stride + (size_t)dx * 4,
			cl->frameBuffer + (size_t)(sy + j) * stride + (size_t)sx * 4,
			(size_t)w * 4);
	}
	note_rect(cl, (struct display_rect){ dx, dy, w, h });
}

/* Shrinks r to the rows that differ between the new pixels and prev;
 * returns false when none do. */
static bool changed_rows(const struct display_frame *prev, const uint8_t *fb, int stride,
			 struct display_rect *r)
{
	int y0 = -1, y1 = -1;

	for (int y = r->y; y < r->y + r->h; y++) {
		size_t off = (size_t)y * stride + (size_t)r->x * 4;

		if (memcmp(prev->pixels + off, fb + off, (size_t)r->w * 4)) {
			if (y0 < 0)
				y0 = y;
			y1 = y;
		}
	}
	if (y0 < 0)
		return false;
	r->y = y0;
	r->h = y1 - y0 + 1;
	return true;
}

/* Returns true when this update answered the probe in flight. */
static bool answer_probe_locked(struct display_mirror *m)
{
	if (!m->probe_hit)
		return false;
	if (m->probe_gen > m->fresh_done)
		m->fresh_done = m->probe_gen;
	m->current_as_of_ms = m->probe_sent_ms;
	m->probe_gen = 0;
	m->probe_hit = false;
	return true;
}

static void on_finished_update(rfbClient *cl)
{
	struct display_mirror *m = mirror_of(cl);
	struct display_frame *prev = m->latest, *f;
	struct display_damage damage;
	int stride = cl->width * 4;
	bool answered;

	display_damage_clear(&damage);
	if (m->full) {
		if (!prev || m->resized || prev->width != cl->width || prev->height != cl->height) {
			display_damage_add(&damage,
					   (struct display_rect){ 0, 0, cl->width, cl->height },
					   cl->width, cl->height);
		} else {
			for (int i = 0; i < m->pending.n; i++) {
				struct display_rect r = m->pending.rects[i];

				if (changed_rows(prev, cl->frameBuffer, stride, &r))
					display_damage_add(&damage, r, cl->width, cl->height);
			}
		}
	}
	display_damage_clear(&m->pending);
	f = damage.n ? display_frame_create(cl->width, cl->height) : NULL;
	if (f) {
		memcpy(f->pixels, cl->frameBuffer, (size_t)stride * cl->height);
		/* Numbered across all mirrors of the process: a guest replaced
		 * by a new one (resumed from disk) never repeats a number that
		 * caches or viewers hold for the old one. */
		f->seq = m->seq = atomic_fetch_add(&frame_numbers, 1) + 1;
		f->changed_ms = fs_now_ms();
		f->damage = damage;
		m->resized = false;
		m->reconnects = 0;
	}
	/* On allocation failure the damage is dropped but the next change
	 * publishes the whole current framebuffer anyway (we copy it all). */
	pthread_mutex_lock(&m->lock);
	if (f)
		m->latest = f;
	answered = answer_probe_locked(m);
	pthread_cond_broadcast(&m->cond);
	pthread_mutex_unlock(&m->lock);
	if (f)
		display_frame_unref(prev);
	/* An answered probe wakes an event loop waiting on a fresh ticket. */
	if ((f || answered) && m->on_frame)
		m->on_frame(m->ud);
}

/* libvncclient decoded a RichCursor: pixels in our RGBX format in rcSource,
 * one byte per pixel in rcMask (non-zero: opaque). */
static void on_cursor_shape(rfbClient *cl, int xhot, int yhot, int w, int h, int bpp)
{
	struct display_mirror *m = mirror_of(cl);
	struct display_cursor *c, *prev;

	if (bpp != 4 || !cl->rcSource || !cl->rcMask || !(c = display_cursor_create(w, h)))
		return;
	for (int i = 0; i < w * h; i++) {
		memcpy(c->rgba + (size_t)i * 4, cl->rcSource + (size_t)i * 4, 3);
		c->rgba[(size_t)i * 4 + 3] = cl->rcMask[i] ? 255 : 0;
	}
	/* libvncclient 0.9.14 allocates a new mask per shape without freeing
	 * the last one: take it now (it is not used after this callback). */
	free(cl->rcMask);
	cl->rcMask = NULL;
	c->hot_x = xhot < 0 ? 0 : xhot >= w ? w - 1 : xhot;
	c->hot_y = yhot < 0 ? 0 : yhot >= h ? h - 1 : yhot;
	c->serial = ++m->cursor_serial;
	pthread_mutex_lock(&m->lock);
	prev = m->cursor;
	m->cursor = c;
	pthread_mutex_unlock(&m->lock);
	display_cursor_unref(prev);
	if (m->on_frame)
		m->on_frame(m->ud);
}

struct display_cursor *display_mirror_cursor(struct display_mirror *m)
{
	struct display_cursor *c;

	pthread_mutex_lock(&m->lock);
	c = display_cursor_ref(m->cursor);
	pthread_mutex_unlock(&m->lock);
	return c;
}

static void fail(struct display_mirror *m, const char *why)
{
	pthread_mutex_lock(&m->lock);
	m->failed = true;
	snprintf(m->error, sizeof(m->error), "vnc: %s", why && *why ? why : "connection lost");
	pthread_cond_broadcast(&m->cond);
	pthread_mutex_unlock(&m->lock);
	if (m->on_frame)
		m->on_frame(m->ud);
}

/* Sends a freshness probe when one is wanted and none is in flight. */
static bool maybe_probe(struct display_mirror *m)
{
	uint64_t want;

	int keep = atomic_load(&m->keep_fresh_ms);
	int64_t now = fs_now_ms();

	if (m->probe_gen)
		return true;
	pthread_mutex_lock(&m->lock);
	/* Kept fresh: a probe of our own once the last answer is keep ms old. */
	if (keep > 0 && m->fresh_req == m->fresh_done && now - m->current_as_of_ms >= keep)
		m->fresh_req++;
	want = m->fresh_req > m->fresh_done ? m->fresh_req : 0;
	pthread_mutex_unlock(&m->lock);
	if (!want)
		return true;
	m->probe_gen = want;
	m->probe_hit = false;
	m->probe_sent_ms = now;
	return SendKeyEvent(m->client, NUDGE_KEYSYM, FALSE) &&
	       SendFramebufferUpdateRequest(m->client, PROBE_X, PROBE_Y, 1, 1, FALSE);
}

/* Says again which encodings this client takes, as libvncclient 0.9.14 did
 * in rfbInitClient but for ExtendedDesktopSize. QEMU prefers that one to
 * NewFBSize for a guest that changes its resolution, and sends it with
 * screen id 0, which 0.9.14 takes for an invalid screen (later releases do
 * not): the client keeps its old size and gives up on the first rect past
 * it, so any resolution change ended the mirror. With NewFBSize alone,
 * QEMU announces the new size in a way 0.9.14 follows (MallocFrameBuffer,
 * then a full update request). QEMU applies the last SetEncodings it got;
 * a resize between the two is still announced the old way (a lost mirror,
 * as before, in a window of one round trip after the handshake). */
static rfbBool announce_encodings(rfbClient *cl)
{
	static const uint32_t encodings[] = {
		rfbEncodingRaw,
		rfbEncodingXCursor,
		rfbEncodingRichCursor,
		rfbEncodingPointerPos,
		rfbEncodingKeyboardLedState,
		rfbEncodingNewFBSize,
		rfbEncodingSupportedMessages,
		rfbEncodingSupportedEncodings,
		rfbEncodingServerIdentity,
		rfbEncodingXvp,
		rfbEncodingQemuExtendedKeyEvent,
	};
	enum { N = sizeof(encodings) / sizeof(encodings[0]) };
	uint8_t msg[sz_rfbSetEncodingsMsg + 4 * N] = { rfbSetEncodings, 0, 0, N };

	for (int i = 0; i < N; i++) {
		uint8_t *p = msg + sz_rfbSetEncodingsMsg + 4 * i;

		p[0] = (uint8_t)(encodings[i] >> 24);
		p[1] = (uint8_t)(encodings[i] >> 16);
		p[2] = (uint8_t)(encodings[i] >> 8);
		p[3] = (uint8_t)encodings[i];
	}
	return WriteToRFBServer(cl, (const char *)msg, sizeof(msg));
}
/* Frees a client and what the mirror allocated for it (accepts NULL). */
static void client_free(rfbClient *cl)
{
	if (!cl)
		return;
	free(cl->frameBuffer);
	cl->frameBuffer = NULL;
	/* libvncclient 0.9.14 keeps the last pointer shape and never frees it. */
	free(cl->rcSource);
	free(cl->rcMask);
	cl->rcSource = cl->rcMask = NULL;
	rfbClientCleanup(cl);
}

/* A client of m's VNC server, connected, past the handshake (the
 * framebuffer allocated by on_malloc_fb) and told our encodings. Returns
 * NULL with a sentence in err (m->size_refused set when the screen is
 * over the limit). Blocks for the handshake. */
static rfbClient *client_connect(struct display_mirror *m, char *err, size_t errlen)
{
	/* The socket lives in a dir the guest's uid owns: a link planted
	 * there is not followed (unixsock.h); libvncclient connects to the
	 * socket through our descriptor of it. */
	int path_fd = unixsock_open_path(m->path);
	rfbClient *cl;
	char via[32];
	rfbBool ok;

	if (path_fd < 0) {
		snprintf(err, errlen, "%s",
			 path_fd == -ENOTSOCK ? "not a unix socket"
			 : path_fd == -ELOOP  ? "a symlink, not followed"
					      : strerror(-path_fd));
		return NULL;
	}
	snprintf(via, sizeof(via), "/proc/self/fd/%d", path_fd);
	if (!(cl = rfbGetClient(8, 3, 4))) {
		close(path_fd);
		snprintf(err, errlen, "out of resources");
		return NULL;
	}
	rfbClientSetClientData(cl, &client_tag, m);
	cl->MallocFrameBuffer = on_malloc_fb;
	cl->GotBitmap = on_bitmap;
	cl->GotFillRect = on_fill;
	cl->GotCopyRect = on_copy;
	cl->FinishedFrameBufferUpdate = on_finished_update;
	cl->canHandleNewFBSize = TRUE;
	cl->appData.encodingsString = "raw";
	/* The pointer's shape comes apart from the pixels (RichCursor) for
	 * the live view; QEMU draws it into the frames in neither case. */
	cl->appData.useRemoteCursor = TRUE;
	cl->GotCursorShape = on_cursor_shape;
	cl->appData.shareDesktop = TRUE;
	free(cl->serverHost); /* rfbGetClient put a strdup("") there */
	cl->serverHost = strdup(via);
	cl->serverPort = 0;
	if (!cl->serverHost) {
		close(path_fd);
		snprintf(err, errlen, "out of memory");
		rfbClientCleanup(cl);
		return NULL;
	}
	vnc_last_error[0] = '\0';
	/* rfbInitClient frees the client when it fails. */
	ok = rfbInitClient(cl, NULL, NULL);
	close(path_fd); /* connected (or not): the socket is no longer looked up */
	if (!ok) {
		snprintf(err, errlen, "%s",
			 vnc_last_error[0] ? vnc_last_error : "connection or handshake failed");
		return NULL;
	}
	if (!announce_encodings(cl)) {
		snprintf(err, errlen, "%s", vnc_last_error[0] ? vnc_last_error : "write failed");
		client_free(cl);
		return NULL;
	}
	return cl;
}

/* The connection ended (why says how). QEMU also ends a client on its own:
 * when its queue towards the client passes five full updates at the
 * screen's new size, which happens to a guest that shrinks its screen while
 * a big update is still queued (QEMU 7.2 ui/vnc.c, vnc_write's throttle).
 * The guest is still there, so a new connection is made at once, which
 * starts with the screen's current size. Up to RECONNECTS_IN_A_ROW times
 * with no frame published between; never after a size refusal (a new
 * connection would meet the same screen) or once stopping. Returns true
 * with m->client connected, or false once the mirror has failed (with
 * why, and the reconnection's error) or is stopping. */
static bool reconnect(struct display_mirror *m, const char *why)
{
	char reason[256], err[256];
	rfbClient *old, *cl;

	snprintf(reason, sizeof(reason), "%s", why && *why ? why : "connection lost");
	if (atomic_load(&m->stopping))
		return false;
	if (m->size_refused || m->reconnects >= RECONNECTS_IN_A_ROW) {
		fail(m, reason);
		return false;
	}
	m->reconnects++;
	pthread_mutex_lock(&m->lock);
	old = m->client;
	m->client = NULL;
	pthread_mutex_unlock(&m->lock);
	client_free(old);
	/* a probe in flight is lost with the connection: maybe_probe sends
	 * the request again */
	m->probe_gen = 0;
	m->probe_hit = false;
	cl = client_connect(m, err, sizeof(err));
	if (!cl) {
		char msg[300];

		snprintf(msg, sizeof(msg), "%.120s; connecting again: %.120s", reason, err);
		fail(m, msg);
		return false;
	}
	pthread_mutex_lock(&m->lock);
	m->client = cl;
	pthread_mutex_unlock(&m->lock);
	return !atomic_load(&m->stopping);
}

static void *worker_main(void *arg)
{
	struct display_mirror *m = arg;

	while (!atomic_load(&m->stopping)) {
		rfbClient *cl = m->client;

		/* The big buffers of a bigger screen (frames, framebuffer, the
		 * encoders' scratch) are free by now, but malloc's arenas keep
		 * their pages (those under the gateway's mmap threshold):
		 * handed back once, on this thread, off the loop. */
		if (m->trim_at_ms && fs_now_ms() >= m->trim_at_ms) {
			m->trim_at_ms = 0;
			malloc_trim(0);
		}

		if (m->need_full) {
			m->need_full = false;
			if (!SendFramebufferUpdateRequest(cl, 0, 0, cl->width, cl->height, FALSE)) {
				if (!reconnect(m,
					       vnc_last_error[0] ? vnc_last_error : "write failed"))
					break;
				continue;
			}
		}
		if (!maybe_probe(m)) {
			if (!reconnect(m, vnc_last_error[0] ? vnc_last_error : "write failed"))
				break;
			continue;
		}
		/* libvncclient may hold already-read bytes: poll only when it has none. */
		if (!cl->buffered) {
			struct pollfd pfd[2] = { { .fd = cl->sock, .events = POLLIN },
						 { .fd = m->wake_fd, .events = POLLIN } };
			uint64_t v;
			int keep = atomic_load(&m->keep_fresh_ms);
			int n = poll(pfd, 2, keep > 0 ? keep : 1000);

			if (n < 0 && errno != EINTR) {
				fail(m, strerror(errno));
				break;
			}
			if (n > 0 && (pfd[1].revents & POLLIN) &&
			    read(m->wake_fd, &v, sizeof(v)) < 0)
				v = 0;
			if (n <= 0 || !(pfd[0].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
		}
		if (atomic_load(&m->stopping))
			break;
		if (!HandleRFBServerMessage(cl) &&
		    !reconnect(m, vnc_last_error[0] ? vnc_last_error : "connection lost"))
			break;
	}
	return NULL;
}

int display_mirror_start(const char *vnc_socket_path, void (*on_frame)(void *ud), void *ud,
			 struct display_mirror **out, char *err, size_t errlen)
{
	struct display_mirror *m;
	pthread_condattr_t ca;
	char why[256];
	int rc;

	*out = NULL;
	pthread_once(&log_once, set_log_procs);
	if (strlen(vnc_socket_path) >= sizeof(m->path)) {
		snprintf(err, errlen, "vnc %s: path too long for a unix socket", vnc_socket_path);
		return -ENAMETOOLONG;
	}
	/* Said early, with the reason: what client_connect meets too. */
	rc = unixsock_open_path(vnc_socket_path);
	if (rc < 0) {
		snprintf(err, errlen, "vnc %s: %s", vnc_socket_path,
			 rc == -ENOTSOCK ? "not a unix socket"
			 : rc == -ELOOP	 ? "a symlink, not followed"
					 : strerror(-rc));
		return rc;
	}
	close(rc);
	m = calloc(1, sizeof(*m));
	if (!m) {
		snprintf(err, errlen, "vnc %s: out of memory", vnc_socket_path);
		return -ENOMEM;
	}
	snprintf(m->path, sizeof(m->path), "%s", vnc_socket_path);
	m->on_frame = on_frame;
	m->ud = ud;
	atomic_init(&m->stopping, false);
	pthread_mutex_init(&m->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&m->cond, &ca);
	pthread_condattr_destroy(&ca);
	m->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (m->wake_fd < 0) {
		snprintf(err, errlen, "vnc %s: out of resources", vnc_socket_path);
		rc = -ENOMEM;
		goto fail;
	}
	m->client = client_connect(m, why, sizeof(why));
	if (!m->client) {
		snprintf(err, errlen, "vnc %s: %s", vnc_socket_path, why);
		rc = m->size_refused ? -EFBIG : -EPROTO;
		goto fail;
	}
	rc = -pthread_create(&m->thread, NULL, worker_main, m);
	if (rc < 0) {
		snprintf(err, errlen, "vnc %s: worker thread: %s", vnc_socket_path, strerror(-rc));
		goto fail;
	}
	m->thread_started = true;
	*out = m;
	return 0;
fail:
	display_mirror_stop(m);
	return rc;
}

void display_mirror_stop(struct display_mirror *m)
{
	uint64_t one = 1;

	if (!m)
		return;
	if (m->thread_started) {
		atomic_store(&m->stopping, true);
		/* Break a blocking read inside libvncclient, then wake the poll.
		 * Between two connections there is no socket: the worker sees
		 * `stopping` once the new one is made. */
		pthread_mutex_lock(&m->lock);
		if (m->client)
			shutdown(m->client->sock, SHUT_RDWR);
		pthread_mutex_unlock(&m->lock);
		if (write(m->wake_fd, &one, sizeof(one)) < 0)
			one = 0;
		pthread_join(m->thread, NULL);
	}
	client_free(m->client);
	if (m->wake_fd >= 0)
		close(m->wake_fd);
	display_frame_unref(m->latest);
	display_cursor_unref(m->cursor);
	free(m->covered);
	pthread_cond_destroy(&m->cond);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

struct display_frame *display_mirror_latest(struct display_mirror *m)
{
	struct display_frame *f;

	pthread_mutex_lock(&m->lock);
	f = display_frame_ref(m->latest);
	pthread_mutex_unlock(&m->lock);
	return f;
}

static void deadline_after(struct timespec *ts, int timeout_ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += timeout_ms / 1000;
	ts->tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

int display_mirror_wait_frame(struct display_mirror *m, uint64_t seq, int timeout_ms,
			      struct display_frame **out)
{
	struct timespec deadline;
	int rc = 0;

	*out = NULL;
	deadline_after(&deadline, timeout_ms < 0 ? 0 : timeout_ms);
	pthread_mutex_lock(&m->lock);
	while (!m->failed && (!m->latest || m->latest->seq <= seq) && rc == 0)
		rc = -pthread_cond_timedwait(&m->cond, &m->lock, &deadline);
	if (m->latest && m->latest->seq > seq)
		*out = display_frame_ref(m->latest), rc = 0;
	else if (m->failed)
		rc = -EPIPE;
	else
		rc = -ETIMEDOUT;
	pthread_mutex_unlock(&m->lock);
	return rc;
}

static void wake_worker(struct display_mirror *m)
{
	uint64_t one = 1;

	if (write(m->wake_fd, &one, sizeof(one)) < 0)
		one = 0; /* EAGAIN: the counter is already non-zero, the worker wakes */
}

void display_mirror_request_fresh(struct display_mirror *m)
{
	pthread_mutex_lock(&m->lock);
	m->fresh_req++;
	pthread_mutex_unlock(&m->lock);
	wake_worker(m);
}

void display_mirror_keep_fresh(struct display_mirror *m, int interval_ms)
{
	atomic_store(&m->keep_fresh_ms, interval_ms > 0 ? interval_ms : 0);
	wake_worker(m);
}

int64_t display_mirror_current_as_of(struct display_mirror *m)
{
	int64_t t;

	pthread_mutex_lock(&m->lock);
	t = m->current_as_of_ms;
	pthread_mutex_unlock(&m->lock);
	return t;
}

uint64_t display_mirror_fresh_begin(struct display_mirror *m)
{
	uint64_t ticket;

	pthread_mutex_lock(&m->lock);
	ticket = ++m->fresh_req;
	pthread_mutex_unlock(&m->lock);
	wake_worker(m);
	return ticket;
}

int display_mirror_fresh_poll(struct display_mirror *m, uint64_t ticket)
{
	int rc;

	pthread_mutex_lock(&m->lock);
	rc = m->fresh_done >= ticket ? 1 : m->failed ? -EPIPE : 0;
	pthread_mutex_unlock(&m->lock);
	return rc;
}

int display_mirror_wait_fresh(struct display_mirror *m, int timeout_ms)
{
	struct timespec deadline;
	uint64_t target;
	int rc = 0;

	deadline_after(&deadline, timeout_ms < 0 ? 0 : timeout_ms);
	pthread_mutex_lock(&m->lock);
	target = ++m->fresh_req;
	pthread_mutex_unlock(&m->lock);
	wake_worker(m);
	pthread_mutex_lock(&m->lock);
	while (!m->failed && m->fresh_done < target && rc == 0)
		rc = -pthread_cond_timedwait(&m->cond, &m->lock, &deadline);
	rc = m->fresh_done >= target ? 0 : m->failed ? -EPIPE : -ETIMEDOUT;
	pthread_mutex_unlock(&m->lock);
	return rc;
}

int display_mirror_wait_settled(struct display_mirror *m, int quiet_ms, int timeout_ms,
				struct display_settle_result *result)
{
	struct display_settle s;
	struct display_frame *f;
	int64_t now = fs_now_ms();
	int wait;

	f = display_mirror_latest(m);
	display_settle_init(&s, now, f ? f->changed_ms : INT64_MIN, quiet_ms, timeout_ms);
	display_frame_unref(f);
	for (;;) {
		int64_t left = s.start_ms + s.timeout_ms - fs_now_ms();
		int rc;

		/* Every decision is made on a confirmed-current mirror. */
		rc = display_mirror_wait_fresh(m, left > 1000 ? 1000 : left > 0 ? (int)left : 0);
		if (rc == -EPIPE)
			return rc;
		f = display_mirror_latest(m);
		if (f)
			display_settle_change(&s, f->changed_ms);
		display_frame_unref(f);
		wait = rc == 0 ? display_settle_poll(&s, fs_now_ms()) : 1;
		if (rc == -ETIMEDOUT && fs_now_ms() >= s.start_ms + s.timeout_ms) {
			/* QEMU never answered: no proof of quiet. */
			s.last_change_ms = fs_now_ms();
			wait = display_settle_poll(&s, fs_now_ms());
		}
		if (wait == 0)
			break;
		/* Sleep towards the decision, but re-check at least every 100 ms. */
		if (display_mirror_wait_frame(m, UINT64_MAX - 1, wait < 100 ? wait : 100, &f) == 0)
			display_frame_unref(f);
	}
	*result = s.result;
	return 0;
}

const char *display_mirror_error(struct display_mirror *m)
{
	const char *e;

	pthread_mutex_lock(&m->lock);
	e = m->failed ? m->error : "";
	pthread_mutex_unlock(&m->lock);
	return e;
}
