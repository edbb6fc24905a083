/*
 * fuzz_stream.c - libFuzzer target for the stream reader and writer.
 *
 * Parses arbitrary bytes, pulls every item's data, and writes each item to
 * a memory writer. Whatever the reader accepts, the writer must be able to
 * write, and re-reading that output must succeed with the same item count.
 * Errors must be ERR_STREAM with a byte offset; nothing may crash or hang.
 * Parsed again with the look-ahead (stream_reader_ahead) run between the
 * items, the output must be the same bytes: the look-ahead changes
 * nothing the parse sees.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stream/stream.h"

/* Copies one item with data: delimited data is collected first because
 * the writer always uses the byte-count form. */
static int copy_data(struct stream_reader *r, struct stream_writer *w,
		     const struct stream_cmd *c, struct buf *tmp, struct err *e)
{
	const char *p;
	size_t n;
	int rc;

	buf_reset(tmp);
	while ((rc = stream_reader_data(r, &p, &n, e)) > 0)
		if (buf_add(tmp, p, n) < 0)
			abort();
	if (rc < 0)
		return -1;
	if (c->data_len != UINT64_MAX && c->data_len != tmp->len)
		abort();
	if (stream_write_data_begin(w, c, tmp->len, e) < 0 ||
	    stream_write_bytes(w, tmp->ptr, tmp->len, e) < 0 ||
	    stream_write_data_end(w, e) < 0)
		abort();
	return 0;
}

/* Returns the number of items read, or -1 after a (well-formed) error. */
/* fast-import's checks (fastimport.c) on what a command carries: they
 * must not crash on any bytes, and must agree on the split they give. */
static void check_fastimport(const struct stream_cmd *c)
{
	const struct buf *ids[] = { &c->author, &c->committer, &c->tagger };
	const char *why;
	size_t i, at;

	(void)stream_refname_ok(c->ref.ptr ? c->ref.ptr : "", c->ref.len);
	for (i = 0; i < 3; i++) {
		if (!ids[i]->len)
			continue;
		if (stream_ident_split(ids[i]->ptr, ids[i]->len, &at, &why) == 0) {
			if (at > ids[i]->len || ids[i]->ptr[at - 1] != ' ')
				abort();
			(void)stream_raw_date_ok(ids[i]->ptr + at, ids[i]->len - at, 1);
			(void)stream_raw_date_ok(ids[i]->ptr + at, ids[i]->len - at, 0);
		}
	}
}

/* Up to two look-ahead lines, each an M line by id within the input. */
static void look_ahead(struct stream_reader *r, struct stream_cmd *a,
		       size_t size)
{
	uint64_t off;
	int i;

	for (i = 0; i < 2 && stream_reader_ahead(r, 1 << 20, a, &off) > 0; i++)
		if (a->kind != STREAM_MODIFY || a->dataref.kind != STREAM_REF_OID ||
		    off >= size || off < stream_reader_offset(r))
			abort();
}

static long run(const uint8_t *data, size_t size, struct stream_writer *w,
		int ahead)
{
	struct stream_reader *r = stream_reader_new_mem(data, size, "fuzz");
	struct buf tmp = BUF_INIT(SIZE_MAX / 2);
	struct stream_cmd c, a;
	struct err e = ERR_INIT;
	long items = 0;
	int rc;

	stream_cmd_init(&c);
	stream_cmd_init(&a);
	while ((rc = stream_reader_next(r, &c, &e)) > 0) {
		items++;
		if (ahead)
			look_ahead(r, &a, size);
		check_fastimport(&c);
		if (c.has_data)
			rc = copy_data(r, w, &c, &tmp, &e);
		else if (w && stream_write_cmd(w, &c, &e) < 0)
			abort();
		if (rc < 0)
			break;
	}
	if (rc < 0 && (e.kind != ERR_STREAM || !strstr(e.msg, "byte offset ")))
		abort();
	stream_cmd_release(&c);
	stream_cmd_release(&a);
	buf_release(&tmp);
	stream_reader_free(r);
	return rc < 0 ? -1 : items;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct stream_writer *w = stream_writer_new_mem(), *w2;
	struct stream_writer *w3 = stream_writer_new_mem();
	const struct buf *out, *out3;
	long n1, n2;

	n1 = run(data, size, w, 0);
	if (run(data, size, w3, 1) != n1)
		abort();
	out = stream_writer_mem(w);
	out3 = stream_writer_mem(w3);
	if (out->len != out3->len || memcmp(out->ptr, out3->ptr, out->len))
		abort();
	if (n1 >= 0) {
		/* a clean parse must survive its own round trip */
		w2 = stream_writer_new_mem();
		n2 = run((const uint8_t *)out->ptr, out->len, w2, 0);
		if (n2 != n1)
			abort();
		stream_writer_free(w2);
	}
	stream_writer_free(w);
	stream_writer_free(w3);
	return 0;
}
