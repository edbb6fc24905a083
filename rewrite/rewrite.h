/*
 * rewrite.h - the engine: reads a fast-export stream, applies the rules,
 * writes the fast-import stream, computes the id of every object it
 * writes, and leaves the commit map, ref map and marks behind.
 */
#ifndef MIGRATE_REWRITE_H
#define MIGRATE_REWRITE_H

#include "../common/common.h"

struct rw_options {
	const char *rules;		/* rule file, or NULL */
	const char *store;		/* LFS store directory */
	const char *commit_map;		/* loaded if present, then extended */
	const char *commit_map_format;	/* filter-repo (default), lfs, bfg */
	const char *ref_map;
	const char *export_marks;
	const char *source_repo;	/* NULL: the current directory's */
	const char *target_repo;	/* NULL: same as source */
	const char *input_name;		/* for messages: "<stdin>" */
	int quiet;
	int verify_split;		/* report versions that do not reassemble */

	/* dry runs and reports (issue 5) */
	int dry_run;			/* store nothing; no output unless output */
	const char *output;		/* -o FILE: where the stream goes in a dry run */
	const char *report;		/* human table; "-" is stderr */
	const char *report_json;
	int progress;			/* 1 force, 0 when stderr is a tty, -1 never */
	uint64_t progress_total;	/* commits to expect (0: unknown) */
	int rewrite_message_ids;	/* old ids in messages -> new (default 1) */
	/* fast-import's --date-format, which overrides the stream's
	 * `feature date-format` (NULL: none given, raw unless the stream
	 * says otherwise); raw and raw-permissive only */
	const char *date_format;
};

/*
 * Filters in_fd into out_fd. Returns 0, or -1 with e set (its kind is the
 * exit status). The output starts with `feature done` and ends with
 * `done` only when everything succeeded, so fast-import never commits a
 * partial stream; the maps are renamed into place only then too.
 */
int rw_filter(const struct rw_options *opt, int in_fd, int out_fd,
	      struct err *e);

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
