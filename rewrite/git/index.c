/*
 * index.c - git's index file (docs/FORMATS.md 9.6), versions 2 to 4, read
 * under git's own lock (<index>.lock, created exclusively) so that the stat
 * data of entries whose files another hand wrote can be set, and written
 * back as git writes it: the whole file to the lock, its SHA-1 trailer
 * recomputed, renamed over the index.
 * Only the stat fields change; sizes, offsets and extensions stay as they
 * were, so the extensions that record offsets (EOIE, IEOT) stay true.
 */
#include "git.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#define IX_HEADER 12
#define IX_STAT 40		/* ten 32-bit stat and mode fields */
#define IX_FLAGS (IX_STAT + OID_RAW)
#define IX_EXTENDED 0x4000
#define IX_STAGE 0x3000
#define IX_NAMEMASK 0x0fff
#define IX_SKIP_WORKTREE 0x4000

struct ix_entry {
	size_t off;		/* of the entry in the file */
	char *path;
	uint32_t mode;
	unsigned stage;
	int skip_worktree;
};

struct gitindex {
	char *path, *lock;
	int fd;			/* the lock's */
	struct buf file;
	size_t end;		/* of the last entry */
	struct ix_entry *e;
	size_t n;
	struct timespec newest;	/* the latest mtime set */
};

static uint32_t get_be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static void put_be32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

/* Version 4's prefix length: the offset encoding of OFS_DELTA. */
static int get_varint(const unsigned char **p, const unsigned char *end,
		      size_t *out)
{
	const unsigned char *q = *p;
	size_t v;
	unsigned char c;

	if (q >= end)
		return -1;
	c = *q++;
	v = c & 127;
	while (c & 128) {
		if (q >= end || v > (SIZE_MAX >> 8))
			return -1;
		c = *q++;
		v = ((v + 1) << 7) | (c & 127);
	}
	*p = q;
	*out = v;
	return 0;
}

static int bad(struct gitindex *ix, size_t off, struct err *e, const char *what)
{
	return err_set(e, ERR_IO, "%s: %s at byte %zu; git would refuse it too "
		       "(`git status` says more)", ix->path, what, off);
}

static int parse(struct gitindex *ix, struct err *e)
{
	const unsigned char *base = (const unsigned char *)ix->file.ptr, *p, *end;
	uint32_t version, count, i;
	char *prev = xstrdup("");
	size_t prevlen = 0;

	if (ix->file.len < IX_HEADER + OID_RAW || memcmp(base, "DIRC", 4))
		return free(prev), bad(ix, 0, e, "no index signature");
	version = get_be32(base + 4);
	count = get_be32(base + 8);
	if (version < 2 || version > 4)
		return free(prev), bad(ix, 4, e, "an index version other than 2, 3 or 4");
	if (count > ix->file.len / (IX_FLAGS + 3))
		return free(prev), bad(ix, 8, e, "more entries than bytes");
	end = base + ix->file.len - OID_RAW;
	p = base + IX_HEADER;
	ix->e = xcalloc(count ? count : 1, sizeof(*ix->e));
	for (i = 0; i < count; i++) {
		struct ix_entry *x = &ix->e[i];
		const unsigned char *name, *nul;
		unsigned flags, xflags = 0;
		size_t hdr = IX_FLAGS + 2, strip = 0, len;

		if ((size_t)(end - p) < hdr)
			return free(prev), bad(ix, (size_t)(p - base), e, "a cut entry");
		x->off = (size_t)(p - base);
		x->mode = get_be32(p + 24);
		flags = (unsigned)p[IX_FLAGS] << 8 | p[IX_FLAGS + 1];
		if (flags & IX_EXTENDED) {
			if (version < 3 || (size_t)(end - p) < hdr + 2)
				return free(prev), bad(ix, x->off, e, "a bad extended entry");
			xflags = (unsigned)p[hdr] << 8 | p[hdr + 1];
			hdr += 2;
		}
		x->stage = (flags & IX_STAGE) >> 12;
		x->skip_worktree = !!(xflags & IX_SKIP_WORKTREE);
		name = p + hdr;
		if (version == 4 && get_varint(&name, end, &strip) < 0)
			return free(prev), bad(ix, x->off, e, "a bad path prefix");
		nul = memchr(name, 0, (size_t)(end - name));
		if (!nul || (version == 4 && strip > prevlen))
			return free(prev), bad(ix, x->off, e, "a bad path");
		len = (size_t)(nul - name);
		if (version == 4) {
			x->path = xmalloc(prevlen - strip + len + 1);
			memcpy(x->path, prev, prevlen - strip);
			memcpy(x->path + prevlen - strip, name, len + 1);
			p = nul + 1;
		} else {
			size_t size = (hdr + len + 8) & ~(size_t)7;

			if ((size_t)(end - p) < size)
				return free(prev), bad(ix, x->off, e, "a cut entry");
			x->path = xmemdup(name, len);
			p += size;
		}
		free(prev);
		prev = xstrdup(x->path);
		prevlen = strlen(prev);
		ix->n++;
	}
	free(prev);
	ix->end = (size_t)(p - base);
	return 0;
}

static void sha1(const struct buf *file, unsigned char out[OID_RAW])
{
	unsigned int n = 0;

	if (!EVP_Digest(file->ptr, file->len - OID_RAW, out, &n, EVP_sha1(), NULL))
		die("SHA-1 of the index failed");
}

/* The trailer is the SHA-1 of the rest (or zeros: index.skipHash): an
 * index that fails it is corrupt, and is not written back as if sound. */
