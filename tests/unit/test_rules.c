/*
 * test_rules.c - the rule language: what parses into what, every error
 * with its FILE:LINE:COLUMN, first-match lookup with sizes and regexes,
 * the .gitattributes forms, and every .rules file in examples/.
 *
 * Glob semantics themselves are judged by git in
 * tests/integration/rules_checkattr.sh; the few glob cases here only pin
 * the ones the engine leans on.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/rules.h"

/* ---- helpers ---- */

static struct rules *parse_ok(const char *text)
{
	struct rules *r = NULL;
	struct err e = ERR_INIT;

	if (rules_parse(&r, text, strlen(text), "t.rules", &e) < 0)
		fail_msg("unexpected error: %s", e.msg);
	return r;
}

/* The rule the path (with size) gets, as "LINE:ACTION", or "none". */
static const char *verdict(const struct rules *r, const char *path,
			   uint64_t size)
{
	static char out[64];
	const struct rule *hit = NULL;
	struct err e = ERR_INIT;

	assert_int_equal(rules_match(&hit, r, path, strlen(path), size, &e), 0);
	if (!hit)
		return "none";
	snprintf(out, sizeof(out), "%zu:%s", rules_rule_line(hit),
		 rules_action_name(rules_rule_action(hit)));
	return out;
}

struct bad_case {
	const char *text;
	const char *where;	/* "t.rules:LINE:COL: " */
	const char *says;	/* a phrase of the message */
};

static void expect_error(const struct bad_case *c)
{
	struct rules *r = NULL;
	struct err e = ERR_INIT;

	if (rules_parse(&r, c->text, strlen(c->text), "t.rules", &e) == 0)
		fail_msg("parsed, expected %s%s: %s", c->where, c->says, c->text);
	assert_null(r);
	assert_int_equal(e.kind, ERR_USAGE);
	if (strncmp(e.msg, c->where, strlen(c->where)) || !strstr(e.msg, c->says))
		fail_msg("for %s\n  got: %s\n  expected: %s...%s", c->text,
			 e.msg, c->where, c->says);
}

/* ---- parsing ---- */

static void test_design_example(void **state)
{
	struct rules *r;
	const struct rule *x;
	uint64_t lo = 0, hi = 0;
	size_t n;

	(void)state;
	r = parse_ok(
		"# pattern             conditions    action  options\n"
		"*.psd                               lfs\n"
		"*.bin                 size>=1MiB    lfs\n"
		"re:^assets/.*\\.(wav|ogg)$           lfs\n"
		"/vendor/keep.bin                    keep\n"
		"/secrets.env                        drop\n"
		"data/CVE/list                       split   record='^CVE-(\\d{4})-' "
		"into='data/CVE/list.{key}' head='data/CVE/list.head'\n"
		"*.iso                               annex\n");
	assert_int_equal(rules_count(r), 7);
	assert_true(rules_have_size(r));

	x = rules_get(r, 0);
	assert_int_equal(rules_rule_line(x), 2);
	assert_int_equal(rules_rule_action(x), RULES_LFS);
	assert_string_equal(rules_rule_pattern(x, &n), "*.psd");
	assert_int_equal(n, 5);
	assert_false(rules_rule_is_regex(x));
	assert_false(rules_rule_size(x, &lo, &hi));

	x = rules_get(r, 1);
	assert_true(rules_rule_size(x, &lo, &hi));
	assert_true(lo == 1048576 && hi == UINT64_MAX);

	x = rules_get(r, 2);
	assert_true(rules_rule_is_regex(x));
	assert_string_equal(rules_rule_pattern(x, NULL), "^assets/.*\\.(wav|ogg)$");

	assert_int_equal(rules_rule_action(rules_get(r, 3)), RULES_KEEP);
	assert_int_equal(rules_rule_action(rules_get(r, 4)), RULES_DROP);

	x = rules_get(r, 5);
	assert_int_equal(rules_rule_action(x), RULES_SPLIT);
	assert_string_equal(rules_rule_option(x, "record", &n), "^CVE-(\\d{4})-");
	assert_int_equal(n, 13);
	assert_string_equal(rules_rule_option(x, "into", NULL), "data/CVE/list.{key}");
	assert_string_equal(rules_rule_option(x, "head", NULL), "data/CVE/list.head");
	assert_null(rules_rule_option(rules_get(r, 0), "record", NULL));
	assert_null(rules_rule_option(x, "nope", NULL));

	assert_int_equal(rules_rule_action(rules_get(r, 6)), RULES_ANNEX);
	assert_string_equal(rules_action_name(RULES_ANNEX), "annex");
	assert_null(rules_get(r, 7));
	rules_free(r);
}

static void test_comment_positions(void **state)
{
	struct rules *r;
	struct err e = ERR_INIT;
	const char *bad = "d keep#x\n";

	(void)state;
	r = parse_ok("\n   \n\t# whole line\n"
		     "a#b lfs # trailing comment\r\n"
		     "c\tdrop\t#tab comment\n"
		     "'#d' keep\n");
	assert_int_equal(rules_count(r), 3);
	assert_int_equal(rules_rule_line(rules_get(r, 0)), 4);
	assert_string_equal(rules_rule_pattern(rules_get(r, 0), NULL), "a#b");
	assert_int_equal(rules_rule_line(rules_get(r, 2)), 6);
	assert_string_equal(verdict(r, "x/#d", 0), "6:keep");
	rules_free(r);

	/* '#' inside a word is not a comment: keep#x is no action */
	r = NULL;
	assert_int_equal(rules_parse(&r, bad, strlen(bad), "t.rules", &e), -1);
	assert_non_null(strstr(e.msg, "t.rules:1:3: unknown action 'keep#x'"));
}

static void test_quoting(void **state)
{
	struct rules *r;

	(void)state;
	r = parse_ok("'my dir/*.bin' lfs\n"
		     "\"say \\\"hi\\\" \\\\ \\d\" keep\n"
		     "'re:literal' drop\n"
		     "re:'^a b$' lfs\n"
		     "x split record=\"^(\\d+) \\\"\" into='p/{key}' head=h\n"
		     "it's lfs\n");
	assert_string_equal(rules_rule_pattern(rules_get(r, 0), NULL), "my dir/*.bin");
	/* only \" and \\ are escapes in "..."; \d stays */
	assert_string_equal(rules_rule_pattern(rules_get(r, 1), NULL),
			    "say \"hi\" \\ \\d");
	assert_false(rules_rule_is_regex(rules_get(r, 2)));
	assert_string_equal(rules_rule_pattern(rules_get(r, 2), NULL), "re:literal");
	assert_true(rules_rule_is_regex(rules_get(r, 3)));
	assert_string_equal(rules_rule_pattern(rules_get(r, 3), NULL), "^a b$");
	assert_string_equal(rules_rule_option(rules_get(r, 4), "record", NULL),
			    "^(\\d+) \"");
	assert_string_equal(rules_rule_option(rules_get(r, 4), "head", NULL), "h");
	/* a quote inside a bare word is literal */
	assert_string_equal(rules_rule_pattern(rules_get(r, 5), NULL), "it's");

	assert_string_equal(verdict(r, "my dir/x.bin", 0), "1:lfs");
	assert_string_equal(verdict(r, "re:literal", 0), "3:drop");
	assert_string_equal(verdict(r, "a b", 0), "4:lfs");
	assert_string_equal(verdict(r, "a bc", 0), "none");
	rules_free(r);
}

