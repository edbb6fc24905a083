/*
 * fuzz_commit_map.c - libFuzzer target for the commit-map files that
 * --commit-map reads back at the next run: cmap_load() and cmap_format().
 *
 * Input: byte 0 picks the format written back (filter-repo, lfs, bfg),
 * the rest is the content of the map file, written to a temp dir made
 * once per process (removed at exit). The verdict is checked against a
 * model written here from the contract in rewrite/git/maps.c: lines end at
 * LF; an empty line, or one starting with "old" (the filter-repo header),
 * is skipped; any other line is exactly 40 hex digits (either case), a
 * space or a comma, 40 hex digits; the last value given for an old id
 * wins and the first place it was given is its place. A load succeeds if
 * and only if the model accepts every line, and then gives the model's
 * map, in recording order; a failure is ERR_USAGE naming the file and the
 * first bad line ("PATH:N:").
 * A map that loads is written with cmap_format() and loaded again: the
 * same map (for lfs, less the unchanged commits, which that format
 * leaves out), in the same order (bfg: sorted by old id), and formatting
 * that gives the same bytes. filter-repo output starts with the header
 * line "old" padded to 40 columns, " new"; lfs lines are "old,new" with
 * old != new; bfg lines "old new", strictly increasing, no header.
 * Loading the same file a second time into the loaded map changes
 * nothing. Nothing may crash or leak.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rewrite/git/git.h"

static char dir[4096], path[4200];

static void cleanup(void)
{
	unlink(path);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *t = getenv("TMPDIR");

	(void)argc;
	(void)argv;
	snprintf(dir, sizeof(dir), "%s/fuzz_commit_map.XXXXXX",
		 t && *t ? t : "/tmp");
	if (!mkdtemp(dir))
		abort();
	snprintf(path, sizeof(path), "%s/map", dir);
	atexit(cleanup);
	return 0;
}

static void write_file(const char *p, size_t n)
{
	FILE *f = fopen(path, "w");

	if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0)
		abort();
}

/* ---- the model ---- */

struct ent {
	struct oid old, new;
};

struct entries {
	struct ent *v;
	size_t n;
};

static int hex40(const char *p, struct oid *o)
{
	size_t i;

	for (i = 0; i < 2 * OID_RAW; i++) {
		int c = (unsigned char)p[i], d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if ((c | 32) >= 'a' && (c | 32) <= 'f')
			d = (c | 32) - 'a' + 10;
		else
			return -1;
		if (i % 2)
			o->hash[i / 2] |= (unsigned char)d;
		else
			o->hash[i / 2] = (unsigned char)(d << 4);
	}
	return 0;
}

static void model_put(struct entries *m, const struct oid *old,
		      const struct oid *new)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (oid_eq(&m->v[i].old, old)) {
			m->v[i].new = *new;
			return;
		}
	m->v = realloc(m->v, (m->n + 1) * sizeof(*m->v));
	m->v[m->n].old = *old;
	m->v[m->n++].new = *new;
}

/* 0, or the number of the first bad line. */
static size_t model_load(struct entries *m, const char *p, size_t n)
{
	size_t line = 0;

	while (n) {
		const char *nl = memchr(p, '\n', n);
		size_t len = nl ? (size_t)(nl - p) : n;
		struct oid old, new;

		line++;
		if (len && !(len >= 3 && !memcmp(p, "old", 3))) {
			if (len != 81 || (p[40] != ' ' && p[40] != ',') ||
			    hex40(p, &old) < 0 || hex40(p + 41, &new) < 0)
				return line;
			model_put(m, &old, &new);
		}
		p += nl ? len + 1 : len;
		n -= nl ? len + 1 : len;
	}
	return 0;
}

/* ---- the map as loaded ---- */

static int collect(void *ctx, const struct oid *old, const struct oid *new)
{
	struct entries *m = ctx;

	m->v = realloc(m->v, (m->n + 1) * sizeof(*m->v));
	m->v[m->n].old = *old;
	m->v[m->n++].new = *new;
	return 0;
}