static int verify(struct gitindex *ix, struct err *e)
{
	static const unsigned char zero[OID_RAW];
	unsigned char h[OID_RAW];
	const unsigned char *trailer;

	if (ix->file.len < IX_HEADER + OID_RAW)
		return bad(ix, 0, e, "a cut header");
	trailer = (const unsigned char *)ix->file.ptr + ix->file.len - OID_RAW;
	if (!memcmp(trailer, zero, OID_RAW))
		return 0;
	sha1(&ix->file, h);
	if (memcmp(h, trailer, OID_RAW))
		return bad(ix, ix->file.len - OID_RAW, e, "a checksum that does not match");
	return 0;
}

int gitindex_open(struct gitindex **out, const char *gitdir, struct err *e)
{
	struct gitindex *ix = xcalloc(1, sizeof(*ix));

	*out = NULL;
	ix->path = path_join(gitdir, "index");
	ix->lock = path_join(gitdir, "index.lock");
	buf_init(&ix->file, SIZE_MAX / 2);
	ix->fd = open(ix->lock, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (ix->fd < 0) {
		err_errno(e, ERR_IO, "%s: cannot lock the index (another git "
			  "process runs there?)", ix->lock);
		ix->lock[0] = '\0';
		gitindex_free(ix);
		return -1;
	}
	if (file_read(ix->path, &ix->file, e) < 0 || verify(ix, e) < 0 ||
	    parse(ix, e) < 0) {
		gitindex_free(ix);
		return -1;
	}
	*out = ix;
	return 0;
}

size_t gitindex_count(const struct gitindex *ix)
{
	return ix->n;
}

int gitindex_has_ext(const struct gitindex *ix, const char sig[4])
{
	const unsigned char *p = (const unsigned char *)ix->file.ptr + ix->end,
			    *end = (const unsigned char *)ix->file.ptr +
				   ix->file.len - OID_RAW;

	while ((size_t)(end - p) >= 8) {
		uint32_t size = get_be32(p + 4);

		if (!memcmp(p, sig, 4))
			return 1;
		if ((size_t)(end - p) - 8 < size)
			break;
		p += 8 + size;
	}
	return 0;
}

void gitindex_entry(const struct gitindex *ix, size_t i,
		    struct gitindex_entry *out)
{
	const struct ix_entry *x = &ix->e[i];

	out->path = x->path;
	out->mode = x->mode;
	memcpy(out->oid.hash, ix->file.ptr + x->off + IX_STAT, OID_RAW);
	out->stage = x->stage;
	out->skip_worktree = x->skip_worktree;
}

static int ts_after(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec > b->tv_sec ||
	       (a->tv_sec == b->tv_sec && a->tv_nsec > b->tv_nsec);
}

void gitindex_set_stat(struct gitindex *ix, size_t i, const struct stat *st)
{
	unsigned char *p = (unsigned char *)ix->file.ptr + ix->e[i].off;
	uint32_t size = (uint32_t)st->st_size;

	if (ts_after(&st->st_mtim, &ix->newest))
		ix->newest = st->st_mtim;
	/* as git records it: a size that is a multiple of 4 GiB is not 0 */
	if (!size && st->st_size)
		size = 0x80000000u;
	put_be32(p, (uint32_t)st->st_ctim.tv_sec);
	put_be32(p + 4, (uint32_t)st->st_ctim.tv_nsec);
	put_be32(p + 8, (uint32_t)st->st_mtim.tv_sec);
	put_be32(p + 12, (uint32_t)st->st_mtim.tv_nsec);
	put_be32(p + 16, (uint32_t)st->st_dev);
	put_be32(p + 20, (uint32_t)st->st_ino);
	put_be32(p + 28, (uint32_t)st->st_uid);
	put_be32(p + 32, (uint32_t)st->st_gid);
	put_be32(p + 36, size);
}

int gitindex_commit(struct gitindex *ix, struct err *e)
{
	struct stat st;
	int tries;

	/* a true trailer is what git checks (or skips: index.skipHash) */
	sha1(&ix->file, (unsigned char *)ix->file.ptr + ix->file.len - OID_RAW);
	if (write_full(ix->fd, ix->file.ptr, ix->file.len) < 0)
		return err_errno(e, ERR_IO, "%s: cannot write", ix->lock);
	/* an entry whose file is as new as the index is racily clean: git
	 * reads the file again (through its clean filter). The index gets
	 * a time after every file's; the clock ticks every few milliseconds.
	 * (A git built without nanosecond times compares seconds: the files
	 * of the index's second stay racily clean, as after its own
	 * check-out.) */
	for (tries = 0; tries < 200; tries++) {
		if (fstat(ix->fd, &st) < 0)
			return err_errno(e, ERR_IO, "%s: cannot stat", ix->lock);
		if (ts_after(&st.st_mtim, &ix->newest))
			break;
		usleep(1000);
		if (futimens(ix->fd, NULL) < 0)
			return err_errno(e, ERR_IO, "%s: cannot touch", ix->lock);
	}
	if (close(ix->fd) < 0) {
		ix->fd = -1;
		return err_errno(e, ERR_IO, "%s: cannot write", ix->lock);
	}
	ix->fd = -1;
	if (rename(ix->lock, ix->path) < 0)
		return err_errno(e, ERR_IO, "%s: cannot rename to %s", ix->lock,
				 ix->path);
	ix->lock[0] = '\0';
	return 0;
}

void gitindex_free(struct gitindex *ix)
{
	size_t i;

	if (!ix)
		return;
	if (ix->fd >= 0)
		close(ix->fd);
	if (ix->lock[0])
		unlink(ix->lock);
	for (i = 0; i < ix->n; i++)
		free(ix->e[i].path);
	free(ix->e);
	buf_release(&ix->file);
	free(ix->path);
	free(ix->lock);
	free(ix);
}
