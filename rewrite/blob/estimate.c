/*
 * estimate.c - the packed size of a blob the rules make, for the report,
 * when made.c's writer does not store it (a preview, the filter): as the
 * writer would store it, a delta against the last blob made at the same
 * path when that delta is less than half of it (deflated, as git stores
 * a delta), else the blob itself, deflated (report.c's sample).
 * replace-text results (scrub.c) and split parts (splits.c) ask; the
 * last blob of each path is kept, EST_BASES bytes in all (past it they
 * all go, and the next of each path is estimated whole).
 */
#include <stdlib.h>
#include <string.h>

#include "way.h"

#define EST_BASES ((size_t)256 << 20)

/* The last blob made at a path, the base of the next one's estimate. */
struct est_base {
	char *path;
	size_t len;
	struct buf last;
	UT_hash_handle hh;
};

struct est {
	struct est_base *bases;
	size_t bytes;
	struct buf delta;
};

static void bases_free(struct est *s)
{
	struct est_base *eb, *t;

	HASH_ITER(hh, s->bases, eb, t) {
		HASH_DEL(s->bases, eb);
		buf_release(&eb->last);
		free(eb->path);
		free(eb);
	}
	s->bytes = 0;
}

uint64_t est_made(struct blobs *b, const char *path, size_t len,
		  const char *p, size_t n)
{
	struct est *s = b->est;
	struct est_base *eb;
	uint64_t est;

	if (!s) {
		s = b->est = xcalloc(1, sizeof(*s));
		buf_init(&s->delta, SIZE_MAX / 2);
	}
	HASH_FIND(hh, s->bases, path, len, eb);
	s->delta.len = 0;
	if (eb && delta_create((const unsigned char *)eb->last.ptr, eb->last.len,
			       (const unsigned char *)p, n, n / 2, &s->delta) == 1)
		est = report_est_buf(b->report, s->delta.ptr, s->delta.len);
	else
		est = report_est_buf(b->report, p, n);
	if (s->bytes + n > EST_BASES) {
		bases_free(s);
		eb = NULL;
	}
	if (!eb) {
		eb = xcalloc(1, sizeof(*eb));
		eb->path = xmemdup(path, len);
		eb->len = len;
		buf_init(&eb->last, SIZE_MAX / 2);
		HASH_ADD_KEYPTR(hh, s->bases, eb->path, eb->len, eb);
	}
	s->bytes -= eb->last.len;
	eb->last.len = 0;
	if (buf_add(&eb->last, p, n) == 0)
		s->bytes += n;
	return est;
}

void est_free(struct blobs *b)
{
	if (!b->est)
		return;
	bases_free(b->est);
	buf_release(&b->est->delta);
	free(b->est);
	b->est = NULL;
}
