/*
 * statefiles.c - the state files a run leaves (the map in its layouts, tips, rules, the map from a previous conversion) and the refusal of other rules than the last run's.
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

/* The map in the layout --commit-map-format asked for, beside the
 * filter-repo one the state keeps (re-runs load that one). */
static int write_map_format(struct run *r, const char *map_path,
			    struct err *e)
{
	const char *name;
	enum cmap_format fmt;
	struct cmap *m;
	struct buf out = BUF_INIT(SIZE_MAX / 2);
	int rc;

	if (!r->o.f.commit_map_format || cmap_format_parse(r->o.f.commit_map_format, &fmt) < 0 ||
	    fmt == CMAP_FILTER_REPO)
		return 0;
	m = cmap_new();
	name = fmt == CMAP_LFS ? "commit-map.lfs" : "commit-map.bfg";
	rc = cmap_load(m, map_path, e);
	if (rc == 0)
		rc = cmap_format(m, fmt, &out) < 0
			? err_set(e, ERR_IO, "%s/%s: too large", r->state, name) : 0;
	if (rc == 0)
		rc = run_state_put(r, name, &out, e);
	buf_release(&out);
	cmap_free(m);
	return rc;
}

/* tips: the source commits processed so far ("<id> <ref>"), which the
 * next run excludes: the refs this run exported (those the import set),
 * as they were (--to) or as they will be once the journal is finished
 * (in place, where the next run's source is the new history), and the
 * tips of earlier runs. A ref the revisions left out (--include-ref,
 * REV-ARGS) is no tip: its commits were not converted, and a later run
 * that names it converts them. */
static int write_tips(struct run *r, const struct gitrefs *side,
		      struct err *e)
{
	const struct gitrefs *refs = r->o.in_place ? &r->dst_before : &r->src_before;
	struct buf out = BUF_INIT(SIZE_MAX / 2);
	char hex[OID_HEX + 1];
	struct oid *old = NULL;
	size_t n = 0, i;
	/* a restart's tips are its own: the old conversion's are not ours */
	int rc = r->o.restart ? 0 : run_tips_load(&old, &n, r->state, e);

	for (i = 0; rc == 0 && i < refs->n; i++) {
		const struct gitref *g = &refs->v[i];
		if (r->o.in_place || !gitrefs_find(side, g->name))
			continue;	/* its new value comes below; not exported */
		if (g->has_commit)
			buf_printf(&out, "%s %s\n", oid_hex(&g->commit, hex), g->name);
	}
	for (i = 0; rc == 0 && r->o.in_place && i < side->n; i++)
		if (side->v[i].has_commit)
			buf_printf(&out, "%s %s\n", oid_hex(&side->v[i].commit, hex),
				   side->v[i].name);
	for (i = 0; rc == 0 && i < n; i++)
		buf_printf(&out, "%s (an earlier run)\n", oid_hex(&old[i], hex));
	if (rc == 0)
		rc = run_state_put(r, "tips", &out, e);
	free(old);
	buf_release(&out);
	return rc;
}

/* Appends "\n# <what>\n" and the bytes of the file at path: 1, or 0 when
 * it cannot be read. */
static int add_file(struct buf *out, const char *what, const char *path)
{
	struct err ignored = ERR_INIT;

	buf_printf(out, "\n# %s\n", what);
	return file_read(path, out, &ignored) > 0;
}

/* What starts the expression files in the kept rules, even when there
 * are none: a state without it is from before they were kept. */
#define EXPRESSIONS_MARK "\n# expression files (replace-text=FILE, --replace-message)\n"

/* The expression files of the rules' replace-text actions and of
 * --replace-message, each after a comment line (a re-run with other
 * expressions would leave the old commits with the old ones): 1, or 0. */
static int expressions_text(const struct run *r, struct buf *out)
{
	struct buf path = BUF_INIT(PATH_MAX), what = BUF_INIT(PATH_MAX + 16);
	const struct rules *rules = r->rules;	/* the run's (run_setup) */
	size_t i;
	int ok = 1;

	buf_adds(out, EXPRESSIONS_MARK);
	for (i = 0; rules && ok && i < rules_count(rules); i++) {
		const struct rule *rule = rules_get(rules, i);

		if (!rules_option_path(rule, "replace-text", &path))
			continue;
		buf_reset(&what);
		buf_printf(&what, "replace-text=%s",
			   rules_rule_option(rule, "replace-text", NULL));
		ok = add_file(out, what.ptr, path.ptr);
	}
	if (ok && r->o.f.replace_message)
		ok = add_file(out, "--replace-message", r->o.f.replace_message);
	buf_release(&path);
	buf_release(&what);
	return ok;
}

/* The bytes of the rule file ("" without one), then those of the
 * --strip-blobs-with-ids file after a comment line when one is given
 * (the ids dropped are part of the conversion too), a line when
 * --no-prune-empty is given, then, with exprs,
 * the expression files: 1, or 0 when one cannot be read (the filter says
 * why). */
static int rules_text(const struct run *r, struct buf *out, int exprs)
{
	struct err ignored = ERR_INIT;

	if (r->o.f.rules && file_read(r->o.f.rules, out, &ignored) <= 0)
		return 0;
	if (r->o.f.strip_blobs_with_ids &&
	    !add_file(out, "--strip-blobs-with-ids", r->o.f.strip_blobs_with_ids))
		return 0;
	/* commits kept empty or pruned: part of the conversion too */
	if (r->o.f.no_prune_empty)
		buf_adds(out, "\n# --no-prune-empty\n");
	/* the rules of the peers' options (--include, --path, ...), as
	 * rules_add_peer wrote them: a run with other options converts
	 * otherwise */
	if (r->rules_peer.len) {
		buf_adds(out, "\n# the options' rules\n");
		buf_add(out, r->rules_peer.ptr, r->rules_peer.len);
	}
	return !exprs || expressions_text(r, out);
}

