/*
 * test_tree.c - the in-stream tree state against git itself: the same
 * sequence of changes is applied to rewrite/git/tree.c and to a real git
 * index, and every tree id must equal `git write-tree`'s.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "rewrite/git/git.h"


static char repo[] = "/tmp/migrate-test-tree-XXXXXX";

static void sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	assert_int_equal(system(cmd), 0);
}

static void sh_out(char *out, size_t n, const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	FILE *p;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(fgets(out, (int)n, p));
	assert_int_equal(pclose(p), 0);
	out[strcspn(out, "\n")] = '\0';
}

/* A blob in the repository, so write-tree accepts it. */
static void blob(const char *content, struct oid *id)
{
	char hex[128];

	sh_out(hex, sizeof(hex), "printf '%%s' '%s' | git -C %s hash-object -w --stdin",
	       content, repo);
	assert_int_equal(oid_from_hex(id, hex, strlen(hex)), 0);
}

static void expect_write_tree(struct tree_state *ts, struct tnode *root)
{
	char want[128], got[OID_HEX + 1];
	struct err e = ERR_INIT;
	struct oid id;

	sh_out(want, sizeof(want), "git -C %s write-tree", repo);
	assert_int_equal(tree_hash(ts, root, &id, &e), 0);
	assert_string_equal(oid_hex(&id, got), want);
}

static int setup(void **state)
{
	(void)state;
	assert_non_null(mkdtemp(repo));
	sh("git init -q %s", repo);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	sh("rm -rf %s", repo);
	return 0;
}

static void add(struct tree_state *ts, struct tnode **root, const char *path,
		uint32_t mode, const struct oid *id)
{
	char hex[OID_HEX + 1];
	struct err e = ERR_INIT;

	assert_int_equal(tree_set(ts, root, path, strlen(path), mode, id, &e), 0);
	sh("git -C %s update-index --add --replace --cacheinfo '%o,%s,%s'", repo,
	   tree_mode_normalize(mode), oid_hex(id, hex), path);
}

static void del(struct tree_state *ts, struct tnode **root, const char *path)
{
	struct err e = ERR_INIT;

	assert_true(tree_remove(ts, root, path, strlen(path), &e) >= 0);
	/* D of a directory removes everything below it */
	sh("git -C %s ls-files -z -- '%s' | xargs -0 -r git -C %s "
	   "update-index --force-remove --", repo, path, repo);
}

/* docs/FORMATS.md 6.2: bar (gitlink) < bar- (tree) < bar.c < foo-bar < foo.c
 * < foo (tree) < foo0. */
static void test_order(void **state)
{
	struct tree_state *ts = tree_state_new(NULL, NULL);
	struct tnode *root = tree_new_empty(ts);
	struct oid a, commit;

	(void)state;
	blob("a", &a);
	oid_from_hex(&commit, "1234567890abcdef1234567890abcdef12345678", 40);
	add(ts, &root, "foo0", 0644, &a);
	add(ts, &root, "foo/y", 0100755, &a);
	add(ts, &root, "foo.c", 0100644, &a);
	add(ts, &root, "foo-bar", 0120000, &a);
	add(ts, &root, "bar.c", 0100644, &a);
	add(ts, &root, "bar-/x", 0100644, &a);
	add(ts, &root, "bar", 0160000, &commit);
	expect_write_tree(ts, root);
	del(ts, &root, "bar");
	del(ts, &root, "foo/y"); /* prunes foo/ */
	expect_write_tree(ts, root);
	tree_state_free(ts);
}

/* Random changes over a small path universe with files turning into
 * directories and back; old generations must not change. */
static void test_random_against_index(void **state)
{
	static const char *paths[] = { "a", "a/b", "a/b/c", "a-b", "a.c", "a/x",
				       "b/a", "b", "b/c/d", "c d/e", "z" };
	const size_t np = sizeof(paths) / sizeof(paths[0]);
	struct tree_state *ts = tree_state_new(NULL, NULL);
	struct tnode *root = tree_new_empty(ts), *frozen;
	struct oid blobs[3], before, after;
	struct err e = ERR_INIT;
	unsigned seed = 7;
	int i;

	(void)state;
	sh("git -C %s read-tree --empty", repo);
	blob("one", &blobs[0]);
	blob("two", &blobs[1]);
	blob("three", &blobs[2]);
	for (i = 0; i < 120; i++) {
		const char *p;
		seed = seed * 1103515245u + 12345u;
		p = paths[(seed >> 8) % np];
		if ((seed >> 4) % 3 == 0) {
			del(ts, &root, p);
		} else {
			/* --replace drops entries in the way, as fast-import does */
			add(ts, &root, p, (seed >> 12) % 2 ? 0100644 : 0100755,
			    &blobs[(seed >> 16) % 3]);
		}
		expect_write_tree(ts, root);
		if (i % 10 == 0) {
			/* a generation ends: the frozen tree must keep its id */
			assert_int_equal(tree_hash(ts, root, &before, &e), 0);
			frozen = root;
			tree_state_freeze(ts);
			add(ts, &root, "new/file", 0100644, &blobs[0]);
			assert_int_equal(tree_hash(ts, frozen, &after, &e), 0);
			assert_true(oid_eq(&before, &after));
			del(ts, &root, "new/file");
		}
	}
	tree_state_free(ts);
}

