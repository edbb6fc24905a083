/*
 * splits.c - the split action in commits: a file that matches a split
 * rule is replaced, in every commit, by its parts (split/), and only the
 * parts whose bytes differ from what the commit's tree already holds are
 * written; parts that vanished are deleted.
 *
 * The parts already in the tree are found by walking the template's
 * directory and matching paths against the template, so the result is
 * right whatever branch, merge or earlier run the parent came from. Part
 * ids are reused from the previous version wherever split/ says a part's
 * bytes did not change, so an unchanged part costs nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../rules/rules.h"
#include "../split/split.h"
#include "engine.h"

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
	struct branch *branch;
	struct oid last_commit;
	int pending;			/* placed in the commit being built */
	UT_hash_handle hh;
};

struct part_id {
	char *path;
	struct oid id;
	UT_hash_handle hh;
};

struct splits {
	struct split_file *files;
	struct obj_hash *hash;
	struct buf path;
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

void splits_free(struct rw *rw)
{
	struct splits *s = rw->splits;
	struct split_file *f, *t;

	if (!s)
		return;
	HASH_ITER(hh, s->files, f, t) {
		HASH_DEL(s->files, f);
		split_cache_free(f->cache);
		split_spec_free(f->spec);
		ids_free(&f->ids);
		buf_release(&f->data);
		free(f->path);
		free(f->into);
		free(f->head);
		free(f);
	}
	obj_hash_free(s->hash);
	buf_release(&s->path);
	free(s);
	rw->splits = NULL;
}

static int file_get(struct rw *rw, const char *path, size_t len,
		    const struct rule *rule, struct split_file **out,
		    struct err *e)
{
	struct splits *s = rw->splits;
	const char *record = rules_rule_option(rule, "record", NULL);
	const char *into = rules_rule_option(rule, "into", NULL);
	const char *head = rules_rule_option(rule, "head", NULL);
	struct split_file *f;

	if (!s) {
		s = rw->splits = xcalloc(1, sizeof(*s));
		s->hash = obj_hash_new();
		buf_init(&s->path, STREAM_MAX_LINE);
	}
	HASH_FIND(hh, s->files, path, len, f);
	if (f) {
		*out = f;
		return 0;
	}
	f = xcalloc(1, sizeof(*f));
	if (split_spec_new(&f->spec, record, into, head, e) < 0) {
		char msg[sizeof(e->msg)];
		memcpy(msg, e->msg, sizeof(msg));
		free(f);
		return err_set(e, ERR_USAGE, "%s:%zu: %s", rw->opt->rules,
			       rules_rule_line(rule), msg);
	}
	f->cache = split_cache_new(f->spec);
	f->path = xmemdup(path, len);
	f->into = xstrdup(into);
	f->head = head ? xstrdup(head) : NULL;
	buf_init(&f->data, SIZE_MAX / 2);
	HASH_ADD_KEYPTR(hh, s->files, f->path, len, f);
	*out = f;
	return 0;
}

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
	struct split_file *f;
	struct buf list;	/* NUL-separated paths in the tree now */
};

static int collect_part(void *ctx, const char *path, size_t len, uint32_t mode,
			const struct oid *id)
{
	struct old_parts *o = ctx;

	(void)mode;
	(void)id;
	if ((o->f->head && strlen(o->f->head) == len && !memcmp(o->f->head, path, len)) ||
	    template_match(o->f->into, path, path + len)) {
		buf_add(&o->list, path, len);
		buf_addch(&o->list, '\0');
	}
	return 0;
}

/* The parts of f the commit's tree holds now. */
static int parts_in_tree(struct rw *rw, struct split_file *f,
			 struct old_parts *o, struct err *e)
{
	const char *brace = strchr(f->into, '{');
	const char *slash = brace ? memrchr(f->into, '/', (size_t)(brace - f->into)) : NULL;
	size_t dlen = slash ? (size_t)(slash - f->into) : 0;

	o->f = f;
	buf_init(&o->list, SIZE_MAX / 2);
	if (tree_walk_at(rw->ts, rw->cur.root, f->into, dlen, collect_part, o, e) < 0)
		return -1;
	if (f->head && dlen && (strncmp(f->head, f->into, dlen) || f->head[dlen] != '/')) {
		uint32_t mode;
		struct oid id;
		int r = tree_lookup(rw->ts, rw->cur.root, f->head, strlen(f->head),
				    &mode, &id, e);
		if (r < 0)
			return -1;
		if (r)
			collect_part(o, f->head, strlen(f->head), mode, &id);
	}
	return 0;
}

