/*
 * cmd_remap.c - `migrate remap`: in a collaborator's clone, after the new
 * history was fetched, moves each local branch built on old commits onto
 * their new counterparts (git rebase --onto), through the commit map.
 */
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../engine/engine.h"
#include "cli.h"

/* --help, after the synopsis (made from the tables) */
static const char remap_about[] =
"\n"
"Run inside a clone after fetching the rewritten history. Each local\n"
"branch (default: all) whose newest migrated ancestor has a new id is\n"
"rebased onto it (in a temporary work tree unless it is checked out: the\n"
"clone stays on its branch); a branch that is an old commit moves to the\n"
"new one.\n"
"Old ids in the messages of the rebased commits become new ids. A\n"
"branch that cannot be moved cleanly is left as it was and named.\n";

struct remap {
	const char *map_path;
	int msg_ids;
	char **branches;
	int nbranches;
	struct cmap *map;
	struct msgids *ids;		/* the map's old ids, for messages */
	struct oid *news;		/* every new id, sorted */
	size_t nnews;
	char *head_ref;			/* the branch checked out, or NULL */
	int refused;
};

/* ---- the map ---- */

static int by_oid(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct oid));
}

static int collect(void *ctx, const struct oid *old, const struct oid *new)
{
	struct remap *r = ctx;

	(void)old;
	r->news[r->nnews++] = *new;
	return 0;
}

static int load_map(struct remap *r, struct err *e)
{
	size_t n;

	r->map = cmap_new();
	if (access(r->map_path, R_OK) < 0)
		return err_errno(e, ERR_USAGE, "%s", r->map_path);
	if (cmap_load(r->map, r->map_path, e) < 0)
		return -1;
	n = cmap_count(r->map);
	r->news = xmalloc((n + 1) * sizeof(*r->news));
	cmap_each_from(r->map, 0, collect, r);
	r->ids = msgids_new(r->map);
	qsort(r->news, r->nnews, sizeof(*r->news), by_oid);
	return 0;
}

/* The new id of a changed old commit, or NULL (unknown or unchanged). */
static const struct oid *changed(const struct remap *r, const struct oid *old)
{
	const struct oid *n = cmap_get(r->map, old);
	return n && !oid_eq(n, old) ? n : NULL;
}

static int is_new(const struct remap *r, const struct oid *id)
{
	return bsearch(id, r->news, r->nnews, sizeof(*r->news), by_oid) != NULL;
}

/* ---- git helpers ---- */

/* ---- one branch ---- */

static void refuse(struct remap *r, const char *branch, const char *why)
{
	fprintf(stderr, "migrate remap: %s: not moved: %s\n", branch, why);
	r->refused++;
}

/*
 * The newest ancestor of tip (topological order) that the map changed:
 * 1 with *old and *new set; 0 when the branch meets new or unchanged
 * history first, or none of the map's. -1 on error.
 */
static int find_base(const struct remap *r, const struct oid *tip,
		     struct oid *old, struct oid *new, struct err *e)
{
	struct buf out = BUF_INIT(SIZE_MAX / 2);
	char hex[OID_HEX + 1], *line, *nl;
	const struct oid *m;
	struct oid id;
	int rc = gitcmd_runl(NULL, 0, &out, e, "rev-list", "--topo-order", oid_hex(tip, hex),
			 (char *)NULL);

	if (rc > 0)
		rc = err_set(e, ERR_IO, "git rev-list %s failed", hex);
	for (line = out.ptr; rc == 0 && (nl = strchr(line, '\n')); line = nl + 1) {
		if (oid_from_hex(&id, line, (size_t)(nl - line)) < 0)
			continue;
		if (is_new(r, &id))
			break;
		m = cmap_get(r->map, &id);
		if (m && oid_eq(m, &id))
			break;
		if (m) {
			*old = id;
			*new = *m;
			rc = 1;
		}
	}
	buf_release(&out);
	return rc;
}

