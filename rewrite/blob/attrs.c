/*
 * attrs.c - the root .gitattributes that makes git-lfs treat exactly the
 * converted files as LFS files (docs/FORMATS.md 7): the lines of the
 * plain glob rules, plus one line per path where the truth differs from
 * what the globs say, kept up to date by a tree diff per commit, and the
 * user's own .gitattributes (the "base") kept as it is, ahead of ours.
 * A nested .gitattributes of the user's that would have the last word on
 * a converted path gets that path's line after its own (below, "nested
 * .gitattributes").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "way.h"

/* The .gitattributes blobs migrate wrote, and the user's file each one
 * extends (none: has_base 0). */
struct attr_ent {
	struct oid ours, base;
	int has_base;
	UT_hash_handle hh;
};

/* One path's .gitattributes line (a file migrate must add to or take out
 * of what the glob lines say), by path. */
struct path_line {
	char *path, *line;
	size_t len, line_len;
	int unset;
	UT_hash_handle hh;
};

/* A line of a text held elsewhere (with its LF, when it has one). */
struct line_ent {
	const char *p;
	size_t n;
	UT_hash_handle hh;
};

/* Whether a path is covered by the glob lines, remembered: paths repeat
 * from commit to commit. */
struct glob_ent {
	char *path;
	int covered;
	UT_hash_handle hh;
};

/* attrs.c's state (struct blobs' at). */
struct attrs {
	/* unlfs with --missing=keep: the pointers it leaves keep a
	 * filter=lfs line of their own in the root .gitattributes */
	int kept;
	struct rules *globs;	/* the unconditioned lfs glob rules alone */
	struct buf glob_lines;	/* their .gitattributes lines */
	struct glob_ent *glob_memo;	/* path -> covered by the glob lines */
	struct attr_ent *ents;
	struct oid base_id;		/* cache: the last base read */
	struct buf base;
	int has_base_cache;
	struct line_ent *base_set;	/* the lines of base */
	struct buf tmp, line;
	/*
	 * The per-path lines of the tree at root, kept up to date by a tree
	 * diff per commit (cost follows the commit's changes), and the
	 * .gitattributes text last built from them (text_*).
	 */
	struct path_line *plines;
	struct tnode *root;	/* NULL: the empty tree */
	uint64_t plines_ver;
	int text_valid, text_has_base;
	uint64_t text_ver;
	struct oid text_base, text_id;
	struct err walk_err;		/* from inside tree walks */
	/* the user's nested .gitattributes and the lines migrate adds to
	 * them */
	struct nest *nest;
	/* --fixup (below): the root file's lines that assign one of the
	 * four, whether the whole tree is looked at again, and the paths
	 * the commit's files are decided at */
	struct attr_rule *root_rules;
	size_t n_root_rules;
	int fixup_all;
	struct buf todo;
};

static const char lfs_attrs[] = "filter=lfs diff=lfs merge=lfs -text";
static const char lfs_unset[] = "!filter !diff !merge !text";

/* the nested files' part, below */
static struct nest *nest_new(void);
static void nest_free(struct nest *n);
static int nest_change(struct blobs *b, const char *path, size_t len,
		       uint32_t mode, const struct oid *id, int want,
		       struct err *e);
static void name_push(struct buf *list, const char *name, size_t n);

static void line_set_clear(struct line_ent **set)
{
	struct line_ent *x, *t;

	HASH_ITER(hh, *set, x, t) {
		HASH_DEL(*set, x);
		free(x);
	}
}

/* Adds the line p (n bytes) to set unless it is there: 1 added, 0 not. */
static int line_set_add(struct line_ent **set, const char *p, size_t n)
{
	struct line_ent *x;

	HASH_FIND(hh, *set, p, n, x);
	if (x)
		return 0;
	x = xcalloc(1, sizeof(*x));
	x->p = p;
	x->n = n;
	HASH_ADD_KEYPTR(hh, *set, x->p, n, x);
	return 1;
}

static void plines_clear(struct blobs *b)
{
	struct path_line *pl, *t;

	HASH_ITER(hh, b->at->plines, pl, t) {
		HASH_DEL(b->at->plines, pl);
		free(pl->path);
		free(pl->line);
		free(pl);
	}
	b->at->root = NULL;
	b->at->plines_ver++;
}

/* Keeps the first of equal lines of text. */
static void dedup_lines(struct buf *text)
{
	struct buf out = BUF_INIT(text->max);
	struct line_ent *seen = NULL;
	const char *p = text->ptr, *end = text->ptr + text->len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);

		if (line_set_add(&seen, p, n))
			buf_add(&out, p, n);
		p += n;
	}
	line_set_clear(&seen);
	buf_release(text);
	*text = out;
}

/*
 * The .gitattributes lines of the plain glob lfs rules, and a rule set of
 * those globs alone, to tell which paths the lines cover (per-path lines
 * then add or remove exactly the difference).
 */
