/* journal.c - the lock, the journal and the recovery of `migrate run`. */
#include "run.h"

#include "../../pointerize/pointerize.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>


#define JOURNAL_MAGIC "migrate journal 1"

/* ---- building ---- */

void journal_add_ref(struct journal *j, const char *name,
		     const struct oid *old, const struct oid *new,
		     int no_deref)
{
	struct jref *r;

	if (j->nrefs == j->refs_alloc) {
		j->refs_alloc = j->refs_alloc ? 2 * j->refs_alloc : 64;
		j->refs = xrealloc(j->refs, j->refs_alloc * sizeof(*j->refs));
	}
	r = &j->refs[j->nrefs++];
	r->name = xstrdup(name);
	r->old = *old;
	r->new = *new;
	r->no_deref = no_deref;
}

static void push_str(char ***v, size_t *n, const char *s)
{
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = xstrdup(s);
}

void journal_add_file(struct journal *j, const char *name)
{
	push_str(&j->files, &j->nfiles, name);
}

void journal_add_drop(struct journal *j, const char *name)
{
	push_str(&j->drops, &j->ndrops, name);
}

void journal_add_wt(struct journal *j, const char *path)
{
	push_str(&j->wts, &j->nwts, path);
}

void journal_free(struct journal *j)
{
	size_t i;

	for (i = 0; i < j->nrefs; i++)
		free(j->refs[i].name);
	for (i = 0; i < j->nwts; i++)
		free(j->wts[i]);
	for (i = 0; i < j->nfiles; i++)
		free(j->files[i]);
	for (i = 0; i < j->ndrops; i++)
		free(j->drops[i]);
	free(j->drops);
	free(j->refs);
	free(j->wts);
	free(j->files);
	free(j->state);
	free(j->dir);
	free(j->gitdir);
	free(j->commondir);
	memset(j, 0, sizeof(*j));
}

static char *path2(const char *dir, const char *name, const char *suffix)
{
	struct buf b = BUF_INIT(BUF_MAX_DEFAULT);

	buf_printf(&b, "%s/%s%s", dir, name, suffix);
	return buf_detach(&b, NULL);
}

/* ---- the file ---- */

int journal_write(const struct journal *j, struct err *e)
{
	struct buf b = BUF_INIT(SIZE_MAX / 2);
	char h1[OID_HEX + 1], h2[OID_HEX + 1], *path;
	size_t i;
	int r = 0;

	buf_printf(&b, "%s\ndir %s\ngitdir %s\ncommondir %s\nworktree %d\n",
		   JOURNAL_MAGIC, j->dir, j->gitdir, j->commondir, j->worktree);
	for (i = 0; i < j->nwts; i++)
		buf_printf(&b, "wt %s\n", j->wts[i]);
	for (i = 0; i < j->nfiles; i++)
		buf_printf(&b, "file %s\n", j->files[i]);
	for (i = 0; i < j->ndrops; i++)
		buf_printf(&b, "drop %s\n", j->drops[i]);
	for (i = 0; i < j->nrefs; i++)
		buf_printf(&b, "%s %s %s %s\n", j->refs[i].no_deref ? "head" : "ref",
			   oid_hex(&j->refs[i].old, h1), oid_hex(&j->refs[i].new, h2),
			   j->refs[i].name);
	buf_adds(&b, "end\n");
	/* a newline in a path would break the line format */
	if (strchr(j->dir, '\n') || strchr(j->gitdir, '\n') || strchr(j->commondir, '\n'))
		r = err_set(e, ERR_USAGE, "a repository path holds a newline");
	for (i = 0; r == 0 && i < j->nwts; i++)
		if (strchr(j->wts[i], '\n'))
			r = err_set(e, ERR_USAGE, "a work tree path holds a newline");
	path = path2(j->state, "journal", "");
	if (r == 0)
		r = file_write(path, &b, e);
	if (r == 0 && dir_fsync(j->state) < 0)
		r = err_errno(e, ERR_IO, "%s: cannot sync", j->state);
	free(path);
	buf_release(&b);
	return r;
}

