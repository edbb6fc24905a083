/*
 * run.h - `migrate run` below its command line: the repositories and the
 * state of a run, the pipeline (git fast-export | the filter | git
 * fast-import), the check of every computed id, the state files, the ref
 * plan and its journal, --restart, git-annex set-up and RESET.md. One
 * layer above the engine and the analysis; rewrite/cli/cmd_run.c holds the
 * options, the flows and the endings.
 *
 * Files by concern: files.c (state paths, helpers), target.c (set-up,
 * lock, recovery, release), revs.c (what is exported), pipeline.c,
 * objects.c (side repository, borrowed objects, packs), verify.c,
 * statefiles.c (state files, the rules kept), refs.c (refusals, ref plan,
 * the journaled commit), restart.c, annexsetup.c, reset.c (RESET.md),
 * journal.c (crash safety), checkout.c (the work trees' check-out).
 */
#ifndef MIGRATE_RUN_H
#define MIGRATE_RUN_H

#include <sys/types.h>

#include "../../rules/rules.h"
#include "../engine/engine.h"
#include "../git/git.h"

/*
 * journal.c: crash safety of `migrate run`: the lock on the state
 * directory, the journal written before the first ref changes, and the
 * way an interrupted run is finished or rolled back at the next start.
 *
 * A run imports into a side repository (<state>/import.git, sharing the
 * objects of the real one), so no ref of the repository moves before the
 * journal exists. The journal (<state>/journal, written atomically) holds
 * the old and new value of every ref the run moves, the work trees to
 * reset, and the state files to rename from <name>.new. Finishing moves
 * the refs in one `git update-ref --stdin` transaction (many refs: two
 * halves side by side, prepared together, then committed), resets the work
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
	int lfs;		/* the run made LFS files: run_checkout copies
				 * them (not journaled: a recovery resets) */
	char **wts;		/* linked work trees to reset */
	size_t nwts;
	struct jref *refs;
	size_t nrefs, refs_alloc;
	char **files;		/* state files: <state>/<name>.new -> <name> */
	size_t nfiles;
	/* state files removed once the run is finished, before the journal:
	 * the lists of packs a failed run drops (kept by a rollback) */
	char **drops;
	size_t ndrops;
	/* journal_finish calls refs_moving as the run that wrote the journal
	 * starts git update-ref, refs_moved once the refs moved, before the
	 * work trees are reset (each may be NULL) */
	void (*refs_moving)(void *arg);
	void *refs_moving_arg;
	void (*refs_moved)(void *arg);
	void *refs_moved_arg;
};

void journal_add_ref(struct journal *j, const char *name,
		     const struct oid *old, const struct oid *new,
		     int no_deref);
void journal_add_file(struct journal *j, const char *name);
void journal_add_wt(struct journal *j, const char *path);
void journal_add_drop(struct journal *j, const char *name);
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
 * journal_finish returns -2 when its ref transaction failed and no ref
 * moved, -1 when a later step failed or the transaction failed after
 * moving some refs (git update-ref killed while it renamed its lock
 * files): the journal stays. j->refs_moved, when set, is called once the
 * refs moved.
 */
int journal_finish(const struct journal *j, int recovering, size_t *locks,
		   struct err *e);
int journal_rollback(const struct journal *j, size_t *locks, struct err *e);

/*
 * checkout.c: `git reset --hard` of the work tree at dir, with git's
 * parallel check-out unless the user set checkout.workers. lfs: the
 * content of its LFS files is copied from the LFS store by our threads
 * and the index given their stat data, rather than each piped through
 * git-lfs's smudge one after the other (when git-lfs is the plain
 * `git-lfs filter-process` and no setting of its chooses what to
 * smudge); an ordinary reset follows only for a pointer left (its
 * object not in the store, a failed copy): git-lfs smudges it. 0, or -1
 * with e set.
 */
int run_checkout(const char *dir, int lfs, struct err *e);

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
/* Removes the side repository, <state>/import.git (its objects link, not
 * what it names): 0, or -1 (none, or not all of it). */
int state_side_remove(const char *state);

