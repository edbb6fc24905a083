/*
 * state.c - fast-import's state as migrate mirrors it: marks, the branch
 * table, what a commit-ish or dataref names, and data copied through
 * with its id. The command handlers (engine.c, notes.c, annexlog.c) read
 * and change it here; it calls none of them, so the dispatcher and the
 * handlers it calls are not a circle (tests/integration/circles.sh).
 */
#include <stdlib.h>
#include <string.h>

#include "state.h"

/*
 * A commit or object outside the stream could not be read. With maps
 * asked for, that is fatal; otherwise say once that ids stop here and go
 * on passing the stream through.
 */
int ids_lost(struct rw *rw, struct err *e)
{
	if (rw->want_ids)
		return err_at_input(e);
	if (!rw->opt->quiet) {
		warning("migrate: warning: %s", e->msg);
		warning("migrate: warning: object ids from byte offset %llu on "
			"cannot be computed (pass --source-repo DIR); the stream "
			"passes through unchanged",
			(unsigned long long)stream_reader_offset(rw->in));
	}
	rw->no_ids = 1;
	return 0;
}

/* ---- marks, branches, tags ---- */

struct mark_ent *mark_get(struct rw *rw, uint64_t mark)
{
	struct mark_ent *m;

	HASH_FIND(hh, rw->marks, &mark, sizeof(mark), m);
	return m;
}

struct mark_ent *mark_set(struct rw *rw, uint64_t mark,
				 enum obj_type type, const struct oid *oid)
{
	struct mark_ent *m = mark_get(rw, mark);

	if (!m) {
		m = xcalloc(1, sizeof(*m));
		m->mark = mark;
		HASH_ADD(hh, rw->marks, mark, sizeof(m->mark), m);
	}
	m->type = type;
	m->oid = *oid;
	m->has_orig = 0;
	m->tree = NULL;
	m->gnew = m->gorig = 0;
	m->name_mark = type == OBJ_COMMIT ? mark : 0;
	m->outside = m->pruned = m->unheard = 0;
	memset(&m->bm, 0, sizeof(m->bm));
	m->bm.num = mark;
	m->bm.id = &m->oid;
	m->bm.declared = 1;	/* without rules, written as read */
	return m;
}

void branch_target(const struct branch *b, struct target *t)
{
	memset(t, 0, sizeof(*t));
	t->type = OBJ_COMMIT;
	t->oid = b->tip;
	t->orig = b->tip_orig;
	t->has_orig = b->has_tip_orig;
	t->tree = b->tree;
	t->gnew = b->tip_gnew;
	t->gorig = b->tip_gorig;
	t->name_mark = b->tip_mark;
	t->outside = b->tip_outside;
	t->skipped = b->tip_skipped;
	t->unheard = b->fi_stale;
}

struct branch *branch_get(struct rw *rw, const struct buf *name, int create)
{
	struct branch *b;

	HASH_FIND(hh, rw->branches, name->ptr, name->len, b);
	if (b || !create)
		return b;
	b = xcalloc(1, sizeof(*b));
	b->name = xmemdup(name->ptr, name->len);
	b->tree = tree_new_empty(rw->ts);
	HASH_ADD_KEYPTR(hh, rw->branches, b->name, name->len, b);
	return b;
}

/* ---- resolving commit-ish and datarefs ---- */

int read_commit(struct rw *rw, struct odb *db, const char *name,
		struct target *t, struct err *e)
{
	struct oid tree;
	int r = odb_read(db, name, &t->type, &t->oid, &rw->scratch, e);

	if (r < 0)
		return -1;
	if (r == 0)
		return err_set(e, ERR_IO,
			       "'%s' is not in this stream and not in repository %s",
			       name, odb_name(db));
	if (t->type != OBJ_COMMIT)
		return 1;
	if (rw->scratch.len < 46 || memcmp(rw->scratch.ptr, "tree ", 5) ||
	    oid_from_hex(&tree, rw->scratch.ptr + 5, OID_HEX) < 0)
		return err_set(e, ERR_IO, "commit %s: malformed object", name);
	t->tree = tree_from_oid(rw->ts, &tree);
	return 1;
}

/* The parents of the commit object in rw->scratch: how many, the first
 * in *first. -1 when malformed. */
static int commit_parents(const struct buf *body, struct oid *first)
{
	const char *p = body->ptr, *end = body->ptr + body->len;
	int n = 0;

	while (p < end && *p != '\n') {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			return -1;
		if (nl - p == 7 + OID_HEX && !memcmp(p, "parent ", 7)) {
			if (n == 0 && oid_from_hex(first, p + 7, OID_HEX) < 0)
				return -1;
			n++;
		}
		p = nl + 1;
	}
	return n;
}

