/*
 * collect.c - the walk of `migrate analyze`: sizes from one `git cat-file
 * --batch-all-objects --batch-check`, the root trees from `git rev-list`,
 * then every tree, level by level, through one pipelined `git cat-file
 * --batch-command` (catfile.c): a tree is read once per path it sits at, however many commits
 * share it, so the cost follows the distinct trees of the history, not
 * commits times files. No blob content is read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../rules/rules.h"
#include "../blob/blob.h"
#include "walk.h"

/* The refs migrate itself keeps (run --in-place's originals) are not the
 * history being analyzed. */
#define EXCLUDE_OURS "--exclude=refs/migrate/*"
/* Requests written ahead of the answers read: 1000 of 50 bytes ("contents
 * <id>\n") are under a pipe's 64 KiB, so a write never waits for git while
 * git waits for us. */
#define AHEAD 1000
#define OUT_MAX (SIZE_MAX / 2)

/* ---- the object database: every blob's sizes ---- */

/* "<id> <type> <size> <disk>" lines: blobs counted (pass 0) or stored. */
static int parse_sizes(struct analysis *a, const struct buf *out, int store,
		       struct err *e)
{
	const char *p = out->ptr, *end = out->ptr + out->len, *nl;
	size_t n = 0;

	for (; p < end; p = nl + 1) {
		const char *f[4], *q = p;
		size_t flen[4], k;

		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		for (k = 0; k < 4; k++) {
			const char *sp = k < 3 ? memchr(q, ' ', (size_t)(nl - q)) : nl;
			if (!sp)
				break;
			f[k] = q;
			flen[k] = (size_t)(sp - q);
			q = sp + 1;
		}
		if (k < 4)
			return err_set(e, ERR_IO, "git cat-file --batch-check: "
				       "unexpected line '%.*s'", (int)(nl - p), p);
		if (!store)
			a->objects++;
		if (flen[1] != 4 || memcmp(f[1], "blob", 4))
			continue;
		if (store) {
			struct ablob *b = &a->blobs[n];
			if (oid_from_hex(&b->id, f[0], flen[0]) < 0 ||
			    parse_u64(f[2], flen[2], UINT64_MAX, &b->size) < 0 ||
			    parse_u64(f[3], flen[3], UINT64_MAX, &b->disk) < 0)
				return err_set(e, ERR_IO, "git cat-file --batch-check: "
					       "unexpected line '%.*s'", (int)(nl - p), p);
			a->all_bytes += b->size;
			a->all_disk += b->disk;
			HASH_ADD(hh, a->by_id, id.hash, OID_RAW, b);
		}
		n++;
	}
	a->nblobs = n;
	return 0;
}

static int read_sizes(struct analysis *a, struct err *e)
{
	struct buf out = BUF_INIT(OUT_MAX);
	int rc;

	rc = gitcmd_runl(a->repo, 1, &out, e, "cat-file", "--batch-all-objects",
			 "--batch-check=%(objectname) %(objecttype) %(objectsize) "
			 "%(objectsize:disk)", NULL);
	if (rc == 0)
		rc = parse_sizes(a, &out, 0, e);
	if (rc == 0) {
		a->blobs = xcalloc(a->nblobs ? a->nblobs : 1, sizeof(*a->blobs));
		rc = parse_sizes(a, &out, 1, e);
	}
	buf_release(&out);
	return rc;
}

/* ---- paths and pairs ---- */

/* The index of path s in a->paths, added when new. */
static uint32_t path_intern(struct analysis *a, const char *s, size_t len)
{
	struct apath *p;

	HASH_FIND(hh, a->path_set, s, len, p);
	if (p)
		return p->idx;
	if (a->npaths == a->apaths) {
		a->apaths = a->apaths ? 2 * a->apaths : 1024;
		a->paths = xrealloc(a->paths, a->apaths * sizeof(*a->paths));
	}
	p = xcalloc(1, sizeof(*p));
	p->s = xmemdup(s, len);
	p->len = len;
	p->idx = (uint32_t)a->npaths;
	a->paths[a->npaths++] = p;
	HASH_ADD_KEYPTR(hh, a->path_set, p->s, len, p);
	return p->idx;
}

/* The blob id at path, seen the ways flags says. A blob the database
 * does not list (a partial clone) has no sizes to show: not counted. */
