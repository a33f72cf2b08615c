/* gateway/stream/stream_hub.c: see stream_hub.h. */
#include "gateway/stream/stream_hub.h"

#include "common/fsutil.h"
#include "common/log.h"
#include "display/encode_pool.h"
#include "display/stream_wire.h"
#include "gateway/action/batch.h"
#include "gateway/action/keys.h"
#include "gateway/action/run.h"
#include "gateway/core/audit.h"
#include "gateway/session/session.h"
#include "vmm-qemu/input.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void clear_slot(struct stream_hub *h, int i);
static void type_stop(struct stream_viewer *v);

/* The hub hears its session's events (for the viewers) and its end. */
static void on_session(struct sess_listener *l, struct sess *s, enum sess_signal sig,
		       const void *data)
{
	struct stream_hub *h = lws_container_of(l, struct stream_hub, listener);

	(void)s;
	if (sig == SESS_SIGNAL_EVENT)
		stream_hub_event(h, (json_t *)data);
	else if (sig == SESS_SIGNAL_DESTROY)
		stream_hub_destroy(h);
}

struct stream_hub *stream_hub_find(const struct sess *s)
{
	struct sess_listener *l = sess_find_listener(s, on_session);

	return l ? lws_container_of(l, struct stream_hub, listener) : NULL;
}

struct stream_hub *stream_hub_of(struct sess *s)
{
	struct stream_hub *h = stream_hub_find(s);

	if (h)
		return h;
	h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	h->s = s;
	h->seen_x = h->seen_y = -1;
	h->listener.notify = on_session;
	sess_listen(s, &h->listener);
	return h;
}

void stream_hub_destroy(struct stream_hub *h)
{
	if (!h)
		return;
	if (h->controller)
		stream_hub_release(h, h->controller, "session_deleted");
	/* gone may unlink and free v: walk with care. */
	for (struct stream_viewer *v = h->viewers, *next; v; v = next) {
		next = v->next;
		v->ops->gone(v, h);
	}
	for (int i = 0; i < STREAM_CACHE; i++)
		clear_slot(h, i);
	display_stream_msg_unref(h->shape_msg);
	sess_unlisten(h->s, &h->listener);
	free(h);
}

const char *stream_controller(const struct sess *s)
{
	struct stream_hub *h = stream_hub_find(s);

	return h && h->controller ? h->controller->name : NULL;
}

void stream_hub_add(struct stream_hub *h, struct stream_viewer *v)
{
	v->hub = h;
	v->id = ++h->next_id;
	v->next = h->viewers;
	h->viewers = v;
	h->n_viewers++;
}

int stream_hub_count(const struct stream_hub *h, bool authed)
{
	int n = 0;

	for (const struct stream_viewer *v = h->viewers; v; v = v->next)
		n += (v->scope != AUTH_NONE) == authed && v != h->vnc_viewer;
	return n;
}

void stream_hub_remove(struct stream_hub *h, struct stream_viewer *v, const char *reason)
{
	struct stream_viewer **pp;

	if (h->controller == v)
		stream_hub_release(h, v, reason);
	for (pp = &h->viewers; *pp; pp = &(*pp)->next)
		if (*pp == v) {
			*pp = v->next;
			h->n_viewers--;
			break;
		}
	v->hub = NULL;
}

static void wake(struct stream_hub *h)
{
	for (struct stream_viewer *v = h->viewers; v; v = v->next)
		v->ops->poke(v, true);
}

/* Sends j (stolen) to every viewer that takes messages. */
static void tell_all(struct stream_hub *h,
		     json_t *(*make)(const struct stream_hub *h, const struct stream_viewer *v,
				     const void *arg),
		     const void *arg)
{
	for (struct stream_viewer *v = h->viewers; v; v = v->next)
		if (v->ops->text && v->scope != AUTH_NONE)
			v->ops->text(v, make(h, v, arg));
}

