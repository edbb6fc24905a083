/*
 * engine.h - the contract of rewrite/engine/: reads a fast-export stream, applies the rules,
 * writes the fast-import stream, computes the id of every object it
 * writes, and leaves the commit map, ref map and marks behind.
 */
#ifndef MIGRATE_ENGINE_H
#define MIGRATE_ENGINE_H

#include "../../common/common.h"

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

#endif