static int parse_line(struct journal *j, char *line)
{
	struct oid old, new;
	char *sp;

	if (!strncmp(line, "dir ", 4))
		j->dir = xstrdup(line + 4);
	else if (!strncmp(line, "gitdir ", 7))
		j->gitdir = xstrdup(line + 7);
	else if (!strncmp(line, "commondir ", 10))
		j->commondir = xstrdup(line + 10);
	else if (!strncmp(line, "worktree ", 9))
		j->worktree = line[9] == '1';
	else if (!strncmp(line, "wt ", 3))
		journal_add_wt(j, line + 3);
	else if (!strncmp(line, "file ", 5))
		journal_add_file(j, line + 5);
	else if (!strncmp(line, "drop ", 5))
		journal_add_drop(j, line + 5);
	else if (!strncmp(line, "ref ", 4) || !strncmp(line, "head ", 5)) {
		sp = strchr(line, ' ') + 1;
		if (strlen(sp) < 2 * OID_HEX + 3 || sp[OID_HEX] != ' ' ||
		    sp[2 * OID_HEX + 1] != ' ' ||
		    oid_from_hex(&old, sp, OID_HEX) < 0 ||
		    oid_from_hex(&new, sp + OID_HEX + 1, OID_HEX) < 0)
			return -1;
		journal_add_ref(j, sp + 2 * OID_HEX + 2, &old, &new, line[0] == 'h');
	} else
		return -1;
	return 0;
}

int journal_load(struct journal *j, const char *state, struct err *e)
{
	char *path = path2(state, "journal", ""), *line = NULL;
	size_t cap = 0, lineno = 0;
	ssize_t n;
	int r = 0, end = 0;
	FILE *f = fopen(path, "re");

	memset(j, 0, sizeof(*j));
	if (!f) {
		r = errno == ENOENT ? 0 : err_errno(e, ERR_IO, "%s: cannot open", path);
		free(path);
		return r;
	}
	j->state = xstrdup(state);
	while (r == 0 && !end && (n = getline(&line, &cap, f)) > 0) {
		lineno++;
		if (line[n - 1] == '\n')
			line[--n] = '\0';
		if (lineno == 1)
			r = strcmp(line, JOURNAL_MAGIC) ? -1 : 0;
		else if (!strcmp(line, "end"))
			end = 1;
		else
			r = parse_line(j, line);
	}
	if (r == 0 && (!end || !j->dir || !j->gitdir || !j->commondir))
		r = -1;
	if (r < 0)
		err_set(e, ERR_IO, "%s:%zu: malformed journal of an interrupted run "
			"(remove it by hand only after checking the refs)", path,
			lineno);
	free(line);
	fclose(f);
	free(path);
	return r < 0 ? -1 : 1;
}

/* ---- finishing and rolling back ---- */

/* Removes the lock files a killed run may have left behind. */
static size_t remove_locks(const struct journal *j)
{
	struct err ignored = ERR_INIT;
	size_t i, n = 0;
	char *p;

#define DROP(path) do { p = (path); if (unlink(p) == 0) n++; free(p); } while (0)
	for (i = 0; i < j->nrefs; i++)
		DROP(path2(!strcmp(j->refs[i].name, "HEAD") ? j->gitdir : j->commondir,
			   j->refs[i].name, ".lock"));
	DROP(path2(j->commondir, "packed-refs", ".lock"));
	/* `git reset --hard` of a work tree also locks HEAD (when it is not
	 * a ref of the journal) and ORIG_HEAD: killed there, it leaves them */
	if (j->worktree) {
		DROP(path2(j->gitdir, "index", ".lock"));
		DROP(path2(j->gitdir, "HEAD", ".lock"));
		DROP(path2(j->gitdir, "ORIG_HEAD", ".lock"));
	}
	for (i = 0; i < j->nwts; i++) {
		char *wtdir = NULL;

		if (gitcmd_git_dir(j->wts[i], &wtdir, &ignored) < 0)
			continue;
		DROP(path2(wtdir, "index", ".lock"));
		DROP(path2(wtdir, "HEAD", ".lock"));
		DROP(path2(wtdir, "ORIG_HEAD", ".lock"));
		free(wtdir);
	}
#undef DROP
	return n;
}

