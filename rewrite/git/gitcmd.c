/* gitcmd.c - git child processes with argv arrays and pipes (no shell). */
#include "git.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void gitargv_push(struct gitargv *a, const char *s)
{
	if (a->n + 2 > a->alloc) {
		a->alloc = a->alloc ? a->alloc * 2 : 16;
		a->v = xrealloc(a->v, a->alloc * sizeof(*a->v));
	}
	a->v[a->n++] = xstrdup(s);
	a->v[a->n] = NULL;
}

void gitargv_pushf(struct gitargv *a, const char *fmt, ...)
{
	struct buf b = BUF_INIT(BUF_MAX_DEFAULT);
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	gitargv_push(a, b.ptr);
	buf_release(&b);
}

void gitargv_clear(struct gitargv *a)
{
	size_t i;

	for (i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
	a->v = NULL;
	a->n = a->alloc = 0;
}

/* "git -C DIR ARGS..." for messages (the first few arguments). */
static void cmd_describe(struct buf *out, const char *dir,
			 const struct gitargv *args)
{
	size_t i;

	buf_adds(out, "git");
	if (dir)
		buf_printf(out, " -C %s", dir);
	for (i = 0; i < args->n && i < 3; i++)
		buf_printf(out, " %s", args->v[i]);
	if (args->n > 3)
		buf_adds(out, " ...");
}

/* The error of a command that ran: its pipe failed (pipe: "writing to" or
 * "reading from"), or else it exited with status. -1. */
static int cmd_failed(struct err *e, const char *dir, const struct gitargv *args,
		      const char *pipe, int status)
{
	struct buf what = BUF_INIT(4096);

	cmd_describe(&what, dir, args);
	if (pipe)
		err_set(e, ERR_IO, "%s: %s its pipe failed", what.ptr, pipe);
	else
		err_set(e, ERR_IO, "%s failed (exit status %d)", what.ptr, status);
	buf_release(&what);
	return -1;
}

int gitcmd_failed(struct err *e, const char *dir, const struct gitargv *args,
		  int status)
{
	return cmd_failed(e, dir, args, NULL, status);
}

void gitcmd_chomp(struct buf *b)
{
	while (b->len && (b->ptr[b->len - 1] == '\n' || b->ptr[b->len - 1] == '\r'))
		b->ptr[--b->len] = '\0';
}

/*
 * env (NAME=value strings, NULL-terminated) over our own environment: a
 * new array of pointers (ours and env's strings, not copies), each NAME
 * of env in place of our own.
 */
static char **env_over(const char *const *env)
{
	size_t n = 0, m = 0, k = 0, i, j;
	char **v;

	while (environ[n])
		n++;
	while (env[m])
		m++;
	v = xcalloc(n + m + 1, sizeof(*v));
	for (i = 0; i < n; i++) {
		for (j = 0; j < m; j++) {
			size_t len = strcspn(env[j], "=");
			if (!strncmp(environ[i], env[j], len) &&
			    environ[i][len] == '=')
				break;
		}
		if (j == m)
			v[k++] = environ[i];
	}
	for (j = 0; j < m; j++)
		v[k++] = (char *)env[j];
	return v;
}

/*
 * The one place migrate starts a program: in_fd, out_fd and err_fd become
 * its stdin, stdout and stderr (in_fd -1: /dev/null; out_fd or err_fd -1:
 * inherited), the "NAME=value" strings of env join its environment, and
 * git runs (or, prog given, prog with args as its whole argv: man for
 * `migrate help`). Every other descriptor of ours is close-on-exec, so the
 * child holds no pipe end but its own three.
 *
 * posix_spawn, not fork: a writer or pool thread may hold the allocator's
 * lock at the moment of a fork, and a forked child that allocates before
 * its exec then waits for it forever (and we, reading its pipe, with it).
 * Everything the child needs is made here, before it exists.
 */
static int spawn_prog(pid_t *pid, const char *prog, const char *dir,
		      const struct gitargv *args, const char *const *env,
		      int in_fd, int out_fd, int err_fd, struct err *e)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t dfl;
	char **argv = xcalloc(args->n + 4, sizeof(*argv)), **envp = environ;
	int fd[3] = { in_fd, out_fd, err_fd }, own[3] = { -1, -1, -1 };
	size_t i, k = 0;
	int rc = 0, t;

	if (fd[0] < 0 &&
	    (fd[0] = own[0] = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
		free(argv);
		return err_errno(e, ERR_IO, "/dev/null");
	}
	/* a descriptor that is itself 0, 1 or 2 (we were started with one
	 * closed) is first copied above 2: no dup2 of the child then
	 * overwrites one still to be placed */
	for (i = 0; i < 3 && rc == 0; i++) {
		if (fd[i] < 0 || fd[i] > 2)
			continue;
		if ((t = fcntl(fd[i], F_DUPFD_CLOEXEC, 3)) < 0) {
			rc = err_errno(e, ERR_IO, "fcntl");
			break;
		}
		if (own[i] >= 0)
			close(own[i]);
		fd[i] = own[i] = t;
	}
	if (!prog) {
		argv[k++] = "git";
		if (dir) {
			argv[k++] = "-C";
			argv[k++] = (char *)dir;
		}
	}
	for (i = 0; i < args->n; i++)
		argv[k++] = args->v[i];
	if (env && rc == 0)
		envp = env_over(env);
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	/* ignored signals stay ignored across exec: give the child SIGPIPE's
	 * default */
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGPIPE);
	posix_spawnattr_setsigdefault(&at, &dfl);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF);
	for (i = 0; i < 3; i++)
		if (fd[i] >= 0)
			posix_spawn_file_actions_adddup2(&fa, fd[i], (int)i);
	if (rc == 0) {
		fflush(NULL);
		if ((t = posix_spawnp(pid, prog ? prog : "git", &fa, &at,
				      argv, envp)) != 0) {
			errno = t;
			rc = err_errno(e, ERR_IO, "cannot run %s",
				       prog ? prog : "git");
		}
	}
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	for (i = 0; i < 3; i++)
		if (own[i] >= 0)
			close(own[i]);
	if (envp != environ)
		free(envp);
	free(argv);
	return rc;
}

