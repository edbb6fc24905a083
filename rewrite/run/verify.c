/*
 * verify.c - the check of a run: every computed id against fast-import's marks, the commit map and the ref map against the repository.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run.h"

struct mark_id {
	uint64_t mark;
	struct oid id;
};

struct marks {
	struct mark_id *v;
	size_t n;
};

static int by_mark(const void *a, const void *b)
{
	const struct mark_id *x = a, *y = b;
	return x->mark < y->mark ? -1 : x->mark > y->mark;
}

/* Loads a marks file, sorted by mark. A missing file is an error: both
 * sides of the check must have written one. */
static int marks_load(struct marks *m, const char *path, struct err *e)
{
	struct buf text = BUF_INIT(SIZE_MAX / 2);
	char *line, *nl;
	size_t alloc = 64, lineno = 0;
	int r = file_read(path, &text, e);

	m->v = xmalloc(alloc * sizeof(*m->v));
	m->n = 0;
	if (r == 0)
		r = err_set(e, ERR_IO, "verification failed: %s is missing", path);
	for (line = text.ptr; r > 0 && (nl = strchr(line, '\n')); line = nl + 1) {
		lineno++;
		if (m->n == alloc)
			m->v = xrealloc(m->v, (alloc *= 2) * sizeof(*m->v));
		if (marks_line_parse(line, (size_t)(nl - line), &m->v[m->n].mark,
				     &m->v[m->n].id) < 0)
			r = err_set(e, ERR_IO, "verification failed: %s:%zu: not a "
				    "marks line: '%.*s'", path, lineno,
				    (int)(nl - line), line);
		else
			m->n++;
	}
	buf_release(&text);
	qsort(m->v, m->n, sizeof(*m->v), by_mark);
	return r < 0 ? -1 : 0;
}

/* The objects of the repository being checked, opened at the first
 * need: in a directory known, or that git names (asked at the start). */
struct target_objects {
	const char *known;
	struct gitcmd_job where;
	int asked;		/* where is still to be collected */
	struct pack_odb *db;
};

/* 1 when id is a commit in the target's objects, 0 when not, -1 with e
 * set. */
static int target_commit(struct target_objects *t, const struct oid *id,
			 struct err *e)
{
	enum obj_type type;
	uint64_t size;
	int r;

	if (!t->db) {
		struct buf objects = BUF_INIT(SIZE_MAX / 2);

		r = t->known ? 0 : t->asked ? gitcmd_collect(&t->where, 1, &objects, e) : -1;
		t->asked = 0;
		gitcmd_chomp(&objects);
		if (r == 0 && pack_odb_open(&t->db, t->known ? t->known : objects.ptr,
					    e) != 0)
			r = -1;
		buf_release(&objects);
		if (r < 0)
			return -1;
	}
	r = pack_odb_info(t->db, id, &type, &size, e);
	if (r < 0)
		return -1;
	return r == 1 && type == OBJ_COMMIT;
}

/* Every mark the filter computed is the object fast-import wrote, and
 * fast-import wrote no mark the filter did not compute. A mark of
 * migrate's alone is a commit the run wrote itself (fast-import never
 * heard of it): a commit in the target's objects. */
static int marks_compare(const struct marks *ours, const struct marks *theirs,
			 const struct state_files *f, struct target_objects *t,
			 struct err *e)
{
	char h1[OID_HEX + 1], h2[OID_HEX + 1];
	size_t i = 0, j = 0;
	int r;

