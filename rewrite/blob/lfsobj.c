/*
 * lfsobj.c - an LFS object file of the stores unlfs reads, found by its
 * SHA-256, checked (size and SHA-256) and, when the run names an objects
 * directory, stored there as a pack of its own (packw.c). The tools are
 * per thread (struct lfs_check): unlfs.c uses them for the main thread's
 * reads, pool.c for its workers'. A file of its own so that both call
 * down into it and neither calls the other back
 * (tests/integration/circles.sh).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "way.h"

void lfs_check_init(struct lfs_check *c, const struct blobs *b)
{
	c->hash = obj_hash_new();
	c->z = b->report ? zest_new() : NULL;
	c->chunk = xmalloc(CHUNK);
	c->objects_dir = b->opt.dry_run ? NULL : b->opt.objects_dir;
	c->level = b->opt.objects_level;
	c->stop = NULL;
	c->stop_arg = NULL;
}

void lfs_check_release(struct lfs_check *c)
{
	obj_hash_free(c->hash);
	zest_free(c->z);
	free(c->chunk);
	memset(c, 0, sizeof(*c));
}

void lfs_found_release(struct lfs_found *f)
{
	packw_free(f->pack);
	free(f->path);
	memset(f, 0, sizeof(*f));
}

/*
 * Reads the file at path whole once: 1 when it has the size and SHA-256
 * want (found: its id, estimate, and the pack when c stores objects); 0
 * when it is not there or not that object (another store may have it);
 * -1 on a read or write error.
 */
static int file_check(struct lfs_check *c, const char *path,
		      const struct ptr_oid *want, uint64_t size,
		      struct lfs_found *found, struct err *e)
{
	struct ptr_put *put = NULL;
	struct packw *pw = NULL;
	struct ptr_oid got;
	struct stat st;
	uint64_t total = 0;
	ssize_t n = 0;
	int fd, r = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 :
			err_errno(e, ERR_IO, "cannot open %s", path);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size != size)
		goto out;
	if (ptr_put_begin(NULL, &put, e) < 0 || (c->objects_dir &&
	    packw_begin(&pw, c->objects_dir, size, c->level, e) < 0)) {
		r = -1;
		goto out;
	}
	obj_hash_begin(c->hash, OBJ_BLOB, size);
	if (c->z)
		zest_begin(c->z);
	while (total < size) {
		do
			n = read(fd, c->chunk, CHUNK);
		while (n < 0 && errno == EINTR);
		if (n <= 0 || (c->stop && c->stop(c->stop_arg)))
			break;
		if ((uint64_t)n > size - total)
			n = (ssize_t)(size - total);
		total += (uint64_t)n;
		obj_hash_update(c->hash, c->chunk, (size_t)n);
		if (c->z)
			zest_feed(c->z, c->chunk, (size_t)n);
		if (ptr_put_write(put, c->chunk, (size_t)n, e) < 0 ||
		    (pw && packw_write(pw, c->chunk, (size_t)n, e) < 0)) {
			r = -1;
			break;
		}
	}
	if (r == 0 && n < 0)
		r = err_errno(e, ERR_IO, "cannot read %s", path);
	obj_hash_final(c->hash, &found->id);
	if (r < 0 || total != size)	/* shrank while read, or stopped */
		goto out;
	found->est = c->z ? zest_end(c->z, size) : 0;
	r = ptr_put_finish(put, &got, NULL, e);
	put = NULL;
	if (r < 0 || memcmp(got.sha256, want->sha256, sizeof(got.sha256)))
		goto out;
	if (pw && packw_finish(pw, &found->id, e) < 0) {
		r = -1;
		goto out;
	}
	found->pack = pw;
	pw = NULL;
	r = 1;
out:
	ptr_put_abort(put);
	packw_free(pw);
	close(fd);
	return r;
}

int lfs_find(struct lfs_check *c, char *const *dirs, size_t ndirs,
	     const struct ptr_oid *oid, uint64_t size, struct lfs_found *found,
	     struct err *e)
{
	struct buf path = BUF_INIT(SIZE_MAX / 2);
	char hex[PTR_OID_HEXSZ + 1];
	size_t i;
	int r = 0;

	ptr_oid_hex(oid, hex);
	for (i = 0; i < ndirs && r == 0; i++) {
		buf_reset(&path);
		buf_printf(&path, "%s/%.2s/%.2s/%s", dirs[i], hex, hex + 2, hex);
		r = file_check(c, path.ptr, oid, size, found, e);
	}
	if (r == 1)
		found->path = buf_detach(&path, NULL);
	buf_release(&path);
	return r;
}
