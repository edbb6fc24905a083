/*
 * test_stream.c - the stream reader and writer: every command round-trips,
 * every malformed input gets one ERR_STREAM error naming its byte offset.
 *
 * Round trips compare a dump of the parsed items (every field and all data
 * bytes) before and after writing, so a test states the input only.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stream/stream.h"

/* The reader's buffer (reader.c READ_BUF_SIZE): no chunk may exceed it. */
#define READER_BUF_BOUND (STREAM_MAX_LINE + 4096)

/* ---- helpers ---- */

static void dump_buf(struct buf *out, const char *name, const struct buf *b)
{
	buf_printf(out, " %s[%zu]=", name, b->len);
	buf_add(out, b->ptr, b->len);
}

static void dump_ref(struct buf *out, const char *name, const struct stream_ref *r)
{
	buf_printf(out, " %s=%d:%llu:", name, (int)r->kind, (unsigned long long)r->mark);
	buf_add(out, r->name.ptr, r->name.len);
}

static void dump_cmd(struct buf *out, const struct stream_cmd *c)
{
	size_t i;

	buf_printf(out, "kind=%d mark=%llu mode=%o", (int)c->kind,
		   (unsigned long long)c->mark, (unsigned)c->mode);
	dump_buf(out, "oid", &c->original_oid);
	dump_buf(out, "ref", &c->ref);
	buf_printf(out, " has=%d%d%d", c->has_author, c->has_tagger, c->has_encoding);
	dump_buf(out, "author", &c->author);
	dump_buf(out, "committer", &c->committer);
	dump_buf(out, "tagger", &c->tagger);
	dump_buf(out, "enc", &c->encoding);
	dump_buf(out, "msg", &c->message);
	dump_ref(out, "from", &c->from);
	for (i = 0; i < c->nmerges; i++)
		dump_ref(out, "merge", &c->merges[i]);
	dump_ref(out, "dataref", &c->dataref);
	dump_buf(out, "path", &c->path);
	dump_buf(out, "path2", &c->path2);
	dump_buf(out, "text", &c->text);
	buf_printf(out, " has_data=%d\n", c->has_data);
}

/* Pulls the pending data into d, checking each chunk's size. */
static int pull_data(struct stream_reader *r, struct buf *d, struct err *e)
{
	const char *p;
	size_t n;
	int rc;

	while ((rc = stream_reader_data(r, &p, &n, e)) > 0) {
		assert_true(n > 0);
		assert_int_equal(buf_add(d, p, n), 0);
	}
	return rc;
}

/*
 * Parses everything: the dump goes to dump, the items are re-written to w
 * when w is given. Returns the last reader status (0 or -1).
 */
static int parse_all(struct stream_reader *r, struct buf *dump,
		     struct stream_writer *w, struct err *e)
{
	struct stream_cmd c;
	struct buf d = BUF_INIT(SIZE_MAX / 2);
	int rc;

	stream_cmd_init(&c);
	while ((rc = stream_reader_next(r, &c, e)) > 0) {
		dump_cmd(dump, &c);
		if (!c.has_data) {
			if (w)
				assert_int_equal(stream_write_cmd(w, &c, e), 0);
			continue;
		}
		buf_reset(&d);
		rc = pull_data(r, &d, e);
		if (rc < 0)
			break;
		dump_buf(dump, "data", &d);
		buf_addch(dump, '\n');
		if (c.data_len != UINT64_MAX)
			assert_int_equal(d.len, c.data_len);
		if (w) {
			assert_int_equal(stream_write_data_begin(w, &c, d.len, e), 0);
			assert_int_equal(stream_write_bytes(w, d.ptr, d.len, e), 0);
			assert_int_equal(stream_write_data_end(w, e), 0);
		}
	}
	buf_release(&d);
	stream_cmd_release(&c);
	return rc;
}

/* Parses s, writes it, parses the output; both dumps must agree. Returns
 * the written stream (caller frees). */
static char *roundtrip_n(const char *s, size_t len)
{
	struct buf d1 = BUF_INIT(SIZE_MAX / 2), d2 = BUF_INIT(SIZE_MAX / 2);
	struct err e = ERR_INIT;
	struct stream_reader *r = stream_reader_new_mem(s, len, "in");
	struct stream_writer *w = stream_writer_new_mem();
	const struct buf *out;
	char *copy;
	int rc;

	rc = parse_all(r, &d1, w, &e);
	if (rc != 0)
		print_error("unexpected error: %s\n", e.msg);
	assert_int_equal(rc, 0);
	out = stream_writer_mem(w);
	stream_reader_free(r);
	r = stream_reader_new_mem(out->ptr, out->len, "out");
	rc = parse_all(r, &d2, NULL, &e);
	if (rc != 0)
		print_error("re-read error: %s\noutput:\n%s\n", e.msg, out->ptr);
	assert_int_equal(rc, 0);
	assert_int_equal(d1.len, d2.len);
	assert_memory_equal(d1.ptr, d2.ptr, d1.len);
	copy = xmemdup(out->ptr, out->len);
	stream_reader_free(r);
	stream_writer_free(w);
	buf_release(&d1);
	buf_release(&d2);
	return copy;
}

static char *roundtrip(const char *s)
{
	return roundtrip_n(s, strlen(s));
}

/* Round trip and the exact canonical output. */
static void roundtrip_expect(const char *in, const char *expect)
{
	char *out = roundtrip(in);
	assert_string_equal(out, expect);
	free(out);
}

/* The items of s, one at a time. */
struct items {
	struct stream_reader *r;
	struct stream_cmd c;
	struct err e;
};

static void items_open(struct items *it, const char *s, size_t n)
{
	it->r = stream_reader_new_mem(s, n, "t");
	stream_cmd_init(&it->c);
	it->e = (struct err)ERR_INIT;
}

static void items_close(struct items *it)
{
	stream_cmd_release(&it->c);
	stream_reader_free(it->r);
}

static void expect_kind(struct items *it, enum stream_kind k)
{
	int rc = stream_reader_next(it->r, &it->c, &it->e);
	if (rc < 0)
		print_error("error: %s\n", it->e.msg);
	assert_int_equal(rc, 1);
	assert_int_equal(it->c.kind, k);
}

static void expect_end(struct items *it)
{
	assert_int_equal(stream_reader_next(it->r, &it->c, &it->e), 0);
}

static void assert_buf(const struct buf *b, const char *s)
{
	assert_int_equal(b->len, strlen(s));
	assert_memory_equal(b->ptr, s, b->len);
}

/*
 * s (n bytes) must fail with ERR_STREAM at byte offset off, the message
 * containing what (if given).
 */
static void expect_error_n(const char *s, size_t n, uint64_t off, const char *what)
{
	struct buf d = BUF_INIT(SIZE_MAX / 2);
	struct err e = ERR_INIT;
	struct stream_reader *r = stream_reader_new_mem(s, n, "bad");
	struct stream_cmd c;
	char want[64];

	assert_int_equal(parse_all(r, &d, NULL, &e), -1);
	assert_int_equal(e.kind, ERR_STREAM);
	snprintf(want, sizeof(want), "stream bad: byte offset %llu: ",
		 (unsigned long long)off);
	if (!strstr(e.msg, want) || (what && !strstr(e.msg, what)))
		print_error("message: %s\nwanted: %s ... %s\n", e.msg, want,
			    what ? what : "");
	assert_non_null(strstr(e.msg, want));
	if (what)
		assert_non_null(strstr(e.msg, what));
	/* the reader refuses to go on */
	stream_cmd_init(&c);
	assert_int_equal(stream_reader_next(r, &c, &e), -1);
	stream_cmd_release(&c);
	stream_reader_free(r);
	buf_release(&d);
}

static void expect_error(const char *s, uint64_t off, const char *what)
{
	expect_error_n(s, strlen(s), off, what);
}

#define CI "committer C <c@c> 1 +0000\n"
#define COMMIT_HEAD "commit refs/heads/m\n" CI "data 0\n"

/* ---- round trips, one per command ---- */

static void test_blob(void **state)
{
	(void)state;
	roundtrip_expect("blob\nmark :1\noriginal-oid 0123456789abcdef0123456789abcdef01234567\n"
			 "data 5\nhello\nblob\ndata 3\nabc",
			 "blob\nmark :1\noriginal-oid 0123456789abcdef0123456789abcdef01234567\n"
			 "data 5\nhello\nblob\ndata 3\nabc\n");
}