static void test_copy_directory_snapshot(void **state)
{
	struct tree_state *ts = tree_state_new(NULL, NULL);
	struct tnode *root = tree_new_empty(ts);
	struct err e = ERR_INIT;
	struct oid a, b;

	(void)state;
	sh("git -C %s read-tree --empty", repo);
	blob("a", &a);
	blob("b", &b);
	add(ts, &root, "d/x", 0100644, &a);
	assert_int_equal(tree_copy(ts, &root, "d", 1, "e", 1, 0, &e), 0);
	sh("git -C %s update-index --add --cacheinfo 100644,$(git -C %s rev-parse :d/x),e/x",
	   repo, repo);
	/* changing the source after the copy must not reach the copy */
	add(ts, &root, "d/x", 0100644, &b);
	expect_write_tree(ts, root);
	assert_int_equal(tree_copy(ts, &root, "d", 1, "f/g", 3, 1, &e), 0);
	sh("git -C %s update-index --add --cacheinfo 100644,$(git -C %s rev-parse :d/x),f/g/x",
	   repo, repo);
	sh("git -C %s update-index --force-remove d/x", repo);
	expect_write_tree(ts, root);
	assert_int_equal(tree_copy(ts, &root, "nope", 4, "x", 1, 0, &e), -1);
	assert_non_null(strstr(e.msg, "not in branch"));
	tree_state_free(ts);
}

/* tree_walk callback: folds every file's path, mode and id into *ctx. */
static int fold_file(void *ctx, const char *path, size_t len, uint32_t mode,
		     const struct oid *id)
{
	uint64_t *h = ctx;
	size_t i;

	for (i = 0; i < len; i++)
		*h = (*h ^ (unsigned char)path[i]) * 1099511628211ull;
	*h = (*h ^ mode) * 1099511628211ull;
	for (i = 0; i < OID_RAW; i++)
		*h = (*h ^ id->hash[i]) * 1099511628211ull;
	return 0;
}

static uint64_t fold_tree(struct tree_state *ts, struct tnode *root)
{
	uint64_t h = 1469598103934665603ull;
	struct err e = ERR_INIT;

	assert_int_equal(tree_walk(ts, root, fold_file, &h, &e), 0);
	return h;
}

/*
 * A directory of many entries (stored in chunks of 64): inserts in random
 * order split chunks, deletions empty them, a name turning from file to
 * directory moves between chunks, and every frozen version keeps its id.
 * Index changes are batched through `update-index --index-info`.
 */
