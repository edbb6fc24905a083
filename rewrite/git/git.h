/*
 * git.h - git plumbing, the contract of rewrite/git/: object ids and
 * hashing (oid.c), child processes (gitcmd.c, the only code that starts
 * one), the git cat-file client (catfile.c), object reading (odb.c,
 * pack.c), commit-map, marks and ref-map files (maps.c), in-memory
 * trees with their ids and raw tree objects (tree.c), and the index's
 * stat data (index.c). Nothing here knows the stream or the rules.
 */
#ifndef MIGRATE_GIT_H
#define MIGRATE_GIT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <stdarg.h>
#include <sys/types.h>

#include "../../common/common.h"

/*
 * oid.c: object ids and git's object hashing (docs/FORMATS.md 6.1), for the
 * rewrite engine only. SHA-1 comes from OpenSSL's libcrypto.
 */
#define OID_RAW 20
#define OID_HEX 40

struct oid {
	unsigned char hash[OID_RAW];
};

extern const struct oid oid_null;
extern const struct oid oid_empty_tree;

static inline int oid_eq(const struct oid *a, const struct oid *b)
{
	return memcmp(a->hash, b->hash, OID_RAW) == 0;
}

static inline int oid_is_null(const struct oid *a)
{
	return oid_eq(a, &oid_null);
}

/* Writes 40 lowercase hex digits and a NUL into out[41]; returns out. */
char *oid_hex(const struct oid *o, char *out);
/* Parses exactly 40 hex digits (either case). 0 or -1. */
int oid_from_hex(struct oid *o, const char *hex, size_t len);

enum obj_type { OBJ_NONE = 0, OBJ_BLOB, OBJ_TREE, OBJ_COMMIT, OBJ_TAG };

const char *obj_type_name(enum obj_type t);
enum obj_type obj_type_parse(const char *s, size_t len);

/*
 * Incremental object hashing: sha1("<type> <len>\0" + body). The body
 * must then be fed exactly len bytes before obj_hash_final.
 */
struct obj_hash;
struct obj_hash *obj_hash_new(void);
void obj_hash_free(struct obj_hash *h);
void obj_hash_begin(struct obj_hash *h, enum obj_type t, uint64_t len);
void obj_hash_update(struct obj_hash *h, const void *p, size_t n);
void obj_hash_final(struct obj_hash *h, struct oid *out);

/* One-shot: the id of an object with this body. */
void obj_hash_buf(struct obj_hash *h, enum obj_type t, const void *body,
		  size_t len, struct oid *out);

/*
 * gitcmd.c: running git child processes, the only code of migrate that
 * starts one (tests/integration/one_spawner.sh checks it): argv arrays
 * only, never a shell, never popen().
 */
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
/* The same, with the "NAME=value" strings of env (NULL-terminated, may be
 * NULL) added to the child's environment. */
int gitcmd_spawn_env(pid_t *pid, const char *dir, const struct gitargv *args,
		     const char *const *env, int in_fd, int out_fd,
		     struct err *e);

/*
 * A long-lived child `git -C dir ARGS...` spoken to through pipes: *to is
 * the write end of its stdin, *from the read end of its stdout, *errfd the
 * read end of its stderr (non-blocking: git's own messages, never the
 * terminal; for the caller to quote when the child fails, so the child
 * must write only a line or two there; errfd NULL: its stderr is ours, and
 * git's messages reach the user). The three are close-on-exec, so
 * no other child of ours holds them open; the child gets SIGPIPE back at
 * its default. The caller closes the three and waits for *pid
 * (gitcmd_wait). Returns 0, or -1 with e set and nothing left open.
 */
int gitcmd_spawn_piped(pid_t *pid, const char *dir,
		       const struct gitargv *args, int *to, int *from,
		       int *errfd, struct err *e);

/*
 * The absolute git directory of the repository at dir (NULL: the current
 * directory), in *gitdir (owned by the caller). Not a repository: an
 * ERR_USAGE error in our words, quoting git's own reason; git's stderr
 * never reaches the terminal. Returns 0 or -1 with e set.
 */
int gitcmd_git_dir(const char *dir, char **gitdir, struct err *e);

