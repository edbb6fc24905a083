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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gitcmd.h"
#include "maps.h"
#include "oid.h"
#include "rewrite.h"

static const char run_usage[] =
"usage: migrate run [--rules FILE] [--repo DIR] (--to NEWDIR | --in-place)\n"
"                   [--commit-map-format F] [--verify-split]\n"
"                   [--no-rewrite-message-ids] [-q | --progress]\n"
"                   [-- REV-ARGS...]\n"
"   or: migrate run --verify-only [--repo DIR] [--to NEWDIR | --in-place]\n"
"\n"
"Runs git fast-export | migrate | git fast-import. --to builds NEWDIR (a\n"
"new repository; the source is never written); --in-place rewrites REPO's\n"
"refs (a clean work tree is required; the refs before the first run are\n"
"kept under refs/migrate/original/). State, maps, reports and RESET.md go\n"
"to <git-dir>/migrate/ of the repository written (NEWDIR's or REPO's). A\n"
"second run continues: only new commits are exported. --verify-only checks\n"
"the last run's maps and marks against the repository again.\n";

struct run_opts {
	const char *rules, *repo, *to, *map_format;
	int in_place, quiet, progress, verify_only, verify_split, msg_ids;
	char **revs;
	int nrevs;
};

struct run {
	struct run_opts o;
	char *src_gitdir;	/* absolute */
	const char *dst;	/* what git -C gets for the target */
	char *dst_gitdir;
	char *state, *store;
	int first;		/* no earlier run in the state */
	int bare;
	int dst_clean;		/* --to: the work tree may be updated */
	struct gitrefs src_before, dst_before;
	struct gitargv revs;
	uint64_t total;
	size_t map_before;
};

/* ---- small file helpers ---- */

static char *path_of(const char *dir, const char *name)
{
	struct buf b = BUF_INIT(BUF_MAX_DEFAULT);

	buf_printf(&b, "%s/%s", dir, name);
	return buf_detach(&b, NULL);
}

/* Reads a whole file into out. 1 read, 0 missing, -1 error (e set). */
static int read_file(const char *path, struct buf *out, struct err *e)
{
	char chunk[65536];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0)
		return err_errno(e, ERR_IO, "%s: cannot open", path);
	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || buf_add(out, chunk, (size_t)n) < 0) {
			close(fd);
			return err_errno(e, ERR_IO, "%s: cannot read", path);
		}
	}
	close(fd);
	return 1;
}

static int write_file(const char *path, const struct buf *data, struct err *e)
{
	char *tmp = NULL;
	int r = rw_atomic_prepare(path, data, &tmp, e);

	if (r == 0)
		r = rw_atomic_commit(tmp, path, e);
	free(tmp);
	return r;
}

static int file_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
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

enum {
	RO_RULES = 256, RO_REPO, RO_TO, RO_IN_PLACE, RO_MAP_FORMAT, RO_PROGRESS,
	RO_VERIFY_ONLY, RO_VERIFY_SPLIT, RO_NO_MSG_IDS,
};

