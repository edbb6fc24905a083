/*
 * store.c - the LFS object store (docs/FORMATS.md §7 "Object store"): objects
 * are hashed while written to a temp file inside the store, fsynced and
 * renamed into <dir>/<oid[0:2]>/<oid[2:4]>/<oid>, so the final name never
 * holds a partial object (docs/DESIGN.md "Files migrate writes").
 */
#include "pointerize/pointerize.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

/* Pieces smaller than this are gathered (few syscalls), larger ones are
 * written as they come; existing objects are read in chunks of
 * PUT_BUF_SIZE. */
#define PUT_GATHER ((size_t)64 << 10)
#define PUT_BUF_SIZE ((size_t)1 << 20)
/* Attempts at finding an unused temp name before giving up. */
#define TMP_TRIES 32

/* An object written but not yet durable and renamed (batch mode). */
struct pending {
	char *tmp, *final, *leaf;
};

struct ptr_store {
	char *dir;	     /* root, without trailing slashes */
	char *tmpdir;	     /* <dir>/tmp */
	unsigned long seq;   /* makes temp names unique within the process */
	int batch;	     /* defer fsync and rename to ptr_store_sync */
	int annex;	     /* 0 LFS; 1 git-annex hashdirmixed, 2 hashdirlower */
	struct pending *pend;
	size_t npend, pend_alloc;
};

struct ptr_put {
	struct ptr_store *s; /* NULL: hash only */
	EVP_MD_CTX *md;
	int fd;		     /* -1 once closed, or in hash-only mode */
	char *tmp;	     /* temp path while it exists, else NULL */
	unsigned char *buf;  /* PUT_GATHER bytes, made when first needed: a
				put written in large pieces never needs it */
	size_t used;
	uint64_t size;
	int failed;	     /* a write failed: finish must refuse */
};

static struct pending *find_pending(const struct ptr_store *s,
				    const char *final);
static void drop_pending(struct ptr_store *s, int unlink_tmp);
static int place_object(const struct ptr_store *s, const char *tmp,
			const char *final, const char *leaf, struct err *e);

/* ---- small file-system helpers ---- */

/* mkdir that accepts an existing directory. */
static int mkdir_one(const char *path, struct err *e)
{
	struct stat st;

	if (mkdir(path, 0777) == 0)
		return 0;
	if (errno != EEXIST)
		return err_errno(e, ERR_IO, "cannot create directory '%s'",
				 path);
	if (stat(path, &st) < 0)
		return err_errno(e, ERR_IO, "cannot stat '%s'", path);
	if (!S_ISDIR(st.st_mode))
		return err_set(e, ERR_IO, "'%s' exists and is not a directory",
			       path);
	return 0;
}

/* mkdir -p: creates each missing component of path. */
static int mkdir_parents(const char *path, struct err *e)
{
	char *p = xstrdup(path);
	char *q;
	int r = 0;

	for (q = p + 1; *q && r == 0; q++) {
		if (*q != '/' || q[-1] == '/')
			continue;
		*q = '\0';
		r = mkdir_one(p, e);
		*q = '/';
	}
	if (r == 0)
		r = mkdir_one(p, e);
	free(p);
	return r;
}

/* Writes all n bytes, riding out EINTR and partial writes. */
static int write_all(int fd, const void *data, size_t n, const char *path,
		     struct err *e)
{
	return write_full(fd, data, n) < 0 ?
		err_errno(e, ERR_IO, "cannot write '%s'", path) : 0;
}

static int fsync_fd(int fd, const char *path, struct err *e)
{
	while (fsync(fd) < 0) {
		if (errno != EINTR)
			return err_errno(e, ERR_IO, "cannot fsync '%s'", path);
	}
	return 0;
}

/* Makes a rename inside dir durable (the entry, not just the data). */
static int fsync_dir(const char *dir, struct err *e)
{
	if (dir_fsync(dir) < 0)
		return err_errno(e, ERR_IO, "cannot sync directory '%s'", dir);
	return 0;
}

/* ---- the store handle ---- */

/* Opens a store whose objects are below <dir>/<sub> (sub NULL: dir) and
 * whose temp files are in <dir>/tmp. */
