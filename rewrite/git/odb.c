/*
 * odb.c - reading objects: natively (pack.c) when the object is named by
 * its id and the store is one pack.c reads, else, and for anything it
 * does not read, through a `git cat-file --batch-command` child process
 * (catfile.c: the fallback and the oracle of the tests).
 */
#include "git.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* said after a failure of git cat-file */
#define HINT "is it a git repository? (see --source-repo)"

struct odb {
	char *dir;	/* NULL: current directory */
	struct catfile *cat;	/* started on first use */
	int broken;
	int streaming;
	/* the native reader */
	enum odb_reader reader;
	int quiet;
	int native_state;	/* 0 not tried yet, 1 open, -1 not used */
	int noted;		/* the note on falling back is out */
	struct pack_odb *native;
	char *objdir;		/* the native reader's object directory */
	struct pack_stream *ps;	/* a native stream being read */
	uint64_t bytes_read;	/* of contents, for progress */
	int is_repo;		/* 0 not asked yet, 1 yes, -1 no */
};

struct odb *odb_new(const char *dir)
{
	struct odb *db = xcalloc(1, sizeof(*db));

	db->dir = dir ? xstrdup(dir) : NULL;
	return db;
}

int odb_is_repository(struct odb *db)
{
	struct err ignored = ERR_INIT;
	char *gitdir = NULL;

	if (!db->is_repo) {
		db->is_repo = gitcmd_git_dir(db->dir, &gitdir, &ignored) < 0 ? -1 : 1;
		free(gitdir);
	}
	return db->is_repo > 0;
}

uint64_t odb_bytes_read(const struct odb *db)
{
	return db->bytes_read;
}

const char *odb_name(const struct odb *db)
{
	return db->dir ? db->dir : ".";
}

void odb_free(struct odb *db)
{
	if (!db)
		return;
	catfile_close(db->cat, NULL);
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

/* Asks git cat-file "<cmd> <name>" and reads the answer's header: as
 * catfile_header; the reader is broken after an error. */
static int git_ask(struct odb *db, const char *cmd, const char *name,
		   enum obj_type *type, struct oid *oid, uint64_t *size,
		   struct err *e)
{
	int r;

	if (db->broken)
		return err_set(e, ERR_IO, "repository %s: object reader failed earlier",
			       odb_name(db));
	if (!db->cat && catfile_start(&db->cat, db->dir, HINT, e) < 0)
		return -1;
	r = catfile_ask(db->cat, cmd, name, e);
	if (r == 0)
		r = catfile_header(db->cat, type, oid, size, e);
	if (r < 0)
		db->broken = 1;
	return r;
}

int odb_read(struct odb *db, const char *name, enum obj_type *type,
	     struct oid *oid, struct buf *body, struct err *e)
{
	uint64_t size;
	int r;

	if (strchr(name, '\n'))
		return 0;
	if ((r = native_wants(db, name, oid, e)) < 0)
		return -1;
	if (r) {
		size_t before = body ? body->len : 0;

		r = body ? pack_odb_read(db->native, oid, type, body, e)
			 : pack_odb_info(db->native, oid, type, &size, e);
		if (r == 1 && body)
			db->bytes_read += body->len - before;
		if (r == 1 || !native_fallback(db, r, e))
			return r < -1 ? -1 : r;
	}
	r = git_ask(db, body ? "contents" : "info", name, type, oid, &size, e);
	if (r <= 0 || !body)
		return r;
	if (catfile_body(db->cat, body, e) < 0) {
		db->broken = 1;
		return -1;
	}
	db->bytes_read += size;
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
	r = git_ask(db, "contents", name, type, oid, size, e);
	if (r <= 0)
		return r;
	db->streaming = 1;
	return 1;
}

ssize_t odb_stream_read(struct odb *db, void *dst, size_t cap,
			struct err *e)
{
	ssize_t r;

	assert(db->streaming);
	if (db->ps) {
		r = pack_stream_read(db->ps, dst, cap, e);
		if (r > 0)
			db->bytes_read += (uint64_t)r;
		if (r <= 0) {	/* the end, or an error: the stream is done */
			pack_stream_close(db->ps);
			db->ps = NULL;
			db->streaming = 0;
		}
		return r;
	}
	r = catfile_read(db->cat, dst, cap, e);
	if (r > 0)
		db->bytes_read += (uint64_t)r;
	if (r <= 0)
		db->streaming = 0;
	if (r < 0)
		db->broken = 1;
	return r;
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
	return git_ask(db, "info", name, type, oid, size, e);
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
