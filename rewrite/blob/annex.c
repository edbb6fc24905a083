/*
 * annex.c - the annex action: the file becomes a git-annex pointer file
 * (unlocked, the default: "/annex/objects/<key>" and LF, mode kept) or a
 * symlink into .git/annex/objects (locked), and its content goes to the
 * git-annex store under its key (docs/FORMATS.md §8). The keys stored
 * are kept for the git-annex branch the engine writes at the end.
 */
#include <stdlib.h>
#include <string.h>

#include "way.h"

/* A key stored (or, in a dry run, that would be) by this run. */
struct annex_key {
	char *key;
	UT_hash_handle hh;
};

/* The annex action's state (struct blobs' annex); the store it opens is
 * b->annex_store, which held.c reads too. */
struct annex {
	int has_annex;		/* some rule converts to git-annex */
	struct annex_key *keys;	/* keys stored this run */
	uint64_t annexed;	/* keys stored */
	struct buf buf, text;	/* a key; a pointer's text */
};

/* Whether a repository directory (a git dir) is bare: git-annex then
 * lays its objects out with hashdirlower. */
static int is_bare(const char *gitdir, int *bare, struct err *e)
{
	struct buf out = BUF_INIT(BUF_MAX_DEFAULT);
	int r = gitcmd_runl(gitdir, 1, &out, e, "rev-parse",
			    "--is-bare-repository", (char *)NULL);

	gitcmd_chomp(&out);
	*bare = r == 0 && !strcmp(out.ptr, "true");
	buf_release(&out);
	return r;
}

/* The store: blob_options' annex_dir, else <git-common-dir>/annex of the
 * current directory's repository (git-annex's own place). */
static int open_annex_store(struct blobs *b, struct err *e)
{
	struct err ignored = ERR_INIT;
	struct buf dir = BUF_INIT(BUF_MAX_DEFAULT);
	char *common = NULL, *repo = NULL;
	int bare = 0, r;

	if (b->opt.annex_dir) {
		char *gitdir = xstrdup(b->opt.annex_dir), *slash;
		/* the git dir is the parent of <git-dir>/annex */
		while ((slash = strrchr(gitdir, '/')) && slash[1] == '\0' &&
		       slash != gitdir)
			*slash = '\0';
		slash = strrchr(gitdir, '/');
		if (slash && slash != gitdir)
			*slash = '\0';
		else if (slash)
			slash[1] = '\0';
		else
			strcpy(gitdir, ".");
		/* not in a repository: a plain directory (asked quietly
		 * first: git's own "fatal:" is not for the terminal) */
		if (gitcmd_git_dir(gitdir, &repo, &ignored) < 0 ||
		    is_bare(gitdir, &bare, &ignored) < 0)
			bare = 0;
		free(repo);
		free(gitdir);
		return ptr_store_open_annex(&b->annex_store, b->opt.annex_dir,
					    bare, e);
	}
	if (gitcmd_common_dir(NULL, &common, &ignored) < 0)
		return err_set(e, ERR_USAGE,
			       "the rules convert files to git-annex, but there "
			       "is no store: pass --annex-dir DIR or run inside "
			       "the repository whose .git/annex should hold them");
	r = is_bare(common, &bare, e);
	buf_printf(&dir, "%s/annex", common);
	if (r == 0)
		r = ptr_store_open_annex(&b->annex_store, dir.ptr, bare, e);
	free(common);
	buf_release(&dir);
	return r;
}

int annex_init(struct blobs *b, struct err *e)
{
	size_t i;

	b->annex = xcalloc(1, sizeof(*b->annex));
	for (i = 0; i < rules_count(b->rules); i++)
		if (rules_rule_action(rules_get(b->rules, i)) == RULES_ANNEX)
			b->annex->has_annex = 1;
	buf_init(&b->annex->buf, BUF_MAX_DEFAULT);
	buf_init(&b->annex->text, BUF_MAX_DEFAULT);
	if (!b->annex->has_annex || b->opt.dry_run)
		return 0;
	if (open_annex_store(b, e) < 0)
		return -1;
	ptr_store_set_batch(b->annex_store, 1);
	return 0;
}

void annex_free(struct blobs *b)
{
	struct annex_key *k, *kt;

	if (b->annex) {
		HASH_ITER(hh, b->annex->keys, k, kt) {
			HASH_DELETE(hh, b->annex->keys, k);
			free(k->key);
			free(k);
		}
		buf_release(&b->annex->buf);
		buf_release(&b->annex->text);
		free(b->annex);
		b->annex = NULL;
	}
	ptr_store_free(b->annex_store);
	b->annex_store = NULL;
}

