/*
 * way.h - what the files of rewrite/blob/ share (folder-internal; the
 * contract with the engine is blob.h).
 */
#ifndef MIGRATE_BLOB_WAY_H
#define MIGRATE_BLOB_WAY_H

#include <stdio.h>
#include <sys/types.h>
#include <uthash.h>

#include "../../pointerize/pointerize.h"
#include "../../rules/rules.h"
#include "blob.h"

#define HELD_IN_MEMORY ((size_t)1 << 20)
/* Split files are read whole for every version: spooling them would copy
 * each version twice more (docs/DESIGN.md: a memcmp per byte). */
#define HELD_SPLIT_IN_MEMORY ((size_t)256 << 20)
#define CHUNK ((size_t)1 << 20)
/* held blobs from this size on may reuse (and leave) a spare buffer */
#define SPARE_MIN ((size_t)1 << 20)

/* A blob's content, read from the stream and not yet let go. */
struct held {
	struct buf mem;
	FILE *spool;		/* when larger than HELD_IN_MEMORY */
};

struct blob_info {
	/*
	 * The id of the content itself. Hashing every blob as it is read
	 * would cost a SHA-1 pass over the whole stream, and most blobs a
	 * rule converts or splits never need it: with an original-oid to
	 * find the content again, it is computed when first needed
	 * (ensure_id) and id_known says whether it is.
	 */
	struct oid id;
	int id_known;
	struct oid orig;
	int has_orig;
	struct blob_mark *mark;	/* the mark that names it, if any */
	uint64_t size;
	uint64_t est;		/* packed estimate (reports) */
	struct held *held;
	int emitted;		/* the content is in the output (or target) */
	int pointer_state;	/* 0 unknown, 1 an LFS pointer, 2 none, 3 a git-annex one */
	int converted;
	int sha_known;		/* sha256 is the content's (lfs or annex) */
	char *annex_key;	/* the first git-annex key it was stored under */
	struct ptr_oid sha256;
	struct oid ptr_id;	/* the pointer blob's id */
	struct buf ptr_text;
	int ptr_written;	/* the pointer blob is in the output */
	UT_hash_handle hh;	/* by id */
	struct blob_info *lazy_next;	/* made lazy: owned by b->lazy */
	int lazy;
	char *lfs_path;		/* unlfs: the store file holding the content */
	int unlfs_done;		/* unlfs: this pointer was looked up */
	int aside;		/* the content is in the aside file (held.c) */
	uint64_t aside_off;
	/* unlfs: what the lookup found (unlfs.c's), so that the pointer
	 * blob named again, at another path, needs not be read again: a
	 * full-data stream has let go of it and may have no repository */
	struct unlfs_obj *unlfs_obj;
	/* a replace-text rule read it whole (scrub.c): the pool does not
	 * read it ahead again (another rule may still read it: then the
	 * main thread reads it itself) */
	int replaced;
};

/* Blobs (by mark, or by content alone) waiting to be written. */
struct emit_ent {
	struct blob_mark *m;
	struct blob_info *bi;
};

struct emit_list {
	struct emit_ent *v;
	size_t n, alloc;
};


/* The blob's way of one run (blob.h), grouped by the file that owns each
 * part. */
struct blobs {
	unsigned char *id_hits;	/* per rule: a blob:<id> rule dropped its blob */
	struct blob_options opt;
	struct rules *rules;
	/* lent by the engine (struct blob_env, struct blob_commit) */
	struct stream_reader *in;
	struct stream_writer *out;
	struct stream_cmd *cmd;
	struct tree_state *ts;
	struct odb *src, *dst;
	struct obj_hash *hash;
	struct report *report;
	const struct blob_commit *cur;	/* the commit being built */

	/* held.c */
	size_t held_max;	/* held in memory up to this, then spooled */
	/* the buffer split/ gave back for a version it took: the next large
	 * held blob reads into it instead of into fresh pages */
	struct buf spare;
	struct blob_info *byid;
	struct pointer_ent *pointers;	/* the pointer blobs made, by id */
	struct blob_info *lazy;		/* blobs created without an id */
	uint64_t data_est;	/* packed estimate of the data last held */
	struct stream_cmd blobcmd;
	char *chunk;
	/* a full-data stream with no repository behind it: the contents a
	 * commit consumed and did not write, which a later reference may
	 * want, in one unlinked temp file (memory stays flat) */
	FILE *aside;
	uint64_t aside_len;

