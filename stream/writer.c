/*
 * writer.c - canonical fast-import commands (docs/FORMATS.md sections 1-2).
 *
 * Output goes through one buffer: to an fd (1 MiB, flushed when full;
 * chunks larger than the buffer bypass it) or into memory for tests. Data is
 * always written in the byte-count form; paths are quoted as fast-export
 * quotes them. The first write error sticks: every later call fails too, so
 * a caller that checks only the final flush still sees it.
 *
 * Holding back: between stream_writer_hold and the stream_writer_release
 * that lets the last held byte go, what would go to the fd is kept in
 * memory instead, in order (a caller whose commands name objects that are
 * not in the repository yet keeps them from git fast-import until they
 * are).
 */
#include "stream.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The size of a pipe's buffer: the reader downstream (fast-import) gets
 * bytes as soon as a pipe's worth is ready, instead of idling while a
 * larger buffer fills with small commands. */
#define WRITE_BUF_SIZE ((size_t)64 << 10)

struct stream_writer {
	int fd;			/* -1 in mem mode */
	char *name;
	char *wbuf;		/* fd mode */
	size_t len;
	struct buf mem;		/* mem mode */
	struct buf line;	/* scratch for one command line */
	int failed;
	int in_data;		/* between data_begin and data_end */
	uint64_t data_left;
	uint64_t produced;	/* bytes given to the writer so far */
	uint64_t inlines;	/* items with inline data */
	int holding;
	struct buf held;	/* fd mode, holding: bytes not written yet */
	uint64_t held_from;	/* the position of held's first byte */
};

/* ---- output ---- */

static int write_all(struct stream_writer *w, const char *p, size_t n,
		     struct err *e)
{
	if (w->holding) {
		if (buf_add(&w->held, p, n) == 0)
			return 0;
		w->failed = 1;
		return err_set(e, ERR_IO, "writing %s: too much held back",
			       w->name);
	}
	if (write_full(w->fd, p, n) == 0)
		return 0;
	w->failed = 1;
	return err_errno(e, ERR_IO, "writing %s", w->name);
}

static int flush_buf(struct stream_writer *w, struct err *e)
{
	size_t n = w->len;

	w->len = 0;
	return write_all(w, w->wbuf, n, e);
}

static int put(struct stream_writer *w, const void *p, size_t n, struct err *e)
{
	if (w->failed)
		return err_set(e, ERR_IO, "writing %s: stopped after an earlier error",
			       w->name);
	w->produced += n;
	if (w->fd < 0) {
		if (buf_add(&w->mem, p, n) < 0)
			return err_set(e, ERR_IO, "writing %s: memory output too large",
				       w->name);
		return 0;
	}
	if (n > WRITE_BUF_SIZE - w->len) {
		if (flush_buf(w, e) < 0)
			return -1;
		if (n >= WRITE_BUF_SIZE)
			return write_all(w, p, n, e);
	}
	memcpy(w->wbuf + w->len, p, n);
	w->len += n;
	return 0;
}

static int put_line(struct stream_writer *w, struct err *e)
{
	return put(w, w->line.ptr, w->line.len, e);
}

/* ---- pieces of commands ---- */

static int add_ref(struct buf *b, const struct stream_ref *ref)
{
	switch (ref->kind) {
	case STREAM_REF_MARK:
		return buf_printf(b, ":%llu", (unsigned long long)ref->mark);
	case STREAM_REF_INLINE:
		return buf_adds(b, "inline");
	default:
		return buf_add(b, ref->name.ptr, ref->name.len);
	}
}

/* "<kw> <ref>\n" */
static int add_ref_line(struct buf *b, const char *kw, const struct stream_ref *ref)
{
	if (buf_adds(b, kw) < 0 || buf_addch(b, ' ') < 0 || add_ref(b, ref) < 0)
		return -1;
	return buf_addch(b, '\n');
}

/* "<kw> <value>\n", value verbatim */
static int add_kv(struct buf *b, const char *kw, const struct buf *v)
{
	if (buf_adds(b, kw) < 0 || buf_addch(b, ' ') < 0 ||
	    buf_add(b, v->ptr, v->len) < 0)
		return -1;
	return buf_addch(b, '\n');
}

