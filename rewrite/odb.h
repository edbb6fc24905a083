/*
 * odb.h - reading objects from a git repository through one long-lived
 * `git cat-file --batch-command` process (started on first use).
 */
#ifndef MIGRATE_RW_ODB_H
#define MIGRATE_RW_ODB_H

#include "../common/common.h"
#include "oid.h"

struct odb;

/* dir: the repository (NULL: the one of the current directory). Never
 * fails: the process starts, and problems show, on first use. */
struct odb *odb_new(const char *dir);
void odb_free(struct odb *db);
const char *odb_name(const struct odb *db);

/*
 * Looks up name (an object id or any revision expression git accepts).
 * Returns 1 and fills *type, *oid and (if body is not NULL) the whole
 * content into body; 0 if the repository has no such object; -1 on error
 * (no repository, process died, sha256 repository) with e set.
 */
int odb_read(struct odb *db, const char *name, enum obj_type *type,
	     struct oid *oid, struct buf *body, struct err *e);

#endif
