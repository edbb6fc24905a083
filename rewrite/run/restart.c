/*
 * restart.c - --restart: the old conversion kept, the history under refs/migrate/original/ converted again.
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

/* 1 when id is in the sorted ids[n]. */
static int has_oid(const struct oid *ids, size_t n, const struct oid *id)
{
	return n && bsearch(id, ids, n, sizeof(*ids), run_by_oid) != NULL;
}

struct map_sides {
	struct oid *old, *new;
	size_t n;
};

static int map_side_add(void *ctx, const struct oid *old, const struct oid *new)
{
	struct map_sides *m = ctx;

	m->old[m->n] = *old;
	m->new[m->n++] = *new;
	return 0;
}

/* The old and the new ids of the map m, each sorted. */
static void map_sides(const struct cmap *m, struct map_sides *out)
{
	size_t n = cmap_count(m);

	out->n = 0;
	out->old = xmalloc((n ? n : 1) * sizeof(*out->old));
	out->new = xmalloc((n ? n : 1) * sizeof(*out->new));
	cmap_each_from(m, 0, map_side_add, out);
	qsort(out->old, out->n, sizeof(*out->old), run_by_oid);
	qsort(out->new, out->n, sizeof(*out->new), run_by_oid);
}

/* Copies the state files of the last run into <state>/before-restart/
 * (before-restart.2/ and on for later restarts: an earlier copy is never
 * replaced), whose commit map the clones of that conversion need. */
/* The state files a run leaves, kept by --restart and --undo. */
static const char *const kept_names[] = {
	"commit-map", "ref-map", "tips", "rules", "last-run", "RESET.md",
	"report.txt", "report.json", "marks", "import-marks",
	"commit-map.from-previous",
};

int run_keep_state(struct run *r, const char *folder, struct err *e)
{
	struct buf text = BUF_INIT(SIZE_MAX / 2), dir = BUF_INIT(PATH_MAX);
	char *from, *to;
	size_t i;
	int rc = 0, k;

	for (k = 1;; k++) {
		buf_reset(&dir);
		buf_printf(&dir, k == 1 ? "%s/%s" : "%s/%s.%d", r->state,
			   folder, k);
		if (mkdir(dir.ptr, 0777) == 0)
			break;
		if (errno != EEXIST) {
			rc = err_errno(e, ERR_IO, "%s: cannot create", dir.ptr);
			break;
		}
	}
	for (i = 0; rc == 0 && i < sizeof(kept_names) / sizeof(kept_names[0]); i++) {
		from = path_join(r->state, kept_names[i]);
		to = path_join(dir.ptr, kept_names[i]);
		buf_reset(&text);
		rc = file_read(from, &text, e);
		if (rc > 0)
			rc = file_write(to, &text, e);
		rc = rc < 0 ? -1 : 0;
		free(from);
		free(to);
	}
	if (rc == 0)
		r->before_restart = buf_detach(&dir, NULL);
	buf_release(&dir);
	buf_release(&text);
	return rc;
}

/* The commits of the history under refs/migrate/original/ that the last
 * conversion wrote (a backup made by a later run of a branch made on the
 * rewritten history): the first such id in *bad, 1; 0 when none. */
static int backups_rewritten(const struct run *r, const struct gitrefs *orig,
			     const struct map_sides *ms, struct oid *bad,
			     struct err *e)
{
	struct buf in = BUF_INIT(SIZE_MAX / 2), out = BUF_INIT(SIZE_MAX / 2);
	struct gitargv a = GITARGV_INIT;
	char hex[OID_HEX + 1], *line, *nl;
	struct oid id;
	size_t i;
	int rc;

	for (i = 0; i < orig->n; i++)
		if (orig->v[i].has_commit)
			buf_printf(&in, "%s\n", oid_hex(&orig->v[i].commit, hex));
	gitargv_push(&a, "rev-list");
	gitargv_push(&a, "--stdin");
	rc = gitcmd_ok(r->dst, &a, &in, &out, e);
	for (line = out.ptr; rc == 0 && (nl = strchr(line, '\n')); line = nl + 1)
		if (oid_from_hex(&id, line, OID_HEX) == 0 &&
		    has_oid(ms->new, ms->n, &id) && !has_oid(ms->old, ms->n, &id)) {
			*bad = id;
			rc = 1;
		}
	gitargv_clear(&a);
	buf_release(&in);
	buf_release(&out);
	return rc;
}

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
/*
 * Every ref of now (but symbolic ones and refs/migrate/) has a backup in
 * orig and is still the conversion of it through the map m: else a ref
 * made since, or commits made on the rewritten history, would be lost by
 * what (--restart, --undo) doing is ("restarting", "undoing").
 */
