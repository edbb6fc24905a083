/*
 * lfs.c - the rules applied to blobs: LFS pointers, drops, and the root
 * .gitattributes that makes git-lfs treat exactly the converted files as
 * LFS files (docs/DESIGN.md data flow 3, docs/FORMATS.md 7).
 *
 * Blobs come before the commit that names their path, so with rules a
 * blob is held (in memory when small, spooled to a temp file when large)
 * until the commit's change list has been read; each M line is decided
 * when it is read, and the commit's text is buffered so that the blobs it
 * keeps can be written before it. A blob's content can be found again
 * later: while held, from the LFS store once converted, or from the
 * source repository by its id. Nothing is guessed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../pointerize/pointerize.h"
#include "../../rules/rules.h"
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

static void plines_clear(struct blobs *l)
{
	struct path_line *pl, *t;

	HASH_ITER(hh, l->plines, pl, t) {
		HASH_DEL(l->plines, pl);
		free(pl->path);
		free(pl->line);
		free(pl);
	}
	l->attr_root = NULL;
	l->plines_ver++;
}

/* ---- setup ---- */

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
static int build_globs(struct blobs *b, struct blobs *l, struct err *e)
{
	struct buf text = BUF_INIT(RULES_MAX_FILE);
	size_t i;
	int r = 0;

	for (i = 0; i < rules_count(l->rules) && r == 0; i++) {
		const struct rule *rule = rules_get(l->rules, i);
		enum rules_action a = rules_rule_action(rule);
		const char *pat;
		size_t len;

		if (a == RULES_SPLIT)
			l->held_max = HELD_SPLIT_IN_MEMORY;
		if (a == RULES_ANNEX)
			return err_set(e, ERR_USAGE,
				       "%s:%zu: action '%s' is not supported yet",
				       b->opt.rules, rules_rule_line(rule),
				       rules_action_name(a));
		if (a != RULES_LFS)
			continue;
		l->has_lfs = 1;
		if (rules_rule_is_regex(rule) || rules_rule_size(rule, NULL, NULL))
			continue;
		if (rules_rule_attr_line(&l->glob_lines, rule, lfs_attrs, e) < 0) {
			char msg[sizeof(e->msg)];
			memcpy(msg, e->msg, sizeof(msg));
			r = err_set(e, ERR_USAGE, "%s: %s", b->opt.rules, msg);
			break;
		}
		pat = rules_rule_pattern(rule, &len);
		quote_pattern(&text, pat, len);
		buf_adds(&text, " lfs\n");
	}
	if (r == 0)
		r = rules_parse(&l->globs, text.ptr, text.len, "(lfs globs)", e);
	buf_release(&text);
	if (r == 0)
		dedup_lines(&l->glob_lines);
	return r;
}

/* The store: --store, else <git-common-dir>/lfs/objects of the current
 * directory's repository (git lfs's own place). */
static int open_store(struct blobs *b, struct err *e)
{
	struct blobs *l = b;
	char dir[4096];
	FILE *p;
	size_t n;

	if (b->opt.store)
		return ptr_store_open(&l->store, b->opt.store, e);
	p = popen("git rev-parse --path-format=absolute --git-common-dir 2>/dev/null", "r");
	if (!p || !fgets(dir, sizeof(dir) - 16, p)) {
		if (p)
			pclose(p);
		return err_set(e, ERR_USAGE,
			       "the rules convert files to LFS, but there is no "
			       "store: pass --store DIR or run inside the "
			       "repository whose .git/lfs/objects should hold them");
	}
	pclose(p);
	n = strcspn(dir, "\n");
	snprintf(dir + n, sizeof(dir) - n, "/lfs/objects");
	return ptr_store_open(&l->store, dir, e);
}

int blobs_new(struct blobs **out, const struct blob_options *opt,
	      const struct blob_env *env, struct err *e)
{
	struct blobs *b = xcalloc(1, sizeof(*b));

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
	stream_cmd_init(&b->splits_cmd);
	buf_init(&b->glob_lines, BUF_MAX_DEFAULT);
	buf_init(&b->spare, SIZE_MAX);
	buf_init(&b->tmp, BUF_MAX_DEFAULT);
	buf_init(&b->line, SIZE_MAX / 2);
	stream_cmd_init(&b->blobcmd);
	stream_cmd_init(&b->scratch);
	buf_init(&b->base, (size_t)16 << 20);
	b->blobcmd.kind = STREAM_BLOB;
	b->chunk = xmalloc(CHUNK);
	b->held_max = HELD_IN_MEMORY;
	if (rules_load(&b->rules, b->opt.rules, e) < 0)
		return -1;
	if (!b->opt.quiet)
		rules_warn_shadowed(b->rules, stderr);
	if (build_globs(b, b, e) < 0)
		return -1;
	/* a dry run hashes what it would store, and stores nothing */
	if (b->has_lfs && !b->opt.dry_run && open_store(b, e) < 0)
		return -1;
	if (b->store)
		ptr_store_set_batch(b->store, 1);
	return 0;
}

static void held_free(struct held *h)
{
	if (!h)
		return;
	buf_release(&h->mem);
	if (h->spool)
		fclose(h->spool);
	free(h);
}