/*
 * The base the migration pruned (the map says 40 zeros: it became empty):
 * its stand-in, where the migration moved what was on it (as git
 * filter-repo does): its first parent's new commit, past the parents
 * pruned too. 1 with *new, 0 when there is none (a merge, or a history
 * pruned down to its root), -1 with e set.
 */
static int pruned_standin(const struct remap *r, const struct oid *old,
			  struct oid *new, struct err *e)
{
	struct buf out = BUF_INIT(4096);
	char hex[OID_HEX + 1];
	const struct oid *m;
	struct oid cur = *old, p;
	int rc = 0;

	for (;;) {
		buf_reset(&out);
		rc = gitcmd_runl(NULL, 0, &out, e, "rev-list", "--parents", "-n", "1",
				 oid_hex(&cur, hex), (char *)NULL);
		if (rc != 0) {
			rc = rc < 0 ? -1 : err_set(e, ERR_IO, "git rev-list %s failed", hex);
			break;
		}
		gitcmd_chomp(&out);
		/* "<id> <parent>": exactly one parent */
		if (out.len != 2 * OID_HEX + 1 ||
		    oid_from_hex(&p, out.ptr + OID_HEX + 1, OID_HEX) < 0)
			break;
		m = cmap_get(r->map, &p);
		if (m && oid_is_null(m)) {
			cur = p;
			continue;
		}
		*new = m ? *m : p;
		rc = 1;
		break;
	}
	buf_release(&out);
	return rc;
}

/* Why the commits base..tip cannot simply be replayed, or NULL. */
static const char *replay_problem(const struct remap *r, const struct oid *base,
				  const struct oid *tip, struct err *e)
{
	struct buf out = BUF_INIT(SIZE_MAX / 2), merges = BUF_INIT(SIZE_MAX / 2);
	char range[2 * OID_HEX + 3], h1[OID_HEX + 1], h2[OID_HEX + 1];
	const char *why = NULL;
	char *line, *nl;
	struct oid id;

	snprintf(range, sizeof(range), "%s..%s", oid_hex(base, h1), oid_hex(tip, h2));
	if (gitcmd_runl(NULL, 0, &out, e, "rev-list", range, (char *)NULL) != 0 ||
	    gitcmd_runl(NULL, 0, &merges, e, "rev-list", "--merges", range, (char *)NULL) != 0)
		why = "git rev-list failed";
	for (line = out.ptr; !why && (nl = strchr(line, '\n')); line = nl + 1)
		if (oid_from_hex(&id, line, (size_t)(nl - line)) == 0 &&
		    changed(r, &id))
			why = "it merges other old history; rebase it by hand";
	if (!why && merges.len)
		why = "its local commits contain merges; rebase it by hand";
	buf_release(&out);
	buf_release(&merges);
	return why;
}

/* A branch that is exactly an old commit moves to the new one. */
static int move_ref(struct remap *r, const char *branch, const struct oid *new,
		    const struct oid *old, struct err *e)
{
	char h1[OID_HEX + 1], h2[OID_HEX + 1], ref[4096];
	int rc;

	snprintf(ref, sizeof(ref), "refs/heads/%s", branch);
	if (r->head_ref && !strcmp(r->head_ref, ref))
		rc = gitcmd_runl(NULL, 0, NULL, e, "reset", "-q", "--hard", oid_hex(new, h1), (char *)NULL);
	else
		rc = gitcmd_runl(NULL, 0, NULL, e, "update-ref", "-m", "migrate remap", ref,
			    oid_hex(new, h1), oid_hex(old, h2), (char *)NULL);
	if (rc != 0)
		refuse(r, branch, "git could not move it");
	else
		fprintf(stderr, "migrate remap: %s: moved to %.12s\n", branch, h1);
	return rc < 0 ? -1 : 0;
}

/* ---- old ids in messages ---- */

/* Appends text to out with the old ids in it rewritten (msgids_apply's
 * rule, the filter's). Returns how many it replaced. */
static size_t rewrite_ids(const struct remap *r, const char *text, size_t len,
			  struct buf *out)
{
	size_t at = out->len;