static void test_big_directory(void **state)
{
	enum { N = 700, SNAP = 14 };
	struct tree_state *ts = tree_state_new(NULL, NULL);
	struct tnode *root = tree_new_empty(ts), *snap[SNAP];
	struct oid blobs[2], snap_id[SNAP], id;
	uint64_t snap_files[SNAP];
	struct err e = ERR_INIT;
	char info[64], path[64], hex[OID_HEX + 1];
	unsigned order[N], seed = 11;
	int i, nsnap = 0, live = N;
	FILE *f = NULL;

	(void)state;
	sh("git -C %s read-tree --empty", repo);
	blob("one", &blobs[0]);
	blob("two", &blobs[1]);
	snprintf(info, sizeof(info), "%s/index-info", repo);
	for (i = 0; i < N; i++)
		order[i] = (unsigned)i;
	for (i = N - 1; i > 0; i--) {	/* a fixed shuffle */
		unsigned j, t;

		seed = seed * 1103515245u + 12345u;
		j = (seed >> 8) % (unsigned)(i + 1);
		t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (i = 0; i < 2 * N; i++) {
		unsigned k = order[i % N];
		int removing = i >= N && (i - N) % 7 != 0;

		if (i % 100 == 0)
			assert_non_null(f = fopen(info, "w"));
		/* every 10th name is a directory d/NNNN/x, the rest files */
		snprintf(path, sizeof(path), k % 10 ? "d/%04u" : "d/%04u/x", k);
		if (removing) {
			assert_int_equal(tree_remove(ts, &root, path,
						     strlen(path), &e), 1);
			fprintf(f, "0 %s\t%s\n", oid_hex(&oid_null, hex), path);
			live--;
		} else {
			const struct oid *b = &blobs[i >= N];

			assert_int_equal(tree_set(ts, &root, path, strlen(path),
						  0100644, b, &e), 0);
			fprintf(f, "100644 %s\t%s\n", oid_hex(b, hex), path);
		}
		if (i % 100 == 99) {
			fclose(f);
			sh("git -C %s update-index --index-info < %s", repo, info);
			expect_write_tree(ts, root);
			if (nsnap < SNAP) {
				assert_int_equal(tree_hash(ts, root, &snap_id[nsnap],
							   &e), 0);
				snap_files[nsnap] = fold_tree(ts, root);
				snap[nsnap++] = root;
				tree_state_freeze(ts);
			}
		}
	}
	assert_true(live > 0 && live < N / 4);
	/* the frozen versions were not touched by what followed: same id,
	 * same files (the id alone is remembered, the files are read) */
	for (i = 0; i < nsnap; i++) {
		assert_true(fold_tree(ts, snap[i]) == snap_files[i]);
		assert_int_equal(tree_hash(ts, snap[i], &id, &e), 0);
		assert_true(oid_eq(&id, &snap_id[i]));
	}
	tree_state_free(ts);
}

/* Loader for trees already in the test repository. */
static int load_from_repo(void *ctx, const struct oid *id, struct buf *body,
			  struct err *e)
{
	char cmd[256], hex[OID_HEX + 1], chunk[4096];
	size_t n;
	FILE *p;

	(void)ctx;
	(void)e;
	snprintf(cmd, sizeof(cmd), "git -C %s cat-file tree %s", repo,
		 oid_hex(id, hex));
	p = popen(cmd, "r");
	assert_non_null(p);
	buf_reset(body);
	while ((n = fread(chunk, 1, sizeof(chunk), p)) > 0)
		assert_int_equal(buf_add(body, chunk, n), 0);
	assert_int_equal(pclose(p), 0);
	return 0;
}

/*
 * A tree read from the repository (a directory of 300 entries, loaded
 * into chunks as it is parsed) is changed in place and must hash as git
 * says, while the tree it came from keeps its id.
 */
static void test_loaded_big_directory(void **state)
{
	struct tree_state *ts = tree_state_new(load_from_repo, NULL);
	struct tnode *root, *orig;
	struct oid a, b, base, id;
	struct err e = ERR_INIT;
	char info[64], hex[OID_HEX + 1], want[128];
	struct tree_state *fresh;
	unsigned i;
	FILE *f;

	(void)state;
	sh("git -C %s read-tree --empty", repo);
	blob("a", &a);
	blob("b", &b);
	snprintf(info, sizeof(info), "%s/index-info", repo);
	assert_non_null(f = fopen(info, "w"));
	for (i = 0; i < 300; i++)
		fprintf(f, "100644 %s\tbig/%04u\n", oid_hex(&a, hex), i * 2);
	fprintf(f, "100644 %s\tsmall/x\n", oid_hex(&a, hex));
	fclose(f);
	sh("git -C %s update-index --index-info < %s", repo, info);
	sh_out(want, sizeof(want), "git -C %s write-tree", repo);
	assert_int_equal(oid_from_hex(&base, want, strlen(want)), 0);

	root = orig = tree_from_oid(ts, &base);
	tree_state_freeze(ts);
	add(ts, &root, "big/0001", 0100644, &b);	/* between two entries */
	add(ts, &root, "big/0300", 0100644, &b);	/* replaces one */
	add(ts, &root, "big/9999", 0100644, &b);	/* after all */
	del(ts, &root, "big/0000");
	del(ts, &root, "small/x");			/* prunes small/ */
	expect_write_tree(ts, root);
	/* the loaded version still holds what git has (its chunks are
	 * shared with the changed one) */
	assert_int_equal(tree_hash(ts, orig, &id, &e), 0);
	assert_true(oid_eq(&id, &base));
	fresh = tree_state_new(load_from_repo, NULL);
	assert_true(fold_tree(ts, orig) ==
		    fold_tree(fresh, tree_from_oid(fresh, &base)));
	tree_state_free(fresh);
	tree_state_free(ts);
}

/* A loader that hands out the raw body in ctx, whatever id is asked. */
static int load_body(void *ctx, const struct oid *id, struct buf *body,
		     struct err *e)
{
	const struct buf *raw = ctx;

	(void)id;
	(void)e;
	buf_reset(body);
	assert_int_equal(buf_add(body, raw->ptr, raw->len), 0);
	return 0;
}

/* Raw tree entries: the one reader (tree_iter) takes what git writes and
 * refuses a mode that is not octal, an empty mode or name, a cut entry;
 * the tree state refuses such a tree when it loads it. */
static void test_raw_entries(void **state)
{
	static const struct {
		const char *text;	/* "<mode> <name>", the id follows */
		size_t bad_at;		/* (size_t)-1: well formed */
	} cases[] = {
		{ "100644 a", (size_t)-1 },
		{ "40000 dir", (size_t)-1 },
		{ "100844 a", 3 },	/* 8 is no octal digit */
		{ "10064x a", 5 },
		{ "-1 a", 0 },
		{ " a", 0 },		/* no mode */
		{ "100644 ", 0 },	/* no name */
		{ "7777777 a", (size_t)-1 },	/* 07777777, the largest */
		{ "77777777 a", 7 },	/* above it */
	};
	struct oid id, got;
	struct err e = ERR_INIT;
	struct tree_iter it;
	struct tree_item item;
	size_t i;

	(void)state;
	memset(id.hash, 0xab, OID_RAW);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct buf raw = BUF_INIT(BUF_MAX_DEFAULT);
		struct tree_state *ts;
		uint32_t mode;
		int r;

		/* a good entry first, so the bad one is not at byte 0 */
		assert_int_equal(buf_add(&raw, "100644 0", 9), 0);
		assert_int_equal(buf_add(&raw, id.hash, OID_RAW), 0);
		assert_int_equal(buf_add(&raw, cases[i].text,
					 strlen(cases[i].text) + 1), 0);
		assert_int_equal(buf_add(&raw, id.hash, OID_RAW), 0);

		tree_iter_init(&it, raw.ptr, raw.len);
		assert_int_equal(tree_iter_next(&it, &item), 1);
		assert_int_equal(item.mode, 0100644);
		assert_int_equal(item.len, 1);
		assert_memory_equal(item.name, "0", 1);
		assert_true(oid_eq(&item.oid, &id));
		r = tree_iter_next(&it, &item);
		ts = tree_state_new(load_body, &raw);
		memset(&got, 0, sizeof(got));
		if (cases[i].bad_at == (size_t)-1) {
			assert_int_equal(r, 1);
			assert_true(oid_eq(&item.oid, &id));
			assert_int_equal(tree_iter_next(&it, &item), 0);
			assert_int_equal(tree_iter_offset(&it), raw.len);
			assert_int_equal(tree_lookup(ts, tree_from_oid(ts, &id), "0", 1,
						     &mode, &got, &e), 1);
		} else {
			assert_int_equal(r, -1);
			assert_int_equal(tree_iter_offset(&it),
					 9 + OID_RAW + cases[i].bad_at);
			assert_int_equal(tree_lookup(ts, tree_from_oid(ts, &id), "0", 1,
						     &mode, &got, &e), -1);
			assert_non_null(strstr(e.msg, "malformed object"));
			e = (struct err)ERR_INIT;
		}
		tree_state_free(ts);
		buf_release(&raw);
	}
	/* cut inside the id */
	{
		/* room for a whole entry, so the compiler sees no overrun */
		static const char cut[64] = "100644 a\0abc";

		tree_iter_init(&it, cut, 12);
		assert_int_equal(tree_iter_next(&it, &item), -1);
		assert_int_equal(tree_iter_offset(&it), 0);
		tree_iter_init(&it, cut, 0);
		assert_int_equal(tree_iter_next(&it, &item), 0);
	}
}

