/* gateway/cli/cmd_template_save.c: `vitrine template save ID NAME`: a
 * running session of the gateway saved as a template (POST /v1/templates
 * {"name", "from_session"}), waited for until it is made (or failed). A
 * client of the gateway, unlike `template create`, which boots a guest
 * itself. */
#include "common/fsutil.h"
#include "common/http_client.h"
#include "gateway/cli/cli.h"
#include "gateway/cli/cmd_opts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cmd_template_save(int argc, char **argv)
{
	struct template_save_config cfg;
	struct http_resp r;
	char path[160], err[512];
	json_t *body;
	const char *status_text;
	char *text;
	int rc = cli_template_save_parse(&cfg, argc, argv, err, sizeof(err));
	bool wait;

	if ((rc = cli_cmd_answer(&cli_template_save_cmd, rc, err)) >= 0)
		return rc;
	if ((rc = cli_client_init(&cfg.cl)) != 0)
		return rc;
	wait = !cfg.no_wait;
	body = json_pack("{s:s, s:s}", "name", cfg.name, "from_session", cfg.id);
	text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	json_decref(body);
	if (!text) {
		fprintf(stderr, "%s: out of memory\n", cfg.cl.cmd);
		return 1;
	}
	rc = cli_client_request(&cfg.cl, "POST", "/v1/templates", text, strlen(text), 60, &r);
	free(text);
	if (rc)
		return rc;
	/* The name was checked by the gateway: it is safe in a path. */
	snprintf(path, sizeof(path), "/v1/templates/%s", cfg.name);
	while (wait && !cli_interrupted) {
		const char *status = json_string_value(json_object_get(r.json, "status"));

		if (!status || strcmp(status, "building"))
			break;
		http_resp_free(&r);
		usleep(200 * 1000);
		if ((rc = cli_client_request(&cfg.cl, "GET", path, NULL, 0, 60, &r)) != 0)
			return rc;
	}
	cli_print_json(r.json);
	status_text = json_string_value(json_object_get(r.json, "status"));
	rc = wait && (!status_text || strcmp(status_text, "ready"));
	http_resp_free(&r);
	return rc;
}
