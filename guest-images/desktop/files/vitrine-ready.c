/*
 * vitrine-ready: start-up probes for the desktop guest's session script.
 *
 *   vitrine-ready x SOCKET TIMEOUT
 *       exits 0 once the X server accepts a connection on the unix SOCKET.
 *   vitrine-ready page PORT TIMEOUT [URL]
 *       exits 0 once the page Chromium shows has loaded: GET /json/list on
 *       127.0.0.1:PORT, open the first page target's WebSocket and evaluate
 *       over the DevTools protocol, until document.readyState is "complete",
 *       the page is visible and has rendered two animation frames (and,
 *       unless URL is about:blank, it is no longer the initial about:blank).
 *   vitrine-ready insert PORT TEXT
 *       inserts TEXT (any Unicode, exactly) into the page's focused editable
 *       element, as typing would; exit 1 when nothing editable has the focus
 *   vitrine-ready eval PORT EXPR
 *       evaluates the JavaScript expression EXPR in the page Chromium shows
 *       (Runtime.evaluate, awaiting a promise, result by value) and prints
 *       the value as JSON on stdout (undefined prints null), exit 0; an
 *       exception or a DevTools error goes to stderr, exit 1. Tried once:
 *       the host runs it through the guest agent to read the page's state.
 *
 * x and page retry every 200 ms until TIMEOUT seconds have passed, then exit
 * 1. Static, no libraries: it runs before anything else in the guest is
 * known to work. Diagnostics go to stderr.
 */
#define _POSIX_C_SOURCE 200809L

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define BUF_MAX (4 * 1024 * 1024)
#define IO_TIMEOUT_S 5
#define RETRY_MS 200

static char last_error[256];

static void fail_reason(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail_reason(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(last_error, sizeof last_error, fmt, ap);
	va_end(ap);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
	}
}

