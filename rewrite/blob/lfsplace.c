/*
 * lfsplace.c - the two ways a file is placed in the commit being built
 * that more than one decision takes: as it is (its blob written before
 * the commit when it is not out yet, or stored by made.c's writer when
 * the run made it) and as an LFS pointer (its content put in the store
 * once). apply.c places by the rules; attrs.c places by the commit's
 * .gitattributes (--fixup).
 */
#include "way.h"

/* Puts bi's content into the store and computes its pointer (once). */
int convert_lfs(struct blobs *b, struct blob_info *bi, struct err *e)
{
	struct ptr_put *put;
	uint64_t size;

	if (bi->converted)
		return 0;
	put = bi->id_known ? pool_take(b, &bi->id) : NULL;
	if ((!put && content_put(b, bi, b->store, &put, e) < 0) ||
	    ptr_put_finish(put, &bi->sha256, &size, e) < 0 ||
	    content_size_check(bi, size, e) < 0)
		return -1;
	if (ptr_lfs_pointer(&bi->ptr_text, &bi->sha256, bi->size) < 0)
		return err_set(e, ERR_IO, "cannot build an LFS pointer");
	obj_hash_buf(b->hash, OBJ_BLOB, bi->ptr_text.ptr, bi->ptr_text.len,
		     &bi->ptr_id);
	bi->converted = 1;
	bi->sha_known = 1;
	b->converted++;
	pointers_add(b, &bi->ptr_id, POINTER_LFS, bi);
	return 0;
}

/* A blob this run made goes to made.c's writer, its bytes taken from its
 * held copy when it has one in memory. */
static int made_take(struct blobs *b, struct blob_info *bi, const char *path,
		     size_t len, struct err *e)
{
	struct buf data = BUF_INIT(SIZE_MAX / 2);
	int rc;

	if (ensure_id(b, bi, e) < 0)
		return -1;
	if (bi->held && !bi->held->spool) {
		data = bi->held->mem;
		buf_init(&bi->held->mem, SIZE_MAX / 2);
	} else if (blob_read_all(b, bi, &data, e) < 0) {
		buf_release(&data);
		return -1;
	}
	rc = made_put(b, &bi->id, path, len, &data, e);
	buf_release(&data);
	if (rc == 0) {
		held_free(bi->held);
		bi->held = NULL;
		bi->emitted = 1;
	}
	return rc;
}

/* M with the original content: queued to be written before the commit
 * (or handed to made.c's writer). */
int place_keep(struct blobs *b, struct stream_cmd *c, uint32_t mode,
		      struct blob_mark *m, struct blob_info *bi, struct err *e)
{
	char hex[OID_HEX + 1];

	if (bi && ensure_id(b, bi, e) < 0)
		return -1;
	if (bi && !m && !bi->emitted && made_wants(b, bi->size)) {
		if (made_take(b, bi, c->path.ptr, c->path.len, e) < 0)
			return -1;
	} else if (bi && ((m && !m->declared) || (!m && !bi->emitted))) {
		list_push(&b->emit, m, bi);
	}
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
int place_pointer(struct blobs *b, struct stream_cmd *c, uint32_t mode,
			 struct blob_info *bi, struct err *e)
{
	char hex[OID_HEX + 1];

	if (convert_lfs(b, bi, e) < 0)
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
	bi->ptr_written = 1;
	return made_write_text(b, c, &bi->ptr_id, bi->ptr_text.ptr,
			       bi->ptr_text.len, e);
}
