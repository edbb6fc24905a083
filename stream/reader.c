/*
 * reader.c - the fast-export grammar (docs/FORMATS.md sections 1-4) turned into
 * struct stream_cmd items.
 *
 * The reader owns one buffer (fd mode) or borrows the caller's memory block
 * (mem mode). Command lines are found with memchr and parsed in place; the
 * pointers are only valid until the next fill, so every field is copied
 * into the item before more input is read. Data in the byte-count form is
 * handed out as pointers into the buffer, so a blob is never copied here.
 *
 * Every malformed input ends in one ERR_STREAM error naming the byte offset
 * and the offending line; after an error the reader refuses to go on.
 */
#include "stream.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A full command line (STREAM_MAX_LINE bytes and its LF) always fits. */
#define READ_BUF_SIZE (STREAM_MAX_LINE + 4096)
/* An octopus with more parents than this is hostile, not history; the
 * byte cap keeps 65536 megabyte-long names from adding up. */
#define MAX_MERGES 65536
#define MAX_MERGE_BYTES ((size_t)64 << 20)
/* How much of an offending line an error message quotes. */
#define ERR_SHOW 80
/* Comments met inside a command, waiting to be delivered after it. */
#define MAX_PENDING_COMMENTS ((size_t)64 << 20)

enum rstate {
	RS_TOP,		/* between commands */
	RS_CHANGES,	/* in a commit's change list */
	RS_END,		/* EOF or `done` seen: only 0 from now on */
	RS_FAILED,	/* an error was reported: only -1 from now on */
};

enum dstate { DS_NONE, DS_COUNT, DS_DELIM };

struct line {
	const char *p;	/* not including the LF */
	size_t n;
	uint64_t off;	/* stream offset of p[0] */
};

struct stream_reader {
	int fd;			/* -1 in mem mode */
	char *name;
	char *own;		/* fd mode: the buffer we read into */
	const char *buf;	/* own, or the caller's block */
	size_t cap, pos, end;
	size_t scanned;		/* bytes after pos known to hold no LF */
	size_t line_next;	/* bytes to consume for the peeked line */
	uint64_t base;		/* stream offset of buf[0] */
	int eof;
	enum rstate state;

	enum dstate dstate;	/* pending data of the last item */
	uint64_t dtotal, dleft;
	struct buf delim;
	int dline_start;	/* delimited data: at the start of a line */

	struct buf comments;	/* pending comment texts, each ending in LF */
	size_t comments_pos;

	/* the look-ahead (stream_reader_ahead) */
	uint64_t ahead;		/* stream offset of the next byte it scans */
	uint64_t ahead_skip;	/* data bytes it has still to pass over */
	struct buf ahead_ref;	/* the commit of the M lines it finds (empty:
				   not seen) */
	int ahead_stop;		/* it gave up: only 0 from now on */
};

/* ---- errors ---- */

/* Appends src to dst escaped for a message: printable ASCII as is. */
static void escape_for_msg(char *dst, size_t dsz, const char *src, size_t n)
{
	size_t i, o = 0;
	size_t show = n < ERR_SHOW ? n : ERR_SHOW;

	for (i = 0; i < show && o + 8 < dsz; i++) {
		unsigned char ch = (unsigned char)src[i];
		if (ch == '"' || ch == '\\')
			o += (size_t)snprintf(dst + o, dsz - o, "\\%c", ch);
		else if (ch >= 0x20 && ch < 0x7f)
			dst[o++] = (char)ch;
		else if (ch == '\t')
			o += (size_t)snprintf(dst + o, dsz - o, "\\t");
		else
			o += (size_t)snprintf(dst + o, dsz - o, "\\x%02x", ch);
	}
	if (show < n && o + 4 < dsz)
		o += (size_t)snprintf(dst + o, dsz - o, "...");
	dst[o] = '\0';
}

/*
 * Sets the one ERR_STREAM error for malformed input at offset off, quoting
 * ln when given, and stops the reader. Always returns -1.
 */
static int fail(struct stream_reader *r, struct err *e, uint64_t off,
		const struct line *ln, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int fail(struct stream_reader *r, struct err *e, uint64_t off,
		const struct line *ln, const char *fmt, ...)
{
	char what[512], got[ERR_SHOW * 4 + 8];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	r->state = RS_FAILED;
	if (!ln)
		return err_set(e, ERR_STREAM, "stream %s: byte offset %llu: %s",
			       r->name, (unsigned long long)off, what);
	escape_for_msg(got, sizeof(got), ln->p, ln->n);
	return err_set(e, ERR_STREAM, "stream %s: byte offset %llu: %s, got \"%s\"",
		       r->name, (unsigned long long)off, what, got);
}

/* The usual case: the whole line is what was wrong. */
#define FAIL_LINE(r, e, ln, ...) fail((r), (e), (ln)->off, (ln), __VA_ARGS__)

/* ---- buffer ---- */

static uint64_t cur_off(const struct stream_reader *r)
{
	return r->base + r->pos;
}

static void advance(struct stream_reader *r, size_t n)
{
	r->pos += n;
	r->scanned = 0;
}

/*
 * Reads more input after what is buffered, moving the unread tail to the
 * front first. Returns 1 if bytes arrived, 0 at EOF (always in mem mode),
 * -1 with ERR_IO on a read error.
 */
static int fill(struct stream_reader *r, struct err *e)
{
	ssize_t n;

	if (r->eof || r->fd < 0) {
		r->eof = 1;
		return 0;
	}
	if (r->pos > 0) {
		memmove(r->own, r->own + r->pos, r->end - r->pos);
		r->base += r->pos;
		r->end -= r->pos;
		r->pos = 0;
	}
	if (r->end == r->cap)
		return 1;	/* callers never ask with a full buffer */
	do {
		n = read(r->fd, r->own + r->end, r->cap - r->end);
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		r->state = RS_FAILED;
		return err_errno(e, ERR_IO, "stream %s: read failed at byte offset %llu",
				 r->name, (unsigned long long)(r->base + r->end));
	}
	if (n == 0) {
		r->eof = 1;
		return 0;
	}
	r->end += (size_t)n;
	return 1;
}

/* Makes at least want bytes available unless EOF comes first. */
static int ensure(struct stream_reader *r, size_t want, struct err *e)
{
	while (r->end - r->pos < want) {
		int rc = fill(r, e);
		if (rc <= 0)
			return rc;
	}
	return 1;
}

/*
 * Finds the next line without consuming it. Returns 1 with *ln set, 0 at
 * EOF with nothing left, -1 on an overlong line or a read error. A last
 * line without LF counts as a line, as for fast-import's getline.
 */
static int peek_line(struct stream_reader *r, struct line *ln, struct err *e)
{
	for (;;) {
		size_t have = r->end - r->pos;
		size_t lim = have < STREAM_MAX_LINE + 1 ? have : STREAM_MAX_LINE + 1;
		const char *start = r->buf + r->pos;
		int rc;

		if (lim > r->scanned) {
			const char *nl = memchr(start + r->scanned, '\n',
						lim - r->scanned);
			if (nl) {
				ln->p = start;
				ln->n = (size_t)(nl - start);
				ln->off = cur_off(r);
				r->line_next = ln->n + 1;
				return 1;
			}
			r->scanned = lim;
		}
		if (have > STREAM_MAX_LINE) {
			struct line l = { start, have, cur_off(r) };
			return FAIL_LINE(r, e, &l,
					 "expected a command line of at most %zu bytes",
					 STREAM_MAX_LINE);
		}
		rc = fill(r, e);
		if (rc < 0)
			return -1;
		if (rc == 0) {
			have = r->end - r->pos;
			if (have == 0)
				return 0;
			ln->p = r->buf + r->pos;
			ln->n = have;
			ln->off = cur_off(r);
			r->line_next = have;
			return 1;
		}
	}
}

static void take_line(struct stream_reader *r)
{
	advance(r, r->line_next);
}

/* fast-import's skip_optional_lf: eats one LF if it is the next byte. */
static int skip_optional_lf(struct stream_reader *r, struct err *e)
{
	int rc = ensure(r, 1, e);

	if (rc < 0)
		return -1;
	if (rc > 0 && r->buf[r->pos] == '\n')
		advance(r, 1);
	return 0;
}

/* ---- small parsers ---- */

static int starts(const struct line *ln, const char *kw)
{
	size_t n = strlen(kw);
	return ln->n >= n && memcmp(ln->p, kw, n) == 0;
}

static int is(const struct line *ln, const char *kw)
{
	return ln->n == strlen(kw) && memcmp(ln->p, kw, ln->n) == 0;
}

/* The part of ln after the keyword kw (which it starts with). */
static struct line after(const struct line *ln, const char *kw)
{
	size_t n = strlen(kw);
	struct line rest = { ln->p + n, ln->n - n, ln->off + n };
	return rest;
}

static int is_hex(const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		char ch = p[i];
		if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') ||
		      (ch >= 'A' && ch <= 'F')))
			return 0;
	}
	return 1;
}

