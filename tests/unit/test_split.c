/*
 * test_split.c - record splitting: per-year and per-record rules on a
 * generated tracker-like text, head handling, every bad key and bad spec,
 * named groups, CRLF and missing final newlines, reassembly, and the
 * incremental cache judged against a fresh cache and against a naive
 * splitter written here (one regex per line, no reuse), which is the
 * oracle. The last cases assert, without timing anything, that a small
 * edit of a big version re-matches only a few lines.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "split/split.h"

#define YEAR_RE "^CVE-(\\d{4})-"
#define YEAR_INTO "data/CVE/list.{1}"
#define REC_RE "^CVE-(\\d{4})-(\\d+)"
#define REC_INTO "data/CVE/{1}/{2}"
#define HEAD "data/CVE/list.head"

/* ---- small helpers ---- */

static uint64_t rng_state = 88172645463325252ull;

static uint32_t rnd(uint32_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state % n);
}

static struct split_spec *spec_ok(const char *re, const char *into,
				  const char *head)
{
	struct split_spec *s = NULL;
	struct err e = ERR_INIT;

	if (split_spec_new(&s, re, into, head, &e) < 0)
		fail_msg("spec: %s", e.msg);
	return s;
}

/* A copy of a result, to compare after the cache has moved on. */
struct snap {
	size_t n;
	char *path[100000];
	struct buf bytes[100000];
	int unchanged[100000], is_head[100000];
	size_t nranges[100000];
	int reassembles;
};

static void snap_clear(struct snap *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		free(s->path[i]);
		buf_release(&s->bytes[i]);
	}
	s->n = 0;
}

static void snap_take(struct snap *s, const struct split_result *r)
{
	struct err e = ERR_INIT;
	size_t i, j, sum;

	snap_clear(s);
	s->n = split_result_count(r);
	assert_true(s->n <= 100000);
	for (i = 0; i < s->n; i++) {
		const struct split_part *p = split_result_part(r, i);

		assert_int_equal(strlen(p->path), p->path_len);
		s->path[i] = strdup(p->path);
		buf_init(&s->bytes[i], (size_t)1 << 30);
		assert_int_equal(split_part_copy(&s->bytes[i], p, &e), 0);
		assert_int_equal(s->bytes[i].len, p->size);
		for (j = sum = 0; j < p->nranges; j++)
			sum += p->ranges[j].len;
		assert_int_equal(sum, p->size);
		assert_true(p->size > 0);
		s->unchanged[i] = p->unchanged;
		s->is_head[i] = p->is_head;
		s->nranges[i] = p->nranges;
	}
	s->reassembles = split_result_reassembles(r);
}

static void snap_equal(const struct snap *a, const struct snap *b)
{
	size_t i;

	assert_int_equal(a->n, b->n);
	for (i = 0; i < a->n; i++) {
		assert_string_equal(a->path[i], b->path[i]);
		assert_int_equal(a->bytes[i].len, b->bytes[i].len);
		assert_memory_equal(a->bytes[i].ptr, b->bytes[i].ptr,
				    a->bytes[i].len);
		assert_int_equal(a->is_head[i], b->is_head[i]);
		assert_int_equal(a->nranges[i], b->nranges[i]);
	}
	assert_int_equal(a->reassembles, b->reassembles);
}

/* Whether the parts, concatenated, are data. */
static int snap_concat_is(const struct snap *s, const char *d, size_t len)
{
	size_t at = 0, i;

	for (i = 0; i < s->n; i++) {
		if (at + s->bytes[i].len > len ||
		    memcmp(d + at, s->bytes[i].ptr, s->bytes[i].len))
			return 0;
		at += s->bytes[i].len;
	}
	return at == len;
}

/*
 * The oracle: one pcre2_match per line, {N} placeholders only, no
 * checks on keys (tests that use it never produce bad ones).
 */
static void naive_split(struct snap *s, const char *re, const char *into,
			const char *head, const char *d, size_t len)
{
	int code;
	PCRE2_SIZE at, pos = 0;
	pcre2_code *rx = pcre2_compile((PCRE2_SPTR)re, PCRE2_ZERO_TERMINATED,
				       0, &code, &at, NULL);
	pcre2_match_data *md = pcre2_match_data_create_from_pattern(rx, NULL);
	size_t cur = (size_t)-1, last = (size_t)-1, i, total = 0;
	struct buf path = BUF_INIT(1 << 16);

	assert_non_null(rx);
	snap_clear(s);
	while (pos < len) {
		const char *nl = memchr(d + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - d) - pos : len - pos;
		size_t next = nl ? pos + n + 1 : len;

		if (pcre2_match(rx, (PCRE2_SPTR)(d + pos), n, 0, 0, md, NULL) >=
		    0) {
			const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
			const char *t;

			buf_reset(&path);
			for (t = into; *t; t++) {
				if (*t == '{') {
					int g = atoi(t + 1);

					buf_add(&path, d + pos + ov[2 * g],
						ov[2 * g + 1] - ov[2 * g]);
					t = strchr(t, '}');
				} else {
					buf_addch(&path, *t);
				}
			}
			for (cur = 0; cur < s->n; cur++)
				if (!strcmp(s->path[cur], path.ptr))
					break;
			if (cur == s->n) {
				s->path[s->n] = strdup(path.ptr);
				buf_init(&s->bytes[s->n], (size_t)1 << 30);
				s->is_head[s->n] = 0;
				s->nranges[s->n] = 0;
				s->n++;
			}
		} else if (pos == 0) {
			assert_non_null(head);
			s->path[0] = strdup(head);
			buf_init(&s->bytes[0], (size_t)1 << 30);
			s->is_head[0] = 1;
			s->nranges[0] = 0;
			s->n = 1;
			cur = 0;
		}
		if (cur != last)
			s->nranges[cur]++;	/* maximal runs of one part */
		last = cur;
		buf_add(&s->bytes[cur], d + pos, next - pos);
		pos = next;
	}
	for (i = 0; i < s->n; i++)
		total += s->bytes[i].len;
	assert_int_equal(total, len);
	s->reassembles = snap_concat_is(s, d, len);
	buf_release(&path);
	pcre2_match_data_free(md);
	pcre2_code_free(rx);
}

