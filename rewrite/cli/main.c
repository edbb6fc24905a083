/*
 * main.c - the command line: option parsing, usage, and the one place
 * that turns an error into a message and an exit status.
 */
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../rules/rules.h"
#include "../engine/engine.h"
#include "cli.h"
#include "version.h"	/* MIGRATE_VERSION, made by cmake/version.cmake */

static const char usage_text[] =
"usage: migrate [OPTIONS] < EXPORT-STREAM > IMPORT-STREAM\n"
"   or: migrate check-rules --rules FILE [PATH[:SIZE]...]\n"
"   or: migrate run [--rules R] [--repo DIR] (--to NEWDIR | --in-place) [-- REV-ARGS]\n"
"   or: migrate remap [--commit-map M] [BRANCH...]\n"
"   or: migrate help [run | remap | check-rules]\n"
"   or: migrate --version\n"
"       (migrate run --help, migrate remap --help)\n"
"\n"
"Rewrites a `git fast-export` stream for `git fast-import`, computing the\n"
"new id of every object it writes, so the old->new commit map exists even\n"
"in a pipe:\n"
"\n"
"  git fast-export --all --show-original-ids --signed-tags=verbatim \\\n"
"      --reencode=no --mark-tags | migrate --commit-map MAP | git fast-import\n"
"\n"
"Options:\n"
"  --rules FILE            the rule file: 'PATTERN [size>N] ACTION' per line,\n"
"                          first match wins; patterns as in .gitattributes or\n"
"                          re:REGEX; actions lfs, drop, keep, split (see\n"
"                          examples/)\n"
"  --store DIR             where LFS objects go (default <git-dir>/lfs/objects)\n"
"  --commit-map FILE       write the old->new commit map; an existing file is\n"
"                          loaded first (raw ids it knows are translated) and\n"
"                          extended: that continues an earlier run\n"
"  --commit-map-format F   filter-repo (default: header, every commit),\n"
"                          lfs (old,new CSV, changed commits), bfg (old new,\n"
"                          sorted)\n"
"  --ref-map FILE          write '<old> <new> <ref>' for every ref set\n"
"  --export-marks FILE     write ':<mark> <id>' for every mark written, as\n"
"                          git fast-import --export-marks would\n"
"  --source-repo DIR       repository holding commits the stream names by id\n"
"                          (default: the current directory's)\n"
"  --target-repo DIR       repository holding the new commits of an earlier\n"
"                          run (default: the source repository)\n"
"  --verify-split          report every version of a split file that does\n"
"                          not reassemble from its parts byte for byte\n"
"  --dry-run               read and decide everything, store nothing, write\n"
"                          no stream (unless -o); maps and reports as usual\n"
"  -o, --output FILE       with --dry-run: write the stream to FILE\n"
"  --report FILE           a table of what moves and how much history\n"
"                          shrinks ('-': standard error)\n"
"  --report-json FILE      the same as JSON\n"
"  --progress              a progress line on standard error even when it\n"
"                          is not a terminal\n"
"  --no-rewrite-message-ids, --rewrite-message-ids\n"
"                          old commit ids in messages become the new ids\n"
"                          (default: with --rules; without, nothing changes)\n"
"  --date-format FMT       raw (default) or raw-permissive: the value given\n"
"                          to git fast-import, which overrides the stream's\n"
"                          'feature date-format' (rfc2822: parsed by git\n"
"                          itself; now: refused)\n"
"  -q, --quiet             no warnings, no progress\n"
"  -h, --help              this text\n"
"  --version               the version (and git describe of a clone build)\n"
"\n"
"The output starts with 'feature done' and ends with 'done' only when the\n"
"whole run succeeded, so git fast-import commits nothing from a failed run;\n"
"the map files are then left as they were.\n"
"\n"
"check-rules prints, for each PATH (or each line of standard input), the\n"
"rule that decides it: '<path> <TAB> <file>:<line> <TAB> <action> <TAB>\n"
"<pattern>', or 'no rule'. SIZE is bytes or a size with a unit as rules\n"
"write it (60MB, 1GiB); without it, a path whose rule depends on the size\n"
"says so.\n"
"\n"
"A rule an earlier rule always beats (the same pattern, or an earlier *,\n"
"** or **/* whose size condition covers its own) is a warning when rules\n"
"are loaded: 'FILE:LINE: warning: rule never matches: line N (...) always\n"
"wins'. --quiet silences it; it is never an error.\n"
"\n"
"Exit status: 0 ok, 1 usage or rule error, 2 malformed input stream,\n"
"3 I/O, store or repository failure.\n";

enum {
	OPT_RULES = 256, OPT_STORE, OPT_COMMIT_MAP, OPT_COMMIT_MAP_FORMAT,
	OPT_REF_MAP, OPT_EXPORT_MARKS, OPT_SOURCE_REPO, OPT_TARGET_REPO,
	OPT_VERIFY_SPLIT, OPT_DRY_RUN, OPT_REPORT, OPT_REPORT_JSON, OPT_PROGRESS,
	OPT_NO_MSG_IDS, OPT_MSG_IDS, OPT_DATE_FORMAT, OPT_VERSION,
};

