/*
 * held.c - blobs on their way: read from the stream and held (in memory
 * when small, spooled to an unlinked temp file when large, so memory does
 * not grow with the blob) until a commit decides their fate, and read
 * again later from wherever they are: the held copy, the LFS store once
 * converted, or the source (then target) repository by id. Nothing is
 * guessed: a blob that is nowhere is an error naming it.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "way.h"

void held_free(struct held *h)
{
	if (!h)
		return;
	buf_release(&h->mem);
	if (h->spool)
		fclose(h->spool);
	free(h);
}

/* Whether a content let go of could be needed with nowhere to read it
 * from: the source is not a repository (a full-data stream piped in from
 * elsewhere). Asked once. */
static int aside_wanted(struct blobs *b)
{
	return !odb_is_repository(b->src);
}

/* Copies what h holds (or, h NULL, the n bytes at p) to the end of the
 * aside file. */
static int aside_put(struct blobs *b, struct blob_info *bi, const struct held *h,
		     const char *p, size_t n, struct err *e)
{
	if (!b->aside && !(b->aside = tmpfile()))
		return err_errno(e, ERR_IO, "cannot make a temp file for the "
				 "contents a later commit may name again");
	if (fseeko(b->aside, 0, SEEK_END) != 0)
		goto io;
	bi->aside_off = b->aside_len;
	if (!h || !h->spool) {
		if (h) {
			p = h->mem.ptr;
			n = h->mem.len;
		}
		if (fwrite(p, 1, n, b->aside) != n)
			goto io;
	} else {
		rewind(h->spool);
		while ((n = fread(b->chunk, 1, CHUNK, h->spool)) > 0)
			if (fwrite(b->chunk, 1, n, b->aside) != n)
				goto io;
		if (ferror(h->spool))
			goto io;
	}
	if (fflush(b->aside) != 0)
		goto io;
	b->aside_len += bi->size;
	bi->aside = 1;
	return 0;
io:
	return err_errno(e, ERR_IO, "cannot write the contents a later commit "
			 "may name again to a temp file");
}

/* 1 when the source repository has bi: content_open reads it there. */
static int in_source(struct blobs *b, const struct blob_info *bi)
{
	struct err ignored = ERR_INIT;
	char hex[OID_HEX + 1];
	enum obj_type type;
	struct oid got;
	uint64_t size;

	oid_hex(bi->id_known ? &bi->id : &bi->orig, hex);
	return odb_info(b->src, hex, &type, &got, &size, &ignored) == 1;
}

/*
 * Lets go of what bi holds. A later commit may still need its content
 * (its mark named again at a path a rule converts, the same content
 * defined again, a file checked for being a pointer), so it goes aside
 * unless content_open can read it again: from a store, or from the
 * source repository when that has it. Written to fast-import is not
 * enough: its pack has no name until the stream ends.
 */
int held_let_go(struct blobs *b, struct blob_info *bi, struct err *e)
{
	int stored = bi->aside || (bi->converted && b->store) ||
		     (bi->annex_key && b->annex_store) || bi->lfs_path;
	int rc = 0;

	if (bi->held && !stored && (aside_wanted(b) || !in_source(b, bi)))
		rc = aside_put(b, bi, bi->held, NULL, 0, e);
	held_free(bi->held);
	bi->held = NULL;
	return rc;
}

void aside_free(struct blobs *b)
{
	if (b->aside)
		fclose(b->aside);
	b->aside = NULL;
}

struct blob_info *blob_get(struct blobs *b, const struct oid *id,
				  uint64_t size)
{
	struct blob_info *bi;

	HASH_FIND(hh, b->byid, id->hash, OID_RAW, bi);
	if (bi)
		return bi;
	bi = xcalloc(1, sizeof(*bi));
	bi->id = *id;
	bi->id_known = 1;
	bi->size = size;
	buf_init(&bi->ptr_text, 4096);
	HASH_ADD(hh, b->byid, id.hash, OID_RAW, bi);
	return bi;
}

/* A blob whose id is not computed yet (see struct blob_info). */
static struct blob_info *blob_new_lazy(struct blobs *b, uint64_t size,
				       const struct oid *orig)
{
	struct blob_info *bi = xcalloc(1, sizeof(*bi));

	bi->size = size;
	bi->orig = *orig;
	bi->has_orig = 1;
	buf_init(&bi->ptr_text, 4096);
	bi->lazy = 1;
	bi->lazy_next = b->lazy;
	b->lazy = bi;
	return bi;
}