static int is_oid(const char *p, size_t n)
{
	return (n == 40 || n == 64) && is_hex(p, n);
}

/* ":<n>" with n >= 1 and nothing else. */
static int parse_markref(const char *p, size_t n, uint64_t *out)
{
	uint64_t v;

	if (n < 2 || p[0] != ':' || parse_u64(p + 1, n - 1, UINT64_MAX, &v) < 0 ||
	    v == 0)
		return -1;
	*out = v;
	return 0;
}

static int set_text(struct stream_reader *r, struct buf *b, const char *p,
		    size_t n, const struct line *ln, struct err *e)
{
	if (buf_set(b, p, n) < 0)
		return FAIL_LINE(r, e, ln, "expected a shorter value");
	return 0;
}

/* A commit-ish (from, merge, to, N): ":<mark>", a 40/64-hex id or a name. */
static int parse_commitish(struct stream_reader *r, const struct line *whole,
			   const struct line *v, struct stream_ref *ref,
			   struct err *e)
{
	ref->mark = 0;
	buf_reset(&ref->name);
	if (v->n == 0)
		return FAIL_LINE(r, e, whole, "expected a commit-ish after the keyword");
	if (v->p[0] == ':') {
		ref->kind = STREAM_REF_MARK;
		if (parse_markref(v->p, v->n, &ref->mark) < 0)
			return FAIL_LINE(r, e, whole,
					 "expected a mark reference :<number >= 1>");
		return 0;
	}
	ref->kind = is_oid(v->p, v->n) ? STREAM_REF_OID : STREAM_REF_NAME;
	return set_text(r, &ref->name, v->p, v->n, whole, e);
}

/*
 * A dataref: ":<mark>", a 40/64-hex id, or (if allow_inline) "inline".
 * The caller has cut v at the field's end.
 */
static int parse_dataref(struct stream_reader *r, const struct line *whole,
			 const char *p, size_t n, int allow_inline,
			 struct stream_ref *ref, struct err *e)
{
	ref->mark = 0;
	buf_reset(&ref->name);
	if (allow_inline && n == 6 && memcmp(p, "inline", 6) == 0) {
		ref->kind = STREAM_REF_INLINE;
		return 0;
	}
	if (n > 0 && p[0] == ':') {
		ref->kind = STREAM_REF_MARK;
		if (parse_markref(p, n, &ref->mark) < 0)
			return FAIL_LINE(r, e, whole,
					 "expected a mark reference :<number >= 1>");
		return 0;
	}
	if (!is_oid(p, n))
		return FAIL_LINE(r, e, whole, "expected a dataref (:<mark>, %s40 or 64 hex digits)",
				 allow_inline ? "inline, " : "");
	ref->kind = STREAM_REF_OID;
	return set_text(r, &ref->name, p, n, whole, e);
}

/* ---- paths (docs/FORMATS.md 2.4) ---- */

static int unescape_one(const char *p, size_t n, size_t *used, char *out)
{
	static const char from[] = "abfnrtv\\\"";
	static const char to[] = "\a\b\f\n\r\t\v\\\"";
	const char *hit;

	if (n == 0)
		return -1;
	hit = memchr(from, p[0], sizeof(from) - 1);
	if (hit) {
		*out = to[hit - from];
		*used = 1;
		return 0;
	}
	/* exactly three octal digits, the first 0-3, as git's unquote_c_style */
	if (n >= 3 && p[0] >= '0' && p[0] <= '3' && p[1] >= '0' && p[1] <= '7' &&
	    p[2] >= '0' && p[2] <= '7') {
		*out = (char)(((p[0] - '0') << 6) | ((p[1] - '0') << 3) | (p[2] - '0'));
		*used = 3;
		return 0;
	}
	return -1;
}

/*
 * Unquotes the C-quoted path at p (p[0] == '"') into out. *used gets the
 * bytes taken, closing quote included. -1 with a message in *why.
 */
static int unquote(const char *p, size_t n, struct buf *out, size_t *used,
		   const char **why)
{
	size_t i = 1;

	buf_reset(out);
	while (i < n) {
		size_t run = i, k;
		char ch;

		while (run < n && p[run] != '"' && p[run] != '\\')
			run++;
		if (buf_add(out, p + i, run - i) < 0)
			goto toolong;
		if (run == n)
			break;
		if (p[run] == '"') {
			*used = run + 1;
			return 0;
		}
		if (unescape_one(p + run + 1, n - run - 1, &k, &ch) < 0) {
			*why = "expected a valid escape in a quoted path "
			       "(\\a \\b \\f \\n \\r \\t \\v \\\\ \\\" or \\[0-3][0-7][0-7])";
			return -1;
		}
		if (ch == '\0') {
			*why = "expected a path without NUL bytes";
			return -1;
		}
		if (buf_addch(out, ch) < 0)
			goto toolong;
		i = run + 1 + k;
	}
	*why = "expected a closing quote in a quoted path";
	return -1;
toolong:
	*why = "expected a shorter path";
	return -1;
}

