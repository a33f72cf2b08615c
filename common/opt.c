/* common/opt.c: see opt.h. The messages are glibc getopt_long's, word for
 * word, so that a command moved onto a table says what it said before. */
#include "common/opt.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define USAGE_COLUMN 23 /* where the help text starts, after "  --name ARG" */

static void add_arg(struct opt_args *args, const char *a)
{
	if (args->n < OPT_MAX_ARGS)
		args->v[args->n] = a;
	args->n++;
}

/* The row for "--text" (text up to an '=' or its end): the one named so,
 * else the one whose name text begins. NULL with err set when none or
 * several are. */
static const struct opt *find_long(const struct opt *rows, size_t n_rows, const char *prog,
				   const char *text, char *err, size_t errlen)
{
	size_t len = strcspn(text, "=");
	const struct opt *found = NULL;
	int matches = 0;

	for (size_t i = 0; i < n_rows; i++)
		if (!strncmp(rows[i].name, text, len) && rows[i].name[len] == '\0')
			return &rows[i];
	for (size_t i = 0; i < n_rows; i++)
		if (!strncmp(rows[i].name, text, len)) {
			found = found ? found : &rows[i];
			matches++;
		}
	if (matches == 1)
		return found;
	if (!matches) {
		snprintf(err, errlen, "%s: unrecognized option '--%s'", prog, text);
		return NULL;
	}
	{
		int used = snprintf(err, errlen,
				    "%s: option '--%s' is ambiguous; possibilities:", prog, text);

		for (size_t i = 0; i < n_rows; i++)
			if (!strncmp(rows[i].name, text, len) && used >= 0 && (size_t)used < errlen)
				used += snprintf(err + used, errlen - (size_t)used, " '--%s'",
						 rows[i].name);
	}
	return NULL;
}

static const struct opt *find_letter(const struct opt *rows, size_t n_rows, char c)
{
	for (size_t i = 0; i < n_rows; i++)
		if (rows[i].letter && rows[i].letter == c)
			return &rows[i];
	return NULL;
}

/* Gives row o its argument arg: OPT_OK, OPT_HELP or OPT_BAD_VALUE. */
static int take(const struct opt *o, void *conf, const char *arg, char *err, size_t errlen)
{
	if (!o->set)
		return OPT_HELP;
	return o->set(o, conf, arg, err, errlen) < 0 ? OPT_BAD_VALUE : OPT_OK;
}

/* "-abc" at argv[*i]: each letter an option; one that takes an argument
 * takes the rest of the word, else the next word. */
static int parse_letters(const struct opt *rows, size_t n_rows, void *conf, int argc,
			 char *const *argv, int *i, char *err, size_t errlen)
{
	const char *word = argv[*i];

	for (const char *p = word + 1; *p; p++) {
		const struct opt *o = find_letter(rows, n_rows, *p);
		const char *arg = NULL;
		int rc;

		if (!o) {
			snprintf(err, errlen, "%s: invalid option -- '%c'", argv[0], *p);
			return OPT_BAD_LINE;
		}
		if (o->arg) {
			if (p[1])
				arg = p + 1;
			else if (*i + 1 < argc)
				arg = argv[++*i];
			else {
				snprintf(err, errlen, "%s: option requires an argument -- '%c'",
					 argv[0], *p);
				return OPT_BAD_LINE;
			}
		}
		rc = take(o, conf, arg, err, errlen);
		if (rc != OPT_OK || arg)
			return rc;
	}
	return OPT_OK;
}

int opt_parse(const struct opt *rows, size_t n_rows, void *conf, int argc, char *const *argv,
	      struct opt_args *args, char *err, size_t errlen)
{
	const char *prog = argc > 0 ? argv[0] : "";

	memset(args, 0, sizeof(*args));
	for (int i = 1; i < argc; i++) {
		const char *word = argv[i], *arg = NULL, *eq;
		const struct opt *o;
		int rc;

		if (!strcmp(word, "--")) {
			while (++i < argc)
				add_arg(args, argv[i]);
			break;
		}
		if (word[0] != '-' || word[1] == '\0') {
			add_arg(args, word);
			continue;
		}
		if (word[1] != '-') {
			rc = parse_letters(rows, n_rows, conf, argc, argv, &i, err, errlen);
			if (rc != OPT_OK)
				return rc;
			continue;
		}
		o = find_long(rows, n_rows, prog, word + 2, err, errlen);
		if (!o)
			return OPT_BAD_LINE;
		eq = strchr(word + 2, '=');
		if (eq && !o->arg) {
			snprintf(err, errlen, "%s: option '--%s' doesn't allow an argument", prog,
				 o->name);
			return OPT_BAD_LINE;
		}
		if (eq)
			arg = eq + 1;
		else if (o->arg && i + 1 < argc)
			arg = argv[++i];
		else if (o->arg) {
			snprintf(err, errlen, "%s: option '--%s' requires an argument", prog,
				 o->name);
			return OPT_BAD_LINE;
		}
		rc = take(o, conf, arg, err, errlen);
		if (rc != OPT_OK)
			return rc;
	}
	return OPT_OK;
}

void opt_usage(FILE *f, const struct opt *rows, size_t n_rows)
{
	for (size_t i = 0; i < n_rows; i++) {
		const struct opt *o = &rows[i];
		const char *line = o->help;
		int head;

		if (!line)
			continue;
		if (o->letter)
			head = fprintf(f, "  -%c, --%s%s%s", o->letter, o->name, o->arg ? " " : "",
				       o->arg ? o->arg : "");
		else
			head = fprintf(f, "  --%s%s%s", o->name, o->arg ? " " : "",
				       o->arg ? o->arg : "");
		fprintf(f, "%*s", head < USAGE_COLUMN - 1 ? USAGE_COLUMN - head : 2, "");
		for (;;) {
			size_t len = strcspn(line, "\n");

			fprintf(f, "%.*s\n", (int)len, line);
			if (!line[len])
				break;
			line += len + 1;
			fprintf(f, "%*s", USAGE_COLUMN, "");
		}
	}
}

int opt_set_flag(const struct opt *o, void *conf, const char *arg, char *err, size_t errlen)
{
	(void)arg;
	(void)err;
	(void)errlen;
	*(bool *)((char *)conf + o->off) = true;
	return 0;
}

int opt_set_str(const struct opt *o, void *conf, const char *arg, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	*(const char **)((char *)conf + o->off) = arg;
	return 0;
}

int opt_parse_int(const char *what, const char *s, int min, int max, int *out, char *err,
		  size_t errlen)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max) {
		snprintf(err, errlen, "vitrine: %s must be a whole number in %d..%d, not '%s'",
			 what, min, max, s);
		return -1;
	}
	*out = (int)v;
	return 0;
}

int opt_set_int(const struct opt *o, void *conf, const char *arg, char *err, size_t errlen)
{
	char what[80];

	snprintf(what, sizeof(what), "--%s", o->name);
	return opt_parse_int(what, arg, o->min, o->max, (int *)((char *)conf + o->off), err,
			     errlen);
}