/* The value of ref name in the lists (or HEAD's own), null if none. */
static int current(struct oid *out, const struct journal *j,
		   const struct gitrefs *all, const struct gitrefs *mine,
		   const char *name)
{
	struct buf b = BUF_INIT(4096);
	struct err ignored = ERR_INIT;
	const struct gitref *g;

	*out = oid_null;
	if (!strcmp(name, "HEAD")) {
		if (gitcmd_runl(j->dir, 0, &b, &ignored, "rev-parse", "-q", "--verify",
				"HEAD", (char *)NULL) == 0) {
			gitcmd_chomp(&b);
			oid_from_hex(out, b.ptr, b.len);
		}
		buf_release(&b);
		return 0;
	}
	g = gitrefs_find(!strncmp(name, "refs/migrate/", 13) ? mine : all, name);
	if (g)
		*out = g->id;
	return 0;
}

/* The refs of dir: all but ours in all, ours (refs/migrate/) in mine,
 * listed by two git for-each-ref side by side. 0, or -1 with e set. */
static int list_refs(const char *dir, struct gitrefs *all,
		     struct gitrefs *mine, struct err *e)
{
	struct gitcmd_job a, m;
	struct err ignored = ERR_INIT;
	int r;

	gitrefs_start(&a, dir, NULL);
	gitrefs_start(&m, dir, "refs/migrate/");
	r = gitrefs_collect(all, &a, NULL, e);
	if (gitrefs_collect(mine, &m, "refs/migrate/", r == 0 ? e : &ignored) < 0)
		r = -1;
	return r;
}

/* 1 if a ref of the journal no longer holds the value it had before the
 * transaction moving it (forward: its old one) or its value cannot be
 * read: a git update-ref that died while it renamed its lock files
 * leaves some refs moved and some not (git's ref transaction is atomic
 * only as long as git lives). */
static int some_moved(const struct journal *j, int forward)
{
	struct gitrefs all = GITREFS_INIT, mine = GITREFS_INIT;
	struct err ignored = ERR_INIT;
	struct oid cur;
	size_t i;
	int moved = list_refs(j->dir, &all, &mine, &ignored) < 0;

	for (i = 0; !moved && i < j->nrefs; i++) {
		const struct jref *x = &j->refs[i];

		current(&cur, j, &all, &mine, x->name);
		moved = !oid_eq(&cur, forward ? &x->old : &x->new);
	}
	gitrefs_free(&all);
	gitrefs_free(&mine);
	return moved;
}

/*
 * Most of a run's end on a repository of many refs is git update-ref's
 * lock files and renames, the kernel's work, ref by ref (an in-place run
 * writes each ref and its backup: 457 loose refs on git's history). A
 * transaction of REFS_SPLIT or more refs is split in two halves, each
 * given to a `git update-ref --stdin` of its own, side by side, and
 * committed in two phases: both prepare (each takes the locks of its
 * half), then both commit. A half that cannot prepare (a ref locked by
 * someone else) ends the other's input before its commit, which aborts
 * it: nothing moved, as with one transaction. The deletions (which may
 * rewrite packed-refs, whose lock only one can hold) and HEAD's
 * no-deref go to the first half.
 */
#define REFS_SPLIT 64

struct refs_half {
	pid_t pid;
	int to, from;		/* its stdin, its stdout (-1: closed) */
	struct buf said;	/* its stdout so far */
};

/* Reads the half's answers until the line "<verb>: ok": 0, or -1 at the
 * end of them (the half failed: git said why on stderr). */
static int half_heard(struct refs_half *h, const char *line)
{
	char chunk[256];
	ssize_t n;

	while (!strstr(h->said.ptr, line)) {
		n = read(h->from, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || buf_add(&h->said, chunk, (size_t)n) < 0)
			return -1;
	}
	return 0;
}

