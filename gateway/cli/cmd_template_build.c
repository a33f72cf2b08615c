/* gateway/cli/cmd_template_build.c: `vitrine template build -f FILE`: a
 * template built by the gateway from a recipe file (docs/templates.md). The
 * file's copy steps may name host files ("src", relative to the file's
 * folder): this command reads them and sends their bytes (the gateway reads
 * no host files for its clients), posts {"name", "recipe"} to POST
 * /v1/templates and follows the build (GET every 250 ms), printing each
 * step's output lines as they come (the running step's output is in the
 * build's JSON, with how many bytes each stream sent) and its name, status,
 * time and exit code once it ended. A client of the gateway, like
 * `template save`. */
#include "common/base64.h"
#include "common/fsutil.h"
#include "common/http_client.h"
#include "gateway/cli/cli.h"
#include "gateway/cli/cmd_opts.h"

#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_FILE (1u << 20) /* the gateway's body limit */

/* Replaces each copy step's "src" by "content_b64", the file's bytes
 * (relative paths from dir). 0, or 1 after printing why. */
static int inline_sources(const char *cmd, json_t *recipe, const char *dir)
{
	json_t *steps = json_object_get(recipe, "steps"), *step;
	size_t i;

	json_array_foreach(steps, i, step)
	{
		json_t *copy = json_object_get(step, "copy");
		const char *src = json_string_value(json_object_get(copy, "src"));
		char path[PATH_MAX], *data = NULL, *b64;
		size_t len = 0;

		if (!src)
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", src[0] == '/' ? "" : dir, src) >=
			    sizeof(path) ||
		    fs_read_file(path, MAX_FILE, &data, &len) < 0) {
			fprintf(stderr, "%s: step %zu: cannot read %s (at most 1 MiB)\n", cmd,
				i + 1, path);
			return 1;
		}
		b64 = base64_encode(data, len, NULL);
		free(data);
		if (!b64 || json_object_set_new(copy, "content_b64", json_string(b64)) < 0) {
			free(b64);
			fprintf(stderr, "%s: out of memory\n", cmd);
			return 1;
		}
		free(b64);
		json_object_del(copy, "src");
	}
	return 0;
}

/* The recipe of file (without its "name", which goes to *name when
 * none was given), ready to post; NULL after printing why. */
static json_t *load_recipe(const char *cmd, const char *file, const char **name, char *name_buf,
			   size_t name_len)
{
	char dir[PATH_MAX];
	json_error_t jerr;
	json_t *j = json_load_file(file, JSON_REJECT_DUPLICATES, &jerr), *n;

	if (!json_is_object(j)) {
		fprintf(stderr, "%s: %s: %s\n", cmd, file,
			j ? "a recipe is a JSON object" : jerr.text);
		json_decref(j);
		return NULL;
	}
	n = json_object_get(j, "name");
	if (!*name && json_is_string(n)) {
		snprintf(name_buf, name_len, "%s", json_string_value(n));
		*name = name_buf;
	}
	json_object_del(j, "name");
	snprintf(dir, sizeof(dir), "%s", file);
	if (inline_sources(cmd, j, dirname(dir))) {
		json_decref(j);
		return NULL;
	}
	return j;
}

/* Where the printing of a build's steps is: the step under way (those
 * before it were printed whole) and how many bytes of its stdout and
 * stderr were. */
struct follow {
	size_t step;
	uint64_t shown[2];
};

/* Prints what step s's stream key has sent since *shown: whole lines while
 * it runs (a line of HOLD_MAX bytes or more without its end too), all of it
 * once it ended. Bytes the build no longer keeps (more than its tail came
 * between two looks) are counted in a line of their own. */
#define HOLD_MAX 4096
static void show_stream(const json_t *s, const char *key, uint64_t *shown, bool ended)
{
	char bytes_key[32];
	const json_t *t = json_object_get(s, key), *n;
	const char *text = json_string_value(t), *p, *nl;
	size_t len = json_string_length(t), fresh;
	uint64_t total;

	snprintf(bytes_key, sizeof(bytes_key), "%s_bytes", key);
	n = json_object_get(s, bytes_key);
	/* a gateway before stdout_bytes: the text once the step ended */
	total = json_is_integer(n) ? (uint64_t)json_integer_value(n) : ended ? len : 0;
	if (!text || total <= *shown)
		return;
	if (total - *shown > len) {
		fprintf(stderr, "[%llu bytes of %s not shown]\n",
			(unsigned long long)(total - *shown - len), key);
		*shown = total - len;
	}
	fresh = (size_t)(total - *shown);
	p = text + len - fresh;
	if (!ended && (nl = memrchr(p, '\n', fresh)))
		fresh = (size_t)(nl - p) + 1;
	else if (!ended && fresh < HOLD_MAX)
		return; /* the rest of the line comes later */
	fwrite(p, 1, fresh, stderr);
	if (ended && p[fresh - 1] != '\n')
		fputc('\n', stderr);
	*shown += fresh;
}

