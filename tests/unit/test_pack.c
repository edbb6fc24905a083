/*
 * test_pack.c - the native object reader's formats (rewrite/git/pack.c):
 * a hand-built .idx version 2 with the 64-bit offset table, pack entry
 * headers, the delta decoder, and a hand-built pack read whole (a blob,
 * an OFS_DELTA and a REF_DELTA on it) with its corruptions; the writer
 * of one-blob packs (packw.c), read back; deltas made (delta.c), applied
 * back by the decoder; and packs of many objects and delta chains
 * (packm), judged by git (verify-pack, fsck, cat-file) and read back.
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


/* ---- delta.c: deltas made, applied back ---- */

/* A small deterministic generator (xorshift), so that a failure repeats. */
static uint64_t rng = 88172645463325252ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void rnd_bytes(unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (unsigned char)rnd();
}

/* n bytes of record-file text: lines that repeat a few words and recur
 * ("\tNOTE: ..."), each record with a number of its own. */
static unsigned char *records(size_t n, unsigned seed)
{
	static const char *const words[] = { "overflow", "heap", "in", "the",
		"remote", "crafted", "service", "denial", "of", "via" };
	unsigned char *p = malloc(n + 256);
	size_t len = 0;
	unsigned k = seed;

	assert_non_null(p);
	while (len < n) {
		char line[200];
		int w = snprintf(line, sizeof(line), "CVE-2026-%05u (%s %s %s)\n"
				 "\t- pkg%u <unfixed>\n\tNOTE: https://bugs.example.org/%u\n",
				 k, words[rnd() % 10], words[rnd() % 10],
				 words[rnd() % 10], (unsigned)(rnd() % 50),
				 (unsigned)(rnd() % 1000000));

		memcpy(p + len, line, (size_t)w);
		len += (size_t)w;
		k++;
	}
	return p;	/* n bytes of it are used */
}

typedef int (*delta_maker)(const unsigned char *, size_t,
			   const unsigned char *, size_t, size_t, struct buf *);

/* Makes a delta from base to target with make, checks what it says of it
 * against max (0 when the delta was larger, out as it was), applies it and
 * compares. The delta's length. */
static size_t trip(delta_maker make, const unsigned char *base, size_t bn,
		   const unsigned char *target, size_t tn)
{
	struct buf out = BUF_INIT((size_t)1 << 31);
	unsigned char *res;
	const char *why = NULL;
	size_t n, len;

	/* appended after what out holds */
	assert_int_equal(buf_adds(&out, "kept"), 0);
	assert_int_equal(make(base, bn, target, tn, SIZE_MAX, &out), 1);
	assert_memory_equal(out.ptr, "kept", 4);
	len = out.len - 4;
	if (pack_delta_apply((unsigned char *)out.ptr + 4, len, base, 0, 0,
			     &res, &n, &why) == 0)	/* never: too short */
		free(res);
	assert_int_equal(pack_delta_apply(base, bn, (unsigned char *)out.ptr + 4,
					  len, (uint64_t)1 << 32, &res, &n, &why), 0);
	assert_int_equal(n, tn);
	if (tn)
		assert_memory_equal(res, target, tn);
	free(res);
	/* one byte short of it: not made, out unchanged */
	out.len = 4;
	assert_int_equal(make(base, bn, target, tn, len - 1, &out), 0);
	assert_int_equal(out.len, 4);
	assert_int_equal(out.ptr[4], '\0');
	assert_int_equal(make(base, bn, target, tn, len, &out), 1);
	assert_int_equal(out.len, 4 + len);
	buf_release(&out);
	return len;
}

static size_t round_trip(const unsigned char *base, size_t bn,
			 const unsigned char *target, size_t tn)
{
	return trip(delta_create, base, bn, target, tn);
}