static void set_timeouts(int fd)
{
	struct timeval tv = { IO_TIMEOUT_S, 0 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

static int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;
	while (len > 0) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fail_reason("send: %s", strerror(errno));
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* ---- X ---- */

static int probe_x(const char *path)
{
	struct sockaddr_un sa;
	int fd, rc;

	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof sa.sun_path) {
		fail_reason("socket path too long");
		return -1;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fail_reason("socket: %s", strerror(errno));
		return -1;
	}
	rc = connect(fd, (struct sockaddr *)&sa, sizeof sa);
	if (rc != 0)
		fail_reason("connect %s: %s", path, strerror(errno));
	close(fd);
	return rc == 0 ? 0 : -1;
}

/* ---- TCP + HTTP ---- */

static int tcp_connect(int port)
{
	struct sockaddr_in sa;
	int fd, one = 1;

	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fail_reason("socket: %s", strerror(errno));
		return -1;
	}
	set_timeouts(fd);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
		fail_reason("connect 127.0.0.1:%d: %s", port, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* A growable receive buffer. */
struct buf {
	char *data;
	size_t len, cap;
};

static int buf_read(int fd, struct buf *b)
{
	ssize_t n;

	if (b->cap - b->len < 4096) {
		size_t cap = b->cap ? b->cap * 2 : 16384;
		char *p;
		if (cap > BUF_MAX) {
			fail_reason("response too large");
			return -1;
		}
		p = realloc(b->data, cap + 1);
		if (!p) {
			fail_reason("out of memory");
			return -1;
		}
		b->data = p;
		b->cap = cap;
	}
	do
		n = recv(fd, b->data + b->len, b->cap - b->len, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		fail_reason("recv: %s", strerror(errno));
		return -1;
	}
	b->len += (size_t)n;
	b->data[b->len] = '\0';
	return (int)(n > 0);
}

/* Reads the HTTP response head into b; returns the offset of the body. */
static long read_head(int fd, struct buf *b)
{
	for (;;) {
		char *end;
		if (b->data && (end = strstr(b->data, "\r\n\r\n")) != NULL)
			return end + 4 - b->data;
		int r = buf_read(fd, b);
		if (r < 0)
			return -1;
		if (r == 0) {
			fail_reason("connection closed in the response head");
			return -1;
		}
	}
}

static int http_get(int port, const char *path, struct buf *body)
{
	char req[512];
	struct buf b = { 0 };
	long off;
	const char *cl;
	long want = -1;
	int fd, n, rc = -1;

	fd = tcp_connect(port);
	if (fd < 0)
		return -1;
	n = snprintf(req, sizeof req,
		     "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n", path,
		     port);
	if (n <= 0 || (size_t)n >= sizeof req || write_all(fd, req, (size_t)n) != 0)
		goto out;
	off = read_head(fd, &b);
	if (off < 0)
		goto out;
	if (strncmp(b.data, "HTTP/1.1 200", 12) != 0 && strncmp(b.data, "HTTP/1.0 200", 12) != 0) {
		fail_reason("GET %s: %.40s", path, b.data);
		goto out;
	}
	cl = strstr(b.data, "Content-Length:");
	if (!cl)
		cl = strstr(b.data, "content-length:");
	if (cl && cl < b.data + off)
		want = strtol(cl + 15, NULL, 10);
	while (want < 0 || (long)b.len - off < want) {
		int r = buf_read(fd, &b);
		if (r < 0)
			goto out;
		if (r == 0)
			break;
	}
	body->len = b.len - (size_t)off;
	body->data = malloc(body->len + 1);
	if (!body->data)
		goto out;
	memcpy(body->data, b.data + off, body->len);
	body->data[body->len] = '\0';
	rc = 0;
out:
	free(b.data);
	close(fd);
	return rc;
}

/* ---- just enough JSON ---- */

/* Skips a JSON string starting at the quote *p; returns past its end. */
static const char *skip_string(const char *p)
{
	for (p++; *p && *p != '"'; p++)
		if (*p == '\\' && p[1])
			p++;
	return *p ? p + 1 : p;
}

/* Copies the JSON string at the quote p (unescaped, \u as '?') into out. */
static void copy_string(const char *p, char *out, size_t cap)
{
	size_t n = 0;
	for (p++; *p && *p != '"'; p++) {
		char c = *p;
		if (c == '\\' && p[1]) {
			p++;
			switch (*p) {
			case 'n':
				c = '\n';
				break;
			case 't':
				c = '\t';
				break;
			case 'r':
				c = '\r';
				break;
			case 'b':
				c = '\b';
				break;
			case 'f':
				c = '\f';
				break;
			case 'u':
				c = '?';
				for (int i = 0; i < 4 && p[1]; i++)
					p++;
				break;
			default:
				c = *p;
				break;
			}
		}
		if (n + 1 < cap)
			out[n++] = c;
	}
	out[n] = '\0';
}

/*
 * In the object that starts at '{' obj, finds the string value of the
 * top-level member KEY and copies it to out. Returns 0 if found.
 */
static int object_string(const char *obj, const char *key, char *out, size_t cap)
{
	size_t klen = strlen(key);
	int depth = 0;
	const char *p = obj;

	for (; *p; p++) {
		if (*p == '"') {
			const char *s = p, *e = skip_string(p);
			if (depth == 1 && (size_t)(e - s) == klen + 2 &&
			    memcmp(s + 1, key, klen) == 0) {
				const char *v = e;
				while (*v == ' ' || *v == '\n' || *v == '\r' || *v == '\t')
					v++;
				if (*v == ':') {
					v++;
					while (*v == ' ' || *v == '\n' || *v == '\r' || *v == '\t')
						v++;
					if (*v == '"') {
						copy_string(v, out, cap);
						return 0;
					}
				}
			}
			p = e - 1;
		} else if (*p == '{' || *p == '[') {
			depth++;
		} else if (*p == '}' || *p == ']') {
			if (--depth == 0)
				break;
		}
	}
	return -1;
}

/* Finds the first "type":"page" object in the /json/list array. */
static int find_page_target(const char *json, char *ws_url, size_t cap)
{
	int depth = 0;
	char type[32];

	for (const char *p = json; *p; p++) {
		if (*p == '"') {
			p = skip_string(p) - 1;
		} else if (*p == '[' || *p == '{') {
			if (*p == '{' && depth == 1 &&
			    object_string(p, "type", type, sizeof type) == 0 &&
			    strcmp(type, "page") == 0 &&
			    object_string(p, "webSocketDebuggerUrl", ws_url, cap) == 0)
				return 0;
			depth++;
		} else if (*p == ']' || *p == '}') {
			depth--;
		}
	}
	fail_reason("no page target yet");
	return -1;
}

/* ---- WebSocket ---- */

static int ws_send_text(int fd, const char *msg)
{
	size_t len = strlen(msg), hlen = 0;
	unsigned char hdr[14];
	unsigned char mask[4];
	struct timespec ts;
	char *frame;
	int rc;

	clock_gettime(CLOCK_REALTIME, &ts);
	uint32_t m = (uint32_t)ts.tv_nsec ^ (uint32_t)getpid() * 2654435761u;
	for (int i = 0; i < 4; i++)
		mask[i] = (unsigned char)(m >> (8 * i));
	hdr[hlen++] = 0x81; /* FIN, text */
	if (len < 126) {
		hdr[hlen++] = (unsigned char)(0x80 | len);
	} else if (len < 65536) {
		hdr[hlen++] = 0x80 | 126;
		hdr[hlen++] = (unsigned char)(len >> 8);
		hdr[hlen++] = (unsigned char)len;
	} else if (len <= BUF_MAX) {
		hdr[hlen++] = 0x80 | 127;
		for (int i = 7; i >= 0; i--)
			hdr[hlen++] = (unsigned char)((uint64_t)len >> (8 * i));
	} else {
		fail_reason("message too long");
		return -1;
	}
	memcpy(hdr + hlen, mask, 4);
	hlen += 4;
	frame = malloc(hlen + len);
	if (!frame) {
		fail_reason("out of memory");
		return -1;
	}
	memcpy(frame, hdr, hlen);
	for (size_t i = 0; i < len; i++)
		frame[hlen + i] = (char)(msg[i] ^ mask[i % 4]);
	rc = write_all(fd, frame, hlen + len);
	free(frame);
	return rc;
}

/* Ensures b holds at least n bytes past off. */
static int want_bytes(int fd, struct buf *b, size_t off, size_t n)
{
	while (b->len < off + n) {
		int r = buf_read(fd, b);
		if (r < 0)
			return -1;
		if (r == 0) {
			fail_reason("websocket closed");
			return -1;
		}
	}
	return 0;
}

/*
 * Receives the next complete text message into msg (joining fragments,
 * skipping control frames). b holds bytes already read, from offset *off.
 */
static int ws_recv_text(int fd, struct buf *b, size_t *off, struct buf *msg)
{
	msg->len = 0;
	for (;;) {
		size_t o = *off, hl = 2;
		uint64_t plen;
		unsigned op, fin;

		if (want_bytes(fd, b, o, 2) != 0)
			return -1;
		fin = (unsigned char)b->data[o] & 0x80;
		op = (unsigned char)b->data[o] & 0x0f;
		plen = (unsigned char)b->data[o + 1] & 0x7f;
		if (plen == 126) {
			if (want_bytes(fd, b, o, 4) != 0)
				return -1;
			plen = ((uint64_t)(unsigned char)b->data[o + 2] << 8) |
			       (unsigned char)b->data[o + 3];
			hl = 4;
		} else if (plen == 127) {
			if (want_bytes(fd, b, o, 10) != 0)
				return -1;
			plen = 0;
			for (int i = 0; i < 8; i++)
				plen = plen << 8 | (unsigned char)b->data[o + 2 + (size_t)i];
			hl = 10;
		}
		if ((unsigned char)b->data[o + 1] & 0x80) {
			fail_reason("masked frame from server");
			return -1;
		}
		if (plen > BUF_MAX / 2) {
			fail_reason("frame too large");
			return -1;
		}
		if (want_bytes(fd, b, o, hl + (size_t)plen) != 0)
			return -1;
		*off = o + hl + (size_t)plen;
		if (op == 0x8) {
			fail_reason("websocket closed by peer");
			return -1;
		}
		if (op == 0x9 || op == 0xa) /* ping, pong: ignored */
			continue;
		if (msg->len + plen + 1 > msg->cap) {
			char *p = realloc(msg->data, msg->len + (size_t)plen + 1);
			if (!p) {
				fail_reason("out of memory");
				return -1;
			}
			msg->data = p;
			msg->cap = msg->len + (size_t)plen + 1;
		}
		memcpy(msg->data + msg->len, b->data + o + hl, (size_t)plen);
		msg->len += (size_t)plen;
		msg->data[msg->len] = '\0';
		if (fin)
			return 0;
	}
}

/*
 * Opens a DevTools WebSocket to the first page target. Returns the socket,
 * with bytes already read past the handshake in b from *off, or -1.
 */
static int open_page_ws(int port, struct buf *b, size_t *off)
{
	struct buf list = { 0 };
	char ws_url[512], req[1024];
	const char *path;
	long hoff;
	int fd = -1, n;

	if (http_get(port, "/json/list", &list) != 0)
		return -1;
	if (find_page_target(list.data, ws_url, sizeof ws_url) != 0)
		goto fail;
	if (strncmp(ws_url, "ws://", 5) != 0 || (path = strchr(ws_url + 5, '/')) == NULL) {
		fail_reason("odd webSocketDebuggerUrl %.100s", ws_url);
		goto fail;
	}
	fd = tcp_connect(port);
	if (fd < 0)
		goto fail;
	n = snprintf(req, sizeof req,
		     "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\n"
		     "Connection: Upgrade\r\nSec-WebSocket-Key: dml0cmluZS1yZWFkeS1rZXk=\r\n"
		     "Sec-WebSocket-Version: 13\r\n\r\n",
		     path, port);
	if (n <= 0 || (size_t)n >= sizeof req || write_all(fd, req, (size_t)n) != 0)
		goto fail;
	hoff = read_head(fd, b);
	if (hoff < 0)
		goto fail;
	if (strncmp(b->data, "HTTP/1.1 101", 12) != 0) {
		fail_reason("websocket upgrade: %.60s", b->data);
		goto fail;
	}
	*off = (size_t)hoff;
	free(list.data);
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	free(list.data);
	return -1;
}

/* Evaluates the readiness expression on the page; 0 = ready. */
static int probe_page(int port, const char *want_url)
{
	struct buf b = { 0 }, msg = { 0 };
	char value[1024];
	const char *res, *href;
	size_t off = 0;
	int fd, rc = -1;

	fd = open_page_ws(port, &b, &off);
	if (fd < 0)
		goto out;
	/*
	 * Two animation frames: they run only once the page is visible and
	 * rendering, so "ready" means painted, not just loaded (a page that
	 * does not render answers "norender" after 3 s and is tried again).
	 */
	if (ws_send_text(fd,
			 "{\"id\":1,\"method\":\"Runtime.evaluate\",\"params\":{"
			 "\"expression\":\"new Promise(r=>{let d=0;const f=v=>{if(!d){d=1;r(v)}};"
			 "setTimeout(()=>f('norender|'+document.visibilityState+'|'),3000);"
			 "requestAnimationFrame(()=>requestAnimationFrame(()=>f(document.readyState"
			 "+'|'+document.visibilityState+'|'+location.href)))})\","
			 "\"awaitPromise\":true,\"returnByValue\":true}}") != 0)
		goto out;
	for (int i = 0; i < 50; i++) {
		if (ws_recv_text(fd, &b, &off, &msg) != 0)
			goto out;
		if (strstr(msg.data, "\"id\":1") == NULL)
			continue; /* an event */
		res = strstr(msg.data, "\"value\":\"");
		if (!res) {
			fail_reason("evaluate: %.100s", msg.data);
			goto out;
		}
		copy_string(res + 8, value, sizeof value);
		if (strncmp(value, "complete|visible|", 17) != 0) {
			fail_reason("page state %.60s", value);
			goto out;
		}
		href = value + 17;
		if (strcmp(want_url, "about:blank") != 0 &&
		    (strcmp(href, "about:blank") == 0 || href[0] == '\0')) {
			fail_reason("still on about:blank");
			goto out;
		}
		/*
		 * The renderer has drawn; the browser process puts its frames on
		 * the X screen a little later. A screenshot is a copy request
		 * that the display compositor serves only when it draws, so its
		 * answer means the page went to the screen. (No clip: a clipped
		 * capture emulates a viewport and disturbs the page.)
		 */
		if (ws_send_text(fd,
				 "{\"id\":2,\"method\":\"Page.captureScreenshot\",\"params\":{"
				 "\"format\":\"jpeg\",\"quality\":1,\"optimizeForSpeed\":true}}") !=
		    0)
			goto out;
		for (int j = 0; j < 50; j++) {
			if (ws_recv_text(fd, &b, &off, &msg) != 0)
				goto out;
			if (strstr(msg.data, "\"id\":2") == NULL)
				continue;
			if (strstr(msg.data, "\"error\"")) {
				fail_reason("captureScreenshot: %.100s", msg.data);
				goto out;
			}
			fprintf(stderr, "vitrine-ready: loaded and painted %s\n", href);
			rc = 0;
			goto out;
		}
		fail_reason("no answer to Page.captureScreenshot");
		goto out;
	}
	fail_reason("no answer to Runtime.evaluate");
out:
	if (fd >= 0)
		close(fd);
	free(b.data);
	free(msg.data);
	return rc;
}

/* ---- eval ---- */

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')
		p++;
	return p;
}

/* Returns the end of the JSON value at p (well-formed input assumed: it
 * comes from Chromium), or NULL at the end of the text. */
static const char *skip_value(const char *p)
{
	int depth = 0;

	p = skip_ws(p);
	do {
		if (!*p)
			return NULL;
		if (*p == '"') {
			p = skip_string(p);
			continue;
		}
		if (*p == '{' || *p == '[') {
			depth++;
		} else if (*p == '}' || *p == ']') {
			depth--;
		} else if (depth == 0) {
			/* A number or a literal. */
			while (*p && !strchr(",}] \n\r\t", *p))
				p++;
			return p;
		}
		p++;
	} while (depth > 0);
	return p;
}

/* The value of the top-level member KEY of the object at obj, or NULL. */
static const char *member(const char *obj, const char *key)
{
	size_t klen = strlen(key);
	const char *p = skip_ws(obj);

	if (*p != '{')
		return NULL;
	p = skip_ws(p + 1);
	while (*p == '"') {
		const char *k = p, *v;

		p = skip_ws(skip_string(p));
		if (*p != ':')
			return NULL;
		v = skip_ws(p + 1);
		if ((size_t)(p - k) >= klen + 2 && memcmp(k + 1, key, klen) == 0 &&
		    k[klen + 1] == '"')
			return v;
		p = skip_value(v);
		if (!p)
			return NULL;
		p = skip_ws(p);
		if (*p != ',')
			return NULL;
		p = skip_ws(p + 1);
	}
	return NULL;
}

/* Appends s to out as the body of a JSON string (no quotes). */
static int json_escape(const char *s, char *out, size_t cap)
{
	size_t n = 0;

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		char tmp[8];
		size_t k;

		if (c == '"' || c == '\\') {
			tmp[0] = '\\';
			tmp[1] = (char)c;
			k = 2;
		} else if (c < 0x20) {
			k = (size_t)snprintf(tmp, sizeof tmp, "\\u%04x", c);
		} else {
			tmp[0] = (char)c;
			k = 1;
		}
		if (n + k >= cap)
			return -1;
		memcpy(out + n, tmp, k);
		n += k;
	}
	out[n] = '\0';
	return 0;
}

