/*
 * pack.c - reading git's objects without git (docs/FORMATS.md 9): loose
 * objects, packs through their .idx (version 2, with the 64-bit offset
 * table) or a multi-pack-index, the alternates of the object directory
 * (recursively), OFS_DELTA and REF_DELTA chains with a bounded cache of
 * recent bases, and large whole objects streamed in chunks.
 *
 * Nothing read here is trusted: every offset, size and delta instruction
 * is checked against what is there, and every object is hashed on its way
 * out and compared with the id it was asked for, so a corrupt pack gives
 * an error naming the pack and the offset, never wrong bytes.
 */
#include "git.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uthash.h>
#include <zlib.h>

#define PACK_BASE_CACHE ((size_t)64 << 20)	/* the delta base cache */
#define PACK_MAX_CHAIN 10000	/* git packs at most --depth=4095 */
#define PACK_MAX_ALTERNATES 5	/* git's own nesting limit */
#define PACK_DEFAULT_LIMIT ((uint64_t)1 << 30)
#define PACK_TRAILER 20		/* the pack's own SHA-1 */
/* whole objects from this size on are inflated as they are read */
#define PACK_STREAM_MIN ((uint64_t)256 << 10)

enum { ENT_OFS_DELTA = 6, ENT_REF_DELTA = 7 };

/* One pack: its .pack mapped on first use, its .idx (when it has one of
 * its own, not served by a multi-pack-index) mapped at open. */
struct pack {
	char *path;			/* the .pack */
	const unsigned char *map;	/* NULL until opened */
	size_t len;
	int failed;			/* opening failed: e said why once */
	const unsigned char *idx;	/* the mapped .idx, or NULL */
	size_t idx_len;
	uint32_t n;
	const unsigned char *fanout, *ids, *off32, *off64;
	size_t n64;
};

struct midx {
	const unsigned char *map;
	size_t len;
	char *path;
	uint32_t n, npacks;
	const unsigned char *fanout, *ids, *offs, *loffs;
	size_t nloff;
	struct pack **packs;	/* by pack-int-id, borrowed from the objdir */
};

struct objdir {
	char *path;
	struct midx *midx;
	struct pack **packs;	/* every pack of the directory */
	size_t npacks;
};

/* A cached delta base, by (pack, offset). */
struct cache_key {
	const struct pack *p;
	uint64_t off;
};

struct cache_ent {
	struct cache_key key;
	enum obj_type type;
	unsigned char *data;
	size_t len;
	struct cache_ent *prev, *next;	/* LRU: head is the newest */
	UT_hash_handle hh;
};

struct pack_odb {
	struct objdir *dirs;
	size_t ndirs;
	uint64_t limit;		/* the largest object built in memory */
	struct cache_ent *cache, *lru_head, *lru_tail;
	size_t cache_bytes, cache_max;
	struct obj_hash *hash;	/* whole objects' checks */
};

/* A whole object in memory, or a stream being inflated. */
struct pack_stream {
	struct pack_odb *db;
	struct oid id;
	enum obj_type type;
	uint64_t size, done;
	unsigned char *mem;	/* whole: owned */
	struct obj_hash *hash;	/* a streamed object's id, as it goes */
	int inflating;
	z_stream z;
	const unsigned char *unmap;	/* a loose object's mapping */
	size_t unmap_len;
	const struct pack *p;	/* a packed object being inflated */
	uint64_t data_off;
	char *where;		/* for messages */
};

/* ---- small readers ---- */

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static uint64_t be64(const unsigned char *p)
{
	return (uint64_t)be32(p) << 32 | be32(p + 4);
}

static int map_file(const char *path, const unsigned char **map, size_t *len,
		    struct err *e)
{
	struct stat st;
	void *m;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return err_errno(e, ERR_IO, "%s: cannot open", path);
	if (fstat(fd, &st) < 0 || st.st_size <= 0) {
		close(fd);
		return err_set(e, ERR_IO, "%s: empty or unreadable", path);
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return err_errno(e, ERR_IO, "%s: cannot map", path);
	*map = m;
	*len = (size_t)st.st_size;
	return 0;
}

static void unmap(const unsigned char *map, size_t len)
{
	if (map)
		munmap((void *)map, len);
}

/* ---- .idx version 2 (docs/FORMATS.md 9.2) ---- */

int pack_idx_parse(const unsigned char *idx, size_t len, uint32_t *n,
		   struct err *e)
{
	const unsigned char *fan;
	uint32_t i, prev = 0, count;
	uint64_t need;

