/* gateway/cli/cmd_template_move.c: `vitrine template export NAME FILE`,
 * `vitrine template import FILE [--name N]` and `vitrine template gc
 * --older-than DURATION`: clients of the gateway's export, import and gc
 * routes (docs/api.md). The file goes through without being held in
 * memory: read from disk into the socket, or from the socket to disk. */
#include "common/http_client.h"
#include "gateway/cli/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MOVE_TIMEOUT_S 900

#define EXPORT_USAGE                                                                               \
	"usage: vitrine template export NAME FILE\n"                                               \
	"  writes template NAME of the gateway, its disk flattened, with its metadata\n"           \
	"  and checksums, to FILE (\"-\": standard output)\n"
#define IMPORT_USAGE                                                                               \
	"usage: vitrine template import FILE [--name N]\n"                                         \
	"  gives the gateway the template in FILE (made by export) as N (default: the\n"           \
	"  file's name without its directory and extension)\n"
#define GC_USAGE                                                                                   \
	"usage: vitrine template gc --older-than DURATION\n"                                       \
	"  removes the gateway's templates made longer than DURATION ago (N, Ns, Nm, Nh,\n"        \
	"  Nd) that no session and no other template uses, and lists them\n"

/* Parses the common options; the positional arguments stay from optind.
 * Returns -1 to go on, else the exit status. */
static int options(int argc, char **argv, struct cli_client *cl, const char *usage,
		   const char **name, const char **older)
{
	static const struct option longopts[] = {
		CLI_CLIENT_LONGOPTS,
		{ "name", required_argument, 0, 'n' },
		{ "older-than", required_argument, 0, 'o' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == 'h') {
			printf("%s" CLI_CLIENT_USAGE, usage);
			return 0;
		}
		if (c == 'n' && name)
			*name = optarg;
		else if (c == 'o' && older)
			*older = optarg;
		else if (!cli_client_option(cl, c, optarg)) {
			fprintf(stderr, "%s" CLI_CLIENT_USAGE, usage);
			return 2;
		}
	}
	return -1;
}

/* A template name as the gateway takes it (so that it is safe in a path). */
static bool name_ok(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n <= 63 && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_-") == n;
}

int cmd_template_export(int argc, char **argv)
{
	struct cli_client cl = { .cmd = "vitrine template export" };
	const char *file;
	struct http_resp r;
	char path[128];
	int fd, rc;

	if ((rc = options(argc, argv, &cl, EXPORT_USAGE, NULL, NULL)) >= 0)
		return rc;
	if (argc - optind != 2 || !name_ok(argv[optind])) {
		fprintf(stderr, "%s: a template name and a file are required\n" EXPORT_USAGE,
			cl.cmd);
		return 2;
	}
	if ((rc = cli_client_init(&cl)) != 0)
		return rc;
	file = argv[optind + 1];
	fd = strcmp(file, "-") ? open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : 1;
	if (fd < 0) {
		fprintf(stderr, "%s: %s: %s\n", cl.cmd, file, strerror(errno));
		return 1;
	}
	snprintf(path, sizeof(path), "/v1/templates/%s/export", argv[optind]);
	rc = cli_client_request_fd(&cl, "GET", path, -1, 0, fd, MOVE_TIMEOUT_S, &r);
	if (fd != 1 && close(fd) < 0 && rc == 0) {
		fprintf(stderr, "%s: %s: %s\n", cl.cmd, file, strerror(errno));
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
	struct cli_client cl = { .cmd = "vitrine template import" };
	const char *name = NULL, *base, *file;
	char guess[64], path[128];
	struct http_resp r;
	struct stat st;
	int fd, rc;

	if ((rc = options(argc, argv, &cl, IMPORT_USAGE, &name, NULL)) >= 0)
		return rc;
	if (argc - optind != 1) {
		fprintf(stderr, "%s: a file is required\n" IMPORT_USAGE, cl.cmd);
		return 2;
	}
	file = argv[optind];
	if (!name) {
		base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
		snprintf(guess, sizeof(guess), "%.*s", (int)strcspn(base, "."), base);
		name = guess;
	}
	if (!name_ok(name)) {
		fprintf(stderr, "%s: bad template name '%s' (1-63 of a-z, 0-9, '_', '-')\n", cl.cmd,
			name);
		return 2;
	}
	if ((rc = cli_client_init(&cl)) != 0)
		return rc;
	if ((fd = open(file, O_RDONLY | O_CLOEXEC)) < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "%s: %s: %s\n", cl.cmd, file, strerror(errno));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	snprintf(path, sizeof(path), "/v1/templates/import?name=%s", name);
	rc = cli_client_request_fd(&cl, "POST", path, fd, (uint64_t)st.st_size, -1, MOVE_TIMEOUT_S,
				   &r);
	close(fd);
	if (rc == 0) {
		cli_print_json(r.json);
		http_resp_free(&r);
	}
	return rc;
}

/* "90", "90s", "15m", "12h", "7d" into seconds; -1 for anything else. */
static long long duration_s(const char *s)
{
	char *end;
	long long n = strtoll(s, &end, 10);
	int unit = !*end	       ? 1
		   : !strcmp(end, "s") ? 1
		   : !strcmp(end, "m") ? 60
		   : !strcmp(end, "h") ? 3600
		   : !strcmp(end, "d") ? 86400
				       : 0;

	if (end == s || n < 0 || unit == 0 || n > 10LL * 366 * 86400 / unit)
		return -1;
	return n * unit;
}

int cmd_template_gc(int argc, char **argv)
{
	struct cli_client cl = { .cmd = "vitrine template gc" };
	const char *older = NULL;
	struct http_resp r;
	long long age;
	char path[96];
	int rc;

	if ((rc = options(argc, argv, &cl, GC_USAGE, NULL, &older)) >= 0)
		return rc;
	if (argc != optind || !older) {
		fprintf(stderr, "%s: --older-than is required\n" GC_USAGE, cl.cmd);
		return 2;
	}
	if ((age = duration_s(older)) < 0) {
		fprintf(stderr, "%s: bad duration '%s' (N, Ns, Nm, Nh or Nd, up to 10 years)\n",
			cl.cmd, older);
		return 2;
	}
	if ((rc = cli_client_init(&cl)) != 0)
		return rc;
	snprintf(path, sizeof(path), "/v1/templates/gc?older_than_s=%lld", age);
	if ((rc = cli_client_request(&cl, "POST", path, NULL, 0, 120, &r)) != 0)
		return rc;
	cli_print_json(r.json);
	http_resp_free(&r);
	return 0;
}
