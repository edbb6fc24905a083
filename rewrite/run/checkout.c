/*
 * checkout.c - the check-out of a work tree at the end of a run, `git
 * reset --hard`, with the content of its LFS files copied by our threads.
 *
 * git checks out no file with a process filter in parallel: git-lfs's
 * smudge gets the files one after the other, each through two pipes. So
 * the reset runs with git-lfs's filter told to skip (it writes the
 * pointers), then threads copy each pointer's object from <common
 * dir>/lfs/objects over its pointer, and the index gets their stat data
 * (as git's own check-out records it). What we leave -- a pointer whose
 * object is not in the store, or names extensions, or whose copy failed
 * -- is removed, and a second, ordinary `git reset --hard` runs: it finds
 * the copied files clean, and git-lfs smudges the others as before
 * (downloads them, or keeps the pointer: lfs.skipdownloaderrors). What
 * git-lfs would decide itself is never guessed: when it is not the plain
 * `git-lfs filter-process`, or its settings choose what to smudge
 * (lfs.fetchinclude, lfs.fetchexclude, lfs.storage, GIT_LFS_SKIP_SMUDGE),
 * the reset is the ordinary one alone. Every reset asks for git's
 * parallel check-out (the files of a tree written by a worker per core),
 * unless the user chose checkout.workers.
 */
#include "run.h"

#include "../../pointerize/pointerize.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FILL_THREADS_MAX 8

struct fill {
	size_t ix;		/* the index entry */
	char *path;		/* in the work tree */
	struct ptr_oid oid;
	uint64_t size;
	int done;		/* copied: st holds its stat data */
	struct stat st;
};

struct fills {
	const char *store;	/* <common dir>/lfs/objects */
	struct fill *v;
	size_t n, alloc;
	atomic_size_t next;
};

/* Whether git-lfs, as configured for dir, smudges every pointer it has
 * the object of, and nothing else decides. */
static int lfs_plain(const char *dir)
{
	struct buf out = BUF_INIT(1 << 20);
	struct err ignored = ERR_INIT;
	const char *skip = getenv("GIT_LFS_SKIP_SMUDGE"), *p, *end;
	int process = 0, other = 0;

	if (skip && *skip && strcmp(skip, "0") && strcmp(skip, "false"))
		return 0;
	if (gitcmd_runl(dir, 0, &out, &ignored, "config", "-z", "--get-regexp",
			"^(filter\\.lfs\\.process|lfs\\.(storage|fetchinclude|"
			"fetchexclude))$", (char *)NULL) != 0) {
		buf_release(&out);
		return 0;
	}
	/* "<key>\n<value>\0" each; the last filter.lfs.process wins */
	for (p = out.ptr, end = out.ptr + out.len; p < end; p += strlen(p) + 1) {
		if (!strncmp(p, "filter.lfs.process\n", 19))
			process = !strcmp(p + 19, "git-lfs filter-process");
		else
			other = 1;
	}
	buf_reset(&out);
	/* git-lfs also reads lfs.fetch* from the work tree's .lfsconfig */
	if (process && !other &&
	    gitcmd_runl(dir, 0, &out, &ignored, "ls-tree", "--name-only", "HEAD",
			"--", ".lfsconfig", (char *)NULL) == 0 && out.len &&
	    gitcmd_runl(dir, 0, NULL, &ignored, "config", "--blob",
			"HEAD:.lfsconfig", "--get-regexp",
			"^lfs\\.fetch(in|ex)clude$", (char *)NULL) != 1)
		other = 1;
	buf_release(&out);
	return process && !other;
}

/*
 * `git reset --hard` in dir, its files written by as many workers as
 * there are cores (git's parallel check-out: on git's own tree of 1,442
 * files, 0.51 s where one took 0.96) unless the user chose a number
 * (checkout.workers: 1 suits some network file systems). skip_smudge:
 * git-lfs writes the pointers (its filter as `git lfs install
 * --skip-smudge` sets it; lfs_plain saw the plain one set).
 */
static int reset_hard(const char *dir, int skip_smudge, struct err *e)
{
	struct buf out = BUF_INIT(4096);
	struct err ignored = ERR_INIT;
	struct gitargv a = GITARGV_INIT;
	int rc;

	if (gitcmd_runl(dir, 0, &out, &ignored, "config", "--get",
			"checkout.workers", (char *)NULL) == 1) {
		gitargv_push(&a, "-c");
		gitargv_push(&a, "checkout.workers=0");
	}
	gitargv_push(&a, "-c");
	gitargv_push(&a, skip_smudge ? "filter.lfs.process=git-lfs filter-process --skip"
				     : "lfs.skipdownloaderrors=true");
	gitargv_push(&a, "reset");
	gitargv_push(&a, "-q");
	gitargv_push(&a, "--hard");
	rc = gitcmd_ok(dir, &a, NULL, NULL, e);
	gitargv_clear(&a);
	buf_release(&out);
	return rc;
}

