/* tests/fuzz/fuzz_e2b.c: libFuzzer target for what E2B's SDKs send
 * (gateway/e2b/, common/chunked.c): Connect envelopes, chunked request
 * bodies, the control plane's create body, Process.Start and the calls on
 * a process, the Host of a TLS proxy, the list's metadata filter, the
 * routes and the Basic user. The first byte picks
 * the parser (and a split point or call), the rest is the input. Checked
 * besides "no crash" and no leak:
 *   - an envelope taken is inside the input, its header re-encodes to the
 *     same bytes, its message at most the limit;
 *   - a chunked body decodes to the same bytes however it is split, and
 *     never to more bytes than came;
 *   - an accepted create has a timeout in 1..86400 and string maps;
 *   - an accepted Start's exec body is one exec_parse takes;
 *   - an accepted call on a process selects a pid > 0 or a tag, a signal
 *     9 or 15;
 *   - a Host's sandbox id is [a-z0-9], found right after "PORT-";
 *   - the live view's Origin check takes that session's own host alone;
 *   - a route's id is [A-Za-z0-9_-];
 *   - a filesystem call's paths are absolute; a guest's stat line makes
 *     an entry whose path is the line's, its name the path's last part;
 *   - a watch request's path is absolute, its watcher id non-empty; the
 *     guest watcher's output splits into the same lines however it is
 *     cut, none longer than the limit or holding a newline; an event's
 *     name is UTF-8 and no longer than its line, and written back escaped
 *     gives the line (when the line was UTF-8); its JSON names it. */
#include "common/bytebuf.h"
#include "common/chunked.h"
#include "common/utf8.h"
#include "gateway/e2b/connect.h"
#include "gateway/e2b/e2b_fs.h"
#include "gateway/e2b/e2b_req.h"
#include "gateway/e2b/e2b_route.h"
#include "gateway/e2b/e2b_watch.h"
#include "gateway/guest/exec.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void envelopes(const uint8_t *b, size_t n)
{
	size_t off = 0;
	const uint8_t *msg;
	uint8_t flags, h[CONNECT_HEADER];
	size_t len;
	int used;

	while ((used = connect_frame_parse(b + off, n - off, 4096, &flags, &msg, &len)) > 0) {
		if ((size_t)used > n - off || len > 4096 || msg != b + off + CONNECT_HEADER ||
		    (size_t)used != len + CONNECT_HEADER)
			__builtin_trap();
		connect_frame_header(h, flags, (uint32_t)len);
		if (memcmp(h, b + off, CONNECT_HEADER))
			__builtin_trap();
		off += (size_t)used;
	}
}

static void chunks(uint8_t pick, const uint8_t *b, size_t n)
{
	struct chunked one = { 0 }, two = { 0 };
	unsigned char *a = malloc(n + 1), *c = malloc(n + 1);
	size_t split = n ? pick % (n + 1) : 0;
	long la, lc1, lc2 = 0;

	if (!a || !c)
		goto out;
	la = chunked_decode(&one, b, n, a);
	lc1 = chunked_decode(&two, b, split, c);
	if (lc1 >= 0)
		lc2 = chunked_decode(&two, b + split, n - split, c + lc1);
	if (la >= 0) {
		if (lc1 < 0 || lc2 < 0 || la != lc1 + lc2 || (size_t)la > n ||
		    memcmp(a, c, (size_t)la) || chunked_done(&one) != chunked_done(&two))
			__builtin_trap();
	} else if (lc1 >= 0 && lc2 >= 0) {
		__builtin_trap();
	}
out:
	free(a);
	free(c);
}

static void create(const char *b, size_t n)
{
	struct e2b_create c;
	char err[160];

	if (e2b_create_parse(b, n, &c, err, sizeof(err)) < 0)
		return;
	if (c.timeout_s < 1 || c.timeout_s > E2B_MAX_TIMEOUT_S || !json_is_object(c.metadata) ||
	    !json_is_object(c.env_vars) || strlen(c.template_id) >= sizeof(c.template_id))
		__builtin_trap();
	e2b_create_free(&c);
}