/* ---- a tracker-like text ---- */

struct trec {
	int year, id, notes;
	unsigned salt;
	int flag;	/* 1: id "XXXX" (no per-record key), 2: demoted */
};

struct tracker {
	struct trec r[60000];
	size_t n;
	int head_lines;
	unsigned head_salt;
	int crlf, no_final_nl;
};

static void tracker_render(const struct tracker *t, struct buf *out)
{
	const char *eol = t->crlf ? "\r\n" : "\n";
	size_t i;
	int k;

	buf_reset(out);
	for (k = 0; k < t->head_lines; k++)
		buf_printf(out, "# tracker head %d/%u%s", k, t->head_salt, eol);
	for (i = 0; i < t->n; i++) {
		const struct trec *r = &t->r[i];

		if (r->flag == 1)
			buf_printf(out, "CVE-%04d-XXXX (description of %u)%s",
				   r->year, r->salt, eol);
		else
			buf_printf(out, "%sCVE-%04d-%04d (description of %u ...)%s",
				   r->flag == 2 ? "\t" : "", r->year, r->id,
				   r->salt, eol);
		for (k = 0; k < r->notes; k++)
			buf_printf(out, "\tNOTE: note %d of %u%s", k,
				   r->salt * 7 + (unsigned)k, eol);
		if (r->salt % 5 == 0)
			buf_printf(out, "\t{DSA-%u-1}%s", r->salt, eol);
	}
	if (t->no_final_nl && out->len && out->ptr[out->len - 1] == '\n') {
		out->len -= t->crlf ? 2 : 1;
		out->ptr[out->len] = '\0';
	}
}

static struct trec trec_new(int year, int id)
{
	return (struct trec){ year, id, (int)rnd(4), rnd(100000), 0 };
}

/* n records, newest year first, about per_year per year. */
static void tracker_fill(struct tracker *t, size_t n, size_t per_year)
{
	size_t i;

	memset(t, 0, sizeof(*t));
	t->n = n;
	for (i = 0; i < n; i++)
		t->r[i] = trec_new(2024 - (int)(i / per_year),
				   (int)(9999 - i % per_year));
}

static void tracker_insert(struct tracker *t, size_t at, struct trec r)
{
	memmove(&t->r[at + 1], &t->r[at], (t->n - at) * sizeof(t->r[0]));
	t->r[at] = r;
	t->n++;
}

static void tracker_delete(struct tracker *t, size_t at)
{
	memmove(&t->r[at], &t->r[at + 1], (t->n - at - 1) * sizeof(t->r[0]));
	t->n--;
}

static struct tracker trk;	/* too big for the stack */
static struct snap s1, s2, s3, s4;
static struct buf text = BUF_INIT((size_t)1 << 30);

static const struct split_result *run_ok(struct split_cache *c,
					 const struct buf *b)
{
	const struct split_result *r = NULL;
	struct err e = ERR_INIT;

	if (split_run(c, b->ptr, b->len, &r, &e) < 0)
		fail_msg("split_run: %s", e.msg);
	return r;
}

/* Splits text with a fresh cache and checks it against the oracle. */
static void check_fresh(const char *re, const char *into, const char *head)
{
	struct split_spec *s = spec_ok(re, into, head);
	struct split_cache *c = split_cache_new(s);
	size_t i;

	snap_take(&s1, run_ok(c, &text));
	naive_split(&s2, re, into, head, text.ptr, text.len);
	snap_equal(&s1, &s2);
	for (i = 0; i < s1.n; i++)
		assert_false(s1.unchanged[i]);
	split_cache_free(c);
	split_spec_free(s);
}

/* ---- cases ---- */

static void test_per_year(void **state)
{
	(void)state;
	tracker_fill(&trk, 3000, 170);
	trk.head_lines = 2;
	tracker_render(&trk, &text);
	check_fresh(YEAR_RE, YEAR_INTO, HEAD);
	assert_int_equal(s1.n, 1 + (3000 + 169) / 170);
	assert_string_equal(s1.path[0], HEAD);
	assert_true(s1.is_head[0]);
	assert_string_equal(s1.path[1], "data/CVE/list.2024");
	assert_string_equal(s1.path[2], "data/CVE/list.2023");
	assert_true(s1.reassembles);
	assert_true(snap_concat_is(&s1, text.ptr, text.len));
}

static void test_per_record(void **state)
{
	(void)state;
	tracker_fill(&trk, 2000, 300);
	tracker_render(&trk, &text);
	check_fresh(REC_RE, REC_INTO, NULL);
	assert_int_equal(s1.n, 2000);
	assert_string_equal(s1.path[0], "data/CVE/2024/9999");
	assert_string_equal(s1.path[1], "data/CVE/2024/9998");
	assert_false(s1.is_head[0]);
	assert_true(s1.reassembles);
}

