/*
 * cli.h - what the files of rewrite/cli/ share: the commands (run.c,
 * remap.c), the options and their errors (options.c) and run's journal
 * (journal.c).
 * The command line is the only code that prints errors and picks the
 * exit status; everything below it returns a struct err.
 */
#ifndef MIGRATE_CLI_H
#define MIGRATE_CLI_H

#include "../git/git.h"
#include "../engine/engine.h"

/*
 * migrate run (argv[0] is "run"): fast-export | filter | fast-import with
 * state under <git-dir>/migrate/ (run.c). 0, or -1 with e set.
 */
int rw_cmd_run(int argc, char **argv, struct err *e);

/*
 * migrate remap (argv[0] is "remap"): rebases the local branches of the
 * current clone onto the new history through the commit map (remap.c).
 * 0, or -1 with e set (some branch not moved: ERR_IO).
 */
int rw_cmd_remap(int argc, char **argv, struct err *e);

/*
 * migrate analyze (argv[0] is "analyze"): what is big in a repository,
 * and what rules would take (analyze.c over rewrite/analyze/). 0, or -1
 * with e set.
 */
int rw_cmd_analyze(int argc, char **argv, struct err *e);

/*
 * migrate cat-object (hidden, for the tests): `git cat-file --batch`'s
 * output for the ids on standard input, through rewrite/git/odb.c
 * (catobj.c). 0, or -1 with e set.
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

/* What a command's parse needs besides argv. */
struct cli_command_options {
	unsigned cmd;			/* one of the CLI_* commands */
	/* the command's own, NULL-ended, or NULL; an own option may have
	 * the name of a shared one the command does not take (remap's
	 * --commit-map, which reads the map rather than writes it) */
	const struct cli_option *own;
	void *own_opts;			/* the struct their fields are in */
	const char *usage;		/* --help: the text before the options */
	const char *usage_tail;		/* after them, or NULL */
	int stop_at_arg;		/* options end at the first argument */
};

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

/*
 * journal.c: crash safety of `migrate run`: the lock on the state
 * directory, the journal written before the first ref changes, and the
 * way an interrupted run is finished or rolled back at the next start.
 * Folder-internal (run.c).
 *
 * A run imports into a side repository (<state>/import.git, sharing the
 * objects of the real one), so no ref of the repository moves before the
 * journal exists. The journal (<state>/journal, written atomically) holds
 * the old and new value of every ref the run moves, the work trees to
 * reset, and the state files to rename from <name>.new. Finishing moves
 * the refs in one `git update-ref --stdin` transaction, resets the work
 * trees, renames the state files (keeping <name>.prev until the journal is
 * gone, so that a roll-back can restore them) and removes the journal.
 */
struct jref {
	char *name;
	struct oid old, new;	/* null: the ref does not exist */
	int no_deref;		/* HEAD itself (detached), not its branch */
};

struct journal {
	char *state;		/* the state directory */
	char *dir;		/* the repository written (git -C) */
	char *gitdir, *commondir;
	int worktree;		/* reset the work tree of dir */
	char **wts;		/* linked work trees to reset */
	size_t nwts;
	struct jref *refs;
	size_t nrefs, refs_alloc;
	char **files;		/* state files: <state>/<name>.new -> <name> */
	size_t nfiles;
};

void journal_add_ref(struct journal *j, const char *name,
		     const struct oid *old, const struct oid *new,
		     int no_deref);
void journal_add_file(struct journal *j, const char *name);
void journal_add_wt(struct journal *j, const char *path);
void journal_free(struct journal *j);

/* Writes <state>/journal atomically (temp, fsync, rename, fsync of the
 * directory). 0, or -1 with e set. */
int journal_write(const struct journal *j, struct err *e);

/* Loads <state>/journal: 1 found, 0 none, -1 malformed (e set). */
int journal_load(struct journal *j, const char *state, struct err *e);

/*
 * Finishes the journal's run (refs, work trees, state files, then the
 * journal goes), or rolls it back (refs to their old values, work trees
 * reset to them, state files as before). recovering: the run was killed;
 * lock files it may have left (<ref>.lock of its refs, packed-refs.lock,
 * index.lock) are removed first and *locks counts them. A ref that holds
 * neither its old nor its new value is an error and nothing moves.
 * journal_finish returns -2 when its ref transaction failed (no ref
 * moved), -1 when a later step failed (the journal stays).
 */
int journal_finish(const struct journal *j, int recovering, size_t *locks,
		   struct err *e);
int journal_rollback(const struct journal *j, size_t *locks, struct err *e);

/* Forgets a journal whose refs never moved (its transaction failed):
 * removes the <name>.new state files and the journal. */
void journal_drop(const struct journal *j);

/* The state folder (<git-dir>/migrate) is a folder or not there yet; a
 * symbolic link or a file is an ERR_USAGE error. */
int state_dir_check(const char *state, struct err *e);

/*
 * Takes the lock on <state>/lock (flock, not waiting); *fd holds it until
 * the process ends. Another run holding it is an ERR_USAGE error.
 */
int state_lock(const char *state, int *fd, struct err *e);

/*
 * With no journal: removes what an interrupted run of ours left in the
 * state directory (<name>.new, <name>.prev, <name>.tmp-XXXXXX, import.git)
 * and in the store (tmp/put-<pid>-<seq>-<ns> of processes that no longer
 * run): names matched exactly, folders that are symbolic links left alone.
 * Returns how many entries it removed.
 */
size_t state_clean(const char *state, const char *store);

/*
 * Removes the pack-<hash>.keep files in packdir that hold exactly
 * "fast-import": what a git fast-import killed before its end left (it
 * removes its own when it ends). A retry of the same stream writes a pack
 * of the same name and would die on the keep file ("cannot create keep
 * file"). The packs themselves stay. Also the temp files of packs the
 * filter was writing (tmp_migrate_*, rewrite/git/packw.c). Returns how
 * many it removed.
 */
size_t import_keeps_clean(const char *packdir);
/* Removes dir and everything below it (symlinks themselves, never what
 * they name). 0, or -1 (errno set) when something stayed. */
int remove_tree(const char *dir);

#endif