static int spawn(pid_t *pid, const char *dir, const struct gitargv *args,
		 const char *const *env, int in_fd, int out_fd, int err_fd,
		 struct err *e)
{
	return spawn_prog(pid, NULL, dir, args, env, in_fd, out_fd, err_fd, e);
}

/* `man ARGS...` to its end (quiet: its output to /dev/null); its exit
 * status, or -1 when it could not be started (no man). */
static int run_man(const struct gitargv *args, int quiet)
{
	struct err e = ERR_INIT;
	int null = -1, rc;
	pid_t p = -1;

	if (quiet && (null = open("/dev/null", O_WRONLY | O_CLOEXEC)) < 0)
		return -1;
	rc = spawn_prog(&p, "man", NULL, args, NULL, 0, null, null, &e);
	if (null >= 0)
		close(null);
	return rc < 0 ? -1 : gitcmd_wait(p, &e);
}

int gitcmd_man(const char *page)
{
	struct gitargv a = GITARGV_INIT;
	int rc;

	/* installed? (man -w finds the file, or says nothing and fails) */
	gitargv_push(&a, "man");
	gitargv_push(&a, "-w");
	gitargv_push(&a, page);
	rc = run_man(&a, 1);
	gitargv_clear(&a);
	if (rc != 0)
		return -1;
	gitargv_push(&a, "man");
	gitargv_push(&a, page);
	rc = run_man(&a, 0);
	gitargv_clear(&a);
	return rc == 0 ? 0 : -1;
}

int gitcmd_spawn(pid_t *pid, const char *dir, const struct gitargv *args,
		 int in_fd, int out_fd, struct err *e)
{
	return spawn(pid, dir, args, NULL, in_fd, out_fd, -1, e);
}

int gitcmd_spawn_env(pid_t *pid, const char *dir, const struct gitargv *args,
		     const char *const *env, int in_fd, int out_fd,
		     struct err *e)
{
	return spawn(pid, dir, args, env, in_fd, out_fd, -1, e);
}

static void close_pair(int p[2]);

int gitcmd_spawn_piped(pid_t *pid, const char *dir,
		       const struct gitargv *args, int *to, int *from,
		       int *errfd, struct err *e)
{
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, err[2] = { -1, -1 };

	/* close-on-exec: another child (another repository's reader,
	 * fast-import under migrate run) must not hold our ends open, or
	 * this child never sees the end of its input. A child that only
	 * ever writes a line or two to stderr cannot fill its pipe, and a
	 * non-blocking read of it returns what is there. */
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 ||
	    (errfd && pipe2(err, O_CLOEXEC | O_NONBLOCK) < 0)) {
		err_errno(e, ERR_IO, "pipe");
		goto fail;
	}
	if (spawn(pid, dir, args, NULL, in[0], out[1], err[1], e) < 0)
		goto fail;
	close(in[0]);
	close(out[1]);
	*to = in[1];
	*from = out[0];
	if (errfd) {
		close(err[1]);
		*errfd = err[0];
	}
	return 0;
