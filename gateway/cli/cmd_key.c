/* gateway/cli/cmd_key.c: `vitrine key create|ls|rm`: the operator's API
 * keys (POST, GET /v1/keys, DELETE /v1/keys/ID; core/key_table.h), for E2B's
 * SDKs (E2B_API_KEY: they want `e2b_` + hex) and for a key per agent or
 * pipeline that can be revoked alone. Asks the gateway with the operator
 * key; create prints the new key alone on stdout, so that
 * `export E2B_API_KEY=$(vitrine key create --name ci)` works. */
#include "common/http_client.h"
#include "gateway/cli/cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KEY_TIMEOUT_S 60

static const char key_usage[] =
	"usage: vitrine key create [--name NAME]\n"
	"       vitrine key ls [--json]\n"
	"       vitrine key rm ID\n"
	"API keys with the operator key's rights (but managing keys), shaped e2b_ + hex\n"
	"as E2B's SDKs want them; create prints the key once, on stdout.\n";

static const char *field(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "";
}

int cmd_key(int argc, char **argv)
{
	const struct option longopts[] = {
		CLI_CLIENT_LONGOPTS,
		{ "name", required_argument, 0, 'n' },
		{ "json", no_argument, 0, 'j' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	struct cli_client cl = { .cmd = "vitrine key" };
	const char *sub = argc > 1 ? argv[1] : "", *name = NULL;
	bool as_json = false;
	struct http_resp r;
	char path[96];
	json_t *k;
	size_t i;
	int c, rc, want_args;

	if (!strcmp(sub, "-h") || !strcmp(sub, "--help")) {
		printf("%s" CLI_CLIENT_USAGE, key_usage);
		return 0;
	}
	want_args = !strcmp(sub, "rm") ? 1 : 0;
	if (strcmp(sub, "create") && strcmp(sub, "ls") && strcmp(sub, "rm")) {
		fprintf(stderr, "vitrine key: %s%s%s\n%s" CLI_CLIENT_USAGE,
			*sub ? "unknown subcommand '" : "a subcommand is required", sub,
			*sub ? "'" : "", key_usage);
		return 2;
	}
	optind = 2;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == 'h') {
			printf("%s" CLI_CLIENT_USAGE, key_usage);
			return 0;
		}
		if ((c == 'n' && !strcmp(sub, "create")) || (c == 'j' && !strcmp(sub, "ls"))) {
			if (c == 'n')
				name = optarg;
			else
				as_json = true;
		} else if (c == 'n' || c == 'j' || !cli_client_option(&cl, c, optarg)) {
			fprintf(stderr, "%s" CLI_CLIENT_USAGE, key_usage);
			return 2;
		}
	}
	if (argc - optind != want_args) {
		fprintf(stderr, "vitrine key %s: %s\n%s", sub,
			want_args && optind == argc ? "a key id is required"
						    : "unexpected argument",
			key_usage);
		return 2;
	}
	if ((rc = cli_client_init(&cl)))
		return rc;
	if (!strcmp(sub, "create")) {
		json_t *body = name ? json_pack("{s:s}", "name", name) : json_object();
		char *text = json_dumps(body, JSON_COMPACT);

		json_decref(body);
		rc = cli_client_request(&cl, "POST", "/v1/keys", text, strlen(text), KEY_TIMEOUT_S,
					&r);
		free(text);
		if (rc)
			return rc;
		printf("%s\n", field(r.json, "key"));
		fprintf(stderr,
			"vitrine key create: %s%s%s%s: shown this once (revoke: vitrine key rm %s)\n",
			field(r.json, "id"), name ? " (" : "", name ? name : "", name ? ")" : "",
			field(r.json, "id"));
	} else if (!strcmp(sub, "rm")) {
		snprintf(path, sizeof(path), "/v1/keys/%.64s", argv[optind]);
		if ((rc = cli_client_request(&cl, "DELETE", path, NULL, 0, KEY_TIMEOUT_S, &r)))
			return rc;
		printf("revoked %s\n", argv[optind]);
	} else {
		if ((rc = cli_client_request(&cl, "GET", "/v1/keys", NULL, 0, KEY_TIMEOUT_S, &r)))
			return rc;
		if (as_json) {
			cli_print_json(r.json);
		} else {
			printf("%-13s %-9s %-20s %s\n", "ID", "PREFIX", "CREATED (UTC)", "NAME");
			json_array_foreach(json_object_get(r.json, "keys"), i, k)
			{
				time_t t = (time_t)(json_integer_value(
							    json_object_get(k, "created_at")) /
						    1000);
				struct tm tm;
				char when[32] = "";

				if (gmtime_r(&t, &tm))
					strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
				printf("%-13s %-9s %-20s %s\n", field(k, "id"), field(k, "prefix"),
				       when, field(k, "name"));
			}
		}
	}
	http_resp_free(&r);
	return 0;
}
