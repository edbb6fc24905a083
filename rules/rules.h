/*
 * rules.h - the rule language (docs/DESIGN.md "Rule files"): parsing with
 * FILE:LINE:COLUMN errors, and matching a path (and a blob size) against
 * the rules, first match wins.
 *
 * A rule line is `pattern [conditions] action [options]`:
 *
 *   *.psd                         lfs
 *   'my dir/big*.bin' size>=1MiB  lfs
 *   re:^assets/.*\.(wav|ogg)$     lfs
 *   data/CVE/list   split record='^CVE-(\d{4})-' into='data/CVE/list.{key}'
 *
 * Lexical rules. Words are separated by spaces or tabs. A word that starts
 * with `#` starts a comment that runs to the end of the line (so `a#b` is
 * a pattern, `a #b` is `a` and a comment). Blank lines are skipped; a final
 * CR is dropped (CRLF files). A value is quoted only when it starts with a
 * quote: '...' is literal; "..." knows two escapes, \" and \\, and keeps any
 * other backslash as it is (so "\d" is \d). An unquoted value runs to the
 * next blank and takes quotes and backslashes literally. A closing quote
 * must be followed by a blank or the end of the line.
 *
 * Patterns. `re:VALUE` is a PCRE2 pattern (byte mode, PCRE2_DOLLAR_ENDONLY)
 * SEARCHED in the path: `re:\.bin$` matches every path ending in .bin, and
 * a regex meant for the whole path is written ^...$ (the choice mirrors
 * grep and keeps the docs/DESIGN.md example meaning what it says). Any other
 * word is a glob with .gitattributes semantics, exactly as git applies
 * them (attr.c path_matches + wildmatch.c, case-sensitive):
 *   - no `/` in the pattern: matched against the basename at any depth;
 *   - otherwise anchored at the root (a leading `/` is dropped), matched
 *     with WM_PATHNAME: `*` and `?` and `[...]` never match `/`, `**` in
 *     `**` crosses directories only as a whole component: leading
 *     (`**` then `/x`), trailing (`x/` then `**`) or inner (`a/`, `**`,
 *     `/b`, which also matches a/b); elsewhere it is `*`;
 *   - `[...]`, `[!...]`, `[^...]`, ranges, `[[:alpha:]]` classes, `\`
 *     escapes. Classes are ASCII only and follow git's ctype: [:space:] is
 *     space, \t, \n, \r (not \v, \f).
 * `'re:x'` (quoted) is a glob for the literal name re:x. Patterns git
 * would never match, or that git versions read differently, are errors,
 * not silent no-ops: a trailing `/` (gitattributes never match
 * directories: write `dir/` `**` instead), a leading `!` (negative patterns
 * are not allowed in gitattributes: write \! for a literal !), an
 * unterminated `[`, an unknown [:class:], a lone trailing `\`, and a `**`
 * glued to the literal text before it at the start of an anchored pattern
 * (`foo**` `/bar`: older git lets it cross `/`, newer git reads it as `*`).
 *
 * Conditions: size>N, size>=N, size<N, size<=N with N in bytes or with a
 * unit B kB MB GB TB (powers of 1000) or KiB MiB GiB TiB (powers of 1024),
 * whole numbers only, overflow checked. At most one lower and one upper
 * bound per rule; a rule no size can satisfy is an error.
 *
 * Actions: lfs, unlfs, annex, drop, keep, split, replace-text=FILE
 * (unlfs takes no size condition: a pointer's size is not its file's).
 * split takes the options record= (required, must compile as PCRE2),
 * into= (required), head=; annex takes mode= (unlocked, the default, or
 * locked) and backend= (SHA256E, the default, or SHA256); replace-text's
 * FILE (a value: quoted when it has a blank) is an expressions file
 * (replace/replace.h) that rewrite/blob reads, kept as the option
 * "replace-text", and it takes binary= (no, the default, or yes). The
 * others take none.
 *
 * Errors are ERR_USAGE with the message "FILE:LINE:COLUMN: what", columns
 * counted in bytes from 1 (inside a "..." value, escapes before the spot
 * PCRE2 reports shift the column by one each).
 *
 * Many regex rules are matched together. A regex that starts with `^`
 * and plain characters (letters, digits, / _ - , : @ % = ~ ! ' " < > & ;)
 * in a pattern PCRE2 calls anchored, with no top-level `|` and combinable
 * (below), can only match a path that starts with those characters, the
 * last one left out (a quantifier may follow it), at most 32 of them: such
 * rules are indexed by that prefix, and a path only tries the rules of
 * the prefixes it starts with plus every other rule (globs, other
 * regexes), merged by position so the first rule in file order still
 * wins. Then the combinable ones (no back references, recursion, named
 * groups, (* verbs, (?x or \Q) of each list (one prefix's, or the
 * unindexed ones) are joined, up to 256 at a time in file order, into one
 * PCRE2 alternation that tells at once whether any of them matches; only
 * then are they tried one by one, so a failing regex is still named.
 * 100,000 `re:^src/modNNNNN/.*\.dat$` rules against 10,000 paths: 0.8 s
 * in all (release build), nearly all of it compiling; regexes without a
 * literal start (or all sharing one) are still tried 256 per alternation,
 * about 14 ms per path for 100,000 of them.
 *
 * Thread safety: a struct rules is read-only after parsing except for the
 * PCRE2 match data and the per-path state of those alternations, so
 * matching on one struct rules from two threads at once is not safe.
 */
