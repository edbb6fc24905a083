/*
 * run.c - `migrate run`: git fast-export | the filter | git fast-import in
 * one command, with the state a re-run continues from, a check of every
 * computed id against fast-import's own marks, and RESET.md for clones.
 *
 * Incremental scheme (docs/FORMATS.md 3): a re-run exports REV-ARGS minus the
 * source tips an earlier run processed (`^<tip>`, recorded in the state)
 * with --reference-excluded-parents, so parents migrated earlier arrive as
 * raw old ids; the state's commit map translates them and the target holds
 * their trees (--target-repo). fast-export's own marks are not used: with
 * them the stream would name old commits by marks the filter never saw.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../rules/rules.h"
#include "../engine/engine.h"
#include "cli.h"

static const char run_usage[] =
"usage: migrate run [--rules FILE] [--repo DIR] (--to NEWDIR | --in-place)\n"
"                   [--commit-map-format F] [--verify-split]\n"
"                   [--dry-run] [--report FILE|-] [--report-json FILE]\n"
"                   [--commit-map FILE] [--ref-map FILE]\n"
"                   [--no-rewrite-message-ids] [-q | --progress]\n"
"                   [-- REV-ARGS...]\n"
"   or: migrate run --verify-only [--repo DIR] [--to NEWDIR | --in-place]\n"
"   or: migrate run --rollback [--repo DIR] (--to NEWDIR | --in-place)\n"
"   or: migrate run --in-place --restart [--rules FILE] [--repo DIR]\n"
"\n"
"Runs git fast-export | migrate | git fast-import. --to builds NEWDIR (a\n"
"new repository; the source is never written); --in-place rewrites REPO's\n"
"refs (the refs before the first run are kept under refs/migrate/original/).\n"
"--in-place refuses uncommitted changes, untracked files the new HEAD would\n"
"overwrite, a linked work tree with uncommitted changes on a rewritten\n"
"branch, and a rebase, merge, cherry-pick, revert or bisect in progress.\n"
"State, maps, reports and RESET.md go to <git-dir>/migrate/ of the\n"
"repository written (NEWDIR's or REPO's). fast-import writes into a side\n"
"repository there; a journal is written before the first ref moves, and\n"
"all refs move in one transaction. A run that was killed is finished by\n"
"the next run; --rollback undoes it instead. A second run continues: only\n"
"new commits are exported. --verify-only checks the last run's maps and\n"
"marks against the repository again. --restart (in place) converts the\n"
"history under refs/migrate/original/ again, with the rules given, and\n"
"moves the refs to that conversion. --dry-run decides everything and\n"
"writes nothing anywhere (no target, no state, no store): its reports\n"
"and maps are those the real run would give. Blobs pass by id (fast-export\n"
"--no-data); --to borrows the source's objects during the import and\n"
"ends with one `git repack -a -d`: NEWDIR depends on nothing.\n";

struct run_opts {
	struct rw_options f;	/* the options shared with the filter */
	const char *repo, *to;
	int in_place, verify_only, rollback, restart;
	char **revs;
	int nrevs;
};

#define SIDE_KEYS 3

struct run {
	struct run_opts o;
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
	char *side_config[SIDE_KEYS];
	int own_threshold;
	char annex_uuid[37];
	char *annex_dir;
	struct buf lfs_lines;
	char *side;		/* <state>/import.git: fast-import writes there */
	/* unlfs: the target's objects directory, where the files taken back
	 * are stored as packs of their own, and the list of those packs */
	char *dst_objects, *packs_list;
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
	int dst_absent;		/* --dry-run --to a directory not there yet */
	char *dry_dir;		/* --dry-run: a temp dir for the working files */
	/* --to: the target's objects/info/alternates while it borrows the
	 * source's objects (NULL: not written), and what it held before */
	char *alternates;
	struct buf alt_before;
	int alt_had;
	struct gitrefs src_before, dst_before;
	struct rw_stats stats;	/* the filter's, for the ending lines */
	struct gitargv revs;
	uint64_t total;
	size_t map_before;
};

/* ---- small file helpers ---- */

/* <state>/<name>.new: where a run writes a state file until its journal
 * is finished. */
static char *state_new_path(const struct run *r, const char *name)
{
	struct buf b = BUF_INIT(BUF_MAX_DEFAULT);

	buf_printf(&b, "%s/%s.new", r->state, name);
	return buf_detach(&b, NULL);
}

/* A state file of this run: written as <name>.new and added to the
 * journal, which renames it into place with the refs. */
static int state_put(struct run *r, const char *name, const struct buf *data,
		     struct err *e)
{
	char *path = state_new_path(r, name);
	int rc = file_write(path, data, e);

	if (rc == 0)
		journal_add_file(&r->j, name);
	free(path);
	return rc;
}

/* 1 if an interrupted run's journal is in the state directory. */
static int journal_pending(const char *state)
{
	char *p = path_join(state, "journal");
	int r = file_exists(p);

	free(p);
	return r;
}

/* 1 if dir has entries other than . and .., 0 if empty, -1 if absent. */
static int dir_has_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int found = 0;

	if (!d)
		return -1;
	while (!found && (de = readdir(d)))
		found = strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return found;
}

/* ---- git queries ---- */

/* A step after the filter's part, on its own line where the progress
 * line shows (a terminal, or --progress; never with -q). */
static void phase(const struct run_opts *o, const char *what)
{
	if (!o->f.quiet && o->f.progress >= 0 && (o->f.progress > 0 || isatty(2)))
		fprintf(stderr, "migrate run: %s ...\n", what);
}

/* One line of `git -C dir ARGS`, newline removed, into *out (caller
 * frees). */
static int git_line(char **out, const char *dir, struct err *e, ...)
{
	struct buf b = BUF_INIT(1 << 20);
	va_list ap;
	int r;

	va_start(ap, e);
	r = gitcmd_vrunl(dir, 1, &b, e, ap);
	va_end(ap);
	gitcmd_chomp(&b);
	if (r == 0)
		*out = buf_detach(&b, NULL);
	buf_release(&b);
	return r;
}

/* ---- options ---- */

#define F(field) offsetof(struct run_opts, field)

/* run's own options; the shared ones (--rules, -q, ...) are options.c's */
static const struct cli_option run_only_options[] = {
	{ "repo", 0, CLI_STRING, "DIR", F(repo), 0, NULL,
	  "the repository to migrate (default: the current\n"
	  "directory's)", 0 },
	{ "to", 0, CLI_STRING, "NEWDIR", F(to), 0, NULL,
	  "write the new history into NEWDIR: a new\n"
	  "repository, or the target of an earlier run", 0 },
	{ "in-place", 0, CLI_SET, NULL, F(in_place), 1, NULL,
	  "rewrite REPO's refs (the old ones are kept under\n"
	  "refs/migrate/original/)", 0 },
	{ "verify-only", 0, CLI_SET, NULL, F(verify_only), 1, NULL,
	  "check the last run's maps and marks against the\n"
	  "repository again; change nothing", 0 },
	{ "rollback", 0, CLI_SET, NULL, F(rollback), 1, NULL,
	  "undo a run that was interrupted instead of\n"
	  "finishing it", 0 },
	{ "restart", 0, CLI_SET, NULL, F(restart), 1, NULL,
	  "in place: convert again, with the rules given, from\n"
	  "the history under refs/migrate/original/", 0 },
	{ NULL, 0, 0, NULL, 0, 0, NULL, NULL, 0 },
};

#undef F

/* 0 parsed, 1 --help answered, -1 e set */
static int parse_run_options(struct run_opts *o, int argc, char **argv,
			     struct err *e)
{
	const struct cli_command_options c = {
		CLI_RUN, run_only_options, o, run_usage, NULL, 1,
	};
	int rc;

	o->repo = ".";
	o->f.rewrite_message_ids = -1; /* as the filter: with rules only */
	rc = cli_parse_options(&c, argc, argv, &o->f, e);
	if (rc != CLI_PARSED)
		return rc < 0 ? -1 : 1;
	if (optind < argc && strcmp(argv[optind - 1], "--") != 0)
		return err_set(e, ERR_USAGE, "unexpected argument '%s' "
			       "(revision arguments go after --)", argv[optind]);
	o->revs = argv + optind;
	o->nrevs = argc - optind;
	if (o->to && o->in_place)
		return err_set(e, ERR_USAGE, "--to and --in-place exclude "
			       "each other");
	if (!o->to && !o->in_place)
		return err_set(e, ERR_USAGE, "say where the result goes: "
			       "--to NEWDIR or --in-place");
	if (o->rollback && o->verify_only)
		return err_set(e, ERR_USAGE, "--rollback and --verify-only "
			       "exclude each other");
	if (o->restart && (!o->in_place || o->rollback || o->verify_only ||
			   o->nrevs))
		return err_set(e, ERR_USAGE, "--restart goes with --in-place "
			       "alone (no --rollback, --verify-only or revision "
			       "arguments); with --to, convert into a fresh "
			       "directory instead");
	return 0;
}

static int write_small(const char *state, const char *name, const char *text,
		       struct err *e);

/* ---- the repositories and the state directory ---- */

/* --to NEWDIR: a fresh repository, or the target of an earlier run from
 * the same source. */
static int setup_to(struct run *r, struct err *e)
{
	struct gitargv a = GITARGV_INIT;
	struct buf src = BUF_INIT(1 << 20);
	char *srcfile;
	int has = dir_has_entries(r->o.to), rc;

	r->dst = r->o.to;
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
		gitargv_push(&a, "init");
		gitargv_push(&a, "-q");
		gitargv_push(&a, r->o.to);
		rc = gitcmd_ok(NULL, &a, NULL, NULL, e);
		gitargv_clear(&a);
		if (rc < 0)
			return -1;
	}
	if (git_line(&r->dst_gitdir, r->dst, e, "rev-parse", "--absolute-git-dir",
		     (char *)NULL) < 0)
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
	if (git_line(&bare, r->dst, e, "rev-parse", "--is-bare-repository",
		     (char *)NULL) < 0 ||
	    git_line(&common, r->dst, e, "rev-parse", "--path-format=absolute",
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

/* The object format of dir must be sha1 (ids are 40 hex digits here). */
static int check_sha1(const char *dir, struct err *e)
{
	char *fmt = NULL;
	struct err ignored = ERR_INIT;
	int rc = 0;

	if (git_line(&fmt, dir, &ignored, "rev-parse", "--show-object-format",
		     (char *)NULL) == 0 && strcmp(fmt, "sha1"))
		rc = err_set(e, ERR_USAGE, "%s uses %s object ids; %s "
			     "repositories are not supported yet", dir, fmt, fmt);
	free(fmt);
	return rc;
}

/*
 * Removes the packs listed in list (unlfs: "<id> <pack path without
 * .pack>" lines, blob.h objects_list) but those named in keep (pack
 * names, a line each; NULL: none). The number of files removed.
 */
static size_t drop_packs(const char *list, const struct buf *keep)
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
 * of files taken back from LFS. */
static size_t clean_all(const struct run *r)
{
	char *annex = path_join(r->commondir, "annex");
	char *packs = path_join(r->commondir, "objects/pack");
	char *list = path_join(r->state, "unlfs-packs");
	/* the packs of files taken back, of a run that moved no ref (a run
	 * that moved its refs removed the list before) */
	size_t n = drop_packs(list, NULL);

	n += unlink(list) == 0;

	n += state_clean(r->state, r->store) + state_clean(r->state, annex) +
	     import_keeps_clean(packs);
	free(annex);
	free(packs);
	free(list);
	return n;
}

/* The packs of files taken back are kept for good: their list goes. */
static void packs_kept(const struct run *r)
{
	char *list = path_join(r->state, "unlfs-packs");

	unlink(list);
	free(list);
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
		n = clean_all(r);
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
		packs_kept(r);	/* the refs name their objects now */
	if (rc == 0)
		clean_all(r);
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

static int setup(struct run *r, struct err *e)
{
	struct buf src = BUF_INIT(BUF_MAX_DEFAULT);
	char *tips;
	int rc = 0;

	if (gitcmd_git_dir(r->o.repo, &r->src_gitdir, e) < 0 ||
	    check_sha1(r->o.repo, e) < 0)
		return -1;
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
		if (journal_pending(r->state))
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
		rc = write_small(r->state, "source", src.ptr, e);
		buf_release(&src);
	}
	return rc;
}

static void run_release(struct run *r)
{
	int i;

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
	free(r->before_restart);
	journal_free(&r->j);
	if (r->lockfd > 0)
		close(r->lockfd);
	gitrefs_free(&r->src_before);
	gitrefs_free(&r->dst_before);
	gitargv_clear(&r->revs);
}

/* ---- revisions: what this run exports ---- */

static int by_oid(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct oid));
}

