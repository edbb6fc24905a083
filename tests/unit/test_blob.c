/*
 * test_blob.c - the blob's way without the engine (rewrite/blob/blob.h):
 * the policy (blob_decide, blob_convertible, blob_is_protected) on rule
 * sets parsed from text, and held blobs driven through a real stream
 * reader and writer (blobs_read, blobs_declare, blobs_flush).
 *
 * Links libmigrate_blob and the libraries below it only: the blob code
 * must work without the engine. Blob ids are judged by `git hash-object`,
 * output by the fast-import format written out here by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* folder-internal: the tests look at held copies (struct held) */
#include "rewrite/blob/way.h"

static char root[PATH_MAX];	/* mkdtemp; an empty bare repository inside */
static char empty_repo[PATH_MAX];
static unsigned file_seq;

/* ---- helpers ---- */

static void sh(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	assert_int_equal(system(cmd), 0);
}

/* A new file name under root (never reused within a run). */
static void tmp_path(char *out, size_t n, const char *what)
{
	int r = snprintf(out, n, "%s/%u-%s", root, file_seq++, what);

	assert_true(r > 0 && (size_t)r < n);
}

static void write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

static void read_fd_all(int fd, struct buf *out)
{
	char chunk[65536];
	off_t off = 0;
	ssize_t n;

	buf_reset(out);
	while ((n = pread(fd, chunk, sizeof(chunk), off)) > 0) {
		assert_int_equal(buf_add(out, chunk, (size_t)n), 0);
		off += n;
	}
	assert_true(n == 0);
}

/* The blob id of these bytes as git computes it (git hash-object). */
static void git_blob_id(const void *p, size_t n, struct oid *id)
{
	char path[PATH_MAX + 32], cmd[3 * PATH_MAX], hex[128];
	FILE *f;

	tmp_path(path, sizeof(path), "hash-in");
	write_file(path, p, n);
	/* a sha1 repository of our own, whatever the current directory is */
	snprintf(cmd, sizeof(cmd), "git --git-dir='%s' hash-object --stdin < '%s'",
		 empty_repo, path);
	f = popen(cmd, "r");
	assert_non_null(f);
	assert_non_null(fgets(hex, sizeof(hex), f));
	assert_int_equal(pclose(f), 0);
	hex[strcspn(hex, "\n")] = '\0';
	assert_int_equal(strlen(hex), OID_HEX);
	assert_int_equal(oid_from_hex(id, hex, OID_HEX), 0);
	unlink(path);
}

static void assert_oid_equal(const struct oid *got, const struct oid *want)
{
	char g[OID_HEX + 1], w[OID_HEX + 1];

	assert_string_equal(oid_hex(got, g), oid_hex(want, w));
}

/* Deterministic bytes of every value, LFs and NULs included. */
static char *make_content(size_t n, uint32_t seed)
{
	char *p = xmalloc(n ? n : 1);
	uint32_t x = seed ? seed : 1;
	size_t i;

	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = (char)(x >> 24);
	}
	return p;
}

/* What fast-import reads for a blob with a mark and counted data. */
static void want_blob(struct buf *out, uint64_t mark, const void *p, size_t n)
{
	assert_int_equal(buf_printf(out, "blob\nmark :%llu\ndata %zu\n",
				    (unsigned long long)mark, n), 0);
	assert_int_equal(buf_add(out, p, n), 0);
	assert_int_equal(buf_addch(out, '\n'), 0);
}

static void assert_buf_equal(const struct buf *got, const struct buf *want)
{
	assert_int_equal(got->len, want->len);
	assert_memory_equal(got->ptr, want->ptr, want->len);
}

/* ---- policy ---- */

static struct rules *parse(const char *text)
{
	struct rules *r = NULL;
	struct err e = ERR_INIT;

	if (rules_parse(&r, text, strlen(text), "test.rules", &e) < 0)
		fail_msg("rules_parse: %s", e.msg);
	return r;
}

/*
 * blob_decide on a NUL-less copy of path (the contract takes a length),
 * with *rule and *action primed with garbage they must be reset from.
 */
static enum blob_action decide(const struct rules *r, const char *path,
			       uint32_t mode, uint64_t size, int in_notes,
			       const struct rule **rule)
{
	static const char junk[] = "#junk";
	size_t len = strlen(path);
	char *copy = xmalloc(len + sizeof(junk));
	enum blob_action action = BLOB_SPLIT;
	struct err e = ERR_INIT;

	memcpy(copy, path, len);
	memcpy(copy + len, junk, sizeof(junk));
	*rule = (const struct rule *)junk;
	if (blob_decide(r, copy, len, mode, size, in_notes, rule, &action, &e) < 0)
		fail_msg("blob_decide %s: %s", path, e.msg);
	free(copy);
	return action;
}

/* The rule at 1-based line `line` of the text the set was parsed from. */
static const struct rule *rule_at_line(const struct rules *r, size_t line)
{
	size_t i;

	for (i = 0; i < rules_count(r); i++)
		if (rules_rule_line(rules_get(r, i)) == line)
			return rules_get(r, i);
	fail_msg("no rule at line %zu", line);
	return NULL;
}

static void expect(const struct rules *r, const char *path, uint32_t mode,
		   uint64_t size, int in_notes, enum blob_action want,
		   size_t want_line)
{
	const struct rule *rule;
	enum blob_action got = decide(r, path, mode, size, in_notes, &rule);

	if (got != want)
		fail_msg("%s (mode %o, size %llu, notes %d): action %d, want %d",
			 path, (unsigned)mode, (unsigned long long)size, in_notes,
			 (int)got, (int)want);
	if (!want_line) {
		if (rule)
			fail_msg("%s: rule at line %zu, want none", path,
				 rules_rule_line(rule));
	} else if (rule != rule_at_line(r, want_line)) {
		fail_msg("%s: rule at line %zu, want line %zu", path,
			 rule ? rules_rule_line(rule) : 0, want_line);
	}
}

/* Line numbers below are those of this text. */
static const char policy_rules[] =
	"# the policy's test rules\n"					/* 1 */
	"/special/*.dat                 drop\n"				/* 2 */
	"*.dat                          lfs\n"				/* 3 */
	"*.psd                          lfs\n"				/* 4 */
	"media/**        size>1MB       lfs\n"				/* 5 */
	"*.log           size<=1KiB     drop\n"				/* 6 */
	"data/CVE/list   split record='^CVE-(\\d{4})-(\\d+)' "
	"into='data/CVE/{1}/{2}'\n"					/* 7 */
	"*.txt                          keep\n"				/* 8 */
	"re:\\.bin$                     lfs\n"				/* 9 */
	"\n"								/* 10 */
	"big.*           size>=2MiB     lfs\n";				/* 11 */

