/*
 * target.c - the repositories of a run and its state folder: --to and --in-place set up, the lock, recovery of an interrupted run and what a killed one left, the release at the end.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run.h"

/* git init of the target (again: a killed run may have left only its
 * mark, or a repository git init completes without touching what it
 * holds). */
static int init_to(const struct run *r, struct err *e)
{
	struct gitargv a = GITARGV_INIT;
	int rc;

	gitargv_push(&a, "init");
	gitargv_push(&a, "-q");
	gitargv_push(&a, r->o.to);
	rc = gitcmd_ok(NULL, &a, NULL, NULL, e);
	gitargv_clear(&a);
	return rc;
}

/* The mark of a target this run makes, <to>/.git/migrate/source, written
 * before git init: a run killed at any moment after leaves a target the
 * next run from the same source knows as its own and finishes (killed
 * before, it leaves what unmarked_start knows). */
static int mark_to(const struct run *r, struct err *e)
{
	char *git = path_join(r->o.to, ".git");
	char *state = path_join(git, "migrate");
	struct buf src = BUF_INIT(BUF_MAX_DEFAULT);
	int rc = 0;

	if ((r->made_to < 0 && mkdir(r->o.to, 0777) < 0) ||
	    (mkdir(git, 0777) < 0 && errno != EEXIST) ||
	    (mkdir(state, 0777) < 0 && errno != EEXIST))
		rc = err_errno(e, ERR_IO, "%s: cannot create", r->o.to);
	buf_printf(&src, "%s\n", r->src_gitdir);
	if (rc == 0)
		rc = run_write_small(state, "source", src.ptr, e);
	buf_release(&src);
	free(state);
	free(git);
	return rc;
}

/* 1 if git init made <to>/.git whole: HEAD, objects/ and refs/ there (a
 * git init killed half-way leaves HEAD without objects/). */
static int git_dir_made(const char *to)
{
	static const char *const need[] = { ".git/HEAD", ".git/objects", ".git/refs" };
	size_t i;
	int ok = 1;

	for (i = 0; ok && i < sizeof(need) / sizeof(need[0]); i++) {
		char *p = path_join(to, need[i]);

		ok = file_exists(p);
		free(p);
	}
	return ok;
}

/* The lock files a first --to run killed in git's hands left in the
 * git dir of the target it made (removed: how many). */
static size_t to_locks_clean(const char *gitdir)
{
	static const char *const names[] = {
		"HEAD.lock", "ORIG_HEAD.lock", "index.lock", "config.lock",
		"packed-refs.lock",
	};
	size_t i, n = 0;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *p = path_join(gitdir, names[i]);

		n += unlink(p) == 0;
		free(p);
	}
	return n;
}

/*
 * A marked target whose git init was killed half-way: git init again,
 * under the run's lock (another run may be making it right now), once
 * the lock files the killed git left are gone (its config.lock: the next
 * git init dies on it, "could not lock config file"). 0, or -1 with e set.
 */
static int init_again(const struct run *r, struct err *e)
{
	char *git = path_join(r->o.to, ".git");
	char *state = path_join(git, "migrate");
	int fd = -1, rc = state_lock(state, &fd, e);

	if (rc == 0 && !git_dir_made(r->o.to)) {
		to_locks_clean(git);
		rc = init_to(r, e);
	}
	if (fd >= 0)
		close(fd);	/* taken again for the whole run, below */
	free(state);
	free(git);
	return rc;
}

/* 1 if every entry of dir is the directory name, or with name NULL a
 * temp file of the mark (source.tmp-*); an absent dir holds nothing. */
static int holds_only(const char *dir, const char *name)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int ok = 1;

	if (!d)
		return errno == ENOENT;
	while (ok && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (name)
			ok = !strcmp(de->d_name, name) && de->d_type == DT_DIR;
		else
			ok = !strncmp(de->d_name, "source.tmp-", 11);
	}
	closedir(d);
	return ok;
}

/* A target that a first run made and was killed in before its mark was
 * in place: what mark_to creates, <to>/.git/migrate, holding at most the
 * mark's temp file. */
static int unmarked_start(const char *to)
{
	char *git = path_join(to, ".git"), *state = path_join(git, "migrate");
	int ours = holds_only(to, ".git") && holds_only(git, "migrate") &&
		   holds_only(state, NULL);

	free(git);
	free(state);
	return ours;
}

/* --to NEWDIR: a fresh repository, or the target of an earlier run from
 * the same source. */