/* The commits the state's tips file names, sorted and unique, into *ids
 * (caller frees); *n of them. A missing file is no tips. */
static int tips_load(struct oid **ids, size_t *n, const char *state,
		     struct err *e)
{
	struct buf text = BUF_INIT(SIZE_MAX / 2);
	char *path = path_join(state, "tips"), *line, *nl;
	size_t k = 0, alloc = 16;
	int r = file_read(path, &text, e);

	*ids = xmalloc(alloc * sizeof(**ids));
	for (line = text.ptr; r > 0 && (nl = strchr(line, '\n')); line = nl + 1) {
		if (k == alloc)
			*ids = xrealloc(*ids, (alloc *= 2) * sizeof(**ids));
		if (nl - line < OID_HEX || oid_from_hex(&(*ids)[k++], line, OID_HEX) < 0)
			r = err_set(e, ERR_IO, "%s: malformed line '%.*s'", path,
				    (int)(nl - line), line);
	}
	qsort(*ids, k, sizeof(**ids), by_oid);
	*n = 0;
	for (size_t i = 0; i < k; i++)
		if (*n == 0 || !oid_eq(&(*ids)[*n - 1], &(*ids)[i]))
			(*ids)[(*n)++] = (*ids)[i];
	free(path);
	buf_release(&text);
	return r < 0 ? -1 : 0;
}

/*
 * REV-ARGS (default: every ref but refs/migrate/...), minus the tips of the
 * earlier runs. --exclude only acts on the --all/--glob after it, so it is
 * harmless before explicit revisions and keeps the backups of an in-place
 * run out of the export.
 */
/* --restart: the backup under refs/migrate/original/ of every ref there
 * is now, exported under the name it had (export_args adds the refspec);
 * a ref deleted since is not made again. */
static int restart_revs(struct run *r, struct gitrefs *orig)
{
	const char *name;
	size_t i;

	for (i = 0; i < orig->n; i++) {
		name = orig->v[i].name + strlen("refs/migrate/original/");
		if (gitrefs_find(&r->dst_before, name))
			gitargv_push(&r->revs, orig->v[i].name);
	}
	gitrefs_free(orig);
	return 0;
}

static int build_revs(struct run *r, struct err *e)
{
	struct gitrefs refs = GITREFS_INIT;
	char hex[OID_HEX + 1];
	struct oid *tips;
	size_t n, i;
	int k;

	if (r->o.restart)	/* the originals, named as the refs they were */
		return gitrefs_list(&refs, r->dst, "refs/migrate/original/", e) < 0 ?
			-1 : restart_revs(r, &refs);
	if (tips_load(&tips, &n, r->state, e) < 0) {
		free(tips);
		return -1;
	}
	gitargv_push(&r->revs, "--exclude=refs/migrate/*");
	for (k = 0; k < r->o.nrevs; k++)
		gitargv_push(&r->revs, r->o.revs[k]);
	if (r->o.nrevs == 0)
		gitargv_push(&r->revs, "--all");
	for (i = 0; i < n; i++)
		gitargv_pushf(&r->revs, "^%s", oid_hex(&tips[i], hex));
	free(tips);
	return 0;
}

/* The number of commits the export will hold, for the progress ETA; 0
 * when rev-list cannot tell (fast-export then reports the problem). */
static uint64_t count_commits(const struct run *r)
{
	struct gitargv a = GITARGV_INIT;
	struct buf out = BUF_INIT(4096);
	struct err ignored = ERR_INIT;
	uint64_t n = 0;
	size_t i;

	gitargv_push(&a, "rev-list");
	gitargv_push(&a, "--count");
	for (i = 0; i < r->revs.n; i++)
		gitargv_push(&a, r->revs.v[i]);
	if (gitcmd_run(r->o.repo, &a, NULL, &out, &ignored) == 0) {
		gitcmd_chomp(&out);
		if (parse_u64(out.ptr, out.len, UINT64_MAX, &n) < 0)
			n = 0;
	}
	gitargv_clear(&a);
	buf_release(&out);
	return n;
}

/* ---- the pipeline ---- */

/* The files one run leaves in the state: written under name.new during
 * the run, renamed after the check (state_commit). */
struct state_files {
	char *map, *refmap, *marks, *imarks;
};

static const char *const state_names[] = {
	"commit-map", "ref-map", "marks", "import-marks",
};

static void state_files_init(struct state_files *f, const char *state,
			     const char *suffix)
{
	char **slot[] = { &f->map, &f->refmap, &f->marks, &f->imarks };
	struct buf b = BUF_INIT(BUF_MAX_DEFAULT);
	size_t i;

	for (i = 0; i < 4; i++) {
		buf_reset(&b);
		buf_printf(&b, "%s/%s%s", state, state_names[i], suffix);
		*slot[i] = xstrdup(b.ptr);
	}
	buf_release(&b);
}

static void state_files_free(struct state_files *f)
{
	free(f->map);
	free(f->refmap);
	free(f->marks);
	free(f->imarks);
}

static void export_args(const struct run *r, struct gitargv *a)
{
	static const char *const flags[] = {
		/* blobs pass by id: the filter reads only those a rule
		 * needs, from the source (issue 12) */
		"fast-export", "--no-data", "--show-original-ids",
		"--signed-tags=verbatim",
		"--tag-of-filtered-object=rewrite", "--reencode=no", "--mark-tags",
		/* a cut stream then fails in the filter, never imports half */
		"--use-done-feature",
	};
	size_t i;

	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		gitargv_push(a, flags[i]);
	/* parents outside the range arrive as raw ids: on a re-run they were
	 * migrated before (the map translates them), in place they are there */
	if (!r->first || r->o.in_place)
		gitargv_push(a, "--reference-excluded-parents");
	if (r->o.restart)
		gitargv_push(a, "--refspec=refs/migrate/original/refs/*:refs/*");
	for (i = 0; i < r->revs.n; i++)
		gitargv_push(a, r->revs.v[i]);
}

/*
 * git fast-import's environment: glibc's malloc keeps the freed top of
 * its heap. Left to trim it, fast-import moves the top (brk) several times
 * per M line naming a blob by id: 25000 brk calls and 1.2 s of system
 * time for the assets corpus's 7188 lines (tests/bench/odb.sh), 0.05 s
 * with the top kept. A GLIBC_TUNABLES of the caller's is left as it is.
 */
static const char *const *import_env(void)
{
	static const char *const env[] = {
		"GLIBC_TUNABLES=glibc.malloc.trim_threshold=134217728", NULL
	};

	return getenv("GLIBC_TUNABLES") ? NULL : env;
}

/*
 * The side repository fast-import writes into is made by `git init` and
 * has no config of its own: the source's settings of how objects are
 * stored (core.bigFileThreshold, pack.compression, core.compression) are
 * copied into it. When a rule is unlfs and the source sets none of them,
 * the files it brings back (whole files, big enough to have been in LFS,
 * media mostly) are stored as `git lfs migrate export` stores them: whole,
 * with no delta search against the blob before them in the stream
 * (another file's, as a rule: costly and rarely fruitful; `git gc` finds
 * the deltas later), and deflated at zlib's fastest level, which gives
 * the same size on data that is compressed already. fast-import of the
 * unlfs stream of the assets corpus (1.4 GB): 106 s as it was, 64 s
 * whole, 51 s whole and at level 1; 1.1 GB of objects each time.
 */
static const char *const side_keys[SIDE_KEYS][2] = {
	{ "core.bigFileThreshold", "1m" },
	{ "pack.compression", "1" },
	{ "core.compression", NULL },
};

static void side_config_prepare(struct run *r)
{
	struct err ignored = ERR_INIT;
	int i, own = 0;

	for (i = 0; i < SIDE_KEYS; i++) {
		char *v = NULL;

		if (git_line(&v, r->o.repo, &ignored, "config", "--get",
			     side_keys[i][0], (char *)NULL) == 0 && *v) {
			r->side_config[i] = v;
			own = 1;
		} else {
			free(v);
		}
	}
	r->own_threshold = r->side_config[0] != NULL;
	for (i = 0; !own && r->unlfs && i < SIDE_KEYS; i++)
		if (side_keys[i][1])
			r->side_config[i] = xstrdup(side_keys[i][1]);
}

static void import_args(const struct run *r, const struct state_files *f,
			struct gitargv *a)
{
	gitargv_push(a, "fast-import");
	gitargv_push(a, "--quiet");
	gitargv_pushf(a, "--export-marks=%s", f->imarks);
	gitargv_push(a, "--date-format=raw-permissive");
	(void)r;
}

/*
 * One message for the three processes. The filter's error comes first
 * when it failed; a git process that failed on its own is added (a
 * fast-export killed by SIGPIPE after the filter stopped reading, or a
 * fast-import told "stream ends early" because the filter stopped writing,
 * only echo the filter's failure).
 */
static int pipeline_result(int filter_rc, const struct err *fe, int xs,
			   int is, struct err *e)
{
	char msg[sizeof(e->msg)];
	enum err_kind kind = filter_rc < 0 ? fe->kind : ERR_IO;
	int n = 0;

	msg[0] = '\0';
	if (filter_rc < 0)
		n = snprintf(msg, sizeof(msg), "%s", fe->msg);
	if (xs != 0 && !(filter_rc < 0 && xs == 128 + 13))
		n += snprintf(msg + n, sizeof(msg) - (size_t)n, "%sgit fast-export "
			      "failed (exit status %d)", n ? "; " : "", xs);
	if (is != 0 && !(filter_rc < 0 && fe->kind != ERR_IO))
		snprintf(msg + n, sizeof(msg) - (size_t)n, "%sgit fast-import "
			 "failed (exit status %d)", n ? "; " : "", is);
	if (filter_rc == 0 && xs == 0 && is == 0)
		return 0;
	return err_set(e, kind ? kind : ERR_IO, "%s", msg);
}

static int pipeline(const struct run *r, const struct rw_options *opt,
		    const struct state_files *f, struct err *e)
{
	struct gitargv xa = GITARGV_INIT, ia = GITARGV_INIT;
	struct err fe = ERR_INIT;
	int a[2], b[2], frc = -1, xs, is;
	pid_t xp, ip;

	if (pipe2(a, O_CLOEXEC) < 0)
		return err_errno(e, ERR_IO, "pipe");
	if (opt->dry_run) {
		/* a preview: the filter writes no stream, so no fast-import */
		b[0] = -1;
		b[1] = open("/dev/null", O_WRONLY | O_CLOEXEC);
	} else if (pipe2(b, O_CLOEXEC) < 0) {
		b[1] = -1;
	}
	if (b[1] < 0) {
		close(a[0]);
		close(a[1]);
		return err_errno(e, ERR_IO, "%s", opt->dry_run ? "/dev/null" : "pipe");
	}
	export_args(r, &xa);
	import_args(r, f, &ia);
	if (gitcmd_spawn(&xp, r->o.repo, &xa, -1, a[1], e) < 0) {
		close(a[0]); close(a[1]); close(b[1]);
		if (b[0] >= 0)
			close(b[0]);
		gitargv_clear(&xa);
		gitargv_clear(&ia);
		return -1;
	}
	close(a[1]);
	if (opt->dry_run) {
		frc = rw_filter(opt, a[0], b[1], &fe);
		close(b[1]);
		is = 0;
	} else if (gitcmd_spawn_env(&ip, r->side, &ia, import_env(), b[0], -1,
				    &fe) == 0) {
		close(b[0]);
		frc = rw_filter(opt, a[0], b[1], &fe);
		close(b[1]);
		if (frc == 0)
			phase(&r->o, "git fast-import is writing its pack");
		is = gitcmd_wait(ip, e);
	} else {
		close(b[0]);
		close(b[1]);
		is = 0;
	}
	close(a[0]);
	xs = gitcmd_wait(xp, e);
	gitargv_clear(&xa);
	gitargv_clear(&ia);
	return pipeline_result(frc, &fe, xs, is, e);
}