static const struct split_result *split_str(struct split_cache *c,
					    const char *d, struct err *e)
{
	const struct split_result *r = NULL;

	if (split_run(c, d, strlen(d), &r, e) < 0)
		return NULL;
	return r;
}

/* The change lists: what a version adds, changes and loses, and nothing
 * else; the full listing is still there when asked for afterwards. */
static void test_change_lists(void **state)
{
	struct split_spec *s = spec_ok("^CVE-(\\d{4})-(\\d+)", "d/{1}/{2}", "d/head");
	struct split_cache *c = split_cache_new(s);
	struct err e = ERR_INIT;
	const struct split_result *r;
	size_t len;

	(void)state;
	r = split_str(c, "h\nCVE-2001-1 a\nCVE-2001-2 b\nCVE-2002-3 c\n", &e);
	assert_non_null(r);
	assert_int_equal(split_result_nchanged(r), 4);	/* first run: all new */
	assert_int_equal(split_result_nvanished(r), 0);
	/* one record edited, one added, one removed */
	r = split_str(c, "h\nCVE-2001-1 A\nCVE-2002-3 c\nCVE-2002-4 d\n", &e);
	assert_non_null(r);
	assert_int_equal(split_result_nchanged(r), 2);
	{	/* in no particular order */
		const struct split_part *a = split_result_changed(r, 0);
		const struct split_part *b = split_result_changed(r, 1);

		if (strcmp(a->path, b->path) > 0) {
			const struct split_part *t = a;
			a = b;
			b = t;
		}
		assert_string_equal(a->path, "d/2001/1");
		assert_int_equal(a->size, 13);	/* "CVE-2001-1 A\n" */
		assert_string_equal(b->path, "d/2002/4");
	}
	assert_int_equal(split_result_nvanished(r), 1);
	assert_string_equal(split_result_vanished(r, 0, &len), "d/2001/2");
	assert_int_equal(len, 8);
	assert_int_equal(split_result_count(r), 4);
	assert_string_equal(split_result_part(r, 3)->path, "d/2002/4");
	/* the same version again: nothing */
	r = split_str(c, "h\nCVE-2001-1 A\nCVE-2002-3 c\nCVE-2002-4 d\n", &e);
	assert_int_equal(split_result_nchanged(r), 0);
	assert_int_equal(split_result_nvanished(r), 0);
	assert_int_equal(split_result_part(r, 1)->unchanged, 1);
	split_cache_free(c);
	split_spec_free(s);
}

static void test_head(void **state)
{
	struct split_spec *s = spec_ok("^K (\\w+)", "p/{1}", "p/HEAD");
	struct split_cache *c = split_cache_new(s);
	const struct split_result *r;
	struct err e = ERR_INIT;

	(void)state;
	r = split_str(c, "h1\nh2\nK a\nx\nK b\n", &e);
	assert_non_null(r);
	assert_int_equal(split_result_count(r), 3);
	assert_string_equal(split_result_part(r, 0)->path, "p/HEAD");
	assert_true(split_result_part(r, 0)->is_head);
	assert_int_equal(split_result_part(r, 0)->size, 6);
	assert_string_equal(split_result_part(r, 1)->path, "p/a");
	assert_int_equal(split_result_part(r, 1)->size, 6);
	/* no head lines: no head part */
	r = split_str(c, "K a\nx\nK b\n", &e);
	assert_int_equal(split_result_count(r), 2);
	assert_false(split_result_part(r, 0)->is_head);
	assert_true(split_result_part(r, 0)->unchanged);
	/* only head lines, no final newline */
	r = split_str(c, "just\na head", &e);
	assert_int_equal(split_result_count(r), 1);
	assert_true(split_result_part(r, 0)->is_head);
	assert_false(split_result_part(r, 0)->unchanged);
	assert_int_equal(split_result_part(r, 0)->size, 11);
	/* the head changes while the records stay */
	r = split_str(c, "h\nK a\nK b\n", &e);
	r = split_str(c, "h2\nK a\nK b\n", &e);
	assert_int_equal(split_result_count(r), 3);
	assert_false(split_result_part(r, 0)->unchanged);
	assert_true(split_result_part(r, 1)->unchanged);
	assert_true(split_result_part(r, 2)->unchanged);
	/* empty version: no part at all */
	r = split_str(c, "", &e);
	assert_int_equal(split_result_count(r), 0);
	assert_true(split_result_reassembles(r));
	assert_int_equal(split_run(c, NULL, 0, &r, &e), 0);
	assert_int_equal(split_result_count(r), 0);
	split_cache_free(c);
	split_spec_free(s);
}

static void test_missing_head(void **state)
{
	struct split_spec *s = spec_ok("^K (\\w+)", "p/{1}", NULL);
	struct split_cache *c = split_cache_new(s);
	struct err e = ERR_INIT;

	(void)state;
	assert_null(split_str(c, "h1\nh2\nK a\n", &e));
	assert_int_equal(e.kind, ERR_STREAM);
	assert_string_equal(e.msg,
			    "2 line(s) before the first record and no head= "
			    "part");
	assert_null(split_str(c, "one\ntwo\nthree", &e));
	assert_string_equal(e.msg,
			    "3 line(s) before the first record and no head= "
			    "part");
	/* after a good version, an edit that creates a head */
	assert_non_null(split_str(c, "K a\nK b\n", &e));
	assert_null(split_str(c, "x\nK a\nK b\n", &e));
	assert_string_equal(e.msg,
			    "1 line(s) before the first record and no head= "
			    "part");
	split_cache_free(c);
	split_spec_free(s);
}