void blobs_free(struct blobs *b)
{
	struct blobs *l = b;
	struct blob_info *bi, *tmp;

	if (!l)
		return;
	splits_free(b);
	stream_cmd_release(&b->splits_cmd);
	HASH_CLEAR(hh_ptr, l->byptr);
	HASH_ITER(hh, l->byid, bi, tmp) {
		HASH_DELETE(hh, l->byid, bi);
		if (bi->lazy)
			continue; /* owned by the lazy list */
		held_free(bi->held);
		buf_release(&bi->ptr_text);
		free(bi);
	}
	while ((bi = l->lazy)) {
		l->lazy = bi->lazy_next;
		held_free(bi->held);
		buf_release(&bi->ptr_text);
		free(bi);
	}
	buf_release(&l->spare);
	rules_free(l->rules);
	rules_free(l->globs);
	ptr_store_free(l->store);
	stream_writer_free(l->cbuf);
	stream_cmd_release(&l->blobcmd);
	free(l->pending.v);
	free(l->emit.v);
	{
		struct attr_ent *a, *at;
		HASH_ITER(hh, l->attrs, a, at) {
			HASH_DEL(l->attrs, a);
			free(a);
		}
	}
	buf_release(&l->base);
	stream_cmd_release(&l->scratch);
	{
		struct glob_ent *g, *gt;
		HASH_ITER(hh, l->glob_memo, g, gt) {
			HASH_DEL(l->glob_memo, g);
			free(g->path);
			free(g);
		}
	}
	buf_release(&l->glob_lines);
	buf_release(&l->tmp);
	buf_release(&l->line);
	plines_clear(l);
	line_set_clear(&l->base_set);
	free(l->chunk);
	free(l);
	b = NULL;
}

/* ---- blob bookkeeping ---- */

static struct blob_info *blob_get(struct blobs *l, const struct oid *id,
				  uint64_t size)
{
	struct blob_info *bi;

	HASH_FIND(hh, l->byid, id->hash, OID_RAW, bi);
	if (bi)
		return bi;
	bi = xcalloc(1, sizeof(*bi));
	bi->id = *id;
	bi->id_known = 1;
	bi->size = size;
	buf_init(&bi->ptr_text, 4096);
	HASH_ADD(hh, l->byid, id.hash, OID_RAW, bi);
	return bi;
}

/* A blob whose id is not computed yet (see struct blob_info). */
static struct blob_info *blob_new_lazy(struct blobs *l, uint64_t size,
				       const struct oid *orig)
{
	struct blob_info *bi = xcalloc(1, sizeof(*bi));

	bi->size = size;
	bi->orig = *orig;
	bi->has_orig = 1;
	buf_init(&bi->ptr_text, 4096);
	bi->lazy = 1;
	bi->lazy_next = l->lazy;
	l->lazy = bi;
	return bi;
}

static void list_push(struct emit_list *list, struct blob_mark *m,
		      struct blob_info *bi)
{
	if (list->n == list->alloc) {
		list->alloc = list->alloc ? 2 * list->alloc : 16;
		list->v = xrealloc(list->v, list->alloc * sizeof(*list->v));
	}
	list->v[list->n].m = m;
	list->v[list->n].bi = bi;
	list->n++;
}

/* Hashes what h holds, for delimited data whose length came last. */
static int hash_held(struct blobs *b, struct held *h, uint64_t total,
		     struct oid *id, struct err *e)
{
	size_t len;

	obj_hash_begin(b->hash, OBJ_BLOB, total);
	if (!h->spool) {
		obj_hash_update(b->hash, h->mem.ptr, h->mem.len);
	} else {
		rewind(h->spool);
		while ((len = fread(b->chunk, 1, CHUNK, h->spool)) > 0)
			obj_hash_update(b->hash, b->chunk, len);
		if (ferror(h->spool))
			return err_errno(e, ERR_IO, "cannot read a spooled blob");
	}
	obj_hash_final(b->hash, id);
	return 0;
}

/*
 * Reads the pending data of b->cmd into a new held copy: in memory up to
 * HELD_IN_MEMORY, then in an unlinked temp file, so memory does not grow
 * with the blob. Hashed on the way when the length is known up front.
 */
/*
 * Byte-counted data that fits in memory is read straight into its held
 * buffer (no copy through the reader's). Returns 1 when it took the data,
 * 0 when the caller must use the chunked path, -1 on error.
 */
static int hold_in_memory(struct blobs *b, struct held *h, int want_id,
			  struct err *e)
{
	uint64_t len = b->cmd->data_len;
	size_t got;
	int r;

	if (len == UINT64_MAX || len > h->mem.max)
		return 0;
	if (len >= SPARE_MIN && b->spare.cap > len) {
		h->mem.ptr = b->spare.ptr;
		h->mem.cap = b->spare.cap;
		buf_init(&b->spare, SIZE_MAX);
	} else if (len >= SPARE_MIN) {
		/* room for the next, slightly larger version of a split file
		 * (best effort: beyond max, the exact size below) */
		(void)buf_grow(&h->mem, (size_t)len + (size_t)len / 8);
	}
	if (buf_grow(&h->mem, (size_t)len) < 0)
		return 0;
	if (want_id)
		obj_hash_begin(b->hash, OBJ_BLOB, len);
	while (h->mem.len < len &&
	       (r = stream_reader_data_into(b->in, h->mem.ptr + h->mem.len,
					    (size_t)len - h->mem.len, &got, e)) > 0) {
		if (want_id)
			obj_hash_update(b->hash, h->mem.ptr + h->mem.len, got);
		report_est_feed(b->report, h->mem.ptr + h->mem.len, got);
		h->mem.len += got;
	}
	h->mem.ptr[h->mem.len] = '\0';
	/* the end of the data (and its optional LF) */
	if (h->mem.len < len || stream_reader_data_into(b->in, h->mem.ptr, 0, &got, e) != 0)
		return -1;
	return 1;
}