	if (buf_add(out, text, len) < 0)
		return 0;
	return msgids_apply(r->ids, out->ptr + at, len);
}

/* The commit body with its first parent replaced and old ids in the
 * message rewritten; 1 if anything changed. */
static int rewrite_commit(const struct remap *r, const struct buf *body,
			  const struct oid *parent_old,
			  const struct oid *parent_new, struct buf *out)
{
	char h1[OID_HEX + 1], h2[OID_HEX + 1], line[OID_HEX + 9];
	const char *msg = strstr(body->ptr, "\n\n");
	size_t head = msg ? (size_t)(msg - body->ptr) + 2 : body->len;
	const char *pl;
	int changed_parent = 0;

	buf_add(out, body->ptr, head);
	snprintf(line, sizeof(line), "\nparent %s", oid_hex(parent_old, h1));
	if (!oid_eq(parent_old, parent_new) && (pl = strstr(out->ptr, line)) &&
	    (size_t)(pl - out->ptr) < head) {
		memcpy(out->ptr + (pl - out->ptr) + 8, oid_hex(parent_new, h2), OID_HEX);
		changed_parent = 1;
	}
	if (!r->msg_ids) {
		buf_add(out, body->ptr + head, body->len - head);
		return changed_parent;
	}
	return rewrite_ids(r, body->ptr + head, body->len - head, out) > 0 ||
	       changed_parent;
}

/* One commit, rewritten if need be: *id becomes its new id. */
static int rewrite_one(const struct remap *r, struct oid *id,
		       struct oid *parent_old, struct oid *parent_new,
		       struct err *e)
{
	struct gitargv a = GITARGV_INIT;
	struct buf body = BUF_INIT(SIZE_MAX / 2), out = BUF_INIT(SIZE_MAX / 2),
		   idhex = BUF_INIT(4096);
	char hex[OID_HEX + 1];
	struct oid orig = *id;
	int rc = gitcmd_runl(NULL, 0, &body, e, "cat-file", "commit", oid_hex(id, hex), (char *)NULL);

	if (rc == 0 && rewrite_commit(r, &body, parent_old, parent_new, &out)) {
		gitargv_push(&a, "hash-object");
		gitargv_push(&a, "-t");
		gitargv_push(&a, "commit");
		gitargv_push(&a, "-w");
		gitargv_push(&a, "--stdin");
		rc = gitcmd_ok(NULL, &a, &out, &idhex, e);
		gitcmd_chomp(&idhex);
		if (rc == 0 && oid_from_hex(id, idhex.ptr, idhex.len) < 0)
			rc = err_set(e, ERR_IO, "git hash-object: unexpected answer");
	} else if (rc > 0) {
		rc = err_set(e, ERR_IO, "git cat-file commit %s failed", hex);
	}
	*parent_old = orig;
	*parent_new = *id;
	gitargv_clear(&a);
	buf_release(&body);
	buf_release(&out);
	buf_release(&idhex);
	return rc;
}

/* After the rebase: old ids in the messages of base..branch become new
 * ids (the commits are written again, trees unchanged). */
static int rewrite_messages(struct remap *r, const char *branch,
			    const struct oid *base, struct err *e)
{
	struct buf list = BUF_INIT(SIZE_MAX / 2);
	char range[4200], h1[OID_HEX + 1], h2[OID_HEX + 1];
	struct oid id, pold = *base, pnew = *base, tip = *base;
	char *line, *nl;
	int rc;

	snprintf(range, sizeof(range), "%s..refs/heads/%s", oid_hex(base, h1), branch);
	rc = gitcmd_runl(NULL, 0, &list, e, "rev-list", "--reverse", range, (char *)NULL);
	for (line = list.ptr; rc == 0 && (nl = strchr(line, '\n')); line = nl + 1) {
		if (oid_from_hex(&id, line, (size_t)(nl - line)) < 0)
			continue;
		tip = id;
		rc = rewrite_one(r, &id, &pold, &pnew, e);
	}
	buf_release(&list);
	if (rc != 0 || oid_eq(&tip, &pnew))
		return rc == 0 ? 0 : -1;
	snprintf(range, sizeof(range), "refs/heads/%s", branch);
	rc = gitcmd_runl(NULL, 0, NULL, e, "update-ref", "-m", "migrate remap: message ids", range,
		    oid_hex(&pnew, h1), oid_hex(&tip, h2), (char *)NULL);
	return rc == 0 ? 0 : -1;
}

