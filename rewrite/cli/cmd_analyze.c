/*
 * cmd_analyze.c - `migrate analyze`: what is big in a repository, by
 * extension and by blob, deleted or not, and with --rules what each rule
 * would take and what would remain (rewrite/analyze/ does the work; this
 * is its command line).
 */
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../rules/rules.h"
#include "../analyze/analyze.h"
#include "cli.h"

/* --help, after the synopsis (made from the tables) */
static const char analyze_about[] =
"\n"
"Says what is big in the history of DIR (default: the current directory's\n"
"repository), reading no blob's content: totals; a table per extension\n"
"(files, bytes, on disk, at the tips or only in history) counted as\n"
"git lfs migrate info --everything counts; the largest blobs with every\n"
"path each had and whether it is present at some ref's tip. With --rules:\n"
"what each rule would take (paths, blobs, bytes: the numbers a dry run's\n"
"--report gives) and the largest blobs that would remain. The history is\n"
"every commit of the refs (refs/migrate/ aside), as for migrate run.\n";

struct analyze_opts {
	struct rw_options f;	/* --rules, -q */
	const char *repo, *json, *top;
};

#define F(field) offsetof(struct analyze_opts, field)

static const struct cli_option analyze_only_options[] = {
	{ "repo", 0, CLI_STRING, "DIR", F(repo), 0, NULL,
	  "the repository (default: the current directory's)", 0 },
	{ "json", 0, CLI_STRING, "FILE", F(json), 0, NULL,
	  "also write the JSON document to FILE ('-': to\n"
	  "standard output, instead of the table)", 0 },
	{ "top", 0, CLI_STRING, "N", F(top), 0, NULL,
	  "list the N largest blobs (default 20; 0: all)", 0 },
	{ NULL, 0, 0, NULL, 0, 0, NULL, NULL, 0 },
};

#undef F

const struct cli_command_options cli_analyze_command = {
	CLI_ANALYZE, analyze_only_options, NULL, "migrate analyze", NULL,
	analyze_about, NULL, 0, NULL,
};

static int parse_analyze_options(struct analyze_opts *o, int argc,
				 char **argv, struct analyze_options *ao,
				 struct err *e)
{
	struct cli_command_options c = cli_analyze_command;
	uint64_t top = 20;
	int rc;

	c.own_opts = o;
	rc = cli_parse_options(&c, argc, argv, &o->f, e);
	if (rc != CLI_PARSED)
		return rc < 0 ? -1 : 1;
	if (optind < argc)
		return err_set(e, ERR_USAGE, "unexpected argument '%s'",
			       argv[optind]);
	if (o->top && parse_u64(o->top, strlen(o->top), SIZE_MAX, &top) < 0)
		return err_set(e, ERR_USAGE, "--top: expected a number, got '%s'",
			       o->top);
	ao->repo = o->repo;
	ao->rules_path = o->f.rules;
	ao->top = (size_t)top;
	return 0;
}

/* The document to FILE (atomically) or to standard output. */
static int write_out(const char *path, const struct buf *b, struct err *e)
{
	if (!strcmp(path, "-")) {
		if (fwrite(b->ptr, 1, b->len, stdout) != b->len || fflush(stdout))
			return err_errno(e, ERR_IO, "standard output");
		return 0;
	}
	return file_write(path, b, e);
}

int rw_cmd_analyze(int argc, char **argv, struct err *e)
{
	struct analyze_opts o = { 0 };
	struct analyze_options ao = { 0 };
	struct analysis *a = NULL;
	struct rules *rules = NULL;
	struct buf out = BUF_INIT(SIZE_MAX / 2);
	int rc = parse_analyze_options(&o, argc, argv, &ao, e);

	if (rc != 0)
		return rc < 0 ? -1 : 0;
	/* the rule file, the ids, the options' rules: one set, as run's */
	if (rw_rules_wanted(&o.f) && rw_rules_build(&rules, NULL, &o.f, e) < 0)
		return -1;
	if (!o.f.rules)
		ao.rules_path = o.f.strip_blobs_with_ids ?
				o.f.strip_blobs_with_ids : "(options)";
	if (rules && !o.f.quiet)
		rules_warn_shadowed(rules);
	ao.rules = rules;
	rc = gitcmd_sha1_only(o.repo, e);
	if (rc == 0)
		rc = analyze_repo(&a, &ao, e);
	if (rc == 0 && o.json) {
		analyze_json(a, &out);
		rc = write_out(o.json, &out, e);
	}
	if (rc == 0 && (!o.json || strcmp(o.json, "-"))) {
		buf_reset(&out);
		analyze_text(a, &out);
		rc = write_out("-", &out, e);
	}
	buf_release(&out);
	analyze_free(a);
	rules_free(rules);
	return rc;
}
