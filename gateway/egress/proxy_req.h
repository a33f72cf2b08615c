/* gateway/egress/proxy_req.h: the head of a request to the gateway's HTTP proxy,
 * the guest's only way out: CONNECT host:port for any TCP (TLS included),
 * or a plain-http request in absolute form ("GET http://host/path
 * HTTP/1.1"), rewritten here to origin form for the origin server. Parsed
 * as bytes arrive, without I/O, so that it is unit-tested and fuzzed; what
 * the host may be is egress_rules.h's business.
 *
 * Strict by design: lines end in CRLF (a bare LF or CR is refused), no NUL,
 * no folded header lines, no userinfo in the URI, https only by CONNECT. */
#ifndef VITRINE_GATEWAY_PROXY_REQ_H
#define VITRINE_GATEWAY_PROXY_REQ_H

#include <stdbool.h>
#include <stddef.h>

#define PROXY_REQ_MAX_HEAD 16384 /* bytes of a head, blank line included */

struct proxy_req {
	bool connect; /* CONNECT (a tunnel) rather than a plain-http request */
	char host[256]; /* as sent, without an IPv6 literal's brackets */
	int port; /* 1..65535; 80 when an http URI names none */
	size_t head_len; /* bytes of the head, blank line included */
	char method[16];
	/* owned (malloc'd), NULL for CONNECT: the head to send the origin
	 * server: "METHOD /path?query VERSION", "Host:" from the URI, the
	 * client's header lines but Host, Connection, Proxy-Connection and
	 * Proxy-Authorization, then "Connection: close" and the blank line;
	 * also NUL-terminated */
	char *forward;
	size_t forward_len;
};

/* Parses the head at the start of buf[0..len). Returns 0 with *out filled
 * (bytes from out->head_len on are the stream's: a request body, TLS bytes
 * sent early), -EAGAIN when the head is not complete yet, -EMSGSIZE when it
 * is longer than PROXY_REQ_MAX_HEAD, -EINVAL when it is malformed (which
 * may be known before it is complete), -ENOMEM. out->forward is NULL
 * unless 0 is returned; proxy_req_free(out) is safe whatever the result. */
int proxy_req_parse(const char *buf, size_t len, struct proxy_req *out);

/* Frees what r owns (forward). Accepts a zeroed or freed r. */
void proxy_req_free(struct proxy_req *r);

/* The whole response head (and short text body) the proxy answers with:
 * 200 (tunnel established), 400 (bad request), 403 (egress denied), 502
 * (cannot connect), 504 (timeout); the errors close the connection. NULL
 * for any other status. */
const char *proxy_reply(int status);

#endif