static void test_policy_actions(void **state)
{
	struct rules *r = parse(policy_rules);

	(void)state;
	expect(r, "x.psd", TREE_MODE_FILE, 10, 0, BLOB_LFS, 4);
	expect(r, "a/b/c/x.psd", TREE_MODE_FILE, 10, 0, BLOB_LFS, 4);
	expect(r, "x.psd.orig", TREE_MODE_FILE, 10, 0, BLOB_KEEP, 0);
	expect(r, "a/b.bin", TREE_MODE_FILE, 0, 0, BLOB_LFS, 9);
	expect(r, "a/b.binx", TREE_MODE_FILE, 0, 0, BLOB_KEEP, 0);
	/* drop, split, and a keep rule: BLOB_KEEP that names its rule */
	expect(r, "special/y.dat", TREE_MODE_FILE, 1, 0, BLOB_DROP, 2);
	expect(r, "data/CVE/list", TREE_MODE_FILE, 1, 0, BLOB_SPLIT, 7);
	expect(r, "data/CVE/list2", TREE_MODE_FILE, 1, 0, BLOB_KEEP, 0);
	expect(r, "x/data/CVE/list", TREE_MODE_FILE, 1, 0, BLOB_KEEP, 0);
	expect(r, "doc/notes.txt", TREE_MODE_FILE, 1 << 30, 0, BLOB_KEEP, 8);
	/* no rule at all */
	expect(r, "README", TREE_MODE_FILE, 100, 0, BLOB_KEEP, 0);
	expect(r, "", TREE_MODE_FILE, 100, 0, BLOB_KEEP, 0);
	rules_free(r);
}

static void test_policy_first_match_wins(void **state)
{
	struct rules *r = parse(policy_rules);

	(void)state;
	/* line 2 (anchored) before line 3 */
	expect(r, "special/y.dat", TREE_MODE_FILE, 1, 0, BLOB_DROP, 2);
	expect(r, "other/special/y.dat", TREE_MODE_FILE, 1, 0, BLOB_LFS, 3);
	expect(r, "special/deeper/y.dat", TREE_MODE_FILE, 1, 0, BLOB_LFS, 3);
	expect(r, "y.dat", TREE_MODE_FILE, 1, 0, BLOB_LFS, 3);
	/* media/x.txt: line 5 when large, else line 8 */
	expect(r, "media/x.txt", TREE_MODE_FILE, 2000000, 0, BLOB_LFS, 5);
	expect(r, "media/x.txt", TREE_MODE_FILE, 20, 0, BLOB_KEEP, 8);
	/* big.log: line 6 when small, line 11 when >= 2 MiB, none between */
	expect(r, "big.log", TREE_MODE_FILE, 1024, 0, BLOB_DROP, 6);
	expect(r, "big.log", TREE_MODE_FILE, 1025, 0, BLOB_KEEP, 0);
	expect(r, "big.log", TREE_MODE_FILE, 2097152, 0, BLOB_LFS, 11);
	/* a/big.bin: line 9 first, whatever the size */
	expect(r, "a/big.bin", TREE_MODE_FILE, 1, 0, BLOB_LFS, 9);
	rules_free(r);
}

static void test_policy_size_bounds(void **state)
{
	struct rules *r = parse(policy_rules);

	(void)state;
	/* size>1MB: MB is 1000*1000 bytes, the bound excluded */
	expect(r, "media/a.raw", TREE_MODE_FILE, 0, 0, BLOB_KEEP, 0);
	expect(r, "media/a.raw", TREE_MODE_FILE, 1000000, 0, BLOB_KEEP, 0);
	expect(r, "media/a.raw", TREE_MODE_FILE, 1000001, 0, BLOB_LFS, 5);
	expect(r, "media/sub/a.raw", TREE_MODE_FILE, UINT64_MAX, 0, BLOB_LFS, 5);
	expect(r, "other/media/a.raw", TREE_MODE_FILE, UINT64_MAX, 0, BLOB_KEEP, 0);
	/* size<=1KiB: KiB is 1024 bytes, the bound included */
	expect(r, "a/b.log", TREE_MODE_FILE, 0, 0, BLOB_DROP, 6);
	expect(r, "a/b.log", TREE_MODE_FILE, 1024, 0, BLOB_DROP, 6);
	expect(r, "a/b.log", TREE_MODE_FILE, 1025, 0, BLOB_KEEP, 0);
	/* size>=2MiB */
	expect(r, "big.iso", TREE_MODE_FILE, 2097151, 0, BLOB_KEEP, 0);
	expect(r, "big.iso", TREE_MODE_FILE, 2097152, 0, BLOB_LFS, 11);
	rules_free(r);
}

static void test_policy_modes(void **state)
{
	struct rules *r = parse(policy_rules);
	struct rules *all = parse("*  lfs\n");
	static const uint32_t never[] = { TREE_MODE_LINK, TREE_MODE_GITLINK,
					  TREE_MODE_DIR, 040755 };
	size_t i;

	(void)state;
	/* executables convert like regular files; fast-import's short
	 * modes 644 and 755 are the same modes */
	expect(r, "tool.psd", TREE_MODE_EXEC, 10, 0, BLOB_LFS, 4);
	expect(r, "tool.psd", 0755, 10, 0, BLOB_LFS, 4);
	expect(r, "tool.psd", 0644, 10, 0, BLOB_LFS, 4);
	expect(r, "special/run.dat", TREE_MODE_EXEC, 10, 0, BLOB_DROP, 2);
	expect(all, "bin/tool", TREE_MODE_EXEC, 10, 0, BLOB_LFS, 1);
	assert_int_equal(blob_convertible("x.psd", 5, TREE_MODE_FILE), 1);
	assert_int_equal(blob_convertible("x.psd", 5, TREE_MODE_EXEC), 1);
	assert_int_equal(blob_convertible("x.psd", 5, 0644), 1);
	/* symlinks, gitlinks and directories: kept, no rule, even by `*` */
	for (i = 0; i < sizeof(never) / sizeof(never[0]); i++) {
		expect(r, "x.psd", never[i], 10, 0, BLOB_KEEP, 0);
		expect(r, "special/y.dat", never[i], 10, 0, BLOB_KEEP, 0);
		expect(all, "link", never[i], 10, 0, BLOB_KEEP, 0);
		assert_int_equal(blob_convertible("x.psd", 5, never[i]), 0);
	}
	rules_free(r);
	rules_free(all);
}

