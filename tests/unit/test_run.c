/*
 * test_run.c - rewrite/run/ on its own: the table of state files, the
 * check that every ref is still the conversion of its backup (what
 * --restart and --undo stand on), and the text of RESET.md.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rewrite/run/run.h"

static void oid_n(struct oid *o, unsigned char n)
{
	memset(o->hash, n, OID_RAW);
}

/* ---- the state files ---- */

static void test_state_files(void **state)
{
	struct state_files f;

	(void)state;
	run_state_files_init(&f, "/repo/.git/migrate", ".new");
	assert_string_equal(f.map, "/repo/.git/migrate/commit-map.new");
	assert_string_equal(f.refmap, "/repo/.git/migrate/ref-map.new");
	assert_string_equal(f.marks, "/repo/.git/migrate/marks.new");
	assert_string_equal(f.imarks, "/repo/.git/migrate/import-marks.new");
	run_state_files_free(&f);
	run_state_files_init(&f, "/s", "");
	assert_string_equal(f.map, "/s/commit-map");
	run_state_files_free(&f);
}

/* ---- every ref the conversion of its backup ---- */

struct refs_case {
	struct gitref v[8];
	size_t n;
};

static void add(struct refs_case *c, const char *name, unsigned char id,
		int symbolic)
{
	struct gitref *g = &c->v[c->n++];

	memset(g, 0, sizeof(*g));
	g->name = (char *)name;
	oid_n(&g->id, id);
	g->commit = g->id;
	g->has_commit = 1;
	g->symbolic = symbolic;
}

static struct gitrefs view(struct refs_case *c)
{
	struct gitrefs r = { c->v, c->n };
	return r;
}

static void test_conversions(void **state)
{
	struct refs_case now = { .n = 0 }, orig = { .n = 0 };
	struct gitrefs n, o;
	struct cmap *m = cmap_new();
	struct err e = ERR_INIT;
	struct oid a, a2, b, b2;

	(void)state;
	oid_n(&a, 0x0a);
	oid_n(&a2, 0xa2);
	oid_n(&b, 0x0b);
	oid_n(&b2, 0xb2);
	cmap_put(m, &a, &a2);
	cmap_put(m, &b, &b2);
	/* sorted by name, as gitrefs_list gives them */
	add(&now, "refs/heads/feature", 0xb2, 0);
	add(&now, "refs/heads/main", 0xa2, 0);
	add(&now, "refs/migrate/original/refs/heads/main", 0x0a, 0);
	add(&now, "refs/remotes/origin/HEAD", 0xa2, 1);	/* symbolic: skipped */
	add(&orig, "refs/migrate/original/refs/heads/feature", 0x0b, 0);
	add(&orig, "refs/migrate/original/refs/heads/main", 0x0a, 0);
	n = view(&now);
	o = view(&orig);
	assert_int_equal(run_check_conversions(&n, &o, m, "--undo", "undoing", &e), 0);

	/* a commit made on the rewritten main since the run */
	oid_n(&now.v[1].id, 0xcc);
	now.v[1].commit = now.v[1].id;
	assert_int_equal(run_check_conversions(&n, &o, m, "--undo", "undoing", &e), -1);
	assert_int_equal(e.kind, ERR_USAGE);
	assert_non_null(strstr(e.msg, "--undo: refs/heads/main is not the conversion "
				      "of its backup any more (it moved since the run"));
	assert_non_null(strstr(e.msg, "undoing would drop them"));
	now.v[1].id = a2;
	now.v[1].commit = a2;

	/* a ref made after the run: no backup */
	now.v[0].name = "refs/heads/fresh";
	assert_int_equal(run_check_conversions(&n, &o, m, "--restart", "restarting", &e), -1);
	assert_non_null(strstr(e.msg, "--restart: refs/heads/fresh is not under "
				      "refs/migrate/original/"));
	cmap_free(m);
}

/* ---- RESET.md ---- */

static void test_reset_text(void **state)
{
	static char h[] = "/nowhere/store";
	struct run r;
	struct state_files f;
	struct buf refmap = BUF_INIT(BUF_MAX_DEFAULT), out = BUF_INIT(SIZE_MAX / 2);
	char old[OID_HEX + 1], new[OID_HEX + 1];
	struct oid a, b;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.o.repo = "/src";
	r.dst = "/src";
	r.src_gitdir = "/src/.git";
	r.dst_gitdir = "/src/.git";
	r.state = "/src/.git/migrate";
	r.store = h;
	r.o.in_place = 1;
	run_state_files_init(&f, r.state, "");
	oid_n(&a, 0x11);
	oid_n(&b, 0x22);
	buf_printf(&refmap, "%s %s refs/heads/main\n", oid_hex(&a, old), oid_hex(&b, new));
	buf_printf(&refmap, "%s %s refs/tags/v1\n", oid_hex(&a, old), oid_hex(&b, new));

	run_reset_text(&out, &r, &f, &refmap);
	assert_non_null(strstr(out.ptr, "rewrote the history of /src/.git into /src/.git"));
	assert_non_null(strstr(out.ptr, "| `refs/heads/main` | `1111"));
	assert_non_null(strstr(out.ptr, "    git checkout main && git reset --hard origin/main\n"));
	assert_null(strstr(out.ptr, "git checkout v1"));
	/* in place: published with migrate push, undone with --undo */
	assert_non_null(strstr(out.ptr, "## Publishing (rewritten in place)"));
	assert_non_null(strstr(out.ptr, "    migrate push "));
	assert_non_null(strstr(out.ptr, "--undo"));
	assert_null(strstr(out.ptr, "\n    git push --force"));	/* no command of it */
	assert_null(strstr(out.ptr, "git annex"));
	/* no LFS object stored: no git lfs pull */
	assert_null(strstr(out.ptr, "git lfs pull"));

	/* --to: packed, nothing to publish from here; git-annex said */
	buf_reset(&out);
	r.o.in_place = 0;
	r.o.to = "/new";
	r.annex = 1;
	r.annex_dir = "/new/.git/annex";
	snprintf(r.annex_uuid, sizeof(r.annex_uuid), "%s",
		 "01234567-89ab-cdef-0123-456789abcdef");
	run_reset_text(&out, &r, &f, &refmap);
	assert_non_null(strstr(out.ptr, "## Packed already"));
	assert_null(strstr(out.ptr, "migrate push"));
	assert_non_null(strstr(out.ptr, "git annex init && git annex get ."));
	assert_non_null(strstr(out.ptr, "UUID 01234567-89ab-cdef-0123-456789abcdef"));

	run_state_files_free(&f);
	buf_release(&refmap);
	buf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_state_files),
		cmocka_unit_test(test_conversions),
		cmocka_unit_test(test_reset_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