static void filter_options(struct run *r, const struct state_files *f,
			   struct rw_options *opt, char **report,
			   char **report_json)
{
	/* the shared options mean what they mean to the filter; the state
	 * holds the filter-repo map (write_map_format adds the other) */
	*opt = r->o.f;
	opt->commit_map_format = NULL;
	/* a preview's reports go to its temp dir, a run's to the state */
	*report = path_join(r->dry_dir ? r->dry_dir : r->state, "report.txt");
	*report_json = path_join(r->dry_dir ? r->dry_dir : r->state, "report.json");
	opt->store = r->store;
	if (r->annex) {
		opt->annex_dir = r->annex_dir;
		opt->annex_uuid = r->annex_uuid;
		opt->annex_desc = r->dst;
	}
	opt->commit_map = f->map;
	opt->ref_map = f->refmap;
	opt->export_marks = f->marks;
	opt->source_repo = r->o.repo;
	opt->target_repo = r->dst_absent ? r->o.repo : r->dst;
	opt->input_name = "git fast-export";
	opt->report = *report;
	opt->report_json = *report_json;
	opt->progress_total = r->total;
	opt->date_format = "raw-permissive";	/* as import_args gives it */
	opt->output = NULL;
	opt->stats = &r->stats;
	/* unlfs: the files taken back are stored whole by the filter's
	 * threads, unless the source's core.bigFileThreshold asks for a
	 * delta search (then fast-import stores them, as configured) */
	if (r->unlfs && r->dst_objects && !r->own_threshold) {
		/* the level fast-import would deflate them at (side_keys) */
		const char *level = r->side_config[1] ? r->side_config[1] :
				    r->side_config[2];

		opt->objects_dir = r->dst_objects;
		opt->objects_level = level ? atoi(level) : -1;
		if (opt->objects_level < -1 || opt->objects_level > 9)
			opt->objects_level = -1;
		opt->objects_list = r->packs_list = path_join(r->state, "unlfs-packs");
	}
}

/* ---- the check: computed ids against fast-import's ---- */

struct mark_id {
	uint64_t mark;
	struct oid id;
};

struct marks {
	struct mark_id *v;
	size_t n;
};

static int by_mark(const void *a, const void *b)
{
	const struct mark_id *x = a, *y = b;
	return x->mark < y->mark ? -1 : x->mark > y->mark;
}

/* One marks line, ":<mark> <40 hex>". */
static int mark_parse(struct mark_id *m, const char *line, size_t len)
{
	const char *sp = memchr(line, ' ', len);

	if (len < 2 || line[0] != ':' || !sp || line + len - sp - 1 != OID_HEX)
		return -1;
	if (parse_u64(line + 1, (size_t)(sp - line - 1), UINT64_MAX, &m->mark) < 0)
		return -1;
	return oid_from_hex(&m->id, sp + 1, OID_HEX);
}

/* Loads a marks file, sorted by mark. A missing file is an error: both
 * sides of the check must have written one. */
static int marks_load(struct marks *m, const char *path, struct err *e)
{
	struct buf text = BUF_INIT(SIZE_MAX / 2);
	char *line, *nl;
	size_t alloc = 64, lineno = 0;
	int r = file_read(path, &text, e);

	m->v = xmalloc(alloc * sizeof(*m->v));
	m->n = 0;
	if (r == 0)
		r = err_set(e, ERR_IO, "verification failed: %s is missing", path);
	for (line = text.ptr; r > 0 && (nl = strchr(line, '\n')); line = nl + 1) {
		lineno++;
		if (m->n == alloc)
			m->v = xrealloc(m->v, (alloc *= 2) * sizeof(*m->v));
		if (mark_parse(&m->v[m->n++], line, (size_t)(nl - line)) < 0)
			r = err_set(e, ERR_IO, "verification failed: %s:%zu: not a "
				    "marks line: '%.*s'", path, lineno,
				    (int)(nl - line), line);
	}
	buf_release(&text);
	qsort(m->v, m->n, sizeof(*m->v), by_mark);
	return r < 0 ? -1 : 0;
}

/* Every mark the filter computed is the object fast-import wrote, and
 * fast-import wrote no mark the filter did not compute. */
static int marks_compare(const struct marks *ours, const struct marks *theirs,
			 const struct state_files *f, struct err *e)
{
	char h1[OID_HEX + 1], h2[OID_HEX + 1];
	size_t i = 0, j = 0;

	while (i < ours->n || j < theirs->n) {
		const struct mark_id *a = i < ours->n ? &ours->v[i] : NULL;
		const struct mark_id *b = j < theirs->n ? &theirs->v[j] : NULL;
		if (a && b && a->mark == b->mark && oid_eq(&a->id, &b->id)) {
			i++, j++;
			continue;
		}
		if (a && b && a->mark == b->mark)
			return err_set(e, ERR_IO, "verification failed: mark :%llu is "
				       "%s in migrate's marks (%s) but %s in git "
				       "fast-import's (%s)", (unsigned long long)a->mark,
				       oid_hex(&a->id, h1), f->marks, oid_hex(&b->id, h2),
				       f->imarks);
		if (!b || (a && a->mark < b->mark))
			return err_set(e, ERR_IO, "verification failed: mark :%llu (%s) "
				       "of migrate's marks (%s) is not in git fast-import's "
				       "(%s)", (unsigned long long)a->mark,
				       oid_hex(&a->id, h1), f->marks, f->imarks);
		return err_set(e, ERR_IO, "verification failed: mark :%llu (%s) of "
			       "git fast-import's marks (%s) is not in migrate's (%s)",
			       (unsigned long long)b->mark, oid_hex(&b->id, h1),
			       f->imarks, f->marks);
	}
	return 0;
}

struct map_check {
	struct oid *ids;	/* fast-import's, sorted */
	size_t n;
	struct oid bad_old, bad_new;
	int bad;
};

static int map_check_one(void *ctx, const struct oid *old,
			 const struct oid *new)
{
	struct map_check *c = ctx;

	/* 40 zeros: a commit the output dropped (README, Files it writes) */
	if (c->bad || oid_is_null(new) ||
	    bsearch(new, c->ids, c->n, sizeof(*c->ids), by_oid))
		return 0;
	c->bad = 1;
	c->bad_old = *old;
	c->bad_new = *new;
	return 0;
}

/* Every commit-map entry of the checked run (from the from-th on) maps to
 * an object fast-import wrote. */
static int map_compare(const struct marks *theirs, const char *map_path,
		       size_t from, struct err *e)
{
	struct map_check c = { 0 };
	struct cmap *m = cmap_new();
	char h1[OID_HEX + 1], h2[OID_HEX + 1];
	size_t i;
	int r = cmap_load(m, map_path, e);

	c.ids = xmalloc((theirs->n + 1) * sizeof(*c.ids));
	for (i = 0; i < theirs->n; i++)
		c.ids[c.n++] = theirs->v[i].id;
	qsort(c.ids, c.n, sizeof(*c.ids), by_oid);
	if (r == 0 && from > cmap_count(m))
		r = err_set(e, ERR_IO, "verification failed: %s has %zu entries, "
			    "fewer than the %zu it had before the run", map_path,
			    cmap_count(m), from);
	if (r == 0)
		cmap_each_from(m, from, map_check_one, &c);
	if (r == 0 && c.bad)
		r = err_set(e, ERR_IO, "verification failed: %s maps %s to %s, "
			    "an object git fast-import did not write", map_path,
			    oid_hex(&c.bad_old, h1), oid_hex(&c.bad_new, h2));
	free(c.ids);
	cmap_free(m);
	return r;
}

/* One ref-map line "<old> <new> <ref>" against the target's refs. */
static int refmap_line(const struct gitrefs *refs, const char *line,
		       size_t len, const char *path, struct err *e)
{
	const struct gitref *g;
	struct oid new;
	char name[4096], hex[OID_HEX + 1];

	if (len < 2 * OID_HEX + 3 || len - 2 * OID_HEX - 2 >= sizeof(name) ||
	    oid_from_hex(&new, line + OID_HEX + 1, OID_HEX) < 0)
		return err_set(e, ERR_IO, "verification failed: %s: not a ref-map "
			       "line: '%.*s'", path, (int)len, line);
	memcpy(name, line + 2 * OID_HEX + 2, len - 2 * OID_HEX - 2);
	name[len - 2 * OID_HEX - 2] = '\0';
	g = gitrefs_find(refs, name);
	if (oid_is_null(&new) ? g == NULL : (g && oid_eq(&g->id, &new)))
		return 0;
	return err_set(e, ERR_IO, "verification failed: %s is %s in the "
		       "repository but %.40s in the ref map %s", name,
		       g ? oid_hex(&g->id, hex) : "missing",
		       line + OID_HEX + 1, path);
}

/* A stream's `commit HEAD` (a detached HEAD) is checked against HEAD:
 * it goes first in the sorted list ('H' sorts before 'r'). */
static void add_head(struct gitrefs *refs, const char *dir)
{
	struct err ignored = ERR_INIT;
	char *hex = NULL;
	struct oid id;

	if (git_line(&hex, dir, &ignored, "rev-parse", "-q", "--verify", "HEAD",
		     (char *)NULL) == 0 && oid_from_hex(&id, hex, strlen(hex)) == 0) {
		refs->v = xrealloc(refs->v, (refs->n + 1) * sizeof(*refs->v));
		memmove(refs->v + 1, refs->v, refs->n * sizeof(*refs->v));
		memset(refs->v, 0, sizeof(*refs->v));
		refs->v[0].name = xstrdup("HEAD");
		refs->v[0].id = id;
		refs->n++;
	}
	free(hex);
}

static int refmap_compare(const char *dir, const char *path, struct err *e)
{
	struct gitrefs refs = GITREFS_INIT;
	struct buf text = BUF_INIT(SIZE_MAX / 2);
	char *line, *nl;
	int r = file_read(path, &text, e);

	if (r == 0)
		r = err_set(e, ERR_IO, "verification failed: %s is missing", path);
	if (r > 0)
		r = gitrefs_list(&refs, dir, NULL, e) < 0 ? -1 : 1;
	if (r > 0)
		add_head(&refs, dir);
	for (line = text.ptr; r > 0 && (nl = strchr(line, '\n')); line = nl + 1)
		if (refmap_line(&refs, line, (size_t)(nl - line), path, e) < 0)
			r = -1;
	gitrefs_free(&refs);
	buf_release(&text);
	return r < 0 ? -1 : 0;
}

/*
 * The check of one run (docs/DESIGN.md, data flow 4): migrate's marks equal
 * fast-import's, the commit map's entries of the run (from map_before on)
 * are objects fast-import wrote, and the target's refs are those of the
 * ref map. Returns 0, or -1 with e naming the first difference.
 */
static int verify_run(const char *dir, const struct state_files *f,
		      size_t map_before, struct err *e)
{
	struct marks ours = { 0 }, theirs = { 0 };
	int r = marks_load(&ours, f->marks, e);

	if (r == 0)
		r = marks_load(&theirs, f->imarks, e);
	if (r == 0)
		r = marks_compare(&ours, &theirs, f, e);
	if (r == 0)
		r = map_compare(&theirs, f->map, map_before, e);
	if (r == 0)
		r = refmap_compare(dir, f->refmap, e);
	free(ours.v);
	free(theirs.v);
	return r;
}