static void test_bad_paths(void **state)
{
	static const char *bad[] = { "a//b", "/a", "a/", "a/../b", ".", "a/./b" };
	struct tree_state *ts = tree_state_new(NULL, NULL);
	struct tnode *root = tree_new_empty(ts);
	struct oid a = oid_empty_tree;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct err e = ERR_INIT;
		assert_int_equal(tree_set(ts, &root, bad[i], strlen(bad[i]),
					  0100644, &a, &e), -1);
		assert_int_equal(e.kind, ERR_STREAM);
	}
	tree_state_free(ts);
}


/* ---- tree_diff against a walk of both trees ---- */

struct flist {
	char (*v)[80];
	size_t n;
};

static void flist_add(struct flist *l, const char *what, const char *path,
		      size_t len, uint32_t mode, const struct oid *id)
{
	char hex[OID_HEX + 1];

	l->v = realloc(l->v, (l->n + 1) * sizeof(*l->v));
	assert_non_null(l->v);
	snprintf(l->v[l->n++], sizeof(l->v[0]), "%s %.*s %o %s", what, (int)len,
		 path, mode, id ? oid_hex(id, hex) : "-");
}

static int walk_collect(void *ctx, const char *path, size_t len,
			uint32_t mode, const struct oid *id)
{
	flist_add(ctx, "", path, len, mode, id);
	return 0;
}

