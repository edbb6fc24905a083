/*
 * catfile.c - the one client of `git cat-file --batch-command`: odb.c asks
 * it for what the native reader does not read, one object at a time;
 * migrate analyze for every tree of a history, many requests ahead of the
 * answers. The messages of a failure are made here, once.
 */
#include "git.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct catfile {
	char *dir;		/* NULL: current directory */
	const char *hint;	/* the end of a failure's message, or NULL */
	pid_t pid;
	FILE *to, *from;
	int err_fd;		/* the child's stderr, quoted when it fails */
	int asked;		/* requests written but not flushed */
	uint64_t left;		/* bytes of a body not yet read */
};

static const char *name_of(const struct catfile *c)
{
	return c->dir ? c->dir : ".";
}

int catfile_start(struct catfile **out, const char *dir, const char *hint,
		  struct err *e)
{
	struct gitargv args = GITARGV_INIT;
	struct catfile *c;
	int to, from, rc;

	*out = NULL;
	c = xcalloc(1, sizeof(*c));
	/* git's own messages ("fatal: not a git repository") go to
	 * c->err_fd, read when the child fails */
	gitargv_push(&args, "cat-file");
	gitargv_push(&args, "--batch-command");
	rc = gitcmd_spawn_piped(&c->pid, dir, &args, &to, &from, &c->err_fd, e);
	gitargv_clear(&args);
	if (rc < 0) {
		free(c);
		return -1;
	}
	pipe_widen(from);	/* objects stream in while we work on them */
	c->to = fdopen(to, "w");
	c->from = fdopen(from, "r");
	if (!c->to || !c->from) {
		rc = err_errno(e, ERR_IO, "fdopen");
		if (!c->to)
			close(to);
		if (!c->from)
			close(from);
		catfile_close(c, NULL);
		return rc;
	}
	c->dir = dir ? xstrdup(dir) : NULL;
	c->hint = hint;
	*out = c;
	return 0;
}

/* Says what went wrong, with git's words if it left any. */
static int catfile_fail(struct catfile *c, const char *what, struct err *e)
{
	char said[512] = "";
	ssize_t n = 0;
	const char *why = said;
	int status;

	/* the child has ended: wait for it so its last words are there (a
	 * child still running may be writing to us: not waited for) */
	if (!strcmp(what, "git cat-file ended") && c->pid > 0 && c->to) {
		fclose(c->to);
		c->to = NULL;
		waitpid(c->pid, &status, 0);
		c->pid = -1;
	}
	if (c->err_fd >= 0)
		n = read(c->err_fd, said, sizeof(said) - 1);
	said[n > 0 ? n : 0] = '\0';
	if (!strncmp(why, "fatal: ", 7))
		why += 7;
	said[strcspn(said, "\n")] = '\0';
	return err_set(e, ERR_IO, "cannot read objects from repository %s (%s%s%s)%s%s",
		       name_of(c), what, *why ? "; git: " : "", why,
		       c->hint ? "; " : "", c->hint ? c->hint : "");
}

int catfile_ask(struct catfile *c, const char *cmd, const char *name,
		struct err *e)
{
	if (!c->to || fprintf(c->to, "%s %s\n", cmd, name) < 0)
		return catfile_fail(c, "git cat-file ended", e);
	c->asked = 1;
	return 0;
}

int catfile_header(struct catfile *c, enum obj_type *type, struct oid *oid,
		   uint64_t *size, struct err *e)
{
	char line[512];
	char *sp1, *sp2;
	size_t n;

	if (c->asked) {
		c->asked = 0;
		if (fflush(c->to) != 0)
			return catfile_fail(c, "git cat-file ended", e);
	}
	if (!fgets(line, sizeof(line), c->from))
		return catfile_fail(c, "git cat-file ended", e);
	n = strlen(line);
	if (n == 0 || line[n - 1] != '\n')
		return catfile_fail(c, "overlong reply", e);
	line[--n] = '\0';
	if (n > 8 && strcmp(line + n - 8, " missing") == 0)
		return 0;
	if (n > 10 && strcmp(line + n - 10, " ambiguous") == 0)
		return 0;
	sp1 = strchr(line, ' ');
	sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
	if (!sp1 || !sp2)
		return catfile_fail(c, "unexpected reply", e);
	if (sp1 - line == 64)
		return err_set(e, ERR_USAGE,
			       "repository %s uses sha256 object ids: migrate "
			       "supports sha1 repositories only for now",
			       name_of(c));
	if (oid_from_hex(oid, line, (size_t)(sp1 - line)) < 0)
		return catfile_fail(c, "bad object id in reply", e);
	*type = obj_type_parse(sp1 + 1, (size_t)(sp2 - sp1 - 1));
	if (parse_u64(sp2 + 1, strlen(sp2 + 1), UINT64_MAX, size) < 0)
		return catfile_fail(c, "bad size in reply", e);
	c->left = *size;
	return 1;
}

int catfile_body(struct catfile *c, struct buf *body, struct err *e)
{
	size_t n;

	if (u64_to_size(c->left, &n) < 0 || n > body->max)
		return catfile_fail(c, "object too large to load", e);
	buf_reset(body);
	if (buf_grow(body, n) < 0)
		return catfile_fail(c, "object too large to load", e);
	if (fread(body->ptr, 1, n, c->from) != n || fgetc(c->from) != '\n')
		return catfile_fail(c, "short object", e);
	c->left = 0;
	body->len = n;
	body->ptr[n] = '\0';
	return 0;
}

ssize_t catfile_read(struct catfile *c, void *dst, size_t cap, struct err *e)
{
	size_t n;

	if (c->left == 0) {
		if (fgetc(c->from) != '\n')
			return catfile_fail(c, "short object", e);
		return 0;
	}
	if (cap > c->left)
		cap = (size_t)c->left;
	n = fread(dst, 1, cap, c->from);
	if (n == 0)
		return catfile_fail(c, "short object", e);
	c->left -= n;
	return (ssize_t)n;
}

int catfile_close(struct catfile *c, struct err *e)
{
	struct err quiet = ERR_INIT;
	int status = 0, rc = 0;

	if (!c)
		return 0;
	if (c->to)
		fclose(c->to);
	c->to = NULL;
	if (c->from)
		fclose(c->from);
	c->from = NULL;
	if (c->pid > 0)
		status = gitcmd_wait(c->pid, e ? e : &quiet);
	c->pid = -1;
	if (status < 0)
		rc = -1;
	else if (status > 0 && e)
		rc = catfile_fail(c, "git cat-file failed", e);
	if (c->err_fd >= 0)
		close(c->err_fd);
	free(c->dir);
	free(c);
	return rc;
}
