/* tests/lib/page_eval.c: see page_eval.h. */
#include "tests/lib/page_eval.h"

#include "vmm-qemu/qga_client.h"

#include <stdio.h>

json_t *page_eval(const char *qga_path, const char *expr, char *err, size_t errlen)
{
	const char *argv[] = { "/usr/local/bin/vitrine-ready", "eval", "9222", expr, NULL };
	struct qga_exec_result res;
	struct qga_client *c = NULL;
	json_t *j = NULL;

	if (qga_client_connect(qga_path, 5000, &c, err, errlen) < 0)
		return NULL;
	if (qga_client_exec(c, argv, NULL, NULL, 0, 20000, &res, err, errlen) == 0) {
		if (!res.exited || res.exit_code != 0)
			snprintf(err, errlen, "eval %s: exit %d: %s", expr, res.exit_code,
				 res.err ? res.err : "");
		else if (!(j = json_loadb(res.out, res.out_len, JSON_DECODE_ANY, NULL)))
			snprintf(err, errlen, "eval %s: not JSON: %s", expr, res.out);
		qga_exec_result_free(&res);
	}
	qga_client_destroy(c);
	return j;
}
