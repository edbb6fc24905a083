/*
 * apply.c - the decisions applied to the commit being built. Blobs come
 * before the commit that names their path, so each M line is decided
 * when it is read (policy.c), and the commit's text is buffered so that
 * the blobs it keeps can be written before it (blobs_commit_end). C and R
 * are re-decided file by file at their destination, D takes split files'
 * parts along (splits.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "way.h"

/* The store: --store, else <git-common-dir>/lfs/objects of the current
 * directory's repository (git lfs's own place). */
static int open_store(struct blobs *b, struct err *e)
{
	struct err ignored = ERR_INIT;
	struct buf dir = BUF_INIT(BUF_MAX_DEFAULT);
	char *common = NULL;
	int r;

	if (b->opt.store)
		return ptr_store_open(&b->store, b->opt.store, e);
	if (gitcmd_common_dir(NULL, &common, &ignored) < 0)
		return err_set(e, ERR_USAGE,
			       "the rules convert files to LFS, but there is no "
			       "store: pass --store DIR or run inside the "
			       "repository whose .git/lfs/objects should hold them");
	buf_printf(&dir, "%s/lfs/objects", common);
	r = ptr_store_open(&b->store, dir.ptr, e);
	free(common);
	buf_release(&dir);
	return r;
}

int blobs_new(struct blobs **out, const struct blob_options *opt,
	      const struct blob_env *env, struct err *e)
{
	struct blobs *b = xcalloc(1, sizeof(*b));
	size_t i;

	*out = b;
	b->opt = *opt;
	b->in = env->in;
	b->out = env->out;
	b->cmd = env->cmd;
	b->ts = env->ts;
	b->src = env->src;
	b->dst = env->dst;
	b->hash = env->hash;
	b->report = env->report;
	buf_init(&b->spare, SIZE_MAX);
	stream_cmd_init(&b->blobcmd);
	stream_cmd_init(&b->scratch);
	b->blobcmd.kind = STREAM_BLOB;
	b->chunk = xmalloc(CHUNK);
	b->held_max = HELD_IN_MEMORY;
	if (b->opt.rules_set)
		b->rules = b->opt.rules_set;	/* borrowed */
	else if (b->opt.rules ? rules_load(&b->rules, b->opt.rules, e) < 0 :
		 rules_parse(&b->rules, "", 0, "(no rule file)", e) < 0)
		return -1;
	if (!b->opt.rules_set && b->opt.strip_ids &&
	    rules_load_blob_ids(b->rules, b->opt.strip_ids, e) < 0)
		return -1;
	if (rules_blob_count(b->rules))
		b->id_hits = xcalloc(rules_count(b->rules), 1);
	if (!b->opt.quiet)
		rules_warn_shadowed(b->rules);
	for (i = 0; i < rules_count(b->rules); i++) {
		const struct rule *rule = rules_get(b->rules, i);
		enum rules_action a = rules_rule_action(rule);

		if (a == RULES_SPLIT)
			b->held_max = HELD_SPLIT_IN_MEMORY;
		/* two deciders of which file is an LFS file would fight
		 * over the same paths, commit after commit */
		if (b->opt.fixup && (a == RULES_LFS || a == RULES_UNLFS ||
				     a == RULES_ANNEX))
			return err_set(e, ERR_USAGE, "--fixup: the rule at "
				       "line %zu of %s converts files (%s); "
				       "--fixup converts what each commit's "
				       ".gitattributes say, and takes only "
				       "rules that drop, keep, split or "
				       "replace text", rules_rule_line(rule),
				       rules_rule_file(rule),
				       rules_action_name(a));
	}
	if (attrs_init(b, e) < 0 || annex_init(b, e) < 0 ||
	    unlfs_init(b, e) < 0 || scrub_init(b, e) < 0 || made_init(b, e) < 0)
		return -1;
	/* a dry run hashes what it would store, and stores nothing */
	if ((b->has_lfs || b->opt.fixup) && !b->opt.dry_run &&
	    open_store(b, e) < 0)
		return -1;
	if (b->store)
		ptr_store_set_batch(b->store, 1);
	return 0;
}