static int same_text(const struct buf *a, const struct buf *b)
{
	return a->len == b->len && !memcmp(a->ptr, b->ptr, a->len);
}

/*
 * A run goes on with the conversion the first one started: new commits
 * are converted with the rules the old ones were, or the history would
 * mix two conversions. The rules of the last run are kept in the state;
 * other rules are refused, saying what to do instead.
 */
int run_check_rules(const struct run *r, struct err *e)
{
	struct buf before = BUF_INIT(SIZE_MAX / 2), now = BUF_INIT(SIZE_MAX / 2);
	struct buf old = BUF_INIT(SIZE_MAX / 2);
	char *path = path_join(r->state, "rules");
	int rc = file_read(path, &before, e);

	/* a state from before the expression files were kept holds the
	 * rules alone; its next run keeps them */
	if (rc > 0 && rules_text(r, &now, 1) && !same_text(&before, &now) &&
	    (memmem(before.ptr, before.len, EXPRESSIONS_MARK,
		    sizeof(EXPRESSIONS_MARK) - 1) || !rules_text(r, &old, 0) ||
	     !same_text(&before, &old)))
		rc = err_set(e, ERR_USAGE, "the rules are not those of the "
			     "last run (kept in %s): a run goes on with the "
			     "conversion the first one started and cannot "
			     "change it; to convert with other rules, start "
			     "again from the original history into a fresh "
			     "--to directory%s%s%s", path,
			     r->o.in_place ? " (rewritten in place, that "
			     "history is under refs/migrate/original/: "
			     "--restart converts it again in place, and " : "",
			     r->o.in_place ? r->state : "",
			     r->o.in_place ? "/RESET.md gives the commands that "
			     "copy it out)" : "");
	free(path);
	buf_release(&before);
	buf_release(&now);
	buf_release(&old);
	return rc < 0 ? -1 : 0;
}

struct compose {
	const struct cmap *now;
	struct cmap *out;
};

static int compose_one(void *ctx, const struct oid *orig, const struct oid *was)
{
	struct compose *c = ctx;
	const struct oid *now = cmap_get(c->now, orig);

	if (now)
		cmap_put(c->out, was, now);
	return 0;
}

/* --restart: commit-map.from-previous, the commits of the conversion this
 * one replaced (before-restart/commit-map: original -> was) mapped to
 * this one's (original -> now), for the clones of that conversion. */
static int write_from_previous(struct run *r, const struct state_files *f,
			       struct err *e)
{
	struct cmap *was = cmap_new(), *now = cmap_new(), *out = cmap_new();
	struct buf text = BUF_INIT(SIZE_MAX / 2);
	char *prev = path_join(r->before_restart, "commit-map");
	struct compose c = { now, out };
	int rc = cmap_load(was, prev, e);

	if (rc == 0)
		rc = cmap_load(now, f->map, e);
	if (rc == 0) {
		cmap_each_from(was, 0, compose_one, &c);
		rc = cmap_format(out, CMAP_FILTER_REPO, &text);
	}
	if (rc == 0)
		rc = run_state_put(r, "commit-map.from-previous", &text, e);
	cmap_free(was);
	cmap_free(now);
	cmap_free(out);
	buf_release(&text);
	free(prev);
	return rc < 0 ? -1 : 0;
}

int run_write_state_first(struct run *r, struct err *e)
{
	struct buf rules = BUF_INIT(SIZE_MAX / 2);
	char line[64];
	int rc;

	snprintf(line, sizeof(line), "map-entries-before %zu\n", r->map_before);
	if (run_write_small(r->state, "last-run.new", line, e) < 0)
		return -1;
	journal_add_file(&r->j, "last-run");
	/* the rules this conversion is made with (check_rules), as they
	 * are when it starts: an edit of the rule file during the run is
	 * not what converted it */
	if (!rules_text(r, &rules, 1)) {
		buf_release(&rules);
		return err_set(e, ERR_IO, "%s: cannot read the rules (or a file they name) again",
			       r->o.f.rules ? r->o.f.rules :
			       r->o.f.strip_blobs_with_ids ?
			       r->o.f.strip_blobs_with_ids : "(options)");
	}
	rc = run_state_put(r, "rules", &rules, e);
	buf_release(&rules);
	return rc < 0 ? -1 : 0;
}

int run_write_state(struct run *r, const struct state_files *f,
		    const struct gitrefs *side, struct err *e)
{
	if (write_map_format(r, f->map, e) < 0 || write_tips(r, side, e) < 0)
		return -1;
	return r->o.restart ? write_from_previous(r, f, e) : 0;
}

/* The entry count of the map at path (0 if it does not exist yet). */
int run_map_entries(size_t *n, const char *path, struct err *e)
{
	struct cmap *m = cmap_new();
	int r = cmap_load(m, path, e);

	*n = cmap_count(m);
	cmap_free(m);
	return r;
}

/* Copies the state's map to the run's working copy (the filter loads and
 * extends it; it replaces the state's only after the check). */
int run_map_prepare(struct run *r, const struct state_files *fin,
		    const struct state_files *fnew, struct err *e)
{
	struct buf text = BUF_INIT(SIZE_MAX / 2);
	int rc = r->o.restart ? 0 : file_read(fin->map, &text, e);

	if (rc > 0)
		rc = file_write(fnew->map, &text, e);
	else if (rc == 0)
		unlink(fnew->map);
	buf_release(&text);
	if (rc < 0)
		return -1;
	return run_map_entries(&r->map_before, fnew->map, e);
}
