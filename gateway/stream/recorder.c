/* gateway/stream/recorder.c: see recorder.h. */
#include "gateway/stream/recorder.h"

#include "common/fsutil.h"
#include "common/log.h"
#include "common/work_queue.h"
#include "display/encode.h"
#include "display/encode_pool.h"
#include "gateway/session/registry.h"
#include "gateway/session/session.h"
#include "gateway/session/session_quota.h"
#include "gateway/stream/rec_export.h"
#include "gateway/stream/rec_index.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct rec_shot;

struct recorder {
	struct sess *s;
	struct sess_listener listener; /* on s: events go on the timeline; destroy frees */
	bool on; /* recording now (else stopped, kept for the API) */
	unsigned number; /* of this recorder's recordings: the directory's suffix */
	char dir[PATH_MAX - 64];
	int fd_frames, fd_index; /* owned; -1 when closed */
	int64_t start_ms, stop_ms; /* fs_now_ms; stop_ms 0 while on */
	int64_t start_unix_ms;
	int width, height; /* of the first frame */
	struct rec_frame *frames; /* owned, n_frames of cap */
	size_t n_frames, cap_frames;
	uint64_t frames_bytes; /* the size of frames.bin */
	int64_t bytes; /* frames.bin and index.log together */
	json_t *entries; /* owned array, by t_ms */
	size_t dropped; /* entries past REC_MAX_ENTRIES */
	const struct display_mirror *mirror; /* the one last_seq counts in */
	uint64_t last_seq;
	int64_t next_ms; /* no frame before this (record_fps) */
	struct rec_shot *shot; /* a frame on the encoder pool, or NULL */
	lws_sorted_usec_list_t sul; /* the next frame slot, when one waits */
	bool slot_booked; /* sul is scheduled */
	/* The video. */
	struct rec_export *export; /* owned: being made, or NULL */
	int64_t export_gen, next_gen;
	size_t export_n;
	int64_t export_end;
	uint8_t *webm; /* owned: the newest export */
	size_t webm_len, webm_n;
	int64_t webm_gen, webm_end, failed_gen;
	char webm_err[256];
};

/* A frame being encoded on the pool. Its recorder may go (or stop)
 * meanwhile: it lets go (rec = NULL) and done frees the job. */
struct rec_shot {
	struct recorder *rec; /* NULL once abandoned */
	struct display_frame *frame; /* owned reference */
	int64_t t_ms;
	struct display_image *image; /* owned: the result */
	int rc;
	char err[256];
};

static void on_session(struct sess_listener *l, struct sess *s, enum sess_signal sig,
		       const void *data);

static struct recorder *rec_find(const struct sess *s)
{
	struct sess_listener *l = sess_find_listener(s, on_session);

	return l ? lws_container_of(l, struct recorder, listener) : NULL;
}

static int64_t now_t(const struct recorder *rec)
{
	return (rec->on ? fs_now_ms() : rec->stop_ms) - rec->start_ms;
}

/* Writes all of len bytes; 0 or -errno. */
static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* What goes away with a recording, on a worker of the bulk queue: the
 * files, the directory (once its export, if any, has let go of them). */
struct rec_remains {
	struct work_queue *q; /* the gateway's bulk_work */
	int fd_frames, fd_index;
	char dir[PATH_MAX - 64];
};

static void remove_work(void *ud, void *ctx)
{
	struct rec_remains *r = ud;

	(void)ctx;
	if (r->fd_frames >= 0)
		close(r->fd_frames);
	if (r->fd_index >= 0)
		close(r->fd_index);
	r->fd_frames = r->fd_index = -1;
	if (r->dir[0] && fs_rm_rf(r->dir) < 0)
		log_warn("record", "cannot remove %s", r->dir);
	r->dir[0] = '\0';
}

/* On the loop: the removal ran, or never will (the gateway stops: done
 * here then, slowly but once). */
static void remove_done(void *ud, int status)
{
	if (status < 0)
		remove_work(ud, NULL);
	free(ud);
}

/* Queues the removal of r (a rec_export_abandon's gone, or at once); a
 * full or stopping queue has it done here, on the loop. */
static void start_removal(void *ud)
{
	struct rec_remains *r = ud;

	if (work_queue_submit(r->q, NULL, remove_work, remove_done, r) < 0)
		remove_done(r, -ECANCELED);
}

