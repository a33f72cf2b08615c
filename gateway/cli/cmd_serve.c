/* gateway/cli/cmd_serve.c: `vitrine serve`, the gateway daemon, in its
 * four steps: read the command line (serve_config.h), start, serve until a
 * stop signal, stop (gw_start.h). */
#include "common/opt.h"
#include "gateway/cli/cli.h"
#include "gateway/cli/gw_start.h"
#include "gateway/cli/serve_config.h"

#include <stdio.h>

int cmd_serve(int argc, char **argv)
{
	struct serve_config cfg;
	struct gw gw;
	char err[1024];
	int rc;

	rc = serve_config_parse(&cfg, argc, argv, err, sizeof(err));
	if (rc == OPT_HELP) {
		serve_config_usage(stdout);
		return 0;
	}
	if (rc != OPT_OK) {
		fprintf(stderr, "%s\n", err);
		if (rc == OPT_BAD_LINE)
			serve_config_usage(stderr);
		return 2;
	}
	if (gw_start(&gw, &cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "vitrine serve: %s\n", err);
		return 1;
	}
	rc = gw_serve(&gw, &cfg);
	gw_stop(&gw);
	return rc;
}
