/*
 * splits.c - the split action in commits: a file that matches a split
 * rule is replaced, in every commit, by its parts (split/), and only the
 * parts whose bytes differ from what the commit's tree already holds are
 * written; parts that vanished are deleted.
 *
 * Ownership. Split writes and deletes only its own parts. Every part it
 * writes is remembered as (split file, path, blob id), and every commit
 * records which version of each split file it holds (NULL: none), so a
 * tree entry is a part of f exactly when f is present in the commit and
 * (f, path, id) was written. Parts of commits made by an earlier run (an
 * incremental run: the parent is not a commit of this run) are learnt by
 * splitting the file as the original parent commit holds it. A part and a
 * file never take each other's place: a part onto an existing file or
 * directory, and an M, D, R or C onto a part (or through it, as a
 * directory), are errors naming the commit, the path and the rule.
 *
 * Part ids are reused from the previous version wherever split/ says a
 * part's bytes did not change, so an unchanged part costs nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../rules/rules.h"
#include "../../split/split.h"
#include "way.h"

/* One split path: its spec, its cache of the previous version, and the
 * ids of that version's parts. */
struct split_file {
	char *path;
	struct split_spec *spec;
	struct split_cache *cache;
	struct buf data;		/* the version being split */
	struct part_id *ids;		/* part path -> id, last version */
	struct oid source;		/* the last version's blob */
	struct blob_info *source_blob;
	char *into, *head;
	/*
	 * Where the last version's parts are known to be in the tree: the
	 * branch, and the commit that holds them (updated as that branch
	 * grows without touching the file). When the next version's parent
	 * is that commit, unchanged parts need no look at the tree at all.
	 */
	const void *branch;
	struct oid last_commit;
	int pending;			/* placed in the commit being built */
	uint32_t mode;			/* the parts' mode: the last version's */
	uint32_t no;			/* index, in ownership keys */
	size_t line;			/* the rule's line */
	/* the version in the commit being built (NULL: absent), valid when
	 * cur_seq is the commit's sequence number */
	struct blob_info *cur;
	uint64_t cur_seq;
	struct version *versions;	/* commit (or foreign base) -> version */
	UT_hash_handle hh;
};

/* The version of a split file a commit holds (bi NULL: none). */
struct version {
	struct oid commit;
	struct blob_info *bi;
	UT_hash_handle hh;
};

/* A commit of this run, and the commit of an earlier run its first-parent
 * chain starts from (its original id; has_base 0: none). */
struct ours {
	struct oid commit;
	struct oid base;
	int has_base;
	UT_hash_handle hh;
};

/* A part written: key is (no, blob id, path). */
struct owned {
	char *key;
	size_t klen;
	UT_hash_handle hh;
};

struct part_id {
	char *path;
	struct oid id;
	UT_hash_handle hh;
};

struct splits {
	struct split_file *files;
	uint32_t nfiles;
	struct obj_hash *hash;
	struct buf path;
	struct owned *owned;
	struct ours *ours;
	struct buf key;
	struct buf part;		/* a part's bytes, for the report */
	int off;			/* no split rule: nothing to track */
	FILE *listed;			/* blob.h new_blobs */
	struct stream_cmd cmd;		/* the M and D lines of parts */
	uint64_t failures;		/* --verify-split: versions that fail */
};

static void ids_free(struct part_id **ids)
{
	struct part_id *p, *t;

	HASH_ITER(hh, *ids, p, t) {
		HASH_DEL(*ids, p);
		free(p->path);
		free(p);
	}
}

void splits_free(struct blobs *b)
{
	struct splits *s = b->splits;
	struct split_file *f, *t;
	struct version *v, *vt;
	struct owned *o, *ot;
	struct ours *u, *ut;

	if (!s)
		return;
	HASH_ITER(hh, s->files, f, t) {
		HASH_DEL(s->files, f);
		split_cache_free(f->cache);
		split_spec_free(f->spec);
		ids_free(&f->ids);
		HASH_ITER(hh, f->versions, v, vt) {
			HASH_DEL(f->versions, v);
			free(v);
		}
		buf_release(&f->data);
		free(f->path);
		free(f->into);
		free(f->head);
		free(f);
	}
	HASH_ITER(hh, s->owned, o, ot) {
		HASH_DEL(s->owned, o);
		free(o->key);
		free(o);
	}
	HASH_ITER(hh, s->ours, u, ut) {
		HASH_DEL(s->ours, u);
		free(u);
	}
	obj_hash_free(s->hash);
	buf_release(&s->path);
	buf_release(&s->key);
	buf_release(&s->part);
	if (s->listed)
		fclose(s->listed);
	stream_cmd_release(&s->cmd);
	free(s);
	b->splits = NULL;
}

