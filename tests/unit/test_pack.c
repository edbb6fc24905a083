/*
 * test_pack.c - the native object reader's formats (rewrite/git/pack.c):
 * a hand-built .idx version 2 with the 64-bit offset table, pack entry
 * headers, the delta decoder, and a hand-built pack read whole (a blob,
 * an OFS_DELTA and a REF_DELTA on it) with its corruptions; and the
 * writer of one-blob packs (packw.c), read back.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "rewrite/git/git.h"

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static void put64(unsigned char *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

struct idx_obj {
	struct oid id;
	uint64_t off;
};

static int by_id(const void *a, const void *b)
{
	return memcmp(((const struct idx_obj *)a)->id.hash,
		      ((const struct idx_obj *)b)->id.hash, OID_RAW);
}

/* An .idx v2 for objs (sorted here): offsets from 2^31 on go to the
 * 64-bit table, as git writes them. Returns its length; *out malloc'd. */
static size_t build_idx(struct idx_obj *objs, size_t n, unsigned char **out)
{
	size_t nlarge = 0, i, len;
	unsigned char *p, *fan, *ids, *off32, *off64;
	uint32_t count;

	qsort(objs, n, sizeof(*objs), by_id);
	for (i = 0; i < n; i++)
		nlarge += objs[i].off >= 0x80000000u;
	len = 8 + 1024 + n * (OID_RAW + 8) + nlarge * 8 + 40;
	p = calloc(1, len);
	memcpy(p, "\377tOc", 4);
	put32(p + 4, 2);
	fan = p + 8;
	ids = fan + 1024;
	off32 = ids + n * (OID_RAW + 4);
	off64 = off32 + n * 4;
	for (i = 0, nlarge = 0; i < n; i++) {
		memcpy(ids + i * OID_RAW, objs[i].id.hash, OID_RAW);
		if (objs[i].off >= 0x80000000u) {
			put32(off32 + 4 * i, 0x80000000u | (uint32_t)nlarge);
			put64(off64 + 8 * nlarge++, objs[i].off);
		} else {
			put32(off32 + 4 * i, (uint32_t)objs[i].off);
		}
	}
	for (i = 0; i < 256; i++) {
		size_t k;

		for (count = 0, k = 0; k < n; k++)
			count += objs[k].id.hash[0] <= i;
		put32(fan + 4 * i, count);
	}
	*out = p;
	return len;
}

static void test_idx_large_offsets(void **state)
{
	struct idx_obj objs[3];
	struct err e = ERR_INIT;
	unsigned char *idx;
	uint64_t off;
	uint32_t n, pos;
	size_t len;

	(void)state;
	memset(objs, 0, sizeof(objs));
	objs[0].id.hash[0] = 0x10;
	objs[0].off = 12;
	objs[1].id.hash[0] = 0x80;
	objs[1].off = 0x123456789ull;	/* past 4 GiB */
	objs[2].id.hash[0] = 0xff;
	objs[2].off = 0x80000000ull;	/* the first offset git puts there */
	len = build_idx(objs, 3, &idx);
	assert_int_equal(pack_idx_parse(idx, len, &n, &e), 0);
	assert_int_equal(n, 3);
	assert_int_equal(pack_idx_offset(idx, len, n, 0, &off, &e), 0);
	assert_int_equal(off, 12);
	assert_int_equal(pack_idx_offset(idx, len, n, 1, &off, &e), 0);
	assert_true(off == 0x123456789ull);
	assert_int_equal(pack_idx_offset(idx, len, n, 2, &off, &e), 0);
	assert_true(off == 0x80000000ull);

	/* an index into the 64-bit table past its end */
	pos = 1;
	put32(idx + 8 + 1024 + 3 * (OID_RAW + 4) + 4 * pos, 0x80000000u | 7);
	assert_int_equal(pack_idx_offset(idx, len, n, 1, &off, &e), -1);
	assert_non_null(strstr(e.msg, "large offset 7"));

	/* a fan-out table that decreases */
	put32(idx + 8 + 4 * 0x20, 0);
	assert_int_equal(pack_idx_parse(idx, len, &n, &e), -1);
	assert_int_equal(e.kind, ERR_IO);
	put32(idx + 8 + 4 * 0x20, 1);

	/* a table longer than the file */
	assert_int_equal(pack_idx_parse(idx, len - 4, &n, &e), -1);
	assert_int_equal(e.kind, ERR_IO);
	assert_int_equal(pack_idx_parse(idx, 8 + 1024 + 40 + 3 * 20, &n, &e), -1);
	assert_int_equal(e.kind, ERR_IO);

	/* a truncated file: corrupt (ERR_IO, the exit status of bad
	 * repository data), said so, never "another version" */
	assert_int_equal(pack_idx_parse(idx, 8 + 100, &n, &e), -1);
	assert_int_equal(e.kind, ERR_IO);
	assert_non_null(strstr(e.msg, "truncated .idx: 108 bytes"));
	assert_int_equal(pack_idx_parse(idx, 2, &n, &e), -1);
	assert_non_null(strstr(e.msg, "truncated"));

	/* another version: -2, which odb.c takes to git cat-file */
	put32(idx + 4, 3);
	assert_int_equal(pack_idx_parse(idx, len, &n, &e), -2);
	assert_int_equal(e.kind, ERR_IO);
	assert_non_null(strstr(e.msg, "version 3"));
	memcpy(idx, "PACK", 4);
	assert_int_equal(pack_idx_parse(idx, len, &n, &e), -2);
	assert_int_equal(e.kind, ERR_IO);
	free(idx);
}

