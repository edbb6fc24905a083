/*
 * cmd_run.c - `migrate run`: git fast-export | the filter | git fast-import in
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
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../report/report.h"
#include "../run/run.h"
#include "cli.h"

/* --help, after the synopsis (made from the tables) */
static const char run_about[] =
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
"all refs move in one transaction (or two halves prepared together).\n"
"A run that was killed is finished by the next run; --rollback undoes\n"
"it instead. A second run continues: only\n"
"new commits are exported. --verify-only checks the last run's maps and\n"
"marks against the repository again. --restart (in place) converts the\n"
"history under refs/migrate/original/ again, with the rules given, and\n"
"moves the refs to that conversion. --dry-run decides everything and\n"
"writes nothing anywhere (no target, no state, no store): its reports\n"
"and maps are those the real run would give. Blobs pass by id (fast-export\n"
"--no-data); --to borrows the source's objects during the import and\n"
"ends with one `git repack -a -d`: NEWDIR depends on nothing.\n";

/* --include-ref REF, --exclude-ref REF, as often as needed, in order */
static int add_ref(struct run_opts *o, const char *arg, int exclude,
		   struct err *e)
{
	if (o->nrefs == RUN_REFS_MAX)
		return err_set(e, ERR_USAGE, "--%s-ref: at most %d refs; give "
			       "more as REV-ARGS after --", exclude ?
			       "exclude" : "include", RUN_REFS_MAX);
	if (!*arg || *arg == '-' || *arg == '^')
		return err_set(e, ERR_USAGE, "--%s-ref: expected a ref, got "
			       "'%s'", exclude ? "exclude" : "include", arg);
	o->refs[o->nrefs].name = arg;
	o->refs[o->nrefs++].exclude = exclude;
	return 0;
}

static int add_include_ref(void *opts, const char *arg, struct err *e)
{
	return add_ref(opts, arg, 0, e);
}

static int add_exclude_ref(void *opts, const char *arg, struct err *e)
{
	return add_ref(opts, arg, 1, e);
}

#define F(field) offsetof(struct run_opts, field)
/* run's own options; the shared ones (--rules, -q, ...) are options.c's */
static const struct cli_option run_only_options[] = {
	{ "repo", 0, CLI_STRING, "DIR", F(repo), 0, NULL,
	  "the repository to migrate (default: the current\n"
	  "directory's)", 0 },
	{ "to", 0, CLI_STRING, "NEWDIR", F(to), 0, NULL,
	  "write the new history into NEWDIR: a new\n"
	  "repository, or the target of an earlier run", CLI_ONE_OF },
	{ "in-place", 0, CLI_SET, NULL, F(in_place), 1, NULL,
	  "rewrite REPO's refs (the old ones are kept under\n"
	  "refs/migrate/original/)", CLI_ONE_OF },
	{ "verify-only", 0, CLI_SET, NULL, F(verify_only), 1, NULL,
	  "check the last run's maps and marks against the\n"
	  "repository again; change nothing", 0 },
	{ "rollback", 0, CLI_SET, NULL, F(rollback), 1, NULL,
	  "undo a run that was interrupted instead of\n"
	  "finishing it", 0 },
	{ "undo", 0, CLI_SET, NULL, F(undo), 1, NULL,
	  "in place: take the last finished run back (every\n"
	  "ref to its backup under refs/migrate/original/)", 0 },
	{ "allow-no-rules", 0, CLI_SET, NULL, F(allow_no_rules), 1, NULL,
	  "run without --rules, --strip-blobs-with-ids or\n"
	  "--replace-message: nothing is converted, only the\n"
	  "maps are written (refused otherwise)", 0 },
	{ "restart", 0, CLI_SET, NULL, F(restart), 1, NULL,
	  "in place: convert again, with the rules given, from\n"
	  "the history under refs/migrate/original/", 0 },
	{ "include-ref", 0, CLI_STRING, "REF", F(ref_arg), 0, add_include_ref,
	  "git lfs migrate's: rewrite REF (repeatable; as\n"
	  "REF after --; without it, every ref)", 0 },
	{ "exclude-ref", 0, CLI_STRING, "REF", F(ref_arg), 0, add_exclude_ref,
	  "git lfs migrate's: leave the commits of REF as they\n"
	  "are (repeatable; as ^REF after --)", 0 },
	{ "everything", 0, CLI_SET, NULL, F(everything), 1, NULL,
	  "git lfs migrate's: every ref (what a run without\n"
	  "REV-ARGS or --include-ref does anyway)", 0 },
	{ NULL, 0, 0, NULL, 0, 0, NULL, NULL, 0 },
};

