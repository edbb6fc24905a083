/*
 * split.h - record splitting (docs/DESIGN.md "Oversized text files split"): one
 * version of a text file becomes parts, one per record key, reusing the
 * work done for the previous version. This module knows nothing of git or
 * streams; the engine hashes the parts and writes M/D lines.
 *
 * Lines and records. A line is the bytes up to and including '\n'; the last
 * line may lack it. The record pattern (PCRE2, byte mode) is matched against
 * each line WITHOUT its '\n' (a CR stays part of the line, so `$` does not
 * match before it). A line that matches starts a record; the record runs up
 * to the next record start. Lines before the first record form the head.
 *
 * Keys and paths. `into` is a path template: literal text plus placeholders
 * {1}, {2}... (numbered groups), {name} (named groups) and {key} (the group
 * named "key" if there is one, else group 1). There is no escape for a
 * literal brace. The key of a record is the tuple of the groups `into` uses;
 * the part path is `into` with them substituted, and records with the same
 * path go to the same part, in their original order. A substituted group
 * that is unset or empty, contains '/', NUL or '\n', is "..", longer than
 * SPLIT_MAX_NAME, or a reserved name (".git" in any case and its NTFS and
 * HFS+ aliases such as "git~1", ".git." or ".g\u200cit"; ".gitmodules",
 * ".gitattributes", ".gitignore", ".mailmap", ".lfsconfig" and their
 * aliases), is an error, and so is a resulting path with an empty, "."
 * or ".." component, a component that is too long or reserved,
 * longer than SPLIT_MAX_PATH, outside the template's fixed directory, or
 * equal to the head path: never a path elsewhere.
 *
 * Parts. The head part (path `head`) comes first when the head is not
 * empty; then one part per path, in order of first appearance. Every byte
 * belongs to exactly one part. A non-empty head without a `head` path is an
 * error. Concatenating the parts in order gives the version back exactly
 * when split_result_reassembles() says so (always when the records of each
 * key are contiguous).
 *
 * Incremental work. A cache keeps a copy of the previous version and its
 * record index. The next version is compared with it by memcmp (common
 * prefix and suffix); only the records around the changed middle are
 * looked at again, and in that middle a record whose bytes equal an old
 * record's (found by memcmp, searching forward) takes that record's part
 * without the pattern, so the pattern runs over the changed records only.
 * Each part says whether it is byte-identical to the part
 * with the same path in the previous version of this cache (`unchanged`),
 * so the engine may reuse that part's hash. Memory: about twice the largest
 * version, plus the record index and the paths ever seen.
 *
 * Errors: split_spec_new fails with ERR_USAGE (bad pattern, with PCRE2's
 * message and offset; bad template or head). split_run fails with
 * ERR_STREAM ("line N: ..." naming the key) for data that cannot be split;
 * the caller adds path and commit. After a failed split_run the cache has
 * forgotten the previous version (the next run parses everything).
 *
 * Thread safety: a spec is read-only and may be shared by caches; a cache
 * (and the result it owns) is used by one thread at a time.
 */
#ifndef MIGRATE_SPLIT_H
#define MIGRATE_SPLIT_H

#include <stddef.h>
#include <stdint.h>

#include "common/common.h"

#define SPLIT_MAX_PATH 4096	/* bytes in a part path, head included */
#define SPLIT_MAX_NAME 255	/* bytes in one component of a part path */

struct split_spec;
struct split_cache;
struct split_result;

/* A borrowed view of bytes inside the cache's copy of the version. */
struct split_range {
	const char *ptr;
	size_t len;
};

/*
 * One part of a version, borrowed from the result: valid until the next
 * split_run, split_cache_reset or split_cache_free on its cache. path is
 * NUL-terminated as well. size is the sum of the range lengths (> 0).
 */