/* ---- one branch, all branches ---- */

/* 1 if branch is the one checked out. */
static int is_head(const struct remap *r, const char *branch)
{
	return r->head_ref && !strncmp(r->head_ref, "refs/heads/", 11) &&
	       !strcmp(r->head_ref + 11, branch);
}

/*
 * A branch that is not checked out is rebased in a temporary work tree
 * (<git-dir>/migrate-remap-worktree, detached at its tip), then moved with
 * update-ref: the clone's own work tree and HEAD never leave the branch
 * they are on. 0 rebased, 1 the rebase stopped (aborted), -1 error.
 */
static int rebase_aside(const char *branch, const struct oid *tip,
			const char *onto, const char *upstream, struct err *e)
{
	struct buf gd = BUF_INIT(4096), head = BUF_INIT(4096);
	char h[OID_HEX + 1], ref[4096];
	struct err ignored = ERR_INIT;
	char *wt, *gitdir = NULL;
	int rc = gitcmd_git_dir(NULL, &gitdir, e);

	if (rc < 0)
		return -1;
	buf_printf(&gd, "%s/migrate-remap-worktree", gitdir);
	free(gitdir);
	wt = gd.ptr;
	/* one a killed remap left (git would say "is not a working tree"
	 * on the terminal when there is none) */
	if (file_exists(wt))
		gitcmd_runl(NULL, 0, NULL, &ignored, "worktree", "remove",
			    "--force", wt, (char *)NULL);
	gitcmd_runl(NULL, 0, NULL, &ignored, "worktree", "prune", (char *)NULL);
	rc = gitcmd_runl(NULL, 1, NULL, e, "worktree", "add", "-q", "--detach", wt,
			 oid_hex(tip, h), (char *)NULL);
	if (rc == 0 && gitcmd_runl(wt, 0, NULL, e, "rebase", "-q", "--onto", onto,
				   upstream, (char *)NULL) != 0) {
		gitcmd_runl(wt, 0, NULL, &ignored, "rebase", "--abort", (char *)NULL);
		rc = 1;
	}
	if (rc == 0)
		rc = gitcmd_runl(wt, 1, &head, e, "rev-parse", "HEAD", (char *)NULL);
	gitcmd_chomp(&head);
	snprintf(ref, sizeof(ref), "refs/heads/%s", branch);
	if (rc == 0 && gitcmd_runl(NULL, 0, NULL, e, "update-ref", "-m", "migrate remap",
				   ref, head.ptr, h, (char *)NULL) != 0)
		rc = 1;
	gitcmd_runl(NULL, 0, NULL, &ignored, "worktree", "remove", "--force", wt,
		    (char *)NULL);
	buf_release(&gd);
	buf_release(&head);
	return rc;
}