static void pair_add(struct analysis *a, const struct oid *id,
		     const char *path, size_t len, unsigned flags)
{
	struct ablob *b;
	struct apair *p;
	uint64_t key;
	uint32_t pi;

	HASH_FIND(hh, a->by_id, id->hash, OID_RAW, b);
	if (!b)
		return;
	pi = path_intern(a, path, len);
	key = (uint64_t)(b - a->blobs) << 32 | pi;
	HASH_FIND(hh, a->pairs, &key, sizeof(key), p);
	if (!p) {
		p = xcalloc(1, sizeof(*p));
		p->key = key;
		HASH_ADD(hh, a->pairs, key, sizeof(p->key), p);
		if (b->npaths == b->apaths) {
			b->apaths = b->apaths ? 2 * b->apaths : 2;
			b->paths = xrealloc(b->paths, b->apaths * sizeof(*b->paths));
		}
		b->paths[b->npaths++] = pi;
	}
	p->flags |= flags;
}

/* ---- the trees, level by level ---- */

/* A tree to read at a path: the key is its id's 20 bytes, then the path. */
struct qent {
	char *key;
	size_t klen;
	unsigned flags;		/* PAIR_TIP, PAIR_OTHER */
	UT_hash_handle hh;
};

static void queue_add(struct qent **q, const struct oid *id, const char *path,
		      size_t len, unsigned flags)
{
	struct qent *en;
	char *key = xmalloc(OID_RAW + len + 1);

	memcpy(key, id->hash, OID_RAW);
	memcpy(key + OID_RAW, path, len);
	HASH_FIND(hh, *q, key, OID_RAW + len, en);
	if (en) {
		en->flags |= flags;
		free(key);
		return;
	}
	en = xcalloc(1, sizeof(*en));
	en->key = key;
	en->klen = OID_RAW + len;
	en->flags = flags;
	HASH_ADD_KEYPTR(hh, *q, en->key, en->klen, en);
}

/* The tree id of q. */
static const struct oid *key_oid(const struct qent *q, struct oid *id)
{
	memcpy(id->hash, q->key, OID_RAW);
	return id;
}

static void queue_free(struct qent **q)
{
	struct qent *en, *t;

	HASH_ITER(hh, *q, en, t) {
		HASH_DEL(*q, en);
		free(en->key);
		free(en);
	}
}

/* Reads the answer for tree `want` into body. */
static int cat_read(struct catfile *c, const struct oid *want,
		    struct buf *body, struct err *e)
{
	enum obj_type type;
	struct oid id;
	uint64_t size;
	char hex[OID_HEX + 1];
	int r = catfile_header(c, &type, &id, &size, e);

	if (r < 0)
		return -1;
	if (r == 0 || type != OBJ_TREE || !oid_eq(&id, want))
		return err_set(e, ERR_IO, "git cat-file: tree %s: %s",
			       oid_hex(want, hex),
			       r == 0 ? "missing" : obj_type_name(type));
	return catfile_body(c, body, e);
}

/* The entries of one tree read at path: blobs become pairs, subtrees
 * the next level. */
static int parse_tree(struct analysis *a, const struct qent *q,
		      const struct buf *body, struct qent **next,
		      struct buf *path, struct err *e)
{
	const char *dir = q->key + OID_RAW;
	size_t dlen = q->klen - OID_RAW;
	struct tree_iter it;
	struct tree_item item;
	struct oid tree;
	char hex[OID_HEX + 1];
	int r;

	tree_iter_init(&it, body->ptr, body->len);
	while ((r = tree_iter_next(&it, &item)) > 0) {
		buf_reset(path);
		if (dlen && (buf_add(path, dir, dlen) < 0 || buf_addch(path, '/') < 0))
			goto bad;
		if (buf_add(path, item.name, item.len) < 0)
			goto bad;
		if (tree_mode_is_dir(item.mode))
			queue_add(next, &item.oid, path->ptr, path->len, q->flags);
		else if (item.mode == TREE_MODE_LINK)
			pair_add(a, &item.oid, path->ptr, path->len, q->flags | PAIR_LINK);
		else if (item.mode != TREE_MODE_GITLINK)
			pair_add(a, &item.oid, path->ptr, path->len, q->flags | PAIR_FILE);
	}
	if (r == 0)
		return 0;
bad:
	oid_hex(key_oid(q, &tree), hex);
	return err_set(e, ERR_IO, "tree %s: malformed entry at byte %zu", hex,
		       tree_iter_offset(&it));
}