/* Hands rec's files to the bulk queue, once its export (told to stop) is
 * gone; rec keeps none of them. */
static void remove_files(struct recorder *rec)
{
	struct rec_remains *r;

	if (!rec->dir[0] && !rec->export)
		return;
	if (!(r = calloc(1, sizeof(*r)))) {
		/* No memory for the removal: the files stay, nothing leaks. */
		log_warn("record", "%s: out of memory: %s stays", sess_id(rec->s), rec->dir);
		rec_export_abandon(rec->export, NULL, NULL);
		if (rec->fd_frames >= 0)
			close(rec->fd_frames);
		if (rec->fd_index >= 0)
			close(rec->fd_index);
	} else {
		r->q = sess_gw(rec->s)->bulk_work;
		r->fd_frames = rec->fd_frames;
		r->fd_index = rec->fd_index;
		snprintf(r->dir, sizeof(r->dir), "%s", rec->dir);
		if (rec->export)
			rec_export_abandon(rec->export, start_removal, r);
		else
			start_removal(r);
	}
	rec->fd_frames = rec->fd_index = -1;
	rec->export = NULL;
	rec->dir[0] = '\0';
}

static void shot_free(struct rec_shot *j)
{
	display_frame_unref(j->frame);
	display_image_unref(j->image);
	free(j);
}

static void abandon_shot(struct recorder *rec)
{
	struct rec_shot *j = rec->shot;

	if (!j)
		return;
	rec->shot = NULL;
	j->rec = NULL;
	/* Still queued: its done comes now and frees it; else once it ran. */
	encode_pool_cancel(sess_gw(rec->s)->encoders, j);
}

/* Appends "E json" to the index; false when it could not be written. */
static bool index_entry(struct recorder *rec, const json_t *entry)
{
	char *text = json_dumps(entry, JSON_COMPACT);
	size_t n = text ? strlen(text) : 0;
	char *line = text ? malloc(n + 3) : NULL;
	int rc = -ENOMEM;

	if (line) {
		line[0] = 'E';
		line[1] = ' ';
		memcpy(line + 2, text, n);
		line[n + 2] = '\n';
		rc = write_all(rec->fd_index, line, n + 3);
	}
	free(line);
	free(text);
	if (rc == 0) {
		rec->bytes += (int64_t)n + 3;
		sess_note_recording_bytes(rec->s, rec->bytes);
	}
	return rc == 0;
}

/* Puts entry (stolen) on the timeline at t_ms, in time order, and in the
 * index. */
static void add_entry(struct recorder *rec, const char *kind, int64_t t_ms, json_t *entry)
{
	size_t at;

	if (!entry)
		return;
	if (t_ms < 0)
		t_ms = 0;
	json_object_set_new(entry, "t_ms", json_integer(t_ms));
	json_object_set_new(entry, "kind", json_string(kind));
	if (json_array_size(rec->entries) >= REC_MAX_ENTRIES) {
		rec->dropped++;
		json_decref(entry);
		return;
	}
	if (rec->fd_index >= 0)
		index_entry(rec, entry);
	/* An action is noted when it ends, with the time it began. */
	for (at = json_array_size(rec->entries); at > 0; at--)
		if (json_integer_value(
			    json_object_get(json_array_get(rec->entries, at - 1), "t_ms")) <= t_ms)
			break;
	json_array_insert_new(rec->entries, at, entry);
}

/* Ends the recording; its last entry is the event saying why. */
static void stop(struct recorder *rec, const char *reason)
{
	if (!rec->on)
		return;
	abandon_shot(rec);
	lws_sul_cancel(&rec->sul);
	rec->slot_booked = false;
	sess_event(rec->s, "recording_stopped",
		   json_pack("{s:s, s:I, s:I}", "reason", reason, "frames",
			     (json_int_t)rec->n_frames, "bytes", (json_int_t)rec->bytes));
	rec->on = false;
	rec->stop_ms = fs_now_ms();
}

static void poke(struct recorder *rec);

static void on_sul(lws_sorted_usec_list_t *sul)
{
	struct recorder *rec = lws_container_of(sul, struct recorder, sul);

	rec->slot_booked = false;
	poke(rec);
}

