/* gateway/cli/cli.h: the `vitrine` subcommands, each in its own file, and the
 * small argument helpers they share. */
#ifndef VITRINE_GATEWAY_CLI_H
#define VITRINE_GATEWAY_CLI_H

#include "vmm-qemu/vm.h"

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Set by SIGINT/SIGTERM; long-running commands poll it and clean up. */
extern volatile sig_atomic_t cli_interrupted;

int cmd_boot(int argc, char **argv);
/* cmd_template.c: `vitrine template`, and `boot` with or without --template. */
int cmd_template(int argc, char **argv);
/* cmd_template_pool.c: `vitrine template pool NAME N`, a gateway client. */
int cmd_template_pool(int argc, char **argv);
/* cmd_template_save.c: `vitrine template save ID NAME`, a gateway client. */
int cmd_template_save(int argc, char **argv);
/* cmd_template_build.c: `vitrine template build -f FILE`, a gateway client. */
int cmd_template_build(int argc, char **argv);
/* cmd_template_move.c: `vitrine template export|import|gc` */
int cmd_template_export(int argc, char **argv);
int cmd_template_import(int argc, char **argv);
int cmd_template_gc(int argc, char **argv);
int cmd_boot_any(int argc, char **argv);
int cmd_accel(int argc, char **argv);
int cmd_gc(int argc, char **argv);
int cmd_serve(int argc, char **argv);
/* The gateway's clients (cmd_client.c, cmd_screen.c). */
int cmd_create(int argc, char **argv);
int cmd_ls(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_rm(int argc, char **argv);
int cmd_pause(int argc, char **argv);
int cmd_resume(int argc, char **argv);
int cmd_fork(int argc, char **argv);
int cmd_screenshot(int argc, char **argv);
int cmd_act(int argc, char **argv);
/* cmd_key.c: `vitrine key create|ls|rm`, the operator's API keys. */
int cmd_key(int argc, char **argv);
int cmd_project(int argc, char **argv);

/* Parses a whole decimal int in [min, max]; prints a CLI error naming opt
 * and returns -1 when s is not one. */
int cli_parse_int(const char *opt, const char *s, int min, int max, int *out);

/* What the client subcommands share: where the gateway is and which bearer
 * token to send. "--gateway URL" and "--api-key-file FILE" are every client
 * command's options (one set of rows in cmd_opts.c); cli_client_init does
 * the rest. */
struct cli_client {
	const char *cmd; /* "vitrine ls", the prefix of every message */
	const char *gateway_url; /* --gateway, else $VITRINE_URL, else the default */
	const char *key_file; /* --api-key-file, or NULL */
	char host[256];
	int port;
	char key[512]; /* the bearer token */
};

#define CLI_DEFAULT_GATEWAY "http://127.0.0.1:8080"

struct http_resp;

/* Resolves the gateway address and loads the key. Returns 0, or the exit
 * status after printing why: 2 for a malformed URL, 1 for a missing key. */
int cli_client_init(struct cli_client *cl);
/* Sends one request and checks the answer. Returns 0 for a 2xx reply (resp
 * filled; free it), or 1 after printing the failure: no connection, no HTTP
 * reply, or the API's error code and message. */
int cli_client_request(struct cli_client *cl, const char *method, const char *path,
		       const char *body, size_t body_len, int timeout_s, struct http_resp *resp);
/* The same with the body from in_fd (in_len bytes, -1: none) and a 2xx
 * answer's body to out_fd (http_request_fd). */
int cli_client_request_fd(struct cli_client *cl, const char *method, const char *path, int in_fd,
			  uint64_t in_len, int out_fd, int timeout_s, struct http_resp *resp);
/* cli_wait.c: --wait on a terminal. True when stderr is one (the spinner
 * goes there; stdout stays the JSON). */
bool cli_wait_on_tty(void);
/* Polls session id every 250 ms until it is neither starting nor busy,
 * redrawing a spinner line with its phase on stderr (first, may be NULL:
 * an answer already in hand, drawn at once); the line is cleared at the
 * end. Returns 0 with *out the last answer (free it), or the exit status
 * after printing why (1). */
int cli_wait_session(struct cli_client *cl, const char *id, const json_t *first,
		     struct http_resp *out);
/* A spinner line on stderr, redrawn every 250 ms by a thread of its own
 * with what (kept, not copied), the phase told by cli_spinner_step and the
 * time so far: NULL (nothing drawn) when stderr is no terminal. */
struct cli_spinner *cli_spinner_start(const char *what);
/* A vmm_step_fn (vm.h) for ud, a spinner (or NULL); any thread. */
void cli_spinner_step(void *ud, enum vmm_step step);
/* Stops the thread and clears the line. Accepts NULL. */
void cli_spinner_stop(struct cli_spinner *sp);
/* Prints j on stdout as indented JSON. This function can't fail. */
void cli_print_json(const json_t *j);

#endif