static int hold_data(struct blobs *b, struct held **out, struct oid *id,
		     int want_id, uint64_t *size, struct err *e)
{
	struct held *h = xcalloc(1, sizeof(*h));
	int known = want_id && b->cmd->data_len != UINT64_MAX;
	const char *chunk;
	uint64_t total = 0;
	size_t len;
	int r;

	buf_init(&h->mem, b->held_max);
	report_est_begin(b->report);
	r = hold_in_memory(b, h, want_id, e);
	if (r < 0) {
		held_free(h);
		return -1;
	}
	if (r > 0) {
		total = h->mem.len;
		goto done;
	}
	if (known)
		obj_hash_begin(b->hash, OBJ_BLOB, b->cmd->data_len);
	while ((r = stream_reader_data(b->in, &chunk, &len, e)) > 0) {
		total += len;
		report_est_feed(b->report, chunk, len);
		if (known)
			obj_hash_update(b->hash, chunk, len);
		if (!h->spool && buf_add(&h->mem, chunk, len) == 0)
			continue;
		if (!h->spool) {
			h->spool = tmpfile();
			if (!h->spool || fwrite(h->mem.ptr, 1, h->mem.len, h->spool) != h->mem.len)
				goto io;
			buf_release(&h->mem);
		}
		if (fwrite(chunk, 1, len, h->spool) != len)
			goto io;
	}
	if (r < 0 || (h->spool && fflush(h->spool) != 0)) {
		if (r >= 0)
			goto io;
		held_free(h);
		return -1;
	}
done:
	if (known)
		obj_hash_final(b->hash, id);
	else if (want_id && hash_held(b, h, total, id, e) < 0) {
		held_free(h);
		return -1;
	}
	*size = total;
	*out = h;
	b->data_est = report_est_end(b->report, total);
	if (want_id)
		report_input_blob(b->report, id, total, b->data_est);
	return 0;
io:
	held_free(h);
	return err_errno(e, ERR_IO, "cannot spool a blob to a temp file");
}

int blobs_read(struct blobs *b, struct blob_mark *m, const struct oid *orig,
	       struct err *e)
{
	struct held *h;
	struct blob_info *bi;
	struct oid id = oid_null;
	uint64_t size;
	/* without an original-oid (or for a report, which counts distinct
	 * blobs) the id is needed now */
	int lazy = orig && !b->report;

	if (hold_data(b, &h, &id, !lazy, &size, e) < 0)
		return -1;
	bi = lazy ? blob_new_lazy(b, size, orig) : blob_get(b, &id, size);
	bi->est = b->data_est;
	if (!bi->held && !bi->emitted)
		bi->held = h;
	else
		held_free(h);
	*m->id = lazy ? oid_null : id;
	m->blob = bi;
	m->declared = 0;
	bi->mark = m;
	list_push(&b->pending, m, bi);
	return 0;
}

/* ---- reading a blob's content again ---- */

struct content {
	struct blob_info *bi;
	int kind;		/* 0 memory, 1 spool, 2 fd, 3 odb */
	size_t pos;
	int fd;
	struct odb *db;
};

static int content_open(struct blobs *b, struct blob_info *bi,
			struct content *c, struct err *e)
{
	char hex[OID_HEX + 1];
	enum obj_type type;
	struct oid got;
	uint64_t size;
	int r;

	memset(c, 0, sizeof(*c));
	c->bi = bi;
	c->fd = -1;
	if (bi->held && !bi->held->spool)
		return 0;
	if (bi->held) {
		c->kind = 1;
		rewind(bi->held->spool);
		return 0;
	}
	if (bi->converted && b->store) {
		c->kind = 2;
		return ptr_store_open_object(b->store, &bi->sha256, &c->fd,
					     &size, e);
	}
	c->kind = 3;
	oid_hex(bi->id_known ? &bi->id : &bi->orig, hex);
	c->db = b->src;
	r = odb_open_stream(c->db, hex, &type, &got, &size, e);
	if (r == 0 && b->dst != b->src) {
		c->db = b->dst;
		r = odb_open_stream(c->db, hex, &type, &got, &size, e);
	}
	if (r < 0)
		return -1;
	if (r == 0)
		return err_set(e, ERR_IO,
			       "blob %s is needed again but is neither in the "
			       "stream any more nor in repository %s (see "
			       "--source-repo)", hex, odb_name(b->src));
	return 0;
}

/* Returns bytes read, 0 at the end, -1 on error. */
static ssize_t content_read(struct content *c, char *dst, size_t cap,
			    struct err *e)
{
	struct held *h = c->bi->held;
	size_t n;
	ssize_t r;