static void test_sizes(void **state)
{
	static const struct {
		const char *cond;
		uint64_t lo, hi;
	} cases[] = {
		{ "size>0", 1, UINT64_MAX },
		{ "size>=10", 10, UINT64_MAX },
		{ "size<10", 0, 9 },
		{ "size<=10B", 0, 10 },
		{ "size>=1kB", 1000, UINT64_MAX },
		{ "size>=2MB", 2000000, UINT64_MAX },
		{ "size>=3GB", 3000000000ULL, UINT64_MAX },
		{ "size>=1TB", 1000000000000ULL, UINT64_MAX },
		{ "size>=1KiB", 1024, UINT64_MAX },
		{ "size>=1MiB", 1048576, UINT64_MAX },
		{ "size>=1GiB", 1073741824ULL, UINT64_MAX },
		{ "size>=1TiB", 1099511627776ULL, UINT64_MAX },
		{ "size<=18446744073709551615", 0, UINT64_MAX },
		{ "size>=1kB size<1MB", 1000, 999999 },
		{ "size<=5 size>=5", 5, 5 },
	};
	char text[128];
	struct rules *r;
	uint64_t lo, hi;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(text, sizeof(text), "* %s lfs\n", cases[i].cond);
		r = parse_ok(text);
		assert_true(rules_rule_size(rules_get(r, 0), &lo, &hi));
		if (lo != cases[i].lo || hi != cases[i].hi)
			fail_msg("%s: got [%llu, %llu]", cases[i].cond,
				 (unsigned long long)lo, (unsigned long long)hi);
		assert_true(rules_have_size(r));
		rules_free(r);
	}
	r = parse_ok("* lfs\n");
	assert_false(rules_have_size(r));
	rules_free(r);
}

/* ---- every error, with its place ---- */