static void test_entry_header(void **state)
{
	unsigned char m[64] = "PACK\0\0\0\2\0\0\0\1";
	uint64_t size, data, base;
	struct oid id;
	int kind;

	(void)state;
	/* a blob of 0x2345 bytes: 0xb5 (blob, more, low 5), 0x34 */
	m[12] = 0x80 | 3 << 4 | 0x5;
	m[13] = 0x34;
	assert_int_equal(pack_entry_header(m, 64, 12, &kind, &size, &data, &base, &id), 0);
	assert_int_equal(kind, 3);
	assert_int_equal(size, 0x5 | 0x34 << 4);
	assert_int_equal(data, 14);
	/* an OFS_DELTA 2 bytes back from offset 20 is at 18 */
	m[20] = 6 << 4 | 1;
	m[21] = 2;
	assert_int_equal(pack_entry_header(m, 64, 20, &kind, &size, &data, &base, &id), 0);
	assert_int_equal(kind, 6);
	assert_int_equal(base, 18);
	/* ... and one reaching before the pack's start is refused */
	m[21] = 30;
	assert_int_equal(pack_entry_header(m, 64, 20, &kind, &size, &data, &base, &id), -1);
	m[21] = 0;	/* a zero distance: itself */
	assert_int_equal(pack_entry_header(m, 64, 20, &kind, &size, &data, &base, &id), -1);
	/* type 5 is reserved, type 0 invalid */
	m[20] = 5 << 4;
	assert_int_equal(pack_entry_header(m, 64, 20, &kind, &size, &data, &base, &id), -1);
	m[20] = 0;
	assert_int_equal(pack_entry_header(m, 64, 20, &kind, &size, &data, &base, &id), -1);
	/* a size varint that never ends, or would overflow 64 bits */
	memset(m + 30, 0xff, 34);
	assert_int_equal(pack_entry_header(m, 64, 30, &kind, &size, &data, &base, &id), -1);
	/* a REF_DELTA cut in its base id; an offset outside the pack */
	m[60] = 7 << 4;
	assert_int_equal(pack_entry_header(m, 64, 60, &kind, &size, &data, &base, &id), -1);
	assert_int_equal(pack_entry_header(m, 64, 64, &kind, &size, &data, &base, &id), -1);
	assert_int_equal(pack_entry_header(m, 64, 3, &kind, &size, &data, &base, &id), -1);
}

