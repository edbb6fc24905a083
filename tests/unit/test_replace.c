/*
 * test_replace.c - expressions files in git-filter-repo's format: the
 * parser (literal, regex:, glob:, ==>, blank and '#' lines, CR), every
 * bad-input path naming FILE:LINE, and applying: the expected texts were
 * produced by git filter-repo 2.38's own get_replace_text and re.sub under
 * Python 3.11 (tests/integration/replace_text.sh lets filter-repo judge a
 * whole history), the counters, and the binary probe.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "replace/replace.h"

static struct replace_set *parse_ok(const char *text)
{
	struct replace_set *s = NULL;
	struct err e = ERR_INIT;

	if (replace_parse(&s, text, strlen(text), "expr.txt", &e) < 0)
		fail_msg("parse: %s", e.msg);
	return s;
}

/* Applies text to the expressions; the result (the input when nothing
 * matched) must be want. */
static void check(const char *exprs, const char *in, size_t in_len,
		  const char *want, size_t want_len)
{
	struct replace_set *s = parse_ok(exprs);
	struct buf out = BUF_INIT(BUF_MAX_DEFAULT);
	struct err e = ERR_INIT;
	int r = replace_apply(s, in, in_len, &out, &e);

	if (r < 0)
		fail_msg("apply %s: %s", exprs, e.msg);
	if (r == 0) {
		buf_set(&out, in, in_len);
	}
	if (out.len != want_len || memcmp(out.ptr, want, want_len))
		fail_msg("%s on '%.*s': got '%.*s', want '%.*s'", exprs,
			 (int)in_len, in, (int)out.len, out.ptr, (int)want_len, want);
	buf_release(&out);
	replace_free(s);
}

#define CHECK(x, in, want) check(x, in, sizeof(in) - 1, want, sizeof(want) - 1)

static void test_literals(void **state)
{
	(void)state;
	CHECK("p455w0rd\n", "my p455w0rd is p455w0rd\n",
	      "my ***REMOVED*** is ***REMOVED***\n");
	CHECK("foo==>bar\nliteral:baz==>qux\n", "foo baz foofoo\n",
	      "bar qux barbar\n");
	/* the last ==> splits; '#' is an expression; blank lines are none */
	CHECK("\n\nabc==>d==>e\n#c\n", "abc==>d #c abc\n",
	      "e ***REMOVED*** abc\n");
	CHECK("abc==>d==>e\n", "abc==>d", "e");
	/* every CR and LF at the end of a line goes */
	CHECK("x\r\n", "x\rx\n", "***REMOVED***\r***REMOVED***\n");
	CHECK("aa==>a\n", "aaaaa", "aaa");
	/* a literal's replacement is taken as it is */
	CHECK("a==>\\1\\n\n", "a", "\\1\\n");
	/* literals first, then regexes, each in file order */
	CHECK("literal:==>x\nregex:s+==>S\nsss==>L\n", "sss ss", "L S");
}

static void test_regexes(void **state)
{
	(void)state;
	CHECK("regex:(\\d{2})/(\\d{2})/(\\d{4})==>\\3-\\1-\\2\n",
	      "on 12/31/2020 and 01/02/2003\n", "on 2020-12-31 and 2003-01-02\n");
	CHECK("regex:x*==>-\n", "abxd", "-a-b--d-");
	CHECK("regex:b*==>-\n", "abc", "-a--c-");
	CHECK("regex:(?m)^.*666.*$==>\n", "a\nb666c\nd\n666\n", "a\n\nd\n\n");
	CHECK("regex:\\bdriver\\b==>pilot\n", "driver drivers driver.\n",
	      "pilot drivers pilot.\n");
	CHECK("regex:(?P<w>\\w+)@(?P<d>\\w+)==>\\g<d> at \\g<w>\n",
	      "me@host you@there\n", "host at me there at you\n");
	CHECK("regex:a(b)?c==>[\\1]\n", "ac abc\n", "[] [b]\n");
	CHECK("regex:(a)|(b)==>[\\1\\2]\n", "ab", "[a][b]");
	CHECK("regex:a==>\\n\\t\\\\\\.\\041\n", "xax", "x\n\t\\\\.!x");
	check("regex:(a)==>\\1\\0\\012\n", "a", 1, "a\0\n", 3);
	CHECK("regex:$==>END\n", "a\nb\n", "a\nbEND\nEND");
	CHECK("regex:\\Z==>END\n", "a\nb\n", "a\nb\nEND");
	CHECK("regex:^==>S\n", "a\nb\n", "Sa\nb\n");
	CHECK("regex:[^]a]==>F\n", "]ab", "]aF");
	CHECK("regex:secret(?=!)==>X\n", "secret! secret?", "X! secret?");
	CHECK("regex:\xc3\xa9==>e\n", "caf\xc3\xa9", "cafe");
	CHECK("regex:a==>b\n", "xyz", "xyz");
}