/* The entries whose files git-lfs's skipped smudge left as pointers. */
static void find_pointers(struct fills *f, struct gitindex *ix, const char *dir)
{
	size_t i, n = gitindex_count(ix);
	char head[PTR_LFS_POINTER_MAX];

	for (i = 0; i < n; i++) {
		struct gitindex_entry x;
		struct stat st;
		struct fill *fl;
		char *path;
		ssize_t got;
		int fd, has_ext = 0;
		struct ptr_oid oid;
		uint64_t size = 0;

		gitindex_entry(ix, i, &x);
		if (x.stage || x.skip_worktree || (x.mode & 0170000) != 0100000)
			continue;
		path = path_join(dir, x.path);
		if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < 16 ||
		    st.st_size >= PTR_LFS_POINTER_MAX ||
		    (fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
			free(path);
			continue;
		}
		got = read(fd, head, sizeof(head));
		close(fd);
		if (got <= 0 || !ptr_lfs_decode(head, (size_t)got, &oid, &size,
						 &has_ext) || !size) {
			free(path);
			continue;
		}
		if (f->n == f->alloc) {
			f->alloc = f->alloc ? 2 * f->alloc : 64;
			f->v = xrealloc(f->v, f->alloc * sizeof(*f->v));
		}
		fl = &f->v[f->n++];
		memset(fl, 0, sizeof(*fl));
		fl->ix = i;
		fl->path = path;
		fl->oid = oid;
		/* extensions: the object is not the content; git-lfs's smudge
		 * does it (size 0 here marks it for removal) */
		fl->size = has_ext ? 0 : size;
	}
}

/* Keeps the pointers git-lfs smudges: their filter attribute is lfs. */
static int keep_lfs(struct fills *f, const char *dir, struct err *e)
{
	struct buf in = BUF_INIT(SIZE_MAX / 2), out = BUF_INIT(SIZE_MAX / 2);
	struct gitargv a = GITARGV_INIT;
	const char *p, *end;
	size_t i, kept = 0, rel = strlen(dir) + 1;
	int rc;

	for (i = 0; i < f->n; i++)
		buf_add(&in, f->v[i].path + rel, strlen(f->v[i].path + rel) + 1);
	gitargv_push(&a, "check-attr");
	gitargv_push(&a, "-z");
	gitargv_push(&a, "--stdin");
	gitargv_push(&a, "filter");
	rc = gitcmd_ok(dir, &a, &in, &out, e);
	gitargv_clear(&a);
	/* "<path>\0filter\0<value>\0", in the order asked */
	p = out.ptr;
	end = out.ptr + out.len;
	for (i = 0; rc == 0 && i < f->n; i++) {
		const char *path = p, *attr = NULL, *value = NULL;

		if (path < end)
			attr = path + strlen(path) + 1;
		if (attr && attr < end)
			value = attr + strlen(attr) + 1;
		if (!value || value >= end || strcmp(path, f->v[i].path + rel)) {
			rc = err_set(e, ERR_IO, "git check-attr answered out of "
				     "order (at %s)", f->v[i].path + rel);
			break;
		}
		p = value + strlen(value) + 1;
		if (!strcmp(value, "lfs"))
			f->v[kept++] = f->v[i];
		else
			free(f->v[i].path);
	}
	if (rc == 0)
		f->n = kept;
	buf_release(&in);
	buf_release(&out);
	return rc;
}

/* Copies the object over the pointer; 0, or -1 (the caller removes the
 * file, and git-lfs's smudge writes it). */