uint64_t splits_failures(const struct blobs *b)
{
	return b->splits ? b->splits->failures : 0;
}

static struct splits *splits_get(struct blobs *b)
{
	struct splits *s = b->splits;
	const struct rules *rules;
	size_t i;

	if (s)
		return s;
	s = b->splits = xcalloc(1, sizeof(*s));
	s->hash = obj_hash_new();
	stream_cmd_init(&s->cmd);
	buf_init(&s->path, STREAM_MAX_LINE);
	buf_init(&s->key, STREAM_MAX_LINE + OID_RAW + 8);
	buf_init(&s->part, SIZE_MAX / 2);
	s->off = 1;
	rules = b->rules;
	for (i = 0; rules && i < rules_count(rules); i++)
		if (rules_rule_action(rules_get(rules, i)) == RULES_SPLIT)
			s->off = 0;
	return s;
}

static int file_get(struct blobs *b, const char *path, size_t len,
		    const struct rule *rule, struct split_file **out,
		    struct err *e)
{
	struct splits *s = splits_get(b);
	const char *record = rules_rule_option(rule, "record", NULL);
	const char *into = rules_rule_option(rule, "into", NULL);
	const char *head = rules_rule_option(rule, "head", NULL);
	struct split_file *f;

	HASH_FIND(hh, s->files, path, len, f);
	if (f) {
		*out = f;
		return 0;
	}
	f = xcalloc(1, sizeof(*f));
	if (split_spec_new(&f->spec, record, into, head, e) < 0) {
		free(f);
		e->kind = ERR_USAGE;
		return err_prefix(e, "%s:%zu: ", b->opt.rules,
				  rules_rule_line(rule));
	}
	f->cache = split_cache_new(f->spec);
	f->path = xmemdup(path, len);
	f->into = xstrdup(into);
	f->head = head ? xstrdup(head) : NULL;
	f->mode = TREE_MODE_FILE;
	f->no = s->nfiles++;
	f->line = rules_rule_line(rule);
	buf_init(&f->data, SIZE_MAX / 2);
	HASH_ADD_KEYPTR(hh, s->files, f->path, len, f);
	*out = f;
	return 0;
}

/* ---- what is a part: ownership and versions ---- */

static void owned_key(struct splits *s, const struct split_file *f,
		      const char *path, size_t len, const struct oid *id)
{
	buf_reset(&s->key);
	buf_add(&s->key, &f->no, sizeof(f->no));
	buf_add(&s->key, id->hash, OID_RAW);
	buf_add(&s->key, path, len);
}

static void own(struct splits *s, const struct split_file *f, const char *path,
		size_t len, const struct oid *id)
{
	struct owned *o;

	owned_key(s, f, path, len, id);
	HASH_FIND(hh, s->owned, s->key.ptr, s->key.len, o);
	if (o)
		return;
	o = xcalloc(1, sizeof(*o));
	o->key = xmemdup(s->key.ptr, s->key.len);
	o->klen = s->key.len;
	HASH_ADD_KEYPTR(hh, s->owned, o->key, o->klen, o);
}

static int is_owned(struct splits *s, const struct split_file *f,
		    const char *path, size_t len, const struct oid *id)
{
	struct owned *o;

	owned_key(s, f, path, len, id);
	HASH_FIND(hh, s->owned, s->key.ptr, s->key.len, o);
	return o != NULL;
}

static struct version *version_find(struct split_file *f, const struct oid *c)
{
	struct version *v;

	HASH_FIND(hh, f->versions, c->hash, OID_RAW, v);
	return v;
}

static void version_put(struct split_file *f, const struct oid *c,
			struct blob_info *bi)
{
	struct version *v = version_find(f, c);

	if (!v) {
		v = xcalloc(1, sizeof(*v));
		v->commit = *c;
		HASH_ADD(hh, f->versions, commit.hash, OID_RAW, v);
	}
	v->bi = bi;
}

static struct ours *ours_find(struct splits *s, const struct oid *c)
{
	struct ours *u;

	HASH_FIND(hh, s->ours, c->hash, OID_RAW, u);
	return u;
}

/* The commit of an earlier run the commit being built starts from (its
 * original id): the parent's base, or the parent itself when it is not a
 * commit of this run. 0 when there is none or it is not known. */
