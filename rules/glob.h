/*
 * glob.h - folder-internal (never include it outside rules/): git's
 * wildmatch as .gitattributes applies it, and the escaping of patterns
 * and paths for .gitattributes lines.
 */
#ifndef MIGRATE_RULES_GLOB_H
#define MIGRATE_RULES_GLOB_H

#include <stddef.h>

#include "common/common.h"

/* A checked glob. pat is owned, NUL-terminated and has no NUL inside. */
struct rules_glob {
	char *pat;
	size_t len;
	size_t skip;	/* 1 when a leading '/' is dropped, else 0 */
	size_t prefix;	/* literal bytes after skip (git's nowildcardlen) */
	int nodir;	/* no '/' at all: matched against the basename */
};

/*
 * Checks pattern (len bytes) and fills g. On failure returns -1, sets
 * *bad to the byte offset the problem starts at and *msg to a static
 * message; g is then empty and needs no free.
 */
int rules_glob_init(struct rules_glob *g, const char *pat, size_t len,
		    size_t *bad, const char **msg);
void rules_glob_release(struct rules_glob *g);

/* 1 when the path (len bytes) matches, else 0. Cannot fail. */
int rules_glob_match(const struct rules_glob *g, const char *path, size_t len);

/*
 * Appends the .gitattributes pattern of a checked glob (see
 * rules_rule_attr_line). Returns -1 when out is full; out is then as it
 * was.
 */
int rules_glob_attr(struct buf *out, const struct rules_glob *g);

/* Appends the anchored, escaped pattern for one path. -1 when out is full. */
int rules_glob_attr_path(struct buf *out, const char *path, size_t len);

#endif
