/* gateway/stream/vnc.h: the optional VNC door to a session, gateway side.
 * It is a libvncserver (display/vnc_share.h) on `vitrine serve
 * --vnc-listen` (127.0.0.1 by default) with fresh view and control
 * passwords (the routes are in api/api_vnc.c); deleting the session stops
 * it too.
 * Frames go to it from the loop; input from clients with the control
 * password goes through the live view's control lease as one more viewer
 * ("VNC client"): it takes control with its first input when nobody holds
 * it (refused while a person or another viewer does) and gives it back when
 * its last control client leaves. Loop thread only. */
#ifndef VITRINE_GATEWAY_VNC_H
#define VITRINE_GATEWAY_VNC_H

#include <stddef.h>
#include <stdint.h>

#define VNC_IDLE_STOP_S 10

struct gw;
struct stream_hub;

/* Starts the door of h's session (its screen size, gw's listen address)
 * for POST .../vnc: it stays until vnc_stop. Returns 0 when started, 1
 * when it was running already, or -errno with *code ("internal",
 * "vnc_failed") and a sentence in err. */
int vnc_start(struct stream_hub *h, struct gw *gw, const char **code, char *err, size_t errlen);
/* The door for a client inside the gateway (noVNC's /websockify,
 * e2b/e2b_websockify.c): starts it as vnc_start does when it is not
 * running, and counts one holder. *serial names the door held, for
 * vnc_unhold. Returns 0, or -errno as vnc_start. */
int vnc_hold(struct stream_hub *h, struct gw *gw, unsigned *serial, const char **code, char *err,
	     size_t errlen);
/* One holder of door serial less: a door that only holders wanted stops
 * VNC_IDLE_STOP_S after its last one let go, once it has no clients (a
 * libvncserver stopped while a client's thread is still leaving crashes
 * in that thread). Nothing when that door is gone already. */
void vnc_unhold(struct stream_hub *h, unsigned serial);
/* Shows the newest frame to VNC clients and applies their input. */
void vnc_poke(struct stream_hub *h);
/* Stops the server of h, if any, giving back control. */
void vnc_stop(struct stream_hub *h);
/* The QEMU qcode of an X keysym (a US layout), or NULL. Pure. */
const char *vnc_keysym_qcode(uint32_t keysym);

#endif