static int foreign_base(struct blobs *b, struct oid *base)
{
	const struct blob_commit *c = b->cur;
	struct ours *u;

	if (c->nparents == 0)
		return 0;
	u = ours_find(b->splits, &b->cur->parents[0]);
	if (u) {
		*base = u->base;
		return u->has_base;
	}
	if (c->has_tip_orig && oid_eq(&c->tip, &c->parents[0])) {
		*base = c->tip_orig;
		return 1;
	}
	return 0;
}

/* Lists a part written into the stream (blob.h new_blobs); each line
 * out at once, so that a failure to write is this part's. */
static int part_listed(struct blobs *b, const struct oid *id, const char *path,
		       size_t len, struct err *e)
{
	struct splits *s = b->splits;
	char hex[OID_HEX + 1];

	if (!b->opt.new_blobs)
		return 0;
	if (!s->listed && !(s->listed = fopen(b->opt.new_blobs, "we")))
		return err_errno(e, ERR_IO, "cannot create %s", b->opt.new_blobs);
	if (memchr(path, '\n', len))
		len = 0;	/* a hint only: the id alone */
	if (fprintf(s->listed, "%s%s%.*s\n", oid_hex(id, hex), len ? " " : "",
		    (int)len, path) < 0 || fflush(s->listed) != 0)
		return err_errno(e, ERR_IO, "cannot write %s", b->opt.new_blobs);
	return 0;
}

/* The blob id of a part. */
static void part_blob_id(struct splits *s, const struct split_part *p,
			 struct oid *id)
{
	size_t i;

	obj_hash_begin(s->hash, OBJ_BLOB, p->size);
	for (i = 0; i < p->nranges; i++)
		obj_hash_update(s->hash, p->ranges[i].ptr, p->ranges[i].len);
	obj_hash_final(s->hash, id);
}

static void commit_name(struct blobs *b, char *out, size_t n)
{
	if (b->cur->has_orig)
		oid_hex(&b->cur->orig, out);
	else
		snprintf(out, n, "on %s", b->cur->branch_name);
}

/*
 * The version of f a commit of an earlier run holds (base: its original
 * id), learnt once by splitting the file as the original commit holds it:
 * its parts become f's (the next version takes the slow path, which
 * compares every part with the tree).
 */
static int learn_base(struct blobs *b, struct split_file *f,
		      const struct oid *base, struct blob_info **out,
		      struct err *e)
{
	struct splits *s = b->splits;
	struct version *v = version_find(f, base);
	const struct split_result *res;
	struct split_cache *cache;
	struct blob_info *bi;
	char name[OID_HEX + 2 + STREAM_MAX_LINE];
	enum obj_type type;
	struct oid id;
	uint64_t size;
	const char *data;
	size_t i, len;
	int r;

	if (v) {
		*out = v->bi;
		return 0;
	}
	*out = NULL;
	oid_hex(base, name);
	snprintf(name + OID_HEX, sizeof(name) - OID_HEX, ":%s", f->path);
	r = odb_info(b->src, name, &type, &id, &size, e);
	if (r < 0)
		return -1;
	if (r == 0 || type != OBJ_BLOB) {
		version_put(f, base, NULL);
		return 0;
	}
	if (blob_for_entry(b, &id, &bi, e) < 0 ||
	    blob_view(b, bi, &f->data, &data, &len, e) < 0)
		return -1;
	/* a cache of its own: f's cache stays in step with f->ids */
	cache = split_cache_new(f->spec);
	if (split_run(cache, data, len, &res, e) < 0) {
		split_cache_free(cache);
		e->kind = ERR_USAGE;
		return err_prefix(e, "%s in commit %.*s (of an earlier run): ",
				  f->path, OID_HEX, name);
	}
	for (i = 0; i < split_result_count(res); i++) {
		const struct split_part *p = split_result_part(res, i);
		part_blob_id(s, p, &id);
		own(s, f, p->path, p->path_len, &id);
	}
	split_cache_free(cache);
	version_put(f, base, bi);
	*out = bi;
	return 0;
}

/* The version of f the commit being built holds now (NULL: absent). */
static int current(struct blobs *b, struct split_file *f,
		   struct blob_info **out, struct err *e)
{
	struct version *v;
	struct oid base;

	if (f->cur_seq == b->cur->seq) {
		*out = f->cur;
		return 0;
	}
	*out = NULL;
	if (b->cur->nparents) {
		v = version_find(f, &b->cur->parents[0]);
		if (v)
			*out = v->bi;
		else if (foreign_base(b, &base) &&
			 learn_base(b, f, &base, out, e) < 0)
			return -1;
	}
	f->cur = *out;
	f->cur_seq = b->cur->seq;
	return 0;
}