static int update_refs_halves(const char *dir, const struct gitargv *a,
			      const struct buf cmds[2], struct err *e)
{
	struct refs_half h[2];
	struct err ignored = ERR_INIT;
	int i, r = 0, status;

	for (i = 0; i < 2; i++) {
		h[i].pid = -1;
		h[i].to = h[i].from = -1;
		buf_init(&h[i].said, 4096);
	}
	for (i = 0; r == 0 && i < 2; i++)
		/* git's own message (a ref locked) reaches the user */
		r = gitcmd_spawn_piped(&h[i].pid, dir, a, &h[i].to, &h[i].from,
				       NULL, e);
	for (i = 0; r == 0 && i < 2; i++)
		if (write_full(h[i].to, "start\n", 6) < 0 ||
		    write_full(h[i].to, cmds[i].ptr, cmds[i].len) < 0 ||
		    write_full(h[i].to, "prepare\n", 8) < 0)
			r = -1;
	for (i = 0; r == 0 && i < 2; i++)
		r = half_heard(&h[i], "prepare: ok\n");
	for (i = 0; r == 0 && i < 2; i++)
		r = write_full(h[i].to, "commit\n", 7) < 0 ? -1 : 0;
	for (i = 0; r == 0 && i < 2; i++)
		r = half_heard(&h[i], "commit: ok\n");
	/* the end of its input: a half not told to commit aborts */
	for (i = 0; i < 2; i++) {
		if (h[i].to >= 0)
			close(h[i].to);
		if (h[i].from >= 0)
			close(h[i].from);
		buf_release(&h[i].said);
	}
	for (i = 0; i < 2; i++) {
		if (h[i].pid < 0)
			continue;
		status = gitcmd_wait(h[i].pid, &ignored);
		if (status != 0 && (r == 0 || !e->msg[0]))
			r = gitcmd_failed(e, dir, a, status);
	}
	if (r < 0 && !e->msg[0])
		err_set(e, ERR_IO, "git update-ref --stdin in %s failed", dir);
	return r;
}

/* Moves every ref of the journal to its new (forward) or old value in one
 * transaction. Refs already there are left alone. fresh: the run that
 * wrote the journal moves them (else an interrupted run is finished or
 * undone). -1 when nothing moved (e set), -3 when the transaction failed
 * after moving some refs (e set). */
static int move_refs(const struct journal *j, int forward, int fresh,
		     struct err *e)
{
	struct gitrefs all = GITREFS_INIT, mine = GITREFS_INIT;
	struct buf cmds[2] = { BUF_INIT(SIZE_MAX / 2), BUF_INIT(SIZE_MAX / 2) };
	struct gitargv a = GITARGV_INIT;
	char h1[OID_HEX + 1], h2[OID_HEX + 1], h3[OID_HEX + 1];
	struct oid cur;
	size_t i, n = 0;
	int r = list_refs(j->dir, &all, &mine, e);

