/* display/view_conn.c: the network half of vitrine-view (see view.h): a
 * libwebsockets client on its own thread, following the lws minimal client
 * examples (one write per WRITEABLE, LWS_PRE headroom). Frames are parsed
 * with stream_wire.h and their JPEG rects decoded with TurboJPEG straight
 * into the shared screen. */
#include "common/ws_rx.h"
#include "display/frame.h"
#include "display/stream_wire.h"
#include "display/view.h"

#include <SDL.h>
#include <errno.h>
#include <jansson.h>
#include <libwebsockets.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>

/* The largest message taken from the gateway: a whole frame of the largest
 * screen the gateway mirrors (DISPLAY_MAX_PIXELS), as a JPEG at quality
 * 100, stays well below it. */
#define VIEW_MSG_MAX ((size_t)64 << 20)

struct conn {
	const struct view_opts *opts;
	struct view_state *st;
	struct lws *wsi;
	tjhandle tj; /* owned */
	struct ws_rx rx; /* owned: the message being received */
	int rects_max;
	struct stream_wire_rect *rects; /* owned */
};

static void wake_sdl(struct view_state *st)
{
	SDL_Event e = { .type = st->sdl_event };

	SDL_PushEvent(&e);
}

void view_stop(struct view_state *st)
{
	pthread_mutex_lock(&st->lock);
	st->stop = 1;
	if (st->ctx)
		lws_cancel_service(st->ctx);
	pthread_mutex_unlock(&st->lock);
}

void view_send(struct view_state *st, const char *json)
{
	pthread_mutex_lock(&st->lock);
	if (st->n_out < VIEW_OUT_QUEUE) {
		st->out[st->n_out] = strdup(json);
		if (st->out[st->n_out])
			st->n_out++;
	}
	if (st->ctx)
		lws_cancel_service(st->ctx);
	pthread_mutex_unlock(&st->lock);
}

static void on_text(struct conn *c, const char *text)
{
	struct view_state *st = c->st;
	json_t *j = json_loads(text, 0, NULL);
	const char *type = json_string_value(json_object_get(j, "type"));
	json_t *ctl = json_object_get(j, "controller");

	if (!type) {
		json_decref(j);
		return;
	}
	pthread_mutex_lock(&st->lock);
	if (!strcmp(type, "hello")) {
		const char *scope = json_string_value(json_object_get(j, "scope"));

		st->can_control = scope && strcmp(scope, "view");
		snprintf(st->session, sizeof(st->session), "%s",
			 json_string_value(json_object_get(j, "session")) ?: "");
	}
	if (!strcmp(type, "hello") || !strcmp(type, "control")) {
		st->you_control = json_is_true(json_object_get(j, "you"));
		snprintf(st->controller, sizeof(st->controller), "%s",
			 json_is_object(ctl)
				 ? json_string_value(json_object_get(ctl, "name")) ?: "?"
				 : "");
	}
	pthread_mutex_unlock(&st->lock);
	if (!strcmp(type, "hello") && c->opts->take && st->can_control)
		view_send(st, "{\"type\":\"take\"}");
	if (!strcmp(type, "error"))
		fprintf(stderr, "vitrine-view: %s: %s\n",
			json_string_value(json_object_get(j, "code")) ?: "error",
			json_string_value(json_object_get(j, "message")) ?: "");
	json_decref(j);
	wake_sdl(st);
}

