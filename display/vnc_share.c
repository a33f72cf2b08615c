/* display/vnc_share.c: see vnc_share.h. Follows libvncserver's examples
 * (rfbGetScreen, rfbInitServer, rfbRunEventLoop in the background,
 * rfbMarkRectAsModified after changing the framebuffer); passwords through
 * rfbCheckPasswordByList, the second one view-only.
 *
 * Stopping: libvncserver 0.9.14's rfbShutdownServer, in its threaded mode,
 * walks the client list while client threads end and free themselves, and
 * a client its listener accepts meanwhile ends after the screen is gone:
 * both crash (test_vnc_share_stop). So the share stops in its own steps
 * first: new clients are refused, every client's socket is shut down, and
 * the stop waits until each client thread has said it is gone (every
 * accepted client is counted, authenticated or not); only then, with no
 * client left, does libvncserver shut its server down. */
#include "display/vnc_share.h"

#include "display/stream_encode.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <rfb/rfb.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct display_vnc_share {
	rfbScreenInfoPtr screen; /* owned */
	char *passwords[3]; /* owned strings; NULL-terminated list: control, view */
	struct display_frame *shown; /* owned reference: what the clients have */
	void (*wake)(void *ud);
	void *ud;
	pthread_mutex_t lock; /* guards the fields below (server threads write them) */
	struct vnc_share_input queue[VNC_SHARE_MAX_INPUT];
	int n_queue;
	int clients, controllers; /* authenticated ones (display_vnc_share_clients) */
	int connections; /* every accepted client whose thread has not ended */
	bool stopping; /* refuse new clients */
	/* wrong passwords by address (under lock): the oldest slot is reused */
	struct {
		char host[64];
		int failures;
		time_t last;
	} guesses[16];
};

static void quiet(const char *fmt, ...)
{
	(void)fmt;
}

static struct display_vnc_share *share_of(rfbClientPtr cl)
{
	return cl->screen->screenData;
}

static void push(struct display_vnc_share *v, const struct vnc_share_input *in)
{
	pthread_mutex_lock(&v->lock);
	if (v->n_queue < VNC_SHARE_MAX_INPUT)
		v->queue[v->n_queue++] = *in;
	pthread_mutex_unlock(&v->lock);
	v->wake(v->ud);
}

/* libvncserver calls these only for clients that are not view-only. */
static void on_pointer(int mask, int x, int y, rfbClientPtr cl)
{
	struct vnc_share_input in = { .kind = VNC_IN_POINTER, .x = x, .y = y, .buttons = mask };

	push(share_of(cl), &in);
}

static void on_key(rfbBool down, rfbKeySym keysym, rfbClientPtr cl)
{
	struct vnc_share_input in = { .kind = VNC_IN_KEY, .keysym = keysym, .down = down };

	push(share_of(cl), &in);
}

/* A client's clientData once its password was right. */
static char authenticated;

static void on_gone(rfbClientPtr cl)
{
	struct display_vnc_share *v = share_of(cl);
	bool counted = cl->clientData == &authenticated;

	pthread_mutex_lock(&v->lock);
	v->connections--;
	if (counted) {
		v->clients--;
		if (!cl->viewOnly)
			v->controllers--;
	}
	pthread_mutex_unlock(&v->lock);
	if (counted)
		v->wake(v->ud);
}

/* The listener's thread: a new connection, refused once the share stops. */
static enum rfbNewClientAction on_new(rfbClientPtr cl)
{
	struct display_vnc_share *v = share_of(cl);
	bool refuse;

	pthread_mutex_lock(&v->lock);
	refuse = v->stopping;
	if (!refuse)
		v->connections++;
	pthread_mutex_unlock(&v->lock);
	if (refuse)
		return RFB_CLIENT_REFUSE;
	cl->clientGoneHook = on_gone;
	return RFB_CLIENT_ACCEPT;
}

/* The password check, counting who got in (viewOnly is known only after
 * it: libvncserver has no hook for that moment). */
/* The guess slot of host (a new or the stalest one); under v->lock. */
static int guess_slot(struct display_vnc_share *v, const char *host, time_t now)
{
	int oldest = 0;

	for (int i = 0; i < (int)(sizeof(v->guesses) / sizeof(v->guesses[0])); i++) {
		if (!strcmp(v->guesses[i].host, host))
			return i;
		if (v->guesses[i].last < v->guesses[oldest].last)
			oldest = i;
	}
	snprintf(v->guesses[oldest].host, sizeof(v->guesses[oldest].host), "%s", host);
	v->guesses[oldest].failures = 0;
	v->guesses[oldest].last = now;
	return oldest;
}