/* On a pool worker: the JPEG. */
static void shot_work(void *ud, void *enc) /* the worker's struct display_stream_encoder */
{
	struct rec_shot *j = ud;
	struct display_encode_opts o = { .format = DISPLAY_FORMAT_JPEG, .quality = REC_QUALITY };

	(void)enc;
	j->rc = display_encode(j->frame, &o, &j->image, j->err, sizeof(j->err));
}

/* Back on the loop: the frame goes into frames.bin and the index. */
static void shot_done(void *ud, int status)
{
	struct rec_shot *j = ud;
	struct recorder *rec = j->rec;
	struct rec_frame f;
	char line[REC_LINE_MAX];
	int n, rc;

	if (!rec) {
		shot_free(j);
		return;
	}
	rec->shot = NULL;
	if (status < 0 || j->rc < 0) {
		if (status == 0)
			log_warn("record", "%s: %s", sess_id(rec->s), j->err);
		shot_free(j);
		poke(rec);
		return;
	}
	if (j->image->len > REC_FRAME_MAX_BYTES) {
		log_warn("record", "%s: a frame of %zu bytes is not recorded", sess_id(rec->s),
			 j->image->len);
		shot_free(j);
		poke(rec);
		return;
	}
	f = (struct rec_frame){ .i = (uint32_t)rec->n_frames,
				.t_ms = j->t_ms,
				.offset = rec->frames_bytes,
				.bytes = (uint32_t)j->image->len,
				.width = j->frame->width,
				.height = j->frame->height };
	n = rec_index_frame_line(&f, line, sizeof(line));
	if (rec->bytes + (int64_t)j->image->len + n > sess_gw(rec->s)->record_max_bytes) {
		shot_free(j);
		stop(rec, "max_bytes");
		return;
	}
	if (rec->n_frames == rec->cap_frames) {
		size_t nc = rec->cap_frames ? rec->cap_frames * 2 : 64;
		struct rec_frame *nf = realloc(rec->frames, nc * sizeof(*nf));

		if (!nf) {
			shot_free(j);
			stop(rec, "out_of_memory");
			return;
		}
		rec->frames = nf;
		rec->cap_frames = nc;
	}
	rc = write_all(rec->fd_frames, j->image->data, j->image->len);
	if (rc == 0)
		rc = write_all(rec->fd_index, line, (size_t)n);
	if (rc < 0) {
		log_warn("record", "%s: writing %s: %s", sess_id(rec->s), rec->dir, strerror(-rc));
		shot_free(j);
		stop(rec, "write_failed");
		return;
	}
	if (!rec->n_frames) {
		rec->width = f.width;
		rec->height = f.height;
	}
	rec->frames[rec->n_frames++] = f;
	rec->frames_bytes += f.bytes;
	rec->bytes += (int64_t)f.bytes + n;
	sess_note_recording_bytes(rec->s, rec->bytes);
	shot_free(j);
	poke(rec);
}

/* A new frame of the mirror goes to the encoder, when its slot has come. */
static void poke(struct recorder *rec)
{
	struct sess *s = rec->s;
	struct display_frame *f;
	struct rec_shot *j;
	int64_t now = fs_now_ms(), t;

	if (!rec->on || rec->shot || !sess_mirror(s))
		return;
	if (rec->mirror != sess_mirror(s)) {
		rec->mirror = sess_mirror(s); /* a new guest counts frames from 1 again */
		rec->last_seq = 0;
	}
	f = display_mirror_latest(sess_mirror(s));
	if (!f || f->seq == rec->last_seq) {
		display_frame_unref(f);
		return;
	}
	if (rec->n_frames && now < rec->next_ms) {
		display_frame_unref(f);
		if (rec->slot_booked)
			return;
		rec->slot_booked = true;
		lws_sul_schedule(sess_gw(s)->ctx, 0, &rec->sul, on_sul,
				 (lws_usec_t)(rec->next_ms - now) * LWS_US_PER_MS);
		return;
	}
	t = rec->n_frames ? f->changed_ms - rec->start_ms : 0;
	if (rec->n_frames && t < rec->frames[rec->n_frames - 1].t_ms)
		t = rec->frames[rec->n_frames - 1].t_ms;
	if (t < 0)
		t = 0;
	if (!(j = calloc(1, sizeof(*j)))) {
		display_frame_unref(f);
		return;
	}
	j->rec = rec;
	j->frame = f;
	j->t_ms = t;
	if (encode_pool_submit_for(sess_gw(s)->encoders, s, shot_work, shot_done, j) < 0) {
		shot_free(j); /* the pool is full: the next wake-up tries again */
		return;
	}
	rec->shot = j;
	rec->last_seq = f->seq;
	rec->next_ms = now + 1000 / (sess_gw(s)->record_fps > 0 ? sess_gw(s)->record_fps
								: REC_DEFAULT_FPS);
}