/* Reads every tree of the level q (and fills *next). */
static int read_level(struct analysis *a, struct catfile *c, struct qent *q,
		      struct qent **next, struct err *e)
{
	struct buf body = BUF_INIT(BUF_MAX_DEFAULT);
	struct buf path = BUF_INIT(BUF_MAX_DEFAULT);
	struct qent *s = q, *r = q;
	size_t ahead = 0;
	struct oid id;
	char hex[OID_HEX + 1];
	int rc = 0;

	while (rc == 0 && r) {
		for (; rc == 0 && s && ahead < AHEAD; s = s->hh.next, ahead++)
			rc = catfile_ask(c, "contents", oid_hex(key_oid(s, &id), hex), e);
		if (rc < 0)
			break;
		rc = cat_read(c, key_oid(r, &id), &body, e);
		if (rc == 0)
			rc = parse_tree(a, r, &body, next, &path, e);
		a->trees_read++;
		r = r->hh.next;
		ahead--;
	}
	buf_release(&body);
	buf_release(&path);
	return rc;
}

static int walk_trees(struct analysis *a, struct qent **level, struct err *e)
{
	struct catfile *c;
	struct qent *next = NULL;
	struct err quiet = ERR_INIT;	/* after an error, e keeps the first */
	int rc;

	if (catfile_start(&c, a->repo, NULL, e) < 0)
		return -1;
	rc = 0;
	while (rc == 0 && *level) {
		rc = read_level(a, c, *level, &next, e);
		queue_free(level);
		*level = next;
		next = NULL;
	}
	queue_free(&next);
	if (catfile_close(c, rc < 0 ? &quiet : e) < 0)
		rc = -1;
	return rc;
}

/* ---- the commits ---- */

/* Each line of out (a tree id) to the queue, or with clear to drop
 * PAIR_OTHER from the trees already there; counts the lines. */
static int roots_add(struct qent **q, const struct buf *out, unsigned flags,
		     int clear, uint64_t *count, struct err *e)
{
	const char *p = out->ptr, *end = out->ptr + out->len, *nl;
	struct oid id;

	for (; p < end; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		if (oid_from_hex(&id, p, (size_t)(nl - p)) < 0)
			return err_set(e, ERR_IO, "git rev-list: unexpected line "
				       "'%.*s'", (int)(nl - p), p);
		if (clear) {
			struct qent *en;
			HASH_FIND(hh, *q, id.hash, OID_RAW, en);
			if (en)
				en->flags &= ~PAIR_OTHER;
		} else {
			queue_add(q, &id, "", 0, flags);
		}
		if (count)
			(*count)++;
	}
	return 0;
}

/* The root trees: of every commit, of the tips, and with rules those of
 * refs/notes/ (whose files the rules never change). */
static int read_roots(struct analysis *a, struct qent **q, struct err *e)
{
	struct buf out = BUF_INIT(OUT_MAX);
	struct gitrefs refs = GITREFS_INIT;
	int rc;

	rc = gitcmd_runl(a->repo, 1, &out, e, "rev-list", EXCLUDE_OURS, "--all",
			 "--no-commit-header", "--format=%T", NULL);
	if (rc == 0)
		rc = roots_add(q, &out, PAIR_OTHER, 0, &a->commits, e);
	buf_reset(&out);
	if (rc == 0)
		rc = gitcmd_runl(a->repo, 1, &out, e, "rev-list", "--no-walk",
				 EXCLUDE_OURS, "--all", "--no-commit-header",
				 "--format=%T", NULL);
	if (rc == 0)
		rc = roots_add(q, &out, PAIR_TIP, 0, NULL, e);
	buf_reset(&out);
	if (rc == 0 && a->rules)
		rc = gitcmd_runl(a->repo, 1, &out, e, "rev-list",
				 "--glob=refs/notes/*", "--no-commit-header",
				 "--format=%T", NULL);
	if (rc == 0 && a->rules)
		rc = roots_add(q, &out, 0, 1, NULL, e);
	if (rc == 0)
		rc = gitrefs_list(&refs, a->repo, NULL, e);
	a->refs = refs.n;
	gitrefs_free(&refs);
	buf_release(&out);
	return rc;
}