static void test_delta(void **state)
{
	static const unsigned char base[] = "hello, world";
	/* src 12, dst 16: copy 7 bytes from 0, insert "there", copy 4 from 8 */
	unsigned char d[] = { 12, 16, 0x90, 7, 5, 't', 'h', 'e', 'r', 'e',
			      0x91, 8, 4 };
	unsigned char *out;
	const char *why;
	size_t n;

	(void)state;
	assert_int_equal(pack_delta_apply(base, 12, d, sizeof(d), 1 << 20, &out,
					  &n, &why), 0);
	assert_int_equal(n, 16);
	assert_memory_equal(out, "hello, thereorld", 16);
	free(out);
	/* the result over the limit: -2 (git cat-file reads it) */
	assert_int_equal(pack_delta_apply(base, 12, d, sizeof(d), 15, &out, &n,
					  &why), -2);
	/* a base of another size */
	assert_int_equal(pack_delta_apply(base, 11, d, sizeof(d), 1 << 20, &out,
					  &n, &why), -1);
	/* a copy reaching past the base */
	d[11] = 9;
	assert_int_equal(pack_delta_apply(base, 12, d, sizeof(d), 1 << 20, &out,
					  &n, &why), -1);
	assert_non_null(strstr(why, "outside"));
	d[11] = 8;
	/* the reserved instruction 0 */
	d[10] = 0;
	assert_int_equal(pack_delta_apply(base, 12, d, sizeof(d), 1 << 20, &out,
					  &n, &why), -1);
	d[10] = 0x91;
	/* instructions cut short; a result shorter than declared */
	assert_int_equal(pack_delta_apply(base, 12, d, sizeof(d) - 1, 1 << 20,
					  &out, &n, &why), -1);
	d[1] = 17;
	assert_int_equal(pack_delta_apply(base, 12, d, sizeof(d), 1 << 20, &out,
					  &n, &why), -1);
	/* an insert that would overrun the result */
	d[1] = 10;
	assert_int_equal(pack_delta_apply(base, 12, d, sizeof(d), 1 << 20, &out,
					  &n, &why), -1);
	/* an empty delta, a header alone */
	assert_int_equal(pack_delta_apply(base, 12, d, 1, 1 << 20, &out, &n,
					  &why), -1);
}

/* ---- a hand-built pack ---- */

struct pack_build {
	unsigned char buf[4096];
	size_t len;
};

static void entry_hdr(struct pack_build *b, int kind, size_t size)
{
	unsigned char c = (unsigned char)(kind << 4 | (size & 15));

	size >>= 4;
	while (size) {
		b->buf[b->len++] = c | 0x80;
		c = size & 0x7f;
		size >>= 7;
	}
	b->buf[b->len++] = c;
}

static void deflated(struct pack_build *b, const void *p, size_t n)
{
	uLongf out = sizeof(b->buf) - b->len;

	assert_int_equal(compress(b->buf + b->len, &out, p, n), Z_OK);
	b->len += out;
}

static char dir[] = "/tmp/migrate-test-pack-XXXXXX";

static void write_bytes(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, n, f), n);
	fclose(f);
}

/* A blob, an OFS_DELTA of it and a REF_DELTA of it, and their ids. */
static void build_pack(struct pack_build *b, struct idx_obj objs[3],
		       uint64_t large)
{
	static const char text[] = "hello, world";
	unsigned char d1[] = { 12, 16, 0x90, 7, 5, 't', 'h', 'e', 'r', 'e', 0x91, 8, 4 };
	unsigned char d2[] = { 12, 5, 5, 'o', 't', 'h', 'e', 'r' };
	struct obj_hash *h = obj_hash_new();
	char path[256];
	unsigned char *idx;
	size_t len;

	memset(b, 0, sizeof(*b));
	memcpy(b->buf, "PACK\0\0\0\2\0\0\0\3", 12);
	b->len = 12;
	objs[0].off = b->len;
	obj_hash_buf(h, OBJ_BLOB, text, 12, &objs[0].id);
	entry_hdr(b, 3, 12);
	deflated(b, text, 12);
	objs[1].off = b->len;
	obj_hash_buf(h, OBJ_BLOB, "hello, thereorld", 16, &objs[1].id);
	entry_hdr(b, 6, sizeof(d1));
	b->buf[b->len++] = (unsigned char)(objs[1].off - objs[0].off);
	deflated(b, d1, sizeof(d1));
	objs[2].off = b->len;
	obj_hash_buf(h, OBJ_BLOB, "other", 5, &objs[2].id);
	entry_hdr(b, 7, sizeof(d2));
	memcpy(b->buf + b->len, objs[0].id.hash, OID_RAW);
	b->len += OID_RAW;
	deflated(b, d2, sizeof(d2));
	b->len += 20;	/* the trailer (not checked by the reader) */
	obj_hash_free(h);
	if (large)
		objs[2].off = large;
	{
		struct idx_obj sorted[3];

		memcpy(sorted, objs, sizeof(sorted));
		len = build_idx(sorted, 3, &idx);
	}
	snprintf(path, sizeof(path), "%s/pack", dir);
	mkdir(path, 0777);
	snprintf(path, sizeof(path), "%s/pack/pack-1.idx", dir);
	write_bytes(path, idx, len);
	snprintf(path, sizeof(path), "%s/pack/pack-1.pack", dir);
	write_bytes(path, b->buf, b->len);
	free(idx);
}