/*
 * Removes the pack-<hash>.keep files in packdir that hold exactly
 * "fast-import": what a git fast-import killed before its end left (it
 * removes its own when it ends). A retry of the same stream writes a pack
 * of the same name and would die on the keep file ("cannot create keep
 * file"). The packs themselves stay. Also the temp files of packs the
 * filter was writing (tmp_migrate_*, rewrite/git/packw.c), and of the
 * writer's packs joined (RUN_JOIN_BASE-*, run_join_made). Returns how
 * many it removed.
 */
size_t import_keeps_clean(const char *packdir);
/* Removes dir and everything below it (symlinks themselves, never what
 * they name). 0, or -1 (errno set) when something stayed. */
int remove_tree(const char *dir);
/* remove_tree, with the file last (below dir) removed after everything
 * else: a kill while it works leaves last, or nothing but empty folders. */
int remove_tree_last(const char *dir, const char *last);

struct run_opts {
	struct rw_options f;	/* the options shared with the filter */
	const char *repo, *to;
	int in_place, verify_only, rollback, restart, undo;
	int allow_no_rules;	/* a run that only writes the maps */
	char **revs;
	int nrevs;
	/* git lfs migrate's ref options: --everything (every ref, as without
	 * REV-ARGS), --include-ref REF and --exclude-ref REF (REF and ^REF
	 * after the REV-ARGS), in the order given; ref_arg is the option
	 * parser's slot */
	int everything;
#define RUN_REFS_MAX 64
	struct run_ref {
		const char *name;
		int exclude;
	} refs[RUN_REFS_MAX];
	int nrefs;
	const char *ref_arg;
};

#define SIDE_KEYS 3

/* What the check of a run read (run_verify_run), for the steps after it. */
struct run_checked {
	struct gitrefs refs;	/* the repository's refs (gitrefs_list, all) */
	struct oid head;	/* the commit of its HEAD (null: none) */
	size_t map_entries;	/* the commit map's entries (cmap_count) */
};

struct run {
	struct run_opts o;
	/* the rules of the run, parsed once (run_setup: the rule file, the
	 * ids, the peers' options) and handed to the filter; rules_peer:
	 * the options' rules as text, which the state keeps with the file's */
	struct rules *rules;
	struct buf rules_peer;
	char *src_gitdir;	/* absolute */
	const char *dst;	/* what git -C gets for the target */
	char *dst_gitdir, *commondir;
	char *state, *store;
	/* git-annex (issue 14): a rule converts to it; the target's UUID
	 * (its annex.uuid, or a new one), store, and the .gitattributes lines
	 * of the lfs glob rules (info/attributes repeats them after
	 * `* filter=annex`, which would win over the tree's) */
	int annex;
	/* a rule is unlfs; the side repository's config (side_keys), and
	 * whether the source sets core.bigFileThreshold itself */
	int unlfs;
	int lfs;		/* a rule is lfs: the history gets .gitattributes */
	char *side_config[SIDE_KEYS];
	int own_threshold;
	char annex_uuid[37];
	char *annex_dir;
	struct buf lfs_lines;
	char *side;		/* <state>/import.git: fast-import writes there */
	/* unlfs: the target's objects directory, where the files taken back
	 * are stored as packs of their own, and the list of those packs */
	char *dst_objects, *packs_list;
	/* the split parts the filter wrote into the stream (blob.h
	 * new_blobs), and the packs of the target before fast-import wrote
	 * its own */
	char *new_blobs;
	/* the packs the filter's writer thread named (blob.h made_list) */
	char *made_packs;
	/* the `git pack-objects` joining them (run_join_made_start; 0:
	 * none), and the list of what it joins */
	pid_t join;
	struct buf join_list;
	struct buf packs_before;
	char *before_restart;	/* --restart: where the old state was copied */
	int lockfd;
	struct journal j;	/* what this run moves, once checked */
	int first;		/* no earlier run in the state */
	int bare;
	int dst_clean;		/* --to: the work tree may be updated */
	/* --to: this run made the target (-1: there was none, 1: it was an
	 * empty directory, 0: neither), and takes it back if it fails */
	int made_to;
	mode_t to_mode;
	/* the refs moved: the result stays, whatever fails after */
	int moved;
	int dst_absent;		/* --dry-run --to a directory not there yet */
	char *dry_dir;		/* --dry-run: a temp dir for the working files */
	/* --to: the target's objects/info/alternates while it borrows the
	 * source's objects (NULL: not written), and what it held before */
	char *alternates;
	struct buf alt_before;
	int alt_had;
	/* --to: the `git repack -a -d` started beside the check-out of the
	 * work tree (run_dissociate_start; 0: none) */
	pid_t repack;
	struct gitrefs src_before, dst_before;
	/* the side repository as the check read it (run_convert) */
	struct run_checked side_read;
	/* git's reads for the plan of the refs, running beside the check
	 * (run_plan_start; NULL: not started) */
	struct run_plan_reads *plan;
	/* the side repository's removal and the freed memory given back,
	 * beside the refs' move (run_tidy_start; NULL: not started) */
	struct run_tidy *tidy;
	struct rw_stats stats;	/* the filter's, for the ending lines */
	struct gitargv revs;
	uint64_t total;
	size_t map_before;
};

