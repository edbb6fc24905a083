/*
 * cmd_push.c - `migrate push [REMOTE]`: publishes a finished in-place run.
 *
 * For every branch and tag of REMOTE that the run rewrote (in a clone,
 * refs/remotes/REMOTE/X stands for the remote's refs/heads/X), the LFS
 * objects the new history needs go up first (`git lfs push --all` on the
 * new commits: git-lfs's own pre-push hook asks the remote-tracking refs
 * what the server has, and the run rewrote them, so it uploads nothing),
 * (git-annex content: `git annex copy --to`, and the git-annex branch),
 * then the refs, in one atomic push with --force-with-lease on the old
 * values (a teammate's push in between is refused by name, nothing
 * overwritten), then `git ls-remote` must show the new ids.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../run/run.h"
#include "cli.h"

/* --help, after the synopsis (made from the tables) */
static const char push_about[] =
"\n"
"Publishes the history a `migrate run --in-place` wrote: for each branch\n"
"and tag of REMOTE (default: the remote of the current branch, else\n"
"origin) that the run rewrote, uploads the content of the new history\n"
"first (LFS objects with git lfs push --all, git-annex content with git\n"
"annex copy --to and its git-annex branch), then moves the remote's refs\n"
"to the new commits in one atomic push with --force-with-lease on their\n"
"old values, and checks with git ls-remote that the remote has them. A\n"
"ref someone pushed to since the run is refused, named, and nothing is\n"
"pushed. --dry-run says what would go.\n";

struct push {
	const char *repo;
	int dry_run;
	char *remote;
	char *gitdir;		/* the repository's, absolute */
	struct gitrefs local, orig;
	/* what goes: the remote's ref, the new value, the remote's value */
	struct push_ref {
		char *remote_ref, *local_ref;
		struct oid to, from;
	} *v;
	size_t n;
	size_t already, not_rewritten, never;
	char **names;		/* the remote's branches and tags, sorted */
	size_t nnames;
};

#define F(field) offsetof(struct push, field)

static const struct cli_option push_only_options[] = {
	{ "repo", 0, CLI_STRING, "DIR", F(repo), 0, NULL,
	  "the repository the run rewrote (default: the\n"
	  "current directory's)", 0 },
	{ "dry-run", 'n', CLI_SET, NULL, F(dry_run), 1, NULL,
	  "say what would be uploaded and pushed; change\n"
	  "nothing", 0 },
	{ NULL, 0, 0, NULL, 0, 0, NULL, NULL, 0 },
};

#undef F

/* REMOTE: the argument, or the current branch's remote, or origin. */
static int pick_remote(struct push *p, char **argv, int argc, struct err *e)
{
	struct buf b = BUF_INIT(4096), key = BUF_INIT(4096);
	struct err ignored = ERR_INIT;
	int rc;

	if (argc > 1)
		return err_set(e, ERR_USAGE, "push takes one remote, not '%s'",
			       argv[1]);
	if (argc == 1) {
		p->remote = xstrdup(argv[0]);
	} else if (gitcmd_runl(p->repo, 1, &b, &ignored, "symbolic-ref", "-q",
			       "--short", "HEAD", (char *)NULL) == 0) {
		gitcmd_chomp(&b);
		buf_printf(&key, "branch.%s.remote", b.ptr);
		buf_reset(&b);
		if (gitcmd_runl(p->repo, 1, &b, &ignored, "config", "--get",
				key.ptr, (char *)NULL) == 0) {
			gitcmd_chomp(&b);
			if (b.len && strcmp(b.ptr, "."))
				p->remote = xstrdup(b.ptr);
		}
	}
	if (!p->remote)
		p->remote = xstrdup("origin");
	buf_reset(&b);
	rc = gitcmd_runl(p->repo, 0, &b, &ignored, "remote", "get-url",
			 p->remote, (char *)NULL);
	buf_release(&b);
	buf_release(&key);
	if (rc != 0)
		return err_set(e, ERR_USAGE, "no remote '%s' in %s (git remote "
			       "-v lists them)", p->remote, p->repo);
	return 0;
}

