/* tests/lib/net.h: small socket helpers the integration tests share. */
#ifndef VITRINE_TESTS_NET_H
#define VITRINE_TESTS_NET_H

/* A TCP port free on 127.0.0.1 now (the kernel's pick, let go again: a
 * server the test starts next binds it), or -1. */
int net_free_port(void);
/* Sends one HTTP/1.1 request (Bearer token, JSON body or none) to the
 * gateway on 127.0.0.1:port and does not wait for its answer: returns the
 * connection (close it when done with it; closed at once, the gateway
 * carries on with a request whose client left), or -1. */
int net_send_request(int port, const char *token, const char *method, const char *path,
		     const char *body);
/* GET path from the gateway on 127.0.0.1:port with Host host (and Bearer
 * token unless NULL), on a connection of its own, waiting at most 120 s:
 * the status (-1: no HTTP answer), the body (malloc'd) in *body. */
int net_get_host(int port, const char *host, const char *path, const char *token, char **body);

#endif
