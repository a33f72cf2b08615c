/* tests/lib/net.c: see net.h. */
#include "tests/lib/net.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

int net_free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = -1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &len) == 0)
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

int net_send_request(int port, const char *token, const char *method, const char *path,
		     const char *body)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	char head[1024];
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), n;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	n = snprintf(head, sizeof(head),
		     "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n"
		     "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
		     method, path, token, body ? strlen(body) : 0, body ? body : "");
	if (fd < 0 || n < 0 || (size_t)n >= sizeof(head) ||
	    connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || write(fd, head, (size_t)n) != n) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

int net_get_host(int port, const char *host, const char *path, const char *token, char **body)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct timeval tv = { .tv_sec = 120 };
	char req[1024], *buf = NULL, *p;
	size_t len = 0, cap = 0;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), status = -1, n;
	ssize_t got;

	*body = NULL;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	n = snprintf(req, sizeof(req),
		     "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n%s%s%s\r\n", path, host,
		     token ? "Authorization: Bearer " : "", token ? token : "",
		     token ? "\r\n" : "");
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || n < 0 ||
	    (size_t)n >= sizeof(req) || write(fd, req, (size_t)n) != n)
		goto out;
	for (;;) {
		if (len + 4096 + 1 > cap) {
			char *more = realloc(buf, cap = cap ? cap * 2 : 65536);

			if (!more)
				goto out;
			buf = more;
		}
		if ((got = read(fd, buf + len, 4096)) <= 0)
			break;
		len += (size_t)got;
	}
	if (!buf)
		goto out;
	buf[len] = '\0';
	if (sscanf(buf, "HTTP/%*d.%*d %d", &status) != 1)
		status = -1;
	p = strstr(buf, "\r\n\r\n");
	*body = strdup(p ? p + 4 : "");
out:
	free(buf);
	close(fd);
	return status;
}
