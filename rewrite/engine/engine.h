/*
 * engine.h - the contract of rewrite/engine/: reads a fast-export stream, applies the rules,
 * writes the fast-import stream, computes the id of every object it
 * writes, and leaves the commit map, ref map and marks behind.
 */
#ifndef MIGRATE_ENGINE_H
#define MIGRATE_ENGINE_H

#include "../../common/common.h"
#include "../../rules/rules.h"

/* What a finished run did (rw_options.stats). Sizes are the report's
 * (zero without one): distinct blobs, bytes, and packed bytes (on disk in
 * the source; new blobs estimated). */
struct rw_stats {
	uint64_t commits, rewritten, refs, refs_changed, converted;
	uint64_t pruned;	/* commits the rules left empty, pruned */
	uint64_t bytes_before, bytes_after, packed_before, packed_after;
	/* the rules that decided no path ("FILE:LINE PATTERN, ...", cut
	 * short when long), how many */
	uint64_t unmatched;
	char unmatched_text[512];
	/* distinct blobs decided, by the action of the rule that took them
	 * (enum rules_action: lfs, annex, drop, keep, split, unlfs,
	 * replace-text), as the report's table counts them */
	uint64_t by_action[8];
};

struct rw_options {
	const char *rules;		/* rule file, or NULL */
	/* blob ids to drop wherever they are (a `blob:<id> drop` rule
	 * each), or NULL */
	const char *strip_blobs_with_ids;
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
	/* keep the commits the rules leave empty (by default, with rules,
	 * they are pruned as git filter-repo prunes them) */
	int no_prune_empty;
	/* fast-import's --date-format, which overrides the stream's
	 * `feature date-format` (NULL: none given, raw unless the stream
	 * says otherwise); raw and raw-permissive only */
	const char *date_format;
	/* git-annex (issue 14): the store's directory (NULL:
	 * <git-common-dir>/annex), the UUID the git-annex branch gives the
	 * repository written (NULL: a new one, printed) and its description */
	const char *annex_dir;
	const char *annex_uuid;
	const char *annex_desc;
	/* who reads the repositories' objects: "auto" (NULL), "git",
	 * "native" (rewrite/git/git.h, enum odb_reader) */
	const char *object_reader;

	/* unlfs (issue 15): LFS stores read besides --store and the source's
	 * lfs/objects, in the order given; a missing object is an error
	 * unless missing is "keep" */
#define RW_LFS_OBJECTS_MAX 16
	const char *lfs_objects[RW_LFS_OBJECTS_MAX];
	size_t n_lfs_objects;
	const char *lfs_objects_arg;	/* the option parser's slot */
	const char *missing;		/* "error" (NULL) or "keep" */
	/* --replace-message FILE: expressions (git filter-repo's format,
	 * replace/replace.h) replaced in commit and tag messages */
	const char *replace_message;
	/* filled when the run succeeded, when not NULL (migrate run's
	 * ending lines) */
	struct rw_stats *stats;
	/* --threads N: "1" converts on one thread; NULL: the CPU count */
	const char *threads;
	/* unlfs in `migrate run`: files taken back are stored as packs in
	 * this objects directory and listed in objects_list (blob.h) */
	const char *objects_dir;
	int objects_level;
	const char *objects_list;
	/* `migrate run`: the blobs the rules make (replace-text results,
	 * split parts) are stored by a thread of the filter into packs of
	 * this objects directory, deflated at made_level (blob.h) */
	const char *made_dir;
	int made_level;
	const char *made_list;
	/* `migrate run`: the split parts the filter writes into the stream,
	 * listed in this file ("<blob id> <path>\n", blob.h new_blobs) */
	const char *new_blobs;
	/* the peers' options that add rules (--include, --path, ...: rules.h,
	 * rules_add_peer), after those of the rule file; the option parser's
	 * slots for the repeatable path options */
	struct rules_peer peer;
	const char *peer_arg;
	/* the rule set, parsed already (borrowed: `migrate run` parses it
	 * once, rw_rules_build, and hands it down); NULL: rw_filter builds
	 * it from rules, strip_blobs_with_ids and peer */
	struct rules *rules_set;
};

/* 1 when opt asks for rules: a rule file, ids to drop, a peer's option. */
int rw_rules_wanted(const struct rw_options *opt);

