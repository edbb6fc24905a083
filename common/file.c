/*
 * file.c - files the way every part of migrate writes and reads them:
 * paths joined, whole files read, written atomically where the user
 * pointed (common.h), folders synced after a rename.
 */
#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *path_join(const char *dir, const char *name)
{
	struct buf b = BUF_INIT(BUF_MAX_DEFAULT);

	buf_printf(&b, "%s/%s", dir, name);
	return buf_detach(&b, NULL);
}

int file_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

int file_read(const char *path, struct buf *out, struct err *e)
{
	char chunk[65536];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0)
		return err_errno(e, ERR_IO, "%s: cannot open", path);
	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || buf_add(out, chunk, (size_t)n) < 0) {
			close(fd);
			return err_errno(e, ERR_IO, "%s: cannot read", path);
		}
	}
	close(fd);
	return 1;
}

int dir_fsync(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), r;

	if (fd < 0)
		return -1;
	while ((r = fsync(fd)) < 0 && errno == EINTR)
		;
	close(fd);
	return r;
}

/* The file a write to path lands in: path, or for a symbolic link the
 * end of its chain, followed by hand so that a link to a file not made
 * yet leads to where it will be. NULL with e set for a loop. */
static char *write_target(const char *path, struct err *e)
{
	char *cur = xstrdup(path);
	int hops;

	for (hops = 0; hops < 40; hops++) {
		struct buf next = BUF_INIT(BUF_MAX_DEFAULT);
		char link[4096];
		struct stat st;
		const char *slash;
		ssize_t n;

		if (lstat(cur, &st) < 0 || !S_ISLNK(st.st_mode))
			return cur;
		n = readlink(cur, link, sizeof(link) - 1);
		if (n < 0) {
			err_errno(e, ERR_IO, "%s: cannot read the link", cur);
			free(cur);
			return NULL;
		}
		link[n] = '\0';
		slash = strrchr(cur, '/');
		if (link[0] != '/' && slash)
			buf_printf(&next, "%.*s/", (int)(slash - cur), cur);
		buf_adds(&next, link);
		free(cur);
		cur = buf_detach(&next, NULL);
	}
	err_set(e, ERR_IO, "%s: too many levels of symbolic links", path);
	free(cur);
	return NULL;
}

/* A device or a pipe (not a regular file, not a folder), through links. */
static int is_special(const struct stat *st)
{
	return !S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode);
}

int path_is_special(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && is_special(&st);
}

int file_write_prepare(const char *path, const struct buf *data, char **tmp,
			 struct err *e)
{
	struct buf name = BUF_INIT(BUF_MAX_DEFAULT);
	const char *tmpdir = getenv("TMPDIR");
	char *target = write_target(path, e);
	struct stat st;
	int fd, exists;

	if (!target)
		return -1;
	exists = stat(target, &st) == 0;
	if (exists && S_ISDIR(st.st_mode)) {
		err_set(e, ERR_USAGE, "%s: is a folder; name a file", path);
		goto refuse;
	}
	if (exists && (S_ISBLK(st.st_mode) || S_ISSOCK(st.st_mode))) {
		err_set(e, ERR_USAGE, "%s: is a %s; name a file, a character "
			"device or a pipe", path,
			S_ISBLK(st.st_mode) ? "block device" : "socket");
		goto refuse;
	}
	/* a device or a pipe is written in place at the commit, never
	 * renamed over; until then the data waits in a temp folder */
	if (exists && is_special(&st))
		buf_printf(&name, "%s/migrate-out-XXXXXX",
			   tmpdir && *tmpdir ? tmpdir : "/tmp");
	else
		buf_printf(&name, "%s.tmp-XXXXXX", target);
	free(target);
	fd = mkstemp(name.ptr);
	if (fd < 0) {
		err_errno(e, ERR_IO, "%s: cannot create", name.ptr);
		buf_release(&name);
		return -1;
	}
	/* a file replaced keeps its permissions */
	if (exists && S_ISREG(st.st_mode) && fchmod(fd, st.st_mode & 07777) < 0)
		goto fail;
	if (write_full(fd, data->ptr, data->len) < 0)
		goto fail;
	if (fsync(fd) < 0)
		goto fail;
	if (close(fd) < 0) {
		fd = -1;
		goto fail;
	}
	*tmp = buf_detach(&name, NULL);
	return 0;
fail:
	err_errno(e, ERR_IO, "%s: cannot write", path);
	if (fd >= 0)
		close(fd);
	unlink(name.ptr);
	buf_release(&name);
	return -1;
refuse:
	free(target);
	buf_release(&name);
	return -1;
}

/* The bytes of tmp written into the device or pipe target. */
static int write_in_place(const char *tmp, const char *target,
			  const char *path, struct err *e)
{
	char chunk[65536];
	int in, out, rc = 0;
	ssize_t n;

	if ((in = open(tmp, O_RDONLY | O_CLOEXEC)) < 0)
		return err_errno(e, ERR_IO, "%s: cannot open", tmp);
	if ((out = open(target, O_WRONLY | O_NOCTTY | O_CLOEXEC)) < 0) {
		close(in);
		return err_errno(e, ERR_IO, "%s: cannot open for writing", path);
	}
	while (rc == 0 && (n = read(in, chunk, sizeof(chunk))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			rc = err_errno(e, ERR_IO, "%s: cannot read", tmp);
		else if (write_full(out, chunk, (size_t)n) < 0)
			rc = err_errno(e, ERR_IO, "%s: cannot write", path);
	}
	if (close(out) < 0 && rc == 0)
		rc = err_errno(e, ERR_IO, "%s: cannot write", path);
	close(in);
	return rc;
}

int file_write_commit(const char *tmp, const char *path, struct err *e)
{
	char *target = write_target(path, e);
	struct stat st;
	int rc = -1;

	if (target && stat(target, &st) == 0 && is_special(&st)) {
		rc = write_in_place(tmp, target, path, e);
		unlink(tmp);
	} else if (target) {
		rc = rename(tmp, target) == 0 ? 0 :
		     err_errno(e, ERR_IO, "%s: cannot rename into place", path);
	}
	if (rc < 0)
		unlink(tmp);
	free(target);
	return rc;
}

int file_write(const char *path, const struct buf *data, struct err *e)
{
	char *tmp = NULL;
	int r = file_write_prepare(path, data, &tmp, e);

	if (r == 0)
		r = file_write_commit(tmp, path, e);
	free(tmp);
	return r;
}

int file_is_mkstemp_tail(const char *s)
{
	return strlen(s) == 6 && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
					   "abcdefghijklmnopqrstuvwxyz0123456789") == 6;
}

int file_is_temp(const char *name)
{
	const char *t = strstr(name, ".tmp-");

	/* the last ".tmp-": the name it replaces may hold one too */
	while (t && strstr(t + 1, ".tmp-"))
		t = strstr(t + 1, ".tmp-");
	return t && t != name && file_is_mkstemp_tail(t + 5);
}