uint64_t annex_count(const struct blobs *b)
{
	return b->annex ? b->annex->annexed : 0;
}

/* Streams bi's content into the store under its key (computed from the
 * content and path), which ends in b->annex->buf. */
static int annex_store(struct blobs *b, struct blob_info *bi,
		       enum ptr_annex_backend backend, const char *path,
		       struct err *e)
{
	struct ptr_put *put;
	uint64_t size;

	if (content_put(b, bi, b->annex_store, &put, e) < 0 ||
	    ptr_put_finish_annex(put, backend, path, &b->annex->buf,
				 &bi->sha256, &size, e) < 0 ||
	    content_size_check(bi, size, e) < 0)
		return -1;
	bi->sha_known = 1;
	if (!bi->annex_key)
		bi->annex_key = xstrdup(b->annex->buf.ptr);
	return 0;
}

/* The key of bi at path in b->annex->buf, its content stored under it
 * (once per key and run). */
static int annex_key_of(struct blobs *b, struct blob_info *bi,
			enum ptr_annex_backend backend, const char *path,
			struct err *e)
{
	struct annex_key *k = NULL;

	if (bi->sha_known) {
		if (ptr_annex_key_backend(&b->annex->buf, backend, &bi->sha256,
					  bi->size, path) < 0)
			return err_set(e, ERR_IO, "git-annex key too long");
		HASH_FIND_STR(b->annex->keys, b->annex->buf.ptr, k);
		if (k)
			return 0;
	}
	if (annex_store(b, bi, backend, path, e) < 0)
		return -1;
	HASH_FIND_STR(b->annex->keys, b->annex->buf.ptr, k);
	if (k)
		return 0;
	k = xcalloc(1, sizeof(*k));
	k->key = xstrdup(b->annex->buf.ptr);
	HASH_ADD_KEYPTR(hh, b->annex->keys, k->key, strlen(k->key), k);
	b->annex->annexed++;
	return 0;
}

int annex_place(struct blobs *b, struct stream_cmd *c, uint32_t mode,
		struct blob_info *bi, const struct rule *rule, struct err *e)
{
	const char *m = rules_rule_option(rule, "mode", NULL);
	const char *be = rules_rule_option(rule, "backend", NULL);
	enum ptr_annex_backend backend =
		be && !strcmp(be, "SHA256") ? PTR_ANNEX_SHA256 : PTR_ANNEX_SHA256E;
	int locked = m && !strcmp(m, "locked");
	char hex[OID_HEX + 1];
	struct pointer_ent *p;
	struct oid id;
	int r;

	if (annex_key_of(b, bi, backend, c->path.ptr, e) < 0)
		return -1;
	r = locked ? ptr_annex_symlink(&b->annex->text, b->annex->buf.ptr,
				       c->path.ptr, c->path.len)
		   : ptr_annex_pointer(&b->annex->text, b->annex->buf.ptr);
	if (r < 0)
		return err_set(e, ERR_IO, "cannot build a git-annex pointer");
	obj_hash_buf(b->hash, OBJ_BLOB, b->annex->text.ptr, b->annex->text.len,
		     &id);
	p = pointers_add(b, &id, POINTER_ANNEX, bi);
	p->mode = mode;
	if (locked)
		mode = TREE_MODE_LINK;
	if (tree_set(b->ts, b->cur->root, c->path.ptr, c->path.len, mode,
		     &id, e) < 0)
		return err_at_input(e);
	if (b->report)
		report_output_blob(b->report, &id, b->annex->text.len,
				   report_est_buf(b->report, b->annex->text.ptr,
						  b->annex->text.len));
	c->mode = mode;
	if (p->written) {
		c->dataref.kind = STREAM_REF_OID;
		buf_set(&c->dataref.name, oid_hex(&id, hex), OID_HEX);
		return stream_write_cmd(b->cbuf, c, e);
	}
	p->written = 1;
	return made_write_text(b, c, &id, b->annex->text.ptr,
			       b->annex->text.len, e);
}

int blobs_annex_keys(const struct blobs *b,
		     int (*fn)(void *ctx, const char *key), void *ctx)
{
	const struct annex_key *k;
	int r = 0;

	for (k = b->annex ? b->annex->keys : NULL; k && r == 0; k = k->hh.next)
		r = fn(ctx, k->key);
	return r;
}

int blobs_has_annex(const struct blobs *b)
{
	return b->annex && b->annex->has_annex;
}

uint64_t blobs_annexed(const struct blobs *b)
{
	return annex_count(b);
}

const char *blobs_annex_store(const struct blobs *b)
{
	return b->annex_store ? ptr_store_dir(b->annex_store) : NULL;
}
