/*
 * attrs.c - the root .gitattributes that makes git-lfs treat exactly the
 * converted files as LFS files (docs/FORMATS.md 7): the lines of the
 * plain glob rules, plus one line per path where the truth differs from
 * what the globs say, kept up to date by a tree diff per commit, and the
 * user's own .gitattributes (the "base") kept as it is, ahead of ours.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "way.h"

static const char lfs_attrs[] = "filter=lfs diff=lfs merge=lfs -text";
static const char lfs_unset[] = "!filter !diff !merge !text";

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

	HASH_ITER(hh, b->plines, pl, t) {
		HASH_DEL(b->plines, pl);
		free(pl->path);
		free(pl->line);
		free(pl);
	}
	b->attr_root = NULL;
	b->plines_ver++;
}

/* Quotes a pattern for a synthesized rule line (rules.h lexical rules). */
static void quote_pattern(struct buf *out, const char *p, size_t len)
{
	size_t i;

	if (!memchr(p, '\'', len)) {
		buf_addch(out, '\'');
		buf_add(out, p, len);
		buf_addch(out, '\'');
		return;
	}
	buf_addch(out, '"');
	for (i = 0; i < len; i++) {
		if (p[i] == '"' || p[i] == '\\')
			buf_addch(out, '\\');
		buf_addch(out, p[i]);
	}
	buf_addch(out, '"');
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

	buf_init(&b->glob_lines, BUF_MAX_DEFAULT);
	buf_init(&b->tmp, BUF_MAX_DEFAULT);
	buf_init(&b->line, SIZE_MAX / 2);
	buf_init(&b->base, (size_t)16 << 20);
	for (i = 0; i < rules_count(b->rules) && r == 0; i++) {
		const struct rule *rule = rules_get(b->rules, i);
		enum rules_action a = rules_rule_action(rule);
		const char *pat;
		size_t len;

		if (a == RULES_UNLFS && b->opt.missing_keep)
			b->attrs_kept = 1;
		if (a != RULES_LFS)
			continue;
		b->has_lfs = 1;
		if (rules_rule_is_regex(rule) || rules_rule_size(rule, NULL, NULL))
			continue;
		if (rules_rule_attr_line(&b->glob_lines, rule, lfs_attrs, e) < 0) {
			e->kind = ERR_USAGE;
			r = err_prefix(e, "%s: ", b->opt.rules);
			break;
		}
		pat = rules_rule_pattern(rule, &len);
		quote_pattern(&text, pat, len);
		buf_adds(&text, " lfs\n");
	}
	if (r == 0)
		r = rules_parse(&b->globs, text.ptr, text.len, "(lfs globs)", e);
	buf_release(&text);
	if (r == 0)
		dedup_lines(&b->glob_lines);
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
	/* a part of a split file: text this run wrote (inline, so in no
	 * repository), never LFS */
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

	HASH_FIND(hh, b->glob_memo, path, len, g);
	if (g)
		return g->covered;
	if (rules_match(&rule, b->globs, path, len, 0, e) < 0)
		return -1;
	g = xcalloc(1, sizeof(*g));
	g->path = xmemdup(path, len);
	g->covered = rule != NULL;
	HASH_ADD_KEYPTR(hh, b->glob_memo, g->path, len, g);
	return g->covered;
}

/* tree_diff's callback: path changed; its line (if any) follows. */
static int attr_change(void *ctx, const char *path, size_t len,
		       uint32_t old_mode, const struct oid *old_id,
		       uint32_t mode, const struct oid *id)
{
	struct blobs *b = ctx;
	struct err *e = &b->walk_err;
	struct path_line *pl;
	int want, glob;

	(void)old_mode;
	(void)old_id;
	HASH_FIND(hh, b->plines, path, len, pl);
	if (pl) {
		HASH_DEL(b->plines, pl);
		free(pl->path);
		free(pl->line);
		free(pl);
		b->plines_ver++;
	}
	if (!mode)
		return 0;
	want = wants_lfs(b, path, len, mode, id, e);
	glob = want < 0 ? -1 : glob_covers(b, path, len, e);
	if (want < 0 || glob < 0)
		return -1;
	if (!want == !glob)
		return 0;
	buf_reset(&b->line);
	if (rules_attr_path_line(&b->line, path, len, want ? lfs_attrs : lfs_unset,
				 e) < 0)
		return -1;
	pl = xcalloc(1, sizeof(*pl));
	pl->path = xmemdup(path, len);
	pl->len = len;
	pl->line_len = b->line.len;
	pl->line = buf_detach(&b->line, NULL);
	pl->unset = !want;
	HASH_ADD_KEYPTR(hh, b->plines, pl->path, len, pl);
	b->plines_ver++;
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
		HASH_FIND(hh, b->base_set, p, n, x);
	if (!x)
		buf_add(&b->tmp, p, n);
}

/*
 * git ignores a .gitattributes of this size or more (attr.c
 * ATTR_MAX_FILE_SIZE, git 2.39.1 and later).
 */
#define ATTR_FILE_MAX ((size_t)100 << 20)