	/* apply.c */
	struct ptr_store *store;
	uint64_t converted;	/* blobs put in the store */
	struct emit_list pending;	/* blobs read since the last commit */
	struct emit_list emit;		/* blobs the commit keeps */
	uint64_t replaced, split, dropped;	/* files, for the progress */
	struct stream_writer *cbuf;	/* the commit's buffered text */
	struct stream_cmd scratch;	/* synthesized M and D lines */

	/* annex.c (its own state: struct annex) */
	struct annex *annex;
	/* the git-annex store (NULL: none, or a dry run): opened by annex.c,
	 * read by held.c for a content stored under its key */
	struct ptr_store *annex_store;

	/* attrs.c (its own state: struct attrs) */
	int has_lfs;		/* some rule converts to LFS (attrs_init) */
	struct attrs *at;

	/* splits.c */
	struct splits *splits;	/* split files seen so far */

	/* unlfs.c */
	struct unlfs *unlfs;	/* NULL: no unlfs rule */
	char **lfs_dirs;	/* the LFS stores read, in order (pool.c too) */
	size_t n_lfs_dirs;

	/* scrub.c */
	struct scrub *scrub;	/* NULL: no replace-text rule */

	/* estimate.c */
	struct est *est;	/* NULL: nothing estimated yet */

	/* made.c */
	struct made *made;	/* NULL: made blobs go into the stream */

	/* pool.c */
	struct pool *pool;	/* NULL: none (yet, or at all) */
	int pool_tried;
};


/* ---- held.c ---- */

void held_free(struct held *h);
/* Lets go of bi's held copy; when nothing could give the content again
 * (no repository behind the stream), it goes to the aside file first. */
int held_let_go(struct blobs *b, struct blob_info *bi, struct err *e);
void aside_free(struct blobs *b);
/* The blob with this id (created, of this size, when new). */
struct blob_info *blob_get(struct blobs *b, const struct oid *id,
			   uint64_t size);
void list_push(struct emit_list *list, struct blob_mark *m,
	       struct blob_info *bi);
/* Reads the data of the command being handled into a new held copy;
 * with want_id its id is computed on the way. orig: the id the stream
 * gives it (original-oid), or NULL; a report then needs no estimate of a
 * blob the source has. */
int hold_data(struct blobs *b, struct held **out, struct oid *id,
	      int want_id, const struct oid *orig, uint64_t *size,
	      struct err *e);
/* Reading a blob's content again, from wherever it is. */
struct content {
	struct blob_info *bi;
	int kind;		/* 0 memory, 1 spool, 2 fd, 3 odb, 4 aside */
	size_t pos;
	uint64_t off, left;	/* aside */
	FILE *aside;
	int fd;
	struct odb *db;
};
int content_open(struct blobs *b, struct blob_info *bi,
		 struct content *c, struct err *e);
/* 1 when content_open reads bi from the repository (no copy of it is at
 * hand: held, stored, aside, an LFS file): its order, up to that read.
 * Inline: held.c and pool.c both ask, and pool.c calls nothing of
 * held.c's (held.c takes from the pool). */
static inline int blob_from_repository(const struct blobs *b,
				       const struct blob_info *bi)
{
	return !bi->held && !(bi->converted && b->store) &&
	       !(bi->annex_key && b->annex_store) && !bi->aside &&
	       !bi->lfs_path;
}
/* Bytes read, 0 at the end, -1 on error. */
ssize_t content_read(struct content *c, char *dst, size_t cap,
		     struct err *e);
void content_close(struct content *c);
/* Streams bi's content into a new put on store s (NULL: hash only):
 * *out is then the caller's to finish. */
int content_put(struct blobs *b, struct blob_info *bi, struct ptr_store *s,
		struct ptr_put **out, struct err *e);
