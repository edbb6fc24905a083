/*
 * stream.h - reading the fast-export grammar and writing fast-import
 * commands (docs/FORMATS.md sections 1-4).
 *
 * The reader turns a byte stream into a sequence of items. A commit is
 * delivered as STREAM_COMMIT (its headers, message and parents), then one
 * item per file change or in-commit query, then STREAM_COMMIT_END. Data
 * that can be large (blob content, `M ... inline` content) is never held
 * whole: after an item with has_data set, the caller pulls it in chunks
 * with stream_reader_data(); stream_reader_next() skips what was not read.
 * Commit and tag messages are small texts and arrive whole in `message`.
 *
 * The writer produces canonical fast-import commands: data always in the
 * byte-count form, paths quoted exactly when fast-export would quote them.
 * Re-writing what was read yields a stream from which fast-import builds
 * the same objects.
 */
#ifndef MIGRATE_STREAM_H
#define MIGRATE_STREAM_H

#include <stdint.h>
#include <stdio.h>

#include "../common/common.h"

#define STREAM_MAX_LINE ((size_t)1 << 20)	/* a command line */
#define STREAM_MAX_TEXT ((size_t)1 << 30)	/* a commit or tag message */
#define STREAM_MAX_DATA ((uint64_t)1 << 46)	/* a blob (64 TiB) */

enum stream_kind {
	STREAM_BLOB = 1,	/* mark?, original_oid?, data */
	STREAM_COMMIT,		/* ref, mark?, original_oid?, author?,
				   committer, encoding?, message, from?, merges */
	STREAM_MODIFY,		/* M: mode, dataref, path; has_data if inline */
	STREAM_DELETE,		/* D: path */
	STREAM_COPY,		/* C: path (source), path2 (destination) */
	STREAM_RENAME,		/* R: path (source), path2 (destination) */
	STREAM_DELETEALL,
	STREAM_NOTEMODIFY,	/* N: dataref, from (the annotated commit-ish);
				   has_data if inline */
	STREAM_COMMIT_END,	/* end of a commit's change list */
	STREAM_TAG,		/* ref (the name, without refs/tags/), mark?,
				   from, original_oid?, tagger?, message */
	STREAM_RESET,		/* ref, from? */
	STREAM_FEATURE,		/* text: everything after "feature " */
	STREAM_OPTION,		/* text: everything after "option " */
	STREAM_PROGRESS,	/* text: everything after "progress " */
	STREAM_CHECKPOINT,
	STREAM_DONE,		/* the reader returns 0 (end) after this */
	STREAM_ALIAS,		/* mark, from (the "to" commit-ish) */
	STREAM_GET_MARK,	/* mark */
	STREAM_CAT_BLOB,	/* dataref */
	STREAM_LS,		/* dataref? (kind NONE if absent), path */
	STREAM_COMMENT,		/* text: the line after '#' */
};

/* A reference to an object: commit-ish (from, merge, to) or dataref. */
enum stream_ref_kind {
	STREAM_REF_NONE = 0,
	STREAM_REF_MARK,	/* ":<n>": mark */
	STREAM_REF_OID,		/* 40 hex digits (or 64): name holds them */
	STREAM_REF_NAME,	/* anything else (branch name, rev expression) */
	STREAM_REF_INLINE,	/* dataref "inline" */
};

struct stream_ref {
	enum stream_ref_kind kind;
	uint64_t mark;
	struct buf name;	/* the text as written (for OID and NAME) */
};

struct stream_cmd {
	enum stream_kind kind;

	uint64_t mark;			/* 0: none */
	struct buf original_oid;	/* len 0: none */
	struct buf ref;			/* commit/reset ref; tag name */
	struct buf author;		/* ident value after "author " */
	struct buf committer;
	struct buf tagger;
	struct buf encoding;
	int has_author, has_tagger, has_encoding;
	struct buf message;		/* commit or tag message, whole */

