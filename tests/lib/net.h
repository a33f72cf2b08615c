/* tests/lib/net.h: small socket helpers the integration tests share. */
#ifndef VITRINE_TESTS_NET_H
#define VITRINE_TESTS_NET_H

/* A TCP port free on 127.0.0.1 now (the kernel's pick, let go again: a
 * server the test starts next binds it), or -1. */
int net_free_port(void);

#endif
