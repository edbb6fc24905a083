/*
 * ptr_probe.c - drives pointerize/ from shell tests, with git-lfs as the
 * oracle (tests/integration/lfs_pointer_oracle.sh).
 *
 *   ptr_probe [--store DIR] FILE
 *       prints our LFS pointer for FILE's content on stdout (nothing for
 *       an empty file); with --store, also puts the content into DIR.
 *       The file is streamed in odd-sized chunks, never read whole.
 *   ptr_probe --check FILE
 *       classifies FILE as ptr_is_lfs_pointer does and exits like
 *       `git lfs pointer --check --strict`: 0 canonical pointer, 2 valid
 *       but not canonical, 1 not a pointer.
 *
 * Exit status 3 on an I/O error (message on stderr).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pointerize/pointerize.h"

#define CHUNK 65521 /* odd on purpose: exercises the put's buffering */

static int usage(void)
{
	fprintf(stderr, "usage: ptr_probe [--store DIR] FILE\n"
			"       ptr_probe --check FILE\n");
	return 1;
}

static int fail(const struct err *e)
{
	fprintf(stderr, "ptr_probe: %s\n", e->msg);
	return 3;
}

/* Streams fd into p; on failure p is still the caller's to abort. */
static int pump(int fd, const char *name, struct ptr_put *p, struct err *e)
{
	static char chunk[CHUNK];

	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return err_errno(e, ERR_IO, "cannot read '%s'", name);
		if (n == 0)
			return 0;
		if (ptr_put_write(p, chunk, (size_t)n, e) < 0)
			return -1;
	}
}

static int pointer_of(const char *file, const char *store_dir)
{
	struct buf out = BUF_INIT(BUF_MAX_DEFAULT);
	struct ptr_store *s = NULL;
	struct ptr_put *p = NULL;
	struct err e = ERR_INIT;
	struct ptr_oid oid;
	uint64_t size;
	int fd = open(file, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		err_errno(&e, ERR_IO, "cannot open '%s'", file);
		return fail(&e);
	}
	if ((store_dir && ptr_store_open(&s, store_dir, &e) < 0) ||
	    ptr_put_begin(s, &p, &e) < 0)
		goto failed;
	if (pump(fd, file, p, &e) < 0) {
		ptr_put_abort(p);
		goto failed;
	}
	if (ptr_put_finish(p, &oid, &size, &e) < 0)
		goto failed;
	if (ptr_lfs_pointer(&out, &oid, size) < 0) {
		err_set(&e, ERR_IO, "cannot build the pointer");
		goto failed;
	}
	close(fd);
	ptr_store_free(s);
	fwrite(out.ptr, 1, out.len, stdout);
	buf_release(&out);
	return fflush(stdout) == 0 ? 0 : 3;
failed:
	close(fd);
	ptr_store_free(s);
	return fail(&e);
}

static int check(const char *file)
{
	char data[PTR_LFS_POINTER_MAX + 1];
	struct err e = ERR_INIT;
	FILE *fp = fopen(file, "rb");
	size_t n;

	if (!fp) {
		err_errno(&e, ERR_IO, "cannot open '%s'", file);
		return fail(&e);
	}
	n = fread(data, 1, sizeof(data), fp);
	fclose(fp);
	switch (ptr_is_lfs_pointer(data, n)) {
	case PTR_LFS_CANONICAL:
		return 0;
	case PTR_LFS_NONCANONICAL:
		return 2;
	default:
		return 1;
	}
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--check") == 0)
		return check(argv[2]);
	if (argc == 4 && strcmp(argv[1], "--store") == 0)
		return pointer_of(argv[3], argv[2]);
	if (argc == 2 && argv[1][0] != '-')
		return pointer_of(argv[1], NULL);
	return usage();
}