static void test_blob_binary_and_hash_lines(void **state)
{
	static const char s[] = "blob\ndata 12\n#x\n\0\nblob\n\x01\xff\n";
	char *out;
	(void)state;
	out = roundtrip_n(s, sizeof(s) - 1);
	assert_memory_equal(out, s, sizeof(s) - 1);
	free(out);
}

static void test_commit_full(void **state)
{
	(void)state;
	roundtrip_expect(
		"commit refs/heads/main\nmark :3\noriginal-oid abc\n"
		"author A U <a@u> 1 +0100\n" CI "encoding iso-8859-1\n"
		"data 4\nmsg\nfrom :1\nmerge :2\nmerge 0123456789abcdef0123456789abcdef01234567\n"
		"merge refs/heads/other\n"
		"M 100644 :1 a\nD b\nC c d\nR e f\ndeleteall\n\n",
		"commit refs/heads/main\nmark :3\noriginal-oid abc\n"
		"author A U <a@u> 1 +0100\n" CI "encoding iso-8859-1\n"
		"data 4\nmsg\nfrom :1\nmerge :2\nmerge 0123456789abcdef0123456789abcdef01234567\n"
		"merge refs/heads/other\n"
		"M 100644 :1 a\nD b\nC c d\nR e f\ndeleteall\n\n");
}

static void test_commit_items(void **state)
{
	static const char s[] = "commit refs/heads/m\nmark :5\n" CI
				"data 3\nabcfrom refs/heads/x^0\nM 755 :1 p q\n\n";
	struct items it;
	(void)state;
	items_open(&it, s, sizeof(s) - 1);
	expect_kind(&it, STREAM_COMMIT);
	assert_int_equal(it.c.mark, 5);
	assert_false(it.c.has_author);
	assert_buf(&it.c.committer, "C <c@c> 1 +0000");
	assert_buf(&it.c.message, "abc");
	assert_int_equal(it.c.from.kind, STREAM_REF_NAME);
	assert_buf(&it.c.from.name, "refs/heads/x^0");
	expect_kind(&it, STREAM_MODIFY);
	assert_int_equal(it.c.mode, 0755);
	assert_int_equal(it.c.dataref.kind, STREAM_REF_MARK);
	assert_int_equal(it.c.dataref.mark, 1);
	assert_buf(&it.c.path, "p q");
	expect_kind(&it, STREAM_COMMIT_END);
	expect_end(&it);
	items_close(&it);
}

static void test_commit_message_no_lf(void **state)
{
	/* fast-export: the next command follows the message directly */
	(void)state;
	roundtrip_expect("commit refs/heads/m\n" CI "data 2\nhifrom :1\n\n",
			 "commit refs/heads/m\n" CI "data 2\nhifrom :1\n\n");
}

static void test_commit_delimited(void **state)
{
	(void)state;
	roundtrip_expect("commit refs/heads/m\n" CI "data <<EOF\nline 1\nEOFx\n\nEOF\n\n",
			 "commit refs/heads/m\n" CI "data 13\nline 1\nEOFx\n\n\n");
}

static void test_commit_delimited_empty(void **state)
{
	(void)state;
	roundtrip_expect("commit refs/heads/m\n" CI "data <<E\nE\n",
			 "commit refs/heads/m\n" CI "data 0\n\n");
}

static void test_commit_eof_after_message(void **state)
{
	/* a last root commit with a message without LF: the LF fast-export
	 * writes to end the change list is eaten as the optional LF */
	static const char s[] = "commit refs/heads/m\n" CI "data 1\nx\n";
	struct items it;
	(void)state;
	items_open(&it, s, sizeof(s) - 1);
	expect_kind(&it, STREAM_COMMIT);
	expect_kind(&it, STREAM_COMMIT_END);
	expect_end(&it);
	items_close(&it);
}

static void test_commit_ended_by_command(void **state)
{
	static const char s[] = COMMIT_HEAD "M 100644 :1 a\ncommit refs/heads/n\n" CI
				"data 0\nreset refs/heads/o\n";
	struct items it;
	(void)state;
	items_open(&it, s, sizeof(s) - 1);
	expect_kind(&it, STREAM_COMMIT);
	expect_kind(&it, STREAM_MODIFY);
	expect_kind(&it, STREAM_COMMIT_END);
	expect_kind(&it, STREAM_COMMIT);
	assert_buf(&it.c.ref, "refs/heads/n");
	expect_kind(&it, STREAM_COMMIT_END);
	expect_kind(&it, STREAM_RESET);
	expect_end(&it);
	items_close(&it);
}

static void test_modify_forms(void **state)
{
	(void)state;
	roundtrip_expect(COMMIT_HEAD
			 "M 644 :1 a\nM 040000 4b825dc642cb6eb9a060e54bf8d69288fbee4904 d\n"
			 "M 160000 1234567890abcdef1234567890abcdef12345678 sub\n"
			 "M 120000 :2 link\nM 100755 :3 dir with space/x y\n\n",
			 COMMIT_HEAD
			 "M 644 :1 a\nM 40000 4b825dc642cb6eb9a060e54bf8d69288fbee4904 d\n"
			 "M 160000 1234567890abcdef1234567890abcdef12345678 sub\n"
			 "M 120000 :2 link\nM 100755 :3 \"dir with space/x y\"\n\n");
}

static void test_modify_inline(void **state)
{
	static const char s[] = COMMIT_HEAD "M 100644 inline a\ndata 3\nxyz\n"
				"M 100644 inline b\ndata <<Z\nq\nZ\nD c\n\n";
	struct items it;
	const char *p;
	size_t n;
	char *out;
	(void)state;
	items_open(&it, s, sizeof(s) - 1);
	expect_kind(&it, STREAM_COMMIT);
	expect_kind(&it, STREAM_MODIFY);
	assert_true(it.c.has_data);
	assert_int_equal(it.c.data_len, 3);
	assert_int_equal(it.c.dataref.kind, STREAM_REF_INLINE);
	/* not pulled: next() skips it */
	expect_kind(&it, STREAM_MODIFY);
	assert_true(it.c.data_len == UINT64_MAX);
	assert_int_equal(stream_reader_data(it.r, &p, &n, &it.e), 1);
	assert_int_equal(n, 2);
	assert_memory_equal(p, "q\n", 2);
	assert_int_equal(stream_reader_data(it.r, &p, &n, &it.e), 0);
	assert_int_equal(stream_reader_data(it.r, &p, &n, &it.e), 0);
	expect_kind(&it, STREAM_DELETE);
	expect_kind(&it, STREAM_COMMIT_END);
	expect_end(&it);
	items_close(&it);
	out = roundtrip(s);
	assert_string_equal(out, COMMIT_HEAD "M 100644 inline a\ndata 3\nxyz\n"
				 "M 100644 inline b\ndata 2\nq\n\nD c\n\n");
	free(out);
}

static void test_notemodify(void **state)
{
	(void)state;
	roundtrip_expect("commit refs/notes/commits\n" CI "data 0\n"
			 "N :1 :2\nN inline refs/heads/main\ndata 4\nnote\n"
			 "N 0123456789abcdef0123456789abcdef01234567 :3\n\n",
			 "commit refs/notes/commits\n" CI "data 0\n"
			 "N :1 :2\nN inline refs/heads/main\ndata 4\nnote\n"
			 "N 0123456789abcdef0123456789abcdef01234567 :3\n\n");
}

static void test_quoted_paths(void **state)
{
	static const char s[] = COMMIT_HEAD
		"M 100644 :1 \"a\\a\\b\\f\\n\\r\\t\\v\\\\\\\"\\303\\251 \\177\"\n"
		"D \"sp ace\"\nC \"q s\" \"d t\"\nR src dst with space\n"
		"C \"\" root\nM 100644 :1 \"plain\"\n\n";
	struct items it;
	(void)state;
	items_open(&it, s, sizeof(s) - 1);
	expect_kind(&it, STREAM_COMMIT);
	expect_kind(&it, STREAM_MODIFY);
	assert_buf(&it.c.path, "a\a\b\f\n\r\t\v\\\"\303\251 \177");
	expect_kind(&it, STREAM_DELETE);
	assert_buf(&it.c.path, "sp ace");
	expect_kind(&it, STREAM_COPY);
	assert_buf(&it.c.path, "q s");
	assert_buf(&it.c.path2, "d t");
	expect_kind(&it, STREAM_RENAME);
	assert_buf(&it.c.path, "src");
	assert_buf(&it.c.path2, "dst with space");
	expect_kind(&it, STREAM_COPY);
	assert_buf(&it.c.path, "");
	assert_buf(&it.c.path2, "root");
	expect_kind(&it, STREAM_MODIFY);
	assert_buf(&it.c.path, "plain");
	items_close(&it);
	roundtrip_expect(s, COMMIT_HEAD
		"M 100644 :1 \"a\\a\\b\\f\\n\\r\\t\\v\\\\\\\"\\303\\251 \\177\"\n"
		"D \"sp ace\"\nC \"q s\" \"d t\"\nR src \"dst with space\"\n"
		"C \"\" root\nM 100644 :1 plain\n\n");
}