/*
 * A commit the map says was dropped: an earlier run pruned it (it
 * became empty). Its stand-in is what that run moved its branch to: its
 * first parent's new commit, down past the parents pruned too; none when
 * the history below it was all pruned (a root then). A pruned merge may
 * have stood for another parent: refused, as before pruning existed.
 */
static int pruned_before(struct rw *rw, const char *name, struct target *t,
			 struct err *e)
{
	char hex[OID_HEX + 1];
	const struct oid *mapped;
	struct oid cur = t->orig, first;
	enum obj_type type;
	struct oid got;
	int r, n;

	t->skipped = 1;
	for (;;) {
		r = odb_read(rw->src, oid_hex(&cur, hex), &type, &got, &rw->scratch, e);
		if (r < 0)
			return -1;
		if (r == 0 || type != OBJ_COMMIT)
			return err_set(e, ERR_IO, "%s: the commit map says an earlier "
				       "run pruned it, and commit %s is not in "
				       "repository %s", name, hex, odb_name(rw->src));
		n = commit_parents(&rw->scratch, &first);
		if (n < 0)
			return err_set(e, ERR_IO, "commit %s: malformed object", hex);
		if (n == 0) {
			t->type = OBJ_COMMIT;
			t->oid = oid_null;
			t->tree = tree_new_empty(rw->ts);
			return 0;
		}
		if (n > 1)
			return err_set(e, ERR_USAGE, "%s: the commit map says this "
				       "commit was dropped (merge %s, pruned by an "
				       "earlier run); history cannot continue from it",
				       name, hex);
		mapped = cmap_get(rw->cmap, &first);
		if (mapped && oid_is_null(mapped)) {
			cur = first;
			continue;
		}
		if (mapped) {
			t->translated = 1;
			return read_commit(rw, rw->dst, oid_hex(mapped, hex), t, e) < 0
				       ? -1 : 0;
		}
		return read_commit(rw, rw->src, oid_hex(&first, hex), t, e) < 0 ? -1 : 0;
	}
}

/*
 * Resolves what `from`, `merge`, `to` or a tag's `from` names, as
 * fast-import does (docs/FORMATS.md 6.5): the branch table, then marks, then
 * object ids (translated through the commit map) and names in the
 * repository. Returns 0, or -1 with e set; a failure to read an outside
 * object is an ERR_IO the caller may downgrade with ids_lost().
 */
int resolve(struct rw *rw, struct stream_ref *ref, struct target *t,
		   struct err *e)
{
	struct branch *b;
	struct mark_ent *m;
	const struct oid *mapped;
	char hex[OID_HEX + 1];

	memset(t, 0, sizeof(*t));
	if (ref->kind == STREAM_REF_NAME || ref->kind == STREAM_REF_OID) {
		b = branch_get(rw, &ref->name, 0);
		if (b) {
			branch_target(b, t);
			return 0;
		}
	}
	switch (ref->kind) {
	case STREAM_REF_MARK:
		m = mark_get(rw, ref->mark);
		if (!m)
			return err_set(e, ERR_STREAM, "mark :%llu was never defined",
				       (unsigned long long)ref->mark);
		t->type = m->type;
		t->oid = m->oid;
		t->orig = m->orig;
		t->has_orig = m->has_orig;
		t->tree = m->tree;
		t->gnew = m->gnew;
		t->gorig = m->gorig;
		t->name_mark = m->name_mark;
		t->outside = m->outside;
		t->skipped = m->pruned;
		t->unheard = m->unheard;
		return 0;
	case STREAM_REF_OID:
		if (ref->name.len != OID_HEX)
			return err_set(e, ERR_USAGE,
				       "'%s' is a sha256 object id: migrate supports "
				       "sha1 repositories only for now", ref->name.ptr);
		if (oid_from_hex(&t->orig, ref->name.ptr, OID_HEX) < 0)
			return err_set(e, ERR_STREAM, "bad object id '%s'",
				       ref->name.ptr);
		t->has_orig = 1;
		t->outside = 1;
		if (oid_is_null(&t->orig)) {
			t->type = OBJ_COMMIT;
			t->tree = tree_new_empty(rw->ts);
			return 0;
		}
		mapped = cmap_get(rw->cmap, &t->orig);
		if (mapped && oid_is_null(mapped))
			return pruned_before(rw, ref->name.ptr, t, e);
		if (mapped) {
			t->translated = 1;
			return read_commit(rw, rw->dst, oid_hex(mapped, hex), t, e) < 0
				       ? -1 : 0;
		}
		return read_commit(rw, rw->src, ref->name.ptr, t, e) < 0 ? -1 : 0;
	case STREAM_REF_NAME:
		/* get_oid() against the destination, as fast-import does */
		t->outside = 1;
		return read_commit(rw, rw->dst, ref->name.ptr, t, e) < 0 ? -1 : 0;
	default:
		return err_set(e, ERR_STREAM, "expected a commit-ish");
	}
}

/* Rewrites a raw id the commit map translated, so the output names the
 * new commit. */