static void test_policy_protected(void **state)
{
	static const char *const kept[] = {
		".gitattributes", ".gitignore", ".gitmodules", ".lfsconfig",
		"a/.gitattributes", "a/b/.gitattributes", "a/b/.gitignore",
		"deep/er/still/.gitmodules", "x/.lfsconfig",
	};
	static const char *const not_kept[] = {
		"x.gitattributes", ".gitattributes.bak", "gitattributes",
		".gitattribute", "a/.gitattributes/b", ".gitignore~",
		"a/b/x.lfsconfig", "a/.gitmodules.d/m",
		"a/b/.gitattributesx", ".lfsconfig2",
	};
	struct rules *all = parse("*  lfs\n");
	struct rules *exact = parse(".gitattributes  drop\n"
				    "/.gitignore     lfs\n"
				    "re:lfsconfig$   drop\n");
	size_t i, len;

	(void)state;
	for (i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
		len = strlen(kept[i]);
		expect(all, kept[i], TREE_MODE_FILE, 10, 0, BLOB_KEEP, 0);
		expect(all, kept[i], TREE_MODE_EXEC, 10, 0, BLOB_KEEP, 0);
		expect(exact, kept[i], TREE_MODE_FILE, 10, 0, BLOB_KEEP, 0);
		assert_int_equal(blob_is_protected(kept[i], len), 1);
		assert_int_equal(blob_convertible(kept[i], len, TREE_MODE_FILE), 0);
	}
	for (i = 0; i < sizeof(not_kept) / sizeof(not_kept[0]); i++) {
		len = strlen(not_kept[i]);
		expect(all, not_kept[i], TREE_MODE_FILE, 10, 0, BLOB_LFS, 1);
		assert_int_equal(blob_is_protected(not_kept[i], len), 0);
		assert_int_equal(blob_convertible(not_kept[i], len, TREE_MODE_FILE), 1);
	}
	/* the length counts, not a NUL: a prefix of a protected name is not
	 * protected, and a protected name inside a longer buffer is */
	assert_int_equal(blob_is_protected(".gitignore", 9), 0);
	assert_int_equal(blob_is_protected("a/.gitignore/b", 12), 1);
	assert_int_equal(blob_is_protected(".gitmodules.bak", 11), 1);
	rules_free(all);
	rules_free(exact);
}

static void test_policy_notes(void **state)
{
	struct rules *r = parse(policy_rules);
	struct rules *all = parse("*  lfs\n");

	(void)state;
	expect(r, "x.psd", TREE_MODE_FILE, 10, 1, BLOB_KEEP, 0);
	expect(r, "special/y.dat", TREE_MODE_FILE, 10, 1, BLOB_KEEP, 0);
	expect(all, "ab/cdef0123456789abcdef0123456789abcdef01", TREE_MODE_FILE,
	       10, 1, BLOB_KEEP, 0);
	/* the same files off a notes ref */
	expect(r, "x.psd", TREE_MODE_FILE, 10, 0, BLOB_LFS, 4);
	expect(all, "ab/cdef0123456789abcdef0123456789abcdef01", TREE_MODE_FILE,
	       10, 0, BLOB_LFS, 1);
	rules_free(r);
	rules_free(all);
}

/* A regex that exhausts PCRE2's match limit: -1 with e set, no rule. */
static void test_policy_regex_failure(void **state)
{
	struct rules *r = parse("re:^(a|a)*$  lfs\n");
	char path[40];
	const struct rule *rule = NULL;
	enum blob_action action = BLOB_KEEP;
	struct err e = ERR_INIT;

	(void)state;
	memset(path, 'a', sizeof(path) - 1);
	path[sizeof(path) - 1] = '!';
	assert_int_equal(blob_decide(r, path, sizeof(path), TREE_MODE_FILE, 1,
				     0, &rule, &action, &e), -1);
	/* one message naming the rule file and line */
	assert_int_equal(e.kind, ERR_USAGE);
	if (strncmp(e.msg, "test.rules:1:", 13))
		fail_msg("'%s' does not name test.rules:1", e.msg);
	/* a protected name is never matched at all */
	e = (struct err)ERR_INIT;
	assert_int_equal(blob_decide(r, ".gitignore", 10, TREE_MODE_FILE, 1, 0,
				     &rule, &action, &e), 0);
	assert_null(rule);
	assert_int_equal(action, BLOB_KEEP);
	rules_free(r);
}

/* ---- held blobs ---- */

#define NMARKS 4

struct fx {
	char in_path[PATH_MAX], out_path[PATH_MAX], rules_path[PATH_MAX];
	int in_fd, out_fd;
	struct stream_reader *in;
	struct stream_writer *out;
	struct stream_cmd cmd;
	struct tree_state *ts;
	struct odb *src;
	struct obj_hash *hash;
	struct blobs *b;
	struct oid ids[NMARKS + 1];
	struct blob_mark marks[NMARKS + 1];	/* by mark number */
	struct buf got;
};

/* The blob's way over the stream `input` with this rule file (NULL: a
 * path where no file is), dry run (no store), the source an empty
 * repository (a blob that is nowhere else is not found there either).
 * Returns what blobs_new does; f->b is set either way. */