/* A repository at dir (NULL: the current directory's) that uses another
 * object format than sha1 is an ERR_USAGE error naming it (migrate reads
 * and computes sha1 ids only, for now); no repository there is not an
 * error. 0 or -1. */
int gitcmd_sha1_only(const char *dir, struct err *e);
/* The same for the common directory (`git rev-parse --path-format=absolute
 * --git-common-dir`: the main repository's git directory when dir is a
 * linked work tree), where git lfs keeps lfs/objects. */
int gitcmd_common_dir(const char *dir, char **common, struct err *e);

/* The absolute object directory of the repository at dir (NULL: the
 * current directory) and its object format ("sha1", "sha256"), both owned
 * by the caller; git's stderr never reaches the terminal. 0, or -1 with e
 * set (ERR_USAGE: not a repository). */
int gitcmd_object_dir(const char *dir, char **objdir, char **format,
		      struct err *e);

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
 * A git command started now and read later, so that several run side by
 * side, or beside our own work: `git -C dir ARGS...` (a NULL-terminated
 * list) with no stdin, its stdout into a pipe made as roomy as the system
 * allows (a listing of many refs seldom waits for its reader), its stderr
 * ours. gitcmd_start cannot fail: a command that could not be started
 * keeps its error for gitcmd_collect. Each job started is collected once.
 */
struct gitcmd_job {
	pid_t pid;		/* -1: not started, err says why */
	int from;		/* the read end of its stdout */
	char *dir;
	struct gitargv args;
	struct err err;
};

void gitcmd_start(struct gitcmd_job *j, const char *dir, ...)
	__attribute__((sentinel));
void gitcmd_vstart(struct gitcmd_job *j, const char *dir, va_list ap);
/* Its output to the end, appended to out, then its exit status as
 * gitcmd_run returns it (check 1: a non-zero status is an error naming
 * the command, as gitcmd_ok). -1 with e set. */
int gitcmd_collect(struct gitcmd_job *j, int check, struct buf *out,
		   struct err *e);
/* The id a job printed (`rev-parse --verify`), collected: null when it
 * failed or printed none. */
void gitcmd_collect_oid(struct gitcmd_job *j, struct oid *id);

/*
 * The date as git's parse_date() reads it (what `git fast-import
 * --date-format=rfc2822` stores), asked of `git var GIT_COMMITTER_IDENT`
 * with GIT_COMMITTER_DATE=date: "<seconds> <+|-hhmm>" in *raw. A date git
 * refuses (or an empty one) is ERR_STREAM; git failing otherwise, ERR_IO.
 * git's stderr never reaches the terminal. Returns 0 or -1 with e set.
 */
int gitcmd_parse_date(const char *date, struct buf *raw, struct err *e);

/* Sets e to "git -C DIR ARGS... failed (exit status N)" (the first few
 * arguments) and returns -1. */
int gitcmd_failed(struct err *e, const char *dir, const struct gitargv *args,
		  int status);

/* Removes trailing newlines from b. */
void gitcmd_chomp(struct buf *b);

/*
 * Shows the manual page (`man PAGE`, stdin, stdout and stderr ours), as
 * `git help` does, when man(1) is there and finds the page installed
 * (`man -w PAGE`). Returns 0 when man showed it, -1 when there is no man,
 * no such page, or man failed: the caller then says it another way.
 */
int gitcmd_man(const char *page);

/* ---- the index (index.c) ---- */

/*
 * git's index file, versions 2-4 (docs/FORMATS.md 9.6), opened to set the
 * stat data of entries whose files were written by another hand than
 * git's. gitindex_open creates <gitdir>/index.lock exclusively, as git
 * does (another git process holding it is an ERR_IO error), and reads
 * <gitdir>/index; a malformed index is an ERR_IO error naming the byte.
 * gitindex_commit writes the index back to the lock (only the stat fields
 * changed, its trailer recomputed) and renames it into place; its mtime
 * is made later than every mtime gitindex_set_stat was given, so no such
 * entry is racily clean (where git compares nanoseconds).
 * gitindex_free releases the lock of an index not committed.
 */