#undef F

const struct cli_command_options cli_run_command = {
	CLI_RUN, run_only_options, NULL, "migrate run", "[-- REV-ARGS...]",
	run_about, NULL, 1, NULL,
};

/* 0 parsed, 1 --help answered, -1 e set */
static int parse_run_options(struct run_opts *o, int argc, char **argv,
			     struct err *e)
{
	struct cli_command_options c = cli_run_command;
	int rc;

	c.own_opts = o;
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
	if (o->undo && o->to)
		return err_set(e, ERR_USAGE, "--undo: a --to run never wrote to "
			       "its source; to take it back, delete %s", o->to);
	if (o->undo && (o->rollback || o->verify_only || o->restart ||
			o->nrevs || o->f.dry_run))
		return err_set(e, ERR_USAGE, "--undo goes with --in-place alone "
			       "(no --rollback, --verify-only, --restart, "
			       "--dry-run or revision arguments)");
	if (o->everything && (o->nrevs || o->nrefs))
		return err_set(e, ERR_USAGE, "--everything converts every ref: "
			       "it goes without --include-ref, --exclude-ref "
			       "and REV-ARGS (as in git lfs migrate)");
	if (o->nrefs && (o->restart || o->undo || o->rollback || o->verify_only))
		return err_set(e, ERR_USAGE, "--%s-ref says what a run "
			       "converts: not with --restart, --undo, "
			       "--rollback or --verify-only",
			       o->refs[0].exclude ? "exclude" : "include");
	if (o->restart && (!o->in_place || o->rollback || o->verify_only ||
			   o->nrevs))
		return err_set(e, ERR_USAGE, "--restart goes with --in-place "
			       "alone (no --rollback, --verify-only or revision "
			       "arguments); with --to, convert into a fresh "
			       "directory instead");
	return 0;
}

static int prepare(struct run *r, const struct state_files *fin,
		   const struct state_files *fnew, struct err *e)
{
	int clean, dry = r->o.f.dry_run;

	/* a preview writes nothing: nothing of the work tree is in its way */
	if (!dry && r->o.in_place && run_refuse_in_progress(r->dst, r->dst_gitdir, e) < 0)
		return -1;
	if (!dry && r->o.in_place && !r->bare) {
		clean = run_worktree_clean(r->dst, e);
		if (clean < 0)
			return -1;
		if (!clean)
			return err_set(e, ERR_USAGE, "%s has uncommitted "
				       "changes; commit or stash them first", r->dst);
	}
	if (run_annex_prepare(r, e) < 0)
		return -1;
	/* what can refuse the run, before the first object is stored */
	if (!dry && r->o.in_place && (run_refuse_untracked_attributes(r, e) < 0 ||
				      run_refuse_dirty_linked(r, e) < 0))
		return -1;
	if (r->o.restart && run_restart_prepare(r, e) < 0)
		return -1;
	if (!r->o.restart && run_check_rules(r, e) < 0)
		return -1;
	run_side_config_prepare(r);
	if (gitrefs_list(&r->src_before, r->o.repo, NULL, e) < 0 ||
	    (!r->dst_absent && gitrefs_list(&r->dst_before, r->dst, NULL, e) < 0))
		return -1;
	if (!dry && r->o.to && r->first && run_copy_head(r, e) < 0)
		return -1;
	if (!dry && r->o.to && !r->first)
		r->dst_clean = run_head_exists(r->dst) && run_worktree_clean(r->dst, e) == 1;
	if (run_build_revs(r, e) < 0)
		return -1;
	r->total = run_count_commits(r);
	if (run_map_prepare(r, fin, fnew, e) < 0)
		return -1;
	return dry ? 0 : run_write_state_first(r, e);
}