static void set_current(struct blobs *b, struct split_file *f,
			struct blob_info *bi)
{
	f->cur = bi;
	f->cur_seq = b->cur->seq;
}

/* 1 when the entry (path, id) is a part of a split file present in the
 * commit being built (*owner: that file), 0 when not. */
static int part_owner(struct blobs *b, const char *path, size_t len,
		      const struct oid *id, struct split_file **owner,
		      struct err *e)
{
	struct splits *s = b->splits;
	struct split_file *f, *t;
	struct blob_info *bi;

	if (!s || !s->owned)
		return 0;
	HASH_ITER(hh, s->files, f, t) {
		if (!is_owned(s, f, path, len, id))
			continue;
		if (current(b, f, &bi, e) < 0)
			return -1;
		if (bi) {
			*owner = f;
			return 1;
		}
	}
	return 0;
}

/* ---- the parts in the tree ---- */

/* 1 when path could be a part of template (each {..} one or more bytes,
 * no '/'), or is the head. */
static int template_match(const char *t, const char *p, const char *pend)
{
	while (*t) {
		if (*t == '{') {
			const char *close = strchr(t, '}');
			const char *q;
			if (!close)
				return 0;
			for (q = p; q < pend && *q != '/'; q++)
				if (template_match(close + 1, q + 1, pend))
					return 1;
			return 0;
		}
		if (p == pend || *p != *t)
			return 0;
		p++;
		t++;
	}
	return p == pend;
}

struct old_parts {
	struct blobs *b;
	struct split_file *f;
	struct buf list;	/* NUL-separated paths in the tree now */
};

static int collect_part(void *ctx, const char *path, size_t len, uint32_t mode,
			const struct oid *id)
{
	struct old_parts *o = ctx;

	(void)mode;
	if (((o->f->head && strlen(o->f->head) == len && !memcmp(o->f->head, path, len)) ||
	     template_match(o->f->into, path, path + len)) &&
	    is_owned(o->b->splits, o->f, path, len, id)) {
		buf_add(&o->list, path, len);
		buf_addch(&o->list, '\0');
	}
	return 0;
}

/* The parts of f the commit's tree holds now: entries where a part could
 * be that f wrote, when f is present. */
static int parts_in_tree(struct blobs *b, struct split_file *f,
			 struct old_parts *o, struct err *e)
{
	const char *brace = strchr(f->into, '{');
	const char *slash = brace ? memrchr(f->into, '/', (size_t)(brace - f->into)) : NULL;
	size_t dlen = slash ? (size_t)(slash - f->into) : 0;
	struct blob_info *bi;

	o->b = b;
	o->f = f;
	buf_init(&o->list, SIZE_MAX / 2);
	if (current(b, f, &bi, e) < 0)
		return -1;
	if (!bi)
		return 0;
	if (tree_walk_at(b->ts, *b->cur->root, f->into, dlen, collect_part, o, e) < 0)
		return -1;
	if (f->head && dlen && (strncmp(f->head, f->into, dlen) || f->head[dlen] != '/')) {
		uint32_t mode;
		struct oid id;
		int r = tree_lookup(b->ts, *b->cur->root, f->head, strlen(f->head),
				    &mode, &id, e);
		if (r < 0)
			return -1;
		if (r)
			collect_part(o, f->head, strlen(f->head), mode, &id);
	}
	return 0;
}

/* Removes path when it holds id (a part of ours), else leaves it. */
static int write_delete(struct blobs *b, const char *path, size_t len,
			const struct oid *id, struct err *e)
{
	struct stream_cmd *c = &b->splits->cmd;
	struct oid have;
	uint32_t mode;
	int r;

	if (id) {
		r = tree_lookup(b->ts, *b->cur->root, path, len, &mode, &have, e);
		if (r <= 0 || tree_mode_is_dir(mode) || !oid_eq(&have, id))
			return r < 0 ? -1 : 0;
	}
	r = tree_remove(b->ts, b->cur->root, path, len, e);
	if (r <= 0)
		return r;
	c->kind = STREAM_DELETE;
	buf_set(&c->path, path, len);
	return stream_write_cmd(b->cbuf, c, e);
}

static int collision(struct blobs *b, const struct split_file *f,
		     const char *path, size_t len, const char *what,
		     struct err *e)
{
	char where[OID_HEX + 256];