static void test_quote_path_rules(void **state)
{
	static const struct { const char *in; size_t n; const char *out; } t[] = {
		{ "plain/file.c", 12, "plain/file.c" },
		{ "sp ace.txt", 10, "\"sp ace.txt\"" },
		{ "back\\slash", 10, "\"back\\\\slash\"" },
		{ "quo\"te", 6, "\"quo\\\"te\"" },
		{ "ta\tb", 4, "\"ta\\tb\"" },
		{ "new\nline", 8, "\"new\\nline\"" },
		{ "h\303\251llo", 6, "\"h\\303\\251llo\"" },
		{ "\001\033\177", 3, "\"\\001\\033\\177\"" },
		{ "a b\tc", 5, "\"a b\\tc\"" },
		{ "", 0, "\"\"" },
	};
	size_t i;
	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct buf b = BUF_INIT(1024);
		assert_int_equal(stream_quote_path(&b, t[i].in, t[i].n), 0);
		assert_string_equal(b.ptr, t[i].out);
		buf_release(&b);
	}
}

static void test_quote_path_too_long(void **state)
{
	struct buf b = BUF_INIT(8);
	(void)state;
	assert_int_equal(buf_adds(&b, "ab"), 0);
	assert_int_equal(stream_quote_path(&b, "\001\002\003", 3), -1);
	assert_string_equal(b.ptr, "ab");	/* left as it was */
	buf_release(&b);
}

/* stream_show_path: git ls-files with core.quotePath=true (a space alone
 * stays raw); tests/integration/report_paths.sh checks it against git. */
static void test_show_path(void **state)
{
	static const struct { const char *in; size_t n; const char *out; } t[] = {
		{ "plain.psd", 9, "plain.psd" },
		{ "with space", 10, "with space" },
		{ "caf\xc3\xa9", 5, "\"caf\\303\\251\"" },
		{ "a\tb\n\"\\\x7f\x01", 8, "\"a\\tb\\n\\\"\\\\\\177\\001\"" },
		{ "", 0, "" },
	};
	size_t i;
	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct buf b = BUF_INIT(1024);
		assert_int_equal(stream_show_path(&b, t[i].in, t[i].n), 0);
		assert_string_equal(b.ptr, t[i].out);
		buf_release(&b);
	}
	{
		struct buf b = BUF_INIT(8);
		assert_int_equal(buf_adds(&b, "ab"), 0);
		assert_int_equal(stream_show_path(&b, "\001\002\003", 3), -1);
		assert_string_equal(b.ptr, "ab");	/* left as it was */
		buf_release(&b);
	}
}

static void test_tag(void **state)
{
	(void)state;
	roundtrip_expect("tag v1\nmark :9\nfrom :3\noriginal-oid 1111111111111111111111111111111111111111\n"
			 "tagger T <t@t> 5 -0700\ndata 4\nann\n\n"
			 "tag bare\nfrom 2222222222222222222222222222222222222222\ndata 0\n",
			 "tag v1\nmark :9\nfrom :3\noriginal-oid 1111111111111111111111111111111111111111\n"
			 "tagger T <t@t> 5 -0700\ndata 4\nann\n\n"
			 "tag bare\nfrom 2222222222222222222222222222222222222222\ndata 0\n\n");
}

static void test_tag_fields(void **state)
{
	static const char s[] = "tag v1\nfrom :3\ndata <<X\nm\nX\n";
	struct items it;
	(void)state;
	items_open(&it, s, sizeof(s) - 1);
	expect_kind(&it, STREAM_TAG);
	assert_buf(&it.c.ref, "v1");
	assert_false(it.c.has_tagger);
	assert_int_equal(it.c.from.kind, STREAM_REF_MARK);
	assert_int_equal(it.c.from.mark, 3);
	assert_buf(&it.c.message, "m\n");
	expect_end(&it);
	items_close(&it);
}

static void test_reset(void **state)
{
	(void)state;
	roundtrip_expect("reset refs/heads/a\nreset refs/tags/b\nfrom :4\n\n"
			 "reset refs/heads/c\nfrom 0000000000000000000000000000000000000000\n"
			 "reset refs/heads/d\n\n",
			 "reset refs/heads/a\nreset refs/tags/b\nfrom :4\n\n"
			 "reset refs/heads/c\nfrom 0000000000000000000000000000000000000000\n\n"
			 "reset refs/heads/d\n");
}

static void test_feature_option(void **state)
{
	(void)state;
	roundtrip_expect("feature done\nfeature date-format=raw\noption git quiet\n",
			 "feature done\nfeature date-format=raw\noption git quiet\n");
}

static void test_progress(void **state)
{
	(void)state;
	roundtrip_expect("progress 1 objects\n\nprogress two\nprogress \n",
			 "progress 1 objects\nprogress two\nprogress \n");
}

static void test_checkpoint(void **state)
{
	(void)state;
	roundtrip_expect("checkpoint\n\ncheckpoint\n", "checkpoint\ncheckpoint\n");
}

static void test_done(void **state)
{
	static const char s[] = "progress x\ndone\nanything at all \xff\n";
	struct items it;
	(void)state;
	items_open(&it, s, sizeof(s) - 1);
	expect_kind(&it, STREAM_PROGRESS);
	expect_kind(&it, STREAM_DONE);
	expect_end(&it);
	expect_end(&it);
	items_close(&it);
	roundtrip_expect(s, "progress x\ndone\n");
}

static void test_alias(void **state)
{
	(void)state;
	roundtrip_expect("alias\nmark :7\nto :3\n\nalias\nmark :8\nto refs/heads/x\nblob\ndata 0\n",
			 "alias\nmark :7\nto :3\n\nalias\nmark :8\nto refs/heads/x\n\nblob\ndata 0\n\n");
}

static void test_queries(void **state)
{
	(void)state;
	roundtrip_expect("get-mark :4\ncat-blob :5\n"
			 "cat-blob 0123456789abcdef0123456789abcdef01234567\n"
			 "ls :6 a b\nls 0123456789abcdef0123456789abcdef01234567 \"x\\ty\"\n",
			 "get-mark :4\ncat-blob :5\n"
			 "cat-blob 0123456789abcdef0123456789abcdef01234567\n"
			 "ls :6 \"a b\"\nls 0123456789abcdef0123456789abcdef01234567 \"x\\ty\"\n");
}

static void test_queries_in_commit(void **state)
{
	static const char s[] = COMMIT_HEAD "ls \"a\"\nls :1 b c\ncat-blob :2\nM 100644 :1 d\n\n";
	struct items it;
	(void)state;
	items_open(&it, s, sizeof(s) - 1);
	expect_kind(&it, STREAM_COMMIT);
	expect_kind(&it, STREAM_LS);
	assert_int_equal(it.c.dataref.kind, STREAM_REF_NONE);
	assert_buf(&it.c.path, "a");
	expect_kind(&it, STREAM_LS);
	assert_int_equal(it.c.dataref.mark, 1);
	assert_buf(&it.c.path, "b c");
	expect_kind(&it, STREAM_CAT_BLOB);
	expect_kind(&it, STREAM_MODIFY);
	expect_kind(&it, STREAM_COMMIT_END);
	expect_end(&it);
	items_close(&it);
	roundtrip_expect(s, COMMIT_HEAD "ls \"a\"\nls :1 \"b c\"\ncat-blob :2\nM 100644 :1 d\n\n");
}