static int write_delete(struct rw *rw, const char *path, size_t len,
			struct err *e)
{
	struct stream_cmd *c = &rw->splits_cmd;
	int r = tree_remove(rw->ts, &rw->cur.root, path, len, e);

	if (r <= 0)
		return r;
	c->kind = STREAM_DELETE;
	buf_set(&c->path, path, len);
	return stream_write_cmd(rw->cout, c, e);
}

static int write_part(struct rw *rw, struct split_file *f,
		      const struct split_part *p, struct part_id **ids,
		      struct err *e)
{
	struct splits *s = rw->splits;
	struct stream_cmd *c = &rw->splits_cmd;
	struct part_id *old, *nw;
	struct oid id, have;
	uint32_t mode;
	size_t i;
	int r;

	HASH_FIND(hh, f->ids, p->path, p->path_len, old);
	if (p->unchanged && old) {
		id = old->id;
	} else {
		obj_hash_begin(s->hash, OBJ_BLOB, p->size);
		for (i = 0; i < p->nranges; i++)
			obj_hash_update(s->hash, p->ranges[i].ptr, p->ranges[i].len);
		obj_hash_final(s->hash, &id);
	}
	HASH_FIND(hh, *ids, p->path, p->path_len, nw);
	if (!nw) {
		nw = xcalloc(1, sizeof(*nw));
		nw->path = xmemdup(p->path, p->path_len);
		HASH_ADD_KEYPTR(hh, *ids, nw->path, p->path_len, nw);
	}
	nw->id = id;