/* The files one run leaves in the state: written under name.new during
 * the run, renamed after the check (state_commit). */
struct state_files {
	char *map, *refmap, *marks, *imarks;
};

#define SIDE_HEAD "refs/migrate/import-HEAD"

/* files.c */
/* A state file of this run: written as <name>.new and added to the
 * journal, which renames it into place with the refs. */
int run_state_put(struct run *r, const char *name, const struct buf *data,
		  struct err *e);
/* 1 if an interrupted run's journal is in the state directory. */
int run_journal_pending(const char *state);
/* 1 if dir has entries other than . and .., 0 if empty, -1 if absent. */
int run_dir_has_entries(const char *dir);
/* A step after the filter's part, on its own line where the progress
 * line shows (a terminal, or --progress; never with -q). */
void run_phase(const struct run_opts *o, const char *what);
/* One line of `git -C dir ARGS`, newline removed, into *out (caller
 * frees). */
int run_git_line(char **out, const char *dir, struct err *e, ...);
/* `git status --porcelain` of dir's tracked files, appended to out. */
int run_worktree_status(const char *dir, struct buf *out, struct err *e);
/* 1 if `git status` shows no change to tracked files, 0 if it does. It
 * only looks: without --no-optional-locks, status takes index.lock to
 * write the refreshed index back, and a run killed there leaves a lock
 * that no journal knows and that the next run's reset dies on. */
int run_worktree_clean(const char *dir, struct err *e);

/* The four files of the filter and fast-import in state, each name with
 * suffix ("" or ".new"); run_state_files_free frees them. */
void run_state_files_init(struct state_files *f, const char *state,
			  const char *suffix);
void run_state_files_free(struct state_files *f);
/* <state>/<name> replaced by text (atomically). */
int run_write_small(const char *state, const char *name, const char *text,
		    struct err *e);

/* target.c */
/*
 * Removes the packs listed in list (unlfs: "<id> <pack path without
 * .pack>" lines, blob.h objects_list) but those named in keep (pack
 * names, a line each; NULL: none). The number of files removed.
 */
size_t run_drop_packs(const char *list, const struct buf *keep);
/* What a killed run left: state files, the side repository, temp files of
 * the LFS store and of the git-annex one (<common-dir>/annex/tmp), packs
 * of files taken back from LFS. */
size_t run_clean_all(const struct run *r);
/* The packs of files taken back are kept for good: their list goes. */
void run_packs_kept(const struct run *r);
/*
 * Once the journal is written nothing reads the side repository: a thread
 * removes it, then gives the memory the conversion freed back to the
 * kernel, on the core git update-ref and the state's syncs leave idle
 * (else the kernel does the latter at exit, after everything else).
 * run_tidy_start (arg: the struct run) starts it as git update-ref
 * starts, once the refs were listed (two git processes, a core each);
 * a second call does nothing. run_tidy_join waits for it (nothing when
 * none was started).
 */
void run_tidy_start(void *arg);
void run_tidy_join(struct run *r);
/* The source, the target (--to made or checked, --in-place), the state
 * folder, its lock and the recovery of an interrupted run; refused before
 * anything is written: not a repository, sha256, no rules. run_release
 * frees what run_setup and the run took. */