/* A path running to the end of the line (M, D, C/R destination, ls). */
static int parse_path_eol(struct stream_reader *r, const struct line *whole,
			  const char *p, size_t n, struct buf *out, struct err *e)
{
	const char *why;
	size_t used;

	if (n > 0 && p[0] == '"') {
		if (unquote(p, n, out, &used, &why) < 0)
			return FAIL_LINE(r, e, whole, "%s", why);
		if (used != n)
			return FAIL_LINE(r, e, whole,
					 "expected the end of the line after a quoted path");
		return 0;
	}
	return set_text(r, out, p, n, whole, e);
}

/* C/R: source then destination; an unquoted source ends at the first SP. */
static int parse_two_paths(struct stream_reader *r, const struct line *whole,
			   const struct line *v, struct stream_cmd *c,
			   struct err *e)
{
	const char *why, *sp;
	size_t used;

	if (v->n > 0 && v->p[0] == '"') {
		if (unquote(v->p, v->n, &c->path, &used, &why) < 0)
			return FAIL_LINE(r, e, whole, "%s", why);
		if (used == v->n || v->p[used] != ' ')
			return FAIL_LINE(r, e, whole,
					 "expected a space after the quoted source path");
	} else {
		sp = memchr(v->p, ' ', v->n);
		if (!sp)
			return FAIL_LINE(r, e, whole,
					 "expected a source path and a destination path");
		used = (size_t)(sp - v->p);
		if (set_text(r, &c->path, v->p, used, whole, e) < 0)
			return -1;
	}
	return parse_path_eol(r, whole, v->p + used + 1, v->n - used - 1,
			      &c->path2, e);
}

/* ---- pending comments ---- */

static int queue_comment(struct stream_reader *r, const struct line *ln,
			 struct err *e)
{
	if (buf_add(&r->comments, ln->p + 1, ln->n - 1) < 0 ||
	    buf_addch(&r->comments, '\n') < 0)
		return FAIL_LINE(r, e, ln, "expected fewer comment lines inside one command");
	take_line(r);
	return 0;
}

static int pop_comment(struct stream_reader *r, struct stream_cmd *c)
{
	const char *p = r->comments.ptr + r->comments_pos;
	const char *nl = memchr(p, '\n', r->comments.len - r->comments_pos);
	size_t n = (size_t)(nl - p);

	c->kind = STREAM_COMMENT;
	buf_set(&c->text, p, n);	/* n < STREAM_MAX_LINE: cannot fail */
	r->comments_pos += n + 1;
	if (r->comments_pos == r->comments.len) {
		buf_reset(&r->comments);
		r->comments_pos = 0;
	}
	return 1;
}

/*
 * The next line inside a command. fast-import skips `#` lines wherever it
 * reads a command line (docs/FORMATS.md 1); we keep them and deliver them as
 * STREAM_COMMENT items after the current one. Returns 1, 0 at EOF, -1.
 */
static int peek_cmdline(struct stream_reader *r, struct line *ln, struct err *e)
{
	for (;;) {
		int rc = peek_line(r, ln, e);
		if (rc <= 0)
			return rc;
		if (ln->n == 0 || ln->p[0] != '#') {
			if (memchr(ln->p, '\0', ln->n))
				return FAIL_LINE(r, e, ln,
						 "expected a command line without NUL bytes");
			return 1;
		}
		if (queue_comment(r, ln, e) < 0)
			return -1;
	}
}

/* Like peek_cmdline, but the line must be there. */
static int need_cmdline(struct stream_reader *r, struct line *ln,
			const char *what, struct err *e)
{
	int rc = peek_cmdline(r, ln, e);

	if (rc == 0)
		return fail(r, e, cur_off(r), NULL, "expected %s, stream ended", what);
	return rc < 0 ? -1 : 0;
}

/* ---- data ---- */

/* Parses "data <n>" or "data <<delim" and arms the pending data. */
static int start_data(struct stream_reader *r, const struct line *ln,
		      uint64_t max, uint64_t *len, struct err *e)
{
	struct line v;

	if (!starts(ln, "data "))
		return FAIL_LINE(r, e, ln, "expected data <count> or data <<<delimiter>");
	v = after(ln, "data ");
	if (v.n >= 2 && v.p[0] == '<' && v.p[1] == '<') {
		if (buf_set(&r->delim, v.p + 2, v.n - 2) < 0)
			return FAIL_LINE(r, e, ln, "expected a shorter delimiter");
		r->dstate = DS_DELIM;
		r->dline_start = 1;
		*len = UINT64_MAX;
		take_line(r);
		return 0;
	}
	if (parse_u64(v.p, v.n, UINT64_MAX, len) < 0)
		return FAIL_LINE(r, e, ln, "expected a decimal byte count after data");
	if (*len > max)
		return FAIL_LINE(r, e, ln, "expected a byte count of at most %llu",
				 (unsigned long long)max);
	r->dstate = DS_COUNT;
	r->dtotal = r->dleft = *len;
	take_line(r);
	return 0;
}

static int count_chunk(struct stream_reader *r, const char **chunk, size_t *len,
		       struct err *e)
{
	size_t have;
	int rc;

	if (r->dleft == 0) {
		r->dstate = DS_NONE;
		return skip_optional_lf(r, e);
	}
	rc = ensure(r, 1, e);
	if (rc < 0)
		return -1;
	if (rc == 0)
		return fail(r, e, cur_off(r), NULL,
			    "expected %llu bytes of data, stream ended after %llu",
			    (unsigned long long)r->dtotal,
			    (unsigned long long)(r->dtotal - r->dleft));
	have = r->end - r->pos;
	if ((uint64_t)have > r->dleft)
		have = (size_t)r->dleft;
	*chunk = r->buf + r->pos;
	*len = have;
	advance(r, have);
	r->dleft -= have;
	return 1;
}

/* At q, a line start: 1 if the delimiter line is there, 0 if not, -1 if
 * the buffer does not yet hold enough to tell. */
static int delim_at(const struct stream_reader *r, size_t q)
{
	size_t dl = r->delim.len, have = r->end - q;

	if (have >= dl + 1)
		return memcmp(r->buf + q, r->delim.ptr, dl) == 0 &&
		       r->buf[q + dl] == '\n';
	if (!r->eof)
		return -1;
	/* a last line without LF ends the data as getline would */
	return have == dl && memcmp(r->buf + q, r->delim.ptr, dl) == 0;
}

