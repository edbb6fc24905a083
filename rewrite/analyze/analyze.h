/*
 * analyze.h - the contract of rewrite/analyze/: `migrate analyze`, a
 * read-only pass over a repository that says what is big, by extension
 * and by blob, deleted or not, and with a rule file what each rule would
 * take and what would remain.
 *
 * One pass, no blob content read: the sizes come from `git cat-file
 * --batch-all-objects --batch-check` (objectsize and objectsize:disk),
 * the paths from every tree of every commit reachable from the refs
 * (`--all` without refs/migrate/, as git filter-repo --analyze and git
 * lfs migrate info --everything read them), each tree read once per
 * path it sits at (one `git cat-file --batch`, pipelined).
 *
 * collect.c walks the repository; render.c writes the table and the JSON
 * document; walk.h is what they share.
 */
#ifndef MIGRATE_ANALYZE_H
#define MIGRATE_ANALYZE_H

#include <stddef.h>

#include "../../common/common.h"

struct rules;

struct analyze_options {
	const char *repo;		/* NULL: the current directory's */
	const struct rules *rules;	/* NULL: no rules */
	const char *rules_path;		/* its file, for the table */
	size_t top;			/* blobs listed, largest first; 0: all */
};

struct analysis;

/*
 * Walks the repository opt->repo. On success *out is a new analysis the
 * caller frees with analyze_free; -1 with e set otherwise (not a
 * repository: ERR_USAGE; git failing or an object missing: ERR_IO; a
 * rule's expression failing: ERR_USAGE).
 */
int analyze_repo(struct analysis **out, const struct analyze_options *opt,
		 struct err *e);
void analyze_free(struct analysis *a);

/* Appends the table (what people read) or the JSON document to out.
 * Never fail (the buffer is unbounded for them). */
void analyze_text(const struct analysis *a, struct buf *out);
void analyze_json(const struct analysis *a, struct buf *out);

#endif
