/*
 * tree.c - persistent trees with path copying; see tree.h.
 *
 * A directory's entries, sorted in git's tree order, are kept in chunks of
 * at most CHUNK_MAX entries, and the node holds an array of chunk
 * pointers. Changing one entry of a directory copies the node, its chunk
 * array and the one chunk that changes; the other chunks stay shared with
 * the older versions. A directory of n entries thus costs n / CHUNK_MAX
 * pointers plus one chunk per change, not n entries: a commit that
 * touches one file among 20,000 adds a few KB, not a megabyte.
 *
 * Ownership: nodes and chunks live until tree_state_free (nodes on a
 * list, chunks in a registry, because a chunk that grows is reallocated).
 * A node or chunk is changeable only while its gen equals the state's;
 * a changeable chunk belongs to exactly one changeable node.
 */
#include "git.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TREE_MAX_DEPTH 4096 /* path components; bounds the recursion */
#define ARENA_CHUNK ((size_t)64 << 10)
#define CHUNK_MAX 64u	/* entries per chunk; a chunk is then about 3 KB */

struct tentry {
	const char *name;	/* in the arena, shared between versions */
	uint32_t len;
	uint32_t mode;
	struct oid oid;		/* files; directories use sub's id */
	struct tnode *sub;	/* directories only, never NULL there */
};

struct tchunk {
	uint64_t gen;		/* changeable while gen == ts->gen */
	size_t reg;		/* index in ts->chunks */
	uint32_t n, cap;
	struct tentry e[];
};

struct tnode {
	struct tchunk **c;
	uint32_t nc, ccap;
	uint32_t n;		/* entries in all chunks */
	uint64_t gen;		/* changeable while gen == ts->gen */
	struct oid oid;
	struct oid from;	/* the version it was copied from */
	unsigned char oid_valid, loaded, has_from;
	struct tnode *all_next;	/* every node, for tree_state_free */
};

/* Where an entry is, or would be inserted. */
struct tpos {
	uint32_t c, i;
};

struct arena_chunk {
	struct arena_chunk *next;
	size_t used, size;
	char data[];
};

struct tree_state {
	tree_loader_fn load;
	void *ctx;
	tree_made_fn made;
	void *made_ctx;
	struct buf made_path;	/* the directory tree_hash is in */
	uint64_t gen;
	struct tnode *all;
	struct tchunk **chunks;
	size_t nchunks, chunkcap;
	struct arena_chunk *names;
	struct obj_hash *hash;
	struct buf body;
};

struct tree_state *tree_state_new(tree_loader_fn load, void *ctx)
{
	struct tree_state *ts = xcalloc(1, sizeof(*ts));

	ts->load = load;
	ts->ctx = ctx;
	ts->gen = 1; /* 0 marks frozen nodes */
	ts->hash = obj_hash_new();
	buf_init(&ts->body, SIZE_MAX / 2);
	return ts;
}

void tree_state_free(struct tree_state *ts)
{
	struct tnode *n, *next;
	struct arena_chunk *a, *an;
	size_t i;

	if (!ts)
		return;
	for (n = ts->all; n; n = next) {
		next = n->all_next;
		free(n->c);
		free(n);
	}
	for (i = 0; i < ts->nchunks; i++)
		free(ts->chunks[i]);
	free(ts->chunks);
	for (a = ts->names; a; a = an) {
		an = a->next;
		free(a);
	}
	obj_hash_free(ts->hash);
	buf_release(&ts->body);
	buf_release(&ts->made_path);
	free(ts);
}

void tree_state_freeze(struct tree_state *ts)
{
	ts->gen++;
}

static const char *intern(struct tree_state *ts, const char *s, size_t len)
{
	struct arena_chunk *c = ts->names;
	char *p;

	if (!c || c->size - c->used < len) {
		size_t size = len > ARENA_CHUNK ? len : ARENA_CHUNK;
		c = xmalloc(sizeof(*c) + size);
		c->size = size;
		c->used = 0;
		c->next = ts->names;
		ts->names = c;
	}
	p = c->data + c->used;
	memcpy(p, s, len);
	c->used += len;
	return p;
}

/* ---- chunks ---- */