	/* version 1 has no header: its first bytes are a fan-out entry */
	if (len >= 4 && memcmp(idx, "\377tOc", 4) != 0) {
		err_set(e, ERR_IO, "not an .idx of version 2 (git writes "
			"version 1 only when asked)");
		return -2;
	}
	if (len < 8 + 256 * 4 + 40)
		return err_set(e, ERR_IO, "truncated .idx: %zu bytes, less than "
			       "a header, a fan-out table and two checksums",
			       len);
	if (be32(idx + 4) != 2) {
		err_set(e, ERR_IO, ".idx version %u is not known",
			(unsigned)be32(idx + 4));
		return -2;
	}
	fan = idx + 8;
	for (i = 0; i < 256; i++) {
		if (be32(fan + 4 * i) < prev)
			return err_set(e, ERR_IO, "corrupt .idx: the fan-out "
				       "table decreases at %u", (unsigned)i);
		prev = be32(fan + 4 * i);
	}
	count = prev;
	/* ids, crc32s, 32-bit offsets, then the 64-bit table, 2 checksums */
	need = 8 + 256 * 4 + (uint64_t)count * (OID_RAW + 4 + 4) + 40;
	if (need > len || (len - need) % 8 != 0)
		return err_set(e, ERR_IO, "corrupt .idx: %zu bytes for %u "
			       "objects", len, (unsigned)count);
	*n = count;
	return 0;
}

int pack_idx_offset(const unsigned char *idx, size_t len, uint32_t n,
		    uint32_t pos, uint64_t *off, struct err *e)
{
	const unsigned char *off32 = idx + 8 + 256 * 4 + (size_t)n * (OID_RAW + 4);
	const unsigned char *off64 = off32 + (size_t)n * 4;
	size_t n64 = (len - 40 - (size_t)(off64 - idx)) / 8;
	uint32_t v = be32(off32 + 4 * (size_t)pos);

	if (!(v & 0x80000000u)) {
		*off = v;
		return 0;
	}
	v &= 0x7fffffffu;
	if (v >= n64)
		return err_set(e, ERR_IO, "corrupt .idx: large offset %u of %zu",
			       (unsigned)v, n64);
	*off = be64(off64 + 8 * (size_t)v);
	return 0;
}

/* Binary search of id among the sorted ids of a fan-out table; 1 with
 * *pos, or 0. */
static int fan_find(const unsigned char *fanout, const unsigned char *ids,
		    const struct oid *id, uint32_t *pos)
{
	uint32_t lo = id->hash[0] ? be32(fanout + 4 * (id->hash[0] - 1)) : 0;
	uint32_t hi = be32(fanout + 4 * id->hash[0]);

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = memcmp(ids + (size_t)mid * OID_RAW, id->hash, OID_RAW);

		if (c == 0) {
			*pos = mid;
			return 1;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

static int pack_find(const struct pack *p, const struct oid *id,
		     uint64_t *off, struct err *e)
{
	uint32_t pos;

	if (!p->idx || !fan_find(p->fanout, p->ids, id, &pos))
		return 0;
	if (pack_idx_offset(p->idx, p->idx_len, p->n, pos, off, e) < 0)
		return err_prefix(e, "%s: ", p->path);
	return 1;
}

/* ---- multi-pack-index (docs/FORMATS.md 9.3) ---- */

static void midx_free(struct midx *m)
{
	if (!m)
		return;
	unmap(m->map, m->len);
	free(m->packs);
	free(m->path);
	free(m);
}

/* The chunk with this id: its start and length, or 0. */
static int midx_chunk(const unsigned char *map, size_t len, unsigned nchunks,
		      const char *id, const unsigned char **at, size_t *n)
{
	const unsigned char *t = map + 12;
	unsigned i;

	for (i = 0; i < nchunks; i++, t += 12) {
		uint64_t a = be64(t + 4), b = be64(t + 16);

		if (memcmp(t, id, 4) != 0)
			continue;
		if (a > b || b > len)
			return 0;
		*at = map + a;
		*n = (size_t)(b - a);
		return 1;
	}
	return 0;
}

/*
 * Loads objdir/pack/multi-pack-index when there is one git 2.39 knows
 * (version 1, SHA-1): 1 loaded, 0 none or not usable (the packs' own
 * .idx files serve then), -1 on a corrupt file.
 */
static int midx_load(struct objdir *d, struct err *e)
{
	struct buf path = BUF_INIT(BUF_MAX_DEFAULT);
	const unsigned char *pnam, *fan, *ids, *offs, *loff = NULL;
	size_t npnam, nfan, nids, noffs, nloff = 0, i, k;
	struct midx *m;
	unsigned nchunks;
	struct stat st;

	buf_printf(&path, "%s/pack/multi-pack-index", d->path);
	if (stat(path.ptr, &st) < 0) {
		buf_release(&path);
		return 0;
	}
	m = xcalloc(1, sizeof(*m));
	m->path = buf_detach(&path, NULL);
	if (map_file(m->path, &m->map, &m->len, e) < 0)
		goto bad;
	if (m->len < 12 + 12 || memcmp(m->map, "MIDX", 4) != 0 ||
	    m->map[4] != 1 || m->map[5] != 1 || m->map[7] != 0) {
		midx_free(m);	/* another version: the .idx files serve */
		return 0;
	}
	nchunks = m->map[6];
	m->npacks = be32(m->map + 8);
	if (12 + (size_t)(nchunks + 1) * 12 > m->len ||
	    !midx_chunk(m->map, m->len, nchunks, "PNAM", &pnam, &npnam) ||
	    !midx_chunk(m->map, m->len, nchunks, "OIDF", &fan, &nfan) ||
	    !midx_chunk(m->map, m->len, nchunks, "OIDL", &ids, &nids) ||
	    !midx_chunk(m->map, m->len, nchunks, "OOFF", &offs, &noffs) ||
	    nfan != 256 * 4)
		goto corrupt;
	(void)midx_chunk(m->map, m->len, nchunks, "LOFF", &loff, &nloff);
	m->n = be32(fan + 255 * 4);
	for (i = 1; i < 256; i++)
		if (be32(fan + 4 * i) < be32(fan + 4 * (i - 1)))
			goto corrupt;
	if (nids != (size_t)m->n * OID_RAW || noffs != (size_t)m->n * 8 ||
	    nloff % 8 != 0)
		goto corrupt;
	m->fanout = fan;
	m->ids = ids;
	m->offs = offs;
	m->loffs = loff;
	m->nloff = nloff / 8;
	/* the pack names, in pack-int-id order: match them to our packs */
	m->packs = xcalloc(m->npacks + 1, sizeof(*m->packs));
	for (i = 0, k = 0; i < m->npacks; i++) {
		const char *name = (const char *)pnam + k;
		size_t nl = strnlen(name, npnam - k), j;

		if (k >= npnam || nl == npnam - k || nl < 4)
			goto corrupt;
		k += nl + 1;
		for (j = 0; j < d->npacks; j++) {
			const char *pp = d->packs[j]->path;
			size_t plen = strlen(pp);
			const char *base = strrchr(pp, '/') + 1;

			/* "pack-X.idx" names "pack-X.pack" */
			if ((size_t)(pp + plen - base) == nl + 1 &&
			    !memcmp(base, name, nl - 3) &&
			    !strcmp(pp + plen - 4, "pack"))
				m->packs[i] = d->packs[j];
		}
		if (!m->packs[i])
			goto stale;
	}
	d->midx = m;
	return 1;
stale:
	/* a pack it names is gone: it is out of date, the .idx files serve */
	midx_free(m);
	return 0;
corrupt:
	err_set(e, ERR_IO, "%s: corrupt multi-pack-index", m->path);
bad:
	midx_free(m);
	return -1;
}

/* The midx's answer for id: its pack and offset. */
static int midx_find(const struct midx *m, const struct oid *id,
		     struct pack **p, uint64_t *off, struct err *e)
{
	uint32_t pos, packid, v;

	if (!fan_find(m->fanout, m->ids, id, &pos))
		return 0;
	packid = be32(m->offs + 8 * (size_t)pos);
	v = be32(m->offs + 8 * (size_t)pos + 4);
	if (packid >= m->npacks)
		return err_set(e, ERR_IO, "%s: corrupt multi-pack-index (pack "
			       "%u of %u)", m->path, (unsigned)packid,
			       (unsigned)m->npacks);
	*p = m->packs[packid];
	if (!(v & 0x80000000u)) {
		*off = v;
		return 1;
	}
	v &= 0x7fffffffu;
	if (!m->loffs || v >= m->nloff)
		return err_set(e, ERR_IO, "%s: corrupt multi-pack-index (large "
			       "offset %u)", m->path, (unsigned)v);
	*off = be64(m->loffs + 8 * (size_t)v);
	return 1;
}

/* ---- object directories ---- */

static void pack_free_one(struct pack *p)
{
	if (!p)
		return;
	unmap(p->map, p->len);
	unmap(p->idx, p->idx_len);
	free(p->path);
	free(p);
}

/* Adds the pack whose .idx is idx_path; -2 (e set) for an .idx this
 * reader does not know, -1 when it is corrupt. */
static int add_pack(struct objdir *d, const char *idx_path, struct err *e)
{
	struct pack *p = xcalloc(1, sizeof(*p));
	size_t n = strlen(idx_path);
	int rc;

	/* ".idx" -> ".pack": one byte longer */
	p->path = xmalloc(n + 2);
	memcpy(p->path, idx_path, n - 3);
	memcpy(p->path + n - 3, "pack", 5);
	if (map_file(idx_path, &p->idx, &p->idx_len, e) < 0) {
		pack_free_one(p);
		return -1;
	}
	if ((rc = pack_idx_parse(p->idx, p->idx_len, &p->n, e)) < 0) {
		err_prefix(e, "%s: ", idx_path);
		pack_free_one(p);
		return rc;
	}
	p->fanout = p->idx + 8;
	p->ids = p->fanout + 256 * 4;
	p->off32 = p->ids + (size_t)p->n * (OID_RAW + 4);
	p->off64 = p->off32 + (size_t)p->n * 4;
	d->packs = xrealloc(d->packs, (d->npacks + 1) * sizeof(*d->packs));
	d->packs[d->npacks++] = p;
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every pack of d (an .idx with its .pack beside it), in name order. */
static int scan_packs(struct objdir *d, struct err *e)
{
	struct buf path = BUF_INIT(BUF_MAX_DEFAULT);
	char **names = NULL;
	size_t n = 0, i;
	struct dirent *de;
	DIR *dir;
	int rc = 0;

	buf_printf(&path, "%s/pack", d->path);
	dir = opendir(path.ptr);
	while (dir && (de = readdir(dir))) {
		size_t l = strlen(de->d_name);
		struct stat st;

		if (l < 5 || strcmp(de->d_name + l - 4, ".idx"))
			continue;
		buf_reset(&path);
		buf_printf(&path, "%s/pack/%.*s.pack", d->path, (int)(l - 4),
			   de->d_name);
		if (stat(path.ptr, &st) < 0)
			continue;	/* being written or removed */
		names = xrealloc(names, (n + 1) * sizeof(*names));
		buf_reset(&path);
		buf_printf(&path, "%s/pack/%s", d->path, de->d_name);
		names[n++] = xstrdup(path.ptr);
	}
	if (dir)
		closedir(dir);
	if (n > 1)
		qsort(names, n, sizeof(*names), by_name);
	for (i = 0; i < n; i++) {
		if (rc == 0)
			rc = add_pack(d, names[i], e);
		free(names[i]);
	}
	free(names);
	buf_release(&path);
	if (rc == 0)
		rc = midx_load(d, e) < 0 ? -1 : 0;
	return rc;
}

static void objdir_free(struct objdir *d)
{
	size_t i;

	midx_free(d->midx);
	for (i = 0; i < d->npacks; i++)
		pack_free_one(d->packs[i]);
	free(d->packs);
	free(d->path);
}

static int add_objdir(struct pack_odb *db, const char *path, int depth,
		      struct err *e);

/* The lines of objects/info/alternates: relative ones from objdir. */
static int read_alternates(struct pack_odb *db, const char *objdir, int depth,
			   struct err *e)
{
	struct buf path = BUF_INIT(BUF_MAX_DEFAULT), alt = BUF_INIT(BUF_MAX_DEFAULT);
	char line[4096];
	FILE *f;
	int rc = 0;

	buf_printf(&path, "%s/info/alternates", objdir);
	f = fopen(path.ptr, "re");
	while (f && rc == 0 && fgets(line, sizeof(line), f)) {
		size_t l = strcspn(line, "\n");

		line[l] = '\0';
		if (l && line[l - 1] == '\r')
			line[--l] = '\0';
		if (!l || line[0] == '#')
			continue;
		if (line[0] == '"') {	/* a quoted path: git's C quoting */
			err_set(e, ERR_IO, "%s: quoted alternate paths "
				     "are read by git only", path.ptr);
			rc = -2;
			break;
		}
		buf_reset(&alt);
		if (line[0] == '/')
			buf_adds(&alt, line);
		else
			buf_printf(&alt, "%s/%s", objdir, line);
		rc = add_objdir(db, alt.ptr, depth + 1, e);
	}
	if (f)
		fclose(f);
	buf_release(&path);
	buf_release(&alt);
	return rc;
}

static int add_objdir(struct pack_odb *db, const char *path, int depth,
		      struct err *e)
{
	char *real = realpath(path, NULL);
	struct objdir *d;
	size_t i;
	int rc;

	if (!real)
		return 0;	/* git skips an alternate that is not there */
	for (i = 0; i < db->ndirs; i++)
		if (!strcmp(db->dirs[i].path, real)) {
			free(real);
			return 0;
		}
	if (depth > PACK_MAX_ALTERNATES) {
		free(real);
		return 0;	/* git: "ignoring alternate object stores, nesting too deep" */
	}
	db->dirs = xrealloc(db->dirs, (db->ndirs + 1) * sizeof(*db->dirs));
	d = &db->dirs[db->ndirs++];
	memset(d, 0, sizeof(*d));
	d->path = real;
	rc = scan_packs(d, e);
	return rc < 0 ? rc : read_alternates(db, real, depth, e);
}

int pack_odb_open(struct pack_odb **out, const char *objdir, struct err *e)
{
	struct pack_odb *db = xcalloc(1, sizeof(*db));
	struct stat st;
	int rc;

	*out = NULL;
	db->limit = PACK_DEFAULT_LIMIT;
	db->cache_max = PACK_BASE_CACHE;
	db->hash = obj_hash_new();
	if (stat(objdir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		pack_odb_free(db);
		return err_set(e, ERR_IO, "%s: no object directory", objdir);
	}
	rc = add_objdir(db, objdir, 0, e);
	if (rc < 0) {
		pack_odb_free(db);
		return rc;
	}
	*out = db;
	return 0;
}

void pack_odb_set_limit(struct pack_odb *db, uint64_t limit)
{
	db->limit = limit;
}

static void cache_drop(struct pack_odb *db, struct cache_ent *c);

void pack_odb_free(struct pack_odb *db)
{
	size_t i;

	if (!db)
		return;
	while (db->lru_head)
		cache_drop(db, db->lru_head);
	for (i = 0; i < db->ndirs; i++)
		objdir_free(&db->dirs[i]);
	free(db->dirs);
	obj_hash_free(db->hash);
	free(db);
}

/* ---- the base cache ---- */

static void cache_unlink(struct pack_odb *db, struct cache_ent *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		db->lru_head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		db->lru_tail = c->prev;
	c->prev = c->next = NULL;
}

static void cache_drop(struct pack_odb *db, struct cache_ent *c)
{
	cache_unlink(db, c);
	HASH_DEL(db->cache, c);
	db->cache_bytes -= c->len;
	free(c->data);
	free(c);
}

static struct cache_ent *cache_get(struct pack_odb *db, const struct pack *p,
				   uint64_t off)
{
	struct cache_key k;
	struct cache_ent *c;

	memset(&k, 0, sizeof(k));
	k.p = p;
	k.off = off;
	HASH_FIND(hh, db->cache, &k, sizeof(k), c);
	if (c && c != db->lru_head) {
		cache_unlink(db, c);
		c->next = db->lru_head;
		db->lru_head->prev = c;
		db->lru_head = c;
	}
	return c;
}

/* Gives data (malloc'd, len bytes) to the cache, or frees it when it is
 * too large to keep; the oldest entries go to make room. */
static void cache_put(struct pack_odb *db, const struct pack *p, uint64_t off,
		      enum obj_type type, unsigned char *data, size_t len)
{
	struct cache_ent *c;

	if (len > db->cache_max / 4 || cache_get(db, p, off)) {
		free(data);
		return;
	}
	while (db->lru_tail && db->cache_bytes + len > db->cache_max)
		cache_drop(db, db->lru_tail);
	c = xcalloc(1, sizeof(*c));
	c->key.p = p;
	c->key.off = off;
	c->type = type;
	c->data = data;
	c->len = len;
	HASH_ADD(hh, db->cache, key, sizeof(c->key), c);
	c->next = db->lru_head;
	if (db->lru_head)
		db->lru_head->prev = c;
	db->lru_head = c;
	if (!db->lru_tail)
		db->lru_tail = c;
	db->cache_bytes += len;
}

/* ---- pack entries (docs/FORMATS.md 9.1) ---- */

static int pack_map(struct pack *p, struct err *e)
{
	if (p->map)
		return 0;
	if (p->failed)
		return err_set(e, ERR_IO, "%s: unreadable", p->path);
	if (map_file(p->path, &p->map, &p->len, e) < 0) {
		p->failed = 1;
		return -1;
	}
	if (p->len < 12 + PACK_TRAILER || memcmp(p->map, "PACK", 4) != 0 ||
	    (be32(p->map + 4) != 2 && be32(p->map + 4) != 3)) {
		p->failed = 1;
		return err_set(e, ERR_IO, "%s: not a pack of version 2 or 3",
			       p->path);
	}
	return 0;
}

/* What an entry's header says. */
struct entry {
	int kind;		/* 1-4 an object type, or ENT_*_DELTA */
	uint64_t size;		/* inflated size of the entry's data */
	uint64_t data;		/* where its zlib data starts */
	uint64_t base_off;	/* ENT_OFS_DELTA */
	struct oid base_id;	/* ENT_REF_DELTA */
};

static int entry_bad(const struct pack *p, uint64_t off, const char *what,
		     struct err *e)
{
	return err_set(e, ERR_IO, "%s: corrupt pack at offset %llu: %s", p->path,
		       (unsigned long long)off, what);
}

int pack_entry_header(const unsigned char *map, size_t len, uint64_t off,
		      int *kind, uint64_t *size, uint64_t *data,
		      uint64_t *base_off, struct oid *base_id)
{
	uint64_t pos = off, sz;
	unsigned shift = 4;
	unsigned char c;

	if (off < 12 || off >= len)
		return -1;
	c = map[pos++];
	*kind = (c >> 4) & 7;
	sz = c & 15;
	while (c & 0x80) {
		if (pos >= len || shift > 57)
			return -1;
		c = map[pos++];
		sz |= (uint64_t)(c & 0x7f) << shift;
		shift += 7;
	}
	*size = sz;
	if (*kind == ENT_OFS_DELTA) {
		uint64_t rel;

		if (pos >= len)
			return -1;
		c = map[pos++];
		rel = c & 0x7f;
		while (c & 0x80) {
			if (pos >= len || rel >= (UINT64_MAX >> 7) - 1)
				return -1;
			c = map[pos++];
			rel = ((rel + 1) << 7) | (c & 0x7f);
		}
		if (rel == 0 || rel > off)
			return -1;
		*base_off = off - rel;
	} else if (*kind == ENT_REF_DELTA) {
		if (len - pos < OID_RAW)
			return -1;
		memcpy(base_id->hash, map + pos, OID_RAW);
		pos += OID_RAW;
	} else if (*kind == 0 || *kind == 5) {
		return -1;
	}
	*data = pos;
	return 0;
}

static int read_entry(const struct pack *p, uint64_t off, struct entry *ent,
		      struct err *e)
{
	if (off >= p->len - PACK_TRAILER)
		return entry_bad(p, off, "past the end of the pack (truncated?)", e);
	if (pack_entry_header(p->map, p->len - PACK_TRAILER, off, &ent->kind,
			      &ent->size, &ent->data, &ent->base_off,
			      &ent->base_id) < 0)
		return entry_bad(p, off, "bad entry header", e);
	return 0;
}

/* The pack's entry types, in git's numbering, are obj_type's: 1 commit,
 * 2 tree, 3 blob, 4 tag. */
static enum obj_type kind_type(int kind)
{
	switch (kind) {
	case 1: return OBJ_COMMIT;
	case 2: return OBJ_TREE;
	case 3: return OBJ_BLOB;
	case 4: return OBJ_TAG;
	default: return OBJ_NONE;
	}
}

/*
 * Starts z (zeroed) on the zlib stream of an entry's data, src[0..avail),
 * as raw deflate: its two header bytes are checked here and skipped, and
 * the Adler-32 at its end is never computed. Every object is checked
 * against its SHA-1 id, which says more, and the Adler-32 was a tenth of
 * the CPU time of a large blob. 0, or -1 (a message in *why).
 */
static int zraw_init(z_stream *z, const unsigned char *src, size_t avail,
		     const char **why)
{
	/* deflate, a window of at most 32 KiB, the check bits, no preset
	 * dictionary (RFC 1950 2.2) */
	if (avail < 2 || (src[0] & 0x0f) != 8 || (src[0] >> 4) > 7 ||
	    ((unsigned)src[0] << 8 | src[1]) % 31 != 0 || (src[1] & 0x20)) {
		*why = "the zlib data is corrupt";
		return -1;
	}
	if (inflateInit2(z, -15) != Z_OK) {
		*why = "zlib cannot start";
		return -1;
	}
	avail -= 2;
	z->next_in = (unsigned char *)src + 2;
	z->avail_in = avail > UINT_MAX ? UINT_MAX : (unsigned)avail;
	return 0;
}

/*
 * Inflates exactly want bytes from src[0..avail) into dst; the zlib
 * stream must end there. 0, or -1 (a message in *why).
 */
static int inflate_all(const unsigned char *src, size_t avail,
		       unsigned char *dst, size_t want, const char **why)
{
	z_stream z;
	int r;

	memset(&z, 0, sizeof(z));
	if (zraw_init(&z, src, avail, why) < 0)
		return -1;
	z.next_out = dst;
	z.avail_out = (unsigned)want;
	/* a zlib stream's output fits an unsigned per call: objects built in
	 * memory are smaller than the limit (1 GiB) */
	r = inflate(&z, Z_FINISH);
	if (r != Z_STREAM_END || z.total_out != want) {
		*why = r == Z_STREAM_END || r == Z_BUF_ERROR ?
			"the data is not as long as its header says" :
			"the zlib data is corrupt";
		inflateEnd(&z);
		return -1;
	}
	inflateEnd(&z);
	return 0;
}

/* The data of the entry at off, inflated into a new buffer of ent->size
 * bytes (+1, NUL-terminated). */
static int inflate_entry(struct pack_odb *db, const struct pack *p,
			 uint64_t off, const struct entry *ent,
			 unsigned char **out, struct err *e)
{
	const char *why = NULL;
	uint64_t avail = p->len - PACK_TRAILER - ent->data;
	unsigned char *buf;

	/* deflate expands at most 1032:1: a larger size is a lie */
	if (ent->size > db->limit) {
		err_set(e, ERR_IO, "%s: an object of %llu bytes at offset %llu "
			"is larger than what is built in memory", p->path,
			(unsigned long long)ent->size, (unsigned long long)off);
		return -2;
	}
	if (ent->size / 1032 > avail + 64)
		return entry_bad(p, off, "size larger than the data can hold", e);
	buf = malloc((size_t)ent->size + 1);
	if (!buf)
		return err_set(e, ERR_IO, "out of memory for %llu bytes",
			       (unsigned long long)ent->size);
	if (inflate_all(p->map + ent->data, (size_t)avail, buf,
			(size_t)ent->size, &why) < 0) {
		free(buf);
		return entry_bad(p, off, why, e);
	}
	buf[ent->size] = 0;
	*out = buf;
	return 0;
}

/* A delta's size varint (docs/FORMATS.md 9.4); -1 when malformed. */
static int delta_varint(const unsigned char **p, const unsigned char *end,
			uint64_t *v)
{
	unsigned shift = 0;
	unsigned char c;

	*v = 0;
	do {
		if (*p >= end || shift > 63)
			return -1;
		c = *(*p)++;
		*v |= (uint64_t)(c & 0x7f) << shift;
		shift += 7;
	} while (c & 0x80);
	return 0;
}

int pack_delta_apply(const unsigned char *base, size_t base_len,
		     const unsigned char *delta, size_t delta_len,
		     uint64_t limit, unsigned char **out, size_t *out_len,
		     const char **why)
{
	const unsigned char *d = delta, *end = delta + delta_len;
	uint64_t src, dst, made = 0;
	unsigned char *res, *w;

	if (delta_varint(&d, end, &src) < 0 || delta_varint(&d, end, &dst) < 0) {
		*why = "truncated delta header";
		return -1;
	}
	if (src != base_len) {
		*why = "delta base of the wrong size";
		return -1;
	}
	if (dst > limit) {
		*why = "delta result larger than what is built in memory";
		return -2;
	}
	res = malloc((size_t)dst + 1);
	if (!res) {
		*why = "out of memory for a delta result";
		return -1;
	}
	w = res;
	while (d < end) {
		unsigned char c = *d++;

		if (c & 0x80) {
			uint64_t cp_off = 0, cp_len = 0;
			int i;

			for (i = 0; i < 4; i++)
				if (c & (1u << i)) {
					if (d >= end)
						goto trunc;
					cp_off |= (uint64_t)*d++ << (8 * i);
				}
			for (i = 0; i < 3; i++)
				if (c & (0x10u << i)) {
					if (d >= end)
						goto trunc;
					cp_len |= (uint64_t)*d++ << (8 * i);
				}
			if (cp_len == 0)
				cp_len = 0x10000;
			if (cp_off + cp_len > base_len || cp_len > dst - made) {
				*why = "delta copies from outside its base";
				goto fail;
			}
			memcpy(w, base + cp_off, (size_t)cp_len);
			w += cp_len;
			made += cp_len;
		} else if (c) {
			if ((size_t)(end - d) < c || c > dst - made)
				goto trunc;
			memcpy(w, d, c);
			d += c;
			w += c;
			made += c;
		} else {
			*why = "delta instruction 0 is reserved";
			goto fail;
		}
	}
	if (made != dst) {
		*why = "delta result shorter than its header says";
		goto fail;
	}
	res[dst] = 0;
	*out = res;
	*out_len = (size_t)dst;
	return 0;
trunc:
	*why = "delta instructions overrun";
fail:
	free(res);
	return -1;
}

static int find_object(struct pack_odb *db, const struct oid *id,
		       struct pack **p, uint64_t *off, struct err *e);
static int read_whole(struct pack_odb *db, const struct oid *id, int depth,
		      enum obj_type *type, unsigned char **out, size_t *len,
		      struct err *e);

/*
 * The object at (p, off), whole, in a new buffer (*out, *len, *type);
 * delta chains are resolved through the base cache. 0, -1 corrupt, -2 too
 * large to build in memory (e set).
 */
static int unpack(struct pack_odb *db, struct pack *p, uint64_t off,
		  int depth, enum obj_type *type, unsigned char **out,
		  size_t *len, struct err *e)
{
	uint64_t *chain = NULL, cur = off;
	size_t n = 0, alloc = 0;
	unsigned char *base = NULL, *delta, *res;
	size_t base_len = 0, res_len;
	int base_owned = 0, base_local = 1, rc = -1, r;
	uint64_t base_at;
	const char *why;
	struct cache_ent *c;
	struct entry ent;

	if (pack_map(p, e) < 0)
		return -1;
	for (;;) {
		base_at = cur;
		if ((c = cache_get(db, p, cur))) {
			*type = c->type;
			base = c->data;
			base_len = c->len;
			break;
		}
		if (read_entry(p, cur, &ent, e) < 0)
			goto out;
		if (ent.kind != ENT_OFS_DELTA && ent.kind != ENT_REF_DELTA) {
			if ((r = inflate_entry(db, p, cur, &ent, &base, e)) < 0) {
				rc = r;
				goto out;
			}
			*type = kind_type(ent.kind);
			base_len = (size_t)ent.size;
			base_owned = 1;
			break;
		}
		if (n + (size_t)depth >= PACK_MAX_CHAIN) {
			entry_bad(p, off, "delta chain too long (a loop?)", e);
			goto out;
		}
		if (n == alloc) {
			alloc = alloc ? 2 * alloc : 16;
			chain = xrealloc(chain, alloc * sizeof(*chain));
		}
		chain[n++] = cur;
		if (ent.kind == ENT_OFS_DELTA) {
			cur = ent.base_off;
			continue;
		}
		/* REF_DELTA: the base is usually in this pack, else anywhere */
		if ((r = pack_find(p, &ent.base_id, &cur, e)) < 0)
			goto out;
		if (r)
			continue;
		r = read_whole(db, &ent.base_id, depth + (int)n, type, &base,
			       &base_len, e);
		if (r <= 0) {
			if (r == 0)
				entry_bad(p, chain[n - 1], "delta base missing", e);
			rc = r < 0 ? r : -1;
			goto out;
		}
		base_owned = 1;
		base_local = 0;
		break;
	}
	/* the deltas, from the base outwards */
	while (n > 0) {
		cur = chain[--n];
		if (read_entry(p, cur, &ent, e) < 0)
			goto out;
		if ((r = inflate_entry(db, p, cur, &ent, &delta, e)) < 0) {
			rc = r;
			goto out;
		}
		r = pack_delta_apply(base, base_len, delta, (size_t)ent.size,
				     db->limit, &res, &res_len, &why);
		free(delta);
		if (r < 0) {
			if (r == -2)
				err_set(e, ERR_IO, "%s: offset %llu: %s", p->path,
					(unsigned long long)cur, why);
			else
				entry_bad(p, cur, why, e);
			rc = r;
			goto out;
		}
		/* the base of this step may serve the next object too */
		if (base_owned && base_local)
			cache_put(db, p, base_at, *type, base, base_len);
		else if (base_owned)
			free(base);
		base = res;
		base_at = cur;
		base_local = 1;
		base_len = res_len;
		base_owned = 1;
	}
	if (!base_owned) {	/* the object itself came from the cache */
		res = xmalloc(base_len + 1);
		memcpy(res, base, base_len);
		res[base_len] = 0;
		base = res;
	}
	*out = base;
	*len = base_len;
	base = NULL;
	rc = 0;
out:
	if (base_owned && base)
		free(base);
	free(chain);
	return rc;
}

/* ---- loose objects (docs/FORMATS.md 9.5) ---- */

static void loose_path(struct buf *path, const struct objdir *d,
		       const struct oid *id)
{
	char hex[OID_HEX + 1];

	oid_hex(id, hex);
	buf_reset(path);
	buf_printf(path, "%s/%.2s/%s", d->path, hex, hex + 2);
}

/*
 * Starts inflating a loose object: its header "<type> <size>\0" is read
 * and the stream stands at the content. 0, -1 corrupt, -2 a header this
 * reader does not know (the old binary one).
 */
static int loose_begin(struct pack_stream *s, const char *path, struct err *e)
{
	unsigned char hdr[64];
	unsigned char *nul;
	size_t used, sp;
	int r;

	if (map_file(path, &s->unmap, &s->unmap_len, e) < 0)
		return -1;
	/* zlib data starts with 0x78 and a header checksum (git's test) */
	if (s->unmap_len < 2 || (s->unmap[0] & 0x8f) != 0x08 ||
	    ((unsigned)s->unmap[0] << 8 | s->unmap[1]) % 31 != 0)
	{
		err_set(e, ERR_IO, "%s: a loose object in git's old binary "
			"format", path);
		return -2;
	}
	if (inflateInit(&s->z) != Z_OK)
		return err_set(e, ERR_IO, "zlib cannot start");
	s->inflating = 1;
	s->z.next_in = (unsigned char *)s->unmap;
	s->z.avail_in = s->unmap_len > UINT_MAX ? UINT_MAX : (unsigned)s->unmap_len;
	s->z.next_out = hdr;
	s->z.avail_out = sizeof(hdr);
	/* inflate until the header's NUL is out */
	do {
		r = inflate(&s->z, Z_SYNC_FLUSH);
		nul = memchr(hdr, 0, sizeof(hdr) - s->z.avail_out);
	} while (!nul && r == Z_OK && s->z.avail_out > 0);
	used = sizeof(hdr) - s->z.avail_out;
	if (!nul)
		return err_set(e, ERR_IO, "%s: corrupt loose object (no header)",
			       path);
	sp = strcspn((char *)hdr, " ");
	s->type = obj_type_parse((char *)hdr, sp);
	if (s->type == OBJ_NONE || hdr + sp >= nul ||
	    parse_u64((char *)hdr + sp + 1, (size_t)(nul - hdr) - sp - 1,
		      UINT64_MAX, &s->size) < 0)
		return err_set(e, ERR_IO, "%s: corrupt loose object header",
			       path);
	/* the content bytes inflated along with the header */
	s->done = 0;
	s->mem = NULL;
	if (used > (size_t)(nul - hdr) + 1) {
		size_t extra = used - (size_t)(nul - hdr) - 1;

		if (extra > s->size)
			return err_set(e, ERR_IO, "%s: corrupt loose object "
				       "(longer than its header says)", path);
		s->mem = xmalloc(extra + 1);
		memcpy(s->mem, nul + 1, extra);
		s->data_off = extra;	/* bytes waiting in mem */
	}
	return 0;
}

/* ---- finding and opening ---- */

/* 1 with (p, off) when packed, 0 when not in any pack. */
static int find_object(struct pack_odb *db, const struct oid *id,
		       struct pack **p, uint64_t *off, struct err *e)
{
	size_t i, j;
	int r;

	for (i = 0; i < db->ndirs; i++) {
		struct objdir *d = &db->dirs[i];

		if (d->midx && (r = midx_find(d->midx, id, p, off, e)) != 0)
			return r;
		for (j = 0; j < d->npacks; j++)
			if ((r = pack_find(d->packs[j], id, off, e)) != 0) {
				*p = d->packs[j];
				return r;
			}
	}
	return 0;
}

/* The objdir holding id loose, into path; -1 none. */
static int find_loose(struct pack_odb *db, const struct oid *id,
		      struct buf *path)
{
	size_t i;

	for (i = 0; i < db->ndirs; i++) {
		loose_path(path, &db->dirs[i], id);
		if (access(path->ptr, R_OK) == 0)
			return (int)i;
	}
	return -1;
}

static int verify(struct pack_odb *db, const struct oid *id, enum obj_type type,
		  const unsigned char *data, size_t len, const char *where,
		  struct err *e)
{
	struct oid got;
	char hex[OID_HEX + 1];

	obj_hash_buf(db->hash, type, data, len, &got);
	if (!oid_eq(&got, id))
		return err_set(e, ERR_IO, "object %s read from %s does not hash "
			       "to its id (corrupt)", oid_hex(id, hex), where);
	return 0;
}

/* The whole object id from anywhere (a REF_DELTA base): 1, 0 missing,
 * <0 error. */
static int read_whole(struct pack_odb *db, const struct oid *id, int depth,
		      enum obj_type *type, unsigned char **out, size_t *len,
		      struct err *e)
{
	struct pack *p;
	uint64_t off;
	int r = find_object(db, id, &p, &off, e);

	if (r < 0)
		return r;
	if (r > 0) {
		if ((r = unpack(db, p, off, depth, type, out, len, e)) < 0)
			return r;
		if (verify(db, id, *type, *out, *len, p->path, e) < 0) {
			free(*out);
			return -1;
		}
		return 1;
	}
	return 0;	/* a loose base of a packed delta: not in git's packs */
}

int pack_odb_open_stream(struct pack_odb *db, const struct oid *id,
			 struct pack_stream **out, enum obj_type *type,
			 uint64_t *size, struct err *e)
{
	struct buf path = BUF_INIT(BUF_MAX_DEFAULT);
	struct pack_stream *s;
	struct pack *p;
	struct entry ent;
	uint64_t off;
	size_t len;
	int r;

	*out = NULL;
	s = xcalloc(1, sizeof(*s));
	s->db = db;
	s->hash = obj_hash_new();
	s->id = *id;
	r = find_object(db, id, &p, &off, e);
	if (r < 0)
		goto fail;
	if (r > 0) {
		if ((r = pack_map(p, e)) < 0 || (r = read_entry(p, off, &ent, e)) < 0)
			goto fail;
		s->where = xstrdup(p->path);
		if (ent.kind == ENT_OFS_DELTA || ent.kind == ENT_REF_DELTA ||
		    ent.size < PACK_STREAM_MIN) {
			/* whole, in memory, checked before any byte goes out */
			if ((r = unpack(db, p, off, 0, &s->type, &s->mem, &len,
					e)) < 0)
				goto fail;
			s->size = len;
			if ((r = verify(db, id, s->type, s->mem, len, p->path,
					e)) < 0)
				goto fail;
		} else {
			/* streamed: hashed on the way, checked at the end */
			if (ent.size / 1032 > p->len - ent.data + 64) {
				r = entry_bad(p, off, "size larger than the data "
					      "can hold", e);
				goto fail;
			}
			const char *why;

			s->type = kind_type(ent.kind);
			s->size = ent.size;
			s->p = p;
			s->data_off = ent.data;
			len = p->len - PACK_TRAILER - (size_t)ent.data;
			if (zraw_init(&s->z, p->map + ent.data, len, &why) < 0) {
				r = entry_bad(p, off, why, e);
				goto fail;
			}
			s->inflating = 1;
			obj_hash_begin(s->hash, s->type, s->size);
		}
	} else {
		if (find_loose(db, id, &path) < 0) {
			buf_release(&path);
			pack_stream_close(s);
			return 0;
		}
		s->where = xstrdup(path.ptr);
		if ((r = loose_begin(s, path.ptr, e)) < 0)
			goto fail;
		obj_hash_begin(s->hash, s->type, s->size);
		if (s->mem)
			obj_hash_update(s->hash, s->mem, (size_t)s->data_off);
	}
	buf_release(&path);
	*type = s->type;
	*size = s->size;
	*out = s;
	return 1;
fail:
	buf_release(&path);
	pack_stream_close(s);
	return r < -1 ? r : -1;
}

/* The end of a streamed object: all of it, and the id it hashes to. */
static int stream_end(struct pack_stream *s, struct err *e)
{
	struct oid got;
	char hex[OID_HEX + 1];

	if (!s->inflating)
		return 0;
	obj_hash_final(s->hash, &got);
	inflateEnd(&s->z);
	s->inflating = 0;
	if (!oid_eq(&got, &s->id))
		return err_set(e, ERR_IO, "object %s read from %s does not hash "
			       "to its id (corrupt)", oid_hex(&s->id, hex),
			       s->where);
	return 0;
}

ssize_t pack_stream_read(struct pack_stream *s, void *dst, size_t cap,
			 struct err *e)
{
	uint64_t left = s->size - s->done;
	size_t n;
	int r;

	if (cap > left)
		cap = (size_t)left;
	if (cap == 0)
		return stream_end(s, e);
	if (!s->inflating) {
		memcpy(dst, s->mem + s->done, cap);
		s->done += cap;
		return (ssize_t)cap;
	}
	if (s->mem && s->done < s->data_off) {	/* a loose object's first bytes */
		n = (size_t)(s->data_off - s->done) < cap ?
			(size_t)(s->data_off - s->done) : cap;
		memcpy(dst, s->mem + s->done, n);
		s->done += n;
		return (ssize_t)n;
	}
	if (cap > UINT_MAX)
		cap = UINT_MAX;
	s->z.next_out = dst;
	s->z.avail_out = (unsigned)cap;
	r = inflate(&s->z, Z_SYNC_FLUSH);
	n = cap - s->z.avail_out;
	if ((r != Z_OK && r != Z_STREAM_END) || n == 0 ||
	    (r == Z_STREAM_END && s->done + n != s->size))
		return err_set(e, ERR_IO, "%s: object %s: %s", s->where,
			       oid_hex(&s->id, (char[OID_HEX + 1]){ 0 }),
			       r == Z_STREAM_END || r == Z_BUF_ERROR || n == 0 ?
			       "the data is not as long as its header says" :
			       "the zlib data is corrupt");
	obj_hash_update(s->hash, dst, n);
	s->done += n;
	return (ssize_t)n;
}

void pack_stream_close(struct pack_stream *s)
{
	if (!s)
		return;
	if (s->inflating)
		inflateEnd(&s->z);
	if (s->p && s->size >= PACK_STREAM_MIN) {
		/* a large object streamed: its pages leave our resident set
		 * (they stay in the page cache) */
		uintptr_t a = (uintptr_t)(s->p->map + s->data_off);
		uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
		uintptr_t start = a & ~(pg - 1);
		uintptr_t end = (uintptr_t)s->z.next_in;

		if (end > start)
			madvise((void *)start, end - start, MADV_DONTNEED);
	}
	unmap(s->unmap, s->unmap_len);
	obj_hash_free(s->hash);
	free(s->mem);
	free(s->where);
	free(s);
}

int pack_odb_info(struct pack_odb *db, const struct oid *id,
		  enum obj_type *type, uint64_t *size, struct err *e)
{
	struct pack_stream *s;
	struct pack *p;
	struct entry ent;
	uint64_t off, cur;
	int r, n = 0;

	r = find_object(db, id, &p, &off, e);
	if (r == 0) {	/* loose: its header says */
		r = pack_odb_open_stream(db, id, &s, type, size, e);
		pack_stream_close(s);
		return r;
	}
	if (r < 0 || pack_map(p, e) < 0 || read_entry(p, off, &ent, e) < 0)
		return -1;
	if (ent.kind != ENT_OFS_DELTA && ent.kind != ENT_REF_DELTA) {
		*type = kind_type(ent.kind);
		*size = ent.size;
		return 1;
	}
	/* a delta: the size is in its own header, the type at its base */
	{
		unsigned char head[32];
		const unsigned char *h = head;
		uint64_t src;
		z_stream z;

		memset(&z, 0, sizeof(z));
		if (inflateInit(&z) != Z_OK)
			return err_set(e, ERR_IO, "zlib cannot start");
		z.next_in = (unsigned char *)p->map + ent.data;
		z.avail_in = (unsigned)((p->len - PACK_TRAILER - ent.data) > 4096 ?
					4096 : p->len - PACK_TRAILER - ent.data);
		z.next_out = head;
		z.avail_out = sizeof(head);
		r = inflate(&z, Z_SYNC_FLUSH);
		inflateEnd(&z);
		if ((r != Z_OK && r != Z_STREAM_END) ||
		    delta_varint(&h, head + sizeof(head) - z.avail_out, &src) < 0 ||
		    delta_varint(&h, head + sizeof(head) - z.avail_out, size) < 0)
			return entry_bad(p, off, "bad delta header", e);
	}
	for (cur = off;; n++) {
		struct cache_ent *c = cache_get(db, p, cur);

		if (c) {
			*type = c->type;
			return 1;
		}
		if (n >= PACK_MAX_CHAIN)
			return entry_bad(p, off, "delta chain too long (a loop?)", e);
		if (read_entry(p, cur, &ent, e) < 0)
			return -1;
		if (ent.kind == ENT_OFS_DELTA) {
			cur = ent.base_off;
		} else if (ent.kind == ENT_REF_DELTA) {
			if ((r = pack_find(p, &ent.base_id, &cur, e)) < 0)
				return -1;
			if (r == 0) {
				uint64_t bsize;

				r = pack_odb_info(db, &ent.base_id, type, &bsize, e);
				if (r == 0)
					return entry_bad(p, cur, "delta base missing", e);
				return r;
			}
		} else {
			*type = kind_type(ent.kind);
			return 1;
		}
	}
}

int pack_odb_read(struct pack_odb *db, const struct oid *id,
		  enum obj_type *type, struct buf *body, struct err *e)
{
	struct pack_stream *s;
	uint64_t size;
	size_t n;
	ssize_t got = 0;
	int r = pack_odb_open_stream(db, id, &s, type, &size, e);

	if (r <= 0)
		return r;
	if (u64_to_size(size, &n) < 0 || n > body->max) {
		pack_stream_close(s);
		return err_set(e, ERR_IO, "object %s too large to load",
			       oid_hex(id, (char[OID_HEX + 1]){ 0 }));
	}
	buf_reset(body);
	if (buf_grow(body, n) < 0) {
		pack_stream_close(s);
		return err_set(e, ERR_IO, "object too large to load");
	}
	while (body->len < n &&
	       (got = pack_stream_read(s, body->ptr + body->len, n - body->len, e)) > 0)
		body->len += (size_t)got;
	if (got >= 0)
		got = pack_stream_read(s, body->ptr, 0, e);
	pack_stream_close(s);
	body->ptr[body->len] = '\0';
	return got < 0 ? -1 : 1;
}