	while (i < ours->n || j < theirs->n) {
		const struct mark_id *a = i < ours->n ? &ours->v[i] : NULL;
		const struct mark_id *b = j < theirs->n ? &theirs->v[j] : NULL;
		if (a && b && a->mark == b->mark && oid_eq(&a->id, &b->id)) {
			i++, j++;
			continue;
		}
		if (a && b && a->mark == b->mark)
			return err_set(e, ERR_IO, "verification failed: mark :%llu is "
				       "%s in migrate's marks (%s) but %s in git "
				       "fast-import's (%s)", (unsigned long long)a->mark,
				       oid_hex(&a->id, h1), f->marks, oid_hex(&b->id, h2),
				       f->imarks);
		if (!b || (a && a->mark < b->mark)) {
			if ((r = target_commit(t, &a->id, e)) < 0)
				return -1;
			if (r == 1) {
				i++;
				continue;
			}
			return err_set(e, ERR_IO, "verification failed: mark :%llu (%s) "
				       "of migrate's marks (%s) is neither in git "
				       "fast-import's (%s) nor a commit of the target",
				       (unsigned long long)a->mark,
				       oid_hex(&a->id, h1), f->marks, f->imarks);
		}
		return err_set(e, ERR_IO, "verification failed: mark :%llu (%s) of "
			       "git fast-import's marks (%s) is not in migrate's (%s)",
			       (unsigned long long)b->mark, oid_hex(&b->id, h1),
			       f->imarks, f->marks);
	}
	return 0;
}

struct map_check {
	struct oid *ids;	/* the marks' objects, sorted */
	size_t n;
	struct oid bad_old, bad_new;
	int bad;
};

static int map_check_one(void *ctx, const struct oid *old,
			 const struct oid *new)
{
	struct map_check *c = ctx;

	/* 40 zeros: a commit the output dropped (migrate(1), FILES WRITTEN) */
	if (c->bad || oid_is_null(new) ||
	    bsearch(new, c->ids, c->n, sizeof(*c->ids), run_by_oid))
		return 0;
	c->bad = 1;
	c->bad_old = *old;
	c->bad_new = *new;
	return 0;
}

/* The commit map, read by a thread of its own beside the marks'
 * comparison (by the caller's when no thread can be had). */
struct map_read {
	pthread_t thread;
	int started;
	const char *path;
	struct cmap *m;
	struct err e;
	int rc;
};

static void *map_read_run(void *arg)
{
	struct map_read *x = arg;

	x->rc = cmap_load(x->m, x->path, &x->e);
	return NULL;
}

static void map_read_start(struct map_read *x, const char *path)
{
	x->path = path;
	x->m = cmap_new();
	x->e = (struct err)ERR_INIT;
	x->started = pthread_create(&x->thread, NULL, map_read_run, x) == 0;
}

static int map_read_end(struct map_read *x, struct err *e)
{
	if (x->started)
		pthread_join(x->thread, NULL);
	else
		map_read_run(x);
	if (x->rc < 0)
		*e = x->e;
	return x->rc;
}

/* Every commit-map entry of the checked run (from the from-th on) maps to
 * an object of the marks checked above: one fast-import wrote, or one the
 * run wrote itself. */
static int map_compare(const struct marks *ours, struct map_read *x,
		       size_t from, size_t *entries, struct err *e)
{
	struct map_check c = { 0 };
	struct cmap *m = x->m;
	const char *map_path = x->path;
	char h1[OID_HEX + 1], h2[OID_HEX + 1];
	size_t i;
	int r = map_read_end(x, e);

	c.ids = xmalloc((ours->n + 1) * sizeof(*c.ids));
	for (i = 0; i < ours->n; i++)
		c.ids[c.n++] = ours->v[i].id;
	qsort(c.ids, c.n, sizeof(*c.ids), run_by_oid);
	*entries = cmap_count(m);
	if (r == 0 && from > cmap_count(m))
		r = err_set(e, ERR_IO, "verification failed: %s has %zu entries, "
			    "fewer than the %zu it had before the run", map_path,
			    cmap_count(m), from);
	if (r == 0)
		cmap_each_from(m, from, map_check_one, &c);
	if (r == 0 && c.bad)
		r = err_set(e, ERR_IO, "verification failed: %s maps %s to %s, "
			    "an object git fast-import did not write (nor the run)",
			    map_path, oid_hex(&c.bad_old, h1), oid_hex(&c.bad_new, h2));
	free(c.ids);
	return r;
}

/* One ref-map line against the target's refs and its HEAD (a stream's
 * `commit HEAD`: a detached HEAD; null when it has none). */
static int refmap_check(const struct gitrefs *refs, const struct oid *head,
			const char *line, size_t len, const char *path,
			struct err *e)
{
	const struct oid *now = NULL;
	const struct gitref *g;
	struct refmap_line l;
	char *name, h1[OID_HEX + 1], h2[OID_HEX + 1];
	int r = 0;

