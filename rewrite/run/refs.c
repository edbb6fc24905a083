/*
 * refs.c - the refs a run moves and the work trees it must not overwrite: refusals, the ref plan, the journaled commit.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run.h"

/* 1 if HEAD names a commit in dir. */
int run_head_exists(const char *dir)
{
	struct gitargv a = GITARGV_INIT;
	struct buf out = BUF_INIT(4096);
	struct err ignored = ERR_INIT;
	int r;

	gitargv_push(&a, "rev-parse");
	gitargv_push(&a, "-q");
	gitargv_push(&a, "--verify");
	gitargv_push(&a, "HEAD^{commit}");
	r = gitcmd_run(dir, &a, NULL, &out, &ignored) == 0;
	gitargv_clear(&a);
	buf_release(&out);
	return r;
}

/* --to, first run: NEWDIR's HEAD names the branch the source's names. */
int run_copy_head(const struct run *r, struct err *e)
{
	struct err ignored = ERR_INIT;
	char *sym = NULL;
	int rc = 0;

	if (run_git_line(&sym, r->o.repo, &ignored, "symbolic-ref", "-q", "HEAD",
		     (char *)NULL) == 0)
		rc = gitcmd_runl(r->dst, 1, NULL, e, "symbolic-ref", "HEAD", sym, (char *)NULL);
	free(sym);
	return rc;
}

/* A rebase, merge, cherry-pick, revert or bisect in progress in the git
 * dir gitdir: its refs and index belong to that operation. */
int run_refuse_in_progress(const char *dir, const char *gitdir,
			   struct err *e)
{
	static const char *const ops[][2] = {
		{ "rebase-merge", "rebase" }, { "rebase-apply", "rebase or am" },
		{ "MERGE_HEAD", "merge" }, { "CHERRY_PICK_HEAD", "cherry-pick" },
		{ "REVERT_HEAD", "revert" }, { "sequencer", "cherry-pick or revert" },
		{ "BISECT_LOG", "bisect" },
	};
	size_t i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		char *p = path_join(gitdir, ops[i][0]);
		int there = file_exists(p);
		free(p);
		if (there)
			return err_set(e, ERR_USAGE, "%s is in the middle of a %s "
				       "(%s/%s exists); finish or abort it first",
				       dir, ops[i][1], gitdir, ops[i][0]);
	}
	return 0;
}

/* 1 if <old>:<path> exists (the path was tracked before). Asked through
 * --batch-check, which answers "missing" without a message. */
static int tracked_in(const char *dir, const char *old, const char *path, size_t n)
{
	struct gitargv a = GITARGV_INIT;
	struct buf in = BUF_INIT(BUF_MAX_DEFAULT), out = BUF_INIT(4096);
	struct err ignored = ERR_INIT;
	int r;

	gitargv_push(&a, "cat-file");
	gitargv_push(&a, "--batch-check");
	buf_printf(&in, "%s:%.*s\n", old, (int)n, path);
	r = gitcmd_run(dir, &a, &in, &out, &ignored) == 0 && out.len &&
	    !strstr(out.ptr, " missing");
	gitargv_clear(&a);
	buf_release(&in);
	buf_release(&out);
	return r;
}

/*
 * Untracked (or ignored) files of the work tree at top that moving from
 * commit old to new would overwrite, as `git checkout` refuses: a path new
 * adds where something untracked is, or a file where new needs a
 * directory. The first one is named in e (ERR_USAGE).
 */
