/*
 * blob.h - the contract of rewrite/blob/: the way of a blob through a run
 * with rules. Start here to learn what happens to a file.
 *
 * policy.c   what the rules decide for a file (path, mode, size): keep,
 *            lfs, drop or split; pure, knows nothing of the stream
 * held.c     blobs read from the stream and not yet let go (in memory,
 *            or spooled to a temp file when large), and reading a blob's
 *            content again (held copy, LFS store, or repository)
 * apply.c    a decision applied to the commit being built: M, D, C and R
 *            lines, LFS pointers, blobs written before the commit
 * annex.c    the annex action: git-annex pointer files or symlinks, the
 *            content to the git-annex store under its key
 * lfsplace.c placing a file as it is, or as its LFS pointer
 * attrs.c    the root .gitattributes that makes git-lfs see exactly the
 *            converted files as LFS files (asks policy.c); with --fixup,
 *            the files each commit's own .gitattributes mark filter=lfs
 *            converted instead
 * splits.c   the split action: a file replaced by its parts
 * unlfs.c    the unlfs action: an LFS pointer becomes its file again
 * lfsobj.c   an LFS object file of the stores, found and checked (unlfs)
 * scrub.c    the replace-text action: expressions replaced in the text
 * pool.c     conversion ahead of the stream: threads that read and store
 *            the blobs the M lines further on will convert
 * made.c     the blobs the rules make, stored by a writer thread as
 *            deltas into packs of the target (migrate run)
 *
 * The engine (rewrite/engine/) owns the stream and fast-import's state;
 * it lends this code what it needs (struct blob_env, once; struct
 * blob_commit, per commit) and resolves marks and ids before it calls.
 * Nothing here includes the engine's headers.
 *
 * Errors: every function returning int gives 0 (or a count), or -1 with
 * e set. e->at_input is set when the problem is at the input's current
 * position (the engine adds the byte offset). BLOB_IDS_LOST is an
 * outside object that could not be read: the engine decides whether that
 * is fatal (maps asked for) or ends id tracking.
 */
#ifndef MIGRATE_BLOB_H
#define MIGRATE_BLOB_H

#include <stdint.h>

#include "../../stream/stream.h"
#include "../git/git.h"
#include "../report/report.h"

#define BLOB_IDS_LOST (-2)

struct rules;
struct rule;

/* ---- policy.c: the decision, pure ---- */

enum blob_action {
	BLOB_KEEP = 0,	/* as it is (no rule, or one that must not apply) */
	BLOB_LFS,	/* an LFS pointer; content to the store */
	BLOB_DROP,	/* removed from the commit */
	BLOB_SPLIT,	/* replaced by its parts */
	BLOB_ANNEX,	/* a git-annex pointer or symlink; content to its store */
	BLOB_UNLFS,	/* an LFS pointer becomes its content again */
	BLOB_REPLACE_TEXT,	/* its text with expressions replaced */
};

/*
 * What the rules decide for the file at path (len bytes) with the given
 * mode and size; *rule is the rule that matched (NULL for BLOB_KEEP
 * without one). Gitlinks, directories and files of a notes ref are
 * always kept; symlinks and the files git and git-lfs must see as they
 * are (.gitattributes, .gitignore, .gitmodules, .lfsconfig at any depth)
 * too, unless the rule that matches is replace-text. -1 with e set when
 * a rule's expression fails to run.
 */
int blob_decide(const struct rules *rules, const char *path, size_t len,
		uint32_t mode, uint64_t size, int in_notes,
		const struct rule **rule, enum blob_action *action,
		struct err *e);

/* 1 when path names a file the rules must never change. */
int blob_is_protected(const char *path, size_t len);
/* 1 when the rules may apply to a file of this path and mode at all (a
 * regular or executable file, not protected). */
int blob_convertible(const char *path, size_t len, uint32_t mode);

/* ---- the run ---- */

