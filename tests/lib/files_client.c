/* tests/lib/files_client.c: see files_client.h. */
#include "tests/lib/files_client.h"

#include "common/sha256.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define PIECE (256 * 1024)

static int dial(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		perror("files_client: connect");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static int send_all(int fd, const void *p, size_t n)
{
	const char *b = p;

	while (n) {
		ssize_t w = send(fd, b, n, MSG_NOSIGNAL);

		if (w <= 0)
			return -1;
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Reads the answer's head (up to its blank line) into head[cap]; the body
 * bytes read past it stay at head + *used. Returns the status, or -1. */
static int read_head(int fd, char *head, size_t cap, size_t *hlen, size_t *used)
{
	size_t n = 0;
	char *end;

	while (n + 1 < cap) {
		ssize_t r = recv(fd, head + n, cap - 1 - n, 0);

		if (r <= 0)
			return -1;
		n += (size_t)r;
		head[n] = '\0';
		if ((end = strstr(head, "\r\n\r\n"))) {
			*hlen = (size_t)(end + 4 - head);
			*used = n;
			return atoi(head + 9);
		}
	}
	return -1;
}

/* The stream seed picks: xorshift64. */
static void fill(uint64_t *state, unsigned char *buf, size_t n)
{
	for (size_t i = 0; i < n; i += 8) {
		uint64_t x = *state;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		*state = x;
		memcpy(buf + i, &x, n - i < 8 ? n - i : 8);
	}
}

int files_put(int port, const char *token, const char *id, const char *path, uint64_t size,
	      uint64_t seed, int chunked, char hex[65])
{
	unsigned char *buf = malloc(PIECE);
	char head[1024], ans[4096];
	struct sha256_ctx c;
	uint64_t st = seed | 1, left = size;
	size_t hl, used;
	int fd = dial(port), status = -1;

	if (fd < 0 || !buf)
		goto out;
	if (chunked)
		snprintf(head, sizeof(head),
			 "PUT /v1/sessions/%s/files?path=%s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
			 "Authorization: Bearer %s\r\nTransfer-Encoding: chunked\r\n\r\n",
			 id, path, token);
	else
		snprintf(head, sizeof(head),
			 "PUT /v1/sessions/%s/files?path=%s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
			 "Authorization: Bearer %s\r\nContent-Length: %llu\r\n\r\n",
			 id, path, token, (unsigned long long)size);
	if (send_all(fd, head, strlen(head)) < 0)
		goto broke;
	sha256_init(&c);
	while (left) {
		size_t n = left < PIECE ? (size_t)left : PIECE;
		char cl[24];

		fill(&st, buf, n);
		sha256_update(&c, buf, n);
		snprintf(cl, sizeof(cl), "%zx\r\n", n);
		if ((chunked && send_all(fd, cl, strlen(cl)) < 0) || send_all(fd, buf, n) < 0 ||
		    (chunked && send_all(fd, "\r\n", 2) < 0))
			goto broke; /* refused midway: the answer says why */
		left -= n;
	}
	if (chunked && send_all(fd, "0\r\n\r\n", 5) < 0)
		goto broke;
	{
		uint8_t d[SHA256_LEN];

		sha256_final(&c, d);
		sha256_hex_of(d, hex);
	}
broke:
	status = read_head(fd, ans, sizeof(ans), &hl, &used);
	if (status != 200)
		fprintf(stderr, "files_put %s: %.300s\n", path, ans);
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return status;
}

int files_put_head_only(int port, const char *token, const char *id, const char *path,
			uint64_t size)
{
	char head[1024], ans[4096];
	size_t hl, used;
	int fd = dial(port), status = -1;

	if (fd < 0)
		return -1;
	snprintf(head, sizeof(head),
		 "PUT /v1/sessions/%s/files?path=%s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
		 "Authorization: Bearer %s\r\nContent-Length: %llu\r\n\r\n",
		 id, path, token, (unsigned long long)size);
	if (send_all(fd, head, strlen(head)) == 0)
		status = read_head(fd, ans, sizeof(ans), &hl, &used);
	close(fd);
	return status;
}

int files_get(int port, const char *token, const char *id, const char *path, uint64_t *len,
	      char hex[65])
{
	char *buf = malloc(PIECE), head[1024];
	struct sha256_ctx c;
	uint8_t d[SHA256_LEN];
	size_t hl, used;
	ssize_t r;
	int fd = dial(port), status = -1;

	*len = 0;
	if (fd < 0 || !buf)
		goto out;
	snprintf(head, sizeof(head),
		 "GET /v1/sessions/%s/files?path=%s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
		 "Authorization: Bearer %s\r\nConnection: close\r\n\r\n",
		 id, path, token);
	if (send_all(fd, head, strlen(head)) < 0 ||
	    (status = read_head(fd, buf, PIECE, &hl, &used)) < 0)
		goto out;
	sha256_init(&c);
	sha256_update(&c, buf + hl, used - hl);
	*len = used - hl;
	while ((r = recv(fd, buf, PIECE, 0)) > 0) {
		sha256_update(&c, buf, (size_t)r);
		*len += (uint64_t)r;
	}
	sha256_final(&c, d);
	sha256_hex_of(d, hex);
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return status;
}

long files_vmhwm_kib(int pid)
{
	char p[64], line[256];
	long kib = -1;
	FILE *f;

	snprintf(p, sizeof(p), "/proc/%d/status", pid);
	if (!(f = fopen(p, "r")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmHWM:", 6))
			kib = strtol(line + 6, NULL, 10);
	fclose(f);
	return kib;
}