	commit_name(b, where, sizeof(where));
	err_set(e, ERR_STREAM, "commit %s: part '%.*s' of %s (split by %s:%zu) "
		"%s; a part and a file cannot share a name", where, (int)len, path,
		f->path, b->opt.rules, f->line, what);
	return err_at_input(e);
}

/*
 * Where a part of f goes (present: f was in the commit before this
 * version): the path must be free, or hold a part of f; no file on the
 * way may be turned into a directory.
 */
static int part_place_ok(struct blobs *b, struct split_file *f, int present,
			 const char *path, size_t len, int r, uint32_t mode,
			 const struct oid *have, struct err *e)
{
	const char *slash;
	uint32_t m;

	if (r == 1 && tree_mode_is_dir(mode))
		return collision(b, f, path, len, "is a directory in the tree", e);
	if (r == 1)
		return present && is_owned(b->splits, f, path, len, have) ? 0 :
		       collision(b, f, path, len, "would overwrite a file", e);
	for (slash = memchr(path, '/', len); slash;
	     slash = memchr(slash + 1, '/', len - (size_t)(slash + 1 - path))) {
		size_t n = (size_t)(slash - path);
		int q = tree_lookup(b->ts, *b->cur->root, path, n, &m, NULL, e);

		if (q < 0)
			return -1;
		if (q == 0)
			return 0;
		if (!tree_mode_is_dir(m)) {
			char what[STREAM_MAX_LINE + 64];
			snprintf(what, sizeof(what), "would turn the file '%.*s' "
				 "into a directory", (int)n, path);
			return collision(b, f, path, len, what, e);
		}
	}
	return 0;
}

static int write_part(struct blobs *b, struct split_file *f, int present,
		      const struct split_part *p, struct part_id **ids,
		      struct err *e)
{
	struct splits *s = b->splits;
	struct stream_cmd *c = &b->splits->cmd;
	struct part_id *old, *nw;
	struct oid id, have;
	uint32_t mode;
	size_t i;
	int r;

	HASH_FIND(hh, f->ids, p->path, p->path_len, old);
	if (p->unchanged && old)
		id = old->id;
	else
		part_blob_id(s, p, &id);
	HASH_FIND(hh, *ids, p->path, p->path_len, nw);
	if (!nw) {
		nw = xcalloc(1, sizeof(*nw));
		nw->path = xmemdup(p->path, p->path_len);
		HASH_ADD_KEYPTR(hh, *ids, nw->path, p->path_len, nw);
	}
	nw->id = id;

	r = tree_lookup(b->ts, *b->cur->root, p->path, p->path_len, &mode, &have, e);
	if (r < 0 || part_place_ok(b, f, present, p->path, p->path_len, r, mode,
				   &have, e) < 0)
		return -1;
	own(s, f, p->path, p->path_len, &id);
	if (r && mode == f->mode && oid_eq(&have, &id))
		return 0;
	if (tree_set(b->ts, b->cur->root, p->path, p->path_len, f->mode,
		     &id, e) < 0)
		return -1;
	if (b->report) {
		uint64_t est = 0;

		/* made.c's packs count as written (blobs_sync); else a delta
		 * against the part's last version, as the writer stores it
		 * (the run packs parts again, with a delta search) */
		if (!made_wants(b, p->size)) {
			s->part.len = 0;
			for (i = 0; i < p->nranges; i++)
				buf_add(&s->part, p->ranges[i].ptr, p->ranges[i].len);
			est = est_made(b, p->path, p->path_len, s->part.ptr,
				       s->part.len);
		}
		report_output_blob(b->report, &id, p->size, est);
		report_split(b->report, f->path, strlen(f->path), 0, p->path, p->path_len,
			     p->size);
	}
	c->kind = STREAM_MODIFY;
	c->mode = f->mode;
	buf_set(&c->path, p->path, p->path_len);
	if (made_wants(b, p->size)) {
		/* stored by made.c's writer, against the part's last version */
		struct buf data = BUF_INIT(SIZE_MAX / 2);
		char hex[OID_HEX + 1];

		for (i = 0; i < p->nranges; i++)
			buf_add(&data, p->ranges[i].ptr, p->ranges[i].len);
		r = made_put(b, &id, p->path, p->path_len, &data, e);
		buf_release(&data);
		if (r < 0 || part_listed(b, &id, p->path, p->path_len, e) < 0)
			return -1;
		c->dataref.kind = STREAM_REF_OID;
		buf_set(&c->dataref.name, oid_hex(&id, hex), OID_HEX);
		return stream_write_cmd(b->cbuf, c, e);
	}
	if (part_listed(b, &id, p->path, p->path_len, e) < 0)
		return -1;
	c->dataref.kind = STREAM_REF_INLINE;
	if (stream_write_data_begin(b->cbuf, c, p->size, e) < 0)
		return -1;
	for (i = 0; i < p->nranges; i++)
		if (stream_write_bytes(b->cbuf, p->ranges[i].ptr, p->ranges[i].len, e) < 0)
			return -1;
	return stream_write_data_end(b->cbuf, e);
}