static int add_mark(struct buf *b, uint64_t mark)
{
	return mark ? buf_printf(b, "mark :%llu\n", (unsigned long long)mark) : 0;
}

static int add_original(struct buf *b, const struct buf *oid)
{
	return oid->len ? add_kv(b, "original-oid", oid) : 0;
}

static int add_data_line(struct buf *b, uint64_t len)
{
	return buf_printf(b, "data %llu\n", (unsigned long long)len);
}

/* A path for an ls without dataref must be quoted (docs/FORMATS.md 2.7). */
static int add_forced_quote(struct buf *b, const struct buf *path)
{
	size_t start = b->len;

	if (stream_quote_path(b, path->ptr, path->len) < 0)
		return -1;
	if (b->len > start && b->ptr[start] == '"')
		return 0;
	b->len = start;
	if (buf_addch(b, '"') < 0 || buf_add(b, path->ptr, path->len) < 0)
		return -1;
	return buf_addch(b, '"');
}

static int add_change(struct buf *b, const struct stream_cmd *c)
{
	switch (c->kind) {
	case STREAM_MODIFY:
		if (buf_printf(b, "M %o ", (unsigned)c->mode) < 0 ||
		    add_ref(b, &c->dataref) < 0 || buf_addch(b, ' ') < 0 ||
		    stream_quote_path(b, c->path.ptr, c->path.len) < 0)
			return -1;
		return buf_addch(b, '\n');
	case STREAM_DELETE:
		if (buf_adds(b, "D ") < 0 ||
		    stream_quote_path(b, c->path.ptr, c->path.len) < 0)
			return -1;
		return buf_addch(b, '\n');
	case STREAM_COPY:
	case STREAM_RENAME:
		if (buf_adds(b, c->kind == STREAM_COPY ? "C " : "R ") < 0 ||
		    stream_quote_path(b, c->path.ptr, c->path.len) < 0 ||
		    buf_addch(b, ' ') < 0 ||
		    stream_quote_path(b, c->path2.ptr, c->path2.len) < 0)
			return -1;
		return buf_addch(b, '\n');
	case STREAM_NOTEMODIFY:
		if (buf_adds(b, "N ") < 0 || add_ref(b, &c->dataref) < 0)
			return -1;
		return add_ref_line(b, "", &c->from);
	default:
		return buf_adds(b, "deleteall\n");
	}
}

static int add_query(struct buf *b, const struct stream_cmd *c)
{
	switch (c->kind) {
	case STREAM_GET_MARK:
		return buf_printf(b, "get-mark :%llu\n", (unsigned long long)c->mark);
	case STREAM_CAT_BLOB:
		return add_ref_line(b, "cat-blob", &c->dataref);
	default:	/* STREAM_LS */
		if (buf_adds(b, "ls ") < 0)
			return -1;
		if (c->dataref.kind == STREAM_REF_NONE) {
			if (add_forced_quote(b, &c->path) < 0)
				return -1;
		} else if (add_ref(b, &c->dataref) < 0 || buf_addch(b, ' ') < 0 ||
			   stream_quote_path(b, c->path.ptr, c->path.len) < 0) {
			return -1;
		}
		return buf_addch(b, '\n');
	}
}

/* ---- whole commands ---- */

static int write_commit(struct stream_writer *w, const struct stream_cmd *c,
			struct err *e)
{
	struct buf *b = &w->line;
	size_t i;

	if (add_kv(b, "commit", &c->ref) < 0 || add_mark(b, c->mark) < 0 ||
	    add_original(b, &c->original_oid) < 0 ||
	    (c->has_author && add_kv(b, "author", &c->author) < 0) ||
	    add_kv(b, "committer", &c->committer) < 0 ||
	    (c->has_encoding && add_kv(b, "encoding", &c->encoding) < 0) ||
	    add_data_line(b, c->message.len) < 0)
		return -1;
	/* the message goes straight out: it can be large; no LF after it,
	 * as fast-export writes it (docs/FORMATS.md 1.1) */
	if (put_line(w, e) < 0 || put(w, c->message.ptr, c->message.len, e) < 0)
		return 1;
	buf_reset(b);
	if (c->from.kind != STREAM_REF_NONE && add_ref_line(b, "from", &c->from) < 0)
		return -1;
	for (i = 0; i < c->nmerges; i++)
		if (add_ref_line(b, "merge", &c->merges[i]) < 0)
			return -1;
	return 0;
}