	r = tree_lookup(rw->ts, rw->cur.root, p->path, p->path_len, &mode, &have, e);
	if (r < 0)
		return -1;
	if (r && mode == TREE_MODE_FILE && oid_eq(&have, &id))
		return 0;
	if (tree_set(rw->ts, &rw->cur.root, p->path, p->path_len, TREE_MODE_FILE,
		     &id, e) < 0)
		return -1;
	if (rw->report) {
		report_est_begin(rw);
		for (i = 0; i < p->nranges; i++)
			report_est_feed(rw, p->ranges[i].ptr, p->ranges[i].len);
		report_output_blob(rw, &id, p->size, report_est_end(rw, p->size));
		report_split(rw, f->path, strlen(f->path), 0, p->path, p->path_len,
			     p->size);
	}
	c->kind = STREAM_MODIFY;
	c->mode = TREE_MODE_FILE;
	c->dataref.kind = STREAM_REF_INLINE;
	buf_set(&c->path, p->path, p->path_len);
	if (stream_write_data_begin(rw->cout, c, p->size, e) < 0)
		return -1;
	for (i = 0; i < p->nranges; i++)
		if (stream_write_bytes(rw->cout, p->ranges[i].ptr, p->ranges[i].len, e) < 0)
			return -1;
	return stream_write_data_end(rw->cout, e);
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
static int delete_vanished(struct rw *rw, struct split_file *f,
			   const struct split_result *res, struct err *e)
{
	struct path_set ps = { NULL, NULL };
	struct old_parts o;
	const char *p;
	int r = parts_in_tree(rw, f, &o, e);

	if (res)
		path_set_build(&ps, res);
	for (p = o.list.ptr; r == 0 && p < o.list.ptr + o.list.len; p += strlen(p) + 1)
		if (!res || !path_set_has(&ps, p, strlen(p)))
			r = write_delete(rw, p, strlen(p), e) < 0 ? -1 : 0;
	path_set_free(&ps);
	buf_release(&o.list);
	return r;
}

static void commit_name(struct rw *rw, char *out, size_t n)
{
	if (rw->cur.has_orig)
		oid_hex(&rw->cur.orig, out);
	else
		snprintf(out, n, "on %s", rw->cur.branch->name);
}

/* The previous version's parts are what the parent's tree holds. */
static int cache_valid(const struct rw *rw, const struct split_file *f)
{
	return f->ids && f->branch == rw->cur.branch && rw->cur.nparents > 0 &&
	       oid_eq(&f->last_commit, &rw->cur.parents[0]);
}

/*
 * Fast path: the tree holds the previous version's parts, so only what
 * split/ lists as changed is looked at: the new or changed parts are
 * written, the vanished ones deleted; ids are updated in place. Costs the
 * change, not the number of parts.
 */
static int place_known(struct rw *rw, struct split_file *f,
		       const struct split_result *res, struct err *e)
{
	size_t i, len;
	struct part_id *p;
	int r = 0;

	for (i = 0; i < split_result_nchanged(res) && r == 0; i++)
		r = write_part(rw, f, split_result_changed(res, i), &f->ids, e);
	for (i = 0; i < split_result_nvanished(res) && r == 0; i++) {
		const char *path = split_result_vanished(res, i, &len);

		if (write_delete(rw, path, len, e) < 0)
			r = -1;
		HASH_FIND(hh, f->ids, path, len, p);
		if (p) {
			HASH_DEL(f->ids, p);
			free(p->path);
			free(p);
		}
	}
	return r;
}

/* Slow path: every part compared with the tree, the template's directory
 * walked for parts that vanished. */
static int place_unknown(struct rw *rw, struct split_file *f,
			 const struct split_result *res, struct err *e)
{
	struct part_id *ids = NULL;
	size_t i;
	int r = 0;

	for (i = 0; i < split_result_count(res) && r == 0; i++)
		r = write_part(rw, f, split_result_part(res, i), &ids, e);
	if (r == 0)
		r = delete_vanished(rw, f, res, e);
	ids_free(&f->ids);
	f->ids = ids;
	return r;
}

int splits_place(struct rw *rw, struct stream_cmd *c, struct blob_info *bi,
		 const struct rule *rule, struct err *e)
{
	const struct split_result *res;
	struct split_file *f;
	char where[OID_HEX + 256];
	struct buf *mem;
	const char *data;
	size_t len;
	int r;

	if (file_get(rw, c->path.ptr, c->path.len, rule, &f, e) < 0)
		return -1;
	/* split/ keeps the held copy itself when the blob can be read again
	 * from the repository (no copy of the version), else its own copy of
	 * data, which need not outlive the call */
	mem = blob_memory(rw, bi);
	if (!mem && blob_view(rw, bi, &f->data, &data, &len, e) < 0)
		return -1;
	if (mem)
		len = mem->len;
	report_split(rw, f->path, strlen(f->path), len, NULL, 0, 0);
	r = mem ? split_run_take(f->cache, mem, &res, e)
		: split_run(f->cache, data, len, &res, e);
	if (r == 0 && mem)
		blob_forget_copy(rw, bi);
	if (r < 0) {
		char msg[sizeof(e->msg)];
		memcpy(msg, e->msg, sizeof(msg));
		commit_name(rw, where, sizeof(where));
		/* the rule does not fit the data: a rule error (exit 1) */
		return err_set(e, ERR_USAGE, "%.*s in commit %s: %s",
			       (int)c->path.len, c->path.ptr, where, msg);
	}
	if (rw->opt->verify_split && !split_result_reassembles(res)) {
		commit_name(rw, where, sizeof(where));
		fprintf(stderr, "migrate: verify-split: %.*s in commit %s does not "
			"reassemble from its parts (records of one key are not "
			"contiguous)\n", (int)c->path.len, c->path.ptr, where);
		rw->split_failures++;
	}
	r = cache_valid(rw, f) ? place_known(rw, f, res, e)
			       : place_unknown(rw, f, res, e);
	f->source = *blob_id(bi);
	f->source_blob = bi;
	f->branch = rw->cur.branch;
	f->pending = 1;
	return r;
}

/*
 * At the end of every commit: a split file placed in it is known to be in
 * this commit; one whose last commit is this commit's parent on the same
 * branch stays known (the commit did not touch it). Anything else may
 * have changed the parts behind our back: forget, and look next time.
 */
void splits_commit_end(struct rw *rw, const struct oid *id)
{
	struct split_file *f, *t;

	if (!rw->splits)
		return;
	HASH_ITER(hh, rw->splits->files, f, t) {
		if (f->pending || (f->branch == rw->cur.branch && rw->cur.nparents > 0 &&
				   oid_eq(&f->last_commit, &rw->cur.parents[0])))
			f->last_commit = *id;
		f->pending = 0;
	}
}

int splits_delete(struct rw *rw, const char *path, size_t len,
		  const struct rule *rule, struct err *e)
{
	struct split_file *f;

	if (file_get(rw, path, len, rule, &f, e) < 0)
		return -1;
	ids_free(&f->ids); /* the tree no longer holds the parts */
	return delete_vanished(rw, f, NULL, e);
}

void splits_forget(struct rw *rw)
{
	struct split_file *f, *t;

	if (!rw->splits)
		return;
	HASH_ITER(hh, rw->splits->files, f, t) {
		ids_free(&f->ids);
	}
}

struct blob_info *splits_source(struct rw *rw, const char *path, size_t len)
{
	struct split_file *f = NULL;

	if (rw->splits)
		HASH_FIND(hh, rw->splits->files, path, len, f);
	return f ? f->source_blob : NULL;
}