/*
 * The honest ending: what changed (commits, refs, objects converted, the
 * history's size before -> after, packed), and where the reports and
 * RESET.md are (dir: the state, or nothing for a preview). would: "" or
 * " would be" for a preview.
 */
/* "by action: 18 blob(s) to LFS, 3 dropped, ..." (what the report's
 * table says), when a rule took anything. */
static void actions_line(const struct rw_stats *s, const char *would)
{
	static const char *const what[] = {
		[RULES_LFS] = "to LFS", [RULES_ANNEX] = "to git-annex",
		[RULES_DROP] = "dropped", [RULES_SPLIT] = "split",
		[RULES_UNLFS] = "back from LFS", [RULES_REPLACE_TEXT] = "replaced",
	};
	struct buf line = BUF_INIT(4096);
	size_t i;

	for (i = 0; i < sizeof(what) / sizeof(what[0]); i++)
		if (what[i] && s->by_action[i])
			buf_printf(&line, "%s%llu %s", line.len ? ", " : "",
				   (unsigned long long)s->by_action[i], what[i]);
	if (line.len)
		fprintf(stderr, "migrate run: by action%s: %s (distinct blobs, "
			"as the report counts them)\n",
			*would ? ", what would be" : "", line.ptr);
	buf_release(&line);
}

