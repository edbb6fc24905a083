/* odb.c - a `git cat-file --batch-command` child process. */
#include "git.h"

#include <assert.h>
#include <errno.h>
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
	struct gitargv args = GITARGV_INIT;
	int to, from, rc;

	if (db->broken)
		return err_set(e, ERR_IO, "repository %s: object reader failed earlier",
			       odb_name(db));
	/* git's own messages ("fatal: not a git repository") go to
	 * db->err_fd, read when the reader fails */
	gitargv_push(&args, "cat-file");
	gitargv_push(&args, "--batch-command");
	rc = gitcmd_spawn_piped(&db->pid, db->dir, &args, &to, &from,
				&db->err_fd, e);
	gitargv_clear(&args);
	if (rc < 0) {
		db->pid = -1;
		return -1;
	}
	pipe_widen(from);	/* objects stream in while we write them out */
	db->to = fdopen(to, "w");
	db->from = fdopen(from, "r");
	if (!db->to || !db->from) {
		rc = err_errno(e, ERR_IO, "fdopen");
		db->broken = 1;	/* odb_free ends the reader */
		if (!db->to)
			close(to);
		if (!db->from)
			close(from);
		return rc;
	}
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