struct bad_key {
	const char *re, *into, *head, *data;
	size_t len;		/* 0: strlen */
	const char *says;
};

static void test_bad_keys(void **state)
{
	static const struct bad_key cases[] = {
		{ "^K (\\S*)", "p/{1}", NULL, "K a\nK ..\n", 0,
		  "line 2: key \"..\" is '..'" },
		{ "^K (\\S*)", "p/list.{1}", NULL, "K a\nK ..\n", 0,
		  "line 2: key \"..\" is '..'" },
		{ "^K (.*)", "p/{1}", NULL, "K a\n\tx\nK a/b\n", 0,
		  "line 3: key \"a/b\" contains '/'" },
		{ "^K (\\d*)", "p/{1}", NULL, "K 1\nK x\n", 0,
		  "line 2: key \"\" is empty" },
		{ "^K (?:(\\d)|x)", "p/{1}", NULL, "K x\n", 0,
		  "line 1: key \"\" is empty" },
		{ "^K (.*)", "p/{1}", NULL, "K a\0b\n", 6,
		  "line 1: key \"a\\x00b\" contains NUL" },
		{ "^K (.*)", "p/{1}", NULL, "K .\n", 0,
		  "line 1: part path \"p/.\" has a '.' component" },
		{ "^K (.*)", "p/{1}x", NULL, "K ..\n", 0,
		  "line 1: key \"..\" is '..'" },
		{ "^K (.*)", "p/{1}", "p/HEAD", "h\nK HEAD\n", 0,
		  "line 2: part path \"p/HEAD\" is the head path" },
		{ "^K (.*)", "p/{1}/{1}", NULL, "K a\nK ..\n", 0,
		  "line 2: key \"..\" is '..'" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct bad_key *k = &cases[i];
		struct split_spec *s = spec_ok(k->re, k->into, k->head);
		struct split_cache *c = split_cache_new(s);
		const struct split_result *r = NULL;
		struct err e = ERR_INIT;
		size_t len = k->len ? k->len : strlen(k->data);

		if (split_run(c, k->data, len, &r, &e) == 0)
			fail_msg("case %zu: no error", i);
		assert_int_equal(e.kind, ERR_STREAM);
		if (!strstr(e.msg, k->says))
			fail_msg("case %zu: got \"%s\"", i, e.msg);
		split_cache_free(c);
		split_spec_free(s);
	}
	/* a key too long for a path */
	{
		struct split_spec *s = spec_ok("^K (.*)", "p/{1}", NULL);
		struct split_cache *c = split_cache_new(s);
		const struct split_result *r = NULL;
		struct err e = ERR_INIT;
		struct buf b = BUF_INIT(1 << 20);

		buf_adds(&b, "K ");
		for (i = 0; i < SPLIT_MAX_PATH; i++)
			buf_addch(&b, 'x');
		assert_int_equal(split_run(c, b.ptr, b.len, &r, &e), -1);
		assert_non_null(strstr(e.msg, "longer than 255 bytes"));
		buf_release(&b);
		split_cache_free(c);
		split_spec_free(s);
	}
	/* a path too long from components of 250 bytes */
	{
		struct split_spec *s = spec_ok("^K (.*)", "p/{1}/{1}/{1}/{1}/{1}/{1}/"
					       "{1}/{1}/{1}/{1}/{1}/{1}/{1}/{1}/{1}/{1}/{1}",
					       NULL);
		struct split_cache *c = split_cache_new(s);
		const struct split_result *r = NULL;
		struct err e = ERR_INIT;
		struct buf b = BUF_INIT(1 << 20);

		buf_adds(&b, "K ");
		for (i = 0; i < 250; i++)
			buf_addch(&b, 'x');
		assert_int_equal(split_run(c, b.ptr, b.len, &r, &e), -1);
		assert_non_null(strstr(e.msg, "too long"));
		buf_release(&b);
		split_cache_free(c);
		split_spec_free(s);
	}
	/*
	 * A newline can never reach a key: the pattern sees each line
	 * without its '\n' (so `\n` in a pattern simply never matches).
	 */
	{
		struct split_spec *s = spec_ok("^K (a\\n?)", "p/{1}", "h");
		struct split_cache *c = split_cache_new(s);
		struct err e = ERR_INIT;
		const struct split_result *r = split_str(c, "K a\nb\n", &e);

		assert_non_null(r);
		assert_string_equal(split_result_part(r, 0)->path, "p/a");
		split_cache_free(c);
		split_spec_free(s);
	}
}

/* Names git's fsck refuses (or reads specially), under every alias, are
 * refused as keys and in templates; near misses are fine. */
static void test_reserved_names(void **state)
{
	static const char *const bad[] = {
		".git", ".Git", ".GIT", ".git.", ".git ", ".git. .", "git~1",
		"GIT~12", ".git::$INDEX_ALLOCATION", ".g\xe2\x80\x8cit",
		"\xef\xbb\xbf.git", ".gi\xe2\x81\xaat", ".gitmodules",
		".GitModules ", "gitmod~1", "gi7eba~3", ".gitattributes",
		"gitatt~1", "gi7d29~1", ".gitignore", ".mailmap", ".lfsconfig",
		".LFSCONFIG.",
		/* longer than 63 bytes, once let through (fuzz_split) */
		"git~1111111111111111111111111111111111111111111111111111111111111111111111111111111",
		".git...................................................................",
		".gitmodules                                                             ",
	};
	static const char *const good[] = {
		"git", ".gitx", ".g", "git~", "git~1a", "xgit~1", ".gitmodulesx",
		"gitmod", ".git-foo", "..git", "a.git", ".lfs", "git\xe2\x80\x8c",
		"git~111111111111111111111111111111111111111111111111111111111111111111x",
		".git...................................................................x",
	};
	char line[600];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]) + sizeof(good) / sizeof(good[0]); i++) {
		int is_bad = i < sizeof(bad) / sizeof(bad[0]);
		const char *key = is_bad ? bad[i] : good[i - sizeof(bad) / sizeof(bad[0])];
		struct split_spec *s = spec_ok("^K (.*)$", "p/{1}", NULL);
		struct split_cache *c = split_cache_new(s);
		const struct split_result *r = NULL;
		struct err e = ERR_INIT;
		int got;

		snprintf(line, sizeof(line), "K %s\n", key);
		got = split_run(c, line, strlen(line), &r, &e);
		if (is_bad && (got == 0 || !strstr(e.msg, "a name git refuses")))
			fail_msg("key \"%s\": not refused (%s)", key, e.msg);
		if (!is_bad && got != 0)
			fail_msg("key \"%s\": refused: %s", key, e.msg);
		split_cache_free(c);
		split_spec_free(s);
	}
	/* a component of 255 bytes is fine, 256 is not */
	for (i = 255; i <= 256; i++) {
		struct split_spec *s = spec_ok("^K (.*)$", "p/{1}", NULL);
		struct split_cache *c = split_cache_new(s);
		const struct split_result *r = NULL;
		struct err e = ERR_INIT;

		memset(line, 'x', sizeof(line));
		memcpy(line, "K ", 2);
		line[2 + i] = '\n';
		assert_int_equal(split_run(c, line, 3 + i, &r, &e), i == 255 ? 0 : -1);
		if (i == 256)
			assert_non_null(strstr(e.msg, "longer than 255 bytes"));
		split_cache_free(c);
		split_spec_free(s);
	}
	/* in the template and the head */
	{
		static const char *const into[] = { ".GIT/{1}", "x/.gitmodules/{1}",
						    "x/git~1/{1}", "x/{1}/.git" };
		struct split_spec *s = NULL;
		struct err e = ERR_INIT;

		for (i = 0; i < sizeof(into) / sizeof(into[0]); i++) {
			assert_int_equal(split_spec_new(&s, "^(a)", into[i], NULL, &e), -1);
			assert_non_null(strstr(e.msg, "a name git refuses"));
		}
		assert_int_equal(split_spec_new(&s, "^(a)", "x/{1}", "x/.gitattributes", &e), -1);
		assert_non_null(strstr(e.msg, "a name git refuses"));
	}
}

