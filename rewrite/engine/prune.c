/*
 * prune.c - commits the rewrite emptied, pruned as git filter-repo
 * --prune-empty=auto --prune-degenerate=auto prunes them: the two
 * ancestry graphs (the new history and the original one) and the
 * trimming of a commit's parents. It knows nothing of the stream: the
 * dispatcher (engine.c) hands it graph nodes and flags and does what it
 * answers. Calls nothing else of the folder.
 *
 * The graphs are filter-repo's AncestryGraph: a node per commit with its
 * depth (one more than its deepest parent) and its parents; a commit from
 * outside the stream is a root of depth 1. is_ancestor walks from the
 * younger commit down, never below the depth of the older one. Memory is
 * a few words per commit and parent, whatever the size of the files.
 */
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "state.h"

struct gnode {
	uint32_t depth;
	uint32_t nparents;
	size_t first;		/* into pool */
};

struct ext_node {
	struct oid id;
	uint32_t node;
	UT_hash_handle hh;
};

struct graph {
	struct gnode *v;	/* v[0] unused: node 0 is "none" */
	size_t n, alloc;
	uint32_t *pool;
	size_t npool, pool_alloc;
	uint32_t *seen;		/* stamp per node, for one is_ancestor walk */
	size_t seen_alloc;
	uint32_t stamp;
	uint32_t *stack;
	size_t stack_alloc;
	struct ext_node *ext;
};

struct prune {
	struct graph g[2];	/* PRUNE_NEW, PRUNE_ORIG */
	int degenerate;		/* --prune-degenerate auto (1) or never (0) */
};

struct prune *prune_new(void)
{
	struct prune *p = xcalloc(1, sizeof(*p));
	int i;

	for (i = 0; i < 2; i++) {
		p->g[i].alloc = 1024;
		p->g[i].v = xcalloc(p->g[i].alloc, sizeof(*p->g[i].v));
		p->g[i].n = 1;
	}
	p->degenerate = 1;
	return p;
}

void prune_free(struct prune *p)
{
	struct ext_node *x, *t;
	int i;

	if (!p)
		return;
	for (i = 0; i < 2; i++) {
		HASH_ITER(hh, p->g[i].ext, x, t) {
			HASH_DEL(p->g[i].ext, x);
			free(x);
		}
		free(p->g[i].v);
		free(p->g[i].pool);
		free(p->g[i].seen);
		free(p->g[i].stack);
	}
	free(p);
}

uint32_t prune_node(struct prune *p, int which, const uint32_t *parents,
		    size_t n)
{
	struct graph *g = &p->g[which];
	struct gnode *node;
	uint32_t depth = 0;
	size_t i;

	if (g->n == g->alloc) {
		g->alloc *= 2;
		g->v = xrealloc(g->v, g->alloc * sizeof(*g->v));
	}
	while (g->npool + n > g->pool_alloc) {
		g->pool_alloc = g->pool_alloc ? 2 * g->pool_alloc : 1024;
		g->pool = xrealloc(g->pool, g->pool_alloc * sizeof(*g->pool));
	}
	node = &g->v[g->n];
	node->first = g->npool;
	node->nparents = 0;
	for (i = 0; i < n; i++) {
		if (!parents[i])
			continue;	/* none: a history pruned away */
		g->pool[g->npool++] = parents[i];
		node->nparents++;
		if (g->v[parents[i]].depth > depth)
			depth = g->v[parents[i]].depth;
	}
	node->depth = depth + 1;
	if (g->n >= UINT32_MAX)
		die("migrate: more than 4 billion commits");
	return (uint32_t)g->n++;
}

uint32_t prune_outside(struct prune *p, int which, const struct oid *id)
{
	struct graph *g = &p->g[which];
	struct ext_node *x;

	HASH_FIND(hh, g->ext, id->hash, OID_RAW, x);
	if (x)
		return x->node;
	x = xcalloc(1, sizeof(*x));
	x->id = *id;
	x->node = prune_node(p, which, NULL, 0);
	HASH_ADD(hh, g->ext, id.hash, OID_RAW, x);
	return x->node;
}

/* filter-repo's AncestryGraph.is_ancestor: 1 when a is b or one of its
 * ancestors. */