static void forget_webm(struct recorder *rec)
{
	free(rec->webm);
	rec->webm = NULL;
	rec->webm_len = rec->webm_n = 0;
}

static void rec_destroy(struct recorder *rec)
{
	abandon_shot(rec);
	lws_sul_cancel(&rec->sul);
	remove_files(rec);
	forget_webm(rec);
	free(rec->frames);
	json_decref(rec->entries);
	sess_unlisten(rec->s, &rec->listener);
	free(rec);
}

/* Events, control changes among them, go on the timeline. */
static void on_event(struct recorder *rec, const json_t *ev)
{
	const char *type = json_string_value(json_object_get(ev, "type"));
	json_t *e;

	if (!rec->on || !type)
		return;
	if (!strcmp(type, "control_taken") || !strcmp(type, "control_released")) {
		e = json_pack("{s:s, s:O?, s:O?}", "change",
			      !strcmp(type, "control_taken") ? "taken" : "released", "viewer",
			      json_object_get(ev, "viewer"), "name", json_object_get(ev, "name"));
		if (e && json_object_get(ev, "reason"))
			json_object_set(e, "reason", json_object_get(ev, "reason"));
		add_entry(rec, "control", now_t(rec), e);
		return;
	}
	add_entry(rec, "event", now_t(rec), json_deep_copy(ev));
}

static void on_session(struct sess_listener *l, struct sess *s, enum sess_signal sig,
		       const void *data)
{
	struct recorder *rec = lws_container_of(l, struct recorder, listener);

	(void)s;
	if (sig == SESS_SIGNAL_EVENT)
		on_event(rec, data);
	else if (sig == SESS_SIGNAL_DESTROY)
		rec_destroy(rec);
}

/* Opens dir/name for appending; the fd or -errno. */
static int open_append(const char *dir, const char *name, int flags)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, flags | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	return fd < 0 ? -errno : fd;
}

int rec_start(struct sess *s, struct api_error *e)
{
	struct recorder *rec = rec_find(s);
	struct gw *gw = sess_gw(s);
	char dir[PATH_MAX - 64];
	int rc;

	if (rec && rec->on) {
		api_error_set(e, 409, "already_recording", "the session is being recorded already");
		return -EBUSY;
	}
	if (!gw->registry) {
		api_error_set(e, 503, "no_state_dir",
			      "this gateway keeps no state dir to record to");
		return -ENOSYS;
	}
	if (!rec) {
		if (!(rec = calloc(1, sizeof(*rec))) || !(rec->entries = json_array())) {
			free(rec);
			api_error_set(e, 500, "internal", "out of memory");
			return -ENOMEM;
		}
		rec->s = s;
		rec->fd_frames = rec->fd_index = -1;
		rec->listener.notify = on_session;
		sess_listen(s, &rec->listener);
	}
	/* The earlier recording goes (its files on the bulk queue); requests
	 * waiting for its video are told. */
	if (rec->export) {
		rec->failed_gen = rec->export_gen;
		snprintf(rec->webm_err, sizeof(rec->webm_err), "the recording was started again");
		sess_wake_waiters(s);
	}
	remove_files(rec);
	forget_webm(rec);
	json_array_clear(rec->entries);
	rec->n_frames = 0;
	rec->frames_bytes = 0;
	rec->bytes = 0;
	sess_note_recording_bytes(s, 0);
	rec->dropped = 0;
	rec->width = sess_screen(s).width;
	rec->height = sess_screen(s).height;
	rc = snprintf(dir, sizeof(dir), "%.3900s/recordings/%.72s.%u", gw->registry->dir,
		      sess_id(s), ++rec->number);
	if (rc < 0 || (size_t)rc >= sizeof(dir))
		rc = -ENAMETOOLONG;
	else
		rc = fs_mkdir_p(dir, 0700);
	if (rc < 0 || (rec->fd_frames = rc = open_append(dir, "frames.bin", O_RDWR)) < 0 ||
	    (rec->fd_index = rc = open_append(dir, "index.log", O_WRONLY)) < 0) {
		char msg[PATH_MAX + 64];

		snprintf(msg, sizeof(msg), "cannot make %s: %s", dir, strerror(-rc));
		log_warn("record", "%s: %s", sess_id(s), msg);
		if (rec->fd_frames >= 0)
			close(rec->fd_frames);
		rec->fd_frames = rec->fd_index = -1;
		snprintf(rec->dir, sizeof(rec->dir), "%s", dir);
		remove_files(rec);
		api_error_set(e, 500, "record_failed", msg);
		if (rec->number == 1)
			rec_destroy(rec); /* it never recorded: still 404 */
		return rc;
	}
	snprintf(rec->dir, sizeof(rec->dir), "%s", dir);
	rec->on = true;
	rec->start_ms = fs_now_ms();
	rec->start_unix_ms = fs_unix_ms();
	rec->stop_ms = 0;
	rec->mirror = NULL;
	rec->last_seq = 0;
	rec->next_ms = 0;
	sess_event(s, "recording_started",
		   json_pack("{s:i, s:I}", "fps", gw->record_fps, "max_bytes",
			     (json_int_t)gw->record_max_bytes));
	poke(rec);
	return 0;
}

