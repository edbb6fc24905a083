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

/* --help, after the synopses (made from the tables) */
static const char usage_text[] =
"   or: migrate help [run | push | remap | analyze | check-rules]\n"
"   or: migrate --version\n"
"       (migrate help [COMMAND]: its manual page, man migrate-COMMAND,\n"
"       or this text without man; migrate COMMAND --help: its options;\n"
"       the rule file: man migrate-rules)\n"
"\n"
"Rewrites a `git fast-export` stream for `git fast-import`, computing the\n"
"new id of every object it writes, so the old->new commit map exists even\n"
"in a pipe:\n"
"\n"
"  git fast-export --all --show-original-ids --signed-tags=verbatim \\\n"
"      --reencode=no --mark-tags | migrate --commit-map MAP | git fast-import\n";

/* after the option list */
static const char usage_tail[] =
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

/* check-rules: the filter's options (those that say the rules count) */
static const struct cli_command_options check_rules_options = {
	CLI_FILTER, NULL, NULL, "migrate check-rules", "[PATH[:SIZE]...]",
	"\nPrints, for each PATH (or each line of standard input), the rule "
	"that\ndecides it (see the end of migrate --help).\n", NULL, 0, NULL,
};

/* The commands `migrate --help` shows after the filter, short. */
static const struct cli_command_options *const overview[] = {
	&check_rules_options, &cli_run_command, &cli_push_command,
	&cli_remap_command, &cli_analyze_command, NULL,
};

/* The filter's options: the shared ones (options.c). */
static const struct cli_command_options filter_options = {
	CLI_FILTER, NULL, NULL, "migrate", "< EXPORT-STREAM > IMPORT-STREAM",
	usage_text, usage_tail, 0, overview,
};

/* The filter's options into opt (c: the filter's or check-rules'); 0, 1
 * when --help or --version was answered, -1 with e set. */