void list_push(struct emit_list *list, struct blob_mark *m,
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

int hold_data(struct blobs *b, struct held **out, struct oid *id,
		     int want_id, const struct oid *orig, uint64_t *size,
		     struct err *e)
{
	struct held *h = xcalloc(1, sizeof(*h));
	int known = want_id && b->cmd->data_len != UINT64_MAX;
	const char *chunk;
	uint64_t total = 0;
	size_t len;
	int r;

	buf_init(&h->mem, b->held_max);
	/* a blob the source has counts with its size there: no zlib pass */
	report_est_begin(b->report, orig);
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

struct blob_info *blob_made(struct blobs *b, const char *p, size_t n,
			     uint64_t est, struct err *e)
{
	struct blob_info *bi;
	struct held *h;
	struct oid id;

	obj_hash_buf(b->hash, OBJ_BLOB, p, n, &id);
	bi = blob_get(b, &id, n);
	if (bi->held || bi->emitted || bi->aside)
		return bi;
	/* made.c's writer takes it from memory; else a large one goes to
	 * the one aside file (a file of its own each, a history's versions
	 * would hold a descriptor each until the end) */
	if (n <= HELD_IN_MEMORY || made_wants(b, n)) {
		h = xcalloc(1, sizeof(*h));
		buf_init(&h->mem, SIZE_MAX);
		buf_add(&h->mem, p, n);
		bi->held = h;
	} else if (!bi->aside && aside_put(b, bi, NULL, p, n, e) < 0) {
		return NULL;
	}
	/* made.c's packs count as written (blobs_sync), not estimated: a
	 * delta is a fraction of what the blob deflates to */
	bi->est = made_wants(b, n) ? 0 : est;
	return bi;
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

	if (hold_data(b, &h, &id, !lazy, orig, &size, e) < 0)
		return -1;
	bi = lazy ? blob_new_lazy(b, size, orig) : blob_get(b, &id, size);
	bi->est = b->data_est;
	/* even when the content went out already: this mark has not */
	if (!bi->held)
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


int content_open(struct blobs *b, struct blob_info *bi,
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
	if (bi->annex_key && b->annex_store) {
		c->kind = 2;
		return ptr_store_open_key(b->annex_store, bi->annex_key, &c->fd,
					  &size, e);
	}
	if (bi->aside) {
		c->kind = 4;
		c->aside = b->aside;
		c->off = bi->aside_off;
		c->left = bi->size;
		return 0;
	}
	if (bi->lfs_path) {	/* unlfs.c checked it is the content */
		c->kind = 2;
		c->fd = open(bi->lfs_path, O_RDONLY | O_CLOEXEC);
		if (c->fd < 0)
			return err_errno(e, ERR_IO, "cannot open %s", bi->lfs_path);
		return 0;
	}
	assert(blob_from_repository(b, bi));
	/* stored by made.c's writer: its pack must have its name first */
	if (bi->id_known && made_pending(b, &bi->id) && made_settle(b, e) < 0)
		return -1;
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

int content_put(struct blobs *b, struct blob_info *bi, struct ptr_store *s,
		struct ptr_put **out, struct err *e)
{
	struct ptr_put *put;
	struct content c;
	ssize_t n;

	if (content_open(b, bi, &c, e) < 0)
		return -1;
	if (ptr_put_begin(s, &put, e) < 0) {
		content_close(&c);
		return -1;
	}
	while ((n = content_read(&c, b->chunk, CHUNK, e)) > 0)
		if (ptr_put_write(put, b->chunk, (size_t)n, e) < 0)
			break;
	content_close(&c);
	if (n != 0) {
		ptr_put_abort(put);
		return -1;
	}
	*out = put;
	return 0;
}

int content_size_check(const struct blob_info *bi, uint64_t size,
		       struct err *e)
{
	char hex[OID_HEX + 1];

	if (size == bi->size)
		return 0;
	return err_set(e, ERR_IO, "blob %s: read %llu bytes, expected %llu",
		       oid_hex(&bi->id, hex), (unsigned long long)size,
		       (unsigned long long)bi->size);
}

/* Returns bytes read, 0 at the end, -1 on error. */
ssize_t content_read(struct content *c, char *dst, size_t cap,
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
	case 4:
		n = c->left < cap ? (size_t)c->left : cap;
		if (n && (fseeko(c->aside, (off_t)c->off, SEEK_SET) != 0 ||
			  fread(dst, 1, n, c->aside) != n))
			return err_errno(e, ERR_IO, "cannot read a content set aside");
		c->off += n;
		c->left -= n;
		return (ssize_t)n;
	default:
		return odb_stream_read(c->db, dst, cap, e);
	}
}

void content_close(struct content *c)
{
	if (c->fd >= 0)
		close(c->fd);
}

/* Computes bi's id if it is not known yet (struct blob_info). */
int ensure_id(struct blobs *b, struct blob_info *bi, struct err *e)
{
	struct blob_info *known;
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
	/* a lazy blob of content already known stays out of the table (one
	 * entry per id): lookups find the other */
	HASH_FIND(hh, b->byid, bi->id.hash, OID_RAW, known);
	if (!known)
		HASH_ADD(hh, b->byid, id.hash, OID_RAW, bi);
	if (bi->mark)
		*bi->mark->id = bi->id;
	return 0;
}

/* Writes a blob command with the content of bi (and mark, if any). */
int emit_blob(struct blobs *b, struct blob_info *bi, uint64_t mark,
		     struct err *e)
{
	struct content c;
	uint64_t total = 0;
	ssize_t n;

	b->blobcmd.mark = mark;
	if (ensure_id(b, bi, e) < 0 || content_open(b, bi, &c, e) < 0)
		return -1;
	if (stream_write_data_begin(b->out, &b->blobcmd, bi->size, e) < 0)
		goto fail;
	while ((n = content_read(&c, b->chunk, CHUNK, e)) > 0) {
		total += (uint64_t)n;
		if (stream_write_bytes(b->out, b->chunk, (size_t)n, e) < 0)
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
	/* read ahead by the pool (the same bytes: the reader checked their
	 * id); not when content_open would first end made.c's segment */
	if (bi->id_known && bi->size <= out->max &&
	    blob_from_repository(b, bi) && !made_pending(b, &bi->id) &&
	    pool_take_read(b, &bi->id, bi->size, out))
		return 0;
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

/* The blob behind a tree entry: its original content, even when the
 * entry holds our pointer. */
int blob_for_entry(struct blobs *b, const struct oid *id,
			  struct blob_info **out, struct err *e)
{
	struct pointer_ent *p;
	char hex[OID_HEX + 1];
	enum obj_type type;
	struct oid got;
	uint64_t size;
	int r;

	p = pointers_find(b, id);
	if (p) {
		*out = p->bi;
		return 0;
	}
	HASH_FIND(hh, b->byid, id->hash, OID_RAW, *out);
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
	*out = blob_get(b, id, size);
	(*out)->emitted = 1;
	return 0;
}

struct pointer_ent *pointers_find(struct blobs *b, const struct oid *id)
{
	struct pointer_ent *p;

	HASH_FIND(hh, b->pointers, id->hash, OID_RAW, p);
	return p;
}

struct pointer_ent *pointers_add(struct blobs *b, const struct oid *id,
				 enum pointer_kind kind, struct blob_info *bi)
{
	struct pointer_ent *p = pointers_find(b, id);

	if (p)
		return p;
	p = xcalloc(1, sizeof(*p));
	p->id = *id;
	p->kind = kind;
	p->bi = bi;
	HASH_ADD(hh, b->pointers, id.hash, OID_RAW, p);
	return p;
}

void pointers_free(struct blobs *b)
{
	struct pointer_ent *p, *tmp;

	HASH_ITER(hh, b->pointers, p, tmp) {
		HASH_DELETE(hh, b->pointers, p);
		free(p);
	}
}

/* 1 when the blob's content already is an LFS or git-annex pointer (never convert it
 * again: a second run changes nothing). */
int is_pointer(struct blobs *b, struct blob_info *bi, struct err *e)
{
	struct content c;
	size_t got = 0;
	ssize_t n;

	if (bi->pointer_state)
		return bi->pointer_state == 1 ? 1 : bi->pointer_state == 3 ? 2 : 0;
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
	else if (ptr_is_annex_pointer(b->chunk, got))
		bi->pointer_state = 3;
	return bi->pointer_state == 1 ? 1 : bi->pointer_state == 3 ? 2 : 0;
}