static const struct option long_options[] = {
	{ "rules", required_argument, NULL, OPT_RULES },
	{ "store", required_argument, NULL, OPT_STORE },
	{ "commit-map", required_argument, NULL, OPT_COMMIT_MAP },
	{ "commit-map-format", required_argument, NULL, OPT_COMMIT_MAP_FORMAT },
	{ "ref-map", required_argument, NULL, OPT_REF_MAP },
	{ "export-marks", required_argument, NULL, OPT_EXPORT_MARKS },
	{ "source-repo", required_argument, NULL, OPT_SOURCE_REPO },
	{ "target-repo", required_argument, NULL, OPT_TARGET_REPO },
	{ "verify-split", no_argument, NULL, OPT_VERIFY_SPLIT },
	{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
	{ "output", required_argument, NULL, 'o' },
	{ "report", required_argument, NULL, OPT_REPORT },
	{ "report-json", required_argument, NULL, OPT_REPORT_JSON },
	{ "progress", no_argument, NULL, OPT_PROGRESS },
	{ "no-rewrite-message-ids", no_argument, NULL, OPT_NO_MSG_IDS },
	{ "rewrite-message-ids", no_argument, NULL, OPT_MSG_IDS },
	{ "date-format", required_argument, NULL, OPT_DATE_FORMAT },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

static int parse_options(int argc, char **argv, struct rw_options *opt,
			 struct err *e, int allow_args)
{
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "qho:", long_options, NULL)) != -1) {
		switch (c) {
		case OPT_RULES: opt->rules = optarg; break;
		case OPT_STORE: opt->store = optarg; break;
		case OPT_COMMIT_MAP: opt->commit_map = optarg; break;
		case OPT_COMMIT_MAP_FORMAT: opt->commit_map_format = optarg; break;
		case OPT_REF_MAP: opt->ref_map = optarg; break;
		case OPT_EXPORT_MARKS: opt->export_marks = optarg; break;
		case OPT_SOURCE_REPO: opt->source_repo = optarg; break;
		case OPT_TARGET_REPO: opt->target_repo = optarg; break;
		case OPT_VERIFY_SPLIT: opt->verify_split = 1; break;
		case OPT_DRY_RUN: opt->dry_run = 1; break;
		case 'o': opt->output = optarg; break;
		case OPT_REPORT: opt->report = optarg; break;
		case OPT_REPORT_JSON: opt->report_json = optarg; break;
		case OPT_PROGRESS: opt->progress = 1; break;
		case OPT_NO_MSG_IDS: opt->rewrite_message_ids = 0; break;
		case OPT_MSG_IDS: opt->rewrite_message_ids = 1; break;
		case OPT_DATE_FORMAT:
			if (strcmp(optarg, "raw") && strcmp(optarg, "raw-permissive"))
				return err_set(e, ERR_USAGE, "--date-format: expected raw "
					       "or raw-permissive, got '%s'", optarg);
			opt->date_format = optarg;
			break;
		case 'q': opt->quiet = 1; opt->progress = -1; break;
		case 'h':
			fputs(usage_text, stdout);
			exit(0);
		case OPT_VERSION:
			printf("migrate %s\n", MIGRATE_VERSION);
			exit(0);
		default:
			return rw_option_error(e, long_options, argv, optind,
					       optopt);
		}
	}
	if (optind < argc && !allow_args)
		return err_set(e, ERR_USAGE, "unexpected argument '%s'", argv[optind]);
	return 0;
}

/* PATH or PATH:SIZE (the last colon, if a size as rules write it follows). */
static void split_path_size(const char *arg, size_t *len, uint64_t *size,
			    int *has_size)
{
	const char *colon = strrchr(arg, ':');

	*len = strlen(arg);
	*has_size = 0;
	if (colon && colon[1] &&
	    rules_parse_size(colon + 1, strlen(colon + 1), size) == 0) {
		*len = (size_t)(colon - arg);
		*has_size = 1;
	}
}

static int check_one(const struct rules *rules, const char *file,
		     const char *arg, struct err *e)
{
	const struct rule *rule = NULL;
	uint64_t size = 0;
	size_t len, plen;
	int has_size, r;

	split_path_size(arg, &len, &size, &has_size);
	r = has_size ? rules_match(&rule, rules, arg, len, size, e)
		     : rules_match_unsized(&rule, rules, arg, len, e);
	if (r < 0)
		return -1;
	if (r == RULES_NEED_SIZE) {
		printf("%.*s\tdepends on the size: give PATH:SIZE\n", (int)len, arg);
		return 0;
	}
	if (!rule) {
		printf("%.*s\tno rule\n", (int)len, arg);
		return 0;
	}
	const char *pat = rules_rule_pattern(rule, &plen);
	printf("%.*s\t%s:%zu\t%s\t%s%.*s\n", (int)len, arg, file,
	       rules_rule_line(rule), rules_action_name(rules_rule_action(rule)),
	       rules_rule_is_regex(rule) ? "re:" : "", (int)plen, pat);
	return 0;
}