void stream_poke_all(struct gw *gw)
{
	for (struct sess *s = sess_first(gw); s; s = sess_next(s)) {
		struct stream_hub *h = stream_hub_find(s);
		struct display_mirror *m = sess_mirror(s);
		struct display_frame *f;
		struct display_cursor *c;
		uint64_t seq, shape;
		int px, py;
		bool changed;

		if (!h || !h->viewers)
			continue;
		if (!m) {
			for (struct stream_viewer *v = h->viewers; v; v = v->next)
				v->ops->poke(v, false); /* a door's input still counts */
			continue;
		}
		if (h->mirror != m) {
			/* A new mirror (the guest was replaced) counts frames
			 * from 1 again: forget every encoding and base. */
			for (int i = 0; i < STREAM_CACHE; i++)
				clear_slot(h, i);
			for (struct stream_viewer *v = h->viewers; v; v = v->next) {
				display_frame_unref(v->base);
				v->base = NULL;
				v->shape_serial = 0;
			}
			h->shape_serial = 0;
			display_stream_msg_unref(h->shape_msg);
			h->shape_msg = NULL;
			h->mirror = m;
		}
		f = display_mirror_latest(m);
		seq = f ? f->seq : 0;
		display_frame_unref(f);
		c = display_mirror_cursor(m);
		shape = c ? c->serial : 0;
		display_cursor_unref(c);
		sess_pointer(s, &px, &py);
		changed = seq != h->seen_seq || shape != h->seen_shape || px != h->seen_x ||
			  py != h->seen_y;
		h->seen_seq = seq;
		h->seen_shape = shape;
		h->seen_x = px;
		h->seen_y = py;
		for (struct stream_viewer *v = h->viewers; v; v = v->next)
			v->ops->poke(v, changed);
	}
}

/* Microseconds since the Unix epoch when f was published. */
static uint64_t frame_time_us(const struct display_frame *f)
{
	struct timespec ts;
	int64_t age_ms = fs_now_ms() - f->changed_ms;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u -
	       (uint64_t)(age_ms > 0 ? age_ms : 0) * 1000u;
}

/* A stream message being encoded on the encoder pool. The hub that asked
 * may go meanwhile (or forget its cache): it then lets go (hub = NULL) and
 * the job's done frees it. */
struct frame_job {
	struct stream_hub *hub; /* NULL once abandoned */
	struct display_frame *base, *frame; /* owned references; base NULL: a whole frame */
	int quality;
	uint64_t time_us;
	struct display_stream_msg *msg; /* owned: the result */
	int rc;
	char err[256];
};

static void frame_job_free(struct frame_job *j)
{
	display_frame_unref(j->base);
	display_frame_unref(j->frame);
	display_stream_msg_unref(j->msg);
	free(j);
}

/* On a pool worker, with its own encoder. */
static void frame_work(void *ud, void *enc) /* the worker's struct display_stream_encoder */
{
	struct frame_job *j = ud;

	j->rc = display_stream_encode(enc, j->base, j->frame, j->quality, j->time_us, LWS_PRE,
				      &j->msg, j->err, sizeof(j->err));
}

/* Back on the loop: the slot gets the message, the viewers a wake-up. */
static void frame_done(void *ud, int status)
{
	struct frame_job *j = ud;
	struct stream_hub *h = j->hub;

	for (int i = 0; h && i < STREAM_CACHE; i++) {
		if (h->cache[i].pending != j)
			continue;
		h->cache[i].pending = NULL;
		if (status == 0 && j->rc == 0) {
			h->cache[i].msg = j->msg;
			j->msg = NULL;
			h->encodes++;
		} else {
			if (status == 0)
				log_warn("stream", "%s: %s", sess_id(h->s), j->err);
			h->cache[i].to = 0; /* the key is free again */
		}
		wake(h);
	}
	frame_job_free(j);
}

/* Empties cache slot i, letting go of an encoding under way. */
static void clear_slot(struct stream_hub *h, int i)
{
	struct frame_job *j = h->cache[i].pending;

	display_stream_msg_unref(h->cache[i].msg);
	h->cache[i].msg = NULL;
	h->cache[i].to = 0;
	if (!j)
		return;
	h->cache[i].pending = NULL;
	j->hub = NULL;
	/* Still queued: its done comes now and frees it; else once it ran. */
	encode_pool_cancel(sess_gw(h->s)->encoders, j);
}