static int refuse_untracked(const char *top, const char *what,
			    const char *old, const char *new, struct err *e)
{
	struct buf out = BUF_INIT(SIZE_MAX / 2), p = BUF_INIT(BUF_MAX_DEFAULT);
	struct stat st;
	const char *path, *end, *cut;
	int rc = gitcmd_runl(top, 1, &out, e, "diff", "--name-only", "-z",
			     "--no-renames", "--diff-filter=A", old, new, (char *)NULL);

	for (path = out.ptr; rc == 0 && path < out.ptr + out.len; path = end + 1) {
		end = path + strlen(path);
		/* each leading directory, then the path itself */
		for (cut = strchr(path, '/'); rc == 0; cut = strchr(cut + 1, '/')) {
			if (!cut)
				cut = end;
			buf_reset(&p);
			buf_printf(&p, "%s/%.*s", top, (int)(cut - path), path);
			if (lstat(p.ptr, &st) < 0)
				break;
			if (cut != end && S_ISDIR(st.st_mode))
				continue;
			if (!tracked_in(top, old, path, (size_t)(cut - path)))
				rc = err_set(e, ERR_USAGE, "the untracked file %s "
					     "would be overwritten by the new history "
					     "of %s; move it away first", p.ptr, what);
			break;
		}
	}
	buf_release(&out);
	buf_release(&p);
	return rc;
}

/* HEAD of a repository, asked of two git commands side by side. */
struct head_read {
	struct gitcmd_job id, sym;
};

static void head_start(struct head_read *h, const char *dir)
{
	gitcmd_start(&h->id, dir, "rev-parse", "-q", "--verify",
		     "HEAD^{commit}", (char *)NULL);
	gitcmd_start(&h->sym, dir, "symbolic-ref", "-q", "HEAD", (char *)NULL);
}

static void head_collect(struct head_read *h, struct oid *id, char **sym)
{
	struct buf out = BUF_INIT(1 << 20);
	struct err ignored = ERR_INIT;

	*sym = NULL;
	gitcmd_collect_oid(&h->id, id);
	if (gitcmd_collect(&h->sym, 1, &out, &ignored) == 0) {
		gitcmd_chomp(&out);
		*sym = buf_detach(&out, NULL);
	}
	buf_release(&out);
}

/* The work trees of the target's repository (git worktree list) and the
 * target's own top (none when bare), asked side by side. */
struct linked_read {
	struct gitcmd_job list, top;
	int has_top;
};

static void linked_start(struct linked_read *l, const struct run *r)
{
	gitcmd_start(&l->list, r->dst, "worktree", "list", "--porcelain",
		     (char *)NULL);
	if ((l->has_top = !r->bare))
		gitcmd_start(&l->top, r->dst, "rev-parse", "--show-toplevel",
			     (char *)NULL);
}

/* Their answers: the list in out, the top in self (empty: none). */
static int linked_collect(struct linked_read *l, struct buf *out,
			  struct buf *self, struct err *e)
{
	struct err ignored = ERR_INIT;
	int rc = gitcmd_collect(&l->list, 1, out, e);

	if (l->has_top && gitcmd_collect(&l->top, 1, self, &ignored) == 0)
		gitcmd_chomp(self);
	else
		buf_reset(self);
	return rc;
}

/* The value of HEAD in dir (null if unborn), and the branch it names
 * (NULL: detached; caller frees). */
void run_head_of(const char *dir, struct oid *id, char **sym)
{
	struct head_read h;

	head_start(&h, dir);
	head_collect(&h, id, sym);
}

/* git's reads of the target for the plan of the refs (run_commit_run):
 * its HEAD and the branch it names, and for an in-place run the backups
 * it finds there and its work trees. */
struct run_plan_reads {
	struct head_read dst;
	struct gitcmd_job orig;
	struct linked_read linked;
	int in_place;
};

#define ORIGINALS "refs/migrate/original/"

void run_plan_start(struct run *r)
{
	struct run_plan_reads *p;

	if (r->plan)
		return;
	p = r->plan = xcalloc(1, sizeof(*p));
	head_start(&p->dst, r->dst);
	if ((p->in_place = r->o.in_place)) {
		gitrefs_start(&p->orig, r->dst, ORIGINALS);
		linked_start(&p->linked, r);
	}
}

/* Their answers: the target's HEAD (null if unborn) and its branch (NULL:
 * detached; caller frees); in place, the backups, and the work trees
 * (linked, for each_linked_of; has_linked 1). 0, or -1 with e set. */