static int store_open(struct ptr_store **out, const char *dir,
		      const char *sub, int annex, struct err *e)
{
	struct ptr_store *s;
	char *root;
	size_t n = strlen(dir);

	if (n == 0)
		return err_set(e, ERR_IO, "empty store directory name");
	while (n > 1 && dir[n - 1] == '/')
		n--;
	s = xcalloc(1, sizeof(*s));
	root = xmemdup(dir, n);
	s->annex = annex;
	s->dir = sub ? path_join(root, sub) : xstrdup(root);
	s->tmpdir = path_join(root, "tmp");
	free(root);
	if (mkdir_parents(s->dir, e) < 0 || mkdir_one(s->tmpdir, e) < 0) {
		ptr_store_free(s);
		return -1;
	}
	*out = s;
	return 0;
}

int ptr_store_open(struct ptr_store **out, const char *dir, struct err *e)
{
	return store_open(out, dir, NULL, 0, e);
}

int ptr_store_open_annex(struct ptr_store **out, const char *annexdir,
			 int lower, struct err *e)
{
	return store_open(out, annexdir, "objects", lower ? 2 : 1, e);
}

void ptr_store_free(struct ptr_store *s)
{
	if (!s)
		return;
	drop_pending(s, 1); /* never synced: the run failed */
	free(s->pend);
	free(s->dir);
	free(s->tmpdir);
	free(s);
}

const char *ptr_store_dir(const struct ptr_store *s)
{
	return s->dir;
}

int ptr_store_object_path(struct buf *out, const struct ptr_store *s,
			  const struct ptr_oid *oid)
{
	struct buf tmp = BUF_INIT(out->max);
	char hex[PTR_OID_HEXSZ + 1];
	int r;

	ptr_oid_hex(oid, hex);
	/* docs/FORMATS.md §7: <oid[0:2]>/<oid[2:4]>/<oid> */
	r = buf_printf(&tmp, "%s/%.2s/%.2s/%s", s->dir, hex, hex + 2, hex);
	if (r == 0)
		r = buf_set(out, tmp.ptr, tmp.len);
	buf_release(&tmp);
	return r;
}

/* Opens the object file at path for reading, with its size; what names
 * the kind of store in messages. */
static int open_object(const char *path, const char *what, int *fd,
		       uint64_t *size, struct err *e)
{
	struct stat st;
	int f = open(path, O_RDONLY | O_CLOEXEC), r = -1;

	if (f < 0 && errno == ENOENT)
		err_set(e, ERR_IO, "%s object '%s' is missing", what, path);
	else if (f < 0)
		err_errno(e, ERR_IO, "cannot open %s object '%s'", what, path);
	else if (fstat(f, &st) < 0)
		err_errno(e, ERR_IO, "cannot stat %s object '%s'", what, path);
	else if (!S_ISREG(st.st_mode))
		err_set(e, ERR_IO, "%s object '%s' is not a regular file", what,
			path);
	else
		r = 0;
	if (r == 0) {
		*fd = f;
		*size = (uint64_t)st.st_size;
	} else if (f >= 0) {
		close(f);
	}
	return r;
}

int ptr_store_open_object(const struct ptr_store *s, const struct ptr_oid *oid,
			  int *fd, uint64_t *size, struct err *e)
{
	struct buf path = BUF_INIT(BUF_MAX_DEFAULT);
	struct pending *pd;
	int r;

	if (ptr_store_object_path(&path, s, oid) < 0)
		return err_set(e, ERR_IO, "LFS store path too long");
	pd = find_pending(s, path.ptr);
	if (pd && buf_set(&path, pd->tmp, strlen(pd->tmp)) < 0)
		return err_set(e, ERR_IO, "LFS store path too long");
	r = open_object(path.ptr, "LFS", fd, size, e);
	buf_release(&path);
	return r;
}

/* ---- streaming put ---- */

/* Digits up to c; where they end (past c), or NULL. */
static const char *digits_then(const char *s, int c)
{
	size_t n = strspn(s, "0123456789");

	return n && s[n] == c ? s + n + 1 : NULL;
}

int ptr_put_is_dead_temp(const char *name)
{
	const char *seq, *ns;
	long pid;

	if (strncmp(name, "put-", 4) || !(seq = digits_then(name + 4, '-')) ||
	    !(ns = digits_then(seq, '-')) || !digits_then(ns, '\0'))
		return 0;
	pid = strtol(name + 4, NULL, 10);
	return pid > 0 && pid != (long)getpid() && kill((pid_t)pid, 0) < 0 &&
	       errno == ESRCH;
}

