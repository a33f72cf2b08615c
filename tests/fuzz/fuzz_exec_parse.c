/* tests/fuzz/fuzz_exec_parse.c: libFuzzer target for the body of POST
 * /v1/sessions/{id}/exec (exec_parse, gateway/guest/exec.c): what a
 * client asks the guest to run, as whom, where and with what. The input
 * is the body. Checked besides "no crash":
 *   - an accepted body runs what it says: argv is cmd and args (or
 *     /bin/sh -c cmd), as root only when "user" is "root", in exactly the
 *     "cwd" it gave (an absolute path) or the user's home, with a timeout
 *     in 1..EXEC_MAX_TIMEOUT_S s and the stdin it gave (stdin_b64 decoded);
 *   - every environment entry is NAME=VALUE with a non-empty NAME;
 *   - a refused body is a 400 with a code and a message, and frees all. */
#include "common/base64.h"
#include "gateway/guest/exec.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(struct exec_job *j, json_t *body)
{
	const char *const *argv = exec_argv(j), *const *env = exec_env(j);
	const char *cmd = json_string_value(json_object_get(body, "cmd"));
	const char *user = json_string_value(json_object_get(body, "user"));
	json_t *cwd = json_object_get(body, "cwd"), *args = json_object_get(body, "args");
	json_t *in = json_object_get(body, "stdin"), *in64 = json_object_get(body, "stdin_b64");
	bool root = user && !strcmp(user, "root");
	const void *stdin_data;
	size_t len, i;
	json_t *a;

	if (!cmd || exec_as_root(j) != root || !argv || !argv[0] || !env)
		__builtin_trap();
	if (args) {
		if (strcmp(argv[0], cmd))
			__builtin_trap();
		json_array_foreach(args, i,
				   a) if (!argv[i + 1] || strcmp(argv[i + 1], json_string_value(a)))
			__builtin_trap();
		if (argv[json_array_size(args) + 1])
			__builtin_trap();
	} else if (strcmp(argv[0], "/bin/sh") || strcmp(argv[1], "-c") || strcmp(argv[2], cmd) ||
		   argv[3]) {
		__builtin_trap();
	}
	if (strcmp(exec_cwd(j), cwd ? json_string_value(cwd) : root ? "/root" : "/home/vitrine"))
		__builtin_trap();
	if (exec_cwd(j)[0] != '/')
		__builtin_trap();
	if (exec_timeout_ms(j) < 1000 || exec_timeout_ms(j) > EXEC_MAX_TIMEOUT_S * 1000)
		__builtin_trap();
	for (i = 0; env[i]; i++)
		if (env[i][0] == '=' || !strchr(env[i], '='))
			__builtin_trap();
	stdin_data = exec_stdin(j, &len);
	if (in) {
		if (len != json_string_length(in) ||
		    (len && memcmp(stdin_data, json_string_value(in), len)))
			__builtin_trap();
	} else if (in64) {
		const char *b = json_string_value(in64);
		size_t n;
		unsigned char *dec = malloc(strlen(b) + 1);

		if (!dec || base64_decode(b, strlen(b), dec, strlen(b), &n) || n != len ||
		    (n && memcmp(dec, stdin_data, n)))
			__builtin_trap();
		free(dec);
	} else if (len) {
		__builtin_trap();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct api_error e = { 0 };
	struct exec_job *j = exec_parse((const char *)data, size, &e);
	json_t *body;

	if (!j) {
		if (e.status != 400 || !e.code[0] || !e.message[0])
			__builtin_trap();
		return 0;
	}
	body = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(body))
		__builtin_trap();
	check(j, body);
	json_decref(body);
	exec_free(j);
	return 0;
}