int rec_stop(struct sess *s, const char *reason, struct api_error *e)
{
	struct recorder *rec = rec_find(s);

	if (!rec || !rec->on) {
		api_error_set(e, 409, "not_recording", "the session is not being recorded");
		return -ENOENT;
	}
	stop(rec, reason);
	return 0;
}

bool rec_exists(const struct sess *s)
{
	return rec_find(s) != NULL;
}

json_t *rec_summary(const struct sess *s)
{
	const struct recorder *rec = rec_find(s);

	if (!rec)
		return NULL;
	return json_pack("{s:b, s:I, s:I, s:i, s:i, s:I, s:I, s:I, s:I}", "recording", rec->on,
			 "started_unix_ms", (json_int_t)rec->start_unix_ms, "duration_ms",
			 (json_int_t)now_t(rec), "width", rec->width, "height", rec->height,
			 "frame_count", (json_int_t)rec->n_frames, "entry_count",
			 (json_int_t)json_array_size(rec->entries), "entries_dropped",
			 (json_int_t)rec->dropped, "bytes", (json_int_t)rec->bytes);
}

json_t *rec_json(const struct sess *s)
{
	const struct recorder *rec = rec_find(s);
	json_t *j = rec_summary(s), *frames = json_array();

	if (!j || !frames) {
		json_decref(j);
		json_decref(frames);
		return NULL;
	}
	for (size_t k = 0; k < rec->n_frames; k++) {
		const struct rec_frame *f = &rec->frames[k];

		json_array_append_new(frames,
				      json_pack("{s:I, s:I, s:i, s:i, s:I}", "i", (json_int_t)f->i,
						"t_ms", (json_int_t)f->t_ms, "width", f->width,
						"height", f->height, "bytes",
						(json_int_t)f->bytes));
	}
	json_object_set_new(j, "frames", frames);
	json_object_set(j, "entries", rec->entries);
	return j;
}