static int rebase_branch(struct remap *r, const char *branch,
			 const struct oid *tip, const struct oid *old,
			 const struct oid *new, struct err *e)
{
	char h1[OID_HEX + 1], h2[OID_HEX + 1], obj[OID_HEX + 10], why[256];
	const char *problem = replay_problem(r, old, tip, e);
	int rc;

	if (problem) {
		refuse(r, branch, problem);
		return 0;
	}
	snprintf(obj, sizeof(obj), "%s^{commit}", oid_hex(new, h1));
	if (gitcmd_runl(NULL, 0, NULL, e, "cat-file", "-e", obj, (char *)NULL) != 0) {
		snprintf(why, sizeof(why), "its new base %.12s is not in this "
			 "clone: fetch the new history first", h1);
		refuse(r, branch, why);
		return 0;
	}
	rc = is_head(r, branch)
		? gitcmd_runl(NULL, 0, NULL, e, "rebase", "-q", "--onto", h1,
			      oid_hex(old, h2), branch, (char *)NULL)
		: rebase_aside(branch, tip, h1, oid_hex(old, h2), e);
	if (rc < 0)
		return -1;
	if (rc != 0) {
		if (is_head(r, branch))
			gitcmd_runl(NULL, 0, NULL, e, "rebase", "--abort", (char *)NULL);
		snprintf(why, sizeof(why), "the rebase onto %.12s stopped (a "
			 "conflict?) and was aborted; the branch is as it was", h1);
		refuse(r, branch, why);
		return 0;
	}
	if (rewrite_messages(r, branch, new, e) < 0)
		return -1;
	fprintf(stderr, "migrate remap: %s: rebased onto %.12s\n", branch, h1);
	return 0;
}

static int remap_branch(struct remap *r, const struct gitref *g,
			struct err *e)
{
	const char *branch = g->name + strlen("refs/heads/");
	struct oid old, new;
	int rc = find_base(r, &g->id, &old, &new, e);

	if (rc <= 0)
		return rc;
	if (oid_is_null(&new) && (rc = pruned_standin(r, &old, &new, e)) <= 0) {
		if (rc == 0)
			refuse(r, branch, "the migration dropped the commit it is "
			       "based on, and all of its first-parent history (or "
			       "it is a merge); rebase it by hand");
		return rc;
	}
	if (oid_eq(&old, &g->id))
		return move_ref(r, branch, &new, &old, e);
	return rebase_branch(r, branch, &g->id, &old, &new, e);
}

/* The branches to look at: those named, or every local one. */
static int branches(struct gitrefs *out, const struct remap *r,
		    struct err *e)
{
	struct gitrefs all = GITREFS_INIT;
	const struct gitref *g;
	char ref[4096];
	int i;

	if (gitrefs_list(&all, NULL, "refs/heads/", e) < 0)
		return -1;
	if (!r->nbranches) {
		*out = all;
		return 0;
	}
	out->v = xcalloc((size_t)r->nbranches, sizeof(*out->v));
	out->n = 0;
	for (i = 0; i < r->nbranches; i++) {
		snprintf(ref, sizeof(ref), "refs/heads/%s", r->branches[i]);
		if (!(g = gitrefs_find(&all, ref))) {
			gitrefs_free(&all);
			return err_set(e, ERR_USAGE, "no branch '%s'",
				       r->branches[i]);
		}
		out->v[out->n] = *g;
		out->v[out->n++].name = xstrdup(g->name);
	}
	gitrefs_free(&all);
	return 0;
}

static int clean_tree(struct err *e)
{
	struct buf out = BUF_INIT(SIZE_MAX / 2);
	int rc = gitcmd_runl(NULL, 0, &out, e, "--no-optional-locks", "status",
			     "--porcelain", "--untracked-files=no", (char *)NULL);

	if (rc == 0 && out.len)
		rc = err_set(e, ERR_USAGE, "the work tree has uncommitted "
			     "changes; commit or stash them first");
	else if (rc > 0)
		rc = err_set(e, ERR_IO, "git status failed");
	buf_release(&out);
	return rc;
}

static int remap_all(struct remap *r, struct err *e)
{
	struct gitrefs list = GITREFS_INIT;
	struct buf head = BUF_INIT(4096);
	struct err ignored = ERR_INIT;
	size_t i;
	int rc = clean_tree(e);

	if (rc == 0 && gitcmd_runl(NULL, 0, &head, &ignored, "symbolic-ref", "-q", "HEAD",
			       (char *)NULL) == 0) {
		gitcmd_chomp(&head);
		r->head_ref = xstrdup(head.ptr);
	}
	if (rc == 0)
		rc = load_map(r, e);
	if (rc == 0)
		rc = branches(&list, r, e);
	for (i = 0; rc == 0 && i < list.n; i++)
		rc = remap_branch(r, &list.v[i], e);
	/* other branches were rebased aside: HEAD never left its branch */
	if (rc == 0 && r->refused)
		rc = err_set(e, ERR_IO, "%d branch(es) not moved (see above)",
			     r->refused);
	gitrefs_free(&list);
	buf_release(&head);
	return rc;
}