fail:
	close_pair(in);
	close_pair(out);
	close_pair(err);
	return -1;
}

static int read_all(int fd, struct buf *out);

/*
 * Runs `git -C dir ARGS...` with no stdin, its stdout into out and its
 * stderr into msg (never the terminal), with the "NAME=value" strings of
 * env (NULL-terminated, may be NULL) added to its environment. Returns the
 * exit status as gitcmd_wait does, or -1 with e set.
 */
static int run_captured(const char *dir, const struct gitargv *args,
			const char *const *env, struct buf *out,
			struct buf *msg, struct err *e)
{
	int outp[2], errp[2], rc;
	pid_t p = -1;

	if (pipe2(outp, O_CLOEXEC) < 0)
		return err_errno(e, ERR_IO, "pipe");
	if (pipe2(errp, O_CLOEXEC) < 0) {
		close(outp[0]);
		close(outp[1]);
		return err_errno(e, ERR_IO, "pipe");
	}
	if (spawn(&p, dir, args, env, -1, outp[1], errp[1], e) < 0) {
		rc = -1;
		close(outp[1]);
		close(errp[1]);
		goto out;
	}
	close(outp[1]);
	close(errp[1]);
	/* both are a line or two: reading one after the other cannot block */
	if (read_all(outp[0], out) < 0 || read_all(errp[0], msg) < 0) {
		struct buf what = BUF_INIT(4096);
		cmd_describe(&what, dir, args);
		rc = err_errno(e, ERR_IO, "reading from %s", what.ptr);
		buf_release(&what);
		gitcmd_wait(p, e);
		goto out;
	}
	rc = gitcmd_wait(p, e);
out:
	close(outp[0]);
	close(errp[0]);
	return rc;
}

/* git's first line of msg, without its "fatal: ", as (length, start). */
static const char *first_line(const struct buf *msg, int *n)
{
	const char *why = msg->len ? msg->ptr : "";

	if (!strncmp(why, "fatal: ", 7))
		why += 7;
	*n = (int)strcspn(why, "\n");
	return why;
}

/* `git -C dir rev-parse FLAG1 [FLAG2]`'s one line, a path, in *path. */
static int rev_parse_path(const char *dir, const char *flag1,
			  const char *flag2, char **path, struct err *e)
{
	struct gitargv args = GITARGV_INIT;
	struct buf out = BUF_INIT(1 << 20), msg = BUF_INIT(1 << 20);
	const char *why;
	int rc, n;

	gitargv_push(&args, "rev-parse");
	gitargv_push(&args, flag1);
	if (flag2)
		gitargv_push(&args, flag2);
	rc = run_captured(dir, &args, NULL, &out, &msg, e);
	if (rc > 0) {
		/* git's first line inside our message */
		why = first_line(&msg, &n);
		rc = *why ? err_set(e, ERR_USAGE, "%s is not a git repository "
				    "(git: %.*s)", dir ? dir : ".", n, why)
			  : err_set(e, ERR_USAGE, "%s is not a git repository",
				    dir ? dir : ".");
	} else if (rc == 0) {
		gitcmd_chomp(&out);
		*path = buf_detach(&out, NULL);
	}
	buf_release(&out);
	buf_release(&msg);
	gitargv_clear(&args);
	return rc < 0 ? -1 : 0;
}

int gitcmd_git_dir(const char *dir, char **gitdir, struct err *e)
{
	return rev_parse_path(dir, "--absolute-git-dir", NULL, gitdir, e);
}

