/*
 * undo.c - `migrate run --in-place --undo`: a finished run taken back.
 * Every ref goes back to its backup under refs/migrate/original/ through
 * the journal a run moves its refs with (HEAD's branch and the clean work
 * trees are reset with them), the backups go, and the state is kept in
 * <state>/before-undo/, so that the next run starts from the start.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

/* Uncommitted changes would be lost by the reset. */
static int undo_check(struct run *r, struct err *e)
{
	int rc = r->bare ? 1 : run_worktree_clean(r->dst, e);

	if (rc == 0)
		return err_set(e, ERR_USAGE, "--undo: the work tree %s has "
			       "uncommitted changes; commit or stash them first",
			       r->dst);
	return rc < 0 ? -1 : 0;
}

/* The journal: each ref back to its backup, each backup gone. */
static int undo_plan(struct run *r, const struct gitrefs *now,
		     const struct gitrefs *orig, struct err *e)
{
	const struct gitref *g, *o;
	struct oid head, none = oid_null;
	char *name, *sym = NULL;
	size_t i;
	int rc = 0;

	r->j.state = xstrdup(r->state);
	r->j.dir = xstrdup(r->dst);
	r->j.gitdir = xstrdup(r->dst_gitdir);
	r->j.commondir = xstrdup(r->commondir);
	r->j.worktree = !r->bare;
	for (i = 0; i < now->n; i++) {
		g = &now->v[i];
		if (!strncmp(g->name, "refs/migrate/", 13) || g->symbolic)
			continue;
		name = path_join("refs/migrate/original", g->name);
		o = gitrefs_find(orig, name);
		free(name);
		if (o && !oid_eq(&o->id, &g->id))
			journal_add_ref(&r->j, g->name, &g->id, &o->id, 0);
	}
	for (i = 0; i < orig->n; i++)
		journal_add_ref(&r->j, orig->v[i].name, &orig->v[i].id, &none, 0);
	/* untracked files the old HEAD would overwrite refuse it */
	if (r->j.worktree) {
		run_head_of(r->dst, &head, &sym);
		for (i = 0; sym && i < r->j.nrefs; i++)
			if (!strcmp(r->j.refs[i].name, sym))
				rc = run_check_worktree(r->dst, sym, &head,
							&r->j.refs[i].new, 0, e);
		free(sym);
	}
	if (rc == 0)
		rc = run_plan_linked(r, e);
	return rc;
}

int run_undo(struct run *r, struct err *e)
{
	struct gitrefs now = GITREFS_INIT, orig = GITREFS_INIT;
	struct cmap *m = cmap_new();
	size_t locks, moved;
	int rc = 0;

	if (r->first)
		rc = err_set(e, ERR_USAGE, "--undo: no finished run in %s to "
			     "take back", r->state);
	if (rc == 0)
		rc = run_load_backups(r, "--undo", "undoing", m, &now, &orig, e);
	if (rc == 0)
		rc = undo_check(r, e);
	if (rc == 0)
		rc = undo_plan(r, &now, &orig, e);
	moved = r->j.nrefs - orig.n;
	if (rc == 0)
		rc = run_keep_state(r, "before-undo", e);
	if (rc == 0)
		rc = journal_write(&r->j, e);
	if (rc == 0) {
		run_phase(&r->o, "moving the refs and the work tree back");
		rc = journal_finish(&r->j, 0, &locks, e);
		if (rc == -2)
			journal_drop(&r->j);
		rc = rc < 0 ? -1 : 0;
	}
	/* the refs are back: the next run is a first one */
	if (rc == 0)
		run_drop_state(r);
	if (rc == 0 && !r->o.f.quiet)
		fprintf(stderr, "migrate run: undone: %zu ref(s) back to their "
			"value before the run, %zu backup(s) under "
			"refs/migrate/original/ removed; the run's state is in "
			"%s, and the next run starts from the start. If the "
			"converted history was pushed, push these refs back "
			"with `git push --force-with-lease`.\n", moved, orig.n,
			r->before_restart);
	cmap_free(m);
	gitrefs_free(&now);
	gitrefs_free(&orig);
	return rc;
}