#ifndef MIGRATE_RULES_H
#define MIGRATE_RULES_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "common/common.h"

/* Limits on rule files: beyond them parsing fails with a message. */
#define RULES_MAX_FILE ((size_t)16 << 20)
#define RULES_MAX_LINE 4096

enum rules_action {
	RULES_LFS,
	RULES_ANNEX,
	RULES_DROP,
	RULES_KEEP,
	RULES_SPLIT,
	RULES_UNLFS,
	RULES_REPLACE_TEXT,
};

struct rules;
struct rule;

/*
 * Reads and parses the rule file at path. On success *out is a new rule
 * set the caller frees with rules_free. On failure returns -1, *out is
 * untouched and e says where (ERR_USAGE, also for a file that cannot be
 * read).
 */
int rules_load(struct rules **out, const char *path, struct err *e);

/*
 * Parses len bytes of rule text; name is the file name used in messages.
 * Same ownership and failure as rules_load.
 */
int rules_parse(struct rules **out, const char *text, size_t len,
		const char *name, struct err *e);

/* Frees a rule set and every rule in it. NULL is fine. */
void rules_free(struct rules *r);

/* Number of rules, and rule i (0-based, file order; borrowed). */
size_t rules_count(const struct rules *r);
const struct rule *rules_get(const struct rules *r, size_t i);

/*
 * Parses a size as rules write it, N with an optional unit (B, kB, MB, GB,
 * TB, KiB, MiB, GiB, TiB), from the len bytes at s. 0 with *out set, or -1
 * when it is not one (or overflows). Cannot fail otherwise.
 */
int rules_parse_size(const char *s, size_t len, uint64_t *out);

/* 1 when some rule has a size condition, else 0. Cannot fail. */
int rules_have_size(const struct rules *r);

/*
 * Finds the first rule matching the path (len bytes, no NUL needed) and
 * the blob size. Returns 0 with *out set to the rule, or to NULL when no
 * rule matches; -1 when a regex match fails (PCRE2 match limit), with e
 * naming the rule. *out is borrowed from r.
 */
int rules_match(const struct rule **out, const struct rules *r,
		const char *path, size_t len, uint64_t size, struct err *e);

/*
 * rules_match without the prefix index and the combined regexes: every
 * rule is tried on its own, in file order. The same answer (tests/fuzz/fuzz_rules.c checks it); for tests.
 */
int rules_match_each(const struct rule **out, const struct rules *r,
		     const char *path, size_t len, uint64_t size, struct err *e);

/* rules_match_unsized returns this when the answer depends on the size. */
#define RULES_NEED_SIZE 1

/*
 * Like rules_match, for a blob whose size is not known yet: returns 0 with
 * *out set (rule or NULL) when the answer is the same for every size, and
 * RULES_NEED_SIZE (*out untouched) when a rule with a size condition
 * matches the path before any rule without one does. -1 as rules_match.
 */
int rules_match_unsized(const struct rule **out, const struct rules *r,
			const char *path, size_t len, struct err *e);

/*
 * 1 when rule i (0-based) can never match because an earlier rule always
 * wins, with that rule's index in *by; 0 otherwise (*by untouched). The
 * test is conservative (no false alarm): the earlier rule has the same
 * kind (glob or re:) and the same pattern text, or is a glob that matches
 * every path (`*`, `**`, and `**` then `/` then `*`); and its size
 * condition, if any, covers the later rule's (a later rule without a
 * condition is covered only by an earlier one without a condition). Rules
 * that win together (size<1MB then size>=1MB) are not looked for. Cannot
 * fail.
 */
int rules_shadowed(const struct rules *r, size_t i, size_t *by);

/*
 * Warns (common.h warning()) once per rule that can never match (rules_shadowed):
 * "FILE:LINE: warning: rule never matches: line N ('PATTERN') always wins",
 * and returns how many. Never an error.
 */