/* Prints the JSON text of the value at v (up to its end) and a newline. */
static void print_value(const char *v)
{
	const char *e = skip_value(v);

	if (!e)
		e = v + strlen(v);
	fwrite(v, 1, (size_t)(e - v), stdout);
	fputc('\n', stdout);
}

/* vitrine-ready eval: 0 with the value on stdout, 1 with a reason. */
static int eval_page(int port, const char *expr)
{
	static const char head[] = "{\"id\":1,\"method\":\"Runtime.evaluate\",\"params\":{"
				   "\"awaitPromise\":true,\"returnByValue\":true,\"expression\":\"";
	struct buf b = { 0 }, msg = { 0 };
	size_t off = 0, cap = sizeof head + strlen(expr) * 6 + 8;
	char *req = malloc(cap);
	const char *result, *value, *exc, *e;
	int fd = -1, rc = 1;

	if (!req) {
		fail_reason("out of memory");
		goto out;
	}
	memcpy(req, head, sizeof head - 1);
	if (json_escape(expr, req + sizeof head - 1, cap - sizeof head - 3) != 0) {
		fail_reason("expression too long");
		goto out;
	}
	strcat(req, "\"}}");
	fd = open_page_ws(port, &b, &off);
	if (fd < 0 || ws_send_text(fd, req) != 0)
		goto out;
	for (int i = 0; i < 1000; i++) {
		if (ws_recv_text(fd, &b, &off, &msg) != 0)
			goto out;
		e = member(msg.data, "id");
		if (!e || strncmp(e, "1", 1) != 0 || (e[1] >= '0' && e[1] <= '9'))
			continue; /* an event */
		if ((e = member(msg.data, "error")) != NULL) {
			const char *m = member(e, "message");
			char text[512];

			copy_string(m && *m == '"' ? m : "\"unknown\"", text, sizeof text);
			fail_reason("DevTools error: %s", text);
			goto out;
		}
		result = member(msg.data, "result");
		if (!result) {
			fail_reason("no result in %.100s", msg.data);
			goto out;
		}
		if ((exc = member(result, "exceptionDetails")) != NULL) {
			const char *x = member(exc, "exception"),
				   *d = x ? member(x, "description") : NULL;
			char text[sizeof last_error];

			if (!d || *d != '"')
				d = member(exc, "text");
			copy_string(d && *d == '"' ? d : "\"exception\"", text, sizeof text);
			fail_reason("%s", text);
			goto out;
		}
		value = member(result, "result");
		value = value ? member(value, "value") : NULL;
		if (value)
			print_value(value);
		else
			puts("null"); /* undefined, or not serialisable */
		rc = fflush(stdout) == 0 ? 0 : 1;
		if (rc != 0)
			fail_reason("stdout: %s", strerror(errno));
		goto out;
	}
	fail_reason("no answer to Runtime.evaluate");
out:
	if (fd >= 0)
		close(fd);
	free(req);
	free(b.data);
	free(msg.data);
	if (rc != 0)
		fprintf(stderr, "vitrine-ready eval: %s\n", last_error);
	return rc;
}