/* Prints what build's steps did since the last call: the output lines of
 * the step under way as they come, and once a step ended the rest of its
 * output and its name, status, time and exit code. */
static void show_steps(const json_t *build, struct follow *f)
{
	json_t *steps = json_object_get(build, "steps");

	for (size_t i = f->step; i < json_array_size(steps); i++) {
		json_t *s = json_array_get(steps, i);
		const char *status = json_string_value(json_object_get(s, "status"));
		bool ended = status && strcmp(status, "pending") && strcmp(status, "running");

		if (!status || !strcmp(status, "pending"))
			break;
		show_stream(s, "stdout", &f->shown[0], ended);
		show_stream(s, "stderr", &f->shown[1], ended);
		if (!ended)
			break;
		fprintf(stderr, "step %zu/%zu %s: %s in %lld ms", i + 1, json_array_size(steps),
			json_string_value(json_object_get(s, "name")), status,
			(long long)json_integer_value(json_object_get(s, "ms")));
		if (json_object_get(s, "exit_code"))
			fprintf(stderr, " (exit code %lld)",
				(long long)json_integer_value(json_object_get(s, "exit_code")));
		fputc('\n', stderr);
		*f = (struct follow){ .step = i + 1 };
	}
}

int cmd_template_build(int argc, char **argv)
{
	struct template_build_config cfg;
	struct cli_client *cl = &cfg.cl;
	const char *file, *name, *status;
	char name_buf[128], path[160], err[512], *text;
	bool wait;
	struct http_resp r;
	struct follow follow = { 0 };
	json_t *recipe, *body;
	int rc = cli_template_build_parse(&cfg, argc, argv, err, sizeof(err));

	if ((rc = cli_cmd_answer(&cli_template_build_cmd, rc, err)) >= 0)
		return rc;
	file = cfg.file;
	name = cfg.name;
	wait = !cfg.no_wait;
	if (!(recipe = load_recipe(cl->cmd, file, &name, name_buf, sizeof(name_buf))))
		return 2;
	if (!name || !name[0] ||
	    strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_-") != strlen(name) ||
	    strlen(name) > 55) {
		json_decref(recipe);
		fprintf(stderr,
			"%s: give the template's name (--name, or \"name\" in the file): "
			"1-55 of a-z, 0-9, '_', '-'\n",
			cl->cmd);
		return 2;
	}
	if ((rc = cli_client_init(cl)) != 0) {
		json_decref(recipe);
		return rc;
	}
	body = json_pack("{s:s, s:o}", "name", name, "recipe", recipe);
	text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	json_decref(body);
	if (!text) {
		fprintf(stderr, "%s: out of memory\n", cl->cmd);
		return 1;
	}
	rc = cli_client_request(cl, "POST", "/v1/templates", text, strlen(text), 60, &r);
	free(text);
	if (rc)
		return rc;
	if (json_is_true(json_object_get(r.json, "up_to_date")))
		fprintf(stderr, "template %s is up to date\n", name);
	snprintf(path, sizeof(path), "/v1/templates/%s", name);
	while (wait && !cli_interrupted) {
		status = json_string_value(json_object_get(r.json, "status"));
		show_steps(r.json, &follow);
		if (!status || strcmp(status, "building"))
			break;
		http_resp_free(&r);
		usleep(250 * 1000);
		if ((rc = cli_client_request(cl, "GET", path, NULL, 0, 60, &r)) != 0)
			return rc;
	}
	cli_print_json(r.json);
	status = json_string_value(json_object_get(r.json, "status"));
	rc = wait && (!status || strcmp(status, "ready"));
	if (rc && status && !strcmp(status, "failed"))
		fprintf(stderr, "%s: %s\n", cl->cmd,
			json_string_value(json_object_get(r.json, "error")));
	http_resp_free(&r);
	return rc;
}
