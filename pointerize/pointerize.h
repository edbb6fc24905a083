/*
 * pointerize.h - Git LFS pointers (docs/FORMATS.md §7), git-annex keys (§8) and
 * the content-addressed LFS object store.
 *
 * Store layout: <dir>/<oid[0:2]>/<oid[2:4]>/<oid> holds the raw content
 * (the layout of .git/lfs/objects). Objects are written to a temp file in
 * <dir>/tmp/, hashed while written, fsynced and renamed into place, so a
 * final name never holds a partial object; an object that already exists
 * is verified (size and SHA-256) and left alone when good, replaced
 * atomically by the new copy when bad.
 *
 * Errors: fallible calls return 0 on success and -1 on failure, with *e
 * filled once (kind ERR_IO, the message names the path). SHA-256 and MD5
 * come from OpenSSL's EVP API.
 */
#ifndef MIGRATE_POINTERIZE_H
#define MIGRATE_POINTERIZE_H

#include <stddef.h>
#include <stdint.h>

#include "common/common.h"

/* A SHA-256 object id (the LFS oid), raw bytes. A plain value. */
struct ptr_oid {
	unsigned char sha256[32];
};

#define PTR_OID_HEXSZ 64

/* Writes the 64 lowercase hex digits and a NUL into out. Cannot fail. */
void ptr_oid_hex(const struct ptr_oid *oid, char out[PTR_OID_HEXSZ + 1]);

/* ---- the object store ---- */

struct ptr_store;

/*
 * Opens the store rooted at dir, creating dir (with its parents) and
 * dir/tmp if missing. *out is owned by the caller (ptr_store_free).
 * Fails (ERR_IO, naming the path) when a directory cannot be created or a
 * path component is not a directory.
 */
int ptr_store_open(struct ptr_store **out, const char *dir, struct err *e);

/*
 * Opens a git-annex object store: objects in <annexdir>/objects/<h1>/<h2>/
 * <key>/<key> (hashdirmixed, or hashdirlower with lower: a bare
 * repository), file 0444 and key directory 0555 as git-annex leaves them;
 * temp files in <annexdir>/tmp. Puts into it end with
 * ptr_put_finish_annex. Same failures as ptr_store_open.
 */
int ptr_store_open_annex(struct ptr_store **out, const char *annexdir,
			 int lower, struct err *e);

/* Opens the git-annex object of key for reading, like
 * ptr_store_open_object. */
int ptr_store_open_key(const struct ptr_store *s, const char *key, int *fd,
		       uint64_t *size, struct err *e);

/* Frees the handle; the files stay. NULL is fine. */
void ptr_store_free(struct ptr_store *s);

/* The root directory as given to ptr_store_open; borrowed from s. */
const char *ptr_store_dir(const struct ptr_store *s);

/*
 * Replaces out's content with <dir>/<oid[0:2]>/<oid[2:4]>/<oid>. Returns -1
 * only when out's max is exceeded (out is then unchanged).
 */
int ptr_store_object_path(struct buf *out, const struct ptr_store *s,
			  const struct ptr_oid *oid);

/*
 * Opens the stored object for reading: *fd (owned by the caller, who
 * closes it) and its *size. A missing object, or one that is not a regular
 * file, is an ERR_IO error naming the path.
 */
int ptr_store_open_object(const struct ptr_store *s, const struct ptr_oid *oid,
			  int *fd, uint64_t *size, struct err *e);

/*
 * Batch mode (on: 1): a put's object is written and its writeback
 * started, but fsync and the rename into place wait for ptr_store_sync,
 * which makes them all durable at once (as git's core.fsyncMethod=batch
 * does); until then ptr_store_open_object finds it under its temp name.
 * Objects never synced (ptr_store_free first) are removed: a failed run
 * leaves no object behind. Cannot fail.
 */
void ptr_store_set_batch(struct ptr_store *s, int on);

/* fsyncs every pending object, renames them into place, fsyncs their
 * directories. On failure the objects not yet in place are removed. */
int ptr_store_sync(struct ptr_store *s, struct err *e);

/* ---- streaming put ---- */

struct ptr_put;

/*
 * Starts a put. With s == NULL the put only hashes and writes nothing (dry
 * runs). Otherwise a temp file is created in <dir>/tmp/. *out is owned by
 * the caller until ptr_put_finish or ptr_put_abort consumes it. s must
 * outlive the put.
 */
int ptr_put_begin(struct ptr_store *s, struct ptr_put **out, struct err *e);

/* Whether name (an entry of <dir>/tmp/) is the temp file of a put whose
 * process has ended, "put-<pid>-<seq>-<ns>": one no one will finish. */
int ptr_put_is_dead_temp(const char *name);

/*
 * Hashes and writes n bytes. Writes are buffered in a fixed-size buffer,
 * so memory does not grow with the object. On failure p stays valid and
 * the caller must still call ptr_put_abort.
 */
int ptr_put_write(struct ptr_put *p, const void *data, size_t n,
		  struct err *e);

/*
 * Completes the put and frees p, whether it succeeds or not. Fills *oid
 * and *size (either may be NULL). In store mode the temp file is flushed,
 * fsynced and renamed to the object path (creating the two directory
 * levels); if the object exists already, its size and SHA-256 are
 * checked: a good one is left untouched and the temp file removed, a bad
 * one (wrong size or content) is replaced by the temp file with one
 * rename. An existing path that is not a regular file is an ERR_IO error
 * naming it. On failure no temp file is left.
 */
