/*
 * report.h - the contract of rewrite/report/: what a run tells, as it goes and
 * at its end. Each part owns its state; the counters it shows belong to
 * the code that counts them and are handed in.
 *
 * report.c: --report (a table) and --report-json (a document) of what the
 * rules move and how much history shrinks. Every report_* function is a
 * no-op on a NULL report (no report asked), so callers need no test.
 * Blob counts and bytes are of distinct blobs (by id); the packed size of
 * a blob the source repository has is its size on disk there (deltas
 * included); the others' is estimated: a blob's first 1 MiB deflated with
 * zlib, scaled to its size.
 *
 * progress.c: the progress line on stderr (never stdout, which carries
 * the stream).
 */
#ifndef MIGRATE_REPORT_H
#define MIGRATE_REPORT_H

#include <stdint.h>

#include "../git/git.h"

struct rules;

/* ---- report.c ---- */

struct report;

/* A report writing the table to txt ("-": stderr) and the JSON document
 * to json, either NULL; NULL when both are. Free with report_free. */
struct report *report_new(const char *txt, const char *json);
void report_free(struct report *r);

/*
 * Reads the on-disk size of every blob of the repository at repo (NULL:
 * the current directory's) once; from then on, a blob it has counts with
 * that size whatever estimate is handed in. Not a repository: nothing is
 * read (estimates only). 0, or -1 with e set (git failed).
 */
int report_disk_sizes(struct report *r, const char *repo, struct err *e);
/* 1 when the blob's size on disk is known (its estimate is not needed). */
int report_knows(const struct report *r, const struct oid *id);

/* The packed estimate of one blob, fed in pieces: begin, feed..., end
 * (which scales the sample to size). _buf does all three. known: the
 * blob's id when the stream says it (may be NULL); when report_knows it,
 * nothing is deflated and end gives 0. */
void report_est_begin(struct report *r, const struct oid *known);
void report_est_feed(struct report *r, const void *p, size_t n);
uint64_t report_est_end(struct report *r, uint64_t size);
uint64_t report_est_buf(struct report *r, const void *p, size_t n);

/* The same estimate away from any report, for a thread of its own (one
 * struct zest per thread): begin, feed..., end per blob. */
struct zest;
struct zest *zest_new(void);
void zest_free(struct zest *z);
void zest_begin(struct zest *z);
void zest_feed(struct zest *z, const void *p, size_t n);
uint64_t zest_end(struct zest *z, uint64_t size);

/* A blob of the input, of the output (each counted once by id). */
void report_input_blob(struct report *r, const struct oid *id, uint64_t size,
		       uint64_t est);
void report_output_blob(struct report *r, const struct oid *id, uint64_t size,
			uint64_t est);
/* Bytes of packs the run wrote itself for output blobs it gave no
 * estimate (0). */
void report_output_stored(struct report *r, uint64_t bytes);
/* A file placed at path (for the largest blobs). */
void report_path(struct report *r, const char *path, size_t len,
		 const struct oid *id, uint64_t size);
/* A file the rule with this index (in its rule set) decided. */
void report_rule(struct report *r, size_t index, const char *path, size_t len,
		 const struct oid *id, uint64_t size, uint64_t est);
/* Whether the rule with this index decided no path of the history. */
int report_rule_unmatched(const struct report *r, size_t index);
/* The distinct blobs the rule with this index decided (the table's). */
uint64_t report_rule_blobs(const struct report *r, size_t index);
/* An LFS object (oid: 64 hex digits) unlfs found in no store, first
 * met at path: its pointer stays. */
void report_lfs_missing(struct report *r, const char *oid, const char *path,
			size_t len);
/*
 * An expression of a replace-text file (what: "blobs") or of the
 * --replace-message file ("messages"): where it is (file, 1-based line),
 * its text as written, the matches it replaced and the blobs or messages
 * it changed (each distinct content counted once). Copied.
 */
void report_replace(struct report *r, const char *what, const char *file,
		    size_t line, const char *text, size_t len,
		    uint64_t replaced, uint64_t changed);
/* A version of the split file at path, and one of its parts. */
void report_split(struct report *r, const char *path, size_t len,
		  uint64_t version_bytes, const char *part, size_t plen,
		  uint64_t part_bytes);

/* The history's blob bytes and packed bytes, before and after (0 for a
 * NULL report). */
void report_sizes(const struct report *r, uint64_t *bytes_before,
		  uint64_t *bytes_after, uint64_t *packed_before,
		  uint64_t *packed_after);

struct report_totals {
	uint64_t commits, rewritten, refs, refs_changed;
};

/*
 * Renders the report: the table to stderr at once when it goes there,
 * else each document to a temp file beside its destination (*tmp_txt,
 * *tmp_json; NULL when none) for the caller to rename into place. rules
 * (and the rule file's name, for messages) may be NULL. 0, or -1 with e
 * set and nothing left behind.
 */
int report_write(struct report *r, const struct report_totals *t,
		 const struct rules *rules, const char *rules_path,
		 char **tmp_txt, char **tmp_json, struct err *e);

/*
 * Helpers for other reports of the same look (migrate analyze):
 * report_human writes n bytes as people read them ("12.3 MB", "950 B")
 * into buf and returns it; report_json_path appends "key":VALUE for a
 * path, a string when it is valid UTF-8, else "key":null,"key_hex":"..."
 * (migrate(1): DRY RUNS, REPORTS, PROGRESS); report_json_pattern appends the rule's
 * "pattern" so (re: in front of a regex).
 */
const char *report_human(uint64_t n, char *buf, size_t size);
void report_json_path(struct buf *out, const char *key, const char *s,
		      size_t len);
struct rule;
void report_json_pattern(struct buf *out, const struct rule *rule);

/* ---- progress.c ---- */

struct progress {
	int on;
	int tty;		/* redraw one line with \r, else a line each */
	uint64_t total;		/* commits to expect (0: unknown) */
	int64_t start, last;
};

struct progress_counts {
	uint64_t commits, converted, bytes;
	/* files the rules changed otherwise, so far (each version counts) */
	uint64_t replaced, split, dropped;
	uint64_t ahead;		/* of bytes, read by other threads */
};

/* On when want > 0, or want == 0 and stderr is a terminal; never quiet. */
void progress_init(struct progress *p, int quiet, int want, uint64_t total);
/* A line at most four times a second. */
void progress_tick(struct progress *p, const struct progress_counts *c);
/* The summary line. */
void progress_done(struct progress *p, const struct progress_counts *c);

#endif
