/* gateway/cli/cmd_project.c: `vitrine project create|ls|show|set|rm`:
 * projects, the gateway's tenants (POST, GET /v1/projects, GET, PATCH,
 * DELETE /v1/projects/NAME; core/project_table.h). Asks the gateway with
 * the operator key; a project's keys come from `vitrine key create
 * --project NAME`. */
#include "common/http_client.h"
#include "gateway/cli/cli.h"
#include "gateway/cli/cmd_opts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROJECT_TIMEOUT_S 60

/* A quota or usage figure as text: "-" for none. */
static void figure(const json_t *v, char *out, size_t len)
{
	if (json_is_integer(v))
		snprintf(out, len, "%lld", (long long)json_integer_value(v));
	else
		snprintf(out, len, "-");
}

/* One project's line: its name, each quota as USED/LIMIT, root. */
static void print_line(const json_t *p)
{
	static const char *const q[] = { "sessions", "vcpus", "memory_mib" };
	const json_t *quota = json_object_get(p, "quota"), *use = json_object_get(p, "usage");
	char cols[4][48], lim[24], used[24];

	for (int i = 0; i < 3; i++) {
		figure(json_object_get(use, q[i]), used, sizeof(used));
		figure(json_object_get(quota, q[i]), lim, sizeof(lim));
		snprintf(cols[i], sizeof(cols[i]), "%s/%s", used, lim);
	}
	figure(json_object_get(quota, "disk_gib"), lim, sizeof(lim));
	snprintf(cols[3], sizeof(cols[3]), "%.1f/%s",
		 (double)json_integer_value(json_object_get(use, "disk_bytes")) / (1 << 30), lim);
	printf("%-20s %-12s %-12s %-14s %-14s %s\n", json_string_value(json_object_get(p, "name")),
	       cols[0], cols[1], cols[2], cols[3],
	       json_is_true(json_object_get(p, "allow_root")) ? "yes" : "no");
}

static void print_header(void)
{
	printf("%-20s %-12s %-12s %-14s %-14s %s\n", "NAME", "SESSIONS", "VCPUS", "MEMORY_MIB",
	       "DISK_GIB", "ROOT");
}

int cmd_project(int argc, char **argv)
{
	static const char *const methods[] = { [CLI_PROJECT_CREATE] = "POST",
					       [CLI_PROJECT_LS] = "GET",
					       [CLI_PROJECT_SHOW] = "GET",
					       [CLI_PROJECT_SET] = "PATCH",
					       [CLI_PROJECT_RM] = "DELETE" };
	struct project_config cfg;
	struct http_resp r;
	char path[96], err[512], *text = NULL;
	int rc = cli_project_parse(&cfg, argc, argv, err, sizeof(err));
	size_t i;
	json_t *p;

	if ((rc = cli_cmd_answer(&cli_project_cmd, rc, err)) >= 0)
		return rc;
	if (cfg.sub == CLI_PROJECT_CREATE || cfg.sub == CLI_PROJECT_SET) {
		json_t *body = cli_project_body(&cfg, err, sizeof(err));

		if (!body) {
			fprintf(stderr, "%s\n", err);
			return 2;
		}
		text = json_dumps(body, JSON_COMPACT);
		json_decref(body);
	}
	if ((rc = cli_client_init(&cfg.cl))) {
		free(text);
		return rc;
	}
	if (cfg.sub == CLI_PROJECT_CREATE || cfg.sub == CLI_PROJECT_LS)
		snprintf(path, sizeof(path), "/v1/projects");
	else
		snprintf(path, sizeof(path), "/v1/projects/%s", cfg.name);
	rc = cli_client_request(&cfg.cl, methods[cfg.sub], path, text, text ? strlen(text) : 0,
				PROJECT_TIMEOUT_S, &r);
	free(text);
	if (rc)
		return rc;
	if (cfg.json || cfg.sub == CLI_PROJECT_RM) {
		if (cfg.sub == CLI_PROJECT_RM)
			printf("removed %s (%lld keys revoked)\n", cfg.name,
			       (long long)json_integer_value(
				       json_object_get(r.json, "keys_revoked")));
		else
			cli_print_json(r.json);
	} else if (cfg.sub == CLI_PROJECT_LS) {
		print_header();
		json_array_foreach(json_object_get(r.json, "projects"), i, p) print_line(p);
	} else {
		print_header();
		print_line(r.json);
	}
	http_resp_free(&r);
	return 0;
}