int gitcmd_sha1_only(const char *dir, struct err *e)
{
	struct buf fmt = BUF_INIT(4096), msg = BUF_INIT(4096);
	struct gitargv args = GITARGV_INIT;
	struct err ignored = ERR_INIT;
	int rc = 0;

	/* git's own words (not a repository) stay ours to drop */
	gitargv_push(&args, "rev-parse");
	gitargv_push(&args, "--show-object-format");
	if (run_captured(dir, &args, NULL, &fmt, &msg, &ignored) == 0) {
		gitcmd_chomp(&fmt);
		if (strcmp(fmt.ptr, "sha1"))
			rc = err_set(e, ERR_USAGE, "%s uses %s object ids; %s "
				     "repositories are not supported yet (migrate "
				     "reads and computes sha1 ids only)",
				     dir ? dir : ".", fmt.ptr, fmt.ptr);
	}
	gitargv_clear(&args);
	buf_release(&fmt);
	buf_release(&msg);
	return rc;
}

int gitcmd_common_dir(const char *dir, char **common, struct err *e)
{
	return rev_parse_path(dir, "--path-format=absolute",
			      "--git-common-dir", common, e);
}

int gitcmd_object_dir(const char *dir, char **objdir, char **format,
		      struct err *e)
{
	struct gitargv args = GITARGV_INIT;
	struct buf out = BUF_INIT(1 << 20), msg = BUF_INIT(1 << 20);
	char *nl;
	int rc;

	gitargv_push(&args, "rev-parse");
	gitargv_push(&args, "--show-object-format");
	gitargv_push(&args, "--path-format=absolute");
	gitargv_push(&args, "--git-path");
	gitargv_push(&args, "objects");
	rc = run_captured(dir, &args, NULL, &out, &msg, e);
	gitcmd_chomp(&out);
	nl = strchr(out.ptr, '\n');
	if (rc > 0 || (rc == 0 && !nl))
		rc = err_set(e, ERR_USAGE, "%s is not a git repository",
			     dir ? dir : ".");
	else if (rc == 0) {
		*format = xmemdup(out.ptr, (size_t)(nl - out.ptr));
		*objdir = xstrdup(nl + 1);
	}
	buf_release(&out);
	buf_release(&msg);
	gitargv_clear(&args);
	return rc < 0 ? -1 : 0;
}

int gitcmd_parse_date(const char *date, struct buf *raw, struct err *e)
{
	static const char who[] = "x <x> ";
	struct gitargv args = GITARGV_INIT;
	struct buf out = BUF_INIT(4096), msg = BUF_INIT(1 << 16);
	struct buf var = BUF_INIT(1 << 20);
	const char *env[4], *why;
	int rc, n;

	if (!*date)	/* git var would take it as "now" */
		return err_set(e, ERR_STREAM, "empty date");
	if (buf_printf(&var, "GIT_COMMITTER_DATE=%s", date) < 0) {
		buf_release(&var);
		return err_set(e, ERR_STREAM, "date too long");
	}
	env[0] = var.ptr;
	env[1] = "GIT_COMMITTER_NAME=x";
	env[2] = "GIT_COMMITTER_EMAIL=x";
	env[3] = NULL;
	gitargv_push(&args, "var");
	gitargv_push(&args, "GIT_COMMITTER_IDENT");
	rc = run_captured(NULL, &args, env, &out, &msg, e);
	why = first_line(&msg, &n);
	if (rc > 0 && !strncmp(why, "invalid date format", 19)) {
		rc = err_set(e, ERR_STREAM, "git cannot parse the date");
	} else if (rc > 0) {
		rc = err_set(e, ERR_IO, "git var GIT_COMMITTER_IDENT failed "
			     "(exit %d)%s%.*s", rc, n ? ": " : "", n, why);
	} else if (rc == 0) {
		gitcmd_chomp(&out);
		if (out.len <= sizeof(who) - 1 ||
		    memcmp(out.ptr, who, sizeof(who) - 1))
			rc = err_set(e, ERR_IO, "git var GIT_COMMITTER_IDENT "
				     "printed '%.*s', not an ident",
				     (int)(out.len < 200 ? out.len : 200), out.ptr);
		else
			rc = buf_set(raw, out.ptr + sizeof(who) - 1,
				     out.len - (sizeof(who) - 1)) < 0 ?
			     err_set(e, ERR_IO, "date too long") : 0;
	}
	buf_release(&out);
	buf_release(&msg);
	buf_release(&var);
	gitargv_clear(&args);
	return rc < 0 ? -1 : 0;
}