int attrs_init(struct blobs *b, struct err *e)
{
	struct buf text = BUF_INIT(RULES_MAX_FILE);
	size_t i;
	int r = 0;

	b->at = xcalloc(1, sizeof(*b->at));
	buf_init(&b->at->glob_lines, BUF_MAX_DEFAULT);
	buf_init(&b->at->tmp, BUF_MAX_DEFAULT);
	buf_init(&b->at->line, SIZE_MAX / 2);
	buf_init(&b->at->base, (size_t)16 << 20);
	b->at->nest = nest_new();
	buf_init(&b->at->todo, SIZE_MAX / 2);
	for (i = 0; i < rules_count(b->rules) && r == 0; i++) {
		const struct rule *rule = rules_get(b->rules, i);
		enum rules_action a = rules_rule_action(rule);
		const char *pat;
		size_t len;

		if (a == RULES_UNLFS && b->opt.missing_keep)
			b->at->kept = 1;
		if (a != RULES_LFS)
			continue;
		b->has_lfs = 1;
		if (rules_rule_is_regex(rule) || rules_rule_size(rule, NULL, NULL))
			continue;
		if (rules_rule_attr_line(&b->at->glob_lines, rule, lfs_attrs, e) < 0) {
			e->kind = ERR_USAGE;
			r = err_prefix(e, "%s: ", b->opt.rules);
			break;
		}
		pat = rules_rule_pattern(rule, &len);
		rules_quote_value(&text, pat, len);
		buf_adds(&text, " lfs\n");
	}
	if (r == 0)
		r = rules_parse(&b->at->globs, text.ptr, text.len, "(lfs globs)", e);
	buf_release(&text);
	if (r == 0)
		dedup_lines(&b->at->glob_lines);
	return r;
}

/* 1 when git-lfs should see the file at path as an LFS file. */
static int wants_lfs(struct blobs *b, const char *path, size_t len,
		     uint32_t mode, const struct oid *id, struct err *e)
{
	struct pointer_ent *p;
	struct blob_info *bi;
	const struct rule *rule;
	enum blob_action action;
	int r;

	if (!blob_convertible(path, len, mode))
		return 0;
	p = pointers_find(b, id);
	if (p && p->kind == POINTER_LFS)
		return 1;
	/* a part of a split file: text this run wrote (inline, or in a
	 * pack made.c has not named yet), never LFS */
	r = splits_is_part(b, path, len, id, e);
	if (r)
		return r < 0 ? -1 : 0;
	if (blob_for_entry(b, id, &bi, e) < 0)
		return -1;
	if (bi->size == 0) {
		/* an empty file is its own pointer: LFS where a rule says so */
		if (blob_decide(b->rules, path, len, mode, 0, 0, &rule, &action,
				e) < 0)
			return -1;
		return action == BLOB_LFS;
	}
	r = is_pointer(b, bi, e);
	return r < 0 ? -1 : r == 1;	/* a git-annex pointer is no LFS file */
}

static int glob_covers(struct blobs *b, const char *path, size_t len,
		       struct err *e)
{
	struct glob_ent *g;
	const struct rule *rule;

	HASH_FIND(hh, b->at->glob_memo, path, len, g);
	if (g)
		return g->covered;
	if (rules_match(&rule, b->at->globs, path, len, 0, e) < 0)
		return -1;
	g = xcalloc(1, sizeof(*g));
	g->path = xmemdup(path, len);
	g->covered = rule != NULL;
	HASH_ADD_KEYPTR(hh, b->at->glob_memo, g->path, len, g);
	return g->covered;
}

/* tree_diff's callback: path changed; its line (if any) follows. */
static int attr_change(void *ctx, const char *path, size_t len,
		       uint32_t old_mode, const struct oid *old_id,
		       uint32_t mode, const struct oid *id)
{
	struct blobs *b = ctx;
	struct err *e = &b->at->walk_err;
	struct path_line *pl;
	int want, glob;

	(void)old_mode;
	(void)old_id;
	HASH_FIND(hh, b->at->plines, path, len, pl);
	if (pl) {
		HASH_DEL(b->at->plines, pl);
		free(pl->path);
		free(pl->line);
		free(pl);
		b->at->plines_ver++;
	}
	want = mode ? wants_lfs(b, path, len, mode, id, e) : 0;
	if (want < 0 || nest_change(b, path, len, mode, id, want, e) < 0)
		return -1;
	if (!mode)
		return 0;
	glob = glob_covers(b, path, len, e);
	if (glob < 0)
		return -1;
	if (!want == !glob)
		return 0;
	buf_reset(&b->at->line);
	if (rules_attr_path_line(&b->at->line, path, len, want ? lfs_attrs : lfs_unset,
				 e) < 0)
		return -1;
	pl = xcalloc(1, sizeof(*pl));
	pl->path = xmemdup(path, len);
	pl->len = len;
	pl->line_len = b->at->line.len;
	pl->line = buf_detach(&b->at->line, NULL);
	pl->unset = !want;
	HASH_ADD_KEYPTR(hh, b->at->plines, pl->path, len, pl);
	b->at->plines_ver++;
	return 0;
}

/* Set lines first, then unset lines, each in path (= tree) order. */
static int pline_cmp(const void *a, const void *b)
{
	const struct path_line *x = *(const struct path_line *const *)a;
	const struct path_line *y = *(const struct path_line *const *)b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c;

	if (x->unset != y->unset)
		return x->unset - y->unset;
	c = memcmp(x->path, y->path, n);
	if (c)
		return c;
	return x->len < y->len ? -1 : x->len > y->len;
}

/* Appends line p (n bytes) to out unless the base has it. */
static void add_unless_in_base(struct blobs *b, int has_base, const char *p,
			       size_t n)
{
	struct line_ent *x = NULL;

	if (has_base)
		HASH_FIND(hh, b->at->base_set, p, n, x);
	if (!x)
		buf_add(&b->at->tmp, p, n);
}

/*
 * git ignores a .gitattributes of this size or more (attr.c
 * ATTR_MAX_FILE_SIZE, git 2.39.1 and later).
 */
#define ATTR_FILE_MAX ((size_t)100 << 20)