/* ---- after the check: the state, the work tree, RESET.md ---- */

/* The map in the layout --commit-map-format asked for, beside the
 * filter-repo one the state keeps (re-runs load that one). */
static int write_map_format(struct run *r, const char *map_path,
			    struct err *e)
{
	const char *name;
	enum cmap_format fmt;
	struct cmap *m;
	struct buf out = BUF_INIT(SIZE_MAX / 2);
	int rc;

	if (!r->o.f.commit_map_format || cmap_format_parse(r->o.f.commit_map_format, &fmt) < 0 ||
	    fmt == CMAP_FILTER_REPO)
		return 0;
	m = cmap_new();
	name = fmt == CMAP_LFS ? "commit-map.lfs" : "commit-map.bfg";
	rc = cmap_load(m, map_path, e);
	if (rc == 0)
		rc = cmap_format(m, fmt, &out) < 0
			? err_set(e, ERR_IO, "%s/%s: too large", r->state, name) : 0;
	if (rc == 0)
		rc = state_put(r, name, &out, e);
	buf_release(&out);
	cmap_free(m);
	return rc;
}

/* tips: the source commits processed so far ("<id> <ref>"), which the
 * next run excludes: the refs as exported (--to) or as they will be once
 * the journal is finished (in place, where the next run's source is the
 * new history), and the tips of earlier runs. */
static int write_tips(struct run *r, const struct gitrefs *side,
		      struct err *e)
{
	const struct gitrefs *refs = r->o.in_place ? &r->dst_before : &r->src_before;
	struct buf out = BUF_INIT(SIZE_MAX / 2);
	char hex[OID_HEX + 1];
	struct oid *old = NULL;
	size_t n = 0, i;
	/* a restart's tips are its own: the old conversion's are not ours */
	int rc = r->o.restart ? 0 : tips_load(&old, &n, r->state, e);

	for (i = 0; rc == 0 && i < refs->n; i++) {
		const struct gitref *g = &refs->v[i];
		if (r->o.in_place && gitrefs_find(side, g->name))
			continue;	/* its new value comes below */
		if (g->has_commit)
			buf_printf(&out, "%s %s\n", oid_hex(&g->commit, hex), g->name);
	}
	for (i = 0; rc == 0 && r->o.in_place && i < side->n; i++)
		if (side->v[i].has_commit)
			buf_printf(&out, "%s %s\n", oid_hex(&side->v[i].commit, hex),
				   side->v[i].name);
	for (i = 0; rc == 0 && i < n; i++)
		buf_printf(&out, "%s (an earlier run)\n", oid_hex(&old[i], hex));
	if (rc == 0)
		rc = state_put(r, "tips", &out, e);
	free(old);
	buf_release(&out);
	return rc;
}

static int write_small(const char *state, const char *name, const char *text,
		       struct err *e)
{
	struct buf b = BUF_INIT(BUF_MAX_DEFAULT);
	char *path = path_join(state, name);
	int rc;

	buf_adds(&b, text);
	rc = file_write(path, &b, e);
	free(path);
	buf_release(&b);
	return rc;
}

/* Appends "\n# <what>\n" and the bytes of the file at path: 1, or 0 when
 * it cannot be read. */
static int add_file(struct buf *out, const char *what, const char *path)
{
	struct err ignored = ERR_INIT;

	buf_printf(out, "\n# %s\n", what);
	return file_read(path, out, &ignored) > 0;
}

/* What starts the expression files in the kept rules, even when there
 * are none: a state without it is from before they were kept. */
#define EXPRESSIONS_MARK "\n# expression files (replace-text=FILE, --replace-message)\n"

/* The expression files of the rules' replace-text actions and of
 * --replace-message, each after a comment line (a re-run with other
 * expressions would leave the old commits with the old ones): 1, or 0. */
static int expressions_text(const struct run *r, struct buf *out)
{
	struct buf path = BUF_INIT(PATH_MAX), what = BUF_INIT(PATH_MAX + 16);
	struct err ignored = ERR_INIT;
	struct rules *rules = NULL;
	size_t i;
	int ok = 1;

	buf_adds(out, EXPRESSIONS_MARK);
	if (r->o.f.rules && rules_load(&rules, r->o.f.rules, &ignored) == 0)
		for (i = 0; ok && i < rules_count(rules); i++) {
			const struct rule *rule = rules_get(rules, i);

			if (!rules_option_path(rule, "replace-text", &path))
				continue;
			buf_reset(&what);
			buf_printf(&what, "replace-text=%s",
				   rules_rule_option(rule, "replace-text", NULL));
			ok = add_file(out, what.ptr, path.ptr);
		}
	rules_free(rules);
	if (ok && r->o.f.replace_message)
		ok = add_file(out, "--replace-message", r->o.f.replace_message);
	buf_release(&path);
	buf_release(&what);
	return ok;
}

/* The bytes of the rule file ("" without one), then those of the
 * --strip-blobs-with-ids file after a comment line when one is given
 * (the ids dropped are part of the conversion too), then, with exprs,
 * the expression files: 1, or 0 when one cannot be read (the filter says
 * why). */
static int rules_text(const struct run *r, struct buf *out, int exprs)
{
	struct err ignored = ERR_INIT;

	if (r->o.f.rules && file_read(r->o.f.rules, out, &ignored) <= 0)
		return 0;
	if (r->o.f.strip_blobs_with_ids &&
	    !add_file(out, "--strip-blobs-with-ids", r->o.f.strip_blobs_with_ids))
		return 0;
	return !exprs || expressions_text(r, out);
}

static int same_text(const struct buf *a, const struct buf *b)
{
	return a->len == b->len && !memcmp(a->ptr, b->ptr, a->len);
}

/*
 * A run goes on with the conversion the first one started: new commits
 * are converted with the rules the old ones were, or the history would
 * mix two conversions. The rules of the last run are kept in the state;
 * other rules are refused, saying what to do instead.
 */
static int check_rules(const struct run *r, struct err *e)
{
	struct buf before = BUF_INIT(SIZE_MAX / 2), now = BUF_INIT(SIZE_MAX / 2);
	struct buf old = BUF_INIT(SIZE_MAX / 2);
	char *path = path_join(r->state, "rules");
	int rc = file_read(path, &before, e);

	/* a state from before the expression files were kept holds the
	 * rules alone; its next run keeps them */
	if (rc > 0 && rules_text(r, &now, 1) && !same_text(&before, &now) &&
	    (memmem(before.ptr, before.len, EXPRESSIONS_MARK,
		    sizeof(EXPRESSIONS_MARK) - 1) || !rules_text(r, &old, 0) ||
	     !same_text(&before, &old)))
		rc = err_set(e, ERR_USAGE, "the rules are not those of the "
			     "last run (kept in %s): a run goes on with the "
			     "conversion the first one started and cannot "
			     "change it; to convert with other rules, start "
			     "again from the original history into a fresh "
			     "--to directory%s%s%s", path,
			     r->o.in_place ? " (rewritten in place, that "
			     "history is under refs/migrate/original/: "
			     "--restart converts it again in place, and " : "",
			     r->o.in_place ? r->state : "",
			     r->o.in_place ? "/RESET.md gives the commands that "
			     "copy it out)" : "");
	free(path);
	buf_release(&before);
	buf_release(&now);
	buf_release(&old);
	return rc < 0 ? -1 : 0;
}

struct compose {
	const struct cmap *now;
	struct cmap *out;
};

static int compose_one(void *ctx, const struct oid *orig, const struct oid *was)
{
	struct compose *c = ctx;
	const struct oid *now = cmap_get(c->now, orig);

	if (now)
		cmap_put(c->out, was, now);
	return 0;
}

/* --restart: commit-map.from-previous, the commits of the conversion this
 * one replaced (before-restart/commit-map: original -> was) mapped to
 * this one's (original -> now), for the clones of that conversion. */
static int write_from_previous(struct run *r, const struct state_files *f,
			       struct err *e)
{
	struct cmap *was = cmap_new(), *now = cmap_new(), *out = cmap_new();
	struct buf text = BUF_INIT(SIZE_MAX / 2);
	char *prev = path_join(r->before_restart, "commit-map");
	struct compose c = { now, out };
	int rc = cmap_load(was, prev, e);

	if (rc == 0)
		rc = cmap_load(now, f->map, e);
	if (rc == 0) {
		cmap_each_from(was, 0, compose_one, &c);
		rc = cmap_format(out, CMAP_FILTER_REPO, &text);
	}
	if (rc == 0)
		rc = state_put(r, "commit-map.from-previous", &text, e);
	cmap_free(was);
	cmap_free(now);
	cmap_free(out);
	buf_release(&text);
	free(prev);
	return rc < 0 ? -1 : 0;
}

/* The state files besides the four of the filter and fast-import, as
 * <name>.new, each added to the journal. */
static int write_state(struct run *r, const struct state_files *f,
		       const struct gitrefs *side, struct err *e)
{
	struct buf rules = BUF_INIT(SIZE_MAX / 2);
	char line[64];
	int rc;

	snprintf(line, sizeof(line), "map-entries-before %zu\n", r->map_before);
	if (write_map_format(r, f->map, e) < 0 || write_tips(r, side, e) < 0 ||
	    write_small(r->state, "last-run.new", line, e) < 0)
		return -1;
	journal_add_file(&r->j, "last-run");
	/* the rules this conversion was made with (check_rules) */
	if (!rules_text(r, &rules, 1)) {
		buf_release(&rules);
		return err_set(e, ERR_IO, "%s: cannot read the rules (or a file they name) again",
			       r->o.f.rules ? r->o.f.rules :
			       r->o.f.strip_blobs_with_ids);
	}
	rc = state_put(r, "rules", &rules, e);
	buf_release(&rules);
	if (rc < 0)
		return -1;
	return r->o.restart ? write_from_previous(r, f, e) : 0;
}

/* The entry count of the map at path (0 if it does not exist yet). */
static int map_entries(size_t *n, const char *path, struct err *e)
{
	struct cmap *m = cmap_new();
	int r = cmap_load(m, path, e);

	*n = cmap_count(m);
	cmap_free(m);
	return r;
}

/* Copies the state's map to the run's working copy (the filter loads and
 * extends it; it replaces the state's only after the check). */
static int map_prepare(struct run *r, const struct state_files *fin,
		       const struct state_files *fnew, struct err *e)
{
	struct buf text = BUF_INIT(SIZE_MAX / 2);
	int rc = r->o.restart ? 0 : file_read(fin->map, &text, e);

	if (rc > 0)
		rc = file_write(fnew->map, &text, e);
	else if (rc == 0)
		unlink(fnew->map);
	buf_release(&text);
	if (rc < 0)
		return -1;
	return map_entries(&r->map_before, fnew->map, e);
}

/* 1 if `git status` shows no change to tracked files, 0 if it does. It
 * only looks: without --no-optional-locks, status takes index.lock to
 * write the refreshed index back, and a run killed there leaves a lock
 * that no journal knows and that the next run's reset dies on. */
static int worktree_clean(const char *dir, struct err *e)
{
	struct gitargv a = GITARGV_INIT;
	struct buf out = BUF_INIT(SIZE_MAX / 2);
	int r;

	gitargv_push(&a, "--no-optional-locks");
	gitargv_push(&a, "status");
	gitargv_push(&a, "--porcelain");
	gitargv_push(&a, "--untracked-files=no");
	r = gitcmd_ok(dir, &a, NULL, &out, e);
	if (r == 0)
		r = out.len == 0;
	gitargv_clear(&a);
	buf_release(&out);
	return r;
}

/* 1 if HEAD names a commit in dir. */
static int head_exists(const char *dir)
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
static int copy_head(const struct run *r, struct err *e)
{
	struct err ignored = ERR_INIT;
	char *sym = NULL;
	int rc = 0;

	if (git_line(&sym, r->o.repo, &ignored, "symbolic-ref", "-q", "HEAD",
		     (char *)NULL) == 0)
		rc = gitcmd_runl(r->dst, 1, NULL, e, "symbolic-ref", "HEAD", sym, (char *)NULL);
	free(sym);
	return rc;
}