static const struct option run_options[] = {
	{ "rules", required_argument, NULL, RO_RULES },
	{ "repo", required_argument, NULL, RO_REPO },
	{ "to", required_argument, NULL, RO_TO },
	{ "in-place", no_argument, NULL, RO_IN_PLACE },
	{ "commit-map-format", required_argument, NULL, RO_MAP_FORMAT },
	{ "progress", no_argument, NULL, RO_PROGRESS },
	{ "verify-only", no_argument, NULL, RO_VERIFY_ONLY },
	{ "verify-split", no_argument, NULL, RO_VERIFY_SPLIT },
	{ "no-rewrite-message-ids", no_argument, NULL, RO_NO_MSG_IDS },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int run_option(struct run_opts *o, int c, const char *arg,
		      struct err *e)
{
	switch (c) {
	case RO_RULES: o->rules = arg; break;
	case RO_REPO: o->repo = arg; break;
	case RO_TO: o->to = arg; break;
	case RO_IN_PLACE: o->in_place = 1; break;
	case RO_MAP_FORMAT: o->map_format = arg; break;
	case RO_PROGRESS: o->progress = 1; break;
	case RO_VERIFY_ONLY: o->verify_only = 1; break;
	case RO_VERIFY_SPLIT: o->verify_split = 1; break;
	case RO_NO_MSG_IDS: o->msg_ids = 0; break;
	case 'q': o->quiet = 1; o->progress = -1; break;
	case 'h':
		fputs(run_usage, stdout);
		exit(0);
	default:
		return err_set(e, ERR_USAGE, "run: unknown option or missing "
			       "value; see migrate run --help");
	}
	return 0;
}

static int parse_run_options(struct run_opts *o, int argc, char **argv,
			     struct err *e)
{
	enum cmap_format f;
	int c;

	o->repo = ".";
	o->msg_ids = -1; /* as the filter: with rules only */
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+qh", run_options, NULL)) != -1)
		if (c == '?')
			return rw_option_error(e, run_options, argv, optind, optopt);
		else if (run_option(o, c, optarg, e) < 0)
			return -1;
	if (optind < argc && strcmp(argv[optind - 1], "--") != 0)
		return err_set(e, ERR_USAGE, "run: unexpected argument '%s' "
			       "(revision arguments go after --)", argv[optind]);
	o->revs = argv + optind;
	o->nrevs = argc - optind;
	if (o->to && o->in_place)
		return err_set(e, ERR_USAGE, "run: --to and --in-place exclude "
			       "each other");
	if (!o->to && !o->in_place)
		return err_set(e, ERR_USAGE, "run: say where the result goes: "
			       "--to NEWDIR or --in-place");
	if (o->map_format && cmap_format_parse(o->map_format, &f) < 0)
		return err_set(e, ERR_USAGE, "--commit-map-format: expected "
			       "filter-repo, lfs or bfg, got '%s'", o->map_format);
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
		srcfile = path_of(r->o.to, ".git/migrate/source");
		rc = read_file(srcfile, &src, e);
		free(srcfile);
		gitcmd_chomp(&src);
		if (rc == 0)
			rc = err_set(e, ERR_USAGE, "run: %s exists, is not empty and "
				     "holds no earlier migrate run", r->o.to);
		else if (rc > 0 && strcmp(src.ptr, r->src_gitdir) != 0)
			rc = err_set(e, ERR_USAGE, "run: %s was migrated from %s, "
				     "not from %s", r->o.to, src.ptr, r->src_gitdir);
		buf_release(&src);
		if (rc < 0)
			return -1;
	} else if (!r->o.verify_only) {
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
	r->store = path_of(r->dst_gitdir, "lfs/objects");
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
	r->store = path_of(common, "lfs/objects");
	free(bare);
	free(common);
	return 0;
}

static int setup(struct run *r, struct err *e)
{
	struct buf src = BUF_INIT(BUF_MAX_DEFAULT);
	char *tips;
	int rc = 0;

	if (gitcmd_git_dir(r->o.repo, &r->src_gitdir, e) < 0)
		return -1;
	if ((r->o.to ? setup_to(r, e) : setup_in_place(r, e)) < 0)
		return -1;
	r->state = path_of(r->dst_gitdir, "migrate");
	tips = path_of(r->state, "tips");
	r->first = !file_exists(tips);
	free(tips);
	if (r->o.verify_only)
		return 0;
	if (mkdir(r->state, 0777) < 0 && errno != EEXIST)
		return err_errno(e, ERR_IO, "%s: cannot create", r->state);
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
	free(r->src_gitdir);
	free(r->dst_gitdir);
	free(r->state);
	free(r->store);
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
	char *path = path_of(state, "tips"), *line, *nl;
	size_t k = 0, alloc = 16;
	int r = read_file(path, &text, e);

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
static int build_revs(struct run *r, struct err *e)
{
	char hex[OID_HEX + 1];
	struct oid *tips;
	size_t n, i;
	int k;

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

/* ---- refs: backups, and the way back after a failure ---- */

static int update_refs(const char *dir, const struct buf *cmds, struct err *e)
{
	struct gitargv a = GITARGV_INIT;
	int r;

	if (cmds->len == 0)
		return 0;
	gitargv_push(&a, "update-ref");
	gitargv_push(&a, "--stdin");
	r = gitcmd_ok(dir, &a, cmds, NULL, e);
	gitargv_clear(&a);
	return r;
}

/* In place: every ref that has no backup yet gets one under
 * refs/migrate/original/<ref>. Backups are never overwritten, so they keep
 * the history as it was before the first run that saw the ref. */
static int backup_refs(const struct run *r, struct err *e)
{
	struct gitrefs have = GITREFS_INIT;
	struct buf cmds = BUF_INIT(SIZE_MAX / 2), name = BUF_INIT(4096);
	char hex[OID_HEX + 1];
	size_t i;
	int rc = gitrefs_list(&have, r->dst, "refs/migrate/original/", e);

	for (i = 0; rc == 0 && i < r->dst_before.n; i++) {
		const struct gitref *g = &r->dst_before.v[i];
		buf_reset(&name);
		buf_printf(&name, "refs/migrate/original/%s", g->name);
		if (!gitrefs_find(&have, name.ptr))
			buf_printf(&cmds, "create %s %s\n", name.ptr,
				   oid_hex(&g->id, hex));
	}
	if (rc == 0)
		rc = update_refs(r->dst, &cmds, e);
	gitrefs_free(&have);
	buf_release(&cmds);
	buf_release(&name);
	return rc;
}

/* Puts the refs of dir (but refs/migrate/) back to before: refs that
 * moved go back, refs that appeared go away. */
static int restore_refs(const char *dir, const struct gitrefs *before,
			struct err *e)
{
	struct gitrefs now = GITREFS_INIT;
	struct buf cmds = BUF_INIT(SIZE_MAX / 2);
	char hex[OID_HEX + 1];
	const struct gitref *g;
	size_t i;
	int rc = gitrefs_list(&now, dir, NULL, e);

	for (i = 0; rc == 0 && i < before->n; i++) {
		g = gitrefs_find(&now, before->v[i].name);
		if (!g || !oid_eq(&g->id, &before->v[i].id))
			buf_printf(&cmds, "update %s %s\n", before->v[i].name,
				   oid_hex(&before->v[i].id, hex));
	}
	for (i = 0; rc == 0 && i < now.n; i++)
		if (!gitrefs_find(before, now.v[i].name))
			buf_printf(&cmds, "delete %s\n", now.v[i].name);
	if (rc == 0)
		rc = update_refs(dir, &cmds, e);
	gitrefs_free(&now);
	buf_release(&cmds);
	return rc;
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
		"fast-export", "--show-original-ids", "--signed-tags=verbatim",
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
	for (i = 0; i < r->revs.n; i++)
		gitargv_push(a, r->revs.v[i]);
}

static void import_args(const struct run *r, const struct state_files *f,
			struct gitargv *a)
{
	gitargv_push(a, "fast-import");
	gitargv_push(a, "--quiet");
	gitargv_pushf(a, "--export-marks=%s", f->imarks);
	gitargv_push(a, "--date-format=raw-permissive");
	if (r->o.in_place)
		gitargv_push(a, "--force");
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
	if (pipe2(b, O_CLOEXEC) < 0) {
		close(a[0]);
		close(a[1]);
		return err_errno(e, ERR_IO, "pipe");
	}
	export_args(r, &xa);
	import_args(r, f, &ia);
	if (gitcmd_spawn(&xp, r->o.repo, &xa, -1, a[1], e) < 0) {
		close(a[0]); close(a[1]); close(b[0]); close(b[1]);
		gitargv_clear(&xa);
		gitargv_clear(&ia);
		return -1;
	}
	close(a[1]);
	if (gitcmd_spawn(&ip, r->dst, &ia, b[0], -1, &fe) == 0) {
		close(b[0]);
		frc = rw_filter(opt, a[0], b[1], &fe);
		close(b[1]);
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

static void filter_options(const struct run *r, const struct state_files *f,
			   struct rw_options *opt, char **report,
			   char **report_json)
{
	memset(opt, 0, sizeof(*opt));
	*report = path_of(r->state, "report.txt");
	*report_json = path_of(r->state, "report.json");
	opt->rules = r->o.rules;
	opt->store = r->store;
	opt->commit_map = f->map;
	opt->ref_map = f->refmap;
	opt->export_marks = f->marks;
	opt->source_repo = r->o.repo;
	opt->target_repo = r->dst;
	opt->input_name = "git fast-export";
	opt->quiet = r->o.quiet;
	opt->verify_split = r->o.verify_split;
	opt->report = *report;
	opt->report_json = *report_json;
	opt->progress = r->o.progress;
	opt->progress_total = r->total;
	opt->rewrite_message_ids = r->o.msg_ids;
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
	int r = read_file(path, &text, e);

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

static int refmap_compare(const char *dir, const char *path, struct err *e)
{
	struct gitrefs refs = GITREFS_INIT;
	struct buf text = BUF_INIT(SIZE_MAX / 2);
	char *line, *nl;
	int r = read_file(path, &text, e);

	if (r == 0)
		r = err_set(e, ERR_IO, "verification failed: %s is missing", path);
	if (r > 0)
		r = gitrefs_list(&refs, dir, NULL, e) < 0 ? -1 : 1;
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

static int state_commit(const struct state_files *from,
			const struct state_files *to, struct err *e)
{
	const char *src[] = { from->map, from->refmap, from->marks, from->imarks };
	const char *dst[] = { to->map, to->refmap, to->marks, to->imarks };
	size_t i;

	for (i = 0; i < 4; i++)
		if (rename(src[i], dst[i]) < 0)
			return err_errno(e, ERR_IO, "%s: cannot rename to %s",
					 src[i], dst[i]);
	return 0;
}

static void state_drop(const struct state_files *f)
{
	unlink(f->map);
	unlink(f->refmap);
	unlink(f->marks);
	unlink(f->imarks);
}

/* The map in the layout --commit-map-format asked for, beside the
 * filter-repo one the state keeps (re-runs load that one). */
static int write_map_format(const struct run *r, const char *map_path,
			    struct err *e)
{
	enum cmap_format fmt;
	struct cmap *m;
	struct buf out = BUF_INIT(SIZE_MAX / 2);
	char *path;
	int rc;

	if (!r->o.map_format || cmap_format_parse(r->o.map_format, &fmt) < 0 ||
	    fmt == CMAP_FILTER_REPO)
		return 0;
	m = cmap_new();
	path = path_of(r->state, fmt == CMAP_LFS ? "commit-map.lfs"
						  : "commit-map.bfg");
	rc = cmap_load(m, map_path, e);
	if (rc == 0)
		rc = cmap_format(m, fmt, &out) < 0
			? err_set(e, ERR_IO, "%s: too large", path) : 0;
	if (rc == 0)
		rc = write_file(path, &out, e);
	free(path);
	buf_release(&out);
	cmap_free(m);
	return rc;
}

/* tips: the source commits processed so far ("<id> <ref>"), which the
 * next run excludes: the refs as exported (--to) or as rewritten (in
 * place, where the next run's source is the new history), and the tips
 * of earlier runs. */
static int write_tips(const struct run *r, struct err *e)
{
	struct gitrefs after = GITREFS_INIT;
	const struct gitrefs *refs = &r->src_before;
	struct buf out = BUF_INIT(SIZE_MAX / 2);
	char hex[OID_HEX + 1], *path = path_of(r->state, "tips");
	struct oid *old;
	size_t n, i;
	int rc = tips_load(&old, &n, r->state, e);

	if (rc == 0 && r->o.in_place) {
		rc = gitrefs_list(&after, r->dst, NULL, e);
		refs = &after;
	}
	for (i = 0; rc == 0 && i < refs->n; i++)
		if (refs->v[i].has_commit)
			buf_printf(&out, "%s %s\n", oid_hex(&refs->v[i].commit, hex),
				   refs->v[i].name);
	for (i = 0; rc == 0 && i < n; i++)
		buf_printf(&out, "%s (an earlier run)\n", oid_hex(&old[i], hex));
	if (rc == 0)
		rc = write_file(path, &out, e);
	free(old);
	free(path);
	gitrefs_free(&after);
	buf_release(&out);
	return rc;
}

static int write_small(const char *state, const char *name, const char *text,
		       struct err *e)
{
	struct buf b = BUF_INIT(BUF_MAX_DEFAULT);
	char *path = path_of(state, name);
	int rc;

	buf_adds(&b, text);
	rc = write_file(path, &b, e);
	free(path);
	buf_release(&b);
	return rc;
}

static int write_state(const struct run *r, const struct state_files *f,
		       struct err *e)
{
	char line[64];

	snprintf(line, sizeof(line), "map-entries-before %zu\n", r->map_before);
	if (write_map_format(r, f->map, e) < 0 || write_tips(r, e) < 0 ||
	    write_small(r->state, "last-run", line, e) < 0)
		return -1;
	return 0;
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
	int rc = read_file(fin->map, &text, e);

	if (rc > 0)
		rc = write_file(fnew->map, &text, e);
	else if (rc == 0)
		unlink(fnew->map);
	buf_release(&text);
	if (rc < 0)
		return -1;
	return map_entries(&r->map_before, fnew->map, e);
}

/* 1 if `git status` shows no change to tracked files, 0 if it does. */
static int worktree_clean(const char *dir, struct err *e)
{
	struct gitargv a = GITARGV_INIT;
	struct buf out = BUF_INIT(SIZE_MAX / 2);
	int r;

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

/* In place, a detached HEAD moves to the new id of its commit. */
static int detached_target(char **out, const struct run *r,
			   const struct state_files *f, struct err *e)
{
	struct cmap *m = cmap_new();
	char *head = NULL, hex[OID_HEX + 1];
	const struct oid *mapped;
	struct oid id;
	int rc = git_line(&head, r->dst, e, "rev-parse", "HEAD", (char *)NULL);

	*out = NULL;
	if (rc == 0)
		rc = cmap_load(m, f->map, e);
	if (rc == 0 && oid_from_hex(&id, head, strlen(head)) == 0 &&
	    (mapped = cmap_get(m, &id)))
		*out = xstrdup(oid_hex(mapped, hex));
	free(head);
	cmap_free(m);
	return rc;
}

/* The work tree follows the new HEAD (git-lfs, when installed, smudges). */
static int update_worktree(const struct run *r, const struct state_files *f,
			   struct err *e)
{
	struct gitargv a = GITARGV_INIT;
	char *target = NULL, *sym = NULL;
	struct err ignored = ERR_INIT;
	int rc = 0;

	if (r->bare || !head_exists(r->dst))
		return 0;
	if (r->o.to && !r->first && !r->dst_clean) {
		fprintf(stderr, "migrate run: %s has local changes: its work tree "
			"was left as it was\n", r->dst);
		return 0;
	}
	if (r->o.in_place && git_line(&sym, r->dst, &ignored, "symbolic-ref",
				      "-q", "HEAD", (char *)NULL) < 0)
		rc = detached_target(&target, r, f, e);
	gitargv_push(&a, "reset");
	gitargv_push(&a, "-q");
	gitargv_push(&a, "--hard");
	if (target)
		gitargv_push(&a, target);
	if (rc == 0)
		rc = gitcmd_ok(r->dst, &a, NULL, NULL, e);
	gitargv_clear(&a);
	free(target);
	free(sym);
	return rc;
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
	buf_adds(out, "\n## A clone with unpushed branches\n\n"
		 "Fetch the new history, then move each local branch onto it: "
		 "a branch based on\nold commits is rebased onto their new "
		 "counterparts; one that does not rebase\ncleanly is left as it "
		 "was, and named.\n\n    git fetch --all --prune\n"
		 "    migrate remap --commit-map /path/to/commit-map\n"
		 "    git fetch --tags --force\n");
	if (lfs)
		buf_adds(out, "    git lfs pull\n");
	buf_adds(out, "\nA clone made from the result of an earlier run only "
		 "needs `git pull`:\na re-run keeps the ids of everything "
		 "migrated before.\n");
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
	} else {
		buf_adds(out, "\n## Before publishing\n\n"
			 "git fast-import writes its pack without looking for "
			 "the best deltas; pack the\nnew repository once:\n\n"
			 "    git gc --prune=now --aggressive\n");
	}
}

static int write_reset(const struct run *r, const struct state_files *f,
		       struct err *e)
{
	struct buf refmap = BUF_INIT(SIZE_MAX / 2), out = BUF_INIT(SIZE_MAX / 2);
	char *path = path_of(r->state, "RESET.md");
	int rc = read_file(f->refmap, &refmap, e);

	if (rc >= 0) {
		reset_text(&out, r, f, &refmap);
		rc = write_file(path, &out, e);
	}
	free(path);
	buf_release(&refmap);
	buf_release(&out);
	return rc;
}

/* ---- the command ---- */

static int prepare(struct run *r, const struct state_files *fin,
		   const struct state_files *fnew, struct err *e)
{
	int clean;

	if (r->o.in_place && !r->bare) {
		clean = worktree_clean(r->dst, e);
		if (clean < 0)
			return -1;
		if (!clean)
			return err_set(e, ERR_USAGE, "run: %s has uncommitted "
				       "changes; commit or stash them first", r->dst);
	}
	if (gitrefs_list(&r->src_before, r->o.repo, NULL, e) < 0 ||
	    gitrefs_list(&r->dst_before, r->dst, NULL, e) < 0)
		return -1;
	if (r->o.in_place && backup_refs(r, e) < 0)
		return -1;
	if (r->o.to && r->first && copy_head(r, e) < 0)
		return -1;
	if (r->o.to && !r->first)
		r->dst_clean = head_exists(r->dst) && worktree_clean(r->dst, e) == 1;
	if (build_revs(r, e) < 0)
		return -1;
	r->total = count_commits(r);
	return map_prepare(r, fin, fnew, e);
}

/* The pipeline and its check; on failure the target's refs go back to
 * what they were (the source's too, in place: it is the target). */
static int convert(struct run *r, const struct state_files *fnew,
		   struct err *e)
{
	struct rw_options opt;
	struct err e2 = ERR_INIT;
	char *report, *report_json;
	int rc;

	filter_options(r, fnew, &opt, &report, &report_json);
	rc = pipeline(r, &opt, fnew, e);
	if (rc == 0)
		rc = verify_run(r->dst, fnew, r->map_before, e);
	if (rc < 0 && restore_refs(r->dst, &r->dst_before, &e2) < 0) {
		size_t n = strlen(e->msg);
		snprintf(e->msg + n, sizeof(e->msg) - n, "; restoring the refs of "
			 "%s failed too: %s", r->dst, e2.msg);
	}
	free(report);
	free(report_json);
	return rc;
}

static void summary(const struct run *r, const struct state_files *f)
{
	struct err ignored = ERR_INIT;
	struct buf refmap = BUF_INIT(SIZE_MAX / 2);
	size_t after = 0, refs = 0, i;

	if (r->o.quiet)
		return;
	map_entries(&after, f->map, &ignored);
	if (read_file(f->refmap, &refmap, &ignored) > 0)
		for (i = 0; i < refmap.len; i++)
			refs += refmap.ptr[i] == '\n';
	fprintf(stderr, "migrate run: %zu new commit(s) mapped (%zu in the map), "
		"%zu ref(s) written to %s; state, maps and RESET.md in %s\n",
		after - (after >= r->map_before ? r->map_before : after), after,
		refs, r->dst, r->state);
	buf_release(&refmap);
}

static int run_all(struct run *r, struct err *e)
{
	struct state_files fin, fnew;
	int rc;

	state_files_init(&fin, r->state, "");
	state_files_init(&fnew, r->state, ".new");
	rc = prepare(r, &fin, &fnew, e);
	if (rc == 0)
		rc = convert(r, &fnew, e);
	if (rc == 0)
		rc = state_commit(&fnew, &fin, e);
	if (rc == 0)
		rc = write_state(r, &fin, e);
	if (rc == 0)
		rc = update_worktree(r, &fin, e);
	if (rc == 0)
		rc = write_reset(r, &fin, e);
	if (rc == 0)
		summary(r, &fin);
	else
		state_drop(&fnew);
	state_files_free(&fin);
	state_files_free(&fnew);
	return rc;
}

static int verify_only(const struct run *r, struct err *e)
{
	struct state_files f;
	struct buf text = BUF_INIT(4096);
	char *path = path_of(r->state, "last-run");
	uint64_t before = 0;
	size_t k = strlen("map-entries-before ");
	int rc = read_file(path, &text, e);

	gitcmd_chomp(&text);
	if (rc == 0)
		rc = err_set(e, ERR_USAGE, "run --verify-only: %s: no earlier run",
			     path);
	else if (rc > 0 && (text.len <= k || strncmp(text.ptr, "map-entries-before ", k) ||
			    parse_u64(text.ptr + k, text.len - k, SIZE_MAX, &before) < 0))
		rc = err_set(e, ERR_IO, "%s: malformed", path);
	state_files_init(&f, r->state, "");
	if (rc > 0)
		rc = verify_run(r->dst, &f, (size_t)before, e);
	if (rc == 0 && !r->o.quiet)
		fprintf(stderr, "migrate run: verified: the marks, commit map and "
			"ref map in %s agree with %s\n", r->state, r->dst);
	state_files_free(&f);
	buf_release(&text);
	free(path);
	return rc < 0 ? -1 : 0;
}

int rw_cmd_run(int argc, char **argv, struct err *e)
{
	struct run r;
	int rc;

	memset(&r, 0, sizeof(r));
	rc = parse_run_options(&r.o, argc, argv, e);
	if (rc == 0)
		rc = setup(&r, e);
	if (rc == 0)
		rc = r.o.verify_only ? verify_only(&r, e) : run_all(&r, e);
	run_release(&r);
	return rc;
}