/* An error naming bi when size bytes were read and bi->size expected. */
int content_size_check(const struct blob_info *bi, uint64_t size,
		       struct err *e);
/* Computes bi's id if it is not known yet (struct blob_info). */
int ensure_id(struct blobs *b, struct blob_info *bi, struct err *e);
/* Writes a blob command with the content of bi (and mark, if any). */
int emit_blob(struct blobs *b, struct blob_info *bi, uint64_t mark,
	      struct err *e);
/* 1 when the blob's content already is an LFS pointer, 2 a git-annex
 * pointer file, 0 neither. */
int is_pointer(struct blobs *b, struct blob_info *bi, struct err *e);

/* held.c, for splits.c */
int blob_read_all(struct blobs *b, struct blob_info *bi, struct buf *out,
		  struct err *e);
/* The blob behind a tree entry or id (its original content even when the
 * entry holds our pointer), from the target or source. */
int blob_for_entry(struct blobs *b, const struct oid *id,
		   struct blob_info **out, struct err *e);
const struct oid *blob_id(const struct blob_info *bi);
/* The whole content of bi: borrowed from its held copy when it has one
 * (valid until the commit ends), else read into scratch. */
int blob_view(struct blobs *b, struct blob_info *bi, struct buf *scratch,
	      const char **ptr, size_t *len, struct err *e);
/*
 * The in-memory copy of bi, for a caller that would otherwise copy it
 * whole, when bi can be read again from the source repository (same id,
 * same size): NULL otherwise. The caller may take its bytes and must then
 * call blob_forget_copy, after which bi is read from the repository.
 */
struct buf *blob_memory(struct blobs *b, struct blob_info *bi);
void blob_forget_copy(struct blobs *b, struct blob_info *bi);

/*
 * The blob of the n bytes at p, which this run makes (a replace-text
 * result): known already, or new with a held copy (in memory up to
 * HELD_IN_MEMORY or when made.c takes it, else spooled) and its packed
 * estimate est (0 when made.c takes it). NULL with e set when it cannot
 * be spooled.
 */
struct blob_info *blob_made(struct blobs *b, const char *p, size_t n,
			     uint64_t est, struct err *e);

/*
 * held.c: the pointer blobs this run made, LFS and git-annex alike, by
 * the pointer blob's id, each with the content it stands for: a tree
 * entry holding one is read as that content (blob_for_entry), a locked
 * file copied elsewhere is a file again. One index, so that reading a
 * blob back needs no call into the actions that made its pointer.
 */
enum pointer_kind { POINTER_LFS = 1, POINTER_ANNEX };
struct pointer_ent {
	struct oid id;		/* the pointer blob's */
	enum pointer_kind kind;
	struct blob_info *bi;	/* the content it stands for */
	uint32_t mode;		/* annex: the file's mode before it was annexed */
	int written;		/* annex: the pointer blob is in the output */
	UT_hash_handle hh;
};
/* The pointer blob id of this run (NULL: none). */
struct pointer_ent *pointers_find(struct blobs *b, const struct oid *id);
/* The entry of the pointer blob id, made (of this kind, standing for bi)
 * when new. */
struct pointer_ent *pointers_add(struct blobs *b, const struct oid *id,
				 enum pointer_kind kind, struct blob_info *bi);
void pointers_free(struct blobs *b);

/* ---- lfsplace.c: placing a file in the commit being built ---- */

/* Puts bi's content into the store and computes its pointer (once). */
int convert_lfs(struct blobs *b, struct blob_info *bi, struct err *e);
/* M line c (its path) with bi's content as it is, mode given: bi (under
 * mark m when not NULL) is queued to be written before the commit unless
 * it is out; the tree follows. NULL bi: c passes as it is. */
int place_keep(struct blobs *b, struct stream_cmd *c, uint32_t mode,
	       struct blob_mark *m, struct blob_info *bi, struct err *e);
/* M line c with bi's LFS pointer: inline the first time, by id after. */
int place_pointer(struct blobs *b, struct stream_cmd *c, uint32_t mode,
		  struct blob_info *bi, struct err *e);

