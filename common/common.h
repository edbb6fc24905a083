/*
 * common.h - the base every folder may use: allocation wrappers, checked
 * size arithmetic, the byte buffer, the error context and a full write.
 * Nothing else.
 *
 * struct buf invariants (after git's strbuf): ptr is never NULL, ptr[len]
 * is always NUL, the content is binary-safe (use len, never strlen), and len
 * never exceeds max. A failing buf call leaves the buffer as it was.
 */
#ifndef MIGRATE_COMMON_H
#define MIGRATE_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/*
 * What cannot be recovered from (memory exhausted, no hash context): the
 * command line sets the routine that tells the user and exits (status 3);
 * without one, or if it returns, die() aborts. Nothing below the command
 * line exits on its own.
 */
void set_die_routine(void (*fn)(const char *msg));
void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

/*
 * A line for the user that is not an error (a rule that never matches, ids
 * no longer followed): formatted whole, without its newline, and handed to
 * the routine the command line sets; dropped without one.
 */
void set_warning_routine(void (*fn)(const char *line));
void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Allocation: these die on exhaustion (the one place dying is right). */
void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
/* Copies n bytes and appends a NUL. */
char *xmemdup(const void *p, size_t n);

/* Checked arithmetic: 0 on success, -1 on overflow (*out untouched). */
static inline int size_add(size_t a, size_t b, size_t *out)
{
	size_t r;
	if (__builtin_add_overflow(a, b, &r))
		return -1;
	*out = r;
	return 0;
}

static inline int size_mul(size_t a, size_t b, size_t *out)
{
	size_t r;
	if (__builtin_mul_overflow(a, b, &r))
		return -1;
	*out = r;
	return 0;
}

static inline int u64_to_size(uint64_t v, size_t *out)
{
	if (v > SIZE_MAX)
		return -1;
	*out = (size_t)v;
	return 0;
}

/*
 * Parses exactly len bytes of decimal digits (no sign, no space, at least
 * one digit) into *out. Returns -1 when a byte is not a digit or the value
 * exceeds max; *out is then untouched.
 */
int parse_u64(const char *s, size_t len, uint64_t max, uint64_t *out);

/* Writes the n bytes of in as 2n lowercase hex digits and a NUL into out
 * (2n + 1 bytes): object ids, SHA-256 digests, hash directories. */
void hex_encode(const unsigned char *in, size_t n, char *out);
/* Reads 2n hex digits (either case) into the n bytes of out: 0, or -1 at
 * a byte that is not a hex digit (out is then partly written). */
int hex_decode(const char *in, size_t n, unsigned char *out);

/* Writes all n bytes of p to fd, riding out EINTR and short writes: 0, or
 * -1 with errno set (EIO when write wrote nothing). */
int write_full(int fd, const void *p, size_t n);

/*
 * Grows the pipe behind fd to 1 MiB (the unprivileged maximum) so that
 * the processes on either end run ahead of each other by more than 64 KiB:
 * fewer context switches and no idle reader. Best effort: anything that
 * is not a pipe is left alone, and a refusal is no error.
 */
void pipe_widen(int fd);

/* ---- byte buffer ---- */

#define BUF_MAX_DEFAULT ((size_t)1 << 30) /* 1 GiB: texts, never blobs */

struct buf {
	char *ptr;
	size_t len, cap, max;
};

extern char buf_empty[1];
#define BUF_INIT(m) { buf_empty, 0, 0, (m) }

void buf_init(struct buf *b, size_t max);
/* Frees the memory; the buffer is empty and reusable afterwards. NULL ok. */
void buf_release(struct buf *b);
/* Ensures room for extra more bytes. -1 if len + extra would exceed max. */
int buf_grow(struct buf *b, size_t extra);
int buf_add(struct buf *b, const void *p, size_t n);
int buf_adds(struct buf *b, const char *s);
int buf_addch(struct buf *b, int c);
int buf_printf(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int buf_vprintf(struct buf *b, const char *fmt, va_list ap);
int buf_set(struct buf *b, const void *p, size_t n);
static inline void buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->cap)	/* buf_empty, which every thread shares, is not written */
		b->ptr[0] = '\0';
}
/* Hands the allocation to the caller (who frees it); b becomes empty. */
char *buf_detach(struct buf *b, size_t *len);
int buf_eq(const struct buf *b, const char *s);
int buf_starts(const struct buf *b, const char *prefix);

/* ---- errors ---- */

/* Kinds double as exit statuses (docs/DESIGN.md: Exit status). */
enum err_kind {
	ERR_NONE = 0,
	ERR_USAGE = 1,	/* usage or rule-file error */
	ERR_STREAM = 2, /* malformed input stream */
	ERR_IO = 3,	/* I/O, store or subprocess failure */
};

/*
 * Set once, where the problem is seen; callers pass it up unchanged. The
 * message names the place itself (file, line, column or byte offset).
 */
struct err {
	enum err_kind kind;
	char msg[1024];
	/* the problem is at the input's current position, which the code
	 * that raised it does not know: the stream's reader adds it (one
	 * place, rewrite/engine/engine.c) */
	int at_input;
};

#define ERR_INIT { ERR_NONE, { 0 }, 0 }

/* Records the error and returns -1, so sites can `return err_set(...)`. */
int err_set(struct err *e, enum err_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Like err_set, appending ": strerror(errno)". */
int err_errno(struct err *e, enum err_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Puts the formatted text before e's message (kind and at_input kept);
 * returns -1. The only code that rewrites a message already set. */
int err_prefix(struct err *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Marks e as being at the input's current position; returns -1. */
int err_at_input(struct err *e);

/* ---- files (file.c) ---- */

/* "dir/name", the caller's to free. */
char *path_join(const char *dir, const char *name);
/* Whether path names something (through links). */
int file_exists(const char *path);
/* Appends the whole file to out. 1 read, 0 missing, -1 error (e set). */
int file_read(const char *path, struct buf *out, struct err *e);
/* Makes a rename inside dir durable. 0 or -1 (errno). */
int dir_fsync(const char *dir);

/*
 * Atomic replacement of path by data: written to a temp file in the same
 * directory, fsynced, then renamed. file_write_prepare leaves the temp file
 * (its name in *tmp, caller frees) so that several files can be committed
 * together with file_write_commit, or dropped with unlink. Only where the
 * user pointed: a symbolic link is followed (the link stays, its target is
 * replaced); a character device or a pipe is opened and written in place
 * at the commit (its data waits in $TMPDIR until then); a folder, a block
 * device or a socket is refused.
 */
int file_write_prepare(const char *path, const struct buf *data, char **tmp,
		       struct err *e);
int file_write_commit(const char *tmp, const char *path, struct err *e);
/* Whether path names (through links) a device or a pipe: a map there is
 * written but never read back. */
int path_is_special(const char *path);
/* Both at once: path replaced by data (0, or -1 with e set). */
int file_write(const char *path, const struct buf *data, struct err *e);
/* Whether name (a folder's entry) is a temp file file_write_prepare
 * names, "<name>.tmp-XXXXXX": one a run that ended did not commit. */
int file_is_temp(const char *name);
/* Whether s is exactly the six characters mkstemp puts for "XXXXXX". */
int file_is_mkstemp_tail(const char *s);

#endif
