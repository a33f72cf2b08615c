/* gateway/ports/port_parse.h: the pure parts of a guest's ports through
 * the gateway (docs/api.md, "Ports"): which port and session a host name
 * {port}-{id}.{domain} names, a port number, the request line's target
 * for the guest, and the head of the guest server's answer. No I/O: unit
 * tested and fuzzed (tests/fuzz/fuzz_ports.c), since the host name and
 * path are any client's and the answer's head is the guest's. */
#ifndef VITRINE_GATEWAY_PORT_PARSE_H
#define VITRINE_GATEWAY_PORT_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The longest head of a guest server's answer (status line and headers). */
#define PORT_HEAD_MAX (16 * 1024)
/* The most headers in that head. */
#define PORT_HEADERS_MAX 64

/* A port number from its decimal text (no sign, no leading zero, no
 * other character): 1..65535, or -1. */
int port_number_parse(const char *s);

/* Whether host (a Host header: NAME or NAME:PORT) is {port}-{id}.{domain}
 * with domain matched whole and without regard to case: 0 with *port
 * (1..65535) and id (lower case [a-z0-9], 1..idlen-1 characters); -ERANGE
 * when the name has that shape but its port is outside 1..65535; -EINVAL
 * otherwise (another name, an empty domain). */
int port_host_parse(const char *host, const char *domain, int *port, char *id, size_t idlen);

/* The request target for the guest: path (as lws decoded it, starting
 * with '/'; "" is "/") with each query argument args[0..nargs) (decoded
 * "name=value" pieces) after a '?', joined by '&', percent-encoded so that
 * the guest reads back the same path and arguments. Returns the length
 * written into out (NUL-terminated), or -1 when it does not fit cap or
 * path does not start with '/'. */
long port_target(char *out, size_t cap, const char *path, const char *const *args, size_t nargs);

struct port_header {
	const char *name, *value; /* into the parsed buffer, not NUL-terminated */
	size_t name_len, value_len;
};

/* A guest server's answer head. */
struct port_head {
	int status; /* 100..999 */
	int minor; /* HTTP/1.minor */
	size_t n;
	struct port_header h[PORT_HEADERS_MAX];
	int64_t content_length; /* -1: none given */
	bool chunked; /* Transfer-Encoding ends in chunked */
	bool conn_close; /* Connection: close */
};

/* Parses the head at buf[len]: its length in bytes (through the empty
 * line) with *out filled (pointing into buf); 0 when more bytes are
 * needed (and len < PORT_HEAD_MAX); -1 when it is malformed, has more
 * than PORT_HEADERS_MAX headers, conflicting lengths, or is not complete
 * within PORT_HEAD_MAX bytes. Lines end in CRLF or LF. */
long port_head_parse(const char *buf, size_t len, struct port_head *out);

/* Whether a header of the guest's answer is one the gateway drops
 * (hop by hop: Connection, Keep-Alive, Proxy-*, Upgrade, TE; the body
 * goes on in its own framing, so Transfer-Encoding stays)
 * rather than passes on. */
bool port_header_hop(const char *name, size_t len);

#endif