/* Builds b->at->tmp: the base (if any), then every line of ours it lacks. */
static int attr_text(struct blobs *b, int has_base, struct err *e)
{
	struct path_line **v, *pl, *t;
	const char *p, *end;
	size_t n = 0, i;

	buf_reset(&b->at->tmp);
	if (has_base) {
		buf_add(&b->at->tmp, b->at->base.ptr, b->at->base.len);
		if (b->at->tmp.len && b->at->tmp.ptr[b->at->tmp.len - 1] != '\n')
			buf_addch(&b->at->tmp, '\n');
	}
	for (p = b->at->glob_lines.ptr, end = p + b->at->glob_lines.len; p < end; p += n) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		n = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
		add_unless_in_base(b, has_base, p, n);
	}
	v = xmalloc((HASH_COUNT(b->at->plines) + 1) * sizeof(*v));
	n = 0;
	HASH_ITER(hh, b->at->plines, pl, t)
		v[n++] = pl;
	qsort(v, n, sizeof(*v), pline_cmp);
	for (i = 0; i < n; i++)
		add_unless_in_base(b, has_base, v[i]->line, v[i]->line_len);
	free(v);
	if (b->at->tmp.len >= ATTR_FILE_MAX)
		return err_set(e, ERR_USAGE, "the root .gitattributes would be "
			       "%zu bytes (%zu lines for single paths): git "
			       "ignores one of 100 MiB or more; convert these "
			       "files by glob rules", b->at->tmp.len, n);
	return 0;
}

/* The user's own .gitattributes under the one in the tree (ours or
 * theirs), read into b->at->base. 0 none, 1 found, -1 error. */
static int attr_base(struct blobs *b, const struct oid *in_tree, struct oid *base,
		     struct err *e)
{
	struct attr_ent *a;
	struct blob_info *bi;
	struct content c;
	ssize_t n;

	HASH_FIND(hh, b->at->ents, in_tree->hash, OID_RAW, a);
	if (a && !a->has_base)
		return 0;
	*base = a ? a->base : *in_tree;
	if (b->at->has_base_cache && oid_eq(&b->at->base_id, base))
		return 1;
	if (blob_for_entry(b, base, &bi, e) < 0 || content_open(b, bi, &c, e) < 0)
		return -1;
	line_set_clear(&b->at->base_set);
	b->at->has_base_cache = 0;
	buf_reset(&b->at->base);
	while ((n = content_read(&c, b->chunk, CHUNK, e)) > 0)
		if (buf_add(&b->at->base, b->chunk, (size_t)n) < 0) {
			n = err_set(e, ERR_IO, ".gitattributes larger than 16 MiB");
			break;
		}
	content_close(&c);
	if (n < 0)
		return -1;
	b->at->base_id = *base;
	b->at->has_base_cache = 1;
	{
		const char *p = b->at->base.ptr, *end = p + b->at->base.len;
		size_t len;

		for (; p < end; p += len) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			len = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
			line_set_add(&b->at->base_set, p, len);
		}
	}
	return 1;
}

/* ---- nested .gitattributes (issue 28, item 3) ----
 *
 * git reads the .gitattributes of a path's own directory and of each one
 * above it, the deepest first, and within a file the last line first: a
 * nested file of the user's that assigns filter, diff, merge or text to a
 * converted path (`*.bin -filter`, `binary`, a macro of the root's) wins
 * over the root's lines, and the file would stay a pointer (git-lfs has
 * the same flaw: its issue 3241). So the deepest nested file whose lines
 * assign one of the four to a converted path gets that path's own line
 * appended, anchored at its directory (`/rel filter=lfs diff=lfs
 * merge=lfs -text`): it then has the last word. A file that makes the
 * path an LFS file already gets nothing, a path not converted gets
 * nothing, and the user's lines stay as they are, ours after them. The
 * lines follow the same tree diff as the root's: a changed path is looked
 * at again; a nested file added, edited or deleted, or the root's macros
 * changed, walks again the directories they concern. What a line assigns
 * is attrread.c's reading.
 */

/* A nested .gitattributes in the tree at attr_root (regular files only:
 * git does not follow a symbolic link there). */
struct nest_file {
	char *dir;		/* its directory, no final '/' (the key) */
	size_t dlen;
	uint32_t mode;
	struct oid in_tree;	/* the blob in the tree: ours or the user's */
	struct oid base;	/* the user's */
	struct buf text;	/* the user's bytes */
	int has_text;		/* text (and base) read */
	struct attr_rule *rules;	/* its lines that assign one of the
					 * four, in file order */
	size_t nrules;
	struct path_line *lines;	/* ours, by full path */
	int dirty;		/* lines or blob changed: see whether to write */
	UT_hash_handle hh;
};

/* A nested file migrate wrote, and the user's it extends. */
struct nest_ours {
	struct oid ours, base;
	UT_hash_handle hh;
};

struct nest {
	struct nest_file *files;
	struct nest_ours *ours;
	struct attr_macros *macros;	/* the root's */
	struct oid defs_base;	/* ... read from this root file */
	int defs_has_base;
	int reread_all;		/* the macros changed: read every file again */
	/* directories (each NUL-ended): whose file changed in the commit,
	 * to walk, of dirty files */
	struct buf changed, walk, dirty;
	struct buf out, line, scratch;
};

/*
 * The root's macros, from the user's root file of the commit (b->at->base,
 * through attr_base): read again when that file changed, and when the
 * definitions differ from those the nested files were read with, every
 * nested file is read again (n->reread_all). 0 or -1.
 */
