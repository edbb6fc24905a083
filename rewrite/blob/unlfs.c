/*
 * unlfs.c - the unlfs action: a Git LFS pointer becomes its file again,
 * read from an LFS object store (--store, the source repository's
 * lfs/objects, each --lfs-objects DIR), and the root .gitattributes loses
 * the lines that made the rule's files LFS files (lines for other files
 * stay), a nested one the single-path lines lfs added there. The way
 * back of `lfs`: lfs then unlfs of the same patterns gives the original
 * trees again (tests/integration/unlfs.sh and attrs_nested.sh let git
 * judge).
 *
 * Nothing is guessed: a stored object is taken only when its size and
 * SHA-256 are the pointer's; a pointer whose content is in no store stays
 * a pointer and is reported (report_lfs_missing), and unless
 * --missing=keep the run then fails at its end, naming every missing oid,
 * before the stream's `done` (fast-import commits nothing).
 *
 * With an objects directory (blob.h: `migrate run`), a file taken back is
 * not written into the stream: lfs_find (pool.c, on a pool thread
 * as a rule) stores it there as a pack of its own, which pack_commit
 * makes visible before the stream names the blob by id.
 */
#include <stdlib.h>
#include <string.h>

#include "way.h"

/* A pointer's oid, and the content found for it (NULL: in no store). */
struct unlfs_obj {
	struct ptr_oid oid;
	struct blob_info *content;
	UT_hash_handle hh;
};

struct unlfs {
	struct lfs_check check;		/* the main thread's own reads */
	struct unlfs_obj *objs;
	struct buf missing;		/* "  <oid> (<path>)\n" per missing oid */
	uint64_t nmissing;
	struct buf *globs;		/* per unlfs glob rule: its attr pattern */
	size_t nglobs;
	struct buf tmp, text, chk, pack;
	FILE *packs_list;	/* opt.objects_list, once a pack is in */
	uint64_t found;		/* LFS objects found */
};

/* 1 when the rule set has an unlfs rule. */
static int has_unlfs(const struct rules *r)
{
	size_t i;

	for (i = 0; i < rules_count(r); i++)
		if (rules_rule_action(rules_get(r, i)) == RULES_UNLFS)
			return 1;
	return 0;
}

static void add_dir(struct blobs *b, const char *dir)
{
	size_t i;

	for (i = 0; i < b->n_lfs_dirs; i++)
		if (!strcmp(b->lfs_dirs[i], dir))
			return;
	b->lfs_dirs = xrealloc(b->lfs_dirs, (b->n_lfs_dirs + 1) *
			       sizeof(*b->lfs_dirs));
	b->lfs_dirs[b->n_lfs_dirs++] = xstrdup(dir);
}

/* The pattern a glob rule's .gitattributes line starts with (what lfs
 * and `git lfs track` write), in out. */
static int glob_attr_pattern(struct buf *out, const struct rule *rule,
			     struct err *e)
{
	if (rules_rule_attr_line(out, rule, "x", e) < 0)
		return -1;
	out->len -= 3;	/* " x\n" */
	out->ptr[out->len] = '\0';
	return 0;
}

int unlfs_init(struct blobs *b, struct err *e)
{
	struct err ignored = ERR_INIT;
	struct unlfs *u;
	char *common = NULL;
	size_t i;

	if (!has_unlfs(b->rules))
		return 0;
	u = b->unlfs = xcalloc(1, sizeof(*u));
	buf_init(&u->missing, BUF_MAX_DEFAULT);
	buf_init(&u->tmp, BUF_MAX_DEFAULT);
	buf_init(&u->text, (size_t)100 << 20);
	buf_init(&u->chk, BUF_MAX_DEFAULT);
	buf_init(&u->pack, BUF_MAX_DEFAULT);
	lfs_check_init(&u->check, b);
	if (b->opt.store)
		add_dir(b, b->opt.store);
	if (gitcmd_common_dir(b->opt.source_repo, &common, &ignored) == 0) {
		buf_printf(&u->tmp, "%s/lfs/objects", common);
		add_dir(b, u->tmp.ptr);
		free(common);
	}
	for (i = 0; i < b->opt.n_lfs_objects; i++)
		add_dir(b, b->opt.lfs_objects[i]);
	if (!b->n_lfs_dirs)
		return err_set(e, ERR_USAGE, "the rules take files out of LFS, "
			       "but there is no store to read them from: pass "
			       "--lfs-objects DIR or run inside the repository");
	for (i = 0; i < rules_count(b->rules); i++) {
		const struct rule *rule = rules_get(b->rules, i);

		if (rules_rule_action(rule) != RULES_UNLFS ||
		    rules_rule_is_regex(rule))
			continue;
		u->globs = xrealloc(u->globs, (u->nglobs + 1) * sizeof(*u->globs));
		buf_init(&u->globs[u->nglobs], RULES_ATTR_LINE_MAX + 64);
		if (glob_attr_pattern(&u->globs[u->nglobs++], rule, e) < 0)
			return -1;
	}
	return 0;
}