/* Decodes a frame into the shared screen. Returns 0 or -1 (malformed). */
static int on_frame(struct conn *c, const unsigned char *msg, size_t len)
{
	struct view_state *st = c->st;
	struct stream_wire_frame f;
	int rc = 0;

	if (stream_wire_type(msg, len) == STREAM_WIRE_CURSOR_SHAPE) {
		const uint8_t *rgba;
		int w, h, hx, hy;
		uint8_t *copy;

		if (stream_wire_parse_shape(msg, len, &w, &h, &hx, &hy, &rgba) < 0 ||
		    !(copy = malloc((size_t)w * h * 4)))
			return -1;
		memcpy(copy, rgba, (size_t)w * h * 4);
		pthread_mutex_lock(&st->lock);
		free(st->shape);
		st->shape = copy;
		st->shape_w = w;
		st->shape_h = h;
		st->hot_x = hx;
		st->hot_y = hy;
		st->shape_dirty = st->dirty = true;
		pthread_mutex_unlock(&st->lock);
		wake_sdl(st);
		return 0;
	}
	if (stream_wire_type(msg, len) == STREAM_WIRE_CURSOR) {
		int x, y;
		bool vis;

		if (stream_wire_parse_cursor(msg, len, &x, &y, &vis) < 0)
			return -1;
		pthread_mutex_lock(&st->lock);
		st->cursor_x = x;
		st->cursor_y = y;
		st->dirty = true;
		pthread_mutex_unlock(&st->lock);
		wake_sdl(st);
		return 0;
	}
	/* A screen the gateway would never mirror is no reason to allocate it. */
	if (stream_wire_parse_frame(msg, len, &f, c->rects, c->rects_max) < 0 ||
	    !display_size_ok(f.width, f.height))
		return -1;
	pthread_mutex_lock(&st->lock);
	if (st->width != f.width || st->height != f.height) {
		uint8_t *p = calloc((size_t)f.width * f.height, 4);

		if (!p || !f.key) {
			free(p);
			pthread_mutex_unlock(&st->lock);
			return -1;
		}
		free(st->pixels);
		st->pixels = p;
		st->width = f.width;
		st->height = f.height;
	}
	for (int i = 0; i < f.rects && rc == 0; i++) {
		const struct stream_wire_rect *r = &c->rects[i];
		uint8_t *dst = st->pixels + ((size_t)r->y * st->width + r->x) * 4;

		if (tjDecompress2(c->tj, r->data, r->len, dst, r->w, st->width * 4, r->h, TJPF_RGBX,
				  TJFLAG_FASTDCT) < 0)
			rc = -1;
	}
	st->seq = f.seq;
	st->frames++;
	st->dirty = true;
	pthread_mutex_unlock(&st->lock);
	wake_sdl(st);
	return rc;
}

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
		    size_t len)
{
	struct conn *c = lws_context_user(lws_get_context(wsi));
	struct view_state *st = c ? c->st : NULL;
	unsigned char **p = in, *end;
	char auth[300];
	char *text = NULL;

	(void)user;
	switch (reason) {
	case LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER:
		/* The token goes in a header, never in the URL. */
		end = *p + len;
		snprintf(auth, sizeof(auth), "Bearer %s", c->opts->token);
		if (lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_AUTHORIZATION,
						 (unsigned char *)auth, (int)strlen(auth), p, end))
			return -1;
		return 0;
	case LWS_CALLBACK_CLIENT_ESTABLISHED:
		if (c->opts->quality || c->opts->max_fps || c->opts->name[0]) {
			json_t *j = json_pack("{s:s}", "type", "settings");

			if (c->opts->quality)
				json_object_set_new(j, "quality", json_integer(c->opts->quality));
			if (c->opts->max_fps)
				json_object_set_new(j, "max_fps", json_integer(c->opts->max_fps));
			if (c->opts->name[0])
				json_object_set_new(j, "name", json_string(c->opts->name));
			text = json_dumps(j, JSON_COMPACT);
			json_decref(j);
			if (text)
				view_send(st, text);
			free(text);
		}
		return 0;
	case LWS_CALLBACK_CLIENT_RECEIVE:
		switch (ws_rx_append(&c->rx, in, len, lws_is_first_fragment(wsi),
				     lws_is_final_fragment(wsi), lws_frame_is_binary(wsi))) {
		case WS_RX_PARTIAL:
			return 0;
		case WS_RX_COMPLETE:
			if (!c->rx.binary)
				on_text(c, (const char *)c->rx.buf);
			else if (on_frame(c, c->rx.buf, c->rx.len) < 0)
				fprintf(stderr, "vitrine-view: a malformed frame message\n");
			return 0;
		case -EMSGSIZE:
			pthread_mutex_lock(&st->lock);
			snprintf(st->why, sizeof(st->why),
				 "a message from the gateway over %zu MiB", VIEW_MSG_MAX >> 20);
			pthread_mutex_unlock(&st->lock);
			lws_close_reason(wsi, LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE, NULL, 0);
			return -1;
		default: /* -ENOMEM */
			pthread_mutex_lock(&st->lock);
			snprintf(st->why, sizeof(st->why), "out of memory for a message");
			pthread_mutex_unlock(&st->lock);
			return -1;
		}
	case LWS_CALLBACK_CLIENT_WRITEABLE:
		pthread_mutex_lock(&st->lock);
		if (st->n_out) {
			text = st->out[0];
			memmove(st->out, st->out + 1, (size_t)(st->n_out - 1) * sizeof(st->out[0]));
			st->n_out--;
		}
		pthread_mutex_unlock(&st->lock);
		if (text) {
			size_t n = strlen(text);
			unsigned char *buf = malloc(LWS_PRE + n);
			int rc = buf ? 0 : -1;

			if (buf) {
				memcpy(buf + LWS_PRE, text, n);
				rc = lws_write(wsi, buf + LWS_PRE, n, LWS_WRITE_TEXT) < (int)n ? -1
											       : 0;
				free(buf);
			}
			free(text);
			lws_callback_on_writable(wsi);
			return rc;
		}
		return 0;
	case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
		if (c && c->wsi)
			lws_callback_on_writable(c->wsi);
		return 0;
	case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
		if (len >= 2) {
			const unsigned char *b = in;

			pthread_mutex_lock(&st->lock);
			snprintf(st->why, sizeof(st->why), "closed by the gateway: %d %.*s",
				 b[0] << 8 | b[1], (int)len - 2, (const char *)b + 2);
			pthread_mutex_unlock(&st->lock);
		}
		return 0;
	case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
	case LWS_CALLBACK_CLIENT_CLOSED:
		pthread_mutex_lock(&st->lock);
		if (!st->why[0])
			snprintf(st->why, sizeof(st->why), "%s%s",
				 reason == LWS_CALLBACK_CLIENT_CLOSED ? "connection closed"
								      : "cannot connect: ",
				 reason == LWS_CALLBACK_CLIENT_CLOSED || !in ? ""
									     : (const char *)in);
		st->closed = true;
		pthread_mutex_unlock(&st->lock);
		c->wsi = NULL;
		wake_sdl(st);
		return 0;
	default:
		break;
	}
	return lws_callback_http_dummy(wsi, reason, user, in, len);
}