/*
 * Creates a fresh temp file in <dir>/tmp. O_EXCL with mode 0666 (not
 * mkstemp's 0600) so the object gets the permissions the umask gives any
 * other repository file, like git-lfs's own objects.
 */
static int tmp_create(struct ptr_put *p, struct err *e)
{
	struct buf name = BUF_INIT(BUF_MAX_DEFAULT);
	struct timespec ts;
	int i;

	for (i = 0; i < TMP_TRIES; i++) {
		clock_gettime(CLOCK_REALTIME, &ts);
		buf_reset(&name);
		if (buf_printf(&name, "%s/put-%ld-%lu-%ld", p->s->tmpdir,
			       (long)getpid(), p->s->seq++, (long)ts.tv_nsec) < 0)
			break;
		p->fd = open(name.ptr, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
			     0666);
		if (p->fd >= 0) {
			p->tmp = buf_detach(&name, NULL);
			return 0;
		}
		if (errno != EEXIST) {
			err_errno(e, ERR_IO, "cannot create temp file '%s'",
				  name.ptr);
			buf_release(&name);
			return -1;
		}
	}
	buf_release(&name);
	return err_set(e, ERR_IO, "cannot find a free temp name in '%s'",
		       p->s->tmpdir);
}

/* Closes and removes whatever the put still holds, then frees it. */
static void put_free(struct ptr_put *p)
{
	if (p->fd >= 0)
		close(p->fd);
	if (p->tmp) {
		unlink(p->tmp);
		free(p->tmp);
	}
	EVP_MD_CTX_free(p->md);
	free(p->buf);
	free(p);
}

int ptr_put_begin(struct ptr_store *s, struct ptr_put **out, struct err *e)
{
	struct ptr_put *p = xcalloc(1, sizeof(*p));

	p->s = s;
	p->fd = -1;
	p->md = EVP_MD_CTX_new();
	if (!p->md || EVP_DigestInit_ex(p->md, EVP_sha256(), NULL) != 1) {
		put_free(p);
		return err_set(e, ERR_IO, "libcrypto: cannot start SHA-256");
	}
	if (s) {
		if (tmp_create(p, e) < 0) {
			put_free(p);
			return -1;
		}
	}
	*out = p;
	return 0;
}

static int put_flush(struct ptr_put *p, struct err *e)
{
	if (p->used == 0)
		return 0;
	if (write_all(p->fd, p->buf, p->used, p->tmp, e) < 0)
		return -1;
	p->used = 0;
	return 0;
}

/* Stores n bytes: small ones are gathered, big ones written directly. */
static int put_store(struct ptr_put *p, const void *data, size_t n,
		     struct err *e)
{
	if (n < PUT_GATHER && n <= PUT_GATHER - p->used) {
		if (!p->buf)
			p->buf = xmalloc(PUT_GATHER);
		memcpy(p->buf + p->used, data, n);
		p->used += n;
		return 0;
	}
	if (put_flush(p, e) < 0)
		return -1;
	if (n >= PUT_GATHER)
		return write_all(p->fd, data, n, p->tmp, e);
	memcpy(p->buf, data, n);
	p->used = n;
	return 0;
}

int ptr_put_write(struct ptr_put *p, const void *data, size_t n,
		  struct err *e)
{
	if (p->failed)
		return err_set(e, ERR_IO, "write to a failed LFS put");
	if ((uint64_t)n > UINT64_MAX - p->size) {
		p->failed = 1;
		return err_set(e, ERR_IO, "LFS object size overflows");
	}
	if (EVP_DigestUpdate(p->md, data, n) != 1) {
		p->failed = 1;
		return err_set(e, ERR_IO, "libcrypto: SHA-256 update failed");
	}
	p->size += (uint64_t)n;
	if (p->s && put_store(p, data, n, e) < 0) {
		p->failed = 1;
		return -1;
	}
	return 0;
}