static int fx_open_rules(struct fx *f, const void *input, size_t len,
			 const char *rules, struct err *e)
{
	struct blob_options opt = { .dry_run = 1, .quiet = 1 };
	struct blob_env env;
	size_t i;

	memset(f, 0, sizeof(*f));
	tmp_path(f->in_path, sizeof(f->in_path), "in");
	tmp_path(f->out_path, sizeof(f->out_path), "out");
	tmp_path(f->rules_path, sizeof(f->rules_path), "rules");
	write_file(f->in_path, input, len);
	if (rules)
		write_file(f->rules_path, rules, strlen(rules));
	f->in_fd = open(f->in_path, O_RDONLY);
	f->out_fd = open(f->out_path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(f->in_fd >= 0 && f->out_fd >= 0);
	f->in = stream_reader_new_fd(f->in_fd, "test-input");
	f->out = stream_writer_new_fd(f->out_fd, "test-output");
	stream_cmd_init(&f->cmd);
	f->ts = tree_state_new(NULL, NULL);
	f->src = odb_new(empty_repo);
	f->hash = obj_hash_new();
	buf_init(&f->got, SIZE_MAX);
	for (i = 0; i <= NMARKS; i++) {
		f->marks[i].num = i;
		f->marks[i].id = &f->ids[i];
	}
	env = (struct blob_env){ f->in, f->out, &f->cmd, f->ts, f->src,
				 f->src, f->hash, NULL };
	opt.rules = f->rules_path;
	return blobs_new(&f->b, &opt, &env, e);
}

/* ... with the rules `*.bin lfs`. */
static void fx_open(struct fx *f, const void *input, size_t len)
{
	struct err e = ERR_INIT;

	if (fx_open_rules(f, input, len, "*.bin  lfs\n", &e) < 0)
		fail_msg("blobs_new: %s", e.msg);
}

static void fx_close(struct fx *f)
{
	blobs_free(f->b);
	stream_cmd_release(&f->cmd);
	stream_reader_free(f->in);
	stream_writer_free(f->out);
	tree_state_free(f->ts);
	odb_free(f->src);
	obj_hash_free(f->hash);
	buf_release(&f->got);
	close(f->in_fd);
	close(f->out_fd);
	unlink(f->in_path);
	unlink(f->out_path);
	unlink(f->rules_path);
}

/* The next command must be a blob with mark n: blobs_read it. */
static void fx_read(struct fx *f, uint64_t n, const char *orig_hex)
{
	struct err e = ERR_INIT;
	struct oid orig;

	assert_int_equal(stream_reader_next(f->in, &f->cmd, &e), 1);
	assert_int_equal(f->cmd.kind, STREAM_BLOB);
	assert_int_equal(f->cmd.mark, n);
	if (orig_hex)
		assert_int_equal(oid_from_hex(&orig, orig_hex, OID_HEX), 0);
	if (blobs_read(f->b, &f->marks[n], orig_hex ? &orig : NULL, &e) < 0)
		fail_msg("blobs_read: %s", e.msg);
	assert_ptr_equal(f->marks[n].blob->mark, &f->marks[n]);
}

static void fx_declare(struct fx *f, uint64_t n)
{
	struct err e = ERR_INIT;

	if (blobs_declare(f->b, &f->marks[n], &e) < 0)
		fail_msg("blobs_declare :%llu: %s", (unsigned long long)n, e.msg);
	assert_int_equal(f->marks[n].declared, 1);
}

static void fx_flush(struct fx *f)
{
	struct err e = ERR_INIT;

	if (blobs_flush(f->b, &e) < 0)
		fail_msg("blobs_flush: %s", e.msg);
}

/* The output so far, in f->got. */
static const struct buf *fx_output(struct fx *f)
{
	struct err e = ERR_INIT;

	assert_int_equal(stream_writer_flush(f->out, &e), 0);
	read_fd_all(f->out_fd, &f->got);
	return &f->got;
}

/* The stream ends after what was read. */
static void fx_at_end(struct fx *f)
{
	struct err e = ERR_INIT;

	assert_int_equal(stream_reader_next(f->in, &f->cmd, &e), 0);
}

static void stream_blob(struct buf *s, uint64_t mark, const char *orig_hex,
			const void *p, size_t n)
{
	assert_int_equal(buf_printf(s, "blob\nmark :%llu\n",
				    (unsigned long long)mark), 0);
	if (orig_hex)
		assert_int_equal(buf_printf(s, "original-oid %s\n", orig_hex), 0);
	assert_int_equal(buf_printf(s, "data %zu\n", n), 0);
	assert_int_equal(buf_add(s, p, n), 0);
	assert_int_equal(buf_addch(s, '\n'), 0);
}

/* An original-oid that is not the content's id: the id must come from
 * the content. */
static const char fake_orig[] = "0123456789abcdef0123456789abcdef01234567";

static void test_held_small(void **state)
{
	static const char input[] = "blob\nmark :1\ndata 5\nhello\n";
	struct buf want = BUF_INIT(SIZE_MAX);
	struct blob_info *bi;
	struct oid id;
	struct fx f;

	(void)state;
	git_blob_id("hello", 5, &id);
	fx_open(&f, input, sizeof(input) - 1);
	fx_read(&f, 1, NULL);
	fx_at_end(&f);
	assert_oid_equal(&f.ids[1], &id);
	bi = f.marks[1].blob;
	assert_non_null(bi);
	assert_int_equal(bi->size, 5);
	assert_int_equal(f.marks[1].declared, 0);
	assert_non_null(bi->held);
	assert_null(bi->held->spool);
	assert_int_equal(bi->held->mem.len, 5);
	assert_memory_equal(bi->held->mem.ptr, "hello", 5);
	/* held, not written */
	assert_int_equal(fx_output(&f)->len, 0);
	fx_declare(&f, 1);
	want_blob(&want, 1, "hello", 5);
	assert_buf_equal(fx_output(&f), &want);
	buf_release(&want);
	fx_close(&f);
}

/* A blob of n bytes, counted; spooled iff n > HELD_IN_MEMORY. */
static void held_counted(size_t n, const char *orig_hex)
{
	char *content = make_content(n, (uint32_t)n);
	struct buf input = BUF_INIT(SIZE_MAX), want = BUF_INIT(SIZE_MAX);
	struct buf spooled = BUF_INIT(SIZE_MAX);
	struct blob_info *bi;
	struct oid id;
	struct fx f;
	char chunk[65536];
	size_t got;

	git_blob_id(content, n, &id);
	stream_blob(&input, 1, orig_hex, content, n);
	fx_open(&f, input.ptr, input.len);
	fx_read(&f, 1, orig_hex);
	/* the data and the LF after it are read */
	assert_int_equal(stream_reader_offset(f.in), input.len);
	fx_at_end(&f);
	bi = f.marks[1].blob;
	assert_int_equal(bi->size, n);
	if (orig_hex) {
		/* lazy: not hashed at read time */
		assert_true(oid_is_null(&f.ids[1]));
		assert_int_equal(bi->id_known, 0);
	} else {
		assert_oid_equal(&f.ids[1], &id);
	}
	assert_non_null(bi->held);
	if (n > HELD_IN_MEMORY) {
		assert_non_null(bi->held->spool);
		assert_int_equal(bi->held->mem.cap, 0);	/* released */
		assert_int_equal(bi->held->mem.len, 0);
		rewind(bi->held->spool);
		while ((got = fread(chunk, 1, sizeof(chunk), bi->held->spool)) > 0)
			assert_int_equal(buf_add(&spooled, chunk, got), 0);
		assert_false(ferror(bi->held->spool));
	} else {
		assert_null(bi->held->spool);
		assert_int_equal(buf_add(&spooled, bi->held->mem.ptr,
					 bi->held->mem.len), 0);
	}
	assert_int_equal(spooled.len, n);
	assert_memory_equal(spooled.ptr, content, n);
	assert_int_equal(fx_output(&f)->len, 0);
	fx_declare(&f, 1);
	/* the content written is the held copy, byte for byte */
	want_blob(&want, 1, spooled.ptr, spooled.len);
	assert_buf_equal(fx_output(&f), &want);
	assert_oid_equal(&f.ids[1], &id);
	assert_int_equal(bi->id_known, 1);
	assert_oid_equal(&bi->id, &id);
	buf_release(&input);
	buf_release(&want);
	buf_release(&spooled);
	free(content);
	fx_close(&f);
}

static void test_held_large_spooled(void **state)
{
	(void)state;
	held_counted(HELD_IN_MEMORY + 12345, NULL);
}

static void test_held_in_memory_boundary(void **state)
{
	(void)state;
	held_counted(HELD_IN_MEMORY, NULL);
	held_counted(HELD_IN_MEMORY + 1, NULL);
	held_counted(0, NULL);
}

/*
 * A large blob whose first chunks fit in memory: a blob of 600 KiB before
 * it leaves the rest of the reader's buffer as its first chunk, so it is
 * held in memory first and spooled when it outgrows HELD_IN_MEMORY; the
 * memory is let go then (memory does not grow with the blob).
 */
static void test_held_memory_then_spool(void **state)
{
	const size_t pad = 600 << 10, n = HELD_IN_MEMORY + 5000;
	char *padding = make_content(pad, 11);
	struct buf input = BUF_INIT(SIZE_MAX), want = BUF_INIT(SIZE_MAX);
	struct buf data = BUF_INIT(SIZE_MAX);
	struct blob_info *bi;
	struct oid id;
	struct fx f;
	char *content;
	int delimited;

	(void)state;
	content = make_content(n, 12);
	assert_null(memmem(content, n, "EOD", 3));	/* no delimiter line */
	for (delimited = 0; delimited <= 1; delimited++) {
		/* the blob's data: with <<EOD, the LF before the delimiter
		 * line belongs to it */
		buf_reset(&data);
		assert_int_equal(buf_add(&data, content, n), 0);
		if (delimited)
			assert_int_equal(buf_addch(&data, '\n'), 0);
		git_blob_id(data.ptr, data.len, &id);
		buf_reset(&input);
		stream_blob(&input, 1, NULL, padding, pad);
		if (delimited) {
			assert_int_equal(buf_adds(&input, "blob\nmark :2\ndata <<EOD\n"), 0);
			assert_int_equal(buf_add(&input, data.ptr, data.len), 0);
			assert_int_equal(buf_adds(&input, "EOD\n"), 0);
		} else {
			stream_blob(&input, 2, NULL, data.ptr, data.len);
		}
		fx_open(&f, input.ptr, input.len);
		fx_read(&f, 1, NULL);
		fx_read(&f, 2, NULL);
		fx_at_end(&f);
		bi = f.marks[2].blob;
		assert_int_equal(bi->size, data.len);
		assert_oid_equal(&f.ids[2], &id);
		assert_non_null(bi->held->spool);
		assert_int_equal(bi->held->mem.cap, 0);
		assert_int_equal(bi->held->mem.len, 0);
		fx_declare(&f, 2);
		buf_reset(&want);
		want_blob(&want, 2, data.ptr, data.len);
		assert_buf_equal(fx_output(&f), &want);
		fx_close(&f);
	}
	buf_release(&input);
	buf_release(&want);
	buf_release(&data);
	free(padding);
	free(content);
}

static void test_held_lazy(void **state)
{
	(void)state;
	held_counted(5, fake_orig);
	held_counted(HELD_IN_MEMORY + 777, fake_orig);
	held_counted(0, fake_orig);
}

static void test_held_declare_twice(void **state)
{
	struct buf input = BUF_INIT(SIZE_MAX), want = BUF_INIT(SIZE_MAX);
	struct fx f;

	(void)state;
	stream_blob(&input, 1, NULL, "one", 3);
	stream_blob(&input, 2, fake_orig, "two!", 4);
	fx_open(&f, input.ptr, input.len);
	fx_read(&f, 1, NULL);
	fx_read(&f, 2, fake_orig);
	fx_at_end(&f);
	fx_declare(&f, 2);
	fx_declare(&f, 1);
	fx_declare(&f, 2);
	fx_declare(&f, 1);
	want_blob(&want, 2, "two!", 4);
	want_blob(&want, 1, "one", 3);
	assert_buf_equal(fx_output(&f), &want);
	/* and not again at the flush */
	fx_flush(&f);
	assert_buf_equal(fx_output(&f), &want);
	fx_declare(&f, 1);
	assert_buf_equal(fx_output(&f), &want);
	buf_release(&input);
	buf_release(&want);
	fx_close(&f);
}

static void test_held_flush(void **state)
{
	char *big = make_content(HELD_IN_MEMORY + 10, 7);
	struct buf input = BUF_INIT(SIZE_MAX), want = BUF_INIT(SIZE_MAX);
	struct blob_info *bi[NMARKS + 1];
	struct oid id[NMARKS + 1];
	struct fx f;
	int i;

	(void)state;
	git_blob_id("consumed", 8, &id[1]);
	git_blob_id("left", 4, &id[2]);
	git_blob_id(big, HELD_IN_MEMORY + 10, &id[3]);
	git_blob_id("lazy one", 8, &id[4]);
	stream_blob(&input, 1, NULL, "consumed", 8);
	stream_blob(&input, 2, NULL, "left", 4);
	stream_blob(&input, 3, NULL, big, HELD_IN_MEMORY + 10);
	stream_blob(&input, 4, fake_orig, "lazy one", 8);
	fx_open(&f, input.ptr, input.len);
	for (i = 1; i <= 4; i++) {
		fx_read(&f, (uint64_t)i, i == 4 ? fake_orig : NULL);
		bi[i] = f.marks[i].blob;
		assert_non_null(bi[i]->held);
	}
	fx_at_end(&f);
	assert_non_null(bi[3]->held->spool);
	/* a commit decided on :1 (and did not keep it) */
	f.marks[1].consumed = 1;
	fx_flush(&f);
	for (i = 1; i <= 4; i++)
		assert_null(bi[i]->held);
	assert_int_equal(f.marks[1].declared, 0);
	for (i = 2; i <= 4; i++) {
		assert_int_equal(f.marks[i].declared, 1);
		assert_oid_equal(&f.ids[i], &id[i]);
	}
	want_blob(&want, 2, "left", 4);
	want_blob(&want, 3, big, HELD_IN_MEMORY + 10);
	want_blob(&want, 4, "lazy one", 8);
	assert_buf_equal(fx_output(&f), &want);
	/* nothing pending any more */
	fx_flush(&f);
	assert_buf_equal(fx_output(&f), &want);
	buf_release(&input);
	buf_release(&want);
	free(big);
	fx_close(&f);
}

/* data <<EOF: the LF before the delimiter line belongs to the data
 * (git fast-import's documentation), so "hello\n" is 6 bytes; the same
 * blob as `data 6`. */
static void test_held_delimited(void **state)
{
	static const char delimited[] =
		"blob\nmark :1\ndata <<EOF\nhello\nEOF\n"
		"blob\nmark :2\ndata <<END\nline one\nEOF\n\nline three\nEND\n"
		"blob\nmark :3\ndata <<EOF\nEOF\n";
	static const char two[] = "line one\nEOF\n\nline three\n";
	struct buf want = BUF_INIT(SIZE_MAX), counted = BUF_INIT(SIZE_MAX);
	struct oid id1, id2, id3;
	struct fx f;

	(void)state;
	git_blob_id("hello\n", 6, &id1);
	git_blob_id(two, sizeof(two) - 1, &id2);
	git_blob_id("", 0, &id3);
	fx_open(&f, delimited, sizeof(delimited) - 1);
	fx_read(&f, 1, NULL);
	fx_read(&f, 2, NULL);
	fx_read(&f, 3, NULL);
	fx_at_end(&f);
	assert_oid_equal(&f.ids[1], &id1);
	assert_oid_equal(&f.ids[2], &id2);
	assert_oid_equal(&f.ids[3], &id3);
	assert_int_equal(f.marks[1].blob->size, 6);
	assert_int_equal(f.marks[2].blob->size, sizeof(two) - 1);
	assert_int_equal(f.marks[3].blob->size, 0);
	fx_flush(&f);
	want_blob(&want, 1, "hello\n", 6);
	want_blob(&want, 2, two, sizeof(two) - 1);
	want_blob(&want, 3, "", 0);
	assert_buf_equal(fx_output(&f), &want);
	fx_close(&f);

	/* the same blobs, counted: the same output */
	stream_blob(&counted, 1, NULL, "hello\n", 6);
	stream_blob(&counted, 2, NULL, two, sizeof(two) - 1);
	stream_blob(&counted, 3, NULL, "", 0);
	fx_open(&f, counted.ptr, counted.len);
	fx_read(&f, 1, NULL);
	fx_read(&f, 2, NULL);
	fx_read(&f, 3, NULL);
	fx_at_end(&f);
	fx_flush(&f);
	assert_buf_equal(fx_output(&f), &want);
	fx_close(&f);
	buf_release(&want);
	buf_release(&counted);
}

/* Delimited data larger than HELD_IN_MEMORY: spooled, hashed from the
 * spool (its length is known only at the end), lazy or not. */
static void held_delimited_large(const char *orig_hex)
{
	const size_t lines = 40000;
	struct buf content = BUF_INIT(SIZE_MAX), input = BUF_INIT(SIZE_MAX);
	struct buf want = BUF_INIT(SIZE_MAX);
	struct blob_info *bi;
	struct oid id;
	struct fx f;
	size_t i;

	for (i = 0; i < lines; i++)
		assert_int_equal(buf_printf(&content, "line %zu of the delimited "
					    "blob\n", i), 0);
	assert_true(content.len > HELD_IN_MEMORY);
	git_blob_id(content.ptr, content.len, &id);
	assert_int_equal(buf_adds(&input, "blob\nmark :3\n"), 0);
	if (orig_hex)
		assert_int_equal(buf_printf(&input, "original-oid %s\n", orig_hex), 0);
	assert_int_equal(buf_adds(&input, "data <<XYZ\n"), 0);
	assert_int_equal(buf_add(&input, content.ptr, content.len), 0);
	assert_int_equal(buf_adds(&input, "XYZ\n"), 0);
	fx_open(&f, input.ptr, input.len);
	fx_read(&f, 3, orig_hex);
	assert_int_equal(stream_reader_offset(f.in), input.len);
	fx_at_end(&f);
	bi = f.marks[3].blob;
	assert_int_equal(bi->size, content.len);
	/* line by line into memory, then spooled: the memory let go */
	assert_non_null(bi->held->spool);
	assert_int_equal(bi->held->mem.cap, 0);
	assert_int_equal(bi->held->mem.len, 0);
	if (orig_hex)
		assert_true(oid_is_null(&f.ids[3]));
	else
		assert_oid_equal(&f.ids[3], &id);
	fx_declare(&f, 3);
	assert_oid_equal(&f.ids[3], &id);
	want_blob(&want, 3, content.ptr, content.len);
	assert_buf_equal(fx_output(&f), &want);
	buf_release(&content);
	buf_release(&input);
	buf_release(&want);
	fx_close(&f);
}

static void test_held_delimited_large(void **state)
{
	(void)state;
	held_delimited_large(NULL);
	held_delimited_large(fake_orig);
}

/* Data cut short: -1 with a message, nothing held, nothing written. */
static void held_truncated(const char *input, size_t len)
{
	struct err e = ERR_INIT;
	struct fx f;

	fx_open(&f, input, len);
	assert_int_equal(stream_reader_next(f.in, &f.cmd, &e), 1);
	assert_int_equal(f.cmd.kind, STREAM_BLOB);
	assert_int_equal(blobs_read(f.b, &f.marks[1], NULL, &e), -1);
	assert_int_not_equal(e.kind, ERR_NONE);
	assert_true(e.msg[0] != '\0');
	assert_null(f.marks[1].blob);
	fx_flush(&f);
	assert_int_equal(fx_output(&f)->len, 0);
	fx_close(&f);
}

static void test_held_truncated(void **state)
{
	static const char small[] = "blob\nmark :1\ndata 10\nhello";
	static const char delim[] = "blob\nmark :1\ndata <<EOF\nhello\n";
	struct buf big = BUF_INIT(SIZE_MAX);
	char *content = make_content(HELD_IN_MEMORY + 100, 3);

	(void)state;
	held_truncated(small, sizeof(small) - 1);
	held_truncated(delim, sizeof(delim) - 1);
	/* spooled, then cut */
	assert_int_equal(buf_printf(&big, "blob\nmark :1\ndata %zu\n",
				    HELD_IN_MEMORY + 200), 0);
	assert_int_equal(buf_add(&big, content, HELD_IN_MEMORY + 100), 0);
	held_truncated(big.ptr, big.len);
	/* in memory, cut */
	buf_reset(&big);
	assert_int_equal(buf_printf(&big, "blob\nmark :1\ndata %zu\n",
				    HELD_IN_MEMORY - 1), 0);
	assert_int_equal(buf_add(&big, content, HELD_IN_MEMORY - 100), 0);
	held_truncated(big.ptr, big.len);
	buf_release(&big);
	free(content);
}

/* The same content under three marks read before any commit (the second
 * lazy): each mark gets its blob written, all with the one id. */
static void test_held_same_content_three_marks(void **state)
{
	struct buf input = BUF_INIT(SIZE_MAX), want = BUF_INIT(SIZE_MAX);
	struct oid id;
	struct fx f;
	int i;

	(void)state;
	git_blob_id("dup", 3, &id);
	stream_blob(&input, 1, NULL, "dup", 3);
	stream_blob(&input, 2, fake_orig, "dup", 3);
	stream_blob(&input, 3, NULL, "dup", 3);
	fx_open(&f, input.ptr, input.len);
	fx_read(&f, 1, NULL);
	fx_read(&f, 2, fake_orig);
	fx_read(&f, 3, NULL);
	fx_at_end(&f);
	fx_flush(&f);
	for (i = 1; i <= 3; i++) {
		assert_int_equal(f.marks[i].declared, 1);
		assert_oid_equal(&f.ids[i], &id);
		want_blob(&want, (uint64_t)i, "dup", 3);
	}
	assert_buf_equal(fx_output(&f), &want);
	buf_release(&input);
	buf_release(&want);
	fx_close(&f);
}

/*
 * The same content again under a new mark, after the first copy went
 * out: the second blob command carries the data, so declaring its mark
 * must write it (a stream from a non-git source has no original-oid,
 * may repeat content under new marks, and has no source repository
 * holding it).
 */
static void test_held_same_content_after_written(void **state)
{
	struct buf input = BUF_INIT(SIZE_MAX), want = BUF_INIT(SIZE_MAX);
	struct err e = ERR_INIT;
	struct fx f;

	(void)state;
	/*
	 * Was a bug: blobs_read found the content's blob_info already
	 * emitted and threw the new held copy away; blobs_declare then
	 * looked for the content in the source repository and failed (exit
	 * 3 end to end, for a stream git fast-import takes).
	 */
	stream_blob(&input, 1, NULL, "again", 5);
	stream_blob(&input, 2, NULL, "again", 5);
	fx_open(&f, input.ptr, input.len);
	fx_read(&f, 1, NULL);
	fx_declare(&f, 1);
	fx_flush(&f);
	fx_read(&f, 2, NULL);
	fx_at_end(&f);
	assert_oid_equal(&f.ids[2], &f.ids[1]);
	if (blobs_declare(f.b, &f.marks[2], &e) < 0)
		fail_msg("blobs_declare :2: %s", e.msg);
	want_blob(&want, 1, "again", 5);
	want_blob(&want, 2, "again", 5);
	assert_buf_equal(fx_output(&f), &want);
	buf_release(&input);
	buf_release(&want);
	fx_close(&f);
}

/*
 * A mark defined again (fast-import takes it: the later blob is what the
 * mark names). The engine keeps one struct blob_mark per mark and resets
 * it (engine.c mark_set) before blobs_read. No commit decides on either
 * blob before the flush: the last blob written under the mark must be
 * the second one.
 */
static void test_held_mark_defined_again(void **state)
{
	struct buf input = BUF_INIT(SIZE_MAX), want = BUF_INIT(SIZE_MAX);
	const struct buf *got;
	struct oid id;
	struct fx f;

	(void)state;
	/*
	 * Was a bug: blobs_flush declared the pending entries in order, so
	 * the first blob went out under :1, the mark counted as declared and
	 * the second was never written (end to end: fast-import of the
	 * input gives f = "second", of migrate --rules' output "first").
	 */
	git_blob_id("second", 6, &id);
	stream_blob(&input, 1, NULL, "first", 5);
	stream_blob(&input, 1, NULL, "second", 6);
	fx_open(&f, input.ptr, input.len);
	fx_read(&f, 1, NULL);
	/* what engine.c mark_set does to a mark defined again */
	memset(&f.marks[1], 0, sizeof(f.marks[1]));
	f.marks[1].num = 1;
	f.marks[1].id = &f.ids[1];
	f.marks[1].declared = 1;
	fx_read(&f, 1, NULL);
	fx_at_end(&f);
	assert_oid_equal(&f.ids[1], &id);
	fx_flush(&f);
	want_blob(&want, 1, "second", 6);
	got = fx_output(&f);
	assert_true(got->len >= want.len);
	assert_memory_equal(got->ptr + got->len - want.len, want.ptr, want.len);
	buf_release(&input);
	buf_release(&want);
	fx_close(&f);
}

/* A rule file that cannot be used: -1 with one message naming the file
 * (and line), and what blobs_new made is freed by blobs_free. */
static void test_blobs_new_errors(void **state)
{
	static const struct {
		const char *rules, *at;	/* at: after the file name */
	} cases[] = {
		{ NULL, NULL },				/* no such file */
		{ "*.bin  lfs\n*.iso  annex mode=frozen\n", ":2:" },	/* bad option */
		{ "*.bin  lfs\n*.iso  size>  lfs\n", ":2:" },	/* syntax */
		{ "*.bin  frobnicate\n", ":1:" },		/* no such action */
	};
	struct err e;
	struct fx f;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		e = (struct err)ERR_INIT;
		assert_int_equal(fx_open_rules(&f, "", 0, cases[i].rules, &e), -1);
		assert_int_equal(e.kind, ERR_USAGE);
		assert_non_null(f.b);
		if (!strstr(e.msg, f.rules_path))
			fail_msg("case %zu: '%s' does not name %s", i, e.msg,
				 f.rules_path);
		if (cases[i].at) {
			const char *p = strstr(e.msg, f.rules_path) +
					strlen(f.rules_path);
			if (strncmp(p, cases[i].at, strlen(cases[i].at)))
				fail_msg("case %zu: '%s': want %s%s", i, e.msg,
					 f.rules_path, cases[i].at);
		}
		fx_close(&f);
	}
}