uint64_t unlfs_count(const struct blobs *b)
{
	return b->unlfs ? b->unlfs->found : 0;
}

void unlfs_free(struct blobs *b)
{
	struct unlfs *u = b->unlfs;
	struct unlfs_obj *o, *t;
	size_t i;

	if (!u)
		return;
	HASH_ITER(hh, u->objs, o, t) {
		HASH_DEL(u->objs, o);
		free(o);
	}
	for (i = 0; i < b->n_lfs_dirs; i++)
		free(b->lfs_dirs[i]);
	free(b->lfs_dirs);
	b->lfs_dirs = NULL;
	b->n_lfs_dirs = 0;
	if (u->packs_list)
		fclose(u->packs_list);
	lfs_check_release(&u->check);
	for (i = 0; i < u->nglobs; i++)
		buf_release(&u->globs[i]);
	free(u->globs);
	buf_release(&u->missing);
	buf_release(&u->tmp);
	buf_release(&u->text);
	buf_release(&u->chk);
	buf_release(&u->pack);
	free(u);
	b->unlfs = NULL;
}

/* Makes the pack of a file taken back visible to git (fast-import finds
 * the blob by id), and lists it for the caller (blob.h, objects_list)
 * unless the same pack was there already (then it is not this run's). */
static int pack_commit(struct blobs *b, struct lfs_found *f, struct err *e)
{
	struct unlfs *u = b->unlfs;
	char hex[OID_HEX + 1];
	int r;

	/* the list is there before any pack: a pack it cannot name would
	 * never be dropped */
	if (!u->packs_list && b->opt.objects_list) {
		u->packs_list = fopen(b->opt.objects_list, "we");
		if (!u->packs_list)
			return err_errno(e, ERR_IO, "cannot create %s",
					 b->opt.objects_list);
	}
	r = packw_commit(f->pack, &u->pack, e);
	if (r <= 0)
		return r;
	if (u->packs_list &&
	    (fprintf(u->packs_list, "%s %s\n", oid_hex(&f->id, hex),
		     u->pack.ptr) < 0 || fflush(u->packs_list) != 0))
		return err_errno(e, ERR_IO, "cannot write %s", b->opt.objects_list);
	return 0;
}

/* The content of the pointer's object (bi: the pointer blob) from the
 * pool or the first store that has it (NULL when none has). */
static int find_content(struct blobs *b, const struct blob_info *ptr,
			const struct ptr_oid *oid, uint64_t size,
			struct blob_info **out, struct err *e)
{
	struct lfs_found f = { 0 };
	int r = 1;

	*out = NULL;
	if (!pool_take_unlfs(b, &ptr->id, oid, size, &f))
		r = lfs_find(&b->unlfs->check, b->lfs_dirs, b->n_lfs_dirs, oid,
			     size, &f, e);
	if (r == 1) {
		HASH_FIND(hh, b->byid, f.id.hash, OID_RAW, *out);
		if (!*out) {	/* else the content is known: read it there */
			if (f.pack && pack_commit(b, &f, e) < 0) {
				r = -1;
			} else {
				*out = blob_get(b, &f.id, size);
				(*out)->est = f.est;
				(*out)->lfs_path = f.path;
				(*out)->emitted = f.pack != NULL;
				f.path = NULL;
			}
		}
	}
	lfs_found_release(&f);
	return r < 0 ? -1 : 0;
}

static void note_missing(struct blobs *b, const struct ptr_oid *oid,
			 const char *path, size_t len)
{
	struct unlfs *u = b->unlfs;
	char hex[PTR_OID_HEXSZ + 1];

	ptr_oid_hex(oid, hex);
	u->nmissing++;
	report_lfs_missing(b->report, hex, path, len);
	if (u->nmissing > 100)
		return;	/* the message names the first 100 */
	buf_printf(&u->missing, "  %s (", hex);
	stream_show_path(&u->missing, path, len);
	buf_adds(&u->missing, ")\n");
}

/*
 * A pointer with extensions (ext-N-name lines): its stored object is the
 * output of the extensions' clean programs, not the file, so unlfs cannot
 * take it back. Refused naming the commit and the path, with the rule
 * that keeps it.
 */
static int refuse_extension(struct blobs *b, const char *path, size_t len,
			    struct err *e)
{
	struct buf shown = BUF_INIT(BUF_MAX_DEFAULT), rule = BUF_INIT(BUF_MAX_DEFAULT);
	char hex[OID_HEX + 1] = "";
	struct err ignored = ERR_INIT;
	int r;