static int plan_collect(struct run *r, struct oid *head, char **sym,
			struct gitrefs *have, struct linked_read *linked,
			int *has_linked, struct err *e)
{
	struct run_plan_reads *p;
	int rc = 0;

	run_plan_start(r);
	p = r->plan;
	head_collect(&p->dst, head, sym);
	if (p->in_place)
		rc = gitrefs_collect(have, &p->orig, ORIGINALS, e);
	*linked = p->linked;
	*has_linked = p->in_place;
	free(p);
	r->plan = NULL;
	return rc;
}

/* A linked_read that will not be used, waited for. */
static void linked_drop(struct linked_read *l)
{
	struct buf out = BUF_INIT(SIZE_MAX / 2), self = BUF_INIT(4096);
	struct err ignored = ERR_INIT;

	(void)linked_collect(l, &out, &self, &ignored);
	buf_release(&out);
	buf_release(&self);
}

void run_plan_drop(struct run *r)
{
	struct gitrefs have = GITREFS_INIT;
	struct linked_read linked;
	struct err ignored = ERR_INIT;
	struct oid head;
	char *sym = NULL;
	int has_linked;

	if (!r->plan)
		return;
	(void)plan_collect(r, &head, &sym, &have, &linked, &has_linked, &ignored);
	if (has_linked)
		linked_drop(&linked);
	free(sym);
	gitrefs_free(&have);
}

/* The journal's new value of ref name, or NULL if the run leaves it. */
static const struct oid *planned(const struct journal *j, const char *name)
{
	size_t i;

	for (i = 0; i < j->nrefs; i++)
		if (!strcmp(j->refs[i].name, name))
			return &j->refs[i].new;
	return NULL;
}

/*
 * The refs the ref map says are deleted (40 zeros: every commit of the
 * branch was pruned) and the target has: the run deletes them, or the old
 * history would stay reachable through them. 0, or -1 with e set.
 */
static int plan_deleted(struct run *r, const struct state_files *fnew,
			const struct gitrefs *side, struct err *e)
{
	struct buf text = BUF_INIT(SIZE_MAX / 2);
	struct oid none = oid_null;
	const struct gitref *g;
	struct refmap_line l;
	char *line, *nl, *name;
	int rc = file_read(fnew->refmap, &text, e);

	for (line = text.ptr; rc > 0 && (nl = strchr(line, '\n')); line = nl + 1) {
		if (refmap_line_parse(line, (size_t)(nl - line), &l) < 0 ||
		    !oid_is_null(&l.new))
			continue;
		name = xmemdup(l.ref, l.ref_len);
		g = gitrefs_find(&r->dst_before, name);
		if (g && !g->symbolic && !gitrefs_find(side, name) &&
		    !planned(&r->j, name))
			journal_add_ref(&r->j, name, &g->id, &none, 0);
		free(name);
	}
	buf_release(&text);
	return rc < 0 ? -1 : 0;
}

/* The refs the run moves: those fast-import wrote in the side repository
 * that differ from the target's, HEAD when it is detached, and the
 * backups of an in-place run. head, sym: the target's HEAD and the branch
 * it names (NULL: detached); side_head: the side repository's HEAD; have:
 * the target's backups already there (in place). */