/* ---- group ---- */

static int setup(void **state)
{
	const char *t = getenv("TMPDIR");

	(void)state;
	snprintf(root, sizeof(root), "%s/test_blob.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(root))
		return -1;
	if (snprintf(empty_repo, sizeof(empty_repo), "%s/empty.git", root) >=
	    (int)sizeof(empty_repo))
		return -1;
	sh("git init -q --bare '%s'", empty_repo);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	sh("rm -rf '%s'", root);
	return 0;
}

/* attrread.c: what the lines of a nested .gitattributes assign (says,
 * lfs), as git fills attributes; one line's text at a time. */
static void attr_one(const struct attr_macros *m, const char *text,
		     size_t want_n, unsigned says, unsigned lfs)
{
	struct attr_rule *v = NULL;
	size_t n = attr_rules_read(&v, m, text, strlen(text));

	assert_int_equal(n, want_n);
	if (n) {
		assert_int_equal(v[n - 1].says, says);
		assert_int_equal(v[n - 1].lfs, lfs);
	}
	attr_rules_free(v, n);
}

static int attr_hits(const struct attr_macros *m, const char *text,
		     const char *rel)
{
	struct err e = ERR_INIT;
	struct attr_rule *v = NULL;
	size_t n = attr_rules_read(&v, m, text, strlen(text));
	int r;

	assert_int_equal(n, 1);
	r = attr_rule_hits(&v[0], rel, strlen(rel), &e);
	attr_rules_free(v, n);
	return r;
}

static void test_attrread_lines(void **state)
{
	struct attr_macros *m = attr_macros_new();
	(void)state;
	attr_one(m, "*.bin -filter\n", 1, ATTR_FILTER, 0);
	attr_one(m, "*.bin filter=custom\n", 1, ATTR_FILTER, 0);
	attr_one(m, "*.bin !filter\n", 1, ATTR_FILTER, 0);
	attr_one(m, "*.bin binary\n", 1, ATTR_DIFF | ATTR_MERGE | ATTR_TEXT, ATTR_TEXT);
	attr_one(m, "*.bin filter=lfs diff=lfs merge=lfs -text\n", 1, ATTR_ALL, ATTR_ALL);
	/* right to left: the last word decides */
	attr_one(m, "*.bin filter=lfs -filter\n", 1, ATTR_FILTER, 0);
	attr_one(m, "*.bin -filter filter=lfs\n", 1, ATTR_FILTER, ATTR_FILTER);
	attr_one(m, "*.bin -text=x\n", 1, ATTR_TEXT, ATTR_TEXT);	/* -a=b unsets a */
	/* none of the four, or lines git ignores */
	attr_one(m, "*.bin eol=lf linguist-generated\n", 0, 0, 0);
	attr_one(m, "# *.bin -filter\n", 0, 0, 0);
	attr_one(m, "!*.bin -filter\n", 0, 0, 0);
	attr_one(m, "dir/ -filter\n", 0, 0, 0);
	attr_one(m, "[attr]x -filter\n", 0, 0, 0);
	attr_one(m, "a\0*.bin -filter\n", 0, 0, 0);	/* git stops at a NUL */
	attr_one(m, "\xef\xbb\xbf*.bin -filter", 1, ATTR_FILTER, 0);
	/* a pattern the rules cannot take: all four, matching every path */
	attr_one(m, "[a -diff\n", 1, ATTR_ALL, 0);
	assert_int_equal(attr_hits(m, "[a -diff\n", "x/y"), 1);
	/* patterns relative to the file's directory */
	assert_int_equal(attr_hits(m, "*.bin -filter\n", "c/x.bin"), 1);
	assert_int_equal(attr_hits(m, "/x.bin -filter\n", "c/x.bin"), 0);
	assert_int_equal(attr_hits(m, "c/*.bin -filter\n", "c/x.bin"), 1);
	assert_int_equal(attr_hits(m, "\"a b.bin\" -filter\n", "a b.bin"), 1);
	assert_int_equal(attr_hits(m, "\"a\\040b.bin\" -filter\n", "a b.bin"), 1);
	assert_int_equal(attr_hits(m, "\"a b.bin\" -filter\n", "a.bin"), 0);
	/* consecutive lines that assign alike are one rule; others not */
	assert_int_equal(attr_hits(m, "*.bin -filter\n/y.dat -filter\n", "y.dat"), 1);
	assert_int_equal(attr_hits(m, "*.bin -filter\n/y.dat -filter\n", "x.bin"), 1);
	assert_int_equal(attr_hits(m, "*.bin -filter\n/y.dat -filter\n", "x.dat"), 0);
	attr_one(m, "*.bin -filter\n*.dat -diff\n*.c -diff\n", 2, ATTR_DIFF, 0);
	attr_one(m, "*.bin -diff\n[ -diff\n*.c -diff\n", 3, ATTR_DIFF, 0);
	attr_macros_free(m);
}

static void test_attrread_macros(void **state)
{
	static const char root[] = "[attr]m filter=custom\n[attr]lfs filter=lfs "
				   "diff=lfs merge=lfs -text\n[attr]n m\n";
	static const char again[] = "[attr]m -diff\n[attr]m -merge\n"
				    "[attr]binary -text\n";
	struct attr_macros *m = attr_macros_new();
	(void)state;
	attr_one(m, "*.bin m\n", 0, 0, 0);	/* not a macro yet */
	assert_int_equal(attr_macros_read(m, root, strlen(root)), 1);
	assert_int_equal(attr_macros_read(m, root, strlen(root)), 0);
	attr_one(m, "*.bin m\n", 1, ATTR_FILTER, 0);
	attr_one(m, "*.bin n\n", 1, ATTR_FILTER, 0);	/* nested macros */
	attr_one(m, "*.bin lfs\n", 1, ATTR_ALL, ATTR_ALL);
	/* unset, a macro does not expand here and stops it elsewhere */
	attr_one(m, "*.bin -lfs\n", 1, ATTR_ALL, 0);
	attr_one(m, "*.bin lfs -diff\n", 1, ATTR_ALL, ATTR_FILTER | ATTR_MERGE | ATTR_TEXT);
	/* a later definition wins; binary may be redefined */
	assert_int_equal(attr_macros_read(m, again, strlen(again)), 1);
	attr_one(m, "*.bin m\n", 1, ATTR_MERGE, 0);
	attr_one(m, "*.bin binary\n", 1, ATTR_TEXT, ATTR_TEXT);
	attr_macros_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policy_actions),
		cmocka_unit_test(test_policy_first_match_wins),
		cmocka_unit_test(test_policy_size_bounds),
		cmocka_unit_test(test_policy_modes),
		cmocka_unit_test(test_policy_protected),
		cmocka_unit_test(test_policy_notes),
		cmocka_unit_test(test_policy_regex_failure),
		cmocka_unit_test(test_blobs_new_errors),
		cmocka_unit_test(test_held_small),
		cmocka_unit_test(test_held_large_spooled),
		cmocka_unit_test(test_held_in_memory_boundary),
		cmocka_unit_test(test_held_memory_then_spool),
		cmocka_unit_test(test_held_lazy),
		cmocka_unit_test(test_held_declare_twice),
		cmocka_unit_test(test_held_flush),
		cmocka_unit_test(test_held_delimited),
		cmocka_unit_test(test_held_delimited_large),
		cmocka_unit_test(test_held_truncated),
		cmocka_unit_test(test_held_same_content_three_marks),
		cmocka_unit_test(test_held_same_content_after_written),
		cmocka_unit_test(test_held_mark_defined_again),
		cmocka_unit_test(test_attrread_lines),
		cmocka_unit_test(test_attrread_macros),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