	stream_show_path(&shown, path, len);
	if (b->cur && b->cur->has_orig)
		oid_hex(&b->cur->orig, hex);
	if (rules_attr_path_line(&rule, path, len, "keep", &ignored) < 0)
		buf_adds(&rule, "PATH keep");
	if (rule.len && rule.ptr[rule.len - 1] == '\n')
		rule.ptr[--rule.len] = '\0';
	r = err_set(e, ERR_IO, "%s%s%s: an LFS pointer with extensions "
		    "(ext-N-name lines): its stored object is not the file, "
		    "so unlfs cannot take it back; keep it a pointer with the "
		    "rule '%s' before the unlfs rule", shown.ptr,
		    *hex ? " in commit " : "", hex, rule.ptr);
	buf_release(&shown);
	buf_release(&rule);
	return r;
}

int unlfs_content(struct blobs *b, const char *path, size_t len,
		  struct blob_info *bi, struct blob_info **out, struct err *e)
{
	struct unlfs *u = b->unlfs;
	struct unlfs_obj *o;
	struct ptr_oid oid;
	uint64_t size;
	int p, ext;

	*out = bi;
	if (bi->unlfs_obj) {
		o = bi->unlfs_obj;
		goto found;
	}
	/* an empty file is its own pointer; content stays content */
	if (bi->size == 0 || (p = is_pointer(b, bi, e)) == 0)
		return 0;
	bi->unlfs_done = 1;
	if (p < 0 || blob_read_all(b, bi, &u->tmp, e) < 0)
		return -1;
	ptr_lfs_decode(u->tmp.ptr, u->tmp.len, &oid, &size, &ext);
	if (ext)
		return refuse_extension(b, path, len, e);
	HASH_FIND(hh, u->objs, oid.sha256, sizeof(oid.sha256), o);
	if (!o) {
		o = xcalloc(1, sizeof(*o));
		o->oid = oid;
		if (find_content(b, bi, &oid, size, &o->content, e) < 0) {
			free(o);
			return -1;
		}
		HASH_ADD(hh, u->objs, oid.sha256, sizeof(o->oid.sha256), o);
		if (!o->content)
			note_missing(b, &oid, path, len);
		else
			b->unlfs->found++;
	}
	bi->unlfs_obj = o;
found:
	if (o->content)
		*out = o->content;
	return 0;
}

/* ---- the .gitattributes files (the root's, and nested ones attrs.c
 * added single-path lines to) ---- */

/* The pattern token of a .gitattributes line (C-quoted when it starts
 * with '"'), and where the attributes start. */
static size_t pattern_token(const char *p, size_t n)
{
	size_t i = 0;

	if (n && p[0] == '"') {
		for (i = 1; i < n && p[i] != '"'; i++)
			if (p[i] == '\\' && i + 1 < n)
				i++;
		return i < n ? i + 1 : n;
	}
	while (i < n && p[i] != ' ' && p[i] != '\t')
		i++;
	return i;
}

/* 1 when the attributes (the rest of the line) make or unmake an LFS
 * file: filter=lfs, or migrate's exception line !filter !diff !merge
 * !text (any order). */
static int lfs_attrs(const char *p, size_t n)
{
	static const char *const unset[] = { "!filter", "!diff", "!merge", "!text" };
	unsigned seen = 0;
	size_t i = 0, a, k;

	while (i < n) {
		while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r'))
			i++;
		for (a = i; i < n && p[i] != ' ' && p[i] != '\t' && p[i] != '\r'; i++)
			;
		if (i == a)
			break;
		if (i - a == 10 && !memcmp(p + a, "filter=lfs", 10))
			return 1;
		for (k = 0; k < 4; k++)
			if (strlen(unset[k]) == i - a && !memcmp(p + a, unset[k], i - a))
				break;
		if (k == 4)
			return 0;
		seen |= 1u << k;
	}
	return seen == 15;
}

/* The path an anchored single-path pattern names ("/a/b.bin", or C-quoted
 * when it has a blank), in out after dir and a '/' (dlen 0: nothing): 1
 * when tok is exactly what rules_attr_path_line writes for that path, else
 * 0. */
static int single_path(struct blobs *b, const char *dir, size_t dlen,
		       const char *tok, size_t n, struct buf *out)
{
	struct err ignored = ERR_INIT;
	struct buf *chk = &b->unlfs->chk;
	size_t i = 0, end = n, at;
	int quoted = n >= 2 && tok[0] == '"', r;

	buf_reset(out);
	if (dlen) {
		buf_add(out, dir, dlen);
		buf_addch(out, '/');
	}
	at = out->len;
	if (quoted) {
		i = 1;
		end = n - 1;
	}
	if (i >= end || tok[i] != '/')
		return 0;
	for (i++; i < end; i++) {
		char c = tok[i];

		if (quoted && c == '\\' && i + 1 < end) {
			c = tok[++i];
			c = c == 't' ? '\t' : c == 'n' ? '\n' : c == 'r' ? '\r' : c;
		}
		if (c == '\\' && i + 1 < end)	/* a glob escape */
			c = tok[++i];
		buf_addch(out, c);
	}
	if (out->len == at)
		return 0;
	buf_reset(chk);
	r = rules_attr_path_line(chk, out->ptr + at, out->len - at, "x", &ignored);
	return r == 0 && chk->len == n + 3 && !memcmp(chk->ptr, tok, n);
}

