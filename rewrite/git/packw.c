/*
 * packw.c - a pack of one blob and its index (docs/FORMATS.md, packs),
 * written as the blob streams in, so that a thread of migrate's can store
 * an object while git fast-import stores the rest: the pack is "PACK",
 * version 2, one entry (its type and size, then the content deflated at
 * the level asked), and its SHA-1; the index is version 2 with the one
 * id, the entry's CRC-32 and offset 12. Both are written under temp names
 * in objects/pack (tmp_migrate_*, which `migrate run` removes when a
 * killed run left them) and fsynced; packw_commit gives them their names, the
 * pack first, so git never sees an index without its pack.
 */
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "git.h"

#define PACKW_BUF ((size_t)64 << 10)

struct packw {
	char *dir;		/* objects/pack */
	char *tmp_pack, *tmp_idx;
	int fd;
	z_stream z;
	int z_live;
	EVP_MD_CTX *sha;	/* the pack's checksum */
	uLong crc;		/* the entry's */
	uint64_t size, fed;
	unsigned char trailer[OID_RAW];
	int finished, committed;
	unsigned char buf[PACKW_BUF];
};

static int write_all(int fd, const void *p, size_t n, const char *path,
		     struct err *e)
{
	return write_full(fd, p, n) < 0 ?
		err_errno(e, ERR_IO, "cannot write %s", path) : 0;
}

/* Bytes of the pack: into the checksum (and the entry's CRC when
 * entry), then to the file. */
static int pack_out(struct packw *w, const void *p, size_t n, int entry,
		    struct err *e)
{
	EVP_DigestUpdate(w->sha, p, n);
	if (entry)
		w->crc = crc32(w->crc, p, (uInt)n);
	return write_all(w->fd, p, n, w->tmp_pack, e);
}

/* The temp files' names: the prefix, then mkstemp's six characters. */
#define TMP_PACK "tmp_migrate_pack_"
#define TMP_IDX "tmp_migrate_idx_"

int packw_is_temp(const char *name)
{
	return (!strncmp(name, TMP_PACK, strlen(TMP_PACK)) &&
		file_is_mkstemp_tail(name + strlen(TMP_PACK))) ||
	       (!strncmp(name, TMP_IDX, strlen(TMP_IDX)) &&
		file_is_mkstemp_tail(name + strlen(TMP_IDX)));
}

static int tmp_file(char **path, const char *dir, const char *prefix,
		    struct err *e)
{
	size_t n = strlen(dir) + strlen(prefix) + 9;
	int fd;

	*path = xmalloc(n);
	snprintf(*path, n, "%s/%sXXXXXX", dir, prefix);
	fd = mkstemp(*path);
	if (fd < 0) {
		err_errno(e, ERR_IO, "cannot create a temp file in %s", dir);
		free(*path);
		*path = NULL;
	}
	return fd;
}

int packw_begin(struct packw **out, const char *objects_dir, uint64_t size,
		int level, struct err *e)
{
	static const unsigned char head[12] = { 'P', 'A', 'C', 'K', 0, 0, 0, 2,
						 0, 0, 0, 1 };
	unsigned char hdr[16];
	struct packw *w = xcalloc(1, sizeof(*w));
	size_t n = 0, len = strlen(objects_dir) + 6;
	uint64_t s = size;

	*out = NULL;
	w->fd = -1;
	w->size = size;
	w->dir = xmalloc(len);
	snprintf(w->dir, len, "%s/pack", objects_dir);
	w->sha = EVP_MD_CTX_new();
	if (!w->sha) {
		packw_free(w);
		return err_set(e, ERR_IO, "out of memory");
	}
	EVP_DigestInit_ex(w->sha, EVP_sha1(), NULL);
	if (deflateInit(&w->z, level) != Z_OK) {
		packw_free(w);
		return err_set(e, ERR_IO, "zlib: cannot start a stream");
	}
	w->z_live = 1;
	w->fd = tmp_file(&w->tmp_pack, w->dir, TMP_PACK, e);
	if (w->fd < 0) {
		packw_free(w);
		return -1;
	}
	/* the entry's header: type 3 (a blob) and the size, 4 bits then 7
	 * per byte */
	hdr[n++] = (unsigned char)(3 << 4 | (s & 15));
	s >>= 4;
	while (s) {
		hdr[n - 1] |= 0x80;
		hdr[n++] = (unsigned char)(s & 0x7f);
		s >>= 7;
	}
	w->crc = crc32(0, NULL, 0);
	if (pack_out(w, head, sizeof(head), 0, e) < 0 ||
	    pack_out(w, hdr, n, 1, e) < 0) {
		packw_free(w);
		return -1;
	}
	*out = w;
	return 0;
}

/* Deflates what is in w->z with flush, writing what comes out. */
static int deflate_out(struct packw *w, int flush, struct err *e)
{
	int zr;

	do {
		w->z.next_out = w->buf;
		w->z.avail_out = (uInt)PACKW_BUF;
		zr = deflate(&w->z, flush);
		if (zr == Z_STREAM_ERROR)
			return err_set(e, ERR_IO, "zlib: deflate failed");
		if (pack_out(w, w->buf, PACKW_BUF - w->z.avail_out, 1, e) < 0)
			return -1;
	} while (w->z.avail_out == 0 || (flush == Z_FINISH && zr != Z_STREAM_END));
	return 0;
}

