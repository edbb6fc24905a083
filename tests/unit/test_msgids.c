/* test_msgids.c - the message-id tokenizer (rewrite/engine/msgids.c):
 * which words are id-like, the verdict on each, and the rewrite. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rewrite/engine/engine.h"
#include "rewrite/git/git.h"

static void oid_of(struct oid *o, const char *hex)
{
	assert_int_equal(oid_from_hex(o, hex, strlen(hex)), 0);
}

static void put(struct cmap *m, const char *old, const char *new)
{
	struct oid a, b;

	oid_of(&a, old);
	oid_of(&b, new);
	cmap_put(m, &a, &b);
}

/* two old commits sharing 9 digits, one changed and one not */
#define A_OLD "abcdef012aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define A_NEW "1111111111111111111111111111111111111111"
#define B_OLD "abcdef012bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
/* a changed one alone, and one an earlier run dropped */
#define C_OLD "cccccccccccccccccccccccccccccccccccccccc"
#define C_NEW "2222222222222222222222222222222222222222"
#define D_OLD "dddddddddddddddddddddddddddddddddddddddd"
#define ZEROS "0000000000000000000000000000000000000000"

static struct cmap *sample(void)
{
	struct cmap *m = cmap_new();

	put(m, A_OLD, A_NEW);
	put(m, B_OLD, B_OLD);
	put(m, C_OLD, C_NEW);
	put(m, D_OLD, ZEROS);
	return m;
}

static void test_verdicts(void **state)
{
	struct cmap *map = sample();
	struct msgids *m = msgids_new(map);
	struct oid old, want;

	(void)state;
	assert_int_equal(msgids_judge(m, A_OLD, 40, &old), MSGID_FULL);
	oid_of(&want, A_OLD);
	assert_true(oid_eq(&old, &want));
	/* shared by A (changed) and B (unchanged): ambiguous all the same */
	assert_int_equal(msgids_judge(m, "abcdef0", 7, NULL), MSGID_AMBIGUOUS);
	assert_int_equal(msgids_judge(m, "abcdef012", 9, NULL), MSGID_AMBIGUOUS);
	assert_int_equal(msgids_judge(m, "abcdef012a", 10, &old), MSGID_UNIQUE);
	assert_true(oid_eq(&old, &want));
	assert_int_equal(msgids_judge(m, "abcdef012b", 10, &old), MSGID_UNIQUE);
	oid_of(&want, B_OLD);
	assert_true(oid_eq(&old, &want));
	assert_int_equal(msgids_judge(m, "ccccccc", 7, NULL), MSGID_UNIQUE);
	/* too short, too long, not lowercase hex, no such id */
	assert_int_equal(msgids_judge(m, "cccccc", 6, NULL), MSGID_UNKNOWN);
	assert_int_equal(msgids_judge(m, C_OLD "c", 41, NULL), MSGID_UNKNOWN);
	assert_int_equal(msgids_judge(m, "CCCCCCC", 7, NULL), MSGID_UNKNOWN);
	assert_int_equal(msgids_judge(m, "cccccccx", 8, NULL), MSGID_UNKNOWN);
	assert_int_equal(msgids_judge(m, "ccccccd", 7, NULL), MSGID_UNKNOWN);
	assert_int_equal(msgids_judge(m, "eeeeeee", 7, NULL), MSGID_UNKNOWN);
	/* the map grows: the new entry is seen at the next call */
	put(map, "eeeeeee" "000000000000000000000000000000000", C_NEW);
	assert_int_equal(msgids_judge(m, "eeeeeee", 7, NULL), MSGID_UNIQUE);
	msgids_free(m);
	cmap_free(map);
}

struct seen {
	char text[1024];
};

static void note(void *ctx, size_t off, size_t n, enum msgid_verdict v,
		 const struct oid *old)
{
	static const char *name[] = { "unknown", "full", "unique", "ambiguous" };
	struct seen *s = ctx;
	size_t len = strlen(s->text);

	assert_true((v == MSGID_FULL || v == MSGID_UNIQUE) == (old != NULL));
	snprintf(s->text + len, sizeof(s->text) - len, "%zu+%zu:%s ", off, n,
		 name[v]);
}

static void test_scan_words(void **state)
{
	struct cmap *map = sample();
	struct msgids *m = msgids_new(map);
	struct seen s = { "" };
	/* 0: ccccccc (unique); 8: 0xccccccc (not a word); 18: cccccccz (not);
	 * 27: _ccccccc (not); 36: ccccccc_ (not); 45: CCCCCCC (not hex);
	 * 53: abcdef0 (ambiguous); 61: cccccc (too short); 68: 1234567
	 * (unknown); 76: a full id, then a dot */
	const char *text = "ccccccc 0xccccccc cccccccz _ccccccc ccccccc_ CCCCCCC "
			   "abcdef0 cccccc 1234567 " C_OLD ".";

	(void)state;
	msgids_scan(m, text, strlen(text), note, &s);
	assert_string_equal(s.text, "0+7:unique 53+7:ambiguous 68+7:unknown "
				    "76+40:full ");
	msgids_free(m);
	cmap_free(map);
}

static void test_apply(void **state)
{
	struct cmap *map = sample();
	struct msgids *m = msgids_new(map);
	char text[] = "Fixes " C_OLD ", after ccccccccc and abcdef012a;\n"
		      "not abcdef0 (two), abcdef012b (unchanged), ddddddd "
		      "(dropped), 1234567.";

	(void)state;
	assert_int_equal(msgids_apply(m, text, strlen(text)), 3);
	assert_string_equal(text, "Fixes " C_NEW ", after 222222222 and 1111111111;\n"
			    "not abcdef0 (two), abcdef012b (unchanged), ddddddd "
			    "(dropped), 1234567.");
	msgids_free(m);
	cmap_free(map);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_verdicts),
		cmocka_unit_test(test_scan_words),
		cmocka_unit_test(test_apply),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
