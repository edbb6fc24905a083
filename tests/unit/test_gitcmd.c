/*
 * test_gitcmd.c - rewrite/git/gitcmd.c, the one place that starts a
 * process, against real git: the piped long-lived child (odb.c's
 * `git cat-file --batch-command`), also when this process has its stdin
 * closed, the git and common directories of a linked work tree, git
 * started while other threads allocate (a forked child that allocated
 * before its exec could wait forever for a lock one of them held), the
 * environment given to a child, and commands started side by side and
 * read later (gitcmd_start, gitcmd_collect).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "rewrite/git/git.h"

static char dir[] = "/tmp/migrate-test-gitcmd-XXXXXX";
static char repo[PATH_MAX], wt[PATH_MAX];

static void git_ok(const char *at, ...)
{
	struct gitargv a = GITARGV_INIT;
	struct err e = ERR_INIT;
	const char *s;
	va_list ap;

	va_start(ap, at);
	while ((s = va_arg(ap, const char *)))
		gitargv_push(&a, s);
	va_end(ap);
	if (gitcmd_ok(at, &a, NULL, NULL, &e) != 0)
		fail_msg("git %s: %s", a.v[0], e.msg);
	gitargv_clear(&a);
}

/* One question to a `cat-file --batch-command` started with
 * gitcmd_spawn_piped: the reply line for HEAD. */
static void ask_head(const char *at, char *reply, size_t n)
{
	struct gitargv a = GITARGV_INIT;
	struct err e = ERR_INIT;
	int to, from, errfd;
	pid_t pid;
	FILE *w, *r;

	gitargv_push(&a, "cat-file");
	gitargv_push(&a, "--batch-command");
	assert_int_equal(gitcmd_spawn_piped(&pid, at, &a, &to, &from, &errfd, &e), 0);
	gitargv_clear(&a);
	w = fdopen(to, "w");
	r = fdopen(from, "r");
	assert_non_null(w);
	assert_non_null(r);
	assert_true(fputs("info HEAD\n", w) >= 0 && fflush(w) == 0);
	if (!fgets(reply, (int)n, r))
		reply[0] = '\0';
	fclose(w);
	assert_int_equal(gitcmd_wait(pid, &e), 0);
	fclose(r);
	close(errfd);
}

static void test_spawn_piped(void **state)
{
	struct gitargv a = GITARGV_INIT;
	struct err e = ERR_INIT;
	char reply[256], said[256];
	int to, from, errfd, saved;
	ssize_t got;
	pid_t pid;

	(void)state;
	ask_head(repo, reply, sizeof(reply));
	assert_non_null(strstr(reply, " commit "));
	/* our stdin closed: the child's stdin pipe end is descriptor 0 */
	saved = dup(0);
	assert_true(saved > 2);
	close(0);
	ask_head(repo, reply, sizeof(reply));
	assert_int_equal(dup2(saved, 0), 0);
	close(saved);
	assert_non_null(strstr(reply, " commit "));
	/* git's stderr comes to errfd, not the terminal */
	gitargv_push(&a, "cat-file");
	gitargv_push(&a, "--batch-command");
	assert_int_equal(gitcmd_spawn_piped(&pid, dir, &a, &to, &from, &errfd, &e), 0);
	gitargv_clear(&a);
	close(to);
	assert_true(gitcmd_wait(pid, &e) > 0);
	got = read(errfd, said, sizeof(said) - 1);
	assert_true(got > 0);
	said[got] = '\0';
	assert_non_null(strstr(said, "not a git repository"));
	close(from);
	close(errfd);
}

static void test_dirs(void **state)
{
	struct err e = ERR_INIT;
	char want[PATH_MAX + 32], real[PATH_MAX], *got = NULL;

	(void)state;
	assert_non_null(realpath(repo, real));
	snprintf(want, sizeof(want), "%s/.git", real);
	assert_int_equal(gitcmd_common_dir(wt, &got, &e), 0);
	assert_string_equal(got, want);
	free(got);
	got = NULL;
	assert_int_equal(gitcmd_common_dir(repo, &got, &e), 0);
	assert_string_equal(got, want);
	free(got);
	got = NULL;
	snprintf(want, sizeof(want), "%s/.git/worktrees/wt", real);
	assert_int_equal(gitcmd_git_dir(wt, &got, &e), 0);
	assert_string_equal(got, want);
	free(got);
	got = NULL;
	/* not a repository: one message, git's reason in it */
	assert_int_equal(gitcmd_common_dir(dir, &got, &e), -1);
	assert_null(got);
	assert_int_equal(e.kind, ERR_USAGE);
	assert_non_null(strstr(e.msg, "is not a git repository (git: not a git repository"));
}

