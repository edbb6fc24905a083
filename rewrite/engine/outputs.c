/* outputs.c - the commit map, ref map and marks files, written atomically. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../rules/rules.h"
#include "state.h"

/* ---- the files left behind ---- */

struct ref_line {
	char *name;
	struct oid old, new;
	UT_hash_handle hh;
};

static void ref_put(struct ref_line **all, const char *name,
		    const struct oid *old, const struct oid *new)
{
	struct ref_line *r;

	HASH_FIND_STR(*all, name, r);
	if (!r) {
		r = xcalloc(1, sizeof(*r));
		r->name = xstrdup(name);
		HASH_ADD_KEYPTR(hh, *all, r->name, strlen(r->name), r);
	}
	r->old = *old;
	r->new = *new;
}

static int ref_by_name(struct ref_line *a, struct ref_line *b)
{
	return strcmp(a->name, b->name);
}

/* Refs as fast-import leaves them: branches, then tags over them. */
static void format_ref_map(struct rw *rw, struct buf *out, uint64_t *nrefs,
			   uint64_t *nchanged)
{
	struct ref_line *all = NULL, *r, *tmp;
	struct branch *b, *bt;
	struct tag_ent *t;
	struct buf name = BUF_INIT(BUF_MAX_DEFAULT);

	HASH_ITER(hh, rw->branches, b, bt)
		/* a branch whose every commit was pruned is deleted: 40
		 * zeros, as git filter-repo's ref-map says */
		if (!oid_is_null(&b->tip) || (b->pruned_away && b->has_tip_orig))
			ref_put(&all, b->name, b->has_tip_orig ? &b->tip_orig : &oid_null,
				&b->tip);
	for (t = rw->tags; t; t = t->next) {
		buf_reset(&name);
		buf_printf(&name, "refs/tags/%s", t->name);
		ref_put(&all, name.ptr, t->has_orig ? &t->orig : &oid_null, &t->oid);
	}
	HASH_SORT(all, ref_by_name);
	*nrefs = *nchanged = 0;
	HASH_ITER(hh, all, r, tmp) {
		refmap_line_format(out, &r->old, &r->new, r->name);
		(*nrefs)++;
		*nchanged += !oid_eq(&r->old, &r->new);
		HASH_DEL(all, r);
		free(r->name);
		free(r);
	}
	buf_release(&name);
}

static int mark_by_num(struct mark_ent *a, struct mark_ent *b)
{
	return a->mark < b->mark ? -1 : a->mark > b->mark;
}

static void format_marks(struct rw *rw, struct buf *out)
{
	struct mark_ent *m, *tmp;

	HASH_SORT(rw->marks, mark_by_num);
	HASH_ITER(hh, rw->marks, m, tmp)
		/* a blob only ever converted never went out; a commit the
		 * run wrote itself did not go to fast-import, but is one */
		if (m->bm.declared || m->unheard)
			marks_line_format(out, m->mark, &m->oid);
}

static const char *out_path(const struct rw *rw, int i)
{
	switch (i) {
	case OUT_CMAP: return rw->opt->commit_map;
	case OUT_REFMAP: return rw->opt->ref_map;
	case OUT_MARKS: return rw->opt->export_marks;
	case OUT_REPORT:
		/* "-" went to stderr already */
		return rw->opt->report && strcmp(rw->opt->report, "-") ? rw->opt->report : NULL;
	default: return rw->opt->report_json;
	}
}

/* For the ending lines of a run: what each action took, the rules that
 * decided nothing. */
static void stats_unmatched(struct rw_stats *st, const struct report *rep,
			    const struct rules *rules, const char *path)
{
	size_t i, plen, used = 0;

	for (i = 0; rules && i < rules_count(rules); i++) {
		const struct rule *rule = rules_get(rules, i);
		const char *pat = rules_rule_pattern(rule, &plen);
		int n;

		if ((unsigned)rules_rule_action(rule) < 8)
			st->by_action[rules_rule_action(rule)] +=
				report_rule_blobs(rep, i);
		if (!report_rule_unmatched(rep, i) || rules_rule_is_blob(rule))
			continue;
		st->unmatched++;
		n = snprintf(st->unmatched_text + used,
			     sizeof(st->unmatched_text) - used, "%s%s:%zu %.*s",
			     used ? ", " : "", rules_rule_file(rule) ?
			     rules_rule_file(rule) : path ? path : "rules",
			     rules_rule_line(rule), (int)plen, pat);
		if (n > 0)
			used += (size_t)n < sizeof(st->unmatched_text) - used ?
				(size_t)n : sizeof(st->unmatched_text) - used - 1;
	}
}

/* Writes every requested file to a temp name; outputs_commit renames. */
int outputs_prepare(struct rw *rw, char *tmp[OUT_N], struct err *e)
{
	struct buf data = BUF_INIT(SIZE_MAX / 2), refs = BUF_INIT(SIZE_MAX / 2);
	enum cmap_format fmt = CMAP_FILTER_REPO;
	uint64_t nrefs, nchanged;
	int i, r = 0;

	if (rw->opt->commit_map_format)
		cmap_format_parse(rw->opt->commit_map_format, &fmt);
	format_ref_map(rw, &refs, &nrefs, &nchanged);
	for (i = 0; i < OUT_REPORT && r == 0; i++) {
		if (!out_path(rw, i))
			continue;
		buf_reset(&data);
		if (i == OUT_CMAP)
			cmap_format(rw->cmap, fmt, &data);
		else if (i == OUT_REFMAP)
			buf_add(&data, refs.ptr, refs.len);
		else
			format_marks(rw, &data);
		r = file_write_prepare(out_path(rw, i), &data, &tmp[i], e);
	}
	if (r == 0)
	{
		struct report_totals t = { rw->commits_seen, rw->commits_rewritten,
					   nrefs, nchanged };
		struct rw_stats *st = rw->opt->stats;

		if (st) {
			memset(st, 0, sizeof(*st));
			st->commits = rw->commits_seen;
			st->rewritten = rw->commits_rewritten;
			st->pruned = rw->commits_pruned;
			st->refs = nrefs;
			st->refs_changed = nchanged;
			st->converted = rw->blobs ? blobs_conversions(rw->blobs) : 0;
			report_sizes(rw->report, &st->bytes_before, &st->bytes_after,
				     &st->packed_before, &st->packed_after);
		}
		if (st && rw->blobs && rw->report)
			stats_unmatched(st, rw->report, blobs_rules(rw->blobs),
					rw->opt->rules);
		if (rw->blobs)
			blobs_report_replace(rw->blobs);
		msg_report_replace(rw);
		r = report_write(rw->report, &t,
				 rw->blobs ? blobs_rules(rw->blobs) : NULL,
				 rw->opt->rules ? rw->opt->rules :
				 rw->opt->strip_blobs_with_ids, &tmp[OUT_REPORT],
				 &tmp[OUT_REPORT_JSON], e);
	}
	buf_release(&data);
	buf_release(&refs);
	return r;
}

int outputs_commit(struct rw *rw, char *tmp[OUT_N], struct err *e)
{
	int i, r = 0;

	for (i = 0; i < OUT_N; i++) {
		if (tmp[i] && r == 0)
			r = file_write_commit(tmp[i], out_path(rw, i), e);
		else if (tmp[i])
			remove(tmp[i]);
		free(tmp[i]);
		tmp[i] = NULL;
	}
	return r;
}

void outputs_drop(char *tmp[OUT_N])
{
	int i;

	for (i = 0; i < OUT_N; i++) {
		if (tmp[i])
			remove(tmp[i]);
		free(tmp[i]);
		tmp[i] = NULL;
	}
}

