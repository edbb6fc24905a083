/*
 * rules_probe.c - test-only window on the rule matcher for
 * tests/integration/rules_checkattr.sh (until `migrate check-rules` exists).
 *
 *   rules_probe [-z]          pairs "PATTERN\tPATH\n" (-z: "PATTERN\0PATH\0")
 *                             -> "1" or "0" per pair, "E\tmessage" when the
 *                             pattern is refused
 *   rules_probe --attr        NUL-terminated patterns -> "A\t<.gitattributes
 *                             pattern>" or "E\tmessage" per pattern
 *   rules_probe --attr-path   NUL-terminated paths -> "A\t<anchored pattern>"
 *
 * Each pattern becomes the one-rule file "'PATTERN' lfs" (or a "..." form
 * when it holds a quote), so quoting is exercised too. A pattern repeated
 * on consecutive records is parsed once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/rules.h"

/* Reads one record ending in sep into b; 0 at EOF, 1 otherwise. */
static int read_rec(FILE *f, int sep, struct buf *b)
{
	int ch;

	buf_reset(b);
	while ((ch = getc(f)) != EOF && ch != sep)
		if (buf_addch(b, ch) < 0)
			return 0;
	return ch != EOF || b->len > 0;
}

/* The one-line rule file for a glob pattern. */
static void rule_text(struct buf *out, const struct buf *pat)
{
	size_t i;

	buf_reset(out);
	if (!memchr(pat->ptr, '\'', pat->len)) {
		buf_printf(out, "'%s' lfs\n", pat->ptr);
		return;
	}
	buf_addch(out, '"');
	for (i = 0; i < pat->len; i++) {
		if (pat->ptr[i] == '"' || pat->ptr[i] == '\\')
			buf_addch(out, '\\');
		buf_addch(out, pat->ptr[i]);
	}
	buf_adds(out, "\" lfs\n");
}

/* Parses pat unless it is the one parsed last; NULL (and e set) on error. */
static struct rules *compile(const struct buf *pat, struct buf *last,
			     struct rules **cache, struct err *e)
{
	struct buf text = BUF_INIT(BUF_MAX_DEFAULT);

	if (*cache && last->len == pat->len && !memcmp(last->ptr, pat->ptr, pat->len))
		return *cache;
	rules_free(*cache);
	*cache = NULL;
	buf_set(last, pat->ptr, pat->len);
	if (memchr(pat->ptr, '\n', pat->len)) {
		err_set(e, ERR_USAGE, "pattern with a newline cannot be written");
		return NULL;
	}
	rule_text(&text, pat);
	if (rules_parse(cache, text.ptr, text.len, "probe", e) < 0)
		*cache = NULL;
	buf_release(&text);
	return *cache;
}

static int run_pairs(int z)
{
	struct buf pat = BUF_INIT(BUF_MAX_DEFAULT), path = BUF_INIT(BUF_MAX_DEFAULT);
	struct buf last = BUF_INIT(BUF_MAX_DEFAULT);
	struct rules *cache = NULL, *r;
	const struct rule *hit;
	struct err e = ERR_INIT, cached = ERR_INIT;

	while (read_rec(stdin, z ? '\0' : '\t', &pat) &&
	       read_rec(stdin, z ? '\0' : '\n', &path)) {
		int same = cache == NULL && last.len == pat.len &&
			   !memcmp(last.ptr, pat.ptr, pat.len) && cached.kind;
		r = same ? NULL : compile(&pat, &last, &cache, &cached);
		if (!r) {
			printf("E\t%s\n", cached.msg);
			continue;
		}
		if (rules_match(&hit, r, path.ptr, path.len, 0, &e) < 0) {
			printf("E\t%s\n", e.msg);
			continue;
		}
		cached.kind = ERR_NONE;
		puts(hit ? "1" : "0");
	}
	rules_free(cache);
	buf_release(&pat);
	buf_release(&path);
	buf_release(&last);
	return 0;
}

static int run_attr(int paths)
{
	struct buf in = BUF_INIT(BUF_MAX_DEFAULT), out = BUF_INIT(BUF_MAX_DEFAULT);
	struct buf last = BUF_INIT(BUF_MAX_DEFAULT);
	struct rules *cache = NULL, *r;
	struct err e = ERR_INIT;
	int ok;

	while (read_rec(stdin, '\0', &in)) {
		buf_reset(&out);
		/* the line ends in " x\n": the pattern is what comes before */
		if (paths) {
			ok = rules_attr_path_line(&out, in.ptr, in.len, "x", &e) == 0;
		} else {
			r = compile(&in, &last, &cache, &e);
			ok = r && rules_rule_attr_line(&out, rules_get(r, 0), "x", &e) == 0;
		}
		if (ok)
			out.ptr[out.len -= 3] = '\0';
		printf("%s\t%s\n", ok ? "A" : "E", ok ? out.ptr : e.msg);
	}
	rules_free(cache);
	buf_release(&in);
	buf_release(&out);
	buf_release(&last);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--attr"))
		return run_attr(0);
	if (argc == 2 && !strcmp(argv[1], "--attr-path"))
		return run_attr(1);
	if (argc == 1 || (argc == 2 && !strcmp(argv[1], "-z")))
		return run_pairs(argc == 2);
	fprintf(stderr, "usage: rules_probe [-z | --attr | --attr-path] < input\n");
	return 1;
}