static int nest_macros(struct blobs *b, struct err *e)
{
	struct nest *n = b->at->nest;
	struct oid in_tree, base = oid_null;
	uint32_t mode = 0;
	int found, has = 0;

	found = tree_lookup(b->ts, *b->cur->root, ".gitattributes", 14, &mode,
			    &in_tree, e);
	if (found < 0)
		return -1;
	if (found && !tree_mode_is_dir(mode) &&
	    (has = attr_base(b, &in_tree, &base, e)) < 0)
		return -1;
	if (has == n->defs_has_base && (!has || oid_eq(&base, &n->defs_base)))
		return 0;
	n->defs_has_base = has;
	n->defs_base = base;
	if (attr_macros_read(n->macros, has ? b->at->base.ptr : "", has ? b->at->base.len : 0))
		n->reread_all = 1;
	if (b->opt.fixup) {
		/* the root's own lines decide too: every file again */
		attr_rules_free(b->at->root_rules, b->at->n_root_rules);
		b->at->root_rules = NULL;
		b->at->n_root_rules = has ? attr_rules_read(&b->at->root_rules,
				n->macros, b->at->base.ptr, b->at->base.len) : 0;
		b->at->fixup_all = 1;
	}
	return 0;
}

static void nest_rules_free(struct nest_file *f)
{
	attr_rules_free(f->rules, f->nrules);
	f->rules = NULL;
	f->nrules = 0;
}

/* Reads f->text into f->rules. Cannot fail. */
static void nest_parse(struct nest *n, struct nest_file *f)
{
	nest_rules_free(f);
	f->nrules = attr_rules_read(&f->rules, n->macros, f->text.ptr, f->text.len);
}

static void nest_dirty(struct nest *n, struct nest_file *f)
{
	if (f->dirty)
		return;
	f->dirty = 1;
	buf_add(&n->dirty, f->dir, f->dlen);
	buf_addch(&n->dirty, '\0');
}

static void nest_lines_free(struct nest_file *f)
{
	struct path_line *pl, *t;

	HASH_ITER(hh, f->lines, pl, t) {
		HASH_DEL(f->lines, pl);
		free(pl->path);
		free(pl->line);
		free(pl);
	}
}

static void nest_file_free(struct nest *n, struct nest_file *f)
{
	HASH_DEL(n->files, f);
	nest_lines_free(f);
	nest_rules_free(f);
	buf_release(&f->text);
	free(f->dir);
	free(f);
}

/* Forgets the nested files (the tree at attr_root is forgotten too). */
static void nest_clear(struct nest *n)
{
	struct nest_file *f, *t;

	HASH_ITER(hh, n->files, f, t)
		nest_file_free(n, f);
	buf_reset(&n->changed);
	buf_reset(&n->walk);
	buf_reset(&n->dirty);
}

static struct nest *nest_new(void)
{
	struct nest *n = xcalloc(1, sizeof(*n));

	n->macros = attr_macros_new();
	buf_init(&n->changed, BUF_MAX_DEFAULT);
	buf_init(&n->walk, BUF_MAX_DEFAULT);
	buf_init(&n->dirty, BUF_MAX_DEFAULT);
	buf_init(&n->out, SIZE_MAX / 2);
	buf_init(&n->line, BUF_MAX_DEFAULT);
	buf_init(&n->scratch, BUF_MAX_DEFAULT);
	return n;
}

/* Frees n and all it holds; NULL is fine. */
static void nest_free(struct nest *n)
{
	struct nest_ours *o, *t;

	if (!n)
		return;
	nest_clear(n);
	attr_macros_free(n->macros);
	HASH_ITER(hh, n->ours, o, t) {
		HASH_DEL(n->ours, o);
		free(o);
	}
	buf_release(&n->changed);
	buf_release(&n->walk);
	buf_release(&n->dirty);
	buf_release(&n->out);
	buf_release(&n->line);
	buf_release(&n->scratch);
	free(n);
}

/*
 * The deepest nested file whose lines assign filter, diff, merge or text
 * to path (*out, NULL: none), and in *lfs whether its lines make path an
 * LFS file already (all four, as our line does). 0, or -1 when a match
 * fails.
 */
static int nest_owner(struct blobs *b, const char *path, size_t len,
		      struct nest_file **out, int *lfs, struct err *e)
{
	size_t i = len;

	*out = NULL;
	*lfs = 0;
	while (i > 0) {
		struct nest_file *f;
		unsigned says = 0, ours = 0;
		size_t k;

		while (i > 0 && path[i - 1] != '/')
			i--;
		if (i < 2)
			break;
		HASH_FIND(hh, b->at->nest->files, path, i - 1, f);
		for (k = f ? f->nrules : 0; k-- > 0 && says != ATTR_ALL;) {
			const struct attr_rule *r = &f->rules[k];
			int hit;

			if (!(r->says & ~says))
				continue;
			if ((hit = attr_rule_hits(r, path + i, len - i, e)) < 0)
				return -1;
			if (hit) {
				ours |= r->lfs & ~says;
				says |= r->says;
			}
		}
		if (says) {
			*out = f;
			*lfs = says == ATTR_ALL && ours == ATTR_ALL;
			return 0;
		}
		i--;
	}
	return 0;
}

/*
 * Brings path's line in the nested files up to date: out of the file that
 * had it, into the one with the last word on path now when path is an
 * LFS file. want: 1 or 0 when known, -1 to find out (mode, id).
 */
static int nest_path(struct blobs *b, const char *path, size_t len,
		     uint32_t mode, const struct oid *id, int want,
		     struct err *e)
{
	struct nest *n = b->at->nest;
	struct nest_file *f;
	struct path_line *pl = NULL;
	size_t i;
	int lfs;

