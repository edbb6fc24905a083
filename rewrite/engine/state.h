/*
 * engine.h - what the files of the engine share (rewrite/ only): the
 * state fast-import keeps, as migrate mirrors it, and the helpers the
 * command handlers in engine.c, notes.c and outputs.c call.
 */
#ifndef MIGRATE_RW_ENGINE_H
#define MIGRATE_RW_ENGINE_H

#include <uthash.h>

#include "../../stream/stream.h"
#include "../git/git.h"
#include "engine.h"

struct mark_ent {
	uint64_t mark;
	enum obj_type type;
	struct oid oid;		/* as written */
	struct oid orig;	/* original-oid, if has_orig */
	int has_orig;
	struct tnode *tree;	/* commits */
	struct blob_info *blob;	/* blobs, with rules */
	uint64_t size, est;	/* blobs: size and packed estimate (reports) */
	int declared;		/* with rules: the blob went out under it */
	int consumed;		/* with rules: a commit decided its fate */
	UT_hash_handle hh;
};

struct branch {
	char *name;
	struct oid tip;		/* null: no commit yet */
	struct oid tip_orig;	/* what the tip was in the source */
	int has_tip_orig;
	struct tnode *tree;
	int deleted;		/* reset ... from 000...: delete the ref */
	uint64_t num_notes;	/* notes added with N, as fast-import counts */
	UT_hash_handle hh;
};

struct tag_ent {
	char *name;
	struct oid oid, orig;
	int has_orig;
	struct tag_ent *next;
};

/* What a from/merge/to names, resolved. */
struct target {
	enum obj_type type;
	struct oid oid;		/* new id */
	struct oid orig;	/* source id, when known */
	int has_orig;
	struct tnode *tree;	/* commits, when wanted */
	int translated;		/* a raw id the commit map replaced */
};

/* The commit being read, kept until its change list ends. */
struct cur_commit {
	int active;
	struct branch *branch;
	uint64_t mark;
	struct oid orig;
	int has_orig;
	struct buf author, committer, encoding, message;
	int has_author, has_encoding;
	struct oid *parents;
	size_t nparents, parents_alloc;
	struct tnode *root;
	unsigned char fanout;	/* notes fanout when the commit began */
};

struct rw {
	const struct rw_options *opt;
	struct stream_reader *in;
	struct stream_writer *out;
	struct stream_cmd cmd;
	struct mark_ent *marks;
	struct branch *branches;
	struct tag_ent *tags, **tags_tail;
	struct tree_state *ts;
	struct odb *src, *dst;
	struct cmap *cmap;
	struct obj_hash *hash;
	struct cur_commit cur;
	struct buf scratch;
	/* where a commit's text goes: out, or with rules a buffer written
	 * after the blobs the commit turns out to need (lfs.c) */
	struct stream_writer *cout;
	struct lfs *lfs;	/* NULL without rules */
	struct splits *splits;	/* split files seen so far (splits.c) */
	struct stream_cmd splits_cmd;
	uint64_t split_failures;	/* --verify-split: versions that fail */
	struct msgids *msgids;		/* old ids in messages (msgids.c) */
	struct report *report;		/* --report, --report-json (report.c) */
	/* progress.c */
	int progress_on;
	int progress_tty;	/* redraw one line with \r, else a line each */
	int64_t progress_start, progress_last;
	uint64_t commits_seen, objects_converted;
	uint64_t commits_rewritten;	/* this run: new id differs from old */
	uint64_t data_size, data_est;	/* of the data copy_data last copied */
	int seen_data;		/* a command other than feature/option came */
	int date_strict;	/* raw dates: timezone at most 1400 */
	int date_rfc2822;	/* feature date-format=rfc2822 */
	struct date_ent *dates;	/* rfc2822 date -> raw, as git parsed it */
	struct buf ident_raw;	/* a tagger with its date made raw */
	int input_wants_done;	/* the input said `feature done` */
	int input_done;		/* ... and its `done` came */
	int want_ids;		/* a map or marks file was asked for */
	int no_ids;		/* ids could not be followed any more */
};


/* engine.c */
struct mark_ent *mark_get(struct rw *rw, uint64_t mark);
/* Sets mark to a new object (type, id); the entry's other fields reset. */
struct mark_ent *mark_set(struct rw *rw, uint64_t mark, enum obj_type type,
			  const struct oid *oid);
int at_offset(struct rw *rw, struct err *e);
int ids_lost(struct rw *rw, struct err *e);
int resolve(struct rw *rw, struct stream_ref *ref, struct target *t,
	    struct err *e);
void ref_translate(struct stream_ref *ref, const struct target *t);
int copy_data(struct rw *rw, struct stream_writer *w, struct oid *id,
	      struct err *e);
int modify_id(struct rw *rw, struct oid *id, struct err *e);

/* lfs.c: rules applied to blobs (LFS pointers, drops) and .gitattributes */
struct blob_info;
struct lfs;
int lfs_init(struct rw *rw, struct err *e);
void lfs_free(struct rw *rw);
int lfs_blob(struct rw *rw, struct err *e);
int lfs_modify(struct rw *rw, struct err *e);
int lfs_copy(struct rw *rw, struct err *e);
int lfs_delete(struct rw *rw, struct err *e);
int lfs_commit_begin(struct rw *rw, struct err *e);
int lfs_commit_end(struct rw *rw, struct err *e);
int lfs_flush(struct rw *rw, struct err *e);
/* Makes the store's objects durable and puts them in place. */
int lfs_finish(struct rw *rw, struct err *e);
int lfs_declare(struct rw *rw, struct mark_ent *m, struct err *e);