static void test_comments(void **state)
{
	/* comments inside a command come out after it, in order */
	static const char s[] = "# top\nblob\n# in blob\nmark :1\ndata 1\nx\n"
				"commit refs/heads/m\n#h1\n" CI "#h2\ndata 0\n#h3\nfrom :1\n"
				"# between\nM 100644 :1 a\n#\n\n# end\n";
	struct items it;
	(void)state;
	items_open(&it, s, sizeof(s) - 1);
	expect_kind(&it, STREAM_COMMENT);
	assert_buf(&it.c.text, " top");
	expect_kind(&it, STREAM_BLOB);
	assert_int_equal(it.c.mark, 1);
	expect_kind(&it, STREAM_COMMENT);
	assert_buf(&it.c.text, " in blob");
	expect_kind(&it, STREAM_COMMIT);
	assert_int_equal(it.c.from.mark, 1);
	expect_kind(&it, STREAM_COMMENT);
	assert_buf(&it.c.text, "h1");
	expect_kind(&it, STREAM_COMMENT);
	expect_kind(&it, STREAM_COMMENT);
	assert_buf(&it.c.text, "h3");
	expect_kind(&it, STREAM_COMMENT);
	assert_buf(&it.c.text, " between");
	expect_kind(&it, STREAM_MODIFY);
	expect_kind(&it, STREAM_COMMENT);
	assert_buf(&it.c.text, "");
	expect_kind(&it, STREAM_COMMIT_END);
	expect_kind(&it, STREAM_COMMENT);
	expect_end(&it);
	items_close(&it);
	free(roundtrip(s));
}

static void test_comment_with_nul(void **state)
{
	/* comments are never parsed, so a NUL in one is fine (fuzz find) */
	static const char s[] = "reset a\n# x\0y\nfrom :1\n#\0\n";
	struct items it;
	char *out;
	(void)state;
	items_open(&it, s, sizeof(s) - 1);
	expect_kind(&it, STREAM_RESET);
	assert_int_equal(it.c.from.mark, 1);
	expect_kind(&it, STREAM_COMMENT);
	assert_int_equal(it.c.text.len, 4);
	assert_memory_equal(it.c.text.ptr, " x\0y", 4);
	expect_kind(&it, STREAM_COMMENT);
	expect_end(&it);
	items_close(&it);
	out = roundtrip_n(s, sizeof(s) - 1);
	free(out);
}

static void test_data_not_pulled_is_skipped(void **state)
{
	static const char s[] = "blob\ndata 10\n0123456789\nblob\ndata <<E\nx\nE\nreset r\n";
	struct items it;
	(void)state;
	items_open(&it, s, sizeof(s) - 1);
	expect_kind(&it, STREAM_BLOB);
	expect_kind(&it, STREAM_BLOB);
	expect_kind(&it, STREAM_RESET);
	expect_end(&it);
	items_close(&it);
}

static void test_delimited_edge(void **state)
{
	/* delimiter as a prefix of a line is data; last line without LF ends */
	static const char s[] = "blob\ndata <<END\nEN\nENDING\nEND";
	struct items it;
	struct buf d = BUF_INIT(1024);
	(void)state;
	items_open(&it, s, sizeof(s) - 1);
	expect_kind(&it, STREAM_BLOB);
	assert_int_equal(pull_data(it.r, &d, &it.e), 0);
	assert_buf(&d, "EN\nENDING\n");
	expect_end(&it);
	items_close(&it);
	buf_release(&d);
}

static void test_offset(void **state)
{
	static const char s[] = "blob\ndata 3\nabc\nreset x\n";
	struct items it;
	(void)state;
	items_open(&it, s, sizeof(s) - 1);
	assert_int_equal(stream_reader_offset(it.r), 0);
	expect_kind(&it, STREAM_BLOB);
	assert_int_equal(stream_reader_offset(it.r), 12);
	expect_kind(&it, STREAM_RESET);
	assert_int_equal(stream_reader_offset(it.r), sizeof(s) - 1);
	items_close(&it);
}

/* ---- malformed input ---- */

static void test_err_truncated_data(void **state)
{
	char s[64];
	(void)state;
	memset(s, 'x', sizeof(s));
	memcpy(s, "blob\ndata 100\n", 14);
	expect_error_n(s, 14 + 42, 56, "expected 100 bytes of data, stream ended after 42");
}

static void test_err_truncated_message(void **state)
{
	(void)state;
	expect_error("commit refs/heads/m\n" CI "data 10\nabc", 57,
		     "expected 10 bytes of data, stream ended after 3");
}

static void test_err_bad_count(void **state)
{
	(void)state;
	expect_error("blob\ndata 12x\n", 5, "expected a decimal byte count after data, got \"data 12x\"");
	expect_error("blob\ndata -1\n", 5, "byte count");
	expect_error("blob\ndata \n", 5, "byte count");
	expect_error("blob\ndata 1 \nx\n", 5, "byte count");
}

static void test_err_wrong_count(void **state)
{
	/* one byte short: the rest of the payload is read as a command */
	(void)state;
	expect_error("blob\ndata 3\nabcd\n", 15, "expected a command (");
}

static void test_err_absurd_length(void **state)
{
	(void)state;
	expect_error("blob\ndata 70368744177665\n", 5, "at most 70368744177664");
	expect_error("blob\ndata 99999999999999999999999\n", 5, "byte count");
	expect_error("commit refs/heads/m\n" CI "data 1073741825\n", 46, "at most 1073741824");
}

static void test_err_bad_quoting(void **state)
{
	(void)state;
	expect_error(COMMIT_HEAD "M 100644 :1 \"abc\n", 53, "closing quote");
	expect_error(COMMIT_HEAD "D \"a\"b\n", 53, "end of the line after a quoted path");
	expect_error(COMMIT_HEAD "C \"a\"b c\n", 53, "space after the quoted source");
	expect_error(COMMIT_HEAD "R a\n", 53, "source path and a destination");
	expect_error(COMMIT_HEAD "D \"\\e\"\n", 53, "valid escape");
}

static void test_err_escape_x41(void **state)
{
	(void)state;
	expect_error(COMMIT_HEAD "D \"\\x41\"\n", 53, "valid escape");
}

static void test_err_escape_nul(void **state)
{
	(void)state;
	expect_error(COMMIT_HEAD "D \"a\\0\"\n", 53, "valid escape");
	expect_error(COMMIT_HEAD "D \"a\\000\"\n", 53, "without NUL");
	expect_error(COMMIT_HEAD "D \"\\400\"\n", 53, "valid escape");
	expect_error(COMMIT_HEAD "D \"\\38\"\n", 53, "valid escape");
}

static void test_err_nul_in_line(void **state)
{
	static const char s[] = COMMIT_HEAD "D a\0b\n";
	(void)state;
	expect_error_n(s, sizeof(s) - 1, 53, "without NUL");
	expect_error_n("reset a\0\n", 9, 0, "without NUL");
}

static void test_err_unknown_command(void **state)
{
	(void)state;
	expect_error("blob\ndata 0\nfrobnicate now\n", 12,
		     "expected a command (blob, commit, tag, reset, feature, option, "
		     "progress, checkpoint, done, alias, get-mark, cat-blob, ls or "
		     "#comment), got \"frobnicate now\"");
	expect_error("Blob\n", 0, "got \"Blob\"");
	expect_error("\n", 0, "got \"\"");
	expect_error("blob\ndata 0\n\n\n", 13, "expected a command");
	expect_error("commit\n", 0, "expected a command");
}

static void test_err_escaped_got(void **state)
{
	(void)state;
	expect_error("bad\t\"\\\x01\n", 0, "got \"bad\\t\\\"\\\\\\x01\"");
}

static void test_err_overlong_line(void **state)
{
	size_t n = STREAM_MAX_LINE + 10;
	char *s = xmalloc(n);
	(void)state;
	memcpy(s, "reset ", 6);
	memset(s + 6, 'a', n - 6);
	expect_error_n(s, n, 0, "at most 1048576 bytes");
	/* the quote in the message is cut */
	expect_error_n(s, n, 0, "aaaaa...\"");
	free(s);
}

static void test_err_missing_mark(void **state)
{
	(void)state;
	expect_error("blob\nmark\ndata 0\n", 5, "expected mark :<number >= 1>, got \"mark\"");
	expect_error("blob\nmark :0\ndata 0\n", 5, "got \"mark :0\"");
	expect_error("blob\nmark :abc\ndata 0\n", 5, "expected mark :");
	expect_error("blob\nmark 5\ndata 0\n", 5, "expected mark :");
	expect_error("blob\nmark :\ndata 0\n", 5, "expected mark :");
	expect_error("blob\nmark :1x\ndata 0\n", 5, "expected mark :");
	expect_error("blob\nmark :99999999999999999999\ndata 0\n", 5, "expected mark :");
	expect_error("get-mark 4\n", 0, "expected get-mark :");
	expect_error(COMMIT_HEAD "from :0\n", 53, "mark reference");
	expect_error(COMMIT_HEAD "M 100644 :x a\n", 53, "mark reference");
}

