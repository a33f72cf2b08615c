/* gateway/cli/cmd_template_move.c: `vitrine template export NAME FILE`,
 * `vitrine template import FILE [--name N]` and `vitrine template gc
 * --older-than DURATION`: clients of the gateway's export, import and gc
 * routes (docs/api.md). The file goes through without being held in
 * memory: read from disk into the socket, or from the socket to disk. */
#include "common/http_client.h"
#include "gateway/cli/cli.h"
#include "gateway/cli/cmd_opts.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MOVE_TIMEOUT_S 900

/* Reads a command line by parse into *c for cmd. Returns -1 to go on,
 * else the exit status once said why. */
static int line(const struct cli_cmd *cmd,
		int (*parse)(struct template_move_config *, int, char *const *, char *, size_t),
		struct template_move_config *c, int argc, char **argv)
{
	char err[512];
	int rc = parse(c, argc, argv, err, sizeof(err));

	if ((rc = cli_cmd_answer(cmd, rc, err)) >= 0)
		return rc;
	rc = cli_client_init(&c->cl);
	return rc ? rc : -1;
}

int cmd_template_export(int argc, char **argv)
{
	struct template_move_config cfg;
	struct cli_client *cl = &cfg.cl;
	const char *file;
	struct http_resp r;
	char path[128];
	int fd, rc = line(&cli_template_export_cmd, cli_template_export_parse, &cfg, argc, argv);

	if (rc >= 0)
		return rc;
	file = cfg.file;
	fd = strcmp(file, "-") ? open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : 1;
	if (fd < 0) {
		fprintf(stderr, "%s: %s: %s\n", cl->cmd, file, strerror(errno));
		return 1;
	}
	snprintf(path, sizeof(path), "/v1/templates/%s/export", cfg.name);
	rc = cli_client_request_fd(cl, "GET", path, -1, 0, fd, MOVE_TIMEOUT_S, &r);
	if (fd != 1 && close(fd) < 0 && rc == 0) {
		fprintf(stderr, "%s: %s: %s\n", cl->cmd, file, strerror(errno));
		rc = 1;
	}
	if (rc == 0)
		http_resp_free(&r);
	else if (fd != 1)
		unlink(file); /* a cut file is no export */
	return rc;
}

int cmd_template_import(int argc, char **argv)
{
	struct template_move_config cfg;
	struct cli_client *cl = &cfg.cl;
	const char *file;
	char path[128];
	struct http_resp r;
	struct stat st;
	int fd, rc = line(&cli_template_import_cmd, cli_template_import_parse, &cfg, argc, argv);

	if (rc >= 0)
		return rc;
	file = cfg.file;
	if ((fd = open(file, O_RDONLY | O_CLOEXEC)) < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "%s: %s: %s\n", cl->cmd, file, strerror(errno));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	snprintf(path, sizeof(path), "/v1/templates/import?name=%s", cfg.name);
	rc = cli_client_request_fd(cl, "POST", path, fd, (uint64_t)st.st_size, -1, MOVE_TIMEOUT_S,
				   &r);
	close(fd);
	if (rc == 0) {
		cli_print_json(r.json);
		http_resp_free(&r);
	}
	return rc;
}

int cmd_template_gc(int argc, char **argv)
{
	struct template_move_config cfg;
	struct cli_client *cl = &cfg.cl;
	struct http_resp r;
	char path[96];
	int rc = line(&cli_template_gc_cmd, cli_template_gc_parse, &cfg, argc, argv);

	if (rc >= 0)
		return rc;
	snprintf(path, sizeof(path), "/v1/templates/gc?older_than_s=%lld", cfg.older_than_s);
	if ((rc = cli_client_request(cl, "POST", path, NULL, 0, 120, &r)) != 0)
		return rc;
	cli_print_json(r.json);
	http_resp_free(&r);
	return 0;
}
