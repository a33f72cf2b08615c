/* gateway/api/web.c: see web.h. */
#include "gateway/api/web.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int has_index(const char *dir)
{
	char p[PATH_MAX + 16];

	snprintf(p, sizeof(p), "%s/index.html", dir);
	return access(p, R_OK) == 0;
}

int web_mount(struct lws_http_mount *m, const char *override, char *dir_out, size_t dir_len)
{
	char exe[PATH_MAX], resolved[PATH_MAX];
	ssize_t n;

	memset(m, 0, sizeof(*m));
	dir_out[0] = '\0';
	if (override) {
		snprintf(dir_out, dir_len, "%s", override);
	} else if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) > 0) {
		exe[n] = '\0';
		snprintf(resolved, sizeof(resolved), "%s/../web", dirname(exe));
		if (has_index(resolved))
			snprintf(dir_out, dir_len, "%s", resolved);
	}
	if (!dir_out[0])
		snprintf(dir_out, dir_len, "/usr/share/vitrine/web");
	if (realpath(dir_out, resolved))
		snprintf(dir_out, dir_len, "%s", resolved);
	if (!has_index(dir_out))
		return -ENOENT;
	m->mountpoint = "/web";
	m->mountpoint_len = 4;
	m->origin = dir_out;
	m->def = "index.html";
	m->origin_protocol = LWSMPRO_FILE;
	/* lws asks a mount's named protocol, and only that, for extra headers
	 * (LWS_CALLBACK_ADD_HEADERS): ours, api/protocols.c's "http" */
	m->protocol = "http";
	return 0;
}

/* The Host the page was asked for, when it is a plain host[:port] (a
 * WebSocket's ws:// and wss:// URL to it go into connect-src: browsers
 * before CSP 3 do not count them as 'self'). "" otherwise. */
static void request_host(struct lws *wsi, char *out, size_t len)
{
	int n = lws_hdr_copy(wsi, out, (int)len, WSI_TOKEN_HOST);

	if (n <= 0 || strspn(out, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				  "0123456789.-:[]") != (size_t)n)
		out[0] = '\0';
}

int web_add_headers(struct lws *wsi, struct lws_process_html_args *args)
{
	static const char *const fixed[][2] = {
		{ "x-content-type-options:", "nosniff" },
		{ "x-frame-options:", "DENY" },
		{ "referrer-policy:", "no-referrer" },
	};
	unsigned char **p = (unsigned char **)&args->p, *end = *p + args->max_len;
	char host[256], csp[768];
	int n;

	request_host(wsi, host, sizeof(host));
	/* demo.html (a guest's page, served here too) styles with attributes */
	n = snprintf(csp, sizeof(csp),
		     "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
		     "img-src 'self' data: blob:; connect-src 'self'%s%s%s%s; "
		     "frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
		     host[0] ? " ws://" : "", host, host[0] ? " wss://" : "", host);
	if (n < 0 || (size_t)n >= sizeof(csp))
		return -1;
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (lws_add_http_header_by_name(wsi, (const unsigned char *)fixed[i][0],
						(const unsigned char *)fixed[i][1],
						(int)strlen(fixed[i][1]), p, end))
			return -1;
	if (lws_add_http_header_by_name(wsi, (const unsigned char *)"content-security-policy:",
					(const unsigned char *)csp, n, p, end))
		return -1;
	return 0;
}
