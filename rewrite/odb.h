/*
 * odb.h - reading objects from a git repository through one long-lived
 * `git cat-file --batch-command` process (started on first use).
 */
#ifndef MIGRATE_RW_ODB_H
#define MIGRATE_RW_ODB_H

#include <sys/types.h>

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

#endif
