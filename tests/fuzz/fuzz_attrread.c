/*
 * fuzz_attrread.c - libFuzzer target for reading a .gitattributes the way
 * git does (rewrite/blob/attrread.c): C-quoted patterns, macros, words
 * right to left. Input: a root file's text, a NUL, then a nested file's
 * text (no NUL: the whole input is the nested file). The root's macros
 * are read twice (the second time must find nothing changed), then the
 * nested file's rules, each matched against a few paths. Any crash,
 * sanitizer report or leak is a bug. Invariants (abort otherwise): a rule
 * assigns something; it assigns our way only what it assigns; a rule
 * without a pattern assigns all four, none our way, and matches every
 * path.
 */
#include <stdlib.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "rewrite/blob/way.h"

static const char *const paths[] = {
	"a.bin", "c/x.bin", "f 3.bin", "b/c/d", "é[x]*?\\", ".gitattributes",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *nul = memchr(p, '\0', size);
	const char *nested = nul ? nul + 1 : p;
	size_t rlen = nul ? (size_t)(nul - p) : 0;
	size_t nlen = nul ? size - rlen - 1 : size, n, i, k;
	struct attr_macros *m = attr_macros_new();
	struct attr_rule *v = NULL;

	attr_macros_read(m, p, rlen);
	if (attr_macros_read(m, p, rlen) != 0)
		abort();
	n = attr_rules_read(&v, m, nested, nlen);
	for (i = 0; i < n; i++) {
		if (!v[i].says || (v[i].lfs & ~v[i].says) || v[i].says & ~ATTR_ALL)
			abort();
		if (!v[i].pat && (v[i].says != ATTR_ALL || v[i].lfs))
			abort();
		for (k = 0; k < sizeof(paths) / sizeof(paths[0]); k++) {
			struct err e = ERR_INIT;
			int hit = attr_rule_hits(&v[i], paths[k], strlen(paths[k]), &e);

			if (!v[i].pat && hit != 1)
				abort();
		}
	}
	attr_rules_free(v, n);
	attr_macros_free(m);
	return 0;
}