static int plan_refs(struct run *r, const struct state_files *fnew,
		     const struct gitrefs *side, const struct oid *head,
		     const char *sym, const struct oid *side_head,
		     const struct gitrefs *have, struct err *e)
{
	struct oid none = oid_null;
	const struct gitref *g;
	char *name = NULL;
	size_t i;
	int rc = 0;

	for (i = 0; i < side->n; i++) {
		g = gitrefs_find(&r->dst_before, side->v[i].name);
		/* a symbolic ref moves with its target, never through it a
		 * second time (update-ref: "multiple updates") */
		if (g && g->symbolic)
			continue;
		if (!g || !oid_eq(&g->id, &side->v[i].id))
			journal_add_ref(&r->j, side->v[i].name, g ? &g->id : &none,
					&side->v[i].id, 0);
	}
	if (sym && !oid_is_null(side_head) && !planned(&r->j, sym)) {
		/* as fast-import writing HEAD would: the branch HEAD names */
		g = gitrefs_find(&r->dst_before, sym);
		journal_add_ref(&r->j, sym, g ? &g->id : &none, side_head, 0);
	} else if (!sym && !oid_is_null(head)) {
		struct cmap *m = cmap_new();
		const struct oid *to = NULL;
		if (!oid_is_null(side_head))
			to = side_head;
		else if ((rc = cmap_load(m, fnew->map, e)) == 0)
			to = cmap_get(m, head);
		if (to && !oid_is_null(to) && !oid_eq(to, head))
			journal_add_ref(&r->j, "HEAD", head, to, 1);
		cmap_free(m);
	}
	if (rc == 0)
		rc = plan_deleted(r, fnew, side, e);
	for (i = 0; rc == 0 && r->o.in_place && i < r->dst_before.n; i++) {
		g = &r->dst_before.v[i];
		if (g->symbolic)
			continue;	/* its target has the backup */
		name = path_join("refs/migrate/original", g->name);
		if (!gitrefs_find(have, name))
			journal_add_ref(&r->j, name, &none, &g->id, 0);
		free(name);
	}
	return rc;
}

/* The commit HEAD (head, naming the branch sym or detached) will name
 * once the journal is finished. */
static struct oid head_after(const struct run *r, const struct oid *head,
			     const char *sym)
{
	const struct oid *to = planned(&r->j, sym ? sym : "HEAD");

	return to ? *to : *head;
}

/* The check of one work tree before its branch moves from old to new. */
/*
 * Right before the refs and the work trees move: a work tree the run
 * resets must still be as clean as it was at the start, or an edit made
 * while the run worked would be wiped by the reset. -1 (e naming the
 * first file changed) or 0.
 */
static int refuse_edited(const char *dir, struct err *e)
{
	struct buf out = BUF_INIT(SIZE_MAX / 2);
	int r = run_worktree_status(dir, &out, e);

	if (r == 0 && out.len > 3)
		r = err_set(e, ERR_USAGE, "%.*s in %s changed while the run "
			    "worked; nothing was changed (refs and work tree as "
			    "they were): commit or stash the change and run "
			    "again", (int)strcspn(out.ptr + 3, "\n"), out.ptr + 3,
			    dir);
	buf_release(&out);
	return r;
}

int run_refuse_untracked_attributes(const struct run *r, struct err *e)
{
	struct buf top = BUF_INIT(4096), listed = BUF_INIT(4096);
	struct err ignored = ERR_INIT;
	char *attrs;
	int rc = 0;

	if (!r->lfs || r->bare ||
	    gitcmd_runl(r->dst, 1, &top, &ignored, "rev-parse", "--show-toplevel",
			(char *)NULL) < 0)
		goto out;
	gitcmd_chomp(&top);
	attrs = path_join(top.ptr, ".gitattributes");
	if (file_exists(attrs) &&
	    gitcmd_runl(top.ptr, 1, &listed, e, "ls-files", "--", ".gitattributes",
			(char *)NULL) == 0 && listed.len == 0)
		rc = err_set(e, ERR_USAGE, "the untracked file %s would be "
			     "overwritten by the new history (lfs rules add "
			     "one); move it away first", attrs);
	free(attrs);
out:
	buf_release(&top);
	buf_release(&listed);
	return rc;
}

