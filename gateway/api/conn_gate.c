/* gateway/api/conn_gate.c: see conn_gate.h. A flat table of the counted
 * connections and their addresses, searched linearly: a few hundred
 * entries, touched once per connect and close. A connection is counted
 * from its filter (which knows the address) to its end (which knows only
 * the connection). */
#include "gateway/api/conn_gate.h"

#include "common/log.h"

#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

struct entry {
	struct lws *wsi;
	struct sockaddr_storage peer; /* the address only: ports zeroed */
};

static struct entry *table; /* owned, max_total slots */
static int max_total = CONN_GATE_DEFAULT_MAX, max_per_ip = CONN_GATE_DEFAULT_PER_IP, used;
static long refused;
/* The address of the socket just admitted: lws creates its connection
 * right after the filter, on the same thread, before the connection knows
 * its descriptor. */
static struct sockaddr_storage admitted;
static bool have_admitted;

void conn_gate_init(int total, int per_ip)
{
	free(table);
	max_total = total > 0 ? total : CONN_GATE_DEFAULT_MAX;
	max_per_ip = per_ip > 0 ? per_ip : CONN_GATE_DEFAULT_PER_IP;
	table = calloc((size_t)max_total, sizeof(*table));
	used = 0;
	refused = 0;
}

/* The peer's address of fd with the port cleared; false without one. */
static bool peer_of(int fd, struct sockaddr_storage *out)
{
	socklen_t len = sizeof(*out);

	memset(out, 0, sizeof(*out));
	if (fd < 0 || getpeername(fd, (struct sockaddr *)out, &len) < 0)
		return false;
	if (out->ss_family == AF_INET)
		((struct sockaddr_in *)out)->sin_port = 0;
	else if (out->ss_family == AF_INET6) {
		((struct sockaddr_in6 *)out)->sin6_port = 0;
		((struct sockaddr_in6 *)out)->sin6_flowinfo = 0;
	} else
		return false;
	return true;
}

static bool same(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
		       &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr));
}

bool conn_gate_admit(int fd)
{
	struct sockaddr_storage peer;
	int from_peer = 0;

	if (!table)
		conn_gate_init(0, 0);
	if (!table || !peer_of(fd, &peer))
		return true; /* nothing to count it by */
	for (int i = 0; i < used; i++)
		from_peer += same(&table[i].peer, &peer);
	if (used < max_total && from_peer < max_per_ip) {
		admitted = peer;
		have_admitted = true;
		return true;
	}
	if (refused++ % 1000 == 0)
		log_warn("serve",
			 "refusing connections: %d open (at most %d), %d from one address "
			 "(at most %d); %ld refused so far",
			 used, max_total, from_peer, max_per_ip, refused);
	return false;
}

void conn_gate_opened(struct lws *wsi)
{
	if (!have_admitted)
		return; /* not an accepted client (the listener, lws's own) */
	have_admitted = false;
	if (!table || used >= max_total)
		return;
	table[used].wsi = wsi;
	table[used++].peer = admitted;
}

void conn_gate_closed(struct lws *wsi)
{
	for (int i = 0; i < used; i++)
		if (table[i].wsi == wsi) {
			table[i] = table[--used];
			return;
		}
}

int conn_gate_count(void)
{
	return used;
}

long conn_gate_refused(void)
{
	return refused;
}