struct display_stream_msg *stream_hub_message(struct stream_hub *h,
					      const struct display_frame *base,
					      const struct display_frame *f, int quality)
{
	uint64_t from = base && base->width == f->width && base->height == f->height ? base->seq
										     : 0;
	struct frame_job *j;
	int victim = -1;

	for (int i = 0; i < STREAM_CACHE; i++) {
		if ((h->cache[i].msg || h->cache[i].pending) && h->cache[i].from == from &&
		    h->cache[i].to == f->seq && h->cache[i].quality == quality) {
			h->cache[i].used = ++h->clock;
			return h->cache[i].msg ? display_stream_msg_ref(h->cache[i].msg) : NULL;
		}
		if (h->cache[i].pending)
			continue; /* never evict an encoding under way */
		if (victim < 0 || !h->cache[i].msg ||
		    (h->cache[victim].msg && h->cache[i].used < h->cache[victim].used))
			victim = i;
	}
	if (victim < 0)
		return NULL; /* every slot is being encoded: wait for one */
	if (!(j = calloc(1, sizeof(*j))))
		return NULL;
	j->hub = h;
	j->base = from ? display_frame_ref((struct display_frame *)base) : NULL;
	j->frame = display_frame_ref((struct display_frame *)f);
	j->quality = quality;
	j->time_us = frame_time_us(f);
	if (encode_pool_submit_for(sess_gw(h->s)->encoders, h->s, frame_work, frame_done, j) < 0) {
		frame_job_free(j);
		return NULL; /* the pool is full: the viewer asks again */
	}
	clear_slot(h, victim);
	h->cache[victim].from = from;
	h->cache[victim].to = f->seq;
	h->cache[victim].quality = quality;
	h->cache[victim].pending = j;
	h->cache[victim].used = ++h->clock;
	return NULL;
}

struct display_stream_msg *stream_hub_shape(struct stream_hub *h, const struct display_cursor *c)
{
	size_t n = STREAM_WIRE_SHAPE_HDR + (size_t)c->width * c->height * 4;
	struct display_stream_msg *m;

	if (h->shape_msg && h->shape_serial == c->serial)
		return display_stream_msg_ref(h->shape_msg);
	m = calloc(1, sizeof(*m));
	if (!m || !(m->buf = malloc(LWS_PRE + n))) {
		free(m);
		return NULL;
	}
	atomic_init(&m->refs, 1);
	m->headroom = LWS_PRE;
	m->len = n;
	stream_wire_put_shape(m->buf + LWS_PRE, c->width, c->height, c->hot_x, c->hot_y);
	memcpy(m->buf + LWS_PRE + STREAM_WIRE_SHAPE_HDR, c->rgba, n - STREAM_WIRE_SHAPE_HDR);
	display_stream_msg_unref(h->shape_msg);
	h->shape_msg = display_stream_msg_ref(m);
	h->shape_serial = c->serial;
	return m;
}

json_t *stream_control_json(const struct stream_hub *h, const struct stream_viewer *v)
{
	const struct stream_viewer *c = h->controller;

	return json_pack("{s:s, s:o, s:b}", "type", "control", "controller",
			 c ? json_pack("{s:i, s:s}", "id", c->id, "name", c->name) : json_null(),
			 "you", c == v);
}

static json_t *control_of(const struct stream_hub *h, const struct stream_viewer *v,
			  const void *arg)
{
	(void)arg;
	return stream_control_json(h, v);
}

static void announce(struct stream_hub *h)
{
	tell_all(h, control_of, NULL);
}

static int send_events(struct stream_hub *h, json_t *events)
{
	char err[256];
	int rc = sess_input(h->s, events, err, sizeof(err));

	if (rc < 0 && rc != -EBUSY) /* -EBUSY: no guest of its own to take it now */
		log_warn("stream", "%s: input: %s", sess_id(h->s), err);
	return rc < 0 ? -EPIPE : 0;
}