int run_check_worktree(const char *dir, const char *what,
		       const struct oid *old, const struct oid *new,
		       int clean_needed, struct err *e)
{
	char h1[OID_HEX + 1], h2[OID_HEX + 1];
	struct buf top = BUF_INIT(4096);
	int rc = 0;

	if (oid_is_null(old) || oid_eq(old, new))
		return 0;
	if (clean_needed && (rc = run_worktree_clean(dir, e)) == 0)
		return err_set(e, ERR_USAGE, "the work tree %s has uncommitted "
			       "changes and its branch %s would be rewritten; "
			       "commit or stash them first", dir, what);
	if (rc < 0)
		return -1;
	rc = gitcmd_runl(dir, 1, &top, e, "rev-parse", "--show-toplevel", (char *)NULL);
	gitcmd_chomp(&top);
	if (rc == 0)
		rc = refuse_untracked(top.ptr, what, oid_hex(old, h1), oid_hex(new, h2), e);
	buf_release(&top);
	return rc;
}

typedef int linked_fn(struct run *r, const char *wt, const struct oid *head,
		      const char *branch, struct err *e);

/* Calls fn for each work tree of dst's repository but dst itself that has
 * a branch checked out: its path, HEAD and branch (full ref name), as
 * the reads l (linked_start) found them. */
static int each_linked_of(const struct run *r, struct linked_read *l,
			  linked_fn *fn, struct err *e)
{
	struct buf out = BUF_INIT(SIZE_MAX / 2), self = BUF_INIT(4096);
	char *line, *nl, *wt = NULL;
	struct oid head = oid_null;
	int rc = linked_collect(l, &out, &self, e);

	for (line = out.ptr; rc == 0 && (nl = strchr(line, '\n')); line = nl + 1) {
		*nl = '\0';
		if (!strncmp(line, "worktree ", 9)) {
			wt = line + 9;
			head = oid_null;
		} else if (!strncmp(line, "HEAD ", 5)) {
			oid_from_hex(&head, line + 5, strlen(line + 5));
		} else if (!strncmp(line, "branch ", 7) && wt &&
			   (!self.len || strcmp(wt, self.ptr))) {
			rc = fn((struct run *)r, wt, &head, line + 7, e);
		}
	}
	buf_release(&out);
	buf_release(&self);
	return rc;
}

static int each_linked(const struct run *r, linked_fn *fn, struct err *e)
{
	struct linked_read l;

	linked_start(&l, r);
	return each_linked_of(r, &l, fn, e);
}

static int plan_one_linked(struct run *r, const char *wt, const struct oid *head,
			   const char *branch, struct err *e)
{
	const struct oid *to = planned(&r->j, branch);
	int rc;

	if (!to || !strcmp(branch, "HEAD"))
		return 0;
	rc = run_check_worktree(wt, branch, head, to, 1, e);
	if (rc == 0)
		journal_add_wt(&r->j, wt);
	return rc;
}

/* The linked work trees of an in-place run (other than dst itself) whose
 * branch the run rewrites: clean ones are reset with the journal, dirty
 * ones refuse the run. */
int run_plan_linked(struct run *r, struct err *e)
{
	return each_linked(r, plan_one_linked, e);
}

static int refuse_dirty(struct run *r, const char *wt, const struct oid *head,
			const char *branch, struct err *e)
{
	int clean = run_worktree_clean(wt, e);

	(void)r;
	(void)head;
	if (clean == 0)
		return err_set(e, ERR_USAGE, "the work tree %s has uncommitted "
			       "changes and its branch %s is one this run "
			       "converts; commit or stash them first", wt, branch);
	return clean < 0 ? -1 : 0;
}

int run_refuse_dirty_linked(const struct run *r, struct err *e)
{
	/* with REV-ARGS, which branches go is git's to say: the check
	 * after the conversion (run_plan_linked) judges */
	if (r->o.nrevs)
		return 0;
	return each_linked(r, refuse_dirty, e);
}
/*
 * After the check: the journal of the run (refs, work trees, state files),
 * refusals of what it would overwrite, then the journal is written and
 * finished. A failure before the journal leaves the repository as it was.
 */