	for (i = len; i > 1 && !pl; i--) {
		if (path[i - 1] != '/')
			continue;
		HASH_FIND(hh, n->files, path, i - 1, f);
		if (f)
			HASH_FIND(hh, f->lines, path, len, pl);
		if (pl) {
			HASH_DEL(f->lines, pl);
			free(pl->path);
			free(pl->line);
			free(pl);
			nest_dirty(n, f);
			break;
		}
	}
	if (!mode || !want)
		return 0;
	if (nest_owner(b, path, len, &f, &lfs, e) < 0)
		return -1;
	if (!f || lfs)
		return 0;
	if (want < 0 && (want = wants_lfs(b, path, len, mode, id, e)) <= 0)
		return want;
	buf_reset(&n->line);
	if (rules_attr_path_line(&n->line, path + f->dlen + 1,
				 len - f->dlen - 1, lfs_attrs, e) < 0)
		return -1;
	pl = xcalloc(1, sizeof(*pl));
	pl->path = xmemdup(path, len);
	pl->len = len;
	pl->line_len = n->line.len;
	pl->line = buf_detach(&n->line, NULL);
	HASH_ADD_KEYPTR(hh, f->lines, pl->path, len, pl);
	nest_dirty(n, f);
	return 0;
}

/* tree_walk's callback: every file below a directory walked again. */
static int nest_walk_one(void *ctx, const char *path, size_t len,
			 uint32_t mode, const struct oid *id)
{
	struct blobs *b = ctx;

	if (b->opt.fixup) {	/* decided after the walks (fixup_todo) */
		name_push(&b->at->todo, path, len);
		return 0;
	}
	return nest_path(b, path, len, mode, id, -1, &b->at->walk_err);
}

/* The list of NUL-ended names (dirs) gets name (n bytes). */
static void name_push(struct buf *list, const char *name, size_t n)
{
	buf_add(list, name, n);
	buf_addch(list, '\0');
}

/* tree_diff's (attr_change's): path changed, want says whether it is an
 * LFS file now. A nested .gitattributes is read again after the diff
 * (nest_follow); any other path under a nested file has its line brought
 * up to date now (and again if a walk after the diff meets it). */
static int nest_change(struct blobs *b, const char *path, size_t len,
		       uint32_t mode, const struct oid *id, int want,
		       struct err *e)
{
	if (len > 15 && !memcmp(path + len - 15, "/.gitattributes", 15))
		name_push(&b->at->nest->changed, path, len - 15);
	if (!b->at->nest->files)
		return 0;
	return nest_path(b, path, len, mode, id, want, e);
}

/*
 * The nested file of directory dir as the commit's tree has it: created,
 * forgotten, or read again when the user's text changed. 1 when the files
 * below dir must be looked at again, 0 not, -1 on error.
 */
static int nest_reload(struct blobs *b, const char *dir, size_t dlen,
		       struct err *e)
{
	struct nest *n = b->at->nest;
	struct nest_file *f;
	struct nest_ours *o;
	struct blob_info *bi;
	struct oid id, base;
	uint32_t mode = 0;
	int found, had;

	buf_set(&n->scratch, dir, dlen);
	buf_adds(&n->scratch, "/.gitattributes");
	found = tree_lookup(b->ts, *b->cur->root, n->scratch.ptr, n->scratch.len,
			    &mode, &id, e);
	if (found < 0)
		return -1;
	HASH_FIND(hh, n->files, dir, dlen, f);
	had = f && (f->nrules || f->lines);
	if (!found || (mode != TREE_MODE_FILE && mode != TREE_MODE_EXEC)) {
		if (f)
			nest_file_free(n, f);
		return had;
	}
	if (!f) {
		f = xcalloc(1, sizeof(*f));
		f->dir = xmemdup(dir, dlen);
		f->dlen = dlen;
		buf_init(&f->text, (size_t)16 << 20);
		HASH_ADD_KEYPTR(hh, n->files, f->dir, dlen, f);
	} else if (oid_eq(&f->in_tree, &id) && f->mode == mode) {
		return 0;
	}
	f->mode = mode;
	f->in_tree = id;
	nest_dirty(n, f);
	HASH_FIND(hh, n->ours, id.hash, OID_RAW, o);
	base = o ? o->base : id;
	if (f->has_text && oid_eq(&base, &f->base))
		return 0;	/* another version of ours of the same text */
	f->base = base;
	if (blob_for_entry(b, &base, &bi, e) < 0)
		return -1;
	if (bi->size >= ((size_t)16 << 20))
		return err_set(e, ERR_USAGE, "%.*s/.gitattributes larger than "
			       "16 MiB", (int)dlen, dir);
	f->has_text = 0;
	if (blob_read_all(b, bi, &f->text, e) < 0)
		return -1;
	f->has_text = 1;
	nest_parse(n, f);
	return had || f->nrules;
}

/* Walks again the directories in n->walk (each once, and none below one
 * walked). */