static volatile int allocating;

/* Allocates and frees in batches (so that the allocator's caches drain
 * and fill again, under its locks), small and large, until allocating
 * is 0. */
static void *allocate(void *arg)
{
	void *p[256];
	size_t n = (size_t)arg, i;

	while (allocating) {
		for (i = 0; i < 256; i++) {
			n = n * 6364136223846793005u + 1442695040888963407u;
			p[i] = malloc(i % 64 ? 16 + (n >> 33) % 4096 : 1 << 20);
		}
		for (i = 0; i < 256; i++)
			free(p[i]);
	}
	return NULL;
}

static void on_alarm(int sig)
{
	static const char msg[] = "test_gitcmd: git started beside allocating "
				  "threads never ended (a child waiting for a "
				  "lock between fork and exec?)\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(3);
	_exit(2);
}

static void test_spawn_beside_threads(void **state)
{
	pthread_t t[3];
	size_t i;

	(void)state;
	signal(SIGALRM, on_alarm);
	alarm(120);
	allocating = 1;
	for (i = 0; i < 3; i++)
		assert_int_equal(pthread_create(&t[i], NULL, allocate,
						(void *)(i + 1)), 0);
	for (i = 0; i < 300; i++) {
		struct err e = ERR_INIT;
		char *got = NULL;

		assert_int_equal(gitcmd_git_dir(repo, &got, &e), 0);
		free(got);
	}
	allocating = 0;
	for (i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	alarm(0);
}

static void test_spawn_env(void **state)
{
	static const char *const env[] = { "GIT_COMMITTER_NAME=other",
					   "GIT_COMMITTER_DATE=@1700000000 +0100",
					   NULL };
	struct gitargv a = GITARGV_INIT;
	struct err e = ERR_INIT;
	char got[256];
	int p[2];
	pid_t pid;
	ssize_t n;

	(void)state;
	gitargv_push(&a, "var");
	gitargv_push(&a, "GIT_COMMITTER_IDENT");
	assert_int_equal(pipe(p), 0);
	assert_int_equal(gitcmd_spawn_env(&pid, repo, &a, env, -1, p[1], &e), 0);
	close(p[1]);
	n = read(p[0], got, sizeof(got) - 1);
	close(p[0]);
	assert_int_equal(gitcmd_wait(pid, &e), 0);
	assert_true(n > 0);
	got[n] = '\0';
	/* NAME given: env's, in place of ours; EMAIL not given: ours */
	assert_string_equal(got, "other <t@example.org> 1700000000 +0100\n");
	assert_string_equal(getenv("GIT_COMMITTER_NAME"), "t");
	assert_null(getenv("GIT_COMMITTER_DATE"));
	gitargv_clear(&a);
}

/* Several commands started, then read in another order: each gets its
 * whole output, also one larger than the roomiest pipe holds (6,000 refs
 * listed with their id eight times: 2.1 MB), and its own status; a
 * command that could not be started says so when it is collected. */
static void test_started_side_by_side(void **state)
{
	struct buf in = BUF_INIT(SIZE_MAX / 2), out = BUF_INIT(SIZE_MAX / 2);
	struct buf head = BUF_INIT(4096);
	struct gitcmd_job list, refs, bad, failing, none;
	struct gitrefs listed = GITREFS_INIT, one = GITREFS_INIT;
	struct gitargv a = GITARGV_INIT;
	struct err e = ERR_INIT;
	char *path;
	size_t i, lines = 0;

	(void)state;
	assert_int_equal(gitcmd_runl(repo, 1, &head, &e, "rev-parse", "HEAD",
				     (char *)NULL), 0);
	gitcmd_chomp(&head);
	for (i = 0; i < 6000; i++)
		buf_printf(&in, "create refs/tags/many/t%05zu %s\n", i, head.ptr);
	gitargv_push(&a, "update-ref");
	gitargv_push(&a, "--stdin");
	assert_int_equal(gitcmd_ok(repo, &a, &in, NULL, &e), 0);
	gitargv_clear(&a);

	gitcmd_start(&list, repo, "for-each-ref", "--format=%(refname)"
		     " %(objectname) %(objectname) %(objectname) %(objectname)"
		     " %(objectname) %(objectname) %(objectname) %(objectname)",
		     "refs/tags/many/", (char *)NULL);
	gitrefs_start(&refs, repo, "refs/tags/many/");
	gitcmd_start(&failing, repo, "rev-parse", "-q", "--verify", "nothere",
		     (char *)NULL);
	gitcmd_start(&bad, repo, "rev-parse", "-q", "--verify", "nothere",
		     (char *)NULL);
	path = strdup(getenv("PATH"));
	setenv("PATH", "/nonexistent", 1);
	gitcmd_start(&none, repo, "version", (char *)NULL);
	setenv("PATH", path, 1);
	free(path);

	/* the last started first */
	assert_int_equal(gitcmd_collect(&none, 0, &out, &e), -1);
	assert_non_null(strstr(e.msg, "cannot run git"));
	e = (struct err)ERR_INIT;
	assert_int_equal(gitcmd_collect(&bad, 1, &out, &e), -1);
	assert_non_null(strstr(e.msg, "rev-parse"));
	assert_non_null(strstr(e.msg, "exit status 1"));
	e = (struct err)ERR_INIT;
	assert_int_equal(gitcmd_collect(&failing, 0, &out, &e), 1);
	assert_int_equal(out.len, 0);
	assert_int_equal(gitrefs_collect(&listed, &refs, "refs/tags/many/", &e), 0);
	assert_int_equal(listed.n, 6000);
	assert_int_equal(gitcmd_collect(&list, 1, &out, &e), 0);
	assert_true(out.len > 2 << 20);
	for (i = 0; i < out.len; i++)
		lines += out.ptr[i] == '\n';
	assert_int_equal(lines, 6000);
	assert_non_null(strstr(out.ptr, "refs/tags/many/t05999 "));
	/* as the listing in one step finds them */
	assert_int_equal(gitrefs_list(&one, repo, "refs/tags/many/", &e), 0);
	assert_int_equal(one.n, listed.n);
	for (i = 0; i < one.n; i++) {
		assert_string_equal(one.v[i].name, listed.v[i].name);
		assert_memory_equal(one.v[i].id.hash, listed.v[i].id.hash, OID_RAW);
	}
	gitrefs_free(&one);
	gitrefs_free(&listed);
	buf_release(&in);
	buf_release(&out);
	buf_release(&head);
}

static int setup(void **state)
{
	static char global[sizeof(dir) + 16];
	FILE *f;

	(void)state;
	/* neither the user's configuration nor a repository around /tmp; the
	 * global file is an empty one of our own, never /dev/null, which a
	 * "git config --global" run as root would replace by renaming its lock
	 * file over it */
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("GIT_CEILING_DIRECTORIES", "/tmp", 1);
	setenv("GIT_AUTHOR_NAME", "t", 1);
	setenv("GIT_AUTHOR_EMAIL", "t@example.org", 1);
	setenv("GIT_COMMITTER_NAME", "t", 1);
	setenv("GIT_COMMITTER_EMAIL", "t@example.org", 1);
	if (!mkdtemp(dir))
		return -1;
	snprintf(global, sizeof(global), "%s/gitconfig", dir);
	if (!(f = fopen(global, "w")) || fclose(f))
		return -1;
	setenv("GIT_CONFIG_GLOBAL", global, 1);
	snprintf(repo, sizeof(repo), "%s/repo", dir);
	snprintf(wt, sizeof(wt), "%s/wt", dir);
	git_ok(NULL, "init", "-q", repo, (char *)NULL);
	git_ok(repo, "commit", "-q", "--allow-empty", "-m", "one", (char *)NULL);
	git_ok(repo, "worktree", "add", "-q", "--detach", wt, (char *)NULL);
	return 0;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spawn_piped),
		cmocka_unit_test(test_dirs),
		cmocka_unit_test(test_spawn_beside_threads),
		cmocka_unit_test(test_spawn_env),
		cmocka_unit_test(test_started_side_by_side),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