/* Appends the events of an input builder's {"events": [...]} to arr. */
static void append_events(json_t *arr, json_t *built)
{
	json_array_extend(arr, json_object_get(built, "events"));
	json_decref(built);
}

static const char *const button_names[] = { "left", "middle", "right", "side", "extra" };

/* Lets go of every button and key v holds (it is losing control). */
static void release_held(struct stream_hub *h, struct stream_viewer *v)
{
	json_t *ev = json_array();

	for (int i = 0; i < 5; i++)
		if (v->buttons & (1 << i))
			append_events(ev, vmm_input_button(button_names[i], false));
	for (int i = v->n_keys; i > 0; i--)
		append_events(ev, vmm_input_key(v->keys[i - 1], false));
	v->buttons = 0;
	v->n_keys = 0;
	if (json_array_size(ev))
		send_events(h, ev);
	else
		json_decref(ev);
}

int stream_hub_take(struct stream_hub *h, struct stream_viewer *v, const char **code,
		    const char **msg)
{
	if (v->scope < AUTH_CONTROL) {
		*code = "forbidden";
		*msg = "a view token only watches: connect with a control token to take control";
		return -EPERM;
	}
	if (h->controller == v)
		return 0;
	if (h->controller) {
		*code = "controlled_by_other";
		*msg = "another viewer holds control; it must release it first";
		return -EBUSY;
	}
	h->controller = v;
	sess_event(h->s, "control_taken",
		   json_pack("{s:i, s:s}", "viewer", v->id, "name", v->name));
	audit_log(v->gw, "control_taken", sess_id(h->s), &v->who, v->remote,
		  json_pack("{s:i, s:s, s:s}", "viewer", v->id, "name", v->name, "scope",
			    v->scope == AUTH_OPERATOR ? "operator" : "control"));
	announce(h);
	return 0;
}

int stream_hub_release(struct stream_hub *h, struct stream_viewer *v, const char *reason)
{
	if (h->controller != v)
		return -EPERM;
	type_stop(v);
	release_held(h, v);
	h->controller = NULL;
	sess_event(h->s, "control_released",
		   json_pack("{s:i, s:s, s:s}", "viewer", v->id, "name", v->name, "reason",
			     reason));
	audit_log(v->gw, "control_released", sess_id(h->s), &v->who, v->remote,
		  json_pack("{s:i, s:s, s:s}", "viewer", v->id, "name", v->name, "reason", reason));
	announce(h);
	return 0;
}

/* Abandons the text v has under way (what was typed stays). */
static void type_stop(struct stream_viewer *v)
{
	run_cancel(v->typing);
	v->typing = NULL;
	lws_sul_cancel(&v->sul_type);
	free(v->type_text);
	v->type_text = NULL;
}

static bool key_held(const struct stream_viewer *v, const char *q)
{
	for (int i = 0; i < v->n_keys; i++)
		if (v->keys[i] == q)
			return true;
	return false;
}

static void key_forget(struct stream_viewer *v, const char *q)
{
	for (int i = 0; i < v->n_keys; i++)
		if (v->keys[i] == q) {
			memmove(&v->keys[i], &v->keys[i + 1],
				(size_t)(v->n_keys - i - 1) * sizeof(v->keys[0]));
			v->n_keys--;
			return;
		}
}

static void text_run_done(void *ud, struct run_outcome *out)
{
	(void)ud;
	if (out->failed)
		log_warn("stream", "viewer text: %s", out->err.message);
	json_decref(out->reply);
	display_image_unref(out->image);
}

/* Text a person typed: by the keys of the session's layout when it has
 * them all, else whole as a type action (through the guest agent, exact;
 * it may land after keys sent later). */
