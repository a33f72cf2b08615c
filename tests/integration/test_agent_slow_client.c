/* tests/integration/test_agent_slow_client.c: the streaming exec WebSocket
 * (gateway/api/guest_ws.c) between a tiny guest and a client that does not
 * keep up, through `vitrine serve`. A command writing 64 MiB to a client
 * that does not read leaves the gateway's RSS within a bound (the guest's
 * sender stalls on its window), and every byte arrives once the client
 * reads; a client sending stdin to a command that never reads it is
 * stopped (the gateway stops reading the socket) instead of queued. The
 * RSS figures are printed. */
#include "tests/lib/gateway_proc.h"
#include "tests/lib/ws_client.h"

#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#define OUTPUT_MIB 64
#define RSS_BOUND_KIB (64 * 1024) /* generous: the windows are 1 MiB */

static struct gateway_proc gw;
static char path[160], ctl[64];

static int setup(void **state)
{
	struct gateway_session s;

	(void)state;
	if (gateway_proc_start(&gw, NULL) < 0 ||
	    gateway_proc_create_session(&gw, "{\"image\":\"tiny\",\"width\":640,\"height\":480}",
					120, &s) < 0)
		return -1;
	snprintf(path, sizeof(path), "/v1/sessions/%s/exec/stream", s.id);
	snprintf(ctl, sizeof(ctl), "%s", s.control);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return gateway_proc_stop(&gw) == 0 ? 0 : -1;
}

static int start(const char *cmd)
{
	char body[256], *m;
	int fd = ws_connect(gw.port, path, ctl, NULL, NULL);

	assert_true(fd >= 0);
	snprintf(body, sizeof(body), "{\"cmd\":\"%s\",\"cwd\":\"/\"}", cmd);
	assert_int_equal(ws_send_text(fd, body), 0);
	m = ws_recv_text(fd, 30000);
	if (!m || !strstr(m, "started"))
		fail_msg("no start: %s", m ? m : "(nothing)");
	free(m);
	return fd;
}

static void test_slow_reader(void **state)
{
	long before, peak = 0;
	size_t got = 0;
	struct ws_msg m;
	int fd;

	(void)state;
	before = gateway_proc_rss_kib(&gw);
	fd = start("dd if=/dev/zero bs=65536 count="
		   "1024"
		   " 2>/dev/null");
	for (int i = 0; i < 16; i++) { /* the client reads nothing for 8 s */
		long now = gateway_proc_rss_kib(&gw);

		peak = now > peak ? now : peak;
		usleep(500 * 1000);
	}
	printf("# slow exec reader: gateway RSS %ld KiB before, %ld KiB at most while the client "
	       "did not read (+%ld KiB)\n",
	       before, peak, peak - before);
	assert_true(peak - before < RSS_BOUND_KIB);
	for (;;) {
		assert_int_equal(ws_recv(fd, 60000, &m), 0);
		if (m.opcode == WS_BINARY) {
			assert_int_equal(m.data[0], 1);
			got += m.len - 1;
		}
		if (m.opcode == WS_TEXT)
			assert_non_null(strstr((char *)m.data, "\"exit_code\":0"));
		if (m.opcode != WS_BINARY) {
			ws_msg_free(&m);
			break;
		}
		ws_msg_free(&m);
	}
	assert_int_equal(got, (size_t)OUTPUT_MIB << 20);
	close(fd);
}

static void test_stdin_nobody_reads(void **state)
{
	static unsigned char chunk[1 << 20];
	struct timeval tv = { 2, 0 };
	long before, after;
	size_t sent = 0;
	int fd;

	(void)state;
	before = gateway_proc_rss_kib(&gw);
	fd = start("sleep 30");
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	while (sent < (256u << 20) && ws_send(fd, WS_BINARY, chunk, sizeof(chunk)) == 0)
		sent += sizeof(chunk);
	usleep(500 * 1000);
	after = gateway_proc_rss_kib(&gw);
	printf("# stdin nobody reads: %zu MiB taken before the gateway stopped reading; gateway "
	       "RSS %ld -> %ld KiB (+%ld KiB)\n",
	       sent >> 20, before, after, after - before);
	assert_true(sent < (64u << 20));
	assert_true(after - before < RSS_BOUND_KIB);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slow_reader),
		cmocka_unit_test(test_stdin_nobody_reads),
	};

	return cmocka_run_group_tests_name("slow WebSocket clients (tiny guest)", tests, setup,
					   teardown);
}