static int write_tag(struct stream_writer *w, const struct stream_cmd *c,
		     struct err *e)
{
	struct buf *b = &w->line;

	if (add_kv(b, "tag", &c->ref) < 0 || add_mark(b, c->mark) < 0 ||
	    add_ref_line(b, "from", &c->from) < 0 ||
	    add_original(b, &c->original_oid) < 0 ||
	    (c->has_tagger && add_kv(b, "tagger", &c->tagger) < 0) ||
	    add_data_line(b, c->message.len) < 0)
		return -1;
	if (put_line(w, e) < 0 || put(w, c->message.ptr, c->message.len, e) < 0)
		return 1;
	buf_reset(b);
	return buf_addch(b, '\n');	/* the optional LF fast-export writes */
}

/*
 * Formats c into w->line. Returns 0, -1 if the line could not be built
 * (too large), 1 if it already wrote everything itself and failed (e set).
 */
static int format_cmd(struct stream_writer *w, const struct stream_cmd *c,
		      struct err *e)
{
	struct buf *b = &w->line;

	switch (c->kind) {
	case STREAM_COMMIT:
		return write_commit(w, c, e);
	case STREAM_TAG:
		return write_tag(w, c, e);
	case STREAM_MODIFY: case STREAM_DELETE: case STREAM_COPY:
	case STREAM_RENAME: case STREAM_DELETEALL: case STREAM_NOTEMODIFY:
		return add_change(b, c);
	case STREAM_COMMIT_END:
		return buf_addch(b, '\n');
	case STREAM_RESET:
		if (add_kv(b, "reset", &c->ref) < 0)
			return -1;
		if (c->from.kind == STREAM_REF_NONE)
			return 0;
		return add_ref_line(b, "from", &c->from) < 0 ? -1 : buf_addch(b, '\n');
	case STREAM_FEATURE:
		return add_kv(b, "feature", &c->text);
	case STREAM_OPTION:
		return add_kv(b, "option", &c->text);
	case STREAM_PROGRESS:
		return add_kv(b, "progress", &c->text);
	case STREAM_CHECKPOINT:
		return buf_adds(b, "checkpoint\n");
	case STREAM_DONE:
		return buf_adds(b, "done\n");
	case STREAM_ALIAS:
		/* the blank line is not optional in 2.39 (docs/FORMATS.md 2.7) */
		if (buf_adds(b, "alias\n") < 0 || add_mark(b, c->mark) < 0 ||
		    add_ref_line(b, "to", &c->from) < 0)
			return -1;
		return buf_addch(b, '\n');
	case STREAM_GET_MARK: case STREAM_CAT_BLOB: case STREAM_LS:
		return add_query(b, c);
	case STREAM_COMMENT:
		if (buf_addch(b, '#') < 0 || buf_add(b, c->text.ptr, c->text.len) < 0)
			return -1;
		return buf_addch(b, '\n');
	default:
		return -1;
	}
}

int stream_write_cmd(struct stream_writer *w, const struct stream_cmd *c,
		     struct err *e)
{
	int rc;

	assert(!w->in_data);
	if (c->kind == STREAM_BLOB ||
	    ((c->kind == STREAM_MODIFY || c->kind == STREAM_NOTEMODIFY) &&
	     c->dataref.kind == STREAM_REF_INLINE))
		return err_set(e, ERR_IO, "writing %s: internal error: an item with "
					  "data needs stream_write_data_begin", w->name);
	buf_reset(&w->line);
	rc = format_cmd(w, c, e);
	if (rc > 0)
		return -1;
	if (rc < 0)
		return err_set(e, ERR_IO, "writing %s: cannot format a command of kind %d",
			       w->name, (int)c->kind);
	return put_line(w, e);
}