static rfbBool check_password(rfbClientPtr cl, const char *response, int len)
{
	struct display_vnc_share *v = share_of(cl);
	time_t now = time(NULL);
	bool locked;
	int g;

	pthread_mutex_lock(&v->lock);
	g = guess_slot(v, cl->host ? cl->host : "", now);
	if (now - v->guesses[g].last >= VNC_SHARE_LOCK_S)
		v->guesses[g].failures = 0;
	locked = v->guesses[g].failures >= VNC_SHARE_MAX_FAILURES;
	pthread_mutex_unlock(&v->lock);
	if (locked || !rfbCheckPasswordByList(cl, response, len)) {
		struct timespec ts = { VNC_SHARE_FAIL_DELAY_MS / 1000,
				       VNC_SHARE_FAIL_DELAY_MS % 1000 * 1000000L };

		pthread_mutex_lock(&v->lock);
		g = guess_slot(v, cl->host ? cl->host : "", now);
		v->guesses[g].failures++;
		v->guesses[g].last = now;
		pthread_mutex_unlock(&v->lock);
		nanosleep(&ts, NULL); /* this client's own thread */
		return FALSE;
	}
	cl->clientData = &authenticated;
	pthread_mutex_lock(&v->lock);
	v->clients++;
	if (!cl->viewOnly)
		v->controllers++;
	pthread_mutex_unlock(&v->lock);
	v->wake(v->ud);
	return TRUE;
}

