/* gateway/cli.h: the `vitrine` subcommands, each in its own file, and the
 * small argument helpers they share. */
#ifndef VITRINE_GATEWAY_CLI_H
#define VITRINE_GATEWAY_CLI_H

#include <signal.h>

/* Set by SIGINT/SIGTERM; long-running commands poll it and clean up. */
extern volatile sig_atomic_t cli_interrupted;

int cmd_boot(int argc, char **argv);
int cmd_accel(int argc, char **argv);
int cmd_gc(int argc, char **argv);
int cmd_serve(int argc, char **argv);

/* Parses a whole decimal int in [min, max]; prints a CLI error naming opt
 * and returns -1 when s is not one. */
int cli_parse_int(const char *opt, const char *s, int min, int max, int *out);

#endif