/* ---- attrread.c: a .gitattributes read as git reads it (pure) ---- */

/* The attributes an LFS file needs: bits of attr_rule.says, .lfs. */
enum { ATTR_FILTER = 1, ATTR_DIFF = 2, ATTR_MERGE = 4, ATTR_TEXT = 8,
       ATTR_ALL = 15 };

/* A line of a .gitattributes that assigns filter, diff, merge or text. */
struct attr_rule {
	struct rules *pat;	/* its pattern alone; NULL: taken to match all */
	unsigned says;		/* the attributes it assigns (ATTR_*) */
	unsigned lfs;		/* those it assigns as an LFS file has them
				 * (filter=lfs diff=lfs merge=lfs -text) */
};

/* The macros a root .gitattributes defines (and git's binary). */
struct attr_macros;
struct attr_macros *attr_macros_new(void);
void attr_macros_free(struct attr_macros *m);	/* NULL is fine */
/* Takes the [attr] lines of a root file's text: 1 when they differ from
 * those m had, 0 when the same. Cannot fail. */
int attr_macros_read(struct attr_macros *m, const char *text, size_t len);
/* The lines of a nested file's text that assign one of the four, in file
 * order, in *out (the caller frees it with attr_rules_free); returns how
 * many. Cannot fail. */
size_t attr_rules_read(struct attr_rule **out, const struct attr_macros *m,
		       const char *text, size_t len);
void attr_rules_free(struct attr_rule *v, size_t n);
/* 1 when r's pattern matches rel (relative to its file's directory), 0
 * not, -1 when matching fails. */
int attr_rule_hits(const struct attr_rule *r, const char *rel, size_t len,
		   struct err *e);

/* ---- attrs.c ---- */

/* The .gitattributes lines of the plain glob lfs rules. */
int attrs_init(struct blobs *b, struct err *e);
/*
 * --fixup: 1 when the .gitattributes of the last commit's tree (as
 * blobs_commit_attrs left them) set filter=lfs on path, 0 not, -1 when a
 * match fails. What an M line is placed as before the commit's own
 * attributes are all known: blobs_commit_attrs then decides again every
 * path where the commit's attributes could say otherwise.
 */
int attrs_fixup_wants(struct blobs *b, const char *path, size_t len,
		      struct err *e);
void attrs_free(struct blobs *b);

/* ---- policy.c (beside blob.h's part): where no rule applies ---- */

/* 1 when the commit being built is on a notes ref or the git-annex
 * branch (no rule applies). */
int blob_in_notes(const struct blobs *b);
/* 1 when the branch called name (len bytes) is one of those. */
int branch_is_meta(const char *name, size_t len);

/* ---- lfsobj.c: LFS object files, found and checked (unlfs) ---- */

/* The tools of one thread for reading LFS object files (unlfs). */
struct lfs_check {
	struct obj_hash *hash;
	struct zest *z;		/* NULL: no report, no estimate */
	char *chunk;
	const char *objects_dir;	/* NULL: the object is not stored */
	int level;
	/* asked between chunks: non-zero stops the read (the job was
	 * cancelled); NULL: never */
	int (*stop)(void *arg);
	void *stop_arg;
};
/* An LFS object file that is the pointer's object. */
struct lfs_found {
	struct oid id;		/* its blob id */
	uint64_t est;		/* its packed estimate (0: no report) */
	char *path;		/* the file it was read from */
	struct packw *pack;	/* stored as a pack, not committed yet */
};
void lfs_check_init(struct lfs_check *c, const struct blobs *b);
void lfs_check_release(struct lfs_check *c);
void lfs_found_release(struct lfs_found *f);
/*
 * The object oid (size bytes) from the first of the stores dirs that has
 * it, read whole once: 1 found (its id, estimate, file, and the pack when
 * c stores objects); 0 when no store has it (a file of the wrong size or
 * content is none); -1 on a read or write error.
 */
int lfs_find(struct lfs_check *c, char *const *dirs, size_t ndirs,
	     const struct ptr_oid *oid, uint64_t size, struct lfs_found *found,
	     struct err *e);