	if (refmap_line_parse(line, len, &l) < 0)
		return err_set(e, ERR_IO, "verification failed: %s: not a ref-map "
			       "line: '%.*s'", path, (int)len, line);
	name = xmemdup(l.ref, l.ref_len);
	if (!strcmp(name, "HEAD"))
		now = oid_is_null(head) ? NULL : head;
	else if ((g = gitrefs_find(refs, name)))
		now = &g->id;
	if (!(oid_is_null(&l.new) ? now == NULL : (now && oid_eq(now, &l.new))))
		r = err_set(e, ERR_IO, "verification failed: %s is %s in the "
			    "repository but %s in the ref map %s", name,
			    now ? oid_hex(now, h1) : "missing",
			    oid_hex(&l.new, h2), path);
	free(name);
	return r;
}

static int refmap_compare(const struct gitrefs *refs, const struct oid *head,
			  const char *path, struct err *e)
{
	struct buf text = BUF_INIT(SIZE_MAX / 2);
	char *line, *nl;
	int r = file_read(path, &text, e);

	if (r == 0)
		r = err_set(e, ERR_IO, "verification failed: %s is missing", path);
	for (line = text.ptr; r > 0 && (nl = strchr(line, '\n')); line = nl + 1)
		if (refmap_check(refs, head, line, (size_t)(nl - line), path, e) < 0)
			r = -1;
	buf_release(&text);
	return r < 0 ? -1 : 0;
}

/*
 * The check of one run (docs/DESIGN.md, data flow 4): migrate's marks equal
 * fast-import's (those fast-import never heard of are commits the run
 * wrote, in the target), the commit map's entries of the run (from
 * map_before on) are objects of those marks, and the target's refs are
 * those of the ref map. git's reads (the objects directory unless
 * objects names it, the refs, HEAD) and a thread reading the commit map
 * run beside the comparison of the marks. read (may be NULL) gets what
 * the check read: the target's refs (the caller's to free), its HEAD,
 * the commit map's entries. Returns 0, or -1 with e naming the first
 * difference.
 */
int run_verify_run(const char *dir, const char *objects,
		   const struct state_files *f, size_t map_before,
		   struct run_checked *read, struct err *e)
{
	struct marks ours = { 0 }, theirs = { 0 };
	struct target_objects t = { .known = objects, .asked = !objects };
	struct gitrefs listed = GITREFS_INIT;
	struct buf hex = BUF_INIT(4096);
	struct err ignored = ERR_INIT;
	struct gitcmd_job refs_job, head_job;
	struct oid head = oid_null;
	struct map_read map;
	size_t entries = 0;
	int r;

	if (t.asked)
		gitcmd_start(&t.where, dir, "rev-parse", "--path-format=absolute",
			     "--git-path", "objects", (char *)NULL);
	gitrefs_start(&refs_job, dir, NULL);
	gitcmd_start(&head_job, dir, "rev-parse", "-q", "--verify", "HEAD",
		     (char *)NULL);
	map_read_start(&map, f->map);
	r = marks_load(&ours, f->marks, e);
	if (r == 0)
		r = marks_load(&theirs, f->imarks, e);
	if (r == 0)
		r = marks_compare(&ours, &theirs, f, &t, e);
	if (r == 0)
		r = map_compare(&ours, &map, map_before, &entries, e);
	else
		(void)map_read_end(&map, &ignored);
	cmap_free(map.m);
	if (t.asked)
		(void)gitcmd_collect(&t.where, 0, &hex, &ignored);
	if (gitrefs_collect(&listed, &refs_job, NULL, r == 0 ? e : &ignored) < 0)
		r = -1;
	gitcmd_collect_oid(&head_job, &head);
	if (r == 0)
		r = refmap_compare(&listed, &head, f->refmap, e);
	if (r == 0 && read) {
		read->refs = listed;
		read->head = head;
		read->map_entries = entries;
	} else {
		gitrefs_free(&listed);
	}
	if (t.db)
		pack_odb_free(t.db);
	free(ours.v);
	free(theirs.v);
	buf_release(&hex);
	return r;
}
