/*
 * annexlog.c - the git-annex branch, written into the same stream after
 * the history (docs/FORMATS.md §8): refs/heads/git-annex with the files
 * `git annex init` and `git annex add` would have written, uuid.log (the
 * repository's UUID and description) and a location log
 * <hashdirlower>/<key>.log saying every key this run stored is present in
 * that repository. One commit on top of the branch as it is (in the
 * stream, else in the target), adding only what it lacks: nothing stored,
 * no commit. Its times are the newest committer date of the stream, so
 * the same input gives the same output (with the same --annex-uuid).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "../../pointerize/pointerize.h"
#include "state.h"

#define ANNEX_BRANCH "refs/heads/git-annex"
#define ANNEX_IDENT "migrate <migrate@localhost>"

int annex_uuid_valid(const char *u)
{
	size_t i;

	if (strlen(u) != 36)
		return 0;
	for (i = 0; i < 36; i++) {
		int dash = i == 8 || i == 13 || i == 18 || i == 23;
		if (dash ? u[i] != '-' : !((u[i] >= '0' && u[i] <= '9') ||
					   (u[i] >= 'a' && u[i] <= 'f')))
			return 0;
	}
	return 1;
}

int annex_uuid_new(char out[37], struct err *e)
{
	unsigned char r[16];
	size_t got = 0;
	ssize_t n;

	while (got < sizeof(r)) {
		n = getrandom(r + got, sizeof(r) - got, 0);
		if (n < 0)
			return err_errno(e, ERR_IO, "cannot make a git-annex UUID");
		got += (size_t)n;
	}
	r[6] = (unsigned char)((r[6] & 0x0f) | 0x40);	/* version 4 */
	r[8] = (unsigned char)((r[8] & 0x3f) | 0x80);	/* RFC 4122 variant */
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x%02x%02x%02x%02x", r[0], r[1], r[2], r[3], r[4], r[5],
		 r[6], r[7], r[8], r[9], r[10], r[11], r[12], r[13], r[14], r[15]);
	return 0;
}

struct annexlog {
	struct rw *rw;
	struct tnode **root;
	const char *uuid;
	char stamp[48];		/* "<secs>.<nanos>s", git-annex's timestamps */
	struct buf changes;	/* the M lines, with their data */
	struct buf text, path;
	size_t nchanged;
	struct err *e;
};

/* Adds the file path with text to the commit being built. */
static int add_file(struct annexlog *l, const char *path, const struct buf *text)
{
	struct oid id;

	obj_hash_buf(l->rw->hash, OBJ_BLOB, text->ptr, text->len, &id);
	if (tree_set(l->rw->ts, l->root, path, strlen(path), TREE_MODE_FILE,
		     &id, l->e) < 0)
		return -1;
	if (buf_printf(&l->changes, "M 100644 inline %s\ndata %zu\n", path,
		       text->len) < 0 ||
	    buf_add(&l->changes, text->ptr, text->len) < 0 ||
	    buf_addch(&l->changes, '\n') < 0)
		return err_set(l->e, ERR_IO, "git-annex branch too large");
	l->nchanged++;
	return 0;
}

/* The blob at path in the branch's tree (1, into out), or 0 if none. */
static int read_file(struct annexlog *l, const char *path, struct buf *out)
{
	char hex[OID_HEX + 1];
	enum obj_type type;
	uint32_t mode;
	struct oid id, got;
	int r = tree_lookup(l->rw->ts, *l->root, path, strlen(path), &mode, &id,
			    l->e);

	if (r <= 0)
		return r;
	oid_hex(&id, hex);
	r = odb_read(l->rw->dst, hex, &type, &got, out, l->e);
	if (r == 0 && l->rw->dst != l->rw->src)
		r = odb_read(l->rw->src, hex, &type, &got, out, l->e);
	if (r == 0)
		return err_set(l->e, ERR_IO, "%s:%s (%s) is not in repository %s",
			       ANNEX_BRANCH, path, hex, odb_name(l->rw->dst));
	return r < 0 ? -1 : 1;
}

/* uuid.log: our line added unless the repository is there already. */
static int uuid_log(struct annexlog *l)
{
	const char *desc = l->rw->opt->annex_desc ? l->rw->opt->annex_desc
						  : "migrate";
	int r = read_file(l, "uuid.log", &l->text);
	size_t n = strlen(l->uuid);
	const char *p;

	if (r < 0)
		return -1;
	if (r == 0)
		buf_reset(&l->text);
	for (p = l->text.ptr; r > 0 && p && *p; p = strchr(p, '\n'), p = p ? p + 1 : p)
		if (!strncmp(p, l->uuid, n) && (p[n] == ' ' || p[n] == '\n'))
			return 0;
	if (l->text.len && l->text.ptr[l->text.len - 1] != '\n')
		buf_addch(&l->text, '\n');
	buf_printf(&l->text, "%s %s timestamp=%s\n", l->uuid, desc, l->stamp);
	return add_file(l, "uuid.log", &l->text);
}

/* <hashdirlower>/<key>.log for a key the branch has no log of yet. */
static int location_log(void *ctx, const char *key)
{
	struct annexlog *l = ctx;
	uint32_t mode;
	char hd[8];
	int r;

	if (ptr_annex_hashdirlower(key, hd) < 0)
		return err_set(l->e, ERR_IO, "libcrypto: MD5 failed");
	buf_reset(&l->path);
	buf_printf(&l->path, "%s/%s.log", hd, key);
	r = tree_lookup(l->rw->ts, *l->root, l->path.ptr, l->path.len, &mode,
			NULL, l->e);
	if (r != 0)
		return r < 0 ? -1 : 0;	/* git-annex knows of it already */
	buf_reset(&l->text);
	buf_printf(&l->text, "%s 1 %s\n", l->stamp, l->uuid);
	return add_file(l, l->path.ptr, &l->text);
}