#define F(field) offsetof(struct remap, field)

/*
 * remap's options, in the table shape of the others (options.c parses
 * them, --help and --list-options list them; -h comes from the shared
 * table). Its own, not the filter's: remap reads --commit-map, and its
 * --no-rewrite-message-ids is about the rebased messages.
 */
static const struct cli_option remap_only_options[] = {
	{ "commit-map", 0, CLI_STRING, "MAP", F(map_path), 0, NULL,
	  "the commit map of the migration (default\n"
	  "<git-dir>/migrate/commit-map)", 0 },
	{ "no-rewrite-message-ids", 0, CLI_SET, NULL, F(msg_ids), 0, NULL,
	  "leave old commit ids in the messages of the\n"
	  "rebased commits as they are", 0 },
	{ NULL, 0, 0, NULL, 0, 0, NULL, NULL, 0 },
};

#undef F

/*
 * remap moves the branches of a clone and rebases in its work tree: no
 * repository, or one with no work tree here (a bare one, inside .git), is
 * said in our words before git says anything.
 */
static int in_work_tree(struct err *e)
{
	struct buf out = BUF_INIT(4096);
	char *gitdir = NULL;
	int rc = gitcmd_git_dir(NULL, &gitdir, e);

	if (rc == 0 && gitcmd_runl(NULL, 1, &out, e, "rev-parse",
				   "--is-inside-work-tree", (char *)NULL) < 0)
		rc = -1;
	gitcmd_chomp(&out);
	if (rc == 0 && strcmp(out.ptr, "true"))
		rc = err_set(e, ERR_USAGE, "%s has no work tree here: run "
			     "migrate remap in the clone whose branches are to "
			     "move, at the top of its work tree or below", gitdir);
	free(gitdir);
	buf_release(&out);
	return rc;
}

/* --commit-map, or <git-dir>/migrate/commit-map if there is one. */
static int default_map(struct remap *r, char **owned, struct err *e)
{
	struct err ignored = ERR_INIT;
	char *gitdir = NULL, *map = NULL;

	if (gitcmd_git_dir(NULL, &gitdir, &ignored) == 0)
		map = path_join(gitdir, "migrate/commit-map");
	if (map && access(map, R_OK) == 0)
		r->map_path = *owned = map;
	else
		free(map);
	free(gitdir);
	if (!r->map_path)
		return err_set(e, ERR_USAGE, "no .git/migrate/commit-map "
			       "here: give --commit-map FILE (the map of the "
			       "migration, from whoever ran it)");
	return 0;
}

const struct cli_command_options cli_remap_command = {
	CLI_REMAP, remap_only_options, NULL, "migrate remap", "[BRANCH...]",
	remap_about, NULL, 0, NULL,
};

int rw_cmd_remap(int argc, char **argv, struct err *e)
{
	struct remap r;
	struct cli_command_options c = cli_remap_command;
	struct rw_options shared = { 0 };	/* remap takes none of its fields */
	char *owned = NULL;
	int rc;

	memset(&r, 0, sizeof(r));
	c.own_opts = &r;
	r.msg_ids = 1;
	rc = cli_parse_options(&c, argc, argv, &shared, e);
	if (rc > 0)
		return 0;	/* --help, --list-options */
	r.branches = argv + optind;
	r.nbranches = argc - optind;
	if (rc == 0)
		rc = in_work_tree(e);
	if (rc == 0)
		rc = gitcmd_sha1_only(NULL, e);
	if (rc == 0 && !r.map_path)
		rc = default_map(&r, &owned, e);
	if (rc == 0)
		rc = remap_all(&r, e);
	msgids_free(r.ids);
	cmap_free(r.map);
	free(r.news);
	free(r.head_ref);
	free(owned);
	return rc;
}
