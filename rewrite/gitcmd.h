/*
 * gitcmd.h - running git child processes for `migrate run` and `migrate
 * remap`: argv arrays only, never a shell. Folder-internal.
 */
#ifndef MIGRATE_RW_GITCMD_H
#define MIGRATE_RW_GITCMD_H

#include <stdarg.h>
#include <sys/types.h>

#include "../common/common.h"
#include "oid.h"

/* A growable, NULL-terminated argument vector. Every string is owned. */
struct gitargv {
	char **v;
	size_t n, alloc;
};

#define GITARGV_INIT { NULL, 0, 0 }

/* Appends a copy of s (or the formatted string). Never fails. */
void gitargv_push(struct gitargv *a, const char *s);
void gitargv_pushf(struct gitargv *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Frees every string; the vector is empty and reusable. */
void gitargv_clear(struct gitargv *a);

/*
 * Starts `git -C dir ARGS...` (dir NULL: no -C) with stdin from in_fd and
 * stdout to out_fd (-1: /dev/null for stdin, inherited stdout); stderr is
 * inherited so git's own messages reach the user. The child gets SIGPIPE
 * back at its default. Returns 0 with *pid set, or -1 with e set.
 */
int gitcmd_spawn(pid_t *pid, const char *dir, const struct gitargv *args,
		 int in_fd, int out_fd, struct err *e);

/*
 * The absolute git directory of the repository at dir (NULL: the current
 * directory), in *gitdir (owned by the caller). Not a repository: an
 * ERR_USAGE error in our words, quoting git's own reason; git's stderr
 * never reaches the terminal. Returns 0 or -1 with e set.
 */
int gitcmd_git_dir(const char *dir, char **gitdir, struct err *e);

/*
 * Waits for pid. Returns its exit status (0-255), or 128 + the signal that
 * killed it; -1 with e set if waitpid itself failed.
 */
int gitcmd_wait(pid_t pid, struct err *e);

/*
 * Runs `git -C dir ARGS...` to its end: in (may be NULL) is written to its
 * stdin, then its stdout is appended to out (NULL: inherited). Returns the
 * exit status as gitcmd_wait does, or -1 with e set.
 */
int gitcmd_run(const char *dir, const struct gitargv *args,
	       const struct buf *in, struct buf *out, struct err *e);

/* Like gitcmd_run, but a non-zero status is an error (ERR_IO) naming the
 * command. Returns 0 or -1. */
int gitcmd_ok(const char *dir, const struct gitargv *args,
	      const struct buf *in, struct buf *out, struct err *e);

/*
 * gitcmd_run (check 0) or gitcmd_ok (check 1) with the arguments given
 * as a NULL-terminated list of strings, no stdin.
 */
int gitcmd_runl(const char *dir, int check, struct buf *out, struct err *e,
		...) __attribute__((sentinel));
int gitcmd_vrunl(const char *dir, int check, struct buf *out, struct err *e,
		 va_list ap);

/*
 * The date as git's parse_date() reads it (what `git fast-import
 * --date-format=rfc2822` stores), asked of `git var GIT_COMMITTER_IDENT`
 * with GIT_COMMITTER_DATE=date: "<seconds> <+|-hhmm>" in *raw. A date git
 * refuses (or an empty one) is ERR_STREAM; git failing otherwise, ERR_IO.
 * git's stderr never reaches the terminal. Returns 0 or -1 with e set.
 */
int gitcmd_parse_date(const char *date, struct buf *raw, struct err *e);

/* "git -C DIR ARGS..." for messages (the first few arguments). */
void gitcmd_describe(struct buf *out, const char *dir,
		     const struct gitargv *args);

/* Removes trailing newlines from b. */
void gitcmd_chomp(struct buf *b);

/* ---- refs ---- */

struct gitref {
	char *name;
	struct oid id;		/* what the ref holds */
	struct oid commit;	/* the commit it peels to (one tag level) */
	int has_commit;
};

/* Sorted by name (strcmp). */
struct gitrefs {
	struct gitref *v;
	size_t n;
};

#define GITREFS_INIT { NULL, 0 }

/*
 * The refs of repository dir under prefix (NULL: all), from git
 * for-each-ref; refs under refs/migrate/ only when prefix names them.
 * Returns 0, or -1 with e set.
 */
int gitrefs_list(struct gitrefs *out, const char *dir, const char *prefix,
		 struct err *e);
void gitrefs_free(struct gitrefs *r);
/* The ref called name, or NULL. Borrowed from r. */
const struct gitref *gitrefs_find(const struct gitrefs *r, const char *name);

#endif