static void test_err_eof_mid_commit(void **state)
{
	(void)state;
	expect_error("commit refs/heads/m\n", 20, "stream ended");
	expect_error("commit refs/heads/m\nmark :1\n", 28, "stream ended");
	expect_error("commit refs/heads/m\n" CI, 46, "stream ended");
	expect_error("commit refs/heads/m\n" CI "data 5\nab", 55, "stream ended after 2");
}

static void test_err_missing_committer(void **state)
{
	(void)state;
	expect_error("commit refs/heads/m\nauthor A <a> 1 +0000\ndata 0\n", 41,
		     "expected committer");
	expect_error("commit refs/heads/m\n" CI "from :1\n", 46, "expected data");
}

static void test_err_eof_mid_tag_blob_alias(void **state)
{
	(void)state;
	expect_error("tag v\nfrom :1\n", 14, "stream ended");
	expect_error("tag v\ndata 0\n", 6, "expected from");
	expect_error("blob\n", 5, "stream ended");
	expect_error("blob\nmark :1\n", 13, "stream ended");
	expect_error("alias\nmark :1\n", 14, "stream ended");
	expect_error("alias\nto :1\n", 6, "expected mark");
	expect_error("alias\nmark :1\nfrom :1\n", 14, "expected to");
}

static void test_err_bad_mode(void **state)
{
	(void)state;
	expect_error(COMMIT_HEAD "M 100664 :1 a\n", 53, "expected a mode");
	expect_error(COMMIT_HEAD "M 9 :1 a\n", 53, "expected a mode");
	expect_error(COMMIT_HEAD "M abc :1 a\n", 53, "expected a mode");
	expect_error(COMMIT_HEAD "M 00000000000100644 :1 a\n", 53, "expected a mode");
	expect_error(COMMIT_HEAD "M 100644\n", 53, "expected a mode");
	expect_error(COMMIT_HEAD "M 100644 :1\n", 53, "expected M <mode> <dataref> <path>");
}

static void test_err_bad_dataref(void **state)
{
	(void)state;
	expect_error(COMMIT_HEAD "M 100644 xyz a\n", 53, "expected a dataref");
	expect_error(COMMIT_HEAD "M 100644 0123 a\n", 53, "expected a dataref");
	expect_error(COMMIT_HEAD "M 160000 inline a\n", 53, "not inline");
	expect_error(COMMIT_HEAD "M 040000 inline a\n", 53, "not inline");
	expect_error("cat-blob inline\n", 0, "expected a dataref");
	expect_error("ls \"a\"\n", 0, "outside a commit");
	expect_error("ls a\n", 0, "expected ls");
	expect_error(COMMIT_HEAD "N :1\n", 53, "expected N");
	expect_error(COMMIT_HEAD "N :1 \n", 53, "commit-ish");
}

static void test_err_inline_without_data(void **state)
{
	(void)state;
	expect_error(COMMIT_HEAD "M 100644 inline a\nD b\n", 71, "expected data <count>");
	expect_error(COMMIT_HEAD "M 100644 inline a\n", 71, "stream ended");
}

static void test_err_unterminated_delim(void **state)
{
	(void)state;
	expect_error("blob\ndata <<EOF\nabc\nEO\n", 23, "expected a line \"EOF\" ending the data");
	expect_error("commit refs/heads/m\n" CI "data <<EOF\nabc", 60, "\"EOF\"");
	expect_error("blob\ndata <<EOF\n", 16, "\"EOF\"");
}

static void test_err_empty_names(void **state)
{
	(void)state;
	expect_error("commit \n", 0, "ref name");
	expect_error("tag \n", 0, "tag name");
	expect_error("reset \n", 0, "ref name");
	expect_error("reset a\nfrom \n", 8, "commit-ish");
}

static void test_err_too_many_merges(void **state)
{
	size_t i, n = 0, cap = 53 + 65537 * 9 + 1;
	char *s = xmalloc(cap);
	(void)state;
	n += (size_t)sprintf(s, COMMIT_HEAD);
	for (i = 0; i < 65537; i++)
		n += (size_t)sprintf(s + n, "merge :1\n");
	expect_error_n(s, n, 53 + 65536 * 9, "expected at most 65536 merge lines");
	free(s);
}

static void test_err_read_failure(void **state)
{
	/* reading a directory fails with EISDIR: an I/O error, not a parse one */
	int fd = open("/", O_RDONLY | O_DIRECTORY);
	struct stream_reader *r;
	struct stream_cmd c;
	struct err e = ERR_INIT;
	(void)state;
	assert_true(fd >= 0);
	r = stream_reader_new_fd(fd, "dir");
	stream_cmd_init(&c);
	assert_int_equal(stream_reader_next(r, &c, &e), -1);
	assert_int_equal(e.kind, ERR_IO);
	assert_non_null(strstr(e.msg, "byte offset 0"));
	stream_cmd_release(&c);
	stream_reader_free(r);
	close(fd);
}

/* ---- fd reading ---- */

/* A child process writes n bytes of s to a pipe, step bytes per write. */
static int feed_pipe(const char *s, size_t n, size_t step, pid_t *pid)
{
	int fds[2];

	assert_int_equal(pipe(fds), 0);
	*pid = fork();
	assert_true(*pid >= 0);
	if (*pid == 0) {
		size_t off = 0;
		close(fds[0]);
		while (off < n) {
			size_t k = n - off < step ? n - off : step;
			ssize_t w = write(fds[1], s + off, k);
			if (w <= 0)
				_exit(1);
			off += (size_t)w;
		}
		_exit(0);
	}
	close(fds[1]);
	return fds[0];
}