void blobs_free(struct blobs *b)
{
	struct blob_info *bi, *tmp;

	if (!b)
		return;
	pool_free(b);
	made_free(b);
	free(b->id_hits);
	splits_free(b);
	attrs_free(b);
	annex_free(b);
	unlfs_free(b);
	scrub_free(b);
	est_free(b);
	pointers_free(b);
	HASH_ITER(hh, b->byid, bi, tmp) {
		HASH_DELETE(hh, b->byid, bi);
		if (bi->lazy)
			continue; /* owned by the lazy list */
		held_free(bi->held);
		buf_release(&bi->ptr_text);
		free(bi->annex_key);
		free(bi->lfs_path);
		free(bi);
	}
	while ((bi = b->lazy)) {
		b->lazy = bi->lazy_next;
		held_free(bi->held);
		buf_release(&bi->ptr_text);
		free(bi->annex_key);
		free(bi->lfs_path);
		free(bi);
	}
	buf_release(&b->spare);
	if (!b->opt.rules_set)
		rules_free(b->rules);
	ptr_store_free(b->store);
	stream_writer_free(b->cbuf);
	stream_cmd_release(&b->blobcmd);
	free(b->pending.v);
	free(b->emit.v);
	stream_cmd_release(&b->scratch);
	aside_free(b);
	free(b->chunk);
	free(b);
}

/* The blob an M line names, with its size; NULL for a gitlink or when
 * the size cannot be learnt (then the line passes as it is). */
static int modify_blob(struct blobs *b, const struct oid *named,
		       struct blob_mark *m, struct blob_info **out,
		       struct err *e)
{
	struct stream_ref *d = &b->cmd->dataref;
	char hex[OID_HEX + 1];
	enum obj_type type;
	struct oid id, got;
	uint64_t size;
	struct held *h;
	int r;

	*out = NULL;
	if (d->kind == STREAM_REF_INLINE) {
		if (hold_data(b, &h, &id, 1, NULL, &size, e) < 0)
			return -1;
		*out = blob_get(b, &id, size);
		(*out)->est = b->data_est;
		if (!(*out)->held && !(*out)->emitted)
			(*out)->held = h;
		else
			held_free(h);
		return 0;
	}
	if (m) {
		*out = m->blob;
		return 0;
	}
	id = *named;
	HASH_FIND(hh, b->byid, id.hash, OID_RAW, *out);
	if (*out)
		return 0;
	/* a blob named by id (--no-data export): it is in the target */
	r = odb_info(b->src, oid_hex(&id, hex), &type, &got, &size, e);
	if (r < 0)
		return -1;
	if (r == 0 || type != OBJ_BLOB)
		return err_set(e, ERR_IO, "blob %s is not in repository %s "
			       "(see --source-repo)", hex, odb_name(b->src));
	*out = blob_get(b, &id, size);
	(*out)->emitted = 1;
	report_input_blob(b->report, &id, size, 0); /* not read: no estimate */
	return 0;
}

/* Writes the blob of m (or bi alone) now, unless it is out already. */
static int declare(struct blobs *b, struct blob_mark *m, struct blob_info *bi,
		   struct err *e)
{
	if (m && m->declared)
		return 0;
	if (!m && bi->emitted)
		return 0;
	if (emit_blob(b, bi, m ? m->num : 0, e) < 0)
		return -1;
	if (m)
		m->declared = 1;
	return 0;
}

int blobs_declare(struct blobs *b, struct blob_mark *m, struct err *e)
{
	if (!m->blob)
		return 0;
	return declare(b, m, m->blob, e);
}

static size_t rule_index(const struct rules *rules, const struct rule *rule)
{
	size_t i;

	for (i = 0; i < rules_count(rules) && rules_get(rules, i) != rule; i++)
		;
	return i;
}

const struct rules *blobs_rules(const struct blobs *b)
{
	return b->rules;
}

uint64_t blobs_converted(const struct blobs *b)
{
	return b->converted;
}

uint64_t blobs_conversions(const struct blobs *b)
{
	return b->converted + annex_count(b) + unlfs_count(b);
}

void blobs_acted(const struct blobs *b, uint64_t *replaced, uint64_t *split,
		 uint64_t *dropped)
{
	*replaced = b->replaced;
	*split = b->split;
	*dropped = b->dropped;
}

uint64_t blobs_bytes_read(const struct blobs *b)
{
	uint64_t n = odb_bytes_read(b->src) + pool_bytes_read(b);

	return b->dst != b->src ? n + odb_bytes_read(b->dst) : n;
}

uint64_t blobs_bytes_read_ahead(const struct blobs *b)
{
	return pool_bytes_read(b);
}