/* vitrine-ready insert: puts text into the focused editable element as if
 * typed (input events fire), any Unicode exactly. X keyboard emulation
 * (xdotool) cannot: it rebinds one spare keycode per character and Chromium
 * reads the keymap late, dropping or repeating characters. */
static int insert_text(int port, const char *text)
{
	static const char head[] = "(() => { const a = document.activeElement;"
				   " if (!a || !(a.isContentEditable || ((a.tagName === 'INPUT' ||"
				   " a.tagName === 'TEXTAREA') && !a.readOnly && !a.disabled)))"
				   " throw new Error('no editable element has the focus');"
				   " if (!document.execCommand('insertText', false, \"";
	static const char tail[] =
		"\")) throw new Error('no editable element has the focus'); return true; })()";
	size_t cap = sizeof head + strlen(text) * 6 + sizeof tail;
	char *expr = malloc(cap);
	int rc;

	if (!expr) {
		fprintf(stderr, "vitrine-ready insert: out of memory\n");
		return 1;
	}
	memcpy(expr, head, sizeof head);
	if (json_escape(text, expr + sizeof head - 1, cap - sizeof head - sizeof tail) != 0) {
		fprintf(stderr, "vitrine-ready insert: text too long\n");
		free(expr);
		return 1;
	}
	strcat(expr, tail);
	rc = eval_page(port, expr);
	free(expr);
	return rc;
}