static void reap(pid_t pid)
{
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* ---- look-ahead ---- */

#define H1 "1111111111111111111111111111111111111111"
#define H2 "2222222222222222222222222222222222222222"
#define H3 "3333333333333333333333333333333333333333"

/* The M lines of a stream with ids, named by id, in data and not. */
static const char ahead_stream[] =
	"commit refs/heads/m\nmark :1\n" CI "data 61\n"
	"M 100644 " H2 " in-message\n"		/* the message */
	"M 100644 " H1 " a.bin\n"
	"M 100644 :1 marked.bin\n"
	"M 100644 inline in.bin\ndata 62\nM 100644 " H2 " in-data.bin\n\n"
	"M 100755 " H3 " \"q\\303\\251 x.bin\"\n"
	"D gone\n\n"
	"commit refs/notes/n\n" CI "data 0\n"
	"M 644 " H2 " n.bin\n\n";

/* Takes every look-ahead line of r into out ("ref|mode|id|path|off;"). */
static int take_ahead(struct stream_reader *r, struct buf *out)
{
	struct stream_cmd c;
	uint64_t off;
	int n = 0;

	stream_cmd_init(&c);
	while (stream_reader_ahead(r, (size_t)8 << 20, &c, &off) > 0) {
		assert_int_equal(c.kind, STREAM_MODIFY);
		assert_int_equal(c.dataref.kind, STREAM_REF_OID);
		buf_printf(out, "%s|%o|%.4s|%s|%llu;", c.ref.ptr, (unsigned)c.mode,
			   c.dataref.name.ptr, c.path.ptr, (unsigned long long)off);
		n++;
	}
	stream_cmd_release(&c);
	return n;
}

static void test_ahead_lines(void **state)
{
	struct buf got = BUF_INIT(SIZE_MAX / 2), d1 = BUF_INIT(SIZE_MAX / 2),
		   d2 = BUF_INIT(SIZE_MAX / 2);
	struct err e = ERR_INIT;
	struct stream_reader *r;
	char want[512];
	const char *a = strstr(ahead_stream, "M 100644 " H1),
		   *q = strstr(ahead_stream, "M 100755"),
		   *n = strstr(ahead_stream, "M 644");
	(void)state;
	snprintf(want, sizeof(want),
		 "refs/heads/m|100644|1111|a.bin|%zu;"
		 "refs/heads/m|100755|3333|q\303\251 x.bin|%zu;"
		 "refs/notes/n|644|2222|n.bin|%zu;",
		 (size_t)(a - ahead_stream), (size_t)(q - ahead_stream),
		 (size_t)(n - ahead_stream));
	/* ids in a message or in data are no M lines; marks and inline are
	 * not ids */
	r = stream_reader_new_mem(ahead_stream, sizeof(ahead_stream) - 1, "m");
	assert_int_equal(take_ahead(r, &got), 3);
	assert_string_equal(got.ptr, want);
	/* it changes nothing the parse sees */
	assert_int_equal(parse_all(r, &d1, NULL, &e), 0);
	stream_reader_free(r);
	r = stream_reader_new_mem(ahead_stream, sizeof(ahead_stream) - 1, "m");
	assert_int_equal(parse_all(r, &d2, NULL, &e), 0);
	assert_string_equal(d1.ptr, d2.ptr);
	assert_int_equal(take_ahead(r, &got), 0);	/* at the end: none */
	stream_reader_free(r);
	buf_release(&got);
	buf_release(&d1);
	buf_release(&d2);
}

/* The parse passed the look-ahead: it goes on from the parse, and names
 * no commit until it sees the next one's line. */
static void test_ahead_behind(void **state)
{
	struct buf got = BUF_INIT(SIZE_MAX / 2);
	struct stream_cmd c;
	struct err e = ERR_INIT;
	struct stream_reader *r =
		stream_reader_new_mem(ahead_stream, sizeof(ahead_stream) - 1, "m");
	(void)state;
	stream_cmd_init(&c);
	assert_int_equal(stream_reader_next(r, &c, &e), 1);	/* commit */
	assert_int_equal(stream_reader_next(r, &c, &e), 1);	/* M ... a.bin */
	assert_int_equal(take_ahead(r, &got), 2);
	assert_non_null(strstr(got.ptr, "|100755|3333|q\303\251 x.bin|"));
	assert_ptr_equal(got.ptr, strstr(got.ptr, "|100755"));	/* no ref */
	assert_non_null(strstr(got.ptr, ";refs/notes/n|644|2222|n.bin|"));
	/* pending inline data: not looked at until the parse is past it */
	stream_reader_free(r);
	r = stream_reader_new_mem(ahead_stream, sizeof(ahead_stream) - 1, "m");
	while (stream_reader_next(r, &c, &e) > 0 && !c.has_data)
		;
	assert_int_equal(c.kind, STREAM_MODIFY);
	buf_reset(&got);
	assert_int_equal(take_ahead(r, &got), 0);
	assert_int_equal(stream_reader_next(r, &c, &e), 1);	/* M ... q x.bin */
	assert_int_equal(take_ahead(r, &got), 1);
	assert_ptr_equal(got.ptr, strstr(got.ptr, "refs/notes/n|644|2222|n.bin|"));
	stream_cmd_release(&c);
	stream_reader_free(r);
	buf_release(&got);
}

/* A stream with blob data: the look-ahead gives up at the first blob. */
static void test_ahead_stops_at_blob(void **state)
{
	static const char s[] = "blob\nmark :1\ndata 1\nx\n"
				"commit refs/heads/m\n" CI "data 0\n"
				"M 100644 " H1 " a.bin\n\n";
	struct buf got = BUF_INIT(SIZE_MAX / 2);
	struct stream_reader *r = stream_reader_new_mem(s, sizeof(s) - 1, "m");
	(void)state;
	assert_int_equal(take_ahead(r, &got), 0);
	stream_reader_free(r);
	buf_release(&got);
}

/* Through a pipe, more than the reader's buffer: the look-ahead reads
 * what is there without waiting, its buffer grows, and the parse sees
 * what it sees without it. */
static void test_ahead_fd(void **state)
{
	struct buf s = BUF_INIT(SIZE_MAX / 2), got = BUF_INIT(SIZE_MAX / 2),
		   d1 = BUF_INIT(SIZE_MAX / 2), d2 = BUF_INIT(SIZE_MAX / 2);
	struct err e = ERR_INIT;
	struct stream_reader *r;
	int i, n = 0, tries;
	pid_t pid;
	int fd;
	(void)state;
	for (i = 0; i < 20000; i++)
		buf_printf(&s, "commit refs/heads/b%d\n" CI "data 5\nhello"
			   "M 100644 " H1 " dir/file-%d.bin\n\n", i % 7, i);
	r = stream_reader_new_mem(s.ptr, s.len, "m");
	assert_int_equal(parse_all(r, &d1, NULL, &e), 0);
	stream_reader_free(r);
	fd = feed_pipe(s.ptr, s.len, 65536, &pid);
	r = stream_reader_new_fd(fd, "p");
	for (tries = 0; n < 20000 && tries < 10000; tries++) {
		n += take_ahead(r, &got);
		if (n < 20000)
			usleep(1000);
	}
	assert_int_equal(n, 20000);
	assert_non_null(strstr(got.ptr, "refs/heads/b0|100644|1111|dir/file-19999.bin|"));
	assert_int_equal(parse_all(r, &d2, NULL, &e), 0);
	assert_string_equal(d1.ptr, d2.ptr);
	stream_reader_free(r);
	close(fd);
	reap(pid);
	buf_release(&s);
	buf_release(&got);
	buf_release(&d1);
	buf_release(&d2);
}

static void test_fd_byte_by_byte(void **state)
{
	/* lines and data split at every possible place */
	static const char s[] = "feature done\n# c\nblob\nmark :1\ndata 5\nhello\n"
				"commit refs/heads/m\nmark :2\n" CI "data <<E\nmsg\nE\n"
				"M 100644 :1 \"a b\"\nM 100644 inline c\ndata 2\nxy\n\n"
				"tag t\nfrom :2\ndata 1\nx\ndone\n";
	struct buf d1 = BUF_INIT(SIZE_MAX / 2), d2 = BUF_INIT(SIZE_MAX / 2);
	struct err e = ERR_INIT;
	struct stream_reader *r = stream_reader_new_mem(s, sizeof(s) - 1, "m");
	pid_t pid;
	int fd;
	(void)state;
	assert_int_equal(parse_all(r, &d1, NULL, &e), 0);
	stream_reader_free(r);
	fd = feed_pipe(s, sizeof(s) - 1, 1, &pid);
	r = stream_reader_new_fd(fd, "p");
	assert_int_equal(parse_all(r, &d2, NULL, &e), 0);
	stream_reader_free(r);
	close(fd);
	reap(pid);
	assert_int_equal(d1.len, d2.len);
	assert_memory_equal(d1.ptr, d2.ptr, d1.len);
	buf_release(&d1);
	buf_release(&d2);
}

static void test_fd_delimited_large(void **state)
{
	/* 3 MiB of delimited data in lines of varying length, through a pipe:
	 * the delimiter check must work across buffer refills */
	size_t cap = (size_t)4 << 20, n = 0, i;
	char *s = xmalloc(cap);
	struct buf d = BUF_INIT(SIZE_MAX / 2);
	struct stream_reader *r;
	struct stream_cmd c;
	struct err e = ERR_INIT;
	size_t want = 0;
	pid_t pid;
	int fd;
	(void)state;
	n += (size_t)sprintf(s + n, "blob\ndata <<DELIMITER\n");
	for (i = 0; n < ((size_t)3 << 20); i++) {
		size_t len = (i * 7919) % 3000;
		memset(s + n, 'D', len);	/* 'D...' lines look like the delimiter */
		n += len;
		s[n++] = '\n';
		want += len + 1;
	}
	n += (size_t)sprintf(s + n, "DELIMITER\nreset r\n");
	fd = feed_pipe(s, n, 65536, &pid);
	r = stream_reader_new_fd(fd, "p");
	stream_cmd_init(&c);
	assert_int_equal(stream_reader_next(r, &c, &e), 1);
	assert_int_equal(c.kind, STREAM_BLOB);
	assert_int_equal(pull_data(r, &d, &e), 0);
	assert_int_equal(d.len, want);
	assert_memory_equal(d.ptr, s + 22, want);
	assert_int_equal(stream_reader_next(r, &c, &e), 1);
	assert_int_equal(c.kind, STREAM_RESET);
	assert_int_equal(stream_reader_next(r, &c, &e), 0);
	stream_cmd_release(&c);
	stream_reader_free(r);
	close(fd);
	reap(pid);
	buf_release(&d);
	free(s);
}

static void test_fd_64mib_blob_chunks(void **state)
{
	/* the blob is never held whole: every chunk fits the reader's buffer */
	const uint64_t size = (uint64_t)64 << 20;
	struct stream_reader *r;
	struct stream_cmd c;
	struct err e = ERR_INIT;
	uint64_t total = 0, chunks = 0;
	size_t biggest = 0;
	const char *p;
	size_t n, i;
	int fds[2], rc;
	pid_t pid;
	(void)state;
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		static char block[65536];
		uint64_t off = 0;
		FILE *f;
		close(fds[0]);
		f = fdopen(fds[1], "w");
		fprintf(f, "blob\nmark :1\ndata %llu\n", (unsigned long long)size);
		while (off < size) {
			for (i = 0; i < sizeof(block); i++)
				block[i] = (char)((off + i) % 251);
			fwrite(block, 1, sizeof(block), f);
			off += sizeof(block);
		}
		fputs("\ndone\n", f);
		fclose(f);
		_exit(0);
	}
	close(fds[1]);
	r = stream_reader_new_fd(fds[0], "pipe");
	stream_cmd_init(&c);
	assert_int_equal(stream_reader_next(r, &c, &e), 1);
	assert_int_equal(c.kind, STREAM_BLOB);
	assert_true(c.data_len == size);
	while ((rc = stream_reader_data(r, &p, &n, &e)) > 0) {
		assert_true(n > 0 && n <= READER_BUF_BOUND);
		if (n > biggest)
			biggest = n;
		/* spot-check the content at both ends of the chunk */
		assert_int_equal((unsigned char)p[0], (total) % 251);
		assert_int_equal((unsigned char)p[n - 1], (total + n - 1) % 251);
		total += n;
		chunks++;
	}
	assert_int_equal(rc, 0);
	assert_true(total == size);
	assert_true(chunks >= size / READER_BUF_BOUND);
	assert_int_equal(stream_reader_next(r, &c, &e), 1);
	assert_int_equal(c.kind, STREAM_DONE);
	assert_int_equal(stream_reader_next(r, &c, &e), 0);
	stream_cmd_release(&c);
	stream_reader_free(r);
	close(fds[0]);
	reap(pid);
}

