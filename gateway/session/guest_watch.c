/* gateway/session/guest_watch.c: a session's guest on the event loop.
 * While a session holds its guest (s->vm set; a job that takes the guest
 * takes it out of s->vm first), the guest's QMP socket and its process's
 * pidfd are raw descriptors of the loop, adopted under a protocol of their
 * own (SESS_GUEST_PROTOCOL, in api/protocols.c's list): the monitor is
 * serviced as it speaks (events, replies, input written as the socket
 * takes it) and the process's exit fails the session as it happens, with
 * no timer polling them. lws holds dups of the two fds and closes those
 * with its wsi, so letting go never touches the vm's own; each wsi points
 * back at its session through its opaque data, cleared when the session
 * lets go (the wsi then closes on its own, at once or at the loop's next
 * turn).
 *
 * The console (serial.log) is a file, which poll cannot watch. Nothing
 * that happens after a guest is ready waits on a console line: the
 * gateway sets no on_marker, the guest's "ready" is awaited by its boot
 * job on the job's thread (vmm_vm_wait_phase), and QEMU's exit reads what
 * is left before it is told. So the heartbeat (session_tick.c) reads it
 * about once a second, through sess_guest_service, which keeps the console
 * tail an exit report quotes fresh and also services the monitor, should
 * lws have dropped a descriptor. Loop thread. */
#include "common/log.h"
#include "gateway/session/session_int.h"
#include "vmm-qemu/vm.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

enum { WATCH_QMP, WATCH_EXIT };

/* A dup of fd joined to the loop for s; NULL when lws refuses it (the
 * heartbeat still services the guest). */
static struct lws *adopt(struct sess *s, int fd)
{
	int own = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
	struct lws *wsi;

	if (own < 0) {
		log_warn("session", "%s: cannot watch the guest's fd %d: %s", s->id, fd,
			 fd >= 0 ? strerror(errno) : "none");
		return NULL;
	}
	wsi = lws_adopt_descriptor_vhost_via_info(&(lws_adopt_desc_t){
		.vh = s->gw->vhost,
		.type = LWS_ADOPT_RAW_FILE_DESC,
		.fd.filefd = own,
		.vh_prot_name = SESS_GUEST_PROTOCOL,
		.opaque = s,
	});
	if (!wsi) /* lws closed own */
		log_warn("session", "%s: the loop did not take the guest's fd %d", s->id, fd);
	return wsi;
}

/* Asks the loop to tell when the monitor's socket takes more, while
 * commands wait to be written. */
static void want_write(struct sess *s)
{
	if (s->vm && s->watch[WATCH_QMP] && (vmm_vm_monitor_events(s->vm) & POLLOUT))
		lws_callback_on_writable(s->watch[WATCH_QMP]);
}

void sess_guest_watch(struct sess *s)
{
	sess_guest_unwatch(s);
	if (!s->vm || s->job || !s->gw->vhost) /* a job's guest is the job's to service */
		return;
	s->watch[WATCH_QMP] = adopt(s, vmm_vm_monitor_fd(s->vm));
	s->watch[WATCH_EXIT] = adopt(s, vmm_vm_proc(s->vm)->pidfd);
	want_write(s);
}

void sess_guest_unwatch(struct sess *s)
{
	for (size_t i = 0; i < sizeof(s->watch) / sizeof(s->watch[0]); i++) {
		if (!s->watch[i])
			continue;
		lws_set_opaque_user_data(s->watch[i], NULL);
		lws_set_timeout(s->watch[i], PENDING_TIMEOUT_KILLED_BY_PARENT, LWS_TO_KILL_ASYNC);
		s->watch[i] = NULL;
	}
}

void sess_guest_service(struct sess *s)
{
	char err[2048];

	if (!s->vm || s->job)
		return;
	if (vmm_vm_service(s->vm, 0, err, sizeof(err)) < 0)
		sess_set_failed(s, err); /* lets go of the guest: unwatched */
	else
		want_write(s);
}

void sess_guest_queued(struct sess *s)
{
	want_write(s);
}

int sess_guest_fd_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
			   size_t len)
{
	struct sess *s = lws_get_opaque_user_data(wsi);

	(void)user;
	(void)in;
	(void)len;
	switch (reason) {
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
		return 1; /* a client naming this protocol gets no WebSocket */
	case LWS_CALLBACK_RAW_RX_FILE:
	case LWS_CALLBACK_RAW_WRITEABLE_FILE:
		if (s)
			sess_guest_service(s);
		/* let go of (by s, now or before): closed now */
		return lws_get_opaque_user_data(wsi) ? 0 : -1;
	case LWS_CALLBACK_RAW_CLOSE_FILE:
		/* lws dropped it (a hang-up): the heartbeat services s alone */
		for (size_t i = 0; s && i < sizeof(s->watch) / sizeof(s->watch[0]); i++)
			if (s->watch[i] == wsi)
				s->watch[i] = NULL;
		return 0;
	default:
		return 0;
	}
}
