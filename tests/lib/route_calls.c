/* tests/lib/route_calls.c: see route_calls.h. */
#include "tests/lib/route_calls.h"

#include "gateway/core/auth.h"

#include <stdio.h>
#include <string.h>

const struct route_call route_calls[] = {
	{ "GET", "/healthz", NULL, ROUTE_NO_TOKEN },
	{ "GET", "/", NULL, ROUTE_NO_TOKEN },
	{ "GET", "/v1/sessions", NULL, AUTH_R_MANAGE },
	{ "POST", "/v1/sessions", "{\"bogus\":1}", AUTH_R_MANAGE },
	{ "GET", "/v1/templates", NULL, AUTH_R_MANAGE },
	{ "POST", "/v1/templates", "{\"bogus\":1}", AUTH_R_MANAGE },
	{ "GET", "/v1/templates/nosuchtemplate", NULL, AUTH_R_MANAGE },
	{ "DELETE", "/v1/templates/nosuchtemplate", NULL, AUTH_R_MANAGE },
	{ "PATCH", "/v1/templates/nosuchtemplate", "{\"pool\":0}", AUTH_R_ADMIN },
	{ "GET", "/v1/templates/nosuchtemplate/export", NULL, AUTH_R_MANAGE },
	{ "POST", "/v1/templates/import", "not a template", AUTH_R_ADMIN }, /* no ?name= */
	{ "POST", "/v1/templates/gc", NULL, AUTH_R_ADMIN }, /* no ?older_than_s= */
	{ "GET", "/metrics", NULL, AUTH_R_ADMIN },
	{ "GET", "/v1/usage", NULL, AUTH_R_MANAGE },
	{ "GET", "/v1/sessions/%s", NULL, AUTH_R_VIEW },
	{ "GET", "/v1/sessions/%s/screenshot?format=png", NULL, AUTH_R_VIEW },
	{ "GET", "/v1/sessions/%s/thumbnail", NULL, AUTH_R_VIEW },
	{ "GET", "/v1/sessions/%s/events", NULL, AUTH_R_VIEW },
	{ "POST", "/v1/sessions/%s/actions", "{\"action\":\"no_such_action\"}", AUTH_R_ACT },
	/* WebSocket routes asked without an upgrade: 426 when allowed */
	{ "GET", "/v1/sessions/%s/control", NULL, AUTH_R_ACT },
	{ "GET", "/v1/sessions/%s/stream", NULL, AUTH_R_VIEW },
	{ "GET", "/v1/sessions/%s/exec/stream", NULL, AUTH_R_EXEC },
	{ "GET", "/v1/sessions/%s/cdp", NULL, AUTH_R_ACT },
	{ "GET", "/v1/sessions/%s/cdp/json/version", NULL, AUTH_R_ACT },
	{ "POST", "/v1/sessions/%s/pause", "{\"mode\":\"bogus\"}", AUTH_R_ACT },
	{ "POST", "/v1/sessions/%s/resume", "{\"bogus\":1}", AUTH_R_ACT },
	{ "POST", "/v1/sessions/%s/open", "{}", AUTH_R_ACT },
	{ "POST", "/v1/sessions/%s/launch", "{}", AUTH_R_ACT },
	{ "GET", "/v1/sessions/%s/clipboard", NULL, AUTH_R_ACT },
	{ "PUT", "/v1/sessions/%s/clipboard", "{}", AUTH_R_ACT },
	{ "GET", "/v1/sessions/%s/egress", NULL, AUTH_R_ACT },
	{ "GET", "/v1/sessions/%s/egress/log", NULL, AUTH_R_ACT },
	/* a guest's port (nothing listens on 1: 502 when let through) */
	{ "GET", "/v1/sessions/%s/ports/1/", NULL, AUTH_R_ACT },
	{ "POST", "/v1/sessions/%s/ports/1/x", "{}", AUTH_R_ACT },
	{ "PUT", "/v1/sessions/%s/ports/1/x", "{}", AUTH_R_ACT },
	{ "PATCH", "/v1/sessions/%s/ports/1/x", "{}", AUTH_R_ACT },
	{ "DELETE", "/v1/sessions/%s/ports/1/x", NULL, AUTH_R_ACT },
	{ "GET", "/v1/sessions/%s/ports/1", NULL, AUTH_R_ACT },
	{ "PUT", "/v1/sessions/%s/ports/1", "{\"public\":false}", AUTH_R_SHARE },
	{ "POST", "/v1/sessions/%s/ports/1", NULL, AUTH_R_SHARE },
	{ "PUT", "/v1/sessions/%s/egress", "[]", AUTH_R_EGRESS },
	{ "POST", "/v1/sessions/%s/exec", "{\"cmd\":\"true\",\"cwd\":\"/\"}", AUTH_R_EXEC },
	{ "POST", "/v1/sessions/%s/exec", "{\"cmd\":\"true\",\"cwd\":\"/\",\"user\":\"root\"}",
	  AUTH_R_EXEC | AUTH_R_ROOT },
	{ "GET", "/v1/sessions/%s/files?path=/tmp/none", NULL, AUTH_R_EXEC },
	{ "PUT", "/v1/sessions/%s/files?path=/etc/none", "x",
	  AUTH_R_EXEC }, /* a path not allowed */
	{ "POST", "/v1/sessions/%s/fork", "{\"bogus\":1}", AUTH_R_FORK },
	{ "POST", "/v1/sessions/%s/share", "{\"scope\":\"view\"}", AUTH_R_ACT },
	{ "POST", "/v1/sessions/%s/share", "{\"scope\":\"control\"}", AUTH_R_ACT | AUTH_R_SHARE },
	{ "DELETE", "/v1/sessions/%s/share", NULL, AUTH_R_ACT | AUTH_R_SHARE },
	{ "POST", "/v1/sessions/%s/vnc", NULL, AUTH_R_VNC }, /* opened, then closed below */
	{ "DELETE", "/v1/sessions/%s/vnc", NULL, AUTH_R_VNC },
	{ "GET", "/v1/sessions/%s/trajectory", NULL, AUTH_R_VIEW },
	/* asked before a recording exists (404), which is then started and
	 * stopped */
	{ "GET", "/v1/sessions/%s/recording", NULL, AUTH_R_VIEW },
	{ "GET", "/v1/sessions/%s/recording/frames/0", NULL, AUTH_R_VIEW },
	{ "GET", "/v1/sessions/%s/recording.webm", NULL, AUTH_R_VIEW },
	{ "POST", "/v1/sessions/%s/recording/start", NULL, AUTH_R_ACT },
	{ "POST", "/v1/sessions/%s/recording/stop", NULL, AUTH_R_ACT },
	{ "GET", "/v1/sessions/%s/tokens", NULL, AUTH_R_MANAGE },
	{ "POST", "/v1/sessions/%s/tokens", "{\"scopes\":[]}", AUTH_R_MANAGE },
	{ "DELETE", "/v1/sessions/%s/tokens/tnosuch000", NULL, AUTH_R_MANAGE },
	{ "POST", "/v1/sessions/%s/tokens/control/rotate", "{}", AUTH_R_MANAGE },
	{ "DELETE", "/v1/sessions/nosuchsession", NULL, AUTH_R_MANAGE },
	{ "GET", "/v1/keys", NULL, AUTH_R_ADMIN | ROUTE_OPERATOR_KEY },
	{ "POST", "/v1/keys", "{\"bogus\":1}", AUTH_R_ADMIN | ROUTE_OPERATOR_KEY },
	{ "DELETE", "/v1/keys/key_nosuch00", NULL, AUTH_R_ADMIN | ROUTE_OPERATOR_KEY },
	/* projects: a bad body, a project that is not there */
	{ "GET", "/v1/projects", NULL, AUTH_R_ADMIN },
	{ "POST", "/v1/projects", "{\"bogus\":1}", AUTH_R_ADMIN },
	{ "GET", "/v1/projects/nosuchproject", NULL, AUTH_R_MANAGE },
	{ "PATCH", "/v1/projects/nosuchproject", "{}", AUTH_R_ADMIN },
	{ "DELETE", "/v1/projects/nosuchproject", NULL, AUTH_R_ADMIN },
	{ "GET", "/v1/projects/nosuchproject/keys", NULL, AUTH_R_ADMIN | ROUTE_OPERATOR_KEY },
	{ "POST", "/v1/projects/nosuchproject/keys", "{}", AUTH_R_ADMIN | ROUTE_OPERATOR_KEY },
	{ "DELETE", "/v1/projects/nosuchproject/keys/key_nosuch00", NULL,
	  AUTH_R_ADMIN | ROUTE_OPERATOR_KEY },
};
const size_t route_calls_n = sizeof(route_calls) / sizeof(route_calls[0]);

enum route_method route_call_method(const char *name)
{
	static const char *const names[] = { [M_GET] = "GET",
					     [M_POST] = "POST",
					     [M_DELETE] = "DELETE",
					     [M_PUT] = "PUT",
					     [M_PATCH] = "PATCH" };

	for (int m = M_GET; m < M_OTHER; m++)
		if (!strcmp(name, names[m]))
			return (enum route_method)m;
	return M_OTHER;
}

void route_call_path(const char *tmpl, const char *id, char *out, size_t len)
{
	const char *at = strstr(tmpl, "%s");

	if (!at)
		snprintf(out, len, "%s", tmpl);
	else
		snprintf(out, len, "%.*s%s%s", (int)(at - tmpl), tmpl, id, at + 2);
}

struct route route_call_route(const struct route_call *c, const char *id)
{
	char path[256];

	route_call_path(c->path, id, path, sizeof(path));
	path[strcspn(path, "?")] = '\0';
	return route_parse(route_call_method(c->method), path);
}

int route_call_names_session(const struct route_call *c)
{
	return strstr(c->path, "%s") || strstr(c->path, "nosuchsession");
}
