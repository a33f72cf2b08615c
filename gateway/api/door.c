/* gateway/api/door.c: see door.h. The door is a static: one per process,
 * registered before the loop runs, its table the door's own (static). */
#include "gateway/api/door.h"

#include "gateway/api/routes.h"

#include <errno.h>

static const struct api_door_ops *door; /* NULL: none registered */

int api_door_register(const struct api_door_ops *ops)
{
	if (door && door != ops)
		return -EBUSY;
	door = ops;
	route_kind_names[R_DOOR] = ops->name;
	return 0;
}

void *api_door_take(struct http_req *r)
{
	void *state;

	r->route.kind = R_DOOR;
	if (!(state = http_route_state(r))) /* answered 500 */
		r->close_after = true; /* its body is not read */
	return state;
}

void api_door_claim(struct http_req *r)
{
	if (door)
		door->claim(r);
}

void api_door_poke_all(struct gw *gw)
{
	if (door)
		door->poke_all(gw);
}

bool api_door_ws_claim(struct lws *wsi)
{
	return door && door->ws_claim(wsi);
}

bool api_door_stream_origin(struct gw *gw, struct lws *wsi, struct sess *s, const char *origin)
{
	return door && door->stream_origin(gw, wsi, s, origin);
}

bool api_door_owns_port(int port)
{
	return door && door->owns_port(port);
}

int api_door_ws_confirm(struct gw *gw, struct lws *wsi)
{
	return door ? door->ws_confirm(gw, wsi) : 0;
}

int api_door_ws_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
			 size_t len)
{
	return door ? door->ws_callback(wsi, reason, user, in, len) : -1;
}

int api_door_raw_callback(struct lws *wsi, enum lws_callback_reasons reason, void *in, size_t len)
{
	return door ? door->raw_callback(wsi, reason, in, len) : 0;
}

/* R_DOOR's row. Only a door's claim makes a request R_DOOR, so door is
 * there. */

void api_door_refuse_early(struct http_req *r)
{
	door->refuse_early(r);
}

size_t api_door_body_max(const struct http_req *r)
{
	return door->body_max_of(r);
}

void api_door_handle(struct http_req *r)
{
	door->handle(r);
}

void api_door_resume(struct http_req *r, struct sess *s, bool timed_out)
{
	door->resume(r, s, timed_out);
}

const char *api_door_audit_of(const struct http_req *r)
{
	return door->audit_of(r);
}

size_t api_door_state_size(void)
{
	return door ? door->state_size : 0;
}

void api_door_state_release(void *state)
{
	door->state_release(state);
}