/* Scans whole lines from pos up to the delimiter or the buffer's end. */
static size_t delim_scan(struct stream_reader *r, int *at_delim)
{
	size_t q = r->pos;
	int start = r->dline_start;

	*at_delim = 0;
	while (q < r->end) {
		if (start) {
			int d = delim_at(r, q);
			if (d != 0) {
				*at_delim = d > 0;
				break;
			}
			start = 0;
		}
		const char *nl = memchr(r->buf + q, '\n', r->end - q);
		if (!nl) {
			q = r->end;
			break;
		}
		q = (size_t)(nl - r->buf) + 1;
		start = 1;
	}
	r->dline_start = start;
	return q - r->pos;
}

static int delim_chunk(struct stream_reader *r, const char **chunk, size_t *len,
		       struct err *e)
{
	for (;;) {
		int at_delim, rc;
		size_t n = delim_scan(r, &at_delim);

		if (n > 0) {
			*chunk = r->buf + r->pos;
			*len = n;
			advance(r, n);
			return 1;
		}
		if (at_delim) {
			advance(r, r->end - r->pos < r->delim.len + 1 ?
					   r->delim.len : r->delim.len + 1);
			r->dstate = DS_NONE;
			return skip_optional_lf(r, e);
		}
		rc = fill(r, e);
		if (rc < 0)
			return -1;
		if (rc == 0 && r->pos == r->end)
			return fail(r, e, cur_off(r), NULL,
				    "expected a line \"%.80s\" ending the data, stream ended",
				    r->delim.ptr);
	}
}

int stream_reader_data(struct stream_reader *r, const char **chunk,
		       size_t *len, struct err *e)
{
	if (r->state == RS_FAILED)
		return err_set(e, ERR_STREAM, "stream %s: stopped after an earlier error",
			       r->name);
	switch (r->dstate) {
	case DS_COUNT:
		return count_chunk(r, chunk, len, e);
	case DS_DELIM:
		return delim_chunk(r, chunk, len, e);
	default:
		return 0;
	}
}

int stream_reader_data_into(struct stream_reader *r, char *dst, size_t cap,
			    size_t *got, struct err *e)
{
	const char *chunk;
	size_t have;
	ssize_t n;
	int rc;

	/* large byte-counted data with nothing buffered: read(2) straight
	 * into the caller's memory, saving a copy per byte */
	if (r->dstate == DS_COUNT && r->fd >= 0 && r->state != RS_FAILED &&
	    r->pos == r->end && r->dleft >= 65536 && cap >= 65536) {
		have = (uint64_t)cap < r->dleft ? cap : (size_t)r->dleft;
		r->base += r->end;
		r->pos = r->end = 0;
		do
			n = read(r->fd, dst, have);
		while (n < 0 && errno == EINTR);
		if (n < 0) {
			r->state = RS_FAILED;
			return err_errno(e, ERR_IO, "stream %s: read failed at byte offset %llu",
					 r->name, (unsigned long long)r->base);
		}
		if (n == 0)
			return fail(r, e, cur_off(r), NULL,
				    "expected %llu bytes of data, stream ended after %llu",
				    (unsigned long long)r->dtotal,
				    (unsigned long long)(r->dtotal - r->dleft));
		r->base += (uint64_t)n;
		r->dleft -= (uint64_t)n;
		*got = (size_t)n;
		return 1;
	}
	if (r->dstate == DS_COUNT && r->pos < r->end && r->dleft) {
		have = r->end - r->pos;
		if ((uint64_t)have > r->dleft)
			have = (size_t)r->dleft;
		if (have > cap)
			have = cap;
		memcpy(dst, r->buf + r->pos, have);
		advance(r, have);
		r->dleft -= have;
		*got = have;
		return 1;
	}
	rc = stream_reader_data(r, &chunk, &have, e);
	if (rc <= 0)
		return rc;
	if (have > cap)
		return err_set(e, ERR_STREAM, "stream %s: internal: chunk larger than room",
			       r->name);
	memcpy(dst, chunk, have);
	*got = have;
	return 1;
}

static int skip_data(struct stream_reader *r, struct err *e)
{
	const char *p;
	size_t n;
	int rc;

	while ((rc = stream_reader_data(r, &p, &n, e)) > 0)
		;
	return rc;
}

/* Reads a commit or tag message whole, after its data line. */
static int read_message(struct stream_reader *r, const struct line *ln,
			struct buf *msg, struct err *e)
{
	uint64_t len, start;
	const char *p;
	size_t n;
	int rc;

	if (start_data(r, ln, STREAM_MAX_TEXT, &len, e) < 0)
		return -1;
	start = cur_off(r);
	while ((rc = stream_reader_data(r, &p, &n, e)) > 0)
		if (buf_add(msg, p, n) < 0)
			return fail(r, e, start, NULL,
				    "expected a message of at most %zu bytes",
				    STREAM_MAX_TEXT);
	return rc;
}

/* ---- items ---- */

static void cmd_clear(struct stream_cmd *c)
{
	c->kind = 0;
	c->mark = 0;
	buf_reset(&c->original_oid);
	buf_reset(&c->ref);
	buf_reset(&c->author);
	buf_reset(&c->committer);
	buf_reset(&c->tagger);
	buf_reset(&c->encoding);
	c->has_author = c->has_tagger = c->has_encoding = 0;
	buf_reset(&c->message);
	c->from.kind = STREAM_REF_NONE;
	c->from.mark = 0;
	buf_reset(&c->from.name);
	c->nmerges = 0;
	c->mode = 0;
	c->dataref.kind = STREAM_REF_NONE;
	c->dataref.mark = 0;
	buf_reset(&c->dataref.name);
	buf_reset(&c->path);
	buf_reset(&c->path2);
	buf_reset(&c->text);
	c->has_data = 0;
	c->data_len = 0;
}

void stream_cmd_init(struct stream_cmd *c)
{
	memset(c, 0, sizeof(*c));
	buf_init(&c->original_oid, STREAM_MAX_LINE);
	buf_init(&c->ref, STREAM_MAX_LINE);
	buf_init(&c->author, STREAM_MAX_LINE);
	buf_init(&c->committer, STREAM_MAX_LINE);
	buf_init(&c->tagger, STREAM_MAX_LINE);
	buf_init(&c->encoding, STREAM_MAX_LINE);
	buf_init(&c->message, STREAM_MAX_TEXT);
	buf_init(&c->from.name, STREAM_MAX_LINE);
	buf_init(&c->dataref.name, STREAM_MAX_LINE);
	buf_init(&c->path, STREAM_MAX_LINE);
	buf_init(&c->path2, STREAM_MAX_LINE);
	buf_init(&c->text, STREAM_MAX_LINE);
}

