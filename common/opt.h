/* common/opt.h: a command's options as one table. Each row is one option:
 * its long name, its letter, its argument, its help text and the function
 * that puts the argument into the command's configuration. opt_parse walks
 * a command line against the rows the way GNU getopt_long does (long names
 * and their unique prefixes, --name=value, letters and their groups,
 * non-options anywhere, "--"), with getopt_long's own messages; opt_usage
 * prints the help from the same rows.
 *
 * Parsing is pure: no output, no globals, argv untouched; what is wrong
 * comes back in a buffer and the caller decides what to print. */
#ifndef VITRINE_COMMON_OPT_H
#define VITRINE_COMMON_OPT_H

#include <stddef.h>
#include <stdio.h>

struct opt;

/* Puts arg (NULL for an option that takes none) into conf as row o says.
 * Returns 0, or -1 with the whole message (its prefix too) in err. */
typedef int (*opt_set_fn)(const struct opt *o, void *conf, const char *arg, char *err,
			  size_t errlen);

struct opt {
	const char *name; /* the long name, without "--" */
	char letter; /* the short name; 0: none */
	const char *arg; /* the argument's name in the help; NULL: takes none */
	const char *help; /* its lines, \n between them; NULL: left out of the help */
	opt_set_fn set; /* NULL: the help option (opt_parse stops at it) */
	size_t off; /* where in conf the opt_set_* below write */
	int min, max; /* opt_set_int's range */
};

/* What opt_parse returns. */
enum opt_status {
	OPT_OK = 0,
	OPT_HELP = 1, /* the help option came: nothing after it was read */
	OPT_BAD_LINE = -1, /* an unknown option, a missing or extra argument: err says it
			    * as getopt_long does, and the command's usage should follow */
	OPT_BAD_VALUE = -2, /* a row's set refused its argument: err says why */
};

#define OPT_MAX_ARGS 16

/* The non-options of a command line, in their order. */
struct opt_args {
	const char *v[OPT_MAX_ARGS]; /* the first OPT_MAX_ARGS of them, pointing into argv */
	int n; /* how many there were, also past OPT_MAX_ARGS */
};

/* Reads argv[1..argc-1] against rows (n_rows of them) into conf, and the
 * non-options into *args. argv[0] names the command in err's messages.
 * Returns an enum opt_status; on an error err holds one message, without
 * a newline. This function only reads argv. */
int opt_parse(const struct opt *rows, size_t n_rows, void *conf, int argc, char *const *argv,
	      struct opt_args *args, char *err, size_t errlen);

/* The rows' help, one option a paragraph: "  --name ARG" (a row with a
 * letter: "  -l, --name ARG") and the help's
 * first line from column 24 (two spaces after a longer head), the help's
 * other lines below it in the same column. */
void opt_usage(FILE *f, const struct opt *rows, size_t n_rows);

/* Setters for the rows' set. opt_set_flag: a bool at off, made true.
 * opt_set_str: a const char * at off, pointed at the argument. opt_set_int:
 * an int at off, a whole number in [min, max] (else err is "vitrine:
 * --NAME must be a whole number in MIN..MAX, not 'ARG'"). */
int opt_set_flag(const struct opt *o, void *conf, const char *arg, char *err, size_t errlen);
int opt_set_str(const struct opt *o, void *conf, const char *arg, char *err, size_t errlen);
int opt_set_int(const struct opt *o, void *conf, const char *arg, char *err, size_t errlen);

/* s as a whole decimal number in [min, max] into *out: 0, or -1 with
 * "vitrine: WHAT must be a whole number in MIN..MAX, not 'S'" in err (the
 * CLI's message for every number it takes). */
int opt_parse_int(const char *what, const char *s, int min, int max, int *out, char *err,
		  size_t errlen);

#endif
