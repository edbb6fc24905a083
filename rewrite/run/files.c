/*
 * files.c - the small helpers every part of a run uses: state paths, phase lines, one line of git.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run.h"

/* <state>/<name>.new: where a run writes a state file until its journal
 * is finished. */
static char *state_new_path(const struct run *r, const char *name)
{
	struct buf b = BUF_INIT(BUF_MAX_DEFAULT);

	buf_printf(&b, "%s/%s.new", r->state, name);
	return buf_detach(&b, NULL);
}

/* A state file of this run: written as <name>.new and added to the
 * journal, which renames it into place with the refs. */
int run_state_put(struct run *r, const char *name, const struct buf *data,
		  struct err *e)
{
	char *path = state_new_path(r, name);
	int rc = file_write(path, data, e);

	if (rc == 0)
		journal_add_file(&r->j, name);
	free(path);
	return rc;
}

/* 1 if an interrupted run's journal is in the state directory. */
int run_journal_pending(const char *state)
{
	char *p = path_join(state, "journal");
	int r = file_exists(p);

	free(p);
	return r;
}

/* 1 if dir has entries other than . and .., 0 if empty, -1 if absent. */
int run_dir_has_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int found = 0;

	if (!d)
		return -1;
	while (!found && (de = readdir(d)))
		found = strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return found;
}

/* A step after the filter's part, on its own line where the progress
 * line shows (a terminal, or --progress; never with -q). */
void run_phase(const struct run_opts *o, const char *what)
{
	if (!o->f.quiet && o->f.progress >= 0 && (o->f.progress > 0 || isatty(2)))
		fprintf(stderr, "migrate run: %s ...\n", what);
}

/* One line of `git -C dir ARGS`, newline removed, into *out (caller
 * frees). */
int run_git_line(char **out, const char *dir, struct err *e, ...)
{
	struct buf b = BUF_INIT(1 << 20);
	va_list ap;
	int r;

	va_start(ap, e);
	r = gitcmd_vrunl(dir, 1, &b, e, ap);
	va_end(ap);
	gitcmd_chomp(&b);
	if (r == 0)
		*out = buf_detach(&b, NULL);
	buf_release(&b);
	return r;
}

static const char *const state_names[] = {
	"commit-map", "ref-map", "marks", "import-marks",
};

void run_state_files_init(struct state_files *f, const char *state,
			  const char *suffix)
{
	char **slot[] = { &f->map, &f->refmap, &f->marks, &f->imarks };
	struct buf b = BUF_INIT(BUF_MAX_DEFAULT);
	size_t i;

	for (i = 0; i < 4; i++) {
		buf_reset(&b);
		buf_printf(&b, "%s/%s%s", state, state_names[i], suffix);
		*slot[i] = xstrdup(b.ptr);
	}
	buf_release(&b);
}

void run_state_files_free(struct state_files *f)
{
	free(f->map);
	free(f->refmap);
	free(f->marks);
	free(f->imarks);
}

int run_write_small(const char *state, const char *name, const char *text,
		    struct err *e)
{
	struct buf b = BUF_INIT(BUF_MAX_DEFAULT);
	char *path = path_join(state, name);
	int rc;

	buf_adds(&b, text);
	rc = file_write(path, &b, e);
	free(path);
	buf_release(&b);
	return rc;
}

int run_worktree_status(const char *dir, struct buf *out, struct err *e)
{
	struct gitargv a = GITARGV_INIT;
	int r;

	gitargv_push(&a, "--no-optional-locks");
	gitargv_push(&a, "status");
	gitargv_push(&a, "--porcelain");
	gitargv_push(&a, "--untracked-files=no");
	r = gitcmd_ok(dir, &a, NULL, out, e);
	gitargv_clear(&a);
	return r;
}

/* 1 if `git status` shows no change to tracked files, 0 if it does. It
 * only looks: without --no-optional-locks, status takes index.lock to
 * write the refreshed index back, and a run killed there leaves a lock
 * that no journal knows and that the next run's reset dies on. */
int run_worktree_clean(const char *dir, struct err *e)
{
	struct buf out = BUF_INIT(SIZE_MAX / 2);
	int r = run_worktree_status(dir, &out, e);

	if (r == 0)
		r = out.len == 0;
	buf_release(&out);
	return r;
}
