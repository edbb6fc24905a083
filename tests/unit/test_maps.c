/* test_maps.c - commit map formats, loading and atomic writes. */
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

static char dir[] = "/tmp/migrate-test-maps-XXXXXX";

static void oid_n(struct oid *o, unsigned char n)
{
	memset(o->hash, n, OID_RAW);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_formats(void **state)
{
	struct cmap *m = cmap_new();
	struct buf out = BUF_INIT(BUF_MAX_DEFAULT);
	struct oid a, b, c;

	(void)state;
	oid_n(&a, 0xbb);
	oid_n(&b, 0xaa);
	oid_n(&c, 0xcc);
	cmap_put(m, &a, &c);	/* changed */
	cmap_put(m, &b, &b);	/* unchanged */
	assert_int_equal(cmap_format(m, CMAP_FILTER_REPO, &out), 0);
	assert_string_equal(out.ptr,
		"old                                      new\n"
		"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb cccccccccccccccccccccccccccccccccccccccc\n"
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n");
	buf_reset(&out);
	assert_int_equal(cmap_format(m, CMAP_LFS, &out), 0);
	assert_string_equal(out.ptr,
		"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb,cccccccccccccccccccccccccccccccccccccccc\n");
	buf_reset(&out);
	assert_int_equal(cmap_format(m, CMAP_BFG, &out), 0);
	assert_string_equal(out.ptr,
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n"
		"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb cccccccccccccccccccccccccccccccccccccccc\n");
	buf_release(&out);
	cmap_free(m);
}

static void test_load_roundtrip_and_errors(void **state)
{
	struct cmap *m = cmap_new();
	struct err e = ERR_INIT;
	char path[256];
	struct oid a, c;

	(void)state;
	snprintf(path, sizeof(path), "%s/map", dir);
	write_file(path, "old                                      new\n"
		   "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb cccccccccccccccccccccccccccccccccccccccc\n"
		   "1111111111111111111111111111111111111111,2222222222222222222222222222222222222222\n");
	assert_int_equal(cmap_load(m, path, &e), 0);
	assert_int_equal(cmap_count(m), 2);
	oid_n(&a, 0xbb);
	oid_n(&c, 0xcc);
	assert_non_null(cmap_get(m, &a));
	assert_true(oid_eq(cmap_get(m, &a), &c));

	write_file(path, "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb cccccccccccccccccccccccccccccccccccccccc\n"
		   "not a line\n");
	assert_int_equal(cmap_load(m, path, &e), -1);
	assert_non_null(strstr(e.msg, ":2:"));
	snprintf(path, sizeof(path), "%s/missing", dir);
	assert_int_equal(cmap_load(m, path, &e), 0);
	cmap_free(m);
}

/* The marks file and the ref map: what is written reads back, and the
 * lines that are not one are refused. */
static void test_marks_and_ref_map_lines(void **state)
{
	static const char *bad_marks[] = {
		"", ":", ":1", "1 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		": aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		":x aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		":1 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		":1 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		":1 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaz",
		":18446744073709551616 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	};
	static const char *bad_refs[] = {
		"",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb ",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa,bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb x",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb,x",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaz bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb x",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbz x",
	};
	struct buf out = BUF_INIT(BUF_MAX_DEFAULT);
	struct refmap_line l;
	struct oid a, b, id;
	uint64_t mark;
	size_t i;

	(void)state;
	oid_n(&a, 0xaa);
	oid_n(&b, 0xbb);
	marks_line_format(&out, 18446744073709551615ull, &a);
	assert_string_equal(out.ptr,
		":18446744073709551615 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n");
	assert_int_equal(marks_line_parse(out.ptr, out.len - 1, &mark, &id), 0);
	assert_true(mark == 18446744073709551615ull);
	assert_true(oid_eq(&id, &a));
	for (i = 0; i < sizeof(bad_marks) / sizeof(bad_marks[0]); i++)
		assert_int_equal(marks_line_parse(bad_marks[i], strlen(bad_marks[i]),
						  &mark, &id), -1);

	buf_reset(&out);
	refmap_line_format(&out, &oid_null, &b, "refs/heads/a b");
	assert_string_equal(out.ptr, "0000000000000000000000000000000000000000 "
			    "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb refs/heads/a b\n");
	assert_int_equal(refmap_line_parse(out.ptr, out.len - 1, &l), 0);
	assert_true(oid_is_null(&l.old));
	assert_true(oid_eq(&l.new, &b));
	assert_int_equal(l.ref_len, 14);
	assert_memory_equal(l.ref, "refs/heads/a b", 14);
	for (i = 0; i < sizeof(bad_refs) / sizeof(bad_refs[0]); i++)
		assert_int_equal(refmap_line_parse(bad_refs[i], strlen(bad_refs[i]),
						   &l), -1);
	buf_release(&out);
}

static void test_atomic(void **state)
{
	struct buf data = BUF_INIT(BUF_MAX_DEFAULT);
	struct err e = ERR_INIT;
	char path[256], line[64];
	char *tmp = NULL;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/out", dir);
	write_file(path, "old\n");
	buf_adds(&data, "new\n");
	assert_int_equal(file_write_prepare(path, &data, &tmp, &e), 0);
	/* the temp name is one the journal's clean-up knows, and only such */
	assert_true(file_is_temp(strrchr(tmp, '/') + 1));
	assert_false(file_is_temp("out"));
	assert_false(file_is_temp(".tmp-abcdef"));	/* no name before it */
	assert_false(file_is_temp("out.tmp-abcde"));
	assert_false(file_is_temp("out.tmp-abcdefg"));
	assert_false(file_is_temp("out.tmp-abc-ef"));
	assert_true(file_is_temp("out.tmp-x.tmp-Ab0Cd9"));
	/* until committed, the old file is intact */
	f = fopen(path, "r");
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	assert_string_equal(line, "old\n");
	assert_int_equal(file_write_commit(tmp, path, &e), 0);
	free(tmp);
	f = fopen(path, "r");
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	assert_string_equal(line, "new\n");
	assert_int_equal(file_write_prepare("/nonexistent-dir/x", &data, &tmp, &e), -1);
	assert_int_equal(e.kind, ERR_IO);
	assert_non_null(strstr(e.msg, "/nonexistent-dir/x"));
	buf_release(&data);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_formats),
		cmocka_unit_test(test_load_roundtrip_and_errors),
		cmocka_unit_test(test_marks_and_ref_map_lines),
		cmocka_unit_test(test_atomic),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