static int viewer_text(struct stream_hub *h, const char *text, json_t *ev)
{
	struct sess *s = h->s;
	const struct vmm_keymap *km = sess_keymap(s);
	const char *level3 = km ? vmm_keymap_level3_qcode(km) : NULL;
	struct actions_ctx ctx = { .screen_width = sess_screen(s).width,
				   .screen_height = sess_screen(s).height,
				   .keymap = km };
	struct vmm_keystroke st;
	struct actions_error aerr;
	struct action_batch *b;
	struct shot_opts shot;
	struct api_error e;
	size_t len = strlen(text);
	long index;
	json_t *obj;

	for (size_t i = 0; i < len;) {
		size_t n = 1;

		while (i + n < len && ((unsigned char)text[i + n] & 0xc0) == 0x80)
			n++;
		if (keys_char_stroke(km, stream_one_char(text + i, n), &st) < 0)
			break;
		i += n;
		if (i == len)
			goto keys;
	}
	obj = json_pack("{s:s, s:s}", "action", "type", "text", text);
	b = obj ? batch_parse(obj, &ctx, &aerr, &index) : NULL;
	json_decref(obj);
	if (!b)
		return 0;
	shot_opts_default(&shot);
	if (!run_start(s, b, &shot, text_run_done, NULL, &e))
		log_warn("stream", "%s: viewer text: %s", sess_id(s), e.message);
	return 0;
keys:
	for (size_t i = 0; i < len;) {
		size_t n = 1;

		while (i + n < len && ((unsigned char)text[i + n] & 0xc0) == 0x80)
			n++;
		keys_char_stroke(km, stream_one_char(text + i, n), &st);
		i += n;
		if (st.shift)
			append_events(ev, vmm_input_key("shift", true));
		if (st.level3)
			append_events(ev, vmm_input_key(level3, true));
		append_events(ev, vmm_input_key(st.qcode, true));
		append_events(ev, vmm_input_key(st.qcode, false));
		if (st.level3)
			append_events(ev, vmm_input_key(level3, false));
		if (st.shift)
			append_events(ev, vmm_input_key("shift", false));
	}
	return 1;
}

int stream_hub_input(struct stream_hub *h, struct stream_viewer *v, const struct stream_msg *m)
{
	struct vmm_keystroke st;
	const char *qcode;
	struct sess *s = h->s;
	json_t *ev;

	if (h->controller != v)
		return -EPERM;
	ev = json_array();
	switch (m->kind) {
	case SM_POINTER:
	case SM_WHEEL:
		append_events(ev, vmm_input_move(m->x, m->y, sess_screen(s).width,
						 sess_screen(s).height));
		sess_set_pointer(s, m->x, m->y);
		if (m->kind == SM_POINTER) {
			for (int i = 0; i < 5; i++)
				if ((m->buttons ^ v->buttons) & (1 << i))
					append_events(ev, vmm_input_button(button_names[i],
									   m->buttons & (1 << i)));
			v->buttons = m->buttons;
		} else {
			const char *b = m->dy > 0 ? "wheel-down" : "wheel-up";

			for (int i = 0; i < abs(m->dy); i++) {
				append_events(ev, vmm_input_button(b, true));
				append_events(ev, vmm_input_button(b, false));
			}
			b = m->dx > 0 ? "wheel-right" : "wheel-left";
			for (int i = 0; i < abs(m->dx); i++) {
				append_events(ev, vmm_input_button(b, true));
				append_events(ev, vmm_input_button(b, false));
			}
		}
		break;
	case SM_KEY:
		/* The key by its meaning (the shortcut ctrl+z is z's key on
		 * the guest's layout), else by its position. */
		qcode = m->key_char && keys_char_stroke(sess_keymap(s), m->key_char, &st) == 0
				? st.qcode
				: m->qcode;
		if (!qcode)
			break;
		if (m->down && !key_held(v, qcode)) {
			if (v->n_keys == STREAM_MAX_KEYS) {
				json_decref(ev);
				return 0; /* more keys than hands: ignore */
			}
			v->keys[v->n_keys++] = qcode;
		} else if (!m->down) {
			key_forget(v, qcode);
		}
		append_events(ev, vmm_input_key(qcode, m->down));
		break;
	case SM_TEXT:
		viewer_text(h, m->text, ev);
		break;
	default:
		break;
	}
	if (!json_array_size(ev)) {
		json_decref(ev);
		return 0;
	}
	return send_events(h, ev);
}

static void type_piece(lws_sorted_usec_list_t *sul);