/* A free TCP port on addr, or -1. */
static int free_port(in_addr_t addr)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = addr };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = -1;

	if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
		port = ntohs(sa.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

int display_vnc_share_start(const char *bind_ipv4, int width, int height, const char *control_pw,
			    const char *view_pw, void (*wake)(void *ud), void *ud,
			    struct display_vnc_share **out, char *err, size_t errlen)
{
	struct display_vnc_share *v = calloc(1, sizeof(*v));
	char *argv[] = { "vitrine", NULL };
	int argc = 1, port;
	in_addr_t addr = inet_addr(bind_ipv4);

	*out = NULL;
	if (!v) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (addr == INADDR_NONE || (port = free_port(addr)) < 0) {
		snprintf(err, errlen, "cannot listen on %s", bind_ipv4);
		free(v);
		return -EADDRNOTAVAIL;
	}
	rfbLog = quiet;
	rfbErr = quiet;
	pthread_mutex_init(&v->lock, NULL);
	v->wake = wake;
	v->ud = ud;
	v->passwords[0] = strdup(control_pw);
	v->passwords[1] = strdup(view_pw);
	v->screen = rfbGetScreen(&argc, argv, width, height, 8, 3, 4);
	if (!v->screen || !v->passwords[0] || !v->passwords[1] ||
	    !(v->screen->frameBuffer = calloc((size_t)width * height, 4))) {
		snprintf(err, errlen, "out of memory");
		display_vnc_share_stop(v);
		return -ENOMEM;
	}
	v->screen->screenData = v;
	v->screen->desktopName = "vitrine";
	v->screen->listenInterface = addr;
	v->screen->listen6Interface = "::1";
	v->screen->port = port;
	v->screen->ipv6port = port;
	v->screen->httpPort = 0;
	v->screen->authPasswdData = v->passwords;
	v->screen->authPasswdFirstViewOnly = 1;
	v->screen->passwordCheck = check_password;
	v->screen->newClientHook = on_new;
	v->screen->ptrAddEvent = on_pointer;
	v->screen->kbdAddEvent = on_key;
	v->screen->alwaysShared = TRUE;
	v->screen->cursor = NULL; /* the guest's own pointer is in no frame; draw none */
	rfbInitServer(v->screen);
	if (v->screen->listenSock < 0) {
		snprintf(err, errlen, "cannot listen on %s:%d", bind_ipv4, port);
		display_vnc_share_stop(v);
		return -EADDRINUSE;
	}
	rfbRunEventLoop(v->screen, -1, TRUE);
	*out = v;
	return 0;
}

/* Refuses new clients, shuts every client's socket down (its thread then
 * ends on its own: a wrong password's delay at most) and waits, bounded,
 * until every client thread is gone. */
static void let_clients_go(struct display_vnc_share *v)
{
	rfbClientIteratorPtr it;
	rfbClientPtr cl;
	int left = 1;

	pthread_mutex_lock(&v->lock);
	v->stopping = true;
	pthread_mutex_unlock(&v->lock);
	it = rfbGetClientIterator(v->screen); /* holds each client it returns */
	while ((cl = rfbClientIteratorNext(it)))
		if (cl->sock >= 0)
			shutdown(cl->sock, SHUT_RDWR);
	rfbReleaseClientIterator(it);
	for (int waited = 0; waited < VNC_SHARE_FAIL_DELAY_MS + 4000; waited += 10) {
		pthread_mutex_lock(&v->lock);
		left = v->connections;
		pthread_mutex_unlock(&v->lock);
		if (left == 0)
			break;
		usleep(10 * 1000);
	}
}

void display_vnc_share_stop(struct display_vnc_share *v)
{
	if (!v)
		return;
	if (v->screen) {
		if (v->screen->listenSock >= 0)
			let_clients_go(v);
		rfbShutdownServer(v->screen, TRUE);
		free(v->screen->frameBuffer);
		v->screen->frameBuffer = NULL;
		rfbScreenCleanup(v->screen);
	}
	display_frame_unref(v->shown);
	free(v->passwords[0]);
	free(v->passwords[1]);
	pthread_mutex_destroy(&v->lock);
	free(v);
}

int display_vnc_share_port(const struct display_vnc_share *v)
{
	return v->screen->port;
}

static void copy_rect(rfbScreenInfoPtr s, const struct display_frame *f, struct display_rect r)
{
	for (int y = r.y; y < r.y + r.h; y++)
		memcpy(s->frameBuffer + ((size_t)y * s->width + r.x) * 4,
		       f->pixels + (size_t)y * f->stride + (size_t)r.x * 4, (size_t)r.w * 4);
	rfbMarkRectAsModified(s, r.x, r.y, r.x + r.w, r.y + r.h);
}

void display_vnc_share_show(struct display_vnc_share *v, const struct display_frame *f)
{
	rfbScreenInfoPtr s = v->screen;
	struct display_rect rects[STREAM_MAX_RECTS];
	int n;

	if (v->shown == f) /* the same frame object (shown holds it alive) */
		return;
	if (s->width != f->width || s->height != f->height) {
		char *fb = calloc((size_t)f->width * f->height, 4), *old = s->frameBuffer;

		if (!fb)
			return;
		rfbNewFramebuffer(s, fb, f->width, f->height, 8, 3, 4);
		free(old);
		display_frame_unref(v->shown);
		v->shown = NULL;
	}
	n = v->shown ? display_stream_diff(v->shown, f, rects, STREAM_MAX_RECTS)
		     : STREAM_MAX_RECTS + 1;
	if (n > STREAM_MAX_RECTS)
		copy_rect(s, f, (struct display_rect){ 0, 0, f->width, f->height });
	else
		for (int i = 0; i < n; i++)
			copy_rect(s, f, rects[i]);
	display_frame_unref(v->shown);
	v->shown = display_frame_ref((struct display_frame *)f);
}

int display_vnc_share_input(struct display_vnc_share *v, struct vnc_share_input *out, int max)
{
	int n;

	pthread_mutex_lock(&v->lock);
	n = v->n_queue < max ? v->n_queue : max;
	memcpy(out, v->queue, (size_t)n * sizeof(*out));
	memmove(v->queue, v->queue + n, (size_t)(v->n_queue - n) * sizeof(*out));
	v->n_queue -= n;
	pthread_mutex_unlock(&v->lock);
	return n;
}

void display_vnc_share_clients(struct display_vnc_share *v, int *all, int *controllers)
{
	pthread_mutex_lock(&v->lock);
	*all = v->clients;
	*controllers = v->controllers;
	pthread_mutex_unlock(&v->lock);
}

void display_vnc_auth_response(const uint8_t challenge[VNC_AUTH_CHALLENGE_LEN],
			       const char *password, uint8_t out[VNC_AUTH_CHALLENGE_LEN])
{
	char key[VNC_SHARE_PASSWORD_LEN + 1];

	/* rfbEncryptBytes takes a mutable password; libgcrypt underneath
	 * keeps no state between calls. */
	snprintf(key, sizeof(key), "%s", password);
	memcpy(out, challenge, VNC_AUTH_CHALLENGE_LEN);
	rfbEncryptBytes(out, key);
	explicit_bzero(key, sizeof(key));
}
