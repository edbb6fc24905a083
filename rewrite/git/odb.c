/* odb.c - a `git cat-file --batch-command` child process. */
#include "git.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct odb {
	char *dir;	/* NULL: current directory */
	pid_t pid;
	FILE *to, *from;
	int broken;
	uint64_t left;	/* bytes of a streamed object not yet read */
	int streaming;
	int err_fd;	/* the reader's stderr, quoted when it fails */
};

struct odb *odb_new(const char *dir)
{
	struct odb *db = xcalloc(1, sizeof(*db));

	db->dir = dir ? xstrdup(dir) : NULL;
	db->pid = -1;
	db->err_fd = -1;
	return db;
}

const char *odb_name(const struct odb *db)
{
	return db->dir ? db->dir : ".";
}

void odb_free(struct odb *db)
{
	int status;

	if (!db)
		return;
	if (db->to)
		fclose(db->to);
	if (db->from)
		fclose(db->from);
	if (db->pid > 0)
		waitpid(db->pid, &status, 0);
	if (db->err_fd >= 0)
		close(db->err_fd);
	free(db->dir);
	free(db);
}

static int odb_start(struct odb *db, struct err *e)
{
	int in[2], out[2], err[2];
	pid_t pid;

	if (db->broken)
		return err_set(e, ERR_IO, "repository %s: object reader failed earlier",
			       odb_name(db));
	/* close-on-exec: another child (the other repository's reader,
	 * fast-import under migrate run) must not hold our pipe ends open, or
	 * this reader never sees the end of its input (dup2 clears the flag
	 * on 0 and 1 in our own child) */
	/* git's own messages ("fatal: not a git repository") go to a pipe
	 * we read when the reader fails, never to the user's terminal; a
	 * reader that only ever writes a line or two there cannot fill it */
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 ||
	    pipe2(err, O_CLOEXEC | O_NONBLOCK) < 0)
		return err_errno(e, ERR_IO, "pipe");
	pid = fork();
	if (pid < 0)
		return err_errno(e, ERR_IO, "fork");
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(err[1], 2);
		close(in[0]); close(in[1]); close(out[0]); close(out[1]);
		close(err[0]); close(err[1]);
		if (db->dir)
			execlp("git", "git", "-C", db->dir, "cat-file",
			       "--batch-command", (char *)NULL);
		else
			execlp("git", "git", "cat-file", "--batch-command",
			       (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	close(err[1]);
	db->err_fd = err[0];
	pipe_widen(out[0]);	/* objects stream in while we write them out */
	db->pid = pid;
	db->to = fdopen(in[1], "w");
	db->from = fdopen(out[0], "r");
	if (!db->to || !db->from)
		return err_errno(e, ERR_IO, "fdopen");
	return 0;
}

static int odb_fail(struct odb *db, struct err *e, const char *what)
{
	char said[512] = "";
	ssize_t n = 0;
	const char *why = said;
	int status;

	db->broken = 1;
	/* the reader has ended: wait for it so its last words are there
	 * (a reader still running may be writing to us: not waited for) */
	if (!strcmp(what, "git cat-file ended") && db->pid > 0 && db->to) {
		fclose(db->to);
		db->to = NULL;
		waitpid(db->pid, &status, 0);
		db->pid = -1;
	}
	if (db->err_fd >= 0)
		n = read(db->err_fd, said, sizeof(said) - 1);
	said[n > 0 ? n : 0] = '\0';
	if (!strncmp(why, "fatal: ", 7))
		why += 7;
	said[strcspn(said, "\n")] = '\0';
	if (*why)
		return err_set(e, ERR_IO, "cannot read objects from repository "
			       "%s (%s; git: %s); is it a git repository? (see "
			       "--source-repo)", odb_name(db), what, why);
	return err_set(e, ERR_IO,
		       "cannot read objects from repository %s (%s); "
		       "is it a git repository? (see --source-repo)",
		       odb_name(db), what);
}

/* Reads the reply header "<oid> <type> <size>\n" or "<name> missing\n". */
static int odb_header(struct odb *db, enum obj_type *type, struct oid *oid,
		      uint64_t *size, struct err *e)
{
	char line[512];
	char *sp1, *sp2;
	size_t n;

	if (!fgets(line, sizeof(line), db->from))
		return odb_fail(db, e, "git cat-file ended");
	n = strlen(line);
	if (n == 0 || line[n - 1] != '\n')
		return odb_fail(db, e, "overlong reply");
	line[--n] = '\0';
	if (n > 8 && strcmp(line + n - 8, " missing") == 0)
		return 0;
	if (n > 10 && strcmp(line + n - 10, " ambiguous") == 0)
		return 0;
	sp1 = strchr(line, ' ');
	sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
	if (!sp1 || !sp2)
		return odb_fail(db, e, "unexpected reply");
	if (sp1 - line == 64) {
		db->broken = 1;
		return err_set(e, ERR_USAGE,
			       "repository %s uses sha256 object ids: migrate "
			       "supports sha1 repositories only for now",
			       odb_name(db));
	}
	if (oid_from_hex(oid, line, (size_t)(sp1 - line)) < 0)
		return odb_fail(db, e, "bad object id in reply");
	*type = obj_type_parse(sp1 + 1, (size_t)(sp2 - sp1 - 1));
	if (parse_u64(sp2 + 1, strlen(sp2 + 1), UINT64_MAX, size) < 0)
		return odb_fail(db, e, "bad size in reply");
	return 1;
}

int odb_read(struct odb *db, const char *name, enum obj_type *type,
	     struct oid *oid, struct buf *body, struct err *e)
{
	uint64_t size;
	size_t n;
	int r;

	if (strchr(name, '\n'))
		return 0;
	if ((db->broken || !db->from) && odb_start(db, e) < 0)
		return -1;
	if (fprintf(db->to, "%s %s\n", body ? "contents" : "info", name) < 0 ||
	    fflush(db->to) != 0)
		return odb_fail(db, e, "git cat-file ended");
	r = odb_header(db, type, oid, &size, e);
	if (r <= 0 || !body)
		return r;
	if (u64_to_size(size, &n) < 0 || n > body->max)
		return odb_fail(db, e, "object too large to load");
	buf_reset(body);
	if (buf_grow(body, n) < 0)
		return odb_fail(db, e, "object too large to load");
	if (fread(body->ptr, 1, n, db->from) != n || fgetc(db->from) != '\n')
		return odb_fail(db, e, "short object");
	body->len = n;
	body->ptr[n] = '\0';
	return 1;
}

int odb_open_stream(struct odb *db, const char *name, enum obj_type *type,
		    struct oid *oid, uint64_t *size, struct err *e)
{
	int r;

	assert(!db->streaming);
	if (strchr(name, '\n'))
		return 0;
	if ((db->broken || !db->from) && odb_start(db, e) < 0)
		return -1;
	if (fprintf(db->to, "contents %s\n", name) < 0 || fflush(db->to) != 0)
		return odb_fail(db, e, "git cat-file ended");
	r = odb_header(db, type, oid, size, e);
	if (r <= 0)
		return r;
	db->left = *size;
	db->streaming = 1;
	return 1;
}

ssize_t odb_stream_read(struct odb *db, void *dst, size_t cap,
			struct err *e)
{
	size_t n;

	assert(db->streaming);
	if (db->left == 0) {
		db->streaming = 0;
		if (fgetc(db->from) != '\n')
			return odb_fail(db, e, "short object");
		return 0;
	}
	if (cap > db->left)
		cap = (size_t)db->left;
	n = fread(dst, 1, cap, db->from);
	if (n == 0)
		return odb_fail(db, e, "short object");
	db->left -= n;
	return (ssize_t)n;
}

int odb_info(struct odb *db, const char *name, enum obj_type *type,
	     struct oid *oid, uint64_t *size, struct err *e)
{
	if (strchr(name, '\n'))
		return 0;
	if ((db->broken || !db->from) && odb_start(db, e) < 0)
		return -1;
	if (fprintf(db->to, "info %s\n", name) < 0 || fflush(db->to) != 0)
		return odb_fail(db, e, "git cat-file ended");
	return odb_header(db, type, oid, size, e);
}