void ref_translate(struct stream_ref *ref, const struct target *t)
{
	char hex[OID_HEX + 1];

	if (t->translated)
		buf_set(&ref->name, oid_hex(&t->oid, hex), OID_HEX);
}

void ref_name_commit(struct stream_ref *ref, uint64_t mark,
		     const struct oid *oid)
{
	char hex[OID_HEX + 1];

	if (mark) {
		ref->kind = STREAM_REF_MARK;
		ref->mark = mark;
	} else {
		ref->kind = STREAM_REF_OID;
		buf_set(&ref->name, oid_hex(oid, hex), OID_HEX);
	}
}

void ref_standin(struct stream_ref *ref, const struct target *t)
{
	if (t->unheard && !t->skipped) {
		ref_name_commit(ref, 0, &t->oid);
		return;
	}
	if (!t->skipped)
		return;
	if (oid_is_null(&t->oid))
		ref->kind = STREAM_REF_NONE;
	else
		ref_name_commit(ref, t->name_mark, &t->oid);
}

/* ---- data: blobs and inline contents ---- */

/*
 * Copies the pending data of rw->cmd to the output (cmd is written with
 * stream_write_data_begin), hashing it as a blob into *id. Delimited data
 * has no length up front, so it is collected first (bounded).
 */
int copy_data(struct rw *rw, struct stream_writer *w, struct oid *id,
	      struct err *e)
{
	const char *chunk;
	size_t len;
	int r;

	if (rw->cmd.data_len == UINT64_MAX) {
		buf_reset(&rw->scratch);
		while ((r = stream_reader_data(rw->in, &chunk, &len, e)) > 0)
			if (buf_add(&rw->scratch, chunk, len) < 0)
				return err_set(e, ERR_STREAM,
					       "delimited data larger than 1 GiB");
		if (r < 0)
			return -1;
		obj_hash_buf(rw->hash, OBJ_BLOB, rw->scratch.ptr, rw->scratch.len, id);
		rw->data_size = rw->scratch.len;
		rw->data_est = report_est_buf(rw->report, rw->scratch.ptr, rw->scratch.len);
		if (stream_write_data_begin(w, &rw->cmd, rw->scratch.len, e) < 0 ||
		    stream_write_bytes(w, rw->scratch.ptr, rw->scratch.len, e) < 0)
			return -1;
		return stream_write_data_end(w, e);
	}
	if (stream_write_data_begin(w, &rw->cmd, rw->cmd.data_len, e) < 0)
		return -1;
	obj_hash_begin(rw->hash, OBJ_BLOB, rw->cmd.data_len);
	report_est_begin(rw->report, NULL);
	while ((r = stream_reader_data(rw->in, &chunk, &len, e)) > 0) {
		obj_hash_update(rw->hash, chunk, len);
		report_est_feed(rw->report, chunk, len);
		if (stream_write_bytes(w, chunk, len, e) < 0)
			return -1;
	}
	if (r < 0)
		return -1;
	obj_hash_final(rw->hash, id);
	rw->data_size = rw->cmd.data_len;
	rw->data_est = report_est_end(rw->report, rw->cmd.data_len);
	report_input_blob(rw->report, id, rw->data_size, rw->data_est);
	report_output_blob(rw->report, id, rw->data_size, rw->data_est);
	return stream_write_data_end(w, e);
}

/* The blob (or, for a gitlink, commit) id an M line's dataref names. */
int modify_id(struct rw *rw, struct oid *id, struct err *e)
{
	struct stream_ref *d = &rw->cmd.dataref;
	enum obj_type want;
	struct mark_ent *m;

	switch (d->kind) {
	case STREAM_REF_MARK:
		m = mark_get(rw, d->mark);
		if (!m)
			return err_set(e, ERR_STREAM, "mark :%llu was never defined",
				       (unsigned long long)d->mark);
		/* fast-import dies "Not a blob (actually a commit)" */
		want = rw->cmd.kind != STREAM_MODIFY ? OBJ_BLOB :
		       (rw->cmd.mode & 0170000u) == TREE_MODE_GITLINK ? OBJ_COMMIT :
		       tree_mode_is_dir(rw->cmd.mode) ? OBJ_TREE : OBJ_BLOB;
		if (m->type != want)
			return err_set(e, ERR_STREAM, "mark :%llu is a %s, not a %s",
				       (unsigned long long)d->mark,
				       obj_type_name(m->type), obj_type_name(want));
		*id = m->oid;
		return 0;
	case STREAM_REF_OID:
		if (oid_from_hex(id, d->name.ptr, d->name.len) < 0)
			return err_set(e, ERR_STREAM,
				       "'%s' is not a sha1 object id", d->name.ptr);
		return 0;
	default:
		return err_set(e, ERR_STREAM,
			       "expected a mark, an object id or 'inline'");
	}
}