/* A new chunk with room for cap entries holding the n at e, registered. */
static struct tchunk *chunk_new(struct tree_state *ts, uint64_t gen,
				uint32_t cap, const struct tentry *e,
				uint32_t n)
{
	struct tchunk *k = xmalloc(sizeof(*k) + (size_t)cap * sizeof(k->e[0]));

	k->gen = gen;
	k->n = n;
	k->cap = cap;
	if (n)
		memcpy(k->e, e, (size_t)n * sizeof(*e));
	if (ts->nchunks == ts->chunkcap) {
		ts->chunkcap = ts->chunkcap ? ts->chunkcap * 2 : 64;
		ts->chunks = xrealloc(ts->chunks,
				      ts->chunkcap * sizeof(*ts->chunks));
	}
	k->reg = ts->nchunks;
	ts->chunks[ts->nchunks++] = k;
	return k;
}

/* Frees a changeable chunk no node points to any more. */
static void chunk_free(struct tree_state *ts, struct tchunk *k)
{
	struct tchunk *last = ts->chunks[--ts->nchunks];

	ts->chunks[k->reg] = last;
	last->reg = k->reg;
	free(k);
}

/* Room for one more entry in chunk t->c[ci], which only t points to (a
 * changeable one, or one of a node being loaded), and n < CHUNK_MAX. */
static struct tchunk *chunk_room(struct tree_state *ts, struct tnode *t,
				 uint32_t ci)
{
	struct tchunk *k = t->c[ci];
	uint32_t cap;

	if (k->n < k->cap)
		return k;
	cap = k->cap * 2 < CHUNK_MAX ? k->cap * 2 : CHUNK_MAX;
	t->c[ci] = chunk_new(ts, k->gen, cap, k->e, k->n);
	chunk_free(ts, k);
	return t->c[ci];
}

/* Makes chunk ci of changeable node t changeable (copying it if older). */
static struct tchunk *chunk_mut(struct tree_state *ts, struct tnode *t,
				uint32_t ci)
{
	struct tchunk *k = t->c[ci];

	if (k->gen != ts->gen)
		t->c[ci] = k = chunk_new(ts, ts->gen, k->n ? k->n : 1, k->e,
					 k->n);
	return k;
}

/* Inserts chunk k into t's chunk array at ci. */
static void chunks_insert(struct tnode *t, uint32_t ci, struct tchunk *k)
{
	if (t->nc == t->ccap) {
		t->ccap = t->ccap ? t->ccap * 2 : 4;
		t->c = xrealloc(t->c, t->ccap * sizeof(*t->c));
	}
	memmove(&t->c[ci + 1], &t->c[ci], (t->nc - ci) * sizeof(*t->c));
	t->c[ci] = k;
	t->nc++;
}

static struct tentry *entry_at(const struct tnode *t, struct tpos p)
{
	return &t->c[p.c]->e[p.i];
}

/* ---- nodes ---- */

static struct tnode *node_new(struct tree_state *ts)
{
	struct tnode *n = xcalloc(1, sizeof(*n));

	n->gen = ts->gen;
	n->loaded = 1;
	n->all_next = ts->all;
	ts->all = n;
	return n;
}

struct tnode *tree_new_empty(struct tree_state *ts)
{
	return node_new(ts);
}

struct tnode *tree_from_oid(struct tree_state *ts, const struct oid *id)
{
	struct tnode *n = node_new(ts);

	n->gen = 0;
	n->oid = *id;
	n->oid_valid = 1;
	/* the empty tree needs no repository */
	n->loaded = oid_eq(id, &oid_empty_tree);
	return n;
}

uint32_t tree_mode_normalize(uint32_t mode)
{
	if (mode == 0644)
		return TREE_MODE_FILE;
	if (mode == 0755)
		return TREE_MODE_EXEC;
	if (tree_mode_is_dir(mode))
		return TREE_MODE_DIR;
	return mode;
}

/* git's tree order (docs/FORMATS.md 6.2): a directory sorts as if its name
 * ended in '/'. */
static int name_cmp(const char *a, size_t alen, int adir, const char *b,
		    size_t blen, int bdir)
{
	size_t n = alen < blen ? alen : blen;
	int c = memcmp(a, b, n);
	unsigned ca, cb;

	if (c)
		return c;
	ca = alen > n ? (unsigned char)a[n] : (adir ? '/' : 0);
	cb = blen > n ? (unsigned char)b[n] : (bdir ? '/' : 0);
	return (int)ca - (int)cb;
}