/* The paths of a result, as a set (uthash, keys borrowed from res). */
struct path_ent {
	UT_hash_handle hh;
};

struct path_set {
	struct path_ent *set;
	struct path_ent *mem;
};

static void path_set_build(struct path_set *ps, const struct split_result *res)
{
	size_t i, n = split_result_count(res);

	ps->set = NULL;
	ps->mem = xcalloc(n ? n : 1, sizeof(*ps->mem));
	for (i = 0; i < n; i++) {
		const struct split_part *p = split_result_part(res, i);
		HASH_ADD_KEYPTR(hh, ps->set, p->path, p->path_len, &ps->mem[i]);
	}
}

static int path_set_has(const struct path_set *ps, const char *path, size_t len)
{
	struct path_ent *pe;

	HASH_FIND(hh, ps->set, path, len, pe);
	return pe != NULL;
}

static void path_set_free(struct path_set *ps)
{
	HASH_CLEAR(hh, ps->set);
	free(ps->mem);
}

/* Deletes the parts in the tree that res does not have (all, for NULL). */
static int delete_vanished(struct blobs *b, struct split_file *f,
			   const struct split_result *res, struct err *e)
{
	struct path_set ps = { NULL, NULL };
	struct old_parts o;
	const char *p;
	int r = parts_in_tree(b, f, &o, e);

	if (res)
		path_set_build(&ps, res);
	for (p = o.list.ptr; r == 0 && p < o.list.ptr + o.list.len; p += strlen(p) + 1)
		if (!res || !path_set_has(&ps, p, strlen(p)))
			r = write_delete(b, p, strlen(p), NULL, e) < 0 ? -1 : 0;
	path_set_free(&ps);
	buf_release(&o.list);
	return r;
}

/* The previous version's parts are what the parent's tree holds. */
static int cache_valid(const struct blobs *b, const struct split_file *f)
{
	return f->ids && f->branch == b->cur->branch && b->cur->nparents > 0 &&
	       oid_eq(&f->last_commit, &b->cur->parents[0]);
}

/*
 * Fast path: the tree holds the previous version's parts, so only what
 * split/ lists as changed is looked at: the new or changed parts are
 * written, the vanished ones deleted; ids are updated in place. Costs the
 * change, not the number of parts.
 */
static int place_known(struct blobs *b, struct split_file *f,
		       const struct split_result *res, struct err *e)
{
	size_t i, len;
	struct part_id *p;
	int r = 0;

	for (i = 0; i < split_result_nchanged(res) && r == 0; i++)
		r = write_part(b, f, 1, split_result_changed(res, i), &f->ids, e);
	for (i = 0; i < split_result_nvanished(res) && r == 0; i++) {
		const char *path = split_result_vanished(res, i, &len);

		HASH_FIND(hh, f->ids, path, len, p);
		if (p && write_delete(b, path, len, &p->id, e) < 0)
			r = -1;
		if (p) {
			HASH_DEL(f->ids, p);
			free(p->path);
			free(p);
		}
	}
	return r;
}

/* Slow path: every part compared with the tree, the template's directory
 * walked for parts of f that vanished. */
static int place_unknown(struct blobs *b, struct split_file *f, int present,
			 const struct split_result *res, struct err *e)
{
	struct part_id *ids = NULL;
	size_t i;
	int r = 0;

	for (i = 0; i < split_result_count(res) && r == 0; i++)
		r = write_part(b, f, present, split_result_part(res, i), &ids, e);
	if (r == 0 && present)
		r = delete_vanished(b, f, res, e);
	ids_free(&f->ids);
	f->ids = ids;
	return r;
}