int run_check_conversions(const struct gitrefs *now, const struct gitrefs *orig,
			  const struct cmap *m, const char *what,
			  const char *doing, struct err *e)
{
	const struct gitref *g, *o;
	const struct oid *to;
	char *name;
	size_t i;
	int rc = 0;

	for (i = 0; rc == 0 && i < now->n; i++) {
		g = &now->v[i];
		if (!strncmp(g->name, "refs/migrate/", 13) || g->symbolic)
			continue;	/* a symbolic ref follows its target */
		name = path_join("refs/migrate/original", g->name);
		o = gitrefs_find(orig, name);
		free(name);
		to = o && o->has_commit ? cmap_get(m, &o->commit) : NULL;
		if (!o)
			rc = err_set(e, ERR_USAGE, "%s: %s is not under "
				     "refs/migrate/original/ (made after the first "
				     "run?): delete it or move it aside first",
				     what, g->name);
		else if (g->has_commit != o->has_commit ||
			 (g->has_commit && !oid_eq(to ? to : &o->commit, &g->commit)))
			rc = err_set(e, ERR_USAGE, "%s: %s is not the "
				     "conversion of its backup any more (it moved "
				     "since the run: commits made on the rewritten "
				     "history, converted by a later run or not): "
				     "%s would drop them", what, g->name, doing);
	}
	return rc;
}

void run_drop_state(const struct run *r)
{
	size_t i;

	for (i = 0; i < sizeof(kept_names) / sizeof(kept_names[0]); i++) {
		char *p = path_join(r->state, kept_names[i]);

		unlink(p);
		free(p);
	}
}

int run_load_backups(struct run *r, const char *what, const char *doing,
		     struct cmap *m, struct gitrefs *now, struct gitrefs *orig,
		     struct err *e)
{
	char *sym = NULL, *map = path_join(r->state, "commit-map");
	struct oid head;
	int rc = 0;

	if (cmap_load(m, map, e) < 0 || gitrefs_list(now, r->dst, NULL, e) < 0 ||
	    gitrefs_list(orig, r->dst, "refs/migrate/original/", e) < 0)
		rc = -1;
	free(map);
	if (rc == 0 && !orig->n)
		return err_set(e, ERR_USAGE, "%s: refs/migrate/original/ is empty "
			       "(dropped after the run, as RESET.md says?): the "
			       "history before the run is not in this "
			       "repository any more", what);
	if (rc == 0) {
		run_head_of(r->dst, &head, &sym);
		if (!sym && !oid_is_null(&head))
			rc = err_set(e, ERR_USAGE, "%s: HEAD is detached; check "
				     "out a branch first", what);
		free(sym);
	}
	return rc == 0 ? run_check_conversions(now, orig, m, what, doing, e) : rc;
}

int run_restart_prepare(struct run *r, struct err *e)
{
	struct gitrefs now = GITREFS_INIT, orig = GITREFS_INIT;
	struct map_sides ms = { NULL, NULL, 0 };
	struct oid bad;
	char hex[OID_HEX + 1];
	struct cmap *m = cmap_new();
	int rc = 0, k = 0;

	if (r->first)
		rc = err_set(e, ERR_USAGE, "--restart: no earlier run in %s: "
			     "a plain run converts from the start", r->state);
	if (rc == 0)
		rc = run_load_backups(r, "--restart", "restarting", m, &now, &orig, e);
	if (rc == 0)
		map_sides(m, &ms);
	if (rc == 0)
		k = backups_rewritten(r, &orig, &ms, &bad, e);
	if (rc == 0 && k)
		rc = k < 0 ? -1 : err_set(e, ERR_USAGE, "--restart: "
			     "refs/migrate/original/ holds %s, a commit of the "
			     "conversion it would replace (a backup made by a "
			     "later run of a branch grown on the rewritten "
			     "history): delete that backup and its ref first",
			     oid_hex(&bad, hex));
	if (rc == 0 && !r->o.f.dry_run)
		rc = run_keep_state(r, "before-restart", e);
	if (rc == 0)
		r->first = 1;	/* a first run, from the originals */
	cmap_free(m);
	free(ms.old);
	free(ms.new);
	gitrefs_free(&now);
	gitrefs_free(&orig);
	return rc;
}
