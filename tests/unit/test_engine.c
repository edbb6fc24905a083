/*
 * test_engine.c - rewrite/engine/ on its own: the parents of a commit
 * trimmed as git filter-repo's _trim_extra_parents trims them
 * (--prune-degenerate auto), over the ancestry graphs of prune.c. The
 * whole engine is judged against filter-repo by
 * tests/integration/prune_empty.sh; these are the cases one by one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rewrite/engine/state.h"

/* A parent: new id n (0: pruned away), its nodes, rewritten or not. */
static struct prune_parent par(unsigned char n, uint32_t gnew, uint32_t gorig,
			       int skipped)
{
	struct prune_parent p;

	memset(&p, 0, sizeof(p));
	memset(p.oid.hash, n, OID_RAW);
	p.none = n == 0;
	p.gnew = gnew;
	p.gorig = gorig;
	p.skipped = skipped;
	return p;
}

/*
 * The history of both graphs: a root A, B on it, and C on B (new ids 1,
 * 2, 3); the same shape in the original graph, plus S, a side commit on A
 * that was pruned (its stand-in is A).
 */
struct hist {
	struct prune *p;
	uint32_t a, b, c;	/* new graph */
	uint32_t oa, ob, oc, os;	/* original graph */
};

static void hist_make(struct hist *h)
{
	h->p = prune_new();
	h->a = prune_node(h->p, PRUNE_NEW, NULL, 0);
	h->b = prune_node(h->p, PRUNE_NEW, &h->a, 1);
	h->c = prune_node(h->p, PRUNE_NEW, &h->b, 1);
	h->oa = prune_node(h->p, PRUNE_ORIG, NULL, 0);
	h->ob = prune_node(h->p, PRUNE_ORIG, &h->oa, 1);
	h->oc = prune_node(h->p, PRUNE_ORIG, &h->ob, 1);
	h->os = prune_node(h->p, PRUNE_ORIG, &h->oa, 1);
}

static void test_none_removed(void **state)
{
	struct hist h;
	struct prune_parent v[2];
	size_t new1st;

	(void)state;
	hist_make(&h);
	v[0] = par(0, 0, h.os, 1);
	v[1] = par(3, h.c, h.oc, 0);
	assert_int_equal(prune_trim(h.p, v, 2, &new1st), 1);
	assert_int_equal(new1st, SIZE_MAX);
	assert_int_equal(v[0].gnew, h.c);
	v[0] = par(0, 0, h.os, 1);
	assert_int_equal(prune_trim(h.p, v, 1, &new1st), 0);
	prune_free(h.p);
}

/* A merge of C and of S pruned down to A: A is an ancestor of C, which
 * S was not: the merge would stop being one, so it keeps both and names
 * C as the parent it would have. */
static void test_degenerate_ancestor(void **state)
{
	struct hist h;
	struct prune_parent v[2];
	size_t new1st;

	(void)state;
	hist_make(&h);
	v[0] = par(3, h.c, h.oc, 0);
	v[1] = par(1, h.a, h.os, 1);
	assert_int_equal(prune_trim(h.p, v, 2, &new1st), 2);
	assert_int_equal(new1st, 0);
	/* the other way round: the first parent is the one that goes */
	v[0] = par(1, h.a, h.os, 1);
	v[1] = par(3, h.c, h.oc, 0);
	assert_int_equal(prune_trim(h.p, v, 2, &new1st), 2);
	assert_int_equal(new1st, 1);
	prune_free(h.p);
}

/* A --no-ff merge: its first parent was an ancestor of the second in the
 * original history too: it stays a merge, even when rewritten. */
static void test_no_ff_kept(void **state)
{
	struct hist h;
	struct prune_parent v[2];
	size_t new1st;

	(void)state;
	hist_make(&h);
	v[0] = par(1, h.a, h.oa, 1);
	v[1] = par(3, h.c, h.oc, 0);
	assert_int_equal(prune_trim(h.p, v, 2, &new1st), 2);
	assert_int_equal(new1st, SIZE_MAX);
	/* not rewritten: never a candidate */
	v[0] = par(1, h.a, h.os, 0);
	v[1] = par(3, h.c, h.oc, 0);
	assert_int_equal(prune_trim(h.p, v, 2, &new1st), 2);
	assert_int_equal(new1st, SIZE_MAX);
	prune_free(h.p);
}

/* Both sides pruned down to the same commit: the rewritten repeat goes;
 * a repeat that was in the original stays. */
static void test_duplicates(void **state)
{
	struct hist h;
	struct prune_parent v[3];
	size_t new1st;

	(void)state;
	hist_make(&h);
	v[0] = par(2, h.b, h.ob, 0);
	v[1] = par(2, h.b, h.os, 1);
	assert_int_equal(prune_trim(h.p, v, 2, &new1st), 2);
	assert_int_equal(new1st, 0);
	v[0] = par(2, h.b, h.ob, 0);
	v[1] = par(2, h.b, h.ob, 0);
	assert_int_equal(prune_trim(h.p, v, 2, &new1st), 2);
	assert_int_equal(new1st, SIZE_MAX);
	/* an octopus that stays one: the repeat goes, the rest stays */
	v[0] = par(3, h.c, h.oc, 0);
	v[1] = par(2, h.b, h.os, 1);
	v[2] = par(2, h.b, h.os, 1);
	memset(v[0].oid.hash, 9, OID_RAW);	/* not B's id */
	v[0].gnew = prune_outside(h.p, PRUNE_NEW, &v[0].oid);	/* unrelated */
	assert_int_equal(prune_trim(h.p, v, 3, &new1st), 2);
	assert_int_equal(new1st, SIZE_MAX);
	assert_int_equal(v[1].gnew, h.b);
	prune_free(h.p);
}

/* Commits from outside the stream are roots, one node per id. */
static void test_outside(void **state)
{
	struct prune *p = prune_new();
	struct oid x, y;

	(void)state;
	memset(x.hash, 7, OID_RAW);
	memset(y.hash, 8, OID_RAW);
	assert_int_equal(prune_outside(p, PRUNE_NEW, &x), prune_outside(p, PRUNE_NEW, &x));
	assert_int_not_equal(prune_outside(p, PRUNE_NEW, &x), prune_outside(p, PRUNE_NEW, &y));
	prune_free(p);
	prune_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_none_removed),
		cmocka_unit_test(test_degenerate_ancestor),
		cmocka_unit_test(test_no_ff_kept),
		cmocka_unit_test(test_duplicates),
		cmocka_unit_test(test_outside),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