int splits_place(struct blobs *b, struct stream_cmd *c, struct blob_info *bi,
		 const struct rule *rule, struct err *e)
{
	const struct split_result *res;
	struct split_file *f;
	struct blob_info *before;
	char where[OID_HEX + 256];
	uint32_t mode = tree_mode_normalize(c->mode);
	struct buf *mem;
	const char *data;
	size_t len;
	int r;

	if (file_get(b, c->path.ptr, c->path.len, rule, &f, e) < 0 ||
	    current(b, f, &before, e) < 0)
		return -1;
	/* split/ keeps the held copy itself when the blob can be read again
	 * from the repository (no copy of the version), else its own copy of
	 * data, which need not outlive the call */
	mem = blob_memory(b, bi);
	if (!mem && blob_view(b, bi, &f->data, &data, &len, e) < 0)
		return -1;
	if (mem)
		len = mem->len;
	report_split(b->report, f->path, strlen(f->path), len, NULL, 0, 0);
	r = mem ? split_run_take(f->cache, mem, &res, e)
		: split_run(f->cache, data, len, &res, e);
	if (r == 0 && mem)
		blob_forget_copy(b, bi);
	if (r < 0) {
		commit_name(b, where, sizeof(where));
		/* the rule does not fit the data: a rule error (exit 1) */
		e->kind = ERR_USAGE;
		return err_prefix(e, "%.*s in commit %s: ", (int)c->path.len,
				  c->path.ptr, where);
	}
	if (b->opt.verify_split && !split_result_reassembles(res)) {
		commit_name(b, where, sizeof(where));
		warning("migrate: verify-split: %.*s in commit %s does not "
			"reassemble from its parts (records of one key are not "
			"contiguous)", (int)c->path.len, c->path.ptr, where);
		b->splits->failures++;
	}
	/* parts keep the file's mode (the exec bit); a new mode rewrites all */
	if (mode != f->mode) {
		f->mode = mode;
		ids_free(&f->ids);
	}
	r = before && cache_valid(b, f) ? place_known(b, f, res, e)
					 : place_unknown(b, f, before != NULL, res, e);
	f->source = *blob_id(bi);
	f->source_blob = bi;
	f->branch = b->cur->branch;
	f->pending = 1;
	set_current(b, f, bi);
	return r;
}

/*
 * At the end of every commit: the commit is remembered as one of this
 * run's, with the version of every split file it holds. A split file
 * placed in it is known to be in this commit; one whose last commit is
 * this commit's parent on the same branch stays known (the commit did not
 * touch it). Anything else may have changed the parts behind our back:
 * forget, and look next time.
 */
void blobs_commit_written(struct blobs *b, const struct oid *id)
{
	struct splits *s = splits_get(b);
	struct split_file *f, *t;
	struct version *v;
	struct ours *u;
	struct oid base;

	if (!s || s->off)
		return;
	u = ours_find(s, id);
	if (!u) {
		u = xcalloc(1, sizeof(*u));
		u->commit = *id;
		HASH_ADD(hh, s->ours, commit.hash, OID_RAW, u);
	}
	u->has_base = foreign_base(b, &base);
	if (u->has_base)
		u->base = base;
	HASH_ITER(hh, s->files, f, t) {
		if (f->cur_seq == b->cur->seq)
			version_put(f, id, f->cur);
		else if (b->cur->nparents &&
			 (v = version_find(f, &b->cur->parents[0])))
			version_put(f, id, v->bi);
		/* else: as the base, learnt when asked */
		if (f->pending || (f->branch == b->cur->branch && b->cur->nparents > 0 &&
				   oid_eq(&f->last_commit, &b->cur->parents[0])))
			f->last_commit = *id;
		f->pending = 0;
	}
}

int splits_delete(struct blobs *b, const char *path, size_t len,
		  const struct rule *rule, struct err *e)
{
	struct split_file *f;
	int r;

	if (file_get(b, path, len, rule, &f, e) < 0)
		return -1;
	r = delete_vanished(b, f, NULL, e);
	ids_free(&f->ids); /* the tree no longer holds the parts */
	set_current(b, f, NULL);
	return r;
}

void blobs_forget_splits(struct blobs *b)
{
	struct split_file *f, *t;

	if (!b->splits)
		return;
	HASH_ITER(hh, b->splits->files, f, t) {
		ids_free(&f->ids);
		set_current(b, f, NULL);
	}
}

int splits_source(struct blobs *b, const char *path, size_t len,
		  struct blob_info **out, struct err *e)
{
	struct split_file *f = NULL;

	*out = NULL;
	if (b->splits)
		HASH_FIND(hh, b->splits->files, path, len, f);
	return f ? current(b, f, out, e) : 0;
}