void stream_cmd_release(struct stream_cmd *c)
{
	size_t i;

	if (!c)
		return;
	buf_release(&c->original_oid);
	buf_release(&c->ref);
	buf_release(&c->author);
	buf_release(&c->committer);
	buf_release(&c->tagger);
	buf_release(&c->encoding);
	buf_release(&c->message);
	buf_release(&c->from.name);
	for (i = 0; i < c->merges_alloc; i++)
		buf_release(&c->merges[i].name);
	free(c->merges);
	buf_release(&c->dataref.name);
	buf_release(&c->path);
	buf_release(&c->path2);
	buf_release(&c->text);
	stream_cmd_init(c);
}

static struct stream_ref *add_merge(struct stream_cmd *c)
{
	size_t i, n;

	if (c->nmerges == c->merges_alloc) {
		n = c->merges_alloc ? c->merges_alloc * 2 : 4;
		c->merges = xrealloc(c->merges, n * sizeof(*c->merges));
		for (i = c->merges_alloc; i < n; i++) {
			memset(&c->merges[i], 0, sizeof(c->merges[i]));
			buf_init(&c->merges[i].name, STREAM_MAX_LINE);
		}
		c->merges_alloc = n;
	}
	return &c->merges[c->nmerges++];
}

/*
 * Optional "mark :<n>" then "original-oid <any>" (blob, commit). Leaves
 * the next line in *ln.
 */
static int opt_mark(struct stream_reader *r, struct line *ln, const char *what,
		    struct stream_cmd *c, struct err *e)
{
	if (!(starts(ln, "mark ") || is(ln, "mark")))
		return 0;
	if (!starts(ln, "mark ") || parse_markref(ln->p + 5, ln->n - 5, &c->mark) < 0)
		return FAIL_LINE(r, e, ln, "expected mark :<number >= 1>");
	take_line(r);
	return need_cmdline(r, ln, what, e);
}

static int opt_original_oid(struct stream_reader *r, struct line *ln,
			    const char *what, struct stream_cmd *c,
			    struct err *e)
{
	struct line v;

	if (!starts(ln, "original-oid "))
		return 0;
	v = after(ln, "original-oid ");
	if (set_text(r, &c->original_oid, v.p, v.n, ln, e) < 0)
		return -1;
	take_line(r);
	return need_cmdline(r, ln, what, e);
}

/* "<kw><value>" into b if ln starts with kw; *has set. Next line in *ln. */
static int opt_header(struct stream_reader *r, struct line *ln, const char *kw,
		      const char *what, struct buf *b, int *has,
		      struct err *e)
{
	struct line v;

	if (!starts(ln, kw))
		return 0;
	v = after(ln, kw);
	if (set_text(r, b, v.p, v.n, ln, e) < 0)
		return -1;
	*has = 1;
	take_line(r);
	return need_cmdline(r, ln, what, e);
}

static int parse_blob(struct stream_reader *r, struct stream_cmd *c,
		      struct err *e)
{
	struct line ln;

	c->kind = STREAM_BLOB;
	take_line(r);
	if (need_cmdline(r, &ln, "blob data", e) < 0 ||
	    opt_mark(r, &ln, "blob data", c, e) < 0 ||
	    opt_original_oid(r, &ln, "blob data", c, e) < 0 ||
	    start_data(r, &ln, STREAM_MAX_DATA, &c->data_len, e) < 0)
		return -1;
	c->has_data = 1;
	return 1;
}

/* from? merge* after a commit message; EOF is fine here. */
static int parse_parents(struct stream_reader *r, struct stream_cmd *c,
			 struct err *e)
{
	struct line ln, v;
	size_t bytes = 0;
	int rc = peek_cmdline(r, &ln, e);

	if (rc > 0 && starts(&ln, "from ")) {
		v = after(&ln, "from ");
		if (parse_commitish(r, &ln, &v, &c->from, e) < 0)
			return -1;
		take_line(r);
		rc = peek_cmdline(r, &ln, e);
	}
	while (rc > 0 && starts(&ln, "merge ")) {
		bytes += ln.n;
		if (c->nmerges == MAX_MERGES || bytes > MAX_MERGE_BYTES)
			return FAIL_LINE(r, e, &ln, "expected at most %d merge lines "
					 "of at most %zu bytes in all",
					 MAX_MERGES, MAX_MERGE_BYTES);
		v = after(&ln, "merge ");
		if (parse_commitish(r, &ln, &v, add_merge(c), e) < 0)
			return -1;
		take_line(r);
		rc = peek_cmdline(r, &ln, e);
	}
	return rc < 0 ? -1 : 0;
}

static int parse_commit(struct stream_reader *r, const struct line *first,
			struct stream_cmd *c, struct err *e)
{
	static const char what[] = "the rest of the commit";
	struct line ln, v = after(first, "commit ");
	int has_committer = 0;

	c->kind = STREAM_COMMIT;
	if (v.n == 0)
		return FAIL_LINE(r, e, first, "expected a ref name after commit");
	if (set_text(r, &c->ref, v.p, v.n, first, e) < 0)
		return -1;
	take_line(r);
	if (need_cmdline(r, &ln, what, e) < 0 || opt_mark(r, &ln, what, c, e) < 0 ||
	    opt_original_oid(r, &ln, what, c, e) < 0 ||
	    opt_header(r, &ln, "author ", what, &c->author, &c->has_author, e) < 0 ||
	    opt_header(r, &ln, "committer ", what, &c->committer, &has_committer, e) < 0)
		return -1;
	if (!has_committer)
		return FAIL_LINE(r, e, &ln, "expected committer <ident>");
	if (opt_header(r, &ln, "encoding ", what, &c->encoding, &c->has_encoding, e) < 0 ||
	    read_message(r, &ln, &c->message, e) < 0 || parse_parents(r, c, e) < 0)
		return -1;
	r->state = RS_CHANGES;
	return 1;
}

static int parse_tag(struct stream_reader *r, const struct line *first,
		     struct stream_cmd *c, struct err *e)
{
	static const char what[] = "the rest of the tag";
	struct line ln, v = after(first, "tag ");

	c->kind = STREAM_TAG;
	if (v.n == 0)
		return FAIL_LINE(r, e, first, "expected a tag name after tag");
	if (set_text(r, &c->ref, v.p, v.n, first, e) < 0)
		return -1;
	take_line(r);
	if (need_cmdline(r, &ln, what, e) < 0 || opt_mark(r, &ln, what, c, e) < 0)
		return -1;
	if (!starts(&ln, "from "))
		return FAIL_LINE(r, e, &ln, "expected from <commit-ish> in a tag");
	v = after(&ln, "from ");
	if (parse_commitish(r, &ln, &v, &c->from, e) < 0)
		return -1;
	take_line(r);
	/* original-oid comes after from in a tag (docs/FORMATS.md 2.5) */
	if (need_cmdline(r, &ln, what, e) < 0 ||
	    opt_original_oid(r, &ln, what, c, e) < 0 ||
	    opt_header(r, &ln, "tagger ", what, &c->tagger, &c->has_tagger, e) < 0 ||
	    read_message(r, &ln, &c->message, e) < 0)
		return -1;
	return 1;
}