/* ---- made.c: the blobs the rules make, stored by a thread ---- */

/* Starts the writer when the run names an objects directory (made_dir). */
int made_init(struct blobs *b, struct err *e);
/* Stops it; what it did not store is dropped with its temp files. */
void made_free(struct blobs *b);
/* 1 when a made blob of this size goes to the writer (not the stream). */
int made_wants(const struct blobs *b, uint64_t size);
/*
 * The blob id (data's bytes, which the call takes, leaving data empty)
 * to be stored, as a delta against the last version stored at path when
 * it pays. The caller names it by id in the commit: the stream is held
 * back until the blob's pack has its name. An id stored before is not
 * stored again.
 */
int made_put(struct blobs *b, const struct oid *id, const char *path,
	     size_t len, struct buf *data, struct err *e);
/* The same for a tree the engine made (body copied), the directory it is
 * at its path: a delta against the version it was made from (from, NULL
 * when none) or that directory's last version. */
int made_put_tree(struct blobs *b, const struct oid *id,
		  const struct oid *from, const char *path, size_t len,
		  const struct buf *body, struct err *e);
/* And a commit the engine made (body copied), stored whole. */
int made_put_commit(struct blobs *b, const struct oid *id,
		    const struct buf *body, struct err *e);
/*
 * The M command c (its path and mode set) of a blob the rules write (a
 * .gitattributes, a pointer: data, len bytes, its id computed, its
 * estimate given to the report) into the commit's text: by id, the blob
 * handed to the writer, in a run that has one; else inline.
 */
int made_write_text(struct blobs *b, struct stream_cmd *c,
		    const struct oid *id, const char *data, size_t len,
		    struct err *e);
/* After a commit went out: lets go of the stream that names only blobs
 * in packs with names; ends the open segment when it grew large. */
int made_tick(struct blobs *b, struct err *e);
/* Everything handed over is stored, its packs named (and counted by the
 * report); made_drain also lets the stream go. */
int made_settle(struct blobs *b, struct err *e);
int made_drain(struct blobs *b, struct err *e);
/* 1 when id was handed over and its pack has no name yet. */
int made_pending(const struct blobs *b, const struct oid *id);

/* ---- pool.c: conversion ahead of the stream ---- */

/* The put of id's content, converted ahead by the pool (the caller's to
 * finish or abort), or NULL: then the caller reads the blob itself. */
struct ptr_put *pool_take(struct blobs *b, const struct oid *id);

/* unlfs: what the pool found for the pointer blob id (of the object lfs,
 * size bytes): 1 with *found (the caller's), 0 when the caller must look
 * itself. */
int pool_take_unlfs(struct blobs *b, const struct oid *id,
		    const struct ptr_oid *lfs, uint64_t size,
		    struct lfs_found *found);
/* replace-text: id's content (size bytes), read ahead by the pool, moved
 * into out (whose old memory goes): 1, or 0 when the caller must read it
 * itself. The job is gone either way. */
int pool_take_read(struct blobs *b, const struct oid *id, uint64_t size,
		   struct buf *out);
/* Stops the pool; every put it holds is aborted (temp files removed). */
void pool_free(struct blobs *b);
/* The bytes the workers read from the repository so far. */
uint64_t pool_bytes_read(const struct blobs *b);

/* ---- annex.c: the annex action ---- */
int annex_init(struct blobs *b, struct err *e);
void annex_free(struct blobs *b);
/* git-annex keys stored by this run (or, in a dry run, that would be). */
uint64_t annex_count(const struct blobs *b);
/* unlfs: the LFS objects found so far. */
uint64_t unlfs_count(const struct blobs *b);
/* --verify-split: the versions that failed to reassemble. */
uint64_t splits_failures(const struct blobs *b);
/* M with the git-annex pointer (or symlink) of bi at c's path. */
int annex_place(struct blobs *b, struct stream_cmd *c, uint32_t mode,
		struct blob_info *bi, const struct rule *rule, struct err *e);