const char *blobs_store(const struct blobs *b)
{
	return b->store ? ptr_store_dir(b->store) : NULL;
}

uint64_t blobs_split_failures(const struct blobs *b)
{
	return splits_failures(b);
}

/* A blob the rules leave as it is: the report's largest blobs are those
 * that remain in the history. */
static int place_as_is(struct blobs *b, struct stream_cmd *c, uint32_t mode,
		       struct blob_mark *m, struct blob_info *bi, struct err *e)
{
	if (bi)
		report_path(b->report, c->path.ptr, c->path.len, &bi->id, bi->size);
	return place_keep(b, c, mode, m, bi, e);
}

static int place_drop(struct blobs *b, struct stream_cmd *c, struct err *e)
{
	int r = tree_remove(b->ts, b->cur->root, c->path.ptr, c->path.len, e);

	if (r <= 0)
		return r < 0 ? err_at_input(e) : 0;
	c->kind = STREAM_DELETE;
	return stream_write_cmd(b->cbuf, c, e);
}

static const char *cmd_name(const struct blobs *b)
{
	switch (b->cmd->kind) {
	case STREAM_DELETE: return "D";
	case STREAM_RENAME: return "R";
	case STREAM_COPY: return "C";
	default: return "M";
	}
}

/* A .gitattributes (the root's or a nested one) with unlfs rules: their
 * LFS lines go, and the file with them when nothing is left. */
static int place_attrs(struct blobs *b, struct stream_cmd *c, uint32_t mode,
		       struct blob_mark *m, struct blob_info *bi, struct err *e)
{
	enum blob_action action;
	const struct rule *rule;
	struct blob_info *out;

	if (ensure_id(b, bi, e) < 0)
		return -1;
	report_path(b->report, c->path.ptr, c->path.len, &bi->id, bi->size);
	if (unlfs_attrs(b, c->path.ptr, c->path.len - 14 - (c->path.len > 14),
			bi, &out, e) < 0)
		return -1;
	if (!out)
		return place_drop(b, c, e);
	/* a replace-text rule replaces in the lines that stay */
	if (blob_decide(b->rules, c->path.ptr, c->path.len, mode, out->size, 0,
			&rule, &action, e) < 0)
		return -1;
	if (action == BLOB_REPLACE_TEXT) {
		report_rule(b->report, rule_index(b->rules, rule), c->path.ptr,
			    c->path.len, &bi->id, bi->size, bi->est);
		if (scrub_content(b, rule, c->path.ptr, c->path.len, out,
				  &out, e) < 0)
			return -1;
	}
	return place_keep(b, c, mode, out == bi ? m : NULL, out, e);
}

/*
 * A blob:<id> rule (or --strip-blobs-with-ids) drops its blob at every
 * path, whatever the mode or path rules say, as git filter-repo
 * --strip-blobs-with-ids does (place() then leaves the change out). The
 * id is the original one (the stream's original-oid, else the content's).
 */
static int by_id(struct blobs *b, struct blob_info *bi,
		 const struct rule **rule, enum blob_action *action,
		 struct err *e)
{
	const struct rule *r;

	if (!bi->has_orig && ensure_id(b, bi, e) < 0)
		return -1;
	r = rules_match_blob(b->rules, (bi->has_orig ? &bi->orig : &bi->id)->hash);
	if (!r)
		return 0;
	b->id_hits[rule_index(b->rules, r)] = 1;
	*rule = r;
	*action = BLOB_DROP;
	return 0;
}

/*
 * --fixup: a file no rule decides is placed as the attributes of the
 * last commit's tree say, which are this commit's unless it changes
 * them (or the commit before it in the stream is of another branch with
 * other attributes); where they differ, blobs_commit_attrs places the
 * file again. So the content of a file the attributes mark is not
 * written in the common case.
 */
static int place_fixup(struct blobs *b, struct stream_cmd *c, uint32_t mode,
		       struct blob_mark *m, struct blob_info *bi,
		       struct err *e)
{
	int want = attrs_fixup_wants(b, c->path.ptr, c->path.len, e), p = 0;

	if (want < 0)
		return -1;
	/* an empty file is its own pointer; a pointer stays one */
	if (!want || bi->size == 0 || (p = is_pointer(b, bi, e)) == 1)
		return place_as_is(b, c, mode, m, bi, e);
	return p < 0 ? -1 : place_pointer(b, c, mode, bi, e);
}