static int parse_reset(struct stream_reader *r, const struct line *first,
		       struct stream_cmd *c, struct err *e)
{
	struct line ln, v = after(first, "reset ");
	int rc;

	c->kind = STREAM_RESET;
	if (v.n == 0)
		return FAIL_LINE(r, e, first, "expected a ref name after reset");
	if (set_text(r, &c->ref, v.p, v.n, first, e) < 0)
		return -1;
	take_line(r);
	rc = peek_cmdline(r, &ln, e);
	if (rc > 0 && starts(&ln, "from ")) {
		v = after(&ln, "from ");
		if (parse_commitish(r, &ln, &v, &c->from, e) < 0)
			return -1;
		take_line(r);
		rc = peek_cmdline(r, &ln, e);
	}
	if (rc > 0 && ln.n == 0)
		take_line(r);	/* the optional LF */
	return rc < 0 ? -1 : 1;
}

static int parse_alias(struct stream_reader *r, struct stream_cmd *c,
		       struct err *e)
{
	static const char what[] = "the rest of the alias";
	struct line ln, v;
	int rc;

	c->kind = STREAM_ALIAS;
	take_line(r);
	if (need_cmdline(r, &ln, what, e) < 0)
		return -1;
	if (!starts(&ln, "mark ") || parse_markref(ln.p + 5, ln.n - 5, &c->mark) < 0)
		return FAIL_LINE(r, e, &ln, "expected mark :<number >= 1>");
	take_line(r);
	if (need_cmdline(r, &ln, what, e) < 0)
		return -1;
	if (!starts(&ln, "to "))
		return FAIL_LINE(r, e, &ln, "expected to <commit-ish>");
	v = after(&ln, "to ");
	if (parse_commitish(r, &ln, &v, &c->from, e) < 0)
		return -1;
	take_line(r);
	rc = peek_cmdline(r, &ln, e);
	if (rc > 0 && ln.n == 0)
		take_line(r);
	return rc < 0 ? -1 : 1;
}

static int parse_text_cmd(struct stream_reader *r, const struct line *ln,
			  const char *kw, enum stream_kind kind,
			  struct stream_cmd *c, struct err *e)
{
	struct line v = after(ln, kw);

	c->kind = kind;
	if (set_text(r, &c->text, v.p, v.n, ln, e) < 0)
		return -1;
	take_line(r);
	if (kind == STREAM_PROGRESS && skip_optional_lf(r, e) < 0)
		return -1;
	return 1;
}

static int parse_get_mark(struct stream_reader *r, const struct line *ln,
			  struct stream_cmd *c, struct err *e)
{
	struct line v = after(ln, "get-mark ");

	c->kind = STREAM_GET_MARK;
	if (parse_markref(v.p, v.n, &c->mark) < 0)
		return FAIL_LINE(r, e, ln, "expected get-mark :<number >= 1>");
	take_line(r);
	return 1;
}

static int parse_cat_blob(struct stream_reader *r, const struct line *ln,
			  struct stream_cmd *c, struct err *e)
{
	struct line v = after(ln, "cat-blob ");

	c->kind = STREAM_CAT_BLOB;
	if (parse_dataref(r, ln, v.p, v.n, 0, &c->dataref, e) < 0)
		return -1;
	take_line(r);
	return 1;
}

/* ls SP [<dataref> SP] <path>; a quoted path alone only inside a commit. */
static int parse_ls(struct stream_reader *r, const struct line *ln,
		    struct stream_cmd *c, struct err *e)
{
	struct line v = after(ln, "ls ");
	const char *sp;
	size_t n;

	c->kind = STREAM_LS;
	if (v.n > 0 && v.p[0] == '"') {
		if (r->state != RS_CHANGES)
			return FAIL_LINE(r, e, ln, "expected ls <dataref> <path> outside a commit");
	} else {
		sp = memchr(v.p, ' ', v.n);
		if (!sp)
			return FAIL_LINE(r, e, ln, "expected ls [<dataref> ]<path>");
		n = (size_t)(sp - v.p);
		if (parse_dataref(r, ln, v.p, n, 0, &c->dataref, e) < 0)
			return -1;
		v.p += n + 1;
		v.n -= n + 1;
	}
	if (parse_path_eol(r, ln, v.p, v.n, &c->path, e) < 0)
		return -1;
	take_line(r);
	return 1;
}

static int top_command(struct stream_reader *r, const struct line *ln,
		       struct stream_cmd *c, struct err *e)
{
	if (is(ln, "blob"))
		return parse_blob(r, c, e);
	if (starts(ln, "commit "))
		return parse_commit(r, ln, c, e);
	if (starts(ln, "tag "))
		return parse_tag(r, ln, c, e);
	if (starts(ln, "reset "))
		return parse_reset(r, ln, c, e);
	if (starts(ln, "feature "))
		return parse_text_cmd(r, ln, "feature ", STREAM_FEATURE, c, e);
	if (starts(ln, "option "))
		return parse_text_cmd(r, ln, "option ", STREAM_OPTION, c, e);
	if (starts(ln, "progress "))
		return parse_text_cmd(r, ln, "progress ", STREAM_PROGRESS, c, e);
	if (is(ln, "checkpoint")) {
		c->kind = STREAM_CHECKPOINT;
		take_line(r);
		return skip_optional_lf(r, e) < 0 ? -1 : 1;
	}
	if (is(ln, "done")) {
		c->kind = STREAM_DONE;
		take_line(r);
		r->state = RS_END;	/* whatever follows is ignored */
		return 1;
	}
	if (is(ln, "alias"))
		return parse_alias(r, c, e);
	if (starts(ln, "get-mark "))
		return parse_get_mark(r, ln, c, e);
	if (starts(ln, "cat-blob "))
		return parse_cat_blob(r, ln, c, e);
	if (starts(ln, "ls "))
		return parse_ls(r, ln, c, e);
	return FAIL_LINE(r, e, ln, "expected a command (blob, commit, tag, reset, "
				   "feature, option, progress, checkpoint, done, "
				   "alias, get-mark, cat-blob, ls or #comment)");
}

/* ---- file changes (docs/FORMATS.md 2.3) ---- */

