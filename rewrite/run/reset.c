/*
 * reset.c - RESET.md: what the clones of the old history do.
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

/* 1 if the LFS store holds anything (RESET.md then says git lfs pull). */
static int store_used(const struct run *r)
{
	return run_dir_has_entries(r->store) > 0;
}

static void reset_refs_table(struct buf *out, const struct buf *refmap)
{
	const char *line, *nl;
	struct refmap_line l;
	char h1[OID_HEX + 1], h2[OID_HEX + 1];

	buf_adds(out, "| ref | old | new |\n|---|---|---|\n");
	for (line = refmap->ptr; (nl = strchr(line, '\n')); line = nl + 1) {
		if (refmap_line_parse(line, (size_t)(nl - line), &l) < 0)
			continue;
		buf_printf(out, "| `%.*s` |", (int)l.ref_len, l.ref);
		if (oid_is_null(&l.old))
			buf_adds(out, " (none) |");
		else
			buf_printf(out, " `%s` |", oid_hex(&l.old, h1));
		if (oid_is_null(&l.new))
			buf_adds(out, " (deleted) |\n");
		else
			buf_printf(out, " `%s` |\n", oid_hex(&l.new, h2));
	}
}

static void reset_branch_commands(struct buf *out, const struct buf *refmap)
{
	const char *line, *nl;
	struct refmap_line l;
	size_t n = 0;

	for (line = refmap->ptr; (nl = strchr(line, '\n')); line = nl + 1) {
		if (refmap_line_parse(line, (size_t)(nl - line), &l) < 0 ||
		    l.ref_len < 11 || strncmp(l.ref, "refs/heads/", 11) ||
		    oid_is_null(&l.new))
			continue;
		buf_printf(out, "    git checkout %.*s && git reset --hard origin/%.*s\n",
			   (int)(l.ref_len - 11), l.ref + 11, (int)(l.ref_len - 11),
			   l.ref + 11);
		n++;
	}
	if (!n)
		buf_adds(out, "    # (this run set no branch)\n");
}

/* Appends s to out as one shell word (in single quotes). */
static void shell_word(struct buf *out, const char *s)
{
	buf_addch(out, '\'');
	for (; *s; s++)
		if (*s == '\'')
			buf_adds(out, "'\\''");
		else
			buf_addch(out, *s);
	buf_addch(out, '\'');
}

/* In place: how to convert again with other rules, from a copy of the
 * history as it was before the first run. */
static void reset_restart(struct buf *out, const struct run *r)
{
	buf_adds(out, "\n## Converting again with other rules\n\n"
		 "Later runs go on with these rules (other rules are refused). "
		 "To convert again\nin place with other rules, from the history "
		 "as it was before the first run\n(refs/migrate/original/ keeps "
		 "it; the commit map of this conversion is kept in\n"
		 "before-restart/):\n\n"
		 "    migrate run --in-place --restart --rules OTHER.rules\n\n"
		 "Or into a new repository, from a copy of that history (a ref "
		 "made after the\nfirst run is kept there by the next run as it "
		 "was then, with rewritten\ncommits: delete such refs from "
		 "ORIG):\n\n"
		 "    git clone --mirror ");
	shell_word(out, r->dst);
	buf_adds(out, " ORIG\n"
		 "    git -C ORIG for-each-ref --format='delete %(refname)' "
		 "refs/heads/ refs/tags/ | git -C ORIG update-ref --stdin\n"
		 "    git -C ORIG for-each-ref --format='create "
		 "%(refname:lstrip=3) %(objectname)' refs/migrate/original/ | "
		 "git -C ORIG update-ref --stdin\n"
		 "    migrate run --rules OTHER.rules --repo ORIG --to NEWDIR\n");
}