static int read_obj(const struct oid *id, struct buf *body, struct err *e)
{
	struct pack_odb *db;
	enum obj_type t;
	int r;

	assert_int_equal(pack_odb_open(&db, dir, e), 0);
	r = pack_odb_read(db, id, &t, body, e);
	if (r == 1)
		assert_int_equal(t, OBJ_BLOB);
	pack_odb_free(db);
	return r;
}

static void test_pack_read(void **state)
{
	struct pack_build b;
	struct idx_obj objs[3];
	struct buf body = BUF_INIT(1 << 20);
	struct err e = ERR_INIT;
	struct pack_odb *db;
	struct oid missing;
	enum obj_type t;
	uint64_t size;
	char path[256];

	(void)state;
	assert_non_null(mkdtemp(dir));
	build_pack(&b, objs, 0);
	assert_int_equal(read_obj(&objs[0].id, &body, &e), 1);
	assert_string_equal(body.ptr, "hello, world");
	assert_int_equal(read_obj(&objs[1].id, &body, &e), 1);
	assert_string_equal(body.ptr, "hello, thereorld");
	assert_int_equal(read_obj(&objs[2].id, &body, &e), 1);
	assert_string_equal(body.ptr, "other");
	assert_int_equal(pack_odb_open(&db, dir, &e), 0);
	assert_int_equal(pack_odb_info(db, &objs[1].id, &t, &size, &e), 1);
	assert_int_equal(size, 16);
	assert_int_equal(pack_odb_info(db, &objs[2].id, &t, &size, &e), 1);
	assert_int_equal(size, 5);
	assert_int_equal(t, OBJ_BLOB);
	memset(&missing, 0x42, sizeof(missing));
	assert_int_equal(pack_odb_info(db, &missing, &t, &size, &e), 0);
	pack_odb_free(db);

	/* the 64-bit table sends the REF_DELTA past the end: an error */
	build_pack(&b, objs, 0x100000000ull);
	assert_int_equal(read_obj(&objs[2].id, &body, &e), -1);
	assert_non_null(strstr(e.msg, "corrupt pack at offset 4294967296"));

	/* a changed insert byte: the content no longer hashes to its id */
	build_pack(&b, objs, 0);
	{
		unsigned char d1[] = { 12, 16, 0x90, 7, 5, 'T', 'h', 'e', 'r', 'e', 0x91, 8, 4 };
		struct pack_build c = b;
		size_t at = objs[1].off;

		c.len = at;
		entry_hdr(&c, 6, sizeof(d1));
		c.buf[c.len++] = (unsigned char)(objs[1].off - objs[0].off);
		deflated(&c, d1, sizeof(d1));
		snprintf(path, sizeof(path), "%s/pack/pack-1.pack", dir);
		write_bytes(path, c.buf, b.len);
		assert_int_equal(read_obj(&objs[1].id, &body, &e), -1);
		assert_non_null(strstr(e.msg, "does not hash to its id"));
	}

	/* a delta copying from outside its base */
	{
		unsigned char d1[] = { 12, 16, 0x90, 7, 5, 't', 'h', 'e', 'r', 'e', 0x91, 9, 4 };
		struct pack_build c = b;

		c.len = objs[1].off;
		entry_hdr(&c, 6, sizeof(d1));
		c.buf[c.len++] = (unsigned char)(objs[1].off - objs[0].off);
		deflated(&c, d1, sizeof(d1));
		write_bytes(path, c.buf, b.len);
		assert_int_equal(read_obj(&objs[1].id, &body, &e), -1);
		assert_non_null(strstr(e.msg, "outside its base"));
	}

	/* a flipped byte in the zlib data of the base */
	build_pack(&b, objs, 0);
	b.buf[objs[0].off + 4] ^= 0x40;
	write_bytes(path, b.buf, b.len);
	assert_int_equal(read_obj(&objs[0].id, &body, &e), -1);
	assert_int_equal(e.kind, ERR_IO);
	assert_non_null(strstr(e.msg, "pack-1.pack"));
	buf_release(&body);

	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	assert_int_equal(system(path), 0);
}