/* 1 when an unlfs rule owns the line of dir's file (its pattern, at the
 * root, or a path its first matching rule takes out of LFS) and the line
 * is an LFS line. */
static int owned_line(struct blobs *b, const char *dir, size_t dlen,
		      const char *p, size_t n, struct err *e)
{
	struct unlfs *u = b->unlfs;
	struct buf path = BUF_INIT(BUF_MAX_DEFAULT);
	const struct rule *rule = NULL;
	size_t tok, i;
	int r = 0;

	while (n && (p[n - 1] == '\n' || p[n - 1] == '\r'))
		n--;
	while (n && (*p == ' ' || *p == '\t')) {
		p++;
		n--;
	}
	if (!n || *p == '#')
		return 0;
	tok = pattern_token(p, n);
	if (!lfs_attrs(p + tok, n - tok))
		return 0;
	for (i = 0; i < u->nglobs && !dlen; i++)
		if (u->globs[i].len == tok && !memcmp(u->globs[i].ptr, p, tok))
			return 1;
	if (single_path(b, dir, dlen, p, tok, &path)) {
		r = rules_match_unsized(&rule, b->rules, path.ptr, path.len, e);
		r = r < 0 ? -1 : r == 0 && rule &&
			rules_rule_action(rule) == RULES_UNLFS;
	}
	buf_release(&path);
	return r;
}

int unlfs_attrs(struct blobs *b, const char *dir, size_t dlen,
		struct blob_info *bi, struct blob_info **out, struct err *e)
{
	struct unlfs *u = b->unlfs;
	struct buf in = BUF_INIT((size_t)100 << 20);
	const char *p, *end;
	struct oid id;
	size_t n;
	int r = 0, removed = 0;

	*out = bi;
	if (blob_read_all(b, bi, &in, e) < 0) {
		buf_release(&in);
		return -1;
	}
	buf_reset(&u->text);
	for (p = in.ptr, end = p + in.len; p < end && r >= 0; p += n) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		n = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
		r = owned_line(b, dir, dlen, p, n, e);
		if (r == 0)
			buf_add(&u->text, p, n);
		removed |= r > 0;
	}
	buf_release(&in);
	if (r < 0)
		return -1;
	if (!removed)
		return 0;
	if (!u->text.len) {	/* nothing left: the file goes */
		*out = NULL;
		return 0;
	}
	obj_hash_buf(b->hash, OBJ_BLOB, u->text.ptr, u->text.len, &id);
	*out = blob_get(b, &id, u->text.len);
	if (!(*out)->held && !(*out)->emitted) {
		struct held *h = xcalloc(1, sizeof(*h));

		buf_init(&h->mem, SIZE_MAX);
		buf_add(&h->mem, u->text.ptr, u->text.len);
		(*out)->held = h;
	}
	(*out)->est = report_est_buf(b->report, u->text.ptr, u->text.len);
	return 0;
}

int unlfs_finish(struct blobs *b, struct err *e)
{
	struct unlfs *u = b->unlfs;
	size_t i;

	if (!u || !u->nmissing)
		return 0;
	if (b->opt.missing_keep) {
		if (!b->opt.quiet)
			warning("migrate: warning: %llu LFS object(s) in no store; "
				"their pointers are kept (--missing=keep):\n%.*s%s",
				(unsigned long long)u->nmissing,
				(int)(u->missing.len ? u->missing.len - 1 : 0),
				u->missing.ptr, u->nmissing > 100 ? "\n  ..." : "");
		return 0;
	}
	buf_reset(&u->tmp);
	for (i = 0; i < b->n_lfs_dirs; i++)
		buf_printf(&u->tmp, "%s%s", i ? ", " : "", b->lfs_dirs[i]);
	return err_set(e, ERR_IO, "%llu LFS object(s) are in no store (%s); "
		       "give the store with --lfs-objects DIR, or keep their "
		       "pointers with --missing=keep:\n%.*s%s",
		       (unsigned long long)u->nmissing, u->tmp.ptr,
		       (int)(u->missing.len ? u->missing.len - 1 : 0),
		       u->missing.ptr, u->nmissing > 100 ? "\n  ..." : "");
}
