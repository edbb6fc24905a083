/*
 * test_gitcmd.c - rewrite/git/gitcmd.c, the one place that starts a
 * process, against real git: the piped long-lived child (odb.c's
 * `git cat-file --batch-command`), also when this process has its stdin
 * closed, and the git and common directories of a linked work tree.
 */
#include <errno.h>
#include <limits.h>
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
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