static void ending(const struct run *r, const char *dir, const char *would)
{
	const struct rw_stats *s = &r->stats;
	char a[32], b[32], c[32], d[32];

	fprintf(stderr, "migrate run: %llu of %llu commit(s)%s rewritten",
		(unsigned long long)s->rewritten, (unsigned long long)s->commits,
		would);
	/* left empty by the rules, as git filter-repo prunes them */
	if (s->pruned)
		fprintf(stderr, " (%llu pruned)", (unsigned long long)s->pruned);
	fprintf(stderr, ", %llu of %llu ref(s)%s changed",
		(unsigned long long)s->refs_changed, (unsigned long long)s->refs,
		would);
	/* objects into or out of a store; the other actions' counts are on
	 * the "by action" line */
	if (s->converted)
		fprintf(stderr, ", %llu object(s)%s converted",
			(unsigned long long)s->converted, would);
	fputc('\n', stderr);
	fprintf(stderr, "migrate run: history blobs %s -> %s; packed %s -> %s "
		"(on disk in the source; new blobs as written, or estimated)\n",
		report_human(s->bytes_before, a, sizeof(a)),
		report_human(s->bytes_after, b, sizeof(b)),
		report_human(s->packed_before, c, sizeof(c)),
		report_human(s->packed_after, d, sizeof(d)));
	actions_line(s, would);
	if (s->unmatched && !r->o.f.quiet)
		fprintf(stderr, "migrate run: warning: %llu rule(s) matched no "
			"file in the commits of this run: %s\n",
			(unsigned long long)s->unmatched, s->unmatched_text);
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
	/* as the check counted them (the same file, renamed since) */
	after = r->side_read.map_entries;
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

#define RULES_SHOWN 200	/* rules a preview lists */
#define RULE_SHOWN 300		/* bytes of one */

/* (cli.h) */
void cli_list_rules(const char *who, const struct rules *rules, int fixup)
{
	struct buf line = BUF_INIT(SIZE_MAX / 2);
	size_t i, n = rules ? rules_count(rules) : 0;

	if (fixup)
		fprintf(stderr, "%s: dry run: --fixup: in each commit, the files "
			"its own .gitattributes mark filter=lfs that are no LFS "
			"pointers become pointers%s\n", who,
			n ? " (after the rules below)" : "");
	if (!n)
		return;
	fprintf(stderr, "%s: dry run: %zu rule(s) in effect, the first that "
		"matches a file decides it (the rule file's, then the "
		"options'):\n", who, n);
	for (i = 0; i < n && i < RULES_SHOWN; i++) {
		const struct rule *rule = rules_get(rules, i);

		buf_reset(&line);
		rules_rule_format(&line, rule);
		fprintf(stderr, "  %.*s%s  # %s:%zu\n",
			(int)(line.len > RULE_SHOWN ? RULE_SHOWN : line.len),
			line.ptr, line.len > RULE_SHOWN ? "..." : "",
			rules_rule_file(rule), rules_rule_line(rule));
	}
	if (n > RULES_SHOWN)
		fprintf(stderr, "  ... and %zu more\n", n - RULES_SHOWN);
	buf_release(&line);
}

/* --dry-run: everything decided, nothing written but what was asked. */
static int preview(struct run *r, struct err *e)
{
	struct err ignored = ERR_INIT;
	struct state_files fin, fnew;
	size_t after = 0;
	int rc;

	run_state_files_init(&fin, r->state, "");
	run_state_files_init(&fnew, r->dry_dir, "");
	if (!r->o.f.quiet)
		cli_list_rules("migrate run", r->rules, r->o.f.peer.fixup);
	rc = prepare(r, &fin, &fnew, e);
	if (rc == 0)
		rc = run_convert(r, &fnew, e);
	if (rc == 0)
		rc = deliver(r, r->dry_dir, &fnew, e);
	if (rc == 0 && !r->o.f.quiet) {
		run_map_entries(&after, fnew.map, &ignored);
		fprintf(stderr, "migrate run: dry run: %zu commit(s) would be "
			"mapped; nothing was written to %s%s%s\n",
			after - (after >= r->map_before ? r->map_before : after),
			r->o.repo, r->o.to ? " or " : "", r->o.to ? r->o.to : "");
		ending(r, "", " would be");
	}
	run_state_files_free(&fin);
	run_state_files_free(&fnew);
	return rc;
}

/*
 * Ctrl-C, SIGTERM, SIGHUP: one line that says what is left and what the
 * next run does, then the default action (exit status 128 + signal). What
 * is left depends on how far the run got: no journal yet (nothing moved),
 * a journal (the refs were moving), or the refs moved (what came after
 * may be unfinished). Only async-signal-safe calls in the handler: the
 * texts are made beforehand.
 */
enum { SIG_BEFORE, SIG_JOURNALED, SIG_MOVED, SIG_PREVIEW, SIG_N };
static char sig_text[SIG_N][1024];
static char sig_journal[4096];
static volatile sig_atomic_t sig_moved, sig_preview;

static void on_signal(int sig)
{
	int k = sig_preview ? SIG_PREVIEW : sig_moved ? SIG_MOVED :
		access(sig_journal, F_OK) == 0 ? SIG_JOURNALED : SIG_BEFORE;
	ssize_t ignored = write(2, sig_text[k], strlen(sig_text[k]));

	(void)ignored;
	signal(sig, SIG_DFL);
	raise(sig);
}

static void catch_signals(const struct run *r)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa;
	size_t i;

	snprintf(sig_journal, sizeof(sig_journal), "%s/journal", r->state);
	snprintf(sig_text[SIG_BEFORE], sizeof(sig_text[0]), "\nmigrate run: "
		 "interrupted before any ref moved: %s is as it was; the next "
		 "`migrate run` removes what this one left and starts again\n",
		 r->o.to ? r->o.to : r->dst);
	snprintf(sig_text[SIG_JOURNALED], sizeof(sig_text[0]), "\nmigrate "
		 "run: interrupted while the refs moved: the run is journaled "
		 "in %s/journal: the next `migrate run` finishes it, `migrate "
		 "run --rollback` undoes it\n", r->state);
	snprintf(sig_text[SIG_MOVED], sizeof(sig_text[0]), "\nmigrate run: "
		 "interrupted after the refs moved: the new history is in %s; "
		 "what comes after (%sthe maps and reports asked for) may be "
		 "unfinished: `migrate run --verify-only` checks the state\n",
		 r->o.to ? r->o.to : r->dst, r->o.to ? "the repack, " : "");
	snprintf(sig_text[SIG_PREVIEW], sizeof(sig_text[0]), "\nmigrate run: "
		 "interrupted: a preview, nothing was written\n");
	sig_preview = r->o.f.dry_run;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction was;

		/* a signal ignored when we started (a background job, nohup)
		 * stays ignored, as the shell meant */
		if (sigaction(sigs[i], NULL, &was) == 0 && was.sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
	}
}