static int nest_walks(struct blobs *b, struct err *e)
{
	struct nest *n = b->at->nest;
	struct line_ent *seen = NULL;
	const char *p, *end = n->walk.ptr + n->walk.len;
	int r = 0;

	if (b->at->fixup_all) {		/* the whole tree: nothing else */
		buf_reset(&n->walk);
		name_push(&n->walk, "", 0);
		end = n->walk.ptr + n->walk.len;
	}
	for (p = n->walk.ptr; p < end; p += strlen(p) + 1)
		line_set_add(&seen, p, strlen(p));
	for (p = n->walk.ptr; p < end && r == 0; p += strlen(p) + 1) {
		size_t len = strlen(p), i;
		struct line_ent *x = NULL;

		for (i = len; i > 0 && !x; i--)
			if (p[i - 1] == '/')
				HASH_FIND(hh, seen, p, i - 1, x);
		if (x)
			continue;	/* a directory above is walked */
		b->at->walk_err.kind = ERR_NONE;
		r = tree_walk_at(b->ts, *b->cur->root, p, len, nest_walk_one, b, e);
		if (r != 0 && b->at->walk_err.kind)
			*e = b->at->walk_err;
	}
	line_set_clear(&seen);
	buf_reset(&n->walk);
	b->at->fixup_all = 0;
	return r ? -1 : 0;
}

/* Writes f as its lines want it, when the tree has something else. */
static int nest_write(struct blobs *b, struct nest_file *f, struct err *e)
{
	struct nest *n = b->at->nest;
	struct stream_cmd *c = &b->scratch;
	struct line_ent *base_lines = NULL;
	struct path_line **v, *pl, *t;
	struct nest_ours *o;
	struct oid id;
	const char *p, *end;
	size_t k = 0, i, len;

	f->dirty = 0;
	buf_reset(&n->out);
	buf_add(&n->out, f->text.ptr, f->text.len);
	if (f->lines) {
		if (n->out.len && n->out.ptr[n->out.len - 1] != '\n')
			buf_addch(&n->out, '\n');
		for (p = f->text.ptr, end = p + f->text.len; p < end; p += len) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			len = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
			line_set_add(&base_lines, p, len);
		}
		v = xmalloc(HASH_COUNT(f->lines) * sizeof(*v));
		HASH_ITER(hh, f->lines, pl, t)
			v[k++] = pl;
		qsort(v, k, sizeof(*v), pline_cmp);
		for (i = 0; i < k; i++) {
			struct line_ent *x;

			HASH_FIND(hh, base_lines, v[i]->line, v[i]->line_len, x);
			if (!x)
				buf_add(&n->out, v[i]->line, v[i]->line_len);
		}
		free(v);
		line_set_clear(&base_lines);
	}
	if (n->out.len >= ATTR_FILE_MAX)
		return err_set(e, ERR_USAGE, "%.*s/.gitattributes would be %zu "
			       "bytes (%zu lines for single paths): git ignores "
			       "one of 100 MiB or more", (int)f->dlen, f->dir,
			       n->out.len, k);
	obj_hash_buf(b->hash, OBJ_BLOB, n->out.ptr, n->out.len, &id);
	if (oid_eq(&id, &f->in_tree))
		return 0;
	HASH_FIND(hh, n->ours, id.hash, OID_RAW, o);
	if (!o && !oid_eq(&id, &f->base)) {
		o = xcalloc(1, sizeof(*o));
		o->ours = id;
		o->base = f->base;
		HASH_ADD(hh, n->ours, ours.hash, OID_RAW, o);
	}
	f->in_tree = id;
	buf_set(&n->scratch, f->dir, f->dlen);
	buf_adds(&n->scratch, "/.gitattributes");
	if (tree_set(b->ts, b->cur->root, n->scratch.ptr, n->scratch.len,
		     f->mode, &id, e) < 0)
		return -1;
	if (b->report)
		report_output_blob(b->report, &id, n->out.len,
				   report_est_buf(b->report, n->out.ptr, n->out.len));
	c->kind = STREAM_MODIFY;
	c->mode = f->mode;
	buf_set(&c->path, n->scratch.ptr, n->scratch.len);
	return made_write_text(b, c, &id, n->out.ptr, n->out.len, e);
}

/*
 * After the commit's tree diff: the nested files it changed read again
 * (all of them when the root's macros changed) and the directories they
 * concern walked again. Reads only (the tree aside): -1 with e set.
 */
static int nest_follow(struct blobs *b, struct err *e)
{
	struct nest *n = b->at->nest;
	struct nest_file *f, *t;
	const char *p, *end;
	int r;

	if (!n->files && !n->changed.len)
		return 0;
	if (nest_macros(b, e) < 0)
		return -1;
	if (n->reread_all) {
		n->reread_all = 0;
		HASH_ITER(hh, n->files, f, t) {
			int had = f->nrules != 0;

			nest_parse(n, f);
			if (had || f->nrules)
				name_push(&n->walk, f->dir, f->dlen);
		}
	}
	for (p = n->changed.ptr, end = p + n->changed.len; p < end;
	     p += strlen(p) + 1) {
		if ((r = nest_reload(b, p, strlen(p), e)) < 0)
			return -1;
		if (r)
			name_push(&n->walk, p, strlen(p));
	}
	buf_reset(&n->changed);
	return nest_walks(b, e);
}

/* Writes the nested files whose lines (or blob) changed. */
static int nest_write_dirty(struct blobs *b, struct err *e)
{
	struct nest *n = b->at->nest;
	struct nest_file *f;
	const char *p, *end;

	for (p = n->dirty.ptr, end = p + n->dirty.len; p < end;
	     p += strlen(p) + 1) {
		HASH_FIND(hh, n->files, p, strlen(p), f);
		if (f && f->dirty && nest_write(b, f, e) < 0)
			return -1;
	}
	buf_reset(&n->dirty);
	return 0;
}

