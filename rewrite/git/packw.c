/*
 * packw.c - packs written by migrate (docs/FORMATS.md 9): "PACK", version
 * 2, the object count, the entries (each its kind and size, then the
 * content deflated at the level asked), and its SHA-1; the index is
 * version 2 (ids sorted, each entry's CRC-32 and offset). Both are written
 * under temp names in objects/pack (tmp_migrate_*, which `migrate run`
 * removes when a killed run left them) and fsynced; a commit gives them
 * their names, the pack first, so git never sees an index without its
 * pack.
 *
 * Two writers share that: packw, a pack of one blob written as the blob
 * streams in (a thread of migrate's stores it while git fast-import stores
 * the rest), and packm, a pack of many objects, whole or as OFS_DELTAs
 * against one before them, written as they come.
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

/* What packw and packm both hold: the folder, the temp files not named
 * yet, the deflate stream and the pack's checksum. */
struct pack_files {
	char *dir;		/* objects/pack */
	char *tmp_pack, *tmp_idx;
	z_stream z;
	int z_live;
	EVP_MD_CTX *sha;	/* the pack's checksum */
};

/* Removes the temp files not named, and frees the rest. */
static void pack_files_release(struct pack_files *f)
{
	if (f->tmp_pack)
		unlink(f->tmp_pack);
	if (f->tmp_idx)
		unlink(f->tmp_idx);
	if (f->z_live)
		deflateEnd(&f->z);
	EVP_MD_CTX_free(f->sha);
	free(f->tmp_pack);
	free(f->tmp_idx);
	free(f->dir);
}

struct packw {
	struct pack_files f;
	int fd;
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
	EVP_DigestUpdate(w->f.sha, p, n);
	if (entry)
		w->crc = crc32(w->crc, p, (uInt)n);
	return write_all(w->fd, p, n, w->f.tmp_pack, e);
}

#define KIND_OFS_DELTA 6

/* The kind a pack entry gives an object type (not enum obj_type's
 * numbers); 0 for none. */
static int obj_kind(enum obj_type t)
{
	switch (t) {
	case OBJ_COMMIT: return 1;
	case OBJ_TREE: return 2;
	case OBJ_BLOB: return 3;
	case OBJ_TAG: return 4;
	default: return 0;
	}
}

/* An entry's header: its kind (1-4 an object type, 6 OFS_DELTA) and
 * size, 4 bits then 7 per byte, low first. Its length (at most 10). */
static size_t entry_header(unsigned char *hdr, int kind, uint64_t size)
{
	size_t n = 0;

	hdr[n++] = (unsigned char)(kind << 4 | (size & 15));
	size >>= 4;
	while (size) {
		hdr[n - 1] |= 0x80;
		hdr[n++] = (unsigned char)(size & 0x7f);
		size >>= 7;
	}
	return n;
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
	size_t n, len = strlen(objects_dir) + 6;

	*out = NULL;
	w->fd = -1;
	w->size = size;
	w->f.dir = xmalloc(len);
	snprintf(w->f.dir, len, "%s/pack", objects_dir);
	w->f.sha = EVP_MD_CTX_new();
	if (!w->f.sha) {
		packw_free(w);
		return err_set(e, ERR_IO, "out of memory");
	}
	EVP_DigestInit_ex(w->f.sha, EVP_sha1(), NULL);
	if (deflateInit(&w->f.z, level) != Z_OK) {
		packw_free(w);
		return err_set(e, ERR_IO, "zlib: cannot start a stream");
	}
	w->f.z_live = 1;
	w->fd = tmp_file(&w->f.tmp_pack, w->f.dir, TMP_PACK, e);
	if (w->fd < 0) {
		packw_free(w);
		return -1;
	}
	n = entry_header(hdr, obj_kind(OBJ_BLOB), size);
	w->crc = crc32(0, NULL, 0);
	if (pack_out(w, head, sizeof(head), 0, e) < 0 ||
	    pack_out(w, hdr, n, 1, e) < 0) {
		packw_free(w);
		return -1;
	}
	*out = w;
	return 0;
}