	for (i = 0; r == 0 && i < j->nrefs; i++) {
		const struct jref *x = &j->refs[i];
		const struct oid *want = forward ? &x->new : &x->old;
		const struct oid *from = forward ? &x->old : &x->new;

		current(&cur, j, &all, &mine, x->name);
		if (oid_eq(&cur, want))
			continue;
		if (!oid_eq(&cur, from) && fresh) {
			r = err_set(e, ERR_IO, "%s moved during the run (now %s); "
				    "nothing was changed; run again", x->name,
				    oid_is_null(&cur) ? "deleted" : oid_hex(&cur, h1));
			break;
		}
		if (!oid_eq(&cur, from)) {
			r = err_set(e, ERR_IO, "%s is %s, neither its value before "
				    "(%s) nor after (%s) the interrupted run; nothing "
				    "was moved", x->name, oid_hex(&cur, h1),
				    oid_hex(&x->old, h2), oid_hex(&x->new, h3));
			break;
		}
		/* the halves of update_refs_halves: alternate lines, the
		 * deletions and HEAD's no-deref in the first */
		struct buf *c = &cmds[x->no_deref || oid_is_null(want) ? 0 : n++ % 2];
		if (x->no_deref)
			buf_adds(c, "option no-deref\n");
		if (oid_is_null(want))
			buf_printf(c, "delete %s %s\n", x->name, oid_hex(from, h1));
		else if (oid_is_null(from))
			buf_printf(c, "create %s %s\n", x->name, oid_hex(want, h1));
		else
			buf_printf(c, "update %s %s %s\n", x->name,
				   oid_hex(want, h1), oid_hex(from, h2));
	}
	if (r == 0 && (cmds[0].len || cmds[1].len)) {
		/* every value is a full id: git need not look for refs of
		 * that name (six lookups each) to warn they are ambiguous */
		gitargv_push(&a, "-c");
		gitargv_push(&a, "core.warnAmbiguousRefs=false");
		gitargv_push(&a, "update-ref");
		gitargv_push(&a, "--stdin");
		/* the refs are listed: from here one core is git's */
		if (fresh && j->refs_moving)
			j->refs_moving(j->refs_moving_arg);
		if (n >= REFS_SPLIT) {
			r = update_refs_halves(j->dir, &a, cmds, e);
		} else {
			buf_add(&cmds[0], cmds[1].ptr, cmds[1].len);
			r = gitcmd_ok(j->dir, &a, &cmds[0], NULL, e);
		}
		if (r < 0 && fresh && some_moved(j, forward))
			r = -3;
	}
	gitargv_clear(&a);
	gitrefs_free(&all);
	gitrefs_free(&mine);
	buf_release(&cmds[0]);
	buf_release(&cmds[1]);
	return r;
}

static int reset_worktrees(const struct journal *j, struct err *e)
{
	struct buf b = BUF_INIT(4096);
	struct err ignored = ERR_INIT;
	size_t i;
	int r = 0;

	/* an LFS pointer whose object is nowhere (unlfs --missing=keep)
	 * stays a pointer in the work tree: git-lfs's smudge would fail the
	 * reset on it (lfs.skipdownloaderrors: it writes the pointer) */
	if (j->worktree && gitcmd_runl(j->dir, 0, &b, &ignored, "rev-parse", "-q",
				       "--verify", "HEAD^{commit}", (char *)NULL) == 0)
		r = run_checkout(j->dir, j->lfs, e);
	for (i = 0; r == 0 && i < j->nwts; i++)
		r = run_checkout(j->wts[i], j->lfs, e);
	buf_release(&b);
	return r;
}

static int exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

/* <name>.new -> <name>, the replaced <name> kept as <name>.prev first. */
static int commit_files(const struct journal *j, struct err *e)
{
	size_t i;
	int r = 0;

	for (i = 0; r == 0 && i < j->nfiles; i++) {
		char *fin = path2(j->state, j->files[i], ""),
		     *nw = path2(j->state, j->files[i], ".new"),
		     *prev = path2(j->state, j->files[i], ".prev");
		if (exists(nw) && exists(fin) && link(fin, prev) < 0 && errno != EEXIST)
			r = err_errno(e, ERR_IO, "%s: cannot link to %s", fin, prev);
		free(fin);
		free(nw);
		free(prev);
	}
	for (i = 0; r == 0 && i < j->nfiles; i++) {
		char *fin = path2(j->state, j->files[i], ""),
		     *nw = path2(j->state, j->files[i], ".new");
		if (exists(nw) && rename(nw, fin) < 0)
			r = err_errno(e, ERR_IO, "%s: cannot rename to %s", nw, fin);
		free(fin);
		free(nw);
	}
	return r;
}