/* The local ref that stands for the remote's ref name: the
 * remote-tracking one for a branch, when there is one. */
static char *local_for(const struct push *p, const char *name)
{
	struct buf b = BUF_INIT(4096);

	if (!strncmp(name, "refs/heads/", 11)) {
		buf_printf(&b, "refs/remotes/%s/%s", p->remote, name + 11);
		if (gitrefs_find(&p->local, b.ptr))
			return buf_detach(&b, NULL);
		buf_reset(&b);
	}
	buf_adds(&b, name);
	return buf_detach(&b, NULL);
}

static const struct gitref *backup_of(const struct push *p, const char *ref)
{
	char *name = path_join("refs/migrate/original", ref);
	const struct gitref *o = gitrefs_find(&p->orig, name);

	free(name);
	return o;
}

/* One line of `git ls-remote`: what the remote has under name. */
static void plan_one(struct push *p, const char *name, const struct oid *at,
		     int *refused, struct err *e)
{
	char *local = local_for(p, name);
	const struct gitref *g = gitrefs_find(&p->local, local);
	const struct gitref *o = backup_of(p, local);
	char h1[OID_HEX + 1], h2[OID_HEX + 1];

	if (!o) {
		p->not_rewritten++;
	} else if (!g) {
		fprintf(stderr, "migrate push: %s is gone here since the run: "
			"%s's %s is left as it is\n", local, p->remote, name);
	} else if (oid_eq(&g->id, at)) {
		p->already++;
	} else if (!oid_eq(&o->id, at)) {
		if (!*refused)
			err_set(e, ERR_USAGE, "%s's %s is at %s, not at %s, the "
				"value the run converted: someone pushed to it "
				"since; nothing was pushed (fetch, run `migrate "
				"run --in-place` again with the same rules to "
				"convert the new commits, then push)", p->remote,
				name, oid_hex(at, h1), oid_hex(&o->id, h2));
		*refused = 1;
	} else {
		struct push_ref *x;

		p->v = xrealloc(p->v, (p->n + 1) * sizeof(*p->v));
		x = &p->v[p->n++];
		x->remote_ref = xstrdup(name);
		x->local_ref = local;
		x->to = g->id;
		x->from = *at;
		return;
	}
	free(local);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int plan(struct push *p, struct buf *remote_refs, struct err *e)
{
	char *line, *nl, *tab;
	struct oid at;
	size_t i;
	int refused = 0;

	for (line = remote_refs->ptr; (nl = strchr(line, '\n')); line = nl + 1) {
		*nl = '\0';
		tab = strchr(line, '\t');
		if (!tab || oid_from_hex(&at, line, (size_t)(tab - line)) < 0)
			continue;
		tab++;
		if ((strncmp(tab, "refs/heads/", 11) && strncmp(tab, "refs/tags/", 10)) ||
		    strstr(tab, "^{}"))
			continue;
		p->names = xrealloc(p->names, (p->nnames + 1) * sizeof(*p->names));
		p->names[p->nnames++] = xstrdup(tab);
		plan_one(p, tab, &at, &refused, e);
	}
	/* branches and tags of ours the run rewrote that the remote lacks */
	qsort(p->names, p->nnames, sizeof(*p->names), by_name);
	for (i = 0; i < p->local.n; i++) {
		const char *name = p->local.v[i].name;

		if ((strncmp(name, "refs/heads/", 11) && strncmp(name, "refs/tags/", 10)) ||
		    !backup_of(p, name))
			continue;
		if (!bsearch(&name, p->names, p->nnames, sizeof(*p->names), by_name))
			p->never++;
	}
	return refused ? -1 : 0;
}

static int list_remote(struct push *p, struct buf *out, struct err *e)
{
	return gitcmd_runl(p->repo, 1, out, e, "ls-remote", "--refs", p->remote,
			   (char *)NULL);
}

/* The LFS objects of the new commits, to the remote's LFS store. */
static int upload_lfs(struct push *p, struct err *e)
{
	struct gitargv a = GITARGV_INIT;
	struct err ignored = ERR_INIT;
	char hex[OID_HEX + 1];
	char *objects = NULL;
	size_t i;
	int rc;

	if (run_git_line(&objects, p->repo, &ignored, "rev-parse",
			 "--path-format=absolute", "--git-path", "lfs/objects",
			 (char *)NULL) < 0 || !file_exists(objects)) {
		free(objects);
		return 0;	/* no LFS object here: nothing to upload */
	}
	free(objects);
	gitargv_push(&a, "lfs");
	gitargv_push(&a, "push");
	gitargv_push(&a, "--all");
	gitargv_push(&a, p->remote);
	for (i = 0; i < p->n; i++)
		gitargv_push(&a, oid_hex(&p->v[i].to, hex));
	rc = gitcmd_ok(p->repo, &a, NULL, NULL, e);
	gitargv_clear(&a);
	if (rc < 0)
		err_prefix(e, "uploading the LFS objects (nothing was pushed): ");
	return rc;
}

/*
 * The git-annex content, to a remote that is a git-annex repository
 * (`git annex init` there): every key, then the git-annex branch that
 * says where they are. A remote git-annex cannot store in is refused
 * before any ref moves.
 */
static int upload_annex(struct push *p, struct err *e)
{
	int rc = gitcmd_runl(p->repo, 1, NULL, e, "annex", "copy", "--all",
			     "--quiet", "--to", p->remote, (char *)NULL);

	if (rc < 0)
		return err_prefix(e, "uploading the git-annex content to %s "
				  "(nothing was pushed; is it a git-annex "
				  "repository? `git annex init` there, or copy "
				  "the content to a special remote first): ",
				  p->remote);
	rc = gitcmd_runl(p->repo, 1, NULL, e, "annex", "sync", "--only-annex",
			 "--no-content", "--quiet", p->remote, (char *)NULL);
	if (rc < 0)
		err_prefix(e, "pushing the git-annex branch (nothing else was "
			   "pushed): ");
	return rc;
}

static int push_refs(struct push *p, struct err *e)
{
	struct gitargv a = GITARGV_INIT;
	char hex[OID_HEX + 1];
	size_t i;
	int rc;

	gitargv_push(&a, "push");
	gitargv_push(&a, "--atomic");
	gitargv_push(&a, "--quiet");
	for (i = 0; i < p->n; i++)
		gitargv_pushf(&a, "--force-with-lease=%s:%s", p->v[i].remote_ref,
			      oid_hex(&p->v[i].from, hex));
	gitargv_push(&a, p->remote);
	for (i = 0; i < p->n; i++)
		gitargv_pushf(&a, "%s:%s", oid_hex(&p->v[i].to, hex),
			      p->v[i].remote_ref);
	rc = gitcmd_ok(p->repo, &a, NULL, NULL, e);
	gitargv_clear(&a);
	if (rc < 0)
		err_prefix(e, "pushing the refs (atomic: none moved): ");
	return rc;
}

/* The remote has every new id now. */
static int verify(struct push *p, struct err *e)
{
	struct buf out = BUF_INIT(SIZE_MAX / 2), want = BUF_INIT(4096);
	char hex[OID_HEX + 1];
	size_t i;
	int rc = list_remote(p, &out, e);

	for (i = 0; rc == 0 && i < p->n; i++) {
		buf_reset(&want);
		buf_printf(&want, "%s\t%s\n", oid_hex(&p->v[i].to, hex),
			   p->v[i].remote_ref);
		if (!strstr(out.ptr, want.ptr))
			rc = err_set(e, ERR_IO, "%s's %s is not %s after the push",
				     p->remote, p->v[i].remote_ref, hex);
	}
	buf_release(&out);
	buf_release(&want);
	return rc;
}

/* Whether the run stored git-annex objects here (annex rules). */
static int annex_content(const struct push *p)
{
	char *objects = path_join(p->gitdir, "annex/objects");
	int r = run_dir_has_entries(objects) > 0;

	free(objects);
	return r;
}

static int push_all(struct push *p, int quiet, struct err *e)
{
	struct buf remote_refs = BUF_INIT(SIZE_MAX / 2);
	char *state, *tips, *journal;
	char hex[OID_HEX + 1];
	size_t i;
	int rc = gitcmd_git_dir(p->repo, &p->gitdir, e);

	if (rc < 0)
		return -1;
	state = path_join(p->gitdir, "migrate");
	tips = path_join(state, "tips");
	journal = path_join(state, "journal");
	if (file_exists(journal))
		rc = err_set(e, ERR_USAGE, "an interrupted run is journaled in "
			     "%s: `migrate run` finishes it first", journal);
	else if (!file_exists(tips))
		rc = err_set(e, ERR_USAGE, "no finished run in %s: nothing to "
			     "publish (migrate run --in-place first)", state);
	free(state);
	free(tips);
	free(journal);
	if (rc == 0 && (gitrefs_list(&p->local, p->repo, NULL, e) < 0 ||
			gitrefs_list(&p->orig, p->repo, "refs/migrate/original/", e) < 0))
		rc = -1;
	if (rc == 0 && !p->orig.n)
		rc = err_set(e, ERR_USAGE, "refs/migrate/original/ is empty: "
			     "push needs the refs as they were before the run "
			     "(was it a --to run? push its new repository as "
			     "any other)");
	if (rc == 0)
		rc = list_remote(p, &remote_refs, e);
	if (rc == 0)
		rc = plan(p, &remote_refs, e);
	for (i = 0; rc == 0 && i < p->n; i++)
		printf("%s%s %s -> %s\n", p->dry_run ? "would push " : "",
		       p->v[i].remote_ref, p->v[i].local_ref,
		       oid_hex(&p->v[i].to, hex));
	if (rc == 0 && p->n && !p->dry_run)
		rc = upload_lfs(p, e);
	if (rc == 0 && p->n && !p->dry_run && annex_content(p))
		rc = upload_annex(p, e);
	if (rc == 0 && p->n && !p->dry_run)
		rc = push_refs(p, e);
	if (rc == 0 && p->n && !p->dry_run)
		rc = verify(p, e);
	if (rc == 0 && !quiet)
		fprintf(stderr, "migrate push: %s %zu ref(s) of %s to the new "
			"history%s; %zu there already, %zu not rewritten by the "
			"run, %zu of ours never on %s\n",
			p->dry_run ? "would move" : "moved", p->n, p->remote,
			p->n && !p->dry_run ? ", with the content they need" : "",
			p->already, p->not_rewritten, p->never, p->remote);
	buf_release(&remote_refs);
	return rc;
}

const struct cli_command_options cli_push_command = {
	CLI_PUSH, push_only_options, NULL, "migrate push", "[REMOTE]",
	push_about, NULL, 1, NULL,
};

int rw_cmd_push(int argc, char **argv, struct err *e)
{
	struct push p;
	struct cli_command_options c = cli_push_command;
	struct rw_options shared = { 0 };
	size_t i;
	int rc;

	memset(&p, 0, sizeof(p));
	c.own_opts = &p;
	p.repo = ".";
	rc = cli_parse_options(&c, argc, argv, &shared, e);
	if (rc > 0)
		return 0;	/* --help, --list-options */
	if (rc == 0)
		rc = pick_remote(&p, argv + optind, argc - optind, e);
	if (rc == 0)
		rc = push_all(&p, shared.quiet, e);
	for (i = 0; i < p.n; i++) {
		free(p.v[i].remote_ref);
		free(p.v[i].local_ref);
	}
	free(p.v);
	for (i = 0; i < p.nnames; i++)
		free(p.names[i]);
	free(p.names);
	free(p.remote);
	free(p.gitdir);
	gitrefs_free(&p.local);
	gitrefs_free(&p.orig);
	return rc;
}