static int parse_options(const struct cli_command_options *c, int argc,
			 char **argv, struct rw_options *opt, struct err *e,
			 int allow_args)
{
	int rc = cli_parse_options(c, argc, argv, opt, e);

	if (rc == CLI_DONE_VERSION)
		printf("migrate %s\n", MIGRATE_VERSION);
	if (rc != CLI_PARSED)
		return rc < 0 ? -1 : 1;
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

static int check_one(const struct rules *rules, const char *arg,
		     struct err *e)
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
	const char *mode = rules_rule_option(rule, "mode", NULL);
	const char *backend = rules_rule_option(rule, "backend", NULL);
	printf("%.*s\t%s:%zu\t%s", (int)len, arg, rules_rule_file(rule),
	       rules_rule_line(rule),
	       rules_action_name(rules_rule_action(rule)));
	/* annex: what the file becomes, defaults spelt out */
	if (rules_rule_action(rule) == RULES_ANNEX)
		printf(" mode=%s backend=%s", mode ? mode : "unlocked",
		       backend ? backend : "SHA256E");
	printf("\t%s%.*s\n", rules_rule_is_regex(rule) ? "re:" : "", (int)plen, pat);
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
	int i, r = parse_options(&check_rules_options, argc, argv, &opt, e, 1);

	if (r != 0)
		return r < 0 ? -1 : 0;
	if (opt.peer.fixup)
		return err_set(e, ERR_USAGE, "check-rules: --fixup decides in "
			       "each commit, from that commit's .gitattributes: "
			       "no rule says it (git check-attr filter -- PATH "
			       "tells what a checkout's attributes say)");
	if (!opt.rules && !rules_peer_given(&opt.peer))
		return err_set(e, ERR_USAGE, "check-rules needs --rules FILE "
			       "(or an option that adds rules: --include, "
			       "--path, ...)");
	if (rw_rules_build(&rules, NULL, &opt, e) < 0)
		return -1;
	if (!opt.quiet)
		rules_warn_shadowed(rules);
	for (i = optind; i < argc && r == 0; i++)
		r = check_one(rules, argv[i], e);
	if (optind == argc) {
		while (r == 0 && (n = getline(&line, &cap, stdin)) > 0) {
			if (line[n - 1] == '\n')
				line[n - 1] = '\0';
			r = check_one(rules, line, e);
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

/*
 * The one shape of every error: "migrate: error: MSG" for the filter,
 * "migrate CMD: error: MSG" for a command; a usage error adds where help
 * is. Returns the exit status.
 */
static int report_error(const char *cmd, const struct err *e)
{
	const char *msg = e->msg;

	fprintf(stderr, "migrate%s%s: error: %s\n", cmd ? " " : "",
		cmd ? cmd : "", msg);
	if (e->kind == ERR_USAGE && !strncmp(msg, "unknown ", 8))
		fprintf(stderr, "(see migrate %s%s--help)\n", cmd ? cmd : "",
			cmd ? " " : "");
	return e->kind ? e->kind : 3;
}

/* migrate [OPTIONS]: the filter, standard input to standard output. */
static int cmd_filter(int argc, char **argv, struct err *e)
{
	struct rw_options opt = { 0 };
	int out, rc;

	opt.input_name = "<stdin>";
	opt.rewrite_message_ids = -1; /* default: with rules only */
	rc = parse_options(&filter_options, argc, argv, &opt, e, 0);
	if (rc != 0)
		return rc < 0 ? -1 : 0;
	if (isatty(0)) {
		fprintf(stderr, "migrate: reading a fast-export stream from a "
				"terminal; see migrate --help\n");
	}
	/* without rules migrate changes nothing, messages included */
	if (opt.rewrite_message_ids < 0)
		opt.rewrite_message_ids = rw_rules_wanted(&opt) ||
					  opt.replace_message;
	if (opt.output && !opt.dry_run)
		return err_set(e, ERR_USAGE, "-o is for --dry-run; the stream goes "
			       "to standard output");
	/* a sha256 repository would get sha1 ids in every map */
	if (gitcmd_sha1_only(opt.source_repo, e) < 0 ||
	    (opt.target_repo && gitcmd_sha1_only(opt.target_repo, e) < 0))
		return -1;
	/* the rules, parsed here: a dry run with options that add rules
	 * lists them all (the rule file alone says what it says) */
	if (rw_rules_wanted(&opt) && rw_rules_build(&opt.rules_set, NULL, &opt, e) < 0)
		return -1;
	if (opt.dry_run && !opt.quiet && rules_peer_given(&opt.peer))
		cli_list_rules("migrate", opt.rules_set, opt.peer.fixup);
	out = dry_run_output(&opt, e);
	rc = out < 0 || rw_filter(&opt, 0, out, e) < 0 ? -1 : 0;
	rules_free(opt.rules_set);
	return rc;
}

static int cmd_help(int argc, char **argv, struct err *e);

#define CMD_NO_HELP 1u	/* `migrate help NAME` does not know it */

/*
 * The commands, as git's commands[]: argv[1] names one, which gets argv
 * from there on (its argv[0] is its name); no command is the filter, which
 * gets the whole argv (an unknown word is then its unexpected argument).
 */
static const struct command {
	const char *name;
	int (*fn)(int argc, char **argv, struct err *e);
	unsigned flags;
} commands[] = {
	{ "run", rw_cmd_run, 0 },
	{ "push", rw_cmd_push, 0 },
	{ "remap", rw_cmd_remap, 0 },
	{ "analyze", rw_cmd_analyze, 0 },
	{ "check-rules", check_rules, 0 },
	{ "help", cmd_help, CMD_NO_HELP },
	/* hidden: the object reader, for the tests (catobj.c) */
	{ "cat-object", rw_cmd_cat_object, CMD_NO_HELP },
}, filter_command = { NULL, cmd_filter, 0 };

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const struct command *find_command(const char *name)
{
	size_t i;

	for (i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

/*
 * migrate help [COMMAND]: COMMAND's manual page (migrate-COMMAND, or
 * migrate for the filter) where man(1) shows it, as `git help` does;
 * otherwise the usage of COMMAND, as COMMAND --help.
 */
static int cmd_help(int argc, char **argv, struct err *e)
{
	const struct command *c = argc < 2 ? &filter_command : find_command(argv[1]);
	char *help_argv[] = { c && c->name ? (char *)c->name : "migrate",
			      "--help", NULL };
	struct buf names = BUF_INIT(BUF_MAX_DEFAULT);
	size_t i;
	int rc;

	if (argc > 2)
		return err_set(e, ERR_USAGE, "help takes one command, not '%s'",
			       argv[2]);
	if (c && !(c->flags & CMD_NO_HELP)) {
		char page[64];

		snprintf(page, sizeof(page), "migrate%s%s", c->name ? "-" : "",
			 c->name ? c->name : "");
		if (gitcmd_man(page) == 0)
			return 0;
		return c->fn(2, help_argv, e);
	}
	for (i = 0; i < NCOMMANDS; i++)
		if (!(commands[i].flags & CMD_NO_HELP))
			buf_printf(&names, "%s%s", names.len ? ", " : "",
				   commands[i].name);
	rc = err_set(e, ERR_USAGE, "help: no command '%s' (commands: %s)",
		     argv[1], names.ptr);
	buf_release(&names);
	return rc;
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
	const struct command *c = argc > 1 ? find_command(argv[1]) : NULL;
	struct err e = ERR_INIT;

	/* a closed pipe is an error we report, not a silent death */
	signal(SIGPIPE, SIG_IGN);
	set_die_routine(fatal);
	set_warning_routine(warn_line);
	if (!c)
		return cmd_filter(argc, argv, &e) < 0 ? report_error(NULL, &e) : 0;
	if (c->fn(argc - 1, argv + 1, &e) < 0)
		return report_error(c->name, &e);
	return 0;
}