/* ---- writer ---- */

static void test_writer_fd_and_large_chunks(void **state)
{
	/* data larger than the writer's buffer goes straight through */
	size_t big = (size_t)3 << 20, i;
	char *data = xmalloc(big), *back;
	struct stream_writer *w;
	struct stream_cmd c;
	struct err e = ERR_INIT;
	char tmpl[] = "/tmp/test_stream_XXXXXX";
	int fd = mkstemp(tmpl);
	FILE *f;
	long len;
	(void)state;
	assert_true(fd >= 0);
	unlink(tmpl);
	for (i = 0; i < big; i++)
		data[i] = (char)(i * 31);
	stream_cmd_init(&c);
	c.kind = STREAM_BLOB;
	c.mark = 1;
	w = stream_writer_new_fd(fd, "tmp");
	assert_int_equal(stream_write_raw(w, "feature done\n", 13, &e), 0);
	assert_int_equal(stream_write_data_begin(w, &c, big + 10, &e), 0);
	assert_int_equal(stream_write_bytes(w, "0123456789", 10, &e), 0);
	assert_int_equal(stream_write_bytes(w, data, big, &e), 0);
	assert_int_equal(stream_write_data_end(w, &e), 0);
	assert_int_equal(stream_writer_flush(w, &e), 0);
	stream_writer_free(w);
	f = fdopen(fd, "r");
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	assert_int_equal(len, 13 + 26 + big + 10 + 1);
	back = xmalloc((size_t)len);
	fseek(f, 0, SEEK_SET);
	assert_int_equal(fread(back, 1, (size_t)len, f), (size_t)len);
	assert_memory_equal(back, "feature done\nblob\nmark :1\ndata 3145738\n0123456789", 49);
	assert_memory_equal(back + 49, data, big);
	assert_int_equal(back[len - 1], '\n');
	fclose(f);
	free(back);
	free(data);
	stream_cmd_release(&c);
}

static void test_writer_epipe(void **state)
{
	int fds[2];
	struct stream_writer *w;
	struct err e = ERR_INIT;
	char *big = xcalloc(1, (size_t)2 << 20);
	void (*old)(int) = signal(SIGPIPE, SIG_IGN);
	(void)state;
	assert_int_equal(pipe(fds), 0);
	close(fds[0]);
	w = stream_writer_new_fd(fds[1], "closed-pipe");
	assert_int_equal(stream_write_raw(w, "x", 1, &e), 0);	/* buffered */
	assert_int_equal(stream_write_raw(w, big, (size_t)2 << 20, &e), -1);
	assert_int_equal(e.kind, ERR_IO);
	assert_non_null(strstr(e.msg, "closed-pipe"));
	/* the error sticks */
	assert_int_equal(stream_writer_flush(w, &e), -1);
	stream_writer_free(w);
	close(fds[1]);
	signal(SIGPIPE, old);
	free(big);
}

/* The bytes of a file (its first cap), and how many. */
static size_t file_bytes(FILE *f, char *dst, size_t cap)
{
	struct stat st;
	size_t n;

	assert_int_equal(fstat(fileno(f), &st), 0);
	n = (size_t)st.st_size < cap ? (size_t)st.st_size : cap;
	assert_int_equal(pread(fileno(f), dst, n, 0), (ssize_t)n);
	return n;
}

static void test_writer_hold_release(void **state)
{
	FILE *f = tmpfile();
	struct stream_writer *w;
	struct err e = ERR_INIT;
	char got[256] = { 0 };
	uint64_t p1, p2;
	(void)state;
	assert_non_null(f);
	w = stream_writer_new_fd(fileno(f), "held");
	assert_int_equal(stream_write_raw(w, "one\n", 4, &e), 0);
	/* what the buffer has is held too */
	assert_int_equal(stream_writer_hold(w), 0);
	p1 = stream_writer_pos(w);
	assert_int_equal(p1, 4);
	assert_int_equal(stream_writer_flush(w, &e), 0);
	assert_int_equal(file_bytes(f, got, sizeof(got)), 0);
	/* everything given is out: holding stops, until held again */
	assert_int_equal(stream_writer_release(w, p1, &e), 0);
	assert_int_equal(file_bytes(f, got, sizeof(got)), 4);
	assert_int_equal(stream_writer_held(w), 0);
	assert_int_equal(stream_writer_hold(w), 0);
	assert_int_equal(stream_write_raw(w, "two\n", 4, &e), 0);
	p2 = stream_writer_pos(w);
	assert_int_equal(stream_write_raw(w, "three\n", 6, &e), 0);
	/* a flush does not let held bytes go */
	assert_int_equal(stream_writer_flush(w, &e), 0);
	assert_int_equal(file_bytes(f, got, sizeof(got)), 4);
	assert_int_equal(stream_writer_held(w), 10);
	/* up to p1: nothing new; up to p2: "two" */
	assert_int_equal(stream_writer_release(w, p1, &e), 0);
	assert_int_equal(file_bytes(f, got, sizeof(got)), 4);
	assert_int_equal(stream_writer_release(w, p2, &e), 0);
	assert_int_equal(file_bytes(f, got, sizeof(got)), 8);
	assert_memory_equal(got, "one\ntwo\n", 8);
	assert_int_equal(stream_writer_held(w), 6);
	/* everything: holding stops, later bytes go through the buffer */
	assert_int_equal(stream_writer_release(w, stream_writer_pos(w), &e), 0);
	assert_int_equal(stream_writer_held(w), 0);
	assert_int_equal(stream_write_raw(w, "four\n", 5, &e), 0);
	assert_int_equal(stream_writer_flush(w, &e), 0);
	assert_int_equal(file_bytes(f, got, sizeof(got)), 19);
	assert_memory_equal(got, "one\ntwo\nthree\nfour\n", 19);
	/* a memory writer ignores holding */
	stream_writer_free(w);
	w = stream_writer_new_mem();
	assert_int_equal(stream_writer_hold(w), 0);
	assert_int_equal(stream_write_raw(w, "x", 1, &e), 0);
	assert_int_equal(stream_writer_mem(w)->len, 1);
	assert_int_equal(stream_writer_held(w), 0);
	stream_writer_free(w);
	fclose(f);
}

static void test_writer_data_count_checked(void **state)
{
	struct stream_writer *w = stream_writer_new_mem();
	struct stream_cmd c;
	struct err e = ERR_INIT;
	(void)state;
	stream_cmd_init(&c);
	c.kind = STREAM_BLOB;
	assert_int_equal(stream_write_data_begin(w, &c, 3, &e), 0);
	assert_int_equal(stream_write_bytes(w, "abcd", 4, &e), -1);
	assert_int_equal(stream_write_bytes(w, "ab", 2, &e), 0);
	assert_int_equal(stream_write_data_end(w, &e), -1);
	assert_int_equal(stream_write_bytes(w, "c", 1, &e), 0);
	assert_int_equal(stream_write_data_end(w, &e), 0);
	assert_string_equal(stream_writer_mem(w)->ptr, "blob\ndata 3\nabc\n");
	/* an item with data cannot go through stream_write_cmd */
	assert_int_equal(stream_write_cmd(w, &c, &e), -1);
	stream_cmd_release(&c);
	stream_writer_free(w);
}