static void test_errors(void **state)
{
	static const struct bad_case cases[] = {
		{ "*.bin lfz\n", "t.rules:1:7: ", "unknown action 'lfz'" },
		{ "*.bin size>1MB unlfs\n", "t.rules:1:16: ", "unlfs takes no size condition" },
		{ "*.bin unlfs x=1\n", "t.rules:1:13: ", "action 'unlfs' takes no options" },
		{ "*.bin size>10mb lfs\n", "t.rules:1:14: ", "unknown size unit 'mb'" },
		{ "*.bin size>10 KiB lfs\n", "t.rules:1:15: ", "unknown action 'KiB'" },
		{ "'abc lfs\n", "t.rules:1:1: ", "unterminated single quote" },
		{ "\"abc lfs\n", "t.rules:1:1: ", "unterminated double quote" },
		{ "x split record='a into=b\n", "t.rules:1:16: ", "unterminated single quote" },
		{ "'a'b lfs\n", "t.rules:1:4: ", "unexpected 'b' after the quoted value" },
		{ "re:a(b lfs\n", "t.rules:1:7: ", "bad regex in pattern: missing closing parenthesis" },
		{ "re:'x)' lfs\n", "t.rules:1:6: ", "bad regex in pattern" },
		{ "re: lfs\n", "t.rules:1:4: ", "empty regex in pattern" },
		{ "size>1MB lfs\n", "t.rules:1:1: ", "missing pattern before the size condition" },
		{ "lfs\n", "t.rules:1:1: ", "missing pattern before action 'lfs'" },
		{ "split record=x into=y\n", "t.rules:1:1: ", "missing pattern before action 'split'" },
		{ "*.bin\n", "t.rules:1:6: ", "missing action after the pattern" },
		{ "*.bin   # only a comment\n", "t.rules:1:9: ", "missing action" },
		{ "*.bin size>1\n", "t.rules:1:13: ", "missing action" },
		{ "x split foo=1 record=a into=b\n", "t.rules:1:9: ", "unknown option 'foo' for split" },
		{ "x lfs a=b\n", "t.rules:1:7: ", "action 'lfs' takes no options" },
		{ "x keep record=a\n", "t.rules:1:8: ", "action 'keep' takes no options" },
		{ "x annex record=a\n", "t.rules:1:9: ", "unknown option 'record' for annex" },
		{ "x split mode=locked record=a into=b\n", "t.rules:1:9: ", "unknown option 'mode' for split" },
		{ "x annex mode=frozen\n", "t.rules:1:14: ", "mode must be unlocked or locked" },
		{ "x annex backend=MD5E\n", "t.rules:1:17: ", "backend must be SHA256E or SHA256" },
		{ "x annex mode=locked mode=unlocked\n", "t.rules:1:21: ", "option 'mode' given twice" },
		{ "x lfs extra\n", "t.rules:1:7: ", "unexpected 'extra' after the action" },
		{ "x lfs size>1\n", "t.rules:1:7: ", "size conditions go before the action" },
		{ "x split record=a record=b into=c\n", "t.rules:1:18: ", "option 'record' given twice" },
		{ "x split into=y\n", "t.rules:1:3: ", "split needs record=" },
		{ "x split record=a\n", "t.rules:1:3: ", "split needs record=" },
		{ "x split record= into=y\n", "t.rules:1:16: ", "missing value after 'record='" },
		{ "x split record='' into=y\n", "t.rules:1:16: ", "empty value for 'record'" },
		{ "x split record='(' into=y\n", "t.rules:1:18: ", "bad regex in record=" },
		{ "x split record=a[ into=y\n", "t.rules:1:18: ", "bad regex in record=" },
		{ "dir/ lfs\n", "t.rules:1:4: ", "pattern ends with '/'" },
		{ "/ lfs\n", "t.rules:1:1: ", "pattern ends with '/'" },
		{ "!x lfs\n", "t.rules:1:1: ", "negative patterns are not allowed" },
		{ "a[b lfs\n", "t.rules:1:2: ", "unterminated '['" },
		{ "x/[[:alpha:] lfs\n", "t.rules:1:3: ", "unterminated '['" },
		{ "[[:foo:]] lfs\n", "t.rules:1:1: ", "unknown [:class:]" },
		{ "a\\ lfs\n", "t.rules:1:2: ", "lone '\\'" },
		{ "a/b**/c lfs\n", "t.rules:1:4: ", "'**' glued to a name" },
		{ "/a/b** lfs\n", "t.rules:1:5: ", "'**' glued to a name" },
		{ "'' lfs\n", "t.rules:1:2: ", "empty pattern" },
		{ "x size>99999999999999999999 lfs\n", "t.rules:1:8: ", "size too large" },
		{ "x size>20000000000GiB lfs\n", "t.rules:1:8: ", "size too large" },
		{ "x size>1.5MB lfs\n", "t.rules:1:9: ", "whole numbers" },
		{ "x size>MB lfs\n", "t.rules:1:8: ", "expected a number" },
		{ "x size 10 lfs\n", "t.rules:1:3: ", "expected size>N" },
		{ "x size=10 lfs\n", "t.rules:1:3: ", "expected size>N" },
		{ "x size!=10 lfs\n", "t.rules:1:3: ", "expected size>N" },
		{ "x size>1 size>=2 lfs\n", "t.rules:1:10: ", "second lower bound" },
		{ "x size<1 size<=2 lfs\n", "t.rules:1:10: ", "second upper bound" },
		{ "x size>10 size<5 lfs\n", "t.rules:1:11: ", "exclude every size" },
		{ "x size<0 lfs\n", "t.rules:1:3: ", "no size is smaller than 0" },
		{ "x size>18446744073709551615 lfs\n", "t.rules:1:3: ", "no size is larger" },
		/* line numbers count blank and comment lines */
		{ "\n# c\n*.x  bad\n", "t.rules:3:6: ", "unknown action 'bad'" },
		{ "a lfs\nb lfs\r\nc nope\r\n", "t.rules:3:3: ", "unknown action 'nope'" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_error(&cases[i]);
}

static void test_error_nul_and_long_line(void **state)
{
	static const char nul[] = "a lfs\nb\0c lfs\n";
	char *longl = malloc(RULES_MAX_LINE + 16);
	struct rules *r = NULL;
	struct err e = ERR_INIT;

	(void)state;
	assert_int_equal(rules_parse(&r, nul, sizeof(nul) - 1, "t.rules", &e), -1);
	assert_string_equal(e.msg, "t.rules:2:2: NUL byte in rule file");

	memset(longl, 'x', RULES_MAX_LINE + 10);
	memcpy(longl + RULES_MAX_LINE + 6, " lfs", 4);
	assert_int_equal(rules_parse(&r, longl, RULES_MAX_LINE + 10, "t.rules", &e), -1);
	assert_non_null(strstr(e.msg, "t.rules:1:1: line longer than"));
	/* exactly at the limit is fine */
	memcpy(longl + RULES_MAX_LINE - 4, " lfs", 4);
	assert_int_equal(rules_parse(&r, longl, RULES_MAX_LINE, "t.rules", &e), 0);
	rules_free(r);
	free(longl);
}

static void test_error_file(void **state)
{
	size_t big = RULES_MAX_FILE + 1;
	char *text = calloc(1, big);
	struct rules *r = NULL;
	struct err e = ERR_INIT;

	(void)state;
	assert_int_equal(rules_load(&r, "/nonexistent/x.rules", &e), -1);
	assert_int_equal(e.kind, ERR_USAGE);
	assert_non_null(strstr(e.msg, "cannot open rule file /nonexistent/x.rules"));
	assert_null(r);

	assert_int_equal(rules_parse(&r, text, big, "big.rules", &e), -1);
	assert_non_null(strstr(e.msg, "big.rules: rule file larger than"));
	free(text);
}

/* ---- matching ---- */

static void test_first_match_and_sizes(void **state)
{
	struct rules *r;

	(void)state;
	r = parse_ok("/vendor/keep.bin keep\n"
		     "*.bin size>=1MiB lfs\n"
		     "*.bin drop\n"
		     "docs/**/*.png lfs\n"
		     "re:\\.(wav|ogg)$ annex\n");
	assert_string_equal(verdict(r, "vendor/keep.bin", 1 << 30), "1:keep");
	assert_string_equal(verdict(r, "x/vendor/keep.bin", 1 << 30), "2:lfs");
	assert_string_equal(verdict(r, "a/b.bin", 1048576), "2:lfs");
	assert_string_equal(verdict(r, "a/b.bin", 1048575), "3:drop");
	assert_string_equal(verdict(r, "docs/a/b/c.png", 0), "4:lfs");
	assert_string_equal(verdict(r, "docs/c.png", 0), "4:lfs");
	assert_string_equal(verdict(r, "x/docs/c.png", 0), "none");
	/* re: is searched: no anchors means anywhere */
	assert_string_equal(verdict(r, "music/a.wav", 0), "5:annex");
	assert_string_equal(verdict(r, "music/a.wav.txt", 0), "none");
	/* a path is counted, not NUL-terminated */
	assert_string_equal(verdict(r, "", 0), "none");
	rules_free(r);
}

static void test_unsized(void **state)
{
	struct rules *r;
	const struct rule *hit = NULL;
	struct err e = ERR_INIT;

	(void)state;
	r = parse_ok("*.txt keep\n*.bin size>1kB lfs\n*.bin drop\n");
	assert_int_equal(rules_match_unsized(&hit, r, "a.txt", 5, &e), 0);
	assert_int_equal(rules_rule_line(hit), 1);
	assert_int_equal(rules_match_unsized(&hit, r, "a.bin", 5, &e), RULES_NEED_SIZE);
	assert_int_equal(rules_match_unsized(&hit, r, "a.png", 5, &e), 0);
	assert_null(hit);
	rules_free(r);
}

static void test_glob_basics(void **state)
{
	struct rules *r;

	(void)state;
	r = parse_ok("foo lfs\n"		/* basename, any depth */
		     "/top keep\n"		/* anchored */
		     "a/*.c drop\n"		/* inner slash anchors; * stays in a component */
		     "**/deep/x annex\n"
		     "w/** lfs\n"
		     "q?q keep\n");
	assert_string_equal(verdict(r, "foo", 0), "1:lfs");
	assert_string_equal(verdict(r, "a/b/foo", 0), "1:lfs");
	assert_string_equal(verdict(r, "foo/bar", 0), "none");
	assert_string_equal(verdict(r, "top", 0), "2:keep");
	assert_string_equal(verdict(r, "x/top", 0), "none");
	assert_string_equal(verdict(r, "a/b.c", 0), "3:drop");
	assert_string_equal(verdict(r, "a/x/b.c", 0), "none");
	assert_string_equal(verdict(r, "x/a/b.c", 0), "none");
	assert_string_equal(verdict(r, "deep/x", 0), "4:annex");
	assert_string_equal(verdict(r, "1/2/deep/x", 0), "4:annex");
	assert_string_equal(verdict(r, "w/1/2", 0), "5:lfs");
	assert_string_equal(verdict(r, "w", 0), "none");
	assert_string_equal(verdict(r, "d/qxq", 0), "6:keep");
	assert_string_equal(verdict(r, "q/q", 0), "none");
	rules_free(r);
}

static void test_regex_match_limit(void **state)
{
	char path[64];
	struct rules *r;
	const struct rule *hit = NULL;
	struct err e = ERR_INIT;

	(void)state;
	/* catastrophic backtracking: PCRE2's match limit, reported, not guessed */
	memset(path, 'a', 40);
	path[40] = 'b';
	r = parse_ok("\n\nre:^(a|a)+$ lfs\n");
	assert_int_equal(rules_match(&hit, r, path, 41, 0, &e), -1);
	assert_int_equal(e.kind, ERR_USAGE);
	assert_non_null(strstr(e.msg, "t.rules:3: regex failed on path 'aaaa"));
	rules_free(r);
}

/*
 * Regex rules indexed by a literal prefix (rules.c index_prefixes): the
 * prefix must be one every matching path starts with, and the first rule
 * in file order must still win over the merged candidates.
 */
static void expect_line(const char *text, const char *path, size_t want)
{
	struct rules *r = parse_ok(text);
	const struct rule *hit = NULL, *each = NULL;
	struct err e = ERR_INIT;
	size_t got;

	assert_int_equal(rules_match(&hit, r, path, strlen(path), 0, &e), 0);
	assert_int_equal(rules_match_each(&each, r, path, strlen(path), 0, &e), 0);
	assert_ptr_equal(hit, each);
	got = hit ? rules_rule_line(hit) : 0;
	if (got != want)
		fail_msg("%s on %s: line %zu, want %zu", text, path, got, want);
	hit = NULL;
	assert_int_equal(rules_match_unsized(&hit, r, path, strlen(path), &e), 0);
	assert_int_equal(hit ? rules_rule_line(hit) : 0, want);
	rules_free(r);
}

static void test_regex_prefix_index(void **state)
{
	char text[256], path[64];

	(void)state;
	expect_line("re:^abc|^xyz keep\nre:. lfs\n", "xyz", 1);
	expect_line("re:^ab*c keep\nre:. lfs\n", "ac", 1);
	expect_line("re:^ab{0}c keep\nre:. lfs\n", "ac", 1);
	expect_line("re:^ab\\E? keep\nre:. lfs\n", "a", 1);
	expect_line("re:^a(?i)BC keep\nre:. lfs\n", "abc", 1);
	expect_line("re:^ab[|]c|^zz keep\nre:. lfs\n", "zz", 1);
	expect_line("re:^ab[]|]x|^zz keep\nre:. lfs\n", "zz", 1);
	expect_line("re:^ab[[:alpha:]|]x|^zz keep\nre:. lfs\n", "zz", 1);
	expect_line("re:^ab\\c(|^zz keep\nre:. lfs\n", "zz", 1);
	expect_line("re:^ab[[:a]|^zz:]] keep\nre:. lfs\n", "zz:]]", 1);
	expect_line("re:^ab\\|x keep\nre:. lfs\n", "ab|x", 1);
	expect_line("re:^ab\\|x keep\nre:. lfs\n", "abx", 2);
	expect_line("re:^src/(a|b)x keep\nre:^src/ lfs\nre:^sr drop\n", "src/bx", 1);
	expect_line("re:^src/(a|b)x keep\nre:^src/ lfs\nre:^sr drop\n", "src/c", 2);
	expect_line("re:^src/(a|b)x keep\nre:^src/ lfs\nre:^sr drop\n", "sr", 3);
	expect_line("re:^src/(a|b)x keep\nre:^src/ lfs\nre:^sr drop\n", "s", 0);
	/* an unindexed rule before or after an indexed one */
	expect_line("re:x$ drop\nre:^dir/.*x$ lfs\n", "dir/x", 1);
	expect_line("re:^dir/.*x$ lfs\nre:x$ drop\n", "dir/x", 1);
	expect_line("*.x keep\nre:^dir/.*x$ lfs\nre:x$ drop\n", "dir/a.x", 1);
	expect_line("re:^dir/y lfs\n*.x keep\nre:^dir/.*x$ drop\n", "dir/a.x", 2);
	/* a prefix longer than the index keeps (PFX_MAX) */
	snprintf(text, sizeof(text), "re:^%s%sb$ lfs\nre:^%sc keep\n",
		 "aaaaaaaaaaaaaaaaaaaa", "aaaaaaaaaaaaaaaaaaaa",
		 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	snprintf(path, sizeof(path), "%sb", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	expect_line(text, path, 1);
	path[40] = 'c';
	expect_line(text, path, 2);
	path[39] = 'c';
	expect_line(text, path, 0);
}

/* ---- .gitattributes forms ---- */

static void expect_attr(const char *rule, const char *want)
{
	struct rules *r = parse_ok(rule);
	struct buf out = BUF_INIT(BUF_MAX_DEFAULT);
	struct err e = ERR_INIT;

	buf_adds(&out, "<");
	assert_int_equal(rules_rule_attr_line(&out, rules_get(r, 0), "a -b", &e), 0);
	if (strcmp(out.ptr + 1, want))
		fail_msg("%s: got %s, want %s", rule, out.ptr + 1, want);
	buf_release(&out);
	rules_free(r);
}

static void test_attr_pattern(void **state)
{
	struct rules *r;
	struct buf out = BUF_INIT(BUF_MAX_DEFAULT), text = BUF_INIT(BUF_MAX_DEFAULT);
	struct err e = ERR_INIT;

	(void)state;
	expect_attr("*.psd lfs\n", "*.psd a -b\n");
	/* a blank: C-quoted, the only form that keeps exactly that blank */
	expect_attr("'dir with space/*.dat' lfs\n", "\"dir with space/*.dat\" a -b\n");
	expect_attr("weird\\[1\\].psd lfs\n", "weird\\[1\\].psd a -b\n");
	expect_attr("'a\tb' lfs\n", "\"a\\tb\" a -b\n");
	expect_attr("'a\\ b' lfs\n", "\"a\\\\ b\" a -b\n");
	expect_attr("'x[ab ]' lfs\n", "\"x[ab ]\" a -b\n");
	expect_attr("'[ -~]' lfs\n", "\"[ -~]\" a -b\n");
	expect_attr("'\"x y' lfs\n", "\"\\\"x y\" a -b\n");
	expect_attr("'#x' lfs\n", "\\#x a -b\n");
	expect_attr("'#x y' lfs\n", "\"#x y\" a -b\n");
	expect_attr("'\"x' lfs\n", "\\\"x a -b\n");
	expect_attr("\\!x lfs\n", "\\!x a -b\n");
	expect_attr("[attr]x lfs\n", "[tatr]x a -b\n");
	expect_attr("'[attr]x y' lfs\n", "\"[tatr]x y\" a -b\n");

	r = parse_ok("re:x lfs\n");
	buf_adds(&out, "keep");
	assert_int_equal(rules_rule_attr_line(&out, rules_get(r, 0), "a", &e), -1);
	assert_non_null(strstr(e.msg, "line 1: a regex rule has no .gitattributes pattern"));
	assert_string_equal(out.ptr, "keep");	/* left as it was */
	rules_free(r);

	/* git ignores lines of 2048 bytes or more: 2047 is the longest */
	buf_adds(&text, "'");
	while (text.len < 1 + 2047 - 2)
		buf_addch(&text, 'x');
	buf_adds(&text, "' lfs\n");
	r = parse_ok(text.ptr);
	buf_reset(&out);
	assert_int_equal(rules_rule_attr_line(&out, rules_get(r, 0), "a", &e), 0);
	assert_int_equal(out.len, 2048);	/* 2047 and the LF */
	rules_free(r);
	buf_reset(&text);
	buf_adds(&text, "'y");
	while (text.len < 1 + 2047 - 2)
		buf_addch(&text, 'x');
	buf_adds(&text, "' lfs\n");
	r = parse_ok(text.ptr);
	buf_reset(&out);
	buf_adds(&out, "keep");
	assert_int_equal(rules_rule_attr_line(&out, rules_get(r, 0), "ab", &e), -1);
	assert_non_null(strstr(e.msg, "line 1: the pattern is too long for "
				      ".gitattributes (git ignores lines of 2048"));
	assert_string_equal(out.ptr, "keep");
	rules_free(r);
	buf_release(&text);
	buf_release(&out);
}

static void test_attr_path(void **state)
{
	struct buf out = BUF_INIT(BUF_MAX_DEFAULT), small = BUF_INIT(8);
	struct err e = ERR_INIT;
	static const char path[] = "dir/my file[1]*?\\.bin";
	static const char plain[] = "dir/file[1]*?\\!#\".bin";
	char longp[2100];

	(void)state;
	assert_int_equal(rules_attr_path_line(&out, path, strlen(path), "a", &e), 0);
	assert_string_equal(out.ptr, "\"/dir/my file\\\\[1]\\\\*\\\\?\\\\\\\\.bin\" a\n");
	buf_reset(&out);
	assert_int_equal(rules_attr_path_line(&out, plain, strlen(plain), "a", &e), 0);
	assert_string_equal(out.ptr, "/dir/file\\[1]\\*\\?\\\\!#\".bin a\n");
	buf_reset(&out);
	assert_int_equal(rules_attr_path_line(&out, "a\tb\nc\rd e\"", 10, "a", &e), 0);
	assert_string_equal(out.ptr, "\"/a\\tb\\nc\\rd e\\\"\" a\n");
	assert_int_equal(rules_attr_path_line(&out, "", 0, "a", &e), -1);
	assert_int_equal(rules_attr_path_line(&out, "a\0b", 3, "a", &e), -1);
	assert_non_null(strstr(e.msg, "empty path or one with a NUL byte"));
	/* the longest line git reads is 2047 bytes, its LF not counted */
	memset(longp, 'p', sizeof(longp));
	buf_reset(&out);
	assert_int_equal(rules_attr_path_line(&out, longp, 2047 - 3, "a", &e), 0);
	assert_int_equal(out.len, 2048);
	buf_reset(&out);
	assert_int_equal(rules_attr_path_line(&out, longp, 2047 - 2, "a", &e), -1);
	assert_non_null(strstr(e.msg, "(2045 bytes) is too long for a .gitattributes "
				      "line: git ignores lines of 2048 bytes or more"));
	assert_int_equal(out.len, 0);
	/* a full buffer fails and is left as it was */
	buf_adds(&small, "ab");
	assert_int_equal(rules_attr_path_line(&small, "0123456789", 10, "a", &e), -1);
	assert_string_equal(small.ptr, "ab");
	buf_release(&small);
	buf_release(&out);
}

/* ---- examples/ ---- */

/* The source tree's root, from this file's path (absolute under CMake). */
static void source_root(char *out, size_t n)
{
	const char *me = __FILE__, *tail = strstr(me, "tests/unit/test_rules.c");
	size_t len = tail ? (size_t)(tail - me) : 0;

	snprintf(out, n, "%.*s", (int)len, me);
	if (!*out)
		snprintf(out, n, "./");
}

static void test_examples_parse(void **state)
{
	char dir[4096], path[8192];
	struct dirent *d;
	struct rules *r;
	struct err e = ERR_INIT;
	size_t n, found = 0;
	DIR *dh;

	(void)state;
	source_root(dir, sizeof(dir));
	strncat(dir, "examples", sizeof(dir) - strlen(dir) - 1);
	dh = opendir(dir);
	if (!dh)
		fail_msg("cannot open %s", dir);
	while ((d = readdir(dh)) != NULL) {
		n = strlen(d->d_name);
		if (n < 6 || strcmp(d->d_name + n - 6, ".rules"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		r = NULL;
		if (rules_load(&r, path, &e) < 0)
			fail_msg("%s", e.msg);
		assert_true(rules_count(r) > 0);
		rules_free(r);
		found++;
	}
	closedir(dh);
	assert_true(found >= 3);
}

/*
 * A chain of '**' '/' against a deep path: git's backtracking is
 * exponential (30 of them against 200 levels ran for 100 s); the memo
 * makes it (pattern x path). CMake gives this test a timeout.
 */
static void test_many_starstar(void **state)
{
	struct buf text = BUF_INIT(BUF_MAX_DEFAULT), path = BUF_INIT(BUF_MAX_DEFAULT);
	const struct rule *hit;
	struct err e = ERR_INIT;
	struct rules *r;
	int i;

	(void)state;
	for (i = 0; i < 200; i++)
		buf_adds(&path, "d/");
	buf_adds(&path, "y");
	for (i = 0; i < 30; i++)
		buf_adds(&text, "**/");
	buf_adds(&text, "x lfs\na/");
	for (i = 0; i < 30; i++)
		buf_adds(&text, "**/");
	buf_adds(&text, "x lfs\n");
	for (i = 0; i < 30; i++)
		buf_adds(&text, "**/");
	buf_adds(&text, "d/d/y keep\n");
	r = parse_ok(text.ptr);
	assert_int_equal(rules_match(&hit, r, path.ptr, path.len, 0, &e), 0);
	assert_non_null(hit);
	assert_int_equal(rules_rule_line(hit), 3);
	path.ptr[path.len - 1] = 'z';	/* .../d/z: no rule */
	assert_int_equal(rules_match(&hit, r, path.ptr, path.len, 0, &e), 0);
	assert_null(hit);
	rules_free(r);
	buf_release(&text);
	buf_release(&path);
}

/* ---- rules that can never match ---- */

/* "LATER<EARLIER ..." by line, for every rule an earlier one shadows. */
static const char *shadows(const char *text)
{
	static char out[256];
	struct rules *r = parse_ok(text);
	size_t i, by, n = 0;

	out[0] = '\0';
	for (i = 0; i < rules_count(r); i++)
		if (rules_shadowed(r, i, &by))
			n += (size_t)snprintf(out + n, sizeof(out) - n, "%s%zu<%zu",
					      n ? " " : "",
					      rules_rule_line(rules_get(r, i)),
					      rules_rule_line(rules_get(r, by)));
	rules_free(r);
	return out;
}

static FILE *warned;

static void warn_to_memstream(const char *line)
{
	fprintf(warned, "%s\n", line);
}

static void test_shadowed(void **state)
{
	static const char *const warn[][2] = {
		{ "*.psd lfs\n*.psd drop\n", "2<1" },
		{ "re:x keep\nre:x drop\n", "2<1" },
		{ "* keep\n*.bin lfs\nre:y drop\n", "2<1 3<1" },
		{ "** keep\nre:a lfs\n", "2<1" },
		{ "**/* keep\na/b lfs\n", "2<1" },
		{ "*.psd lfs\n*.psd size>1 drop\n", "2<1" },
		{ "*.bin size>=1MB lfs\n*.bin size>=2MB drop\n", "2<1" },
		{ "*.bin size<=1MB lfs\n*.bin size>10 size<100 drop\n", "2<1" },
		{ "* size>=10 keep\n*.zip size>=100 lfs\n", "2<1" },
		{ "*.a lfs\n*.a keep\n*.a drop\n", "2<1 3<1" },
		{ "# c\n\n*.a lfs\n\n*.a drop\n", "5<3" },
	};
	static const char *const quiet[] = {
		"*.bin size>=1MB lfs\n*.bin drop\n",	/* later has no condition */
		"*.bin size>=1MB lfs\n*.bin size>=1000 drop\n", /* 1000 < 1MB */
		"*.bin size<1MB lfs\n*.bin size>=1MB drop\n",
		"*.bin size<=1MB lfs\n*.bin size<=2MB drop\n",
		"* size>=10 keep\n*.zip lfs\n",	/* narrower, but a condition */
		"*.bin lfs\n*.BIN drop\n",
		"x lfs\nre:x drop\n",			/* a glob and a regex */
		"re:x lfs\nx drop\n",
		"*.psd lfs\nre:\\.psd$ drop\n",	/* the same set: not proved */
		"a/* keep\na/b lfs\n",
		"*.* keep\n*.a lfs\n",
		"re:.* keep\n*.a lfs\n",
		"*.a drop\n* keep\n",			/* the broad one comes later */
		"/*.a drop\n*.a keep\n",
	};
	char *buf = NULL;
	size_t i, len = 0;
	struct rules *r;

	(void)state;
	for (i = 0; i < sizeof(warn) / sizeof(warn[0]); i++)
		assert_string_equal(shadows(warn[i][0]), warn[i][1]);
	for (i = 0; i < sizeof(quiet) / sizeof(quiet[0]); i++)
		assert_string_equal(shadows(quiet[i]), "");

	/* the message names both lines and the winning pattern */
	r = parse_ok("# c\n\nre:^a lfs\n\n*.a drop\nre:^a keep\n");
	warned = open_memstream(&buf, &len);
	assert_non_null(warned);
	set_warning_routine(warn_to_memstream);
	assert_int_equal(rules_warn_shadowed(r), 1);
	set_warning_routine(NULL);
	fclose(warned);
	warned = NULL;
	assert_string_equal(buf, "t.rules:6: warning: rule never matches: "
			    "line 3 ('re:^a') always wins\n");
	free(buf);
	rules_free(r);
}

/* ---- blobs by id ---- */

static void test_replace_text(void **state)
{
	static const struct bad_case bad[] = {
		{ "* replace-text=\n", "t.rules:1:16: ", "missing FILE" },
		{ "* replace-text='' \n", "t.rules:1:16: ", "empty FILE" },
		{ "* replace-text=x binary=maybe\n", "t.rules:1:25: ",
		  "binary must be yes or no" },
		{ "* replace-text=x mode=locked\n", "t.rules:1:18: ",
		  "unknown option 'mode' for replace-text" },
		{ "* replace-text\n", "t.rules:1:3: ", "replace-text=FILE" },
		{ "* lfs binary=yes\n", "t.rules:1:7: ", "takes no options" },
	};
	struct rules *r;
	const struct rule *x;
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_error(&bad[i]);
	r = parse_ok("*.png keep\n"
		     "'my dir/*' replace-text='my expr.txt' binary=yes\n"
		     "* size<1MB replace-text=s.txt\n");
	x = rules_get(r, 1);
	assert_int_equal(rules_rule_action(x), RULES_REPLACE_TEXT);
	assert_string_equal(rules_action_name(RULES_REPLACE_TEXT), "replace-text");
	assert_string_equal(rules_rule_option(x, "replace-text", &n), "my expr.txt");
	assert_int_equal(n, 11);
	assert_string_equal(rules_rule_option(x, "binary", NULL), "yes");
	assert_string_equal(rules_rule_file(x), "t.rules");
	x = rules_get(r, 2);
	assert_string_equal(rules_rule_option(x, "replace-text", NULL), "s.txt");
	assert_null(rules_rule_option(x, "binary", NULL));
	assert_string_equal(verdict(r, "my dir/a.txt", 10), "2:replace-text");
	assert_string_equal(verdict(r, "b.txt", 10), "3:replace-text");
	rules_free(r);
}

static void test_blob_ids(void **state)
{
	static const struct bad_case bad[] = {
		{ "blob:1234 drop\n", "t.rules:1:6: ", "40 hex digits" },
		{ "blob:0123456789abcdef0123456789abcdef0123456z drop\n",
		  "t.rules:1:6: ", "40 hex digits" },
		{ "blob:0123456789abcdef0123456789abcdef01234567 lfs\n",
		  "t.rules:1:47: ", "its action is drop" },
		{ "blob:0123456789abcdef0123456789abcdef01234567 size>1 drop\n",
		  "t.rules:1:", "without a size condition" },
	};
	unsigned char id[RULES_BLOB_RAW], other[RULES_BLOB_RAW];
	struct rules *r;
	struct err e = ERR_INIT;
	struct buf out = BUF_INIT(1 << 16);
	const struct rule *x;
	const char *text;
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_error(&bad[i]);
	for (i = 0; i < RULES_BLOB_RAW; i++) {
		id[i] = (unsigned char)(0x01 + 0x22 * (i % 8));
		other[i] = 0;
	}
	/* 0123456789abcdef... is 01 23 45 67 89 ab cd ef, repeated */
	r = parse_ok("* keep\nblob:0123456789ABCDEF0123456789abcdef01234567 drop\n");
	assert_int_equal(rules_count(r), 2);
	assert_int_equal(rules_blob_count(r), 1);
	assert_string_equal(verdict(r, "blob:0123456789abcdef0123456789abcdef01234567", 1),
			    "1:keep");
	x = rules_match_blob(r, id);
	assert_non_null(x);
	assert_ptr_equal(x, rules_get(r, 1));
	assert_true(rules_rule_is_blob(x));
	assert_string_equal(rules_rule_pattern(x, &n),
			    "blob:0123456789abcdef0123456789abcdef01234567");
	assert_null(rules_match_blob(r, other));
	assert_null(rules_match_blob(NULL, id));
	/* never a .gitattributes line; never shadowed by a path rule */
	assert_int_equal(rules_rule_attr_line(&out, x, "filter=lfs", &e), -1);
	assert_int_equal(rules_shadowed(r, 1, &n), 0);
	/* an id file: blanks, comments, the line numbers of that file */
	text = "# ids\n\n  0000000000000000000000000000000000000000 \t"
	       "0123456789abcdef0123456789abcdef01234567\r\n";
	assert_int_equal(rules_add_blob_ids(r, text, strlen(text), "ids", &e), 0);
	assert_int_equal(rules_count(r), 4);
	assert_int_equal(rules_blob_count(r), 2);
	assert_ptr_equal(rules_match_blob(r, other), rules_get(r, 2));
	assert_int_equal(rules_rule_line(rules_get(r, 2)), 3);
	assert_int_equal(rules_add_blob_ids(r, "\nxyz\n", 5, "ids", &e), -1);
	assert_string_equal(e.msg, "ids:2:1: expected a blob id of 40 hex digits, got 'xyz'");
	buf_release(&out);
	rules_free(r);
}

/* ---- rules added, written back; the peers' options ---- */

/* Every rule of r written back and parsed again: the same rule. */
static void assert_round_trip(const struct rules *r)
{
	struct buf line = BUF_INIT(1 << 20), again = BUF_INIT(1 << 20);
	struct rules *back;
	size_t i;

	for (i = 0; i < rules_count(r); i++) {
		buf_reset(&line);
		rules_rule_format(&line, rules_get(r, i));
		back = parse_ok(line.ptr);
		assert_int_equal(rules_count(back), 1);
		buf_reset(&again);
		rules_rule_format(&again, rules_get(back, 0));
		assert_string_equal(line.ptr, again.ptr);
		assert_int_equal(rules_rule_action(rules_get(back, 0)),
				 rules_rule_action(rules_get(r, i)));
		assert_int_equal(rules_rule_is_regex(rules_get(back, 0)),
				 rules_rule_is_regex(rules_get(r, i)));
		rules_free(back);
	}
	buf_release(&line);
	buf_release(&again);
}

static void test_add_text_and_format(void **state)
{
	struct rules *r = parse_ok("*.psd lfs\n'my dir/*.bin' size>1MB size<=2GiB lfs\n"
				   "re:\"a'b\\\\.\" drop\n're:x' keep\n"
				   "data/list split record='^(\\d+)' into='d/{key}'\n"
				   "*.txt replace-text='my expr.txt' binary=yes\n"
				   "x annex mode=locked\n");
	struct err e = ERR_INIT;
	struct buf out = BUF_INIT(4096);

	(void)state;
	assert_round_trip(r);
	buf_reset(&out);
	rules_rule_format(&out, rules_get(r, 1));
	assert_string_equal(out.ptr, "'my dir/*.bin' size>=1000001 size<=2147483648 lfs");
	buf_reset(&out);
	rules_rule_format(&out, rules_get(r, 3));
	assert_string_equal(out.ptr, "'re:x' keep");
	/* rules added under another name come after, with their lines */
	assert_int_equal(rules_add_text(r, "\n*.wav lfs\n", 10, "--include", 0, &e), 0);
	assert_int_equal(rules_count(r), 8);
	assert_string_equal(rules_rule_file(rules_get(r, 7)), "--include");
	assert_int_equal(rules_rule_line(rules_get(r, 7)), 2);
	assert_string_equal(rules_rule_file(rules_get(r, 0)), "t.rules");
	assert_string_equal(verdict(r, "a/b.wav", 1), "2:lfs");
	assert_string_equal(verdict(r, "a/b.psd", 1), "1:lfs");
	/* the index is built again: a regex added later is found */
	assert_int_equal(rules_add_text(r, "re:^src/ drop\n", 14, "--path", 0, &e), 0);
	assert_string_equal(verdict(r, "src/q", 1), "1:drop");
	/* the index of the added rules answers as trying each rule does */
	{
		static const char *const paths[] = {
			"src/q", "a/b.wav", "my dir/x.bin", "re:x", "x", "src",
			"data/list", "t.txt", "a'b.",
		};
		const struct rule *a, *b;
		size_t i;

		for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
			assert_int_equal(rules_match(&a, r, paths[i], strlen(paths[i]),
						     5000000, &e), 0);
			assert_int_equal(rules_match_each(&b, r, paths[i],
							  strlen(paths[i]), 5000000, &e), 0);
			assert_ptr_equal(a, b);
		}
	}
	assert_int_equal(rules_add_text(r, "x bad\n", 6, "--exclude", 0, &e), -1);
	assert_string_equal(e.msg, "--exclude:1:3: unknown action 'bad' (expected lfs, "
			    "unlfs, annex, drop, keep, split or replace-text=FILE)");
	buf_release(&out);
	rules_free(r);
}

/* The rules p adds to an empty set, a line each (rules_rule_format). */
static const char *peer_rules(const struct rules_peer *p, char *err, size_t n)
{
	static char out[8192];
	struct buf text = BUF_INIT(1 << 20), line = BUF_INIT(1 << 20);
	struct rules *r = parse_ok("");
	struct err e = ERR_INIT;
	size_t i;

	out[0] = '\0';
	if (rules_add_peer(r, p, &text, &e) < 0) {
		snprintf(err, n, "%s", e.msg);
	} else {
		err[0] = '\0';
		for (i = 0; i < rules_count(r); i++) {
			buf_reset(&line);
			rules_rule_format(&line, rules_get(r, i));
			snprintf(out + strlen(out), sizeof(out) - strlen(out),
				 "%s%s", i ? "\n" : "", line.ptr);
		}
		assert_round_trip(r);
	}
	buf_release(&text);
	buf_release(&line);
	rules_free(r);
	return out;
}

static void test_peers(void **state)
{
	struct rules_peer p;
	char err[sizeof(((struct err *)0)->msg)];

	(void)state;
	memset(&p, 0, sizeof(p));
	assert_int_equal(rules_peer_given(&p), 0);
	/* git lfs migrate's sizes: units in any case, blanks, fractions */
	p.above = "1.5 MiB";
	assert_string_equal(peer_rules(&p, err, sizeof(err)), "* size>=1572864 lfs");
	p.above = "1,000kb";
	assert_string_equal(peer_rules(&p, err, sizeof(err)), "* size>=1000000 lfs");
	p.above = "20";
	assert_string_equal(peer_rules(&p, err, sizeof(err)), "* size>=20 lfs");
	p.above = "1 xb";
	peer_rules(&p, err, sizeof(err));
	assert_non_null(strstr(err, "--above: expected a size"));
	p.above = NULL;
	p.include = " *.bin , a b/*.png,,";
	p.exclude = "vendor/**";
	assert_string_equal(peer_rules(&p, err, sizeof(err)),
			    "vendor/** keep\n*.bin lfs\n'a b/*.png' lfs");
	p.include = p.exclude = NULL;
	/* filter-repo's sizes: K M G, powers of 1024, bigger than */
	p.strip_bigger = "5M";
	assert_string_equal(peer_rules(&p, err, sizeof(err)), "* size>=5242881 drop");
	p.strip_bigger = "5m";
	peer_rules(&p, err, sizeof(err));
	assert_non_null(strstr(err, "--strip-blobs-bigger-than: expected"));
	p.strip_bigger = NULL;
	/* paths: one rule keeps the selected ones, or a drop per path */
	p.paths[0].kind = RULES_PEER_PATH;
	p.paths[0].value = "a.b";
	p.paths[1].kind = RULES_PEER_GLOB;
	p.paths[1].value = "*.[!c]";
	p.paths[2].kind = RULES_PEER_REGEX;
	p.paths[2].value = "x$";
	p.n_paths = 3;
	assert_string_equal(peer_rules(&p, err, sizeof(err)),
			    "re:^(?!(?:a\\.b(?:/|$))|(?:(?:(?s:.*\\.[^c])|(?s:.*\\.[^c]/.*))$)|"
			    "(?:(?s:.*?)(?:x$))) drop");
	p.invert_paths = 1;
	assert_string_equal(peer_rules(&p, err, sizeof(err)),
			    "re:^a\\.b(?:/|$) drop\n"
			    "re:^(?:(?s:.*\\.[^c])|(?s:.*\\.[^c]/.*))$ drop\nre:x$ drop");
	p.paths[2].value = "a(";
	peer_rules(&p, err, sizeof(err));
	assert_non_null(strstr(err, "--path-regex:1:"));
	p.n_paths = 0;
	peer_rules(&p, err, sizeof(err));
	assert_non_null(strstr(err, "--invert-paths: no path"));
	p.invert_paths = 0;
}

/* --fixup is no rule: given, it adds none (a comment in the text); with
 * --include, --exclude or --above it is refused, naming the other. */
static void test_peer_fixup(void **state)
{
	struct rules_peer p;
	struct buf text = BUF_INIT(1 << 20);
	struct rules *r = parse_ok("");
	struct err e = ERR_INIT;
	char err[sizeof(((struct err *)0)->msg)];

	(void)state;
	memset(&p, 0, sizeof(p));
	p.fixup = 1;
	assert_int_equal(rules_peer_given(&p), 1);
	assert_int_equal(rules_add_peer(r, &p, &text, &e), 0);
	assert_int_equal(rules_count(r), 0);
	assert_non_null(strstr(text.ptr, "# --fixup\n# "));
	p.strip_bigger = "5M";	/* a drop rule goes with it */
	assert_string_equal(peer_rules(&p, err, sizeof(err)), "* size>=5242881 drop");
	p.strip_bigger = NULL;
	p.include = "*.bin";
	peer_rules(&p, err, sizeof(err));
	assert_non_null(strstr(err, "--fixup: takes no --include"));
	p.include = NULL;
	p.exclude = "*.bin";
	peer_rules(&p, err, sizeof(err));
	assert_non_null(strstr(err, "--fixup: takes no --exclude"));
	p.exclude = NULL;
	p.above = "1MB";
	peer_rules(&p, err, sizeof(err));
	assert_non_null(strstr(err, "--fixup: takes no --above"));
	buf_release(&text);
	rules_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_design_example),
		cmocka_unit_test(test_comment_positions),
		cmocka_unit_test(test_quoting),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_error_nul_and_long_line),
		cmocka_unit_test(test_error_file),
		cmocka_unit_test(test_first_match_and_sizes),
		cmocka_unit_test(test_unsized),
		cmocka_unit_test(test_glob_basics),
		cmocka_unit_test(test_regex_match_limit),
		cmocka_unit_test(test_regex_prefix_index),
		cmocka_unit_test(test_many_starstar),
		cmocka_unit_test(test_attr_pattern),
		cmocka_unit_test(test_attr_path),
		cmocka_unit_test(test_examples_parse),
		cmocka_unit_test(test_shadowed),
		cmocka_unit_test(test_blob_ids),
		cmocka_unit_test(test_replace_text),
		cmocka_unit_test(test_add_text_and_format),
		cmocka_unit_test(test_peers),
		cmocka_unit_test(test_peer_fixup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
