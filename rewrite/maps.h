/*
 * maps.h - the old->new commit map (loaded, extended, written in the
 * layouts of git-filter-repo, git lfs migrate and BFG) and atomic file
 * writes for everything migrate leaves behind.
 */
#ifndef MIGRATE_RW_MAPS_H
#define MIGRATE_RW_MAPS_H

#include "../common/common.h"
#include "oid.h"

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
 * Atomic replacement of path by data: written to a temp file in the same
 * directory, fsynced, then renamed. rw_atomic_prepare leaves the temp file
 * (its name in *tmp, caller frees) so that several files can be committed
 * together with rw_atomic_commit, or dropped with unlink.
 */
int rw_atomic_prepare(const char *path, const struct buf *data, char **tmp,
		      struct err *e);
int rw_atomic_commit(const char *tmp, const char *path, struct err *e);

#endif