	struct stream_ref from;		/* kind NONE when absent */
	struct stream_ref *merges;	/* nmerges entries */
	size_t nmerges, merges_alloc;

	/* file changes and queries */
	uint32_t mode;			/* as parsed (octal); M only */
	struct stream_ref dataref;	/* M, N, cat-blob, ls */
	struct buf path;		/* unquoted bytes */
	struct buf path2;		/* C/R destination, unquoted */

	struct buf text;		/* feature/option/progress/comment */

	/* pending data (blob, M inline, N inline) */
	int has_data;
	uint64_t data_len;		/* byte count; UINT64_MAX if <<delim */
};

void stream_cmd_init(struct stream_cmd *c);
void stream_cmd_release(struct stream_cmd *c);

struct stream_reader;

/*
 * A reader over fd (not owned: the caller closes it) or over a memory
 * block (borrowed, must outlive the reader). name appears in messages.
 */
struct stream_reader *stream_reader_new_fd(int fd, const char *name);
struct stream_reader *stream_reader_new_mem(const void *p, size_t len,
					    const char *name);
void stream_reader_free(struct stream_reader *r);

/*
 * Reads the next item into *c (previous contents replaced). Returns 1 for
 * an item, 0 at the end of the stream (EOF at a command boundary, or after
 * `done`), -1 on error with e set (kind ERR_STREAM for malformed input:
 * the message names the byte offset, quotes the offending line and says
 * what was expected; ERR_IO for a read failure). Unread data of the
 * previous item is skipped first.
 */
int stream_reader_next(struct stream_reader *r, struct stream_cmd *c,
		       struct err *e);

/*
 * Pulls the next chunk of the pending data of the last item. *chunk points
 * into the reader's buffer and stays valid until the next reader call.
 * Returns 1 with *len > 0, 0 when the data is exhausted (the optional LF
 * after it is consumed then), -1 on error (truncated data and the like).
 */
int stream_reader_data(struct stream_reader *r, const char **chunk,
		       size_t *len, struct err *e);

/*
 * Like stream_reader_data, but copies into dst (cap bytes of room) and
 * reads large byte-counted data straight from the fd into dst, sparing a
 * copy. Returns 1 with *got > 0, 0 at the end, -1 on error. Delimited
 * data gives chunks of up to a line: cap must be at least 1 MiB there.
 */
int stream_reader_data_into(struct stream_reader *r, char *dst, size_t cap,
			    size_t *got, struct err *e);

/* Byte offset of the next unread byte (for messages). */
uint64_t stream_reader_offset(const struct stream_reader *r);

/*
 * The look-ahead: the `M <mode> <id> <path>` lines further on in the
 * input, before stream_reader_next gets there, so that work on them can
 * start early. Returns 1 with the next such line after the last one it
 * returned (c: kind STREAM_MODIFY, mode, dataref (an id), path unquoted,
 * ref the branch of the commit it is in, empty when the look-ahead did
 * not see that commit's line; *off the line's byte offset), 0 when none
 * is there yet. It reads what the input has ready without waiting, while
 * fewer than cap bytes are buffered ahead of the parse (the reader's
 * memory then grows to about cap), and skips what it cannot read: it
 * never fails, never blocks, and changes nothing the parse sees. It
 * gives up (0 from then on) at a `blob` command: a stream with data
 * names its blobs by mark, and reading it ahead would only copy it.
 * The lines are hints: a caller acts on one only as the parse would.
 */
int stream_reader_ahead(struct stream_reader *r, size_t cap,
			struct stream_cmd *c, uint64_t *off);

/* ---- writer ---- */

struct stream_writer;

/* A writer to fd (not owned), buffered. */
struct stream_writer *stream_writer_new_fd(int fd, const char *name);
/* A writer into memory (tests); stream_writer_mem() shows the bytes. */
struct stream_writer *stream_writer_new_mem(void);
const struct buf *stream_writer_mem(const struct stream_writer *w);
void stream_writer_free(struct stream_writer *w);