int run_commit_run(struct run *r, const struct state_files *fin,
		   const struct state_files *fnew, struct err *e)
{
	static const char *const filters[] = {
		"commit-map", "ref-map", "marks", "import-marks", "report.txt",
		"report.json",
	};
	struct gitrefs have = GITREFS_INIT;
	struct linked_read linked;
	struct oid head, to;
	char *sym = NULL;
	size_t i, locks;
	int rc, kept, has_linked;

	/* the target's reads, started beside fast-import's end
	 * (run_plan_start): its HEAD is read once for the plan and the
	 * check (a branch moved since is caught as the refs move, "moved
	 * during the run"); the side's refs and HEAD are those the check
	 * read (r->side_read) */
	rc = plan_collect(r, &head, &sym, &have, &linked, &has_linked, e);

	r->j.state = xstrdup(r->state);
	r->j.dir = xstrdup(r->dst);
	r->j.gitdir = xstrdup(r->dst_gitdir);
	r->j.commondir = xstrdup(r->commondir);
	r->j.worktree = !r->bare && (r->o.in_place || r->first || r->dst_clean);
	r->j.lfs = r->lfs;
	if (r->o.to && !r->first && !r->dst_clean && !r->bare && run_head_exists(r->dst))
		fprintf(stderr, "migrate run: %s has local changes: its work tree "
			"was left as it was\n", r->dst);
	if (rc == 0)
		rc = plan_refs(r, fnew, &r->side_read.refs, &head, sym,
			       &r->side_read.head, &have, e);
	gitrefs_free(&have);
	if (rc == 0 && r->j.worktree) {
		to = head_after(r, &head, sym);
		rc = run_check_worktree(r->dst, sym ? sym : "HEAD", &head, &to, 0, e);
	}
	free(sym);
	/* in place: the linked work trees whose branch the run rewrites */
	if (rc == 0 && has_linked)
		rc = each_linked_of(r, &linked, plan_one_linked, e);
	else if (has_linked)
		linked_drop(&linked);
	/* the last look before the refs move (and before git-annex's
	 * filter, set up below, changes what git status sees) */
	if (rc == 0 && r->j.worktree)
		rc = refuse_edited(r->dst, e);
	for (i = 0; rc == 0 && i < r->j.nwts; i++)
		rc = refuse_edited(r->j.wts[i], e);
	for (i = 0; rc == 0 && i < sizeof(filters) / sizeof(filters[0]); i++)
		journal_add_file(&r->j, filters[i]);
	/* once the refs moved the packs the run wrote are kept: their lists
	 * go before the journal does, never after (the next run drops what a
	 * list names when it finds no journal) */
	journal_add_drop(&r->j, RUN_MADE_PACKS);
	journal_add_drop(&r->j, RUN_UNLFS_PACKS);
	if (rc == 0)
		rc = run_write_state(r, fnew, &r->side_read.refs, e);
	if (rc == 0)
		rc = run_write_reset(r, fin, fnew, e);
	/* before the work tree is checked out: unlocked files get their
	 * content through git-annex's filter */
	if (rc == 0)
		rc = run_annex_setup(r, e);
	if (rc == 0)
		rc = journal_write(&r->j, e);
	if (rc < 0)
		return -1;
	run_phase(&r->o, "moving the refs and the work tree");
	r->j.refs_moving = run_tidy_start;
	r->j.refs_moving_arg = r;
	/* --to: the repack that ends the run goes beside the check-out */
	if (r->j.worktree) {
		r->j.refs_moved = run_dissociate_start;
		r->j.refs_moved_arg = r;
	}
	rc = journal_finish(&r->j, 0, &locks, e);
	/* when git update-ref did not start (no ref to move, or one moved
	 * during the run) */
	run_tidy_start(r);
	if (rc == -2) {
		journal_drop(&r->j);
		return -1;
	}
	if (rc < 0) {
		kept = (int)strlen(e->msg);
		snprintf(e->msg + kept, sizeof(e->msg) - (size_t)kept, "; the run "
			 "is journaled in %s/journal: the next `migrate run` "
			 "finishes it, `migrate run --rollback` undoes it", r->state);
	}
	return rc;
}