/*
 * The rule set of opt (ruleset.c): the rule file's rules (an empty set
 * named "(no rule file)" without one), the `blob:<id> drop` rules of
 * --strip-blobs-with-ids, then the rules of the peers' options
 * (rules_add_peer). *out is the caller's (rules_free). When peer_text is
 * not NULL, the options' rules are appended to it as rules_add_peer
 * writes them. -1 with e set (ERR_USAGE: the file and line, or the
 * option, at fault); *out is then NULL.
 */
int rw_rules_build(struct rules **out, struct buf *peer_text,
		   const struct rw_options *opt, struct err *e);

/* A git-annex UUID as `git annex init` makes them (36 characters, 8-4-4-4-12
 * lowercase hex): 1 if u is one. annex_uuid_new makes a random (version 4)
 * one into out; -1 with e set when the system has no randomness. */
int annex_uuid_valid(const char *u);
int annex_uuid_new(char out[37], struct err *e);

/*
 * Filters in_fd into out_fd. Returns 0, or -1 with e set (its kind is the
 * exit status). The output starts with `feature done` and ends with
 * `done` only when everything succeeded, so fast-import never commits a
 * partial stream; the maps are renamed into place only then too.
 */
int rw_filter(const struct rw_options *opt, int in_fd, int out_fd,
	      struct err *e);

/*
 * msgids.c: old commit ids in commit messages become the new ones, one
 * tokenizer for the filter (each commit's message as it passes, when
 * rewrite_message_ids is set) and for `migrate remap` (the messages of
 * the commits it rebases).
 *
 * A word is a run of lowercase hex digits with no letter, digit or '_'
 * right before or after it (so not "0xdeadbeef12", "v1234567a" or an
 * upper-case "ABCDEF1"). A word of MSGIDS_ABBREV_MIN (git's default
 * abbreviation) to 40 digits is id-like, and is judged against the OLD
 * ids the commit map holds:
 *
 *   MSGID_FULL       40 digits: an old id of the map;
 *   MSGID_UNIQUE     the start of exactly one old id;
 *   MSGID_AMBIGUOUS  the start of two old ids or more, whether the
 *                    migration changed them or not: git, asked in the old
 *                    repository, would call it ambiguous too;
 *   MSGID_UNKNOWN    the start of none (a hash, a number, another
 *                    repository's commit, one the map does not have).
 *
 * FULL and UNIQUE words are rewritten to as many digits of the new id,
 * when the map gives one: an unchanged commit's digits stay, and so do a
 * dropped commit's (40 zeros in the map: it has no new id, as
 * git-filter-repo leaves it). AMBIGUOUS and UNKNOWN words stay as they
 * are. A message never changes length.
 *
 * The old ids are those of the map as it is when the message is judged:
 * the filter's map grows as commits are written (with the map of earlier
 * runs loaded first), so a message is judged by the commits before it;
 * remap's is the whole map of the migration. A map in the lfs layout
 * holds changed commits only, so only they can make a word ambiguous.
 */
#define MSGIDS_ABBREV_MIN 7

enum msgid_verdict {
	MSGID_UNKNOWN = 0,
	MSGID_FULL,
	MSGID_UNIQUE,
	MSGID_AMBIGUOUS,
};

struct cmap;
struct oid;
struct msgids;

/* An index of the old ids of map, which it borrows: map must outlive it,
 * and may grow (cmap_put) between calls; the entries recorded since the
 * last call are indexed at the next msgids_judge or msgids_apply. Never
 * fails (out of memory aborts, as everywhere). */
struct msgids *msgids_new(const struct cmap *map);
void msgids_free(struct msgids *m);

/* The verdict on the len characters at hex (any characters: a word that
 * is not id-like is MSGID_UNKNOWN); for FULL and UNIQUE, *old (may be
 * NULL) is the old id it names. */
enum msgid_verdict msgids_judge(struct msgids *m, const char *hex,
				size_t len, struct oid *old);

/* Calls fn for every id-like word of text[0..len), in order, with its
 * offset, length and verdict (old as msgids_judge sets it, NULL for
 * AMBIGUOUS and UNKNOWN). */
void msgids_scan(struct msgids *m, const char *text, size_t len,
		 void (*fn)(void *ctx, size_t off, size_t n,
			    enum msgid_verdict v, const struct oid *old),
		 void *ctx);

/* Rewrites text[0..len) in place as the rule above says; returns how many
 * words it changed. */
size_t msgids_apply(struct msgids *m, char *text, size_t len);

#endif
