/* gateway/cli/cmd_key.c: `vitrine key create|ls|rm`: API keys (POST, GET
 * /v1/keys, or /v1/projects/NAME/keys with --project; DELETE /v1/keys/ID;
 * core/key_table.h), for E2B's
 * SDKs (E2B_API_KEY: they want `e2b_` + hex) and for a key per agent or
 * pipeline that can be revoked alone. Asks the gateway with the operator
 * key; create prints the new key alone on stdout, so that
 * `export E2B_API_KEY=$(vitrine key create --name ci)` works. */
#include "common/http_client.h"
#include "gateway/cli/cli.h"
#include "gateway/cli/cmd_opts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KEY_TIMEOUT_S 60

static const char *field(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "";
}

/* /v1/keys, or a project's /v1/projects/NAME/keys. */
static void keys_path(const struct key_config *cfg, char *path, size_t len)
{
	if (cfg->project)
		snprintf(path, len, "/v1/projects/%.40s/keys", cfg->project);
	else
		snprintf(path, len, "/v1/keys");
}

int cmd_key(int argc, char **argv)
{
	struct key_config cfg;
	struct http_resp r;
	char path[96], err[512];
	const char *name;
	json_t *k;
	size_t i;
	int rc = cli_key_parse(&cfg, argc, argv, err, sizeof(err));

	if ((rc = cli_cmd_answer(&cli_key_cmd, rc, err)) >= 0)
		return rc;
	if ((rc = cli_client_init(&cfg.cl)))
		return rc;
	name = cfg.name;
	if (cfg.sub == CLI_KEY_CREATE) {
		json_t *body = name ? json_pack("{s:s}", "name", name) : json_object();
		char *text = json_dumps(body, JSON_COMPACT);

		json_decref(body);
		keys_path(&cfg, path, sizeof(path));
		rc = cli_client_request(&cfg.cl, "POST", path, text, strlen(text), KEY_TIMEOUT_S,
					&r);
		free(text);
		if (rc)
			return rc;
		printf("%s\n", field(r.json, "key"));
		fprintf(stderr,
			"vitrine key create: %s%s%s%s: shown this once (revoke: vitrine key rm %s)\n",
			field(r.json, "id"), name ? " (" : "", name ? name : "", name ? ")" : "",
			field(r.json, "id"));
	} else if (cfg.sub == CLI_KEY_RM) {
		snprintf(path, sizeof(path), "/v1/keys/%.64s", cfg.id);
		if ((rc = cli_client_request(&cfg.cl, "DELETE", path, NULL, 0, KEY_TIMEOUT_S, &r)))
			return rc;
		printf("revoked %s\n", cfg.id);
	} else {
		keys_path(&cfg, path, sizeof(path));
		if ((rc = cli_client_request(&cfg.cl, "GET", path, NULL, 0, KEY_TIMEOUT_S, &r)))
			return rc;
		if (cfg.json) {
			cli_print_json(r.json);
		} else {
			printf("%-13s %-9s %-20s %-16s %s\n", "ID", "PREFIX", "CREATED (UTC)",
			       "PROJECT", "NAME");
			json_array_foreach(json_object_get(r.json, "keys"), i, k)
			{
				time_t t = (time_t)(json_integer_value(
							    json_object_get(k, "created_at")) /
						    1000);
				struct tm tm;
				char when[32] = "";

				if (gmtime_r(&t, &tm))
					strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
				printf("%-13s %-9s %-20s %-16s %s\n", field(k, "id"),
				       field(k, "prefix"), when,
				       field(k, "project")[0] ? field(k, "project") : "(admin)",
				       field(k, "name"));
			}
		}
	}
	http_resp_free(&r);
	return 0;
}