/* Places one file (c is an M line) by the rules. */
static int place(struct blobs *b, struct stream_cmd *c, struct blob_mark *m,
		 struct blob_info *bi, struct err *e)
{
	uint32_t mode = tree_mode_normalize(c->mode);
	const struct rule *rule = NULL;
	enum blob_action action = BLOB_KEEP;
	struct blob_info *content;
	int p = 0;

	if (m)
		m->consumed = 1;
	if (splits_check_path(b, cmd_name(b), c->path.ptr, c->path.len, e) < 0)
		return -1;
	if (b->unlfs && bi && (c->path.len == 14 || (c->path.len > 15 &&
	    c->path.ptr[c->path.len - 15] == '/')) &&
	    !memcmp(c->path.ptr + c->path.len - 14, ".gitattributes", 14) &&
	    (mode == TREE_MODE_FILE || mode == TREE_MODE_EXEC) &&
	    !blob_in_notes(b))
		return place_attrs(b, c, mode, m, bi, e);
	if (bi && blob_decide(b->rules, c->path.ptr, c->path.len, mode, bi->size,
			      blob_in_notes(b), &rule, &action, e) < 0)
		return -1;
	if (bi && rules_blob_count(b->rules) && by_id(b, bi, &rule, &action, e) < 0)
		return -1;
	if (b->report && bi && rule)
		report_rule(b->report, rule_index(b->rules, rule), c->path.ptr,
			    c->path.len, &bi->id, bi->size, bi->est);
	/* an id drop leaves the change out, as git filter-repo
	 * --strip-blobs-with-ids does: the path keeps what it had before */
	if (rule && rules_rule_is_blob(rule))
		return 0;
	switch (action) {
	case BLOB_DROP:
		b->dropped++;
		return place_drop(b, c, e);
	case BLOB_SPLIT:
		b->split++;
		return splits_place(b, c, bi, rule, e);
	case BLOB_UNLFS:
		if (unlfs_content(b, c->path.ptr, c->path.len, bi, &content, e) < 0)
			return -1;
		return place_keep(b, c, mode, content == bi ? m : NULL, content, e);
	case BLOB_REPLACE_TEXT:
		if (scrub_content(b, rule, c->path.ptr, c->path.len, bi,
				  &content, e) < 0)
			return -1;
		b->replaced += content != bi;
		return place_keep(b, c, mode, content == bi ? m : NULL, content, e);
	case BLOB_LFS:
		/* an empty file is its own pointer; a pointer stays one */
		if (bi->size == 0 || (p = is_pointer(b, bi, e)) > 0)
			return place_as_is(b, c, mode, m, bi, e);
		return p < 0 ? -1 : place_pointer(b, c, mode, bi, e);
	case BLOB_ANNEX:
		/* an empty file is annexed too (git annex add does it) */
		if ((p = is_pointer(b, bi, e)) > 0)
			return place_as_is(b, c, mode, m, bi, e);
		return p < 0 ? -1 : annex_place(b, c, mode, bi, rule, e);
	default:
		if (bi && !rule && b->opt.fixup && !blob_in_notes(b) &&
		    blob_convertible(c->path.ptr, c->path.len, mode))
			return place_fixup(b, c, mode, m, bi, e);
		return place_as_is(b, c, mode, m, bi, e);
	}
}

int blobs_modify(struct blobs *b, const struct oid *id, struct blob_mark *m,
		 struct err *e)
{
	struct stream_cmd *c = b->cmd;
	uint32_t mode = tree_mode_normalize(c->mode);
	struct blob_info *bi = NULL;

	if (mode == TREE_MODE_GITLINK || tree_mode_is_dir(mode)) {
		if (splits_check_path(b, "M", c->path.ptr, c->path.len, e) < 0)
			return -1;
		if (tree_set(b->ts, b->cur->root, c->path.ptr, c->path.len,
			     mode, id, e) < 0)
			return e->kind == ERR_IO ? BLOB_IDS_LOST : err_at_input(e);
		return stream_write_cmd(b->cbuf, c, e);
	}
	if (modify_blob(b, id, m, &bi, e) < 0)
		return -1;
	return place(b, c, m, bi, e);
}

