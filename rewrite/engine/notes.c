/* notes.c - N (notemodify) and fast-import's notes fanout (docs/FORMATS.md 6.5). */
#include <stdlib.h>
#include <string.h>

#include "state.h"

/* fast-import's notes fanout: one level per byte of the count. */
unsigned char notes_fanout(uint64_t n)
{
	unsigned char f = 0;

	while ((n >>= 8))
		f++;
	return f;
}

/* ---- notes (N), with fast-import's fanout (docs/FORMATS.md 6.5) ---- */

static void note_path(const struct oid *commit, unsigned char fanout,
		      struct buf *out)
{
	char hex[OID_HEX + 1];
	unsigned char i;

	oid_hex(commit, hex);
	buf_reset(out);
	for (i = 0; i < fanout; i++) {
		buf_add(out, hex + 2 * i, 2);
		buf_addch(out, '/');
	}
	buf_add(out, hex + 2 * fanout, OID_HEX - 2u * fanout);
}

struct note_ent {
	struct buf path;
	uint32_t mode;
	struct oid id, commit;
};

struct note_list {
	struct note_ent *v;
	size_t n, alloc;
};

/* A path is a note when its components all have even length and spell
 * 40 hex digits together (fast-import's do_change_note_fanout). */
static int collect_note(void *ctx, const char *path, size_t len, uint32_t mode,
			const struct oid *id)
{
	struct note_list *l = ctx;
	char hex[OID_HEX];
	size_t i, n = 0, comp = 0;
	struct note_ent *ne;

	for (i = 0; i <= len; i++) {
		if (i == len || path[i] == '/') {
			if (comp % 2)
				return 0;
			comp = 0;
			continue;
		}
		if (n == OID_HEX)
			return 0;
		hex[n++] = path[i];
		comp++;
	}
	if (n != OID_HEX)
		return 0;
	if (l->n == l->alloc) {
		l->alloc = l->alloc ? 2 * l->alloc : 16;
		l->v = xrealloc(l->v, l->alloc * sizeof(*l->v));
	}
	ne = &l->v[l->n];
	if (oid_from_hex(&ne->commit, hex, OID_HEX) < 0)
		return 0;
	buf_init(&ne->path, STREAM_MAX_LINE);
	buf_add(&ne->path, path, len);
	ne->mode = mode;
	ne->id = *id;
	l->n++;
	return 0;
}

/* Counts the notes of root (fanout 0xff) or moves them all to their path
 * at fanout. Returns the count, or -1 with e set. */
int64_t notes_change_fanout(struct rw *rw, struct tnode **root,
			     unsigned char fanout, struct err *e)
{
	struct note_list l = { NULL, 0, 0 };
	struct buf path = BUF_INIT(STREAM_MAX_LINE);
	int64_t ret;
	size_t i;

	ret = tree_walk(rw->ts, *root, collect_note, &l, e) < 0 ? -1 : (int64_t)l.n;
	for (i = 0; i < l.n; i++) {
		struct note_ent *ne = &l.v[i];
		if (ret >= 0 && fanout != 0xff) {
			note_path(&ne->commit, fanout, &path);
			if (!buf_eq(&path, ne->path.ptr) &&
			    (tree_remove(rw->ts, root, ne->path.ptr, ne->path.len, e) < 0 ||
			     tree_set(rw->ts, root, path.ptr, path.len, ne->mode,
				      &ne->id, e) < 0))
				ret = -1;
		}
		buf_release(&ne->path);
	}
	free(l.v);
	buf_release(&path);
	return ret;
}

static int note_blob(struct rw *rw, struct oid *id, struct err *e)
{
	struct stream_ref *d = &rw->cmd.dataref;

	if (d->kind == STREAM_REF_INLINE)
		return copy_data(rw, rw->cout, id, e);
	if (modify_id(rw, id, e) < 0)
		return err_at_input(e);
	return stream_write_cmd(rw->cout, &rw->cmd, e);
}

int notes_modify(struct rw *rw, struct err *e)
{
	struct cur_commit *c = &rw->cur;
	struct branch *b = c->branch;
	struct buf path = BUF_INIT(STREAM_MAX_LINE);
	struct target t;
	struct oid id;
	int64_t n;
	int r;

	if (rw->no_ids)
		return note_blob(rw, &id, e);
	if (b->num_notes == 0 && c->fanout == 0) {
		if ((n = notes_change_fanout(rw, &c->root, 0xff, e)) < 0)
			return ids_lost(rw, e) < 0 ? -1 : note_blob(rw, &id, e);
		b->num_notes = (uint64_t)n;
		c->fanout = notes_fanout(b->num_notes);
	}
	if (resolve(rw, &rw->cmd.from, &t, e) < 0) {
		if (e->kind != ERR_IO)
			return err_at_input(e);
		return ids_lost(rw, e) < 0 ? -1 : note_blob(rw, &id, e);
	}
	ref_translate(&rw->cmd.from, &t);
	if (t.unheard && !t.skipped)
		ref_standin(&rw->cmd.from, &t);	/* by id */
	if (note_blob(rw, &id, e) < 0)
		return -1;
	note_path(&t.oid, c->fanout, &path);
	r = tree_remove(rw->ts, &c->root, path.ptr, path.len, e);
	if (r > 0)
		b->num_notes--;
	if (r >= 0 && !oid_is_null(&id)) {
		b->num_notes++;
		note_path(&t.oid, notes_fanout(b->num_notes), &path);
		r = tree_set(rw->ts, &c->root, path.ptr, path.len, TREE_MODE_FILE,
			     &id, e);
	}
	buf_release(&path);
	if (r < 0)
		return e->kind == ERR_IO ? ids_lost(rw, e) : err_at_input(e);
	return 0;
}