static int entry_cmp(const struct tentry *e, const char *name, size_t len,
		     int dir)
{
	return name_cmp(e->name, e->len, tree_mode_is_dir(e->mode), name, len,
			dir);
}

/*
 * Binary search for (name, dir): 1 if found at *pos, else 0 with *pos
 * the insertion point. The chunk is the last whose first entry is not
 * after the name (the first chunk when none is); an empty node gives
 * {0, 0}.
 */
static int node_search(const struct tnode *t, const char *name, size_t len,
		       int dir, struct tpos *pos)
{
	uint32_t lo = 1, hi = t->nc;
	const struct tchunk *k;

	*pos = (struct tpos){ 0, 0 };
	if (!t->nc)
		return 0;
	while (lo < hi) {	/* the first chunk whose first entry is after */
		uint32_t mid = lo + (hi - lo) / 2;

		if (entry_cmp(&t->c[mid]->e[0], name, len, dir) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	pos->c = lo - 1;
	k = t->c[pos->c];
	lo = 0;
	hi = k->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = entry_cmp(&k->e[mid], name, len, dir);

		if (c == 0) {
			pos->i = mid;
			return 1;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	pos->i = lo;
	return 0;
}

/* Names in a tree are unique whatever their type: try both. */
static int node_find(const struct tnode *t, const char *name, size_t len,
		     struct tpos *pos)
{
	return node_search(t, name, len, 0, pos) ||
	       node_search(t, name, len, 1, pos);
}

/* Appends an entry to a node being loaded (entries come in tree order). */
static struct tentry *node_append(struct tree_state *ts, struct tnode *t)
{
	struct tchunk *k = t->nc ? t->c[t->nc - 1] : NULL;

	if (!k || k->n == CHUNK_MAX)
		chunks_insert(t, t->nc, chunk_new(ts, t->gen, 4, NULL, 0));
	k = chunk_room(ts, t, t->nc - 1);
	t->n++;
	return &k->e[k->n++];
}

static int parse_tree_body(struct tree_state *ts, struct tnode *t,
			   const struct buf *body, struct err *e)
{
	struct tree_iter it;
	struct tree_item item;
	int r;

	tree_iter_init(&it, body->ptr, body->len);
	while ((r = tree_iter_next(&it, &item)) > 0) {
		struct tentry *en = node_append(ts, t);

		en->name = intern(ts, item.name, item.len);
		en->len = (uint32_t)item.len;
		en->mode = item.mode;
		en->oid = item.oid;
		en->sub = tree_mode_is_dir(item.mode) ? tree_from_oid(ts, &en->oid) : NULL;
	}
	if (r < 0)
		return err_set(e, ERR_IO, "tree %s: malformed object",
			       oid_hex(&t->oid, (char[OID_HEX + 1]){ 0 }));
	return 0;
}

static int node_load(struct tree_state *ts, struct tnode *t, struct err *e)
{
	char hex[OID_HEX + 1];

	if (t->loaded)
		return 0;
	if (!ts->load)
		return err_set(e, ERR_IO,
			       "tree %s is needed but no repository to read it from",
			       oid_hex(&t->oid, hex));
	if (ts->load(ts->ctx, &t->oid, &ts->body, e) < 0)
		return -1;
	if (parse_tree_body(ts, t, &ts->body, e) < 0)
		return -1;
	t->loaded = 1;
	return 0;
}

/* Makes *slot changeable in this generation (copying it if older: the
 * chunk array only, the chunks stay shared) and forgets its id, which the
 * change will alter. */
static int node_mut(struct tree_state *ts, struct tnode **slot,
		    struct err *e)
{
	struct tnode *t = *slot, *c;

	if (node_load(ts, t, e) < 0)
		return -1;
	if (t->gen != ts->gen) {
		c = node_new(ts);
		c->from = t->oid;
		c->has_from = t->oid_valid;
		c->n = t->n;
		c->nc = c->ccap = t->nc;
		if (t->nc) {
			c->c = xmalloc(t->nc * sizeof(*c->c));
			memcpy(c->c, t->c, t->nc * sizeof(*c->c));
		}
		*slot = t = c;
	}
	t->oid_valid = 0;
	return 0;
}

/* A changeable entry at pos of changeable node t. */
static struct tentry *entry_mut(struct tree_state *ts, struct tnode *t,
				struct tpos pos)
{
	return &chunk_mut(ts, t, pos.c)->e[pos.i];
}

static void node_remove_at(struct tree_state *ts, struct tnode *t,
			   struct tpos pos)
{
	struct tchunk *k = chunk_mut(ts, t, pos.c);

	memmove(&k->e[pos.i], &k->e[pos.i + 1],
		(k->n - pos.i - 1) * sizeof(k->e[0]));
	k->n--;
	t->n--;
	if (k->n == 0) {
		memmove(&t->c[pos.c], &t->c[pos.c + 1],
			(t->nc - pos.c - 1) * sizeof(*t->c));
		t->nc--;
		chunk_free(ts, k);
	}
}

static struct tentry *node_insert(struct tree_state *ts, struct tnode *t,
				  const char *name, size_t len, uint32_t mode)
{
	struct tpos pos;
	struct tchunk *k;
	struct tentry *en;

	node_search(t, name, len, tree_mode_is_dir(mode), &pos);
	if (!t->nc) {
		chunks_insert(t, 0, chunk_new(ts, ts->gen, 4, NULL, 0));
	} else if (t->c[pos.c]->n == CHUNK_MAX) {
		/* split the full chunk: its upper half becomes a new one */
		uint32_t half = CHUNK_MAX / 2;

		k = chunk_mut(ts, t, pos.c);
		chunks_insert(t, pos.c + 1,
			      chunk_new(ts, ts->gen, CHUNK_MAX, k->e + half,
					CHUNK_MAX - half));
		k->n = half;
		if (pos.i > half) {
			pos.c++;
			pos.i -= half;
		}
	}
	chunk_mut(ts, t, pos.c);
	k = chunk_room(ts, t, pos.c);
	memmove(&k->e[pos.i + 1], &k->e[pos.i],
		(k->n - pos.i) * sizeof(k->e[0]));
	k->n++;
	t->n++;
	en = &k->e[pos.i];
	en->name = intern(ts, name, len);
	en->len = (uint32_t)len;
	en->mode = mode;
	en->oid = oid_null;
	en->sub = NULL;
	return en;
}

/* Checks a path the way fast-import and git need it: no empty, "." or
 * ".." component, no NUL, bounded depth. */
static int path_check(const char *path, size_t len, struct err *e)
{
	size_t i, start = 0, depth = 0;

	for (i = 0; i <= len; i++) {
		size_t clen;
		if (i < len && path[i] == '\0')
			return err_set(e, ERR_STREAM, "path contains a NUL byte");
		if (i < len && path[i] != '/')
			continue;
		clen = i - start;
		if (clen == 0)
			return err_set(e, ERR_STREAM,
				       "path '%.*s' has an empty component",
				       (int)len, path);
		if ((clen == 1 && path[start] == '.') ||
		    (clen == 2 && path[start] == '.' && path[start + 1] == '.'))
			return err_set(e, ERR_STREAM,
				       "path '%.*s' has a '.' or '..' component",
				       (int)len, path);
		if (++depth > TREE_MAX_DEPTH)
			return err_set(e, ERR_STREAM, "path '%.*s%s' (%zu bytes) has more "
				       "than %d components: migrate's limit", (int)(len < 120 ? len : 120),
				       path, len > 120 ? "..." : "", len, TREE_MAX_DEPTH);
		start = i + 1;
	}
	return 0;
}

/* Frozen copies must not share changeable nodes (C/R of a directory
 * changed earlier in the same commit): freeze the changeable part. */
static void node_freeze(struct tree_state *ts, struct tnode *t)
{
	uint32_t ci, i;

	if (t->gen != ts->gen)
		return;
	t->gen = 0;
	for (ci = 0; ci < t->nc; ci++) {
		struct tchunk *k = t->c[ci];

		if (k->gen != ts->gen)
			continue;	/* older: so is everything below it */
		k->gen = 0;
		for (i = 0; i < k->n; i++)
			if (k->e[i].sub)
				node_freeze(ts, k->e[i].sub);
	}
}

static int set_rec(struct tree_state *ts, struct tnode **slot,
		   const char *path, size_t len, uint32_t mode,
		   const struct oid *id, struct tnode *sub, struct err *e)
{
	const char *slash = memchr(path, '/', len);
	size_t clen = slash ? (size_t)(slash - path) : len;
	struct tnode *t;
	struct tentry *en = NULL;
	struct tpos pos;

	if (node_mut(ts, slot, e) < 0)
		return -1;
	t = *slot;
	if (node_find(t, path, clen, &pos)) {
		en = entry_at(t, pos);
		/* a file where a directory goes, or the other way round */
		if (tree_mode_is_dir(en->mode) !=
		    (slash ? 1 : tree_mode_is_dir(mode))) {
			node_remove_at(ts, t, pos);
			en = NULL;
		} else {
			en = entry_mut(ts, t, pos);
		}
	}
	if (!slash) {
		if (!en)
			en = node_insert(ts, t, path, clen, mode);
		en->mode = mode;
		en->oid = *id;
		en->sub = sub;
		return 0;
	}
	if (!en) {
		en = node_insert(ts, t, path, clen, TREE_MODE_DIR);
		en->sub = tree_new_empty(ts);
	}
	return set_rec(ts, &en->sub, slash + 1, len - clen - 1, mode, id, sub, e);
}

static int set_entry(struct tree_state *ts, struct tnode **root,
		     const char *path, size_t len, uint32_t mode,
		     const struct oid *id, struct tnode *sub, struct err *e)
{
	if (path_check(path, len, e) < 0)
		return -1;
	return set_rec(ts, root, path, len, mode, id, sub, e);
}

int tree_set(struct tree_state *ts, struct tnode **root, const char *path,
	     size_t len, uint32_t mode, const struct oid *id, struct err *e)
{
	mode = tree_mode_normalize(mode);
	if (!tree_mode_is_dir(mode))
		return set_entry(ts, root, path, len, mode, id, NULL, e);
	if (len == 0) {
		*root = tree_from_oid(ts, id);
		return 0;
	}
	if (oid_eq(id, &oid_empty_tree))
		return tree_remove(ts, root, path, len, e) < 0 ? -1 : 0;
	return set_entry(ts, root, path, len, mode, id, tree_from_oid(ts, id), e);
}

/* Finds the entry at path without changing anything; NULL if absent. */
static int find_path(struct tree_state *ts, struct tnode *t, const char *path,
		     size_t len, struct tentry **out, struct err *e)
{
	for (;;) {
		const char *slash = memchr(path, '/', len);
		size_t clen = slash ? (size_t)(slash - path) : len;
		struct tentry *en;
		struct tpos pos;

		if (node_load(ts, t, e) < 0)
			return -1;
		if (!node_find(t, path, clen, &pos))
			return 0;
		en = entry_at(t, pos);
		if (!slash) {
			*out = en;
			return 1;
		}
		if (!tree_mode_is_dir(en->mode))
			return 0;
		t = en->sub;
		path = slash + 1;
		len -= clen + 1;
	}
}

/* Removes path, which exists (find_path said so). */
static int remove_rec(struct tree_state *ts, struct tnode **slot,
		      const char *path, size_t len, struct err *e)
{
	const char *slash = memchr(path, '/', len);
	size_t clen = slash ? (size_t)(slash - path) : len;
	struct tentry *en;
	struct tpos pos;

	if (node_mut(ts, slot, e) < 0)
		return -1;
	node_find(*slot, path, clen, &pos);
	if (!slash) {
		node_remove_at(ts, *slot, pos);
		return 0;
	}
	en = entry_mut(ts, *slot, pos);
	if (remove_rec(ts, &en->sub, slash + 1, len - clen - 1, e) < 0)
		return -1;
	if (en->sub->n == 0) /* prune directories left empty */
		node_remove_at(ts, *slot, pos);
	return 0;
}

int tree_remove(struct tree_state *ts, struct tnode **root, const char *path,
		size_t len, struct err *e)
{
	struct tentry *en;
	int r;

	if (len == 0)
		return 0;
	if (path_check(path, len, e) < 0)
		return -1;
	r = find_path(ts, *root, path, len, &en, e);
	if (r <= 0)
		return r;
	if (remove_rec(ts, root, path, len, e) < 0)
		return -1;
	return 1;
}

int tree_copy(struct tree_state *ts, struct tnode **root, const char *src,
	      size_t slen, const char *dst, size_t dlen, int rename,
	      struct err *e)
{
	struct tentry *en;
	uint32_t mode;
	struct oid id = oid_null;
	struct tnode *sub;
	int r;

	if (slen == 0) {
		mode = TREE_MODE_DIR;
		sub = *root;
	} else {
		if (path_check(src, slen, e) < 0)
			return -1;
		r = find_path(ts, *root, src, slen, &en, e);
		if (r < 0)
			return -1;
		if (r == 0)
			return err_set(e, ERR_STREAM, "path '%.*s' not in branch",
				       (int)slen, src);
		mode = en->mode;
		id = en->oid;
		sub = en->sub;
	}
	if (sub)
		node_freeze(ts, sub);
	if (rename && tree_remove(ts, root, src, slen, e) < 0)
		return -1;
	if (dlen == 0) {
		if (!sub)
			return err_set(e, ERR_STREAM, "cannot copy a file to the root");
		*root = sub;
		return 0;
	}
	return set_entry(ts, root, dst, dlen, mode, &id, sub, e);
}

static int hash_at(struct tree_state *ts, struct tnode *t, const char *path,
		   size_t len, struct oid *out, struct err *e);

int tree_lookup(struct tree_state *ts, struct tnode *root, const char *path,
		size_t len, uint32_t *mode, struct oid *id, struct err *e)
{
	struct tentry *en;
	int r = find_path(ts, root, path, len, &en, e);

	if (r <= 0)
		return r;
	*mode = en->mode;
	if (!id)
		return 1;
	if (en->sub)
		return hash_at(ts, en->sub, path, len, id, e) < 0 ? -1 : 1;
	*id = en->oid;
	return 1;
}

/* Writes mode in octal, as git does ("40000", "100644"); returns the
 * length. */
static size_t mode_octal(uint32_t mode, char out[12])
{
	char tmp[12];
	size_t n = 0, i;

	do {
		tmp[n++] = (char)('0' + (mode & 7));
		mode >>= 3;
	} while (mode);
	for (i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	return n;
}

/*
 * t's raw bytes into body ("<mode> <name>\0<20 bytes>" per entry): the
 * size summed first and the buffer grown once, every tree a commit
 * changes is built again at each commit (the root of git's history,
 * 300 entries, 15,000 times). 0, or -1 when too large.
 */
static int tree_body(const struct tnode *t, struct buf *body)
{
	size_t need = 0, n;
	uint32_t ci, i;
	char *p;

	for (ci = 0; ci < t->nc; ci++)
		for (i = 0; i < t->c[ci]->n; i++) {
			char mode[12];

			n = mode_octal(t->c[ci]->e[i].mode, mode) + 2 +
			    t->c[ci]->e[i].len + OID_RAW;
			if (size_add(need, n, &need) < 0)
				return -1;
		}
	buf_reset(body);
	if (buf_grow(body, need) < 0)
		return -1;
	p = body->ptr;
	for (ci = 0; ci < t->nc; ci++)
		for (i = 0; i < t->c[ci]->n; i++) {
			const struct tentry *en = &t->c[ci]->e[i];

			p += mode_octal(en->mode, p);
			*p++ = ' ';
			memcpy(p, en->name, en->len);
			p += en->len;
			*p++ = '\0';
			memcpy(p, en->oid.hash, OID_RAW);
			p += OID_RAW;
		}
	body->len = need;
	body->ptr[need] = '\0';
	return 0;
}

void tree_state_on_made(struct tree_state *ts, tree_made_fn fn, void *ctx)
{
	ts->made = fn;
	ts->made_ctx = ctx;
	buf_init(&ts->made_path, SIZE_MAX / 2);
}

static int hash_rec(struct tree_state *ts, struct tnode *t, struct err *e)
{
	size_t at = ts->made_path.len;
	uint32_t ci, i;

	if (t->oid_valid)
		return 0;
	/* a sub's id depends on its bytes only, so writing it into a chunk
	 * shared with older versions changes nothing they see */
	for (ci = 0; ci < t->nc; ci++) {
		struct tchunk *k = t->c[ci];

		for (i = 0; i < k->n; i++) {
			struct tentry *en = &k->e[i];

			if (!en->sub || en->sub->oid_valid) {
				if (en->sub)
					en->oid = en->sub->oid;
				continue;
			}
			if (ts->made &&
			    ((at && buf_addch(&ts->made_path, '/') < 0) ||
			     buf_add(&ts->made_path, en->name, en->len) < 0))
				return err_set(e, ERR_IO, "path too long");
			if (hash_rec(ts, en->sub, e) < 0)
				return -1;
			en->oid = en->sub->oid;
			if (ts->made)
				ts->made_path.len = at;
		}
	}
	if (tree_body(t, &ts->body) < 0)
		return err_set(e, ERR_IO, "tree too large");
	obj_hash_buf(ts->hash, OBJ_TREE, ts->body.ptr, ts->body.len, &t->oid);
	t->oid_valid = 1;
	if (ts->made && ts->made(ts->made_ctx, ts->made_path.ptr ?
				 ts->made_path.ptr : "", at, &ts->body,
				 &t->oid, t->has_from ? &t->from : NULL, e) != 0)
		return -1;
	return 0;
}

/* tree_hash of t, the directory at path (len bytes; "" the root). */
static int hash_at(struct tree_state *ts, struct tnode *t, const char *path,
		   size_t len, struct oid *out, struct err *e)
{
	ts->made_path.len = 0;
	if (ts->made && buf_add(&ts->made_path, path, len) < 0)
		return err_set(e, ERR_IO, "path too long");
	if (hash_rec(ts, t, e) < 0)
		return -1;
	*out = t->oid;
	return 0;
}

int tree_hash(struct tree_state *ts, struct tnode *t, struct oid *out,
	      struct err *e)
{
	return hash_at(ts, t, "", 0, out, e);
}

static int walk_rec(struct tree_state *ts, struct tnode *t, struct buf *path,
		    tree_walk_fn fn, void *ctx, struct err *e)
{
	uint32_t ci, i;
	int r;

	if (node_load(ts, t, e) < 0)
		return -1;
	for (ci = 0; ci < t->nc; ci++)
		for (i = 0; i < t->c[ci]->n; i++) {
			const struct tentry *en = &t->c[ci]->e[i];
			size_t keep = path->len;

			if ((keep && buf_addch(path, '/') < 0) ||
			    buf_add(path, en->name, en->len) < 0)
				return err_set(e, ERR_IO, "path too long");
			if (en->sub)
				r = walk_rec(ts, en->sub, path, fn, ctx, e);
			else
				r = fn(ctx, path->ptr, path->len, en->mode,
				       &en->oid);
			path->len = keep;
			path->ptr[keep] = '\0';
			if (r)
				return r;
		}
	return 0;
}

int tree_walk(struct tree_state *ts, struct tnode *root, tree_walk_fn fn,
	      void *ctx, struct err *e)
{
	struct buf path = BUF_INIT(BUF_MAX_DEFAULT);
	int r = walk_rec(ts, root, &path, fn, ctx, e);

	buf_release(&path);
	return r;
}

int tree_walk_at(struct tree_state *ts, struct tnode *root, const char *path,
		 size_t len, tree_walk_fn fn, void *ctx, struct err *e)
{
	struct buf full = BUF_INIT(BUF_MAX_DEFAULT);
	struct tentry *en;
	int r;

	if (len == 0)
		return tree_walk(ts, root, fn, ctx, e);
	r = find_path(ts, root, path, len, &en, e);
	if (r <= 0 || !en->sub)
		return r < 0 ? -1 : 0;
	buf_add(&full, path, len);
	r = walk_rec(ts, en->sub, &full, fn, ctx, e);
	buf_release(&full);
	return r;
}

/* ---- differences ---- */

struct diff_ctx {
	struct tree_state *ts;
	struct buf path;
	tree_diff_fn fn;
	void *ctx;
	struct err *e;
};

/* Entry i of t in order (t may be NULL: no entries). */
struct diff_it {
	const struct tnode *t;
	uint32_t c, i;
};

static const struct tentry *diff_cur(const struct diff_it *it)
{
	if (!it->t || it->c >= it->t->nc)
		return NULL;
	return &it->t->c[it->c]->e[it->i];
}

static void diff_next(struct diff_it *it)
{
	if (++it->i == it->t->c[it->c]->n) {
		it->c++;
		it->i = 0;
	}
}

static int diff_rec(struct diff_ctx *d, struct tnode *a, struct tnode *b,
		    unsigned depth);

/* One entry on one side only (or of another type on each side). */
static int diff_one(struct diff_ctx *d, const struct tentry *en, int is_new,
		    unsigned depth)
{
	if (en->sub)
		return is_new ? diff_rec(d, NULL, en->sub, depth + 1)
			      : diff_rec(d, en->sub, NULL, depth + 1);
	if (is_new)
		return d->fn(d->ctx, d->path.ptr, d->path.len, 0, NULL,
			     en->mode, &en->oid);
	return d->fn(d->ctx, d->path.ptr, d->path.len, en->mode, &en->oid, 0,
		     NULL);
}

static int same_tree(const struct tnode *a, const struct tnode *b)
{
	return a == b || (a->oid_valid && b->oid_valid && oid_eq(&a->oid, &b->oid));
}

static int diff_pair(struct diff_ctx *d, const struct tentry *x,
		     const struct tentry *y, unsigned depth)
{
	int c;

	if (!x || !y)
		c = x ? -1 : 1;
	else
		c = name_cmp(x->name, x->len, x->sub != NULL, y->name, y->len,
			     y->sub != NULL);
	if (c < 0)
		return diff_one(d, x, 0, depth);
	if (c > 0)
		return diff_one(d, y, 1, depth);
	if (x->sub)
		return same_tree(x->sub, y->sub) ? 0 :
		       diff_rec(d, x->sub, y->sub, depth + 1);
	if (x->mode == y->mode && oid_eq(&x->oid, &y->oid))
		return 0;
	return d->fn(d->ctx, d->path.ptr, d->path.len, x->mode, &x->oid,
		     y->mode, &y->oid);
}

static int diff_rec(struct diff_ctx *d, struct tnode *a, struct tnode *b,
		    unsigned depth)
{
	struct diff_it ia = { a, 0, 0 }, ib = { b, 0, 0 };
	const struct tentry *x, *y;
	int r = 0, c;

	if (depth > TREE_MAX_DEPTH)
		return err_set(d->e, ERR_IO, "tree deeper than %d levels",
			       TREE_MAX_DEPTH);
	if ((a && node_load(d->ts, a, d->e) < 0) ||
	    (b && node_load(d->ts, b, d->e) < 0))
		return -1;
	while (r == 0 && ((x = diff_cur(&ia)) || (y = diff_cur(&ib)))) {
		size_t keep = d->path.len;
		const struct tentry *en;

		y = diff_cur(&ib);
		if (!x || !y)
			c = x ? -1 : 1;
		else
			c = name_cmp(x->name, x->len, x->sub != NULL, y->name,
				     y->len, y->sub != NULL);
		en = c <= 0 ? x : y;
		if ((keep && buf_addch(&d->path, '/') < 0) ||
		    buf_add(&d->path, en->name, en->len) < 0)
			return err_set(d->e, ERR_IO, "path too long");
		r = diff_pair(d, c <= 0 ? x : NULL, c >= 0 ? y : NULL, depth);
		d->path.len = keep;
		d->path.ptr[keep] = '\0';
		if (c <= 0)
			diff_next(&ia);
		if (c >= 0)
			diff_next(&ib);
	}
	return r;
}

int tree_diff(struct tree_state *ts, struct tnode *a, struct tnode *b,
	      tree_diff_fn fn, void *ctx, struct err *e)
{
	struct diff_ctx d = { ts, BUF_INIT(BUF_MAX_DEFAULT), fn, ctx, e };
	int r;

	if (a && b && same_tree(a, b))
		return 0;
	r = diff_rec(&d, a, b, 0);
	buf_release(&d.path);
	return r;
}