/* Flushes, fsyncs and closes the temp file. */
static int put_close(struct ptr_put *p, struct err *e)
{
	int fd = p->fd;

	if (put_flush(p, e) < 0)
		return -1;
	if (p->s->batch) {
		/* start the writeback now; ptr_store_sync waits for it */
		sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
	} else if (fsync_fd(fd, p->tmp, e) < 0) {
		return -1;
	}
	p->fd = -1;
	/* close can report a deferred write error (NFS); EINTR leaves the fd
	 * closed on Linux, so it is not retried. */
	if (close(fd) < 0 && errno != EINTR)
		return err_errno(e, ERR_IO, "cannot close '%s'", p->tmp);
	return 0;
}

/* Creates <dir>/<hex[0:2]> and <dir>/<hex[0:2]>/<hex[2:4]>. */
static int make_fanout(const struct ptr_store *s, const char *hex,
		       struct buf *leaf, struct err *e)
{
	if (buf_printf(leaf, "%s/%.2s", s->dir, hex) < 0)
		return err_set(e, ERR_IO, "LFS store path too long");
	if (mkdir_one(leaf->ptr, e) < 0)
		return -1;
	if (buf_printf(leaf, "/%.2s", hex + 2) < 0)
		return err_set(e, ERR_IO, "LFS store path too long");
	return mkdir_one(leaf->ptr, e);
}

/*
 * Whether the file at fd hashes to oid. 1 yes, 0 no, -1 on a read
 * error.
 */