/* D: a split file's path is not in the tree, its parts are. */
int blobs_delete(struct blobs *b, struct err *e)
{
	struct stream_cmd *c = b->cmd;
	const struct rule *rule = NULL;
	struct blob_info *src = NULL;
	uint32_t mode;
	int r;

	if (!blob_in_notes(b) && rules_match_unsized(&rule, b->rules, c->path.ptr,
						 c->path.len, e) < 0)
		return -1;
	if (rule && rules_rule_action(rule) == RULES_SPLIT &&
	    splits_source(b, c->path.ptr, c->path.len, &src, e) < 0)
		return -1;
	if (src)
		return splits_delete(b, c->path.ptr, c->path.len, rule, e);
	/* a part is not a file of the stream; a directory takes its split
	 * files along */
	r = tree_lookup(b->ts, *b->cur->root, c->path.ptr, c->path.len, &mode, NULL, e);
	if (r == 0 && (r = splits_under(b, c->path.ptr, c->path.len, e)) > 0)
		mode = TREE_MODE_DIR;
	if (r > 0 && tree_mode_is_dir(mode))
		r = splits_take_dir(b, "D", c->path.ptr, c->path.len, 1, NULL, NULL, e);
	else if (r >= 0)
		r = splits_check_path(b, "D", c->path.ptr, c->path.len, e);
	if (r < 0)
		return e->kind == ERR_IO ? BLOB_IDS_LOST : -1;
	r = tree_remove(b->ts, b->cur->root, c->path.ptr, c->path.len, e);
	if (r < 0)
		return e->kind == ERR_IO ? BLOB_IDS_LOST : err_at_input(e);
	return stream_write_cmd(b->cbuf, c, e);
}

struct copy_item {
	struct buf rel;
	uint32_t mode;
	struct oid id;
	int part;		/* a part of a split file */
	struct blob_info *bi;	/* a split file (rel is its path) */
};

struct copy_list {
	struct copy_item *v;
	size_t n, alloc;
	size_t prefix;		/* bytes of the source path to drop */
};

static int collect_copy(void *ctx, const char *path, size_t len,
			uint32_t mode, const struct oid *id)
{
	struct copy_list *l = ctx;
	struct copy_item *it;

	if (l->n == l->alloc) {
		l->alloc = l->alloc ? 2 * l->alloc : 16;
		l->v = xrealloc(l->v, l->alloc * sizeof(*l->v));
	}
	it = &l->v[l->n++];
	buf_init(&it->rel, STREAM_MAX_LINE);
	buf_add(&it->rel, path + l->prefix, len - l->prefix);
	it->mode = mode;
	it->id = *id;
	it->part = 0;
	it->bi = NULL;
	return 0;
}

/* A split file inside the directory copied: copied as the file it is,
 * placed by the rules at the destination. */
static int collect_split(void *ctx, const char *path, size_t len,
			 struct blob_info *bi)
{
	struct copy_list *l = ctx;
	struct oid none = { { 0 } };

	collect_copy(l, path, len, TREE_MODE_FILE, &none);
	l->v[l->n - 1].bi = bi;
	return 0;
}

static int copy_items(struct blobs *b, struct copy_list *list,
		      const struct buf *dst, struct err *e)
{
	struct stream_cmd *c = &b->scratch;
	struct pointer_ent *p;
	struct blob_info *bi;
	size_t i;

	for (i = 0; i < list->n; i++) {
		struct copy_item *it = &list->v[i];
		if (it->part)
			continue; /* its split file is copied instead */
		c->kind = STREAM_MODIFY;
		c->mode = it->mode;
		buf_set(&c->path, dst->ptr, dst->len);
		if (it->rel.len && dst->len)
			buf_addch(&c->path, '/');
		buf_add(&c->path, it->rel.ptr, it->rel.len);
		if (it->mode == TREE_MODE_GITLINK) {
			char hex[OID_HEX + 1];
			c->dataref.kind = STREAM_REF_OID;
			buf_set(&c->dataref.name, oid_hex(&it->id, hex), OID_HEX);
			if (tree_set(b->ts, b->cur->root, c->path.ptr, c->path.len,
				     it->mode, &it->id, e) < 0 ||
			    stream_write_cmd(b->cbuf, c, e) < 0)
				return -1;
			continue;
		}
		if (it->bi)
			bi = it->bi;
		else if (it->mode == TREE_MODE_LINK &&
			 (p = pointers_find(b, &it->id)) &&
			 p->kind == POINTER_ANNEX) {
			/* a locked file: a file again, placed by the rules */
			bi = p->bi;
			c->mode = p->mode;
		} else if (blob_for_entry(b, &it->id, &bi, e) < 0)
			return err_at_input(e);
		if (place(b, c, NULL, bi, e) < 0)
			return -1;
	}
	return 0;
}