/* The state files as they were before the run. */
static int restore_files(const struct journal *j, struct err *e)
{
	size_t i;
	int r = 0;

	for (i = 0; r == 0 && i < j->nfiles; i++) {
		char *fin = path2(j->state, j->files[i], ""),
		     *nw = path2(j->state, j->files[i], ".new"),
		     *prev = path2(j->state, j->files[i], ".prev");
		if (exists(nw)) {
			unlink(nw);
			unlink(prev);
		} else if (exists(prev)) {
			if (rename(prev, fin) < 0)
				r = err_errno(e, ERR_IO, "%s: cannot rename to %s", prev, fin);
		} else {
			unlink(fin);
		}
		free(fin);
		free(nw);
		free(prev);
	}
	return r;
}

/* The lists of what a failed run leaves to remove (the packs it wrote)
 * go before the journal: from then on what they named is kept. */
static int drop_files(const struct journal *j, struct err *e)
{
	size_t i;
	int r = 0;

	for (i = 0; r == 0 && i < j->ndrops; i++) {
		char *p = path2(j->state, j->drops[i], "");

		if (unlink(p) < 0 && errno != ENOENT)
			r = err_errno(e, ERR_IO, "%s: cannot remove", p);
		free(p);
	}
	if (r == 0 && j->ndrops && dir_fsync(j->state) < 0)
		r = err_errno(e, ERR_IO, "%s: cannot sync", j->state);
	return r;
}

static int journal_remove(const struct journal *j, struct err *e)
{
	char *path = path2(j->state, "journal", "");
	size_t i;
	int r = 0;

	if (unlink(path) < 0 && errno != ENOENT)
		r = err_errno(e, ERR_IO, "%s: cannot remove", path);
	if (r == 0)
		dir_fsync(j->state);
	for (i = 0; r == 0 && i < j->nfiles; i++) {
		char *prev = path2(j->state, j->files[i], ".prev");
		unlink(prev);
		free(prev);
	}
	free(path);
	return r;
}

int journal_finish(const struct journal *j, int recovering, size_t *locks,
		   struct err *e)
{
	int r;

	*locks = recovering ? remove_locks(j) : 0;
	r = move_refs(j, 1, !recovering, e);
	if (r == -3)
		return -1;	/* some refs moved: the journal finishes them */
	if (r < 0)
		return -2;
	if (j->refs_moved)
		j->refs_moved(j->refs_moved_arg);
	if (reset_worktrees(j, e) < 0 ||
	    commit_files(j, e) < 0 || drop_files(j, e) < 0)
		return -1;
	return journal_remove(j, e);
}

int journal_rollback(const struct journal *j, size_t *locks, struct err *e)
{
	*locks = remove_locks(j);
	if (move_refs(j, 0, 0, e) < 0 || reset_worktrees(j, e) < 0 ||
	    restore_files(j, e) < 0)
		return -1;
	return journal_remove(j, e);
}

void journal_drop(const struct journal *j)
{
	struct err ignored = ERR_INIT;
	size_t i;

	for (i = 0; i < j->nfiles; i++) {
		char *nw = path2(j->state, j->files[i], ".new");
		unlink(nw);
		free(nw);
	}
	journal_remove(j, &ignored);
}

/* ---- the lock and the leftovers ---- */

int state_dir_check(const char *state, struct err *e)
{
	struct stat st;

	if (lstat(state, &st) < 0 || S_ISDIR(st.st_mode))
		return 0;
	return err_set(e, ERR_USAGE, "%s is %s, not a folder: migrate keeps "
		       "its state in a folder of its own there and never "
		       "writes or cleans through a link; move it away and run "
		       "again", state, S_ISLNK(st.st_mode) ?
		       "a symbolic link" : "not a folder");
}