static int diff_collect(void *ctx, const char *path, size_t len,
			uint32_t old_mode, const struct oid *old_id,
			uint32_t new_mode, const struct oid *new_id)
{
	if (old_mode)
		flist_add(ctx, "-", path, len, old_mode, old_id);
	if (new_mode)
		flist_add(ctx, "+", path, len, new_mode, new_id);
	return 0;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

static void flist_sort(struct flist *l)
{
	if (l->n)
		qsort(l->v, l->n, sizeof(l->v[0]), str_cmp);
}

/* The lines of a not in b, prefixed with sign. */
static void minus(struct flist *out, const struct flist *a,
		  const struct flist *b, const char *sign)
{
	size_t i;

	for (i = 0; i < a->n; i++)
		if (!b->n || !bsearch(a->v[i], b->v, b->n, sizeof(b->v[0]), str_cmp)) {
			out->v = realloc(out->v, (out->n + 1) * sizeof(*out->v));
			snprintf(out->v[out->n++], sizeof(out->v[0]), "%s%s", sign,
				 a->v[i]);
		}
}

static void test_diff_against_walk(void **state)
{
	static const char *const names[] = { "a", "b", "a.b", "a-b", "c/d", "c",
					     "c/e", "a/x", "a/y/z", "b/a" };
	struct tree_state *ts = tree_state_new(NULL, NULL);
	struct tnode *a = tree_new_empty(ts), *b;
	struct oid ids[3];
	struct err e = ERR_INIT;
	unsigned round, i, seed = 7;
	const uint32_t modes[] = { TREE_MODE_FILE, TREE_MODE_EXEC };

	(void)state;
	for (i = 0; i < 3; i++)
		memset(ids[i].hash, (int)i + 1, OID_RAW);
	for (round = 0; round < 300; round++) {
		struct flist wa = { 0 }, wb = { 0 }, want = { 0 }, got = { 0 };

		b = a;
		for (i = 0; i < 1 + round % 5; i++) {
			char path[64];
			const char *n = names[(seed = seed * 1103515245 + 12345) >> 16 & 7 ? (seed >> 8) % 10 : 0];

			snprintf(path, sizeof(path), "%s%s", (seed >> 20) & 1 ? "p/" : "", n);
			if ((seed >> 4) % 4 == 0)
				assert_true(tree_remove(ts, &b, path, strlen(path), &e) >= 0);
			else
				assert_int_equal(tree_set(ts, &b, path, strlen(path),
							  modes[(seed >> 6) & 1],
							  &ids[(seed >> 9) % 3], &e), 0);
		}
		assert_int_equal(tree_walk(ts, a, walk_collect, &wa, &e), 0);
		assert_int_equal(tree_walk(ts, b, walk_collect, &wb, &e), 0);
		flist_sort(&wa);
		flist_sort(&wb);
		minus(&want, &wa, &wb, "-");
		minus(&want, &wb, &wa, "+");
		assert_int_equal(tree_diff(ts, a, b, diff_collect, &got, &e), 0);
		flist_sort(&want);
		flist_sort(&got);
		assert_int_equal(got.n, want.n);
		for (i = 0; i < got.n; i++)
			assert_string_equal(got.v[i], want.v[i]);
		/* from the empty tree: every file of b, added */
		free(got.v);
		got.v = NULL;
		got.n = 0;
		assert_int_equal(tree_diff(ts, NULL, b, diff_collect, &got, &e), 0);
		assert_int_equal(got.n, wb.n);
		free(wa.v);
		free(wb.v);
		free(want.v);
		free(got.v);
		tree_state_freeze(ts);
		a = b;
	}
	tree_state_free(ts);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_random_against_index),
		cmocka_unit_test(test_copy_directory_snapshot),
		cmocka_unit_test(test_big_directory),
		cmocka_unit_test(test_loaded_big_directory),
		cmocka_unit_test(test_raw_entries),
		cmocka_unit_test(test_bad_paths),
		cmocka_unit_test(test_diff_against_walk),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