/* ---- the sums ---- */

/* "*.EXT" of the file's name (from its last dot, a leading one too), or
 * the name itself when it has no dot: git lfs migrate info's groups. */
static void ext_of(const char *path, size_t len, struct buf *out)
{
	const char *base = memrchr(path, '/', len), *dot;
	size_t blen;

	base = base ? base + 1 : path;
	blen = len - (size_t)(base - path);
	dot = memrchr(base, '.', blen);
	buf_reset(out);
	if (dot) {
		buf_addch(out, '*');
		buf_add(out, dot, blen - (size_t)(dot - base));
	} else {
		buf_add(out, base, blen);
	}
}

static void ext_count(struct analysis *a, const struct apair *p,
		      const struct ablob *b, const struct apath *path,
		      struct buf *tmp)
{
	struct aext *x;

	ext_of(path->s, path->len, tmp);
	HASH_FIND(hh, a->exts, tmp->ptr, tmp->len, x);
	if (!x) {
		x = xcalloc(1, sizeof(*x));
		x->name = xmemdup(tmp->ptr, tmp->len);
		HASH_ADD_KEYPTR(hh, a->exts, x->name, tmp->len, x);
	}
	x->files++;
	x->bytes += b->size;
	x->disk += b->disk;
	if (p->flags & PAIR_TIP) {
		x->tip_files++;
		x->tip_bytes += b->size;
	}
}

/* A distinct (rule, kind, index): 1 the first time. */
static int seen_once(struct apair **set, size_t rule, unsigned kind,
		     uint64_t idx)
{
	struct apair *p;
	uint64_t key = (uint64_t)rule << 33 | (uint64_t)kind << 32 | idx;

	HASH_FIND(hh, *set, &key, sizeof(key), p);
	if (p)
		return 0;
	p = xcalloc(1, sizeof(*p));
	p->key = key;
	HASH_ADD(hh, *set, key, sizeof(p->key), p);
	return 1;
}

static size_t rule_index(const struct rules *rules, const struct rule *rule)
{
	size_t i;

	for (i = 0; i < rules_count(rules) && rules_get(rules, i) != rule; i++)
		;
	return i;
}

/* What the rules decide for the pair; its blob remains when kept. */
static int decide(struct analysis *a, const struct apair *p, struct ablob *b,
		  const struct apath *path, struct apair **seen, struct err *e)
{
	const struct rule *rule = rules_match_blob(a->rules, b->id.hash);
	enum blob_action action = BLOB_DROP;
	struct arule *st;
	size_t ri;

	/* an id rule drops the blob at every path (the filter's by_id);
	 * else a symlink is kept, unless replace-text takes it */
	if (!rule && (p->flags & PAIR_LINK)) {
		if (blob_decide(a->rules, path->s, path->len, TREE_MODE_LINK,
				b->size, !(p->flags & PAIR_OTHER), &rule,
				&action, e) < 0)
			return -1;
		if (!rule)
			b->remains = 1;
	}
	if (!rule && (p->flags & PAIR_FILE) &&
	    blob_decide(a->rules, path->s, path->len, TREE_MODE_FILE, b->size,
			!(p->flags & PAIR_OTHER), &rule, &action, e) < 0)
		return -1;
	if ((p->flags & PAIR_FILE) && action == BLOB_KEEP)
		b->remains = 1;
	if (!rule)
		return 0;
	ri = rule_index(a->rules, rule);
	st = &a->rule_stats[ri];
	st->paths += seen_once(seen, ri, 0, path->idx);
	if (seen_once(seen, ri, 1, (uint64_t)(b - a->blobs))) {
		st->blobs++;
		st->bytes += b->size;
		st->disk += b->disk;
	}
	return 0;
}