	switch (c->kind) {
	case 0:
		n = h->mem.len - c->pos < cap ? h->mem.len - c->pos : cap;
		memcpy(dst, h->mem.ptr + c->pos, n);
		c->pos += n;
		return (ssize_t)n;
	case 1:
		n = fread(dst, 1, cap, h->spool);
		if (n == 0 && ferror(h->spool))
			return err_errno(e, ERR_IO, "cannot read a spooled blob");
		return (ssize_t)n;
	case 2:
		do
			r = read(c->fd, dst, cap);
		while (r < 0 && errno == EINTR);
		if (r < 0)
			return err_errno(e, ERR_IO, "cannot read from the LFS store");
		return r;
	default:
		return odb_stream_read(c->db, dst, cap, e);
	}
}

static void content_close(struct content *c)
{
	if (c->fd >= 0)
		close(c->fd);
}

/* Computes bi's id if it is not known yet (struct blob_info). */
static int ensure_id(struct blobs *b, struct blob_info *bi, struct err *e)
{
	struct content c;
	ssize_t n;

	if (bi->id_known)
		return 0;
	if (content_open(b, bi, &c, e) < 0)
		return -1;
	obj_hash_begin(b->hash, OBJ_BLOB, bi->size);
	while ((n = content_read(&c, b->chunk, CHUNK, e)) > 0)
		obj_hash_update(b->hash, b->chunk, (size_t)n);
	content_close(&c);
	if (n < 0)
		return -1;
	obj_hash_final(b->hash, &bi->id);
	bi->id_known = 1;
	HASH_ADD(hh, b->byid, id.hash, OID_RAW, bi);
	if (bi->mark)
		*bi->mark->id = bi->id;
	return 0;
}

/* Writes a blob command with the content of bi (and mark, if any). */
static int emit_blob(struct blobs *b, struct blob_info *bi, uint64_t mark,
		     struct err *e)
{
	struct blobs *l = b;
	struct content c;
	uint64_t total = 0;
	ssize_t n;

	l->blobcmd.mark = mark;
	if (ensure_id(b, bi, e) < 0 || content_open(b, bi, &c, e) < 0)
		return -1;
	if (stream_write_data_begin(b->out, &l->blobcmd, bi->size, e) < 0)
		goto fail;
	while ((n = content_read(&c, l->chunk, CHUNK, e)) > 0) {
		total += (uint64_t)n;
		if (stream_write_bytes(b->out, l->chunk, (size_t)n, e) < 0)
			goto fail;
	}
	if (n < 0)
		goto fail;
	if (total != bi->size) {
		err_set(e, ERR_IO, "blob %s changed size while read again",
			oid_hex(&bi->id, (char[OID_HEX + 1]){ 0 }));
		goto fail;
	}
	content_close(&c);
	bi->emitted = 1;
	return stream_write_data_end(b->out, e);
fail:
	content_close(&c);
	return -1;
}

int blob_view(struct blobs *b, struct blob_info *bi, struct buf *scratch,
	      const char **ptr, size_t *len, struct err *e)
{
	/* held in memory: no copy (a split reads every version whole) */
	if (bi->held && !bi->held->spool) {
		*ptr = bi->held->mem.ptr;
		*len = bi->held->mem.len;
		return 0;
	}
	if (blob_read_all(b, bi, scratch, e) < 0)
		return -1;
	*ptr = scratch->ptr;
	*len = scratch->len;
	return 0;
}

struct buf *blob_memory(struct blobs *b, struct blob_info *bi)
{
	char hex[OID_HEX + 1];
	struct err ignored = ERR_INIT;
	enum obj_type type;
	struct oid got;
	uint64_t size;

	if (!bi->held || bi->held->spool || !bi->has_orig)
		return NULL;
	/* not there (or no repository): keep the copy, no error */
	if (odb_info(b->src, oid_hex(&bi->orig, hex), &type, &got, &size,
		     &ignored) <= 0 || type != OBJ_BLOB || size != bi->size)
		return NULL;
	return &bi->held->mem;
}

void blob_forget_copy(struct blobs *b, struct blob_info *bi)
{
	struct buf *spare = &b->spare;

	if (bi->held->mem.cap > spare->cap) {
		buf_release(spare);
		*spare = bi->held->mem;
		spare->len = 0;
		spare->max = SIZE_MAX;
		buf_init(&bi->held->mem, 0);
	}
	held_free(bi->held);
	bi->held = NULL;
}

int blob_read_all(struct blobs *b, struct blob_info *bi, struct buf *out,
		  struct err *e)
{
	struct content c;
	char end;
	ssize_t n = 0;

	buf_reset(out);
	if (buf_grow(out, bi->size) < 0)
		return err_set(e, ERR_IO, "blob %s too large to read whole",
			       oid_hex(&bi->id, (char[OID_HEX + 1]){ 0 }));
	if (bi->held && !bi->held->spool)
		return buf_add(out, bi->held->mem.ptr, bi->held->mem.len);
	if (content_open(b, bi, &c, e) < 0)
		return -1;
	while (out->len < bi->size &&
	       (n = content_read(&c, out->ptr + out->len, bi->size - out->len, e)) > 0)
		out->len += (size_t)n;
	if (n >= 0) /* to the end: the object reader eats its final LF there */
		n = content_read(&c, &end, 0, e);
	content_close(&c);
	out->ptr[out->len] = '\0';
	return n < 0 ? -1 : 0;
}

