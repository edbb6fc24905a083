/*
 * options.c - the message for a command-line option getopt_long refused:
 * which option, and the nearest one that exists (git's "did you mean").
 */
#include <getopt.h>
#include <string.h>

#include "../engine/engine.h"
#include "cli.h"

#define NAME_MAX_LEN 64

/* Edit distance with adjacent transpositions counted as one edit
 * (optimal string alignment): "rulse" is one step from "rules". */
static size_t distance(const char *a, size_t la, const char *b, size_t lb)
{
	size_t d[NAME_MAX_LEN + 1][NAME_MAX_LEN + 1], i, j, best;

	if (la > NAME_MAX_LEN || lb > NAME_MAX_LEN)
		return (size_t)-1;
	for (i = 0; i <= la; i++)
		d[i][0] = i;
	for (j = 0; j <= lb; j++)
		d[0][j] = j;
	for (i = 1; i <= la; i++) {
		for (j = 1; j <= lb; j++) {
			size_t cost = a[i - 1] != b[j - 1];

			best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (d[i - 1][j - 1] + cost < best)
				best = d[i - 1][j - 1] + cost;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	}
	return d[la][lb];
}

/* The long option nearest to name[0..len), or NULL if none is close:
 * at most 2 edits, and fewer than half the name. */
static const char *nearest(const struct option *opts, const char *name,
			   size_t len)
{
	const char *best = NULL;
	size_t best_d = (size_t)-1, d;

	for (; opts->name; opts++) {
		d = distance(name, len, opts->name, strlen(opts->name));
		if (d < best_d) {
			best_d = d;
			best = opts->name;
		}
	}
	return best && best_d <= 2 && 2 * best_d < len ? best : NULL;
}

int rw_option_error(struct err *e, const struct option *opts, char **argv,
		    int next, int bad_short)
{
	const struct option *o;
	const char *arg = argv[next - 1], *name, *near;
	size_t len;

	if (bad_short) {
		for (o = opts; o->name; o++)
			if (o->val == bad_short && o->has_arg == required_argument)
				return err_set(e, ERR_USAGE, "option '--%s' needs a "
					       "value", o->name);
		if (bad_short > 0 && bad_short < 256)
			return err_set(e, ERR_USAGE, "unknown switch '%c'",
				       bad_short);
		return err_set(e, ERR_USAGE, "unknown option '%s'", arg);
	}
	name = arg;
	while (*name == '-')
		name++;
	len = strcspn(name, "=");
	near = nearest(opts, name, len);
	if (near)
		return err_set(e, ERR_USAGE, "unknown option '%.*s'\n"
			       "did you mean '--%s'?", (int)len, name, near);
	return err_set(e, ERR_USAGE, "unknown option '%.*s'", (int)len, name);
}