static int delete_path(struct blobs *b, const struct buf *path, struct err *e)
{
	struct stream_cmd *c = &b->scratch;
	int r = tree_remove(b->ts, b->cur->root, path->ptr, path->len, e);

	if (r <= 0)
		return r < 0 ? err_at_input(e) : 0;
	c->kind = STREAM_DELETE;
	buf_set(&c->path, path->ptr, path->len);
	return stream_write_cmd(b->cbuf, c, e);
}

/* C/R from a split file: its parts go (for R) and the whole file is
 * placed at the destination by the rules. */
static int copy_split_source(struct blobs *b, const struct buf *src,
			     const struct buf *dst, struct err *e)
{
	struct stream_cmd *c = b->cmd;
	struct blob_info *bi;
	const struct rule *rule;
	struct stream_cmd *m = &b->scratch;

	if (splits_source(b, src->ptr, src->len, &bi, e) < 0 ||
	    splits_check_path(b, cmd_name(b), dst->ptr, dst->len, e) < 0)
		return -1;
	if (c->kind == STREAM_RENAME) {
		if (rules_match_unsized(&rule, b->rules, src->ptr, src->len, e) < 0 ||
		    splits_delete(b, src->ptr, src->len, rule, e) < 0)
			return -1;
	}
	if (delete_path(b, dst, e) < 0)
		return -1;
	m->kind = STREAM_MODIFY;
	m->mode = TREE_MODE_FILE;
	buf_set(&m->path, dst->ptr, dst->len);
	return place(b, m, NULL, bi, e);
}

/*
 * C/R copy what the source holds, but the rules may decide otherwise at
 * the destination (a *.bin renamed to *.txt stops being LFS), so the
 * change is written as D and M lines, each file placed by the rules.
 */
int blobs_copy(struct blobs *b, struct err *e)
{
	struct stream_cmd *c = b->cmd;
	struct copy_list list = { NULL, 0, 0, 0 };
	struct buf src = BUF_INIT(STREAM_MAX_LINE), dst = BUF_INIT(STREAM_MAX_LINE);
	uint32_t mode;
	struct blob_info *split_src = NULL;
	struct oid id;
	size_t i, nwalked;
	int r;

	buf_set(&src, c->path.ptr, c->path.len);
	buf_set(&dst, c->path2.ptr, c->path2.len);
	r = src.len ? tree_lookup(b->ts, *b->cur->root, src.ptr, src.len, &mode,
				  &id, e) : 1;
	if (r == 0 && splits_source(b, src.ptr, src.len, &split_src, e) < 0)
		r = -1;
	if (r == 0 && split_src) {
		r = copy_split_source(b, &src, &dst, e);
		goto out;
	}
	if (r == 0 && src.len && (r = splits_under(b, src.ptr, src.len, e)) > 0)
		mode = TREE_MODE_DIR;	/* holds only split files */
	if (r == 0)
		r = err_set(e, ERR_STREAM, "path '%s' not in branch", src.ptr);
	if (r < 0) {
		r = err_at_input(e);
		goto out;
	}
	list.prefix = src.len ? src.len + 1 : 0;
	if (src.len && !tree_mode_is_dir(mode)) {
		list.prefix = src.len;
		r = splits_check_path(b, cmd_name(b), src.ptr, src.len, e);
		if (r == 0)
			r = collect_copy(&list, src.ptr, src.len, mode, &id);
	} else {
		r = tree_walk_at(b->ts, *b->cur->root, src.ptr, src.len,
				 collect_copy, &list, e);
		/* parts are not copied: the split files they come from are */
		nwalked = list.n;
		for (i = 0; r == 0 && i < nwalked; i++) {
			struct copy_item *it = &list.v[i];
			buf_set(&dst, src.ptr, src.len);
			if (src.len)
				buf_addch(&dst, '/');
			buf_add(&dst, it->rel.ptr, it->rel.len);
			r = splits_is_part(b, dst.ptr, dst.len, &it->id, e);
			it->part = r > 0;
			r = r < 0 ? -1 : 0;
		}
		buf_set(&dst, c->path2.ptr, c->path2.len);
		if (r == 0)
			r = splits_take_dir(b, cmd_name(b), src.ptr, src.len,
					    c->kind == STREAM_RENAME, collect_split,
					    &list, e);
	}
	if (r == 0) {
		r = tree_lookup(b->ts, *b->cur->root, dst.ptr, dst.len, &mode, NULL, e);
		if (r > 0 && tree_mode_is_dir(mode))
			r = splits_take_dir(b, cmd_name(b), dst.ptr, dst.len, 1,
					    NULL, NULL, e);
		else if (r >= 0)
			r = splits_check_path(b, cmd_name(b), dst.ptr, dst.len, e);
	}
	if (r == 0 && c->kind == STREAM_RENAME)
		r = delete_path(b, &src, e);
	if (r == 0)
		r = delete_path(b, &dst, e);
	if (r == 0)
		r = copy_items(b, &list, &dst, e);
out:
	for (i = 0; i < list.n; i++)
		buf_release(&list.v[i].rel);
	free(list.v);
	buf_release(&src);
	buf_release(&dst);
	return r;
}