int rec_frame_read(const struct sess *s, uint32_t i, uint8_t **data, size_t *len)
{
	const struct recorder *rec = rec_find(s);
	const struct rec_frame *f;
	uint8_t *buf;
	size_t got = 0;

	if (!rec || i >= rec->n_frames || rec->fd_frames < 0)
		return -ENOENT;
	f = &rec->frames[i];
	if (!(buf = malloc(f->bytes)))
		return -ENOMEM;
	while (got < f->bytes) {
		ssize_t n = pread(rec->fd_frames, buf + got, f->bytes - got,
				  (off_t)(f->offset + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			free(buf);
			return -EIO;
		}
		got += (size_t)n;
	}
	*data = buf;
	*len = got;
	return 0;
}

void rec_note_action(struct sess *s, const char *text, size_t len, int status, int64_t t0_ms,
		     int64_t end_ms, const char *via)
{
	struct recorder *rec = rec_find(s);
	json_t *action;

	if (!rec || !rec->on)
		return;
	action = text ? json_loadb(text, len, 0, NULL) : NULL;
	if (!action)
		action = text ? json_stringn(text, len) : json_null();
	add_entry(rec, "action", t0_ms - rec->start_ms,
		  json_pack("{s:o, s:i, s:I, s:s}", "action", action ? action : json_null(),
			    "status", status, "ms", (json_int_t)(end_ms - t0_ms), "via", via));
}

static bool str_is(const json_t *v, const char *want)
{
	const char *x = json_string_value(v);

	return x && !strcmp(x, want);
}

void rec_note_command(struct sess *s, json_t *argv, int exit_code, int status, int64_t t0_ms,
		      int64_t end_ms)
{
	struct recorder *rec = rec_find(s);
	json_t *e;

	if (!rec || !rec->on)
		return;
	e = json_pack("{s:O?, s:i, s:I}", "argv", argv, "status", status, "ms",
		      (json_int_t)(end_ms - t0_ms));
	if (e && argv && json_array_size(argv) == 3 && str_is(json_array_get(argv, 0), "/bin/sh") &&
	    str_is(json_array_get(argv, 1), "-c"))
		json_object_set(e, "cmd", json_array_get(argv, 2));
	if (e)
		json_object_set_new(e, "exit_code",
				    exit_code >= 0 ? json_integer(exit_code) : json_null());
	add_entry(rec, "command", t0_ms - rec->start_ms, e);
}

/* rec_export_done_fn: a finished export becomes the newest video; its
 * waiters are woken. */
static void export_ended(void *ud, int rc, uint8_t *data, size_t len, const char *err)
{
	struct recorder *rec = ud;

	rec->export = NULL;
	if (rc == 0) {
		forget_webm(rec);
		rec->webm = data;
		rec->webm_len = len;
		rec->webm_n = rec->export_n;
		rec->webm_end = rec->export_end;
		rec->webm_gen = rec->export_gen;
	} else {
		snprintf(rec->webm_err, sizeof(rec->webm_err), "%s", err);
		log_warn("record", "%s: video export: %s", sess_id(rec->s), rec->webm_err);
		rec->failed_gen = rec->export_gen;
	}
	sess_wake_waiters(rec->s);
}

int rec_webm_begin(struct sess *s, int64_t *gen, struct api_error *e)
{
	struct recorder *rec = rec_find(s);
	int64_t end;
	int rc;

	if (!rec) {
		api_error_set(e, 404, "no_recording", "the session was never recorded");
		return -ENOENT;
	}
	if (!rec->n_frames) {
		api_error_set(e, 409, "no_frames", "the recording has no frame yet");
		return -EAGAIN;
	}
	end = now_t(rec);
	if (rec->webm && rec->webm_n == rec->n_frames && rec->webm_end == end) {
		*gen = rec->webm_gen;
		return 1;
	}
	if (rec->export) {
		*gen = rec->export_gen;
		return 0;
	}
	rc = rec_export_start(sess_gw(s)->bulk_work, s, rec->dir, rec->frames, rec->n_frames, end,
			      rec->width, rec->height, export_ended, rec, &rec->export);
	if (rc == -EBUSY) {
		api_error_set(e, 503, "export_busy",
			      "too many videos and templates are being made: try again");
		return rc;
	}
	if (rc < 0) {
		api_error_set(e, 500, "internal", "cannot start the video export");
		return rc;
	}
	rec->export_gen = ++rec->next_gen;
	rec->export_n = rec->n_frames;
	rec->export_end = end;
	*gen = rec->export_gen;
	return 0;
}

int rec_webm_get(struct sess *s, int64_t gen, const uint8_t **data, size_t *len,
		 struct api_error *e)
{
	struct recorder *rec = rec_find(s);

	if (!rec) {
		api_error_set(e, 404, "no_recording", "the recording is gone");
		return -ENOENT;
	}
	if (rec->webm && rec->webm_gen >= gen) {
		*data = rec->webm;
		*len = rec->webm_len;
		return 1;
	}
	if (rec->failed_gen >= gen) {
		api_error_set(e, 500, "export_failed", rec->webm_err);
		return -EIO;
	}
	return 0;
}

void rec_poke_all(struct gw *gw)
{
	for (struct sess *s = sess_first(gw); s; s = sess_next(s)) {
		struct recorder *rec = rec_find(s);

		if (!rec)
			continue;
		poke(rec);
	}
}
