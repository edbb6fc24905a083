/*
 * shadow.c - the rules that can never match: an earlier rule always wins
 * over them (rules.h, rules_shadowed). Read through rules.h alone.
 */
#include "rules/rules.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

/* What always_wins compares of a rule. */
struct facts {
	const char *pattern;
	size_t len;
	int is_regex, is_blob;
	uint64_t lo, hi;	/* 0 and UINT64_MAX without a size condition */
};

static struct facts facts_of(const struct rule *rule)
{
	struct facts f;

	f.pattern = rules_rule_pattern(rule, &f.len);
	f.is_regex = rules_rule_is_regex(rule);
	f.is_blob = rules_rule_is_blob(rule);
	f.lo = 0;
	f.hi = UINT64_MAX;
	(void)rules_rule_size(rule, &f.lo, &f.hi);
	return f;
}

/* 1 when the glob matches every path: `*`, `**`, and `**` then `/` then `*`. */
static int glob_matches_all(const struct facts *f)
{
	return !f->is_regex && !f->is_blob &&
	       ((f->len == 1 && !memcmp(f->pattern, "*", 1)) ||
		(f->len == 2 && !memcmp(f->pattern, "**", 2)) ||
		(f->len == 4 && !memcmp(f->pattern, "**/*", 4)));
}

/* 1 when every (path, size) that later matches, earlier matches too. */
static int always_wins(const struct rule *e, const struct rule *l)
{
	struct facts earlier = facts_of(e), later = facts_of(l);
	int same = earlier.is_regex == later.is_regex &&
		   earlier.len == later.len &&
		   !memcmp(earlier.pattern, later.pattern, later.len);

	/* an id rule is decided before any path rule, and only by its id */
	if (earlier.is_blob || later.is_blob)
		return same && earlier.is_blob && later.is_blob;
	if (!same && !glob_matches_all(&earlier))
		return 0;
	return earlier.lo <= later.lo && later.hi <= earlier.hi;
}

/* Appends x to the growing array *v of *n entries (room for *cap). */
static void push_index(size_t **v, size_t *n, size_t *cap, size_t x)
{
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 4;
		*v = xrealloc(*v, *cap * sizeof(**v));
	}
	(*v)[(*n)++] = x;
}

/*
 * Which earlier rules could always win over a rule: those with the same
 * kind and text, and the globs that match everything. Built once, so a
 * file of 100,000 rules is checked in linear time, not by all pairs.
 */
struct same_text {
	const char *key;
	size_t *idx;		/* rules with this text, ascending */
	size_t n, cap;
	UT_hash_handle hh;
};

struct shadow_index {
	struct same_text *text[2];	/* [is_regex] */
	size_t *all, nall;		/* glob_matches_all rules, ascending */
};

static void shadow_index_build(struct shadow_index *x, const struct rules *r)
{
	size_t j, cap_all = 0;

	memset(x, 0, sizeof(*x));
	for (j = 0; j < rules_count(r); j++) {
		struct facts f = facts_of(rules_get(r, j));
		struct same_text **t = &x->text[f.is_regex != 0], *st;

		HASH_FIND(hh, *t, f.pattern, f.len, st);
		if (!st) {
			st = xcalloc(1, sizeof(*st));
			st->key = f.pattern;
			HASH_ADD_KEYPTR(hh, *t, st->key, f.len, st);
		}
		push_index(&st->idx, &st->n, &st->cap, j);
		if (glob_matches_all(&f))
			push_index(&x->all, &x->nall, &cap_all, j);
	}
}

static void shadow_index_free(struct shadow_index *x)
{
	struct same_text *st, *tmp;
	int k;

	for (k = 0; k < 2; k++)
		HASH_ITER(hh, x->text[k], st, tmp) {
			HASH_DEL(x->text[k], st);
			free(st->idx);
			free(st);
		}
	free(x->all);
}

/* The first earlier rule that always wins over rule i, in *by. */
static int shadowed_by(const struct shadow_index *x, const struct rules *r,
		       size_t i, size_t *by)
{
	const struct rule *rule = rules_get(r, i);
	struct facts f = facts_of(rule);
	struct same_text *st;
	size_t k, best = SIZE_MAX;

	HASH_FIND(hh, x->text[f.is_regex != 0], f.pattern, f.len, st);
	for (k = 0; st && k < st->n && st->idx[k] < i; k++)
		if (always_wins(rules_get(r, st->idx[k]), rule)) {
			best = st->idx[k];
			break;
		}
	for (k = 0; k < x->nall && x->all[k] < best && x->all[k] < i; k++)
		if (always_wins(rules_get(r, x->all[k]), rule)) {
			best = x->all[k];
			break;
		}
	if (best == SIZE_MAX)
		return 0;
	*by = best;
	return 1;
}

int rules_shadowed(const struct rules *r, size_t i, size_t *by)
{
	struct shadow_index x;
	int found;

	if (i >= rules_count(r))
		return 0;
	shadow_index_build(&x, r);
	found = shadowed_by(&x, r, i, by);
	shadow_index_free(&x);
	return found;
}

size_t rules_warn_shadowed(const struct rules *r)
{
	struct shadow_index x;
	size_t i, by, n = 0;

	shadow_index_build(&x, r);
	for (i = 0; i < rules_count(r); i++) {
		const struct rule *l = rules_get(r, i), *w;
		struct facts wf;

		if (!shadowed_by(&x, r, i, &by))
			continue;
		w = rules_get(r, by);
		wf = facts_of(w);
		/* the winner of another file (an option's rules after the
		 * rule file's) is named with its file */
		if (rules_rule_file(w) != rules_rule_file(l))
			warning("%s:%zu: warning: rule never matches: %s:%zu "
				"('%s%.*s') always wins", rules_rule_file(l),
				rules_rule_line(l), rules_rule_file(w),
				rules_rule_line(w), wf.is_regex ? "re:" : "",
				(int)wf.len, wf.pattern);
		else
			warning("%s:%zu: warning: rule never matches: line %zu "
				"('%s%.*s') always wins", rules_rule_file(l),
				rules_rule_line(l), rules_rule_line(w),
				wf.is_regex ? "re:" : "", (int)wf.len, wf.pattern);
		n++;
	}
	shadow_index_free(&x);
	return n;
}