size_t rules_warn_shadowed(const struct rules *r);

/* ---- blobs by id: `blob:<id> drop`, --strip-blobs-with-ids ---- */

#define RULES_BLOB_RAW 20	/* bytes of a (SHA-1) blob id */

/*
 * The blob:<id> rule for the blob with this raw id (RULES_BLOB_RAW
 * bytes), or NULL. Such a rule matches no path (rules_match never returns
 * it): it drops its blob wherever the blob is, before any path rule.
 * r may be NULL.
 */
const struct rule *rules_match_blob(const struct rules *r,
				    const unsigned char *id);
/* How many distinct ids the blob:<id> rules name (0 for NULL). */
size_t rules_blob_count(const struct rules *r);
int rules_rule_is_blob(const struct rule *rule);

/*
 * Adds a `blob:<id> drop` rule for each id of text (the file name, for
 * messages): ids of 40 hex digits apart by blanks or newlines, as BFG and
 * git filter-repo --strip-blobs-with-ids read them; `#` starts a comment.
 * The rules take the line numbers of that file. -1 with ERR_USAGE naming
 * file, line and column at the first word that is no id (rules added
 * before it stay; the caller frees the set).
 */
int rules_add_blob_ids(struct rules *r, const char *text, size_t len,
		       const char *name, struct err *e);
/* The same from the file at path (--strip-blobs-with-ids FILE). */
int rules_load_blob_ids(struct rules *r, const char *path, struct err *e);

/* ---- rules added to a set, and written back ---- */

/*
 * Parses len bytes of rule text and appends its rules to set, after
 * those it has, as rules of the file `name` (messages and
 * rules_rule_file say it with the text's line numbers; a relative
 * replace-text=FILE is taken from name's directory). Lines may be
 * max_line bytes long (0: RULES_MAX_LINE). -1 with ERR_USAGE
 * "NAME:LINE:COLUMN: what" at the first error; the rules before it stay
 * (the caller frees the set).
 */
int rules_add_text(struct rules *set, const char *text, size_t len,
		   const char *name, size_t max_line, struct err *e);

/*
 * Appends to out the rule as a line of the rule language (no LF) that
 * parses back to the same rule: the pattern (re: for a regex, quoted
 * when it must be), the size bounds as size>=N and size<=N, the action
 * and its options. Cannot fail.
 */
void rules_rule_format(struct buf *out, const struct rule *rule);

/* Appends s[0..n) as a value of the rule language: bare when it can be,
 * else '...', else "..." with \" and \\. Cannot fail. */
void rules_format_value(struct buf *out, const char *s, size_t n);
/* The same, always quoted (a pattern of another language, which bare
 * could read as re: or blob:). Cannot fail. */
void rules_quote_value(struct buf *out, const char *s, size_t n);

/* ---- the peers' options (peers.c) ----
 *
 * The options of git lfs migrate import and git filter-repo that say what
 * happens to files, each read as the rules it means. rules_add_peer adds
 * them after the set's own rules (the rule file's: being first, they win
 * where both match), in this order, each under the option's name:
 *
 *   --strip-blobs-bigger-than N   `* size>N drop` (N: digits, then K, M
 *                                 or G, powers of 1024: filter-repo's)
 *   --path P, --path-glob G,      filter-repo's path selection: P itself
 *   --path-regex R,               or below it; G an fnmatch glob of the
 *   --paths-from-file F           whole path (* crosses '/'; a G not ending
 *                                 in * also takes G/ *); R searched
 *                                 (PCRE2); F a selector per line (literal:,
 *                                 glob:, regex:; # comments; ==> refused).
 *                                 With invert_paths, a drop rule per
 *                                 selector; without, one rule that drops
 *                                 every path no selector takes
 *                                 (`re:^(?!...) drop`).
 *   --exclude=GLOBS               `GLOB keep` each (comma-separated,
 *                                 .gitattributes patterns, git lfs's)
 *   --include=GLOBS, --above=N    `GLOB lfs` each, `GLOB size>=N lfs`
 *                                 with --above (git lfs migrate takes a
 *                                 size equal to N as above it); without
 *                                 --include, `* lfs` (every other file).
 *                                 N as git lfs parses it: 1000, 20 MB,
 *                                 1.5GiB (units in any case; b kb mb gb
 *                                 tb pb, kib ... pib).
 *   --fixup                       no rule: a comment line saying it. The
 *                                 blob's way (rewrite/blob/attrs.c)
 *                                 converts, per commit, the files that
 *                                 commit's own .gitattributes mark
 *                                 filter=lfs, but those a rule decides;
 *                                 with --include, --exclude or --above
 *                                 it is refused (as git lfs migrate
 *                                 import 3.3 refuses them).
 */
