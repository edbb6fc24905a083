/*
 * annexsetup.c - what `git annex init` would set up in the repository written.
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

/* Whether a rule converts to git-annex (the lfs glob rules' lines kept
 * for info/attributes), and the target's UUID: its annex.uuid, or a new
 * one. Notes, on the way, whether a rule is unlfs. */
int run_annex_prepare(struct run *r, struct err *e)
{
	struct err ignored = ERR_INIT;
	const struct rules *rules = r->rules;	/* the run's (run_setup) */
	char *uuid = NULL;
	size_t i;
	int rc;

	buf_init(&r->lfs_lines, SIZE_MAX / 2);
	for (i = 0; rules && i < rules_count(rules); i++) {
		const struct rule *rule = rules_get(rules, i);
		if (rules_rule_action(rule) == RULES_ANNEX)
			r->annex = 1;
		if (rules_rule_action(rule) == RULES_UNLFS)
			r->unlfs = 1;
		if (rules_rule_action(rule) == RULES_LFS)
			r->lfs = 1;
		if (rules_rule_action(rule) == RULES_LFS &&
		    !rules_rule_is_regex(rule) && !rules_rule_size(rule, NULL, NULL))
			(void)rules_rule_attr_line(&r->lfs_lines, rule,
						   "filter=lfs diff=lfs merge=lfs -text",
						   &ignored);
	}
	if (!r->annex)
		return 0;
	r->annex_dir = path_join(r->commondir, "annex");
	rc = run_git_line(&uuid, r->dst, &ignored, "config", "--get", "annex.uuid",
		      (char *)NULL);
	if (rc == 0 && annex_uuid_valid(uuid))
		snprintf(r->annex_uuid, sizeof(r->annex_uuid), "%s", uuid);
	else if (rc == 0)
		rc = err_set(e, ERR_USAGE, "%s: annex.uuid '%s' is not a UUID "
			     "as git annex init makes them", r->dst, uuid);
	else
		rc = annex_uuid_new(r->annex_uuid, e);
	free(uuid);
	return rc;
}

/* 1 when text has the line of n bytes (its LF not counted). */
static int has_line(const struct buf *text, const char *line, size_t n)
{
	const char *p = text->ptr, *end = text->ptr + text->len, *nl;

	for (; p && p < end; p = nl ? nl + 1 : NULL) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if ((size_t)((nl ? nl : end) - p) == n && !memcmp(p, line, n))
			return 1;
	}
	return 0;
}

/* The hooks `git annex init` installs (a hook already there is left
 * alone, as git-annex leaves it): after a checkout or merge, unlocked
 * files whose content git-annex could not give at once get it. A bare
 * repository gets post-receive only. */
static int annex_hooks(const struct run *r, struct err *e)
{
	static const char *const hooks[][2] = {
		{ "post-receive", "if git annex post-receive --help >/dev/null 2>&1; "
				  "then git annex post-receive; fi" },
		{ "post-checkout", "git annex smudge --update" },
		{ "post-merge", "git annex smudge --update" },
		{ "pre-commit", "git annex pre-commit ." },
	};
	struct buf text = BUF_INIT(BUF_MAX_DEFAULT);
	char *dir = path_join(r->commondir, "hooks"), *path;
	size_t i;
	int rc = 0;

	if (mkdir(dir, 0777) < 0 && errno != EEXIST)
		rc = err_errno(e, ERR_IO, "%s: cannot create", dir);
	for (i = 0; rc == 0 && i < (r->bare ? 1 : 4); i++) {
		path = path_join(dir, hooks[i][0]);
		buf_reset(&text);
		buf_printf(&text, "#!/bin/sh\n# automatically configured by "
			   "git-annex\n%s\n", hooks[i][1]);
		if (!file_exists(path) && (rc = file_write(path, &text, e)) == 0 &&
		    chmod(path, 0755) < 0)
			rc = err_errno(e, ERR_IO, "%s: cannot make it executable", path);
		free(path);
	}
	free(dir);
	buf_release(&text);
	return rc;
}

