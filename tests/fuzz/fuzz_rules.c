/*
 * fuzz_rules.c - libFuzzer target for the rule parser and matcher.
 * Input: rule text, optionally followed by a NUL and a path. A text that
 * parses is matched against that path (or a few fixed ones), with and
 * without a size, and every rule's .gitattributes form is built.
 * Any crash, sanitizer report or leak is a bug; parse errors are not.
 * Invariant: rules_match (regex rules indexed by literal prefix and
 * matched together, rules.c index_prefixes and blocks) gives the same
 * rule, or the same failure, as rules_match_each (every rule on its own,
 * in file order); a difference aborts. corpus_rules/prefix_* seed rules
 * anchored with literal prefixes, some shared, some traps (`^a|^b`,
 * quantified last letters, prefixes longer than the index keeps).
 * Invariant: every rule written back (rules_rule_format) parses to one
 * rule that is written back the same; a difference aborts.
 */
#include <stdlib.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "rules/rules.h"

static const char *const paths[] = {
	"a", "a.bin", "dir/x.bin", "my dir/sub/f i l e.PSD", ".hidden/x",
	"data/CVE/list", "assets/a/b/c.wav", "é/[x]*?\\",
};

static void match_one(const struct rules *r, const char *p, size_t len)
{
	const struct rule *hit = NULL;
	struct buf out = BUF_INIT(1 << 16);
	struct err e = ERR_INIT;

	static const uint64_t sizes[] = { 0, 12345678 };
	size_t i;

	for (i = 0; i < 2; i++) {
		const struct rule *each = NULL;
		struct err e2 = ERR_INIT;
		int a = rules_match(&hit, r, p, len, sizes[i], &e);
		int b = rules_match_each(&each, r, p, len, sizes[i], &e2);

		if (a != b || (a == 0 && hit != each))
			abort();
	}
	rules_match_unsized(&hit, r, p, len, &e);
	rules_attr_path_line(&out, p, len, "filter=lfs", &e);
	buf_release(&out);
}

static void attr_forms(const struct rules *r)
{
	struct buf out = BUF_INIT(1 << 16);
	struct err e = ERR_INIT;
	size_t i, n;

	for (i = 0; i < rules_count(r); i++) {
		const struct rule *x = rules_get(r, i);

		buf_reset(&out);
		rules_rule_attr_line(&out, x, "filter=lfs", &e);
		rules_rule_pattern(x, &n);
		rules_rule_option(x, "record", &n);
		rules_rule_size(x, NULL, NULL);
	}
	buf_release(&out);
}

/* Each rule written back and parsed again is the same rule. */
static void round_trip(const struct rules *r)
{
	struct buf one = BUF_INIT(1 << 20), two = BUF_INIT(1 << 20);
	struct err e = ERR_INIT;
	struct rules *back;
	size_t i;

	for (i = 0; i < rules_count(r); i++) {
		if (rules_rule_is_blob(rules_get(r, i)))
			continue;
		buf_reset(&one);
		rules_rule_format(&one, rules_get(r, i));
		if (rules_parse(&back, one.ptr, one.len, "back", &e) < 0)
			abort();
		buf_reset(&two);
		if (rules_count(back) != 1)
			abort();
		rules_rule_format(&two, rules_get(back, 0));
		if (one.len != two.len || memcmp(one.ptr, two.ptr, one.len))
			abort();
		rules_free(back);
	}
	buf_release(&one);
	buf_release(&two);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	const char *nul = memchr(text, '\0', size);
	size_t tlen = nul ? (size_t)(nul - text) : size, i;
	struct rules *r = NULL;
	struct err e = ERR_INIT;

	if (rules_parse(&r, text, tlen, "fuzz", &e) < 0)
		return 0;
	if (nul)
		match_one(r, nul + 1, size - tlen - 1);
	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		match_one(r, paths[i], strlen(paths[i]));
	attr_forms(r);
	round_trip(r);
	rules_free(r);
	return 0;
}