/* 1 if the LFS store holds anything (RESET.md then says git lfs pull). */
static int store_used(const struct run *r)
{
	return dir_has_entries(r->store) > 0;
}

static void reset_refs_table(struct buf *out, const struct buf *refmap)
{
	const char *line, *nl;

	buf_adds(out, "| ref | old | new |\n|---|---|---|\n");
	for (line = refmap->ptr; (nl = strchr(line, '\n')); line = nl + 1) {
		if (nl - line < 2 * OID_HEX + 3)
			continue;
		int old_null = !strncmp(line, "0000000000000000000000000000000000000000", OID_HEX);
		int new_null = !strncmp(line + OID_HEX + 1, "0000000000000000000000000000000000000000", OID_HEX);
		buf_printf(out, "| `%.*s` | %s%.*s%s | %s%.*s%s |\n",
			   (int)(nl - line - 2 * OID_HEX - 2), line + 2 * OID_HEX + 2,
			   old_null ? "(none)" : "`", old_null ? 0 : OID_HEX, line,
			   old_null ? "" : "`", new_null ? "(deleted)" : "`",
			   new_null ? 0 : OID_HEX, line + OID_HEX + 1,
			   new_null ? "" : "`");
	}
}

static void reset_branch_commands(struct buf *out, const struct buf *refmap)
{
	const char *line, *nl, *name;
	size_t n = 0;

	for (line = refmap->ptr; (nl = strchr(line, '\n')); line = nl + 1) {
		if (nl - line < 2 * OID_HEX + 3)
			continue;
		name = line + 2 * OID_HEX + 2;
		if (strncmp(name, "refs/heads/", 11) || !strncmp(line + OID_HEX + 1,
		    "0000000000000000000000000000000000000000", OID_HEX))
			continue;
		buf_printf(out, "    git checkout %.*s && git reset --hard origin/%.*s\n",
			   (int)(nl - name - 11), name + 11, (int)(nl - name - 11),
			   name + 11);
		n++;
	}
	if (!n)
		buf_adds(out, "    # (this run set no branch)\n");
}

/* Appends s to out as one shell word (in single quotes). */
static void shell_word(struct buf *out, const char *s)
{
	buf_addch(out, '\'');
	for (; *s; s++)
		if (*s == '\'')
			buf_adds(out, "'\\''");
		else
			buf_addch(out, *s);
	buf_addch(out, '\'');
}

/* In place: how to convert again with other rules, from a copy of the
 * history as it was before the first run. */
static void reset_restart(struct buf *out, const struct run *r)
{
	buf_adds(out, "\n## Converting again with other rules\n\n"
		 "Later runs go on with these rules (other rules are refused). "
		 "To convert again\nin place with other rules, from the history "
		 "as it was before the first run\n(refs/migrate/original/ keeps "
		 "it; the commit map of this conversion is kept in\n"
		 "before-restart/):\n\n"
		 "    migrate run --in-place --restart --rules OTHER.rules\n\n"
		 "Or into a new repository, from a copy of that history (a ref "
		 "made after the\nfirst run is kept there by the next run as it "
		 "was then, with rewritten\ncommits: delete such refs from "
		 "ORIG):\n\n"
		 "    git clone --mirror ");
	shell_word(out, r->dst);
	buf_adds(out, " ORIG\n"
		 "    git -C ORIG for-each-ref --format='delete %(refname)' "
		 "refs/heads/ refs/tags/ | git -C ORIG update-ref --stdin\n"
		 "    git -C ORIG for-each-ref --format='create "
		 "%(refname:lstrip=3) %(objectname)' refs/migrate/original/ | "
		 "git -C ORIG update-ref --stdin\n"
		 "    migrate run --rules OTHER.rules --repo ORIG --to NEWDIR\n");
}

static void reset_text(struct buf *out, const struct run *r,
		       const struct state_files *f, const struct buf *refmap)
{
	int lfs = store_used(r);

	buf_printf(out, "# Moving a clone to the rewritten history\n\n"
		   "`migrate run` rewrote the history of %s into %s. The commits "
		   "it rewrote have new ids; the old -> new id of every commit is "
		   "in\n`%s`: publish that file for collaborators with unpushed "
		   "work.\n\n", r->src_gitdir, r->dst_gitdir, f->map);
	buf_adds(out, "## Refs, old -> new (this run)\n\n");
	reset_refs_table(out, refmap);
	buf_adds(out, "\n## A clone without local work\n\n"
		 "Everything local is replaced by the new history:\n\n"
		 "    git fetch --all --prune\n");
	reset_branch_commands(out, refmap);
	buf_adds(out, "    git fetch --tags --force\n");
	if (lfs)
		buf_adds(out, "    git lfs pull\n");
	if (r->annex)
		buf_adds(out, "    git annex init && git annex get .\n");
	buf_adds(out, "\n## A clone with unpushed branches\n\n"
		 "Fetch the new history, then move each local branch onto it: "
		 "a branch based on\nold commits is rebased onto their new "
		 "counterparts; one that does not rebase\ncleanly is left as it "
		 "was, and named.\n\n    git fetch --all --prune\n"
		 "    migrate remap --commit-map /path/to/commit-map\n"
		 "    git fetch --tags --force\n");
	if (lfs)
		buf_adds(out, "    git lfs pull\n");
	if (r->annex)
		buf_adds(out, "    git annex init && git annex get .\n");
	if (r->o.restart)
		buf_printf(out, "\n## Clones of the conversion this one "
			   "replaced (--restart)\n\nThat conversion's state is "
			   "in `%s`. Its commits map to this\nconversion's in "
			   "`%s/commit-map.from-previous`: a clone made from it "
			   "moves over\nas above, with that map:\n\n"
			   "    git fetch --all --prune\n"
			   "    migrate remap --commit-map /path/to/commit-map."
			   "from-previous\n    git fetch --tags --force\n",
			   r->before_restart, r->state);
	else
		buf_adds(out, "\nA clone made from the result of an earlier run "
			 "only needs `git pull`:\na re-run keeps the ids of "
			 "everything migrated before.\n");
	if (r->annex)
		buf_printf(out, "\n## git-annex\n\nThe files the annex rules "
			   "name are git-annex files; their content is in\n"
			   "`%s`, and the git-annex branch says so (repository "
			   "UUID %s).\nA clone gets it with `git annex get` "
			   "from here. To move the content out of\nthe "
			   "repository, to a directory special remote (any "
			   "other remote works the same):\n\n"
			   "    git annex initremote store type=directory "
			   "directory=/path/to/store encryption=none\n"
			   "    git annex move --all --to store\n\n"
			   "and back, in any clone: `git annex enableremote store "
			   "directory=/path/to/store` then `git annex get .`\n",
			   r->annex_dir,
			   r->annex_uuid);
	if (r->o.in_place) {
		buf_adds(out, "\n## Publishing (rewritten in place)\n\n"
			 "    git push --force --all origin\n"
			 "    git push --force --tags origin\n\n"
			 "The refs as they were before are under "
			 "refs/migrate/original/.\n");
		buf_adds(out, "\n## Reclaiming the space\n\n"
			 "The old history stays in the repository as long as "
			 "refs/migrate/original/ and\nthe reflogs name it. Once "
			 "the new one is published and checked, drop them and\n"
			 "let git collect what only they kept (this cannot be "
			 "undone; the state in\n.git/migrate stays, so later "
			 "runs and --verify-only still work):\n\n"
			 "    git for-each-ref --format='delete %(refname)' "
			 "refs/migrate/original/ | git update-ref --stdin\n"
			 "    git reflog expire --expire=now --all\n"
			 "    git gc --prune=now --aggressive\n");
		reset_restart(out, r);
	} else {
		buf_adds(out, "\n## Packed already\n\n"
			 "The new repository holds every object it needs in one "
			 "pack (`git repack -a -d`,\nreusing the source's deltas) "
			 "and does not depend on the source: it needs no\n"
			 "`git gc` before it is published.\n");
	}
}

#define SIDE_HEAD "refs/migrate/import-HEAD"

static int write_reset(struct run *r, const struct state_files *fin,
		       const struct state_files *fnew, struct err *e)
{
	struct buf refmap = BUF_INIT(SIZE_MAX / 2), out = BUF_INIT(SIZE_MAX / 2);
	int rc = file_read(fnew->refmap, &refmap, e);

	if (rc >= 0) {
		reset_text(&out, r, fin, &refmap);
		rc = state_put(r, "RESET.md", &out, e);
	}
	buf_release(&refmap);
	buf_release(&out);
	return rc < 0 ? -1 : 0;
}

/* ---- git-annex: what `git annex init` sets up ---- */

/* Whether a rule converts to git-annex (the lfs glob rules' lines kept
 * for info/attributes), and the target's UUID: its annex.uuid, or a new
 * one. Notes, on the way, whether a rule is unlfs. */
static int annex_prepare(struct run *r, struct err *e)
{
	struct err ignored = ERR_INIT;
	struct rules *rules = NULL;
	char *uuid = NULL;
	size_t i;
	int rc;

	buf_init(&r->lfs_lines, SIZE_MAX / 2);
	if (!r->o.f.rules || rules_load(&rules, r->o.f.rules, &ignored) < 0)
		return 0;	/* the filter says what is wrong */
	for (i = 0; i < rules_count(rules); i++) {
		const struct rule *rule = rules_get(rules, i);
		if (rules_rule_action(rule) == RULES_ANNEX)
			r->annex = 1;
		if (rules_rule_action(rule) == RULES_UNLFS)
			r->unlfs = 1;
		if (rules_rule_action(rule) == RULES_LFS &&
		    !rules_rule_is_regex(rule) && !rules_rule_size(rule, NULL, NULL))
			(void)rules_rule_attr_line(&r->lfs_lines, rule,
						   "filter=lfs diff=lfs merge=lfs -text",
						   &ignored);
	}
	rules_free(rules);
	if (!r->annex)
		return 0;
	r->annex_dir = path_join(r->commondir, "annex");
	rc = git_line(&uuid, r->dst, &ignored, "config", "--get", "annex.uuid",
		      (char *)NULL);
	if (rc == 0 && annex_uuid_valid(uuid))
		snprintf(r->annex_uuid, sizeof(r->annex_uuid), "%s", uuid);
	else if (rc == 0)
		rc = err_set(e, ERR_USAGE, "%s: annex.uuid '%s' is not a UUID "
			     "as git annex init makes them", r->dst, uuid);
	else
		rc = annex_uuid_new(r->annex_uuid, e);
	free(uuid);
	return rc;
}

/* 1 when text has the line of n bytes (its LF not counted). */
static int has_line(const struct buf *text, const char *line, size_t n)
{
	const char *p = text->ptr, *end = text->ptr + text->len, *nl;

	for (; p && p < end; p = nl ? nl + 1 : NULL) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if ((size_t)((nl ? nl : end) - p) == n && !memcmp(p, line, n))
			return 1;
	}
	return 0;
}

/* The hooks `git annex init` installs (a hook already there is left
 * alone, as git-annex leaves it): after a checkout or merge, unlocked
 * files whose content git-annex could not give at once get it. A bare
 * repository gets post-receive only. */
static int annex_hooks(const struct run *r, struct err *e)
{
	static const char *const hooks[][2] = {
		{ "post-receive", "if git annex post-receive --help >/dev/null 2>&1; "
				  "then git annex post-receive; fi" },
		{ "post-checkout", "git annex smudge --update" },
		{ "post-merge", "git annex smudge --update" },
		{ "pre-commit", "git annex pre-commit ." },
	};
	struct buf text = BUF_INIT(BUF_MAX_DEFAULT);
	char *dir = path_join(r->commondir, "hooks"), *path;
	size_t i;
	int rc = 0;

	if (mkdir(dir, 0777) < 0 && errno != EEXIST)
		rc = err_errno(e, ERR_IO, "%s: cannot create", dir);
	for (i = 0; rc == 0 && i < (r->bare ? 1 : 4); i++) {
		path = path_join(dir, hooks[i][0]);
		buf_reset(&text);
		buf_printf(&text, "#!/bin/sh\n# automatically configured by "
			   "git-annex\n%s\n", hooks[i][1]);
		if (!file_exists(path) && (rc = file_write(path, &text, e)) == 0 &&
		    chmod(path, 0755) < 0)
			rc = err_errno(e, ERR_IO, "%s: cannot make it executable", path);
		free(path);
	}
	free(dir);
	buf_release(&text);
	return rc;
}

