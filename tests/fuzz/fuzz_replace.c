/*
 * fuzz_replace.c - libFuzzer target for replace/: an expressions file in
 * git-filter-repo's format (untrusted: the user's) applied to a text
 * (untrusted: any blob or message of a history).
 *
 * The input is the expressions file up to its first NUL byte, and the text
 * after it. Checked:
 *  - parsing either succeeds or fails with ERR_USAGE naming "fuzz:LINE";
 *  - applying gives 1 (changed, the text in out), 0 or -1 (ERR_IO, e.g.
 *    PCRE2's match limit), and applying again gives the same answer, the
 *    same text and the same counts once more (no state leaks between
 *    texts);
 *  - a file of literals only is judged against a naive replacer written
 *    here: each literal in file order, every non-overlapping occurrence
 *    left to right, as Python's bytes.replace;
 *  - the counters of expressions that replaced nothing stay 0 when the
 *    text did not change.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "replace/replace.h"

/* The replaced text's limit: literals whose replacement holds them
 * ('*' then '**' with the default ***REMOVED***) grow a text
 * geometrically, which must end in the limit's error, not in minutes. */
#define FUZZ_MAX_TEXT ((size_t)1 << 20)

/* The naive replacer: in becomes out by the literal (find, repl). */
static void naive(struct buf *out, const char *in, size_t len,
		  const char *find, size_t flen, const char *repl, size_t rlen)
{
	size_t i = 0;

	buf_reset(out);
	while (i < len) {
		if (len - i >= flen && !memcmp(in + i, find, flen)) {
			buf_add(out, repl, rlen);
			i += flen;
		} else {
			buf_addch(out, in[i++]);
		}
	}
}

/* Each line of the file as filter-repo reads a literal: 1 when every
 * expression is one (then their pairs are replayed by naive()). */
static int literals_only(const struct replace_set *s)
{
	struct replace_info in;
	size_t i;

	for (i = 0; i < replace_count(s); i++) {
		replace_info(s, i, &in);
		if ((in.len >= 6 && !memcmp(in.text, "regex:", 6)) ||
		    (in.len >= 5 && !memcmp(in.text, "glob:", 5)))
			return 0;
	}
	return 1;
}

static void check_naive(const struct replace_set *s, const char *text,
			size_t len, const struct buf *got, int changed)
{
	struct buf a = BUF_INIT(SIZE_MAX / 2), b = BUF_INIT(SIZE_MAX / 2);
	struct replace_info in;
	size_t i;

	buf_set(&a, text, len);
	for (i = 0; i < replace_count(s); i++) {
		const char *p, *arrow = NULL, *q;
		const char *repl = REPLACE_DEFAULT;
		size_t n, rlen = strlen(REPLACE_DEFAULT);

		replace_info(s, i, &in);
		p = in.text;
		n = in.len;
		for (q = p; q + 3 <= p + n; q++)
			if (!memcmp(q, "==>", 3))
				arrow = q;
		if (arrow) {
			repl = arrow + 3;
			rlen = (size_t)(p + n - repl);
			n = (size_t)(arrow - p);
		}
		if (n >= 8 && !memcmp(p, "literal:", 8)) {
			p += 8;
			n -= 8;
		}
		if (!n)
			abort();	/* an empty literal is no expression */
		naive(&b, a.ptr, a.len, p, n, repl, rlen);
		buf_set(&a, b.ptr, b.len);
	}
	if (changed && (a.len != got->len || memcmp(a.ptr, got->ptr, a.len)))
		abort();
	if (!changed && (a.len != len || memcmp(a.ptr, text, len)))
		abort();
	buf_release(&a);
	buf_release(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data;
	const char *nul = memchr(p, '\0', size);
	size_t flen = nul ? (size_t)(nul - p) : size;
	const char *text = nul ? nul + 1 : "";
	size_t tlen = nul ? size - flen - 1 : 0;
	struct buf out1 = BUF_INIT(FUZZ_MAX_TEXT), out2 = BUF_INIT(FUZZ_MAX_TEXT);
	struct replace_set *s = NULL;
	struct err e = ERR_INIT;
	struct replace_info in1, in2;
	uint64_t *before;
	size_t i;
	int r1, r2;

	/* small: a regex may backtrack a long time on a long text, which
	 * is PCRE2's match limit's business, not this target's */
	if (flen > 2048 || tlen > 4096)
		return 0;
	if (replace_parse(&s, p, flen, "fuzz", &e) < 0) {
		if (e.kind != ERR_USAGE || strncmp(e.msg, "fuzz:", 5) || s)
			abort();
		return 0;
	}
	r1 = replace_apply(s, text, tlen, &out1, &e);
	before = calloc(replace_count(s) + 1, sizeof(*before));
	for (i = 0; i < replace_count(s); i++) {
		replace_info(s, i, &in1);
		before[i] = in1.replaced;
		if (r1 == 0 && in1.replaced)
			abort();
	}
	e.kind = ERR_NONE;
	r2 = replace_apply(s, text, tlen, &out2, &e);
	if (r1 != r2 || (r1 < 0 && e.kind != ERR_IO))
		abort();
	if (r1 == 1 && (out1.len != out2.len || memcmp(out1.ptr, out2.ptr, out1.len)))
		abort();
	for (i = 0; r1 >= 0 && i < replace_count(s); i++) {
		replace_info(s, i, &in2);
		if (in2.replaced != 2 * before[i])
			abort();
	}
	if (r1 >= 0 && literals_only(s))
		check_naive(s, text, tlen, &out1, r1);
	free(before);
	buf_release(&out1);
	buf_release(&out2);
	replace_free(s);
	return 0;
}
