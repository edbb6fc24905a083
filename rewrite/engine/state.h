/*
 * state.h - what the files of rewrite/engine/ share (folder-internal; the
 * contract is engine.h): the state fast-import keeps, as migrate mirrors
 * it (struct rw; its store is state.c), and the helpers the command
 * handlers in engine.c, notes.c, annexlog.c, msgids.c and outputs.c call.
 * The calls between these files go one way: the dispatcher (engine.c)
 * over the handlers over the state store, never back
 * (tests/integration/circles.sh).
 */
#ifndef MIGRATE_ENGINE_STATE_H
#define MIGRATE_ENGINE_STATE_H

#include <uthash.h>

#include "../../stream/stream.h"
#include "../blob/blob.h"
#include "../git/git.h"
#include "../report/report.h"
#include "engine.h"

struct mark_ent {
	uint64_t mark;
	enum obj_type type;
	struct oid oid;		/* as written */
	struct oid orig;	/* original-oid, if has_orig */
	int has_orig;
	struct tnode *tree;	/* commits */
	uint64_t size, est;	/* blobs: size and packed estimate (reports) */
	struct blob_mark bm;	/* blobs: their way with rules (blob.h) */
	/* commits, when pruning (prune.c): the nodes of the new and the
	 * original ancestry graph; the mark that names the commit in the
	 * output (its own; for a pruned one, its stand-in's, or 0 with
	 * outside set when the stand-in is named by id). A pruned commit's
	 * oid and tree are its stand-in's (null and empty: none). */
	uint32_t gnew, gorig;
	uint64_t name_mark;
	int outside, pruned;
	/* a commit the run wrote itself (blobs_store_commit): fast-import
	 * never hears of its mark, the output names it by id */
	int unheard;
	UT_hash_handle hh;
};

struct branch {
	char *name;
	struct oid tip;		/* null: no commit yet */
	struct oid tip_orig;	/* what the tip was in the source */
	int has_tip_orig;
	struct tnode *tree;
	int deleted;		/* reset ... from 000...: delete the ref */
	/* a reset to the null id went out: fast-import marks the branch for
	 * deletion and never clears the mark */
	int fi_deleted;
	/* the tip as pruning sees it (struct mark_ent's fields) */
	uint32_t tip_gnew, tip_gorig;
	uint64_t tip_mark;
	int tip_outside, tip_skipped;
	int pruned_away;	/* its tip was pruned with no ancestor left */
	/* its tip is a commit the run wrote itself: fast-import's branch is
	 * behind, so the output names the tip by id, and a commit
	 * fast-import writes on the branch gets its first parent by id */
	int fi_stale;
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
	/* pruning: as struct mark_ent's; skipped when what was named is a
	 * pruned commit (t stands for its stand-in) */
	uint32_t gnew, gorig;
	uint64_t name_mark;
	int outside, skipped;
	int unheard;		/* a commit fast-import never heard of */
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
	struct tnode *base;	/* the tree its changes apply to */
	unsigned char fanout;	/* notes fanout when the commit began */
	struct blob_commit bc;	/* what the blob's way sees of it */
	/* pruning: file changes the input gave; the parents the input
	 * named (orig graph node of the commit); the parent it would have
	 * if not a merge any more (SIZE_MAX: none); the tree of the
	 * first parent */
	uint64_t nchanges;
	size_t norig, new1st;
	uint32_t gorig;
	int first_none;		/* its first parent was pruned away */
	int root_reset;		/* its from named nothing left: reset first */
	int parents_pruned;	/* a parent was pruned (filter-repo's
				 * had_parents_pruned) */
	struct prune_parent *pp;	/* nparents of them, final */
	size_t pp_alloc;
	/* trees stored by the run (rw->trees_made): where the commit's
	 * changes begin in its text, the inline items before them, and
	 * whether it changed notes (then its changes go as they are) */
	uint64_t start_at, changes_at, inlines_before;
	int has_notes;
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
	 * after the blobs the commit turns out to need (blob.h) */
	struct stream_writer *cout;
	/* the trees the commits name are stored by the run's writer (blob.h
	 * blobs_store_tree): a commit names its root tree by id, not its
	 * changes, and fast-import writes no tree; trees_failed: the writer
	 * failed (not an id that cannot be computed) */
	int trees_made, trees_failed;
	struct blobs *blobs;	/* the rules' way for blobs; NULL: no rules */
	struct msgids *msgids;		/* old ids in messages (msgids.c) */
	struct replace_set *msg_replace;	/* --replace-message (messages.c) */
	struct buf msg_out;
	struct report *report;		/* --report, --report-json (report.h) */
	struct progress progress;
	uint64_t commits_seen;
	uint64_t commits_rewritten;	/* this run: new id differs from old */
	uint64_t commits_with_orig;	/* commits with an original-oid */
	uint64_t data_size, data_est;	/* of the data copy_data last copied */
	int seen_data;		/* a command other than feature/option came */
	int date_strict;	/* raw dates: timezone at most 1400 */
	int date_rfc2822;	/* feature date-format=rfc2822 */
	struct date_ent *dates;	/* rfc2822 date -> raw, as git parsed it */
	struct buf ident_raw;	/* a tagger with its date made raw */
	int input_wants_done;	/* the input said `feature done` */
	int input_done;		/* ... and its `done` came */
	int want_ids;		/* a map or marks file was asked for */
	int64_t annex_time;	/* the newest committer date (annexlog.c) */
	int no_ids;		/* ids could not be followed any more */
	struct prune *prune;	/* commits emptied are pruned; NULL: not */
	uint64_t commits_pruned;
};