const struct oid *blob_id(const struct blob_info *bi)
{
	return &bi->id;
}

/* ---- decisions ---- */

/* 1 when the blob's content already is an LFS pointer (never convert it
 * again: a second run changes nothing). */
static int is_pointer(struct blobs *b, struct blob_info *bi, struct err *e)
{
	struct content c;
	size_t got = 0;
	ssize_t n;

	if (bi->pointer_state)
		return bi->pointer_state == 1;
	bi->pointer_state = 2;
	if (bi->size >= PTR_LFS_POINTER_MAX || bi->size == 0)
		return 0;
	if (content_open(b, bi, &c, e) < 0)
		return -1;
	while ((n = content_read(&c, b->chunk + got, CHUNK - got, e)) > 0)
		got += (size_t)n;
	content_close(&c);
	if (n < 0)
		return -1;
	if (ptr_is_lfs_pointer(b->chunk, got))
		bi->pointer_state = 1;
	return bi->pointer_state == 1;
}

/* Puts bi's content into the store and computes its pointer (once). */
static int convert(struct blobs *b, struct blob_info *bi, struct err *e)
{
	struct blobs *l = b;
	struct ptr_put *put;
	struct content c;
	uint64_t size;
	ssize_t n;

	if (bi->converted)
		return 0;
	if (content_open(b, bi, &c, e) < 0)
		return -1;
	if (ptr_put_begin(l->store, &put, e) < 0) {
		content_close(&c);
		return -1;
	}
	while ((n = content_read(&c, l->chunk, CHUNK, e)) > 0)
		if (ptr_put_write(put, l->chunk, (size_t)n, e) < 0)
			break;
	content_close(&c);
	if (n != 0) {
		ptr_put_abort(put);
		return -1;
	}
	if (ptr_put_finish(put, &bi->sha256, &size, e) < 0)
		return -1;
	if (size != bi->size)
		return err_set(e, ERR_IO, "blob %s: read %llu bytes, expected %llu",
			       oid_hex(&bi->id, (char[OID_HEX + 1]){ 0 }),
			       (unsigned long long)size,
			       (unsigned long long)bi->size);
	if (ptr_lfs_pointer(&bi->ptr_text, &bi->sha256, bi->size) < 0)
		return err_set(e, ERR_IO, "cannot build an LFS pointer");
	obj_hash_buf(b->hash, OBJ_BLOB, bi->ptr_text.ptr, bi->ptr_text.len,
		     &bi->ptr_id);
	bi->converted = 1;
	b->converted++;
	HASH_ADD(hh_ptr, l->byptr, ptr_id.hash, OID_RAW, bi);
	return 0;
}

/* Files git-lfs (and git) must always see as they are. */
static int is_protected(const char *path, size_t len)
{
	static const char *const names[] = { ".gitattributes", ".gitignore",
					     ".gitmodules", ".lfsconfig" };
	const char *base = memrchr(path, '/', len);
	size_t i, blen;

	base = base ? base + 1 : path;
	blen = len - (size_t)(base - path);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == blen && !memcmp(base, names[i], blen))
			return 1;
	return 0;
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
		if (hold_data(b, &h, &id, 1, &size, e) < 0)
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

/* ---- placing a blob at a path ---- */