static int parse_mode(const char *p, size_t n, uint32_t *mode)
{
	uint32_t v = 0;
	size_t i;

	/* ten octal digits fit in 30 bits; fast-import's set needs six */
	if (n == 0 || n > 10)
		return -1;
	for (i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '7')
			return -1;
		v = (v << 3) | (uint32_t)(p[i] - '0');
	}
	switch (v) {
	case 0644: case 0755: case 0100644: case 0100755:
	case 0120000: case 0160000: case 040000:
		*mode = v;
		return 0;
	default:
		return -1;
	}
}

/* The data line after `M ... inline` or `N inline ...`. */
static int inline_data(struct stream_reader *r, struct stream_cmd *c,
		       struct err *e)
{
	struct line ln;

	if (c->dataref.kind != STREAM_REF_INLINE)
		return 1;
	if (need_cmdline(r, &ln, "inline data", e) < 0 ||
	    start_data(r, &ln, STREAM_MAX_DATA, &c->data_len, e) < 0)
		return -1;
	c->has_data = 1;
	return 1;
}

static int parse_m(struct stream_reader *r, const struct line *ln,
		   struct stream_cmd *c, struct err *e)
{
	struct line v = after(ln, "M ");
	const char *sp = memchr(v.p, ' ', v.n);
	size_t n;

	c->kind = STREAM_MODIFY;
	if (!sp || parse_mode(v.p, (size_t)(sp - v.p), &c->mode) < 0)
		return FAIL_LINE(r, e, ln, "expected a mode (644, 755, 100644, 100755, "
					   "120000, 160000 or 040000) after M");
	n = (size_t)(sp - v.p) + 1;
	v.p += n;
	v.n -= n;
	sp = memchr(v.p, ' ', v.n);
	if (!sp)
		return FAIL_LINE(r, e, ln, "expected M <mode> <dataref> <path>");
	n = (size_t)(sp - v.p);
	if (parse_dataref(r, ln, v.p, n, 1, &c->dataref, e) < 0)
		return -1;
	if (c->dataref.kind == STREAM_REF_INLINE &&
	    (c->mode == 0160000 || c->mode == 040000))
		return FAIL_LINE(r, e, ln, "expected a mark or id for a gitlink or directory, not inline");
	if (parse_path_eol(r, ln, v.p + n + 1, v.n - n - 1, &c->path, e) < 0)
		return -1;
	take_line(r);
	return inline_data(r, c, e);
}

static int parse_n(struct stream_reader *r, const struct line *ln,
		   struct stream_cmd *c, struct err *e)
{
	struct line v = after(ln, "N ");
	const char *sp = memchr(v.p, ' ', v.n);
	struct line rest;
	size_t n;

	c->kind = STREAM_NOTEMODIFY;
	if (!sp)
		return FAIL_LINE(r, e, ln, "expected N <dataref> <commit-ish>");
	n = (size_t)(sp - v.p);
	if (parse_dataref(r, ln, v.p, n, 1, &c->dataref, e) < 0)
		return -1;
	rest.p = sp + 1;
	rest.n = v.n - n - 1;
	rest.off = v.off + n + 1;
	if (parse_commitish(r, ln, &rest, &c->from, e) < 0)
		return -1;
	take_line(r);
	return inline_data(r, c, e);
}

static int change_item(struct stream_reader *r, const struct line *ln,
		       struct stream_cmd *c, struct err *e)
{
	struct line v;

	if (starts(ln, "M "))
		return parse_m(r, ln, c, e);
	if (starts(ln, "D ")) {
		c->kind = STREAM_DELETE;
		v = after(ln, "D ");
		if (parse_path_eol(r, ln, v.p, v.n, &c->path, e) < 0)
			return -1;
		take_line(r);
		return 1;
	}
	if (starts(ln, "C ") || starts(ln, "R ")) {
		c->kind = ln->p[0] == 'C' ? STREAM_COPY : STREAM_RENAME;
		v = after(ln, "C ");
		if (parse_two_paths(r, ln, &v, c, e) < 0)
			return -1;
		take_line(r);
		return 1;
	}
	if (is(ln, "deleteall")) {
		c->kind = STREAM_DELETEALL;
		take_line(r);
		return 1;
	}
	if (starts(ln, "N "))
		return parse_n(r, ln, c, e);
	if (starts(ln, "ls "))
		return parse_ls(r, ln, c, e);
	if (starts(ln, "cat-blob "))
		return parse_cat_blob(r, ln, c, e);
	/* anything else ends the change list and is read as a command */
	c->kind = STREAM_COMMIT_END;
	r->state = RS_TOP;
	return 1;
}

/* ---- the dispatcher ---- */

static int comment_item(struct stream_reader *r, const struct line *ln,
			struct stream_cmd *c)
{
	c->kind = STREAM_COMMENT;
	buf_set(&c->text, ln->p + 1, ln->n - 1);	/* fits: a line */
	take_line(r);
	return 1;
}

static int next_in_changes(struct stream_reader *r, struct stream_cmd *c,
			   struct err *e)
{
	struct line ln;
	int rc = peek_line(r, &ln, e);

	if (rc < 0)
		return -1;
	if (rc == 0 || ln.n == 0) {
		/* EOF ends the change list as in fast-import (docs/FORMATS.md 1.1:
		 * a message without final LF may be the last thing written) */
		if (rc > 0)
			take_line(r);
		c->kind = STREAM_COMMIT_END;
		r->state = RS_TOP;
		return 1;
	}
	if (ln.p[0] == '#')
		return comment_item(r, &ln, c);
	if (memchr(ln.p, '\0', ln.n))
		return FAIL_LINE(r, e, &ln, "expected a command line without NUL bytes");
	return change_item(r, &ln, c, e);
}

static int next_at_top(struct stream_reader *r, struct stream_cmd *c,
		       struct err *e)
{
	struct line ln;
	int rc = peek_line(r, &ln, e);

	if (rc < 0)
		return -1;
	if (rc == 0) {
		r->state = RS_END;
		return 0;
	}
	if (ln.n > 0 && ln.p[0] == '#')
		return comment_item(r, &ln, c);
	if (memchr(ln.p, '\0', ln.n))
		return FAIL_LINE(r, e, &ln, "expected a command line without NUL bytes");
	return top_command(r, &ln, c, e);
}

int stream_reader_next(struct stream_reader *r, struct stream_cmd *c,
		       struct err *e)
{
	if (r->state == RS_FAILED)
		return err_set(e, ERR_STREAM, "stream %s: stopped after an earlier error",
			       r->name);
	if (skip_data(r, e) < 0)
		return -1;
	cmd_clear(c);
	if (r->comments_pos < r->comments.len)
		return pop_comment(r, c);
	switch (r->state) {
	case RS_TOP:
		return next_at_top(r, c, e);
	case RS_CHANGES:
		return next_in_changes(r, c, e);
	default:
		return 0;
	}
}