struct bad_spec {
	const char *re, *into, *head, *says;
};

static void test_bad_spec(void **state)
{
	static const struct bad_spec cases[] = {
		{ "^CVE-(\\d{4", "x/{1}", NULL, "record=: bad pattern at offset" },
		{ "(a", "x/{1}", NULL, "missing closing parenthesis" },
		{ "^(a)", "x/{2}", NULL, "{2} is not a capture group" },
		{ "^(a)", "x/{0}", NULL, "{0} is not a capture group" },
		{ "^a", "x/{key}", NULL, "{key} is not a named group" },
		{ "^(a)", "x/{year}", NULL, "{year} is not a named group" },
		{ "^(a)", "x/{1", NULL, "'{' at column 3 is not closed" },
		{ "^(a)", "x/1}", NULL, "'}' without '{' at column 4" },
		{ "^(a)", "x/{{1}}", NULL, "'{' inside a placeholder" },
		{ "^(a)", "x/{}", NULL, "{} is neither" },
		{ "^(a)", "x/{a-b}", NULL, "{a-b} is neither" },
		{ "^(a)", "x/list", NULL, "no {...} placeholder" },
		{ "^(a)", "/x/{1}", NULL, "has an empty component" },
		{ "^(a)", "x//{1}", NULL, "has an empty component" },
		{ "^(a)", "../{1}", NULL, "has a '..' component" },
		{ "^(a)", "x/./{1}", NULL, "has a '.' component" },
		{ "^(a)", "x/{1}/", NULL, "has an empty component" },
		{ "^(a)", "x/{1}", "", "head=: the path is empty" },
		{ "^(a)", "x/{1}", "../h", "head=: the path has a '..'" },
		{ "^(a)", "x/{1}", "/h", "head=: the path has an empty" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct split_spec *s = NULL;
		struct err e = ERR_INIT;

		if (split_spec_new(&s, cases[i].re, cases[i].into,
				   cases[i].head, &e) == 0)
			fail_msg("case %zu: no error", i);
		assert_null(s);
		assert_int_equal(e.kind, ERR_USAGE);
		if (!strstr(e.msg, cases[i].says))
			fail_msg("case %zu: got \"%s\"", i, e.msg);
	}
}

static void test_named_groups(void **state)
{
	static const struct {
		const char *re, *into, *first;
	} cases[] = {
		{ "^CVE-(?<year>\\d{4})-", "y/{year}.txt", "y/2024.txt" },
		{ "^CVE-(\\d{4})-", "data/CVE/list.{key}", "data/CVE/list.2024" },
		{ "^CVE-(\\d{4})-(?<key>\\d+)", "k/{key}", "k/9999" },
		{ "^CVE-(?<y>\\d{4})-(?<n>\\d+)", "{n}/{y}", "9999/2024" },
		{ "^CVE-(?<y>\\d{4})-(?<n>\\d+)", "r/{y}-{2}", "r/2024-9999" },
	};
	struct err e = ERR_INIT;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct split_spec *s = spec_ok(cases[i].re, cases[i].into, NULL);
		struct split_cache *c = split_cache_new(s);
		const struct split_result *r = split_str(
			c, "CVE-2024-9999 (x)\n\tNOTE\nCVE-2023-0001\n", &e);

		assert_non_null(r);
		assert_int_equal(split_result_count(r), 2);
		assert_string_equal(split_result_part(r, 0)->path,
				    cases[i].first);
		split_cache_free(c);
		split_spec_free(s);
	}
}

