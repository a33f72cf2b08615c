/* gateway/cli/cmd_template_pool.c: `vitrine template pool NAME N`: the
 * gateway keeps N sessions of template NAME restored and paused for
 * creates to take (PATCH /v1/templates/NAME {"pool": N}); prints the
 * template with its pool. A client of the gateway. */
#include "common/http_client.h"
#include "gateway/cli/cli.h"
#include "gateway/cli/cmd_opts.h"

#include <stdio.h>
#include <string.h>

int cmd_template_pool(int argc, char **argv)
{
	struct template_pool_config cfg;
	struct http_resp r;
	char path[160], body[64], err[512];
	int rc = cli_template_pool_parse(&cfg, argc, argv, err, sizeof(err));

	if ((rc = cli_cmd_answer(&cli_template_pool_cmd, rc, err)) >= 0)
		return rc;
	if ((rc = cli_client_init(&cfg.cl)) != 0)
		return rc;
	/* The name was checked: it is safe in a path. */
	snprintf(path, sizeof(path), "/v1/templates/%s", cfg.name);
	snprintf(body, sizeof(body), "{\"pool\":%d}", cfg.size);
	if ((rc = cli_client_request(&cfg.cl, "PATCH", path, body, strlen(body), 60, &r)) != 0)
		return rc;
	cli_print_json(r.json);
	http_resp_free(&r);
	return 0;
}