/* target = base with lines changed, inserted and deleted every so often */
static size_t edit_lines(const unsigned char *b, size_t bn, unsigned char *t,
			 unsigned every)
{
	size_t i = 0, len = 0, line = 0;

	while (i < bn) {
		const unsigned char *nl = memchr(b + i, '\n', bn - i);
		size_t l = nl ? (size_t)(nl - (b + i)) + 1 : bn - i;

		line++;
		if (line % every == 3) {		/* deleted */
			i += l;
			continue;
		}
		memcpy(t + len, b + i, l);
		len += l;
		if (line % every == 1 && l > 4) {	/* changed */
			t[len - 3] ^= 0x20;
		}
		if (line % every == 5) {		/* inserted */
			memcpy(t + len, "\tNOTE: a line of its own\n", 25);
			len += 25;
		}
		i += l;
	}
	return len;
}

static size_t tree_trip(const unsigned char *base, size_t bn,
			const unsigned char *target, size_t tn)
{
	return trip(delta_create_tree, base, bn, target, tn);
}

/* A raw tree of the entries "mode name" (in the order given), each id
 * twenty bytes of its seed. */
static size_t make_tree(unsigned char *t, const char *const *ents,
			const unsigned char *seeds)
{
	size_t len = 0, i;

	for (i = 0; ents[i]; i++) {
		size_t l = strlen(ents[i]) + 1;

		memcpy(t + len, ents[i], l);	/* with its NUL */
		len += l;
		memset(t + len, seeds[i], OID_RAW);
		len += OID_RAW;
	}
	return len;
}

static void test_delta_tree(void **state)
{
	/* tree order: "foo" the directory sorts as "foo/", after "foo.c" */
	static const char *const a[] = {
		"100644 Makefile", "40000 docs", "100644 foo-bar", "100644 foo.c",
		"40000 foo", "100755 run.sh", "120000 zlink", NULL
	};
	static const char *const b[] = {	/* foo-bar gone, foo0 new */
		"100644 Makefile", "40000 docs", "100644 foo.c", "40000 foo",
		"100644 foo0", "100755 run.sh", "120000 zlink", NULL
	};
	unsigned char sa[] = { 1, 2, 3, 4, 5, 6, 7 }, sb[] = { 1, 2, 4, 5, 9, 6, 7 };
	unsigned char base[4096], target[4096], big[64 * 40], big2[64 * 40];
	char names[64][24];
	const char *many[65];
	unsigned char seeds[64];
	size_t bn, tn, i, d;

	(void)state;
	bn = make_tree(base, a, sa);
	/* the same tree: one copy */
	assert_true(tree_trip(base, bn, base, bn) <= 8);
	/* one id changed: a copy up to it (its mode and name too), the id */
	memcpy(target, base, bn);
	target[bn - 1] ^= 0xff;
	assert_true(tree_trip(base, bn, target, bn) <= 4 + 5 + 1 + OID_RAW);
	/* an entry gone, one new, one changed (foo's id: sb[3] = 5, was 4...) */
	tn = make_tree(target, b, sb);
	d = tree_trip(base, bn, target, tn);
	assert_true(d < tn / 2);
	/* empty either side, and bytes that are not entries */
	tree_trip(base, 0, target, tn);
	tree_trip(base, bn, target, 0);
	memcpy(target, "junk without a NUL", 18);
	tree_trip(base, bn, target, 18);
	tree_trip(target, 18, base, bn);
	tree_trip(base, bn - 5, base, bn);	/* the last entry cut short */
	/* 64 entries, every 8th id changed: 8 copies and 8 ids inserted */
	for (i = 0; i < 64; i++) {
		snprintf(names[i], sizeof(names[i]), "100644 file%02zu", i);
		many[i] = names[i];
		seeds[i] = (unsigned char)i;
	}
	many[64] = NULL;
	bn = make_tree(big, many, seeds);
	for (i = 0; i < 64; i += 8)
		seeds[i] ^= 0x80;
	tn = make_tree(big2, many, seeds);
	d = tree_trip(big, bn, big2, tn);
	assert_true(d <= 8 * (5 + 1 + OID_RAW) + 16);
	assert_true(d < tn / 8);
}