int run_setup(struct run *r, struct err *e);
void run_release(struct run *r);
/*
 * A --to run that failed before it moved any ref (no journal) leaves the
 * target as it found it: gone again, or an empty directory again, so
 * that a retry, from this checkout or another, starts afresh.
 */
void run_take_back_target(struct run *r);

/* revs.c */
/* qsort/bsearch order of struct oid. */
int run_by_oid(const void *a, const void *b);
/* The commits the state's tips file names, sorted and unique, into *ids
 * (caller frees); *n of them. A missing file is no tips. */
int run_tips_load(struct oid **ids, size_t *n, const char *state,
		  struct err *e);
/* The export's revisions into r->revs: REV-ARGS (default --all) less the
 * tips an earlier run recorded; --restart: the backups. */
int run_build_revs(struct run *r, struct err *e);
/* The number of commits the export will hold, for the progress ETA; 0
 * when rev-list cannot tell (fast-export then reports the problem). */
uint64_t run_count_commits(const struct run *r);

/* pipeline.c */
/* The pipeline into the side repository, and its check. */
int run_convert(struct run *r, const struct state_files *fnew,
		struct err *e);

/* objects.c */
/* The side repository fast-import writes into (<state>/import.git),
 * sharing the target's objects. */
int run_side_create(struct run *r, struct err *e);
/* --to: the target borrows the source's objects (alternates) while the
 * import runs. */
int run_borrow_objects(struct run *r, struct err *e);
/* The side repository's config (objects.c: side_keys): the source's own
 * settings of how objects are stored, or, when it sets none and a rule is
 * unlfs, ours. */
void run_side_config_prepare(struct run *r);
/* The target's alternates as they were before borrow_objects. */
int run_unborrow(struct run *r, struct err *e);
/*
 * --to, after the refs moved: one `git repack -a -d` copies what the
 * target borrowed into one pack (reusing the source's deltas), then the
 * alternate goes: the result depends on nothing and needs no gc.
 * run_dissociate_start starts that repack (arg: the struct run) as soon
 * as the refs moved, beside the check-out of the work tree, each on a
 * core of its own (git's readers find objects a repack moves);
 * run_dissociate waits for it, or runs it when none was started.
 */
void run_dissociate_start(void *arg);
int run_dissociate(struct run *r, struct err *e);
/*
 * unlfs: the files taken back went into packs of their own, one each
 * (rewrite/blob/pool.c), while fast-import wrote the rest. One `git
 * pack-objects` now copies them into one pack (their deflated data as it
 * is: no delta search, no second deflate; more than one where the
 * repository's pack.packSizeLimit says so) and the small ones go. With
 * --to, dissociate's `git repack -a -d` then copies that pack as it is:
 * it tries no delta between two whole objects of one pack, while the
 * small packs had it search deltas among all the files (on the assets
 * corpus 31 s of the run's 47 s, for 436 MB instead of 1,147 MB; a cost
 * that grows with the files, which a later `git gc --aggressive` can
 * still pay when wanted). The list then names the joined pack: until the
 * refs move (run_all, or recover finishing a journal) it is what a run
 * that fails or is killed drops (clean_all).
 */
int run_pack_together(struct run *r, struct err *e);
/* Notes the packs the target has before fast-import writes one. */
int run_packs_before(struct run *r, struct err *e);
/*
 * fast-import stores each new blob as a delta forward, against the blob
 * before it in the stream, whatever its path: another part's, as often as
 * not, and each new record inside a delta of its own. With split rules its
 * pack is packed again in two: the parts the filter wrote, with their paths
 * as hints and a fresh delta search among the versions of each part (git's
 * way: the largest version whole, the others as copies out of it), and the
 * rest as they are; then it goes. On a tracker-like history of 2,000
 * commits: 3.85 MB -> 1.76 MB (`git repack -a -d -f`: 1.64 MB), for
 * about 1.5 s of CPU on a 10 s run. 0 or -1.
 */