int packw_write(struct packw *w, const void *p, size_t n, struct err *e)
{
	const unsigned char *c = p;

	if (n > w->size - w->fed)
		return err_set(e, ERR_IO, "%s: more bytes than the blob's size",
			       w->tmp_pack);
	w->fed += n;
	while (n) {
		size_t k = n > ((size_t)1 << 30) ? (size_t)1 << 30 : n;

		w->z.next_in = (Bytef *)(uintptr_t)c;
		w->z.avail_in = (uInt)k;
		if (deflate_out(w, Z_NO_FLUSH, e) < 0)
			return -1;
		c += k;
		n -= k;
	}
	return 0;
}

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static int sync_close(int *fd, const char *path, struct err *e)
{
	int rc = 0;

	if (fchmod(*fd, 0444) < 0 || fsync(*fd) < 0)
		rc = err_errno(e, ERR_IO, "cannot sync %s", path);
	if (close(*fd) < 0 && rc == 0)
		rc = err_errno(e, ERR_IO, "cannot close %s", path);
	*fd = -1;
	return rc;
}

/* The version 2 index of the one object. */
static int write_idx(struct packw *w, const struct oid *id, struct err *e)
{
	unsigned char idx[8 + 256 * 4 + OID_RAW + 4 + 4 + 2 * OID_RAW], *p = idx;
	unsigned int n;
	int i, fd, rc;

	memcpy(p, "\377tOc\0\0\0\2", 8);
	p += 8;
	for (i = 0; i < 256; i++, p += 4)	/* fan-out: objects up to byte i */
		put32(p, i >= id->hash[0]);
	memcpy(p, id->hash, OID_RAW);
	p += OID_RAW;
	put32(p, (uint32_t)w->crc);
	put32(p + 4, 12);		/* the entry's offset */
	p += 8;
	memcpy(p, w->trailer, OID_RAW);
	p += OID_RAW;
	EVP_DigestInit_ex(w->sha, EVP_sha1(), NULL);
	EVP_DigestUpdate(w->sha, idx, (size_t)(p - idx));
	EVP_DigestFinal_ex(w->sha, p, &n);
	p += OID_RAW;
	fd = tmp_file(&w->tmp_idx, w->dir, TMP_IDX, e);
	if (fd < 0)
		return -1;
	rc = write_all(fd, idx, (size_t)(p - idx), w->tmp_idx, e);
	if (rc == 0)
		return sync_close(&fd, w->tmp_idx, e);
	close(fd);
	return rc;
}

int packw_finish(struct packw *w, const struct oid *id, struct err *e)
{
	unsigned int n;

	if (w->fed != w->size)
		return err_set(e, ERR_IO, "%s: %llu bytes of a blob of %llu",
			       w->tmp_pack, (unsigned long long)w->fed,
			       (unsigned long long)w->size);
	w->z.next_in = NULL;
	w->z.avail_in = 0;
	if (deflate_out(w, Z_FINISH, e) < 0)
		return -1;
	deflateEnd(&w->z);
	w->z_live = 0;
	EVP_DigestFinal_ex(w->sha, w->trailer, &n);
	if (write_all(w->fd, w->trailer, OID_RAW, w->tmp_pack, e) < 0 ||
	    sync_close(&w->fd, w->tmp_pack, e) < 0 || write_idx(w, id, e) < 0)
		return -1;
	w->finished = 1;
	return 0;
}

/*
 * Gives tmp the name to, which must not exist: 1 done, 0 when to exists
 * already (tmp stays), -1 (e set). A hard link where the file system has
 * them, so that an existing file is never replaced; else a rename after a
 * look.
 */
static int place(const char *tmp, const char *to, struct err *e)
{
	struct stat st;

	if (link(tmp, to) == 0) {
		unlink(tmp);
		return 1;
	}
	if (errno == EEXIST)
		return 0;
	if (lstat(to, &st) == 0)
		return 0;
	if (rename(tmp, to) == 0)
		return 1;
	return err_errno(e, ERR_IO, "cannot rename %s to %s", tmp, to);
}

int packw_commit(struct packw *w, struct buf *name, struct err *e)
{
	char hex[OID_HEX + 1];
	struct oid t;
	size_t base;
	int r, ri;

	if (!w->finished)
		return err_set(e, ERR_IO, "%s: the pack is not finished", w->tmp_pack);
	memcpy(t.hash, w->trailer, OID_RAW);
	buf_reset(name);
	buf_printf(name, "%s/pack-%s.", w->dir, oid_hex(&t, hex));
	base = name->len;
	buf_adds(name, "pack");
	/* a pack of that name holds these very bytes (its name is their
	 * SHA-1): one an earlier run wrote is left as it is, and is not this
	 * run's to drop; its index is given too if a run killed between the
	 * two names left it without one */
	r = place(w->tmp_pack, name->ptr, e);
	if (r < 0)
		return -1;
	if (r == 1) {
		free(w->tmp_pack);
		w->tmp_pack = NULL;
	}
	name->len = base;
	buf_adds(name, "idx");
	ri = place(w->tmp_idx, name->ptr, e);
	if (ri < 0) {
		if (r == 1) {
			name->len = base;
			buf_adds(name, "pack");
			unlink(name->ptr);	/* ours, and no index names it */
		}
		return -1;
	}
	if (ri == 1) {
		free(w->tmp_idx);
		w->tmp_idx = NULL;
	}
	if (r == 0)
		return 0;	/* packw_free removes what is left */
	name->len = base - 1;	/* the name without .pack or .idx */
	name->ptr[name->len] = '\0';
	w->committed = 1;
	return 1;
}

void packw_free(struct packw *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	if (w->tmp_pack)
		unlink(w->tmp_pack);
	if (w->tmp_idx)
		unlink(w->tmp_idx);
	if (w->z_live)
		deflateEnd(&w->z);
	EVP_MD_CTX_free(w->sha);
	free(w->tmp_pack);
	free(w->tmp_idx);
	free(w->dir);
	free(w);
}
