/* tests/lib/page_eval.c: see page_eval.h. */
#include "tests/lib/page_eval.h"

#include "vmm-qemu/qga_client.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* One try: the value, or NULL with err (*transport set when the page's
 * DevTools socket did not answer in vitrine-ready's 5 s, as a guest busy
 * with a fork's copy on a loaded host may not: not the page's answer). */
static json_t *eval_once(const char *qga_path, const char *expr, char *err, size_t errlen,
			 bool *transport)
{
	const char *argv[] = { "/usr/local/bin/vitrine-ready", "eval", "9222", expr, NULL };
	struct qga_exec_result res;
	struct qga_client *c = NULL;
	json_t *j = NULL;

	*transport = false;
	if (qga_client_connect(qga_path, 5000, &c, err, errlen) < 0)
		return NULL;
	if (qga_client_exec(c, argv, NULL, NULL, 0, 20000, &res, err, errlen) == 0) {
		if (!res.exited || res.exit_code != 0) {
			snprintf(err, errlen, "eval %s: exit %d: %s", expr, res.exit_code,
				 res.err ? res.err : "");
			*transport = res.err &&
				     (strstr(res.err, "recv: ") || strstr(res.err, "send: ") ||
				      strstr(res.err, "connect"));
		} else if (!(j = json_loadb(res.out, res.out_len, JSON_DECODE_ANY, NULL))) {
			snprintf(err, errlen, "eval %s: not JSON: %s", expr, res.out);
		}
		qga_exec_result_free(&res);
	}
	qga_client_destroy(c);
	return j;
}

json_t *page_eval(const char *qga_path, const char *expr, char *err, size_t errlen)
{
	bool transport = true;
	json_t *j = NULL;

	/* The expressions the tests evaluate read state (or focus, which is
	 * idempotent), so asking again after a silent socket is safe. */
	for (int tries = 0; !j && transport && tries < 3; tries++) {
		if (tries) {
			/* tests/run.sh counts these lines in its summary */
			fprintf(stderr, "retry: page_eval %s (try %d of 3): %s\n", expr, tries + 1,
				err);
			sleep(1);
		}
		j = eval_once(qga_path, expr, err, errlen, &transport);
	}
	return j;
}
