/*
 * odb.c - reading objects: natively (pack.c) when the object is named by
 * its id and the store is one pack.c reads, else, and for anything it
 * does not read, through a `git cat-file --batch-command` child process
 * (the fallback and the oracle of the tests).
 */
#include "git.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
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
	/* the native reader */
	enum odb_reader reader;
	int quiet;
	int native_state;	/* 0 not tried yet, 1 open, -1 not used */
	int noted;		/* the note on falling back is out */
	struct pack_odb *native;
	char *objdir;		/* the native reader's object directory */
	struct pack_stream *ps;	/* a native stream being read */
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
	pack_stream_close(db->ps);
	pack_odb_free(db->native);
	free(db->objdir);
	free(db->dir);
	free(db);
}

int odb_reader_parse(const char *s, enum odb_reader *out)
{
	static const char *const names[] = { "auto", "git", "native" };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i])) {
			*out = (enum odb_reader)i;
			return 0;
		}
	return -1;
}

void odb_set_reader(struct odb *db, enum odb_reader reader, int quiet)
{
	db->reader = reader;
	db->quiet = quiet;
}

/* The one line saying that git cat-file reads what the native reader
 * does not (once per repository). */
static void native_note(struct odb *db, const char *why)
{
	if (db->noted || db->quiet)
		return;
	db->noted = 1;
	warning("migrate: note: repository %s: reading objects through git "
		"cat-file (%s)", odb_name(db), why);
}

/*
 * Opens the native reader the first time: 1 when it reads this
 * repository, 0 when git cat-file does, -1 when it was forced
 * (--object-reader=native) and cannot.
 */
static int native_open(struct odb *db, struct err *e)
{
	char *format = NULL;
	struct err why = ERR_INIT;

	if (db->reader == ODB_READER_GIT)
		return 0;
	if (db->native_state == 0) {
		db->native_state = -1;
		if (gitcmd_object_dir(db->dir, &db->objdir, &format, &why) < 0) {
			/* git cat-file says what is wrong */
		} else if (strcmp(format, "sha1")) {
			err_set(&why, ERR_USAGE, "object format %s", format);
			native_note(db, why.msg);
		} else if (pack_odb_open(&db->native, db->objdir, &why) < 0) {
			native_note(db, why.msg);
		} else {
			db->native_state = 1;
		}
		free(format);
		if (db->native_state < 0 && db->reader == ODB_READER_NATIVE) {
			*e = why;
			return err_prefix(e, "--object-reader=native: ");
		}
	}
	if (db->native_state < 0)
		return db->reader == ODB_READER_NATIVE ?
			err_set(e, ERR_USAGE, "--object-reader=native: repository "
				"%s cannot be read natively", odb_name(db)) : 0;
	return 1;
}

/*
 * Whether the native reader reads name: 1 (with *id), 0 (git cat-file
 * does), -1 when it was forced (--object-reader=native) and cannot.
 */
static int native_wants(struct odb *db, const char *name, struct oid *id,
			struct err *e)
{
	if (db->reader == ODB_READER_GIT ||
	    oid_from_hex(id, name, strlen(name)) < 0)
		return 0;
	return native_open(db, e);
}

int odb_native_fork(struct odb *db, struct pack_odb **out, struct err *e)
{
	int r = native_open(db, e);

	*out = NULL;
	if (r <= 0)
		return r;
	return pack_odb_open(out, db->objdir, e) < 0 ? -1 : 1;
}

/* After a native lookup that did not answer 1: whether to ask git (1),
 * or return r (0). */