static int setup_to(struct run *r, struct err *e)
{
	struct buf src = BUF_INIT(1 << 20);
	char *srcfile;
	int has = run_dir_has_entries(r->o.to), rc;

	r->dst = r->o.to;
	/* our own start, killed before the mark: taken as an empty directory
	 * (that it existed before is the safe guess) */
	if (has > 0 && !r->o.verify_only && !r->o.f.dry_run &&
	    unmarked_start(r->o.to)) {
		char *git = path_join(r->o.to, ".git");

		has = remove_tree(git) < 0 ? 1 : 0;
		free(git);
	}
	if (has > 0 && !r->o.verify_only) {
		/* an earlier run's target says where it came from */
		srcfile = path_join(r->o.to, ".git/migrate/source");
		rc = file_read(srcfile, &src, e);
		free(srcfile);
		gitcmd_chomp(&src);
		if (rc == 0)
			rc = err_set(e, ERR_USAGE, "%s exists, is not empty and "
				     "holds no earlier migrate run", r->o.to);
		else if (rc > 0 && strcmp(src.ptr, r->src_gitdir) != 0)
			rc = err_set(e, ERR_USAGE, "%s was migrated from %s, "
				     "not from %s", r->o.to, src.ptr, r->src_gitdir);
		buf_release(&src);
		/* marked, killed before git init was done (git's own test of
		 * a repository: HEAD, objects/ and refs/ are there) */
		if (rc > 0 && !r->o.f.dry_run && !git_dir_made(r->o.to))
			rc = init_again(r, e);
		if (rc < 0)
			return -1;
	} else if (r->o.f.dry_run) {
		/* nothing is created: the run is a first one into nothing */
		r->dst_absent = 1;
		r->dst_gitdir = path_join(r->o.to, ".git");
		r->store = path_join(r->dst_gitdir, "lfs/objects");
		r->commondir = xstrdup(r->dst_gitdir);
		return 0;
	} else if (!r->o.verify_only) {
		struct stat st;

		/* a symlink to an empty directory is not ours to take back */
		if (lstat(r->o.to, &st) < 0)
			r->made_to = -1;
		else if (S_ISDIR(st.st_mode)) {
			r->made_to = 1;
			r->to_mode = st.st_mode & 07777;
		}
		if (mark_to(r, e) < 0 || init_to(r, e) < 0)
			return -1;
	}
	if (gitcmd_git_dir(r->dst, &r->dst_gitdir, e) < 0)
		return -1;
	r->store = path_join(r->dst_gitdir, "lfs/objects");
	r->commondir = xstrdup(r->dst_gitdir);
	return 0;
}

static int setup_in_place(struct run *r, struct err *e)
{
	char *bare = NULL, *common = NULL;

	r->dst = r->o.repo;
	r->dst_gitdir = xstrdup(r->src_gitdir);
	if (run_git_line(&bare, r->dst, e, "rev-parse", "--is-bare-repository",
		     (char *)NULL) < 0 ||
	    run_git_line(&common, r->dst, e, "rev-parse", "--path-format=absolute",
		     "--git-common-dir", (char *)NULL) < 0) {
		free(bare);
		return -1;
	}
	r->bare = !strcmp(bare, "true");
	r->store = path_join(common, "lfs/objects");
	r->commondir = common;
	free(bare);
	return 0;
}

/*
 * Removes the packs listed in list (unlfs: "<id> <pack path without
 * .pack>" lines, blob.h objects_list; the writer's: "made <path>",
 * made_list) but those named in keep (pack
 * names, a line each; NULL: none). The number of files removed.
 */
size_t run_drop_packs(const char *list, const struct buf *keep)
{
	struct buf text = BUF_INIT(SIZE_MAX / 2), path = BUF_INIT(PATH_MAX);
	struct err ignored = ERR_INIT;
	char *line, *nl, *sp, *base;
	size_t n = 0;

	if (file_read(list, &text, &ignored) <= 0)
		return 0;
	for (line = text.ptr; (nl = strchr(line, '\n')); line = nl + 1) {
		*nl = '\0';
		sp = strchr(line, ' ');
		base = sp ? strrchr(sp, '/') : NULL;
		if (!base || strncmp(base, "/pack-", 6) ||
		    (keep && strstr(keep->ptr, base + 6)))
			continue;
		buf_reset(&path);
		buf_printf(&path, "%s.idx", sp + 1);
		n += unlink(path.ptr) == 0;
		buf_reset(&path);
		buf_printf(&path, "%s.pack", sp + 1);
		n += unlink(path.ptr) == 0;
	}
	buf_release(&text);
	buf_release(&path);
	return n;
}

/* What a killed run left: state files, the side repository, temp files of
 * the LFS store and of the git-annex one (<common-dir>/annex/tmp), packs
 * of files taken back from LFS and of the filter's writer, the list of the
 * blobs the filter wrote. */