/* The config, info/attributes and hooks `git annex init` writes
 * (annex.uuid, annex.version 10, the annex filter, `* filter=annex`), the
 * lfs glob lines after it when lfs rules are mixed in. */
static int annex_setup(struct run *r, struct err *e)
{
	static const char *const cfg[][2] = {
		{ "annex.version", "10" },
		{ "filter.annex.smudge", "git-annex smudge -- %f" },
		{ "filter.annex.clean", "git-annex smudge --clean -- %f" },
		{ "filter.annex.process", "git-annex filter-process" },
	};
	struct buf text = BUF_INIT(SIZE_MAX / 2), add = BUF_INIT(SIZE_MAX / 2);
	char *info = path_join(r->commondir, "info"), *attrs;
	const char *line, *nl;
	size_t i;
	int rc;

	if (!r->annex) {
		free(info);
		return 0;
	}
	attrs = path_join(info, "attributes");
	rc = gitcmd_runl(r->dst, 1, NULL, e, "config", "annex.uuid",
			 r->annex_uuid, (char *)NULL);
	for (i = 0; rc == 0 && i < sizeof(cfg) / sizeof(cfg[0]); i++)
		rc = gitcmd_runl(r->dst, 1, NULL, e, "config", cfg[i][0],
				 cfg[i][1], (char *)NULL);
	if (rc == 0 && mkdir(info, 0777) < 0 && errno != EEXIST)
		rc = err_errno(e, ERR_IO, "%s: cannot create", info);
	if (rc == 0 && file_read(attrs, &text, e) < 0)
		rc = -1;
	buf_adds(&add, "* filter=annex\n");
	buf_add(&add, r->lfs_lines.ptr, r->lfs_lines.len);
	for (line = add.ptr; rc == 0 && (nl = strchr(line, '\n')); line = nl + 1) {
		size_t n = (size_t)(nl - line) + 1;
		if (has_line(&text, line, n - 1))
			continue;
		if (text.len && text.ptr[text.len - 1] != '\n')
			buf_addch(&text, '\n');
		buf_add(&text, line, n);
	}
	if (rc == 0)
		rc = file_write(attrs, &text, e);
	if (rc == 0)
		rc = annex_hooks(r, e);
	free(info);
	free(attrs);
	buf_release(&text);
	buf_release(&add);
	return rc;
}

/* ---- refusals: what the run must not overwrite ---- */

/* A rebase, merge, cherry-pick, revert or bisect in progress in the git
 * dir gitdir: its refs and index belong to that operation. */
