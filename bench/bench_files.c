/* bench/bench_files.c: large files through the gateway (make bench-files):
 * upload and download throughput (MiB/s) of 100 MiB and 1 GiB through the
 * native files route (gateway/guest/file_xfer.h: the agent link's
 * virtio-serial port), against the same file moved between a local HTTP
 * server on this host and the guest through the egress proxy (the guest's
 * curl; on the tiny guest busybox wget for the GET and a PUT written to
 * the proxy with nc),
 * and the gateway's peak RSS (VmHWM) over each. Prints the figures and the
 * ratios. Under TCG 1 GiB takes minutes each way: --sizes 100 skips it.
 *
 *   bench_files [--image tiny|desktop] [--sizes 100,1024] */
#include "common/http_client.h"
#include "tests/lib/files_client.h"
#include "tests/lib/gateway_proc.h"
#include "tests/lib/net.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The host's HTTP server: GET /f?n=BYTES streams that many zero bytes,
 * POST and PUT read the body and answer its length. */
static const char server_py[] =
	"import http.server,sys\n"
	"class H(http.server.BaseHTTPRequestHandler):\n"
	" protocol_version='HTTP/1.1'\n"
	" def log_message(s,*a): pass\n"
	" def do_GET(s):\n"
	"  n=int(s.path.split('n=')[1]); s.send_response(200)\n"
	"  s.send_header('Content-Length',str(n)); s.end_headers(); b=bytes(1<<20)\n"
	"  while n>0: k=min(n,len(b)); s.wfile.write(b[:k]); n-=k\n"
	" def do_PUT(s):\n"
	"  n=int(s.headers['Content-Length']); t=n\n"
	"  while n>0: n-=len(s.rfile.read(min(n,1<<20)))\n"
	"  s.send_response(200); b=str(t).encode(); s.send_header('Content-Length',str(len(b)))\n"
	"  s.end_headers(); s.wfile.write(b)\n"
	" do_POST=do_PUT\n"
	"http.server.ThreadingHTTPServer(('127.0.0.1',int(sys.argv[1])),H).serve_forever()\n";

static pid_t start_server(int port)
{
	char p[16];
	pid_t pid = fork();

	if (pid == 0) {
		snprintf(p, sizeof(p), "%d", port);
		execlp("python3", "python3", "-c", server_py, p, (char *)NULL);
		_exit(127);
	}
	usleep(500 * 1000);
	return pid;
}

/* Runs a shell line in the guest (as the desktop user, 900 s at most);
 * its exit code, or -1. */
static int guest_sh(struct gateway_proc *g, struct gateway_session *s, const char *line)
{
	json_t *b = json_pack("{s:s, s:[s, s], s:i}", "cmd", "/bin/sh", "args", "-c", line,
			      "timeout", 600);
	char *text = json_dumps(b, JSON_COMPACT), path[96];
	struct http_resp r;
	int rc = -1;

	snprintf(path, sizeof(path), "/v1/sessions/%s/exec", s->id);
	if (http_request("127.0.0.1", g->port, "POST", path, s->control, text, strlen(text), 700,
			 &r) == 0 &&
	    r.status == 200 && r.json)
		rc = (int)json_integer_value(json_object_get(r.json, "exit_code"));
	if (rc != 0)
		fprintf(stderr, "guest: %s: %.300s\n", line, r.body ? r.body : "");
	http_resp_free(&r);
	json_decref(b);
	free(text);
	return rc;
}