static int is_notes(const struct blobs *b)
{
	return !strncmp(b->cur->branch_name, "refs/notes/", 11);
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

uint64_t blobs_split_failures(const struct blobs *b)
{
	return b->split_failures;
}

/* M with the original content: queued to be written before the commit. */
static int place_keep(struct blobs *b, struct stream_cmd *c, uint32_t mode,
		      struct blob_mark *m, struct blob_info *bi, struct err *e)
{
	char hex[OID_HEX + 1];

	if (bi && ensure_id(b, bi, e) < 0)
		return -1;
	if (bi && ((m && !m->declared) || (!m && !bi->emitted)))
		list_push(&b->emit, m, bi);
	if (bi && !m) {
		/* name the content by id: it is written (or in the target) */
		c->dataref.kind = STREAM_REF_OID;
		buf_set(&c->dataref.name, oid_hex(&bi->id, hex), OID_HEX);
	}
	if (bi && tree_set(b->ts, b->cur->root, c->path.ptr, c->path.len, mode,
			   &bi->id, e) < 0)
		return err_at_input(e);
	if (bi)
		report_output_blob(b->report, &bi->id, bi->size, bi->est);
	return stream_write_cmd(b->cbuf, c, e);
}

/* M with the LFS pointer: inline the first time, by id after that. */
static int place_pointer(struct blobs *b, struct stream_cmd *c, uint32_t mode,
			 struct blob_info *bi, struct err *e)
{
	char hex[OID_HEX + 1];

	if (convert(b, bi, e) < 0)
		return -1;
	if (tree_set(b->ts, b->cur->root, c->path.ptr, c->path.len, mode,
		     &bi->ptr_id, e) < 0)
		return err_at_input(e);
	if (b->report)
		report_output_blob(b->report, &bi->ptr_id, bi->ptr_text.len,
				   report_est_buf(b->report, bi->ptr_text.ptr, bi->ptr_text.len));
	c->mode = mode;
	if (bi->ptr_written) {
		c->dataref.kind = STREAM_REF_OID;
		buf_set(&c->dataref.name, oid_hex(&bi->ptr_id, hex), OID_HEX);
		return stream_write_cmd(b->cbuf, c, e);
	}
	c->dataref.kind = STREAM_REF_INLINE;
	bi->ptr_written = 1;
	if (stream_write_data_begin(b->cbuf, c, bi->ptr_text.len, e) < 0 ||
	    stream_write_bytes(b->cbuf, bi->ptr_text.ptr, bi->ptr_text.len, e) < 0)
		return -1;
	return stream_write_data_end(b->cbuf, e);
}

static int place_drop(struct blobs *b, struct stream_cmd *c, struct err *e)
{
	int r = tree_remove(b->ts, b->cur->root, c->path.ptr, c->path.len, e);

	if (r <= 0)
		return r < 0 ? err_at_input(e) : 0;
	c->kind = STREAM_DELETE;
	return stream_write_cmd(b->cbuf, c, e);
}

/* The rule for a file: NULL (keep) for what must never change. */
static int decide(struct blobs *b, const struct stream_cmd *c, uint32_t mode,
		  struct blob_info *bi, const struct rule **rule, struct err *e)
{
	*rule = NULL;
	if (!bi || is_notes(b) || (mode != TREE_MODE_FILE && mode != TREE_MODE_EXEC) ||
	    is_protected(c->path.ptr, c->path.len))
		return 0;
	if (rules_match(rule, b->rules, c->path.ptr, c->path.len, bi->size, e) < 0)
		return -1;
	return 0;
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

/* Places one file (c is an M line) by the rules. */
static int place(struct blobs *b, struct stream_cmd *c, struct blob_mark *m,
		 struct blob_info *bi, struct err *e)
{
	uint32_t mode = tree_mode_normalize(c->mode);
	const struct rule *rule;
	int p;

	if (m)
		m->consumed = 1;
	if (splits_check_path(b, cmd_name(b), c->path.ptr, c->path.len, e) < 0)
		return -1;
	if (decide(b, c, mode, bi, &rule, e) < 0)
		return -1;
	if (b->report && bi) {
		report_path(b->report, c->path.ptr, c->path.len, &bi->id, bi->size);
		if (rule)
			report_rule(b->report, rule_index(b->rules, rule), c->path.ptr,
				    c->path.len, &bi->id, bi->size, bi->est);
	}
	if (rule && rules_rule_action(rule) == RULES_DROP)
		return place_drop(b, c, e);
	if (rule && rules_rule_action(rule) == RULES_SPLIT)
		return splits_place(b, c, bi, rule, e);
	if (!rule || rules_rule_action(rule) != RULES_LFS || bi->size == 0)
		return place_keep(b, c, mode, m, bi, e);
	p = is_pointer(b, bi, e);
	if (p < 0)
		return -1;
	if (p)
		return place_keep(b, c, mode, m, bi, e);
	return place_pointer(b, c, mode, bi, e);
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

	if (!is_notes(b) && rules_match_unsized(&rule, b->rules, c->path.ptr,
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

/* ---- C and R, re-decided file by file ---- */

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

/* The blob behind a tree entry: its original content, even when the
 * entry holds our pointer. */
int blob_for_entry(struct blobs *b, const struct oid *id,
			  struct blob_info **out, struct err *e)
{
	struct blobs *l = b;
	char hex[OID_HEX + 1];
	enum obj_type type;
	struct oid got;
	uint64_t size;
	int r;

	HASH_FIND(hh_ptr, l->byptr, id->hash, OID_RAW, *out);
	if (*out)
		return 0;
	HASH_FIND(hh, l->byid, id->hash, OID_RAW, *out);
	if (*out)
		return 0;
	oid_hex(id, hex);
	r = odb_info(b->dst, hex, &type, &got, &size, e);
	if (r == 0 && b->dst != b->src)
		r = odb_info(b->src, hex, &type, &got, &size, e);
	if (r < 0)
		return -1;
	if (r == 0)
		return err_set(e, ERR_IO, "blob %s is not in repository %s "
			       "(see --source-repo)", hex, odb_name(b->src));
	*out = blob_get(l, id, size);
	(*out)->emitted = 1;
	return 0;
}

static int copy_items(struct blobs *b, struct copy_list *list,
		      const struct buf *dst, struct err *e)
{
	struct stream_cmd *c = &b->scratch;
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
		else if (blob_for_entry(b, &it->id, &bi, e) < 0)
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

/* ---- the commit: .gitattributes, blobs first, then its text ---- */

struct stream_writer *blobs_commit_begin(struct blobs *b,
					 const struct blob_commit *c)
{
	b->cur = c;
	b->cbuf = stream_writer_new_mem();
	return b->cbuf;
}

/* 1 when git-lfs should see the file at path as an LFS file. */
static int wants_lfs(struct blobs *b, const char *path, size_t len,
		     uint32_t mode, const struct oid *id, struct err *e)
{
	struct blob_info *bi;
	const struct rule *rule;

	if ((mode != TREE_MODE_FILE && mode != TREE_MODE_EXEC) ||
	    is_protected(path, len))
		return 0;
	HASH_FIND(hh_ptr, b->byptr, id->hash, OID_RAW, bi);
	if (bi)
		return 1;
	if (blob_for_entry(b, id, &bi, e) < 0)
		return -1;
	if (bi->size == 0) {
		/* an empty file is its own pointer: LFS where a rule says so */
		if (rules_match(&rule, b->rules, path, len, 0, e) < 0)
			return -1;
		return rule && rules_rule_action(rule) == RULES_LFS &&
		       !is_protected(path, len);
	}
	return is_pointer(b, bi, e);
}

static int glob_covers(struct blobs *l, const char *path, size_t len,
		       struct err *e)
{
	struct glob_ent *g;
	const struct rule *rule;

	HASH_FIND(hh, l->glob_memo, path, len, g);
	if (g)
		return g->covered;
	if (rules_match(&rule, l->globs, path, len, 0, e) < 0)
		return -1;
	g = xcalloc(1, sizeof(*g));
	g->path = xmemdup(path, len);
	g->covered = rule != NULL;
	HASH_ADD_KEYPTR(hh, l->glob_memo, g->path, len, g);
	return g->covered;
}

/* tree_diff's callback: path changed; its line (if any) follows. */
static int attr_change(void *ctx, const char *path, size_t len,
		       uint32_t old_mode, const struct oid *old_id,
		       uint32_t mode, const struct oid *id)
{
	struct blobs *b = ctx;
	struct blobs *l = b;
	struct err *e = &l->walk_err;
	struct path_line *pl;
	int want, glob;

	(void)old_mode;
	(void)old_id;
	HASH_FIND(hh, l->plines, path, len, pl);
	if (pl) {
		HASH_DEL(l->plines, pl);
		free(pl->path);
		free(pl->line);
		free(pl);
		l->plines_ver++;
	}
	if (!mode)
		return 0;
	want = wants_lfs(b, path, len, mode, id, e);
	glob = want < 0 ? -1 : glob_covers(l, path, len, e);
	if (want < 0 || glob < 0)
		return -1;
	if (!want == !glob)
		return 0;
	buf_reset(&l->line);
	if (rules_attr_path_line(&l->line, path, len, want ? lfs_attrs : lfs_unset,
				 e) < 0)
		return -1;
	pl = xcalloc(1, sizeof(*pl));
	pl->path = xmemdup(path, len);
	pl->len = len;
	pl->line_len = l->line.len;
	pl->line = buf_detach(&l->line, NULL);
	pl->unset = !want;
	HASH_ADD_KEYPTR(hh, l->plines, pl->path, len, pl);
	l->plines_ver++;
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
static void add_unless_in_base(struct blobs *l, int has_base, const char *p,
			       size_t n)
{
	struct line_ent *x = NULL;

	if (has_base)
		HASH_FIND(hh, l->base_set, p, n, x);
	if (!x)
		buf_add(&l->tmp, p, n);
}

/*
 * git ignores a .gitattributes of this size or more (attr.c
 * ATTR_MAX_FILE_SIZE, git 2.39.1 and later).
 */
#define ATTR_FILE_MAX ((size_t)100 << 20)

/* Builds l->tmp: the base (if any), then every line of ours it lacks. */
static int attr_text(struct blobs *b, int has_base, struct err *e)
{
	struct blobs *l = b;
	struct path_line **v, *pl, *t;
	const char *p, *end;
	size_t n = 0, i;

	buf_reset(&l->tmp);
	if (has_base) {
		buf_add(&l->tmp, l->base.ptr, l->base.len);
		if (l->tmp.len && l->tmp.ptr[l->tmp.len - 1] != '\n')
			buf_addch(&l->tmp, '\n');
	}
	for (p = l->glob_lines.ptr, end = p + l->glob_lines.len; p < end; p += n) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		n = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
		add_unless_in_base(l, has_base, p, n);
	}
	v = xmalloc((HASH_COUNT(l->plines) + 1) * sizeof(*v));
	n = 0;
	HASH_ITER(hh, l->plines, pl, t)
		v[n++] = pl;
	qsort(v, n, sizeof(*v), pline_cmp);
	for (i = 0; i < n; i++)
		add_unless_in_base(l, has_base, v[i]->line, v[i]->line_len);
	free(v);
	if (l->tmp.len >= ATTR_FILE_MAX)
		return err_set(e, ERR_USAGE, "the root .gitattributes would be "
			       "%zu bytes (%zu lines for single paths): git "
			       "ignores one of 100 MiB or more; convert these "
			       "files by glob rules", l->tmp.len, n);
	return 0;
}

/* The user's own .gitattributes under the one in the tree (ours or
 * theirs), read into l->base. 0 none, 1 found, -1 error. */
static int attr_base(struct blobs *b, const struct oid *in_tree, struct oid *base,
		     struct err *e)
{
	struct blobs *l = b;
	struct attr_ent *a;
	struct blob_info *bi;
	struct content c;
	ssize_t n;

	HASH_FIND(hh, l->attrs, in_tree->hash, OID_RAW, a);
	if (a && !a->has_base)
		return 0;
	*base = a ? a->base : *in_tree;
	if (l->has_base_cache && oid_eq(&l->base_id, base))
		return 1;
	if (blob_for_entry(b, base, &bi, e) < 0 || content_open(b, bi, &c, e) < 0)
		return -1;
	line_set_clear(&l->base_set);
	l->has_base_cache = 0;
	buf_reset(&l->base);
	while ((n = content_read(&c, l->chunk, CHUNK, e)) > 0)
		if (buf_add(&l->base, l->chunk, (size_t)n) < 0) {
			n = err_set(e, ERR_IO, ".gitattributes larger than 16 MiB");
			break;
		}
	content_close(&c);
	if (n < 0)
		return -1;
	l->base_id = *base;
	l->has_base_cache = 1;
	{
		const char *p = l->base.ptr, *end = p + l->base.len;
		size_t len;

		for (; p < end; p += len) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			len = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
			line_set_add(&l->base_set, p, len);
		}
	}
	return 1;
}

static int attrs_write(struct blobs *b, struct err *e)
{
	struct blobs *l = b;
	struct stream_cmd *c = &l->scratch;
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
	if (!l->text_valid || l->text_ver != l->plines_ver ||
	    l->text_has_base != has_base ||
	    (has_base && !oid_eq(&l->text_base, &base_id))) {
		l->text_valid = 0;
		if (attr_text(b, has_base, e) < 0)
			return -1;
		obj_hash_buf(b->hash, OBJ_BLOB, l->tmp.ptr, l->tmp.len,
			     &l->text_id);
		l->text_valid = 1;
		l->text_ver = l->plines_ver;
		l->text_has_base = has_base;
		l->text_base = base_id;
	}
	if (!found && l->tmp.len == 0)
		return 0;
	want_id = l->text_id;
	if (found && oid_eq(&in_tree, &want_id))
		return 0;
	HASH_FIND(hh, l->attrs, want_id.hash, OID_RAW, a);
	if (!a && !(has_base && oid_eq(&want_id, &base_id))) {
		a = xcalloc(1, sizeof(*a));
		a->ours = want_id;
		a->base = base_id;
		a->has_base = has_base;
		HASH_ADD(hh, l->attrs, ours.hash, OID_RAW, a);
	}
	if (tree_set(b->ts, b->cur->root, ".gitattributes", 14, mode, &want_id, e) < 0)
		return -1;
	if (b->report)
		report_output_blob(b->report, &want_id, l->tmp.len,
				   report_est_buf(b->report, l->tmp.ptr, l->tmp.len));
	c->kind = STREAM_MODIFY;
	c->mode = mode;
	c->dataref.kind = STREAM_REF_INLINE;
	buf_set(&c->path, ".gitattributes", 14);
	if (stream_write_data_begin(b->cbuf, c, l->tmp.len, e) < 0 ||
	    stream_write_bytes(b->cbuf, l->tmp.ptr, l->tmp.len, e) < 0)
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
	struct blobs *l = b;
	int r;

	l->walk_err.kind = ERR_NONE;
	if (tree_diff(b->ts, l->attr_root, *b->cur->root, attr_change, b, e) != 0) {
		if (l->walk_err.kind)
			*e = l->walk_err;
		plines_clear(l);	/* half updated: start again next time */
		return e->kind == ERR_IO ? BLOB_IDS_LOST : -1;
	}
	r = attrs_write(b, e);
	/* the commit's tree is frozen once written: a safe reference */
	l->attr_root = r == 0 ? *b->cur->root : NULL;
	if (r < 0)
		plines_clear(l);
	return r;
}

/* Writes the blobs read since the last commit that no commit decided
 * on (a tag or a later commit may name them), and lets go of the rest. */
int blobs_flush(struct blobs *b, struct err *e)
{
	size_t i;
	int r = 0;

	for (i = 0; i < b->pending.n && r == 0; i++) {
		struct emit_ent *p = &b->pending.v[i];
		if (!p->m->consumed)
			r = declare(b, p->m, p->bi, e);
	}
	for (i = 0; i < b->pending.n; i++) {
		held_free(b->pending.v[i].bi->held);
		b->pending.v[i].bi->held = NULL;
	}
	b->pending.n = 0;
	return r;
}

int blobs_finish(struct blobs *b, struct err *e)
{
	return b->store ? ptr_store_sync(b->store, e) : 0;
}

int blobs_commit_attrs(struct blobs *b, struct err *e)
{
	if (!b->has_lfs || is_notes(b))
		return 0;
	return attrs_update(b, e);
}

int blobs_commit_end(struct blobs *b, struct err *e)
{
	const struct buf *text;
	size_t i;
	int r = 0;

	for (i = 0; i < b->emit.n && r == 0; i++)
		r = declare(b, b->emit.v[i].m, b->emit.v[i].bi, e);
	b->emit.n = 0;
	if (r == 0)
		r = blobs_flush(b, e);
	if (r == 0 && (r = stream_writer_flush(b->cbuf, e)) == 0) {
		text = stream_writer_mem(b->cbuf);
		r = stream_write_raw(b->out, text->ptr, text->len, e);
	}
	stream_writer_free(b->cbuf);
	b->cbuf = NULL;
	return r;
}