static int content_matches(int fd, const struct ptr_oid *oid,
			   const char *path, struct err *e)
{
	unsigned char got[32], *buf = xmalloc(PUT_BUF_SIZE);
	unsigned int len = 0;
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	ssize_t n;
	int r = 0;

	if (!md || EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1)
		r = err_set(e, ERR_IO, "libcrypto: cannot start SHA-256");
	while (r == 0 && (n = read(fd, buf, PUT_BUF_SIZE)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			r = err_errno(e, ERR_IO, "cannot read LFS object '%s'",
				      path);
		else if (EVP_DigestUpdate(md, buf, (size_t)n) != 1)
			r = err_set(e, ERR_IO, "libcrypto: SHA-256 update failed");
	}
	if (r == 0 && (EVP_DigestFinal_ex(md, got, &len) != 1 ||
		       len != sizeof(got)))
		r = err_set(e, ERR_IO, "libcrypto: SHA-256 final failed");
	EVP_MD_CTX_free(md);
	free(buf);
	if (r < 0)
		return -1;
	return !memcmp(got, oid->sha256, sizeof(got));
}

/*
 * An object already in the store is relied on only once its content is
 * verified: same size and same SHA-256 (DESIGN.md: "an existing object
 * is verified, not rewritten"). Re-hashing costs one read of an object
 * the run would otherwise have written, and each content is put once per
 * run. Returns 1 if it exists and is good (left untouched), 0 if absent
 * or bad (wrong size or content: the caller's rename replaces it
 * atomically), -1 when it is not a regular file or cannot be read.
 */
static int existing_object(const char *path, const struct ptr_oid *oid,
			   uint64_t size, struct err *e)
{
	struct stat st;
	int fd, r;

	if (lstat(path, &st) < 0) {
		if (errno == ENOENT)
			return 0;
		return err_errno(e, ERR_IO, "cannot stat LFS object '%s'",
				 path);
	}
	if (!S_ISREG(st.st_mode))
		return err_set(e, ERR_IO,
			       "LFS object '%s' exists but is not a regular file",
			       path);
	if ((uint64_t)st.st_size != size)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return err_errno(e, ERR_IO, "cannot open LFS object '%s'",
				 path);
	r = content_matches(fd, oid, path, e);
	close(fd);
	return r;
}

static struct pending *find_pending(const struct ptr_store *s,
				    const char *final)
{
	size_t i;

	for (i = 0; i < s->npend; i++)
		if (!strcmp(s->pend[i].final, final))
			return &s->pend[i];
	return NULL;
}

static void add_pending(struct ptr_store *s, char *tmp, const char *final,
			const char *leaf)
{
	struct pending *pd;

	if (s->npend == s->pend_alloc) {
		s->pend_alloc = s->pend_alloc ? 2 * s->pend_alloc : 64;
		s->pend = xrealloc(s->pend, s->pend_alloc * sizeof(*s->pend));
	}
	pd = &s->pend[s->npend++];
	pd->tmp = tmp;
	pd->final = xstrdup(final);
	pd->leaf = xstrdup(leaf);
}

static void drop_pending(struct ptr_store *s, int unlink_tmp)
{
	size_t i;

	for (i = 0; i < s->npend; i++) {
		if (unlink_tmp && s->pend[i].tmp)
			unlink(s->pend[i].tmp);
		free(s->pend[i].tmp);
		free(s->pend[i].final);
		free(s->pend[i].leaf);
	}
	s->npend = 0;
}

void ptr_store_set_batch(struct ptr_store *s, int on)
{
	s->batch = on;
}

int ptr_store_sync(struct ptr_store *s, struct err *e)
{
	size_t i, j;
	int r = 0;

	for (i = 0; i < s->npend && r == 0; i++) {
		int fd = open(s->pend[i].tmp, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			r = err_errno(e, ERR_IO, "cannot open '%s'", s->pend[i].tmp);
		else if (fsync_fd(fd, s->pend[i].tmp, e) < 0)
			r = -1;
		if (fd >= 0)
			close(fd);
	}
	for (i = 0; i < s->npend && r == 0; i++) {
		if (place_object(s, s->pend[i].tmp, s->pend[i].final,
				 s->pend[i].leaf, e) < 0) {
			r = -1;
			break;
		}
		free(s->pend[i].tmp);
		s->pend[i].tmp = NULL;
	}
	/* each directory once */
	for (i = 0; i < s->npend && r == 0; i++) {
		for (j = 0; j < i && strcmp(s->pend[j].leaf, s->pend[i].leaf); j++)
			;
		if (j == i)
			r = fsync_dir(s->pend[i].leaf, e);
	}
	drop_pending(s, 1);
	return r;
}

/*
 * Renames the closed temp file to final (an object of the leaf directory
 * leaf). A git-annex object is left as git-annex leaves its own: the file
 * 0444 and its key directory 0555 (made writable for the rename, in case
 * an earlier run or git-annex froze it).
 */
static int place_object(const struct ptr_store *s, const char *tmp,
			const char *final, const char *leaf, struct err *e)
{
	if (s->annex)
		(void)chmod(leaf, 0755);
	if (rename(tmp, final) < 0)
		return err_errno(e, ERR_IO, "cannot rename '%s' to '%s'", tmp,
				 final);
	if (s->annex && (chmod(final, 0444) < 0 || chmod(leaf, 0555) < 0))
		return err_errno(e, ERR_IO, "cannot make '%s' read-only", final);
	return 0;
}

/* The directories of a git-annex object: <dir>/<h1>/<h2>/<key> (docs/FORMATS.md
 * §8), created; leaf gets the last, path the object's own name. */
static int make_annex_dirs(const struct ptr_store *s, const char *key,
			   struct buf *leaf, struct buf *path, struct err *e)
{
	char hd[8];
	int r = s->annex == 2 ? ptr_annex_hashdirlower(key, hd)
			      : ptr_annex_hashdirmixed(key, hd);

	if (r < 0)
		return err_set(e, ERR_IO, "libcrypto: MD5 failed");
	if (buf_printf(leaf, "%s/%.*s", s->dir, s->annex == 2 ? 3 : 2, hd) < 0)
		return err_set(e, ERR_IO, "annex store path too long");
	if (mkdir_one(leaf->ptr, e) < 0)
		return -1;
	buf_reset(leaf);
	if (buf_printf(leaf, "%s/%s", s->dir, hd) < 0)
		return err_set(e, ERR_IO, "annex store path too long");
	if (mkdir_one(leaf->ptr, e) < 0)
		return -1;
	if (buf_printf(leaf, "/%s", key) < 0 ||
	    buf_printf(path, "%s/%s", leaf->ptr, key) < 0)
		return err_set(e, ERR_IO, "annex store path too long");
	return mkdir_one(leaf->ptr, e);
}

/*
 * Moves the closed temp file to its final name, over a bad object if
 * one is there (rename is atomic: readers see the old file or the new
 * one, never a mix). A concurrent writer of the same object between the
 * check and the rename is harmless: rename replaces one complete,
 * identical file with another. key: the git-annex key (annex stores).
 */
static int put_commit(struct ptr_put *p, const struct ptr_oid *oid,
		      const char *key, struct err *e)
{
	struct buf leaf = BUF_INIT(BUF_MAX_DEFAULT);
	struct buf path = BUF_INIT(BUF_MAX_DEFAULT);
	char hex[PTR_OID_HEXSZ + 1];
	int r;

	ptr_oid_hex(oid, hex);
	r = put_close(p, e);
	if (r == 0 && key)
		r = make_annex_dirs(p->s, key, &leaf, &path, e);
	else if (r == 0)
		r = make_fanout(p->s, hex, &leaf, e);
	if (r == 0 && !key && buf_printf(&path, "%s/%s", leaf.ptr, hex) < 0)
		r = err_set(e, ERR_IO, "LFS store path too long");
	if (r == 0)
		r = existing_object(path.ptr, oid, p->size, e);
	if (r == 0 && p->s->batch && find_pending(p->s, path.ptr))
		r = 1; /* the same content is on its way already */
	if (r == 0 && p->s->batch) {
		add_pending(p->s, p->tmp, path.ptr, leaf.ptr);
		p->tmp = NULL; /* the store owns it now */
	} else if (r == 0) {
		r = place_object(p->s, p->tmp, path.ptr, leaf.ptr, e);
		if (r == 0) {
			free(p->tmp);
			p->tmp = NULL;
			r = fsync_dir(leaf.ptr, e);
		}
	}
	buf_release(&leaf);
	buf_release(&path);
	return r < 0 ? -1 : 0;
}

/* Ends the digest of p: its SHA-256 into *id. */
static int put_digest(struct ptr_put *p, struct ptr_oid *id, struct err *e)
{
	unsigned int len = 0;

	if (p->failed)
		return err_set(e, ERR_IO, "finishing a failed put");
	if (EVP_DigestFinal_ex(p->md, id->sha256, &len) != 1 ||
	    len != sizeof(id->sha256))
		return err_set(e, ERR_IO, "libcrypto: SHA-256 final failed");
	return 0;
}

int ptr_put_finish(struct ptr_put *p, struct ptr_oid *oid, uint64_t *size,
		   struct err *e)
{
	struct ptr_oid id;
	int r = put_digest(p, &id, e);

	if (r == 0 && p->s && p->s->annex)
		r = err_set(e, ERR_IO, "a git-annex store needs a key");
	if (r == 0 && p->s)
		r = put_commit(p, &id, NULL, e);
	if (r == 0) {
		if (oid)
			*oid = id;
		if (size)
			*size = p->size;
	}
	put_free(p);
	return r;
}

int ptr_put_finish_annex(struct ptr_put *p, enum ptr_annex_backend backend,
			 const char *filename, struct buf *key,
			 struct ptr_oid *oid, uint64_t *size, struct err *e)
{
	struct ptr_oid id;
	int r = put_digest(p, &id, e);

	if (r == 0 && ptr_annex_key_backend(key, backend, &id, p->size,
					    filename) < 0)
		r = err_set(e, ERR_IO, "git-annex key too long");
	if (r == 0 && p->s)
		r = put_commit(p, &id, key->ptr, e);
	if (r == 0) {
		if (oid)
			*oid = id;
		if (size)
			*size = p->size;
	}
	put_free(p);
	return r;
}

int ptr_store_open_key(const struct ptr_store *s, const char *key, int *fd,
		       uint64_t *size, struct err *e)
{
	struct buf path = BUF_INIT(BUF_MAX_DEFAULT);
	const struct pending *pd;
	char hd[8];
	int r;

	if ((s->annex == 2 ? ptr_annex_hashdirlower(key, hd)
			   : ptr_annex_hashdirmixed(key, hd)) < 0 ||
	    buf_printf(&path, "%s/%s/%s/%s", s->dir, hd, key, key) < 0) {
		buf_release(&path);
		return err_set(e, ERR_IO, "annex store path too long");
	}
	pd = find_pending(s, path.ptr);
	if (pd)
		buf_set(&path, pd->tmp, strlen(pd->tmp));
	r = open_object(path.ptr, "git-annex", fd, size, e);
	buf_release(&path);
	return r;
}

void ptr_put_abort(struct ptr_put *p)
{
	if (p)
		put_free(p);
}