static void test_delta_create(void **state)
{
	size_t n = 200000, len, i, m;
	unsigned char *base = records(n, 1), *top = records(12000, 900000);
	unsigned char *t = malloc(2 * n + 20000), *r;

	(void)state;
	assert_non_null(t);
	/* identical: one copy */
	assert_true(round_trip(base, n, base, n) < 16);
	/* records inserted at the top (the record list's way) */
	memcpy(t, top, 12000);
	memcpy(t + 12000, base, n);
	len = round_trip(base, n, t, n + 12000);
	assert_true(len < 12000 + 12000 / 100 + 64);
	/* ... and a few lines changed in the middle too */
	t[12000 + n / 2] ^= 1;
	t[12000 + n / 3] = '#';
	len = round_trip(base, n, t, n + 12000);
	assert_true(len < 12000 + 12000 / 100 + 128);
	/* the other way: records removed from the top (the records look
	 * alike: a few short copies from them before the long one is found) */
	assert_true(round_trip(t, n + 12000, base, n) < 512);
	memcpy(t, base, n);
	memcpy(t + n, top, 12000);
	assert_true(round_trip(base, n, t, n + 12000) < 12000 + 12000 / 100 + 64);
	assert_true(round_trip(t, n + 12000, base, n) < 64);
	/* scattered edits: changed, inserted, deleted lines (every 7 lines,
	 * an edit every other line: anchors of 32 bytes straddle them, and
	 * the delta is only sure to be right) */
	for (i = 7; i < 400; i *= 3) {
		m = edit_lines(base, n, t, (unsigned)i);
		len = round_trip(base, n, t, m);
		assert_true(i == 7 || len < m * 3 / i);
		len = round_trip(t, m, base, n);
		assert_true(i == 7 || len < n * 3 / i);
	}
	/* a block deleted in the middle, a block moved */
	memcpy(t, base, n / 3);
	memcpy(t + n / 3, base + n / 2, n - n / 2);
	assert_true(round_trip(base, n, t, n / 3 + n - n / 2) < 64);
	assert_true(round_trip(t, n / 3 + n - n / 2, base, n) < n - n / 2 - n / 3 + 400);
	/* empty base, empty target, both */
	round_trip(base, 0, base, n);
	assert_true(round_trip(base, n, base, 0) <= 4);
	assert_int_equal(round_trip(base, 0, base, 0), 2);
	/* unrelated: random bytes, random against text */
	r = malloc(n);
	assert_non_null(r);
	rnd_bytes(r, n);
	round_trip(base, n, r, n);
	round_trip(r, n, base, n);
	rnd_bytes(t, n);
	assert_true(round_trip(r, n, t, n) > n);	/* inserts only */
	/* random with a few bytes changed */
	memcpy(t, r, n);
	for (i = 0; i < n; i += 5000)
		t[i] ^= 0x55;
	assert_true(round_trip(r, n, t, n) < n / 20);
	/* long runs */
	memset(t, 'a', n);
	memset(r, 'a', n);
	r[n / 2] = 'b';
	assert_true(round_trip(t, n, r, n) < 32);
	assert_true(round_trip(r, n, t, n) < 32);
	for (i = 0; i < n; i++)
		r[i] = "ab"[i % 2];
	round_trip(t, n, r, n);
	round_trip(r, n, t, n);
	free(r);
	free(t);
	free(top);
	free(base);
}

/* Sizes at the formats' edges: inserts of 127 bytes at most, copies of
 * 0x10000 (whose size the decoder reads as 0) and of up to 0xffffff. */
static void test_delta_sizes(void **state)
{
	static const size_t sizes[] = { 1, 2, 126, 127, 128, 254, 255, 256,
					0xffff, 0x10000, 0x10001, 0x1ffff };
	size_t big = 0x1000002, i, len;
	unsigned char *b = malloc(big + 1), *t = malloc(big + 1);

	(void)state;
	assert_non_null(b);
	assert_non_null(t);
	rnd_bytes(b, big);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t s = sizes[i];

		/* all inserts: an opcode each 127 bytes */
		len = round_trip(b, 0, b, s);
		assert_int_equal(len, 2 + (s > 127 ? 1 : 0) + (s > 16383 ? 1 : 0) +
				 s + (s + 126) / 127 - (s > 0x3fff ? 0 : 0));
		/* one copy of s bytes, after a byte inserted */
		t[0] = 'x';
		memcpy(t + 1, b + 5, s);
		round_trip(b, s + 10, t, s + 1);
		/* the same without it: a copy at offset 0, and from the end */
		round_trip(b, s + 10, b, s);
		round_trip(b, s + 10, b + 10, s);
	}
	/* copies longer than 0xffffff: in pieces */
	t[0] = 'x';
	memcpy(t + 1, b, big);
	assert_true(round_trip(b, big, t, big + 1) < 32);
	assert_true(round_trip(b, big, b, big) < 32);
	memcpy(t, b, big);
	t[0xffffff] ^= 1;
	assert_true(round_trip(b, big, t, big) < 48);
	free(b);
	free(t);
}