static int attrs_write(struct blobs *b, struct err *e)
{
	struct stream_cmd *c = &b->scratch;
	struct oid in_tree, base_id = oid_null, want_id;
	struct attr_ent *a;
	uint32_t mode = TREE_MODE_FILE;
	int found, has_base = 0;

	found = tree_lookup(b->ts, *b->cur->root, ".gitattributes", 14, &mode,
			    &in_tree, e);
	if (found < 0)
		return -1;
	if (found && tree_mode_is_dir(mode))
		return 0; /* a directory named .gitattributes: leave it */
	if (found && (has_base = attr_base(b, &in_tree, &base_id, e)) < 0)
		return -1;
	/* the text depends on the lines and the base only: built again
	 * when either changed */
	if (!b->at->text_valid || b->at->text_ver != b->at->plines_ver ||
	    b->at->text_has_base != has_base ||
	    (has_base && !oid_eq(&b->at->text_base, &base_id))) {
		b->at->text_valid = 0;
		if (attr_text(b, has_base, e) < 0)
			return -1;
		obj_hash_buf(b->hash, OBJ_BLOB, b->at->tmp.ptr, b->at->tmp.len,
			     &b->at->text_id);
		b->at->text_valid = 1;
		b->at->text_ver = b->at->plines_ver;
		b->at->text_has_base = has_base;
		b->at->text_base = base_id;
	}
	if (!found && b->at->tmp.len == 0)
		return 0;
	want_id = b->at->text_id;
	if (found && oid_eq(&in_tree, &want_id))
		return 0;
	HASH_FIND(hh, b->at->ents, want_id.hash, OID_RAW, a);
	if (!a && !(has_base && oid_eq(&want_id, &base_id))) {
		a = xcalloc(1, sizeof(*a));
		a->ours = want_id;
		a->base = base_id;
		a->has_base = has_base;
		HASH_ADD(hh, b->at->ents, ours.hash, OID_RAW, a);
	}
	if (tree_set(b->ts, b->cur->root, ".gitattributes", 14, mode, &want_id, e) < 0)
		return -1;
	if (b->report)
		report_output_blob(b->report, &want_id, b->at->tmp.len,
				   report_est_buf(b->report, b->at->tmp.ptr, b->at->tmp.len));
	c->kind = STREAM_MODIFY;
	c->mode = mode;
	buf_set(&c->path, ".gitattributes", 14);
	return made_write_text(b, c, &want_id, b->at->tmp.ptr, b->at->tmp.len, e);
}

/*
 * The root .gitattributes of the commit: the per-path lines follow the
 * difference between the tree they were made for (the last commit's, as
 * written) and this one, so a commit costs what it changes, not the size
 * of its tree.
 */
static int attrs_update(struct blobs *b, struct err *e)
{
	int r;

	b->at->walk_err.kind = ERR_NONE;
	r = tree_diff(b->ts, b->at->root, *b->cur->root, attr_change, b, e);
	if (r != 0 && b->at->walk_err.kind)
		*e = b->at->walk_err;
	if (r != 0 || nest_follow(b, e) < 0) {
		plines_clear(b);	/* half updated: start again next time */
		nest_clear(b->at->nest);
		return e->kind == ERR_IO ? BLOB_IDS_LOST : -1;
	}
	r = nest_write_dirty(b, e);
	if (r == 0)
		r = attrs_write(b, e);
	/* the commit's tree is frozen once written: a safe reference */
	b->at->root = r == 0 ? *b->cur->root : NULL;
	if (r < 0) {
		plines_clear(b);
		nest_clear(b->at->nest);
	}
	return r;
}

/* ---- --fixup (issue 28, its last item) ----
 *
 * git lfs migrate import --fixup: in each commit, a file its own
 * .gitattributes mark filter=lfs (the deepest file first, its last line
 * first, as git reads them: attrread.c) becomes an LFS pointer unless it
 * is one. The result of a commit is a function of its tree alone, as if
 * every commit's whole tree were rewritten: a file the commit did not
 * touch is converted when a .gitattributes it changed marks it now, and a
 * pointer of ours whose mark a commit took away is its content again (the
 * history's own file there). git-lfs 3.3 differs on purpose here: it
 * decides a path and blob once, in the first commit that has them, and
 * keeps that answer (so it leaves a file added before its pattern as it
 * is, and our pointer where the pattern went): tests/integration/fixup.sh.
 *
 * The cost follows the commit's changes, as for the root's lines above:
 * the paths that differ from the last commit's tree (as written), and
 * every file below a directory whose .gitattributes changed (the whole
 * tree when the root's did), are decided again; the rest was decided by
 * the same attributes in the tree before. The paths are gathered first
 * (the tree is not changed while it is walked), then each is placed.
 * A pointer blob the history holds that is byte for byte one this run
 * made is taken for ours (pointers_find): where its mark goes, it becomes
 * that content.
 */

/* tree_diff's callback: a changed .gitattributes has its directory read
 * again (the root's: nest_macros), any other path is decided again. */
static int fixup_change(void *ctx, const char *path, size_t len,
			uint32_t old_mode, const struct oid *old_id,
			uint32_t mode, const struct oid *id)
{
	struct blobs *b = ctx;

	(void)old_mode;
	(void)old_id;
	(void)id;
	if (len > 15 && !memcmp(path + len - 15, "/.gitattributes", 15))
		name_push(&b->at->nest->changed, path, len - 15);
	if (mode)
		name_push(&b->at->todo, path, len);
	return 0;
}

/* 1 when the commit's .gitattributes set filter=lfs on path: the first
 * line to assign filter, from the deepest file up, decides. 0 not, -1
 * when a match fails. */
int attrs_fixup_wants(struct blobs *b, const char *path, size_t len,
		      struct err *e)
{
	size_t i = len;

