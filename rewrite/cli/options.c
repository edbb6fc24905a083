/*
 * options.c - the options of the command line, declared once: the table
 * the filter and `migrate run` share, the one parser of a command's
 * options, the option list of --help and of the hidden --list-options
 * (what the bash completion offers), and the message for an option
 * getopt_long refused: which option, and the nearest one that exists
 * (git's "did you mean").
 */
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define NAME_MAX_LEN 64

/* Edit distance with adjacent transpositions counted as one edit
 * (optimal string alignment): "rulse" is one step from "rules". */
static size_t distance(const char *a, size_t la, const char *b, size_t lb)
{
	size_t d[NAME_MAX_LEN + 1][NAME_MAX_LEN + 1], i, j, best;

	if (la > NAME_MAX_LEN || lb > NAME_MAX_LEN)
		return (size_t)-1;
	for (i = 0; i <= la; i++)
		d[i][0] = i;
	for (j = 0; j <= lb; j++)
		d[0][j] = j;
	for (i = 1; i <= la; i++) {
		for (j = 1; j <= lb; j++) {
			size_t cost = a[i - 1] != b[j - 1];

			best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (d[i - 1][j - 1] + cost < best)
				best = d[i - 1][j - 1] + cost;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	}
	return d[la][lb];
}

/* The long option nearest to name[0..len), or NULL if none is close:
 * at most 2 edits, and fewer than half the name. */
static const char *nearest(const struct option *opts, const char *name,
			   size_t len)
{
	const char *best = NULL;
	size_t best_d = (size_t)-1, d;

	for (; opts->name; opts++) {
		d = distance(name, len, opts->name, strlen(opts->name));
		if (d < best_d) {
			best_d = d;
			best = opts->name;
		}
	}
	return best && best_d <= 2 && 2 * best_d < len ? best : NULL;
}

/* "unknown option 'NAME'", and "did you mean '--X'?" when one of opts is
 * near. Returns -1. */
/*
 * Options of the peer tools users come from, and migrate's way of saying
 * each: the rule file (one rule per line, first match wins; examples/
 * in the source, share/doc/migrate/examples installed, has one for each
 * common job).
 */
static const struct peer_option {
	const char *name, *peer, *ours;
} peer_options[] = {
	{ "everything", "git lfs migrate", "the refs git fast-export is "
	  "given (--all), or `migrate run --everything`" },
	{ "include-ref", "git lfs migrate", "the refs git fast-export is "
	  "given, or `migrate run --include-ref=REF`" },
	{ "exclude-ref", "git lfs migrate", "^REF for git fast-export, or "
	  "`migrate run --exclude-ref=REF`" },
	{ "path-rename", "git filter-repo", "nothing: migrate renames no path "
	  "(a split rule's into= names the parts of a file it splits)" },
	{ "subdirectory-filter", "git filter-repo", "nothing: migrate renames "
	  "no path; --path DIR keeps DIR where it is" },
	{ "object-map", "git lfs migrate", "--commit-map FILE "
	  "--commit-map-format lfs (old,new lines)" },
	{ "yes", "git lfs migrate", "nothing: migrate asks nothing (an "
	  "in-place run refuses uncommitted changes instead)" },
	{ "replace-text", "git filter-repo", "a rule in --rules FILE: "
	  "'* replace-text=EXPRESSIONS'" },
	{ "use-base-name", "git filter-repo", "a pattern without a slash "
	  "in --rules FILE, which matches the file name at any depth: "
	  "'secret.key drop'" },
	{ "to-subdirectory-filter", "git filter-repo", "nothing: migrate "
	  "renames no path" },
	{ "refs", "git filter-repo", "REV-ARGS after --: `migrate run ... -- "
	  "main`" },
	{ "delete-files", "BFG", "a drop rule in --rules FILE: 'id_rsa drop'" },
	{ "delete-folders", "BFG", "a drop rule in --rules FILE: "
	  "'build/** drop'" },
	{ NULL, NULL, NULL },
};

static const struct peer_option *peer_option(const char *name, size_t len)
{
	const struct peer_option *p;

	for (p = peer_options; p->name; p++)
		if (p->peer && strlen(p->name) == len && !strncmp(p->name, name, len))
			return p;
	return NULL;
}

static int unknown_option(struct err *e, const struct option *opts,
			  const char *name, size_t len)
{
	const char *near = nearest(opts, name, len);
	const struct peer_option *peer = peer_option(name, len);

	if (peer && peer->ours)
		return err_set(e, ERR_USAGE, "unknown option '%.*s' (%s's); in "
			       "migrate: %s", (int)len, name, peer->peer,
			       peer->ours);
	if (near)
		return err_set(e, ERR_USAGE, "unknown option '%.*s'\n"
			       "did you mean '--%s'?", (int)len, name, near);
	return err_set(e, ERR_USAGE, "unknown option '%.*s'", (int)len, name);
}

int rw_option_error(struct err *e, const struct option *opts, char **argv,
		    int next, int bad_short)
{
	const struct option *o;
	const char *arg = argv[next - 1], *name;
	size_t len;

	if (bad_short) {
		for (o = opts; o->name; o++)
			if (o->val == bad_short && o->has_arg == required_argument)
				return err_set(e, ERR_USAGE, "option '--%s' needs a "
					       "value", o->name);
		if (bad_short > 0 && bad_short < 256)
			return err_set(e, ERR_USAGE, "unknown switch '%c'",
				       bad_short);
		return err_set(e, ERR_USAGE, "unknown option '%s'", arg);
	}
	name = arg;
	while (*name == '-')
		name++;
	len = strcspn(name, "=");
	return unknown_option(e, opts, name, len);
}

static int check_quiet(void *opts, const char *arg, struct err *e)
{
	(void)arg;
	(void)e;
	((struct rw_options *)opts)->progress = -1;
	return 0;
}

static int check_map_format(void *opts, const char *arg, struct err *e)
{
	enum cmap_format f;

	(void)opts;
	if (cmap_format_parse(arg, &f) < 0)
		return err_set(e, ERR_USAGE, "--commit-map-format: expected "
			       "filter-repo, lfs or bfg, got '%s'", arg);
	return 0;
}

static int check_date_format(void *opts, const char *arg, struct err *e)
{
	(void)opts;
	if (strcmp(arg, "raw") && strcmp(arg, "raw-permissive"))
		return err_set(e, ERR_USAGE, "--date-format: expected raw or "
			       "raw-permissive, got '%s'", arg);
	return 0;
}

static int check_annex_uuid(void *opts, const char *arg, struct err *e)
{
	(void)opts;
	if (!annex_uuid_valid(arg))
		return err_set(e, ERR_USAGE, "--annex-uuid: expected a UUID as "
			       "git annex init makes them (8-4-4-4-12 lowercase "
			       "hex digits), got '%s'", arg);
	return 0;
}

static int check_object_reader(void *opts, const char *arg, struct err *e)
{
	enum odb_reader r;

	(void)opts;
	if (odb_reader_parse(arg, &r) < 0)
		return err_set(e, ERR_USAGE, "--object-reader: expected auto, "
			       "git or native, got '%s'", arg);
	return 0;
}

/* --lfs-objects DIR, as often as needed: each one is kept in order. */
static int add_lfs_objects(void *opts, const char *arg, struct err *e)
{
	struct rw_options *o = opts;

	if (o->n_lfs_objects == RW_LFS_OBJECTS_MAX)
		return err_set(e, ERR_USAGE, "--lfs-objects: at most %d "
			       "directories", RW_LFS_OBJECTS_MAX);
	o->lfs_objects[o->n_lfs_objects++] = arg;
	return 0;
}

/* --path, --path-glob, --path-regex, --paths-from-file, as often as
 * needed: each kept in order (rules_add_peer reads them). */
static int add_path(struct rw_options *o, enum rules_peer_kind kind,
		    const char *arg, const char *name, struct err *e)
{
	if (o->peer.n_paths == RULES_PEER_PATHS_MAX)
		return err_set(e, ERR_USAGE, "%s: at most %d path options; put "
			       "them in --paths-from-file FILE", name,
			       RULES_PEER_PATHS_MAX);
	o->peer.paths[o->peer.n_paths].kind = kind;
	o->peer.paths[o->peer.n_paths++].value = arg;
	return 0;
}

static int add_path_literal(void *opts, const char *arg, struct err *e)
{
	return add_path(opts, RULES_PEER_PATH, arg, "--path", e);
}

static int add_path_glob(void *opts, const char *arg, struct err *e)
{
	return add_path(opts, RULES_PEER_GLOB, arg, "--path-glob", e);
}

static int add_path_regex(void *opts, const char *arg, struct err *e)
{
	return add_path(opts, RULES_PEER_REGEX, arg, "--path-regex", e);
}

static int add_paths_file(void *opts, const char *arg, struct err *e)
{
	return add_path(opts, RULES_PEER_FILE, arg, "--paths-from-file", e);
}

static int check_missing(void *opts, const char *arg, struct err *e)
{
	(void)opts;
	if (strcmp(arg, "error") && strcmp(arg, "keep"))
		return err_set(e, ERR_USAGE, "--missing: expected error or "
			       "keep, got '%s'", arg);
	return 0;
}

static int check_threads(void *opts, const char *arg, struct err *e)
{
	uint64_t n;

	(void)opts;
	if (parse_u64(arg, strlen(arg), 1024, &n) < 0 || n == 0)
		return err_set(e, ERR_USAGE, "--threads: expected a number from "
			       "1 to 1024, got '%s'", arg);
	return 0;
}

#define F(field) offsetof(struct rw_options, field)
#define BOTH (CLI_FILTER | CLI_RUN)

/*
 * The options of the filter and of `migrate run`, in the order --help
 * lists them. An option run takes means there what it means to the
 * filter: run hands these fields to the filter it runs (run.c).
 */
static const struct cli_option shared_options[] = {
	{ "rules", 0, CLI_STRING, "FILE", F(rules), 0, NULL,
	  "the rule file: 'PATTERN [size>N] ACTION' per line,\n"
	  "first match wins; patterns as in .gitattributes or\n"
	  "re:REGEX; actions lfs, unlfs, annex, drop, keep,\n"
	  "split, replace-text=FILE (man migrate-rules;\n"
	  "examples: examples/ in the source, installed in\n"
	  "share/doc/migrate/examples)",
	  BOTH | CLI_ANALYZE },
	{ "strip-blobs-with-ids", 0, CLI_STRING, "FILE",
	  F(strip_blobs_with_ids), 0, NULL,
	  "drop the blobs with these ids (one per line, as\n"
	  "BFG and git filter-repo take them) at every path;\n"
	  "ids the history never had are said",
	  BOTH | CLI_ANALYZE },
	/* the peers' options: each adds rules after the file's (rules.h) */
	{ "include", 'I', CLI_STRING, "GLOBS", F(peer.include), 0, NULL,
	  "git lfs migrate import's: 'GLOB lfs' for each of\n"
	  "the comma-separated patterns (after the rule\n"
	  "file's rules, which win where both match)",
	  BOTH | CLI_ANALYZE },
	{ "exclude", 'X', CLI_STRING, "GLOBS", F(peer.exclude), 0, NULL,
	  "git lfs migrate import's: 'GLOB keep' for each,\n"
	  "before the lfs rules of --include or --above (alone:\n"
	  "every other file to LFS)", BOTH | CLI_ANALYZE },
	{ "above", 0, CLI_STRING, "SIZE", F(peer.above), 0, NULL,
	  "git lfs migrate import's: files of SIZE or more to\n"
	  "LFS ('* size>=SIZE lfs'; with --include, its\n"
	  "patterns); SIZE as git lfs reads it: 1MB, 1 MiB",
	  BOTH | CLI_ANALYZE },
	{ "fixup", 0, CLI_SET, NULL, F(peer.fixup), 1, NULL,
	  "git lfs migrate import --fixup: in each commit, the\n"
	  "files its own .gitattributes mark filter=lfs that\n"
	  "are no LFS pointers become pointers (no --include,\n"
	  "--exclude, --above; the .gitattributes stay)", BOTH },
	{ "strip-blobs-bigger-than", 0, CLI_STRING, "SIZE",
	  F(peer.strip_bigger), 0, NULL,
	  "git filter-repo's: '* size>SIZE drop', SIZE in\n"
	  "bytes or with K, M or G (powers of 1024): 5M",
	  BOTH | CLI_ANALYZE },
	{ "path", 0, CLI_STRING, "PATH", F(peer_arg), 0, add_path_literal,
	  "git filter-repo's: keep only PATH (a file, or a\n"
	  "directory and what is below it); every other file\n"
	  "is dropped (repeatable; with the next three, the\n"
	  "union)", BOTH | CLI_ANALYZE },
	{ "path-glob", 0, CLI_STRING, "GLOB", F(peer_arg), 0, add_path_glob,
	  "keep only the paths GLOB matches (fnmatch, as\n"
	  "filter-repo: '*' crosses '/')", BOTH | CLI_ANALYZE },
	{ "path-regex", 0, CLI_STRING, "REGEX", F(peer_arg), 0, add_path_regex,
	  "keep only the paths REGEX finds (PCRE2)",
	  BOTH | CLI_ANALYZE },
	{ "paths-from-file", 0, CLI_STRING, "FILE", F(peer_arg), 0,
	  add_paths_file,
	  "the paths of FILE, one per line, as --path, or\n"
	  "glob:GLOB or regex:REGEX (# comments)",
	  BOTH | CLI_ANALYZE },
	{ "invert-paths", 0, CLI_SET, NULL, F(peer.invert_paths), 1, NULL,
	  "drop the paths of --path, --path-glob, --path-regex\n"
	  "and --paths-from-file instead; keep the rest",
	  BOTH | CLI_ANALYZE },
	{ "replace-message", 0, CLI_STRING, "FILE", F(replace_message), 0,
	  NULL,
	  "replace the expressions of FILE in commit and tag\n"
	  "messages (git filter-repo's --replace-message\n"
	  "format: literal, regex:, glob:, ==>replacement)", BOTH },
	{ "store", 0, CLI_STRING, "DIR", F(store), 0, NULL,
	  "where LFS objects go (default <git-dir>/lfs/objects)", CLI_FILTER },
	{ "annex-dir", 0, CLI_STRING, "DIR", F(annex_dir), 0, NULL,
	  "where git-annex objects go: DIR/objects (default\n"
	  "<git-dir>/annex, git-annex's own place)", CLI_FILTER },
	{ "annex-uuid", 0, CLI_STRING, "UUID", F(annex_uuid), 0,
	  check_annex_uuid,
	  "the UUID the git-annex branch gives the repository\n"
	  "written (its annex.uuid; default: a new one,\n"
	  "printed)", CLI_FILTER },
	{ "lfs-objects", 0, CLI_STRING, "DIR", F(lfs_objects_arg), 0,
	  add_lfs_objects,
	  "unlfs: also read LFS objects from DIR (a\n"
	  ".git/lfs/objects; repeatable), after --store and\n"
	  "the source repository's lfs/objects", BOTH },
	{ "missing", 0, CLI_STRING, "WHAT", F(missing), 0, check_missing,
	  "unlfs, an object in no store: error (default: the\n"
	  "run fails naming every one) or keep (its pointer\n"
	  "stays, warned and reported)", BOTH },
	{ "commit-map", 0, CLI_STRING, "FILE", F(commit_map), 0, NULL,
	  "write the old->new commit map; the filter loads an\n"
	  "existing file first (raw ids it knows are\n"
	  "translated) and extends it; run writes the whole\n"
	  "map of the migration there", BOTH },
	{ "commit-map-format", 0, CLI_STRING, "F", F(commit_map_format), 0,
	  check_map_format,
	  "filter-repo (default: header, every commit),\n"
	  "lfs (old,new CSV, changed commits), bfg (old new,\n"
	  "sorted)", BOTH },
	{ "ref-map", 0, CLI_STRING, "FILE", F(ref_map), 0, NULL,
	  "write '<old> <new> <ref>' for every ref set", BOTH },
	{ "export-marks", 0, CLI_STRING, "FILE", F(export_marks), 0, NULL,
	  "write ':<mark> <id>' for every mark written, as\n"
	  "git fast-import --export-marks would", CLI_FILTER },
	{ "source-repo", 0, CLI_STRING, "DIR", F(source_repo), 0, NULL,
	  "repository holding commits the stream names by id\n"
	  "(default: the current directory's)", CLI_FILTER },
	{ "target-repo", 0, CLI_STRING, "DIR", F(target_repo), 0, NULL,
	  "repository holding the new commits of an earlier\n"
	  "run (default: the source repository)", CLI_FILTER },
	{ "verify-split", 0, CLI_SET, NULL, F(verify_split), 1, NULL,
	  "report every version of a split file that does\n"
	  "not reassemble from its parts byte for byte", BOTH },
	{ "dry-run", 0, CLI_SET, NULL, F(dry_run), 1, NULL,
	  "read and decide everything, store nothing, write\n"
	  "no stream (the filter: unless -o; run: no target,\n"
	  "no state); maps and reports as usual", BOTH },
	{ "output", 'o', CLI_STRING, "FILE", F(output), 0, NULL,
	  "with --dry-run: write the stream to FILE", CLI_FILTER },
	{ "report", 0, CLI_STRING, "FILE", F(report), 0, NULL,
	  "a table of what moves and how much history\n"
	  "shrinks ('-': standard error)", BOTH },
	{ "report-json", 0, CLI_STRING, "FILE", F(report_json), 0, NULL,
	  "the same as JSON", BOTH },
	{ "progress", 0, CLI_SET, NULL, F(progress), 1, NULL,
	  "a progress line on standard error even when it\n"
	  "is not a terminal", BOTH },
	{ "no-rewrite-message-ids", 0, CLI_SET, NULL, F(rewrite_message_ids),
	  0, NULL, NULL, BOTH },
	{ "rewrite-message-ids", 0, CLI_SET, NULL, F(rewrite_message_ids), 1,
	  NULL,
	  "old commit ids in messages become the new ids\n"
	  "(default: with --rules or --replace-message;\n"
	  "without, nothing changes)", BOTH },
	{ "no-prune-empty", 0, CLI_SET, NULL, F(no_prune_empty), 1, NULL,
	  "keep the commits the rules leave empty (default:\n"
	  "pruned as git filter-repo prunes them, their\n"
	  "commit-map line 40 zeros)", BOTH },
	{ "date-format", 0, CLI_STRING, "FMT", F(date_format), 0,
	  check_date_format,
	  "raw (default) or raw-permissive: the value given\n"
	  "to git fast-import, which overrides the stream's\n"
	  "'feature date-format' (rfc2822: parsed by git\n"
	  "itself; now: refused)", CLI_FILTER },
	{ "object-reader", 0, CLI_STRING, "READER", F(object_reader), 0,
	  check_object_reader,
	  "who reads objects from the repositories: auto\n"
	  "(default: migrate itself, git cat-file for what it\n"
	  "does not read), git (git cat-file) or native", BOTH },
	{ "threads", 0, CLI_STRING, "N", F(threads), 0, check_threads,
	  "1: convert blobs on one thread; from 2 (default:\n"
	  "the CPU count) N threads convert the blobs that\n"
	  "M lines further on will convert; the output is\n"
	  "the same", BOTH },
	{ "quiet", 'q', CLI_SET, NULL, F(quiet), 1, check_quiet,
	  "no warnings, no progress", BOTH | CLI_ANALYZE | CLI_PUSH },
	{ "help", 'h', CLI_HELP, NULL, 0, 0, NULL, "this text",
	  BOTH | CLI_ANALYZE | CLI_REMAP | CLI_PUSH },
	{ "version", 0, CLI_VERSION, NULL, 0, 0, NULL,
	  "the version (and git describe of a clone build)", CLI_FILTER },
	{ NULL, 0, 0, NULL, 0, 0, NULL, NULL, 0 },
};

#undef F
#undef BOTH

/* How many options of its own c has (they come first in options_of). */
static size_t c_own_count(const struct cli_command_options *c)
{
	const struct cli_option *o;
	size_t n = 0;

	for (o = c->own; o && o->name; o++)
		n++;
	return n;
}

/* The options command c takes, in --help's order (its own, then the
 * shared ones); *opts_of[i] is where the fields of the i-th are. Caller
 * frees the array. */
static const struct cli_option **options_of(const struct cli_command_options *c,
					    struct rw_options *opt,
					    void ***opts_of, size_t *n)
{
	const struct cli_option **v;
	const struct cli_option *o;
	size_t k = 0;

	*n = 0;
	for (o = c->own; o && o->name; o++)
		(*n)++;
	for (o = shared_options; o->name; o++)
		*n += !!(o->cmds & c->cmd);
	v = xmalloc((*n + 1) * sizeof(*v));
	*opts_of = xmalloc((*n + 1) * sizeof(**opts_of));
	for (o = c->own; o && o->name; o++) {
		(*opts_of)[k] = c->own_opts;
		v[k++] = o;
	}
	for (o = shared_options; o->name; o++)
		if (o->cmds & c->cmd) {
			(*opts_of)[k] = opt;
			v[k++] = o;
		}
	return v;
}

#define HELP_COLUMN 26

/* The option list of --help: "  -q, --quiet             no warnings..." */
static void print_options(FILE *f, const struct cli_option *const *v, size_t n)
{
	struct buf left = BUF_INIT(BUF_MAX_DEFAULT);
	const char *h, *nl;
	size_t i;

	for (i = 0; i < n; i++) {
		if (left.len)
			buf_printf(&left, ", ");
		if (v[i]->short_name)
			buf_printf(&left, "-%c, ", v[i]->short_name);
		buf_printf(&left, "--%s%s%s", v[i]->name, v[i]->arg ? " " : "",
			   v[i]->arg ? v[i]->arg : "");
		if (!v[i]->help)
			continue;	/* said with the next one */
		if (left.len + 2 > HELP_COLUMN - 2)
			fprintf(f, "  %s\n%*s", left.ptr, HELP_COLUMN, "");
		else
			fprintf(f, "  %-*s", HELP_COLUMN - 2, left.ptr);
		for (h = v[i]->help; (nl = strchr(h, '\n')); h = nl + 1)
			fprintf(f, "%.*s\n%*s", (int)(nl - h), h, HELP_COLUMN, "");
		fprintf(f, "%s\n", h);
		buf_reset(&left);
	}
	buf_release(&left);
}

#define SYNOPSIS_WIDTH 79

/* One word of a synopsis, on the line or on the next, under the first. */
static void synopsis_word(FILE *f, const struct buf *w, size_t indent,
			  size_t *col)
{
	if (*col + 1 + w->len > SYNOPSIS_WIDTH && *col > indent) {
		fprintf(f, "\n%*s", (int)indent, "");
		*col = indent;
	} else {
		fputc(' ', f);
		(*col)++;
	}
	fwrite(w->ptr, 1, w->len, f);
	*col += w->len;
}

static void synopsis_option(struct buf *w, const struct cli_option *o)
{
	if (o->short_name)
		buf_printf(w, "-%c|", o->short_name);
	buf_printf(w, "--%s", o->name);
	if (o->arg)
		buf_printf(w, " %s", o->arg);
}

void cli_print_synopsis(FILE *f, const char *lead,
			const struct cli_command_options *c, int short_form)
{
	struct buf w = BUF_INIT(BUF_MAX_DEFAULT);
	struct rw_options none;
	const struct cli_option **v;
	void **opts_of;
	size_t n, i, col, indent;

	memset(&none, 0, sizeof(none));
	v = options_of(c, &none, &opts_of, &n);
	fprintf(f, "%s%s", lead, c->name);
	col = indent = strlen(lead) + strlen(c->name) + 1;
	col--;
	if (short_form) {
		buf_adds(&w, "[OPTIONS]");
		synopsis_word(f, &w, indent, &col);
	}
	for (i = 0; i < n; i++) {
		const struct cli_option *o = v[i];
		int one_of = o->cmds & CLI_ONE_OF && i < c_own_count(c);

		if (o->kind == CLI_HELP || o->kind == CLI_VERSION ||
		    (short_form && !one_of))
			continue;
		buf_reset(&w);
		if (!one_of) {
			buf_addch(&w, '[');
			synopsis_option(&w, o);
			buf_addch(&w, ']');
			synopsis_word(f, &w, indent, &col);
			continue;
		}
		buf_addch(&w, '(');
		for (;;) {
			synopsis_option(&w, v[i]);
			if (i + 1 >= c_own_count(c) || !(v[i + 1]->cmds & CLI_ONE_OF))
				break;
			buf_adds(&w, " | ");
			i++;
		}
		buf_addch(&w, ')');
		synopsis_word(f, &w, indent, &col);
	}
	if (c->args) {
		buf_reset(&w);
		buf_adds(&w, c->args);
		synopsis_word(f, &w, indent, &col);
	}
	fputc('\n', f);
	buf_release(&w);
	free(v);
	free(opts_of);
}

/* 1 if command c has an option of its own called name. */
static int is_own(const struct cli_command_options *c, const char *name)
{
	const struct cli_option *o;

	for (o = c->own; o && o->name; o++)
		if (!strcmp(o->name, name))
			return 1;
	return 0;
}

/*
 * The getopt_long table of the n options v, then the shared options the
 * command does not take ("foreign": val 0, no value), so that
 * `run --commit-map M` is an unknown option rather than getopt_long's
 * abbreviation of --commit-map-format. A foreign option one of the
 * command's own shadows (remap's --commit-map) is left out: getopt_long
 * would call an abbreviation of the two ambiguous. Caller frees.
 */
static struct option *getopt_table(const struct cli_command_options *c,
				   const struct cli_option *const *v, size_t n,
				   struct buf *shorts)
{
	const struct cli_option *o;
	struct option *lo;
	size_t i, k = n;

	for (o = shared_options; o->name; o++)
		k += !(o->cmds & c->cmd);	/* at most: some may be shadowed */
	lo = xcalloc(k + 1, sizeof(*lo));
	buf_printf(shorts, "%s", c->stop_at_arg ? "+" : "");
	for (i = 0; i < n; i++) {
		lo[i].name = v[i]->name;
		lo[i].has_arg = v[i]->kind == CLI_STRING ? required_argument
							 : no_argument;
		lo[i].val = v[i]->short_name ? v[i]->short_name : 256 + (int)i;
		if (v[i]->short_name)
			buf_printf(shorts, "%c%s", v[i]->short_name,
				   v[i]->kind == CLI_STRING ? ":" : "");
	}
	for (o = shared_options; o->name; o++)
		if (!(o->cmds & c->cmd) && !is_own(c, o->name))
			lo[i++].name = o->name;
	return lo;
}

/* --list-options: "--quiet --rules= ..." (see cli.h) */
static void list_options(FILE *f, const struct cli_option *const *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		fprintf(f, "%s--%s%s", i ? " " : "", v[i]->name,
			v[i]->kind == CLI_STRING ? "=" : "");
	fputc('\n', f);
}

int cli_parse_options(const struct cli_command_options *c, int argc,
		      char **argv, struct rw_options *opt, struct err *e)
{
	struct buf shorts = BUF_INIT(BUF_MAX_DEFAULT);
	struct option *lo;
	const struct cli_option **v, *o;
	void **opts_of;
	size_t n, i;
	int ch, rc = CLI_PARSED;

	v = options_of(c, opt, &opts_of, &n);
	/* as git's --git-completion-helper: alone, and never in --help */
	if (argc == 2 && !strcmp(argv[1], "--list-options")) {
		list_options(stdout, v, n);
		free(v);
		free(opts_of);
		return CLI_DONE_HELP;
	}
	lo = getopt_table(c, v, n, &shorts);
	opterr = 0;
	optind = 1;
	while (rc == CLI_PARSED) {
		ch = getopt_long(argc, argv, shorts.ptr, lo, NULL);
		if (ch == -1)
			break;
		for (i = 0; i < n && lo[i].val != ch; i++)
			;
		if (ch == '?' || ch == 0 || i == n) {
			/* a foreign option (0) is unknown as typed; suggestions
			 * come from the options the command takes */
			lo[n].name = NULL;
			rc = rw_option_error(e, lo, argv, optind, ch ? optopt : 0);
			break;
		}
		o = v[i];
		if (o->kind == CLI_STRING)
			*(const char **)((char *)opts_of[i] + o->field) = optarg;
		else if (o->kind == CLI_SET)
			*(int *)((char *)opts_of[i] + o->field) = o->value;
		else if (o->kind == CLI_VERSION)
			rc = CLI_DONE_VERSION;
		else {
			const struct cli_command_options *const *a;

			cli_print_synopsis(stdout, "usage: ", c, 0);
			for (a = c->also; a && *a; a++)
				cli_print_synopsis(stdout, "   or: ", *a, 1);
			if (c->about)
				fputs(c->about, stdout);
			fputs("\nOptions:\n", stdout);
			print_options(stdout, v, n);
			if (c->usage_tail)
				printf("\n%s", c->usage_tail);
			rc = CLI_DONE_HELP;
		}
		if (o->check && o->check(opts_of[i], optarg, e) < 0)
			rc = -1;
	}
	free(lo);
	free(v);
	free(opts_of);
	buf_release(&shorts);
	return rc;
}