struct gitindex;
struct stat;

struct gitindex_entry {
	const char *path;	/* borrowed from the index */
	uint32_t mode;
	struct oid oid;
	unsigned stage;
	int skip_worktree;
};

int gitindex_open(struct gitindex **out, const char *gitdir, struct err *e);
size_t gitindex_count(const struct gitindex *ix);
/* Whether the index has the extension sig ("link": a split index). */
int gitindex_has_ext(const struct gitindex *ix, const char sig[4]);
void gitindex_entry(const struct gitindex *ix, size_t i,
		    struct gitindex_entry *out);
void gitindex_set_stat(struct gitindex *ix, size_t i, const struct stat *st);
int gitindex_commit(struct gitindex *ix, struct err *e);
void gitindex_free(struct gitindex *ix);

/* ---- refs ---- */

struct gitref {
	char *name;
	struct oid id;		/* what the ref holds */
	struct oid commit;	/* the commit it peels to (one tag level) */
	int has_commit;
	/* a symbolic ref (refs/remotes/origin/HEAD): id is its target's,
	 * which is listed and moved under its own name */
	int symbolic;
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
/* The same in two steps, the listing running in between (gitcmd_start):
 * the same prefix both times. */
void gitrefs_start(struct gitcmd_job *j, const char *dir, const char *prefix);
int gitrefs_collect(struct gitrefs *out, struct gitcmd_job *j,
		    const char *prefix, struct err *e);
void gitrefs_free(struct gitrefs *r);
/* The ref called name, or NULL. Borrowed from r. */
const struct gitref *gitrefs_find(const struct gitrefs *r, const char *name);

/*
 * catfile.c: one `git -C dir cat-file --batch-command` child, the one
 * client of that protocol. Requests are buffered and answered in order,
 * so a caller may write many ahead of the answers it reads and git and
 * migrate work at once (what is ahead must stay under the pipe's 64 KiB:
 * a request that waits for git while git waits for its answers to be
 * read is a deadlock). A failure's message names the repository, says
 * what went wrong with git's own words, then hint (may be NULL; borrowed
 * for the client's life). After an error the client is of no more use
 * but to be closed.
 */
struct catfile;
/* Starts the child: 0, or -1 with e set and nothing left. */
int catfile_start(struct catfile **out, const char *dir, const char *hint,
		  struct err *e);
/* Writes the request "<cmd> <name>" (cmd: "contents" or "info"), sent
 * when an answer is read: 0 or -1. */
int catfile_ask(struct catfile *c, const char *cmd, const char *name,
		struct err *e);
/* The next answer's header: 1 with *type, *oid, *size; 0 when the name
 * is missing or ambiguous; -1 with e set (ERR_USAGE for a sha256
 * repository). A "contents" answer is followed by its body, read whole
 * with catfile_body or in pieces with catfile_read before the next
 * header. */
int catfile_header(struct catfile *c, enum obj_type *type, struct oid *oid,
		   uint64_t *size, struct err *e);
/* The body into body (up to its max): 0 or -1. */
int catfile_body(struct catfile *c, struct buf *body, struct err *e);
/* Up to cap bytes of the body: their number, 0 at its end, -1. */
ssize_t catfile_read(struct catfile *c, void *dst, size_t cap, struct err *e);
/* Ends the child (its stdin closed) and frees c: 0, or -1 with e set when
 * git failed (e NULL: not asked). NULL is fine. */
int catfile_close(struct catfile *c, struct err *e);

/*
 * odb.c: reading objects from a git repository through one long-lived
 * `git cat-file --batch-command` process (started on first use).
 */
struct odb;

/* dir: the repository (NULL: the one of the current directory). Never
 * fails: the process starts, and problems show, on first use. */
struct odb *odb_new(const char *dir);

/*
 * Who reads objects named by their id: auto (the default) tries the
 * native reader (pack.c) first and asks git cat-file for what it does not
 * read, with a one-line note (warning(), unless quiet) the first time;
 * git: git cat-file alone; native: the native reader alone (an object it
 * cannot read is an error). Names that are not ids always go to git.
 */
enum odb_reader { ODB_READER_AUTO = 0, ODB_READER_GIT, ODB_READER_NATIVE };
/* "auto", "git", "native": 0, or -1 for another word. */
int odb_reader_parse(const char *s, enum odb_reader *out);
void odb_set_reader(struct odb *db, enum odb_reader reader, int quiet);
void odb_free(struct odb *db);
const char *odb_name(const struct odb *db);
/* Whether db's directory is a git repository at all (asked of git once,
 * quietly): a full-data stream may come with none behind it. */
int odb_is_repository(struct odb *db);
/* The bytes of object contents read so far (for progress). */
uint64_t odb_bytes_read(const struct odb *db);

/*
 * Looks up name (an object id or any revision expression git accepts).
 * Returns 1 and fills *type, *oid and (if body is not NULL) the whole
 * content into body; 0 if the repository has no such object; -1 on error
 * (no repository, process died, sha256 repository) with e set.
 */
int odb_read(struct odb *db, const char *name, enum obj_type *type,
	     struct oid *oid, struct buf *body, struct err *e);

/* Like odb_read without the content, with the object's size. */
int odb_info(struct odb *db, const char *name, enum obj_type *type,
	     struct oid *oid, uint64_t *size, struct err *e);

/*
 * Streaming read of a blob of any size: odb_open_stream answers like
 * odb_read (1 found, 0 missing, -1 error) and fills *size; the caller
 * then reads exactly *size bytes with odb_stream_read (which returns the
 * number of bytes read, 0 at the end, -1 on error) before any other call.
 */
int odb_open_stream(struct odb *db, const char *name, enum obj_type *type,
		    struct oid *oid, uint64_t *size, struct err *e);
ssize_t odb_stream_read(struct odb *db, void *dst, size_t cap,
			struct err *e);

/*
 * Calls fn with the id and the on-disk size (`%(objectsize:disk)`: in its
 * pack, deltas included, or its loose file) of every blob of the
 * repository at dir (NULL: the current directory's), through one
 * `git cat-file --batch-all-objects --batch-check`. 0, or -1 with e set
 * (git failed; fn may have been called for some blobs).
 */
int odb_disk_sizes(const char *dir,
		   void (*fn)(void *ctx, const struct oid *id, uint64_t disk),
		   void *ctx, struct err *e);

/*
 * pack.c: git's object store read without git (docs/FORMATS.md 9): loose
 * objects, packs through their .idx (version 2) or the multi-pack-index,
 * the alternates (recursively), delta chains through a bounded cache of
 * recent bases (64 MiB), large whole objects inflated in chunks. Every
 * object is hashed and compared with its id: a corrupt store gives an
 * error naming the file and offset, never wrong bytes. SHA-1 only.
 *
 * Functions that look an object up return 1 found, 0 not in this store,
 * -1 on a corrupt store (ERR_IO), -2 when the store holds something this
 * reader does not read (an .idx of another version, a loose object in
 * git's old binary format, a delta result over the limit): e says what,
 * and `git cat-file` is the one to ask (odb.c does).
 * One struct pack_odb is used by one thread at a time.
 */
struct pack_odb;
struct pack_stream;

/* Opens the object directory objdir (and its alternates). 0, -1 (e
 * set), or -2 when it holds what this reader does not know (see above). */
int pack_odb_open(struct pack_odb **out, const char *objdir, struct err *e);
void pack_odb_free(struct pack_odb *db);
/* The largest object built in memory (delta results; default 1 GiB). */
void pack_odb_set_limit(struct pack_odb *db, uint64_t limit);

int pack_odb_info(struct pack_odb *db, const struct oid *id,
		  enum obj_type *type, uint64_t *size, struct err *e);
/* The whole content of id into body (within body->max). */
int pack_odb_read(struct pack_odb *db, const struct oid *id,
		  enum obj_type *type, struct buf *body, struct err *e);
/*
 * A stream of id's content (*out, freed with pack_stream_close, before
 * db). pack_stream_read returns bytes read, 0 at the end (once the
 * content hashed to id: a mismatch is -1 there), -1 on error. Objects
 * built from deltas are checked before their first byte; whole ones from
 * 256 KiB on are inflated as they are read, so memory stays flat.
 */
int pack_odb_open_stream(struct pack_odb *db, const struct oid *id,
			 struct pack_stream **out, enum obj_type *type,
			 uint64_t *size, struct err *e);
ssize_t pack_stream_read(struct pack_stream *s, void *dst, size_t cap,
			 struct err *e);
void pack_stream_close(struct pack_stream *s);

/*
 * packw.c: one blob stored as a pack of its own with its index, written as
 * the blob streams in (a thread of migrate's stores it while git
 * fast-import stores the rest). begin (size: exactly what write will be
 * given; level: zlib's), write..., finish (id: the blob's; the files are
 * fsynced, still under temp names), commit (1: given their names, git
 * sees the object, and name gets the pack's path without ".pack"; 0: a
 * pack of that name, so of these very bytes, was there already and is
 * left alone), free (temp files not given a name are removed). One
 * struct packw per thread.
 */
struct packw;
int packw_begin(struct packw **out, const char *objects_dir, uint64_t size,
		int level, struct err *e);
int packw_write(struct packw *w, const void *p, size_t n, struct err *e);
int packw_finish(struct packw *w, const struct oid *id, struct err *e);
int packw_commit(struct packw *w, struct buf *name, struct err *e);
void packw_free(struct packw *w);
/*
 * packw.c too: a pack of many objects (packm), written to its temp file as
 * they come, whole or as OFS_DELTAs, and its index at the end. Memory
 * holds the index's table only (an id, a CRC-32 and an offset an object,
 * 32 bytes). begin (level: zlib's); add (an object stored whole, deflated)
 * or add_delta (stored as delta, which delta_create made against base, an
 * object added to this pack before; the entry's size is the delta's, the
 * object's own is in the delta): id is the caller's, not checked against
 * the bytes; 0, or -1 with e set (a base not in the pack; after a write
 * failure the pack takes no more). An id the pack has already is not added
 * again (0). commit: the object count into the
 * header, the checksum (the file read back), the index (ids sorted, CRCs,
 * offsets with the 64-bit table past 2 GiB), both fsynced and given their
 * names, the pack first: 1 with name = the pack's path without ".pack",
 * 0 when a pack of that name (so of these very bytes) was there already
 * and is left alone, -1 with e set; no object may be added after it. free
 * removes the temp files not given a name. One struct packm per thread;
 * its temp files are packw_is_temp's.
 */
struct packm;
int packm_begin(struct packm **out, const char *objects_dir, int level,
		struct err *e);
int packm_add(struct packm *w, enum obj_type type, const struct oid *id,
	      const void *data, size_t len, struct err *e);
int packm_add_delta(struct packm *w, const struct oid *id,
		    const struct oid *base, const void *delta,
		    size_t delta_len, struct err *e);
/* The objects added, and the pack's bytes written so far. */
uint32_t packm_count(const struct packm *w);
uint64_t packm_bytes(const struct packm *w);
/* Whether id was added (and so may be a delta's base). */
int packm_has(const struct packm *w, const struct oid *id);
int packm_commit(struct packm *w, struct buf *name, struct err *e);
void packm_free(struct packm *w);

/* Whether name (an entry of objects/pack) is one of packw's temp files,
 * "tmp_migrate_pack_XXXXXX" or "tmp_migrate_idx_XXXXXX": one a run that
 * ended did not commit. */
int packw_is_temp(const char *name);

/*
 * odb.c: a native reader of db's objects of its own, for another thread (one
 * struct pack_odb is used by one thread at a time): 1 with *out (the
 * caller's, pack_odb_free), 0 when db does not read natively
 * (--object-reader=git, a sha256 repository, a store pack.c does not
 * read: git cat-file does, on the caller's thread), -1 with e set.
 */
int odb_native_fork(struct odb *db, struct pack_odb **out, struct err *e);

/* The formats' parsers, for tests and fuzzers. An .idx of version 2:
 * its object count (e set, ERR_IO, otherwise: -2 for another version,
 * -1 when truncated or corrupt); the offset of its pos-th object. */
int pack_idx_parse(const unsigned char *idx, size_t len, uint32_t *n,
		   struct err *e);
int pack_idx_offset(const unsigned char *idx, size_t len, uint32_t n,
		    uint32_t pos, uint64_t *off, struct err *e);
/* A pack entry's header at off in map[0..len): its kind (1-4 an object
 * type, 6 OFS_DELTA, 7 REF_DELTA), inflated size, where its data starts,
 * and its base. 0 or -1. */
int pack_entry_header(const unsigned char *map, size_t len, uint64_t off,
		      int *kind, uint64_t *size, uint64_t *data,
		      uint64_t *base_off, struct oid *base_id);
/* Applies a delta to base: a new buffer (*out, NUL-terminated, caller
 * frees) of *out_len bytes. 0; -1 malformed, -2 result over limit (*why
 * says which). */
int pack_delta_apply(const unsigned char *base, size_t base_len,
		     const unsigned char *delta, size_t delta_len,
		     uint64_t limit, unsigned char **out, size_t *out_len,
		     const char **why);

/*
 * delta.c: a delta (git's pack delta format, what pack_delta_apply reads)
 * that makes target from base, appended to out: 1 when made, 0 when it
 * would be longer than max_len bytes or than out's max (out is then as it
 * was); it cannot fail otherwise. Made for successive versions of one
 * text (lines inserted, deleted, changed): fast, in time linear in the
 * two whatever they hold, but not the smallest delta (text moved far away
 * becomes inserts). Copies reach the base's first 4 GiB only.
 */
int delta_create(const unsigned char *base, size_t base_len,
		 const unsigned char *target, size_t target_len,
		 size_t max_len, struct buf *out);
/* The same for two versions of a raw tree: their entries walked side by
 * side in tree order, those both hold copied (an entry whose id alone
 * changed: its mode and name too), the others inserted; the delta of a
 * tree one id changed is about 30 bytes, in one pass. Bytes that are not
 * entries (a malformed tree) are inserted. */
int delta_create_tree(const unsigned char *base, size_t base_len,
		      const unsigned char *target, size_t target_len,
		      size_t max_len, struct buf *out);

/*
 * maps.c: the old->new commit map (loaded, extended, written in the
 * layouts of git-filter-repo, git lfs migrate and BFG).
 */
enum cmap_format {
	CMAP_FILTER_REPO = 0,	/* "old<pad to 40> new" header, all commits */
	CMAP_LFS,		/* "old,new" CSV, changed commits only */
	CMAP_BFG,		/* "old new", no header, sorted by old */
};

int cmap_format_parse(const char *s, enum cmap_format *out);

struct cmap;

struct cmap *cmap_new(void);
void cmap_free(struct cmap *m);

/* Loads path if it exists (any of the three layouts); a missing file is
 * not an error. -1 with e naming file and line on a malformed line. */
int cmap_load(struct cmap *m, const char *path, struct err *e);

/* The new id of old, or NULL. Borrowed: valid until the map changes. */
const struct oid *cmap_get(const struct cmap *m, const struct oid *old);
/* Records old -> new, replacing an earlier value for old. */
void cmap_put(struct cmap *m, const struct oid *old, const struct oid *new);
size_t cmap_count(const struct cmap *m);
/* Calls fn for the entries recorded from the from-th on (in recording
 * order); returns how many it visited. */
size_t cmap_each_from(const struct cmap *m, size_t from,
		      int (*fn)(void *ctx, const struct oid *old,
				const struct oid *new),
		      void *ctx);

/* Appends the map in format fmt to out (entries in recording order,
 * except BFG's, sorted by old). */
int cmap_format(const struct cmap *m, enum cmap_format fmt, struct buf *out);

/*
 * maps.c too: the lines of the two other files a run leaves and reads
 * back, written and read here only. A marks file is ":<mark> <id>" lines
 * (as git fast-import --export-marks writes it); a ref map "<old> <new>
 * <ref>" lines, old 40 zeros for a ref the input did not have, new 40
 * zeros for a ref deleted.
 */
void marks_line_format(struct buf *out, uint64_t mark, const struct oid *id);
/* One line without its newline: 0 with *mark and *id, or -1. */
int marks_line_parse(const char *line, size_t len, uint64_t *mark,
		     struct oid *id);
struct refmap_line {
	struct oid old, new;
	const char *ref;	/* into the line parsed, not NUL-terminated */
	size_t ref_len;		/* at least 1 */
};
void refmap_line_format(struct buf *out, const struct oid *old,
			const struct oid *new, const char *ref);
/* One line without its newline: 0 with *r, or -1. */
int refmap_line_parse(const char *line, size_t len, struct refmap_line *r);


/*
 * tree.c: the per-commit tree state fast-import keeps, copied so that
 * ids can be computed in-stream (docs/FORMATS.md 6.2, 6.5).
 *
 * Trees are persistent: a node, once its commit is written
 * (tree_state_freeze), is never changed again, so commits share every
 * subtree they did not change and memory grows with what changed. The
 * working tree of the commit being built is changed by path copying:
 * nodes of the current generation are changed in place, older ones are
 * copied first. Trees that came from a repository are loaded lazily,
 * node by node, through the loader, only where a change reaches them.
 * Every node lives until tree_state_free.
 */
#define TREE_MODE_DIR 040000u
#define TREE_MODE_FILE 0100644u
#define TREE_MODE_EXEC 0100755u
#define TREE_MODE_LINK 0120000u
#define TREE_MODE_GITLINK 0160000u

static inline int tree_mode_is_dir(uint32_t mode)
{
	return (mode & 0170000u) == TREE_MODE_DIR;
}

/*
 * The entries of a raw tree object ("<octal mode> <name>\0<20-byte id>",
 * repeated), read in place: the one reader of that format. An entry is
 * malformed when its mode is empty, has a digit that is not octal or is
 * above 07777777, its name is empty, or the object ends inside it.
 */
struct tree_iter {
	const char *start, *p, *end;
};
struct tree_item {
	uint32_t mode;
	const char *name;	/* into the body, not NUL-terminated */
	size_t len;
	struct oid oid;
};
static inline void tree_iter_init(struct tree_iter *it, const void *body, size_t len)
{
	it->start = it->p = body;
	it->end = it->p + len;
}

/* 1 with *item filled, 0 at the end, -1 on a malformed entry
 * (tree_iter_offset then says at which byte). Inline: migrate analyze
 * reads millions of entries (git 2008: a call each cost it 4% of its
 * instructions). */
static inline int tree_iter_next(struct tree_iter *it, struct tree_item *item)
{
	const char *p = it->p, *end = it->end, *sp, *nul;
	uint32_t mode = 0;

	if (p == end)
		return 0;
	sp = memchr(p, ' ', (size_t)(end - p));
	nul = sp ? memchr(sp, '\0', (size_t)(end - sp)) : NULL;
	if (!sp || sp == p || !nul || nul == sp + 1 ||
	    (size_t)(end - nul) < 1 + OID_RAW)
		return -1;
	/* octal digits only: any other byte means a corrupt object, and a
	 * mode guessed from it would change the ids computed from it */
	for (; p < sp; p++) {
		if (*p < '0' || *p > '7' || mode > 0777777) {
			it->p = p;
			return -1;
		}
		mode = mode * 8 + (uint32_t)(*p - '0');
	}
	item->mode = mode;
	item->name = sp + 1;
	item->len = (size_t)(nul - sp - 1);
	memcpy(item->oid.hash, nul + 1, OID_RAW);
	it->p = nul + 1 + OID_RAW;
	return 1;
}

/* The byte of the body reached: the next entry, or where a malformed one
 * went wrong. */
static inline size_t tree_iter_offset(const struct tree_iter *it)
{
	return (size_t)(it->p - it->start);
}

struct tree_state;
struct tnode;

/* Fills body with the raw tree object `id`; 0 or -1 with e set. */
typedef int (*tree_loader_fn)(void *ctx, const struct oid *id,
			      struct buf *body, struct err *e);

struct tree_state *tree_state_new(tree_loader_fn load, void *ctx);
void tree_state_free(struct tree_state *ts);

/* Ends a generation: every node made so far becomes immutable. */
void tree_state_freeze(struct tree_state *ts);

/* A new empty tree, and a not-yet-loaded tree known by id. */
struct tnode *tree_new_empty(struct tree_state *ts);
struct tnode *tree_from_oid(struct tree_state *ts, const struct oid *id);

/* fast-import's mode normalisation: 644 and 755 get their file type. */
uint32_t tree_mode_normalize(uint32_t mode);

/*
 * M: sets path to (mode, id) in *root, creating directories and replacing
 * files or directories in the way. A directory mode with the empty tree
 * deletes the path; with an empty path, it replaces the root. Returns 0,
 * or -1 with e set (bad path, load failure).
 */
int tree_set(struct tree_state *ts, struct tnode **root, const char *path,
	     size_t len, uint32_t mode, const struct oid *id, struct err *e);

/* D: removes path and the directories it leaves empty. Returns 1 when
 * something was removed, 0 when the path did not exist, -1 on error. */
int tree_remove(struct tree_state *ts, struct tnode **root, const char *path,
		size_t len, struct err *e);

/* C/R: copies (or moves) the entry at src (a file or a whole directory;
 * "" is the root) to dst. -1 with e set when src does not exist. */
int tree_copy(struct tree_state *ts, struct tnode **root, const char *src,
	      size_t slen, const char *dst, size_t dlen, int rename,
	      struct err *e);

/* Looks path up: 1 with *mode and *id filled (for a directory, its tree
 * id, which costs hashing what changed below it; id NULL: the mode
 * only), 0 when absent, -1 on error. */
int tree_lookup(struct tree_state *ts, struct tnode *root, const char *path,
		size_t len, uint32_t *mode, struct oid *id, struct err *e);

/* The id of the tree as fast-import will write it; hashes only what
 * changed since it was last hashed. 0 or -1 (load failure). */
int tree_hash(struct tree_state *ts, struct tnode *root, struct oid *out,
	      struct err *e);

/*
 * Called by tree_hash for each tree it hashes (one changed since it was
 * last hashed), subtrees first: its directory's path below the root
 * ("" for the root), its raw bytes (valid during the call), its id, and
 * the id of the version it was changed from (NULL: a new directory). A
 * non-zero return stops tree_hash, which returns -1 (e set by fn).
 */
typedef int (*tree_made_fn)(void *ctx, const char *path, size_t len,
			    const struct buf *body, const struct oid *id,
			    const struct oid *from, struct err *e);
void tree_state_on_made(struct tree_state *ts, tree_made_fn fn, void *ctx);

/* Calls fn for every file (non-directory) below root, in tree order, with
 * its full path. Stops at the first non-zero return and returns it. */
typedef int (*tree_walk_fn)(void *ctx, const char *path, size_t len,
			    uint32_t mode, const struct oid *id);
int tree_walk(struct tree_state *ts, struct tnode *root, tree_walk_fn fn,
	      void *ctx, struct err *e);

/* Like tree_walk, below the directory at path only ("" is the root);
 * the paths given to fn are still full paths. A missing path or a file
 * walks nothing. */
int tree_walk_at(struct tree_state *ts, struct tnode *root, const char *path,
		 size_t len, tree_walk_fn fn, void *ctx, struct err *e);

/*
 * Calls fn for every file (non-directory) path whose mode or id differs
 * between the trees a and b (NULL: the empty tree), in tree order. A path
 * only in a has new_mode 0 and new_id NULL, one only in b old_mode 0 and
 * old_id NULL; a file replaced by a directory (or the other way round)
 * gives the file and then each file below the directory. Subtrees that are
 * the same node, or have the same known id, are skipped: the cost follows
 * the difference, not the size of the trees. Stops at the first non-zero
 * return of fn and returns it; -1 with e set on a load failure.
 */
typedef int (*tree_diff_fn)(void *ctx, const char *path, size_t len,
			    uint32_t old_mode, const struct oid *old_id,
			    uint32_t new_mode, const struct oid *new_id);
int tree_diff(struct tree_state *ts, struct tnode *a, struct tnode *b,
	      tree_diff_fn fn, void *ctx, struct err *e);

#endif