/* ---- splits.c: the split action ---- */
struct rule;
int splits_place(struct blobs *b, struct stream_cmd *c, struct blob_info *bi,
		 const struct rule *rule, struct err *e);
int splits_delete(struct blobs *b, const char *path, size_t len,
		  const struct rule *rule, struct err *e);
/* The version of the split file at path the commit holds (NULL: none). */
int splits_source(struct blobs *b, const char *path, size_t len,
		  struct blob_info **out, struct err *e);
/* An error (exit 2, naming commit, path and rule) when path, or a
 * directory on its way, is a part of a split file: what is the command
 * ("M", "D", "R", "C") that would touch it. */
int splits_check_path(struct blobs *b, const char *what, const char *path,
		      size_t len, struct err *e);
/* 1 when the commit holds a split file below dir (which then is a
 * directory of the stream even when the tree has no entry there). */
int splits_under(struct blobs *b, const char *dir, size_t dlen, struct err *e);
/* 1 when the tree entry (path, id) is a part of a split file. */
int splits_is_part(struct blobs *b, const char *path, size_t len,
		   const struct oid *id, struct err *e);
/*
 * A command takes the directory dir as a whole: fn is called for every
 * split file inside it that the commit holds (its path and version), and
 * with remove its parts are deleted (wherever they are). Then a part
 * left in dir whose split file is not inside it is an error.
 */
typedef int (*splits_found_fn)(void *ctx, const char *path, size_t len,
			       struct blob_info *bi);
int splits_take_dir(struct blobs *b, const char *what, const char *dir,
		    size_t dlen, int remove, splits_found_fn fn, void *ctx,
		    struct err *e);
void splits_free(struct blobs *b);

/* ---- unlfs.c: the unlfs action ---- */

/* The stores to read from, when some rule is unlfs (else nothing). */
int unlfs_init(struct blobs *b, struct err *e);
void unlfs_free(struct blobs *b);
/*
 * The blob an unlfs rule puts at path for bi: the content of the LFS
 * object when bi is a pointer whose object a store has (size and SHA-256
 * checked), else bi itself (not a pointer; or its object is missing,
 * which is recorded for unlfs_finish and the report).
 */
int unlfs_content(struct blobs *b, const char *path, size_t len,
		  struct blob_info *bi, struct blob_info **out, struct err *e);
/*
 * The .gitattributes bi of directory dir (dlen bytes, 0: the root)
 * without the LFS lines unlfs rules own (at the root a glob rule's own
 * line; anywhere a single-path line, anchored at dir, whose path an
 * unlfs rule takes): bi itself when none, NULL when nothing is left.
 */
int unlfs_attrs(struct blobs *b, const char *dir, size_t dlen,
		struct blob_info *bi, struct blob_info **out, struct err *e);
/* At the end: the error naming every missing object (unless
 * --missing=keep, which warns). */
int unlfs_finish(struct blobs *b, struct err *e);

/* ---- scrub.c: the replace-text action ---- */

/* Reads the expressions files of the replace-text rules (else nothing). */
int scrub_init(struct blobs *b, struct err *e);
void scrub_free(struct blobs *b);
/*
 * The blob a replace-text rule puts where bi was: bi itself when no
 * expression matches or bi is binary (a NUL in its first 8 KiB) and the
 * rule does not say binary=yes; else the replaced text, a new blob.
 * Each content is replaced once per rule, whatever its paths; path (the
 * first it is at) is where its packed size is estimated, against the
 * result before it there.
 */
int scrub_content(struct blobs *b, const struct rule *rule, const char *path,
		  size_t len, struct blob_info *bi, struct blob_info **out,
		  struct err *e);

/* ---- estimate.c: the packed size of what the rules make ---- */

/*
 * The packed size, for the report, of the blob p (n bytes) the rules made
 * at path (len bytes), when made.c's writer does not store it: a delta
 * against the last one made at path when less than half of it, deflated;
 * else itself, deflated. It becomes path's last.
 */
uint64_t est_made(struct blobs *b, const char *path, size_t len,
		  const char *p, size_t n);
void est_free(struct blobs *b);

#endif