struct blob_options {
	/* the rule set, parsed already (borrowed: it must outlive the
	 * blobs); NULL: rules and strip_ids are read here */
	struct rules *rules_set;
	const char *rules;	/* the rule file */
	const char *store;	/* LFS store; NULL: <git-common-dir>/lfs/objects */
	int dry_run;		/* store nothing */
	int quiet;		/* no warnings */
	int verify_split;	/* check every split version reassembles */
	/* git-annex store: <annex_dir>/objects (NULL: <git-common-dir>/annex) */
	const char *annex_dir;
	/* unlfs: where LFS objects are read, besides the store and the
	 * source repository's lfs/objects */
	const char *source_repo;	/* NULL: the current directory's */
	const char *const *lfs_objects;
	size_t n_lfs_objects;
	int missing_keep;	/* a missing object keeps its pointer */
	/* --strip-blobs-with-ids: a `blob:<id> drop` rule per id (NULL: none) */
	const char *strip_ids;
	/* --threads: blobs converted at once ahead of the stream (pool.c);
	 * 0 the CPU count, 1 none (the main thread converts each itself) */
	int threads;
	/* unlfs: the objects directory of the repository fast-import writes
	 * into (NULL: the files go in the stream). Each file taken back is
	 * stored there as a pack of its own, deflated at objects_level, and
	 * listed ("<blob id> <pack path without .pack>\n") in objects_list,
	 * so that the caller can pack them together once fast-import is
	 * done. */
	const char *objects_dir;
	int objects_level;
	const char *objects_list;
	/* NULL, or the objects directory of the repository fast-import
	 * writes into: the blobs the rules make (replace-text results, split
	 * parts) are stored there by a thread of their own (made.c), as
	 * deltas against the previous version of the same path, in packs
	 * deflated at made_level; the stream names them by id */
	const char *made_dir;
	int made_level;
	/* NULL, or a file made.c lists each pack it names in ("made
	 * <path without .pack>" a line, as objects_list's), so that the
	 * caller can tell them from fast-import's, and drop them when the
	 * run fails */
	const char *made_list;
	/* NULL, or a file that lists each part of a split file written into
	 * the stream with its path ("<blob id> <path>\n", the id alone for a
	 * path with a newline): what `git pack-objects` takes to find its
	 * deltas among the versions of one part */
	const char *new_blobs;
	/* --fixup: in each commit, the files its own .gitattributes mark
	 * filter=lfs become LFS pointers, those no longer marked their
	 * content again (attrs.c); the .gitattributes are left alone */
	int fixup;
};

/* What the engine lends for the whole run (not owned). */
struct blob_env {
	struct stream_reader *in;	/* data of the command being handled */
	struct stream_writer *out;	/* the stream written */
	struct stream_cmd *cmd;		/* the command being handled */
	struct tree_state *ts;
	struct odb *src, *dst;		/* source and target repositories */
	struct obj_hash *hash;
	struct report *report;		/* NULL: none */
};

/* The commit being built, as the engine keeps it; valid from
 * blobs_commit_begin to blobs_commit_written. */
struct blob_commit {
	struct tnode **root;		/* its tree: this code changes it */
	const struct oid *parents;
	size_t nparents;
	struct oid orig;		/* its original id, when has_orig */
	int has_orig;
	const void *branch;		/* which branch (compared only) */
	const char *branch_name;
	struct oid tip, tip_orig;	/* the branch before the commit */
	int has_tip_orig;
	uint64_t seq;			/* commits seen so far, this one included */
};

/* The blob side of a mark: the engine's mark table holds one per entry. */
struct blob_mark {
	uint64_t num;
	struct blob_info *blob;	/* the blob it names (NULL: not ours) */
	struct oid *id;		/* the engine's id of the mark, set once known */
	int declared;		/* the blob went out under this mark */
	int consumed;		/* a commit decided its fate */
};

struct blobs;

/* Loads the rules and opens the store. On failure *out is still set (to
 * be freed). */
int blobs_new(struct blobs **out, const struct blob_options *opt,
	      const struct blob_env *env, struct err *e);
void blobs_free(struct blobs *b);
const struct rules *blobs_rules(const struct blobs *b);
/* Blobs converted to LFS so far; and by any action (lfs, annex, unlfs:
 * a distinct object each), for the progress and the ending. */
uint64_t blobs_converted(const struct blobs *b);
uint64_t blobs_conversions(const struct blobs *b);
/* The files (versions) replace-text changed, split and dropped so far,
 * for the progress line. */
void blobs_acted(const struct blobs *b, uint64_t *replaced, uint64_t *split,
		 uint64_t *dropped);
/* The bytes of blob contents read from the repositories so far (the
 * stream's own are counted by its reader): progress's "MB read". */
uint64_t blobs_bytes_read(const struct blobs *b);
/* Of those, the bytes the pool's threads read (--threads): the summary
 * line's "MB read ahead". */
uint64_t blobs_bytes_read_ahead(const struct blobs *b);
/* The LFS store's directory; NULL when nothing is stored (no lfs rule,
 * or a dry run). */