static void entries_of(struct entries *out, const struct cmap *m)
{
	out->n = 0;
	if (cmap_each_from(m, 0, collect, out) != out->n || out->n != cmap_count(m))
		abort();
}

static int by_old(const void *a, const void *b)
{
	return memcmp(((const struct ent *)a)->old.hash,
		      ((const struct ent *)b)->old.hash, OID_RAW);
}

static void same(const struct entries *a, const struct entries *b)
{
	size_t i;

	if (a->n != b->n)
		abort();
	for (i = 0; i < a->n; i++)
		if (!oid_eq(&a->v[i].old, &b->v[i].old) ||
		    !oid_eq(&a->v[i].new, &b->v[i].new))
			abort();
}

/* The shape of each format's text. */
static void check_text(const struct buf *t, enum cmap_format fmt, size_t n)
{
	const char *p = t->ptr;
	size_t lines = 0;

	if (fmt == CMAP_FILTER_REPO) {
		if (t->len < 45 || memcmp(p, "old", 3) ||
		    strspn(p + 3, " ") != 38 || memcmp(p + 41, "new\n", 4))
			abort();
		p += 45;
	}
	for (; p < t->ptr + t->len; p += 82, lines++) {
		struct oid a, b;

		if (t->ptr + t->len - p < 82 || p[81] != '\n' ||
		    p[40] != (fmt == CMAP_LFS ? ',' : ' ') ||
		    hex40(p, &a) < 0 || hex40(p + 41, &b) < 0 ||
		    strspn(p, "0123456789abcdef") != 40)
			abort();
		if (fmt == CMAP_LFS && oid_eq(&a, &b))
			abort();
		if (fmt == CMAP_BFG && lines && memcmp(p - 82, p, 40) >= 0)
			abort();
	}
	if (fmt != CMAP_LFS && lines != n)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct entries want = { 0 }, got = { 0 }, again = { 0 };
	struct buf text = BUF_INIT(SIZE_MAX / 2), text2 = BUF_INIT(SIZE_MAX / 2);
	struct cmap *m = cmap_new(), *m2 = NULL;
	struct err e = ERR_INIT;
	enum cmap_format fmt;
	char where[4300];
	size_t bad, i, k;

	if (size < 1)
		goto out;
	fmt = data[0] % 3 == 0 ? CMAP_FILTER_REPO :
	      data[0] % 3 == 1 ? CMAP_LFS : CMAP_BFG;
	write_file((const char *)data + 1, size - 1);
	bad = model_load(&want, (const char *)data + 1, size - 1);
	if (cmap_load(m, path, &e) < 0) {
		snprintf(where, sizeof(where), "%s:%zu: ", path, bad);
		if (!bad || e.kind != ERR_USAGE || strncmp(e.msg, where, strlen(where)))
			abort();
		goto out;
	}
	if (bad)
		abort();
	entries_of(&got, m);
	same(&want, &got);

	/* written in fmt and read back */
	if (cmap_format(m, fmt, &text) < 0)
		abort();
	check_text(&text, fmt, got.n);
	write_file(text.ptr, text.len);
	m2 = cmap_new();
	if (cmap_load(m2, path, &e) < 0)
		abort();
	entries_of(&again, m2);
	if (fmt == CMAP_LFS) {
		for (i = k = 0; i < got.n; i++)
			if (!oid_eq(&got.v[i].old, &got.v[i].new))
				got.v[k++] = got.v[i];
		got.n = k;
	} else if (fmt == CMAP_BFG && got.n) {
		qsort(got.v, got.n, sizeof(*got.v), by_old);
	}
	same(&got, &again);
	if (cmap_format(m2, fmt, &text2) < 0 || text.len != text2.len ||
	    memcmp(text.ptr, text2.ptr, text.len))
		abort();

	/* loading the same file again changes nothing */
	write_file((const char *)data + 1, size - 1);
	if (cmap_load(m, path, &e) < 0)
		abort();
	entries_of(&again, m);
	same(&want, &again);
out:
	free(want.v);
	free(got.v);
	free(again.v);
	buf_release(&text);
	buf_release(&text2);
	cmap_free(m);
	cmap_free(m2);
	return 0;
}