size_t run_clean_all(const struct run *r)
{
	char *annex = path_join(r->commondir, "annex");
	char *packs = path_join(r->commondir, "objects/pack");
	char *list = path_join(r->state, RUN_UNLFS_PACKS);
	char *blobs = path_join(r->state, "new-blobs");
	char *made = path_join(r->state, RUN_MADE_PACKS);
	/* the packs of files taken back, of a run that moved no ref (a run
	 * that moved its refs removed the list before) */
	size_t n = run_drop_packs(list, NULL);

	n += unlink(list) == 0;
	n += unlink(blobs) == 0;
	/* and the filter writer's packs, alike */
	n += run_drop_packs(made, NULL);
	n += unlink(made) == 0;
	free(blobs);
	free(made);

	n += state_clean(r->state, r->store) + state_clean(r->state, annex) +
	     import_keeps_clean(packs);
	free(annex);
	free(packs);
	free(list);
	return n;
}

/* The packs of files taken back and the filter writer's are kept for
 * good: their lists go. */
void run_packs_kept(const struct run *r)
{
	char *list = path_join(r->state, RUN_UNLFS_PACKS);
	char *made = path_join(r->state, RUN_MADE_PACKS);

	unlink(list);
	unlink(made);
	free(list);
	free(made);
}

/*
 * At the start, under the lock: an interrupted run (a journal) is finished,
 * or rolled back with --rollback; with no journal, what a killed run left
 * (temp files, the side repository, unfinished state files) goes.
 */
static int recover(struct run *r, struct err *e)
{
	struct journal j;
	size_t locks = 0, n;
	int found = journal_load(&j, r->state, e), rc;

	if (found < 0)
		return -1;
	if (!found) {
		n = run_clean_all(r);
		/* a first --to run killed in git's hands (the HEAD it copies,
		 * the config it sets): the target is this run's alone */
		if (r->o.to && r->first)
			n += to_locks_clean(r->dst_gitdir);
		if (n && !r->o.f.quiet)
			fprintf(stderr, "migrate run: removed %zu file(s) an interrupted "
				"run left in %s and %s/tmp; no ref had moved\n", n,
				r->state, r->store);
		if (r->o.rollback)
			return err_set(e, ERR_USAGE, "--rollback: no interrupted "
				       "run in %s", r->state);
		return 0;
	}
	rc = r->o.rollback ? journal_rollback(&j, &locks, e)
			   : journal_finish(&j, 1, &locks, e);
	if (rc < 0) {
		n = strlen(e->msg);
		snprintf(e->msg + n, sizeof(e->msg) - n, " (while %s the "
			 "interrupted run journaled in %s/journal)",
			 r->o.rollback ? "rolling back" : "finishing", r->state);
	} else if (!r->o.f.quiet) {
		fprintf(stderr, "migrate run: an interrupted run was found in %s: "
			"%s (%zu ref(s)%s, %zu stale lock file(s) removed)\n",
			r->state, r->o.rollback ? "rolled back" : "finished",
			j.nrefs, r->o.rollback ? " back to their old values"
			: " at their new values", locks);
	}
	if (rc == 0 && !r->o.rollback)
		run_packs_kept(r);	/* a journal without "drop" lines */
	if (rc == 0)
		run_clean_all(r);
	journal_free(&j);
	return rc < 0 ? -1 : 0;
}

/* --dry-run: a private temp directory for the maps and reports the
 * filter writes; removed at the end (run_release). */
static int dry_dir_make(struct run *r, struct err *e)
{
	const char *tmp = getenv("TMPDIR");
	struct buf b = BUF_INIT(BUF_MAX_DEFAULT);

	buf_printf(&b, "%s/migrate-dry.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(b.ptr)) {
		buf_release(&b);
		return err_errno(e, ERR_IO, "cannot create a temp directory "
				 "(TMPDIR)");
	}
	r->dry_dir = buf_detach(&b, NULL);
	return 0;
}