static void test_globs(void **state)
{
	(void)state;
	CHECK("glob:pass*==>X\n", "password=abc\nother pass\n", "X\nother X\n");
	CHECK("glob:a*b*c==>[\\g<0>]\n", "a xx b yy c zz abc\n",
	      "[a xx b yy c zz abc]\n");
	CHECK("glob:[!a-c]x==>Y\n", "ax dx -x\n", "ax Y Y\n");
	CHECK("glob:[a-]x==>Y\n", "ax -x bx\n", "Y Y bx\n");
	CHECK("glob:[]]==>Y\n", "a]b\n", "aYb\n");
	CHECK("glob:x[==>Y\n", "x[ x\n", "Y x\n");
	CHECK("glob:[z-a]==>Y\n", "abc\n", "abc\n");
	CHECK("glob:?==>.\n", "ab\nc", "..\n.");
	CHECK("glob:*.txt==>F\n", "a.txt b.txt\nc.txt", "F\nF");
	CHECK("glob:*a*==>F\n", "xxaxx\nyy", "F\nyy");
	CHECK("glob:[\xc3\xa9]==>e\n", "caf\xc3\xa9", "cafee");
}

/* One message naming expr.txt and the line. */
static void bad(const char *text, const char *want)
{
	struct replace_set *s = NULL;
	struct err e = ERR_INIT;

	if (replace_parse(&s, text, strlen(text), "expr.txt", &e) == 0)
		fail_msg("'%s' was accepted", text);
	assert_null(s);
	assert_int_equal(e.kind, ERR_USAGE);
	if (!strstr(e.msg, want))
		fail_msg("'%s': '%s' does not say '%s'", text, e.msg, want);
}

static void test_errors(void **state)
{
	(void)state;
	bad("ok\nregex:(==>x\n", "expr.txt:2: bad regex");
	bad("regex:\n", "expr.txt:1: empty regex:");
	bad("a\nb\nglob:\n", "expr.txt:3: empty glob:");
	bad("regex:a==>\\q\n", "expr.txt:1: bad escape \\q");
	bad("regex:a==>\\2\n", "expr.txt:1: invalid group reference 2");
	bad("regex:(a)==>\\10\n", "invalid group reference 10");
	bad("regex:a==>\\g<1>\n", "invalid group reference 1");
	bad("regex:a==>\\g<x>\n", "unknown group name 'x'");
	bad("regex:a==>\\g<1x>\n", "bad character in group name");
	bad("regex:a==>\\g1\n", "missing <");
	bad("regex:a==>\\g<\n", "missing >");
	bad("regex:a==>\\g<>\n", "missing group name");
	bad("regex:a==>\\\n", "bad escape (end");
	bad("regex:(a)==>\\477\n", "outside of range");
}