	for (;;) {
		const struct attr_rule *v = b->at->root_rules;
		size_t nv = b->at->n_root_rules, dlen = 0, k;

		while (i > 0 && path[i - 1] != '/')
			i--;
		if (i >= 2) {
			struct nest_file *f;

			HASH_FIND(hh, b->at->nest->files, path, i - 1, f);
			v = f ? f->rules : NULL;
			nv = f ? f->nrules : 0;
			dlen = i;
		}
		for (k = nv; k-- > 0;) {
			int hit;

			if (!(v[k].says & ATTR_FILTER))
				continue;
			hit = attr_rule_hits(&v[k], path + dlen, len - dlen, e);
			if (hit)
				return hit < 0 ? -1 : (v[k].lfs & ATTR_FILTER) != 0;
		}
		if (i < 2)
			return 0;
		i--;
	}
}

/* The file at path as the commit's attributes want it: its pointer, or
 * (a pointer of ours no longer marked) its content. */
static int fixup_path(struct blobs *b, const char *path, size_t len,
		      struct err *e)
{
	struct stream_cmd *c = &b->scratch;
	const struct rule *rule;
	enum blob_action action;
	struct pointer_ent *p;
	struct blob_info *bi;
	struct oid id;
	uint32_t mode = 0;
	int r, want;

	r = tree_lookup(b->ts, *b->cur->root, path, len, &mode, &id, e);
	if (r <= 0 || !blob_convertible(path, len, mode))
		return r < 0 ? -1 : 0;
	/* a split file's parts are split's alone */
	if ((r = splits_is_part(b, path, len, &id, e)) != 0)
		return r < 0 ? -1 : 0;
	if ((want = attrs_fixup_wants(b, path, len, e)) < 0)
		return -1;
	p = pointers_find(b, &id);
	if (p && p->kind == POINTER_LFS)
		bi = p->bi;
	else if (!want)
		return 0;
	else if (blob_for_entry(b, &id, &bi, e) < 0)
		return -1;
	c->kind = STREAM_MODIFY;
	c->mode = mode;
	buf_set(&c->path, path, len);
	if (!want)
		return place_keep(b, c, mode, NULL, bi, e);
	if (p && p->kind == POINTER_LFS)
		return 0;
	/* an empty file is its own pointer; a pointer stays one */
	if (bi->size == 0 || (r = is_pointer(b, bi, e)) == 1)
		return 0;
	if (r < 0)
		return -1;
	/* a file a rule decides is the rule's (apply.c's place_fixup asks
	 * the same): `* size<N keep` of --above, a keep of the rule file */
	if (blob_decide(b->rules, path, len, mode, bi->size, 0, &rule, &action,
			e) < 0)
		return -1;
	if (rule)
		return 0;
	return place_pointer(b, c, mode, bi, e);
}

/* Decides every path gathered (fixup_change, nest_walk_one). */
static int fixup_todo(struct blobs *b, struct err *e)
{
	const char *p = b->at->todo.ptr, *end = p + b->at->todo.len;
	int r = 0;

	for (; p < end && r == 0; p += strlen(p) + 1)
		r = fixup_path(b, p, strlen(p), e);
	buf_reset(&b->at->todo);
	return r;
}

static int fixup_update(struct blobs *b, struct err *e)
{
	struct nest *n = b->at->nest;
	int r;

	buf_reset(&b->at->todo);
	b->at->walk_err.kind = ERR_NONE;
	r = tree_diff(b->ts, b->at->root, *b->cur->root, fixup_change, b, e);
	if (r != 0 && b->at->walk_err.kind)
		*e = b->at->walk_err;
	if (r == 0 && (nest_macros(b, e) < 0 || nest_follow(b, e) < 0 ||
		       (b->at->fixup_all && nest_walks(b, e) < 0)))
		r = -1;
	/* nothing of the user's files is written: what nest_reload marked
	 * dirty stays so */
	buf_reset(&n->dirty);
	if (r != 0) {
		nest_clear(n);
		buf_reset(&b->at->todo);
		/* start again next time: every file, every file read again */
		b->at->root = NULL;
		n->defs_has_base = 0;
		n->defs_base = oid_null;
		attr_macros_read(n->macros, "", 0);
		return e->kind == ERR_IO ? BLOB_IDS_LOST : -1;
	}
	r = fixup_todo(b, e);
	b->at->root = r == 0 ? *b->cur->root : NULL;
	return r;
}

int blobs_commit_attrs(struct blobs *b, struct err *e)
{
	if (blob_in_notes(b))
		return 0;
	if (b->opt.fixup)
		return fixup_update(b, e);
	if (!b->has_lfs && !b->at->kept)
		return 0;
	return attrs_update(b, e);
}

void attrs_free(struct blobs *b)
{
	struct attr_ent *a, *at;
	struct glob_ent *g, *gt;

	if (!b->at)
		return;
	HASH_ITER(hh, b->at->ents, a, at) {
		HASH_DEL(b->at->ents, a);
		free(a);
	}
	HASH_ITER(hh, b->at->glob_memo, g, gt) {
		HASH_DEL(b->at->glob_memo, g);
		free(g->path);
		free(g);
	}
	rules_free(b->at->globs);
	buf_release(&b->at->base);
	buf_release(&b->at->glob_lines);
	buf_release(&b->at->tmp);
	buf_release(&b->at->line);
	plines_clear(b);
	line_set_clear(&b->at->base_set);
	nest_free(b->at->nest);
	b->at->nest = NULL;
	attr_rules_free(b->at->root_rules, b->at->n_root_rules);
	buf_release(&b->at->todo);
	free(b->at);
	b->at = NULL;
}
