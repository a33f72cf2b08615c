/* gateway/api/session_json.c: a session as the API shows it: what it says
 * of itself (sess_describe), the URLs of its routes (the session knows
 * nothing of them), who drives it in the live view and its recording.
 * Loop thread. */
#include "gateway/api/api_int.h"
#include "gateway/session/session.h"
#include "gateway/stream/recorder.h"
#include "gateway/stream/stream_hub.h"

#include <string.h>

json_t *api_session_json(const struct sess *s, bool with_tokens)
{
	const char *base = sess_gw(s)->public_url, *id = sess_id(s);
	char ws[sizeof(sess_gw(s)->public_url) + 8];
	json_t *j = sess_describe(s, with_tokens), *urls;

	if (!j)
		return NULL;
	/* http://host -> ws://host, https://host -> wss://host */
	snprintf(ws, sizeof(ws), "ws%s", strncmp(base, "http", 4) ? base : base + 4);
	urls = json_pack("{s:s++, s:s+++, s:s+++, s:s+++, s:s+++, s:s+++, s:s++}", "self", base,
			 "/v1/sessions/", id, "screenshot", base, "/v1/sessions/", id,
			 "/screenshot", "actions", base, "/v1/sessions/", id, "/actions", "control",
			 ws, "/v1/sessions/", id, "/control", "events", base, "/v1/sessions/", id,
			 "/events", "stream", ws, "/v1/sessions/", id, "/stream", "viewer", base,
			 "/web/#s=", id);
	/* Live view: who drives the guest now (agents get 409 meanwhile). */
	json_object_set_new(j, "controlled_by",
			    stream_controller(s) ? json_string(stream_controller(s)) : json_null());
	if (rec_exists(s)) { /* its summary, and where it plays back */
		json_object_set_new(j, "recording", rec_summary(s));
		json_object_set_new(urls, "replay", json_pack("s++", base, "/web/#r=", id));
	}
	json_object_set_new(j, "urls", urls);
	return j;
}
