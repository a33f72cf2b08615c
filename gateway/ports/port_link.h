/* gateway/ports/port_link.h: a signed link to a guest's port for a
 * browser (docs/api.md, "Ports"): POST /v1/sessions/{id}/ports/{port}
 * answers a URL whose query holds a value EXPIRY.MAC (HMAC-SHA256 under
 * the gateway's secret of the session, the port and EXPIRY); opening it
 * sets that value as an HttpOnly cookie (PORT_LINK_COOKIE) scoped to the
 * port's host or path, which authorises the browser's requests to that
 * port until EXPIRY. Pure: the secret is the caller's. */
#ifndef VITRINE_GATEWAY_PORT_LINK_H
#define VITRINE_GATEWAY_PORT_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PORT_LINK_COOKIE "vitrine_port"
#define PORT_LINK_SECRET 32
/* The path a link opens (on the port's host, or under its path) */
#define PORT_LINK_PATH "/.vitrine-port-auth"
/* EXPIRY (decimal unix seconds) '.' 64 hex and a NUL */
#define PORT_LINK_VALUE_MAX 88

/* The value for session id's port until expiry (unix seconds) into out
 * (PORT_LINK_VALUE_MAX bytes). */
void port_link_sign(const uint8_t secret[PORT_LINK_SECRET], const char *id, int port,
		    int64_t expiry, char *out);
/* Whether value is one port_link_sign made for id's port with an expiry
 * after now (unix seconds). Compares in constant time. */
bool port_link_check(const uint8_t secret[PORT_LINK_SECRET], const char *id, int port, int64_t now,
		     const char *value);
/* The value of cookie PORT_LINK_COOKIE in a Cookie header into out
 * (len bytes): true when there is one that fits. */
bool port_link_cookie(const char *header, char *out, size_t len);
/* header without its PORT_LINK_COOKIE pairs into out (len bytes, NUL
 * terminated, cut at len): what goes on to the guest. Its length. */
size_t port_link_cookie_strip(const char *header, char *out, size_t len);

#endif