int stream_write_data_begin(struct stream_writer *w,
			    const struct stream_cmd *c, uint64_t len,
			    struct err *e)
{
	struct buf *b = &w->line;
	int rc;

	assert(!w->in_data);
	buf_reset(b);
	if (c->kind == STREAM_BLOB) {
		rc = buf_adds(b, "blob\n") < 0 || add_mark(b, c->mark) < 0 ||
		     add_original(b, &c->original_oid) < 0;
	} else if (c->kind == STREAM_MODIFY &&
		   c->dataref.kind == STREAM_REF_INLINE) {
		rc = buf_printf(b, "M %o inline ", (unsigned)c->mode) < 0 ||
		     stream_quote_path(b, c->path.ptr, c->path.len) < 0 ||
		     buf_addch(b, '\n') < 0;
	} else if (c->kind == STREAM_NOTEMODIFY &&
		   c->dataref.kind == STREAM_REF_INLINE) {
		rc = add_ref_line(b, "N inline", &c->from) < 0;
	} else {
		return err_set(e, ERR_IO, "writing %s: internal error: kind %d has no data",
			       w->name, (int)c->kind);
	}
	if (rc || add_data_line(b, len) < 0)
		return err_set(e, ERR_IO, "writing %s: cannot format a command", w->name);
	if (put_line(w, e) < 0)
		return -1;
	w->inlines += c->kind != STREAM_BLOB;
	w->in_data = 1;
	w->data_left = len;
	return 0;
}

int stream_write_bytes(struct stream_writer *w, const void *p, size_t n,
		       struct err *e)
{
	/* more than announced would corrupt the stream: refuse, even
	 * when asserts are compiled out */
	if (!w->in_data || (uint64_t)n > w->data_left)
		return err_set(e, ERR_IO, "writing %s: internal error: %zu data bytes "
					  "beyond the announced count", w->name, n);
	w->data_left -= n;
	return put(w, p, n, e);
}

int stream_write_data_end(struct stream_writer *w, struct err *e)
{
	if (!w->in_data || w->data_left)
		return err_set(e, ERR_IO, "writing %s: internal error: data ended "
					  "%llu bytes short", w->name,
			       (unsigned long long)w->data_left);
	w->in_data = 0;
	return put(w, "\n", 1, e);
}

int stream_write_raw(struct stream_writer *w, const void *p, size_t n,
		     struct err *e)
{
	return put(w, p, n, e);
}

int stream_writer_flush(struct stream_writer *w, struct err *e)
{
	if (w->failed)
		return err_set(e, ERR_IO, "writing %s: stopped after an earlier error",
			       w->name);
	if (w->fd < 0 || w->len == 0)
		return 0;
	return flush_buf(w, e);
}

uint64_t stream_writer_pos(const struct stream_writer *w)
{
	return w->produced;
}

uint64_t stream_writer_inlines(const struct stream_writer *w)
{
	return w->inlines;
}

int stream_writer_cut(struct stream_writer *w, uint64_t pos)
{
	if (w->fd >= 0 || w->in_data || pos > w->produced ||
	    w->produced != w->mem.len)
		return -1;
	w->mem.len = (size_t)pos;
	if (w->mem.ptr)
		w->mem.ptr[pos] = '\0';
	w->produced = pos;
	return 0;
}

int stream_writer_hold(struct stream_writer *w)
{
	if (w->holding || w->fd < 0)
		return 0;
	/* the buffer's bytes, not written yet, are held too */
	w->holding = 1;
	w->held_from = w->produced - w->len;
	return 0;
}

size_t stream_writer_held(const struct stream_writer *w)
{
	return w->held.len + (w->holding ? w->len : 0);
}

int stream_writer_release(struct stream_writer *w, uint64_t upto,
			  struct err *e)
{
	size_t n;