/* The config, info/attributes and hooks `git annex init` writes
 * (annex.uuid, annex.version 10, the annex filter, `* filter=annex`), the
 * lfs glob lines after it when lfs rules are mixed in. */
int run_annex_setup(struct run *r, struct err *e)
{
	static const char *const cfg[][2] = {
		{ "annex.version", "10" },
		{ "filter.annex.smudge", "git-annex smudge -- %f" },
		{ "filter.annex.clean", "git-annex smudge --clean -- %f" },
		{ "filter.annex.process", "git-annex filter-process" },
	};
	struct buf text = BUF_INIT(SIZE_MAX / 2), add = BUF_INIT(SIZE_MAX / 2);
	char *info = path_join(r->commondir, "info"), *attrs;
	const char *line, *nl;
	size_t i;
	int rc;

	if (!r->annex) {
		free(info);
		return 0;
	}
	attrs = path_join(info, "attributes");
	rc = gitcmd_runl(r->dst, 1, NULL, e, "config", "annex.uuid",
			 r->annex_uuid, (char *)NULL);
	for (i = 0; rc == 0 && i < sizeof(cfg) / sizeof(cfg[0]); i++)
		rc = gitcmd_runl(r->dst, 1, NULL, e, "config", cfg[i][0],
				 cfg[i][1], (char *)NULL);
	if (rc == 0 && mkdir(info, 0777) < 0 && errno != EEXIST)
		rc = err_errno(e, ERR_IO, "%s: cannot create", info);
	if (rc == 0 && file_read(attrs, &text, e) < 0)
		rc = -1;
	buf_adds(&add, "* filter=annex\n");
	buf_add(&add, r->lfs_lines.ptr, r->lfs_lines.len);
	for (line = add.ptr; rc == 0 && (nl = strchr(line, '\n')); line = nl + 1) {
		size_t n = (size_t)(nl - line) + 1;
		if (has_line(&text, line, n - 1))
			continue;
		if (text.len && text.ptr[text.len - 1] != '\n')
			buf_addch(&text, '\n');
		buf_add(&text, line, n);
	}
	if (rc == 0)
		rc = file_write(attrs, &text, e);
	if (rc == 0)
		rc = annex_hooks(r, e);
	free(info);
	free(attrs);
	buf_release(&text);
	buf_release(&add);
	return rc;
}

/*
 * git-annex, a work tree reset by the run: git-annex's smudge filter could
 * not record in the index (git held its lock) that the files' content is
 * there, so `git status` would show them modified and the next run would
 * refuse the work tree; `git annex restage` records it. The refs have
 * moved by now: a failure is a warning.
 */
void run_annex_restage(const struct run *r)
{
	struct err e = ERR_INIT;
	int i, clean = 0, filled;

	if (!r->annex || r->bare || !r->j.worktree)
		return;
	/* the smudge filter gives git the pointers and records which files
	 * to fill; `git reset` runs no post-checkout hook, so fill them now
	 * (git-annex smudge --update, what that hook runs), then record in
	 * the index that their content is what it was; a hook of git-annex
	 * may still be at it: try again, a little later each time, until
	 * git status is clean */
	filled = gitcmd_runl(r->dst, 1, NULL, &e, "annex", "smudge", "--update",
			     "--quiet", (char *)NULL) == 0;
	for (i = 0; filled && i < 12 && clean != 1; i++) {
		if (i)
			usleep(25000u << (i < 6 ? i : 6));
		if (gitcmd_runl(r->dst, 1, NULL, &e, "annex", "restage", "--quiet",
				(char *)NULL) < 0)
			break;
		clean = run_worktree_clean(r->dst, &e);
	}
	if (clean != 1)
		fprintf(stderr, "migrate run: warning: %s; `git status` may "
			"show git-annex files as modified until `git annex "
			"restage` runs\n", e.msg[0] ? e.msg :
			"git annex restage left the work tree unclean");
}