static int copy_one(const struct fills *f, struct fill *fl)
{
	char hex[PTR_OID_HEXSZ + 1], *obj;
	struct stat st;
	uint64_t left;
	int in, out, rc = -1;

	if (!fl->size)
		return -1;
	ptr_oid_hex(&fl->oid, hex);
	obj = xmalloc(strlen(f->store) + sizeof("/xx/xx/") + PTR_OID_HEXSZ);
	sprintf(obj, "%s/%.2s/%.2s/%s", f->store, hex, hex + 2, hex);
	in = open(obj, O_RDONLY | O_CLOEXEC);
	free(obj);
	/* git-lfs's own check of a local object: its size */
	if (in < 0 || fstat(in, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size != fl->size) {
		if (in >= 0)
			close(in);
		return -1;
	}
	out = open(fl->path, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
	if (out < 0) {
		close(in);
		return -1;
	}
	for (left = fl->size; left > 0;) {
		ssize_t n = copy_file_range(in, NULL, out, NULL,
					    left > (1u << 30) ? (1u << 30) : (size_t)left, 0);
		if (n <= 0) {
			char buf[1 << 16];

			if (n < 0 && errno != EXDEV && errno != ENOSYS &&
			    errno != EINVAL && errno != EOPNOTSUPP)
				break;
			/* no copy in the kernel here: read and write */
			n = read(in, buf, sizeof(buf));
			if (n <= 0 || write_full(out, buf, (size_t)n) < 0)
				break;
		}
		left -= (uint64_t)n;
	}
	if (left == 0) {
		/* the object's time, as `cp -p` keeps it: stored during the
		 * stream, it is mostly older than the index in whole seconds,
		 * which is all Debian's git compares (a file as new as the
		 * index is read again at the next git status) */
		struct timespec times[2] = { { 0, UTIME_OMIT }, st.st_mtim };

		rc = 0;
		if (futimens(out, times) < 0)
			rc = -1;
	}
	if (close(out) < 0)
		rc = -1;
	close(in);
	if (rc == 0 && lstat(fl->path, &fl->st) == 0 &&
	    (uint64_t)fl->st.st_size == fl->size)
		fl->done = 1;
	return fl->done ? 0 : -1;
}

static void *fill_main(void *arg)
{
	struct fills *f = arg;
	size_t i;

	while ((i = atomic_fetch_add(&f->next, 1)) < f->n)
		if (copy_one(f, &f->v[i]) < 0)
			unlink(f->v[i].path);
	return NULL;
}

static void fill_all(struct fills *f)
{
	pthread_t t[FILL_THREADS_MAX];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t n = cpus < 1 ? 1 : cpus > FILL_THREADS_MAX ? FILL_THREADS_MAX
							    : (size_t)cpus, i, started = 0;

	if (n > f->n)
		n = f->n;
	atomic_init(&f->next, 0);
	for (i = 1; i < n; i++)
		if (pthread_create(&t[started], NULL, fill_main, f) == 0)
			started++;
	fill_main(f);
	for (i = 0; i < started; i++)
		pthread_join(t[i], NULL);
}

static int fill_lfs(const char *dir, struct err *e)
{
	struct fills f = { 0 };
	struct gitindex *ix = NULL;
	struct buf top = BUF_INIT(1 << 16);
	char *gitdir = NULL, *common = NULL;
	size_t i, done = 0;
	int rc = gitcmd_git_dir(dir, &gitdir, e);

	if (rc == 0)
		rc = gitcmd_common_dir(dir, &common, e);
	/* the index's paths are the work tree's (core.worktree may put it
	 * elsewhere than dir) */
	if (rc == 0)
		rc = gitcmd_runl(dir, 1, &top, e, "rev-parse", "--show-toplevel",
				 (char *)NULL);
	gitcmd_chomp(&top);
	if (rc == 0)
		rc = gitindex_open(&ix, gitdir, e);
	if (rc == 0 && gitindex_has_ext(ix, "link")) {
		/* a split index (core.splitIndex): its entries are in the
		 * shared file; made whole again, git splits it at will */
		gitindex_free(ix);
		ix = NULL;
		rc = gitcmd_runl(top.ptr, 1, NULL, e, "-c", "core.splitIndex=false",
				 "update-index", "--no-split-index", (char *)NULL);
		if (rc == 0)
			rc = gitindex_open(&ix, gitdir, e);
	}
	if (rc == 0)
		find_pointers(&f, ix, top.ptr);
	if (rc == 0 && f.n)
		rc = keep_lfs(&f, top.ptr, e);
	if (rc == 0 && f.n) {
		char *store = path_join(common, "lfs/objects");

		f.store = store;
		fill_all(&f);
		for (i = 0; i < f.n; i++) {
			if (!f.v[i].done)
				continue;
			gitindex_set_stat(ix, f.v[i].ix, &f.v[i].st);
			done++;
		}
		if (done)
			rc = gitindex_commit(ix, e);
		free(store);
	}
	gitindex_free(ix);
	for (i = 0; i < f.n; i++)
		free(f.v[i].path);
	free(f.v);
	free(gitdir);
	free(common);
	buf_release(&top);
	return rc < 0 ? -1 : (int)(f.n > done);
}

int run_checkout(const char *dir, int lfs, struct err *e)
{
	int left = 0;

	if (lfs && lfs_plain(dir)) {
		if (reset_hard(dir, 1, e) < 0 || (left = fill_lfs(dir, e)) < 0)
			return -1;
		/* every pointer got its content: the reset is done (the
		 * files written in the index's second are racily clean, as
		 * after git's own check-out: git looks at them once more) */
		if (!left)
			return 0;
	}
	return reset_hard(dir, 0, e);
}