static int native_fallback(struct odb *db, int r, struct err *e)
{
	if (r == -1 || (r == 0 && db->reader == ODB_READER_NATIVE))
		return 0;
	if (r == -2) {
		if (db->reader == ODB_READER_NATIVE)
			return 0;
		native_note(db, e->msg);
	}
	/* missing: git may still have it (a partial clone's promisor
	 * remote, a pack written since) */
	return 1;
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
	if ((r = native_wants(db, name, oid, e)) < 0)
		return -1;
	if (r) {
		r = body ? pack_odb_read(db->native, oid, type, body, e)
			 : pack_odb_info(db->native, oid, type, &size, e);
		if (r == 1 || !native_fallback(db, r, e))
			return r < -1 ? -1 : r;
	}
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
	if ((r = native_wants(db, name, oid, e)) < 0)
		return -1;
	if (r) {
		r = pack_odb_open_stream(db->native, oid, &db->ps, type, size, e);
		if (r == 1) {
			db->streaming = 1;
			return 1;
		}
		if (!native_fallback(db, r, e))
			return r < -1 ? -1 : r;
	}
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
	if (db->ps) {
		ssize_t r = pack_stream_read(db->ps, dst, cap, e);

		if (r <= 0) {	/* the end, or an error: the stream is done */
			pack_stream_close(db->ps);
			db->ps = NULL;
			db->streaming = 0;
		}
		return r;
	}
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
	int r;

	if (strchr(name, '\n'))
		return 0;
	if ((r = native_wants(db, name, oid, e)) < 0)
		return -1;
	if (r) {
		r = pack_odb_info(db->native, oid, type, size, e);
		if (r == 1 || !native_fallback(db, r, e))
			return r < -1 ? -1 : r;
	}
	if ((db->broken || !db->from) && odb_start(db, e) < 0)
		return -1;
	if (fprintf(db->to, "info %s\n", name) < 0 || fflush(db->to) != 0)
		return odb_fail(db, e, "git cat-file ended");
	return odb_header(db, type, oid, size, e);
}

/*
 * One `git cat-file --batch-check --batch-all-objects` over the whole
 * repository: what each blob takes in its pack (or loose file), deltas
 * included, as git stores it. Read line by line from a pipe, so memory is
 * the caller's table only.
 */
int odb_disk_sizes(const char *dir,
		   void (*fn)(void *ctx, const struct oid *id, uint64_t disk),
		   void *ctx, struct err *e)
{
	struct gitargv a = GITARGV_INIT;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	struct oid id;
	uint64_t disk;
	int p[2], rc, status;
	pid_t pid;
	FILE *f;

	if (pipe2(p, O_CLOEXEC) < 0)
		return err_errno(e, ERR_IO, "pipe");
	gitargv_push(&a, "cat-file");
	gitargv_push(&a, "--batch-all-objects");
	gitargv_push(&a, "--unordered");
	gitargv_push(&a, "--batch-check=%(objecttype) %(objectname) %(objectsize:disk)");
	rc = gitcmd_spawn(&pid, dir, &a, -1, p[1], e);
	gitargv_clear(&a);
	close(p[1]);
	if (rc < 0) {
		close(p[0]);
		return -1;
	}
	f = fdopen(p[0], "r");
	if (!f) {
		close(p[0]);
		gitcmd_wait(pid, e);
		return err_errno(e, ERR_IO, "fdopen");
	}
	while ((n = getline(&line, &cap, f)) > 0) {
		/* "blob <40 hex> <size>\n"; other types and formats are skipped */
		if (n < 5 + OID_HEX + 3 || memcmp(line, "blob ", 5) ||
		    line[5 + OID_HEX] != ' ' ||
		    oid_from_hex(&id, line + 5, OID_HEX) < 0 ||
		    parse_u64(line + 6 + OID_HEX, (size_t)n - 7 - OID_HEX,
			      UINT64_MAX, &disk) < 0)
			continue;
		fn(ctx, &id, disk);
	}
	free(line);
	fclose(f);
	status = gitcmd_wait(pid, e);
	if (status < 0)
		return -1;
	if (status != 0)
		return err_set(e, ERR_IO, "git cat-file --batch-all-objects in %s "
			       "failed (exit status %d)", dir ? dir : ".", status);
	return 0;
}
