/*
 * lfsplace.c - the two ways a file is placed in the commit being built
 * that more than one decision takes: as it is (its blob written before
 * the commit when it is not out yet) and as an LFS pointer (its content
 * put in the store once). apply.c places by the rules; attrs.c places by
 * the commit's .gitattributes (--fixup).
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

/* M with the original content: queued to be written before the commit. */
int place_keep(struct blobs *b, struct stream_cmd *c, uint32_t mode,
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
	c->dataref.kind = STREAM_REF_INLINE;
	bi->ptr_written = 1;
	if (stream_write_data_begin(b->cbuf, c, bi->ptr_text.len, e) < 0 ||
	    stream_write_bytes(b->cbuf, bi->ptr_text.ptr, bi->ptr_text.len, e) < 0)
		return -1;
	return stream_write_data_end(b->cbuf, e);
}