int run_setup(struct run *r, struct err *e)
{
	struct buf src = BUF_INIT(BUF_MAX_DEFAULT);
	char *tips;
	int rc = 0;

	if (gitcmd_git_dir(r->o.repo, &r->src_gitdir, e) < 0 ||
	    gitcmd_sha1_only(r->o.repo, e) < 0)
		return -1;
	/* before anything is written: a run without rules rewrites nothing
	 * useful, and its empty rules would be kept for the next run */
	if (!r->o.verify_only && !r->o.rollback && !r->o.undo && !r->o.allow_no_rules &&
	    !rw_rules_wanted(&r->o.f) && !r->o.f.replace_message)
		return err_set(e, ERR_USAGE, "no rules: say what to convert with "
			       "--rules FILE (rule files for the common jobs: "
			       "examples/ in the source, "
			       "share/doc/migrate/examples installed; "
			       "man migrate-rules), an option that adds rules "
			       "(--include, --path, ...: migrate run --help), "
			       "--strip-blobs-with-ids FILE or "
			       "--replace-message FILE; --allow-no-rules runs "
			       "without (only the maps are written)");
	/* the rules, parsed once for the whole run (the filter, git-annex's
	 * set-up and the state get this set), before anything is written */
	if (!r->o.verify_only && !r->o.rollback && !r->o.undo &&
	    rw_rules_wanted(&r->o.f) &&
	    rw_rules_build(&r->rules, &r->rules_peer, &r->o.f, e) < 0)
		return -1;
	r->o.f.rules_set = r->rules;
	if ((r->o.to ? setup_to(r, e) : setup_in_place(r, e)) < 0)
		return -1;
	r->state = path_join(r->dst_gitdir, "migrate");
	if (state_dir_check(r->state, e) < 0)
		return -1;
	tips = path_join(r->state, "tips");
	r->first = !file_exists(tips);
	free(tips);
	if (r->o.verify_only)
		return 0;
	if (r->o.f.dry_run) {
		/* read only: no lock, no recovery, nothing written */
		if (run_journal_pending(r->state))
			return err_set(e, ERR_USAGE, "an interrupted run is "
				       "journaled in %s/journal: `migrate run` "
				       "finishes it, `migrate run --rollback` undoes "
				       "it; preview after that", r->state);
		return dry_dir_make(r, e);
	}
	if (mkdir(r->state, 0777) < 0 && errno != EEXIST)
		return err_errno(e, ERR_IO, "%s: cannot create", r->state);
	if (state_lock(r->state, &r->lockfd, e) < 0 || recover(r, e) < 0)
		return -1;
	tips = path_join(r->state, "tips");	/* a finished run may have written it */
	r->first = !file_exists(tips);
	free(tips);
	/* written first, so that a retry after a failed first run continues */
	if (r->o.to) {
		buf_printf(&src, "%s\n", r->src_gitdir);
		rc = run_write_small(r->state, "source", src.ptr, e);
		buf_release(&src);
	}
	return rc;
}

void run_release(struct run *r)
{
	int i;

	if (r->repack) {
		struct err ignored = ERR_INIT;

		/* a run that failed after the refs moved: the repack it
		 * started goes on to its end (a pack more, nothing lost) */
		(void)gitcmd_wait(r->repack, &ignored);
	}
	run_tidy_join(r);
	if (r->dry_dir)
		(void)remove_tree(r->dry_dir);
	free(r->dry_dir);
	free(r->alternates);
	buf_release(&r->alt_before);
	free(r->src_gitdir);
	free(r->dst_gitdir);
	free(r->state);
	free(r->store);
	free(r->annex_dir);
	for (i = 0; i < SIDE_KEYS; i++)
		free(r->side_config[i]);
	buf_release(&r->lfs_lines);
	free(r->commondir);
	free(r->side);
	free(r->dst_objects);
	free(r->packs_list);
	free(r->new_blobs);
	free(r->made_packs);
	buf_release(&r->packs_before);
	free(r->before_restart);
	journal_free(&r->j);
	if (r->lockfd > 0)
		close(r->lockfd);
	gitrefs_free(&r->src_before);
	gitrefs_free(&r->dst_before);
	gitrefs_free(&r->side_read.refs);
	gitargv_clear(&r->revs);
	rules_free(r->rules);
	buf_release(&r->rules_peer);
}

struct run_tidy {
	pthread_t thread;
	const char *state;
};

static void *tidy_main(void *arg)
{
	const struct run_tidy *t = arg;

	(void)state_side_remove(t->state);
#ifdef __GLIBC__
	malloc_trim(0);
#endif
	return NULL;
}

void run_tidy_start(void *arg)
{
	struct run *r = arg;
	struct run_tidy *t;

	if (r->tidy)
		return;
	t = xmalloc(sizeof(*t));
	t->state = r->state;
	if (pthread_create(&t->thread, NULL, tidy_main, t) != 0) {
		free(t);	/* run_clean_all removes the side, as before */
		return;
	}
	r->tidy = t;
}

void run_tidy_join(struct run *r)
{
	if (!r->tidy)
		return;
	pthread_join(r->tidy->thread, NULL);
	free(r->tidy);
	r->tidy = NULL;
}

/*
 * A --to run that failed before it moved any ref (no journal) leaves the
 * target as it found it: gone again, or an empty directory again, so
 * that a retry, from this checkout or another, starts afresh.
 */
void run_take_back_target(struct run *r)
{
	char *mark;
	int rc;

	if (!r->made_to || r->moved || (r->state && run_journal_pending(r->state)))
		return;
	/* the mark last: killed on the way, the target is still known as
	 * this source's (or holds nothing but empty folders) */
	mark = path_join(r->o.to, ".git/migrate/source");
	rc = remove_tree_last(r->o.to, mark);
	free(mark);
	if (rc < 0)
		return;	/* what stayed says what happened; nothing to undo */
	if (r->made_to > 0 && mkdir(r->o.to, r->to_mode) == 0)
		(void)chmod(r->o.to, r->to_mode);
}