/* migrate check-rules --rules FILE [PATH[:SIZE]...] */
static int check_rules(int argc, char **argv, struct err *e)
{
	struct rw_options opt = { 0 };
	struct rules *rules;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int i, r = 0;

	if (parse_options(argc, argv, &opt, e, 1) < 0)
		return -1;
	if (!opt.rules)
		return err_set(e, ERR_USAGE, "check-rules needs --rules FILE");
	if (rules_load(&rules, opt.rules, e) < 0)
		return -1;
	if (!opt.quiet)
		rules_warn_shadowed(rules);
	for (i = optind; i < argc && r == 0; i++)
		r = check_one(rules, opt.rules, argv[i], e);
	if (optind == argc) {
		while (r == 0 && (n = getline(&line, &cap, stdin)) > 0) {
			if (line[n - 1] == '\n')
				line[n - 1] = '\0';
			r = check_one(rules, opt.rules, line, e);
		}
		free(line);
	}
	rules_free(rules);
	return r;
}

/* Where the stream goes: standard output, or in a dry run -o FILE or
 * nowhere. */
static int dry_run_output(const struct rw_options *opt, struct err *e)
{
	const char *path = opt->output ? opt->output : "/dev/null";
	int fd;

	if (!opt->dry_run)
		return 1;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0)
		return err_errno(e, ERR_IO, "%s: cannot open", path);
	return fd;
}

/* migrate help [COMMAND]: the usage of COMMAND, as COMMAND --help. */
static int help(int argc, char **argv, struct err *e)
{
	char *run_help[] = { "run", "--help", NULL };
	char *remap_help[] = { "remap", "--help", NULL };

	if (argc > 2)
		return err_set(e, ERR_USAGE, "help takes one command, not '%s'",
			       argv[2]);
	if (argc < 2 || !strcmp(argv[1], "check-rules")) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (!strcmp(argv[1], "run"))
		return rw_cmd_run(2, run_help, e);
	if (!strcmp(argv[1], "remap"))
		return rw_cmd_remap(2, remap_help, e);
	return err_set(e, ERR_USAGE, "help: no command '%s' (commands: run, "
		       "remap, check-rules)", argv[1]);
}

/*
 * The one shape of every error: "migrate: error: MSG" for the filter,
 * "migrate CMD: error: MSG" for a command (a "CMD: " the message starts
 * with is not said twice); a usage error adds where help is. Returns the
 * exit status.
 */
static int report_error(const char *cmd, const struct err *e)
{
	const char *msg = e->msg;
	size_t n = cmd ? strlen(cmd) : 0;

	if (cmd && !strncmp(msg, cmd, n) && msg[n] == ':' && msg[n + 1] == ' ')
		msg += n + 2;
	fprintf(stderr, "migrate%s%s: error: %s\n", cmd ? " " : "",
		cmd ? cmd : "", msg);
	if (e->kind == ERR_USAGE && !strncmp(msg, "unknown ", 8))
		fprintf(stderr, "(see migrate %s%s--help)\n", cmd ? cmd : "",
			cmd ? " " : "");
	return e->kind ? e->kind : 3;
}

/* warning(): a line for the user (common.h) */
static void warn_line(const char *line)
{
	fprintf(stderr, "%s\n", line);
}

/* die(): memory exhausted and the like (common.h) */
static void fatal(const char *msg)
{
	fprintf(stderr, "migrate: fatal: %s\n", msg);
	exit(3);
}

int main(int argc, char **argv)
{
	struct rw_options opt = { 0 };
	struct err e = ERR_INIT;
	int out;

	/* a closed pipe is an error we report, not a silent death */
	signal(SIGPIPE, SIG_IGN);
	set_die_routine(fatal);
	set_warning_routine(warn_line);
	opt.input_name = "<stdin>";
	opt.rewrite_message_ids = -1; /* default: with rules only */
	if (argc > 1 && (!strcmp(argv[1], "run") || !strcmp(argv[1], "remap"))) {
		if ((!strcmp(argv[1], "run") ? rw_cmd_run(argc - 1, argv + 1, &e)
					     : rw_cmd_remap(argc - 1, argv + 1, &e)) < 0)
			return report_error(argv[1], &e);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "help")) {
		if (help(argc - 1, argv + 1, &e) < 0)
			return report_error("help", &e);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "check-rules")) {
		if (check_rules(argc - 1, argv + 1, &e) < 0)
			return report_error("check-rules", &e);
		return 0;
	}
	if (parse_options(argc, argv, &opt, &e, 0) < 0)
		return report_error(NULL, &e);
	if (isatty(0)) {
		fprintf(stderr, "migrate: reading a fast-export stream from a "
				"terminal; see migrate --help\n");
	}
	/* without rules migrate changes nothing, messages included */
	if (opt.rewrite_message_ids < 0)
		opt.rewrite_message_ids = opt.rules != NULL;
	if (opt.output && !opt.dry_run) {
		err_set(&e, ERR_USAGE, "-o is for --dry-run; the stream goes "
			"to standard output");
		return report_error(NULL, &e);
	}
	out = dry_run_output(&opt, &e);
	if (out < 0 || rw_filter(&opt, 0, out, &e) < 0)
		return report_error(NULL, &e);
	return 0;
}