static int refuse_in_progress(const char *dir, const char *gitdir,
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

/* ---- the command ---- */

static void head_of(const char *dir, struct oid *id, char **sym);

/* 1 when id is in the sorted ids[n]. */
static int has_oid(const struct oid *ids, size_t n, const struct oid *id)
{
	return n && bsearch(id, ids, n, sizeof(*ids), by_oid) != NULL;
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
	qsort(out->old, out->n, sizeof(*out->old), by_oid);
	qsort(out->new, out->n, sizeof(*out->new), by_oid);
}

/* Copies the state files of the last run into <state>/before-restart/
 * (before-restart.2/ and on for later restarts: an earlier copy is never
 * replaced), whose commit map the clones of that conversion need. */
static int keep_old_state(struct run *r, struct err *e)
{
	static const char *const names[] = {
		"commit-map", "ref-map", "tips", "rules", "last-run",
		"RESET.md", "report.txt", "report.json", "marks", "import-marks",
		"commit-map.from-previous",
	};
	struct buf text = BUF_INIT(SIZE_MAX / 2), dir = BUF_INIT(PATH_MAX);
	char *from, *to;
	size_t i;
	int rc = 0, k;

	for (k = 1;; k++) {
		buf_reset(&dir);
		buf_printf(&dir, k == 1 ? "%s/before-restart" : "%s/before-restart.%d",
			   r->state, k);
		if (mkdir(dir.ptr, 0777) == 0)
			break;
		if (errno != EEXIST) {
			rc = err_errno(e, ERR_IO, "%s: cannot create", dir.ptr);
			break;
		}
	}
	for (i = 0; rc == 0 && i < sizeof(names) / sizeof(names[0]); i++) {
		from = path_join(r->state, names[i]);
		to = path_join(dir.ptr, names[i]);
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
static int restart_prepare(struct run *r, struct err *e)
{
	struct gitrefs now = GITREFS_INIT, orig = GITREFS_INIT;
	struct map_sides ms = { NULL, NULL, 0 };
	struct oid head, bad;
	char *sym = NULL, *name, *map = path_join(r->state, "commit-map");
	char hex[OID_HEX + 1];
	struct cmap *m = cmap_new();
	const struct gitref *g, *o;
	const struct oid *to;
	size_t i;
	int rc = 0, k = 0;

	if (r->first)
		rc = err_set(e, ERR_USAGE, "--restart: no earlier run in %s: "
			     "a plain run converts from the start", r->state);
	if (rc == 0 && (cmap_load(m, map, e) < 0 ||
			gitrefs_list(&now, r->dst, NULL, e) < 0 ||
			gitrefs_list(&orig, r->dst, "refs/migrate/original/", e) < 0))
		rc = -1;
	if (rc == 0)
		map_sides(m, &ms);
	if (rc == 0 && !orig.n)
		rc = err_set(e, ERR_USAGE, "--restart: refs/migrate/original/ "
			     "is empty (dropped after the run, as RESET.md "
			     "says?): there is no history to start from");
	if (rc == 0) {
		head_of(r->dst, &head, &sym);
		if (!sym && !oid_is_null(&head))
			rc = err_set(e, ERR_USAGE, "--restart: HEAD is detached; "
				     "check out a branch first");
	}
	for (i = 0; rc == 0 && i < now.n; i++) {
		g = &now.v[i];
		if (!strncmp(g->name, "refs/migrate/", 13))
			continue;
		name = path_join("refs/migrate/original", g->name);
		o = gitrefs_find(&orig, name);
		free(name);
		to = o && o->has_commit ? cmap_get(m, &o->commit) : NULL;
		if (!o)
			rc = err_set(e, ERR_USAGE, "--restart: %s is not under "
				     "refs/migrate/original/ (made after the first "
				     "run?): delete it or move it aside first",
				     g->name);
		else if (g->has_commit != o->has_commit ||
			 (g->has_commit && !oid_eq(to ? to : &o->commit, &g->commit)))
			rc = err_set(e, ERR_USAGE, "--restart: %s is not the "
				     "conversion of its backup any more (commits "
				     "made on the rewritten history, converted by "
				     "a later run or not): restarting would drop "
				     "them from it", g->name);
	}
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
		rc = keep_old_state(r, e);
	if (rc == 0)
		r->first = 1;	/* a first run, from the originals */
	cmap_free(m);
	free(sym);
	free(map);
	free(ms.old);
	free(ms.new);
	gitrefs_free(&now);
	gitrefs_free(&orig);
	return rc;
}

static int prepare(struct run *r, const struct state_files *fin,
		   const struct state_files *fnew, struct err *e)
{
	int clean, dry = r->o.f.dry_run;

	/* a preview writes nothing: nothing of the work tree is in its way */
	if (!dry && r->o.in_place && refuse_in_progress(r->dst, r->dst_gitdir, e) < 0)
		return -1;
	if (!dry && r->o.in_place && !r->bare) {
		clean = worktree_clean(r->dst, e);
		if (clean < 0)
			return -1;
		if (!clean)
			return err_set(e, ERR_USAGE, "%s has uncommitted "
				       "changes; commit or stash them first", r->dst);
	}
	if (r->o.restart && restart_prepare(r, e) < 0)
		return -1;
	if ((!r->o.restart && check_rules(r, e) < 0) || annex_prepare(r, e) < 0)
		return -1;
	side_config_prepare(r);
	if (gitrefs_list(&r->src_before, r->o.repo, NULL, e) < 0 ||
	    (!r->dst_absent && gitrefs_list(&r->dst_before, r->dst, NULL, e) < 0))
		return -1;
	if (!dry && r->o.to && r->first && copy_head(r, e) < 0)
		return -1;
	if (!dry && r->o.to && !r->first)
		r->dst_clean = head_exists(r->dst) && worktree_clean(r->dst, e) == 1;
	if (build_revs(r, e) < 0)
		return -1;
	r->total = count_commits(r);
	return map_prepare(r, fin, fnew, e);
}

/* <state>/import.git: a bare repository whose objects directory is the
 * target's, so that fast-import's objects land where they belong and its
 * refs nowhere near the target's. Its HEAD names a branch no stream
 * writes, so that a stream's `commit HEAD` (a detached HEAD) stays apart. */
static int side_create(struct run *r, struct err *e)
{
	char *objects = NULL, *link = NULL;
	int i, rc = git_line(&objects, r->dst, e, "rev-parse", "--path-format=absolute",
			  "--git-path", "objects", (char *)NULL);

	r->side = path_join(r->state, "import.git");
	if (rc == 0)
		rc = gitcmd_runl(NULL, 1, NULL, e, "init", "-q", "--bare", r->side,
				 (char *)NULL);
	link = path_join(r->side, "objects");
	if (rc == 0) {
		/* git init made empty objects/{info,pack}; the link replaces them */
		char *info = path_join(link, "info"), *pack = path_join(link, "pack");
		rmdir(info);
		rmdir(pack);
		free(info);
		free(pack);
		if (rmdir(link) < 0)
			rc = err_errno(e, ERR_IO, "%s: cannot remove", link);
	}
	if (rc == 0 && symlink(objects, link) < 0)
		rc = err_errno(e, ERR_IO, "%s: cannot link to %s", link, objects);
	if (rc == 0)
		rc = gitcmd_runl(r->side, 1, NULL, e, "symbolic-ref", "HEAD",
				 SIDE_HEAD, (char *)NULL);
	if (rc == 0)
		rc = gitcmd_runl(r->side, 1, NULL, e, "config", "gc.auto", "0",
				 (char *)NULL);
	for (i = 0; rc == 0 && i < SIDE_KEYS; i++)
		if (r->side_config[i])
			rc = gitcmd_runl(r->side, 1, NULL, e, "config",
					 side_keys[i][0], r->side_config[i],
					 (char *)NULL);
	r->dst_objects = objects;
	free(link);
	return rc;
}

/* The pipeline into the side repository, and its check. */
/* The absolute objects directory of the repository at dir (caller
 * frees). */
static int objects_dir(char **out, const char *dir, struct err *e)
{
	return git_line(out, dir, e, "rev-parse", "--path-format=absolute",
			"--git-path", "objects", (char *)NULL);
}

/*
 * --to: the target borrows the source's objects through
 * objects/info/alternates while fast-import writes into it, since the
 * stream names every blob no rule changed by id (--no-data). What the file
 * held before is kept (without a line of ours an interrupted run left) and
 * put back by unborrow; dissociate makes the target self-contained.
 */
static int borrow_objects(struct run *r, struct err *e)
{
	struct buf text = BUF_INIT(SIZE_MAX / 2);
	char *dst = NULL, *src = NULL, *info = NULL, *line, *nl;
	int rc = objects_dir(&dst, r->dst, e);

	if (rc == 0)
		rc = objects_dir(&src, r->o.repo, e);
	if (rc == 0) {
		info = path_join(dst, "info");
		if (mkdir(info, 0777) < 0 && errno != EEXIST)
			rc = err_errno(e, ERR_IO, "%s: cannot create", info);
	}
	if (rc == 0) {
		r->alternates = path_join(info, "alternates");
		rc = file_read(r->alternates, &text, e) < 0 ? -1 : 0;
	}
	for (line = text.ptr; rc == 0 && (nl = strchr(line, '\n')); line = nl + 1)
		if ((size_t)(nl - line) != strlen(src) || memcmp(line, src, strlen(src)))
			buf_add(&r->alt_before, line, (size_t)(nl - line + 1));
	r->alt_had = r->alt_before.len > 0;
	buf_reset(&text);
	if (rc == 0) {
		buf_add(&text, r->alt_before.ptr, r->alt_before.len);
		buf_printf(&text, "%s\n", src);
		rc = file_write(r->alternates, &text, e);
	}
	if (rc < 0) {
		free(r->alternates);
		r->alternates = NULL;
	}
	buf_release(&text);
	free(dst);
	free(src);
	free(info);
	return rc;
}

/* The target's alternates as they were before borrow_objects. */
static int unborrow(struct run *r, struct err *e)
{
	int rc = 0;

	if (!r->alternates)
		return 0;
	if (r->alt_had)
		rc = file_write(r->alternates, &r->alt_before, e);
	else if (unlink(r->alternates) < 0 && errno != ENOENT)
		rc = err_errno(e, ERR_IO, "%s: cannot remove", r->alternates);
	if (rc == 0) {
		free(r->alternates);
		r->alternates = NULL;
	}
	return rc;
}

/*
 * --to, after the refs moved: one `git repack -a -d` copies what the
 * target borrowed into one pack (reusing the source's deltas), then the
 * alternate goes: the result depends on nothing and needs no gc.
 */
static int dissociate(struct run *r, struct err *e)
{
	int rc;

	if (!r->alternates)
		return 0;
	phase(&r->o, "packing the new repository on its own (git repack -a -d)");
	rc = gitcmd_runl(r->dst, 1, NULL, e, "repack", "-a", "-d", "-q",
			 (char *)NULL);
	if (rc == 0)
		rc = unborrow(r, e);
	if (rc < 0) {
		size_t n = strlen(e->msg);
		snprintf(e->msg + n, sizeof(e->msg) - n, "; the new history is "
			 "in %s, but it still borrows objects from the source "
			 "through %s: run `git -C %s repack -a -d` and remove "
			 "that file", r->dst, r->alternates, r->dst);
	}
	return rc;
}

/* 1 when name is a pack's name (40 hex digits) and its .pack and .idx are
 * in the target. */
static int pack_written(const struct run *r, const char *name, size_t len)
{
	struct buf path = BUF_INIT(SIZE_MAX / 2);
	struct oid id;
	int ok;

	if (oid_from_hex(&id, name, len) < 0)
		return 0;
	buf_printf(&path, "%s/pack/pack-%.*s.pack", r->dst_objects, (int)len, name);
	ok = file_exists(path.ptr);
	buf_reset(&path);
	buf_printf(&path, "%s/pack/pack-%.*s.idx", r->dst_objects, (int)len, name);
	ok = ok && file_exists(path.ptr);
	buf_release(&path);
	return ok;
}

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
static int pack_together(struct run *r, struct err *e)
{
	struct buf list = BUF_INIT(SIZE_MAX / 2), ids = BUF_INIT(SIZE_MAX / 2);
	struct buf made = BUF_INIT(BUF_MAX_DEFAULT), joined = BUF_INIT(SIZE_MAX / 2);
	struct gitargv a = GITARGV_INIT;
	char *line, *nl;
	size_t n = 0;
	int rc;

	if (!r->packs_list)
		return 0;
	rc = file_read(r->packs_list, &list, e) < 0 ? -1 : 0;
	for (line = list.ptr; rc == 0 && (nl = strchr(line, '\n')); line = nl + 1) {
		buf_add(&ids, line, OID_HEX);
		buf_addch(&ids, '\n');
		n++;
	}
	if (rc == 0 && n > 1) {
		phase(&r->o, "packing the files taken back from LFS together");
		/* small mmap windows: the copy reads each pack once, and
		 * git's defaults would map all of them at once */
		gitargv_push(&a, "-c");
		gitargv_push(&a, "core.packedGitWindowSize=16m");
		gitargv_push(&a, "-c");
		gitargv_push(&a, "core.packedGitLimit=128m");
		gitargv_push(&a, "pack-objects");
		gitargv_push(&a, "-q");
		gitargv_push(&a, "--window=0");
		gitargv_pushf(&a, "%s/pack/pack", r->dst_objects);
		rc = gitcmd_ok(r->dst, &a, &ids, &made, e);
		/* a line per pack it wrote: each is listed before the small
		 * ones go, so that a run killed now drops it too */
		for (line = made.ptr; rc == 0 && *line; line = nl + 1) {
			nl = strchr(line, '\n');
			if (!nl || !pack_written(r, line, (size_t)(nl - line))) {
				rc = err_set(e, ERR_IO, "git pack-objects said "
					     "'%s', not the names of packs it "
					     "wrote in %s/pack", made.ptr,
					     r->dst_objects);
				break;
			}
			buf_printf(&joined, "%.*s %s/pack/pack-%.*s\n",
				   (int)(nl - line), line, r->dst_objects,
				   (int)(nl - line), line);
		}
		if (rc == 0 && !joined.len)
			rc = err_set(e, ERR_IO, "git pack-objects wrote no pack");
		if (rc == 0) {
			buf_add(&list, joined.ptr, joined.len);
			rc = file_write(r->packs_list, &list, e);
		}
		if (rc == 0) {
			drop_packs(r->packs_list, &made);
			rc = file_write(r->packs_list, &joined, e);
		}
	}
	gitargv_clear(&a);
	buf_release(&list);
	buf_release(&ids);
	buf_release(&made);
	buf_release(&joined);
	return rc;
}

static int convert(struct run *r, const struct state_files *fnew,
		   struct err *e)
{
	struct rw_options opt;
	char *report, *report_json;
	int rc = 0;

	if (!r->o.f.dry_run)
		rc = side_create(r, e);
	if (rc == 0 && r->o.to && !r->o.f.dry_run)
		rc = borrow_objects(r, e);
	filter_options(r, fnew, &opt, &report, &report_json);
	if (rc == 0)
		rc = pipeline(r, &opt, fnew, e);
	if (rc == 0 && !r->o.f.dry_run) {
		phase(&r->o, "checking every computed id against git fast-import's marks");
		rc = verify_run(r->side, fnew, r->map_before, e);
	}
	if (rc == 0 && !r->o.f.dry_run)
		rc = pack_together(r, e);
	free(report);
	free(report_json);
	return rc;
}

/* The value of HEAD in dir (null if unborn), and the branch it names
 * (NULL: detached; caller frees). */
static void head_of(const char *dir, struct oid *id, char **sym)
{
	struct err ignored = ERR_INIT;
	char *hex = NULL;

	*id = oid_null;
	*sym = NULL;
	if (git_line(&hex, dir, &ignored, "rev-parse", "-q", "--verify",
		     "HEAD^{commit}", (char *)NULL) == 0)
		oid_from_hex(id, hex, strlen(hex));
	if (git_line(sym, dir, &ignored, "symbolic-ref", "-q", "HEAD",
		     (char *)NULL) < 0)
		*sym = NULL;
	free(hex);
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

/* The refs the run moves: those fast-import wrote in the side repository
 * that differ from the target's, HEAD when it is detached, and the
 * backups of an in-place run. */
static int plan_refs(struct run *r, const struct state_files *fnew,
		     const struct gitrefs *side, struct err *e)
{
	struct gitrefs have = GITREFS_INIT;
	struct oid head, side_head, none = oid_null;
	const struct gitref *g;
	char *sym = NULL, *name = NULL;
	size_t i;
	int rc = 0;

	for (i = 0; i < side->n; i++) {
		g = gitrefs_find(&r->dst_before, side->v[i].name);
		if (!g || !oid_eq(&g->id, &side->v[i].id))
			journal_add_ref(&r->j, side->v[i].name, g ? &g->id : &none,
					&side->v[i].id, 0);
	}
	head_of(r->dst, &head, &sym);
	head_of(r->side, &side_head, &name);
	free(name);
	if (sym && !oid_is_null(&side_head) && !planned(&r->j, sym)) {
		/* as fast-import writing HEAD would: the branch HEAD names */
		g = gitrefs_find(&r->dst_before, sym);
		journal_add_ref(&r->j, sym, g ? &g->id : &none, &side_head, 0);
	} else if (!sym && !oid_is_null(&head)) {
		struct cmap *m = cmap_new();
		const struct oid *to = NULL;
		if (!oid_is_null(&side_head))
			to = &side_head;
		else if ((rc = cmap_load(m, fnew->map, e)) == 0)
			to = cmap_get(m, &head);
		if (to && !oid_is_null(to) && !oid_eq(to, &head))
			journal_add_ref(&r->j, "HEAD", &head, to, 1);
		cmap_free(m);
	}
	free(sym);
	if (rc == 0 && r->o.in_place)
		rc = gitrefs_list(&have, r->dst, "refs/migrate/original/", e);
	for (i = 0; rc == 0 && r->o.in_place && i < r->dst_before.n; i++) {
		g = &r->dst_before.v[i];
		name = path_join("refs/migrate/original", g->name);
		if (!gitrefs_find(&have, name))
			journal_add_ref(&r->j, name, &none, &g->id, 0);
		free(name);
	}
	gitrefs_free(&have);
	return rc;
}

/* The commit HEAD of dir will name once the journal is finished. */
static struct oid head_after(const struct run *r, const char *dir)
{
	const struct oid *to;
	struct oid head;
	char *sym = NULL;

	head_of(dir, &head, &sym);
	to = planned(&r->j, sym ? sym : "HEAD");
	free(sym);
	return to ? *to : head;
}

/* The check of one work tree before its branch moves from old to new. */
static int check_worktree(const char *dir, const char *what,
			  const struct oid *old, const struct oid *new,
			  int clean_needed, struct err *e)
{
	char h1[OID_HEX + 1], h2[OID_HEX + 1];
	struct buf top = BUF_INIT(4096);
	int rc = 0;

	if (oid_is_null(old) || oid_eq(old, new))
		return 0;
	if (clean_needed && (rc = worktree_clean(dir, e)) == 0)
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

/* The linked work trees of an in-place run (other than dst itself) whose
 * branch the run rewrites: clean ones are reset with the journal, dirty
 * ones refuse the run. */
static int plan_linked(struct run *r, struct err *e)
{
	struct buf out = BUF_INIT(SIZE_MAX / 2), self = BUF_INIT(4096);
	struct err ignored = ERR_INIT;
	char *line, *nl, *wt = NULL;
	struct oid head = oid_null;
	int rc = gitcmd_runl(r->dst, 1, &out, e, "worktree", "list", "--porcelain",
			     (char *)NULL);

	if (!r->bare && gitcmd_runl(r->dst, 1, &self, &ignored, "rev-parse",
				    "--show-toplevel", (char *)NULL) == 0)
		gitcmd_chomp(&self);
	for (line = out.ptr; rc == 0 && (nl = strchr(line, '\n')); line = nl + 1) {
		*nl = '\0';
		if (!strncmp(line, "worktree ", 9)) {
			wt = line + 9;
			head = oid_null;
		} else if (!strncmp(line, "HEAD ", 5)) {
			oid_from_hex(&head, line + 5, strlen(line + 5));
		} else if (!strncmp(line, "branch ", 7) && wt &&
			   (!self.len || strcmp(wt, self.ptr))) {
			const struct oid *to = planned(&r->j, line + 7);
			if (!to || !strcmp(line + 7, "HEAD"))
				continue;
			rc = check_worktree(wt, line + 7, &head, to, 1, e);
			if (rc == 0)
				journal_add_wt(&r->j, wt);
		}
	}
	buf_release(&out);
	buf_release(&self);
	return rc;
}

/*
 * After the check: the journal of the run (refs, work trees, state files),
 * refusals of what it would overwrite, then the journal is written and
 * finished. A failure before the journal leaves the repository as it was.
 */
static int commit_run(struct run *r, const struct state_files *fin,
		      const struct state_files *fnew, struct err *e)
{
	static const char *const four[] = {
		"commit-map", "ref-map", "marks", "import-marks",
	};
	struct gitrefs side = GITREFS_INIT;
	struct oid head, to;
	char *sym = NULL;
	size_t i, locks;
	int rc = gitrefs_list(&side, r->side, "refs/", e), kept;

	r->j.state = xstrdup(r->state);
	r->j.dir = xstrdup(r->dst);
	r->j.gitdir = xstrdup(r->dst_gitdir);
	r->j.commondir = xstrdup(r->commondir);
	r->j.worktree = !r->bare && (r->o.in_place || r->first || r->dst_clean);
	if (r->o.to && !r->first && !r->dst_clean && !r->bare && head_exists(r->dst))
		fprintf(stderr, "migrate run: %s has local changes: its work tree "
			"was left as it was\n", r->dst);
	if (rc == 0)
		rc = plan_refs(r, fnew, &side, e);
	if (rc == 0 && r->j.worktree) {
		head_of(r->dst, &head, &sym);
		to = head_after(r, r->dst);
		rc = check_worktree(r->dst, sym ? sym : "HEAD", &head, &to, 0, e);
		free(sym);
	}
	if (rc == 0 && r->o.in_place)
		rc = plan_linked(r, e);
	for (i = 0; rc == 0 && i < 4; i++)
		journal_add_file(&r->j, four[i]);
	if (rc == 0)
		rc = write_state(r, fnew, &side, e);
	if (rc == 0)
		rc = write_reset(r, fin, fnew, e);
	/* before the work tree is checked out: unlocked files get their
	 * content through git-annex's filter */
	if (rc == 0)
		rc = annex_setup(r, e);
	gitrefs_free(&side);
	if (rc == 0)
		rc = journal_write(&r->j, e);
	if (rc < 0)
		return -1;
	phase(&r->o, "moving the refs and the work tree");
	rc = journal_finish(&r->j, 0, &locks, e);
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

static const char *mb(uint64_t n, char *out, size_t size)
{
	snprintf(out, size, "%.1f MB", (double)n / 1e6);
	return out;
}

/*
 * The honest ending: what changed (commits, refs, objects converted, the
 * history's size before -> after, packed), and where the reports and
 * RESET.md are (dir: the state, or nothing for a preview). would: "" or
 * " would be" for a preview.
 */
static void ending(const struct run *r, const char *dir, const char *would)
{
	const struct rw_stats *s = &r->stats;
	char a[32], b[32], c[32], d[32];

	fprintf(stderr, "migrate run: %llu of %llu commit(s)%s rewritten, "
		"%llu of %llu ref(s)%s changed, %llu object(s)%s converted\n",
		(unsigned long long)s->rewritten, (unsigned long long)s->commits,
		would, (unsigned long long)s->refs_changed,
		(unsigned long long)s->refs, would,
		(unsigned long long)s->converted, would);
	fprintf(stderr, "migrate run: history blobs %s -> %s; packed %s -> %s "
		"(on disk in the source; new blobs estimated)\n",
		mb(s->bytes_before, a, sizeof(a)), mb(s->bytes_after, b, sizeof(b)),
		mb(s->packed_before, c, sizeof(c)), mb(s->packed_after, d, sizeof(d)));
	if (!*dir)
		return;
	fprintf(stderr, "migrate run: reports %s/report.txt and report.json; "
		"how every clone moves over: %s/RESET.md\n", dir, dir);
	if (r->o.to)
		fprintf(stderr, "migrate run: %s is packed (one pack, no "
			"alternate): it needs no gc and does not depend on %s\n",
			r->dst, r->o.repo);
}

static void summary(const struct run *r, const struct state_files *f)
{
	struct err ignored = ERR_INIT;
	struct buf refmap = BUF_INIT(SIZE_MAX / 2);
	size_t after = 0, refs = 0, i;

	if (r->o.f.quiet)
		return;
	map_entries(&after, f->map, &ignored);
	if (file_read(f->refmap, &refmap, &ignored) > 0)
		for (i = 0; i < refmap.len; i++)
			refs += refmap.ptr[i] == '\n';
	fprintf(stderr, "migrate run: %zu new commit(s) mapped (%zu in the map), "
		"%zu ref(s) written to %s; state, maps and RESET.md in %s\n",
		after - (after >= r->map_before ? r->map_before : after), after,
		refs, r->dst, r->state);
	buf_release(&refmap);
	ending(r, r->state, "");
}

/* from (a file) to path, or to standard error when path is "-". */
static int copy_out(const char *from, const char *path, struct err *e)
{
	struct buf text = BUF_INIT(SIZE_MAX / 2);
	int rc = file_read(from, &text, e);

	if (rc == 0)
		rc = err_set(e, ERR_IO, "%s: missing", from);
	else if (rc > 0 && !strcmp(path, "-"))
		rc = fwrite(text.ptr, 1, text.len, stderr) == text.len ? 0 :
		     err_errno(e, ERR_IO, "cannot write the report");
	else if (rc > 0)
		rc = file_write(path, &text, e);
	buf_release(&text);
	return rc;
}

/*
 * The maps and reports asked for on the command line: copies of what the
 * run (or the preview) left in dir (the state, or the preview's temp dir),
 * the commit map in --commit-map-format's layout. The same bytes for a
 * preview and for the real run.
 */
static int deliver(const struct run *r, const char *dir,
		   const struct state_files *f, struct err *e)
{
	const struct rw_options *o = &r->o.f;
	enum cmap_format fmt = CMAP_FILTER_REPO;
	struct buf text = BUF_INIT(SIZE_MAX / 2);
	struct cmap *m;
	char *p;
	int rc = 0;

	if (o->commit_map) {
		if (o->commit_map_format)
			cmap_format_parse(o->commit_map_format, &fmt);
		m = cmap_new();
		rc = cmap_load(m, f->map, e);
		if (rc == 0 && cmap_format(m, fmt, &text) < 0)
			rc = err_set(e, ERR_IO, "%s: too large", o->commit_map);
		if (rc == 0)
			rc = file_write(o->commit_map, &text, e);
		cmap_free(m);
	}
	if (rc == 0 && o->ref_map)
		rc = copy_out(f->refmap, o->ref_map, e);
	if (rc == 0 && o->report) {
		p = path_join(dir, "report.txt");
		rc = copy_out(p, o->report, e);
		free(p);
	}
	if (rc == 0 && o->report_json) {
		p = path_join(dir, "report.json");
		rc = copy_out(p, o->report_json, e);
		free(p);
	}
	buf_release(&text);
	return rc;
}

/* --dry-run: everything decided, nothing written but what was asked. */
static int preview(struct run *r, struct err *e)
{
	struct err ignored = ERR_INIT;
	struct state_files fin, fnew;
	size_t after = 0;
	int rc;

	state_files_init(&fin, r->state, "");
	state_files_init(&fnew, r->dry_dir, "");
	rc = prepare(r, &fin, &fnew, e);
	if (rc == 0)
		rc = convert(r, &fnew, e);
	if (rc == 0)
		rc = deliver(r, r->dry_dir, &fnew, e);
	if (rc == 0 && !r->o.f.quiet) {
		map_entries(&after, fnew.map, &ignored);
		fprintf(stderr, "migrate run: dry run: %zu commit(s) would be "
			"mapped; nothing was written to %s%s%s\n",
			after - (after >= r->map_before ? r->map_before : after),
			r->o.repo, r->o.to ? " or " : "", r->o.to ? r->o.to : "");
		ending(r, "", " would be");
	}
	state_files_free(&fin);
	state_files_free(&fnew);
	return rc;
}

/*
 * git-annex, a work tree reset by the run: git-annex's smudge filter could
 * not record in the index (git held its lock) that the files' content is
 * there, so `git status` would show them modified and the next run would
 * refuse the work tree; `git annex restage` records it. The refs have
 * moved by now: a failure is a warning.
 */
static void annex_restage(const struct run *r)
{
	struct err e = ERR_INIT;

	if (!r->annex || r->bare || !r->j.worktree)
		return;
	if (gitcmd_runl(r->dst, 1, NULL, &e, "annex", "restage", "--quiet",
			(char *)NULL) < 0)
		fprintf(stderr, "migrate run: warning: %s; `git status` may "
			"show git-annex files as modified until `git annex "
			"restage` runs\n", e.msg);
}

static int run_all(struct run *r, struct err *e)
{
	struct state_files fin, fnew;
	struct err ignored = ERR_INIT;
	int rc;

	if (r->o.f.dry_run)
		return preview(r, e);
	state_files_init(&fin, r->state, "");
	state_files_init(&fnew, r->state, ".new");
	rc = prepare(r, &fin, &fnew, e);
	if (rc == 0)
		rc = convert(r, &fnew, e);
	if (rc == 0)
		rc = commit_run(r, &fin, &fnew, e);
	if (rc < 0 && !journal_pending(r->state)) {
		/* no ref moved: the target borrows nothing any more (one
		 * journaled needs the source until the next run finishes it) */
		unborrow(r, &ignored);
	} else if (rc == 0) {
		packs_kept(r);	/* the refs name their objects now */
		annex_restage(r);
		rc = dissociate(r, e);
		if (rc == 0)
			rc = deliver(r, r->state, &fin, e);
		if (rc == 0)
			summary(r, &fin);
	}
	/* the side repository, and a failed run's files (none with a journal) */
	if (!journal_pending(r->state))
		clean_all(r);
	state_files_free(&fin);
	state_files_free(&fnew);
	return rc;
}

static int verify_only(const struct run *r, struct err *e)
{
	struct state_files f;
	struct buf text = BUF_INIT(4096);
	char *path = path_join(r->state, "last-run");
	uint64_t before = 0;
	size_t k = strlen("map-entries-before ");
	int rc = file_read(path, &text, e);

	gitcmd_chomp(&text);
	if (rc == 0)
		rc = err_set(e, ERR_USAGE, "--verify-only: %s: no earlier run",
			     path);
	else if (rc > 0 && (text.len <= k || strncmp(text.ptr, "map-entries-before ", k) ||
			    parse_u64(text.ptr + k, text.len - k, SIZE_MAX, &before) < 0))
		rc = err_set(e, ERR_IO, "%s: malformed", path);
	state_files_init(&f, r->state, "");
	if (rc > 0)
		rc = verify_run(r->dst, &f, (size_t)before, e);
	if (rc == 0 && !r->o.f.quiet)
		fprintf(stderr, "migrate run: verified: the marks, commit map and "
			"ref map in %s agree with %s\n", r->state, r->dst);
	state_files_free(&f);
	buf_release(&text);
	free(path);
	return rc < 0 ? -1 : 0;
}

/*
 * A --to run that failed before it moved any ref (no journal) leaves the
 * target as it found it: gone again, or an empty directory again, so
 * that a retry, from this checkout or another, starts afresh.
 */
static void take_back_target(struct run *r)
{
	if (!r->made_to || (r->state && journal_pending(r->state)))
		return;
	if (remove_tree(r->o.to) < 0)
		return;	/* what stayed says what happened; nothing to undo */
	if (r->made_to > 0 && mkdir(r->o.to, r->to_mode) == 0)
		(void)chmod(r->o.to, r->to_mode);
}

int rw_cmd_run(int argc, char **argv, struct err *e)
{
	struct run r;
	int rc;

	memset(&r, 0, sizeof(r));
	buf_init(&r.alt_before, SIZE_MAX / 2);
	rc = parse_run_options(&r.o, argc, argv, e);
	if (rc > 0)
		return 0;	/* --help */
	if (rc == 0)
		rc = setup(&r, e);
	if (rc == 0 && !r.o.rollback)
		rc = r.o.verify_only ? verify_only(&r, e) : run_all(&r, e);
	if (rc < 0)
		take_back_target(&r);
	run_release(&r);
	return rc;
}
