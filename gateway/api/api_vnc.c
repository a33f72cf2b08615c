/* gateway/api/api_vnc.c: POST|DELETE /v1/sessions/{id}/vnc, the routes of
 * the VNC door (stream/vnc.h): start it and hand out its passwords, or stop
 * it. The "vnc" scope (the route checks it). Loop thread only. */
#include "display/vnc_share.h"
#include "gateway/api/api_int.h"
#include "gateway/session/session.h"
#include "gateway/stream/stream_hub.h"
#include "gateway/stream/vnc.h"

static void reply_info(struct http_req *r, struct stream_hub *h, int status)
{
	http_reply_json(r, status,
			json_pack("{s:s, s:i, s:s, s:s}", "host",
				  r->gw->vnc_listen[0] ? r->gw->vnc_listen : "127.0.0.1", "port",
				  display_vnc_share_port(h->vnc), "view_password", h->vnc_view_pw,
				  "control_password", h->vnc_control_pw));
}

void api_vnc(struct http_req *r, struct sess *s)
{
	struct stream_hub *h = stream_hub_find(s);
	const char *code;
	char err[256];
	int rc;

	if (r->method == M_DELETE) {
		bool was = h && h->vnc;

		if (h)
			vnc_stop(h);
		http_reply_json(r, 200, json_pack("{s:s, s:b}", "id", sess_id(s), "stopped", was));
		return;
	}
	if (sess_state_of(s) != SESS_READY || !sess_mirror(s)) {
		http_reply_error(r, 409, "session_not_ready", "the session is not ready");
		return;
	}
	if (!(h = stream_hub_of(s))) {
		http_reply_error(r, 500, "internal", "out of memory");
		return;
	}
	rc = vnc_start(h, r->gw, &code, err, sizeof(err));
	if (rc < 0)
		http_reply_error(r, 500, code, err);
	else
		reply_info(r, h, rc == 0 ? 201 : 200);
}