/* Builds b->tmp: the base (if any), then every line of ours it lacks. */
static int attr_text(struct blobs *b, int has_base, struct err *e)
{
	struct path_line **v, *pl, *t;
	const char *p, *end;
	size_t n = 0, i;

	buf_reset(&b->tmp);
	if (has_base) {
		buf_add(&b->tmp, b->base.ptr, b->base.len);
		if (b->tmp.len && b->tmp.ptr[b->tmp.len - 1] != '\n')
			buf_addch(&b->tmp, '\n');
	}
	for (p = b->glob_lines.ptr, end = p + b->glob_lines.len; p < end; p += n) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		n = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
		add_unless_in_base(b, has_base, p, n);
	}
	v = xmalloc((HASH_COUNT(b->plines) + 1) * sizeof(*v));
	n = 0;
	HASH_ITER(hh, b->plines, pl, t)
		v[n++] = pl;
	qsort(v, n, sizeof(*v), pline_cmp);
	for (i = 0; i < n; i++)
		add_unless_in_base(b, has_base, v[i]->line, v[i]->line_len);
	free(v);
	if (b->tmp.len >= ATTR_FILE_MAX)
		return err_set(e, ERR_USAGE, "the root .gitattributes would be "
			       "%zu bytes (%zu lines for single paths): git "
			       "ignores one of 100 MiB or more; convert these "
			       "files by glob rules", b->tmp.len, n);
	return 0;
}

/* The user's own .gitattributes under the one in the tree (ours or
 * theirs), read into b->base. 0 none, 1 found, -1 error. */
static int attr_base(struct blobs *b, const struct oid *in_tree, struct oid *base,
		     struct err *e)
{
	struct attr_ent *a;
	struct blob_info *bi;
	struct content c;
	ssize_t n;

	HASH_FIND(hh, b->attrs, in_tree->hash, OID_RAW, a);
	if (a && !a->has_base)
		return 0;
	*base = a ? a->base : *in_tree;
	if (b->has_base_cache && oid_eq(&b->base_id, base))
		return 1;
	if (blob_for_entry(b, base, &bi, e) < 0 || content_open(b, bi, &c, e) < 0)
		return -1;
	line_set_clear(&b->base_set);
	b->has_base_cache = 0;
	buf_reset(&b->base);
	while ((n = content_read(&c, b->chunk, CHUNK, e)) > 0)
		if (buf_add(&b->base, b->chunk, (size_t)n) < 0) {
			n = err_set(e, ERR_IO, ".gitattributes larger than 16 MiB");
			break;
		}
	content_close(&c);
	if (n < 0)
		return -1;
	b->base_id = *base;
	b->has_base_cache = 1;
	{
		const char *p = b->base.ptr, *end = p + b->base.len;
		size_t len;

		for (; p < end; p += len) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			len = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
			line_set_add(&b->base_set, p, len);
		}
	}
	return 1;
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
	if (!b->text_valid || b->text_ver != b->plines_ver ||
	    b->text_has_base != has_base ||
	    (has_base && !oid_eq(&b->text_base, &base_id))) {
		b->text_valid = 0;
		if (attr_text(b, has_base, e) < 0)
			return -1;
		obj_hash_buf(b->hash, OBJ_BLOB, b->tmp.ptr, b->tmp.len,
			     &b->text_id);
		b->text_valid = 1;
		b->text_ver = b->plines_ver;
		b->text_has_base = has_base;
		b->text_base = base_id;
	}
	if (!found && b->tmp.len == 0)
		return 0;
	want_id = b->text_id;
	if (found && oid_eq(&in_tree, &want_id))
		return 0;
	HASH_FIND(hh, b->attrs, want_id.hash, OID_RAW, a);
	if (!a && !(has_base && oid_eq(&want_id, &base_id))) {
		a = xcalloc(1, sizeof(*a));
		a->ours = want_id;
		a->base = base_id;
		a->has_base = has_base;
		HASH_ADD(hh, b->attrs, ours.hash, OID_RAW, a);
	}
	if (tree_set(b->ts, b->cur->root, ".gitattributes", 14, mode, &want_id, e) < 0)
		return -1;
	if (b->report)
		report_output_blob(b->report, &want_id, b->tmp.len,
				   report_est_buf(b->report, b->tmp.ptr, b->tmp.len));
	c->kind = STREAM_MODIFY;
	c->mode = mode;
	c->dataref.kind = STREAM_REF_INLINE;
	buf_set(&c->path, ".gitattributes", 14);
	if (stream_write_data_begin(b->cbuf, c, b->tmp.len, e) < 0 ||
	    stream_write_bytes(b->cbuf, b->tmp.ptr, b->tmp.len, e) < 0)
		return -1;
	return stream_write_data_end(b->cbuf, e);
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

	b->walk_err.kind = ERR_NONE;
	if (tree_diff(b->ts, b->attr_root, *b->cur->root, attr_change, b, e) != 0) {
		if (b->walk_err.kind)
			*e = b->walk_err;
		plines_clear(b);	/* half updated: start again next time */
		return e->kind == ERR_IO ? BLOB_IDS_LOST : -1;
	}
	r = attrs_write(b, e);
	/* the commit's tree is frozen once written: a safe reference */
	b->attr_root = r == 0 ? *b->cur->root : NULL;
	if (r < 0)
		plines_clear(b);
	return r;
}

int blobs_commit_attrs(struct blobs *b, struct err *e)
{
	if ((!b->has_lfs && !b->attrs_kept) || blob_in_notes(b))
		return 0;
	return attrs_update(b, e);
}

void attrs_free(struct blobs *b)
{
	struct attr_ent *a, *at;
	struct glob_ent *g, *gt;

	HASH_ITER(hh, b->attrs, a, at) {
		HASH_DEL(b->attrs, a);
		free(a);
	}
	HASH_ITER(hh, b->glob_memo, g, gt) {
		HASH_DEL(b->glob_memo, g);
		free(g->path);
		free(g);
	}
	rules_free(b->globs);
	buf_release(&b->base);
	buf_release(&b->glob_lines);
	buf_release(&b->tmp);
	buf_release(&b->line);
	plines_clear(b);
	line_set_clear(&b->base_set);
}