static void test_crlf_and_final_newline(void **state)
{
	struct split_spec *s = spec_ok(YEAR_RE, YEAR_INTO, HEAD);
	struct split_spec *s2 = spec_ok("^K (.*)$", "p/{1}", NULL);
	struct split_cache *c = split_cache_new(s);
	struct split_cache *c2 = split_cache_new(s2);
	const char *d = "hd\r\nCVE-2024-1 x\r\n\tNOTE\r\nCVE-2023-2 y\r\n"
			"\tlast";
	const struct split_result *r;
	struct err e = ERR_INIT;

	(void)state;
	r = split_str(c, d, &e);
	assert_non_null(r);
	snap_take(&s1, r);
	assert_int_equal(s1.n, 3);
	assert_string_equal(s1.bytes[0].ptr, "hd\r\n");
	assert_string_equal(s1.bytes[1].ptr, "CVE-2024-1 x\r\n\tNOTE\r\n");
	assert_string_equal(s1.bytes[2].ptr, "CVE-2023-2 y\r\n\tlast");
	assert_true(s1.reassembles);
	/* the CR is part of the line, so of the key */
	r = split_str(c2, "K a\r\nK b\n", &e);
	assert_non_null(r);
	assert_int_equal(split_result_count(r), 2);
	assert_string_equal(split_result_part(r, 0)->path, "p/a\r");
	assert_string_equal(split_result_part(r, 1)->path, "p/b");
	/* the final line gains and loses its newline */
	r = split_str(c2, "K a\r\nK b", &e);
	assert_true(split_result_part(r, 0)->unchanged);
	assert_false(split_result_part(r, 1)->unchanged);
	assert_int_equal(split_result_part(r, 1)->size, 3);
	r = split_str(c2, "K a\r\nK b\n", &e);
	assert_false(split_result_part(r, 1)->unchanged);
	assert_int_equal(split_result_part(r, 1)->size, 4);
	split_cache_free(c);
	split_cache_free(c2);
	split_spec_free(s);
	split_spec_free(s2);
}

static void test_reassembly(void **state)
{
	struct split_spec *s = spec_ok("^K (\\w+)", "p/{1}", "h");
	struct split_cache *c = split_cache_new(s);
	const struct split_result *r;
	struct err e = ERR_INIT;

	(void)state;
	r = split_str(c, "h\nK a\n1\nK a\n2\nK b\nK c\n", &e);
	assert_true(split_result_reassembles(r));
	assert_int_equal(split_result_count(r), 4);
	assert_int_equal(split_result_part(r, 1)->nranges, 1);
	r = split_str(c, "h\nK a\n1\nK b\n2\nK a\nK c\n", &e);
	assert_false(split_result_reassembles(r));
	assert_int_equal(split_result_part(r, 1)->nranges, 2);
	assert_int_equal(split_result_part(r, 1)->size, 10);
	snap_take(&s1, r);
	assert_string_equal(s1.bytes[1].ptr, "K a\n1\nK a\n");
	/* the same verdict from a fresh cache */
	split_cache_reset(c);
	r = split_str(c, "h\nK a\n1\nK b\n2\nK a\nK c\n", &e);
	assert_false(split_result_reassembles(r));
	r = split_str(c, "K a\nK b\nK c\n", &e);
	assert_true(split_result_reassembles(r));
	split_cache_free(c);
	split_spec_free(s);
}

/* One random edit of the tracker model. */
static void random_edit(struct tracker *t)
{
	size_t at, zone = rnd(3);	/* top, middle, bottom */
	int kind = (int)rnd(100);

	if (t->n < 3) {
		tracker_insert(t, 0, trec_new(2024, (int)rnd(10000)));
		return;
	}
	at = zone == 0 ? rnd(3) : zone == 1 ? t->n / 2 + rnd(5) - 2
					    : t->n - 1 - rnd(3);
	if (at >= t->n)
		at = t->n - 1;
	if (kind < 35) {
		tracker_insert(t, at, trec_new(t->r[at].year, (int)rnd(10000)));
	} else if (kind < 60) {
		t->r[at].salt = rnd(100000);
		t->r[at].notes = (int)rnd(4);
	} else if (kind < 75) {
		tracker_delete(t, at);
	} else if (kind < 85) {
		t->r[at].year = 2000 + (int)rnd(25);	/* may interleave */
	} else if (kind < 88) {
		t->r[at].flag = (int)rnd(3);	/* a start line comes or goes */
	} else if (kind < 89) {
		t->head_lines = (int)rnd(3);
		t->head_salt = rnd(1000);
	} else if (kind < 90) {
		t->no_final_nl = !t->no_final_nl;
	} else if (kind < 92) {
		t->crlf = !t->crlf;	/* every line changes */
	} else {
		int k;

		for (k = 0; k < 5; k++)
			tracker_insert(t, rnd(3), trec_new(2024, (int)rnd(10000)));
	}
}