static void test_counts_and_info(void **state)
{
	struct replace_set *s = parse_ok("regex:b+==>B\nab\n\nliteral:c\n");
	struct buf out = BUF_INIT(BUF_MAX_DEFAULT);
	struct err e = ERR_INIT;
	struct replace_info i0, i1, i2;

	(void)state;
	assert_int_equal(replace_count(s), 3);
	assert_string_equal(replace_name(s), "expr.txt");
	assert_int_equal(replace_apply(s, "abbb cc", 7, &out, &e), 1);
	assert_string_equal(out.ptr, "***REMOVED***B ***REMOVED******REMOVED***");
	assert_int_equal(replace_apply(s, "zzz", 3, &out, &e), 0);
	assert_int_equal(replace_apply(s, "bb", 2, &out, &e), 1);
	/* in file order, whatever the order applied */
	replace_info(s, 0, &i0);
	replace_info(s, 1, &i1);
	replace_info(s, 2, &i2);
	assert_int_equal(i0.line, 1);
	assert_int_equal(i0.len, strlen("regex:b+==>B"));
	assert_memory_equal(i0.text, "regex:b+==>B", i0.len);
	assert_int_equal(i0.replaced, 2);
	assert_int_equal(i0.changed, 2);
	assert_int_equal(i1.line, 2);
	assert_int_equal(i1.replaced, 1);
	assert_int_equal(i1.changed, 1);
	assert_int_equal(i2.line, 4);
	assert_memory_equal(i2.text, "literal:c", 9);
	assert_int_equal(i2.replaced, 2);
	buf_release(&out);
	replace_free(s);
}

static void test_too_large(void **state)
{
	struct replace_set *s = parse_ok("a==>aaaaaaaaaa\n");
	struct buf out = BUF_INIT(16);
	struct err e = ERR_INIT;
	struct replace_info i;

	(void)state;
	assert_int_equal(replace_apply(s, "aaaa", 4, &out, &e), -1);
	assert_int_equal(e.kind, ERR_IO);
	assert_int_equal(out.len, 0);
	replace_info(s, 0, &i);
	assert_int_equal(i.replaced, 0);	/* counters only on success */
	buf_release(&out);
	replace_free(s);
}

/* The text between two expressions obeys out's max as well: a file that
 * grows a text geometrically stops at the limit, not at the memory's. */
static void test_too_large_between(void **state)
{
	struct replace_set *s = parse_ok("a==>aaaaaaaaaa\naaaaaaaaaa==>b\n");
	struct buf out = BUF_INIT(16);
	struct err e = ERR_INIT;

	(void)state;
	assert_int_equal(replace_apply(s, "aaaa", 4, &out, &e), -1);
	assert_int_equal(e.kind, ERR_IO);
	assert_non_null(strstr(e.msg, ":1: the text replaced would be larger"));
	buf_release(&out);
	replace_free(s);
}

static void test_binary(void **state)
{
	char big[REPLACE_BINARY_PROBE + 10];

	(void)state;
	memset(big, 'x', sizeof(big));
	assert_int_equal(replace_is_binary(big, sizeof(big)), 0);
	big[REPLACE_BINARY_PROBE] = '\0';	/* after the probe: text */
	assert_int_equal(replace_is_binary(big, sizeof(big)), 0);
	big[REPLACE_BINARY_PROBE - 1] = '\0';
	assert_int_equal(replace_is_binary(big, sizeof(big)), 1);
	assert_int_equal(replace_is_binary("", 0), 0);
}

static void test_load(void **state)
{
	struct replace_set *s = NULL;
	struct err e = ERR_INIT;

	(void)state;
	assert_int_equal(replace_load(&s, "/nonexistent/expr.txt", &e), -1);
	assert_int_equal(e.kind, ERR_USAGE);
	assert_non_null(strstr(e.msg, "/nonexistent/expr.txt"));
	assert_null(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_literals),
		cmocka_unit_test(test_regexes),
		cmocka_unit_test(test_globs),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_counts_and_info),
		cmocka_unit_test(test_too_large),
		cmocka_unit_test(test_too_large_between),
		cmocka_unit_test(test_binary),
		cmocka_unit_test(test_load),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