void run_reset_text(struct buf *out, const struct run *r,
		    const struct state_files *f, const struct buf *refmap)
{
	int lfs = store_used(r);

	buf_printf(out, "# Moving a clone to the rewritten history\n\n"
		   "`migrate run` rewrote the history of %s into %s. The commits "
		   "it rewrote have new ids; the old -> new id of every commit is "
		   "in\n`%s`: publish that file for collaborators with unpushed "
		   "work.\n\n", r->src_gitdir, r->dst_gitdir, f->map);
	buf_adds(out, "## Refs, old -> new (this run)\n\n");
	reset_refs_table(out, refmap);
	buf_adds(out, "\n## A clone without local work\n\n"
		 "Everything local is replaced by the new history:\n\n"
		 "    git fetch --all --prune\n");
	reset_branch_commands(out, refmap);
	buf_adds(out, "    git fetch --tags --force\n");
	if (lfs)
		buf_adds(out, "    git lfs pull\n");
	if (r->annex)
		buf_adds(out, "    git annex init && git annex get .\n");
	buf_adds(out, "\n## A clone with unpushed branches\n\n"
		 "Fetch the new history, then move each local branch onto it: "
		 "a branch based on\nold commits is rebased onto their new "
		 "counterparts; one that does not rebase\ncleanly is left as it "
		 "was, and named.\n\n    git fetch --all --prune\n"
		 "    migrate remap --commit-map /path/to/commit-map\n"
		 "    git fetch --tags --force\n");
	if (lfs)
		buf_adds(out, "    git lfs pull\n");
	if (r->annex)
		buf_adds(out, "    git annex init && git annex get .\n");
	if (r->o.restart)
		buf_printf(out, "\n## Clones of the conversion this one "
			   "replaced (--restart)\n\nThat conversion's state is "
			   "in `%s`. Its commits map to this\nconversion's in "
			   "`%s/commit-map.from-previous`: a clone made from it "
			   "moves over\nas above, with that map:\n\n"
			   "    git fetch --all --prune\n"
			   "    migrate remap --commit-map /path/to/commit-map."
			   "from-previous\n    git fetch --tags --force\n",
			   r->before_restart, r->state);
	else
		buf_adds(out, "\nA clone made from the result of an earlier run "
			 "only needs `git pull`:\na re-run keeps the ids of "
			 "everything migrated before.\n");
	if (r->annex)
		buf_printf(out, "\n## git-annex\n\nThe files the annex rules "
			   "name are git-annex files; their content is in\n"
			   "`%s`, and the git-annex branch says so (repository "
			   "UUID %s).\nA clone gets it with `git annex get` "
			   "from here. To move the content out of\nthe "
			   "repository, to a directory special remote (any "
			   "other remote works the same):\n\n"
			   "    git annex initremote store type=directory "
			   "directory=/path/to/store encryption=none\n"
			   "    git annex move --all --to store\n\n"
			   "and back, in any clone: `git annex enableremote store "
			   "directory=/path/to/store` then `git annex get .`\n",
			   r->annex_dir,
			   r->annex_uuid);
	if (r->o.in_place) {
		buf_adds(out, "\n## Publishing (rewritten in place)\n\n"
			 "    migrate push --dry-run     # what would go\n"
			 "    migrate push               # or: migrate push REMOTE\n\n"
			 "It uploads the LFS objects of the new history, then "
			 "moves the remote's branches\nand tags the run rewrote "
			 "(--force-with-lease on their old values: a push made\n"
			 "since is refused, not overwritten). A plain `git push "
			 "--force` uploads no LFS\nobject: git-lfs believes the "
			 "server has them, since the run rewrote\n"
			 "refs/remotes/origin/*. The refs as they were before are "
			 "under\nrefs/migrate/original/; `migrate run --in-place "
			 "--undo` takes the run back\nbefore it is published.\n");
		buf_adds(out, "\n## Reclaiming the space\n\n"
			 "The old history stays in the repository as long as "
			 "refs/migrate/original/ and\nthe reflogs name it. Once "
			 "the new one is published and checked, drop them and\n"
			 "let git collect what only they kept (this cannot be "
			 "undone; the state in\n.git/migrate stays, so later "
			 "runs and --verify-only still work):\n\n"
			 "    git for-each-ref --format='delete %(refname)' "
			 "refs/migrate/original/ | git update-ref --stdin\n"
			 "    git reflog expire --expire=now --all\n"
			 "    git gc --prune=now --aggressive\n");
		reset_restart(out, r);
	} else {
		buf_adds(out, "\n## Packed already\n\n"
			 "The new repository holds every object it needs in one "
			 "pack (`git repack -a -d`,\nreusing the source's deltas) "
			 "and does not depend on the source: it needs no\n"
			 "`git gc` before it is published.\n");
	}
}

int run_write_reset(struct run *r, const struct state_files *fin,
		    const struct state_files *fnew, struct err *e)
{
	struct buf refmap = BUF_INIT(SIZE_MAX / 2), out = BUF_INIT(SIZE_MAX / 2);
	int rc = file_read(fnew->refmap, &refmap, e);

	if (rc >= 0) {
		run_reset_text(&out, r, fin, &refmap);
		rc = run_state_put(r, "RESET.md", &out, e);
	}
	buf_release(&refmap);
	buf_release(&out);
	return rc < 0 ? -1 : 0;
}
