/*
 * tree.h - the per-commit tree state fast-import keeps, copied so that
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
#ifndef MIGRATE_RW_TREE_H
#define MIGRATE_RW_TREE_H

#include "../common/common.h"
#include "oid.h"

#define TREE_MODE_DIR 040000u
#define TREE_MODE_FILE 0100644u
#define TREE_MODE_EXEC 0100755u
#define TREE_MODE_LINK 0120000u
#define TREE_MODE_GITLINK 0160000u

static inline int tree_mode_is_dir(uint32_t mode)
{
	return (mode & 0170000u) == TREE_MODE_DIR;
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