/* A few byte-level edits: joined or split lines, stray record starts. */
static void raw_edits(struct buf *b)
{
	static const char *const ins[] = { "\n", "\t", "CVE-2023-77 ", "x",
					   "\nCVE-2022-5 z\n" };
	int k, n = 1 + (int)rnd(3);

	for (k = 0; k < n && b->len > 0; k++) {
		size_t at = rnd(4) == 0 ? rnd(40) : rnd((uint32_t)b->len);
		const char *s = ins[rnd(5)];
		struct buf t = BUF_INIT((size_t)1 << 30);

		if (at > b->len)
			at = b->len;
		buf_add(&t, b->ptr, at);
		if (rnd(2))
			buf_adds(&t, s);
		else if (at < b->len)
			at++;	/* delete one byte */
		buf_add(&t, b->ptr + at, b->len - at);
		buf_set(b, t.ptr, t.len);
		buf_release(&t);
	}
}

/* Expected flag: the previous result had this path with the same bytes. */
static void check_unchanged(const struct snap *cur, const struct snap *prev)
{
	size_t i, j;

	for (i = 0; i < cur->n; i++) {
		int same = 0;

		for (j = 0; j < prev->n; j++)
			if (!strcmp(cur->path[i], prev->path[j])) {
				same = cur->bytes[i].len == prev->bytes[j].len &&
				       !memcmp(cur->bytes[i].ptr,
					       prev->bytes[j].ptr,
					       cur->bytes[i].len);
				break;
			}
		if (cur->unchanged[i] != same)
			fail_msg("part %s: unchanged=%d, expected %d",
				 cur->path[i], cur->unchanged[i], same);
	}
}

static void incremental(const char *re, const char *into, size_t nrec,
			int steps)
{
	struct split_spec *s = spec_ok(re, into, HEAD);
	struct split_cache *inc = split_cache_new(s);
	int step;

	tracker_fill(&trk, nrec, 40);
	trk.head_lines = 1;
	snap_clear(&s3);
	for (step = 0; step < steps; step++) {
		struct split_cache *fresh = split_cache_new(s);

		tracker_render(&trk, &text);
		if (rnd(4) == 0)
			raw_edits(&text);
		snap_take(&s1, run_ok(inc, &text));
		snap_take(&s2, run_ok(fresh, &text));
		snap_equal(&s1, &s2);
		naive_split(&s4, re, into, HEAD, text.ptr, text.len);
		snap_equal(&s1, &s4);
		if (step > 0)
			check_unchanged(&s1, &s3);
		assert_int_equal(s1.reassembles,
				 snap_concat_is(&s1, text.ptr, text.len));
		split_cache_free(fresh);
		snap_take(&s3, run_ok(inc, &text));	/* identical: all kept */
		{
			size_t i;

			for (i = 0; i < s3.n; i++)
				assert_true(s3.unchanged[i]);
		}
		if (step % 50 == 49)
			tracker_fill(&trk, nrec / 2 + rnd((uint32_t)nrec), 30);
		else if (step % 97 == 96)
			trk.n = 0;	/* empty version */
		else {
			/* several edits: the middle holds reusable records */
			int k, edits = 1 + (int)rnd(3);

			for (k = 0; k < edits; k++)
				random_edit(&trk);
		}
	}
	split_cache_free(inc);
	split_spec_free(s);
}

static void test_incremental_year(void **state)
{
	(void)state;
	incremental(YEAR_RE, YEAR_INTO, 400, 400);
}

static void test_incremental_record(void **state)
{
	(void)state;
	incremental(REC_RE, REC_INTO, 300, 300);
}

/* Small edits of a big version re-match a few lines, not all of them. */
static void test_only_middle_matched(void **state)
{
	struct split_spec *s = spec_ok(YEAR_RE, YEAR_INTO, HEAD);
	struct split_cache *c = split_cache_new(s);
	struct split_stats st;
	size_t lines, i, total = 0, n;
	const struct split_result *r;

	(void)state;
	tracker_fill(&trk, 20000, 800);
	trk.head_lines = 3;
	tracker_render(&trk, &text);
	for (i = lines = 0; i < text.len; i++)
		lines += text.ptr[i] == '\n';
	run_ok(c, &text);
	split_cache_stats(c, &st);
	assert_int_equal(st.regex_lines, lines);
	assert_int_equal(st.kept_records, 0);

	/* 200 versions, each adding records near the top */
	for (i = 0; i < 200; i++) {
		tracker_insert(&trk, 1 + rnd(3), trec_new(2024, (int)rnd(9999)));
		tracker_render(&trk, &text);
		r = run_ok(c, &text);
		split_cache_stats(c, &st);
		assert_true(st.regex_lines <= 20);
		assert_true(st.kept_records + 3 >= trk.n);
		total += st.regex_lines;
		/* only the newest year changed */
		for (n = 0; n < split_result_count(r); n++)
			assert_int_equal(split_result_part(r, n)->unchanged,
					 n != 1);
	}
	assert_true(total < 200 * 12);
	/* the middle and the bottom */
	trk.r[10000].salt++;
	tracker_render(&trk, &text);
	run_ok(c, &text);
	split_cache_stats(c, &st);
	assert_true(st.regex_lines <= 20);
	trk.r[trk.n - 1].notes = 7;
	tracker_render(&trk, &text);
	run_ok(c, &text);
	split_cache_stats(c, &st);
	assert_true(st.regex_lines <= 20);
	/* identical */
	run_ok(c, &text);
	split_cache_stats(c, &st);
	assert_true(st.identical);
	assert_int_equal(st.regex_lines, 0);
	split_cache_free(c);
	split_spec_free(s);
}

