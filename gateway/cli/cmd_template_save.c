/* gateway/cli/cmd_template_save.c: `vitrine template save ID NAME`: a
 * running session of the gateway saved as a template (POST /v1/templates
 * {"name", "from_session"}), waited for until it is made (or failed). A
 * client of the gateway, unlike `template create`, which boots a guest
 * itself. */
#include "common/fsutil.h"
#include "common/http_client.h"
#include "gateway/cli/cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SAVE_USAGE                                                                                 \
	"usage: vitrine template save ID NAME [--no-wait]\n"                                       \
	"  saves session ID (running or paused in memory; it runs on) as template NAME\n"          \
	"  --no-wait           answer once the save has started (the template is \"building\")\n"

int cmd_template_save(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_CLIENT_LONGOPTS,
		{ "no-wait", no_argument, 0, 'n' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	struct cli_client cl = { .cmd = "vitrine template save" };
	bool wait = true;
	struct http_resp r;
	char path[160];
	json_t *body;
	const char *status_text;
	char *text;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == 'h') {
			printf(SAVE_USAGE CLI_CLIENT_USAGE);
			return 0;
		}
		if (c == 'n')
			wait = false;
		else if (!cli_client_option(&cl, c, optarg)) {
			fprintf(stderr, SAVE_USAGE CLI_CLIENT_USAGE);
			return 2;
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr, "%s: a session id and a template name are required\n" SAVE_USAGE,
			cl.cmd);
		return 2;
	}
	if (cli_check_session_id(&cl, argv[optind]) < 0)
		return 2;
	if ((rc = cli_client_init(&cl)) != 0)
		return rc;
	body = json_pack("{s:s, s:s}", "name", argv[optind + 1], "from_session", argv[optind]);
	text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	json_decref(body);
	if (!text) {
		fprintf(stderr, "%s: out of memory\n", cl.cmd);
		return 1;
	}
	rc = cli_client_request(&cl, "POST", "/v1/templates", text, strlen(text), 60, &r);
	free(text);
	if (rc)
		return rc;
	/* The name was checked by the gateway: it is safe in a path. */
	snprintf(path, sizeof(path), "/v1/templates/%s", argv[optind + 1]);
	while (wait && !cli_interrupted) {
		const char *status = json_string_value(json_object_get(r.json, "status"));

		if (!status || strcmp(status, "building"))
			break;
		http_resp_free(&r);
		usleep(200 * 1000);
		if ((rc = cli_client_request(&cl, "GET", path, NULL, 0, 60, &r)) != 0)
			return rc;
	}
	cli_print_json(r.json);
	status_text = json_string_value(json_object_get(r.json, "status"));
	rc = wait && (!status_text || strcmp(status_text, "ready"));
	http_resp_free(&r);
	return rc;
}