int run_pack_new_blobs(struct run *r, struct err *e);
/*
 * --in-place: the writer's packs (its segments of trees, each named as
 * soon as written so that fast-import takes the stream beside the run: a
 * dozen on git's history) are joined into one by `git pack-objects`, their
 * deltas kept, started once the stream ended: it runs beside fast-import's
 * own end, on the core the run leaves idle there. Not with split parts
 * (run_pack_new_blobs packs the writer's packs again, with them) nor with
 * --to (its repack joins everything). The pack is named RUN_JOIN_BASE-*
 * until run_join_made keeps it (listed in made_packs, renamed as git names
 * packs, the joined ones removed) or, keep 0 (a failed run), removes it;
 * a join that failed leaves the writer's packs as they are, with a
 * warning. What a killed run left of one, import_keeps_clean removes.
 * 0 or -1.
 */
#define RUN_JOIN_BASE "tmp_migrate_join"

/* The state files listing the packs the filter's threads wrote ("made
 * <path>" lines, blob.h made_list) and those of files taken back from
 * LFS (blob.h objects_list): a run that moved no ref drops what they
 * name (run_clean_all); the journal removes them once the refs moved. */
#define RUN_MADE_PACKS "made-packs"
#define RUN_UNLFS_PACKS "unlfs-packs"
int run_join_made_start(struct run *r, struct err *e);
int run_join_made(struct run *r, int keep, struct err *e);

/* verify.c */
/*
 * The check of one run (docs/DESIGN.md, data flow 4): migrate's marks equal
 * fast-import's (a mark of migrate's alone: a commit the run wrote, in
 * the target), the commit map's entries of the run (from map_before on)
 * are objects of those marks, and the target's refs are those of the ref
 * map. objects: the repository's objects directory (NULL: git is asked).
 * read (may be NULL) gets what the check read (its refs the caller's to
 * free). Returns 0, or -1 with e naming the first difference.
 */
int run_verify_run(const char *dir, const char *objects,
		   const struct state_files *f, size_t map_before,
		   struct run_checked *read, struct err *e);

/* statefiles.c */
/*
 * A run goes on with the conversion the first one started: new commits
 * are converted with the rules the old ones were, or the history would
 * mix two conversions. The rules of the last run are kept in the state;
 * other rules are refused, saying what to do instead.
 */
int run_check_rules(const struct run *r, struct err *e);
/* The state files besides the four of the filter and fast-import, as
 * <name>.new, each added to the journal: those known before the stream
 * (last-run, rules) by run_write_state_first, before it, where their
 * syncs wait beside the conversion; the others after the check. */
int run_write_state_first(struct run *r, struct err *e);
int run_write_state(struct run *r, const struct state_files *f,
		    const struct gitrefs *side, struct err *e);
/* The entry count of the map at path (0 if it does not exist yet). */
int run_map_entries(size_t *n, const char *path, struct err *e);
/* Copies the state's map to the run's working copy (the filter loads and
 * extends it; it replaces the state's only after the check). */
int run_map_prepare(struct run *r, const struct state_files *fin,
		    const struct state_files *fnew, struct err *e);

/* refs.c */
/* An in-place run's linked work trees whose branch the journal moves:
 * clean ones join the journal, dirty ones refuse the run. */
int run_plan_linked(struct run *r, struct err *e);
/* Untracked files in dir that moving its branch what from old to new
 * would overwrite refuse it; clean_needed: so do uncommitted changes. */
int run_check_worktree(const char *dir, const char *what,
		       const struct oid *old, const struct oid *new,
		       int clean_needed, struct err *e);
/* 1 if HEAD names a commit in dir. */
int run_head_exists(const char *dir);
/* --to, first run: NEWDIR's HEAD names the branch the source's names. */
int run_copy_head(const struct run *r, struct err *e);
/* Before anything is stored, a run of every branch (no REV-ARGS): a
 * linked work tree with uncommitted changes on one of them. */
int run_refuse_dirty_linked(const struct run *r, struct err *e);
/* Before anything is stored: an untracked .gitattributes at the top of
 * the work tree, which the new history (lfs rules) would overwrite. */
int run_refuse_untracked_attributes(const struct run *r, struct err *e);
/* A rebase, merge, cherry-pick, revert or bisect in progress in the git
 * dir gitdir: its refs and index belong to that operation. */
