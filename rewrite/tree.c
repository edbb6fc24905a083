/* tree.c - persistent trees with path copying; see tree.h. */
#include "tree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TREE_MAX_DEPTH 4096 /* path components; bounds the recursion */
#define ARENA_CHUNK ((size_t)64 << 10)

struct tentry {
	const char *name;	/* in the arena, shared between versions */
	uint32_t len;
	uint32_t mode;
	struct oid oid;		/* files; directories use sub's id */
	struct tnode *sub;	/* directories only, never NULL there */
};

struct tnode {
	struct tentry *e;
	uint32_t n, alloc;
	uint64_t gen;		/* changeable while gen == ts->gen */
	struct oid oid;
	unsigned char oid_valid, loaded;
	struct tnode *all_next;	/* every node, for tree_state_free */
};

struct arena_chunk {
	struct arena_chunk *next;
	size_t used, size;
	char data[];
};

struct tree_state {
	tree_loader_fn load;
	void *ctx;
	uint64_t gen;
	struct tnode *all;
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
	struct arena_chunk *c, *cn;

	if (!ts)
		return;
	for (n = ts->all; n; n = next) {
		next = n->all_next;
		free(n->e);
		free(n);
	}
	for (c = ts->names; c; c = cn) {
		cn = c->next;
		free(c);
	}
	obj_hash_free(ts->hash);
	buf_release(&ts->body);
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

/* git's tree order (FORMATS.md 6.2): a directory sorts as if its name
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

/* Binary search for (name, dir); 1 if found at *pos, else 0 with *pos
 * the insertion point. */
static int node_search(const struct tnode *t, const char *name, size_t len,
		       int dir, uint32_t *pos)
{
	uint32_t lo = 0, hi = t->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const struct tentry *e = &t->e[mid];
		int c = name_cmp(e->name, e->len, tree_mode_is_dir(e->mode),
				 name, len, dir);
		if (c == 0) {
			*pos = mid;
			return 1;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*pos = lo;
	return 0;
}

/* Names in a tree are unique whatever their type: try both. */
static struct tentry *node_find(const struct tnode *t, const char *name,
				size_t len)
{
	uint32_t pos;

	if (node_search(t, name, len, 0, &pos) ||
	    node_search(t, name, len, 1, &pos))
		return &t->e[pos];
	return NULL;
}

static int parse_tree_body(struct tree_state *ts, struct tnode *t,
			   const struct buf *body, struct err *e)
{
	const char *p = body->ptr, *end = body->ptr + body->len;

	while (p < end) {
		const char *sp = memchr(p, ' ', (size_t)(end - p));
		const char *nul = sp ? memchr(sp, '\0', (size_t)(end - sp)) : NULL;
		uint32_t mode = 0;
		struct tentry *en;
		const char *q;

		if (!sp || !nul || end - nul < 1 + OID_RAW)
			return err_set(e, ERR_IO, "tree %s: malformed object",
				       oid_hex(&t->oid, (char[OID_HEX + 1]){ 0 }));
		for (q = p; q < sp; q++)
			mode = mode * 8 + (uint32_t)(*q - '0');
		if (t->n == t->alloc) {
			t->alloc = t->alloc ? t->alloc * 2 : 8;
			t->e = xrealloc(t->e, t->alloc * sizeof(*t->e));
		}
		en = &t->e[t->n++];
		en->name = intern(ts, sp + 1, (size_t)(nul - sp - 1));
		en->len = (uint32_t)(nul - sp - 1);
		en->mode = mode;
		memcpy(en->oid.hash, nul + 1, OID_RAW);
		en->sub = tree_mode_is_dir(mode) ? tree_from_oid(ts, &en->oid) : NULL;
		p = nul + 1 + OID_RAW;
	}
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

/* Makes *slot changeable in this generation (copying it if older) and
 * forgets its id, which the change will alter. */
static int node_mut(struct tree_state *ts, struct tnode **slot,
		    struct err *e)
{
	struct tnode *t = *slot, *c;

	if (node_load(ts, t, e) < 0)
		return -1;
	if (t->gen != ts->gen) {
		c = node_new(ts);
		c->n = c->alloc = t->n;
		if (t->n) {
			c->e = xmalloc(t->n * sizeof(*c->e));
			memcpy(c->e, t->e, t->n * sizeof(*c->e));
		}
		*slot = t = c;
	}
	t->oid_valid = 0;
	return 0;
}

static void node_remove_at(struct tnode *t, uint32_t pos)
{
	memmove(&t->e[pos], &t->e[pos + 1], (t->n - pos - 1) * sizeof(*t->e));
	t->n--;
}

static struct tentry *node_insert(struct tree_state *ts, struct tnode *t,
				  const char *name, size_t len, uint32_t mode)
{
	uint32_t pos;
	struct tentry *en;

	node_search(t, name, len, tree_mode_is_dir(mode), &pos);
	if (t->n == t->alloc) {
		t->alloc = t->alloc ? t->alloc * 2 : 8;
		t->e = xrealloc(t->e, t->alloc * sizeof(*t->e));
	}
	memmove(&t->e[pos + 1], &t->e[pos], (t->n - pos) * sizeof(*t->e));
	t->n++;
	en = &t->e[pos];
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
			return err_set(e, ERR_STREAM, "path is nested too deeply");
		start = i + 1;
	}
	return 0;
}

/* Frozen copies must not share changeable nodes (C/R of a directory
 * changed earlier in the same commit): freeze the changeable part. */
static void node_freeze(struct tree_state *ts, struct tnode *t)
{
	uint32_t i;

	if (t->gen != ts->gen)
		return;
	t->gen = 0;
	for (i = 0; i < t->n; i++)
		if (t->e[i].sub)
			node_freeze(ts, t->e[i].sub);
}

static int set_rec(struct tree_state *ts, struct tnode **slot,
		   const char *path, size_t len, uint32_t mode,
		   const struct oid *id, struct tnode *sub, struct err *e)
{
	const char *slash = memchr(path, '/', len);
	size_t clen = slash ? (size_t)(slash - path) : len;
	struct tnode *t;
	struct tentry *en;

	if (node_mut(ts, slot, e) < 0)
		return -1;
	t = *slot;
	en = node_find(t, path, clen);
	if (!slash) {
		if (en && tree_mode_is_dir(en->mode) != tree_mode_is_dir(mode)) {
			node_remove_at(t, (uint32_t)(en - t->e));
			en = NULL;
		}
		if (!en)
			en = node_insert(ts, t, path, clen, mode);
		en->mode = mode;
		en->oid = *id;
		en->sub = sub;
		return 0;
	}
	if (en && !tree_mode_is_dir(en->mode)) {
		node_remove_at(t, (uint32_t)(en - t->e));
		en = NULL;
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

		if (node_load(ts, t, e) < 0)
			return -1;
		en = node_find(t, path, clen);
		if (!en)
			return 0;
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

static int remove_rec(struct tree_state *ts, struct tnode **slot,
		      const char *path, size_t len, struct err *e)
{
	const char *slash = memchr(path, '/', len);
	size_t clen = slash ? (size_t)(slash - path) : len;
	struct tentry *en;

	if (node_mut(ts, slot, e) < 0)
		return -1;
	en = node_find(*slot, path, clen);
	if (!slash) {
		node_remove_at(*slot, (uint32_t)(en - (*slot)->e));
		return 0;
	}
	if (remove_rec(ts, &en->sub, slash + 1, len - clen - 1, e) < 0)
		return -1;
	if (en->sub->n == 0) /* prune directories left empty */
		node_remove_at(*slot, (uint32_t)(en - (*slot)->e));
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

int tree_lookup(struct tree_state *ts, struct tnode *root, const char *path,
		size_t len, uint32_t *mode, struct oid *id, struct err *e)
{
	struct tentry *en;
	int r = find_path(ts, root, path, len, &en, e);

	if (r <= 0)
		return r;
	*mode = en->mode;
	if (en->sub)
		return tree_hash(ts, en->sub, id, e) < 0 ? -1 : 1;
	*id = en->oid;
	return 1;
}

int tree_hash(struct tree_state *ts, struct tnode *t, struct oid *out,
	      struct err *e)
{
	uint32_t i;

	if (t->oid_valid) {
		*out = t->oid;
		return 0;
	}
	for (i = 0; i < t->n; i++)
		if (t->e[i].sub && tree_hash(ts, t->e[i].sub, &t->e[i].oid, e) < 0)
			return -1;
	buf_reset(&ts->body);
	for (i = 0; i < t->n; i++) {
		const struct tentry *en = &t->e[i];
		if (buf_printf(&ts->body, "%o ", en->mode) < 0 ||
		    buf_add(&ts->body, en->name, en->len) < 0 ||
		    buf_addch(&ts->body, '\0') < 0 ||
		    buf_add(&ts->body, en->oid.hash, OID_RAW) < 0)
			return err_set(e, ERR_IO, "tree too large");
	}
	obj_hash_buf(ts->hash, OBJ_TREE, ts->body.ptr, ts->body.len, &t->oid);
	t->oid_valid = 1;
	*out = t->oid;
	return 0;
}

static int walk_rec(struct tree_state *ts, struct tnode *t, struct buf *path,
		    tree_walk_fn fn, void *ctx, struct err *e)
{
	uint32_t i;
	int r;

	if (node_load(ts, t, e) < 0)
		return -1;
	for (i = 0; i < t->n; i++) {
		const struct tentry *en = &t->e[i];
		size_t keep = path->len;
		if ((keep && buf_addch(path, '/') < 0) ||
		    buf_add(path, en->name, en->len) < 0)
			return err_set(e, ERR_IO, "path too long");
		if (en->sub)
			r = walk_rec(ts, en->sub, path, fn, ctx, e);
		else
			r = fn(ctx, path->ptr, path->len, en->mode, &en->oid);
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