/* ---- files and parts must not take each other's place ---- */

static int part_error(struct blobs *b, const char *what, const char *path,
		      size_t len, const char *part, size_t plen,
		      const struct split_file *f, struct err *e)
{
	char where[OID_HEX + 256];

	commit_name(b, where, sizeof(where));
	err_set(e, ERR_STREAM, "commit %s: %s '%.*s': '%.*s' is a part of %s "
		"(split by %s:%zu), not a file of the stream; a part and a file "
		"cannot share a name", where, what, (int)len, path, (int)plen,
		part, f->path, b->opt.rules, f->line);
	return err_at_input(e);
}

int splits_check_path(struct blobs *b, const char *what, const char *path,
		      size_t len, struct err *e)
{
	struct splits *s = b->splits;
	struct split_file *f;
	size_t n = 0;

	if (!s || !s->owned)
		return 0;
	for (;;) {
		const char *slash = memchr(path + n, '/', len - n);
		struct oid id;
		uint32_t mode;
		int r;

		n = slash ? (size_t)(slash - path) : len;
		r = tree_lookup(b->ts, *b->cur->root, path, n, &mode, NULL, e);
		if (r <= 0)
			return r;
		if (tree_mode_is_dir(mode)) {
			if (!slash)
				return 0;
			n++;
			continue;
		}
		if (tree_lookup(b->ts, *b->cur->root, path, n, &mode, &id, e) < 0)
			return -1;
		r = part_owner(b, path, n, &id, &f, e);
		if (r < 0)
			return -1;
		if (r)
			return part_error(b, what, path, len, path, n, f, e);
		return 0;
	}
}

static int under(const char *dir, size_t dlen, const char *path)
{
	return dlen == 0 || (!strncmp(path, dir, dlen) && path[dlen] == '/');
}

struct dir_check {
	struct blobs *b;
	const char *what, *dir;
	size_t dlen;
	struct err *e;
	int failed;
};

static int dir_visit(void *ctx, const char *path, size_t len, uint32_t mode,
		     const struct oid *id)
{
	struct dir_check *d = ctx;
	struct split_file *f;
	int r = part_owner(d->b, path, len, id, &f, d->e);

	(void)mode;
	if (r == 0 || (r > 0 && under(d->dir, d->dlen, f->path)))
		return 0;	/* a file, or a part of a file in the directory */
	if (r > 0)
		part_error(d->b, d->what, d->dir, d->dlen, path, len, f, d->e);
	d->failed = 1;
	return -1;
}

/* The version of f this commit holds when f is under dir, else NULL. */
static int held_under(struct blobs *b, struct split_file *f, const char *dir,
		      size_t dlen, struct blob_info **bi, struct err *e)
{
	*bi = NULL;
	return under(dir, dlen, f->path) ? current(b, f, bi, e) : 0;
}

int splits_take_dir(struct blobs *b, const char *what, const char *dir,
		    size_t dlen, int remove, splits_found_fn fn, void *ctx,
		    struct err *e)
{
	struct splits *s = b->splits;
	struct split_file *f, *t;
	struct blob_info *bi;
	struct dir_check d = { b, what, dir, dlen, e, 0 };
	int r;

	if (!s || !s->owned)
		return 0;
	HASH_ITER(hh, s->files, f, t) {
		if (held_under(b, f, dir, dlen, &bi, e) < 0)
			return -1;
		if (!bi)
			continue;
		if (fn && fn(ctx, f->path, strlen(f->path), bi) < 0)
			return -1;
		if (remove) {
			if (delete_vanished(b, f, NULL, e) < 0)
				return -1;
			ids_free(&f->ids);
			set_current(b, f, NULL);
		}
	}
	r = tree_walk_at(b->ts, *b->cur->root, dir, dlen, dir_visit, &d, e);
	if (r != 0 && !d.failed)
		return -1;
	return d.failed ? -1 : 0;
}

int splits_under(struct blobs *b, const char *dir, size_t dlen, struct err *e)
{
	struct splits *s = b->splits;
	struct split_file *f, *t;
	struct blob_info *bi;

	if (!s)
		return 0;
	HASH_ITER(hh, s->files, f, t) {
		if (held_under(b, f, dir, dlen, &bi, e) < 0)
			return -1;
		if (bi)
			return 1;
	}
	return 0;
}

int splits_is_part(struct blobs *b, const char *path, size_t len,
		   const struct oid *id, struct err *e)
{
	struct split_file *f;

	return part_owner(b, path, len, id, &f, e);
}