/* prune.c: the ancestry graphs and the parents of a commit trimmed, as
 * git filter-repo's --prune-empty/--prune-degenerate auto. */
enum { PRUNE_NEW = 0, PRUNE_ORIG = 1 };
struct prune_parent {
	struct oid oid;		/* new id (null: none) */
	struct tnode *tree;
	uint32_t gnew, gorig;
	uint64_t name_mark;	/* how the output names it: a mark, */
	int outside;		/* ... or its id, */
	int src;		/* ... or as the input did: -1 the branch's
				 * tip implicitly, 0 from, k merges[k-1] */
	int skipped;		/* its original was pruned */
	int none;		/* pruned with no ancestor left */
	int unheard;		/* fast-import never heard of it: by id */
};
struct prune;
struct prune *prune_new(void);
void prune_free(struct prune *p);
/* A node of graph which (PRUNE_NEW or PRUNE_ORIG) with these parents
 * (0s are skipped); never fails. */
uint32_t prune_node(struct prune *p, int which, const uint32_t *parents,
		    size_t n);
/* The node of a commit from outside the stream (a root), made once. */
uint32_t prune_outside(struct prune *p, int which, const struct oid *id);
/* Trims v[0..n) in place; returns how many stay; *new1st as above. */
size_t prune_trim(struct prune *p, struct prune_parent *v, size_t n,
		  size_t *new1st);

/* messages.c: --replace-message on a commit's or tag's message (in
 * place), and its counts to the report. */
int msg_replace(struct rw *rw, struct buf *message, struct err *e);
void msg_report_replace(struct rw *rw);

/* state.c: marks, branches, resolving, data copied through */
struct mark_ent *mark_get(struct rw *rw, uint64_t mark);
/* Sets mark to a new object (type, id); the entry's other fields reset. */
struct mark_ent *mark_set(struct rw *rw, uint64_t mark, enum obj_type type,
			  const struct oid *oid);
/* An outside object could not be read (e set, ERR_IO): fatal (-1, at the
 * input's position) when maps were asked for, else a warning, 0, and the
 * rest of the stream passes through. */
int ids_lost(struct rw *rw, struct err *e);
int resolve(struct rw *rw, struct stream_ref *ref, struct target *t,
	    struct err *e);
void ref_translate(struct stream_ref *ref, const struct target *t);
/* A ref that named a pruned commit names its stand-in (kind NONE when
 * there is none). */
void ref_standin(struct stream_ref *ref, const struct target *t);
/* ref names a commit the output has: by its mark when it has one, else
 * by its id. */
void ref_name_commit(struct stream_ref *ref, uint64_t mark,
		     const struct oid *oid);
int copy_data(struct rw *rw, struct stream_writer *w, struct oid *id,
	      struct err *e);
int modify_id(struct rw *rw, struct oid *id, struct err *e);

struct branch *branch_get(struct rw *rw, const struct buf *name, int create);
/* The branch's tip as a target (a commit's implicit first parent). */
void branch_target(const struct branch *b, struct target *t);
/* Reads the commit `name` from db: 1 with its id and (lazily) its tree
 * in *t (1 too, with only the type, for another object), -1 on error. */
int read_commit(struct rw *rw, struct odb *db, const char *name,
		struct target *t, struct err *e);

/* annexlog.c: the git-annex branch after the history, when a rule
 * converts to git-annex (rw->opt's annex_uuid, or a new one printed). */
int annexlog_write(struct rw *rw, struct err *e);
/* Notes the date of a committer line ("NAME <EMAIL> SECS TZ", raw): the
 * git-annex branch's times are the newest one, so the same stream always
 * gives the same output. */
void annexlog_note_time(struct rw *rw, const struct buf *ident);

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