/*
 * Writes a whole item that has no pending data (everything except
 * STREAM_BLOB, and STREAM_MODIFY / STREAM_NOTEMODIFY with inline data).
 * For STREAM_COMMIT it writes the headers, message and parents; the
 * changes follow as their own items and STREAM_COMMIT_END writes the LF
 * that ends the change list. Returns 0 or -1 (ERR_IO).
 */
int stream_write_cmd(struct stream_writer *w, const struct stream_cmd *c,
		     struct err *e);

/*
 * Starts an item whose data follows: STREAM_BLOB (writes "blob", mark,
 * original-oid and "data <len>"), STREAM_MODIFY / STREAM_NOTEMODIFY with
 * an inline dataref (the M/N line and "data <len>"). The caller then
 * writes exactly len bytes with stream_write_bytes and calls
 * stream_write_data_end (which adds the LF fast-export puts after data).
 */
int stream_write_data_begin(struct stream_writer *w,
			    const struct stream_cmd *c, uint64_t len,
			    struct err *e);
int stream_write_bytes(struct stream_writer *w, const void *p, size_t n,
		       struct err *e);
int stream_write_data_end(struct stream_writer *w, struct err *e);

/* Writes raw text as is (e.g. "done\n"). */
int stream_write_raw(struct stream_writer *w, const void *p, size_t n,
		     struct err *e);
int stream_writer_flush(struct stream_writer *w, struct err *e);
/*
 * Holding output back (fd writers; memory ones ignore it): from
 * stream_writer_hold on, the bytes not written yet (those in the buffer
 * too) stay in memory; stream_writer_release writes those before
 * position upto (a stream_writer_pos taken earlier), and stops holding
 * once everything given is out. stream_writer_held: the bytes held now.
 */
uint64_t stream_writer_pos(const struct stream_writer *w);
int stream_writer_hold(struct stream_writer *w);
int stream_writer_release(struct stream_writer *w, uint64_t upto,
			  struct err *e);
size_t stream_writer_held(const struct stream_writer *w);
/* Items with inline data (M or N inline) written so far. */
uint64_t stream_writer_inlines(const struct stream_writer *w);
/* A memory writer forgets what it was given after position pos (a
 * stream_writer_pos taken earlier, outside any data). 0, or -1 for an
 * fd writer or a position it is not past. */
int stream_writer_cut(struct stream_writer *w, uint64_t pos);

/*
 * Appends path to out quoted as fast-export quotes it (docs/FORMATS.md 2.4):
 * C-quoted if a byte needs it (control bytes, '"', '\\', DEL, >= 0x80),
 * else in plain quotes if it has a space, else raw.
 */
int stream_quote_path(struct buf *out, const void *path, size_t len);

/*
 * Appends path to out as `git ls-files` shows it with core.quotePath=true
 * (git's quote_c_style): C-quoted in double quotes if a byte needs it
 * (as above: \a \b \t \n \v \f \r \" \\, other control bytes, DEL and
 * bytes >= 0x80 as three octal digits), else raw; a space alone is not
 * quoted. For what people read: reports and messages.
 */
int stream_show_path(struct buf *out, const void *path, size_t len);

/* ---- what git fast-import accepts (fastimport.c) ---- */

/* 1 when fast-import takes name as a branch (check_refname_format with
 * REFNAME_ALLOW_ONELEVEL), 0 when it dies "Branch name doesn't conform". */
int stream_refname_ok(const char *name, size_t len);

/*
 * Checks an ident value (after "author ", "committer ", "tagger ") as
 * fast-import's parse_ident: "name <email> " and the date after it.
 * Sets *date_at to where the date begins. 0, or -1 with *why set.
 */
int stream_ident_split(const char *p, size_t n, size_t *date_at,
		       const char **why);

/* 1 when the date is one fast-import's --date-format=raw takes (strict:
 * timezone at most 1400) or raw-permissive (strict 0); 0 otherwise. */
int stream_raw_date_ok(const char *p, size_t n, int strict);

#endif