	if (!w->holding)
		return 0;
	if (upto > w->produced)
		upto = w->produced;
	if (w->len && flush_buf(w, e) < 0)	/* into held */
		return -1;
	if (upto <= w->held_from)
		return 0;
	n = (size_t)(upto - w->held_from);
	w->holding = 0;
	if (write_all(w, w->held.ptr, n, e) < 0)
		return -1;
	memmove(w->held.ptr, w->held.ptr + n, w->held.len - n);
	w->held.len -= n;
	w->held_from = upto;
	w->holding = upto < w->produced;
	return 0;
}

/* ---- quoting (docs/FORMATS.md 2.4, git's quote_c_style) ---- */

static int needs_cquote(unsigned char ch)
{
	return ch < 0x20 || ch == '"' || ch == '\\' || ch >= 0x7f;
}

static int add_cquoted(struct buf *out, const unsigned char *p, size_t len)
{
	static const char esc[] = "abtnvfr";	/* 0x07 .. 0x0d */
	size_t i, run;

	if (buf_addch(out, '"') < 0)
		return -1;
	for (i = 0; i < len; i = run) {
		unsigned char ch;

		for (run = i; run < len && !needs_cquote(p[run]); run++)
			;
		if (buf_add(out, p + i, run - i) < 0)
			return -1;
		if (run == len)
			break;
		ch = p[run++];
		if (ch >= 0x07 && ch <= 0x0d) {
			if (buf_addch(out, '\\') < 0 || buf_addch(out, esc[ch - 0x07]) < 0)
				return -1;
		} else if (ch == '"' || ch == '\\') {
			if (buf_addch(out, '\\') < 0 || buf_addch(out, ch) < 0)
				return -1;
		} else if (buf_printf(out, "\\%03o", ch) < 0) {
			return -1;
		}
	}
	return buf_addch(out, '"');
}

int stream_quote_path(struct buf *out, const void *path, size_t len)
{
	const unsigned char *p = path;
	size_t i, old = out->len;
	int space = 0, rc;

	for (i = 0; i < len; i++) {
		if (needs_cquote(p[i]))
			break;
		space |= p[i] == ' ';
	}
	if (i < len)
		rc = add_cquoted(out, p, len);
	else if (space || len == 0)	/* "" keeps an empty path visible */
		rc = buf_addch(out, '"') < 0 || buf_add(out, p, len) < 0 ||
		     buf_addch(out, '"') < 0 ? -1 : 0;
	else
		rc = buf_add(out, p, len);
	if (rc < 0) {
		out->len = old;	/* as the buf contract: unchanged on failure */
		out->ptr[old] = '\0';
	}
	return rc;
}

int stream_show_path(struct buf *out, const void *path, size_t len)
{
	const unsigned char *p = path;
	size_t i, old = out->len;

	for (i = 0; i < len && !needs_cquote(p[i]); i++)
		;
	if (i == len)
		return buf_add(out, p, len);
	if (add_cquoted(out, p, len) < 0) {
		out->len = old;
		out->ptr[old] = '\0';
		return -1;
	}
	return 0;
}

/* ---- construction ---- */

static struct stream_writer *writer_alloc(const char *name, int fd)
{
	struct stream_writer *w = xcalloc(1, sizeof(*w));

	w->fd = fd;
	w->name = xstrdup(name);
	buf_init(&w->line, SIZE_MAX / 2);
	buf_init(&w->mem, SIZE_MAX / 2);
	buf_init(&w->held, SIZE_MAX / 2);
	return w;
}

struct stream_writer *stream_writer_new_fd(int fd, const char *name)
{
	struct stream_writer *w = writer_alloc(name ? name : "<output>", fd);

	w->wbuf = xmalloc(WRITE_BUF_SIZE);
	return w;
}

struct stream_writer *stream_writer_new_mem(void)
{
	return writer_alloc("<memory>", -1);
}

const struct buf *stream_writer_mem(const struct stream_writer *w)
{
	return &w->mem;
}

void stream_writer_free(struct stream_writer *w)
{
	if (!w)
		return;
	free(w->wbuf);
	free(w->name);
	buf_release(&w->line);
	buf_release(&w->mem);
	buf_release(&w->held);
	free(w);
}
