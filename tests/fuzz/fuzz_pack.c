/*
 * fuzz_pack.c - libFuzzer target for the native object reader's entry
 * and delta decoder (rewrite/git/pack.c), which read untrusted bytes.
 *
 * The input's first byte picks what is fed:
 *  0: a delta (the bytes after a 2-byte base length) applied to a base
 *     (the rest): on success the result is exactly as long as the delta
 *     says, within the limit;
 *  1: an .idx: parsed, then every object's offset looked up;
 *  else: a pack body behind a "PACK" header, in an object directory with
 *     an .idx naming four objects (ids 01.., 02.., 03.., 04..; their
 *     offsets from the input's next bytes), each read whole and streamed:
 *     an object read must hash to its id (the reader checks; here it is
 *     checked again), everything else is an error, never a crash.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rewrite/git/git.h"

#define LIMIT ((uint64_t)1 << 20)

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static void fuzz_delta(const uint8_t *d, size_t n)
{
	unsigned char *out;
	const char *why;
	size_t blen, len;

	if (n < 2)
		return;
	blen = (size_t)d[0] << 8 | d[1];
	d += 2;
	n -= 2;
	if (blen > n)
		blen = n;
	if (pack_delta_apply(d, blen, d + blen, n - blen, LIMIT, &out, &len,
			     &why) == 0) {
		if (len > LIMIT || out[len] != 0)
			abort();
		free(out);
	}
}

static void fuzz_idx(const uint8_t *d, size_t n)
{
	struct err e = ERR_INIT;
	uint64_t off;
	uint32_t count, i;

	if (pack_idx_parse(d, n, &count, &e) < 0)
		return;
	for (i = 0; i < count; i++)
		(void)pack_idx_offset(d, n, count, i, &off, &e);
}

static char dir[64];

static void write_file(const char *name, const void *p, size_t n)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/pack/%s", dir, name);
	f = fopen(path, "wb");
	if (!f)
		abort();
	if (n && fwrite(p, 1, n, f) != n)
		abort();
	fclose(f);
}

static void fuzz_store(const uint8_t *d, size_t n)
{
	unsigned char idx[8 + 1024 + 4 * 28 + 40] = { 0 };
	unsigned char *pack;
	struct pack_odb *db;
	struct pack_stream *s;
	struct obj_hash *h;
	struct err e = ERR_INIT;
	struct buf body = BUF_INIT(LIMIT);
	char chunk[4096];
	size_t plen, i;

	if (n < 8)
		return;
	h = obj_hash_new();
	plen = 12 + (n - 8) + 20;
	pack = calloc(1, plen);
	memcpy(pack, "PACK\0\0\0\2\0\0\0\4", 12);
	memcpy(pack + 12, d + 8, n - 8);
	memcpy(idx, "\377tOc\0\0\0\2", 8);
	for (i = 0; i < 256; i++)
		put32(idx + 8 + 4 * i, i < 1 ? 0 : i < 4 ? (uint32_t)i : 4);
	for (i = 0; i < 4; i++) {
		uint32_t off = 12 + (((uint32_t)d[2 * i] << 8 | d[2 * i + 1]) %
				     (uint32_t)(n - 8 + 1));

		memset(idx + 8 + 1024 + 20 * i, (int)i + 1, 20);
		put32(idx + 8 + 1024 + 4 * 24 + 4 * i, off);
	}
	write_file("pack-f.pack", pack, plen);
	write_file("pack-f.idx", idx, sizeof(idx));
	if (pack_odb_open(&db, dir, &e) == 0) {
		pack_odb_set_limit(db, LIMIT);
		for (i = 0; i < 4; i++) {
			struct oid id, got;
			enum obj_type t;
			uint64_t size;
			ssize_t r;

			memset(id.hash, (int)i + 1, OID_RAW);
			(void)pack_odb_info(db, &id, &t, &size, &e);
			if (pack_odb_read(db, &id, &t, &body, &e) == 1) {
				obj_hash_buf(h, t, body.ptr, body.len, &got);
				if (!oid_eq(&got, &id))
					abort();
			}
			if (pack_odb_open_stream(db, &id, &s, &t, &size, &e) == 1) {
				while ((r = pack_stream_read(s, chunk, sizeof(chunk), &e)) > 0)
					;
				pack_stream_close(s);
			}
		}
		pack_odb_free(db);
	}
	buf_release(&body);
	obj_hash_free(h);
	free(pack);
}

static void cleanup(void)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/pack/pack-f.pack", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/pack/pack-f.idx", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/pack", dir);
	rmdir(path);
	rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	if (!dir[0]) {
		atexit(cleanup);
		char path[80];

		snprintf(dir, sizeof(dir), "/tmp/fuzz_pack.%d", (int)getpid());
		mkdir(dir, 0700);
		snprintf(path, sizeof(path), "%s/pack", dir);
		mkdir(path, 0700);
	}
	if (n == 0)
		return 0;
	if (d[0] == 0)
		fuzz_delta(d + 1, n - 1);
	else if (d[0] == 1)
		fuzz_idx(d + 1, n - 1);
	else
		fuzz_store(d + 1, n - 1);
	return 0;
}