int main(int argc, char **argv)
{
	const char *image = "tiny", *sizes = "100,1024";
	struct gateway_proc g;
	struct gateway_session s;
	char body[128], rules[96], line[512], sent[65], got[65];
	int port = net_free_port();
	pid_t srv;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--image"))
			image = argv[i + 1];
		else if (!strcmp(argv[i], "--sizes"))
			sizes = argv[i + 1];
	}
	{
		const char *args[] = { "--egress-map", "files.test=127.0.0.1", NULL };

		if (gateway_proc_start(&g, args) < 0)
			return 1;
	}
	snprintf(body, sizeof(body), "{\"image\":\"%s\",\"memory_mib\":%d}", image,
		 strstr(sizes, "1024") ? 2560 : 1024);
	if (gateway_proc_create_session(&g, body, 300, &s) < 0)
		goto fail;
	srv = start_server(port);
	snprintf(rules, sizeof(rules), "{\"allow\":[\"files.test:%d\"]}", port);
	{
		struct http_resp r;
		char path[96];

		snprintf(path, sizeof(path), "/v1/sessions/%s/egress", s.id);
		http_request("127.0.0.1", g.port, "PUT", path, g.key, rules, strlen(rules), 30, &r);
		http_resp_free(&r);
	}
	printf("bench_files: %s guest, gateway pid %d\n", image, (int)g.pid);
	printf("%-6s %-28s %10s %12s\n", "size", "path", "MiB/s", "VmHWM KiB");
	for (const char *p = sizes; *p;) {
		long mib = strtol(p, NULL, 10);
		uint64_t n = (uint64_t)mib << 20, len;
		double t0, up_gw, down_gw, up_eg = 0, down_eg = 0;
		long h0 = files_vmhwm_kib(g.pid), h1, h2;

		t0 = now_s();
		if (files_put(g.port, s.control, s.id, "/tmp/bench.bin", n, 3, 0, sent) != 200)
			goto fail_srv;
		up_gw = now_s() - t0;
		h1 = files_vmhwm_kib(g.pid);
		t0 = now_s();
		if (files_get(g.port, s.control, s.id, "/tmp/bench.bin", &len, got) != 200 ||
		    len != n || strcmp(sent, got))
			goto fail_srv;
		down_gw = now_s() - t0;
		h2 = files_vmhwm_kib(g.pid);
		printf("%4ld M %-28s %10.1f %12ld\n", mib, "gateway PUT /files", mib / up_gw, h1);
		printf("%4ld M %-28s %10.1f %12ld\n", mib, "gateway GET /files", mib / down_gw, h2);
		/* the same bytes through the egress proxy: the guest's client */
		/* busybox's wget cannot send a file: a PUT by hand to the proxy */
		snprintf(
			line, sizeof(line),
			"if command -v curl >/dev/null; then curl -sf -o /dev/null -T /tmp/bench.bin "
			"http://files.test:%d/up; else hp=${http_proxy#http://}; hp=${hp%%/}; "
			"{ printf 'PUT http://files.test:%d/up HTTP/1.1\\r\\nHost: files.test\\r\\n"
			"Content-Length: %llu\\r\\nConnection: close\\r\\n\\r\\n'; "
			"cat /tmp/bench.bin; } | nc ${hp%%:*} ${hp##*:} >/dev/null; fi",
			port, port, (unsigned long long)n);
		t0 = now_s();
		if (guest_sh(&g, &s, line) == 0)
			up_eg = now_s() - t0;
		snprintf(line, sizeof(line),
			 "if command -v curl >/dev/null; then curl -sf -o /tmp/bench2.bin "
			 "'http://files.test:%d/f?n=%llu'; else wget -q -O /tmp/bench2.bin "
			 "'http://files.test:%d/f?n=%llu'; fi; rm -f /tmp/bench2.bin",
			 port, (unsigned long long)n, port, (unsigned long long)n);
		t0 = now_s();
		if (guest_sh(&g, &s, line) == 0)
			down_eg = now_s() - t0;
		printf("%4ld M %-28s %10.1f %12s\n", mib, "egress proxy, guest -> host",
		       up_eg ? mib / up_eg : 0.0, "-");
		printf("%4ld M %-28s %10.1f %12s\n", mib, "egress proxy, host -> guest",
		       down_eg ? mib / down_eg : 0.0, "-");
		if (up_eg && down_eg)
			printf("%4ld M ratio gateway/egress: up %.2f, down %.2f; VmHWM +%ld KiB\n",
			       mib, up_eg / up_gw, down_eg / down_gw, h2 - h0);
		guest_sh(&g, &s, "rm -f /tmp/bench.bin");
		p = strchr(p, ',');
		if (!p)
			break;
		p++;
	}
	kill(srv, SIGTERM);
	waitpid(srv, NULL, 0);
	gateway_proc_delete_sessions(&g);
	gateway_proc_stop(&g);
	return 0;
fail_srv:
	fprintf(stderr, "bench_files: a transfer failed\n");
	kill(srv, SIGTERM);
	waitpid(srv, NULL, 0);
fail:
	gateway_proc_delete_sessions(&g);
	gateway_proc_stop(&g);
	return 1;
}