static int is_ancestor(struct graph *g, uint32_t a, uint32_t b)
{
	uint32_t depth_a = g->v[a].depth;
	size_t top = 0, i;

	if (g->seen_alloc < g->n) {
		g->seen = xrealloc(g->seen, g->alloc * sizeof(*g->seen));
		memset(g->seen + g->seen_alloc, 0,
		       (g->alloc - g->seen_alloc) * sizeof(*g->seen));
		g->seen_alloc = g->alloc;
	}
	if (++g->stamp == 0) {	/* wrapped: forget every old walk */
		memset(g->seen, 0, g->seen_alloc * sizeof(*g->seen));
		g->stamp = 1;
	}
	if (!g->stack_alloc) {
		g->stack_alloc = 256;
		g->stack = xmalloc(g->stack_alloc * sizeof(*g->stack));
	}
	g->stack[top++] = b;
	while (top) {
		uint32_t x = g->stack[--top];
		const struct gnode *node = &g->v[x];

		if (g->seen[x] == g->stamp)
			continue;
		g->seen[x] = g->stamp;
		if (x == a)
			return 1;
		if (node->depth <= depth_a)
			continue;
		for (i = 0; i < node->nparents; i++) {
			if (top == g->stack_alloc) {
				g->stack_alloc *= 2;
				g->stack = xrealloc(g->stack, g->stack_alloc *
						    sizeof(*g->stack));
			}
			g->stack[top++] = g->pool[node->first + i];
		}
	}
	return 0;
}

/*
 * filter-repo's _trim_extra_parents (--prune-degenerate=auto): parents
 * pruned away entirely go; of the others, a rewritten parent (one whose
 * original was pruned) that repeats an earlier one, or that became an
 * ancestor of another parent without having been one in the original
 * history, goes too. When that would leave fewer than two, the commit
 * keeps its parents (less the ones pruned away) and *new1st names the
 * parent it would have: the commit is pruned if it is empty against that
 * one, else written with the parents it has. One difference: the first
 * parent is never taken away from a merge that stays one (octopus), as
 * then every file change would have to be made again against another
 * parent.
 */
size_t prune_trim(struct prune *p, struct prune_parent *v, size_t n,
		  size_t *new1st)
{
	struct graph *gn = &p->g[PRUNE_NEW], *go = &p->g[PRUNE_ORIG];
	size_t i, j, k, m;
	char *gone;

	*new1st = SIZE_MAX;
	for (i = k = 0; i < n; i++)
		if (!v[i].none)
			v[k++] = v[i];
	n = k;
	if (n < 2 || !p->degenerate)
		return n;
	gone = xcalloc(n, 1);
	/* duplicates that are rewritten */
	for (i = 0; i < n; i++) {
		if (!v[i].skipped)
			continue;
		for (j = 0; j < i; j++)
			if (oid_eq(&v[j].oid, &v[i].oid))
				break;
		if (j < i)
			gone[i] = 1;
	}
	for (i = m = 0; i < n; i++)
		m += !gone[i];
	if (m < 2) {
		for (i = 0; i < n && gone[i]; i++)
			;
		*new1st = i;
		free(gone);
		return n;
	}
	/* rewritten parents that became an ancestor of another one */
	for (i = 0; i < n; i++) {
		if (gone[i] || !v[i].skipped)
			continue;
		for (j = 0; j < n; j++) {
			/* as filter-repo: one found going still counts */
			if (j == i || gone[j] == 1)
				continue;
			if (!is_ancestor(gn, v[i].gnew, v[j].gnew))
				continue;
			if (v[i].gorig && v[j].gorig &&
			    is_ancestor(go, v[i].gorig, v[j].gorig))
				continue;	/* meant so (a --no-ff merge) */
			gone[i] = 2;
			break;
		}
	}
	for (i = m = 0; i < n; i++)
		m += !gone[i];
	if (m < 2) {
		for (i = 0; i < n && gone[i]; i++)
			;
		*new1st = i;
		free(gone);
		return n;
	}
	if (gone[0] == 2)
		gone[0] = 0;	/* see above: the first parent stays */
	for (i = k = 0; i < n; i++)
		if (!gone[i])
			v[k++] = v[i];
	free(gone);
	return k;
}