const char *blobs_store(const struct blobs *b);
/* git-annex: whether a rule converts to it, the keys stored so far
 * (calls fn for each, in the order stored, until fn returns non-zero,
 * which is returned), and the store's objects directory (NULL: dry run
 * or no annex rule). */
int blobs_has_annex(const struct blobs *b);
uint64_t blobs_annexed(const struct blobs *b);
int blobs_annex_keys(const struct blobs *b,
		     int (*fn)(void *ctx, const char *key), void *ctx);
const char *blobs_annex_store(const struct blobs *b);
/* Split versions that did not reassemble (--verify-split). */
uint64_t blobs_split_failures(const struct blobs *b);

/* The `blob` command being handled names mark m: its data is held until
 * a commit decides (orig: its original-oid, or NULL). */
int blobs_read(struct blobs *b, struct blob_mark *m, const struct oid *orig,
	       struct err *e);
/* Writes the blob of mark m now unless it went out already (something
 * other than a commit's file names it). */
int blobs_declare(struct blobs *b, struct blob_mark *m, struct err *e);

/* A commit begins: its text goes to the writer returned, which the
 * commit's blobs precede in the output at blobs_commit_end. */
struct stream_writer *blobs_commit_begin(struct blobs *b,
					 const struct blob_commit *c);
/*
 * Called before each command is handled, with the stream offset where
 * the previous one ended: blobs that M lines further on will convert
 * start converting on other threads (pool.c), and what was started for
 * lines before `before` and not used is dropped. Never fails; does
 * nothing with one thread, without lfs rules, or when the source is not
 * read natively.
 */
void blobs_ahead(struct blobs *b, uint64_t before);
/*
 * File changes of the commit (the command in env->cmd). For an M line
 * whose data is not inline, id is the object it names and m its mark
 * (NULL when named by id); the engine checked a mark names a blob where
 * the mode wants one.
 */
int blobs_modify(struct blobs *b, const struct oid *id, struct blob_mark *m,
		 struct err *e);
int blobs_delete(struct blobs *b, struct err *e);
int blobs_copy(struct blobs *b, struct err *e);	/* C and R */
/* The tree was emptied (deleteall): split files are looked up again. */
void blobs_forget_splits(struct blobs *b);
/* The change list ended: the root .gitattributes follows the commit's
 * files (the engine calls this only while it follows ids; it may give
 * BLOB_IDS_LOST). */
int blobs_commit_attrs(struct blobs *b, struct err *e);
/* Then the blobs the commit keeps, and its text unless keep_text is 0
 * (the commit is pruned: the engine writes what stands for it), go out. */
int blobs_commit_end(struct blobs *b, int keep_text, struct err *e);
/* The commit is written with this id. */
void blobs_commit_written(struct blobs *b, const struct oid *id);

/* 1 when the run's writer stores the trees the engine makes too
 * (blobs_store_tree: id, the tree it was made from or NULL, the
 * directory's path, the raw bytes); the stream then names them by id,
 * held back until their packs have names. 0 or -1 with e set. */
int blobs_stores_trees(const struct blobs *b);
int blobs_store_tree(struct blobs *b, const struct oid *id,
		     const struct oid *from, const char *path, size_t len,
		     const struct buf *body, struct err *e);
/* The same for a commit the engine made (its raw bytes), stored whole
 * beside its trees: the stream then names it by id. */
int blobs_store_commit(struct blobs *b, const struct oid *id,
		       const struct buf *body, struct err *e);

/* Writes the blobs read since the last commit that no commit decided on
 * (a tag or a later commit may name them); lets go of the rest. */
int blobs_flush(struct blobs *b, struct err *e);
/* Everything the run stored itself is in the target, and the stream is
 * no longer held back: before a query git fast-import answers. */
int blobs_sync(struct blobs *b, struct err *e);
/* At the end of the stream: everything the run stored itself is in the
 * target, counted by the report; the stream stays held until
 * blobs_finish. */
int blobs_settle(struct blobs *b, struct err *e);
/* Hands the report how often each replace-text expression replaced
 * (report_replace), before it is written. */
void blobs_report_replace(const struct blobs *b);
/* Makes the store's objects durable, before the stream's `done`; fails
 * first when unlfs found pointers whose objects no store has (unless
 * --missing=keep), naming each. */
int blobs_finish(struct blobs *b, struct err *e);

#endif