uint64_t stream_reader_offset(const struct stream_reader *r)
{
	return cur_off(r);
}

/* ---- look-ahead ---- */

/*
 * Reads what the input has ready, without waiting, while fewer than cap
 * unparsed bytes are held; the buffer grows for it (up to cap and a read
 * more). 1 when bytes arrived, else 0: nothing ready, the buffer is full,
 * or EOF (then eof is set, as fill would). A read error is left to the
 * parse proper, which meets it at its next read.
 */
static int read_ready(struct stream_reader *r, size_t cap)
{
	struct pollfd pfd = { r->fd, POLLIN, 0 };
	size_t room;
	ssize_t n;

	if (r->fd < 0 || r->eof || r->end - r->pos >= cap)
		return 0;
	if (poll(&pfd, 1, 0) <= 0 || !(pfd.revents & (POLLIN | POLLHUP)))
		return 0;
	if (r->cap - r->end < READ_BUF_SIZE / 4) {
		if (r->pos >= r->cap / 2) {
			memmove(r->own, r->own + r->pos, r->end - r->pos);
			r->base += r->pos;
			r->end -= r->pos;
			r->pos = 0;
		} else if (r->cap < cap + READ_BUF_SIZE) {
			r->cap = 2 * r->cap < cap + READ_BUF_SIZE ?
				 2 * r->cap : cap + READ_BUF_SIZE;
			r->own = xrealloc(r->own, r->cap);
			r->buf = r->own;
		}
	}
	room = r->cap - r->end;
	if (room == 0)
		return 0;
	do
		n = read(r->fd, r->own + r->end, room);
	while (n < 0 && errno == EINTR);
	if (n == 0)
		r->eof = 1;
	if (n <= 0)
		return 0;
	r->end += (size_t)n;
	return 1;
}

/*
 * One line the look-ahead passed: 1 when it is an `M <mode> <id> <path>`
 * line (then in c), 0 for any other. `data` lines arm the skip over their
 * bytes; a `blob` command (a stream with data: its M lines name marks,
 * and reading it ahead would only copy it) or delimited data stops the
 * look-ahead for good.
 */
static int ahead_line(struct stream_reader *r, const struct line *ln,
		      struct stream_cmd *c)
{
	struct line v;
	const char *sp, *why;
	size_t n, used;

	if (starts(ln, "data ")) {
		v = after(ln, "data ");
		if (parse_u64(v.p, v.n, STREAM_MAX_DATA, &r->ahead_skip) < 0)
			r->ahead_stop = 1;
		return 0;
	}
	if (is(ln, "blob")) {
		r->ahead_stop = 1;
		return 0;
	}
	if (starts(ln, "commit ")) {
		v = after(ln, "commit ");
		if (buf_set(&r->ahead_ref, v.p, v.n) < 0)
			buf_reset(&r->ahead_ref);
		return 0;
	}
	if (!starts(ln, "M "))
		return 0;
	v = after(ln, "M ");
	sp = memchr(v.p, ' ', v.n);
	if (!sp || parse_mode(v.p, (size_t)(sp - v.p), &c->mode) < 0)
		return 0;
	n = (size_t)(sp - v.p) + 1;
	v.p += n;
	v.n -= n;
	sp = memchr(v.p, ' ', v.n);
	if (!sp || !is_oid(v.p, (size_t)(sp - v.p)))
		return 0;
	n = (size_t)(sp - v.p);
	if (buf_set(&c->dataref.name, v.p, n) < 0)
		return 0;
	c->dataref.kind = STREAM_REF_OID;
	v.p += n + 1;
	v.n -= n + 1;
	if (v.n > 0 && v.p[0] == '"') {
		if (unquote(v.p, v.n, &c->path, &used, &why) < 0 || used != v.n)
			return 0;
	} else if (buf_set(&c->path, v.p, v.n) < 0) {
		return 0;
	}
	c->kind = STREAM_MODIFY;
	return buf_set(&c->ref, r->ahead_ref.ptr, r->ahead_ref.len) == 0;
}

int stream_reader_ahead(struct stream_reader *r, size_t cap,
			struct stream_cmd *c, uint64_t *off)
{
	for (;;) {
		size_t at, have, n;
		struct line ln;
		const char *nl;

		if (r->ahead_stop || r->state == RS_FAILED || r->state == RS_END)
			return 0;
		if (r->ahead < cur_off(r)) {
			/* the parse got here first: go on from where it is,
			 * knowing no commit until the next one */
			if (r->dstate != DS_NONE)
				return 0;
			r->ahead = cur_off(r);
			r->ahead_skip = 0;
			buf_reset(&r->ahead_ref);
		}
		at = (size_t)(r->ahead - r->base);
		have = r->end - at;
		if (r->ahead_skip) {
			n = (uint64_t)have < r->ahead_skip ? have : (size_t)r->ahead_skip;
			r->ahead += n;
			r->ahead_skip -= n;
			if (r->ahead_skip && !read_ready(r, cap))
				return 0;
			continue;
		}
		nl = memchr(r->buf + at, '\n', have);
		if (!nl) {
			if (have > STREAM_MAX_LINE)
				r->ahead_stop = 1;
			if (!read_ready(r, cap))
				return 0;
			continue;
		}
		ln.p = r->buf + at;
		ln.n = (size_t)(nl - ln.p);
		ln.off = r->ahead;
		r->ahead += ln.n + 1;
		cmd_clear(c);
		if (ahead_line(r, &ln, c)) {
			*off = ln.off;
			return 1;
		}
	}
}

/* ---- construction ---- */

static struct stream_reader *reader_alloc(const char *name)
{
	struct stream_reader *r = xcalloc(1, sizeof(*r));

	r->name = xstrdup(name ? name : "<input>");
	r->state = RS_TOP;
	buf_init(&r->delim, STREAM_MAX_LINE);
	buf_init(&r->comments, MAX_PENDING_COMMENTS);
	buf_init(&r->ahead_ref, STREAM_MAX_LINE);
	return r;
}

struct stream_reader *stream_reader_new_fd(int fd, const char *name)
{
	struct stream_reader *r = reader_alloc(name);

	r->fd = fd;
	r->own = xmalloc(READ_BUF_SIZE);
	r->buf = r->own;
	r->cap = READ_BUF_SIZE;
	return r;
}

struct stream_reader *stream_reader_new_mem(const void *p, size_t len,
					    const char *name)
{
	struct stream_reader *r = reader_alloc(name);

	r->fd = -1;
	r->buf = len ? p : "";
	r->cap = r->end = len;
	r->eof = 1;
	return r;
}

void stream_reader_free(struct stream_reader *r)
{
	if (!r)
		return;
	free(r->name);
	free(r->own);
	buf_release(&r->delim);
	buf_release(&r->comments);
	buf_release(&r->ahead_ref);
	free(r);
}