struct split_part {
	const char *path;
	size_t path_len;
	const struct split_range *ranges;
	size_t nranges;
	size_t size;
	int unchanged;	/* same bytes as this path in the previous version */
	int is_head;
};

/* What the last split_run did; for tests and progress reports. */
struct split_stats {
	size_t regex_lines;	/* lines given to pcre2_match */
	size_t parsed_bytes;	/* bytes of the re-parsed middle */
	size_t parsed_records;	/* records found in it */
	size_t reused_records;	/* of those, known from an old start line */
	size_t skipped_bytes;	/* of the middle, whole old records reused */
	size_t kept_records;	/* records reused from the previous version */
	int identical;		/* the version equalled the previous one */
};

/*
 * Compiles a spec: record is the PCRE2 pattern (NUL-terminated), into the
 * path template, head the head path or NULL. On success *out is the
 * caller's (split_spec_free). Fails with ERR_USAGE: pattern that does not
 * compile, template with unbalanced braces, an unknown group, no
 * placeholder, or an invalid path shape; head that is not a valid path.
 */
int split_spec_new(struct split_spec **out, const char *record,
		   const char *into, const char *head, struct err *e);
/* NULL ok. Every cache made from the spec must be freed first. */
void split_spec_free(struct split_spec *s);

/*
 * A new, empty cache for spec, which must outlive it. Cannot fail (dies on
 * memory exhaustion like xmalloc). Free with split_cache_free (NULL ok).
 */
struct split_cache *split_cache_new(const struct split_spec *spec);
void split_cache_free(struct split_cache *c);
/* Forgets the previous version: the next run parses everything. */
void split_cache_reset(struct split_cache *c);

/*
 * Splits data[0..len) into parts, reusing the cached previous version, and
 * makes data the cached version. data need only stay valid during the call
 * (the parts point into the cache's own copy, so data must not point into
 * a result of the same cache). NULL is fine when len is 0. Cost: a memcmp
 * of the bytes shared with the previous version, the pattern over the
 * records around the change, and the list of the parts that changed (the
 * listing of every part is built on first use). On success
 * *out is borrowed from the cache, valid until its next run, reset or
 * free. Returns 0, or
 * -1 with ERR_STREAM (see above) and the cache reset.
 */
int split_run(struct split_cache *c, const char *data, size_t len,
	      const struct split_result **out, struct err *e);

/*
 * split_run without the copy: on success the cache may keep b's buffer as
 * its copy of the version, handing b its previous buffer; b's contents are
 * then undefined (b->len 0; reuse or release it). On failure b is left as
 * it was.
 */
int split_run_take(struct split_cache *c, struct buf *b,
		   const struct split_result **out, struct err *e);

size_t split_result_count(const struct split_result *r);
/* The i-th part (i < count), borrowed like the result itself. */
const struct split_part *split_result_part(const struct split_result *r,
					   size_t i);
/*
 * What changed since the previous version of this cache, at a cost
 * proportional to the change (the full listing above costs the number of
 * parts and is built only when asked for): the new or changed parts
 * (unchanged == 0; in no particular order, borrowed like the result), and
 * the paths of the parts the previous version had and this one has not.
 * After a reset or a first run every part is new and none vanished.
 */
size_t split_result_nchanged(const struct split_result *r);
const struct split_part *split_result_changed(const struct split_result *r,
					      size_t i);
size_t split_result_nvanished(const struct split_result *r);
const char *split_result_vanished(const struct split_result *r, size_t i,
				  size_t *len);

/* 1 when the parts concatenated in order are the version, else 0. */
int split_result_reassembles(const struct split_result *r);

/* Counters of the last split_run on c (all zero after a failure). */
void split_cache_stats(const struct split_cache *c, struct split_stats *out);

/*
 * Appends the part's bytes to out. Fails (-1, ERR_STREAM, out unchanged)
 * when they would exceed out->max.
 */
int split_part_copy(struct buf *out, const struct split_part *p,
		    struct err *e);

#endif
