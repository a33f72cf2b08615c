/* tests/lib/e2e_template.c: see e2e_template.h. */
#include "tests/lib/e2e_template.h"

#include "common/fsutil.h"
#include "common/http_client.h"
#include "tests/lib/gateway_proc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void delete_template(const struct gateway_proc *g, const char *name)
{
	char path[160];
	struct http_resp r;

	snprintf(path, sizeof(path), "/v1/templates/%s", name);
	if (http_request("127.0.0.1", g->port, "DELETE", path, g->key, NULL, 0, 30, &r) == 0)
		http_resp_free(&r);
}

static const char *shared_name(void)
{
	const char *n = getenv("VITRINE_E2E_TEMPLATE");

	return n && *n ? n : NULL;
}

/* GET /v1/templates/name: 1 ready (with *created_at), 0 missing (or
 * failed: removed, to be made again), -1 when the gateway cannot say. */
static int lookup(const struct gateway_proc *g, const char *name, long long *created_at)
{
	char path[160];
	struct http_resp r;
	const char *status;
	int rc;

	snprintf(path, sizeof(path), "/v1/templates/%s", name);
	if (http_request("127.0.0.1", g->port, "GET", path, g->key, NULL, 0, 30, &r) < 0)
		return -1;
	status = json_string_value(json_object_get(r.json, "status"));
	if (r.status == 404) {
		rc = 0;
	} else if (r.status == 200 && status && !strcmp(status, "ready")) {
		if (created_at)
			*created_at = json_integer_value(json_object_get(r.json, "created_at"));
		rc = 1;
	} else if (r.status == 200 && status && strcmp(status, "building")) {
		fprintf(stderr, "%s is %s: made again\n", path, status);
		delete_template(g, name);
		rc = 0;
	} else {
		fprintf(stderr, "GET %s: %d %s\n", path, r.status, r.body ? r.body : "");
		rc = -1;
	}
	http_resp_free(&r);
	return rc;
}

int e2e_template_get(const struct gateway_proc *g, char *name, size_t size, long long *created_at)
{
	char *page = NULL, *body;
	json_t *j;
	int rc;

	if (shared_name())
		snprintf(name, size, "%s", shared_name());
	else
		snprintf(name, size, "e2e-desktop-%d", (int)getpid());
	if ((rc = lookup(g, name, created_at)) != 0)
		return rc > 0 ? 0 : -1;
	if (fs_read_file(E2E_TEMPLATE_PAGE, 1 << 20, &page, NULL) < 0) {
		fprintf(stderr, "%s: cannot read it\n", E2E_TEMPLATE_PAGE);
		return -1;
	}
	j = json_pack("{s:s, s:s, s:s}", "name", name, "image", "desktop", "page", page);
	body = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	free(page);
	rc = gateway_proc_make_template(g, body, 900, created_at);
	free(body);
	return rc;
}

void e2e_template_release(const struct gateway_proc *g, const char *name)
{
	if (!shared_name() || strcmp(name, shared_name()))
		delete_template(g, name);
}