/* Many small generated pairs: a text and itself edited at random. */
static void test_delta_generated(void **state)
{
	unsigned char *src = records(20000, 7);
	unsigned char *b = malloc(20000), *t = malloc(80000);
	int round;

	(void)state;
	assert_non_null(b);
	assert_non_null(t);
	for (round = 0; round < 300; round++) {
		size_t bn = rnd() % 20000, tn = 0, i = 0;

		if (round % 3 == 0)
			rnd_bytes(b, bn);
		else
			memcpy(b, src + rnd() % (20000 - bn + 1), bn);
		/* copy stretches of the base, skip some, insert others */
		while (i < bn && tn < 60000) {
			size_t k = rnd() % 300 + 1;

			switch (rnd() % 4) {
			case 0:
				i += k;
				break;
			case 1:
				k = k > 60 ? 60 : k;
				rnd_bytes(t + tn, k);
				tn += k;
				break;
			default:
				if (k > bn - i)
					k = bn - i;
				memcpy(t + tn, b + i, k);
				tn += k;
				i += k;
			}
		}
		round_trip(b, bn, t, tn);
		round_trip(t, tn, b, bn);
	}
	free(src);
	free(b);
	free(t);
}

/* ---- packm: a pack of many objects, judged by git ---- */

static int sh(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static int sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

#define CHAIN 6

static void test_packm(void **state)
{
	struct buf name = BUF_INIT(4096), body = BUF_INIT(1 << 24),
		   d = BUF_INIT(1 << 24), tree = BUF_INIT(4096),
		   commit = BUF_INIT(4096);
	struct obj_hash *h = obj_hash_new();
	struct err e = ERR_INIT;
	struct pack_odb *db;
	struct packm *w;
	struct oid ids[CHAIN], other, tid, cid, many[3000], missing;
	unsigned char *v[CHAIN];
	size_t vn[CHAIN], i, n = 300000;
	char repo[] = "/tmp/migrate-test-packm-XXXXXX", objects[256],
	     path[512], hex[OID_HEX + 1];
	enum obj_type t;
	uint64_t before;

	(void)state;
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("GIT_CONFIG_GLOBAL", "/dev/null", 1);
	assert_non_null(mkdtemp(repo));
	assert_int_equal(sh("git init -q --bare --initial-branch=main '%s'", repo), 0);
	snprintf(objects, sizeof(objects), "%s/objects", repo);

	/* a chain of versions: each the one before with records on top and
	 * lines edited */
	v[0] = records(n, 1);
	vn[0] = n;
	for (i = 1; i < CHAIN; i++) {
		unsigned char *top = records(3000, (unsigned)(100000 * i));

		v[i] = malloc(vn[i - 1] * 2 + 3000);
		assert_non_null(v[i]);
		memcpy(v[i], top, 3000);
		vn[i] = 3000 + edit_lines(v[i - 1], vn[i - 1], v[i] + 3000,
					  (unsigned)(50 + i));
		free(top);
	}
	for (i = 0; i < CHAIN; i++)
		obj_hash_buf(h, OBJ_BLOB, v[i], vn[i], &ids[i]);

	assert_int_equal(packm_begin(&w, objects, 6, &e), 0);
	assert_int_equal(count_temps(objects), 1);
	assert_int_equal(packm_count(w), 0);
	assert_int_equal(packm_bytes(w), 12);
	/* a delta's base must be in the pack */
	assert_int_equal(packm_add_delta(w, &ids[1], &ids[0], "xx", 2, &e), -1);
	assert_non_null(strstr(e.msg, "is not in the pack"));
	assert_int_equal(packm_add(w, OBJ_BLOB, &ids[0], v[0], vn[0], &e), 0);
	assert_true(packm_has(w, &ids[0]));
	assert_false(packm_has(w, &ids[1]));
	for (i = 1; i < CHAIN; i++) {
		buf_reset(&d);
		assert_int_equal(delta_create(v[i - 1], vn[i - 1], v[i], vn[i],
					      vn[i] / 2, &d), 1);
		before = packm_bytes(w);
		assert_int_equal(packm_add_delta(w, &ids[i], &ids[i - 1], d.ptr,
						 d.len, &e), 0);
		assert_true(packm_bytes(w) > before);
		assert_true(packm_bytes(w) - before < vn[i] / 10);
	}
	/* again: nothing added */
	before = packm_bytes(w);
	assert_int_equal(packm_add(w, OBJ_BLOB, &ids[3], v[3], vn[3], &e), 0);
	assert_int_equal(packm_add_delta(w, &ids[2], &ids[0], d.ptr, d.len, &e), 0);
	assert_int_equal(packm_bytes(w), before);
	/* an unrelated blob, many small ones (the table's runs merged many
	 * times over), a tree and a commit naming them */
	obj_hash_buf(h, OBJ_BLOB, "other\n", 6, &other);
	assert_int_equal(packm_add(w, OBJ_BLOB, &other, "other\n", 6, &e), 0);
	for (i = 0; i < 3000; i++) {
		char small[32];
		int k = snprintf(small, sizeof(small), "object %zu\n", i);

		obj_hash_buf(h, OBJ_BLOB, small, (size_t)k, &many[i]);
		assert_int_equal(packm_add(w, OBJ_BLOB, &many[i], small,
					   (size_t)k, &e), 0);
		if (i % 97 == 0) {
			size_t j;

			for (j = 0; j <= i; j += 13)
				assert_true(packm_has(w, &many[j]));
		}
	}
	for (i = 0; i < 3000; i++)
		assert_true(packm_has(w, &many[i]));
	memset(&missing, 0x5a, sizeof(missing));
	assert_false(packm_has(w, &missing));
	buf_add(&tree, "100644 a\0", 9);
	buf_add(&tree, ids[0].hash, OID_RAW);
	buf_add(&tree, "100644 b\0", 9);
	buf_add(&tree, ids[CHAIN - 1].hash, OID_RAW);
	obj_hash_buf(h, OBJ_TREE, tree.ptr, tree.len, &tid);
	assert_int_equal(packm_add(w, OBJ_TREE, &tid, tree.ptr, tree.len, &e), 0);
	buf_printf(&commit, "tree %s\nauthor A <a@example.org> 0 +0000\n"
		   "committer A <a@example.org> 0 +0000\n\nm\n", oid_hex(&tid, hex));
	obj_hash_buf(h, OBJ_COMMIT, commit.ptr, commit.len, &cid);
	assert_int_equal(packm_add(w, OBJ_COMMIT, &cid, commit.ptr, commit.len, &e), 0);
	assert_int_equal(packm_count(w), CHAIN + 1 + 3000 + 2);
	assert_int_equal(packm_commit(w, &name, &e), 1);
	assert_int_equal(packm_add(w, OBJ_BLOB, &missing, "x", 1, &e), -1);
	packm_free(w);
	assert_int_equal(count_temps(objects), 0);
	assert_non_null(strstr(name.ptr, "/pack/pack-"));

	/* git's judgement: the index verified against the pack, the chain
	 * as deep as made, the repository sound, every object as given */
	assert_int_equal(sh("git -C '%s' verify-pack -v '%s.idx' > '%s/vp'",
			    repo, name.ptr, repo), 0);
	assert_int_equal(sh("grep -q '^chain length = %d: 1 object' '%s/vp'",
			    CHAIN - 1, repo), 0);
	assert_int_equal(sh("grep -q '^non delta: %d objects' '%s/vp'",
			    1 + 1 + 3000 + 2, repo), 0);
	assert_int_equal(sh("cd '%s' && git index-pack --verify '%s.pack' >/dev/null",
			    repo, name.ptr), 0);
	assert_int_equal(sh("git -C '%s' update-ref refs/heads/main %s", repo,
			    oid_hex(&cid, hex)), 0);
	assert_int_equal(sh("git -C '%s' fsck --strict --no-dangling "
			    ">'%s/fsck' 2>&1 && ! test -s '%s/fsck'",
			    repo, repo, repo), 0);
	for (i = 0; i < CHAIN; i++) {
		snprintf(path, sizeof(path), "%s/expected", repo);
		write_bytes(path, v[i], vn[i]);
		assert_int_equal(sh("git -C '%s' cat-file blob %s | cmp -s - '%s'",
				    repo, oid_hex(&ids[i], hex), path), 0);
	}
	assert_int_equal(sh("test \"$(git -C '%s' cat-file -p %s)\" = 'object 2999'",
			    repo, oid_hex(&many[2999], hex)), 0);
	assert_int_equal(sh("git -C '%s' cat-file -p %s:b | cmp -s - '%s'",
			    repo, oid_hex(&cid, hex), path), 0);

	/* the project's own reader */
	assert_int_equal(pack_odb_open(&db, objects, &e), 0);
	for (i = 0; i < CHAIN; i++) {
		assert_int_equal(pack_odb_read(db, &ids[i], &t, &body, &e), 1);
		assert_int_equal(t, OBJ_BLOB);
		assert_int_equal(body.len, vn[i]);
		assert_memory_equal(body.ptr, v[i], vn[i]);
	}
	for (i = 0; i < 3000; i += 7) {
		assert_int_equal(pack_odb_read(db, &many[i], &t, &body, &e), 1);
		assert_int_equal(t, OBJ_BLOB);
	}
	assert_int_equal(pack_odb_read(db, &tid, &t, &body, &e), 1);
	assert_int_equal(t, OBJ_TREE);
	assert_int_equal(pack_odb_read(db, &cid, &t, &body, &e), 1);
	assert_int_equal(t, OBJ_COMMIT);
	assert_true(buf_eq(&body, commit.ptr));
	pack_odb_free(db);

	/* the same objects again make the same bytes: that pack is there,
	 * left alone; one not committed leaves nothing */
	assert_int_equal(packm_begin(&w, objects, 6, &e), 0);
	assert_int_equal(packm_add(w, OBJ_BLOB, &ids[0], v[0], vn[0], &e), 0);
	assert_int_equal(packm_commit(w, &body, &e), 1);
	packm_free(w);
	assert_int_equal(packm_begin(&w, objects, 6, &e), 0);
	assert_int_equal(packm_add(w, OBJ_BLOB, &ids[0], v[0], vn[0], &e), 0);
	assert_int_equal(packm_commit(w, &name, &e), 0);
	packm_free(w);
	assert_int_equal(packm_begin(&w, objects, 6, &e), 0);
	assert_int_equal(packm_add(w, OBJ_BLOB, &ids[1], v[1], vn[1], &e), 0);
	packm_free(w);
	assert_int_equal(count_temps(objects), 0);
	assert_int_equal(sh("test $(ls '%s/pack' | wc -l) = 4", objects), 0);

	for (i = 0; i < CHAIN; i++)
		free(v[i]);
	obj_hash_free(h);
	buf_release(&name);
	buf_release(&body);
	buf_release(&d);
	buf_release(&tree);
	buf_release(&commit);
	assert_int_equal(sh("rm -rf '%s'", repo), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_idx_large_offsets),
		cmocka_unit_test(test_entry_header),
		cmocka_unit_test(test_delta),
		cmocka_unit_test(test_pack_read),
		cmocka_unit_test(test_packw),
		cmocka_unit_test(test_delta_create),
		cmocka_unit_test(test_delta_tree),
		cmocka_unit_test(test_delta_sizes),
		cmocka_unit_test(test_delta_generated),
		cmocka_unit_test(test_packm),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