int run_refuse_in_progress(const char *dir, const char *gitdir,
			   struct err *e);
/* The value of HEAD in dir (null if unborn), and the branch it names
 * (NULL: detached; caller frees). */
void run_head_of(const char *dir, struct oid *id, char **sym);
/* git's reads of the target for the plan of run_commit_run, started now
 * (once) so that they run beside fast-import's end and the check;
 * run_commit_run collects them, and run_plan_drop waits for them on a way
 * that never gets there. */
void run_plan_start(struct run *r);
void run_plan_drop(struct run *r);
/*
 * After the check: the journal of the run (refs, work trees, state files),
 * refusals of what it would overwrite, then the journal is written and
 * finished. A failure before the journal leaves the repository as it was.
 */
int run_commit_run(struct run *r, const struct state_files *fin,
		   const struct state_files *fnew, struct err *e);

/* reset.c */
/* RESET.md for this run: refmap holds its "<old> <new> <ref>" lines. */
void run_reset_text(struct buf *out, const struct run *r,
		    const struct state_files *f, const struct buf *refmap);
/* <state>/RESET.md.new (journaled): run_reset_text's, for this run. */
int run_write_reset(struct run *r, const struct state_files *fin,
		    const struct state_files *fnew, struct err *e);

/* annexsetup.c */
/* Whether a rule converts to git-annex (the lfs glob rules' lines kept
 * for info/attributes), and the target's UUID: its annex.uuid, or a new
 * one. Notes, on the way, whether a rule is lfs or unlfs. */
int run_annex_prepare(struct run *r, struct err *e);
/* The config, info/attributes and hooks `git annex init` writes
 * (annex.uuid, annex.version 10, the annex filter, `* filter=annex`), the
 * lfs glob lines after it when lfs rules are mixed in. */
int run_annex_setup(struct run *r, struct err *e);
/*
 * git-annex, a work tree reset by the run: git-annex's smudge filter could
 * not record in the index (git held its lock) that the files' content is
 * there, so `git status` would show them modified and the next run would
 * refuse the work tree; `git annex restage` records it. The refs have
 * moved by now: a failure is a warning.
 */
void run_annex_restage(const struct run *r);

/* undo.c */
/* --undo: a finished in-place run taken back (refs to their backups,
 * through the journal; backups removed; the state kept in
 * <state>/before-undo/). Refused when a ref moved since the run. */
int run_undo(struct run *r, struct err *e);

/* restart.c */
/*
 * --restart: the next run converts the history under
 * refs/migrate/original/ as a first run would, and its refs move from
 * what the last run left to the new conversion. Only where that loses
 * and mixes nothing: every ref must still be the conversion of its backup
 * (a ref a later run or local work moved would lose those commits), have
 * a backup (one made since would keep the old conversion), and no backup
 * may hold a commit of the old conversion (one a later run made of a
 * branch grown on the rewritten history); HEAD must name a branch.
 */
int run_restart_prepare(struct run *r, struct err *e);
/* The state files copied to <state>/FOLDER (FOLDER.2, .3... when it is
 * there already; none replaced); its path in r->before_restart. */
int run_keep_state(struct run *r, const char *folder, struct err *e);
/* The state files a run leaves, removed (the next run is a first one). */
void run_drop_state(const struct run *r);
/* For what (--restart, --undo): the last run's map into m, the refs now
 * and those under refs/migrate/original/; refused (ERR_USAGE, naming what
 * is wrong) without backups, on a detached HEAD, or unless every ref is
 * still the conversion of its backup (run_check_conversions). */
struct cmap;
int run_load_backups(struct run *r, const char *what, const char *doing,
		     struct cmap *m, struct gitrefs *now, struct gitrefs *orig,
		     struct err *e);
/* Every ref (but symbolic ones and refs/migrate/) has a backup under
 * refs/migrate/original/ and is still its conversion through m; else an
 * ERR_USAGE error naming the ref, for what (--restart, --undo). */
int run_check_conversions(const struct gitrefs *now, const struct gitrefs *orig,
			  const struct cmap *m, const char *what,
			  const char *doing, struct err *e);

#endif