/* packw.c: a pack of one blob, read back by the reader, and what is left
 * of one not committed */
/* The entries of <objects>/pack that packw_is_temp takes. */
static int count_temps(const char *objects)
{
	char path[512];
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "%s/pack", objects);
	assert_non_null(d = opendir(path));
	while ((de = readdir(d)))
		n += packw_is_temp(de->d_name);
	closedir(d);
	return n;
}

static void test_packw(void **state)
{
	struct buf body = BUF_INIT(1 << 22), name = BUF_INIT(4096);
	struct obj_hash *h = obj_hash_new();
	struct err e = ERR_INIT;
	struct pack_odb *db;
	struct packw *w;
	struct oid id;
	enum obj_type t;
	unsigned char *data;
	size_t n = 300001, i, k;
	char tmpl[] = "/tmp/migrate-test-packw-XXXXXX", path[512];

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	snprintf(path, sizeof(path), "%s/pack", tmpl);
	assert_int_equal(mkdir(path, 0777), 0);
	data = malloc(n);
	assert_non_null(data);
	for (i = 0; i < n; i++)	/* some of it compresses, some does not */
		data[i] = (unsigned char)(i % 7 == 0 ? (size_t)rand() : i / 1000);
	obj_hash_buf(h, OBJ_BLOB, data, n, &id);

	assert_int_equal(packw_begin(&w, tmpl, n, 1, &e), 0);
	for (i = 0; i < n; i += k) {
		k = n - i < 65536 ? n - i : 65536;
		assert_int_equal(packw_write(w, data + i, k, &e), 0);
	}
	assert_int_equal(packw_write(w, "x", 1, &e), -1);	/* past its size */
	assert_int_equal(packw_finish(w, &id, &e), 0);
	assert_int_equal(packw_commit(w, &name, &e), 1);
	packw_free(w);
	assert_non_null(strstr(name.ptr, "/pack/pack-"));
	assert_int_equal(pack_odb_open(&db, tmpl, &e), 0);
	assert_int_equal(pack_odb_read(db, &id, &t, &body, &e), 1);
	assert_int_equal(t, OBJ_BLOB);
	assert_int_equal(body.len, n);
	assert_memory_equal(body.ptr, data, n);
	pack_odb_free(db);

	/* the same bytes again: the pack is there, left alone */
	assert_int_equal(packw_begin(&w, tmpl, n, 1, &e), 0);
	assert_int_equal(packw_write(w, data, n, &e), 0);
	assert_int_equal(packw_finish(w, &id, &e), 0);
	assert_int_equal(packw_commit(w, &name, &e), 0);
	packw_free(w);

	/* short of its size: no finish; not committed: no file stays */
	assert_int_equal(packw_begin(&w, tmpl, n, 1, &e), 0);
	assert_int_equal(packw_write(w, data, 10, &e), 0);
	/* its temp file is one the journal's clean-up knows */
	assert_int_equal(count_temps(tmpl), 1);
	assert_int_equal(packw_finish(w, &id, &e), -1);
	assert_non_null(strstr(e.msg, "10 bytes of a blob of 300001"));
	packw_free(w);
	assert_int_equal(packw_begin(&w, tmpl, 3, 1, &e), 0);
	assert_int_equal(packw_write(w, "abc", 3, &e), 0);
	assert_int_equal(packw_finish(w, &id, &e), 0);
	packw_free(w);
	snprintf(path, sizeof(path), "test $(ls '%s/pack' | wc -l) = 2", tmpl);
	assert_int_equal(system(path), 0);	/* the committed .pack and .idx */
	assert_int_equal(count_temps(tmpl), 0);
	assert_true(packw_is_temp("tmp_migrate_idx_Ab0Cd9"));
	assert_false(packw_is_temp("tmp_migrate_idx_Ab0Cd"));
	assert_false(packw_is_temp("tmp_migrate_pack_Ab0Cd9.pack"));
	assert_false(packw_is_temp("tmp_pack_Ab0Cd9"));	/* git's own */

	free(data);
	obj_hash_free(h);
	buf_release(&body);
	buf_release(&name);
	snprintf(path, sizeof(path), "rm -rf '%s'", tmpl);
	assert_int_equal(system(path), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_idx_large_offsets),
		cmocka_unit_test(test_entry_header),
		cmocka_unit_test(test_delta),
		cmocka_unit_test(test_pack_read),
		cmocka_unit_test(test_packw),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