struct stream_writer *blobs_commit_begin(struct blobs *b,
					 const struct blob_commit *c)
{
	b->cur = c;
	b->cbuf = stream_writer_new_mem();
	return b->cbuf;
}

/* Writes the blobs read since the last commit that no commit decided
 * on (a tag or a later commit may name them), and lets go of the rest. */
int blobs_flush(struct blobs *b, struct err *e)
{
	size_t i;
	int r = 0;

	for (i = 0; i < b->pending.n && r == 0; i++) {
		struct emit_ent *p = &b->pending.v[i];
		/* a mark defined again names its last blob only */
		if (!p->m->consumed && p->m->blob == p->bi)
			r = declare(b, p->m, p->bi, e);
	}
	for (i = 0; i < b->pending.n; i++)
		if (held_let_go(b, b->pending.v[i].bi, e) < 0 && r == 0)
			r = -1;
	b->pending.n = 0;
	return r;
}

int blobs_finish(struct blobs *b, struct err *e)
{
	size_t i;

	/* ids given that the history never had: said (and in the reports'
	 * rules that matched nothing) */
	for (i = 0; b->id_hits && !b->opt.quiet && i < rules_count(b->rules); i++) {
		const struct rule *r = rules_get(b->rules, i);

		if (rules_rule_is_blob(r) && !b->id_hits[i])
			warning("migrate: warning: %s (line %zu of %s): the history "
				"has no such blob; nothing dropped",
				rules_rule_pattern(r, NULL), rules_rule_line(r),
				rules_rule_file(r));
	}
	if (made_settle(b, e) < 0 || unlfs_finish(b, e) < 0)
		return -1;
	if (b->annex_store && ptr_store_sync(b->annex_store, e) < 0)
		return -1;
	if (b->store && ptr_store_sync(b->store, e) < 0)
		return -1;
	/* the stream held back goes to fast-import only now: a run that
	 * failed above left it nothing to keep */
	return made_drain(b, e);
}

int blobs_commit_end(struct blobs *b, int keep_text, struct err *e)
{
	const struct buf *text;
	size_t i;
	int r = 0;

	for (i = 0; i < b->emit.n && r == 0; i++)
		r = declare(b, b->emit.v[i].m, b->emit.v[i].bi, e);
	b->emit.n = 0;
	if (r == 0)
		r = blobs_flush(b, e);
	if (r == 0 && keep_text && (r = stream_writer_flush(b->cbuf, e)) == 0) {
		text = stream_writer_mem(b->cbuf);
		r = stream_write_raw(b->out, text->ptr, text->len, e);
	}
	stream_writer_free(b->cbuf);
	b->cbuf = NULL;
	return r == 0 ? made_tick(b, e) : r;
}

int blobs_stores_trees(const struct blobs *b)
{
	return b->made != NULL;
}

int blobs_store_tree(struct blobs *b, const struct oid *id,
		     const struct oid *from, const char *path, size_t len,
		     const struct buf *body, struct err *e)
{
	return made_put_tree(b, id, from, path, len, body, e);
}

int blobs_store_commit(struct blobs *b, const struct oid *id,
		       const struct buf *body, struct err *e)
{
	return made_put_commit(b, id, body, e);
}

int blobs_sync(struct blobs *b, struct err *e)
{
	return made_drain(b, e);
}

int blobs_settle(struct blobs *b, struct err *e)
{
	return made_settle(b, e);
}