static int run_all(struct run *r, struct err *e)
{
	struct state_files fin, fnew;
	struct err ignored = ERR_INIT;
	int rc;

	if (r->o.f.dry_run)
		return preview(r, e);
	run_state_files_init(&fin, r->state, "");
	run_state_files_init(&fnew, r->state, ".new");
	rc = prepare(r, &fin, &fnew, e);
	if (rc == 0)
		rc = run_convert(r, &fnew, e);
	if (rc == 0)
		rc = run_commit_run(r, &fin, &fnew, e);
	run_plan_drop(r);	/* a failed check never collected them */
	if (rc < 0 && !run_journal_pending(r->state)) {
		/* no ref moved: the target borrows nothing any more (one
		 * journaled needs the source until the next run finishes it),
		 * and the copy of the state a --restart kept goes with it */
		run_unborrow(r, &ignored);
		if (r->before_restart)
			remove_tree(r->before_restart);
	} else if (rc == 0) {
		r->moved = sig_moved = 1;
		run_annex_restage(r);
		rc = run_dissociate(r, e);
		if (rc == 0)
			rc = deliver(r, r->state, &fin, e);
		if (rc == 0)
			summary(r, &fin);
	}
	/* the side repository, and a failed run's files (none with a journal) */
	run_tidy_join(r);
	if (!run_journal_pending(r->state))
		run_clean_all(r);
	run_state_files_free(&fin);
	run_state_files_free(&fnew);
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
	run_state_files_init(&f, r->state, "");
	if (rc > 0)
		rc = run_verify_run(r->dst, NULL, &f, (size_t)before, NULL, e);
	if (rc == 0 && !r->o.f.quiet)
		fprintf(stderr, "migrate run: verified: the marks, commit map and "
			"ref map in %s agree with %s\n", r->state, r->dst);
	run_state_files_free(&f);
	buf_release(&text);
	free(path);
	return rc < 0 ? -1 : 0;
}

int rw_cmd_run(int argc, char **argv, struct err *e)
{
	struct run r;
	int rc;

	memset(&r, 0, sizeof(r));
	buf_init(&r.alt_before, SIZE_MAX / 2);
	buf_init(&r.rules_peer, SIZE_MAX / 2);
	rc = parse_run_options(&r.o, argc, argv, e);
	if (rc > 0)
		return 0;	/* --help */
	if (rc == 0)
		rc = run_setup(&r, e);
	if (rc == 0 && !r.o.rollback && !r.o.verify_only)
		catch_signals(&r);
	if (rc == 0 && r.o.undo)
		rc = run_undo(&r, e);
	else if (rc == 0 && !r.o.rollback)
		rc = r.o.verify_only ? verify_only(&r, e) : run_all(&r, e);
	if (rc < 0)
		run_take_back_target(&r);
	run_release(&r);
	return rc;
}