#define RULES_PEER_PATHS_MAX 256

enum rules_peer_kind {
	RULES_PEER_PATH, RULES_PEER_GLOB, RULES_PEER_REGEX, RULES_PEER_FILE,
};

struct rules_peer {
	const char *include, *exclude, *above;	/* git lfs migrate import */
	const char *strip_bigger;		/* git filter-repo */
	int invert_paths;
	int fixup;			/* git lfs migrate import --fixup */
	struct rules_peer_path {
		enum rules_peer_kind kind;
		const char *value;
	} paths[RULES_PEER_PATHS_MAX];		/* in the order given */
	size_t n_paths;
};

/* 1 when one of the options is given. */
int rules_peer_given(const struct rules_peer *p);

/*
 * Adds to set the rules of p (above), and to text, for each option, a
 * line "# NAME" and the rule lines it added (what a later run compares).
 * -1 with ERR_USAGE naming the option (a size it cannot read,
 * --invert-paths alone), the option and its count (NAME:N:COLUMN: a
 * regex that does not compile, the N-th --path-regex) or F:LINE (a line
 * of --paths-from-file). Rules added before the error stay.
 */
int rules_add_peer(struct rules *set, const struct rules_peer *p,
		   struct buf *text, struct err *e);

/* ---- one rule (all borrowed from the rule set, none can fail) ---- */

size_t rules_rule_line(const struct rule *rule);	/* 1-based */
/* The name of the file the rule was read from: the rule file's, or the
 * --strip-blobs-with-ids file's for the ids added from it. */
const char *rules_rule_file(const struct rule *rule);
enum rules_action rules_rule_action(const struct rule *rule);
/* "lfs", "annex", "drop", "keep", "split", "unlfs" or "replace-text". */
const char *rules_action_name(enum rules_action a);
/* The pattern after unquoting, without any re: prefix; NUL-terminated. */
const char *rules_rule_pattern(const struct rule *rule, size_t *len);
int rules_rule_is_regex(const struct rule *rule);
/*
 * 1 when the rule has a size condition, with the inclusive bounds in *lo
 * and *hi (either may be NULL); 0 otherwise (bounds untouched).
 */
int rules_rule_size(const struct rule *rule, uint64_t *lo, uint64_t *hi);
/*
 * The value of option key ("record", "into", "head", "mode", "backend",
 * "replace-text", "binary"), unquoted and
 * NUL-terminated, with its length in *len (may be NULL); NULL when the
 * rule does not have it.
 */
const char *rules_rule_option(const struct rule *rule, const char *key,
			      size_t *len);
/* The value of option key as a file path into out, relative to the
 * directory of the rule's file unless absolute (replace-text=FILE): 1, or
 * 0 when the rule does not have it (out empty). */
int rules_option_path(const struct rule *rule, const char *key,
		      struct buf *out);

/* ---- .gitattributes lines (docs/FORMATS.md §7) ---- */

/*
 * git ignores (with a warning) a .gitattributes line of this many bytes or
 * more, its LF not counted (git 2.39.1, 2.38.3, ... 2.30.7 and later).
 */
#define RULES_ATTR_LINE_MAX 2048

/*
 * Appends to out the .gitattributes line `<pattern> <attrs>\n` for a glob
 * rule; git matches the pattern exactly like the rule. It is the rule's
 * glob as it is when it has no blank (a first `#` or `"` escaped with `\`,
 * `[attr]` at the start reordered as `[tatr]`: what `git lfs track`
 * writes), and C-quoted when it has one (space, TAB, CR, LF): git 2.13 and
 * later read a pattern that starts with `"` as a C string, and nothing
 * else keeps a blank (`[[:space:]]`, git-lfs's way, also matches the other
 * blanks). Returns -1 with ERR_USAGE for a regex rule, for a line of
 * RULES_ATTR_LINE_MAX bytes or more, or when out would exceed its max (out
 * is then as it was).
 */
int rules_rule_attr_line(struct buf *out, const struct rule *rule,
			 const char *attrs, struct err *e);

/*
 * Appends to out the .gitattributes line `<pattern> <attrs>\n` whose
 * pattern matches exactly one path: a leading `/` (anchored), the glob
 * specials * ? [ \ escaped with a backslash (`git lfs migrate import
 * --above` writes the same), C-quoted as above when the path has a blank.
 * Returns -1 with ERR_USAGE (naming the path) for an empty path, one with
 * a NUL byte, a line of RULES_ATTR_LINE_MAX bytes or more, or when out would
 * exceed its max (out is then as it was).
 */
int rules_attr_path_line(struct buf *out, const char *path, size_t len,
			 const char *attrs, struct err *e);

#endif