int ptr_put_finish(struct ptr_put *p, struct ptr_oid *oid, uint64_t *size,
		   struct err *e);

enum ptr_annex_backend {
	PTR_ANNEX_SHA256E = 0,	/* SHA256E-s<size>--<hex><ext> (git-annex's default) */
	PTR_ANNEX_SHA256,	/* SHA256-s<size>--<hex> */
};

/*
 * ptr_put_finish for a git-annex store (or s == NULL: hash only): the key
 * of the content (filename chooses a SHA256E key's extension) into key,
 * and the object stored under it, with the same checks and atomicity.
 */
int ptr_put_finish_annex(struct ptr_put *p, enum ptr_annex_backend backend,
			 const char *filename, struct buf *key,
			 struct ptr_oid *oid, uint64_t *size, struct err *e);

/* Drops the put: removes its temp file and frees p. NULL is fine. */
void ptr_put_abort(struct ptr_put *p);

/* ---- Git LFS pointers (docs/FORMATS.md §7) ---- */

/* git-lfs treats blobs of 1024 bytes or more as content, never pointers. */
#define PTR_LFS_POINTER_MAX 1024

/*
 * Replaces out's content with the canonical pointer text
 *   version https://git-lfs.github.com/spec/v1\n
 *   oid sha256:<hex>\n
 *   size <n>\n
 * For size 0 the pointer is empty: an empty file is its own pointer.
 * Returns -1 (out unchanged) if out's max is exceeded or size does not fit
 * git-lfs's int64.
 */
int ptr_lfs_pointer(struct buf *out, const struct ptr_oid *oid, uint64_t size);

enum ptr_lfs_kind {
	PTR_LFS_NOT_POINTER = 0,
	PTR_LFS_CANONICAL = 1,	 /* exactly what git-lfs would write */
	PTR_LFS_NONCANONICAL = 2 /* git-lfs accepts it, but would write it
				    differently (whitespace, CRLF, alias
				    version, "+10", ext order...) */
};

/*
 * Classifies data by git-lfs 3.3.0's decoder, the rules of
 * `git lfs pointer --check [--strict]`: fewer than 1024 bytes, surrounding
 * whitespace trimmed, blank lines skipped, `version` (one of the v1 URLs)
 * then `oid sha256:<64 lowercase hex>` then `size <decimal>`, with
 * `ext-<digit>-<name> sha256:<hex>` lines allowed anywhere before size, nothing
 * after size. Empty data is a canonical pointer. Non-zero means "already a
 * pointer: never convert again". Cannot fail.
 */
int ptr_is_lfs_pointer(const void *data, size_t len);

/*
 * Decodes a pointer as ptr_is_lfs_pointer classifies it and returns the
 * same kind; for a pointer (not empty data) *oid and *size are its oid
 * and size and *has_ext is 1 when it names extensions (ext-N-name lines:
 * the stored object is then not the file's content). For anything else
 * *oid is zeros, *size and *has_ext 0. Cannot fail.
 */
int ptr_lfs_decode(const void *data, size_t len, struct ptr_oid *oid,
		   uint64_t *size, int *has_ext);

/* ---- git-annex (docs/FORMATS.md §8) ---- */

/*
 * Replaces out's content with the SHA256E key
 * `SHA256E-s<size>--<hex><ext>`, the extension chosen from filename's
 * basename as git-annex's selectExtension does (filename may be NULL: no
 * extension). The key never needs keyfile escaping. Returns -1 (out
 * unchanged) when out's max is exceeded.
 */
int ptr_annex_key(struct buf *out, const struct ptr_oid *oid, uint64_t size,
		  const char *filename);

/*
 * Writes hashdirmixed of the NUL-terminated key, "h1/h2" plus a NUL (e.g.
 * "53/1G"), into out: the two directory levels of .git/annex/objects.
 * Returns -1 only if libcrypto's MD5 fails (out is then untouched).
 */
int ptr_annex_hashdirmixed(const char *key, char out[6]);

/* The key of either backend (ptr_annex_key for SHA256E). */
int ptr_annex_key_backend(struct buf *out, enum ptr_annex_backend backend,
			  const struct ptr_oid *oid, uint64_t size,
			  const char *filename);

/* hashdirlower of the key: "abc/def" and a NUL (the first six hex digits
 * of its MD5), the layout of a bare repository's objects and of the
 * git-annex branch's logs. -1 only if libcrypto's MD5 fails. */
int ptr_annex_hashdirlower(const char *key, char out[8]);

/*
 * The blob of an annexed file: unlocked, the pointer file
 * "/annex/objects/<key>\n"; locked (path given), the symlink target from
 * path to the object, "../" for each directory of path then
 * ".git/annex/objects/<hashdirmixed>/<key>/<key>". -1 when out's max is
 * exceeded or MD5 fails.
 */
int ptr_annex_pointer(struct buf *out, const char *key);
int ptr_annex_symlink(struct buf *out, const char *key, const char *path,
		      size_t len);

/* 1 when data is a git-annex pointer file (what git-annex would take for
 * one: "/annex/objects/" then a key, one line, under 1024 bytes), never
 * to be converted again. */
int ptr_is_annex_pointer(const void *data, size_t len);

#endif