/*
 * Two edits far apart: the records between them are re-parsed, but known
 * from the old version (a memcmp each), and the result is a fresh one's.
 */
static void test_distant_edits_reuse_records(void **state)
{
	struct split_spec *s = spec_ok(REC_RE, REC_INTO, HEAD);
	struct split_cache *c = split_cache_new(s), *fresh;
	struct split_stats st;
	int round;

	(void)state;
	tracker_fill(&trk, 20000, 800);
	trk.head_lines = 2;
	tracker_render(&trk, &text);
	run_ok(c, &text);
	for (round = 0; round < 4; round++) {
		fresh = split_cache_new(s);
		trk.r[100 + round].salt++;			/* same length */
		tracker_insert(&trk, 15000, trec_new(2021, 70000 + round));
		tracker_delete(&trk, 9000);	/* a record between goes */
		tracker_render(&trk, &text);
		snap_take(&s1, run_ok(c, &text));
		split_cache_stats(c, &st);
		assert_true(st.parsed_records > 14000);
		assert_true(st.reused_records + 3 >= st.parsed_records);
		assert_true(st.skipped_bytes * 10 > st.parsed_bytes * 9);
		assert_true(st.regex_lines < 40);
		snap_take(&s2, run_ok(fresh, &text));
		snap_equal(&s1, &s2);
		split_cache_free(fresh);
	}
	split_cache_free(c);
	split_spec_free(s);
}

static void test_error_resets_cache(void **state)
{
	struct split_spec *s = spec_ok("^K (\\S*)", "p/{1}", NULL);
	struct split_cache *c = split_cache_new(s);
	const struct split_result *r;
	struct split_stats st;
	struct err e = ERR_INIT;

	(void)state;
	assert_non_null(split_str(c, "K a\nK b\nK c\n", &e));
	assert_null(split_str(c, "K a\nK ..\nK c\n", &e));
	split_cache_stats(c, &st);
	assert_int_equal(st.regex_lines, 0);
	r = split_str(c, "K a\nK b\nK c\n", &e);
	assert_non_null(r);
	assert_int_equal(split_result_count(r), 3);
	assert_false(split_result_part(r, 0)->unchanged);	/* fresh */
	split_cache_stats(c, &st);
	assert_int_equal(st.regex_lines, 3);
	split_cache_free(c);
	split_spec_free(s);
}

static void test_part_copy_limit(void **state)
{
	struct split_spec *s = spec_ok("^K (\\S*)", "p/{1}", NULL);
	struct split_cache *c = split_cache_new(s);
	struct err e = ERR_INIT;
	const struct split_result *r = split_str(c, "K a\n12345678\n", &e);
	struct buf b = BUF_INIT(8);

	(void)state;
	buf_adds(&b, "xy");
	assert_int_equal(split_part_copy(&b, split_result_part(r, 0), &e), -1);
	assert_int_equal(e.kind, ERR_STREAM);
	assert_string_equal(b.ptr, "xy");
	b.max = 64;
	assert_int_equal(split_part_copy(&b, split_result_part(r, 0), &e), 0);
	assert_string_equal(b.ptr, "xyK a\n12345678\n");
	buf_release(&b);
	split_cache_free(c);
	split_spec_free(s);
	split_spec_free(NULL);
	split_cache_free(NULL);
}

static int teardown(void **state)
{
	(void)state;
	snap_clear(&s1);
	snap_clear(&s2);
	snap_clear(&s3);
	snap_clear(&s4);
	buf_release(&text);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_per_year),
		cmocka_unit_test(test_per_record),
		cmocka_unit_test(test_change_lists),
		cmocka_unit_test(test_head),
		cmocka_unit_test(test_missing_head),
		cmocka_unit_test(test_bad_keys),
		cmocka_unit_test(test_bad_spec),
		cmocka_unit_test(test_reserved_names),
		cmocka_unit_test(test_named_groups),
		cmocka_unit_test(test_crlf_and_final_newline),
		cmocka_unit_test(test_reassembly),
		cmocka_unit_test(test_incremental_year),
		cmocka_unit_test(test_incremental_record),
		cmocka_unit_test(test_only_middle_matched),
		cmocka_unit_test(test_distant_edits_reuse_records),
		cmocka_unit_test(test_error_resets_cache),
		cmocka_unit_test(test_part_copy_limit),
	};

	return cmocka_run_group_tests(tests, NULL, teardown);
}