int gitcmd_wait(pid_t pid, struct err *e)
{
	int status;

	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return err_errno(e, ERR_IO, "waitpid");
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

static int read_all(int fd, struct buf *out)
{
	char chunk[8192];
	ssize_t r;

	for (;;) {
		r = read(fd, chunk, sizeof(chunk));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return (int)r;
		if (buf_add(out, chunk, (size_t)r) < 0)
			return -1;
	}
}

static void close_pair(int p[2])
{
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
	p[0] = p[1] = -1;
}

/*
 * The input is written in full before the output is read: fine for the
 * commands migrate runs (update-ref --stdin and hash-object --stdin answer
 * little or nothing), a deadlock for a command that answers much while it
 * reads much.
 */
int gitcmd_run(const char *dir, const struct gitargv *args,
	       const struct buf *in, struct buf *out, struct err *e)
{
	int ip[2] = { -1, -1 }, op[2] = { -1, -1 }, werr = 0, rerr = 0;
	pid_t pid = -1;

	if ((in && pipe2(ip, O_CLOEXEC) < 0) || (out && pipe2(op, O_CLOEXEC) < 0)) {
		close_pair(ip);
		return err_errno(e, ERR_IO, "pipe");
	}
	if (gitcmd_spawn(&pid, dir, args, ip[0], op[1], e) < 0) {
		close_pair(ip);
		close_pair(op);
		return -1;
	}
	if (ip[0] >= 0)
		close(ip[0]);
	if (op[1] >= 0)
		close(op[1]);
	if (in) {
		werr = write_full(ip[1], in->ptr, in->len);
		close(ip[1]);
	}
	if (out) {
		rerr = read_all(op[0], out);
		close(op[0]);
	}
	int status = gitcmd_wait(pid, e);
	if (status == 0 && (werr || rerr))
		return cmd_failed(e, dir, args, werr ? "writing to" : "reading from", 0);
	return status;
}

int gitcmd_ok(const char *dir, const struct gitargv *args,
	      const struct buf *in, struct buf *out, struct err *e)
{
	int status = gitcmd_run(dir, args, in, out, e);

	return status <= 0 ? status : cmd_failed(e, dir, args, NULL, status);
}

int gitcmd_vrunl(const char *dir, int check, struct buf *out, struct err *e,
		 va_list ap)
{
	struct gitargv a = GITARGV_INIT;
	const char *s;
	int rc;

	while ((s = va_arg(ap, const char *)))
		gitargv_push(&a, s);
	rc = check ? gitcmd_ok(dir, &a, NULL, out, e)
		   : gitcmd_run(dir, &a, NULL, out, e);
	gitargv_clear(&a);
	return rc;
}

int gitcmd_runl(const char *dir, int check, struct buf *out, struct err *e,
		...)
{
	va_list ap;
	int rc;

	va_start(ap, e);
	rc = gitcmd_vrunl(dir, check, out, e, ap);
	va_end(ap);
	return rc;
}

void gitcmd_vstart(struct gitcmd_job *j, const char *dir, va_list ap)
{
	const char *s;
	int p[2];

	j->pid = -1;
	j->from = -1;
	j->dir = dir ? xstrdup(dir) : NULL;
	j->args = (struct gitargv)GITARGV_INIT;
	j->err = (struct err)ERR_INIT;
	while ((s = va_arg(ap, const char *)))
		gitargv_push(&j->args, s);
	if (pipe2(p, O_CLOEXEC) < 0) {
		err_errno(&j->err, ERR_IO, "pipe");
		return;
	}
	/* as much as the system lets anyone have (pipe-max-size); a refusal
	 * only means the child may wait for us sooner */
	(void)fcntl(p[0], F_SETPIPE_SZ, 1 << 20);
	if (gitcmd_spawn(&j->pid, dir, &j->args, -1, p[1], &j->err) < 0) {
		j->pid = -1;
		close(p[0]);
	} else {
		j->from = p[0];
	}
	close(p[1]);
}

void gitcmd_start(struct gitcmd_job *j, const char *dir, ...)
{
	va_list ap;

	va_start(ap, dir);
	gitcmd_vstart(j, dir, ap);
	va_end(ap);
}

int gitcmd_collect(struct gitcmd_job *j, int check, struct buf *out,
		   struct err *e)
{
	int rerr = 0, status = -1;

	if (j->pid < 0) {
		*e = j->err;
	} else {
		rerr = read_all(j->from, out);
		close(j->from);
		status = gitcmd_wait(j->pid, e);
	}
	if (status >= 0 && (rerr || (check && status > 0)))
		status = cmd_failed(e, j->dir, &j->args,
				    rerr ? "reading from" : NULL, status);
	gitargv_clear(&j->args);
	free(j->dir);
	j->dir = NULL;
	j->pid = -1;
	j->from = -1;
	return status;
}

void gitcmd_collect_oid(struct gitcmd_job *j, struct oid *id)
{
	struct buf out = BUF_INIT(4096);
	struct err ignored = ERR_INIT;

	*id = oid_null;
	if (gitcmd_collect(j, 1, &out, &ignored) == 0) {
		gitcmd_chomp(&out);
		if (oid_from_hex(id, out.ptr, out.len) < 0)
			*id = oid_null;
	}
	buf_release(&out);
}

/* ---- refs ---- */

static int gitref_by_name(const void *a, const void *b)
{
	return strcmp(((const struct gitref *)a)->name,
		      ((const struct gitref *)b)->name);
}

/* "<id> <type> <peeled id> <peeled type> <name>": the peeled fields are
 * empty unless the ref holds a tag. */
static int gitref_parse(struct gitref *g, char *line)
{
	char *f[6];
	int i;

	f[0] = line;
	for (i = 1; i < 6; i++) {
		char *sp = strchr(f[i - 1], ' ');
		if (!sp)
			return -1;
		*sp = '\0';
		f[i] = sp + 1;
	}
	memset(g, 0, sizeof(*g));
	if (oid_from_hex(&g->id, f[0], strlen(f[0])) < 0)
		return -1;
	if (!strcmp(f[1], "commit")) {
		g->commit = g->id;
		g->has_commit = 1;
	} else if (!strcmp(f[3], "commit")) {
		if (oid_from_hex(&g->commit, f[2], strlen(f[2])) < 0)
			return -1;
		g->has_commit = 1;
	}
	g->symbolic = f[4][0] != '\0';
	g->name = xstrdup(f[5]);
	return 0;
}

static int gitrefs_parse(struct gitrefs *out, struct buf *text,
			 const char *prefix, struct err *e)
{
	size_t alloc = 16;
	char *line = text->ptr, *nl;
	int mine = prefix && !strncmp(prefix, "refs/migrate/", 13);

	out->v = xmalloc(alloc * sizeof(*out->v));
	out->n = 0;
	for (; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		if (!nl)
			break;
		*nl = '\0';
		if (out->n == alloc)
			out->v = xrealloc(out->v, (alloc *= 2) * sizeof(*out->v));
		if (gitref_parse(&out->v[out->n], line) < 0)
			return err_set(e, ERR_IO, "git for-each-ref: cannot parse "
				       "'%s'", line);
		if (!mine && !strncmp(out->v[out->n].name, "refs/migrate/", 13))
			free(out->v[out->n].name);
		else
			out->n++;
	}
	qsort(out->v, out->n, sizeof(*out->v), gitref_by_name);
	return 0;
}

void gitrefs_start(struct gitcmd_job *j, const char *dir, const char *prefix)
{
	/* prefix NULL ends the arguments there: every ref is listed */
	gitcmd_start(j, dir, "for-each-ref", "--format=%(objectname) "
		     "%(objecttype) %(*objectname) %(*objecttype) %(symref) "
		     "%(refname)", prefix, (char *)NULL);
}

int gitrefs_collect(struct gitrefs *out, struct gitcmd_job *j,
		    const char *prefix, struct err *e)
{
	struct buf text = BUF_INIT(SIZE_MAX / 2);
	int r = gitcmd_collect(j, 1, &text, e);

	out->v = NULL;
	out->n = 0;
	if (r == 0)
		r = gitrefs_parse(out, &text, prefix, e);
	buf_release(&text);
	if (r < 0)
		gitrefs_free(out);
	return r;
}

int gitrefs_list(struct gitrefs *out, const char *dir, const char *prefix,
		 struct err *e)
{
	struct gitcmd_job j;

	gitrefs_start(&j, dir, prefix);
	return gitrefs_collect(out, &j, prefix, e);
}

void gitrefs_free(struct gitrefs *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->n; i++)
		free(r->v[i].name);
	free(r->v);
	r->v = NULL;
	r->n = 0;
}

static int name_vs_gitref(const void *key, const void *elem)
{
	return strcmp(key, ((const struct gitref *)elem)->name);
}

const struct gitref *gitrefs_find(const struct gitrefs *r, const char *name)
{
	if (!r->n)
		return NULL;
	return bsearch(name, r->v, r->n, sizeof(*r->v), name_vs_gitref);
}