void annexlog_note_time(struct rw *rw, const struct buf *ident)
{
	const char *sp, *p;
	int64_t t = 0;

	sp = ident->len ? memrchr(ident->ptr, ' ', ident->len) : NULL;
	if (!sp)
		return;
	p = sp;
	while (p > ident->ptr && p[-1] >= '0' && p[-1] <= '9')
		p--;
	if (p == sp || p == ident->ptr || p[-1] != ' ' || sp - p > 18)
		return;
	for (; p < sp; p++)
		t = t * 10 + (*p - '0');
	if (t > rw->annex_time)
		rw->annex_time = t;
}

/* The commit: its id computed, its text written after the history. */
static int write_commit(struct annexlog *l, const struct oid *parent,
			struct branch *br)
{
	static const char msg[] = "update (migrate: annexed history)\n";
	struct rw *rw = l->rw;
	struct buf body = BUF_INIT(BUF_MAX_DEFAULT);
	char hex[OID_HEX + 1], ident[128];
	struct oid tree, id;
	int r;

	snprintf(ident, sizeof(ident), "%s %lld +0000", ANNEX_IDENT,
		 (long long)rw->annex_time);
	r = tree_hash(rw->ts, *l->root, &tree, l->e);
	if (r == 0) {
		buf_printf(&body, "tree %s\n", oid_hex(&tree, hex));
		if (parent)
			buf_printf(&body, "parent %s\n", oid_hex(parent, hex));
		buf_printf(&body, "author %s\ncommitter %s\n\n%s", ident, ident, msg);
		obj_hash_buf(rw->hash, OBJ_COMMIT, body.ptr, body.len, &id);
		buf_reset(&body);
		buf_printf(&body, "commit %s\nauthor %s\ncommitter %s\ndata %zu\n%s",
			   ANNEX_BRANCH, ident, ident, sizeof(msg) - 1, msg);
		if (parent)
			buf_printf(&body, "from %s\n", oid_hex(parent, hex));
		r = stream_write_raw(rw->out, body.ptr, body.len, l->e);
	}
	if (r == 0)
		r = stream_write_raw(rw->out, l->changes.ptr, l->changes.len, l->e);
	if (r == 0)
		r = stream_write_raw(rw->out, "\n", 1, l->e);
	if (r == 0) {
		br->tip = id;
		br->tree = *l->root;
		br->deleted = 0;
		tree_state_freeze(rw->ts);
	}
	buf_release(&body);
	return r;
}

int annexlog_write(struct rw *rw, struct err *e)
{
	struct buf name = BUF_INIT(BUF_MAX_DEFAULT);
	struct annexlog l;
	struct branch *br;
	struct tnode *root;
	struct target t;
	struct oid parent;
	char uuid[37];
	int has_parent = 0, r = 0;

	if (!rw->blobs || !blobs_has_annex(rw->blobs))
		return 0;
	if (rw->no_ids) {
		warning("migrate: warning: the git-annex branch is not written "
			"(object ids were lost): run `git annex fsck` in the new "
			"repository");
		return 0;
	}
	buf_adds(&name, ANNEX_BRANCH);
	br = branch_get(rw, &name, 1);
	buf_release(&name);
	if (!oid_is_null(&br->tip) && !br->deleted) {
		parent = br->tip;
		root = br->tree;
		has_parent = 1;
	} else {
		enum obj_type type;
		uint64_t size;
		/* no repository behind a full-data stream: no branch */
		r = !odb_is_repository(rw->dst) ? 0 :
		    odb_info(rw->dst, ANNEX_BRANCH "^{commit}", &type, &parent,
			     &size, e);
		if (r > 0 && (r = read_commit(rw, rw->dst, ANNEX_BRANCH "^{commit}",
					      &t, e)) > 0) {
			parent = t.oid;
			root = t.tree;
			has_parent = 1;
		}
		if (r < 0)
			return -1;
		if (!has_parent)
			root = tree_new_empty(rw->ts);
		r = 0;
	}
	/* nothing stored: nothing to say (git annex init writes uuid.log) */
	if (!blobs_annexed(rw->blobs))
		return 0;
	memset(&l, 0, sizeof(l));
	l.rw = rw;
	l.root = &root;
	l.uuid = rw->opt->annex_uuid;
	if (!l.uuid) {
		if (annex_uuid_new(uuid, e) < 0)
			return -1;
		l.uuid = uuid;
		if (!rw->opt->quiet && !rw->opt->dry_run)
			warning("migrate: git-annex: the new repository's UUID is "
				"%s: set it with `git config annex.uuid %s` there "
				"(or pass --annex-uuid)", uuid, uuid);
	}
	l.e = e;
	/* the history's newest commit date, not the clock: the same stream
	 * gives the same branch */
	snprintf(l.stamp, sizeof(l.stamp), "%llds", (long long)rw->annex_time);
	buf_init(&l.changes, SIZE_MAX / 2);
	buf_init(&l.text, SIZE_MAX / 2);
	buf_init(&l.path, BUF_MAX_DEFAULT);
	r = uuid_log(&l);
	if (r == 0)
		r = blobs_annex_keys(rw->blobs, location_log, &l);
	if (r == 0 && l.nchanged)
		r = write_commit(&l, has_parent ? &parent : NULL, br);
	buf_release(&l.changes);
	buf_release(&l.text);
	buf_release(&l.path);
	return r < 0 ? -1 : 0;
}