int state_lock(const char *state, int *fd, struct err *e)
{
	char *path = path2(state, "lock", "");

	*fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	if (*fd < 0) {
		err_errno(e, ERR_IO, "%s: cannot open", path);
		free(path);
		return -1;
	}
	if (flock(*fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno == EWOULDBLOCK)
			err_set(e, ERR_USAGE, "another migrate run holds %s; "
				"wait for it to end", path);
		else
			err_errno(e, ERR_IO, "%s: cannot lock", path);
		close(*fd);
		*fd = -1;
		free(path);
		return -1;
	}
	free(path);
	return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

int remove_tree(const char *dir)
{
	return nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : -1;
}

/* remove_tree_last's file, which rm_but_last passes by (nftw takes no
 * argument for its callback; the main thread alone removes trees) */
static struct stat last_kept;

static int rm_but_last(const char *path, const struct stat *st, int flag,
		       struct FTW *ftw)
{
	(void)ftw;
	if (flag != FTW_DP && st->st_dev == last_kept.st_dev &&
	    st->st_ino == last_kept.st_ino)
		return 0;
	/* the folders that hold it are not empty: they stay, for now */
	if (flag == FTW_DP)
		return rmdir(path) < 0 && errno != ENOTEMPTY && errno != EEXIST;
	return unlink(path) < 0;
}

int remove_tree_last(const char *dir, const char *last)
{
	if (lstat(last, &last_kept) < 0)
		return remove_tree(dir);
	if (nftw(dir, rm_but_last, 16, FTW_DEPTH | FTW_PHYS) != 0 ||
	    unlink(last) < 0)
		return -1;
	return remove_tree(dir);
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n > k && !strcmp(s + n - k, suffix);
}

/* A folder of the repository's own, for clean-up: NULL when it is not
 * there or is a symbolic link (what it names is not ours to clean). */
static DIR *open_own_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);

	if (fd >= 0 && !d)
		close(fd);
	return d;
}

size_t import_keeps_clean(const char *packdir)
{
	static const char msg[] = "fast-import";
	char buf[sizeof(msg)];
	struct dirent *de;
	size_t n = 0;
	ssize_t len;
	DIR *d;
	int fd;

	if (!(d = open_own_dir(packdir)))
		return 0;
	while ((de = readdir(d))) {
		if (packw_is_temp(de->d_name) ||
		    !strncmp(de->d_name, RUN_JOIN_BASE "-", strlen(RUN_JOIN_BASE) + 1)) {
			n += unlinkat(dirfd(d), de->d_name, 0) == 0;
			continue;
		}
		if (strncmp(de->d_name, "pack-", 5) || !ends_with(de->d_name, ".keep"))
			continue;
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		len = fd < 0 ? -1 : read(fd, buf, sizeof(buf));
		if (fd >= 0)
			close(fd);
		if (len == (ssize_t)sizeof(msg) - 1 && !memcmp(buf, msg, (size_t)len) &&
		    unlinkat(dirfd(d), de->d_name, 0) == 0)
			n++;
	}
	closedir(d);
	return n;
}

int state_side_remove(const char *state)
{
	char *p = path2(state, "import.git", "");
	/* FTW_PHYS: the objects symlink goes, not what it names */
	int r = nftw(p, rm_entry, 16, FTW_DEPTH | FTW_PHYS);

	free(p);
	return r;
}

size_t state_clean(const char *state, const char *store)
{
	struct dirent *de;
	size_t n = 0;
	char *p;
	DIR *d;

	if ((d = open_own_dir(state))) {
		while ((de = readdir(d))) {
			if (!strcmp(de->d_name, "import.git")) {
				n += state_side_remove(state) == 0;
			} else if (file_is_temp(de->d_name) ||
				   ends_with(de->d_name, ".new") ||
				   ends_with(de->d_name, ".prev") ||
				   /* git's lock on one (fast-import's marks,
				    * killed while it wrote them): the next
				    * fast-import would refuse to write */
				   ends_with(de->d_name, ".new.lock")) {
				n += unlinkat(dirfd(d), de->d_name, 0) == 0;
			}
		}
		closedir(d);
	}
	p = path2(store, "tmp", "");
	if ((d = open_own_dir(p))) {
		while ((de = readdir(d)))
			if (ptr_put_is_dead_temp(de->d_name))
				n += unlinkat(dirfd(d), de->d_name, 0) == 0;
		closedir(d);
	}
	free(p);
	return n;
}