/* lfs.c, for splits.c */
int blob_read_all(struct rw *rw, struct blob_info *bi, struct buf *out,
		  struct err *e);
/* The blob behind a tree entry or id, from the target or source. */
int lfs_blob_by_id(struct rw *rw, const struct oid *id, struct blob_info **out,
		   struct err *e);
const struct oid *blob_id(const struct blob_info *bi);
/* The whole content of bi: borrowed from its held copy when it has one
 * (valid until the commit ends), else read into scratch. */
int blob_view(struct rw *rw, struct blob_info *bi, struct buf *scratch,
	      const char **ptr, size_t *len, struct err *e);
/*
 * The in-memory copy of bi, for a caller that would otherwise copy it
 * whole, when bi can be read again from the source repository (same id,
 * same size): NULL otherwise. The caller may take its bytes and must then
 * call blob_forget_copy, after which bi is read from the repository.
 */
struct buf *blob_memory(struct rw *rw, struct blob_info *bi);
void blob_forget_copy(struct rw *rw, struct blob_info *bi);

/* splits.c: the split action */
struct rule;
int splits_place(struct rw *rw, struct stream_cmd *c, struct blob_info *bi,
		 const struct rule *rule, struct err *e);
int splits_delete(struct rw *rw, const char *path, size_t len,
		  const struct rule *rule, struct err *e);
/* The version of the split file at path the commit holds (NULL: none). */
int splits_source(struct rw *rw, const char *path, size_t len,
		  struct blob_info **out, struct err *e);
/* An error (exit 2, naming commit, path and rule) when path, or a
 * directory on its way, is a part of a split file: what is the command
 * ("M", "D", "R", "C") that would touch it. */
int splits_check_path(struct rw *rw, const char *what, const char *path,
		      size_t len, struct err *e);
/* 1 when the commit holds a split file below dir (which then is a
 * directory of the stream even when the tree has no entry there). */
int splits_under(struct rw *rw, const char *dir, size_t dlen, struct err *e);
/* 1 when the tree entry (path, id) is a part of a split file. */
int splits_is_part(struct rw *rw, const char *path, size_t len,
		   const struct oid *id, struct err *e);
/*
 * A command takes the directory dir as a whole: fn is called for every
 * split file inside it that the commit holds (its path and version), and
 * with remove its parts are deleted (wherever they are). Then a part
 * left in dir whose split file is not inside it is an error.
 */
typedef int (*splits_found_fn)(void *ctx, const char *path, size_t len,
			       struct blob_info *bi);
int splits_take_dir(struct rw *rw, const char *what, const char *dir,
		    size_t dlen, int remove, splits_found_fn fn, void *ctx,
		    struct err *e);
void splits_commit_end(struct rw *rw, const struct oid *id);
/* The tree changed under the split files (deleteall): look next time. */
void splits_forget(struct rw *rw);
void splits_free(struct rw *rw);

/* msgids.c: old ids in commit messages become new ids; returns how many */
int msgids_rewrite(struct rw *rw, struct buf *msg);
void msgids_free(struct rw *rw);

/* report.c: --report, --report-json (all no-ops without them) */
void report_init(struct rw *rw);
void report_free(struct rw *rw);
void report_est_begin(struct rw *rw);
void report_est_feed(struct rw *rw, const void *p, size_t n);
uint64_t report_est_end(struct rw *rw, uint64_t size);
uint64_t report_est_buf(struct rw *rw, const void *p, size_t n);
void report_input_blob(struct rw *rw, const struct oid *id, uint64_t size,
		       uint64_t est);
void report_output_blob(struct rw *rw, const struct oid *id, uint64_t size,
			uint64_t est);
void report_path(struct rw *rw, const char *path, size_t len,
		 const struct oid *id, uint64_t size);
void report_rule(struct rw *rw, size_t index, const char *path, size_t len,
		 const struct oid *id, uint64_t size, uint64_t est);
void report_split(struct rw *rw, const char *path, size_t len,
		  uint64_t version_bytes, const char *part, size_t plen,
		  uint64_t part_bytes);
int report_write(struct rw *rw, uint64_t refs, uint64_t refs_changed,
		 uint64_t rewritten, char **tmp_txt, char **tmp_json,
		 struct err *e);
/* lfs.c: the rule set (for reports) */
const struct rules *lfs_rules(const struct rw *rw);

/* progress.c */
void progress_init(struct rw *rw);
void progress_tick(struct rw *rw);
void progress_done(struct rw *rw);

/* notes.c */
unsigned char notes_fanout(uint64_t n);
int64_t notes_change_fanout(struct rw *rw, struct tnode **root,
			    unsigned char fanout, struct err *e);
int notes_modify(struct rw *rw, struct err *e);

/* outputs.c: the files left behind, written to temp names first */
enum { OUT_CMAP, OUT_REFMAP, OUT_MARKS, OUT_REPORT, OUT_REPORT_JSON, OUT_N };
int outputs_prepare(struct rw *rw, char *tmp[OUT_N], struct err *e);
int outputs_commit(struct rw *rw, char *tmp[OUT_N], struct err *e);
void outputs_drop(char *tmp[OUT_N]);

#endif