/* A piece of v's text is typed (or failed): the next one after a pause,
 * or v hears how it went. */
static void typed(void *ud, struct run_outcome *out)
{
	struct stream_viewer *v = ud;
	json_t *j = NULL;

	v->typing = NULL;
	if (out->failed) {
		j = json_pack("{s:s, s:s, s:s}", "type", "error", "code", out->err.code, "message",
			      out->err.message);
	} else if ((v->type_off += v->type_piece) < v->type_len) {
		lws_sul_schedule(sess_gw(v->hub->s)->ctx, 0, &v->sul_type, type_piece,
				 STREAM_TYPE_GAP_MS * LWS_US_PER_MS);
	} else {
		j = json_pack("{s:s, s:I}", "type", "typed", "bytes", (json_int_t)v->type_len);
	}
	json_decref(out->reply);
	display_image_unref(out->image);
	if (j) {
		free(v->type_text);
		v->type_text = NULL;
		if (v->ops->text)
			v->ops->text(v, j);
		else
			json_decref(j);
	}
}

/* Starts typing the next piece of v's text. 0, or -EPIPE / -ENOMEM with
 * the error's code and message in e. */
static int type_start(struct stream_viewer *v, struct api_error *e)
{
	struct sess *s = v->hub->s;
	struct actions_ctx ctx = { .screen_width = sess_screen(s).width,
				   .screen_height = sess_screen(s).height };
	const char *text = v->type_text + v->type_off;
	size_t left = v->type_len - v->type_off;
	struct shot_opts shot;
	struct action_batch *b;
	struct actions_error aerr;
	long index;
	json_t *a;

	v->type_piece = stream_type_piece(text, left);
	a = json_pack("{s:s, s:s%}", "action", "type", "text", text, v->type_piece);
	b = a ? batch_parse(a, &ctx, &aerr, &index) : NULL;
	json_decref(a);
	if (!b) { /* the stream message allows less than the action */
		api_error_set(e, 500, "internal", "out of memory");
		return -ENOMEM;
	}
	/* Not the agent's use of the session: no usage, metrics or idle reset,
	 * as with the viewer's other input. */
	shot_opts_default(&shot);
	shot.preview = true;
	v->typing = run_start(s, b, &shot, typed, v, e);
	return v->typing ? 0 : -EPIPE;
}

static void type_piece(lws_sorted_usec_list_t *sul)
{
	struct stream_viewer *v = lws_container_of(sul, struct stream_viewer, sul_type);
	struct api_error e;

	if (!v->hub || !v->type_text || type_start(v, &e) == 0)
		return;
	free(v->type_text);
	v->type_text = NULL;
	if (v->ops->text)
		v->ops->text(v, json_pack("{s:s, s:s, s:s}", "type", "error", "code", e.code,
					  "message", e.message));
}

int stream_hub_type(struct stream_hub *h, struct stream_viewer *v, const char *text, size_t len,
		    const char **code, const char **msg)
{
	static struct api_error e; /* *code and *msg point into it until the next call */
	int rc;

	if (h->controller != v)
		return -EPERM;
	if (v->type_text)
		return -EBUSY;
	if (!(v->type_text = strndup(text, len)))
		return -ENOMEM;
	v->type_len = len;
	v->type_off = 0;
	/* A held key goes up first: its guest events are queued before the run's. */
	for (int i = v->n_keys; i > 0; i--) {
		json_t *ev = json_array();

		append_events(ev, vmm_input_key(v->keys[i - 1], false));
		send_events(h, ev);
	}
	v->n_keys = 0;
	rc = type_start(v, &e);
	if (rc < 0) {
		free(v->type_text);
		v->type_text = NULL;
		*code = e.code;
		*msg = e.message;
	}
	return rc;
}

static json_t *event_of(const struct stream_hub *h, const struct stream_viewer *v,
			const void *event)
{
	(void)h;
	(void)v;
	return json_pack("{s:s, s:O}", "type", "event", "event", (json_t *)event);
}

void stream_hub_event(struct stream_hub *h, json_t *event)
{
	if (h)
		tell_all(h, event_of, event);
}
