/* gateway/vnc.h: the optional VNC door to a session, gateway side.
 * POST /v1/sessions/{id}/vnc starts a libvncserver (display/vnc_share.h)
 * on `vitrine serve --vnc-listen` (127.0.0.1 by default) with fresh view and
 * control passwords; DELETE stops it; deleting the session stops it too.
 * Frames go to it from the loop; input from clients with the control
 * password goes through the live view's control lease as one more viewer
 * ("VNC client"): it takes control with its first input when nobody holds
 * it (refused while a person or another viewer does) and gives it back when
 * its last control client leaves. Loop thread only. */
#ifndef VITRINE_GATEWAY_VNC_H
#define VITRINE_GATEWAY_VNC_H

#include <stdint.h>

struct http_req;
struct sess;
struct stream_hub;

/* Answers POST or DELETE /v1/sessions/{id}/vnc on s (the token is checked
 * here: control scope). */
void vnc_route(struct http_req *r, struct sess *s);
/* Shows the newest frame to VNC clients and applies their input. */
void vnc_poke(struct stream_hub *h);
/* Stops the server of h, if any, giving back control. */
void vnc_stop(struct stream_hub *h);
/* The QEMU qcode of an X keysym (a US layout), or NULL. Pure. */
const char *vnc_keysym_qcode(uint32_t keysym);

#endif
