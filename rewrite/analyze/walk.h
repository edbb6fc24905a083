/*
 * walk.h - what the files of rewrite/analyze/ share (folder-internal;
 * the contract is analyze.h): the blobs, paths and (blob, path) pairs
 * collect.c finds, with the sums render.c shows.
 */
#ifndef MIGRATE_ANALYZE_WALK_H
#define MIGRATE_ANALYZE_WALK_H

#include <stdint.h>
#include <uthash.h>

#include "../git/git.h"
#include "analyze.h"

/* A blob of the object database (reached or not). */
struct ablob {
	struct oid id;
	uint64_t size, disk;	/* objectsize, objectsize:disk */
	uint32_t *paths;	/* indexes into analysis.paths, each once */
	size_t npaths, apaths;
	int present;		/* at some path of a ref's tip */
	int remains;		/* with rules: kept at some path */
	UT_hash_handle hh;	/* by id */
};

/* A path some blob had. */
struct apath {
	char *s;
	size_t len;
	uint32_t idx;		/* in analysis.paths */
	UT_hash_handle hh;	/* by s */
};

#define PAIR_FILE 1u	/* seen as a regular or executable file */
#define PAIR_LINK 2u	/* seen as a symlink */
#define PAIR_TIP 4u	/* at a ref's tip */
#define PAIR_OTHER 8u	/* in a commit outside refs/notes/ */

/* A blob at a path, with the ways it was seen there (PAIR_*). */
struct apair {
	uint64_t key;		/* blob index << 32 | path index */
	unsigned flags;
	UT_hash_handle hh;
};

/* Per extension as git lfs migrate info counts: each (path, blob) pair
 * of a regular file once; "*.EXT", or the file's name without a dot. */
struct aext {
	char *name;
	uint64_t files, bytes, disk, tip_files, tip_bytes;
	UT_hash_handle hh;
};

/* What one rule takes: distinct paths and blobs (as --report counts). */
struct arule {
	uint64_t paths, blobs, bytes, disk;
};

struct analysis {
	char *repo;			/* as given, for the table */
	const struct rules *rules;
	const char *rules_path;
	size_t top;
	struct ablob *blobs;		/* every blob of the database */
	size_t nblobs;
	struct ablob *by_id;
	struct apath **paths;		/* by index */
	size_t npaths, apaths;
	struct apath *path_set;
	struct apair *pairs;
	struct aext *exts;
	struct arule *rule_stats;	/* rules_count(rules) of them */
	uint64_t commits, refs, trees_read, objects;
	/* reached: blobs with a path */
	uint64_t reached, reached_bytes, reached_disk;
	uint64_t all_bytes, all_disk;
	uint64_t remain_blobs, remain_bytes, remain_disk;
};

/* Blobs with a path, largest first (size, then on-disk size, then id);
 * *n of them; caller frees the array (the blobs are borrowed). */
const struct ablob **walk_sorted_blobs(const struct analysis *a, size_t *n);

#endif