static int sum_up(struct analysis *a, struct err *e)
{
	struct buf tmp = BUF_INIT(BUF_MAX_DEFAULT);
	struct apair *p, *t, *seen = NULL;
	size_t i;
	int rc = 0;

	if (a->rules)
		a->rule_stats = xcalloc(rules_count(a->rules) + 1,
					sizeof(*a->rule_stats));
	HASH_ITER(hh, a->pairs, p, t) {
		struct ablob *b = &a->blobs[p->key >> 32];
		const struct apath *path = a->paths[(uint32_t)p->key];

		if (p->flags & PAIR_TIP)
			b->present = 1;
		if (p->flags & PAIR_FILE)
			ext_count(a, p, b, path, &tmp);
		if (a->rules && decide(a, p, b, path, &seen, e) < 0) {
			rc = -1;
			break;
		}
	}
	for (i = 0; i < a->nblobs; i++) {
		const struct ablob *b = &a->blobs[i];

		if (!b->npaths)
			continue;
		a->reached++;
		a->reached_bytes += b->size;
		a->reached_disk += b->disk;
		if (a->rules && b->remains) {
			a->remain_blobs++;
			a->remain_bytes += b->size;
			a->remain_disk += b->disk;
		}
	}
	HASH_ITER(hh, seen, p, t) {
		HASH_DEL(seen, p);
		free(p);
	}
	buf_release(&tmp);
	return rc;
}

static int by_path(const void *x, const void *y, void *ctx)
{
	const struct analysis *a = ctx;
	const struct apath *p = a->paths[*(const uint32_t *)x];
	const struct apath *q = a->paths[*(const uint32_t *)y];
	int c = memcmp(p->s, q->s, p->len < q->len ? p->len : q->len);

	return c ? c : (p->len > q->len) - (p->len < q->len);
}

/* Each blob's paths in byte order (as git and filter-repo sort them). */
static void sort_paths(struct analysis *a)
{
	size_t i;

	for (i = 0; i < a->nblobs; i++)
		qsort_r(a->blobs[i].paths, a->blobs[i].npaths,
			sizeof(*a->blobs[i].paths), by_path, a);
}

/* ---- the whole ---- */

int analyze_repo(struct analysis **out, const struct analyze_options *opt,
		 struct err *e)
{
	struct analysis *a = xcalloc(1, sizeof(*a));
	struct qent *roots = NULL;
	char *gitdir = NULL;
	int rc;

	a->repo = opt->repo ? xstrdup(opt->repo) : NULL;
	a->rules = opt->rules;
	a->rules_path = opt->rules_path;
	a->top = opt->top;
	rc = gitcmd_git_dir(a->repo, &gitdir, e);
	free(gitdir);
	if (rc == 0)
		rc = read_sizes(a, e);
	if (rc == 0)
		rc = read_roots(a, &roots, e);
	if (rc == 0)
		rc = walk_trees(a, &roots, e);
	queue_free(&roots);
	if (rc == 0)
		rc = sum_up(a, e);
	if (rc == 0)
		sort_paths(a);
	if (rc < 0) {
		analyze_free(a);
		return -1;
	}
	*out = a;
	return 0;
}

static int by_size(const void *x, const void *y)
{
	const struct ablob *a = *(const struct ablob *const *)x;
	const struct ablob *b = *(const struct ablob *const *)y;

	if (a->size != b->size)
		return a->size < b->size ? 1 : -1;
	if (a->disk != b->disk)
		return a->disk < b->disk ? 1 : -1;
	return memcmp(a->id.hash, b->id.hash, OID_RAW);
}

const struct ablob **walk_sorted_blobs(const struct analysis *a, size_t *n)
{
	const struct ablob **v = xmalloc((a->nblobs + 1) * sizeof(*v));
	size_t i;

	*n = 0;
	for (i = 0; i < a->nblobs; i++)
		if (a->blobs[i].npaths)
			v[(*n)++] = &a->blobs[i];
	qsort(v, *n, sizeof(*v), by_size);
	return v;
}

void analyze_free(struct analysis *a)
{
	struct apair *p, *t;
	struct aext *x, *xt;
	size_t i;

	if (!a)
		return;
	HASH_CLEAR(hh, a->by_id);
	for (i = 0; i < a->nblobs; i++)
		free(a->blobs[i].paths);
	free(a->blobs);
	HASH_CLEAR(hh, a->path_set);
	for (i = 0; i < a->npaths; i++) {
		free(a->paths[i]->s);
		free(a->paths[i]);
	}
	free(a->paths);
	HASH_ITER(hh, a->pairs, p, t) {
		HASH_DEL(a->pairs, p);
		free(p);
	}
	HASH_ITER(hh, a->exts, x, xt) {
		HASH_DEL(a->exts, x);
		free(x->name);
		free(x);
	}
	free(a->rule_stats);
	free(a->repo);
	free(a);
}
