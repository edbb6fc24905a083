/*
 * pipeline.c - git fast-export | the filter | git fast-import: their arguments, environment and results.
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

/* 1 when the revisions leave commits out (--exclude-ref, ^REV, A..B,
 * --not): those stay the parents they are, unconverted, as git lfs
 * migrate leaves the commits of its excluded refs; fast-export would
 * otherwise cut them off (its children made roots). */
static int excludes(const struct run_opts *o)
{
	int k;

	for (k = 0; k < o->nrefs; k++)
		if (o->refs[k].exclude)
			return 1;
	for (k = 0; k < o->nrevs; k++)
		if (o->revs[k][0] == '^' || strstr(o->revs[k], "..") ||
		    !strcmp(o->revs[k], "--not"))
			return 1;
	return 0;
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
	if (!r->first || r->o.in_place || excludes(&r->o))
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

static int pipeline(struct run *r, const struct rw_options *opt,
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
		if (frc == 0) {
			struct err ignored = ERR_INIT;

			run_phase(&r->o, "git fast-import is writing its pack");
			/* not started: the writer's packs stay as they are */
			(void)run_join_made_start(r, &ignored);
			/* the target's reads for the plan of the refs, beside
			 * fast-import's end (which writes only the side's) */
			run_plan_start(r);
		}
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
	/* a preview's reports go to its temp dir, a run's to the state as
	 * <name>.new, journaled with the other state files: a rolled-back
	 * run takes its reports back with it */
	*report = path_join(r->dry_dir ? r->dry_dir : r->state,
			    r->dry_dir ? "report.txt" : "report.txt.new");
	*report_json = path_join(r->dry_dir ? r->dry_dir : r->state,
				 r->dry_dir ? "report.json" : "report.json.new");
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
	 * threads, and the blobs the rules make (replace-text, split) as
	 * deltas by a thread of its own, unless the source's
	 * core.bigFileThreshold asks for git's own ways (then fast-import
	 * stores them, as configured) */
	if (r->dst_objects && !r->own_threshold && !r->o.f.dry_run) {
		/* the level fast-import would deflate them at (side_keys) */
		const char *lv = r->side_config[1] ? r->side_config[1] :
				 r->side_config[2];
		int level = lv ? atoi(lv) : -1;

		if (level < -1 || level > 9)
			level = -1;
		opt->made_dir = r->dst_objects;
		opt->made_level = level;
		opt->made_list = r->made_packs = path_join(r->state, RUN_MADE_PACKS);
		if (r->unlfs) {
			opt->objects_dir = r->dst_objects;
			opt->objects_level = level;
			opt->objects_list = r->packs_list =
				path_join(r->state, RUN_UNLFS_PACKS);
		}
	}
	if (!r->o.f.dry_run)
		opt->new_blobs = r->new_blobs = path_join(r->state, "new-blobs");
}

int run_convert(struct run *r, const struct state_files *fnew,
		struct err *e)
{
	struct rw_options opt;
	char *report, *report_json;
	int rc = 0;

	if (!r->o.f.dry_run)
		rc = run_side_create(r, e);
	if (rc == 0 && r->o.to && !r->o.f.dry_run)
		rc = run_borrow_objects(r, e);
	filter_options(r, fnew, &opt, &report, &report_json);
	if (rc == 0 && !r->o.f.dry_run)
		rc = run_packs_before(r, e);
	if (rc == 0)
		rc = pipeline(r, &opt, fnew, e);
	if (rc == 0 && !r->o.f.dry_run) {
		run_phase(&r->o, "checking every computed id against git fast-import's marks");
		/* the side's objects are the target's (run_side_create) */
		rc = run_verify_run(r->side, r->dst_objects, fnew, r->map_before,
				    &r->side_read, e);
	}
	if (rc == 0) {
		rc = run_join_made(r, 1, e);
	} else {
		struct err ignored = ERR_INIT;

		(void)run_join_made(r, 0, &ignored);
	}
	if (rc == 0 && !r->o.f.dry_run)
		rc = run_pack_together(r, e);
	if (rc == 0 && !r->o.f.dry_run)
		rc = run_pack_new_blobs(r, e);
	free(report);
	free(report_json);
	return rc;
}