static void test_writer_built_items(void **state)
{
	/* what rewrite builds by hand: a commit with an empty-name ident */
	struct stream_writer *w = stream_writer_new_mem();
	struct stream_cmd c;
	struct err e = ERR_INIT;
	(void)state;
	stream_cmd_init(&c);
	c.kind = STREAM_COMMIT;
	buf_adds(&c.ref, "refs/heads/x");
	buf_adds(&c.committer, "<x@x> 1 +0000");
	buf_adds(&c.message, "m");
	c.from.kind = STREAM_REF_OID;
	buf_adds(&c.from.name, "0123456789abcdef0123456789abcdef01234567");
	assert_int_equal(stream_write_cmd(w, &c, &e), 0);
	c.kind = STREAM_MODIFY;
	c.mode = 0100644;
	c.dataref.kind = STREAM_REF_INLINE;
	buf_adds(&c.path, "x y");
	assert_int_equal(stream_write_data_begin(w, &c, 1, &e), 0);
	assert_int_equal(stream_write_bytes(w, "z", 1, &e), 0);
	assert_int_equal(stream_write_data_end(w, &e), 0);
	c.kind = STREAM_COMMIT_END;
	assert_int_equal(stream_write_cmd(w, &c, &e), 0);
	assert_string_equal(stream_writer_mem(w)->ptr,
			    "commit refs/heads/x\ncommitter <x@x> 1 +0000\ndata 1\nm"
			    "from 0123456789abcdef0123456789abcdef01234567\n"
			    "M 100644 inline \"x y\"\ndata 1\nz\n\n");
	stream_cmd_release(&c);
	stream_writer_free(w);
}

/* fastimport.c against what git 2.39's fast-import decides (the cases of
 * tests/integration/hostile.sh check the same against the real thing). */
static void test_fastimport_checks(void **state)
{
	static const char *const ok_refs[] = {
		"refs/heads/main", "main", "refs/heads/a.b", "refs/tags/v1@2",
		"refs/heads/\xc3\xa9", NULL
	};
	static const char *const bad_refs[] = {
		"refs/heads/main\r", "refs/heads/a..b", "refs/heads/.x", "@",
		"refs/heads/x.lock", "refs/heads/a b", "refs//x", "refs/x/",
		"refs/x.", "a@{b", "refs/*", "refs/a:b", "", "refs/a\x7f", NULL
	};
	const char *why;
	size_t i, at;

	(void)state;
	for (i = 0; ok_refs[i]; i++)
		assert_int_equal(stream_refname_ok(ok_refs[i], strlen(ok_refs[i])), 1);
	for (i = 0; bad_refs[i]; i++)
		assert_int_equal(stream_refname_ok(bad_refs[i], strlen(bad_refs[i])), 0);

	assert_int_equal(stream_ident_split("A <a> 1 +0000", 13, &at, &why), 0);
	assert_int_equal(at, 6);
	assert_int_equal(stream_ident_split("<a> 1 +0000", 11, &at, &why), 0);
	assert_int_equal(stream_ident_split("A<a> 1 +0000", 12, &at, &why), -1);
	assert_int_equal(stream_ident_split("A <a 1 +0000", 12, &at, &why), -1);
	assert_int_equal(stream_ident_split("A a> 1", 6, &at, &why), -1);
	assert_int_equal(stream_ident_split("A <a>1", 6, &at, &why), -1);

	assert_int_equal(stream_raw_date_ok("1 +0000", 7, 1), 1);
	assert_int_equal(stream_raw_date_ok("1 -1400", 7, 1), 1);
	assert_int_equal(stream_raw_date_ok("1 +1401", 7, 1), 0);
	assert_int_equal(stream_raw_date_ok("1 +1401", 7, 0), 1);
	assert_int_equal(stream_raw_date_ok("1 +9999", 7, 1), 0);
	assert_int_equal(stream_raw_date_ok("1 +0000\r", 8, 1), 0);
	assert_int_equal(stream_raw_date_ok("1 +0000 ", 8, 0), 0);
	assert_int_equal(stream_raw_date_ok("1 0000", 6, 0), 0);
	assert_int_equal(stream_raw_date_ok("x +0000", 7, 0), 0);
	assert_int_equal(stream_raw_date_ok("1", 1, 0), 0);
	/* strtoul's leniency, as fast-import has it */
	assert_int_equal(stream_raw_date_ok(" +1 +0000", 9, 1), 1);
	assert_int_equal(stream_raw_date_ok("1 + 100", 7, 1), 1);
	assert_int_equal(stream_raw_date_ok("1 +-1", 5, 1), 0);	/* huge */
	assert_int_equal(stream_raw_date_ok("1 +-1", 5, 0), 1);
	assert_int_equal(stream_raw_date_ok("99999999999999999999 +0000", 26, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_blob),
		cmocka_unit_test(test_blob_binary_and_hash_lines),
		cmocka_unit_test(test_commit_full),
		cmocka_unit_test(test_commit_items),
		cmocka_unit_test(test_commit_message_no_lf),
		cmocka_unit_test(test_commit_delimited),
		cmocka_unit_test(test_commit_delimited_empty),
		cmocka_unit_test(test_commit_eof_after_message),
		cmocka_unit_test(test_commit_ended_by_command),
		cmocka_unit_test(test_modify_forms),
		cmocka_unit_test(test_modify_inline),
		cmocka_unit_test(test_notemodify),
		cmocka_unit_test(test_quoted_paths),
		cmocka_unit_test(test_quote_path_rules),
		cmocka_unit_test(test_quote_path_too_long),
		cmocka_unit_test(test_show_path),
		cmocka_unit_test(test_tag),
		cmocka_unit_test(test_tag_fields),
		cmocka_unit_test(test_reset),
		cmocka_unit_test(test_feature_option),
		cmocka_unit_test(test_progress),
		cmocka_unit_test(test_checkpoint),
		cmocka_unit_test(test_done),
		cmocka_unit_test(test_alias),
		cmocka_unit_test(test_queries),
		cmocka_unit_test(test_queries_in_commit),
		cmocka_unit_test(test_comments),
		cmocka_unit_test(test_comment_with_nul),
		cmocka_unit_test(test_data_not_pulled_is_skipped),
		cmocka_unit_test(test_delimited_edge),
		cmocka_unit_test(test_offset),
		cmocka_unit_test(test_err_truncated_data),
		cmocka_unit_test(test_err_truncated_message),
		cmocka_unit_test(test_err_bad_count),
		cmocka_unit_test(test_err_wrong_count),
		cmocka_unit_test(test_err_absurd_length),
		cmocka_unit_test(test_err_bad_quoting),
		cmocka_unit_test(test_err_escape_x41),
		cmocka_unit_test(test_err_escape_nul),
		cmocka_unit_test(test_err_nul_in_line),
		cmocka_unit_test(test_err_unknown_command),
		cmocka_unit_test(test_err_escaped_got),
		cmocka_unit_test(test_err_overlong_line),
		cmocka_unit_test(test_err_missing_mark),
		cmocka_unit_test(test_err_eof_mid_commit),
		cmocka_unit_test(test_err_missing_committer),
		cmocka_unit_test(test_err_eof_mid_tag_blob_alias),
		cmocka_unit_test(test_err_bad_mode),
		cmocka_unit_test(test_err_bad_dataref),
		cmocka_unit_test(test_err_inline_without_data),
		cmocka_unit_test(test_err_unterminated_delim),
		cmocka_unit_test(test_err_empty_names),
		cmocka_unit_test(test_err_too_many_merges),
		cmocka_unit_test(test_err_read_failure),
		cmocka_unit_test(test_fd_byte_by_byte),
		cmocka_unit_test(test_fd_delimited_large),
		cmocka_unit_test(test_fd_64mib_blob_chunks),
		cmocka_unit_test(test_ahead_lines),
		cmocka_unit_test(test_ahead_behind),
		cmocka_unit_test(test_ahead_stops_at_blob),
		cmocka_unit_test(test_ahead_fd),
		cmocka_unit_test(test_writer_fd_and_large_chunks),
		cmocka_unit_test(test_writer_epipe),
		cmocka_unit_test(test_writer_data_count_checked),
		cmocka_unit_test(test_writer_hold_release),
		cmocka_unit_test(test_writer_built_items),
		cmocka_unit_test(test_fastimport_checks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