static void start(uint8_t pick, const char *b, size_t n)
{
	json_t *env = json_pack("{s:s}", "SANDBOX", "1"), *config, *body;
	char err[160], tag[E2B_TAG_MAX], *text;
	struct api_error e;
	struct e2b_pty_size pty;
	struct exec_job *j;
	bool keep;

	body = e2b_start_parse(b, n, (pick & 8) ? env : NULL, pick & 16, &config, tag, sizeof(tag),
			       &keep, &pty, err, sizeof(err));
	json_decref(env);
	if (!body) {
		if (config || tag[0] || pty.cols)
			__builtin_trap();
		return;
	}
	if ((pty.cols && (!keep || pty.cols > 65535 || !pty.rows || pty.rows > 65535)) ||
	    (!pty.cols && pty.rows))
		__builtin_trap();
	text = json_dumps(body, JSON_COMPACT);
	j = text ? exec_parse(text, strlen(text), &e) : NULL;
	if (text && !j && e.status != 500)
		__builtin_trap();
	if (j && exec_as_root(j) != !!(pick & 16))
		__builtin_trap();
	exec_free(j);
	free(text);
	json_decref(body);
	json_decref(config);
}

static void call(uint8_t pick, const char *b, size_t n)
{
	struct e2b_proc_req q;
	enum e2b_proc_call c = (enum e2b_proc_call)((pick >> 4) % 5);
	char err[160];

	/* StreamInput's envelopes, when the pick says so */
	if ((pick & 0x08) && e2b_stream_input_parse(b, n, &q, err, sizeof(err)) == 0) {
		if ((!q.pid && !q.tag[0]) || q.input_len > n || (q.input_len && !q.input))
			__builtin_trap();
		e2b_proc_req_free(&q);
	}
	if (e2b_proc_req_parse(c, b, n, &q, err, sizeof(err)) < 0)
		return;
	if ((!q.pid && !q.tag[0]) ||
	    (c == E2B_CALL_SEND_SIGNAL && q.signal != 9 && q.signal != 15) ||
	    (c == E2B_CALL_SEND_INPUT && q.input_len > n) ||
	    (c == E2B_CALL_UPDATE && (q.pty.cols > 65535 || (!q.pty.cols != !q.pty.rows))))
		__builtin_trap();
	e2b_proc_req_free(&q);
}

static void host(const char *b, size_t n)
{
	char text[300], id[40], *dash;
	int port;

	if (n >= sizeof(text))
		return;
	memcpy(text, b, n);
	text[n] = '\0';
	/* the live view's Origin: that very host, nothing else */
	if (e2b_live_origin(text, "6080-vmab1.d", NULL, "vmab1", 6080) &&
	    strcasecmp(text, "http://6080-vmab1.d") && strcasecmp(text, "https://6080-vmab1.d"))
		__builtin_trap();
	if (e2b_host_sandbox(text, &port, id, sizeof(id)) < 0)
		return;
	dash = strchr(text, '-');
	if (port < 1 || port > 65535 || !dash || strncmp(dash + 1, id, strlen(id)) || !id[0] ||
	    strspn(id, "abcdefghijklmnopqrstuvwxyz0123456789") != strlen(id))
		__builtin_trap();
}

static void fs(uint8_t pick, const char *b, size_t n)
{
	enum e2b_fs_call c = (enum e2b_fs_call)((pick >> 3) % 5);
	struct e2b_fs_req q;
	char err[160];
	json_t *a;

	if (e2b_fs_req_parse(c, b, n, "/home/vitrine", &q, err, sizeof(err)) == 0 &&
	    (q.path[0] != '/' || (c == E2B_FS_MOVE && q.dest[0] != '/') || q.depth < 1 ||
	     q.depth > 64))
		__builtin_trap();
	a = e2b_fs_answer(c, b, n);
	if (!a)
		__builtin_trap();
	if (c == E2B_FS_LIST_DIR) {
		size_t i;
		json_t *e;

		json_array_foreach(json_object_get(a, "entries"), i, e)
		{
			const char *path = json_string_value(json_object_get(e, "path"));
			const char *name = json_string_value(json_object_get(e, "name"));

			const char *target = json_string_value(json_object_get(e, "symlinkTarget"));

			if (!path || path[0] != '/' || !name ||
			    strcmp(strrchr(path, '/') + 1, name) ||
			    !memmem(b, n, path, strlen(path)))
				__builtin_trap();
			/* a target only from a target's line, absolute */
			if (target && (target[0] != '/' || !memmem(b, n, "\tL\t", 3)))
				__builtin_trap();
		}
	}
	json_decref(a);
}