static int usage(void)
{
	fprintf(stderr, "usage: vitrine-ready x SOCKET TIMEOUT\n"
			"       vitrine-ready page PORT TIMEOUT [URL]\n"
			"       vitrine-ready eval PORT EXPR\n"
			"       vitrine-ready insert PORT TEXT\n");
	return 2;
}

int main(int argc, char **argv)
{
	double deadline;
	int is_x, port = 0, tries = 0;
	const char *want = "about:blank";

	if (argc < 4)
		return usage();
	if (strcmp(argv[1], "eval") == 0 || strcmp(argv[1], "insert") == 0) {
		port = atoi(argv[2]);
		if (argc != 4 || port <= 0 || port > 65535)
			return usage();
		return argv[1][0] == 'e' ? eval_page(port, argv[3]) : insert_text(port, argv[3]);
	}
	is_x = strcmp(argv[1], "x") == 0;
	if (!is_x && strcmp(argv[1], "page") != 0)
		return usage();
	if (!is_x) {
		port = atoi(argv[2]);
		if (port <= 0 || port > 65535)
			return usage();
		if (argc > 4)
			want = argv[4];
	}
	deadline = now_s() + atof(argv[3]);
	for (;;) {
		tries++;
		if ((is_x ? probe_x(argv[2]) : probe_page(port, want)) == 0)
			return 0;
		if (now_s() >= deadline)
			break;
		sleep_ms(RETRY_MS);
	}
	fprintf(stderr, "vitrine-ready %s: gave up after %d tries: %s\n", argv[1], tries,
		last_error);
	return 1;
}
