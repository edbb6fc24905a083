/*
 * cli.h - what the files of rewrite/cli/ share: the commands (cmd_run.c,
 * cmd_push.c, cmd_remap.c, cmd_analyze.c, cmd_catobj.c) and the options
 * and their errors (options.c).
 * The command line is the only code that prints errors and picks the
 * exit status; everything below it returns a struct err.
 */
#ifndef MIGRATE_CLI_H
#define MIGRATE_CLI_H

#include "../git/git.h"
#include "../engine/engine.h"

/*
 * migrate run (argv[0] is "run"): fast-export | filter | fast-import with
 * state under <git-dir>/migrate/ (cmd_run.c). 0, or -1 with e set.
 */
int rw_cmd_run(int argc, char **argv, struct err *e);

/*
 * A dry run's list of the rules in effect on standard error (cmd_run.c),
 * after "WHO: dry run: N rule(s) in effect ...": each in the rule
 * language with the file (or option) and line it comes from, the first
 * 200 (longer ones cut). Nothing for an empty set or NULL. With fixup,
 * a line saying what --fixup converts first (it is no rule).
 */
struct rules;
void cli_list_rules(const char *who, const struct rules *rules, int fixup);

/*
 * migrate remap (argv[0] is "remap"): rebases the local branches of the
 * current clone onto the new history through the commit map (cmd_remap.c).
 * 0, or -1 with e set (some branch not moved: ERR_IO).
 */
int rw_cmd_remap(int argc, char **argv, struct err *e);

/*
 * migrate push [REMOTE] (argv[0] is "push"): publishes a finished
 * in-place run: the LFS objects of the new history, then the remote's
 * rewritten refs with --force-with-lease (cmd_push.c). 0, or -1 with e set.
 */
int rw_cmd_push(int argc, char **argv, struct err *e);

/*
 * migrate analyze (argv[0] is "analyze"): what is big in a repository,
 * and what rules would take (cmd_analyze.c over rewrite/analyze/). 0, or -1
 * with e set.
 */
int rw_cmd_analyze(int argc, char **argv, struct err *e);

/*
 * migrate cat-object (hidden, for the tests): `git cat-file --batch`'s
 * output for the ids on standard input, through rewrite/git/odb.c
 * (cmd_catobj.c). 0, or -1 with e set.
 */
int rw_cmd_cat_object(int argc, char **argv, struct err *e);

/*
 * The options of the command line (options.c), declared once: the
 * options the filter and `migrate run` share live in one table there
 * (struct rw_options fields, help text), each marked with the commands
 * that take it; a command adds its own in a table of the same shape over
 * its own struct (run.c: --to, --in-place, ...).
 */
enum cli_kind {
	CLI_STRING,	/* --NAME ARG: field is a const char * */
	CLI_SET,	/* --NAME: field is an int, set to value */
	CLI_HELP,	/* prints the usage and the option list */
	CLI_VERSION,	/* the caller prints the version */
};

#define CLI_FILTER 1u	/* the filter (no command) and check-rules */
#define CLI_RUN 2u	/* migrate run */
#define CLI_ANALYZE 4u	/* migrate analyze */
#define CLI_REMAP 8u	/* migrate remap */
#define CLI_PUSH 16u	/* migrate push */
/* cmds of a command's own option: the synopsis says "(--this | --next)",
 * one of them required, for this and the options after it so marked */
#define CLI_ONE_OF 0x100u

struct cli_option {
	const char *name;	/* the long name, without -- */
	int short_name;		/* 'q', or 0 */
	enum cli_kind kind;
	const char *arg;	/* CLI_STRING: the value's name in --help */
	size_t field;		/* offsetof the field in the options struct */
	int value;		/* CLI_SET: what the field becomes */
	/* after the field is set: refuses a bad value (-1, e set) or sets
	 * what the option implies; may be NULL */
	int (*check)(void *opts, const char *arg, struct err *e);
	/* --help: what it does, lines apart by '\n'; NULL: listed on one
	 * line with the option after it, which says it */
	const char *help;
	unsigned cmds;		/* the shared table: the CLI_* commands */
};

/*
 * What a command's parse needs besides argv, and what its --help says:
 * the synopsis, made from the tables ("usage: NAME [--opt ARG]... ARGS",
 * every option the command takes, in --help's order), the lines "or:
 * ..." of the commands in also, the text about, the option list, the
 * tail.
 */
struct cli_command_options {
	unsigned cmd;			/* one of the CLI_* commands */
	/* the command's own, NULL-ended, or NULL; an own option may have
	 * the name of a shared one the command does not take (remap's
	 * --commit-map, which reads the map rather than writes it) */
	const struct cli_option *own;
	void *own_opts;			/* the struct their fields are in */
	const char *name;		/* "migrate run" */
	const char *args;		/* after the options, or NULL */
	/* --help: the text between the synopsis and the options, as it is
	 * printed: "\nText...\n" (or "   or: ..." lines first) */
	const char *about;
	const char *usage_tail;		/* after them, or NULL */
	int stop_at_arg;		/* options end at the first argument */
	/* NULL-ended: the commands whose short synopsis ("NAME [OPTIONS]
	 * (--a | --b) ARGS") follows this one's, or NULL */
	const struct cli_command_options *const *also;
};

/* The commands' tables (own_opts NULL: the parse sets a copy's), for
 * the overview of `migrate --help`. */
extern const struct cli_command_options cli_run_command, cli_push_command,
	cli_remap_command, cli_analyze_command;

/*
 * Prints c's synopsis, lead ("usage: ", "   or: ") first: every option
 * of its tables ("[-q|--quiet]", "[--rules FILE]", a CLI_ONE_OF run as
 * "(--to NEWDIR | --in-place)") then c->args, wrapped at 79 columns; or,
 * short, "[OPTIONS]" for all but the CLI_ONE_OF ones. Cannot fail.
 */
void cli_print_synopsis(FILE *f, const char *lead,
			const struct cli_command_options *c, int short_form);

#define CLI_PARSED 0
#define CLI_DONE_HELP 1		/* --help (or --list-options): printed */
#define CLI_DONE_VERSION 2	/* --version: for the caller to print */

/*
 * Parses argv[1..] (argv[0] names the command) into opt (the shared
 * options that c->cmd takes) and c->own_opts. CLI_PARSED with optind at
 * the first argument, CLI_DONE_HELP or CLI_DONE_VERSION at once when that
 * option comes, or -1 with e set (ERR_USAGE: rw_option_error's message,
 * or a check's).
 * `CMD --list-options` alone (hidden, git's --git-completion-helper) prints
 * the long options CMD takes on one line, "--NAME=" for one that takes a
 * value, in --help's order, and is CLI_DONE_HELP: the bash completion
 * (scripts/completion.bash) asks the binary rather than keep a copy.
 */
int cli_parse_options(const struct cli_command_options *c, int argc,
		      char **argv, struct rw_options *opt, struct err *e);

/*
 * After getopt_long (opterr = 0) returned '?' with optind next and optopt
 * bad_short, sets e (ERR_USAGE) to what was wrong: "option '--X' needs a
 * value", "unknown switch 'c'", or "unknown option 'NAME'" followed, when
 * a long option of opts is within two edits, by a line "did you mean
 * '--NAME'?" (options.c). Returns -1.
 */
struct option;
int rw_option_error(struct err *e, const struct option *opts, char **argv,
		    int next, int bad_short);

#endif