static void text_parsers(uint8_t pick, const char *b, size_t n)
{
	char text[600];
	bool gz;
	json_t *m = json_pack("{s:s}", "k", "v");
	struct e2b_route r;
	bool root;

	if (n >= sizeof(text)) {
		json_decref(m);
		return;
	}
	memcpy(text, b, n);
	text[n] = '\0';
	e2b_metadata_match(m, text);
	json_decref(m);
	e2b_user_parse(text, (pick & 16) ? "root" : NULL, &root);
	/* /files' encodings: said, or refused with nothing said */
	if (e2b_accept_gzip(text, &gz) < 0 && gz)
		__builtin_trap();
	if (e2b_content_gzip(text, &gz) < 0 && gz)
		__builtin_trap();
	r = e2b_route_parse((pick & 32) ? "POST" : "GET", text, pick & 64);
	if (strspn(r.id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") !=
	    strlen(r.id))
		__builtin_trap();
}

/* Each line as its length and bytes. */
static void keep_line(void *ud, const char *line, size_t len)
{
	uint32_t n = (uint32_t)len;

	if (len > E2B_WATCH_LINE_MAX || memchr(line, '\n', len))
		__builtin_trap();
	bytebuf_append(ud, &n, sizeof(n));
	bytebuf_append(ud, line, len);
}

/* One line read as an event, and checked. */
static void watch_line(const char *line, size_t len)
{
	char *name = malloc(len + 1), *back = malloc(2 * len + 3);
	int type = name ? e2b_watch_line_parse(line, len, name, len + 1) : -1;
	size_t k = 0;
	json_t *j;

	if (type > 0) {
		if (strlen(name) + 2 > len || !utf8_valid(name, strlen(name)) || !back)
			__builtin_trap();
		back[k++] = line[0];
		back[k++] = ' ';
		for (const char *p = name; *p; p++) {
			if (*p == '\\' || *p == '\n')
				back[k++] = '\\';
			back[k++] = *p == '\n' ? 'n' : *p;
		}
		if (utf8_valid(line, len) && (k != len || memcmp(back, line, len)))
			__builtin_trap();
		j = e2b_watch_event(type, name);
		if (!j || strcmp(json_string_value(json_object_get(j, "name")), name))
			__builtin_trap();
		json_decref(j);
	} else if (type == 0 && (len != 5 || memcmp(line, "ready", 5))) {
		__builtin_trap();
	}
	free(name);
	free(back);
}

static void watch(uint8_t pick, const char *b, size_t n)
{
	enum e2b_watch_call c = (enum e2b_watch_call)((pick >> 1) % 4);
	struct e2b_watch_lines *one = calloc(1, sizeof(*one)), *two = calloc(1, sizeof(*two));
	struct bytebuf la = { 0 }, lb = { 0 };
	size_t split = n ? (size_t)pick * 37 % (n + 1) : 0, off = 0, da, db;
	struct e2b_watch_req q;
	char err[160];

	if (e2b_watch_req_parse(c, b, n, "/home/vitrine", &q, err, sizeof(err)) == 0 &&
	    ((c <= E2B_WATCH_CREATE && q.path[0] != '/') || (c > E2B_WATCH_CREATE && !q.id[0])))
		__builtin_trap();
	if (!one || !two)
		goto out;
	da = e2b_watch_feed(one, b, n, keep_line, &la);
	db = e2b_watch_feed(two, b, split, keep_line, &lb);
	db += e2b_watch_feed(two, b + split, n - split, keep_line, &lb);
	if (da != db || la.len != lb.len || (la.len && memcmp(la.data, lb.data, la.len)) ||
	    one->len != two->len || one->overlong != two->overlong)
		__builtin_trap();
	while (off + sizeof(uint32_t) <= la.len) {
		uint32_t len;

		memcpy(&len, la.data + off, sizeof(len));
		watch_line((const char *)la.data + off + sizeof(len), len);
		off += sizeof(len) + len;
	}
out:
	bytebuf_free(&la);
	bytebuf_free(&lb);
	free(one);
	free(two);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *b = (const char *)data + 1;
	size_t n = size ? size - 1 : 0;

	if (!size)
		return 0;
	if ((data[0] & 0xc0) == 0xc0) { /* the top two bits: the filesystem */
		fs(data[0], b, n);
		return 0;
	}
	if ((data[0] & 0xc0) == 0x80) { /* the top bit alone: watching */
		watch(data[0], b, n);
		return 0;
	}
	switch (data[0] % 8) {
	case 0:
		envelopes(data + 1, n);
		break;
	case 1:
		chunks(data[0], data + 1, n);
		break;
	case 2:
		create(b, n);
		break;
	case 3:
		start(data[0], b, n);
		break;
	case 4:
		call(data[0], b, n);
		break;
	case 5:
		host(b, n);
		break;
	default:
		text_parsers(data[0], b, n);
		break;
	}
	return 0;
}
