/*
 * test_pointerize.c - LFS pointers, pointer recognition, the object store
 * and git-annex keys (docs/FORMATS.md §7, §8).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "pointerize/pointerize.h"

#define HELLO_OID "4859402c258b836d02e955d1090e29f586e58b2040504d68afec3d8d43757bba"
#define EMPTY_OID "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define HELLO_PTR                                                            \
	"version https://git-lfs.github.com/spec/v1\n"                        \
	"oid sha256:" HELLO_OID "\n"                                         \
	"size 10\n"

/* ---- helpers ---- */

struct fixture {
	char root[64];	   /* mkdtemp directory, removed afterwards */
	char store[128];   /* <root>/store */
};

static int rm_entry(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	chmod(path, 0700); /* undo permission tests */
	return remove(path);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	strcpy(f->root, "/tmp/test_ptr.XXXXXX");
	assert_non_null(mkdtemp(f->root));
	snprintf(f->store, sizeof(f->store), "%s/store", f->root);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	chmod(f->root, 0700);
	nftw(f->root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(f);
	return 0;
}

static size_t nfiles;

static int count_entry(const char *path, const struct stat *st, int flag,
		       struct FTW *ftw)
{
	(void)path;
	(void)ftw;
	if (flag == FTW_F && S_ISREG(st->st_mode))
		nfiles++;
	return 0;
}

/* Regular files anywhere under dir. */
static size_t count_files(const char *dir)
{
	nfiles = 0;
	assert_int_equal(nftw(dir, count_entry, 16, FTW_PHYS), 0);
	return nfiles;
}

static struct ptr_store *open_store(const char *dir)
{
	struct ptr_store *s = NULL;
	struct err e = ERR_INIT;

	assert_int_equal(ptr_store_open(&s, dir, &e), 0);
	assert_non_null(s);
	return s;
}

/* Puts data in chunks of the given size (0: all at once). */
static int put_chunks(struct ptr_store *s, const void *data, size_t n,
		      size_t chunk, struct ptr_oid *oid, uint64_t *size,
		      struct err *e)
{
	struct ptr_put *p = NULL;
	const char *d = data;

	if (ptr_put_begin(s, &p, e) < 0)
		return -1;
	while (n > 0) {
		size_t k = chunk && chunk < n ? chunk : n;
		if (ptr_put_write(p, d, k, e) < 0) {
			ptr_put_abort(p);
			return -1;
		}
		d += k;
		n -= k;
	}
	return ptr_put_finish(p, oid, size, e);
}

static void hash_of(const void *data, size_t n, struct ptr_oid *oid)
{
	struct err e = ERR_INIT;
	uint64_t size = 0;

	assert_int_equal(put_chunks(NULL, data, n, 0, oid, &size, &e), 0);
	assert_int_equal(size, n);
}

static void assert_oid_hex(const struct ptr_oid *oid, const char *hex)
{
	char got[PTR_OID_HEXSZ + 1];

	ptr_oid_hex(oid, got);
	assert_string_equal(got, hex);
}

static void object_path(const struct ptr_store *s, const struct ptr_oid *oid,
			struct buf *path)
{
	assert_int_equal(ptr_store_object_path(path, s, oid), 0);
}

/* Deterministic pseudo-random bytes (xorshift64). */
static unsigned char *random_bytes(size_t n, uint64_t seed)
{
	unsigned char *b = malloc(n);
	size_t i;

	assert_non_null(b);
	for (i = 0; i < n; i++) {
		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		b[i] = (unsigned char)(seed >> 24);
	}
	return b;
}

/* Reads the whole file behind fd. */
static unsigned char *read_fd(int fd, size_t n)
{
	unsigned char *b = malloc(n + 1);
	size_t got = 0;

	assert_non_null(b);
	while (got < n) {
		ssize_t r = read(fd, b + got, n - got);
		assert_true(r > 0);
		got += (size_t)r;
	}
	return b;
}

static void write_file(const char *path, const char *data, size_t n)
{
	FILE *fp = fopen(path, "wb");

	assert_non_null(fp);
	assert_int_equal(fwrite(data, 1, n, fp), n);
	assert_int_equal(fclose(fp), 0);
}

/* ---- pointer bytes ---- */

static void test_pointer_hello(void **state)
{
	struct buf b = BUF_INIT(BUF_MAX_DEFAULT);
	struct ptr_oid oid;

	(void)state;
	hash_of("hello lfs\n", 10, &oid);
	assert_oid_hex(&oid, HELLO_OID);
	assert_int_equal(ptr_lfs_pointer(&b, &oid, 10), 0);
	assert_int_equal(b.len, 127); /* docs/FORMATS.md §7 */
	assert_string_equal(b.ptr, HELLO_PTR);
	assert_int_equal(ptr_is_lfs_pointer(b.ptr, b.len), PTR_LFS_CANONICAL);
	buf_release(&b);
}

static void test_pointer_replaces_content(void **state)
{
	struct buf b = BUF_INIT(BUF_MAX_DEFAULT);
	struct ptr_oid oid;

	(void)state;
	hash_of("hello lfs\n", 10, &oid);
	assert_int_equal(buf_adds(&b, "junk"), 0);
	assert_int_equal(ptr_lfs_pointer(&b, &oid, 10), 0);
	assert_string_equal(b.ptr, HELLO_PTR);
	buf_release(&b);
}

/* ptr_lfs_decode gives back what ptr_lfs_pointer wrote, takes what
 * git-lfs takes (CRLF, blanks around), and says so of extensions. */
static void test_pointer_decode(void **state)
{
	struct buf b = BUF_INIT(BUF_MAX_DEFAULT);
	struct ptr_oid oid, got;
	uint64_t size;
	int ext;
	static const char crlf[] =
		"version https://git-lfs.github.com/spec/v1\r\n"
		"oid sha256:" HELLO_OID "\r\nsize 10\r\n";
	static const char with_ext[] =
		"version https://git-lfs.github.com/spec/v1\n"
		"ext-0-foo sha256:" HELLO_OID "\n"
		"oid sha256:" HELLO_OID "\nsize 10\n";

	(void)state;
	hash_of("hello lfs\n", 10, &oid);
	assert_int_equal(ptr_lfs_pointer(&b, &oid, 10), 0);
	assert_int_equal(ptr_lfs_decode(b.ptr, b.len, &got, &size, &ext),
			 PTR_LFS_CANONICAL);
	assert_memory_equal(got.sha256, oid.sha256, sizeof(oid.sha256));
	assert_int_equal(size, 10);
	assert_int_equal(ext, 0);
	assert_int_equal(ptr_lfs_decode(crlf, sizeof(crlf) - 1, &got, &size, &ext),
			 PTR_LFS_NONCANONICAL);
	assert_memory_equal(got.sha256, oid.sha256, sizeof(oid.sha256));
	assert_int_equal(size, 10);
	assert_int_not_equal(ptr_lfs_decode(with_ext, sizeof(with_ext) - 1, &got,
					    &size, &ext), PTR_LFS_NOT_POINTER);
	assert_int_equal(ext, 1);
	assert_int_equal(ptr_lfs_decode("hello", 5, &got, &size, &ext),
			 PTR_LFS_NOT_POINTER);
	assert_int_equal(size, 0);
	buf_release(&b);
}

static void test_pointer_empty(void **state)
{
	struct buf b = BUF_INIT(BUF_MAX_DEFAULT);
	struct ptr_oid oid;

	(void)state;
	hash_of("", 0, &oid);
	assert_oid_hex(&oid, EMPTY_OID);
	assert_int_equal(buf_adds(&b, "x"), 0);
	/* docs/FORMATS.md §7: an empty file is its own pointer */
	assert_int_equal(ptr_lfs_pointer(&b, &oid, 0), 0);
	assert_int_equal(b.len, 0);
	assert_int_equal(ptr_is_lfs_pointer("", 0), PTR_LFS_CANONICAL);
	buf_release(&b);
}

static void test_pointer_size_limits(void **state)
{
	struct buf b = BUF_INIT(BUF_MAX_DEFAULT);
	struct buf small = BUF_INIT(100);
	struct ptr_oid oid;

	(void)state;
	hash_of("x", 1, &oid);
	assert_int_equal(buf_adds(&b, "keep"), 0);
	assert_int_equal(ptr_lfs_pointer(&b, &oid, (uint64_t)INT64_MAX + 1), -1);
	assert_string_equal(b.ptr, "keep");
	assert_int_equal(ptr_lfs_pointer(&b, &oid, (uint64_t)INT64_MAX), 0);
	assert_int_equal(ptr_is_lfs_pointer(b.ptr, b.len), PTR_LFS_CANONICAL);
	/* a capped buffer refuses and stays as it was */
	assert_int_equal(ptr_lfs_pointer(&small, &oid, 1), -1);
	assert_int_equal(small.len, 0);
	buf_release(&b);
	buf_release(&small);
}

/* ---- the store ---- */

static void test_store_open_creates_parents(void **state)
{
	struct fixture *f = *state;
	struct ptr_store *s;
	char dir[300], want[256], tmp[300];
	struct stat st;

	snprintf(want, sizeof(want), "%s/a/b//c", f->root);
	snprintf(dir, sizeof(dir), "%s/", want);
	s = open_store(dir);
	assert_string_equal(ptr_store_dir(s), want);
	assert_int_equal(stat(want, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	snprintf(tmp, sizeof(tmp), "%s/tmp", want);
	assert_int_equal(stat(tmp, &st), 0);
	ptr_store_free(s);
	/* reopening an existing store is fine */
	s = open_store(want);
	ptr_store_free(s);
	ptr_store_free(NULL);
}

static void test_put_streaming_matches_oneshot(void **state)
{
	struct fixture *f = *state;
	const size_t n = (5u << 20) + 12345; /* > the 1 MiB write buffer */
	static const size_t chunks[] = { 1, 7, 4093, 65537, 1048575,
					 1048576, 3000001 };
	unsigned char *data = random_bytes(n, 42), *back;
	struct buf path = BUF_INIT(BUF_MAX_DEFAULT);
	struct ptr_store *s = open_store(f->store);
	struct ptr_oid one, got;
	struct err e = ERR_INIT;
	uint64_t size = 0;
	size_t i;
	int fd;

	hash_of(data, n, &one);
	for (i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
		size_t c = chunks[i];
		/* chunk 1 over 5 MiB is slow under ASan: hash-only there */
		struct ptr_store *target = c == 1 ? NULL : s;
		assert_int_equal(put_chunks(target, data, c == 1 ? 70001 : n, c,
					    &got, &size, &e), 0);
		if (c == 1)
			continue;
		assert_memory_equal(got.sha256, one.sha256, 32);
		assert_int_equal(size, n);
	}
	/* the object sits at <dir>/<oid[0:2]>/<oid[2:4]>/<oid> */
	object_path(s, &one, &path);
	{
		char hex[PTR_OID_HEXSZ + 1], want[512];
		ptr_oid_hex(&one, hex);
		snprintf(want, sizeof(want), "%s/%.2s/%.2s/%s", f->store, hex,
			 hex + 2, hex);
		assert_string_equal(path.ptr, want);
	}
	assert_int_equal(ptr_store_open_object(s, &one, &fd, &size, &e), 0);
	assert_int_equal(size, n);
	back = read_fd(fd, n);
	close(fd);
	assert_memory_equal(back, data, n);
	assert_int_equal(count_files(f->store), 1); /* no temp files left */
	free(back);
	free(data);
	buf_release(&path);
	ptr_store_free(s);
}

static void test_put_small_object(void **state)
{
	struct fixture *f = *state;
	struct ptr_store *s = open_store(f->store);
	struct buf path = BUF_INIT(BUF_MAX_DEFAULT);
	struct ptr_oid oid;
	struct err e = ERR_INIT;
	uint64_t size = 0;
	char want[512];
	unsigned char *back;
	int fd;

	assert_int_equal(put_chunks(s, "hello lfs\n", 10, 3, &oid, &size, &e), 0);
	assert_oid_hex(&oid, HELLO_OID);
	snprintf(want, sizeof(want), "%s/48/59/%s", f->store, HELLO_OID);
	object_path(s, &oid, &path);
	assert_string_equal(path.ptr, want);
	assert_int_equal(ptr_store_open_object(s, &oid, &fd, &size, &e), 0);
	assert_int_equal(size, 10);
	back = read_fd(fd, 10);
	close(fd);
	assert_memory_equal(back, "hello lfs\n", 10);
	free(back);
	buf_release(&path);
	ptr_store_free(s);
}

static void test_put_empty_object(void **state)
{
	struct fixture *f = *state;
	struct ptr_store *s = open_store(f->store);
	struct ptr_oid oid;
	struct err e = ERR_INIT;
	uint64_t size = 1;
	int fd;

	assert_int_equal(put_chunks(s, "", 0, 0, &oid, &size, &e), 0);
	assert_int_equal(size, 0);
	assert_oid_hex(&oid, EMPTY_OID);
	assert_int_equal(ptr_store_open_object(s, &oid, &fd, &size, &e), 0);
	assert_int_equal(size, 0);
	close(fd);
	ptr_store_free(s);
}

static void test_put_twice_keeps_first(void **state)
{
	struct fixture *f = *state;
	struct ptr_store *s = open_store(f->store);
	struct buf path = BUF_INIT(BUF_MAX_DEFAULT);
	const struct timespec old[2] = { { 1000000, 0 }, { 1000000, 0 } };
	struct ptr_oid a, b;
	struct err e = ERR_INIT;
	struct stat st1, st2;
	uint64_t size;

	assert_int_equal(put_chunks(s, "same bytes", 10, 0, &a, &size, &e), 0);
	object_path(s, &a, &path);
	/* an old mtime makes any rewrite visible */
	assert_int_equal(utimensat(AT_FDCWD, path.ptr, old, 0), 0);
	assert_int_equal(stat(path.ptr, &st1), 0);
	assert_int_equal(put_chunks(s, "same bytes", 10, 4, &b, &size, &e), 0);
	assert_memory_equal(a.sha256, b.sha256, 32);
	assert_int_equal(stat(path.ptr, &st2), 0);
	assert_int_equal(st1.st_ino, st2.st_ino);
	assert_int_equal(st2.st_mtim.tv_sec, 1000000);
	assert_int_equal(count_files(f->store), 1);
	buf_release(&path);
	ptr_store_free(s);
}

/* Plants bytes under the final name of content's object. */
static void plant_object(const struct fixture *f, struct ptr_store *s,
			 const char *content, size_t n, const char *bytes,
			 size_t bn, struct buf *path)
{
	struct ptr_oid oid;
	char hex[PTR_OID_HEXSZ + 1], dir[512];

	hash_of(content, n, &oid);
	ptr_oid_hex(&oid, hex);
	snprintf(dir, sizeof(dir), "%s/%.2s", f->store, hex);
	assert_int_equal(mkdir(dir, 0777), 0);
	snprintf(dir, sizeof(dir), "%s/%.2s/%.2s", f->store, hex, hex + 2);
	assert_int_equal(mkdir(dir, 0777), 0);
	object_path(s, &oid, path);
	write_file(path->ptr, bytes, bn);
}

/* A bad object under the right name (wrong size, or the right size and
 * wrong bytes) is replaced by the good copy, in plain and batch mode. */
static void check_bad_object_replaced(const struct fixture *f, int batch,
				      const char *bad, size_t bad_len)
{
	struct ptr_store *s = open_store(f->store);
	struct buf path = BUF_INIT(BUF_MAX_DEFAULT);
	struct ptr_oid got;
	struct err e = ERR_INIT;
	unsigned char *back;
	uint64_t size;
	int fd;

	ptr_store_set_batch(s, batch);
	plant_object(f, s, "hello lfs\n", 10, bad, bad_len, &path);
	assert_int_equal(put_chunks(s, "hello lfs\n", 10, 3, &got, &size, &e), 0);
	assert_oid_hex(&got, HELLO_OID);
	/* readable as the good content before and after the sync */
	assert_int_equal(ptr_store_open_object(s, &got, &fd, &size, &e), 0);
	assert_int_equal(size, 10);
	back = read_fd(fd, 10);
	close(fd);
	assert_memory_equal(back, "hello lfs\n", 10);
	free(back);
	assert_int_equal(ptr_store_sync(s, &e), 0);
	fd = open(path.ptr, O_RDONLY);
	assert_true(fd >= 0);
	back = read_fd(fd, 10);
	close(fd);
	assert_memory_equal(back, "hello lfs\n", 10);
	free(back);
	assert_int_equal(count_files(f->store), 1); /* no temp file left */
	buf_release(&path);
	ptr_store_free(s);
}

static void test_put_existing_wrong_size(void **state)
{
	check_bad_object_replaced(*state, 0, "corrupt", 7);
}

static void test_put_existing_wrong_content(void **state)
{
	check_bad_object_replaced(*state, 0, "hello LFS\n", 10);
}

static void test_batch_existing_wrong_content(void **state)
{
	check_bad_object_replaced(*state, 1, "hello lfs\r", 10);
}

/* A directory where the object belongs cannot be replaced: an error
 * naming it, and nothing left behind. */
static void test_put_existing_not_a_file(void **state)
{
	struct fixture *f = *state;
	struct ptr_store *s = open_store(f->store);
	struct buf path = BUF_INIT(BUF_MAX_DEFAULT);
	struct ptr_oid oid, got;
	struct err e = ERR_INIT;
	char dir[512];
	uint64_t size;

	hash_of("hello lfs\n", 10, &oid);
	snprintf(dir, sizeof(dir), "%s/48", f->store);
	assert_int_equal(mkdir(dir, 0777), 0);
	snprintf(dir, sizeof(dir), "%s/48/59", f->store);
	assert_int_equal(mkdir(dir, 0777), 0);
	object_path(s, &oid, &path);
	assert_int_equal(mkdir(path.ptr, 0777), 0);
	assert_int_equal(put_chunks(s, "hello lfs\n", 10, 0, &got, &size, &e), -1);
	assert_int_equal(e.kind, ERR_IO);
	assert_non_null(strstr(e.msg, path.ptr));
	assert_int_equal(count_files(f->store), 0);
	buf_release(&path);
	ptr_store_free(s);
}

/* The entries of <store>/tmp that ptr_put_is_dead_temp takes; with one
 * at least. */
static int dead_temps(const char *store)
{
	char path[4096];
	struct dirent *de;
	DIR *d;
	int n = 0, seen = 0;

	snprintf(path, sizeof(path), "%s/tmp", store);
	assert_non_null(d = opendir(path));
	while ((de = readdir(d))) {
		seen += !strncmp(de->d_name, "put-", 4);
		n += ptr_put_is_dead_temp(de->d_name);
	}
	closedir(d);
	assert_true(seen > 0);
	return n;
}

/* A put's temp name is the clean-up's once its process has ended. */
static void test_put_dead_temp(void **state)
{
	char name[64];
	pid_t pid;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	snprintf(name, sizeof(name), "put-%ld-3-12345", (long)pid);
	assert_true(ptr_put_is_dead_temp(name));
	snprintf(name, sizeof(name), "put-%ld-3-", (long)pid);
	assert_false(ptr_put_is_dead_temp(name));
	snprintf(name, sizeof(name), "put-%ld-x-1", (long)pid);
	assert_false(ptr_put_is_dead_temp(name));
	snprintf(name, sizeof(name), "put-%ld-3-1.tmp", (long)pid);
	assert_false(ptr_put_is_dead_temp(name));
	snprintf(name, sizeof(name), "put-%ld-3-1", (long)getpid());
	assert_false(ptr_put_is_dead_temp(name));
}

static void test_put_abort_leaves_nothing(void **state)
{
	struct fixture *f = *state;
	struct ptr_store *s = open_store(f->store);
	unsigned char *data = random_bytes(3u << 20, 7);
	struct ptr_put *p = NULL;
	struct err e = ERR_INIT;

	assert_int_equal(ptr_put_begin(s, &p, &e), 0);
	assert_int_equal(ptr_put_write(p, data, 3u << 20, &e), 0);
	assert_int_equal(ptr_put_write(p, "tail", 4, &e), 0);
	assert_int_equal(count_files(f->store), 1); /* the temp file */
	/* ours, and this process lives: not for the clean-up */
	assert_int_equal(dead_temps(f->store), 0);
	ptr_put_abort(p);
	assert_int_equal(count_files(f->store), 0);
	ptr_put_abort(NULL);
	free(data);
	ptr_store_free(s);
}

/* Batch mode: nothing under its final name before ptr_store_sync, yet
 * readable; in place after it; removed if the store goes unsynced. */
static void test_batch_put_sync(void **state)
{
	struct fixture *f = *state;
	struct ptr_store *s = open_store(f->store);
	struct buf path = BUF_INIT(BUF_MAX_DEFAULT);
	struct ptr_oid oid, oid2;
	struct err e = ERR_INIT;
	struct stat st;
	uint64_t size = 0;
	unsigned char *back;
	int fd;

	ptr_store_set_batch(s, 1);
	assert_int_equal(put_chunks(s, "hello lfs\n", 10, 4, &oid, &size, &e), 0);
	assert_int_equal(put_chunks(s, "hello lfs\n", 10, 3, &oid2, &size, &e), 0);
	assert_int_equal(count_files(f->store), 1); /* one temp, deduplicated */
	object_path(s, &oid, &path);
	assert_int_equal(stat(path.ptr, &st), -1);
	assert_int_equal(ptr_store_open_object(s, &oid, &fd, &size, &e), 0);
	back = read_fd(fd, 10);
	close(fd);
	assert_memory_equal(back, "hello lfs\n", 10);
	free(back);
	assert_int_equal(ptr_store_sync(s, &e), 0);
	assert_int_equal(stat(path.ptr, &st), 0);
	assert_int_equal(count_files(f->store), 1);
	/* a put never synced leaves nothing behind */
	assert_int_equal(put_chunks(s, "other\n", 6, 2, &oid, &size, &e), 0);
	assert_int_equal(count_files(f->store), 2);
	ptr_store_free(s);
	assert_int_equal(count_files(f->store), 1);
	buf_release(&path);
}

static void test_hash_only_writes_nothing(void **state)
{
	struct fixture *f = *state;
	struct ptr_store *s = open_store(f->store);
	struct ptr_oid oid;
	struct err e = ERR_INIT;
	uint64_t size;
	int fd;

	assert_int_equal(put_chunks(NULL, "hello lfs\n", 10, 1, &oid, &size, &e),
			 0);
	assert_oid_hex(&oid, HELLO_OID);
	assert_int_equal(size, 10);
	assert_int_equal(count_files(f->store), 0);
	assert_int_equal(ptr_store_open_object(s, &oid, &fd, &size, &e), -1);
	ptr_store_free(s);
}

static void test_open_object_missing(void **state)
{
	struct fixture *f = *state;
	struct ptr_store *s = open_store(f->store);
	struct buf path = BUF_INIT(BUF_MAX_DEFAULT);
	struct ptr_oid oid;
	struct err e = ERR_INIT;
	uint64_t size = 99;
	int fd = -7;

	hash_of("absent", 6, &oid);
	object_path(s, &oid, &path);
	assert_int_equal(ptr_store_open_object(s, &oid, &fd, &size, &e), -1);
	assert_int_equal(e.kind, ERR_IO);
	assert_non_null(strstr(e.msg, path.ptr));
	assert_non_null(strstr(e.msg, "missing"));
	assert_int_equal(fd, -7);
	assert_int_equal(size, 99);
	buf_release(&path);
	ptr_store_free(s);
}

static void test_store_under_regular_file(void **state)
{
	struct fixture *f = *state;
	struct ptr_store *s = NULL;
	struct err e = ERR_INIT;
	char file[256], dir[300];

	snprintf(file, sizeof(file), "%s/plain", f->root);
	write_file(file, "x", 1);
	snprintf(dir, sizeof(dir), "%s/sub/store", file);
	assert_int_equal(ptr_store_open(&s, dir, &e), -1);
	assert_null(s);
	assert_int_equal(e.kind, ERR_IO);
	assert_non_null(strstr(e.msg, file));
	/* the store root itself a regular file */
	e.kind = ERR_NONE;
	assert_int_equal(ptr_store_open(&s, file, &e), -1);
	assert_int_equal(e.kind, ERR_IO);
	assert_non_null(strstr(e.msg, file));
	assert_non_null(strstr(e.msg, "not a directory"));
}

static void test_store_unwritable(void **state)
{
	struct fixture *f = *state;
	struct ptr_store *s = NULL;
	struct ptr_put *p = NULL;
	struct err e = ERR_INIT;
	char ro[256], dir[300], tmp[300];

	if (geteuid() == 0)
		skip(); /* root ignores the permission bits */
	snprintf(ro, sizeof(ro), "%s/ro", f->root);
	assert_int_equal(mkdir(ro, 0500), 0);
	snprintf(dir, sizeof(dir), "%s/store", ro);
	assert_int_equal(ptr_store_open(&s, dir, &e), -1);
	assert_int_equal(e.kind, ERR_IO);
	assert_non_null(strstr(e.msg, dir));
	/* a store whose tmp became unwritable fails at put_begin */
	s = open_store(f->store);
	snprintf(tmp, sizeof(tmp), "%s/tmp", f->store);
	assert_int_equal(chmod(tmp, 0500), 0);
	assert_int_equal(ptr_put_begin(s, &p, &e), -1);
	assert_non_null(strstr(e.msg, tmp));
	chmod(tmp, 0700);
	ptr_store_free(s);
}

static void test_store_empty_name(void **state)
{
	struct ptr_store *s = NULL;
	struct err e = ERR_INIT;

	(void)state;
	assert_int_equal(ptr_store_open(&s, "", &e), -1);
	assert_int_equal(e.kind, ERR_IO);
}

/* ---- recognising pointers ---- */

#define V1 "version https://git-lfs.github.com/spec/v1\n"
#define OIDL "oid sha256:" HELLO_OID "\n"
#define EXT0 "ext-0-foo sha256:" EMPTY_OID "\n"
#define EXT1 "ext-1-bar sha256:" EMPTY_OID "\n"

static int classify(const char *s)
{
	return ptr_is_lfs_pointer(s, strlen(s));
}

static void test_is_pointer_canonical(void **state)
{
	(void)state;
	assert_int_equal(classify(HELLO_PTR), PTR_LFS_CANONICAL);
	assert_int_equal(classify(V1 EXT0 EXT1 OIDL "size 10\n"),
			 PTR_LFS_CANONICAL);
	assert_int_equal(classify(V1 OIDL "size 9223372036854775807\n"),
			 PTR_LFS_CANONICAL);
}

/* Accepted by git-lfs, but not what it writes (`--check --strict` = 2). */
static void test_is_pointer_noncanonical(void **state)
{
	static const char *const cases[] = {
		V1 OIDL "size 10",			  /* no final LF */
		V1 OIDL "size 10\n\n",			  /* blank line */
		"  " V1 OIDL "size 10\n",		  /* leading space */
		"version https://git-lfs.github.com/spec/v1\r\n" OIDL
		"size 10\r\n",				  /* CRLF */
		V1 "\n" OIDL "size 10\n",		  /* blank inside */
		V1 OIDL "size +10\n",			  /* Go's ParseInt */
		V1 OIDL "size 010\n",
		V1 OIDL "size -0\n",
		V1 OIDL "size 0\n", /* size 0 is written as the empty file */
		"version https://hawser.github.com/spec/v1\n" OIDL "size 10\n",
		"version http://git-media.io/v/2\n" OIDL "size 10\n",
		V1 EXT1 EXT0 OIDL "size 10\n",		  /* ext order */
		EXT0 V1 OIDL "size 10\n",		  /* ext before version */
		V1 "ext-0-foo junk\n" EXT0 OIDL "size 10\n", /* last wins */
		V1 OIDL "size 10\n\xc2\xa0",		  /* U+00A0 trimmed */
		V1 OIDL "size 10\n\xe3\x80\x80",	  /* U+3000 trimmed */
		"\xe2\x80\x8a" V1 OIDL "size 10\n",	  /* U+200A trimmed */
		"\xc2\x85" V1 OIDL "size 10\n",		  /* U+0085 trimmed */
		V1 OIDL "size 10\n\t\v\f ",
		V1 OIDL "size 10\r\r\n",		  /* all trailing CRs go */
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (classify(cases[i]) != PTR_LFS_NONCANONICAL)
			fail_msg("case %zu: got %d", i, classify(cases[i]));
	}
}

static void test_is_pointer_rejects(void **state)
{
	static const char *const cases[] = {
		/* E2 80 without a continuation byte is no U+20xx space (git
		 * lfs pointer --check: not a pointer; found by fuzz_lfs_pointer) */
		"\xe2\x80#" V1 OIDL "size 10\n",
		"\xe2\x80" V1 OIDL "size 10\n",
		V1 OIDL,				   /* missing size */
		V1 "oid sha256:4859402C258B836D02E955D1090E29F586E58B2040504D68AFEC3D8D43757BBA\nsize 10\n",
		V1 OIDL "size 10\nextra data\n",	   /* trailing line */
		V1 OIDL "size 10\nx",
		OIDL V1 "size 10\n",			   /* version not first */
		"size 10\n" V1 OIDL,
		V1 "size 10\n" OIDL,
		V1 "oid sha256:4859402c\nsize 10\n",	   /* short oid */
		V1 "oid sha1:" HELLO_OID "\nsize 10\n",
		V1 "oid " HELLO_OID "\nsize 10\n",
		V1 "oid sha256: " HELLO_OID "\nsize 10\n",
		V1 "oid  sha256:" HELLO_OID "\nsize 10\n",
		V1 OIDL "size -1\n",
		V1 OIDL "size 1x\n",
		V1 OIDL "size \n",
		V1 OIDL "size\n",
		V1 OIDL "size 9223372036854775808\n",
		V1 OIDL "size 1 0\n",
		"version https://git-lfs.github.com/spec/v2\n" OIDL "size 10\n",
		"version  https://git-lfs.github.com/spec/v1\n" OIDL "size 10\n",
		"version\thttps://git-lfs.github.com/spec/v1\n" OIDL "size 10\n",
		"Version https://git-lfs.github.com/spec/v1\n" OIDL "size 10\n",
		V1 "ext-0-foo garbage\n" OIDL "size 10\n", /* bad ext oid */
		V1 EXT0 "ext-0-bar sha256:" EMPTY_OID "\n" OIDL "size 10\n",
		V1 "ext-10-foo sha256:" EMPTY_OID "\n" OIDL "size 10\n",
		V1 "ext-0- sha256:" EMPTY_OID "\n" OIDL "size 10\n",
		V1 "foo bar\n" OIDL "size 10\n",	   /* unknown key */
		V1 OIDL "size 10\n" EXT0,		   /* ext after size */
		V1 "oid sha256:" HELLO_OID "\r\r\nsize 10\n",
		"\n",
		" ",
		"hello lfs\n",
		V1,
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (classify(cases[i]) != PTR_LFS_NOT_POINTER)
			fail_msg("case %zu: got %d", i, classify(cases[i]));
	}
}

/* git-lfs reads at most 1023 bytes of a pointer blob. */
static void test_is_pointer_size_cap(void **state)
{
	char big[1100];
	size_t n = strlen(HELLO_PTR);

	(void)state;
	memcpy(big, HELLO_PTR, n);
	memset(big + n, '\n', sizeof(big) - n);
	assert_int_equal(ptr_is_lfs_pointer(big, 1023), PTR_LFS_NONCANONICAL);
	assert_int_equal(ptr_is_lfs_pointer(big, 1024), PTR_LFS_NOT_POINTER);
	assert_int_equal(ptr_is_lfs_pointer(big, sizeof(big)),
			 PTR_LFS_NOT_POINTER);
	/* binary data with NULs */
	assert_int_equal(ptr_is_lfs_pointer("\0\0\0", 3), PTR_LFS_NOT_POINTER);
}

/* ---- git-annex (docs/FORMATS.md §8) ---- */

static void test_annex_key_example(void **state)
{
	struct buf key = BUF_INIT(BUF_MAX_DEFAULT);
	struct ptr_oid oid;
	char dir[6];

	(void)state;
	hash_of("hello annex\n", 12, &oid);
	assert_int_equal(ptr_annex_key(&key, &oid, 12, "file.txt"), 0);
	assert_string_equal(key.ptr, "SHA256E-s12--f6bfd632e56d745c5b6ec8db52bf"
				     "92b11c2666a1fe18d80cf4023bb32541f338.txt");
	assert_int_equal(ptr_annex_hashdirmixed(key.ptr, dir), 0);
	assert_string_equal(dir, "53/1G");
	assert_int_equal(ptr_annex_key(&key, &oid, 12, NULL), 0);
	assert_string_equal(key.ptr, "SHA256E-s12--f6bfd632e56d745c5b6ec8db52bf"
				     "92b11c2666a1fe18d80cf4023bb32541f338");
	buf_release(&key);
}

/* Keys, directories, pointers and symlinks as git-annex 10.20230126 made
 * them (`git annex add`, then `git ls-tree -r git-annex` and readlink). */
static void test_annex_layouts(void **state)
{
	static const char k1[] = "SHA256E-s3072--1dd9719a7636b581a2a083c6decbf92e"
				 "ce4e7ed85471ed6280d771e320b4c429.bin";
	static const char k2[] = "SHA256E-s3--98ea6e4f216f2fb4b69fff9b3a44842c386"
				 "86ca685f3f55dc48c5d3fb1107be4.tar.gz";
	struct buf b = BUF_INIT(BUF_MAX_DEFAULT), want = BUF_INIT(BUF_MAX_DEFAULT);
	struct ptr_oid oid;
	char mixed[6], lower[8];

	(void)state;
	assert_int_equal(ptr_annex_hashdirmixed(k1, mixed), 0);
	assert_string_equal(mixed, "xP/wM");
	assert_int_equal(ptr_annex_hashdirlower(k1, lower), 0);
	assert_string_equal(lower, "7ea/bc5");
	assert_int_equal(ptr_annex_hashdirmixed(k2, mixed), 0);
	assert_string_equal(mixed, "k0/8x");
	assert_int_equal(ptr_annex_hashdirlower(k2, lower), 0);
	assert_string_equal(lower, "80d/3a0");
	assert_int_equal(ptr_annex_pointer(&b, k1), 0);
	buf_printf(&want, "/annex/objects/%s\n", k1);
	assert_string_equal(b.ptr, want.ptr);
	assert_true(ptr_is_annex_pointer(b.ptr, b.len));
	assert_int_equal(ptr_annex_symlink(&b, k2, "d/e/x.tar.gz", 12), 0);
	buf_reset(&want);
	buf_printf(&want, "../../.git/annex/objects/k0/8x/%s/%s", k2, k2);
	assert_string_equal(b.ptr, want.ptr);
	assert_int_equal(ptr_annex_symlink(&b, k1, "a.bin", 5), 0);
	assert_int_equal(strncmp(b.ptr, ".git/annex/objects/xP/wM/", 25), 0);
	hash_of("hello annex\n", 12, &oid);
	assert_int_equal(ptr_annex_key_backend(&b, PTR_ANNEX_SHA256, &oid, 12,
					       "file.txt"), 0);
	assert_string_equal(b.ptr, "SHA256-s12--f6bfd632e56d745c5b6ec8db52bf"
				   "92b11c2666a1fe18d80cf4023bb32541f338");
	buf_release(&b);
	buf_release(&want);
}

/* Puts text into an annex store under the key of name; the key in key. */
static void annex_put(struct ptr_store *s, const char *text, const char *name,
		      struct buf *key)
{
	struct err e = ERR_INIT;
	struct ptr_put *p;
	uint64_t size;

	assert_int_equal(ptr_put_begin(s, &p, &e), 0);
	assert_int_equal(ptr_put_write(p, text, strlen(text), &e), 0);
	assert_int_equal(ptr_put_finish_annex(p, PTR_ANNEX_SHA256E, name, key,
					      NULL, &size, &e), 0);
	assert_int_equal(size, strlen(text));
}

/* The git-annex store: objects at objects/<hashdir>/<key>/<key>, file 0444
 * and key directory 0555, readable while pending (batch) and in place
 * after the sync; the same put again leaves it; hashdirlower when bare. */
static void test_annex_store(void **state)
{
	struct fixture *f = *state;
	struct buf key = BUF_INIT(BUF_MAX_DEFAULT), path = BUF_INIT(BUF_MAX_DEFAULT);
	struct err e = ERR_INIT;
	struct ptr_store *s;
	struct stat st;
	char hd[8], got[16];
	uint64_t size;
	int batch, lower, fd;

	for (lower = 0; lower < 2; lower++)
	for (batch = 0; batch < 2; batch++) {
		buf_reset(&path);
		buf_printf(&path, "%s/annex%d%d", f->root, lower, batch);
		assert_int_equal(ptr_store_open_annex(&s, path.ptr, lower, &e), 0);
		ptr_store_set_batch(s, batch);
		annex_put(s, "hello annex", "dir/a.tar.gz", &key);
		assert_int_equal(strncmp(key.ptr, "SHA256E-s11--", 13), 0);
		assert_string_equal(key.ptr + key.len - 7, ".tar.gz");
		assert_int_equal(ptr_store_open_key(s, key.ptr, &fd, &size, &e), 0);
		assert_int_equal(size, 11);
		assert_int_equal(read(fd, got, sizeof(got)), 11);
		assert_memory_equal(got, "hello annex", 11);
		close(fd);
		if (batch)
			assert_int_equal(ptr_store_sync(s, &e), 0);
		annex_put(s, "hello annex", "b.tar.gz", &key);	/* already there */
		if (batch)
			assert_int_equal(ptr_store_sync(s, &e), 0);
		assert_int_equal(lower ? ptr_annex_hashdirlower(key.ptr, hd)
				       : ptr_annex_hashdirmixed(key.ptr, hd), 0);
		buf_printf(&path, "/objects/%s/%s", hd, key.ptr);
		assert_int_equal(stat(path.ptr, &st), 0);
		assert_int_equal(st.st_mode & 07777, 0555);
		buf_printf(&path, "/%s", key.ptr);
		assert_int_equal(lstat(path.ptr, &st), 0);
		assert_true(S_ISREG(st.st_mode));
		assert_int_equal(st.st_mode & 07777, 0444);
		ptr_store_free(s);
		*strrchr(path.ptr, '/') = '\0';
		chmod(path.ptr, 0755);	/* for the teardown, as any user */
	}
	buf_release(&key);
	buf_release(&path);
}

static void test_annex_is_pointer(void **state)
{
	static const char *const yes[] = {
		"/annex/objects/SHA256E-s1--ab.bin\n",
		"/annex/objects/SHA256-s1--ab",
	};
	static const char *const no[] = {
		"", "/annex/objects/", "/annex/objects/\n",
		"/annex/objects/a/b\n", "/annex/objects/nodash\n",
		"/annex/objects/SHA256-s1--ab\nmore\n", "annex/objects/SHA256-s1--ab\n",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		assert_true(ptr_is_annex_pointer(yes[i], strlen(yes[i])));
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (ptr_is_annex_pointer(no[i], strlen(no[i])))
			fail_msg("taken for a pointer: '%s'", no[i]);
}

/* Every row of the selectExtension table in docs/FORMATS.md §8. */
static void test_annex_extensions(void **state)
{
	static const char *const rows[][2] = {
		{ "file.txt", ".txt" },
		{ "arch.tar.gz", ".tar.gz" },
		{ "a.b.c.d.e", ".d.e" },
		{ "x.1.2.3", ".2.3" },
		{ "a.tar.bz2.gpg", ".bz2.gpg" },
		{ "a.TXT", ".TXT" },
		{ "a..b", ".b" },
		{ "a.jpeg", ".jpeg" },
		{ "a.abcd", ".abcd" },
		{ "\xc3\xbc.d\xc3\xa4t", ".d\xc3\xa4t" }, /* ü.dät */
		{ "noext", "" },
		{ ".hidden", "" },
		{ "trail.", "" },
		{ "a.abcde", "" },
		{ "x.verylongextension", "" },
		{ "a.123456", "" },
		{ "a.b-c", "" },
		{ "a.a_b", "" },
		{ "a.a+b", "" },
		{ "weird.ex$t", "" },
		{ "a.ab cd", "" },
		{ "sp.ac e", "" },
		{ "a.\xc3\xa4\xc3\xb6\xc3\xbc\xc3\x9f", "" }, /* a.äöüß */
		/* beyond the table: directories, dots, invalid in the middle */
		{ "d1/d2/deep.txt", ".txt" },
		{ "dir.d/noext", "" },
		{ "..x.tar.gz", ".tar.gz" },
		{ "a.gz.b-c", ".gz" },
		{ "a.long1.gz", ".gz" },
		{ "", "" },
	};
	struct buf key = BUF_INIT(BUF_MAX_DEFAULT);
	const size_t prefix = strlen("SHA256E-s5--") + PTR_OID_HEXSZ;
	struct ptr_oid oid;
	size_t i;

	(void)state;
	memset(&oid, 0xab, sizeof(oid));
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		assert_int_equal(ptr_annex_key(&key, &oid, 5, rows[i][0]), 0);
		assert_true(key.len >= prefix);
		if (strcmp(key.ptr + prefix, rows[i][1]) != 0)
			fail_msg("'%s': got '%s', want '%s'", rows[i][0],
				 key.ptr + prefix, rows[i][1]);
	}
	buf_release(&key);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pointer_hello),
		cmocka_unit_test_setup_teardown(test_batch_put_sync, setup, teardown),
		cmocka_unit_test(test_pointer_replaces_content),
		cmocka_unit_test(test_pointer_empty),
		cmocka_unit_test(test_pointer_decode),
		cmocka_unit_test(test_pointer_size_limits),
		cmocka_unit_test_setup_teardown(test_store_open_creates_parents,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_put_streaming_matches_oneshot, setup, teardown),
		cmocka_unit_test_setup_teardown(test_put_small_object, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_put_empty_object, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_put_twice_keeps_first,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_put_existing_wrong_content,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_batch_existing_wrong_content,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_put_existing_not_a_file,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_put_existing_wrong_size,
						setup, teardown),
		cmocka_unit_test(test_put_dead_temp),
		cmocka_unit_test_setup_teardown(test_put_abort_leaves_nothing,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_hash_only_writes_nothing,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_object_missing, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_store_under_regular_file,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_unwritable, setup,
						teardown),
		cmocka_unit_test(test_store_empty_name),
		cmocka_unit_test(test_is_pointer_canonical),
		cmocka_unit_test(test_is_pointer_noncanonical),
		cmocka_unit_test(test_is_pointer_rejects),
		cmocka_unit_test(test_is_pointer_size_cap),
		cmocka_unit_test(test_annex_key_example),
		cmocka_unit_test(test_annex_extensions),
		cmocka_unit_test(test_annex_layouts),
		cmocka_unit_test(test_annex_is_pointer),
		cmocka_unit_test_setup_teardown(test_annex_store, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