/* Deflates what is in w->f.z with flush, writing what comes out. */
static int deflate_out(struct packw *w, int flush, struct err *e)
{
	int zr;

	do {
		w->f.z.next_out = w->buf;
		w->f.z.avail_out = (uInt)PACKW_BUF;
		zr = deflate(&w->f.z, flush);
		if (zr == Z_STREAM_ERROR)
			return err_set(e, ERR_IO, "zlib: deflate failed");
		if (pack_out(w, w->buf, PACKW_BUF - w->f.z.avail_out, 1, e) < 0)
			return -1;
	} while (w->f.z.avail_out == 0 || (flush == Z_FINISH && zr != Z_STREAM_END));
	return 0;
}

int packw_write(struct packw *w, const void *p, size_t n, struct err *e)
{
	const unsigned char *c = p;

	if (n > w->size - w->fed)
		return err_set(e, ERR_IO, "%s: more bytes than the blob's size",
			       w->f.tmp_pack);
	w->fed += n;
	while (n) {
		size_t k = n > ((size_t)1 << 30) ? (size_t)1 << 30 : n;

		w->f.z.next_in = (Bytef *)(uintptr_t)c;
		w->f.z.avail_in = (uInt)k;
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

/* An object of a pack, as its index lists it. */
struct pack_ent {
	struct oid id;
	uint32_t crc;
	uint64_t off;
};

/* A file written through a buffer, its bytes into sha (if any) as they
 * go. */
struct ofile {
	int fd;
	const char *path;
	EVP_MD_CTX *sha;
	size_t len;
	unsigned char buf[PACKW_BUF];
};

static int ofile_flush(struct ofile *o, struct err *e)
{
	size_t n = o->len;

	o->len = 0;
	return write_all(o->fd, o->buf, n, o->path, e);
}

static int ofile_add(struct ofile *o, const void *p, size_t n, struct err *e)
{
	if (o->sha)
		EVP_DigestUpdate(o->sha, p, n);
	if (n > PACKW_BUF - o->len && ofile_flush(o, e) < 0)
		return -1;
	if (n >= PACKW_BUF)
		return write_all(o->fd, p, n, o->path, e);
	memcpy(o->buf + o->len, p, n);
	o->len += n;
	return 0;
}

/*
 * The version 2 index of the n objects of ents (sorted by id, distinct)
 * in a pack whose checksum is trailer, written to a new temp file in dir
 * (its name in *tmp, the caller's), fsynced: the fan-out (how many ids
 * start with a byte up to each), the ids, the CRC-32s, the offsets (from
 * 2^31 on, the index into a table of 64-bit ones that follows), the pack's
 * checksum and the index's own. 0 or -1 (e set; *tmp may name a file the
 * caller removes).
 */
static int idx_write(const char *dir, const struct pack_ent *ents, size_t n,
		     const unsigned char *trailer, EVP_MD_CTX *sha, char **tmp,
		     struct err *e)
{
	struct ofile *o = xmalloc(sizeof(*o));
	unsigned char b[OID_RAW];
	unsigned int len;
	size_t i, k, nlarge = 0;
	int rc = 0;

	o->fd = tmp_file(tmp, dir, TMP_IDX, e);
	if (o->fd < 0) {
		free(o);
		return -1;
	}
	o->path = *tmp;
	o->sha = sha;
	o->len = 0;
	EVP_DigestInit_ex(sha, EVP_sha1(), NULL);
	rc = ofile_add(o, "\377tOc\0\0\0\2", 8, e);
	for (k = 0, i = 0; k < 256 && rc == 0; k++) {
		while (i < n && ents[i].id.hash[0] <= k)
			i++;
		put32(b, (uint32_t)i);
		rc = ofile_add(o, b, 4, e);
	}
	for (i = 0; i < n && rc == 0; i++)
		rc = ofile_add(o, ents[i].id.hash, OID_RAW, e);
	for (i = 0; i < n && rc == 0; i++) {
		put32(b, ents[i].crc);
		rc = ofile_add(o, b, 4, e);
	}
	for (i = 0; i < n && rc == 0; i++) {
		if (ents[i].off < 0x80000000u)
			put32(b, (uint32_t)ents[i].off);
		else
			put32(b, 0x80000000u | (uint32_t)nlarge++);
		rc = ofile_add(o, b, 4, e);
	}
	for (i = 0; i < n && rc == 0; i++)
		if (ents[i].off >= 0x80000000u) {
			put32(b, (uint32_t)(ents[i].off >> 32));
			put32(b + 4, (uint32_t)ents[i].off);
			rc = ofile_add(o, b, 8, e);
		}
	if (rc == 0)
		rc = ofile_add(o, trailer, OID_RAW, e);
	if (rc == 0) {
		EVP_DigestFinal_ex(sha, b, &len);
		rc = ofile_flush(o, e);
		if (rc == 0)
			rc = write_all(o->fd, b, OID_RAW, *tmp, e);
	}
	if (rc == 0)
		rc = sync_close(&o->fd, *tmp, e);
	if (o->fd >= 0)
		close(o->fd);
	free(o);
	return rc;
}

/* The version 2 index of the one object. */
static int write_idx(struct packw *w, const struct oid *id, struct err *e)
{
	struct pack_ent ent;

	ent.id = *id;
	ent.crc = (uint32_t)w->crc;
	ent.off = 12;
	return idx_write(w->f.dir, &ent, 1, w->trailer, w->f.sha, &w->f.tmp_idx, e);
}

int packw_finish(struct packw *w, const struct oid *id, struct err *e)
{
	unsigned int n;

	if (w->fed != w->size)
		return err_set(e, ERR_IO, "%s: %llu bytes of a blob of %llu",
			       w->f.tmp_pack, (unsigned long long)w->fed,
			       (unsigned long long)w->size);
	w->f.z.next_in = NULL;
	w->f.z.avail_in = 0;
	if (deflate_out(w, Z_FINISH, e) < 0)
		return -1;
	deflateEnd(&w->f.z);
	w->f.z_live = 0;
	EVP_DigestFinal_ex(w->f.sha, w->trailer, &n);
	if (write_all(w->fd, w->trailer, OID_RAW, w->f.tmp_pack, e) < 0 ||
	    sync_close(&w->fd, w->f.tmp_pack, e) < 0 || write_idx(w, id, e) < 0)
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

/*
 * Gives the finished temp files *tmp_pack and *tmp_idx (in dir) their
 * names, pack-<trailer>.pack then .idx; name gets the path without
 * ".pack". A name given is freed and NULLed, the rest is the caller's to
 * remove. 1 done, 0 when a pack of that name (so of these very bytes) was
 * there already, -1 (e set).
 */
static int give_names(const char *dir, const unsigned char *trailer,
		      char **tmp_pack, char **tmp_idx, struct buf *name,
		      struct err *e)
{
	char hex[OID_HEX + 1];
	struct oid t;
	size_t base;
	int r, ri;

	memcpy(t.hash, trailer, OID_RAW);
	buf_reset(name);
	buf_printf(name, "%s/pack-%s.", dir, oid_hex(&t, hex));
	base = name->len;
	buf_adds(name, "pack");
	/* a pack of that name holds these very bytes (its name is their
	 * SHA-1): one an earlier run wrote is left as it is, and is not this
	 * run's to drop; its index is given too if a run killed between the
	 * two names left it without one */
	r = place(*tmp_pack, name->ptr, e);
	if (r < 0)
		return -1;
	if (r == 1) {
		free(*tmp_pack);
		*tmp_pack = NULL;
	}
	name->len = base;
	buf_adds(name, "idx");
	ri = place(*tmp_idx, name->ptr, e);
	if (ri < 0) {
		if (r == 1) {
			name->len = base;
			buf_adds(name, "pack");
			unlink(name->ptr);	/* ours, and no index names it */
		}
		return -1;
	}
	if (ri == 1) {
		free(*tmp_idx);
		*tmp_idx = NULL;
	}
	if (r == 0)
		return 0;
	name->len = base - 1;	/* the name without .pack or .idx */
	name->ptr[name->len] = '\0';
	return 1;
}

int packw_commit(struct packw *w, struct buf *name, struct err *e)
{
	int r;

	if (!w->finished)
		return err_set(e, ERR_IO, "%s: the pack is not finished", w->f.tmp_pack);
	r = give_names(w->f.dir, w->trailer, &w->f.tmp_pack, &w->f.tmp_idx, name, e);
	if (r == 1)
		w->committed = 1;
	return r;	/* 0: packw_free removes what is left */
}

void packw_free(struct packw *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	pack_files_release(&w->f);
	free(w);
}

/* ---- packm: a pack of many objects ---- */

struct packm {
	struct pack_files f;
	struct ofile *o;	/* the pack, its checksum made at the end */
	int done;		/* committed, or failed: no more objects */
	uint64_t off;		/* the pack's bytes so far */
	uLong crc;		/* the entry being written's */
	/*
	 * The index's table, kept as runs sorted by id whose sizes are the
	 * bits of n, largest first (a binary counter: an entry added is a
	 * run of 1, merged with the runs of its size before it), so that an
	 * id is found by a binary search in each run.
	 */
	struct pack_ent *ents, *scratch;
	size_t n, alloc, scratch_alloc;
	unsigned char zbuf[PACKW_BUF];
};

static const struct pack_ent *packm_find(const struct packm *w,
					 const struct oid *id)
{
	size_t pos = 0, len;
	int b;

	for (b = (int)(sizeof(size_t) * 8) - 1; b >= 0; b--) {
		size_t lo, hi;

		len = (size_t)1 << b;
		if (!(w->n & len))
			continue;
		lo = pos;
		hi = pos + len;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			int c = memcmp(w->ents[mid].id.hash, id->hash, OID_RAW);

			if (c == 0)
				return &w->ents[mid];
			if (c < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		pos += len;
	}
	return NULL;
}

/* Appends an entry (its id not in the table) and merges the runs. */
static void packm_record(struct packm *w, const struct oid *id, uint32_t crc,
			 uint64_t off)
{
	size_t run, old = w->n;

	if (w->n == w->alloc) {
		w->alloc = w->alloc ? w->alloc * 2 : 1024;
		w->ents = xrealloc(w->ents, w->alloc * sizeof(*w->ents));
	}
	w->ents[w->n].id = *id;
	w->ents[w->n].crc = crc;
	w->ents[w->n].off = off;
	w->n++;
	for (run = 1; old & run; run *= 2) {
		/* the run [n - 2 run, n - run) and the one after it */
		struct pack_ent *left = w->ents + w->n - 2 * run;
		struct pack_ent *right = left + run, *end = right + run;
		struct pack_ent *a, *dst = left;

		if (run > w->scratch_alloc) {
			w->scratch_alloc = run;
			w->scratch = xrealloc(w->scratch, run * sizeof(*w->scratch));
		}
		memcpy(w->scratch, left, run * sizeof(*left));
		a = w->scratch;
		while (a < w->scratch + run && right < end)
			*dst++ = memcmp(a->id.hash, right->id.hash, OID_RAW) < 0 ?
				 *a++ : *right++;
		while (a < w->scratch + run)
			*dst++ = *a++;
	}
}

int packm_begin(struct packm **out, const char *objects_dir, int level,
		struct err *e)
{
	static const unsigned char head[12] = { 'P', 'A', 'C', 'K', 0, 0, 0, 2,
						 0, 0, 0, 0 };
	struct packm *w = xcalloc(1, sizeof(*w));
	size_t len = strlen(objects_dir) + 6;

	*out = NULL;
	w->f.dir = xmalloc(len);
	snprintf(w->f.dir, len, "%s/pack", objects_dir);
	w->o = xcalloc(1, sizeof(*w->o));
	w->o->fd = -1;
	w->f.sha = EVP_MD_CTX_new();
	if (!w->f.sha) {
		packm_free(w);
		return err_set(e, ERR_IO, "out of memory");
	}
	if (deflateInit(&w->f.z, level) != Z_OK) {
		packm_free(w);
		return err_set(e, ERR_IO, "zlib: cannot start a stream");
	}
	w->f.z_live = 1;
	w->o->fd = tmp_file(&w->f.tmp_pack, w->f.dir, TMP_PACK, e);
	if (w->o->fd < 0) {
		packm_free(w);
		return -1;
	}
	w->o->path = w->f.tmp_pack;
	/* the object count is put in at the end */
	if (ofile_add(w->o, head, sizeof(head), e) < 0) {
		packm_free(w);
		return -1;
	}
	w->off = sizeof(head);
	*out = w;
	return 0;
}

/* Bytes of the entry being written: into its CRC, then to the file. */
static int packm_out(struct packm *w, const void *p, size_t n, struct err *e)
{
	w->crc = crc32(w->crc, p, (uInt)n);
	w->off += n;
	return ofile_add(w->o, p, n, e);
}

/* The n bytes at p deflated, as one zlib stream. */
static int packm_deflate(struct packm *w, const void *p, size_t n,
			 struct err *e)
{
	const unsigned char *c = p;
	int zr, flush;

	if (deflateReset(&w->f.z) != Z_OK)
		return err_set(e, ERR_IO, "zlib: cannot restart a stream");
	do {
		size_t k = n > ((size_t)1 << 30) ? (size_t)1 << 30 : n;

		w->f.z.next_in = (Bytef *)(uintptr_t)c;
		w->f.z.avail_in = (uInt)k;
		c += k;
		n -= k;
		flush = n ? Z_NO_FLUSH : Z_FINISH;
		do {
			w->f.z.next_out = w->zbuf;
			w->f.z.avail_out = (uInt)PACKW_BUF;
			zr = deflate(&w->f.z, flush);
			if (zr == Z_STREAM_ERROR)
				return err_set(e, ERR_IO, "zlib: deflate failed");
			if (packm_out(w, w->zbuf, PACKW_BUF - w->f.z.avail_out, e) < 0)
				return -1;
		} while (w->f.z.avail_out == 0 ||
			 (flush == Z_FINISH && zr != Z_STREAM_END));
	} while (n);
	return 0;
}

/* Whether another object may be added: 0, or -1 with e set. */
static int packm_open(struct packm *w, struct err *e)
{
	if (w->done)
		return err_set(e, ERR_IO, "%s: the pack is closed", w->f.tmp_pack ?
			       w->f.tmp_pack : w->f.dir);
	if (w->n >= UINT32_MAX)
		return err_set(e, ERR_IO, "%s: too many objects for one pack",
			       w->f.tmp_pack);
	return 0;
}

int packm_add(struct packm *w, enum obj_type type, const struct oid *id,
	      const void *data, size_t len, struct err *e)
{
	unsigned char hdr[16];
	uint64_t start = w->off;
	int kind = obj_kind(type);

	if (packm_open(w, e) < 0)
		return -1;
	if (!kind)
		return err_set(e, ERR_IO, "%s: no object type %d", w->f.tmp_pack,
			       (int)type);
	if (packm_find(w, id))
		return 0;
	w->crc = crc32(0, NULL, 0);
	if (packm_out(w, hdr, entry_header(hdr, kind, len), e) < 0 ||
	    packm_deflate(w, data, len, e) < 0) {
		w->done = 1;	/* half an entry written */
		return -1;
	}
	packm_record(w, id, (uint32_t)w->crc, start);
	return 0;
}

int packm_add_delta(struct packm *w, const struct oid *id,
		    const struct oid *base, const void *delta,
		    size_t delta_len, struct err *e)
{
	unsigned char hdr[16], ofs[16];
	const struct pack_ent *b;
	uint64_t start = w->off, dist;
	size_t pos = sizeof(ofs) - 1;
	char hex[OID_HEX + 1];

	if (packm_open(w, e) < 0)
		return -1;
	if (packm_find(w, id))
		return 0;
	b = packm_find(w, base);
	if (!b)
		return err_set(e, ERR_IO, "%s: the base %s of a delta is not in the pack",
			       w->f.tmp_pack, oid_hex(base, hex));
	/* the distance back to the base: 7 bits a byte, high first, each
	 * byte but the last with its top bit set and one less (so that no
	 * two encodings mean the same) */
	dist = start - b->off;
	ofs[pos] = (unsigned char)(dist & 0x7f);
	while (dist >>= 7)
		ofs[--pos] = (unsigned char)(0x80 | (--dist & 0x7f));
	w->crc = crc32(0, NULL, 0);
	if (packm_out(w, hdr, entry_header(hdr, KIND_OFS_DELTA, delta_len), e) < 0 ||
	    packm_out(w, ofs + pos, sizeof(ofs) - pos, e) < 0 ||
	    packm_deflate(w, delta, delta_len, e) < 0) {
		w->done = 1;
		return -1;
	}
	packm_record(w, id, (uint32_t)w->crc, start);
	return 0;
}

uint32_t packm_count(const struct packm *w)
{
	return (uint32_t)w->n;
}

uint64_t packm_bytes(const struct packm *w)
{
	return w->off;
}

int packm_has(const struct packm *w, const struct oid *id)
{
	return packm_find(w, id) != NULL;
}

static int by_id(const void *a, const void *b)
{
	return memcmp(((const struct pack_ent *)a)->id.hash,
		      ((const struct pack_ent *)b)->id.hash, OID_RAW);
}

/* The object count into the header, then the checksum of the whole file
 * read back (as git fast-import does), written after it. */
static int packm_trailer(struct packm *w, unsigned char *trailer,
			 struct err *e)
{
	unsigned char count[4];
	uint64_t at = 0;
	unsigned int n;

	put32(count, (uint32_t)w->n);
	if (ofile_flush(w->o, e) < 0)
		return -1;
	if (pwrite(w->o->fd, count, 4, 8) != 4)
		return err_errno(e, ERR_IO, "cannot write %s", w->f.tmp_pack);
	EVP_DigestInit_ex(w->f.sha, EVP_sha1(), NULL);
	while (at < w->off) {
		size_t k = w->off - at < PACKW_BUF ? (size_t)(w->off - at) : PACKW_BUF;
		ssize_t r = pread(w->o->fd, w->zbuf, k, (off_t)at);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? err_errno(e, ERR_IO, "cannot read %s", w->f.tmp_pack) :
				       err_set(e, ERR_IO, "%s: shorter than written",
					       w->f.tmp_pack);
		EVP_DigestUpdate(w->f.sha, w->zbuf, (size_t)r);
		at += (uint64_t)r;
	}
	EVP_DigestFinal_ex(w->f.sha, trailer, &n);
	return write_all(w->o->fd, trailer, OID_RAW, w->f.tmp_pack, e);
}

int packm_commit(struct packm *w, struct buf *name, struct err *e)
{
	unsigned char trailer[OID_RAW];
	int r;

	if (w->done)
		return err_set(e, ERR_IO, "%s: the pack is closed", w->f.tmp_pack ?
			       w->f.tmp_pack : w->f.dir);
	w->done = 1;
	if (packm_trailer(w, trailer, e) < 0 ||
	    sync_close(&w->o->fd, w->f.tmp_pack, e) < 0)
		return -1;
	qsort(w->ents, w->n, sizeof(*w->ents), by_id);
	if (idx_write(w->f.dir, w->ents, w->n, trailer, w->f.sha, &w->f.tmp_idx, e) < 0)
		return -1;
	r = give_names(w->f.dir, trailer, &w->f.tmp_pack, &w->f.tmp_idx, name, e);
	return r;	/* 0 or -1: packm_free removes what is left */
}

void packm_free(struct packm *w)
{
	if (!w)
		return;
	if (w->o && w->o->fd >= 0)
		close(w->o->fd);
	pack_files_release(&w->f);
	free(w->o);
	free(w->ents);
	free(w->scratch);
	free(w);
}