void *view_conn_thread(void *arg)
{
	struct view_run *run = arg;
	static const struct lws_protocols protocols[] = {
		{ "vitrine-view", callback, 0, 0, 0, NULL, 0 },
		{ NULL, NULL, 0, 0, 0, NULL, 0 },
	};
	struct conn c = { .opts = run->opts, .st = run->st, .rects_max = 4096 };
	struct lws_context_creation_info info;
	struct lws_client_connect_info cc;
	struct lws_context *ctx;
	char host[300];

	ws_rx_init(&c.rx, VIEW_MSG_MAX);
	memset(&info, 0, sizeof(info));
	info.port = CONTEXT_PORT_NO_LISTEN;
	info.protocols = protocols;
	info.user = &c;
	lws_set_log_level(LLL_ERR, NULL);
	c.tj = tjInitDecompress();
	c.rects = calloc((size_t)c.rects_max, sizeof(*c.rects));
	ctx = c.tj && c.rects ? lws_create_context(&info) : NULL;
	if (!ctx) {
		pthread_mutex_lock(&run->st->lock);
		snprintf(run->st->why, sizeof(run->st->why), "cannot start the network client");
		run->st->closed = true;
		pthread_mutex_unlock(&run->st->lock);
		wake_sdl(run->st);
		goto out;
	}
	pthread_mutex_lock(&run->st->lock);
	run->st->ctx = ctx;
	pthread_mutex_unlock(&run->st->lock);
	memset(&cc, 0, sizeof(cc));
	snprintf(host, sizeof(host), "%s:%d", run->opts->host, run->opts->port);
	cc.context = ctx;
	cc.address = run->opts->host;
	cc.port = run->opts->port;
	cc.path = run->opts->path;
	cc.host = host;
	cc.origin = NULL;
	cc.protocol = NULL;
	cc.local_protocol_name = "vitrine-view";
	c.wsi = lws_client_connect_via_info(&cc);
	while (!run->st->stop && !run->st->closed)
		if (lws_service(ctx, 0) < 0)
			break;
	pthread_mutex_lock(&run->st->lock);
	run->st->ctx = NULL;
	pthread_mutex_unlock(&run->st->lock);
	lws_context_destroy(ctx);
out:
	if (c.tj)
		tjDestroy(c.tj);
	free(c.rects);
	ws_rx_free(&c.rx);
	return NULL;
}
